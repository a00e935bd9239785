/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Write benchmark of bench/urma_workers.sh (workers_test.c: a lane per
 * context; spread_test.c: a lane per jetty of one context): a thread per
 * lane keeping URMA_TEST_DEPTH (16) Writes of URMA_TEST_SIZE (65536) bytes
 * outstanding.
 */
#ifndef UBXDP_TESTS_URMA_WRITE_BENCH_H
#define UBXDP_TESTS_URMA_WRITE_BENCH_H

#include <pthread.h>
#include <stdbool.h>

#include "two_ends.h"

/* ---- the benchmark: a thread per lane keeping Writes outstanding ------------------- */

struct write_lane {
	urma_jetty_t *jet;
	urma_jfc_t *jfc;		/* its own: the thread polls it */
	urma_target_jetty_t *tj;
	uint8_t *buf;			/* the Writes' source, in seg */
	urma_target_seg_t *seg;
	uint64_t rva;			/* the peer's segment, imported as tseg */
	urma_target_seg_t *tseg;
	/* the run */
	double secs;
	uint32_t size, depth, slots;
	uint64_t bytes;
	pthread_barrier_t *go;
};

/* Each lane keeps depth Writes of size bytes outstanding on its pair,
 * polling its JFC (so it drives its worker's endpoint), for secs after a
 * first Write set its channel up; the peer's progress threads serve. */
static inline void *bench_lane(void *arg)
{
	struct write_lane *b = arg;
	uint32_t next = 0, out = 0;
	double until = 0;
	bool warm = false;

	for (;;) {
		urma_cr_t cr[16];
		int n;

		while (out < (warm ? b->depth : 1) && (!warm || now_s() < until)) {
			size_t off = (size_t)(next % b->slots) * b->size;
			urma_sge_t src = { .addr = (uint64_t)(uintptr_t)(b->buf + off), .len = b->size,
					   .tseg = b->seg };
			urma_sge_t rem = { .addr = b->rva + off, .len = b->size, .tseg = b->tseg };
			urma_jfs_wr_t w = { .opcode = URMA_OPC_WRITE, .tjetty = b->tj,
					    .rw = { .src = { .sge = &src, .num_sge = 1 },
						    .dst = { .sge = &rem, .num_sge = 1 } } };
			urma_jfs_wr_t *bad;

			w.flag.bs.complete_enable = 1;
			if (urma_post_jetty_send_wr(b->jet, &w, &bad))
				die("Write");
			next++;
			out++;
		}
		if (!out)
			break;
		n = urma_poll_jfc(b->jfc, 16, cr);
		for (int i = 0; i < n; i++) {
			if (cr[i].status != URMA_CR_SUCCESS) {
				fprintf(stderr, "Write status %d\n", (int)cr[i].status);
				die("a Write failed");
			}
			/* What completed in the time (the drain after it: not). */
			b->bytes += warm && now_s() < until ? cr[i].completion_len : 0;
			out--;
		}
		if (!warm && n) {
			/* Its channel set up by that first Write: not in the time. */
			pthread_barrier_wait(b->go);
			until = now_s() + b->secs;
			warm = true;
		}
	}
	return NULL;
}

/* n lanes at once (n <= 8), their Writes in the first region_len bytes of
 * their segments; prints each lane's goodput and, last, "together N Mbit/s". */
static inline void write_bench(struct write_lane *l, int n, size_t region_len, double secs,
				   const char *what)
{
	const char *sz = getenv("URMA_TEST_SIZE"), *dp = getenv("URMA_TEST_DEPTH");
	uint32_t size = sz ? (uint32_t)atoi(sz) : 65536, depth = dp ? (uint32_t)atoi(dp) : 16;
	pthread_barrier_t go;
	pthread_t thr[8];
	uint64_t total = 0;

	if (size < 1 || size > region_len || depth < 1 || depth > 64 || n > 8)
		die("URMA_TEST_SIZE 1 .. the region, URMA_TEST_DEPTH 1 .. 64");
	pthread_barrier_init(&go, NULL, (unsigned)n + 1);
	for (int k = 0; k < n; k++) {
		l[k].secs = secs;
		l[k].size = size;
		l[k].depth = depth;
		l[k].slots = (uint32_t)(region_len / size);
		l[k].go = &go;
		if (pthread_create(&thr[k], NULL, bench_lane, &l[k]))
			die("pthread_create");
	}
	pthread_barrier_wait(&go);
	for (int k = 0; k < n; k++)
		pthread_join(thr[k], NULL);
	printf("bench: %s, Write %u B x %u, %.1f s:", what, size, depth, secs);
	for (int k = 0; k < n; k++) {
		printf(" %d: %.0f Mbit/s", k, (double)l[k].bytes * 8 / secs / 1e6);
		total += l[k].bytes;
	}
	printf(", together %.0f Mbit/s\n", (double)total * 8 / secs / 1e6);
}

#endif
