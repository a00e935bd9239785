// SPDX-License-Identifier: BSD-2-Clause
/*
 * A liburma channel's nonce (user/urma/ctl.c ubx_ctl_nonce), which a CLOSE
 * or an OPEN must name to end or replace the channel: it is getrandom()'s
 * bytes, asked without blocking, never 0, and a failure of getrandom is
 * said, not papered over. getrandom is wrapped (-Wl,--wrap): the test
 * scripts what it returns, so the nonce is checked to be the source's
 * bytes themselves (nothing a generator's state or an earlier nonce
 * gives), where two nonces merely differing would hold for xorshift too.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>
#include <cmocka.h>

#include "urma/ctl.h"

/* What the wrapped getrandom returns, call by call: a value (4 bytes), or
 * a short read of len bytes, or -1 with err. */
struct draw {
	uint32_t v;
	ssize_t len;
	int err;
};
static const struct draw *script;
static size_t nscript, calls;
static unsigned last_flags;

ssize_t __wrap_getrandom(void *buf, size_t len, unsigned flags);
ssize_t __wrap_getrandom(void *buf, size_t len, unsigned flags)
{
	const struct draw *d = &script[calls < nscript ? calls : nscript - 1];

	calls++;
	last_flags = flags;
	if (d->len < 0) {
		errno = d->err;
		return -1;
	}
	memcpy(buf, &d->v, len < sizeof(d->v) ? len : sizeof(d->v));
	return d->len < (ssize_t)len ? d->len : (ssize_t)len;
}

static void run(const struct draw *d, size_t n)
{
	script = d;
	nscript = n;
	calls = 0;
	last_flags = ~0u;
}

static void nonce_is_getrandoms_bytes(void **state)
{
	/* Each nonce the source's next 4 bytes, consecutive ones unrelated. */
	static const struct draw d[] = { { 0x9e3779b9u, 4, 0 }, { 0x00000002u, 4, 0 }, { 0xfffffffeu, 4, 0 } };
	uint32_t n = 0;

	(void)state;
	run(d, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(ubx_ctl_nonce(&n), 0);
		assert_int_equal(n, d[i].v);
	}
	assert_int_equal(calls, 3);
	assert_int_equal(last_flags, GRND_NONBLOCK);
}

static void nonce_never_zero(void **state)
{
	static const struct draw d[] = { { 0, 4, 0 }, { 0, 4, 0 }, { 0x1234u, 4, 0 } };
	uint32_t n = 0;

	(void)state;
	run(d, 3);
	assert_int_equal(ubx_ctl_nonce(&n), 0);
	assert_int_equal(n, 0x1234u);
	assert_int_equal(calls, 3);
}

static void getrandom_failure_said(void **state)
{
	static const struct draw nosys[] = { { 0, -1, ENOSYS } }, again[] = { { 0, -1, EAGAIN } },
				 shrt[] = { { 0x55555555u, 2, 0 } };
	uint32_t n = 7;

	(void)state;
	run(nosys, 1);
	assert_int_equal(ubx_ctl_nonce(&n), -ENOSYS);
	run(again, 1);
	assert_int_equal(ubx_ctl_nonce(&n), -EAGAIN);
	run(shrt, 1);
	assert_int_equal(ubx_ctl_nonce(&n), -EIO);
	assert_int_equal(n, 7);		/* untouched: the caller falls back */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nonce_is_getrandoms_bytes),
		cmocka_unit_test(nonce_never_zero),
		cmocka_unit_test(getrandom_failure_said),
	};

	return cmocka_run_group_tests_name("urma_nonce", tests, NULL, NULL);
}
