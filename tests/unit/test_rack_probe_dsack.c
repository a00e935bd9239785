// SPDX-License-Identifier: BSD-2-Clause
/*
 * A timer's resend must not teach the D-SACK bound (tp_rtx.c, dsack_learn).
 * A tail-loss probe or an RTO resend leaves only after waiting at least 2
 * rtt_hi; when its original had arrived and only the ack was lost, its
 * D-SACK's bound is that wait plus an RTT, always past dsack_learn's filter
 * (> 2 rtt_hi): rtt_hi rose to about 2 rtt_hi + RTT, the next spurious
 * probe waited that long and doubled it again, up to the 4 s RTO.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tp_pair.h"

#define US 1000ull
#define MS 1000000ull

/* One per-flow RACK pair, 10 us each way, 10 Gb/s, window 256, MTU 1024,
 * dynamic RTO, a share `loss` of data packets and of responses lost, nmsg
 * Sends of 4 KiB one at a time. */
static uint64_t probe_run(uint32_t nmsg, double loss, uint64_t seed, struct tp_stats *st)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	uint64_t done;

	memset(c, 0, sizeof(c));
	for (int i = 0; i < 2; i++) {
		c[i].mode = TP_MODE_RTP_SR;
		c[i].rto_static_ns = 200 * US;
		c[i].retry_limit = 12;
		c[i].rack = 1;
		c[i].window = c[i].ooo_range = 256;
		c[i].mtu = 1024;
		c[i].rto_mode = TP_RTO_DYNAMIC;
	}
	pair_link_cfg(&s, seed);
	for (int i = 0; i < 2; i++) {
		s.dir[i].loss_data = loss;
		s.dir[i].loss_resp = loss;
		s.dir[i].delay_ns = 10 * US;
		s.dir[i].rate_bps = 10000000000ull;
	}
	assert_int_equal(pair_init(&p, c, &s, nmsg, 4096, seed), 0);
	pair_fixed_len(&p);
	p.window_ops = 1;
	PAIR_CHECK(&p, pair_run(&p, 100000 * MS));
	tp_chan_stats(p.ch[0], st);
	done = p.done_ns;
	pair_free(&p);
	return done;
}

/* Seeds 1-6 of nmsg Sends at loss each way, each done within bound. */
static void seeds_done_within(uint32_t nmsg, double loss, uint64_t bound)
{
	bool ok = true;

	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct tp_stats st;
		uint64_t d = probe_run(nmsg, loss, seed, &st);

		print_message("# seed %llu: %.3f ms, srtt %.1f us, RTOs %llu, probes %llu, "
			      "D-SACKs %llu\n", (unsigned long long)seed, d / 1e6,
			      st.srtt_ns / 1e3, (unsigned long long)st.rto_fired,
			      (unsigned long long)st.rtx_tlp, (unsigned long long)st.rtx_spurious);
		ok &= d < bound;
	}
	assert_true(ok);
}

/*
 * 1,000 Sends, 1% lost each way, seeds 1-6: 25.1-26.0 ms each (about 25 us
 * a Send). With the probes' and RTOs' D-SACKs taken, 25.2-27.0 ms but seed
 * 3 103.8 ms (2,000 Sends: 19,052 ms; 20,000: 65,531 ms, main 508-511 ms).
 * The bound: 30 ms, a fifth over the fastest.
 */
static void probes_no_dsk_inflation(void **state)
{
	(void)state;
	seeds_done_within(1000, 0.01, 30 * MS);
}

/*
 * The RTO's resends alike: 5% lost each way, 5,000 Sends, seeds 1-6:
 * 170-177 ms each; with the RTOs' D-SACKs taken (the probes' not),
 * 191-346 ms (a review). The bound: 185 ms.
 */
static void rtos_no_dsk_inflation(void **state)
{
	(void)state;
	seeds_done_within(5000, 0.05, 185 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probes_no_dsk_inflation),
		cmocka_unit_test(rtos_no_dsk_inflation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
