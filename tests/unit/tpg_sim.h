/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The simulated multipath setups of the TPG tests (test_tpg*.c): a group of
 * channels sprayed per packet over two paths of the network simulator
 * (tp_net.c), with chosen losses, and what the run did.
 */
#ifndef UBXDP_TPG_SIM_H
#define UBXDP_TPG_SIM_H

#include "cc_flows.h"
#include "transport/tpg.h"

#define US 1000ull
#define MS 1000000ull
#define GBPS 1000000000ull

static inline void two_paths(struct tp_net_cfg *n, uint64_t delay0, uint64_t delay1, uint32_t ecn)
{
	memset(n, 0, sizeof(*n));
	n->npaths = 2;
	n->path[0] = (struct tp_net_path_cfg){ .rate_bps = 10 * GBPS, .delay_ns = delay0,
					       .ecn_thresh = ecn, .limit = 1024 * 1024 };
	n->path[1] = n->path[0];
	n->path[1].delay_ns = delay1;
	n->host_rate_bps = 25 * GBPS;
	n->host_delay_ns = 1 * US;
	n->return_delay_ns = 5 * US;
}

/*
 * A group of n channels, per packet, no CC (ubperf's default), the dynamic
 * RTO, over two paths of one-way delay d0 and d1 at rate (each), queues of
 * limit bytes. drop (optional) loses chosen packets before their path.
 */
struct lossy {
	uint64_t every;		/* lose the first transmission of every Nth data packet */
	uint64_t blackout_ns;	/* lose every first transmission sent from then on */
	uint32_t on_path;	/* 0: any path; 1 + p: only packets taking path p */
	uint64_t dropped, recovered, worst_ns, sum_ns;
	uint64_t lost_at[4][4096];	/* per channel, by PSN % 4096: when it was lost */
	struct ccf *b;
};

static inline bool lossy_drop(void *ctx, int pair, const struct tp_tx_info *info,
			      uint32_t path, uint64_t now)
{
	struct lossy *l = ctx;
	unsigned k = 0;

	(void)pair;
	if (!info->data)
		return false;
	while (k < l->b->nchan && l->b->f[0].c[k].ch[0] != info->chan)
		k++;
	if (k == l->b->nchan)
		return false;
	if (info->rtx) {
		uint64_t *t = &l->lost_at[k][info->psn % 4096];

		if (*t) {
			l->recovered++;
			if (now - *t > l->worst_ns)
				l->worst_ns = now - *t;
			l->sum_ns += now - *t;
			*t = 0;
		}
		return false;
	}
	if (l->on_path && path != l->on_path - 1)
		return false;
	if ((l->every && info->psn % l->every == 0) || (l->blackout_ns && now >= l->blackout_ns)) {
		l->lost_at[k][info->psn % 4096] = now;
		l->dropped++;
		return true;
	}
	return false;
}

struct spray2 {
	unsigned nchan;
	bool no_steer;
	uint64_t d0, d1, rate0, rate1;
	uint32_t limit, limit1, window;	/* limit1: path 1's, if not limit */
	uint64_t jitter;		/* every path's (tp_net_path_cfg.jitter_ns)... */
	uint64_t jitter_until;		/* ...until then (0: the whole run) */
	uint64_t run_ns, stop_ns;
	uint32_t span;			/* tp_chan_span(), as ubperf sets it; 0: none */
	uint32_t msg, depth;		/* the Writes' size, how many per channel (0: 64 KiB, 8) */
	bool quiet;			/* print nothing */
	struct lossy *loss;
	/* out */
	struct tp_stats st;
	uint64_t done, posted_left, errors, drops[2], pkts[2];
	uint64_t last_post_ns, last_done_ns;	/* the latest Write posted, completed */
	uint64_t reo_wnd0;		/* channel 0's reordering window at the end */
	double gbps;
};

static inline void spray2_run(struct spray2 *x, uint64_t seed)
{
	struct tp_net_cfg nc;
	struct tp_chan_config base;
	struct tp_cc_config cc = { .algo = TP_CC_NONE };
	struct tpg_config gc = { .lb = TPG_LB_PACKET, .no_steer = x->no_steer };
	struct ccf b;

	two_paths(&nc, x->d0, x->d1, 0);
	nc.path[0].rate_bps = x->rate0;
	nc.path[1].rate_bps = x->rate1;
	nc.path[0].limit = nc.path[1].limit = x->limit;
	if (x->limit1)
		nc.path[1].limit = x->limit1;
	nc.path[0].jitter_ns = nc.path[1].jitter_ns = x->jitter;
	ccf_chan_base(&base);
	base.rto_mode = TP_RTO_DYNAMIC;
	base.window = x->window;
	base.ooo_range = x->window;
	base.retry_limit = 7;
	if (x->span)
		tp_chan_span(&base, x->span);
	if (x->loss) {
		nc.drop = lossy_drop;
		nc.drop_ctx = x->loss;
		x->loss->b = &b;
	}
	assert_int_equal(ccf_init_tpg(&b, 1, x->nchan, &nc, &cc, &base, x->msg ? x->msg : 65536,
				      x->depth ? x->depth : 8, 0, seed, &gc), 0);
	b.stop_ns = x->stop_ns;
	if (x->jitter_until) {
		ccf_run(&b, x->jitter_until);
		tp_net_set_jitter(b.net, 0, 0);
		tp_net_set_jitter(b.net, 1, 0);
	}
	ccf_run(&b, x->run_ns);
	tp_chan_stats(b.f[0].c[0].ch[0], &x->st);
	x->reo_wnd0 = x->st.reo_wnd_ns;
	if (!x->quiet)
		print_message("# channel 0: srtt %.1f us, min_rtt %.1f us, reordering window %.1f us\n",
			      (double)x->st.srtt_ns / 1e3, (double)x->st.min_rtt_ns / 1e3,
			      (double)x->st.reo_wnd_ns / 1e3);
	ccf_total_stats(&b, &x->st);
	x->done = b.f[0].done_bytes;
	x->errors = b.errors;
	x->last_post_ns = b.last_post_ns;
	x->last_done_ns = b.last_done_ns;
	x->posted_left = 0;
	for (unsigned k = 0; k < x->nchan; k++)
		x->posted_left += b.f[0].c[k].outstanding;
	x->drops[0] = tp_net_path(b.net, 0)->dropped;
	x->drops[1] = tp_net_path(b.net, 1)->dropped;
	x->pkts[0] = tp_net_path(b.net, 0)->pkts;
	x->pkts[1] = tp_net_path(b.net, 1)->pkts;
	x->gbps = (double)x->done * 8 / ((double)x->run_ns / 1e9) / 1e9;
	if (!x->quiet)
		print_message("# %u ch: %.3f Gb/s, rto %llu (undone %llu), rtx rto %llu rack %llu path %llu "
			      "tlp %llu, D-SACKs %llu (of path resends %llu), reordered %llu, path rule off %llu, "
			      "queue drops %llu/%llu, errors %llu\n",
			      x->nchan, x->gbps, (unsigned long long)x->st.rto_fired,
			      (unsigned long long)x->st.rto_undone, (unsigned long long)x->st.rtx_rto,
			      (unsigned long long)x->st.rtx_rack, (unsigned long long)x->st.rtx_path,
			      (unsigned long long)x->st.rtx_tlp,
			      (unsigned long long)x->st.rtx_spurious, (unsigned long long)x->st.path_dsack,
			      (unsigned long long)x->st.reo_seen, (unsigned long long)x->st.path_rule_off,
			      (unsigned long long)x->drops[0], (unsigned long long)x->drops[1],
			      (unsigned long long)x->errors);
	ccf_free(&b);
}

#endif
