// SPDX-License-Identifier: BSD-2-Clause
/*
 * How soon a folded endpoint (ep_workers_fold, user/endpoint/ep.h) reads a
 * frame on any of its device's queues while asleep in ep_progress:
 *   ep_fold_wait DEV WORKERS FRAMES  ->  "ready" once folded, then
 *                                        "rx N after T ms" (exit 0)
 * T is from "ready" to the round that had read FRAMES frames; each
 * ep_progress sleeps up to 3 s, so a frame on a socket it does not poll is
 * read some 3 s late (or at 9 s not at all, and T says so).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint/ep.h"

int main(int argc, char **argv)
{
	struct ep_config ec = { 0 };
	uint64_t t0, want;
	struct ep *e;
	char err[256];
	int rc;

	if (argc != 4) {
		fprintf(stderr, "usage: ep_fold_wait DEV WORKERS FRAMES\n");
		return 2;
	}
	ec.dev = argv[1];
	ec.workers = (uint32_t)atoi(argv[2]);
	ec.nframes = 1024;
	ec.tp.max_chans = 4;
	want = strtoull(argv[3], NULL, 10);
	e = ep_open(&ec, err, sizeof(err));
	if (!e) {
		fprintf(stderr, "ep_fold_wait: %s\n", err);
		return 2;
	}
	rc = ep_workers_fold(e);
	if (rc) {
		fprintf(stderr, "ep_fold_wait: fold: %s\n", strerror(-rc));
		ep_close(e);
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	t0 = ep_now_ns();
	while (ep_rx_frames(e) < want && ep_now_ns() - t0 < 9000000000ull)
		ep_progress(e, 3000);
	printf("rx %llu after %llu ms\n", (unsigned long long)ep_rx_frames(e),
	       (unsigned long long)((ep_now_ns() - t0) / 1000000));
	ep_close(e);
	return 0;
}
