/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * UB transport and transaction headers as host-order structs, with encoders
 * and decoders to and from the wire structs of headers/ub_wire.h
 * (docs/WIRE.md §3-§4). Encoders mask every field to its width and write reserved
 * bits 0; decoders ignore reserved bits. So decode(encode(x)) == x for every
 * in-range x, which the unit tests rely on.
 */
#ifndef UBXDP_UBHDR_H
#define UBXDP_UBHDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ub_wire.h"

/* RTPH / UTPH */
struct ub_tph_fields {
	uint8_t opcode;		/* TPOpcode, 7 bits */
	bool last;
	uint8_t ver;		/* 2 bits */
	uint8_t pad;		/* 2 bits */
	uint8_t nlp;		/* 4 bits; UB_NLP_TAH = a TAH follows */
	uint32_t src_tpn;	/* 24 bits */
	uint32_t dst_tpn;
	bool ackreq;
	bool err;
	uint32_t psn;		/* 24 bits */
	uint8_t rspst;		/* 3 bits */
	uint8_t rspinfo;	/* 5 bits */
	uint32_t tpmsn;		/* 24 bits */
};

void ub_tph_encode(struct ub_tph *h, const struct ub_tph_fields *f);
void ub_tph_decode(const struct ub_tph *h, struct ub_tph_fields *f);

/* TPNAK is TPACK with RSPST 011, not an opcode of its own. */
static inline bool ub_tph_fields_is_nak(const struct ub_tph_fields *f)
{
	return f->opcode == UB_TP_ACK && f->rspst == UB_RSPST_NAK;
}

/* Which extended TP headers an opcode carries (docs/WIRE.md §3). */
static inline bool ub_tp_has_cetph(uint8_t op) { return op == UB_TP_ACK_CE || op == UB_TP_SACK_CE; }
static inline bool ub_tp_has_saetph(uint8_t op) { return op == UB_TP_SACK || op == UB_TP_SACK_CE; }
static inline bool ub_tp_has_cnpetph(uint8_t op) { return op == UB_TP_CNP; }

/* CETPH, with the CAQM reading of the algorithm bytes */
struct ub_cetph_fields {
	uint32_t ack_seq;
	bool loc;
	bool i;
	uint8_t c;
	uint16_t hint;
};

void ub_cetph_encode(struct ub_cetph *h, const struct ub_cetph_fields *f);
void ub_cetph_decode(const struct ub_cetph *h, struct ub_cetph_fields *f);

/* SAETPH: fixed part plus bitmap (up to 1024 bits) */
#define UB_SACK_BITMAP_MAX	(1024 / 8)

struct ub_saetph_fields {
	uint8_t size_code;	/* 0..UB_SAETPH_MAX_SIZE_CODE */
	bool dup;		/* [chosen] D-SACK: a duplicate data packet arrived since the last response */
	uint32_t max_rcv_psn;	/* 24 bits */
	uint8_t bitmap[UB_SACK_BITMAP_MAX];	/* first ub_sack_bitmap_len() bytes used */
};

static inline size_t ub_sack_bitmap_len(uint8_t size_code)
{
	return ub_saetph_bitmap_bits(size_code) / 8;
}

static inline size_t ub_saetph_len(uint8_t size_code)
{
	return sizeof(struct ub_saetph) + ub_sack_bitmap_len(size_code);
}

/* Bit k of the bitmap stands for PSN = RTPH.PSN + k: byte k/8, bit k%8 from the LSB. */
static inline void ub_sack_set(uint8_t *bitmap, uint32_t k)
{
	bitmap[k / 8] |= (uint8_t)(1u << (k % 8));
}

static inline bool ub_sack_test(const uint8_t *bitmap, uint32_t k)
{
	return (bitmap[k / 8] >> (k % 8)) & 1;
}

/*
 * Encode into `out` (room for ub_saetph_len(f->size_code) bytes); returns the
 * bytes written, 0 when the size code is out of range.
 */
size_t ub_saetph_encode(void *out, const struct ub_saetph_fields *f);
/*
 * Decode from `len` available bytes; returns the header length consumed, or 0
 * when the size code is out of range or the bitmap does not fit.
 */
size_t ub_saetph_decode(const void *in, size_t len, struct ub_saetph_fields *f);

/* CNPETPH */
struct ub_cnpetph_fields {
	uint8_t ecn;		/* 2 bits: UB_CNP_ECN_MINOR, UB_CNP_ECN_SEVERE */
	bool loc;		/* 1 = last-hop switch */
	uint8_t vl;		/* CTP: the VL of the marked data (4 bits; RTP: 0) */
};

void ub_cnpetph_encode(struct ub_cnpetph *h, const struct ub_cnpetph_fields *f);
void ub_cnpetph_decode(const struct ub_cnpetph *h, struct ub_cnpetph_fields *f);

/*
 * TAH. An answer (ATAH: TAACK 0x11, ReadResp 0x12, AtomicResp 0x13) carries
 * RSPST.RSPINFO in byte 4 where requests carry NoTAACK..Alloc: the encoder
 * writes one or the other by opcode, the decoder fills one set and zeroes
 * the other.
 */
struct ub_tah_fields {
	uint8_t opcode;
	uint8_t taver;		/* 2 bits, 0 in this version of UB */
	uint8_t ee;		/* 2 bits */
	bool tv_en;
	bool poison;
	bool ud_flg;
	uint16_t ini_tassn;
	bool no_taack;
	uint8_t order;		/* 3 bits */
	bool mt_en;
	bool fce;
	bool retry;
	bool alloc;
	uint8_t rspst;		/* TAACK only, 3 bits */
	uint8_t rspinfo;	/* TAACK only, 5 bits */
	bool excl;
	uint8_t ini_rc_type;	/* 2 bits */
	uint32_t ini_rcid;	/* 20 bits */
};

void ub_tah_encode(struct ub_tah *h, const struct ub_tah_fields *f);
void ub_tah_decode(const struct ub_tah *h, struct ub_tah_fields *f);

/* MAETAH */
struct ub_maetah_fields {
	uint64_t va;
	uint32_t token_id;	/* 20 bits */
	uint32_t length;
};

void ub_maetah_encode(struct ub_maetah *h, const struct ub_maetah_fields *f);
void ub_maetah_decode(const struct ub_maetah *h, struct ub_maetah_fields *f);

/* IMMETAH */
struct ub_immetah_fields {
	uint64_t imm;
	uint32_t token_value;	/* Write with immediate: Immediate_TokenValue */
	uint32_t msg_len;	/* Write with immediate: the Write's total length */
};

void ub_immetah_encode(struct ub_immetah *h, const struct ub_immetah_fields *f);
void ub_immetah_decode(const struct ub_immetah *h, struct ub_immetah_fields *f);

/* TVETAH: one big-endian word, the token value. */
static inline void ub_tvetah_encode(struct ub_tvetah *h, uint32_t token_value)
{
	h->token_value = ub_htonl(token_value);
}
static inline uint32_t ub_tvetah_decode(const struct ub_tvetah *h)
{
	return ub_ntohl(h->token_value);
}

/* Big-endian 64-bit words (atomic operands, docs/WIRE.md §4.5). */
void ub_put_be64(void *p, uint64_t v);
uint64_t ub_get_be64(const void *p);

const char *ub_tp_opcode_name(uint8_t op);	/* "RTP", "TPACK", ...; "?" if invalid */
const char *ub_ta_opcode_name(uint8_t op);

#endif
