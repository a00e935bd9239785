// SPDX-License-Identifier: BSD-2-Clause
/*
 * Multi-buffer rx (user/xsk/xsk_mb.h): of the descriptors peeked at a ring's
 * head, xsk_mt_rx takes whole packets only. The ring here is a plain array
 * of descriptors behind a struct xsk_ring_cons, as the kernel would map it;
 * packets are written as their frame counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "xsk/xsk_mb.h"

#define RING 8

static struct xdp_desc desc[RING];
static struct xsk_ring_cons rx = { .mask = RING - 1, .size = RING, .ring = desc };

/* Packets of frames[i] frames each, from ring index at on (wrapping). */
static void lay(uint32_t at, const unsigned *frames, unsigned npkts)
{
	memset(desc, 0, sizeof(desc));
	for (unsigned p = 0; p < npkts; p++)
		for (unsigned f = 0; f < frames[p]; f++, at++)
			desc[at & (RING - 1)].options = f + 1 < frames[p] ? XDP_PKT_CONTD : 0;
}

static void whole_packets_all_taken(void **state)
{
	(void)state;
	lay(0, (unsigned[]){ 1, 3, 2 }, 3);
	assert_int_equal(xsk_mb_whole(&rx, 0, 6, false), 6);
	assert_int_equal(xsk_mb_whole(&rx, 0, 6, true), 6);
}

static void cut_packet_left_in_ring(void **state)
{
	(void)state;
	lay(0, (unsigned[]){ 1, 3, 3 }, 3);
	/* 6 of 7 frames: the third packet's third frame is not in the peek. */
	assert_int_equal(xsk_mb_whole(&rx, 0, 6, true), 4);
	assert_int_equal(xsk_mb_whole(&rx, 0, 6, false), 4);
	assert_int_equal(xsk_mb_whole(&rx, 0, 2, true), 1);
}

static void packet_longer_than_the_call(void **state)
{
	(void)state;
	lay(0, (unsigned[]){ 5 }, 1);
	/* A call with nothing yet takes its first part (no call could take all
	 * of it); one that has frames of another socket leaves it whole. */
	assert_int_equal(xsk_mb_whole(&rx, 0, 3, true), 3);
	assert_int_equal(xsk_mb_whole(&rx, 0, 3, false), 0);
	assert_int_equal(xsk_mb_whole(&rx, 0, 5, false), 5);
}

static void across_the_ring_end(void **state)
{
	(void)state;
	/* Indexes run on past the ring's size; the mask wraps them. */
	lay(6, (unsigned[]){ 2, 3 }, 2);
	assert_int_equal(xsk_mb_whole(&rx, 6, 5, false), 5);
	assert_int_equal(xsk_mb_whole(&rx, 6 + RING, 4, false), 2);
	assert_int_equal(xsk_mb_whole(&rx, 6, 1, false), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(whole_packets_all_taken),
		cmocka_unit_test(cut_packet_left_in_ring),
		cmocka_unit_test(packet_longer_than_the_call),
		cmocka_unit_test(across_the_ring_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
