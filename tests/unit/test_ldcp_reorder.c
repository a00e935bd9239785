// SPDX-License-Identifier: BSD-2-Clause
/*
 * LDCP under reordering and loss (docs/CC.md): two flows of two channels
 * each, every channel on its own (per flow), over one marking 10 Gbit/s
 * path of 20 us one way. With per-packet jitter (up to 100 us), packets the
 * sender declares lost (RACK, SACK) are mostly only late: they arrive as
 * well as their resend. With every 500th data packet lost, a Go-Back-N
 * receiver drops what follows until the go-back. Either way LDCP's
 * in-flight estimate must follow the data truly outstanding, or the window
 * stops limiting the sender.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tpg_sim.h"	/* US, MS, GBPS, two_paths() */

#define NFLOWS 2
#define NCHAN 2
#define STEP_NS (50 * US)

struct reo_cell {
	/* in */
	enum tp_mode mode;
	bool rack;
	uint64_t jitter_ns;
	uint64_t drop_every;	/* lose every Nth data packet sent; 0: none */
	/* out */
	uint64_t samples;
	double truth, est, cw;	/* sums over samples and channels (bytes) */
	double outst;		/* the same of the core's in-flight count */
	uint64_t over;		/* samples x channels where it passed cw + 1 MTU */
	uint64_t ecn_cuts, rtx, dup, drops, done, errors, rto, rto_undone, naks, lost;
};

static bool drop_nth(void *ctx, int pair, const struct tp_tx_info *info, uint32_t path, uint64_t now)
{
	struct reo_cell *o = ctx;

	(void)pair;
	(void)path;
	(void)now;
	return info->data && ++o->lost % o->drop_every == 0;
}

/* Data packets sent by ch's sending end that its receiving end has not
 * seen yet, in payload bytes: what is in the network (nothing is dropped). */
static double in_network(const struct ccf_chan *c)
{
	struct tp_stats s, r;
	uint64_t gone;

	tp_chan_stats(c->ch[0], &s);
	tp_chan_stats(c->ch[1], &r);
	gone = r.rx_inorder + r.rx_ooo + r.rx_dup + r.rx_invalid + r.rx_no_room + r.rx_gbn_drop;
	if (!s.tx_data || s.tx_data <= gone)
		return 0;
	return (double)(s.tx_data - gone) * (double)s.tx_bytes / (double)s.tx_data;
}

/* o's inputs set, the rest zero. */
static void reo_run(struct reo_cell *o, uint64_t run_ns, uint64_t seed)
{
	struct tp_net_cfg nc;
	struct tp_chan_config base;
	struct tp_cc_config cc = { .algo = TP_CC_LDCP, .line_rate_bps = 25 * GBPS };
	struct tp_stats st;
	struct ccf b;
	double n;

	two_paths(&nc, 20 * US, 20 * US, 64 * 1024);
	nc.npaths = 1;
	nc.path[0].limit = 16 << 20;	/* marks, never drops */
	nc.path[0].jitter_ns = o->jitter_ns;
	if (o->drop_every) {
		nc.drop = drop_nth;
		nc.drop_ctx = o;
	}
	ccf_chan_base(&base);
	base.mode = o->mode;
	base.rto_mode = TP_RTO_DYNAMIC;
	base.rack = o->rack;
	assert_int_equal(ccf_init(&b, NFLOWS, NCHAN, &nc, &cc, &base, 65536, 8, 0, seed), 0);
	for (uint64_t t = STEP_NS; t <= run_ns; t += STEP_NS) {
		ccf_run(&b, t);
		if (t < run_ns / 4)
			continue;	/* past the start */
		for (unsigned i = 0; i < NFLOWS; i++)
			for (unsigned k = 0; k < NCHAN; k++) {
				struct tp_cc_stats cs;

				/* Sent, not acknowledged, less what a go-back or an
				 * RTO counted out: the notes' inflight, but for the
				 * acks' delay. */
				double out = (double)tp_chan_inflight_bytes(b.f[i].c[k].ch[0]);

				tp_cc_get_stats(b.f[i].c[k].cc[0], &cs);
				if (!o->drop_every)
					o->truth += in_network(&b.f[i].c[k]);
				o->outst += out;
				o->over += out > (double)cs.cw + 1024;
				o->est += (double)cs.inflight;
				o->cw += (double)cs.cw;
			}
		o->samples++;
	}
	for (unsigned i = 0; i < NFLOWS; i++)
		for (unsigned k = 0; k < NCHAN; k++) {
			struct tp_cc_stats cs;

			tp_cc_get_stats(b.f[i].c[k].cc[0], &cs);
			o->ecn_cuts += cs.ecn_cuts;
		}
	ccf_total_stats(&b, &st);
	o->rtx = st.rtx_rack + st.rtx_sack + st.rtx_tlp + st.rtx_rto + st.rtx_path + st.rtx_mark +
		 st.rtx_nak;
	o->dup = st.rx_dup;
	o->drops = tp_net_path(b.net, 0)->dropped;
	o->rto = st.rto_fired;
	o->rto_undone = st.rto_undone;
	o->naks = st.rx_nak;
	for (unsigned i = 0; i < NFLOWS; i++)
		o->done += b.f[i].done_bytes;
	o->errors = b.errors;
	ccf_free(&b);
	n = (double)(o->samples * NFLOWS * NCHAN);
	print_message("# %u flows x %u ch, %s%s, 20 us + jitter %.0f us, 1 in %llu lost, %.0f ms: "
		      "%.2f Gb/s, ECN cuts %llu, resends %llu, duplicates received %llu, queue drops "
		      "%llu, NAKs %llu, RTOs %llu (undone %llu); per channel on average: in the network "
		      "%.1f KB (0: not counted with losses), outstanding %.1f KB (past cw + 1 MTU in %.1f%% "
		      "of samples), LDCP's estimate %.1f KB, cw %.1f KB\n",
		      NFLOWS, NCHAN, o->mode == TP_MODE_RTP_SR ? "SR" : "GBN-fast", o->rack ? " RACK" : "",
		      (double)o->jitter_ns / 1e3, (unsigned long long)o->drop_every,
		      (double)run_ns / 1e6, (double)o->done * 8 / (double)run_ns,
		      (unsigned long long)o->ecn_cuts, (unsigned long long)o->rtx,
		      (unsigned long long)o->dup, (unsigned long long)o->drops,
		      (unsigned long long)o->naks, (unsigned long long)o->rto,
		      (unsigned long long)o->rto_undone, o->truth / n / 1e3, o->outst / n / 1e3,
		      100.0 * (double)o->over / n, o->est / n / 1e3, o->cw / n / 1e3);
}

static void ldcp_estimate_follows_network_under_reordering(void **state)
{
	struct reo_cell o = { .mode = TP_MODE_RTP_SR, .rack = true, .jitter_ns = 100 * US };

	(void)state;
	reo_run(&o, 20 * MS, 41);
	assert_int_equal(o.errors, 0);
	assert_int_equal(o.drops, 0);
	assert_true(o.dup > 0);	/* the case at hand: spurious resends arrived twice */
	/* Not all of it: an original declared lost while only late is out of
	 * the count until it arrives (about half is counted; 0.06 when every
	 * duplicate byte went into AckSequence). */
	assert_true(o.est >= 0.25 * o.truth);
}

/*
 * Go-Back-N with fast retransmission, 1 data packet in 500 lost. A packet
 * the receiver drops (behind the loss) is no more received than the lost
 * one: counted, it let the sender past its window until the go-back (the
 * data outstanding ran to 1.8x cw). Nor may holding the window cost
 * spurious RTOs: SRTT + 4 RTTVAR of a steady queue is next to SRTT, and a
 * neighbour's go-back burst fired it. (SR beside it, printed only: its
 * spurious RTOs, undone by the core, still reset LDCP's count while the
 * data was in the network, docs/CC.md.)
 */
static void ldcp_window_holds_with_gbn_losses(void **state)
{
	struct reo_cell o = { .mode = TP_MODE_RTP_GBN_FAST, .drop_every = 500 };
	struct reo_cell sr = { .mode = TP_MODE_RTP_SR, .drop_every = 500 };

	(void)state;
	reo_run(&o, 100 * MS, 41);
	reo_run(&sr, 100 * MS, 41);
	assert_int_equal(o.errors, 0);
	assert_true(o.naks >= 100);	/* the case at hand: go-backs */
	assert_true(o.over * 50 <= o.samples * NFLOWS * NCHAN);
	assert_true(o.rto * 20 <= o.naks);
	/* Nor by a window that collapsed: 8.69 Gb/s, cw 22.2 KB a channel. */
	assert_true((double)o.done * 8 / (double)(100 * MS) >= 8.0);
	assert_true(o.cw / (double)(o.samples * NFLOWS * NCHAN) >= 15e3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ldcp_estimate_follows_network_under_reordering),
		cmocka_unit_test(ldcp_window_holds_with_gbn_losses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
