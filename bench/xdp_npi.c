// SPDX-License-Identifier: BSD-2-Clause
/*
 * The XDP bench's NPI table: ub2e_to_uboe IPv4 with tables of 1, 100 and the
 * most entries ubctl accepts, one Partition ID or every one in turn.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "xdp_bench.h"
#include "testrun_reset.h"
#include "ub2e_maps.h"	/* first: the skeleton's .data.cfg is a struct ub2e_cfg */
#include "ub2e.skel.h"
#include "io/ub2e_tables.h"

/* npi2vlan with PIDs 1..n (VLAN 1 + pid % 4094), as bpftool or ubctl would leave it. */
static int npi_fill(int fd, uint32_t n)
{
	for (uint32_t hi = 0; hi < UB2E_NPI_BLOCKS; hi++)
		bpf_map_delete_elem(fd, &hi);
	for (uint32_t pid = 1; pid <= n; pid++) {
		struct ub2e_npi_vlans v = { .any = (uint16_t)(1 + pid % 4094) };

		int rc = ub2e_npi_put(fd, pid, &v);

		if (rc)
			return fail("npi2vlan entry %u: %s", pid, strerror(-rc));
	}
	return 0;
}

int npi_bench(const struct objs *ob, struct bprog *ps, const struct bprog *h, const struct xdp_bench_opts *o)
{
	const uint32_t sizes[] = { 1, 100, UB2E_MAX_NPI_ENTRIES };
	int spread_fd = prog_fd(ob->reset, "testrun_reset_spread");
	int spread_map = map_fd(ob->reset, "reset_spread");
	int npi = bpf_map__fd(ob->ub2e->maps.ub2e_npi2vlan);
	struct bprog one = ps[0], *fa = &ps[4];
	int repeat = o->repeat / 2 > 1 ? o->repeat / 2 : 1;
	uint32_t zero = 0;
	struct run r;

	if (spread_fd < 0 || spread_map < 0)
		return fail("testrun_reset.bpf.o lacks testrun_reset_spread");
	/* One PID (1, in every table), then the table's PIDs in turn. */
	one.frame[21] = 0, one.frame[22] = 0, one.frame[23] = 1;
	printf("\nNPI table size, ub2e_to_uboe IPv4 (test_run, harness subtracted, median of %d rounds):\n",
	       o->rounds);
	printf("%-34s %9s %10s\n", "NPI table", "ns/packet", "/floor(a)");
	for (size_t t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
		for (int spread = 0; spread < 2; spread++) {
			struct reset_spread sp = { .off = 21, .n = sizes[t] };
			double ns[100], ratio[100];
			uint64_t before, after;

			if (spread && sizes[t] == 1)
				continue;
			if (npi_fill(npi, sizes[t]))
				return 1;
			for (int k = 0; k < o->rounds; k++) {
				struct reset_frame f = { .len = one.len };

				memcpy(f.head, one.frame, RESET_BYTES);
				if (timed_run(ob, fa, repeat, &r))
					return 1;
				double fa_ns = r.duration;

				if (bpf_map_update_elem(ob->frame_map, &zero, &f, BPF_ANY) ||
				    bpf_map_update_elem(ob->target_map, &zero, &one.fd, BPF_ANY) ||
				    bpf_map_update_elem(spread_map, &zero, &sp, BPF_ANY) ||
				    counter_sum(ob->stats_map, UB2E_CNT_TX_UBOE, &before) ||
				    test_run(spread ? spread_fd : ob->reset_fd, &one, repeat, &r) ||
				    counter_sum(ob->stats_map, UB2E_CNT_TX_UBOE, &after))
					return fail("NPI bench run: %s", strerror(errno));
				if (r.retval != XDP_REDIRECT || after - before != (uint64_t)repeat) {
					dump_counters(ob->stats_map);
					return fail("NPI bench: %llu of %d converted (verdict %s)",
						    (unsigned long long)(after - before), repeat,
						    xdp_name(r.retval));
				}
				ns[k] = r.duration - bench_median(h->ns, o->rounds);
				ratio[k] = ns[k] / (fa_ns - bench_median(h->ns, o->rounds));
			}
			char what[64];

			snprintf(what, sizeof(what), "%u entr%s, %s", sizes[t], sizes[t] == 1 ? "y" : "ies",
				 spread ? "every PID in turn" : "one PID");
			printf("%-34s %9.1f %10.2f\n", what, bench_median(ns, o->rounds),
			       bench_median(ratio, o->rounds));
		}
	}
	return npi_fill(npi, 0);
}
