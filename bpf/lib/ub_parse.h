/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The IP..TPH part of a UB or UBoE packet, validated: what UB and UBoE have in
 * common, so that the UB2E switch and the UB endpoint agree on what UB is.
 * Parsing only, no map: a program that includes it carries none of the
 * switch's. The verdicts are the switch's drop counters (headers/ub2e_maps.h),
 * which the endpoint maps onto its own.
 */
#ifndef UBXDP_UB_PARSE_H
#define UBXDP_UB_PARSE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <stdbool.h>

#include "ub_wire.h"
#include "ub2e_maps.h"
#include "lib/parse.h"
#include "lib/csum.h"

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

#endif
