/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the UB2E switch's programs share: the maps (one instance, because
 * the objects are linked into ub2e.linked.o), counters, the edits and FIB
 * lookup of a validated UB or UBoE packet (lib/ub_parse.h validates it), and
 * FIB verdict handling.
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
#include "lib/ub_parse.h"
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
extern const volatile __u64 ub2e_punt_key;

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
 * metadata (or a header, see struct ub2e_punt_hdr) that TC ingress turns
 * into skb->mark and skb->tc_index, so that
 * whatever the kernel forwards leaves converted (bpf/ub2e_tc.bpf.c). Exactly
 * one verdict counter moves.
 */
static __always_inline int ub2e_punt(struct xdp_md *ctx, int strip, __be16 ip_proto,
				     __u32 mark, __u32 caqm, __u32 reason)
{
	struct ub2e_punt_meta *meta;

	if (ub2e_punt_key) {
		struct ub2e_punt_hdr *h;

		/* Strip what goes less the header's room: Ethernet | header | IP. */
		if (ub2e_strip_after_macs(ctx, strip - (int)sizeof(*h), ip_proto))
			goto fail;
		h = (void *)(long)ctx->data + sizeof(struct ethhdr);
		if ((void *)(h + 1) > (void *)(long)ctx->data_end)
			goto fail;
		__builtin_memset(h->not_ip, 0, sizeof(h->not_ip));
		h->not_ip[UB2E_PUNT_NOT_IP6_NH] = 0xff;
		h->m.mark = mark;
		h->m.caqm = caqm;
		h->key = ub2e_punt_key;
		count(reason);
		return XDP_PASS;
	}
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
