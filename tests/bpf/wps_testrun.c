// SPDX-License-Identifier: BSD-2-Clause
/*
 * Runs the scapy-made WPS fixtures (tests/bpf/fixtures/wps.txt, made by
 * gen_wps_fixtures.py) through BPF_PROG_TEST_RUN (TC) and prints TAP, in the
 * fixture format of ub2e_testrun.c extended with sequences: a case is a
 * configuration (attach options, paths, rules) and one or more packets, each
 * with its verdict and output, run in order on fresh programs and maps; then
 * the counters that moved over the whole case.
 *
 *   case NAME
 *   prog ingress|seg|boundary_in|boundary_out
 *   opts --node-id 1 ...           (ubctl wps ingress attach options)
 *   path IFINDEX SMAC DMAC [MTU [WEIGHT]]
 *   rule --dst ... --quantum ...    (ubctl wps ingress rule add options)
 *   in HEX                          (starts a packet)
 *   ctx now=NS gso_segs=N gso_size=N
 *   verdict TC_ACT_OK|TC_ACT_SHOT|TC_ACT_REDIRECT
 *   out HEX
 *   count NAME[=N] ...              (all other counters must not move)
 *   end
 *
 *   wps_testrun FIXTURES...
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include "wps_ingress.skel.h"
#include "wps_boundary.skel.h"
#include "wps_cfg.h"

#define MAX_PKT 4096
#define MAX_STEPS 64
#define MAX_LINES 16

struct step {
	unsigned char in[MAX_PKT], out[MAX_PKT];
	size_t in_len, out_len;
	bool has_out;
	char verdict[32];
	unsigned long long now;
	unsigned gso_segs, gso_size;
};

struct fixture {
	char name[128];
	char prog[32];
	char opts[512];
	char paths[MAX_LINES][128];
	char rules[MAX_LINES][256];
	int npaths, nrules;
	struct step steps[MAX_STEPS];
	int nsteps;
	char counters[512];
	int line;
};

static int tap_n;

static int unhex(const char *s, unsigned char *buf, size_t *len)
{
	size_t n = strlen(s);

	if (n % 2 || n / 2 > MAX_PKT)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		buf[i] = (unsigned char)v;
	}
	*len = n / 2;
	return 0;
}

static const char *verdict_name(int v)
{
	switch (v) {
	case TC_ACT_OK: return "TC_ACT_OK";
	case TC_ACT_SHOT: return "TC_ACT_SHOT";
	case TC_ACT_REDIRECT: return "TC_ACT_REDIRECT";
	default: return "TC_ACT_?";
	}
}

static int split(char *s, char **argv, int max)
{
	int n = 0;
	char *save, *tok;

	for (tok = strtok_r(s, " ", &save); tok && n < max; tok = strtok_r(NULL, " ", &save))
		argv[n++] = tok;
	return n;
}

static int read_counters(int fd, unsigned n, __u64 *out)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 vals[1024];

	if (ncpu <= 0 || ncpu > 1024)
		return -1;
	for (__u32 i = 0; i < n; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, vals))
			return -1;
		for (int c = 0; c < ncpu; c++)
			out[i] += vals[c];
	}
	return 0;
}

/* Configure the ingress as the case's ubctl options say. */
static int configure(struct wps_ingress *sk, struct fixture *f, bool test_clock, char *err, size_t errlen)
{
	struct wps_in_cfg cfg;
	char buf[512], *argv[64];
	__u32 zero = 0;
	int argc;

	wps_in_cfg_defaults(&cfg);
	cfg.flags |= WPS_IN_F_TEST_GID0 | (test_clock ? WPS_IN_F_TEST_CLOCK : 0);
	snprintf(buf, sizeof(buf), "%s", f->opts);
	argc = split(buf, argv, 64);
	for (int i = 0; i < argc; i++) {
		const char *name = argv[i] + 2;
		int tv = wps_in_cfg_takes_value(name);

		if (!strcmp(name, "gid0") && i + 1 < argc) {
			cfg.test_gid0 = (__u32)strtoul(argv[++i], NULL, 0);
			continue;
		}
		if (!strcmp(name, "seg-ifindex") && i + 1 < argc) {
			cfg.seg_ifindex = (__u32)strtoul(argv[++i], NULL, 0);
			continue;
		}
		if (tv < 0) {
			snprintf(err, errlen, "unknown option '%s'", argv[i]);
			return -1;
		}
		if (wps_in_cfg_set(&cfg, name, tv ? (i + 1 < argc ? argv[++i] : NULL) : NULL, err, errlen))
			return -1;
	}
	cfg.npaths = (__u8)f->npaths;
	for (int i = 0; i < f->npaths; i++) {
		struct wps_in_path p = {};
		char *a[8];
		int n;
		unsigned long long mtu = 1500, w = 1;

		snprintf(buf, sizeof(buf), "%s", f->paths[i]);
		n = split(buf, a, 8);
		if (n < 3 || wps_parse_mac(a[1], p.smac, err, errlen) || wps_parse_mac(a[2], p.dmac, err, errlen))
			return -1;
		p.ifindex = (__u32)strtoul(a[0], NULL, 0);
		if (n > 3)
			mtu = strtoull(a[3], NULL, 0);
		if (n > 4)
			w = strtoull(a[4], NULL, 0);
		p.mtu = (__u16)mtu;
		cfg.weight[i] = (__u8)w;
		if (!cfg.path_mtu || p.mtu < cfg.path_mtu)
			cfg.path_mtu = p.mtu;
		__u32 k = (__u32)i;
		if (bpf_map_update_elem(bpf_map__fd(sk->maps.wps_in_paths), &k, &p, BPF_ANY))
			return -1;
	}
	for (int i = 0; i < f->nrules; i++) {
		struct wps_in_rule r;
		__u32 k = (__u32)i;
		int n;

		snprintf(buf, sizeof(buf), "%s", f->rules[i]);
		n = split(buf, argv, 64);
		if (wps_rule_parse(n, argv, &r, err, errlen))
			return -1;
		if (bpf_map_update_elem(bpf_map__fd(sk->maps.wps_in_rules), &k, &r, BPF_ANY))
			return -1;
	}
	return bpf_map_update_elem(bpf_map__fd(sk->maps.wps_in_cfg), &zero, &cfg, BPF_ANY);
}

static void hexdump_diff(const unsigned char *want, size_t wlen, const unsigned char *got, size_t glen)
{
	size_t n = wlen > glen ? wlen : glen;

	printf("#   want %zu bytes, got %zu bytes\n", wlen, glen);
	for (size_t off = 0; off < n; off += 16) {
		bool differs = false;

		for (size_t i = off; i < off + 16 && i < n; i++)
			differs |= i >= wlen || i >= glen || want[i] != got[i];
		if (!differs)
			continue;
		printf("#   %04zx want:", off);
		for (size_t i = off; i < off + 16 && i < n; i++)
			printf(i < wlen ? " %02x" : " --", i < wlen ? want[i] : 0);
		printf("\n#   %04zx  got:", off);
		for (size_t i = off; i < off + 16 && i < n; i++)
			printf(i < glen ? " %02x" : " --", i < glen ? got[i] : 0);
		printf("\n");
	}
}

static bool run_case(struct fixture *f)
{
	bool bnd = !strncmp(f->prog, "boundary", 8), ok = true;
	struct wps_ingress *in = NULL;
	struct wps_boundary *bd = NULL;
	unsigned ncnt = bnd ? WPS_BND_CNT__MAX : WPS_IN_CNT__MAX;
	__u64 before[64], after[64], want[64] = {};
	int prog_fd, stats_fd;
	char err[256], buf[512], *save, *tok;
	bool test_clock = false;

	for (int s = 0; s < f->nsteps; s++)
		test_clock |= f->steps[s].now != 0;
	if (bnd) {
		bd = wps_boundary__open_and_load();
		if (!bd) {
			printf("#   wps_boundary load failed: %s\n", strerror(errno));
			return false;
		}
		prog_fd = bpf_program__fd(!strcmp(f->prog, "boundary_in") ? bd->progs.wps_boundary_in
									: bd->progs.wps_boundary_out);
		stats_fd = bpf_map__fd(bd->maps.wps_bnd_stats);
	} else {
		in = wps_ingress__open_and_load();
		if (!in) {
			printf("#   wps_ingress load failed: %s\n", strerror(errno));
			return false;
		}
		prog_fd = bpf_program__fd(!strcmp(f->prog, "seg") ? in->progs.wps_ingress_seg
								   : in->progs.wps_ingress);
		stats_fd = bpf_map__fd(in->maps.wps_in_stats);
		if (configure(in, f, test_clock, err, sizeof(err))) {
			printf("#   configuration: %s\n", err);
			ok = false;
			goto out;
		}
	}
	if (read_counters(stats_fd, ncnt, before)) {
		ok = false;
		goto out;
	}
	for (int s = 0; s < f->nsteps; s++) {
		struct step *st = &f->steps[s];
		unsigned char out[MAX_PKT + 256];
		struct __sk_buff ctx = {};

		if (in && st->now) {
			struct wps_in_cfg cfg;
			__u32 zero = 0;

			bpf_map_lookup_elem(bpf_map__fd(in->maps.wps_in_cfg), &zero, &cfg);
			cfg.test_now_ns = st->now;
			bpf_map_update_elem(bpf_map__fd(in->maps.wps_in_cfg), &zero, &cfg, BPF_ANY);
		}
		ctx.gso_segs = st->gso_segs;
		ctx.gso_size = st->gso_size;
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = st->in, .data_size_in = (__u32)st->in_len,
			    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = 1);
		if (bpf_prog_test_run_opts(prog_fd, &o)) {
			printf("#   packet %d: BPF_PROG_TEST_RUN failed: %s\n", s + 1, strerror(errno));
			ok = false;
			continue;
		}
		if (strcmp(verdict_name((int)o.retval), st->verdict)) {
			printf("#   packet %d: verdict: want %s, got %s (%d)\n", s + 1, st->verdict,
			       verdict_name((int)o.retval), (int)o.retval);
			ok = false;
		}
		if (st->has_out && (o.data_size_out != st->out_len || memcmp(out, st->out, st->out_len))) {
			printf("#   packet %d: output bytes differ\n", s + 1);
			hexdump_diff(st->out, st->out_len, out, o.data_size_out);
			ok = false;
		}
	}
	if (read_counters(stats_fd, ncnt, after)) {
		ok = false;
		goto out;
	}
	snprintf(buf, sizeof(buf), "%s", f->counters);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		unsigned long long n = 1;
		int i;

		if (eq) {
			*eq = '\0';
			n = strtoull(eq + 1, NULL, 0);
		}
		i = bnd ? wps_bnd_counter_id(tok) : wps_in_counter_id(tok);
		if (i < 0) {
			printf("#   unknown counter '%s'\n", tok);
			ok = false;
			continue;
		}
		want[i] = n;
	}
	for (unsigned i = 0; i < ncnt; i++) {
		__u64 d = after[i] - before[i];

		if (d != want[i]) {
			printf("#   counter %s moved by %llu, want %llu\n",
			       bnd ? wps_bnd_counter_name(i) : wps_in_counter_name(i), (unsigned long long)d,
			       (unsigned long long)want[i]);
			ok = false;
		}
	}
out:
	wps_ingress__destroy(in);
	wps_boundary__destroy(bd);
	return ok;
}

static int run_file(const char *path, int *failed)
{
	static char line[2 * MAX_PKT + 64];
	struct fixture *f = calloc(1, sizeof(*f));
	struct step *st = NULL;
	int lineno = 0;
	FILE *fp = fopen(path, "r");

	if (!fp || !f) {
		fprintf(stderr, "wps_testrun: %s: %s\n", path, strerror(errno));
		free(f);
		return -1;
	}
	while (fgets(line, sizeof(line), fp)) {
		char *v = strchr(line, ' ');

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		if (v)
			*v++ = '\0';
		else
			v = line + strlen(line);
		if (!strcmp(line, "case")) {
			memset(f, 0, sizeof(*f));
			snprintf(f->name, sizeof(f->name), "%s", v);
			f->line = lineno;
			st = NULL;
		} else if (!strcmp(line, "prog")) {
			snprintf(f->prog, sizeof(f->prog), "%s", v);
		} else if (!strcmp(line, "opts")) {
			snprintf(f->opts, sizeof(f->opts), "%s", v);
		} else if (!strcmp(line, "path") && f->npaths < MAX_LINES) {
			snprintf(f->paths[f->npaths++], sizeof(f->paths[0]), "%s", v);
		} else if (!strcmp(line, "rule") && f->nrules < MAX_LINES) {
			snprintf(f->rules[f->nrules++], sizeof(f->rules[0]), "%s", v);
		} else if (!strcmp(line, "in")) {
			if (f->nsteps == MAX_STEPS) {
				fprintf(stderr, "wps_testrun: %s:%d: too many packets\n", path, lineno);
				goto bad;
			}
			st = &f->steps[f->nsteps++];
			if (unhex(v, st->in, &st->in_len))
				goto badhex;
		} else if (st && !strcmp(line, "out")) {
			if (unhex(v, st->out, &st->out_len))
				goto badhex;
			st->has_out = true;
		} else if (st && !strcmp(line, "verdict")) {
			snprintf(st->verdict, sizeof(st->verdict), "%s", v);
		} else if (st && !strcmp(line, "ctx")) {
			char *save, *tok;

			for (tok = strtok_r(v, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
				if (!strncmp(tok, "now=", 4))
					st->now = strtoull(tok + 4, NULL, 0);
				else if (!strncmp(tok, "gso_segs=", 9))
					st->gso_segs = (unsigned)strtoul(tok + 9, NULL, 0);
				else if (!strncmp(tok, "gso_size=", 9))
					st->gso_size = (unsigned)strtoul(tok + 9, NULL, 0);
			}
		} else if (!strcmp(line, "count")) {
			snprintf(f->counters, sizeof(f->counters), "%s", v);
		} else if (!strcmp(line, "end")) {
			bool ok = run_case(f);

			printf("%sok %d - wps %s\n", ok ? "" : "not ", ++tap_n, f->name);
			fflush(stdout);
			*failed += !ok;
		} else {
			fprintf(stderr, "wps_testrun: %s:%d: unknown line '%s'\n", path, lineno, line);
			goto bad;
		}
	}
	fclose(fp);
	free(f);
	return 0;
badhex:
	fprintf(stderr, "wps_testrun: %s:%d: bad hex\n", path, lineno);
bad:
	fclose(fp);
	free(f);
	return -1;
}

int main(int argc, char **argv)
{
	struct wps_ingress *in;
	struct wps_boundary *bd;
	int failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: wps_testrun FIXTURES...\n");
		return 2;
	}
	in = wps_ingress__open_and_load();
	bd = wps_boundary__open_and_load();
	if (!in || !bd) {
		/* The verifier rejecting a program is a test failure, not a setup problem. */
		printf("not ok 1 - wps programs load (verifier): %s\n", strerror(errno));
		return 1;
	}
	printf("ok %d - wps programs load (verifier)\n", ++tap_n);
	wps_ingress__destroy(in);
	wps_boundary__destroy(bd);
	for (int i = 1; i < argc; i++)
		if (run_file(argv[i], &failed))
			failed++;
	return failed ? 1 : 0;
}
