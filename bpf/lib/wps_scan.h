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
	__u32 n_hbh, n_dst;	/* WPS options in each header */
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
 * The walk's state lives in a per-CPU map value, not on the stack: the
 * verifier then knows nothing of the values (an unrolled walk over known
 * offsets explodes into states, and 6.1 verifies a bpf_loop callback only
 * once, so with stack state it would "prove" that at most one WPS option is
 * ever counted and drop the duplicate check as dead code).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wps_opt_walk);
} wps_scan_scratch SEC(".maps");

struct wps_walk_ctx {
	struct wps_opt_walk *w;
};

/* One option per call, through bpf_loop: the verifier checks the body once. */
static long wps_walk_step(__u32 i, void *arg)
{
	struct wps_opt_walk *w = ((struct wps_walk_ctx *)arg)->w;
	__u32 off, len;
	__u8 type;

	(void)i;
	if (!w)
		return 1;
	off = w->off;
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
	struct wps_walk_ctx wc;
	struct wps_opt_walk *w;
	__u8 *h = c->pos;
	__u32 hlen, zero = 0;

	if ((void *)(h + 2) > c->end)
		return WPS_SCAN_BAD_HDR;
	hlen = ((__u32)h[1] + 1) * 8;
	if (hlen > WPS_SCAN_MAX_HDR || (void *)h + hlen > c->end)
		return WPS_SCAN_BAD_HDR;
	w = bpf_map_lookup_elem(&wps_scan_scratch, &zero);
	if (!w)
		return WPS_SCAN_BAD_HDR;
	w->hlen = hlen;
	w->off = 2;
	w->n_wps = 0;
	w->wps_off = 0;
	w->bad = 0;
	if (bpf_xdp_load_bytes(ctx, (__u32)((void *)h - data), w->buf, hlen))
		return WPS_SCAN_BAD_HDR;
	wc.w = w;
	bpf_loop(WPS_SCAN_MAX_OPTS, wps_walk_step, &wc, 0);
	if (w->bad || w->off < hlen)	/* malformed, or more options than we walk */
		return WPS_SCAN_BAD_HDR;
	if (w->n_wps) {
		if (hbh)
			s->n_hbh += w->n_wps;
		else
			s->n_dst += w->n_wps;
		s->opt = (struct wps_opt *)(h + (w->wps_off & (WPS_SCAN_MAX_HDR - 1)));
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
