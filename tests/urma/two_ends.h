/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The two ends of a urma suite test program: this process, and a peer forked
 * into URMA_TEST_PEER_NS (peer_main(fd) there) that tells what this side
 * needs (its EID, UASID, IDs) over a socket pair before anything else. And
 * what both ends make alike: test bytes, a segment.
 *
 *   URMA_TEST_DEV, URMA_TEST_PEER_NS, URMA_TEST_PEER_DEV as api_test's;
 *   URMA_TEST_PEER_STATS   the peer's UBXDP_URMA_STATS file (optional)
 */
#ifndef UBXDP_TESTS_URMA_TWO_ENDS_H
#define UBXDP_TESTS_URMA_TWO_ENDS_H

#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "urma_api.h"

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

static inline void fill(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		b[i] = (uint8_t)(seed >> 16);
	}
}

/* What a peer tells this side first: its EID and UASID, and its segment
 * (address, token ID) to import. */
struct two_ends_info {
	urma_eid_t eid;
	uint32_t uasid;
	uint64_t va;
	uint32_t token_id;
};

/* urma_init and the device named by env. */
static inline urma_device_t *two_ends_device_of(const char *env)
{
	urma_init_attr_t ia = { 0 };
	urma_device_t *d;

	if (urma_init(&ia) || !(d = urma_get_device_by_name(getenv(env))))
		die("urma_init, the device");
	return d;
}

static inline urma_device_t *two_ends_device(void) { return two_ends_device_of("URMA_TEST_DEV"); }

/* The peer's first step: into URMA_TEST_PEER_NS (its stats to
 * URMA_TEST_PEER_STATS), urma_init, its device. */
static inline urma_device_t *two_ends_peer_device(void)
{
	const char *st = getenv("URMA_TEST_PEER_STATS");
	int nsfd = open(getenv("URMA_TEST_PEER_NS"), O_RDONLY);

	if (nsfd < 0 || setns(nsfd, CLONE_NEWNET))
		die("peer: setns");
	close(nsfd);
	if (st)
		setenv("UBXDP_URMA_STATS", st, 1);
	return two_ends_device_of("URMA_TEST_PEER_DEV");
}

/* A segment of len bytes mapped here (*buf), read and write, token policy
 * plain text with token. */
static inline urma_target_seg_t *two_ends_seg(urma_context_t *ctx, uint32_t len, uint32_t token,
					      uint8_t **buf)
{
	urma_seg_cfg_t sc = { .len = len };
	urma_target_seg_t *seg;

	*buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*buf == MAP_FAILED)
		die("mmap");
	sc.va = (uint64_t)(uintptr_t)*buf;
	sc.flag.bs.access = URMA_ACCESS_READ | URMA_ACCESS_WRITE;
	sc.flag.bs.token_policy = URMA_TOKEN_PLAIN_TEXT;
	sc.token_value.token = token;
	if (!(seg = urma_register_seg(ctx, &sc)))
		die("urma_register_seg");
	return seg;
}

/* One request (complete_enable) of one local and, but for a Send, one
 * remote SGE: a Write's src is local, a Read's remote. */
static inline int two_ends_post(urma_jetty_t *jet, urma_opcode_t op, urma_target_jetty_t *tj, urma_sge_t *src,
				urma_sge_t *dst, uint64_t tag)
{
	urma_jfs_wr_t wr = { .opcode = op, .tjetty = tj, .user_ctx = tag };
	urma_jfs_wr_t *bad;

	wr.flag.bs.complete_enable = 1;
	if (op == URMA_OPC_SEND) {
		wr.send.src = (urma_sg_t){ .sge = src, .num_sge = 1 };
	} else {
		wr.rw.src = (urma_sg_t){ .sge = src, .num_sge = 1 };
		wr.rw.dst = (urma_sg_t){ .sge = dst, .num_sge = 1 };
	}
	return urma_post_jetty_send_wr(jet, &wr, &bad);
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
