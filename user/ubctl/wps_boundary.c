// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl wps boundary attach|detach --dev DEV: the domain-edge filter on DEV's
 * TC ingress (WPS packets from outside are dropped) and egress (WPS packets
 * never leave), counted; pinned under <bpffs>/ubxdp/wps/boundary/<name>/.
 * Also the WPS part of `ubctl stats`.
 */
#include <errno.h>
#include <limits.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "wps_boundary.skel.h"
#include "wps_cfg.h"
#include "wps_pins.h"
#include "percpu.h"
#include "ubctl.h"

static int boundary_dir(const char *dev, bool must_exist, char *out, size_t len)
{
	char ns[128], name[300], err[256];
	struct instance_sel sel = { .name = name };

	pin_netns_name(ns, sizeof(ns));
	snprintf(name, sizeof(name), "%s%s%s", ns, *ns ? ":" : "", dev);
	int prc = pin_instance_dir(WPS_ROLE_BOUNDARY, &sel, must_exist, out, len, err, sizeof(err));

	if (prc)
		return fail(prc, "%s", err);
	return 0;
}

static int tc_one(unsigned ifindex, enum bpf_tc_attach_point where, int prog_fd)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex, .attach_point = where);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = WPS_TC_HANDLE, .priority = WPS_TC_PRIO_BOUNDARY,
			    .prog_fd = prog_fd);
	int rc = bpf_tc_hook_create(&hook);

	if (rc && rc != -EEXIST)
		return rc;
	if (prog_fd < 0) {
		opts.prog_fd = 0;
		return bpf_tc_detach(&hook, &opts);
	}
	return bpf_tc_attach(&hook, &opts);
}

static const struct optab dev_opts[] = {
	{ "dev", "DEV", "the port at the domain's edge (required)", 'd', 0 },
	{ 0 },
};

static int boundary_attach(int argc, char **argv);
static int boundary_detach(int argc, char **argv);

static const struct optab_cmd boundary_cmd = {
	.path = "ubctl wps boundary",
	.summary = "the WPS domain-edge filter: WPS packets neither enter nor leave through a port",
}, boundary_attach_cmd = {
	.path = "ubctl wps boundary attach",
	.summary = "drop packets carrying the WPS option entering or leaving through DEV",
	.synopsis = "--dev DEV",
	.about = "On DEV's TC ingress (WPS packets from outside are dropped) and egress (WPS\n"
		 "packets never leave), counted in ubctl stats; pinned under\n"
		 "/sys/fs/bpf/ubxdp/wps/boundary/[NETNS:]DEV/.",
	.opts = dev_opts,
	.run = boundary_attach,
}, boundary_detach_cmd = {
	.path = "ubctl wps boundary detach",
	.summary = "take the filter off DEV and remove its pins",
	.synopsis = "--dev DEV",
	.opts = dev_opts,
	.run = boundary_detach,
};

const struct optab_cmd *const wps_boundary_cmds[] = {
	&boundary_cmd, &boundary_attach_cmd, &boundary_detach_cmd, NULL,
};

static int boundary(const struct optab_cmd *c, int argc, char **argv)
{
	struct wps_boundary *skel;
	char dir[PATH_MAX], p[PATH_MAX + 64];
	const char *dev = NULL;
	unsigned ifx;
	struct stat st;
	bool tcx;
	int links, rc = optab_parse(c, argc, argv, optab_str, &dev, NULL);

	if (rc)
		return OPTAB_STATUS(rc);
	if (!dev)
		return fail(EXIT_USAGE, "%s: --dev DEV is required", c->path + 6);
	ifx = if_nametoindex(dev);
	if (!ifx)
		return fail(UB_EXIT_NOTFOUND, "unknown device '%s'", dev);
	if (c == &boundary_detach_cmd) {
		if ((rc = boundary_dir(dev, true, dir, sizeof(dir))))
			return rc;
		/* The links; else the clsact filters of a kernel without tcx, or of an older ubctl. */
		if (link_detach_pinned(dir, &links))
			return fail(UB_EXIT_KERNEL, "link detach on %s failed; pins kept", dev);
		rc = links ? 0 : tc_one(ifx, BPF_TC_INGRESS, -1);
		if (rc && rc != -ENOENT)
			return fail(UB_EXIT_KERNEL, "TC detach on %s ingress: %s; pins kept", dev, strerror(-rc));
		rc = links ? 0 : tc_one(ifx, BPF_TC_EGRESS, -1);
		if (rc && rc != -ENOENT)
			return fail(UB_EXIT_KERNEL, "TC detach on %s egress: %s; pins kept", dev, strerror(-rc));
		pin_remove_dir(dir);
		printf("wps boundary detached from %s\n", dev);
		return 0;
	}
	if ((rc = boundary_dir(dev, false, dir, sizeof(dir))))
		return rc;
	if (!stat(dir, &st))
		return fail(UB_EXIT_CONFLICT, "a WPS boundary filter is already on %s: detach it first", dev);
	skel = wps_boundary__open_and_load();
	if (!skel)
		return fail(UB_EXIT_KERNEL, "loading the boundary filter failed: %s (run with -v)", strerror(errno));
	rc = EXIT_FAIL;
	if (pin_mkdir_p(dir)) {
		fail(EXIT_FAIL, "cannot create %s: %s", dir, strerror(errno));
		goto out;
	}
	snprintf(p, sizeof(p), "%s/%s", dir, WPS_PIN_STATS);
	if (bpf_map__pin(skel->maps.wps_bnd_stats, p))
		goto pinerr;
	snprintf(p, sizeof(p), "%s/%s", dir, WPS_PIN_PROG_IN);
	if (bpf_program__pin(skel->progs.wps_boundary_in, p))
		goto pinerr;
	snprintf(p, sizeof(p), "%s/%s", dir, WPS_PIN_PROG_OUT);
	if (bpf_program__pin(skel->progs.wps_boundary_out, p))
		goto pinerr;
	/* tcx links pinned beside the programs where the kernel has tcx, else clsact filters. */
	rc = link_tcx_pinned(bpf_program__fd(skel->progs.wps_boundary_in), ifx, false, NULL, dir, WPS_PIN_LINK_IN);
	tcx = rc != -EOPNOTSUPP;
	if (!tcx)
		rc = tc_one(ifx, BPF_TC_INGRESS, bpf_program__fd(skel->progs.wps_boundary_in));
	if (rc) {
		rc = fail(UB_EXIT_KERNEL, "TC attach on %s ingress: %s", dev, strerror(-rc));
		goto unpin;
	}
	rc = tcx ? link_tcx_pinned(bpf_program__fd(skel->progs.wps_boundary_out), ifx, true, NULL, dir, WPS_PIN_LINK_OUT) :
		   tc_one(ifx, BPF_TC_EGRESS, bpf_program__fd(skel->progs.wps_boundary_out));
	if (rc) {
		if (!tcx)
			tc_one(ifx, BPF_TC_INGRESS, -1);
		rc = fail(UB_EXIT_KERNEL, "TC attach on %s egress: %s", dev, strerror(-rc));
		goto unpin;
	}
	printf("wps boundary attached: %s (in and out) by %s, pinned at %s\n", dev, LINK_TC_WAY(tcx), pin_display(dir));
	rc = 0;
	goto out;
pinerr:
	fail(EXIT_FAIL, "pin %s: %s", p, strerror(errno));
unpin:
	link_detach_pinned(dir, NULL);
	pin_remove_dir(dir);
out:
	wps_boundary__destroy(skel);
	return rc;
}

static int boundary_attach(int argc, char **argv)
{
	return boundary(&boundary_attach_cmd, argc, argv);
}

static int boundary_detach(int argc, char **argv)
{
	return boundary(&boundary_detach_cmd, argc, argv);
}

/* ---- stats --------------------------------------------------------------------- */

static int pin_fd(const char *base, const char *inst, const char *file)
{
	char p[PATH_MAX + 600];

	snprintf(p, sizeof(p), "%s/%s/%s", base, inst, file);
	return bpf_obj_get(p);
}

/* A flow key's address as text: IPv4 ones are kept IPv4-mapped. */
static void flow_addr(const struct wps_in_flow_key *k, const __u8 *a, char *out, size_t len)
{
	static const __u8 mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (k->family == AF_INET || !memcmp(a, mapped, sizeof(mapped)))
		inet_ntop(AF_INET, a + 12, out, (socklen_t)len);
	else
		inet_ntop(AF_INET6, a, out, (socklen_t)len);
}

/* Each flow of an ingress instance (flows: key -> slot; flow_hot, flow_state at the slot). */
static void flows_show(int fd, int hfd, int sfd, struct json_object *arr)
{
	struct wps_in_flow_key k, next, *prev = NULL;
	struct wps_in_flow_ref ref;
	struct wps_in_flow_hot h;
	struct wps_in_flow f;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		char src[INET6_ADDRSTRLEN + 8], dst[INET6_ADDRSTRLEN + 8];
		unsigned long long packets;

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &ref) || bpf_map_lookup_elem(hfd, &ref.slot, &h) ||
		    bpf_map_lookup_elem(sfd, &ref.slot, &f))
			continue;
		packets = wps_flow_packets(&h, &f);
		f.fid = WPS_GS_FID(h.gs);
		f.gid = WPS_GS_GID(h.gs);
		flow_addr(&k, k.saddr, src, sizeof(src));
		flow_addr(&k, k.daddr, dst, sizeof(dst));
		if (arr) {
			struct json_object *o = json_object_new_object();

			json_add_u64(o, "flow_id", f.fid);
			json_add_u64(o, "group_id", f.gid);
			json_add_str(o, "src", src);
			json_add_str(o, "dst", dst);
			json_add_u64(o, "proto", k.proto);
			json_add_u64(o, "sport", ntohs(k.sport));
			json_add_u64(o, "dport", ntohs(k.dport));
			json_add_u64(o, "packets", packets);
			json_add_u64(o, "bytes", h.bytes);
			json_add_u64(o, "groups", f.groups);
			json_add_u64(o, "groups_extended", f.extended);
			json_object_array_add(arr, o);
		} else {
			bool v6 = strchr(src, ':') != NULL;

			printf("  flow %-5u proto %-3u %s%s%s:%u -> %s%s%s:%u  packets %llu bytes %llu groups %llu "
			       "extended %llu (group now %u)\n", f.fid, k.proto, v6 ? "[" : "", src, v6 ? "]" : "",
			       ntohs(k.sport), v6 ? "[" : "", dst, v6 ? "]" : "", ntohs(k.dport),
			       packets, (unsigned long long)h.bytes,
			       (unsigned long long)f.groups, (unsigned long long)f.extended, f.gid);
		}
	}
}

/* One path's per-CPU counters summed, shown as text or added to arr. */
static void path_show(int fd, __u32 key, const char *what, __u32 id, const struct wps_in_path *p,
		      const char *state, struct wps_in_path_stats *ps, int ncpu, struct json_object *arr)
{
	unsigned long long pk = 0, by = 0, gr = 0;
	char name[IF_NAMESIZE];
	unsigned ifindex = p ? p->ifindex : key;

	if (bpf_map_lookup_elem(fd, &key, ps))
		return;
	for (int c = 0; c < ncpu; c++) {
		pk += ps[c].packets;
		by += ps[c].bytes;
		gr += ps[c].groups;
	}
	if (!if_indextoname(ifindex, name))
		snprintf(name, sizeof(name), "ifindex %u", ifindex);
	if (arr) {
		struct json_object *o = json_object_new_object();

		json_add_u64(o, what, id);
		json_add_str(o, "via", name);
		json_add_u64(o, "ifindex", ifindex);
		json_add_u64(o, "packets", pk);
		json_add_u64(o, "bytes", by);
		json_add_u64(o, "groups", gr);
		if (state)
			json_add_str(o, "state", state);
		json_object_array_add(arr, o);
	} else {
		printf("  %s %-2u via %-16s packets %llu bytes %llu groups %llu%s%s\n", what, id, name, pk, by, gr,
		       state ? " " : "", state ? state : "");
	}
}

/*
 * Per-path counters of an ingress instance. Explicit paths: per path slot
 * (its number in path list), with the device it leaves by. ECMP: per egress
 * device the kernel's multipath route chose for the groups' flow labels.
 */
static void paths_show(const char *base, const char *name, const struct wps_in_cfg *cfg, struct json_object *arr)
{
	int ncpu = libbpf_num_possible_cpus();
	struct wps_in_path_stats *ps = calloc((size_t)(ncpu > 0 ? ncpu : 1), sizeof(*ps));
	int sfd = pin_fd(base, name, cfg->ecmp ? WPS_PIN_ECMP_STATS : WPS_PIN_PATH_STATS);
	int pfd = pin_fd(base, name, WPS_PIN_PATHS), lfd = pin_fd(base, name, WPS_PIN_LIVE);
	struct wps_in_live lv = {};
	__u32 zero = 0;

	if (lfd >= 0)
		bpf_map_lookup_elem(lfd, &zero, &lv);
	if (ps && sfd >= 0 && cfg->ecmp) {
		__u32 k, *prev = NULL;

		while (!bpf_map_get_next_key(sfd, prev, &k)) {
			path_show(sfd, k, "ecmp_dev", k, NULL, NULL, ps, ncpu, arr);
			prev = &k;
		}
	}
	for (__u32 i = 0; ps && sfd >= 0 && pfd >= 0 && !cfg->ecmp && i < cfg->npaths && i < WPS_IN_MAX_PATHS; i++) {
		__u32 slot = cfg->path_slot[i];
		struct wps_in_path p = {};
		char state[40];

		bpf_map_lookup_elem(pfd, &slot, &p);
		wps_path_state(&lv, slot, state, sizeof(state));
		path_show(sfd, slot, "path", slot, &p, state, ps, ncpu, arr);
	}
	free(ps);
	for (int *x = (int[]){ sfd, pfd, lfd, -2 }; *x != -2; x++)
		if (*x >= 0)
			close(*x);
}

/* Paths and flows of one ingress instance. */
static void ingress_detail(const char *base, const char *name, struct json_object *inst)
{
	int cfd = pin_fd(base, name, WPS_PIN_CFG), ffd = pin_fd(base, name, WPS_PIN_FLOWS);
	int hfd = pin_fd(base, name, WPS_PIN_FLOW_HOT), sfd = pin_fd(base, name, WPS_PIN_FLOW_STATE);
	struct json_object *paths = inst ? json_object_new_array() : NULL;
	struct json_object *flows = inst ? json_object_new_array() : NULL;
	struct wps_in_cfg cfg = {};
	__u32 zero = 0;

	if (cfd >= 0 && !bpf_map_lookup_elem(cfd, &zero, &cfg)) {
		if (cfg.version == WPS_IN_CFG_VERSION)
			paths_show(base, name, &cfg, paths);
		else if (!inst)
			printf("  paths: not shown, attached by another ubctl (cfg layout %u, this one reads %u)\n",
			       cfg.version, WPS_IN_CFG_VERSION);
	}
	if (ffd >= 0 && hfd >= 0 && sfd >= 0 && cfg.version == WPS_IN_CFG_VERSION)
		flows_show(ffd, hfd, sfd, flows);
	if (inst) {
		json_object_object_add(inst, "paths", paths);
		json_object_object_add(inst, "flows", flows);
	}
	for (int *x = (int[]){ cfd, ffd, hfd, sfd, -2 }; *x != -2; x++)
		if (*x >= 0)
			close(*x);
}

/* UBCTL_STATS hook: WPS ingress and boundary instances, as text or under out. */
int wps_stats(struct json_object *out, const char *only)
{
	char (*names)[256] = NULL, base[PATH_MAX], err[256];
	int shown = 0;

	for (int role = 0; role < 2; role++) {
		const char *r = role ? WPS_ROLE_BOUNDARY : WPS_ROLE_INGRESS;
		unsigned ncnt = role ? WPS_BND_CNT__MAX : WPS_IN_CNT__MAX;
		struct json_object *arr = out ? json_object_new_array() : NULL;
		__u64 cnt[64];
		int n;

		if (pin_role_dir(r, base, sizeof(base), err, sizeof(err))) {
			json_object_put(arr);
			continue;
		}
		n = pin_list_instances(r, &names);
		for (int i = 0; i < n; i++) {
			struct json_object *inst = NULL, *counters = NULL;
			int fd;

			if (only && strcmp(only, names[i]))
				continue;
			fd = pin_fd(base, names[i], WPS_PIN_STATS);
			if (fd < 0 || percpu_counters_sum(fd, ncnt, cnt)) {
				if (fd >= 0)
					close(fd);
				continue;
			}
			close(fd);
			if (out) {
				inst = json_object_new_object();
				counters = json_object_new_object();
				json_add_str(inst, "instance", names[i]);
				json_object_object_add(inst, "counters", counters);
				json_object_array_add(arr, inst);
			} else {
				printf("%s %s\n", role ? "wps boundary" : "wps ingress", names[i]);
			}
			for (unsigned c = 0; c < ncnt; c++) {
				const char *cn = role ? wps_bnd_counter_name(c) : wps_in_counter_name(c);

				if (counters)
					json_add_u64(counters, cn, cnt[c]);
				else
					printf("  %-28s %llu\n", cn, (unsigned long long)cnt[c]);
			}
			if (!role)
				ingress_detail(base, names[i], inst);
			shown++;
		}
		free(names);
		names = NULL;
		if (out)
			json_object_object_add(out, role ? "wps_boundary" : "wps_ingress", arr);
	}
	return shown;
}
