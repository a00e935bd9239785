/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Finding the WPS option (draft-wps-ipv6-option) behind an IPv6 header: walk
 * the Hop-by-Hop and Destination Options headers that follow it, counting
 * WPS options per header, with every length checked against the header and
 * the packet. XDP only (bpf_xdp_load_bytes, bpf_loop: kernel 5.18+). Shared by roles that must recognise WPS packets (egress,
 * boundary filtering).
 */
#ifndef UBXDP_WPS_SCAN_H
#define UBXDP_WPS_SCAN_H

#include "lib/parse.h"
#include "wps_opt.h"

#ifndef WPS_SCAN_MAX_HDR
#define WPS_SCAN_MAX_HDR	64	/* longest options header walked (HdrExtLen <= 7) */
#endif
#ifndef WPS_SCAN_MAX_OPTS
#define WPS_SCAN_MAX_OPTS	16
#endif

struct wps_scan {
	struct wps_opt *opt;	/* the last WPS option seen */
	__u8 n_hbh, n_dst;	/* WPS options in each header */
	__u8 nexthdr;		/* after the options headers */
};

enum {
	WPS_SCAN_OK = 0,
	WPS_SCAN_BAD_HDR = -1,	/* truncated, too long, an option overrunning it, too many options */
};

struct wps_opt_walk {
	__u8 buf[WPS_SCAN_MAX_HDR];
	__u32 hlen, off;
	__u32 n_wps, wps_off;
	__u32 bad;
};

/*
 * One option per call, through bpf_loop: the verifier checks the body once,
 * where an unrolled walk over variable offsets explodes into states.
 */
static long wps_walk_step(__u32 i, void *arg)
{
	struct wps_opt_walk *w = arg;
	__u32 off = w->off, len;
	__u8 type;

	(void)i;
	if (off >= w->hlen)
		return 1;
	type = w->buf[off & (WPS_SCAN_MAX_HDR - 1)];
	if (type == 0) {	/* Pad1 */
		w->off = off + 1;
		return 0;
	}
	if (off + 2 > w->hlen) {
		w->bad = 1;
		return 1;
	}
	len = w->buf[(off + 1) & (WPS_SCAN_MAX_HDR - 1)];
	if (off + 2 + len > w->hlen) {
		w->bad = 1;
		return 1;
	}
	if (type == WPS_OPT_TYPE) {
		w->n_wps++;
		w->wps_off = off;
	}
	w->off = off + 2 + len;
	return 0;
}

/* One options header at the cursor; advances past it. Returns its NextHdr or WPS_SCAN_BAD_HDR. */
static __always_inline int wps_scan_opthdr(struct xdp_md *ctx, struct hdr_cursor *c, struct wps_scan *s,
					   int hbh)
{
	void *data = (void *)(long)ctx->data;
	struct wps_opt_walk w;
	__u8 *h = c->pos;
	__u32 hlen;

	if ((void *)(h + 2) > c->end)
		return WPS_SCAN_BAD_HDR;
	hlen = ((__u32)h[1] + 1) * 8;
	if (hlen > WPS_SCAN_MAX_HDR || (void *)h + hlen > c->end)
		return WPS_SCAN_BAD_HDR;
	__builtin_memset(&w, 0, sizeof(w));
	w.hlen = hlen;
	w.off = 2;
	if (bpf_xdp_load_bytes(ctx, (__u32)((void *)h - data), w.buf, hlen))
		return WPS_SCAN_BAD_HDR;
	bpf_loop(WPS_SCAN_MAX_OPTS, wps_walk_step, &w, 0);
	if (w.bad || w.off < hlen)	/* malformed, or more options than we walk */
		return WPS_SCAN_BAD_HDR;
	if (w.n_wps) {
		if (hbh)
			s->n_hbh += w.n_wps;
		else
			s->n_dst += w.n_wps;
		s->opt = (struct wps_opt *)(h + (w.wps_off & (WPS_SCAN_MAX_HDR - 1)));
	}
	c->pos = h + (hlen & (2 * WPS_SCAN_MAX_HDR - 1));
	return h[0];
}

/*
 * The options headers after the IPv6 header (cursor just past it): at most a
 * Hop-by-Hop header, then at most a Destination Options header. Returns
 * WPS_SCAN_OK with s filled (no WPS option: n_hbh == n_dst == 0), or
 * WPS_SCAN_BAD_HDR.
 */
static __always_inline int wps_scan(struct xdp_md *ctx, struct hdr_cursor *c, __u8 nexthdr,
				    struct wps_scan *s)
{
	int nh = nexthdr;

	s->opt = 0;
	s->n_hbh = s->n_dst = 0;
	if (nh == WPS_IPPROTO_HOPOPTS) {
		nh = wps_scan_opthdr(ctx, c, s, 1);
		if (nh < 0)
			return WPS_SCAN_BAD_HDR;
	}
	if (nh == WPS_IPPROTO_DSTOPTS) {
		nh = wps_scan_opthdr(ctx, c, s, 0);
		if (nh < 0)
			return WPS_SCAN_BAD_HDR;
	}
	s->nexthdr = (__u8)nh;
	return WPS_SCAN_OK;
}

#endif
