/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A single-producer single-consumer ring of whole frames, copied in: how the
 * owner of a queue (the only thread with sockets on it, so its pool needs no
 * lock) passes a frame that came for another worker's channel to that
 * worker (endpoint/ep_workers.c). Fixed slots, each as large as the device's
 * largest frame (a multi-buffer jumbo frame gathered whole); the owner frees
 * its UMEM frame at once, so no frame ever crosses threads and no ring of
 * the kernel's is shared.
 *
 * Pure: no I/O, no waking (the endpoint wakes a consumer asleep in poll).
 * The producer publishes a slot's bytes with a release store of head, the
 * consumer reads them after an acquire load of it; the consumer gives a slot
 * back with a release store of tail, which the producer loads with acquire
 * before writing over it.
 */
#ifndef UBXDP_XSK_HANDOFF_H
#define UBXDP_XSK_HANDOFF_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xsk_handoff {
	/* the producer's line: what it publishes, and what it last saw of tail */
	_Alignas(64) _Atomic uint32_t head;
	uint32_t tail_seen;
	/* the consumer's line */
	_Alignas(64) _Atomic uint32_t tail;
	uint32_t head_seen;
	_Alignas(64) uint32_t nslots, mask, slot_size;	/* slot_size: bytes a frame may have */
	uint8_t *mem;		/* nslots of (uint32_t length, slot_size bytes) */
	size_t mem_len;
};

/* nslots a power of two; slot_size > 0. 0, or -errno (-EINVAL, -ENOMEM). */
int xsk_handoff_init(struct xsk_handoff *h, uint32_t nslots, uint32_t slot_size);
void xsk_handoff_fini(struct xsk_handoff *h);

/* Producer: the next free slot's bytes (slot_size of them), NULL when the
 * ring is full; then xsk_handoff_push with the frame's length publishes it. */
uint8_t *xsk_handoff_reserve(struct xsk_handoff *h);
void xsk_handoff_push(struct xsk_handoff *h, uint32_t len);

/* Consumer: the oldest frame (its bytes and length), NULL when none; then
 * xsk_handoff_pop gives its slot back. */
const uint8_t *xsk_handoff_peek(struct xsk_handoff *h, uint32_t *len);
void xsk_handoff_pop(struct xsk_handoff *h);
/* Either side: whether the consumer has nothing to take now. */
bool xsk_handoff_empty(struct xsk_handoff *h);

#endif
