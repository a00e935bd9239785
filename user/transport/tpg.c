// SPDX-License-Identifier: BSD-2-Clause
/* TP channel groups: channel choice by queue depth, per-flow/per-packet entropy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tpg.h"

struct tpg {
	struct tpg_config cfg;
	struct tp_chan *ch[TPG_MAX_CHANS];
	uint64_t queued[TPG_MAX_CHANS];
	unsigned n, rr;
};

struct tpg *tpg_create(const struct tpg_config *cfg)
{
	struct tpg *g;

	if (!cfg || (cfg->lb != TPG_LB_FLOW && cfg->lb != TPG_LB_PACKET)) {
		errno = EINVAL;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->cfg = *cfg;
	if (!g->cfg.sport_base)
		g->cfg.sport_base = 0xC000;
	if (!g->cfg.sport_span)
		g->cfg.sport_span = 256;
	if (!g->cfg.sack_after)
		g->cfg.sack_after = 32;
	return g;
}

void tpg_destroy(struct tpg *g)
{
	free(g);
}

void tpg_prepare(const struct tpg *g, struct tp_chan_config *chan, struct tp_cc_config *cc,
		 uint32_t paths)
{
	if (g->cfg.lb != TPG_LB_PACKET)
		return;
	chan->sack_after = g->cfg.sack_after;
	chan->no_fast_rtx = true;
	if (chan->mode == TP_MODE_RTP_GBN_FAST)
		chan->mode = TP_MODE_RTP_GBN;	/* a NAK would be reordering */
	/* SR: time-based loss detection instead. Go-Back-N drops what comes
	 * out of order, so sprayed it can only go back at the RTO. */
	chan->rack = chan->mode == TP_MODE_RTP_SR;
	if (cc)
		cc->paths = paths;
}

int tpg_add(struct tpg *g, struct tp_chan *ch)
{
	if (tpg_index(g, ch) >= 0)
		return -EEXIST;
	if (g->n == TPG_MAX_CHANS)
		return -ENOSPC;
	g->ch[g->n] = ch;
	g->queued[g->n] = 0;
	return (int)g->n++;
}

unsigned tpg_count(const struct tpg *g) { return g->n; }
struct tp_chan *tpg_chan(const struct tpg *g, unsigned i) { return i < g->n ? g->ch[i] : NULL; }
uint64_t tpg_queued(const struct tpg *g, unsigned i) { return i < g->n ? g->queued[i] : 0; }

int tpg_index(const struct tpg *g, const struct tp_chan *ch)
{
	for (unsigned i = 0; i < g->n; i++)
		if (g->ch[i] == ch)
			return (int)i;
	return -1;
}

int tpg_pick(struct tpg *g, size_t len)
{
	int best = -1;

	(void)len;
	for (unsigned k = 0; k < g->n; k++) {
		unsigned i = (g->rr + k) % g->n;

		if (tp_chan_failed(g->ch[i]))
			continue;
		if (best < 0 || g->queued[i] < g->queued[best])
			best = (int)i;
	}
	if (best >= 0)
		g->rr = ((unsigned)best + 1) % g->n;
	return best;
}

/* Try the members from the shallowest queue on; a full one passes the turn. */
#define TPG_POST(g, len, call)							\
	do {									\
		int i_ = tpg_pick(g, len), err_ = -ENOTCONN;			\
		for (unsigned k_ = 0; i_ >= 0 && k_ < (g)->n; k_++) {		\
			unsigned j_ = ((unsigned)i_ + k_) % (g)->n;		\
			struct tp_chan *ch_ = (g)->ch[j_];			\
			err_ = (call);						\
			if (!err_) {						\
				(g)->queued[j_] += (len);			\
				return (int)j_;					\
			}							\
			if (err_ != -EAGAIN)					\
				break;						\
		}								\
		return err_;							\
	} while (0)

int tpg_post_send(struct tpg *g, const void *buf, size_t len, uint64_t wr_id)
{
	TPG_POST(g, len, tp_post_send(ch_, buf, len, wr_id));
}

int tpg_post_write(struct tpg *g, const void *buf, size_t len, uint64_t remote_va,
		   uint32_t token_id, uint64_t wr_id)
{
	TPG_POST(g, len, tp_post_write(ch_, buf, len, remote_va, token_id, wr_id));
}

void tpg_on_event(struct tpg *g, const struct tp_event *ev)
{
	int i;

	if (ev->type != TP_EV_SEND_DONE && ev->type != TP_EV_WRITE_DONE &&
	    ev->type != TP_EV_READ_DONE)
		return;
	i = tpg_index(g, ev->chan);
	if (i < 0)
		return;
	g->queued[i] = g->queued[i] > ev->len ? g->queued[i] - ev->len : 0;
}

uint16_t tpg_entropy(const struct tpg *g, const struct tp_tx_info *info)
{
	int i = tpg_index(g, info->chan);
	unsigned idx = i < 0 ? 0 : (unsigned)i;

	if (g->cfg.lb == TPG_LB_PACKET && info->data)
		/* Consecutive PSNs take consecutive ports: spread, yet reproducible. */
		return (uint16_t)(g->cfg.sport_base + (idx + info->psn) % g->cfg.sport_span);
	return (uint16_t)(g->cfg.sport_base + idx);
}

int tpg_lb_parse(const char *s, enum tpg_lb *lb)
{
	if (s && !strcmp(s, "flow"))
		*lb = TPG_LB_FLOW;
	else if (s && !strcmp(s, "packet"))
		*lb = TPG_LB_PACKET;
	else
		return -EINVAL;
	return 0;
}

const char *tpg_lb_name(enum tpg_lb lb)
{
	return lb == TPG_LB_PACKET ? "packet" : "flow";
}
