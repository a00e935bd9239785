/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A JFC's ring of completion records (cr_ring.c): many producers (the
 * workers that feed the JFC, each under its own port lock) and many
 * consumers (any thread in urma_poll_jfc), with no lock between them.
 * Apart from the rest of liburma so that tests/unit/test_urma_cr_ring.c
 * drives it with threads and no network.
 */
#ifndef UBX_CR_RING_H
#define UBX_CR_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "urma_types.h"

/* A slot: its record and, less the slot's index (so that a ring fresh from
 * calloc is empty), the turn it is at. */
struct ubx_cslot {
	uint64_t seq;
	urma_cr_t cr;
};

struct ubx_cring {
	struct ubx_cslot *slot;
	uint32_t n;			/* slots: the records it holds */
	uint64_t head, tail;		/* atomic: the next tickets to take and to push */
	uint64_t lost_at;		/* atomic: the ticket at the first loss not yet reported */
	uint64_t losses;		/* atomic: losses recorded (one merged into another: once) */
};

/* A ring for depth records (see cr_ring.c for depth 1): 0, or -1 (ENOMEM). */
int ubx_cring_init(struct ubx_cring *r, uint32_t depth);
void ubx_cring_free(struct ubx_cring *r);
/* Add a record: false when the ring is full (the record lost, remembered
 * for ubx_cring_report_loss). */
bool ubx_cring_push(struct ubx_cring *r, const urma_cr_t *cr);
/* Take the oldest record: false when there is none before a loss. */
bool ubx_cring_take(struct ubx_cring *r, urma_cr_t *cr);
/* True once for a loss, when every record before it has been taken. */
bool ubx_cring_report_loss(struct ubx_cring *r);
/* Records or a loss are waiting (racy: for arming an event). */
bool ubx_cring_busy(const struct ubx_cring *r);

#endif
