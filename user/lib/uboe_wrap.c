// SPDX-License-Identifier: BSD-2-Clause
#include "lib/uboe_wrap.h"

#include <string.h>

#include "lib/icrc.h"
#include "lib/frame.h"
#include "ub_wire.h"

size_t uboe_wrap_hdr_len(uint8_t ip_ver)
{
	return ip_ver == 6 ? 14 + 40 + 8 : 14 + 20 + 8;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

size_t uboe_wrap_flow_hdr_len(const struct uboe_flow *f)
{
	return uboe_wrap_hdr_len(f->ip_ver) + (f->ub_ethertype ? UB_NATIVE_HDR_LEN : 0);
}

size_t uboe_wrap(uint8_t *frame, size_t tp_len, const struct uboe_flow *f)
{
	size_t l2 = f->ub_ethertype ? 14 + UB_NATIVE_HDR_LEN : 14;
	size_t ip_len = uboe_wrap_hdr_len(f->ip_ver) - 14 + tp_len + UBOE_ICRC_LEN;
	size_t udp_len = 8 + tp_len + UBOE_ICRC_LEN;
	uint8_t *ip = frame + l2, *udp;
	uint8_t tos = (uint8_t)((f->dscp & 0x3f) << 2 | (f->ecn & 3));

	if ((f->ip_ver != 4 && f->ip_ver != 6) || ip_len > 65535 || (f->ctp && !f->ub_ethertype))
		return 0;
	memcpy(frame, f->dst_mac, 6);
	memcpy(frame + 6, f->src_mac, 6);
	if (f->ub_ethertype) {
		put16(frame + 12, f->ub_ethertype);
		ub_lph_init((struct ub_lph *)(frame + 14),
			    f->ip_ver == 6 ? UB_LPH_CONFIG_IPV6 : UB_LPH_CONFIG_IPV4, f->vl, f->rt);
		ub_lph_set_lbf((struct ub_lph *)(frame + 14), f->lbf);
		ub_nth_init((struct ub_nth *)(frame + 14 + sizeof(struct ub_lph)), f->cci, f->perm,
			    f->pid & UB_PID_MASK);
	} else {
		put16(frame + 12, f->ip_ver == 6 ? 0x86dd : 0x0800);
	}
	if (f->ip_ver == 4) {
		ip[0] = 0x45;
		ip[1] = tos;
		put16(ip + 2, (uint16_t)ip_len);
		put16(ip + 4, 0);		/* ID: DF packets are never fragmented */
		put16(ip + 6, 0x4000);		/* DF */
		ip[8] = f->ttl ? f->ttl : UBOE_DEFAULT_TTL;
		ip[9] = 17;
		put16(ip + 10, 0);
		memcpy(ip + 12, f->src_ip, 4);
		memcpy(ip + 16, f->dst_ip, 4);
		put16(ip + 10, ub_ipv4_csum(ip, 20));
		udp = ip + 20;
	} else {
		uint32_t w = 6u << 28 | (uint32_t)tos << 20 | (f->flow_label & 0xfffff);

		put16(ip, (uint16_t)(w >> 16));
		put16(ip + 2, (uint16_t)w);
		put16(ip + 4, (uint16_t)udp_len);
		ip[6] = 17;
		ip[7] = f->ttl ? f->ttl : UBOE_DEFAULT_TTL;
		memcpy(ip + 8, f->src_ip, 16);
		memcpy(ip + 24, f->dst_ip, 16);
		udp = ip + 40;
	}
	put16(udp, f->sport);
	put16(udp + 2, f->ctp ? UB_CTP_UDP_PORT : UBOE_UDP_PORT);
	put16(udp + 4, (uint16_t)udp_len);
	put16(udp + 6, 0);	/* docs/WIRE.md §1: the ICRC protects UBoE, not the UDP checksum */
	ub_icrc_put(ip, ip_len);
	return l2 + ip_len;
}

uint16_t uboe_entropy_port(uint32_t a, uint32_t b)
{
	uint32_t h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u) * 0x85ebca6bu;

	h ^= h >> 15;
	h *= 0xc2b2ae35u;
	h ^= h >> 13;
	return (uint16_t)(0xc000 | (h & 0x3fff));
}
