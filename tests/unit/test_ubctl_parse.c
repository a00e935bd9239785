// SPDX-License-Identifier: BSD-2-Clause
/* Pure parsing behind ubctl: numbers (user/lib/parse_num.c), config files
 * (user/lib/conf.c) and map del keys (user/lib/npimap.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lib/conf.h"
#include "lib/npimap.h"
#include "lib/parse_num.h"

static unsigned long num(const char *s, unsigned long max)
{
	unsigned long v = 12345;

	assert_int_equal(parse_uint(s, (size_t)-1, max, &v), 0);
	return v;
}

static void bad_num(const char *s, unsigned long max)
{
	unsigned long v = 777;

	assert_int_equal(parse_uint(s, (size_t)-1, max, &v), -1);
	assert_int_equal(v, 777);	/* untouched on failure */
}

static void numbers_decimal_or_hex(void **state)
{
	(void)state;
	assert_int_equal(num("010", 100), 10);	/* not octal */
	assert_int_equal(num("0100", 1000), 100);
	assert_int_equal(num("0", 5), 0);
	assert_int_equal(num("0x10", 100), 16);
	assert_int_equal(num("0XfF", 255), 255);
	assert_int_equal(num("16777215", 0xffffff), 0xffffff);
	assert_int_equal(num("3", 3), 3);
	bad_num("4", 3);
	bad_num("9", 3);	/* a single digit above max */
	bad_num("0x", 100);
	bad_num("", 100);
	bad_num("-1", 100);
	bad_num("+1", 100);
	bad_num(" 1", 100);
	bad_num("1 ", 100);
	bad_num("08x", 100);
	bad_num("0x1g", 100);
	bad_num("16777216", 0xffffff);
	bad_num("99999999999999999999999999", (unsigned long)-1);
	/* a length bound stops early */
	unsigned long v;
	assert_int_equal(parse_uint("12=5", 2, 100, &v), 0);
	assert_int_equal(v, 12);
}

static void map_keys(void **state)
{
	struct npimap_entry e, tab[2] = { { .pid = 5, .perm = NPIMAP_ANY_PERM, .vlan = 50 },
					  { .pid = 7, .perm = 1, .vlan = 71 } };
	char err[128];

	(void)state;
	assert_int_equal(npimap_parse_key("010", &e, err, sizeof(err)), 0);
	assert_int_equal(e.pid, 10);
	assert_int_equal(e.perm, NPIMAP_ANY_PERM);
	assert_int_equal(npimap_parse_key("7/1", &e, err, sizeof(err)), 0);
	assert_int_equal(e.perm, 1);
	assert_ptr_equal(npimap_find(tab, 2, 7, 1), &tab[1]);
	assert_null(npimap_find(tab, 2, 7, 0));
	assert_ptr_equal(npimap_find(tab, 2, 5, NPIMAP_ANY_PERM), &tab[0]);
	assert_int_equal(npimap_parse_key("5=50", &e, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'5=50'"));
	assert_int_equal(npimap_parse_key("7/2", &e, err, sizeof(err)), -1);
	assert_int_equal(npimap_parse_key("0", &e, err, sizeof(err)), -1);
	assert_int_equal(npimap_parse_key("", &e, err, sizeof(err)), -1);
}

/* ---- config files ---- */

static const struct conf_key keys[] = {
	{ "ub-dev", true }, { "map", true }, { "strict", false }, { "rt", true }, { 0 },
};

struct rec {
	char log[512];
	int calls;
};

static int record(void *ctx, const struct conf_key *k, const char *value, char *err, size_t errlen)
{
	struct rec *r = ctx;

	if (!strcmp(k->name, "rt") && strcmp(value, "2")) {
		snprintf(err, errlen, "--rt: '%s' is not a number in 0..3", value);
		return -1;
	}
	r->calls++;
	snprintf(r->log + strlen(r->log), sizeof(r->log) - strlen(r->log), "%s=%s;", k->name, value ? value : "(flag)");
	return 0;
}

static int parse(const char *text, struct rec *r, char *err, size_t errlen)
{
	static char buf[1024];

	memset(r, 0, sizeof(*r));
	snprintf(buf, sizeof(buf), "%s", text);
	err[0] = '\0';
	return conf_parse(buf, keys, record, r, err, errlen);
}

static void config_entries(void **state)
{
	struct rec r;
	char err[256];

	(void)state;
	assert_int_equal(parse("# comment\n\n  ub-dev  eth1  \r\nmap 4097=100 # why\nmap\t7/1=71\nstrict\nrt 2", &r, err, sizeof(err)), 0);
	assert_string_equal(r.log, "ub-dev=eth1;map=4097=100;map=7/1=71;strict=(flag);rt=2;");
	assert_int_equal(parse("", &r, err, sizeof(err)), 0);
	assert_int_equal(r.calls, 0);
	assert_int_equal(parse("   # only\n\t\n", &r, err, sizeof(err)), 0);
	assert_int_equal(r.calls, 0);
}

static void config_errors_name_the_line(void **state)
{
	struct rec r;
	char err[256];

	(void)state;
	assert_int_equal(parse("ub-dev eth1\n\nbogus 1\nstrict\n", &r, err, sizeof(err)), -1);
	assert_string_equal(err, "line 3: unknown key 'bogus'");
	assert_int_equal(r.calls, 1);	/* nothing after the bad line */
	assert_int_equal(parse("strict yes\n", &r, err, sizeof(err)), -1);
	assert_string_equal(err, "line 1: 'strict' takes no value (got 'yes')");
	assert_int_equal(parse("map 1=1\nub-dev   # nothing\n", &r, err, sizeof(err)), -1);
	assert_string_equal(err, "line 2: 'ub-dev' needs a value");
	assert_int_equal(parse("rt 2\nrt 9\n", &r, err, sizeof(err)), -1);
	assert_string_equal(err, "line 2: --rt: '9' is not a number in 0..3");
	/* Long-option spelling is not a key: keys mirror the options without "--". */
	assert_int_equal(parse("--strict\n", &r, err, sizeof(err)), -1);
	assert_string_equal(err, "line 1: unknown key '--strict'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(numbers_decimal_or_hex),
		cmocka_unit_test(map_keys),
		cmocka_unit_test(config_entries),
		cmocka_unit_test(config_errors_name_the_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
