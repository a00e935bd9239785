// SPDX-License-Identifier: BSD-2-Clause
/*
 * The target's answers (TAACK): in a TP packet of their own (ROI, ROT) or
 * aboard the TPACK of the operation's last packet (ROL, in order: an
 * answer waits for the ones before it), remembered for duplicates, and
 * given by the application itself for a manual answer.
 */
#include "transport/tp_answer.h"
#include "transport/tp_sq.h"

void tp_push_taack_ack(struct tp_chan *ch, uint32_t psn, uint16_t tassn, uint8_t rspst,
		       uint8_t rspinfo)
{
	if ((ch->tf_tail + 1) % TP_FIFO == ch->tf_head)
		return;	/* full: the initiator's probe (a duplicate) recovers it */
	ch->taack_fifo[ch->tf_tail] = (struct tp_taack_ack){ .psn = psn, .tassn = tassn,
							     .rspst = rspst, .rspinfo = rspinfo };
	ch->tf_tail = (ch->tf_tail + 1) % TP_FIFO;
}

static void send_answer(struct tp_chan *ch, const struct tp_result *r, uint8_t order)
{
	ch->st.tx_taack++;
	/* CTP has no TPACK: whatever the initiator's Order says, a packet. */
	if (order == TP_ORDER_ROL && !tp_is_ctp(ch)) {
		tp_push_taack_ack(ch, r->last_psn, r->tassn, r->rspst, r->rspinfo);
	} else {
		struct tp_op *op = tp_sq_push(ch);	/* room checked on arrival */

		if (!op)
			return;
		op->kind = OP_TAACK;
		op->tassn = r->tassn;
		op->rspst = r->rspst;
		op->rspinfo = r->rspinfo;
		op->nseg = 1;
	}
}

/* Pending answers in arrival order: in ROL the TPACK may not pass them. */
static void flush_pending(struct tp_chan *ch)
{
	struct tp_pend *q = ch->pend;

	while (ch->pq_head != ch->pq_tail) {
		struct tp_result *r = &ch->results[q[ch->pq_head].tassn % TP_RESULTS];

		if (r->pending)
			break;
		send_answer(ch, r, q[ch->pq_head].order);
		ch->pq_head = (ch->pq_head + 1) % TP_FIFO;
	}
}

void tp_answer(struct tp_chan *ch, uint16_t tassn, enum tp_status st, uint8_t info,
	       uint32_t last_psn, uint8_t order, bool manual)
{
	struct tp_result *r = &ch->results[tassn % TP_RESULTS];
	struct tp_pend *q = ch->pend;

	if (st == TP_ST_RNR)
		ch->st.ta_rnr++;
	else if (st == TP_ST_PAGE_FAULT)
		ch->st.ta_page_fault++;
	else if (st != TP_ST_OK)
		ch->st.ta_completer_err++;
	if (st == TP_ST_RNR)
		info = ch->cfg.rnr_wait_code;
	*r = (struct tp_result){ .valid = true, .pending = manual, .tassn = tassn,
				 .rspst = tp_status_to_rspst(st), .rspinfo = info,
				 .last_psn = last_psn };
	if (!manual && ch->pq_head == ch->pq_tail) {
		send_answer(ch, r, order);
		return;
	}
	if ((ch->pq_tail + 1) % TP_FIFO == ch->pq_head) {
		/* Too many answers outstanding: give the oldest up as an error
		 * rather than hold the acknowledgements forever. */
		struct tp_result *o = &ch->results[q[ch->pq_head].tassn % TP_RESULTS];

		o->pending = false;
		o->rspst = UB_RSPST_COMPLETER_ERR;
		flush_pending(ch);
		if ((ch->pq_tail + 1) % TP_FIFO == ch->pq_head)
			ch->pq_head = (ch->pq_head + 1) % TP_FIFO;
	}
	q[ch->pq_tail] = (struct tp_pend){ .tassn = tassn, .order = order };
	ch->pq_tail = (ch->pq_tail + 1) % TP_FIFO;
	flush_pending(ch);
}

int tp_rcv_answer(struct tp_chan *ch, uint16_t tassn, int status)
{
	struct tp_result *r = &ch->results[tassn % TP_RESULTS];

	if (!r->valid || !r->pending || r->tassn != tassn || status < 0 || status > TP_ST_COMPLETER_ERR)
		return -ENOENT;
	r->pending = false;
	r->rspst = tp_status_to_rspst(status);
	r->rspinfo = status == TP_ST_RNR ? ch->cfg.rnr_wait_code : 0;
	if (status == TP_ST_RNR)
		ch->st.ta_rnr++;
	else if (status != TP_ST_OK)
		ch->st.ta_completer_err++;
	flush_pending(ch);
	ch->ack_pending = ch->ack_now = true;
	return 0;
}
