/* SPDX-License-Identifier: BSD-2-Clause */
/* Kernel FIB lookups for forwarding an IP packet out of XDP. */
#ifndef UBXDP_FIB_H
#define UBXDP_FIB_H

#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

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
