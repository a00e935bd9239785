// SPDX-License-Identifier: BSD-2-Clause
/* The simulated link: a time-ordered heap of packets in flight. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/tp_sim.h"
#include "lib/frame.h"

#define PKT_MAX	(TP_HDR_MAX + 65536 + 128)

struct flight {
	uint64_t at, seq;
	int to;
	uint8_t *buf;
	size_t len;
	uint8_t ecn;
	bool ctp;	/* raw CTP packet: UBoE never carries one, so never a frame */
};

struct tp_sim {
	struct tp_sim_cfg cfg;
	struct tp_ep *ep[2];
	uint64_t now, rng, seq;
	uint64_t busy[2];		/* transmitter busy until */
	struct flight *heap;
	size_t n, cap;
	uint8_t *tx, *frame;
	struct tp_sim_stats st;
};

uint64_t tp_sim_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double uniform(struct tp_sim *s)
{
	return (double)(tp_sim_rand(&s->rng) >> 11) / (double)(1ull << 53);
}

static bool before(const struct flight *a, const struct flight *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static int heap_push(struct tp_sim *s, struct flight f)
{
	size_t i;

	if (s->n == s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 1024;
		struct flight *h = realloc(s->heap, ncap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		s->heap = h;
		s->cap = ncap;
	}
	i = s->n++;
	while (i && before(&f, &s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = f;
	return 0;
}

static struct flight heap_pop(struct tp_sim *s)
{
	struct flight top = s->heap[0], last = s->heap[--s->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= s->n)
			break;
		if (c + 1 < s->n && before(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!before(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->n)
		s->heap[i] = last;
	return top;
}

struct tp_sim *tp_sim_create(const struct tp_sim_cfg *cfg, struct tp_ep *a, struct tp_ep *b)
{
	struct tp_sim *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cfg = *cfg;
	s->ep[0] = a;
	s->ep[1] = b;
	s->rng = cfg->seed ^ 0x5151;
	s->tx = malloc(PKT_MAX);
	s->frame = malloc(PKT_MAX);
	if (!s->tx || !s->frame) {
		tp_sim_destroy(s);
		return NULL;
	}
	return s;
}

void tp_sim_destroy(struct tp_sim *s)
{
	if (!s)
		return;
	while (s->n)
		free(heap_pop(s).buf);
	free(s->heap);
	free(s->tx);
	free(s->frame);
	free(s);
}

uint64_t tp_sim_now(const struct tp_sim *s) { return s->now; }
const struct tp_sim_stats *tp_sim_stats(const struct tp_sim *s) { return &s->st; }

void tp_sim_set_delay(struct tp_sim *s, int dir, uint64_t delay_ns)
{
	s->cfg.dir[dir & 1].delay_ns = delay_ns;
}

/* Wrap in a UBoE frame (IPv4, ICRC), as the datapath would. */
static size_t to_frame(struct tp_sim *s, int from, const uint8_t *tp, size_t len)
{
	struct ub_pkt_spec spec;

	ub_pkt_spec_init(&spec);
	spec.src_ip[3] = (uint8_t)(from + 1);
	spec.dst_ip[3] = (uint8_t)(2 - from);
	spec.ecn = 2;	/* ECT(0) */
	if (tp_pkt_to_spec(tp, len, &spec))
		return 0;
	return ub_build_uboe(&spec, s->frame, PKT_MAX);
}

static void transmit(struct tp_sim *s, int from)
{
	const struct tp_sim_dir_cfg *d = &s->cfg.dir[from];
	struct tp_tx_info info;
	size_t len;

	while (s->busy[from] <= s->now) {
		struct tp_sim_pkt p;
		struct flight f = { .to = 1 - from };
		bool frames;
		uint64_t ser = 0;
		int copies = 1;

		len = tp_ep_tx(s->ep[from], s->now, s->tx, PKT_MAX, &info);
		if (!len)
			return;
		s->st.sent[from]++;
		if (d->rate_bps)	/* plus Ethernet, IP, UDP and ICRC: 64 bytes */
			ser = (uint64_t)((len + 64) * 8 * 1e9 / (double)d->rate_bps);
		s->busy[from] = s->now + ser;
		p = (struct tp_sim_pkt){ .from = from, .tp = s->tx, .len = len, .info = info };
		f.ctp = info.ctp;
		frames = s->cfg.frames && !info.ctp;
		if ((s->cfg.filter && s->cfg.filter(s->cfg.filter_ctx, &p, s->now)) ||
		    uniform(s) < (info.data ? d->loss_data : d->loss_resp)) {
			s->st.lost[from]++;
			if (s->cfg.trace && frames) {
				size_t n = to_frame(s, from, s->tx, len);

				if (n)
					s->cfg.trace(s->cfg.trace_ctx, from, s->frame, n, true);
			}
			continue;
		}
		if (d->dup > 0 && uniform(s) < d->dup) {
			copies = 2;
			s->st.duped[from]++;
		}
		for (int c = 0; c < copies; c++) {
			const uint8_t *src = s->tx;
			size_t n = len;

			f.at = s->busy[from] + d->delay_ns;
			if (d->reorder > 0 && d->reorder_ns && uniform(s) < d->reorder)
				f.at += tp_sim_rand(&s->rng) % d->reorder_ns;
			if (d->stall_ns && f.at >= d->stall_at_ns && f.at < d->stall_at_ns + d->stall_ns)
				f.at = d->stall_at_ns + d->stall_ns;
			f.seq = s->seq++;
			if (frames) {
				n = to_frame(s, from, s->tx, len);
				if (!n) {
					s->st.frame_errors++;
					break;
				}
				src = s->frame;
				if (s->cfg.trace && c == 0)
					s->cfg.trace(s->cfg.trace_ctx, from, s->frame, n, false);
			}
			f.buf = malloc(n);
			if (!f.buf)
				return;
			memcpy(f.buf, src, n);
			f.len = n;
			if (heap_push(s, f))
				free(f.buf);
		}
	}
}

static void arrive(struct tp_sim *s, struct flight *f)
{
	const uint8_t *tp = f->buf;
	size_t len = f->len;
	struct tp_rx_meta meta = { 0 };

	s->st.delivered[1 - f->to]++;
	meta.ctp = f->ctp;
	if (s->cfg.frames && !f->ctp) {
		struct ub_view v;

		/* Checked here too, so that a bad frame shows in the link's stats. */
		if (ub_parse_frame(f->buf, f->len, 0, &v) != UB_PARSE_OK || !v.icrc_ok)
			s->st.frame_errors++;
		tp_ep_rx_frame(s->ep[f->to], s->now, f->buf, f->len);
		return;
	}
	tp_ep_rx(s->ep[f->to], s->now, tp, len, &meta);
}

bool tp_sim_run(struct tp_sim *s, uint64_t until, bool (*done)(void *ctx), void *ctx)
{
	for (;;) {
		uint64_t next = UINT64_MAX;

		/* done() may post work: transmit after it. */
		if (done && done(ctx))
			return true;
		for (int i = 0; i < 2; i++)
			transmit(s, i);
		if (s->n)
			next = s->heap[0].at;
		for (int i = 0; i < 2; i++) {
			uint64_t t = tp_ep_next_deadline(s->ep[i]);

			if (t < next)
				next = t;
			if (s->busy[i] > s->now && s->busy[i] < next)
				next = s->busy[i];
		}
		if (next == UINT64_MAX || next > until)
			return false;
		if (next > s->now)
			s->now = next;
		while (s->n && s->heap[0].at <= s->now) {
			struct flight f = heap_pop(s);

			arrive(s, &f);
			free(f.buf);
		}
		for (int i = 0; i < 2; i++)
			tp_ep_tick(s->ep[i], s->now);
	}
}
