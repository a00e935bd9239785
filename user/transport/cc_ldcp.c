// SPDX-License-Identifier: BSD-2-Clause
/*
 * LDCP: window-based control of a TP channel (UB 2.0 §6).
 *
 * A packet leaves only when aval_win = cw - inflight allows it (one packet
 * always may, when nothing is in flight). inflight = bytes sent - bytes the
 * receiver got (new to it: a duplicate adds nothing, tp_ep.c), the latter
 * from the CETPH AckSequence of every TPACK-CC; an RTO resets it to 0, a
 * retransmission removes the bytes it resends (on_lost: the lost packets are
 * no longer in flight; a Go-Back-N go-back's, those its TPNAK leaves
 * unacknowledged, which the receiver dropped, while what the TPNAK acknowledges
 * but no TPACK-CC counted yet stays in flight until one does); every packet
 * sent, a resend too, counts.
 *
 * The window follows the marks the receiver echoes ([chosen] LDCP reading of
 * the CETPH: C = CE-marked packets the ack covers, Hint = packets it
 * covers): alpha is the marked fraction smoothed by g once per window, cw
 * shrinks by alpha/2 once per window with marks and grows by one MTU per
 * window without (DCTCP's law, which shares a marking queue fairly).
 */
#include "transport/cc_np.h"

void cc_ldcp_init(struct tp_cc *cc)
{
	cc->w.cw = cc->cfg.init_cw;
	cc->w.alpha = 1.0;
}

static uint32_t inflight(const struct tp_cc *cc)
{
	int32_t d = (int32_t)(cc->w.sent - cc->w.ack_seq);

	return d > 0 ? (uint32_t)d : 0;
}

static bool ld_can_send(void *ctx, uint64_t now, uint64_t core_inflight, uint32_t bytes)
{
	struct tp_cc *cc = ctx;
	uint32_t in = inflight(cc);

	/* LDCP keeps its own count, per the rules above; the core's is a bound
	 * (an acknowledgement without CETPH still frees what it covers). */
	if (core_inflight < in)
		in = (uint32_t)core_inflight;
	cc->now = now;
	return in == 0 || (double)in + bytes <= cc->w.cw;
}

static void ld_on_send(void *ctx, uint64_t now, uint32_t bytes, bool rtx)
{
	struct tp_cc *cc = ctx;

	(void)rtx;	/* a resend is in flight as much as the first send */
	cc->now = now;
	cc->w.sent += bytes;
}

/* A retransmission (selective, or a go-back): the lost bytes leave inflight. */
static void ld_on_lost(void *ctx, uint64_t now, uint32_t bytes)
{
	struct tp_cc *cc = ctx;

	cc->now = now;
	cc->w.sent -= inflight(cc) < bytes ? inflight(cc) : bytes;
}

static void ld_on_loss(void *ctx, uint64_t now, enum tp_loss_kind kind)
{
	struct tp_cc *cc = ctx;

	cc->now = now;
	if (kind != TP_LOSS_RTO)
		return;	/* the bytes came by on_lost */
	/* RTO: nothing is counted in flight any more. */
	cc->w.sent = cc->w.ack_seq;
	cc->w.cw = cc_clamp(cc->w.cw / 2, cc->cfg.min_cw, cc->cfg.max_cw);
	cc->st.cuts++;
	cc->st.rto_cuts++;
}

static void ld_on_cetph(void *ctx, uint64_t now, const struct ub_cetph_fields *ce)
{
	struct tp_cc *cc = ctx;
	struct cc_win *w = &cc->w;
	double g = 1.0 / (double)(1u << cc->cfg.ldcp_g_shift);
	uint32_t acked = w->have_ack_seq ? ce->ack_seq - w->ack_seq : 0;

	cc->now = now;
	cc->st.cetph_rcvd++;
	if (w->have_ack_seq && (int32_t)acked < 0)
		return;	/* an older ack overtaken by a newer one */
	if (!w->have_ack_seq) {
		w->win_end = ce->ack_seq + (uint32_t)w->cw;
		w->have_ack_seq = true;
	}
	w->ack_seq = ce->ack_seq;
	if ((int32_t)(w->sent - w->ack_seq) < 0)
		w->sent = w->ack_seq;	/* counted out by a reset, then arrived */
	w->win_pkts += ce->hint;
	w->win_marked += ce->c;
	if (!ce->c)	/* additive increase: one MTU per window of acks */
		w->cw += (double)cc->cfg.mtu * acked / w->cw;
	if ((int32_t)(w->ack_seq - w->win_end) >= 0) {
		double frac = w->win_pkts ? (double)w->win_marked / (double)w->win_pkts : 0;

		if (frac > 1)	/* a peer that says more were marked than covered */
			frac = 1;

		w->alpha = (1 - g) * w->alpha + g * frac;
		if (w->win_marked) {
			w->cw *= 1 - w->alpha / 2;
			cc->st.cuts++;
			cc->st.ecn_cuts++;
		} else {
			cc->st.increases++;
		}
		w->win_pkts = w->win_marked = 0;
		w->win_end = w->ack_seq + (uint32_t)w->cw;
	}
	w->cw = cc_clamp(w->cw, cc->cfg.min_cw, cc->cfg.max_cw);
	cc->st.inflight = inflight(cc);
}

static void ld_on_rx_data(void *ctx, uint64_t now, uint32_t bytes, const struct tp_rx_meta *m)
{
	cc_np_rx_data(ctx, now, bytes, m);
}

static bool ld_ack_cetph(void *ctx, uint64_t now, struct ub_cetph_fields *ce)
{
	struct tp_cc *cc = ctx;
	struct cc_np *np = &cc->np;

	cc->now = now;
	ce->ack_seq = np->rx_bytes;
	ce->c = np->marked > 255 ? 255 : (uint8_t)np->marked;
	ce->hint = np->pkts > 0xffff ? 0xffff : (uint16_t)np->pkts;
	ce->i = false;
	ce->loc = false;
	np->marked = np->pkts = 0;
	return true;
}

const struct tp_cc_ops tp_cc_ldcp_ops = {
	.can_send = ld_can_send,
	.on_send = ld_on_send,
	.on_loss = ld_on_loss,
	.on_lost = ld_on_lost,
	.on_cetph = ld_on_cetph,
	.on_rx_data = ld_on_rx_data,
	.ack_cetph = ld_ack_cetph,
};
