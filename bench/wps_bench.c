// SPDX-License-Identifier: BSD-2-Clause
/*
 * wps_bench: ns/packet of the WPS ingress (bpf/wps_ingress.bpf.c) beside a
 * parse-only TC floor (bench/floor_tc.bpf.c), timed with BPF_PROG_RUN in one
 * process, interleaved round by round.
 *
 * The ingress grows the skb and marks it encapsulated, and BPF_PROG_RUN with
 * `repeat` runs again on that same skb, where a second encapsulation is
 * refused. So every measurement is one run on a fresh skb (repeat = 1), the
 * kernel's own per-run figure, many times; tc_null, a program that only
 * returns, is measured the same way and subtracted: what is left is the
 * program. The ingress keeps its flows between runs (the steady state: flow
 * found, group advancing, path chosen). Each run's verdict is checked.
 *
 * --flows N: the ingress's runs go round N flows (source port and address
 * vary), each made before the timing; with many, a run's flow state is cold,
 * as it is at a gateway that carries that many flows at once. --burst B: B
 * runs of a flow in a row before the next (1: every run another flow). Beyond
 * the 16-bit Flow ID space the bench lets Flow IDs repeat
 * (WPS_IN_F_TEST_FID_REUSE): nothing it sends reaches a wire.
 *
 *   wps_bench [--bpf-dir DIR] [--runs N] [--rounds N] [--stages] [--flows N [--burst B]] [--evict KIB]
 *             [--baseline OBJ]...
 *
 * --evict KIB: KIB KiB written (a byte a cache line) before every run, so
 * each run finds the program's code and data as cold as a loaded machine
 * leaves them (1024: this machine's L2).
 *
 * --baseline, up to MAX_BASE times: other builds' ingress objects, timed in the
 * same rounds (a change against main, or variants of a change against each other).
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include "wps_ingress.skel.h"
#include "wps/wps_cfg.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* An Eth/IP/UDP frame of `len` bytes towards 10.20.0.2 or fd20::2. */
static size_t frame(unsigned char *f, int v6, size_t len)
{
	static const unsigned char eth4[14] = { 2, 0, 0, 0xa, 0, 2, 2, 0, 0, 0xa, 0, 1, 0x08, 0x00 };
	unsigned char *ip = f + 14, *udp;
	size_t ipl = len - 14;

	memset(f, 0, len);
	memcpy(f, eth4, 14);
	if (v6) {
		f[12] = 0x86;
		f[13] = 0xdd;
		ip[0] = 0x60;
		ip[4] = (unsigned char)((ipl - 40) >> 8);
		ip[5] = (unsigned char)(ipl - 40);
		ip[6] = 17;
		ip[7] = 64;
		ip[8] = 0xfd; ip[9] = 0x10; ip[23] = 2;
		ip[24] = 0xfd; ip[25] = 0x20; ip[39] = 2;
		udp = ip + 40;
	} else {
		ip[0] = 0x45;
		ip[2] = (unsigned char)(ipl >> 8);
		ip[3] = (unsigned char)ipl;
		ip[8] = 64;
		ip[9] = 17;
		ip[12] = 10; ip[13] = 10; ip[15] = 2;
		ip[16] = 10; ip[17] = 20; ip[19] = 2;
		udp = ip + 20;
	}
	udp[0] = 0x0f; udp[1] = 0xa0;	/* 4000 */
	udp[2] = 0x17; udp[3] = 0x70;	/* 6000 */
	udp[4] = (unsigned char)((f + len - udp) >> 8);
	udp[5] = (unsigned char)(f + len - udp);
	return len;
}

/* The ingress cut short after each stage (bench_stop in bpf/wps_ingress.bpf.c). */
#define NSTAGES 7
/*
 * The headline rows: ingress IPv4/IPv6, parse floors, encapsulation floors,
 * tc_null, and the encapsulation with a line of per-flow state.
 */
#define NFIX 9
/* Rounds at most: many short ones interleave the programs finely on a shared machine. */
#define MAX_ROUNDS 256
#define MAX_BASE 4

struct prog {
	const char *name;
	int fd;
	int want;
	unsigned char f[256];
	size_t len;
	int v6;
	unsigned nflows, next;	/* > 1: runs go round nflows flows */
	double ns[MAX_ROUNDS];
};

static unsigned g_flows = 1, g_burst = 1;
/* --evict: bytes written between two runs, one per cache line (0: none). */
static size_t g_evict;
static volatile unsigned char *g_evict_buf;

/* Flow i of the frame: source port and the third (IPv4) or 14th (IPv6) byte of the source. */
static void frame_flow(unsigned char *f, int v6, unsigned i)
{
	unsigned char *ip = f + 14, *udp = ip + (v6 ? 40 : 20);
	unsigned port = 1024 + i % 60000, hi = i / 60000;

	udp[0] = (unsigned char)(port >> 8);
	udp[1] = (unsigned char)port;
	if (v6)
		ip[8 + 13] = (unsigned char)hi;
	else
		ip[12 + 2] = (unsigned char)hi;
}

static unsigned gcd(unsigned a, unsigned b)
{
	while (b) {
		unsigned t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * The flow of the k-th visit: the flows in a scattered order, each once per
 * round of n (a stride near 0.618 n, prime to n), not in the order they were
 * made: the ingress gives a new flow the next free slot of its table, and
 * visits in that order would walk its lines one after another, as no real mix
 * of flows does.
 */
static unsigned visit(unsigned long long k, unsigned n)
{
	static unsigned for_n, stride;

	if (for_n != n) {
		for (stride = (unsigned)(n * 0.618) | 1; gcd(stride, n) != 1; stride += 2)
			;
		for_n = n;
	}
	return (unsigned)(k % n * stride % n);
}

/*
 * Mean of the middle half of v (sorted here). A single run's duration comes
 * in clock steps (10 ns on the VM this was written on), so a median moves by
 * whole steps; the interquartile mean resolves below one and still ignores
 * the runs an interrupt or another task stretched.
 */
static double iq_mean(double *v, int n)
{
	double sum = 0;
	int lo = n / 4, hi = n - n / 4;

	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	for (int i = lo; i < hi; i++)
		sum += v[i];
	return sum / (hi - lo);
}

/* Interquartile mean per-run ns of `runs` single runs; -1 on a wrong verdict. */
static double time_runs(struct prog *p, int runs)
{
	unsigned char out[512];
	double *v = calloc((size_t)runs, sizeof(*v)), m;

	for (int i = 0; i < runs; i++) {
		for (size_t b = 0; b < g_evict; b += 64)
			g_evict_buf[b]++;
		if (p->nflows > 1)
			frame_flow(p->f, p->v6, visit(p->next++ / g_burst, p->nflows));
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = p->f, .data_size_in = (__u32)p->len, .data_out = out,
			    .data_size_out = sizeof(out), .repeat = 1);
		if (bpf_prog_test_run_opts(p->fd, &o) || (int)o.retval != p->want) {
			fprintf(stderr, "wps_bench: %s: run %d: %s, verdict %d (want %d)\n", p->name, i,
				strerror(errno), (int)o.retval, p->want);
			free(v);
			return -1;
		}
		v[i] = o.duration;
	}
	m = iq_mean(v, runs);
	free(v);
	return m;
}

static int map_fd(struct bpf_object *obj, const char *name)
{
	return bpf_map__fd(bpf_object__find_map_by_name(obj, name));
}

/* Four explicit paths, one rule spraying UDP in groups of 16 packets, per IP version. */
static int ingress_setup(struct bpf_object *obj)
{
	struct wps_in_cfg cfg;
	char err[256];
	__u32 zero = 0;

	/* Four explicit paths, one rule spraying UDP in groups of 16 packets. */
	wps_in_cfg_defaults(&cfg);
	wps_in_cfg_tick(&cfg);	/* as attach sets it: the coarse clock's tick */
	wps_in_cfg_set(&cfg, "src", "fd00:a::1", err, sizeof(err));
	wps_in_cfg_set(&cfg, "egress-addr", "fd00:b::1", err, sizeof(err));
	cfg.node_id = 1;
	cfg.egress_node_id = 2;
	cfg.npaths = 4;
	cfg.path_mtu = 1500;
	cfg.max_delay_ns = 0;	/* no in-flight holding: every group closes on its quantum */
	cfg.idle_ns = 3600000000000ULL;	/* no flow idle between its runs, however long the bench */
	if (g_flows > 1)
		cfg.flags |= WPS_IN_F_TEST_FID_REUSE;
	for (__u32 i = 0; i < 4; i++) {
		struct wps_in_path pa = { .ifindex = 100 + i, .mtu = 1500, .dmac = { 2, 0, 0, 0xc, 0, (__u8)i },
					  .smac = { 2, 0, 0, 0xb, 0, (__u8)i } };

		bpf_map_update_elem(map_fd(obj, "wps_in_paths"), &i, &pa, BPF_ANY);
	}
	{
		char *r4[] = { "--dst", "10.20.0.0/24", "--proto", "udp", "--quantum", "16" };
		char *r6[] = { "--dst", "fd20::/64", "--proto", "udp", "--quantum", "16" };
		struct wps_in_rule r;
		__u32 k = 0;

		if (wps_rule_parse(6, r4, &r, err, sizeof(err)) ||
		    bpf_map_update_elem(map_fd(obj, "wps_in_rules"), &k, &r, BPF_ANY))
			return -1;
		k = 1;
		if (wps_rule_parse(6, r6, &r, err, sizeof(err)) ||
		    bpf_map_update_elem(map_fd(obj, "wps_in_rules"), &k, &r, BPF_ANY))
			return -1;
	}
	wps_in_cfg_sync_paths(&cfg);
	return bpf_map_update_elem(map_fd(obj, "wps_in_cfg"), &zero, &cfg, BPF_ANY);
}

/* A const volatile __u32 in an object's .rodata image before load, found through its BTF. */
static void rodata_set(struct bpf_object *obj, const char *name, __u32 val)
{
	struct bpf_map *ro = bpf_object__find_map_by_name(obj, ".rodata");
	size_t sz;
	/* the object's .rodata image before load (the skeleton writes the same) */
	__u32 *rodata = ro ? (__u32 *)(unsigned long)bpf_map__initial_value(ro, &sz) : NULL;
	struct btf *btf = bpf_object__btf(obj);
	int id = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -1;
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_var_secinfo *v = t ? btf_var_secinfos(t) : NULL;

	for (int i = 0; v && rodata && i < btf_vlen(t); i++, v++)
		if (!strcmp(btf__name_by_offset(btf, btf__type_by_id(btf, v->type)->name_off), name))
			rodata[v->offset / 4] = val;
}

/*
 * Room for the flows, and some: a full table would not spray them. An
 * object with a flow table sized by max_flows (this tree's) gets it set as
 * attach --max-flows would; an older one, its flows map larger.
 */
static void flows_room(struct bpf_object *obj)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "wps_in_flows");
	__u32 want = wps_in_pow2(2 * g_flows + 64);	/* IPv4 and IPv6 flows both */

	if (!m || bpf_map__max_entries(m) >= want)
		return;
	if (bpf_object__find_map_by_name(obj, "wps_in_flow_hot")) {
		wps_in_flow_table_size(obj, want);
		rodata_set(obj, "max_flows", want);
	} else {
		bpf_map__set_max_entries(m, want);
	}
}

/* Every flow's first packet, once, untimed: the table holds them all before the timing. */
static int flows_make(int fd)
{
	for (int v6 = 0; v6 < 2 && g_flows > 1; v6++) {
		unsigned char f[256], out[512];
		size_t len = frame(f, v6, 128);

		for (unsigned i = 0; i < g_flows; i++) {
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = (__u32)len, .data_out = out,
				    .data_size_out = sizeof(out), .repeat = 1);
			frame_flow(f, v6, i);
			if (bpf_prog_test_run_opts(fd, &o) || o.retval != TC_ACT_REDIRECT) {
				fprintf(stderr, "wps_bench: making flow %u (IPv%d): verdict %u\n", i, v6 ? 6 : 4, o.retval);
				return -1;
			}
		}
	}
	return 0;
}

/* Every round's ns/packet of every program but the cut-short stages, for
 * bench/plot_svg.py rounds: how the ingress and its floors move together. */
static int write_rounds_csv(const char *path, const struct prog *p, int np, int rounds)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "wps_bench: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "program,round,ns\n");
	for (int i = 0; i < np; i++) {
		if (p[i].name[0] == ' ')	/* a stage: " ingress to: ..." */
			continue;
		for (int r = 0; r < rounds; r++)
			fprintf(f, "%s,%d,%.1f\n", p[i].name, r + 1, p[i].ns[r]);
	}
	return fclose(f) ? -1 : 0;
}

/* This tree's ingress, stopping after stage `stop` (0: the whole program). */
static struct wps_ingress *ingress_load(__u32 stop)
{
	struct wps_ingress *skel = wps_ingress__open();

	if (!skel)
		return NULL;
	skel->rodata->bench_stop = stop;
	flows_room(skel->obj);
	if (wps_ingress__load(skel) || ingress_setup(skel->obj) ||
	    (!stop && flows_make(bpf_program__fd(skel->progs.wps_ingress)))) {
		wps_ingress__destroy(skel);
		return NULL;
	}
	return skel;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bpf-dir", required_argument, 0, 'b' }, { "runs", required_argument, 0, 'r' },
		{ "rounds", required_argument, 0, 'n' }, { "stages", no_argument, 0, 's' },
		{ "baseline", required_argument, 0, 'B' }, { "flows", required_argument, 0, 'f' },
		{ "burst", required_argument, 0, 'u' }, { "csv", required_argument, 0, 'c' },
		{ "evict", required_argument, 0, 'e' },
		{ 0, 0, 0, 0 },
	};
	const char *bpf_dir = NULL, *baseline[MAX_BASE] = { 0 }, *csv = NULL;
	struct bpf_object *base[MAX_BASE] = { 0 };
	int nbase = 0;
	char exe[PATH_MAX], dir[PATH_MAX + 8], path[PATH_MAX + 64];
	int runs = 20000, rounds = 7, c, np, stages = 0;
	struct wps_ingress *skel, *st[NSTAGES] = { 0 };
	struct bpf_object *fl;
	/* The first two and the floors are the headline; --stages adds the cut-short ingresses. */
	struct prog p[NFIX + NSTAGES + 2 * MAX_BASE] = {
		{ .name = "wps_ingress IPv4/UDP 128 B", .want = TC_ACT_REDIRECT },
		{ .name = "wps_ingress IPv6/UDP 128 B", .want = TC_ACT_REDIRECT, .v6 = 1 },
		{ .name = "floor_tc_parse IPv4/UDP", .want = TC_ACT_OK },
		{ .name = "floor_tc_parse IPv6/UDP", .want = TC_ACT_OK, .v6 = 1 },
		{ .name = "floor_tc_encap IPv4/UDP", .want = TC_ACT_REDIRECT },
		{ .name = "floor_tc_encap IPv6/UDP", .want = TC_ACT_REDIRECT, .v6 = 1 },
		{ .name = "tc_null (timing overhead)", .want = TC_ACT_OK },
		{ .name = "floor_tc_encap_flow IPv4/UDP", .want = TC_ACT_REDIRECT },
		{ .name = "floor_tc_encap_flow IPv6/UDP", .want = TC_ACT_REDIRECT, .v6 = 1 },
		{ .name = " ingress to: parsed", .want = TC_ACT_UNSPEC },
		{ .name = " ingress to: flow looked up", .want = TC_ACT_UNSPEC },
		{ .name = " ingress to: rule known", .want = TC_ACT_UNSPEC },
		{ .name = " ingress to: clock read", .want = TC_ACT_UNSPEC },
		{ .name = " ingress to: group decided", .want = TC_ACT_UNSPEC },
		{ .name = " ingress to: adjust_room", .want = TC_ACT_UNSPEC },
		{ .name = " ingress to: header stored", .want = TC_ACT_UNSPEC },
	};
	enum { ENC = 4, NUL = 6, FLW = 7 };

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'b')
			bpf_dir = optarg;
		else if (c == 'r')
			runs = atoi(optarg);
		else if (c == 'n')
			rounds = atoi(optarg);
		else if (c == 's')
			stages = 1;
		else if (c == 'B' && nbase < MAX_BASE)
			baseline[nbase++] = optarg;
		else if (c == 'B') {
			fprintf(stderr, "wps_bench: at most %d --baseline\n", MAX_BASE);
			return 2;
		}
		else if (c == 'f')
			g_flows = (unsigned)strtoul(optarg, NULL, 0);
		else if (c == 'u')
			g_burst = (unsigned)strtoul(optarg, NULL, 0);
		else if (c == 'c')
			csv = optarg;
		else if (c == 'e')
			g_evict = (size_t)strtoul(optarg, NULL, 0) * 1024;
		else
			return 2;	/* getopt said which option */
	}
	if (runs < 1 || rounds < 1 || rounds > MAX_ROUNDS || g_flows < 1 || g_flows > 10000000 || g_burst < 1) {
		fprintf(stderr, "wps_bench: --runs, --flows and --burst take at least 1, --rounds 1 to %d\n", MAX_ROUNDS);
		return 2;
	}
	if (g_evict && !(g_evict_buf = calloc(1, g_evict)))
		return 1;
	for (int b = 0; b < nbase; b++) {
		/* Another build's ingress (its wps_ingress.linked.o), timed in the same rounds. */
		base[b] = bpf_object__open_file(baseline[b], NULL);
		if (base[b])
			flows_room(base[b]);
		if (!base[b] || bpf_object__load(base[b]) || ingress_setup(base[b]) ||
		    flows_make(bpf_program__fd(bpf_object__find_program_by_name(base[b], "wps_ingress")))) {
			fprintf(stderr, "wps_bench: cannot load the baseline %s\n", baseline[b]);
			return 1;
		}
	}
	if (!bpf_dir) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n < 0)
			return 1;
		exe[n] = '\0';
		snprintf(dir, sizeof(dir), "%s/../bpf", dirname(exe));
		bpf_dir = dir;
	}
	skel = ingress_load(0);
	snprintf(path, sizeof(path), "%s/floor_tc.bpf.o", bpf_dir);
	fl = bpf_object__open_file(path, NULL);
	if (fl) {
		/* as many lines as the ingress's flow_hot has slots */
		__u32 lines = g_flows > 1 ? wps_in_pow2(2 * (2 * g_flows + 64)) : 1;

		bpf_map__set_max_entries(bpf_object__find_map_by_name(fl, "floor_flow_lines"), lines);
		rodata_set(fl, "flow_lines", lines);
	}
	if (!skel || !fl || bpf_object__load(fl)) {
		fprintf(stderr, "wps_bench: cannot load the programs (%s)\n", path);
		return 1;
	}
	p[0].fd = p[1].fd = bpf_program__fd(skel->progs.wps_ingress);
	p[2].fd = p[3].fd = bpf_program__fd(bpf_object__find_program_by_name(fl, "floor_tc_parse"));
	p[4].fd = p[5].fd = bpf_program__fd(bpf_object__find_program_by_name(fl, "floor_tc_encap"));
	p[6].fd = bpf_program__fd(bpf_object__find_program_by_name(fl, "tc_null"));
	p[FLW].fd = p[FLW + 1].fd = bpf_program__fd(bpf_object__find_program_by_name(fl, "floor_tc_encap_flow"));
	p[0].nflows = p[1].nflows = p[FLW].nflows = p[FLW + 1].nflows = g_flows;
	np = NFIX;
	for (int k = 0; stages && k < NSTAGES; k++, np++) {
		st[k] = ingress_load((__u32)k + 1);
		if (!st[k]) {
			fprintf(stderr, "wps_bench: cannot load the ingress cut at stage %d\n", k + 1);
			return 1;
		}
		p[np].fd = bpf_program__fd(st[k]->progs.wps_ingress);
	}
	for (int b = 0; b < nbase; b++) {
		static const char *names[MAX_BASE][2] = {
			{ "baseline IPv4/UDP 128 B", "baseline IPv6/UDP 128 B" },
			{ "baseline 2 IPv4/UDP 128 B", "baseline 2 IPv6/UDP 128 B" },
			{ "baseline 3 IPv4/UDP 128 B", "baseline 3 IPv6/UDP 128 B" },
			{ "baseline 4 IPv4/UDP 128 B", "baseline 4 IPv6/UDP 128 B" },
		};
		int fd = bpf_program__fd(bpf_object__find_program_by_name(base[b], "wps_ingress"));

		for (int v = 0; v < 2; v++, np++) {
			p[np].name = names[b][v];
			p[np].want = TC_ACT_REDIRECT;
			p[np].fd = fd;
			p[np].v6 = v;
			p[np].nflows = g_flows;
			p[np].len = frame(p[np].f, v, 128);
		}
	}
	for (int i = 0; i < np - 2 * nbase; i++)
		p[i].len = frame(p[i].f, p[i].v6, 128);

	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < np; i++)
			if ((p[i].ns[r] = time_runs(&p[i], runs)) < 0)
				return 1;
	if (csv && write_rounds_csv(csv, p, np, rounds))
		return 1;
	{
		double m[NFIX + NSTAGES + 2 * MAX_BASE], net[NFIX + NSTAGES + 2 * MAX_BASE];

		for (int i = 0; i < np; i++)
			m[i] = median(p[i].ns, rounds);
		for (int i = 0; i < np; i++)
			net[i] = m[i] - m[NUL];
		printf("WPS ingress, BPF_PROG_RUN, %d rounds x %d single runs, %u flow%s%s (ns/packet: median over rounds "
		       "of each round's interquartile mean; net = minus tc_null)\n",
		       rounds, runs, g_flows, g_flows > 1 ? "s" : "", g_burst > 1 && g_flows > 1 ? " in bursts" : "");
		if (g_burst > 1 && g_flows > 1)
			printf("  (%u runs of a flow in a row, then the next)\n", g_burst);
		printf("  %-30s %8s %8s\n", "program", "ns", "net");
		for (int i = 0; i < np; i++)
			printf("  %-30s %8.1f %8.1f\n", p[i].name, m[i], net[i]);
		for (int v = 0; v < 2; v++) {
			printf("  ratio ingress/parse floor IPv%d: %.2f", v ? 6 : 4, m[v] / m[2 + v]);
			/* A net floor of a few ns is the timing's noise, not a divisor. */
			if (net[2 + v] >= 10)
				printf(" (net %.2f)\n", net[v] / net[2 + v]);
			else
				printf(" (net: the floor's %.1f ns is within the timing's noise)\n", net[2 + v]);
		}
		for (int v = 0; v < 2; v++) {
			/* Per round too: the ingress and the floor ran side by side in it. */
			double q[MAX_ROUNDS];

			for (int r = 0; r < rounds; r++)
				q[r] = p[v].ns[r] / p[ENC + v].ns[r];
			printf("  ratio ingress/encapsulation-only floor IPv%d: %.2f (net %.2f; median of per-round "
			       "ratios %.2f)   target <= 1.3\n", v ? 6 : 4, m[v] / m[ENC + v],
			       net[ENC + v] >= 1 ? net[v] / net[ENC + v] : 0, median(q, rounds));
		}
		for (int v = 0; v < 2 && g_flows > 1; v++) {
			/* Many flows: how far above one cold line of per-flow state. */
			double q[MAX_ROUNDS];

			for (int r = 0; r < rounds; r++)
				q[r] = p[v].ns[r] / p[FLW + v].ns[r];
			printf("  ratio ingress/encapsulation + one per-flow line IPv%d: %.2f (median of per-round ratios %.2f)\n",
			       v ? 6 : 4, m[v] / m[FLW + v], median(q, rounds));
		}
		/* Per round, this tree over each baseline: the rounds share the machine's load. */
		for (int b = 0; b < nbase; b++) {
			int at = np - 2 * nbase + 2 * b;

			for (int v = 0; v < 2; v++) {
				double q[MAX_ROUNDS], qe[MAX_ROUNDS];

				for (int r = 0; r < rounds; r++) {
					q[r] = p[v].ns[r] / p[at + v].ns[r];
					qe[r] = p[at + v].ns[r] / p[ENC + v].ns[r];
				}
				printf("  ratio ingress/baseline%s%.0d IPv%d: %.2f (median of per-round ratios); baseline/floor %.2f, "
				       "baseline/encapsulation-only floor %.2f (per round)\n", b ? " " : "", b ? b + 1 : 0,
				       v ? 6 : 4, median(q, rounds), m[at + v] / m[2 + v], median(qe, rounds));
			}
		}
	}
	{
		/* What the timed runs did, as the program counted it: every run a known flow's. */
		int fd = bpf_map__fd(skel->maps.wps_in_stats), ncpu = libbpf_num_possible_cpus();
		__u64 *v = calloc((size_t)(ncpu > 0 ? ncpu : 1), sizeof(*v)), c[WPS_IN_CNT__MAX] = { 0 };

		for (__u32 i = 0; v && i < WPS_IN_CNT__MAX; i++)
			if (!bpf_map_lookup_elem(fd, &i, v))
				for (int k = 0; k < ncpu; k++)
					c[i] += v[k];
		printf("  ingress counters: rx %llu, tx_sprayed %llu, flows_new %llu, groups_opened %llu, flow_table_sweeps %llu, "
		       "flow_cache_misses %llu\n",
		       (unsigned long long)c[WPS_IN_CNT_RX], (unsigned long long)c[WPS_IN_CNT_TX_SPRAYED],
		       (unsigned long long)c[WPS_IN_CNT_EV_FLOW_NEW], (unsigned long long)c[WPS_IN_CNT_EV_GROUP_OPENED],
		       (unsigned long long)c[WPS_IN_CNT_EV_TABLE_WALK], (unsigned long long)c[WPS_IN_CNT_EV_CACHE_MISS]);
		free(v);
	}
	for (int k = 0; k < NSTAGES; k++)
		wps_ingress__destroy(st[k]);
	bpf_object__close(fl);
	for (int b = 0; b < nbase; b++)
		bpf_object__close(base[b]);
	wps_ingress__destroy(skel);
	return 0;
}
