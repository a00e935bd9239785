/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The two ends of a urma suite test program: this process, and a peer forked
 * into URMA_TEST_PEER_NS (peer_main(fd) there) that tells what this side
 * needs (its EID, UASID, IDs) over a socket pair before anything else.
 */
#ifndef UBXDP_TESTS_URMA_TWO_ENDS_H
#define UBXDP_TESTS_URMA_TWO_ENDS_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static inline void die(const char *what)
{
	fprintf(stderr, "FAILED: %s\n", what);
	exit(1);
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The peer's pid; *fd this side's end of the pair, *info read from it.
 * Exits 2 when the environment lacks the devices, 1 (die) on a failure. */
static inline pid_t two_ends_fork(void (*peer_main)(int fd), int *fd, void *info, size_t len)
{
	int sv[2];
	pid_t pid;

	if (!getenv("URMA_TEST_DEV") || !getenv("URMA_TEST_PEER_NS") || !getenv("URMA_TEST_PEER_DEV")) {
		fprintf(stderr, "URMA_TEST_DEV, URMA_TEST_PEER_NS, URMA_TEST_PEER_DEV: see tests/urma/run\n");
		exit(2);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair");
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		peer_main(sv[1]);
		exit(0);
	}
	close(sv[1]);
	*fd = sv[0];
	if (pid < 0 || read(sv[0], info, len) != (ssize_t)len)
		die("the peer did not start");
	return pid;
}

#endif
