// SPDX-License-Identifier: BSD-2-Clause
/*
 * How an endpoint of WORKERS workers on DEV (user/endpoint/ep.h) sleeps:
 *
 *   ep_workers_wait DEV WORKERS fold FRAMES  ->  "ready" once folded
 *       (ep_workers_fold), then "rx N after T ms": T from "ready" to the
 *       round that had read FRAMES frames; each ep_progress sleeps up to
 *       3 s, so a frame on a socket it does not poll is read some 3 s late
 *       (or at 9 s not at all, and T says so).
 *
 *   ep_workers_wait DEV WORKERS intr  ->  "ep_wait: <strerror of its -errno>"
 *       A SIGALRM without SA_RESTART 200 ms into a 3 s ep_wait on worker 0,
 *       whose handler plays another worker that has just taken its asleep
 *       flag and not yet written its eventfd (xsk/xsk_wake.h), so the
 *       sleep's read of the eventfd after the poll finds nothing (EAGAIN):
 *       poll's EINTR must come back.
 *
 * Exit 0, 2 on bad arguments or setup.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "endpoint/ep_int.h"

static struct ep *sleeper;

static void on_alarm(int sig)
{
	(void)sig;
	__atomic_exchange_n(&sleeper->wake.asleep, 0, __ATOMIC_SEQ_CST);
}

static int fold_wait(struct ep *e, uint64_t want)
{
	uint64_t t0;
	int rc = ep_workers_fold(e);

	if (rc) {
		fprintf(stderr, "ep_workers_wait: fold: %s\n", strerror(-rc));
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	t0 = ep_now_ns();
	while (ep_rx_frames(e) < want && ep_now_ns() - t0 < 9000000000ull)
		ep_progress(e, 3000);
	printf("rx %llu after %llu ms\n", (unsigned long long)ep_rx_frames(e),
	       (unsigned long long)((ep_now_ns() - t0) / 1000000));
	return 0;
}

static int intr_wait(struct ep *e)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	int r;

	sleeper = e;
	sigaction(SIGALRM, &sa, NULL);
	ualarm(200000, 0);
	r = ep_wait(&e, 1, 3000000000ull);
	printf("ep_wait: %s\n", r < 0 ? strerror(-r) : r ? "woken" : "timed out");
	return 0;
}

int main(int argc, char **argv)
{
	struct ep_config ec = { 0 };
	bool fold = argc == 5 && !strcmp(argv[3], "fold");
	struct ep *e;
	char err[256];
	int rc;

	if (!fold && !(argc == 4 && !strcmp(argv[3], "intr"))) {
		fprintf(stderr, "usage: ep_workers_wait DEV WORKERS fold FRAMES | intr\n");
		return 2;
	}
	ec.dev = argv[1];
	ec.workers = (uint32_t)atoi(argv[2]);
	ec.nframes = 1024;
	ec.tp.max_chans = 4;
	e = ep_open(&ec, err, sizeof(err));
	if (!e) {
		fprintf(stderr, "ep_workers_wait: %s\n", err);
		return 2;
	}
	rc = fold ? fold_wait(e, strtoull(argv[4], NULL, 10)) : intr_wait(e);
	ep_close(e);
	return rc;
}
