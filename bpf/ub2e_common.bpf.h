/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What both UB2E conversion programs share: the maps (one instance, because
 * the two objects are linked into ub2e.bpf.o), counters, the validation of the
 * IP..TPH part that UB and UBoE have in common, and FIB verdict handling.
 */
#ifndef UB2E_COMMON_BPF_H
#define UB2E_COMMON_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <stdbool.h>

#include "ub_wire.h"
#include "ub2e_maps.h"
#include "lib/parse.h"
#include "lib/ip_edit.h"
#include "lib/fib.h"

/*
 * The configuration is global data in a section of its own (bpf/ub2e_cfg.bpf.c):
 * the programs read it with direct loads, no map lookup and no NULL check per
 * packet, while libbpf still makes the section a one-entry array map
 * (".data.cfg", value struct ub2e_cfg) that ubctl fills and pins as `cfg` and
 * bpftool can edit live.
 */
extern struct ub2e_cfg ub2e_cfg;

/* __weak: both objects define the maps; the static linker keeps one of each. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UB2E_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} ub2e_stats SEC(".maps") __weak;

#include "ub2e_npi2vlan.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UB2E_VLAN_MAX);
	__type(key, __u32);		/* VLAN ID */
	__type(value, __u32);		/* UB2E_VLAN_VALID | [ANY_PERM] | NPI key */
} ub2e_vlan2npi SEC(".maps") __weak;

/* Egress ports by side: UB -> UBoE may only leave on IP-side ports, and back. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, UB2E_MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} ub2e_tx_ip SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, UB2E_MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} ub2e_tx_ub SEC(".maps") __weak;

static __always_inline void count(__u32 id)
{
	__u64 *v = bpf_map_lookup_elem(&ub2e_stats, &id);

	if (v)
		(*v)++;
}

static __always_inline const struct ub2e_cfg *ub2e_config(void)
{
	return &ub2e_cfg;
}

/*
 * The IP..TPH part of a UB or UBoE packet, validated. One IP pointer and a
 * version flag rather than two pointers: the verifier cannot follow "exactly
 * one of two pointers is NULL" once the compiler merges the branches.
 */
struct ub_l3 {
	void *ip;		/* struct iphdr or struct ipv6hdr */
	struct udphdr *udph;
	struct ub_tph *tph;
	__be32 saddr;		/* IPv4 */
	bool v6;
};

#define L3_IP4(l3) ((struct iphdr *)(l3)->ip)
#define L3_IP6(l3) ((struct ipv6hdr *)(l3)->ip)

#define UB2E_NOT_UBOE	(-1)

/*
 * The IPv4 source address from the two 16-bit words the checksum test just
 * read: behind an 802.1Q tag a 32-bit load of it straddles an 8-byte
 * boundary, and when the frame was just written in 8-byte stores (a driver
 * that builds it in software; the bench's frame reset) the load waits for
 * them to reach the cache instead of taking the data from the stores.
 */
static __always_inline __be32 ip4_saddr_halves(const struct iphdr *iph)
{
	const __u16 *w = (const __u16 *)&iph->saddr;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (__be32)(w[0] | (__u32)w[1] << 16);
#else
	return (__be32)((__u32)w[0] << 16 | w[1]);
#endif
}

/* Sources a router never forwards from (RFC 1812 §5.3.7): multicast, limited
 * broadcast, loopback, unspecified. */
static __always_inline bool ip4_src_martian(__be32 saddr)
{
	/* The first octet without a byte swap: 224/4 (multicast), 127/8. */
	__u8 a0 = ((const __u8 *)&saddr)[0];

	/* saddr + 1 <= 1: 255.255.255.255 (wraps to 0) or 0.0.0.0, in any byte order */
	return (a0 & 0xf0) == 0xe0 || a0 == 127 || saddr + 1 <= 1;
}

static __always_inline bool ip6_src_martian(const struct in6_addr *a)
{
	__u32 w0 = a->in6_u.u6_addr32[0], rest = a->in6_u.u6_addr32[1] | a->in6_u.u6_addr32[2];

	if (a->in6_u.u6_addr8[0] == 0xff)
		return true;
	/* :: and ::1 */
	return !(w0 | rest) && (a->in6_u.u6_addr32[3] == 0 || a->in6_u.u6_addr32[3] == bpf_htonl(1));
}

/*
 * Validate IP (version `v6`), UDP/4792 and the TPH. Returns 0 when valid, a
 * drop counter when this is a UB packet that must not pass, or UB2E_NOT_UBOE
 * when it is some other IP traffic. `native`: the packet came in as native UB,
 * so everything in it claims to be UB and any deviation is a drop.
 *
 * The tests one by one, each with its verdict: ub2e_parse_l3() below runs
 * them all at once and comes here only when one of them fails, or when the
 * IP packet goes on past the first buffer (a multi-buffer frame: the
 * programs are xdp.frags, and ctx gives the whole frame's length).
 */
static __always_inline int ub2e_parse_l3_exact(struct xdp_md *ctx, struct hdr_cursor *c, bool v6,
					       bool native, struct ub_l3 *l3)
{
	__u32 ip_len, udp_len, avail;
	void *ip_start = c->pos;

	l3->ip = ip_start;
	l3->v6 = v6;

	/* cursor_skip, not the parse_* helpers: every packet pays for their
	 * second, NULL, test. */
	if (!v6) {
		struct iphdr *iph = ip_start;

		if (!cursor_skip(c, sizeof(*iph)))
			return native ? UB2E_CNT_DROP_TRUNCATED : UB2E_NOT_UBOE;
		if (iph->version != 4)
			return native ? UB2E_CNT_DROP_IP_VERSION : UB2E_NOT_UBOE;
		if (iph->protocol != IPPROTO_UDP)
			return native ? UB2E_CNT_DROP_NOT_UBOE : UB2E_NOT_UBOE;
		if (iph->frag_off & bpf_htons(0x1fff))	/* later fragment: no UDP header */
			return native ? UB2E_CNT_DROP_IPV4_FRAGMENT : UB2E_NOT_UBOE;
		if (iph->ihl != 5) {
			/* Only a UDP/4792 datagram with options is UBoE gone wrong. */
			__u32 ihl = iph->ihl * 4;
			struct udphdr *u;

			if (ihl < sizeof(*iph) || ihl > 60)
				return native ? UB2E_CNT_DROP_IPV4_OPTIONS : UB2E_NOT_UBOE;
			u = ip_start + ihl;
			if ((void *)(u + 1) > c->end)
				return native ? UB2E_CNT_DROP_TRUNCATED : UB2E_NOT_UBOE;
			if (native || u->dest == bpf_htons(UBOE_UDP_PORT))
				return UB2E_CNT_DROP_IPV4_OPTIONS;
			return UB2E_NOT_UBOE;
		}
		ip_len = bpf_ntohs(iph->tot_len);
	} else {
		struct ipv6hdr *ip6h = ip_start;

		if (!cursor_skip(c, sizeof(*ip6h)))
			return native ? UB2E_CNT_DROP_TRUNCATED : UB2E_NOT_UBOE;
		if (ip6h->version != 6)
			return native ? UB2E_CNT_DROP_IP_VERSION : UB2E_NOT_UBOE;
		/* UBoE carries no extension headers (docs/WIRE.md §1). */
		if (ip6h->nexthdr != IPPROTO_UDP)
			return native ? UB2E_CNT_DROP_NOT_UBOE : UB2E_NOT_UBOE;
		ip_len = bpf_ntohs(ip6h->payload_len) + sizeof(*ip6h);
	}

	l3->udph = c->pos;
	if (!cursor_skip(c, sizeof(*l3->udph)))
		return native ? UB2E_CNT_DROP_TRUNCATED : UB2E_NOT_UBOE;
	if (l3->udph->dest != bpf_htons(UBOE_UDP_PORT))
		return native ? UB2E_CNT_DROP_NOT_UBOE : UB2E_NOT_UBOE;

	/* From here on it is UB: every defect is a drop. */
	if (!v6) {
		struct iphdr *iph = L3_IP4(l3);

		if (iph->frag_off & bpf_htons(0x2000))
			return UB2E_CNT_DROP_IPV4_FRAGMENT;
		/* RFC 1812 §5.2.2: a router verifies the header checksum. */
		if (!ip4_csum_ok(iph))
			return UB2E_CNT_DROP_IPV4_CHECKSUM;
		l3->saddr = ip4_saddr_halves(iph);
		if (ip4_src_martian(l3->saddr))
			return UB2E_CNT_DROP_SRC_MARTIAN;
	} else if (ip6_src_martian(&L3_IP6(l3)->saddr)) {
		return UB2E_CNT_DROP_SRC_MARTIAN;
	}

	l3->tph = c->pos;
	if (!cursor_skip(c, sizeof(*l3->tph)))
		return UB2E_CNT_DROP_TRUNCATED;

	/* Lengths: the IP packet must fit the frame (trailing Ethernet padding is
	 * fine) and leave room for UDP, TPH and ICRC; UDP must agree with IP.
	 * The frame is all its buffers: a multi-buffer (jumbo) frame goes on
	 * past c->end, the first buffer's end, in fragments. Asked only here,
	 * off the fast path: a helper call per packet for what only a frame
	 * longer than its first buffer needs. */
	avail = c->end - ip_start;
	if (ip_len > avail &&
	    ip_len > (__u32)bpf_xdp_get_buff_len(ctx) - (__u32)(ip_start - (void *)(long)ctx->data))
		return UB2E_CNT_DROP_TRUNCATED;
	udp_len = bpf_ntohs(l3->udph->len);
	if (udp_len != ip_len - ((void *)l3->udph - ip_start) ||
	    udp_len < sizeof(struct udphdr) + sizeof(struct ub_tph) + UBOE_ICRC_LEN)
		return UB2E_CNT_DROP_IP_LENGTH;

	if (!ub_tp_opcode_valid(ub_tph_opcode(l3->tph)))
		return UB2E_CNT_DROP_TP_OPCODE;
	return 0;
}

/*
 * ub2e_parse_l3_exact()'s verdict, with every test of a valid packet in one
 * pass that has no verdict to carry: all failures leave through one branch to
 * the exact tests, which find which one failed (in the same order, so with
 * the same counter). With a verdict per test, the compiler kept the verdict
 * in a stack slot, a store per test on every packet. A packet passes here
 * exactly when it passes there: the same tests, with the header bounds in one
 * check, and version/IHL, protocol and fragment bits in three.
 */
static __always_inline int ub2e_parse_l3(struct xdp_md *ctx, struct hdr_cursor *c, bool v6,
					 bool native, struct ub_l3 *l3)
{
	void *ip = c->pos, *end = c->end;
	struct udphdr *udph;
	struct ub_tph *tph;
	__u32 ip_len, udp_len;
	__be32 saddr = 0;

	if (!v6) {
		struct iphdr *iph = ip;

		udph = ip + sizeof(*iph);
		tph = (void *)(udph + 1);
		if ((void *)(tph + 1) > end)
			goto exact;
		if (*(const __u8 *)iph != 0x45 || iph->protocol != IPPROTO_UDP ||
		    (iph->frag_off & bpf_htons(0x3fff)))	/* MF, offset */
			goto exact;
		/* Native UB: the IP header is 24 bytes into the frame. */
		if (udph->dest != bpf_htons(UBOE_UDP_PORT) ||
		    !(native ? ip4_csum_ok_words(iph) : ip4_csum_ok(iph)))
			goto exact;
		saddr = native ? iph->saddr : ip4_saddr_halves(iph);
		if (ip4_src_martian(saddr))
			goto exact;
		ip_len = bpf_ntohs(iph->tot_len);
	} else {
		struct ipv6hdr *ip6h = ip;

		udph = ip + sizeof(*ip6h);
		tph = (void *)(udph + 1);
		if ((void *)(tph + 1) > end)
			goto exact;
		if (ip6h->version != 6 || ip6h->nexthdr != IPPROTO_UDP ||
		    udph->dest != bpf_htons(UBOE_UDP_PORT) || ip6_src_martian(&ip6h->saddr))
			goto exact;
		ip_len = bpf_ntohs(ip6h->payload_len) + sizeof(*ip6h);
	}
	udp_len = bpf_ntohs(udph->len);
	/* The IP header's length as a constant, not udph - ip: from that the
	 * compiler made packet-pointer arithmetic with ip_len, which 6.1's
	 * verifier refuses (no bounds after a byte swap). udp_len < 2^16, so
	 * this unsigned difference matches only where the signed one does. */
	if (ip_len > (__u32)(end - ip) ||
	    udp_len != ip_len - (__u32)(v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) ||
	    udp_len < sizeof(struct udphdr) + sizeof(struct ub_tph) + UBOE_ICRC_LEN ||
	    !ub_tp_opcode_valid(ub_tph_opcode(tph)))
		goto exact;
	l3->ip = ip;
	l3->udph = udph;
	l3->tph = tph;
	l3->saddr = saddr;
	l3->v6 = v6;
	c->pos = tph + 1;
	return 0;
exact:
	return ub2e_parse_l3_exact(ctx, c, v6, native, l3);
}

static __always_inline __u8 ub_l3_ecn(const struct ub_l3 *l3)
{
	return l3->v6 ? ip6_ecn(L3_IP6(l3)) : ip4_ecn(L3_IP4(l3));
}

static __always_inline __u8 ub_l3_ttl(const struct ub_l3 *l3)
{
	return l3->v6 ? L3_IP6(l3)->hop_limit : L3_IP4(l3)->ttl;
}

static __always_inline void ub_l3_dec_ttl(struct ub_l3 *l3)
{
	if (l3->v6)
		L3_IP6(l3)->hop_limit--;
	else
		ip4_dec_ttl(L3_IP4(l3));
}

static __always_inline int ub_l3_fib(void *ctx, struct bpf_fib_lookup *p, __u32 ifindex,
				     const struct ub_l3 *l3, __u16 grow)
{
	if (l3->v6)
		return fib_lookup_ip6(ctx, p, ifindex, L3_IP6(l3), l3->udph, grow);
	return fib_lookup_ip4_udp(ctx, p, ifindex, L3_IP4(l3), l3->saddr, l3->udph, grow);
}

/*
 * Too big for the egress MTU: the kernel answers with ICMP Fragmentation
 * Needed / Packet Too Big. Force DF so that it never fragments instead; the
 * packet itself is not forwarded either way.
 */
static __always_inline void ub_l3_force_df(struct ub_l3 *l3)
{
	struct iphdr *iph = L3_IP4(l3);
	__be16 old;

	if (l3->v6 || (iph->frag_off & bpf_htons(0x4000)))
		return;
	old = iph->frag_off;
	iph->frag_off |= bpf_htons(0x4000);
	csum_replace2(&iph->check, old, iph->frag_off);
}

/*
 * Why a FIB verdict sends the packet to the kernel instead of forwarding it:
 * the kernel resolves neighbours, delivers locally and answers with ICMP.
 */
static __always_inline __u32 ub2e_fib_punt_reason(int rc)
{
	switch (rc) {
	case BPF_FIB_LKUP_RET_NO_NEIGH:
		return UB2E_CNT_PASS_NO_NEIGH;
	case BPF_FIB_LKUP_RET_NOT_FWDED:
		return UB2E_CNT_PASS_LOCAL;
	case BPF_FIB_LKUP_RET_FRAG_NEEDED:
		return UB2E_CNT_PASS_FRAG_NEEDED;
	default:
		return UB2E_CNT_PASS_FIB_OTHER;
	}
}

/*
 * Remove `len` bytes right after the MAC addresses (LPH+NTH, or an 802.1Q
 * tag) and set the EtherType: what the kernel gets when a packet is punted.
 * Returns 0, or -1 (the caller counts drop_adjust_failed).
 */
static __always_inline int ub2e_strip_after_macs(struct xdp_md *ctx, int len, __be16 proto)
{
	struct ethhdr *eth = (void *)(long)ctx->data;
	unsigned char dst[ETH_ALEN], src[ETH_ALEN];

	if ((void *)(eth + 1) > (void *)(long)ctx->data_end)
		return -1;
	__builtin_memcpy(dst, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(src, eth->h_source, ETH_ALEN);
	if (len && bpf_xdp_adjust_head(ctx, len))
		return -1;
	eth = (void *)(long)ctx->data;
	if ((void *)(eth + 1) > (void *)(long)ctx->data_end)
		return -1;
	__builtin_memcpy(eth->h_dest, dst, ETH_ALEN);
	__builtin_memcpy(eth->h_source, src, ETH_ALEN);
	eth->h_proto = proto;
	return 0;
}

/*
 * Hand the packet to the kernel as the plain IP packet it carries (`strip`
 * bytes after the MACs go), with its NPI and CAQM request in 8 bytes of XDP
 * metadata that TC ingress turns into skb->mark and skb->tc_index, so that
 * whatever the kernel forwards leaves converted (bpf/ub2e_tc.bpf.c). Exactly
 * one verdict counter moves.
 */
static __always_inline int ub2e_punt(struct xdp_md *ctx, int strip, __be16 ip_proto,
				     __u32 mark, __u32 caqm, __u32 reason)
{
	struct ub2e_punt_meta *meta;

	if (ub2e_strip_after_macs(ctx, strip, ip_proto) || bpf_xdp_adjust_meta(ctx, -(int)sizeof(*meta)))
		goto fail;
	meta = (void *)(long)ctx->data_meta;
	if ((void *)(meta + 1) > (void *)(long)ctx->data)
		goto fail;
	meta->mark = mark;
	meta->caqm = caqm;
	count(reason);
	return XDP_PASS;
fail:
	count(UB2E_CNT_DROP_ADJUST_FAILED);
	return XDP_DROP;
}

/*
 * The Ethernet header of a frame about to be redirected: the next hop's MACs
 * from the FIB and the EtherType, in 16-bit stores (through packed struct
 * ethhdr they would be written byte by byte, on every forwarded packet).
 */
static __always_inline void ub2e_write_eth(void *frame, const struct bpf_fib_lookup *fib, __be16 proto)
{
	const void *dmac = fib->dmac, *smac = fib->smac;
	const __u16 *d = dmac, *s = smac;
	__u16 *w = frame;

	w[0] = d[0];
	w[1] = d[1];
	w[2] = d[2];
	w[3] = s[0];
	w[4] = s[1];
	w[5] = s[2];
	w[6] = proto;
}

/* The EtherType in one load: through packed struct ethhdr it is read byte by byte. */
static __always_inline __be16 ub2e_eth_proto(const struct ethhdr *eth)
{
	return *(const __be16 *)((const __u8 *)eth + __builtin_offsetof(struct ethhdr, h_proto));
}

/*
 * RFC 1812 §5.3.7 / §5.3.4: only unicast frames for this port are routed.
 * The destination is read through a plain pointer: through packed struct
 * ethhdr the compiler would load it byte by byte, on every packet.
 */
static __always_inline bool ub2e_not_for_us(const struct ethhdr *eth, const __u8 *mac)
{
	const void *dst = eth;
	__u32 set = *(const __u32 *)mac | *(const __u16 *)(mac + 4);

	if (eth->h_dest[0] & 1)		/* broadcast, multicast */
		return true;
	return set && (*(const __u32 *)dst != *(const __u32 *)mac ||
		       *(const __u16 *)(dst + 4) != *(const __u16 *)(mac + 4));
}

static __always_inline struct ub2e_npi_vlans *ub2e_npi_lookup(__u32 pid)
{
	__u32 hi = pid >> 12, lo = pid & 0xfff;
	void *block = bpf_map_lookup_elem(&ub2e_npi2vlan, &hi);

	return block ? bpf_map_lookup_elem(block, &lo) : NULL;
}

/*
 * The VLAN ID for a Partition ID (draft §5.3), shared by XDP and the slow
 * path: 0 for untagged, or -counter to drop. VLAN IDs from the map are masked
 * to 12 bits (bpftool writes anything); 4095 is reserved.
 */
static __always_inline int ub2e_npi_to_vlan(const struct ub2e_cfg *cfg, __u32 pid, __u8 perm)
{
	struct ub2e_npi_vlans *e;
	__u32 v;

	if (cfg->flags & UB2E_F_UNTAGGED)
		return 0;
	e = ub2e_npi_lookup(pid);
	if (e) {
		v = (e->perm[perm & 1] & 0xfff) ? e->perm[perm & 1] : e->any;
		v &= 0xfff;
		if (v == 0xfff)
			return -UB2E_CNT_DROP_VLAN_RESERVED;
		if (v)
			return v;
	}
	if (cfg->flags & UB2E_F_STRICT_VLAN)
		return -UB2E_CNT_DROP_NPI_UNMAPPED;
	v = pid & 0xfff;	/* draft §5.3: the lower 12 bits */
	if (v == 0 || v == 0xfff)
		return -UB2E_CNT_DROP_VLAN_RESERVED;
	return v;
}

/* Should the packet leave through egress port `ifindex` of this side? */
static __always_inline bool ub2e_is_port(void *devmap, __u32 ifindex)
{
	return bpf_map_lookup_elem(devmap, &ifindex) != NULL;
}

#endif
