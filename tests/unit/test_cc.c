// SPDX-License-Identifier: BSD-2-Clause
/*
 * Congestion control of TP channels (user/transport/cc*.c): each algorithm's
 * rules driven through its hooks with hand-computed expectations, the
 * feedback on the wire decoded by the packet library, and N flows through
 * one marking bottleneck of the deterministic network simulator
 * (tp_net.c) converging to a fair share with the queue bounded.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cc.h"
#include "cc_flows.h"
#include "tp_net.h"
#include "ubhdr.h"

#define US 1000ull
#define MS 1000000ull
#define GBPS 1000000000ull

/* ---- the simulated bottleneck --------------------------------------------- */

static void net_cfg(struct tp_net_cfg *n)
{
	memset(n, 0, sizeof(*n));
	n->npaths = 1;
	n->path[0] = (struct tp_net_path_cfg){ .rate_bps = 10 * GBPS, .delay_ns = 4 * US,
					       .ecn_thresh = 32 * 1024, .limit = 512 * 1024 };
	n->host_rate_bps = 25 * GBPS;
	n->host_delay_ns = 1 * US;
	n->return_delay_ns = 5 * US;
}

static void chan_base(struct tp_chan_config *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = TP_MODE_RTP_SR;
	c->mtu = 1024;
	c->window = 512;
	c->ooo_range = 512;
	c->rto_static_ns = TP_RTO_512US;
	c->retry_limit = 12;
}

struct fair_result {
	double jain, util;
	uint64_t qmax, drops, marked, cnps;
};

static void run_fair(enum tp_cc_algo algo, unsigned nflows, struct fair_result *r)
{
	struct tp_net_cfg nc;
	struct tp_chan_config base;
	struct tp_cc_config cc = { .algo = algo, .line_rate_bps = 25 * GBPS };
	struct ccf b;
	double x0[CCF_MAX_FLOWS], x1[CCF_MAX_FLOWS], d[CCF_MAX_FLOWS], sum = 0;
	const uint64_t t0 = 20 * MS, t1 = 40 * MS;
	const struct tp_net_path_stats *ps;

	net_cfg(&nc);
	nc.path[0].caqm = algo == TP_CC_CAQM;
	chan_base(&base);
	assert_int_equal(ccf_init(&b, nflows, 1, &nc, &cc, &base, 65536, 4, 2 * MS, 42), 0);
	ccf_run(&b, t0);
	ccf_flow_bytes(&b, x0);
	tp_net_reset_window(b.net);
	ccf_run(&b, t1);
	ccf_flow_bytes(&b, x1);
	for (unsigned i = 0; i < nflows; i++) {
		d[i] = x1[i] - x0[i];
		sum += d[i];
	}
	ps = tp_net_path(b.net, 0);
	r->jain = tp_jain(d, nflows);
	r->util = (double)ps->bytes * 8 / ((double)(t1 - t0) / 1e9) / (double)nc.path[0].rate_bps;
	r->qmax = ps->qmax;
	r->drops = ps->dropped;
	r->marked = ps->marked;
	r->cnps = 0;
	for (unsigned i = 0; i < nflows; i++) {
		struct tp_cc_stats st;

		tp_cc_get_stats(b.f[i].c[0].cc[1], &st);
		r->cnps += st.cnp_sent;
	}
	print_message("# %s x%u: jain %.3f util %.3f qmax %llu drops %llu marked %llu cnps %llu "
		      "goodput %.2f Gb/s errors %llu\n", tp_cc_algo_name(algo), nflows, r->jain,
		      r->util, (unsigned long long)r->qmax, (unsigned long long)r->drops,
		      (unsigned long long)r->marked, (unsigned long long)r->cnps,
		      sum * 8 / ((double)(t1 - t0) / 1e9) / 1e9, (unsigned long long)b.errors);
	assert_int_equal(b.errors, 0);
	ccf_free(&b);
}

static void check_fair(enum tp_cc_algo algo)
{
	struct fair_result r;

	run_fair(algo, 4, &r);
	assert_true(r.jain >= 0.95);
	assert_true(r.qmax < 512 * 1024);	/* bounded: below the drop limit */
	assert_int_equal(r.drops, 0);
	assert_true(r.util >= 0.8);
}

static void fair_ldcp(void **state) { (void)state; check_fair(TP_CC_LDCP); }
static void fair_dcqcn(void **state) { (void)state; check_fair(TP_CC_DCQCN); }
static void fair_caqm(void **state) { (void)state; check_fair(TP_CC_CAQM); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fair_ldcp),
		cmocka_unit_test(fair_dcqcn),
		cmocka_unit_test(fair_caqm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
