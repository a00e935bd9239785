// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * WPS egress, the XDP half (draft-wps-ipv6-option, Egress Node Procedures),
 * on the egress node's domain-facing devices.
 *
 * Outer IPv6 packets to one of our addresses that carry the WPS option are
 * validated (Opt Data Len 12, from a peer that may use its Ingress Node ID,
 * our Egress Node ID, one WPS option, not in both options headers, every
 * length sane, an inner packet that does not carry the WPS option itself);
 * failures are dropped, counted per reason and logged through a rate-limited
 * ringbuf. The outer ECN field goes into the inner header (RFC 6040). Then:
 *   R = 0: decapsulate here and forward: FIB lookup on the inner destination,
 *          devmap redirect; what XDP cannot finish (unresolved neighbour,
 *          local, unreachable, too big, another device) goes to the kernel as
 *          the plain inner packet, which resolves, delivers or answers ICMP.
 *   R = 1: to the reorder thread through the XSKMAP, the frame prepared so
 *          the thread only has to transmit it (struct wps_xsk_desc).
 * Everything else (ARP, ND, other traffic, WPS packets for another address)
 * passes untouched.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lib/parse.h"
#include "lib/wps_scan.h"
#include "lib/ip6_wps_xdp.h"
#include "lib/ip_edit.h"
#include "lib/compat.h"
#include "ub_wire.h"
#include "wps_opt.h"
#include "wps_egress_maps.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wps_eg_cfg);
} wps_eg_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WPS_EG_MAX_LOCAL);
	__type(key, struct in6_addr);
	__type(value, __u8);
} wps_eg_local SEC(".maps");

/* The ingress nodes we serve: wps_egress_maps.h, struct wps_eg_peer_key. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WPS_EG_MAX_PEER_KEYS);
	__type(key, struct wps_eg_peer_key);
	__type(value, __u32);		/* peer index */
} wps_eg_peers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WPS_EG_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} wps_eg_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, WPS_EG_MAX_DEVS * WPS_EG_MAX_QUEUES * WPS_EG_MAX_SHARDS);
	__type(key, __u32);		/* wps_eg_xsk_key(device slot, rx queue, shard) */
	__type(value, __u32);
} wps_eg_xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WPS_EG_MAX_DEVS);
	__type(key, __u32);		/* ifindex of a domain-facing device */
	__type(value, __u32);		/* its slot */
} wps_eg_ifslot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} wps_eg_tx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} wps_eg_log SEC(".maps");

struct log_budget {
	__u64 window;		/* start of the current second */
	__u32 used;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct log_budget);
} wps_eg_log_budget SEC(".maps");

static __always_inline void count(__u32 id)
{
	__u64 *v = bpf_map_lookup_elem(&wps_eg_stats, &id);

	if (v)
		(*v)++;
}

/* Drop, count and log (at most log_per_sec records per second and CPU). */
static __always_inline int reject(struct xdp_md *ctx, const struct wps_eg_cfg *cfg, __u32 reason,
				  const struct ipv6hdr *ip6, const struct wps_opt *opt, void *end)
{
	struct log_budget *b;
	struct wps_eg_log *r;
	__u32 zero = 0;
	__u64 now;

	count(reason);
	if (!cfg->log_per_sec)
		return XDP_DROP;
	b = bpf_map_lookup_elem(&wps_eg_log_budget, &zero);
	if (!b)
		return XDP_DROP;
	now = bpf_ktime_get_ns();
	if (now - b->window >= 1000000000ull) {
		b->window = now;
		b->used = 0;
	}
	if (b->used >= cfg->log_per_sec) {
		count(WPS_EG_CNT_LOG_SUPPRESSED);
		return XDP_DROP;
	}
	r = bpf_ringbuf_reserve(&wps_eg_log, sizeof(*r), 0);
	if (!r) {
		count(WPS_EG_CNT_LOG_SUPPRESSED);
		return XDP_DROP;
	}
	b->used++;
	__builtin_memset(r, 0, sizeof(*r));
	r->reason = reason;
	r->ifindex = ctx->ingress_ifindex;
	__builtin_memcpy(r->saddr, &ip6->saddr, sizeof(r->saddr));
	if (opt && (void *)(opt + 1) <= end) {
		r->opt_len = opt->len;
		r->ingress_node = bpf_ntohs(opt->ingress_node);
		r->flow_id = bpf_ntohs(opt->flow_id);
		r->egress_node = bpf_ntohs(opt->egress_node);
		r->group_id = bpf_ntohs(opt->group_id);
	}
	bpf_ringbuf_submit(r, 0);
	return XDP_DROP;
}

/*
 * The outer source must be a peer that may use this Ingress Node ID: its
 * peer index in *peer, or -1 with the reason. Checked before anything is
 * decapsulated or steered, so a host that only learnt a node ID delivers
 * nothing into the site.
 */
static __always_inline int peer_of(const struct wps_eg_cfg *cfg, const struct ipv6hdr *ip6, __u16 node,
				   __u32 *peer, __u32 *reason)
{
	struct wps_eg_peer_key k;
	__u32 *v;

	*peer = 0;
	if (cfg->flags & WPS_EG_F_ANY_PEER)
		return 0;
	__builtin_memcpy(k.addr, &ip6->saddr, sizeof(k.addr));
	k.node = node;
	v = bpf_map_lookup_elem(&wps_eg_peers, &k);
	if (!v) {
		k.node = WPS_EG_PEER_ANY_NODE;
		v = bpf_map_lookup_elem(&wps_eg_peers, &k);
	}
	if (v) {
		*peer = *v;
		return 0;
	}
	k.node = WPS_EG_PEER_ADDR;
	*reason = bpf_map_lookup_elem(&wps_eg_peers, &k) ? WPS_EG_CNT_BAD_PEER_NODE : WPS_EG_CNT_BAD_PEER;
	return -1;
}

/* The inner packet must fill exactly what the outer header says is left (left: bytes
 * from its first to the frame's end, fragments included). */
static __always_inline int check_inner(struct hdr_cursor *c, __u8 nexthdr, __u64 left, __u32 *reason)
{

	if (nexthdr == WPS_IPPROTO_IPIP) {
		struct iphdr *ip = c->pos;

		if ((void *)(ip + 1) > c->end || ip->version != 4 || ip->ihl < 5) {
			*reason = WPS_EG_CNT_BAD_INNER;
			return -1;
		}
		if (bpf_ntohs(ip->tot_len) != left) {
			*reason = WPS_EG_CNT_BAD_LENGTH;
			return -1;
		}
		return 0;
	}
	if (nexthdr == WPS_IPPROTO_IPV6) {
		struct ipv6hdr *ip6 = c->pos;

		if ((void *)(ip6 + 1) > c->end || ip6->version != 6) {
			*reason = WPS_EG_CNT_BAD_INNER;
			return -1;
		}
		if (sizeof(*ip6) + bpf_ntohs(ip6->payload_len) != left) {
			*reason = WPS_EG_CNT_BAD_LENGTH;
			return -1;
		}
		return 0;
	}
	*reason = WPS_EG_CNT_BAD_INNER;
	return -1;
}

/*
 * RFC 6040 decapsulation, normal mode (its Figure 4), in place on the inner
 * header: outer CE reaches an ECN-capable inner packet (ECT(0), ECT(1)) as
 * CE, outer ECT(1) turns inner ECT(0) into ECT(1), all else leaves the inner
 * field as it is; CE on the outer header of a Not-ECT packet means drop
 * (-1). IPv4's header checksum follows (RFC 1624).
 */
static __always_inline int ecn_decap(const struct ipv6hdr *outer, void *inner, void *end, int v4)
{
	__u8 out = ip6_ecn(outer), in, want;
	struct ipv6hdr *i6 = inner;
	struct iphdr *ip = inner;

	if (v4 ? (void *)(ip + 1) > end : (void *)(i6 + 1) > end)
		return -1;
	in = v4 ? ip4_ecn(ip) : ip6_ecn(i6);
	if (out == ECN_CE) {
		if (in == ECN_NOT_ECT)
			return -1;
		want = ECN_CE;
	} else if (out == ECN_ECT1 && in == ECN_ECT0) {
		want = ECN_ECT1;
	} else {
		return 0;
	}
	if (want == in)
		return 0;
	if (v4)
		ip4_set_ecn(ip, want);
	else
		ip6_set_ecn(i6, want);
	if (want == ECN_CE)
		count(WPS_EG_CNT_ECN_CE);
	return 0;
}

/* FIB lookup on the inner packet, as if it had arrived on this device. */
static __always_inline int fib_inner(struct xdp_md *ctx, struct bpf_fib_lookup *p, void *inner,
				     void *end, int v4)
{
	__builtin_memset(p, 0, sizeof(*p));
	p->ifindex = ctx->ingress_ifindex;
	if (v4) {
		struct iphdr *ip = inner;

		if ((void *)(ip + 1) > end)
			return -1;
		p->family = AF_INET;
		p->tos = ip->tos;
		p->l4_protocol = ip->protocol;
		p->tot_len = bpf_ntohs(ip->tot_len);
		p->ipv4_src = ip->saddr;
		p->ipv4_dst = ip->daddr;
	} else {
		struct ipv6hdr *ip6 = inner;

		if ((void *)(ip6 + 1) > end)
			return -1;
		p->family = AF_INET6;
		p->flowinfo = *(__be32 *)ip6 & bpf_htonl(0x0fffffff);
		p->l4_protocol = ip6->nexthdr;
		p->tot_len = sizeof(*ip6) + bpf_ntohs(ip6->payload_len);
		__builtin_memcpy(p->ipv6_src, &ip6->saddr, sizeof(p->ipv6_src));
		__builtin_memcpy(p->ipv6_dst, &ip6->daddr, sizeof(p->ipv6_dst));
	}
	return bpf_fib_lookup(ctx, p, sizeof(*p), 0);
}

/*
 * R = 0: strip everything before the inner packet but an Ethernet header.
 * Resolved and on a device of ours: new MACs, devmap redirect. Otherwise the
 * kernel gets the inner packet under the frame's own MACs (addressed to us),
 * and forwards it as any router would.
 */
/* The verifier needs the bound right at the pointer addition; keep clang from folding it away. */
static __always_inline __u32 l2_bound(__u32 l2_off)
{
	barrier_var(l2_off);
	return l2_off & 0x1ff;
}

static __always_inline int decap_forward(struct xdp_md *ctx, __u32 l2_off, int v4)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct bpf_fib_lookup fib;
	struct ethhdr *eth = data;
	__u8 dst[ETH_ALEN], src[ETH_ALEN];
	int rc, fwd;

	if ((void *)(eth + 1) > end)
		return XDP_DROP;
	__builtin_memcpy(dst, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(src, eth->h_source, ETH_ALEN);
	rc = fib_inner(ctx, &fib, data + l2_bound(l2_off) + sizeof(*eth), end, v4);
	fwd = rc == BPF_FIB_LKUP_RET_SUCCESS && bpf_map_lookup_elem(&wps_eg_tx, &fib.ifindex);
	if (bpf_xdp_adjust_head(ctx, (int)l2_off))
		return XDP_DROP;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) > end)
		return XDP_DROP;
	eth->h_proto = bpf_htons(v4 ? ETH_P_IP : ETH_P_IPV6);
	if (!fwd) {
		__builtin_memcpy(eth->h_dest, dst, ETH_ALEN);
		__builtin_memcpy(eth->h_source, src, ETH_ALEN);
		count(WPS_EG_CNT_R0_KERNEL);
		return XDP_PASS;
	}
	__builtin_memcpy(eth->h_dest, fib.dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, fib.smac, ETH_ALEN);
	count(WPS_EG_CNT_R0_FWD);
	return bpf_redirect_map(&wps_eg_tx, fib.ifindex, 0);
}

/*
 * R = 1 with a socket waiting: lay the frame out for the reorder thread (the
 * descriptor over the dead outer headers, a ready Ethernet header right
 * before the inner packet); the thread transmits from l2_off without a copy.
 */
static __always_inline int to_reorder(struct xdp_md *ctx, __u32 l2_off, int v4,
				      __u16 node, __u16 flow, __u16 gid, __u8 flags, __u32 peer)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct wps_xsk_desc *d = data;
	struct bpf_fib_lookup fib;
	struct ethhdr *eth;
	int rc;

	eth = data + l2_bound(l2_off);
	if ((void *)(eth + 1) > end || (void *)(d + 1) > end)
		return XDP_DROP;
	rc = fib_inner(ctx, &fib, eth + 1, end, v4);
	if (rc < 0)
		return XDP_DROP;
	/* Read-only till here: the redirect target was checked by the caller. */
	if (rc == BPF_FIB_LKUP_RET_SUCCESS) {
		__builtin_memcpy(eth->h_dest, fib.dmac, ETH_ALEN);
		__builtin_memcpy(eth->h_source, fib.smac, ETH_ALEN);
	} else {
		__builtin_memset(eth, 0, 2 * ETH_ALEN);
	}
	eth->h_proto = bpf_htons(v4 ? ETH_P_IP : ETH_P_IPV6);
	d->magic = WPS_XSK_MAGIC;
	d->flags = flags;
	d->fib_rc = (__u8)rc;
	d->l2_off = (__u16)l2_off;
	d->ifindex = fib.ifindex;
	d->ingress_node = node;
	d->flow_id = flow;
	d->group_id = gid;
	d->peer = (__u16)peer;
	d->len = 0;
	count(WPS_EG_CNT_R1_XSK);
	return XDP_REDIRECT;
}

/*
 * Frags-aware (multi-buffer): a jumbo frame may come as a first buffer and
 * fragments (native XDP on a link whose MTU exceeds a page, or generic XDP on
 * a non-linear skb). Every header read or rewritten here lies in the first
 * buffer (data..data_end; a first buffer holds at least the outer headers and
 * the inner IP header, or the frame is refused as malformed); lengths count
 * the whole frame (bpf_xdp_get_buff_len).
 */
SEC("xdp.frags")
int wps_egress(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct hdr_cursor c = { data, end };
	struct wps_eg_cfg *cfg;
	struct ipv6hdr *ip6;
	struct ethhdr *eth;
	struct wps_scan s;
	struct wps_opt *o;
	__u32 zero = 0, reason, *slot, l2_off, ifindex, peer, blen;
	__u16 node, flow, gid;
	__u8 flags;
	int nh, v4;

	if (parse_ethhdr(&c, &eth) != bpf_htons(ETH_P_IPV6))
		goto pass;
	nh = parse_ip6hdr(&c, &ip6);
	if (nh != WPS_IPPROTO_HOPOPTS && nh != WPS_IPPROTO_DSTOPTS)
		goto pass;
	if (!bpf_map_lookup_elem(&wps_eg_local, &ip6->daddr))
		goto pass;	/* transit, or another node's */
	cfg = bpf_map_lookup_elem(&wps_eg_cfg, &zero);
	if (!cfg)
		goto pass;
	if (wps_scan(ctx, &c, (__u8)nh, &s) != WPS_SCAN_OK) {
		count(WPS_EG_CNT_RX_WPS);	/* to us, and we cannot tell: not for the kernel either */
		return reject(ctx, cfg, WPS_EG_CNT_BAD_EXTHDR, ip6, NULL, end);
	}
	if (!s.n_hbh && !s.n_dst)
		goto pass;	/* other options, for the kernel */
	count(WPS_EG_CNT_RX_WPS);
	o = s.opt;
	if (!o || (void *)(o + 1) > end)
		return reject(ctx, cfg, WPS_EG_CNT_BAD_EXTHDR, ip6, NULL, end);
	if (s.n_hbh && s.n_dst)
		return reject(ctx, cfg, WPS_EG_CNT_BOTH_HDRS, ip6, o, end);
	if (s.n_hbh > 1 || s.n_dst > 1)
		return reject(ctx, cfg, WPS_EG_CNT_DUP_OPT, ip6, o, end);
	if (o->len != WPS_OPT_DATA_LEN)
		return reject(ctx, cfg, WPS_EG_CNT_BAD_OPT_LEN, ip6, o, end);
	if (peer_of(cfg, ip6, bpf_ntohs(o->ingress_node), &peer, &reason))
		return reject(ctx, cfg, reason, ip6, o, end);
	if (bpf_ntohs(o->egress_node) != cfg->node_id)
		return reject(ctx, cfg, WPS_EG_CNT_WRONG_NODE, ip6, o, end);
	blen = (__u32)bpf_xdp_get_buff_len(ctx);
	if (sizeof(*ip6) + bpf_ntohs(ip6->payload_len) != (__u64)blen - ((void *)ip6 - data))
		return reject(ctx, cfg, WPS_EG_CNT_BAD_LENGTH, ip6, o, end);
	if (check_inner(&c, s.nexthdr, (__u64)blen - (c.pos - data), &reason))
		return reject(ctx, cfg, reason, ip6, o, end);

	flags = o->flags;
	node = bpf_ntohs(o->ingress_node);
	flow = bpf_ntohs(o->flow_id);
	gid = bpf_ntohs(o->group_id);
	v4 = s.nexthdr == WPS_IPPROTO_IPIP;
	l2_off = (__u32)(c.pos - data) - sizeof(struct ethhdr);
	if (l2_off > 0x1ff - sizeof(struct ethhdr))
		return reject(ctx, cfg, WPS_EG_CNT_BAD_EXTHDR, ip6, o, end);
	/* Domain isolation on the way out: neither way out passes TC. */
	if (!v4) {
		int w = ip6x_has_wps(ctx, l2_off + sizeof(struct ethhdr), blen);

		if (w != IP6X_NO_WPS)
			return reject(ctx, cfg, w == IP6X_WPS ? WPS_EG_CNT_DROP_INNER_WPS :
				      WPS_EG_CNT_DROP_INNER_UNWALKED, ip6, o, end);
	}
	/* The outer header's ECN into the inner one, for every way out (XDP, the
	 * reorder thread's AF_XDP and raw sockets, the kernel): all leave with the
	 * inner packet as laid out here. */
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	ip6 = data + sizeof(struct ethhdr);
	if ((void *)(ip6 + 1) > end)
		return XDP_DROP;
	if (ecn_decap(ip6, data + l2_bound(l2_off) + sizeof(struct ethhdr), end, v4))
		return reject(ctx, cfg, WPS_EG_CNT_DROP_CE_NOT_ECT, ip6, NULL, end);

	if ((flags & WPS_FLAG_R) && !(cfg->flags & WPS_EG_F_NO_REORDER)) {
		/* Sockets without multi-buffer take one frame of at most xsk_max bytes
		 * in one buffer (a kernel before 6.6 would copy only a first buffer):
		 * a larger packet is decapsulated here, its order not restored. */
		if (cfg->xsk_max && (blen > cfg->xsk_max || blen != (__u32)(end - data))) {
			count(WPS_EG_CNT_R1_TOO_BIG);
			return decap_forward(ctx, l2_off, v4);
		}
		/* The flow's reorder thread: its socket on the queue the frame came in on. */
		ifindex = ctx->ingress_ifindex;
		slot = bpf_map_lookup_elem(&wps_eg_ifslot, &ifindex);
		if (slot && bpf_redirect_map(&wps_eg_xsks,
					     wps_eg_xsk_key(*slot, ctx->rx_queue_index,
							    wps_eg_shard(peer, node, flow, cfg->shards)), 0) == XDP_REDIRECT)
			return to_reorder(ctx, l2_off, v4, node, flow, gid, flags, peer);
		count(WPS_EG_CNT_R1_NO_XSK);
	}
	return decap_forward(ctx, l2_off, v4);

pass:
	count(WPS_EG_CNT_PASS_OTHER);
	return XDP_PASS;
}
