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

/* A detoured skb's wire packets added to its flow's count of those sent
 * into the detour, where it starts kept in cb[2]. 0, or 1 without the
 * flow's counts. */
__noinline int detour_count(struct __sk_buff *skb, int slot)
{
	__u32 k = (__u32)slot;
	struct wps_in_flow_det *f = bpf_map_lookup_elem(&wps_in_flow_det, &k);

	if (!skb || !f)
		return 1;
	skb->cb[2] = __sync_fetch_and_add(&f->sent, skb->gso_segs > 1 ? skb->gso_segs : 1);
	return 0;
}

/*
 * A packet too big for the paths once encapsulated. DF=0 IPv4: cut into
 * fragments that take the detour as packets of the flow (all the flow's
 * packets take the detour from now on, so its later packets cannot pass
 * them: fragments are not counted in wps_in_flow_det). Else ICMP
 * Fragmentation Needed / Packet Too Big to the sender (--mtu-drop: a
 * counted drop).
 */
static __always_inline int too_big(struct __sk_buff *skb, const struct wps_in_cfg *cfg, struct wps_in_flow_hot *h,
				   const struct pkt *p, __u32 mtu)
{
	__u32 ports;
	int rc;

	if (p->key.family == 4 && p->may_frag && cfg->seg_ifindex && mtu > WPS_OVERHEAD) {
		/* Even a segment back from the detour: its fragments go round it
		 * again, counted nowhere, and the flow's next packet on DEV must
		 * not pass them. */
		__sync_fetch_and_or(&h->gs, WPS_GS_DETOUR_ALL);
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
__noinline int spray_elsewhere(struct __sk_buff *skb, int slot, const struct pkt *p, __u32 mtu)
{
	__u32 zero = 0, k = (__u32)slot;
	const struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	struct wps_in_flow_hot *h = bpf_map_lookup_elem(&wps_in_flow_hot, &k);

	if (!cfg || !h || !p)
		return TC_ACT_SHOT;
	if (mtu)
		return too_big(skb, cfg, h, p, mtu);
	if (!(*(volatile __u64 *)&h->gs & WPS_GS_DETOUR))
		__sync_fetch_and_or(&h->gs, WPS_GS_DETOUR);
	/* Its wire packets count as in the detour until its program has them
	 * (detour_handled()). A call of its own: this frame stays within the
	 * 32 bytes that keep the fragmenting chain under it (frag_send,
	 * frag_l4_csum) inside 6.1's 512 bytes with the program's. */
	if (detour_count(skb, slot))
		return TC_ACT_SHOT;
	skb->cb[0] = WPS_IN_CB_MAGIC | WPS_IN_CB_COUNTED | p->in_port;
	cnt(WPS_IN_CNT_REDIRECT_SEGMENT);
	return bpf_redirect(cfg->seg_ifindex, 0);
}

/*
 * Does the flow at slot have wire packets in the detour that its program
 * has not handled yet? Then none of its packets may be sprayed from DEV: on
 * its path it would pass them. Sound where it matters: the detour's
 * receiving end spreads by the flow's hash (RPS over all CPUs, as the site
 * side's RPS or a NIC's RSS does), so a forwarded flow's packets on DEV and
 * its detour backlog are on one CPU, where DEV's program and the backlog's
 * never interleave: done counts a packet before it is sent, and what DEV
 * sprays after reading sent == done follows the last one out. A flow
 * forwarded on another CPU than its detour's (another RPS mask) keeps its
 * order but for the last detoured packet's transmit racing the next whole
 * skb's; a locally sent flow whose socket moves CPUs likewise: a non-zero
 * count sends its next packets through the detour after the others, a zero
 * one means the detour holds none of them. A packet the backlog dropped
 * never counts as handled: the next detoured skb's first packet skips done
 * to where that skb starts, so such a flow takes the detour only until one
 * more skb has crossed it.
 */
static __always_inline bool detour_busy(int slot)
{
	__u32 k = (__u32)slot;
	struct wps_in_flow_det *f = bpf_map_lookup_elem(&wps_in_flow_det, &k);

	return !f || *(volatile __u32 *)&f->sent != *(volatile __u32 *)&f->done;
}

/*
 * After the detour: a wire packet of a GSO skb from DEV counted handled, the
 * packets of the skbs before its own too (handled or dropped by the backlog
 * on the way: the backlog is in order). Global, as gso_detour().
 */
__noinline int detour_handled(struct __sk_buff *skb, int slot)
{
	__u32 k = (__u32)slot, start, done;
	struct wps_in_flow_det *f;

	if (!skb || (skb->cb[0] & (WPS_IN_CB_MAGIC_MASK | WPS_IN_CB_COUNTED)) != (WPS_IN_CB_MAGIC | WPS_IN_CB_COUNTED))
		return 0;
	start = skb->cb[2];
	f = bpf_map_lookup_elem(&wps_in_flow_det, &k);
	if (!f)
		return 0;
	done = *(volatile __u32 *)&f->done;
	if ((__s32)(start - done) > 0)
		done = start;
	*(volatile __u32 *)&f->done = done + 1;
	return 0;
}

/*
 * May a GSO skb of segs segments go whole (encapsulated with the sender's
 * segment size: each wire packet its segment + 56 bytes)? TCP only (the
 * kind whose segmentation through the IPv6 tunnel offload was checked), its
 * segments within mtu (their headers read from the packet: an inner IPv6
 * header with extension headers goes round the detour), its outer payload
 * length within 16 bits.
 */
static __always_inline bool whole_fits(struct __sk_buff *skb, const struct pkt *p, __u32 segs, __u32 mtu)
{
	__u32 gsz = skb->gso_size, l4 = ETH_HLEN + 40;
	__u8 b = 0;

	if (!gsz || segs > 0xffff || p->key.proto != IPPROTO_TCP || p->inner_len + WPS_EXTHDR_LEN > 0xffff)
		return false;
	if (p->key.family == 4) {
		if (bpf_skb_load_bytes(skb, ETH_HLEN, &b, 1))
			return false;
		l4 = ETH_HLEN + (b & 0xf) * 4;
	} else if (bpf_skb_load_bytes(skb, ETH_HLEN + 6, &b, 1) || b != IPPROTO_TCP) {
		return false;
	}
	if (bpf_skb_load_bytes(skb, l4 + 12, &b, 1))
		return false;
	return !mtu || l4 - ETH_HLEN + (b >> 4) * 4 + gsz + WPS_OVERHEAD <= mtu;
}

/*
 * Does this packet of the flow at slot take the detour: its fragments did,
 * the detour holds some of its packets, or it is a GSO skb that cannot go
 * whole? Global: checked once, off the path of a flow that never took the
 * detour, and its stack apart from the program's, whose call chains 6.1's
 * verifier bounds at 512 bytes together.
 */
__noinline int gso_detour(struct __sk_buff *skb, int slot, const struct pkt *p, __u32 segs, __u32 mtu)
{
	__u32 k = (__u32)slot;
	struct wps_in_flow_hot *h = bpf_map_lookup_elem(&wps_in_flow_hot, &k);
	__u64 gs;

	if (!skb || !h || !p)
		return 1;
	gs = *(volatile __u64 *)&h->gs;
	return (gs & WPS_GS_DETOUR_ALL) || ((gs & WPS_GS_DETOUR) && detour_busy(slot)) ||
	       (segs > 1 && !whole_fits(skb, p, segs, mtu));
}

/*
 * A packet this run does not spray: too big for the paths once
 * encapsulated (too_big()), or one that takes the segmentation detour: a
 * packet of a flow with packets in it (detour_busy()) or whose fragments took
 * it, or a GSO skb too big to go whole (whole_fits()). Any other GSO skb
 * goes on to the group decision, which sends it whole only if all its
 * segments join the open group (group()). Its verdict, else STAGE_NEXT.
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
		return spray_elsewhere(skb, slot, p, mtu);
	if (after_detour || !cfg->seg_ifindex)
		return STAGE_NEXT;
	if (likely(segs == 1 && !(*(volatile __u64 *)&h->gs & (WPS_GS_DETOUR | WPS_GS_DETOUR_ALL))))
		return STAGE_NEXT;
	/* ECMP: the FIB lookup that picks the path weighs the whole skb's
	 * length against the MTU, so a GSO skb goes round the detour, as before
	 * whole skbs. */
	if ((segs > 1 && cfg->ecmp) || gso_detour(skb, slot, p, segs, mtu))
		return spray_elsewhere(skb, slot, p, 0);
	return STAGE_NEXT;
}

#endif
