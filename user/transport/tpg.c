// SPDX-License-Identifier: BSD-2-Clause
/* TP channel groups: channel choice by queue depth, per-flow/per-packet entropy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/tpg.h"

/* Per packet: the port each channel's last packets took, by PSN. */
#define TPG_RING	1024

struct tpg {
	struct tpg_config cfg;
	struct tp_chan *ch[TPG_MAX_CHANS];
	uint64_t queued[TPG_MAX_CHANS];
	unsigned n, rr;
	/* Per packet: each port's loss score (a resend of a packet it carried
	 * adds, every TPG_DECAY_EVERY packets a quarter goes), and the port of
	 * each recent packet (offset from sport_base). */
	uint16_t *pen;
	uint64_t pen_sum;
	uint16_t *port_of[TPG_MAX_CHANS];
	uint32_t sent;
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
	if (g->cfg.lb == TPG_LB_PACKET) {
		g->pen = calloc(g->cfg.sport_span, sizeof(*g->pen));
		if (!g->pen) {
			free(g);
			return NULL;
		}
	}
	return g;
}

void tpg_destroy(struct tpg *g)
{
	if (!g)
		return;
	for (unsigned i = 0; i < TPG_MAX_CHANS; i++)
		free(g->port_of[i]);
	free(g->pen);
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
	if (g->pen && !g->port_of[g->n]) {
		g->port_of[g->n] = malloc(TPG_RING * sizeof(uint16_t));
		if (!g->port_of[g->n])
			return -ENOMEM;
		memset(g->port_of[g->n], 0xff, TPG_RING * sizeof(uint16_t));
	}
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
		   struct tp_rkey rkey, uint64_t wr_id)
{
	TPG_POST(g, len, tp_post_write(ch_, buf, len, remote_va, rkey, wr_id));
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

#define TPG_PEN_LOSS	64	/* a port's score for a packet of it resent */
#define TPG_PEN_SKIP	32	/* a port scored this much over twice the mean is
				 * passed over ... */
#define TPG_PEN_LOOK	4	/* ... for the first of the next few that is not */
#define TPG_DECAY_EVERY	256	/* packets between decays (a quarter each) */

/*
 * Per packet, path-aware (in the spirit of AWS SRD): consecutive PSNs take
 * consecutive ports, unless a port's packets were being resent (lost, or so
 * late past the others that they seemed lost) well more often than the
 * others': the path an ECMP hash maps such a port to is worse than the rest,
 * and the next port that is not is taken instead. A resend leaves by
 * another port than its original. Losses spread evenly over the ports (the
 * paths alike) change nothing: the rotation is the even spread. The scores
 * fade (a quarter every 256 packets), so a path that recovers is taken again.
 */
static uint16_t spray_port(struct tpg *g, unsigned idx, const struct tp_tx_info *info)
{
	uint32_t span = g->cfg.sport_span, c = (idx + info->psn) % span, best;
	uint16_t *slot = &g->port_of[idx][info->psn % TPG_RING];

	if (g->cfg.no_steer)
		return c;
	uint64_t bar;

	if (info->rtx && *slot < span) {
		uint32_t p = *slot, add = g->pen[p] + TPG_PEN_LOSS > 0xffff ? 0xffff - g->pen[p] :
					  TPG_PEN_LOSS;

		g->pen[p] = (uint16_t)(g->pen[p] + add);
		g->pen_sum += add;
		if (c == p)
			c = (c + 1) % span;
	}
	/* pen > 2 x mean + SKIP, without dividing */
	bar = 2 * g->pen_sum + (uint64_t)TPG_PEN_SKIP * span;
	best = c;
	for (uint32_t k = 0; k < TPG_PEN_LOOK && k < span; k++) {
		uint32_t q = (c + k) % span;

		if ((uint64_t)g->pen[q] * span <= bar) {
			best = q;
			break;
		}
		if (g->pen[q] < g->pen[best])
			best = q;
	}
	*slot = (uint16_t)best;
	if (++g->sent % TPG_DECAY_EVERY == 0) {
		g->pen_sum = 0;
		for (uint32_t p = 0; p < span; p++) {
			g->pen[p] -= g->pen[p] / 4;
			g->pen_sum += g->pen[p];
		}
	}
	return (uint16_t)best;
}

uint16_t tpg_entropy(struct tpg *g, const struct tp_tx_info *info)
{
	int i = tpg_index(g, info->chan);
	unsigned idx = i < 0 ? 0 : (unsigned)i;

	if (g->cfg.lb == TPG_LB_PACKET && info->data)
		return (uint16_t)(g->cfg.sport_base +
				  (i < 0 ? (idx + info->psn) % g->cfg.sport_span : spray_port(g, idx, info)));
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
