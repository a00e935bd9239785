// SPDX-License-Identifier: BSD-2-Clause
/*
 * The ring by which the owner of a queue hands a frame to another worker
 * (user/xsk/xsk_handoff.h): frames come out in the order they went in, whole,
 * a full ring refuses the next without harm, the indexes wrap, a slot holds
 * a multi-buffer jumbo frame, and two threads pushing and taking at once
 * lose, reorder or tear nothing. Built also with -fsanitize=thread
 * (test_xsk_handoff_tsan): a slot read before its publication (an acquire
 * or release missing) is a data race it reports.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "xsk/xsk_handoff.h"

/* Frame i's length and bytes: each different, so a slot read too early or
 * another frame's shows. */
static uint32_t frame_len(uint32_t i, uint32_t max) { return 1 + (i * 2654435761u) % max; }
static uint8_t frame_byte(uint32_t i, uint32_t k) { return (uint8_t)(i * 31 + k * 7 + (k >> 8)); }

static void put(struct xsk_handoff *h, uint32_t i, uint32_t len)
{
	uint8_t *p = xsk_handoff_reserve(h);

	assert_non_null(p);
	for (uint32_t k = 0; k < len; k++)
		p[k] = frame_byte(i, k);
	xsk_handoff_push(h, len);
}

static bool take_check(struct xsk_handoff *h, uint32_t i, uint32_t want_len)
{
	uint32_t len = 0;
	const uint8_t *p = xsk_handoff_peek(h, &len);

	if (!p || len != want_len)
		return false;
	for (uint32_t k = 0; k < len; k++)
		if (p[k] != frame_byte(i, k))
			return false;
	xsk_handoff_pop(h);
	return true;
}

static void in_order_and_whole(void **state)
{
	struct xsk_handoff h;

	(void)state;
	assert_int_equal(xsk_handoff_init(&h, 8, 2048), 0);
	assert_true(xsk_handoff_empty(&h));
	assert_null(xsk_handoff_peek(&h, &(uint32_t){ 0 }));
	for (uint32_t i = 0; i < 5; i++)
		put(&h, i, frame_len(i, 2048));
	assert_false(xsk_handoff_empty(&h));
	for (uint32_t i = 0; i < 5; i++)
		assert_true(take_check(&h, i, frame_len(i, 2048)));
	assert_true(xsk_handoff_empty(&h));
	xsk_handoff_fini(&h);
}

/* Full: the next reserve is NULL and what is in stays as it was; one taken
 * frees one slot, for exactly one more. */
static void full_refuses_then_one_room(void **state)
{
	struct xsk_handoff h;

	(void)state;
	assert_int_equal(xsk_handoff_init(&h, 4, 256), 0);
	for (uint32_t i = 0; i < 4; i++)
		put(&h, i, 100 + i);
	assert_null(xsk_handoff_reserve(&h));
	assert_true(take_check(&h, 0, 100));
	put(&h, 4, 104);
	assert_null(xsk_handoff_reserve(&h));
	for (uint32_t i = 1; i < 5; i++)
		assert_true(take_check(&h, i, 100 + i));
	assert_true(xsk_handoff_empty(&h));
	xsk_handoff_fini(&h);
}

/* Many times round a small ring, and across the 32-bit indexes' wrap. */
static void wraps(void **state)
{
	struct xsk_handoff h;
	uint32_t i = 0;

	(void)state;
	assert_int_equal(xsk_handoff_init(&h, 4, 64), 0);
	for (uint32_t r = 0; r < 1000; r++) {
		uint32_t n = 1 + r % 4;

		for (uint32_t k = 0; k < n; k++)
			put(&h, i + k, frame_len(i + k, 64));
		for (uint32_t k = 0; k < n; k++)
			assert_true(take_check(&h, i + k, frame_len(i + k, 64)));
		i += n;
	}
	/* The indexes near their wrap: counted in uint32_t, compared by difference. */
	atomic_store(&h.head, UINT32_MAX - 2);
	atomic_store(&h.tail, UINT32_MAX - 2);
	h.tail_seen = h.head_seen = UINT32_MAX - 2;
	for (uint32_t k = 0; k < 4; k++)
		put(&h, k, 10 + k);
	assert_null(xsk_handoff_reserve(&h));
	for (uint32_t k = 0; k < 4; k++)
		assert_true(take_check(&h, k, 10 + k));
	assert_true(xsk_handoff_empty(&h));
	assert_int_equal(atomic_load(&h.head), 1);
	xsk_handoff_fini(&h);
}

/* A slot of a 9000-byte link's frame: a gathered multi-buffer frame of 9018
 * bytes goes in whole beside small ones, and comes out unmixed. */
static void jumbo_slot(void **state)
{
	struct xsk_handoff h;

	(void)state;
	assert_int_equal(xsk_handoff_init(&h, 4, 9088), 0);
	put(&h, 1, 9018);
	put(&h, 2, 60);
	put(&h, 3, 9088);
	assert_true(take_check(&h, 1, 9018));
	assert_true(take_check(&h, 2, 60));
	assert_true(take_check(&h, 3, 9088));
	xsk_handoff_fini(&h);
}

static void bad_sizes(void **state)
{
	struct xsk_handoff h;

	(void)state;
	assert_int_equal(xsk_handoff_init(&h, 6, 64), -EINVAL);
	assert_int_equal(xsk_handoff_init(&h, 0, 64), -EINVAL);
	assert_int_equal(xsk_handoff_init(&h, 8, 0), -EINVAL);
}

/* Fewer under ThreadSanitizer, each access of which is many times slower. */
#ifdef __SANITIZE_THREAD__
#define STRESS_N	20000u
#else
#define STRESS_N	200000u
#endif
#define STRESS_MAX	1500u

static void *producer(void *arg)
{
	struct xsk_handoff *h = arg;

	for (uint32_t i = 0; i < STRESS_N;) {
		uint8_t *p = xsk_handoff_reserve(h);
		uint32_t len = frame_len(i, STRESS_MAX);

		if (!p) {
			sched_yield();	/* full: the consumer frees slots (on a shared CPU too) */
			continue;
		}
		for (uint32_t k = 0; k < len; k++)
			p[k] = frame_byte(i, k);
		xsk_handoff_push(h, len);
		i++;
	}
	return NULL;
}

/* Two threads: every frame arrives once, in order, every byte its own. */
static void two_threads(void **state)
{
	struct xsk_handoff h;
	pthread_t th;
	uint32_t got = 0, bad = 0;

	(void)state;
	assert_int_equal(xsk_handoff_init(&h, 16, STRESS_MAX), 0);
	assert_int_equal(pthread_create(&th, NULL, producer, &h), 0);
	while (got < STRESS_N) {
		uint32_t len;
		const uint8_t *p = xsk_handoff_peek(&h, &len);

		if (!p) {
			sched_yield();
			continue;
		}
		if (len != frame_len(got, STRESS_MAX))
			bad++;
		for (uint32_t k = 0; k < len && k < STRESS_MAX; k++)
			bad += p[k] != frame_byte(got, k);
		xsk_handoff_pop(&h);
		got++;
	}
	pthread_join(th, NULL);
	assert_int_equal(bad, 0);
	assert_true(xsk_handoff_empty(&h));
	xsk_handoff_fini(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(in_order_and_whole),
		cmocka_unit_test(full_refuses_then_one_room),
		cmocka_unit_test(wraps),
		cmocka_unit_test(jumbo_slot),
		cmocka_unit_test(bad_sizes),
		cmocka_unit_test(two_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
