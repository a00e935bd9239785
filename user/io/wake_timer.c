// SPDX-License-Identifier: BSD-2-Clause
/* A poll loop's timer kept armed across sleeps; the contract is in wake_timer.h. */
#include "io/wake_timer.h"

#include <errno.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "lib/clock.h"

int wake_timer_open(struct wake_timer *t)
{
	t->at = 0;
	t->arms = 0;
	t->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	return t->fd < 0 ? -errno : 0;
}

void wake_timer_close(struct wake_timer *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	t->at = 0;
}

static int arm(struct wake_timer *t, uint64_t at)
{
	/* Setting it also clears an expiry not read yet: the fd is quiet again. */
	struct itimerspec its = { .it_value = ub_ns_timespec(at) };

	if (timerfd_settime(t->fd, TFD_TIMER_ABSTIME, &its, NULL))
		return -errno;
	t->at = at;
	t->arms++;
	return 0;
}

int wake_timer_set(struct wake_timer *t, uint64_t now, uint64_t lo, uint64_t hi)
{
	if (t->fd < 0)
		return -EBADF;
	if (lo == UINT64_MAX)
		return t->at && t->at <= now ? arm(t, 0) : 0;	/* 0: disarmed */
	if (t->at > now && t->at >= lo && t->at <= hi)
		return 0;
	return arm(t, hi > now ? hi : now + 1);
}
