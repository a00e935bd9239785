/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Bulk flows over the bottleneck network (user/transport/tp_net.h): each
 * flow is an endpoint pair with `nchan` channels from A to B, every channel
 * with its own congestion-control instance on both sides, and keeps
 * `depth` Writes of `msg` bytes outstanding per channel from its start
 * time on. Goodput is what the initiator saw completed. Shared by the CC
 * and TPG tests and by the bench.
 */
#ifndef UBXDP_CC_FLOWS_H
#define UBXDP_CC_FLOWS_H

#include <stdlib.h>
#include <string.h>

#include "transport/cc.h"
#include "transport/tp.h"
#include "transport/tp_net.h"
#include "transport/tpg.h"

#define CCF_MAX_FLOWS	16
#define CCF_MAX_CHANS	8

struct ccf_chan {
	struct tp_chan *ch[2];
	struct tp_cc *cc[2];
	uint32_t outstanding;
	uint64_t done_bytes;
};

struct ccf_flow {
	struct tp_ep *ep[2];
	struct ccf_chan c[CCF_MAX_CHANS];
	uint8_t *src, *dst;
	struct tp_rkey token;
	uint64_t start_ns;
	uint64_t done_bytes;
	struct tpg *g;		/* channel group, or NULL: each channel on its own */
};

struct ccf {
	struct tp_net *net;
	struct ccf_flow f[CCF_MAX_FLOWS];
	unsigned nflows, nchan;
	uint32_t msg, depth;
	uint64_t errors;	/* failed operations or channels */
	uint64_t stop_ns;	/* no new Writes after this; 0: never */
	uint64_t last_post_ns, last_done_ns;	/* the latest Write posted, completed */
};

/* The channel config the tests and the bench start from: SR, 1 KiB MTU,
 * windows of 512, the static RTO of 512 us. */
static inline void ccf_chan_base(struct tp_chan_config *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = TP_MODE_RTP_SR;
	c->mtu = 1024;
	c->window = 512;
	c->ooo_range = 512;
	c->rto_static_ns = TP_RTO_512US;
	c->retry_limit = 12;
}

static inline void ccf_free(struct ccf *b)
{
	tp_net_destroy(b->net);
	for (unsigned i = 0; i < b->nflows; i++) {
		struct ccf_flow *f = &b->f[i];

		for (int s = 0; s < 2; s++)
			tp_ep_destroy(f->ep[s]);
		for (unsigned k = 0; k < b->nchan; k++)
			for (int s = 0; s < 2; s++)
				tp_cc_destroy(f->c[k].cc[s]);
		free(f->src);
		free(f->dst);
		tpg_destroy(f->g);
	}
	memset(b, 0, sizeof(*b));
}

/* The net's entropy hook: the group's source port, else the pair's index. */
static inline uint16_t ccf_entropy(void *ctx, int pair, const struct tp_tx_info *info)
{
	struct ccf *b = ctx;

	return b->f[pair].g ? tpg_entropy(b->f[pair].g, info) : (uint16_t)pair;
}

/*
 * 0 or -1. base: the channel config of both sides (cc fields ignored).
 * tpg: the channels of a flow form a group with this LB (NULL: no group).
 */
/* rx: the receiving ends' channels (ch[1]) when they differ from base. */
static inline int ccf_init_ends(struct ccf *b, unsigned nflows, unsigned nchan,
				const struct tp_net_cfg *net, const struct tp_cc_config *cc,
				const struct tp_chan_config *base, const struct tp_chan_config *rx,
				uint32_t msg, uint32_t depth, uint64_t stagger_ns, uint64_t seed,
				const struct tpg_config *tpg)
{
	struct tp_net_cfg nc = *net;

	memset(b, 0, sizeof(*b));
	if (!nc.seed)
		nc.seed = seed;
	if (nflows > CCF_MAX_FLOWS || nchan > CCF_MAX_CHANS || !nchan)
		return -1;
	if (tpg) {
		nc.entropy = ccf_entropy;
		nc.entropy_ctx = b;
	}
	b->net = tp_net_create(&nc);
	if (!b->net)
		return -1;
	b->nflows = nflows;
	b->nchan = nchan;
	b->msg = msg;
	b->depth = depth;
	for (unsigned i = 0; i < nflows; i++) {
		struct ccf_flow *f = &b->f[i];

		f->start_ns = i * stagger_ns;
		if (tpg && !(f->g = tpg_create(tpg)))
			return -1;
		for (int s = 0; s < 2; s++) {
			struct tp_ep_config ec = { .seed = seed + i * 31 + (uint64_t)s };

			f->ep[s] = tp_ep_create(&ec);
			if (!f->ep[s])
				return -1;
		}
		for (unsigned k = 0; k < nchan; k++) {
			for (int s = 0; s < 2; s++) {
				struct tp_chan_config c = s ? *rx : *base;
				struct tp_cc_config ccc = *cc;

				if (f->g)
					tpg_prepare(f->g, &c, &ccc, nc.npaths ? nc.npaths : 1);
				f->c[k].cc[s] = tp_cc_create(&ccc);
				if (!f->c[k].cc[s])
					return -1;
				tp_cc_attach(f->c[k].cc[s], &c);
				c.user = &f->c[k];
				f->c[k].ch[s] = tp_chan_create(f->ep[s], &c);
				if (!f->c[k].ch[s])
					return -1;
			}
			if (f->g && tpg_add(f->g, f->c[k].ch[0]) < 0)
				return -1;
			for (int s = 0; s < 2; s++)
				if (tp_chan_connect(f->c[k].ch[s], tp_chan_tpn(f->c[k].ch[1 - s]),
						    tp_chan_init_psn(f->c[k].ch[1 - s])))
					return -1;
		}
		f->src = calloc(1, msg);
		f->dst = calloc(1, msg);
		if (!f->src || !f->dst || tp_mr_reg(f->ep[1], f->dst, msg, &f->token))
			return -1;
		if (tp_net_add_pair(b->net, f->ep[0], f->ep[1]) < 0)
			return -1;
	}
	return 0;
}

static inline int ccf_init_tpg(struct ccf *b, unsigned nflows, unsigned nchan,
			       const struct tp_net_cfg *net, const struct tp_cc_config *cc,
			       const struct tp_chan_config *base, uint32_t msg, uint32_t depth,
			       uint64_t stagger_ns, uint64_t seed, const struct tpg_config *tpg)
{
	return ccf_init_ends(b, nflows, nchan, net, cc, base, base, msg, depth, stagger_ns, seed, tpg);
}

static inline int ccf_init(struct ccf *b, unsigned nflows, unsigned nchan,
			   const struct tp_net_cfg *net, const struct tp_cc_config *cc,
			   const struct tp_chan_config *base, uint32_t msg, uint32_t depth,
			   uint64_t stagger_ns, uint64_t seed)
{
	return ccf_init_tpg(b, nflows, nchan, net, cc, base, msg, depth, stagger_ns, seed, NULL);
}

/* Drain completions and keep the pipes full; the tp_net_run done() hook. */
static inline bool ccf_pump(void *ctx)
{
	struct ccf *b = ctx;
	uint64_t now = tp_net_now(b->net);

	for (unsigned i = 0; i < b->nflows; i++) {
		struct ccf_flow *f = &b->f[i];
		struct tp_event ev;

		for (int s = 0; s < 2; s++) {
			while (tp_ep_poll(f->ep[s], &ev)) {
				struct ccf_chan *c = ev.user;

				if (f->g)
					tpg_on_event(f->g, &ev);
				if (ev.type == TP_EV_CHAN_ERROR || ev.status != TP_ST_OK) {
					b->errors++;
					continue;
				}
				if (ev.type == TP_EV_WRITE_DONE && c) {
					c->outstanding--;
					c->done_bytes += ev.len;
					f->done_bytes += ev.len;
					b->last_done_ns = now;
				}
			}
		}
		if (now < f->start_ns || (b->stop_ns && now >= b->stop_ns))
			continue;
		if (f->g) {
			uint64_t q = 0;
			int k;

			for (unsigned j = 0; j < b->nchan; j++)
				q += tpg_queued(f->g, j);
			while (q < (uint64_t)b->depth * b->nchan * b->msg &&
			       (k = tpg_post_write(f->g, f->src, b->msg, (uintptr_t)f->dst,
						   f->token, 0)) >= 0) {
				f->c[k].outstanding++;
				q += b->msg;
				b->last_post_ns = now;
			}
			continue;
		}
		for (unsigned k = 0; k < b->nchan; k++) {
			struct ccf_chan *c = &f->c[k];

			while (c->outstanding < b->depth &&
			       !tp_post_write(c->ch[0], f->src, b->msg, (uintptr_t)f->dst,
					      f->token, 0)) {
				c->outstanding++;
				b->last_post_ns = now;
			}
		}
	}
	return false;
}

/* Run until `until`; a flow whose start time comes needs a wake-up. */
static inline void ccf_run(struct ccf *b, uint64_t until)
{
	for (;;) {
		uint64_t now = tp_net_now(b->net), next = until;

		for (unsigned i = 0; i < b->nflows; i++)
			if (b->f[i].start_ns > now && b->f[i].start_ns < next)
				next = b->f[i].start_ns;
		ccf_pump(b);
		tp_net_run(b->net, next, ccf_pump, b);
		if (next >= until)
			return;
	}
}

static inline void ccf_flow_bytes(const struct ccf *b, double *out)
{
	for (unsigned i = 0; i < b->nflows; i++)
		out[i] = (double)b->f[i].done_bytes;
}

static inline void ccf_total_stats(const struct ccf *b, struct tp_stats *sum)
{
	struct tp_stats st;
	uint64_t *d = (uint64_t *)sum;

	memset(sum, 0, sizeof(*sum));
	for (unsigned i = 0; i < b->nflows; i++)
		for (int s = 0; s < 2; s++) {
			tp_ep_stats(b->f[i].ep[s], &st);
			for (size_t k = 0; k < tp_stats_count(); k++)
				d[k] += tp_stats_get(&st, k);
		}
}

#endif
