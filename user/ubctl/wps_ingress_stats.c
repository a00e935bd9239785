// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl stats of a WPS ingress instance beyond its counters (which
 * role_stats shows): per path (explicit paths: per slot, with the device it
 * leaves by; ECMP: per egress device) and per flow, named by its 5-tuple.
 */
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "wps/wps_cfg.h"
#include "wps/wps_pins.h"
#include "ubctl/wps_ingress_int.h"

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
static void paths_show(const char *dir, const struct wps_in_cfg *cfg, struct json_object *arr)
{
	int ncpu = libbpf_num_possible_cpus();
	struct wps_in_path_stats *ps = calloc((size_t)(ncpu > 0 ? ncpu : 1), sizeof(*ps));
	int sfd = pin_open(dir, cfg->ecmp ? WPS_PIN_ECMP_STATS : WPS_PIN_PATH_STATS);
	int pfd = pin_open(dir, WPS_PIN_PATHS), lfd = pin_open(dir, WPS_PIN_LIVE);
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

/* The role's stats_more: after an instance's counters, its paths and flows. */
void wps_ingress_stats_more(const char *dir, struct json_object *inst)
{
	int cfd = pin_open(dir, WPS_PIN_CFG), ffd = pin_open(dir, WPS_PIN_FLOWS);
	int hfd = pin_open(dir, WPS_PIN_FLOW_HOT), sfd = pin_open(dir, WPS_PIN_FLOW_STATE);
	struct json_object *paths = inst ? json_object_new_array() : NULL;
	struct json_object *flows = inst ? json_object_new_array() : NULL;
	struct wps_in_cfg cfg = {};
	__u32 zero = 0;

	if (cfd >= 0 && !bpf_map_lookup_elem(cfd, &zero, &cfg)) {
		if (cfg.version == WPS_IN_CFG_VERSION)
			paths_show(dir, &cfg, paths);
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
