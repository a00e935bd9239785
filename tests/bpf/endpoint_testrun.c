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
 *   endpoint_testrun --dev DEV --fuzz N [--seed S]
 *
 * --fuzz: differential fuzzing. Valid UBoE frames from the packet library's
 * builder are mutated (bytes flipped in the headers, lengths edited, frames
 * cut, random bytes) and run through the program; the packet library's
 * parser, not the code under test, says what each frame is, and verdict and
 * counters must agree with it: a valid frame is steered, a UBoE frame the
 * library rejects is not, non-UBoE passes, one counter moves per frame.
 */
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "ub_endpoint.skel.h"
#include "ub_endpoint_maps.h"
#include "ep_xdp.h"
#include "xsk_port.h"
#include "ubpkt.h"
#include "ub_wire.h"

#define MAX_PKT 4096

struct fixture {
	char name[128], prog[16], opts[128], verdict[32], counters[256];
	unsigned char in[MAX_PKT];
	size_t in_len;
};

static struct ub_endpoint *skel;
static unsigned dev_if;
static int sock_fd, tap_n;

static int unhex(const char *s, unsigned char *buf, size_t *len)
{
	size_t n = strlen(s);

	if (n % 2 || n / 2 > MAX_PKT)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		buf[i] = (unsigned char)v;
	}
	*len = n / 2;
	return 0;
}

static const char *verdict_name(__u32 v)
{
	static const char *const names[] = { "XDP_ABORTED", "XDP_DROP", "XDP_PASS", "XDP_TX", "XDP_REDIRECT" };

	return v < 5 ? names[v] : "XDP_?";
}

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

static bool run_case(const struct fixture *f)
{
	int xsk_fd = bpf_map__fd(skel->maps.ub_ep_xsks);
	__u64 before[UB_EP_CNT__MAX], after[UB_EP_CNT__MAX];
	bool ok = true, expected[UB_EP_CNT__MAX] = {};
	unsigned char out[MAX_PKT + 64];
	struct xdp_md ctx = {};
	char want[256], *save, *tok;
	__u32 zero = 0;
	int rc;

	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->in, .data_size_in = (__u32)f->in_len,
		    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);

	if (strcmp(f->prog, "endpoint")) {
		printf("#   unknown prog '%s'\n", f->prog);
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
	if (strcmp(verdict_name(o.retval), f->verdict)) {
		printf("#   verdict: want %s, got %s\n", f->verdict, verdict_name(o.retval));
		ok = false;
	}
	snprintf(want, sizeof(want), "%s", f->counters);
	for (tok = strtok_r(want, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		int i = counter_id(tok);

		if (i < 0) {
			printf("#   unknown counter '%s'\n", tok);
			ok = false;
			continue;
		}
		expected[i] = true;
	}
	for (int i = 0; i < UB_EP_CNT__MAX; i++) {
		__u64 d = after[i] - before[i], w = expected[i] ? 1 : 0;

		if (d != w) {
			printf("#   counter %s moved by %llu, want %llu\n", ep_xdp_counter_name((unsigned)i),
			       (unsigned long long)d, (unsigned long long)w);
			ok = false;
		}
	}
	return ok;
}

static int run_file(const char *path, int *failed)
{
	static char line[2 * MAX_PKT + 64];
	static struct fixture f;
	FILE *fp = fopen(path, "r");
	int lineno = 0;

	if (!fp) {
		fprintf(stderr, "endpoint_testrun: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), fp)) {
		char *v = strchr(line, ' ');

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		if (v)
			*v++ = '\0';
		else
			v = line + strlen(line);
		if (!strcmp(line, "case")) {
			memset(&f, 0, sizeof(f));
			snprintf(f.name, sizeof(f.name), "%s", v);
		} else if (!strcmp(line, "prog")) {
			snprintf(f.prog, sizeof(f.prog), "%s", v);
		} else if (!strcmp(line, "opts")) {
			snprintf(f.opts, sizeof(f.opts), "%s", v);
		} else if (!strcmp(line, "in")) {
			if (unhex(v, f.in, &f.in_len)) {
				fprintf(stderr, "endpoint_testrun: %s:%d: bad hex\n", path, lineno);
				fclose(fp);
				return -1;
			}
		} else if (!strcmp(line, "verdict")) {
			snprintf(f.verdict, sizeof(f.verdict), "%s", v);
		} else if (!strcmp(line, "count")) {
			snprintf(f.counters, sizeof(f.counters), "%s", v);
		} else if (!strcmp(line, "end")) {
			bool ok = run_case(&f);

			printf("%sok %d - endpoint %s\n", ok ? "" : "not ", ++tap_n, f.name);
			*failed += !ok;
		} else {
			fprintf(stderr, "endpoint_testrun: %s:%d: unknown line '%s'\n", path, lineno, line);
			fclose(fp);
			return -1;
		}
	}
	fclose(fp);
	return 0;
}

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

static int fuzz(unsigned long n, uint64_t seed)
{
	int xsk_fd = bpf_map__fd(skel->maps.ub_ep_xsks), prog = bpf_program__fd(skel->progs.ub_endpoint);
	static unsigned char in[MAX_PKT + 64], out[MAX_PKT + 64];
	unsigned long bad = 0, seen[5] = { 0 };
	__u64 before[UB_EP_CNT__MAX], after[UB_EP_CNT__MAX];
	__u32 zero = 0;

	rng_state = seed ? seed : 1;
	if (bpf_map_update_elem(xsk_fd, &zero, &sock_fd, 0))
		return 1;
	read_counters(before);
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
			if (k != UB_EP_CNT_RX_UBOE)
				moved += after[k] - before[k];
		memcpy(before, after, sizeof(before));
		e = ub_parse_frame(in, len, 0, &v);
		seen[o.retval < 5 ? o.retval : 0]++;
		if (moved != 1)
			why = "not exactly one verdict counter moved";
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
			       verdict_name(o.retval), ub_parse_errname(e));
			for (size_t k = 0; k < len && k < 96; k++)
				printf("%02x", in[k]);
			printf("\n");
		}
	}
	printf("%sok %d - endpoint fuzz: %lu frames (seed %llu): %lu steered, %lu dropped, "
	       "%lu passed, %lu disagreements with the packet library\n", bad ? "not " : "", ++tap_n,
	       n, (unsigned long long)seed, seen[XDP_REDIRECT], seen[XDP_DROP], seen[XDP_PASS], bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct xsk_port_cfg cfg = { .nframes = 256, .frame_size = 2048, .ring_size = 64 };
	struct xsk_port *port;
	int i = 1, failed = 0, s;

	if (argc < 4 || strcmp(argv[1], "--dev")) {
		fprintf(stderr, "usage: endpoint_testrun --dev DEV FIXTURES...\n");
		return 2;
	}
	dev_if = if_nametoindex(argv[2]);
	if (!dev_if) {
		fprintf(stderr, "endpoint_testrun: no device %s in this namespace\n", argv[2]);
		return 2;
	}
	skel = ub_endpoint__open_and_load();
	if (!skel) {
		printf("not ok 1 - endpoint program loads (verifier): %s\n", strerror(errno));
		return 1;
	}
	printf("ok %d - endpoint program loads (verifier)\n", ++tap_n);
	/* A real socket for the XSKMAP; the caller inserts it per case. */
	port = xsk_port_create(&cfg);
	s = port ? xsk_port_add(port, argv[2], 0, -1, 0) : -errno;
	if (s < 0) {
		printf("not ok %d - AF_XDP socket on %s: %s\n", ++tap_n, argv[2], strerror(-s));
		xsk_port_destroy(port);
		ub_endpoint__destroy(skel);
		return 1;
	}
	sock_fd = xsk_port_fd(port, s);
	if (!strcmp(argv[3], "--fuzz")) {
		unsigned long n = strtoul(argv[4 < argc ? 4 : 3], NULL, 0);
		uint64_t seed = argc > 6 && !strcmp(argv[5], "--seed") ? strtoull(argv[6], NULL, 0) : 1;

		failed = fuzz(n, seed);
	} else {
		for (i = 3; i < argc; i++)
			if (run_file(argv[i], &failed))
				failed++;
	}
	xsk_port_destroy(port);
	ub_endpoint__destroy(skel);
	return failed ? 1 : 0;
}
