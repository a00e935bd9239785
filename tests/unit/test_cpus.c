// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CPUs a process may run on (user/io/cpus.c) on a kernel with more
 * possible CPUs than a fixed cpu_set_t holds (1024): sched_getaffinity and
 * pthread_setaffinity_np are wrapped (-Wl,--wrap) by a kernel of 2048
 * possible CPUs that allows 3, 1500 and 1501, and refuses (EINVAL) a mask
 * shorter than its own, as Linux does.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "io/cpus.h"
#include "wps/egress_run.h"

#define NR_CPUS 2048
static const int allowed[] = { 3, 1500, 1501 };

int __wrap_sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set);
int __wrap_pthread_setaffinity_np(pthread_t t, size_t size, const cpu_set_t *set);

int __wrap_sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
	(void)pid;
	if (size * 8 < NR_CPUS) {
		errno = EINVAL;
		return -1;
	}
	CPU_ZERO_S(size, set);
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		CPU_SET_S(allowed[i], size, set);
	return 0;
}

static int bound[8], nbound;

int __wrap_pthread_setaffinity_np(pthread_t t, size_t size, const cpu_set_t *set)
{
	(void)t;
	nbound = 0;
	for (int c = 0; c < (int)(size * 8); c++)
		if (CPU_ISSET_S(c, size, set) && nbound < 8)
			bound[nbound++] = c;
	return nbound ? 0 : EINVAL;
}

static void counts_past_1024(void **state)
{
	(void)state;
	assert_int_equal(cpus_usable(), 3);
	assert_int_equal(wps_eg_default_threads(), 3);	/* the egress's reorder threads */
}

static void nth_past_1024(void **state)
{
	(void)state;
	assert_int_equal(cpus_nth(0), 3);
	assert_int_equal(cpus_nth(1), 1500);
	assert_int_equal(cpus_nth(2), 1501);
	assert_int_equal(cpus_nth(3), -1);
}

static void binds_past_1024(void **state)
{
	(void)state;
	assert_int_equal(cpus_bind_thread(1501), 0);
	assert_int_equal(nbound, 1);
	assert_int_equal(bound[0], 1501);
	assert_int_equal(cpus_bind_thread(-1), EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts_past_1024),
		cmocka_unit_test(nth_past_1024),
		cmocka_unit_test(binds_past_1024),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
