// SPDX-License-Identifier: BSD-2-Clause
/* The bottleneck network: a time-ordered heap of events. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/tp_net.h"
#include "transport/tp_sim.h"

#define PKT_MAX	(TP_HDR_MAX + 65536)

enum ev_kind { EV_QUEUE, EV_DEQ, EV_RX };

struct ev {
	uint64_t at, seq;
	uint8_t kind;
	uint8_t path;
	struct tp_ep *to;
	uint8_t *buf;		/* EV_QUEUE, EV_RX: owned */
	uint32_t len;
	struct tp_rx_meta meta;
};

struct pair {
	struct tp_ep *a, *b;
	uint64_t busy_a, busy_b;
};

struct tp_net {
	struct tp_net_cfg cfg;
	struct pair pairs[TP_NET_MAX_PAIRS];
	uint32_t npairs;
	struct tp_net_path_stats ps[TP_NET_MAX_PATHS];
	uint64_t busy[TP_NET_MAX_PATHS];	/* bottleneck transmitter */
	uint64_t now, seq, rng;
	struct ev *heap;
	size_t n, cap;
	uint8_t *tx;
};

static bool before(const struct ev *a, const struct ev *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static int push(struct tp_net *n, struct ev e)
{
	size_t i;

	if (n->n == n->cap) {
		size_t ncap = n->cap ? 2 * n->cap : 1024;
		struct ev *h = realloc(n->heap, ncap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		n->heap = h;
		n->cap = ncap;
	}
	e.seq = n->seq++;
	i = n->n++;
	while (i && before(&e, &n->heap[(i - 1) / 2])) {
		n->heap[i] = n->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	n->heap[i] = e;
	return 0;
}

static struct ev pop(struct tp_net *n)
{
	struct ev top = n->heap[0], last = n->heap[--n->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n->n)
			break;
		if (c + 1 < n->n && before(&n->heap[c + 1], &n->heap[c]))
			c++;
		if (!before(&n->heap[c], &last))
			break;
		n->heap[i] = n->heap[c];
		i = c;
	}
	if (n->n)
		n->heap[i] = last;
	return top;
}

struct tp_net *tp_net_create(const struct tp_net_cfg *cfg)
{
	struct tp_net *n;

	if (!cfg || cfg->npaths > TP_NET_MAX_PATHS) {
		errno = EINVAL;
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->cfg = *cfg;
	n->rng = cfg->seed;
	if (!n->cfg.npaths)
		n->cfg.npaths = 1;
	for (uint32_t p = 0; p < n->cfg.npaths; p++) {
		struct tp_net_path_cfg *pc = &n->cfg.path[p];

		if (!pc->limit)
			pc->limit = 4u << 20;
		n->ps[p].caqm.thresh = pc->ecn_thresh ? pc->ecn_thresh : pc->limit / 4;
		n->ps[p].caqm.hint_unit = 128;
		n->ps[p].caqm.window_ns = 2 * (pc->delay_ns + cfg->return_delay_ns +
					       cfg->host_delay_ns) + 1000;
	}
	n->tx = malloc(PKT_MAX);
	if (!n->tx) {
		free(n);
		return NULL;
	}
	return n;
}

void tp_net_destroy(struct tp_net *n)
{
	if (!n)
		return;
	while (n->n) {
		struct ev e = pop(n);

		free(e.buf);
	}
	free(n->heap);
	free(n->tx);
	free(n);
}

int tp_net_add_pair(struct tp_net *n, struct tp_ep *a, struct tp_ep *b)
{
	if (n->npairs == TP_NET_MAX_PAIRS)
		return -ENOSPC;
	n->pairs[n->npairs] = (struct pair){ .a = a, .b = b };
	return (int)n->npairs++;
}

uint64_t tp_net_now(const struct tp_net *n) { return n->now; }

const struct tp_net_path_stats *tp_net_path(const struct tp_net *n, uint32_t path)
{
	return path < n->cfg.npaths ? &n->ps[path] : NULL;
}

void tp_net_set_jitter(struct tp_net *n, uint32_t path, uint64_t jitter_ns)
{
	if (path < n->cfg.npaths)
		n->cfg.path[path].jitter_ns = jitter_ns;
}

void tp_net_reset_window(struct tp_net *n)
{
	for (uint32_t p = 0; p < n->cfg.npaths; p++) {
		struct tp_net_path_stats *s = &n->ps[p];

		s->pkts = s->bytes = s->marked = s->dropped = 0;
		s->qmax = s->qlen;
	}
}

static uint64_t ser_ns(uint64_t rate, uint32_t len)
{
	return rate ? (uint64_t)((double)(len + TP_NET_WIRE_OVERHEAD) * 8e9 / (double)rate) : 0;
}

static void transmit(struct tp_net *n, int pi, bool from_a)
{
	struct pair *pr = &n->pairs[pi];
	uint64_t *busy = from_a ? &pr->busy_a : &pr->busy_b;
	struct tp_ep *ep = from_a ? pr->a : pr->b;

	while (*busy <= n->now) {
		struct tp_tx_info info;
		size_t len = tp_ep_tx(ep, n->now, n->tx, PKT_MAX, &info);
		struct ev e = { .len = (uint32_t)len };
		uint16_t entropy;

		if (!len)
			return;
		*busy = n->now + ser_ns(n->cfg.host_rate_bps, (uint32_t)len);
		/* The entropy first: a packet lost on its path had one too. */
		entropy = n->cfg.entropy ? n->cfg.entropy(n->cfg.entropy_ctx, pi, &info)
					 : (uint16_t)pi;
		if (from_a && n->cfg.drop &&
		    n->cfg.drop(n->cfg.drop_ctx, pi, &info, entropy % n->cfg.npaths, n->now))
			continue;
		e.meta = (struct tp_rx_meta){ .ecn = 2, .has_cci = info.has_cci,
					      .cci = info.cci, .entropy = entropy, .ctp = info.ctp };
		e.buf = malloc(len);
		if (!e.buf)
			return;
		memcpy(e.buf, n->tx, len);
		if (from_a) {
			e.kind = EV_QUEUE;
			e.path = (uint8_t)(entropy % n->cfg.npaths);
			e.to = pr->b;
			e.at = *busy + n->cfg.host_delay_ns;
		} else {
			e.kind = EV_RX;
			e.to = pr->a;
			e.at = *busy + n->cfg.return_delay_ns;
		}
		if (push(n, e))
			free(e.buf);
	}
}

/* A packet reaches the bottleneck: drop, mark, queue. */
static void enqueue(struct tp_net *n, struct ev *e)
{
	const struct tp_net_path_cfg *pc = &n->cfg.path[e->path];
	struct tp_net_path_stats *s = &n->ps[e->path];
	uint32_t wire = e->len + TP_NET_WIRE_OVERHEAD;
	uint64_t dep;

	if (s->qlen + wire > pc->limit) {
		s->dropped++;
		free(e->buf);
		return;
	}
	if (pc->ecn_thresh && s->qlen > pc->ecn_thresh && e->meta.ecn) {
		e->meta.ecn = 3;
		s->marked++;
	}
	if (pc->caqm && e->meta.has_cci)
		e->meta.cci = tp_caqm_switch(&s->caqm, n->now, (uint32_t)s->qlen, true, e->meta.cci);
	s->qlen += wire;
	if (s->qlen > s->qmax)
		s->qmax = s->qlen;
	dep = (n->busy[e->path] > n->now ? n->busy[e->path] : n->now) +
	      ser_ns(pc->rate_bps, e->len);
	n->busy[e->path] = dep;
	push(n, (struct ev){ .kind = EV_DEQ, .at = dep, .path = e->path, .len = wire });
	e->kind = EV_RX;
	e->at = dep + pc->delay_ns;
	if (pc->jitter_ns)
		e->at += tp_sim_rand(&n->rng) % pc->jitter_ns;
	if (push(n, *e))
		free(e->buf);
}

static uint64_t next_event(struct tp_net *n)
{
	uint64_t next = n->n ? n->heap[0].at : UINT64_MAX;

	for (uint32_t i = 0; i < n->npairs; i++) {
		struct pair *pr = &n->pairs[i];
		uint64_t t[4] = { tp_ep_next_deadline(pr->a), tp_ep_next_deadline(pr->b),
				  pr->busy_a > n->now ? pr->busy_a : UINT64_MAX,
				  pr->busy_b > n->now ? pr->busy_b : UINT64_MAX };

		for (int k = 0; k < 4; k++)
			if (t[k] < next)
				next = t[k];
	}
	return next;
}

bool tp_net_run(struct tp_net *n, uint64_t until, bool (*done)(void *ctx), void *ctx)
{
	for (;;) {
		uint64_t next;

		if (done && done(ctx))
			return true;
		for (uint32_t i = 0; i < n->npairs; i++) {
			transmit(n, (int)i, true);
			transmit(n, (int)i, false);
		}
		next = next_event(n);
		if (next == UINT64_MAX || next > until) {
			if (until != UINT64_MAX && until > n->now)
				n->now = until;
			return false;
		}
		if (next > n->now)
			n->now = next;
		while (n->n && n->heap[0].at <= n->now) {
			struct ev e = pop(n);

			switch (e.kind) {
			case EV_QUEUE:
				enqueue(n, &e);
				break;
			case EV_DEQ:
				n->ps[e.path].qlen -= e.len;
				n->ps[e.path].pkts++;
				n->ps[e.path].bytes += e.len;
				break;
			default:
				tp_ep_rx(e.to, n->now, e.buf, e.len, &e.meta);
				free(e.buf);
				break;
			}
		}
		for (uint32_t i = 0; i < n->npairs; i++) {
			tp_ep_tick(n->pairs[i].a, n->now);
			tp_ep_tick(n->pairs[i].b, n->now);
		}
	}
}
