// SPDX-License-Identifier: BSD-2-Clause
/*
 * Acknowledgements at a TP channel's sender: TPACK, TPNAK and TPSACK move
 * the window (Go-Back-N or selective), and the transaction answers (TAACK)
 * complete operations or send them again after RNR or a page fault.
 */
#include <string.h>

#include "transport/tp_ack.h"
#include "transport/cc_wire.h"
#include "transport/tp_rtx.h"
#include "transport/tp_sq.h"

/* Cumulative acknowledgement of every PSN up to c. False: c was never sent. */
static bool ack_upto(struct tp_chan *ch, uint64_t now, uint32_t c)
{
	int32_t n = tp_psn_diff(c, ch->una) + 1;	/* packets newly acked */
	uint64_t acked = 0, rtt = 0;

	if (n > tp_psn_diff(ch->nxt, ch->una))
		return false;
	if (n <= 0)
		return true;	/* old news */
	for (int32_t i = 0; i < n; i++) {
		struct tp_slot *s = &ch->win[ch->win_base];
		struct tp_op *op = &ch->sq[s->op];
		uint32_t b = tp_seg_len(ch, op, s->seg);

		/* Karn: never from a resent packet. With RACK, nor from one
		 * SACKed before, whose sample was taken then (on_sack): now -
		 * sent_ns would add the time the hole below it took (seed 379
		 * of spray_tbf_queues_drain: SRTT 245 -> 1,198 ms, no RTT over
		 * 23 ms, and RACK's window and probe of 2 SRTT with it).
		 * Without RACK the RTO (SRTT + 4 RTTVAR) finds the holes, and
		 * that wait keeps it from firing early: SACK-time samples
		 * there doubled rack_per_flow_loss's notes-only RTOs. */
		if (s->ntx == 1 && (!s->sacked || !ch->cfg.rack))
			rtt = now - s->sent_ns;
		/* After an RTO, the oldest packet acked before its resend left,
		 * or (without RACK) within a min RTT of it: the original was
		 * answered. A RACK peer D-SACKs the resend (tp_rack_dsack); a
		 * channel's min RTT may be no idle path's (a group's channel
		 * whose packets all queued behind the others': 392.9 us, the
		 * path 207.5 us), and a real loss's RTO, its resend answered
		 * across the drained path, passed for undone. */
		if (ch->frto && ch->una == ch->frto_una && ch->undo_valid &&
		    (s->ntx == ch->frto_ntx ||
		     (!ch->cfg.rack && ch->min_rtt && now - s->sent_ns < ch->min_rtt))) {
			ch->st.rto_undone++;
			ch->undo_valid = false;
		}
		if (!s->sacked) {
			acked += b;
			tp_rack_delivered(ch, now, s, ch->una);
		} else {
			ch->n_sacked--;
		}
		tp_infl_out(ch, s);
		if (s->need_rtx)
			ch->n_need_rtx--;
		op->inflight--;
		memset(s, 0, sizeof(*s));
		ch->win_base = (ch->win_base + 1) % ch->win_cap;
		ch->una = tp_psn_add(ch->una, 1);
	}
	if (rtt)
		tp_rtt_sample(ch, now, rtt);
	if (tp_psn_diff(ch->rtx_nxt, ch->una) < 0)
		ch->rtx_nxt = ch->una;
	if (ch->last_nak_valid && tp_psn_diff(ch->last_nak, ch->una) < 0)
		ch->last_nak_valid = false;
	if (ch->rtx_round && tp_psn_diff(ch->high_rtx, ch->una) < 0)
		ch->rtx_round = false;	/* everything resent this round arrived */
	ch->rto_times = 0;
	ch->rto_unsent = false;
	ch->tlp_out = false;
	tp_rto_rearm(ch, now);
	if (ch->cfg.cc && ch->cfg.cc->on_ack)
		ch->cfg.cc->on_ack(ch->cfg.cc_ctx, now, acked, rtt);
	return true;
}

/* TPSACK: bits k >= 1 are PSN c + k; holes below MaxRcvPSN are losses. */
static void on_sack(struct tp_chan *ch, uint64_t now, uint32_t c, const struct ub_saetph_fields *sa)
{
	uint32_t bits = ub_saetph_bitmap_bits(sa->size_code);
	int32_t inflight = tp_psn_diff(ch->nxt, ch->una);
	uint32_t max = sa->max_rcv_psn;
	uint32_t lost = 0;
	uint64_t rtt = 0;
	bool loss = false;

	if (tp_is_gbn(ch))
		return;
	if (sa->dup && ch->cfg.rack)
		tp_rack_dsack(ch, now, max);
	for (uint32_t k = 1; k < bits; k++) {
		uint32_t psn = tp_psn_add(c, k);
		int32_t d = tp_psn_diff(psn, ch->una);
		struct tp_slot *s;

		if (d < 0 || d >= inflight)
			break;
		if (!ub_sack_test(sa->bitmap, k))
			continue;
		s = TP_SLOT(ch, psn);
		if (s->sacked)
			continue;
		s->sacked = true;
		ch->n_sacked++;
		if (ch->frto && s->sent_ns < ch->frto_at)
			ch->frto_sacked = true;
		/* with RACK, a packet sent once gives its RTT when first known
		 * delivered (as Linux's SACK RTT): the newest such, as ack_upto */
		if (ch->cfg.rack && s->ntx == 1 && (!rtt || now - s->sent_ns < rtt))
			rtt = now - s->sent_ns;
		tp_rack_delivered(ch, now, s, psn);
		tp_infl_out(ch, s);
		if (s->need_rtx) {
			s->need_rtx = false;
			ch->n_need_rtx--;
		}
	}
	if (rtt)
		tp_rtt_sample(ch, now, rtt);
	if (ch->cfg.no_fast_rtx || sa->dup)
		return;	/* per-packet LB: holes may be packets on a slower path;
			 * a D-SACK's MaxRcvPSN is the duplicate's */
	if (tp_psn_diff(max, ch->una) < 0 || tp_psn_diff(max, ch->una) >= inflight)
		return;
	/* MarkPSN arrived: it left after every resend so far, so a resent
	 * hole still open was lost again. The round is over: those go again. */
	if (ch->mark_valid && tp_psn_diff(max, ch->mark_psn) >= 0)
		ch->rtx_round = false;
	/* Past the bitmap nothing is known: no loss is inferred there. */
	if (tp_psn_diff(max, c) >= (int32_t)bits)
		max = tp_psn_add(c, bits - 1);
	for (uint32_t psn = ch->una; psn != max; psn = tp_psn_add(psn, 1)) {
		struct tp_slot *s = TP_SLOT(ch, psn);

		if (s->sacked || s->need_rtx)
			continue;
		/* HighRtxPSN: resent in this round, never twice. */
		if (s->ntx > 1 && ch->rtx_round && tp_psn_diff(psn, ch->high_rtx) <= 0)
			continue;
		/* A first loss, or (past MarkPSN) a lost retransmission. */
		s->rtx_cause = s->ntx == 1 ? RC_SACK : RC_MARK;
		s->lost_ns = now;
		s->need_rtx = true;
		ch->n_need_rtx++;
		/* A selective retransmission takes out only the lost bytes. */
		lost += tp_infl_out(ch, s);
		loss = true;
	}
	tp_cc_on_lost(ch, now, lost);
	if (loss && ch->cfg.cc && ch->cfg.cc->on_loss)
		ch->cfg.cc->on_loss(ch->cfg.cc_ctx, now, TP_LOSS_SACK);
}

static bool stale_answer(struct tp_chan *ch, const struct tp_parsed *p)
{
	const struct tp_op *op = tp_snd_find_op(ch, p->tah.ini_tassn);

	return op && op->state == OS_SENT && tp_psn_diff(p->tph.psn, op->last_psn) < 0;
}

/*
 * After an SR timeout, the first ack that moves una. Acked past a packet
 * that was not SACKed when it fired, or a packet sent before it SACKed
 * since: packets sent before the timeout arrived, so it was spurious (or
 * the resend filled the one hole); the SACK logic handles any other hole.
 * Acked only the PSN resent and what was SACKed already (RFC 5682's SACK
 * enhancement: that news is no news): what followed it before the timeout
 * is lost, and every unSACKed packet of it goes again (the old go-back of
 * the round; Linux's RTO marks them all lost). Counting una's jump over
 * the SACKed as proof left RACK's holes to one RTO each after the drain,
 * when their resends, answered across the emptied path sooner than the
 * min RTT, no longer move RACK's reference (test spray_tbf_queues_drain).
 * A channel without RACK keeps the jump for proof: its RTO is SRTT + 4
 * RTTVAR, sooner than RACK's 2 SRTT, and resending all there resent what
 * was still in flight (rack_per_flow_loss's channel with the notes' rule
 * alone: 434 -> 6,160 RTO resends, 522 -> 6,120 duplicates; test_cc's
 * four flows without CC: 64 -> 79 RTOs, 8.78 -> 8.65 Gb/s).
 * CC heard of the loss at the timeout itself (inflight went to 0 then).
 */
static void frto_decide(struct tp_chan *ch)
{
	bool spurious = ch->una != tp_psn_add(ch->frto_una, 1) &&
			(!ch->cfg.rack || tp_psn_diff(ch->una, ch->frto_hole) > 0 ||
			 ch->frto_sacked);

	ch->frto = false;
	if (spurious || ch->una == ch->nxt) {
		ch->st.rto_spurious += spurious;
		return;
	}
	for (uint32_t psn = ch->una; psn != ch->frto_high && psn != ch->nxt;
	     psn = tp_psn_add(psn, 1)) {
		struct tp_slot *s = TP_SLOT(ch, psn);

		/* A probe went after the timeout: MarkPSN covers its loss. */
		if (s->sacked || s->need_rtx || s->sent_ns >= ch->frto_at)
			continue;
		s->need_rtx = true;
		s->rtx_cause = RC_RTO;
		ch->n_need_rtx++;
		tp_infl_out(ch, s);
	}
}

void tp_snd_on_ack(struct tp_chan *ch, uint64_t now, const struct tp_parsed *p)
{
	uint32_t una0 = ch->una;

	bool nak = ub_tph_fields_is_nak(&p->tph);
	uint32_t c = nak ? tp_psn_add(p->tph.psn, TP_PSN_MASK) : p->tph.psn;

	if (nak)
		ch->st.rx_nak++;
	else if (p->has_saetph)
		ch->st.rx_sack++;
	else
		ch->st.rx_ack++;
	if (!ack_upto(ch, now, c)) {
		ch->st.rx_stale_ack++;
		return;
	}
	if (nak && ch->cfg.mode == TP_MODE_RTP_GBN_FAST &&
	    tp_psn_diff(p->tph.psn, ch->una) >= 0 && tp_psn_diff(ch->nxt, p->tph.psn) > 0 &&
	    !(ch->last_nak_valid && ch->last_nak == p->tph.psn)) {
		/* One go-back per NAKed PSN: a repeated NAK is no new loss. */
		ch->rtx_nxt = p->tph.psn;
		ch->gbn_cause = RC_NAK;
		ch->last_nak = p->tph.psn;
		ch->last_nak_valid = true;
		/* What the go-back resends will never count at the receiver
		 * (it dropped them): out of LDCP's count, and no more. What
		 * the NAK acknowledges below it still comes in a TPACK-CC. */
		tp_cc_on_lost(ch, now, (uint32_t)ch->inflight_bytes);
		tp_infl_reset(ch);		/* UB 2.0 §6: a GBN go-back resets inflight */
		if (ch->cfg.cc && ch->cfg.cc->on_loss)
			ch->cfg.cc->on_loss(ch->cfg.cc_ctx, now, TP_LOSS_NAK);
	}
	if (p->has_saetph)
		on_sack(ch, now, c, &p->sa);
	if (ch->frto && ch->una != una0)
		frto_decide(ch);
	if (ch->cfg.rack) {
		/* Any progress, a SACK too, shows the paths alive: the RTO
		 * waits from it (una may be on the slower path; RACK finds it
		 * if it was lost). While a probe is out, only its first answer
		 * does: it shows the holes, whose resends need a round trip
		 * more than the RTO the probe set; later answers must not keep
		 * pushing it, or a channel RACK cannot judge never times out. */
		if (ch->rto_deadline && ch->una != ch->nxt && (!ch->tlp_out || !ch->tlp_answered)) {
			ch->rto_deadline = now + tp_rto_value(ch, now);
			ch->tlp_answered = ch->tlp_out;
		}
		tp_rack_detect(ch, now);
		if (!ch->tlp_out)
			tp_tlp_arm(ch, now);
	}
	/* ROL: the answer's status is the RTPH's RSPST/RSPINFO; the TAACK in
	 * the TPACK names the operation (its TASSN) and its PSN the packet: one
	 * before the op's Last answers an earlier attempt (the target answers a
	 * duplicate Last with the TASSN's result of now), not this retry. */
	if (p->has_tah && p->tah.opcode == UB_TA_TAACK && stale_answer(ch, p))
		ch->st.ta_stale_answer++;
	else if (p->has_tah && p->tah.opcode == UB_TA_TAACK)
		tp_snd_on_answer(ch, now, p->tah.ini_tassn, nak ? p->tah.rspst : p->tph.rspst,
				 nak ? p->tah.rspinfo : p->tph.rspinfo);
	tp_sq_progress(ch);
}

/*
 * ROL: the target answers in order, each answer in the TPACK of an
 * operation's last packet. An answer to op while an older operation is all
 * acknowledged and still unanswered shows that older answer lost with its
 * TPACK: its last packet goes again now (the target repeats the answer),
 * not at the RTO. Completions are reported in posting order, so until then
 * the application's later operations wait too and the pipe runs dry (at 1 %
 * loss on a real veth about half of the timeouts were these).
 */
static void answer_overtook(struct tp_chan *ch, const struct tp_op *op)
{
	struct tp_op *old = tp_unanswered(ch);
	uint32_t d_old, d_op;

	if (!old || ch->probe || old->answer_probed)
		return;	/* once: a lost resend is the RTO's */
	d_old = ((uint32_t)(old - ch->sq) + ch->sq_cap - ch->sq_head) % ch->sq_cap;
	d_op = ((uint32_t)(op - ch->sq) + ch->sq_cap - ch->sq_head) % ch->sq_cap;
	if (d_old >= d_op)
		return;
	old->answer_probed = true;
	ch->probe = true;
	ch->probe_op = (uint32_t)(old - ch->sq);
	ch->probe_cause = RC_ANSWER;
}

void tp_snd_on_answer(struct tp_chan *ch, uint64_t now, uint16_t tassn, uint8_t rspst,
		      uint8_t rspinfo)
{
	struct tp_op *op = tp_snd_find_op(ch, tassn);
	enum tp_status st = tp_rspst_to_status(rspst);

	if (!op || op->state != OS_SENT) {
		ch->st.ta_proto_err++;	/* answer to nothing: a duplicate */
		return;
	}
	op->rspinfo = rspinfo;
	if ((st == TP_ST_RNR || st == TP_ST_PAGE_FAULT) && op->tries < ch->cfg.rnr_retry) {
		/* The target may ask for a longer wait (RSPINFO of an RNR). */
		uint64_t wait = ch->cfg.rnr_delay_ns;

		if (st == TP_ST_RNR && rspinfo && rspinfo < 31 && (1000ull << rspinfo) > wait)
			wait = 1000ull << rspinfo;
		op->tries++;
		op->state = OS_RNR_WAIT;
		ch->rnr_waiting++;
		if (ch->rnr_until < now + wait)
			ch->rnr_until = now + wait;
		if (st == TP_ST_RNR)
			ch->st.ta_retry_rnr++;
		else
			ch->st.ta_retry_pf++;
		return;
	}
	ch->rto_times = 0;
	/* A refusal given up: the target still refuses everything after it
	 * until a Retry comes, so the next operation carries one. */
	if (st == TP_ST_RNR || st == TP_ST_PAGE_FAULT)
		ch->retry_next = true;
	tp_snd_op_answered(ch, op, st);
	answer_overtook(ch, op);
	tp_rto_rearm(ch, now);
}
