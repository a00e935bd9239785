/* SPDX-License-Identifier: BSD-2-Clause */
/* In-place edits of the IP fields a UB2E switch may change: ECN and TTL/hop limit. */
#ifndef UBXDP_IP_EDIT_H
#define UBXDP_IP_EDIT_H

#include <linux/ip.h>
#include <linux/ipv6.h>
#include "csum.h"

static __always_inline __u8 ip4_ecn(const struct iphdr *iph) { return iph->tos & 3; }

static __always_inline void ip4_set_ecn(struct iphdr *iph, __u8 ecn)
{
	__be16 *w = (__be16 *)iph;	/* version/IHL and ToS share word 0 */
	__be16 old = *w;

	iph->tos = (iph->tos & ~3) | (ecn & 3);
	csum_replace2(&iph->check, old, *w);
}

static __always_inline void ip4_dec_ttl(struct iphdr *iph)
{
	__be16 *w = (__be16 *)&iph->ttl;	/* TTL and protocol share word 4 */
	__be16 old = *w;

	iph->ttl--;
	csum_replace2(&iph->check, old, *w);
}

/* Traffic class straddles bytes 0-1; its ECN bits are byte 1 bits 5-4. */
static __always_inline __u8 ip6_ecn(const struct ipv6hdr *ip6h)
{
	return (ip6h->flow_lbl[0] >> 4) & 3;
}

static __always_inline void ip6_set_ecn(struct ipv6hdr *ip6h, __u8 ecn)
{
	ip6h->flow_lbl[0] = (ip6h->flow_lbl[0] & ~0x30) | ((ecn & 3) << 4);
}

static __always_inline __u8 ip6_dscp_ecn(const struct ipv6hdr *ip6h)
{
	return (ip6h->priority << 4) | (ip6h->flow_lbl[0] >> 4);
}

#endif
