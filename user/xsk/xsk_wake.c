// SPDX-License-Identifier: BSD-2-Clause
/* Waking a handoff rings' consumer asleep in poll() (xsk_wake.h). */
#include "xsk/xsk_wake.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

void xsk_wake_clear(struct xsk_wake *w)
{
	*w = (struct xsk_wake){ .fd = -1 };
}

int xsk_wake_open(struct xsk_wake *w)
{
	if (w->fd < 0)
		w->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return w->fd < 0 ? -errno : 0;
}

void xsk_wake_close(struct xsk_wake *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

void xsk_wake_kick(struct xsk_wake *w)
{
	const uint64_t one = 1;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&w->asleep, __ATOMIC_RELAXED) && __atomic_exchange_n(&w->asleep, 0, __ATOMIC_SEQ_CST) &&
	    write(w->fd, &one, sizeof(one)) < 0) {
		/* full (never: a counter of 2^64): it is readable anyway */
	}
}

bool xsk_wake_sleep(struct xsk_wake *w, bool ext, struct xsk_handoff *rings, uint32_t n, uint32_t stride,
		    uint32_t skip)
{
	__atomic_store_n(&w->asleep, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	w->slept = true;
	w->slept_ext = ext;
	for (uint32_t i = 0; i < n; i++)
		if (i != skip && !xsk_handoff_empty(&rings[i * stride])) {
			__atomic_store_n(&w->asleep, 0, __ATOMIC_RELAXED);
			return true;
		}
	return false;
}

void xsk_wake_awake(struct xsk_wake *w, bool fd_ready)
{
	uint64_t v;

	if (!w->slept)
		return;
	w->slept = false;
	if ((!__atomic_exchange_n(&w->asleep, 0, __ATOMIC_SEQ_CST) || fd_ready || w->slept_ext) &&
	    read(w->fd, &v, sizeof(v)) < 0) {
		/* nothing written yet */
	}
}
