/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Multi-buffer AF_XDP (XDP_USE_SG, Linux 6.6+): a packet is a run of
 * consecutive descriptors, each but its last flagged XDP_PKT_CONTD. The
 * kernel publishes a packet's descriptors together, so only a peek cut short
 * by the caller's own limit can end inside one.
 */
#ifndef UBXDP_XSK_MB_H
#define UBXDP_XSK_MB_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD	(1 << 0)
#endif

/*
 * Of n descriptors peeked at idx in an rx ring, how many to take so that no
 * packet is split: up to the end of the last whole packet. A packet longer
 * than all n can come only in parts: n when the caller may take a part (its
 * call has nothing else yet, so nothing longer could be asked for), else 0,
 * leaving it in the ring for a call of its own.
 */
static inline uint32_t xsk_mb_whole(const struct xsk_ring_cons *rx, uint32_t idx, uint32_t n, bool may_split)
{
	uint32_t k = n;

	while (k && (xsk_ring_cons__rx_desc(rx, idx + k - 1)->options & XDP_PKT_CONTD))
		k--;
	return k || !may_split ? k : n;
}

#endif
