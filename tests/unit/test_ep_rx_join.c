// SPDX-License-Identifier: BSD-2-Clause
/*
 * A jumbo packet's two UMEM frames joined where they lie
 * (user/endpoint/ep_rx_join.h), on frames laid by hand in a fake UMEM of
 * plain memory: the shapes a veth in copy mode never hands out (its first
 * frame always fills its chunk, its packets are two frames) as well as the
 * one it does. A join leaves the packet's bytes, first frame then second,
 * from the first frame's start; a refusal leaves every byte and both frames
 * as they were.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "endpoint/ep_rx_join.h"

#define CHUNKS		6
#define UMEM_LEN	(CHUNKS * EP_FRAME_SIZE)
#define HEADROOM	256	/* XDP_PACKET_HEADROOM: where the kernel starts a frame */

static uint8_t *umem, *before;

static int setup(void **state)
{
	(void)state;
	umem = malloc(UMEM_LEN);
	before = malloc(UMEM_LEN);
	if (!umem || !before)
		return -1;
	/* Bytes that differ from their neighbours and from chunk to chunk, so a
	 * move by any distance shows. */
	uint32_t x = 0x9e3779b9;
	for (size_t i = 0; i < UMEM_LEN; i++) {
		x = x * 1664525 + 1013904223;
		umem[i] = (uint8_t)(x >> 24);
	}
	memcpy(before, umem, UMEM_LEN);
	return 0;
}

/* Each test from the same bytes, whatever the one before left (a join that failed an
 * assertion halfway). */
static int fresh(void **state)
{
	(void)state;
	memcpy(umem, before, UMEM_LEN);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(umem);
	free(before);
	return 0;
}

/* The frame of len bytes at offset off of chunk c; more as the kernel's XDP_PKT_CONTD. */
static struct xsk_mt_frame frame(unsigned c, uint32_t off, uint32_t len, bool more)
{
	uint64_t addr = (uint64_t)c * EP_FRAME_SIZE + off;

	return (struct xsk_mt_frame){ .addr = addr, .data = umem + addr, .len = len, .more = more };
}

/* A full first frame: from the kernel's headroom to its chunk's end. */
static struct xsk_mt_frame full(unsigned c) { return frame(c, HEADROOM, EP_FRAME_SIZE - HEADROOM, true); }

/* ep_rx_join(a, b) refuses, and nothing moved: the UMEM byte for byte, both frames. */
static void refused(struct xsk_mt_frame a, struct xsk_mt_frame b)
{
	const struct xsk_mt_frame a0 = a, b0 = b;

	assert_false(ep_rx_join(&a, &b));
	assert_memory_equal(&a, &a0, sizeof(a));
	assert_memory_equal(&b, &b0, sizeof(b));
	assert_memory_equal(umem, before, UMEM_LEN);
}

/* ep_rx_join(a, b) joins: a is the packet, a's bytes then b's, read before the join into a
 * buffer of their own; b's chunk changed only where a's packet now lies and in b's old
 * place; every other chunk as it was. */
static void joined(struct xsk_mt_frame a, struct xsk_mt_frame b)
{
	const struct xsk_mt_frame a0 = a;
	const size_t len = (size_t)a.len + b.len;
	const uint64_t bchunk = b.addr - b.addr % EP_FRAME_SIZE;
	uint8_t *want = malloc(len);

	assert_non_null(want);
	memcpy(want, umem + a.addr, a.len);
	memcpy(want + a.len, umem + b.addr, b.len);
	assert_true(ep_rx_join(&a, &b));
	assert_int_equal(a.addr, a0.addr);
	assert_ptr_equal(a.data, a0.data);
	assert_int_equal(a.more, a0.more);
	assert_int_equal(a.len, len);
	assert_true(memcmp(umem + a.addr, want, len) == 0);
	assert_true(memcmp(umem, before, bchunk) == 0);
	assert_true(memcmp(umem + bchunk + EP_FRAME_SIZE, before + bchunk + EP_FRAME_SIZE,
			   UMEM_LEN - bchunk - EP_FRAME_SIZE) == 0);
	free(want);
	fresh(NULL);
}

/* What a veth in copy mode hands out: a full first frame, the second in the next chunk
 * after the kernel's headroom, of any length up to a full frame; and with no headroom. */
static void adjacent_pair_joined(void **state)
{
	(void)state;
	const uint32_t lens[] = { 1, 60, 376, 1000, EP_FRAME_SIZE - HEADROOM };

	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		joined(full(1), frame(2, HEADROOM, lens[k], false));
		joined(full(4), frame(5, HEADROOM, lens[k], false));
	}
	joined(frame(2, 0, EP_FRAME_SIZE, true), frame(3, 0, 500, false));
	joined(frame(2, 100, EP_FRAME_SIZE - 100, true), frame(3, 7, 500, false));
}

/* A first frame short of its chunk's end (a driver's zero-copy buffer, say): the second's
 * bytes at its chunk's start would not follow the first's. */
static void first_frame_not_full_refused(void **state)
{
	(void)state;
	refused(frame(1, HEADROOM, EP_FRAME_SIZE - HEADROOM - 1, true), frame(2, HEADROOM, 400, false));
	refused(frame(1, HEADROOM, 2000, true), frame(2, HEADROOM, 400, false));
	refused(frame(1, 0, EP_FRAME_SIZE - 1, true), frame(2, 0, 400, false));
}

/* A packet of three frames (the second goes on, `more`): joining two would parse a part. */
static void three_frames_refused(void **state)
{
	(void)state;
	refused(full(1), frame(2, 0, EP_FRAME_SIZE, true));
	refused(full(1), frame(2, HEADROOM, EP_FRAME_SIZE - HEADROOM, true));
}

/* The second frame in the chunk before the first's (the reversed fill order's pairs). */
static void second_frame_in_previous_chunk_refused(void **state)
{
	(void)state;
	refused(full(2), frame(1, HEADROOM, 400, false));
	refused(full(2), frame(1, 0, 400, false));
}

/* The second frame anywhere but the next chunk: two on, far on, the first's own, chunk 0. */
static void second_frame_not_in_next_chunk_refused(void **state)
{
	(void)state;
	refused(full(1), frame(3, HEADROOM, 400, false));
	refused(full(1), frame(5, HEADROOM, 400, false));
	refused(full(1), frame(1, HEADROOM, 400, false));
	refused(full(5), frame(0, HEADROOM, 400, false));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(adjacent_pair_joined, fresh),
		cmocka_unit_test_setup(first_frame_not_full_refused, fresh),
		cmocka_unit_test_setup(three_frames_refused, fresh),
		cmocka_unit_test_setup(second_frame_in_previous_chunk_refused, fresh),
		cmocka_unit_test_setup(second_frame_not_in_next_chunk_refused, fresh),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
