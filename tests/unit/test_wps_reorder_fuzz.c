// SPDX-License-Identifier: BSD-2-Clause
/*
 * The reorder engine's fuzz target (tests/fuzz/fuzz_wps_reorder.c) on seeded
 * random inputs, so make test checks the engine against the target's model
 * and invariants, and its batches against the same packets one by one, every
 * time; make fuzz-wps runs the same target under
 * libFuzzer for longer. A disagreement aborts with the reason on stderr (the
 * unit runner counts that as a failure).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../fuzz/fuzz_wps_reorder.c"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint8_t next_byte(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint8_t)(rng >> 24);
}

static void run(int cases, size_t maxlen, uint8_t op_mask)
{
	static uint8_t buf[FZ_MAX_OPS * 4];

	memset(wps_fuzz_actions, 0, sizeof(wps_fuzz_actions));
	wps_fuzz_reclaims = 0;
	wps_fuzz_batched = 0;

	for (int i = 0; i < cases; i++) {
		size_t len = 8 + next_byte() * (maxlen / 256);

		for (size_t j = 0; j < len; j++)
			buf[j] = next_byte();
		/* Bias the op byte: mostly arrivals, some ticks and time steps. */
		for (size_t j = 8; j + 4 <= len; j += 4)
			if ((buf[j] & 3) >= 2 && (buf[j + 1] & op_mask))
				buf[j] &= (uint8_t)~2;
		wps_reorder_fuzz_one(buf, len);
	}
	/* The model was compared on every path: each reason to leave, reclaims. */
	for (unsigned a = 0; a < WPS_ACT__MAX; a++) {
		print_message("# %s %llu\n", wps_action_name(a), (unsigned long long)wps_fuzz_actions[a]);
		assert_true(wps_fuzz_actions[a] > 0);
	}
	print_message("# idle reclaims %llu\n", (unsigned long long)wps_fuzz_reclaims);
	assert_true(wps_fuzz_reclaims > 0);
	/* ... and batches, against the same packets one by one. */
	print_message("# packets in batches of more than one %llu\n", (unsigned long long)wps_fuzz_batched);
	assert_true(wps_fuzz_batched > 0);
}

static void random_streams(void **state)
{
	(void)state;
	run(6000, 1024, 0);
}

static void arrival_heavy_streams(void **state)
{
	(void)state;
	run(3000, 4096, 0x0e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(random_streams),
		cmocka_unit_test(arrival_heavy_streams),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
