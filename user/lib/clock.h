/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef UBXDP_CLOCK_H
#define UBXDP_CLOCK_H

#include <stdint.h>
#include <time.h>

/*
 * CLOCK_MONOTONIC in ns: the one clock of every loop, deadline and timing in
 * user/ (the transport core's `now`, the endpoint's next-hop refresh, the
 * ICRC backend's timing), so that times taken in one place compare with
 * times taken in another. Inline: it runs once per round of a busy loop.
 */
static inline uint64_t ub_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ns (a duration, or a CLOCK_MONOTONIC time) as a struct timespec. */
static inline struct timespec ub_ns_timespec(uint64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u) };
}

#endif
