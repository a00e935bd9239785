// SPDX-License-Identifier: BSD-2-Clause
#include "lib/frame.h"

#include <string.h>

#define ETH_HLEN	14
#define VLAN_HLEN	4
#define IPV4_HLEN	20
#define IPV6_HLEN	40
#define UDP_HLEN	8

#define UB_PARSE_NAME(id, name, text) [UB_PARSE_##id] = name,
#define UB_PARSE_TEXT(id, name, text) [UB_PARSE_##id] = text,
static const char *const err_names[] = { UB_PARSE_ERRORS(UB_PARSE_NAME) };
static const char *const err_texts[] = { UB_PARSE_ERRORS(UB_PARSE_TEXT) };

const char *ub_parse_errname(enum ub_parse_err e)
{
	return (unsigned)e < UB_PARSE__MAX ? err_names[e] : "unknown";
}

const char *ub_parse_strerror(enum ub_parse_err e)
{
	return (unsigned)e < UB_PARSE__MAX ? err_texts[e] : "unknown parse error";
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * Before the UDP port is known to be 4792 a UBoE candidate may be any IP
 * traffic, so a defect there only means "not UB"; a native frame is UB by its
 * EtherType and the same defect is its error.
 */
#define NOT_UB_OR(native, err) ((native) ? (err) : UB_PARSE_NOT_UB)

static void decode_ipv4(struct ub_view *v, const uint8_t *p)
{
	v->dscp = p[1] >> 2;
	v->ecn = p[1] & 3;
	v->ip_id = get16(p + 4);
	v->ttl = p[8];
	memcpy(v->src_ip, p + 12, 4);
	memcpy(v->dst_ip, p + 16, 4);
	v->ip_len = get16(p + 2);
}

static void decode_ipv6(struct ub_view *v, const uint8_t *p)
{
	uint8_t tc = (uint8_t)((p[0] & 0x0f) << 4 | p[1] >> 4);

	v->dscp = tc >> 2;
	v->ecn = tc & 3;
	v->flow_label = (uint32_t)(p[1] & 0x0f) << 16 | get16(p + 2);
	v->ttl = p[7];
	memcpy(v->src_ip, p + 8, 16);
	memcpy(v->dst_ip, p + 24, 16);
	v->ip_len = (size_t)get16(p + 4) + IPV6_HLEN;
	v->ip_csum_ok = true;
}

/* IP and UDP up to the TPH, mirroring ub2e_parse_l3() of the datapath. */
static enum ub_parse_err parse_ip_udp(struct ub_view *v, const uint8_t *ip, size_t avail,
				      bool v6, bool native, size_t *hlen)
{
	size_t hl;

	v->ip = ip;
	if (!v6) {
		if (avail < IPV4_HLEN)
			return NOT_UB_OR(native, UB_PARSE_TRUNCATED);
		if (ip[0] >> 4 != 4)
			return NOT_UB_OR(native, UB_PARSE_IP_VERSION);
		v->ip_ver = 4;
		decode_ipv4(v, ip);
		if (ip[9] != 17)
			return NOT_UB_OR(native, UB_PARSE_NOT_UDP_4792);
		/* A later fragment has no UDP header to tell UB from anything else. */
		if (get16(ip + 6) & 0x1fff)
			return NOT_UB_OR(native, UB_PARSE_IPV4_FRAGMENT);
		hl = (size_t)(ip[0] & 0x0f) * 4;
		if (hl != IPV4_HLEN) {
			/* Options: UBoE gone wrong only if it is UDP to 4792. */
			if (hl < IPV4_HLEN)
				return NOT_UB_OR(native, UB_PARSE_IPV4_OPTIONS);
			if (avail < hl + UDP_HLEN)
				return NOT_UB_OR(native, UB_PARSE_TRUNCATED);
			if (native || get16(ip + hl + 2) == UBOE_UDP_PORT)
				return UB_PARSE_IPV4_OPTIONS;
			return UB_PARSE_NOT_UB;
		}
		v->ip_csum_ok = ub_ipv4_csum(ip, IPV4_HLEN) == 0;
	} else {
		if (avail < IPV6_HLEN)
			return NOT_UB_OR(native, UB_PARSE_TRUNCATED);
		if (ip[0] >> 4 != 6)
			return NOT_UB_OR(native, UB_PARSE_IP_VERSION);
		v->ip_ver = 6;
		decode_ipv6(v, ip);
		/* docs/WIRE.md §1: no extension headers in a UBoE packet. */
		if (ip[6] != 17)
			return NOT_UB_OR(native, UB_PARSE_NOT_UDP_4792);
		hl = IPV6_HLEN;
	}

	if (avail < hl + UDP_HLEN)
		return NOT_UB_OR(native, UB_PARSE_TRUNCATED);
	v->udp = ip + hl;
	v->sport = get16(v->udp);
	v->dport = get16(v->udp + 2);
	v->udp_len = get16(v->udp + 4);
	v->udp_csum = get16(v->udp + 6);
	if (v->dport != UBOE_UDP_PORT)
		return NOT_UB_OR(native, UB_PARSE_NOT_UDP_4792);
	*hlen = hl;
	return UB_PARSE_OK;
}

/* TPH .. payload, once IP and UDP are known to be UB and the lengths sane. */
static enum ub_parse_err parse_ub(struct ub_view *v, const uint8_t *p, const uint8_t *end)
{
	uint8_t op = v->tp.opcode;
	bool response = ub_tph_is_response(v->tph);

#define NEED(n) do { if ((size_t)(end - p) < (n)) return UB_PARSE_HDR_OVERRUN; } while (0)
	if (ub_tp_has_cetph(op)) {
		NEED(sizeof(struct ub_cetph));
		v->cetph = (const struct ub_cetph *)p;
		ub_cetph_decode(v->cetph, &v->ce);
		p += sizeof(struct ub_cetph);
	}
	if (ub_tp_has_saetph(op)) {
		size_t n;

		NEED(sizeof(struct ub_saetph));
		if ((p[0] & 7) > UB_SAETPH_MAX_SIZE_CODE)
			return UB_PARSE_SAETPH_SIZE;
		n = ub_saetph_decode(p, (size_t)(end - p), &v->sa);
		if (!n)
			return UB_PARSE_HDR_OVERRUN;
		v->saetph = (const struct ub_saetph *)p;
		p += n;
	}
	if (ub_tp_has_cnpetph(op)) {
		NEED(sizeof(struct ub_cnpetph));
		v->cnpetph = (const struct ub_cnpetph *)p;
		ub_cnpetph_decode(v->cnpetph, &v->cnp);
		p += sizeof(struct ub_cnpetph);
	}
	/* A data packet with NLP 0 must carry a TAH; a response may (TAACK). */
	if (v->tp.nlp == UB_NLP_TAH && (!response || (size_t)(end - p) >= sizeof(struct ub_tah))) {
		NEED(sizeof(struct ub_tah));
		v->tah = (const struct ub_tah *)p;
		ub_tah_decode(v->tah, &v->ta);
		p += sizeof(struct ub_tah);
		if (ub_ta_has_maetah(v->ta.opcode)) {
			NEED(sizeof(struct ub_maetah));
			v->maetah = (const struct ub_maetah *)p;
			ub_maetah_decode(v->maetah, &v->mae);
			p += sizeof(struct ub_maetah);
		}
		if (ub_ta_has_immetah(v->ta.opcode)) {
			NEED(sizeof(struct ub_immetah));
			v->immetah = (const struct ub_immetah *)p;
			ub_immetah_decode(v->immetah, &v->imm);
			p += sizeof(struct ub_immetah);
		}
		if (ub_tah_has_tvetah(v->tah)) {
			NEED(sizeof(struct ub_tvetah));
			v->tvetah = (const struct ub_tvetah *)p;
			v->token_value = ub_tvetah_decode(v->tvetah);
			p += sizeof(struct ub_tvetah);
		}
	}
#undef NEED
	v->payload = p;
	v->payload_len = (size_t)(end - p);
	return UB_PARSE_OK;
}

enum ub_parse_err ub_parse_frame(const void *buf, size_t len, uint16_t ub_ethertype,
				 struct ub_view *v)
{
	const uint8_t *f = buf;
	size_t off = ETH_HLEN, hl = 0;
	bool native = false, v6;
	enum ub_parse_err rc;
	uint16_t type;

	memset(v, 0, sizeof(*v));
	v->frame = f;
	v->frame_len = len;
	v->vlan = UB_VLAN_NONE;
	if (!ub_ethertype)
		ub_ethertype = UB_ETH_P_NATIVE;
	if (len < ETH_HLEN)
		return UB_PARSE_NOT_UB;
	v->dst_mac = f;
	v->src_mac = f + 6;
	type = v->ethertype = get16(f + 12);

	if (type == ub_ethertype) {
		native = true;
		v->kind = UB_KIND_NATIVE;
		if (len < ETH_HLEN + UB_NATIVE_HDR_LEN)
			return UB_PARSE_TRUNCATED;
		v->lph = (const struct ub_lph *)(f + off);
		v->nth = (const struct ub_nth *)(f + off + sizeof(struct ub_lph));
		off += UB_NATIVE_HDR_LEN;
		v->lph_config = ub_lph_config(v->lph);
		v->vl = ub_lph_vl(v->lph);
		v->rt = ub_lph_rt(v->lph);
		v->lbf = ub_lph_lbf(v->lph);
		v->cci = ub_ntohs(v->nth->cci);
		v->perm = ub_nth_perm(v->nth);
		v->pid = ub_nth_pid(v->nth);
		if (v->lph_config == UB_LPH_CONFIG_IPV4)
			v6 = false;
		else if (v->lph_config == UB_LPH_CONFIG_IPV6)
			v6 = true;
		else
			return UB_PARSE_LPH_CONFIG;
	} else {
		if (type == 0x8100) {
			if (len < ETH_HLEN + VLAN_HLEN)
				return UB_PARSE_NOT_UB;
			v->vlan = get16(f + 14) & 0x0fff;
			v->vlan_pcp = f[14] >> 5;
			type = get16(f + 16);
			off += VLAN_HLEN;
		}
		if (type == 0x0800)
			v6 = false;
		else if (type == 0x86dd)
			v6 = true;
		else
			return UB_PARSE_NOT_UB;
	}

	rc = parse_ip_udp(v, f + off, len - off, v6, native, &hl);
	if (rc == UB_PARSE_NOT_UB)
		return rc;
	v->kind = native ? UB_KIND_NATIVE : UB_KIND_UBOE;
	if (rc)
		return rc;

	/* From here on it is UB: every defect is an error. */
	if (!v6 && (get16(v->ip + 6) & 0x2000))
		return UB_PARSE_IPV4_FRAGMENT;
	if (len - off < hl + UDP_HLEN + sizeof(struct ub_tph))
		return UB_PARSE_TRUNCATED;
	v->tph = (const struct ub_tph *)(v->udp + UDP_HLEN);
	ub_tph_decode(v->tph, &v->tp);
	v->nak = ub_tph_fields_is_nak(&v->tp);

	/* The IP packet must fit the frame (Ethernet padding may follow) and
	 * leave room for UDP, TPH and ICRC; UDP must agree with IP. */
	if (v->ip_len > len - off)
		return UB_PARSE_TRUNCATED;
	if (v->ip_len < hl || v->udp_len != v->ip_len - hl ||
	    v->udp_len < UDP_HLEN + sizeof(struct ub_tph) + UBOE_ICRC_LEN)
		return UB_PARSE_IP_LENGTH;
	if (!ub_tp_opcode_valid(v->tp.opcode))
		return UB_PARSE_TP_OPCODE;

	v->icrc = ub_icrc_get(v->ip, v->ip_len);
	v->icrc_ok = ub_icrc_ok(v->ip, v->ip_len);

	rc = parse_ub(v, (const uint8_t *)(v->tph + 1), v->ip + v->ip_len - UBOE_ICRC_LEN);
	if (rc)
		return rc;
	if (native && v->pid == UB_PID_INVALID)
		return UB_PARSE_PARTITION_ZERO;
	return UB_PARSE_OK;
}

enum ub_parse_err ub_parse_frame_ctp(const void *buf, size_t len, uint16_t ub_ethertype,
				     struct ub_view *v)
{
	enum ub_parse_err rc = ub_parse_frame(buf, len, ub_ethertype, v);
	const uint8_t *end, *p;
	size_t hl, avail;

	if (rc != UB_PARSE_NOT_UDP_4792 || v->kind != UB_KIND_NATIVE || !v->udp ||
	    v->dport != UB_CTP_UDP_PORT)
		return rc;
	/* The checks ub_parse_frame() makes past the port, with a 1-byte CTPH. */
	v->ctp = true;
	hl = (size_t)(v->udp - v->ip);
	avail = len - (size_t)(v->ip - v->frame);
	if (v->ip_ver == 4 && (get16(v->ip + 6) & 0x2000))
		return UB_PARSE_IPV4_FRAGMENT;
	if (avail < hl + UDP_HLEN + UB_CTPH_LEN)
		return UB_PARSE_TRUNCATED;
	v->ctph = v->udp + UDP_HLEN;
	v->ctp_opcode = ub_ctph_opcode(v->ctph[0]);
	v->ctp_nlp = ub_ctph_nlp(v->ctph[0]);
	if (v->ip_len > avail)
		return UB_PARSE_TRUNCATED;
	if (v->ip_len < hl || v->udp_len != v->ip_len - hl ||
	    v->udp_len < UDP_HLEN + UB_CTPH_LEN + UBOE_ICRC_LEN)
		return UB_PARSE_IP_LENGTH;
	if (!(v->ctp_opcode == UB_CTP_OP_TA && v->ctp_nlp == UB_NLP_TAH) &&
	    !(v->ctp_opcode == UB_CTP_OP_CNP && v->ctp_nlp == UB_NLP_NONE))
		return UB_PARSE_TP_OPCODE;
	v->icrc = ub_icrc_get(v->ip, v->ip_len);
	v->icrc_ok = ub_icrc_ok(v->ip, v->ip_len);
	p = v->ctph + UB_CTPH_LEN;
	end = v->ip + v->ip_len - UBOE_ICRC_LEN;
	if (v->ctp_opcode == UB_CTP_OP_CNP) {
		/* CTPH | CNPETPH: congestion feedback, no transaction. */
		if ((size_t)(end - p) < sizeof(struct ub_cnpetph))
			return UB_PARSE_HDR_OVERRUN;
		v->cnpetph = (const struct ub_cnpetph *)p;
		ub_cnpetph_decode(v->cnpetph, &v->cnp);
		p += sizeof(struct ub_cnpetph);
		goto payload;
	}
	/* A CTP packet is a whole transaction operation: the TAH is not optional. */
	if ((size_t)(end - p) < sizeof(struct ub_tah))
		return UB_PARSE_HDR_OVERRUN;
	v->tah = (const struct ub_tah *)p;
	ub_tah_decode(v->tah, &v->ta);
	p += sizeof(struct ub_tah);
	if (ub_ta_has_maetah(v->ta.opcode)) {
		if ((size_t)(end - p) < sizeof(struct ub_maetah))
			return UB_PARSE_HDR_OVERRUN;
		v->maetah = (const struct ub_maetah *)p;
		ub_maetah_decode(v->maetah, &v->mae);
		p += sizeof(struct ub_maetah);
	}
	if (ub_ta_has_immetah(v->ta.opcode)) {
		if ((size_t)(end - p) < sizeof(struct ub_immetah))
			return UB_PARSE_HDR_OVERRUN;
		v->immetah = (const struct ub_immetah *)p;
		ub_immetah_decode(v->immetah, &v->imm);
		p += sizeof(struct ub_immetah);
	}
	if (ub_tah_has_tvetah(v->tah)) {
		if ((size_t)(end - p) < sizeof(struct ub_tvetah))
			return UB_PARSE_HDR_OVERRUN;
		v->tvetah = (const struct ub_tvetah *)p;
		v->token_value = ub_tvetah_decode(v->tvetah);
		p += sizeof(struct ub_tvetah);
	}
payload:
	v->payload = p;
	v->payload_len = (size_t)(end - p);
	if (v->pid == UB_PID_INVALID)
		return UB_PARSE_PARTITION_ZERO;
	return UB_PARSE_OK;
}
