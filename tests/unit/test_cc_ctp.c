// SPDX-License-Identifier: BSD-2-Clause
/*
 * CTP congestion control per {Dest Entity, VL} (user/transport/tp_ctp.c,
 * cc_wire.c, the DCQCN of cc_dcqcn.c): marked CTP data answered by CTP CNPs
 * (CTPH opcode 1 | CNPETPH naming the VL) at most one per interval per
 * {source entity, VL}, the frame as the packet library reads it, a CNP
 * cutting exactly the instance of {its IP source, its VL}; and CTP senders
 * through one marking bottleneck of the network simulator (tp_net.c)
 * converging to a fair share with the queue bounded, while a sender on an
 * unmarked path keeps its line rate.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "transport/cc.h"
#include "cc_flows.h"
#include "transport/tp_net.h"
#include "lib/ubhdr.h"
#include "lib/frame.h"
#include "lib/uboe_wrap.h"
#include "ub_wire.h"

#define US 1000ull
#define MS 1000000ull
#define GBPS 1000000000ull
#define MTU 4096
#define T0 (1 * MS)	/* a start past 0: pacing gives no burst credit before 0 */

static const uint8_t ENT_A[16] = { 10, 9, 0, 1 }, ENT_X[16] = { 10, 9, 0, 2 },
		     ENT_Y[16] = { 10, 9, 0, 3 }, ENT_Z[16] = { 10, 9, 0, 4 };

static struct tp_cc_stats stats_of(const struct tp_cc *cc)
{
	struct tp_cc_stats st;

	tp_cc_get_stats(cc, &st);
	return st;
}

static struct tp_chan *ctp_chan(struct tp_ep *ep, const uint8_t peer[16], uint8_t vl,
				struct tp_cc *cc)
{
	struct tp_chan_config c = { .mode = TP_MODE_CTP, .ta_mode = TP_TA_ROI, .mtu = MTU,
				    .vl = vl };

	memcpy(c.peer_entity, peer, 16);
	tp_cc_attach(cc, &c);
	return tp_chan_create(ep, &c);
}

/* A native CTP frame on VL vl around TP bytes, from src to dst (the datapath's wrap). */
static size_t frame_vl(uint8_t *frame, const uint8_t *tp, size_t len, const uint8_t src[16],
		       const uint8_t dst[16], uint8_t ecn, uint8_t vl)
{
	struct uboe_flow f = { .ip_ver = 4, .sport = 0xc001, .ecn = ecn,
			       .ub_ethertype = UB_ETH_P_NATIVE, .rt = UB_RT_FLOW_SHORTEST, .vl = vl,
			       .cci = ub_cci_make_fecn(UB_FECN_MARKABLE, 0), .pid = 1,
			       .ctp = true };
	size_t hdr = uboe_wrap_flow_hdr_len(&f);

	memcpy(f.src_ip, src, 16);
	memcpy(f.dst_ip, dst, 16);
	memcpy(frame + hdr, tp, len);
	return uboe_wrap(frame, len, &f);
}

static size_t frame_of(uint8_t *frame, const uint8_t *tp, size_t len, const uint8_t src[16],
		       const uint8_t dst[16], uint8_t ecn)
{
	return frame_vl(frame, tp, len, src, dst, ecn, 0);
}

/*
 * Each side sends on its own VL: A on VL 3, X on VL 0. X's CNP for A's marked
 * data names VL 3, the data's (read from its LPH), so that A's {X, VL 3}
 * instance finds it; naming X's own VL 0 would miss it.
 */
static void ctp_cnp_names_the_data_vl(void **state)
{
	static uint8_t src[MTU], dst[MTU], pkt[TP_HDR_MAX + MTU], frame[TP_HDR_MAX + MTU + 128];
	struct tp_cc_config dq = { .algo = TP_CC_DCQCN };
	struct tp_cc *a3 = tp_cc_create(&dq), *x0 = tp_cc_create(&dq);
	struct tp_ep *a = tp_ep_create(&(struct tp_ep_config){ .seed = 1 });
	struct tp_ep *x = tp_ep_create(&(struct tp_ep_config){ .seed = 2 });
	struct tp_chan *ca, *cx;
	struct ub_cnpetph_fields cnp;
	struct tp_tx_info info;
	struct tp_rkey token;
	size_t len, n;

	(void)state;
	ca = ctp_chan(a, ENT_X, 3, a3);
	cx = ctp_chan(x, ENT_A, 0, x0);
	assert_true(ca && cx);
	assert_int_equal(tp_chan_connect(ca, tp_chan_tpn(cx), 0), 0);
	assert_int_equal(tp_chan_connect(cx, tp_chan_tpn(ca), 0), 0);
	assert_int_equal(tp_mr_reg(x, dst, MTU, &token), 0);
	assert_int_equal(tp_post_write(ca, src, 1000, (uintptr_t)dst, token, 0), 0);
	len = tp_ep_tx(a, T0, pkt, sizeof(pkt), &info);
	assert_true(info.ctp && info.data);
	n = frame_vl(frame, pkt, len, ENT_A, ENT_X, 3 /* CE */, 3);
	assert_int_equal(tp_ep_rx_frame(x, T0, frame, n), TP_RX_OK);
	len = tp_ep_tx(x, T0, pkt, sizeof(pkt), &info);
	assert_int_equal(len, UB_CTPH_LEN + sizeof(struct ub_cnpetph));
	ub_cnpetph_decode((const struct ub_cnpetph *)(pkt + UB_CTPH_LEN), &cnp);
	assert_int_equal(cnp.vl, 3);
	n = frame_vl(frame, pkt, len, ENT_X, ENT_A, 2, 0);
	assert_int_equal(tp_ep_rx_frame(a, T0 + 10 * US, frame, n), TP_RX_OK);
	assert_int_equal(stats_of(a3).cnp_rcvd, 1);
	tp_ep_destroy(a);
	tp_ep_destroy(x);
	tp_cc_destroy(a3);
	tp_cc_destroy(x0);
}

/*
 * Sender A: channels to X on VL 0 (two, one instance), to Y on VL 0, to X on
 * VL 1. Receiver X: two channels from A on VL 0 sharing one instance.
 */
static void ctp_cnp_per_entity_and_vl(void **state)
{
	static uint8_t src[MTU], dst[2][MTU], pkt[TP_HDR_MAX + MTU], frame[TP_HDR_MAX + MTU + 128];
	struct tp_cc_config dq = { .algo = TP_CC_DCQCN };
	struct tp_cc *x0 = tp_cc_create(&dq), *y0 = tp_cc_create(&dq), *x1 = tp_cc_create(&dq),
		     *rx = tp_cc_create(&dq);
	struct tp_ep *a = tp_ep_create(&(struct tp_ep_config){ .seed = 1 });
	struct tp_ep *x = tp_ep_create(&(struct tp_ep_config){ .seed = 2 });
	struct tp_chan *a1, *a2, *a3, *a4, *b1, *b2;
	struct tp_rx_meta marked = { .ecn = 3, .ctp = true };
	struct tp_tx_info info;
	struct ub_view v;
	struct tp_stats st;
	struct tp_rkey token[2];
	size_t len, n;

	(void)state;
	memcpy(marked.src, ENT_A, 16);
	a1 = ctp_chan(a, ENT_X, 0, x0);
	a2 = ctp_chan(a, ENT_X, 0, x0);
	a3 = ctp_chan(a, ENT_Y, 0, y0);
	a4 = ctp_chan(a, ENT_X, 1, x1);
	b1 = ctp_chan(x, ENT_A, 0, rx);
	b2 = ctp_chan(x, ENT_A, 0, rx);
	assert_true(a1 && a2 && a3 && a4 && b1 && b2);
	/* One instance per {entity, VL}: another one for X on VL 0 is refused. */
	errno = 0;
	assert_null(ctp_chan(a, ENT_X, 0, y0));
	assert_int_equal(errno, EINVAL);
	assert_null(ctp_chan(a, ENT_X, 16, x0));
	assert_int_equal(tp_chan_connect(a1, tp_chan_tpn(b1), 0), 0);
	assert_int_equal(tp_chan_connect(b1, tp_chan_tpn(a1), 0), 0);
	assert_int_equal(tp_chan_connect(a2, tp_chan_tpn(b2), 0), 0);
	assert_int_equal(tp_chan_connect(b2, tp_chan_tpn(a2), 0), 0);
	assert_int_equal(tp_chan_connect(a3, 7, 0), 0);
	assert_int_equal(tp_chan_connect(a4, 8, 0), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(tp_mr_reg(x, dst[i], MTU, &token[i]), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(tp_post_write(a1, src, 1000, (uintptr_t)dst[0], token[0], 0), 0);
		assert_int_equal(tp_post_write(a2, src, 1000, (uintptr_t)dst[1], token[1], 0), 0);
	}

	/* Marked data from A on both channels: one CNP for the two (one
	 * per interval per {source entity, VL}), the first thing X sends. */
	for (int i = 0; i < 2; i++) {
		len = tp_ep_tx(a, T0, pkt, sizeof(pkt), &info);
		assert_true(info.ctp && info.data);
		assert_int_equal(tp_ep_rx(x, T0, pkt, len, &marked), TP_RX_OK);
	}
	len = tp_ep_tx(x, T0, pkt, sizeof(pkt), &info);
	assert_int_equal(len, UB_CTPH_LEN + sizeof(struct ub_cnpetph));
	assert_int_equal(pkt[0], ub_ctph_make(UB_CTP_OP_CNP, UB_NLP_NONE));
	assert_true(info.ctp);
	assert_false(info.data);
	for (int i = 0; i < 2; i++) {	/* then the two TAACKs, no second CNP */
		n = tp_ep_tx(x, T0, frame, sizeof(frame), &info);
		assert_true(n > UB_CTPH_LEN && info.data);
		assert_int_equal(frame[0], ub_ctph_make(UB_CTP_OP_TA, UB_NLP_TAH));
	}
	assert_int_equal(stats_of(rx).cnp_sent, 1);
	assert_int_equal(stats_of(rx).ce_rcvd, 2);

	/* The CNP as a native frame from X: the CTP parser reads CTPH and
	 * CNPETPH (severe, VL 0, nothing after it), and A takes it by the
	 * frame's IP source. */
	n = frame_of(frame, pkt, len, ENT_X, ENT_A, ECN_ECT0);
	assert_int_equal(ub_parse_frame_ctp(frame, n, 0, &v), UB_PARSE_OK);
	assert_true(v.ctp && v.icrc_ok);
	assert_int_equal(v.ctp_opcode, UB_CTP_OP_CNP);
	assert_non_null(v.cnpetph);
	assert_null(v.tah);
	assert_int_equal(v.cnp.ecn, UB_CNP_ECN_SEVERE);
	assert_int_equal(v.cnp.vl, 0);
	assert_int_equal(v.payload_len, 0);
	assert_int_equal(tp_ep_rx_frame(a, T0 + 10 * US, frame, n), TP_RX_OK);
	assert_int_equal(stats_of(x0).cnp_rcvd, 1);
	assert_true(stats_of(x0).rate_bps < 10 * GBPS);
	assert_int_equal(stats_of(y0).cnp_rcvd, 0);
	assert_int_equal(stats_of(x1).cnp_rcvd, 0);
	assert_int_equal(stats_of(y0).rate_bps, 10 * GBPS);
	tp_ep_stats(a, &st);
	assert_int_equal(st.rx_cnp, 1);		/* once for the two channels */

	/* The same CNP naming VL 1: X's other instance; from Y: Y's. */
	((struct ub_cnpetph *)(pkt + 1))->b1 = 1;
	assert_int_equal(tp_ep_rx_frame(a, T0 + 20 * US, frame, frame_of(frame, pkt, len, ENT_X, ENT_A, 2)),
			 TP_RX_OK);
	assert_int_equal(stats_of(x1).cnp_rcvd, 1);
	assert_int_equal(stats_of(x0).cnp_rcvd, 1);
	((struct ub_cnpetph *)(pkt + 1))->b1 = 0;
	assert_int_equal(tp_ep_rx_frame(a, T0 + 30 * US, frame, frame_of(frame, pkt, len, ENT_Y, ENT_A, 2)),
			 TP_RX_OK);
	assert_int_equal(stats_of(y0).cnp_rcvd, 1);
	assert_int_equal(stats_of(x0).cnp_rcvd, 1);
	/* From an entity with no channel, or cut short: dropped, counted. */
	assert_int_equal(tp_ep_rx_frame(a, T0 + 40 * US, frame, frame_of(frame, pkt, len, ENT_Z, ENT_A, 2)),
			 TP_RX_DROP);
	assert_int_equal(tp_ep_rx_frame(a, T0 + 40 * US, frame,
					frame_of(frame, pkt, len - 1, ENT_X, ENT_A, 2)), TP_RX_DROP);
	tp_ep_stats(a, &st);
	assert_int_equal(st.rx_unknown_tpn, 1);
	assert_int_equal(st.rx_cnp, 3);
	assert_int_equal(stats_of(x0).cnp_rcvd, 1);

	/* Past the interval (50 us) the next mark gets its CNP. */
	len = tp_ep_tx(a, T0 + 60 * US, pkt, sizeof(pkt), &info);
	assert_true(len && info.data);
	assert_int_equal(tp_ep_rx(x, T0 + 60 * US, pkt, len, &marked), TP_RX_OK);
	len = tp_ep_tx(x, T0 + 60 * US, pkt, sizeof(pkt), &info);
	assert_int_equal(pkt[0], ub_ctph_make(UB_CTP_OP_CNP, UB_NLP_NONE));
	assert_int_equal(stats_of(rx).cnp_sent, 2);

	tp_ep_destroy(a);
	tp_ep_destroy(x);
	tp_cc_destroy(x0);
	tp_cc_destroy(y0);
	tp_cc_destroy(x1);
	tp_cc_destroy(rx);
}

/* Pacing: a CTP sender sends no faster than its instance's rate. */
static void ctp_paced_by_rate(void **state)
{
	static uint8_t src[MTU], dst[MTU], pkt[TP_HDR_MAX + MTU];
	struct tp_cc_config dq = { .algo = TP_CC_DCQCN, .line_rate_bps = GBPS, .burst_bytes = 1 };
	struct tp_cc *cc = tp_cc_create(&dq);
	struct tp_ep *a = tp_ep_create(&(struct tp_ep_config){ .seed = 1 });
	struct tp_ep *x = tp_ep_create(&(struct tp_ep_config){ .seed = 2 });
	struct tp_chan *ch = ctp_chan(a, ENT_X, 0, cc);
	struct tp_tx_info info;
	struct tp_rkey token;
	uint64_t t = 0;
	unsigned sent = 0;

	(void)state;
	assert_non_null(ch);
	assert_int_equal(tp_chan_connect(ch, 5, 0), 0);
	assert_int_equal(tp_mr_reg(x, dst, MTU, &token), 0);
	for (int i = 0; i < 10; i++)
		assert_int_equal(tp_post_write(ch, src, 1000, (uintptr_t)dst, token, 0), 0);
	/* 1000 B + 64 of framing at 1 Gb/s: one packet per 8.5 us. */
	for (t = 0; t < 40 * US; t += US)
		while (tp_ep_tx(a, t, pkt, sizeof(pkt), &info))
			sent++;
	assert_in_range(sent, 4, 6);
	assert_true(tp_ep_next_deadline(a) < 50 * US);	/* the pacing wakes it */
	tp_ep_destroy(a);
	tp_ep_destroy(x);
	tp_cc_destroy(cc);
}

/* ---- the simulated bottleneck ---------------------------------------------- */

/* Pairs 0 and 1 share path 0, the marking bottleneck; pair 2 has path 1. */
static uint16_t two_paths(void *ctx, int pair, const struct tp_tx_info *info)
{
	(void)ctx;
	(void)info;
	return pair == 2;
}

struct ctp_result {
	double jain, marked_gbps[2], free_gbps;
	uint64_t qmax, drops, drops_all, marks, free_cnps;
	uint64_t free_rate;
};

static void run_ctp(enum tp_cc_algo algo, struct ctp_result *r)
{
	struct tp_net_cfg nc = { 0 };
	struct tp_chan_config base = { .mode = TP_MODE_CTP, .ta_mode = TP_TA_ROI, .mtu = MTU };
	struct tp_cc_config cc = { .algo = algo, .line_rate_bps = 25 * GBPS, .mtu = MTU };
	const uint64_t t0 = 20 * MS, t1 = 40 * MS;
	double x0[3], x1[3], secs = (double)(t1 - t0) / 1e9;
	const struct tp_net_path_stats *ps;
	struct ccf b;

	nc.npaths = 2;
	nc.path[0] = (struct tp_net_path_cfg){ .rate_bps = 10 * GBPS, .delay_ns = 4 * US,
					       .ecn_thresh = 64 * 1024, .limit = 512 * 1024 };
	nc.path[1] = (struct tp_net_path_cfg){ .rate_bps = 25 * GBPS, .delay_ns = 4 * US };
	nc.host_rate_bps = 25 * GBPS;
	nc.host_delay_ns = 1 * US;
	nc.return_delay_ns = 5 * US;
	nc.entropy = two_paths;
	/* 128 operations of one MTU outstanding: ~10x the path's BDP, so only
	 * the rate holds the queue down. */
	assert_int_equal(ccf_init(&b, 3, 1, &nc, &cc, &base, MTU, 128, 2 * MS, 7), 0);
	ccf_run(&b, t0);
	ccf_flow_bytes(&b, x0);
	r->drops_all = tp_net_path(b.net, 0)->dropped;
	tp_net_reset_window(b.net);
	ccf_run(&b, t1);
	ccf_flow_bytes(&b, x1);
	for (int i = 0; i < 2; i++)
		r->marked_gbps[i] = (x1[i] - x0[i]) * 8 / secs / 1e9;
	r->free_gbps = (x1[2] - x0[2]) * 8 / secs / 1e9;
	r->jain = tp_jain(r->marked_gbps, 2);
	ps = tp_net_path(b.net, 0);
	r->qmax = ps->qmax;
	r->drops = ps->dropped;
	r->drops_all += ps->dropped;
	r->marks = ps->marked;
	r->free_cnps = stats_of(b.f[2].c[0].cc[0]).cnp_rcvd;
	r->free_rate = stats_of(b.f[2].c[0].cc[0]).rate_bps;
	print_message("# ctp %s: marked path %.2f + %.2f Gb/s (jain %.3f) qmax %llu drops %llu "
		      "(all %llu) marks %llu; free path %.2f Gb/s, %llu CNPs, rate %.2f Gb/s; errors %llu\n",
		      tp_cc_algo_name(algo), r->marked_gbps[0], r->marked_gbps[1], r->jain,
		      (unsigned long long)r->qmax, (unsigned long long)r->drops,
		      (unsigned long long)r->drops_all, (unsigned long long)r->marks, r->free_gbps, (unsigned long long)r->free_cnps,
		      (double)r->free_rate / 1e9, (unsigned long long)b.errors);
	if (algo != TP_CC_NONE) {
		/* Marks reached both senders as CNPs and cut them. */
		for (int i = 0; i < 2; i++)
			assert_true(stats_of(b.f[i].c[0].cc[0]).cnp_rcvd > 0);
		assert_int_equal(b.errors, 0);
	}
	ccf_free(&b);
}

static void ctp_dcqcn_fair_free_path_unslowed(void **state)
{
	struct ctp_result r;

	(void)state;
	run_ctp(TP_CC_DCQCN, &r);
	assert_true(r.jain >= 0.95);
	assert_true(r.qmax < 512 * 1024);	/* bounded: below the drop limit */
	assert_int_equal(r.drops_all, 0);
	assert_true(r.marks > 0);
	assert_true(r.marked_gbps[0] + r.marked_gbps[1] >= 0.8 * 10 * 4096 / 4160);
	/* The sender on the unmarked path: no CNP, line rate, its path full. */
	assert_int_equal(r.free_cnps, 0);
	assert_int_equal(r.free_rate, 25 * GBPS);
	assert_true(r.free_gbps >= 0.85 * 25 * 4096 / 4160);
}

/* Without CC the same senders overrun the queue: the test above can fail. */
static void ctp_no_cc_overruns(void **state)
{
	struct ctp_result r;

	(void)state;
	run_ctp(TP_CC_NONE, &r);
	assert_true(r.drops_all > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ctp_cnp_per_entity_and_vl),
		cmocka_unit_test(ctp_cnp_names_the_data_vl),
		cmocka_unit_test(ctp_paced_by_rate),
		cmocka_unit_test(ctp_dcqcn_fair_free_path_unslowed),
		cmocka_unit_test(ctp_no_cc_overruns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
