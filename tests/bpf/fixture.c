// SPDX-License-Identifier: BSD-2-Clause
#include "fixture.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int tap_n;

int fixture_open(struct fixture_file *ff, const char *tool, const char *path)
{
	ff->tool = tool;
	ff->path = path;
	ff->lineno = 0;
	ff->fp = fopen(path, "r");
	if (!ff->fp) {
		fprintf(stderr, "%s: %s: %s\n", tool, path, strerror(errno));
		return -1;
	}
	return 0;
}

int fixture_next(struct fixture_file *ff, char **key, char **val)
{
	while (fgets(ff->line, sizeof(ff->line), ff->fp)) {
		char *v = strchr(ff->line, ' ');

		ff->lineno++;
		ff->line[strcspn(ff->line, "\n")] = '\0';
		if (!ff->line[0] || ff->line[0] == '#')
			continue;
		if (v)
			*v++ = '\0';
		else
			v = ff->line + strlen(ff->line);
		*key = ff->line;
		*val = v;
		return 1;
	}
	return 0;
}

void fixture_error(const struct fixture_file *ff, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s:%d: ", ff->tool, ff->path, ff->lineno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void fixture_close(struct fixture_file *ff)
{
	if (ff->fp)
		fclose(ff->fp);
	ff->fp = NULL;
}

int fixture_unhex(const char *s, unsigned char *buf, size_t *len)
{
	size_t n = strlen(s);

	if (n % 2 || n / 2 > FIXTURE_MAX_PKT)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		buf[i] = (unsigned char)v;
	}
	*len = n / 2;
	return 0;
}

const char *fixture_xdp_verdict(__u32 v)
{
	static const char *const names[] = { "XDP_ABORTED", "XDP_DROP", "XDP_PASS", "XDP_TX", "XDP_REDIRECT" };

	return v < 5 ? names[v] : "XDP_?";
}

void fixture_diff(const unsigned char *want, size_t wlen, const unsigned char *got, size_t glen)
{
	size_t n = wlen > glen ? wlen : glen;

	printf("#   want %zu bytes, got %zu bytes\n", wlen, glen);
	for (size_t off = 0; off < n; off += 16) {
		bool differs = false;

		for (size_t i = off; i < off + 16 && i < n; i++)
			differs |= i >= wlen || i >= glen || want[i] != got[i];
		if (!differs)
			continue;
		printf("#   %04zx want:", off);
		for (size_t i = off; i < off + 16 && i < n; i++)
			printf(i < wlen ? " %02x" : " --", i < wlen ? want[i] : 0);
		printf("\n#   %04zx  got:", off);
		for (size_t i = off; i < off + 16 && i < n; i++)
			printf(i < glen ? " %02x" : " --", i < glen ? got[i] : 0);
		printf("\n");
	}
}

bool fixture_want_counters(const char *list, int (*id)(const char *), __u64 *want)
{
	char buf[512], *save, *tok;
	bool ok = true;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		int i = id(tok);

		if (i < 0) {
			printf("#   unknown counter '%s'\n", tok);
			ok = false;
			continue;
		}
		want[i] = 1;
	}
	return ok;
}

bool fixture_counters_moved(const __u64 *before, const __u64 *after, const __u64 *want, unsigned n,
			    const char *(*name)(unsigned))
{
	bool ok = true;

	for (unsigned i = 0; i < n; i++) {
		__u64 d = after[i] - before[i];

		if (d != want[i]) {
			printf("#   counter %s moved by %llu, want %llu\n", name(i), (unsigned long long)d,
			       (unsigned long long)want[i]);
			ok = false;
		}
	}
	return ok;
}

bool fixture_tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	/* Results so far stay visible if a later case takes the harness down. */
	fflush(stdout);
	return ok;
}

/* A line every harness reads the same way: 0, or -1 when it is bad (said). */
static int common_line(struct fixture_case *c, struct fixture_file *ff, const char *key, const char *val)
{
	if (!strcmp(key, "prog")) {
		snprintf(c->prog, sizeof(c->prog), "%s", val);
	} else if (!strcmp(key, "opts")) {
		snprintf(c->opts, sizeof(c->opts), "%s", val);
	} else if (!strcmp(key, "in") || !strcmp(key, "out")) {
		bool in = key[0] == 'i';

		if (fixture_unhex(val, in ? c->in : c->out, in ? &c->in_len : &c->out_len)) {
			fixture_error(ff, "bad hex");
			return -1;
		}
		c->has_out |= !in;
	} else if (!strcmp(key, "verdict")) {
		snprintf(c->verdict, sizeof(c->verdict), "%s", val);
	} else if (!strcmp(key, "count")) {
		snprintf(c->counters, sizeof(c->counters), "%s", val);
	} else {
		fixture_error(ff, "unknown line '%s'", key);
		return -1;
	}
	return 0;
}

int fixture_run(const struct fixture_driver *d, const char *path, int *failed)
{
	struct fixture_case *c = calloc(1, d->case_size);
	struct fixture_file ff;
	char *key, *val;
	int rc = 0;

	if (!c) {
		fprintf(stderr, "%s: %s: %s\n", d->tool, path, strerror(errno));
		return -1;
	}
	if (fixture_open(&ff, d->tool, path)) {
		free(c);
		return -1;
	}
	while (!rc && fixture_next(&ff, &key, &val)) {
		if (!strcmp(key, "case")) {
			memset(c, 0, d->case_size);
			snprintf(c->name, sizeof(c->name), "%s", val);
			c->line = ff.lineno;
		} else if (!strcmp(key, "end")) {
			if (!d->applies || d->applies(c))
				*failed += !fixture_tap(d->run(c), "%s %s", d->tap, c->name);
		} else {
			rc = d->line ? d->line(c, &ff, key, val) : 1;
			if (rc > 0)
				rc = common_line(c, &ff, key, val);
		}
	}
	fixture_close(&ff);
	free(c);
	return rc;
}
