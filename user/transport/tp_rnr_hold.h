/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A target's RNR hold: once a Send (or a Write's page) is refused, later
 * messages are refused too so that they are retried behind it and stay in
 * order. The core's target (tp_rxmsg.c) and liburma's shared receive path
 * (manual_taack: user/urma/recv.c) keep one each, by this one rule.
 */
#ifndef UBXDP_TP_RNR_HOLD_H
#define UBXDP_TP_RNR_HOLD_H

#include <stdbool.h>
#include <stdint.h>

struct tp_rnr_hold {
	bool on;
	uint16_t tassn;		/* the newest message refused */
};

/*
 * Whether a message must be refused (then answer RNR and call
 * tp_rnr_hold_refused). A Retry passes: the initiator sends no retry before
 * an earlier one is answered. The hold lifts only for a Retry of the newest
 * message refused or a later one: two refused, the first's retry must not
 * let a new third in before the second's. A later one is the message the
 * initiator flags Retry when it gave up on a refused one (rnr_retry below
 * 7); held for that one alone, the hold never lifted.
 */
static inline bool tp_rnr_hold_refuses(struct tp_rnr_hold *h, uint16_t tassn, bool retry)
{
	if (!h->on)
		return false;
	if (!retry)
		return true;
	if ((int16_t)(tassn - h->tassn) >= 0)
		h->on = false;
	return false;
}

/* Refused (RNR, page fault): the hold remembers the newest, moving only forward. */
static inline void tp_rnr_hold_refused(struct tp_rnr_hold *h, uint16_t tassn)
{
	if (!h->on || (int16_t)(tassn - h->tassn) > 0)
		h->tassn = tassn;
	h->on = true;
}

#endif
