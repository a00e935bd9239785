// SPDX-License-Identifier: BSD-2-Clause
/*
 * A bounded queue of many producers and consumers (D. Vyukov's): a slot's
 * turn (seq) says whether it is free for the record of ticket t (seq == t)
 * or holds it (seq == t + 1); tickets come from a compare-and-swap on tail
 * (push) or head (take), so producers and consumers share no lock.
 *
 * It needs two slots at least: with one, "holds ticket t" (t + 1) is also
 * "free for ticket t + 1", so a second push overwrites a record not yet
 * taken and the take of ticket t never finds its turn again (it spins for
 * ever). A JFC of depth 1 therefore holds 2 records; any other depth holds
 * exactly its depth.
 *
 * A loss is remembered at the tail ticket it happened at (the first one
 * not yet reported; later ones before that report are the same loss to the
 * application), takes stop there, and ubx_cring_report_loss() says it once
 * when every record pushed before it has been taken: the application
 * learns where its records went missing, not only that some did.
 */
#include <errno.h>
#include <stdlib.h>

#include "urma/cr_ring.h"

#define NO_LOSS UINT64_MAX

int ubx_cring_init(struct ubx_cring *r, uint32_t depth)
{
	r->n = depth < 2 ? 2 : depth;
	/* Its pages are touched only as records come (turn()). */
	r->slot = calloc(r->n, sizeof(*r->slot));
	if (!r->slot) {
		errno = ENOMEM;
		return -1;
	}
	r->head = r->tail = 0;
	r->lost_at = NO_LOSS;
	return 0;
}

void ubx_cring_free(struct ubx_cring *r)
{
	free(r->slot);
	r->slot = NULL;
}

/* Slot i's turn, stored less i: a slot calloc left at 0 is at turn i, free
 * for ticket i, and the pages of a deep ring are touched only as it fills. */
static uint64_t turn(const struct ubx_cring *r, uint64_t i)
{
	return __atomic_load_n(&r->slot[i].seq, __ATOMIC_ACQUIRE) + i;
}

static void set_turn(struct ubx_cring *r, uint64_t i, uint64_t t)
{
	__atomic_store_n(&r->slot[i].seq, t - i, __ATOMIC_RELEASE);
}

/* The next ticket of *end whose slot is at turn ticket + ahead, taken (*slot),
 * below limit: false when the slot at the end is not there yet (push: the
 * ring is full; take: empty) or the end is at the limit (a loss). *at: the
 * end seen last. */
static bool ticket(struct ubx_cring *r, uint64_t *end, uint64_t ahead, const uint64_t *limit,
		   uint64_t *t, uint64_t *slot, uint64_t *at)
{
	uint64_t pos = __atomic_load_n(end, __ATOMIC_RELAXED);

	for (;;) {
		uint64_t i = pos % r->n;
		int64_t d = (int64_t)(turn(r, i) - (pos + ahead));

		*at = pos;
		if (d < 0 || (limit && pos >= __atomic_load_n(limit, __ATOMIC_ACQUIRE)))
			return false;
		if (!d && __atomic_compare_exchange_n(end, &pos, pos + 1, true, __ATOMIC_SEQ_CST,
						      __ATOMIC_RELAXED)) {
			*t = pos;
			*slot = i;
			return true;
		}
		if (d)
			pos = __atomic_load_n(end, __ATOMIC_RELAXED);
	}
}

bool ubx_cring_push(struct ubx_cring *r, const urma_cr_t *cr)
{
	uint64_t t, i, at, none = NO_LOSS;

	if (ticket(r, &r->tail, 0, NULL, &t, &i, &at)) {
		r->slot[i].cr = *cr;
		set_turn(r, i, t + 1);
		return true;
	}
	/* The first loss since the last report marks where it is. */
	if (__atomic_compare_exchange_n(&r->lost_at, &none, at, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		__atomic_fetch_add(&r->losses, 1, __ATOMIC_RELAXED);
	return false;
}

bool ubx_cring_take(struct ubx_cring *r, urma_cr_t *cr)
{
	uint64_t t, i, at;

	if (!ticket(r, &r->head, 1, &r->lost_at, &t, &i, &at))
		return false;
	*cr = r->slot[i].cr;
	set_turn(r, i, t + r->n);
	return true;
}

bool ubx_cring_report_loss(struct ubx_cring *r)
{
	uint64_t at = __atomic_load_n(&r->lost_at, __ATOMIC_ACQUIRE);

	/* head past it: a take that raced the loss's recording took a record
	 * pushed after it; the report comes as soon as it can. */
	return at != NO_LOSS && __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) >= at &&
	       __atomic_compare_exchange_n(&r->lost_at, &at, NO_LOSS, false, __ATOMIC_SEQ_CST,
					   __ATOMIC_RELAXED);
}

bool ubx_cring_busy(const struct ubx_cring *r)
{
	return __atomic_load_n(&r->tail, __ATOMIC_SEQ_CST) != __atomic_load_n(&r->head, __ATOMIC_SEQ_CST) ||
	       __atomic_load_n(&r->lost_at, __ATOMIC_SEQ_CST) != NO_LOSS;
}
