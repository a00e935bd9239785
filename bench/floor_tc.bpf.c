// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * TC floors for the WPS ingress bench: parse Eth/IP/UDP (the headers the
 * ingress classifies on) and pass; and a program that only returns, whose
 * time is what BPF_PROG_RUN's own timing adds to a single run.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lib/parse.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* floor_flow_lines' entries, a power of two (wps_bench sets both) */
const volatile __u32 flow_lines = 1;

SEC("tc")
int floor_tc_parse(struct __sk_buff *skb)
{
	struct hdr_cursor c = { (void *)(long)skb->data, (void *)(long)skb->data_end };
	struct ethhdr *eth;
	struct udphdr *udph;
	struct ipv6hdr *ip6;
	struct iphdr *iph;
	int proto = parse_ethhdr(&c, &eth);

	if (proto == bpf_htons(ETH_P_IP)) {
		if (parse_iphdr(&c, &iph) != IPPROTO_UDP)
			return TC_ACT_UNSPEC;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		if (parse_ip6hdr(&c, &ip6) != IPPROTO_UDP)
			return TC_ACT_UNSPEC;
	} else {
		return TC_ACT_UNSPEC;
	}
	if (parse_udphdr(&c, &udph) < 0)
		return TC_ACT_UNSPEC;
	return TC_ACT_OK;
}

/*
 * The encapsulation alone, as the ingress does it: room for the 56 bytes
 * (bpf_skb_adjust_room, ENCAP_L3_IPV6), 70 bytes of Eth + outer IPv6 +
 * options header written, redirect. What the ingress cannot go below.
 */
static const __u8 encap_hdr[70] = { 2, 0, 0, 0xc, 0, 1, 2, 0, 0, 0xb, 0, 1, 0x86, 0xdd, 0x60 };

SEC("tc")
int floor_tc_encap(struct __sk_buff *skb)
{
	__u8 hdr[70];

	__builtin_memcpy(hdr, encap_hdr, sizeof(hdr));
	if (bpf_skb_adjust_room(skb, 56, BPF_ADJ_ROOM_MAC, BPF_F_ADJ_ROOM_ENCAP_L3_IPV6) ||
	    bpf_skb_store_bytes(skb, 0, hdr, sizeof(hdr), 0))
		return TC_ACT_SHOT;
	return bpf_redirect(100, 0);
}

/*
 * The encapsulation and one 64-byte line of per-flow state: what a program
 * that keeps anything per flow cannot go below when the flows are many and
 * their lines cold (--flows). The line is found by a hash of the addresses
 * and ports (as many lines as the ingress's flow_hot slots, set by wps_bench;
 * page-aligned the same way), read, and a byte of it written into the header.
 */
struct flow_line {
	__u64 w[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct flow_line);
} floor_flow_lines SEC(".maps");

SEC("tc")
int floor_tc_encap_flow(struct __sk_buff *skb)
{
	struct hdr_cursor c = { (void *)(long)skb->data, (void *)(long)skb->data_end };
	__u32 a[9] = {}, h = 0x9e3779b9, k;
	struct flow_line *l;
	struct ethhdr *eth;
	struct udphdr *udph;
	struct ipv6hdr *ip6;
	struct iphdr *iph;
	__u8 hdr[70];
	int proto = parse_ethhdr(&c, &eth);

	if (proto == bpf_htons(ETH_P_IP)) {
		if (parse_iphdr(&c, &iph) != IPPROTO_UDP)
			return TC_ACT_UNSPEC;
		a[0] = iph->saddr;
		a[1] = iph->daddr;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		if (parse_ip6hdr(&c, &ip6) != IPPROTO_UDP)
			return TC_ACT_UNSPEC;
		__builtin_memcpy(a, &ip6->saddr, 32);
	} else {
		return TC_ACT_UNSPEC;
	}
	if (parse_udphdr(&c, &udph) < 0)
		return TC_ACT_UNSPEC;
	a[8] = (__u32)udph->source << 16 | udph->dest;
	for (int i = 0; i < 9; i++)
		h = (h ^ a[i]) * 0x01000193;
	k = (h ^ h >> 15) & (flow_lines - 1);
	l = bpf_map_lookup_elem(&floor_flow_lines, &k);
	if (!l)
		return TC_ACT_SHOT;
	__builtin_memcpy(hdr, encap_hdr, sizeof(hdr));
	hdr[15] = (__u8)l->w[0];
	if (bpf_skb_adjust_room(skb, 56, BPF_ADJ_ROOM_MAC, BPF_F_ADJ_ROOM_ENCAP_L3_IPV6) ||
	    bpf_skb_store_bytes(skb, 0, hdr, sizeof(hdr), 0))
		return TC_ACT_SHOT;
	return bpf_redirect(100, 0);
}

SEC("tc")
int tc_null(struct __sk_buff *skb)
{
	(void)skb;
	return TC_ACT_OK;
}
