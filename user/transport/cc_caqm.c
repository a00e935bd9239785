// SPDX-License-Identifier: BSD-2-Clause
/*
 * CAQM: a window the network approves. Every data packet carries EN in its
 * CCI; once per window the sender asks for caqm_ai_units more (I = 1,
 * Hint). Each switch on the path approves, trims or refuses the request by
 * its own queue budget and marks C when congested (tp_caqm_switch()); the
 * receiver sums what arrived into the CETPH of its next TPACK-CC/TPSACK-CC
 * (C = congested packets, I = some Hint approved, Hint = approved units).
 * The sender applies the window rules of UB 2.0 §6:
 *   C>0, I=0: decrease by C units   C>0, I=1: increase by Hint - C
 *   C=0, I=1: increase by Hint      C=0, I=0: unchanged
 * (units of hint_unit bytes). Asking once per window makes the increase
 * additive per round trip, and a cut per congested packet makes the
 * decrease proportional to the window: AIMD, so flows meet at a fair share.
 */
#include "transport/cc_np.h"

void cc_caqm_init(struct tp_cc *cc)
{
	cc->w.cw = cc->cfg.init_cw;
}

static bool cq_can_send(void *ctx, uint64_t now, uint64_t inflight, uint32_t bytes)
{
	struct tp_cc *cc = ctx;

	cc->now = now;
	return inflight == 0 || (double)inflight + bytes <= cc->w.cw;
}

static bool cq_tx_cci(void *ctx, uint64_t now, uint32_t bytes, bool rtx, uint16_t *cci)
{
	struct tp_cc *cc = ctx;
	uint16_t v = (TP_CCI_MODE_CAQM << TP_CCI_MODE_SHIFT) | TP_CCI_CAQM_EN;

	(void)bytes;
	cc->now = now;
	if (!rtx && cc->w.since_req >= cc->w.cw) {
		v |= TP_CCI_CAQM_I | (uint16_t)cc->cfg.caqm_ai_units;
		cc->w.since_req = 0;
	}
	*cci = v;
	return true;
}

static void cq_on_send(void *ctx, uint64_t now, uint32_t bytes, bool rtx)
{
	struct tp_cc *cc = ctx;

	(void)rtx;
	cc->now = now;
	cc->w.since_req += bytes;
}

static void cq_on_loss(void *ctx, uint64_t now, enum tp_loss_kind kind)
{
	struct tp_cc *cc = ctx;

	cc->now = now;
	if (kind == TP_LOSS_RTO) {
		cc->w.cw = cc_clamp(cc->w.cw / 2, cc->cfg.min_cw, cc->cfg.max_cw);
		cc->st.cuts++;
		cc->st.rto_cuts++;
	}
}

static void cq_on_cetph(void *ctx, uint64_t now, const struct ub_cetph_fields *ce)
{
	struct tp_cc *cc = ctx;
	double unit = cc->cfg.hint_unit, d = 0;

	cc->now = now;
	cc->st.cetph_rcvd++;
	if (ce->c && !ce->i)
		d = -(double)ce->c;
	else if (ce->c && ce->i)
		d = (double)ce->hint - (double)ce->c;
	else if (ce->i)
		d = ce->hint;
	if (d < 0) {
		cc->st.cuts++;
		cc->st.ecn_cuts++;
	}
	else if (d > 0)
		cc->st.increases++;
	cc->w.cw = cc_clamp(cc->w.cw + d * unit, cc->cfg.min_cw, cc->cfg.max_cw);
}

static void cq_on_rx_data(void *ctx, uint64_t now, uint32_t bytes, const struct tp_rx_meta *m)
{
	cc_np_rx_data(ctx, now, bytes, m);
}

static bool cq_ack_cetph(void *ctx, uint64_t now, struct ub_cetph_fields *ce)
{
	struct tp_cc *cc = ctx;
	struct cc_np *np = &cc->np;

	cc->now = now;
	ce->ack_seq = np->rx_bytes;
	ce->c = np->caqm_c > 255 ? 255 : (uint8_t)np->caqm_c;
	ce->i = np->caqm_i;
	ce->hint = np->caqm_hint > 0xffff ? 0xffff : (uint16_t)np->caqm_hint;
	ce->loc = np->caqm_loc;
	np->caqm_c = np->caqm_hint = 0;
	np->caqm_i = np->caqm_loc = false;
	return true;
}

const struct tp_cc_ops tp_cc_caqm_ops = {
	.can_send = cq_can_send,
	.on_send = cq_on_send,
	.on_loss = cq_on_loss,
	.on_cetph = cq_on_cetph,
	.on_rx_data = cq_on_rx_data,
	.ack_cetph = cq_ack_cetph,
	.tx_cci = cq_tx_cci,
};

/* ---- the switch side -------------------------------------------------------- */

uint16_t tp_caqm_switch(struct tp_caqm_port *p, uint64_t now, uint32_t qlen, bool last_hop,
			uint16_t cci)
{
	uint32_t unit = p->hint_unit ? p->hint_unit : 1, want, room, grant;

	if (tp_cci_mode(cci) != TP_CCI_MODE_CAQM || !(cci & TP_CCI_CAQM_EN))
		return cci;	/* not a CAQM request: untouched */
	if (now - p->win_start >= p->window_ns) {
		p->win_start = now;
		p->approved = 0;
	}
	if (last_hop)
		cci |= TP_CCI_LOC;
	if (qlen > p->thresh) {
		/* Congested: mark, and no switch on the path may grant more. */
		p->congested++;
		if (cci & TP_CCI_CAQM_I)
			p->refused++;
		return (uint16_t)((cci | TP_CCI_CAQM_C) & ~(TP_CCI_CAQM_I | 0xff));
	}
	if (!(cci & TP_CCI_CAQM_I))
		return cci & ~0xff;	/* a Hint means nothing without I */
	want = cci & 0xff;
	room = p->thresh - qlen;
	room = room > p->approved ? (uint32_t)(room - p->approved) : 0;
	grant = room / unit < want ? room / unit : want;
	p->approved += (uint64_t)grant * unit;
	if (!grant) {
		p->refused++;
		return (uint16_t)(cci & ~(TP_CCI_CAQM_I | 0xff));
	}
	if (grant < want)
		p->trimmed++;
	p->granted++;
	return (uint16_t)((cci & ~0xff) | grant);
}
