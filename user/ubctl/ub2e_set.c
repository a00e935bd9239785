// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl ub2e set: change a running switch's ICMP answer rate and burst and
 * its configuration (the FECN <-> ECN tables, CCI policy, RT, VL, default
 * NPI, strict and untagged) in its pinned maps, without bpftool hex. Every
 * option is checked, and the result as a whole, before anything is written:
 * a refusal is one line and changes nothing.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "lib/parse_num.h"
#include "lib/ub2e_cfg.h"
#include "ub2e_maps.h"
#include "io/ub2e_pins.h"
#include "ubctl/ubctl.h"

enum { S_NAME = 1, S_PIN_PATH, S_UB_DEV, S_IP_DEV, S_RATE, S_BURST, S_CFG, S_FLAG };

static const struct optab set_opts[] = {
	{ "name", "NAME", "the instance named NAME", S_NAME, 0 },
	{ "pin-path", "DIR", "the instance pinned at DIR", S_PIN_PATH, 0 },
	{ "ub-dev", "DEV", "the instance on this UB-side port (with --ip-dev)", S_UB_DEV, 0 },
	{ "ip-dev", "DEV", "... and this IP-side port", S_IP_DEV, 0 },
	{ "icmp-rate", "N", "the switch's own ICMP answers per second per port (0: no limit)", S_RATE, 0 },
	{ "icmp-burst", "N", "answers sent at once before the rate applies (1..)", S_BURST, 0 },
	{ "light-ce", "ce|ect0|ect1", "IP ECN written for FECN Light CE", S_CFG, 0 },
	{ "markable", "ect0|ect1", "IP ECN written for FECN Markable", S_CFG, 0 },
	{ "ce-to", "severe|light", "FECN written for IP CE", S_CFG, 0 },
	{ "ect1-to", "markable|light", "FECN written for IP ECT(1)", S_CFG, 0 },
	{ "cci-policy", "forward|drop", "native packets whose CCI is not in FECN mode", S_CFG, 0 },
	{ "rt", "0-3", "RT written into the LPH on UBoE -> UB", S_CFG, 0 },
	{ "vl", "0-15", "VL written into the LPH on UBoE -> UB", S_CFG, 0 },
	{ "default-pid", "PID", "NPI of untagged UBoE", S_CFG, 0 },
	{ "default-perm", "0|1", "its Permission", S_CFG, 0 },
	{ "strict", "on|off", "drop partitions and VLANs not in the table", S_FLAG, 0 },
	{ "untagged", "on|off", "UB -> UBoE sends untagged frames", S_FLAG, 0 },
	{ 0 },
};

static int ub2e_set(int argc, char **argv);

static const struct optab_cmd set_cmd = {
	.path = "ubctl ub2e set",
	.summary = "change a running switch: ICMP rate and burst, FECN/ECN tables, ...",
	.synopsis = "[--name NAME | --pin-path DIR | --ub-dev DEV --ip-dev DEV] [OPTIONS]",
	.about = "Writes the given values into the running instance's pinned maps (cfg; icmp_limit\n"
		 "for every port). Each value means what the attach option of that name means.\n"
		 "Every option, and the configuration they make, is checked first: a refusal\n"
		 "(exit 2, or 3 for no such instance) changes nothing. The only instance when none\n"
		 "is named. bpftool still reads and writes the same maps (docs/UB2E.md).",
	.opts = set_opts,
	.run = ub2e_set,
};

const struct optab_cmd *const ub2e_set_cmds[] = { &set_cmd, NULL };

struct set_args {
	struct instance_sel sel;
	struct ub2e_cfg cfg;		/* the changes, applied to a copy of the running one */
	const char *cfg_opt[32], *cfg_val[32];
	int ncfg;
	long rate, burst;		/* -1: unchanged */
};

static int set_opt(void *ctx, const struct optab *o, const char *v)
{
	struct set_args *a = ctx;
	uint64_t n;
	char err[256];

	switch (o->key) {
	case S_NAME: a->sel.name = v; break;
	case S_PIN_PATH: a->sel.pin_path = v; break;
	case S_UB_DEV: a->sel.ub_dev = v; break;
	case S_IP_DEV: a->sel.ip_dev = v; break;
	case S_RATE:
	case S_BURST:
		if (pn_uint(o->key == S_RATE ? "--icmp-rate" : "--icmp-burst", v, o->key == S_RATE ? 0 : 1,
			    o->key == S_RATE ? UB2E_ICMP_RATE_MAX : UB2E_ICMP_BURST_MAX, &n, err, sizeof(err)))
			return fail(EXIT_USAGE, "ub2e set: %s", err);
		*(o->key == S_RATE ? &a->rate : &a->burst) = (long)n;
		break;
	case S_FLAG:
		if (strcmp(v, "on") && strcmp(v, "off"))
			return fail(EXIT_USAGE, "ub2e set: --%s '%s': on or off", o->name, v);
		/* fall through */
	default:
		if (a->ncfg == 32)
			return fail(EXIT_USAGE, "ub2e set: too many options");
		a->cfg_opt[a->ncfg] = o->name;
		a->cfg_val[a->ncfg++] = v;
	}
	return 0;
}

/* The options onto cfg (read from the running switch). 0, or -1 with err. */
static int cfg_apply(const struct set_args *a, struct ub2e_cfg *cfg, char *err, size_t errlen)
{
	for (int i = 0; i < a->ncfg; i++) {
		const char *name = a->cfg_opt[i], *v = a->cfg_val[i];
		__u32 bit = !strcmp(name, "strict") ? UB2E_F_STRICT_VLAN : !strcmp(name, "untagged") ? UB2E_F_UNTAGGED : 0;

		if (bit) {
			cfg->flags = !strcmp(v, "on") ? cfg->flags | bit : cfg->flags & ~bit;
			continue;
		}
		if (ub2e_cfg_set(cfg, name, v, err, errlen))
			return -1;
	}
	return ub2e_cfg_check(cfg, err, errlen);
}

/* Rate and burst of every port's bucket, its fill kept (at most the new burst). */
static int icmp_write(int fd, const struct set_args *a)
{
	__u32 key, next, *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct ub2e_icmp_limit l;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem_flags(fd, &key, &l, BPF_F_LOCK))
			return -1;
		if (a->rate >= 0)
			l.rate = (__u32)a->rate;
		if (a->burst >= 0)
			l.burst = (__u32)a->burst;
		if (l.credit > (__u64)l.burst * UB2E_NSEC_PER_SEC)
			l.credit = (__u64)l.burst * UB2E_NSEC_PER_SEC;
		if (bpf_map_update_elem(fd, &key, &l, BPF_F_LOCK | BPF_EXIST))
			return -1;
	}
	return 0;
}

static int ub2e_set(int argc, char **argv)
{
	struct set_args a = { .rate = -1, .burst = -1 };
	char dir[PATH_MAX], err[512];
	struct ub2e_cfg cfg;
	__u32 zero = 0;
	int cfd = -1, lfd = -1, rc = optab_parse(&set_cmd, argc, argv, set_opt, &a, NULL);

	if (rc)
		return OPTAB_STATUS(rc);
	if (!a.ncfg && a.rate < 0 && a.burst < 0)
		return fail(EXIT_USAGE, "ub2e set: nothing to set (see ubctl ub2e set --help)");
	if (!a.sel.ub_dev != !a.sel.ip_dev)
		return fail(EXIT_USAGE, "ub2e set: --ub-dev and --ip-dev go together");
	rc = pin_instance_dir("ub2e", &a.sel, true, dir, sizeof(dir), err, sizeof(err));
	if (rc)
		return fail(rc, "%s", err);
	cfd = pin_open(dir, UB2E_PIN_CFG);
	lfd = pin_open(dir, UB2E_PIN_ICMP_LIMIT);
	if (cfd < 0 || lfd < 0 || bpf_map_lookup_elem(cfd, &zero, &cfg)) {
		rc = fail(UB_EXIT_NOTFOUND, "%s is not a complete ub2e instance (%s)", pin_display(dir), strerror(errno));
		goto out;
	}
	if (cfg.version != UB2E_CFG_VERSION) {
		rc = fail(UB_EXIT_CONFLICT, "%s was attached by another ubctl (cfg layout %u, this one writes %u): "
			  "nothing changed", pin_display(dir), cfg.version, UB2E_CFG_VERSION);
		goto out;
	}
	if (cfg_apply(&a, &cfg, err, sizeof(err))) {
		rc = fail(EXIT_USAGE, "ub2e set: %s; nothing changed", err);
		goto out;
	}
	/* All checked: the configuration first, then the buckets. */
	if (a.ncfg && bpf_map_update_elem(cfd, &zero, &cfg, BPF_EXIST)) {
		rc = fail(EXIT_FAIL, "writing %s/%s: %s", pin_display(dir), UB2E_PIN_CFG, strerror(errno));
		goto out;
	}
	if ((a.rate >= 0 || a.burst >= 0) && icmp_write(lfd, &a)) {
		rc = fail(EXIT_FAIL, "writing %s/%s: %s", pin_display(dir), UB2E_PIN_ICMP_LIMIT, strerror(errno));
		goto out;
	}
	printf("ub2e %s: set\n", pin_display(dir));
	rc = 0;
out:
	if (cfd >= 0)
		close(cfd);
	if (lfd >= 0)
		close(lfd);
	return rc;
}
