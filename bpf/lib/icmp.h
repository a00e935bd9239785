/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ICMP error that tells a sender its packet is too big for the path:
 * Fragmentation Needed (ICMP 3/4, RFC 1191) and Packet Too Big (ICMPv6 2,
 * RFC 8201). One builder for every program that answers so: the UB2E slow
 * path (bpf/ub2e_tc.bpf.c, once the conversion's headers do not fit) and the
 * WPS ingress (bpf/wps_ingress/mtu.h, once the encapsulation does not).
 */
#ifndef UBXDP_ICMP_H
#define UBXDP_ICMP_H

#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lib/csum.h"

/* The IP and ICMP headers in front of the quote, as they go on the wire. */
struct icmp4_too_big {
	struct iphdr ip;
	__u8 type, code;
	__sum16 csum;
	__be16 unused, mtu;
} __attribute__((packed));

struct icmp6_too_big {
	struct ipv6hdr ip;
	__u8 type, code;
	__sum16 csum;
	__be32 mtu;
} __attribute__((packed));

/*
 * The headers of an answer quoting `qlen` bytes, into `h` whose addresses the
 * caller set (h->ip.saddr, h->ip.daddr) and whose other bytes are zero; the
 * IPv4 header checksum is done. Returns the ICMP checksum's sum so far (the
 * ICMP header; IPv6: and the pseudo-header): the caller adds the quote's sum
 * and stores csum_finish() of the total in h->csum. `tos`: what the answer's
 * IPv4 header carries.
 */
static __always_inline __s64 icmp4_too_big_init(struct icmp4_too_big *h, __u8 tos, __u32 qlen, __u16 mtu)
{
	h->ip.version = 4;
	h->ip.ihl = 5;
	h->ip.tos = tos;
	h->ip.tot_len = bpf_htons(sizeof(*h) + qlen);
	h->ip.ttl = 64;
	h->ip.protocol = IPPROTO_ICMP;
	h->ip.check = csum_finish(bpf_csum_diff(NULL, 0, (__be32 *)(void *)&h->ip, sizeof(h->ip), 0));
	h->type = 3;	/* Destination Unreachable */
	h->code = 4;	/* Fragmentation Needed and DF set */
	h->mtu = bpf_htons(mtu);
	return bpf_csum_diff(NULL, 0, (__be32 *)&h->type, 8, 0);
}

static __always_inline __s64 icmp6_too_big_init(struct icmp6_too_big *h, __u32 qlen, __u32 mtu)
{
	/* the pseudo-header after the addresses: upper-layer length, next header */
	__be32 ph[2] = { bpf_htonl(8 + qlen), bpf_htonl(IPPROTO_ICMPV6) };
	__s64 sum;

	h->ip.version = 6;
	h->ip.payload_len = bpf_htons(8 + qlen);
	h->ip.nexthdr = IPPROTO_ICMPV6;
	h->ip.hop_limit = 64;
	h->type = 2;	/* Packet Too Big */
	h->mtu = bpf_htonl(mtu);
	sum = bpf_csum_diff(NULL, 0, (__be32 *)((void *)h + __builtin_offsetof(struct ipv6hdr, saddr)),
			    2 * sizeof(struct in6_addr), 0);
	sum = bpf_csum_diff(NULL, 0, ph, sizeof(ph), (__wsum)sum);
	return bpf_csum_diff(NULL, 0, (__be32 *)&h->type, 8, (__wsum)sum);
}

#endif
