// SPDX-License-Identifier: BSD-2-Clause
/* ubctl stats: every counter of every attached instance, as text or JSON. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ub2e_maps.h"
#include "ub2e_pins.h"
#include "ub2e_stats.h"
#include "ubctl.h"

/* Sum a pinned per-CPU counter array. Returns 0 or -1 with errno. */
static int read_counters(const char *path, __u64 *out)
{
	int fd = bpf_obj_get(path), rc;

	if (fd < 0)
		return -1;
	rc = ub2e_counters_read(fd, out);
	close(fd);
	if (rc)
		errno = -rc;
	return rc ? -1 : 0;
}

const struct ubctl_help help_stats[] = {
	{ NULL,
	  "usage: ubctl stats [--json] [--name NAME]\n"
	  "\n"
	  "Every counter of every attached instance (or of NAME), summed over CPUs;\n"
	  "counter names are in headers/ub2e_maps.h (rx_*, tx_*, pass_*, drop_*).\n" },
	{ 0 },
};

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, 0, 'j' }, { "name", required_argument, 0, 'n' }, { 0 },
	};
	char names[64][256], base[PATH_MAX], err[256], path[PATH_MAX + 300];
	const char *only = NULL;
	__u64 cnt[UB2E_CNT__MAX];
	struct json_object *jall = NULL, *jlist = NULL;
	bool json = false;
	int c, n, shown = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'n')
			only = optarg;
		else
			return fail(EXIT_USAGE, "stats: unknown option %s", argv[optind - 1]);
	}
	if (optind < argc)
		return fail(EXIT_USAGE, "stats: unexpected argument '%s'", argv[optind]);
	if (pin_role_dir("ub2e", base, sizeof(base), err, sizeof(err)))
		return fail(EXIT_FAIL, "%s", err);
	n = pin_list_instances("ub2e", names, 64);
	if (json) {
		jall = json_object_new_object();
		jlist = json_object_new_array();
		json_object_object_add(jall, "ub2e", jlist);
	}
	for (int i = 0; i < n; i++) {
		if (only && strcmp(only, names[i]))
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", base, names[i], UB2E_PIN_STATS);
		if (read_counters(path, cnt)) {
			warnx_("%s: cannot read counters: %s", path, strerror(errno));
			continue;
		}
		if (json) {
			struct json_object *ji = json_object_new_object(), *jc = json_object_new_object();

			json_add_str(ji, "instance", names[i]);
			for (int k = 0; k < UB2E_CNT__MAX; k++)
				json_add_u64(jc, ub2e_counter_name((unsigned)k), cnt[k]);
			json_object_object_add(ji, "counters", jc);
			json_object_array_add(jlist, ji);
		} else {
			printf("ub2e %s\n", names[i]);
			for (int k = 0; k < UB2E_CNT__MAX; k++)
				printf("  %-28s %llu\n", ub2e_counter_name((unsigned)k), (unsigned long long)cnt[k]);
		}
		shown++;
	}
	/* Roles with counters of their own (UBCTL_STATS in commands.def). */
#define UBCTL_CMD(name, run, help, summary)
#define UBCTL_STATS(fn) shown += fn(jall, only);
#include "commands.def"
#undef UBCTL_STATS
#undef UBCTL_CMD
	if (only && !shown) {
		if (jall)
			json_object_put(jall);
		return fail(EXIT_FAIL, "stats: no instance named '%s'", only);
	}
	if (json)
		json_print(jall);
	if (!json && !shown)
		printf("no ubxdp instance is attached\n");
	return 0;
}
