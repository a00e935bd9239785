// SPDX-License-Identifier: BSD-2-Clause
#include "endpoint/dev_lock.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"

int dev_lock_try(const char *scope, int ifindex, const char *what)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), n, rc;

	if (fd < 0)
		return -errno;
	n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "ubxdp-%s/%d/%s", scope, ifindex, what);
	if (bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n))) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int dev_lock_wait(const char *scope, int ifindex, const char *what, unsigned wait_ms)
{
	static const struct timespec step = { .tv_nsec = 2 * 1000000 };
	/* By the clock, not by steps: on a busy host a 2 ms sleep takes longer. */
	const uint64_t end = ub_mono_ns() + (uint64_t)wait_ms * 1000000u;

	for (;;) {
		int fd = dev_lock_try(scope, ifindex, what);

		if (fd != -EADDRINUSE || ub_mono_ns() >= end)
			return fd;
		nanosleep(&step, NULL);
	}
}

int dev_lock_open(int ifindex, unsigned wait_ms)
{
	return dev_lock_wait("ep", ifindex, "open", wait_ms);
}

void dev_unlock(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int dev_lock_attached(int ifindex)
{
	return dev_lock_try("ep", ifindex, "attached");
}

bool dev_lock_attached_held(int ifindex)
{
	int fd = dev_lock_attached(ifindex);
	const bool held = fd == -EADDRINUSE;

	dev_unlock(&fd);
	return held;
}
