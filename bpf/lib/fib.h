/* SPDX-License-Identifier: BSD-2-Clause */
/* Kernel FIB lookups for forwarding an IP packet out of XDP. */
#ifndef UBXDP_FIB_H
#define UBXDP_FIB_H

#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include "compat.h"

/*
 * `grow`: bytes the packet gains on the way out above L2 (a UB2E switch adds
 * LPH+NTH), so the route MTU is checked against the size that will leave.
 */
static __always_inline int fib_lookup_ip4(void *ctx, struct bpf_fib_lookup *p, __u32 ifindex,
					  const struct iphdr *iph, const struct udphdr *udph, __u16 grow)
{
	__builtin_memset(p, 0, sizeof(*p));
	p->family = AF_INET;
	p->tos = iph->tos;
	p->l4_protocol = iph->protocol;
	p->sport = udph->source;
	p->dport = udph->dest;
	p->tot_len = bpf_ntohs(iph->tot_len) + grow;
	p->ipv4_src = iph->saddr;
	p->ipv4_dst = iph->daddr;
	p->ifindex = ifindex;
	return bpf_fib_lookup(ctx, p, sizeof(*p), 0);
}

/*
 * fib_lookup_ip4() for a UDP packet (the caller checked the protocol), with
 * the parameters written as their eight 64-bit words: every byte the helper
 * reads is written once, instead of zeroing 64 bytes and then storing nine
 * fields over them (17 stores). Little-endian layout; the UB2E conversions
 * use it, the floor keeps xdp_fwd's memset and fields.
 */
static __always_inline int fib_lookup_ip4_udp(void *ctx, struct bpf_fib_lookup *p, __u32 ifindex,
					      const struct iphdr *iph, __be32 saddr,
					      const struct udphdr *udph, __u16 grow)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	typedef __u64 __attribute__((may_alias)) word;
	word *w = (word *)p;

	_Static_assert(sizeof(*p) == 8 * sizeof(word), "struct bpf_fib_lookup is 64 bytes");
	/* family, l4_protocol | sport, dport (as in the packet) | tot_len */
	w[0] = AF_INET | IPPROTO_UDP << 8 | (__u64)udph->source << 16 | (__u64)udph->dest << 32 |
	       (__u64)(bpf_ntohs(iph->tot_len) + grow) << 48;
	/* ifindex | tos, the rest of flowinfo 0 */
	w[1] = ifindex | (__u64)iph->tos << 32;
	w[2] = saddr;		/* the caller's copy of iph->saddr; the rest of ipv6_src 0 */
	w[3] = 0;
	w[4] = iph->daddr;
	w[5] = 0;
	w[6] = 0;		/* VLAN, tbid: outputs */
	w[7] = 0;		/* mark (not asked for), MACs: outputs */
	return bpf_fib_lookup(ctx, p, sizeof(*p), 0);
#else
	return fib_lookup_ip4(ctx, p, ifindex, iph, udph, grow);
#endif
}

static __always_inline int fib_lookup_ip6(void *ctx, struct bpf_fib_lookup *p, __u32 ifindex,
					  const struct ipv6hdr *ip6h, const struct udphdr *udph, __u16 grow)
{
	__builtin_memset(p, 0, sizeof(*p));
	p->family = AF_INET6;
	p->flowinfo = *(const __be32 *)ip6h & bpf_htonl(0x0fffffff);
	p->l4_protocol = ip6h->nexthdr;
	p->sport = udph->source;
	p->dport = udph->dest;
	p->tot_len = bpf_ntohs(ip6h->payload_len) + sizeof(*ip6h) + grow;
	__builtin_memcpy(p->ipv6_src, &ip6h->saddr, sizeof(p->ipv6_src));
	__builtin_memcpy(p->ipv6_dst, &ip6h->daddr, sizeof(p->ipv6_dst));
	p->ifindex = ifindex;
	return bpf_fib_lookup(ctx, p, sizeof(*p), 0);
}

#endif
