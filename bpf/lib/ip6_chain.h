/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Walks an IPv6 extension header chain in an skb (TC programs) with
 * bpf_skb_load_bytes, so the headers need not be in the linear area, and
 * looks for the WPS option in every Hop-by-Hop and Destination Options
 * header on the way. Shared by the WPS ingress (never encapsulate a WPS
 * packet again) and the boundary filter.
 */
#ifndef UBXDP_IP6_CHAIN_H
#define UBXDP_IP6_CHAIN_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "wps_opt.h"

#define IP6_CHAIN_MAX_HDRS	8	/* longer chains are reported, not walked */
#define IP6_CHAIN_MAX_OPTS	16	/* options scanned per options header */

#define IP6_NH_HOP	0
#define IP6_NH_ROUTING	43
#define IP6_NH_FRAG	44
#define IP6_NH_AH	51
#define IP6_NH_DEST	60

struct ip6_chain {
	__u32 l4_off;		/* offset of the upper-layer header */
	__u8 proto;		/* upper-layer protocol */
	__u8 nhdrs;		/* extension headers walked */
	__u8 fragment;		/* a Fragment header was seen */
	__u8 nonfirst;		/* ... with a non-zero offset: no upper-layer header here */
	__u8 wps;		/* a WPS option in some HBH/DestOpt header */
	__u8 too_long;		/* chain longer than IP6_CHAIN_MAX_HDRS */
	__u8 truncated;		/* a header runs past the packet */
};

/*
 * Scan the options of the HBH/DestOpt header at off (hlen bytes) for the WPS
 * option. A global function: the verifier checks it once, not once per
 * header of the chain walk (which would multiply the states beyond its limit).
 */
__noinline int ip6_opts_have_wps(struct __sk_buff *skb, __u32 off, __u32 hlen)
{
	__u32 pos = off + 2, end = off + hlen;

	for (int i = 0; i < IP6_CHAIN_MAX_OPTS; i++) {
		__u8 tl[2];

		if (pos >= end)
			return 0;
		if (bpf_skb_load_bytes(skb, pos, tl, 1))
			return 0;
		if (tl[0] == 0) {	/* Pad1 */
			pos++;
			continue;
		}
		if (tl[0] == WPS_OPT_TYPE)
			return 1;
		if (bpf_skb_load_bytes(skb, pos + 1, &tl[1], 1))
			return 0;
		pos += 2 + tl[1];
	}
	return 0;
}

/* Is nh an extension header the walk steps over (else the upper layer)? */
static __always_inline int ip6_nh_is_ext(__u8 nh)
{
	return nh == IP6_NH_HOP || nh == IP6_NH_DEST || nh == IP6_NH_ROUTING || nh == IP6_NH_FRAG || nh == IP6_NH_AH;
}

/* Walk from the IPv6 header at ip6_off whose Next Header is nh. */
static __always_inline void ip6_walk(struct __sk_buff *skb, __u32 ip6_off, __u8 nh, struct ip6_chain *c)
{
	__u32 off = ip6_off + 40;

	__builtin_memset(c, 0, sizeof(*c));
	for (int i = 0; i < IP6_CHAIN_MAX_HDRS; i++) {
		__u8 h[2];
		__u32 hlen;

		if (!ip6_nh_is_ext(nh))
			goto done;
		if (bpf_skb_load_bytes(skb, off, h, 2)) {
			c->truncated = 1;
			goto done;
		}
		c->nhdrs++;
		if (nh == IP6_NH_FRAG) {
			__be16 fo;

			hlen = 8;
			c->fragment = 1;
			if (bpf_skb_load_bytes(skb, off + 2, &fo, 2)) {
				c->truncated = 1;
				goto done;
			}
			if (bpf_ntohs(fo) & 0xfff8) {
				c->nonfirst = 1;
				nh = h[0];
				off += hlen;
				goto done;
			}
		} else if (nh == IP6_NH_AH) {
			hlen = ((__u32)h[1] + 2) * 4;
		} else {
			hlen = ((__u32)h[1] + 1) * 8;
			if ((nh == IP6_NH_HOP || nh == IP6_NH_DEST) && ip6_opts_have_wps(skb, off, hlen))
				c->wps = 1;
		}
		if (off + hlen > skb->len) {
			c->truncated = 1;
			goto done;
		}
		nh = h[0];
		off += hlen;
	}
	if (ip6_nh_is_ext(nh))
		c->too_long = 1;
done:
	c->proto = nh;
	c->l4_off = off;
}

#endif
