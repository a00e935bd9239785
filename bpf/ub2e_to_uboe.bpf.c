// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UB2E switch, UB -> UBoE (draft-li-uboe-00 §5), attached to the UB-side port.
 *
 * In:  Eth(0x88B5) | LPH | NTH | IPv4/IPv6 | UDP 4792 | TPH | ...
 * Out: Eth | [802.1Q] | [CAQM tag] | IPv4/IPv6 | UDP 4792 | TPH | ...   (redirected to an IP-side port)
 *
 * RT is dropped, CCI/FECN becomes IP ECN, NPI becomes the VLAN ID; with
 * --caqm-tag a CAQM CCI becomes the Ethernet CAQM tag. The IP packet is
 * otherwise untouched but for TTL, so the ICRC stays valid.
 */
#include "ub2e_common.bpf.h"
#include "lib/caqm_tag.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Received and not forwarded: rx_ub and the reason (a forwarded packet moves
 * tx_uboe alone). Not inlined: the many drop exits share one copy of the two
 * counter updates, which keeps the program's code small.
 */
static __noinline int drop(__u32 why)
{
	count(UB2E_CNT_RX_UB);
	count(why);
	return XDP_DROP;
}

/*
 * Punts happen before any header moved: the mark and the CAQM request that
 * crosses in a tag are made here from the NTH still in the frame, so the fast
 * path keeps nothing for them across the FIB lookup.
 */
static __always_inline int punt(struct xdp_md *ctx, __be16 ip_proto, __u32 why)
{
	const struct ub_nth *nth = (void *)(long)ctx->data + sizeof(struct ethhdr) + sizeof(struct ub_lph);
	__u16 cci;

	if ((void *)(nth + 1) > (void *)(long)ctx->data_end)
		return drop(UB2E_CNT_DROP_ADJUST_FAILED);
	count(UB2E_CNT_RX_UB);
	/* A CCI in another mode has no FECN: the kernel's answers say no congestion. */
	cci = bpf_ntohs(nth->cci);
	return ub2e_punt(ctx, UB_NATIVE_HDR_LEN, ip_proto,
			 ub2e_mark(ub_nth_pid(nth), ub_nth_perm(nth),
				   ub_cci_mode(cci) == UB_CCI_MODE_FECN ? ub_cci_fecn(cci) : 0),
			 caqm_tag_len(ub2e_config(), cci) ? caqm_tag_slow(ub_cci_to_caqm_tag(cci)) : 0, why);
}

/* The NTH's fields in word loads (through its packed struct they are read byte by byte). */
static __always_inline __u16 nth_cci(const struct ub_nth *nth)
{
	return bpf_ntohs(*(const __be16 *)((const __u8 *)nth + __builtin_offsetof(struct ub_nth, cci)));
}

/* rsv(7).Permission(1) | Partition ID(24) */
static __always_inline __u32 nth_perm_pid(const struct ub_nth *nth)
{
	return bpf_ntohl(*(const __be32 *)((const __u8 *)nth + __builtin_offsetof(struct ub_nth, perm)));
}

/*
 * From the IP header on, once per IP version: `v6` is a constant in each copy,
 * so the version tests, and the registers they hold, leave the fast path.
 */
static __always_inline int to_uboe_ip(struct xdp_md *ctx, const struct ub2e_cfg *cfg,
				      struct hdr_cursor c, const struct ub_nth *nth, bool v6,
				      bool caqm);

/*
 * IPv4 without the switch's CAQM tags gets a copy of its own: no tag is
 * written and its length is the constant 0, one register fewer across the
 * FIB lookup (and fewer stack spills). IPv6 keeps the one copy: its own made
 * IPv6 2-3% slower (bench/xdp_bench.c, 41 rounds against main, several runs).
 */
static __always_inline int to_uboe_tags(struct xdp_md *ctx, const struct ub2e_cfg *cfg,
					struct hdr_cursor c, const struct ub_nth *nth, bool v6)
{
	if (v6 || (cfg->flags & UB2E_F_CAQM_TAG))
		return to_uboe_ip(ctx, cfg, c, nth, v6, true);
	return to_uboe_ip(ctx, cfg, c, nth, v6, false);
}

SEC("xdp.frags")
int ub2e_to_uboe(struct xdp_md *ctx)
{
	struct hdr_cursor c = { (void *)(long)ctx->data, (void *)(long)ctx->data_end };
	const struct ub2e_cfg *cfg = ub2e_config();
	struct ethhdr *eth = c.pos;
	struct ub_lph *lph;

	if (!cfg)
		return XDP_PASS;
	/* cursor_skip, not cursor_pull: no second (NULL) test per header. */
	if (!cursor_skip(&c, sizeof(*eth)) || ub2e_eth_proto(eth) != bpf_htons(cfg->ub_ethertype)) {
		count(UB2E_CNT_PASS_NOT_UB);
		return XDP_PASS;
	}
	if (ub2e_not_for_us(eth, cfg->ub_mac)) {
		count(UB2E_CNT_PASS_NOT_FOR_US);
		return XDP_PASS;
	}

	/* LPH and NTH in one bounds check. */
	lph = c.pos;
	if (!cursor_skip(&c, UB_NATIVE_HDR_LEN))
		return drop(UB2E_CNT_DROP_TRUNCATED);
	switch (ub_lph_config(lph)) {
	case UB_LPH_CONFIG_IPV4:
		return to_uboe_tags(ctx, cfg, c, (const struct ub_nth *)(lph + 1), false);
	case UB_LPH_CONFIG_IPV6:
		return to_uboe_tags(ctx, cfg, c, (const struct ub_nth *)(lph + 1), true);
	default:
		return drop(UB2E_CNT_DROP_LPH_CONFIG);
	}
}

static __always_inline int to_uboe_ip(struct xdp_md *ctx, const struct ub2e_cfg *cfg,
				      struct hdr_cursor c, const struct ub_nth *nth, bool v6,
				      bool caqm)
{
	__be16 ip_proto = v6 ? bpf_htons(ETH_P_IPV6) : bpf_htons(ETH_P_IP);
	/* 8-aligned: the FIB parameters are written in 8-byte stores. */
	struct bpf_fib_lookup fib __attribute__((aligned(8)));
	struct vlan_tag *tag;
	struct ethhdr *eth;
	struct ub_l3 l3;
	__u32 pid, perm_pid;
	__u8 ecn = 0xff;	/* none to write */
	__u16 cci;
	int rc, vid, tlen;

	rc = ub2e_parse_l3(ctx, &c, v6, true, &l3);
	if (rc)
		return drop(rc);

	perm_pid = nth_perm_pid(nth);
	pid = perm_pid & UB_PID_MASK;
	if (pid == UB_PID_INVALID)
		return drop(UB2E_CNT_DROP_PARTITION_ZERO);
	vid = ub2e_npi_to_vlan(cfg, pid, (perm_pid >> 24) & 1);
	if (vid < 0)
		return drop(-vid);

	/* CCI -> ECN (draft §5.2.1); LoC has no IP equivalent and is dropped.
	 * IPv4 writes the ECN together with the TTL on the way out (one
	 * checksum update), or before a punt: the kernel gets it too. */
	cci = nth_cci(nth);
	tlen = caqm ? caqm_tag_len(cfg, cci) : 0;
	if (ub_cci_mode(cci) == UB_CCI_MODE_FECN) {
		ecn = cfg->fecn_to_ecn[ub_cci_fecn(cci)] & 3;
		if (v6)
			ip6_set_ecn(L3_IP6(&l3), ecn);
	} else if (!tlen) {	/* a CAQM CCI in a tag crosses; others have no IP form */
		if (cfg->cci_policy == UB2E_CCI_DROP)
			return drop(UB2E_CNT_DROP_CCI_NOT_FECN);
		count(UB2E_CNT_CCI_NOT_FECN);
	}

	if (!(cfg->flags & UB2E_F_NO_TTL_DEC) && ub_l3_ttl(&l3) <= 1) {
		if (!v6 && ecn <= 3)
			ip4_set_ecn(L3_IP4(&l3), ecn);
		return punt(ctx, ip_proto, UB2E_CNT_PASS_TTL_EXPIRED);
	}

	/* The 802.1Q tag is not part of the MTU: the IP packet leaves as it is.
	 * The CAQM tag is counted: a receiver allows one tag beyond the MTU.
	 * (The FIB takes the DSCP of tos, not the ECN bits not yet written.) */
	rc = ub_l3_fib(ctx, &fib, ctx->ingress_ifindex, &l3, (__u16)tlen);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS) {
		/* The kernel forwards it once the neighbour resolves: only to this side's ports. */
		if (rc == BPF_FIB_LKUP_RET_NO_NEIGH && !ub2e_is_port(&ub2e_tx_ip, fib.ifindex))
			return drop(UB2E_CNT_DROP_NOT_EGRESS_PORT);
		if (!v6 && ecn <= 3)
			ip4_set_ecn(L3_IP4(&l3), ecn);
		if (rc == BPF_FIB_LKUP_RET_FRAG_NEEDED)
			ub_l3_force_df(&l3);
		return punt(ctx, ip_proto, ub2e_fib_punt_reason(rc));
	}

	if (!v6)
		ip4_set_ecn_dec_ttl(L3_IP4(&l3), ecn, !(cfg->flags & UB2E_F_NO_TTL_DEC));
	else if (!(cfg->flags & UB2E_F_NO_TTL_DEC))
		L3_IP6(&l3)->hop_limit--;

	/* LPH + NTH (10 bytes) go; an 802.1Q tag and a CAQM tag (4 bytes each) may come. */
	if (bpf_xdp_adjust_head(ctx, (int)UB_NATIVE_HDR_LEN - (vid ? (int)sizeof(struct vlan_tag) : 0) - tlen))
		return drop(UB2E_CNT_DROP_ADJUST_FAILED);
	/* One bounds check for Ethernet and both tags (the IP packet follows them). */
	eth = (void *)(long)ctx->data;
	tag = (void *)(eth + 1);
	if ((void *)(tag + 2) > (void *)(long)ctx->data_end)
		return drop(UB2E_CNT_DROP_ADJUST_FAILED);
	if (vid) {
		tag->tci = bpf_htons(vid);
		tag->proto = tlen ? bpf_htons(cfg->caqm_ethertype) : ip_proto;
		tag++;
	}
	if (tlen)
		caqm_tag_write((struct ub_caqm_tag *)tag, cci, ip_proto);
	ub2e_write_eth(eth, &fib, vid ? bpf_htons(ETH_P_8021Q) :
				  tlen ? bpf_htons(cfg->caqm_ethertype) : ip_proto);
	/* The devmap is the membership test too: a port of the other side drops. */
	if (bpf_redirect_map(&ub2e_tx_ip, fib.ifindex, XDP_DROP) != XDP_REDIRECT)
		return drop(UB2E_CNT_DROP_NOT_EGRESS_PORT);
	count(UB2E_CNT_TX_UBOE);
	return XDP_REDIRECT;
}
