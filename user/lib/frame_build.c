// SPDX-License-Identifier: BSD-2-Clause
#include "lib/frame.h"

#include <string.h>

#define ETH_HLEN	14
#define VLAN_HLEN	4
#define IPV4_HLEN	20
#define IPV6_HLEN	40
#define UDP_HLEN	8

void ub_pkt_spec_init(struct ub_pkt_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->vlan = UB_VLAN_NONE;
	s->ub_ethertype = UB_ETH_P_NATIVE;
	s->rt = UB_RT_FLOW_SHORTEST;
	s->cci = ub_cci_make_fecn(UB_FECN_UNMARKABLE, 0);
	s->perm = UB_PERM_HIGH;
	s->pid = UB_PID_DEFAULT;
	s->ip_ver = 4;
	s->ttl = UBOE_DEFAULT_TTL;
	s->sport = 0xc000;
	s->tph.opcode = UB_TP_RTP_DATA;
	s->tph.nlp = UB_NLP_TAH;
	s->has_tah = true;
	s->tah.opcode = UB_TA_SEND;
}

static size_t ip_hlen(const struct ub_pkt_spec *s)
{
	return s->ip_ver == 6 ? IPV6_HLEN : IPV4_HLEN;
}

/* TPH .. payload: what UDP carries besides the ICRC. */
static size_t ub_body_len(const struct ub_pkt_spec *s)
{
	size_t n = sizeof(struct ub_tph);

	if (s->has_cetph)
		n += sizeof(struct ub_cetph);
	if (s->has_saetph)
		n += ub_saetph_len(s->saetph.size_code);
	if (s->has_cnpetph)
		n += sizeof(struct ub_cnpetph);
	if (s->has_tah)
		n += sizeof(struct ub_tah);
	if (s->has_maetah)
		n += sizeof(struct ub_maetah);
	if (s->has_immetah)
		n += sizeof(struct ub_immetah);
	if (s->has_tvetah)
		n += sizeof(struct ub_tvetah);
	return n + s->payload_len;
}

size_t ub_pkt_ip_len(const struct ub_pkt_spec *s)
{
	return ip_hlen(s) + UDP_HLEN + ub_body_len(s) + UBOE_ICRC_LEN;
}

uint16_t ub_ipv4_csum(const void *hdr, size_t len)
{
	const uint8_t *p = hdr;
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_ipv4(const struct ub_pkt_spec *s, uint8_t *p, size_t ip_len)
{
	p[0] = 0x45;
	p[1] = (uint8_t)((s->dscp & 0x3f) << 2 | (s->ecn & 3));
	put16(p + 2, (uint16_t)ip_len);
	put16(p + 4, s->ip_id);
	put16(p + 6, 0x4000);		/* DF, offset 0 */
	p[8] = s->ttl;
	p[9] = 17;
	put16(p + 10, 0);
	memcpy(p + 12, s->src_ip, 4);
	memcpy(p + 16, s->dst_ip, 4);
	put16(p + 10, ub_ipv4_csum(p, IPV4_HLEN));
}

static void put_ipv6(const struct ub_pkt_spec *s, uint8_t *p, size_t ip_len)
{
	uint8_t tc = (uint8_t)((s->dscp & 0x3f) << 2 | (s->ecn & 3));
	uint32_t fl = s->flow_label & 0xfffff;

	p[0] = (uint8_t)(0x60 | tc >> 4);
	p[1] = (uint8_t)((tc & 0x0f) << 4 | fl >> 16);
	put16(p + 2, (uint16_t)fl);
	put16(p + 4, (uint16_t)(ip_len - IPV6_HLEN));
	p[6] = 17;
	p[7] = s->ttl;
	memcpy(p + 8, s->src_ip, 16);
	memcpy(p + 24, s->dst_ip, 16);
}

/* IP header .. ICRC at p, `ip_len` bytes (from ub_pkt_ip_len). */
static void put_ip_packet(const struct ub_pkt_spec *s, uint8_t *p, size_t ip_len)
{
	size_t hl = ip_hlen(s);
	uint8_t *q = p + hl + UDP_HLEN;

	if (s->ip_ver == 6)
		put_ipv6(s, p, ip_len);
	else
		put_ipv4(s, p, ip_len);

	put16(p + hl, s->sport);
	put16(p + hl + 2, UBOE_UDP_PORT);
	put16(p + hl + 4, (uint16_t)(ip_len - hl));
	put16(p + hl + 6, 0);		/* docs/WIRE.md §1: UDP checksum sent as 0 */

	ub_tph_encode((struct ub_tph *)q, &s->tph);
	q += sizeof(struct ub_tph);
	if (s->has_cetph) {
		ub_cetph_encode((struct ub_cetph *)q, &s->cetph);
		q += sizeof(struct ub_cetph);
	}
	if (s->has_saetph)
		q += ub_saetph_encode(q, &s->saetph);
	if (s->has_cnpetph) {
		ub_cnpetph_encode((struct ub_cnpetph *)q, &s->cnpetph);
		q += sizeof(struct ub_cnpetph);
	}
	if (s->has_tah) {
		ub_tah_encode((struct ub_tah *)q, &s->tah);
		q += sizeof(struct ub_tah);
	}
	if (s->has_maetah) {
		ub_maetah_encode((struct ub_maetah *)q, &s->maetah);
		q += sizeof(struct ub_maetah);
	}
	if (s->has_immetah) {
		ub_immetah_encode((struct ub_immetah *)q, &s->immetah);
		q += sizeof(struct ub_immetah);
	}
	if (s->has_tvetah) {
		ub_tvetah_encode((struct ub_tvetah *)q, s->tvetah);
		q += sizeof(struct ub_tvetah);
	}
	if (s->payload)
		memcpy(q, s->payload, s->payload_len);
	else
		memset(q, 0, s->payload_len);

	ub_icrc_put(p, ip_len);
}

/* Checks shared by both frame kinds; returns the IP length or 0. */
static size_t check_spec(const struct ub_pkt_spec *s, size_t l2_len, size_t cap)
{
	size_t ip_len;

	if (s->ip_ver != 4 && s->ip_ver != 6)
		return 0;
	if (s->has_saetph && s->saetph.size_code > UB_SAETPH_MAX_SIZE_CODE)
		return 0;
	if (s->payload_len > 0x10000)	/* keeps the sum below from overflowing */
		return 0;
	ip_len = ub_pkt_ip_len(s);
	/* IPv4 Total Length and IPv6 Payload Length are 16 bits. */
	if (ip_len - (s->ip_ver == 6 ? IPV6_HLEN : 0) > 0xffff)
		return 0;
	if (l2_len + ip_len > cap)
		return 0;
	return ip_len;
}

static void put_eth(uint8_t *p, const struct ub_pkt_spec *s, uint16_t type)
{
	memcpy(p, s->dst_mac, UB_ETH_ALEN);
	memcpy(p + 6, s->src_mac, UB_ETH_ALEN);
	put16(p + 12, type);
}

size_t ub_build_uboe(const struct ub_pkt_spec *s, void *buf, size_t cap)
{
	bool tagged = s->vlan != UB_VLAN_NONE;
	size_t l2 = ETH_HLEN + (tagged ? VLAN_HLEN : 0);
	uint16_t ip_type = s->ip_ver == 6 ? 0x86dd : 0x0800;
	size_t ip_len = check_spec(s, l2, cap);
	uint8_t *p = buf;

	if (!ip_len)
		return 0;
	if (tagged) {
		put_eth(p, s, 0x8100);
		put16(p + 14, (uint16_t)((s->vlan_pcp & 7) << 13 | (s->vlan_dei ? 0x1000 : 0) |
					 (s->vlan & 0xfff)));
		put16(p + 16, ip_type);
	} else {
		put_eth(p, s, ip_type);
	}
	put_ip_packet(s, p + l2, ip_len);
	return l2 + ip_len;
}

size_t ub_build_native(const struct ub_pkt_spec *s, void *buf, size_t cap)
{
	size_t l2 = ETH_HLEN + UB_NATIVE_HDR_LEN;
	size_t ip_len = check_spec(s, l2, cap);
	uint8_t *p = buf;

	if (!ip_len)
		return 0;
	put_eth(p, s, s->ub_ethertype);
	ub_lph_init((struct ub_lph *)(p + ETH_HLEN),
		    s->ip_ver == 6 ? UB_LPH_CONFIG_IPV6 : UB_LPH_CONFIG_IPV4, s->vl, s->rt);
	ub_nth_init((struct ub_nth *)(p + ETH_HLEN + sizeof(struct ub_lph)),
		    s->cci, s->perm, s->pid & UB_PID_MASK);
	put_ip_packet(s, p + l2, ip_len);
	return l2 + ip_len;
}
