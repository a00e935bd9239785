// SPDX-License-Identifier: BSD-2-Clause
/*
 * Congestion feedback on the wire, for the core: CNPs (CNPETPH), TPACK-CC /
 * TPSACK-CC (CETPH between the RTPH and the SAETPH, docs/WIRE.md §3) and the CCI
 * a data packet asks for. The algorithms themselves (cc_ldcp.c, cc_dcqcn.c,
 * cc_caqm.c) only see fields, through the channel's tp_cc_ops.
 */
#include <string.h>

#include "transport/cc_wire.h"
#include "transport/tp_wire.h"

#define CC_OP(ch, fn) ((ch)->cfg.cc && (ch)->cfg.cc->fn)

void tp_cc_rx_data(struct tp_chan *ch, uint64_t now, uint32_t bytes, const struct tp_rx_meta *m)
{
	static const struct tp_rx_meta none;

	if (CC_OP(ch, on_rx_data))
		ch->cfg.cc->on_rx_data(ch->cfg.cc_ctx, now, bytes, m ? m : &none);
}

void tp_cc_on_cetph(struct tp_chan *ch, uint64_t now, const struct ub_cetph_fields *ce)
{
	if (CC_OP(ch, on_cetph))
		ch->cfg.cc->on_cetph(ch->cfg.cc_ctx, now, ce);
}

void tp_cc_on_cnp(struct tp_chan *ch, uint64_t now, const struct ub_cnpetph_fields *cnp)
{
	if (CC_OP(ch, on_cnp))
		ch->cfg.cc->on_cnp(ch->cfg.cc_ctx, now, cnp->ecn, cnp->loc);
}

bool tp_cc_can_send(struct tp_chan *ch, uint64_t now, uint32_t bytes)
{
	return !CC_OP(ch, can_send) ||
	       ch->cfg.cc->can_send(ch->cfg.cc_ctx, now, ch->inflight_bytes, bytes);
}

void tp_cc_on_lost(struct tp_chan *ch, uint64_t now, uint32_t bytes)
{
	if (bytes && CC_OP(ch, on_lost))
		ch->cfg.cc->on_lost(ch->cfg.cc_ctx, now, bytes);
}

void tp_cc_on_send(struct tp_chan *ch, uint64_t now, uint32_t bytes, bool rtx)
{
	if (CC_OP(ch, on_send))
		ch->cfg.cc->on_send(ch->cfg.cc_ctx, now, bytes, rtx);
}

/*
 * A CTP CNP [chosen]: CTPH (UB_CTP_OP_CNP, NLP none) | CNPETPH with the VL
 * the peer's data came on (each side picks its own VL to send on).
 * No TPN names a context: the peer finds it by our address (the IP source
 * the datapath writes) and the VL, its {Dest Entity, VL}.
 */
static size_t ctp_cnp(struct tp_chan *ch, const struct ub_cnpetph_fields *cnp, uint8_t *buf,
		      struct tp_tx_info *info)
{
	struct ub_cnpetph_fields f = *cnp;

	buf[0] = ub_ctph_make(UB_CTP_OP_CNP, UB_NLP_NONE);
	f.vl = ch->ctp_rx_vl;	/* the marked data's VL: the sender's context is {us, that VL} */
	ub_cnpetph_encode((struct ub_cnpetph *)(buf + UB_CTPH_LEN), &f);
	*info = (struct tp_tx_info){ .chan = ch, .user = ch->cfg.user, .src_tpn = ch->tpn,
				     .dst_tpn = ch->peer_tpn, .psn = ch->ctp_sent, .ctp = true };
	return UB_CTPH_LEN + sizeof(struct ub_cnpetph);
}

/* A CNP owed by the receiver side of this channel: RTPH | CNPETPH (CTP: above). */
size_t tp_cc_response(struct tp_chan *ch, uint64_t now, void *out, size_t cap,
		      struct tp_tx_info *info)
{
	struct ub_cnpetph_fields cnp = { 0 };
	uint8_t *buf = out;
	uint32_t psn = tp_psn_add(ch->rcv_nxt, TP_PSN_MASK);
	size_t n;

	if (!CC_OP(ch, cnp_due) || cap < sizeof(struct ub_tph) + sizeof(struct ub_cnpetph))
		return 0;
	if (!ch->cfg.cc->cnp_due(ch->cfg.cc_ctx, now, &cnp))
		return 0;
	if (tp_is_ctp(ch))
		return ctp_cnp(ch, &cnp, buf, info);
	n = tp_enc_tph(buf, ch, UB_TP_CNP, false, TP_NLP_NONE, psn, 0);
	ub_cnpetph_encode((struct ub_cnpetph *)(buf + n), &cnp);
	n += sizeof(struct ub_cnpetph);
	*info = (struct tp_tx_info){ .chan = ch, .user = ch->cfg.user, .src_tpn = ch->tpn,
				     .dst_tpn = ch->peer_tpn, .psn = psn };
	return n;
}

/* Turn the TPACK/TPSACK of n bytes in buf into its -CC form when asked. */
size_t tp_cc_ack_ext(struct tp_chan *ch, uint64_t now, uint8_t *buf, size_t n, size_t cap)
{
	struct ub_cetph_fields ce = { 0 };
	struct ub_tph_fields f;
	size_t hl = sizeof(struct ub_tph), el = sizeof(struct ub_cetph);

	if (!n || !CC_OP(ch, ack_cetph) || n + el > cap)
		return n;
	ub_tph_decode((const struct ub_tph *)buf, &f);
	if (f.opcode != UB_TP_ACK && f.opcode != UB_TP_SACK)
		return n;
	if (!ch->cfg.cc->ack_cetph(ch->cfg.cc_ctx, now, &ce))
		return n;
	f.opcode = f.opcode == UB_TP_ACK ? UB_TP_ACK_CE : UB_TP_SACK_CE;
	ub_tph_encode((struct ub_tph *)buf, &f);
	memmove(buf + hl + el, buf + hl, n - hl);
	ub_cetph_encode((struct ub_cetph *)(buf + hl), &ce);
	return n + el;
}

void tp_cc_tx_data(struct tp_chan *ch, uint64_t now, struct tp_tx_info *info)
{
	uint16_t cci;

	if (!info->data || !CC_OP(ch, tx_cci))
		return;
	if (ch->cfg.cc->tx_cci(ch->cfg.cc_ctx, now, 0, info->rtx, &cci)) {
		info->has_cci = true;
		info->cci = cci;
	}
}
