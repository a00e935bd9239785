// SPDX-License-Identifier: BSD-2-Clause
/* Option tables (user/lib/optab.c): --opt value and --opt=value, aliases,
 * positional arguments, "--", -h/--help anywhere, names checked before any
 * value is acted on, one line and exit 2 for what is wrong, and the help and
 * man text generated from the same table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/optab.h"

static const struct optab opts[] = {
	{ "dev", "DEV", "the device", 'd', 0 },
	{ "flag", NULL, "a flag", 'f', 0 },
	{ "partition", "PID", "a partition", 'p', 0 },
	{ "pid", "PID", NULL, 'p', OPTAB_ALIAS },
	{ "map", "A=B", "an entry", 'm', OPTAB_REPEAT },
	{ 0 },
};

static const struct optab_cmd cmd = {
	.path = "tool sub", .summary = "a subcommand", .synopsis = "--dev DEV [OPTIONS] ARG...",
	.about = "What it does.", .opts = opts, .flags = OPTAB_ARGS,
}, noargs = {
	.path = "tool other", .summary = "no arguments", .opts = opts,
};

struct seen {
	char log[512];
	int calls, fail_on;
};

static int record(void *ctx, const struct optab *o, const char *val)
{
	struct seen *s = ctx;

	snprintf(s->log + strlen(s->log), sizeof(s->log) - strlen(s->log), "%s%s=%s", s->calls ? " " : "", o->name,
		 val ? val : "-");
	return ++s->calls == s->fail_on ? 7 : 0;
}

/* Parse the words of `line` (blank-separated) with c; the log of calls in s. */
static int parse(const struct optab_cmd *c, const char *line, struct seen *s, int *nargs, char ***out)
{
	static char buf[512], *argv[32];
	int argc = 0;

	snprintf(buf, sizeof(buf), "sub %s", line);
	for (char *save, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	memset(s->log, 0, sizeof(s->log));
	s->calls = 0;
	if (out)
		*out = argv;
	return optab_parse(c, argc, argv, record, s, nargs);
}

static void both_spellings_aliases_and_arguments(void **state)
{
	struct seen s = { 0 };
	char **argv;
	int n = -1;

	(void)state;
	assert_int_equal(parse(&cmd, "--dev=eth0 x --flag --pid 010 --map a=b --map=c=d -- --flag y", &s, &n, &argv), 0);
	assert_string_equal(s.log, "dev=eth0 flag=- pid=010 map=a=b map=c=d");
	assert_int_equal(n, 3);
	assert_string_equal(argv[1], "x");
	assert_string_equal(argv[2], "--flag");	/* after "--": an argument */
	assert_string_equal(argv[3], "y");
	/* An empty value is a value; a value may start with a dash. */
	assert_int_equal(parse(&cmd, "--dev= --partition -5", &s, &n, NULL), 0);
	assert_string_equal(s.log, "dev= partition=-5");
	assert_int_equal(n, 0);
	assert_ptr_equal(optab_find(opts, "pid"), &opts[3]);
	assert_null(optab_find(opts, "pi"));
}

static void refusals_before_anything_is_done(void **state)
{
	struct seen s = { 0 };
	int n;

	(void)state;
	/* Each is refused with 2 before the callback sees --dev. */
	assert_int_equal(parse(&cmd, "--dev eth0 --nosuch", &s, &n, NULL), OPTAB_EXIT_USAGE);
	assert_int_equal(parse(&cmd, "--dev eth0 --de x", &s, &n, NULL), OPTAB_EXIT_USAGE);	/* no abbreviations */
	assert_int_equal(parse(&cmd, "--dev eth0 --flag=1", &s, &n, NULL), OPTAB_EXIT_USAGE);
	assert_int_equal(parse(&cmd, "--dev eth0 --map", &s, &n, NULL), OPTAB_EXIT_USAGE);
	assert_int_equal(parse(&cmd, "--dev eth0 -x", &s, &n, NULL), OPTAB_EXIT_USAGE);
	assert_int_equal(parse(&noargs, "--dev eth0 extra", &s, &n, NULL), OPTAB_EXIT_USAGE);
	assert_int_equal(s.calls, 0);
	/* The callback's own status stops the parse there. */
	s.fail_on = 2;
	assert_int_equal(parse(&cmd, "--dev eth0 --flag --map a=b", &s, &n, NULL), 7);
	assert_string_equal(s.log, "dev=eth0 flag=-");
	s.fail_on = 0;
}

static void help_anywhere_does_nothing_else(void **state)
{
	struct seen s = { 0 };
	int n;

	(void)state;
	assert_int_equal(parse(&cmd, "--dev eth0 --map x -h", &s, &n, NULL), OPTAB_DONE);
	assert_int_equal(parse(&noargs, "--flag --help extra", &s, &n, NULL), OPTAB_DONE);
	assert_int_equal(parse(&cmd, "--list-options", &s, &n, NULL), OPTAB_DONE);
	assert_int_equal(s.calls, 0);
	/* A bad name before --help is still refused: the help is of a valid line. */
	assert_int_equal(parse(&cmd, "--nosuch --help", &s, &n, NULL), OPTAB_EXIT_USAGE);
	/* After "--", --help is an argument. */
	assert_int_equal(parse(&cmd, "-- --help", &s, &n, NULL), 0);
	assert_int_equal(n, 1);
}

/* The text optab_help / optab_man / optab_list write for cmd. */
static char *text(void (*fn)(const struct optab_cmd *, FILE *))
{
	static char buf[8192];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	fn(&cmd, f);
	fclose(f);
	return buf;
}

static void help_list_and_man_from_the_table(void **state)
{
	const char *h, *l, *m;

	(void)state;
	h = text(optab_help);
	assert_non_null(strstr(h, "usage: tool sub --dev DEV [OPTIONS] ARG...\n"));
	assert_non_null(strstr(h, "\n  --dev DEV                   the device\n"));
	assert_non_null(strstr(h, "\n  --pid PID                   same as --partition\n"));
	assert_non_null(strstr(h, "an entry (repeatable)"));
	assert_non_null(strstr(h, "-h, --help"));
	l = text(optab_list);
	assert_string_equal(l, "--dev DEV\n--flag\n--partition PID\n--pid PID\n--map A=B\n--help\n");
	m = text(optab_man);
	assert_non_null(strstr(m, ".SS \"tool sub\"\n"));
	assert_non_null(strstr(m, ".TP\n\\fB\\-\\-partition\\fR \\fIPID\\fR\na partition\n"));
	assert_non_null(strstr(m, ".TP\n\\fB\\-\\-flag\\fR\na flag\n"));
	assert_non_null(strstr(m, "\\fBtool sub\\fR \\-\\-dev DEV [OPTIONS] ARG...\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(both_spellings_aliases_and_arguments),
		cmocka_unit_test(refusals_before_anything_is_done),
		cmocka_unit_test(help_anywhere_does_nothing_else),
		cmocka_unit_test(help_list_and_man_from_the_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
