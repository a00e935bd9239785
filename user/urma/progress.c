// SPDX-License-Identifier: BSD-2-Clause
/*
 * The I/O of a port: rounds of the endpoint (receive, timers, transmit),
 * the core's events turned into completion records, and received Sends
 * placed into the buffers posted to JFRs.
 *
 * Receives: the core takes a Send into a buffer posted to its channel, but
 * a JFR's buffers serve every channel of the JFR (every remote JFS or jetty
 * sending to it). So each channel has buffers of the library's (bounce
 * buffers, reserved address space touched only as far as messages go); a
 * Send that landed is copied into the next buffer posted to the JFR
 * (scattered over its SGEs) and only then answered (the channels use the
 * core's manual_taack): with no buffer posted it is answered RNR, as a
 * receiver without a buffer does, and the sender retries. After an RNR, the
 * channel answers RNR to every later Send until the refused one comes back,
 * so Sends stay in order. A Write with immediate takes a buffer of the
 * core's too (the core answers it itself): with none posted to the JFR, its
 * completion waits for the next one posted, and Sends behind it are
 * answered RNR meanwhile (order again).
 */
#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "urma_int.h"

#define BOUNCE_TAG	(1ull << 63)	/* a receive buffer of the library's */
#define DIRECT_TAG	(1ull << 62)	/* a JFR's buffer posted to the core */

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

static void fill_cr(urma_cr_t *cr, const struct ubx_q *q, const struct ubx_chan *ch, bool recv)
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

		fill_cr(&cr, q, ch, false);
		cr.status = st;
		cr.user_ctx = w->user_ctx;
		cr.completion_len = st == URMA_CR_SUCCESS ? len : 0;
		ubx_jfc_push(q->scq, &cr);
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

/* ---- receiving ---------------------------------------------------------------------- */

static bool manual(const struct ubx_chan *ch)
{
	return ch->tp_type != URMA_UTP;
}

/* ---- JFR buffers -------------------------------------------------------------------- */

int ubx_jfr_rq_init(struct ubx_q *jfr, uint32_t depth, uint32_t max_sge)
{
	urma_sge_t *sg;

	jfr->rdepth = depth;
	jfr->rmax_sge = max_sge;
	jfr->rq = calloc(depth, sizeof(*jfr->rq));
	sg = calloc((size_t)depth * max_sge, sizeof(*sg));
	if (!jfr->rq || !sg) {
		free(sg);
		free(jfr->rq);
		jfr->rq = NULL;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < depth; i++) {
		jfr->rq[i].sg = sg + (size_t)i * max_sge;
		jfr->rq[i].next = i + 1 < depth ? (int32_t)i + 1 : -1;
	}
	jfr->rfree = 0;
	jfr->rq_head = jfr->rq_tail = -1;
	return 0;
}

void ubx_jfr_rq_free(struct ubx_q *jfr)
{
	if (jfr->rq) {
		free(jfr->rq[0].sg);
		free(jfr->rq);
	}
	jfr->rq = NULL;
}

static void rq_enqueue(struct ubx_q *jfr, int32_t i, bool front)
{
	struct ubx_rwr *r = &jfr->rq[i];

	r->posted = NULL;
	if (front) {
		r->next = jfr->rq_head;
		jfr->rq_head = i;
		if (jfr->rq_tail < 0)
			jfr->rq_tail = i;
	} else {
		r->next = -1;
		if (jfr->rq_tail >= 0)
			jfr->rq[jfr->rq_tail].next = i;
		else
			jfr->rq_head = i;
		jfr->rq_tail = i;
	}
	jfr->rcount++;
}

static void rq_release(struct ubx_q *jfr, struct ubx_rwr *r)
{
	if (r->posted)
		jfr->rposted--;
	r->posted = NULL;
	r->next = jfr->rfree;
	jfr->rfree = (int32_t)(r - jfr->rq);
}

/* Slot i straight to ch's core: the Send lands in the application's buffer. */
static int post_direct(struct ubx_q *jfr, struct ubx_chan *ch, int32_t i)
{
	struct ubx_rwr *r = &jfr->rq[i];
	struct tp_sge sg[UBX_MAX_SGE];
	int rc;

	for (uint32_t k = 0; k < r->nsg; k++)
		sg[k] = (struct tp_sge){ .addr = (void *)(uintptr_t)r->sg[k].addr, .len = r->sg[k].len };
	rc = tp_post_recv_sge(ch->ec.tp, sg, r->nsg, DIRECT_TAG | (uint64_t)i);
	if (rc)
		return rc;
	r->posted = ch;
	jfr->rposted++;
	return 0;
}

/* What waits in the queue, posted to the JFR's only channel while it has room. */
static void direct_fill(struct ubx_q *jfr)
{
	while (jfr->direct && jfr->rq_head >= 0) {
		int32_t i = jfr->rq_head;

		if (post_direct(jfr, jfr->direct, i))
			return;
		jfr->rq_head = jfr->rq[i].next;
		if (jfr->rq_head < 0)
			jfr->rq_tail = -1;
		jfr->rcount--;
	}
}

int ubx_jfr_post(struct ubx_q *jfr, const urma_jfr_wr_t *wr, uint64_t total)
{
	int32_t i = jfr->rfree;
	struct ubx_rwr *r;

	if (i < 0)
		return URMA_EAGAIN;
	r = &jfr->rq[i];
	jfr->rfree = r->next;
	r->user_ctx = wr->user_ctx;
	r->nsg = wr->src.num_sge;
	r->total = total;
	memcpy(r->sg, wr->src.sge, wr->src.num_sge * sizeof(r->sg[0]));
	if (jfr->direct && jfr->rq_head < 0 && !post_direct(jfr, jfr->direct, i))
		return 0;
	rq_enqueue(jfr, i, false);
	return 0;
}

static struct ubx_rwr *jfr_take(struct ubx_q *jfr)
{
	struct ubx_rwr *r;

	if (jfr->rq_head < 0)
		return NULL;
	r = &jfr->rq[jfr->rq_head];
	jfr->rq_head = r->next;
	if (jfr->rq_head < 0)
		jfr->rq_tail = -1;
	jfr->rcount--;
	return r;
}

static int bounce_post(struct ubx_chan *ch)
{
	size_t sz = UBX_MAX_MSG;

	if (ch->bounce)
		return 0;
	ch->nbounce = UBX_BOUNCE;
	ch->bounce_size = sz;
	ch->bounce = mmap(NULL, sz * ch->nbounce, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (ch->bounce == MAP_FAILED) {
		ch->bounce = NULL;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < ch->nbounce; i++) {
		int rc = tp_post_recv(ch->ec.tp, ch->bounce + (size_t)i * sz, sz, BOUNCE_TAG | i);

		if (rc)
			return rc;
	}
	return 0;
}

/* The JFR's buffers posted to ch's core and unused, back to its queue (in order). */
static void take_back(struct ubx_q *jfr, struct ubx_chan *ch)
{
	uint64_t ids[64];
	uint32_t n;

	while ((n = tp_recv_take_back(ch->ec.tp, ids, 64)))
		for (uint32_t k = 0; k < n; k++) {
			uint32_t i = (uint32_t)(ids[k] & ~DIRECT_TAG);

			if (!(ids[k] & DIRECT_TAG) || i >= jfr->rdepth || jfr->rq[i].posted != ch)
				continue;	/* a bounce buffer: posted again below */
			jfr->rposted--;
			rq_enqueue(jfr, (int32_t)i, true);	/* last posted first: order kept */
		}
}

/*
 * A channel of a JFR: the JFR's only one gets its buffers posted to its core
 * (the Send lands in place, the core answers RNR when there is none). When
 * a second one comes, the first one's unused buffers are taken back from
 * its core, and from then on every channel takes Sends into bounce buffers
 * and the JFR's buffers wait in its queue for whichever channel needs one.
 */
int ubx_chan_rx_init(struct ubx_chan *ch)
{
	struct ubx_q *jfr = ch->q->jfr;

	if (++jfr->nchans == 1 && !jfr->shared) {
		jfr->direct = ch;
		direct_fill(jfr);
		return 0;
	}
	if (jfr->direct) {
		int rc;

		take_back(jfr, jfr->direct);
		rc = bounce_post(jfr->direct);
		if (rc)
			return rc;
		jfr->direct = NULL;
	}
	jfr->shared = true;
	return bounce_post(ch);
}

/* After the core's channel is gone: the JFR's buffers posted to it go back
 * to its queue, first. */
void ubx_chan_rx_fini(struct ubx_chan *ch)
{
	struct ubx_q *jfr = ch->q->jfr;

	if (jfr) {
		for (int32_t i = (int32_t)jfr->rdepth - 1; i >= 0 && jfr->rposted; i--)
			if (jfr->rq[i].posted == ch) {
				jfr->rposted--;
				rq_enqueue(jfr, i, true);
			}
		if (jfr->direct == ch)
			jfr->direct = NULL;
		jfr->nchans--;
	}
	if (ch->bounce)
		munmap(ch->bounce, ch->bounce_size * ch->nbounce);
	ch->bounce = NULL;
}

/* Scatter len bytes over a receive request's SGEs. */
static void scatter(const struct ubx_rwr *r, const uint8_t *src, size_t len)
{
	for (uint32_t i = 0; i < r->nsg && len; i++) {
		size_t n = r->sg[i].len < len ? r->sg[i].len : len;

		memcpy((void *)(uintptr_t)r->sg[i].addr, src, n);
		src += n;
		len -= n;
	}
}

static void answer(struct ubx_chan *ch, uint16_t tassn, enum tp_status st)
{
	if (manual(ch))
		tp_recv_answer(ch->ec.tp, tassn, st);
}

static void recv_cr(struct ubx_chan *ch, struct ubx_rwr *r, urma_cr_opcode_t op,
		    urma_cr_status_t st, uint32_t len, bool has_imm, uint64_t imm)
{
	urma_cr_t cr;

	fill_cr(&cr, ch->q, ch, true);
	cr.user_ctx = r->user_ctx;
	rq_release(ch->q->jfr, r);
	cr.opcode = op;
	cr.status = st;
	cr.completion_len = st == URMA_CR_SUCCESS ? len : 0;
	if (has_imm)
		cr.imm_data = imm;
	ubx_jfc_push(ch->q->rcq, &cr);
}

/* Writes with immediate that waited complete into buffers now posted. */
static void imm_drain(struct ubx_chan *ch)
{
	struct ubx_q *jfr = ch->q->jfr;
	struct ubx_rwr *r;

	while (ch->imm_head && (r = jfr_take(jfr))) {
		struct ubx_imm *e = ch->imm_head;

		ch->imm_head = e->next;
		if (!ch->imm_head)
			ch->imm_tail = NULL;
		jfr->imm_waiting--;
		recv_cr(ch, r, URMA_CR_OPC_WRITE_WITH_IMM, URMA_CR_SUCCESS, e->len, true, e->imm);
		free(e);
	}
}

static urma_cr_opcode_t cr_opcode(const struct tp_event *ev)
{
	return ev->opcode == TP_OP_WRITE_IMM ? URMA_CR_OPC_WRITE_WITH_IMM :
	       ev->flags & TP_EVF_IMM ? URMA_CR_OPC_SEND_WITH_IMM : URMA_CR_OPC_SEND;
}

/* A Send (or Write with immediate) into a JFR buffer posted to the core. */
static void on_recv_direct(struct ubx_port *p, struct ubx_chan *ch, const struct tp_event *ev)
{
	struct ubx_q *jfr = ch->q->jfr;
	uint32_t idx = (uint32_t)(ev->wr_id & ~DIRECT_TAG);
	struct ubx_rwr *r;

	if (!jfr || idx >= jfr->rdepth || jfr->rq[idx].posted != ch)
		return;
	r = &jfr->rq[idx];
	if (ev->status == TP_ST_OK) {
		if (ev->opcode != TP_OP_WRITE_IMM)
			answer(ch, ev->tassn, TP_ST_OK);
		ch->rx_msgs++;
		recv_cr(ch, r, cr_opcode(ev), URMA_CR_SUCCESS, (uint32_t)ev->len,
			ev->flags & TP_EVF_IMM, ev->imm);
	} else {
		/* Longer than the buffer: the core answered the sender already. */
		p->recv_len_err++;
		recv_cr(ch, r, cr_opcode(ev), URMA_CR_LOC_LEN_ERR, 0, false, 0);
	}
	direct_fill(jfr);
}

static void on_recv(struct ubx_port *p, struct ubx_chan *ch, const struct tp_event *ev)
{
	uint32_t idx = (uint32_t)(ev->wr_id & ~BOUNCE_TAG);
	uint8_t *buf = ch->bounce + (size_t)idx * ch->bounce_size;
	struct ubx_q *jfr = ch->q->jfr;
	bool has_imm = ev->flags & TP_EVF_IMM;
	struct ubx_rwr *r;

	if (ev->wr_id & DIRECT_TAG) {
		on_recv_direct(p, ch, ev);
		return;
	}
	if (!(ev->wr_id & BOUNCE_TAG) || idx >= ch->nbounce)
		return;
	if (ev->opcode == TP_OP_WRITE_IMM) {
		/* The core answered it already; the data is in the region. */
		if (ev->status != TP_ST_OK || !jfr)
			goto repost;
		imm_drain(ch);
		r = ch->imm_head ? NULL : jfr_take(jfr);
		if (r) {
			recv_cr(ch, r, URMA_CR_OPC_WRITE_WITH_IMM, URMA_CR_SUCCESS, (uint32_t)ev->len,
				true, ev->imm);
		} else {
			struct ubx_imm *e = calloc(1, sizeof(*e));

			p->imm_late++;
			if (e) {
				e->imm = ev->imm;
				e->len = (uint32_t)ev->len;
				if (ch->imm_tail)
					ch->imm_tail->next = e;
				else
					ch->imm_head = e;
				ch->imm_tail = e;
				jfr->imm_waiting++;
			}
		}
		goto repost;
	}
	if (ev->status != TP_ST_OK || !jfr) {
		/* Longer than any buffer (the core answered already), or for
		 * an object that receives nothing. */
		if (ev->status == TP_ST_OK)
			answer(ch, ev->tassn, TP_ST_COMPLETER_ERR);
		p->recv_len_err++;
		goto repost;
	}
	if (ch->rnr_hold && ev->tassn != ch->hold_tassn) {
		answer(ch, ev->tassn, TP_ST_RNR);
		p->rnr_sent++;
		goto repost;
	}
	imm_drain(ch);
	r = ch->imm_head ? NULL : jfr_take(jfr);
	if (!r) {
		if (manual(ch)) {
			answer(ch, ev->tassn, TP_ST_RNR);
			if (!ch->rnr_hold) {
				ch->rnr_hold = true;
				ch->hold_tassn = ev->tassn;
			}
			p->rnr_sent++;
		} else {
			p->um_dropped++;	/* UM: a message without a buffer is lost */
		}
		goto repost;
	}
	ch->rnr_hold = false;
	if (ev->len > r->total) {
		/* Longer than the buffer posted: both sides see an error. */
		answer(ch, ev->tassn, TP_ST_COMPLETER_ERR);
		p->recv_len_err++;
		recv_cr(ch, r, URMA_CR_OPC_SEND, URMA_CR_LOC_LEN_ERR, 0, false, 0);
	} else {
		scatter(r, buf, ev->len);
		answer(ch, ev->tassn, TP_ST_OK);
		ch->rx_msgs++;
		recv_cr(ch, r, has_imm ? URMA_CR_OPC_SEND_WITH_IMM : URMA_CR_OPC_SEND, URMA_CR_SUCCESS,
			(uint32_t)ev->len, has_imm, ev->imm);
	}
repost:
	tp_post_recv(ch->ec.tp, buf, ch->bounce_size, ev->wr_id);
}

void ubx_jfr_refilled(struct ubx_q *jfr)
{
	struct ubx_port *p = jfr->ctx->port;

	if (!jfr->imm_waiting)
		return;
	for (struct ubx_chan *ch = p->chans; ch && jfr->rcount; ch = ch->next)
		if (ch->imm_head && ch->q->jfr == jfr)
			imm_drain(ch);
}

void ubx_chan_imm_free(struct ubx_chan *ch)
{
	while (ch->imm_head) {
		struct ubx_imm *e = ch->imm_head;

		ch->imm_head = e->next;
		if (ch->q->jfr)
			ch->q->jfr->imm_waiting--;
		free(e);
	}
	ch->imm_tail = NULL;
}

/* ---- events -------------------------------------------------------------------------- */

static struct ubx_chan *chan_of(const struct tp_event *ev)
{
	struct ep_chan *ec = ev->user;

	return ec ? ec->app : NULL;
}

void ubx_dispatch(struct ubx_port *p)
{
	struct tp_event ev;

	while (tp_ep_poll(p->tp, &ev)) {
		struct ubx_chan *ch = chan_of(&ev);
		struct ubx_wr *w;

		if (!ch)
			continue;
		switch (ev.type) {
		case TP_EV_SEND_DONE:
		case TP_EV_WRITE_DONE:
		case TP_EV_READ_DONE:
		case TP_EV_ATOMIC_DONE:
			w = ubx_wr_lookup(p, ev.wr_id);
			if (!w)
				break;
			if (ev.status == TP_ST_FLUSHED && ch->fail_st != TP_ST_OK) {
				/* The oldest request of a failed channel is the one
				 * that ran out of retries: it says so; the rest are
				 * flushed. */
				ev.status = ch->fail_st;
				ch->fail_st = TP_ST_OK;
			}
			ubx_wr_complete(p, w, ubx_cr_status(ev.status, ev.rspinfo), (uint32_t)ev.len);
			break;
		case TP_EV_RECV:
			on_recv(p, ch, &ev);
			break;
		case TP_EV_RECV_FLUSHED:
			/* A JFR buffer of a failed channel: still the JFR's. */
			if (ev.wr_id & DIRECT_TAG && ch->q->jfr) {
				struct ubx_q *jfr = ch->q->jfr;
				uint32_t i = (uint32_t)(ev.wr_id & ~DIRECT_TAG);

				if (i < jfr->rdepth && jfr->rq[i].posted == ch) {
					jfr->rposted--;
					rq_enqueue(jfr, (int32_t)i, true);
				}
			}
			break;
		case TP_EV_CHAN_ERROR:
			ch->state = CH_FAILED;
			ch->err = EIO;
			ch->fail_st = ev.status;
			ubx_info("channel to jetty %u failed: %s", ch->remote.id,
				 tp_status_name(ev.status));
			/* What waited for room never reached the core: flushed too. */
			while (ch->held) {
				w = ch->held;
				ch->held = w->next_held;
				w->next_held = NULL;
				ubx_wr_complete(p, w, URMA_CR_WR_FLUSH_ERR, 0);
			}
			ch->held_tail = NULL;
			break;
		}
	}
}

static int rounds(struct ubx_port *p, int max)
{
	int moved = 0;

	for (int i = 0; i < max; i++) {
		int m = ep_progress(p->ep, 0);

		moved += m;
		ubx_dispatch(p);
		ubx_ctl_run(p, ep_now_ns());
		if (!m)
			break;
	}
	return moved;
}

int ubx_progress(struct ubx_port *p)
{
	return rounds(p, 8);
}

/* One round: the application gets its completions (and reposts its
 * receive buffers) every UBX_RX_BATCH frames. */
int ubx_app_progress(struct ubx_port *p)
{
	p->app_active = ep_now_ns();
	return rounds(p, 1);
}

void ubx_app_idle(struct ubx_port *p)
{
	if (p->app_active) {
		p->app_active = 0;
		ubx_port_kick(p);
	}
}

/* ---- the progress thread ---------------------------------------------------------- */

#define MAX_IDLE_NS	100000000ull	/* housekeeping: next-hop refresh, hellos */

void *ubx_progress_thread(void *arg)
{
	struct ubx_port *p = arg;
	struct pollfd pfd[UBX_POLL_FDS + 1];

	for (;;) {
		int fds[UBX_POLL_FDS], n, moved;
		uint64_t now, dl, ctl_dl;
		struct timespec ts;

		pthread_mutex_lock(&p->lock);
		if (p->stop) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		now = ep_now_ns();
		if (p->app_active && now - p->app_active < UBX_APP_DRIVES_NS) {
			/* Only the wake-up fd, until the application stops. */
			dl = p->app_active + UBX_APP_DRIVES_NS;
			moved = 0;
			n = 0;
			p->thr_idle++;
		} else {
			p->thr_rounds++;
			moved = ubx_progress(p);
			now = ep_now_ns();
			dl = tp_ep_next_deadline(p->tp);
			ctl_dl = ubx_ctl_run(p, now);
			if (ctl_dl < dl)
				dl = ctl_dl;
			n = moved ? 0 : ep_poll_fds(p->ep, fds, UBX_POLL_FDS);
		}
		if (dl > now + MAX_IDLE_NS)
			dl = now + MAX_IDLE_NS;
		p->wake_at = moved ? now : dl;
		pthread_mutex_unlock(&p->lock);
		if (moved)
			continue;
		for (int i = 0; i < n; i++)
			pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		pfd[n] = (struct pollfd){ .fd = p->wake_fd, .events = POLLIN };
		dl = dl > now ? dl - now : 0;
		ts.tv_sec = (time_t)(dl / 1000000000u);
		ts.tv_nsec = (long)(dl % 1000000000u);
		if (ppoll(pfd, (nfds_t)n + 1, &ts, NULL) > 0 && pfd[n].revents) {
			uint64_t v;

			if (read(p->wake_fd, &v, sizeof(v)) < 0) {
				/* nothing pending */
			}
		}
	}
	return NULL;
}
