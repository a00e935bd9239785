/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the BPF_PROG_TEST_RUN harnesses (*_testrun.c) share, so that one
 * fixture format (gen_*_fixtures.py) is read, its cases run, and failures
 * reported, one way: each harness gives fixture_run() its hooks.
 */
#ifndef UBXDP_TESTS_FIXTURE_H
#define UBXDP_TESTS_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <linux/types.h>

#define FIXTURE_MAX_PKT 10240	/* a 9000-byte MTU's frame and more (multi-buffer XDP) */

/* A fixture file: "KEY VALUE" lines; blank lines and '#' comments skipped. */
struct fixture_file {
	FILE *fp;
	const char *tool, *path;
	int lineno;
	char line[2 * FIXTURE_MAX_PKT + 64];
};

int fixture_open(struct fixture_file *ff, const char *tool, const char *path);
/* 1 with the next KEY and VALUE ("" if none), 0 at the end of the file. */
int fixture_next(struct fixture_file *ff, char **key, char **val);
/* "TOOL: PATH:LINE: ..." on stderr. */
void fixture_error(const struct fixture_file *ff, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void fixture_close(struct fixture_file *ff);

/* Hex into at most FIXTURE_MAX_PKT bytes. */
int fixture_unhex(const char *s, unsigned char *buf, size_t *len);
const char *fixture_xdp_verdict(__u32 v);

/* The 16-byte rows where want and got differ, as TAP comments. */
void fixture_diff(const unsigned char *want, size_t wlen, const unsigned char *got, size_t glen);

/* want[i] = 1 for each counter named in LIST; false on an unknown name. */
bool fixture_want_counters(const char *list, int (*id)(const char *), __u64 *want);
/* Every counter moved by exactly want[i] between before and after. */
bool fixture_counters_moved(const __u64 *before, const __u64 *after, const __u64 *want, unsigned n,
			    const char *(*name)(unsigned));

/* The lines of a case that every harness reads the same way. */
struct fixture_case {
	char name[128], prog[32], opts[512], verdict[32], counters[512];
	unsigned char in[FIXTURE_MAX_PKT], out[FIXTURE_MAX_PKT];
	size_t in_len, out_len;
	bool has_out;
	int line;		/* of its "case" line */
};

/*
 * A harness's part in running a fixture file (fixture_run): "case NAME"
 * starts a record of case_size bytes (zeroed) that begins with a struct
 * fixture_case, "end" runs it and prints its TAP line, "TAP NAME".
 */
struct fixture_driver {
	const char *tool;	/* in error messages */
	const char *tap;
	size_t case_size;
	/* The harness's own lines, asked first (NULL: none): 0 when it took the
	 * line, 1 when the line is not its own, -1 when it is bad (said). */
	int (*line)(void *rec, struct fixture_file *ff, const char *key, char *val);
	/* True when the case passed; the reasons it did not as TAP comments. */
	bool (*run)(void *rec);
	/* False for a case this run does not cover: no TAP line (NULL: all apply). */
	bool (*applies)(void *rec);
};

/* Every case of the file at PATH; *failed counts those that fail. -1: the file is bad. */
int fixture_run(const struct fixture_driver *d, const char *path, int *failed);

/* "ok N - ..." or "not ok N - ..."; N counts up over the whole run. */
bool fixture_tap(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
