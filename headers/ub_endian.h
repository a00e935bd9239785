/* SPDX-License-Identifier: BSD-2-Clause */
/* Byte-order helpers usable from BPF and user code alike (no libc). */
#ifndef UB_ENDIAN_H
#define UB_ENDIAN_H

#include <linux/types.h>

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ub_htons(x) ((__be16)__builtin_bswap16((__u16)(x)))
#define ub_htonl(x) ((__be32)__builtin_bswap32((__u32)(x)))
#else
#define ub_htons(x) ((__be16)(__u16)(x))
#define ub_htonl(x) ((__be32)(__u32)(x))
#endif
#define ub_ntohs(x) ((__u16)ub_htons(x))
#define ub_ntohl(x) ((__u32)ub_htonl(x))

/* 24-bit big-endian fields are stored as three bytes: no alignment surprises. */
static inline __u32 ub_get24(const __u8 *p)
{
	return ((__u32)p[0] << 16) | ((__u32)p[1] << 8) | p[2];
}

static inline void ub_put24(__u8 *p, __u32 v)
{
	p[0] = (__u8)(v >> 16);
	p[1] = (__u8)(v >> 8);
	p[2] = (__u8)v;
}

#endif
