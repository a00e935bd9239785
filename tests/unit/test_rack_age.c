// SPDX-License-Identifier: BSD-2-Clause
/*
 * What RACK's timers wait for (tp_rtx.c, tp_rtt_hi) after one D-SACK whose
 * bound is far past the link's RTT: a flow's pair, 10 us each way, 4 KiB
 * Sends one at a time, the first packet of message LATE_MSG taking longer.
 * The probe's wait for a tail lost afterwards shows the timers' RTT.
 * - A real late copy (1 ms): the bound is the path's, but one burst's. It
 *   must be forgotten by time, deliveries or none (an idle gap).
 * - A resend held back by CC past the original's answer: the bound is the
 *   hold, not the path, and must not be taken at all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tp_gate.h"
#include "tp_pair.h"

#define US 1000ull
#define MS 1000000ull
#define BASE_PSN	5000u
#define SEGS		4	/* 4 KiB Sends, MTU 1024 */
#define LATE_MSG	20	/* SRTT settled by then */
#define LINK_NS		(10 * US)

struct age {
	struct tp_pair p;
	struct gate g;
	uint64_t late_ns;	/* the late packet's extra delay */
	uint64_t hold_ns;	/* > 0: its resend held until that long after the
				 * original left (from 15 us), the original's ack
				 * that long on the way */
	uint64_t idle_ns;	/* nothing sent for this long after the D-SACK */
	uint64_t after_ns;	/* the tail lost: the first message posted this
				 * long after the D-SACK */
	uint64_t late_sent, late_resent, dsack_at, tail_sent, tail_resent;
	uint32_t tail_off;	/* 0: not chosen yet */
	bool tail_dropped;
};

static bool age_filter(void *ctx, const struct tp_sim_pkt *pk, uint64_t now)
{
	struct age *a = ctx;
	uint32_t off;

	if (pk->from == 1) {
		/* the original's ack, sent while its resend is held, comes after
		 * the resend's D-SACK (an ack sooner than a round trip after the
		 * resend left would show it answered the original, and clear
		 * the record: tp_rack_delivered) */
		if (!pk->info.data && a->hold_ns)
			tp_sim_set_delay(a->p.sim, 1, now >= a->g.from && now < a->g.until ?
					 a->hold_ns : LINK_NS);
		return false;
	}
	if (!pk->info.data)
		return false;
	off = (pk->info.psn - BASE_PSN) & TP_PSN_MASK;
	tp_sim_set_delay(a->p.sim, 0, LINK_NS);
	if (off == LATE_MSG * SEGS && !pk->info.rtx) {
		a->late_sent = now;
		tp_sim_set_delay(a->p.sim, 0, LINK_NS + a->late_ns);
		if (a->hold_ns)
			a->g = (struct gate){ .from = now + 15 * US, .until = now + a->hold_ns };
	} else if (off == LATE_MSG * SEGS && !a->late_resent) {
		a->late_resent = now;
	}
	if (a->tail_off && off == a->tail_off) {
		if (!pk->info.rtx && !a->tail_dropped) {
			a->tail_dropped = true;
			a->tail_sent = now;
			return true;
		}
		if (pk->info.rtx && a->tail_dropped && !a->tail_resent)
			a->tail_resent = now;
	}
	return false;
}

static bool age_step(void *ctx)
{
	struct age *a = ctx;
	uint64_t now = tp_sim_now(a->p.sim);
	struct tp_stats st;

	tp_chan_stats(a->p.ch[0], &st);
	if (!a->dsack_at && st.rtx_spurious) {
		a->dsack_at = now;
		if (a->idle_ns)
			a->g = (struct gate){ .from = now, .until = now + a->idle_ns };
	}
	/* the next message posted: its last packet */
	if (a->dsack_at && !a->tail_off && now >= a->dsack_at + a->after_ns)
		a->tail_off = a->p.posted * SEGS + SEGS - 1;
	return pair_finished(&a->p);
}

/* The run; returns how long the lost tail waited for its resend (the probe). */
static uint64_t age_run(struct age *a)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_stats st;

	memset(c, 0, sizeof(c));
	for (int i = 0; i < 2; i++) {
		c[i].mode = TP_MODE_RTP_SR;
		c[i].rack = true;
		c[i].window = c[i].ooo_range = 256;
		c[i].mtu = 1024;
		/* static and long: the probe alone shows the timers' RTT, and no
		 * RTO turns the held resend into a timer's */
		c[i].rto_static_ns = 1 * MS;
		c[i].retry_limit = 12;
	}
	c[0].fixed_init_psn = true;
	c[0].init_psn = BASE_PSN;
	c[0].cc = &gate_ops;
	c[0].cc_ctx = &a->g;
	a->g = (struct gate){ .from = UINT64_MAX };
	pair_link_cfg(&s, 3);
	s.filter = age_filter;
	s.filter_ctx = a;
	assert_int_equal(pair_init(&a->p, c, &s, LATE_MSG + 200, SEGS * 1024, 3), 0);
	pair_fixed_len(&a->p);
	a->p.window_ops = 1;
	pair_start(&a->p);
	pair_refill(&a->p);
	PAIR_CHECK(&a->p, tp_sim_run(a->p.sim, 1000 * MS, age_step, a));
	tp_chan_stats(a->p.ch[0], &st);
	print_message("# late %llu us, hold %llu us, idle %llu us: resent %.1f us after the original, "
		      "D-SACK at %.1f us; the tail lost %.1f us after it waited %.1f us; srtt %.1f us, "
		      "D-SACKs %llu, probes %llu, RTOs %llu\n",
		      (unsigned long long)(a->late_ns / US), (unsigned long long)(a->hold_ns / US),
		      (unsigned long long)(a->idle_ns / US),
		      (double)(a->late_resent - a->late_sent) / 1e3,
		      (double)(a->dsack_at - a->late_sent) / 1e3,
		      (double)(a->tail_sent - a->dsack_at) / 1e3,
		      (double)(a->tail_resent - a->tail_sent) / 1e3, (double)st.srtt_ns / 1e3,
		      (unsigned long long)st.rtx_spurious, (unsigned long long)st.rtx_tlp,
		      (unsigned long long)st.rto_fired);
	assert_true(a->dsack_at && a->tail_dropped && a->tail_resent);
	assert_true(a->tail_sent >= a->dsack_at + a->after_ns);
	pair_free(&a->p);
	return a->tail_resent - a->tail_sent;
}

/*
 * The probe's wait on this link: 2 SRTT and a bit (SRTT ~22 us): about 50
 * us. The bound: 200 us, 10 round trips. A D-SACK bound taken and kept
 * lifts it to twice the bound (or the 1 ms RTO, which probes too).
 */
#define PROBE_WAIT_MAX	(200 * US)

/*
 * A packet 1 ms late (resent at the first TPSACK, its resend in first, the
 * D-SACK when it arrives): a bound of ~1 ms, past 2 timers' RTTs, taken.
 * A tail lost 1 ms later must be probed at the link's scale again, with
 * Sends going on meanwhile and after an idle gap. A span of 4 times the
 * peak, rotated only at a delivery: 1,023 us waited with traffic and
 * 1,023 us after the gap (the 1 ms RTO fired as the probe).
 */
static void dsack_peak_ages(void **state)
{
	bool ok = true;

	(void)state;
	for (int idle = 0; idle < 2; idle++) {
		struct age a = { .late_ns = 1 * MS, .idle_ns = idle ? 1 * MS : 0,
				 .after_ns = 1 * MS };
		uint64_t w = age_run(&a);

		assert_true(a.late_resent < a.late_sent + 100 * US);
		ok &= w < PROBE_WAIT_MAX;
	}
	assert_true(ok);
}

/*
 * A packet 50 us late, its resend (at the first TPSACK, 21 us after it)
 * held by CC until 300 us after it, the original's ack slow enough to come
 * after the resend left: the peer D-SACKs the resend, and the bound from
 * the original's send is the hold plus a round trip (~320 us), not the
 * path. The tail lost next is probed at the link's scale. Recorded as any
 * RACK or SACK resend: 670 us waited (the bound's twice).
 */
static void held_resend_no_bound(void **state)
{
	struct age a = { .late_ns = 50 * US, .hold_ns = 300 * US };
	uint64_t w;

	(void)state;
	w = age_run(&a);
	assert_true(a.late_resent >= a.late_sent + a.hold_ns);	/* it was held */
	assert_true(w < PROBE_WAIT_MAX);
}

/*
 * The other side of dsack_peak_ages: the same 1 ms bound and a tail lost
 * 50 us after its D-SACK, well within the bound's span, must wait for the
 * bound (twice it, or the 1 ms RTO): no bound ever taken waits 71 us.
 */
static void dsack_bound_taken(void **state)
{
	struct age a = { .late_ns = 1 * MS, .after_ns = 50 * US };

	(void)state;
	assert_true(age_run(&a) >= 400 * US);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dsack_peak_ages),
		cmocka_unit_test(dsack_bound_taken),
		cmocka_unit_test(held_resend_no_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
