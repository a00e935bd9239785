// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl wps ingress rule add|del|change|list: the classification rules of an
 * instance, kept packed from slot 0 in the rules map (the program stops at
 * the first unused slot); every change moves cfg.rules_gen, so that flows
 * classified under the old rules are classified again.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>

#include "wps/wps_cfg.h"
#include "ubctl/wps_ingress_int.h"

static int rule_add(int argc, char **argv);
static int rule_del(int argc, char **argv);
static int rule_change(int argc, char **argv);
static int rule_list(int argc, char **argv);

#define RULE_MATCH \
	{ "dev", "DEV", "the instance's port (required)", 'd', 0 }, \
	{ "dst", "PREFIX", "destination prefix, IPv4 or IPv6 (required)", 'D', 0 }, \
	{ "src", "PREFIX", "source prefix, of the same family (default: any)", 'S', 0 }, \
	{ "proto", "tcp|udp|sctp|N", "IP protocol (default: any)", 'p', 0 }, \
	{ "dport", "PORT", "destination port, with --proto tcp, udp or sctp", 'P', 0 }

static const struct optab rule_add_opts[] = {
	RULE_MATCH,
	{ "quantum", "N|Nb|TIME", "a group: N wire packets, N inner bytes (Nb), or a time from\n"
	  "the group's first packet (500us, 2ms) (required)", 'q', 0 },
	{ "no-reorder", NULL, "R = 0: the egress does not reorder the rule's flows", 'r', 0 },
	{ "sched", "rr|weighted|least-loaded", "how groups choose paths: round-robin (default), by\n"
	  "path add --weight, or the path with the fewest bytes in the last\n"
	  "--load-window", 's', 0 },
	{ 0 },
}, rule_del_opts[] = {
	RULE_MATCH,
	{ 0 },
};

static const struct optab_cmd rule_cmd_grp = {
	.path = "ubctl wps ingress rule",
	.summary = "the classification rules: which flows are sprayed, and how",
	.about = "Overlapping rules are refused (same family, proto and port compatible, both\n"
		 "prefixes intersecting).",
}, rule_add_cmd = {
	.path = "ubctl wps ingress rule add",
	.summary = "add a rule",
	.synopsis = "--dev DEV --dst PREFIX [--src PREFIX] [--proto P [--dport PORT]] --quantum Q\n"
		    "    [--no-reorder] [--sched rr|weighted|least-loaded]",
	.opts = rule_add_opts,
	.run = rule_add,
}, rule_del_cmd = {
	.path = "ubctl wps ingress rule del",
	.summary = "delete the rule that matches the same packets",
	.synopsis = "--dev DEV --dst PREFIX [--src PREFIX] [--proto P] [--dport PORT]",
	.opts = rule_del_opts,
	.run = rule_del,
}, rule_change_cmd = {
	.path = "ubctl wps ingress rule change",
	.summary = "change the quantum, scheduler or reordering of a rule, in place",
	.synopsis = "--dev DEV --dst PREFIX [--src PREFIX] [--proto P [--dport PORT]] --quantum Q\n"
		    "    [--no-reorder] [--sched rr|weighted|least-loaded]",
	.about = "The rule that matches the same packets (--dst, --src, --proto, --dport) becomes\n"
		 "the one given, keeping its place in the order; flows classified under it take\n"
		 "the new one at their next group. Refused (nothing changed) when no rule matches\n"
		 "(exit 3) or the rule is wrong (exit 2).",
	.opts = rule_add_opts,
	.run = rule_change,
}, rule_list_cmd = {
	.path = "ubctl wps ingress rule list",
	.summary = "the rules, in the order they match",
	.synopsis = "--dev DEV",
	.opts = wps_in_dev_opts,
	.run = rule_list,
};

const struct optab_cmd *const wps_ingress_rule_cmds[] = {
	&rule_cmd_grp, &rule_add_cmd, &rule_del_cmd, &rule_change_cmd, &rule_list_cmd, NULL,
};

static int read_rules(int fd, struct wps_in_rule *r, int *n)
{
	*n = 0;
	for (__u32 i = 0; i < WPS_IN_MAX_RULES; i++) {
		if (bpf_map_lookup_elem(fd, &i, &r[i]))
			return -1;
		if (r[i].used)
			*n = (int)i + 1;
		else
			break;
	}
	return 0;
}

/*
 * After the rules changed: flows keep the rule they were classified under
 * while cfg.rules_gen stays, so it moves (cfg read afresh: only this field
 * is ours to change here).
 */
static int rules_changed(struct wps_in_inst *in)
{
	struct wps_in_rule rules[WPS_IN_MAX_RULES];
	__u32 zero = 0;
	int n;

	if (bpf_map_lookup_elem(in->cfg_fd, &zero, &in->cfg) || read_rules(in->rules_fd, rules, &n))
		return -1;
	in->cfg.rules_gen++;
	wps_in_cfg_sync_rules(&in->cfg, rules, n);
	return bpf_map_update_elem(in->cfg_fd, &zero, &in->cfg, BPF_ANY);
}

/* The rule's options, as wps_rule_parse() reads them: "--name" "value" pairs. */
struct rule_args {
	const char *dev;
	char *rest[64], name[64][32];
	int nrest;
};

static int rule_opt(void *ctx, const struct optab *o, const char *v)
{
	struct rule_args *a = ctx;

	if (o->key == 'd') {
		a->dev = v;
		return 0;
	}
	if (a->nrest + 2 > 64)
		return fail(EXIT_USAGE, "wps ingress rule: too many options");
	snprintf(a->name[a->nrest], sizeof(a->name[0]), "--%s", o->name);
	a->rest[a->nrest] = a->name[a->nrest];
	a->nrest++;
	if (v)
		a->rest[a->nrest++] = (char *)v;
	return 0;
}

/* Rule k (added or changed) written and announced: 0, or the exit status (said). */
static int rule_write(struct wps_in_inst *in, __u32 k, const struct wps_in_rule *nr)
{
	char buf[512];

	if (bpf_map_update_elem(in->rules_fd, &k, nr, BPF_ANY) || rules_changed(in))
		return fail(EXIT_FAIL, "writing rule: %s", strerror(errno));
	wps_rule_format(nr, buf, sizeof(buf));
	printf("rule %u: %s\n", k, buf);
	return 0;
}

static int rule_cmd(const struct optab_cmd *c, int argc, char **argv)
{
	static struct rule_args args;
	const char *verb = strrchr(c->path, ' ') + 1, *dev;
	struct wps_in_rule rules[WPS_IN_MAX_RULES], nr;
	char **rest = args.rest, err[256], buf[512];
	int nrest, n, rc = optab_parse(c, argc, argv, rule_opt, &args, NULL);
	struct wps_in_inst in;

	if (rc)
		return OPTAB_STATUS(rc);
	dev = args.dev;
	nrest = args.nrest;
	rc = EXIT_FAIL;
	if (!dev)
		return fail(EXIT_USAGE, "wps ingress rule %s: --dev DEV is required", verb);
	if (!strcmp(verb, "add") || !strcmp(verb, "del") || !strcmp(verb, "change")) {
		if (wps_rule_parse(nrest, rest, &nr, err, sizeof(err))) {
			/* del needs no quantum: match on the classifier alone */
			if (strcmp(verb, "del") || !strstr(err, "--quantum"))
				return fail(EXIT_USAGE, "%s", err);
		}
	}
	if ((rc = wps_in_inst_open(dev, &in)))
		goto out;
	if (read_rules(in.rules_fd, rules, &n)) {
		rc = fail(EXIT_FAIL, "reading rules: %s", strerror(errno));
		goto out;
	}
	if (!strcmp(verb, "list")) {
		for (int i = 0; i < n; i++) {
			wps_rule_format(&rules[i], buf, sizeof(buf));
			printf("%d: %s\n", i, buf);
		}
		rc = 0;
		goto out;
	}
	if (!strcmp(verb, "add")) {
		if (!in.cfg.ecmp && !in.cfg.npaths) {
			rc = fail(EXIT_USAGE, "%s has no member path: add one first (wps ingress path add)", dev);
			goto out;
		}
		for (int i = 0; i < n; i++)
			if (wps_rules_overlap(&rules[i], &nr)) {
				wps_rule_format(&rules[i], buf, sizeof(buf));
				rc = fail(UB_EXIT_CONFLICT, "rule overlaps rule %d (%s)", i, buf);
				goto out;
			}
		if (n >= WPS_IN_MAX_RULES) {
			rc = fail(UB_EXIT_CONFLICT, "%d rules already: the most a WPS ingress has", WPS_IN_MAX_RULES);
			goto out;
		}
		rc = rule_write(&in, (__u32)n, &nr);
		goto out;
	}
	for (int i = 0; i < n && !strcmp(verb, "change"); i++) {
		if (!wps_rule_same_match(&rules[i], &nr))
			continue;
		rc = rule_write(&in, (__u32)i, &nr);
		goto out;
	}
	for (int i = 0; i < n && strcmp(verb, "change"); i++) {
		if (!wps_rule_same_match(&rules[i], &nr))
			continue;
		/* Close the gap from the end backwards: the program stops at the first unused slot. */
		for (int j = i; j + 1 < n; j++) {
			__u32 k = (__u32)j;

			bpf_map_update_elem(in.rules_fd, &k, &rules[j + 1], BPF_ANY);
		}
		struct wps_in_rule empty = {};
		__u32 last = (__u32)n - 1;
		bpf_map_update_elem(in.rules_fd, &last, &empty, BPF_ANY);
		if (rules_changed(&in)) {
			rc = fail(EXIT_FAIL, "writing %s/cfg: %s", pin_display(in.dir), strerror(errno));
			goto out;
		}
		printf("rule %d removed; %d left\n", i, n - 1);
		rc = 0;
		goto out;
	}
	rc = fail(UB_EXIT_NOTFOUND, "no rule with that --dst/--src/--proto/--dport");
out:
	wps_in_inst_close(&in);
	return rc;
}

static int rule_add(int argc, char **argv) { return rule_cmd(&rule_add_cmd, argc, argv); }
static int rule_del(int argc, char **argv) { return rule_cmd(&rule_del_cmd, argc, argv); }
static int rule_change(int argc, char **argv) { return rule_cmd(&rule_change_cmd, argc, argv); }
static int rule_list(int argc, char **argv) { return rule_cmd(&rule_list_cmd, argc, argv); }
