// SPDX-License-Identifier: BSD-2-Clause
/*
 * dev_lock_wait (user/endpoint/dev_lock.c) waits by the clock: on a busy host
 * each of its 2 ms sleeps takes longer, faked here (nanosleep wrapped: 10 ms
 * a sleep), and the wait must still end when wait_ms have passed, not after
 * wait_ms / 2 sleeps. The lock is a real abstract socket, of a name of this
 * process's own.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "endpoint/dev_lock.h"
#include "lib/clock.h"

static unsigned sleeps;

int __real_nanosleep(const struct timespec *req, struct timespec *rem);
int __wrap_nanosleep(const struct timespec *req, struct timespec *rem);
int __wrap_nanosleep(const struct timespec *req, struct timespec *rem)
{
	const struct timespec slow = { .tv_nsec = 10 * 1000000 };

	(void)req;
	sleeps++;
	return __real_nanosleep(&slow, rem);
}

static char scope[32];

static int setup(void **state)
{
	(void)state;
	snprintf(scope, sizeof(scope), "unit-%d", (int)getpid());
	sleeps = 0;
	return 0;
}

/* Held by another: refused once 100 ms have passed, not after 50 slow sleeps (500 ms). */
static void held_waits_its_time_by_the_clock(void **state)
{
	int held = dev_lock_try(scope, 1, "lock"), fd;
	uint64_t t0, ms;

	(void)state;
	assert_true(held >= 0);
	t0 = ub_mono_ns();
	fd = dev_lock_wait(scope, 1, "lock", 100);
	ms = (ub_mono_ns() - t0) / 1000000;
	dev_unlock(&held);
	assert_int_equal(fd, -EADDRINUSE);
	assert_true(ms >= 100);
	assert_true(ms < 300);
	assert_true(sleeps >= 5 && sleeps <= 25);
}

/* Free: taken at once, no sleep; 0 ms: one try. */
static void free_at_once_and_zero_is_one_try(void **state)
{
	int fd = dev_lock_wait(scope, 2, "lock", 100), held, again;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(sleeps, 0);
	again = dev_lock_wait(scope, 2, "lock", 0);
	assert_int_equal(again, -EADDRINUSE);
	assert_int_equal(sleeps, 0);
	dev_unlock(&fd);
	assert_int_equal(fd, -1);
	held = dev_lock_wait(scope, 2, "lock", 0);
	assert_true(held >= 0);
	dev_unlock(&held);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(held_waits_its_time_by_the_clock, setup),
		cmocka_unit_test_setup(free_at_once_and_zero_is_one_try, setup),
	};

	return cmocka_run_group_tests_name("dev_lock", tests, NULL, NULL);
}
