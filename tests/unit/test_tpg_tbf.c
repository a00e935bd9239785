// SPDX-License-Identifier: BSD-2-Clause
/*
 * The multipath issue's 20 ms cell (scripts/bench_multipath.sh) in the
 * network simulator: a group of four channels sprayed per packet over two
 * 50 Mbit/s paths whose drop-tail queues the windows overflow. No RTO of
 * delay alone, and every run drains.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tpg_sim.h"

/*
 * Four channels sprayed over two 50 Mbit/s paths whose queues hold 141 KiB
 * (the tbf's 20 ms and its 16 KiB burst), windows of 256 and ubperf's span
 * of 320, no CC: the windows overflow both queues (resends lost again and
 * again) and the queues reorder by up to their difference. Writes until
 * stop_ns, then the drain, until run_ns.
 */
static struct spray2 tbf_cell(uint64_t stop_ns, uint64_t run_ns)
{
	return (struct spray2){ .nchan = 4, .d0 = 20 * US, .d1 = 20 * US, .rate0 = 50000000,
				.rate1 = 50000000, .limit = 141 * 1024, .window = 256,
				.span = 320, .run_ns = run_ns, .stop_ns = stop_ns };
}

/*
 * The cell: Writes for 600 ms, then the drain. No RTO may come of delay alone, over 24 seeds.
 * Two ways one did (4 and 2 here): an RTO set at a probe's first answer
 * fired while RACK's latest resend of the oldest packet, sent after it,
 * still sat in the queue (4.6-18 ms old; RTO 40.8 ms, 2 SRTT), that resend
 * then arrived and the RTO's copy was D-SACKed; and in the drain, a real
 * loss's RTO whose resend crossed the idle path in 207.5 us, within the
 * 392.9 us min RTT that channel had only measured behind the others'
 * queues, was counted undone (no original had arrived: no D-SACK).
 */
static void spray_tbf_queues_no_undone_rto(void **state)
{
	uint64_t undone = 0, rto = 0, left = 0;

	(void)state;
	for (uint64_t seed = 132; seed < 156; seed++) {
		struct spray2 x = tbf_cell(600 * MS, 1000 * MS);

		spray2_run(&x, seed);
		assert_int_equal(x.errors, 0);
		assert_true(x.drops[0] + x.drops[1] > 1000);	/* real losses */
		undone += x.st.rto_undone;
		rto += x.st.rto_fired;
		left += x.posted_left;
	}
	print_message("# 24 seeds: %llu RTOs, %llu undone; %llu Writes left 400 ms after the last\n",
		      (unsigned long long)rto, (unsigned long long)undone, (unsigned long long)left);
	assert_int_equal(undone, 0);
}

/*
 * Every run drains. Over TPG_TBF_SEEDS seeds (128 unless set; a longer
 * sweep sets more), Writes for 600 ms, then the drain: the last Write
 * completes within DRAIN_NS of the last post, and no RTO is undone. Once
 * RACK could not judge the resends after the last Write, each RTO found
 * one hole (F-RTO took una's jump over the SACKed for proof that it was
 * spurious): seed 148 still had a Write outstanding 4 s after the last.
 * That fixed, RACK still took every resend, answered across the drained path
 * sooner than a min RTT measured behind the other channels' queues, for its
 * original's answer, and the drain took rounds of a reordering window
 * swollen by their false lateness (seed 211: 1,989 ms, no RTO). Drained
 * runs take 246 ms on average, at most 972 ms: 1.5 s leaves an RTO (2 SRTT,
 * SRTTs up to ~270 ms here) of margin.
 */
#define DRAIN_NS	(1500 * MS)

static void spray_tbf_queues_drain(void **state)
{
	const char *env = getenv("TPG_TBF_SEEDS");
	uint64_t nseeds = env ? strtoull(env, NULL, 0) : 128;
	uint64_t rto = 0, undone = 0, stalled = 0, worst = 0, sum = 0;

	(void)state;
	for (uint64_t seed = 128; seed < 128 + nseeds; seed++) {
		struct spray2 x = tbf_cell(600 * MS, 600 * MS + 4000 * MS);
		uint64_t took;

		x.quiet = true;
		spray2_run(&x, seed);
		assert_int_equal(x.errors, 0);
		took = x.posted_left ? x.run_ns - x.last_post_ns : x.last_done_ns - x.last_post_ns;
		if (x.posted_left || took > DRAIN_NS || x.st.rto_undone) {
			stalled++;
			print_message("# seed %llu: %llu Writes left, the last done (or the run ended) "
				      "%.1f ms after the last post, %llu RTOs (%llu undone)\n",
				      (unsigned long long)seed, (unsigned long long)x.posted_left,
				      (double)took / 1e6,
				      (unsigned long long)x.st.rto_fired,
				      (unsigned long long)x.st.rto_undone);
		}
		rto += x.st.rto_fired;
		undone += x.st.rto_undone;
		sum += took;
		if (took > worst)
			worst = took;
	}
	print_message("# %llu seeds: %llu RTOs, %llu undone; the last Write done %.1f ms after "
		      "the last post on average, at most %.1f ms; %llu runs late\n",
		      (unsigned long long)nseeds, (unsigned long long)rto,
		      (unsigned long long)undone, (double)sum / (double)nseeds / 1e6,
		      (double)worst / 1e6, (unsigned long long)stalled);
	assert_int_equal(stalled, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spray_tbf_queues_no_undone_rto),
		cmocka_unit_test(spray_tbf_queues_drain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
