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
 *   port IFINDEX ID                 (an --ingress-port IF=ID of attach)
 *   in HEX                          (starts a packet)
 *   ctx now=NS gso_segs=N gso_size=N down=MASK pmtu=N iif=IFINDEX cb0=N cb1=N cb2=N cb0_out=N
 *       weights=W,W... seg          (MASK: path slots set down; iif: the device it came in on;
 *                                   weights: cfg.weight by slot from this packet on; seg: this
 *                                   packet through wps_ingress_seg, the same maps, in a case of
 *                                   prog ingress)
 *   verdict TC_ACT_UNSPEC|TC_ACT_OK|TC_ACT_SHOT|TC_ACT_REDIRECT
 *   out HEX
 *   clone HEX                       (a frame the packet's run sent at once: bpf_clone_redirect)
 *   count NAME[=N] ...              (all other counters must not move)
 *   end
 *
 * The harness runs in a network namespace of its own whose lo is up: what a
 * program sends at once (bpf_clone_redirect to ifindex 1) goes out of that lo,
 * where a packet socket sees it, and no further.
 *
 *   wps_testrun [--fuzz-seed S] [--fuzz-count N] FIXTURES...
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include "wps_ingress.skel.h"
#include "wps_boundary.skel.h"
#include "wps/wps_cfg.h"
#include "lib/clock.h"
#include "fixture.h"

#define MAX_PKT FIXTURE_MAX_PKT
#define MAX_STEPS 160	/* an extended group's 128 lock-free packets and more */
#define MAX_LINES 16

struct step {
	unsigned char in[MAX_PKT], out[MAX_PKT];
	size_t in_len, out_len;
	bool has_out;
	char verdict[32];
	unsigned long long now;
	unsigned gso_segs, gso_size;
	long long down;		/* >= 0: the live map's admin_down before this packet */
	long long pmtu;		/* >= 0: its pmtu (what Packet Too Big taught) */
	__u8 weight[WPS_IN_MAX_PATHS];	/* cfg.weight[0..nweights-1] before this packet */
	int nweights;
	unsigned iif;		/* the device the packet came in on (skb->skb_iif) */
	unsigned cb0, cb1, cb2;	/* skb->cb[0], cb[1], cb[2] */
	bool seg;		/* through wps_ingress_seg */
	long long cb0_out;	/* >= 0: skb->cb[0] the program must leave */
	int nclones;		/* -1: not checked */
	unsigned char clone[4][MAX_PKT];
	size_t clone_len[4];
};

struct fixture {
	struct fixture_case c;	/* its in, out and verdict unused: each step has its own */
	char paths[MAX_LINES][128];
	char rules[MAX_LINES][256];
	unsigned ports[MAX_LINES][2];
	int npaths, nrules, nports;
	struct step steps[MAX_STEPS];
	int nsteps;
	struct step *st;	/* the step the lines being read are of */
};

/* The packet socket on lo that sees what the programs send at once (-1: none). */
static int g_lo_sock = -1;

static void lo_setup(void)
{
	struct sockaddr_ll sa = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = 1 };
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd;

	if (unshare(CLONE_NEWNET))
		return;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr))
		goto out;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr))
		goto out;
	g_lo_sock = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
	if (g_lo_sock >= 0 && bind(g_lo_sock, (struct sockaddr *)&sa, sizeof(sa))) {
		close(g_lo_sock);
		g_lo_sock = -1;
	}
out:
	if (fd >= 0)
		close(fd);
}

/* The next frame sent out of lo since the last call, or 0 when none is left. */
static size_t lo_next(unsigned char *buf, size_t len)
{
	for (;;) {
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(g_lo_sock, buf, len, 0, (struct sockaddr *)&from, &fl);

		if (n <= 0)
			return 0;
		if (from.sll_pkttype == PACKET_OUTGOING)
			return (size_t)n;
	}
}

/* What the ingress on DEV lets go on (passed, or sprayed out of DEV itself): no
 * verdict, the next program on the hook has its turn (bpf/wps_ingress.bpf.c). */
#define WPS_PASS	TC_ACT_UNSPEC

static const char *verdict_name(int v)
{
	switch (v) {
	case TC_ACT_UNSPEC: return "TC_ACT_UNSPEC";
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

/*
 * One loaded ingress for every case (loading it is the slow part, above all
 * under qemu), put back to its just-loaded state before each case.
 */
static struct wps_ingress *g_ingress;

static void clear_array(int fd, unsigned n, size_t vsize, bool percpu)
{
	int ncpu = libbpf_num_possible_cpus();
	void *zero = calloc(percpu ? (size_t)ncpu : 1, vsize + 8);

	for (__u32 k = 0; zero && k < n; k++)
		bpf_map_update_elem(fd, &k, zero, BPF_ANY);
	free(zero);
}

static struct wps_ingress *shared_ingress(void)
{
	struct wps_in_flow_key k;
	int fd;

	if (!g_ingress && !(g_ingress = wps_ingress__open_and_load()))
		return NULL;
	fd = bpf_map__fd(g_ingress->maps.wps_in_flows);
	while (!bpf_map_get_next_key(fd, NULL, &k))
		bpf_map_delete_elem(fd, &k);
	clear_array(bpf_map__fd(g_ingress->maps.wps_in_flow_hot), 2 * WPS_IN_MAX_FLOWS, sizeof(struct wps_in_flow_hot),
		    false);
	clear_array(bpf_map__fd(g_ingress->maps.wps_in_flow_state), 2 * WPS_IN_MAX_FLOWS, sizeof(struct wps_in_flow),
		    false);
	clear_array(bpf_map__fd(g_ingress->maps.wps_in_flow_det), 2 * WPS_IN_MAX_FLOWS,
		    sizeof(struct wps_in_flow_det), false);
	clear_array(bpf_map__fd(g_ingress->maps.wps_in_flow_cache), WPS_IN_MAX_FLOWS, sizeof(struct wps_in_fcache),
		    false);
	g_ingress->bss->slot_cursor = 0;
	clear_array(bpf_map__fd(g_ingress->maps.wps_in_fid_state), 256, sizeof(__u64), false);
	clear_array(bpf_map__fd(g_ingress->maps.wps_in_rules), WPS_IN_MAX_RULES, sizeof(struct wps_in_rule), false);
	clear_array(bpf_map__fd(g_ingress->maps.wps_in_paths), WPS_IN_MAX_PATHS, sizeof(struct wps_in_path), false);
	clear_array(bpf_map__fd(g_ingress->maps.wps_in_path_load), WPS_IN_MAX_PATHS,
		    sizeof(struct wps_in_path_load), false);
	clear_array(bpf_map__fd(g_ingress->maps.wps_in_path_stats), WPS_IN_MAX_PATHS,
		    sizeof(struct wps_in_path_stats), true);
	clear_array(bpf_map__fd(g_ingress->maps.wps_in_live), 1, sizeof(struct wps_in_live), false);
	clear_array(bpf_map__fd(g_ingress->maps.wps_in_ports), WPS_IN_PORTS, sizeof(struct wps_in_port), false);
	g_ingress->bss->fid_cursor = 0;
	g_ingress->bss->sweep_after = 0;	/* each case's test clock starts afresh */
	g_ingress->bss->clock_off = 0;
	return g_ingress;
}

/* Configure the ingress as the case's ubctl options say. */
static int configure(struct wps_ingress *sk, struct fixture *f, bool test_clock, char *err, size_t errlen)
{
	bool least = false;
	struct wps_in_cfg cfg;
	char buf[512], *argv[64];
	__u32 zero = 0;
	int argc;

	wps_in_cfg_defaults(&cfg);
	wps_in_cfg_tick(&cfg);	/* as attach sets it */
	cfg.flags |= WPS_IN_F_TEST_GID0 | (test_clock ? WPS_IN_F_TEST_CLOCK : 0);
	snprintf(buf, sizeof(buf), "%s", f->c.opts);
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
		if (r.sched == WPS_SCHED_LEAST_LOADED)
			least = true;
	}
	if (least)
		cfg.flags |= WPS_IN_F_LEAST_LOADED;
	if (f->nports)
		cfg.flags |= WPS_IN_F_PORTS_NAMED;
	for (int i = 0; i < f->nports; i++) {
		struct wps_in_port e = { .ifindex = f->ports[i][0], .id = (__u8)f->ports[i][1] };
		__u32 k = e.ifindex % WPS_IN_PORTS;

		if (bpf_map_update_elem(bpf_map__fd(sk->maps.wps_in_ports), &k, &e, BPF_ANY))
			return -1;
	}
	wps_in_cfg_sync_paths(&cfg);
	return bpf_map_update_elem(bpf_map__fd(sk->maps.wps_in_cfg), &zero, &cfg, BPF_ANY);
}

static bool run_case(void *rec)
{
	struct fixture *f = rec;
	bool bnd = !strncmp(f->c.prog, "boundary", 8), ok = true;
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
		prog_fd = bpf_program__fd(!strcmp(f->c.prog, "boundary_in") ? bd->progs.wps_boundary_in
									: bd->progs.wps_boundary_out);
		stats_fd = bpf_map__fd(bd->maps.wps_bnd_stats);
	} else {
		in = shared_ingress();
		if (!in) {
			printf("#   wps_ingress load failed: %s\n", strerror(errno));
			return false;
		}
		prog_fd = bpf_program__fd(!strcmp(f->c.prog, "seg") ? in->progs.wps_ingress_seg
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
		struct __sk_buff ctx = {}, ctx_out = {};

		if (in && (st->now || st->nweights)) {
			struct wps_in_cfg cfg;
			__u32 zero = 0;

			bpf_map_lookup_elem(bpf_map__fd(in->maps.wps_in_cfg), &zero, &cfg);
			if (st->now)
				cfg.test_now_ns = st->now;
			memcpy(cfg.weight, st->weight, (size_t)st->nweights);
			bpf_map_update_elem(bpf_map__fd(in->maps.wps_in_cfg), &zero, &cfg, BPF_ANY);
		}
		if (in && (st->down >= 0 || st->pmtu >= 0)) {
			struct wps_in_live lv = {};
			__u32 zero = 0;
			int fd = bpf_map__fd(in->maps.wps_in_live);

			bpf_map_lookup_elem(fd, &zero, &lv);
			if (st->down >= 0)
				lv.admin_down = (__u32)st->down;
			if (st->pmtu >= 0)
				lv.pmtu = (__u16)st->pmtu;
			bpf_map_update_elem(fd, &zero, &lv, BPF_ANY);
		}
		ctx.ingress_ifindex = st->iif;
		ctx.cb[0] = st->cb0;
		ctx.cb[1] = st->cb1;
		ctx.cb[2] = st->cb2;
		ctx.gso_segs = st->gso_segs;
		ctx.gso_size = st->gso_size;
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = st->in, .data_size_in = (__u32)st->in_len,
			    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .ctx_out = &ctx_out, .ctx_size_out = sizeof(ctx_out), .repeat = 1);
		if (g_lo_sock >= 0)
			while (lo_next(out, sizeof(out)))
				;
		if (bpf_prog_test_run_opts(in && st->seg ? bpf_program__fd(in->progs.wps_ingress_seg) : prog_fd, &o)) {
			printf("#   packet %d: BPF_PROG_TEST_RUN failed: %s\n", s + 1, strerror(errno));
			ok = false;
			continue;
		}
		if (strcmp(verdict_name((int)o.retval), st->verdict)) {
			printf("#   packet %d: verdict: want %s, got %s (%d)\n", s + 1, st->verdict,
			       verdict_name((int)o.retval), (int)o.retval);
			ok = false;
		}
		if (st->cb0_out >= 0 && ctx_out.cb[0] != (__u32)st->cb0_out) {
			printf("#   packet %d: skb->cb[0] 0x%x, want 0x%llx\n", s + 1, ctx_out.cb[0], st->cb0_out);
			ok = false;
		}
		if (st->has_out && (o.data_size_out != st->out_len || memcmp(out, st->out, st->out_len))) {
			printf("#   packet %d: output bytes differ\n", s + 1);
			fixture_diff(st->out, st->out_len, out, o.data_size_out);
			ok = false;
		}
		if (st->nclones >= 0) {
			unsigned char c[MAX_PKT + 256];
			int got = 0;
			size_t n;

			if (g_lo_sock < 0) {
				printf("#   packet %d: no packet socket on a private lo to see its clones\n", s + 1);
				ok = false;
			}
			while (g_lo_sock >= 0 && (n = lo_next(c, sizeof(c)))) {
				if (got < st->nclones && (n != st->clone_len[got] || memcmp(c, st->clone[got], n))) {
					printf("#   packet %d: clone %d differs\n", s + 1, got + 1);
					fixture_diff(st->clone[got], st->clone_len[got], c, n);
					ok = false;
				}
				got++;
			}
			if (g_lo_sock >= 0 && got != st->nclones) {
				printf("#   packet %d: %d clones sent, want %d\n", s + 1, got, st->nclones);
				ok = false;
			}
		}
	}
	if (read_counters(stats_fd, ncnt, after)) {
		ok = false;
		goto out;
	}
	snprintf(buf, sizeof(buf), "%s", f->c.counters);
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
	ok &= fixture_counters_moved(before, after, want, ncnt, bnd ? wps_bnd_counter_name : wps_in_counter_name);
out:
	wps_boundary__destroy(bd);
	return ok;
}

/*
 * The lines of a WPS case beyond the common ones: the configuration's, and
 * the packets', each "in" starting a step that the lines after it fill.
 */
static int wps_line(void *rec, struct fixture_file *ff, const char *key, char *v)
{
	struct fixture *f = rec;
	struct step *st = f->st;

	/* More than MAX_LINES of a kind: not its own, so an unknown line. */
	if (!strcmp(key, "path") && f->npaths < MAX_LINES) {
		snprintf(f->paths[f->npaths++], sizeof(f->paths[0]), "%s", v);
	} else if (!strcmp(key, "port") && f->nports < MAX_LINES) {
		if (sscanf(v, "%u %u", &f->ports[f->nports][0], &f->ports[f->nports][1]) == 2)
			f->nports++;
	} else if (!strcmp(key, "rule") && f->nrules < MAX_LINES) {
		snprintf(f->rules[f->nrules++], sizeof(f->rules[0]), "%s", v);
	} else if (!strcmp(key, "in")) {
		if (f->nsteps == MAX_STEPS) {
			fixture_error(ff, "too many packets");
			return -1;
		}
		st = f->st = &f->steps[f->nsteps++];
		st->down = -1;
		st->pmtu = -1;
		st->cb0_out = -1;
		st->nclones = -1;
		if (fixture_unhex(v, st->in, &st->in_len)) {
			fixture_error(ff, "bad hex");
			return -1;
		}
	} else if (!strcmp(key, "out") || !strcmp(key, "clone") || !strcmp(key, "verdict") || !strcmp(key, "ctx")) {
		if (!st) {
			fixture_error(ff, "unknown line '%s'", key);
			return -1;
		}
		if (!strcmp(key, "out")) {
			if (fixture_unhex(v, st->out, &st->out_len)) {
				fixture_error(ff, "bad hex");
				return -1;
			}
			st->has_out = true;
		} else if (!strcmp(key, "clone")) {
			if (st->nclones < 0)
				st->nclones = 0;
			if (st->nclones >= 4 || fixture_unhex(v, st->clone[st->nclones], &st->clone_len[st->nclones])) {
				fixture_error(ff, "too many clones, or bad hex");
				return -1;
			}
			st->nclones++;
		} else if (!strcmp(key, "verdict")) {
			snprintf(st->verdict, sizeof(st->verdict), "%s", v);
		} else {
			char *save, *tok;

			for (tok = strtok_r(v, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
				if (!strncmp(tok, "now=", 4))
					st->now = strtoull(tok + 4, NULL, 0);
				else if (!strncmp(tok, "gso_segs=", 9))
					st->gso_segs = (unsigned)strtoul(tok + 9, NULL, 0);
				else if (!strncmp(tok, "gso_size=", 9))
					st->gso_size = (unsigned)strtoul(tok + 9, NULL, 0);
				else if (!strncmp(tok, "down=", 5))
					st->down = strtoll(tok + 5, NULL, 0);
				else if (!strncmp(tok, "pmtu=", 5))
					st->pmtu = strtoll(tok + 5, NULL, 0);
				else if (!strncmp(tok, "weights=", 8)) {
					char *wsave, *w;

					st->nweights = 0;
					for (w = strtok_r(tok + 8, ",", &wsave); w && st->nweights < WPS_IN_MAX_PATHS;
					     w = strtok_r(NULL, ",", &wsave))
						st->weight[st->nweights++] = (__u8)strtoul(w, NULL, 0);
				}
				else if (!strncmp(tok, "iif=", 4))
					st->iif = (unsigned)strtoul(tok + 4, NULL, 0);
				else if (!strncmp(tok, "cb0=", 4))
					st->cb0 = (unsigned)strtoul(tok + 4, NULL, 0);
				else if (!strncmp(tok, "cb1=", 4))
					st->cb1 = (unsigned)strtoul(tok + 4, NULL, 0);
				else if (!strncmp(tok, "cb2=", 4))
					st->cb2 = (unsigned)strtoul(tok + 4, NULL, 0);
				else if (!strcmp(tok, "seg"))
					st->seg = true;
				else if (!strncmp(tok, "cb0_out=", 8))
					st->cb0_out = strtoll(tok + 8, NULL, 0);
			}
		}
	} else {
		return 1;
	}
	return 0;
}

static const struct fixture_driver wps_driver = {
	.tool = "wps_testrun", .tap = "wps", .case_size = sizeof(struct fixture), .line = wps_line, .run = run_case,
};

/*
 * Two threads on two CPUs run packets of ONE flow through the ingress at the
 * same time; decoded from the output bytes (docs/WIRE.md §6 offsets, not the
 * program's structs): every Group ID has exactly QUANTUM packets, one S, one E,
 * one path and one flow label, and the Group IDs follow each other.
 */
#define CC_QUANTUM	8
#define CC_PER_THREAD	20000

struct cc_out {
	__u16 gid;
	__u8 flags;
	__u8 path;	/* last byte of the destination MAC */
	__u32 label;
};

struct cc_thread {
	int cpu, prog_fd;
	const unsigned char *in;
	size_t in_len;
	struct cc_out out[CC_PER_THREAD];
	int n, err;
	char first_err[128];	/* what the first failed run saw */
};

static void *cc_run(void *arg)
{
	struct cc_thread *t = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (int i = 0; i < CC_PER_THREAD; i++) {
		unsigned char o[512];
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = t->in, .data_size_in = (__u32)t->in_len,
			    .data_out = o, .data_size_out = sizeof(o), .repeat = 1);

		int rc = bpf_prog_test_run_opts(t->prog_fd, &opts);

		/* A signal may interrupt the syscall (the kernel then runs nothing): run it again. */
		if (rc && (errno == EINTR || errno == EAGAIN)) {
			i--;
			continue;
		}
		if (rc || opts.retval != TC_ACT_REDIRECT || opts.data_size_out < 70 || o[56] != 0x81) {
			if (!t->err++)
				snprintf(t->first_err, sizeof(t->first_err),
					 "run %d on CPU %d: rc %d (%s), verdict %u, %u bytes out, option byte 0x%02x", i,
					 t->cpu, rc, rc ? strerror(errno) : "-", opts.retval, opts.data_size_out,
					 opts.data_size_out > 56 ? o[56] : 0);
			continue;
		}
		t->out[t->n].path = o[5];
		t->out[t->n].label = ((__u32)(o[15] & 0x0f) << 16) | ((__u32)o[16] << 8) | o[17];
		t->out[t->n].flags = o[58];
		t->out[t->n].gid = (__u16)(o[66] << 8 | o[67]);	/* data bytes 8-9 */
		t->n++;
	}
	return NULL;
}

static bool concurrency_case(void)
{
	static const char *opts = "--node-id 1 --egress-node-id 2 --src fd00:a::1 --egress-addr fd00:b::1 "
				  "--max-delay-us 0";
	static unsigned char pkt[] = {
		2, 0, 0, 0xa, 0, 2, 2, 0, 0, 0xa, 0, 1, 0x08, 0x00,
		0x45, 0, 0, 36, 0, 7, 0, 0, 64, 17, 0, 0, 10, 10, 0, 2, 10, 20, 0, 2,
		0x0f, 0xa0, 0x17, 0x70, 0, 16, 0, 0, 'c', 'o', 'n', 'c', 'u', 'r', 'r', 'e',
	};
	struct fixture *f = calloc(1, sizeof(*f));
	struct cc_thread *t = calloc(2, sizeof(*t));
	struct wps_ingress *sk = shared_ingress();
	struct { int n, s, e; __u8 path; __u32 label; } *g = calloc(65536, sizeof(*g));
	char err[256];
	bool ok = false;
	int ncpu = libbpf_num_possible_cpus(), total = 0, groups = 0;
	pthread_t th[2];

	if (!f || !t || !g || !sk)
		goto out;
	snprintf(f->c.opts, sizeof(f->c.opts), "%s", opts);
	f->npaths = 2;
	snprintf(f->paths[0], sizeof(f->paths[0]), "101 02:00:00:0b:00:01 02:00:00:0c:00:01");
	snprintf(f->paths[1], sizeof(f->paths[1]), "102 02:00:00:0b:00:02 02:00:00:0c:00:02");
	f->nrules = 1;
	snprintf(f->rules[0], sizeof(f->rules[0]), "--dst 10.20.0.0/24 --quantum %d", CC_QUANTUM);
	/*
	 * A fixed clock: with the real one, a CPU that read its time just before
	 * another closed a group may see that close "in the future" and rightly
	 * extend its group at the in-flight bound; that is not what is tested here.
	 */
	if (configure(sk, f, true, err, sizeof(err))) {
		printf("#   configuration: %s\n", err);
		goto out;
	}
	{
		struct wps_in_cfg cfg;
		__u32 zero = 0;

		bpf_map_lookup_elem(bpf_map__fd(sk->maps.wps_in_cfg), &zero, &cfg);
		/*
		 * Fixed, and an hour after every time the earlier cases stamped (the
		 * program's clock is CLOCK_MONOTONIC), past any quarantine or idle
		 * timeout: under TCG the cases before this one ran within a second,
		 * and a Flow ID they released would still rest in quarantine.
		 */
		cfg.test_now_ns = ub_mono_ns() + 3600000000000ULL;
		bpf_map_update_elem(bpf_map__fd(sk->maps.wps_in_cfg), &zero, &cfg, BPF_ANY);
	}
	for (int i = 0; i < 2; i++) {
		t[i].cpu = ncpu > 1 ? i : 0;
		t[i].prog_fd = bpf_program__fd(sk->progs.wps_ingress);
		t[i].in = pkt;
		t[i].in_len = sizeof(pkt);
		pthread_create(&th[i], NULL, cc_run, &t[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	if (t[0].err || t[1].err) {
		printf("#   %d runs failed; first: %s\n", t[0].err + t[1].err, t[0].err ? t[0].first_err : t[1].first_err);
		goto out;
	}
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < t[i].n; k++) {
			struct cc_out *o = &t[i].out[k];

			if (!g[o->gid].n) {
				g[o->gid].path = o->path;
				g[o->gid].label = o->label;
				groups++;
			}
			if (g[o->gid].path != o->path || g[o->gid].label != o->label) {
				printf("#   group %u on two paths or with two labels\n", o->gid);
				goto out;
			}
			g[o->gid].n++;
			g[o->gid].s += !!(o->flags & 0x80);
			g[o->gid].e += !!(o->flags & 0x40);
			total++;
		}
	if (groups != 2 * CC_PER_THREAD / CC_QUANTUM) {
		printf("#   %d groups for %d packets, want %d\n", groups, total, 2 * CC_PER_THREAD / CC_QUANTUM);
		goto out;
	}
	for (int id = 0; id < 65536; id++)
		if (g[id].n && (g[id].n != CC_QUANTUM || g[id].s != 1 || g[id].e != 1)) {
			printf("#   group %d: %d packets, %d S, %d E (want %d, 1, 1)\n", id, g[id].n, g[id].s, g[id].e,
			       CC_QUANTUM);
			goto out;
		}
	{
		/* The per-flow counters: lock-free joiners and lock holders added at once. */
		struct wps_in_flow_key k = {}, next;
		struct wps_in_flow_ref ref;
		struct wps_in_flow_hot h;
		struct wps_in_flow fl;
		unsigned long long pk;

		if (bpf_map_get_next_key(bpf_map__fd(sk->maps.wps_in_flows), NULL, &next) ||
		    bpf_map_lookup_elem(bpf_map__fd(sk->maps.wps_in_flows), &next, &ref) ||
		    bpf_map_lookup_elem(bpf_map__fd(sk->maps.wps_in_flow_hot), &ref.slot, &h) ||
		    bpf_map_lookup_elem(bpf_map__fd(sk->maps.wps_in_flow_state), &ref.slot, &fl)) {
			printf("#   the flow is not in the table\n");
			goto out;
		}
		k = next;
		pk = wps_flow_packets(&h, &fl);
		if (!bpf_map_get_next_key(bpf_map__fd(sk->maps.wps_in_flows), &k, &next) ||
		    pk != (__u64)total || h.bytes != (__u64)total * (sizeof(pkt) - 14) || fl.groups != (__u64)groups) {
			printf("#   flow counters: %llu packets, %llu bytes, %llu groups (want %d, %zu, %d; one flow)\n",
			       pk, (unsigned long long)h.bytes, (unsigned long long)fl.groups, total,
			       total * (sizeof(pkt) - 14), groups);
			goto out;
		}
	}
	printf("#   %d packets from 2 CPUs: %d groups of %d, each with one S, one E, one path\n", total, groups,
	       CC_QUANTUM);
	ok = true;
out:
	free(f);
	free(t);
	free(g);
	return ok;
}

/*
 * A full flow table, on the program's test clock: a new flow is not sprayed
 * (counted, passed unchanged, never dropped) while every flow is busy; once
 * flows have been idle for --idle-ms, the sweep forgets up to
 * WPS_IN_SWEEP_MAX of them (only idle ones) and new flows are sprayed again;
 * the Flow IDs it freed are not handed out before the quarantine ends, then
 * they are. Flow IDs and verdicts are read from the output bytes (docs/WIRE.md
 * §6: Flow ID at data bytes 2-3 of the option, frame offset 60).
 */
#define FT_FLOWS	WPS_IN_MAX_FLOWS
#define FT_BUSY		100		/* flows kept busy: the sweep must not take them */
#define FT_T0		1000000000ULL	/* 1 s */
#define FT_MS		1000000ULL
#define FT_REFUSED	50		/* new flows offered while the table is full */

static unsigned char ft_pkt[] = {
	2, 0, 0, 0xa, 0, 2, 2, 0, 0, 0xa, 0, 1, 0x08, 0x00,
	0x45, 0, 0, 36, 0, 7, 0, 0, 64, 17, 0, 0, 10, 10, 0, 2, 10, 20, 0, 2,
	0, 0, 0x17, 0x70, 0, 16, 0, 0, 'f', 'u', 'l', 'l', 't', 'a', 'b', 'l',
};

static int rc_last_flags;	/* the option's flags of ft_send's last sprayed packet */

/* One packet of flow `sport` at time now: its verdict; *fid from the output (0 if not sprayed). */
static int ft_send(struct wps_ingress *sk, __u16 sport, __u64 now, __u16 *fid, bool *unchanged)
{
	struct wps_in_cfg cfg;
	unsigned char out[256];
	__u32 zero = 0;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = ft_pkt, .data_size_in = sizeof(ft_pkt), .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);

	bpf_map_lookup_elem(bpf_map__fd(sk->maps.wps_in_cfg), &zero, &cfg);
	cfg.test_now_ns = now;
	bpf_map_update_elem(bpf_map__fd(sk->maps.wps_in_cfg), &zero, &cfg, BPF_ANY);
	ft_pkt[34] = (unsigned char)(sport >> 8);
	ft_pkt[35] = (unsigned char)sport;
	if (bpf_prog_test_run_opts(bpf_program__fd(sk->progs.wps_ingress), &o))
		return -1;
	*fid = 0;
	if (o.retval == TC_ACT_REDIRECT && o.data_size_out == sizeof(ft_pkt) + 56 && out[56] == 0x81)
		*fid = (__u16)(out[60] << 8 | out[61]), rc_last_flags = out[58];
	*unchanged = o.data_size_out == sizeof(ft_pkt) && !memcmp(out, ft_pkt, sizeof(ft_pkt));
	return (int)o.retval;
}

/* The flow-table key of ft_pkt's flow from source port sport. */
static void ft_key(__u16 sport, struct wps_in_flow_key *k)
{
	__u8 a[16] = { [10] = 0xff, [11] = 0xff };

	memset(k, 0, sizeof(*k));
	memcpy(k->saddr, a, 16);
	memcpy(k->daddr, a, 16);
	memcpy(k->saddr + 12, ft_pkt + 26, 4);
	memcpy(k->daddr + 12, ft_pkt + 30, 4);
	k->sport = htons(sport);
	k->dport = htons(6000);
	k->proto = 17;
	k->family = 4;
}

static bool full_table_case(void)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct wps_ingress *sk = shared_ingress();
	__u64 before[WPS_IN_CNT__MAX], after[WPS_IN_CNT__MAX], want[WPS_IN_CNT__MAX] = {};
	unsigned char *used = calloc(65536, 1);
	__u16 *fids = calloc(FT_FLOWS, sizeof(*fids));
	int ffd, sfd, n = 0, v;
	__u16 fid, q = 0;
	__u64 st;
	bool same, ok = false;
	char err[256];

	if (!f || !sk || !used || !fids)
		goto out;
	/* All the Flow IDs this case uses free (shared_ingress clears only the first 256). */
	clear_array(bpf_map__fd(sk->maps.wps_in_fid_state), FT_FLOWS + 8, sizeof(__u64), false);
	/* The pool 4 bigger than the table: after the sweep, 4 never-used IDs, then only quarantined ones. */
	snprintf(f->c.opts, sizeof(f->c.opts), "--node-id 1 --egress-node-id 2 --src fd00:a::1 --egress-addr fd00:b::1 "
		 "--idle-ms 1 --quarantine-ms 10 --fid-pool %d", FT_FLOWS + 4);
	f->npaths = 1;
	snprintf(f->paths[0], sizeof(f->paths[0]), "101 02:00:00:0b:00:01 02:00:00:0c:00:01");
	f->nrules = 1;
	snprintf(f->rules[0], sizeof(f->rules[0]), "--dst 10.20.0.0/24 --quantum 4");
	if (configure(sk, f, true, err, sizeof(err))) {
		printf("#   configuration: %s\n", err);
		goto out;
	}
	ffd = bpf_map__fd(sk->maps.wps_in_flows);
	sfd = bpf_map__fd(sk->maps.wps_in_stats);
	read_counters(sfd, WPS_IN_CNT__MAX, before);
	/* Fill the table at T0, each flow its own Flow ID. */
	for (int i = 0; i < FT_FLOWS; i++) {
		if (ft_send(sk, (__u16)(1000 + i), FT_T0, &fid, &same) != TC_ACT_REDIRECT || !fid || used[fid]++) {
			printf("#   filling: flow %d not sprayed under a fresh Flow ID\n", i);
			goto out;
		}
		fids[i] = fid;
	}
	/*
	 * The table full, its flows at their home slot, the other of its pair or
	 * elsewhere (wps_flow_home): all three kinds, and each flow's next packet
	 * finds it (its Flow ID, no flow made anew).
	 */
	{
		int at[3] = { 0 };
		__u64 mid[WPS_IN_CNT__MAX];

		for (int i = 0; i < FT_FLOWS; i++) {
			struct wps_in_flow_key k;
			struct wps_in_flow_ref fl;
			__u32 home;

			ft_key((__u16)(1000 + i), &k);
			home = wps_flow_home(wps_key_hash(&k), FT_FLOWS);
			if (bpf_map_lookup_elem(ffd, &k, &fl)) {
				printf("#   filling: flow %d not in the table\n", i);
				goto out;
			}
			at[fl.slot == home ? 0 : fl.slot == (home ^ 1) ? 1 : 2]++;
		}
		if (!at[0] || !at[1] || !at[2]) {
			printf("#   full table: %d flows at home, %d at the other of the pair, %d elsewhere (want all three)\n",
			       at[0], at[1], at[2]);
			goto out;
		}
		read_counters(sfd, WPS_IN_CNT__MAX, mid);
		for (int i = 0; i < FT_FLOWS; i++) {
			if (ft_send(sk, (__u16)(1000 + i), FT_T0, &fid, &same) != TC_ACT_REDIRECT ||
			    !fid || fid != fids[i]) {
				printf("#   full table: flow %d's next packet: Flow ID %u, want %u\n", i, fid, fids[i]);
				goto out;
			}
		}
		read_counters(sfd, WPS_IN_CNT__MAX, after);
		if (after[WPS_IN_CNT_EV_FLOW_NEW] != mid[WPS_IN_CNT_EV_FLOW_NEW]) {
			printf("#   full table: %llu flows made anew on their next packet\n",
			       (unsigned long long)(after[WPS_IN_CNT_EV_FLOW_NEW] - mid[WPS_IN_CNT_EV_FLOW_NEW]));
			goto out;
		}
		printf("#   %d flows: %d at home, %d at the other of the pair, %d elsewhere, all found again\n", FT_FLOWS,
		       at[0], at[1], at[2]);
	}
	/* The first FT_BUSY flows stay busy. */
	for (int i = 0; i < FT_BUSY; i++)
		if (ft_send(sk, (__u16)(1000 + i), FT_T0 + FT_MS * 9 / 10, &fid, &same) != TC_ACT_REDIRECT) {
			printf("#   busy flow %d not sprayed\n", i);
			goto out;
		}
	/* Full, nothing idle yet: new flows pass unchanged, counted; the table is walked for the
	 * first only (flow_table_sweeps), the others cost O(1) until the re-check interval ends. */
	for (int i = 0; i < FT_REFUSED; i++) {
		sk->bss->fid_cursor = FT_FLOWS;	/* a free Flow ID at hand: what fails is the table */
		v = ft_send(sk, (__u16)(59000 + i), FT_T0 + FT_MS / 2, &fid, &same);
		if (v != WPS_PASS || !same) {
			printf("#   full table, nothing idle: new flow %d: verdict %d, %s (want WPS_PASS, unchanged)\n",
			       i, v, same ? "unchanged" : "changed");
			goto out;
		}
	}
	/* 1.5 ms: all but the busy flows idle. New flows: the sweep makes room, 4 unused IDs are left
	 * (the cursor put back on them: the refused flow above moved it past one). */
	sk->bss->fid_cursor = FT_FLOWS;
	for (int i = 0; i < 4; i++) {
		v = ft_send(sk, (__u16)(60001 + i), FT_T0 + FT_MS * 3 / 2, &fid, &same);
		if (v != TC_ACT_REDIRECT || fid <= FT_FLOWS) {
			printf("#   after the sweep: new flow %d: verdict %d, Flow ID %u (want a never-used one)\n", i, v,
			       fid);
			goto out;
		}
	}
	for (int i = 0; i < FT_FLOWS; i++) {
		struct wps_in_flow_key k;
		struct wps_in_flow_ref fl;

		ft_key((__u16)(1000 + i), &k);
		if (bpf_map_lookup_elem(ffd, &k, &fl)) {
			if (i < FT_BUSY) {
				printf("#   busy flow %d was swept\n", i);
				goto out;
			}
			n++;
			/* Its Flow ID rests until its last packet + the quarantine (the last packet as the
			 * table keeps it: in 2^16 ns units, never earlier). */
			__u32 key = (__u32)i + 1;
			if (bpf_map_lookup_elem(bpf_map__fd(sk->maps.wps_in_fid_state), &key, &st) ||
			    st < FT_T0 + 10 * FT_MS || st > FT_T0 + 10 * FT_MS + (1ULL << WPS_SEEN_SHIFT)) {
				printf("#   swept flow %d: Flow ID %u state %llu, want reusable at %llu (+ a unit)\n", i, key,
				       (unsigned long long)st, FT_T0 + 10 * FT_MS);
				goto out;
			}
			q = (__u16)key;
		}
	}
	if (n != WPS_IN_SWEEP_MAX) {
		printf("#   %d flows swept, want %d (one sweep, its bound)\n", n, WPS_IN_SWEEP_MAX);
		goto out;
	}
	/* Every ID is in use or resting: the next new flow is not sprayed, even when offered a resting
	 * one (and, the pool spent, the sweep runs again: by now every flow is idle). */
	sk->bss->fid_cursor = (__u32)q - 1;
	v = ft_send(sk, 61000, FT_T0 + 10 * FT_MS - 1, &fid, &same);
	if (v != WPS_PASS || !same) {
		printf("#   quarantine: Flow ID %u handed out early (verdict %d, Flow ID %u)\n", q, v, fid);
		goto out;
	}
	/* The quarantine over (and the unit it may run on): that ID serves a new flow. */
	sk->bss->fid_cursor = (__u32)q - 1;
	v = ft_send(sk, 61001, FT_T0 + 10 * FT_MS + (1ULL << WPS_SEEN_SHIFT), &fid, &same);
	if (v != TC_ACT_REDIRECT || fid != q) {
		printf("#   after the quarantine: verdict %d, Flow ID %u (want %u)\n", v, fid, q);
		goto out;
	}
	read_counters(sfd, WPS_IN_CNT__MAX, after);
	/* each flow's packet at T0, its second found again, the busy ones', the refused, the new */
	want[WPS_IN_CNT_RX] = 2 * FT_FLOWS + FT_BUSY + FT_REFUSED + 6;
	want[WPS_IN_CNT_TX_SPRAYED] = 2 * FT_FLOWS + FT_BUSY + 5;
	want[WPS_IN_CNT_EV_FLOW_NEW] = FT_FLOWS + 5;
	want[WPS_IN_CNT_EV_GROUP_OPENED] = FT_FLOWS + 5;
	want[WPS_IN_CNT_PASS_TABLE_FULL] = FT_REFUSED;
	/* at 0.5 ms (the first refused flow), 1.5 ms (the first new flow after), 10 ms - 1 */
	want[WPS_IN_CNT_EV_TABLE_WALK] = 3;
	want[WPS_IN_CNT_PASS_FID_EXHAUSTED] = 1;
	want[WPS_IN_CNT_EV_FLOW_RECLAIMED] = 2 * WPS_IN_SWEEP_MAX;
	if (!fixture_counters_moved(before, after, want, WPS_IN_CNT__MAX, wps_in_counter_name))
		goto out;
	printf("#   %d flows: full -> %d new flows passed unsprayed, one table walk; %d idle swept (busy kept); "
	       "Flow ID %u reused only after its quarantine\n", FT_FLOWS, FT_REFUSED, n, q);
	ok = true;
out:
	free(f);
	free(used);
	free(fids);
	return ok;
}

/*
 * Fuzz: seeded random and mutated frames (bit flips, truncation, lying
 * lengths, random bytes, random EtherTypes and protocols) through the
 * ingress. Checked with a decoder written here from docs/WIRE.md §6, not the
 * program's structs: TC_ACT_OK leaves the frame as it was; a redirect is
 * either the encapsulation (outer IPv6 from/to the configured addresses,
 * payload length right, one options header holding only a well-formed WPS
 * option, next header matching the inner version, the inner bytes exactly the
 * input's) or an ICMP too-big answer quoting the input; every frame moves rx
 * and exactly one verdict counter.
 */
static unsigned long long fz_state;

static unsigned fz_rand(void)
{
	fz_state = fz_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)(fz_state >> 33);
}

static size_t fz_frame(unsigned char *f)
{
	static const unsigned char ip4[] = { 0x45, 0, 0, 0, 0, 7, 0, 0, 64, 17, 0, 0, 10, 10, 0, 2, 10, 20, 0, 2 };
	unsigned len = 14 + 20 + 8 + fz_rand() % 1500, v6 = fz_rand() & 1, l4;
	unsigned char *ip = f + 14;

	memset(f, 0, len);
	memcpy(f, "\x02\0\0\x0a\0\x02\x02\0\0\x0a\0\x01", 12);
	if (v6) {
		if (len < 14 + 48)
			len = 14 + 48;
		f[12] = 0x86, f[13] = 0xdd;
		ip[0] = 0x60;
		ip[4] = (unsigned char)((len - 54) >> 8), ip[5] = (unsigned char)(len - 54);
		ip[6] = (unsigned char[]){ 17, 6, 0, 60, 43, 44, 58, 132 }[fz_rand() % 8];
		ip[7] = 64;
		ip[8] = 0xfd, ip[9] = 0x10, ip[23] = 2, ip[24] = 0xfd, ip[25] = 0x20, ip[39] = 2;
		l4 = 54;
		if (ip[6] == 0 || ip[6] == 60 || ip[6] == 43) {	/* an extension header */
			f[54] = (unsigned char[]){ 17, 6, 60, 0x81 }[fz_rand() % 4];
			f[55] = 0;
			if (fz_rand() % 3 == 0) {	/* sometimes a WPS option inside */
				f[56] = 0x81, f[57] = (unsigned char)(fz_rand() % 8);
			}
		}
	} else {
		memcpy(ip, ip4, sizeof(ip4));
		ip[2] = (unsigned char)((len - 14) >> 8), ip[3] = (unsigned char)(len - 14);
		ip[9] = (unsigned char[]){ 17, 6, 1, 132, 47 }[fz_rand() % 5];
		if (fz_rand() % 4 == 0)
			ip[6] = (unsigned char)(fz_rand() & 0x3f), ip[7] = (unsigned char)fz_rand();
		l4 = 34;
	}
	(void)l4;
	for (size_t i = l4; i < len; i++)
		f[i] = (unsigned char)fz_rand();
	/* mutations */
	switch (fz_rand() % 6) {
	case 0: break;
	case 1: for (int k = 0; k < 3; k++) f[fz_rand() % 60] ^= (unsigned char)(1u << (fz_rand() % 8)); break;
	case 2: len = 14 + fz_rand() % (len - 13); break;
	case 3: f[12] = (unsigned char)fz_rand(); break;
	case 4: f[14 + (v6 ? 4 : 2)] = (unsigned char)fz_rand(); break;
	default: for (int k = 0; k < 4; k++) f[14 + fz_rand() % 40] = (unsigned char)fz_rand(); break;
	}
	if (len < 15)
		len = 15;
	return len;
}

static bool fz_check(const unsigned char *in, size_t in_len, const unsigned char *out, size_t out_len, int verdict,
		     char *why, size_t wl)
{
	static const unsigned char src[16] = { 0xfd, 0, 0, 0xa, [15] = 1 }, dst[16] = { 0xfd, 0, 0, 0xb, [15] = 1 };

	if (verdict == WPS_PASS) {
		if (out_len != in_len || memcmp(in, out, in_len))
			return snprintf(why, wl, "passed but changed"), false;
		return true;
	}
	if (verdict == TC_ACT_SHOT)
		return true;	/* the counters say why */
	if (verdict != TC_ACT_REDIRECT)
		return snprintf(why, wl, "verdict %d", verdict), false;
	if (out_len >= 14 + 20 + 8 && out[12] == 8 && out[13] == 0 && out[14 + 9] == 1) {
		/* ICMP Frag Needed: type 3 code 4, quoting the input's IP packet */
		if (out[34] != 3 || out[35] != 4 || memcmp(out + 42, in + 14, in_len - 14 < 128 ? in_len - 14 : 128))
			return snprintf(why, wl, "bad ICMP answer"), false;
		return true;
	}
	if (out_len >= 54 + 8 && out[12] == 0x86 && out[13] == 0xdd && out[14 + 6] == 58) {
		if (out[54] != 2 || memcmp(out + 62, in + 14, in_len - 14 < 128 ? in_len - 14 : 128))
			return snprintf(why, wl, "bad ICMPv6 answer"), false;
		return true;
	}
	if (out_len != in_len + 56)
		return snprintf(why, wl, "redirected: length %zu for input %zu", out_len, in_len), false;
	if (out[12] != 0x86 || out[13] != 0xdd || out[14] >> 4 != 6 || out[20] != 60 ||
	    ((out[18] << 8) | out[19]) != (int)(out_len - 54) || memcmp(out + 22, src, 16) || memcmp(out + 38, dst, 16))
		return snprintf(why, wl, "bad outer IPv6 header"), false;
	if (out[55] != 1 || out[56] != 0x81 || out[57] != 12 || (out[58] & 0x1f) || out[59] ||
	    ((out[62] << 8) | out[63]) != 1 || ((out[64] << 8) | out[65]) != 2)
		return snprintf(why, wl, "bad options header / WPS option"), false;
	if (out[54] != (in[12] == 8 ? 4 : 41) || (in[12] == 8 && in[13] != 0) || (in[12] == 0x86 && in[13] != 0xdd))
		return snprintf(why, wl, "next header %u for EtherType %02x%02x", out[54], in[12], in[13]), false;
	if (memcmp(out + 70, in + 14, in_len - 14))
		return snprintf(why, wl, "inner packet changed"), false;
	return true;
}

static bool fuzz_case(unsigned long long seed, long count)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct wps_ingress *sk = shared_ingress();
	unsigned char in[2048], out[2400];
	__u64 before[WPS_IN_CNT__MAX], after[WPS_IN_CNT__MAX];
	char err[256];
	bool ok = false;
	long verdicts[3] = { 0 };

	if (!f || !sk)
		goto out;
	snprintf(f->c.opts, sizeof(f->c.opts), "--node-id 1 --egress-node-id 2 --src fd00:a::1 --egress-addr fd00:b::1");
	f->npaths = 2;
	snprintf(f->paths[0], sizeof(f->paths[0]), "101 02:00:00:0b:00:01 02:00:00:0c:00:01 1400");
	snprintf(f->paths[1], sizeof(f->paths[1]), "102 02:00:00:0b:00:02 02:00:00:0c:00:02 1500");
	f->nrules = 3;
	snprintf(f->rules[0], sizeof(f->rules[0]), "--dst 10.20.0.0/24 --quantum 3");
	snprintf(f->rules[1], sizeof(f->rules[1]), "--dst fd20::/64 --proto udp --quantum 2000b");
	snprintf(f->rules[2], sizeof(f->rules[2]), "--dst fd20::/64 --proto tcp --quantum 500us");
	if (configure(sk, f, false, err, sizeof(err))) {
		printf("#   configuration: %s\n", err);
		goto out;
	}
	fz_state = seed;
	for (long i = 0; i < count; i++) {
		unsigned long long case_seed = fz_state;
		size_t len = fz_frame(in);
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (__u32)len, .data_out = out,
			    .data_size_out = sizeof(out), .repeat = 1);
		int moved = 0;

		read_counters(bpf_map__fd(sk->maps.wps_in_stats), WPS_IN_CNT__MAX, before);
		if (bpf_prog_test_run_opts(bpf_program__fd(sk->progs.wps_ingress), &o))
			continue;	/* the kernel refused the frame itself (too short for an IP header) */
		read_counters(bpf_map__fd(sk->maps.wps_in_stats), WPS_IN_CNT__MAX, after);
		for (int c = 0; c < WPS_IN_CNT__MAX; c++) {
			const char *n = wps_in_counter_name((unsigned)c);

			if (after[c] != before[c] && (!strncmp(n, "tx_", 3) || !strncmp(n, "pass_", 5) ||
						      !strncmp(n, "drop_", 5) || !strncmp(n, "redirect_", 9)))
				moved += (int)(after[c] - before[c]);
		}
		if (!fz_check(in, len, out, o.data_size_out, (int)o.retval, err, sizeof(err)) || moved != 1 ||
		    after[WPS_IN_CNT_RX] != before[WPS_IN_CNT_RX] + 1) {
			printf("#   frame %ld (replay: --fuzz-seed %llu --fuzz-count 1): %s, %d verdict counters moved\n#   in ",
			       i, case_seed, moved == 1 ? err : "conservation", moved);
			for (size_t k = 0; k < len && k < 96; k++)
				printf("%02x", in[k]);
			printf("\n");
			goto out;
		}
		verdicts[(int)o.retval == WPS_PASS ? 0 : (int)o.retval == TC_ACT_REDIRECT ? 1 : 2]++;
	}
	printf("#   %ld frames (seed %llu): %ld passed untouched, %ld redirected, %ld dropped\n", count, seed,
	       verdicts[0], verdicts[1], verdicts[2]);
	ok = verdicts[0] && verdicts[1];
out:
	free(f);
	return ok;
}

/*
 * A flow keeps the rule it was classified under while cfg.rules_gen stays
 * (bpf/wps_ingress.bpf.c). Rules A (another prefix), B (this flow, quantum 4,
 * no R), C (another prefix, quantum 100, R). Deleting A as ubctl does (B and
 * C move up one slot, rules_gen bumped): the flow must go on under B, not
 * under C, which now holds B's old slot. Then edits made as bpftool would
 * (no bump): B's R flag at once; B's prefix moved off the flow by the end of
 * the group, and the flow unsprayed from then on.
 */
static int rc_flags(struct wps_ingress *sk, __u64 now)
{
	__u16 fid;
	bool same;
	int v = ft_send(sk, 4000, now, &fid, &same);

	if (v == WPS_PASS && same)
		return -2;	/* passed unsprayed */
	return v == TC_ACT_REDIRECT && fid ? rc_last_flags : -1;
}

static bool rules_change_case(void)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct wps_ingress *sk = shared_ingress();
	int rfd, cfd, fl, n;
	struct wps_in_rule rb, rc, empty = {};
	struct wps_in_cfg cfg;
	__u32 k, zero = 0;
	char err[256], *argv[16], buf[256];
	bool ok = false;
	__u64 t = FT_T0;

	if (!f || !sk)
		goto out;
	snprintf(f->c.opts, sizeof(f->c.opts), "--node-id 1 --egress-node-id 2 --src fd00:a::1 --egress-addr fd00:b::1");
	f->npaths = 1;
	snprintf(f->paths[0], sizeof(f->paths[0]), "101 02:00:00:0b:00:01 02:00:00:0c:00:01");
	f->nrules = 3;
	snprintf(f->rules[0], sizeof(f->rules[0]), "--dst 10.30.0.0/24 --quantum 8 --no-reorder");
	snprintf(f->rules[1], sizeof(f->rules[1]), "--dst 10.20.0.0/24 --quantum 4 --no-reorder");
	snprintf(f->rules[2], sizeof(f->rules[2]), "--dst 10.40.0.0/24 --quantum 100");
	if (configure(sk, f, true, err, sizeof(err))) {
		printf("#   configuration: %s\n", err);
		goto out;
	}
	rfd = bpf_map__fd(sk->maps.wps_in_rules);
	cfd = bpf_map__fd(sk->maps.wps_in_cfg);
	k = 1;
	bpf_map_lookup_elem(rfd, &k, &rb);
	k = 2;
	bpf_map_lookup_elem(rfd, &k, &rc);
	/* S, then a packet that joins the group lock-free (the cached rule). */
	if ((fl = rc_flags(sk, t++)) != WPS_FLAG_S || (fl = rc_flags(sk, t++)) != 0) {
		printf("#   first packets under B: flags 0x%x\n", fl);
		goto out;
	}
	/* ubctl rule del A. */
	k = 0;
	bpf_map_update_elem(rfd, &k, &rb, BPF_ANY);
	k = 1;
	bpf_map_update_elem(rfd, &k, &rc, BPF_ANY);
	k = 2;
	bpf_map_update_elem(rfd, &k, &empty, BPF_ANY);
	bpf_map_lookup_elem(cfd, &zero, &cfg);
	cfg.rules_gen++;
	bpf_map_update_elem(cfd, &zero, &cfg, BPF_ANY);
	/* Packets 3 and 4 of B's group of 4: no R, E on the 4th. */
	if ((fl = rc_flags(sk, t++)) != 0 || (fl = rc_flags(sk, t++)) != WPS_FLAG_E) {
		printf("#   after rule del (slots moved): flags 0x%x, want B's group (no R, E on its 4th)\n", fl);
		goto out;
	}
	/* bpftool: B gets --reorder, no rules_gen bump: R from the next packet on. */
	rb.reorder = 1;
	k = 0;
	bpf_map_update_elem(rfd, &k, &rb, BPF_ANY);
	if ((fl = rc_flags(sk, t++)) != (WPS_FLAG_S | WPS_FLAG_R) || (fl = rc_flags(sk, t++)) != WPS_FLAG_R) {
		printf("#   after B got R (bpftool): flags 0x%x\n", fl);
		goto out;
	}
	/* bpftool: B's prefix moved off the flow: unsprayed by the group's end, and after. */
	snprintf(buf, sizeof(buf), "--dst 10.50.0.0/24 --quantum 4");
	n = split(buf, argv, 16);
	if (wps_rule_parse(n, argv, &rb, err, sizeof(err)) || bpf_map_update_elem(rfd, &k, &rb, BPF_ANY))
		goto out;
	for (int i = 0; i < 4; i++)
		if ((fl = rc_flags(sk, t++)) == -2)
			break;
	if (fl != -2) {
		printf("#   B's prefix moved off the flow (bpftool): still sprayed at the group's end\n");
		goto out;
	}
	for (int i = 0; i < 6; i++)
		if ((fl = rc_flags(sk, t++)) != -2) {
			printf("#   B's prefix moved off the flow (bpftool): packet %d sprayed again\n", i);
			goto out;
		}
	ok = true;
out:
	free(f);
	return ok;
}

/* The hot line of ft_pkt's flow from source port sport, and its slot; -1 if the flow is not there. */
static int ft_hot(struct wps_ingress *sk, __u16 sport, __u32 *slot, struct wps_in_flow_hot *h)
{
	struct wps_in_flow_key k;
	struct wps_in_flow_ref ref;

	ft_key(sport, &k);
	if (bpf_map_lookup_elem(bpf_map__fd(sk->maps.wps_in_flows), &k, &ref) ||
	    bpf_map_lookup_elem(bpf_map__fd(sk->maps.wps_in_flow_hot), &ref.slot, h))
		return -1;
	*slot = ref.slot;
	return 0;
}

/* Is the flow's last-seen time (flow_hot.seen) that of a clock read between lo and hi, give or take a tick? */
static bool seen_between(struct wps_ingress *sk, __u16 sport, __u64 lo, __u64 hi, __u64 tick, __u32 *seen)
{
	struct wps_in_flow_hot h;
	__u32 slot;

	if (ft_hot(sk, sport, &slot, &h))
		return false;
	*seen = h.seen;
	return (__s32)(h.seen - wps_seen(lo - 2 * tick)) >= 0 && (__s32)(wps_seen(hi + tick) - h.seen) >= 0;
}

/*
 * The lower bound of a joining packet's time: the coarse clock, read before
 * the packet as the program's own base is. A guest whose tick comes late (a
 * TCG vCPU descheduled on a loaded host) runs jiffies and the coarse clock
 * behind the exact clock by that much (19 ms seen), the same lag for both.
 */
static __u64 coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* The flow's last-seen time set back by 20 units (1.3 ms: far from idle), so the next packet writes its own. */
static void seen_back(struct wps_ingress *sk, __u16 sport)
{
	struct wps_in_flow_hot h;
	__u32 slot;

	if (!ft_hot(sk, sport, &slot, &h)) {
		h.seen -= 20;
		bpf_map_update_elem(bpf_map__fd(sk->maps.wps_in_flow_hot), &slot, &h, BPF_ANY);
	}
}

/*
 * The kernel's clocks (no test clock), as attached: a packet that joins its
 * group takes its time from jiffies on the coarse clock's base (now_join),
 * which the first exact reading calibrates; the flow's last-seen time it
 * writes is the coarse clock's to within a tick. An offset gone astray (10 s
 * ahead here) is put right by the next packet that decides (the group's E),
 * and its group is not taken for idle meanwhile.
 */
static bool join_clock_case(void)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct wps_ingress *sk = shared_ingress();
	struct wps_in_cfg cfg;
	__u64 lo, hi, tick;
	__u32 zero = 0, seen = 0;
	__u16 fid, fid0 = 0;
	bool same, ok = false;
	char err[256];
	int fl;

	if (!f || !sk)
		goto out;
	snprintf(f->c.opts, sizeof(f->c.opts), "--node-id 1 --egress-node-id 2 --src fd00:a::1 --egress-addr fd00:b::1");
	f->npaths = 2;
	snprintf(f->paths[0], sizeof(f->paths[0]), "101 02:00:00:0b:00:01 02:00:00:0c:00:01");
	snprintf(f->paths[1], sizeof(f->paths[1]), "102 02:00:00:0b:00:02 02:00:00:0c:00:02");
	f->nrules = 1;
	snprintf(f->rules[0], sizeof(f->rules[0]), "--dst 10.20.0.0/24 --quantum 4 --no-reorder");
	if (configure(sk, f, false, err, sizeof(err))) {
		printf("#   configuration: %s\n", err);
		goto out;
	}
	bpf_map_lookup_elem(bpf_map__fd(sk->maps.wps_in_cfg), &zero, &cfg);
	tick = cfg.coarse_tick_ns;
	if (!tick || sk->bss->clock_off) {
		printf("#   tick %llu, clock offset %lld before the first packet\n", (unsigned long long)tick,
		       (long long)sk->bss->clock_off);
		goto out;
	}
	/* S: a new flow, on the coarse clock, which sets the offset. */
	if (ft_send(sk, 7000, 0, &fid0, &same) != TC_ACT_REDIRECT || rc_last_flags != WPS_FLAG_S || !sk->bss->clock_off) {
		printf("#   first packet: flags 0x%x, clock offset %lld\n", rc_last_flags, (long long)sk->bss->clock_off);
		goto out;
	}
	/* Packet 2 joins: its last-seen time from jiffies. */
	seen_back(sk, 7000);
	lo = coarse_ns();
	fl = ft_send(sk, 7000, 0, &fid, &same);
	hi = ub_mono_ns();
	if (fl != TC_ACT_REDIRECT || rc_last_flags != 0 || fid != fid0 || !seen_between(sk, 7000, lo, hi, tick, &seen)) {
		printf("#   joining packet: flags 0x%x, Flow ID %u (was %u), seen %u for %llu..%llu ns\n", rc_last_flags,
		       fid, fid0, seen, (unsigned long long)lo, (unsigned long long)hi);
		goto out;
	}
	/* The offset 10 s ahead: packet 3 joins all the same (no idle flow renewed), packet 4 (E) calibrates. */
	sk->bss->clock_off += 10000000000LL;
	if (ft_send(sk, 7000, 0, &fid, &same) != TC_ACT_REDIRECT || rc_last_flags != 0 || fid != fid0 ||
	    ft_send(sk, 7000, 0, &fid, &same) != TC_ACT_REDIRECT || rc_last_flags != WPS_FLAG_E || fid != fid0) {
		printf("#   offset astray: flags 0x%x, Flow ID %u (was %u)\n", rc_last_flags, fid, fid0);
		goto out;
	}
	/* The next group: S decides, packet 2 joins on the calibrated clock. */
	if (ft_send(sk, 7000, 0, &fid, &same) != TC_ACT_REDIRECT || rc_last_flags != WPS_FLAG_S)
		goto out;
	seen_back(sk, 7000);
	lo = coarse_ns();
	fl = ft_send(sk, 7000, 0, &fid, &same);
	hi = ub_mono_ns();
	if (fl != TC_ACT_REDIRECT || rc_last_flags != 0 || !seen_between(sk, 7000, lo, hi, tick, &seen)) {
		printf("#   after calibrating again: flags 0x%x, seen %u for %llu..%llu ns\n", rc_last_flags, seen,
		       (unsigned long long)lo, (unsigned long long)hi);
		goto out;
	}
	ok = true;
out:
	free(f);
	return ok;
}

int main(int argc, char **argv)
{
	struct wps_ingress *in;
	struct wps_boundary *bd;
	int failed = 0;

	unsigned long long seed = 1;
	long count = 20000;

	while (argc > 2 && !strncmp(argv[1], "--fuzz-", 7)) {
		if (!strcmp(argv[1], "--fuzz-seed"))
			seed = strtoull(argv[2], NULL, 0);
		else if (!strcmp(argv[1], "--fuzz-count"))
			count = strtol(argv[2], NULL, 0);
		argv += 2;
		argc -= 2;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: wps_testrun [--fuzz-seed S] [--fuzz-count N] FIXTURES...\n");
		return 2;
	}
	lo_setup();
	in = wps_ingress__open_and_load();
	bd = wps_boundary__open_and_load();
	if (!in || !bd) {
		/* The verifier rejecting a program is a test failure, not a setup problem. */
		printf("not ok 1 - wps programs load (verifier): %s\n", strerror(errno));
		return 1;
	}
	fixture_tap(true, "wps programs load (verifier)");
	wps_ingress__destroy(in);
	wps_boundary__destroy(bd);
	for (int i = 1; i < argc; i++)
		if (fixture_run(&wps_driver, argv[i], &failed))
			failed++;
	failed += !fixture_tap(concurrency_case(),
			       "wps one flow on two CPUs at once: no torn group, no Group ID twice");
	failed += !fixture_tap(fuzz_case(seed, count),
			       "wps fuzz: random and mutated frames, checked by an independent decoder");
	failed += !fixture_tap(full_table_case(),
			       "wps full flow table: unsprayed not dropped, idle flows swept, Flow IDs quarantined");
	failed += !fixture_tap(rules_change_case(),
			       "wps rule changes reach known flows (ubctl: at once; bpftool: by the group's end)");
	failed += !fixture_tap(join_clock_case(),
			       "wps a joining packet's clock (jiffies on the coarse clock's base): within a tick, set right by the next decision");
	wps_ingress__destroy(g_ingress);
	return failed ? 1 : 0;
}
