/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Internals of the transport core, shared by its .c files only: the state
 * of endpoints, channels and operations. What each file offers the others
 * is in its own header (tp_sq.h, tp_rtx.h, ...), so that none calls back
 * into a file that calls it.
 */
#ifndef UBXDP_TP_INT_H
#define UBXDP_TP_INT_H

#include <errno.h>

#include "transport/tp.h"
#include "transport/tp_rnr_hold.h"
#include "lib/ubhdr.h"

/* ---- parsed TP packet ---------------------------------------------------- */

struct tp_parsed {
	struct ub_tph_fields tph;
	bool has_saetph, has_tah, has_maetah, has_cetph, has_cnpetph;
	bool has_immetah, has_tvetah;
	struct ub_saetph_fields sa;
	struct ub_cetph_fields ce;
	struct ub_cnpetph_fields cnp;
	struct ub_tah_fields tah;
	struct ub_maetah_fields mae;
	struct ub_immetah_fields imm;
	uint32_t token_value;	/* has_tvetah */
	const uint8_t *payload;
	size_t payload_len;
};

/* ---- operations ---------------------------------------------------------- */

enum op_kind {
	OP_SEND,	/* initiator: Send, Send with immediate */
	OP_WRITE,	/* Write, Write with immediate */
	OP_READ,
	OP_ATOMIC,	/* CAS, FADD */
	OP_TAACK,	/* target: TAACK in its own TP packet (ROI/ROT) */
	OP_READ_RESP,	/* target: the data of a Read */
	OP_ATOMIC_RESP,	/* target: the original value of an atomic */
};

enum op_state {
	OS_FREE = 0,
	OS_QUEUED,	/* segments left to hand to the transport */
	OS_SENT,	/* all handed over; waiting for acks and the answer */
	OS_RNR_WAIT,	/* answered RNR/page fault: retried at rnr_until */
	OS_DONE,	/* answered; freed once no packet is in flight */
};

struct tp_op {
	uint8_t kind, state;
	bool retry;		/* TAH Retry: a repeat after RNR/page fault */
	bool answered;
	bool answer_probed;	/* its last packet resent once by answer_overtook */
	bool event_sent;
	uint8_t rspst, rspinfo;	/* OP_TAACK: what it carries */
	uint8_t status;		/* enum tp_status of the completion */
	uint16_t tassn;
	uint32_t tpmsn;
	uint32_t nseg, next_seg;
	uint32_t inflight;	/* packets of this op not yet acknowledged */
	uint32_t last_psn;	/* of the last packet, once sent */
	bool last_sent;
	uint32_t tries;
	uint8_t opcode;		/* enum tp_opcode: what the completion says */
	bool fence;		/* TP_WR_FENCE: waits for earlier Reads and atomics */
	/*
	 * The payload (Send, Write: gathered; READ_RESP, ATOMIC_RESP, ATOMIC: the
	 * source) or where a Read lands (scattered): op_sge(). One segment lives
	 * in sge1; more, or TP_WR_INLINE bytes, in heap (freed with the op).
	 */
	uint32_t nsge;
	struct tp_sge sge1;
	struct tp_sge *sgev;
	void *heap;
	uint8_t abuf[16];	/* ATOMIC: the operands, ATOMIC_RESP: the value (BE) */
	uint8_t *dst;		/* ATOMIC: where the original value goes (8 bytes) */
	uint64_t imm;		/* SEND_IMM, WRITE_IMM */
	size_t len;		/* payload bytes on the wire */
	size_t rd_len;		/* READ: bytes asked for */
	size_t rd_got;
	uint64_t va;
	uint32_t token;
	uint32_t token_value;	/* TVETAH of a memory access */
	uint64_t wr_id;
	uint64_t deadline;	/* CTP: answer due by (transaction timeout) */
};

/* A posted receive: rb_sge(); more than one segment in heap (rb_free()). */
struct tp_recvbuf {
	struct tp_sge sge1;
	struct tp_sge *sgev;
	uint32_t nsge;
	size_t cap;		/* the segments' lengths summed */
	uint64_t wr_id;
};

static inline const struct tp_sge *rb_sge(const struct tp_recvbuf *rb)
{
	return rb->nsge > 1 ? rb->sgev : &rb->sge1;
}

static inline const struct tp_sge *op_sge(const struct tp_op *op)
{
	return op->nsge > 1 ? op->sgev : &op->sge1;
}

/* An operation of the initiator's (not one of the target's answers). */
static inline bool tp_op_initiator(const struct tp_op *op)
{
	return op->kind == OP_SEND || op->kind == OP_WRITE || op->kind == OP_READ ||
	       op->kind == OP_ATOMIC;
}

/* One packet in the send window. */
struct tp_slot {
	uint32_t op;		/* index in sq */
	uint32_t seg;
	uint32_t tpmsn;
	uint64_t sent_ns;	/* the last transmission */
	uint64_t first_ns;	/* the first */
	uint64_t xseq;		/* transmission order of the last one (RACK) */
	uint64_t lost_ns;	/* when RACK or a TPSACK found it lost */
	uint16_t ntx;
	uint16_t path;		/* entropy of the last transmission + 1 (its ECMP
				 * path); 0: not known */
	bool infl;		/* counted in inflight_bytes */
	bool sacked;
	bool need_rtx;
	uint8_t rtx_cause;	/* enum rtx_cause for the pending retransmission */
};

enum rtx_cause { RC_RTO, RC_NAK, RC_SACK, RC_MARK, RC_ANSWER, RC_RACK, RC_TLP, RC_PATH };

/* A TPACK that carries a TAACK (ROL), queued for transmission. */
struct tp_taack_ack {
	uint32_t psn;
	uint16_t tassn;
	uint8_t rspst, rspinfo;
};

/* The receiver's memory of answers, for duplicates (ROL) and manual answers. */
#define TP_RESULTS	64
struct tp_result {
	bool valid, pending;
	uint16_t tassn;
	uint8_t rspst, rspinfo;
	uint32_t last_psn;
};

/* The message being reassembled. */
struct tp_rxmsg {
	bool active;
	uint32_t tpmsn;
	uint16_t tassn;
	uint8_t ta_op;
	bool retry;
	uint8_t order;		/* TAH Order: the initiator's transaction mode */
	uint8_t status;		/* enum tp_status */
	uint8_t info;		/* RSPINFO of a refusal */
	uint8_t *dst;		/* WRITE: the region; ATOMIC: the word */
	size_t cap, off;
	bool have_recv;
	struct tp_recvbuf rb;
	uint32_t op;		/* READ_RESP / ATOMIC_RESP: the initiator op */
	uint64_t va;		/* READ */
	uint32_t token;
	size_t rd_len;
	bool has_imm;		/* the IMMETAH of the last packet */
	uint64_t imm;
	uint8_t abuf[16];	/* ATOMIC: operands; ATOMIC_RESP: the value */
};

#define TP_FIFO	64

/* An answer waiting its turn (ROL acknowledgements may not pass it). */
struct tp_pend {
	uint16_t tassn;
	uint8_t order;
};

struct tp_chan {
	struct tp_ep *ep;
	struct tp_chan_config cfg;
	uint32_t tpn, peer_tpn;
	bool connected, failed;
	uint32_t init_psn;
	struct tp_stats st;

	/* send queue (ring of posted and generated operations) */
	struct tp_op *sq;
	uint32_t sq_cap, sq_head, sq_tail;
	uint32_t n_init_ops;	/* initiator ops outstanding */
	/* sq index + 1 of the op whose packets are partly out (0: none): its
	 * rest goes before anything else, a retry included (tp_snd_next_op) */
	uint32_t tx_mid;
	uint32_t rnr_waiting;
	uint64_t rnr_until;
	uint16_t next_tassn;
	uint32_t next_tpmsn;

	/* send window */
	struct tp_slot *win;
	uint32_t win_cap, win_base;	/* slots: cfg.span; slot of una */
	uint32_t n_sacked;		/* slots past una SACKed: delivered, not in the window */
	uint32_t span;			/* new data below una + span: cfg.span, or the peer's range less */
	/*
	 * Per slot index (tp_path_mark), PSN + 1 of the last packet sent twice,
	 * the second time by the path rule; 0: none. Its D-SACK proves its port
	 * reorders (tp_rack_dsack) and comes a round trip after the ack, when a
	 * full window has given the slot to the next PSN: the mark outlives
	 * the slot, until a path resend of a PSN win_cap later takes it.
	 */
	uint32_t *path_mark;
	/*
	 * Per slot index (tp_path_mark's), the packet resent last there: its
	 * PSN + 1 (0: none) and when the copy before its latest left. Its
	 * D-SACK, sent when the later of two copies arrives, bounds that
	 * copy's RTT (tp_rtx.c, dsack_learn); it comes a round trip after the
	 * ack, so it outlives the slot as the path mark does. A PSN a lap
	 * later, or an ack that answered the copy before, clears it.
	 */
	struct tp_dsk { uint32_t psn1; uint64_t prev_ns; } *dsk;
	uint32_t una, nxt;
	uint32_t rtx_nxt;		/* GBN: next PSN to go back over */
	uint8_t gbn_cause;
	bool last_nak_valid;
	uint32_t last_nak;
	/*
	 * SR (UB 2.0 §6). MarkPSN: the next new PSN when the channel last
	 * switched from new data to retransmission; every resend so far went
	 * before it. HighRtxPSN: the highest PSN resent in the current round;
	 * holes at or below it are not resent again in the round. A round
	 * ends when una passes HighRtxPSN, at an RTO, or when a TPSACK shows
	 * MarkPSN arrived with resent holes still open (those resends were
	 * lost: they go again, in a new round).
	 */
	uint32_t high_rtx, mark_psn;
	bool rtx_round;			/* high_rtx is valid */
	bool rtx_phase;			/* the last data packet sent was a resend */
	bool mark_valid;
	uint32_t n_need_rtx;
	uint32_t since_ackreq;
	bool retry_next;		/* tell the target an RNR'd op was given up */
	uint64_t inflight_bytes;
	uint64_t rto_deadline;		/* 0: not armed */
	uint32_t rto_times;		/* consecutive timeouts */
	uint64_t rto_first_ns;		/* when the first of them fired */
	bool rto_unsent;		/* the last timeout's resends have not left yet */
	uint64_t srtt, rttvar;
	/* SR after an RTO (F-RTO, RFC 5682 in spirit): only una went again;
	 * the first ack that moves una decides whether the rest is lost. */
	bool frto;
	uint32_t frto_una, frto_high;	/* una and nxt when the RTO fired */
	uint64_t frto_at;		/* when the last one fired */
	uint16_t frto_ntx;		/* frto_una's transmissions when it fired */
	/* The first PSN above frto_una not SACKed when it fired: una passing
	 * no further shows only what was known before (RFC 5682's SACK
	 * enhancement); frto_sacked: a packet sent before it SACKed since. */
	uint32_t frto_hole;
	bool frto_sacked;
	/*
	 * RACK (cfg.rack): xseq numbers transmissions; rack_* describe the
	 * latest-sent packet known delivered (acked or SACKed); reo_cur/prev:
	 * the largest reordering seen (how much longer a packet took than a
	 * later-sent one delivered before it) in this and the last epoch
	 * (4 SRTT); rack_deadline: the reordering timer; tlp_*: the tail loss
	 * probe, one per episode (until una moves).
	 */
	uint64_t xseq, rack_xseq, rack_ns, rack_rtt;
	/* Two minimum RTTs (tp_rtx.c, min_rtt_sample). min_rtt: the least
	 * ever, for "sooner than any round trip" (a resend's ack that is its
	 * original's, F-RTO), which a standing queue must never raise.
	 * min_rtt_win: the least of the last 10 s (Nichols' windowed min, as
	 * Linux's win_minmax: the best, 2nd and 3rd best in min_rtt_w), for
	 * the allowances scaled by it (reordering window floor, path rule),
	 * which must follow a route that got longer. */
	uint64_t min_rtt, min_rtt_win;
	struct tp_rtt_at { uint64_t t, v; } min_rtt_w[3];
	/* The longest RTT deliveries showed lately (tp_rtx.c, tp_rtt_hi,
	 * hi_sample): the largest of this span of samples and the last. */
	struct tp_hi { uint64_t cur, prev, start; } hi;
	/* The longest RTT the D-SACKs showed lately (tp_rtx.c, dsack_learn),
	 * in spans of 16 SRTTs, aged when read: part of tp_rtt_hi on every
	 * RACK channel. */
	struct tp_hi dsk_hi;
	uint64_t reo_cur, reo_prev, reo_epoch;
	/* Resent packets delivered lately: how late the original was, if it
	 * was the original that arrived (reordering, once a D-SACK names it). */
	struct { uint32_t psn; uint64_t late, rtt; } reo_ring[16];
	uint32_t reo_ring_n;
	uint32_t undo_psn;		/* the oldest packet the last RTO resent */
	bool undo_valid;
	/* Per path (cfg.entropies: one per entropy value): the latest-sent
	 * transmission on it known delivered. A path is FIFO, so a packet sent
	 * on it before that one and still missing is lost (tp_rack_detect). */
	struct tp_path { uint64_t xseq, rtt; } *paths;
	/* The path rule's guard (tp_rtx.c, path_reordered): proofs that the
	 * ports reorder in this reordering epoch; off: the time rule alone,
	 * until path_quiet epochs in a row showed none. */
	uint8_t path_proofs, path_quiet;
	bool path_off;
	uint64_t rack_deadline, tlp_deadline;
	bool tlp_out;
	bool tlp_answered;	/* the probe's first answer came (it pushed the RTO, once) */
	bool reo_learned;		/* an epoch measured some reordering */
	bool probe;			/* ROL: resend the last packet of an op */
	uint32_t probe_op;
	uint8_t probe_cause;		/* RC_RTO, or RC_ANSWER (answer_overtook) */

	/* receive */
	uint32_t rcv_nxt;
	uint32_t rcv_max;		/* highest PSN received */
	uint32_t n_ooo;			/* packets held out of order */
	uint8_t *ooo_buf;		/* ooo_range slots of ooo_stride bytes */
	uint32_t *ooo_len;
	size_t ooo_stride;
	bool ack_pending, ack_now, nak_pending, nak_sent, sack_pending;
	/* RACK: duplicates to report, a TPSACK each (SAETPH Dup, MaxRcvPSN) */
	uint32_t dsack_q[8];
	uint32_t dsack_n;
	uint32_t ack_cnt;
	uint64_t ack_deadline;
	struct tp_taack_ack taack_fifo[TP_FIFO];
	uint32_t tf_head, tf_tail;
	struct tp_result results[TP_RESULTS];
	struct tp_pend pend[TP_FIFO];
	uint32_t pq_head, pq_tail;
	struct tp_rnr_hold rnr_hold;	/* answering RNR until a retried message */
	struct tp_rxmsg rx;
	struct tp_recvbuf *rq;
	uint32_t rq_cap, rq_head, rq_tail;
	/* CTP, UTP: packets sent (tp_tx_info.psn, for per-packet load balancing) */
	uint32_t ctp_sent;
	uint8_t ctp_rx_vl;	/* the VL our peer's data arrives on: our CNPs name it */
};

/* The window slot of psn (una <= psn < nxt). */
#define TP_SLOT(ch, psn) (&(ch)->win[((ch)->win_base + (uint32_t)tp_psn_diff((psn), (ch)->una)) % (ch)->win_cap])

/*
 * psn's path mark (and D-SACK record, ch->dsk): at its slot's index, the
 * same before, during and after its stay in the window (una and win_base
 * move together), so across the PSN wrap too; the mark holds the full PSN.
 */
static inline uint32_t tp_mark_idx(const struct tp_chan *ch, uint32_t psn)
{
	int64_t k = ((int64_t)ch->win_base + tp_psn_diff(psn, ch->una)) % ch->win_cap;

	return (uint32_t)(k < 0 ? k + ch->win_cap : k);
}

static inline uint32_t *tp_path_mark(struct tp_chan *ch, uint32_t psn)
{
	return &ch->path_mark[tp_mark_idx(ch, psn)];
}

/* Bytes of segment seg of op: MTU-sized, the last one what is left. */
static inline uint32_t tp_seg_len(const struct tp_chan *ch, const struct tp_op *op, uint32_t seg)
{
	size_t off = (size_t)seg * ch->cfg.mtu;

	if (off >= op->len)
		return 0;
	return (uint32_t)(op->len - off < ch->cfg.mtu ? op->len - off : ch->cfg.mtu);
}

static inline uint32_t tp_slot_len(const struct tp_chan *ch, const struct tp_slot *s)
{
	return tp_seg_len(ch, &ch->sq[s->op], s->seg);
}

/* TAH Order of an ROL initiator (tp_wire.c's ta_order()). */
#define TP_ORDER_ROL 3

/* A registered region, in tp_mr.c's hash table (token_id 0: a free slot). */
struct tp_mr {
	uint32_t token_id;
	bool resident, token_none;
	uint32_t access;	/* TP_ACCESS_* */
	uint32_t token_value;
	uint8_t *addr;
	size_t len;
};

struct tp_ep {
	struct tp_ep_config cfg;
	uint64_t rng;
	struct tp_chan **chans;
	uint32_t nchans;
	uint32_t rr;			/* tx round robin */
	struct tp_mr *mrs;		/* tp_mr.c: open addressing by TokenID */
	uint32_t mr_cap, nmrs;
	uint64_t tok_rng;		/* token_seed's sequence */
	struct tp_event *evq;
	size_t ev_cap, ev_head, ev_len;
	struct tp_stats gone;		/* counters of destroyed channels */
};

static inline uint8_t tp_status_to_rspst(int st)
{
	switch (st) {
	case TP_ST_OK:		return UB_RSPST_ACK;
	case TP_ST_RNR:		return UB_RSPST_RNR;
	case TP_ST_PAGE_FAULT:	return UB_RSPST_PAGE_FAULT;
	default:		return UB_RSPST_COMPLETER_ERR;
	}
}

static inline enum tp_status tp_rspst_to_status(uint8_t r)
{
	switch (r) {
	case UB_RSPST_ACK:		return TP_ST_OK;
	case UB_RSPST_RNR:		return TP_ST_RNR;
	case UB_RSPST_PAGE_FAULT:	return TP_ST_PAGE_FAULT;
	default:			return TP_ST_COMPLETER_ERR;
	}
}

/* RTP: PSNs, acknowledgements and retransmission (not UTP, not CTP). */
static inline bool tp_reliable(const struct tp_chan *ch) { return ch->cfg.mode < TP_MODE_UTP; }
static inline bool tp_is_ctp(const struct tp_chan *ch) { return ch->cfg.mode == TP_MODE_CTP; }
static inline bool tp_is_gbn(const struct tp_chan *ch)
{
	return ch->cfg.mode == TP_MODE_RTP_GBN || ch->cfg.mode == TP_MODE_RTP_GBN_FAST;
}

#endif
