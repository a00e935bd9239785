// SPDX-License-Identifier: BSD-2-Clause
/*
 * Sender side of a TP channel: operations cut into MTU-sized packets, the
 * PSN window, acknowledgements, Go-Back-N and selective retransmission, the
 * RTO and the transaction answers (TAACK, RNR/page-fault retries).
 */
#include <string.h>

#include "transport/tp_int.h"

#define SLOT(ch, psn) (&(ch)->win[((ch)->win_base + (uint32_t)tp_psn_diff((psn), (ch)->una)) % (ch)->win_cap])

static void infl_reset(struct tp_chan *ch);
static void rack_detect(struct tp_chan *ch, uint64_t now);
static void tlp_fire(struct tp_chan *ch, uint64_t now);

static bool initiator(const struct tp_op *op)
{
	return op->kind == OP_SEND || op->kind == OP_WRITE || op->kind == OP_READ ||
	       op->kind == OP_ATOMIC;
}

struct tp_op *tp_sq_push(struct tp_chan *ch)
{
	struct tp_op *op;

	if ((ch->sq_tail + 1) % ch->sq_cap == ch->sq_head)
		return NULL;
	op = &ch->sq[ch->sq_tail];
	memset(op, 0, sizeof(*op));
	op->state = OS_QUEUED;
	ch->sq_tail = (ch->sq_tail + 1) % ch->sq_cap;
	return op;
}

static enum tp_event_type done_event(const struct tp_op *op)
{
	return op->kind == OP_SEND ? TP_EV_SEND_DONE :
	       op->kind == OP_WRITE ? TP_EV_WRITE_DONE :
	       op->kind == OP_ATOMIC ? TP_EV_ATOMIC_DONE : TP_EV_READ_DONE;
}

/* Bytes a completion reports: a Read's and an atomic's that landed. */
static size_t done_len(const struct tp_op *op)
{
	return op->kind == OP_READ || op->kind == OP_ATOMIC ? op->rd_got : op->len;
}

/*
 * Complete what can be completed, in posting order (an answer may overtake
 * an earlier one whose TAACK was lost), and free done operations from the head.
 */
static void sq_progress(struct tp_chan *ch)
{
	bool blocked = false;

	for (uint32_t i = ch->sq_head; i != ch->sq_tail; i = (i + 1) % ch->sq_cap) {
		struct tp_op *op = &ch->sq[i];

		if (initiator(op) && op->state != OS_DONE &&
		    (op->state != OS_SENT || op->inflight || !op->answered)) {
			blocked = true;
			continue;
		}
		if (op->state != OS_SENT || op->inflight)
			continue;
		if (!initiator(op)) {
			op->state = OS_DONE;
		} else if (!blocked) {
			op->state = OS_DONE;
			struct tp_event *ev = tp_emit(ch, done_event(op), op->status, op->wr_id,
						      done_len(op), op->tassn);

			if (ev) {
				ev->rspinfo = op->rspinfo;
				ev->opcode = op->opcode;
			}
			ch->n_init_ops--;
		}
	}
	while (ch->sq_head != ch->sq_tail && ch->sq[ch->sq_head].state == OS_DONE &&
	       !ch->sq[ch->sq_head].inflight) {
		tp_op_free(&ch->sq[ch->sq_head]);
		ch->sq[ch->sq_head].state = OS_FREE;
		ch->sq_head = (ch->sq_head + 1) % ch->sq_cap;
	}
}

void tp_chan_fail(struct tp_chan *ch, enum tp_status why)
{
	if (ch->failed)
		return;
	ch->failed = true;
	tp_emit(ch, TP_EV_CHAN_ERROR, why, 0, 0, 0);
	for (uint32_t i = ch->sq_head; i != ch->sq_tail; i = (i + 1) % ch->sq_cap) {
		struct tp_op *op = &ch->sq[i];

		if (initiator(op) && op->state != OS_DONE && op->state != OS_FREE) {
			struct tp_event *ev = tp_emit(ch, done_event(op), TP_ST_FLUSHED, op->wr_id,
						      0, op->tassn);

			if (ev)
				ev->opcode = op->opcode;
		}
		tp_op_free(op);
		op->state = OS_FREE;
	}
	ch->sq_head = ch->sq_tail;
	ch->n_init_ops = 0;
	if (ch->rx.have_recv) {
		tp_emit(ch, TP_EV_RECV_FLUSHED, TP_ST_FLUSHED, ch->rx.rb.wr_id, 0, 0);
		tp_rb_free(&ch->rx.rb);
	}
	ch->rx.have_recv = false;
	for (; ch->rq_head != ch->rq_tail; ch->rq_head = (ch->rq_head + 1) % ch->rq_cap) {
		tp_emit(ch, TP_EV_RECV_FLUSHED, TP_ST_FLUSHED, ch->rq[ch->rq_head].wr_id, 0, 0);
		tp_rb_free(&ch->rq[ch->rq_head]);
	}
	ch->rto_deadline = 0;
	ch->rack_deadline = ch->tlp_deadline = 0;
	ch->frto = false;
}

/* ---- RTO ------------------------------------------------------------------ */

static uint64_t rto_value(const struct tp_chan *ch)
{
	uint64_t base;
	uint32_t shift;

	if (ch->cfg.rto_mode == TP_RTO_STATIC)
		return ch->cfg.rto_static_ns;
	/* Base follows the RTT; before the first sample, the static value. */
	base = ch->srtt ? ch->srtt + 4 * ch->rttvar : ch->cfg.rto_static_ns;
	/* RACK and its probe find losses first: the RTO is the last resort,
	 * never sooner than 2 SRTT (a queue that grows delays every packet,
	 * and RTTVAR of a steady queue is next to nothing), nor, before any
	 * RTT is known, than 16 ms (the first flight fills queues on paths
	 * not measured yet; the probe goes first). */
	if (ch->cfg.rack && base < (ch->srtt ? 2 * ch->srtt : TP_RTO_16MS))
		base = ch->srtt ? 2 * ch->srtt : TP_RTO_16MS;
	if (base < ch->cfg.rto_min_ns)
		base = ch->cfg.rto_min_ns;
	shift = ch->cfg.rto_n * ch->rto_times;
	if (shift > 24)
		shift = 24;
	base <<= shift;
	return base > TP_RTO_4S ? TP_RTO_4S : base;
}

static void rtt_sample(struct tp_chan *ch, uint64_t rtt)
{
	if (!ch->min_rtt || rtt < ch->min_rtt)
		ch->min_rtt = rtt;
	if (!ch->srtt) {
		ch->srtt = rtt;
		ch->rttvar = rtt / 2;
	} else {
		uint64_t err = rtt > ch->srtt ? rtt - ch->srtt : ch->srtt - rtt;

		ch->rttvar = (3 * ch->rttvar + err) / 4;
		ch->srtt = (7 * ch->srtt + rtt) / 8;
	}
}

/* ROL: an initiator Send/Write fully acknowledged but still unanswered. */
static struct tp_op *unanswered(struct tp_chan *ch)
{
	if (ch->cfg.ta_mode != TP_TA_ROL)
		return NULL;
	for (uint32_t i = ch->sq_head; i != ch->sq_tail; i = (i + 1) % ch->sq_cap) {
		struct tp_op *op = &ch->sq[i];

		if (op->state == OS_SENT && !op->answered && !op->inflight &&
		    (op->kind == OP_SEND || op->kind == OP_WRITE))
			return op;
	}
	return NULL;
}

static void rto_rearm(struct tp_chan *ch, uint64_t now)
{
	if (ch->una != ch->nxt || unanswered(ch))
		ch->rto_deadline = now + rto_value(ch);
	else
		ch->rto_deadline = 0;
	ch->st.rto_ns = rto_value(ch);
}

void tp_snd_tick(struct tp_chan *ch, uint64_t now)
{
	bool held;

	if (ch->cfg.cc && ch->cfg.cc->on_tick)
		ch->cfg.cc->on_tick(ch->cfg.cc_ctx, now);
	if (ch->rnr_waiting && now >= ch->rnr_until) {
		for (uint32_t i = ch->sq_head; i != ch->sq_tail; i = (i + 1) % ch->sq_cap) {
			struct tp_op *op = &ch->sq[i];

			if (op->state != OS_RNR_WAIT)
				continue;
			op->state = OS_QUEUED;
			op->retry = true;
			op->next_seg = 0;
			op->last_sent = false;
		}
		ch->rnr_waiting = 0;
	}
	if (ch->rack_deadline && now >= ch->rack_deadline)
		rack_detect(ch, now);
	/* RACK: a tail loss probe comes before the first RTO of a flight
	 * (before any RTT is known, at the initial RTO). */
	if (ch->cfg.rack && !ch->tlp_out && ch->una != ch->nxt && !ch->failed &&
	    ((ch->tlp_deadline && now >= ch->tlp_deadline) ||
	     (ch->rto_deadline && now >= ch->rto_deadline)))
		tlp_fire(ch, now);
	if (!ch->rto_deadline || now < ch->rto_deadline)
		return;
	ch->st.rto_fired++;
	/*
	 * Pacing (a DCQCN rate) may still hold what the last timeout queued:
	 * nothing went out that the peer could have answered. Such a timeout
	 * (rto_held) signals no loss (a rate cut would hold the resends longer
	 * still), but it counts toward the retry limit like any other: a
	 * channel whose resends never leave fails, it does not wait for ever.
	 */
	held = ch->rto_unsent;
	if (held)
		ch->st.rto_held++;
	if (++ch->rto_times > ch->cfg.retry_limit) {
		tp_chan_fail(ch, TP_ST_RETRY_EXCEEDED);
		return;
	}
	/* UB 2.0 §6: an RTO resets inflight to 0, Go-Back-N or selective
	 * alike, and tells CC (an LDCP/CAQM window full of lost bytes would
	 * hold the resends for ever otherwise). */
	infl_reset(ch);
	ch->rtx_round = false;	/* its resends begin a new round */
	if (!held && ch->cfg.cc && ch->cfg.cc->on_loss)
		ch->cfg.cc->on_loss(ch->cfg.cc_ctx, now, TP_LOSS_RTO);
	if (ch->una != ch->nxt) {
		if (tp_is_gbn(ch)) {
			ch->rtx_nxt = ch->una;
			ch->gbn_cause = RC_RTO;
		} else {
			/*
			 * A timeout resends two packets, not the window: the
			 * oldest, and the newest, whose answer (a TPACK, or a
			 * TPSACK showing every hole below it) tells what the
			 * peer holds. A timeout on this host is as often a stall
			 * (a receiver or its acks not scheduled for longer than
			 * SRTT + 4 RTTVAR) as a loss, and resending the window
			 * then costs a window for nothing. The first ack that
			 * moves una decides the rest (frto_decide).
			 */
			uint32_t probe[2] = { ch->una, tp_psn_add(ch->nxt, TP_PSN_MASK) };

			for (int k = 0; k < 2; k++) {
				struct tp_slot *s = SLOT(ch, probe[k]);

				/* The oldest even when SACKed: its TPACK may be
				 * what was lost, and the peer answers a resend. */
				if (k && s->sacked)
					continue;
				if (!s->need_rtx) {
					s->need_rtx = true;
					ch->n_need_rtx++;
				}
				s->rtx_cause = RC_RTO;
			}
			if (!ch->frto) {
				ch->frto = true;
				ch->frto_una = ch->una;
				ch->frto_high = ch->nxt;
				ch->frto_ntx = SLOT(ch, ch->una)->ntx;
			}
			ch->undo_psn = ch->una;
			ch->undo_valid = true;
			ch->frto_at = now;
		}
		ch->last_nak_valid = false;
		ch->rto_unsent = true;
	} else {
		struct tp_op *op = unanswered(ch);

		if (op) {
			ch->rto_unsent = true;
			ch->probe = true;
			ch->probe_op = (uint32_t)(op - ch->sq);
			ch->probe_cause = RC_RTO;
		}
	}
	ch->rto_deadline = now + rto_value(ch);
	ch->st.rto_ns = rto_value(ch);
}

uint64_t tp_snd_deadline(const struct tp_chan *ch)
{
	uint64_t d = ch->rto_deadline ? ch->rto_deadline : UINT64_MAX;

	if (ch->rnr_waiting && ch->rnr_until < d)
		d = ch->rnr_until;
	if (ch->rack_deadline && ch->rack_deadline < d)
		d = ch->rack_deadline;
	if (ch->tlp_deadline && ch->tlp_deadline < d)
		d = ch->tlp_deadline;
	if (ch->cfg.cc && ch->cfg.cc->next_deadline) {
		uint64_t c = ch->cfg.cc->next_deadline(ch->cfg.cc_ctx);

		if (c < d)
			d = c;
	}
	return d;
}

/* ---- acknowledgements ---------------------------------------------------- */

static uint32_t seg_len(const struct tp_chan *ch, const struct tp_op *op, uint32_t seg)
{
	size_t off = (size_t)seg * ch->cfg.mtu;

	if (off >= op->len)
		return 0;
	return (uint32_t)(op->len - off < ch->cfg.mtu ? op->len - off : ch->cfg.mtu);
}

static uint32_t slot_len(const struct tp_chan *ch, const struct tp_slot *s)
{
	return seg_len(ch, &ch->sq[s->op], s->seg);
}

/*
 * inflight (UB 2.0 §6): bytes sent and neither acknowledged, SACKed nor
 * found lost. Each slot says whether its bytes are counted; infl_out()
 * takes them out (returns how many), a resend puts them back.
 */
static uint32_t infl_out(struct tp_chan *ch, struct tp_slot *s)
{
	uint32_t b;

	if (!s->infl)
		return 0;
	b = slot_len(ch, s);
	ch->inflight_bytes -= b;
	s->infl = false;
	return b;
}

/* An RTO, a Go-Back-N go-back: nothing is in flight any more. */
static void infl_reset(struct tp_chan *ch)
{
	for (uint32_t psn = ch->una; psn != ch->nxt; psn = tp_psn_add(psn, 1))
		SLOT(ch, psn)->infl = false;
	ch->inflight_bytes = 0;
}

/* ---- RACK: time-based loss detection (cfg.rack) ------------------------------ */

/* A new epoch of the reordering estimate every 4 SRTT: what was seen in
 * the last two epochs counts. */
static void reo_age(struct tp_chan *ch, uint64_t now)
{
	uint64_t epoch = 4 * ch->srtt;

	if (!epoch || now - ch->reo_epoch < epoch)
		return;
	ch->reo_prev = now - ch->reo_epoch < 2 * epoch ? ch->reo_cur : 0;
	ch->reo_learned |= ch->reo_cur > 0;
	ch->reo_cur = 0;
	ch->reo_epoch = now;
}

static void reo_sample(struct tp_chan *ch, uint64_t now, uint64_t extent)
{
	reo_age(ch, now);
	if (extent > ch->reo_cur)
		ch->reo_cur = extent;
}

/*
 * The reordering window: the largest reordering seen lately and a quarter
 * more, at least min_rtt/4 (RACK's default), at most 2 SRTT (a loss is
 * then found within about 3 RTTs, still before an RTO that has backed off).
 * A sprayed channel (no_fast_rtx) expects reordering it has not measured
 * yet: until a whole epoch has measured some, an RTO's worth (SRTT + 4
 * RTTVAR), a packet at a time.
 */
static uint64_t reo_wnd(struct tp_chan *ch, uint64_t now)
{
	uint64_t w;

	reo_age(ch, now);
	w = ch->reo_cur > ch->reo_prev ? ch->reo_cur : ch->reo_prev;
	w += w / 4;
	if (w < ch->min_rtt / 4)
		w = ch->min_rtt / 4;
	if (ch->cfg.no_fast_rtx && !ch->reo_learned) {
		uint64_t base = ch->srtt ? ch->srtt + 4 * ch->rttvar : 3 * ch->rack_rtt;

		if (w < base)
			w = base;
	}
	if (ch->srtt && w > 2 * ch->srtt)
		w = 2 * ch->srtt;
	ch->st.reo_wnd_ns = w;
	return w;
}

/*
 * Packet s is newly known delivered (acked or SACKed). A resend acked
 * sooner than any round trip answered its original: a spurious
 * retransmission, and how late that original was is reordering. Otherwise
 * it may be the latest-sent packet delivered (RACK's reference), and when
 * a later-sent one was delivered first, its extra delay is reordering.
 */
static void rack_delivered(struct tp_chan *ch, uint64_t now, const struct tp_slot *s,
			   uint32_t psn)
{
	uint64_t rtt = now - s->sent_ns;

	if (!ch->cfg.rack)
		return;
	if (s->ntx > 1 && now - s->first_ns > ch->rack_rtt) {
		uint64_t late = now - s->first_ns - ch->rack_rtt;

		/* Sooner than any round trip: the original, surely. Otherwise
		 * a D-SACK naming it will say so (rack_dsack). */
		if (ch->min_rtt && rtt < ch->min_rtt) {
			reo_sample(ch, now, late);
		} else if (s->ntx == 2) {
			/* (resent more than once, the first copy in may have
			 * been a resend: how late the original was is unknown) */
			uint32_t i = ch->reo_ring_n++ % 16;

			ch->reo_ring[i].psn = psn;
			ch->reo_ring[i].late = late;
			ch->reo_ring[i].rtt = now - s->first_ns;
		}
	}
	if (s->ntx > 1 && ch->min_rtt && rtt < ch->min_rtt)
		return;
	if (s->ntx == 1) {
		if (!ch->min_rtt || rtt < ch->min_rtt)
			ch->min_rtt = rtt;
		if (s->xseq < ch->rack_xseq) {
			ch->st.reo_seen++;
			if (rtt > ch->rack_rtt)
				reo_sample(ch, now, rtt - ch->rack_rtt);
		}
	}
	if (s->xseq > ch->rack_xseq) {
		ch->rack_xseq = s->xseq;
		ch->rack_ns = s->sent_ns;
		ch->rack_rtt = rtt;
	}
}

/*
 * D-SACK ([chosen] SAETPH Dup): PSN d arrived twice, a resend for nothing
 * whose original was only late. How late is reordering; and when d is the
 * oldest packet the last RTO resent, that RTO came of delay alone.
 */
static void rack_dsack(struct tp_chan *ch, uint64_t now, uint32_t d)
{
	bool undone = ch->undo_valid && d == ch->undo_psn;

	ch->st.rtx_spurious++;
	if (undone) {
		ch->undo_valid = false;
		ch->st.rto_undone++;
	}
	for (uint32_t k = 0; k < 16 && k < ch->reo_ring_n; k++) {
		uint32_t i = (ch->reo_ring_n - 1 - k) % 16;

		if (ch->reo_ring[i].psn != d || !ch->reo_ring[i].rtt)
			continue;
		reo_sample(ch, now, ch->reo_ring[i].late);
		/* Eifel's response: the RTT the timeout did not wait for is
		 * a sample (Karn kept it out: the packet had been resent). */
		if (undone)
			rtt_sample(ch, ch->reo_ring[i].rtt);
		ch->reo_ring[i].rtt = 0;
		break;
	}
}

/*
 * Every packet sent before the latest-sent one delivered, and missing
 * longer than that one's RTT plus the reordering window, is lost; the
 * earliest of the others arms the reordering timer.
 */
static void rack_detect(struct tp_chan *ch, uint64_t now)
{
	uint64_t wnd, next = 0;
	uint32_t lost = 0;
	bool loss = false;

	ch->rack_deadline = 0;
	if (!ch->cfg.rack || !ch->rack_xseq || tp_is_gbn(ch))
		return;
	wnd = reo_wnd(ch, now);
	for (uint32_t psn = ch->una; psn != ch->nxt; psn = tp_psn_add(psn, 1)) {
		struct tp_slot *s = SLOT(ch, psn);
		uint64_t due;

		/* Sent once, after the reference: so was every later PSN (a
		 * resend of one went later still). */
		if (s->ntx == 1 && s->xseq >= ch->rack_xseq)
			break;
		if (s->sacked || s->need_rtx || s->xseq >= ch->rack_xseq)
			continue;
		due = s->sent_ns + ch->rack_rtt + wnd;
		if (due > now) {
			if (!next || due < next)
				next = due;
			continue;
		}
		s->rtx_cause = RC_RACK;
		s->need_rtx = true;
		ch->n_need_rtx++;
		lost += infl_out(ch, s);
		loss = true;
	}
	ch->rack_deadline = next;
	if (!loss)
		return;
	tp_cc_on_lost(ch, now, lost);
	if (ch->cfg.cc && ch->cfg.cc->on_loss)
		ch->cfg.cc->on_loss(ch->cfg.cc_ctx, now, TP_LOSS_SACK);
}

/* The tail loss probe: 2 SRTT after the last progress or new packet, while
 * packets are outstanding and no probe is. */
static void tlp_arm(struct tp_chan *ch, uint64_t now)
{
	ch->tlp_deadline = 0;
	if (!ch->cfg.rack || tp_is_gbn(ch) || !ch->srtt || ch->una == ch->nxt || ch->tlp_out)
		return;
	ch->tlp_deadline = now + 2 * ch->srtt + ch->cfg.ack_delay_ns;
}

/*
 * Nothing heard for 2 SRTT: the newest packet not known delivered goes
 * again (unless resends are already waiting). Its answer, a TPSACK or
 * TPACK naming the newest packet, lets RACK find whatever was lost before
 * it; the RTO waits a full RTO from now behind the probe.
 */
static void tlp_fire(struct tp_chan *ch, uint64_t now)
{
	ch->tlp_deadline = 0;
	ch->tlp_out = true;
	ch->rto_deadline = now + rto_value(ch);
	if (ch->n_need_rtx)
		return;
	for (uint32_t psn = tp_psn_add(ch->nxt, TP_PSN_MASK);; psn = tp_psn_add(psn, TP_PSN_MASK)) {
		struct tp_slot *s = SLOT(ch, psn);

		if (!s->sacked) {
			s->need_rtx = true;
			s->rtx_cause = RC_TLP;
			ch->n_need_rtx++;
			return;
		}
		if (psn == ch->una)
			return;
	}
}

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
		uint32_t b = seg_len(ch, op, s->seg);

		if (s->ntx == 1)
			rtt = now - s->sent_ns;	/* Karn: never from a resent packet */
		/* After an RTO, the oldest packet acked before its resend left or
		 * within a min RTT of it: the original was answered. */
		if (ch->frto && ch->una == ch->frto_una && ch->undo_valid &&
		    (s->ntx == ch->frto_ntx || (ch->min_rtt && now - s->sent_ns < ch->min_rtt))) {
			ch->st.rto_undone++;
			ch->undo_valid = false;
		}
		if (!s->sacked) {
			acked += b;
			rack_delivered(ch, now, s, ch->una);
		}
		infl_out(ch, s);
		if (s->need_rtx)
			ch->n_need_rtx--;
		op->inflight--;
		memset(s, 0, sizeof(*s));
		ch->win_base = (ch->win_base + 1) % ch->win_cap;
		ch->una = tp_psn_add(ch->una, 1);
	}
	if (rtt)
		rtt_sample(ch, rtt);
	if (tp_psn_diff(ch->rtx_nxt, ch->una) < 0)
		ch->rtx_nxt = ch->una;
	if (ch->last_nak_valid && tp_psn_diff(ch->last_nak, ch->una) < 0)
		ch->last_nak_valid = false;
	if (ch->rtx_round && tp_psn_diff(ch->high_rtx, ch->una) < 0)
		ch->rtx_round = false;	/* everything resent this round arrived */
	ch->rto_times = 0;
	ch->rto_unsent = false;
	ch->tlp_out = false;
	rto_rearm(ch, now);
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
	bool loss = false;

	if (tp_is_gbn(ch))
		return;
	if (sa->dup && ch->cfg.rack)
		rack_dsack(ch, now, max);
	for (uint32_t k = 1; k < bits; k++) {
		uint32_t psn = tp_psn_add(c, k);
		int32_t d = tp_psn_diff(psn, ch->una);
		struct tp_slot *s;

		if (d < 0 || d >= inflight)
			break;
		if (!ub_sack_test(sa->bitmap, k))
			continue;
		s = SLOT(ch, psn);
		if (s->sacked)
			continue;
		s->sacked = true;
		ch->tlp_out = false;	/* progress */
		rack_delivered(ch, now, s, psn);
		infl_out(ch, s);
		if (s->need_rtx) {
			s->need_rtx = false;
			ch->n_need_rtx--;
		}
	}
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
		struct tp_slot *s = SLOT(ch, psn);

		if (s->sacked || s->need_rtx)
			continue;
		/* HighRtxPSN: resent in this round, never twice. */
		if (s->ntx > 1 && ch->rtx_round && tp_psn_diff(psn, ch->high_rtx) <= 0)
			continue;
		/* A first loss, or (past MarkPSN) a lost retransmission. */
		s->rtx_cause = s->ntx == 1 ? RC_SACK : RC_MARK;
		s->need_rtx = true;
		ch->n_need_rtx++;
		/* A selective retransmission takes out only the lost bytes. */
		lost += infl_out(ch, s);
		loss = true;
	}
	tp_cc_on_lost(ch, now, lost);
	if (loss && ch->cfg.cc && ch->cfg.cc->on_loss)
		ch->cfg.cc->on_loss(ch->cfg.cc_ctx, now, TP_LOSS_SACK);
}

/*
 * After an SR timeout, the first ack that moves una. Acked past the PSN
 * resent: packets sent before the timeout arrived, so it was spurious (or
 * the resend filled the one hole); the SACK logic handles any other hole.
 * Acked just that PSN: what followed it before the timeout is lost, and
 * every unSACKed packet of it goes again (the old go-back of the round).
 * CC heard of the loss at the timeout itself (inflight went to 0 then).
 */
static void frto_decide(struct tp_chan *ch)
{
	ch->frto = false;
	if (ch->una != tp_psn_add(ch->frto_una, 1) || ch->una == ch->nxt) {
		ch->st.rto_spurious += ch->una != tp_psn_add(ch->frto_una, 1);
		return;
	}
	for (uint32_t psn = ch->una; psn != ch->frto_high && psn != ch->nxt;
	     psn = tp_psn_add(psn, 1)) {
		struct tp_slot *s = SLOT(ch, psn);

		/* A probe went after the timeout: MarkPSN covers its loss. */
		if (s->sacked || s->need_rtx || s->sent_ns >= ch->frto_at)
			continue;
		s->need_rtx = true;
		s->rtx_cause = RC_RTO;
		ch->n_need_rtx++;
		infl_out(ch, s);
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
		infl_reset(ch);		/* UB 2.0 §6: a GBN go-back resets inflight */
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
		 * if it was lost). */
		if (!ch->tlp_out && ch->rto_deadline && ch->una != ch->nxt)
			ch->rto_deadline = now + rto_value(ch);
		rack_detect(ch, now);
		if (!ch->tlp_out)
			tlp_arm(ch, now);
	}
	/* ROL: the answer's status is the RTPH's RSPST/RSPINFO; the TAACK in
	 * the TPACK names the operation (its TASSN). */
	if (p->has_tah && p->tah.opcode == UB_TA_TAACK)
		tp_snd_on_answer(ch, now, p->tah.ini_tassn, nak ? p->tah.rspst : p->tph.rspst,
				 nak ? p->tah.rspinfo : p->tph.rspinfo);
	sq_progress(ch);
}

struct tp_op *tp_snd_find_op(struct tp_chan *ch, uint16_t tassn)
{
	for (uint32_t i = ch->sq_head; i != ch->sq_tail; i = (i + 1) % ch->sq_cap) {
		struct tp_op *op = &ch->sq[i];

		if (initiator(op) && op->tassn == tassn && !op->answered &&
		    (op->state == OS_SENT || op->state == OS_QUEUED))
			return op;
	}
	return NULL;
}

void tp_snd_op_answered(struct tp_chan *ch, struct tp_op *op, enum tp_status st)
{
	op->answered = true;
	op->status = (uint8_t)st;
	sq_progress(ch);
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
	struct tp_op *old = unanswered(ch);
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
	rto_rearm(ch, now);
}

/* ---- transmission --------------------------------------------------------- */

size_t tp_enc_tph(uint8_t *buf, const struct tp_chan *ch, uint8_t opcode, bool last,
		  uint8_t nlp, uint32_t psn, uint32_t tpmsn)
{
	struct ub_tph_fields f = {
		.opcode = opcode, .last = last, .nlp = nlp,
		.src_tpn = ch->tpn, .dst_tpn = ch->peer_tpn,
		.psn = psn, .tpmsn = tpmsn,
	};

	ub_tph_encode((struct ub_tph *)buf, &f);
	return sizeof(struct ub_tph);
}

/* The TAOpcode of segment seg of op: a Send or Write with immediate is Sends
 * or Writes up to its last packet, which alone carries the immediate
 * (UB 2.0 §7.4.3.2-3). */
static uint8_t ta_opcode(const struct tp_op *op, uint32_t seg)
{
	bool last = seg + 1 == op->nseg;

	switch (op->kind) {
	case OP_SEND:
		return last && op->opcode == TP_OP_SEND_IMM ? UB_TA_SEND_IMM : UB_TA_SEND;
	case OP_WRITE:
		return last && op->opcode == TP_OP_WRITE_IMM ? UB_TA_WRITE_IMM : UB_TA_WRITE;
	case OP_READ:
		return UB_TA_READ;
	case OP_ATOMIC:
		return op->opcode == TP_OP_CAS ? UB_TA_ATOMIC_CAS : UB_TA_ATOMIC_FADD;
	case OP_TAACK:
		return UB_TA_TAACK;
	case OP_READ_RESP:
		return UB_TA_READ_RESP;
	default:
		return UB_TA_ATOMIC_RESP;
	}
}

/* [chosen] TAH Order carries the initiator's transaction mode: 1 ROI, 2 ROT, 3 ROL. */
static uint8_t ta_order(const struct tp_chan *ch)
{
	return ch->cfg.ta_mode == TP_TA_ROI ? 1 : ch->cfg.ta_mode == TP_TA_ROT ? 2 : 3;
}

/*
 * The transaction part of segment seg of op: TAH | [MAETAH] | [IMMETAH] |
 * [TVETAH] | payload (UB 2.0 §7.2, Table 7-2, without MTETAH and OFSTETAH:
 * docs/WIRE.md §4). Returns its length, 0 when cap is too small.
 */
size_t tp_enc_ta(struct tp_chan *ch, const struct tp_op *op, uint32_t seg, uint8_t *buf,
		 size_t cap)
{
	uint32_t plen = seg_len(ch, op, seg);
	size_t off = (size_t)seg * ch->cfg.mtu, n = 0;
	uint8_t opc = ta_opcode(op, seg);
	bool mae = ub_ta_has_maetah(opc), imm = ub_ta_has_immetah(opc);
	struct ub_tah_fields tah = {
		.opcode = opc, .ini_tassn = op->tassn,
		.retry = op->retry, .rspst = op->rspst, .rspinfo = op->rspinfo,
		.order = initiator(op) ? ta_order(ch) : 0,
		/* Every memory access carries its token value (UB 2.0 §7.2.5). */
		.tv_en = mae,
	};

	/* [chosen] CTP and UTP have no TPN: IniRCID names the initiator's jetty
	 * (its channel), on requests and on their answers alike. */
	if (tp_is_ctp(ch) || ch->cfg.mode == TP_MODE_UTP)
		tah.ini_rcid = initiator(op) ? ch->tpn : ch->peer_tpn;
	if (cap < sizeof(struct ub_tah) + (mae ? sizeof(struct ub_maetah) : 0) +
		  (imm ? sizeof(struct ub_immetah) : 0) +
		  (mae ? sizeof(struct ub_tvetah) : 0) + plen)
		return 0;
	ub_tah_encode((struct ub_tah *)buf, &tah);
	n += sizeof(struct ub_tah);
	if (mae) {
		/* Every packet of a Write names where it lands, so a receiver
		 * could place it out of order; a Read asks for rd_len bytes; an
		 * atomic names one 8-byte word. */
		struct ub_maetah_fields m = {
			.va = op->va + off, .token_id = op->token,
			.length = (uint32_t)(op->kind == OP_READ ? op->rd_len :
					     op->kind == OP_ATOMIC ? TP_ATOMIC_LEN : op->len),
		};

		ub_maetah_encode((struct ub_maetah *)(buf + n), &m);
		n += sizeof(struct ub_maetah);
	}
	if (imm) {
		/* Msg_Length: a Write's whole length (for the target's completion);
		 * Immediate_TokenValue: a jetty's token, which this core has not. */
		struct ub_immetah_fields f = {
			.imm = op->imm, .msg_len = opc == UB_TA_WRITE_IMM ? (uint32_t)op->len : 0,
		};

		ub_immetah_encode((struct ub_immetah *)(buf + n), &f);
		n += sizeof(struct ub_immetah);
	}
	if (mae) {
		ub_tvetah_encode((struct ub_tvetah *)(buf + n), op->token_value);
		n += sizeof(struct ub_tvetah);
	}
	if (plen)
		tp_sge_out(op_sge(op), op->nsge, off, buf + n, plen);
	return n + plen;
}

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
	default:	ch->st.rtx_mark++; break;
	}
}

static size_t send_slot(struct tp_chan *ch, uint64_t now, uint32_t psn, uint8_t cause,
			uint8_t *buf, size_t cap, struct tp_tx_info *info)
{
	struct tp_slot *s = SLOT(ch, psn);
	struct tp_op *op = &ch->sq[s->op];
	size_t len = enc_data(ch, op, s->seg, psn, s->tpmsn, true, buf, cap);

	if (!len)
		return 0;
	s->ntx++;
	s->sent_ns = now;
	s->xseq = ++ch->xseq;
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
		ch->inflight_bytes += seg_len(ch, op, s->seg);
	}
	ch->rto_unsent = false;
	count_rtx(ch, cause);
	ch->st.tx_data++;
	ch->st.tx_bytes += seg_len(ch, op, s->seg);
	tp_cc_on_send(ch, now, seg_len(ch, op, s->seg), true);
	fill_info(ch, info, psn, true);
	if (!ch->rto_deadline)
		rto_rearm(ch, now);
	return len;
}

/* A Read or atomic posted before sq slot `upto` not answered yet. */
static bool fenced(const struct tp_chan *ch, uint32_t upto)
{
	for (uint32_t i = ch->sq_head; i != upto; i = (i + 1) % ch->sq_cap) {
		const struct tp_op *op = &ch->sq[i];

		if ((op->kind == OP_READ || op->kind == OP_ATOMIC) && op->state != OS_DONE &&
		    op->state != OS_FREE && !op->answered)
			return true;
	}
	return false;
}

/* The next operation allowed to put a packet on the wire. */
static struct tp_op *next_op(struct tp_chan *ch)
{
	for (uint32_t i = ch->sq_head; i != ch->sq_tail; i = (i + 1) % ch->sq_cap) {
		struct tp_op *op = &ch->sq[i];

		if (op->state != OS_QUEUED)
			continue;
		/* Keep Sends in order: nothing new overtakes one waiting to retry.
		 * One half sent is finished (the target refuses it too): cut
		 * short, the target would take the retry's packets for its rest. */
		if (initiator(op) && !op->retry && ch->rnr_waiting && !op->next_seg)
			continue;
		/* A fence holds it, and all that follows, until every earlier
		 * Read and atomic was answered (UB 2.0 §7.3.2.2). */
		if (op->fence && !op->next_seg && fenced(ch, i))
			return NULL;
		return op;
	}
	return NULL;
}

static size_t send_utp(struct tp_chan *ch, uint64_t now, uint8_t *buf, size_t cap,
		       struct tp_tx_info *info)
{
	struct tp_op *op = next_op(ch);
	size_t len;

	if (!op || !tp_cc_can_send(ch, now, seg_len(ch, op, 0)))
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
	sq_progress(ch);
	return len;
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
				count_rtx(ch, ch->probe_cause);
				ch->st.tx_data++;
				ch->rto_unsent = false;
				fill_info(ch, info, op->last_psn, true);
				return len;
			}
		}
	}

	if (tp_is_gbn(ch) && ch->rtx_nxt != ch->nxt) {
		s = SLOT(ch, ch->rtx_nxt);
		if (!tp_cc_can_send(ch, now, seg_len(ch, &ch->sq[s->op], s->seg)))
			return 0;
		len = send_slot(ch, now, ch->rtx_nxt, ch->gbn_cause, buf, cap, info);
		if (len)
			ch->rtx_nxt = tp_psn_add(ch->rtx_nxt, 1);
		return len;
	}
	if (ch->n_need_rtx) {
		for (psn = ch->una; psn != ch->nxt; psn = tp_psn_add(psn, 1)) {
			s = SLOT(ch, psn);
			if (!s->need_rtx)
				continue;
			if (!tp_cc_can_send(ch, now, seg_len(ch, &ch->sq[s->op], s->seg)))
				return 0;
			len = send_slot(ch, now, psn, s->rtx_cause, buf, cap, info);
			if (len) {
				s->need_rtx = false;
				ch->n_need_rtx--;
			}
			return len;
		}
	}

	/* New data, within the window. */
	if ((uint32_t)tp_psn_diff(ch->nxt, ch->una) >= ch->win_cap)
		return 0;
	op = next_op(ch);
	if (!op)
		return 0;
	b = seg_len(ch, op, op->next_seg);
	if (!tp_cc_can_send(ch, now, b))
		return 0;
	if (!op->next_seg) {
		op->tpmsn = ch->next_tpmsn++ & TP_PSN_MASK;
		if (ch->retry_next && initiator(op)) {
			op->retry = true;
			ch->retry_next = false;
		}
	}
	psn = ch->nxt;
	ackreq = ++ch->since_ackreq >= ch->cfg.ackreq_every || op->next_seg + 1 == op->nseg ||
		 (uint32_t)tp_psn_diff(ch->nxt, ch->una) + 1 >= ch->win_cap;
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
	ch->nxt = tp_psn_add(ch->nxt, 1);
	ch->rtx_phase = false;
	ch->rtx_nxt = ch->nxt;
	op->inflight++;
	if (++op->next_seg == op->nseg) {
		op->last_psn = psn;
		op->state = OS_SENT;
	}
	ch->inflight_bytes += b;
	ch->st.tx_data++;
	ch->st.tx_bytes += b;
	tp_cc_on_send(ch, now, b, false);
	if (!ch->rto_deadline)
		rto_rearm(ch, now);
	if (!ch->tlp_out)
		tlp_arm(ch, now);
	fill_info(ch, info, psn, false);
	return len;
}

/* For tp_ctp.c, which sends the same operations without a window. */
bool tp_op_initiator(const struct tp_op *op) { return initiator(op); }
void tp_sq_progress(struct tp_chan *ch) { sq_progress(ch); }
struct tp_op *tp_snd_next_op(struct tp_chan *ch) { return next_op(ch); }
