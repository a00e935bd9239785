// SPDX-License-Identifier: BSD-2-Clause
/* What every role does the same way, walking its description (role.h). */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "io/percpu.h"
#include "ubctl/ubctl.h"

#define UBCTL_ROLE(role) &role,
const struct ubctl_role *const ubctl_roles[] = {
#include "ubctl/commands.def"
	NULL,
};
#undef UBCTL_ROLE

int role_pin(const struct ubctl_role *r, const void *skel, const char *dir)
{
	char p[PATH_MAX + 64];

	for (const struct role_pin *e = r->pins; e->file; e++) {
		void *obj = *(void *const *)((const char *)skel + e->off);
		int rc;

		if (e->prog && bpf_program__fd(obj) < 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->file);
		rc = e->prog ? bpf_program__pin(obj, p) : bpf_map__pin(obj, p);
		if (rc)
			return fail(EXIT_FAIL, "pin %s: %s", p, strerror(-rc));
	}
	return 0;
}

void role_unpin(const char *dir)
{
	link_detach_pinned(dir, NULL);
	pin_remove_dir(dir);
}

int role_tc_attach(const struct ubctl_role *r, int prog_fd, unsigned ifindex, bool egress, const char *dir,
		   const char *file, bool *tcx)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex, .attach_point = egress ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = r->tc.handle, .priority = r->tc.pref, .prog_fd = prog_fd);
	int rc = link_tcx_pinned(prog_fd, ifindex, egress, NULL, dir, file);

	/* tcx links where the kernel has them (6.6+), beside other programs on the hook. */
	*tcx = rc != -EOPNOTSUPP;
	if (*tcx)
		return rc;
	rc = bpf_tc_hook_create(&hook);
	if (rc && rc != -EEXIST)
		return rc;
	return bpf_tc_attach(&hook, &o);
}

__u32 prog_id_of_fd(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

int role_tc_detach(const struct ubctl_role *r, unsigned ifindex, bool egress, int prog_fd)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex, .attach_point = egress ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = r->tc.handle, .priority = r->tc.pref);
	LIBBPF_OPTS(bpf_tc_opts, d, .handle = r->tc.handle, .priority = r->tc.pref);
	char name[IF_NAMESIZE] = "?";

	if (bpf_tc_query(&hook, &q))
		return 0;
	if (prog_fd >= 0 && q.prog_id != prog_id_of_fd(prog_fd)) {
		if_indextoname(ifindex, name);
		warnx_("%s: TC filter %#x runs program %u, not this %s's: left alone", name, r->tc.handle, q.prog_id,
		       r->name);
		return 0;
	}
	return bpf_tc_detach(&hook, &d) ? -errno : 1;
}

int role_detach_tc(const struct ubctl_role *r, const char *dir, unsigned ifindex, const char *dev)
{
	int links;

	/* The links; else the clsact filters of a kernel without tcx, or of an older ubctl. */
	if (link_detach_pinned(dir, &links))
		return fail(UB_EXIT_KERNEL, "link detach on %s failed; pins kept", dev);
	for (int eg = 0; !links && eg < 2; eg++) {
		int rc = (eg ? r->tc.egress : r->tc.ingress) ? role_tc_detach(r, ifindex, eg, -1) : 0;

		if (rc < 0)
			return fail(UB_EXIT_KERNEL, "TC detach on %s %s: %s; pins kept", dev, eg ? "egress" : "ingress",
				    strerror(-rc));
	}
	return 0;
}

/* One instance's counters, as text or into inst's "counters". 0 or -1 (said). */
static int counters_show(const struct ubctl_role *r, const char *dir, const char *name, struct json_object *arr,
			 struct json_object **inst)
{
	char p[PATH_MAX + 64];
	__u64 *cnt = calloc(r->ncounters, sizeof(*cnt));
	struct json_object *jc = NULL;
	int fd, rc;

	snprintf(p, sizeof(p), "%s/%s", dir, r->stats_pin);
	fd = bpf_obj_get(p);
	rc = !cnt ? -ENOMEM : fd < 0 ? -errno : percpu_counters_sum(fd, r->ncounters, cnt);
	if (fd >= 0)
		close(fd);
	if (rc) {
		warnx_("%s: cannot read counters: %s", p, strerror(-rc));
		free(cnt);
		return -1;
	}
	*inst = NULL;
	if (arr) {
		*inst = json_object_new_object();
		jc = json_object_new_object();
		json_add_str(*inst, "instance", name);
		json_object_object_add(*inst, "counters", jc);
		json_object_array_add(arr, *inst);
	} else {
		printf("%s %s\n", r->name, name);
	}
	for (unsigned k = 0; k < r->ncounters; k++) {
		if (jc)
			json_add_u64(jc, r->counter_name(k), cnt[k]);
		else
			printf("  %-28s %llu\n", r->counter_name(k), (unsigned long long)cnt[k]);
	}
	free(cnt);
	return 0;
}

int role_stats(const struct ubctl_role *r, struct json_object *out, const char *only)
{
	char (*names)[256], base[PATH_MAX], err[256], dir[PATH_MAX + 256];
	struct json_object *arr, *inst;
	int n, shown = 0;

	if (r->stats)
		return r->stats(out, only);
	if (!r->stats_pin)
		return 0;
	arr = out ? json_object_new_array() : NULL;
	if (out)
		json_object_object_add(out, r->key, arr);
	if (pin_role_dir(r->pin_dir, base, sizeof(base), err, sizeof(err))) {
		warnx_("%s", err);
		return 0;
	}
	n = pin_list_instances(r->pin_dir, &names);
	for (int i = 0; i < n; i++) {
		if (only && strcmp(only, names[i]))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", base, names[i]);
		if (counters_show(r, dir, names[i], arr, &inst))
			continue;
		if (r->stats_more)
			r->stats_more(dir, inst);
		shown++;
	}
	free(names);
	return shown;
}
