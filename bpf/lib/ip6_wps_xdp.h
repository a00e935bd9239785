/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Whether an IPv6 packet in an XDP buffer carries the WPS option: its
 * extension header chain walked as the boundary filter walks it in TC
 * (lib/ip6_chain.h), every Hop-by-Hop and Destination Options header scanned
 * for option type 0x81. For the WPS egress, whose inner packets leave by
 * AF_XDP and devmap redirect, past the TC boundary filter.
 */
#ifndef UBXDP_IP6_WPS_XDP_H
#define UBXDP_IP6_WPS_XDP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "wps_opt.h"

#define IP6X_MAX_HDRS	8	/* as the boundary filter (IP6_CHAIN_MAX_HDRS) */
#define IP6X_MAX_OPTS	16

enum {
	IP6X_NO_WPS = 0,
	IP6X_WPS = 1,		/* a WPS option in some options header */
	IP6X_UNWALKED = 2,	/* too long or malformed to tell */
};

/*
 * The options of the HBH/DestOpt header at off (hlen bytes). A global
 * function: the verifier checks it once, not once per header of the walk.
 */
__noinline int ip6x_opts_have_wps(struct xdp_md *ctx, __u32 off, __u32 hlen)
{
	__u32 pos = off + 2, end = off + hlen;

	if (!ctx)
		return IP6X_UNWALKED;
	for (int i = 0; i < IP6X_MAX_OPTS; i++) {
		__u8 tl[2];

		if (pos >= end)
			return IP6X_NO_WPS;
		if (bpf_xdp_load_bytes(ctx, pos, tl, 1))
			return IP6X_UNWALKED;
		if (tl[0] == 0) {	/* Pad1 */
			pos++;
			continue;
		}
		if (tl[0] == WPS_OPT_TYPE)
			return IP6X_WPS;
		if (bpf_xdp_load_bytes(ctx, pos + 1, &tl[1], 1))
			return IP6X_UNWALKED;
		pos += 2 + tl[1];
	}
	return pos >= end ? IP6X_NO_WPS : IP6X_UNWALKED;
}

/* The IPv6 packet at ip6_off, end bytes into the buffer at most. */
static __always_inline int ip6x_has_wps(struct xdp_md *ctx, __u32 ip6_off, __u32 end)
{
	__u32 off = ip6_off + 40;
	__u8 nh;

	if (bpf_xdp_load_bytes(ctx, ip6_off + 6, &nh, 1))
		return IP6X_UNWALKED;
	for (int i = 0; i < IP6X_MAX_HDRS; i++) {
		__u8 h[2];
		__u32 hlen;
		int r;

		if (nh != 0 && nh != 60 && nh != 43 && nh != 44 && nh != 51)
			return IP6X_NO_WPS;	/* the upper layer (or ESP, opaque) */
		if (off + 2 > end || bpf_xdp_load_bytes(ctx, off, h, 2))
			return IP6X_UNWALKED;
		if (nh == 44) {		/* Fragment: a non-first one has no more headers here */
			__be16 fo;

			if (bpf_xdp_load_bytes(ctx, off + 2, &fo, 2))
				return IP6X_UNWALKED;
			if (bpf_ntohs(fo) & 0xfff8)
				return IP6X_NO_WPS;
			hlen = 8;
		} else if (nh == 51) {
			hlen = ((__u32)h[1] + 2) * 4;
		} else {
			hlen = ((__u32)h[1] + 1) * 8;
			if (off + hlen > end)
				return IP6X_UNWALKED;
			if (nh == 0 || nh == 60) {
				r = ip6x_opts_have_wps(ctx, off, hlen);
				if (r != IP6X_NO_WPS)
					return r;
			}
		}
		if (off + hlen > end)
			return IP6X_UNWALKED;
		nh = h[0];
		off += hlen;
	}
	return nh == 0 || nh == 60 || nh == 43 || nh == 44 || nh == 51 ? IP6X_UNWALKED : IP6X_NO_WPS;
}

#endif
