/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * liburma's in-band control message (setup.c; docs/WIRE.md §7.3): what
 * follows the hello's body, big-endian.
 */
#ifndef UBXDP_URMA_CTL_H
#define UBXDP_URMA_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "urma_types.h"

enum { CTL_PROBE = 1, CTL_PROBE_ACK, CTL_OPEN, CTL_OPEN_ACK, CTL_CLOSE };
#define CTL_VER		1
#define CTL_LEN		76
#define CTL_F_RC	1
/* u8, log2 of the sending channel's receive range (8..11); a library
 * before the span leaves the byte 0, read as the default 256 */
#define CTL_RX_RANGE	11

struct ubx_ctl {
	uint8_t kind, status, mode, tp_type, order, flags;
	uint16_t mtu, depth;
	uint32_t nonce;
	urma_jetty_id_t src, dst;
	uint32_t token;
	/* OPEN, OPEN_ACK: how far past its next expected PSN the sender's
	 * channel keeps packets (a power of two, 256..2048); 0: the default */
	uint32_t rx_range;
	/* OPEN_ACK accepting: the answering channel's own nonce (its OPENs');
	 * 0 otherwise, and from a library before it */
	uint32_t chan_nonce;
};

/* A UB MTU a channel can take: a power of two in 256..4096. */
static inline bool ubx_ub_mtu_valid(uint32_t mtu)
{
	return mtu >= 256 && mtu <= 4096 && !(mtu & (mtu - 1));
}

size_t ubx_ctl_encode(const struct ubx_ctl *m, uint8_t *b);	/* CTL_LEN bytes */
/* 0, or -EINVAL: not one, or an OPEN offering no UB MTU a channel can take. */
int ubx_ctl_decode(const uint8_t *b, size_t len, struct ubx_ctl *m);

/* A channel's nonce (its OPENs', accepting OPEN_ACKs', CLOSEs'): 32 bits of
 * getrandom(), never 0 ("none" on the wire). A CLOSE or an OPEN naming it
 * ends or replaces the channel, so it must not follow from a nonce seen
 * before, as a generator's next output does. 0, or -errno (then *nonce is
 * not set): ENOSYS, EPERM (a seccomp filter), EAGAIN (the pool not ready). */
int ubx_ctl_nonce(uint32_t *nonce);

#endif
