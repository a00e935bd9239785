// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubpkt: send and receive UB and UBoE frames over AF_PACKET, for end-to-end
 * tests and the demo.
 *
 *   ubpkt send  --dev DEV --native|--uboe --dst-mac M --src IP --dst IP [options]
 *   ubpkt build           --native|--uboe --dst-mac M --src IP --dst IP [options]
 *   ubpkt recv  --dev DEV [--count N] [--timeout-ms T] [--ethertype HEX] [--all]
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
#include <getopt.h>
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

#include "clock.h"
#include "parse_num.h"
#include "ubpkt.h"

#define EXIT_TIMEOUT	1
#define EXIT_USAGE	2
#define FRAME_MAX	(65536 + 64)

static const char usage_text[] =
"usage:\n"
"  ubpkt send --dev DEV --native|--uboe [--src-mac M] --dst-mac M --src IP --dst IP\n"
"             [--vlan V] [--pcp N] [--pid P] [--perm 0|1] [--fecn 0-3] [--loc 0|1]\n"
"             [--cci HEX] [--vl N] [--rt N] [--ecn 0-3] [--dscp N] [--ttl N]\n"
"             [--sport N] [--opcode N] [--rspst N] [--psn N] [--count N]\n"
"             [--payload-len N] [--ethertype HEX] [--interval-us N] [--bad-icrc]\n"
"             [--caqm-tag HEX] [--caqm-ethertype HEX]\n"
"  ubpkt build  (the options of send without --dev: print the frames as hex)\n"
"  ubpkt recv --dev DEV [--count N] [--timeout-ms T] [--ethertype HEX] [--all]\n"
"             [--caqm-ethertype HEX]\n"
"\n"
"IPv4 or IPv6 follows from the address syntax. The PSN grows by one per packet.\n"
"--fecn/--loc make a FECN-mode CCI; --cci sets all 16 bits. --opcode picks the TP\n"
"packet: 0 UTP, 1 RTP (data, with a Send TAH and payload), 2 TPACK, 3 TPACK+CETPH,\n"
"5 TPSACK+SAETPH, 6 TPSACK+CETPH+SAETPH, 8 CNP (responses: no TAH, no payload);\n"
"other values are sent as given, to test that receivers reject them.\n"
"recv --count 0 prints frames until the timeout and then exits 0. recv --all prints\n"
"every frame, not only UB and UBoE: kind=ip (other IP) or kind=other (ARP, ...).\n"
"ICMP and ICMPv6 show as icmp=TYPE/CODE mtu=N (Fragmentation Needed / Packet Too\n"
"Big) icmpsum=ok|bad.\n"
"--caqm-tag puts an Ethernet CAQM tag with these 16 info bits after the (802.1Q)\n"
"header of a --uboe frame; recv takes such a tag out before decoding and shows its\n"
"info as caqm=0xHHHH (caqm=- without one). Its EtherType: --caqm-ethertype, 0x88b6.\n";

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

	if (!idx)
		usage_error("--dev: no device '%s' in this network namespace", dev);
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

static const struct option send_opts[] = {
	{ "dev", required_argument, 0, O_DEV },
	{ "native", no_argument, 0, O_NATIVE },
	{ "uboe", no_argument, 0, O_UBOE },
	{ "src-mac", required_argument, 0, O_SRC_MAC },
	{ "dst-mac", required_argument, 0, O_DST_MAC },
	{ "src", required_argument, 0, O_SRC },
	{ "dst", required_argument, 0, O_DST },
	{ "vlan", required_argument, 0, O_VLAN },
	{ "pcp", required_argument, 0, O_PCP },
	{ "pid", required_argument, 0, O_PID },
	{ "perm", required_argument, 0, O_PERM },
	{ "fecn", required_argument, 0, O_FECN },
	{ "loc", required_argument, 0, O_LOC },
	{ "cci", required_argument, 0, O_CCI },
	{ "vl", required_argument, 0, O_VL },
	{ "rt", required_argument, 0, O_RT },
	{ "ecn", required_argument, 0, O_ECN },
	{ "dscp", required_argument, 0, O_DSCP },
	{ "ttl", required_argument, 0, O_TTL },
	{ "sport", required_argument, 0, O_SPORT },
	{ "opcode", required_argument, 0, O_OPCODE },
	{ "rspst", required_argument, 0, O_RSPST },
	{ "psn", required_argument, 0, O_PSN },
	{ "count", required_argument, 0, O_COUNT },
	{ "payload-len", required_argument, 0, O_PAYLOAD_LEN },
	{ "ethertype", required_argument, 0, O_ETHERTYPE },
	{ "interval-us", required_argument, 0, O_INTERVAL },
	{ "bad-icrc", no_argument, 0, O_BAD_ICRC },
	{ "caqm-tag", required_argument, 0, O_CAQM_TAG },
	{ "caqm-ethertype", required_argument, 0, O_CAQM_ETHERTYPE },
	{ "help", no_argument, 0, O_HELP },
	{ 0 },
};

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

static void parse_send(int argc, char **argv, struct send_args *a, bool need_dev)
{
	struct ub_pkt_spec *s = &a->s;
	uint8_t src_ip[16], dst_ip[16];
	int c, sv, dv;

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

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", send_opts, NULL)) != -1) {
		const char *name = send_opts[0].name;

		for (const struct option *o = send_opts; o->name; o++)
			if (o->val == c)
				name = o->name;
		switch (c) {
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
		case O_INTERVAL: a->interval_us = parse_num(name, optarg, 60000000); break;
		case O_BAD_ICRC: a->bad_icrc = true; break;
		case O_CAQM_TAG:
			a->caqm_tag = (uint16_t)parse_num(name, optarg, 0xffff);
			a->have_caqm_tag = true;
			break;
		case O_CAQM_ETHERTYPE: a->caqm_ethertype = (uint16_t)parse_num(name, optarg, 0xffff); break;
		case O_HELP: fputs(usage_text, stdout); exit(0);
		case ':': usage_error("option %s needs a value", argv[optind - 1]);
		default: usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
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

	parse_send(argc, argv, &a, false);
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

	parse_send(argc, argv, &a, true);
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

static const struct option recv_opts[] = {
	{ "dev", required_argument, 0, O_DEV },
	{ "count", required_argument, 0, O_COUNT },
	{ "timeout-ms", required_argument, 0, O_TIMEOUT },
	{ "ethertype", required_argument, 0, O_ETHERTYPE },
	{ "all", no_argument, 0, O_ALL },
	{ "caqm-ethertype", required_argument, 0, O_CAQM_ETHERTYPE },
	{ "help", no_argument, 0, O_HELP },
	{ 0 },
};

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
	unsigned long long want = 1, got = 0, timeout = 5000;
	uint16_t ethertype = UB_ETH_P_NATIVE, caqm_et = UB_ETH_P_CAQM;
	const char *dev = NULL;
	bool all = false;
	struct sockaddr_ll sll;
	long long deadline;
	int c, fd, ifindex, one = 1;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", recv_opts, NULL)) != -1) {
		switch (c) {
		case O_DEV: dev = optarg; break;
		case O_COUNT: want = parse_num("count", optarg, 100000000); break;
		case O_TIMEOUT: timeout = parse_num("timeout-ms", optarg, 86400000); break;
		case O_ETHERTYPE: ethertype = (uint16_t)parse_num("ethertype", optarg, 0xffff); break;
		case O_ALL: all = true; break;
		case O_CAQM_ETHERTYPE: caqm_et = (uint16_t)parse_num("caqm-ethertype", optarg, 0xffff); break;
		case O_HELP: fputs(usage_text, stdout); exit(0);
		case ':': usage_error("option %s needs a value", argv[optind - 1]);
		default: usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
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
	if (argc < 2)
		usage_error("missing command: send, recv or build");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	ub_icrc_init();		/* the backend's timing before the first packet, not on it */
	if (!strcmp(argv[1], "send"))
		return cmd_send(argc - 1, argv + 1);
	if (!strcmp(argv[1], "recv"))
		return cmd_recv(argc - 1, argv + 1);
	if (!strcmp(argv[1], "build"))
		return cmd_build(argc - 1, argv + 1);
	usage_error("unknown command '%s': send, recv or build", argv[1]);
}
