// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UB2E switch, UBoE -> UB (draft-li-uboe-00 §5), attached to the IP-side port.
 *
 * In:  Eth | [802.1Q] | [CAQM tag] | IPv4/IPv6 | UDP 4792 | TPH | ...
 * Out: Eth(0x88B5) | LPH | NTH | IPv4/IPv6 | UDP 4792 | TPH | ...  (redirected to a UB-side port)
 *
 * LPH gets the configured RT, NTH gets CCI = FECN from the IP ECN (or, with
 * --caqm-tag, the CAQM CCI of the tag) and the NPI from the VLAN. Everything
 * that is not UBoE passes to the kernel untouched.
 */
#include "ub2e_common.bpf.h"
#include "lib/caqm_tag.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Received and not forwarded: rx_uboe and the reason (a forwarded packet moves
 * tx_ub alone). Not inlined: the many drop exits share one copy of the two
 * counter updates, which keeps the program's code small.
 */
static __noinline int drop(__u32 why)
{
	count(UB2E_CNT_RX_UBOE);
	count(why);
	return XDP_DROP;
}

/* The FECN for the packet's IP ECN (read where it is needed, not kept across the FIB lookup). */
static __always_inline __u8 l3_fecn(const struct ub2e_cfg *cfg, const struct ub_l3 *l3)
{
	return cfg->ecn_to_fecn[ub_l3_ecn(l3)] & UB_CCI_FECN_MASK;
}

/* The mark and the CAQM tag's request are made here, off the fast path.
 * `npi`: Permission << 24 | Partition ID; `info`: the tag's, or UB2E_TAG_NONE. */
static __always_inline int punt(struct xdp_md *ctx, int strip, __be16 ip_proto, __u32 npi,
				__u8 fecn, __u16 info, __u32 why)
{
	count(UB2E_CNT_RX_UBOE);
	return ub2e_punt(ctx, strip, ip_proto, ub2e_mark(npi & UB_PID_MASK, npi >> 24, fecn),
			 caqm_tag_slow(info), why);
}

/* The NPI for a VLAN ID (0: untagged), as Permission << 24 | Partition ID:
 * one word, not two out-parameters, so that it stays in one register.
 * Returns 0 or a drop counter. */
static __always_inline int vlan_to_npi(const struct ub2e_cfg *cfg, __u32 vid, __u32 *npi)
{
	__u32 *e, pid;

	if (!vid) {
		*npi = (__u32)(cfg->default_perm & 1) << 24 | (cfg->default_pid & UB_PID_MASK);
		return 0;
	}
	/* VLAN 4095 is reserved (IEEE 802.1Q), as on the way out. */
	if (vid == 0xfff)
		return UB2E_CNT_DROP_VLAN_RESERVED;
	e = bpf_map_lookup_elem(&ub2e_vlan2npi, &vid);
	if (e && (*e & UB2E_VLAN_VALID)) {
		pid = *e & UB_PID_MASK;
		/* Only a table written with bpftool can say this: Partition ID 0 is invalid. */
		if (!pid)
			return UB2E_CNT_DROP_PARTITION_ZERO;
		*npi = (__u32)((*e & UB2E_VLAN_ANY_PERM) ? cfg->default_perm & 1 :
			       (*e >> UB2E_VLAN_PERM_SHIFT) & 1) << 24 | pid;
		return 0;
	}
	if (cfg->flags & UB2E_F_STRICT_VLAN)
		return UB2E_CNT_DROP_VLAN_UNMAPPED;
	*npi = (__u32)UB_PERM_HIGH << 24 | vid;	/* draft §5.3: upper 12 bits 0, Permission high */
	return 0;
}

/* NTH in two stores (through its packed struct: six byte stores); as ub_nth_init().
 * `npi`: Permission << 24 | Partition ID, the NTH's last four bytes. */
static __always_inline void nth_write(struct ub_nth *nth, __u16 cci, __u32 npi)
{
	__u8 *b = (__u8 *)nth;

	*(__be16 *)(b + __builtin_offsetof(struct ub_nth, cci)) = bpf_htons(cci);
	*(__be32 *)(b + __builtin_offsetof(struct ub_nth, perm)) = bpf_htonl(npi);
}

/*
 * From the IP header on, once per IP version: `v6` is a constant in each copy,
 * so the version tests, and the registers they hold, leave the fast path.
 */
static __always_inline int to_ub_ip(struct xdp_md *ctx, const struct ub2e_cfg *cfg,
				    struct hdr_cursor c, __u16 vid, int strip, int proto,
				    __u16 info, bool v6);

/* The packet's IP version, as a constant for to_ub_ip(). */
static __always_inline int to_ub_ver(struct xdp_md *ctx, const struct ub2e_cfg *cfg,
				     struct hdr_cursor c, __u16 vid, int strip, int proto,
				     __u16 info)
{
	if (proto == bpf_htons(ETH_P_IP))
		return to_ub_ip(ctx, cfg, c, vid, strip, proto, info, false);
	if (proto == bpf_htons(ETH_P_IPV6))
		return to_ub_ip(ctx, cfg, c, vid, strip, proto, info, true);
	count(UB2E_CNT_PASS_NOT_UBOE);
	return XDP_PASS;
}

/*
 * The 802.1Q tag a driver stripped into offload metadata (rx-vlan-offload;
 * veth does so for a tag the sender left in skb metadata). Kernel 6.8+, and
 * only in a device-bound program (ubctl loads ub2e_to_ub_vlanmeta so, bound
 * to the IP-side port, when that port strips tags). Weak: on older kernels
 * the variant is not loaded and the symbol stays unresolved.
 */
extern int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx, __be16 *vlan_proto,
					__u16 *vlan_tci) __ksym __weak;

static __always_inline int to_ub(struct xdp_md *ctx, const bool vlan_meta)
{
	struct hdr_cursor c = { (void *)(long)ctx->data, (void *)(long)ctx->data_end };
	const struct ub2e_cfg *cfg = ub2e_config();
	struct ethhdr *eth = c.pos;
	__u16 vid = 0;
	bool tagged = false;
	int proto, strip;

	if (!cfg)
		return XDP_PASS;
	if (!cursor_skip(&c, sizeof(*eth))) {
		count(UB2E_CNT_PASS_NOT_UBOE);
		return XDP_PASS;
	}
	if (ub2e_not_for_us(eth, cfg->ip_mac)) {
		count(UB2E_CNT_PASS_NOT_FOR_US);
		return XDP_PASS;
	}
	proto = ub2e_eth_proto(eth);
	if (proto == bpf_htons(ETH_P_8021Q)) {
		tagged = true;
		proto = parse_vlan(&c, &vid);
	} else if (vlan_meta) {
		__be16 vproto;
		__u16 tci;

		/* A stripped tag stays out of the frame (nothing to strip on a
		 * punt: TC ingress pops it from the skb, bpf/ub2e_tc.bpf.c). */
		if (!bpf_xdp_metadata_rx_vlan_tag(ctx, &vproto, &tci)) {
			if (vproto != bpf_htons(ETH_P_8021Q)) {
				count(UB2E_CNT_PASS_NOT_UBOE);	/* 802.1ad: as in the frame */
				return XDP_PASS;
			}
			vid = tci & 0x0fff;
			count(UB2E_CNT_VLAN_FROM_METADATA);
		}
	}
	strip = tagged ? (int)sizeof(struct vlan_tag) : 0;
	/* The switch's CAQM tags get a copy of their own: without them the
	 * tag's info is a constant, one register fewer across the parse and
	 * the FIB lookup (and fewer stack spills). */
	if (cfg->flags & UB2E_F_CAQM_TAG) {
		__u16 info = UB2E_TAG_NONE;
		int tlen = caqm_tag_pull(cfg, &c, &proto, &info);

		if (tlen < 0) {
			count(UB2E_CNT_PASS_NOT_UBOE);
			return XDP_PASS;
		}
		return to_ub_ver(ctx, cfg, c, vid, strip + tlen, proto, info);
	}
	return to_ub_ver(ctx, cfg, c, vid, strip, proto, UB2E_TAG_NONE);
}

static __always_inline int to_ub_ip(struct xdp_md *ctx, const struct ub2e_cfg *cfg,
				    struct hdr_cursor c, __u16 vid, int strip, int proto,
				    __u16 info, bool v6)
{
	/* 8-aligned: the FIB parameters are written in 8-byte stores. */
	struct bpf_fib_lookup fib __attribute__((aligned(8)));
	struct ub_lph *lph;
	struct ub_nth *nth;
	struct ethhdr *eth;
	struct ub_l3 l3;
	int rc;
	__u16 cci;
	__u32 npi;

	rc = ub2e_parse_l3(ctx, &c, v6, false, &l3);
	if (rc == UB2E_NOT_UBOE) {
		count(UB2E_CNT_PASS_NOT_UBOE);
		return XDP_PASS;
	}
	if (rc)
		return drop(rc);

	rc = vlan_to_npi(cfg, vid, &npi);
	if (rc)
		return drop(rc);

	if (!(cfg->flags & UB2E_F_NO_TTL_DEC) && ub_l3_ttl(&l3) <= 1)
		return punt(ctx, strip, proto, npi, l3_fecn(cfg, &l3), info, UB2E_CNT_PASS_TTL_EXPIRED);

	/* What leaves is the IP packet behind LPH+NTH: that must fit the MTU. */
	rc = ub_l3_fib(ctx, &fib, ctx->ingress_ifindex, &l3, UB_NATIVE_HDR_LEN);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS) {
		if (rc == BPF_FIB_LKUP_RET_NO_NEIGH && !ub2e_is_port(&ub2e_tx_ub, fib.ifindex))
			return drop(UB2E_CNT_DROP_NOT_EGRESS_PORT);
		if (rc == BPF_FIB_LKUP_RET_FRAG_NEEDED)
			ub_l3_force_df(&l3);
		return punt(ctx, strip, proto, npi, l3_fecn(cfg, &l3), info, ub2e_fib_punt_reason(rc));
	}

	/* LoC 0: congestion, if any, happened at an intermediate switch (§5.2.1).
	 * A CAQM tag's request and answers go on in the CCI instead. */
	if (!caqm_tag_cci(info, &cci))
		cci = ub_cci_make_fecn(l3_fecn(cfg, &l3), 0);
	if (!(cfg->flags & UB2E_F_NO_TTL_DEC))
		ub_l3_dec_ttl(&l3);

	/* LPH + NTH (10 bytes) come; the 802.1Q and CAQM tags, if any, go. */
	if (bpf_xdp_adjust_head(ctx, strip - (int)UB_NATIVE_HDR_LEN))
		return drop(UB2E_CNT_DROP_ADJUST_FAILED);
	/* One bounds check for the three headers. */
	eth = (void *)(long)ctx->data;
	lph = (void *)(eth + 1);
	nth = (void *)(lph + 1);
	if ((void *)(nth + 1) > (void *)(long)ctx->data_end)
		return drop(UB2E_CNT_DROP_ADJUST_FAILED);
	ub2e_write_eth(eth, &fib, bpf_htons(cfg->ub_ethertype));
	*(__be32 *)lph = bpf_htonl(ub_lph_word(v6 ? UB_LPH_CONFIG_IPV6 : UB_LPH_CONFIG_IPV4, cfg->vl, cfg->rt));
	nth_write(nth, cci, npi);
	if (bpf_redirect_map(&ub2e_tx_ub, fib.ifindex, XDP_DROP) != XDP_REDIRECT)
		return drop(UB2E_CNT_DROP_NOT_EGRESS_PORT);
	count(UB2E_CNT_TX_UB);
	return XDP_REDIRECT;
}

SEC("xdp.frags")
int ub2e_to_ub(struct xdp_md *ctx)
{
	return to_ub(ctx, false);
}

/* Loaded only on request ("?"): device-bound, so never beside ub2e_to_ub by default. */
SEC("?xdp.frags")
int ub2e_to_ub_vlanmeta(struct xdp_md *ctx)
{
	return to_ub(ctx, true);
}
