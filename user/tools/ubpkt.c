// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubpkt: send and receive UB and UBoE frames over AF_PACKET, for end-to-end
 * tests and the demo.
 *
 *   ubpkt send  --dev DEV --native|--uboe --dst-mac M --src IP --dst IP [options]
 *   ubpkt build           --native|--uboe --dst-mac M --src IP --dst IP [options]
 *   ubpkt recv  --dev DEV [--count N] [--timeout T] [--ethertype HEX] [--all]
 *               [--caqm-ethertype HEX]
 *
 * build prints the frames send would send, one hex line each. recv prints one
 * key=value line per UB or UBoE frame received (with --all, every frame:
 * kind=ip for other IP traffic, kind=other for the rest, such as ARP),
 * and "ready" on stderr once its socket is bound, so that a test can start
 * the sender only then. Exit status: 0 done, 1 timeout or I/O error, 2 usage.
 * Devices are found with if_nametoindex, so the tool works inside
 * `ip netns exec` and `nsenter --net` alike.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/optab.h"
#include "lib/parse_num.h"
#include "lib/frame.h"

#define EXIT_TIMEOUT	UB_EXIT_FAIL
#define EXIT_USAGE	UB_EXIT_USAGE
#define FRAME_MAX	(65536 + 64)

static void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("ubpkt: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (ubpkt --help)\n", stderr);
	exit(EXIT_USAGE);
}

/* A number of option --opt: decimal or 0x hex (parse_num.h), up to max. */
static unsigned long long parse_num(const char *opt, const char *s, unsigned long long max)
{
	char name[64], err[200];
	uint64_t v;

	snprintf(name, sizeof(name), "--%s", opt);
	if (pn_uint(name, s, 0, max, &v, err, sizeof(err)))
		usage_error("%s", err);
	return v;
}

/* A time of option --opt (parse_num.h: 10ms, 500us; a bare number in `bare`), in ns. */
static uint64_t parse_time(const char *opt, const char *s, uint64_t bare, uint64_t max_ns)
{
	char name[64], err[200];
	uint64_t ns;

	snprintf(name, sizeof(name), "--%s", opt);
	if (pn_time(name, s, bare, 0, max_ns, &ns, err, sizeof(err)))
		usage_error("%s", err);
	return ns;
}

static void parse_mac(const char *opt, const char *s, uint8_t *mac)
{
	unsigned b[6];
	char tail;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
		usage_error("--%s: '%s' is not a MAC address", opt, s);
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
}

static int parse_ip(const char *opt, const char *s, uint8_t *out)
{
	if (inet_pton(AF_INET, s, out) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, out) == 1)
		return 6;
	usage_error("--%s: '%s' is neither an IPv4 nor an IPv6 address", opt, s);
}

static int dev_index(const char *dev)
{
	unsigned idx = if_nametoindex(dev);

	if (!idx) {
		fprintf(stderr, "ubpkt: --dev: no device '%s' in this network namespace\n", dev);
		exit(UB_EXIT_NOTFOUND);
	}
	return (int)idx;
}

static int dev_mac(int fd, const char *dev, uint8_t *mac)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		return -1;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

/* ---- send / build ------------------------------------------------------ */

enum {
	O_DEV = 256, O_NATIVE, O_UBOE, O_SRC_MAC, O_DST_MAC, O_SRC, O_DST, O_VLAN, O_PCP,
	O_PID, O_PERM, O_FECN, O_LOC, O_CCI, O_VL, O_RT, O_ECN, O_DSCP, O_TTL, O_SPORT,
	O_OPCODE, O_RSPST, O_PSN, O_COUNT, O_PAYLOAD_LEN, O_ETHERTYPE, O_INTERVAL,
	O_BAD_ICRC, O_TIMEOUT, O_HELP, O_ALL, O_CAQM_TAG, O_CAQM_ETHERTYPE,
};

#define SEND_OPTS \
	{ "native", NULL, "a native UB frame (EtherType --ub-ethertype)", O_NATIVE, 0 }, \
	{ "uboe", NULL, "a UBoE frame (UB over UDP/IP)", O_UBOE, 0 }, \
	{ "src-mac", "MAC", "source MAC (send: the device's; build: 02:00:00:00:00:01)", O_SRC_MAC, 0 }, \
	{ "dst-mac", "MAC", "destination MAC (required)", O_DST_MAC, 0 }, \
	{ "src", "IP", "source address, IPv4 or IPv6 (required)", O_SRC, 0 }, \
	{ "dst", "IP", "destination address, of the same family (required)", O_DST, 0 }, \
	{ "vlan", "V", "--uboe: an 802.1Q tag with VLAN ID V (0..4095)", O_VLAN, 0 }, \
	{ "pcp", "N", "its priority (0..7)", O_PCP, 0 }, \
	{ "partition", "PID", "the NTH's Partition ID (0..16777215)", O_PID, 0 }, \
	{ "pid", "PID", NULL, O_PID, OPTAB_ALIAS }, \
	{ "perm", "0|1", "the NTH's Permission", O_PERM, 0 }, \
	{ "fecn", "0-3", "a FECN-mode CCI with this FECN", O_FECN, 0 }, \
	{ "loc", "0|1", "... and this LOC bit", O_LOC, 0 }, \
	{ "cci", "NUM", "all 16 bits of the CCI (not with --fecn/--loc)", O_CCI, 0 }, \
	{ "vl", "N", "the LPH's virtual lane (0..15)", O_VL, 0 }, \
	{ "rt", "N", "the LPH's RT (0..3)", O_RT, 0 }, \
	{ "ecn", "0-3", "IP ECN (default 2, ECT(0))", O_ECN, 0 }, \
	{ "dscp", "N", "IP DSCP (0..63)", O_DSCP, 0 }, \
	{ "ttl", "N", "IP TTL / hop limit (0..255)", O_TTL, 0 }, \
	{ "sport", "N", "UDP source port", O_SPORT, 0 }, \
	{ "opcode", "N", "the TP packet: 0 UTP, 1 RTP (data, with a Send TAH and payload),\n" \
	  "2 TPACK, 3 TPACK+CETPH, 5 TPSACK+SAETPH, 6 TPSACK+CETPH+SAETPH, 8 CNP\n" \
	  "(responses: no TAH, no payload); other values are sent as given", O_OPCODE, 0 }, \
	{ "rspst", "N", "the TPH's RSPST (0..7)", O_RSPST, 0 }, \
	{ "psn", "N", "the first PSN (grows by one per packet)", O_PSN, 0 }, \
	{ "count", "N", "frames (default 1)", O_COUNT, 0 }, \
	{ "payload-len", "N", "payload bytes (default 64)", O_PAYLOAD_LEN, 0 }, \
	{ "ub-ethertype", "NUM", "EtherType of native UB frames (default 0x88b5)", O_ETHERTYPE, 0 }, \
	{ "ethertype", "NUM", NULL, O_ETHERTYPE, OPTAB_ALIAS }, \
	{ "interval", "TIME", "between frames (bare: us; up to 60s)", O_INTERVAL, 0 }, \
	{ "interval-us", "TIME", NULL, O_INTERVAL, OPTAB_ALIAS }, \
	{ "bad-icrc", NULL, "corrupt the ICRC", O_BAD_ICRC, 0 }, \
	{ "caqm-tag", "NUM", "--uboe: an Ethernet CAQM tag with these 16 info bits after the\n" \
	  "(802.1Q) header", O_CAQM_TAG, 0 }, \
	{ "caqm-ethertype", "NUM", "the CAQM tag's EtherType (default 0x88b6)", O_CAQM_ETHERTYPE, 0 }

static const struct optab send_opts[] = {
	{ "dev", "DEV", "the device to send on (required)", O_DEV, 0 },
	SEND_OPTS,
	{ 0 },
}, build_opts[] = {
	SEND_OPTS,
	{ 0 },
};

static int cmd_send(int argc, char **argv);
static int cmd_recv(int argc, char **argv);
static int cmd_build(int argc, char **argv);
static const struct optab_cmd send_cmd, build_cmd, recv_cmd;

struct send_args {
	const char *dev;
	int native;		/* -1 unset */
	bool have_src_mac, have_dst_mac, have_cci, bad_icrc, have_payload_len, have_caqm_tag;
	uint16_t caqm_tag, caqm_ethertype;	/* the tag's info and EtherType */
	int fecn, loc;		/* -1 unset */
	const char *src, *dst;
	unsigned long long count, interval_us;
	struct ub_pkt_spec s;
};

/* One option of send or build (optab_fn). */
static int send_opt(void *ctx, const struct optab *o, const char *optarg)
{
	struct send_args *a = ctx;
	struct ub_pkt_spec *s = &a->s;
	const char *name = o->name;
	int c = o->key;

	switch (o->key) {
	case O_DEV: a->dev = optarg; break;
	case O_NATIVE:
	case O_UBOE:
		if (a->native != -1 && a->native != (c == O_NATIVE))
			usage_error("--native and --uboe exclude each other");
		a->native = c == O_NATIVE;
		break;
	case O_SRC_MAC: parse_mac(name, optarg, s->src_mac); a->have_src_mac = true; break;
	case O_DST_MAC: parse_mac(name, optarg, s->dst_mac); a->have_dst_mac = true; break;
	case O_SRC: a->src = optarg; break;
	case O_DST: a->dst = optarg; break;
	case O_VLAN: s->vlan = (int)parse_num(name, optarg, 4095); break;
	case O_PCP: s->vlan_pcp = (uint8_t)parse_num(name, optarg, 7); break;
	case O_PID: s->pid = (uint32_t)parse_num(name, optarg, UB_PID_MASK); break;
	case O_PERM: s->perm = (uint8_t)parse_num(name, optarg, 1); break;
	case O_FECN: a->fecn = (int)parse_num(name, optarg, 3); break;
	case O_LOC: a->loc = (int)parse_num(name, optarg, 1); break;
	case O_CCI: s->cci = (uint16_t)parse_num(name, optarg, 0xffff); a->have_cci = true; break;
	case O_VL: s->vl = (uint8_t)parse_num(name, optarg, 15); break;
	case O_RT: s->rt = (uint8_t)parse_num(name, optarg, 3); break;
	case O_ECN: s->ecn = (uint8_t)parse_num(name, optarg, 3); break;
	case O_DSCP: s->dscp = (uint8_t)parse_num(name, optarg, 63); break;
	case O_TTL: s->ttl = (uint8_t)parse_num(name, optarg, 255); break;
	case O_SPORT: s->sport = (uint16_t)parse_num(name, optarg, 0xffff); break;
	case O_OPCODE: s->tph.opcode = (uint8_t)parse_num(name, optarg, 0x7f); break;
	case O_RSPST: s->tph.rspst = (uint8_t)parse_num(name, optarg, 7); break;
	case O_PSN: s->tph.psn = (uint32_t)parse_num(name, optarg, 0xffffff); break;
	case O_COUNT: a->count = parse_num(name, optarg, 100000000); break;
	case O_PAYLOAD_LEN:
		s->payload_len = (size_t)parse_num(name, optarg, 65000);
		a->have_payload_len = true;
		break;
	case O_ETHERTYPE: s->ub_ethertype = (uint16_t)parse_num(name, optarg, 0xffff); break;
	case O_INTERVAL: a->interval_us = parse_time(name, optarg, PN_US, 60 * PN_S) / PN_US; break;
	case O_BAD_ICRC: a->bad_icrc = true; break;
	case O_CAQM_TAG:
		a->caqm_tag = (uint16_t)parse_num(name, optarg, 0xffff);
		a->have_caqm_tag = true;
		break;
	case O_CAQM_ETHERTYPE: a->caqm_ethertype = (uint16_t)parse_num(name, optarg, 0xffff); break;
	}
	return 0;
}

static void parse_send(const struct optab_cmd *c, int argc, char **argv, struct send_args *a, bool need_dev)
{
	struct ub_pkt_spec *s = &a->s;
	uint8_t src_ip[16], dst_ip[16];
	int rc, sv, dv;

	memset(a, 0, sizeof(*a));
	a->native = -1;
	a->caqm_ethertype = UB_ETH_P_CAQM;
	a->fecn = a->loc = -1;
	a->count = 1;
	ub_pkt_spec_init(s);
	s->ecn = ECN_ECT0;	/* docs/WIRE.md §1: ECN-capable UB traffic sends ECT(0) */
	s->payload_len = 64;
	s->tph.src_tpn = 1;
	s->tph.dst_tpn = 1;

	rc = optab_parse(c, argc, argv, send_opt, a, NULL);
	if (rc)
		exit(OPTAB_STATUS(rc));
	if (need_dev && !a->dev)
		usage_error("--dev is required");
	if (a->native == -1)
		usage_error("say --native or --uboe");
	if (!a->have_dst_mac)
		usage_error("--dst-mac is required");
	if (!a->src || !a->dst)
		usage_error("--src and --dst are required");
	sv = parse_ip("src", a->src, src_ip);
	dv = parse_ip("dst", a->dst, dst_ip);
	if (sv != dv)
		usage_error("--src and --dst must both be IPv4 or both IPv6");
	s->ip_ver = (uint8_t)sv;
	memcpy(s->src_ip, src_ip, 16);
	memcpy(s->dst_ip, dst_ip, 16);
	if (a->native && s->vlan != UB_VLAN_NONE)
		usage_error("--vlan applies to --uboe only: native UB frames are never tagged");
	if (a->native && a->have_caqm_tag)
		usage_error("--caqm-tag applies to --uboe only: native UB carries CAQM in the CCI");
	if (a->have_cci && (a->fecn >= 0 || a->loc >= 0))
		usage_error("--cci sets the whole CCI: give it or --fecn/--loc, not both");
	if (a->fecn >= 0 || a->loc >= 0)
		s->cci = ub_cci_make_fecn((uint8_t)(a->fecn > 0 ? a->fecn : 0), a->loc > 0);
	if (!a->count)
		usage_error("--count must be at least 1");

	/* The headers each opcode carries (docs/WIRE.md §3). */
	uint8_t op = s->tph.opcode;

	if (op >= UB_TP_ACK && op <= UB_TP_CNP) {
		if (a->have_payload_len && s->payload_len)
			usage_error("--opcode %u is a response: it carries no payload", op);
		s->payload_len = 0;
		s->has_tah = false;
		s->tph.nlp = 1;
		s->has_cetph = ub_tp_has_cetph(op);
		s->has_saetph = ub_tp_has_saetph(op);
		s->has_cnpetph = ub_tp_has_cnpetph(op);
		if (op == UB_TP_CNP)
			s->cnpetph.ecn = UB_CNP_ECN_SEVERE;
	} else {
		s->tph.ackreq = op == UB_TP_RTP_DATA;
	}
}

static void fill_payload(uint8_t *p, size_t n, unsigned long long seq)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seq + i);
}

/* Where a CAQM tag goes or is: after the Ethernet header and any 802.1Q tag. */
static size_t caqm_tag_offset(const uint8_t *f)
{
	return f[12] == 0x81 && f[13] == 0x00 ? 16 : 12;
}

/* Put a CAQM tag (EtherType `et`, `info`) into the frame of `n` bytes in a
 * buffer of `max`: docs/WIRE.md §5, in front of the EtherType it now carries.
 * Returns the new length, 0 when it does not fit. */
static size_t caqm_tag_insert(uint8_t *f, size_t n, size_t max, uint16_t et, uint16_t info)
{
	size_t off = caqm_tag_offset(f);

	if (n < off + 2 || n + 4 > max)
		return 0;
	memmove(f + off + 4, f + off, n - off);
	f[off] = (uint8_t)(et >> 8);
	f[off + 1] = (uint8_t)et;
	f[off + 2] = (uint8_t)(info >> 8);
	f[off + 3] = (uint8_t)info;
	return n + 4;
}

/* Frame number `i` of the run into buf; returns its length. */
static size_t make_frame(struct send_args *a, unsigned long long i, uint8_t *payload, uint8_t *buf)
{
	struct ub_pkt_spec s = a->s;
	size_t n;

	s.tph.psn = (uint32_t)((a->s.tph.psn + i) & 0xffffff);
	s.tph.tpmsn = s.tph.psn;
	s.tah.ini_tassn = (uint16_t)(i + 1);
	if (s.has_saetph) {
		s.saetph.max_rcv_psn = s.tph.psn;
		ub_sack_set(s.saetph.bitmap, 0);
	}
	if (s.has_cetph)
		s.cetph.ack_seq = s.tph.psn;
	fill_payload(payload, s.payload_len, i);
	s.payload = payload;
	n = a->native ? ub_build_native(&s, buf, FRAME_MAX) : ub_build_uboe(&s, buf, FRAME_MAX);
	if (n && a->bad_icrc)
		buf[n - 1] ^= 0xff;
	if (n && a->have_caqm_tag)
		n = caqm_tag_insert(buf, n, FRAME_MAX, a->caqm_ethertype, a->caqm_tag);
	return n;
}

static void sleep_us(unsigned long long us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int cmd_build(int argc, char **argv)
{
	static uint8_t buf[FRAME_MAX], payload[FRAME_MAX];
	struct send_args a;

	parse_send(&build_cmd, argc, argv, &a, false);
	if (!a.have_src_mac)
		parse_mac("src-mac", "02:00:00:00:00:01", a.s.src_mac);
	for (unsigned long long i = 0; i < a.count; i++) {
		size_t n = make_frame(&a, i, payload, buf);

		if (!n)
			usage_error("frame too large");
		for (size_t j = 0; j < n; j++)
			printf("%02x", buf[j]);
		putchar('\n');
	}
	return 0;
}

static int cmd_send(int argc, char **argv)
{
	static uint8_t buf[FRAME_MAX], payload[FRAME_MAX];
	struct sockaddr_ll sll;
	struct send_args a;
	int fd, ifindex;

	parse_send(&send_cmd, argc, argv, &a, true);
	ifindex = dev_index(a.dev);
	fd = socket(AF_PACKET, SOCK_RAW, 0);	/* protocol 0: transmit only */
	if (fd < 0) {
		fprintf(stderr, "ubpkt: AF_PACKET socket: %s\n", strerror(errno));
		return 1;
	}
	if (!a.have_src_mac && dev_mac(fd, a.dev, a.s.src_mac) < 0) {
		fprintf(stderr, "ubpkt: MAC address of %s: %s\n", a.dev, strerror(errno));
		return 1;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = ifindex;
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, a.s.dst_mac, 6);

	for (unsigned long long i = 0; i < a.count; i++) {
		size_t n = make_frame(&a, i, payload, buf);
		int tries = 0;

		if (!n)
			usage_error("frame too large");
		while (sendto(fd, buf, n, 0, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
			/* A full device queue drains quickly; anything else is fatal. */
			if ((errno == ENOBUFS || errno == EAGAIN) && ++tries < 1000) {
				sleep_us(100);
				continue;
			}
			fprintf(stderr, "ubpkt: send on %s: %s\n", a.dev, strerror(errno));
			close(fd);
			return 1;
		}
		if (a.interval_us && i + 1 < a.count)
			sleep_us(a.interval_us);
	}
	close(fd);
	return 0;
}

/* 256 MiB: room for ~60,000 queued frames of 1 KiB (a 4 KiB skb each). */
#define RECV_BUF_BYTES (256 << 20)

/* ---- recv --------------------------------------------------------------- */

static const struct optab recv_opts[] = {
	{ "dev", "DEV", "the device to listen on (required)", O_DEV, 0 },
	{ "count", "N", "frames to print before exiting 0 (default 1; 0: until the timeout,\n"
	  "then exit 0)", O_COUNT, 0 },
	{ "timeout", "TIME", "give up after this long, exit 1 (bare: ms; default 5s)", O_TIMEOUT, 0 },
	{ "timeout-ms", "TIME", NULL, O_TIMEOUT, OPTAB_ALIAS },
	{ "ub-ethertype", "NUM", "EtherType of native UB frames (default 0x88b5)", O_ETHERTYPE, 0 },
	{ "ethertype", "NUM", NULL, O_ETHERTYPE, OPTAB_ALIAS },
	{ "all", NULL, "every frame, not only UB and UBoE: kind=ip (other IP) or\n"
	  "kind=other (ARP, ...)", O_ALL, 0 },
	{ "caqm-ethertype", "NUM", "EtherType of the CAQM tag taken out before decoding (default\n"
	  "0x88b6)", O_CAQM_ETHERTYPE, 0 },
	{ 0 },
};

#define ABOUT_FRAMES \
	"IPv4 or IPv6 follows from the address syntax. The PSN grows by one per packet.\n" \
	"--fecn/--loc make a FECN-mode CCI; --cci sets all 16 bits."

static const struct optab_cmd ubpkt_cmd = {
	.path = "ubpkt",
	.summary = "send and receive UB and UBoE frames over AF_PACKET",
	.about = "For end-to-end tests and the demo. Devices are found with if_nametoindex, so\n"
		 "ubpkt works inside ip netns exec and nsenter --net alike.",
}, send_cmd = {
	.path = "ubpkt send",
	.summary = "send UB or UBoE frames",
	.synopsis = "--dev DEV --native|--uboe --dst-mac MAC --src IP --dst IP [OPTIONS]",
	.about = ABOUT_FRAMES,
	.opts = send_opts,
	.run = cmd_send,
}, build_cmd = {
	.path = "ubpkt build",
	.summary = "print the frames send would send, one hex line each",
	.synopsis = "--native|--uboe --dst-mac MAC --src IP --dst IP [OPTIONS]",
	.about = ABOUT_FRAMES,
	.opts = build_opts,
	.run = cmd_build,
}, recv_cmd = {
	.path = "ubpkt recv",
	.summary = "print one key=value line per UB or UBoE frame received",
	.synopsis = "--dev DEV [--count N] [--timeout TIME] [--ub-ethertype NUM] [--all]\n"
		    "    [--caqm-ethertype NUM]",
	.about = "Prints \"ready\" on standard error once its socket is bound, so that a test can\n"
		 "start the sender only then. Every key is always there, '-' when not\n"
		 "applicable. ICMP and ICMPv6 show as icmp=TYPE/CODE mtu=N (Fragmentation\n"
		 "Needed / Packet Too Big) icmpsum=ok|bad. A CAQM tag is taken out before\n"
		 "decoding and shown as caqm=0xHHHH (caqm=- without one). Exit status 1: the\n"
		 "timeout came first.",
	.opts = recv_opts,
	.run = cmd_recv,
};

static const struct optab_cmd *const ubpkt_cmds[] = { &ubpkt_cmd, &send_cmd, &build_cmd, &recv_cmd, NULL };

struct recv_args {
	const char *dev;
	unsigned long long want, timeout;
	uint16_t ethertype, caqm_et;
	bool all;
};

static int recv_opt(void *ctx, const struct optab *o, const char *optarg)
{
	struct recv_args *a = ctx;

	switch (o->key) {
	case O_DEV: a->dev = optarg; break;
	case O_COUNT: a->want = parse_num("count", optarg, 100000000); break;
	case O_TIMEOUT: a->timeout = parse_time(o->name, optarg, PN_MS, 86400 * PN_S) / PN_MS; break;
	case O_ETHERTYPE: a->ethertype = (uint16_t)parse_num(o->name, optarg, 0xffff); break;
	case O_ALL: a->all = true; break;
	case O_CAQM_ETHERTYPE: a->caqm_et = (uint16_t)parse_num("caqm-ethertype", optarg, 0xffff); break;
	}
	return 0;
}

static long long now_ms(void)
{
	return (long long)(ub_mono_ns() / 1000000);
}

static void print_mac(const char *key, const uint8_t *m)
{
	printf(" %s=%02x:%02x:%02x:%02x:%02x:%02x", key, m[0], m[1], m[2], m[3], m[4], m[5]);
}

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t sum)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

/* ICMP / ICMPv6 in the IP packet: type/code, the MTU of Fragmentation Needed
 * (RFC 1191) and Packet Too Big, and whether the checksum verifies. */
static void print_icmp(const struct ub_view *v)
{
	const uint8_t *ip = v->ip, *m;
	size_t hl, len;
	uint32_t sum = 0;
	unsigned mtu = 0;
	bool has_mtu = false;

	if (!ip || !v->ip_ver || v->ip_len > v->frame_len - (size_t)(ip - v->frame))
		goto none;
	if (v->ip_ver == 4) {
		hl = (size_t)(ip[0] & 0x0f) * 4;
		if (ip[9] != 1 || hl < 20 || v->ip_len < hl + 8)
			goto none;
	} else {
		hl = 40;
		if (ip[6] != 58 || v->ip_len < hl + 8)
			goto none;
		sum = sum16(ip + 8, 32, 0) + (uint32_t)(v->ip_len - hl) + 58;
	}
	m = ip + hl;
	len = v->ip_len - hl;
	sum = sum16(m, len, sum);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	if (v->ip_ver == 4 && m[0] == 3 && m[1] == 4) {
		mtu = (unsigned)(m[6] << 8 | m[7]);
		has_mtu = true;
	} else if (v->ip_ver == 6 && m[0] == 2) {
		mtu = (unsigned)m[4] << 24 | (unsigned)m[5] << 16 | (unsigned)m[6] << 8 | m[7];
		has_mtu = true;
	}
	printf(" icmp=%u/%u", m[0], m[1]);
	if (has_mtu)
		printf(" mtu=%u", mtu);
	else
		printf(" mtu=-");
	printf(" icmpsum=%s", sum == 0xffff ? "ok" : "bad");
	return;
none:
	printf(" icmp=- mtu=- icmpsum=-");
}

/* One key=value line; every key is always there, '-' when not applicable.
 * `caqm`: the CAQM tag's info taken out before decoding, or -1. */
static void print_frame(const struct ub_view *v, enum ub_parse_err e, int caqm)
{
	char a[INET6_ADDRSTRLEN];
	bool native = v->kind == UB_KIND_NATIVE, ip = v->ip_ver != 0, udp = v->udp, tp = v->tph;
	bool fecn_mode = native && ub_cci_mode(v->cci) == UB_CCI_MODE_FECN;

	const char *kind = native ? "native" : v->kind == UB_KIND_UBOE ? "uboe" : ip ? "ip" : "other";

	printf("kind=%s err=%s len=%zu", kind, ub_parse_errname(e), v->frame_len);
	print_mac("dmac", v->dst_mac);
	print_mac("smac", v->src_mac);
	printf(" ethertype=0x%04x", v->ethertype);
	if (v->vlan != UB_VLAN_NONE)
		printf(" vlan=%d pcp=%u", v->vlan, v->vlan_pcp);
	else
		printf(" vlan=- pcp=-");
	if (native && v->nth)
		printf(" vl=%u rt=%u cci=0x%04x", v->vl, v->rt, v->cci);
	else
		printf(" vl=- rt=- cci=-");
	if (fecn_mode)
		printf(" fecn=%u loc=%u", ub_cci_fecn(v->cci), !!(v->cci & UB_CCI_FECN_LOC));
	else
		printf(" fecn=- loc=-");
	if (native && v->nth)
		printf(" pid=%u perm=%u", v->pid, v->perm);
	else
		printf(" pid=- perm=-");
	if (ip) {
		printf(" ipver=%u", v->ip_ver);
		inet_ntop(v->ip_ver == 6 ? AF_INET6 : AF_INET, v->src_ip, a, sizeof(a));
		printf(" src=%s", a);
		inet_ntop(v->ip_ver == 6 ? AF_INET6 : AF_INET, v->dst_ip, a, sizeof(a));
		printf(" dst=%s dscp=%u ecn=%u ttl=%u", a, v->dscp, v->ecn, v->ttl);
	} else {
		printf(" ipver=- src=- dst=- dscp=- ecn=- ttl=-");
	}
	if (udp)
		printf(" sport=%u", v->sport);
	else
		printf(" sport=-");
	if (tp)
		printf(" opcode=%u psn=%u nak=%u", v->tp.opcode, v->tp.psn, v->nak);
	else
		printf(" opcode=- psn=- nak=-");
	if (v->tah)
		printf(" tah=%u", v->ta.opcode);
	else
		printf(" tah=-");
	if (v->payload)
		printf(" payload=%zu", v->payload_len);
	else
		printf(" payload=-");
	if (v->ip_len && tp && e != UB_PARSE_TRUNCATED && e != UB_PARSE_IP_LENGTH &&
	    e != UB_PARSE_TP_OPCODE)
		printf(" icrc=%s", v->icrc_ok ? "ok" : "bad");
	else
		printf(" icrc=-");
	print_icmp(v);
	if (caqm >= 0)
		printf(" caqm=0x%04x", (unsigned)caqm);
	else
		printf(" caqm=-");
	putchar('\n');
	fflush(stdout);
}

static int cmd_recv(int argc, char **argv)
{
	static uint8_t buf[FRAME_MAX + 4];
	unsigned long long want, got = 0, timeout;
	uint16_t ethertype, caqm_et;
	const char *dev;
	bool all;
	struct sockaddr_ll sll;
	long long deadline;
	int fd, ifindex, one = 1;

	struct recv_args ra = { .want = 1, .timeout = 5000, .ethertype = UB_ETH_P_NATIVE, .caqm_et = UB_ETH_P_CAQM };
	int rc = optab_parse(&recv_cmd, argc, argv, recv_opt, &ra, NULL);

	if (rc)
		return OPTAB_STATUS(rc);
	dev = ra.dev;
	want = ra.want;
	timeout = ra.timeout;
	ethertype = ra.ethertype;
	caqm_et = ra.caqm_et;
	all = ra.all;
	if (!dev)
		usage_error("--dev is required");
	ifindex = dev_index(dev);

	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0) {
		fprintf(stderr, "ubpkt: AF_PACKET socket: %s\n", strerror(errno));
		return 1;
	}
	/* The kernel strips 802.1Q tags before packet taps see the frame; the
	 * tag comes back as auxdata and is put back in place below. */
	if (setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)) < 0) {
		fprintf(stderr, "ubpkt: PACKET_AUXDATA: %s\n", strerror(errno));
		return 1;
	}
	/* A burst of thousands of frames must not overflow the socket: the
	 * default buffer (~212 KiB) holds only ~90 1 KiB frames, each costing a
	 * whole skb. FORCE needs CAP_NET_ADMIN and ignores rmem_max. */
	int rcvbuf = RECV_BUF_BYTES;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) < 0)
		fprintf(stderr, "ubpkt: warning: cannot enlarge the receive buffer: %s\n", strerror(errno));
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = ifindex;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		fprintf(stderr, "ubpkt: bind to %s: %s\n", dev, strerror(errno));
		return 1;
	}
	fprintf(stderr, "ready\n");
	fflush(stderr);

	deadline = now_ms() + (long long)timeout;
	while (!want || got < want) {
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
		} ctl;
		struct sockaddr_ll from;
		struct iovec iov = { buf + 4, FRAME_MAX };
		struct msghdr msg = {
			.msg_name = &from, .msg_namelen = sizeof(from),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = &ctl, .msg_controllen = sizeof(ctl),
		};
		struct pollfd pfd = { fd, POLLIN, 0 };
		long long left = deadline - now_ms();
		uint8_t *frame = buf + 4;
		struct ub_view v;
		enum ub_parse_err e;
		ssize_t n;
		int r;

		if (left <= 0)
			break;
		r = poll(&pfd, 1, (int)(left > 1000000 ? 1000000 : left));
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "ubpkt: poll: %s\n", strerror(errno));
			return 1;
		}
		if (r <= 0)
			continue;
		n = recvmsg(fd, &msg, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			fprintf(stderr, "ubpkt: recv on %s: %s\n", dev, strerror(errno));
			return 1;
		}
		/* Frames queued before bind() may come from other devices. */
		if (from.sll_ifindex != ifindex || from.sll_pkttype == PACKET_OUTGOING)
			continue;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			struct tpacket_auxdata aux;

			if (cm->cmsg_level != SOL_PACKET || cm->cmsg_type != PACKET_AUXDATA)
				continue;
			memcpy(&aux, CMSG_DATA(cm), sizeof(aux));
			if (!(aux.tp_status & TP_STATUS_VLAN_VALID) || n < 12)
				continue;
			uint16_t tpid = (aux.tp_status & TP_STATUS_VLAN_TPID_VALID) ? aux.tp_vlan_tpid : 0x8100;

			frame = buf;
			memmove(frame, frame + 4, 12);
			frame[12] = (uint8_t)(tpid >> 8);
			frame[13] = (uint8_t)tpid;
			frame[14] = (uint8_t)(aux.tp_vlan_tci >> 8);
			frame[15] = (uint8_t)aux.tp_vlan_tci;
			n += 4;
		}
		/* A CAQM tag comes out, so that what it carries decodes as UBoE;
		 * len= stays the frame's as received. Not when the native UB
		 * EtherType asked for is the same number (0x88b6 is both the
		 * tag's default and a common choice for native UB): native wins. */
		size_t off = n >= 14 ? caqm_tag_offset(frame) : 12;
		int caqm = -1;

		if (caqm_et != ethertype && (size_t)n >= off + 6 &&
		    (frame[off] << 8 | frame[off + 1]) == caqm_et) {
			caqm = frame[off + 2] << 8 | frame[off + 3];
			memmove(frame + 4, frame, off);
			frame += 4;
			n -= 4;
		}
		e = ub_parse_frame(frame, (size_t)n, ethertype, &v);
		if (e == UB_PARSE_NOT_UB && !all)
			continue;
		if (caqm >= 0)
			v.frame_len += 4;
		print_frame(&v, e, caqm);
		got++;
	}
	close(fd);
	if (want && got < want) {
		fprintf(stderr, "ubpkt: timeout after %llu ms: %llu of %llu frames\n", timeout, got, want);
		return EXIT_TIMEOUT;
	}
	return 0;
}

int main(int argc, char **argv)
{
	optab_set_registry(ubpkt_cmds);
	/* The generated parts of ubpkt(8), for scripts/mkman.sh. */
	if (argc > 1 && !strcmp(argv[1], "--dump-man"))
		return optab_dump_man(argc > 2 ? argv[2] : NULL);
	ub_icrc_init();		/* the backend's timing before the first packet, not on it */
	argv[0] = (char *)"ubpkt";
	return optab_dispatch(argc, argv);
}
