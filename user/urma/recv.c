// SPDX-License-Identifier: BSD-2-Clause
/*
 * The receive side: the buffers posted to JFRs, and the Sends (and Writes
 * with immediate) the core took, placed into them and completed.
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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "urma/urma_int.h"

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
	if (!jfr->shared)
		ch->port->jfr_shared++;
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

	ubx_cr_fill(&cr, ch->q, ch, true);
	cr.user_ctx = r->user_ctx;
	rq_release(ch->q->jfr, r);
	cr.opcode = op;
	cr.status = st;
	cr.completion_len = st == URMA_CR_SUCCESS ? len : 0;
	if (has_imm)
		cr.imm_data = imm;
	ubx_jfc_push(ch->q->rcq, ch->port, &cr);
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

void ubx_recv(struct ubx_port *p, struct ubx_chan *ch, const struct tp_event *ev)
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
	if (tp_rnr_hold_refuses(&ch->hold, ev->tassn, ev->flags & TP_EVF_RETRY)) {
		answer(ch, ev->tassn, TP_ST_RNR);
		tp_rnr_hold_refused(&ch->hold, ev->tassn);
		p->rnr_sent++;
		goto repost;
	}
	imm_drain(ch);
	r = ch->imm_head ? NULL : jfr_take(jfr);
	if (!r) {
		if (manual(ch)) {
			answer(ch, ev->tassn, TP_ST_RNR);
			tp_rnr_hold_refused(&ch->hold, ev->tassn);
			p->rnr_sent++;
		} else {
			p->um_dropped++;	/* UM: a message without a buffer is lost */
		}
		goto repost;
	}
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
	struct ubx_port *p = jfr->port;

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

/* A JFR buffer of a failed channel: still the JFR's. */
void ubx_recv_flushed(struct ubx_chan *ch, const struct tp_event *ev)
{
	if (ev->wr_id & DIRECT_TAG && ch->q->jfr) {
		struct ubx_q *jfr = ch->q->jfr;
		uint32_t i = (uint32_t)(ev->wr_id & ~DIRECT_TAG);

		if (i < jfr->rdepth && jfr->rq[i].posted == ch) {
			jfr->rposted--;
			rq_enqueue(jfr, (int32_t)i, true);
		}
	}
}
