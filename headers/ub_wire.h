/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * UB and UBoE wire formats (docs/WIRE.md §1-§5).
 *
 * Every [chosen] layout constant lives here and nowhere else, so that correcting
 * one is a one-line change. Shared by BPF and user code: no libc.
 * Structs are byte arrays plus accessors, because most UB fields are not byte
 * aligned and 24-bit fields have no C type.
 */
#ifndef UB_WIRE_H
#define UB_WIRE_H

#include <linux/types.h>
#include "ub_endian.h"

/* ---- §1 UBoE encapsulation --------------------------------------------- */
#define UBOE_UDP_PORT		4792
#define UBOE_ICRC_LEN		4
#define UBOE_DEFAULT_TTL	64

/* IP ECN codepoints (RFC 3168) */
#define ECN_NOT_ECT	0
#define ECN_ECT1	1
#define ECN_ECT0	2
#define ECN_CE		3

/* ---- §5 native UB frame on an emulated UB port ------------------------- */
#define UB_ETH_P_NATIVE		0x88B5	/* [chosen] IEEE local experimental, configurable */

/* LPH, 4 bytes [chosen] */
struct ub_lph {
	__u8 b[4];
} __attribute__((packed));

#define UB_LPH_CONFIG_IPV4	3
#define UB_LPH_CONFIG_IPV6	4

static inline __u8 ub_lph_config(const struct ub_lph *h) { return h->b[1] & 0x0f; }
static inline __u8 ub_lph_vl(const struct ub_lph *h)
{
	return (__u8)(((h->b[0] & 0x01) << 3) | (h->b[1] >> 5));
}
/* RT (draft §5.1) = (RoutePolicy << 1) | LBMode; LBMode is byte 2 bit 7. */
static inline __u8 ub_lph_rt(const struct ub_lph *h)
{
	return (__u8)((((h->b[2] >> 6) & 1) << 1) | (h->b[2] >> 7));
}

/* Link length fields are written 0; Crd, ACK and CrdTargetVL 0. The four
 * bytes as one word, b[0] in the top byte (the XDP fast path stores it whole).
 * Byte 2 is RT with its two bits swapped (LBMode bit 7, RoutePolicy bit 6),
 * taken from a 4-entry table in a constant: written as shifts, the compiler
 * makes a whole 8-bit bit reversal of it (some 20 BPF instructions a packet). */
static inline __u32 ub_lph_word(__u8 config, __u8 vl, __u8 rt)
{
	return (__u32)((vl >> 3) & 1) << 24 |
	       (__u32)(((vl & 7) << 5) | (config & 0x0f)) << 16 |
	       ((0xc0408000u >> ((rt & 3) * 8)) & 0xff) << 8;
}

static inline void ub_lph_init(struct ub_lph *h, __u8 config, __u8 vl, __u8 rt)
{
	__u32 w = ub_lph_word(config, vl, rt);

	h->b[0] = (__u8)(w >> 24);
	h->b[1] = (__u8)(w >> 16);
	h->b[2] = (__u8)(w >> 8);
	h->b[3] = (__u8)w;
}

/*
 * LBF, the load-balancing field [chosen] (docs/TRANSPORT.md "Wire choices"):
 * LPH byte 3, one of the link length bytes that other frames carry as 0 and
 * every receiver ignores (docs/WIRE.md §5.2). An entity of several UB ports
 * (CTP) sends each packet out of member
 * LBF mod N; a per-flow LBF keeps a flow on one member, a per-packet one
 * sprays. The endpoint writes it on CTP frames only (RTP frames keep 0).
 */
#define UB_LPH_LBF_BYTE		3
static inline __u8 ub_lph_lbf(const struct ub_lph *h) { return h->b[UB_LPH_LBF_BYTE]; }
static inline void ub_lph_set_lbf(struct ub_lph *h, __u8 lbf) { h->b[UB_LPH_LBF_BYTE] = lbf; }

#define UB_RT_FLOW_ALL		0	/* per-flow, all paths */
#define UB_RT_PACKET_ALL	1
#define UB_RT_FLOW_SHORTEST	2	/* draft §5.1 default for Eth/IP -> UB */
#define UB_RT_PACKET_SHORTEST	3

/* NTH, IP-compliant network header, 6 bytes (openEuler struct ublhdr) */
struct ub_nth {
	__be16 cci;
	__u8 perm;	/* rsv(7) . Permission(1) */
	__u8 pid[3];	/* Partition ID (24) */
} __attribute__((packed));

#define UB_PID_INVALID		0
#define UB_PID_DEFAULT		1
#define UB_PID_MASK		0xffffffu
#define UB_PERM_HIGH		0
#define UB_PERM_LOW		1

static inline __u32 ub_nth_pid(const struct ub_nth *h) { return ub_get24(h->pid); }
static inline __u8 ub_nth_perm(const struct ub_nth *h) { return h->perm & 1; }

/* CCI(16): bit 15 rsv, bits 14-12 Mode, bits 11-0 mode specific */
#define UB_CCI_MODE_SHIFT	12
#define UB_CCI_MODE_MASK	0x7
#define UB_CCI_MODE_CAQM	0x0
#define UB_CCI_MODE_FECN_RTT	0x2
#define UB_CCI_MODE_FECN	0x4
#define UB_CCI_FECN_LOC		(1u << 11)	/* [chosen] 1 = congestion at the last hop */
#define UB_CCI_FECN_MASK	0x3

/* FECN codepoints (draft Table 5) */
#define UB_FECN_UNMARKABLE	0
#define UB_FECN_LIGHT_CE	1
#define UB_FECN_MARKABLE	2
#define UB_FECN_SEVERE_CE	3

/* CAQM mode [chosen] (docs/WIRE.md §5): LoC shares bit 11 with FECN mode */
#define UB_CCI_CAQM_LOC		(1u << 11)
#define UB_CCI_CAQM_EN		(1u << 10)	/* on data: a window request */
#define UB_CCI_CAQM_C		(1u << 9)	/* congested */
#define UB_CCI_CAQM_I		(1u << 8)	/* Hint valid */
#define UB_CCI_CAQM_HINT_MASK	0xff		/* in units of a configured hint size */

/*
 * The Ethernet CAQM tag [chosen] (docs/WIRE.md §5, docs/CC.md): openEuler's kernel
 * tag (struct caqm_hdr: h_caqm_info, h_caqm_encapsulated_proto), 4 bytes
 * between the Ethernet (or 802.1Q) header and the IP header, carrying a CAQM
 * CCI across the IP segment, which has no NTH. Info(16): bits 15-13
 * cc_type (000 CAQM, = CCI Mode), bit 12 is_last_hop (= CCI LoC), bit 11
 * padding (0), bit 10 caqm_en, bit 9 C, bit 8 I, bits 7-0 Hint: bits 10-0 are
 * the CCI's. openEuler leaves the EtherType to a kernel config option; ours is
 * IEEE's second local experimental one, configurable where the tag is used.
 */
#define UB_ETH_P_CAQM		0x88B6	/* [chosen] IEEE local experimental 2, configurable */
#define UB_CAQM_TAG_LEN		4
#define UB_CAQM_TAG_TYPE_SHIFT	13
#define UB_CAQM_TAG_LAST_HOP	(1u << 12)
#define UB_CAQM_TAG_SAME_MASK	0x07ff	/* EN, C, I, Hint: where tag and CCI agree */

struct ub_caqm_tag {
	__be16 info;
	__be16 proto;		/* the encapsulated EtherType */
} __attribute__((packed));

static inline __u8 ub_cci_mode(__u16 cci) { return (cci >> UB_CCI_MODE_SHIFT) & UB_CCI_MODE_MASK; }
static inline __u8 ub_cci_fecn(__u16 cci) { return cci & UB_CCI_FECN_MASK; }
static inline __u16 ub_cci_make_fecn(__u8 fecn, int loc)
{
	return (__u16)((UB_CCI_MODE_FECN << UB_CCI_MODE_SHIFT) |
		       (loc ? UB_CCI_FECN_LOC : 0) | (fecn & UB_CCI_FECN_MASK));
}

/* CCI (any mode) <-> tag info: Mode <-> cc_type, LoC <-> is_last_hop, the rest as is. */
static inline __u16 ub_cci_to_caqm_tag(__u16 cci)
{
	return (__u16)((__u16)ub_cci_mode(cci) << UB_CAQM_TAG_TYPE_SHIFT |
		       ((cci & UB_CCI_CAQM_LOC) ? UB_CAQM_TAG_LAST_HOP : 0) |
		       (cci & UB_CAQM_TAG_SAME_MASK));
}

static inline __u16 ub_caqm_tag_to_cci(__u16 info)
{
	return (__u16)((__u16)(info >> UB_CAQM_TAG_TYPE_SHIFT) << UB_CCI_MODE_SHIFT |
		       ((info & UB_CAQM_TAG_LAST_HOP) ? UB_CCI_CAQM_LOC : 0) |
		       (info & UB_CAQM_TAG_SAME_MASK));
}

static inline void ub_nth_init(struct ub_nth *h, __u16 cci, __u8 perm, __u32 pid)
{
	h->cci = ub_htons(cci);
	h->perm = perm & 1;
	ub_put24(h->pid, pid);
}

#define UB_NATIVE_HDR_LEN	(sizeof(struct ub_lph) + sizeof(struct ub_nth))

/* ---- §3 transport header: RTPH / UTPH, 16 bytes ------------------------ */
struct ub_tph {
	__u8 op;		/* Last(1) . TPOpcode(7) */
	__u8 ver_nlp;		/* TPVer(2) . Pad(2) . NLP(4) */
	__u8 src_tpn[3];
	__u8 dst_tpn[3];
	__u8 flags;		/* AckReq(1) . ErrFlag(1) . rsv(6) */
	__u8 psn[3];
	__u8 rsp;		/* RSPST(3) . RSPINFO(5) */
	__u8 tpmsn[3];
} __attribute__((packed));

#define UB_TP_UTP_DATA		0x0	/* UTP data: a UTPH (below), not an RTPH */
#define UB_TP_RTP_DATA		0x1
#define UB_TP_ACK		0x2	/* also TPNAK with RSPST 011 */
#define UB_TP_ACK_CE		0x3	/* TPACK + CETPH */
#define UB_TP_SACK		0x5	/* TPSACK + SAETPH */
#define UB_TP_SACK_CE		0x6	/* TPSACK + CETPH + SAETPH */
#define UB_TP_CNP		0x8	/* CNP + CNPETPH */

/* RSPST [chosen] */
#define UB_RSPST_ACK		0
#define UB_RSPST_RNR		1
#define UB_RSPST_PAGE_FAULT	2
#define UB_RSPST_NAK		3
#define UB_RSPST_COMPLETER_ERR	4

/*
 * UTPH [chosen] (docs/TRANSPORT.md "UTP"): 16 bytes, UB 2.0 §6: mostly
 * reserved, no PSN, no TPN. Byte 0 Last(1) . TPOpcode(7) (0) and byte 1
 * TPVer(2) . Pad(2) . NLP(4), where the RTPH has them; bytes 2-15 reserved,
 * sent 0 and ignored on receipt. A UTP message is one packet (Last 1; there
 * is no PSN to reassemble by); its receiver is found by the transaction
 * layer: the TAH's IniRCID, the sender's jetty, and the source entity.
 */
#define UB_UTPH_RSV_OFF		2	/* first reserved byte */

#define UB_NLP_TAH		0
#define UB_NLP_NONE		1	/* [chosen] nothing follows the TP headers (tp.h TP_NLP_NONE) */

/* Opcodes that may appear in UBoE: RTP and UTP only (CTP, bypass, reserved are invalid). */
#define UB_TP_OPCODES_VALID	(1u << UB_TP_UTP_DATA | 1u << UB_TP_RTP_DATA | 1u << UB_TP_ACK | \
				 1u << UB_TP_ACK_CE | 1u << UB_TP_SACK | 1u << UB_TP_SACK_CE | \
				 1u << UB_TP_CNP)
static inline int ub_tp_opcode_valid(__u8 op)
{
	/* One test of a bit mask (the XDP fast path runs this on every packet). */
	return op <= UB_TP_CNP && ((UB_TP_OPCODES_VALID >> op) & 1);
}

static inline __u8 ub_tph_opcode(const struct ub_tph *h) { return h->op & 0x7f; }
static inline int ub_tph_last(const struct ub_tph *h) { return h->op >> 7; }
static inline __u8 ub_tph_ver(const struct ub_tph *h) { return h->ver_nlp >> 6; }
static inline __u8 ub_tph_pad(const struct ub_tph *h) { return (h->ver_nlp >> 4) & 3; }
static inline __u8 ub_tph_nlp(const struct ub_tph *h) { return h->ver_nlp & 0x0f; }
static inline int ub_tph_ackreq(const struct ub_tph *h) { return h->flags >> 7; }
static inline int ub_tph_err(const struct ub_tph *h) { return (h->flags >> 6) & 1; }
static inline __u8 ub_tph_rspst(const struct ub_tph *h) { return h->rsp >> 5; }
static inline __u8 ub_tph_rspinfo(const struct ub_tph *h) { return h->rsp & 0x1f; }
static inline int ub_tph_is_response(const struct ub_tph *h)
{
	__u8 op = ub_tph_opcode(h);

	return ub_tp_opcode_valid(op) && op >= UB_TP_ACK;
}

/*
 * CTP on a native UB port [chosen] (docs/TRANSPORT.md "Wire choices"). UBoE
 * never carries CTP (docs/WIRE.md §1), so UDP 4792 keeps meaning RTPH/UTPH; a CTP
 * packet behind an NTH goes to its own UDP destination port, and the 1-byte
 * CTPH follows the UDP header:
 *     Eth(0x88B5) | LPH | NTH | IP | UDP(dport 4794) | CTPH(1) | TAH | [MAETAH] | payload | ICRC
 * CTPH = TPOpcode(2) . Pad(2) . NLP(4). TPOpcode 0: a transaction packet (a
 * whole operation or its answer, TAH follows: NLP 0); 1: a CNP, NLP
 * UB_NLP_NONE, the CNPETPH follows and nothing else (congestion control per
 * {Dest Entity, VL}: the CNP names the VL in the CNPETPH, the entity is its
 * IP source); 2..3 reserved. Pad is written 0 and ignored. No PSN, no TPN:
 * a transaction packet's context is found by the source entity (IP source
 * address) and the TAH's IniRCID (the initiator's jetty).
 */
#define UB_CTP_UDP_PORT		4794
#define UB_CTPH_LEN		1
#define UB_CTPH_OPCODE_SHIFT	6
#define UB_CTPH_NLP_MASK	0x0f
#define UB_CTP_OP_TA		0	/* transaction packet */
#define UB_CTP_OP_CNP		1	/* CNP: CTPH | CNPETPH */

static inline __u8 ub_ctph_make(__u8 opcode, __u8 nlp)
{
	return (__u8)(((opcode & 3) << UB_CTPH_OPCODE_SHIFT) | (nlp & UB_CTPH_NLP_MASK));
}
static inline __u8 ub_ctph_opcode(__u8 b) { return b >> UB_CTPH_OPCODE_SHIFT; }
static inline __u8 ub_ctph_nlp(__u8 b) { return b & UB_CTPH_NLP_MASK; }

/* ---- §3 extended transport headers ------------------------------------- */
struct ub_cetph {
	__be32 ack_seq;
	__u8 alg[4];	/* CAQM: rsv(6).Loc(1).I(1) | C(8) | Hint(16) */
} __attribute__((packed));

struct ub_saetph {
	__u8 size;		/* Dup(1) [chosen] . rsv(4) . BitmapSize(3) */
	__u8 max_rcv_psn[3];
	/* bitmap follows: 64 << BitmapSize bits */
} __attribute__((packed));

#define UB_SAETPH_MAX_SIZE_CODE	4	/* 1024 bits */
#define UB_SAETPH_DUP		0x80	/* [chosen] a duplicate arrived (D-SACK) */
static inline __u32 ub_saetph_bitmap_bits(__u8 code) { return 64u << code; }

struct ub_cnpetph {
	__u8 b0;		/* ECN(2) . Loc(1) . rsv(5) */
	__u8 b1;		/* rsv(4) . VL(4) [chosen]: CTP, the VL of the marked
				 * data (its CC context is {Dest Entity, VL}); RTP: 0 */
	__u8 rsv[14];
} __attribute__((packed));

#define UB_CNPETPH_VL_MASK	0x0f

#define UB_CNP_ECN_MINOR	0x1
#define UB_CNP_ECN_SEVERE	0x3

/* ---- §4 transaction headers -------------------------------------------- */
struct ub_tah {
	__u8 opcode;
	__u8 b1;		/* TAVer(2)=0 . EE(2) . TV_EN(1) . Poison(1) . rsv(1) . UD_FLG(1) */
	__be16 ini_tassn;
	__u8 b4;		/* NoTAACK(1) . Order(3) . MT_EN(1) . FCE(1) . Retry(1) . Alloc(1) */
	__u8 b5;		/* rsv(1) . Excl(1) . IniRCType(2) . IniRCID[19:16] */
	__be16 ini_rcid_lo;
} __attribute__((packed));

#define UB_TAH_TV_EN		0x08	/* b1: a TVETAH follows (requests only) */

/* TAOpcodes (UB 2.0 §7.2.1, Table 7-1; docs/WIRE.md §4.1). */
#define UB_TA_SEND		0x00
#define UB_TA_SEND_IMM		0x01
#define UB_TA_WRITE		0x03
#define UB_TA_WRITE_IMM		0x04
#define UB_TA_READ		0x06
#define UB_TA_ATOMIC_CAS	0x07	/* Atomic_compare_swap */
#define UB_TA_ATOMIC_SWAP	0x08	/* 0x08-0x0F: the other atomics (not sent) */
#define UB_TA_ATOMIC_FADD	0x0B	/* Atomic_fetch_add */
#define UB_TA_ATOMIC_XOR	0x0F	/* the last atomic opcode */
#define UB_TA_MESSAGE		0x10
#define UB_TA_TAACK		0x11
#define UB_TA_READ_RESP		0x12
#define UB_TA_ATOMIC_RESP	0x13

static inline int ub_ta_is_atomic(__u8 op)
{
	return op >= UB_TA_ATOMIC_CAS && op <= UB_TA_ATOMIC_XOR;
}

/* MAETAH after the TAH: memory transactions (Table 7-2). */
static inline int ub_ta_has_maetah(__u8 op)
{
	return op == UB_TA_WRITE || op == UB_TA_WRITE_IMM || op == UB_TA_READ ||
	       ub_ta_is_atomic(op);
}

/* IMMETAH after the TAH [and MAETAH]: Send and Write with immediate. */
static inline int ub_ta_has_immetah(__u8 op)
{
	return op == UB_TA_SEND_IMM || op == UB_TA_WRITE_IMM;
}

/* An answer (ATAH: byte 4 is RSPST . RSPINFO, byte 1 bit 3 is SV, no TV_EN). */
static inline int ub_ta_is_answer(__u8 op)
{
	return op >= UB_TA_TAACK && op <= UB_TA_ATOMIC_RESP;
}

/* A TVETAH follows the TAH's other extended headers (TV_EN, requests only). */
static inline int ub_tah_has_tvetah(const struct ub_tah *h)
{
	return !ub_ta_is_answer(h->opcode) && (h->b1 & UB_TAH_TV_EN);
}

static inline __u32 ub_tah_rcid(const struct ub_tah *h)
{
	return ((__u32)(h->b5 & 0x0f) << 16) | ub_ntohs(h->ini_rcid_lo);
}

struct ub_maetah {
	__be64 va;
	__be32 token;		/* rsv(4) . TokenID(20) . rsv(8) */
	__be32 length;
} __attribute__((packed));

static inline __u32 ub_maetah_token_id(const struct ub_maetah *h)
{
	return (ub_ntohl(h->token) >> 8) & 0xfffff;
}

/* IMMETAH, 16 bytes (UB 2.0 §7.2.8): the immediate data (8 bytes, to the
 * target's completion); Immediate_TokenValue and Msg_Length are a Write with
 * immediate's (its total length), reserved in a Send with immediate. */
struct ub_immetah {
	__be32 imm_hi;
	__be32 imm_lo;
	__be32 token_value;
	__be32 msg_len;
} __attribute__((packed));

/* TVETAH, 4 bytes (UB 2.0 §7.2.5): the token value a memory access is
 * checked with (TAH TV_EN). */
struct ub_tvetah {
	__be32 token_value;
} __attribute__((packed));

/* Atomic operands [chosen byte order: big-endian, docs/WIRE.md §4.5]: the
 * request's payload is operand 1 | operand 2 (CAS: swap | compare; FADD:
 * add | 0), the Atomic_response's the original value. */
#define UB_ATOMIC_LEN		8

_Static_assert(sizeof(struct ub_lph) == 4, "LPH is 4 bytes");
_Static_assert(sizeof(struct ub_nth) == 6, "NTH is 6 bytes");
_Static_assert(sizeof(struct ub_caqm_tag) == UB_CAQM_TAG_LEN, "CAQM tag is 4 bytes");
_Static_assert(sizeof(struct ub_tph) == 16, "RTPH/UTPH is 16 bytes");
_Static_assert(sizeof(struct ub_cetph) == 8, "CETPH is 8 bytes");
_Static_assert(sizeof(struct ub_saetph) == 4, "SAETPH fixed part is 4 bytes");
_Static_assert(sizeof(struct ub_cnpetph) == 16, "CNPETPH is 16 bytes");
_Static_assert(sizeof(struct ub_tah) == 8, "TAH is 8 bytes");
_Static_assert(sizeof(struct ub_maetah) == 16, "MAETAH is 16 bytes");
_Static_assert(sizeof(struct ub_immetah) == 16, "IMMETAH is 16 bytes");
_Static_assert(sizeof(struct ub_tvetah) == 4, "TVETAH is 4 bytes");

#endif
