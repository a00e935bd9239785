// SPDX-License-Identifier: BSD-2-Clause
#include "urma/rnr_hold.h"

/*
 * A Send that may be taken now, or not (then answer RNR and call
 * ubx_hold_refused). A Retry passes, as at the core's target: the initiator
 * sends no retry before an earlier one is taken. The hold lifts only for a
 * Retry of the newest Send refused or a later one: two refused, the
 * first's retry must not let a new third in before the second's. A later
 * one is the Send the initiator flags Retry when it gave up on a refused
 * one (rnr_retry below 7); held for that one alone, the hold never lifted.
 */
bool ubx_hold_refuses(struct ubx_rnr_hold *h, uint16_t tassn, bool retry)
{
	if (!h->on)
		return false;
	if (!retry)
		return true;
	if ((int16_t)(tassn - h->tassn) >= 0)
		h->on = false;
	return false;
}

/* Refused RNR: the hold remembers the newest, moving only forward. */
void ubx_hold_refused(struct ubx_rnr_hold *h, uint16_t tassn)
{
	if (!h->on || (int16_t)(tassn - h->tassn) > 0)
		h->tassn = tassn;
	h->on = true;
}
