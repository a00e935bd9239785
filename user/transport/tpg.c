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
	 * adds, every TPG_DECAY_EVERY packets a quarter goes), their sum over
	 * each channel's ports, and the port of each recent packet (offset
	 * from sport_base). */
	uint16_t *pen;
	uint64_t pen_sum[TPG_MAX_CHANS];
	uint32_t set_of[TPG_MAX_CHANS];	/* each channel's first port now */
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
	if (!g->cfg.sport_chan)
		g->cfg.sport_chan = 16;
	if (g->cfg.sport_chan > g->cfg.sport_span)
		g->cfg.sport_chan = g->cfg.sport_span;
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
	/* Each port is one ECMP path, FIFO: tpg_entropy() names each packet's. */
	chan->entropies = chan->rack ? g->cfg.sport_span : 0;
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
#define TPG_SLIDE	2	/* rounds of a channel's ports before its set
				 * moves on by one */

/* The sum of the scores of the ports from first on, per of them. */
static uint64_t set_score(const struct tpg *g, uint32_t first, uint32_t per)
{
	uint64_t sum = 0;

	for (uint32_t k = 0; k < per; k++)
		sum += g->pen[(first + k) % g->cfg.sport_span];
	return sum;
}

/*
 * Per packet, path-aware (in the spirit of AWS SRD): consecutive PSNs take
 * the channel's few ports (sport_chan) in turn, PSN n the port of its set
 * congruent to n, so that a packet's path carries a later one of its
 * channel a few packets on: delivered, that one shows the earlier lost at
 * once (tp_rack_detect), no reordering window to wait out. The set slides
 * on by one port every TPG_SLIDE rounds (one packet in 2 x sport_chan is
 * the last on its port for a while, left to the time rule), so that the
 * channel spreads over the span as an ECMP hash maps it, not over a few
 * ports' luck (a fixed set of 16 held two sprayed channels to 1.6x one
 * link behind 100 ms queues, main 1.95x; sliding every 8 rounds, 1.76x to
 * 1.84x). The channels start their sets sport_chan apart.
 *
 * A port whose packets were being resent (lost, or so late past the others
 * that they seemed lost) well more often than the others of the set is
 * passed over: the path an ECMP hash maps it to is worse than the rest,
 * and the next port that is not is taken instead. A resend leaves by
 * another port than its original. Losses spread evenly over the ports (the
 * paths alike) change nothing: the rotation is the even spread. The scores
 * fade (a quarter every 256 packets), so a path that recovers is taken again.
 */
static uint16_t spray_port(struct tpg *g, unsigned idx, const struct tp_tx_info *info)
{
	uint32_t span = g->cfg.sport_span, per = g->cfg.sport_chan;
	/* From the channel's initial PSN, which is random: counted from PSN 0,
	 * the channels' sets would sit at random offsets and could overlap
	 * for the whole run, narrowing the group's spread. */
	uint32_t sent = (uint32_t)tp_psn_diff(info->psn, tp_chan_init_psn(info->chan)) & TP_PSN_MASK;
	uint32_t first = (idx * per + sent / (TPG_SLIDE * per)) % span, r, c, best;
	uint16_t *slot = &g->port_of[idx][info->psn % TPG_RING];
	uint64_t bar;

	if (!info->rtx && first != g->set_of[idx]) {
		g->set_of[idx] = first;
		g->pen_sum[idx] = set_score(g, first, per);
	}
	/* A resend's PSN is older: the set now, whose ports carry later
	 * packets to show whether it arrived. */
	first = g->set_of[idx];
	r = (info->psn % per + per - first % per) % per;
	c = (first + r) % span;
	if (g->cfg.no_steer)
		return (uint16_t)c;

	if (info->rtx && *slot < span) {
		uint32_t p = *slot, add = g->pen[p] + TPG_PEN_LOSS > 0xffff ? 0xffff - g->pen[p] :
					  TPG_PEN_LOSS;

		g->pen[p] = (uint16_t)(g->pen[p] + add);
		g->pen_sum[idx] += add;
		if (c == p) {
			r = (r + 1) % per;
			c = (first + r) % span;
		}
	}
	/* pen > 2 x the mean of the channel's ports + SKIP, without dividing */
	bar = 2 * g->pen_sum[idx] + (uint64_t)TPG_PEN_SKIP * per;
	best = c;
	for (uint32_t k = 0; k < TPG_PEN_LOOK && k < per; k++) {
		uint32_t q = (first + (r + k) % per) % span;

		if ((uint64_t)g->pen[q] * per <= bar) {
			best = q;
			break;
		}
		if (g->pen[q] < g->pen[best])
			best = q;
	}
	*slot = (uint16_t)best;
	if (++g->sent % TPG_DECAY_EVERY == 0) {
		for (uint32_t p = 0; p < span; p++)
			g->pen[p] -= g->pen[p] / 4;
		for (unsigned i = 0; i < g->n; i++)
			g->pen_sum[i] = set_score(g, g->set_of[i], per);
	}
	return (uint16_t)best;
}

uint16_t tpg_entropy(struct tpg *g, const struct tp_tx_info *info)
{
	int i = tpg_index(g, info->chan);
	unsigned idx = i < 0 ? 0 : (unsigned)i;

	if (g->cfg.lb == TPG_LB_PACKET && info->data) {
		uint16_t e;

		if (i < 0)
			return (uint16_t)(g->cfg.sport_base + info->psn % g->cfg.sport_span);
		e = spray_port(g, idx, info);
		tp_chan_tx_entropy(info->chan, info->psn, e);
		return (uint16_t)(g->cfg.sport_base + e);
	}
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
