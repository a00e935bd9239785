// SPDX-License-Identifier: BSD-2-Clause
/* The one number and unit grammar of every tool (user/lib/parse_num.c):
 * decimal or 0x hex (010 is ten), times with ns/us/ms/s, sizes with k/m/g
 * (x1024), ranges, and the one-line message naming the option. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/parse_num.h"

static char err[256];

static uint64_t u(const char *s, uint64_t min, uint64_t max)
{
	uint64_t v = 4242;

	err[0] = '\0';
	if (pn_uint("--opt", s, min, max, &v, err, sizeof(err)))
		fail_msg("'%s' refused: %s", s, err);
	return v;
}

static void bad_u(const char *s, uint64_t min, uint64_t max)
{
	uint64_t v = 4242;

	assert_int_equal(pn_uint("--opt", s, min, max, &v, err, sizeof(err)), -1);
	assert_int_equal(v, 4242);
}

static void numbers(void **state)
{
	(void)state;
	assert_int_equal(u("010", 0, 100), 10);
	assert_int_equal(u("0x10", 0, 100), 16);
	assert_int_equal(u("0X1f", 0, 100), 31);
	assert_int_equal(u("0", 0, 0), 0);
	assert_int_equal(u("65535", 0, 65535), 65535);
	assert_true(u("18446744073709551615", 0, UINT64_MAX) == UINT64_MAX);
	bad_u("18446744073709551616", 0, UINT64_MAX);
	bad_u("65536", 0, 65535);
	bad_u("0", 1, 5);
	bad_u("", 0, 5);
	bad_u("-1", 0, 5);
	bad_u("+1", 0, 5);
	bad_u("1k", 0, 5000);	/* units are for sizes and times */
	bad_u("0x", 0, 5);
	bad_u("1e3", 0, 5000);
	bad_u(NULL, 0, 5);
	pn_uint("--node-id", "70000", 0, 65535, &(uint64_t){ 0 }, err, sizeof(err));
	assert_string_equal(err, "--node-id: '70000' is not a number in 0..65535");
}

static uint64_t t(const char *s, uint64_t bare)
{
	uint64_t v = 4242;

	if (pn_time("--t", s, bare, 0, UINT64_MAX, &v, err, sizeof(err)))
		fail_msg("'%s' refused: %s", s, err);
	return v;
}

static void bad_t(const char *s, uint64_t bare)
{
	uint64_t v = 4242;

	assert_int_equal(pn_time("--t", s, bare, 0, UINT64_MAX, &v, err, sizeof(err)), -1);
	assert_int_equal(v, 4242);
}

static void times(void **state)
{
	(void)state;
	assert_int_equal(t("10ms", 0), 10000000);
	assert_int_equal(t("500us", 0), 500000);
	assert_int_equal(t("2s", 0), 2000000000);
	assert_int_equal(t("100ns", 0), 100);
	assert_int_equal(t("1.5s", 0), 1500000000);
	assert_int_equal(t("0.25ms", 0), 250000);
	assert_int_equal(t("1.000000001s", 0), 1000000001);
	assert_int_equal(t("010ms", 0), 10000000);	/* decimal, not octal */
	assert_int_equal(t("0x10us", 0), 16000);
	/* A bare number is in the option's own unit. */
	assert_int_equal(t("500", PN_MS), 500000000);
	assert_int_equal(t("500", PN_US), 500000);
	assert_int_equal(t("0.5", PN_S), 500000000);
	assert_int_equal(t("0", PN_S), 0);
	bad_t("500", 0);	/* this option wants a unit */
	bad_t("10 ms", 0);
	bad_t("10msec", 0);
	bad_t("10m", 0);	/* minutes are not a unit here */
	bad_t("1.5ns", 0);	/* finer than a nanosecond */
	bad_t("1.0000000001s", 0);
	bad_t("1.s", 0);
	bad_t(".5s", 0);
	bad_t("0x1.5s", 0);
	bad_t("-1ms", 0);
	bad_t("", PN_MS);
	bad_t("ms", 0);
	bad_t("18446744073709551615s", 0);	/* overflows the ns */
	/* The range, said in the grammar's own words. */
	uint64_t v;

	assert_int_equal(pn_time("--idle-ms", "0", PN_MS, PN_MS, 3600 * PN_S, &v, err, sizeof(err)), -1);
	assert_string_equal(err, "--idle-ms: '0' is not a time in 1ms..3600s (10ms, 500us, 2s, 100ns; bare: ms)");
	assert_int_equal(pn_time("--idle-ms", "2s", PN_MS, PN_MS, 3600 * PN_S, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 2000000000);
	assert_int_equal(pn_time("--w", "999us", 0, PN_MS, PN_S, &v, err, sizeof(err)), -1);
	assert_int_equal(pn_time("--w", "1001ms", 0, PN_MS, PN_S, &v, err, sizeof(err)), -1);
}

static void sizes(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(pn_size("--s", "64k", 0, UINT64_MAX, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(pn_size("--s", "1m", 0, UINT64_MAX, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 1048576);
	assert_int_equal(pn_size("--s", "2G", 0, UINT64_MAX, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 2ULL << 30);
	assert_int_equal(pn_size("--s", "1500", 0, UINT64_MAX, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 1500);
	assert_int_equal(pn_size("--s", "0x100", 0, UINT64_MAX, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 256);
	assert_int_equal(pn_size("--s", "1.5k", 0, UINT64_MAX, &v, err, sizeof(err)), -1);
	assert_int_equal(pn_size("--s", "1kb", 0, UINT64_MAX, &v, err, sizeof(err)), -1);
	assert_int_equal(pn_size("--s", "16777216t", 0, UINT64_MAX, &v, err, sizeof(err)), -1);
	assert_int_equal(pn_size("--s", "17179869184g", 0, UINT64_MAX, &v, err, sizeof(err)), -1);
	assert_int_equal(pn_size("--size", "65m", 1, 64 << 20, &v, err, sizeof(err)), -1);
	assert_string_equal(err, "--size: '65m' is not a size in 1..64m (1500, 64k, 1m)");
}

static void formatting_round_trips(void **state)
{
	static const uint64_t ns[] = { 0, 1, 999, 1000, 1500, 1000000, 1500000, 2000000000, 3600000000000ULL,
				       123456789, UINT64_MAX };
	static const uint64_t sz[] = { 0, 1, 1023, 1024, 1536, 65536, 1 << 20, 3ULL << 30, UINT64_MAX };
	char buf[32];
	uint64_t v;

	(void)state;
	assert_string_equal(pn_time_str(1500000, buf, sizeof(buf)), "1500us");
	assert_string_equal(pn_time_str(2000000000, buf, sizeof(buf)), "2s");
	assert_string_equal(pn_size_str(65536, buf, sizeof(buf)), "64k");
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		assert_int_equal(pn_time("--t", pn_time_str(ns[i], buf, sizeof(buf)), PN_NS, 0, UINT64_MAX, &v, err,
					 sizeof(err)), 0);
		assert_true(v == ns[i]);
	}
	for (size_t i = 0; i < sizeof(sz) / sizeof(sz[0]); i++) {
		assert_int_equal(pn_size("--s", pn_size_str(sz[i], buf, sizeof(buf)), 0, UINT64_MAX, &v, err,
					 sizeof(err)), 0);
		assert_true(v == sz[i]);
	}
}

/* Random strings over the grammar's alphabet: whatever a parser accepts, its
 * own reference (strtoull with the base the prefix says, then the unit) agrees,
 * and what it refuses leaves the output alone and says why in one line. */
static void fuzzish_table(void **state)
{
	static const char alpha[] = "0123456789xXabfkmgKMGnsu.- ";
	unsigned seed = 12345;
	int accepted = 0;

	(void)state;
	for (int i = 0; i < 200000; i++) {
		char s[12];
		int len = 1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 10;
		uint64_t v = 77, ref;
		char *end;

		for (int k = 0; k < len; k++)
			s[k] = alpha[((seed = seed * 1103515245 + 12345) >> 16) % (sizeof(alpha) - 1)];
		s[len] = '\0';
		if (!pn_uint("--n", s, 0, UINT64_MAX, &v, err, sizeof(err))) {
			bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');

			accepted++;
			assert_true(s[0] != '-' && s[0] != ' ');
			ref = strtoull(hex ? s + 2 : s, &end, hex ? 16 : 10);
			assert_true(!*end && ref == v);
		} else {
			assert_true(v == 77);
			assert_non_null(strstr(err, "--n: '"));
			assert_null(strchr(err, '\n'));
		}
		if (!pn_size("--s", s, 0, UINT64_MAX, &v, err, sizeof(err))) {
			bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
			uint64_t m = 1;

			ref = strtoull(hex ? s + 2 : s, &end, hex ? 16 : 10);
			if (*end)
				m = strchr("kK", *end) ? 1 << 10 : strchr("mM", *end) ? 1 << 20 : 1 << 30;
			assert_true(!*end || !end[1]);
			assert_true(ref * m == v);
		}
	}
	assert_true(accepted > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(numbers),
		cmocka_unit_test(times),
		cmocka_unit_test(sizes),
		cmocka_unit_test(formatting_round_trips),
		cmocka_unit_test(fuzzish_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
