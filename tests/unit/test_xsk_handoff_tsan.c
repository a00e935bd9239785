// SPDX-License-Identifier: BSD-2-Clause
/* test_xsk_handoff, built with -fsanitize=thread where the compiler has it
 * (Makefile): the two-thread test then reports a slot read before it was
 * published, which plain runs on x86 would rarely show. Where it has not
 * (NO_TSAN), one skipped test that says so: the plain build passing here
 * would claim a check that never ran (and under CI a skip fails the run). */
#ifndef NO_TSAN
#include "test_xsk_handoff.c"
#else
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

static void no_thread_sanitizer_in_the_compiler(void **state)
{
	(void)state;
	fprintf(stderr, "the compiler has no -fsanitize=thread: the ring's races are not checked\n");
	skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(no_thread_sanitizer_in_the_compiler) };

	return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
