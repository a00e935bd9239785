// SPDX-License-Identifier: BSD-2-Clause
/*
 * A slow host's AF_XDP sockets, for a program run under LD_PRELOAD
 * (tests/endpoint/workers.sh): each AF_XDP socket() returns SLOW_XSK_MS ms
 * late, so an open's steps that make sockets last long enough for a frame
 * sent meanwhile to land between them, where a test can see which step the
 * program went on the device after.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#ifndef AF_XDP
#define AF_XDP	44
#endif

int socket(int domain, int type, int protocol)
{
	static int (*real)(int, int, int);
	const char *ms = getenv("SLOW_XSK_MS");

	if (!real)
		real = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
	if (domain == AF_XDP && ms) {
		long n = atol(ms);
		struct timespec ts = { .tv_sec = n / 1000, .tv_nsec = (n % 1000) * 1000000 };

		nanosleep(&ts, NULL);
	}
	return real(domain, type, protocol);
}
