/* SPDX-License-Identifier: BSD-2-Clause */
/* Incremental Internet checksum updates (RFC 1624), for in-place header edits. */
#ifndef UBXDP_CSUM_H
#define UBXDP_CSUM_H

#include <linux/types.h>

static __always_inline __u16 csum_fold32(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/* HC' = ~(~HC + ~m + m'), on 16-bit words in network order. */
static __always_inline void csum_replace2(__sum16 *csum, __be16 old, __be16 new)
{
	__u32 sum = (__u16)~*csum;

	sum += (__u16)~old;
	sum += (__u16)new;
	*csum = (__sum16)~csum_fold32(sum);
}

/*
 * A 20-byte IPv4 header (no options) whose checksum verifies (RFC 1071).
 * Five 32-bit words summed in 64 bits fold to the same one's complement sum
 * as ten 16-bit words, in half the loads and adds (this runs on every
 * forwarded packet; x86 loads unaligned words at no cost).
 */
static __always_inline int ip4_csum_ok(const void *hdr)
{
	const __u32 *w = hdr;
	__u64 sum = (__u64)w[0] + w[1] + w[2] + w[3] + w[4];
	/*
	 * 2^16 = 1 modulo 0xffff: the carries (sum >> 32, at most 4) and the two
	 * 16-bit halves of the low word add up to t <= 0x20002, which is the
	 * one's complement sum modulo 0xffff. Valid: 0xffff or 0x1fffe (0 only
	 * for an all-zero header, which version 4 rules out). No second fold.
	 */
	__u32 t = (__u32)(sum >> 32) + ((__u32)sum >> 16) + ((__u32)sum & 0xffff);

	return t == 0xffff || t == 0x1fffe;
}

#endif
