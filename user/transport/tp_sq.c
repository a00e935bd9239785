// SPDX-License-Identifier: BSD-2-Clause
/*
 * The send queue of a TP channel: the operations posted and generated (the
 * target's answers), completed in posting order, flushed when the channel
 * fails, and the next one whose segments may go (fences).
 */
#include <string.h>

#include "transport/tp_sq.h"
#include "transport/tp_event.h"
#include "transport/tp_sge.h"

struct tp_op *tp_sq_push(struct tp_chan *ch)
{
	struct tp_op *op;

	if ((ch->sq_tail + 1) % ch->sq_cap == ch->sq_head)
		return NULL;
	op = &ch->sq[ch->sq_tail];
	memset(op, 0, sizeof(*op));
	op->state = OS_QUEUED;
	ch->sq_tail = (ch->sq_tail + 1) % ch->sq_cap;
	return op;
}

static enum tp_event_type done_event(const struct tp_op *op)
{
	return op->kind == OP_SEND ? TP_EV_SEND_DONE :
	       op->kind == OP_WRITE ? TP_EV_WRITE_DONE :
	       op->kind == OP_ATOMIC ? TP_EV_ATOMIC_DONE : TP_EV_READ_DONE;
}

/* Bytes a completion reports: a Read's and an atomic's that landed. */
static size_t done_len(const struct tp_op *op)
{
	return op->kind == OP_READ || op->kind == OP_ATOMIC ? op->rd_got : op->len;
}

/*
 * Complete what can be completed, in posting order (an answer may overtake
 * an earlier one whose TAACK was lost), and free done operations from the head.
 */
void tp_sq_progress(struct tp_chan *ch)
{
	bool blocked = false;

	for (uint32_t i = ch->sq_head; i != ch->sq_tail; i = (i + 1) % ch->sq_cap) {
		struct tp_op *op = &ch->sq[i];

		if (tp_op_initiator(op) && op->state != OS_DONE &&
		    (op->state != OS_SENT || op->inflight || !op->answered)) {
			blocked = true;
			continue;
		}
		if (op->state != OS_SENT || op->inflight)
			continue;
		if (!tp_op_initiator(op)) {
			op->state = OS_DONE;
		} else if (!blocked) {
			op->state = OS_DONE;
			struct tp_event *ev = tp_emit(ch, done_event(op), op->status, op->wr_id,
						      done_len(op), op->tassn);

			if (ev) {
				ev->rspinfo = op->rspinfo;
				ev->opcode = op->opcode;
			}
			ch->n_init_ops--;
		}
	}
	while (ch->sq_head != ch->sq_tail && ch->sq[ch->sq_head].state == OS_DONE &&
	       !ch->sq[ch->sq_head].inflight) {
		tp_op_free(&ch->sq[ch->sq_head]);
		ch->sq[ch->sq_head].state = OS_FREE;
		ch->sq_head = (ch->sq_head + 1) % ch->sq_cap;
	}
}

void tp_chan_fail(struct tp_chan *ch, enum tp_status why)
{
	if (ch->failed)
		return;
	ch->failed = true;
	tp_emit(ch, TP_EV_CHAN_ERROR, why, 0, 0, 0);
	for (uint32_t i = ch->sq_head; i != ch->sq_tail; i = (i + 1) % ch->sq_cap) {
		struct tp_op *op = &ch->sq[i];

		if (tp_op_initiator(op) && op->state != OS_DONE && op->state != OS_FREE) {
			struct tp_event *ev = tp_emit(ch, done_event(op), TP_ST_FLUSHED, op->wr_id,
						      0, op->tassn);

			if (ev)
				ev->opcode = op->opcode;
		}
		tp_op_free(op);
		op->state = OS_FREE;
	}
	ch->sq_head = ch->sq_tail;
	ch->n_init_ops = 0;
	if (ch->rx.have_recv) {
		tp_emit(ch, TP_EV_RECV_FLUSHED, TP_ST_FLUSHED, ch->rx.rb.wr_id, 0, 0);
		tp_rb_free(&ch->rx.rb);
	}
	ch->rx.have_recv = false;
	for (; ch->rq_head != ch->rq_tail; ch->rq_head = (ch->rq_head + 1) % ch->rq_cap) {
		tp_emit(ch, TP_EV_RECV_FLUSHED, TP_ST_FLUSHED, ch->rq[ch->rq_head].wr_id, 0, 0);
		tp_rb_free(&ch->rq[ch->rq_head]);
	}
	ch->rto_deadline = 0;
	ch->rack_deadline = ch->tlp_deadline = 0;
	ch->frto = false;
}

struct tp_op *tp_snd_find_op(struct tp_chan *ch, uint16_t tassn)
{
	for (uint32_t i = ch->sq_head; i != ch->sq_tail; i = (i + 1) % ch->sq_cap) {
		struct tp_op *op = &ch->sq[i];

		if (tp_op_initiator(op) && op->tassn == tassn && !op->answered &&
		    (op->state == OS_SENT || op->state == OS_QUEUED))
			return op;
	}
	return NULL;
}

void tp_snd_op_answered(struct tp_chan *ch, struct tp_op *op, enum tp_status st)
{
	op->answered = true;
	op->status = (uint8_t)st;
	tp_sq_progress(ch);
}

/* A Read or atomic posted before sq slot `upto` not answered yet. */
static bool fenced(const struct tp_chan *ch, uint32_t upto)
{
	for (uint32_t i = ch->sq_head; i != upto; i = (i + 1) % ch->sq_cap) {
		const struct tp_op *op = &ch->sq[i];

		if ((op->kind == OP_READ || op->kind == OP_ATOMIC) && op->state != OS_DONE &&
		    op->state != OS_FREE && !op->answered)
			return true;
	}
	return false;
}

/* The next operation allowed to put a packet on the wire. */
struct tp_op *tp_snd_next_op(struct tp_chan *ch)
{
	/* The target reassembles one message at a time, in PSN order: a
	 * message begun is finished before another begins. An RNR'd Send
	 * queued again ahead of one half sent (its wait ended while the window
	 * held the rest) cut it short: the target took the rest, a new TPMSN,
	 * for a message of its own, and delivered it short as OK. */
	if (ch->tx_mid) {
		struct tp_op *op = &ch->sq[ch->tx_mid - 1];

		if (op->state == OS_QUEUED && op->next_seg)
			return op;
		ch->tx_mid = 0;
	}
	bool refused = false;	/* an earlier op refused RNR, not taken yet */
	bool unanswered = false;	/* an earlier op sent, its answer not here */

	for (uint32_t i = ch->sq_head; i != ch->sq_tail; i = (i + 1) % ch->sq_cap) {
		struct tp_op *op = &ch->sq[i];

		if (tp_op_initiator(op) && !op->answered &&
		    (op->state == OS_RNR_WAIT || (op->retry && op->state == OS_SENT)))
			refused = true;
		if (op->state != OS_QUEUED) {
			unanswered |= tp_op_initiator(op) && !op->answered && op->state == OS_SENT;
			continue;
		}
		/* Keep Sends in order: nothing new overtakes one waiting to retry.
		 * One half sent is finished (the target refuses it too): cut
		 * short, the target would take the retry's packets for its rest.
		 * Nor does a later retry go before an earlier one was taken: the
		 * target lets any Retry through, and took the later one first
		 * when the earlier was refused again; nor before an earlier one
		 * is answered at all (its RNR may be the answer lost). */
		if (tp_op_initiator(op) && !op->next_seg &&
		    (refused || (op->retry && unanswered) || (!op->retry && ch->rnr_waiting))) {
			/* held, it still holds what follows: a new op past it
			 * (Retry when an earlier one was given up) lifted the
			 * target's refusal before it */
			refused |= op->retry;
			continue;
		}
		/* A fence holds it, and all that follows, until every earlier
		 * Read and atomic was answered (UB 2.0 §7.3.2.2). */
		if (op->fence && !op->next_seg && fenced(ch, i))
			return NULL;
		return op;
	}
	return NULL;
}
