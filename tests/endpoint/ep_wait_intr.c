// SPDX-License-Identifier: BSD-2-Clause
/*
 * What ep_wait (user/endpoint/ep.h) returns when a signal ends its sleep,
 * on worker 0 of an endpoint of WORKERS workers on DEV (owned queues: the
 * sleep reads its eventfd after the poll):
 *   ep_wait_intr DEV WORKERS  ->  "ep_wait: <strerror of its -errno>" (exit 0)
 * A SIGALRM without SA_RESTART 200 ms into a 3 s wait, whose handler plays
 * another worker that has just taken the sleeper's asleep flag and not yet
 * written its eventfd (xsk/xsk_wake.h), so the sleep's read of the eventfd
 * after the poll finds nothing (EAGAIN): poll's EINTR must come back.
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

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct ep_config ec = { 0 };
	struct ep *e;
	char err[256];
	int r;

	if (argc != 3) {
		fprintf(stderr, "usage: ep_wait_intr DEV WORKERS\n");
		return 2;
	}
	ec.dev = argv[1];
	ec.workers = (uint32_t)atoi(argv[2]);
	ec.nframes = 1024;
	ec.tp.max_chans = 4;
	e = ep_open(&ec, err, sizeof(err));
	if (!e) {
		fprintf(stderr, "ep_wait_intr: %s\n", err);
		return 2;
	}
	sleeper = e;
	sigaction(SIGALRM, &sa, NULL);
	ualarm(200000, 0);
	r = ep_wait(&e, 1, 3000000000ull);
	printf("ep_wait: %s\n", r < 0 ? strerror(-r) : r ? "woken" : "timed out");
	ep_close(e);
	return 0;
}
