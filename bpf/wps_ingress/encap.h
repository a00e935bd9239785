/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The WPS ingress's encapsulation and transmit: the outer IPv6 header and
 * the options header holding the WPS option, written in front of the inner
 * packet; the packet sent on its path (or, ECMP, where the FIB says) and
 * counted per path.
 */
#ifndef UBXDP_WPS_INGRESS_ENCAP_H
#define UBXDP_WPS_INGRESS_ENCAP_H

#include "wps_ingress/path.h"
#include "lib/compat.h"

/*
 * Built on the stack, stored from eth on (OUTER_LEN bytes). The pad aligns
 * the IPv6 header so its fields are stored in words: a packed layout made
 * the compiler store every field byte by byte.
 */
struct outer {
	__u8 pad[2];
	struct ethhdr eth;
	struct ipv6hdr ip6;
	struct wps_exthdr ext;
} __attribute__((aligned(8)));

#define OUTER_LEN	(ETH_HLEN + 40 + WPS_EXTHDR_LEN)
_Static_assert(sizeof(struct outer) == 2 + OUTER_LEN, "outer: Ethernet + IPv6 + the options header");
_Static_assert(sizeof(struct outer) == sizeof(((struct scratch *)0)->outer), "scratch.outer holds struct outer");

static __always_inline void build_outer(struct outer *o, const struct wps_in_cfg *cfg, const struct pkt *p,
					const struct decision *d, __u32 label)
{
	__be32 vtcfl = bpf_htonl(6u << 28 | (__u32)p->tclass << 20 | (label & 0xfffff));

	o->eth.h_proto = bpf_htons(ETH_P_IPV6);
	__builtin_memcpy(&o->ip6, &vtcfl, 4);
	o->ip6.payload_len = bpf_htons((__u16)(p->inner_len + WPS_EXTHDR_LEN));
	o->ip6.nexthdr = (cfg->flags & WPS_IN_F_HBH) ? WPS_IPPROTO_HOPOPTS : WPS_IPPROTO_DSTOPTS;
	o->ip6.hop_limit = cfg->hop_limit;
	__builtin_memcpy(&o->ip6.saddr, cfg->src, 16);
	__builtin_memcpy(&o->ip6.daddr, cfg->dst, 16);
	o->ext.nexthdr = p->inner_nh;
	o->ext.hdrlen = WPS_EXTHDR_HDRLEN;
	o->ext.opt.type = WPS_OPT_TYPE;
	o->ext.opt.len = WPS_OPT_DATA_LEN;
	o->ext.opt.flags = d->flags;
	o->ext.opt.reserved = 0;
	o->ext.opt.flow_id = bpf_htons(d->fid);
	o->ext.opt.ingress_node = bpf_htons(cfg->node_id);
	o->ext.opt.egress_node = bpf_htons(cfg->egress_node_id);
	o->ext.opt.group_id = bpf_htons(d->gid);
	o->ext.opt.ingress_port = p->in_port;
	o->ext.opt.egress_port = cfg->egress_port;
}

/*
 * The outer header into the room adjust_room made, written in place: no
 * helper call, no copy through the helper. The 72-byte stack image is read
 * in aligned words (the verifier wants stack reads aligned); the packet side
 * is 2 bytes off, which only strict-alignment architectures refuse, as in
 * pkt_load. Writing the packet directly makes the verifier add its unclone
 * prologue to the program: a cloned skb's head is made private first, which
 * for a clone whose header is its own (TCP's) costs a check.
 */
static __always_inline long store_outer(struct __sk_buff *skb, const struct outer *o)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	const __u64 *w = (const __u64 *)o;

	if (data + OUTER_LEN > end)
		return bpf_skb_store_bytes(skb, 0, &o->eth, OUTER_LEN, 0);
	*(__u16 *)data = ((const __u16 *)o)[1];
	*(__u32 *)(data + 2) = ((const __u32 *)o)[1];
#pragma unroll
	for (int i = 1; i < (int)(sizeof(*o) / 8); i++)
		*(__u64 *)(data + 6 + 8 * (i - 1)) = w[i];
	return 0;
}

static __always_inline void stats_account(struct wps_in_path_stats *ps, __u32 segs, __u32 len, bool opened)
{
	ps->packets += segs;
	ps->bytes += len;
	ps->groups += opened;
}

static __always_inline void path_account(__u32 path, __u32 segs, __u32 len, bool opened, __u64 now,
					 const struct wps_in_cfg *cfg)
{
	struct wps_in_path_stats *ps = bpf_map_lookup_elem(&wps_in_path_stats, &path);
	struct wps_in_path_load *pl = (cfg->flags & WPS_IN_F_LEAST_LOADED) ?
					      bpf_map_lookup_elem(&wps_in_path_load, &path) : NULL;

	if (ps)
		stats_account(ps, segs, len, opened);
	/* The load windows only a least-loaded rule reads: kept only while there is one. */
	if (pl && (cfg->flags & WPS_IN_F_LEAST_LOADED)) {
		/* win_start may be ahead: set from the fine clock, now from the coarse one. */
		if (now > pl->win_start && now - pl->win_start >= cfg->load_window_ns) {
			pl->prev = pl->cur;
			pl->cur = 0;
			pl->win_start = now;
		}
		__sync_fetch_and_add(&pl->cur, len);
	}
}

static __always_inline void ecmp_account(__u32 ifindex, __u32 segs, __u32 len, bool opened)
{
	struct wps_in_path_stats *ps = bpf_map_lookup_elem(&wps_in_ecmp_stats, &ifindex);

	if (!ps) {
		struct wps_in_path_stats z = {};

		/* Full (more devices than counted): the packet still goes. */
		bpf_map_update_elem(&wps_in_ecmp_stats, &ifindex, &z, BPF_NOEXIST);
		ps = bpf_map_lookup_elem(&wps_in_ecmp_stats, &ifindex);
	}
	if (ps)
		stats_account(ps, segs, len, opened);
}

/* Sets *oif to the egress device the FIB chose. */
static __always_inline int ecmp_xmit(struct __sk_buff *skb, const struct wps_in_cfg *cfg, __u32 label, __u32 *oif)
{
	struct bpf_fib_lookup fib = {};
	long rc;

	fib.family = AF_INET6;
	fib.ifindex = skb->ifindex;
	fib.flowinfo = bpf_htonl(label);
	fib.l4_protocol = (cfg->flags & WPS_IN_F_HBH) ? WPS_IPPROTO_HOPOPTS : WPS_IPPROTO_DSTOPTS;
	fib.tot_len = (__u16)(skb->len - ETH_HLEN);
	__builtin_memcpy(fib.ipv6_src, cfg->src, 16);
	__builtin_memcpy(fib.ipv6_dst, cfg->dst, 16);
	/*
	 * As if forwarded from DEV: an output lookup pins the route to DEV (its
	 * oif) and skips the multipath choice, which is where the flow label
	 * counts. Needs IPv6 forwarding on DEV; without it, an output lookup.
	 */
	rc = bpf_fib_lookup(skb, &fib, sizeof(fib), 0);
	if (rc == BPF_FIB_LKUP_RET_FWD_DISABLED) {
		fib.ifindex = skb->ifindex;
		rc = bpf_fib_lookup(skb, &fib, sizeof(fib), BPF_FIB_LOOKUP_OUTPUT);
	}
	*oif = fib.ifindex;
	if (rc == BPF_FIB_LKUP_RET_SUCCESS) {
		__u8 macs[12];

		__builtin_memcpy(macs, fib.dmac, 6);
		__builtin_memcpy(macs + 6, fib.smac, 6);
		if (bpf_skb_store_bytes(skb, 0, macs, 12, 0))
			return -1;
		if (fib.ifindex == skb->ifindex)
			return TC_ACT_OK;
		if (fib.ifindex == cfg->dev_ifindex)
			skb->mark |= WPS_IN_MARK_BYPASS;
		return bpf_redirect(fib.ifindex, 0);
	}
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH) {
		struct bpf_redir_neigh nh = { .nh_family = AF_INET6 };

		__builtin_memcpy(nh.ipv6_nh, fib.ipv6_dst, 16);
		if (fib.ifindex == cfg->dev_ifindex)
			skb->mark |= WPS_IN_MARK_BYPASS;
		return bpf_redirect_neigh(fib.ifindex, &nh, sizeof(nh), 0);
	}
	return -1;
}

/*
 * ECMP: the outer header (the scratch's, MACs aside) stored, the packet sent
 * where the FIB says and counted there. Its verdict. Global: checked once,
 * and out of the way of explicit paths.
 */
__noinline int ecmp_send(struct __sk_buff *skb, __u32 label, __u32 segs, __u32 len, int opened)
{
	__u32 zero = 0, oif = 0;
	const struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	struct scratch *sc = bpf_map_lookup_elem(&wps_in_scratch, &zero);
	struct outer *o;
	int rc;

	if (!cfg || !sc)
		return TC_ACT_SHOT;
	o = (struct outer *)sc->outer;
	if (bpf_skb_store_bytes(skb, ETH_HLEN - 2, &o->eth.h_proto, OUTER_LEN - ETH_HLEN + 2, 0)) {
		cnt(WPS_IN_CNT_DROP_ENCAP_FAILED);
		return TC_ACT_SHOT;
	}
	rc = ecmp_xmit(skb, cfg, label, &oif);
	if (rc < 0) {
		cnt(WPS_IN_CNT_EV_FIB_FAILED);
		cnt(WPS_IN_CNT_DROP_ENCAP_FAILED);
		return TC_ACT_SHOT;
	}
	ecmp_account(oif, segs, len, opened);
	cnt(WPS_IN_CNT_TX_SPRAYED);
	return rc;
}

/*
 * The packet encapsulated and sent on the path the group decision chose
 * (ECMP: where the FIB says), counted on it. Its verdict. A whole GSO skb
 * (whole) keeps the sender's segment size: the kernel marks it
 * SKB_GSO_IPXIP6 and, segmenting it, copies the outer header and the option
 * into every segment (right for packets that are neither S nor E) and sets
 * each one's payload length. If the kernel will not encapsulate it so (a GSO
 * kind adjust_room refuses), STAGE_DETOUR: its segments take the detour,
 * the packets it took from the group's REM spent (the group ends that much
 * earlier; nothing on the wire tells).
 */
static __always_inline int encap_send(struct __sk_buff *skb, const struct wps_in_cfg *cfg, const struct pkt *p,
				      const struct decision *d, struct scratch *sc, __u32 segs, __u32 len, __u64 now,
				      bool whole)
{
	struct wps_in_path *path = NULL;
	struct outer *o;
	__u32 label;

	if (!cfg->ecmp) {
		__u32 pi = d->path;

		path = bpf_map_lookup_elem(&wps_in_paths, &pi);
		if (unlikely(!path || !path->ifindex)) {
			cnt(WPS_IN_CNT_PASS_NO_PATH);
			return TC_ACT_OK;
		}
	}
	label = wps_flow_label(d->fid, d->gid);
	o = (struct outer *)sc->outer;
	build_outer(o, cfg, p, d, label);
	BENCH_STOP(BENCH_DECIDED);
	if (unlikely(bpf_skb_adjust_room(skb, WPS_OVERHEAD, BPF_ADJ_ROOM_MAC,
					 BPF_F_ADJ_ROOM_ENCAP_L3_IPV6 | (whole ? BPF_F_ADJ_ROOM_FIXED_GSO : 0)))) {
		if (whole)
			return STAGE_DETOUR;
		cnt(WPS_IN_CNT_DROP_ENCAP_FAILED);
		return TC_ACT_SHOT;
	}
	BENCH_STOP(BENCH_ROOM);
	if (cfg->ecmp) {
		return ecmp_send(skb, label, segs, len, d->opened);
	} else {
		__u32 pi = d->path;

		if (!path)
			return TC_ACT_SHOT;	/* looked up above; the verifier wants it again */
		__builtin_memcpy(o->eth.h_dest, path->dmac, ETH_ALEN);
		__builtin_memcpy(o->eth.h_source, path->smac, ETH_ALEN);
		if (store_outer(skb, o)) {
			cnt(WPS_IN_CNT_DROP_ENCAP_FAILED);
			return TC_ACT_SHOT;
		}
		BENCH_STOP(BENCH_STORED);
		path_account(pi, segs, len, d->opened, now, cfg);
		cnt(WPS_IN_CNT_TX_SPRAYED);
		if (path->ifindex == skb->ifindex)
			return TC_ACT_OK;
		/* Through DEV's egress again: the program there lets it by at once. */
		if (path->ifindex == cfg->dev_ifindex)
			skb->mark |= WPS_IN_MARK_BYPASS;
		return bpf_redirect(path->ifindex, 0);
	}
}

#endif
