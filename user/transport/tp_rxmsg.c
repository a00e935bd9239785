// SPDX-License-Identifier: BSD-2-Clause
/*
 * The target's transaction layer: in-order packets reassembled into
 * messages, Send into posted buffers, Write, Read and atomics against
 * registered memory (checked against its token, access and bounds), each
 * finished by its completion and its answer.
 */
#include <string.h>

#include "transport/tp_rxmsg.h"
#include "transport/tp_ack.h"
#include "transport/tp_answer.h"
#include "transport/tp_event.h"
#include "transport/tp_mr.h"
#include "transport/tp_sge.h"
#include "transport/tp_sq.h"

/*
 * A remote access of the MAETAH's VA and len, checked (tp_mr_access()): the
 * address to access, or NULL with *st set, a refusal counted by its reason
 * and kept in ch->rx.info. Nothing is read or written then.
 */
static uint8_t *mr_check(struct tp_chan *ch, const struct tp_parsed *p, size_t len,
			 uint32_t need, enum tp_status *st)
{
	uint8_t info = 0;
	uint8_t *a = tp_mr_access(ch->ep, p, p->mae.va, len, need, st, &info);

	if (a || *st != TP_ST_COMPLETER_ERR)
		return a;
	switch (info) {
	case TP_RSPINFO_BAD_TOKEN:	ch->st.ta_bad_token_id++; break;
	case TP_RSPINFO_TOKEN_VALUE:	ch->st.ta_bad_token_value++; break;
	case TP_RSPINFO_ACCESS:		ch->st.ta_bad_access++; break;
	case TP_RSPINFO_RANGE:		ch->st.ta_bad_range++; break;
	default:			ch->st.ta_bad_align++; break;
	}
	ch->rx.info = info;
	return NULL;
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
		tp_answer(ch, m->tassn, (enum tp_status)m->status, m->info, psn, 1, false);
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
void tp_emit_recv(struct tp_chan *ch, uint8_t opcode)
{
	struct tp_rxmsg *m = &ch->rx;
	/* A Send longer than its buffer (completer error) tells the buffer's
	 * length, not what came. */
	size_t len = opcode != TP_OP_WRITE_IMM && m->off > m->rb.cap ? m->rb.cap : m->off;
	struct tp_event *ev = tp_emit(ch, TP_EV_RECV, (enum tp_status)m->status, m->rb.wr_id,
				      len, m->tassn);

	if (ev) {
		ev->rspinfo = m->info;
		ev->opcode = opcode;
		ev->src_id = ch->peer_tpn;	/* UTP, CTP: the IniRCID that found us */
		if (m->has_imm) {
			ev->flags |= TP_EVF_IMM;
			ev->imm = m->imm;
		}
		if (m->retry)
			ev->flags |= TP_EVF_RETRY;
	}
	if (m->has_imm && m->status == TP_ST_OK)
		ch->st.ta_imm++;
	tp_rb_free(&m->rb);
	m->have_recv = false;
	if (m->status == TP_ST_OK)
		ch->st.msgs_delivered++;
}

/* The message in ch->rx takes the next posted receive, unless it holds one:
 * false when none is posted (the message is RNR and the channel waits). */
static bool take_recv(struct tp_chan *ch)
{
	struct tp_rxmsg *m = &ch->rx;

	if (m->have_recv)
		return true;
	if (ch->rq_head == ch->rq_tail) {
		m->status = TP_ST_RNR;
		tp_rnr_hold_refused(&ch->rnr_hold, m->tassn);
		return false;
	}
	m->rb = ch->rq[ch->rq_head];
	ch->rq_head = (ch->rq_head + 1) % ch->rq_cap;
	m->have_recv = true;
	return true;
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
		if (tp_rnr_hold_refuses(&ch->rnr_hold, m->tassn, m->retry)) {
			m->status = TP_ST_RNR;
			tp_rnr_hold_refused(&ch->rnr_hold, m->tassn);
			return;
		}
		if (m->ta_op == UB_TA_SEND || m->ta_op == UB_TA_SEND_IMM) {
			if (!take_recv(ch))
				return;
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
			tp_rnr_hold_refused(&ch->rnr_hold, m->tassn);
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
			tp_emit_recv(ch, m->has_imm ? TP_OP_SEND_IMM : TP_OP_SEND);
		tp_answer(ch, m->tassn, (enum tp_status)m->status, m->info, psn, m->order,
		       manual && m->status == TP_ST_OK);
		break;
	case UB_TA_WRITE:
	case UB_TA_WRITE_IMM:
		/* With immediate: the receive its last packet took completes too. */
		if (m->has_imm && m->have_recv && m->status != TP_ST_RNR)
			tp_emit_recv(ch, TP_OP_WRITE_IMM);
		else if (m->status == TP_ST_OK)
			ch->st.msgs_delivered++;
		tp_answer(ch, m->tassn, (enum tp_status)m->status, m->info, psn, m->order, false);
		break;
	case UB_TA_READ:
		if (m->status != TP_ST_OK) {
			/* A refused Read is answered by a TAACK in its own packet. */
			tp_answer(ch, m->tassn, (enum tp_status)m->status, m->info, psn, 1, false);
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

/* The last packet of a Send or Write with immediate: its IMMETAH; a Write
 * with immediate takes a posted receive now (none: RNR, as a Send). */
static void take_imm(struct tp_chan *ch, const struct tp_parsed *p)
{
	struct tp_rxmsg *m = &ch->rx;

	m->has_imm = true;
	m->imm = p->imm.imm;
	if (p->tah.opcode == UB_TA_WRITE_IMM && m->status == TP_ST_OK)
		take_recv(ch);
}

/* One packet, in PSN order, to the transaction layer. */
void tp_rcv_deliver(struct tp_chan *ch, uint64_t now, const struct tp_parsed *p, uint32_t psn)
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
