// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UB2E switch, the slow path (TC on the same two ports as the XDP programs).
 *
 * What XDP cannot finish — neighbour not resolved, too big for the egress MTU,
 * TTL expired, addressed to the switch — it hands to the kernel as the plain IP
 * packet, with the NPI in 4 bytes of XDP metadata (ub2e_punt()). The kernel
 * does what routers do: resolves the neighbour and queues the packet meanwhile,
 * answers with ICMP, delivers locally. Whatever it then sends out of a switch
 * port is converted here on egress, from skb->mark:
 *
 *   ub2e_slow_in   both ports: XDP metadata -> skb->mark
 *   ub2e_slow_ip   IP-side port: marked IP packet -> UBoE with the NPI's VLAN
 *   ub2e_slow_ub   UB-side port: marked IP packet -> Eth | LPH | NTH | IP;
 *                  an unmarked UBoE packet never reaches the UB segment
 *
 * Converting on egress rather than redirecting from ingress with
 * bpf_redirect_neigh() is what lets the kernel queue the first packets while it
 * resolves ARP/ND: the neighbour layer writes only an Ethernet header for the
 * skb's protocol, so LPH+NTH could not be written before it.
 */
#include "ub2e_common.bpf.h"
#include <linux/pkt_cls.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tc")
int ub2e_slow_in(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	__u32 *meta = (void *)(long)skb->data_meta;

	if ((void *)(meta + 1) > data)
		return TC_ACT_OK;
	if ((*meta & UB2E_MARK_MAGIC_MASK) == UB2E_MARK_MAGIC)
		skb->mark = *meta;
	return TC_ACT_OK;
}

static __always_inline bool ub2e_marked(const struct __sk_buff *skb)
{
	return (skb->mark & UB2E_MARK_MAGIC_MASK) == UB2E_MARK_MAGIC;
}

static __always_inline bool skb_is_ip(const struct __sk_buff *skb)
{
	return skb->protocol == bpf_htons(ETH_P_IP) || skb->protocol == bpf_htons(ETH_P_IPV6);
}

SEC("tc")
int ub2e_slow_ip(struct __sk_buff *skb)
{
	const struct ub2e_cfg *cfg = ub2e_config();
	struct {
		__be16 tpid;
		struct vlan_tag tag;
	} __attribute__((packed)) h;
	int vid;

	if (!cfg || !skb_is_ip(skb) || !ub2e_marked(skb))
		return TC_ACT_OK;
	vid = ub2e_npi_to_vlan(cfg, skb->mark & UB_PID_MASK, (skb->mark >> UB2E_MARK_PERM_SHIFT) & 1);
	if (vid < 0) {
		count(UB2E_CNT_SLOW_DROP_VLAN);
		return TC_ACT_SHOT;
	}
	if (vid) {
		/* The tag goes between the MACs and the EtherType, in the frame
		 * itself, so that every receiver sees it (not only an offload). */
		h.tpid = bpf_htons(ETH_P_8021Q);
		h.tag.tci = bpf_htons(vid);
		h.tag.proto = skb->protocol;
		if (bpf_skb_adjust_room(skb, sizeof(struct vlan_tag), BPF_ADJ_ROOM_MAC, 0) ||
		    bpf_skb_store_bytes(skb, 2 * ETH_ALEN, &h, sizeof(h), 0)) {
			count(UB2E_CNT_SLOW_DROP_ADJUST);
			return TC_ACT_SHOT;
		}
	}
	count(UB2E_CNT_SLOW_TX_UBOE);
	return TC_ACT_OK;
}

/* Is this IP packet UBoE (UDP to 4792)? Only the ports are needed. */
static __always_inline bool skb_is_uboe(struct __sk_buff *skb)
{
	__u32 off = sizeof(struct ethhdr);
	__be16 dport;
	__u8 b[2];

	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		if (bpf_skb_load_bytes(skb, off, b, 1) || bpf_skb_load_bytes(skb, off + 9, b + 1, 1))
			return false;
		if (b[1] != IPPROTO_UDP)
			return false;
		off += (b[0] & 0xf) * 4;
	} else {
		if (bpf_skb_load_bytes(skb, off + 6, b, 1) || b[0] != IPPROTO_UDP)
			return false;
		off += sizeof(struct ipv6hdr);
	}
	if (bpf_skb_load_bytes(skb, off + 2, &dport, sizeof(dport)))
		return false;
	return dport == bpf_htons(UBOE_UDP_PORT);
}

SEC("tc")
int ub2e_slow_ub(struct __sk_buff *skb)
{
	const struct ub2e_cfg *cfg = ub2e_config();
	struct {
		__be16 proto;
		struct ub_lph lph;
		struct ub_nth nth;
	} __attribute__((packed)) h;
	__u32 mtu = 0, m = skb->mark;
	bool v6;

	if (!cfg || !skb_is_ip(skb))
		return TC_ACT_OK;
	if (!ub2e_marked(skb)) {
		/* The kernel's own traffic (ICMP, ping, ARP/ND) stays IP; UBoE
		 * that did not come through the switch never reaches UB as it is. */
		if (skb_is_uboe(skb)) {
			count(UB2E_CNT_SLOW_DROP_UNCONVERTED);
			return TC_ACT_SHOT;
		}
		return TC_ACT_OK;
	}
	/* The kernel checked the bare IP length; LPH+NTH must fit as well. */
	if (bpf_check_mtu(skb, skb->ifindex, &mtu, UB_NATIVE_HDR_LEN, 0)) {
		count(UB2E_CNT_SLOW_DROP_TOO_BIG);
		return TC_ACT_SHOT;
	}
	v6 = skb->protocol == bpf_htons(ETH_P_IPV6);
	h.proto = bpf_htons(cfg->ub_ethertype);
	ub_lph_init(&h.lph, v6 ? UB_LPH_CONFIG_IPV6 : UB_LPH_CONFIG_IPV4, cfg->vl, cfg->rt);
	ub_nth_init(&h.nth, ub_cci_make_fecn((m >> UB2E_MARK_FECN_SHIFT) & 3, 0),
		    (m >> UB2E_MARK_PERM_SHIFT) & 1, m & UB_PID_MASK);
	if (bpf_skb_adjust_room(skb, UB_NATIVE_HDR_LEN, BPF_ADJ_ROOM_MAC, 0) ||
	    bpf_skb_store_bytes(skb, 2 * ETH_ALEN, &h, sizeof(h), 0)) {
		count(UB2E_CNT_SLOW_DROP_ADJUST);
		return TC_ACT_SHOT;
	}
	count(UB2E_CNT_SLOW_TX_UB);
	return TC_ACT_OK;
}
