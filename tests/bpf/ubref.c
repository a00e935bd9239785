// SPDX-License-Identifier: BSD-2-Clause
/* Reference decoder of UB frames (see ubref.h): docs/WIRE.md read byte by byte. */
#include "ubref.h"

#include <string.h>
#include <zlib.h>

#define UDP_PORT_UBOE	4792
#define TPH_LEN		16
#define ICRC_LEN	4

/* Where a defect leads: a native frame claims to be UB from its EtherType on. */
static void verdict(struct ref_frame *r, bool ub, enum ref_defect d, const char *why)
{
	r->kind = ub ? REF_DROP : REF_FOREIGN;
	r->defect = ub ? d : REF_NONE;
	r->why = why;
}

static bool martian4(const uint8_t *a, bool *maybe)
{
	/* 0/8 other than 0.0.0.0 and 240/4 other than 255.255.255.255: RFC 1812
	 * names them too, but the issue does not ask for them, so either is fine. */
	*maybe = (a[0] == 0 || a[0] >= 240);
	if (a[0] >= 224 && a[0] <= 239)
		return true;
	if (a[0] == 127)
		return true;
	if (!memcmp(a, "\xff\xff\xff\xff", 4) || !memcmp(a, "\0\0\0\0", 4))
		return true;
	return false;
}

static bool martian6(const uint8_t *a)
{
	static const uint8_t zero[16], one[16] = { [15] = 1 };

	return a[0] == 0xff || !memcmp(a, zero, 16) || !memcmp(a, one, 16);
}

static bool tp_opcode_valid(unsigned op)
{
	/* docs/WIRE.md §3: 0 UTP, 1 RTP, 2 TPACK, 3 TPACK+CETPH, 5, 6 TPSACK, 8 CNP. */
	return op <= 3 || op == 5 || op == 6 || op == 8;
}

/* IP .. TPH at offset `ip`. `ub`: the frame already claimed to be UB. */
static void decode_l3(const uint8_t *f, size_t len, size_t ip, bool ub, struct ref_frame *r)
{
	const uint8_t *p = f + ip;
	size_t avail = len - ip, hlen, u;
	unsigned udp_len;
	bool maybe = false;

	r->l2_len = ip;
	if (!r->v6) {
		unsigned frag;

		if (avail < 20)
			return verdict(r, ub, REF_TRUNCATED, "IPv4 header truncated");
		if (p[0] >> 4 != 4)
			return verdict(r, ub, REF_IP_VERSION, "IP version is not 4");
		if (p[9] != 17)
			return verdict(r, ub, REF_NOT_UB_PAYLOAD, "IPv4 protocol is not UDP");
		frag = ref_get16(p + 6);
		if (frag & 0x1fff)
			return verdict(r, ub, REF_FRAGMENT, "IPv4 later fragment");
		hlen = (size_t)(p[0] & 15) * 4;
		if (hlen != 20) {
			if (hlen < 20)
				return verdict(r, ub, REF_OPTIONS, "IPv4 IHL below 5");
			if (avail < hlen + 8)
				return verdict(r, ub, REF_TRUNCATED, "IPv4 options, UDP truncated");
			if (ub || ref_get16(p + hlen + 2) == UDP_PORT_UBOE)
				return verdict(r, true, REF_OPTIONS, "IPv4 options (IHL != 5)");
			return verdict(r, false, REF_NONE, "IPv4 options, not to 4792");
		}
		r->ip_len = ref_get16(p + 2);
		r->ttl = p[8];
		r->ecn = p[1] & 3;
		r->dscp = p[1] >> 2;
		r->csum_ok = ref_ipv4_csum_ok(p, 20);
		r->martian_src = martian4(p + 12, &maybe);
	} else {
		unsigned tc;

		if (avail < 40)
			return verdict(r, ub, REF_TRUNCATED, "IPv6 header truncated");
		if (p[0] >> 4 != 6)
			return verdict(r, ub, REF_IP_VERSION, "IP version is not 6");
		if (p[6] != 17)
			return verdict(r, ub, REF_NOT_UB_PAYLOAD, "IPv6 next header is not UDP");
		hlen = 40;
		r->ip_len = ref_get16(p + 4) + 40u;
		r->ttl = p[7];
		tc = (p[0] & 15u) << 4 | p[1] >> 4;
		r->ecn = tc & 3;
		r->dscp = tc >> 2;
		r->csum_ok = true;
		r->martian_src = martian6(p + 8);
	}
	r->martian_maybe = maybe;
	u = ip + hlen;
	r->udp_off = u;
	if (avail < hlen + 8)
		return verdict(r, ub, REF_TRUNCATED, "UDP header truncated");
	if (ref_get16(f + u + 2) != UDP_PORT_UBOE)
		return verdict(r, ub, REF_NOT_UB_PAYLOAD, "UDP destination port is not 4792");

	/* UDP to 4792: this is UB now, and every defect is a drop. */
	if (!r->v6 && (ref_get16(p + 6) & 0x2000))
		return verdict(r, true, REF_FRAGMENT, "IPv4 first fragment (MF)");
	if (avail < hlen + 8 + TPH_LEN)
		return verdict(r, true, REF_TRUNCATED, "TPH truncated");
	if (r->ip_len > avail)
		return verdict(r, true, REF_TRUNCATED, "IP length beyond the frame");
	udp_len = ref_get16(f + u + 4);
	if (r->ip_len < hlen || udp_len != r->ip_len - hlen)
		return verdict(r, true, REF_LENGTH, "UDP length disagrees with IP length");
	if (udp_len < 8 + TPH_LEN + ICRC_LEN)
		return verdict(r, true, REF_LENGTH, "no room for UDP, TPH and ICRC");
	r->tp_opcode = f[u + 8] & 0x7f;
	if (!tp_opcode_valid(r->tp_opcode))
		return verdict(r, true, REF_TP_OPCODE, "TP opcode reserved");
	r->icrc_ok = ref_icrc_ok(p, r->ip_len);
	r->kind = REF_VALID;
	r->why = "valid";
}

void ref_decode_native(const uint8_t *f, size_t len, uint16_t ub_ethertype, struct ref_frame *r)
{
	memset(r, 0, sizeof(*r));
	if (len < 14)
		return verdict(r, false, REF_NONE, "no Ethernet header");
	r->ethertype = (uint16_t)ref_get16(f + 12);
	if (r->ethertype != ub_ethertype)
		return verdict(r, false, REF_NONE, "EtherType is not native UB");
	if (len < 14 + 4 + 6)
		return verdict(r, true, REF_TRUNCATED, "LPH/NTH truncated");
	/* LPH: byte 0 ..VL[3], byte 1 VL[2:0].rsv.Config, byte 2 LBMode.RoutePolicy.. */
	r->lph_config = f[15] & 15;
	r->vl = (f[14] & 1u) << 3 | f[15] >> 5;
	r->rt = ((f[16] >> 6) & 1u) << 1 | f[16] >> 7;
	/* NTH: CCI(16), rsv(7).Permission(1), Partition ID(24). */
	r->cci = ref_get16(f + 18);
	r->perm = f[20] & 1;
	r->pid = (uint32_t)f[21] << 16 | (uint32_t)f[22] << 8 | f[23];
	if (r->lph_config != 3 && r->lph_config != 4)
		return verdict(r, true, REF_LPH_CONFIG, "LPH Config is not IPv4/IPv6");
	r->v6 = r->lph_config == 4;
	decode_l3(f, len, 24, true, r);
	if (r->kind == REF_VALID && r->pid == 0)
		verdict(r, true, REF_PARTITION_ZERO, "Partition ID 0");
}

void ref_decode_uboe(const uint8_t *f, size_t len, struct ref_frame *r)
{
	ref_decode_uboe_caqm(f, len, 0, r);
}

void ref_decode_uboe_caqm(const uint8_t *f, size_t len, uint16_t caqm_ethertype, struct ref_frame *r)
{
	size_t off = 14;
	unsigned type;

	memset(r, 0, sizeof(*r));
	if (len < 14)
		return verdict(r, false, REF_NONE, "no Ethernet header");
	type = r->ethertype = (uint16_t)ref_get16(f + 12);
	if (type == 0x8100) {
		if (len < 18)
			return verdict(r, false, REF_NONE, "802.1Q tag truncated");
		r->tagged = true;
		r->tci = ref_get16(f + 14);
		type = ref_get16(f + 16);
		off = 18;
	}
	if (caqm_ethertype && type == caqm_ethertype) {
		if (len < off + 4)
			return verdict(r, false, REF_NONE, "CAQM tag truncated");
		r->caqm_tagged = true;
		r->caqm_info = ref_get16(f + off);
		type = ref_get16(f + off + 2);
		off += 4;
	}
	if (type != 0x0800 && type != 0x86dd)
		return verdict(r, false, REF_NONE, "not IPv4/IPv6");
	r->v6 = type == 0x86dd;
	decode_l3(f, len, off, false, r);
}

bool ref_ipv4_csum_ok(const uint8_t *ip, size_t hlen)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < hlen; i += 2)
		sum += ref_get16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

void ref_ipv4_csum_fix(uint8_t *ip, size_t hlen)
{
	uint32_t sum = 0;

	ip[10] = ip[11] = 0;
	for (size_t i = 0; i + 1 < hlen; i += 2)
		sum += ref_get16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ref_put16(ip + 10, ~sum & 0xffff);
}

uint32_t ref_icrc(const uint8_t *ip, size_t ip_len)
{
	uint8_t m[65536];
	size_t n = ip_len - ICRC_LEN, udp;

	memcpy(m, ip, n);
	/* docs/WIRE.md §2: the fields a switch may change are hashed as all-ones. */
	if (m[0] >> 4 == 4) {
		m[1] = 0xff;			/* ToS */
		m[8] = 0xff;			/* TTL */
		m[10] = m[11] = 0xff;		/* header checksum */
		udp = (size_t)(m[0] & 15) * 4;
	} else {
		m[0] |= 0x0f;			/* traffic class, flow label */
		m[1] = m[2] = m[3] = 0xff;
		m[7] = 0xff;			/* hop limit */
		udp = 40;
	}
	if (udp + 8 <= n)
		m[udp + 6] = m[udp + 7] = 0xff;	/* UDP checksum */
	return (uint32_t)crc32(0, m, (uInt)n);
}

bool ref_icrc_ok(const uint8_t *ip, size_t ip_len)
{
	const uint8_t *s = ip + ip_len - ICRC_LEN;
	uint32_t c;

	if (ip_len < ICRC_LEN)
		return false;
	c = ref_icrc(ip, ip_len);
	return s[0] == (uint8_t)c && s[1] == (uint8_t)(c >> 8) && s[2] == (uint8_t)(c >> 16) &&
	       s[3] == (uint8_t)(c >> 24);
}

void ref_icrc_fix(uint8_t *ip, size_t ip_len)
{
	uint32_t c = ref_icrc(ip, ip_len);
	uint8_t *s = ip + ip_len - ICRC_LEN;

	s[0] = (uint8_t)c;
	s[1] = (uint8_t)(c >> 8);
	s[2] = (uint8_t)(c >> 16);
	s[3] = (uint8_t)(c >> 24);
}
