// SPDX-License-Identifier: BSD-2-Clause
/*
 * The WPS ingress's group scheduler (headers/wps_ingress.h) as the BPF
 * program runs it: the view of the paths up made by wps_sched_make (which
 * the program's live_slots() calls when the paths up or the weights change),
 * then one wps_sched_pick per group, seq being the flow's group count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "wps_ingress.h"

static const __u8 id[WPS_IN_MAX_PATHS] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
static const __u64 no_load[WPS_IN_MAX_PATHS];

/* The view of slot[0..n-1] (those usable holds) with weights w by slot, made over a dirty one. */
static const struct wps_in_sched *view(const __u8 *slot, __u32 n, __u32 usable, const __u8 *w)
{
	static struct wps_in_sched s;

	memset(&s, 0xee, sizeof(s));
	wps_sched_make(&s, slot, n, usable, w);
	return &s;
}

static __u32 pick(const struct wps_in_sched *s, __u32 seq)
{
	return wps_sched_pick(WPS_SCHED_WEIGHTED, seq, s, no_load);
}

/* The most groups in a row path p takes from seq 0 over count groups. */
static unsigned longest_run(const struct wps_in_sched *s, __u32 p, __u32 count)
{
	unsigned run = 0, most = 0;

	for (__u32 q = 0; q < count; q++) {
		run = pick(s, q) == p ? run + 1 : 0;
		if (run > most)
			most = run;
	}
	return most;
}

/*
 * Each path of s takes exactly its weight of each cycle, and of any k
 * consecutive groups (every start, the cycle's end wrapping to its start)
 * at most its share rounded up plus slack.
 */
static void assert_windows(const struct wps_in_sched *s, unsigned slack)
{
	static unsigned pre[2 * WPS_IN_SCHED_CYCLE + 1];
	__u32 len = s->len;

	assert_true(len > 0 && len <= WPS_IN_SCHED_CYCLE);
	for (__u32 i = 0; i < s->n; i++) {
		__u32 p = s->slot[i], w = s->weight[p];

		pre[0] = 0;
		for (__u32 q = 0; q < 2 * len; q++)
			pre[q + 1] = pre[q] + (pick(s, q) == p);
		assert_int_equal(pre[len], w);
		for (__u32 k = 1; k <= len; k++) {
			unsigned most = (w * k + len - 1) / len + slack;

			for (__u32 at = 0; at < len; at++)
				if (pre[at + k] - pre[at] > most)
					fail_msg("weight %u of %u: %u of the %u groups from %u (at most %u)", w, len,
						 pre[at + k] - pre[at], k, at, most);
		}
	}
}

static void rr_and_least_loaded(void **state)
{
	static const __u8 zero[WPS_IN_MAX_PATHS];
	__u8 w[WPS_IN_MAX_PATHS] = { 1, 3 };
	__u64 load[WPS_IN_MAX_PATHS] = { 500, 100, 100, 900 };
	const struct wps_in_sched *s = view(id, 4, ~0u, w);

	(void)state;
	for (__u32 q = 0; q < 8; q++)
		assert_int_equal(wps_sched_pick(WPS_SCHED_RR, q, s, load), q % 4);
	/* least loaded; a tie goes to the first counting from seq mod n */
	assert_int_equal(wps_sched_pick(WPS_SCHED_LEAST_LOADED, 0, s, load), 1);
	assert_int_equal(wps_sched_pick(WPS_SCHED_LEAST_LOADED, 2, s, load), 2);
	assert_int_equal(wps_sched_pick(WPS_SCHED_LEAST_LOADED, 3, s, load), 1);
	/* weights all 0 fall back to round-robin; no path picks 0 */
	s = view(id, 3, ~0u, zero);
	assert_int_equal(s->len, 0);
	assert_int_equal(pick(s, 5), 2);
	s = view(id, 0, ~0u, w);
	assert_int_equal(wps_sched_pick(WPS_SCHED_RR, 5, s, load), 0);
	assert_int_equal(pick(s, 5), 0);
}

/* 7:3 is A B A A A B A A B A: never more than ceil(7/3) = 3 groups in a row into A. */
static void weighted_interleaves(void **state)
{
	static const __u8 want73[10] = { 0, 1, 0, 0, 0, 1, 0, 0, 1, 0 };
	__u8 w73[WPS_IN_MAX_PATHS] = { 7, 3 }, w11[WPS_IN_MAX_PATHS] = { 1, 1 }, w13[WPS_IN_MAX_PATHS] = { 1, 3 };
	const struct wps_in_sched *s = view(id, 2, ~0u, w73);
	int hits[WPS_IN_MAX_PATHS] = { 0 };

	(void)state;
	assert_int_equal(s->len, 10);
	for (__u32 q = 0; q < 1000; q++)
		assert_int_equal(pick(s, q), want73[q % 10]);
	assert_int_equal(longest_run(s, 0, 1000), 3);
	assert_int_equal(longest_run(s, 1, 1000), 1);
	assert_windows(s, 0);
	s = view(id, 2, ~0u, w11);
	for (__u32 q = 0; q < 8; q++)
		assert_int_equal(pick(s, q), q % 2);
	s = view(id, 2, ~0u, w13);
	for (__u32 q = 0; q < 400; q++)
		hits[pick(s, q)]++;
	assert_int_equal(hits[0], 100);
	assert_int_equal(hits[1], 300);
	assert_int_equal(longest_run(s, 1, 400), 3);
	assert_windows(s, 0);
}

/*
 * Weights count in lowest terms: 40:30:20:10 is the cycle of 4:3:2:1, ten
 * groups long; coprime weights stay as they are; only the paths up count.
 */
static void weighted_lowest_terms(void **state)
{
	static const __u8 want4321[10] = { 0, 1, 2, 0, 1, 3, 0, 2, 1, 0 }, two[WPS_IN_MAX_PATHS] = { 0, 2 };
	__u8 big[WPS_IN_MAX_PATHS] = { 40, 30, 20, 10 }, small[WPS_IN_MAX_PATHS] = { 4, 3, 2, 1 };
	__u8 odd[WPS_IN_MAX_PATHS] = { 233, 144 }, some[WPS_IN_MAX_PATHS] = { 40, 7, 20 };
	const struct wps_in_sched *s = view(id, 4, ~0u, big);

	(void)state;
	assert_memory_equal(s->weight, small, 4);
	assert_int_equal(s->len, 10);
	for (__u32 q = 0; q < 100; q++)
		assert_int_equal(pick(s, q), want4321[q % 10]);
	assert_windows(s, 1);
	s = view(id, 4, ~0u, small);
	for (__u32 q = 0; q < 10; q++)
		assert_int_equal(pick(s, q), want4321[q]);
	/* Euclid's longest case below 256 */
	s = view(id, 2, ~0u, odd);
	assert_memory_equal(s->weight, odd, 2);
	assert_int_equal(s->len, 377);
	assert_windows(s, 0);
	/* slots 0 and 2 (40:20) are 2:1; slot 1's weight 7 is not theirs */
	s = view(two, 2, ~0u, some);
	assert_int_equal(s->weight[0], 2);
	assert_int_equal(s->weight[2], 1);
	assert_int_equal(s->weight[1], 0xee);
	assert_int_equal(s->len, 3);
	assert_windows(s, 0);
}

/* A small deterministic generator (an LCG's high bits) for weight sets. */
static __u32 next_rand(__u32 *x)
{
	*x = *x * 1103515245u + 12345u;
	return *x >> 16;
}

/*
 * Many weight sets: with two paths no window holds more than a path's share
 * rounded up (and no run is longer than ceil(a/b)); with up to 16 paths, one
 * more at most.
 */
static void weighted_windows_for_many_weights(void **state)
{
	__u32 x = 1;

	(void)state;
	for (__u32 a = 1; a <= 40; a++)
		for (__u32 b = 1; b <= 40; b++) {
			__u8 w[WPS_IN_MAX_PATHS] = { (__u8)a, (__u8)b };
			const struct wps_in_sched *s = view(id, 2, ~0u, w);
			__u32 g = wps_gcd(a, b);

			assert_int_equal(s->len, (a + b) / g);
			assert_windows(s, 0);
			if (a > b)
				assert_true(longest_run(s, 0, 2 * s->len) <= (a + b - 1) / b);
		}
	for (int t = 0; t < 300; t++) {
		__u8 w[WPS_IN_MAX_PATHS] = { 0 };
		__u32 n = 3 + next_rand(&x) % 14, top = (const __u32[]){ 3, 10, 40 }[next_rand(&x) % 3];

		for (__u32 i = 0; i < n; i++)
			w[i] = (__u8)(1 + next_rand(&x) % top);
		assert_windows(view(id, n, ~0u, w), 1);
	}
	/* the longest cycle */
	{
		__u8 w[WPS_IN_MAX_PATHS];

		for (__u32 i = 0; i < WPS_IN_MAX_PATHS; i++)
			w[i] = (__u8)(255 - i);
		assert_int_equal(view(id, 16, ~0u, w)->len, 16 * 255 - 120);
	}
}

/* After a path del, the paths in use are slots 0, 2, 3: answers are slots, weights and loads by slot. */
static void slots_with_a_hole(void **state)
{
	static const __u8 slot[WPS_IN_MAX_PATHS] = { 0, 2, 3 };
	__u8 w[WPS_IN_MAX_PATHS] = { 1, 9, 2, 1 };
	__u64 load[WPS_IN_MAX_PATHS] = { 300, 0, 200, 100 };
	const struct wps_in_sched *s = view(slot, 3, ~0u, w);
	int hits[WPS_IN_MAX_PATHS] = { 0 };

	(void)state;
	for (__u32 q = 0; q < 6; q++)
		assert_int_equal(wps_sched_pick(WPS_SCHED_RR, q, s, load), slot[q % 3]);
	for (__u32 q = 0; q < 400; q++)
		hits[pick(s, q)]++;
	/* the deleted slot 1 (weight 9, load 0) gets nothing */
	assert_int_equal(hits[0], 100);
	assert_int_equal(hits[1], 0);
	assert_int_equal(hits[2], 200);
	assert_int_equal(hits[3], 100);
	assert_int_equal(wps_sched_pick(WPS_SCHED_LEAST_LOADED, 0, s, load), 3);
}

/*
 * A path down mid-cycle: the view is made again from the paths left, and
 * the flow's next groups (its seq goes on) hold their ratio over every cycle
 * of them; a down path that changes the common divisor (2:2:1 -> 2:2 = 1:1)
 * alternates. Back up, the first cycle again.
 */
static void path_down_mid_cycle(void **state)
{
	__u8 w[WPS_IN_MAX_PATHS] = { 4, 3, 2, 1 }, w221[WPS_IN_MAX_PATHS] = { 2, 2, 1 };
	const struct wps_in_sched *s = view(id, 4, ~0u, w);
	int hits[WPS_IN_MAX_PATHS] = { 0 };
	__u32 seq = 0;

	(void)state;
	for (; seq < 5; seq++)
		pick(s, seq);
	s = view(id, 4, ~(1u << 2), w);
	assert_int_equal(s->len, 8);
	for (__u32 c = 0; c < 3; c++) {
		memset(hits, 0, sizeof(hits));
		for (__u32 k = 0; k < 8; k++)
			hits[pick(s, seq++)]++;
		assert_int_equal(hits[0], 4);
		assert_int_equal(hits[1], 3);
		assert_int_equal(hits[2], 0);
		assert_int_equal(hits[3], 1);
	}
	assert_windows(s, 1);
	s = view(id, 4, ~0u, w);
	assert_int_equal(s->len, 10);
	assert_int_equal(pick(s, 10), 0);
	s = view(id, 3, ~(1u << 2), w221);
	assert_int_equal(s->len, 2);
	for (__u32 k = 0; k < 6; k++, seq++)
		assert_int_equal(pick(s, seq), seq % 2);
}

/* Weights changed live: the next groups take the new cycle, from wherever the flow's seq is. */
static void weights_changed_live(void **state)
{
	__u8 w[WPS_IN_MAX_PATHS] = { 1, 1 };
	const struct wps_in_sched *s = view(id, 2, ~0u, w);
	int hits[WPS_IN_MAX_PATHS] = { 0 };
	unsigned run = 0, most = 0;
	__u32 seq = 0;

	(void)state;
	for (; seq < 3; seq++)
		assert_int_equal(pick(s, seq), seq % 2);
	w[0] = 7;
	w[1] = 3;
	s = view(id, 2, ~0u, w);
	for (__u32 k = 0; k < 20; k++, seq++) {
		__u32 p = pick(s, seq);

		hits[p]++;
		run = p == 0 ? run + 1 : 0;
		most = run > most ? run : most;
	}
	assert_int_equal(hits[0], 14);
	assert_int_equal(hits[1], 6);
	assert_int_equal(most, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rr_and_least_loaded),
		cmocka_unit_test(weighted_interleaves),
		cmocka_unit_test(weighted_lowest_terms),
		cmocka_unit_test(weighted_windows_for_many_weights),
		cmocka_unit_test(slots_with_a_hole),
		cmocka_unit_test(path_down_mid_cycle),
		cmocka_unit_test(weights_changed_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
