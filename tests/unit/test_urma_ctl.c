// SPDX-License-Identifier: BSD-2-Clause
/*
 * liburma's OPEN and OPEN_ACK say how far past a hole the peer may send
 * (byte 11, CTL_RX_RANGE, user/urma/ctl.c): a message of a library before
 * the span, the same length with zero there, reads as the default range
 * (the peer then sends as an older one did), and the byte is one an older
 * library sent as zero and never read. So is the last word, where an
 * accepting OPEN_ACK names its channel's nonce.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "transport/tp.h"
#include "urma/ctl.h"

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* An OPEN_ACK as a library before the span wrote it, from the layout of
 * docs/WIRE.md §7.3 by hand: byte 11 and the last word zero. */
static void old_open_ack(uint8_t *b)
{
	memset(b, 0, CTL_LEN);
	memcpy(b, "URMA", 4);
	b[4] = 1;			/* version */
	b[5] = 4;			/* OPEN_ACK */
	b[7] = 1;			/* mode */
	b[9] = 2;			/* order */
	b[10] = 1;			/* RC */
	b[12] = 0x10, b[13] = 0x00;	/* MTU 4096 */
	b[14] = 0x01, b[15] = 0x00;	/* depth 256 */
	be32(b + 16, 0xdeadbeef);	/* nonce */
	b[20 + 10] = 0xff, b[20 + 11] = 0xff, b[20 + 12] = 10, b[20 + 15] = 2;	/* ::ffff:10.0.0.2 */
	be32(b + 36, 5);		/* source UASID, jetty */
	be32(b + 40, 1100);
	b[44 + 10] = 0xff, b[44 + 11] = 0xff, b[44 + 12] = 10, b[44 + 15] = 1;
	be32(b + 60, 6);
	be32(b + 64, 1200);
	be32(b + 68, 0xacfe);		/* token */
}

static void older_peer_reads_as_the_default(void **state)
{
	static const uint8_t unknown[] = { 6, 7, 12, 20, 255 };
	uint8_t b[CTL_LEN];
	struct ubx_ctl m;

	(void)state;
	old_open_ack(b);
	assert_int_equal(ubx_ctl_decode(b, sizeof(b), &m), 0);
	assert_int_equal(m.rx_range, TP_OOO_RANGE_DEFAULT);
	assert_int_equal(m.kind, CTL_OPEN_ACK);
	assert_int_equal(m.mtu, 4096);
	assert_int_equal(m.src.id, 1100);
	assert_int_equal(m.dst.id, 1200);
	assert_int_equal(m.token, 0xacfe);
	for (size_t i = 0; i < sizeof(unknown); i++) {	/* no range we know: the default too */
		b[CTL_RX_RANGE] = unknown[i];
		assert_int_equal(ubx_ctl_decode(b, sizeof(b), &m), 0);
		assert_int_equal(m.rx_range, TP_OOO_RANGE_DEFAULT);
	}
}

/* An OPEN makes a channel at the MTU it offers: one no channel can take
 * (not a power of two in 256..4096) is not read, as a malformed message. */
static void open_of_no_ub_mtu_unread(void **state)
{
	static const uint16_t bad[] = { 0, 128, 255, 300, 3000, 4095, 8192, 65535 };
	uint8_t b[CTL_LEN];
	struct ubx_ctl m;

	(void)state;
	old_open_ack(b);
	b[5] = CTL_OPEN;
	for (uint32_t mtu = 256; mtu <= 4096; mtu <<= 1) {
		b[12] = (uint8_t)(mtu >> 8), b[13] = (uint8_t)mtu;
		assert_int_equal(ubx_ctl_decode(b, sizeof(b), &m), 0);
		assert_int_equal(m.mtu, mtu);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b[12] = (uint8_t)(bad[i] >> 8), b[13] = (uint8_t)bad[i];
		assert_int_equal(ubx_ctl_decode(b, sizeof(b), &m), -EINVAL);
	}
	b[5] = CTL_OPEN_ACK;	/* a refusal's MTU is judged where it is read */
	assert_int_equal(ubx_ctl_decode(b, sizeof(b), &m), 0);
}

static void range_in_the_reserved_byte(void **state)
{
	uint8_t b[CTL_LEN], old[CTL_LEN];
	struct ubx_ctl m, d;

	(void)state;
	old_open_ack(old);
	assert_int_equal(ubx_ctl_decode(old, sizeof(old), &m), 0);
	for (uint32_t range = 256; range <= 2048; range <<= 1) {
		m.rx_range = range;
		assert_int_equal(ubx_ctl_encode(&m, b), CTL_LEN);
		/* the default says nothing: an older library's bytes */
		assert_int_equal(b[CTL_RX_RANGE], range == 256 ? 0 : __builtin_ctz(range));
		assert_int_equal(ubx_ctl_decode(b, sizeof(b), &d), 0);
		assert_int_equal(d.rx_range, range);
		/* every other byte as before: what an older library reads */
		b[CTL_RX_RANGE] = 0;
		assert_memory_equal(b, old, sizeof(b));
	}
	m.rx_range = 0;		/* a PROBE, a refusal: no channel, nothing said */
	assert_int_equal(ubx_ctl_encode(&m, b), CTL_LEN);
	assert_memory_equal(b, old, sizeof(b));
}

/* An accepting OPEN_ACK names its channel's nonce in the last word (a
 * reopened peer channel with the same TPN is told by it); an older
 * library's zero there reads as none. */
static void acker_nonce_in_the_last_word(void **state)
{
	uint8_t b[CTL_LEN], old[CTL_LEN];
	struct ubx_ctl m;

	(void)state;
	old_open_ack(old);
	assert_int_equal(ubx_ctl_decode(old, sizeof(old), &m), 0);
	assert_int_equal(m.chan_nonce, 0);
	m.chan_nonce = 0x8badf00d;
	assert_int_equal(ubx_ctl_encode(&m, b), CTL_LEN);
	assert_memory_equal(b + 72, "\x8b\xad\xf0\x0d", 4);
	assert_memory_equal(b, old, 72);	/* all else as an older library reads it */
	assert_int_equal(ubx_ctl_decode(b, sizeof(b), &m), 0);
	assert_int_equal(m.chan_nonce, 0x8badf00d);
	assert_int_equal(m.nonce, 0xdeadbeef);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(older_peer_reads_as_the_default),
		cmocka_unit_test(range_in_the_reserved_byte),
		cmocka_unit_test(open_of_no_ub_mtu_unread),
		cmocka_unit_test(acker_nonce_in_the_last_word),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
