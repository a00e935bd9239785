// SPDX-License-Identifier: BSD-2-Clause
/*
 * TP channel groups (user/transport/tpg.c): channel choice by queue depth,
 * per-flow and per-packet entropy, and in the deterministic network
 * simulator (tp_net.c): per-packet LB over two paths of different delay
 * without spurious retransmissions (and, as the control, what a plain SR
 * channel does there), a group of two over two equal paths against one
 * channel on one path.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tpg_sim.h"

/* Two connected endpoints with n channels, grouped on endpoint 0. */
struct grp {
	struct tp_ep *ep[2];
	struct tp_chan *ch[2][4];
	struct tpg *g;
	uint8_t buf[4096];
	struct tp_rkey token;
};

static void grp_init(struct grp *x, unsigned n, enum tpg_lb lb)
{
	struct tpg_config gc = { .lb = lb };

	memset(x, 0, sizeof(*x));
	x->g = tpg_create(&gc);
	assert_non_null(x->g);
	for (int s = 0; s < 2; s++) {
		struct tp_ep_config ec = { .seed = 11 + (uint64_t)s };

		x->ep[s] = tp_ep_create(&ec);
		assert_non_null(x->ep[s]);
		for (unsigned k = 0; k < n; k++) {
			struct tp_chan_config c;

			ccf_chan_base(&c);
			x->ch[s][k] = tp_chan_create(x->ep[s], &c);
			assert_non_null(x->ch[s][k]);
		}
	}
	for (unsigned k = 0; k < n; k++) {
		for (int s = 0; s < 2; s++)
			assert_int_equal(tp_chan_connect(x->ch[s][k], tp_chan_tpn(x->ch[1 - s][k]),
							 tp_chan_init_psn(x->ch[1 - s][k])), 0);
		assert_int_equal(tpg_add(x->g, x->ch[0][k]), (int)k);
	}
	assert_int_equal(tpg_add(x->g, x->ch[0][0]), -EEXIST);
	assert_int_equal(tp_mr_reg(x->ep[1], x->buf, sizeof(x->buf), &x->token), 0);
}

static void grp_free(struct grp *x)
{
	tpg_destroy(x->g);
	for (int s = 0; s < 2; s++)
		tp_ep_destroy(x->ep[s]);
}

static void pick_by_queue_depth(void **state)
{
	struct grp x;
	struct tp_event ev = { .type = TP_EV_WRITE_DONE, .len = 1000 };

	(void)state;
	grp_init(&x, 2, TPG_LB_FLOW);
	assert_int_equal(tpg_post_write(x.g, x.buf, 1000, (uintptr_t)x.buf, x.token, 1), 0);
	assert_int_equal(tpg_post_write(x.g, x.buf, 1000, (uintptr_t)x.buf, x.token, 2), 1);
	assert_int_equal(tpg_post_write(x.g, x.buf, 1000, (uintptr_t)x.buf, x.token, 3), 0);
	assert_int_equal(tpg_queued(x.g, 0), 2000);
	assert_int_equal(tpg_queued(x.g, 1), 1000);
	ev.chan = x.ch[0][1];
	tpg_on_event(x.g, &ev);			/* channel 1 drained */
	assert_int_equal(tpg_queued(x.g, 1), 0);
	assert_int_equal(tpg_post_write(x.g, x.buf, 3000, (uintptr_t)x.buf, x.token, 4), 1);
	assert_int_equal(tpg_post_write(x.g, x.buf, 10, (uintptr_t)x.buf, x.token, 5), 0);
	ev.chan = x.ch[1][0];			/* not a member: ignored */
	tpg_on_event(x.g, &ev);
	assert_int_equal(tpg_queued(x.g, 0), 2010);
	grp_free(&x);
}

static void entropy_per_flow_and_packet(void **state)
{
	struct grp x;
	struct tp_tx_info info = { .data = true };
	struct tpg_config pc = { .lb = TPG_LB_PACKET };
	struct tpg *pg;
	uint16_t seen[8];
	unsigned distinct = 0;

	(void)state;
	grp_init(&x, 2, TPG_LB_FLOW);
	pg = tpg_create(&pc);
	assert_int_equal(tpg_add(pg, x.ch[0][0]), 0);
	info.chan = x.ch[0][1];
	for (uint32_t psn = 0; psn < 8; psn++) {
		info.psn = psn;
		assert_int_equal(tpg_entropy(x.g, &info), 0xC001);	/* one port per channel */
	}
	info.chan = x.ch[0][0];
	for (uint32_t psn = 100; psn < 108; psn++) {
		bool dup = false;

		info.psn = psn;
		seen[psn - 100] = tpg_entropy(pg, &info);
		for (uint32_t k = 0; k < psn - 100; k++)
			dup |= seen[k] == seen[psn - 100];
		distinct += !dup;
		assert_true(seen[psn - 100] >= 0xC000 && seen[psn - 100] < 0xC100);
	}
	assert_int_equal(distinct, 8);				/* varies per packet */
	info.data = false;					/* responses stay put */
	assert_int_equal(tpg_entropy(pg, &info), 0xC000);
	tpg_destroy(pg);
	grp_free(&x);
}

static void prepare_per_packet(void **state)
{
	struct tpg_config gc = { .lb = TPG_LB_PACKET, .sack_after = 16 };
	struct tp_chan_config c;
	struct tp_cc_config cc = { .algo = TP_CC_DCQCN };
	struct tpg *g = tpg_create(&gc);
	enum tpg_lb lb;

	(void)state;
	ccf_chan_base(&c);
	c.mode = TP_MODE_RTP_GBN_FAST;
	tpg_prepare(g, &c, &cc, 2);
	assert_int_equal(c.sack_after, 16);
	assert_true(c.no_fast_rtx);
	assert_int_equal(c.mode, TP_MODE_RTP_GBN);
	assert_false(c.rack);		/* Go-Back-N holds nothing out of order */
	assert_int_equal(cc.paths, 2);
	ccf_chan_base(&c);
	tpg_prepare(g, &c, NULL, 2);
	assert_true(c.rack);
	tpg_destroy(g);
	assert_int_equal(tpg_lb_parse("packet", &lb), 0);
	assert_int_equal(lb, TPG_LB_PACKET);
	assert_int_equal(tpg_lb_parse("spray", &lb), -EINVAL);
	gc.lb = 9;
	assert_null(tpg_create(&gc));
}

/* ---- in the simulator ---------------------------------------------------------- */

static uint16_t by_psn(void *ctx, int pair, const struct tp_tx_info *info)
{
	(void)ctx;
	(void)pair;
	return (uint16_t)(info->data ? info->psn : 0);
}

struct spray_result {
	uint64_t rtx, rto, done, pkts[2];
};

static void spray(bool group, struct spray_result *r)
{
	struct tp_net_cfg nc;
	struct tp_chan_config base;
	struct tp_cc_config cc = { .algo = TP_CC_LDCP, .line_rate_bps = 25 * GBPS };
	struct tpg_config gc = { .lb = TPG_LB_PACKET };
	struct tp_stats st;
	struct ccf b;

	two_paths(&nc, 4 * US, 24 * US, 64 * 1024);
	ccf_chan_base(&base);
	if (group) {
		assert_int_equal(ccf_init_tpg(&b, 1, 1, &nc, &cc, &base, 65536, 4, 0, 3, &gc), 0);
	} else {
		nc.entropy = by_psn;	/* the same spraying, on a plain SR channel */
		assert_int_equal(ccf_init(&b, 1, 1, &nc, &cc, &base, 65536, 4, 0, 3), 0);
	}
	ccf_run(&b, 5 * MS);
	ccf_total_stats(&b, &st);
	r->rtx = st.rtx_rto + st.rtx_nak + st.rtx_sack + st.rtx_mark + st.rtx_rack + st.rtx_tlp +
		 st.rtx_path + st.rtx_answer;
	r->rto = st.rto_fired;
	r->done = b.f[0].done_bytes;
	r->pkts[0] = tp_net_path(b.net, 0)->pkts;
	r->pkts[1] = tp_net_path(b.net, 1)->pkts;
	print_message("# %s: rtx %llu rto %llu done %llu paths %llu/%llu errors %llu\n",
		      group ? "per-packet group" : "plain SR sprayed", (unsigned long long)r->rtx,
		      (unsigned long long)r->rto, (unsigned long long)r->done,
		      (unsigned long long)r->pkts[0], (unsigned long long)r->pkts[1],
		      (unsigned long long)b.errors);
	assert_int_equal(b.errors, 0);
	ccf_free(&b);
}

static void per_packet_no_spurious_rtx(void **state)
{
	struct spray_result r;

	(void)state;
	spray(true, &r);
	assert_int_equal(r.rtx, 0);
	assert_int_equal(r.rto, 0);
	assert_true(r.done >= 100 * 65536ull);		/* it moved data */
	assert_true(r.pkts[0] > r.done / 1024 / 4);	/* over both paths */
	assert_true(r.pkts[1] > r.done / 1024 / 4);
}

/* The control: the same spraying on a channel that reads holes as losses. */
static void plain_sr_spurious_rtx(void **state)
{
	struct spray_result r;

	(void)state;
	spray(false, &r);
	assert_true(r.rtx > 0);
}

/*
 * Per-path congestion with DCQCN: packets sprayed over a congested, marking
 * path 0 and an idle path 1. A per-packet group (paths = 2) cuts only when
 * both paths were marked: no CNP while path 1 is clean, CNPs once both
 * mark. The same spraying on a channel that knows one path cuts at once.
 */
static uint64_t cnps_sprayed(bool group, bool both_congested)
{
	struct tp_net_cfg nc;
	struct tp_chan_config base;
	struct tp_cc_config cc = { .algo = TP_CC_DCQCN, .line_rate_bps = 25 * GBPS };
	struct tpg_config gc = { .lb = TPG_LB_PACKET };
	struct tp_cc_stats st;
	uint64_t cnps;
	struct ccf b;

	two_paths(&nc, 4 * US, 4 * US, 8 * 1024);
	nc.path[0].rate_bps = 5 * GBPS;
	if (both_congested)
		nc.path[1].rate_bps = 5 * GBPS;
	else
		nc.path[1].ecn_thresh = 0;	/* never marks */
	ccf_chan_base(&base);
	base.rto_static_ns = TP_RTO_16MS;
	if (group) {
		assert_int_equal(ccf_init_tpg(&b, 1, 1, &nc, &cc, &base, 65536, 4, 0, 5, &gc), 0);
	} else {
		nc.entropy = by_psn;
		assert_int_equal(ccf_init(&b, 1, 1, &nc, &cc, &base, 65536, 4, 0, 5), 0);
	}
	ccf_run(&b, 2 * MS);
	tp_cc_get_stats(b.f[0].c[0].cc[1], &st);
	cnps = st.cnp_sent;
	print_message("# %s, %s: marked %llu/%llu, CNPs %llu\n", group ? "group" : "plain",
		      both_congested ? "both paths congested" : "path 0 congested",
		      (unsigned long long)tp_net_path(b.net, 0)->marked,
		      (unsigned long long)tp_net_path(b.net, 1)->marked, (unsigned long long)cnps);
	assert_true(tp_net_path(b.net, 0)->marked > 0);
	assert_int_equal(b.errors, 0);
	ccf_free(&b);
	return cnps;
}

static void per_packet_cut_only_when_all_paths_marked(void **state)
{
	(void)state;
	assert_int_equal(cnps_sprayed(true, false), 0);
	assert_true(cnps_sprayed(true, true) > 0);
	assert_true(cnps_sprayed(false, false) > 0);	/* the control */
}

static double goodput(unsigned nchan, struct tp_net_cfg *nc)
{
	struct tp_chan_config base;
	struct tp_cc_config cc = { .algo = TP_CC_LDCP, .line_rate_bps = 25 * GBPS };
	struct tpg_config gc = { .lb = TPG_LB_FLOW };
	struct ccf b;
	double x0, x1;

	ccf_chan_base(&base);
	assert_int_equal(ccf_init_tpg(&b, 1, nchan, nc, &cc, &base, 65536, 4, 0, 9, &gc), 0);
	ccf_run(&b, 2 * MS);
	x0 = (double)b.f[0].done_bytes;
	ccf_run(&b, 10 * MS);
	x1 = (double)b.f[0].done_bytes;
	assert_int_equal(b.errors, 0);
	ccf_free(&b);
	return (x1 - x0) * 8 / 8e-3;
}

static void group_of_two_doubles(void **state)
{
	struct tp_net_cfg two, one;
	double g2, g1;

	(void)state;
	two_paths(&two, 4 * US, 4 * US, 64 * 1024);
	one = two;
	one.npaths = 1;
	g2 = goodput(2, &two);
	g1 = goodput(1, &one);
	print_message("# group of 2 over 2 paths %.2f Gb/s, one channel %.2f Gb/s: ratio %.3f\n",
		      g2 / 1e9, g1 / 1e9, g2 / g1);
	assert_true(g2 / g1 >= 1.8);
}

/* ---- loss detection under spraying (RACK, TLP) ----------------------------------- */

/*
 * Reordering alone: paths of 10 us and 100 us, the second at half the
 * rate, so that its queue grows to hold most of the windows (up to ~16 ms
 * behind the other path), per packet, no loss. The old rule (RTO only, the
 * RTO from an SRTT that averages both paths) timed out on the slow path's
 * packets; RACK waits the measured reordering out: no RTO, nothing resent.
 */
static void spray_reordering_alone_no_rto(void **state)
{
	struct spray2 x = { .nchan = 4, .d0 = 10 * US, .d1 = 100 * US, .rate0 = 1 * GBPS,
			    .rate1 = GBPS / 2, .limit = 4 << 20, .window = 256,
			    .run_ns = 200 * MS };

	(void)state;
	spray2_run(&x, 21);
	assert_int_equal(x.errors, 0);
	assert_int_equal(x.st.rto_fired, 0);
	assert_int_equal(x.st.rtx_rto + x.st.rtx_rack + x.st.rtx_sack + x.st.rtx_mark + x.st.rtx_path, 0);
	assert_true(x.st.rtx_tlp <= 2);		/* a probe as the queue grows: cheap */
	assert_true(x.st.reo_seen > 1000);
	assert_true(x.gbps >= 0.85);		/* the 0.5 Gb/s path bounds it at 1 Gb/s */
}

static void lossy_print(const struct lossy *l)
{
	print_message("# lost %llu, resent %llu, %.2f ms after the loss on average, worst %.2f\n",
		      (unsigned long long)l->dropped, (unsigned long long)l->recovered,
		      l->recovered ? (double)l->sum_ns / (double)l->recovered / 1e6 : 0,
		      (double)l->worst_ns / 1e6);
}

/*
 * Real loss among reordering (the paths above): the first transmission of
 * the packets l chooses is lost. Every loss is resent once and every Write
 * completes, without an RTO.
 */
static void spray2_lossy(struct spray2 *x, struct lossy *l, uint64_t seed)
{
	*x = (struct spray2){ .nchan = 4, .d0 = 10 * US, .d1 = 100 * US, .rate0 = 1 * GBPS,
			      .rate1 = GBPS / 2, .limit = 4 << 20, .window = 256,
			      .run_ns = 250 * MS, .stop_ns = 200 * MS, .loss = l };
	spray2_run(x, seed);
	lossy_print(l);
	assert_int_equal(x->errors, 0);
	assert_true(l->dropped >= 10);
	assert_int_equal(x->posted_left, 0);
	assert_int_equal(l->recovered, l->dropped);
	assert_int_equal(x->st.rto_fired, 0);
	/* 10% under the lower of today's 0.778 and 0.747 Gb/s: recovery that
	 * waits or resends more costs goodput before it costs an RTO */
	assert_true(x->gbps >= 0.67);
}

/*
 * Every 500th packet lost, on either path. RACK finds each once a later
 * packet is delivered and the reordering window has passed, or on its
 * path (the old rule: only the RTO): each resent within the slow path's
 * RTT and the window.
 */
static void spray_loss_found_by_rack(void **state)
{
	static struct lossy l;
	struct spray2 x;

	(void)state;
	memset(&l, 0, sizeof(l));
	l.every = 500;
	spray2_lossy(&x, &l, 22);
	assert_true(x.st.rtx_rack + x.st.rtx_path + x.st.rtx_tlp >= l.dropped);
	/* the slow path's RTT (its queue: up to ~17 ms) and the reordering window */
	assert_true(l.worst_ns <= 40 * MS);
}

/*
 * Loss on the fast path only (every first transmission of a PSN that is a
 * multiple of 97 and takes path 0, 10 us): the slow path's queue makes the
 * reordering window some 20 ms, which is what RACK alone waited (10.9 ms
 * from the loss to the resend on average). The same port carries one of
 * the channel's later packets 16 PSNs on; delivered, it shows the loss at
 * once (rtx_path): most losses are found so, resent 1.1 ms after the loss
 * on average (the later packet may itself wait for the window to open
 * behind the slow path, or the port leave the channel's set).
 */
static void spray_loss_found_on_its_path(void **state)
{
	static struct lossy l;
	struct spray2 x;

	(void)state;
	memset(&l, 0, sizeof(l));
	l.every = 97;
	l.on_path = 1;
	spray2_lossy(&x, &l, 22);
	assert_true(x.st.rtx_path >= 3 * l.dropped / 4);
	assert_true(l.sum_ns <= 3 * MS * l.recovered);
	/* and none for a packet that was only late: only first transmissions
	 * are dropped here, so every path resend has its loss (the time rule's
	 * resends, which the path across reorders, are D-SACKed apart) */
	assert_true(x.st.rtx_path <= l.dropped + x.drops[0] + x.drops[1]);
}

/*
 * Ports that reorder: every packet takes up to 50 us more on its path (a
 * LAG below, a switch that sprays per packet; the channel's next packet on
 * a port follows some 15 us on), over two 10 Gb/s paths of 10 us. Nothing
 * is lost (the jitter seeded from the test's seed). The path rule then
 * resent packets that were only late, the longer the run the more (never
 * off, as on main: 18,758 in 50 ms, 75,128 in 200 ms, every one D-SACKed,
 * each a CC cut); now the first D-SACKs (a round trip's resends) switch it
 * off for good and the time rule, whose window the same reordering sets,
 * resends nothing: 22 in either run.
 */
static void spray_port_reorders(uint64_t run_ns, uint64_t until, struct lossy *l,
				struct spray2 *x)
{
	*x = (struct spray2){ .nchan = 2, .d0 = 10 * US, .d1 = 10 * US, .rate0 = 10 * GBPS,
			      .rate1 = 10 * GBPS, .limit = 4 << 20, .window = 256,
			      .jitter = 50 * US, .jitter_until = until, .run_ns = run_ns + 50 * MS,
			      .stop_ns = run_ns, .loss = l };
	spray2_run(x, 26);
	assert_int_equal(x->errors, 0);
	assert_int_equal(x->posted_left, 0);		/* every Write completed */
	assert_int_equal(x->st.rto_fired, 0);
	assert_true(x->st.path_rule_off >= 1);
}

static void spray_port_reordering_stops_path_rule(void **state)
{
	struct spray2 a, b;

	(void)state;
	spray_port_reorders(50 * MS, 0, NULL, &a);
	spray_port_reorders(200 * MS, 0, NULL, &b);
	assert_true(a.st.rtx_path <= 32 * a.nchan);		/* a round trip's worth */
	assert_true(b.st.rtx_path <= a.st.rtx_path + 2);	/* stopped, whatever the run */
	assert_true(b.st.rtx_spurious <= 32 * b.nchan);
	/* nothing lost: every D-SACK is of a path resend, and each is a proof
	 * (an 8-entry ring of path resends had forgotten most by then) */
	assert_int_equal(b.st.path_dsack, b.st.rtx_spurious);
	assert_true(b.gbps >= 12);				/* of 20 */
}

/* The same ports with loss (every 97th first transmission): every loss is
 * resent, by the time rule once the path rule is off, and every Write
 * completes without an RTO. */
static void spray_port_reordering_with_loss(void **state)
{
	static struct lossy l;
	struct spray2 x;

	(void)state;
	memset(&l, 0, sizeof(l));
	l.every = 97;
	spray_port_reorders(100 * MS, 0, &l, &x);
	lossy_print(&l);
	assert_true(l.dropped >= 1000);
	assert_int_equal(l.recovered, l.dropped);
	/* off within a round trip: the path rule resent little, and few of
	 * the resends were for nothing (the rule left on: ~40 times more) */
	assert_true(x.st.rtx_path <= 32 * x.nchan);
	assert_true(x.st.rtx_spurious <= l.dropped / 4);
	assert_true(x.gbps >= 10.5);	/* 11.625 Gb/s today, less 10% */
}

/*
 * The ports reorder for 50 ms, then are FIFO again (a route change): after
 * PATH_QUIET reordering epochs in a row showing none, the path rule is back, and
 * most losses are found on their path again, as on paths that never
 * reordered (spray_loss_found_on_its_path). Left off, the time rule found
 * them all (path resends: only the few before it went off).
 */
static void spray_port_reordering_ends(void **state)
{
	static struct lossy l;
	struct spray2 x;

	(void)state;
	memset(&l, 0, sizeof(l));
	l.every = 97;
	spray_port_reorders(250 * MS, 50 * MS, &l, &x);
	lossy_print(&l);
	assert_int_equal(l.recovered, l.dropped);
	assert_true(x.st.rtx_path >= l.dropped / 2);
	/* off once a channel while the ports reorder, then on for good: it
	 * does not flap (on after a single quiet epoch: 163 times) */
	assert_true(x.st.path_rule_off <= x.nchan);
	assert_true(x.gbps >= 13.2);	/* 14.741 Gb/s today, less 10% */
}

/*
 * Tail loss: no new Writes after 50 ms, and from then on every first
 * transmission is lost: nothing sent later is delivered to show the loss.
 * The probe (the newest packet again, 2 SRTT on) is delivered, and RACK
 * finds the rest from it: every Write completes, no RTO.
 */
static void spray_tail_loss_probe(void **state)
{
	static struct lossy l;
	struct spray2 x = { .nchan = 4, .d0 = 10 * US, .d1 = 100 * US, .rate0 = 1 * GBPS,
			    .rate1 = GBPS / 2, .limit = 4 << 20, .window = 256,
			    .run_ns = 300 * MS, .stop_ns = 50 * MS, .loss = &l };

	(void)state;
	memset(&l, 0, sizeof(l));
	l.blackout_ns = 50 * MS;
	spray2_run(&x, 23);
	print_message("# tail: lost %llu, resent %llu\n", (unsigned long long)l.dropped,
		      (unsigned long long)l.recovered);
	assert_int_equal(x.errors, 0);
	assert_true(l.dropped > 0);
	assert_int_equal(x.posted_left, 0);
	assert_int_equal(l.recovered, l.dropped);
	assert_true(x.st.rtx_tlp >= 1);
	assert_int_equal(x.st.rto_fired, 0);
}

/*
 * The stall: four channels of 256 packets sprayed over two paths
 * whose queues cannot hold them (one path slower: its queue fills, drops
 * and delays its packets behind the other's). The old rule lost each hole
 * to an RTO and the run crawled; RACK keeps both paths busy.
 */
static void spray_overflowing_queues(void **state)
{
	struct spray2 x = { .nchan = 4, .d0 = 5 * US, .d1 = 5 * US, .rate0 = 1 * GBPS,
			    .rate1 = GBPS / 2, .limit = 128 * 1024, .window = 256,
			    .run_ns = 200 * MS };

	(void)state;
	spray2_run(&x, 24);
	assert_int_equal(x.errors, 0);
	assert_true(x.drops[1] > 100);		/* real losses */
	/* ack-clocked, ports in turn would leave 1 Gb/s (the 0.5 Gb/s path's
	 * half); steered from the lossy path's ports, more of the 1.5 */
	assert_true(x.gbps >= 0.9);
	/* a probe lost to a full queue leaves the RTO, rarely; never reordering's */
	assert_true(x.st.rto_fired <= 2);
	assert_int_equal(x.st.rto_undone, 0);
}

/*
 * Path-aware spraying (tpg.c, spray_port): two equal paths but the second
 * with a queue of 16 KiB that two channels' windows overflow at once. Ports
 * whose packets were resent are passed over: most packets take the deep
 * path, and the shallow queue drops far fewer than under the plain
 * rotation, which halves the traffic onto it whatever it loses. And the
 * mechanism itself: after a resend, the next packets avoid its original's
 * port. The goodput is no longer steering's to win here: since the timers
 * cover the deep path's queue from recent RTTs (tp_rtx.c, rtt_hi) the
 * rotation recovers its losses too (8 seeds: 0.99-1.23 Gb/s against
 * 0.29-1.66 before, steered 1.09-1.20 against 0.83-1.06); the 1.2x over
 * the rotation this asserted held for this seed, not for 4 of 8.
 */
static void spray_steers_from_lossy_path(void **state)
{
	struct spray2 s = { .nchan = 2, .d0 = 5 * US, .d1 = 5 * US, .rate0 = 1 * GBPS,
			    .rate1 = 1 * GBPS, .limit = 4 << 20, .limit1 = 16 * 1024,
			    .window = 256, .run_ns = 100 * MS }, r;
	struct tpg_config pc = { .lb = TPG_LB_PACKET, .sport_span = 8 };
	struct tp_tx_info info = { .data = true };
	struct tpg *g;
	struct grp x;

	(void)state;
	r = s;
	r.no_steer = true;
	spray2_run(&r, 25);
	spray2_run(&s, 25);
	print_message("# steered: paths %llu/%llu packets, %.3f Gb/s; rotation: %llu/%llu, %.3f Gb/s\n",
		      (unsigned long long)s.pkts[0], (unsigned long long)s.pkts[1], s.gbps,
		      (unsigned long long)r.pkts[0], (unsigned long long)r.pkts[1], r.gbps);
	assert_int_equal(s.errors + r.errors, 0);
	assert_true(s.pkts[0] > 2 * s.pkts[1]);
	assert_true(2 * s.drops[1] < r.drops[1]);
	/* Floors, about 10% under today's 1.085 and 1.227 Gb/s: judging a
	 * resend answered sooner than the min RTT its own mid-run (tp_rtx.c,
	 * answers_earlier_copy, without its nothing_queued) cost 0.870 and
	 * 0.210 before; timers from RTTs of packets sent once alone let
	 * spurious resends of the deep path feed themselves (0.35-0.44). */
	assert_true(s.gbps >= 0.95);
	assert_true(r.gbps >= 1.1);

	/* the port choice: 8 ports; PSN 3's resend marks port 3 */
	grp_init(&x, 1, TPG_LB_FLOW);
	g = tpg_create(&pc);
	assert_int_equal(tpg_add(g, x.ch[0][0]), 0);
	info.chan = x.ch[0][0];
	for (uint32_t psn = 0; psn < 8; psn++) {
		info.psn = psn;
		assert_int_equal(tpg_entropy(g, &info), 0xC000 + psn);	/* the rotation */
	}
	info.psn = 3;
	info.rtx = true;
	assert_int_not_equal(tpg_entropy(g, &info), 0xC003);	/* not its original's port */
	info.rtx = false;
	info.psn = 11;						/* 11 % 8 = 3 */
	assert_int_equal(tpg_entropy(g, &info), 0xC004);	/* passed over */
	info.psn = 12;
	assert_int_equal(tpg_entropy(g, &info), 0xC004);
	tpg_destroy(g);
	grp_free(&x);
}

/*
 * The rotation (sport_span 256, 16 ports a channel): PSN n and n + 16 take
 * the same port, the 16 ports of a round are the channel's set, the set
 * slides by one port every 32 packets, and the channels' sets start 16
 * apart counted from each one's initial PSN (random), so they never sit on
 * each other's ports for the run.
 */
static void spray_ports_rotate_and_slide(void **state)
{
	struct tpg_config pc = { .lb = TPG_LB_PACKET, .sport_span = 256 };
	struct tp_tx_info info;
	struct grp x;
	struct tpg *g;

	(void)state;
	grp_init(&x, 2, TPG_LB_FLOW);
	g = tpg_create(&pc);
	for (unsigned k = 0; k < 2; k++)
		assert_int_equal(tpg_add(g, x.ch[0][k]), (int)k);
	memset(&info, 0, sizeof(info));
	info.data = true;
	for (unsigned k = 0; k < 2; k++) {
		uint16_t port[64];

		info.chan = x.ch[0][k];
		for (uint32_t sent = 0; sent < 64; sent++) {
			info.psn = tp_psn_add(tp_chan_init_psn(x.ch[0][k]), sent);
			port[sent] = (uint16_t)(tpg_entropy(g, &info) - 0xC000);
			/* the set of its first 32 packets, then one port on */
			assert_true(port[sent] >= 16 * k + sent / 32 && port[sent] < 16 * k + 16 + sent / 32);
		}
		for (uint32_t sent = 0; sent < 16; sent++) {
			assert_int_equal(port[sent], port[sent + 16]);
			for (uint32_t o = sent + 1; o < 16; o++)
				assert_int_not_equal(port[sent], port[o]);
		}
	}
	tpg_destroy(g);
	grp_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pick_by_queue_depth),
		cmocka_unit_test(entropy_per_flow_and_packet),
		cmocka_unit_test(prepare_per_packet),
		cmocka_unit_test(per_packet_no_spurious_rtx),
		cmocka_unit_test(plain_sr_spurious_rtx),
		cmocka_unit_test(per_packet_cut_only_when_all_paths_marked),
		cmocka_unit_test(group_of_two_doubles),
		cmocka_unit_test(spray_reordering_alone_no_rto),
		cmocka_unit_test(spray_loss_found_by_rack),
		cmocka_unit_test(spray_loss_found_on_its_path),
		cmocka_unit_test(spray_port_reordering_stops_path_rule),
		cmocka_unit_test(spray_port_reordering_with_loss),
		cmocka_unit_test(spray_port_reordering_ends),
		cmocka_unit_test(spray_tail_loss_probe),
		cmocka_unit_test(spray_overflowing_queues),
		cmocka_unit_test(spray_steers_from_lossy_path),
		cmocka_unit_test(spray_ports_rotate_and_slide),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
