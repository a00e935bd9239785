// SPDX-License-Identifier: BSD-2-Clause
/*
 * WPS boundary filter (draft-wps-ipv6-option, Domain Isolation), on the
 * domain's edge interfaces: TC ingress drops WPS packets entering from
 * outside, TC egress stops them before they leave. A packet carries the
 * option when any Hop-by-Hop or Destination Options header of its outer
 * IPv6 chain, behind any other extension headers, holds option type 0x81.
 * A chain too long to walk is passed and counted (IPv6 allows it; the
 * option-type encoding is the second line of defence).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <stdbool.h>

#include "wps_opt.h"
#include "wps_ingress.h"
#include "lib/ip6_chain.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WPS_BND_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} wps_bnd_stats SEC(".maps");

static __always_inline void cnt(__u32 id)
{
	__u64 *v = bpf_map_lookup_elem(&wps_bnd_stats, &id);

	if (v)
		*v += 1;
}

static __always_inline int filter(struct __sk_buff *skb, bool in)
{
	struct ip6_chain c;
	__be16 proto;
	__u8 nh;

	cnt(in ? WPS_BND_CNT_RX_IN : WPS_BND_CNT_RX_OUT);
	if (bpf_skb_load_bytes(skb, 12, &proto, 2) || proto != bpf_htons(ETH_P_IPV6) ||
	    bpf_skb_load_bytes(skb, ETH_HLEN + 6, &nh, 1))
		goto pass;
	ip6_walk(skb, ETH_HLEN, nh, &c);
	if (c.wps) {
		cnt(in ? WPS_BND_CNT_DROP_IN : WPS_BND_CNT_DROP_OUT);
		return TC_ACT_SHOT;
	}
	if (c.too_long)
		cnt(WPS_BND_CNT_EV_TOO_DEEP);
pass:
	cnt(in ? WPS_BND_CNT_PASS_IN : WPS_BND_CNT_PASS_OUT);
	/* No verdict: the next program on the hook has its turn (tcx stops at
	 * the first verdict, before any clsact filter), else the kernel passes it. */
	return TC_ACT_UNSPEC;
}

SEC("tc")
int wps_boundary_in(struct __sk_buff *skb)
{
	return filter(skb, true);
}

SEC("tc")
int wps_boundary_out(struct __sk_buff *skb)
{
	return filter(skb, false);
}
