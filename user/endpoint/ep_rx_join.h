/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A received jumbo packet's two UMEM frames joined where they lie
 * (ep_datapath.c, do_rx), apart so that tests/unit/test_ep_rx_join.c can
 * give it frames no veth hands out: a first frame short of its chunk's end,
 * a packet of three frames, a second frame in any chunk.
 */
#ifndef UBXDP_EP_RX_JOIN_H
#define UBXDP_EP_RX_JOIN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "endpoint/ep.h"	/* EP_FRAME_SIZE */
#include "xsk/xsk_frames.h"	/* struct xsk_mt_frame */

/*
 * Frames a and b, a packet's two, whole where they lie: a fills its UMEM
 * chunk to the end and b is in the next chunk, so b's bytes moved back to
 * that chunk's start, over b's headroom (ours with the frame), follow a's:
 * a few hundred bytes moved instead of the packet's 4 KB gathered
 * (bench/README.md, "Jumbo frames"). The fill ring lends frames in the
 * order they came back (xsk_mt.c, refill), so a packet's two frames are
 * adjacent but where a refill's batch ends.
 */
static inline bool ep_rx_join(struct xsk_mt_frame *a, const struct xsk_mt_frame *b)
{
	/* a ends where b's chunk starts: a fills its chunk, b is the next (a
	 * chunk's start is a multiple of the frame size, so one test is both). */
	if (b->more || a->addr + a->len != b->addr - b->addr % EP_FRAME_SIZE)
		return false;
	memmove(a->data + a->len, b->data, b->len);
	a->len += b->len;
	return true;
}

#endif
