// SPDX-License-Identifier: BSD-2-Clause
/* TP packets to and from bytes (the headers a channel writes, and parsing), with the packet library's header codecs. */
#include <string.h>

#include "transport/tp_wire.h"
#include "transport/tp_sge.h"
#include "lib/frame.h"

int tp_parse_ta(const uint8_t *b, const uint8_t *end, struct tp_parsed *p)
{
	const struct ub_tah *tah = (const struct ub_tah *)b;

	if ((size_t)(end - b) < sizeof(struct ub_tah))
		return -EINVAL;
	p->has_tah = true;
	ub_tah_decode(tah, &p->tah);
	b += sizeof(struct ub_tah);
	/* In UB 2.0 §7.2's order (no UDETAH, MTETAH, OFSTETAH: docs/WIRE.md §4). */
	if (ub_ta_has_maetah(p->tah.opcode)) {
		if ((size_t)(end - b) < sizeof(struct ub_maetah))
			return -EINVAL;
		p->has_maetah = true;
		ub_maetah_decode((const struct ub_maetah *)b, &p->mae);
		b += sizeof(struct ub_maetah);
	}
	if (ub_ta_has_immetah(p->tah.opcode)) {
		if ((size_t)(end - b) < sizeof(struct ub_immetah))
			return -EINVAL;
		p->has_immetah = true;
		ub_immetah_decode((const struct ub_immetah *)b, &p->imm);
		b += sizeof(struct ub_immetah);
	}
	if (ub_tah_has_tvetah(tah)) {
		if ((size_t)(end - b) < sizeof(struct ub_tvetah))
			return -EINVAL;
		p->has_tvetah = true;
		p->token_value = ub_tvetah_decode((const struct ub_tvetah *)b);
		b += sizeof(struct ub_tvetah);
	}
	p->payload = b;
	p->payload_len = (size_t)(end - b);
	return 0;
}

int tp_parse(const void *pkt, size_t len, struct tp_parsed *p, const char **why)
{
	const uint8_t *b = pkt, *end = b + len;
	bool response;
	uint8_t op;

	memset(p, 0, sizeof(*p));
	if (len < sizeof(struct ub_tph)) {
		*why = "short";
		return -EINVAL;
	}
	ub_tph_decode((const struct ub_tph *)b, &p->tph);
	b += sizeof(struct ub_tph);
	op = p->tph.opcode;
	if (!ub_tp_opcode_valid(op)) {
		*why = "opcode";
		return -EINVAL;
	}
	if (op == UB_TP_UTP_DATA) {
		/* UTPH: bytes 2-15 are reserved, ignored (no TPN, no PSN). */
		struct ub_tph_fields u = { .opcode = op, .last = p->tph.last, .ver = p->tph.ver,
					   .pad = p->tph.pad, .nlp = p->tph.nlp };

		p->tph = u;
	}
	response = op >= UB_TP_ACK;
	if (ub_tp_has_cetph(op)) {
		if ((size_t)(end - b) < sizeof(struct ub_cetph))
			goto short_hdr;
		p->has_cetph = true;
		ub_cetph_decode((const struct ub_cetph *)b, &p->ce);
		b += sizeof(struct ub_cetph);
	}
	if (ub_tp_has_saetph(op)) {
		size_t n = ub_saetph_decode(b, (size_t)(end - b), &p->sa);

		if (!n)
			goto short_hdr;
		p->has_saetph = true;
		b += n;
	}
	if (ub_tp_has_cnpetph(op)) {
		if ((size_t)(end - b) < sizeof(struct ub_cnpetph))
			goto short_hdr;
		p->has_cnpetph = true;
		ub_cnpetph_decode((const struct ub_cnpetph *)b, &p->cnp);
		b += sizeof(struct ub_cnpetph);
	}
	/* Data needs a TAH; a response may carry one (the TAACK of ROL). */
	if (p->tph.nlp == UB_NLP_TAH && (!response || (size_t)(end - b) >= sizeof(struct ub_tah))) {
		if (tp_parse_ta(b, end, p))
			goto short_hdr;
		return 0;
	}
	p->payload = b;
	p->payload_len = (size_t)(end - b);
	return 0;
short_hdr:
	*why = "short";
	return -EINVAL;
}

int tp_pkt_to_spec(const void *pkt, size_t len, struct ub_pkt_spec *s)
{
	struct tp_parsed p;
	const char *why;

	if (tp_parse(pkt, len, &p, &why))
		return -EINVAL;
	s->tph = p.tph;
	s->has_cetph = p.has_cetph;
	s->cetph = p.ce;
	s->has_saetph = p.has_saetph;
	s->saetph = p.sa;
	s->has_cnpetph = p.has_cnpetph;
	s->cnpetph = p.cnp;
	s->has_tah = p.has_tah;
	s->tah = p.tah;
	s->has_maetah = p.has_maetah;
	s->maetah = p.mae;
	s->has_immetah = p.has_immetah;
	s->immetah = p.imm;
	s->has_tvetah = p.has_tvetah;
	s->tvetah = p.token_value;
	s->payload = p.payload;
	s->payload_len = p.payload_len;
	return 0;
}

const char *tp_mode_name(enum tp_mode m)
{
	switch (m) {
	case TP_MODE_RTP_SR:		return "rtp-sr";
	case TP_MODE_RTP_GBN:		return "rtp-gbn";
	case TP_MODE_RTP_GBN_FAST:	return "rtp-gbn-fast";
	case TP_MODE_UTP:		return "utp";
	case TP_MODE_CTP:		return "ctp";
	}
	return "?";
}

int tp_mode_parse(const char *s, enum tp_mode *m)
{
	for (int i = TP_MODE_RTP_SR; i <= TP_MODE_CTP; i++)
		if (!strcmp(s, tp_mode_name((enum tp_mode)i))) {
			*m = (enum tp_mode)i;
			return 0;
		}
	return -EINVAL;
}

const char *tp_status_name(enum tp_status s)
{
	switch (s) {
	case TP_ST_OK:			return "ok";
	case TP_ST_RNR:			return "rnr";
	case TP_ST_PAGE_FAULT:		return "page_fault";
	case TP_ST_COMPLETER_ERR:	return "completer_error";
	case TP_ST_RETRY_EXCEEDED:	return "retry_exceeded";
	case TP_ST_FLUSHED:		return "flushed";
	case TP_ST_TIMEOUT:		return "timeout";
	}
	return "?";
}

/* ---- encoding ---------------------------------------------------------------- */

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
	uint32_t plen = tp_seg_len(ch, op, seg);
	size_t off = (size_t)seg * ch->cfg.mtu, n = 0;
	uint8_t opc = ta_opcode(op, seg);
	bool mae = ub_ta_has_maetah(opc), imm = ub_ta_has_immetah(opc);
	struct ub_tah_fields tah = {
		.opcode = opc, .ini_tassn = op->tassn,
		.retry = op->retry, .rspst = op->rspst, .rspinfo = op->rspinfo,
		.order = tp_op_initiator(op) ? ta_order(ch) : 0,
		/* Every memory access carries its token value (UB 2.0 §7.2.5). */
		.tv_en = mae,
	};

	/* [chosen] CTP and UTP have no TPN: IniRCID names the initiator's jetty
	 * (its channel), on requests and on their answers alike. */
	if (tp_is_ctp(ch) || ch->cfg.mode == TP_MODE_UTP)
		tah.ini_rcid = tp_op_initiator(op) ? ch->tpn : ch->peer_tpn;
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

/* ---- in-band channel setup over UTP -------------------------------------- */

static const uint8_t hello_magic[4] = { 'U', 'B', 'H', '2' };	/* TP_HELLO_MAGIC */

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

size_t tp_hello_build(const struct tp_chan *ch, uint32_t peer_tpn, bool reply, void *buf,
		      size_t cap)
{
	return tp_hello_build_app(ch, peer_tpn, reply, NULL, 0, buf, cap);
}

size_t tp_hello_build_app(const struct tp_chan *ch, uint32_t peer_tpn, bool reply,
			  const void *app, size_t app_len, void *buf, size_t cap)
{
	/* A UTPH names no TPN: both ride in the payload. */
	struct ub_tph_fields f = { .opcode = UB_TP_UTP_DATA, .last = true, .nlp = UB_NLP_TAH };
	struct ub_tah_fields t = { .opcode = UB_TA_MESSAGE };
	uint8_t *b = buf, *pl;
	uint32_t mtu = ch->cfg.mtu > 0xffff ? 0xffff : ch->cfg.mtu;

	if (app_len > TP_HELLO_APP_MAX || cap < TP_HELLO_LEN + app_len)
		return 0;
	ub_tph_encode((struct ub_tph *)b, &f);
	ub_tah_encode((struct ub_tah *)(b + 16), &t);
	pl = b + 24;
	memcpy(pl, hello_magic, 4);
	put32(pl + 4, ch->tpn);
	put32(pl + 8, ch->init_psn);
	pl[12] = (uint8_t)(mtu >> 8);
	pl[13] = (uint8_t)mtu;
	pl[14] = (uint8_t)ch->cfg.mode;
	pl[15] = reply ? 1 : 0;
	put32(pl + 16, peer_tpn & TP_PSN_MASK);
	if (app_len)
		memcpy(pl + TP_HELLO_BODY, app, app_len);
	return TP_HELLO_LEN + app_len;
}

int tp_hello_parse(const void *pkt, size_t len, struct tp_hello *h)
{
	struct tp_parsed p;
	const char *why;

	if (tp_parse(pkt, len, &p, &why) || p.tph.opcode != UB_TP_UTP_DATA || !p.has_tah ||
	    p.tah.opcode != UB_TA_MESSAGE || p.payload_len < TP_HELLO_BODY ||
	    p.payload_len > TP_HELLO_BODY + TP_HELLO_APP_MAX ||
	    memcmp(p.payload, hello_magic, 4))
		return -EINVAL;
	h->tpn = get32(p.payload + 4);
	h->src_tpn = h->tpn;
	h->dst_tpn = get32(p.payload + 16);
	h->init_psn = get32(p.payload + 8);
	h->mtu = (uint16_t)(p.payload[12] << 8 | p.payload[13]);
	h->mode = p.payload[14];
	h->reply = p.payload[15] & 1;
	h->app_len = p.payload_len - TP_HELLO_BODY;
	h->app = h->app_len ? p.payload + TP_HELLO_BODY : NULL;
	if (h->tpn > TP_PSN_MASK || h->init_psn > TP_PSN_MASK || h->mode > TP_MODE_CTP ||
	    (p.payload[15] & ~1u) || h->dst_tpn > TP_PSN_MASK)
		return -EINVAL;
	return 0;
}
