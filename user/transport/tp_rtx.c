// SPDX-License-Identifier: BSD-2-Clause
/*
 * Retransmission of a TP channel's sender: the bytes in flight, the RTO
 * (F-RTO after it), RACK's time-based loss detection and the tail loss
 * probe; what the acknowledgements (tp_ack.c) and the transmission
 * (tp_send.c) both drive.
 */
#include "transport/tp_rtx.h"
#include "transport/cc_wire.h"
#include "transport/tp_sq.h"

static void tlp_fire(struct tp_chan *ch, uint64_t now);

/* ---- in flight --------------------------------------------------------------- */

/*
 * inflight (UB 2.0 §6): bytes sent and neither acknowledged, SACKed nor
 * found lost. Each slot says whether its bytes are counted; tp_infl_out()
 * takes them out (returns how many), a resend puts them back.
 */
uint32_t tp_infl_out(struct tp_chan *ch, struct tp_slot *s)
{
	uint32_t b;

	if (!s->infl)
		return 0;
	b = tp_slot_len(ch, s);
	ch->inflight_bytes -= b;
	s->infl = false;
	return b;
}

/* An RTO, a Go-Back-N go-back: nothing is in flight any more. */
void tp_infl_reset(struct tp_chan *ch)
{
	for (uint32_t psn = ch->una; psn != ch->nxt; psn = tp_psn_add(psn, 1))
		TP_SLOT(ch, psn)->infl = false;
	ch->inflight_bytes = 0;
}

/* ---- RTO --------------------------------------------------------------------- */

/*
 * The largest of the samples since h->start and of the span before.
 * The deliveries' (ch->hi): a span ends HI_SPANS times the largest RTT it
 * holds, checked at a sample, so a queue's peak goes after 4-8 of its own
 * RTTs of samples, never for want of samples (a stall keeps it: aged by
 * time, spray_steers_from_lossy_path's rotation fell under its floor).
 * Spans of 2 such RTTs: 21 RTOs in 8 seeds (25-32) of that rotation,
 * against 1. The D-SACKs' (ch->dsk_hi): spans of DSK_SPANS SRTTs, read
 * when armed: a bound goes 16-48 SRTTs after it came (a span starts at its
 * first sample), over an idle gap too (test_rack_age); a lock's D-SACKs
 * keep it (spans of 4 or 8 lost part of test_rack_reo_learn's). 2 spans
 * with no sample forget either. Every delivery is a sample, a resent
 * packet's too: the time since its latest copy left, no more than the RTT
 * of whichever copy arrived, so never a hole's wait. With packets sent
 * once alone, spurious resends of every packet on the slow path left only
 * the fast path's samples, the window's cap fell to them and the resends
 * went on (that rotation: 0.35-0.44 Gb/s, 32-60 RTOs, 9 Writes failed).
 */
#define HI_SPANS	4
#define DSK_SPANS	16

static uint64_t dsk_span(const struct tp_chan *ch)
{
	uint64_t base = ch->srtt ? ch->srtt : ch->min_rtt_win;

	return base ? DSK_SPANS * base : UINT64_MAX;	/* nothing to age by yet */
}

static uint64_t hi_max(const struct tp_hi *h, uint64_t now, uint64_t span)
{
	uint64_t age = now > h->start ? now - h->start : 0;

	if (age >= span)	/* the span before has aged out; this one too past 2 */
		return age / 2 >= span ? 0 : h->cur;
	return h->cur > h->prev ? h->cur : h->prev;
}

static void hi_sample(struct tp_hi *h, uint64_t now, uint64_t span, uint64_t rtt)
{
	uint64_t age = now > h->start ? now - h->start : 0;

	if (age >= span) {
		h->prev = age / 2 >= span ? 0 : h->cur;
		h->cur = 0;
		h->start = now;
	}
	if (rtt > h->cur)
		h->cur = rtt;
}

/*
 * What a sprayed channel's timers wait for (the RTO's floor, the probe, the
 * reordering window's cap and epoch): the largest of SRTT and the RTTs
 * deliveries showed lately. SRTT samples each packet as it is first known
 * delivered (tp_ack.c), so it averages the paths, and the timers must cover
 * the slowest (spray_reordering_alone_no_rto: SRTT ~1.4 ms, the slow path's
 * queue ~16 ms). Lately, not ever: a path's peak kept for good held the
 * timers at a queue's height long after it drained (a port that left the
 * channel's set of 16 kept 23 ms for 670 ms, the paths then 1.5 ms).
 * A flow's channel: SRTT. Either (tp_rtt_hi): the RTT a D-SACK showed
 * lately, when the window could not have covered it (dsack_learn).
 */
uint64_t tp_rtt_hi_paths(const struct tp_chan *ch, uint64_t now)
{
	uint64_t r = ch->paths ? hi_max(&ch->hi, now, UINT64_MAX) : 0;	/* hi_sample ages it */

	return r > ch->srtt ? r : ch->srtt;
}

uint64_t tp_rtt_hi(const struct tp_chan *ch, uint64_t now)
{
	uint64_t r = tp_rtt_hi_paths(ch, now), d = hi_max(&ch->dsk_hi, now, dsk_span(ch));

	return d > r ? d : r;
}

uint64_t tp_rto_value(const struct tp_chan *ch, uint64_t now)
{
	uint64_t base;
	uint32_t shift;

	/* Static: the same wait up to the retry limit. Past it (a peer waited
	 * for until retry_time) each wait doubles, as a dynamic RTO's does, or
	 * a Go-Back-N channel would resend its window every 512 us for
	 * seconds. */
	if (ch->cfg.rto_mode == TP_RTO_STATIC) {
		shift = ch->rto_times > ch->cfg.retry_limit ? ch->rto_times - ch->cfg.retry_limit : 0;
		base = ch->cfg.rto_static_ns << (shift > 24 ? 24 : shift);
		return base > TP_RTO_4S ? TP_RTO_4S : base;
	}
	/* Base follows the RTT; before the first sample, the static value. */
	base = ch->srtt ? ch->srtt + 4 * ch->rttvar : ch->cfg.rto_static_ns;
	/* RACK and its probe find losses first: the RTO is the last resort,
	 * never sooner than 2 SRTT (a queue that grows delays every packet,
	 * and RTTVAR of a steady queue is next to nothing), nor, before any
	 * RTT is known, than 16 ms (the first flight fills queues on paths
	 * not measured yet; the probe goes first). Go-Back-N with TPNAKs: its
	 * RTO, which no ack undoes and which resends the window, only finds a
	 * tail, and waits 2 SRTT as well: a window-limited LDCP sender's sat
	 * 5 us above an SRTT of 73 us, and a neighbour's go-back burst fired
	 * it, every time spuriously (docs/CC.md). Plain Go-Back-N recovers by
	 * the RTO alone and keeps SRTT + 4 RTTVAR. */
	if (ch->cfg.rack) {
		uint64_t floor = ch->srtt ? 2 * tp_rtt_hi(ch, now) : TP_RTO_16MS;

		if (base < floor)
			base = floor;
	}
	if (ch->cfg.mode == TP_MODE_RTP_GBN_FAST && base < 2 * ch->srtt)
		base = 2 * ch->srtt;
	if (base < ch->cfg.rto_min_ns)
		base = ch->cfg.rto_min_ns;
	shift = ch->cfg.rto_n * ch->rto_times;
	if (shift > 24)
		shift = 24;
	base <<= shift;
	return base > TP_RTO_4S ? TP_RTO_4S : base;
}

/*
 * min_rtt: the least RTT ever, so that "sooner than min_rtt" means "sooner
 * than any round trip" (a resend acked that soon answered its original):
 * 10 s of samples behind a standing queue must not raise it, or a resend
 * answered in the queue's absence passes for its original and RACK's
 * reference stops moving (test tail_after_standing_queue_no_rto).
 * min_rtt_win: the least of the last 10 s (Kathleen Nichols' windowed min,
 * as Linux's win_minmax: the best sample, and a 2nd and 3rd best from later
 * quarters of the window to take over when it ages out), for what is scaled
 * by it (the reordering window's floor, the path rule's allowance): a route
 * that got longer for good is followed within the window.
 */
#define MIN_RTT_WIN_NS	10000000000ull

static void min_rtt_sample(struct tp_chan *ch, uint64_t now, uint64_t rtt)
{
	struct tp_rtt_at *w = ch->min_rtt_w, v = { now, rtt };
	uint64_t dt;

	if (!ch->min_rtt || rtt < ch->min_rtt)
		ch->min_rtt = rtt;
	if (!ch->min_rtt_win || rtt <= w[0].v || now - w[2].t > MIN_RTT_WIN_NS) {
		w[0] = w[1] = w[2] = v;
		ch->min_rtt_win = rtt;
		return;
	}
	if (rtt <= w[1].v)
		w[1] = w[2] = v;
	else if (rtt <= w[2].v)
		w[2] = v;
	dt = now - w[0].t;
	if (dt > MIN_RTT_WIN_NS) {
		/* the best aged out: the 2nd takes over (and the 3rd, if the 2nd
		 * is as old) */
		w[0] = w[1];
		w[1] = w[2];
		w[2] = v;
		if (now - w[0].t > MIN_RTT_WIN_NS) {
			w[0] = w[1];
			w[1] = w[2];
		}
	} else if (w[1].t == w[0].t && dt > MIN_RTT_WIN_NS / 4) {
		w[1] = w[2] = v;
	} else if (w[2].t == w[1].t && dt > MIN_RTT_WIN_NS / 2) {
		w[2] = v;
	}
	ch->min_rtt_win = w[0].v;
}

void tp_rtt_sample(struct tp_chan *ch, uint64_t now, uint64_t rtt)
{
	min_rtt_sample(ch, now, rtt);
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
struct tp_op *tp_unanswered(struct tp_chan *ch)
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

void tp_rto_rearm(struct tp_chan *ch, uint64_t now)
{
	if (ch->una != ch->nxt || tp_unanswered(ch))
		ch->rto_deadline = now + tp_rto_value(ch, now);
	else
		ch->rto_deadline = 0;
	ch->st.rto_ns = tp_rto_value(ch, now);
}

/*
 * RACK: the RTO also counts from the oldest packet's latest transmission
 * (as Linux arms it from the head's). The deadline is set at progress or
 * at a probe's first answer, and RACK may resend the oldest packet after
 * that: behind 20 ms drop-tail queues that copy was 4.6-18 ms old when an
 * RTO of 40.8 ms fired, then arrived, and the RTO's copy was D-SACKed
 * (test spray_tbf_queues_no_undone_rto). A lost copy is RACK's to find,
 * by its own send time, once anything sent later is delivered. True: the
 * deadline moved on, nothing fires now.
 */
static bool rto_from_una(struct tp_chan *ch, uint64_t now)
{
	uint64_t due;

	if (!ch->cfg.rack || tp_is_gbn(ch) || ch->una == ch->nxt)
		return false;	/* GBN's go-back resends una: it would never fire */
	due = TP_SLOT(ch, ch->una)->sent_ns + tp_rto_value(ch, now);
	if (due <= now)
		return false;
	ch->rto_deadline = due;
	return true;
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
		tp_rack_detect(ch, now);
	/* RACK: a tail loss probe comes before the first RTO of a flight
	 * (before any RTT is known, at the initial RTO). */
	if (ch->cfg.rack && !ch->tlp_out && ch->una != ch->nxt && !ch->failed &&
	    ((ch->tlp_deadline && now >= ch->tlp_deadline) ||
	     (ch->rto_deadline && now >= ch->rto_deadline)))
		tlp_fire(ch, now);
	if (!ch->rto_deadline || now < ch->rto_deadline || rto_from_una(ch, now))
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
	if (!ch->rto_times++)
		ch->rto_first_ns = now;
	if (ch->rto_times > ch->cfg.retry_limit && now - ch->rto_first_ns >= ch->cfg.retry_time_ns) {
		tp_chan_fail(ch, TP_ST_RETRY_EXCEEDED);
		return;
	}
	/* UB 2.0 §6: an RTO resets inflight to 0, Go-Back-N or selective
	 * alike, and tells CC (an LDCP/CAQM window full of lost bytes would
	 * hold the resends for ever otherwise). */
	tp_infl_reset(ch);
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
				struct tp_slot *s = TP_SLOT(ch, probe[k]);

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
				ch->frto_ntx = TP_SLOT(ch, ch->una)->ntx;
			}
			ch->frto_hole = tp_psn_add(ch->una, 1);
			while (ch->frto_hole != ch->nxt && TP_SLOT(ch, ch->frto_hole)->sacked)
				ch->frto_hole = tp_psn_add(ch->frto_hole, 1);
			ch->frto_sacked = false;
			ch->undo_psn = ch->una;
			ch->undo_valid = true;
			ch->frto_at = now;
		}
		ch->last_nak_valid = false;
		ch->rto_unsent = true;
	} else {
		struct tp_op *op = tp_unanswered(ch);

		if (op) {
			ch->rto_unsent = true;
			ch->probe = true;
			ch->probe_op = (uint32_t)(op - ch->sq);
			ch->probe_cause = RC_RTO;
		}
	}
	ch->rto_deadline = now + tp_rto_value(ch, now);
	ch->st.rto_ns = tp_rto_value(ch, now);
}

uint64_t tp_snd_loss_deadline(const struct tp_chan *ch)
{
	uint64_t d = ch->rto_deadline ? ch->rto_deadline : UINT64_MAX;

	if (ch->tlp_deadline && ch->tlp_deadline < d)
		d = ch->tlp_deadline;
	return d;
}

uint64_t tp_snd_exact_deadline(const struct tp_chan *ch)
{
	uint64_t d = ch->rnr_waiting ? ch->rnr_until : UINT64_MAX;

	if (ch->rack_deadline && ch->rack_deadline < d)
		d = ch->rack_deadline;

	if (ch->cfg.cc && ch->cfg.cc->next_deadline) {
		uint64_t c = ch->cfg.cc->next_deadline(ch->cfg.cc_ctx);

		if (c < d)
			d = c;
	}
	return d;
}

uint64_t tp_snd_deadline(const struct tp_chan *ch)
{
	uint64_t l = tp_snd_loss_deadline(ch), x = tp_snd_exact_deadline(ch);

	return l < x ? l : x;
}

/* ---- RACK: time-based loss detection (cfg.rack) ------------------------------ */

/*
 * The path rule's guard. A port that is not FIFO (a LAG or a switch below
 * spraying per packet, a path of several queues) makes the path rule
 * resend packets that were only late. Proofs that the ports reorder: a
 * path resend D-SACKed, or a packet sent once delivered later than the
 * rule would have waited after a later one on its port. PATH_PROOFS in a
 * reordering epoch (4 SRTT) switch the rule off (one may be a burst in the
 * hosts' queues beyond min_rtt_win/4: two within a few RTTs are a pattern):
 * the time rule, whose window the same reordering widens, finds the
 * losses. While off, the second kind of proof still shows; PATH_QUIET
 * epochs in a row without one (the ports became FIFO: a route change;
 * the epoch that switched it off does not count) switch it on again, and
 * if they did not, two more spurious resends switch it off.
 */
#define PATH_PROOFS	2
#define PATH_QUIET	8

/* A new epoch of the reordering estimate every 4 SRTT: what was seen in
 * the last two epochs counts. */
static void reo_age(struct tp_chan *ch, uint64_t now)
{
	uint64_t epoch = 4 * tp_rtt_hi(ch, now);

	if (!epoch || now - ch->reo_epoch < epoch)
		return;
	/* the epoch that ends counts as quiet if it had no proof */
	if (ch->path_off) {
		ch->path_quiet = ch->path_proofs ? 0 : ch->path_quiet + 1;
		if (ch->path_quiet >= PATH_QUIET) {
			ch->path_off = false;
			ch->path_quiet = 0;
		}
	}
	ch->path_proofs = 0;
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

static void path_reordered(struct tp_chan *ch, uint64_t now)
{
	reo_age(ch, now);
	if (ch->path_proofs < UINT8_MAX)
		ch->path_proofs++;
	if (!ch->path_off && ch->path_proofs >= PATH_PROOFS) {
		ch->path_off = true;
		ch->st.path_rule_off++;
	}
}

/*
 * D-SACK of d: if d went twice, the second time by the path rule, both
 * copies arrived: one proof. Resent once more (RTO, TLP) or probed (ROL
 * probe), its mark is off: that duplicate may be the other's.
 */
static void path_dsack(struct tp_chan *ch, uint64_t now, uint32_t d)
{
	uint32_t *mark = tp_path_mark(ch, d);

	if (*mark != d + 1)
		return;
	*mark = 0;	/* one proof a resend */
	ch->st.path_dsack++;
	path_reordered(ch, now);
}

/*
 * The reordering window: the largest reordering seen lately and a quarter
 * more, at least min_rtt_win/4 (RACK's default, of the 10 s min), at most
 * 2 SRTT (a loss is then found within about 3 RTTs, still before an RTO
 * that has backed off).
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
	if (w < ch->min_rtt_win / 4)
		w = ch->min_rtt_win / 4;
	if (ch->cfg.no_fast_rtx && !ch->reo_learned) {
		uint64_t base = ch->srtt ? ch->srtt + 4 * ch->rttvar : 3 * ch->rack_rtt;

		if (w < base)
			w = base;
	}
	if (ch->srtt) {
		uint64_t cap = 2 * tp_rtt_hi(ch, now);

		if (w > cap)
			w = cap;
	}
	ch->st.reo_wnd_ns = w;
	return w;
}

/* No Write waits for its packets: what is left to move RACK's reference are
 * resends (the drain). */
static bool nothing_queued(const struct tp_chan *ch)
{
	for (uint32_t i = ch->sq_head; i != ch->sq_tail; i = (i + 1) % ch->sq_cap)
		if (ch->sq[i].state == OS_QUEUED)
			return false;
	return true;
}

/*
 * A resend acked sooner than any round trip answered an earlier copy
 * (RFC 8985's rule), except on a sprayed channel (its paths known) whose
 * Writes are all sent: there it is the resend's own answer. A group's
 * channel may have measured its min RTT only behind the others' queues
 * (212.5-393.3 us against the idle path's 207.5), so in the drain every
 * resend crossing the emptied path passed for its original: RACK's
 * reference stood, its false lateness (300 ms-2 s) swelled the reordering
 * window, and the holes were left to rounds of it and to the RTO (test
 * spray_tbf_queues_drain; spray_tail_loss_probe: 4 RTOs). Mid-run, new
 * packets move the reference; the same judgement there cost
 * spray_steers_from_lossy_path 1.06 -> 0.87 Gb/s (0.29 -> 0.21 rotated),
 * and a flow's channel keeps Karn's doubt (tlp_sack_no_new_episode). What
 * it costs: an original that arrives after its resend in the drain was
 * taken for lost, and RACK judges the packets sent before that resend by
 * it. (Taking it so only when the copy before had left more than twice
 * the longest RTT ever seen, d1fed47, changed no test and no goodput, and
 * the drain's mean over 512 runs by 0.6-1.8 ms of ~143: removed.)
 */
static bool answers_earlier_copy(const struct tp_chan *ch, const struct tp_slot *s,
				 uint64_t rtt)
{
	if (s->ntx < 2 || !ch->min_rtt || rtt >= ch->min_rtt)
		return false;
	return !ch->paths || !nothing_queued(ch);
}

/*
 * Packet s is newly known delivered (acked or SACKed). A resend acked
 * sooner than any round trip answered its original: a spurious
 * retransmission, and how late that original was is reordering. Otherwise
 * it may be the latest-sent packet delivered (RACK's reference), and when
 * a later-sent one was delivered first, its extra delay is reordering.
 */
void tp_rack_delivered(struct tp_chan *ch, uint64_t now, const struct tp_slot *s,
		       uint32_t psn)
{
	uint64_t rtt = now - s->sent_ns;
	bool earlier;

	if (!ch->cfg.rack)
		return;
	if (ch->paths)	/* the only channels that read it (tp_rtt_hi_paths) */
		hi_sample(&ch->hi, now, HI_SPANS * hi_max(&ch->hi, now, UINT64_MAX), rtt);
	earlier = answers_earlier_copy(ch, s, rtt);
	if (s->ntx > 1 && now - s->first_ns > ch->rack_rtt) {
		uint64_t late = now - s->first_ns - ch->rack_rtt;

		/* Sooner than any round trip: the original, surely (unless
		 * it can be answered no more). Otherwise a D-SACK naming it
		 * will say so (rack_dsack). */
		if (earlier) {
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
	if (earlier) {
		/* the copy before answered: the D-SACK will be this one's, its
		 * bound the wait before it left as well */
		ch->dsk[s - ch->win].psn1 = 0;
		return;
	}
	if (s->ntx == 1) {
		min_rtt_sample(ch, now, rtt);
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
	/* Sent once: that transmission is surely the one delivered (a resend's
	 * ack may be its original's, on another path). */
	if (s->path && ch->paths && s->ntx == 1) {
		struct tp_path *p = &ch->paths[s->path - 1];

		if (s->xseq > p->xseq)
			*p = (struct tp_path){ .xseq = s->xseq, .rtt = rtt };
		else if (rtt > p->rtt + ch->min_rtt_win / 4)
			path_reordered(ch, now);
	}
}

/*
 * A D-SACK goes when the later of two copies arrives, so the time since the
 * copy before the latest left bounds the late copy's RTT: the original's,
 * when the resend was taken for its answer (sent twice). What packets sent
 * once cannot show: when the window is short of the reordering, the late
 * ones are all resent, only those that beat the window are sampled, and a
 * resend's sample is the time since its own copy left, short by
 * construction; the window, its cap (2 rtt_hi) and SRTT confirm each other.
 * A flow's channel over a path with per-packet jitter of 300 us: SRTT 40 us,
 * the window capped at 80 us, 1.50 Gb/s against main's 4.74; a group sprayed
 * over paths of 200 and 20 us one way: every packet of the slow path resent
 * before it arrived, 6,537 D-SACKs (test_rack_reo_learn). The bound lifts
 * rtt_hi, the window's cap; the late packets then arrive sent once and widen
 * the window themselves. Only past the cap the paths give (not lifted by the
 * bounds: a lock's D-SACKs keep the bound alive). A bound within it is no
 * lock, and may be the resend's (the original first, the resend's wait
 * before it left counted in): taken always, bounds of 44 ms where the paths'
 * RTTs were 23 slowed spray_tbf_queues_drain (512 runs: mean 142.8 -> 152.9
 * ms, p99 194.2 -> 227.2). Nor does it widen the window itself (a reordering
 * of the bound less RACK's RTT): that cost spray_steers_from_lossy_path's
 * rotation 1.227 -> 1.091 Gb/s. Kept per slot index, not in the ring of 16
 * resends, which is overwritten long before a window of D-SACKs comes; with
 * a third copy cleared, a flow whose every packet went three times never
 * learned (4 flows of that jitter: 3.0 Gb/s, one flow's SRTT 75 us, the
 * others' 3 ms).
 */
static void dsack_learn(struct tp_chan *ch, uint64_t now, uint32_t d)
{
	struct tp_dsk *k = &ch->dsk[tp_mark_idx(ch, d)];
	uint64_t rtt;

	if (k->psn1 != d + 1)
		return;
	k->psn1 = 0;
	rtt = now - k->prev_ns;
	if (rtt <= 2 * tp_rtt_hi_paths(ch, now))
		return;
	hi_sample(&ch->dsk_hi, now, dsk_span(ch), rtt);
}

/*
 * D-SACK ([chosen] SAETPH Dup): PSN d arrived twice, a resend for nothing
 * whose original was only late. How late is reordering; and when d is the
 * oldest packet the last RTO resent, that RTO came of delay alone.
 */
void tp_rack_dsack(struct tp_chan *ch, uint64_t now, uint32_t d)
{
	bool undone = ch->undo_valid && d == ch->undo_psn;

	ch->st.rtx_spurious++;
	if (undone) {
		ch->undo_valid = false;
		ch->st.rto_undone++;
	}
	path_dsack(ch, now, d);
	dsack_learn(ch, now, d);
	for (uint32_t k = 0; k < 16 && k < ch->reo_ring_n; k++) {
		uint32_t i = (ch->reo_ring_n - 1 - k) % 16;

		if (ch->reo_ring[i].psn != d || !ch->reo_ring[i].rtt)
			continue;
		reo_sample(ch, now, ch->reo_ring[i].late);
		/* Eifel's response: the RTT the timeout did not wait for is
		 * a sample (Karn kept it out: the packet had been resent). */
		if (undone)
			tp_rtt_sample(ch, now, ch->reo_ring[i].rtt);
		ch->reo_ring[i].rtt = 0;
		break;
	}
}

/*
 * Every packet sent before the latest-sent one delivered, and missing
 * longer than that one's RTT plus the reordering window, is lost; the
 * earliest of the others arms the reordering timer. On a path that is
 * known (its entropy, cfg.entropies), packets arrive in the order they
 * were sent: one sent on it before the latest delivered on it is lost once
 * that one's RTT and a small allowance (min_rtt_win/4, for the hosts' queues)
 * have passed since it left, whatever the reordering between paths.
 */
void tp_rack_detect(struct tp_chan *ch, uint64_t now)
{
	uint64_t wnd, allow, next = 0;
	uint32_t lost = 0;
	bool loss = false;

	ch->rack_deadline = 0;
	if (!ch->cfg.rack || !ch->rack_xseq || tp_is_gbn(ch))
		return;
	wnd = reo_wnd(ch, now);
	allow = ch->min_rtt_win / 4;
	for (uint32_t psn = ch->una; psn != ch->nxt; psn = tp_psn_add(psn, 1)) {
		struct tp_slot *s = TP_SLOT(ch, psn);
		uint8_t cause = RC_RACK;
		uint64_t due;

		/* Sent once, after the reference: so was every later PSN (a
		 * resend of one went later still). */
		if (s->ntx == 1 && s->xseq >= ch->rack_xseq)
			break;
		if (s->sacked || s->need_rtx || s->xseq >= ch->rack_xseq)
			continue;
		due = s->sent_ns + ch->rack_rtt + wnd;
		if (s->path && ch->paths && !ch->path_off) {
			const struct tp_path *p = &ch->paths[s->path - 1];

			if (p->xseq > s->xseq && s->sent_ns + p->rtt + allow < due) {
				due = s->sent_ns + p->rtt + allow;
				cause = RC_PATH;
			}
		}
		if (due > now) {
			if (!next || due < next)
				next = due;
			continue;
		}
		s->rtx_cause = cause;
		s->lost_ns = now;
		s->need_rtx = true;
		ch->n_need_rtx++;
		lost += tp_infl_out(ch, s);
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
 * packets are outstanding and no probe is (una moving ends a probe's episode,
 * a TPSACK does not: otherwise each probe's answer allows the next and keeps
 * pushing the RTO, which never fires while any packet above una is left). */
void tp_tlp_arm(struct tp_chan *ch, uint64_t now)
{
	ch->tlp_deadline = 0;
	if (!ch->cfg.rack || tp_is_gbn(ch) || !ch->srtt || ch->una == ch->nxt || ch->tlp_out)
		return;
	ch->tlp_deadline = now + 2 * tp_rtt_hi(ch, now) + ch->cfg.ack_delay_ns;
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
	ch->tlp_answered = false;
	ch->rto_deadline = now + tp_rto_value(ch, now);
	if (ch->n_need_rtx)
		return;
	for (uint32_t psn = tp_psn_add(ch->nxt, TP_PSN_MASK);; psn = tp_psn_add(psn, TP_PSN_MASK)) {
		struct tp_slot *s = TP_SLOT(ch, psn);

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
