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
#ifdef __x86_64__
#include <immintrin.h>
#endif
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

#define CHECK_BLOCK 64	/* words compared before looking at the difference */

/*
 * The whole words, 8 at a time in two AVX2 registers where the CPU has
 * them: every byte of a Send is filled by the sender and checked by the
 * receiver, and a word at a time took 4.3 us to fill or check 64 KiB in the
 * L2 of this EPYC, 0.8-1.4 us this way (bench/README.md, the jumbo section).
 * The lanes hold the words in order, so only a little-endian host takes
 * this path; what it leaves goes a word at a time.
 */
#if defined(__x86_64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define VEC_WORDS	8

static bool has_avx2(void)
{
	static int have = -1;	/* a race writes the same answer */

	if (have < 0)
		have = __builtin_cpu_supports("avx2");
	return have;
}

__attribute__((target("avx2"))) static void vec_start(uint64_t w, __m256i *a, __m256i *b, __m256i *step)
{
	*a = _mm256_set_epi64x((long long)(w + 3 * PAYLOAD_STEP), (long long)(w + 2 * PAYLOAD_STEP),
			       (long long)(w + PAYLOAD_STEP), (long long)w);
	*b = _mm256_add_epi64(*a, _mm256_set1_epi64x((long long)(4 * PAYLOAD_STEP)));
	*step = _mm256_set1_epi64x((long long)(VEC_WORDS * PAYLOAD_STEP));
}

/* Words w, w + STEP, ... at p, whole groups of 8 within nw; returns the words filled. */
__attribute__((target("avx2"))) static size_t fill_words_avx2(uint8_t *p, size_t nw, uint64_t w)
{
	__m256i a, b, step;
	size_t i = 0;

	vec_start(w, &a, &b, &step);
	for (; nw - i >= VEC_WORDS; i += VEC_WORDS) {
		_mm256_storeu_si256((__m256i *)(p + i * 8), a);
		_mm256_storeu_si256((__m256i *)(p + i * 8 + 32), b);
		a = _mm256_add_epi64(a, step);
		b = _mm256_add_epi64(b, step);
	}
	return i;
}

/* As fill_words, compared: the words that matched, *bad when one did not
 * (differences ORed over a block of CHECK_BLOCK words before one test). */
__attribute__((target("avx2"))) static size_t check_words_avx2(const uint8_t *p, size_t nw, uint64_t w, bool *bad)
{
	__m256i a, b, step;
	size_t i = 0;

	vec_start(w, &a, &b, &step);
	while (nw - i >= VEC_WORDS) {
		__m256i diff = _mm256_setzero_si256();

		for (int k = 0; k < CHECK_BLOCK / VEC_WORDS && nw - i >= VEC_WORDS; k++, i += VEC_WORDS) {
			diff = _mm256_or_si256(diff, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(p + i * 8)), a));
			diff = _mm256_or_si256(diff,
					       _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(p + i * 8 + 32)), b));
			a = _mm256_add_epi64(a, step);
			b = _mm256_add_epi64(b, step);
		}
		if (!_mm256_testz_si256(diff, diff)) {
			*bad = true;
			return i;
		}
	}
	return i;
}

/* The test outside the AVX2 code, which the compiler may start with AVX
 * instructions before any test inside it. */
static size_t fill_words(uint8_t *p, size_t nw, uint64_t w)
{
	return has_avx2() ? fill_words_avx2(p, nw, w) : 0;
}

static size_t check_words(const uint8_t *p, size_t nw, uint64_t w, bool *bad)
{
	return has_avx2() ? check_words_avx2(p, nw, w, bad) : 0;
}
#else
static size_t fill_words(uint8_t *p, size_t nw, uint64_t w)
{
	(void)p, (void)nw, (void)w;
	return 0;
}

static size_t check_words(const uint8_t *p, size_t nw, uint64_t w, bool *bad)
{
	(void)p, (void)nw, (void)w, (void)bad;
	return 0;
}
#endif

void payload_fill(uint8_t *p, size_t len, uint64_t seed, uint64_t off)
{
	size_t i = head_len(off, len), nw;
	uint64_t w;

	for (size_t j = 0; j < i; j++)
		p[j] = byte_at(seed, off + j);
	w = word_at(seed, (off + i) / 8);
	nw = fill_words(p + i, (len - i) / 8, w);
	i += nw * 8;
	for (w += nw * PAYLOAD_STEP; len - i >= 8; i += 8, w += PAYLOAD_STEP) {
		uint64_t le = htole64(w);

		memcpy(p + i, &le, 8);
	}
	for (; i < len; i++)
		p[i] = byte_at(seed, off + i);
}

bool payload_check(const uint8_t *p, size_t len, uint64_t seed, uint64_t off)
{
	size_t i = head_len(off, len), nw;
	bool bad = false;
	uint64_t w;

	for (size_t j = 0; j < i; j++)
		if (p[j] != byte_at(seed, off + j))
			return false;
	w = word_at(seed, (off + i) / 8);
	nw = check_words(p + i, (len - i) / 8, w, &bad);
	if (bad)
		return false;
	i += nw * 8;
	w += nw * PAYLOAD_STEP;
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
