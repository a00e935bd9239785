// SPDX-License-Identifier: BSD-2-Clause
/*
 * Test helper, not a WPS egress: strips the outer IPv6 header and the
 * 16-byte options header holding the WPS option, so the namespace tests can
 * run real TCP through the ingress without depending on the egress. No
 * reordering, no validation beyond recognising the layout of docs/WIRE.md §6.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "wps_opt.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int wps_decap(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data, copy;
	struct ipv6hdr *ip6 = data + sizeof(*eth);
	struct wps_exthdr *x = (void *)(ip6 + 1);

	if ((void *)(x + 1) > end || eth->h_proto != bpf_htons(ETH_P_IPV6))
		return XDP_PASS;
	if ((ip6->nexthdr != WPS_IPPROTO_DSTOPTS && ip6->nexthdr != WPS_IPPROTO_HOPOPTS) ||
	    x->hdrlen != WPS_EXTHDR_HDRLEN || x->opt.type != WPS_OPT_TYPE)
		return XDP_PASS;
	if (x->nexthdr != WPS_IPPROTO_IPIP && x->nexthdr != WPS_IPPROTO_IPV6)
		return XDP_PASS;
	copy = *eth;
	copy.h_proto = bpf_htons(x->nexthdr == WPS_IPPROTO_IPIP ? ETH_P_IP : ETH_P_IPV6);
	if (bpf_xdp_adjust_head(ctx, WPS_OVERHEAD))
		return XDP_DROP;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) > end)
		return XDP_DROP;
	*eth = copy;
	return XDP_PASS;
}
