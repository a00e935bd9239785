// SPDX-License-Identifier: BSD-2-Clause
/*
 * Congestion control of TP channels (user/transport/cc*.c): each algorithm's
 * rules driven through its hooks with hand-computed expectations, the
 * feedback on the wire decoded by the packet library, and N flows through
 * one marking bottleneck of the deterministic network simulator
 * (tp_net.c) converging to a fair share with the queue bounded.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "transport/cc.h"
#include "cc_flows.h"
#include "transport/tp_net.h"
#include "lib/ubhdr.h"

#define US 1000ull
#define MS 1000000ull
#define GBPS 1000000000ull


/* ---- the rules, through the hooks ------------------------------------------ */

struct inst {
	struct tp_cc *cc;
	const struct tp_cc_ops *ops;
	void *ctx;
};

static void inst_new(struct inst *in, const struct tp_cc_config *cfg)
{
	struct tp_chan_config c = { 0 };

	in->cc = tp_cc_create(cfg);
	assert_non_null(in->cc);
	tp_cc_attach(in->cc, &c);
	assert_non_null(c.cc);
	in->ops = c.cc;
	in->ctx = c.cc_ctx;
}

static struct tp_cc_stats inst_stats(const struct inst *in)
{
	struct tp_cc_stats st;

	tp_cc_get_stats(in->cc, &st);
	return st;
}

#define assert_near(a, b) do {							\
		double a_ = (a), b_ = (b);					\
		if (fabs(a_ - b_) > 1e-6 * (fabs(b_) + 1))			\
			fail_msg("%s = %.9g, expected %.9g", #a, a_, b_);	\
	} while (0)

static void dcqcn_cut_severe_minor(void **state)
{
	struct tp_cc_config cfg = { .algo = TP_CC_DCQCN, .line_rate_bps = 10 * GBPS };
	struct inst in;

	(void)state;
	inst_new(&in, &cfg);
	assert_near(inst_stats(&in).rate_bps, 10e9);
	in.ops->on_cnp(in.ctx, 1000, UB_CNP_ECN_SEVERE, false);	/* alpha 1: halve */
	assert_near(inst_stats(&in).rate_bps, 5e9);
	assert_near(inst_stats(&in).alpha, 1.0);		/* (1-g)·1 + g */
	in.ops->on_cnp(in.ctx, 2000, UB_CNP_ECN_MINOR, false);	/* a quarter */
	assert_near(inst_stats(&in).rate_bps, 3.75e9);
	assert_int_equal(inst_stats(&in).cnp_rcvd, 2);
	assert_int_equal(inst_stats(&in).ecn_cuts, 2);		/* cut by CNPs, */
	assert_int_equal(inst_stats(&in).rto_cuts, 0);		/* not by an RTO */
	tp_cc_destroy(in.cc);
}

static void dcqcn_alpha_decays_per_timer(void **state)
{
	struct tp_cc_config cfg = { .algo = TP_CC_DCQCN };
	struct inst in;
	double g = 1.0 / 256;

	(void)state;
	inst_new(&in, &cfg);
	in.ops->on_cnp(in.ctx, 0, UB_CNP_ECN_SEVERE, false);
	in.ops->on_tick(in.ctx, 55 * US - 1);
	assert_near(inst_stats(&in).alpha, 1.0);
	in.ops->on_tick(in.ctx, 3 * 55 * US);
	assert_near(inst_stats(&in).alpha, pow(1 - g, 3));
	/* A CNP: alpha = (1-g)·alpha + g. */
	in.ops->on_cnp(in.ctx, 3 * 55 * US, UB_CNP_ECN_SEVERE, false);
	assert_near(inst_stats(&in).alpha, (1 - g) * pow(1 - g, 3) + g);
	tp_cc_destroy(in.cc);
}

/* Fast recovery for F timer events, then additive increase of the target. */
static void dcqcn_recovery_by_timer(void **state)
{
	struct tp_cc_config cfg = { .algo = TP_CC_DCQCN, .line_rate_bps = 10 * GBPS };
	struct inst in;
	double rc = 2.5e9, rt = 5e9;
	uint64_t t0 = 1 * US;

	(void)state;
	inst_new(&in, &cfg);
	in.ops->on_cnp(in.ctx, 0, UB_CNP_ECN_SEVERE, false);	/* 5G, target 10G */
	in.ops->on_cnp(in.ctx, t0, UB_CNP_ECN_SEVERE, false);	/* 2.5G, target 5G */
	assert_near(inst_stats(&in).rate_bps, rc);
	for (int k = 1; k <= 7; k++) {
		if (k > 5)
			rt += 40e6;	/* R_AI once past F = 5 */
		rc = (rt + rc) / 2;
		in.ops->on_tick(in.ctx, t0 + (uint64_t)k * 55 * US);
		assert_near(inst_stats(&in).rate_bps, rc);
	}
	assert_int_equal(inst_stats(&in).increases, 7);
	tp_cc_destroy(in.cc);
}

static void dcqcn_byte_counter(void **state)
{
	struct tp_cc_config cfg = { .algo = TP_CC_DCQCN, .line_rate_bps = 10 * GBPS };
	struct inst in;

	(void)state;
	inst_new(&in, &cfg);
	in.ops->on_cnp(in.ctx, 0, UB_CNP_ECN_SEVERE, false);
	for (int i = 0; i < 10; i++)	/* 10 MiB within one timer period */
		in.ops->on_send(in.ctx, 1000, 1u << 20, false);
	assert_int_equal(inst_stats(&in).increases, 1);
	assert_near(inst_stats(&in).rate_bps, 7.5e9);
	tp_cc_destroy(in.cc);
}

/* The rate paces sends; the deadline wakes the core only while blocked. */
static void dcqcn_pacing(void **state)
{
	struct tp_cc_config cfg = { .algo = TP_CC_DCQCN, .line_rate_bps = 8 * GBPS };
	struct inst in;

	(void)state;
	inst_new(&in, &cfg);
	assert_true(in.ops->can_send(in.ctx, 0, 0, 936));
	assert_true(in.ops->next_deadline(in.ctx) == UINT64_MAX);
	in.ops->on_send(in.ctx, 0, 936, false);		/* 1000 wire bytes: 1 us */
	assert_false(in.ops->can_send(in.ctx, 500, 0, 936));
	assert_int_equal(in.ops->next_deadline(in.ctx), 1000);
	in.ops->on_tick(in.ctx, 1000);
	assert_true(in.ops->next_deadline(in.ctx) == UINT64_MAX);
	assert_true(in.ops->can_send(in.ctx, 1000, 1u << 30, 936));	/* no window */
	/* After an idle spell, a burst of 64 MTU (65536 ns at 1 byte/ns) goes
	 * back to back: 66 packets of 1000 wire bytes, then the rate again. */
	for (int k = 0; k < 66; k++) {
		assert_true(in.ops->can_send(in.ctx, 1000000, 0, 936));
		in.ops->on_send(in.ctx, 1000000, 936, false);
	}
	assert_false(in.ops->can_send(in.ctx, 1000000, 0, 936));
	tp_cc_destroy(in.cc);
}

static bool rx(struct inst *in, uint64_t now, uint8_t ecn, bool has_cci, uint16_t cci,
	       uint16_t entropy, struct ub_cnpetph_fields *cnp)
{
	struct tp_rx_meta m = { .ecn = ecn, .has_cci = has_cci, .cci = cci, .entropy = entropy };

	memset(cnp, 0, sizeof(*cnp));
	in->ops->on_rx_data(in->ctx, now, 1024, &m);
	return in->ops->cnp_due(in->ctx, now, cnp);
}

static void np_cnp_once_per_interval(void **state)
{
	struct tp_cc_config cfg = { .algo = TP_CC_DCQCN };
	struct ub_cnpetph_fields cnp;
	struct inst in;

	(void)state;
	inst_new(&in, &cfg);
	assert_false(rx(&in, 0, 2, false, 0, 0, &cnp));		/* ECT, not CE */
	assert_true(rx(&in, 1 * US, 3, false, 0, 0, &cnp));
	assert_int_equal(cnp.ecn, UB_CNP_ECN_SEVERE);		/* UBoE: CE is severe */
	assert_false(cnp.loc);
	assert_false(rx(&in, 10 * US, 3, false, 0, 0, &cnp));	/* same interval */
	assert_false(rx(&in, 50 * US, 3, false, 0, 0, &cnp));
	assert_true(rx(&in, 51 * US, 3, false, 0, 0, &cnp));	/* 50 us later */
	assert_int_equal(inst_stats(&in).cnp_sent, 2);
	assert_int_equal(inst_stats(&in).ce_rcvd, 4);
	tp_cc_destroy(in.cc);

	cfg.ce_minor = true;
	inst_new(&in, &cfg);
	assert_true(rx(&in, 0, 3, false, 0, 0, &cnp));
	assert_int_equal(cnp.ecn, UB_CNP_ECN_MINOR);
	tp_cc_destroy(in.cc);
}

/* Native FECN in the CCI keeps its two levels and the last-hop bit. */
static void np_fecn_levels(void **state)
{
	struct tp_cc_config cfg = { .algo = TP_CC_DCQCN };
	struct ub_cnpetph_fields cnp;
	struct inst in;

	(void)state;
	inst_new(&in, &cfg);
	assert_false(rx(&in, 0, 0, true, 0x4002, 0, &cnp));	/* markable, not marked */
	assert_true(rx(&in, 1 * US, 0, true, 0x4001, 0, &cnp));	/* light CE */
	assert_int_equal(cnp.ecn, UB_CNP_ECN_MINOR);
	assert_false(cnp.loc);
	assert_true(rx(&in, 100 * US, 0, true, 0x4803, 0, &cnp));	/* severe, last hop */
	assert_int_equal(cnp.ecn, UB_CNP_ECN_SEVERE);
	assert_true(cnp.loc);
	tp_cc_destroy(in.cc);
}

/* Per-packet LB: a CNP only once every path of the channel was marked. */
static void np_all_paths(void **state)
{
	struct tp_cc_config cfg = { .algo = TP_CC_DCQCN, .paths = 2 };
	struct ub_cnpetph_fields cnp;
	struct inst in;

	(void)state;
	inst_new(&in, &cfg);
	assert_false(rx(&in, 0, 3, false, 0, 10, &cnp));		/* path 0 */
	assert_false(rx(&in, 5 * US, 3, false, 0, 12, &cnp));	/* path 0 again */
	assert_true(rx(&in, 10 * US, 3, false, 0, 11, &cnp));	/* path 1 too */
	/* Path 0's mark is too old by now: path 1 alone is no cut. */
	assert_false(rx(&in, 200 * US, 3, false, 0, 11, &cnp));
	assert_false(rx(&in, 210 * US, 3, false, 0, 13, &cnp));
	tp_cc_destroy(in.cc);
}

/*
 * The CNP's Loc (UB 2.0 §6; WIRE.md §3): where the congestion was. Loc 0,
 * an intermediate switch (and what a UB2E switch restores from IP CE,
 * draft-li-uboe-00 §5.2.1): DCQCN as usual, fast recovery back towards the
 * rate before the cut. Loc 1, the last-hop switch: the receiver's own
 * downlink, which every path to it and every sender to it shares, so the
 * rate before the cut is known too high: the target is clamped to the cut
 * rate and recovery climbs from there only additively.
 */
static void dcqcn_loc(void **state)
{
	struct tp_cc_config cfg = { .algo = TP_CC_DCQCN, .line_rate_bps = 10 * GBPS };
	struct inst mid, last;
	double rc = 5e9, rt = 5e9;

	(void)state;
	inst_new(&mid, &cfg);
	inst_new(&last, &cfg);
	mid.ops->on_cnp(mid.ctx, 0, UB_CNP_ECN_SEVERE, false);
	last.ops->on_cnp(last.ctx, 0, UB_CNP_ECN_SEVERE, true);
	assert_near(inst_stats(&mid).rate_bps, 5e9);		/* the same cut */
	assert_near(inst_stats(&last).rate_bps, 5e9);
	mid.ops->on_tick(mid.ctx, 55 * US);
	last.ops->on_tick(last.ctx, 55 * US);
	assert_near(inst_stats(&mid).rate_bps, 7.5e9);		/* halfway back to 10G */
	assert_near(inst_stats(&last).rate_bps, 5e9);		/* target clamped: stays */
	for (int k = 2; k <= 7; k++) {
		if (k > 5)
			rt += 40e6;	/* R_AI once past F = 5 */
		rc = (rt + rc) / 2;
		last.ops->on_tick(last.ctx, (uint64_t)k * 55 * US);
		assert_near(inst_stats(&last).rate_bps, rc);
	}
	tp_cc_destroy(mid.cc);
	tp_cc_destroy(last.cc);
}

/* Per-packet LB waits for every path to be marked, but a last-hop mark
 * (FECN LoC) is on every path at once: its CNP goes at once, Loc 1. */
static void np_last_hop_all_paths(void **state)
{
	struct tp_cc_config cfg = { .algo = TP_CC_DCQCN, .paths = 2 };
	struct ub_cnpetph_fields cnp;
	struct inst in;

	(void)state;
	inst_new(&in, &cfg);
	assert_false(rx(&in, 0, 0, true, 0x4003, 10, &cnp));	/* path 0, intermediate */
	assert_true(rx(&in, 100 * US, 0, true, 0x4803, 12, &cnp));	/* path 0, last hop */
	assert_int_equal(cnp.ecn, UB_CNP_ECN_SEVERE);
	assert_true(cnp.loc);
	tp_cc_destroy(in.cc);
}

static struct ub_cetph_fields cetph(uint32_t ack_seq, uint8_t c, bool i, uint16_t hint)
{
	return (struct ub_cetph_fields){ .ack_seq = ack_seq, .c = c, .i = i, .hint = hint };
}

static void ldcp_inflight_rules(void **state)
{
	struct tp_cc_config cfg = { .algo = TP_CC_LDCP, .mtu = 1000, .init_cw = 4000 };
	struct ub_cetph_fields ce;
	struct inst in;

	(void)state;
	inst_new(&in, &cfg);
	ce = cetph(0, 0, false, 0);
	in.ops->on_cetph(in.ctx, 0, &ce);
	for (int i = 0; i < 4; i++) {
		assert_true(in.ops->can_send(in.ctx, 0, UINT64_MAX, 1000));
		in.ops->on_send(in.ctx, 0, 1000, false);
	}
	assert_false(in.ops->can_send(in.ctx, 0, UINT64_MAX, 1000));	/* aval_win = 0 */
	/* An ack without CETPH freed bytes in the core: its count bounds ours. */
	assert_true(in.ops->can_send(in.ctx, 0, 3000, 1000));
	ce = cetph(2000, 0, false, 2);				/* 2000 bytes arrived */
	in.ops->on_cetph(in.ctx, 1, &ce);
	assert_int_equal(inst_stats(&in).inflight, 2000);
	assert_true(in.ops->can_send(in.ctx, 1, UINT64_MAX, 1000));
	/* Selective retransmission: the lost bytes leave inflight (room for
	 * the resend in a full window), the resend counts again. */
	in.ops->on_send(in.ctx, 2, 1000, false);
	in.ops->on_send(in.ctx, 2, 1000, false);
	assert_false(in.ops->can_send(in.ctx, 2, UINT64_MAX, 1000));	/* 4000: full */
	in.ops->on_lost(in.ctx, 2, 1000);
	in.ops->on_loss(in.ctx, 2, TP_LOSS_SACK);
	ce = cetph(2000, 0, false, 0);
	in.ops->on_cetph(in.ctx, 3, &ce);
	assert_int_equal(inst_stats(&in).inflight, 3000);
	assert_true(in.ops->can_send(in.ctx, 3, UINT64_MAX, 1000));
	in.ops->on_send(in.ctx, 3, 1000, true);
	ce = cetph(4000, 0, false, 0);				/* two more arrived */
	in.ops->on_cetph(in.ctx, 3, &ce);
	assert_int_equal(inst_stats(&in).inflight, 2000);
	/* An RTO: nothing in flight; what is resent counts again. It halves
	 * the window, a cut counted as the RTO's, not as ECN's. */
	in.ops->on_loss(in.ctx, 4, TP_LOSS_RTO);
	ce = cetph(4000, 0, false, 0);
	in.ops->on_cetph(in.ctx, 5, &ce);
	assert_int_equal(inst_stats(&in).inflight, 0);
	assert_int_equal(inst_stats(&in).rto_cuts, 1);
	assert_int_equal(inst_stats(&in).ecn_cuts, 0);
	assert_int_equal(inst_stats(&in).cuts, 1);
	in.ops->on_send(in.ctx, 6, 1000, true);
	in.ops->on_cetph(in.ctx, 7, &ce);
	assert_int_equal(inst_stats(&in).inflight, 1000);
	/* Go-Back-N (TPNAK): what the go-back resends leaves by on_lost (the
	 * receiver dropped it), what the TPNAK acknowledged below it stays
	 * until a TPACK-CC counts it. */
	in.ops->on_send(in.ctx, 8, 1000, false);
	in.ops->on_lost(in.ctx, 8, 1000);
	in.ops->on_loss(in.ctx, 8, TP_LOSS_NAK);
	assert_int_equal(inst_stats(&in).inflight, 1000);
	ce = cetph(5000, 0, false, 0);
	in.ops->on_cetph(in.ctx, 9, &ce);
	assert_int_equal(inst_stats(&in).inflight, 0);
	in.ops->on_cetph(in.ctx, 9, &ce);
	assert_int_equal(inst_stats(&in).inflight, 0);
	tp_cc_destroy(in.cc);
}

static void ldcp_window_law(void **state)
{
	struct tp_cc_config cfg = { .algo = TP_CC_LDCP, .mtu = 1000, .init_cw = 10000 };
	struct ub_cetph_fields ce;
	struct inst in;
	double cw = 10000, alpha = 1.0, g = 1.0 / 16;

	(void)state;
	inst_new(&in, &cfg);
	ce = cetph(0, 0, false, 0);
	in.ops->on_cetph(in.ctx, 0, &ce);			/* window ends at 10000 */
	ce = cetph(5000, 0, false, 5);
	in.ops->on_cetph(in.ctx, 1, &ce);
	cw += 1000.0 * 5000 / cw;				/* unmarked: +MTU per window */
	assert_near(inst_stats(&in).cw, (uint64_t)cw);
	ce = cetph(10000, 5, false, 5);				/* half marked, window ends */
	in.ops->on_cetph(in.ctx, 2, &ce);
	alpha = (1 - g) * alpha + g * 0.5;
	cw *= 1 - alpha / 2;
	assert_near(inst_stats(&in).alpha, alpha);
	assert_near(inst_stats(&in).cw, (uint64_t)cw);
	assert_int_equal(inst_stats(&in).cuts, 1);
	assert_int_equal(inst_stats(&in).ecn_cuts, 1);		/* the marks' */
	assert_int_equal(inst_stats(&in).rto_cuts, 0);
	tp_cc_destroy(in.cc);
}

static void caqm_window_rules(void **state)
{
	struct tp_cc_config cfg = { .algo = TP_CC_CAQM, .mtu = 1024, .init_cw = 16384 };
	struct ub_cetph_fields ce;
	struct inst in;

	(void)state;
	inst_new(&in, &cfg);					/* unit 128 */
	ce = cetph(0, 2, false, 0);				/* C>0, I=0: decrease */
	in.ops->on_cetph(in.ctx, 0, &ce);
	assert_int_equal(inst_stats(&in).cw, 16384 - 2 * 128);
	assert_int_equal(inst_stats(&in).ecn_cuts, 1);		/* by the C bits */
	ce = cetph(0, 2, true, 8);				/* C>0, I=1: Hint - C */
	in.ops->on_cetph(in.ctx, 0, &ce);
	assert_int_equal(inst_stats(&in).cw, 16384 - 2 * 128 + 6 * 128);
	ce = cetph(0, 0, true, 8);				/* C=0, I=1: Hint */
	in.ops->on_cetph(in.ctx, 0, &ce);
	assert_int_equal(inst_stats(&in).cw, 16384 + 12 * 128);
	ce = cetph(0, 0, false, 0);				/* unchanged */
	in.ops->on_cetph(in.ctx, 0, &ce);
	assert_int_equal(inst_stats(&in).cw, 16384 + 12 * 128);
	assert_int_equal(inst_stats(&in).ecn_cuts, 1);		/* increases are not cuts */
	in.ops->on_loss(in.ctx, 0, TP_LOSS_RTO);		/* an RTO halves it */
	assert_int_equal(inst_stats(&in).cw, (16384 + 12 * 128) / 2);
	assert_int_equal(inst_stats(&in).rto_cuts, 1);
	assert_int_equal(inst_stats(&in).ecn_cuts, 1);
	tp_cc_destroy(in.cc);
}

/* One request (I, Hint) per window of bytes sent; EN on every data packet. */
static void caqm_requests(void **state)
{
	struct tp_cc_config cfg = { .algo = TP_CC_CAQM, .mtu = 1024, .init_cw = 4096 };
	struct inst in;
	uint16_t cci;
	int req = 0;

	(void)state;
	inst_new(&in, &cfg);
	for (int i = 0; i < 12; i++) {
		assert_true(in.ops->tx_cci(in.ctx, 0, 1024, false, &cci));
		assert_int_equal(tp_cci_mode(cci), TP_CCI_MODE_CAQM);
		assert_true(cci & TP_CCI_CAQM_EN);
		assert_false(cci & TP_CCI_CAQM_C);
		if (cci & TP_CCI_CAQM_I) {
			assert_int_equal(cci & 0xff, 8);
			req++;
		}
		in.ops->on_send(in.ctx, 0, 1024, false);
	}
	assert_int_equal(req, 2);	/* after 4096 and after 8192 bytes */
	tp_cc_destroy(in.cc);
}

static void caqm_switch_budget(void **state)
{
	struct tp_caqm_port p = { .thresh = 10000, .hint_unit = 128, .window_ns = 100 * US };
	const uint16_t req = TP_CCI_CAQM_EN | TP_CCI_CAQM_I | 8, plain = TP_CCI_CAQM_EN;
	uint16_t v;

	(void)state;
	v = tp_caqm_switch(&p, 0, 0, false, req);		/* room: granted */
	assert_int_equal(v, req);
	v = tp_caqm_switch(&p, 1, 9000, false, req);		/* 1000 - 1024 left: refused */
	assert_int_equal(v, plain);
	v = tp_caqm_switch(&p, 200 * US, 9500, false, req);	/* new window, 500: trimmed */
	assert_int_equal(v, TP_CCI_CAQM_EN | TP_CCI_CAQM_I | 3);
	v = tp_caqm_switch(&p, 201 * US, 20000, true, req);	/* congested, last hop */
	assert_int_equal(v, TP_CCI_CAQM_EN | TP_CCI_CAQM_C | TP_CCI_LOC);
	assert_int_equal(tp_caqm_switch(&p, 0, 20000, false, 0x4001), 0x4001);	/* FECN */
	assert_int_equal(tp_caqm_switch(&p, 0, 20000, false, 0), 0);	/* EN clear */
	assert_int_equal(p.granted, 2);
	assert_int_equal(p.trimmed, 1);
	assert_int_equal(p.refused, 2);
	assert_int_equal(p.congested, 1);
}

static void config_checked(void **state)
{
	struct tp_cc_config bad[] = {
		{ .algo = 7 },
		{ .algo = TP_CC_DCQCN, .paths = 99 },
		{ .algo = TP_CC_LDCP, .min_cw = 8000, .max_cw = 4000 },
		{ .algo = TP_CC_DCQCN, .line_rate_bps = 1000, .min_rate_bps = 2000 },
		{ .algo = TP_CC_CAQM, .caqm_ai_units = 300 },
	};
	enum tp_cc_algo a;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_null(tp_cc_create(&bad[i]));
	assert_int_equal(tp_cc_algo_parse("dcqcn", &a), 0);
	assert_int_equal(a, TP_CC_DCQCN);
	assert_int_equal(tp_cc_algo_parse("reno", &a), -EINVAL);
	assert_string_equal(tp_cc_algo_name(TP_CC_CAQM), "caqm");
}


/* ---- the feedback on the wire ------------------------------------------------ */

struct wire_pair {
	struct tp_ep *ep[2];
	struct tp_chan *ch[2];
	struct tp_cc *cc[2];
	uint8_t src[4096], dst[4096];
	struct tp_rkey token;
};

static void wire_init(struct wire_pair *w, enum tp_cc_algo algo)
{
	struct tp_cc_config cc = { .algo = algo };

	memset(w, 0, sizeof(*w));
	for (int s = 0; s < 2; s++) {
		struct tp_ep_config ec = { .seed = 5 + (uint64_t)s };
		struct tp_chan_config c;

		ccf_chan_base(&c);
		c.ack_coalesce = 1;
		w->ep[s] = tp_ep_create(&ec);
		w->cc[s] = tp_cc_create(&cc);
		assert_non_null(w->ep[s]);
		assert_non_null(w->cc[s]);
		tp_cc_attach(w->cc[s], &c);
		w->ch[s] = tp_chan_create(w->ep[s], &c);
		assert_non_null(w->ch[s]);
	}
	for (int s = 0; s < 2; s++)
		assert_int_equal(tp_chan_connect(w->ch[s], tp_chan_tpn(w->ch[1 - s]),
						 tp_chan_init_psn(w->ch[1 - s])), 0);
	assert_int_equal(tp_mr_reg(w->ep[1], w->dst, sizeof(w->dst), &w->token), 0);
	assert_int_equal(tp_post_write(w->ch[0], w->src, 2048, (uintptr_t)w->dst, w->token, 1), 0);
}

static void wire_free(struct wire_pair *w)
{
	for (int s = 0; s < 2; s++) {
		tp_ep_destroy(w->ep[s]);
		tp_cc_destroy(w->cc[s]);
	}
}

/* A CE-marked data packet; returns its TP payload length. */
static size_t wire_deliver_ce(struct wire_pair *w, uint64_t now)
{
	uint8_t pkt[TP_HDR_MAX + 2048];
	struct tp_tx_info info;
	struct tp_rx_meta m = { .ecn = 3 };
	struct ub_tph_fields f;
	size_t len = tp_ep_tx(w->ep[0], now, pkt, sizeof(pkt), &info);

	assert_true(len > sizeof(struct ub_tph));
	assert_true(info.data);
	ub_tph_decode((const struct ub_tph *)pkt, &f);
	assert_int_equal(f.opcode, UB_TP_RTP_DATA);
	assert_int_equal(tp_ep_rx(w->ep[1], now, pkt, len, &m), TP_RX_OK);
	/* TPH | TAH | MAETAH | TVETAH (a packet of a Write) | payload */
	return len - sizeof(struct ub_tph) - sizeof(struct ub_tah) - sizeof(struct ub_maetah) -
	       sizeof(struct ub_tvetah);
}

/* DCQCN: CE on data -> one CNP (CNPETPH severe) first; the sender cuts. */
static void wire_cnp(void **state)
{
	struct wire_pair w;
	uint8_t pkt[512];
	struct tp_tx_info info;
	struct ub_tph_fields f;
	struct ub_cnpetph_fields cnp;
	struct tp_stats st;
	size_t len;

	(void)state;
	wire_init(&w, TP_CC_DCQCN);
	wire_deliver_ce(&w, 0);
	len = tp_ep_tx(w.ep[1], 0, pkt, sizeof(pkt), &info);
	assert_int_equal(len, sizeof(struct ub_tph) + sizeof(struct ub_cnpetph));
	ub_tph_decode((const struct ub_tph *)pkt, &f);
	assert_int_equal(f.opcode, UB_TP_CNP);
	assert_int_equal(f.src_tpn, tp_chan_tpn(w.ch[1]));
	assert_int_equal(f.dst_tpn, tp_chan_tpn(w.ch[0]));
	ub_cnpetph_decode((const struct ub_cnpetph *)(pkt + sizeof(struct ub_tph)), &cnp);
	assert_int_equal(cnp.ecn, UB_CNP_ECN_SEVERE);
	assert_int_equal(tp_ep_rx(w.ep[0], 1000, pkt, len, NULL), TP_RX_OK);
	tp_chan_stats(w.ch[0], &st);
	assert_int_equal(st.rx_cnp, 1);
	assert_int_equal(inst_stats(&(struct inst){ .cc = w.cc[0] }).cnp_rcvd, 1);
	assert_true(inst_stats(&(struct inst){ .cc = w.cc[0] }).rate_bps < 10 * GBPS);
	/* Then the TPACK, plain: DCQCN asks for no CETPH. */
	len = tp_ep_tx(w.ep[1], 0, pkt, sizeof(pkt), &info);
	ub_tph_decode((const struct ub_tph *)pkt, &f);
	assert_int_equal(f.opcode, UB_TP_ACK);
	/* A second CE in the same interval: no CNP. */
	wire_deliver_ce(&w, 10 * US);
	len = tp_ep_tx(w.ep[1], 10 * US, pkt, sizeof(pkt), &info);
	ub_tph_decode((const struct ub_tph *)pkt, &f);
	assert_int_equal(f.opcode, UB_TP_ACK);
	wire_free(&w);
}

/* LDCP: the TPACK becomes TPACK-CC with AckSequence and the mark count. */
static void wire_tpack_cc(void **state)
{
	struct wire_pair w;
	uint8_t pkt[512];
	struct tp_tx_info info;
	struct ub_tph_fields f;
	struct ub_cetph_fields ce;
	size_t len, pay;

	(void)state;
	wire_init(&w, TP_CC_LDCP);
	pay = wire_deliver_ce(&w, 0);
	len = tp_ep_tx(w.ep[1], 0, pkt, sizeof(pkt), &info);
	assert_int_equal(len, sizeof(struct ub_tph) + sizeof(struct ub_cetph));
	ub_tph_decode((const struct ub_tph *)pkt, &f);
	assert_int_equal(f.opcode, UB_TP_ACK_CE);
	assert_int_equal(f.psn, tp_chan_init_psn(w.ch[0]));
	ub_cetph_decode((const struct ub_cetph *)(pkt + sizeof(struct ub_tph)), &ce);
	assert_int_equal(ce.ack_seq, pay);
	assert_int_equal(ce.c, 1);
	assert_int_equal(ce.hint, 1);
	assert_int_equal(tp_ep_rx(w.ep[0], 1000, pkt, len, NULL), TP_RX_OK);
	assert_int_equal(inst_stats(&(struct inst){ .cc = w.cc[0] }).cetph_rcvd, 1);
	assert_int_equal(tp_chan_inflight_bytes(w.ch[0]), 0);	/* the core took the ack */
	wire_free(&w);
}

/* CAQM: the data packet asks for a CCI; what the switch left comes back. */
static void wire_caqm_cci(void **state)
{
	struct wire_pair w;
	uint8_t pkt[TP_HDR_MAX + 2048];
	struct tp_tx_info info;
	struct tp_rx_meta m = { .ecn = 2, .has_cci = true };
	struct ub_cetph_fields ce;
	struct ub_tph_fields f;
	size_t len;

	(void)state;
	wire_init(&w, TP_CC_CAQM);
	len = tp_ep_tx(w.ep[0], 0, pkt, sizeof(pkt), &info);
	assert_true(info.data && info.has_cci);
	assert_int_equal(tp_cci_mode(info.cci), TP_CCI_MODE_CAQM);
	assert_true(info.cci & TP_CCI_CAQM_EN);
	m.cci = info.cci | TP_CCI_CAQM_C;	/* a congested switch on the way */
	assert_int_equal(tp_ep_rx(w.ep[1], 0, pkt, len, &m), TP_RX_OK);
	len = tp_ep_tx(w.ep[1], 0, pkt, sizeof(pkt), &info);
	ub_tph_decode((const struct ub_tph *)pkt, &f);
	assert_int_equal(f.opcode, UB_TP_ACK_CE);
	ub_cetph_decode((const struct ub_cetph *)(pkt + sizeof(struct ub_tph)), &ce);
	assert_int_equal(ce.c, 1);
	assert_false(ce.i);
	assert_int_equal(tp_ep_rx(w.ep[0], 1000, pkt, len, NULL), TP_RX_OK);
	assert_int_equal(inst_stats(&(struct inst){ .cc = w.cc[0] }).cw, 16 * 1024 - 128);
	wire_free(&w);
}

/* ---- the simulated bottleneck --------------------------------------------- */

static void net_cfg(struct tp_net_cfg *n)
{
	memset(n, 0, sizeof(*n));
	n->npaths = 1;
	n->path[0] = (struct tp_net_path_cfg){ .rate_bps = 10 * GBPS, .delay_ns = 4 * US,
					       .ecn_thresh = 32 * 1024, .limit = 512 * 1024 };
	n->host_rate_bps = 25 * GBPS;
	n->host_delay_ns = 1 * US;
	n->return_delay_ns = 5 * US;
}


struct fair_result {
	double jain, util;
	uint64_t qmax, drops, marked, cnps, rto;
};

static void run_fair(enum tp_cc_algo algo, unsigned nflows, struct fair_result *r)
{
	struct tp_net_cfg nc;
	struct tp_chan_config base;
	struct tp_cc_config cc = { .algo = algo, .line_rate_bps = 25 * GBPS };
	struct ccf b;
	double x0[CCF_MAX_FLOWS], x1[CCF_MAX_FLOWS], d[CCF_MAX_FLOWS], sum = 0;
	const uint64_t t0 = 20 * MS, t1 = 40 * MS;
	const struct tp_net_path_stats *ps;

	net_cfg(&nc);
	nc.path[0].caqm = algo == TP_CC_CAQM;
	ccf_chan_base(&base);
	assert_int_equal(ccf_init(&b, nflows, 1, &nc, &cc, &base, 65536, 4, 2 * MS, 42), 0);
	ccf_run(&b, t0);
	ccf_flow_bytes(&b, x0);
	tp_net_reset_window(b.net);
	ccf_run(&b, t1);
	ccf_flow_bytes(&b, x1);
	for (unsigned i = 0; i < nflows; i++) {
		d[i] = x1[i] - x0[i];
		sum += d[i];
	}
	ps = tp_net_path(b.net, 0);
	r->jain = tp_jain(d, nflows);
	r->util = (double)ps->bytes * 8 / ((double)(t1 - t0) / 1e9) / (double)nc.path[0].rate_bps;
	r->qmax = ps->qmax;
	r->drops = ps->dropped;
	r->marked = ps->marked;
	{
		struct tp_stats ts;

		ccf_total_stats(&b, &ts);
		r->rto = ts.rto_fired;
	}
	r->cnps = 0;
	for (unsigned i = 0; i < nflows; i++) {
		struct tp_cc_stats st;

		tp_cc_get_stats(b.f[i].c[0].cc[1], &st);
		r->cnps += st.cnp_sent;
	}
	print_message("# %s x%u: jain %.3f util %.3f qmax %llu drops %llu marked %llu cnps %llu "
		      "goodput %.2f Gb/s errors %llu rto %llu\n", tp_cc_algo_name(algo), nflows, r->jain,
		      r->util, (unsigned long long)r->qmax, (unsigned long long)r->drops,
		      (unsigned long long)r->marked, (unsigned long long)r->cnps,
		      sum * 8 / ((double)(t1 - t0) / 1e9) / 1e9, (unsigned long long)b.errors,
		      (unsigned long long)r->rto);
	assert_int_equal(b.errors, 0);
	ccf_free(&b);
}

static void check_fair(enum tp_cc_algo algo)
{
	struct fair_result r;

	run_fair(algo, 4, &r);
	assert_true(r.jain >= 0.95);
	assert_true(r.qmax < 512 * 1024);	/* bounded: below the drop limit */
	assert_int_equal(r.drops, 0);
	assert_true(r.util >= 0.8);
}

/* Without CC the same flows overrun the queue: the fairness tests can fail. */
static void no_cc_overruns(void **state)
{
	struct fair_result r;

	(void)state;
	run_fair(TP_CC_NONE, 4, &r);
	assert_true(r.drops > 0);
}

static void fair_ldcp(void **state) { (void)state; check_fair(TP_CC_LDCP); }
static void fair_dcqcn(void **state) { (void)state; check_fair(TP_CC_DCQCN); }
static void fair_caqm(void **state) { (void)state; check_fair(TP_CC_CAQM); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dcqcn_cut_severe_minor),
		cmocka_unit_test(dcqcn_alpha_decays_per_timer),
		cmocka_unit_test(dcqcn_recovery_by_timer),
		cmocka_unit_test(dcqcn_byte_counter),
		cmocka_unit_test(dcqcn_pacing),
		cmocka_unit_test(np_cnp_once_per_interval),
		cmocka_unit_test(np_fecn_levels),
		cmocka_unit_test(np_all_paths),
		cmocka_unit_test(dcqcn_loc),
		cmocka_unit_test(np_last_hop_all_paths),
		cmocka_unit_test(ldcp_inflight_rules),
		cmocka_unit_test(ldcp_window_law),
		cmocka_unit_test(caqm_window_rules),
		cmocka_unit_test(caqm_requests),
		cmocka_unit_test(caqm_switch_budget),
		cmocka_unit_test(config_checked),
		cmocka_unit_test(wire_cnp),
		cmocka_unit_test(wire_tpack_cc),
		cmocka_unit_test(wire_caqm_cci),
		cmocka_unit_test(no_cc_overruns),
		cmocka_unit_test(fair_ldcp),
		cmocka_unit_test(fair_dcqcn),
		cmocka_unit_test(fair_caqm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
