// SPDX-License-Identifier: BSD-2-Clause
/*
 * WPS egress reorder engine (user/wps/reorder.c) against the draft's Egress
 * Node Procedures. Each packet's handle encodes (flow, group, index in group)
 * so the tests read what left, in which order and why, without asking the
 * engine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "wps/reorder.h"
#include "wps/reorder_int.h"	/* hash_key(): flows made to share a bucket and signature */
#include "wps_opt.h"

#define MS 1000000ull
#define US 1000ull

/* Everything that left, in order. */
struct sink {
	uint64_t h[1 << 20];
	uint8_t a[1 << 20];
	size_t n;
};

static struct sink *sink;

static uint64_t H(uint32_t flow, uint16_t gid, uint16_t idx)
{
	return ((uint64_t)flow << 32) | ((uint64_t)gid << 16) | idx;
}

static void take(struct wps_reorder *e, uint32_t n)
{
	const struct wps_out *o = wps_reorder_out(e);

	for (uint32_t i = 0; i < n; i++) {
		assert_true(sink->n < (1u << 20));
		sink->h[sink->n] = o[i].handle;
		sink->a[sink->n++] = o[i].action;
	}
}

/* One packet from peer `peer` of (node, flow), group gid, index idx of a group of len packets;
 * the handle's flow part is (peer << 24 | node << 16 | flow). */
static void prx(struct wps_reorder *e, uint16_t peer, uint16_t node, uint16_t flow, uint16_t gid, uint16_t idx,
		uint16_t len, uint64_t now)
{
	struct wps_pkt p = {
		.peer = peer, .ingress_node = node, .flow_id = flow, .group_id = gid,
		.flags = (uint8_t)((idx == 0 ? WPS_FLAG_S : 0) | (idx == len - 1 ? WPS_FLAG_E : 0)),
	};

	take(e, wps_reorder_rx(e, &p, H((uint32_t)peer << 24 | (uint32_t)node << 16 | flow, gid, idx), now));
}

/* The same from peer 0. */
static void rx(struct wps_reorder *e, uint16_t node, uint16_t flow, uint16_t gid, uint16_t idx,
	       uint16_t len, uint64_t now)
{
	prx(e, 0, node, flow, gid, idx, len, now);
}

static void group(struct wps_reorder *e, uint16_t flow, uint16_t gid, uint16_t len, uint64_t now)
{
	for (uint16_t i = 0; i < len; i++)
		rx(e, 1, flow, gid, i, len, now);
}

static void tick(struct wps_reorder *e, uint64_t now)
{
	take(e, wps_reorder_tick(e, now));
}

static struct wps_reorder *engine(void (*tune)(struct wps_reorder_cfg *))
{
	struct wps_reorder_cfg c;
	struct wps_reorder *e;

	wps_reorder_cfg_defaults(&c);
	c.release_timeout_ns = 5 * MS;
	c.start_hold = false;	/* the tests below see a flow's first group first */
	if (tune)
		tune(&c);
	e = wps_reorder_new(&c);
	assert_non_null(e);
	sink->n = 0;
	return e;
}

/* The groups of what left, one entry per packet, for flow 1 of node 1. */
static void expect(const uint16_t *gids, const uint16_t *idx, const uint8_t *act, size_t n)
{
	if (sink->n != n)
		fail_msg("%zu packets left, want %zu", sink->n, n);
	for (size_t i = 0; i < n; i++) {
		uint16_t g = (uint16_t)(sink->h[i] >> 16), x = (uint16_t)sink->h[i];

		if (g != gids[i] || x != idx[i] || (act && sink->a[i] != act[i]))
			fail_msg("output %zu: group %u packet %u (%s), want group %u packet %u (%s)", i, g, x,
				 wps_action_name(sink->a[i]), gids[i], idx[i],
				 act ? wps_action_name(act[i]) : "any");
	}
}

static struct wps_total_stats totals(struct wps_reorder *e)
{
	struct wps_total_stats t;

	wps_reorder_totals(e, &t);
	return t;
}

enum { C = WPS_ACT_CUT, I = WPS_ACT_INORDER, T = WPS_ACT_TIMER, B = WPS_ACT_BOUND, L = WPS_ACT_LATE };

static void in_order_cuts_through(void **state)
{
	struct wps_reorder *e = engine(NULL);
	uint16_t g[9], x[9];
	uint8_t a[9];

	(void)state;
	for (int k = 0; k < 3; k++)
		group(e, 1, (uint16_t)(100 + k), 3, 0);
	for (int i = 0; i < 9; i++) {
		g[i] = (uint16_t)(100 + i / 3);
		x[i] = (uint16_t)(i % 3);
		a[i] = C;
	}
	expect(g, x, a, 9);
	assert_int_equal(totals(e).hwm, 0);
	assert_int_equal(totals(e).f.groups, 3);
	assert_int_equal(totals(e).f.ooo_groups, 0);
	assert_int_equal(wps_reorder_next_deadline(e), 30000 * MS);	/* only the idle reclaim */
	wps_reorder_free(e);
}

static void out_of_order_restored(void **state)
{
	struct wps_reorder *e = engine(NULL);
	static const uint16_t g[] = { 10, 10, 11, 11, 12, 12, 13, 13 };
	static const uint16_t x[] = { 0, 1, 0, 1, 0, 1, 0, 1 };
	static const uint8_t a[] = { C, C, C, C, I, I, I, I };

	(void)state;
	group(e, 1, 10, 2, 0);		/* NEG = 10 */
	rx(e, 1, 1, 12, 0, 2, 1 * US);	/* ahead: buffered */
	rx(e, 1, 1, 13, 0, 2, 2 * US);
	rx(e, 1, 1, 12, 1, 2, 3 * US);
	rx(e, 1, 1, 13, 1, 2, 4 * US);
	assert_int_equal(sink->n, 2);
	assert_int_equal(totals(e).buffered, 4);
	assert_int_equal(wps_reorder_next_deadline(e), 1 * US + 5 * MS);
	rx(e, 1, 1, 11, 0, 2, 5 * US);	/* NEG: cut through */
	assert_int_equal(sink->n, 3);
	rx(e, 1, 1, 11, 1, 2, 6 * US);	/* E of NEG: 12 and 13 follow */
	expect(g, x, a, 8);
	assert_int_equal(totals(e).buffered, 0);
	assert_int_equal(totals(e).hwm, 4);
	assert_int_equal(totals(e).f.ooo_groups, 2);
	assert_int_equal(totals(e).f.timer_expiries, 0);
	assert_true(wps_reorder_next_deadline(e) >= 30000 * MS);	/* timer stopped: only idle */
	wps_reorder_free(e);
}

static void group_id_wraps(void **state)
{
	struct wps_reorder *e = engine(NULL);
	static const uint16_t g[] = { 65534, 65535, 0, 1, 2 };
	static const uint16_t x[] = { 0, 0, 0, 0, 0 };

	(void)state;
	group(e, 1, 65534, 1, 0);
	group(e, 1, 1, 1, 1);		/* 1 is after 65535 in serial arithmetic: buffered */
	group(e, 1, 0, 1, 2);
	group(e, 1, 2, 1, 3);
	assert_int_equal(sink->n, 1);
	group(e, 1, 65535, 1, 4);
	expect(g, x, NULL, 5);
	assert_int_equal(totals(e).f.late_pkts, 0);
	wps_reorder_free(e);
}

static void partial_group_then_rest_cuts_through(void **state)
{
	struct wps_reorder *e = engine(NULL);
	static const uint16_t g[] = { 0, 1, 2, 2, 2 };
	static const uint16_t x[] = { 0, 0, 0, 1, 2 };
	static const uint8_t a[] = { C, C, I, C, C };

	(void)state;
	group(e, 1, 0, 1, 0);
	rx(e, 1, 1, 2, 0, 3, 1);	/* first packet of group 2 buffered */
	group(e, 1, 1, 1, 2);		/* releases it; NEG stays on 2 (no E yet) */
	rx(e, 1, 1, 2, 1, 3, 3);
	rx(e, 1, 1, 2, 2, 3, 4);
	expect(g, x, a, 5);
	assert_true(wps_reorder_next_deadline(e) >= 30000 * MS);	/* no timer */
	wps_reorder_free(e);
}

static void lost_e_released_by_timer(void **state)
{
	struct wps_reorder *e = engine(NULL);
	static const uint16_t g[] = { 0, 1, 1, 2, 3 };
	static const uint16_t x[] = { 0, 0, 1, 0, 0 };
	static const uint8_t a[] = { C, T, T, I, C };

	(void)state;
	rx(e, 1, 1, 0, 0, 2, 0);	/* group 0 whose E never comes */
	group(e, 1, 1, 2, 1 * MS);
	group(e, 1, 2, 1, 2 * MS);
	tick(e, 5 * MS);		/* 4 ms after the gap opened: not yet */
	assert_int_equal(sink->n, 1);
	assert_int_equal(wps_reorder_next_deadline(e), 6 * MS);
	tick(e, 6 * MS);
	assert_int_equal(sink->n, 4);
	group(e, 1, 3, 1, 7 * MS);
	expect(g, x, a, 5);
	assert_int_equal(totals(e).f.timer_expiries, 1);
	assert_int_equal(totals(e).buffered, 0);
	wps_reorder_free(e);
}

static void lost_group_then_late_arrival(void **state)
{
	struct wps_reorder *e = engine(NULL);
	static const uint16_t g[] = { 0, 2, 3, 1, 4 };
	static const uint16_t x[] = { 0, 0, 0, 0, 0 };
	static const uint8_t a[] = { C, T, I, L, C };

	(void)state;
	group(e, 1, 0, 1, 0);
	group(e, 1, 2, 1, 1 * MS);	/* 1 is missing */
	group(e, 1, 3, 1, 2 * MS);
	tick(e, 6 * MS);
	group(e, 1, 1, 1, 7 * MS);	/* behind NEG: sent, never dropped */
	group(e, 1, 4, 1, 8 * MS);
	expect(g, x, a, 5);
	assert_int_equal(totals(e).f.late_pkts, 1);
	assert_int_equal(totals(e).f.late_groups, 1);
	wps_reorder_free(e);
}

/*
 * Several gaps: one expiry gives up on all of them whose next group has
 * waited its timeout, in Group ID order; a group buffered later waits its own
 * timeout from then, not a full one more (one bounded wait in total). It once
 * skipped one gap per expiry, each further gap waiting a full timeout more.
 */
static void expiry_releases_through_every_gap(void **state)
{
	struct wps_reorder *e = engine(NULL);
	static const uint16_t g[] = { 0, 2, 4, 4, 5, 7, 8 };
	static const uint16_t x[] = { 0, 0, 0, 1, 0, 0, 0 };
	static const uint8_t a[] = { C, T, T, T, I, T, C };

	(void)state;
	group(e, 1, 0, 1, 0);
	group(e, 1, 2, 1, 0);
	group(e, 1, 4, 2, 0);
	group(e, 1, 5, 1, 0);
	group(e, 1, 7, 1, 3 * MS);	/* buffered later */
	tick(e, 5 * MS - 1);
	assert_int_equal(sink->n, 1);
	tick(e, 5 * MS);		/* 1 and 3 given up on at once */
	assert_int_equal(sink->n, 5);
	assert_int_equal(wps_reorder_next_deadline(e), 8 * MS);	/* 7's own timeout */
	tick(e, 8 * MS);
	assert_int_equal(sink->n, 6);
	assert_int_equal(totals(e).buffered, 0);
	group(e, 1, 8, 1, 9 * MS);
	expect(g, x, a, 7);
	assert_int_equal(totals(e).f.timer_expiries, 2);
	group(e, 1, 3, 1, 10 * MS);	/* a group of a later gap, late: sent */
	assert_int_equal(sink->a[7], L);
	wps_reorder_free(e);
}

/* ... but not past a group whose E has not come: NEG stays on it, the rest waits for it. */
static void expiry_stops_at_a_group_still_open(void **state)
{
	struct wps_reorder *e = engine(NULL);
	static const uint16_t g[] = { 0, 2, 3, 3, 3, 4, 6 };
	static const uint16_t x[] = { 0, 0, 0, 1, 2, 0, 0 };
	static const uint8_t a[] = { C, T, I, C, C, I, T };

	(void)state;
	group(e, 1, 0, 1, 0);
	group(e, 1, 2, 1, 0);
	rx(e, 1, 1, 3, 0, 3, 0);	/* group 3: its first packet only */
	group(e, 1, 4, 1, 0);
	group(e, 1, 6, 1, 0);
	tick(e, 5 * MS);		/* 2, then 3's packet; NEG stays on 3 */
	assert_int_equal(sink->n, 3);
	rx(e, 1, 1, 3, 1, 3, 6 * MS);
	rx(e, 1, 1, 3, 2, 3, 7 * MS);	/* 3 complete: 4 in order; 6 waited 7 ms: the gap at 5 goes */
	expect(g, x, a, 7);
	wps_reorder_free(e);
}

/*
 * "Buffer, start/restart timer": while the awaited group arrives (its packets
 * cut through, here one every 2 ms, longer in all than the timeout), the
 * group after it waits, however long: every packet of NEG's group restarts
 * the timer. The timer set when the next group was buffered once expired
 * mid-group and released that group past the one arriving, whose remaining
 * packets then counted as late.
 */
static void awaited_group_arriving_holds_the_next(void **state)
{
	struct wps_reorder *e = engine(NULL);

	(void)state;
	group(e, 1, 0, 1, 0);
	rx(e, 1, 1, 1, 0, 10, 0);		/* group 1 starts: NEG, cut through */
	group(e, 1, 2, 2, 1 * MS);		/* group 2 over a faster path: waits */
	for (uint16_t i = 1; i < 10; i++) {
		for (uint64_t t = 2 * (i - 1) * MS + MS; t <= 2 * i * MS; t += MS / 2)
			tick(e, t);
		rx(e, 1, 1, 1, i, 10, 2 * i * MS);	/* 2 ms apart: 18 ms in all */
	}
	assert_int_equal(sink->n, 13);
	for (size_t k = 0; k < 11; k++) {
		assert_int_equal((uint16_t)(sink->h[k] >> 16), k ? 1 : 0);
		assert_int_equal(sink->a[k], C);
	}
	assert_int_equal((uint16_t)(sink->h[11] >> 16), 2);	/* after group 1's E, in order */
	assert_int_equal(sink->a[11], I);
	assert_int_equal(totals(e).f.late_pkts, 0);
	assert_int_equal(totals(e).f.timer_expiries, 0);
	wps_reorder_free(e);
}

/*
 * A gap right behind a group that was arriving: the group after the gap has
 * already waited a full timeout when the arriving one ends, so the gap is
 * given up on then, not after one more timeout.
 */
static void gap_behind_an_arriving_group_waits_once(void **state)
{
	struct wps_reorder *e = engine(NULL);
	static const uint16_t g[] = { 0, 1, 1, 1, 1, 1, 1, 3 };
	static const uint16_t x[] = { 0, 0, 1, 2, 3, 4, 5, 0 };
	static const uint8_t a[] = { C, C, C, C, C, C, C, T };

	(void)state;
	group(e, 1, 0, 1, 0);
	rx(e, 1, 1, 1, 0, 6, 0);
	group(e, 1, 3, 1, 0);			/* 2 lost */
	for (uint16_t i = 1; i < 6; i++) {
		tick(e, 2 * i * MS - 1);
		rx(e, 1, 1, 1, i, 6, 2 * i * MS);	/* 10 ms: 3 has waited twice the timeout */
	}
	expect(g, x, a, 8);
	assert_int_equal(totals(e).f.timer_expiries, 1);
	assert_int_equal(totals(e).buffered, 0);
	wps_reorder_free(e);
}

static void duplicates_each_leave_once(void **state)
{
	struct wps_reorder *e = engine(NULL);
	static const uint16_t g[] = { 0, 0, 0, 1, 2, 2, 2, 0 };
	static const uint16_t x[] = { 0, 0, 1, 0, 0, 0, 0, 1 };

	(void)state;
	rx(e, 1, 1, 0, 0, 2, 0);
	rx(e, 1, 1, 0, 0, 2, 1);	/* duplicate within NEG: cut through too */
	rx(e, 1, 1, 2, 0, 1, 2);	/* buffered, and its duplicate */
	rx(e, 1, 1, 2, 0, 1, 3);
	rx(e, 1, 1, 0, 1, 2, 4);
	group(e, 1, 1, 1, 5);
	rx(e, 1, 1, 2, 0, 1, 6);	/* a third copy, now late */
	rx(e, 1, 1, 0, 1, 2, 7);	/* duplicate E of an old group: late */
	expect(g, x, NULL, 8);
	assert_int_equal(sink->a[6], L);
	assert_int_equal(sink->a[7], L);
	assert_int_equal(totals(e).f.late_pkts, 2);
	assert_int_equal(totals(e).f.late_groups, 2);
	wps_reorder_free(e);
}

static void small_flow_buffer(struct wps_reorder_cfg *c)
{
	c->flow_buffer = 4;
}

static void flow_bound_releases_in_order(void **state)
{
	struct wps_reorder *e = engine(small_flow_buffer);
	static const uint16_t g[] = { 0, 2, 2, 3, 3, 4, 4 };
	static const uint16_t x[] = { 0, 0, 1, 0, 1, 0, 1 };
	static const uint8_t a[] = { C, B, B, I, I, C, C };

	(void)state;
	group(e, 1, 0, 1, 0);
	/* Group 1 lost; 2 and 3 fill the flow's buffer (4), 4 passes it. */
	group(e, 1, 2, 2, 1);
	group(e, 1, 3, 2, 2);
	assert_int_equal(sink->n, 1);
	assert_int_equal(totals(e).buffered, 4);
	rx(e, 1, 1, 4, 0, 2, 3);	/* would be 5 > 4: 2 and 3 go first, in order, then 4 */
	assert_int_equal(totals(e).buffered, 0);
	rx(e, 1, 1, 4, 1, 2, 4);	/* NEG is 4 now: cut through */
	expect(g, x, a, 7);
	assert_int_equal(totals(e).f.bound_releases, 1);
	assert_int_equal(totals(e).hwm, 4);
	wps_reorder_free(e);
}

static void small_total_buffer(struct wps_reorder_cfg *c)
{
	c->total_buffer = 6;
}

static void total_bound_releases_oldest_flow(void **state)
{
	struct wps_reorder *e = engine(small_total_buffer);

	(void)state;
	for (uint16_t f = 1; f <= 3; f++) {
		group(e, f, 0, 1, f);
		group(e, f, 2, 2, 10 + f);	/* two packets buffered per flow */
	}
	assert_int_equal(sink->n, 3);
	assert_int_equal(totals(e).buffered, 6);
	group(e, 4, 0, 1, 20);		/* cut-through needs no room */
	rx(e, 1, 4, 2, 0, 1, 21);	/* needs a slot: flow 1 (armed first) gives way */
	assert_int_equal(sink->n, 6);
	assert_int_equal(sink->h[4] >> 32, (1u << 16) | 1);
	assert_int_equal(sink->a[4], B);
	assert_int_equal(sink->a[5], B);
	assert_int_equal(totals(e).buffered, 5);
	assert_int_equal(totals(e).hwm, 6);
	assert_int_equal(totals(e).f.bound_releases, 1);
	wps_reorder_free(e);
}

/* The flow that needs the room is the oldest one: NEG skips to the arriving group. */
static void total_bound_on_own_flow(void **state)
{
	struct wps_reorder *e = engine(small_total_buffer);
	static const uint16_t g[] = { 0, 2, 3, 3, 3, 3, 3, 3, 3, 3, 4 };
	static const uint16_t x[] = { 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 0 };
	static const uint8_t a[] = { C, C, I, I, I, I, I, I, C, C, C };

	(void)state;
	group(e, 1, 0, 1, 0);
	for (uint16_t i = 0; i < 6; i++)
		rx(e, 1, 1, 3, i, 8, 1);
	assert_int_equal(totals(e).buffered, 6);
	group(e, 1, 2, 1, 2);		/* no room: 1 is skipped, 2 goes, 3 follows */
	rx(e, 1, 1, 3, 6, 8, 3);
	rx(e, 1, 1, 3, 7, 8, 3);
	group(e, 1, 4, 1, 4);
	expect(g, x, a, 11);
	assert_int_equal(totals(e).f.bound_releases, 1);
	group(e, 1, 1, 1, 5);		/* the skipped group, late */
	assert_int_equal(sink->a[11], L);
	wps_reorder_free(e);
}

/* The flow bound with the arriving group before all that is buffered. */
static void flow_bound_arrival_first(void **state)
{
	struct wps_reorder *e = engine(small_flow_buffer);
	static const uint16_t g[] = { 0, 2, 3, 3, 3, 3 };
	static const uint16_t x[] = { 0, 0, 0, 1, 2, 3 };
	static const uint8_t a[] = { C, C, I, I, I, I };

	(void)state;
	group(e, 1, 0, 1, 0);
	for (uint16_t i = 0; i < 4; i++)
		rx(e, 1, 1, 3, i, 4, 1);
	group(e, 1, 2, 1, 2);
	expect(g, x, a, 6);
	assert_int_equal(totals(e).hwm, 4);
	wps_reorder_free(e);
}

static void few_flows(struct wps_reorder_cfg *c)
{
	c->max_flows = 4;
}

static void flow_table_full_forwards(void **state)
{
	struct wps_reorder *e = engine(few_flows);

	(void)state;
	for (uint16_t f = 1; f <= 5; f++)
		group(e, f, 7, 1, f);
	assert_int_equal(sink->n, 5);
	assert_int_equal(sink->a[4], WPS_ACT_NOSTATE);
	assert_int_equal(totals(e).flows, 4);
	assert_int_equal(totals(e).flows_table_full, 1);
	wps_reorder_free(e);
}

static void policed(struct wps_reorder_cfg *c)
{
	c->max_peers = 3;
	c->new_flows_per_sec = 10;
	c->new_flows_burst = 5;
	c->new_flows_total_per_sec = 20;
	c->new_flows_total_burst = 8;
}

/*
 * New flow states are policed per peer, whatever Ingress Node ID the sender
 * writes (that is the sender's to choose), and in aggregate.
 */
static void new_flows_policed_per_peer_and_in_aggregate(void **state)
{
	struct wps_reorder *e = engine(policed);
	struct wps_pkt p = { .peer = 0, .group_id = 0, .flags = WPS_FLAG_S | WPS_FLAG_E };
	struct wps_peer_stats ps;

	(void)state;
	for (uint16_t f = 0; f < 8; f++) {
		p.ingress_node = f;	/* a new node ID each time: still peer 0's budget */
		p.flow_id = f;
		take(e, wps_reorder_rx(e, &p, f, 1000));
	}
	assert_int_equal(totals(e).flows, 5);
	assert_int_equal(totals(e).flows_policed, 3);
	assert_int_equal(sink->a[5], WPS_ACT_NOSTATE);
	p.peer = 1;			/* another peer has its own budget... */
	for (uint16_t f = 0; f < 5; f++) {
		p.flow_id = f;
		take(e, wps_reorder_rx(e, &p, 100 + f, 1000));
	}
	assert_int_equal(totals(e).flows, 8);	/* ...but the aggregate's burst is 8 */
	assert_int_equal(totals(e).flows_policed_total, 2);
	wps_reorder_peer(e, 1, &ps);
	assert_int_equal(ps.flows, 3);
	assert_int_equal(ps.flows_policed_total, 2);
	assert_int_equal(ps.flows_policed, 0);
	p.peer = 0;
	p.flow_id = 50;
	take(e, wps_reorder_rx(e, &p, 101, 1000 + 100 * MS));	/* one token back after 100 ms, both */
	assert_int_equal(totals(e).flows, 9);
	p.flow_id = 51;
	take(e, wps_reorder_rx(e, &p, 102, 1000 + 100 * MS));
	assert_int_equal(totals(e).flows, 9);
	assert_int_equal(sink->n, 15);	/* everything left, state or not */
	wps_reorder_free(e);
}

static void two_peers(struct wps_reorder_cfg *c)
{
	c->max_peers = 2;
	c->total_buffer = 8;		/* 4 packets each */
	c->max_flows = 8;		/* 4 flow states each */
	c->release_timeout_ns = 0;	/* adaptive: per peer */
	c->new_flows_per_sec = 0;
}

/* The flow key includes the peer: the same (Ingress Node ID, Flow ID) from two peers are two flows. */
static void peers_keep_their_flows_apart(void **state)
{
	struct wps_reorder *e = engine(two_peers);
	struct wps_pkt p = { .peer = 2, .ingress_node = 1, .flow_id = 1, .flags = WPS_FLAG_S | WPS_FLAG_E };

	(void)state;
	prx(e, 0, 1, 1, 10, 0, 1, 0);
	prx(e, 1, 1, 1, 500, 0, 1, 1);		/* the same IDs from peer 1: its own state, at 500 */
	prx(e, 0, 1, 1, 11, 0, 1, 2);		/* peer 0's flow carries on at 11 */
	prx(e, 1, 1, 1, 501, 0, 1, 3);
	assert_int_equal(sink->n, 4);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(sink->a[i], C);
	assert_int_equal(totals(e).flows, 2);
	take(e, wps_reorder_rx(e, &p, 99, 4));	/* a peer index the engine was not given */
	assert_int_equal(sink->a[4], WPS_ACT_NOSTATE);
	assert_int_equal(totals(e).flows, 2);
	wps_reorder_free(e);
}

/*
 * A peer that fills its share of the buffer (forged groups ahead of gaps, in
 * flows of its own) releases only its own flows: another peer's group, waiting
 * for its predecessor, is not released past it. With one buffer for all, the
 * flow waiting longest gave way, another peer's, and its late group counted as
 * late.
 */
static void peer_share_never_releases_another_peers_flow(void **state)
{
	struct wps_reorder *e = engine(two_peers);
	struct wps_peer_stats ps;

	(void)state;
	prx(e, 0, 1, 1, 0, 0, 1, 0);		/* peer 0: group 0, then 2 and 3 wait for 1 */
	prx(e, 0, 1, 1, 2, 0, 1, 1);
	prx(e, 0, 1, 1, 3, 0, 1, 2);
	for (uint16_t i = 0; i < 12; i++) {	/* peer 1: 12 packets ahead of gaps, 3 flows */
		uint16_t fl = (uint16_t)(i % 3);

		prx(e, 1, 7, fl, 0, 0, 1, 10 + i * 4);	/* creates the flow (cut through) or is late */
		prx(e, 1, 7, fl, (uint16_t)(5 + i), 0, 1, 11 + i * 4);
	}
	wps_reorder_peer(e, 0, &ps);
	assert_int_equal(ps.buffered, 2);
	assert_int_equal(ps.bound_releases, 0);
	wps_reorder_peer(e, 1, &ps);
	assert_true(ps.buffered <= 4 && ps.bound_releases > 0);
	sink->n = 0;
	prx(e, 0, 1, 1, 1, 0, 1, 100);		/* peer 0's group 1: then 2 and 3, in order */
	assert_int_equal(sink->n, 3);
	assert_int_equal((uint16_t)(sink->h[0] >> 16), 1);
	assert_int_equal(sink->a[0], C);
	assert_int_equal((uint16_t)(sink->h[1] >> 16), 2);
	assert_int_equal(sink->a[1], I);
	assert_int_equal((uint16_t)(sink->h[2] >> 16), 3);
	assert_int_equal(sink->a[2], I);
	wps_reorder_free(e);
}

/* A peer's share of the flow states: a flood of new Flow IDs from one peer leaves the other its own. */
static void peer_share_of_flow_states(void **state)
{
	struct wps_reorder *e = engine(two_peers);
	struct wps_peer_stats ps;

	(void)state;
	for (uint16_t f = 0; f < 50; f++)
		prx(e, 1, 7, f, 0, 0, 1, f);
	wps_reorder_peer(e, 1, &ps);
	assert_int_equal(ps.flows, 4);
	assert_int_equal(ps.flows_table_full, 46);
	for (uint16_t f = 0; f < 4; f++)
		prx(e, 0, 1, f, 0, 0, 1, 100 + f);
	wps_reorder_peer(e, 0, &ps);
	assert_int_equal(ps.flows, 4);
	assert_int_equal(ps.flows_table_full, 0);
	assert_int_equal(sink->n, 54);	/* everything left, state or not */
	wps_reorder_free(e);
}

/*
 * Forged packets from a peer, posing as late copies of the groups its own
 * flows gave up on, seconds after: they may push that peer's timeout to its
 * cap (it measures its own skew), not every flow's: the other peer's timeout,
 * and the time its buffered groups wait, stay as its own paths made them.
 */
static void forged_lateness_moves_only_its_peers_timeout(void **state)
{
	struct wps_reorder *e = engine(two_peers);
	uint64_t t0 = wps_reorder_timeout(e, 0);

	(void)state;
	prx(e, 1, 7, 1, 0, 0, 1, 0);		/* peer 1: group 1 missing, 2 waits */
	prx(e, 1, 7, 1, 2, 0, 1, 0);
	tick(e, 10 * MS);			/* the initial 10 ms timeout gives up on 1 */
	prx(e, 1, 7, 1, 1, 0, 1, 5000 * MS);	/* "group 1", 5 s late */
	assert_int_equal(wps_reorder_timeout(e, 1), 100 * MS);	/* its peer's, to the cap */
	assert_int_equal(wps_reorder_timeout(e, 0), t0);	/* the other peer's untouched */
	prx(e, 0, 1, 1, 0, 0, 1, 5001 * MS);	/* peer 0: 2 waits for 1 its own timeout, not 100 ms */
	prx(e, 0, 1, 1, 2, 0, 1, 5001 * MS);
	assert_int_equal(wps_reorder_next_deadline(e), 5001 * MS + t0);
	wps_reorder_free(e);
}

static void idle_flows_reclaimed(void **state)
{
	struct wps_reorder *e = engine(NULL);

	(void)state;
	group(e, 1, 0, 1, 0);
	group(e, 2, 0, 1, 10 * MS);
	group(e, 2, 5, 1, 10 * MS);	/* buffered */
	tick(e, 20 * MS);		/* timer releases flow 2's group */
	assert_int_equal(sink->n, 3);
	assert_int_equal(totals(e).flows, 2);
	tick(e, 30000 * MS);		/* flow 1 idle for 30 s */
	assert_int_equal(totals(e).flows, 1);
	tick(e, 30010 * MS);
	assert_int_equal(totals(e).flows, 0);
	assert_int_equal(totals(e).flows_reclaimed, 2);
	/* The same flow again starts afresh at whatever Group ID it brings. */
	group(e, 1, 300, 1, 30020 * MS);
	assert_int_equal(sink->a[sink->n - 1], C);
	wps_reorder_free(e);
}

/*
 * A flow seen again soon after its creation, both before idle/64 on the
 * engine's clock (a clock that starts at 0): its LRU stamp stays at creation,
 * and when that is an idle period old the flow, not idle itself, is filed
 * again. That once went through the touch limited to once per idle/64, which
 * moved nothing there, so tick went round forever (found by libFuzzer). The
 * alarm turns a hang into a failure.
 */
static void idle_reclaim_early_clock(struct wps_reorder_cfg *c)
{
	c->idle_ns = 100 * US;	/* moves at most every 1562 ns */
}

static void idle_refile_near_clock_zero(void **state)
{
	struct wps_reorder *e = engine(idle_reclaim_early_clock);

	(void)state;
	alarm(10);
	group(e, 1, 0, 1, 1000);
	group(e, 1, 1, 1, 1500);
	tick(e, 1000 + 100 * US);	/* the stamp is 100 us old, the flow 99.5 us idle */
	assert_int_equal(totals(e).flows, 1);
	tick(e, 1500 + 100 * US);	/* now idle: reclaimed */
	assert_int_equal(totals(e).flows, 0);
	alarm(0);
	wps_reorder_free(e);
}

static void suspect_jump_counted_not_stalling(void **state)
{
	struct wps_reorder *e = engine(NULL);

	(void)state;
	group(e, 1, 0, 1, 0);
	group(e, 1, 5000, 1, 1);	/* beyond the in-flight bound (1024) */
	assert_int_equal(sink->a[1], WPS_ACT_SUSPECT);
	assert_int_equal(totals(e).buffered, 0);
	group(e, 1, 1, 1, 2);		/* the flow carries on */
	assert_int_equal(sink->a[2], C);
	assert_int_equal(totals(e).f.suspect, 1);
	assert_true(wps_reorder_next_deadline(e) >= 30000 * MS);	/* no timer */
	wps_reorder_free(e);
}

static void quick_resync(struct wps_reorder_cfg *c)
{
	c->suspect_resync = 3;
}

static void suspect_run_resyncs(void **state)
{
	struct wps_reorder *e = engine(quick_resync);

	(void)state;
	group(e, 1, 0, 1, 0);
	group(e, 1, 2, 1, 0);		/* buffered behind a gap */
	group(e, 1, 20000, 1, 1);
	group(e, 1, 20001, 1, 2);
	assert_int_equal(sink->n, 3);
	group(e, 1, 20002, 1, 3);	/* third in a row: the ingress moved on */
	assert_int_equal(sink->n, 5);
	assert_int_equal(sink->a[3], WPS_ACT_RESYNC);	/* group 2 first, in order */
	assert_int_equal((uint16_t)(sink->h[3] >> 16), 2);
	assert_int_equal(sink->a[4], C);
	group(e, 1, 20003, 1, 4);
	assert_int_equal(sink->a[5], C);
	wps_reorder_free(e);
}

static void adaptive(struct wps_reorder_cfg *c)
{
	c->release_timeout_ns = 0;
}

static void adaptive_timeout_follows_skew(void **state)
{
	struct wps_reorder *e = engine(adaptive);
	uint64_t t;

	(void)state;
	t = wps_reorder_timeout(e, 0);	/* before any measurement: the initial value */
	assert_true(t > 10 * MS - 10 && t < 10 * MS + 10);
	group(e, 1, 0, 1, 0);
	group(e, 1, 2, 1, 1 * MS);
	group(e, 1, 1, 1, 3 * MS);	/* 2 waited 2 ms: below the estimate, a slow decay */
	t = wps_reorder_timeout(e, 0);
	assert_true(t < 10 * MS && t > 9 * MS);
	group(e, 1, 4, 1, 4 * MS);
	group(e, 1, 3, 1, 24 * MS);	/* 4 waited 20 ms: 3 x 20 ms at once */
	assert_int_equal(wps_reorder_timeout(e, 0), 60 * MS);
	group(e, 1, 6, 1, 25 * MS);
	group(e, 1, 5, 1, 25 * MS + 10 * US);	/* 10 us: the peak holds */
	assert_true(wps_reorder_timeout(e, 0) > 55 * MS);
	group(e, 1, 8, 1, 26 * MS);
	group(e, 1, 7, 1, 226 * MS);	/* 200 ms: clamped to the 100 ms maximum */
	assert_int_equal(wps_reorder_timeout(e, 0), 100 * MS);
	assert_int_equal(totals(e).skew_ns, 200 * MS);
	for (int i = 0; i < 2000; i++) {	/* the skew goes away: so does the timeout, to its floor */
		group(e, 1, (uint16_t)(10 + 2 * i), 1, 300 * MS + i * MS);
		group(e, 1, (uint16_t)(9 + 2 * i), 1, 300 * MS + i * MS + 10 * US);
	}
	assert_int_equal(wps_reorder_timeout(e, 0), 200 * US);
	assert_int_equal(totals(e).f.timer_expiries, 0);
	wps_reorder_free(e);
}

static void late_arrival_raises_timeout(void **state)
{
	struct wps_reorder *e = engine(adaptive);

	(void)state;
	group(e, 1, 0, 1, 0);
	group(e, 1, 2, 1, 0);
	tick(e, 10 * MS);		/* initial 10 ms timeout skips group 1 */
	assert_int_equal(totals(e).f.timer_expiries, 1);
	group(e, 1, 1, 1, 12 * MS);	/* it was 12 ms late */
	assert_int_equal(wps_reorder_timeout(e, 0), 36 * MS);
	assert_int_equal(totals(e).f.late_groups, 1);
	wps_reorder_free(e);
}

/*
 * Only a group the timer (or a bound) gave up on measures the skew when it
 * comes late. A duplicate of a group long delivered, seconds after the last
 * skip, is late too but says nothing about the paths: it once set the skew to
 * those seconds, and the one timeout every flow shares to its maximum, to
 * stay there while no group waits in order to bring it down.
 */
static void late_duplicate_leaves_the_timeout(void **state)
{
	struct wps_reorder *e = engine(adaptive);
	uint64_t t;

	(void)state;
	group(e, 1, 0, 1, 0);
	group(e, 1, 2, 1, 0);
	tick(e, 10 * MS);		/* group 1 given up */
	assert_int_equal(totals(e).f.timer_expiries, 1);
	for (uint16_t g = 3; g < 10; g++)
		group(e, 1, g, 1, 10 * MS + g * MS);
	t = wps_reorder_timeout(e, 0);
	group(e, 1, 5, 1, 5000 * MS);	/* a copy of group 5, 5 s on */
	assert_int_equal(sink->a[sink->n - 1], L);
	assert_int_equal(wps_reorder_timeout(e, 0), t);
	group(e, 1, 1, 1, 5001 * MS);	/* the group given up on: that is skew */
	assert_int_equal(sink->a[sink->n - 1], L);
	assert_int_equal(wps_reorder_timeout(e, 0), 100 * MS);	/* 5 s, clamped */
	wps_reorder_free(e);
}

/* Four paths with 0, 1, 5, 10 ms of delay and no loss: nothing leaves out of order. */
static void four_paths_no_reordering(void **state)
{
	static const uint64_t delay[4] = { 0, 1 * MS, 5 * MS, 10 * MS };
	enum { GROUPS = 2000, LEN = 4 };
	struct wps_reorder *e = engine(adaptive);
	struct ev { uint64_t t; uint16_t g, i; } *ev = calloc(GROUPS * LEN, sizeof(*ev));
	size_t n = 0;

	(void)state;
	/* Ingress sends one packet every 10 us, groups round-robin over the paths. */
	for (uint32_t g = 0; g < GROUPS; g++)
		for (uint16_t i = 0; i < LEN; i++, n++)
			ev[n] = (struct ev){ n * 10 * US + delay[g % 4], (uint16_t)(g + 60000), i };
	/* Arrival order: by time (a stable insertion sort; each path is FIFO). */
	for (size_t i = 1; i < n; i++) {
		struct ev v = ev[i];
		size_t j = i;

		while (j > 0 && ev[j - 1].t > v.t) {
			ev[j] = ev[j - 1];
			j--;
		}
		ev[j] = v;
	}
	for (size_t i = 0; i < n; i++) {
		tick(e, ev[i].t);
		rx(e, 1, 1, ev[i].g, ev[i].i, LEN, ev[i].t);
	}
	assert_int_equal(sink->n, n);
	for (size_t i = 0; i < n; i++) {
		uint16_t g = (uint16_t)(sink->h[i] >> 16), x = (uint16_t)sink->h[i];

		if (g != (uint16_t)(60000 + i / LEN) || x != i % LEN)
			fail_msg("output %zu is group %u packet %u", i, g, x);
	}
	assert_int_equal(totals(e).f.timer_expiries, 0);
	assert_int_equal(totals(e).f.late_pkts, 0);
	assert_true(totals(e).f.ooo_groups > GROUPS / 2);
	assert_true(wps_reorder_timeout(e, 0) >= 10 * MS);
	free(ev);
	wps_reorder_free(e);
}

static void many(struct wps_reorder_cfg *c)
{
	c->new_flows_per_sec = 0;
	c->new_flows_total_per_sec = 0;
}

static void tens_of_thousands_of_flows(void **state)
{
	enum { FLOWS = 40000 };
	struct wps_reorder *e = engine(many);
	uint32_t *next = calloc(FLOWS, sizeof(*next));

	(void)state;
	/* Per flow: 0, then 2 (buffered), then 1 releases 2. */
	for (uint32_t f = 0; f < FLOWS; f++)
		group(e, (uint16_t)f, 0, 1, f);
	for (uint32_t f = 0; f < FLOWS; f++)
		group(e, (uint16_t)f, 2, 1, FLOWS + f);
	assert_int_equal(totals(e).buffered, FLOWS);
	assert_int_equal(totals(e).flows, FLOWS);
	for (uint32_t f = 0; f < FLOWS; f++)
		group(e, (uint16_t)f, 1, 1, 2 * FLOWS + f);
	assert_int_equal(sink->n, 3 * FLOWS);
	for (size_t i = 0; i < sink->n; i++) {
		uint32_t f = (uint16_t)(sink->h[i] >> 32);
		uint16_t g = (uint16_t)(sink->h[i] >> 16);

		if (g != next[f])
			fail_msg("flow %u: group %u left, want %u", f, g, next[f]);
		next[f]++;
	}
	assert_int_equal(totals(e).buffered, 0);
	assert_int_equal(totals(e).f.timer_expiries, 0);
	free(next);
	wps_reorder_free(e);
}

static void hold(struct wps_reorder_cfg *c)
{
	c->start_hold = true;
}

/* The first group came over the slowest path: a new flow waits one timeout for it. */
static void start_hold_finds_the_first_group(void **state)
{
	struct wps_reorder *e = engine(hold);
	static const uint16_t g[] = { 7, 7, 8, 9, 9, 10 };
	static const uint16_t x[] = { 0, 1, 0, 0, 1, 0 };
	static const uint8_t a[] = { WPS_ACT_HOLD, C, I, I, I, C };

	(void)state;
	group(e, 1, 8, 1, 0);		/* arrives first, but is not the first */
	group(e, 1, 9, 2, 1 * MS);
	assert_int_equal(sink->n, 0);
	rx(e, 1, 1, 7, 0, 2, 2 * MS);	/* an earlier group: still nothing leaves */
	assert_int_equal(sink->n, 0);
	assert_int_equal(wps_reorder_next_deadline(e), 5 * MS);
	tick(e, 5 * MS);		/* hold over: NEG = 7, its first packet and nothing else */
	assert_int_equal(sink->n, 1);
	rx(e, 1, 1, 7, 1, 2, 6 * MS);	/* 7 completes: 8 and 9 follow */
	group(e, 1, 10, 1, 7 * MS);
	expect(g, x, a, 6);
	assert_int_equal(totals(e).f.late_pkts, 0);
	assert_int_equal(totals(e).f.timer_expiries, 0);	/* a hold is not a skipped gap */
	wps_reorder_free(e);
}

static void hold_small_buffer(struct wps_reorder_cfg *c)
{
	c->start_hold = true;
	c->flow_buffer = 2;
}

/* A bound ends the hold early, in order. */
static void start_hold_ended_by_bound(void **state)
{
	struct wps_reorder *e = engine(hold_small_buffer);
	static const uint16_t g[] = { 3, 4, 5 };
	static const uint16_t x[] = { 0, 0, 0 };
	static const uint8_t a[] = { B, I, C };

	(void)state;
	group(e, 1, 4, 1, 0);
	group(e, 1, 3, 1, 0);
	assert_int_equal(sink->n, 0);
	group(e, 1, 5, 1, 0);		/* a third packet: the hold gives way */
	expect(g, x, a, 3);
	wps_reorder_free(e);
}

/*
 * The start hold is bounded: one release timeout from the state's first
 * packet, however many packets keep coming (or less, when a bound is
 * reached). Then the group it expects, the smallest seen, leaves with all
 * that follows it in order, and its next packets cut through; a group behind
 * a gap waits one timeout from when it came, not one more after the hold.
 */
static void start_hold_bounded_then_gaps_wait_once(void **state)
{
	struct wps_reorder *e = engine(hold);
	static const uint16_t g[] = { 7, 8, 9, 11, 12 };
	static const uint16_t x[] = { 0, 0, 0, 0, 0 };
	static const uint8_t a[] = { WPS_ACT_HOLD, I, I, T, C };

	(void)state;
	group(e, 1, 8, 1, 0);			/* the first packet: the hold starts */
	group(e, 1, 9, 1, 1 * MS);
	group(e, 1, 11, 1, 2 * MS);		/* 10 never comes */
	group(e, 1, 7, 1, 4 * MS);		/* the first group, over the slowest path */
	tick(e, 5 * MS - 1);
	assert_int_equal(sink->n, 0);
	assert_int_equal(wps_reorder_next_deadline(e), 5 * MS);
	tick(e, 5 * MS);
	assert_int_equal(sink->n, 3);
	assert_int_equal(wps_reorder_next_deadline(e), 7 * MS);	/* 11 came at 2 ms */
	tick(e, 7 * MS);
	assert_int_equal(sink->n, 4);
	assert_int_equal(totals(e).buffered, 0);
	group(e, 1, 12, 1, 7 * MS + 1);
	expect(g, x, a, 5);
	assert_int_equal(totals(e).f.late_pkts, 0);
	assert_int_equal(totals(e).f.timer_expiries, 1);	/* the gap at 10: the hold does not hide it */
	wps_reorder_free(e);
}

static void flush_releases_everything_in_order(void **state)
{
	struct wps_reorder *e = engine(NULL);
	static const uint16_t g[] = { 0, 3, 5, 7 };
	static const uint16_t x[] = { 0, 0, 0, 0 };

	(void)state;
	group(e, 1, 0, 1, 0);
	group(e, 1, 7, 1, 0);
	group(e, 1, 3, 1, 0);
	group(e, 1, 5, 1, 0);
	take(e, wps_reorder_flush(e));
	expect(g, x, NULL, 4);
	assert_int_equal(totals(e).buffered, 0);
	assert_int_equal(wps_reorder_next_deadline(e), 30000 * MS);
	wps_reorder_free(e);
}

static void bad_config_refused(void **state)
{
	struct wps_reorder_cfg c;

	(void)state;
	wps_reorder_cfg_defaults(&c);
	c.flow_buffer = 0;
	assert_null(wps_reorder_new(&c));
	wps_reorder_cfg_defaults(&c);
	c.timeout_min_ns = c.timeout_max_ns + 1;
	assert_null(wps_reorder_new(&c));
	wps_reorder_cfg_defaults(&c);
	c.inflight_groups = 0x8000;
	assert_null(wps_reorder_new(&c));
	wps_reorder_cfg_defaults(&c);
	c.max_flows = 0;
	assert_null(wps_reorder_new(&c));
	wps_reorder_cfg_defaults(&c);
	c.max_peers = 0;
	assert_null(wps_reorder_new(&c));
	wps_reorder_cfg_defaults(&c);
	c.total_buffer = 3;
	c.max_peers = 4;		/* a share of no packet */
	assert_null(wps_reorder_new(&c));
}

static int setup(void **state)
{
	(void)state;
	sink = calloc(1, sizeof(*sink));
	return sink ? 0 : -1;
}

/*
 * wps_reorder_rx_batch() against wps_reorder_rx() packet by packet, on
 * random arrivals (two peers and a peer index it was not given, groups
 * around each flow's progress, mostly ahead, S and E at random), batches of
 * random sizes at one time each, ticks between some (5 ms timeout): the same outputs in
 * the same order, the same counters. With `flows` at 6,000 a batch's packets
 * are of many flows, each looked up (and its state prefetched) once per run.
 */
static uint64_t brng = 0x9e3779b97f4a7c15ull;

static uint32_t brand(uint32_t n)
{
	brng ^= brng << 13;
	brng ^= brng >> 7;
	brng ^= brng << 17;
	return (uint32_t)((brng >> 11) % n);
}

static void unpoliced(struct wps_reorder_cfg *c)
{
	c->new_flows_per_sec = 0;
	c->new_flows_total_per_sec = 0;
	c->max_peers = 2;
	c->flow_buffer = 64;
	c->total_buffer = 4096;
	c->start_hold = true;
}

static void batch_as_one_by_one(uint32_t flows, int batches)
{
	static uint16_t base[6000];
	struct wps_reorder *one = engine(unpoliced), *bat = engine(unpoliced);
	struct wps_total_stats t1, tb;
	uint64_t now = 1000, hn = 0;

	memset(base, 0, sizeof(base));
	for (int b = 0; b < batches; b++) {
		struct wps_pkt p[WPS_REORDER_BATCH];
		uint64_t h[WPS_REORDER_BATCH];
		uint32_t n = 1 + brand(WPS_REORDER_BATCH), k1 = 0, kb;
		const struct wps_out *o;
		size_t from = sink->n;

		for (uint32_t i = 0; i < n; i++) {
			uint32_t f = brand(flows);

			if (i && brand(4))	/* a group's packets mostly come together */
				f = p[i - 1].flow_id | (uint32_t)p[i - 1].peer << 16;
			f %= flows;
			p[i] = (struct wps_pkt){ .peer = (uint16_t)(f & 1), .ingress_node = 1, .flow_id = (uint16_t)f,
						 .group_id = (uint16_t)(base[f] + brand(4) - !brand(50)),
						 .flags = (uint8_t)(brand(4) ? 0 : WPS_FLAG_S) | (brand(4) ? 0 : WPS_FLAG_E) };
			if (!brand(500))
				p[i].peer = 7;	/* not one of its peers */
			if (p[i].group_id == base[f] && (p[i].flags & WPS_FLAG_E))
				base[f]++;
			h[i] = hn++;
		}
		for (uint32_t i = 0; i < n; i++)
			take(one, wps_reorder_rx(one, &p[i], h[i], now));
		k1 = (uint32_t)(sink->n - from);
		kb = wps_reorder_rx_batch(bat, p, h, n, now);
		o = wps_reorder_out(bat);
		assert_int_equal(kb, k1);
		for (uint32_t i = 0; i < kb; i++) {
			assert_int_equal(o[i].handle, sink->h[from + i]);
			assert_int_equal(o[i].action, sink->a[from + i]);
		}
		sink->n = from;	/* only the order within a call matters here */
		now += brand((uint32_t)MS);
		if (!brand(4)) {
			take(one, wps_reorder_tick(one, now));
			k1 = (uint32_t)(sink->n - from);
			take(bat, wps_reorder_tick(bat, now));
			assert_int_equal(sink->n - from, 2 * k1);
			assert_memory_equal(sink->h + from, sink->h + from + k1, k1 * sizeof(*sink->h));
			sink->n = from;
		}
	}
	wps_reorder_totals(one, &t1);
	wps_reorder_totals(bat, &tb);
	assert_memory_equal(&t1, &tb, sizeof(t1));
	print_message("# %u flows: %llu groups out of order, %llu expiries, %llu late, %llu bound, %llu no state\n",
		      flows, (unsigned long long)t1.f.ooo_groups, (unsigned long long)t1.f.timer_expiries,
		      (unsigned long long)t1.f.late_pkts, (unsigned long long)t1.f.bound_releases,
		      (unsigned long long)t1.actions[WPS_ACT_NOSTATE]);
	assert_true(t1.f.ooo_groups > 0 && t1.f.timer_expiries > 0 && t1.f.late_pkts > 0 &&
		    t1.actions[WPS_ACT_NOSTATE] > 0);
	if (flows > 4096)
		assert_true(t1.flows > 4096);
	wps_reorder_free(one);
	wps_reorder_free(bat);
}

static void batch_gives_what_one_by_one_gives(void **state)
{
	(void)state;
	batch_as_one_by_one(8, 20000);
	batch_as_one_by_one(6000, 3000);
}

/*
 * The flow table's buckets hold seven flows each, a full one's newcomers in
 * the next: with four times as many flows as buckets many overflow. Every
 * flow is found again (no second state made), after half of them were
 * reclaimed and as many new ones took their places, and the table's share
 * is all there is.
 */
static void small_table(struct wps_reorder_cfg *c)
{
	c->max_flows = 64;	/* 16 buckets */
	c->new_flows_per_sec = 0;
	c->new_flows_total_per_sec = 0;
	c->idle_ns = 1000 * MS;
}

static void flow_table_overflow_and_reclaim(void **state)
{
	struct wps_reorder *e = engine(small_table);
	uint16_t gid[128] = { 0 };

	(void)state;
	for (uint16_t f = 0; f < 64; f++)
		group(e, f, gid[f]++, 1, 1000);
	assert_int_equal(totals(e).flows, 64);
	group(e, 500, 0, 1, 1000);	/* no room */
	assert_int_equal(totals(e).flows_table_full, 1);
	for (uint16_t f = 1; f < 64; f += 2)	/* the odd ones stay alive */
		group(e, f, gid[f]++, 1, 600 * MS);
	tick(e, 1000 * MS + 1000);
	assert_int_equal(totals(e).flows, 32);
	for (uint16_t f = 64; f < 128; f += 2)
		group(e, f, gid[f]++, 1, 1000 * MS + 2000);
	assert_int_equal(totals(e).flows, 64);
	assert_int_equal(totals(e).flows_created, 96);
	sink->n = 0;
	for (uint16_t f = 1; f < 128; f += 2)		/* the old ones left */
		group(e, f < 64 ? f : (uint16_t)(f - 1), gid[f < 64 ? f : f - 1]++, 1, 1000 * MS + 3000);
	assert_int_equal(totals(e).flows_created, 96);	/* every one found */
	assert_int_equal(totals(e).actions[WPS_ACT_CUT], 64 + 32 + 32 + 64);
	wps_reorder_free(e);
}

/*
 * Three flows whose keys hash alike (peers 1 and 2 differ from peer 0 by
 * what hash_key() folds in): one bucket, one signature. A batch looks up the
 * state its first bucket names first; for the two flows after the first that
 * is another flow's, and the key decides: each packet reaches its own flow,
 * interleaved within a batch and behind a same-flow run, before and after the
 * first one's state was reclaimed and made again, and never a second state.
 */
struct nflow {
	uint16_t neg;
	uint64_t pkts;
};

static int note_flow(uint16_t peer, uint16_t node, uint16_t flow_id, uint16_t neg, const struct wps_flow_stats *s,
		     void *arg)
{
	struct nflow *n = arg;

	(void)node;
	(void)flow_id;
	n[peer].neg = neg;
	n[peer].pkts = s->pkts;
	return 0;
}

static void three_peers(struct wps_reorder_cfg *c)
{
	c->max_peers = 3;
	c->new_flows_per_sec = 0;
	c->new_flows_total_per_sec = 0;
	c->idle_ns = 1000 * MS;
}

static void flows_sharing_a_hash_each_reach_their_own(void **state)
{
	struct wps_reorder *e = engine(three_peers);
	const uint32_t k = 0x00017000u;		/* node 1, flow 0x7000 for peer 0 */
	struct wps_pkt key[3];
	struct nflow nf[3];
	uint16_t gid = 10;

	(void)state;
	for (uint16_t q = 0; q < 3; q++) {
		uint32_t kq = k ^ q * 0x9e3779b1U;

		key[q] = (struct wps_pkt){ .peer = q, .ingress_node = (uint16_t)(kq >> 16), .flow_id = (uint16_t)kq };
		assert_int_equal(hash_key(q, key[q].ingress_node, key[q].flow_id), hash_key(0, 1, 0x7000));
	}
	for (int round = 0; round < 4; round++) {
		struct wps_pkt p[WPS_REORDER_BATCH];
		uint64_t h[WPS_REORDER_BATCH];
		uint32_t n = 0, out;
		uint64_t now = round < 2 ? 1000 : 1200 * MS;

		if (round == 2) {	/* peer 0's flow idle since round 1: reclaimed, made anew below */
			for (uint16_t q = 1; q < 3; q++) {
				p[0] = key[q];
				p[0].group_id = (uint16_t)(gid - 1);
				take(e, wps_reorder_rx(e, &p[0], 0, 600 * MS));	/* a late copy keeps it alive */
			}
			tick(e, 1100 * MS);
			assert_int_equal(totals(e).flows, 2);
		}
		/* a group from each in turn, a packet at a time, then each one's next group whole; the
		 * newest flow first, so that the first bucket names another state before its own */
		for (uint16_t i = 0; i < 4; i++)
			for (int q = 2; q >= 0; q--) {
				p[n] = key[q];
				p[n].group_id = gid;
				p[n].flags = (uint8_t)((i == 0 ? WPS_FLAG_S : 0) | (i == 3 ? WPS_FLAG_E : 0));
				h[n++] = H((uint32_t)q, gid, i);
			}
		for (int q = 2; q >= 0; q--)
			for (uint16_t i = 0; i < 4; i++) {
				p[n] = key[q];
				p[n].group_id = (uint16_t)(gid + 1);
				p[n].flags = (uint8_t)((i == 0 ? WPS_FLAG_S : 0) | (i == 3 ? WPS_FLAG_E : 0));
				h[n++] = H((uint32_t)q, (uint16_t)(gid + 1), i);
			}
		out = wps_reorder_rx_batch(e, p, h, n, now);
		assert_int_equal(out, n);
		for (uint32_t i = 0; i < out; i++) {
			assert_int_equal(wps_reorder_out(e)[i].handle, h[i]);
			/* peer 0's flow, made anew in round 2, takes its first group as it comes */
			assert_int_equal(wps_reorder_out(e)[i].action, WPS_ACT_CUT);
		}
		gid = (uint16_t)(gid + 2);
		memset(nf, 0, sizeof(nf));
		wps_reorder_foreach(e, note_flow, nf);
		for (uint16_t q = 0; q < 3; q++)
			assert_int_equal(nf[q].neg, gid);
		assert_int_equal(nf[0].pkts, round < 2 ? 8u * (unsigned)(round + 1) : 8u * (unsigned)(round - 1));
		assert_int_equal(nf[1].pkts, 8u * (unsigned)(round + 1) + (round >= 2));
		assert_int_equal(totals(e).flows, 3);
	}
	assert_int_equal(totals(e).flows_created, 4);
	wps_reorder_free(e);
}

static int teardown(void **state)
{
	(void)state;
	free(sink);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(in_order_cuts_through),
		cmocka_unit_test(out_of_order_restored),
		cmocka_unit_test(group_id_wraps),
		cmocka_unit_test(partial_group_then_rest_cuts_through),
		cmocka_unit_test(lost_e_released_by_timer),
		cmocka_unit_test(lost_group_then_late_arrival),
		cmocka_unit_test(expiry_releases_through_every_gap),
		cmocka_unit_test(expiry_stops_at_a_group_still_open),
		cmocka_unit_test(awaited_group_arriving_holds_the_next),
		cmocka_unit_test(gap_behind_an_arriving_group_waits_once),
		cmocka_unit_test(duplicates_each_leave_once),
		cmocka_unit_test(flow_bound_releases_in_order),
		cmocka_unit_test(total_bound_releases_oldest_flow),
		cmocka_unit_test(total_bound_on_own_flow),
		cmocka_unit_test(flow_bound_arrival_first),
		cmocka_unit_test(flow_table_full_forwards),
		cmocka_unit_test(new_flows_policed_per_peer_and_in_aggregate),
		cmocka_unit_test(peers_keep_their_flows_apart),
		cmocka_unit_test(peer_share_never_releases_another_peers_flow),
		cmocka_unit_test(peer_share_of_flow_states),
		cmocka_unit_test(forged_lateness_moves_only_its_peers_timeout),
		cmocka_unit_test(idle_flows_reclaimed),
		cmocka_unit_test(idle_refile_near_clock_zero),
		cmocka_unit_test(suspect_jump_counted_not_stalling),
		cmocka_unit_test(suspect_run_resyncs),
		cmocka_unit_test(adaptive_timeout_follows_skew),
		cmocka_unit_test(late_arrival_raises_timeout),
		cmocka_unit_test(late_duplicate_leaves_the_timeout),
		cmocka_unit_test(four_paths_no_reordering),
		cmocka_unit_test(tens_of_thousands_of_flows),
		cmocka_unit_test(start_hold_finds_the_first_group),
		cmocka_unit_test(start_hold_ended_by_bound),
		cmocka_unit_test(start_hold_bounded_then_gaps_wait_once),
		cmocka_unit_test(flush_releases_everything_in_order),
		cmocka_unit_test(bad_config_refused),
		cmocka_unit_test(batch_gives_what_one_by_one_gives),
		cmocka_unit_test(flow_table_overflow_and_reclaim),
		cmocka_unit_test(flows_sharing_a_hash_each_reach_their_own),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
