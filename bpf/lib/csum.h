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

/*
 * The checksum field from a ones' complement sum that bpf_csum_diff() gave
 * (a 32-bit sum; the helper's errors are negative, the caller's to test).
 */
static __always_inline __sum16 csum_finish(__s64 sum)
{
	return (__sum16)~csum_fold32((__u32)sum);
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
 * Ten 16-bit loads, not five 32-bit ones: behind an 802.1Q tag the header
 * starts 2 bytes off a 4-byte boundary, and two of five 32-bit words would
 * straddle 8-byte boundaries, a load the CPU cannot forward from the 8-byte
 * stores that just wrote the frame (the bench's frame reset; a driver that
 * builds the frame in software). As many instructions either way: 16-bit
 * words sum to less than 2^20, so one fold is enough.
 */
static __always_inline int ip4_csum_ok(const void *hdr)
{
	const __u16 *w = hdr;
	__u32 sum = (__u32)w[0] + w[1] + w[2] + w[3] + w[4] + w[5] + w[6] + w[7] + w[8] + w[9];

	/* At most 0xffff + 0x9 after the fold: valid only as 0xffff (0 only for
	 * an all-zero header, which version 4 rules out). */
	return (sum & 0xffff) + (sum >> 16) == 0xffff;
}

/*
 * ip4_csum_ok() in five 32-bit loads, for a header that is 4-aligned from
 * the start of the frame (native UB: Ethernet, LPH and NTH take 24 bytes), so
 * that no word straddles an 8-byte store that wrote the frame. Five words sum
 * to less than 2^35: two folds leave at most 0xffff + 9, valid only as 0xffff.
 */
static __always_inline int ip4_csum_ok_words(const void *hdr)
{
	const __u32 *w = hdr;
	__u64 sum = (__u64)w[0] + w[1] + w[2] + w[3] + w[4];

	sum = (sum & 0xffff) + (sum >> 16);
	return (sum & 0xffff) + (sum >> 16) == 0xffff;
}

#endif
