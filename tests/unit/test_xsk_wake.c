// SPDX-License-Identifier: BSD-2-Clause
/*
 * The handshake that wakes a handoff rings' consumer asleep in poll()
 * (user/xsk/xsk_wake.h), each interleaving forced with the real functions
 * and a real eventfd: a frame pushed after the sleeper looked at its rings
 * makes the eventfd readable (no eventfd write: the sleeper sleeps on);
 * a frame pushed before it set asleep keeps it from sleeping (no look at
 * the rings: a wake-up lost, nothing wakes it); one write for a sleep,
 * however many frames; a late write read at the wake, so the next sleep is
 * not ended by a stale one.
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

#include "xsk/xsk_wake.h"

#define W 3	/* workers: the rings to worker ME are rings[from * W + ME] */
#define ME 1

struct fix {
	struct xsk_handoff rings[W * W];
	struct xsk_wake wake;
};

static int setup(void **state)
{
	static struct fix f;

	for (int i = 0; i < W * W; i++)
		assert_int_equal(xsk_handoff_init(&f.rings[i], 8, 64), 0);
	xsk_wake_clear(&f.wake);
	assert_int_equal(xsk_wake_open(&f.wake), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	for (int i = 0; i < W * W; i++)
		xsk_handoff_fini(&f->rings[i]);
	xsk_wake_close(&f->wake);
	return 0;
}

static bool readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* Worker `from` hands ME a frame and wakes it, as ep_handoff_put and
 * ep_handoff_wake do. */
static void hand(struct fix *f, int from)
{
	struct xsk_handoff *h = &f->rings[from * W + ME];

	assert_non_null(xsk_handoff_reserve(h));
	xsk_handoff_push(h, 10);
	xsk_wake_kick(&f->wake);
}

static bool sleep_(struct fix *f)
{
	return xsk_wake_sleep(&f->wake, false, &f->rings[ME], W, W, ME);
}

static void pushed_after_the_look_wakes(void **state)
{
	struct fix *f = *state;

	assert_false(sleep_(f));	/* empty: it will sleep */
	assert_false(readable(f->wake.fd));
	hand(f, 2);			/* between its look and its poll */
	assert_true(readable(f->wake.fd));
	xsk_wake_awake(&f->wake, true);
	assert_false(readable(f->wake.fd));
}

static void pushed_before_the_sleep_keeps_it_awake(void **state)
{
	struct fix *f = *state;

	hand(f, 0);			/* before asleep is set: no write */
	assert_false(readable(f->wake.fd));
	assert_true(sleep_(f));		/* it saw the frame: no sleep */
	xsk_wake_awake(&f->wake, false);
	assert_false(readable(f->wake.fd));
	/* its own ring (from == ME) is none of them */
	xsk_handoff_pop(&f->rings[0 * W + ME]);
	assert_non_null(xsk_handoff_reserve(&f->rings[ME * W + ME]));
	xsk_handoff_push(&f->rings[ME * W + ME], 1);
	assert_false(sleep_(f));
	xsk_wake_awake(&f->wake, false);
}

static void one_write_a_sleep(void **state)
{
	struct fix *f = *state;
	uint64_t v = 0;

	assert_false(sleep_(f));
	hand(f, 0);
	hand(f, 2);
	assert_int_equal(read(f->wake.fd, &v, sizeof(v)), sizeof(v));
	assert_int_equal(v, 1);
	xsk_wake_awake(&f->wake, false);
}

static void late_write_read_at_the_wake(void **state)
{
	struct fix *f = *state;

	assert_false(sleep_(f));
	hand(f, 2);
	/* the poll ended on its time before it saw the write */
	xsk_wake_awake(&f->wake, false);
	assert_false(readable(f->wake.fd));
	/* the caller's own poll (ext): read whatever it saw */
	xsk_handoff_pop(&f->rings[2 * W + ME]);
	assert_false(xsk_wake_sleep(&f->wake, true, &f->rings[ME], W, W, ME));
	hand(f, 0);
	xsk_wake_awake(&f->wake, true);
	assert_false(readable(f->wake.fd));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(pushed_after_the_look_wakes, setup, teardown),
		cmocka_unit_test_setup_teardown(pushed_before_the_sleep_keeps_it_awake, setup, teardown),
		cmocka_unit_test_setup_teardown(one_write_a_sleep, setup, teardown),
		cmocka_unit_test_setup_teardown(late_write_read_at_the_wake, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
