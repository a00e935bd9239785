/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ubperf's message bytes (no I/O): every byte a keyed function of where it
 * belongs, so a receiver can tell a right byte from one of another run,
 * channel, message or position. A swapped, duplicated or misplaced segment,
 * or a Write landing at the wrong offset, fails the check; a pattern that
 * repeats (ubperf's once did every 256 bytes) would pass them all.
 *
 * The byte at offset x of message msg of channel chan under key (the run
 * id both sides know) is byte x % 8 of the little-endian 64-bit word
 *     w(x / 8) = payload_seed(key, chan, msg) + (x / 8) * PAYLOAD_STEP
 * PAYLOAD_STEP is odd, so no two words of one message are equal (2^64
 * words apart at the least); the seed is a splitmix64 mix of the three, so
 * two messages' words coincide only by a 2^-64 chance. The offset is the
 * one the receiver checks at: within the message for a Send, within the
 * channel's region for a Write or Read (what makes those positional).
 */
#ifndef UBPERF_PAYLOAD_H
#define UBPERF_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PAYLOAD_STEP	0x9E3779B97F4A7C15ull	/* 2^64 / golden ratio, odd */

uint64_t payload_seed(uint32_t key, uint32_t chan, uint64_t msg);
/* p[0 .. len) = the bytes at offsets off .. off + len of the message seed names. */
void payload_fill(uint8_t *p, size_t len, uint64_t seed, uint64_t off);
/* p[0 .. len) hold exactly those bytes? */
bool payload_check(const uint8_t *p, size_t len, uint64_t seed, uint64_t off);

/*
 * A message (a Send, or a Write) at offset off of where it lands (0 for a
 * Send; a Write: its slot's offset in the channel's region): its number n,
 * little-endian, in bytes 0..7, then the keyed payload of (key, chan, n) at
 * offsets off + 8 ... A message shorter than 8 bytes has no number: its
 * bytes are the payload of message 0.
 */
#define PAYLOAD_HDR	8
void payload_msg_fill(uint8_t *m, size_t size, uint32_t key, uint32_t chan, uint64_t n,
		      uint64_t off);
/* The message's bytes are right for the number it carries (*n; 0 without one). */
bool payload_msg_check(const uint8_t *m, size_t size, uint32_t key, uint32_t chan, uint64_t off,
		       uint64_t *n);

/* Reads fetch channel chan's region filled as the payload of this message, at region offsets. */
#define PAYLOAD_READ_MSG	UINT64_MAX

/*
 * A Write region as the run left it: chans parts of slots slots of size
 * bytes each; channel c's slot s at (c * slots + s) * size, its message at
 * offset s * size of the channel's part. Every slot must be untouched (all
 * zero: empty) or the last message written there: of its channel, for its
 * slot's offset, numbered below nmsg (the Writes posted; numbered across
 * the run), no number twice. verified: the bytes of the slots that are.
 * -1 when out of memory.
 */
struct payload_tally {
	uint64_t verified, corrupt, empty;	/* bytes; slots; slots */
};
int payload_region_check(const uint8_t *region, uint32_t chans, uint32_t slots, size_t size,
			 uint32_t key, uint64_t nmsg, struct payload_tally *t);

#endif
