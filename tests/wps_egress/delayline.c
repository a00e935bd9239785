// SPDX-License-Identifier: BSD-2-Clause
/*
 * A delay line for the tests (the host kernel has no netem): frames that
 * arrive on IN leave on OUT, unchanged, DELAY_US microseconds later, in
 * arrival order. One process serves several pairs. DELAY_US/N: one frame in N
 * (at random, a fixed seed) is lost on that pair (the host has no netem, nor
 * tc's gact).
 *
 *   wps_delayline IN OUT DELAY_US[/N] [IN OUT DELAY_US[/N] ...]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"

#define MAX_PAIRS	8
#define QLEN		16384
#define FRAME		2048

struct slot {
	uint64_t due;
	uint32_t len;
	uint8_t data[FRAME];
};

struct pair {
	int rx, tx;
	uint64_t delay;
	struct slot *q;
	uint32_t head, tail;	/* FIFO: one delay per pair keeps it sorted by due time */
	uint64_t fwd, dropped, lost;
	uint32_t loss;		/* one frame in loss lost (0: none) */
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int packet_socket(const char *dev, int rx)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, rx ? htons(ETH_P_ALL) : 0);
	int big = 8 << 20;

	sll.sll_ifindex = (int)if_nametoindex(dev);
	if (fd < 0 || !sll.sll_ifindex) {
		fprintf(stderr, "wps_delayline: %s: %s\n", dev, fd < 0 ? strerror(errno) : "no such device");
		exit(1);
	}
	if (!rx)
		sll.sll_protocol = 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		fprintf(stderr, "wps_delayline: bind %s: %s\n", dev, strerror(errno));
		exit(1);
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct pair p[MAX_PAIRS];
	struct pollfd pfd[MAX_PAIRS];
	int n = 0;

	if (argc < 4 || (argc - 1) % 3 || (argc - 1) / 3 > MAX_PAIRS) {
		fprintf(stderr, "usage: wps_delayline IN OUT DELAY_US[/N] [IN OUT DELAY_US[/N] ...]\n");
		return 2;
	}
	for (int i = 1; i < argc; i += 3, n++) {
		memset(&p[n], 0, sizeof(p[n]));
		p[n].rx = packet_socket(argv[i], 1);
		p[n].tx = packet_socket(argv[i + 1], 0);
		{
			char *end;

			p[n].delay = strtoull(argv[i + 2], &end, 10) * 1000;
			if (*end == '/')
				p[n].loss = (uint32_t)strtoul(end + 1, NULL, 10);
		}
		p[n].q = calloc(QLEN, sizeof(struct slot));
		if (!p[n].q)
			return 1;
		pfd[n] = (struct pollfd){ .fd = p[n].rx, .events = POLLIN };
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		uint64_t now = ub_mono_ns(), next = UINT64_MAX;
		struct timespec ts;

		for (int i = 0; i < n; i++) {
			struct pair *q = &p[i];

			while (q->head != q->tail && q->q[q->head % QLEN].due <= now) {
				struct slot *s = &q->q[q->head % QLEN];

				if (send(q->tx, s->data, s->len, 0) == (ssize_t)s->len)
					q->fwd++;
				else
					q->dropped++;
				q->head++;
			}
			if (q->head != q->tail && q->q[q->head % QLEN].due < next)
				next = q->q[q->head % QLEN].due;
		}
		ts.tv_sec = 0;
		ts.tv_nsec = next == UINT64_MAX ? 50000000 : (long)(next > now ? next - now : 0);
		if (ppoll(pfd, (nfds_t)n, &ts, NULL) <= 0)
			continue;
		now = ub_mono_ns();
		for (int i = 0; i < n; i++) {
			struct pair *q = &p[i];

			for (;;) {
				struct sockaddr_ll from;
				socklen_t fl = sizeof(from);
				struct slot *s = &q->q[q->tail % QLEN];
				ssize_t len;

				if (q->tail - q->head == QLEN) {	/* full: the oldest waits, the newest is lost */
					char sink[FRAME];

					if (recv(q->rx, sink, sizeof(sink), 0) > 0)
						q->dropped++;
					break;
				}
				len = recvfrom(q->rx, s->data, FRAME, 0, (struct sockaddr *)&from, &fl);
				if (len <= 0)
					break;
				if (from.sll_pkttype == PACKET_OUTGOING)
					continue;
				if (q->loss && rng() % q->loss == 0) {
					q->lost++;
					continue;
				}
				s->len = (uint32_t)len;
				s->due = now + q->delay;
				q->tail++;
			}
		}
	}
	for (int i = 0; i < n; i++)
		printf("pair %d: forwarded %llu dropped %llu lost %llu\n", i, (unsigned long long)p[i].fwd,
		       (unsigned long long)p[i].dropped, (unsigned long long)p[i].lost);
	return 0;
}
