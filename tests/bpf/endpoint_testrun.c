// SPDX-License-Identifier: BSD-2-Clause
/*
 * Runs the scapy-made endpoint fixtures (tests/bpf/fixtures/endpoint.txt,
 * the format of ub2e.txt) through BPF_PROG_TEST_RUN against
 * bpf/ub_endpoint.bpf.c and prints TAP. The XSKMAP holds a real AF_XDP
 * socket (user/xsk) bound to queue 0 of DEV, so a valid UBoE frame gives
 * XDP_REDIRECT; `opts --no-socket` empties the map for the case. Per case:
 * verdict and the counters that moved (listed ones by one, others not).
 *
 *   endpoint_testrun --dev DEV FIXTURES...
 *   endpoint_testrun --dev DEV [--native] [--steer] --fuzz N [--seed S]
 *   endpoint_testrun --dev DEV --steer
 *
 * --fuzz: differential fuzzing. Valid UBoE frames from the packet library's
 * builder are mutated (bytes flipped in the headers, lengths edited, frames
 * cut, random bytes) and run through the program; the packet library's
 * parser, not the code under test, says what each frame is, and verdict and
 * counters must agree with it: a valid frame is steered, a UBoE frame the
 * library rejects is not, non-UBoE passes, one counter moves per frame.
 * --native loads the program for an emulated UB port (docs/WIRE.md §5) and fuzzes
 * native frames: those are steered or dropped, everything else (UBoE too) passes.
 *
 * --steer loads the program in shared mode (several processes on the device,
 * headers/ub_endpoint_maps.h). Alone, it runs frames made by the packet
 * library against slots of each mode (the device's queues, a veth, free):
 * RTP by DstTPN, URMA setup hellos by their target UASID (an unknown one to
 * the holder of the queues), UTP by (IP source, IniRCID); with --fuzz, every
 * slot is the queues' and a valid frame is steered or, for no slot, dropped
 * and counted drop_no_owner: never passed, never dropped for another reason.
 */
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "ub_endpoint.skel.h"
#include "ub_endpoint_maps.h"
#include "endpoint/ep_xdp.h"
#include "xsk/xsk_port.h"
#include "lib/frame.h"
#include "ub_wire.h"
#include "fixture.h"

#define MAX_PKT FIXTURE_MAX_PKT

static struct ub_endpoint *skel;
static unsigned dev_if;
static int sock_fd;
static bool native, steer;

static int counter_id(const char *name)
{
	for (unsigned i = 0; i < UB_EP_CNT__MAX; i++)
		if (!strcmp(ep_xdp_counter_name(i), name))
			return (int)i;
	return -1;
}

static void read_counters(__u64 *out)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(skel->maps.ub_ep_stats);
	__u64 vals[ncpu > 0 ? ncpu : 1];

	for (__u32 id = 0; id < UB_EP_CNT__MAX; id++) {
		out[id] = 0;
		if (ncpu <= 0 || bpf_map_lookup_elem(fd, &id, vals)) {
			out[id] = ~0ull;	/* mismatches, loudly */
			continue;
		}
		for (int c = 0; c < ncpu; c++)
			out[id] += vals[c];
	}
}

static bool run_case(void *rec)
{
	const struct fixture_case *f = rec;
	int xsk_fd = bpf_map__fd(skel->maps.ub_ep_xsks);
	__u64 before[UB_EP_CNT__MAX], after[UB_EP_CNT__MAX];
	__u64 want[UB_EP_CNT__MAX] = {};
	unsigned char out[MAX_PKT + 64];
	struct xdp_md ctx = {};
	bool ok = true;
	__u32 zero = 0;
	int rc;

	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->in, .data_size_in = (__u32)f->in_len,
		    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);

	if (strcmp(f->prog, "endpoint")) {
		printf("#   unknown prog '%s'\n", f->prog);
		return false;
	}
	if (f->has_out) {
		printf("#   an endpoint case checks no output bytes: no 'out' line\n");
		return false;
	}
	ctx.data_end = (__u32)f->in_len;
	ctx.ingress_ifindex = dev_if;
	ctx.rx_queue_index = 0;
	if (!strcmp(f->opts, "--no-socket")) {
		bpf_map_delete_elem(xsk_fd, &zero);
	} else if (f->opts[0]) {
		printf("#   unknown opts '%s'\n", f->opts);
		return false;
	} else if (bpf_map_update_elem(xsk_fd, &zero, &sock_fd, 0)) {
		printf("#   cannot put the AF_XDP socket into the XSKMAP: %s\n", strerror(errno));
		return false;
	}
	read_counters(before);
	rc = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.ub_endpoint), &o);
	read_counters(after);
	if (rc) {
		printf("#   BPF_PROG_TEST_RUN failed: %s\n", strerror(errno));
		return false;
	}
	if (strcmp(fixture_xdp_verdict(o.retval), f->verdict)) {
		printf("#   verdict: want %s, got %s\n", f->verdict, fixture_xdp_verdict(o.retval));
		ok = false;
	}
	ok &= fixture_want_counters(f->counters, counter_id, want);
	ok &= fixture_counters_moved(before, after, want, UB_EP_CNT__MAX, ep_xdp_counter_name);
	return ok;
}

static const struct fixture_driver endpoint_driver = {
	.tool = "endpoint_testrun", .tap = "endpoint", .case_size = sizeof(struct fixture_case), .run = run_case,
};

static uint64_t rng_state;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)rng_state;
}

static size_t seed_frame(unsigned char *buf, size_t cap)
{
	static const uint8_t ops[] = { UB_TP_UTP_DATA, UB_TP_RTP_DATA, UB_TP_ACK, UB_TP_ACK_CE,
				       UB_TP_SACK, UB_TP_SACK_CE, UB_TP_CNP };
	static uint8_t payload[1500];
	struct ub_pkt_spec sp;
	uint8_t op = ops[rnd() % sizeof(ops)];

	ub_pkt_spec_init(&sp);
	sp.ip_ver = rnd() % 2 ? 6 : 4;
	for (int i = 0; i < 16; i++) {
		sp.src_ip[i] = (uint8_t)rnd();
		sp.dst_ip[i] = (uint8_t)rnd();
	}
	sp.ecn = (uint8_t)(rnd() % 4);
	sp.tph.opcode = op;
	sp.tph.psn = rnd() & 0xffffff;
	if (steer && rnd() % 2)
		sp.tph.dst_tpn = rnd() & ((UB_EP_SLOTS << UB_EP_TPN_SHIFT) - 1);	/* some process's */
	if (op > UB_TP_RTP_DATA) {
		sp.has_tah = false;
		sp.tph.nlp = 1;
	}
	sp.has_cetph = op == UB_TP_ACK_CE || op == UB_TP_SACK_CE;
	sp.has_saetph = op == UB_TP_SACK || op == UB_TP_SACK_CE;
	sp.saetph.size_code = (uint8_t)(rnd() % 5);
	sp.has_cnpetph = op == UB_TP_CNP;
	if (rnd() % 4 == 0)
		sp.vlan = (int)(rnd() % 4094 + 1);
	sp.payload = payload;
	sp.payload_len = op <= UB_TP_RTP_DATA ? rnd() % 1200 : 0;
	if (native) {
		sp.pid = rnd() % 8 ? rnd() & UB_PID_MASK : UB_PID_INVALID;
		sp.perm = rnd() & 1;
		sp.rt = rnd() & 3;
		sp.cci = (uint16_t)rnd();
		/* Now and then UBoE, which a UB port leaves to the kernel. */
		if (rnd() % 8) {
			size_t n = ub_build_native(&sp, buf, cap);
			size_t udp = 14 + UB_NATIVE_HDR_LEN + (sp.ip_ver == 6 ? 40 : 20);

			/* Now and then CTP's port, which the program steers too. */
			if (n > udp + 4 && rnd() % 8 == 0) {
				buf[udp + 2] = UB_CTP_UDP_PORT >> 8;
				buf[udp + 3] = UB_CTP_UDP_PORT & 0xff;
			}
			return n;
		}
	}
	return ub_build_uboe(&sp, buf, cap);
}

static void mutate(unsigned char *buf, size_t *len)
{
	switch (rnd() % 6) {
	case 0:		/* valid as built */
		break;
	case 1: {	/* flip bits in the first 80 bytes (L2..TPH) */
		int n = 1 + (int)(rnd() % 3);

		while (n--)
			buf[rnd() % (*len < 80 ? *len : 80)] ^= (unsigned char)(1u << (rnd() % 8));
		break;
	}
	case 2:		/* cut short */
		*len = rnd() % *len;
		break;
	case 3:		/* a random byte in the headers */
		buf[rnd() % (*len < 70 ? *len : 70)] = (unsigned char)rnd();
		break;
	case 4:		/* trailing bytes (Ethernet padding) */
		for (int i = 0; i < 8 && *len < MAX_PKT; i++)
			buf[(*len)++] = (unsigned char)rnd();
		break;
	default:	/* random frame with an IP EtherType */
		*len = 14 + rnd() % 100;
		for (size_t i = 0; i < *len; i++)
			buf[i] = (unsigned char)rnd();
		buf[12] = rnd() % 2 ? 0x08 : 0x86;
		buf[13] = buf[12] == 0x08 ? 0x00 : 0xdd;
		if (native && rnd() % 2) {
			buf[12] = UB_ETH_P_NATIVE >> 8;
			buf[13] = UB_ETH_P_NATIVE & 0xff;
		}
		break;
	}
}

/*
 * The receive checks the datapath shares with the UB2E switch (RFC 1812
 * §5.2.2, §5.3.7), written here from the RFC rather than taken from it: an
 * IPv4 header checksum that fails, or a source no one may send from
 * (multicast, limited broadcast, loopback, unspecified). Such UBoE is dropped.
 */
static bool receive_check_fails(const struct ub_view *v)
{
	static const uint8_t v6_unspec[16], v6_loop[16] = { [15] = 1 };
	const uint8_t *src;

	if (!v->ip)
		return false;
	if (v->ip_ver == 4) {
		src = v->ip + 12;
		return !v->ip_csum_ok || src[0] >> 4 == 0xe || src[0] == 127 ||
		       !memcmp(src, "\xff\xff\xff\xff", 4) || !memcmp(src, "\0\0\0\0", 4);
	}
	src = v->ip + 8;
	return src[0] == 0xff || !memcmp(src, v6_unspec, 16) || !memcmp(src, v6_loop, 16);
}

/* On a UB port: what the packet library says of a frame against the verdict. */
static const char *native_disagreement(const struct ub_view *v, enum ub_parse_err e, __u32 verdict)
{
	bool ub = v->kind == UB_KIND_NATIVE;
	/* The program stops at the TPH; what lies beyond is user space's to find. */
	bool valid = ub && !receive_check_fails(v) && v->pid != UB_PID_INVALID &&
		     (e == UB_PARSE_OK || e == UB_PARSE_SAETPH_SIZE || e == UB_PARSE_HDR_OVERRUN);

	if (!ub)
		return verdict == XDP_PASS ? NULL : "did not pass a frame that is not native UB";
	/* CTP: steered once its UDP header is reached (in a valid partition);
	 * user space checks the rest. */
	if (e == UB_PARSE_NOT_UDP_4792 && v->udp && v->dport == UB_CTP_UDP_PORT &&
	    v->pid != UB_PID_INVALID)
		return verdict == XDP_REDIRECT ? NULL : "did not steer native CTP";
	if (valid)
		return verdict == XDP_REDIRECT ? NULL : "did not steer native UB the packet library takes";
	return verdict == XDP_DROP ? NULL : "did not drop native UB the packet library rejects";
}

static int fuzz(unsigned long n, uint64_t seed)
{
	int xsk_fd = bpf_map__fd(skel->maps.ub_ep_xsks), prog = bpf_program__fd(skel->progs.ub_endpoint);
	static unsigned char in[MAX_PKT + 64], out[MAX_PKT + 64];
	unsigned long bad = 0, seen[5] = { 0 }, ctp = 0, no_owner = 0;
	__u64 before[UB_EP_CNT__MAX], after[UB_EP_CNT__MAX], before_owner;
	__u32 zero = 0;

	rng_state = seed ? seed : 1;
	if (bpf_map_update_elem(xsk_fd, &zero, &sock_fd, 0))
		return 1;
	if (steer) {
		/* Every slot is the queues' (slot 0 names the one holding them). */
		int slot_fd = bpf_map__fd(skel->maps.ub_ep_slot);

		for (__u32 k = 0; k < UB_EP_SLOTS; k++) {
			__u32 mode = k ? UB_EP_SLOT_DIRECT : 1;

			bpf_map_update_elem(slot_fd, &k, &mode, BPF_ANY);
		}
	}
	read_counters(before);
	before_owner = before[UB_EP_CNT_DROP_NO_OWNER];
	for (unsigned long i = 0; i < n; i++) {
		struct xdp_md ctx = { .ingress_ifindex = dev_if };
		size_t len = seed_frame(in, MAX_PKT);
		enum ub_parse_err e;
		struct ub_view v;
		const char *why = NULL;
		__u64 moved = 0;

		mutate(in, &len);
		if (len < 14)
			len = 14;
		ctx.data_end = (__u32)len;
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (__u32)len,
			    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = 1);
		if (bpf_prog_test_run_opts(prog, &o)) {
			printf("#   BPF_PROG_TEST_RUN failed: %s\n", strerror(errno));
			return 1;
		}
		read_counters(after);
		for (int k = 0; k < UB_EP_CNT__MAX; k++)
			if (k != UB_EP_CNT_RX_UBOE && k != UB_EP_CNT_RX_UB && k != UB_EP_CNT_RX_CTP)
				moved += after[k] - before[k];
		ctp += after[UB_EP_CNT_RX_CTP] != before[UB_EP_CNT_RX_CTP];
		memcpy(before, after, sizeof(before));
		e = ub_parse_frame(in, len, 0, &v);
		/* Shared mode: a valid frame for no process is dropped, and says so. */
		if (steer && o.retval == XDP_DROP &&
		    after[UB_EP_CNT_DROP_NO_OWNER] != before_owner) {
			o.retval = XDP_REDIRECT;
			no_owner++;
		}
		before_owner = after[UB_EP_CNT_DROP_NO_OWNER];
		seen[o.retval < 5 ? o.retval : 0]++;
		if (moved != 1)
			why = "not exactly one verdict counter moved";
		else if (native)
			why = native_disagreement(&v, e, o.retval);
		else if (o.retval == XDP_REDIRECT &&
			 !(v.kind == UB_KIND_UBOE && !receive_check_fails(&v) &&
			   (e == UB_PARSE_OK || e == UB_PARSE_SAETPH_SIZE || e == UB_PARSE_HDR_OVERRUN)))
			why = "steered a frame the packet library does not take for UBoE";
		else if (o.retval == XDP_DROP && (e == UB_PARSE_NOT_UB || (e == UB_PARSE_OK && !receive_check_fails(&v))))
			why = "dropped a frame the packet library finds valid or not UB at all";
		else if (o.retval == XDP_PASS && e != UB_PARSE_NOT_UB)
			why = "passed UBoE to the kernel";
		else if (o.retval != XDP_REDIRECT && o.retval != XDP_DROP && o.retval != XDP_PASS)
			why = "unexpected verdict";
		if (why && bad++ < 5) {
			printf("#   frame %lu: %s (verdict %s, library: %s)\n#   ", i, why,
			       fixture_xdp_verdict(o.retval), ub_parse_errname(e));
			for (size_t k = 0; k < len && k < 96; k++)
				printf("%02x", in[k]);
			printf("\n");
		}
	}
	/* Native: CTP's port must have been reached, or the run proves nothing of it. */
	if (native && n >= 2000 && !ctp && !bad++)
		printf("#   no CTP frame steered\n");
	fixture_tap(!bad, "endpoint%s%s fuzz: %lu frames (seed %llu): %lu steered (%lu CTP, %lu for no "
		    "process), %lu dropped, %lu passed, %lu disagreements with the packet library",
		    native ? " (native)" : "", steer ? " (shared)" : "", n, (unsigned long long)seed,
		    seen[XDP_REDIRECT], ctp, no_owner, seen[XDP_DROP], seen[XDP_PASS], bad);
	return bad ? 1 : 0;
}

/* ---- shared mode: the steering, case by case ---------------------------------- */

#define T_UASID		0x123456u
#define T_RCID		0x8123u

/* A URMA setup hello (user/urma/setup.c) to a jetty of UASID uasid, for
 * the channel of TPN tpn (0: not known yet; tp_hello_build_app); plain: the
 * transport's hello alone (tp_hello_build, ubperf's), 20 bytes after the TAH. */
static size_t hello_frame(unsigned char *buf, size_t cap, uint32_t uasid, uint32_t tpn, bool plain)
{
	uint8_t app[20 + 80] = { 'U', 'B', 'H', '2' };
	struct ub_pkt_spec sp;

	app[17] = (uint8_t)(tpn >> 16);
	app[18] = (uint8_t)(tpn >> 8);
	app[19] = (uint8_t)tpn;

	memcpy(app + 20, "URMA", 4);
	app[20 + 4] = 1;		/* version */
	app[20 + 5] = 3;		/* OPEN */
	app[20 + 60] = (uint8_t)(uasid >> 24);
	app[20 + 61] = (uint8_t)(uasid >> 16);
	app[20 + 62] = (uint8_t)(uasid >> 8);
	app[20 + 63] = (uint8_t)uasid;
	ub_pkt_spec_init(&sp);
	sp.src_ip[0] = 10, sp.src_ip[3] = 1;
	sp.dst_ip[0] = 10, sp.dst_ip[3] = 2;
	sp.tph.opcode = UB_TP_UTP_DATA;
	sp.tah.opcode = UB_TA_MESSAGE;
	sp.payload = app;
	sp.payload_len = plain ? 20 : sizeof(app);
	return ub_build_uboe(&sp, buf, cap);
}

static size_t tp_frame_of(unsigned char *buf, size_t cap, bool utp, uint32_t tpn, uint8_t ip_ver,
			  uint8_t src_last, size_t payload_len);

/* RTP data to DstTPN tpn, or (utp) UTP data from src with IniRCID rcid. */
static size_t tp_frame(unsigned char *buf, size_t cap, bool utp, uint32_t tpn, uint8_t ip_ver,
		       uint8_t src_last)
{
	return tp_frame_of(buf, cap, utp, tpn, ip_ver, src_last, 64);
}

/* The same with payload_len bytes of payload (a UB MTU of 4096: a jumbo frame). */
static size_t tp_frame_of(unsigned char *buf, size_t cap, bool utp, uint32_t tpn, uint8_t ip_ver,
			  uint8_t src_last, size_t payload_len)
{
	static const uint8_t payload[4096];
	struct ub_pkt_spec sp;

	ub_pkt_spec_init(&sp);
	sp.ip_ver = ip_ver;
	sp.src_ip[0] = ip_ver == 6 ? 0xfd : 10, sp.src_ip[ip_ver == 6 ? 15 : 3] = src_last;
	sp.dst_ip[0] = ip_ver == 6 ? 0xfd : 10, sp.dst_ip[ip_ver == 6 ? 15 : 3] = 2;
	if (utp) {
		sp.tph.opcode = UB_TP_UTP_DATA;
		sp.tah.ini_rcid = tpn;
	} else {
		sp.tph.dst_tpn = tpn;
		sp.tph.src_tpn = 77;
	}
	sp.payload = payload;
	sp.payload_len = payload_len < sizeof(payload) ? payload_len : sizeof(payload);
	return ub_build_uboe(&sp, buf, cap);
}

static int steer_prog;	/* the instance a case runs through */
static bool workers;	/* --workers: loaded for two workers */
static const char *mode_name(void) { return workers ? "(workers)" : "(shared)"; }

static bool steer_case(const char *name, const unsigned char *in, size_t len, __u32 want_verdict,
		       int want_counter)
{
	__u64 before[UB_EP_CNT__MAX], after[UB_EP_CNT__MAX], want[UB_EP_CNT__MAX] = { 0 };
	struct xdp_md ctx = { .data_end = (__u32)len, .ingress_ifindex = dev_if };
	unsigned char out[MAX_PKT + 64];
	bool ok = true;

	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (__u32)len,
		    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);
	read_counters(before);
	if (!len || bpf_prog_test_run_opts(steer_prog, &o)) {
		printf("#   cannot run: %s\n", len ? strerror(errno) : "frame not built");
		return fixture_tap(false, "endpoint %s %s", mode_name(), name);
	}
	read_counters(after);
	if (o.retval != want_verdict) {
		printf("#   verdict: want %s, got %s\n", fixture_xdp_verdict(want_verdict),
		       fixture_xdp_verdict(o.retval));
		ok = false;
	}
	want[UB_EP_CNT_RX_UBOE] = 1;
	if (want_counter >= 0)
		want[want_counter] = 1;
	ok &= fixture_counters_moved(before, after, want, UB_EP_CNT__MAX, ep_xdp_counter_name);
	return fixture_tap(ok, "endpoint %s %s", mode_name(), name);
}

/*
 * Two workers: a socket of worker 1's on queue 0 only (key 64), none of
 * worker 0's, so each frame shows whose it was: worker 1's are redirected,
 * worker 0's dropped for no socket.
 */
static const struct worker_case {
	const char *name;
	char kind;		/* 'r' RTP to tpn, 'h' a hello naming tpn ('p' a plain one), 'u' UTP of IniRCID tpn */
	uint32_t tpn;
	uint8_t ip_ver, src;	/* the source's last byte */
	bool mine;		/* worker 1's */
} wcases[] = {
	{ "RTP to an odd TPN goes to worker 1's socket on its queue", 'r', 0x12345, 4, 1, true },
	{ "RTP to an even TPN goes to worker 0's (none here: dropped, counted)", 'r', 0x12344, 6, 1, false },
	{ "a hello naming an odd TPN goes to worker 1", 'h', 0x7, 4, 1, true },
	{ "a hello naming no TPN goes to worker 0", 'h', 0, 4, 1, false },
	{ "a plain hello (ubperf's, no URMA part) naming an odd TPN goes to worker 1", 'p', 0x9, 4, 1, true },
	{ "UTP goes by (IP source, IniRCID) to worker 1", 'u', T_RCID, 4, 1, true },
	{ "UTP from another source goes to worker 0", 'u', T_RCID, 4, 9, false },
};

static int worker_cases(void)
{
	int rcid_fd = bpf_map__fd(skel->maps.ub_ep_rcid), xsk_fd = bpf_map__fd(skel->maps.ub_ep_xsks);
	static unsigned char f[MAX_PKT];
	struct ub_ep_rcid_key rk = { .ip = { 10, 0, 0, 1 }, .rcid = T_RCID };
	__u32 key = UB_EP_MAX_QUEUES, one = 1;
	int failed = 0;
	size_t n;

	steer_prog = bpf_program__fd(skel->progs.ub_endpoint);
	if (bpf_map_update_elem(xsk_fd, &key, &sock_fd, 0) || bpf_map_update_elem(rcid_fd, &rk, &one, BPF_ANY)) {
		fixture_tap(false, "endpoint (workers): the maps take their entries: %s", strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < sizeof(wcases) / sizeof(wcases[0]); i++) {
		const struct worker_case *c = &wcases[i];

		n = c->kind == 'h' || c->kind == 'p' ? hello_frame(f, sizeof(f), T_UASID, c->tpn, c->kind == 'p') :
				     tp_frame(f, sizeof(f), c->kind == 'u', c->tpn, c->ip_ver, c->src);
		failed += !steer_case(c->name, f, n, c->mine ? XDP_REDIRECT : XDP_DROP,
				      c->mine ? UB_EP_CNT_TO_XSK : UB_EP_CNT_DROP_NO_SOCKET);
	}
	return failed;
}

/*
 * The queues' holder with two workers (liburma, docs/URMA.md "Worker
 * threads"): slot 1's mode names them; a socket of worker 1's on queue 0
 * only (key 64), so worker 1's frames are redirected and worker 0's dropped
 * for no socket. Slot 1's mode and sockets are as before afterwards.
 */
static int shared_worker_cases(int slot_fd, int uasid_fd, int rcid_fd, int xsk_fd)
{
	static const struct { const char *name; char kind; uint32_t tpn; bool mine; } sw[] = {
		{ "RTP to an odd TPN of the slot goes to its worker 1", 'r', 1u << UB_EP_TPN_SHIFT | 7, true },
		{ "RTP to an even TPN of the slot goes to its worker 0", 'r', 1u << UB_EP_TPN_SHIFT | 8, false },
		{ "an answer naming an odd TPN goes to worker 1", 'h', 1u << UB_EP_TPN_SHIFT | 3, true },
		{ "a first hello (no TPN) goes to worker 0", 'h', 0, false },
		{ "UTP goes to the worker its (IP source, IniRCID) entry names", 'u', T_RCID, true },
		{ "UTP of an entry naming worker 0 goes there", 'u', T_RCID + 1, false },
	};
	__u32 one = 1, zero = 0, key = UB_EP_MAX_QUEUES, uasid = T_UASID + 7;
	__u32 mode = UB_EP_SLOT_DIRECT | 2u << UB_EP_WORKER_SHIFT, plain = UB_EP_SLOT_DIRECT;
	__u32 w1 = 1 | 1u << UB_EP_WORKER_SHIFT;
	struct ub_ep_rcid_key rk = { .ip = { 10, 0, 0, 1 }, .rcid = T_RCID }, rk0 = rk;
	static unsigned char f[MAX_PKT];
	int failed = 0;
	size_t n;

	rk0.rcid = T_RCID + 1;
	if (bpf_map_update_elem(slot_fd, &one, &mode, BPF_ANY) || bpf_map_delete_elem(xsk_fd, &zero) ||
	    bpf_map_update_elem(xsk_fd, &key, &sock_fd, 0) ||
	    bpf_map_update_elem(uasid_fd, &uasid, &one, BPF_ANY) ||
	    bpf_map_update_elem(rcid_fd, &rk, &w1, BPF_ANY) || bpf_map_update_elem(rcid_fd, &rk0, &one, BPF_ANY)) {
		fixture_tap(false, "endpoint (shared) workers: the maps take their entries: %s", strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < sizeof(sw) / sizeof(sw[0]); i++) {
		n = sw[i].kind == 'h' ? hello_frame(f, sizeof(f), uasid, sw[i].tpn, false) :
					tp_frame(f, sizeof(f), sw[i].kind == 'u', sw[i].tpn, 4, 1);
		failed += !steer_case(sw[i].name, f, n, sw[i].mine ? XDP_REDIRECT : XDP_DROP,
				      sw[i].mine ? UB_EP_CNT_TO_XSK : UB_EP_CNT_DROP_NO_SOCKET);
	}
	bpf_map_delete_elem(rcid_fd, &rk0);
	bpf_map_update_elem(rcid_fd, &rk, &(__u32){ 2 }, BPF_ANY);
	bpf_map_delete_elem(uasid_fd, &uasid);
	bpf_map_delete_elem(xsk_fd, &key);
	bpf_map_update_elem(slot_fd, &one, &plain, BPF_ANY);
	return failed + (bpf_map_update_elem(xsk_fd, &zero, &sock_fd, 0) != 0);
}

static int steer_cases(void)
{
	int slot_fd = bpf_map__fd(skel->maps.ub_ep_slot), devs_fd = bpf_map__fd(skel->maps.ub_ep_devs);
	int uasid_fd = bpf_map__fd(skel->maps.ub_ep_uasid), rcid_fd = bpf_map__fd(skel->maps.ub_ep_rcid);
	int xsk_fd = bpf_map__fd(skel->maps.ub_ep_xsks), failed = 0;
	static unsigned char f[MAX_PKT];
	__u32 k, v, zero = 0, uasid = T_UASID;
	struct ub_ep_rcid_key rk = { .ip = { 10, 0, 0, 1 }, .rcid = T_RCID };
	struct ub_ep_rcid_key rk6 = { .ip = { 0xfd, [15] = 1 }, .rcid = T_RCID };
	/* Slot 1 holds the device's queues, slot 2 has a veth, slot 3 is free. */
	const __u32 modes[4] = { 1, UB_EP_SLOT_DIRECT, UB_EP_SLOT_VETH, UB_EP_SLOT_FREE };
	size_t n;

	steer_prog = bpf_program__fd(skel->progs.ub_endpoint);
	for (k = 0; k < 4; k++)
		bpf_map_update_elem(slot_fd, &k, &modes[k], BPF_ANY);
	v = 2;
	k = 2;
	if (bpf_map_update_elem(xsk_fd, &zero, &sock_fd, 0) ||
	    bpf_map_update_elem(devs_fd, &k, &dev_if, BPF_ANY) ||
	    bpf_map_update_elem(uasid_fd, &uasid, &v, BPF_ANY) ||
	    bpf_map_update_elem(rcid_fd, &rk, &v, BPF_ANY) || bpf_map_update_elem(rcid_fd, &rk6, &v, BPF_ANY)) {
		fixture_tap(false, "endpoint (shared): the maps take their entries: %s", strerror(errno));
		return 1;
	}
	n = tp_frame(f, sizeof(f), false, 2u << UB_EP_TPN_SHIFT | 5, 4, 1);
	failed += !steer_case("RTP to a TPN of a veth's slot goes to that veth", f, n, XDP_REDIRECT,
			      UB_EP_CNT_TO_VETH);
	n = tp_frame(f, sizeof(f), false, 1u << UB_EP_TPN_SHIFT | 0x3fff, 6, 1);
	failed += !steer_case("RTP to a TPN of the queues' slot goes to its AF_XDP socket", f, n,
			      XDP_REDIRECT, UB_EP_CNT_TO_XSK);
	/* A UB MTU of 4096 (the queues' holder's on a 9000-byte link): a
	 * multi-buffer frame in the test run, as on such a link. */
	n = tp_frame_of(f, sizeof(f), false, 1u << UB_EP_TPN_SHIFT | 4, 4, 1, 4096);
	failed += !steer_case("a jumbo RTP frame for the queues' slot goes to its AF_XDP socket", f, n,
			      XDP_REDIRECT, UB_EP_CNT_TO_XSK);
	n = tp_frame_of(f, sizeof(f), false, 2u << UB_EP_TPN_SHIFT | 4, 4, 1, 4096);
	failed += !steer_case("a jumbo RTP frame for a veth's slot (its MTU 3500 at most) is dropped, "
			      "counted", f, n, XDP_DROP, UB_EP_CNT_DROP_VETH_MTU);
	n = tp_frame_of(f, sizeof(f), false, 2u << UB_EP_TPN_SHIFT | 4, 4, 1, 2048);
	failed += !steer_case("an RTP frame of a UB MTU of 2048 for a veth's slot goes to that veth", f,
			      n, XDP_REDIRECT, UB_EP_CNT_TO_VETH);
	n = tp_frame(f, sizeof(f), false, 3u << UB_EP_TPN_SHIFT, 4, 1);
	failed += !steer_case("RTP to a free slot is dropped, counted", f, n, XDP_DROP,
			      UB_EP_CNT_DROP_NO_OWNER);
	n = tp_frame(f, sizeof(f), false, 200u << UB_EP_TPN_SHIFT, 4, 1);
	failed += !steer_case("RTP to a TPN beyond every slot is dropped, counted", f, n, XDP_DROP,
			      UB_EP_CNT_DROP_NO_OWNER);
	n = tp_frame(f, sizeof(f), false, 5, 4, 1);
	failed += !steer_case("RTP to a TPN of slot 0 (no process's) is dropped, counted", f, n,
			      XDP_DROP, UB_EP_CNT_DROP_NO_OWNER);
	n = hello_frame(f, sizeof(f), T_UASID, 0, false);
	failed += !steer_case("a setup hello goes to the process of its target UASID", f, n,
			      XDP_REDIRECT, UB_EP_CNT_TO_VETH);
	n = hello_frame(f, sizeof(f), T_UASID + 1, 0, false);
	failed += !steer_case("a setup hello for an unknown UASID goes to the queues' holder (ESTALE)",
			      f, n, XDP_REDIRECT, UB_EP_CNT_TO_XSK);
	n = tp_frame(f, sizeof(f), true, T_RCID, 4, 1);
	failed += !steer_case("UTP goes by (IPv4 source, IniRCID)", f, n, XDP_REDIRECT,
			      UB_EP_CNT_TO_VETH);
	n = tp_frame(f, sizeof(f), true, T_RCID, 6, 1);
	failed += !steer_case("UTP goes by (IPv6 source, IniRCID)", f, n, XDP_REDIRECT,
			      UB_EP_CNT_TO_VETH);
	n = tp_frame(f, sizeof(f), true, T_RCID, 4, 9);
	failed += !steer_case("UTP from another source is no process's: dropped, counted", f, n,
			      XDP_DROP, UB_EP_CNT_DROP_NO_OWNER);
	n = tp_frame(f, sizeof(f), true, T_RCID + 1, 4, 1);
	failed += !steer_case("UTP with another IniRCID is no process's: dropped, counted", f, n,
			      XDP_DROP, UB_EP_CNT_DROP_NO_OWNER);
	/* The instance on a process's veth (ub_loop, the same maps): what the
	 * process sends to a jetty of the device itself. */
	{
		struct ub_endpoint *lo = ub_endpoint__open();
		__u32 one = 1;
		bool loaded = lo;

		if (lo) {
			lo->rodata->ub_steer = 1;
			lo->rodata->ub_loop = 1;
			loaded = !bpf_map__reuse_fd(lo->maps.ub_ep_xsks, xsk_fd) &&
				 !bpf_map__reuse_fd(lo->maps.ub_ep_stats, bpf_map__fd(skel->maps.ub_ep_stats)) &&
				 !bpf_map__reuse_fd(lo->maps.ub_ep_slot, slot_fd) &&
				 !bpf_map__reuse_fd(lo->maps.ub_ep_devs, devs_fd) &&
				 !bpf_map__reuse_fd(lo->maps.ub_ep_uasid, uasid_fd) &&
				 !bpf_map__reuse_fd(lo->maps.ub_ep_rcid, rcid_fd) && !ub_endpoint__load(lo);
		}
		failed += !fixture_tap(loaded, "endpoint (shared) the instance for a process's veth loads "
				       "on the device's maps");
		if (loaded) {
			bpf_map_update_elem(devs_fd, &one, &dev_if, BPF_ANY);
			steer_prog = bpf_program__fd(lo->progs.ub_endpoint);
			n = tp_frame(f, sizeof(f), false, 1u << UB_EP_TPN_SHIFT | 3, 4, 1);
			failed += !steer_case("loopback: for the queues' slot, to its veth (not its "
					      "sockets: they are the device's)", f, n, XDP_REDIRECT,
					      UB_EP_CNT_TO_VETH);
			n = tp_frame(f, sizeof(f), false, 2u << UB_EP_TPN_SHIFT | 3, 4, 1);
			failed += !steer_case("loopback: for a veth's slot, to that veth", f, n,
					      XDP_REDIRECT, UB_EP_CNT_TO_VETH);
			n = hello_frame(f, sizeof(f), T_UASID, 0, false);
			failed += !steer_case("loopback: a hello by its target UASID", f, n, XDP_REDIRECT,
					      UB_EP_CNT_TO_VETH);
			bpf_map_delete_elem(devs_fd, &one);
			steer_prog = bpf_program__fd(skel->progs.ub_endpoint);
		}
		ub_endpoint__destroy(lo);
	}
	failed += shared_worker_cases(slot_fd, uasid_fd, rcid_fd, xsk_fd);
	/* The queues' holder gone: its sockets leave the XSKMAP with it. */
	bpf_map_delete_elem(xsk_fd, &zero);
	n = tp_frame(f, sizeof(f), false, 1u << UB_EP_TPN_SHIFT | 9, 4, 1);
	failed += !steer_case("RTP for the queues' slot without a socket is dropped, counted", f, n,
			      XDP_DROP, UB_EP_CNT_DROP_NO_SOCKET);
	/* A veth gone (its process ended): the devmap entry goes with the device. */
	bpf_map_delete_elem(devs_fd, &k);
	n = tp_frame(f, sizeof(f), false, 2u << UB_EP_TPN_SHIFT | 5, 4, 1);
	failed += !steer_case("RTP for a slot whose veth is gone is dropped, counted", f, n, XDP_DROP,
			      UB_EP_CNT_DROP_NO_SOCKET);
	return failed;
}

int main(int argc, char **argv)
{
	struct xsk_port_cfg cfg = { .nframes = 256, .frame_size = 2048, .ring_size = 64 };
	struct xsk_port *port;
	int i = 1, failed = 0, s;

	while (argc > 3 && (!strcmp(argv[3], "--native") || !strcmp(argv[3], "--steer") ||
			    !strcmp(argv[3], "--workers"))) {
		if (!strcmp(argv[3], "--native"))
			native = true;
		else if (!strcmp(argv[3], "--workers"))
			workers = true;
		else
			steer = true;
		memmove(&argv[3], &argv[4], (size_t)(argc - 3) * sizeof(*argv));	/* and the NULL */
		argc--;
	}
	if ((argc < 4 && !((steer || workers) && argc == 3)) || strcmp(argv[1], "--dev")) {
		fprintf(stderr, "usage: endpoint_testrun --dev DEV [--native] [--steer | --workers] FIXTURES...\n");
		return 2;
	}
	dev_if = if_nametoindex(argv[2]);
	if (!dev_if) {
		fprintf(stderr, "endpoint_testrun: no device %s in this namespace\n", argv[2]);
		return 2;
	}
	skel = ub_endpoint__open();
	if (skel && native)
		skel->rodata->ub_ethertype = UB_ETH_P_NATIVE;
	if (skel && steer)
		skel->rodata->ub_steer = 1;
	if (skel && workers)
		skel->rodata->ub_workers = 2;
	if (!skel || ub_endpoint__load(skel)) {
		printf("not ok 1 - endpoint program%s%s loads (verifier): %s\n", native ? " (native)" : "",
		       steer ? " (shared)" : workers ? " (workers)" : "", strerror(errno));
		return 1;
	}
	fixture_tap(true, "endpoint program%s%s loads (verifier)", native ? " (native)" : "",
		    steer ? " (shared)" : workers ? " (workers)" : "");
	/* A real socket for the XSKMAP; the caller inserts it per case. */
	port = xsk_port_create(&cfg);
	s = port ? xsk_port_add(port, argv[2], 0, -1, 0) : -errno;
	/* The socket of the run before on this queue goes away asynchronously. */
	for (int t = 0; s == -EBUSY && t < 100; t++) {
		usleep(20000);
		s = xsk_port_add(port, argv[2], 0, -1, 0);
	}
	if (s < 0) {
		fixture_tap(false, "AF_XDP socket on %s: %s", argv[2], strerror(-s));
		xsk_port_destroy(port);
		ub_endpoint__destroy(skel);
		return 1;
	}
	sock_fd = xsk_port_fd(port, s);
	if (argc == 3) {
		failed = workers ? worker_cases() : steer_cases();
	} else if (!strcmp(argv[3], "--fuzz")) {
		unsigned long n = strtoul(argv[4 < argc ? 4 : 3], NULL, 0);
		uint64_t seed = argc > 6 && !strcmp(argv[5], "--seed") ? strtoull(argv[6], NULL, 0) : 1;

		failed = fuzz(n, seed);
	} else {
		for (i = 3; i < argc; i++)
			if (fixture_run(&endpoint_driver, argv[i], &failed))
				failed++;
	}
	xsk_port_destroy(port);
	ub_endpoint__destroy(skel);
	return failed ? 1 : 0;
}
