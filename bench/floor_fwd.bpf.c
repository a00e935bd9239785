// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark floor (a): an xdp_fwd-style forwarder (samples/bpf/xdp_fwd_kern.c),
 * built from the same parse cursor and FIB helper as the UB2E programs: parse
 * Eth/IP/UDP, bpf_fib_lookup, check the egress port is in our devmap,
 * decrement TTL / hop limit, rewrite MACs, XDP_REDIRECT through the devmap.
 * What it cannot forward goes to the kernel (XDP_PASS). IPv4 is the floor of
 * the issue; IPv6, as in xdp_fwd, is there so that the IPv6 conversions have
 * a floor with the same (dearer) FIB lookup.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lib/parse.h"
#include "lib/ip_edit.h"
#include "lib/fib.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Same map type and size as ub2e_tx_ip / ub2e_tx_ub, so the redirect costs the same. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} floor_tx_ports SEC(".maps");

/* After a successful lookup, in xdp_fwd's order: port check, TTL, MACs, redirect. */
static __always_inline int forward(struct ethhdr *eth, struct bpf_fib_lookup *fib,
				   struct iphdr *iph, struct ipv6hdr *ip6h)
{
	if (!bpf_map_lookup_elem(&floor_tx_ports, &fib->ifindex))
		return XDP_PASS;
	if (iph)
		ip4_dec_ttl(iph);
	else
		ip6h->hop_limit--;
	__builtin_memcpy(eth->h_dest, fib->dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, fib->smac, ETH_ALEN);
	return bpf_redirect_map(&floor_tx_ports, fib->ifindex, 0);
}

SEC("xdp.frags")
int floor_fwd(struct xdp_md *ctx)
{
	struct hdr_cursor c = { (void *)(long)ctx->data, (void *)(long)ctx->data_end };
	struct bpf_fib_lookup fib;
	struct ethhdr *eth;
	struct udphdr *udph;
	int proto = parse_ethhdr(&c, &eth);

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph;

		if (parse_iphdr(&c, &iph) != IPPROTO_UDP || iph->ihl != 5)
			return XDP_PASS;
		if (parse_udphdr(&c, &udph) < 0 || iph->ttl <= 1)
			return XDP_PASS;
		if (fib_lookup_ip4(ctx, &fib, ctx->ingress_ifindex, iph, udph, 0) != BPF_FIB_LKUP_RET_SUCCESS)
			return XDP_PASS;
		return forward(eth, &fib, iph, NULL);
	}
	if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h;

		if (parse_ip6hdr(&c, &ip6h) != IPPROTO_UDP)
			return XDP_PASS;
		if (parse_udphdr(&c, &udph) < 0 || ip6h->hop_limit <= 1)
			return XDP_PASS;
		if (fib_lookup_ip6(ctx, &fib, ctx->ingress_ifindex, ip6h, udph, 0) != BPF_FIB_LKUP_RET_SUCCESS)
			return XDP_PASS;
		return forward(eth, &fib, NULL, ip6h);
	}
	return XDP_PASS;
}
