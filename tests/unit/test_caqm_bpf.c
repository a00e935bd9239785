// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CAQM stage (bpf/caqm_stage.bpf.c) through BPF_PROG_TEST_RUN: native UB
 * frames built by the packet library, their CCI read back by its parser,
 * each verdict compared with the user-space rule (tp_caqm_switch()) fed the
 * same queue; frames that are not CAQM requests leave byte for byte as
 * they came. Needs root (BPF); skips without it, fails so under CI.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "caqm.skel.h"
#include "caqm_stage.h"
#include "transport/cc.h"
#include "transport/tp_sim.h"
#include "lib/frame.h"

#define THRESH	3000
#define UNIT	64

static struct caqm *skel;

static int setup(void **state)
{
	(void)state;
	libbpf_set_print(NULL);
	skel = caqm__open();
	if (!skel)
		return -1;
	skel->rodata->rate_bytes_per_us = 0;	/* no drain: a deterministic queue */
	skel->rodata->thresh = THRESH;
	skel->rodata->hint_unit = UNIT;
	skel->rodata->window_ns = 1ull << 62;
	if (caqm__load(skel)) {
		caqm__destroy(skel);
		skel = NULL;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	caqm__destroy(skel);
	return 0;
}

static void need_bpf(void)
{
	const char *ci = getenv("CI");

	if (skel)
		return;
	if (ci && !strcmp(ci, "true"))
		fail_msg("cannot load the CAQM stage (root and BPF needed) under CI");
	skip();
}

static size_t frame(uint16_t cci, size_t payload, uint8_t *buf, size_t cap)
{
	static uint8_t data[1024];
	struct ub_pkt_spec s;

	ub_pkt_spec_init(&s);
	s.cci = cci;
	s.payload = data;
	s.payload_len = payload;
	return ub_build_native(&s, buf, cap);
}

/* Run one frame; the output bytes go to out. Returns the TC verdict. */
static int run(const uint8_t *in, size_t len, uint8_t *out)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (__u32)len,
		    .data_out = out, .data_size_out = 2048);

	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.caqm_stage), &o), 0);
	assert_int_equal(o.data_size_out, len);
	return (int)o.retval;
}

static uint16_t cci_of(const uint8_t *f, size_t len)
{
	struct ub_view v;

	assert_int_equal(ub_parse_frame(f, len, UB_ETH_P_NATIVE, &v), UB_PARSE_OK);
	assert_non_null(v.nth);
	return v.cci;
}

static uint64_t counter(enum caqm_cnt c)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t v[512] = { 0 }, sum = 0;
	__u32 key = c;

	assert_true(ncpu > 0 && ncpu <= 512);
	assert_int_equal(bpf_map__lookup_elem(skel->maps.caqm_stats, &key, sizeof(key), v,
					      sizeof(uint64_t) * (size_t)ncpu, 0), 0);
	for (int i = 0; i < ncpu; i++)
		sum += v[i];
	return sum;
}

/* Requests and plain data until the queue passes the threshold. */
static void matches_the_rule(void **state)
{
	struct tp_caqm_port m = { .thresh = THRESH, .hint_unit = UNIT, .window_ns = 1ull << 62 };
	const uint16_t req = UB_CCI_CAQM_EN | UB_CCI_CAQM_I | 8, plain = UB_CCI_CAQM_EN;
	uint8_t in[2048], out[2048];
	uint32_t q = 0;

	(void)state;
	need_bpf();
	for (int i = 0; i < 16; i++) {
		uint16_t cci = i % 2 ? plain : req, want;
		size_t len = frame(cci, 300, in, sizeof(in));

		assert_true(len > 0);
		q += (uint32_t)len;
		want = tp_caqm_switch(&m, 0, q, false, cci);
		assert_int_equal(run(in, len, out), 0 /* TC_ACT_OK */);
		assert_int_equal(cci_of(out, len), want);
		/* Only the CCI (bytes 18-19: Eth 14, LPH 4) may differ. */
		assert_memory_equal(out, in, 18);
		assert_memory_equal(out + 20, in + 20, len - 20);
	}
	/* The sequence went through every outcome. */
	assert_true(m.granted > 0 && m.trimmed > 0 && m.refused > 0 && m.congested > 0);
	assert_int_equal(counter(CAQM_CNT_REQUESTS), 16);
	assert_int_equal(counter(CAQM_CNT_GRANTED), m.granted - m.trimmed);
	assert_int_equal(counter(CAQM_CNT_TRIMMED), m.trimmed);
	assert_int_equal(counter(CAQM_CNT_REFUSED), m.refused);
	assert_int_equal(counter(CAQM_CNT_CONGESTED), m.congested);
}

/* Empty the port's budget (the lock word is not ours: the kernel keeps it). */
static void reset_budget(void)
{
	uint8_t zero[64] = { 0 };
	__u32 key = 0;

	assert_true(bpf_map__value_size(skel->maps.caqm_budget) <= sizeof(zero));
	assert_int_equal(bpf_map__update_elem(skel->maps.caqm_budget, &key, sizeof(key), zero,
					      bpf_map__value_size(skel->maps.caqm_budget), 0), 0);
}

/* Differential fuzz: random CCIs (any mode, any bits) and lengths, the BPF
 * stage and the user-space rule in step, until the queue passes the limit. */
static void random_ccis_match_the_rule(void **state)
{
	uint8_t in[2048], out[2048];
	uint64_t rng = 7;

	(void)state;
	need_bpf();
	for (int round = 0; round < 20; round++) {
		struct tp_caqm_port m = { .thresh = THRESH, .hint_unit = UNIT,
					  .window_ns = 1ull << 62 };
		uint32_t q = 0;

		reset_budget();
		for (int i = 0; i < 40; i++) {
			uint16_t cci = (uint16_t)tp_sim_rand(&rng), want;
			size_t len;

			if (tp_sim_rand(&rng) % 2)	/* half of them CAQM requests */
				cci = (uint16_t)((cci & 0x81ff) | UB_CCI_CAQM_EN);
			len = frame(cci, (size_t)(tp_sim_rand(&rng) % 400), in, sizeof(in));
			assert_true(len > 0);
			if (tp_cci_mode(cci) == TP_CCI_MODE_CAQM && (cci & TP_CCI_CAQM_EN))
				q += (uint32_t)len;	/* only requests fill the budget */
			want = tp_caqm_switch(&m, 0, q, false, cci);
			assert_int_equal(run(in, len, out), 0);
			if (cci_of(out, len) != want)
				fail_msg("round %d frame %d: cci %#x -> %#x, rule says %#x", round, i,
					 cci, cci_of(out, len), want);
		}
	}
}

/* FECN frames, EN clear, foreign and truncated frames: untouched, counted. */
static void others_untouched(void **state)
{
	uint8_t in[2048], out[2048];
	struct ub_pkt_spec s;
	size_t len;
	uint64_t other = 0, trunc = 0, not_caqm = 0;

	(void)state;
	need_bpf();
	other = counter(CAQM_CNT_OTHER);
	trunc = counter(CAQM_CNT_TRUNCATED);
	not_caqm = counter(CAQM_CNT_NOT_CAQM);

	len = frame(0x4001, 100, in, sizeof(in));		/* FECN light CE */
	assert_int_equal(run(in, len, out), 0);
	assert_memory_equal(out, in, len);
	len = frame(UB_CCI_CAQM_I | 8, 100, in, sizeof(in));	/* CAQM mode, EN clear */
	assert_int_equal(run(in, len, out), 0);
	assert_memory_equal(out, in, len);
	assert_int_equal(counter(CAQM_CNT_NOT_CAQM), not_caqm + 2);

	ub_pkt_spec_init(&s);					/* UBoE: IPv4 EtherType */
	len = ub_build_uboe(&s, in, sizeof(in));
	assert_true(len > 0);
	assert_int_equal(run(in, len, out), 0);
	assert_memory_equal(out, in, len);
	assert_int_equal(counter(CAQM_CNT_OTHER), other + 1);

	len = frame(UB_CCI_CAQM_EN | UB_CCI_CAQM_I | 8, 100, in, sizeof(in));
	assert_int_equal(run(in, 14 + 4 + 1, out), 0);		/* NTH cut short */
	assert_memory_equal(out, in, 14 + 4 + 1);
	assert_int_equal(counter(CAQM_CNT_TRUNCATED), trunc + 1);
}

/* A UBoE frame of ip_ver through the stage: the ECN it leaves with. */
static uint8_t uboe_ecn_through(uint8_t ip_ver, uint8_t ecn, size_t *len)
{
	static uint8_t data[1024];
	uint8_t in[2048], out[2048];
	struct ub_pkt_spec s;
	struct ub_view v;

	ub_pkt_spec_init(&s);
	s.ip_ver = ip_ver;
	s.ecn = ecn;
	s.payload = data;
	s.payload_len = 1000;
	*len = ub_build_uboe(&s, in, sizeof(in));
	assert_true(*len > 0);
	assert_int_equal(run(in, *len, out), 0);
	assert_int_equal(ub_parse_frame(out, *len, UB_ETH_P_NATIVE, &v), UB_PARSE_OK);
	assert_true(v.ip_csum_ok);
	/* Nothing but the ECN bits (and the IPv4 header checksum) changed. */
	out[15] = in[15];		/* IPv4 ToS, IPv6 traffic class low bits */
	if (ip_ver == 4)
		memcpy(out + 24, in + 24, 2);
	assert_memory_equal(out, in, *len);
	return v.ecn;
}

/* ecn_mark: IP frames fill the queue; ECT ones leave CE above the threshold,
 * with a valid IPv4 checksum; the high water is what the queue reached. */
static void ecn_marks_above_the_threshold(void **state)
{
	struct caqm *plain = skel, *ecn;
	struct caqm_budget b;
	__u32 key = 0;
	size_t len, q = 0;

	(void)state;
	need_bpf();
	ecn = caqm__open();
	assert_non_null(ecn);
	ecn->rodata->thresh = THRESH;
	ecn->rodata->ecn_mark = 1;
	assert_int_equal(caqm__load(ecn), 0);
	skel = ecn;
	/* Up to the threshold (frames of ~1100 bytes with their headers): untouched. */
	for (int i = 0; q + 1100 <= THRESH; i++) {
		assert_int_equal(uboe_ecn_through(i % 2 ? 6 : 4, ECN_ECT0, &len), ECN_ECT0);
		q += len;
	}
	assert_int_equal(counter(CAQM_CNT_ECN_MARKED), 0);
	assert_int_equal(uboe_ecn_through(4, ECN_ECT0, &len), ECN_CE);
	q += len;
	assert_int_equal(uboe_ecn_through(6, ECN_ECT1, &len), ECN_CE);
	q += len;
	assert_int_equal(uboe_ecn_through(4, ECN_NOT_ECT, &len), ECN_NOT_ECT);
	q += len;
	assert_int_equal(uboe_ecn_through(4, ECN_CE, &len), ECN_CE);
	q += len;
	assert_int_equal(counter(CAQM_CNT_ECN_MARKED), 2);
	assert_int_equal(bpf_map__lookup_elem(ecn->maps.caqm_budget, &key, sizeof(key), &b,
					      sizeof(b), BPF_F_LOCK), 0);
	assert_int_equal(b.vq_high, q);	/* no drain: everything that passed */
	assert_int_equal(counter(CAQM_CNT_ECN_SEEN), counter(CAQM_CNT_OTHER));
	skel = plain;
	caqm__destroy(ecn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(matches_the_rule),
		cmocka_unit_test(others_untouched),
		cmocka_unit_test(random_ccis_match_the_rule),
		cmocka_unit_test(ecn_marks_above_the_threshold),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
