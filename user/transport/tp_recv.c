// SPDX-License-Identifier: BSD-2-Clause
/*
 * Receiver side of a TP channel: PSN classification, the out-of-order range,
 * in-order packets handed to the transaction layer (tp_rxmsg.c), UTP's
 * single-packet messages, and the responses: TPACK (coalesced, AckReq
 * honoured, TAACK aboard in ROL), TPNAK, TPSACK.
 */
#include <stdlib.h>
#include <string.h>

#include "transport/tp_recv.h"
#include "transport/cc_wire.h"
#include "transport/tp_answer.h"
#include "transport/tp_rxmsg.h"
#include "transport/tp_sge.h"
#include "transport/tp_wire.h"

static uint32_t sq_free(const struct tp_chan *ch)
{
	return (ch->sq_head + ch->sq_cap - ch->sq_tail - 1) % ch->sq_cap;
}

static uint32_t ack_cap(const struct tp_chan *ch);

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
	tp_emit_recv(ch, m->has_imm ? TP_OP_SEND_IMM : TP_OP_SEND);
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
bool tp_rcv_room(const struct tp_chan *ch)
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
		    p->tah.order == TP_ORDER_ROL && !ub_ta_is_answer(p->tah.opcode) &&
		    p->tah.opcode != UB_TA_READ && !ub_ta_is_atomic(p->tah.opcode))
			tp_push_taack_ack(ch, ack_cap(ch), r->tassn, r->rspst, r->rspinfo);
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

	if (!tp_rcv_room(ch)) {
		ch->st.rx_no_room++;
		return TP_RX_DROP;
	}
	if (ch->n_ooo && ch->ooo_len[psn % range]) {
		/* Held already (the drain below stopped for want of room):
		 * this copy goes in its place. */
		ch->ooo_len[psn % range] = 0;
		ch->n_ooo--;
	}
	tp_rcv_deliver(ch, now, p, psn);
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

		if (!tp_rcv_room(ch))
			break;
		if (!tp_parse(ch->ooo_buf + (size_t)i * ch->ooo_stride, ch->ooo_len[i], &q, &why))
			tp_rcv_deliver(ch, now, &q, ch->rcv_nxt);
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

		if (q[ch->pq_head].order == TP_ORDER_ROL && tp_psn_diff(cum, hold) > 0)
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
		/* It acknowledges as far as the plain TPACK due after it would
		 * (a one-packet message's AckReq asks for both): that one goes
		 * unsent, a packet less each way for every small message. */
		if (ch->tf_head == ch->tf_tail && ch->ack_pending && !ch->sack_pending &&
		    !ch->dsack_n && !ch->n_ooo && !ch->nak_pending && tp_psn_diff(psn, ack_cap(ch)) >= 0) {
			ch->ack_pending = ch->ack_now = false;
			ch->ack_cnt = 0;
			ch->ack_deadline = 0;
		}
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
