// SPDX-License-Identifier: BSD-2-Clause
/*
 * Congestion control and multipath in simulated time (user/transport/tp_net.c),
 * the same on every machine: two flows through one 10 Gbit/s bottleneck
 * that marks ECN above 32 KiB and drops at 512 KiB, per algorithm: Jain's
 * fairness, queue high water and utilisation (wire bytes out of the
 * bottleneck / its rate) over the second half of the run; then one channel
 * group of two over two equal paths against one channel on one path, per
 * flow and per packet.
 */
#include <stdio.h>

#include "bench.h"
#include "../tests/unit/cc_flows.h"

#define CB_RATE		10000000000ull
#define CB_T0		20000000ull	/* 20 ms: the second flow started at 2 ms */
#define CB_T1		60000000ull

static void net_one(struct tp_net_cfg *n, uint32_t npaths)
{
	memset(n, 0, sizeof(*n));
	n->npaths = npaths;
	for (uint32_t p = 0; p < npaths; p++)
		n->path[p] = (struct tp_net_path_cfg){ .rate_bps = CB_RATE, .delay_ns = 4000,
						       .ecn_thresh = 32 * 1024,
						       .limit = 512 * 1024 };
	n->host_rate_bps = 25000000000ull;
	n->host_delay_ns = 1000;
	n->return_delay_ns = 5000;
}

static int fairness(void)
{
	static const enum tp_cc_algo algos[] = { TP_CC_NONE, TP_CC_LDCP, TP_CC_DCQCN, TP_CC_CAQM };

	printf("Two flows, one bottleneck (simulated: 10 Gbit/s, RTT ~10 us, ECN above 32 KiB, "
	       "drop at 512 KiB; window %.0f-%.0f ms)\n", CB_T0 / 1e6, CB_T1 / 1e6);
	printf("%-6s %8s %10s %12s %8s %8s %10s %10s\n", "cc", "Jain", "util", "queue high",
	       "drops", "CNPs", "flow 1", "flow 2");
	for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
		struct tp_net_cfg nc;
		struct tp_chan_config base;
		struct tp_cc_config cc = { .algo = algos[a], .line_rate_bps = 25000000000ull };
		const struct tp_net_path_stats *ps;
		double x0[2], x1[2], d[2], util;
		uint64_t cnps = 0;
		struct ccf b;

		net_one(&nc, 1);
		nc.path[0].caqm = algos[a] == TP_CC_CAQM;
		ccf_chan_base(&base);
		if (ccf_init(&b, 2, 1, &nc, &cc, &base, 65536, 4, 2000000, 7)) {
			fprintf(stderr, "cc_bench: setup failed\n");
			ccf_free(&b);
			return 1;
		}
		ccf_run(&b, CB_T0);
		ccf_flow_bytes(&b, x0);
		tp_net_reset_window(b.net);
		ccf_run(&b, CB_T1);
		ccf_flow_bytes(&b, x1);
		for (int i = 0; i < 2; i++) {
			struct tp_cc_stats st;

			d[i] = (x1[i] - x0[i]) * 8 / ((CB_T1 - CB_T0) / 1e9);
			if (b.f[i].c[0].cc[1]) {
				tp_cc_get_stats(b.f[i].c[0].cc[1], &st);
				cnps += st.cnp_sent;
			}
		}
		ps = tp_net_path(b.net, 0);
		util = (double)ps->bytes * 8 / ((CB_T1 - CB_T0) / 1e9) / CB_RATE;
		printf("%-6s %8.3f %10.3f %9.1f KiB %8llu %8llu %7.2f Gb %7.2f Gb%s\n",
		       tp_cc_algo_name(algos[a]), tp_jain(d, 2), util, ps->qmax / 1024.0,
		       (unsigned long long)ps->dropped, (unsigned long long)cnps, d[0] / 1e9,
		       d[1] / 1e9, b.errors ? "  (errors!)" : "");
		ccf_free(&b);
	}
	printf("targets: Jain >= 0.95, utilisation >= 0.9 (wire bytes incl. 64 B framing/packet)\n");
	return 0;
}

static double group_goodput(unsigned nchan, uint32_t npaths, enum tpg_lb lb)
{
	struct tp_net_cfg nc;
	struct tp_chan_config base;
	struct tp_cc_config cc = { .algo = TP_CC_LDCP, .line_rate_bps = 25000000000ull };
	struct tpg_config gc = { .lb = lb };
	struct ccf b;
	double x0, x1;

	net_one(&nc, npaths);
	ccf_chan_base(&base);
	if (ccf_init_tpg(&b, 1, nchan, &nc, &cc, &base, 65536, 4, 0, 9, &gc)) {
		ccf_free(&b);
		return 0;
	}
	ccf_run(&b, 2000000);
	x0 = (double)b.f[0].done_bytes;
	ccf_run(&b, 22000000);
	x1 = (double)b.f[0].done_bytes;
	ccf_free(&b);
	return (x1 - x0) * 8 / 20e-3;
}

static int multipath(void)
{
	double one = group_goodput(1, 1, TPG_LB_FLOW);
	double flow = group_goodput(2, 2, TPG_LB_FLOW);
	double pkt = group_goodput(1, 2, TPG_LB_PACKET);

	printf("\nChannel group over two equal paths vs one channel on one path (LDCP, 20 ms)\n");
	printf("%-34s %10s %8s\n", "", "goodput", "ratio");
	printf("%-34s %7.2f Gb %8.3f\n", "one channel, one path", one / 1e9, 1.0);
	printf("%-34s %7.2f Gb %8.3f  %s\n", "group of 2, per-flow LB", flow / 1e9,
	       one ? flow / one : 0, one && flow / one >= 1.8 ? "(target >= 1.8 met)" :
	       "(target >= 1.8 MISSED)");
	printf("%-34s %7.2f Gb %8.3f\n", "one channel, per-packet LB", pkt / 1e9,
	       one ? pkt / one : 0);
	return one > 0 ? 0 : 1;
}

int cc_bench(void)
{
	int rc = fairness();

	return rc | multipath();
}
