// SPDX-License-Identifier: BSD-2-Clause
#include "lib/ubhdr.h"

#include <string.h>

#define U24 0xffffffu

void ub_tph_encode(struct ub_tph *h, const struct ub_tph_fields *f)
{
	h->op = (uint8_t)((f->last ? 0x80 : 0) | (f->opcode & 0x7f));
	h->ver_nlp = (uint8_t)(((f->ver & 3) << 6) | ((f->pad & 3) << 4) | (f->nlp & 0x0f));
	ub_put24(h->src_tpn, f->src_tpn & U24);
	ub_put24(h->dst_tpn, f->dst_tpn & U24);
	h->flags = (uint8_t)((f->ackreq ? 0x80 : 0) | (f->err ? 0x40 : 0));
	ub_put24(h->psn, f->psn & U24);
	h->rsp = (uint8_t)(((f->rspst & 7) << 5) | (f->rspinfo & 0x1f));
	ub_put24(h->tpmsn, f->tpmsn & U24);
}

void ub_tph_decode(const struct ub_tph *h, struct ub_tph_fields *f)
{
	f->opcode = ub_tph_opcode(h);
	f->last = ub_tph_last(h);
	f->ver = ub_tph_ver(h);
	f->pad = ub_tph_pad(h);
	f->nlp = ub_tph_nlp(h);
	f->src_tpn = ub_get24(h->src_tpn);
	f->dst_tpn = ub_get24(h->dst_tpn);
	f->ackreq = ub_tph_ackreq(h);
	f->err = ub_tph_err(h);
	f->psn = ub_get24(h->psn);
	f->rspst = ub_tph_rspst(h);
	f->rspinfo = ub_tph_rspinfo(h);
	f->tpmsn = ub_get24(h->tpmsn);
}

void ub_cetph_encode(struct ub_cetph *h, const struct ub_cetph_fields *f)
{
	h->ack_seq = ub_htonl(f->ack_seq);
	h->alg[0] = (uint8_t)((f->loc ? 2 : 0) | (f->i ? 1 : 0));
	h->alg[1] = f->c;
	h->alg[2] = (uint8_t)(f->hint >> 8);
	h->alg[3] = (uint8_t)f->hint;
}

void ub_cetph_decode(const struct ub_cetph *h, struct ub_cetph_fields *f)
{
	f->ack_seq = ub_ntohl(h->ack_seq);
	f->loc = (h->alg[0] >> 1) & 1;
	f->i = h->alg[0] & 1;
	f->c = h->alg[1];
	f->hint = (uint16_t)((h->alg[2] << 8) | h->alg[3]);
}

size_t ub_saetph_encode(void *out, const struct ub_saetph_fields *f)
{
	struct ub_saetph *h = out;

	if (f->size_code > UB_SAETPH_MAX_SIZE_CODE)
		return 0;
	h->size = (uint8_t)(f->size_code | (f->dup ? UB_SAETPH_DUP : 0));
	ub_put24(h->max_rcv_psn, f->max_rcv_psn & U24);
	memcpy(h + 1, f->bitmap, ub_sack_bitmap_len(f->size_code));
	return ub_saetph_len(f->size_code);
}

size_t ub_saetph_decode(const void *in, size_t len, struct ub_saetph_fields *f)
{
	const struct ub_saetph *h = in;
	uint8_t code;

	if (len < sizeof(*h))
		return 0;
	code = h->size & 7;
	if (code > UB_SAETPH_MAX_SIZE_CODE || len < ub_saetph_len(code))
		return 0;
	f->size_code = code;
	f->dup = h->size & UB_SAETPH_DUP;
	f->max_rcv_psn = ub_get24(h->max_rcv_psn);
	memset(f->bitmap, 0, sizeof(f->bitmap));
	memcpy(f->bitmap, h + 1, ub_sack_bitmap_len(code));
	return ub_saetph_len(code);
}

void ub_cnpetph_encode(struct ub_cnpetph *h, const struct ub_cnpetph_fields *f)
{
	memset(h, 0, sizeof(*h));
	h->b0 = (uint8_t)(((f->ecn & 3) << 6) | (f->loc ? 0x20 : 0));
	h->b1 = f->vl & UB_CNPETPH_VL_MASK;
}

void ub_cnpetph_decode(const struct ub_cnpetph *h, struct ub_cnpetph_fields *f)
{
	f->ecn = h->b0 >> 6;
	f->loc = (h->b0 >> 5) & 1;
	f->vl = h->b1 & UB_CNPETPH_VL_MASK;
}

void ub_tah_encode(struct ub_tah *h, const struct ub_tah_fields *f)
{
	h->opcode = f->opcode;
	h->b1 = (uint8_t)(((f->taver & 3) << 6) | ((f->ee & 3) << 4) | (f->tv_en ? 0x08 : 0) |
			  (f->poison ? 0x04 : 0) | (f->ud_flg ? 0x01 : 0));
	h->ini_tassn = ub_htons(f->ini_tassn);
	if (ub_ta_is_answer(f->opcode))
		h->b4 = (uint8_t)(((f->rspst & 7) << 5) | (f->rspinfo & 0x1f));
	else
		h->b4 = (uint8_t)((f->no_taack ? 0x80 : 0) | ((f->order & 7) << 4) |
				  (f->mt_en ? 0x08 : 0) | (f->fce ? 0x04 : 0) |
				  (f->retry ? 0x02 : 0) | (f->alloc ? 0x01 : 0));
	h->b5 = (uint8_t)((f->excl ? 0x40 : 0) | ((f->ini_rc_type & 3) << 4) |
			  ((f->ini_rcid >> 16) & 0x0f));
	h->ini_rcid_lo = ub_htons((uint16_t)f->ini_rcid);
}

void ub_tah_decode(const struct ub_tah *h, struct ub_tah_fields *f)
{
	memset(f, 0, sizeof(*f));
	f->opcode = h->opcode;
	f->taver = h->b1 >> 6;
	f->ee = (h->b1 >> 4) & 3;
	f->tv_en = (h->b1 >> 3) & 1;	/* an answer's bit 3 is SV: decoded the same */
	f->poison = (h->b1 >> 2) & 1;
	f->ud_flg = h->b1 & 1;
	f->ini_tassn = ub_ntohs(h->ini_tassn);
	if (ub_ta_is_answer(h->opcode)) {
		f->rspst = h->b4 >> 5;
		f->rspinfo = h->b4 & 0x1f;
	} else {
		f->no_taack = h->b4 >> 7;
		f->order = (h->b4 >> 4) & 7;
		f->mt_en = (h->b4 >> 3) & 1;
		f->fce = (h->b4 >> 2) & 1;
		f->retry = (h->b4 >> 1) & 1;
		f->alloc = h->b4 & 1;
	}
	f->excl = (h->b5 >> 6) & 1;
	f->ini_rc_type = (h->b5 >> 4) & 3;
	f->ini_rcid = ub_tah_rcid(h);
}

void ub_maetah_encode(struct ub_maetah *h, const struct ub_maetah_fields *f)
{
	uint8_t *va = (uint8_t *)h;	/* VA is bytes 0-7 */

	for (int i = 0; i < 8; i++)
		va[i] = (uint8_t)(f->va >> (56 - 8 * i));
	h->token = ub_htonl((f->token_id & 0xfffff) << 8);
	h->length = ub_htonl(f->length);
}

void ub_maetah_decode(const struct ub_maetah *h, struct ub_maetah_fields *f)
{
	const uint8_t *va = (const uint8_t *)h;

	f->va = 0;
	for (int i = 0; i < 8; i++)
		f->va = (f->va << 8) | va[i];
	f->token_id = ub_maetah_token_id(h);
	f->length = ub_ntohl(h->length);
}

void ub_immetah_encode(struct ub_immetah *h, const struct ub_immetah_fields *f)
{
	h->imm_hi = ub_htonl((uint32_t)(f->imm >> 32));
	h->imm_lo = ub_htonl((uint32_t)f->imm);
	h->token_value = ub_htonl(f->token_value);
	h->msg_len = ub_htonl(f->msg_len);
}

void ub_immetah_decode(const struct ub_immetah *h, struct ub_immetah_fields *f)
{
	f->imm = (uint64_t)ub_ntohl(h->imm_hi) << 32 | ub_ntohl(h->imm_lo);
	f->token_value = ub_ntohl(h->token_value);
	f->msg_len = ub_ntohl(h->msg_len);
}

void ub_put_be64(void *p, uint64_t v)
{
	uint8_t *b = p;

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (56 - 8 * i));
}

uint64_t ub_get_be64(const void *p)
{
	const uint8_t *b = p;
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | b[i];
	return v;
}

const char *ub_tp_opcode_name(uint8_t op)
{
	switch (op) {
	case UB_TP_UTP_DATA:	return "UTP";
	case UB_TP_RTP_DATA:	return "RTP";
	case UB_TP_ACK:		return "TPACK";
	case UB_TP_ACK_CE:	return "TPACK_CE";
	case UB_TP_SACK:	return "TPSACK";
	case UB_TP_SACK_CE:	return "TPSACK_CE";
	case UB_TP_CNP:		return "CNP";
	default:		return "?";
	}
}

const char *ub_ta_opcode_name(uint8_t op)
{
	switch (op) {
	case UB_TA_SEND:	return "Send";
	case UB_TA_SEND_IMM:	return "SendImm";
	case UB_TA_WRITE:	return "Write";
	case UB_TA_WRITE_IMM:	return "WriteImm";
	case UB_TA_READ:	return "Read";
	case UB_TA_ATOMIC_CAS:	return "CAS";
	case UB_TA_ATOMIC_FADD:	return "FAdd";
	case UB_TA_MESSAGE:	return "Message";
	case UB_TA_TAACK:	return "TAACK";
	case UB_TA_READ_RESP:	return "ReadResp";
	case UB_TA_ATOMIC_RESP:	return "AtomicResp";
	default:		return "?";
	}
}
