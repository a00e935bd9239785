// SPDX-License-Identifier: BSD-2-Clause
/*
 * A JFC's ring of completion records (user/urma/cr_ring.c) driven by
 * threads, no network: several producers and consumers at depths 1, 2, 3,
 * 7 and 64 give every record once, each producer's records in its order;
 * a loss is reported once, where it happened. A ring that hangs (a take
 * spinning for ever: one slot for depth 1) fails by the alarm, not by
 * hanging the suite.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "urma/cr_ring.h"

#define PRODUCERS	3
#define CONSUMERS	3
#define PER_PRODUCER	20000u
#define ALARM_S		30

struct run {
	struct ubx_cring r;
	uint8_t seen[PRODUCERS][PER_PRODUCER];	/* atomic: times taken */
	uint64_t taken;				/* atomic */
	uint32_t bad_order;			/* atomic */
	uint64_t pushed_when_full;		/* atomic: pushes refused (retried) */
	uint64_t reports;			/* atomic: losses reported */
};

struct worker {
	struct run *run;
	uint32_t id;
};

static void on_alarm(int sig)
{
	static const char m[] = "cr_ring: hung (a push or take never found its turn)\n";

	(void)sig;
	if (write(2, m, sizeof(m) - 1) < 0) {
		/* exiting anyway */
	}
	_exit(1);
}

static urma_cr_t rec(uint32_t producer, uint32_t i)
{
	urma_cr_t cr;

	memset(&cr, 0, sizeof(cr));
	cr.user_ctx = (uint64_t)producer << 32 | i;
	return cr;
}

static void *produce(void *arg)
{
	struct worker *w = arg;

	for (uint32_t i = 0; i < PER_PRODUCER; i++) {
		urma_cr_t cr = rec(w->id, i);

		/* full: lost to the ring, pushed again (as a caller that waits for room) */
		while (!ubx_cring_push(&w->run->r, &cr)) {
			__atomic_fetch_add(&w->run->pushed_when_full, 1, __ATOMIC_RELAXED);
			sched_yield();
		}
	}
	return NULL;
}

static void *consume(void *arg)
{
	struct worker *w = arg;
	struct run *run = w->run;
	int64_t last[PRODUCERS];

	for (int p = 0; p < PRODUCERS; p++)
		last[p] = -1;
	while (__atomic_load_n(&run->taken, __ATOMIC_RELAXED) < (uint64_t)PRODUCERS * PER_PRODUCER) {
		urma_cr_t cr;
		uint32_t p, i;

		if (!ubx_cring_take(&run->r, &cr)) {
			/* as urma_poll_jfc: a refused push was a loss to the ring */
			if (ubx_cring_report_loss(&run->r))
				__atomic_fetch_add(&run->reports, 1, __ATOMIC_RELAXED);
			sched_yield();
			continue;
		}
		p = (uint32_t)(cr.user_ctx >> 32);
		i = (uint32_t)cr.user_ctx;
		if (p >= PRODUCERS || i >= PER_PRODUCER) {
			__atomic_fetch_add(&run->bad_order, 1, __ATOMIC_RELAXED);
		} else {
			/* one consumer sees a producer's records in its order */
			if ((int64_t)i <= last[p])
				__atomic_fetch_add(&run->bad_order, 1, __ATOMIC_RELAXED);
			last[p] = i;
			__atomic_fetch_add(&run->seen[p][i], 1, __ATOMIC_RELAXED);
		}
		__atomic_fetch_add(&run->taken, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void many_threads_at(uint32_t depth)
{
	struct run *run = calloc(1, sizeof(*run));
	struct worker pw[PRODUCERS], cw[CONSUMERS];
	pthread_t pt[PRODUCERS], ct[CONSUMERS];
	uint32_t missing = 0, twice = 0;
	urma_cr_t cr;

	assert_non_null(run);
	assert_int_equal(ubx_cring_init(&run->r, depth), 0);
	signal(SIGALRM, on_alarm);
	alarm(ALARM_S);
	for (uint32_t k = 0; k < CONSUMERS; k++) {
		cw[k] = (struct worker){ run, k };
		assert_int_equal(pthread_create(&ct[k], NULL, consume, &cw[k]), 0);
	}
	for (uint32_t k = 0; k < PRODUCERS; k++) {
		pw[k] = (struct worker){ run, k };
		assert_int_equal(pthread_create(&pt[k], NULL, produce, &pw[k]), 0);
	}
	for (uint32_t k = 0; k < PRODUCERS; k++)
		pthread_join(pt[k], NULL);
	for (uint32_t k = 0; k < CONSUMERS; k++)
		pthread_join(ct[k], NULL);
	alarm(0);
	for (uint32_t p = 0; p < PRODUCERS; p++)
		for (uint32_t i = 0; i < PER_PRODUCER; i++) {
			missing += run->seen[p][i] == 0;
			twice += run->seen[p][i] > 1;
		}
	printf("# depth %u: %u records missing, %u taken twice, %u out of order, %llu pushes found it full, "
	       "%llu losses reported\n", depth, missing, twice, run->bad_order,
	       (unsigned long long)run->pushed_when_full, (unsigned long long)run->reports);
	assert_int_equal(missing, 0);
	assert_int_equal(twice, 0);
	assert_int_equal(run->bad_order, 0);
	assert_true(run->reports <= run->pushed_when_full);
	assert_true(!run->pushed_when_full || run->reports);
	assert_false(ubx_cring_take(&run->r, &cr));
	assert_false(ubx_cring_report_loss(&run->r));
	/* Each loss the ring recorded was reported once, by one of the
	 * consumers polling at once. */
	assert_int_equal(run->reports, run->r.losses);
	ubx_cring_free(&run->r);
	free(run);
}

static void depth_1(void **state) { (void)state; many_threads_at(1); }
static void depth_2(void **state) { (void)state; many_threads_at(2); }
static void depth_3(void **state) { (void)state; many_threads_at(3); }
static void depth_7(void **state) { (void)state; many_threads_at(7); }
static void depth_64(void **state) { (void)state; many_threads_at(64); }

/* A ring of depth records holds that many (depth 1: 2, the ring's least)
 * and no more; what does not fit is reported once, after the records
 * pushed before it and before those pushed after it. */
static void loss_reported_once_where_it_happened(void **state)
{
	static const uint32_t depths[] = { 1, 2, 3, 7, 64 };

	(void)state;
	signal(SIGALRM, on_alarm);
	alarm(ALARM_S);
	for (size_t k = 0; k < sizeof(depths) / sizeof(depths[0]); k++) {
		uint32_t depth = depths[k], holds = depth < 2 ? 2 : depth, i;
		struct ubx_cring r;
		urma_cr_t cr, a = rec(0, 0);

		assert_int_equal(ubx_cring_init(&r, depth), 0);
		for (i = 0; i < holds; i++) {
			cr = rec(0, i);
			assert_true(ubx_cring_push(&r, &cr));
		}
		assert_false(ubx_cring_push(&r, &a));		/* lost */
		assert_false(ubx_cring_report_loss(&r));	/* records before it first */
		assert_true(ubx_cring_take(&r, &cr));
		assert_int_equal(cr.user_ctx, rec(0, 0).user_ctx);
		cr = rec(1, 0);					/* after the loss */
		assert_true(ubx_cring_push(&r, &cr));
		assert_false(ubx_cring_push(&r, &a));		/* the same loss, unreported */
		for (i = 1; i < holds; i++) {
			assert_true(ubx_cring_take(&r, &cr));
			assert_int_equal(cr.user_ctx, rec(0, i).user_ctx);
		}
		assert_false(ubx_cring_take(&r, &cr));		/* stops at the loss */
		assert_true(ubx_cring_busy(&r));
		assert_true(ubx_cring_report_loss(&r));
		assert_false(ubx_cring_report_loss(&r));	/* once */
		assert_true(ubx_cring_take(&r, &cr));
		assert_int_equal(cr.user_ctx, rec(1, 0).user_ctx);
		assert_false(ubx_cring_take(&r, &cr));
		assert_false(ubx_cring_busy(&r));
		assert_false(ubx_cring_report_loss(&r));
		ubx_cring_free(&r);
	}
	alarm(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(depth_1),
		cmocka_unit_test(depth_2),
		cmocka_unit_test(depth_3),
		cmocka_unit_test(depth_7),
		cmocka_unit_test(depth_64),
		cmocka_unit_test(loss_reported_once_where_it_happened),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
