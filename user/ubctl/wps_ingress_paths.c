// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl wps ingress path add|del|set|list: the member paths of an instance,
 * each in a slot of the paths, path_stats and path_load maps, made visible
 * to the program by cfg (the list of slots in use, their weights, the path
 * MTU) and taken out of rotation through the live map's down bits.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/neighbour.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "io/nl.h"
#include "wps/wps_cfg.h"
#include "wps/wps_live.h"
#include "ubctl/wps_ingress_int.h"

static int path_add(int argc, char **argv);
static int path_del(int argc, char **argv);
static int path_set(int argc, char **argv);
static int path_list(int argc, char **argv);

#define PATH_WHICH \
	{ "dev", "DEV", "the instance's port (required)", 'd', 0 }, \
	{ "via", "DEV2", "the device the path leaves by (required)", 'v', 0 }, \
	{ "nexthop-mac", "MAC", "the next hop's MAC address", 'm', 0 }, \
	{ "nexthop", "ADDR", "the next hop's IPv4 or IPv6 address: its MAC from the kernel's\n" \
	  "neighbour table (followed while wps ingress watch runs)", 'n', 0 }

static const struct optab path_add_opts[] = {
	PATH_WHICH,
	{ "weight", "W", "its weight for the weighted scheduler, 1..255 (default 1)", 'w', 0 },
	{ "mtu", "M", "its MTU, 1280..65535 (default: DEV2's)", 'M', 0 },
	{ 0 },
}, path_which_opts[] = {
	PATH_WHICH,
	{ 0 },
}, path_set_opts[] = {
	PATH_WHICH,
	{ "weight", "W", "its new weight for the weighted scheduler, 1..255", 'w', 0 },
	{ 0 },
};

static const struct optab_cmd path_cmd_grp = {
	.path = "ubctl wps ingress path",
	.summary = "the member paths groups are sprayed over",
	.about = "A path gets the lowest free slot (0-15), its identity: the key of its entries\n"
		 "in the paths, path_stats and path_load maps and the index of its weight.\n"
		 "Deleting a path never moves another; a group still open on it ends there.",
}, path_add_cmd = {
	.path = "ubctl wps ingress path add",
	.summary = "add a member path",
	.synopsis = "--dev DEV --via DEV2 (--nexthop-mac MAC | --nexthop ADDR) [--weight W] [--mtu M]",
	.opts = path_add_opts,
	.run = path_add,
}, path_del_cmd = {
	.path = "ubctl wps ingress path del",
	.summary = "delete a member path",
	.synopsis = "--dev DEV --via DEV2 [--nexthop-mac MAC | --nexthop ADDR]",
	.opts = path_which_opts,
	.run = path_del,
}, path_set_cmd = {
	.path = "ubctl wps ingress path set",
	.summary = "take a path out of rotation (down), put it back (up), change its weight",
	.synopsis = "--dev DEV --via DEV2 [--nexthop-mac MAC | --nexthop ADDR] [--weight W] [up|down]",
	.about = "down: no group starts on the path; one open on it ends. up puts it back.\n"
		 "--weight W: its share under --sched weighted from the next group on. Both are\n"
		 "checked before either is written.",
	.opts = path_set_opts,
	.flags = OPTAB_ARGS,
	.run = path_set,
}, path_list_cmd = {
	.path = "ubctl wps ingress path list",
	.summary = "the paths, their state and counters",
	.synopsis = "--dev DEV",
	.opts = wps_in_dev_opts,
	.run = path_list,
};

const struct optab_cmd *const wps_ingress_path_cmds[] = {
	&path_cmd_grp, &path_add_cmd, &path_del_cmd, &path_set_cmd, &path_list_cmd, NULL,
};

static void recompute_mtu(struct wps_in_inst *in)
{
	__u16 m = 0;

	for (__u32 i = 0; i < in->cfg.npaths; i++) {
		__u32 k = in->cfg.path_slot[i];
		struct wps_in_path p;

		if (!bpf_map_lookup_elem(in->paths_fd, &k, &p) && (!m || p.mtu < m))
			m = p.mtu;
	}
	if (!in->cfg.ecmp)
		in->cfg.path_mtu = m;
}

/* Zero a slot's entries in paths, path_stats and path_load. */
static int path_clear(const struct wps_in_inst *in, __u32 k)
{
	struct wps_in_path zp = {};
	struct wps_in_path_load zl = {};
	int ncpu = libbpf_num_possible_cpus(), rc;
	void *zs = calloc((size_t)(ncpu > 0 ? ncpu : 1), sizeof(struct wps_in_path_stats));

	if (!zs)
		return -1;
	rc = bpf_map_update_elem(in->paths_fd, &k, &zp, BPF_ANY) ||
	     bpf_map_update_elem(in->pstats_fd, &k, zs, BPF_ANY) ||
	     bpf_map_update_elem(in->pload_fd, &k, &zl, BPF_ANY);
	free(zs);
	return rc ? -1 : 0;
}

/*
 * The slot of the path in use via ifindex (to the static next hop dmac, or
 * to the next hop at address nh, when given); -1 if none.
 */
static int path_find(const struct wps_in_inst *in, unsigned ifindex, const __u8 *dmac, const __u8 *nh)
{
	for (__u32 i = 0; i < in->cfg.npaths; i++) {
		__u32 k = in->cfg.path_slot[i];
		struct wps_in_path p;

		if (bpf_map_lookup_elem(in->paths_fd, &k, &p) || p.ifindex != ifindex)
			continue;
		if (dmac && ((p.flags & WPS_PATH_F_NEXTHOP) || memcmp(p.dmac, dmac, 6)))
			continue;
		if (nh && (!(p.flags & WPS_PATH_F_NEXTHOP) || memcmp(p.nexthop, nh, 16)))
			continue;
		return (int)k;
	}
	return -1;
}

/* An IPv4 or IPv6 next-hop address: IPv4 in the last 4 bytes. */
static int parse_nexthop(const char *s, __u8 addr[16], __u8 *family)
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr + 12) == 1) {
		*family = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*family = 6;
		return 0;
	}
	return -1;
}

/*
 * The next hop of a new path from the kernel's neighbour table: its MAC if
 * the kernel has it, else resolution asked and waited for, at most 1 s.
 * False: not resolved (the path starts down; watch brings it up).
 */
static bool nexthop_resolve(struct wps_in_path *p)
{
	char err[256];
	struct nl *rt = nl_open_route(err, sizeof(err));
	bool ok = false;

	if (!rt)
		return false;
	for (int n = 0; n < 20 && !ok; n++) {
		struct wps_nh_seen s;

		if (wps_neigh_get(rt, p->nh_family, p->ifindex, p->nexthop, &s))
			break;
		ok = wps_nh_alive(&s, 0, UINT32_MAX, WPS_NH_NOT_ASKED);	/* a valid entry with an address */
		if (ok)
			memcpy(p->dmac, s.lladdr, 6);
		else {
			if (!n || (s.present && (s.state & NUD_FAILED)))
				wps_neigh_ask(rt, p->nh_family, p->ifindex, p->nexthop, WPS_NH_RESOLVE);
			usleep(50000);
		}
	}
	nl_close(rt);
	return ok;
}

struct path_args {
	const char *dev, *via, *mac, *nhs;
	unsigned long long weight, mtu;
	bool weight_set;
};

static int path_opt(void *ctx, const struct optab *o, const char *v)
{
	struct path_args *a = ctx;
	char err[256];

	switch (o->key) {
	case 'd': a->dev = v; break;
	case 'v': a->via = v; break;
	case 'm': a->mac = v; break;
	case 'n': a->nhs = v; break;
	case 'w':
		if (wps_parse_uint(v, 1, 255, &a->weight, "--weight", err, sizeof(err)))
			return fail(EXIT_USAGE, "%s", err);
		a->weight_set = true;
		break;
	default:
		if (wps_parse_uint(v, 1280, 65535, &a->mtu, "--mtu", err, sizeof(err)))
			return fail(EXIT_USAGE, "%s", err);
	}
	return 0;
}

static int path_cmd(const struct optab_cmd *c, int argc, char **argv)
{
	const char *verb = strrchr(c->path, ' ') + 1, *dev, *via, *mac, *nhs, *updown = NULL;
	struct path_args args = { .weight = 1 };
	unsigned long long weight, mtu;
	struct wps_in_path np = {};
	__u8 nh[16], nh_family = 0, dmac[6];
	bool resolved = true;
	struct wps_in_inst in;
	int found;
	char err[256];
	__u32 zero = 0;
	int nargs, rc = optab_parse(c, argc, argv, path_opt, &args, &nargs);

	if (rc)
		return OPTAB_STATUS(rc);
	dev = args.dev;
	via = args.via;
	mac = args.mac;
	nhs = args.nhs;
	weight = args.weight;
	mtu = args.mtu;
	rc = EXIT_FAIL;
	if (c == &path_set_cmd) {
		if (nargs > 1 || (nargs == 1 && strcmp(argv[1], "up") && strcmp(argv[1], "down")) ||
		    (!nargs && !args.weight_set))
			return fail(EXIT_USAGE, "wps ingress path set: up, down or --weight W?");
		updown = nargs ? argv[1] : NULL;
	}
	if (!dev)
		return fail(EXIT_USAGE, "wps ingress path %s: --dev DEV is required", verb);
	if (strcmp(verb, "list") && !via)
		return fail(EXIT_USAGE, "wps ingress path %s: --via DEV is required", verb);
	if (mac && nhs)
		return fail(EXIT_USAGE, "wps ingress path %s: --nexthop-mac or --nexthop, not both", verb);
	if (mac && wps_parse_mac(mac, dmac, err, sizeof(err)))
		return fail(EXIT_USAGE, "%s", err);
	if (nhs && parse_nexthop(nhs, nh, &nh_family))
		return fail(EXIT_USAGE, "--nexthop: '%s' is not an IPv4 or IPv6 address", nhs);
	if (!strcmp(verb, "add")) {
		unsigned m;

		if (!mac && !nhs)
			return fail(EXIT_USAGE, "wps ingress path add: --nexthop-mac MAC or --nexthop ADDR is required");
		np.ifindex = if_nametoindex(via);
		if (!np.ifindex)
			return fail(UB_EXIT_NOTFOUND, "unknown device '%s'", via);
		if (wps_dev_info(via, np.smac, &m))
			return fail(EXIT_FAIL, "cannot read %s: %s", via, strerror(errno));
		np.mtu = (__u16)(mtu ? mtu : m);
		if (mac)
			memcpy(np.dmac, dmac, 6);
		else {
			np.flags = WPS_PATH_F_NEXTHOP;
			np.nh_family = nh_family;
			memcpy(np.nexthop, nh, 16);
		}
	}
	if ((rc = wps_in_inst_open(dev, &in)))
		goto out;
	if (in.cfg.ecmp && strcmp(verb, "list")) {
		rc = fail(EXIT_USAGE, "%s runs in ECMP mode: the kernel's routes are the paths", dev);
		goto out;
	}
	if (!strcmp(verb, "list")) {
		int ncpu = libbpf_num_possible_cpus();
		struct wps_in_path_stats *ps = calloc((size_t)ncpu, sizeof(*ps));

		printf("%-4s %-16s %-17s %-6s %-6s %-16s %12s %14s %10s\n", "slot", "via", "nexthop", "weight", "mtu",
		       "state", "packets", "bytes", "groups");
		for (__u32 i = 0; ps && !in.cfg.ecmp && i < in.cfg.npaths; i++) {
			__u32 k = in.cfg.path_slot[i];
			struct wps_in_path p = {};
			char name[IF_NAMESIZE], state[40], nhop[80];
			unsigned long long pk = 0, by = 0, gr = 0;

			if (bpf_map_lookup_elem(in.paths_fd, &k, &p) || !if_indextoname(p.ifindex, name))
				snprintf(name, sizeof(name), "ifindex %u", p.ifindex);
			if (!bpf_map_lookup_elem(in.pstats_fd, &k, ps))
				for (int c = 0; c < ncpu; c++) {
					pk += ps[c].packets;
					by += ps[c].bytes;
					gr += ps[c].groups;
				}
			wps_path_state(in.live, k, state, sizeof(state));
			wps_path_nexthop(&p, nhop, sizeof(nhop));
			/* What Packet Too Big taught the watch agent, if less. */
			if (in.live->slot_pmtu[k] && in.live->slot_pmtu[k] < p.mtu)
				p.mtu = in.live->slot_pmtu[k];
			printf("%-4u %-16s %-17s %-6u %-6u %-16s %12llu %14llu %10llu\n", k, name, nhop, in.cfg.weight[k],
			       p.mtu, state, pk, by, gr);
		}
		if (in.cfg.ecmp)
			printf("(ECMP over %u next hops: per-device counters in ubctl stats)\n", in.cfg.ecmp);
		free(ps);
		rc = 0;
		goto out;
	}
	if (!strcmp(verb, "add")) {
		struct wps_in_path_load zl = {};
		int ncpu = libbpf_num_possible_cpus();
		void *zs = calloc((size_t)(ncpu > 0 ? ncpu : 1), sizeof(struct wps_in_path_stats));
		__u32 k;

		if (path_find(&in, np.ifindex, mac ? np.dmac : NULL, nhs ? nh : NULL) >= 0) {
			free(zs);
			rc = fail(UB_EXIT_CONFLICT, "path via %s to %s exists already", via, mac ? mac : nhs);
			goto out;
		}
		if (in.cfg.npaths >= WPS_IN_MAX_PATHS) {
			free(zs);
			rc = fail(UB_EXIT_CONFLICT, "%d paths already: the most a WPS ingress has", WPS_IN_MAX_PATHS);
			goto out;
		}
		/* The lowest slot not in use; a slot freed by path del starts its counters afresh. */
		for (k = 0; k < WPS_IN_MAX_PATHS; k++) {
			bool used = false;

			for (__u32 i = 0; i < in.cfg.npaths; i++)
				used |= in.cfg.path_slot[i] == k;
			if (!used)
				break;
		}
		if (nhs)
			resolved = nexthop_resolve(&np);
		/* The path first, then the cfg that makes it visible. */
		if (!zs || bpf_map_update_elem(in.pstats_fd, &k, zs, BPF_ANY) ||
		    bpf_map_update_elem(in.pload_fd, &k, &zl, BPF_ANY) ||
		    bpf_map_update_elem(in.paths_fd, &k, &np, BPF_ANY)) {
			free(zs);
			rc = fail(EXIT_FAIL, "writing path: %s", strerror(errno));
			goto out;
		}
		free(zs);
		in.cfg.weight[k] = (__u8)weight;
		in.cfg.path_slot[in.cfg.npaths++] = (__u8)k;
		wps_in_cfg_sync_paths(&in.cfg);
		wps_live_slot_reset(in.live, k);
		if (!resolved)	/* down until its next hop answers (watch keeps the bit from now on) */
			__atomic_fetch_or(&in.live->neigh_down, 1u << k, __ATOMIC_SEQ_CST);
		recompute_mtu(&in);
		if (bpf_map_update_elem(in.cfg_fd, &zero, &in.cfg, BPF_ANY)) {
			rc = fail(EXIT_FAIL, "writing cfg: %s", strerror(errno));
			goto out;
		}
		if (nhs)
			printf("path %u: %s -> %s at %02x:%02x:%02x:%02x:%02x:%02x (mtu %u, weight %llu)%s\n", k, via,
			       nhs, np.dmac[0], np.dmac[1], np.dmac[2], np.dmac[3], np.dmac[4], np.dmac[5], np.mtu, weight,
			       resolved ? "" : ": not resolved, down until it answers (ubctl wps ingress watch)");
		else
			printf("path %u: %s -> %s (mtu %u, weight %llu)\n", k, via, mac, np.mtu, weight);
		rc = 0;
		goto out;
	}
	/* set and del (add and list are done): the path named must be there. */
	found = path_find(&in, if_nametoindex(via), mac ? dmac : NULL, nhs ? nh : NULL);
	if (found < 0) {
		rc = fail(UB_EXIT_NOTFOUND, "no path via %s%s%s", via, mac || nhs ? " to " : "", mac ? mac : nhs ? nhs : "");
		goto out;
	}
	if (!strcmp(verb, "set")) {
		if (args.weight_set) {
			in.cfg.weight[found] = (__u8)weight;
			if (bpf_map_update_elem(in.cfg_fd, &zero, &in.cfg, BPF_ANY)) {
				rc = fail(EXIT_FAIL, "writing cfg: %s", strerror(errno));
				goto out;
			}
			printf("path %d via %s: weight %llu\n", found, via, weight);
		}
		if (!updown) {
			rc = 0;
			goto out;
		}
		/* In place, this bit alone: the watch agent writes its own words beside it. */
		if (updown[0] == 'd')
			__atomic_fetch_or(&in.live->admin_down, 1u << found, __ATOMIC_SEQ_CST);
		else
			__atomic_fetch_and(&in.live->admin_down, ~(1u << found), __ATOMIC_SEQ_CST);
		printf("path %d via %s: %s by the operator\n", found, via, updown[0] == 'd' ? "down" : "up");
		rc = 0;
		goto out;
	}
	if (!strcmp(verb, "del")) {
		if (in.cfg.npaths == 1) {
			struct wps_in_rule r0 = {};
			__u32 z = 0;

			if (!bpf_map_lookup_elem(in.rules_fd, &z, &r0) && r0.used) {
				rc = fail(UB_EXIT_CONFLICT, "refusing to remove the last path while rules spray onto it "
					  "(rule del them first)");
				goto out;
			}
		}
		/*
		 * Out of the list of paths in use first (no group opens on it
		 * from then on; the others keep their slots), then its slot
		 * cleared: its entries in paths, path_stats and path_load zeroed
		 * (array maps have no holes), its weight back to 1, its down bits
		 * cleared. A group still open on it ends there; the flow's next
		 * packet opens a new group on a path in use (groups_closed_path_down).
		 */
		for (__u32 i = 0, j = 0; i < in.cfg.npaths; i++)
			if (in.cfg.path_slot[i] != found)
				in.cfg.path_slot[j++] = in.cfg.path_slot[i];
		in.cfg.npaths--;
		in.cfg.weight[found] = 1;
		wps_in_cfg_sync_paths(&in.cfg);
		recompute_mtu(&in);
		if (bpf_map_update_elem(in.cfg_fd, &zero, &in.cfg, BPF_ANY)) {
			rc = fail(EXIT_FAIL, "writing cfg: %s", strerror(errno));
			goto out;
		}
		wps_live_slot_reset(in.live, (__u32)found);
		if (path_clear(&in, (__u32)found)) {
			rc = fail(EXIT_FAIL, "path %d is out of use but its entries are not cleared: %s", found,
				  strerror(errno));
			goto out;
		}
		printf("path %d via %s removed; %u left\n", found, via, in.cfg.npaths);
		rc = 0;
		goto out;
	}
	rc = fail(EXIT_USAGE, "wps ingress path: add, del, set or list");
out:
	wps_in_inst_close(&in);
	return rc;
}

static int path_add(int argc, char **argv) { return path_cmd(&path_add_cmd, argc, argv); }
static int path_del(int argc, char **argv) { return path_cmd(&path_del_cmd, argc, argv); }
static int path_set(int argc, char **argv) { return path_cmd(&path_set_cmd, argc, argv); }
static int path_list(int argc, char **argv) { return path_cmd(&path_list_cmd, argc, argv); }
