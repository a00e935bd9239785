/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The timer of a poll loop that sleeps until a descriptor is ready or its
 * next deadline comes: a timerfd among the polled descriptors, left armed
 * while its expiry stays inside the window the loop asks for, in place of
 * a poll timeout.
 *
 * Why: a poll timeout is a kernel hrtimer armed and cancelled at every
 * sleep, and while it is the CPU's earliest timer each of the two
 * reprograms the clock-event device (under virtualisation a trapped MSR
 * write; on the bench VM 8 us a round trip of one Send, whose two sleeps
 * made it twice as slow as the kernel's UDP ping-pong). A deadline that
 * moves later by a little at every message (a Send's loss probe) fits the
 * armed expiry for several messages.
 */
#ifndef UBXDP_WAKE_TIMER_H
#define UBXDP_WAKE_TIMER_H

#include <stdint.h>

struct wake_timer {
	int fd;			/* -1: none (the caller falls back to a poll timeout) */
	uint64_t at;		/* its expiry, CLOCK_MONOTONIC ns; 0: disarmed */
	uint64_t arms;		/* times it was (re)armed: the syscalls it cost */
};

/* 0, or -errno with t->fd -1. */
int wake_timer_open(struct wake_timer *t);
void wake_timer_close(struct wake_timer *t);

/*
 * Make t->fd readable at a time in [lo, hi] (CLOCK_MONOTONIC ns, now <= lo
 * <= hi): the armed expiry is kept when inside, else it is set to hi (so
 * that later windows still hold it). lo == UINT64_MAX: nothing is due; an
 * expired timer is disarmed (it would wake every poll), an armed one left.
 * 0, or -errno (then poll with a timeout).
 */
int wake_timer_set(struct wake_timer *t, uint64_t now, uint64_t lo, uint64_t hi);

/*
 * The window [lo, hi] of a sleep until dl (the next deadline, after now)
 * when it comes before bound: late by at most slack, and never by more than
 * it is away (a near deadline is kept near). Else until bound, up to half
 * of the time to it early (an early wake for the caller's own bound is
 * harmless, and lets a timer armed once serve many sleeps).
 */
static inline void wake_timer_window(uint64_t now, uint64_t dl, uint64_t bound, uint64_t slack,
				     uint64_t *lo, uint64_t *hi)
{
	if (dl < bound) {
		*lo = dl;
		*hi = dl + (dl - now < slack ? dl - now : slack);
	} else {
		*lo = now + (bound - now) / 2;
		*hi = bound;
	}
}

/*
 * The window narrowed for a second deadline, lax, that may be served up to
 * lax_slack late (a loss timer, which then only resends later): the wake
 * may come from lax on and comes by lax + lax_slack. A lax deadline at or
 * after *hi changes nothing.
 */
static inline void wake_timer_lax(uint64_t lax, uint64_t lax_slack, uint64_t *lo, uint64_t *hi)
{
	if (lax >= *hi)
		return;
	if (lax < *lo)
		*lo = lax;
	if (lax + lax_slack < *hi)
		*hi = lax + lax_slack;
}

#endif
