// SPDX-License-Identifier: BSD-2-Clause
/* UB2E counter names and classes (user/io/ub2e_stats.c): what the fuzzer's conservation rests on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "io/ub2e_stats.h"

static void expect_class(const char *name, enum ub2e_counter_class want)
{
	int id = ub2e_counter_id(name);

	if (id < 0)
		fail_msg("no counter named %s", name);
	if (ub2e_counter_class((unsigned)id) != want)
		fail_msg("%s is %s, want %s", name, ub2e_class_name(ub2e_counter_class((unsigned)id)),
			 ub2e_class_name(want));
}

static void test_known_counters(void **state)
{
	(void)state;
	expect_class("rx_ub", UB2E_CLASS_RX);
	expect_class("rx_uboe", UB2E_CLASS_RX);
	expect_class("tx_uboe", UB2E_CLASS_TX);
	expect_class("tx_ub", UB2E_CLASS_TX);
	expect_class("pass_not_ub", UB2E_CLASS_FOREIGN);
	expect_class("pass_not_uboe", UB2E_CLASS_FOREIGN);
	expect_class("pass_not_for_us", UB2E_CLASS_FOREIGN);
	expect_class("pass_no_neigh", UB2E_CLASS_PASS);
	expect_class("drop_not_egress_port", UB2E_CLASS_DROP);
	expect_class("drop_truncated", UB2E_CLASS_DROP);
	expect_class("cci_not_fecn_forwarded", UB2E_CLASS_INFO);
}

/* Every direction can count a packet in, out, to the kernel and away. */
static void test_every_class_present(void **state)
{
	unsigned seen[UB2E_CLASS_INFO + 1] = { 0 };

	(void)state;
	for (unsigned i = 0; i < UB2E_CNT__MAX; i++) {
		enum ub2e_counter_class c = ub2e_counter_class(i);

		assert_true((unsigned)c <= UB2E_CLASS_INFO);
		assert_int_equal(ub2e_counter_id(ub2e_counter_name(i)), (int)i);
		seen[c]++;
	}
	assert_int_equal(seen[UB2E_CLASS_RX], 2);
	assert_int_equal(seen[UB2E_CLASS_TX], 2);
	assert_int_equal(seen[UB2E_CLASS_FOREIGN], 3);	/* pass_not_ub, pass_not_uboe, pass_not_for_us */
	assert_true(seen[UB2E_CLASS_PASS] >= 1 && seen[UB2E_CLASS_DROP] >= 1);
	assert_string_equal(ub2e_class_name(UB2E_CLASS_DROP), "drop");
	assert_int_equal(ub2e_counter_id("no_such_counter"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_counters),
		cmocka_unit_test(test_every_class_present),
	};

	return cmocka_run_group_tests_name("ub2e_stats", tests, NULL, NULL);
}
