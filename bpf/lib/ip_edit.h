/* SPDX-License-Identifier: BSD-2-Clause */
/* In-place edits of the IP fields a UB2E switch may change: ECN and TTL/hop limit. */
#ifndef UBXDP_IP_EDIT_H
#define UBXDP_IP_EDIT_H

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include "csum.h"

static __always_inline __u8 ip4_ecn(const struct iphdr *iph) { return iph->tos & 3; }

/*
 * The new word is made in a register and stored whole: storing the ToS byte
 * and then loading the word that holds it for the checksum stalls the CPU
 * (a load that a narrower store cannot forward), on every forwarded packet.
 */
static __always_inline void ip4_set_ecn(struct iphdr *iph, __u8 ecn)
{
	__be16 *w = (__be16 *)iph;	/* version/IHL and ToS share word 0 */
	__be16 old = *w, new = (old & ~bpf_htons(3)) | bpf_htons(ecn & 3);

	*w = new;
	csum_replace2(&iph->check, old, new);
}

/*
 * TTL > 0 (the caller checked). As the kernel's ip_decrease_ttl() and
 * xdp_fwd: the TTL is the high byte of its checksum word, so the checksum
 * goes up by 0x0100 with the end-around carry; no word is read back.
 */
static __always_inline void ip4_dec_ttl(struct iphdr *iph)
{
	__u32 check = (__u32)iph->check + bpf_htons(0x0100);

	iph->check = (__sum16)(check + (check >= 0xffff));
	iph->ttl--;
}

/*
 * ECN and, with `dec_ttl`, TTL in one checksum update (RFC 1624 eqn. 3 with
 * both words, one fold) instead of ip4_set_ecn() then ip4_dec_ttl(): the
 * forwarding path of a verified header (TTL > 1) pays for one. `ecn` > 3
 * leaves the ECN field as it is. The TTL word loses htons(0x0100), so its
 * ~m + m' is the constant 0xffff - htons(0x0100). The result is the one every
 * other update here gives: the fold of a non-zero sum, never 0xffff.
 */
static __always_inline void ip4_set_ecn_dec_ttl(struct iphdr *iph, __u8 ecn, bool dec_ttl)
{
	__be16 *w = (__be16 *)iph;
	__be16 old = *w, new = ecn > 3 ? old : (old & ~bpf_htons(3)) | bpf_htons(ecn);
	__u32 sum = (__u16)~iph->check;

	sum += (__u16)~old;
	sum += (__u16)new;
	if (dec_ttl) {
		sum += 0xffff - bpf_htons(0x0100);
		iph->ttl--;
	}
	*w = new;
	iph->check = (__sum16)~csum_fold32(sum);
}

/* Traffic class straddles bytes 0-1; its ECN bits are byte 1 bits 5-4. */
static __always_inline __u8 ip6_ecn(const struct ipv6hdr *ip6h)
{
	return (ip6h->flow_lbl[0] >> 4) & 3;
}

/*
 * In the header's first 32-bit word (version, traffic class, flow label; the
 * ECN bits are its bits 21-20), read and written whole: the FIB lookup that
 * follows reads that word for the flow info, and after a byte store into it
 * the load would wait for the store to reach the cache (a profile of UB ->
 * UBoE IPv6 put 8% of the program's samples on that load).
 */
static __always_inline void ip6_set_ecn(struct ipv6hdr *ip6h, __u8 ecn)
{
	__be32 *w = (__be32 *)ip6h;

	*w = (*w & ~bpf_htonl(0x00300000)) | bpf_htonl((__u32)(ecn & 3) << 20);
}

static __always_inline __u8 ip6_dscp_ecn(const struct ipv6hdr *ip6h)
{
	return (ip6h->priority << 4) | (ip6h->flow_lbl[0] >> 4);
}

#endif
