/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A packet too big for the paths once encapsulated: fragmented (DF=0 IPv4,
 * frag.h), else answered with ICMP Fragmentation Needed / Packet Too Big
 * (lib/icmp.h) delivered back towards the sender, or dropped and counted;
 * and, the other packets not sprayed where they are, those of a flow that
 * takes the segmentation detour (sprayed_elsewhere()).
 */
#ifndef UBXDP_WPS_INGRESS_MTU_H
#define UBXDP_WPS_INGRESS_MTU_H

#include "wps_ingress/parse.h"
#include "wps_ingress/frag.h"
#include "lib/icmp.h"

/*
 * Turn the skb into ICMP Fragmentation Needed / Packet Too Big (MTU = path
 * MTU - 56) quoting its first bytes, and deliver it back into the stack as if
 * it arrived on this device, which routes it to the sender.
 */
static __noinline int mtu_icmp(struct __sk_buff *skb, __u32 mtu, __u8 family)
{
	__u32 zero = 0, len;
	struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	struct scratch *sc = bpf_map_lookup_elem(&wps_in_scratch, &zero);
	struct icmp4_pkt *m4;
	struct icmp6_pkt *m6;
	struct ethhdr eth;
	__sum16 csum;
	__u8 *quote;
	__s64 s;

	if (!cfg || !sc || bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)))
		return -1;
	__builtin_memset(sc->icmp, 0, sizeof(sc->icmp));
	m4 = (void *)sc->icmp;
	m6 = (void *)sc->icmp;
	quote = family == 4 ? m4->quote : m6->quote;
	if (bpf_skb_load_bytes(skb, ETH_HLEN, quote, ICMP_QUOTE))
		return -1;
	/* Back whence it came: the MACs swapped (both layouts start with the Ethernet header). */
	__builtin_memcpy(m4->eth.h_dest, eth.h_source, ETH_ALEN);
	__builtin_memcpy(m4->eth.h_source, eth.h_dest, ETH_ALEN);
	if (family == 4) {
		m4->eth.h_proto = bpf_htons(ETH_P_IP);
		__builtin_memcpy(&m4->h.ip.daddr, quote + 12, 4);	/* the sender */
		if (cfg->icmp_src4)
			m4->h.ip.saddr = cfg->icmp_src4;
		else
			__builtin_memcpy(&m4->h.ip.saddr, quote + 16, 4);
		s = icmp4_too_big_init(&m4->h, 0, ICMP_QUOTE, (__u16)mtu);
		len = sizeof(*m4) - 2;
	} else {
		m6->eth.h_proto = bpf_htons(ETH_P_IPV6);
		__builtin_memcpy(&m6->h.ip.saddr, cfg->src, 16);
		__builtin_memcpy(&m6->h.ip.daddr, quote + 8, 16);	/* the sender */
		s = icmp6_too_big_init(&m6->h, ICMP_QUOTE, mtu);
		len = sizeof(*m6) - 2;
	}
	csum = csum_finish(bpf_csum_diff(NULL, 0, (__be32 *)quote, ICMP_QUOTE, (__wsum)s));
	if (family == 4)
		m4->h.csum = csum;
	else
		m6->h.csum = csum;
	if (bpf_skb_change_tail(skb, len, 0) || bpf_skb_store_bytes(skb, 0, &m4->eth, len, 0))
		return -1;
	return 0;
}

/*
 * A packet too big for the paths once encapsulated. DF=0 IPv4: cut into
 * fragments that take the detour as packets of the flow (the flow takes the
 * detour from now on, so its later packets cannot pass them). Else ICMP
 * Fragmentation Needed / Packet Too Big to the sender (--mtu-drop: a
 * counted drop).
 */
static __always_inline int too_big(struct __sk_buff *skb, const struct wps_in_cfg *cfg, struct wps_in_flow_hot *h,
				   const struct pkt *p, __u32 mtu, bool after_detour)
{
	__u32 ports;
	int rc;

	if (p->key.family == 4 && p->may_frag && cfg->seg_ifindex && mtu > WPS_OVERHEAD) {
		if (!after_detour)
			__sync_fetch_and_or(&h->gs, WPS_GS_DETOUR);
		__builtin_memcpy(&ports, &p->key.sport, 4);
		rc = frag_send(skb, mtu - WPS_OVERHEAD,
			       WPS_IN_CB_MAGIC | (p->has_ports ? WPS_IN_CB_PORTS : 0) | p->in_port, ports);
		if (rc >= 0) {
			cnt(WPS_IN_CNT_TX_FRAGMENTED);
			return rc;
		}
		cnt(WPS_IN_CNT_DROP_FRAG_FAILED);
		return TC_ACT_SHOT;
	}
	if (!(cfg->flags & WPS_IN_F_MTU_DROP) && mtu > WPS_OVERHEAD &&
	    mtu_icmp(skb, mtu - WPS_OVERHEAD, p->key.family) == 0) {
		cnt(WPS_IN_CNT_TX_MTU_ICMP);
		/* Into the stack as if it came in on DEV, whose routes lead back
		 * to the sender (also from the detour, so rp_filter agrees). */
		return bpf_redirect(cfg->dev_ifindex ? cfg->dev_ifindex : skb->ifindex, BPF_F_INGRESS);
	}
	cnt(WPS_IN_CNT_DROP_MTU);
	return TC_ACT_SHOT;
}

/*
 * What sprayed_elsewhere() found, done: the packet of the flow at slot too
 * big for mtu (too_big()), else one that takes the segmentation detour.
 * Global: checked once, and its code is out of the way of the packets
 * sprayed here.
 */
__noinline int spray_elsewhere(struct __sk_buff *skb, int slot, const struct pkt *p, __u32 mtu, int after_detour)
{
	__u32 zero = 0, k = (__u32)slot;
	const struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	struct wps_in_flow_hot *h = bpf_map_lookup_elem(&wps_in_flow_hot, &k);

	if (!cfg || !h || !p)
		return TC_ACT_SHOT;
	if (mtu)
		return too_big(skb, cfg, h, p, mtu, after_detour);
	if (!(*(volatile __u64 *)&h->gs & WPS_GS_DETOUR))
		__sync_fetch_and_or(&h->gs, WPS_GS_DETOUR);
	skb->cb[0] = WPS_IN_CB_MAGIC | p->in_port;
	cnt(WPS_IN_CNT_REDIRECT_SEGMENT);
	return bpf_redirect(cfg->seg_ifindex, 0);
}

/*
 * A packet this run does not spray: too big for the paths once
 * encapsulated (too_big()), or of a flow that takes the segmentation detour
 * (a GSO skb seen, here or before: its later packets follow, in order). Its
 * verdict, else STAGE_NEXT.
 */
static __always_inline int sprayed_elsewhere(struct __sk_buff *skb, const struct wps_in_cfg *cfg,
					     const struct wps_in_live *lv, struct wps_in_flow_hot *h, int slot,
					     const struct pkt *p, __u32 segs, bool after_detour)
{
	/* The smallest path MTU, or less if Packet Too Big taught the watch agent so. */
	__u32 mtu = cfg->path_mtu;

	if (lv && lv->pmtu && lv->pmtu < mtu)
		mtu = lv->pmtu;
	/* Too big after the 56 bytes: fragmented (DF=0 IPv4), else answered here; never lost silently. */
	if (unlikely(segs == 1 && mtu && p->inner_len + WPS_OVERHEAD > mtu))
		return spray_elsewhere(skb, slot, p, mtu, after_detour);
	if (unlikely(!after_detour && cfg->seg_ifindex && (segs > 1 || (*(volatile __u64 *)&h->gs & WPS_GS_DETOUR))))
		return spray_elsewhere(skb, slot, p, 0, 0);
	return STAGE_NEXT;
}

#endif
