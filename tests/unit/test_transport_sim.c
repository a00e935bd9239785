// SPDX-License-Identifier: BSD-2-Clause
/*
 * The transport core (user/transport) end to end over the deterministic
 * simulated link (user/transport/tp_sim.c): two endpoints, seeded loss,
 * reordering, duplication and delay, every message checked byte for byte,
 * in order and exactly once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tp_pair.h"
#include "ubhdr.h"

#define US 1000ull
#define MS 1000000ull

static const enum tp_mode reliable_modes[] = {
	TP_MODE_RTP_GBN, TP_MODE_RTP_GBN_FAST, TP_MODE_RTP_SR,
};

static void chan_cfg(struct tp_chan_config c[2], enum tp_mode mode)
{
	memset(c, 0, 2 * sizeof(*c));
	for (int i = 0; i < 2; i++) {
		c[i].mode = mode;
		c[i].mtu = 256;
		c[i].window = 64;
		c[i].ooo_range = 128;
		c[i].rto_static_ns = 200 * US;
		c[i].retry_limit = 12;
	}
}

static void link_cfg(struct tp_sim_cfg *s, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->seed = seed;
	for (int i = 0; i < 2; i++) {
		s->dir[i].delay_ns = 10 * US;
		s->dir[i].rate_bps = 10000000000ull;
	}
}

#define PAIR_CHECK(p, ok)							\
	do {									\
		bool ok_ = (ok);						\
		if (!ok_ || (p)->errors || (p)->chan_errors)			\
			fail_msg("%s: finished=%d errors=%u (%s) chan_errors=%u "	\
				 "received=%u/%u done=%u", __func__, (int)ok_,	\
				 (p)->errors, (p)->err, (p)->chan_errors,	\
				 (p)->received, (p)->nmsg, (p)->done);		\
	} while (0)

/* A clean link: everything arrives, nothing is retransmitted. */
static void clean_link(void **state)
{
	(void)state;
	for (size_t m = 0; m < 3; m++) {
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;
		struct tp_stats st;

		chan_cfg(c, reliable_modes[m]);
		link_cfg(&s, 1);
		s.frames = true;
		assert_int_equal(pair_init(&p, c, &s, 100, 3000, 1), 0);
		PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
		tp_chan_stats(p.ch[0], &st);
		assert_int_equal(st.rtx_rto + st.rtx_nak + st.rtx_sack + st.rtx_mark, 0);
		assert_int_equal(st.rto_fired, 0);
		assert_int_equal(tp_sim_stats(p.sim)->frame_errors, 0);
		tp_chan_stats(p.ch[1], &st);
		assert_int_equal(st.msgs_delivered, 100);
		assert_int_equal(st.rx_dup + st.rx_invalid + st.rx_malformed, 0);
		pair_free(&p);
	}
}

/*
 * Many short seeds per mode over a bad link: loss both ways, duplicates,
 * reordering; half the seeds start just below the PSN wrap so the run
 * crosses it; odd seeds go through real UBoE frames and the packet library.
 */
static void lossy_seeds(enum tp_mode mode, uint64_t nseeds)
{
	for (uint64_t seed = 1; seed <= nseeds; seed++) {
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;
		struct tp_stats st;
		uint32_t psn0 = 0;

		chan_cfg(c, mode);
		if (seed % 2 == 0) {
			c[0].fixed_init_psn = true;
			c[0].init_psn = TP_PSN_MASK - 40 - (uint32_t)seed;
			psn0 = c[0].init_psn;
		}
		link_cfg(&s, seed);
		s.frames = seed % 2;
		for (int i = 0; i < 2; i++) {
			s.dir[i].loss_data = 0.03 + 0.01 * (double)(seed % 4);
			s.dir[i].loss_resp = 0.05;
			s.dir[i].dup = 0.02;
			s.dir[i].reorder = 0.05;
			s.dir[i].reorder_ns = 20 * US;
		}
		assert_int_equal(pair_init(&p, c, &s, 60, 1500, seed), 0);
		PAIR_CHECK(&p, pair_run(&p, 10000 * MS));
		tp_chan_stats(p.ch[0], &st);
		assert_true(st.tx_data > 0);
		if (psn0) {
			/* The run crossed the wrap: PSNs went past 2^24 - 1. */
			assert_true(st.tx_data - (st.rtx_rto + st.rtx_nak + st.rtx_sack + st.rtx_mark) >
				    TP_PSN_MASK - psn0);
		}
		assert_int_equal(p.received, 60);
		pair_free(&p);
	}
}

static void lossy_gbn(void **state) { (void)state; lossy_seeds(TP_MODE_RTP_GBN, 24); }
static void lossy_gbn_fast(void **state) { (void)state; lossy_seeds(TP_MODE_RTP_GBN_FAST, 24); }
static void lossy_sr(void **state) { (void)state; lossy_seeds(TP_MODE_RTP_SR, 24); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clean_link),
		cmocka_unit_test(lossy_gbn),
		cmocka_unit_test(lossy_gbn_fast),
		cmocka_unit_test(lossy_sr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
