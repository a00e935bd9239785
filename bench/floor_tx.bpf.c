// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark floor (b): parse Eth/IPv4/UDP, swap the MACs, XDP_TX. The cost of
 * touching the headers and returning a verdict, without any lookup.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lib/parse.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp.frags")
int floor_tx(struct xdp_md *ctx)
{
	struct hdr_cursor c = { (void *)(long)ctx->data, (void *)(long)ctx->data_end };
	unsigned char tmp[ETH_ALEN];
	struct ethhdr *eth;
	struct udphdr *udph;
	struct iphdr *iph;

	if (parse_ethhdr(&c, &eth) != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	if (parse_iphdr(&c, &iph) != IPPROTO_UDP || iph->ihl != 5)
		return XDP_PASS;
	if (parse_udphdr(&c, &udph) < 0)
		return XDP_PASS;

	__builtin_memcpy(tmp, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, tmp, ETH_ALEN);
	return XDP_TX;
}
