// SPDX-License-Identifier: BSD-2-Clause
/*
 * Transmission at a TP channel's sender: operations cut into MTU-sized
 * packets, and which packet goes next, new or resent (Go-Back-N, selective
 * retransmission, the probes of tp_rtx.c), within the window and what the
 * congestion control allows. The window's acknowledgements: tp_ack.c.
 */
#include "transport/tp_send.h"
#include "transport/cc_wire.h"
#include "transport/tp_ctp.h"
#include "transport/tp_rtx.h"
#include "transport/tp_sq.h"
#include "transport/tp_wire.h"

/* What slot index i remembers of psn's earlier copies (the path mark, the
 * D-SACK record), forgotten: the D-SACK to come is not theirs. */
static void marks_forget(struct tp_chan *ch, uint32_t i, uint32_t psn)
{
	if (ch->path_mark[i] == psn + 1)
		ch->path_mark[i] = 0;
	if (ch->dsk[i].psn1 == psn + 1)
		ch->dsk[i].psn1 = 0;
}

/* ---- transmission --------------------------------------------------------- */

static size_t enc_data(struct tp_chan *ch, const struct tp_op *op, uint32_t seg, uint32_t psn,
		       uint32_t tpmsn, bool ackreq, uint8_t *buf, size_t cap)
{
	size_t n, ta;

	if (cap < sizeof(struct ub_tph))
		return 0;
	if (!tp_reliable(ch)) {
		/* UTPH: opcode 0, Last (a message is one packet), NLP; the rest
		 * reserved, 0 (headers/ub_wire.h). */
		struct ub_tph_fields f = { .opcode = UB_TP_UTP_DATA, .last = true,
					   .nlp = UB_NLP_TAH };

		ub_tph_encode((struct ub_tph *)buf, &f);
		ta = tp_enc_ta(ch, op, seg, buf + sizeof(struct ub_tph), cap - sizeof(struct ub_tph));
		return ta ? sizeof(struct ub_tph) + ta : 0;
	}
	n = tp_enc_tph(buf, ch, UB_TP_RTP_DATA, seg + 1 == op->nseg, UB_NLP_TAH, psn, tpmsn);
	if (ackreq)
		buf[8] |= 0x80;		/* AckReq */
	ta = tp_enc_ta(ch, op, seg, buf + n, cap - n);
	return ta ? n + ta : 0;
}

static void fill_info(struct tp_chan *ch, struct tp_tx_info *info, uint32_t psn, bool rtx)
{
	*info = (struct tp_tx_info){
		.chan = ch, .user = ch->cfg.user, .src_tpn = ch->tpn, .dst_tpn = ch->peer_tpn,
		.psn = psn, .data = true, .rtx = rtx,
	};
}

static void count_rtx(struct tp_chan *ch, uint8_t cause)
{
	switch (cause) {
	case RC_RTO:	ch->st.rtx_rto++; break;
	case RC_NAK:	ch->st.rtx_nak++; break;
	case RC_SACK:	ch->st.rtx_sack++; break;
	case RC_ANSWER:	ch->st.rtx_answer++; break;
	case RC_RACK:	ch->st.rtx_rack++; break;
	case RC_TLP:	ch->st.rtx_tlp++; break;
	case RC_PATH:	ch->st.rtx_path++; break;
	default:	ch->st.rtx_mark++; break;
	}
}

static size_t send_slot(struct tp_chan *ch, uint64_t now, uint32_t psn, uint8_t cause,
			uint8_t *buf, size_t cap, struct tp_tx_info *info)
{
	struct tp_slot *s = TP_SLOT(ch, psn);
	struct tp_op *op = &ch->sq[s->op];
	size_t len = enc_data(ch, op, s->seg, psn, s->tpmsn, true, buf, cap);
	uint32_t *mark = &ch->path_mark[s - ch->win];
	struct tp_dsk *dsk = &ch->dsk[s - ch->win];

	if (!len)
		return 0;
	s->ntx++;
	if (s->ntx == 2 && cause == RC_PATH)
		*mark = psn + 1;
	else if (*mark == psn + 1)
		*mark = 0;	/* a third copy: the D-SACK may be its */
	/* Its D-SACK bounds the late copy's RTT (dsack_learn), but not after
	 * a timer's resend (probe, RTO; RC_ANSWER comes by the ROL probe,
	 * which clears the record itself): that copy left only
	 * after the timer's wait, at least 2 rtt_hi, so the bound (the wait
	 * plus an RTT) always passed dsack_learn's filter and measured the
	 * timer, not the path: rtt_hi doubled at each spurious probe whose
	 * original's ack was lost, up to the 4 s RTO (test_rack_probe_dsack).
	 * A timer that fires is no reordering window too short; the locks
	 * dsack_learn opens are the RACK, SACK and path resends', which go
	 * when found lost. Held longer (by CC, or past an RTO), when the copy
	 * before had arrived and its ack came after this one left, the bound
	 * would count the hold (test_rack_age: held 280 us on a 20 us link,
	 * the probe then waited 670 us). A wait of 2 rtt_hi (the longest the
	 * window waits) is no hold; nor is a queue of resends leaving one by
	 * one. Measured without the bounds, lest a live one let a hold of
	 * twice itself record and refresh it, as a timer's would. */
	*dsk = (struct tp_dsk){ cause == RC_TLP || cause == RC_RTO || cause == RC_ANSWER ||
				now - s->lost_ns > 2 * tp_rtt_hi_paths(ch, now) ? 0 : psn + 1,
				s->sent_ns };
	s->sent_ns = now;
	s->xseq = ++ch->xseq;
	s->path = 0;	/* the resend's, if the caller names it */
	if (!ch->rtx_phase) {
		/* MarkPSN: the switch from new data to retransmission. */
		ch->rtx_phase = ch->mark_valid = true;
		ch->mark_psn = ch->nxt;
	}
	if (!ch->rtx_round || tp_psn_diff(psn, ch->high_rtx) > 0)
		ch->high_rtx = psn;	/* HighRtxPSN */
	ch->rtx_round = true;
	if (!s->sacked && !s->infl) {
		s->infl = true;
		ch->inflight_bytes += tp_seg_len(ch, op, s->seg);
	}
	ch->rto_unsent = false;
	count_rtx(ch, cause);
	ch->st.tx_data++;
	ch->st.tx_bytes += tp_seg_len(ch, op, s->seg);
	tp_cc_on_send(ch, now, tp_seg_len(ch, op, s->seg), true);
	fill_info(ch, info, psn, true);
	if (!ch->rto_deadline)
		tp_rto_rearm(ch, now);
	return len;
}

static size_t send_utp(struct tp_chan *ch, uint64_t now, uint8_t *buf, size_t cap,
		       struct tp_tx_info *info)
{
	struct tp_op *op = tp_snd_next_op(ch);
	size_t len;

	if (!op || !tp_cc_can_send(ch, now, tp_seg_len(ch, op, 0)))
		return 0;
	/* A UTP message is one packet (tp_post_send kept it within the MTU). */
	len = enc_data(ch, op, 0, 0, 0, false, buf, cap);
	if (!len)
		return 0;
	ch->st.tx_data++;
	ch->st.tx_bytes += op->len;
	fill_info(ch, info, ch->ctp_sent++, false);
	op->next_seg = op->nseg;
	op->state = OS_SENT;
	op->answered = true;	/* unreliable: done once sent */
	tp_sq_progress(ch);
	return len;
}

/* Room for `more` + 1 new packets. SR with a span past the window counts
 * SACKed packets out of it: they are delivered, and a hole's resend would
 * otherwise hold every new packet for a round trip (docs/TRANSPORT.md). */
static bool window_room(const struct tp_chan *ch, uint32_t more)
{
	uint32_t span = (uint32_t)tp_psn_diff(ch->nxt, ch->una) + more;

	return span < ch->span && span - ch->n_sacked < ch->cfg.window;
}

size_t tp_snd_data(struct tp_chan *ch, uint64_t now, void *out, size_t cap,
		   struct tp_tx_info *info)
{
	uint8_t *buf = out;
	struct tp_op *op;
	struct tp_slot *s;
	uint32_t psn, b;
	bool ackreq;
	size_t len;

	if (tp_is_ctp(ch))
		return tp_ctp_send(ch, now, buf, cap, info);
	if (!tp_reliable(ch))
		return send_utp(ch, now, buf, cap, info);

	if (ch->probe) {
		/* ROL: a duplicate of the last packet makes the peer repeat its
		 * TAACK, which a lost TPACK took with it. */
		ch->probe = false;
		op = &ch->sq[ch->probe_op];
		if (op->state == OS_SENT && !op->answered) {
			len = enc_data(ch, op, op->nseg - 1, op->last_psn, op->tpmsn, true, buf, cap);
			if (len) {
				/* its D-SACK would be this copy's, not a path
				 * resend's, and a timer's (send_slot) */
				marks_forget(ch, tp_mark_idx(ch, op->last_psn), op->last_psn);
				count_rtx(ch, ch->probe_cause);
				ch->st.tx_data++;
				ch->rto_unsent = false;
				fill_info(ch, info, op->last_psn, true);
				return len;
			}
		}
	}

	if (tp_is_gbn(ch) && ch->rtx_nxt != ch->nxt) {
		s = TP_SLOT(ch, ch->rtx_nxt);
		if (!tp_cc_can_send(ch, now, tp_seg_len(ch, &ch->sq[s->op], s->seg)))
			return 0;
		len = send_slot(ch, now, ch->rtx_nxt, ch->gbn_cause, buf, cap, info);
		if (len)
			ch->rtx_nxt = tp_psn_add(ch->rtx_nxt, 1);
		return len;
	}
	if (ch->n_need_rtx) {
		for (psn = ch->una; psn != ch->nxt; psn = tp_psn_add(psn, 1)) {
			s = TP_SLOT(ch, psn);
			if (!s->need_rtx)
				continue;
			if (!tp_cc_can_send(ch, now, tp_seg_len(ch, &ch->sq[s->op], s->seg)))
				return 0;
			len = send_slot(ch, now, psn, s->rtx_cause, buf, cap, info);
			if (len) {
				s->need_rtx = false;
				ch->n_need_rtx--;
			}
			return len;
		}
	}

	/* New data, within the window and the span. */
	if (!window_room(ch, 0))
		return 0;
	op = tp_snd_next_op(ch);
	if (!op)
		return 0;
	b = tp_seg_len(ch, op, op->next_seg);
	if (!tp_cc_can_send(ch, now, b))
		return 0;
	if (!op->next_seg) {
		op->tpmsn = ch->next_tpmsn++ & TP_PSN_MASK;
		if (ch->retry_next && tp_op_initiator(op)) {
			op->retry = true;
			ch->retry_next = false;
		}
	}
	psn = ch->nxt;
	ackreq = ++ch->since_ackreq >= ch->cfg.ackreq_every || op->next_seg + 1 == op->nseg ||
		 !window_room(ch, 1);
	len = enc_data(ch, op, op->next_seg, psn, op->tpmsn, ackreq, buf, cap);
	if (!len)
		return 0;
	if (ackreq)
		ch->since_ackreq = 0;
	s = &ch->win[(ch->win_base + (uint32_t)tp_psn_diff(psn, ch->una)) % ch->win_cap];
	*s = (struct tp_slot){
		.op = (uint32_t)(op - ch->sq), .seg = op->next_seg, .tpmsn = op->tpmsn,
		.sent_ns = now, .first_ns = now, .xseq = ++ch->xseq, .ntx = 1, .infl = true,
	};
	/* the same 24-bit PSN an earlier lap ago, never D-SACKed */
	marks_forget(ch, (uint32_t)(s - ch->win), psn);
	ch->nxt = tp_psn_add(ch->nxt, 1);
	ch->rtx_phase = false;
	ch->rtx_nxt = ch->nxt;
	op->inflight++;
	ch->tx_mid = (uint32_t)(op - ch->sq) + 1;
	if (++op->next_seg == op->nseg) {
		op->last_psn = psn;
		op->state = OS_SENT;
		ch->tx_mid = 0;
	}
	ch->inflight_bytes += b;
	ch->st.tx_data++;
	ch->st.tx_bytes += b;
	ch->st.tx_past_window += (uint32_t)tp_psn_diff(psn, ch->una) >= ch->cfg.window;
	tp_cc_on_send(ch, now, b, false);
	if (!ch->rto_deadline)
		tp_rto_rearm(ch, now);
	if (!ch->tlp_out)
		tp_tlp_arm(ch, now);
	fill_info(ch, info, psn, false);
	return len;
}

/* For tp_ctp.c, which sends the same operations without a window. */
