// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test helper: TC egress on a sender's veth that gives every frame an 802.1Q
 * tag (VLAN 100) in skb metadata, as a VLAN device over a port with
 * tx-vlan-offload does (this host has no 8021q). The veth peer then receives
 * the tag stripped into offload metadata, outside the frame XDP sees.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tc")
int vlan_push(struct __sk_buff *skb)
{
	if (!skb->vlan_present)
		bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021Q), 100);
	return TC_ACT_OK;
}
