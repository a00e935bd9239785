// SPDX-License-Identifier: BSD-2-Clause
/*
 * The XDP bench's live frames: the four conversions and the floors (a)
 * with BPF_F_TEST_XDP_LIVE_FRAMES, every repetition redirected for real,
 * rates as ratios to the floor's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "xdp_bench.h"
#include "testrun_reset.h"

/*
 * BPF_F_TEST_XDP_LIVE_FRAMES: every repetition really is redirected into the
 * veth peer (where bench/sink_drop.bpf.c drops it), behind the same reset
 * harness. ns per frame as the kernel reports it; 0 on error.
 */
static double live_run(const struct objs *ob, const struct bprog *p, int repeat)
{
	struct reset_frame f = { .len = p->len };
	struct xdp_md md = { .data_end = p->len, .ingress_ifindex = (uint32_t)p->ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = p->frame, .data_size_in = p->len,
		    .ctx_in = &md, .ctx_size_in = sizeof(md), .repeat = repeat,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64);
	uint64_t before = 0, after = 0;
	uint32_t zero = 0;

	memcpy(f.head, p->frame, RESET_BYTES);
	if (bpf_map_update_elem(ob->frame_map, &zero, &f, BPF_ANY) ||
	    bpf_map_update_elem(ob->target_map, &zero, &p->fd, BPF_ANY))
		return fail("%s: harness maps: %s", p->name, strerror(errno)), 0;
	if (p->counter >= 0 && counter_sum(p->stats_fd, p->counter, &before))
		return 0;
	if (bpf_prog_test_run_opts(ob->reset_fd, &opts))
		return fail("%s: live-frames BPF_PROG_RUN: %s", p->name, strerror(errno)), 0;
	if (p->counter >= 0) {
		if (counter_sum(p->stats_fd, p->counter, &after))
			return 0;
		if (after - before != (uint64_t)repeat) {
			fail("%s: live frames: %llu of %d converted", p->name,
			     (unsigned long long)(after - before), repeat);
			dump_counters(p->stats_fd);
			return 0;
		}
	}
	return opts.duration;
}

/* Floors (a) and the four conversions, live, interleaved; rates as ratios to the floor. */
int live_bench(const struct objs *ob, struct bprog *ps, int n, const struct bprog *h,
	       const struct xdp_bench_opts *o)
{
	const int idx[] = { 4, 5, 0, 1, 2, 3, 10, 11, 12, 13 }, m = n > 10 ? 10 : 6;
	double ns[10][100];
	int repeat = o->repeat / 4 > 1 ? o->repeat / 4 : 1;

	for (int round = 0; round < o->rounds; round++)
		for (int k = 0; k < m; k++) {
			int i = (k + round) % m;

			ns[i][round] = live_run(ob, &ps[idx[i]], repeat);
			if (ns[i][round] <= 0)
				return 1;
		}
	printf("\nLive frames (BPF_F_TEST_XDP_LIVE_FRAMES, redirected into a veth whose peer drops in XDP),\n"
	       "repeat %d, %d rounds, same reset harness (%.1f ns, from the test_run rounds, subtracted):\n",
	       repeat, o->rounds, bench_median(h->ns, o->rounds));
	printf("%-24s %9s %12s %14s\n", "program", "ns/frame", "rate/floor", ">=" XSTR(TARGET_RATE) "x(a)");
	for (int i = 0; i < m; i++) {
		const struct bprog *p = &ps[idx[i]];
		int fi = p->ipv == 6 ? 1 : 0, ok = 0;
		double r[100], hn = bench_median(h->ns, o->rounds);
		char verdict[32] = "-";

		for (int k = 0; k < o->rounds; k++)
			r[k] = (ns[fi][k] - hn) / (ns[i][k] - hn);
		if (p->role == CONVERT) {
			for (int k = 0; k < o->rounds; k++)
				ok += r[k] >= TARGET_RATE;
			snprintf(verdict, sizeof(verdict), "%s %d/%d",
				 bench_median(r, o->rounds) >= TARGET_RATE ? "PASS" : "FAIL", ok, o->rounds);
		}
		printf("%-24s %9.1f %12.2f %14s\n", p->name, bench_median(ns[i], o->rounds) - hn,
		       bench_median(r, o->rounds), verdict);
	}
	return 0;
}
