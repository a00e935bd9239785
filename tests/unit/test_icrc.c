// SPDX-License-Identifier: BSD-2-Clause
/* ICRC (docs/WIRE.md §2): known answers, backend agreement, masking. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/icrc.h"
#include "lib/frame.h"

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t n = 0;

	for (; hex[0] && hex[1]; hex += 2) {
		unsigned b;

		sscanf(hex, "%2x", &b);
		out[n++] = (uint8_t)b;
	}
	return n;
}

/* Reference: mask a full copy exactly as docs/WIRE.md §2 says, then one zlib call. */
static uint32_t ref_icrc(const uint8_t *ip, size_t len)
{
	uint8_t *b = malloc(len ? len : 1);
	size_t udp;
	uint32_t crc;

	memcpy(b, ip, len);
#define SET(i) do { if ((i) < len) b[i] = 0xff; } while (0)
	if (len && ip[0] >> 4 == 4) {
		udp = (size_t)(ip[0] & 0xf) * 4;
		SET(1); SET(8); SET(10); SET(11);
		SET(udp + 6); SET(udp + 7);
	} else if (len && ip[0] >> 4 == 6) {
		b[0] |= 0x0f;
		SET(1); SET(2); SET(3); SET(7);
		SET(46); SET(47);
	}
#undef SET
	crc = (uint32_t)crc32(0, b, (uInt)len);
	free(b);
	return crc;
}

/* Known answers from tests/scapy/ublayers.py (zlib.crc32 over the masked bytes). */
static const struct {
	const char *name, *hex;
	uint32_t icrc;
} kat[] = {
	{ "uboe-v4 RTP Send 'hello, UB' ecn 2 dscp 10",
	  "452a004100004000401126800a0000010a000002123412b8002d0000010000012300045600"
	  "00000500000000000000000000000068656c6c6f2c205542182ddf29", 0x29df2d18 },
	{ "uboe-v6 RTP Message 20 bytes ecn 1 dscp 46 hlim 3",
	  "6b90000000381103fd000000000000000000000000000001fd00000000000000000000000000"
	  "0002123412b800380000010000000000000000abcdef000000001000000000000000000102030405"
	  "060708090a0b0c0d0e0f10111213328aa614", 0x14a68a32 },
};

static void test_crc32_check_value(void **state)
{
	(void)state;
	/* The CRC-32/IEEE catalogue check value. */
	assert_int_equal(ub_crc32_zlib(0, "123456789", 9), 0xcbf43926);
	assert_int_equal(ub_crc32_fast(0, "123456789", 9), 0xcbf43926);
	assert_int_equal(ub_crc32_zlib(0, "", 0), 0);
	assert_int_equal(ub_crc32_fast(0, "", 0), 0);
	/* Chaining: "1234" then "56789" is the CRC of the whole. */
	assert_int_equal(ub_crc32_fast(ub_crc32_fast(0, "1234", 4), "56789", 5), 0xcbf43926);
	assert_int_equal(ub_crc32_zlib(ub_crc32_zlib(0, "1234", 4), "56789", 5), 0xcbf43926);
	print_message("# crc32 fast backend: %s\n", ub_crc32_fast_name());
}

static void test_backends_agree(void **state)
{
	size_t max = 1 << 20;
	uint8_t *buf = malloc(max + 64);
	unsigned seed = 1;

	(void)state;
	for (size_t i = 0; i < max + 64; i++)
		buf[i] = (uint8_t)rand_r(&seed);
	/* Every length to 4 KiB at several alignments, then some large ones. */
	for (size_t len = 0; len <= 4096; len++) {
		size_t off = len % 17;
		uint32_t z = ub_crc32_zlib(0, buf + off, len);

		if (ub_crc32_fast(0, buf + off, len) != z)
			fail_msg("crc32 backends differ at len %zu off %zu", len, off);
		/* Chaining across a split point, mixing the backends. */
		size_t cut = len ? (size_t)rand_r(&seed) % len : 0;
		uint32_t a = ub_crc32_fast(0, buf + off, cut);

		assert_int_equal(ub_crc32_fast(a, buf + off + cut, len - cut), z);
		assert_int_equal(ub_crc32_zlib(a, buf + off + cut, len - cut), z);
		a = ub_crc32_zlib(0, buf + off, cut);
		assert_int_equal(ub_crc32_fast(a, buf + off + cut, len - cut), z);
	}
	for (size_t len = 8192; len <= max; len *= 2) {
		assert_int_equal(ub_crc32_fast(0, buf + 3, len), ub_crc32_zlib(0, buf + 3, len));
		assert_int_equal(ub_crc32_fast(0, buf, len - 1), ub_crc32_zlib(0, buf, len - 1));
	}
	/* Non-zero seeds that are not a previous result still chain the same. */
	for (uint32_t s = 1; s < 1000000; s = s * 7 + 1)
		assert_int_equal(ub_crc32_fast(s, buf, 100), ub_crc32_zlib(s, buf, 100));
	free(buf);
}

static void test_known_answers(void **state)
{
	uint8_t pkt[256];

	(void)state;
	for (size_t i = 0; i < sizeof(kat) / sizeof(kat[0]); i++) {
		size_t n = unhex(kat[i].hex, pkt);

		print_message("# %s\n", kat[i].name);
		assert_int_equal(ub_icrc(pkt, n - 4), kat[i].icrc);
		assert_int_equal(ub_icrc_with(ub_crc32_zlib, pkt, n - 4), kat[i].icrc);
		assert_int_equal(ub_icrc_get(pkt, n), kat[i].icrc);
		assert_true(ub_icrc_ok(pkt, n));
		/* LSB first on the wire. */
		assert_int_equal(pkt[n - 4], kat[i].icrc & 0xff);
		assert_int_equal(pkt[n - 1], kat[i].icrc >> 24);
		memset(pkt + n - 4, 0, 4);
		assert_false(ub_icrc_ok(pkt, n));
		ub_icrc_put(pkt, n);
		assert_int_equal(ub_icrc_get(pkt, n), kat[i].icrc);
	}
}

static size_t build(uint8_t *buf, size_t cap, int ver, size_t payload_len)
{
	static uint8_t payload[2000];
	struct ub_pkt_spec s;
	size_t n;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13 + 5);
	ub_pkt_spec_init(&s);
	s.ip_ver = (uint8_t)ver;
	s.src_ip[0] = 10;
	s.dst_ip[0] = 11;
	s.ecn = ECN_ECT0;
	s.dscp = 26;
	s.flow_label = 0x12345;
	s.payload = payload;
	s.payload_len = payload_len;
	n = ub_build_uboe(&s, buf, cap);
	assert_true(n > 0);
	return n;
}

/*
 * Flip every bit of IP header .. payload in turn: the ICRC must stay valid
 * exactly for the masked bits and break for every other one.
 */
static void check_mask(int ver, const uint8_t *masked_bits /* [48] bitmasks */)
{
	uint8_t buf[256];
	size_t n = build(buf, sizeof(buf), ver, 19), l2 = 14;
	uint8_t *ip = buf + l2;
	size_t ip_len = n - l2;

	assert_true(ub_icrc_ok(ip, ip_len));
	for (size_t i = 0; i < ip_len - 4; i++) {
		for (int bit = 0; bit < 8; bit++) {
			uint8_t m = (uint8_t)(1u << bit);
			bool masked = i < 48 && (masked_bits[i] & m);

			ip[i] ^= m;
			if (ub_icrc_ok(ip, ip_len) != masked)
				fail_msg("IPv%d byte %zu bit %d: ICRC %s", ver, i, bit,
					 masked ? "broken by a masked bit" : "blind to an unmasked bit");
			ip[i] ^= m;
		}
	}
	/* The stored ICRC itself is not masked. */
	for (size_t i = ip_len - 4; i < ip_len; i++) {
		ip[i] ^= 0x10;
		assert_false(ub_icrc_ok(ip, ip_len));
		ip[i] ^= 0x10;
	}
}

static void test_mask_ipv4(void **state)
{
	uint8_t m[48] = { 0 };

	(void)state;
	m[1] = 0xff;			/* ToS */
	m[8] = 0xff;			/* TTL */
	m[10] = m[11] = 0xff;		/* header checksum */
	m[26] = m[27] = 0xff;		/* UDP checksum */
	check_mask(4, m);
}

static void test_mask_ipv6(void **state)
{
	uint8_t m[48] = { 0 };

	(void)state;
	m[0] = 0x0f;			/* traffic class high nibble, not the version */
	m[1] = m[2] = m[3] = 0xff;	/* traffic class low nibble, flow label */
	m[7] = 0xff;			/* hop limit */
	m[46] = m[47] = 0xff;		/* UDP checksum */
	check_mask(6, m);
}

/* Masking a header copy and chaining equals masking a full copy, for all sizes. */
static void chained_equals_reference(void)
{
	static uint8_t buf[2100];
	unsigned seed = 7;

	for (int ver = 4; ver <= 6; ver += 2) {
		for (size_t pl = 0; pl <= 1500; pl += (pl < 64 ? 1 : 37)) {
			size_t n = build(buf, sizeof(buf), ver, pl);
			uint8_t *ip = buf + 14;

			/* Random mutable fields, as a switch on the path would leave them. */
			if (ver == 4) {
				ip[1] = (uint8_t)rand_r(&seed);
				ip[8] = (uint8_t)rand_r(&seed);
			} else {
				ip[1] = (uint8_t)rand_r(&seed);
				ip[7] = (uint8_t)rand_r(&seed);
			}
			assert_int_equal(ub_icrc(ip, n - 14 - 4), ref_icrc(ip, n - 14 - 4));
			assert_true(ub_icrc_ok(ip, n - 14));
		}
	}
	/* Random buffers of every short length, IPv4 (with any IHL) and IPv6 alike. */
	for (size_t len = 0; len < 200; len++) {
		for (int k = 0; k < 20; k++) {
			for (size_t i = 0; i < len; i++)
				buf[i] = (uint8_t)rand_r(&seed);
			if (len && k % 2)
				buf[0] = (uint8_t)((k % 4 == 1 ? 0x40 : 0x60) | (buf[0] & 0x0f));
			uint8_t copy[200];

			memcpy(copy, buf, len);
			assert_int_equal(ub_icrc(buf, len), ref_icrc(buf, len));
			assert_memory_equal(copy, buf, len);	/* input left alone */
		}
	}
	/* The in-place fast path (IHL 5 and IPv6) on random contents, every length. */
	for (size_t len = 0; len < 300; len++) {
		for (int k = 0; k < 16; k++) {
			for (size_t i = 0; i < len; i++)
				buf[i] = (uint8_t)rand_r(&seed);
			if (len)
				buf[0] = k % 2 ? 0x45 : (uint8_t)(0x60 | (buf[0] & 0x0f));
			assert_int_equal(ub_icrc(buf, len), ref_icrc(buf, len));
			assert_int_equal(ub_icrc(buf, len), ub_icrc_with(ub_crc32_zlib, buf, len));
		}
	}
}

/* ub_icrc runs whichever backend is faster here: each must give the reference. */
static void test_chained_equals_reference(void **state)
{
	static const ub_crc32_fn fns[] = { ub_crc32_zlib, ub_crc32_fast };

	(void)state;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		ub_icrc_use(fns[i]);
		print_message("# ub_icrc with %s\n", ub_icrc_crc_name());
		chained_equals_reference();
	}
	ub_icrc_use(NULL);
}

/* The choice: timed when not forced, and the environment forces it. */
static void test_backend_choice(void **state)
{
	const char *name;

	(void)state;
	unsetenv("UBXDP_ICRC_CRC");
	ub_icrc_use(NULL);
	name = ub_icrc_crc_name();
	print_message("# ub_icrc picked %s on this CPU\n", name);
	assert_true(!strcmp(name, "zlib") || !strcmp(name, ub_crc32_fast_name()));
	setenv("UBXDP_ICRC_CRC", "zlib", 1);
	ub_icrc_use(NULL);
	assert_string_equal(ub_icrc_crc_name(), "zlib");
	setenv("UBXDP_ICRC_CRC", ub_crc32_fast_name(), 1);
	ub_icrc_use(NULL);
	assert_string_equal(ub_icrc_crc_name(), ub_crc32_fast_name());
	unsetenv("UBXDP_ICRC_CRC");
	ub_icrc_use(NULL);
}

/*
 * ub_icrc_init() chooses once, as the environment says: later inits and every
 * ICRC keep that choice (the environment changed afterwards has no say).
 * Without an init the first ICRC chooses, and an init after it keeps that.
 */
static void test_init_chooses_once(void **state)
{
	const char *first[] = { "zlib", ub_crc32_fast_name() };
	const char *then[] = { ub_crc32_fast_name(), "zlib" };
	uint8_t pkt[256];
	size_t n = unhex(kat[0].hex, pkt);

	(void)state;
	print_message("# the fast backend here: %s\n", ub_crc32_fast_name());
	for (int i = 0; i < 2; i++) {
		setenv("UBXDP_ICRC_CRC", first[i], 1);
		ub_icrc_use(NULL);
		assert_string_equal(ub_icrc_init(), first[i]);
		setenv("UBXDP_ICRC_CRC", then[i], 1);
		assert_string_equal(ub_icrc_init(), first[i]);
		assert_true(ub_icrc_ok(pkt, n));
		assert_string_equal(ub_icrc_crc_name(), first[i]);
	}
	setenv("UBXDP_ICRC_CRC", "zlib", 1);
	ub_icrc_use(NULL);
	assert_true(ub_icrc_ok(pkt, n));
	setenv("UBXDP_ICRC_CRC", ub_crc32_fast_name(), 1);
	assert_string_equal(ub_icrc_init(), "zlib");
	unsetenv("UBXDP_ICRC_CRC");
	ub_icrc_use(NULL);
}

static void test_short_buffers(void **state)
{
	uint8_t b[4] = { 1, 2, 3, 4 };

	(void)state;
	assert_int_equal(ub_icrc_get(b, 3), 0);
	assert_false(ub_icrc_ok(b, 0));
	assert_false(ub_icrc_ok(b, 3));
	/* Four bytes: ICRC of nothing is 0, stored 0x04030201. */
	assert_false(ub_icrc_ok(b, 4));
	memset(b, 0, 4);
	assert_true(ub_icrc_ok(b, 4));
	ub_icrc_put(b, 3);	/* too short: must not write */
	assert_int_equal(b[0] | b[1] | b[2] | b[3], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32_check_value),
		cmocka_unit_test(test_backends_agree),
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_mask_ipv4),
		cmocka_unit_test(test_mask_ipv6),
		cmocka_unit_test(test_chained_equals_reference),
		cmocka_unit_test(test_short_buffers),
		cmocka_unit_test(test_backend_choice),
		cmocka_unit_test(test_init_chooses_once),
	};

	return cmocka_run_group_tests_name("icrc", tests, NULL, NULL);
}
