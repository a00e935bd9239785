// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubperf's keyed message bytes (user/ubperf/payload.c): fill and check agree
 * with the definition in payload.h at every offset and length (head, whole
 * words, tail), and a check fails for each way a message can arrive wrong
 * while every byte still "looks like payload": a swapped segment, a
 * duplicated one, one of another message, channel or run, a flipped bit
 * (in any word of a long message too), a message shifted by a word, a Write
 * at another slot's offset. A Write region passes only with each slot empty
 * or its own message, numbered once and below the number of Writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ubperf/payload.h"

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

/* A flipped bit in any one word of a long message, from an unaligned offset:
 * every lane of the words compared together, and every group and block of
 * them, is looked at (the check compares several words at once). */
static void flipped_bit_in_any_word_fails(void **state)
{
	const size_t len = 4096 + 3, head = 5;	/* from offset 3: 5 bytes, 511 words, 3 bytes */
	uint8_t *m = malloc(len);

	(void)state;
	assert_non_null(m);
	payload_fill(m, len, seed0(), 3);
	for (size_t w = 0; w < (len - head) / 8; w++) {
		size_t at = head + w * 8 + w % 8;

		m[at] ^= (uint8_t)(0x80u >> (w % 8));
		if (payload_check(m, len, seed0(), 3))
			fail_msg("a bit flipped in word %zu (byte %zu) passed the check", w, at);
		m[at] ^= (uint8_t)(0x80u >> (w % 8));
	}
	assert_true(payload_check(m, len, seed0(), 3));
	free(m);
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

/* A message: its number comes back; a changed number no longer matches its bytes. */
static void message_number_round_trip(void **state)
{
	uint8_t m[1000], s3[3];
	uint64_t n;

	(void)state;
	payload_msg_fill(m, sizeof(m), KEY, CHAN, N, 4096);
	assert_true(payload_msg_check(m, sizeof(m), KEY, CHAN, 4096, &n));
	assert_int_equal(n, N);
	assert_int_equal(m[0], N);	/* little-endian, whatever the host */
	m[0] ^= 1;
	assert_false(payload_msg_check(m, sizeof(m), KEY, CHAN, 4096, &n));
	/* too short for a number: message 0's payload */
	payload_msg_fill(s3, sizeof(s3), KEY, CHAN, N, 0);
	assert_true(payload_msg_check(s3, sizeof(s3), KEY, CHAN, 0, &n));
	assert_int_equal(n, 0);
	assert_false(payload_msg_check(s3, sizeof(s3), KEY + 1, CHAN, 0, &n));
}

/* A Write region of 3 channels x 4 slots of 1000 bytes (not a multiple of
 * 8: slots begin inside a word), as a run of 12 Writes leaves it. */
#define RCH	3u
#define RSL	4u
#define RSZ	1000u

static uint8_t *slot(uint8_t *r, uint32_t c, uint32_t s)
{
	return r + ((size_t)c * RSL + s) * RSZ;
}

/* Channel c's slot s holding Write number n, keyed for channel kc at slot ks under key k. */
static void put(uint8_t *r, uint32_t c, uint32_t s, uint64_t n, uint32_t k, uint32_t kc, uint32_t ks)
{
	payload_msg_fill(slot(r, c, s), RSZ, k, kc, n, (uint64_t)ks * RSZ);
}

static uint8_t *region_full(void)
{
	uint8_t *r = calloc(RCH * RSL, RSZ);

	assert_non_null(r);
	for (uint32_t c = 0; c < RCH; c++)
		for (uint32_t s = 0; s < RSL; s++)
			put(r, c, s, c * RSL + s, KEY, c, s);
	return r;
}

static void region_expect(const uint8_t *r, uint64_t nmsg, uint64_t corrupt, uint64_t empty)
{
	struct payload_tally t;

	assert_int_equal(payload_region_check(r, RCH, RSL, RSZ, KEY, nmsg, &t), 0);
	assert_int_equal(t.corrupt, corrupt);
	assert_int_equal(t.empty, empty);
	assert_int_equal(t.verified, (RCH * RSL - corrupt - empty) * RSZ);
}

static void region_full_verifies(void **state)
{
	uint8_t *r = region_full();

	(void)state;
	region_expect(r, RCH * RSL, 0, 0);
	free(r);
}

static void region_untouched_slot_is_empty(void **state)
{
	uint8_t *r = region_full();

	(void)state;
	memset(slot(r, 1, 3), 0, RSZ);
	region_expect(r, RCH * RSL, 0, 1);
	free(r);
}

/* Each way a slot can hold bytes that are payload, but not that slot's. */
static void region_wrong_slot_fails(void **state)
{
	struct {
		const char *what;
		uint32_t k, kc, ks;	/* keyed as ... */
		uint64_t n;
	} wrong[] = {
		{ "slot 2's Write landed at slot 1", KEY, 0, 2, 1 },
		{ "channel 1's Write in channel 0's part", KEY, 1, 1, 1 },
		{ "a previous run's Write", KEY + 1, 0, 1, 1 },
		{ "number 9 twice (channel 2's slot 1 has it)", KEY, 0, 1, 9 },
		{ "a number never posted", KEY, 0, 1, RCH * RSL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		uint8_t *r = region_full();

		print_message("channel 0 slot 1: %s\n", wrong[i].what);
		put(r, 0, 1, wrong[i].n, wrong[i].k, wrong[i].kc, wrong[i].ks);
		region_expect(r, RCH * RSL, 1, 0);
		free(r);
	}
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
		cmocka_unit_test(flipped_bit_in_any_word_fails),
		cmocka_unit_test(shifted_message_fails),
		cmocka_unit_test(write_at_another_slot_fails),
		cmocka_unit_test(message_number_round_trip),
		cmocka_unit_test(region_full_verifies),
		cmocka_unit_test(region_untouched_slot_is_empty),
		cmocka_unit_test(region_wrong_slot_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
