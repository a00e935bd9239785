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

#endif
