/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the WPS ingress reads of a packet: the inner packet's flow key and
 * lengths (parse), where it came from (the Ingress Port ID, the domain's
 * side or the site's), and what becomes of one that carries the WPS option
 * already.
 */
#ifndef UBXDP_WPS_INGRESS_PARSE_H
#define UBXDP_WPS_INGRESS_PARSE_H

#include "wps_ingress/state.h"
#include "lib/ip6_chain.h"

struct pkt {
	struct wps_in_flow_key key __attribute__((aligned(8)));	/* word stores */
	__u32 inner_len;	/* IP header onward */
	__u8 tclass;
	__u8 inner_nh;		/* WPS_IPPROTO_IPIP or WPS_IPPROTO_IPV6 */
	__u8 has_ports;
	__u8 in_port;		/* Ingress Port ID */
	__u8 may_frag;		/* IPv4, DF clear */
};

static const __u8 v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/*
 * bpf_skb_load_bytes, read straight from the linear area when the bytes are
 * there (they are for every header of a linear skb): a helper call less.
 * In 32-bit words (to is 4-aligned, len a multiple of 4): a memcpy from a
 * __u8 * is compiled byte by byte. The packet side may be unaligned: only
 * strict-alignment architectures (not x86) make the verifier refuse that.
 */
static __always_inline long pkt_load(const struct __sk_buff *skb, __u32 off, void *to, const __u32 len)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	__u8 *at;

	if (off > 0xffff)
		return -1;
	at = (__u8 *)data + off;
	/* Below 0x8000 the verifier knows at + len cannot wrap, and so what the check proves. */
	if (off < 0x8000 && (void *)(at + len) <= end) {
#pragma unroll
		for (__u32 i = 0; i < len / 4; i++)
			((__u32 *)to)[i] = ((const __u32 *)at)[i];
		return 0;
	}
	return bpf_skb_load_bytes(skb, off, to, len);
}

/*
 * The chain of extension headers after the IPv6 header whose Next Header
 * is nh, walked (lib/ip6_chain.h). Global: checked once, and its code is out
 * of the way of the packets that have none.
 */
__noinline int ip6_chain_at(struct __sk_buff *skb, __u32 nh, struct ip6_chain *c)
{
	if (!c)
		return -1;
	ip6_walk(skb, ETH_HLEN, (__u8)nh, c);
	return 0;
}

/* parse(): not to be touched (counted); carries the WPS option; a chain that cannot tell. */
enum { PARSE_SKIP = -1, PARSE_WPS = -2, PARSE_UNWALKED = -3 };

/*
 * Parse the inner packet. Returns 0, PARSE_SKIP (counted) when it is not to
 * be touched, or PARSE_WPS / PARSE_UNWALKED (not counted) for the caller.
 */
static __always_inline int parse(struct __sk_buff *skb, struct pkt *p)
{
	__u32 l4_off = 0, len = skb->len, w;
	__be16 proto;

	__builtin_memset(p, 0, sizeof(*p));
	/* EtherType and the 2 bytes after it in one word; a frame that short, just the EtherType */
	if (pkt_load(skb, 12, &w, 4) && bpf_skb_load_bytes(skb, 12, &w, 2)) {
		cnt(WPS_IN_CNT_PASS_NOT_IP);
		return -1;
	}
	__builtin_memcpy(&proto, &w, 2);
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr ip;
		__u32 ihl, tot;

		if (pkt_load(skb, ETH_HLEN, &ip, sizeof(ip))) {
			cnt(WPS_IN_CNT_PASS_MALFORMED);
			return -1;
		}
		ihl = ip.ihl * 4;
		tot = bpf_ntohs(ip.tot_len);
		if (ip.version != 4 || ihl < 20 || tot < ihl || ETH_HLEN + tot > len) {
			cnt(WPS_IN_CNT_PASS_MALFORMED);
			return -1;
		}
		__builtin_memcpy(p->key.saddr + 8, v4mapped + 8, 4);
		__builtin_memcpy(p->key.daddr + 8, v4mapped + 8, 4);
		__builtin_memcpy(p->key.saddr + 12, &ip.saddr, 4);
		__builtin_memcpy(p->key.daddr + 12, &ip.daddr, 4);
		p->key.proto = ip.protocol;
		p->key.family = 4;
		p->tclass = ip.tos;
		p->inner_nh = WPS_IPPROTO_IPIP;
		p->inner_len = len - ETH_HLEN;
		p->may_frag = !(ip.frag_off & bpf_htons(0x4000));
		if (ip.frag_off & bpf_htons(0x3fff))
			cnt(WPS_IN_CNT_EV_INNER_FRAGMENT);
		/* Only a first (or unfragmented) packet has the ports. */
		if (!(ip.frag_off & bpf_htons(0x1fff)))
			l4_off = ETH_HLEN + ihl;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;
		__u32 l4 = ETH_HLEN + 40;
		__u8 nh;

		if (pkt_load(skb, ETH_HLEN, &ip6, sizeof(ip6))) {
			cnt(WPS_IN_CNT_PASS_MALFORMED);
			return -1;
		}
		if (ip6.version != 6 || !ip6.payload_len ||
		    ETH_HLEN + 40 + (__u32)bpf_ntohs(ip6.payload_len) > len) {
			cnt(WPS_IN_CNT_PASS_MALFORMED);
			return -1;
		}
		nh = ip6.nexthdr;
		/* Most packets have no extension header: nothing to walk. */
		if (unlikely(ip6_nh_is_ext(nh))) {
			struct ip6_chain c;

			if (ip6_chain_at(skb, nh, &c))
				return PARSE_UNWALKED;
			if (c.wps)
				return PARSE_WPS;
			if (c.truncated || c.too_long)
				return PARSE_UNWALKED;
			if (c.nhdrs)
				cnt(WPS_IN_CNT_EV_INNER_EXTHDR);
			if (c.fragment)
				cnt(WPS_IN_CNT_EV_INNER_FRAGMENT);
			nh = c.proto;
			l4 = c.nonfirst ? 0 : c.l4_off;
		}
		__builtin_memcpy(p->key.saddr, &ip6.saddr, 16);
		__builtin_memcpy(p->key.daddr, &ip6.daddr, 16);
		p->key.proto = nh;
		p->key.family = 6;
		p->tclass = (__u8)((ip6.priority << 4) | (ip6.flow_lbl[0] >> 4));
		p->inner_nh = WPS_IPPROTO_IPV6;
		p->inner_len = len - ETH_HLEN;
		l4_off = l4;
	} else {
		cnt(WPS_IN_CNT_PASS_NOT_IP);
		return -1;
	}
	if (l4_off && (p->key.proto == IPPROTO_TCP || p->key.proto == IPPROTO_UDP ||
		       p->key.proto == IPPROTO_SCTP || p->key.proto == IPPROTO_UDPLITE)) {
		__u32 ports;

		if (pkt_load(skb, l4_off, &ports, 4)) {
			cnt(WPS_IN_CNT_PASS_MALFORMED);
			return -1;
		}
		__builtin_memcpy(&p->key.sport, &ports, 4);
		p->has_ports = 1;
	}
	return 0;
}

/*
 * After the detour, a fragment frag_send made is of the flow of the packet
 * it was cut from: the ports that packet had, which it carries in cb[1].
 */
static __always_inline void pkt_fragment_ports(const struct __sk_buff *skb, struct pkt *p)
{
	if (p->key.family == 4 &&
	    (skb->cb[0] & (WPS_IN_CB_MAGIC_MASK | WPS_IN_CB_PORTS)) == (WPS_IN_CB_MAGIC | WPS_IN_CB_PORTS)) {
		__u32 ports = skb->cb[1];

		__builtin_memcpy(&p->key.sport, &ports, 4);
		p->has_ports = 1;
	}
}

/*
 * Did the packet come from the domain's side: in on DEV or on a member path's
 * device? (Then it is WPS traffic the domain routes through this node.)
 * Global: checked once, and only packets that carry the option ask.
 */
__noinline int from_domain(__u32 ifindex)
{
	__u32 zero = 0;
	const struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);

	if (!cfg || !ifindex)
		return 0;
	if (ifindex == cfg->dev_ifindex)
		return 1;
	for (__u32 i = 0; i < WPS_IN_MAX_PATHS; i++) {
		__u32 k = i;
		const struct wps_in_path *p = bpf_map_lookup_elem(&wps_in_paths, &k);

		if (p && p->ifindex == ifindex && (cfg->path_mask >> i & 1))
			return 1;
	}
	return 0;
}

/*
 * A packet that carries the WPS option already (wps), or whose IPv6 chain is
 * too long or cut short to tell: from the site, it never enters the domain
 * (draft: boundary filtering); from the domain's side, it goes on as it is.
 * A packet from the detour (after_detour) came from the site: the program
 * before the detour passed the domain's own.
 */
static __noinline int foreign_wps(struct __sk_buff *skb, bool wps, bool after_detour)
{
	if (!after_detour && from_domain(skb->ingress_ifindex)) {
		cnt(wps ? WPS_IN_CNT_PASS_ALREADY_WPS : WPS_IN_CNT_PASS_MALFORMED);
		return TC_ACT_OK;
	}
	cnt(wps ? WPS_IN_CNT_DROP_SITE_WPS : WPS_IN_CNT_DROP_UNWALKED);
	return TC_ACT_SHOT;
}

/*
 * The Ingress Port ID: of the interface the packet came in on; after the
 * detour, what the program on DEV found and left in cb[0].
 */
static __always_inline __u8 in_port(const struct __sk_buff *skb, const struct wps_in_cfg *cfg, bool after_detour)
{
	__u32 ifindex, k;

	if (after_detour) {
		__u32 c = skb->cb[0];

		return (c & WPS_IN_CB_MAGIC_MASK) == WPS_IN_CB_MAGIC ? (__u8)c : cfg->ingress_port;
	}
	ifindex = skb->ingress_ifindex;
	k = ifindex & (WPS_IN_PORTS - 1);
	return wps_port_id((cfg->flags & WPS_IN_F_PORTS_NAMED) ? bpf_map_lookup_elem(&wps_in_ports, &k) : NULL,
			   ifindex, cfg->ingress_port);
}

#endif
