// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl stats: every counter of every instance of every role, as text, JSON
 * or an OpenMetrics exposition, once or every --watch interval with deltas
 * and per-second rates.
 *
 * Every role (role_stats: its description in commands.def) adds its
 * instances under its key of one JSON object; --watch and --format
 * openmetrics work on that object, so a role with counters gets both by
 * being described.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/parse_num.h"
#include "ubctl/ubctl.h"

/* Every role's instances (or `only`): text when out is NULL, else under out. */
static int stats_all(struct json_object *out, const char *only)
{
	int shown = 0;

	for (const struct ubctl_role *const *r = ubctl_roles; *r; r++)
		shown += role_stats(*r, out, only);
	return shown;
}

/* ---- OpenMetrics -------------------------------------------------------------------- */

struct sample {
	unsigned family;	/* index in families[] */
	char labels[640];
	unsigned long long v;
};

struct expo {
	struct { char name[192]; const char *type; } *fam;
	size_t nfam, capfam;
	struct sample *s;
	size_t n, cap;
};

/* A label value: backslash, double quote and newline escaped. */
static void label_add(char *buf, size_t len, const char *key, const char *val)
{
	size_t n = strlen(buf);

	n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s=\"", n ? "," : "", key);
	for (const char *c = val; *c && n + 3 < len; c++) {
		if (*c == '\\' || *c == '"')
			buf[n++] = '\\';
		if (*c == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
			continue;
		}
		buf[n++] = *c;
	}
	if (n + 1 < len)
		buf[n++] = '"';
	buf[n < len ? n : len - 1] = '\0';
}

/* Metric names: [a-zA-Z0-9_:], anything else becomes '_'. */
static void expo_add(struct expo *e, const char *role, const char *prefix, const char *name, const char *type,
		     const char *labels, unsigned long long v)
{
	char fam[192];
	size_t f;

	snprintf(fam, sizeof(fam), "ubxdp_%s_%s%s", role, prefix, name);
	for (char *c = fam; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
		      *c == ':'))
			*c = '_';
	for (f = 0; f < e->nfam && strcmp(e->fam[f].name, fam); f++)
		;
	if (f == e->nfam) {
		if (array_room(&e->fam, &e->capfam, e->nfam, sizeof(*e->fam)))
			return;
		snprintf(e->fam[f].name, sizeof(e->fam[f].name), "%s", fam);
		e->fam[f].type = type;
		e->nfam++;
	}
	if (array_room(&e->s, &e->cap, e->n, sizeof(*e->s)))
		return;
	e->s[e->n].family = (unsigned)f;
	snprintf(e->s[e->n].labels, sizeof(e->s[e->n].labels), "%s", labels);
	e->s[e->n++].v = v;
}

static bool is_num(struct json_object *v)
{
	return json_object_is_type(v, json_type_int);
}

/* The egress's values that are levels, not counts. */
static bool egress_gauge(const char *k)
{
	static const char *const g[] = { "buffered", "hwm", "flows", "release_timeout_us", "skew_us", "frame_size",
					 "multi_buffer", "threads", NULL };

	for (int i = 0; g[i]; i++)
		if (!strcmp(g[i], k))
			return true;
	return false;
}

/* Each number of obj a sample: counters, except the egress's levels. */
static void expo_numbers(struct expo *e, const char *role, const char *prefix, struct json_object *obj,
			 const char *labels)
{
	json_object_object_foreach(obj, k, v) {
		if (is_num(v))
			expo_add(e, role, prefix, k, !strcmp(role, "wps_egress") && egress_gauge(k) ? "gauge" : "counter",
				 labels, json_object_get_uint64(v));
	}
}

/* An array of objects (paths, flows): numbers are samples, strings and the ids named in `keys` labels. */
static void expo_rows(struct expo *e, const char *role, const char *prefix, struct json_object *arr,
		      const char *inst_labels, const char *const *keys)
{
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		struct json_object *row = json_object_array_get_idx(arr, i), *v;
		char labels[640];

		snprintf(labels, sizeof(labels), "%s", inst_labels);
		for (int k = 0; keys[k]; k++)
			if (json_object_object_get_ex(row, keys[k], &v) && v)
				label_add(labels, sizeof(labels), keys[k], json_object_get_string(v));
		json_object_object_foreach(row, key, val) {
			bool label = false;

			for (int k = 0; keys[k]; k++)
				label |= !strcmp(keys[k], key);
			if (!label && is_num(val))
				expo_add(e, role, prefix, key, "counter", labels, json_object_get_uint64(val));
		}
	}
}

static int sample_cmp(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	return x->family < y->family ? -1 : x->family > y->family ? 1 : (x < y ? -1 : x > y);
}

/*
 * The exposition of a stats object: families ubxdp_<role>_<counter> (a counter's
 * sample has _total), each instance labelled instance="NAME"; WPS ingress paths
 * and flows with their ids, devices and 5-tuples as labels; the egress's
 * xdp, reorder (released_<action>) and io numbers. Ends with # EOF.
 */
static void print_openmetrics(struct json_object *all)
{
	static const char *const path_keys[] = { "path", "ecmp_dev", "via", "ifindex", NULL };
	static const char *const flow_keys[] = { "flow_id", "src", "dst", "proto", "sport", "dport", "group_id", NULL };
	struct expo e = { 0 };
	unsigned prev = (unsigned)-1;

	json_object_object_foreach(all, role, arr) {
		for (size_t i = 0; json_object_is_type(arr, json_type_array) && i < json_object_array_length(arr); i++) {
			struct json_object *inst = json_object_array_get_idx(arr, i), *v;
			char labels[640] = "";

			if (json_object_object_get_ex(inst, "instance", &v))
				label_add(labels, sizeof(labels), "instance", json_object_get_string(v));
			json_object_object_foreach(inst, k, val) {
				if (!strcmp(k, "counters") || !strcmp(k, "xdp") || !strcmp(k, "io"))
					expo_numbers(&e, role, !strcmp(k, "counters") ? "" : !strcmp(k, "xdp") ? "xdp_" : "io_",
						     val, labels);
				else if (!strcmp(k, "reorder")) {
					struct json_object *rel;

					expo_numbers(&e, role, "", val, labels);
					if (json_object_object_get_ex(val, "released", &rel))
						expo_numbers(&e, role, "released_", rel, labels);
				} else if (!strcmp(k, "paths"))
					expo_rows(&e, role, "path_", val, labels, path_keys);
				else if (!strcmp(k, "flows") && strcmp(role, "wps_egress"))
					expo_rows(&e, role, "flow_", val, labels, flow_keys);
			}
		}
	}
	qsort(e.s, e.n, sizeof(*e.s), sample_cmp);
	for (size_t i = 0; i < e.n; i++) {
		const char *fam = e.fam[e.s[i].family].name, *type = e.fam[e.s[i].family].type;

		if (e.s[i].family != prev)
			printf("# TYPE %s %s\n", fam, type);
		prev = e.s[i].family;
		printf("%s%s{%s} %llu\n", fam, !strcmp(type, "counter") ? "_total" : "", e.s[i].labels, e.s[i].v);
	}
	printf("# EOF\n");
	free(e.s);
	free(e.fam);
}

/* ---- --watch ------------------------------------------------------------------------- */

static struct json_object *find_instance(struct json_object *arr, const char *name)
{
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		struct json_object *o = json_object_array_get_idx(arr, i), *v;

		if (json_object_object_get_ex(o, "instance", &v) && !strcmp(json_object_get_string(v), name))
			return o;
	}
	return NULL;
}

/*
 * To each instance of cur also in prev: "delta" and "rate" (per second over
 * secs), for every number in its objects of numbers (counters; the egress's
 * xdp, reorder, io), the same shape.
 */
static void add_deltas(struct json_object *cur, struct json_object *prev, double secs)
{
	json_object_object_foreach(cur, role, arr) {
		struct json_object *parr;

		if (!json_object_is_type(arr, json_type_array) || !json_object_object_get_ex(prev, role, &parr))
			continue;
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			struct json_object *inst = json_object_array_get_idx(arr, i), *v, *pinst;
			struct json_object *d = json_object_new_object(), *r = json_object_new_object();

			if (!json_object_object_get_ex(inst, "instance", &v) ||
			    !(pinst = find_instance(parr, json_object_get_string(v)))) {
				json_object_put(d);
				json_object_put(r);
				continue;
			}
			json_object_object_foreach(inst, grp, g) {
				struct json_object *pg, *dg, *rg;

				if (!json_object_is_type(g, json_type_object) || !json_object_object_get_ex(pinst, grp, &pg))
					continue;
				dg = json_object_new_object();
				rg = json_object_new_object();
				json_object_object_foreach(g, k, val) {
					struct json_object *pv;
					long long delta;

					if (!is_num(val) || !json_object_object_get_ex(pg, k, &pv) || !is_num(pv))
						continue;
					delta = (long long)(json_object_get_uint64(val) - json_object_get_uint64(pv));
					json_object_object_add(dg, k, json_object_new_int64(delta));
					json_object_object_add(rg, k, json_object_new_double(secs > 0 ? (double)delta / secs : 0));
				}
				json_object_object_add(d, grp, dg);
				json_object_object_add(r, grp, rg);
			}
			json_object_object_add(inst, "delta", d);
			json_object_object_add(inst, "rate", r);
		}
	}
}

/* One interval as text: each instance, each number that moved, its value, delta and rate. */
static void print_watch_text(struct json_object *cur)
{
	json_object_object_foreach(cur, role, arr) {
		for (size_t i = 0; json_object_is_type(arr, json_type_array) && i < json_object_array_length(arr); i++) {
			struct json_object *inst = json_object_array_get_idx(arr, i), *v, *d, *r;
			int moved = 0;

			if (!json_object_object_get_ex(inst, "instance", &v))
				continue;
			printf("%s %s\n", role, json_object_get_string(v));
			if (!json_object_object_get_ex(inst, "delta", &d) || !json_object_object_get_ex(inst, "rate", &r)) {
				printf("  (new)\n");
				continue;
			}
			json_object_object_foreach(d, grp, dg) {
				struct json_object *g, *rg;

				json_object_object_get_ex(inst, grp, &g);
				json_object_object_get_ex(r, grp, &rg);
				json_object_object_foreach(dg, k, dv) {
					struct json_object *val, *rv;

					if (!json_object_get_int64(dv) || !json_object_object_get_ex(g, k, &val) ||
					    !json_object_object_get_ex(rg, k, &rv))
						continue;
					moved++;
					printf("  %-32s %14llu %+12lld %14.1f/s\n", k, (unsigned long long)json_object_get_uint64(val),
					       (long long)json_object_get_int64(dv), json_object_get_double(rv));
				}
			}
			if (!moved)
				printf("  (no change)\n");
		}
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
	double left = t - now_s();

	if (left > 0) {
		struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
}

enum { FMT_TEXT, FMT_JSON, FMT_OPENMETRICS };

struct stats_args {
	const char *only;
	int format;
	uint64_t watch_ns, count;
};

static int stats_opt(void *ctx, const struct optab *o, const char *val)
{
	struct stats_args *a = ctx;
	char err[256];

	switch (o->key) {
	case 'j':
		a->format = FMT_JSON;
		break;
	case 'f':
		if (!strcmp(val, "text"))
			a->format = FMT_TEXT;
		else if (!strcmp(val, "json"))
			a->format = FMT_JSON;
		else if (!strcmp(val, "openmetrics"))
			a->format = FMT_OPENMETRICS;
		else
			return fail(EXIT_USAGE, "stats: --format '%s': text, json or openmetrics", val);
		break;
	case 'w':
		if (pn_time("--watch", val, PN_S, 100 * PN_MS, 3600 * PN_S, &a->watch_ns, err, sizeof(err)))
			return fail(EXIT_USAGE, "stats: %s", err);
		break;
	case 'c':
		if (pn_uint("--count", val, 1, UINT32_MAX, &a->count, err, sizeof(err)))
			return fail(EXIT_USAGE, "stats: %s", err);
		break;
	default:
		a->only = val;
	}
	return 0;
}

static const struct optab stats_opts[] = {
	UBCTL_OPT_JSON('j'),
	{ "format", "text|json|openmetrics", "the output: text (default), JSON (as --json) or an OpenMetrics\n"
	  "exposition for a node_exporter textfile collector", 'f', 0 },
	{ "watch", "TIME", "every TIME (bare: seconds; 100ms..3600s) the counters that\n"
	  "moved, with their deltas and per-second rates; with --json one\n"
	  "object per interval, each instance with \"delta\" and \"rate\"", 'w', 0 },
	{ "count", "N", "with --watch: stop after N intervals (default: until killed)", 'c', 0 },
	{ "name", "NAME", "only the instance NAME", 'n', 0 },
	{ 0 },
};

static int cmd_stats(int argc, char **argv);

static const struct optab_cmd stats_cmd = {
	.path = "ubctl stats",
	.summary = "every counter of every instance of every role",
	.synopsis = "[--json | --format text|json|openmetrics] [--watch TIME [--count N]] [--name NAME]",
	.about = "Every counter of every instance of every role (UB2E, WPS ingress, boundary,\n"
		 "running WPS egress; or of NAME), summed over CPUs; counter names are in\n"
		 "headers/ub2e_maps.h (rx_*, tx_*, pass_*, drop_*) and the roles' headers. For a\n"
		 "WPS ingress also per path (explicit paths: per slot, with the device it leaves\n"
		 "by; ECMP: per egress device the kernel's multipath route chose) and per flow,\n"
		 "named by its 5-tuple.\n\n"
		 "--format openmetrics writes families ubxdp_ROLE_COUNTER (# TYPE ... counter,\n"
		 "samples ubxdp_ROLE_COUNTER_total{instance=\"NAME\"}; paths and flows with their\n"
		 "ids and 5-tuples as labels; the egress's levels as gauges), ending with # EOF:\n"
		 "write it to a file and rename it into node_exporter's textfile directory.",
	.opts = stats_opts,
	.run = cmd_stats,
};

const struct optab_cmd *const stats_cmds[] = { &stats_cmd, NULL };

static int watch(const struct stats_args *a)
{
	double period = (double)a->watch_ns / 1e9, t0 = now_s(), t = t0;
	int shown;
	struct json_object *prev = json_object_new_object();

	stats_all(prev, a->only);
	for (uint64_t i = 1; !a->count || i <= a->count; i++) {
		struct json_object *cur = json_object_new_object();
		double t1;

		sleep_until(t0 + (double)i * period);
		shown = stats_all(cur, a->only);
		t1 = now_s();
		if (a->only && !shown) {
			json_object_put(cur);
			json_object_put(prev);
			return fail(UB_EXIT_NOTFOUND, "stats: no instance named '%s'", a->only);
		}
		add_deltas(cur, prev, t1 - t);
		json_object_put(prev);
		prev = json_object_get(cur);
		if (a->format == FMT_JSON) {
			json_object_object_add(cur, "interval_s", json_object_new_double(t1 - t));
			puts(json_object_to_json_string_ext(cur, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		} else {
			printf("--- %.2f s\n", t1 - t);
			if (!shown)
				printf("no ubxdp instance is attached\n");
			print_watch_text(cur);
		}
		fflush(stdout);
		json_object_put(cur);
		t = t1;
	}
	json_object_put(prev);
	return 0;
}

static int cmd_stats(int argc, char **argv)
{
	struct stats_args args = { 0 };
	struct json_object *all = NULL;
	int shown, rc = optab_parse(&stats_cmd, argc, argv, stats_opt, &args, NULL);

	if (rc)
		return OPTAB_STATUS(rc);
	if (args.count && !args.watch_ns)
		return fail(EXIT_USAGE, "stats: --count needs --watch");
	if (args.watch_ns && args.format == FMT_OPENMETRICS)
		return fail(EXIT_USAGE, "stats: --watch and --format openmetrics exclude each other (a collector scrapes)");
	if (args.watch_ns)
		return watch(&args);
	if (args.format != FMT_TEXT)
		all = json_object_new_object();
	shown = stats_all(all, args.only);
	if (args.only && !shown) {
		json_object_put(all);
		return fail(UB_EXIT_NOTFOUND, "stats: no instance named '%s'", args.only);
	}
	if (args.format == FMT_JSON) {
		json_print(all);
	} else if (args.format == FMT_OPENMETRICS) {
		print_openmetrics(all);
		json_object_put(all);
	} else if (!shown) {
		printf("no ubxdp instance is attached\n");
	}
	return 0;
}
