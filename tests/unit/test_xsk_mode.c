// SPDX-License-Identifier: BSD-2-Clause
/*
 * The AF_XDP bind mode (user/xsk/xsk_mode.h): which mode a run binds in for
 * what was asked, and the flags that ask for it. The kernel's side (a bind
 * naming neither flag tries zero-copy, then copy) is the endpoint and
 * wps_egress suites' to see on veth.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <linux/if_xdp.h>

#include "xsk/xsk_mode.h"

static void auto_is_copy_behind_generic_xdp_or_on_several_devices(void **state)
{
	(void)state;
	assert_int_equal(xsk_mode_for(XSK_MODE_AUTO, false, 1), XSK_MODE_AUTO);
	assert_int_equal(xsk_mode_for(XSK_MODE_AUTO, true, 1), XSK_MODE_COPY);
	/* a second device takes the first's mode: the WPS egress's --out-dev, a CTP entity */
	assert_int_equal(xsk_mode_for(XSK_MODE_AUTO, false, 2), XSK_MODE_COPY);
	assert_int_equal(xsk_mode_for(XSK_MODE_AUTO, false, 5), XSK_MODE_COPY);
	/* what was asked for in so many words stays asked */
	assert_int_equal(xsk_mode_for(XSK_MODE_ZEROCOPY, false, 2), XSK_MODE_ZEROCOPY);
	assert_int_equal(xsk_mode_for(XSK_MODE_COPY, false, 1), XSK_MODE_COPY);
}

static void bind_flags_name_the_mode(void **state)
{
	(void)state;
	assert_int_equal(xsk_mode_bind_flags(XSK_MODE_AUTO), 0);	/* the kernel falls back itself */
	assert_int_equal(xsk_mode_bind_flags(XSK_MODE_COPY), XDP_COPY);
	assert_int_equal(xsk_mode_bind_flags(XSK_MODE_ZEROCOPY), XDP_ZEROCOPY);
}

static void refusal_said_only_for_a_forced_zero_copy(void **state)
{
	(void)state;
	assert_non_null(strstr(xsk_mode_refusal(XSK_MODE_ZEROCOPY, -EOPNOTSUPP), "refuses zero-copy"));
	assert_string_equal(xsk_mode_refusal(XSK_MODE_AUTO, -EOPNOTSUPP), "");
	assert_string_equal(xsk_mode_refusal(XSK_MODE_ZEROCOPY, -EBUSY), "");
	assert_string_equal(xsk_mode_bound_name(true), "zero-copy");
	assert_string_equal(xsk_mode_bound_name(false), "copy");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(auto_is_copy_behind_generic_xdp_or_on_several_devices),
		cmocka_unit_test(bind_flags_name_the_mode),
		cmocka_unit_test(refusal_said_only_for_a_forced_zero_copy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
