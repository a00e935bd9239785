// SPDX-License-Identifier: BSD-2-Clause
/*
 * CTP, the compact transport (UB 2.0 §6) for a lossless native UB link: a
 * 1-byte CTPH, no PSN, no transport acknowledgement, no retransmission. Each
 * packet carries one whole transaction operation (the caller keeps it within
 * the MTU: tp_post_* says EMSGSIZE) or its answer: the target's TAACK or
 * ReadResp is a data packet like any other, so the initiator still learns
 * that an operation completed. What the link loses is never resent: the
 * operation completes TP_ST_TIMEOUT once ta_timeout_ns passed unanswered.
 *
 * The operations, the target's transaction layer and the answers are the
 * RTP ones (tp_sq.c, tp_rxmsg.c, tp_answer.c); only the transport around them differs.
 * Without TPNs a packet finds its channel by [chosen] the TAH's IniRCID, the
 * initiator's jetty: a request's names the peer's channel (peer_tpn), an
 * answer's our own (tpn); and by the source entity (cfg.peer_entity).
 *
 * Congestion control is per {Dest Entity, VL} (the channels of one peer
 * entity and VL share one CC instance, tp.h): sends are paced by it, marked
 * data feeds its receiver half, which owes the source a CTP CNP (cc_wire.c),
 * and a CNP cuts the instance of {its source entity, the VL it names}.
 */
#include <string.h>

#include "transport/tp_ctp.h"
#include "transport/cc_wire.h"
#include "transport/tp_recv.h"
#include "transport/tp_rxmsg.h"
#include "transport/tp_sq.h"
#include "transport/tp_wire.h"

static bool entity_match(const struct tp_chan *ch, const struct tp_rx_meta *meta)
{
	static const uint8_t any[16];

	return !memcmp(ch->cfg.peer_entity, any, sizeof(any)) ||
	       !memcmp(ch->cfg.peer_entity, meta->src, sizeof(meta->src));
}

static struct tp_chan *find_ctx(struct tp_ep *ep, uint32_t rcid, bool answer,
				const struct tp_rx_meta *meta)
{
	for (uint32_t i = 0; i < ep->nchans; i++) {
		struct tp_chan *ch = ep->chans[i];

		if (!tp_is_ctp(ch) || !ch->connected || ch->failed || !entity_match(ch, meta))
			continue;
		if ((answer ? ch->tpn : ch->peer_tpn) == rcid)
			return ch;
	}
	return NULL;
}

/*
 * CTPH | CNPETPH: every instance of {source entity, VL} hears it once (there
 * is one when the channels share theirs as tp.h asks); the first channel
 * counts it. For no CTP channel of that entity and VL: dropped, counted.
 */
static enum tp_rx_verdict ctp_rx_cnp(struct tp_ep *ep, uint64_t now, const uint8_t *b,
				     size_t len, const struct tp_rx_meta *meta)
{
	struct ub_cnpetph_fields cnp;
	const void *done[8];
	unsigned ndone = 0;

	if (len != UB_CTPH_LEN + sizeof(struct ub_cnpetph)) {
		ep->gone.rx_malformed++;
		return TP_RX_DROP;
	}
	ub_cnpetph_decode((const struct ub_cnpetph *)(b + UB_CTPH_LEN), &cnp);
	for (uint32_t i = 0; i < ep->nchans; i++) {
		struct tp_chan *ch = ep->chans[i];
		bool seen = false;

		if (!tp_is_ctp(ch) || !ch->connected || ch->failed || ch->cfg.vl != cnp.vl ||
		    !entity_match(ch, meta))
			continue;
		for (unsigned k = 0; k < ndone; k++)
			seen |= done[k] == ch->cfg.cc_ctx;
		if (seen)
			continue;
		if (!ndone)
			ch->st.rx_cnp++;	/* once, by the first channel */
		tp_cc_on_cnp(ch, now, &cnp);
		if (ndone < sizeof(done) / sizeof(done[0]))
			done[ndone++] = ch->cfg.cc_ctx;
	}
	if (!ndone) {
		ep->gone.rx_unknown_tpn++;
		return TP_RX_DROP;
	}
	return TP_RX_OK;
}

/* CTPH .. payload into p (the TPH fields zero but Last: a whole operation). */
static int ctp_parse(const uint8_t *b, size_t len, struct tp_parsed *p)
{
	const uint8_t *end = b + len;

	memset(p, 0, sizeof(*p));
	if (len < UB_CTPH_LEN + sizeof(struct ub_tah) || ub_ctph_opcode(b[0]) != UB_CTP_OP_TA ||
	    ub_ctph_nlp(b[0]) != UB_NLP_TAH)
		return -EINVAL;
	p->tph.last = true;
	return tp_parse_ta(b + UB_CTPH_LEN, end, p);
}

enum tp_rx_verdict tp_ctp_rx(struct tp_ep *ep, uint64_t now, const void *pkt, size_t len,
			     const struct tp_rx_meta *meta)
{
	struct tp_parsed p;
	struct tp_chan *ch;
	bool answer;

	if (len >= UB_CTPH_LEN && ub_ctph_opcode(*(const uint8_t *)pkt) == UB_CTP_OP_CNP &&
	    ub_ctph_nlp(*(const uint8_t *)pkt) == UB_NLP_NONE)
		return ctp_rx_cnp(ep, now, pkt, len, meta);
	if (ctp_parse(pkt, len, &p)) {
		ep->gone.rx_malformed++;
		return TP_RX_DROP;
	}
	answer = ub_ta_is_answer(p.tah.opcode);
	ch = find_ctx(ep, p.tah.ini_rcid, answer, meta);
	if (!ch) {
		ep->gone.rx_unknown_tpn++;
		return TP_RX_DROP;
	}
	ch->st.rx_ctp++;
	ch->ctp_rx_vl = meta->has_vl ? meta->vl : ch->cfg.vl;
	if (meta->ecn == 3)
		ch->st.rx_ecn_ce++;
	if (p.payload_len > ch->cfg.mtu) {
		ch->st.rx_malformed++;	/* one operation is at most one MTU */
		return TP_RX_DROP;
	}
	tp_cc_rx_data(ch, now, (uint32_t)p.payload_len, meta);
	/* A request may need an answer packet: without room it is dropped, and
	 * the initiator's transaction timeout reports it. */
	if (!answer && !tp_rcv_room(ch)) {
		ch->st.rx_no_room++;
		return TP_RX_DROP;
	}
	tp_rcv_deliver(ch, now, &p, 0);
	return TP_RX_OK;
}

size_t tp_ctp_send(struct tp_chan *ch, uint64_t now, uint8_t *buf, size_t cap,
		   struct tp_tx_info *info)
{
	struct tp_op *op = tp_snd_next_op(ch);
	size_t n;

	if (!op || cap < UB_CTPH_LEN || !tp_cc_can_send(ch, now, (uint32_t)op->len))
		return 0;
	if (ch->retry_next && tp_op_initiator(op)) {
		op->retry = true;	/* the target refuses until a Retry comes */
		ch->retry_next = false;
	}
	buf[0] = ub_ctph_make(UB_CTP_OP_TA, UB_NLP_TAH);
	n = tp_enc_ta(ch, op, 0, buf + UB_CTPH_LEN, cap - UB_CTPH_LEN);
	if (!n)
		return 0;
	op->next_seg = op->nseg;
	op->last_sent = true;
	op->state = OS_SENT;
	ch->st.tx_data++;
	ch->st.tx_bytes += op->len;
	tp_cc_on_send(ch, now, (uint32_t)op->len, false);
	*info = (struct tp_tx_info){
		.chan = ch, .user = ch->cfg.user, .src_tpn = ch->tpn, .dst_tpn = ch->peer_tpn,
		.psn = ch->ctp_sent++, .data = true, .ctp = true,
	};
	if (tp_op_initiator(op))
		op->deadline = now + ch->cfg.ta_timeout_ns;
	else
		tp_sq_progress(ch);	/* an answer: nothing waits for it here */
	return UB_CTPH_LEN + n;
}

static bool waiting(const struct tp_op *op)
{
	return tp_op_initiator(op) && op->state == OS_SENT && !op->answered;
}

void tp_ctp_tick(struct tp_chan *ch, uint64_t now)
{
	bool expired = false;

	for (uint32_t i = ch->sq_head; i != ch->sq_tail; i = (i + 1) % ch->sq_cap) {
		struct tp_op *op = &ch->sq[i];

		if (!waiting(op) || now < op->deadline)
			continue;
		ch->st.ta_timeout++;
		op->answered = true;
		op->status = TP_ST_TIMEOUT;
		expired = true;
	}
	if (expired)
		tp_sq_progress(ch);
}

uint64_t tp_ctp_deadline(const struct tp_chan *ch)
{
	uint64_t d = UINT64_MAX;

	for (uint32_t i = ch->sq_head; i != ch->sq_tail; i = (i + 1) % ch->sq_cap) {
		const struct tp_op *op = &ch->sq[i];

		if (waiting(op) && op->deadline < d)
			d = op->deadline;
	}
	return d;
}
