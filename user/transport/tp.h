/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * UB transport core (RTP/UTP, UB 2.0 §6), sans-I/O.
 *
 * The core never touches a socket or a clock. Its owner feeds it:
 *   - received TP packets       tp_ep_rx()    (bytes from the TPH to the end of
 *                                              the payload, ICRC already checked
 *                                              and stripped), or whole frames:
 *                                              tp_ep_rx_frame()
 *   - the time                  every call takes `now` in nanoseconds, any
 *                                              monotonic origin
 *   - timer ticks               tp_ep_tick() no later than tp_ep_next_deadline()
 *   - requests                  tp_post() (every URMA operation, SGE lists),
 *                                             tp_post_recv_sge(); the single-buffer
 *                                             tp_post_send/recv/write/read()
 * and drains:
 *   - packets to transmit       tp_ep_tx()   (pull: the core writes the next TP
 *                                             packet into the caller's buffer;
 *                                             the caller wraps it in UBoE or
 *                                             native UB, e.g. with
 *                                             tp_pkt_to_spec() + ub_build_uboe())
 *   - completion events         tp_ep_poll()
 *
 * One endpoint holds many TP channels, found on receive by DstTPN (RTP), or
 * (UTP: the UTPH names no TPN, headers/ub_wire.h) by the TAH's IniRCID, the
 * sender's jetty, which is its channel's TPN, and the source entity when
 * the channel names one (peer_entity); a UTP message is one packet. A channel
 * is one direction pair between two endpoints: both sides create a channel,
 * exchange (TPN, initial PSN) out of band or over UTP (tp_hello_*), then
 * connect.
 *
 * CTP (TP_MODE_CTP, for a lossless native UB link): no PSN, no TPN on the
 * wire, no transport acknowledgement; each packet is a whole operation (at
 * most one MTU) behind a 1-byte CTPH, the answer (TAACK, ReadResp) a packet
 * of its own. Received CTP packets come with meta.ctp set (the datapath
 * tells them by their UDP port, headers/ub_wire.h) and find their channel by
 * the TAH's IniRCID and the peer's entity address (tp_chan_config).
 * CTP congestion control is per {Dest Entity, VL}, not per channel: every
 * CTP channel to one peer entity on one VL shares one CC instance (cc_ctx),
 * which paces what they send and answers marks with CTP CNPs (CTPH opcode
 * UB_CTP_OP_CNP | CNPETPH naming the VL), at most one per interval per
 * {source entity, VL}; a CNP received cuts the instance of {its IP source,
 * its VL}.
 *
 * Wire layouts: docs/WIRE.md §3-§4, encoded with user/lib/ubhdr.h. Data packets
 * are TPH | TAH | [MAETAH: every packet of a Write, a Read or atomic request] |
 * [IMMETAH: the last packet of a Send or Write with immediate] | [TVETAH:
 * every memory access, TAH TV_EN] | payload; responses are TPH | [SAETPH] |
 * [TAH = TAACK, ROL only]. NLP is 0 when a TAH follows and TP_NLP_NONE
 * ([chosen]) when nothing does.
 *
 * URMA (openEuler liburma) on this core, what user/urma builds on:
 *   urma_register_seg     tp_mr_register(): TokenID (20 bits, random),
 *                         token value (urma_token_t), access flags
 *   urma_post_jfs_wr      tp_post(): Send, Write (with immediate), Read,
 *                         CAS, FADD; SGE lists; inline; fence
 *   urma_post_jfr_wr      tp_post_recv_sge()
 *   urma_poll_jfc         tp_ep_poll(): struct tp_event (imm, source jetty)
 * Ordering: an RTP channel delivers its packets in order and its target
 * executes operations in posting order; completions are reported in posting
 * order (initiator) and in arrival order (target), so URMA's strong order
 * (SO), relaxed order and completion order hold on one channel without
 * anything on the wire. TP_WR_FENCE holds an operation (and everything after
 * it) until every earlier Read and atomic of the channel was answered
 * (UB 2.0 §7.3.2.2). UTP orders nothing; CTP relies on a per-flow link.
 */
#ifndef UBXDP_TP_H
#define UBXDP_TP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TP_PSN_MASK		0xffffffu
#define TP_PSN_HALF		0x800000u	/* window must stay below this */
#define TP_WINDOW_DEFAULT	256u		/* packets in flight when none is set */
#define TP_OOO_RANGE_DEFAULT	256u		/* receive range: a power of two, */
#define TP_OOO_RANGE_MAX	2048u		/* 128 .. 2048 */
/* The largest TPSACK bitmap (1024 bits from the cumulative ack) less one: a
 * packet sent further past una is never SACKed, and RACK resends it. */
#define TP_SPAN_MAX		1023u
#define TP_NLP_NONE		1		/* [chosen] NLP: no TAH follows */
/* Worst-case TP headers: a TPSACK-CC with a 1024-bit bitmap and a TAACK
 * (data: TPH | TAH | MAETAH | IMMETAH | TVETAH, 60 bytes, is less). */
#define TP_HDR_MAX		(16 + 8 + 4 + 128 + 8 + 16)
#define TP_CTP_RCID_MAX		0xfffffu	/* CTP, UTP: a channel's TPN is its IniRCID (20 bits) */

struct tp_ep;
struct tp_chan;

/* ---- configuration ------------------------------------------------------ */

enum tp_mode {
	TP_MODE_RTP_SR = 0,	/* selective retransmission (default) */
	TP_MODE_RTP_GBN,	/* Go-Back-N, RTO only */
	TP_MODE_RTP_GBN_FAST,	/* Go-Back-N, TPNAK triggers the go-back */
	TP_MODE_UTP,		/* unreliable: no PSN, no acks; a message is one packet */
	TP_MODE_CTP,		/* compact: no PSN, no acks, lossless link (native only) */
};

/* Transaction reliability mode: where the TAACK travels. */
enum tp_ta_mode {
	TP_TA_ROL = 0,		/* TAACK in the (delayed) TPACK of the last packet */
	TP_TA_ROI,		/* TAACK in its own TP packet, itself acknowledged */
	TP_TA_ROT,		/* as ROI on the wire (TAH Order differs) */
};

enum tp_rto_mode {
	TP_RTO_STATIC = 0,	/* rto_static_ns */
	TP_RTO_DYNAMIC,		/* Base x 2^(N x Times), Base from the measured RTT */
};

/* The four static RTO choices of UB 2.0 §6. */
#define TP_RTO_512US		512000ull
#define TP_RTO_16MS		16000000ull
#define TP_RTO_128MS		128000000ull
#define TP_RTO_4S		4000000000ull

struct tp_ep_config {
	uint64_t seed;		/* RNG seed: initial PSNs (reproducible runs) */
	uint32_t max_chans;	/* 0: 64 */
	uint32_t max_mrs;	/* registered regions, at most TP_MRS_MAX; 0: 4096 */
	/* TokenIDs and tp_mr_reg()'s token values: 0 draws them from
	 * getrandom() (unpredictable: the default); else from this seed
	 * (reproducible tests). Never from `seed`, which is no secret. */
	uint64_t token_seed;
};

/*
 * Congestion-control hook, one instance per channel (docs/CC.md). All optional;
 * NULL ops = no CC (send whenever the window allows). The core keeps
 * inflight_bytes (tp_chan_inflight_bytes()) and asks can_send() before every
 * new or retransmitted data packet. inflight (UB 2.0 §6): bytes sent and not
 * acknowledged, SACKed or found lost; an RTO (GBN or SR) and a GBN go-back
 * reset the core's count to 0 (the go-back tells CC the bytes by on_lost), a
 * selective retransmission takes out only the lost packets' bytes; a resend
 * counts again.
 */
enum tp_loss_kind { TP_LOSS_RTO, TP_LOSS_NAK, TP_LOSS_SACK };
struct tp_rx_meta;
struct ub_cetph_fields;
struct ub_cnpetph_fields;
struct tp_cc_ops {
	bool (*can_send)(void *cc, uint64_t now, uint64_t inflight_bytes, uint32_t bytes);
	void (*on_send)(void *cc, uint64_t now, uint32_t bytes, bool rtx);
	void (*on_ack)(void *cc, uint64_t now, uint64_t acked_bytes, uint64_t rtt_ns);
	void (*on_loss)(void *cc, uint64_t now, enum tp_loss_kind kind);
	/* A retransmission: bytes of packets found lost (selective), or that a
	 * TPNAK leaves unacknowledged (a Go-Back-N go-back), taken out of flight
	 * (their resends count as sent again). An RTO takes everything out
	 * instead: on_loss(TP_LOSS_RTO). */
	void (*on_lost)(void *cc, uint64_t now, uint32_t bytes);
	void (*on_ecn)(void *cc, uint64_t now);		/* receiver saw CE on data */
	void (*on_cnp)(void *cc, uint64_t now, uint8_t ecn_level, bool loc);
	uint64_t (*next_deadline)(void *cc);		/* pacing; UINT64_MAX: none */
	/* Congestion feedback on the wire (user/transport/cc.h, cc_wire.c). */
	void (*on_rx_data)(void *cc, uint64_t now, uint32_t bytes, const struct tp_rx_meta *meta);
	bool (*cnp_due)(void *cc, uint64_t now, struct ub_cnpetph_fields *cnp);
	bool (*ack_cetph)(void *cc, uint64_t now, struct ub_cetph_fields *ce);	/* TPACK-CC */
	void (*on_cetph)(void *cc, uint64_t now, const struct ub_cetph_fields *ce);
	bool (*tx_cci)(void *cc, uint64_t now, uint32_t bytes, bool rtx, uint16_t *cci);
	void (*on_tick)(void *cc, uint64_t now);	/* timers (tp_ep_tick) */
};

struct tp_chan_config {
	enum tp_mode mode;
	enum tp_ta_mode ta_mode;
	uint32_t local_tpn;	/* 24 bits, unique in the endpoint; 0: allocate */
	bool fixed_init_psn;	/* use init_psn instead of a random one (tests) */
	uint32_t init_psn;
	uint32_t mtu;		/* TP payload bytes per packet; 0: 1024 */
	uint32_t window;	/* packets in flight, <= TP_PSN_HALF-1; 0: 256 */
	uint32_t ooo_range;	/* receive range: 128/256/512/1024/2048; 0: 256 */
	/* SR: how far past the oldest unacknowledged PSN new data may go; the
	 * window then counts the packets neither acknowledged nor SACKed, so a
	 * hole waiting for its resend does not stop the channel (docs/
	 * TRANSPORT.md, "SR past a hole"). window .. min(ooo_range,
	 * TP_SPAN_MAX), the peer's receive range taken to be ours until
	 * tp_chan_peer_range() says otherwise; 0: the window (a hole holds it). */
	uint32_t span;
	uint32_t ack_coalesce;	/* TPACK every N in-order packets; 0: 8 */
	uint64_t ack_delay_ns;	/* flush a pending TPACK after this; 0: 5 us */
	uint32_t ackreq_every;	/* sender sets AckReq every N packets; 0: window/4 */
	enum tp_rto_mode rto_mode;
	uint64_t rto_static_ns;	/* 0: TP_RTO_512US */
	uint64_t rto_min_ns;	/* dynamic: floor of Base; 0: 10 us */
	uint32_t rto_n;		/* dynamic: N of Base x 2^(N x Times); 0: 1 */
	uint32_t retry_limit;	/* consecutive RTOs before the channel fails; 0: 7.
				 * An RTO while CC pacing still holds the resends
				 * of the one before counts too. */
	uint64_t retry_time_ns;	/* and no sooner than this after the first of
				 * them (a peer stalled, not gone); 0: none */
	uint32_t rnr_retry;	/* RNR/page-fault retries of one operation; 0: 7 */
	uint64_t rnr_delay_ns;	/* wait before such a retry; 0: 50 us */
	uint32_t max_ops;	/* posted operations outstanding (each kind); 0: 1024 */
	bool manual_taack;	/* ROL/ROI: Send answered by tp_recv_answer() */
	/* Per-packet LB (packets of one channel over several paths): a hole in a TPSACK is no loss by itself
	 * (it may be a packet on a slower path). Alone: RTO only. */
	bool no_fast_rtx;
	/* Time-based loss detection (RACK-like, docs/TRANSPORT.md "Loss
	 * detection under spraying"), SR only: a packet is lost once one sent
	 * after it was delivered and it is still missing a reordering window
	 * (measured, a quarter of the last 10 s' min RTT .. 2 SRTT) past that
	 * packet's RTT; a tail loss probe (2 SRTT) before any RTO. The receiver TPSACKs whatever it holds
	 * out of order, coalesced like TPACKs. tpg_prepare() sets it for
	 * per-packet LB. */
	bool rack;
	/* With rack, per-packet LB: how many entropy values (UDP source ports)
	 * the channel's packets may carry, each one ECMP path, FIFO.
	 * tp_chan_tx_entropy() names each packet's; a packet sent on a path
	 * before one delivered on it is then lost at once (no reordering
	 * window to wait out). 0: paths not known, time alone. At most 65535. */
	uint32_t entropies;
	const struct tp_cc_ops *cc;
	void *cc_ctx;
	void *user;		/* returned in events and tp_tx_info */
	uint32_t sack_after;	/* SR receiver: TPSACK once N packets are held out of
				 * order (per-packet load balancing); 0: 1 */
	uint8_t rnr_wait_code;	/* target: RSPINFO of its RNR answers (wait 2^n us) */
	/* CTP: an operation unanswered this long completes TP_ST_TIMEOUT (the
	 * link lost it: there is no retransmission); 0: TP_RTO_128MS. */
	uint64_t ta_timeout_ns;
	/* CTP and UTP: the peer entity's address (IPv4 in the first 4 bytes, as
	 * in struct ub_view); packets from another source are not this
	 * channel's. All zero: any source. */
	uint8_t peer_entity[16];
	/* CTP: the VL its packets take (0..15). With peer_entity the key of
	 * its CC instance: every CTP channel of one {peer_entity, vl} must be
	 * given the same cc_ctx (tp_chan_create says EINVAL otherwise). */
	uint8_t vl;
};

/* ---- lifecycle ------------------------------------------------------------ */

struct tp_ep *tp_ep_create(const struct tp_ep_config *cfg);	/* NULL: errno */
void tp_ep_destroy(struct tp_ep *ep);

/* SR past a hole (docs/TRANSPORT.md): cfg->span = span, at most
 * TP_SPAN_MAX, and cfg->ooo_range the power of two that holds both the span
 * and cfg->window (0: 256), the default at least, TP_OOO_RANGE_MAX at most.
 * A span that would not pass the window leaves the span off (and, for a
 * window within the default, the range alone). The sender takes the peer's
 * range to be its own: tp_chan_peer_range() when the peer says what it is. */
void tp_chan_span(struct tp_chan_config *cfg, uint32_t span);
/* The peer receives range PSNs past its next expected one (0, or an older
 * peer: TP_OOO_RANGE_DEFAULT): new data then goes at most range past una
 * (the span is min(cfg.span, range)), though never less than the window: a
 * window past the peer's range is the caller's to avoid. Before data flows. */
void tp_chan_peer_range(struct tp_chan *ch, uint32_t range);
/* Create a channel; its TPN and initial send PSN are then known locally. */
struct tp_chan *tp_chan_create(struct tp_ep *ep, const struct tp_chan_config *cfg);
/* Events already queued may still name the channel: drain them first. */
void tp_chan_destroy(struct tp_chan *ch);
uint32_t tp_chan_tpn(const struct tp_chan *ch);
uint32_t tp_chan_init_psn(const struct tp_chan *ch);
uint32_t tp_chan_rx_range(const struct tp_chan *ch);	/* cfg.ooo_range, as created */
/* Bind to the peer's channel: its TPN and its initial send PSN, once.
 * 0 or -errno (EINVAL, EISCONN). */
int tp_chan_connect(struct tp_chan *ch, uint32_t peer_tpn, uint32_t peer_init_psn);
bool tp_chan_failed(const struct tp_chan *ch);
uint64_t tp_chan_inflight_bytes(const struct tp_chan *ch);
/* Operations posted and not yet completed (a channel group's queue depth). */
uint32_t tp_chan_outstanding(const struct tp_chan *ch);
void *tp_chan_user(const struct tp_chan *ch);
/* The data packet of PSN psn that tp_ep_tx() just produced on ch leaves
 * with entropy value e (< cfg.entropies; its ECMP path); ignored otherwise. */
void tp_chan_tx_entropy(struct tp_chan *ch, uint32_t psn, uint32_t e);

/* ---- registered memory -------------------------------------------------- */

/*
 * A registered region (URMA's segment) is named on the wire by its TokenID
 * (20 bits, MAETAH) and checked against its token value (32 bits, TVETAH;
 * urma_token_t) and its access flags. TokenIDs are drawn at random (see
 * tp_ep_config.token_seed) among the 2^20 - 1 non-zero values, never reused
 * while registered: a peer cannot guess one from another. A remote access
 * with an unknown TokenID, a wrong token value, outside the region or not
 * allowed by its flags touches nothing: it is counted (ta_bad_*) and answered
 * completer error with TP_RSPINFO_* saying why.
 */
#define TP_TOKEN_ID_MAX		0xfffffu	/* TokenIDs: 1 .. 2^20 - 1 */
#define TP_MRS_MAX		(1u << 18)	/* tp_ep_config.max_mrs at most */

/* Access flags: URMA_ACCESS_* values. READ, WRITE, ATOMIC: what a peer may do
 * (each checked on its own); LOCAL_ONLY (or 0): no remote access at all. */
#define TP_ACCESS_LOCAL_ONLY	(1u << 0)
#define TP_ACCESS_READ		(1u << 1)
#define TP_ACCESS_WRITE		(1u << 2)
#define TP_ACCESS_ATOMIC	(1u << 3)
#define TP_ACCESS_REMOTE_ALL	(TP_ACCESS_READ | TP_ACCESS_WRITE | TP_ACCESS_ATOMIC)

/* What an initiator names a remote region by (an imported URMA segment). */
struct tp_rkey {
	uint32_t token_id;
	uint32_t token_value;
};

struct tp_mr_cfg {
	void *addr;		/* VA = (uintptr_t)addr */
	size_t len;		/* > 0; any size (1 GiB and more) */
	uint32_t access;	/* TP_ACCESS_* */
	uint32_t token_value;	/* urma_token_t.token */
	bool token_none;	/* URMA_TOKEN_NONE: the token value is not checked
				 * (TokenID, range and access still are) */
	uint32_t token_id;	/* 0: drawn at random; else this one (one region
				 * known to several cores by one TokenID) */
};

/* 0 with *token_id set, or -errno: EINVAL (no addr or len, unknown access
 * bits, a token_id over 20 bits), EEXIST (token_id taken), ENOSPC (max_mrs
 * regions registered), ENOMEM. */
int tp_mr_register(struct tp_ep *ep, const struct tp_mr_cfg *cfg, uint32_t *token_id);
/* Shorthand: remote read, write and atomic access and a random token value;
 * *key is what the peer needs (send it over, e.g. in a hello's app bytes). */
int tp_mr_reg(struct tp_ep *ep, void *addr, size_t len, struct tp_rkey *key);
int tp_mr_dereg(struct tp_ep *ep, uint32_t token_id);
/* Test hook: a non-resident region answers Write/Read with a page fault. */
int tp_mr_set_resident(struct tp_ep *ep, uint32_t token_id, bool resident);
/* Regions registered now. */
uint32_t tp_mr_count(const struct tp_ep *ep);

/* ---- requests (0 or -errno: EAGAIN queue full, ENOTCONN, EMSGSIZE, EIO failed) */

#define TP_MAX_SGE		16	/* segments of one request or receive buffer */
#define TP_INLINE_MAX		256	/* TP_WR_INLINE: payload bytes copied at post */
#define TP_ATOMIC_LEN		8	/* CAS, FADD: one 8-byte aligned word */

/* One segment of a gather or scatter list (urma_sge_t: addr, len). */
struct tp_sge {
	void *addr;
	uint32_t len;
};

enum tp_opcode {
	TP_OP_SEND = 0,		/* TAOpcode 0x00 */
	TP_OP_SEND_IMM,		/* 0x01 on the last packet: the imm lands in the
				 * target's TP_EV_RECV */
	TP_OP_WRITE,		/* 0x03 */
	TP_OP_WRITE_IMM,	/* 0x03, the last packet 0x04: the data lands in
				 * the region AND consumes a posted receive
				 * (nothing written into it), completed with the
				 * imm and the Write's length; no receive posted:
				 * RNR, as for a Send */
	TP_OP_READ,		/* 0x06 */
	TP_OP_CAS,		/* 0x07 Atomic_compare_swap */
	TP_OP_FADD,		/* 0x0B Atomic_fetch_add */
};

/* tp_wr.flags */
#define TP_WR_INLINE	(1u << 0)	/* copy the payload (<= TP_INLINE_MAX) at post
					 * time: the buffers may be reused at once */
#define TP_WR_FENCE	(1u << 1)	/* start only once every earlier Read and atomic
					 * of the channel was answered (UB 2.0 §7.3.2.2) */
#define TP_WR_SO	(1u << 2)	/* strong order: accepted; an RTP channel executes
					 * in posting order anyway (tp.h above) */

struct tp_wr {
	enum tp_opcode opcode;
	uint32_t flags;			/* TP_WR_* */
	uint64_t wr_id;
	/* Send, Write: the payload, gathered in order; Read: scattered into, in
	 * order; CAS, FADD: one segment of >= 8 bytes that receives the
	 * original value (native byte order). At most TP_MAX_SGE; 0 with no
	 * payload. */
	const struct tp_sge *sge;
	uint32_t num_sge;
	/* Write, Read, CAS, FADD: the remote region */
	uint64_t remote_va;		/* CAS, FADD: 8-byte aligned */
	struct tp_rkey rkey;
	uint64_t imm;			/* SEND_IMM, WRITE_IMM (urma imm_data) */
	uint64_t swap, compare;		/* CAS: if *va == compare then *va = swap */
	uint64_t add;			/* FADD: *va += add */
};

/*
 * Post any operation. 0, or -errno: EINVAL (a bad opcode or flag, an SGE
 * list longer than TP_MAX_SGE or with a segment without an address, a
 * CAS/FADD without one result segment of 8 bytes or more, TP_WR_INLINE on a
 * Read or atomic), EMSGSIZE (TP_WR_INLINE over TP_INLINE_MAX, a CTP/UTP
 * message over the MTU, an atomic on an MTU under 16), EOPNOTSUPP (memory
 * operations on UTP), EAGAIN, ENOTCONN, EIO, ENOMEM. The SGE list itself is
 * copied at post time; the memory it points to is read (Send, Write) when
 * each packet leaves, unless TP_WR_INLINE, and must stay valid until the
 * completion. A misaligned CAS/FADD is the target's to refuse
 * (TP_RSPINFO_ALIGN), as are the region checks.
 *
 * Completions (tp_ep_poll): the initiator's TP_EV_SEND_DONE, _WRITE_DONE,
 * _READ_DONE (len: bytes that landed), _ATOMIC_DONE (len 8: the original
 * value is in sge[0]), with opcode; the target's TP_EV_RECV (Send, Send and
 * Write with immediate: opcode, TP_EVF_IMM, imm, src_id). In posting order
 * per channel on each side.
 */
int tp_post(struct tp_chan *ch, const struct tp_wr *wr);
/* A receive buffer made of num_sge (<= TP_MAX_SGE) segments, filled in order. */
int tp_post_recv_sge(struct tp_chan *ch, const struct tp_sge *sge, uint32_t num_sge,
		     uint64_t wr_id);

/* Single-buffer shorthands of tp_post() / tp_post_recv_sge(). */
int tp_post_send(struct tp_chan *ch, const void *buf, size_t len, uint64_t wr_id);
int tp_post_recv(struct tp_chan *ch, void *buf, size_t cap, uint64_t wr_id);
int tp_post_write(struct tp_chan *ch, const void *buf, size_t len,
		  uint64_t remote_va, struct tp_rkey rkey, uint64_t wr_id);
int tp_post_read(struct tp_chan *ch, void *buf, size_t len,
		 uint64_t remote_va, struct tp_rkey rkey, uint64_t wr_id);
/* Take back receive buffers posted and not used yet, the last posted first:
 * up to max of their wr_ids into ids (a shared receive queue spread over
 * channels moves them to another). Returns how many. */
uint32_t tp_recv_take_back(struct tp_chan *ch, uint64_t *ids, uint32_t max);
/* manual_taack: answer a TP_EV_RECV (by its tassn) with a TP_ST_* status. */
int tp_recv_answer(struct tp_chan *ch, uint16_t tassn, int status);

/* ---- the datapath ------------------------------------------------------- */

enum tp_rx_verdict {
	TP_RX_OK = 0,		/* consumed (in order, out of order or a response) */
	TP_RX_DUP,		/* duplicate: re-acknowledged */
	TP_RX_DROP,		/* dropped, counted (see stats) */
};

struct tp_rx_meta {
	uint8_t ecn;		/* IP ECN of the packet (3 = CE) */
	bool has_cci;		/* native UB: the NTH's CCI (docs/WIRE.md §5) */
	uint16_t cci;
	uint16_t entropy;	/* UDP source port it came with (per-path state) */
	bool ctp;		/* a CTP packet: CTPH (1 byte) .. payload */
	bool has_vl;		/* native UB: the LPH's VL */
	uint8_t vl;
	uint8_t src[16];	/* CTP: the IP source (entity) address, IPv4 first */
};

/* Feed one received TP packet: TPH .. end of payload. */
enum tp_rx_verdict tp_ep_rx(struct tp_ep *ep, uint64_t now, const void *pkt, size_t len,
			    const struct tp_rx_meta *meta);

/* The metadata of a frame the packet library parsed (user/lib/frame.h):
 * IP ECN, UDP source port, and the NTH's CCI when it is native UB. */
struct ub_view;
void tp_rx_meta_from_view(const struct ub_view *v, struct tp_rx_meta *meta);

/*
 * Convenience for a datapath: parse a whole UBoE (or native UB) frame with
 * the packet library, drop it unless it is UB with a good ICRC (counted as
 * rx_not_ub / rx_bad_icrc), and feed its TP packet with the IP ECN.
 */
enum tp_rx_verdict tp_ep_rx_frame(struct tp_ep *ep, uint64_t now, const void *frame, size_t len);

struct tp_tx_info {
	struct tp_chan *chan;
	void *user;		/* the channel's cfg.user */
	uint32_t src_tpn, dst_tpn;
	uint32_t psn;
	bool data;		/* data packet (vs. response) */
	bool rtx;		/* a retransmission */
	bool has_cci;		/* the CC asks for this CCI (native UB / CAQM tag) */
	uint16_t cci;
	bool ctp;		/* a CTP packet (CTPH): native UB, UDP port UB_CTP_UDP_PORT;
				 * psn is then the channel's count of packets sent */
};

/*
 * Write the next packet to send into buf (TPH .. payload, at most
 * TP_HDR_MAX + mtu bytes). Returns its length, 0 when nothing is due now.
 * Responses come first, then retransmissions, then new data; channels take
 * turns.
 */
size_t tp_ep_tx(struct tp_ep *ep, uint64_t now, void *buf, size_t cap, struct tp_tx_info *info);

/* Run timers (RTO, delayed TPACK, RNR retry). */
void tp_ep_tick(struct tp_ep *ep, uint64_t now);
/* Earliest time tp_ep_tick() has work; UINT64_MAX when none. */
uint64_t tp_ep_next_deadline(const struct tp_ep *ep);
/* The same split in two: the earliest of the loss timers (RTO, the tail
 * loss probe) in *loss, returned the earliest of the rest (delayed TPACKs,
 * pacing, RNR, CTP, RACK's reordering timer, which recovers a bulk
 * sender's losses), whose lateness changes what is sent when. A loss timer
 * that fires later than due only resends later, and only when nothing came
 * meanwhile: a loop may wake for it with more slack. */
uint64_t tp_ep_deadlines(const struct tp_ep *ep, uint64_t *loss);

/* ---- completions --------------------------------------------------------- */

enum tp_status {
	TP_ST_OK = 0,
	TP_ST_RNR,		/* receiver not ready, retries exhausted */
	TP_ST_PAGE_FAULT,	/* target region not resident, retries exhausted */
	TP_ST_COMPLETER_ERR,	/* bad token/range/access, message too big (rspinfo) */
	TP_ST_RETRY_EXCEEDED,	/* transport retry limit: channel failed */
	TP_ST_FLUSHED,		/* channel failed or destroyed before completion */
	TP_ST_TIMEOUT,		/* CTP: no answer within ta_timeout_ns */
};

enum tp_event_type {
	TP_EV_SEND_DONE = 1,	/* initiator: a Send completed (status) */
	TP_EV_WRITE_DONE,
	TP_EV_READ_DONE,
	TP_EV_RECV,		/* target: a Send landed in a posted buffer */
	TP_EV_RECV_FLUSHED,	/* target: a posted buffer returned unused */
	TP_EV_CHAN_ERROR,	/* the channel failed (status says why) */
	TP_EV_ATOMIC_DONE,	/* initiator: a CAS or FADD completed (opcode) */
};

#define TP_EVF_IMM	(1u << 0)	/* tp_event.imm is valid */
#define TP_EVF_RETRY	(1u << 1)	/* TP_EV_RECV: the TAH said Retry (manual_taack's own RNR hold) */

struct tp_event {
	enum tp_event_type type;
	enum tp_status status;
	struct tp_chan *chan;
	void *user;		/* the channel's cfg.user */
	uint64_t wr_id;
	size_t len;		/* bytes received (TP_EV_RECV; a Send longer than
				 * the buffer, TP_RSPINFO_TOO_LONG: the buffer's
				 * length; Write with immediate: the Write's
				 * length, nothing in the buffer) or transferred
				 * (CAS, FADD: 8) */
	uint16_t tassn;
	uint8_t rspinfo;	/* the answer's RSPINFO: TP_RSPINFO_* for completer errors */
	uint8_t opcode;		/* enum tp_opcode of the operation (TP_EV_RECV: SEND,
				 * SEND_IMM or WRITE_IMM) */
	uint32_t flags;		/* TP_EVF_* */
	uint64_t imm;		/* TP_EVF_IMM: the immediate data */
	uint32_t src_id;	/* TP_EV_RECV: the sending channel (jetty): the peer's
				 * TPN (RTP) or the TAH's IniRCID (UTP, CTP) */
};

/*
 * RSPINFO [chosen]: with a completer error, why; with RNR, how long the
 * target asks the initiator to wait, 2^n us (0: the initiator's rnr_delay_ns).
 */
#define TP_RSPINFO_BAD_TOKEN	1	/* no region with that TokenID */
#define TP_RSPINFO_RANGE	2	/* outside the registered region */
#define TP_RSPINFO_TOO_LONG	3	/* longer than the posted buffer / MAETAH Length */
#define TP_RSPINFO_PROTOCOL	4	/* transaction headers out of sequence */
#define TP_RSPINFO_TOKEN_VALUE	5	/* wrong token value (or none: TV_EN 0) */
#define TP_RSPINFO_ACCESS	6	/* the region's access flags forbid it */
#define TP_RSPINFO_ALIGN	7	/* atomic: VA not 8-byte aligned */
#define TP_RSPINFO_UNSUPPORTED	8	/* atomic: MAETAH Length not 8, operands missing */

/* Pop one event; false when none. */
bool tp_ep_poll(struct tp_ep *ep, struct tp_event *ev);

/* ---- statistics ------------------------------------------------------------ */

#define TP_STATS(X)							\
	X(tx_data,		"data packets sent (incl. retransmissions)")	\
	X(tx_bytes,		"payload bytes sent")				\
	X(tx_past_window,	"SR: new data sent a window or more past una (the span in use)") \
	X(tx_ack,		"TPACKs sent")					\
	X(tx_nak,		"TPNAKs sent")					\
	X(tx_sack,		"TPSACKs sent")					\
	X(tx_taack,		"TAACKs sent (own packet or in a TPACK)")	\
	X(rtx_rto,		"retransmissions after an RTO")			\
	X(rtx_nak,		"retransmissions after a TPNAK (GBN fast)")	\
	X(rtx_sack,		"retransmissions from a TPSACK bitmap")		\
	X(rtx_mark,		"retransmissions of a lost retransmission (MarkPSN)") \
	X(rtx_answer,		"ROL last packets resent: a later answer came first") \
	X(rto_fired,		"retransmission timeouts")			\
	X(rto_spurious,		"RTOs the next ack showed spurious (F-RTO: no go-back)") \
	X(rto_held,		"RTOs while pacing still held the last RTO's resends (not counted toward the retry limit)") \
	X(rto_undone,		"RTOs of delay or reordering alone: the oldest packet's resend D-SACKed, or its ack before the resend left or (without RACK) within a min RTT of it") \
	X(rtx_rack,		"retransmissions of packets RACK found lost (a later one delivered, this one past the reordering window)") \
	X(rtx_path,		"retransmissions of packets found lost on their path (RACK: one sent later on the same entropy delivered)") \
	X(rtx_tlp,		"tail loss probes sent (RACK: the newest packet again, 2 SRTT after the last progress)") \
	X(path_rule_off,	"RACK: times the per-path rule was switched off (its resends D-SACKed, or packets later than a later one on their port: the ports reorder; the time rule alone until 8 epochs show none)") \
	X(path_dsack,		"RACK: D-SACKs of packets resent once, by the per-path rule (each a proof that their port reorders)") \
	X(rtx_spurious,		"RACK: duplicates the peer reported (D-SACK: a resend whose original was only late)") \
	X(reo_seen,		"packets delivered after one sent later (RACK: reordering seen)") \
	X(ta_retry_rnr,		"operations retried after RNR")			\
	X(ta_retry_pf,		"operations retried after a page fault")	\
	X(rx_inorder,		"data packets received in order")		\
	X(rx_ooo,		"data packets received out of order, in range")	\
	X(rx_dup,		"duplicate data packets (re-acknowledged)")	\
	X(rx_invalid,		"data packets beyond the receive range")	\
	X(rx_gbn_drop,		"out-of-order packets dropped by Go-Back-N")	\
	X(rx_malformed,		"packets too short or with bad headers")	\
	X(rx_not_ub,		"frames that are not UB (tp_ep_rx_frame)")	\
	X(rx_bad_icrc,		"UB frames with a bad ICRC (tp_ep_rx_frame)")	\
	X(rx_no_room,		"data packets dropped for want of memory or queue room") \
	X(rx_unknown_tpn,	"packets for no channel")			\
	X(rx_bad_opcode,	"packets with an opcode this core does not take") \
	X(rx_ack,		"TPACKs received")				\
	X(rx_nak,		"TPNAKs received")				\
	X(rx_sack,		"TPSACKs received")				\
	X(rx_stale_ack,		"acknowledgements outside the send window")	\
	X(rx_ecn_ce,		"data packets with ECN CE")			\
	X(rx_cnp,		"CNPs received")				\
	X(ta_rnr,		"Sends answered RNR")				\
	X(ta_page_fault,	"Writes/Reads answered page fault")		\
	X(ta_completer_err,	"operations answered completer error")		\
	X(ta_proto_err,		"transaction headers out of sequence")		\
	X(ta_stale_answer,	"ROL: answers to an earlier attempt of an op sent again (a duplicate Last's), ignored") \
	X(utp_drop,		"UTP messages dropped (no receive buffer, or longer than it)") \
	X(rx_ctp,		"CTP packets received")				\
	X(ta_timeout,		"CTP operations failed by the transaction timeout") \
	X(msgs_delivered,	"messages delivered to the transaction layer")	\
	X(bytes_delivered,	"payload bytes delivered in order")		\
	X(ta_bad_token_id,	"remote accesses refused: no region with that TokenID") \
	X(ta_bad_token_value,	"remote accesses refused: wrong or missing token value") \
	X(ta_bad_range,		"remote accesses refused: outside the region")	\
	X(ta_bad_access,	"remote accesses refused: not allowed by the region's access flags") \
	X(ta_bad_align,		"atomics refused: misaligned or not 8 bytes")	\
	X(ta_atomic,		"atomics executed (CAS, FADD)")			\
	X(ta_imm,		"completions with immediate data delivered")

#define TP_STAT_FIELD(name, text) uint64_t name;
struct tp_stats {
	TP_STATS(TP_STAT_FIELD)
	uint64_t srtt_ns;	/* smoothed RTT (not a counter) */
	uint64_t rto_ns;	/* current RTO (not a counter) */
	uint64_t high_rtx_psn;	/* SR: HighRtxPSN, the highest PSN resent this round (not a counter) */
	uint64_t mark_psn;	/* SR: MarkPSN, the next new PSN at the last switch to retransmission */
	uint64_t min_rtt_ns;	/* least RTT ever (not a counter): "sooner is an original's answer" */
	uint64_t min_rtt_win_ns; /* least RTT of the last 10 s (not a counter): scales reo_wnd's floor, the path allowance */
	uint64_t reo_wnd_ns;	/* RACK: the reordering window now (not a counter) */
};
#undef TP_STAT_FIELD

void tp_chan_stats(const struct tp_chan *ch, struct tp_stats *st);
/* Sum over the endpoint's channels (srtt/rto: of the last channel). */
void tp_ep_stats(const struct tp_ep *ep, struct tp_stats *st);
/* Name and description of counter i (0..tp_stats_count()-1), and its value. */
size_t tp_stats_count(void);
const char *tp_stats_name(size_t i);
const char *tp_stats_desc(size_t i);
uint64_t tp_stats_get(const struct tp_stats *st, size_t i);

/* ---- wire helpers ------------------------------------------------------- */

struct ub_pkt_spec;
/*
 * Decode a TP packet made by tp_ep_tx() into the UB part of a packet spec
 * (tph, saetph, tah, maetah, payload pointing into pkt), for ub_build_uboe()
 * or ub_build_native(). Returns 0, or -EINVAL when pkt is malformed.
 */
int tp_pkt_to_spec(const void *pkt, size_t len, struct ub_pkt_spec *spec);

/*
 * In-band channel setup over UTP ([chosen]; UB 2.0 §6 names UTP for this):
 * a UTP packet (UTPH: no TPN), TAH opcode Message (IniRCID 0: for no
 * channel), payload "UBH2" | TPN(32) | initial PSN(32) | MTU(16) | mode(8) |
 * flags(8: 1 = reply) | DstTPN(32), all big-endian, then optionally the
 * application's bytes (tp_hello_build_app). The receiver of a hello connects
 * its own channel with (tpn, init_psn) and answers with a reply naming the
 * hello's TPN as DstTPN. Hellos are not fed to tp_ep_rx(): check with
 * tp_hello_parse() first.
 */
struct tp_hello {
	uint32_t src_tpn, dst_tpn;	/* the sender's TPN, and the DstTPN (0 in a first hello) */
	uint32_t tpn, init_psn;		/* the sender's channel */
	uint16_t mtu;
	uint8_t mode;			/* enum tp_mode */
	bool reply;
	const uint8_t *app;		/* the application's bytes after the body (or NULL) */
	size_t app_len;
};

#define TP_HELLO_BODY		20	/* "UBH2" .. DstTPN */
#define TP_HELLO_LEN		(16 + 8 + TP_HELLO_BODY)
#define TP_HELLO_MAGIC		"UBH2"
#define TP_HELLO_MAGIC_OFF	(16 + 8)	/* where the magic is in the packet */
#define TP_HELLO_APP_MAX	512	/* application bytes a hello may carry */

/* Bytes written (TP_HELLO_LEN), 0 if cap is too small. */
size_t tp_hello_build(const struct tp_chan *ch, uint32_t peer_tpn, bool reply, void *buf,
		      size_t cap);
/* The same with app_len (<= TP_HELLO_APP_MAX) application bytes after the
 * body (what the two sides agree besides the channel, e.g. ubperf's run);
 * TP_HELLO_LEN + app_len, or 0. */
size_t tp_hello_build_app(const struct tp_chan *ch, uint32_t peer_tpn, bool reply,
			  const void *app, size_t app_len, void *buf, size_t cap);
/* 0 when pkt (TPH .. payload) is a hello, -EINVAL otherwise. */
int tp_hello_parse(const void *pkt, size_t len, struct tp_hello *h);

const char *tp_mode_name(enum tp_mode m);	/* "rtp-sr", "rtp-gbn", ... */
int tp_mode_parse(const char *s, enum tp_mode *m);	/* 0 or -EINVAL */
const char *tp_status_name(enum tp_status s);

/* 24-bit serial arithmetic. */
static inline uint32_t tp_psn_add(uint32_t a, uint32_t d) { return (a + d) & TP_PSN_MASK; }
/* Signed distance b - a in [-2^23, 2^23). */
static inline int32_t tp_psn_diff(uint32_t b, uint32_t a)
{
	return (int32_t)(((b - a) & TP_PSN_MASK) << 8) >> 8;
}

#endif
