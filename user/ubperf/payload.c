// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubperf's keyed message bytes (payload.h), its messages (a number, then the
 * payload) and the check of a Write region. A word at a time, with the bytes
 * before the first whole word and after the last one done singly: a byte
 * loop cost about a millisecond per 64 KiB message under qemu TCG (the
 * Soft-RoCE bench runs ubperf there), and every byte is filled by the
 * sender and checked by the receiver.
 */
#include "ubperf/payload.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64's finalizer: every input bit moves about half the output bits. */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Chained, not XORed together: (key, chan, msg) and a permutation of it differ. */
uint64_t payload_seed(uint32_t key, uint32_t chan, uint64_t msg)
{
	return mix(mix(mix((uint64_t)key + PAYLOAD_STEP) + chan) + msg);
}

static uint64_t word_at(uint64_t seed, uint64_t w)
{
	return seed + w * PAYLOAD_STEP;
}

static uint8_t byte_at(uint64_t seed, uint64_t x)
{
	return (uint8_t)(word_at(seed, x / 8) >> (x % 8 * 8));
}

/* Bytes before offset off reaches a word boundary, within len. */
static size_t head_len(uint64_t off, size_t len)
{
	size_t h = (8 - off % 8) % 8;

	return h < len ? h : len;
}

void payload_fill(uint8_t *p, size_t len, uint64_t seed, uint64_t off)
{
	size_t i = head_len(off, len);
	uint64_t w;

	for (size_t j = 0; j < i; j++)
		p[j] = byte_at(seed, off + j);
	for (w = word_at(seed, (off + i) / 8); len - i >= 8; i += 8, w += PAYLOAD_STEP) {
		uint64_t le = htole64(w);

		memcpy(p + i, &le, 8);
	}
	for (; i < len; i++)
		p[i] = byte_at(seed, off + i);
}

#define CHECK_BLOCK 64	/* words compared before looking at the difference */

bool payload_check(const uint8_t *p, size_t len, uint64_t seed, uint64_t off)
{
	size_t i = head_len(off, len);
	uint64_t w;

	for (size_t j = 0; j < i; j++)
		if (p[j] != byte_at(seed, off + j))
			return false;
	w = word_at(seed, (off + i) / 8);
	while (len - i >= 8) {
		size_t n = (len - i) / 8 < CHECK_BLOCK ? (len - i) / 8 : CHECK_BLOCK;
		uint64_t diff = 0;

		/* No branch per word: the differences are ORed over a block. */
		for (size_t k = 0; k < n; k++, i += 8, w += PAYLOAD_STEP) {
			uint64_t le;

			memcpy(&le, p + i, 8);
			diff |= le64toh(le) ^ w;
		}
		if (diff)
			return false;
	}
	for (; i < len; i++)
		if (p[i] != byte_at(seed, off + i))
			return false;
	return true;
}

void payload_msg_fill(uint8_t *m, size_t size, uint32_t key, uint32_t chan, uint64_t n,
		      uint64_t off)
{
	uint64_t le = htole64(n);

	if (size < PAYLOAD_HDR) {
		payload_fill(m, size, payload_seed(key, chan, 0), off);
		return;
	}
	memcpy(m, &le, PAYLOAD_HDR);
	payload_fill(m + PAYLOAD_HDR, size - PAYLOAD_HDR, payload_seed(key, chan, n),
		     off + PAYLOAD_HDR);
}

bool payload_msg_check(const uint8_t *m, size_t size, uint32_t key, uint32_t chan, uint64_t off,
		       uint64_t *n)
{
	uint64_t le;

	*n = 0;
	if (size < PAYLOAD_HDR)
		return payload_check(m, size, payload_seed(key, chan, 0), off);
	memcpy(&le, m, PAYLOAD_HDR);
	*n = le64toh(le);
	return payload_check(m + PAYLOAD_HDR, size - PAYLOAD_HDR, payload_seed(key, chan, *n),
			     off + PAYLOAD_HDR);
}

static bool all_zero(const uint8_t *p, size_t len)
{
	return !len || (!p[0] && !memcmp(p, p + 1, len - 1));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int payload_region_check(const uint8_t *region, uint32_t chans, uint32_t slots, size_t size,
			 uint32_t key, uint64_t nmsg, struct payload_tally *t)
{
	size_t nslots = (size_t)chans * slots, nnum = 0;
	bool numbered = size >= PAYLOAD_HDR;
	uint64_t *num = malloc((nslots ? nslots : 1) * sizeof(*num));

	if (!num)
		return -1;
	memset(t, 0, sizeof(*t));
	for (uint32_t c = 0; c < chans; c++) {
		for (uint32_t s = 0; s < slots; s++) {
			const uint8_t *m = region + ((size_t)c * slots + s) * size;
			uint64_t n;

			if (all_zero(m, size)) {
				t->empty++;
			} else if (!payload_msg_check(m, size, key, c, (uint64_t)s * size, &n) ||
				   (numbered && n >= nmsg)) {
				t->corrupt++;
			} else {
				t->verified += size;
				num[nnum++] = n;
			}
		}
	}
	/* Each Write has its own number: one in two slots was sent twice. */
	qsort(num, nnum, sizeof(*num), cmp_u64);
	for (size_t i = 1; numbered && i < nnum; i++) {
		if (num[i] == num[i - 1]) {
			t->corrupt++;
			t->verified -= size;
		}
	}
	free(num);
	return 0;
}
