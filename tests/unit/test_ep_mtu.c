// SPDX-License-Identifier: BSD-2-Clause
/*
 * The UB MTU a device MTU carries (ep_ub_mtu_fit, user/endpoint/ep_mtu.c):
 * the largest power of two whose data packet fits with every header the
 * transport puts on one with a full payload. The header sizes here are the
 * wire's (docs/WIRE.md §3-§4, UB 2.0 Table 7-2), written out, not the
 * code's: the last packet of a Write with immediate carries TPH (16) | TAH
 * (8) | MAETAH (16) | IMMETAH (16) | TVETAH (4), then the payload and the
 * ICRC (4), in UDP (8) in IPv4 (20) or IPv6 (40); a native frame adds LPH
 * (4) and NTH (6) inside the device MTU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "endpoint/ep.h"

#define WIRE_TP_DATA	(16 + 8 + 16 + 16 + 4)
#define WIRE_ICRC	4

static uint32_t overhead(bool native, uint8_t ver)
{
	return (native ? 4 + 6 : 0) + (ver == 6 ? 40 : 20) + 8 + WIRE_TP_DATA + WIRE_ICRC;
}

/* At each size's edge: exactly its packet fits it, a byte less the next size down. */
static void every_size_at_its_edge(void **state)
{
	(void)state;
	for (int native = 0; native < 2; native++)
		for (uint8_t ver = 4; ver <= 6; ver += 2)
			for (uint32_t m = EP_UB_MTU_MIN; m <= EP_UB_MTU_MAX; m *= 2) {
				uint32_t edge = m + overhead(native, ver);

				assert_int_equal(ep_ub_mtu_fit(edge, native, ver, 0), m);
				assert_int_equal(ep_ub_mtu_fit(edge - 1, native, ver, 0),
						 m == EP_UB_MTU_MIN ? 0 : m / 2);
			}
}

/* The links people have keep their sizes. */
static void common_links_unchanged(void **state)
{
	(void)state;
	for (int native = 0; native < 2; native++)
		for (uint8_t ver = 4; ver <= 6; ver += 2) {
			assert_int_equal(ep_ub_mtu_fit(1500, native, ver, 0), 1024);
			assert_int_equal(ep_ub_mtu_fit(3000, native, ver, 0), 2048);
			assert_int_equal(ep_ub_mtu_fit(9000, native, ver, 0), 4096);
			/* one UMEM frame (no multi-buffer): 2048 at most */
			assert_int_equal(ep_ub_mtu_fit(9000, native, ver, EP_FRAME_SIZE), 2048);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_size_at_its_edge),
		cmocka_unit_test(common_links_unchanged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
