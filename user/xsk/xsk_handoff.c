// SPDX-License-Identifier: BSD-2-Clause
/* The single-producer single-consumer ring of frames: xsk_handoff.h. */
#include "xsk/xsk_handoff.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

/* Each slot: its length, then the frame, the next slot 64-byte aligned. */
static size_t stride(const struct xsk_handoff *h)
{
	return ((size_t)h->slot_size + sizeof(uint32_t) + 63) & ~(size_t)63;
}

static uint8_t *slot(const struct xsk_handoff *h, uint32_t i)
{
	return h->mem + (size_t)(i & h->mask) * stride(h);
}

int xsk_handoff_init(struct xsk_handoff *h, uint32_t nslots, uint32_t slot_size)
{
	memset(h, 0, sizeof(*h));
	if (!nslots || (nslots & (nslots - 1)) || !slot_size)
		return -EINVAL;
	h->nslots = nslots;
	h->mask = nslots - 1;
	h->slot_size = slot_size;
	h->mem_len = (size_t)nslots * stride(h);
	/* Mapped, not allocated: pages a quiet ring never uses stay untouched. */
	h->mem = mmap(NULL, h->mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h->mem == MAP_FAILED) {
		h->mem = NULL;
		return -ENOMEM;
	}
	atomic_init(&h->head, 0);
	atomic_init(&h->tail, 0);
	return 0;
}

void xsk_handoff_fini(struct xsk_handoff *h)
{
	if (h->mem)
		munmap(h->mem, h->mem_len);
	h->mem = NULL;
}

uint8_t *xsk_handoff_reserve(struct xsk_handoff *h)
{
	uint32_t head = atomic_load_explicit(&h->head, memory_order_relaxed);

	if (head - h->tail_seen >= h->nslots) {
		/* Acquire: the consumer's reads of the slot are over before we write it. */
		h->tail_seen = atomic_load_explicit(&h->tail, memory_order_acquire);
		if (head - h->tail_seen >= h->nslots)
			return NULL;
	}
	return slot(h, head) + sizeof(uint32_t);
}

void xsk_handoff_push(struct xsk_handoff *h, uint32_t len)
{
	uint32_t head = atomic_load_explicit(&h->head, memory_order_relaxed);

	memcpy(slot(h, head), &len, sizeof(len));
	/* Release: the slot's bytes and length before the consumer can see it. */
	atomic_store_explicit(&h->head, head + 1, memory_order_release);
}

const uint8_t *xsk_handoff_peek(struct xsk_handoff *h, uint32_t *len)
{
	uint32_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	const uint8_t *s;

	if (tail == h->head_seen) {
		h->head_seen = atomic_load_explicit(&h->head, memory_order_acquire);
		if (tail == h->head_seen)
			return NULL;
	}
	s = slot(h, tail);
	memcpy(len, s, sizeof(*len));
	return s + sizeof(uint32_t);
}

void xsk_handoff_pop(struct xsk_handoff *h)
{
	uint32_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);

	atomic_store_explicit(&h->tail, tail + 1, memory_order_release);
}

bool xsk_handoff_empty(struct xsk_handoff *h)
{
	return atomic_load_explicit(&h->tail, memory_order_relaxed) ==
	       atomic_load_explicit(&h->head, memory_order_acquire);
}
