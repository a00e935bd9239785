// SPDX-License-Identifier: BSD-2-Clause
/*
 * The send side's work requests: their records (wr_id = gen << 32 | index),
 * their submission to the channel's core (held back, in order, while the
 * core has no room), their completion records.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "urma/urma_int.h"

/* ---- work request records ---------------------------------------------------- */

uint64_t ubx_wr_id(struct ubx_port *p, const struct ubx_wr *w)
{
	(void)p;
	return (uint64_t)w->gen << 32 | w->idx;
}

struct ubx_wr *ubx_wr_alloc(struct ubx_port *p, uint64_t *wr_id)
{
	struct ubx_wr *w;
	uint32_t i;

	if (!p->nfree) {
		uint32_t n = p->nwrs ? p->nwrs * 2 : 256;
		struct ubx_wr **a = realloc(p->wrs, n * sizeof(*a));
		uint32_t *f;

		if (!a)
			return NULL;
		p->wrs = a;
		f = realloc(p->wr_free, n * sizeof(*f));
		if (!f)
			return NULL;
		p->wr_free = f;
		for (i = p->nwrs; i < n; i++) {
			p->wrs[i] = NULL;
			p->wr_free[p->nfree++] = n - 1 - (i - p->nwrs);
		}
		p->nwrs = n;
	}
	i = p->wr_free[--p->nfree];
	if (!p->wrs[i]) {
		p->wrs[i] = calloc(1, sizeof(*w));
		if (!p->wrs[i]) {
			p->nfree++;
			return NULL;
		}
	}
	w = p->wrs[i];
	{
		uint8_t *buf = w->buf;
		size_t cap = w->buf_cap;
		uint32_t gen = (w->gen + 1) & 0x7fffffff;

		memset(w, 0, offsetof(struct ubx_wr, sg));
		w->buf = buf;
		w->buf_cap = cap;
		w->gen = gen ? gen : 1;
	}
	w->idx = i;
	w->used = true;
	*wr_id = ubx_wr_id(p, w);
	return w;
}

struct ubx_wr *ubx_wr_lookup(struct ubx_port *p, uint64_t wr_id)
{
	uint32_t i = (uint32_t)wr_id;
	struct ubx_wr *w;

	if (wr_id & BOUNCE_TAG || i >= p->nwrs)
		return NULL;
	w = p->wrs[i];
	return w && w->used && w->gen == (uint32_t)(wr_id >> 32) ? w : NULL;
}

void ubx_wr_free(struct ubx_port *p, struct ubx_wr *w)
{
	w->used = false;
	/* Big buffers go back; small ones stay for the next request. */
	if (w->buf_cap > 65536) {
		free(w->buf);
		w->buf = NULL;
		w->buf_cap = 0;
	}
	p->wr_free[p->nfree++] = w->idx;
}

/* ---- completion records ---------------------------------------------------------- */

urma_cr_status_t ubx_cr_status(enum tp_status st, uint8_t rspinfo)
{
	switch (st) {
	case TP_ST_OK:			return URMA_CR_SUCCESS;
	case TP_ST_RNR:			return URMA_CR_RNR_RETRY_CNT_EXC_ERR;
	case TP_ST_PAGE_FAULT:		return URMA_CR_REM_ACCESS_ABORT_ERR;
	case TP_ST_COMPLETER_ERR:
		switch (rspinfo) {
		case TP_RSPINFO_BAD_TOKEN:
		case TP_RSPINFO_RANGE:
		case TP_RSPINFO_TOKEN_VALUE:
		case TP_RSPINFO_ACCESS:	return URMA_CR_REM_ACCESS_ABORT_ERR;
		case TP_RSPINFO_TOO_LONG: return URMA_CR_REM_OPERATION_ERR;
		case TP_RSPINFO_PROTOCOL:
		case TP_RSPINFO_ALIGN:
		case TP_RSPINFO_UNSUPPORTED: return URMA_CR_REM_UNSUPPORTED_REQ_ERR;
		default:		return URMA_CR_REM_OPERATION_ERR;
		}
	case TP_ST_RETRY_EXCEEDED:	return URMA_CR_ACK_TIMEOUT_ERR;
	case TP_ST_FLUSHED:		return URMA_CR_WR_FLUSH_ERR;
	case TP_ST_TIMEOUT:		return URMA_CR_ACK_TIMEOUT_ERR;
	}
	return URMA_CR_LOC_OPERATION_ERR;
}

void ubx_cr_fill(urma_cr_t *cr, const struct ubx_q *q, const struct ubx_chan *ch, bool recv)
{
	memset(cr, 0, sizeof(*cr));
	cr->flag.bs.s_r = recv;
	cr->flag.bs.jetty = q->kind == UBX_JETTY;
	cr->local_id = q->id;
	cr->user_data = (uintptr_t)&q->pub;
	if (ch) {
		cr->remote_id = ch->remote;
		if (ch->ec.tp)
			cr->tpn = tp_chan_tpn(ch->ec.tp);
	}
}

static void ch_unlink(struct ubx_chan *ch, struct ubx_wr *w)
{
	if (w->prev_ch)
		w->prev_ch->next_ch = w->next_ch;
	else if (ch->out == w)
		ch->out = w->next_ch;
	if (w->next_ch)
		w->next_ch->prev_ch = w->prev_ch;
	w->prev_ch = w->next_ch = NULL;
}

static void release_held(struct ubx_chan *ch);

void ubx_wr_complete(struct ubx_port *p, struct ubx_wr *w, urma_cr_status_t st, uint32_t len)
{
	struct ubx_chan *ch = w->ch;
	struct ubx_q *q = w->q;

	if (ch && w->linked) {
		ch_unlink(ch, w);
		ch->nout--;
	}
	q->sout--;
	if (w->signaled || st != URMA_CR_SUCCESS) {
		urma_cr_t cr;

		ubx_cr_fill(&cr, q, ch, false);
		cr.status = st;
		cr.user_ctx = w->user_ctx;
		cr.completion_len = st == URMA_CR_SUCCESS ? len : 0;
		ubx_jfc_push(q->scq, q->port, &cr);
	}
	ubx_wr_free(p, w);
	if (ch && ch->held)
		release_held(ch);
}

/* ---- submitting to the core ------------------------------------------------------ */

static int core_post(struct ubx_wr *w)
{
	w->t.wr_id = ubx_wr_id(w->ch->port, w);
	w->t.sge = w->sg;
	return tp_post(w->ch->ec.tp, &w->t);
}

static void ch_link(struct ubx_chan *ch, struct ubx_wr *w)
{
	w->prev_ch = NULL;
	w->next_ch = ch->out;
	if (ch->out)
		ch->out->prev_ch = w;
	ch->out = w;
	w->linked = true;
	ch->nout++;
}

static void hold(struct ubx_chan *ch, struct ubx_wr *w, bool first)
{
	if (first) {
		w->next_held = ch->held;
		ch->held = w;
		if (!ch->held_tail)
			ch->held_tail = w;
		return;
	}
	w->next_held = NULL;
	if (ch->held_tail)
		ch->held_tail->next_held = w;
	else
		ch->held = w;
	ch->held_tail = w;
}

/* Requests the core had no room for, in order, as room comes. */
static void release_held(struct ubx_chan *ch)
{
	while (ch->held && ch->state == CH_READY) {
		struct ubx_wr *w = ch->held;
		int rc;

		ch->held = w->next_held;
		if (!ch->held)
			ch->held_tail = NULL;
		w->next_held = NULL;
		rc = core_post(w);
		if (rc == -EAGAIN) {
			hold(ch, w, true);
			return;
		}
		if (rc) {
			ubx_wr_complete(ch->port, w, URMA_CR_LOC_OPERATION_ERR, 0);
			continue;
		}
		ch_link(ch, w);
	}
}

/* The core checks and keeps order (fence, SGE lists, atomics, immediate). */
int ubx_wr_submit(struct ubx_wr *w)
{
	struct ubx_chan *ch = w->ch;
	int rc;

	if (!ch->held) {
		rc = core_post(w);
		if (rc != -EAGAIN) {
			if (!rc)
				ch_link(ch, w);
			return rc;
		}
	}
	hold(ch, w, false);
	return 0;
}
