// SPDX-License-Identifier: BSD-2-Clause
/*
 * Receiver side of a TP channel: PSN classification, the out-of-order range,
 * in-order reassembly for the transaction layer (Send into posted buffers,
 * Write/Read against registered memory), and the responses: TPACK (coalesced,
 * AckReq honoured, TAACK aboard in ROL), TPNAK, TPSACK.
 */
#include <stdlib.h>
#include <string.h>

#include "transport/tp_int.h"

#define ORDER_ROL 3	/* TAH Order of an ROL initiator (see ta_order()) */

static uint32_t sq_free(const struct tp_chan *ch)
{
	return (ch->sq_head + ch->sq_cap - ch->sq_tail - 1) % ch->sq_cap;
}

static uint32_t ack_cap(const struct tp_chan *ch);

/* ---- answers (TAACK) ------------------------------------------------------- */

static void push_taack_ack(struct tp_chan *ch, uint32_t psn, uint16_t tassn, uint8_t rspst,
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
	if (order == ORDER_ROL && !tp_is_ctp(ch)) {
		push_taack_ack(ch, r->last_psn, r->tassn, r->rspst, r->rspinfo);
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

static void answer(struct tp_chan *ch, uint16_t tassn, enum tp_status st, uint8_t info,
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

/* ---- reassembly and the transaction layer --------------------------------- */

/* A remote access refused: counted by reason, answered completer error. */
static uint8_t *refuse(struct tp_chan *ch, uint64_t *counter, uint8_t info, enum tp_status *st)
{
	(*counter)++;
	*st = TP_ST_COMPLETER_ERR;
	ch->rx.info = info;
	return NULL;
}

/*
 * Check a remote access of the MAETAH's [VA, VA+len) with the packet's
 * TVETAH against a registered region: its TokenID, its token value, the
 * access flag `need` (TP_ACCESS_*), its bounds and (atomics) the VA's
 * alignment, in that order. The address to access, or NULL with *st set (and
 * ch->rx.info the reason): nothing is read or written then.
 */
static uint8_t *mr_check(struct tp_chan *ch, const struct tp_parsed *p, size_t len,
			 uint32_t need, enum tp_status *st)
{
	struct tp_mr *mr = tp_mr_find(ch->ep, p->mae.token_id);
	uint64_t base, va = p->mae.va;

	if (!mr)
		return refuse(ch, &ch->st.ta_bad_token_id, TP_RSPINFO_BAD_TOKEN, st);
	if (!mr->token_none && (!p->has_tvetah || p->token_value != mr->token_value))
		return refuse(ch, &ch->st.ta_bad_token_value, TP_RSPINFO_TOKEN_VALUE, st);
	if (!(mr->access & need))
		return refuse(ch, &ch->st.ta_bad_access, TP_RSPINFO_ACCESS, st);
	base = (uint64_t)(uintptr_t)mr->addr;
	if (va < base || va - base > mr->len || len > mr->len - (va - base))
		return refuse(ch, &ch->st.ta_bad_range, TP_RSPINFO_RANGE, st);
	if (need == TP_ACCESS_ATOMIC && (va & (TP_ATOMIC_LEN - 1)))
		return refuse(ch, &ch->st.ta_bad_align, TP_RSPINFO_ALIGN, st);
	if (!mr->resident) {
		*st = TP_ST_PAGE_FAULT;
		return NULL;
	}
	return mr->addr + (va - base);
}

/*
 * An atomic request (one packet): MAETAH Length 8, the region's atomic
 * access, an aligned VA. CAS and FADD are executed; the other atomic
 * opcodes are refused, unsupported.
 */
static void start_atomic(struct tp_chan *ch, const struct tp_parsed *p)
{
	struct tp_rxmsg *m = &ch->rx;
	enum tp_status st = TP_ST_OK;

	if (!p->has_maetah) {
		m->status = TP_ST_COMPLETER_ERR;
		m->info = TP_RSPINFO_PROTOCOL;
		return;
	}
	if ((m->ta_op != UB_TA_ATOMIC_CAS && m->ta_op != UB_TA_ATOMIC_FADD) ||
	    p->mae.length != TP_ATOMIC_LEN) {
		ch->st.ta_bad_align++;
		m->status = TP_ST_COMPLETER_ERR;
		m->info = TP_RSPINFO_UNSUPPORTED;
		return;
	}
	m->dst = mr_check(ch, p, TP_ATOMIC_LEN, TP_ACCESS_ATOMIC, &st);
	m->status = (uint8_t)st;
}

/* Execute an atomic whose operands arrived (UB 2.0 §7.4.2.3): the original
 * value, big-endian, goes back in an Atomic_response of its own. */
static void finish_atomic(struct tp_chan *ch, uint32_t psn)
{
	struct tp_rxmsg *m = &ch->rx;
	uint64_t *w = (uint64_t *)(void *)m->dst, op1, op2, orig;
	struct tp_op *op;

	/* CAS: swap | compare; FADD: add [| ignored]. */
	if (m->status == TP_ST_OK &&
	    (m->off > sizeof(m->abuf) ||
	     m->off < (m->ta_op == UB_TA_ATOMIC_CAS ? 2u : 1u) * TP_ATOMIC_LEN)) {
		ch->st.ta_bad_align++;
		m->status = TP_ST_COMPLETER_ERR;
		m->info = TP_RSPINFO_UNSUPPORTED;
	}
	if (m->status != TP_ST_OK) {
		/* Refused, nothing touched: a TAACK in its own packet. */
		answer(ch, m->tassn, (enum tp_status)m->status, m->info, psn, 1, false);
		return;
	}
	op1 = ub_get_be64(m->abuf);
	op2 = ub_get_be64(m->abuf + 8);
	if (m->ta_op == UB_TA_ATOMIC_CAS) {
		orig = op2;
		__atomic_compare_exchange_n(w, &orig, op1, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add(w, op1, __ATOMIC_SEQ_CST);
	}
	ch->st.ta_atomic++;
	ch->st.msgs_delivered++;
	op = tp_sq_push(ch);	/* room checked on arrival */
	if (!op)
		return;
	op->kind = OP_ATOMIC_RESP;
	op->tassn = m->tassn;
	ub_put_be64(op->abuf, orig);
	op->sge1 = (struct tp_sge){ .addr = op->abuf, .len = TP_ATOMIC_LEN };
	op->nsge = 1;
	op->len = TP_ATOMIC_LEN;
	op->nseg = 1;
}

/* A completion on the target: a Send, a Send or Write with immediate. */
static void emit_recv(struct tp_chan *ch, uint8_t opcode)
{
	struct tp_rxmsg *m = &ch->rx;
	struct tp_event *ev = tp_emit(ch, TP_EV_RECV, (enum tp_status)m->status, m->rb.wr_id,
				      m->off, m->tassn);

	if (ev) {
		ev->rspinfo = m->info;
		ev->opcode = opcode;
		ev->src_id = ch->peer_tpn;	/* UTP, CTP: the IniRCID that found us */
		if (m->has_imm) {
			ev->flags |= TP_EVF_IMM;
			ev->imm = m->imm;
		}
	}
	if (m->has_imm && m->status == TP_ST_OK)
		ch->st.ta_imm++;
	tp_rb_free(&m->rb);
	m->have_recv = false;
	if (m->status == TP_ST_OK)
		ch->st.msgs_delivered++;
}

static void start_msg(struct tp_chan *ch, uint64_t now, const struct tp_parsed *p)
{
	struct tp_rxmsg *m = &ch->rx;
	enum tp_status st = TP_ST_OK;
	struct tp_op *op;

	m->active = true;
	m->tpmsn = p->tph.tpmsn;
	m->tassn = p->tah.ini_tassn;
	m->ta_op = p->tah.opcode;
	m->retry = p->tah.retry;
	m->order = p->tah.order;
	m->status = TP_ST_OK;
	m->info = 0;
	m->off = 0;
	m->dst = NULL;
	m->cap = 0;
	m->has_imm = false;
	if (ub_ta_is_atomic(m->ta_op)) {
		start_atomic(ch, p);
		return;
	}
	switch (m->ta_op) {
	case UB_TA_SEND:
	case UB_TA_SEND_IMM:
	case UB_TA_WRITE:
	case UB_TA_WRITE_IMM:
		/* After an RNR or a page fault, later messages are refused too
		 * until the refused one comes back (Retry), so that they are
		 * retried behind it and stay in order. */
		if (ch->rnr_block && !m->retry) {
			m->status = TP_ST_RNR;
			return;
		}
		ch->rnr_block = false;
		if (m->ta_op == UB_TA_SEND || m->ta_op == UB_TA_SEND_IMM) {
			if (!m->have_recv) {
				if (ch->rq_head == ch->rq_tail) {
					m->status = TP_ST_RNR;
					ch->rnr_block = true;
					return;
				}
				m->rb = ch->rq[ch->rq_head];
				ch->rq_head = (ch->rq_head + 1) % ch->rq_cap;
				m->have_recv = true;
			}
			m->cap = m->rb.cap;
			return;
		}
		if (!p->has_maetah) {
			m->status = TP_ST_COMPLETER_ERR;
			m->info = TP_RSPINFO_PROTOCOL;
			return;
		}
		m->dst = mr_check(ch, p, p->mae.length, TP_ACCESS_WRITE, &st);
		m->cap = p->mae.length;
		m->status = (uint8_t)st;
		if (st == TP_ST_PAGE_FAULT)
			ch->rnr_block = true;
		return;
	case UB_TA_READ:
		if (!p->has_maetah) {
			m->status = TP_ST_COMPLETER_ERR;
			m->info = TP_RSPINFO_PROTOCOL;
			return;
		}
		m->va = p->mae.va;
		m->token = p->mae.token_id;
		m->rd_len = p->mae.length;
		m->dst = mr_check(ch, p, m->rd_len, TP_ACCESS_READ, &st);
		m->status = (uint8_t)st;
		if (tp_is_ctp(ch) && m->rd_len > ch->cfg.mtu && st == TP_ST_OK) {
			/* CTP answers in one packet: no more than an MTU. */
			m->status = TP_ST_COMPLETER_ERR;
			m->info = TP_RSPINFO_TOO_LONG;
		}
		return;
	case UB_TA_TAACK:
		tp_snd_on_answer(ch, now, m->tassn, p->tah.rspst, p->tah.rspinfo);
		return;
	case UB_TA_READ_RESP:
	case UB_TA_ATOMIC_RESP:
		op = tp_snd_find_op(ch, m->tassn);
		if (!op || op->kind != (m->ta_op == UB_TA_READ_RESP ? OP_READ : OP_ATOMIC) ||
		    op->state != OS_SENT) {
			ch->st.ta_proto_err++;
			m->status = TP_ST_COMPLETER_ERR;
			m->op = UINT32_MAX;
			return;
		}
		m->op = (uint32_t)(op - ch->sq);
		return;
	default:
		ch->st.ta_proto_err++;
		m->status = TP_ST_COMPLETER_ERR;
		m->info = TP_RSPINFO_PROTOCOL;
	}
}

static void finish_msg(struct tp_chan *ch, uint32_t psn)
{
	struct tp_rxmsg *m = &ch->rx;
	bool manual = ch->cfg.manual_taack;
	struct tp_op *op;

	m->active = false;
	switch (m->ta_op) {
	case UB_TA_SEND:
	case UB_TA_SEND_IMM:
		if (m->have_recv && m->status != TP_ST_RNR)
			emit_recv(ch, m->has_imm ? TP_OP_SEND_IMM : TP_OP_SEND);
		answer(ch, m->tassn, (enum tp_status)m->status, m->info, psn, m->order,
		       manual && m->status == TP_ST_OK);
		break;
	case UB_TA_WRITE:
	case UB_TA_WRITE_IMM:
		/* With immediate: the receive its last packet took completes too. */
		if (m->has_imm && m->have_recv && m->status != TP_ST_RNR)
			emit_recv(ch, TP_OP_WRITE_IMM);
		else if (m->status == TP_ST_OK)
			ch->st.msgs_delivered++;
		answer(ch, m->tassn, (enum tp_status)m->status, m->info, psn, m->order, false);
		break;
	case UB_TA_READ:
		if (m->status != TP_ST_OK) {
			/* A refused Read is answered by a TAACK in its own packet. */
			answer(ch, m->tassn, (enum tp_status)m->status, m->info, psn, 1, false);
			break;
		}
		op = tp_sq_push(ch);	/* room checked on arrival */
		if (!op)
			break;
		op->kind = OP_READ_RESP;
		op->tassn = m->tassn;
		op->sge1 = (struct tp_sge){ .addr = m->dst, .len = (uint32_t)m->rd_len };
		op->nsge = 1;
		op->len = m->rd_len;
		op->nseg = m->rd_len ? (uint32_t)((m->rd_len + ch->cfg.mtu - 1) / ch->cfg.mtu) : 1;
		break;
	case UB_TA_READ_RESP:
		if (m->op == UINT32_MAX)
			break;
		op = &ch->sq[m->op];
		if (m->status == TP_ST_OK && op->rd_got == op->rd_len)
			ch->st.msgs_delivered++;
		tp_snd_op_answered(ch, op, m->status == TP_ST_OK && op->rd_got == op->rd_len ?
				   TP_ST_OK : TP_ST_COMPLETER_ERR);
		break;
	case UB_TA_ATOMIC_RESP:
		if (m->op == UINT32_MAX)
			break;
		op = &ch->sq[m->op];
		if (m->status == TP_ST_OK && m->off == TP_ATOMIC_LEN) {
			uint64_t v = ub_get_be64(m->abuf);

			memcpy(op->dst, &v, sizeof(v));	/* native byte order */
			op->rd_got = TP_ATOMIC_LEN;
			ch->st.msgs_delivered++;
		}
		tp_snd_op_answered(ch, op, op->rd_got == TP_ATOMIC_LEN ? TP_ST_OK :
				   TP_ST_COMPLETER_ERR);
		break;
	default:
		if (ub_ta_is_atomic(m->ta_op))
			finish_atomic(ch, psn);
		break;
	}
}

/* May a packet with opcode `op` continue a message begun with `first`? */
static bool same_msg_op(uint8_t first, uint8_t op)
{
	if (first == UB_TA_SEND)
		return op == UB_TA_SEND || op == UB_TA_SEND_IMM;
	if (first == UB_TA_WRITE)
		return op == UB_TA_WRITE || op == UB_TA_WRITE_IMM;
	return op == first;
}

/* One packet, in PSN order, to the transaction layer. */
/* The last packet of a Send or Write with immediate: its IMMETAH; a Write
 * with immediate takes a posted receive now (none: RNR, as a Send). */
static void take_imm(struct tp_chan *ch, const struct tp_parsed *p)
{
	struct tp_rxmsg *m = &ch->rx;

	m->has_imm = true;
	m->imm = p->imm.imm;
	if (p->tah.opcode != UB_TA_WRITE_IMM || m->status != TP_ST_OK || m->have_recv)
		return;
	if (ch->rq_head == ch->rq_tail) {
		m->status = TP_ST_RNR;
		ch->rnr_block = true;
		return;
	}
	m->rb = ch->rq[ch->rq_head];
	ch->rq_head = (ch->rq_head + 1) % ch->rq_cap;
	m->have_recv = true;
}

/* One packet, in PSN order, to the transaction layer. */
static void deliver(struct tp_chan *ch, uint64_t now, const struct tp_parsed *p, uint32_t psn)
{
	struct tp_rxmsg *m = &ch->rx;
	size_t n = p->payload_len;

	if (m->active && (p->tph.tpmsn != m->tpmsn || p->tah.ini_tassn != m->tassn)) {
		/* The previous message never saw its Last: a broken peer. */
		ch->st.ta_proto_err++;
		m->status = TP_ST_COMPLETER_ERR;
		m->info = TP_RSPINFO_PROTOCOL;
		finish_msg(ch, tp_psn_add(psn, TP_PSN_MASK));
	}
	if (!m->active)
		start_msg(ch, now, p);
	else if (!same_msg_op(m->ta_op, p->tah.opcode) && m->status != TP_ST_COMPLETER_ERR) {
		ch->st.ta_proto_err++;		/* a Send turned Write, ... */
		m->status = TP_ST_COMPLETER_ERR;
		m->info = TP_RSPINFO_PROTOCOL;
	}
	if (ub_ta_has_immetah(p->tah.opcode)) {
		if (p->tph.last) {
			take_imm(ch, p);
		} else if (m->status != TP_ST_COMPLETER_ERR) {
			ch->st.ta_proto_err++;	/* the immediate is the last packet's */
			m->status = TP_ST_COMPLETER_ERR;
			m->info = TP_RSPINFO_PROTOCOL;
		}
	}
	ch->st.bytes_delivered += n;
	if (m->status == TP_ST_OK && n) {
		switch (m->ta_op) {
		case UB_TA_SEND:
		case UB_TA_SEND_IMM:
			if (!m->have_recv || m->off + n > m->cap) {
				m->status = TP_ST_COMPLETER_ERR;	/* longer than the buffer */
				m->info = TP_RSPINFO_TOO_LONG;
				break;
			}
			tp_sge_in(rb_sge(&m->rb), m->rb.nsge, m->off, p->payload, n);
			break;
		case UB_TA_WRITE:
		case UB_TA_WRITE_IMM:
			if (!m->dst || m->off + n > m->cap) {
				m->status = TP_ST_COMPLETER_ERR;	/* longer than announced */
				m->info = TP_RSPINFO_TOO_LONG;
				break;
			}
			memcpy(m->dst + m->off, p->payload, n);
			break;
		case UB_TA_READ_RESP: {
			struct tp_op *op = &ch->sq[m->op];

			if (op->rd_got + n > op->rd_len) {
				m->status = TP_ST_COMPLETER_ERR;
				break;
			}
			tp_sge_in(op_sge(op), op->nsge, op->rd_got, p->payload, n);
			op->rd_got += n;
			break;
		}
		case UB_TA_ATOMIC_RESP:
		default:
			if (!ub_ta_is_atomic(m->ta_op) && m->ta_op != UB_TA_ATOMIC_RESP) {
				m->status = TP_ST_COMPLETER_ERR;	/* no payload expected */
				break;
			}
			/* Operands (request) or the value (answer): kept for the end. */
			if (m->off < sizeof(m->abuf))
				memcpy(m->abuf + m->off, p->payload,
				       n < sizeof(m->abuf) - m->off ? n : sizeof(m->abuf) - m->off);
		}
	}
	m->off += n;
	if (p->tph.last)
		finish_msg(ch, psn);
}

/* ---- UTP -------------------------------------------------------------------- */

/*
 * A UTP message is one packet (the UTPH has no PSN to reassemble by): into
 * the next posted buffer, or dropped and counted when there is none or it
 * is too short. No answer: UTP is unreliable.
 */
static enum tp_rx_verdict utp_rx(struct tp_chan *ch, const struct tp_parsed *p)
{
	struct tp_rxmsg *m = &ch->rx;
	size_t n = p->payload_len;

	if (p->tah.opcode != UB_TA_SEND && p->tah.opcode != UB_TA_SEND_IMM) {
		ch->st.rx_bad_opcode++;
		return TP_RX_DROP;
	}
	if (ch->rq_head == ch->rq_tail || n > ch->rq[ch->rq_head].cap) {
		ch->st.utp_drop++;
		return TP_RX_DROP;
	}
	/* A whole message in one packet: through the reassembly state, which
	 * UTP otherwise never uses. */
	m->rb = ch->rq[ch->rq_head];
	ch->rq_head = (ch->rq_head + 1) % ch->rq_cap;
	m->have_recv = true;
	m->status = TP_ST_OK;
	m->info = 0;
	m->off = n;
	m->tassn = p->tah.ini_tassn;
	m->has_imm = p->has_immetah;
	m->imm = p->imm.imm;
	tp_sge_in(rb_sge(&m->rb), m->rb.nsge, 0, p->payload, n);
	ch->st.rx_inorder++;
	ch->st.bytes_delivered += n;
	emit_recv(ch, m->has_imm ? TP_OP_SEND_IMM : TP_OP_SEND);
	return TP_RX_OK;
}

/* ---- RTP receive ------------------------------------------------------------ */

static bool ooo_alloc(struct tp_chan *ch)
{
	if (ch->ooo_buf)
		return true;
	ch->ooo_stride = ch->cfg.mtu + TP_HDR_MAX;
	ch->ooo_buf = malloc(ch->ooo_stride * ch->cfg.ooo_range);
	ch->ooo_len = calloc(ch->cfg.ooo_range, sizeof(*ch->ooo_len));
	if (!ch->ooo_buf || !ch->ooo_len) {
		free(ch->ooo_buf);
		free(ch->ooo_len);
		ch->ooo_buf = NULL;
		ch->ooo_len = NULL;
		return false;
	}
	return true;
}

/* RACK: a duplicate of psn arrived; the sender hears of each (at most 8
 * waiting: more are dropped, the counts are then short). */
static void dsack_push(struct tp_chan *ch, uint32_t psn)
{
	if (ch->cfg.rack && !tp_is_gbn(ch) && ch->dsack_n < 8)
		ch->dsack_q[ch->dsack_n++] = psn;
}

static void note_ack(struct tp_chan *ch, uint64_t now, bool now_please)
{
	if (!ch->ack_pending)
		ch->ack_deadline = now + ch->cfg.ack_delay_ns;
	ch->ack_pending = true;
	if (now_please || ++ch->ack_cnt >= ch->cfg.ack_coalesce)
		ch->ack_now = true;
}

/* A TPSACK at once: the notes' rule, with every packet held out of order
 * (reordering across paths is no loss: after sack_after of them). A RACK
 * receiver coalesces them unless sack_after asks for more than one. */
static bool sack_now(const struct tp_chan *ch)
{
	return ch->n_ooo && ch->n_ooo >= ch->cfg.sack_after &&
	       !(ch->cfg.rack && ch->cfg.sack_after <= 1);
}

/* A message's first packet may need an answer packet later: keep room. */
static bool room_for(const struct tp_chan *ch)
{
	return ch->rx.active || sq_free(ch) > 1;
}

enum tp_rx_verdict tp_rcv_data(struct tp_chan *ch, uint64_t now, const struct tp_parsed *p,
			       const uint8_t *raw, size_t len, uint8_t ecn)
{
	uint32_t psn = p->tph.psn, range = ch->cfg.ooo_range;
	int32_t d;

	if (ecn == 3) {
		ch->st.rx_ecn_ce++;
		if (ch->cfg.cc && ch->cfg.cc->on_ecn)
			ch->cfg.cc->on_ecn(ch->cfg.cc_ctx, now);
	}
	if (!tp_reliable(ch))
		return utp_rx(ch, p);

	d = tp_psn_diff(psn, ch->rcv_nxt);
	if (d < 0) {
		/* Duplicate: always answered, or a sender whose ACK was lost
		 * would never learn that it may move on. */
		struct tp_result *r = &ch->results[p->tah.ini_tassn % TP_RESULTS];

		ch->st.rx_dup++;
		dsack_push(ch, psn);
		note_ack(ch, now, true);
		if (p->tph.last && r->valid && !r->pending && r->tassn == p->tah.ini_tassn &&
		    p->tah.order == ORDER_ROL && !ub_ta_is_answer(p->tah.opcode) &&
		    p->tah.opcode != UB_TA_READ && !ub_ta_is_atomic(p->tah.opcode))
			push_taack_ack(ch, ack_cap(ch), r->tassn, r->rspst, r->rspinfo);
		return TP_RX_DUP;
	}
	if ((uint32_t)d >= range || len > ch->cfg.mtu + TP_HDR_MAX) {
		ch->st.rx_invalid++;
		return TP_RX_DROP;
	}
	if (d > 0) {
		if (tp_is_gbn(ch)) {
			ch->st.rx_gbn_drop++;
			if (ch->cfg.mode == TP_MODE_RTP_GBN_FAST && !ch->nak_sent)
				ch->nak_pending = ch->nak_sent = true;
			return TP_RX_DROP;
		}
		if (!ooo_alloc(ch)) {
			ch->st.rx_no_room++;
			return TP_RX_DROP;
		}
		if (ch->ooo_len[psn % range]) {
			ch->st.rx_dup++;
			dsack_push(ch, psn);
			ch->sack_pending = true;
			return TP_RX_DUP;
		}
		memcpy(ch->ooo_buf + (size_t)(psn % range) * ch->ooo_stride, raw, len);
		ch->ooo_len[psn % range] = (uint32_t)len;
		ch->n_ooo++;
		ch->st.rx_ooo++;
		if (tp_psn_diff(psn, ch->rcv_max) > 0)
			ch->rcv_max = psn;
		/* RACK: the sender learns what arrived from TPSACKs, coalesced
		 * as TPACKs are (each names the newest packets held; time, not
		 * their count, tells loss), at once only past sack_after > 1. */
		if (sack_now(ch))
			ch->sack_pending = true;
		else if (ch->cfg.rack)
			note_ack(ch, now, p->tph.ackreq);
		return TP_RX_OK;
	}

	if (!room_for(ch)) {
		ch->st.rx_no_room++;
		return TP_RX_DROP;
	}
	if (ch->n_ooo && ch->ooo_len[psn % range]) {
		/* Held already (the drain below stopped for want of room):
		 * this copy goes in its place. */
		ch->ooo_len[psn % range] = 0;
		ch->n_ooo--;
	}
	deliver(ch, now, p, psn);
	ch->st.rx_inorder++;
	if (tp_psn_diff(psn, ch->rcv_max) > 0)
		ch->rcv_max = psn;
	ch->rcv_nxt = tp_psn_add(psn, 1);
	ch->nak_sent = false;
	note_ack(ch, now, p->tph.ackreq);
	/* Whatever waited behind this PSN follows it up. */
	while (ch->n_ooo && ch->ooo_len[ch->rcv_nxt % range]) {
		uint32_t i = ch->rcv_nxt % range;
		struct tp_parsed q;
		const char *why;

		if (!room_for(ch))
			break;
		if (!tp_parse(ch->ooo_buf + (size_t)i * ch->ooo_stride, ch->ooo_len[i], &q, &why))
			deliver(ch, now, &q, ch->rcv_nxt);
		ch->ooo_len[i] = 0;
		ch->n_ooo--;
		ch->rcv_nxt = tp_psn_add(ch->rcv_nxt, 1);
		note_ack(ch, now, q.tph.ackreq);
	}
	if (sack_now(ch))
		ch->sack_pending = true;
	return TP_RX_OK;
}

/* ---- responses ------------------------------------------------------------ */

/* The cumulative ack may not pass a Send whose ROL answer is pending. */
static uint32_t ack_cap(const struct tp_chan *ch)
{
	uint32_t cum = tp_psn_add(ch->rcv_nxt, TP_PSN_MASK);

	if (ch->pq_head != ch->pq_tail) {
		const struct tp_pend *q = ch->pend;
		const struct tp_result *r = &ch->results[q[ch->pq_head].tassn % TP_RESULTS];
		uint32_t hold = tp_psn_add(r->last_psn, TP_PSN_MASK);

		if (q[ch->pq_head].order == ORDER_ROL && tp_psn_diff(cum, hold) > 0)
			cum = hold;
	}
	return cum;
}

static size_t enc_sack(struct tp_chan *ch, uint8_t *buf, size_t cap, uint32_t c)
{
	/* D-SACK [chosen]: Dup set, MaxRcvPSN names the PSN received twice. */
	struct ub_saetph_fields sa = { .max_rcv_psn = ch->dsack_n ? ch->dsack_q[0] : ch->rcv_max,
				       .dup = ch->dsack_n > 0 };
	uint32_t need = (uint32_t)tp_psn_diff(ch->rcv_max, c) + 1, bits, range = ch->cfg.ooo_range;
	size_t n;

	while (sa.size_code < UB_SAETPH_MAX_SIZE_CODE && ub_saetph_bitmap_bits(sa.size_code) < need)
		sa.size_code++;
	bits = ub_saetph_bitmap_bits(sa.size_code);
	if (cap < sizeof(struct ub_tph) + ub_saetph_len(sa.size_code))
		return 0;
	for (uint32_t k = 0; k < bits && k < need; k++) {
		uint32_t psn = tp_psn_add(c, k);

		if (tp_psn_diff(psn, ch->rcv_nxt) < 0 ||
		    (ch->ooo_len && tp_psn_diff(psn, ch->rcv_nxt) < (int32_t)range &&
		     ch->ooo_len[psn % range]))
			ub_sack_set(sa.bitmap, k);
	}
	n = tp_enc_tph(buf, ch, UB_TP_SACK, false, TP_NLP_NONE, c, 0);
	return n + ub_saetph_encode(buf + n, &sa);
}

size_t tp_rcv_response(struct tp_chan *ch, uint64_t now, void *out, size_t cap,
		       struct tp_tx_info *info)
{
	uint8_t *buf = out;
	size_t n = 0;
	uint32_t psn = 0;

	if (!tp_reliable(ch))
		return 0;
	if (cap < sizeof(struct ub_tph) + sizeof(struct ub_tah))
		return 0;
	if (ch->tf_head != ch->tf_tail) {
		const struct tp_taack_ack *a = &ch->taack_fifo[ch->tf_head];
		struct ub_tah_fields tah = { .opcode = UB_TA_TAACK, .ini_tassn = a->tassn,
					     .rspst = a->rspst, .rspinfo = a->rspinfo };

		/* ROL: the RTPH of the TPACK that carries the answer says what it
		 * is (UB 2.0 §6: ACK, RNR, page fault, completer error), as the
		 * TAACK in it does. */
		struct ub_tph_fields f = {
			.opcode = UB_TP_ACK, .last = true, .nlp = UB_NLP_TAH, .src_tpn = ch->tpn,
			.dst_tpn = ch->peer_tpn, .psn = a->psn, .rspst = a->rspst,
			.rspinfo = a->rspinfo,
		};

		psn = a->psn;
		ub_tph_encode((struct ub_tph *)buf, &f);
		n = sizeof(struct ub_tph);
		ub_tah_encode((struct ub_tah *)(buf + n), &tah);
		n += sizeof(struct ub_tah);
		n = tp_cc_ack_ext(ch, now, buf, n, cap);
		ch->tf_head = (ch->tf_head + 1) % TP_FIFO;
		ch->st.tx_ack++;
	} else if (ch->nak_pending) {
		struct ub_tph_fields f = {
			.opcode = UB_TP_ACK, .nlp = TP_NLP_NONE, .src_tpn = ch->tpn,
			.dst_tpn = ch->peer_tpn, .psn = ch->rcv_nxt, .rspst = UB_RSPST_NAK,
		};

		psn = ch->rcv_nxt;
		ub_tph_encode((struct ub_tph *)buf, &f);
		n = sizeof(struct ub_tph);
		ch->nak_pending = false;
		ch->st.tx_nak++;
	} else if (ch->sack_pending || ch->dsack_n ||
		   (ch->ack_pending && (ch->ack_now || now >= ch->ack_deadline))) {
		psn = ack_cap(ch);
		if (((ch->n_ooo && (ch->n_ooo >= ch->cfg.sack_after || ch->cfg.rack)) ||
		     ch->dsack_n) && !tp_is_gbn(ch)) {
			n = enc_sack(ch, buf, cap, psn);
			if (!n)
				return 0;
			ch->st.tx_sack++;
			if (ch->dsack_n)
				memmove(ch->dsack_q, ch->dsack_q + 1, --ch->dsack_n * sizeof(ch->dsack_q[0]));
		} else {
			n = tp_enc_tph(buf, ch, UB_TP_ACK, false, TP_NLP_NONE, psn, 0);
			ch->st.tx_ack++;
		}
		n = tp_cc_ack_ext(ch, now, buf, n, cap);
		ch->sack_pending = ch->ack_pending = ch->ack_now = false;
		ch->ack_cnt = 0;
		ch->ack_deadline = 0;
	} else {
		return 0;
	}
	*info = (struct tp_tx_info){ .chan = ch, .user = ch->cfg.user, .src_tpn = ch->tpn,
				     .dst_tpn = ch->peer_tpn, .psn = psn };
	return n;
}

void tp_rcv_tick(struct tp_chan *ch, uint64_t now)
{
	if (ch->ack_pending && now >= ch->ack_deadline)
		ch->ack_now = true;
}

uint64_t tp_rcv_deadline(const struct tp_chan *ch)
{
	/* Responses already due leave with the next tp_ep_tx(): no timer. */
	return ch->ack_pending && !ch->ack_now ? ch->ack_deadline : UINT64_MAX;
}

/* For tp_ctp.c: a CTP packet is a whole operation, taken as it comes. */
void tp_rcv_deliver(struct tp_chan *ch, uint64_t now, const struct tp_parsed *p, uint32_t psn)
{
	deliver(ch, now, p, psn);
}

bool tp_rcv_room(const struct tp_chan *ch) { return room_for(ch); }
