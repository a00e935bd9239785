/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A thread's free UMEM frames and runs (xsk_mt.h), and the two ring moves
 * that change their hands: descriptors onto a tx ring (the frames become the
 * kernel's) and completions off a completion ring (they come back). No
 * socket and no lock: xsk_mt.c holds the pool's lock around the completion
 * ring, which the threads on a queue share; tests/unit/test_xsk_runs.c
 * drives these over rings of plain memory.
 */
#ifndef UBXDP_XSK_FRAMES_H
#define UBXDP_XSK_FRAMES_H

#include <stdbool.h>
#include <stdint.h>
#include <xdp/xsk.h>

#include "xsk/xsk_mb.h"	/* XDP_PKT_CONTD */

/* One of a thread's frames (xsk_mt.h): received, or to send. */
struct xsk_mt_frame {
	uint64_t addr;		/* UMEM address of the first byte */
	uint8_t *data;		/* the bytes */
	uint32_t len;
	int sock;		/* the thread's socket it came in on (rx) */
	bool more;		/* multi-buffer: the packet goes on in the next frame (XDP_PKT_CONTD) */
};

struct xsk_frames {
	uint64_t *free;		/* single frames, by address */
	uint32_t nfree;
	uint64_t *runs;		/* runs, by their first frame's address */
	uint32_t nruns;
	uint32_t frame_size;	/* a power of two */
	uint64_t run_base;	/* the first run's first byte: past every single frame */
	uint64_t run_span;	/* a run's bytes; 0: no runs */
};

/* Stacks deep enough for every frame and every run of the UMEM (any thread
 * may end up with them all), empty. -ENOMEM. */
int xsk_frames_init(struct xsk_frames *fs, uint32_t nframes, uint32_t frame_size, uint32_t nruns,
		    uint32_t run_frames);
void xsk_frames_fini(struct xsk_frames *fs);

/* Inline, as the loops they replaced were: they run once per frame sent. */

/*
 * A frame back (any address inside it). Inside a run only its first frame
 * counts, and frees the whole run: the kernel completes a packet's frames
 * together, and a caller that did not send them frees them together.
 */
static inline void xsk_frames_push(struct xsk_frames *fs, uint64_t addr)
{
	/* Aligned chunks: the frame is the power-of-two slot that holds the address. */
	uint64_t a = addr & ~(uint64_t)(fs->frame_size - 1);

	if (a < fs->run_base || !fs->run_span) {
		fs->free[fs->nfree++] = a;
		return;
	}
	if ((a - fs->run_base) % fs->run_span == 0)
		fs->runs[fs->nruns++] = a;
}

/* The top of the single frames' stack (run false) or of the runs'; false when empty. */
static inline bool xsk_frames_pop(struct xsk_frames *fs, bool run, uint64_t *addr)
{
	uint64_t *stack = run ? fs->runs : fs->free;
	uint32_t *n = run ? &fs->nruns : &fs->nfree;

	if (!*n)
		return false;
	*addr = stack[--*n];
	return true;
}

/* Every completion in comp (the caller holds whatever lock it shares) back
 * onto fs; how many. */
static inline uint32_t xsk_frames_reap(struct xsk_frames *fs, struct xsk_ring_cons *comp)
{
	uint32_t idx, n = xsk_ring_cons__peek(comp, comp->size, &idx);

	for (uint32_t i = 0; i < n; i++)
		xsk_frames_push(fs, *xsk_ring_cons__comp_addr(comp, idx + i));
	if (n)
		xsk_ring_cons__release(comp, n);
	return n;
}

/* n frames onto tx, as descriptors (`more`: XDP_PKT_CONTD where sg): all of
 * them or, when the ring has less room, none (libxdp's reserve); how many. */
static inline unsigned xsk_frames_post(struct xsk_ring_prod *tx, const struct xsk_mt_frame *f, unsigned n, bool sg)
{
	uint32_t idx;
	unsigned got = xsk_ring_prod__reserve(tx, n, &idx);

	for (unsigned i = 0; i < got; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(tx, idx + i);

		d->addr = f[i].addr;
		d->len = f[i].len;
		d->options = sg && f[i].more ? XDP_PKT_CONTD : 0;
	}
	if (got)
		xsk_ring_prod__submit(tx, got);
	return got;
}

#endif
