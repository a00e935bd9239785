// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl ub2e: attach/detach/status of the UB2E switch and its NPI<->VLAN table.
 *
 * An instance is a directory on bpffs holding the pinned maps and programs.
 * Everything that can fail is checked before anything is attached, and an
 * attach that fails half way is rolled back, so a failed command leaves the
 * system as it found it.
 */
#include <errno.h>
#include <getopt.h>
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

#include "ub2e.skel.h"
#include "ub2e_cfg.h"
#include "npimap.h"
#include "ubctl.h"
#include "ub2e_pins.h"
#include "ub2e_tables.h"
#include "ub2e_tc.h"

static const struct pin_name {
	const char *file;
	size_t map_off;	/* offsetof the map pointer in the skeleton's maps struct */
} map_pins[] = {
	{ UB2E_PIN_CFG, offsetof(struct ub2e, maps.ub2e_cfg) },
	{ UB2E_PIN_STATS, offsetof(struct ub2e, maps.ub2e_stats) },
	{ UB2E_PIN_NPI2VLAN, offsetof(struct ub2e, maps.ub2e_npi2vlan) },
	{ UB2E_PIN_VLAN2NPI, offsetof(struct ub2e, maps.ub2e_vlan2npi) },
	{ UB2E_PIN_TX_IP, offsetof(struct ub2e, maps.ub2e_tx_ip) },
	{ UB2E_PIN_TX_UB, offsetof(struct ub2e, maps.ub2e_tx_ub) },
};

static struct bpf_map *skel_map(struct ub2e *skel, const struct pin_name *p)
{
	return *(struct bpf_map **)((char *)skel + p->map_off);
}

static int open_pinned(const char *dir, const char *file)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	return bpf_obj_get(p);
}

/* ---- option parsing shared by the subcommands ------------------------------ */

enum {
	OPT_UB_DEV = 1000, OPT_IP_DEV, OPT_NAME, OPT_PIN_PATH, OPT_GENERIC, OPT_MAP,
	OPT_PARTITION, OPT_JSON, OPT_CFG,
};

static const struct option attach_opts[] = {
	{ "ub-dev", required_argument, 0, OPT_UB_DEV },
	{ "ip-dev", required_argument, 0, OPT_IP_DEV },
	{ "name", required_argument, 0, OPT_NAME },
	{ "pin-path", required_argument, 0, OPT_PIN_PATH },
	{ "generic", no_argument, 0, OPT_GENERIC },
	{ "map", required_argument, 0, OPT_MAP },
	{ "partition", required_argument, 0, OPT_PARTITION },
	{ "json", no_argument, 0, OPT_JSON },
	/* Passed to ub2e_cfg_set() by name. */
	{ "untagged", no_argument, 0, OPT_CFG },
	{ "strict", no_argument, 0, OPT_CFG },
	{ "no-ttl-dec", no_argument, 0, OPT_CFG },
	{ "light-ce", required_argument, 0, OPT_CFG },
	{ "markable", required_argument, 0, OPT_CFG },
	{ "ce-to", required_argument, 0, OPT_CFG },
	{ "ect1-to", required_argument, 0, OPT_CFG },
	{ "cci-policy", required_argument, 0, OPT_CFG },
	{ "rt", required_argument, 0, OPT_CFG },
	{ "vl", required_argument, 0, OPT_CFG },
	{ "ub-ethertype", required_argument, 0, OPT_CFG },
	{ "default-pid", required_argument, 0, OPT_CFG },
	{ "default-perm", required_argument, 0, OPT_CFG },
	{ 0 },
};

struct ub2e_args {
	struct instance_sel sel;
	struct ub2e_cfg cfg;
	bool generic, json;
	struct npimap_entry *plan;
	size_t nplan;
	char **rest;		/* positional arguments */
	int nrest;
};

static int parse_args(int argc, char **argv, struct ub2e_args *a, bool allow_cfg)
{
	char err[256];
	int c, idx;

	ub2e_cfg_defaults(&a->cfg);
	a->plan = calloc(UB2E_MAX_NPI_ENTRIES, sizeof(*a->plan));
	if (!a->plan)
		return fail(EXIT_FAIL, "out of memory");
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", attach_opts, &idx)) != -1) {
		switch (c) {
		case OPT_UB_DEV: a->sel.ub_dev = optarg; break;
		case OPT_IP_DEV: a->sel.ip_dev = optarg; break;
		case OPT_NAME: a->sel.name = optarg; break;
		case OPT_PIN_PATH: a->sel.pin_path = optarg; break;
		case OPT_GENERIC: a->generic = true; break;
		case OPT_JSON: a->json = true; break;
		case OPT_MAP:
		case OPT_PARTITION:
			if (a->nplan == UB2E_MAX_NPI_ENTRIES)
				return fail(EXIT_USAGE, "more than %d mapping entries", UB2E_MAX_NPI_ENTRIES);
			if (npimap_parse(optarg, &a->plan[a->nplan], err, sizeof(err)))
				return fail(EXIT_USAGE, "--%s %s", attach_opts[idx].name, err);
			if (c == OPT_MAP && a->plan[a->nplan].truncated)
				return fail(EXIT_USAGE, "--map %s: give PID=VLAN (use --partition for the 12-bit default)", optarg);
			if (c == OPT_PARTITION && !a->plan[a->nplan].truncated)
				return fail(EXIT_USAGE, "--partition %s: give a bare Partition ID (use --map for PID=VLAN)", optarg);
			a->nplan++;
			break;
		case OPT_CFG:
			if (!allow_cfg)
				return fail(EXIT_USAGE, "--%s is an attach option", attach_opts[idx].name);
			if (ub2e_cfg_set(&a->cfg, attach_opts[idx].name, optarg, err, sizeof(err)))
				return fail(EXIT_USAGE, "%s", err);
			break;
		case '?':
		default:
			if (optopt)
				return fail(EXIT_USAGE, "option needs a value or is unknown: %s", argv[optind - 1]);
			return fail(EXIT_USAGE, "unknown option %s (see ubctl help)", argv[optind - 1]);
		}
	}
	a->rest = argv + optind;
	a->nrest = argc - optind;
	return 0;
}

/* ---- attach ---------------------------------------------------------------- */

static int check_dev(const char *opt, const char *dev, unsigned *ifindex)
{
	__u32 prog_id = 0;

	if (!dev)
		return fail(EXIT_USAGE, "ub2e attach needs --%s DEV", opt);
	*ifindex = if_nametoindex(dev);
	if (!*ifindex)
		return fail(EXIT_FAIL, "--%s %s: no such network device", opt, dev);
	if (!bpf_xdp_query_id((int)*ifindex, 0, &prog_id) && prog_id)
		return fail(EXIT_FAIL, "%s already has an XDP program (id %u); detach it first", dev, prog_id);
	return 0;
}

static void warn_forwarding(const char *dev)
{
	char p[128];
	FILE *f;
	int v = 1;

	snprintf(p, sizeof(p), "/proc/sys/net/ipv4/conf/%s/forwarding", dev);
	f = fopen(p, "r");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 1;
		fclose(f);
	}
	if (!v)
		warnx_("IPv4 forwarding is off on %s: bpf_fib_lookup will not forward (sysctl net.ipv4.conf.all.forwarding=1)", dev);
}

static int attach_err(const char *dev, int err, bool generic)
{
	if (err == -EPERM || err == -EACCES)
		return fail(EXIT_FAIL, "attach to %s: permission denied (needs root: CAP_BPF, CAP_NET_ADMIN)", dev);
	if (!generic && (err == -EOPNOTSUPP || err == -EINVAL))
		return fail(EXIT_FAIL, "native XDP refused by %s (%s): retry with --generic", dev, strerror(-err));
	return fail(EXIT_FAIL, "attach to %s: %s", dev, strerror(-err));
}

static int do_attach(struct ub2e_args *a)
{
	unsigned ub_if, ip_if;
	__u32 flags = XDP_FLAGS_UPDATE_IF_NOEXIST | (a->generic ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);
	char dir[PATH_MAX], err[512], p[PATH_MAX];
	struct ub2e *skel = NULL;
	struct stat st;
	__u32 zero = 0;
	int rc, tc_in = -1, tc_ub = -1, tc_ip = -1;

	if ((rc = check_dev("ub-dev", a->sel.ub_dev, &ub_if)) || (rc = check_dev("ip-dev", a->sel.ip_dev, &ip_if)))
		return rc;
	if (ub_if == ip_if)
		return fail(EXIT_USAGE, "--ub-dev and --ip-dev must be different devices");
	if (npimap_check(a->plan, a->nplan, err, sizeof(err)))
		return fail(EXIT_USAGE, "refusing mapping: %s", err);
	if (pin_instance_dir("ub2e", &a->sel, false, dir, sizeof(dir), err, sizeof(err)))
		return fail(EXIT_FAIL, "%s", err);
	if (!stat(dir, &st))
		return fail(EXIT_FAIL, "an instance is already pinned at %s: detach it first", pin_display(dir));

	skel = ub2e__open();
	if (!skel)
		return fail(EXIT_FAIL, "cannot open the UB2E BPF object: %s", strerror(errno));
	rc = ub2e__load(skel);
	if (rc) {
		ub2e__destroy(skel);
		if (rc == -EPERM || rc == -EACCES)
			return fail(EXIT_FAIL, "loading BPF programs: permission denied (needs root: CAP_BPF, CAP_NET_ADMIN)");
		return fail(EXIT_FAIL, "loading BPF programs failed: %s (run with -v for the verifier log)", strerror(-rc));
	}

	/* XDP routes only frames addressed to the port (RFC 1812 §5.3.7). */
	if (ub2e_cfg_ports(&a->cfg, a->sel.ub_dev, a->sel.ip_dev)) {
		rc = fail(EXIT_FAIL, "reading the ports' MAC addresses: %s", strerror(errno));
		goto out;
	}
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_cfg), &zero, &a->cfg, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_tx_ip), &ip_if, &ip_if, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_tx_ub), &ub_if, &ub_if, BPF_ANY) ||
	    ub2e_tables_write(bpf_map__fd(skel->maps.ub2e_npi2vlan), bpf_map__fd(skel->maps.ub2e_vlan2npi),
			      a->plan, a->nplan)) {
		rc = fail(EXIT_FAIL, "filling the switch maps: %s", strerror(errno));
		goto out;
	}

	/* Pin before attaching, so an attached switch is always manageable. */
	if (pin_mkdir_p(dir)) {
		rc = fail(EXIT_FAIL, "cannot create %s: %s", dir, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < sizeof(map_pins) / sizeof(map_pins[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, map_pins[i].file);
		if (bpf_map__pin(skel_map(skel, &map_pins[i]), p)) {
			rc = fail(EXIT_FAIL, "pin %s: %s", p, strerror(errno));
			goto unpin;
		}
	}
	{
		const struct { const char *file; struct bpf_program *prog; } progs[] = {
			{ UB2E_PIN_PROG_TO_UBOE, skel->progs.ub2e_to_uboe },
			{ UB2E_PIN_PROG_TO_UB, skel->progs.ub2e_to_ub },
			{ UB2E_PIN_PROG_TC_INGRESS, skel->progs.ub2e_slow_in },
			{ UB2E_PIN_PROG_TC_EGRESS_IP, skel->progs.ub2e_slow_ip },
			{ UB2E_PIN_PROG_TC_EGRESS_UB, skel->progs.ub2e_slow_ub },
		};

		for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
			snprintf(p, sizeof(p), "%s/%s", dir, progs[i].file);
			if (bpf_program__pin(progs[i].prog, p)) {
				rc = fail(EXIT_FAIL, "pin %s: %s", p, strerror(errno));
				goto unpin;
			}
		}
	}

	/* The slow path first: from the moment XDP punts, TC converts what the kernel sends. */
	tc_in = bpf_program__fd(skel->progs.ub2e_slow_in);
	tc_ub = bpf_program__fd(skel->progs.ub2e_slow_ub);
	tc_ip = bpf_program__fd(skel->progs.ub2e_slow_ip);
	rc = ub2e_tc_attach(ub_if, tc_in, tc_ub);
	if (rc) {
		rc = fail(EXIT_FAIL, "attach TC to %s: %s", a->sel.ub_dev, strerror(-rc));
		goto unpin;
	}
	rc = ub2e_tc_attach(ip_if, tc_in, tc_ip);
	if (rc) {
		rc = fail(EXIT_FAIL, "attach TC to %s: %s", a->sel.ip_dev, strerror(-rc));
		goto untc_ub;
	}

	rc = bpf_xdp_attach((int)ub_if, bpf_program__fd(skel->progs.ub2e_to_uboe), flags, NULL);
	if (rc) {
		rc = attach_err(a->sel.ub_dev, rc, a->generic);
		goto untc;
	}
	rc = bpf_xdp_attach((int)ip_if, bpf_program__fd(skel->progs.ub2e_to_ub), flags, NULL);
	if (rc) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = bpf_program__fd(skel->progs.ub2e_to_uboe));

		bpf_xdp_detach((int)ub_if, (flags & ~XDP_FLAGS_UPDATE_IF_NOEXIST) | XDP_FLAGS_REPLACE, &o);
		rc = attach_err(a->sel.ip_dev, rc, a->generic);
		goto untc;
	}
	warn_forwarding(a->sel.ub_dev);
	warn_forwarding(a->sel.ip_dev);
	printf("ub2e attached: %s (UB side) <-> %s (IP side), %s XDP, pinned at %s\n",
	       a->sel.ub_dev, a->sel.ip_dev, a->generic ? "generic" : "native", pin_display(dir));
	rc = 0;
	goto out;
untc:
	ub2e_tc_detach(ip_if, tc_in, tc_ip);
untc_ub:
	ub2e_tc_detach(ub_if, tc_in, tc_ub);
unpin:
	pin_remove_dir(dir);
out:
	ub2e__destroy(skel);
	return rc;
}

/* ---- detach ---------------------------------------------------------------- */

static __u32 prog_id_of(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* Detach `prog_fd` (XDP) and the TC pair from every device in `devmap_fd` where still attached. */
static int detach_from_ports(int devmap_fd, int prog_fd, int tc_in_fd, int tc_eg_fd)
{
	__u32 key, next, *prev = NULL, want = prog_id_of(prog_fd);
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
	char dir[PATH_MAX], err[512];
	int tx_ub, tx_ip, to_uboe, to_ub, tc_in, tc_ub, tc_ip, failures;

	if (pin_instance_dir("ub2e", &a->sel, true, dir, sizeof(dir), err, sizeof(err)))
		return fail(EXIT_FAIL, "%s", err);
	tx_ub = open_pinned(dir, UB2E_PIN_TX_UB);
	tx_ip = open_pinned(dir, UB2E_PIN_TX_IP);
	to_uboe = open_pinned(dir, UB2E_PIN_PROG_TO_UBOE);
	to_ub = open_pinned(dir, UB2E_PIN_PROG_TO_UB);
	tc_in = open_pinned(dir, UB2E_PIN_PROG_TC_INGRESS);
	tc_ub = open_pinned(dir, UB2E_PIN_PROG_TC_EGRESS_UB);
	tc_ip = open_pinned(dir, UB2E_PIN_PROG_TC_EGRESS_IP);
	if (tx_ub < 0 || tx_ip < 0 || to_uboe < 0 || to_ub < 0 || tc_in < 0 || tc_ub < 0 || tc_ip < 0)
		return fail(EXIT_FAIL, "%s is not a complete ub2e instance (%s)", dir, strerror(errno));
	failures = detach_from_ports(tx_ub, to_uboe, tc_in, tc_ub) + detach_from_ports(tx_ip, to_ub, tc_in, tc_ip);
	close(tc_in);
	close(tc_ub);
	close(tc_ip);
	close(tx_ub);
	close(tx_ip);
	close(to_uboe);
	close(to_ub);
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

	if (strcmp(verb, "add") && strcmp(verb, "del") && strcmp(verb, "list"))
		return fail(EXIT_USAGE, "ub2e map needs add|del|list");
	if (pin_instance_dir("ub2e", &a->sel, true, dir, sizeof(dir), err, sizeof(err)))
		return fail(EXIT_FAIL, "%s", err);
	npi_fd = open_pinned(dir, UB2E_PIN_NPI2VLAN);
	vlan_fd = open_pinned(dir, UB2E_PIN_VLAN2NPI);
	if (npi_fd < 0 || vlan_fd < 0)
		return fail(EXIT_FAIL, "%s: mapping maps missing (%s)", dir, strerror(errno));
	cur = calloc(UB2E_MAX_NPI_ENTRIES * 2, sizeof(*cur));
	if (!cur)
		return fail(EXIT_FAIL, "out of memory");
	ub2e_tables_read(npi_fd, cur, UB2E_MAX_NPI_ENTRIES, &ncur);

	if (!strcmp(verb, "list")) {
		if (a->json)
			printf("[");
		for (size_t i = 0; i < ncur; i++) {
			if (a->json)
				printf("%s{\"pid\":%u,\"perm\":%s,\"vlan\":%u}", i ? "," : "", cur[i].pid,
				       cur[i].perm == NPIMAP_ANY_PERM ? "null" : cur[i].perm ? "1" : "0", cur[i].vlan);
			else
				printf("%s\n", npimap_format(&cur[i], buf, sizeof(buf)));
		}
		if (a->json)
			printf("]\n");
	} else if (!strcmp(verb, "add")) {
		struct npimap_entry e;

		if (a->nrest < 2)
			return fail(EXIT_USAGE, "ub2e map add PID[/PERM]=VLAN|PID ...");
		/* Validate the whole resulting table before writing any entry. */
		for (int i = 1; i < a->nrest; i++) {
			if (npimap_parse(a->rest[i], &e, err, sizeof(err)))
				return fail(EXIT_USAGE, "%s", err);
			if (ncur >= UB2E_MAX_NPI_ENTRIES)
				return fail(EXIT_FAIL, "mapping table full (%d entries)", UB2E_MAX_NPI_ENTRIES);
			cur[ncur++] = e;
		}
		if (npimap_check(cur, ncur, err, sizeof(err)))
			return fail(EXIT_FAIL, "refusing mapping: %s", err);
		if (ub2e_tables_write(npi_fd, vlan_fd, cur + ncur - (a->nrest - 1), (size_t)a->nrest - 1))
			return fail(EXIT_FAIL, "updating the mapping maps: %s", strerror(errno));
	} else {
		if (a->nrest < 2)
			return fail(EXIT_USAGE, "ub2e map del PID[/PERM] ...");
		for (int i = 1; i < a->nrest; i++) {
			struct npimap_entry e;

			/* Parse "PID[/PERM]" by giving it a dummy VLAN. */
			snprintf(buf, sizeof(buf), "%s=1", a->rest[i]);
			if (strchr(a->rest[i], '=') || npimap_parse(buf, &e, err, sizeof(err)))
				return fail(EXIT_USAGE, "ub2e map del: '%s' is not PID or PID/PERM", a->rest[i]);
			rc = ub2e_tables_del(npi_fd, vlan_fd, e.pid, e.perm);
			if (rc == -ENOENT)
				return fail(EXIT_FAIL, "ub2e map del: %s is not in the table", a->rest[i]);
			if (rc)
				return fail(EXIT_FAIL, "ub2e map del %s: %s", a->rest[i], strerror(-rc));
		}
	}
	free(cur);
	close(npi_fd);
	close(vlan_fd);
	return rc;
}

/* ---- status ------------------------------------------------------------------- */

static void print_ports(const char *side, int devmap_fd)
{
	__u32 key, next, *prev = NULL;

	while (!bpf_map_get_next_key(devmap_fd, prev, &next)) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		char name[IF_NAMESIZE] = "(gone)";

		key = next;
		prev = &key;
		if_indextoname(key, name);
		bpf_xdp_query((int)key, 0, &q);
		printf("  %s port: %s (ifindex %u), XDP %s prog %u\n", side, name, key,
		       q.attach_mode == XDP_ATTACHED_SKB ? "generic" :
		       q.attach_mode == XDP_ATTACHED_DRV ? "native" :
		       q.attach_mode ? "multi" : "none", q.prog_id);
	}
}

static int do_status(struct ub2e_args *a)
{
	char dir[PATH_MAX], err[512];
	struct ub2e_cfg cfg;
	__u32 zero = 0;
	int fd, tx_ub, tx_ip;

	if (pin_instance_dir("ub2e", &a->sel, true, dir, sizeof(dir), err, sizeof(err)))
		return fail(EXIT_FAIL, "%s", err);
	fd = open_pinned(dir, UB2E_PIN_CFG);
	tx_ub = open_pinned(dir, UB2E_PIN_TX_UB);
	tx_ip = open_pinned(dir, UB2E_PIN_TX_IP);
	if (fd < 0 || tx_ub < 0 || tx_ip < 0 || bpf_map_lookup_elem(fd, &zero, &cfg))
		return fail(EXIT_FAIL, "%s is not a complete ub2e instance", dir);
	printf("ub2e instance %s\n", pin_display(dir));
	print_ports("UB-side", tx_ub);
	print_ports("IP-side", tx_ip);
	printf("  ub-ethertype 0x%04x  rt %u  vl %u  default NPI %u/%u  flags:%s%s%s\n",
	       cfg.ub_ethertype, cfg.rt, cfg.vl, cfg.default_pid, cfg.default_perm,
	       cfg.flags & UB2E_F_UNTAGGED ? " untagged" : "",
	       cfg.flags & UB2E_F_STRICT_VLAN ? " strict" : "",
	       cfg.flags & UB2E_F_NO_TTL_DEC ? " no-ttl-dec" : "");
	printf("  FECN->ECN %u %u %u %u  ECN->FECN %u %u %u %u  non-FECN CCI: %s\n",
	       cfg.fecn_to_ecn[0], cfg.fecn_to_ecn[1], cfg.fecn_to_ecn[2], cfg.fecn_to_ecn[3],
	       cfg.ecn_to_fecn[0], cfg.ecn_to_fecn[1], cfg.ecn_to_fecn[2], cfg.ecn_to_fecn[3],
	       cfg.cci_policy == UB2E_CCI_DROP ? "drop" : "forward");
	close(fd);
	close(tx_ub);
	close(tx_ip);
	return 0;
}

int cmd_ub2e(int argc, char **argv)
{
	struct ub2e_args a = {};
	const char *verb = argc > 1 ? argv[1] : "";
	int rc;

	if (!strcmp(verb, "attach") || !strcmp(verb, "detach") || !strcmp(verb, "status") || !strcmp(verb, "map")) {
		rc = parse_args(argc - 1, argv + 1, &a, !strcmp(verb, "attach"));
		if (rc)
			return rc;
		if (strcmp(verb, "map") && a.nrest)
			return fail(EXIT_USAGE, "ub2e %s: unexpected argument '%s'", verb, a.rest[0]);
		if (!strcmp(verb, "attach"))
			rc = do_attach(&a);
		else if (!strcmp(verb, "detach"))
			rc = do_detach(&a);
		else if (!strcmp(verb, "status"))
			rc = do_status(&a);
		else
			rc = do_map(&a);
		free(a.plan);
		return rc;
	}
	return fail(EXIT_USAGE, "ub2e needs attach|detach|status|map (see ubctl help)");
}
