// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl ub2e: attach/detach/status of the UB2E switch and its NPI<->VLAN table.
 *
 * An instance is a directory on bpffs holding the pinned maps and programs.
 * Everything that can fail is checked before anything is attached, and an
 * attach that fails half way is rolled back (ub2e_attach.c), so a failed
 * command leaves the system as it found it.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "ub2e_maps.h"	/* first: the skeleton's .data.cfg is a struct ub2e_cfg */
#include "ub2e.skel.h"
#include "lib/ub2e_cfg.h"
#include "lib/conf.h"
#include "lib/npimap.h"
#include "lib/parse_num.h"
#include "ubctl/ub2e_int.h"
#include "io/ub2e_pins.h"
#include "io/ub2e_stats.h"
#include "io/ub2e_tables.h"

/* clsact handle and priority of the switch's filters, so detach finds only its own. */
#define UB2E_TC_HANDLE	0xb2e
#define UB2E_TC_PRIO	0xb2e

const struct ubctl_role ub2e_role = {
	.name = "ub2e",
	.key = "ub2e",
	.pin_dir = "ub2e",
	.pins = (const struct role_pin[]){
		ROLE_MAP(ub2e, UB2E_PIN_CFG, data_cfg),
		ROLE_MAP(ub2e, UB2E_PIN_STATS, ub2e_stats),
		ROLE_MAP(ub2e, UB2E_PIN_NPI2VLAN, ub2e_npi2vlan),
		ROLE_MAP(ub2e, UB2E_PIN_VLAN2NPI, ub2e_vlan2npi),
		ROLE_MAP(ub2e, UB2E_PIN_TX_IP, ub2e_tx_ip),
		ROLE_MAP(ub2e, UB2E_PIN_TX_UB, ub2e_tx_ub),
		ROLE_MAP(ub2e, UB2E_PIN_ICMP_LIMIT, ub2e_icmp_limit),
		ROLE_PROG(ub2e, UB2E_PIN_PROG_TO_UBOE, ub2e_to_uboe),
		/* One of the two is loaded: the VLAN metadata variant where the IP side strips tags. */
		ROLE_PROG(ub2e, UB2E_PIN_PROG_TO_UB, ub2e_to_ub),
		ROLE_PROG(ub2e, UB2E_PIN_PROG_TO_UB, ub2e_to_ub_vlanmeta),
		ROLE_PROG(ub2e, UB2E_PIN_PROG_TC_INGRESS, ub2e_slow_in),
		ROLE_PROG(ub2e, UB2E_PIN_PROG_TC_EGRESS_IP, ub2e_slow_ip),
		ROLE_PROG(ub2e, UB2E_PIN_PROG_TC_EGRESS_UB, ub2e_slow_ub),
		{ 0 },
	},
	.tc = { UB2E_TC_HANDLE, UB2E_TC_PRIO, true, true },
	.stats_pin = UB2E_PIN_STATS,
	.ncounters = UB2E_CNT__MAX,
	.counter_name = ub2e_counter_name,
};

/* ---- option parsing shared by the subcommands ------------------------------ */

enum {
	OPT_UB_DEV = 1000, OPT_IP_DEV, OPT_NAME, OPT_PIN_PATH, OPT_GENERIC, OPT_MAP,
	OPT_PARTITION, OPT_JSON, OPT_CFG, OPT_CONFIG, OPT_ICMP_RATE, OPT_ICMP_BURST,
};

#define SEL_OPTS \
	{ "ub-dev", "DEV", "the instance on this UB-side port (with --ip-dev)", OPT_UB_DEV, 0 }, \
	{ "ip-dev", "DEV", "... and this IP-side port", OPT_IP_DEV, 0 }, \
	{ "name", "NAME", "the instance named NAME", OPT_NAME, 0 }, \
	{ "pin-path", "DIR", "the instance pinned at DIR", OPT_PIN_PATH, 0 }, \
	{ "config", "FILE", "the instance FILE names (its ub-dev, ip-dev, name, pin-path keys)", OPT_CONFIG, 0 }

static const struct optab attach_opts[] = {
	{ "ub-dev", "DEV", "UB-side port (native UB frames, EtherType --ub-ethertype)", OPT_UB_DEV, 0 },
	{ "ip-dev", "DEV", "IP-side port (UBoE)", OPT_IP_DEV, 0 },
	{ "generic", NULL, "generic (skb) XDP, for drivers without native XDP", OPT_GENERIC, 0 },
	{ "name", "NAME", "instance name (default [NETNS:]UB-DEV-IP-DEV)", OPT_NAME, 0 },
	{ "pin-path", "DIR", "pin directory instead of /sys/fs/bpf/ubxdp/ub2e/NAME", OPT_PIN_PATH, 0 },
	{ "map", "PID[/PERM]=VLAN", "an NPI<->VLAN entry: PID=VLAN baseline (Permission not\n"
	  "carried, restored as 0), PID/PERM=VLAN enhanced (each\n"
	  "(Partition ID, Permission) its own VLAN)", OPT_MAP, OPTAB_REPEAT },
	{ "partition", "PID", "a partition using the default VLAN, the lower 12 bits of\n"
	  "the PID; plans whose partitions collide on a VLAN are refused", OPT_PARTITION, OPTAB_REPEAT },
	{ "strict", NULL, "drop partitions and VLANs not in the table (instead of the\n"
	  "default VLAN)", OPT_CFG, 0 },
	{ "untagged", NULL, "UB -> UBoE sends untagged frames (NPI discarded)", OPT_CFG, 0 },
	{ "light-ce", "ce|ect0|ect1", "IP ECN written for FECN Light CE (default ce)", OPT_CFG, 0 },
	{ "markable", "ect0|ect1", "IP ECN written for FECN Markable (default ect0)", OPT_CFG, 0 },
	{ "ce-to", "severe|light", "FECN written for IP CE (default severe)", OPT_CFG, 0 },
	{ "ect1-to", "markable|light", "FECN written for IP ECT(1) (default markable)", OPT_CFG, 0 },
	{ "cci-policy", "forward|drop", "native packets whose CCI is not in FECN mode (default\n"
	  "forward)", OPT_CFG, 0 },
	{ "rt", "0-3", "RT written into the LPH on UBoE -> UB", OPT_CFG, 0 },
	{ "vl", "0-15", "VL written into the LPH on UBoE -> UB", OPT_CFG, 0 },
	{ "default-pid", "PID", "NPI of untagged UBoE (default 1)", OPT_CFG, 0 },
	{ "default-perm", "0|1", "its Permission (default 0)", OPT_CFG, 0 },
	{ "no-ttl-dec", NULL, "leave TTL and hop limit alone, on the slow path too", OPT_CFG, 0 },
	{ "caqm-tag", NULL, "a CAQM CCI crosses the IP side in an Ethernet CAQM tag\n"
	  "(docs/CC.md), read back into the CCI; off by default: plain IP\n"
	  "routers do not know the tag", OPT_CFG, 0 },
	{ "caqm-ethertype", "NUM", "the CAQM tag's EtherType (default 0x88b6)", OPT_CFG, 0 },
	{ "ub-ethertype", "NUM", "EtherType of native UB frames (default 0x88b5)", OPT_CFG, 0 },
	{ "icmp-rate", "N", "the switch's own Fragmentation Needed / Packet Too Big answers\n"
	  "per second per port (default 1000, 0: no limit; suppressed ones\n"
	  "count slow_icmp_ratelimited)", OPT_ICMP_RATE, 0 },
	{ "icmp-burst", "N", "answers sent at once before the rate applies (default 50)", OPT_ICMP_BURST, 0 },
	{ "config", "FILE", "options from FILE: one \"key value\" per line, keys the long\n"
	  "options without \"--\" (flags alone), '#' comments; applied where\n"
	  "--config stands (later options win)", OPT_CONFIG, 0 },
	{ 0 },
}, sel_opts[] = {
	SEL_OPTS,
	{ 0 },
}, sel_json_opts[] = {
	SEL_OPTS,
	UBCTL_OPT_JSON(OPT_JSON),
	{ 0 },
};

static int ub2e_attach(int argc, char **argv);
static int ub2e_detach(int argc, char **argv);
static int ub2e_status(int argc, char **argv);
static int ub2e_map(int argc, char **argv);

#define SEL_ABOUT "Instance: --ub-dev DEV --ip-dev DEV, --name NAME, --pin-path DIR or --config\n" \
		  "FILE; the only instance when none is given. Commands that touch ports enter\n" \
		  "the instance's network namespace (recorded at attach) or refuse."

static const struct optab_cmd ub2e_cmd = {
	.path = "ubctl ub2e",
	.summary = "the UB2E switch: attach, detach, status, NPI<->VLAN table",
	.about = "The UB2E switch of draft-li-uboe-00: native UB frames on the UB-side port\n"
		 "<-> UBoE (UB over UDP/IP, port 4792) on the IP-side port, converted in XDP.",
}, attach_cmd = {
	.path = "ubctl ub2e attach",
	.summary = "load and attach the switch to two ports",
	.synopsis = "--ub-dev DEV --ip-dev DEV [OPTIONS]\n--config FILE [OPTIONS]",
	.about = "Loads the switch, fills its maps, pins them under /sys/fs/bpf/ubxdp/ub2e/NAME/,\n"
		 "then attaches one XDP program to each port (and the TC slow path, ingress and\n"
		 "egress, to both). It sets net.ipv4.fwmark_reflect and net.ipv6.fwmark_reflect\n"
		 "to 1 in the ports' network namespace, so that the kernel's ICMP answers to UB\n"
		 "packets leave converted into their partition. If the second attach fails the\n"
		 "first is taken off again.",
	.opts = attach_opts,
	.run = ub2e_attach,
}, detach_cmd = {
	.path = "ubctl ub2e detach",
	.summary = "take the switch off its ports and remove its pins",
	.synopsis = "[--ub-dev DEV --ip-dev DEV | --name NAME | --pin-path DIR | --config FILE]",
	.about = "Takes both programs off the instance's ports (in the instance's own network\n"
		 "namespace) and removes its pins. Refuses, changing nothing, when the ports\n"
		 "cannot be reached.\n\n" SEL_ABOUT,
	.opts = sel_opts,
	.run = ub2e_detach,
}, status_cmd = {
	.path = "ubctl ub2e status",
	.summary = "ports, XDP mode and configuration of an instance",
	.synopsis = "[--json] [--ub-dev DEV --ip-dev DEV | --name NAME | --pin-path DIR | --config FILE]",
	.about = "Ports, XDP mode and program ids, and the configuration of an instance.\n\n" SEL_ABOUT,
	.opts = sel_json_opts,
	.run = ub2e_status,
}, map_cmd = {
	.path = "ubctl ub2e map",
	.summary = "add, del or list NPI<->VLAN entries of a running instance",
	.about = "Edits the NPI<->VLAN table of a running switch. Every argument is checked\n"
		 "(syntax, collisions, presence) before anything changes.",
}, map_add_cmd = {
	.path = "ubctl ub2e map add",
	.summary = "add entries: PID[/PERM]=VLAN, or PID for the default VLAN",
	.synopsis = "PID[/PERM]=VLAN|PID ... [INSTANCE]",
	.about = SEL_ABOUT,
	.opts = sel_opts,
	.flags = OPTAB_ARGS,
	.run = ub2e_map,
}, map_del_cmd = {
	.path = "ubctl ub2e map del",
	.summary = "delete entries by PID[/PERM]",
	.synopsis = "PID[/PERM] ... [INSTANCE]",
	.about = SEL_ABOUT,
	.opts = sel_opts,
	.flags = OPTAB_ARGS,
	.run = ub2e_map,
}, map_list_cmd = {
	.path = "ubctl ub2e map list",
	.summary = "the table (entries bpftool added without a VLAN show as blocks)",
	.synopsis = "[--json] [INSTANCE]",
	.about = SEL_ABOUT,
	.opts = sel_json_opts,
	.run = ub2e_map,
};

const struct optab_cmd *const ub2e_cmds[] = {
	&ub2e_cmd, &attach_cmd, &detach_cmd, &status_cmd, &map_cmd, &map_add_cmd, &map_del_cmd, &map_list_cmd,
	NULL,
};


/* One option, from the command line or a config file (from_file: options
 * that only attach takes are skipped, not refused, for the other verbs).
 * Returns 0, or the exit status with one line in err. */
static int apply_opt(struct ub2e_args *a, int c, const char *name, const char *val, bool allow_cfg,
		     bool from_file, char *err, size_t errlen)
{
	bool attach_only = c == OPT_CFG || c == OPT_MAP || c == OPT_PARTITION || c == OPT_GENERIC ||
			   c == OPT_ICMP_RATE || c == OPT_ICMP_BURST;
	unsigned long n;

	if (attach_only && !allow_cfg) {
		if (from_file)
			return 0;
		if (c == OPT_CFG || c == OPT_ICMP_RATE || c == OPT_ICMP_BURST) {
			snprintf(err, errlen, "--%s is an attach option", name);
			return EXIT_USAGE;
		}
	}
	switch (c) {
	case OPT_UB_DEV: a->sel.ub_dev = val; break;
	case OPT_IP_DEV: a->sel.ip_dev = val; break;
	case OPT_NAME: a->sel.name = val; break;
	case OPT_PIN_PATH: a->sel.pin_path = val; break;
	case OPT_GENERIC: a->generic = true; break;
	case OPT_JSON: a->json = true; break;
	case OPT_MAP:
	case OPT_PARTITION:
		if (a->nplan == UB2E_MAX_NPI_ENTRIES) {
			snprintf(err, errlen, "more than %d mapping entries", UB2E_MAX_NPI_ENTRIES);
			return EXIT_USAGE;
		}
		if (npimap_parse(val, &a->plan[a->nplan], err, errlen))
			return EXIT_USAGE;
		if (c == OPT_MAP && a->plan[a->nplan].truncated) {
			snprintf(err, errlen, "--map %s: give PID=VLAN (use --partition for the 12-bit default)", val);
			return EXIT_USAGE;
		}
		if (c == OPT_PARTITION && !a->plan[a->nplan].truncated) {
			snprintf(err, errlen, "--partition %s: give a bare Partition ID (use --map for PID=VLAN)", val);
			return EXIT_USAGE;
		}
		a->nplan++;
		break;
	case OPT_CFG:
		if (ub2e_cfg_set(&a->cfg, name, val, err, errlen))
			return EXIT_USAGE;
		break;
	case OPT_ICMP_RATE:
	case OPT_ICMP_BURST:
		if (parse_uint(val, strlen(val), c == OPT_ICMP_RATE ? UB2E_ICMP_RATE_MAX : UB2E_ICMP_BURST_MAX, &n) ||
		    (c == OPT_ICMP_BURST && !n)) {
			snprintf(err, errlen, "--%s %s: give %s up to %u", name, val,
				 c == OPT_ICMP_RATE ? "answers per second (0: no limit)" : "a number of answers, 1",
				 c == OPT_ICMP_RATE ? UB2E_ICMP_RATE_MAX : UB2E_ICMP_BURST_MAX);
			return EXIT_USAGE;
		}
		*(c == OPT_ICMP_RATE ? &a->icmp_rate : &a->icmp_burst) = (__u32)n;
		break;
	default:
		snprintf(err, errlen, "unknown option --%s", name);
		return EXIT_USAGE;
	}
	return 0;
}

struct conf_ctx {
	struct ub2e_args *a;
	bool allow_cfg;
};

static int conf_apply(void *ctx, const struct conf_key *k, const char *value, char *err, size_t errlen)
{
	struct conf_ctx *cc = ctx;

	const struct optab *o = optab_find(attach_opts, k->name);

	return o ? (apply_opt(cc->a, o->key, o->name, value, cc->allow_cfg, true, err, errlen) ? -1 : 0) : -1;
}

/* --config FILE: its entries apply where --config stands among the options. */
static int load_config(struct ub2e_args *a, const char *path, bool allow_cfg, char *err, size_t errlen)
{
	struct conf_key keys[sizeof(attach_opts) / sizeof(attach_opts[0])];
	struct conf_ctx cc = { a, allow_cfg };
	size_t nk = 0;

	for (const struct optab *o = attach_opts; o->name; o++)
		if (o->key != OPT_CONFIG)	/* no nesting */
			keys[nk++] = (struct conf_key){ o->name, o->arg != NULL };
	keys[nk] = (struct conf_key){ 0 };
	/* Values point into the text (device names, ...): it lives as long as the command. */
	switch (conf_parse_file(path, keys, conf_apply, &cc, err, errlen)) {
	case 0: return 0;
	case -1: return EXIT_FAIL;
	default: return EXIT_USAGE;
	}
}

struct parse_ctx {
	struct ub2e_args *a;
	bool allow_cfg;
};

static int parse_opt(void *ctx, const struct optab *o, const char *val)
{
	struct parse_ctx *pc = ctx;
	char err[640];
	int rc;

	if (o->key == OPT_CONFIG)
		rc = load_config(pc->a, val, pc->allow_cfg, err, sizeof(err));
	else
		rc = apply_opt(pc->a, o->key, o->name, val, pc->allow_cfg, false, err, sizeof(err));
	return rc ? fail(rc, "%s", err) : 0;
}

/* The command's options into a; positional arguments in a->rest[1..], a->rest[0] the verb. */
static int parse_args(const struct optab_cmd *c, int argc, char **argv, struct ub2e_args *a)
{
	struct parse_ctx pc = { a, c == &attach_cmd };
	char err[640];
	int n, rc;

	ub2e_cfg_defaults(&a->cfg);
	a->icmp_rate = UB2E_ICMP_RATE_DEFAULT;
	a->icmp_burst = UB2E_ICMP_BURST_DEFAULT;
	a->plan = calloc(UB2E_MAX_NPI_ENTRIES, sizeof(*a->plan));
	if (!a->plan)
		return fail(EXIT_FAIL, "out of memory");
	rc = optab_parse(c, argc, argv, parse_opt, &pc, &n);
	if (rc)
		return rc;
	a->rest = argv;
	a->nrest = n + 1;
	if (pc.allow_cfg && ub2e_cfg_check(&a->cfg, err, sizeof(err)))
		return fail(EXIT_USAGE, "%s", err);
	return 0;
}

/* ---- detach ---------------------------------------------------------------- */

/* Detach `prog_fd` (XDP) and the TC pair from every device in `devmap_fd` where still attached. */
static int detach_from_ports(int devmap_fd, int prog_fd, int tc_in_fd, int tc_eg_fd)
{
	__u32 key, next, *prev = NULL, want = prog_id_of_fd(prog_fd);
	int failures = 0;

	while (!bpf_map_get_next_key(devmap_fd, prev, &next)) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		char name[IF_NAMESIZE] = "?";

		key = next;
		prev = &key;
		if (bpf_xdp_query((int)key, 0, &q))
			continue;	/* the device is gone: nothing attached any more */
		if_indextoname(key, name);
		failures += ub2e_tc_detach(key, tc_in_fd, tc_eg_fd);
		for (int mode = 0; mode < 2; mode++) {
			__u32 id = mode ? q.skb_prog_id : q.drv_prog_id;
			__u32 flags = mode ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
			LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = prog_fd);

			if (!id)
				continue;
			if (id != want) {
				warnx_("%s runs XDP program %u, not this switch's %u: left alone", name, id, want);
				continue;
			}
			if (bpf_xdp_detach((int)key, flags | XDP_FLAGS_REPLACE, &o)) {
				warnx_("detach from %s: %s", name, strerror(errno));
				failures++;
			}
		}
	}
	return failures;
}

static int do_detach(struct ub2e_args *a)
{
	int saved_ns;	/* our network namespace while in the instance's */
	char dir[PATH_MAX], err[512];
	int tx_ub, tx_ip, to_uboe, to_ub, tc_in, tc_ub, tc_ip, failures;

	int prc = pin_instance_dir("ub2e", &a->sel, true, dir, sizeof(dir), err, sizeof(err));

	if (prc)
		return fail(prc, "%s", err);
	if (netns_enter_instance(dir, &saved_ns, err, sizeof(err)))
		return fail(EXIT_FAIL, "ub2e detach: %s", err);
	tx_ub = pin_open(dir, UB2E_PIN_TX_UB);
	tx_ip = pin_open(dir, UB2E_PIN_TX_IP);
	to_uboe = pin_open(dir, UB2E_PIN_PROG_TO_UBOE);
	to_ub = pin_open(dir, UB2E_PIN_PROG_TO_UB);
	tc_in = pin_open(dir, UB2E_PIN_PROG_TC_INGRESS);
	tc_ub = pin_open(dir, UB2E_PIN_PROG_TC_EGRESS_UB);
	tc_ip = pin_open(dir, UB2E_PIN_PROG_TC_EGRESS_IP);
	if (tx_ub < 0 || tx_ip < 0 || to_uboe < 0 || to_ub < 0 || tc_in < 0 || tc_ub < 0 || tc_ip < 0)
		return fail(EXIT_FAIL, "%s is not a complete ub2e instance (%s)", dir, strerror(errno));
	/* The links first (an instance attached before links has none); then
	 * what an older ubctl attached without them: legacy XDP, clsact filters. */
	failures = link_detach_pinned(dir, NULL);
	failures += detach_from_ports(tx_ub, to_uboe, tc_in, tc_ub) + detach_from_ports(tx_ip, to_ub, tc_in, tc_ip);
	close(tc_in);
	close(tc_ub);
	close(tc_ip);
	close(tx_ub);
	close(tx_ip);
	close(to_uboe);
	close(to_ub);
	netns_leave(saved_ns);
	if (failures)
		return fail(EXIT_FAIL, "%d detach(es) failed; pins kept at %s", failures, pin_display(dir));
	pin_remove_dir(dir);
	printf("ub2e detached: %s removed\n", pin_display(dir));
	return 0;
}

/* ---- mapping table ------------------------------------------------------------ */

static int do_map(struct ub2e_args *a)
{
	char dir[PATH_MAX], err[512], buf[48];
	const char *verb = a->nrest ? a->rest[0] : "";
	struct npimap_entry *cur;
	size_t ncur;
	int npi_fd, vlan_fd, rc = 0;

	int prc = pin_instance_dir("ub2e", &a->sel, true, dir, sizeof(dir), err, sizeof(err));

	if (prc)
		return fail(prc, "%s", err);
	npi_fd = pin_open(dir, UB2E_PIN_NPI2VLAN);
	vlan_fd = pin_open(dir, UB2E_PIN_VLAN2NPI);
	if (npi_fd < 0 || vlan_fd < 0)
		return fail(EXIT_FAIL, "%s: mapping maps missing (%s)", dir, strerror(errno));
	cur = calloc(UB2E_MAX_NPI_ENTRIES * 2, sizeof(*cur));
	if (!cur)
		return fail(EXIT_FAIL, "out of memory");
	ub2e_tables_read(npi_fd, vlan_fd, cur, UB2E_MAX_NPI_ENTRIES, &ncur);

	if (!strcmp(verb, "list")) {
		struct json_object *jl = a->json ? json_object_new_array() : NULL;

		for (size_t i = 0; i < ncur; i++) {
			if (jl) {
				struct json_object *je = json_object_new_object();

				json_add_u64(je, "pid", cur[i].pid);
				json_object_object_add(je, "perm", cur[i].perm == NPIMAP_ANY_PERM ? NULL :
						       json_object_new_int(cur[i].perm));
				json_add_u64(je, "vlan", cur[i].vlan);
				json_object_array_add(jl, je);
			} else {
				printf("%s\n", npimap_format(&cur[i], buf, sizeof(buf)));
			}
		}
		if (jl)
			json_print(jl);
	} else if (!strcmp(verb, "add")) {
		struct npimap_entry e;

		if (a->nrest < 2)
			return fail(EXIT_USAGE, "ub2e map add PID[/PERM]=VLAN|PID ...");
		/* Validate the whole resulting table before writing any entry. */
		for (int i = 1; i < a->nrest; i++) {
			if (npimap_parse(a->rest[i], &e, err, sizeof(err)))
				return fail(EXIT_USAGE, "%s", err);
			if (ncur >= UB2E_MAX_NPI_ENTRIES)
				return fail(UB_EXIT_CONFLICT, "mapping table full (%d entries)", UB2E_MAX_NPI_ENTRIES);
			cur[ncur++] = e;
		}
		if (npimap_check(cur, ncur, err, sizeof(err)))
			return fail(UB_EXIT_CONFLICT, "refusing mapping: %s", err);
		if (ub2e_tables_write(npi_fd, vlan_fd, cur + ncur - (a->nrest - 1), (size_t)a->nrest - 1))
			return fail(EXIT_FAIL, "updating the mapping maps: %s", strerror(errno));
	} else {
		if (a->nrest < 2)
			return fail(EXIT_USAGE, "ub2e map del PID[/PERM] ...");
		struct npimap_entry *del = calloc((size_t)a->nrest, sizeof(*del));

		if (!del)
			return fail(EXIT_FAIL, "out of memory");
		/* Every argument is checked (well-formed, in the table, not twice)
		 * before the first entry goes. */
		for (int i = 1; i < a->nrest; i++) {
			if (npimap_parse_key(a->rest[i], &del[i], err, sizeof(err)))
				return fail(EXIT_USAGE, "ub2e map del: %s", err);
			if (!npimap_find(cur, ncur, del[i].pid, del[i].perm))
				return fail(UB_EXIT_NOTFOUND, "ub2e map del: %s is not in the table; nothing deleted", a->rest[i]);
			for (int j = 1; j < i; j++)
				if (del[j].pid == del[i].pid && del[j].perm == del[i].perm)
					return fail(EXIT_USAGE, "ub2e map del: %s given twice; nothing deleted", a->rest[i]);
		}
		for (int i = 1; i < a->nrest; i++) {
			rc = ub2e_tables_del(npi_fd, vlan_fd, del[i].pid, del[i].perm);
			if (rc)
				return fail(EXIT_FAIL, "ub2e map del %s: %s", a->rest[i], strerror(-rc));
		}
		free(del);
	}
	free(cur);
	close(npi_fd);
	close(vlan_fd);
	return rc;
}

/* ---- status ------------------------------------------------------------------- */

static void print_ports(const char *side, int devmap_fd, struct json_object *jports)
{
	__u32 key, next, *prev = NULL;

	while (!bpf_map_get_next_key(devmap_fd, prev, &next)) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		char name[IF_NAMESIZE] = "(gone)";

		key = next;
		prev = &key;
		if_indextoname(key, name);
		bpf_xdp_query((int)key, 0, &q);
		const char *mode = q.attach_mode == XDP_ATTACHED_SKB ? "generic" :
				   q.attach_mode == XDP_ATTACHED_DRV ? "native" :
				   q.attach_mode ? "multi" : "none";
		if (jports) {
			struct json_object *jp = json_object_new_object();

			json_add_str(jp, "side", side);
			json_add_str(jp, "dev", name);
			json_add_u64(jp, "ifindex", key);
			json_add_str(jp, "xdp", mode);
			json_add_u64(jp, "prog_id", q.prog_id);
			json_object_array_add(jports, jp);
			continue;
		}
		printf("  %s port: %s (ifindex %u), XDP %s prog %u\n", side, name, key, mode, q.prog_id);
	}
}

static int do_status(struct ub2e_args *a)
{
	char dir[PATH_MAX], err[512];
	struct ub2e_cfg cfg;
	__u32 zero = 0;
	int fd, tx_ub, tx_ip, saved_ns;

	int prc = pin_instance_dir("ub2e", &a->sel, true, dir, sizeof(dir), err, sizeof(err));

	if (prc)
		return fail(prc, "%s", err);
	if (netns_enter_instance(dir, &saved_ns, err, sizeof(err)))
		return fail(EXIT_FAIL, "ub2e status: %s", err);
	fd = pin_open(dir, UB2E_PIN_CFG);
	tx_ub = pin_open(dir, UB2E_PIN_TX_UB);
	tx_ip = pin_open(dir, UB2E_PIN_TX_IP);
	if (fd < 0 || tx_ub < 0 || tx_ip < 0 || bpf_map_lookup_elem(fd, &zero, &cfg))
		return fail(EXIT_FAIL, "%s is not a complete ub2e instance", dir);
	if (a->json) {
		struct json_object *js = json_object_new_object(), *jp = json_object_new_array(), *jf;

		json_add_str(js, "instance", pin_display(dir));
		print_ports("UB-side", tx_ub, jp);
		print_ports("IP-side", tx_ip, jp);
		netns_leave(saved_ns);
		json_object_object_add(js, "ports", jp);
		json_add_u64(js, "ub_ethertype", cfg.ub_ethertype);
		json_add_u64(js, "rt", cfg.rt);
		json_add_u64(js, "vl", cfg.vl);
		json_add_u64(js, "default_pid", cfg.default_pid);
		json_add_u64(js, "default_perm", cfg.default_perm);
		jf = json_object_new_array();
		if (cfg.flags & UB2E_F_UNTAGGED)
			json_object_array_add(jf, json_object_new_string("untagged"));
		if (cfg.flags & UB2E_F_STRICT_VLAN)
			json_object_array_add(jf, json_object_new_string("strict"));
		if (cfg.flags & UB2E_F_NO_TTL_DEC)
			json_object_array_add(jf, json_object_new_string("no-ttl-dec"));
		if (cfg.flags & UB2E_F_CAQM_TAG)
			json_object_array_add(jf, json_object_new_string("caqm-tag"));
		json_object_object_add(js, "flags", jf);
		if (cfg.flags & UB2E_F_CAQM_TAG)
			json_add_u64(js, "caqm_ethertype", cfg.caqm_ethertype);
		json_add_str(js, "cci_policy", cfg.cci_policy == UB2E_CCI_DROP ? "drop" : "forward");
		json_print(js);
		close(fd);
		close(tx_ub);
		close(tx_ip);
		return 0;
	}
	printf("ub2e instance %s\n", pin_display(dir));
	print_ports("UB-side", tx_ub, NULL);
	print_ports("IP-side", tx_ip, NULL);
	netns_leave(saved_ns);
	printf("  ub-ethertype 0x%04x  rt %u  vl %u  default NPI %u/%u  flags:%s%s%s%s\n",
	       cfg.ub_ethertype, cfg.rt, cfg.vl, cfg.default_pid, cfg.default_perm,
	       cfg.flags & UB2E_F_UNTAGGED ? " untagged" : "",
	       cfg.flags & UB2E_F_STRICT_VLAN ? " strict" : "",
	       cfg.flags & UB2E_F_NO_TTL_DEC ? " no-ttl-dec" : "",
	       cfg.flags & UB2E_F_CAQM_TAG ? " caqm-tag" : "");
	if (cfg.flags & UB2E_F_CAQM_TAG)
		printf("  caqm-ethertype 0x%04x\n", cfg.caqm_ethertype);
	printf("  FECN->ECN %u %u %u %u  ECN->FECN %u %u %u %u  non-FECN CCI: %s\n",
	       cfg.fecn_to_ecn[0], cfg.fecn_to_ecn[1], cfg.fecn_to_ecn[2], cfg.fecn_to_ecn[3],
	       cfg.ecn_to_fecn[0], cfg.ecn_to_fecn[1], cfg.ecn_to_fecn[2], cfg.ecn_to_fecn[3],
	       cfg.cci_policy == UB2E_CCI_DROP ? "drop" : "forward");
	close(fd);
	close(tx_ub);
	close(tx_ip);
	return 0;
}

/* Each subcommand: its options, then what it does. */
static int ub2e_run(const struct optab_cmd *c, int (*fn)(struct ub2e_args *), int argc, char **argv)
{
	struct ub2e_args a = {};
	int rc = parse_args(c, argc, argv, &a);

	if (!rc)
		rc = fn(&a);
	free(a.plan);
	return OPTAB_STATUS(rc);
}

static int ub2e_attach(int argc, char **argv)
{
	return ub2e_run(&attach_cmd, ub2e_do_attach, argc, argv);
}

static int ub2e_detach(int argc, char **argv)
{
	return ub2e_run(&detach_cmd, do_detach, argc, argv);
}

static int ub2e_status(int argc, char **argv)
{
	return ub2e_run(&status_cmd, do_status, argc, argv);
}

static int ub2e_map(int argc, char **argv)
{
	const char *verb = argv[0];

	return ub2e_run(!strcmp(verb, "add") ? &map_add_cmd : !strcmp(verb, "del") ? &map_del_cmd : &map_list_cmd,
			do_map, argc, argv);
}
