// SPDX-License-Identifier: BSD-2-Clause
#include "lib/icrc.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef HAVE_ISAL
#include <isa-l/crc.h>
#endif

#include "lib/clock.h"
#include "ub_wire.h"

uint32_t ub_crc32_zlib(uint32_t crc, const void *buf, size_t len)
{
	/* crc32_z: zlib's uInt length would cut buffers past 4 GiB. */
	return (uint32_t)crc32_z(crc, buf, len);
}

#ifdef HAVE_ISAL
/*
 * crc32_gzip_refl inverts on entry and exit exactly like zlib's crc32, so
 * init 0 starts a CRC and a previous result chains (test_icrc checks both).
 */
uint32_t ub_crc32_fast(uint32_t crc, const void *buf, size_t len)
{
	return crc32_gzip_refl(crc, buf, len);
}

const char *ub_crc32_fast_name(void) { return "isa-l"; }
#else
uint32_t ub_crc32_fast(uint32_t crc, const void *buf, size_t len)
{
	return ub_crc32_zlib(crc, buf, len);
}

const char *ub_crc32_fast_name(void) { return "zlib"; }
#endif

/*
 * The backend ub_icrc runs: the faster of the two on this CPU, timed by
 * ub_icrc_init() or else at the first ICRC. ISA-L wins by ~10x on hardware,
 * but where PCLMULQDQ is emulated (qemu TCG, whose -cpu max advertises it)
 * each fold is a helper call and zlib's tables are ~1.7x faster.
 * UBXDP_ICRC_CRC=zlib|isa-l skips the timing. Both give the same CRC, so a
 * race between two first calls is harmless.
 */
static ub_crc32_fn icrc_crc;	/* NULL until chosen */

/* Best of a few interleaved tries, so that one preemption decides nothing. */
static ub_crc32_fn crc32_faster(void)
{
	static const uint8_t buf[2048];
	uint64_t best[2] = { UINT64_MAX, UINT64_MAX };
	volatile uint32_t sink = 0;

	for (int r = 0; r < 5; r++) {
		for (int b = 0; b < 2; b++) {
			uint64_t t = ub_mono_ns();

			sink ^= (b ? ub_crc32_fast : ub_crc32_zlib)(0, buf, sizeof(buf));
			t = ub_mono_ns() - t;
			if (t < best[b])
				best[b] = t;
		}
	}
	(void)sink;
	/* zlib only when clearly faster: the fast backend is the expected one. */
	return best[0] * 5 < best[1] * 4 ? ub_crc32_zlib : ub_crc32_fast;
}

/* Out of line: a program that called ub_icrc_init() never comes here. */
__attribute__((noinline, cold)) static ub_crc32_fn icrc_choose(void)
{
	const char *want = getenv("UBXDP_ICRC_CRC");
	ub_crc32_fn fn;

	if (want && !strcmp(want, "zlib"))
		fn = ub_crc32_zlib;
	else if (want && !strcmp(want, ub_crc32_fast_name()))
		fn = ub_crc32_fast;
	else
		fn = crc32_faster();
	__atomic_store_n(&icrc_crc, fn, __ATOMIC_RELAXED);
	return fn;
}

static inline ub_crc32_fn icrc_backend(void)
{
	ub_crc32_fn fn = __atomic_load_n(&icrc_crc, __ATOMIC_RELAXED);

	return fn ? fn : icrc_choose();
}

const char *ub_icrc_init(void)
{
	return ub_icrc_crc_name();
}

void ub_icrc_use(ub_crc32_fn crc32)
{
	__atomic_store_n(&icrc_crc, crc32, __ATOMIC_RELAXED);
}

const char *ub_icrc_crc_name(void)
{
	return icrc_backend() == ub_crc32_zlib ? "zlib" : ub_crc32_fast_name();
}

/* Largest masked prefix: IPv4 with 40 bytes of options, then UDP. */
#define MASK_MAX (60 + 8)

/* Set [off, off + cnt) of a copy of n bytes to all ones, as far as it goes. */
static void mask(uint8_t *out, size_t n, size_t off, size_t cnt)
{
	for (size_t i = off; i < off + cnt && i < n; i++)
		out[i] = 0xff;
}

/*
 * Copy the IP and UDP headers with the mutable fields set to all ones and
 * return how many bytes were copied. Only the headers are copied: the
 * payload is hashed in place by chaining the CRC, so the cost of the mask
 * does not grow with the packet. A non-IP buffer is hashed unmasked (copy 0).
 */
static size_t masked_headers(const uint8_t *ip, size_t len, uint8_t *out)
{
	size_t hdr, n;

	if (len == 0)
		return 0;
	switch (ip[0] >> 4) {
	case 4:
		hdr = (size_t)(ip[0] & 0x0f) * 4;
		break;
	case 6:
		hdr = 40;
		break;
	default:
		return 0;
	}
	/* Through the UDP checksum, and through the IPv4 checksum even when
	 * a bogus IHL (0 or 1) puts "UDP" inside the fixed header. hdr <= 60. */
	n = hdr + 8 > 12 ? hdr + 8 : 12;
	if (n > len)
		n = len;
	memcpy(out, ip, n);

	if ((ip[0] >> 4) == 4) {
		mask(out, n, 1, 1);	/* ToS: DSCP + ECN */
		mask(out, n, 8, 1);	/* TTL */
		mask(out, n, 10, 2);	/* header checksum */
	} else {
		out[0] |= 0x0f;		/* traffic class, high nibble */
		mask(out, n, 1, 3);	/* traffic class low nibble, flow label */
		mask(out, n, 7, 1);	/* hop limit */
	}
	mask(out, n, hdr + 6, 2);	/* UDP checksum */
	return n;
}

uint32_t ub_icrc_with(ub_crc32_fn crc32, const void *ip, size_t len)
{
	uint8_t hdr[MASK_MAX];
	size_t n = masked_headers(ip, len, hdr);
	uint32_t crc = crc32(0, hdr, n);

	return crc32(crc, (const uint8_t *)ip + n, len - n);
}

/*
 * Fast path, for the two headers every UBoE packet has: IPv4 without options
 * (IHL 5) and IPv6, each followed by UDP. No copy and a single CRC call over
 * the packet in place: the effect of the mask is folded into the CRC's
 * starting value instead.
 *
 * Why that works: with the register R (raw, not inverted), a byte b moves it
 * to F(R) ^ T[b], F(R) = (R >> 8) ^ T[R & 0xff], all linear over GF(2). Over
 * a packet, changing byte p by d changes the register after byte p by T[d]
 * and so the final register exactly as changing the start by F^-(p+1)(T[d])
 * would (F is invertible). The masked ICRC is therefore the plain CRC-32
 * started from init ^ XOR_p U_p[d_p], with d_p = byte ^ masked byte and
 * U_p[d] = F^-(p+1)(T[d]) tabulated at start-up for each masked position.
 * The calls to the fast backend stay one per packet: its short-buffer and
 * tail paths were what made the copied-header version slow at 256 B.
 */
struct mask_pos {
	uint8_t pos, bits;	/* byte offset in the IP packet, bits set by the mask */
};

static const struct mask_pos mask_v4[] = {
	{ 1, 0xff },			/* ToS: DSCP + ECN */
	{ 8, 0xff },			/* TTL */
	{ 10, 0xff }, { 11, 0xff },	/* header checksum */
	{ 26, 0xff }, { 27, 0xff },	/* UDP checksum (IHL 5) */
};
static const struct mask_pos mask_v6[] = {
	{ 0, 0x0f },			/* traffic class high nibble (not the version) */
	{ 1, 0xff }, { 2, 0xff }, { 3, 0xff },	/* traffic class, flow label */
	{ 7, 0xff },			/* hop limit */
	{ 46, 0xff }, { 47, 0xff },	/* UDP checksum */
};
#define NV4 (sizeof(mask_v4) / sizeof(mask_v4[0]))
#define NV6 (sizeof(mask_v6) / sizeof(mask_v6[0]))

static uint32_t u_v4[NV4][256], u_v6[NV6][256];

__attribute__((constructor)) static void icrc_tables_init(void)
{
	uint32_t t[256];
	uint8_t inv_top[256];

	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
		t[i] = c;
		inv_top[c >> 24] = (uint8_t)i;	/* the top bytes of T are a permutation */
	}
	for (int v = 0; v < 2; v++) {
		const struct mask_pos *m = v ? mask_v6 : mask_v4;
		size_t n = v ? NV6 : NV4;

		for (size_t j = 0; j < n; j++) {
			for (uint32_t d = 0; d < 256; d++) {
				uint32_t r = t[d];

				/* F^-1: the top byte of F(R) names R's low byte. */
				for (unsigned k = 0; k <= m[j].pos; k++) {
					uint8_t lo = inv_top[r >> 24];

					r = ((r ^ t[lo]) << 8) | lo;
				}
				(v ? u_v6 : u_v4)[j][d] = r;
			}
		}
	}
}

uint32_t ub_icrc(const void *ip, size_t len)
{
	const uint8_t *p = ip;
	uint32_t r = 0xffffffffu;	/* zlib's start register */

	if (len >= 28 && p[0] == 0x45) {
		/* The common case spelled out: six independent loads. */
		r ^= u_v4[0][p[1] ^ 0xff] ^ u_v4[1][p[8] ^ 0xff] ^ u_v4[2][p[10] ^ 0xff] ^
		     u_v4[3][p[11] ^ 0xff] ^ u_v4[4][p[26] ^ 0xff] ^ u_v4[5][p[27] ^ 0xff];
	} else if (len >= 48 && (p[0] >> 4) == 6) {
		for (size_t j = 0; j < NV6; j++)
			r ^= u_v6[j][(p[mask_v6[j].pos] ^ mask_v6[j].bits) & mask_v6[j].bits];
	} else {
		return ub_icrc_with(icrc_backend(), ip, len);
	}
	/* The backends take the inverted register as their chaining value. */
	return icrc_backend()(~r, p, len);
}

uint32_t ub_icrc_get(const void *ip, size_t len)
{
	const uint8_t *p;

	if (len < UBOE_ICRC_LEN)
		return 0;
	p = (const uint8_t *)ip + len - UBOE_ICRC_LEN;
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void ub_icrc_put(void *ip, size_t len)
{
	uint32_t crc;
	uint8_t *p;

	if (len < UBOE_ICRC_LEN)
		return;
	crc = ub_icrc(ip, len - UBOE_ICRC_LEN);
	p = (uint8_t *)ip + len - UBOE_ICRC_LEN;
	p[0] = (uint8_t)crc;
	p[1] = (uint8_t)(crc >> 8);
	p[2] = (uint8_t)(crc >> 16);
	p[3] = (uint8_t)(crc >> 24);
}

bool ub_icrc_ok(const void *ip, size_t len)
{
	if (len < UBOE_ICRC_LEN)
		return false;
	return ub_icrc(ip, len - UBOE_ICRC_LEN) == ub_icrc_get(ip, len);
}
