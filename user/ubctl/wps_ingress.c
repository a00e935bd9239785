// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl wps ingress: attach the WPS ingress to DEV's TC egress and detach
 * it; an instance opened for the commands that edit its member paths
 * (wps_ingress_paths.c) and classification rules (wps_ingress_rules.c)
 * through the pinned maps.
 *
 * attach also sets DEV up for "one packet on the wire per flag": a
 * segmentation detour (veth wpsgN -> wpsgNp, GSO off on wpsgN) that the GSO
 * skbs of sprayed flows take; the detour's receiving end runs
 * wps_ingress_seg, one flow on one CPU at a time (RPS). DEV keeps its
 * offloads for the traffic no rule sprays (--offloads-off: TSO, GSO and GRO
 * off on DEV, put back at detach).
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "wps_ingress.skel.h"
#include "lib/conf.h"
#include "wps/wps_cfg.h"
#include "wps/wps_pins.h"
#include "ubctl/wps_ingress_int.h"

int wps_ingress_dir(const char *dev, char *out, size_t len)
{
	return pin_dev_instance_dir(WPS_ROLE_INGRESS, dev, true, out, len);
}

int wps_in_open_pin(const char *dir, const char *file)
{
	int fd = pin_open(dir, file);

	if (fd < 0)
		fail(EXIT_FAIL, "cannot open %s/%s: %s", pin_display(dir), file, strerror(errno));
	return fd;
}

/* ---- attach / detach --------------------------------------------------------- */

const struct ubctl_role wps_ingress_role = {
	.name = "wps ingress",
	.key = "wps_ingress",
	.pin_dir = WPS_ROLE_INGRESS,
	.pins = (const struct role_pin[]){
#define M(f, m) ROLE_MAP(wps_ingress, f, m)
		M(WPS_PIN_CFG, wps_in_cfg), M(WPS_PIN_RULES, wps_in_rules), M(WPS_PIN_PATHS, wps_in_paths),
		M(WPS_PIN_PATH_STATS, wps_in_path_stats), M(WPS_PIN_PATH_LOAD, wps_in_path_load),
		M(WPS_PIN_FLOWS, wps_in_flows), M(WPS_PIN_FLOW_HOT, wps_in_flow_hot),
		M(WPS_PIN_FLOW_STATE, wps_in_flow_state), M(WPS_PIN_FLOW_CACHE, wps_in_flow_cache),
		M(WPS_PIN_FID_STATE, wps_in_fid_state), M(WPS_PIN_STATS, wps_in_stats),
		M(WPS_PIN_ECMP_STATS, wps_in_ecmp_stats), M(WPS_PIN_LIVE, wps_in_live), M(WPS_PIN_PORTS, wps_in_ports),
#undef M
		ROLE_PROG(wps_ingress, WPS_PIN_PROG, wps_ingress),
		ROLE_PROG(wps_ingress, WPS_PIN_PROG_SEG, wps_ingress_seg),
		{ 0 },
	},
	/* On DEV's egress; the detour's ingress filter goes with the detour. */
	.tc = { WPS_TC_HANDLE, WPS_TC_PRIO_INGRESS, false, true },
	.stats_pin = WPS_PIN_STATS,
	.ncounters = WPS_IN_CNT__MAX,
	.counter_name = wps_in_counter_name,
	.stats_more = wps_ingress_stats_more,
};

/*
 * --ingress-port IF=ID[,IF=ID...]: the Ingress Port ID of packets that came
 * in on IF, into ports[] (entries by ifindex & 255; two interfaces there, or
 * one named twice, are refused).
 */
static int port_map_parse(const char *arg, struct wps_in_port *ports, int *n, char *err, size_t errlen)
{
	char buf[512], *save, *tok;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		unsigned long long id;
		unsigned ifindex;

		if (!eq)
			return snprintf(err, errlen, "--ingress-port: '%s' is not IF=ID", tok), EXIT_USAGE;
		*eq = '\0';
		ifindex = if_nametoindex(tok);
		if (!ifindex)
			return snprintf(err, errlen, "--ingress-port: unknown device '%s'", tok), UB_EXIT_NOTFOUND;
		if (wps_parse_uint(eq + 1, 0, 255, &id, "--ingress-port ID", err, errlen))
			return EXIT_USAGE;
		if (ports[ifindex % WPS_IN_PORTS].ifindex)
			return snprintf(err, errlen, "--ingress-port %s: ifindex %u shares its entry with ifindex %u (entries "
				 "by ifindex mod %d)", tok, ifindex, ports[ifindex % WPS_IN_PORTS].ifindex, WPS_IN_PORTS),
			       EXIT_USAGE;
		ports[ifindex % WPS_IN_PORTS] = (struct wps_in_port){ .ifindex = ifindex, .id = (__u8)id };
		(*n)++;
	}
	return 0;
}

enum { WI_DEV = 1, WI_OFFL, WI_MAX_FLOWS, WI_INGRESS_PORT, WI_CFG, WI_CONFIG };

static const struct optab attach_opts[] = {
	{ "dev", "DEV", "the WAN port whose TC egress sprays the selected flows (required)", WI_DEV, 0 },
	{ "node-id", "N", "this ingress node's Node ID, 0..65535 (required)", WI_CFG, 0 },
	{ "src", "ADDR", "this node's IPv6 address: the outer source (required)", WI_CFG, 0 },
	{ "egress-node-id", "N", "the egress node's Node ID, 0..65535 (required)", WI_CFG, 0 },
	{ "egress-addr", "ADDR", "the egress node's IPv6 address: the outer destination (required)", WI_CFG, 0 },
	{ "hbh", NULL, "the WPS option in a Hop-by-Hop header (default: Destination Options)", WI_CFG, 0 },
	{ "hop-limit", "H", "the outer hop limit, 1..255 (default 64)", WI_CFG, 0 },
	{ "ecmp", "N", "no explicit paths: the kernel's multipath route to the egress\n"
	  "address (N next hops, 1..16) chooses by the outer flow label", WI_CFG, 0 },
	{ "mtu", "M", "the path MTU with --ecmp, 1280..65535 (default: DEV's)", WI_CFG, 0 },
	{ "ingress-port", "IF=ID[,...]|N", "IF=ID: the Ingress Port ID of packets that came in on IF\n"
	  "(else its ifindex's low byte); N: the ID of packets the node\n"
	  "sends itself (default 0)", WI_INGRESS_PORT, OPTAB_REPEAT },
	{ "egress-port", "P", "the option's Egress Port ID, 0..255 (default 0)", WI_CFG, 0 },
	{ "max-inflight", "G", "at most G groups of a flow in flight, 2..16 (default 16)", WI_CFG, 0 },
	{ "max-delay", "TIME", "a group counts as in flight this long after its E (bare: us;\n"
	  "0..10s, default 10ms)", WI_CFG, 0 },
	{ "max-delay-us", "TIME", NULL, WI_CFG, OPTAB_ALIAS },
	{ "quarantine", "TIME", "a released Flow ID is not reused for this long (bare: ms;\n"
	  "0..3600s, default 1s)", WI_CFG, 0 },
	{ "quarantine-ms", "TIME", NULL, WI_CFG, OPTAB_ALIAS },
	{ "idle-timeout", "TIME", "a flow idle this long is renewed under a fresh Flow ID (bare:\n"
	  "s; 1ms..3600s, default 5s)", WI_CFG, 0 },
	{ "idle-ms", "TIME", "a bare number in ms", WI_CFG, OPTAB_ALIAS },
	{ "load-window", "TIME", "least-loaded scheduling: the window of bytes sent per path\n"
	  "(bare: us; 1us..10s, default 1ms)", WI_CFG, 0 },
	{ "load-window-us", "TIME", NULL, WI_CFG, OPTAB_ALIAS },
	{ "fid-pool", "N", "Flow IDs 1..N are used (default 65535)", WI_CFG, 0 },
	{ "max-flows", "N", "the flow table's size: flows sprayed at once (default 4096;\n"
	  "rounded up to a power of 2, 64..1048576)", WI_MAX_FLOWS, 0 },
	{ "mtu-drop", NULL, "too-big packets are dropped (counted) instead of answered", WI_CFG, 0 },
	{ "icmp-src4", "ADDR", "the IPv4 source of the node's Fragmentation Needed answers\n"
	  "(default: the inner packet's destination)", WI_CFG, 0 },
	{ "offloads-off", NULL, "turn TSO, GSO and GRO off on DEV (put back at detach)", WI_OFFL, 0 },
	{ "config", "FILE", "options from FILE: one \"key value\" per line, keys the long\n"
	  "options without --, a flag alone, # comments; they apply where\n"
	  "--config stands (later options win)", WI_CONFIG, 0 },
	{ 0 },
};

struct attach_args {
	struct wps_in_cfg *cfg;
	struct wps_in_port *ports;
	int nports;
	const char *dev;
	unsigned long long max_flows;
	bool offl_off, node, enode;
};

/* One of attach's options, from the command line or a --config file: 0, or the exit status with err set. */
static int attach_apply(struct attach_args *a, const struct optab *o, const char *v, char *err, size_t errlen)
{
	switch (o->key) {
	case WI_DEV:
		a->dev = v;
		return 0;
	case WI_OFFL:
		a->offl_off = true;
		return 0;
	case WI_MAX_FLOWS:
		return wps_parse_uint(v, 64, 1u << 20, &a->max_flows, "--max-flows", err, errlen) ? EXIT_USAGE : 0;
	case WI_INGRESS_PORT:
		if (strchr(v, '='))
			return port_map_parse(v, a->ports, &a->nports, err, errlen);
		break;
	}
	if (wps_in_cfg_set(a->cfg, o->name, v, err, errlen))
		return EXIT_USAGE;
	a->node |= !strcmp(o->name, "node-id");
	a->enode |= !strcmp(o->name, "egress-node-id");
	return 0;
}

static int attach_conf_entry(void *ctx, const struct conf_key *k, const char *v, char *err, size_t errlen)
{
	const struct optab *o = optab_find(attach_opts, k->name);

	return o && !attach_apply(ctx, o, v, err, errlen) ? 0 : -1;
}

/* --config FILE: its entries apply where --config stands among the options (no nesting). */
static int attach_config(struct attach_args *a, const char *path, char *err, size_t errlen)
{
	struct conf_key keys[sizeof(attach_opts) / sizeof(attach_opts[0])];
	size_t nk = 0;

	for (const struct optab *o = attach_opts; o->name; o++)
		if (o->key != WI_CONFIG)
			keys[nk++] = (struct conf_key){ o->name, o->arg != NULL };
	keys[nk] = (struct conf_key){ 0 };
	switch (conf_parse_file(path, keys, attach_conf_entry, a, err, errlen)) {
	case 0: return 0;
	case -1: return EXIT_FAIL;
	default: return EXIT_USAGE;
	}
}

static int attach_opt(void *ctx, const struct optab *o, const char *v)
{
	char err[640];
	int rc = o->key == WI_CONFIG ? attach_config(ctx, v, err, sizeof(err)) : attach_apply(ctx, o, v, err, sizeof(err));

	return rc ? fail(rc, "%s", err) : 0;
}

static int attach(int argc, char **argv);
static int detach(int argc, char **argv);

const struct optab wps_in_dev_opts[] = {
	{ "dev", "DEV", "the instance's port (required)", 'd', 0 },
	{ 0 },
};

static const struct optab_cmd wps_cmd = {
	.path = "ubctl wps",
	.summary = "WPS gateways: ingress spraying, egress reordering, boundary filter",
}, ingress_cmd = {
	.path = "ubctl wps ingress",
	.summary = "the WPS ingress: sprays selected flows over member paths (TC egress)",
}, attach_cmd = {
	.path = "ubctl wps ingress attach",
	.summary = "load the WPS ingress on DEV's TC egress and pin its maps",
	.synopsis = "--dev DEV --node-id N --src ADDR --egress-node-id M --egress-addr ADDR\n"
		    "    [--ecmp N [--mtu M]] [OPTIONS]\n--config FILE [OPTIONS]",
	.about = "Loads the WPS ingress (draft-wps-ipv6-option) on DEV's TC egress and pins its\n"
		 "maps under /sys/fs/bpf/ubxdp/wps/ingress/[NETNS:]DEV/. It creates the\n"
		 "segmentation detour, the veth pair wpsgIFINDEX -> wpsgIFINDEXp (GSO off on the\n"
		 "first), which the GSO skbs of sprayed flows take, so that one skb is one packet\n"
		 "on the wire and S and E appear once per group. DEV keeps its offloads for the\n"
		 "traffic no rule sprays. Then: path add (or --ecmp), rule add, and watch.",
	.opts = attach_opts,
	.run = attach,
}, detach_cmd = {
	.path = "ubctl wps ingress detach",
	.summary = "take the ingress off DEV, delete the detour, remove the pins",
	.synopsis = "--dev DEV",
	.about = "Puts TSO, GSO and GRO on DEV back as they were before attach (if\n"
		 "--offloads-off changed them).",
	.opts = wps_in_dev_opts,
	.run = detach,
};

const struct optab_cmd *const wps_cmds[] = {
	&wps_cmd, &ingress_cmd, &attach_cmd, &detach_cmd, &wps_watch_cmd, NULL,
};

static int attach(int argc, char **argv)
{
	static struct wps_in_port ports[WPS_IN_PORTS];
	struct wps_in_cfg cfg;
	struct attach_args args = { .cfg = &cfg, .ports = ports, .max_flows = WPS_IN_MAX_FLOWS };
	unsigned long long max_flows;
	bool offl_off;
	int nports;
	struct wps_ingress *skel = NULL;
	const char *dev;
	char dir[PATH_MAX], err[256];
	unsigned dev_if, mtu = 0, a_if = 0, b_if = 0;
	struct stat st;
	__u32 zero = 0;
	bool tcx;
	int rc;

	wps_in_cfg_defaults(&cfg);
	rc = optab_parse(&attach_cmd, argc, argv, attach_opt, &args, NULL);
	if (rc)
		return OPTAB_STATUS(rc);
	dev = args.dev;
	max_flows = args.max_flows;
	offl_off = args.offl_off;
	nports = args.nports;
	if (!dev)
		return fail(EXIT_USAGE, "wps ingress attach: --dev DEV is required");
	if (!args.node || !args.enode)
		return fail(EXIT_USAGE, "wps ingress attach: --node-id and --egress-node-id are required");
	if (wps_in_cfg_check(&cfg, err, sizeof(err)))
		return fail(EXIT_USAGE, "%s", err);
	dev_if = if_nametoindex(dev);
	if (!dev_if)
		return fail(UB_EXIT_NOTFOUND, "unknown device '%s'", dev);
	if (wps_dev_info(dev, NULL, &mtu))
		return fail(EXIT_FAIL, "cannot read the MTU of %s: %s", dev, strerror(errno));
	if (cfg.ecmp && !cfg.path_mtu)
		cfg.path_mtu = (__u16)mtu;
	cfg.dev_ifindex = dev_if;
	if ((rc = pin_dev_instance_dir(WPS_ROLE_INGRESS, dev, false, dir, sizeof(dir))))
		return rc;
	if (!stat(dir, &st))
		return fail(UB_EXIT_CONFLICT, "a WPS ingress is already attached to %s (%s): detach it first", dev,
			    pin_display(dir));

	skel = wps_ingress__open();
	if (!skel)
		return fail(EXIT_FAIL, "cannot open the WPS ingress BPF object: %s", strerror(errno));
	wps_in_flow_table_size(skel->obj, (__u32)max_flows);
	skel->rodata->max_flows = wps_in_pow2((__u32)max_flows);
	rc = wps_ingress__load(skel);
	if (rc) {
		wps_ingress__destroy(skel);
		if (rc == -EPERM || rc == -EACCES)
			return fail(UB_EXIT_KERNEL, "loading BPF programs: permission denied (needs root: CAP_BPF, CAP_NET_ADMIN)");
		return fail(UB_EXIT_KERNEL, "loading BPF programs failed: %s (run with -v for the verifier log)", strerror(-rc));
	}
	if (pin_mkdir_p(dir)) {
		rc = fail(EXIT_FAIL, "cannot create %s: %s", dir, strerror(errno));
		goto out;
	}
	if ((rc = role_pin(&wps_ingress_role, skel, dir)))
		goto unpin;

	/*
	 * One packet on the wire per flag: every GSO skb of a sprayed flow takes
	 * the detour, so DEV keeps its offloads, which traffic no rule sprays
	 * needs (without TSO, DEV would segment it in software: 27 % of a TCP
	 * flow's goodput in scripts/wps_bench.sh). --offloads-off turns TSO, GSO
	 * and GRO off on DEV all the same (a locally sent TCP flow then reaches
	 * the program a wire packet at a time, without the detour); what was on
	 * is kept in cfg, for detach to put back.
	 */
	if (offl_off) {
		__u32 after[WPS_IN_FEAT_WORDS];
		bool read = !wps_features_get(dev, cfg.dev_feat_before);

		if (wps_offloads_off(dev, err, sizeof(err)))
			warnx_("cannot turn TSO, GSO and GRO off on %s (%s): GSO skbs take the detour", dev, err);
		if (read && !wps_features_get(dev, after)) {
			for (int i = 0; i < WPS_IN_FEAT_WORDS; i++)
				cfg.dev_feat_changed[i] = cfg.dev_feat_before[i] ^ after[i];
			cfg.dev_offloads = WPS_IN_OFFL_SAVED;
		} else {
			warnx_("cannot read the features of %s (ETHTOOL_GFEATURES): detach will leave TSO/GSO/GRO off",
			       dev);
		}
	}
	wps_seg_delete(dev_if);	/* a leftover of a crashed attach */
	rc = wps_seg_create(dev_if, mtu, &a_if, &b_if, err, sizeof(err));
	if (rc == -1) {
		rc = fail(EXIT_FAIL, "cannot create the segmentation detour (veth " WPS_SEG_FMT "): %s", dev_if, err);
		goto unpin;
	}
	if (rc == -2) {
		rc = fail(EXIT_FAIL, "cannot turn GSO off on the detour: %s", err);
		goto unpin;
	}
	if (rc == -3) {
		rc = fail(EXIT_FAIL, "cannot set RPS on the detour (/sys/class/net/" WPS_SEG_PEER_FMT
			  "/queues/rx-0/rps_cpus): needs a sysfs of this network namespace, mounted by ubctl"
			  " (CAP_SYS_ADMIN) or already on /sys", dev_if);
		goto unpin;
	}
	cfg.seg_ifindex = a_if;
	wps_in_cfg_tick(&cfg);
	if (nports)
		cfg.flags |= WPS_IN_F_PORTS_NAMED;
	for (__u32 k = 0; k < WPS_IN_PORTS && nports; k++)
		if (ports[k].ifindex && bpf_map_update_elem(bpf_map__fd(skel->maps.wps_in_ports), &k, &ports[k], BPF_ANY)) {
			rc = fail(EXIT_FAIL, "writing the ingress ports: %s", strerror(errno));
			goto unseg;
		}
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.wps_in_cfg), &zero, &cfg, BPF_ANY)) {
		rc = fail(EXIT_FAIL, "writing the configuration: %s", strerror(errno));
		goto unseg;
	}
	rc = role_tc_attach(&wps_ingress_role, bpf_program__fd(skel->progs.wps_ingress_seg), b_if, false, dir,
			    WPS_PIN_LINK_SEG, &tcx);
	if (rc) {
		rc = fail(UB_EXIT_KERNEL, "TC attach on the detour: %s", strerror(-rc));
		goto unseg;
	}
	rc = role_tc_attach(&wps_ingress_role, bpf_program__fd(skel->progs.wps_ingress), dev_if, true, dir,
			    WPS_PIN_LINK, &tcx);
	if (rc) {
		rc = fail(UB_EXIT_KERNEL, "TC attach on %s egress: %s", dev, strerror(-rc));
		goto unseg;
	}
	printf("wps ingress attached: %s egress (node %u -> node %u, %s) by %s, pinned at %s\n", dev, cfg.node_id,
	       cfg.egress_node_id, cfg.ecmp ? "ECMP by flow label" : "explicit paths", LINK_TC_WAY(tcx),
	       pin_display(dir));
	if (!cfg.ecmp)
		printf("add member paths with: ubctl wps ingress path add --dev %s --via DEV --nexthop-mac MAC\n", dev);
	rc = 0;
	goto out;
unseg:
	wps_seg_delete(dev_if);
unpin:
	wps_features_restore(dev, &cfg);
	role_unpin(dir);
out:
	wps_ingress__destroy(skel);
	return rc;
}

static int detach(int argc, char **argv)
{
	struct wps_in_cfg cfg;
	char dir[PATH_MAX];
	const char *dev = NULL;
	unsigned dev_if;
	__u32 zero = 0;
	int rc = optab_parse(&detach_cmd, argc, argv, optab_str, &dev, NULL), cfg_fd;

	if (rc)
		return OPTAB_STATUS(rc);
	if (!dev)
		return fail(EXIT_USAGE, "wps ingress detach: --dev DEV is required");
	if ((rc = pin_dev_instance_dir(WPS_ROLE_INGRESS, dev, true, dir, sizeof(dir))))
		return rc;
	dev_if = if_nametoindex(dev);
	if (!dev_if)
		return fail(UB_EXIT_NOTFOUND, "device '%s' is gone; pins kept at %s (remove them with rm -r)", dev,
			    pin_display(dir));
	cfg_fd = wps_in_open_pin(dir, WPS_PIN_CFG);
	if (cfg_fd < 0)
		return EXIT_FAIL;
	/* Another ubctl's layout has no offloads where this one looks for them. */
	if (bpf_map_lookup_elem(cfg_fd, &zero, &cfg) || cfg.version != WPS_IN_CFG_VERSION)
		cfg.dev_offloads = 0;
	close(cfg_fd);
	if ((rc = role_detach_tc(&wps_ingress_role, dir, dev_if, dev)))
		return rc;
	wps_seg_delete(dev_if);	/* takes its filter with it */
	/* DEV's features as they were before attach, each one. */
	if (wps_features_restore(dev, &cfg))
		warnx_("cannot restore the offloads of %s (ETHTOOL_SFEATURES: %s)", dev, strerror(errno));
	pin_remove_dir(dir);
	printf("wps ingress detached from %s: %s removed\n", dev, pin_display(dir));
	return 0;
}

/* ---- an instance opened, for paths and rules -------------------------------------- */

/*
 * The `live` map of an instance, mapped: each writer (ubctl here, the watch
 * agent) changes its own words in place, atomically, never the whole value.
 */
struct wps_in_live *wps_live_map(int fd)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, (size_t)(pg > 0 ? pg : 4096), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return m == MAP_FAILED ? NULL : m;
}

void wps_live_unmap(struct wps_in_live *lv)
{
	long pg = sysconf(_SC_PAGESIZE);

	if (lv)
		munmap(lv, (size_t)(pg > 0 ? pg : 4096));
}

void wps_live_slot_reset(struct wps_in_live *lv, __u32 slot)
{
	__u32 keep = ~(1u << slot);

	if (!lv)
		return;
	__atomic_fetch_and(&lv->admin_down, keep, __ATOMIC_SEQ_CST);
	__atomic_fetch_and(&lv->link_down, keep, __ATOMIC_SEQ_CST);
	__atomic_fetch_and(&lv->neigh_down, keep, __ATOMIC_SEQ_CST);
	__atomic_store_n(&lv->slot_pmtu[slot], 0, __ATOMIC_SEQ_CST);
}

int wps_in_inst_open(const char *dev, struct wps_in_inst *in)
{
	__u32 zero = 0;
	int rc;

	memset(in, 0, sizeof(*in));
	in->cfg_fd = in->paths_fd = in->rules_fd = in->pstats_fd = in->pload_fd = in->live_fd = -1;
	if ((rc = pin_dev_instance_dir(WPS_ROLE_INGRESS, dev, true, in->dir, sizeof(in->dir))))
		return rc;
	in->cfg_fd = wps_in_open_pin(in->dir, WPS_PIN_CFG);
	if (in->cfg_fd < 0)
		return EXIT_FAIL;
	if (bpf_map_lookup_elem(in->cfg_fd, &zero, &in->cfg))
		return fail(EXIT_FAIL, "reading %s/cfg: %s", pin_display(in->dir), strerror(errno));
	/* Another ubctl's layout would be read as garbage and written back as worse. */
	if (in->cfg.version != WPS_IN_CFG_VERSION)
		return fail(EXIT_FAIL, "%s was attached by another ubctl (cfg layout %u, this one reads %u): detach and attach again",
			    pin_display(in->dir), in->cfg.version, WPS_IN_CFG_VERSION);
	in->paths_fd = wps_in_open_pin(in->dir, WPS_PIN_PATHS);
	in->rules_fd = wps_in_open_pin(in->dir, WPS_PIN_RULES);
	in->pstats_fd = wps_in_open_pin(in->dir, WPS_PIN_PATH_STATS);
	in->pload_fd = wps_in_open_pin(in->dir, WPS_PIN_PATH_LOAD);
	in->live_fd = wps_in_open_pin(in->dir, WPS_PIN_LIVE);
	if (in->paths_fd < 0 || in->rules_fd < 0 || in->pstats_fd < 0 || in->pload_fd < 0 || in->live_fd < 0)
		return EXIT_FAIL;
	in->live = wps_live_map(in->live_fd);
	if (!in->live)
		return fail(EXIT_FAIL, "cannot map %s/%s: %s", pin_display(in->dir), WPS_PIN_LIVE, strerror(errno));
	return 0;
}

void wps_in_inst_close(struct wps_in_inst *in)
{
	int fds[] = { in->cfg_fd, in->paths_fd, in->rules_fd, in->pstats_fd, in->pload_fd, in->live_fd };

	wps_live_unmap(in->live);
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}
