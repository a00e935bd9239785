// SPDX-License-Identifier: BSD-2-Clause
/*
 * The kernel's UDP ping-pong, the floor ubperf's small-message latency is
 * compared with (scripts/bench_endpoint.sh part 5): one datagram out, the
 * server sends it back, the next goes when it is back; blocking sockets, as an
 * application would use them, so the figure includes the kernel's wake-ups
 * just as ubperf's includes its own loop's.
 *
 *   udp_pingpong server PORT
 *   udp_pingpong client ADDR PORT [SIZE [COUNT]]     (64 bytes, 20000 round trips)
 *
 * The client prints "round trips N size S p50 X p99 Y p999 Z" (microseconds).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"

#define WARMUP 200

static int usage(void)
{
	fprintf(stderr, "usage: udp_pingpong server PORT | client ADDR PORT [SIZE [COUNT]]\n");
	return 2;
}

static int num(const char *s, unsigned long lo, unsigned long hi, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || end == s || *end || *v < lo || *v > hi ? -1 : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct_us(const uint64_t *v, size_t n, double q)
{
	return (double)v[(size_t)(q * (double)(n - 1))] / 1000.0;
}

static int server(unsigned long port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char buf[65536];
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "udp_pingpong: server on port %lu: %s\n", port, strerror(errno));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

		if (n < 0 && errno != EINTR)
			return 1;
		if (n >= 0)
			sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
	}
}

static int client(const char *addr, unsigned long port, unsigned long size, unsigned long count)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { .tv_sec = 1 };
	uint64_t *rtt = calloc(count, sizeof(*rtt));
	char *buf = calloc(1, size);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (!rtt || !buf || fd < 0 || inet_pton(AF_INET, addr, &a.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "udp_pingpong: client to %s port %lu: %s\n", addr, port,
			errno ? strerror(errno) : "not an IPv4 address");
		return 1;
	}
	/* A lost datagram (none on a veth, but the bench must not hang) is resent. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (unsigned long i = 0; i < WARMUP + count; i++) {
		uint64_t t0 = ub_mono_ns();

		memcpy(buf, &i, sizeof(i) < size ? sizeof(i) : size);
		if (send(fd, buf, size, 0) < 0 || recv(fd, buf, size, 0) < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				i--;
				continue;
			}
			fprintf(stderr, "udp_pingpong: %s\n", strerror(errno));
			return 1;
		}
		if (i >= WARMUP)
			rtt[i - WARMUP] = ub_mono_ns() - t0;
	}
	qsort(rtt, count, sizeof(*rtt), cmp_u64);
	printf("round trips %lu size %lu p50 %.1f p99 %.1f p999 %.1f\n", count, size, pct_us(rtt, count, 0.5),
	       pct_us(rtt, count, 0.99), pct_us(rtt, count, 0.999));
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long port, size = 64, count = 20000;

	if (argc == 3 && !strcmp(argv[1], "server") && !num(argv[2], 1, 65535, &port))
		return server(port);
	if (argc >= 4 && argc <= 6 && !strcmp(argv[1], "client") && !num(argv[3], 1, 65535, &port) &&
	    (argc < 5 || !num(argv[4], 8, 65507, &size)) && (argc < 6 || !num(argv[5], 1, 10000000, &count)))
		return client(argv[2], port, size, count);
	return usage();
}
