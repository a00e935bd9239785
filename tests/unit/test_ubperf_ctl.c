// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubperf's setup answer says how far past a hole the client may send
 * (UBPF_ANS_RX_RANGE, user/ubperf/ctl.c): an older server's answer, the
 * same length with zero there, reads as the default range (the client then
 * sends as an older client did), and the byte is one an older client
 * ignores (the answer's path padding). So is UBPF_ANS_MTU_OWN, whether a
 * refused MTU is the server's default: an older server's zero, or a byte
 * other than 1 (a peer's reserved bits), is a refusal that stands.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ubperf/ctl.h"
#include "ubperf_wire.h"

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* An answer as an older server wrote it: the offsets of headers/ubperf_wire.h, by hand. */
static void old_answer(uint8_t *b)
{
	memset(b, 0, UBPF_ANS_LEN);
	be32(b + UBPF_OFF_MAGIC, UBPERF_MAGIC);
	be32(b + UBPF_OFF_KIND, CTL_SETUP);
	be32(b + UBPF_OFF_RUN, 0x1234);
	be32(b + UBPF_OFF_INDEX, 2);
	be32(b + UBPF_ANS_TOKEN, 7);
	b[UBPF_ANS_PATH_VER] = 4;
	b[UBPF_ANS_PATH_IP] = 10;
	be32(b + UBPF_ANS_TOKEN_VALUE, 0xabcd);
}

static void older_server_reads_as_the_default(void **state)
{
	uint8_t b[UBPF_ANS_LEN];
	struct ctl_msg m;

	(void)state;
	old_answer(b);
	assert_int_equal(ctl_decode(b, sizeof(b), true, &m), 0);
	assert_int_equal(m.u.ans.rx_range, TP_OOO_RANGE_DEFAULT);
	assert_int_equal(m.u.ans.token_value, 0xabcd);
	/* no range we know: the default too; 7 and 12 are the codes just
	 * past 256 and 2048 (no range is below the window, and no window
	 * below 256), so a wider check in the decoder fails here */
	for (uint32_t i = 0; i < 3; i++) {
		static const uint8_t unknown[] = { 7, 12, 20 };

		b[UBPF_ANS_RX_RANGE] = unknown[i];
		assert_int_equal(ctl_decode(b, sizeof(b), true, &m), 0);
		assert_int_equal(m.u.ans.rx_range, TP_OOO_RANGE_DEFAULT);
	}
}

static void range_in_the_path_padding(void **state)
{
	uint8_t b[UBPF_ANS_LEN], old[UBPF_ANS_LEN];
	struct ctl_msg m, d;

	(void)state;
	old_answer(old);
	assert_int_equal(ctl_decode(old, sizeof(old), true, &m), 0);
	for (uint32_t range = 256; range <= 2048; range <<= 1) {
		m.u.ans.rx_range = range;
		assert_int_equal(ctl_encode(&m, true, b, sizeof(b)), UBPF_ANS_LEN);
		assert_int_equal(b[UBPF_ANS_RX_RANGE], __builtin_ctz(range));
		/* every other byte as before: what an older client reads */
		b[UBPF_ANS_RX_RANGE] = 0;
		assert_memory_equal(b, old, sizeof(b));
		b[UBPF_ANS_RX_RANGE] = (uint8_t)__builtin_ctz(range);
		assert_int_equal(ctl_decode(b, sizeof(b), true, &d), 0);
		assert_int_equal(d.u.ans.rx_range, range);
	}
	assert_true(UBPF_ANS_RX_RANGE > UBPF_ANS_PATH_VER && UBPF_ANS_RX_RANGE < UBPF_ANS_PATH_IP);
}

static void mtu_default_in_the_path_padding(void **state)
{
	uint8_t b[UBPF_ANS_LEN], old[UBPF_ANS_LEN];
	struct ctl_msg m, d;

	(void)state;
	old_answer(old);
	assert_int_equal(ctl_decode(old, sizeof(old), true, &m), 0);
	assert_false(m.u.ans.mtu_default);
	m.u.ans.status = EMSGSIZE;
	m.u.ans.mtu_default = true;
	assert_int_equal(ctl_encode(&m, true, b, sizeof(b)), UBPF_ANS_LEN);
	assert_int_equal(b[UBPF_ANS_MTU_OWN], 1);
	assert_int_equal(ctl_decode(b, sizeof(b), true, &d), 0);
	assert_true(d.u.ans.mtu_default);
	/* every other byte as before (the range: the test above's) */
	b[UBPF_ANS_MTU_OWN] = 0;
	b[UBPF_ANS_RX_RANGE] = 0;
	be32(old + UBPF_ANS_STATUS, EMSGSIZE);
	assert_memory_equal(b, old, sizeof(b));
	b[UBPF_ANS_MTU_OWN] = 0xa5;
	assert_int_equal(ctl_decode(b, sizeof(b), true, &d), 0);
	assert_false(d.u.ans.mtu_default);
	assert_true(UBPF_ANS_MTU_OWN > UBPF_ANS_RX_RANGE && UBPF_ANS_MTU_OWN < UBPF_ANS_PATH_IP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(older_server_reads_as_the_default),
		cmocka_unit_test(range_in_the_path_padding),
		cmocka_unit_test(mtu_default_in_the_path_padding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
