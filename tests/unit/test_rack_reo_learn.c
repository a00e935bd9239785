// SPDX-License-Identifier: BSD-2-Clause
/*
 * RACK channels that must learn reordering their packets sent once cannot
 * show: jitter on a flow's one path, and a group sprayed over paths of
 * unequal RTT. In both, a window too small resends packets that were only
 * late; those resends' samples are short by construction, so the window
 * and its cap (2 rtt_hi) never grow: only the D-SACKs can tell (tp_rtx.c,
 * dsack_learn). Main escaped both only because its SRTT took the time a
 * hole below took (sampled at cumulative acks: spray_tbf_queues_drain).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tpg_sim.h"

struct jit_out {
	double gbps;
	uint64_t done;		/* bytes */
	struct tp_stats st;
};

/*
 * nflows per-flow RACK channels (no paths named) over one path of 10 us one
 * way, each packet delayed 0-jitter more, a 4 MiB queue, windows of 512, no
 * CC, 100 ms of 64 KiB Writes, 8 deep.
 */
static void jitter_run(unsigned nflows, uint64_t jitter, uint64_t seed, struct jit_out *o)
{
	struct tp_net_cfg nc;
	struct tp_chan_config base;
	struct tp_cc_config cc = { .algo = TP_CC_NONE };
	struct ccf b;
	uint64_t done = 0;

	two_paths(&nc, 10 * US, 10 * US, 0);
	nc.npaths = 1;
	nc.path[0].limit = 4 << 20;
	nc.path[0].jitter_ns = jitter;
	ccf_chan_base(&base);
	base.rto_mode = TP_RTO_DYNAMIC;
	base.rack = true;
	assert_int_equal(ccf_init(&b, nflows, 1, &nc, &cc, &base, 65536, 8, 0, seed), 0);
	ccf_run(&b, 100 * MS);
	for (unsigned i = 0; i < nflows; i++) {
		struct tp_stats c;

		tp_chan_stats(b.f[i].c[0].ch[0], &c);
		print_message("# flow %u: srtt %.1f us, min_rtt %.1f us, reordering window %.1f us, "
			      "%.3f Gb/s, RACK resends %llu, RTOs %llu, D-SACKs %llu\n", i,
			      (double)c.srtt_ns / 1e3, (double)c.min_rtt_ns / 1e3,
			      (double)c.reo_wnd_ns / 1e3, (double)b.f[i].done_bytes * 8 / 1e8,
			      (unsigned long long)c.rtx_rack, (unsigned long long)c.rto_fired,
			      (unsigned long long)c.rtx_spurious);
	}
	ccf_total_stats(&b, &o->st);
	for (unsigned i = 0; i < nflows; i++)
		done += b.f[i].done_bytes;
	o->done = done;
	o->gbps = (double)done * 8 / 0.1 / 1e9;
	print_message("# %u flows, jitter %llu us, seed %llu: %.3f Gb/s, %llu packets, resends: SACK "
		      "hole %llu, RACK %llu, probe %llu, RTO %llu; RTOs %llu, errors %llu\n", nflows,
		      (unsigned long long)(jitter / US), (unsigned long long)seed, o->gbps,
		      (unsigned long long)o->st.tx_data, (unsigned long long)o->st.rtx_sack,
		      (unsigned long long)o->st.rtx_rack,
		      (unsigned long long)o->st.rtx_tlp, (unsigned long long)o->st.rtx_rto,
		      (unsigned long long)o->st.rto_fired, (unsigned long long)b.errors);
	assert_int_equal(b.errors, 0);
	ccf_free(&b);
}

/*
 * Jitter alone (nothing lost). The least-delayed packets gave SRTT 40 us,
 * the window's cap of 2 SRTT (80 us) declared every later packet lost, and
 * only the packets that beat it were ever sampled: 1.499 Gb/s against
 * main's 4.740 (300 us, seed 1), 1.631 against 5.038 (200 us, seed 7),
 * four flows 1.987 against 4.677, with 123,000-294,000 resends. The
 * floors: 0.9 of main's goodput; resends under 1/6 of the packets
 * delivered (main: 14%, 1% and 33%, four flows failing; with dsack_learn
 * 1%, 1%, 15%). Not counted there, and not this test's: the resends of
 * the notes' SACK-hole rule (rtx_sack, on main too: a hole below the
 * highest SACKed PSN goes again, tp_ack.c), which resends every packet the
 * jitter puts behind a later one though nothing here is lost: 49,815,
 * 48,960 and 47,272 of 111,983, 112,081 and 118,450 transmissions
 * (40-45%; some 60,000 packets delivered a run, so most went twice).
 * Printed, not bounded.
 */
static void rack_jitter_learns(void **state)
{
	static const struct { unsigned nflows; uint64_t jitter, seed; double floor; } c[] = {
		{ 2, 300 * US, 1, 0.9 * 4.74 },
		{ 2, 200 * US, 7, 0.9 * 5.04 },
		{ 4, 300 * US, 1, 0.9 * 4.68 },
	};
	bool ok = true;

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct jit_out o;

		jitter_run(c[i].nflows, c[i].jitter, c[i].seed, &o);
		ok &= o.gbps >= c[i].floor &&
		      (o.st.rtx_rack + o.st.rtx_tlp + o.st.rtx_rto) * 6 < o.done / 1024;
	}
	assert_true(ok);
}

/*
 * Two channels sprayed over paths of one-way slow and 20 us, 10 Gbit/s,
 * nothing lost, light load (16 KiB Writes, one per channel at a time),
 * 100 ms. At 200 us every packet on the slow path was resent on the
 * fast one before it arrived (5,884 RACK resends, 6,537 D-SACKs, the
 * window 66.8 us), and rtt_hi never learned the slow path: a resend's
 * sample is short by construction. At 100 us the window was learned, 160
 * D-SACKs. Main: 16 and 32 D-SACKs, windows 97.6 and 222.6 us.
 */
static void spray_unequal_run(uint64_t slow, struct spray2 *x)
{
	*x = (struct spray2){ .nchan = 2, .d0 = slow, .d1 = 20 * US, .rate0 = 10 * GBPS,
			      .rate1 = 10 * GBPS, .limit = 4 << 20, .window = 256,
			      .msg = 16384, .depth = 1, .run_ns = 100 * MS };
	spray2_run(x, 3);
}

static void spray_unequal_rtt_learns(void **state)
{
	bool ok = true;

	(void)state;
	for (uint64_t slow = 100 * US; slow <= 200 * US; slow += 100 * US) {
		struct spray2 x;

		spray_unequal_run(slow, &x);
		print_message("# slow path %llu us: %llu packets on it, %llu D-SACKs\n",
			      (unsigned long long)(slow / US), (unsigned long long)x.pkts[0],
			      (unsigned long long)x.st.rtx_spurious);
		assert_int_equal(x.errors, 0);
		/* learned: the window covers the paths' difference, and
		 * spurious resends are under 1% of the slow path's packets */
		ok &= x.reo_wnd0 >= slow - 20 * US;
		ok &= x.st.rtx_spurious * 100 < x.pkts[0];
	}
	assert_true(ok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rack_jitter_learns),
		cmocka_unit_test(spray_unequal_rtt_learns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
