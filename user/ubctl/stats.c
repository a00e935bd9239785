// SPDX-License-Identifier: BSD-2-Clause
/* ubctl stats: every counter of every attached instance, as text or JSON. */
#include <errno.h>
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

struct stats_args {
	const char *only;
	bool json;
};

static int stats_opt(void *ctx, const struct optab *o, const char *val)
{
	struct stats_args *a = ctx;

	if (o->key == 'j')
		a->json = true;
	else
		a->only = val;
	return 0;
}

static const struct optab stats_opts[] = {
	UBCTL_OPT_JSON('j'),
	{ "name", "NAME", "only the instance NAME", 'n', 0 },
	{ 0 },
};

static int cmd_stats(int argc, char **argv);

static const struct optab_cmd stats_cmd = {
	.path = "ubctl stats",
	.summary = "every counter of every attached instance",
	.synopsis = "[--json] [--name NAME]",
	.about = "Every counter of every attached instance (or of NAME), summed over CPUs;\n"
		 "counter names are in headers/ub2e_maps.h (rx_*, tx_*, pass_*, drop_*). For a\n"
		 "WPS ingress also per path (explicit paths: per slot, with the device it leaves\n"
		 "by; ECMP: per egress device the kernel's multipath route chose) and per flow.",
	.opts = stats_opts,
	.run = cmd_stats,
};

const struct optab_cmd *const stats_cmds[] = { &stats_cmd, NULL };

static int cmd_stats(int argc, char **argv)
{
	char names[64][256], base[PATH_MAX], err[256], path[PATH_MAX + 300];
	struct stats_args args = { 0 };
	const char *only;
	__u64 cnt[UB2E_CNT__MAX];
	struct json_object *jall = NULL, *jlist = NULL;
	bool json;
	int n, shown = 0, rc = optab_parse(&stats_cmd, argc, argv, stats_opt, &args, NULL);

	if (rc)
		return OPTAB_STATUS(rc);
	only = args.only;
	json = args.json;
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
#define UBCTL_STATS(fn) shown += fn(jall, only);
#include "commands.def"
#undef UBCTL_STATS
	if (only && !shown) {
		if (jall)
			json_object_put(jall);
		return fail(UB_EXIT_NOTFOUND, "stats: no instance named '%s'", only);
	}
	if (json)
		json_print(jall);
	if (!json && !shown)
		printf("no ubxdp instance is attached\n");
	return 0;
}
