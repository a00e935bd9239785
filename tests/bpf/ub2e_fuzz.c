// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzzer of the UB2E XDP programs: seeded random and mutated frames (bit
 * flips, truncations, random bytes in every header, lengths that lie) through
 * BPF_PROG_TEST_RUN in the switch namespace of tests/bpf/run, each checked by
 * a decoder that is not the code under test (ubref.c, from docs/WIRE.md). Frames:
 * ub2e_fuzz_frames.c; what each may become and the check: ub2e_fuzz_check.c.
 * The invariants:
 *
 *  - every frame moves exactly one verdict counter, and the rx counter of its
 *    direction unless it is foreign (not UB): rx = tx + pass + drop;
 *  - the verdict agrees with that counter, and is one the frame allows: a
 *    frame that must be dropped is dropped, one that is not UB passes as is;
 *  - what is forwarded is a well-formed frame of the other domain (EtherType
 *    matches the IP version, lengths agree, IPv4 checksum and ICRC valid when
 *    they were, CCI in FECN mode, Partition ID not 0, the VLAN / NPI the
 *    configuration asks for), and from the UDP header on it is the input's bytes;
 *  - what is handed to the kernel is the input, or its IP packet behind the
 *    input's MAC addresses.
 *
 * Frame i of program P under seed S is a function of (S, P, i) alone, and so
 * is the configuration in force, so any failure replays on its own:
 *
 *   ub2e_testrun fuzz [--seed S] [--count N] [--prog to_uboe|to_ub|both]
 *                     [--replay I] [--receive-checks] [--egress-mtu] [--raw-maps] [--max-fail N]
 *                     [--fixtures FILE] [--topo FILE] [--ub-dev D] [--ip-dev D]
 *
 * --receive-checks expects the switch's RFC 1812 receive checks (bad
 * IPv4 checksum, martian source and VLAN 4095 dropped, frames for another MAC
 * passed untouched); without it those frames may go either way. --egress-mtu
 * expects the egress MTU check: nothing is forwarded whose IP packet, with the LPH+NTH that
 * UBoE -> UB adds, exceeds the egress port's MTU. --raw-maps adds a configuration
 * whose tables were written as bpftool may (VLAN values above 12 bits, VLAN
 * 4095, Partition ID 0): VLANs are masked to 12 bits, 4095 and PID 0 dropped.
 */
#include <errno.h>
#include <math.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "ub2e_maps.h"	/* first: the skeleton's .data.cfg is a struct ub2e_cfg */
#include "ub2e.skel.h"
#include "ub2e_fuzz.h"
#include "ub2e_harness.h"
#include "io/ub2e_stats.h"
#include "io/ub2e_tables.h"
#include "io/ub2e_punt.h"

#define BLOCK		256	/* frames per configuration */

/* Configurations the fuzzer cycles through, as ubctl options. */
static const char *const profiles[] = {
	"--map 4097=100 --map 7/0=70 --map 7/1=71",
	"--strict --map 4097=100 --map 5=5 --map 7/1=71 --map 9",
	"--untagged --no-ttl-dec --cci-policy drop --rt 1 --vl 9",
	"--default-pid 9 --default-perm 1 --light-ce ect1 --markable ect1 --ce-to light --ect1-to light --rt 3",
	"--caqm-tag --map 4097=100 --cci-policy drop",
	"--caqm-tag --untagged --caqm-ethertype 0x9000",
	"(tables written raw, as with bpftool)",	/* only with --raw-maps */
};
#define NPROFILES (sizeof(profiles) / sizeof(profiles[0]))
#define RAW_PROFILE (NPROFILES - 1)

struct opts {
	uint64_t seed;
	long count, replay;
	int progs;		/* bit per enum dir */
	bool receive_checks;	/* RFC 1812 receive checks */
	bool egress_mtu;	/* nothing forwarded past the egress MTU */
	bool raw_maps;		/* tables written with bpftool, bypassing ubctl's checks */
	int max_fail;
	const char *fixtures, *topo;
};

/* ub2e_tables_clear() walks the tables as ubctl wrote them and stops at these. */
static void clear_raw_tables(void)
{
	struct ub2e_npi_vlans none = {};
	__u32 zero = 0;

	for (size_t i = 0; i < n_raw_npi; i++)
		ub2e_npi_put(bpf_map__fd(skel->maps.ub2e_npi2vlan), raw_npi[i].pid, &none);
	for (size_t i = 0; i < n_raw_vlan; i++)
		bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_vlan2npi), &raw_vlan[i].vid, &zero, BPF_ANY);
}

static int write_raw_tables(void)
{
	for (size_t i = 0; i < n_raw_npi; i++)
		if ((errno = -ub2e_npi_put(bpf_map__fd(skel->maps.ub2e_npi2vlan), raw_npi[i].pid, &raw_npi[i].v)))
			return -1;
	for (size_t i = 0; i < n_raw_vlan; i++)
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_vlan2npi), &raw_vlan[i].vid, &raw_vlan[i].val, BPF_ANY))
			return -1;
	return 0;
}

static int current_profile = -1;
static struct model models[NPROFILES];
static size_t nprofiles = NPROFILES - 1;	/* RAW_PROFILE with --raw-maps */

static int run_one(enum dir d, const uint8_t *in, size_t len, struct result *res, __u64 *ctr)
{
	struct bpf_program *prog = d == TO_UBOE ? skel->progs.ub2e_to_uboe : skel->progs.ub2e_to_ub;
	struct xdp_md ctx = { .data_end = (__u32)len, .ingress_ifindex = d == TO_UBOE ? ub_if : ip_if };
	__u64 after[UB2E_CNT__MAX];
	uint8_t buf[FRAME_MAX];

	memcpy(buf, in, len);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = (__u32)len, .data_out = res->out,
		    .data_size_out = sizeof(res->out), .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1);
	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &o))
		return -errno;
	if (ub2e_counters_read(bpf_map__fd(skel->maps.ub2e_stats), after))
		return -EIO;
	for (int i = 0; i < UB2E_CNT__MAX; i++) {
		res->delta[i] = after[i] - ctr[i];
		ctr[i] = after[i];
	}
	res->verdict = o.retval;
	res->out_len = o.data_size_out;
	return 0;
}

static void print_hex(const char *tag, const uint8_t *p, size_t n)
{
	printf("#   %s ", tag);
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
	printf("\n");
}

/*
 * Input classes, each with its own floor on the share forwarded: the IP
 * version the frame claims and whether it is VLAN-tagged (UBoE -> UB: the
 * input's 802.1Q tag; UB -> UBoE: the tag the configuration gives its output,
 * as the checker expects it). A frame the reference decoder does not follow
 * to its IP version (not UB, or cut or broken before it) has no class.
 */
enum { CLS_V4, CLS_V4_TAGGED, CLS_V6, CLS_V6_TAGGED, NCLS, CLS_NONE = NCLS };
static const char *const cls_name[NCLS] = { "IPv4 untagged", "IPv4 tagged", "IPv6 untagged", "IPv6 tagged" };

struct tally {
	unsigned long frames, failed, outcome[17];
	unsigned long cls_frames[NCLS + 1], cls_fwd[NCLS + 1];
};

/*
 * The share of each class forwarded, measured: 370,000 frames per program
 * over nine seeds (eight runs of 20,000, one of 100,000) with the bpf suite's
 * UB2E_FUZZ_EXPECT. Per seed the shares stayed within the binomial noise of
 * these. UB -> UBoE frames whose Partition maps to a VLAN are mostly valid
 * frames; the untagged ones include every frame the reference drops (no VLAN
 * is decided for them) and the --untagged profiles. Without --raw-maps the
 * shares are higher (its profile forwards least), so these hold as floors.
 */
static const double fwd_rate[2][NCLS] = {
	[TO_UBOE] = { [CLS_V4] = 0.0444, [CLS_V4_TAGGED] = 0.2017, [CLS_V6] = 0.0540, [CLS_V6_TAGGED] = 0.2018 },
	[TO_UB] = { [CLS_V4] = 0.1047, [CLS_V4_TAGGED] = 0.0836, [CLS_V6] = 0.1426, [CLS_V6_TAGGED] = 0.1341 },
};

/*
 * A class's floor: four standard deviations of the binomial below its rate,
 * at the number of frames it had (at 20,000 frames per program, 3.3 % for
 * the rarest class against its 4.4 %; a run falls under one of the eight by
 * chance about once in 4,000). A class that loses its forwarding, to drops
 * or to the kernel path the checker also allows, falls far below; the whole
 * program's share barely moves.
 */
static double fwd_floor(enum dir d, unsigned k, unsigned long n)
{
	double p = fwd_rate[d][k];

	return (double)n * p - 4 * sqrt((double)n * p * (1 - p));
}

static unsigned frame_class(enum dir d, const struct ref_frame *r, const struct expect *e)
{
	bool tagged = d == TO_UB ? r->tagged : e->vid > 0;

	if (r->kind == REF_FOREIGN || (d == TO_UBOE && r->lph_config != 3 && r->lph_config != 4))
		return CLS_NONE;
	return (r->v6 ? CLS_V6 : CLS_V4) + tagged;
}

/* Frame i of direction d under seed s: generate, run, check. Returns false on failure. */
static bool fuzz_one(const struct opts *op, enum dir d, long i, __u64 *ctr, struct tally *t, bool verbose)
{
	static uint8_t in[FRAME_MAX];
	static struct result res;
	int p = (int)((i / BLOCK) % (long)nprofiles);
	struct fz_rng g = { op->seed ^ (0x5851f42d4c957f2dull * (uint64_t)(i + 1)) ^ ((uint64_t)d << 62) };
	struct verdict_ctx c = { .n = 0 };
	struct ref_frame r;
	const struct model *m = &models[p];
	struct expect e;
	unsigned outcome = 0;
	int rc;
	size_t len;
	char err[256];

	fz_splitmix(&g.s);
	if (p != current_profile) {
		if (current_profile == (int)RAW_PROFILE)
			clear_raw_tables();
		if (configure(p == RAW_PROFILE ? "" : profiles[p], err, sizeof(err)) ||
		    (p == RAW_PROFILE && write_raw_tables() && snprintf(err, sizeof(err), "%s", strerror(errno)))) {
			printf("#   configure '%s': %s\n", profiles[p], err);
			return false;
		}
		current_profile = p;
	}
	len = fuzz_make_frame(&g, d, m, in);
	if (d == TO_UBOE)
		ref_decode_native(in, len, m->cfg.ub_ethertype, &r);
	else
		ref_decode_uboe_caqm(in, len, m->cfg.flags & UB2E_F_CAQM_TAG ? m->cfg.caqm_ethertype : 0, &r);
	fuzz_expect(d, in, &r, m, op->receive_checks, op->egress_mtu, &e);
	rc = run_one(d, in, len, &res, ctr);
	t->frames++;
	if (rc) {
		FAIL(&c, "BPF_PROG_TEST_RUN: %s", strerror(-rc));
	} else {
		unsigned k = frame_class(d, &r, &e);

		fuzz_check(&c, d, in, len, &res, m, op->receive_checks, &r, &e, &outcome);
		t->outcome[outcome]++;
		t->cls_frames[k]++;
		t->cls_fwd[k] += outcome == O_FWD;
	}
	if (c.n || verbose) {
		if (c.n) {
			t->failed++;
			if (t->failed > (unsigned long)op->max_fail)
				return false;
		}
		printf("# %s %s frame %ld (seed %llu, profile '%s'): %s\n", c.n ? "FAIL" : "ok", dir_name[d], i,
		       (unsigned long long)op->seed, profiles[p], c.n ? c.msg : "all invariants hold");
		printf("#   reference: %s; verdict %u, output %zu bytes\n", e.why ? e.why : "?", res.verdict, res.out_len);
		print_hex("in ", in, len);
		print_hex("out", res.out, res.out_len);
		if (c.n)
			printf("#   replay: UB2E_FUZZ_SEED=%llu UB2E_FUZZ_ARGS='--prog %s --replay %ld%s%s%s' tests/bpf/run\n",
			       (unsigned long long)op->seed, dir_name[d], i, op->receive_checks ? " --receive-checks" : "",
			       op->egress_mtu ? " --egress-mtu" : "", op->raw_maps ? " --raw-maps" : "");
	}
	return !c.n;
}

static int setup(const char *ub_dev, const char *ip_dev, const struct opts *op)
{
	char err[256];

	ub_if = if_nametoindex(ub_dev);
	ip_if = if_nametoindex(ip_dev);
	if (!ub_if || !ip_if) {
		fprintf(stderr, "ub2e_testrun fuzz: need devices %s and %s in this namespace\n", ub_dev, ip_dev);
		return -1;
	}
	if (fuzz_load_topo(op->topo)) {
		fprintf(stderr, "ub2e_testrun fuzz: cannot read the topology from %s or the port MACs\n", op->topo);
		return -1;
	}
	if (fuzz_load_seeds(op->fixtures)) {
		fprintf(stderr, "ub2e_testrun fuzz: no seed frames in %s\n", op->fixtures);
		return -1;
	}
	for (size_t p = 0; p < NPROFILES; p++)
		if (fuzz_model(p == RAW_PROFILE ? "" : profiles[p], &models[p], err, sizeof(err))) {
			fprintf(stderr, "ub2e_testrun fuzz: profile '%s': %s\n", profiles[p], err);
			return -1;
		}
	models[RAW_PROFILE].raw = true;
	if (op->raw_maps)
		nprofiles = NPROFILES;
	/* Punts as ubctl would make them on this kernel. */
	return ub2e_harness_load(ub2e_punt_key_pick());
}

static int parse_num(const char *s, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || !*s || *end || *s == '-' ? -1 : 0;
}

int ub2e_fuzz_main(int argc, char **argv)
{
	struct opts op = { .seed = 1, .count = 20000, .replay = -1, .progs = 3, .max_fail = 5,
			   .fixtures = "tests/bpf/fixtures/ub2e.txt", .topo = "tests/lib/topo.env" };
	const char *ub_dev = "sw-ub", *ip_dev = "sw-ip";
	__u64 ctr[UB2E_CNT__MAX];
	int tap = 0, failed = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		unsigned long long n = 0;
		bool takes = strcmp(a, "--receive-checks") && strcmp(a, "--egress-mtu") && strcmp(a, "--raw-maps");

		if (takes && !v) {
			fprintf(stderr, "ub2e_testrun fuzz: %s needs a value\n", a);
			return 2;
		}
		if (!strcmp(a, "--receive-checks")) {
			op.receive_checks = true;
		} else if (!strcmp(a, "--egress-mtu")) {
			op.egress_mtu = true;
		} else if (!strcmp(a, "--raw-maps")) {
			op.raw_maps = true;
		} else if (!strcmp(a, "--seed") && !parse_num(v, &n)) {
			op.seed = n;
		} else if (!strcmp(a, "--count") && !parse_num(v, &n) && n <= 1000000000ull) {
			op.count = (long)n;
		} else if (!strcmp(a, "--replay") && !parse_num(v, &n) && n <= 1000000000ull) {
			op.replay = (long)n;
		} else if (!strcmp(a, "--max-fail") && !parse_num(v, &n) && n <= 1000000) {
			op.max_fail = (int)n;
		} else if (!strcmp(a, "--prog") && (!strcmp(v, "to_uboe") || !strcmp(v, "to_ub") || !strcmp(v, "both"))) {
			op.progs = !strcmp(v, "both") ? 3 : !strcmp(v, "to_uboe") ? 1 : 2;
		} else if (!strcmp(a, "--fixtures")) {
			op.fixtures = v;
		} else if (!strcmp(a, "--topo")) {
			op.topo = v;
		} else if (!strcmp(a, "--ub-dev")) {
			ub_dev = v;
		} else if (!strcmp(a, "--ip-dev")) {
			ip_dev = v;
		} else {
			fprintf(stderr, "ub2e_testrun fuzz: bad option '%s%s%s'\n", a, takes ? " " : "", takes ? v : "");
			return 2;
		}
		i += takes;
	}
	if (setup(ub_dev, ip_dev, &op))
		return 2;
	if (ub2e_counters_read(bpf_map__fd(skel->maps.ub2e_stats), ctr)) {
		fprintf(stderr, "ub2e_testrun fuzz: reading counters: %s\n", strerror(errno));
		return 2;
	}

	for (int d = TO_UBOE; d <= TO_UB; d++) {
		struct tally t = {};
		__u64 start[UB2E_CNT__MAX], sum[6] = {};
		bool cover = true;

		if (!(op.progs & (1 << d)))
			continue;
		if (op.replay >= 0) {
			bool ok = fuzz_one(&op, (enum dir)d, op.replay, ctr, &t, true);

			printf("%sok %d - fuzz %s replay of frame %ld (seed %llu)\n", ok ? "" : "not ", ++tap, dir_name[d],
			       op.replay, (unsigned long long)op.seed);
			failed += !ok;
			continue;
		}
		memcpy(start, ctr, sizeof(start));
		for (long i = 0; i < op.count; i++)
			if (!fuzz_one(&op, (enum dir)d, i, ctr, &t, false) && t.failed > (unsigned long)op.max_fail) {
				printf("#   (stopping %s after %d failures)\n", dir_name[d], op.max_fail + 1);
				break;
			}
		printf("%sok %d - fuzz %s: %lu frames, seed %llu, %lu failed (forwarded %lu, punted %lu, dropped %lu, "
		       "not UB %lu, passed as is %lu)\n", t.failed ? "not " : "", ++tap, dir_name[d], t.frames,
		       (unsigned long long)op.seed, t.failed, t.outcome[O_FWD], t.outcome[O_PUNT], t.outcome[O_DROP],
		       t.outcome[O_FOREIGN], t.outcome[O_ASIS]);
		failed += t.failed != 0;

		/* Over the whole run: rx = tx + pass + drop. */
		for (unsigned i = 0; i < UB2E_CNT__MAX; i++)
			sum[ub2e_counter_class(i)] += ctr[i] - start[i];
		printf("%sok %d - fuzz %s counters: rx %llu = tx %llu + pass %llu + drop %llu; not UB %llu; "
		       "%llu frames\n", sum[UB2E_CLASS_RX] == sum[UB2E_CLASS_TX] + sum[UB2E_CLASS_PASS] +
		       sum[UB2E_CLASS_DROP] && sum[UB2E_CLASS_RX] + sum[UB2E_CLASS_FOREIGN] == t.frames ? "" : "not ",
		       ++tap, dir_name[d], (unsigned long long)sum[UB2E_CLASS_RX], (unsigned long long)sum[UB2E_CLASS_TX],
		       (unsigned long long)sum[UB2E_CLASS_PASS], (unsigned long long)sum[UB2E_CLASS_DROP],
		       (unsigned long long)sum[UB2E_CLASS_FOREIGN], (unsigned long long)t.frames);
		failed += !(sum[UB2E_CLASS_RX] == sum[UB2E_CLASS_TX] + sum[UB2E_CLASS_PASS] + sum[UB2E_CLASS_DROP] &&
			    sum[UB2E_CLASS_RX] + sum[UB2E_CLASS_FOREIGN] == t.frames);

		/*
		 * A fuzzer that never forwards tests nothing: every outcome must be
		 * reached, and each class forwarded near the share it has (fwd_rate).
		 * (A vmtest run of 2,000 frames still has floors above zero.)
		 */
		if (op.count >= 2000) {
			char low[256] = "";
			size_t nl = 0;

			cover = t.outcome[O_FWD] && t.outcome[O_PUNT] && t.outcome[O_DROP] && t.outcome[O_FOREIGN];
			for (unsigned k = 0; k < NCLS; k++) {
				unsigned long n = t.cls_frames[k], f = t.cls_fwd[k];
				double floor = fwd_floor((enum dir)d, k, n);

				printf("# fuzz %s %s: %lu of %lu forwarded (%.2f%%), floor %.0f (%.2f%%; rate %.2f%%)\n",
				       dir_name[d], cls_name[k], f, n, n ? 100.0 * (double)f / (double)n : 0.0,
				       floor > 0 ? floor : 0, n && floor > 0 ? 100.0 * floor / (double)n : 0.0,
				       100.0 * fwd_rate[d][k]);
				if ((double)f < floor) {
					cover = false;
					nl += (size_t)snprintf(low + nl, sizeof(low) - nl, "%s%s", nl ? ", " : "",
							       cls_name[k]);
				}
			}
			printf("# fuzz %s not classed (not UB, or broken before its IP version): %lu frames, %lu forwarded\n",
			       dir_name[d], t.cls_frames[CLS_NONE], t.cls_fwd[CLS_NONE]);
			printf("%sok %d - fuzz %s reaches every outcome, each class forwarded near its rate%s%s\n",
			       cover ? "" : "not ", ++tap, dir_name[d], nl ? ": too few for " : "", low);
			failed += !cover;
		}
	}
	ub2e__destroy(skel);
	return failed ? 1 : 0;
}
