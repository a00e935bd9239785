// SPDX-License-Identifier: BSD-2-Clause
/* The poll loop's timer (user/io/wake_timer.c): armed once for every window
 * its expiry falls in, re-armed only outside, quiet again once nothing is
 * due. Windows a minute ahead, so that none expires while the test runs;
 * the one that must expire is armed in the past. */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "io/wake_timer.h"
#include "lib/clock.h"

#define MS	1000000ull
#define MINUTE	(60000 * MS)

static bool readable(const struct wake_timer *t, int wait_ms)
{
	struct pollfd p = { .fd = t->fd, .events = POLLIN };

	return poll(&p, 1, wait_ms) == 1;
}

static void kept_inside_the_window(void **state)
{
	struct wake_timer t;
	uint64_t now = ub_mono_ns(), due = now + MINUTE;

	(void)state;
	assert_int_equal(wake_timer_open(&t), 0);
	assert_int_equal(wake_timer_set(&t, now, due, due + 50 * MS), 0);
	assert_int_equal(t.arms, 1);
	assert_int_equal(t.at, due + 50 * MS);		/* as late as allowed */
	/* A deadline that moves later by less than the slack: the same expiry. */
	for (uint64_t d = due; d <= due + 50 * MS; d += 10 * MS)
		assert_int_equal(wake_timer_set(&t, now, d, d + 50 * MS), 0);
	assert_int_equal(t.arms, 1);
	/* Past the window: set again, at the new window's end. */
	assert_int_equal(wake_timer_set(&t, now, due + 60 * MS, due + 110 * MS), 0);
	assert_int_equal(t.arms, 2);
	assert_int_equal(t.at, due + 110 * MS);
	/* A sooner deadline is never slept through. */
	assert_int_equal(wake_timer_set(&t, now, due, due + 50 * MS), 0);
	assert_int_equal(t.arms, 3);
	assert_int_equal(t.at, due + 50 * MS);
	/* Nothing due: an armed timer is left as it is (a later window may keep it). */
	assert_int_equal(wake_timer_set(&t, now, UINT64_MAX, UINT64_MAX), 0);
	assert_int_equal(t.arms, 3);
	assert_false(readable(&t, 0));
	wake_timer_close(&t);
	assert_int_equal(t.fd, -1);
}

static void expired_then_quiet(void **state)
{
	struct wake_timer t;
	uint64_t now = ub_mono_ns();

	(void)state;
	assert_int_equal(wake_timer_open(&t), 0);
	/* A window already past: armed at once, the fd readable. */
	assert_int_equal(wake_timer_set(&t, now, now - 2 * MS, now - MS), 0);
	assert_true(readable(&t, 10000));
	/* Nothing due now: disarmed, so a poll no longer wakes on it. */
	now = ub_mono_ns();
	assert_int_equal(wake_timer_set(&t, now, UINT64_MAX, UINT64_MAX), 0);
	assert_int_equal(t.at, 0);
	assert_false(readable(&t, 0));
	/* Expired again, then a new window: re-armed, and quiet until then. */
	assert_int_equal(wake_timer_set(&t, now, now - 2 * MS, now - MS), 0);
	assert_true(readable(&t, 10000));
	now = ub_mono_ns();
	assert_int_equal(wake_timer_set(&t, now, now + MINUTE, now + MINUTE), 0);
	assert_false(readable(&t, 0));
	wake_timer_close(&t);
}

/* The window of a sleep: a deadline before the bound is late by at most the
 * slack and by no more than its own distance; else the bound, half early. */
static void window_of_a_sleep(void **state)
{
	uint64_t lo, hi;

	(void)state;
	wake_timer_window(1000, 1200, 5000, 50, &lo, &hi);	/* far: the slack */
	assert_int_equal(lo, 1200);
	assert_int_equal(hi, 1250);
	wake_timer_window(1000, 1020, 5000, 50, &lo, &hi);	/* near: its distance */
	assert_int_equal(lo, 1020);
	assert_int_equal(hi, 1040);
	wake_timer_window(1000, 9000, 5000, 50, &lo, &hi);	/* after the bound */
	assert_int_equal(lo, 3000);
	assert_int_equal(hi, 5000);
	wake_timer_window(1000, UINT64_MAX, 5000, 50, &lo, &hi);	/* none due */
	assert_int_equal(lo, 3000);
	assert_int_equal(hi, 5000);
}

/* A loss timer narrows the window to itself plus its own slack, whatever
 * its distance; after the window it changes nothing. */
static void window_with_a_loss_timer(void **state)
{
	uint64_t lo, hi;

	(void)state;
	wake_timer_window(1000, UINT64_MAX, 5000, 50, &lo, &hi);	/* the bound alone: [3000, 5000] */
	wake_timer_lax(1020, 200, &lo, &hi);		/* near: its slack, not its distance */
	assert_int_equal(lo, 1020);
	assert_int_equal(hi, 1220);
	wake_timer_window(1000, 1100, 5000, 50, &lo, &hi);	/* an exact one first: [1100, 1150] */
	wake_timer_lax(1050, 200, &lo, &hi);
	assert_int_equal(lo, 1050);
	assert_int_equal(hi, 1150);			/* the exact one's end still holds */
	wake_timer_window(1000, 1100, 5000, 50, &lo, &hi);
	wake_timer_lax(1150, 200, &lo, &hi);		/* at the window's end: no change */
	assert_int_equal(lo, 1100);
	assert_int_equal(hi, 1150);
	wake_timer_lax(UINT64_MAX, 200, &lo, &hi);	/* none */
	assert_int_equal(hi, 1150);
	/* The armed expiry holds across sleeps whose probe moves later by less
	 * than the slack: one arm for the three. */
	{
		struct wake_timer t;
		uint64_t now = ub_mono_ns();

		assert_int_equal(wake_timer_open(&t), 0);
		for (uint64_t k = 0; k < 3; k++) {
			uint64_t n = now + k * 60 * MS, probe = n + MINUTE + 40 * MS;

			wake_timer_window(n, UINT64_MAX, n + 2 * MINUTE, 50 * MS, &lo, &hi);
			wake_timer_lax(probe, 200 * MS, &lo, &hi);
			assert_int_equal(wake_timer_set(&t, n, lo, hi), 0);
		}
		assert_int_equal(t.arms, 1);
		wake_timer_close(&t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kept_inside_the_window),
		cmocka_unit_test(expired_then_quiet),
		cmocka_unit_test(window_of_a_sleep),
		cmocka_unit_test(window_with_a_loss_timer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
