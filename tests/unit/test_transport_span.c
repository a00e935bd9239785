// SPDX-License-Identifier: BSD-2-Clause
/*
 * SR past a hole (tp_chan_config.span, docs/TRANSPORT.md): a window that
 * holds the queue in front of a slow receiver must not stop the channel for
 * a round trip at every loss. The model of the veth bench (scripts/
 * bench_endpoint.sh part 2): one FIFO bottleneck whose queue the window
 * fills, a round trip of 300 us beside it (a host's wake-ups), 1 % of the
 * data lost at random, no CC (ubperf's default).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cc_flows.h"

#define US 1000ull
#define MS 1000000ull
#define WIN 256u
#define WIRE (1024u + 64u + 64u)	/* payload, TP headers at most, Eth/IP/UDP/ICRC */

struct loss {
	uint64_t rng;
	uint32_t per_10000;
	uint64_t dropped;
};

static bool random_drop(void *ctx, int pair, const struct tp_tx_info *info, uint32_t path, uint64_t now)
{
	struct loss *l = ctx;

	(void)pair, (void)path, (void)now;
	if (!info->data)
		return false;
	l->rng = l->rng * 6364136223846793005ull + 1442695040888963407ull;
	if ((l->rng >> 33) % 10000 >= l->per_10000)
		return false;
	l->dropped++;
	return true;
}

struct run {
	double bytes;
	uint64_t qmax, dropped, rto;
};

static void bulk(uint32_t span, uint32_t per_10000, struct run *r)
{
	struct tp_net_cfg nc = { .npaths = 1, .return_delay_ns = 150 * US };
	struct tp_cc_config cc = { .algo = TP_CC_NONE };
	struct tp_chan_config base = {
		.mode = TP_MODE_RTP_SR, .mtu = 1024, .window = WIN, .ooo_range = 512, .span = span,
		.rack = true, .rto_mode = TP_RTO_DYNAMIC,
	};
	struct loss l = { .rng = 7, .per_10000 = per_10000 };
	struct tp_stats st;
	struct ccf b;

	nc.path[0] = (struct tp_net_path_cfg){ .rate_bps = 1000000000ull, .delay_ns = 150 * US };
	nc.drop = random_drop;
	nc.drop_ctx = &l;
	assert_int_equal(ccf_init(&b, 1, 1, &nc, &cc, &base, 65536, 8, 0, 11), 0);
	ccf_run(&b, 500 * MS);
	ccf_total_stats(&b, &st);
	r->bytes = (double)b.f[0].done_bytes;
	r->qmax = tp_net_path(b.net, 0)->qmax;
	r->dropped = l.dropped;
	r->rto = st.rto_fired;
	print_message("# span %u, loss %u/10000: %.1f MB, queue high water %llu B, %llu lost, %llu RTOs\n",
		      span, per_10000, r->bytes / 1e6, (unsigned long long)r->qmax,
		      (unsigned long long)r->dropped, (unsigned long long)r->rto);
	assert_int_equal(b.errors, 0);
	ccf_free(&b);
}

/* 1 % each way keeps >= 0.95 of the same channel's loss-free goodput (0.90
 * when a hole held the window), and the queue never holds more than the
 * window: what is sent past a hole is what the receiver already took. */
static void span_keeps_goodput_at_one_percent(void **state)
{
	struct run free_, lossy;

	(void)state;
	bulk(WIN + WIN / 4, 0, &free_);
	bulk(WIN + WIN / 4, 100, &lossy);
	assert_true(lossy.dropped > 400);
	print_message("# fraction %.3f\n", lossy.bytes / free_.bytes);
	assert_true(lossy.bytes >= 0.95 * free_.bytes);
	assert_true(lossy.qmax <= (uint64_t)WIN * WIRE);
	assert_true(free_.qmax <= (uint64_t)WIN * WIRE);
}

/* Without a span the same loss costs what the issue measured; loss-free the
 * span changes nothing (no hole, nothing past the window): the same goodput,
 * the same queue. */
static void no_span_holds_the_window(void **state)
{
	struct run free_, span_free, lossy;

	(void)state;
	bulk(0, 0, &free_);
	bulk(WIN + WIN / 4, 0, &span_free);
	bulk(0, 100, &lossy);
	print_message("# fraction %.3f\n", lossy.bytes / free_.bytes);
	assert_true(lossy.bytes < 0.95 * free_.bytes);
	assert_true(span_free.bytes >= 0.99 * free_.bytes && span_free.bytes <= 1.01 * free_.bytes);
	assert_int_equal(span_free.qmax, free_.qmax);
}

static void span_bounds(void **state)
{
	struct tp_ep *ep = tp_ep_create(&(struct tp_ep_config){ .seed = 1 });
	struct tp_chan_config c = { .mode = TP_MODE_RTP_SR, .window = 256, .ooo_range = 512 };

	(void)state;
	assert_non_null(ep);
	c.span = 200;	/* below the window */
	errno = 0;
	assert_null(tp_chan_create(ep, &c));
	assert_int_equal(errno, EINVAL);
	c.span = 600;	/* past the receive range */
	errno = 0;
	assert_null(tp_chan_create(ep, &c));
	assert_int_equal(errno, EINVAL);
	c.span = 512;
	assert_non_null(tp_chan_create(ep, &c));
	/* ubperf's: the range doubles to hold the span, never below the default */
	memset(&c, 0, sizeof(c));
	tp_chan_span(&c, 320);
	assert_int_equal(c.span, 320);
	assert_int_equal(c.ooo_range, 512);
	tp_chan_span(&c, 10);
	assert_int_equal(c.ooo_range, TP_OOO_RANGE_DEFAULT);
	c.span = 0;
	tp_chan_span(&c, TP_OOO_RANGE_MAX + 1);
	assert_int_equal(c.span, 0);
	c.window = 256;
	c.mode = TP_MODE_RTP_GBN;	/* GBN drops what follows a hole: the span is the window */
	c.span = 4096;
	assert_non_null(tp_chan_create(ep, &c));
	tp_ep_destroy(ep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(span_keeps_goodput_at_one_percent),
		cmocka_unit_test(no_span_holds_the_window),
		cmocka_unit_test(span_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
