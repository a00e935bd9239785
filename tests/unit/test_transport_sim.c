// SPDX-License-Identifier: BSD-2-Clause
/*
 * The transport core (user/transport) end to end over the deterministic
 * simulated link (user/transport/tp_sim.c): two endpoints, seeded loss,
 * reordering, duplication and delay, every message checked byte for byte,
 * in order and exactly once. One test reads the channel's state (tp_int.h)
 * after every step: its reordering epochs are visible nowhere else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "transport/cc.h"
/* the channel's reordering epochs: path_rule_back_after_quiet_epochs */
#include "transport/tp_int.h"
#include "tp_gate.h"
#include "tp_pair.h"
#include "lib/ubhdr.h"

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
		pair_link_cfg(&s, 1);
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

struct psn_log;
static bool log_filter(void *ctx, const struct tp_sim_pkt *p, uint64_t now);
static void log_attach(struct tp_sim_cfg *s, struct psn_log *l, const struct tp_chan_config *c0);
static void log_window(struct psn_log *l, uint32_t base, uint32_t window);
static uint32_t log_window_violations(const struct psn_log *l);

/*
 * Many short seeds per mode over a bad link: loss both ways, duplicates,
 * reordering; half the seeds start just below the PSN wrap so the run
 * crosses it; odd seeds go through real UBoE frames and the packet library.
 */
static void lossy_seeds(enum tp_mode mode, uint64_t nseeds, bool sprayed)
{
	for (uint64_t seed = 1; seed <= nseeds; seed++) {
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;
		struct tp_stats st;
		uint32_t psn0 = 0;
		static struct psn_log *l;

		if (!l)
			l = calloc(1, 65536);	/* struct psn_log is defined below */

		chan_cfg(c, mode);
		for (int i = 0; sprayed && i < 2; i++) {
			/* what tpg_prepare() sets for per-packet load balancing */
			c[i].no_fast_rtx = c[i].rack = true;
			c[i].sack_after = 32;
			c[i].rto_mode = TP_RTO_DYNAMIC;
		}
		if (seed % 2 == 0) {
			c[0].fixed_init_psn = true;
			c[0].init_psn = TP_PSN_MASK - 40 - (uint32_t)seed;
			psn0 = c[0].init_psn;
		}
		pair_link_cfg(&s, seed);
		s.frames = seed % 2;
		for (int i = 0; i < 2; i++) {
			s.dir[i].loss_data = 0.03 + 0.01 * (double)(seed % 4);
			s.dir[i].loss_resp = 0.05;
			s.dir[i].dup = 0.02;
			s.dir[i].reorder = 0.05;
			s.dir[i].reorder_ns = 20 * US;
		}
		log_attach(&s, l, &c[0]);
		assert_int_equal(pair_init(&p, c, &s, 60, 1500, seed), 0);
		log_window(l, tp_chan_init_psn(p.ch[0]), c[0].window);
		PAIR_CHECK(&p, pair_run(&p, 10000 * MS));
		/* The window binds here (BDP ~77 packets > 64): never passed. */
		assert_int_equal(log_window_violations(l), 0);
		tp_chan_stats(p.ch[0], &st);
		assert_true(st.tx_data > 0);
		if (psn0) {
			/* The run crossed the wrap: PSNs went past 2^24 - 1. */
			assert_true(st.tx_data - (st.rtx_rto + st.rtx_nak + st.rtx_sack + st.rtx_mark) >
				    TP_PSN_MASK - psn0);
		}
		pair_free(&p);
	}
}

static void lossy_gbn(void **state) { (void)state; lossy_seeds(TP_MODE_RTP_GBN, 24, false); }
static void lossy_gbn_fast(void **state) { (void)state; lossy_seeds(TP_MODE_RTP_GBN_FAST, 24, false); }
static void lossy_sr(void **state) { (void)state; lossy_seeds(TP_MODE_RTP_SR, 24, false); }
/* SR as per-packet load balancing sets it: RACK, TLP, D-SACK, no fast rtx. */
static void lossy_sr_rack(void **state) { (void)state; lossy_seeds(TP_MODE_RTP_SR, 24, true); }


/* ---- scenario helpers ---------------------------------------------------- */

struct psn_log {
	uint32_t base;			/* initial PSN of ep 0's channel */
	uint32_t tx[4096], drops[4096];
	uint64_t rng;
	double loss;			/* random loss of ep 0's data */
	uint32_t drop_psn, drop_times;	/* drop the first N sends of one PSN */
	uint32_t drop2_psn, drop2_times;	/* ... and of another */
	uint32_t drop_from, drop_to;	/* drop the first send of PSN offsets [from, to) */
	uint32_t drop_range_times;	/* ... or the first N sends (0: 1) */
	uint64_t resp_blackout_until;	/* drop every response until then */
	uint64_t data_blackout_from;	/* drop every data packet from then */
	uint64_t data_blackout_until;	/* ...until then (0: for ever) */
	uint64_t rtx_at[16];		/* when the una PSN was resent */
	uint32_t n_rtx_at, rtx_psn;
	uint32_t max_ack_off;		/* highest cumulative ack from ep 1 (offset) */
	bool any_ack;
	uint32_t taack_acks;		/* TPACKs from ep 1 carrying a TAACK */
	uint32_t window;		/* if set: no new PSN beyond the last ack + window */
	uint32_t window_violations;
	uint32_t drop_ack_off;		/* drop ep 1's acks of this PSN offset... */
	uint64_t drop_ack_until;	/* ...until then */
};

static bool log_filter(void *ctx, const struct tp_sim_pkt *p, uint64_t now)
{
	struct psn_log *l = ctx;

	if (p->from == 1 && !p->info.data) {
		struct ub_tph_fields f;

		ub_tph_decode((const struct ub_tph *)p->tp, &f);
		if (now < l->resp_blackout_until)
			return true;
		if (now < l->drop_ack_until && ((f.psn - l->base) & TP_PSN_MASK) == l->drop_ack_off)
			return true;
		if ((f.opcode == UB_TP_ACK || f.opcode == UB_TP_SACK) &&
		    (f.rspst == UB_RSPST_ACK || f.rspst == UB_RSPST_NAK)) {
			/* Cumulative: TPACK/TPSACK PSN, TPNAK PSN - 1. */
			uint32_t cum = f.rspst == UB_RSPST_NAK ? f.psn - 1 : f.psn;
			uint32_t off = (cum - l->base) & TP_PSN_MASK;

			if (off != TP_PSN_MASK && (!l->any_ack || off > l->max_ack_off))
				l->max_ack_off = off;
			l->any_ack = l->any_ack || off != TP_PSN_MASK;
			if (f.nlp == UB_NLP_TAH && p->len >= sizeof(struct ub_tph) + sizeof(struct ub_tah)) {
				struct ub_tah_fields t;

				ub_tah_decode((const struct ub_tah *)(p->tp + sizeof(struct ub_tph)), &t);
				if (t.opcode == UB_TA_TAACK)
					l->taack_acks++;
			}
		}
		return false;
	}
	if (p->from == 0 && p->info.data) {
		uint32_t off = (p->info.psn - l->base) & TP_PSN_MASK;

		if (now >= l->data_blackout_from && l->data_blackout_from &&
		    (!l->data_blackout_until || now < l->data_blackout_until)) {
			/* The RTO resends the oldest PSN first: time those. */
			if (p->info.rtx && l->n_rtx_at < 16 &&
			    (!l->n_rtx_at || p->info.psn == l->rtx_psn))
				l->rtx_at[l->n_rtx_at++] = now;
			if (p->info.rtx && l->n_rtx_at == 1)
				l->rtx_psn = p->info.psn;
			return true;
		}
		if (off >= 4096)
			return false;
		/* The sender's una is at most one past any ack already sent. */
		if (l->window && !p->info.rtx &&
		    off >= (l->any_ack ? l->max_ack_off + 1 : 0) + l->window)
			l->window_violations++;
		l->tx[off]++;
		if ((off == l->drop_psn && l->drops[off] < l->drop_times) ||
		    (off == l->drop2_psn && l->drops[off] < l->drop2_times) ||
		    (off >= l->drop_from && off < l->drop_to &&
		     l->drops[off] < (l->drop_range_times ? l->drop_range_times : 1)) ||
		    (l->loss > 0 && (double)(tp_sim_rand(&l->rng) >> 11) / (double)(1ull << 53) < l->loss)) {
			l->drops[off]++;
			return true;
		}
	}
	return false;
}

static void log_attach(struct tp_sim_cfg *s, struct psn_log *l, const struct tp_chan_config *c0)
{
	memset(l, 0, sizeof(*l));
	l->base = c0->init_psn;
	l->drop_psn = UINT32_MAX;
	l->drop2_psn = UINT32_MAX;
	s->filter = log_filter;
	s->filter_ctx = l;
}

static void log_window(struct psn_log *l, uint32_t base, uint32_t window)
{
	assert_true(sizeof(*l) <= 65536);
	l->base = base;
	l->window = window;
}

static uint32_t log_window_violations(const struct psn_log *l) { return l->window_violations; }

/* Tail loss: the last packet of the last message is lost once; only the RTO
 * can recover it (nothing follows to raise a NAK or a SACK). */
static void tail_loss_rto(void **state)
{
	(void)state;
	for (size_t m = 0; m < 3; m++) {
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;
		struct psn_log l;
		struct tp_stats st;

		chan_cfg(c, reliable_modes[m]);
		c[0].fixed_init_psn = true;
		c[0].init_psn = 1000;
		pair_link_cfg(&s, 3);
		log_attach(&s, &l, &c[0]);
		assert_int_equal(pair_init(&p, c, &s, 1, 3 * 256, 3), 0);
		pair_one_msg(&p, 3 * 256);	/* exactly three packets: PSN 1000..1002 */
		l.drop_psn = 2;
		l.drop_times = 1;
		PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
		tp_chan_stats(p.ch[0], &st);
		assert_int_equal(st.rto_fired, 1);
		assert_int_equal(st.rtx_rto, 1);
		assert_int_equal(st.rtx_nak + st.rtx_sack + st.rtx_mark, 0);
		assert_int_equal(l.tx[2], 2);
		assert_true(p.done_ns >= 200 * US);
		pair_free(&p);
	}
}

/* Every response lost for 2 ms, then half of them: duplicates are re-acked,
 * so the sender always moves on (Soft-RoCE once livelocked here). */
static void ack_loss_no_livelock(void **state)
{
	(void)state;
	for (size_t m = 0; m < 3; m++) {
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;
		struct psn_log l;
		struct tp_stats st;

		chan_cfg(c, reliable_modes[m]);
		pair_link_cfg(&s, 5);
		s.dir[1].loss_resp = 0.5;
		log_attach(&s, &l, &c[0]);
		l.resp_blackout_until = 2 * MS;
		assert_int_equal(pair_init(&p, c, &s, 40, 2000, 5), 0);
		PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
		tp_chan_stats(p.ch[1], &st);
		assert_true(st.rx_dup > 0);
		tp_chan_stats(p.ch[0], &st);
		assert_true(st.rto_fired > 0);
		/* Bounded: well under the retry limit's worth of RTOs. SR's
		 * timeout resends two packets, not the window (stall_no_go_back),
		 * so with half the answers lost a message may take two. */
		assert_true(p.done_ns < 2 * MS + 40 * (m == 2 ? 2 : 1) * 200 * US);
		pair_free(&p);
	}
}

/* SR over a link with ep 0's data logged (psn_log), ep 0's PSNs from psn0. */
static void sr_logged(struct tp_chan_config c[2], struct tp_sim_cfg *s, struct psn_log *l,
		      uint64_t seed, uint32_t psn0)
{
	chan_cfg(c, TP_MODE_RTP_SR);
	c[0].fixed_init_psn = true;
	c[0].init_psn = psn0;
	pair_link_cfg(s, seed);
	log_attach(s, l, &c[0]);
}

/*
 * A stall: the receiver does not run for 3 ms (descheduled on a busy host)
 * while SRTT is tens of microseconds, so the dynamic RTO fires, more than
 * once. Every packet sent before it arrives, late: each timeout resends two
 * packets (the oldest and the newest), never the window, and the first ack
 * after the stall shows the timeout was spurious. Then a real tail loss of
 * the last three packets: one timeout, the answer to its probes shows the
 * holes, and those three go again.
 */
static void stall_no_go_back(void **state)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct psn_log l;
	struct tp_stats st;
	uint64_t stall_rtx;

	(void)state;
	chan_cfg(c, TP_MODE_RTP_SR);
	for (int i = 0; i < 2; i++) {
		c[i].rto_mode = TP_RTO_DYNAMIC;
		c[i].rto_min_ns = 10 * US;
	}
	c[0].fixed_init_psn = true;
	c[0].init_psn = 5000;
	pair_link_cfg(&s, 21);
	s.dir[0].stall_at_ns = 50 * US;
	s.dir[0].stall_ns = 3 * MS;
	log_attach(&s, &l, &c[0]);
	assert_int_equal(pair_init(&p, c, &s, 40, 16 * 256, 21), 0);
	PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
	tp_chan_stats(p.ch[0], &st);
	print_message("# stall: rto fired %llu, spurious %llu, resent %llu of %llu\n",
		      (unsigned long long)st.rto_fired, (unsigned long long)st.rto_spurious,
		      (unsigned long long)st.rtx_rto, (unsigned long long)st.tx_data);
	assert_true(st.rto_fired >= 2);		/* the stall outlasted the RTO */
	assert_true(st.rtx_rto <= 2 * st.rto_fired);	/* never the window (64) */
	assert_int_equal(st.rto_spurious, 1);
	assert_int_equal(st.rtx_sack + st.rtx_mark + st.rtx_nak, 0);
	stall_rtx = st.rtx_rto;
	pair_free(&p);

	/* Tail loss: PSNs +13..+15 of a 16-packet message, lost once each. */
	sr_logged(c, &s, &l, 22, 5000);
	c[0].rto_mode = TP_RTO_DYNAMIC;
	l.drop_from = 13;
	l.drop_to = 16;
	assert_int_equal(pair_init(&p, c, &s, 1, 16 * 256, 22), 0);
	pair_one_msg(&p, 16 * 256);
	PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
	tp_chan_stats(p.ch[0], &st);
	assert_int_equal(st.rto_fired, 1);
	assert_int_equal(st.rto_spurious, 0);
	for (uint32_t i = 13; i < 16; i++)
		assert_int_equal(l.tx[i], 2);
	assert_int_equal(st.rtx_rto + st.rtx_sack, 3);
	/* Quickly: one RTO of a few RTTs (SRTT ~ 25 us), not a static 200 us. */
	assert_true(p.done_ns < 200 * US);
	(void)stall_rtx;
	pair_free(&p);
}

/* SR with data loss only (no reordering, lossless responses): every
 * retransmission answers a real loss of that very PSN, never twice in a
 * round (HighRtxPSN), and lost retransmissions are found by MarkPSN. */
static void sr_no_double_retransmission(void **state)
{
	uint64_t mark = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 12; seed++) {
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;
		struct psn_log l;
		struct tp_stats st;

		chan_cfg(c, TP_MODE_RTP_SR);
		c[0].fixed_init_psn = true;
		c[0].init_psn = (uint32_t)(TP_PSN_MASK - 100 * seed);
		pair_link_cfg(&s, seed);
		for (int i = 0; i < 2; i++)
			s.dir[i].rate_bps = 1000000000ull;
		log_attach(&s, &l, &c[0]);
		l.loss = 0.05;
		l.rng = seed;
		l.window = c[0].window;
		assert_int_equal(pair_init(&p, c, &s, 60, 1500, seed), 0);
		PAIR_CHECK(&p, pair_run(&p, 10000 * MS));
		for (uint32_t i = 0; i < 4096; i++)
			if (l.tx[i] != (l.tx[i] ? 1 + l.drops[i] : 0))
				fail_msg("seed %llu PSN +%u sent %u times, lost %u",
					 (unsigned long long)seed, i, l.tx[i], l.drops[i]);
		assert_int_equal(l.window_violations, 0);
		tp_chan_stats(p.ch[0], &st);
		mark += st.rtx_mark;
		pair_free(&p);
	}
	assert_true(mark > 0);
}

/* MarkPSN: a PSN lost twice while data keeps flowing is resent a second time
 * without waiting for the RTO. */
static void sr_markpsn_no_rto(void **state)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct psn_log l;
	struct tp_stats st;

	(void)state;
	chan_cfg(c, TP_MODE_RTP_SR);
	pair_link_cfg(&s, 9);
	for (int i = 0; i < 2; i++)
		s.dir[i].rate_bps = 1000000000ull;
	log_attach(&s, &l, &c[0]);
	l.drop_psn = 10;
	l.drop_times = 2;
	assert_int_equal(pair_init(&p, c, &s, 60, 1500, 9), 0);
	l.base = tp_chan_init_psn(p.ch[0]);
	PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
	tp_chan_stats(p.ch[0], &st);
	assert_int_equal(l.tx[10], 3);
	assert_int_equal(st.rto_fired, 0);
	assert_int_equal(st.rtx_sack, 1);
	assert_int_equal(st.rtx_mark, 1);
	pair_free(&p);
}

/* The largest receive range (2048) with a window past the largest SACK
 * bitmap (1024 bits): nothing inferred beyond what a bitmap covers. */
static void sr_large_range(void **state)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct psn_log l;
	struct tp_stats st;

	(void)state;
	chan_cfg(c, TP_MODE_RTP_SR);
	for (int i = 0; i < 2; i++) {
		c[i].ooo_range = 2048;
		c[i].window = 2000;
		c[i].mtu = 128;
		c[i].rto_static_ns = 5 * MS;
	}
	c[0].fixed_init_psn = true;
	c[0].init_psn = TP_PSN_MASK - 1000;
	pair_link_cfg(&s, 16);
	for (int i = 0; i < 2; i++)
		s.dir[i].delay_ns = 200 * US;	/* BDP above the window */
	log_attach(&s, &l, &c[0]);
	l.loss = 0.01;
	l.rng = 16;
	assert_int_equal(pair_init(&p, c, &s, 80, 8000, 16), 0);
	p.window_ops = 80;
	PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
	/* Every resend answered a real loss of that PSN (as in the small range). */
	for (uint32_t i = 0; i < 4096; i++)
		assert_int_equal(l.tx[i], l.tx[i] ? 1 + l.drops[i] : 0);
	tp_chan_stats(p.ch[0], &st);
	assert_true(st.rtx_sack > 0);
	pair_free(&p);
}

/* SR: everything the sender still holds was selectively acknowledged, and
 * the TPACKs that would have moved it on are lost. The RTO must still resend
 * something (the oldest), or the peer never answers again and the channel
 * dies of retries. (Found by a seed sweep.) */
static void sr_all_sacked_tpack_lost(void **state)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct psn_log l;
	struct tp_stats st;

	(void)state;
	chan_cfg(c, TP_MODE_RTP_SR);
	c[0].fixed_init_psn = true;
	c[0].init_psn = TP_PSN_MASK - 1;
	c[0].retry_limit = 3;
	pair_link_cfg(&s, 14);
	log_attach(&s, &l, &c[0]);
	l.drop_psn = 0;			/* the first packet once: +1..+5 wait, SACKed */
	l.drop_times = 1;
	l.drop_ack_off = 5;		/* every ack up to +5 (and its TAACK) lost */
	l.drop_ack_until = 150 * US;
	assert_int_equal(pair_init(&p, c, &s, 2, 3 * 256, 14), 0);
	p.len[0] = p.len[1] = 3 * 256;	/* two messages of three packets */
	free(p.data);
	p.data = calloc(1, 6 * 256);
	p.off[1] = 3 * 256;
	PAIR_CHECK(&p, pair_run(&p, 100 * MS));
	tp_chan_stats(p.ch[0], &st);
	assert_true(st.rtx_sack >= 1);
	assert_true(st.rtx_rto >= 1);
	pair_free(&p);
}

/* GBN with fast retransmission: one loss, one NAK, one go-back (no second
 * go-back from a repeated NAK), no RTO. */
static void gbn_fast_single_goback(void **state)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct psn_log l;
	struct tp_stats st, rs;

	(void)state;
	chan_cfg(c, TP_MODE_RTP_GBN_FAST);
	pair_link_cfg(&s, 4);
	for (int i = 0; i < 2; i++)
		s.dir[i].rate_bps = 1000000000ull;
	log_attach(&s, &l, &c[0]);
	l.drop_psn = 10;
	l.drop_times = 1;
	assert_int_equal(pair_init(&p, c, &s, 60, 1500, 4), 0);
	l.base = tp_chan_init_psn(p.ch[0]);
	PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
	tp_chan_stats(p.ch[0], &st);
	tp_chan_stats(p.ch[1], &rs);
	assert_int_equal(rs.tx_nak, 1);
	assert_int_equal(st.rx_nak, 1);
	assert_int_equal(st.rto_fired, 0);
	assert_true(st.rtx_nak >= 1);
	/* Go-back resends each PSN from the NAKed one at most once. */
	for (uint32_t i = 0; i < 4096; i++)
		assert_true(l.tx[i] <= 2);
	assert_int_equal(l.tx[10], 2);
	/* GBN without fast retransmission recovers the same loss by RTO only. */
	pair_free(&p);
	chan_cfg(c, TP_MODE_RTP_GBN);
	pair_link_cfg(&s, 4);
	log_attach(&s, &l, &c[0]);
	l.drop_psn = 10;
	l.drop_times = 1;
	assert_int_equal(pair_init(&p, c, &s, 60, 1500, 4), 0);
	l.base = tp_chan_init_psn(p.ch[0]);
	PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
	tp_chan_stats(p.ch[0], &st);
	tp_chan_stats(p.ch[1], &rs);
	assert_int_equal(rs.tx_nak, 0);
	assert_int_equal(st.rtx_nak, 0);
	assert_true(st.rto_fired >= 1);
	assert_true(rs.rx_gbn_drop > 0);
	pair_free(&p);
}

/* The peer goes silent: after retry_limit RTOs the channel fails, every
 * outstanding operation is flushed, and new posts are refused. The RTO
 * instants are watched from outside, step by step. */
struct rto_watch {
	struct tp_pair *p;
	uint64_t fired_at[16];
	uint32_t n;
};

static bool rto_watch_done(void *ctx)
{
	struct rto_watch *w = ctx;
	struct tp_stats st;

	tp_chan_stats(w->p->ch[0], &st);
	while (w->n < st.rto_fired && w->n < 16)
		w->fired_at[w->n++] = tp_sim_now(w->p->sim);
	return pair_finished(w->p);
}

/*
 * The run the RTO tests watch: an SR channel with a retry limit of 4, RTOs
 * static (200 us) or dynamic from a 30 us floor, doubling, retry_time as
 * given; every data packet lost from 1 ms (until blackout_until, 0: for
 * ever), the RTO instants recorded; 10 s at most.
 */
struct rto_run {
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct psn_log l;
	struct rto_watch w;
};

static void rto_run(struct rto_run *r, bool dyn, uint64_t retry_time_ns, uint64_t blackout_until)
{
	chan_cfg(r->c, TP_MODE_RTP_SR);
	r->c[0].retry_limit = 4;
	r->c[0].retry_time_ns = retry_time_ns;
	if (dyn) {
		r->c[0].rto_mode = TP_RTO_DYNAMIC;
		r->c[0].rto_min_ns = 30 * US;
		r->c[0].rto_n = 1;
	}
	pair_link_cfg(&r->s, 2);
	log_attach(&r->s, &r->l, &r->c[0]);
	r->l.data_blackout_from = 1 * MS;
	r->l.data_blackout_until = blackout_until;
	r->w = (struct rto_watch){ .p = &r->p };
	assert_int_equal(pair_init(&r->p, r->c, &r->s, 3000, 1500, 2), 0);
	pair_start(&r->p);
	pair_refill(&r->p);
	assert_true(tp_sim_run(r->p.sim, 10000 * MS, rto_watch_done, &r->w));
}

static void retry_limit_fails_channel(void **state)
{
	(void)state;
	for (int dyn = 0; dyn < 2; dyn++) {
		struct rto_run r;
		struct tp_pair *p = &r.p;
		struct rto_watch *w = &r.w;
		struct tp_stats st;

		rto_run(&r, dyn, 0, 0);
		assert_int_equal(p->chan_errors, 1);
		assert_int_equal(p->chan_error, TP_ST_RETRY_EXCEEDED);
		assert_true(tp_chan_failed(p->ch[0]));
		pair_poll(p);
		/* What arrived before the blackout completed OK; every other
		 * posted Send was flushed, none left hanging. */
		if (p->errors || !p->received || p->done != p->posted ||
		    p->send_errors != p->posted - p->received || p->send_error != TP_ST_FLUSHED)
			fail_msg("errors %u (%s) received %u posted %u done %u send errors %u (%s)",
				 p->errors, p->err, p->received, p->posted, p->done, p->send_errors,
				 tp_status_name(p->send_error));
		assert_int_equal(tp_post_send(p->ch[0], p->data, 1, 0), -EIO);
		tp_chan_stats(p->ch[0], &st);
		assert_int_equal(st.rto_fired, 5);
		assert_int_equal(w->n, 5);
		for (uint32_t i = 2; i < 5; i++) {
			uint64_t a = w->fired_at[i - 1] - w->fired_at[i - 2];
			uint64_t b = w->fired_at[i] - w->fired_at[i - 1];

			if (dyn)	/* Base x 2^(N x Times): each wait twice the last */
				assert_int_equal(b, 2 * a);
			else
				assert_int_equal(b, 200 * US);
		}
		/* Dynamic: Base followed the ~20 us RTT, below the 200 us static. */
		if (dyn)
			assert_true(w->fired_at[1] - w->fired_at[0] < 200 * US);
		pair_free(p);
	}
}

/*
 * retry_time: a peer stalled for longer than retry_limit RTOs (a receiver
 * descheduled, a link flapping) but back within retry_time keeps the
 * channel, every message delivered; one gone for good fails it, at the
 * first RTO past retry_time after the first of the streak, not sooner.
 * Without retry_time the 2 ms stall fails the channel (4 RTOs: 30 + 60 +
 * 120 + 240 + 480 us dynamic, 5 x 200 us static). Static RTOs past the
 * limit double (otherwise 100 timeouts, each a Go-Back-N window, in 20 ms).
 */
static void retry_time_outlasts_a_stall(void **state)
{
	(void)state;
	for (int run = 0; run < 4; run++) {
		bool back = run & 1, dyn = run & 2;
		struct rto_run r;
		struct tp_pair *p = &r.p;
		struct rto_watch *w = &r.w;
		struct tp_stats st;

		rto_run(&r, dyn, 20 * MS, back ? 3 * MS : 0);
		tp_chan_stats(p->ch[0], &st);
		if (back) {
			if (p->chan_errors || p->errors || p->received != p->posted)
				fail_msg("a 2 ms stall within a retry_time of 20 ms: channel errors %u (%s), "
					 "errors %u, received %u of %u", p->chan_errors,
					 tp_status_name(p->chan_error), p->errors, p->received, p->posted);
			assert_true(st.rto_fired > 5);	/* past retry_limit, kept */
		} else {
			assert_int_equal(p->chan_errors, 1);
			assert_int_equal(p->chan_error, TP_ST_RETRY_EXCEEDED);
			if (w->n < 6 || w->n >= 16)
				fail_msg("%s RTOs: %u fired, 6..15 expected", dyn ? "dynamic" : "static", w->n);
			/* The fatal RTO is the first at or past 20 ms after the
			 * first one; the one before it was short of 20 ms. */
			assert_true(w->fired_at[w->n - 1] - w->fired_at[0] >= 20 * MS);
			assert_true(w->fired_at[w->n - 2] - w->fired_at[0] < 20 * MS);
			if (!dyn)	/* 200 us up to the limit, then doubling */
				assert_int_equal(w->fired_at[5] - w->fired_at[4],
						 2 * (w->fired_at[4] - w->fired_at[3]));
		}
		pair_free(p);
	}
}

/*
 * Pacing holds the resends of a timeout (a deep DCQCN cut), in its simplest
 * deterministic form: no data packet may leave in [from, until) (tp_gate.h).
 * Timeouts that fire meanwhile find the last one's resends still queued
 * (rto_held): they signal no loss, but they count toward the retry limit,
 * so pacing that never lets the resends go fails the channel
 * (held_rto_counts).
 * One message of three packets, each lost on its first send, RTO 200 us,
 * retry limit `limit`. With lost_after_gate, every data packet is lost.
 * Returns whether the run ended on its own (pair_run). */
static bool paced_rto_run(enum tp_mode mode, bool lost_after_gate, uint32_t limit,
			  struct tp_pair *p, const struct tp_cc_ops *ops, void *ctx,
			  struct tp_stats *st)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct psn_log l;
	bool finished;

	chan_cfg(c, mode);
	c[0].fixed_init_psn = true;
	c[0].init_psn = 5000;
	c[0].retry_limit = limit;
	c[0].cc = ops;
	c[0].cc_ctx = ctx;
	pair_link_cfg(&s, 5);
	log_attach(&s, &l, &c[0]);
	l.drop_from = 0;
	l.drop_to = 3;
	if (lost_after_gate)
		l.data_blackout_from = 1;
	assert_int_equal(pair_init(p, c, &s, 1, 3 * 256, 5), 0);
	pair_one_msg(p, 3 * 256);
	finished = pair_run(p, 100 * MS);
	tp_chan_stats(p->ch[0], st);
	return finished;
}

/* paced_rto_run() with limit 3 behind the gate its comment describes: shut
 * from 50 us, before the first RTO (200 us), open again at `until`. */
static bool gated_rto_run(enum tp_mode mode, bool lost_after_gate, uint64_t until,
			  struct tp_pair *p, struct gate *g, struct tp_stats *st)
{
	*g = (struct gate){ .from = 50 * US, .until = until };
	return paced_rto_run(mode, lost_after_gate, 3, p, &gate_ops, g, st);
}

/* The gate opens after the first timeout and a held one: two of the three
 * timeouts the limit allows, and the message arrives. Only the first one
 * told CC of a loss. */
static void paced_rto_held(void **state)
{
	(void)state;
	for (size_t m = 0; m < 3; m++) {
		struct tp_pair p;
		struct gate g;
		struct tp_stats st;

		PAIR_CHECK(&p, gated_rto_run(reliable_modes[m], false, 550 * US, &p, &g, &st));
		assert_int_equal(st.rto_held, 1);
		assert_true(st.rto_fired >= 2 && st.rto_fired <= 3);
		assert_int_equal(g.rto_losses, st.rto_fired - st.rto_held);
		assert_true(st.rtx_rto >= 1);
		pair_free(&p);
	}
}

/* The same gate, every data packet lost: the held timeout counted, the
 * channel fails at the fourth (limit 3), 200 us apart. */
static void paced_rto_lost_still_fails(void **state)
{
	(void)state;
	for (size_t m = 0; m < 3; m++) {
		struct tp_pair p;
		struct gate g;
		struct tp_stats st;

		/* The one message never arrives; its Send is flushed with the channel. */
		PAIR_CHECK_EXPECT(&p, gated_rto_run(reliable_modes[m], true, 550 * US, &p, &g, &st),
				  .received = 0, .send_errors = 1, .send_error = TP_ST_FLUSHED,
				  .chan_errors = 1, .chan_error = TP_ST_RETRY_EXCEEDED);
		assert_int_equal(st.rto_fired, 4);
		assert_int_equal(st.rto_held, 1);
		assert_true(tp_sim_now(p.sim) >= 4 * 200 * US);
		pair_free(&p);
	}
}

/* Pacing that never lets the resends go: every timeout after the first is
 * held, and each counts toward the limit, so the channel fails instead of
 * waiting for ever. */
static void held_rto_counts(void **state)
{
	(void)state;
	for (size_t m = 0; m < 3; m++) {
		struct tp_pair p;
		struct gate g;
		struct tp_stats st;

		PAIR_CHECK_EXPECT(&p, gated_rto_run(reliable_modes[m], false, UINT64_MAX, &p, &g, &st),
				  .received = 0, .send_errors = 1, .send_error = TP_ST_FLUSHED,
				  .chan_errors = 1, .chan_error = TP_ST_RETRY_EXCEEDED);
		/* limit 3: the first timeout and three held ones */
		assert_int_equal(st.rto_fired, 4);
		assert_int_equal(st.rto_held, 3);
		pair_free(&p);
	}
}

/* The real DCQCN held at 1 Mbit/s: a 256-byte packet every 2.56 ms, a dozen
 * 200 us timeouts (held, counted) before each resend leaves, each packet
 * lost on its first send; a limit above a dozen lets it through. */
static void paced_rto_dcqcn(void **state)
{
	(void)state;
	for (size_t m = 0; m < 3; m++) {
		struct tp_cc_config ccc = {
			.algo = TP_CC_DCQCN, .mtu = 256, .line_rate_bps = 1000000,
			.min_rate_bps = 1000000, .burst_bytes = 320,
		};
		struct tp_cc *cc = tp_cc_create(&ccc);
		struct tp_chan_config cfg = { 0 };
		struct tp_pair p;
		struct tp_stats st;

		assert_non_null(cc);
		tp_cc_attach(cc, &cfg);
		PAIR_CHECK(&p, paced_rto_run(reliable_modes[m], false, 20, &p, cfg.cc, cfg.cc_ctx, &st));
		assert_true(st.rto_held >= 20);
		pair_free(&p);
		tp_cc_destroy(cc);
	}
}

/*
 * A full-window tail loss under a window CC: one message of exactly cw
 * bytes (8 packets), each packet lost on its first send, nothing acked. The
 * lost, unSACKed bytes fill the window; the RTO must take them out of
 * flight (UB 2.0 §6: an RTO resets inflight to 0, GBN or SR) and tell the
 * CC, so the resends leave: the message arrives within two RTOs. (SR+LDCP,
 * SR+CAQM and GBN+CAQM used to wait for ever, each timeout held.)
 */
static void full_window_tail_loss(void **state)
{
	static const struct { enum tp_mode mode; enum tp_cc_algo algo; } cases[] = {
		{ TP_MODE_RTP_SR, TP_CC_LDCP }, { TP_MODE_RTP_SR, TP_CC_CAQM },
		{ TP_MODE_RTP_GBN, TP_CC_CAQM }, { TP_MODE_RTP_GBN, TP_CC_LDCP },
		{ TP_MODE_RTP_GBN_FAST, TP_CC_CAQM }, { TP_MODE_RTP_GBN_FAST, TP_CC_LDCP },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct tp_cc_config ccc = { .algo = cases[k].algo, .mtu = 256, .init_cw = 8 * 256 };
		struct tp_cc *cc = tp_cc_create(&ccc);
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;
		struct psn_log l;
		struct tp_stats st;

		assert_non_null(cc);
		chan_cfg(c, cases[k].mode);
		c[0].fixed_init_psn = true;
		c[0].init_psn = 3000;
		tp_cc_attach(cc, &c[0]);
		pair_link_cfg(&s, 17);
		log_attach(&s, &l, &c[0]);
		l.drop_from = 0;
		l.drop_to = 8;
		assert_int_equal(pair_init(&p, c, &s, 1, 8 * 256, 17), 0);
		pair_one_msg(&p, 8 * 256);
		pair_run(&p, 100 * MS);
		tp_chan_stats(p.ch[0], &st);
		if (p.received != 1 || p.done != 1 || p.chan_errors || p.done_ns > 2 * 200 * US)
			fail_msg("%s + %s: received %u done %u chan_errors %u at %llu ns, "
				 "RTOs %llu (held %llu), inflight %llu", tp_mode_name(cases[k].mode),
				 tp_cc_algo_name(cases[k].algo), p.received, p.done, p.chan_errors,
				 (unsigned long long)p.done_ns, (unsigned long long)st.rto_fired,
				 (unsigned long long)st.rto_held,
				 (unsigned long long)tp_chan_inflight_bytes(p.ch[0]));
		assert_int_equal(tp_chan_inflight_bytes(p.ch[0]), 0);
		pair_free(&p);
		tp_cc_destroy(cc);
	}
}

/* ---- transactions ------------------------------------------------------ */

/* ROL: the TPACK of a Send's last packet waits for the transaction layer's
 * answer and then carries the TAACK; the Send completes only then. */
static void rol_delayed_tpack(void **state)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct psn_log l;
	struct tp_stats st;

	(void)state;
	chan_cfg(c, TP_MODE_RTP_SR);
	c[0].ta_mode = TP_TA_ROL;
	c[0].rto_static_ns = 100 * US;
	c[1].manual_taack = true;
	pair_link_cfg(&s, 8);
	log_attach(&s, &l, &c[0]);
	assert_int_equal(pair_init(&p, c, &s, 1, 3 * 256, 8), 0);
	pair_one_msg(&p, 3 * 256);
	l.base = tp_chan_init_psn(p.ch[0]);
	assert_false(pair_run(&p, 500 * US));
	assert_int_equal(p.received, 1);
	assert_int_equal(p.done, 0);
	/* Acked up to the packet before the last, no further, no TAACK. */
	assert_true(l.any_ack);
	assert_int_equal(l.max_ack_off, 1);
	assert_int_equal(l.taack_acks, 0);
	assert_int_equal(tp_recv_answer(p.ch[1], p.last_tassn, TP_ST_OK), 0);
	assert_int_equal(tp_recv_answer(p.ch[1], p.last_tassn, TP_ST_OK), -ENOENT);
	PAIR_CHECK(&p, tp_sim_run(p.sim, 100 * MS, pair_finished, &p));
	assert_int_equal(l.max_ack_off, 2);
	assert_true(l.taack_acks >= 1);
	tp_chan_stats(p.ch[1], &st);
	assert_true(st.tx_taack >= 1);
	tp_chan_stats(p.ch[0], &st);
	assert_true(st.rto_fired >= 1);	/* the probes while the answer waited */
	assert_int_equal(st.ta_proto_err, 0);
	pair_free(&p);
}

/* ROL: the TPACK carrying the first Send's answer is lost (every ack of
 * its last PSN is), the later Sends are answered: that answer shows the
 * first one's lost, and its last packet goes again at once (the target
 * repeats the answer), long before the 50 ms RTO. */
static void rol_lost_answer_no_rto(void **state)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct psn_log l;
	struct tp_stats st;

	(void)state;
	sr_logged(c, &s, &l, 31, 700);
	c[0].rto_static_ns = 50 * MS;
	l.drop_ack_off = 2;		/* the first Send's last packet: PSN +2 */
	l.drop_ack_until = 1000 * MS;
	assert_int_equal(pair_init(&p, c, &s, 3, 3 * 256, 31), 0);
	pair_fixed_len(&p);
	PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
	tp_chan_stats(p.ch[0], &st);
	assert_int_equal(st.rto_fired, 0);
	assert_int_equal(st.rtx_answer, 1);
	assert_int_equal(st.ta_proto_err, 0);
	assert_int_equal(l.tx[2], 2);
	assert_true(p.done_ns < 1 * MS);
	pair_free(&p);
}

/*
 * A D-SACK proves a port reorders only if its duplicate is the path rule's
 * resend. Two ports (entropy: PSN offset mod 2); the first Send's last
 * packet (PSN +2) is lost, found lost on its port once +4 arrives and
 * resent by the path rule (it was lost: no D-SACK of that). Its TPACK, which
 * carries the answer, is lost too: the later Sends' answers make the ROL
 * probe send it once more, and that duplicate is D-SACKed. Counted as a
 * proof (path_dsack) when "resent once by the path rule" was noted at
 * delivery (an 8-entry ring did) rather than cleared by the probe.
 */
struct path_probe {
	struct psn_log l;
	struct tp_pair *p;
};

static bool path_probe_filter(void *ctx, const struct tp_sim_pkt *pk, uint64_t now)
{
	struct path_probe *x = ctx;

	if (pk->from == 0 && pk->info.data)
		tp_chan_tx_entropy(x->p->ch[0], pk->info.psn,
				   ((pk->info.psn - x->l.base) & TP_PSN_MASK) % 2);
	return log_filter(&x->l, pk, now);
}

static void path_proof_not_from_answer_probe(void **state)
{
	struct tp_chan_config c[2];
	struct path_probe x;
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct tp_stats st;

	(void)state;
	sr_logged(c, &s, &x.l, 31, 700);
	for (int i = 0; i < 2; i++)
		c[i].rack = c[i].no_fast_rtx = true;
	c[0].entropies = 2;
	c[0].rto_static_ns = 50 * MS;
	x.l.drop_psn = 2;
	x.l.drop_times = 1;
	x.l.drop_ack_off = 2;
	x.l.drop_ack_until = 1000 * MS;
	x.p = &p;
	s.filter = path_probe_filter;
	s.filter_ctx = &x;
	assert_int_equal(pair_init(&p, c, &s, 3, 3 * 256, 31), 0);
	pair_fixed_len(&p);
	PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
	tp_sim_run(p.sim, tp_sim_now(p.sim) + 1 * MS, NULL, NULL);	/* the D-SACK comes after */
	tp_chan_stats(p.ch[0], &st);
	print_message("# path resends %llu, answer probes %llu, D-SACKs %llu (of path resends %llu), "
		      "sends of +2: %u\n", (unsigned long long)st.rtx_path,
		      (unsigned long long)st.rtx_answer, (unsigned long long)st.rtx_spurious,
		      (unsigned long long)st.path_dsack, x.l.tx[2]);
	assert_int_equal(st.rtx_path, 1);
	assert_int_equal(st.rtx_answer, 1);
	assert_int_equal(x.l.tx[2], 3);
	assert_int_equal(st.rtx_spurious, 1);		/* the probe's duplicate */
	assert_int_equal(st.path_dsack, 0);
	assert_int_equal(st.rto_fired, 0);
	pair_free(&p);
}

/* ROI: the TAACK travels in its own reliable packet, acknowledged in turn. */
static void roi_taack_packet(void **state)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct tp_stats a, b;

	(void)state;
	chan_cfg(c, TP_MODE_RTP_SR);
	c[0].ta_mode = TP_TA_ROI;
	pair_link_cfg(&s, 6);
	for (int i = 0; i < 2; i++) {
		s.dir[i].loss_data = 0.05;
		s.dir[i].loss_resp = 0.05;
	}
	s.frames = true;
	assert_int_equal(pair_init(&p, c, &s, 30, 1000, 6), 0);
	PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
	tp_chan_stats(p.ch[0], &a);
	tp_chan_stats(p.ch[1], &b);
	assert_int_equal(b.tx_taack, 30);
	assert_true(b.tx_data >= 30);		/* one data packet per TAACK */
	assert_true(a.rx_inorder + a.rx_ooo >= 30);
	assert_true(a.tx_ack > 0);		/* ...acknowledged by the initiator */
	pair_free(&p);
}

/* RNR: Sends meet no receive buffer, are answered RNR, wait and are retried
 * (in order) until buffers appear; in both ROL and ROI. */
static void rnr_answered_and_retried(void **state)
{
	(void)state;
	for (int roi = 0; roi < 2; roi++) {
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;
		struct tp_stats a, b;

		chan_cfg(c, TP_MODE_RTP_SR);
		c[0].ta_mode = roi ? TP_TA_ROI : TP_TA_ROL;
		c[0].rnr_delay_ns = 60 * US;
		pair_link_cfg(&s, 10);
		assert_int_equal(pair_init(&p, c, &s, 5, 700, 10), 0);
		p.no_recv = true;
		assert_false(pair_run(&p, 150 * US));
		assert_int_equal(p.received, 0);
		tp_chan_stats(p.ch[1], &b);
		assert_true(b.ta_rnr >= 5);
		tp_chan_stats(p.ch[0], &a);
		assert_true(a.ta_retry_rnr >= 1);
		for (uint32_t i = 0; i < PAIR_NBUF; i++)
			assert_int_equal(pair_post_recv(&p, i), 0);
		PAIR_CHECK(&p, tp_sim_run(p.sim, 100 * MS, pair_finished, &p));
		pair_free(&p);
	}
}

/* RNR while the next Send is half sent (messages of many packets): the
 * half-sent one is finished, refused too, and retried behind the first, so
 * the target never sees a message cut short (it answered such a cut with a
 * protocol error, and the Send failed). */
static void rnr_mid_message(void **state)
{
	(void)state;
	for (int roi = 0; roi < 2; roi++) {
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;
		struct tp_stats a, b;

		chan_cfg(c, TP_MODE_RTP_SR);
		c[0].ta_mode = roi ? TP_TA_ROI : TP_TA_ROL;
		c[0].rnr_delay_ns = 60 * US;
		pair_link_cfg(&s, 12);
		assert_int_equal(pair_init(&p, c, &s, 8, 16384, 12), 0);
		p.no_recv = true;
		assert_false(pair_run(&p, 150 * US));
		tp_chan_stats(p.ch[1], &b);
		assert_true(b.ta_rnr >= 1);
		assert_int_equal(b.ta_proto_err, 0);
		for (uint32_t i = 0; i < PAIR_NBUF; i++)
			assert_int_equal(pair_post_recv(&p, i), 0);
		PAIR_CHECK(&p, tp_sim_run(p.sim, 100 * MS, pair_finished, &p));
		tp_chan_stats(p.ch[0], &a);
		assert_true(a.ta_retry_rnr >= 1);
		tp_chan_stats(p.ch[1], &b);
		assert_int_equal(b.ta_proto_err, 0);
		pair_free(&p);
	}
}

/* Receive buffers taken back (tp_recv_take_back) are not used: the last
 * posted come back first, the others still take the messages, in order. */
static void recv_take_back(void **state)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	uint64_t ids[8];

	(void)state;
	chan_cfg(c, TP_MODE_RTP_SR);
	pair_link_cfg(&s, 13);
	assert_int_equal(pair_init(&p, c, &s, 2, 500, 13), 0);
	p.no_recv = true;
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(pair_post_recv(&p, i), 0);
	assert_int_equal(tp_recv_take_back(p.ch[1], ids, 2), 2);
	assert_int_equal(ids[0], 3);
	assert_int_equal(ids[1], 2);
	PAIR_CHECK(&p, pair_run(&p, 100 * MS));	/* into buffers 0 and 1 */
	/* Those two were reposted (2, 3 gone): exactly two are left. */
	assert_int_equal(tp_recv_take_back(p.ch[1], ids, 8), 2);
	assert_int_equal(tp_recv_take_back(p.ch[1], ids, 8), 0);
	pair_free(&p);
}

/* RNR retries run out: the Send completes with TP_ST_RNR. The target's RNR
 * RSPINFO (wait 2^n us) stretches the initiator's wait between retries. */
static void rnr_retries_exhausted(void **state)
{
	uint64_t took[2];

	(void)state;
	for (int code = 0; code < 2; code++) {
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;
		struct tp_stats a;

		chan_cfg(c, TP_MODE_RTP_SR);
		c[0].rnr_retry = 2;
		c[0].rnr_delay_ns = 30 * US;
		c[1].rnr_wait_code = code ? 8 : 0;	/* 256 us */
		pair_link_cfg(&s, 11);
		assert_int_equal(pair_init(&p, c, &s, 1, 100, 11), 0);
		p.no_recv = true;
		/* Refused, never delivered: the one Send fails, the channel lives. */
		PAIR_CHECK_EXPECT(&p, pair_run(&p, 100 * MS),
				  .received = 0, .send_errors = 1, .send_error = TP_ST_RNR);
		tp_chan_stats(p.ch[0], &a);
		assert_int_equal(a.ta_retry_rnr, 2);
		took[code] = tp_sim_now(p.sim);
		pair_free(&p);
	}
	assert_true(took[0] < 2 * 256 * US);
	assert_true(took[1] >= 2 * 256 * US);
}

/* A Send longer than the posted buffer: completer error at both ends, the
 * buffer comes back with the error, and the channel goes on. */
static void send_too_long(void **state)
{
	static uint8_t big[3000];
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct tp_event ev;
	int got_recv = 0, got_done = 0;

	(void)state;
	chan_cfg(c, TP_MODE_RTP_SR);
	pair_link_cfg(&s, 15);
	assert_int_equal(pair_init(&p, c, &s, 0, 1000, 15), 0);
	assert_int_equal(tp_post_recv(p.ch[1], p.rbuf[0], 1000, 0), 0);
	assert_int_equal(tp_post_recv(p.ch[1], p.rbuf[1], 1000, 1), 0);
	assert_int_equal(tp_post_send(p.ch[0], big, sizeof(big), 7), 0);
	assert_int_equal(tp_post_send(p.ch[0], big, 500, 8), 0);
	assert_int_equal(tp_chan_outstanding(p.ch[0]), 2);
	tp_sim_run(p.sim, 10 * MS, NULL, NULL);
	assert_int_equal(tp_chan_outstanding(p.ch[0]), 0);
	assert_int_equal(tp_chan_inflight_bytes(p.ch[0]), 0);
	while (tp_ep_poll(p.ep[1], &ev)) {
		assert_int_equal(ev.type, TP_EV_RECV);
		if (ev.wr_id == 0) {
			assert_int_equal(ev.status, TP_ST_COMPLETER_ERR);
			assert_int_equal(ev.rspinfo, TP_RSPINFO_TOO_LONG);
			assert_int_equal(ev.len, 1000);		/* not the 3000 that came */
		} else {
			assert_int_equal(ev.status, TP_ST_OK);
		}
		got_recv++;
	}
	while (tp_ep_poll(p.ep[0], &ev)) {
		assert_int_equal(ev.type, TP_EV_SEND_DONE);
		assert_int_equal(ev.status, ev.wr_id == 7 ? TP_ST_COMPLETER_ERR : TP_ST_OK);
		assert_int_equal(ev.rspinfo, ev.wr_id == 7 ? TP_RSPINFO_TOO_LONG : 0);
		got_done++;
	}
	assert_int_equal(got_recv, 2);
	assert_int_equal(got_done, 2);
	pair_free(&p);
}

/* Collect ep 0's completions until `want` of them. */
struct evc {
	struct tp_pair *p;
	struct tp_event ev[8];
	int n, want;
};

static bool evc_done(void *ctx)
{
	struct evc *e = ctx;
	struct tp_event ev;

	while (tp_ep_poll(e->p->ep[0], &ev))
		if (e->n < 8)
			e->ev[e->n++] = ev;
	while (tp_ep_poll(e->p->ep[1], &ev))
		;
	return e->n >= e->want;
}

static struct tp_event run_op(struct tp_pair *p, uint64_t until)
{
	struct evc e = { .p = p, .want = 1 };

	if (!tp_sim_run(p->sim, tp_sim_now(p->sim) + until, evc_done, &e))
		fail_msg("no completion");
	return e.ev[0];
}

/* Write and Read between registered buffers over a lossy link, and their
 * refusals: bad token, out of range (completer error), not resident (page
 * fault: retried, then reported; or retried until it is resolved). */
static void write_read(void **state)
{
	static uint8_t target[65536], src[20000], dst[20000];

	(void)state;
	for (int roi = 0; roi < 2; roi++) {
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;
		struct tp_event ev;
		struct tp_stats a;
		uint64_t va = (uint64_t)(uintptr_t)target;
		struct tp_rkey tok;

		chan_cfg(c, TP_MODE_RTP_SR);
		c[0].ta_mode = roi ? TP_TA_ROI : TP_TA_ROL;
		c[0].rnr_retry = 3;
		c[0].rnr_delay_ns = 40 * US;
		pair_link_cfg(&s, 12);
		s.frames = true;
		for (int i = 0; i < 2; i++) {
			s.dir[i].loss_data = 0.02;
			s.dir[i].loss_resp = 0.02;
		}
		assert_int_equal(pair_init(&p, c, &s, 0, 64, 12), 0);
		memset(target, 0, sizeof(target));
		for (size_t i = 0; i < sizeof(src); i++)
			src[i] = (uint8_t)(i * 13 + 7 + roi);
		assert_int_equal(tp_mr_reg(p.ep[1], target, sizeof(target), &tok), 0);

		assert_int_equal(tp_post_write(p.ch[0], src, sizeof(src), va + 1000, tok, 1), 0);
		ev = run_op(&p, 100 * MS);
		assert_int_equal(ev.type, TP_EV_WRITE_DONE);
		assert_int_equal(ev.status, TP_ST_OK);
		assert_int_equal(ev.wr_id, 1);
		assert_memory_equal(target + 1000, src, sizeof(src));
		assert_int_equal(target[999], 0);
		assert_int_equal(target[1000 + sizeof(src)], 0);

		memset(dst, 0, sizeof(dst));
		assert_int_equal(tp_post_read(p.ch[0], dst, sizeof(dst), va + 1000, tok, 2), 0);
		ev = run_op(&p, 100 * MS);
		assert_int_equal(ev.type, TP_EV_READ_DONE);
		assert_int_equal(ev.status, TP_ST_OK);
		assert_int_equal(ev.len, sizeof(dst));
		assert_memory_equal(dst, src, sizeof(src));

		assert_int_equal(tp_post_write(p.ch[0], src, 100, va, BAD_ID(tok), 3), 0);
		ev = run_op(&p, 100 * MS);
		assert_int_equal(ev.status, TP_ST_COMPLETER_ERR);
		assert_int_equal(ev.rspinfo, TP_RSPINFO_BAD_TOKEN);
		assert_int_equal(tp_post_write(p.ch[0], src, sizeof(src), va + 60000, tok, 4), 0);
		ev = run_op(&p, 100 * MS);
		assert_int_equal(ev.status, TP_ST_COMPLETER_ERR);
		assert_int_equal(ev.rspinfo, TP_RSPINFO_RANGE);
		assert_int_equal(tp_post_read(p.ch[0], dst, 100, va - 10, tok, 5), 0);
		ev = run_op(&p, 100 * MS);
		assert_int_equal(ev.type, TP_EV_READ_DONE);
		assert_int_equal(ev.status, TP_ST_COMPLETER_ERR);
		assert_int_equal(ev.rspinfo, TP_RSPINFO_RANGE);

		assert_int_equal(tp_mr_set_resident(p.ep[1], tok.token_id, false), 0);
		assert_int_equal(tp_post_write(p.ch[0], src, 100, va, tok, 6), 0);
		ev = run_op(&p, 100 * MS);
		assert_int_equal(ev.status, TP_ST_PAGE_FAULT);
		tp_chan_stats(p.ch[0], &a);
		assert_int_equal(a.ta_retry_pf, 3);

		/* Resolved while the initiator retries: the Write lands. */
		assert_int_equal(tp_post_write(p.ch[0], src + 1, 100, va + 30000, tok, 7), 0);
		tp_sim_run(p.sim, tp_sim_now(p.sim) + 60 * US, NULL, NULL);
		assert_int_equal(tp_mr_set_resident(p.ep[1], tok.token_id, true), 0);
		ev = run_op(&p, 100 * MS);
		assert_int_equal(ev.status, TP_ST_OK);
		assert_int_equal(ev.wr_id, 7);
		assert_memory_equal(target + 30000, src + 1, 100);
		tp_chan_stats(p.ch[0], &a);
		assert_true(a.ta_retry_pf >= 4);
		pair_free(&p);
	}
}

/*
 * UTP: no PSN, no acks, a message is one packet (the UTPH has no PSN to
 * reassemble by: longer is EMSGSIZE), and a Send completes once sent. Over
 * the lossy link ep 0's data packets are lost by a filter, so the test knows
 * which: exactly the messages not lost are delivered, whole and in order;
 * a lost one leaves no trace. Besides the random losses, two messages in a
 * row are always lost, so that case happens in every run.
 */
#define UTP_MSGS	100
#define UTP_LEN		700

struct utp_check {
	struct tp_pair *p;
	uint64_t rng;
	double loss;
	int32_t msg;			/* the message being sent: one packet each */
	bool lost[UTP_MSGS], force[UTP_MSGS], got[UTP_MSGS];
	uint32_t sends_ok, last_idx, bad;
	bool any;
	uint8_t buf[8][1024];
};

static bool utp_filter(void *ctx, const struct tp_sim_pkt *p, uint64_t now)
{
	struct utp_check *u = ctx;

	(void)now;
	if (p->from != 0 || !p->info.data)
		return false;
	if (++u->msg >= UTP_MSGS) {
		u->bad++;
		return false;
	}
	if (!u->force[u->msg] &&
	    (double)(tp_sim_rand(&u->rng) >> 11) / (double)(1ull << 53) >= u->loss)
		return false;
	u->lost[u->msg] = true;
	return true;
}

static bool utp_done(void *ctx)
{
	struct utp_check *u = ctx;
	struct tp_event ev;

	while (tp_ep_poll(u->p->ep[0], &ev))
		if (ev.type == TP_EV_SEND_DONE && ev.status == TP_ST_OK)
			u->sends_ok++;
		else
			u->bad++;
	while (tp_ep_poll(u->p->ep[1], &ev)) {
		const uint8_t *b = u->buf[ev.wr_id];
		uint32_t idx = b[0];

		if (ev.type != TP_EV_RECV || ev.status != TP_ST_OK || ev.len != UTP_LEN ||
		    idx >= UTP_MSGS || u->got[idx])
			u->bad++;
		for (size_t j = 1; j < UTP_LEN; j++)
			if (b[j] != (uint8_t)(idx * 31 + j))
				u->bad++;
		if (u->any && idx <= u->last_idx)
			u->bad++;
		u->any = true;
		u->last_idx = idx;
		if (idx < UTP_MSGS)
			u->got[idx] = true;
		tp_post_recv(u->p->ch[1], u->buf[ev.wr_id], sizeof(u->buf[0]), ev.wr_id);
	}
	return false;
}

static void utp_messages(void **state)
{
	static uint8_t msgs[UTP_MSGS][UTP_LEN];

	(void)state;
	for (int lossy = 0; lossy < 2; lossy++) {
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;
		struct tp_stats b;
		static struct utp_check u;
		uint32_t whole = 0, got = 0;

		memset(&u, 0, sizeof(u));
		u.p = &p;
		u.msg = -1;
		u.rng = 13;
		if (lossy) {
			u.loss = 0.1;
			u.force[10] = u.force[11] = true;
		}
		chan_cfg(c, TP_MODE_UTP);
		c[0].mtu = c[1].mtu = 1024;
		pair_link_cfg(&s, 13);
		s.frames = true;
		s.filter = utp_filter;
		s.filter_ctx = &u;
		assert_int_equal(pair_init(&p, c, &s, 0, 64, 13), 0);
		assert_int_equal(tp_post_send(p.ch[0], msgs[0], 1025, 0), -EMSGSIZE);
		for (uint32_t i = 0; i < 8; i++)
			assert_int_equal(tp_post_recv(p.ch[1], u.buf[i], sizeof(u.buf[0]), i), 0);
		for (uint32_t i = 0; i < UTP_MSGS; i++) {
			for (size_t j = 0; j < UTP_LEN; j++)
				msgs[i][j] = (uint8_t)(i * 31 + j);
			msgs[i][0] = (uint8_t)i;
			assert_int_equal(tp_post_send(p.ch[0], msgs[i], UTP_LEN, i), 0);
			tp_sim_run(p.sim, tp_sim_now(p.sim) + 5 * US, utp_done, &u);
		}
		tp_sim_run(p.sim, tp_sim_now(p.sim) + 1 * MS, utp_done, &u);
		for (uint32_t i = 0; i < UTP_MSGS; i++) {
			if (u.got[i] != !u.lost[i])
				fail_msg("message %u: %s, %s", i, u.lost[i] ? "lost" : "not lost",
					 u.got[i] ? "delivered" : "not delivered");
			whole += !u.lost[i];
			got += u.got[i];
		}
		tp_chan_stats(p.ch[1], &b);
		print_message("# utp %s: %u of %u delivered\n", lossy ? "lossy" : "clean", got, UTP_MSGS);
		assert_int_equal(u.bad, 0);
		assert_int_equal(u.msg, UTP_MSGS - 1);	/* one packet a message */
		assert_int_equal(u.sends_ok, UTP_MSGS);
		assert_int_equal(got, whole);
		assert_int_equal(b.utp_drop, 0);
		assert_int_equal(b.msgs_delivered, whole);
		if (lossy)	/* the forced losses and some random ones */
			assert_true(whole < UTP_MSGS - 2);
		else
			assert_int_equal(whole, UTP_MSGS);
		assert_int_equal(b.tx_ack + b.tx_sack + b.tx_nak, 0);
		pair_free(&p);
	}
}

/* ---- several channels, both directions ------------------------------------ */

#define MC_CH	3
#define MC_MSGS	25
#define MC_LEN	1800

struct mc {
	struct tp_ep *ep[2];
	struct tp_chan *ch[2][MC_CH];
	uint8_t src[2][MC_CH][MC_MSGS][MC_LEN];
	uint8_t rbuf[2][MC_CH][4][MC_LEN];
	uint32_t posted[2][MC_CH], done[2][MC_CH], got[2][MC_CH];
	uint32_t errors;
};

static bool mc_step(void *ctx)
{
	struct mc *m = ctx;
	struct tp_event ev;
	bool all = true;

	for (int e = 0; e < 2; e++) {
		while (tp_ep_poll(m->ep[e], &ev)) {
			int c = (int)(uintptr_t)ev.user;

			if (ev.status != TP_ST_OK)
				m->errors++;
			if (ev.type == TP_EV_SEND_DONE) {
				m->done[e][c]++;
			} else if (ev.type == TP_EV_RECV) {
				/* From the other endpoint's channel c, in order. */
				uint32_t i = m->got[e][c]++;

				if (i >= MC_MSGS || ev.len != MC_LEN ||
				    memcmp(m->rbuf[e][c][ev.wr_id], m->src[1 - e][c][i], MC_LEN))
					m->errors++;
				tp_post_recv(m->ch[e][c], m->rbuf[e][c][ev.wr_id], MC_LEN, ev.wr_id);
			} else {
				m->errors++;
			}
		}
		for (int c = 0; c < MC_CH; c++) {
			while (m->posted[e][c] < MC_MSGS && m->posted[e][c] - m->done[e][c] < 4 &&
			       !tp_post_send(m->ch[e][c], m->src[e][c][m->posted[e][c]], MC_LEN, 0))
				m->posted[e][c]++;
			all = all && m->got[e][c] == MC_MSGS && m->done[e][c] == MC_MSGS;
		}
	}
	return m->errors || all;
}

/* Three channels between two endpoints, Sends both ways on each at once,
 * over a lossy, reordering link: every message reaches the right channel,
 * in order, whole. */
static void channels_both_ways(void **state)
{
	static struct mc m;
	struct tp_sim_cfg s;
	struct tp_sim *sim;
	uint64_t rng = 99;

	(void)state;
	for (int mode = 0; mode < 3; mode++) {
		memset(&m, 0, sizeof(m));
		for (int e = 0; e < 2; e++) {
			struct tp_ep_config ec = { .seed = 10 + (uint64_t)e };

			m.ep[e] = tp_ep_create(&ec);
			assert_non_null(m.ep[e]);
			for (int c = 0; c < MC_CH; c++) {
				struct tp_chan_config cc = {
					.mode = reliable_modes[mode], .mtu = 512, .window = 32,
					.rto_static_ns = 200 * US, .user = (void *)(uintptr_t)c,
					.fixed_init_psn = c == 1, .init_psn = TP_PSN_MASK - 3,
				};

				m.ch[e][c] = tp_chan_create(m.ep[e], &cc);
				assert_non_null(m.ch[e][c]);
				for (int i = 0; i < MC_MSGS; i++)
					for (int k = 0; k < MC_LEN; k++)
						m.src[e][c][i][k] = (uint8_t)tp_sim_rand(&rng);
				for (uint64_t b = 0; b < 4; b++)
					assert_int_equal(tp_post_recv(m.ch[e][c], m.rbuf[e][c][b], MC_LEN, b), 0);
			}
		}
		for (int e = 0; e < 2; e++)
			for (int c = 0; c < MC_CH; c++)
				assert_int_equal(tp_chan_connect(m.ch[e][c], tp_chan_tpn(m.ch[1 - e][c]),
								 tp_chan_init_psn(m.ch[1 - e][c])), 0);
		pair_link_cfg(&s, 21);
		s.frames = true;
		for (int i = 0; i < 2; i++) {
			s.dir[i].loss_data = 0.03;
			s.dir[i].loss_resp = 0.03;
			s.dir[i].reorder = 0.05;
			s.dir[i].reorder_ns = 15 * US;
		}
		sim = tp_sim_create(&s, m.ep[0], m.ep[1]);
		assert_true(tp_sim_run(sim, 1000 * MS, mc_step, &m));
		assert_int_equal(m.errors, 0);
		tp_sim_destroy(sim);
		tp_ep_destroy(m.ep[0]);
		tp_ep_destroy(m.ep[1]);
	}
}

/* In-band setup: a hello over UTP, its reply, then RTP traffic between the
 * channels so connected (each side learned the other's random initial PSN). */
static bool hello_done(void *ctx)
{
	uint32_t *got = ctx;
	struct tp_ep **ep = (struct tp_ep **)(got + 2);
	struct tp_event ev;

	for (int i = 0; i < 2; i++)
		while (tp_ep_poll(ep[i], &ev))
			if (ev.status == TP_ST_OK)
				got[ev.type == TP_EV_RECV ? 0 : 1]++;
	return got[0] == 5 && got[1] == 5;
}

static void hello_setup(void **state)
{
	struct {
		uint32_t got[2];
		struct tp_ep *ep[2];
	} h = { { 0, 0 }, { NULL, NULL } };
	struct tp_chan *ch[2];
	struct tp_chan_config cc = { .mode = TP_MODE_RTP_SR, .mtu = 700 };
	struct tp_hello hi;
	struct tp_sim_cfg s;
	struct tp_sim *sim;
	static uint8_t buf[5][1000], rb[5][1000];
	uint8_t pkt[64];
	size_t n;

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct tp_ep_config ec = { .seed = 40 + (uint64_t)i };

		h.ep[i] = tp_ep_create(&ec);
		ch[i] = tp_chan_create(h.ep[i], &cc);
		assert_non_null(ch[i]);
	}
	n = tp_hello_build(ch[0], 0, false, pkt, sizeof(pkt));
	assert_int_equal(n, TP_HELLO_LEN);
	assert_int_equal(tp_hello_build(ch[0], 0, false, pkt, TP_HELLO_LEN - 1), 0);
	assert_int_equal(tp_hello_parse(pkt, n - 1, &hi), -EINVAL);
	assert_int_equal(tp_hello_parse(pkt, n, &hi), 0);
	assert_false(hi.reply);
	assert_int_equal(hi.tpn, tp_chan_tpn(ch[0]));
	assert_int_equal(hi.init_psn, tp_chan_init_psn(ch[0]));
	assert_int_equal(hi.mtu, 700);
	assert_int_equal(hi.mode, TP_MODE_RTP_SR);
	assert_int_equal(hi.dst_tpn, 0);
	/* Not for tp_ep_rx: there it is a packet for no channel. */
	assert_int_equal(tp_ep_rx(h.ep[1], 0, pkt, n, NULL), TP_RX_DROP);
	assert_int_equal(tp_chan_connect(ch[1], hi.tpn, hi.init_psn), 0);
	n = tp_hello_build(ch[1], hi.tpn, true, pkt, sizeof(pkt));
	assert_int_equal(tp_hello_parse(pkt, n, &hi), 0);
	assert_true(hi.reply);
	assert_int_equal(hi.dst_tpn, tp_chan_tpn(ch[0]));
	assert_int_equal(tp_chan_connect(ch[0], hi.tpn, hi.init_psn), 0);
	assert_null(hi.app);
	/* Application bytes after the 16: given back as they went. */
	n = tp_hello_build_app(ch[1], hi.tpn, true, "run=7", 5, pkt, sizeof(pkt));
	assert_int_equal(n, TP_HELLO_LEN + 5);
	assert_int_equal(tp_hello_build_app(ch[1], 0, false, pkt, TP_HELLO_APP_MAX + 1, buf[0],
					    sizeof(buf[0])), 0);
	assert_int_equal(tp_hello_parse(pkt, n, &hi), 0);
	assert_int_equal(hi.app_len, 5);
	assert_memory_equal(hi.app, "run=7", 5);
	pkt[24] = 'X';
	assert_int_equal(tp_hello_parse(pkt, n, &hi), -EINVAL);
	/* Data packets are no hellos. */
	{
		struct tp_tx_info info;
		uint8_t d[2000];

		assert_int_equal(tp_post_send(ch[0], buf[0], 10, 0), 0);
		n = tp_ep_tx(h.ep[0], 0, d, sizeof(d), &info);
		assert_true(n > 0);
		assert_int_equal(tp_hello_parse(d, n, &hi), -EINVAL);
		/* Taken by the transport; no buffer yet: answered RNR, retried later. */
		assert_int_equal(tp_ep_rx(h.ep[1], 0, d, n, NULL), TP_RX_OK);
	}
	pair_link_cfg(&s, 41);
	s.dir[0].loss_data = 0.05;
	for (int i = 0; i < 5; i++)
		assert_int_equal(tp_post_recv(ch[1], rb[i], sizeof(rb[i]), (uint64_t)i), 0);
	for (int i = 1; i < 5; i++)
		assert_int_equal(tp_post_send(ch[0], buf[i], sizeof(buf[i]), (uint64_t)i), 0);
	sim = tp_sim_create(&s, h.ep[0], h.ep[1]);
	assert_true(tp_sim_run(sim, 100 * MS, hello_done, &h));
	tp_sim_destroy(sim);
	tp_ep_destroy(h.ep[0]);
	tp_ep_destroy(h.ep[1]);
}

/* The same seed gives the same run, packet for packet; another seed does not. */
static void deterministic(void **state)
{
	struct tp_sim_stats r[3];
	struct tp_stats st[3];

	(void)state;
	for (int k = 0; k < 3; k++) {
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;

		chan_cfg(c, TP_MODE_RTP_SR);
		pair_link_cfg(&s, k == 2 ? 8 : 7);
		for (int i = 0; i < 2; i++) {
			s.dir[i].loss_data = 0.05;
			s.dir[i].dup = 0.05;
			s.dir[i].reorder = 0.1;
			s.dir[i].reorder_ns = 20 * US;
		}
		assert_int_equal(pair_init(&p, c, &s, 40, 2000, 7), 0);
		PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
		r[k] = *tp_sim_stats(p.sim);
		tp_chan_stats(p.ch[0], &st[k]);
		pair_free(&p);
	}
	assert_memory_equal(&r[0], &r[1], sizeof(r[0]));
	assert_memory_equal(&st[0], &st[1], sizeof(st[0]));
	assert_memory_not_equal(&r[0], &r[2], sizeof(r[0]));
}

/* Per-packet load balancing reorders without loss: with TPSACKs held back
 * until sack_after packets wait out of order, nothing is resent; answering
 * every out-of-order packet at once resends some for nothing. */
static void sack_after_reordering(void **state)
{
	uint64_t rtx[2];

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;
		struct tp_stats st;

		chan_cfg(c, TP_MODE_RTP_SR);
		c[1].sack_after = k ? 48 : 0;
		pair_link_cfg(&s, 30);
		s.dir[0].reorder = 0.5;		/* half the packets take the longer path */
		s.dir[0].reorder_ns = 4 * US;
		assert_int_equal(pair_init(&p, c, &s, 60, 3000, 30), 0);
		PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
		tp_chan_stats(p.ch[0], &st);
		rtx[k] = st.rtx_rto + st.rtx_sack + st.rtx_mark;
		pair_free(&p);
	}
	assert_true(rtx[0] > 0);
	assert_int_equal(rtx[1], 0);
}

/*
 * RACK's D-SACK ([chosen] SAETPH Dup, docs/WIRE.md 3.6): a receiver that
 * gets a data packet twice says so in its next response, a TPSACK; the
 * sender counts each (rtx_spurious) and reads it as reordering. The link
 * duplicates a fifth of the data: every report stands for a duplicate.
 */
static void rack_dsack_reported(void **state)
{
	struct ub_saetph_fields f = { .size_code = 1, .max_rcv_psn = 0x123456, .dup = true }, g;
	uint8_t raw[4 + 16];
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct tp_stats snd, rcv;

	(void)state;
	assert_int_equal(ub_saetph_encode(raw, &f), sizeof(raw));
	assert_int_equal(raw[0], 0x81);
	assert_int_equal(ub_saetph_decode(raw, sizeof(raw), &g), sizeof(raw));
	assert_true(g.dup);
	assert_int_equal(g.size_code, 1);
	f.dup = false;
	ub_saetph_encode(raw, &f);
	assert_int_equal(raw[0], 0x01);

	chan_cfg(c, TP_MODE_RTP_SR);
	c[0].rack = c[1].rack = true;
	pair_link_cfg(&s, 41);
	s.dir[0].dup = 0.2;
	assert_int_equal(pair_init(&p, c, &s, 60, 3000, 41), 0);
	PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
	tp_chan_stats(p.ch[0], &snd);
	tp_chan_stats(p.ch[1], &rcv);
	print_message("# duplicates received %llu, D-SACKs counted %llu\n",
		      (unsigned long long)rcv.rx_dup, (unsigned long long)snd.rtx_spurious);
	assert_true(rcv.rx_dup > 20);
	assert_true(snd.rtx_spurious > 0);
	assert_true(snd.rtx_spurious <= rcv.rx_dup);
	assert_int_equal(snd.rto_fired, 0);
	pair_free(&p);
}

/*
 * A stall (everything held 3 ms, then delivered in order) outlasts the
 * probe and the RTO: on a RACK channel the D-SACK of the RTO's resend of
 * the oldest packet names it, and the RTO counts as undone (delay alone),
 * once for the episode. A real tail loss instead (the last packet of a
 * message lost twice: its send and the probe): the RTO that recovers it is
 * not undone.
 */
static void rack_rto_undone(void **state)
{
	for (int lossy = 0; lossy < 2; lossy++) {
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;
		struct psn_log l;
		struct tp_stats st;

		(void)state;
		chan_cfg(c, TP_MODE_RTP_SR);
		for (int i = 0; i < 2; i++) {
			c[i].rto_mode = TP_RTO_DYNAMIC;
			c[i].rto_min_ns = 10 * US;
			c[i].rack = c[i].no_fast_rtx = true;
		}
		c[0].fixed_init_psn = true;
		c[0].init_psn = 5000;
		pair_link_cfg(&s, 21);
		if (!lossy) {
			s.dir[0].stall_at_ns = 50 * US;
			s.dir[0].stall_ns = 3 * MS;
		}
		log_attach(&s, &l, &c[0]);
		if (lossy) {
			l.drop_psn = 15;
			l.drop_times = 2;
		}
		assert_int_equal(pair_init(&p, c, &s, lossy ? 1 : 40, 16 * 256, 21), 0);
		if (lossy)
			pair_one_msg(&p, 16 * 256);
		PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
		tp_chan_stats(p.ch[0], &st);
		print_message("# %s: rto fired %llu, undone %llu, tlp %llu, D-SACKs %llu\n",
			      lossy ? "tail loss" : "stall", (unsigned long long)st.rto_fired,
			      (unsigned long long)st.rto_undone, (unsigned long long)st.rtx_tlp,
			      (unsigned long long)st.rtx_spurious);
		assert_true(st.rto_fired >= 1);		/* the stall outlasted probe and RTO */
		assert_true(st.rtx_tlp >= 1);		/* the probe came first */
		if (lossy)
			assert_int_equal(st.rto_undone, 0);
		else
			assert_int_equal(st.rto_undone, 1);	/* one episode */
		pair_free(&p);
	}
}

/*
 * RACK on a per-flow SR channel (what ubperf runs): 1 % loss each way over
 * one path, 64 KiB messages, window 256. The notes' rule (a hole below
 * MaxRcvPSN resent at once, MarkPSN for a lost resend) leaves lost resends
 * of the tail and lost answers to the RTO; with RACK beside it (time finds a
 * lost resend, the probe a tail) no RTO fires, fewer packets go twice and it
 * is done no later. And the receiver: the notes' answers every packet held
 * out of order with a TPSACK at once; RACK's are coalesced as TPACKs are
 * (a fraction of the responses, each a bitmap the sender walks).
 */
static void rack_per_flow_loss(void **state)
{
	struct tp_stats st[2];
	uint64_t done[2], dup[2], sacks[2], ooo[2];

	(void)state;
	for (int rk = 0; rk < 2; rk++) {
		struct tp_chan_config c[2];
		struct tp_sim_cfg s;
		struct tp_pair p;
		struct tp_stats rs;

		chan_cfg(c, TP_MODE_RTP_SR);
		for (int i = 0; i < 2; i++) {
			c[i].rack = rk;
			c[i].window = c[i].ooo_range = 256;
			c[i].mtu = 1024;
			c[i].rto_mode = TP_RTO_DYNAMIC;
		}
		pair_link_cfg(&s, 5);
		for (int i = 0; i < 2; i++) {
			s.dir[i].loss_data = s.dir[i].loss_resp = 0.01;
			s.dir[i].delay_ns = 200 * US;
			s.dir[i].rate_bps = 2000000000ull;
		}
		assert_int_equal(pair_init(&p, c, &s, 1000, 65536, 5), 0);
		pair_fixed_len(&p);
		p.window_ops = 8;
		PAIR_CHECK(&p, pair_run(&p, 100000 * MS));
		tp_chan_stats(p.ch[0], &st[rk]);
		tp_chan_stats(p.ch[1], &rs);
		done[rk] = p.done_ns;
		dup[rk] = rs.rx_dup;
		sacks[rk] = rs.tx_sack;
		ooo[rk] = rs.rx_ooo;
		print_message("# %s: done at %.1f ms, RTOs %llu, resent: sack %llu mark %llu rto %llu rack %llu "
			      "tlp %llu; duplicates received %llu, held out of order %llu, TPSACKs %llu\n",
			      rk ? "rack" : "notes",
			      (double)p.done_ns / 1e6, (unsigned long long)st[rk].rto_fired,
			      (unsigned long long)st[rk].rtx_sack, (unsigned long long)st[rk].rtx_mark,
			      (unsigned long long)st[rk].rtx_rto, (unsigned long long)st[rk].rtx_rack,
			      (unsigned long long)st[rk].rtx_tlp, (unsigned long long)rs.rx_dup,
			      (unsigned long long)rs.rx_ooo, (unsigned long long)rs.tx_sack);
		pair_free(&p);
	}
	assert_true(st[0].rto_fired > 20);		/* the control */
	assert_int_equal(st[1].rto_fired, 0);
	assert_true(dup[1] < dup[0]);
	assert_true(done[1] <= done[0]);
	assert_true(sacks[0] >= ooo[0] * 9 / 10);
	assert_true(sacks[1] * 3 <= sacks[0] * 2);	/* here the 5 us ack delay ends most waits */
}

/*
 * The windowed min_RTT (10 s): one message at a time over 1 ms each way,
 * then at 1 s the route changes to 2 ms each way for good. The old minimum
 * holds for the window (a queue that stood for less would not raise it),
 * then the new one takes over, and with it the reordering window's floor
 * (min_RTT/4: 1 ms; 0.5 ms with the least ever, what the branch before
 * windowing left). The least ever (min_rtt_ns, for "sooner than any round
 * trip") stays 2 ms.
 */
struct route_change {
	struct tp_pair *p;
	uint64_t at, min_before, min_within;
	bool changed, looked;
};

static bool route_step(void *ctx)
{
	struct route_change *r = ctx;
	uint64_t now = tp_sim_now(r->p->sim);
	struct tp_stats st;

	tp_chan_stats(r->p->ch[0], &st);
	if (!r->changed && now >= r->at) {
		r->min_before = st.min_rtt_win_ns;
		tp_sim_set_delay(r->p->sim, 0, 2 * MS);
		tp_sim_set_delay(r->p->sim, 1, 2 * MS);
		r->changed = true;
	} else if (r->changed && !r->looked && now >= r->at + 9000 * MS) {
		r->min_within = st.min_rtt_win_ns;
		r->looked = true;
	}
	return pair_finished(r->p);
}

static void min_rtt_follows_route_change(void **state)
{
	struct route_change r = { .at = 1000 * MS };
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct tp_stats st;

	(void)state;
	chan_cfg(c, TP_MODE_RTP_SR);
	for (int i = 0; i < 2; i++) {
		c[i].rack = true;
		c[i].rto_mode = TP_RTO_DYNAMIC;
	}
	pair_link_cfg(&s, 31);
	for (int i = 0; i < 2; i++)
		s.dir[i].delay_ns = 1 * MS;
	assert_int_equal(pair_init(&p, c, &s, 3300, 200, 31), 0);
	p.window_ops = 1;
	r.p = &p;
	pair_start(&p);
	pair_refill(&p);
	PAIR_CHECK(&p, tp_sim_run(p.sim, 60000 * MS, route_step, &r));
	tp_chan_stats(p.ch[0], &st);
	print_message("# min_rtt (10 s) %.2f ms before the change, %.2f ms 9 s after, %.2f ms at %.1f s; "
		      "least ever %.2f ms; reordering window %.2f ms\n",
		      (double)r.min_before / 1e6, (double)r.min_within / 1e6,
		      (double)st.min_rtt_win_ns / 1e6, (double)p.done_ns / 1e9,
		      (double)st.min_rtt_ns / 1e6, (double)st.reo_wnd_ns / 1e6);
	assert_true(r.looked);
	assert_true(p.done_ns > r.at + 10500 * MS);		/* samples past the window */
	assert_in_range(r.min_before, 2 * MS, 2 * MS + 100 * US);
	assert_int_equal(r.min_within, r.min_before);		/* the window holds it */
	assert_in_range(st.min_rtt_win_ns, 4 * MS, 4 * MS + 100 * US);	/* then follows */
	assert_int_equal(st.min_rtt_ns, r.min_before);		/* the least ever stays */
	assert_true(st.reo_wnd_ns >= st.min_rtt_win_ns / 4);	/* the floor follows */
	assert_int_equal(st.rto_fired, 0);
	pair_free(&p);
}

/*
 * A sprayed-style SR channel (RACK, no_fast_rtx) over two ports, 1 ms each
 * way, messages of 8 packets, window_ops of them at a time, started; the
 * filter names each packet's port.
 */
static void ports_pair(struct tp_pair *p, uint32_t window, uint32_t nmsg, uint32_t window_ops,
		       tp_sim_filter_fn filter, void *ctx, uint64_t seed)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;

	chan_cfg(c, TP_MODE_RTP_SR);
	for (int i = 0; i < 2; i++) {
		c[i].rack = c[i].no_fast_rtx = true;
		c[i].rto_mode = TP_RTO_DYNAMIC;
		c[i].window = window;
	}
	c[0].entropies = 2;
	pair_link_cfg(&s, seed);
	for (int i = 0; i < 2; i++)
		s.dir[i].delay_ns = 1 * MS;
	s.filter = filter;
	s.filter_ctx = ctx;
	assert_int_equal(pair_init(p, c, &s, nmsg, 8 * 256, seed), 0);
	pair_fixed_len(p);
	p->window_ops = window_ops;
	pair_start(p);
	pair_refill(p);
}

/*
 * The same route change on a channel over two ports (entropy: PSN mod 2),
 * 8 packets in flight. Once the windowed min_RTT has followed it (4 ms,
 * 11 s), the hosts' queues add up to 0.75 ms to each packet: within the
 * per-path rule's allowance (min_RTT/4: 1 ms), so no packet is found lost
 * on its port, nor counted as proof that its port reorders. With the
 * least RTT ever (2 ms: 0.5 ms) for the allowance, packets held 0.5 to
 * 0.75 ms more than a later one were resent; for the proof, the rule went
 * off.
 */
struct route_paths {
	struct route_change r;
	uint64_t jitter_at, rng;
	bool jitter;
	struct tp_stats at_jitter;
};

static bool route_paths_filter(void *ctx, const struct tp_sim_pkt *pk, uint64_t now)
{
	struct route_paths *x = ctx;

	(void)now;
	if (pk->from != 0 || !pk->info.data)
		return false;
	tp_chan_tx_entropy(x->r.p->ch[0], pk->info.psn, pk->info.psn % 2);
	if (x->jitter)	/* the delay this packet takes */
		tp_sim_set_delay(x->r.p->sim, 0, 2 * MS + tp_sim_rand(&x->rng) % (750 * US));
	return false;
}

static bool route_paths_step(void *ctx)
{
	struct route_paths *x = ctx;

	if (!x->jitter && tp_sim_now(x->r.p->sim) >= x->jitter_at) {
		tp_chan_stats(x->r.p->ch[0], &x->at_jitter);
		x->jitter = true;
	}
	return route_step(&x->r);
}

static void paths_follow_route_change(void **state)
{
	struct route_paths x = { .r.at = 1000 * MS, .jitter_at = 11500 * MS, .rng = 37 };
	struct tp_pair p;
	struct tp_stats st;

	(void)state;
	x.r.p = &p;
	ports_pair(&p, 64, 3500, 1, route_paths_filter, &x, 37);
	PAIR_CHECK(&p, tp_sim_run(p.sim, 60000 * MS, route_paths_step, &x));
	tp_chan_stats(p.ch[0], &st);
	print_message("# min_rtt (10 s) %.2f ms, least ever %.2f ms when the jitter began at %.1f s; "
		      "until the end at %.1f s: path resends %llu, rule off %llu times, D-SACKs %llu, "
		      "RACK resends %llu, RTOs %llu\n",
		      (double)x.at_jitter.min_rtt_win_ns / 1e6, (double)x.at_jitter.min_rtt_ns / 1e6,
		      (double)x.jitter_at / 1e9, (double)p.done_ns / 1e9,
		      (unsigned long long)(st.rtx_path - x.at_jitter.rtx_path),
		      (unsigned long long)(st.path_rule_off - x.at_jitter.path_rule_off),
		      (unsigned long long)(st.rtx_spurious - x.at_jitter.rtx_spurious),
		      (unsigned long long)(st.rtx_rack - x.at_jitter.rtx_rack),
		      (unsigned long long)(st.rto_fired - x.at_jitter.rto_fired));
	assert_true(x.jitter);
	assert_true(p.done_ns > x.jitter_at + 1000 * MS);	/* 250 round trips with it */
	assert_in_range(x.at_jitter.min_rtt_win_ns, 4 * MS, 4 * MS + 100 * US);
	assert_true(x.at_jitter.min_rtt_ns < 2 * MS + 100 * US);
	assert_int_equal(st.rtx_path, 0);
	assert_int_equal(st.path_rule_off, 0);
	pair_free(&p);
}

/*
 * Two ports (entropy: PSN mod 2), 1 ms each way, 64 packets in flight in
 * a window of 128 (for a full window see path_rule_off_full_window). For the first
 * 500 ms the hosts' queues hold each packet up to 1.5 ms more (a
 * min_RTT/4 allowance of 0.5 ms): packets later than a later one on their
 * port, proofs that the ports reorder, and the rule goes off. Then the
 * link is FIFO again. The rule comes back after PATH_QUIET (8) epochs in a
 * row without a proof, the epoch that held the last one not counted: 9
 * epoch ends after that proof, 8 to 9 epochs of 4 SRTT after it.
 */
struct guard_watch {
	struct tp_pair *p;
	uint64_t rng, jitter_until;
	uint64_t epoch;			/* the channel's reo_epoch seen last */
	uint32_t epochs;		/* its changes: epoch ends */
	uint8_t proofs;
	bool off, fifo;
	uint32_t offs, ons;
	uint64_t proof_at, on_at, on_srtt;
	uint32_t proof_epoch, on_epoch;
};

static bool guard_filter(void *ctx, const struct tp_sim_pkt *pk, uint64_t now)
{
	struct guard_watch *w = ctx;

	if (pk->from != 0 || !pk->info.data)
		return false;
	tp_chan_tx_entropy(w->p->ch[0], pk->info.psn, pk->info.psn % 2);
	if (now < w->jitter_until) {	/* the delay this packet takes */
		tp_sim_set_delay(w->p->sim, 0, 1 * MS + tp_sim_rand(&w->rng) % (1500 * US));
	} else if (!w->fifo) {
		tp_sim_set_delay(w->p->sim, 0, 1 * MS);
		w->fifo = true;
	}
	return false;
}

static bool guard_step(void *ctx)
{
	struct guard_watch *w = ctx;
	const struct tp_chan *ch = w->p->ch[0];
	uint64_t now = tp_sim_now(w->p->sim);
	bool ended = ch->reo_epoch != w->epoch;

	if (ended) {
		w->epoch = ch->reo_epoch;
		w->epochs++;
	}
	/* a proof counts after the epoch end it made (path_reordered ages first) */
	if (ch->path_proofs > (ended ? 0 : w->proofs)) {
		w->proof_at = now;
		w->proof_epoch = w->epochs;
	}
	w->proofs = ch->path_proofs;
	if (ch->path_off != w->off) {
		w->off = ch->path_off;
		if (w->off) {
			w->offs++;
		} else {
			w->ons++;
			w->on_at = now;
			w->on_epoch = w->epochs;
			w->on_srtt = ch->srtt;
		}
	}
	return pair_finished(w->p);
}

static void path_rule_back_after_quiet_epochs(void **state)
{
	struct guard_watch w = { .rng = 43, .jitter_until = 500 * MS };
	struct tp_pair p;
	struct tp_stats st;
	double epochs;

	(void)state;
	w.p = &p;
	ports_pair(&p, 128, 3000, 8, guard_filter, &w, 43);
	PAIR_CHECK(&p, tp_sim_run(p.sim, 10000 * MS, guard_step, &w));
	tp_chan_stats(p.ch[0], &st);
	epochs = w.on_srtt ? (double)(w.on_at - w.proof_at) / (double)(4 * w.on_srtt) : 0;
	print_message("# path resends %llu (D-SACKed %llu); rule off %u times, on %u; last proof at "
		      "%.1f ms, back on at %.1f ms: %u epoch ends after it, %.2f epochs of 4 SRTT "
		      "(%.2f ms); done at %.1f ms\n",
		      (unsigned long long)st.rtx_path, (unsigned long long)st.path_dsack,
		      w.offs, w.ons, (double)w.proof_at / 1e6, (double)w.on_at / 1e6,
		      w.on_epoch - w.proof_epoch, epochs, (double)w.on_srtt / 1e6,
		      (double)p.done_ns / 1e6);
	assert_int_equal(w.offs, 1);
	assert_int_equal(st.path_rule_off, 1);
	assert_int_equal(w.ons, 1);
	assert_true(w.proof_at > w.jitter_until);	/* the last jittered packets' */
	assert_true(w.on_at > w.proof_at);
	assert_true(p.done_ns > w.on_at);		/* it came back with traffic */
	/* the proof's epoch ends, then 8 quiet ones */
	assert_int_equal(w.on_epoch - w.proof_epoch, 8 + 1);
	assert_true(epochs > 8.0 && epochs < 9.5);
	pair_free(&p);
}

/*
 * The guard with a full window. The same ports kept reordering (up to
 * 1.5 ms more a packet, the whole run), 64 packets in flight in a window
 * of 64: each ack frees a slot the next PSN takes at once, before the
 * D-SACK of that packet's path resend arrives (a round trip after its
 * original's ack); the path mark must outlive the slot. Kept in the slot:
 * 10,923 path resends, 10,914 D-SACKed, 13 of them proofs. Now, as with a
 * window of 128: 29 path resends, each D-SACK a proof, and the rule off.
 */
static void path_rule_off_full_window(void **state)
{
	struct guard_watch w = { .rng = 43, .jitter_until = UINT64_MAX };
	struct tp_pair p;
	struct tp_stats st;

	(void)state;
	w.p = &p;
	ports_pair(&p, 64, 3000, 8, guard_filter, &w, 43);
	PAIR_CHECK(&p, tp_sim_run(p.sim, 10000 * MS, guard_step, &w));
	tp_chan_stats(p.ch[0], &st);
	print_message("# path resends %llu (D-SACKed %llu, as proofs %llu), rule off %llu times\n",
		      (unsigned long long)st.rtx_path, (unsigned long long)st.rtx_spurious,
		      (unsigned long long)st.path_dsack, (unsigned long long)st.path_rule_off);
	assert_true(st.path_rule_off >= 1);
	assert_true(st.rtx_path < 100);
	pair_free(&p);
}

/*
 * A windowed minimum must not serve "sooner than any round trip": after
 * 10 s behind a standing queue (RTT 20 us, then 2 ms from 2 ms on) it is the
 * queued RTT. When the last new packet leaves the queue drains (20 us again)
 * and the first transmissions of the last 8 packets are lost: a sprayed-
 * style SR channel (RACK, no_fast_rtx, SACK every 32). The tail loss probe
 * and the resends it shows are answered in 20 us, sooner than a 2 ms
 * windowed min_RTT: taken for their originals' answers, they moved neither
 * RACK's reference nor the reordering window (stuck at 2.9 ms), and an RTO
 * ended the tail (7.5 ms). With the least RTT ever for those checks, as
 * before windowing: no RTO, 3.9 ms.
 */
struct tailq {
	struct tp_pair *p;
	uint32_t base, total, tail;
	uint64_t drain_ns;	/* one-way delay once the queue drains */
	bool drop_tlp;		/* the tail loss probe is lost too */
	bool no_rack;		/* the channels run without RACK */
	uint32_t dropped;
	bool raised, drained, tlp_dropped;
	uint64_t rto_before, undone_before, min_win_before, drained_at;
};

static bool tailq_filter(void *ctx, const struct tp_sim_pkt *p, uint64_t now)
{
	struct tailq *t = ctx;
	uint32_t off;

	if (p->from != 0 || !p->info.data)
		return false;
	off = (p->info.psn - t->base) & TP_PSN_MASK;
	/* the probe resends the last packet, the first resend of it */
	if (t->drop_tlp && t->drained && !t->tlp_dropped && p->info.rtx && off == t->total - 1) {
		t->tlp_dropped = true;
		return true;
	}
	if (off >= t->total || p->info.rtx || off < t->total - t->tail)
		return false;
	t->dropped++;
	if (off == t->total - 1 && !t->drained) {
		struct tp_stats st;

		tp_chan_stats(t->p->ch[0], &st);
		t->rto_before = st.rto_fired;
		t->undone_before = st.rto_undone;
		t->min_win_before = st.min_rtt_win_ns;
		t->drained_at = now;
		tp_sim_set_delay(t->p->sim, 0, t->drain_ns);
		tp_sim_set_delay(t->p->sim, 1, t->drain_ns);
		t->drained = true;
	}
	return true;
}

static bool tailq_step(void *ctx)
{
	struct tailq *t = ctx;

	if (!t->raised && tp_sim_now(t->p->sim) >= 2 * MS) {
		tp_sim_set_delay(t->p->sim, 0, 1 * MS);
		tp_sim_set_delay(t->p->sim, 1, 1 * MS);
		t->raised = true;
	}
	return pair_finished(t->p);
}

/* 12 s behind the standing queue, then the tail; the sender's stats at the
 * end, and when the last message arrived. */
static uint64_t tailq_run(struct tailq *t, struct tp_stats *st)
{
	const uint64_t run_s = 12, len = 4096;
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	uint64_t done;
	uint32_t nmsg;

	chan_cfg(c, TP_MODE_RTP_SR);
	for (int i = 0; i < 2; i++) {
		c[i].no_fast_rtx = c[i].rack = !t->no_rack;
		c[i].sack_after = 32;
		c[i].rto_mode = TP_RTO_DYNAMIC;
	}
	c[0].fixed_init_psn = true;
	c[0].init_psn = t->base;
	pair_link_cfg(&s, 41);
	/* 64 packets of 256 B a 2 ms round trip: ~8 MB/s */
	nmsg = (uint32_t)(run_s * 8000000 / len);
	t->total = nmsg * (uint32_t)(len / 256);
	t->p = &p;
	s.filter = tailq_filter;
	s.filter_ctx = t;
	assert_int_equal(pair_init(&p, c, &s, nmsg, (uint32_t)len, 41), 0);
	pair_fixed_len(&p);
	pair_start(&p);
	pair_refill(&p);
	PAIR_CHECK(&p, tp_sim_run(p.sim, (run_s + 30) * 1000 * MS, tailq_step, t));
	tp_chan_stats(p.ch[0], st);
	done = p.done_ns;
	print_message("# the last new packet left at %.3f s, min_rtt (10 s) %.1f us, least ever %.1f us; "
		      "the tail took %.3f ms, %llu RTOs (%llu undone), %llu probes; reordering window %.1f us\n",
		      (double)t->drained_at / 1e9, (double)t->min_win_before / 1e3,
		      (double)st->min_rtt_ns / 1e3, (double)(done - t->drained_at) / 1e6,
		      (unsigned long long)(st->rto_fired - t->rto_before),
		      (unsigned long long)(st->rto_undone - t->undone_before),
		      (unsigned long long)st->rtx_tlp, (double)st->reo_wnd_ns / 1e3);
	pair_free(&p);
	assert_true(t->drained);
	assert_true(t->min_win_before >= 2 * MS);	/* the window holds the queue's */
	assert_int_equal(t->dropped, t->tail);
	return done;
}

static void tail_after_standing_queue_no_rto(void **state)
{
	struct tailq t = { .base = 5000, .tail = 8, .drain_ns = 10 * US };
	struct tp_stats st;
	uint64_t done;

	(void)state;
	done = tailq_run(&t, &st);
	assert_int_equal(st.rto_fired, t.rto_before);
	assert_true(done - t.drained_at < 5 * MS);
	/* the resends' answers were no originals': the window follows the
	 * drained link (min_RTT/4 of the queue's, 2.9 ms, when they were) */
	assert_true(st.reo_wnd_ns < 1 * MS);
}

/*
 * An RTO whose resend's own answer comes back fast is not undone. Once
 * F-RTO's undo of every channel ("the oldest packet acked within a min RTT
 * of its resend") with the least RTT ever, not the windowed one; a RACK
 * channel, as here, now takes only a D-SACK or an ack before the resend
 * left (tp_ack.c), and this case keeps that. The same tail after the standing queue, drained to 200 us a round
 * trip (10 times the least RTT ever, a tenth of the 2 ms windowed one), and
 * the tail loss probe lost too: the RTO fires and its resend of the oldest
 * packet is answered in 200 us, that resend's answer, surely (no original
 * of it arrived). With the windowed min_RTT that RTO counted as undone.
 */
static void tail_rto_not_undone_after_standing_queue(void **state)
{
	struct tailq t = { .base = 5000, .tail = 8, .drain_ns = 100 * US, .drop_tlp = true };
	struct tp_stats st;

	(void)state;
	tailq_run(&t, &st);
	assert_true(t.tlp_dropped);
	assert_true(st.rto_fired > t.rto_before);		/* the tail's RTO */
	assert_int_equal(st.rto_undone, t.undone_before);
	assert_true(st.min_rtt_ns < 100 * US);			/* below the resend's RTT */
}

/*
 * Without RACK (GBN, ubperf's non-RACK SR) an RTO is undone also when the
 * oldest packet is acked within a min RTT of its resend: that ack answered
 * the original. The same tail on a non-RACK SR channel, drained to 200 us a
 * round trip: the RTO's resend of the oldest is answered in 200 us, above
 * the least RTT ever (20 us), below the 2 ms windowed one. Not undone; with
 * the windowed min_RTT in that check it was.
 */
static void tail_rto_not_undone_no_rack(void **state)
{
	struct tailq t = { .base = 5000, .tail = 8, .drain_ns = 100 * US, .no_rack = true };
	struct tp_stats st;

	(void)state;
	tailq_run(&t, &st);
	assert_true(st.rto_fired > t.rto_before);		/* the tail's RTO */
	assert_int_equal(st.rto_undone, t.undone_before);
	assert_true(st.min_rtt_ns < 100 * US);			/* below the resend's RTT */
}

/* When the first resend left (the RTO's). */
static bool first_rtx_filter(void *ctx, const struct tp_sim_pkt *p, uint64_t now)
{
	uint64_t *at = ctx;

	if (p->from == 0 && p->info.data && p->info.rtx && !*at)
		*at = now;
	return false;
}

/*
 * Two one-packet messages, one at a time, on a non-RACK SR channel (static
 * RTO 200 us, RTT 20 us): the first sets the min RTT, the second's answers
 * are stalled from 30 us to stall_end. Its stats and when the first resend left.
 */
static void stalled_answer_run(uint64_t stall_end, uint64_t *rtx_at, struct tp_stats *st)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;

	chan_cfg(c, TP_MODE_RTP_SR);
	pair_link_cfg(&s, 23);
	s.dir[1].stall_at_ns = 30 * US;
	s.dir[1].stall_ns = stall_end - 30 * US;
	*rtx_at = 0;
	s.filter = first_rtx_filter;
	s.filter_ctx = rtx_at;
	assert_int_equal(pair_init(&p, c, &s, 2, 256, 23), 0);
	pair_full_len(&p);
	p.window_ops = 1;
	PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
	tp_chan_stats(p.ch[0], st);
	print_message("# stall to %.1f us: resend at %.1f us, min RTT %.1f us, %llu RTOs (%llu undone)\n",
		      (double)stall_end / 1e3, (double)*rtx_at / 1e3, (double)st->min_rtt_ns / 1e3,
		      (unsigned long long)st->rto_fired, (unsigned long long)st->rto_undone);
	pair_free(&p);
}

/*
 * An RTO of delay alone on a non-RACK channel: nothing lost, the answer to
 * the oldest packet held until half a min RTT after the RTO's resend left.
 * That ack is the original's (the resend's could not be back yet): undone.
 * A first run with the answers stalled long finds when the resend leaves.
 */
static void spurious_rto_undone_no_rack(void **state)
{
	uint64_t rtx_at, again;
	struct tp_stats st;

	(void)state;
	stalled_answer_run(1 * MS, &rtx_at, &st);
	assert_true(rtx_at > 30 * US && st.min_rtt_ns > 0);
	stalled_answer_run(rtx_at + st.min_rtt_ns / 2, &again, &st);
	assert_int_equal(again, rtx_at);	/* the resend left before the ack came */
	assert_int_equal(st.rto_fired, 1);
	assert_int_equal(st.rto_undone, 1);
}

/*
 * One 64-packet message on a RACK channel (dynamic RTO), the sender's
 * packets dropped as drops sets l, the answers stalled stall_ns at the
 * start; the sender's stats when it is done.
 */
static void rack_msg_run(uint64_t seed, uint64_t stall_ns, bool sprayed,
			 void (*drops)(struct psn_log *), struct tp_stats *st)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	static struct psn_log l;

	chan_cfg(c, TP_MODE_RTP_SR);
	for (int i = 0; i < 2; i++) {
		c[i].rack = true;
		c[i].no_fast_rtx = sprayed;
		c[i].rto_mode = TP_RTO_DYNAMIC;
	}
	c[0].fixed_init_psn = true;
	c[0].init_psn = 7000;
	pair_link_cfg(&s, seed);
	if (stall_ns) {
		s.dir[1].stall_at_ns = 1;
		s.dir[1].stall_ns = stall_ns;
	}
	log_attach(&s, &l, &c[0]);
	drops(&l);
	assert_int_equal(pair_init(&p, c, &s, 1, 64 * 256, seed), 0);
	pair_one_msg(&p, 64 * 256);
	PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
	tp_chan_stats(p.ch[0], st);
	print_message("# done at %.3f ms: RTOs %llu, probes %llu, RACK resends %llu, RTO resends %llu; "
		      "SRTT %.1f us, min RTT %.1f us\n",
		      (double)p.done_ns / 1e6, (unsigned long long)st->rto_fired,
		      (unsigned long long)st->rtx_tlp, (unsigned long long)st->rtx_rack,
		      (unsigned long long)st->rtx_rto, (double)st->srtt_ns / 1e3,
		      (double)st->min_rtt_ns / 1e3);
	pair_free(&p);
}

static uint32_t tlp_from, tlp_to;
static int tlp_times;

static void tlp_drops(struct psn_log *l)
{
	l->drop_from = tlp_from;
	l->drop_to = tlp_to;
	l->drop_range_times = tlp_times;
}

/* Packets at offsets [from, to) dropped `times` times. */
static void tlp_run(uint64_t seed, uint32_t from, uint32_t to, int times, uint64_t stall_ns,
		    struct tp_stats *st)
{
	tlp_from = from;
	tlp_to = to;
	tlp_times = times;
	rack_msg_run(seed, stall_ns, false, tlp_drops, st);
}

/*
 * A tail probe's answer that does not move una ends no episode. A per-flow
 * RACK channel whose RTTs were all measured behind a queue (here the
 * answers to the first flight held 3 ms) then sees every resend answered
 * sooner than that min RTT, and RACK reads each such answer as the
 * original's: its reference stays put and the first 8 packets, lost twice,
 * are never found lost by time; nor by the TPSACK again (their resends were
 * one round, and MarkPSN, the next new PSN, never comes: the message was
 * all sent). Only a probe or the RTO can resend them. Each probe's TPSACK
 * used to start a new episode (another probe 2 SRTT later, the RTO pushed
 * past it), so the probes walked down the tail one packet each and the RTO
 * never fired (ubperf 4 channels --lb flow behind a 20 ms queue: "peer
 * stopped answering", 18 probes, no RTO). One probe, then the RTO.
 */
static void tlp_sack_no_new_episode(void **state)
{
	struct tp_stats st;

	(void)state;
	/* the first 8: their sends and the TPSACK's resends */
	tlp_run(23, 0, 8, 2, 3 * MS, &st);
	assert_true(st.rto_fired >= 1);
	/* one probe before the RTO that resends the first packet */
	assert_true(st.rtx_tlp <= 2 * st.rto_fired);
}

/*
 * A tail of eight lost on a steady link: the probe (the last packet again)
 * is answered by a TPSACK that shows the other holes, they are resent, and
 * their answers come a round trip later. The probe's first answer lets the
 * RTO wait a full RTO from it, once an episode: with the RTO left where the
 * probe set it (RTTVAR small), it fired for nothing as that recovery ended.
 */
static void tlp_tail_eight_lost_no_rto(void **state)
{
	struct tp_stats st;

	(void)state;
	tlp_run(24, 56, 64, 1, 0, &st);	/* the last eight of 64, once */
	assert_int_equal(st.rtx_tlp, 1);
	assert_int_equal(st.rto_fired, 0);
}

static void first_lost_thrice(struct psn_log *l)
{
	l->drop_psn = 0;
	l->drop_times = 3;
}

/*
 * The first packet's first three sends lost, every other packet SACKed as
 * it arrives. Their RTTs are taken as each is SACKed; the ack that finally
 * covers them all is no sample of theirs. Sampled only at that ack, the
 * channel had no RTT until then (the RTO stayed at the 16 ms it takes
 * before any, twice: done at 32 ms, not 0.13), and then SRTT became the
 * newest packet's "RTT", the whole time the hole took (32 ms on a 20 us
 * link). In the sprayed drain of spray_tbf_queues_drain (test_tpg_tbf) the
 * same sample took seed 379's SRTT from 245 to 1,198 ms, no packet's RTT
 * over 23 ms, and RACK's window, the probe and the RTO with it.
 */
static void rack_srtt_not_from_long_sacked(void **state)
{
	struct tp_stats st;

	(void)state;
	rack_msg_run(31, 0, false, first_lost_thrice, &st);
	assert_true(st.rto_fired >= 1);			/* the hole took an RTO or more */
	assert_true(st.srtt_ns <= 2 * st.min_rtt_ns);	/* the link's, not the hole's */
}

static void frto_drops(struct psn_log *l)
{
	l->drop_psn = 0;
	l->drop_times = 2;
	l->drop_from = 40;
	l->drop_to = 63;
	l->drop2_psn = 63;
	l->drop2_times = 3;
}

/*
 * F-RTO's SACK enhancement (RFC 5682; frto_decide in tp_ack.c). A sprayed-style
 * channel (RACK, no fast retransmission, its ports not named) whose min
 * RTT was measured behind a 3 ms stall of the answers: each resend,
 * answered across the idle link in 20 us, passes for its original's answer
 * (RFC 8985), and RACK's reference stays put. The first packet lost twice
 * (its original and RACK's resend), 40-62 once, 63 three times (the probe
 * and the RTO's copy too): the RTO resends 0, which arrives, and 63. una
 * then jumps over 1-39, SACKed before the timeout, news that is no news:
 * what followed was lost, and 40-62 go at once. Taken for proof that the
 * RTO was spurious, they waited for the next RTO: 2 RTOs, done at 27.0 ms
 * against 21.0.
 */
static void frto_sacked_news_no_proof(void **state)
{
	struct tp_stats st;

	(void)state;
	rack_msg_run(32, 3 * MS, true, frto_drops, &st);
	assert_int_equal(st.rto_fired, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clean_link),
		cmocka_unit_test(lossy_gbn),
		cmocka_unit_test(lossy_gbn_fast),
		cmocka_unit_test(lossy_sr),
		cmocka_unit_test(lossy_sr_rack),
		cmocka_unit_test(tail_loss_rto),
		cmocka_unit_test(stall_no_go_back),
		cmocka_unit_test(rol_lost_answer_no_rto),
		cmocka_unit_test(ack_loss_no_livelock),
		cmocka_unit_test(sr_no_double_retransmission),
		cmocka_unit_test(sr_markpsn_no_rto),
		cmocka_unit_test(sr_all_sacked_tpack_lost),
		cmocka_unit_test(sr_large_range),
		cmocka_unit_test(gbn_fast_single_goback),
		cmocka_unit_test(retry_limit_fails_channel),
		cmocka_unit_test(retry_time_outlasts_a_stall),
		cmocka_unit_test(paced_rto_held),
		cmocka_unit_test(paced_rto_lost_still_fails),
		cmocka_unit_test(paced_rto_dcqcn),
		cmocka_unit_test(full_window_tail_loss),
		cmocka_unit_test(held_rto_counts),
		cmocka_unit_test(rol_delayed_tpack),
		cmocka_unit_test(roi_taack_packet),
		cmocka_unit_test(rnr_answered_and_retried),
		cmocka_unit_test(rnr_mid_message),
		cmocka_unit_test(recv_take_back),
		cmocka_unit_test(rnr_retries_exhausted),
		cmocka_unit_test(send_too_long),
		cmocka_unit_test(write_read),
		cmocka_unit_test(utp_messages),
		cmocka_unit_test(channels_both_ways),
		cmocka_unit_test(deterministic),
		cmocka_unit_test(hello_setup),
		cmocka_unit_test(sack_after_reordering),
		cmocka_unit_test(rack_dsack_reported),
		cmocka_unit_test(rack_rto_undone),
		cmocka_unit_test(rack_per_flow_loss),
		cmocka_unit_test(tlp_sack_no_new_episode),
		cmocka_unit_test(tlp_tail_eight_lost_no_rto),
		cmocka_unit_test(rack_srtt_not_from_long_sacked),
		cmocka_unit_test(frto_sacked_news_no_proof),
		cmocka_unit_test(min_rtt_follows_route_change),
		cmocka_unit_test(paths_follow_route_change),
		cmocka_unit_test(path_rule_back_after_quiet_epochs),
		cmocka_unit_test(path_rule_off_full_window),
		cmocka_unit_test(tail_after_standing_queue_no_rto),
		cmocka_unit_test(tail_rto_not_undone_after_standing_queue),
		cmocka_unit_test(tail_rto_not_undone_no_rack),
		cmocka_unit_test(spurious_rto_undone_no_rack),
		cmocka_unit_test(path_proof_not_from_answer_probe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
