// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A control for the WPS ingress's goodput (bench/wps_cells.sh, cell "spread"):
 * the plain route's IPv4 packets on wan0's egress spread over the four paths
 * as the ingress spreads its groups (a path for every SPREAD_PER wire packets,
 * switched at skb boundaries, round robin), not encapsulated and no program on
 * the far side's way but the decapsulator's pass: what spreading one TCP flow
 * over the bench's veth paths costs by itself.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* About the packets of a group of the ingress's in the bench (its quantum 16, extended at the in-flight bound). */
#define SPREAD_PER 256
#define SPREAD_PATHS 4

struct spread_path {
	__u32 ifindex;		/* 0: the path is wan0 itself */
	__u8 macs[12];		/* destination, source */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SPREAD_PATHS);
	__type(key, __u32);
	__type(value, struct spread_path);
} spread_paths SEC(".maps");

static __u64 spread_sent;

SEC("tc")
int spread_tc(struct __sk_buff *skb)
{
	__u64 n = __sync_fetch_and_add(&spread_sent, skb->gso_segs > 1 ? skb->gso_segs : 1);
	__u32 i = (__u32)(n / SPREAD_PER % SPREAD_PATHS);
	struct spread_path *p;

	if (skb->protocol != bpf_htons(ETH_P_IP))
		return TC_ACT_UNSPEC;
	p = bpf_map_lookup_elem(&spread_paths, &i);
	if (!p || !p->ifindex)
		return TC_ACT_UNSPEC;
	if (bpf_skb_store_bytes(skb, 0, p->macs, sizeof(p->macs), 0))
		return TC_ACT_SHOT;
	return bpf_redirect(p->ifindex, 0);
}
