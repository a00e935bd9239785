// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubperf's keyed message bytes (user/ubperf/payload.c): fill and check agree
 * with the definition in payload.h at every offset and length (head, whole
 * words, tail), and a check fails for each way a message can arrive wrong
 * while every byte still "looks like payload": a swapped segment, a
 * duplicated one, one of another message, channel or run, a flipped bit,
 * a message shifted by a word, a Write at another slot's offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "payload.h"

#define MSG	(16u << 10)	/* a message of ... */
#define SEG	1024u		/* ... 16 MTU-sized segments */
#define KEY	0x5eed1234u
#define CHAN	3u
#define N	41ull

/* payload.h's definition written out, byte by byte, independently of payload.c. */
static uint8_t ref_byte(uint64_t seed, uint64_t x)
{
	uint64_t w = seed + (x / 8) * PAYLOAD_STEP;

	return (uint8_t)(w >> (8 * (x % 8)));
}

static uint64_t seed0(void) { return payload_seed(KEY, CHAN, N); }

static uint8_t *message(uint64_t seed, uint64_t off)
{
	uint8_t *m = malloc(MSG);

	assert_non_null(m);
	payload_fill(m, MSG, seed, off);
	assert_true(payload_check(m, MSG, seed, off));
	return m;
}

/* Every start offset within two words and every length through three, then
 * long ones: fill gives the defined bytes and nothing past len; check takes them. */
static void fill_matches_definition(void **state)
{
	static const size_t lens[] = { 0, 1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 1000, 65536 };
	static const uint64_t bases[] = { 0, 8, 16376, 1ull << 40 };
	uint8_t *buf = malloc(65536 + 16);
	uint64_t seed = seed0();

	(void)state;
	assert_non_null(buf);
	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
		for (uint64_t d = 0; d < 16; d++)
			for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
				uint64_t off = bases[b] + d;

				memset(buf, 0xa5, lens[l] + 16);
				payload_fill(buf, lens[l], seed, off);
				for (size_t i = 0; i < lens[l]; i++)
					assert_int_equal(buf[i], ref_byte(seed, off + i));
				for (size_t i = lens[l]; i < lens[l] + 16; i++)
					assert_int_equal(buf[i], 0xa5);
				assert_true(payload_check(buf, lens[l], seed, off));
			}
	free(buf);
}

/* A message checked in pieces at their own offsets passes (the server
 * checks a Send from byte 8, a Write slot at its region offset). */
static void pieces_check_at_their_offsets(void **state)
{
	uint8_t *m = message(seed0(), 5);

	(void)state;
	for (size_t at = 0; at < MSG; at += 1237)
		assert_true(payload_check(m + at, MSG - at, seed0(), 5 + at));
	free(m);
}

static void seeds_differ_by_each_input(void **state)
{
	uint64_t s = seed0();

	(void)state;
	assert_true(payload_seed(KEY ^ 1, CHAN, N) != s);
	assert_true(payload_seed(KEY, CHAN + 1, N) != s);
	assert_true(payload_seed(KEY, CHAN, N + 1) != s);
	/* the inputs are not interchangeable */
	assert_true(payload_seed(KEY, (uint32_t)N, CHAN) != s);
	assert_true(payload_seed(0, 0, 0) != payload_seed(0, 0, 1));
}

static void swapped_segment_fails(void **state)
{
	uint8_t *m = message(seed0(), 0), tmp[SEG];

	(void)state;
	memcpy(tmp, m + 2 * SEG, SEG);
	memcpy(m + 2 * SEG, m + 5 * SEG, SEG);
	memcpy(m + 5 * SEG, tmp, SEG);
	assert_false(payload_check(m, MSG, seed0(), 0));
	free(m);
}

static void duplicated_segment_fails(void **state)
{
	uint8_t *m = message(seed0(), 0);

	(void)state;
	memcpy(m + 4 * SEG, m + 3 * SEG, SEG);
	assert_false(payload_check(m, MSG, seed0(), 0));
	free(m);
}

/* One segment filled as another message, channel or run would have it, at its right offset. */
static void foreign_segment_fails(void **state)
{
	const uint64_t other[] = {
		payload_seed(KEY, CHAN, N + 1),		/* the next message */
		payload_seed(KEY, CHAN + 1, N),		/* another channel */
		payload_seed(KEY + 1, CHAN, N),		/* another run */
	};

	(void)state;
	for (size_t k = 0; k < sizeof(other) / sizeof(other[0]); k++) {
		uint8_t *m = message(seed0(), 0);

		payload_fill(m + 7 * SEG, SEG, other[k], 7 * SEG);
		assert_true(payload_check(m + 7 * SEG, SEG, other[k], 7 * SEG));
		assert_false(payload_check(m, MSG, seed0(), 0));
		free(m);
	}
}

/* Each single bit, from an unaligned offset: the head, the words and the tail all look. */
static void flipped_bit_fails(void **state)
{
	uint8_t m[67];

	(void)state;
	for (size_t i = 0; i < sizeof(m); i++) {
		payload_fill(m, sizeof(m), seed0(), 3);
		m[i] ^= (uint8_t)(1u << (i % 8));
		assert_false(payload_check(m, sizeof(m), seed0(), 3));
	}
}

/* The whole message a word (or a byte) off: a Send's bytes shifted. */
static void shifted_message_fails(void **state)
{
	uint8_t *m = message(seed0(), 8);

	(void)state;
	assert_false(payload_check(m, MSG, seed0(), 0));
	assert_false(payload_check(m, MSG, seed0(), 16));
	assert_false(payload_check(m + 8, MSG - 8, seed0(), 8));
	assert_false(payload_check(m, MSG, seed0(), 9));
	free(m);
}

/* A Write meant for slot 2 of a channel's region that landed at slot 1. */
static void write_at_another_slot_fails(void **state)
{
	uint8_t *m = message(seed0(), 2 * MSG);

	(void)state;
	assert_false(payload_check(m, MSG, seed0(), 1 * MSG));
	/* and any one of its segments, alone, at the wrong place */
	assert_false(payload_check(m + SEG, SEG, seed0(), MSG + SEG));
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fill_matches_definition),
		cmocka_unit_test(pieces_check_at_their_offsets),
		cmocka_unit_test(seeds_differ_by_each_input),
		cmocka_unit_test(swapped_segment_fails),
		cmocka_unit_test(duplicated_segment_fails),
		cmocka_unit_test(foreign_segment_fails),
		cmocka_unit_test(flipped_bit_fails),
		cmocka_unit_test(shifted_message_fails),
		cmocka_unit_test(write_at_another_slot_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
