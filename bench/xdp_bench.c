// SPDX-License-Identifier: BSD-2-Clause
/*
 * ns/packet of the UB2E conversion programs beside two floors, all timed with
 * BPF_PROG_RUN in the same process, interleaved round by round.
 *
 *   floor (a)  bench/floor_fwd.bpf.c: xdp_fwd-style forwarder (FIB + redirect),
 *              IPv4 and, for the IPv6 conversions, IPv6
 *   floor (b)  bench/floor_tx.bpf.c: parse Eth/IPv4/UDP, swap MACs, XDP_TX
 *
 * All run on the switch namespace's devices (ingress_ifindex = sw-ub or sw-ip),
 * so bpf_fib_lookup answers from the switch's routes and neighbours.
 *
 * The packet is not reset between repetitions of a non-live BPF_PROG_RUN, so
 * every program runs behind bench/testrun_reset.bpf.c, which restores the
 * frame and tail-calls it; the harness's own cost (tail call to a program
 * that only returns) is measured in the same rounds and subtracted. Before
 * any timing each program runs once on its own and its verdict and output
 * frame are checked; after each timed run the verdict, the output frame and
 * (for the converters) the tx counter show that every repetition took the
 * full path. Any deviation stops the bench.
 */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "xdp_bench.h"
#include "testrun_reset.h"
#include "ub2e_maps.h"	/* first: the skeleton's .data.cfg is a struct ub2e_cfg */
#include "ub2e.skel.h"
#include "io/ub2e_stats.h"

/*
 * Median over rounds of p / q, both harness subtracted, plus the bare loop's
 * cost of that round when `loop` is given. Rounds where q came out at 0 ns or
 * less (floor (b) is a few ns, measured in whole ns) are left out.
 */
static double median_ratio(const struct bprog *p, const struct bprog *q, const struct bprog *loop,
			   int rounds)
{
	double r[100];
	int n = 0;

	for (int k = 0; k < rounds; k++) {
		double add = loop ? loop->ns[k] : 0, den = q->net[k] + add;

		if (den > 0)
			r[n++] = (p->net[k] + add) / den;
	}
	return n ? bench_median(r, n) : 0.0 / 0.0;
}

/* The floor (a) a program is compared with: the one of its IP version. */
static const struct bprog *floor_a_for(const struct bprog *p, const struct bprog *fa4,
				       const struct bprog *fa6)
{
	return p->ipv == 6 ? fa6 : fa4;
}

int xdp_bench(const struct xdp_bench_opts *o)
{
	struct objs ob = { 0 };
	struct topo t;
	struct run r;
	int ub_if, ip_if, rc = 1, cpu;
	cpu_set_t set;
	struct bprog ps[] = {
		{ .name = "ub2e_to_uboe IPv4", .role = CONVERT, .ipv = 4, .verdict = XDP_REDIRECT,
		  .counter = UB2E_CNT_TX_UBOE },
		{ .name = "ub2e_to_uboe IPv6", .role = CONVERT, .ipv = 6, .verdict = XDP_REDIRECT,
		  .counter = UB2E_CNT_TX_UBOE },
		{ .name = "ub2e_to_ub IPv4", .role = CONVERT, .ipv = 4, .verdict = XDP_REDIRECT,
		  .counter = UB2E_CNT_TX_UB },
		{ .name = "ub2e_to_ub IPv6", .role = CONVERT, .ipv = 6, .verdict = XDP_REDIRECT,
		  .counter = UB2E_CNT_TX_UB },
		{ .name = "floor (a) fwd IPv4", .role = FLOOR_A, .ipv = 4, .verdict = XDP_REDIRECT,
		  .counter = -1 },
		{ .name = "floor (a) fwd IPv6", .role = FLOOR_A, .ipv = 6, .verdict = XDP_REDIRECT,
		  .counter = -1 },
		{ .name = "floor (b) swap+XDP_TX", .role = FLOOR_B, .ipv = 4, .verdict = XDP_TX,
		  .counter = -1 },
		{ .name = "harness", .role = HARNESS, .ipv = 4, .verdict = XDP_PASS, .counter = -1 },
		{ .name = "empty program, bare", .role = EMPTY, .ipv = 4, .bare = true,
		  .verdict = XDP_PASS, .counter = -1 },
		{ .name = "floor (b), bare", .role = FLOOR_B, .ipv = 4, .bare = true,
		  .verdict = XDP_TX, .counter = -1 },
		/* --baseline only: the first four in the other build (copied from them below) */
		{ .name = "  baseline to_uboe IPv4" }, { .name = "  baseline to_uboe IPv6" },
		{ .name = "  baseline to_ub IPv4" }, { .name = "  baseline to_ub IPv6" },
	};
	const int n = (int)(sizeof(ps) / sizeof(ps[0])) - (o->baseline ? 0 : 4);
	struct bprog *fa4 = &ps[4], *fa6 = &ps[5], *fb = &ps[6], *h = &ps[7];
	struct bprog *empty = &ps[8], *fb_bare = &ps[9];
	double bare_b[100];

	if (topo_from_env(&t))
		return 1;
	ub_if = (int)if_nametoindex(o->ub_if);
	ip_if = (int)if_nametoindex(o->ip_if);
	if (!ub_if || !ip_if)
		return fail("no device %s or %s in this network namespace (run through scripts/bench.sh)",
			    o->ub_if, o->ip_if);

	/* One core for every measurement, so that they compare. */
	cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "bench: cannot pin to cpu %d: %s\n", cpu, strerror(errno));

	libbpf_set_print(NULL);
	if (load_all(&ob, o, ub_if, ip_if) || (o->baseline && load_baseline(&ob, o, ub_if, ip_if)))
		goto out;
	for (int i = 0; i < 10; i++)
		ps[i].stats_fd = ob.stats_map;
	ps[0].fd = ps[1].fd = bpf_program__fd(ob.ub2e->progs.ub2e_to_uboe);
	ps[2].fd = ps[3].fd = bpf_program__fd(ob.ub2e->progs.ub2e_to_ub);
	fa4->fd = fa6->fd = prog_fd(ob.fwd, "floor_fwd");
	fb->fd = fb_bare->fd = prog_fd(ob.tx, "floor_tx");
	h->fd = empty->fd = ob.null_fd;
	for (int i = 0; i < n; i++)
		ps[i].ifindex = ub_if;
	ps[2].ifindex = ps[3].ifindex = ip_if;
	if (frame_from_ubpu(&ps[0], &t, 4, true) || frame_from_ubpu(&ps[1], &t, 6, true) ||
	    frame_uboe_to_ubpu(&ps[2], &t, 4) || frame_uboe_to_ubpu(&ps[3], &t, 6))
		goto out;
	for (int i = 4; i < n && i < 10; i++)
		if (frame_from_ubpu(&ps[i], &t, ps[i].ipv, false))
			goto out;
	for (int i = 10; i < n; i++) {
		const char *name = ps[i].name;

		ps[i] = ps[i - 10];
		ps[i].name = name;
		ps[i].fd = prog_fd(ob.base, i < 12 ? "ub2e_to_uboe" : "ub2e_to_ub");
		ps[i].stats_fd = map_fd(ob.base, "ub2e_stats");
	}

	/* Each program once on its own: right verdict, right frame, or no numbers. */
	for (int i = 0; i < n; i++) {
		struct bprog *p = &ps[i];

		if (p->fd < 0) {
			fail("%s: program not found", p->name);
			goto out;
		}
		if (p->len < RESET_BYTES) {
			fail("%s: frame shorter than the harness restores", p->name);
			goto out;
		}
		if (test_run(p->fd, p, 1, &r))
			goto out;
		if (check_output(p, &r, &t)) {
			if (p->role == CONVERT)
				dump_counters(p->stats_fd);
			goto out;
		}
		memcpy(p->out, r.out, r.out_len);
		p->out_len = r.out_len;
	}

	/* Why the harness: a bare repeated run converts once, then sees its own output. */
	{
		uint64_t before, after;
		const int k = 1000;

		if (counter_sum(ob.stats_map, UB2E_CNT_TX_UBOE, &before) ||
		    test_run(ps[0].fd, &ps[0], k, &r) ||
		    counter_sum(ob.stats_map, UB2E_CNT_TX_UBOE, &after))
			goto out;
		printf("note: BPF_PROG_RUN repeats on one buffer and never resets it: bare, ub2e_to_uboe "
		       "converted %llu of %d repetitions (last verdict %s).\n"
		       "      So every program runs behind bench/testrun_reset.bpf.c (restore frame, "
		       "tail call); its cost is measured and subtracted.\n",
		       (unsigned long long)(after - before), k, xdp_name(r.retval));
	}

	printf("BPF_PROG_RUN repeat %d, %d rounds interleaved, cpu %d, ingress %s (%d) / %s (%d), "
	       "NPI table %s\n", o->repeat, o->rounds, cpu, o->ub_if, ub_if, o->ip_if, ip_if,
	       o->npi_entry ? "{pid 1 high -> VLAN 1}" : "empty (cfg defaults)");

	for (int round = 0; round < o->rounds; round++) {
		/* Rotate the order so no program always runs first or after the same one. */
		for (int k = 0; k < n; k++) {
			struct bprog *p = &ps[(k + round) % n];

			if (timed_run(&ob, p, o->repeat, &r))
				goto out;
			p->ns[round] = r.duration;
		}
		for (int i = 0; i < n; i++)
			ps[i].net[round] = ps[i].ns[round] - h->ns[round];
	}

	/*
	 * Left: the program alone, "behind the harness" minus "harness alone" in
	 * the same round; median and min over rounds. Right: the same
	 * plus BPF_PROG_RUN's own loop (the empty program, bare), i.e. what
	 * BPF_PROG_RUN would report if it gave every repetition a fresh frame.
	 * Ratios are taken within each round, then the median over rounds, so
	 * that a machine that speeds up or slows down between rounds cancels out.
	 */
	printf("\n%-24s %-55s %s\n", "", "ns/packet, program alone", "+ BPF_PROG_RUN loop");
	printf("%-24s %7s %6s %10s %10s %12s   %6s %10s %10s\n", "program", "median", "min",
	       "/floor(a)", "/floor(b)", "<=" XSTR(TARGET_TIME) "x(a)", "ns", "/floor(a)", "/floor(b)");
	for (int i = 0; i < n; i++) {
		const struct bprog *p = &ps[i];

		if (i >= 7 && i < 10)
			continue;
		const struct bprog *fa = floor_a_for(p, fa4, fa6);
		double med = bench_median(p->net, o->rounds);
		double mn = bench_min(p->net, o->rounds);
		double ra = median_ratio(p, fa, NULL, o->rounds);
		char verdict[32] = "-";

		if (p->role == CONVERT) {
			int ok = 0;

			for (int k = 0; k < o->rounds; k++)
				ok += p->net[k] <= TARGET_TIME * fa->net[k];
			snprintf(verdict, sizeof(verdict), "%s %d/%d", ra <= TARGET_TIME ? "PASS" : "FAIL",
				 ok, o->rounds);
		}
		printf("%-24s %7.1f %6.1f %10.2f %10.2f %12s   %6.1f %10.2f %10.2f\n", p->name, med, mn,
		       ra, median_ratio(p, fb, NULL, o->rounds), verdict,
		       med + bench_median(empty->ns, o->rounds), median_ratio(p, fa, empty, o->rounds),
		       median_ratio(p, fb, empty, o->rounds));
	}
	printf("/floor(a): against the floor (a) of the same IP version; PASS/FAIL on the median "
	       "ratio, k/n = rounds within " XSTR(TARGET_TIME) "x.\n"
	       "Against the IPv4 floor (a), program alone: ub2e_to_uboe IPv6 %.2f, ub2e_to_ub IPv6 %.2f\n",
	       median_ratio(&ps[1], fa4, NULL, o->rounds), median_ratio(&ps[3], fa4, NULL, o->rounds));
	if (n > 10)
		printf("This build / the baseline, program alone, median of the per-round ratios: "
		       "to_uboe IPv4 %.2f, IPv6 %.2f; to_ub IPv4 %.2f, IPv6 %.2f\n",
		       median_ratio(&ps[0], &ps[10], NULL, o->rounds), median_ratio(&ps[1], &ps[11], NULL, o->rounds),
		       median_ratio(&ps[2], &ps[12], NULL, o->rounds), median_ratio(&ps[3], &ps[13], NULL, o->rounds));
	printf("harness (restore + tail call + return): median %.1f ns, subtracted; "
	       "BPF_PROG_RUN loop (empty program, bare): median %.1f ns\n",
	       bench_median(h->ns, o->rounds), bench_median(empty->ns, o->rounds));
	for (int k = 0; k < o->rounds; k++)
		bare_b[k] = fb->net[k] + empty->ns[k];
	printf("check: floor (b) bare (it needs no harness) measured %.1f ns, "
	       "program alone + loop says %.1f\n", bench_median(fb_bare->ns, o->rounds),
	       bench_median(bare_b, o->rounds));
	if ((!o->no_live && live_bench(&ob, ps, n, h, o)) || (!o->no_npi && npi_bench(&ob, ps, h, o)))
		goto out;
	rc = 0;
out:
	unload_all(&ob);
	return rc;
}
