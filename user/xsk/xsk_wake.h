/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Waking a consumer of handoff rings (xsk_handoff.h) asleep in poll(): the
 * handshake between one sleeper and the producers that fill its rings, with
 * an eventfd written only when the sleeper may be asleep (a write a frame
 * would cost a syscall each).
 *
 * The sleeper sets asleep, then looks at its rings; a producer publishes a
 * frame, then looks at asleep. With a full fence between each one's store
 * and load, one of them sees the other's: the sleeper a frame (no sleep),
 * or the producer asleep (a write to the eventfd, once: the first takes
 * asleep). Used by the endpoint's workers (endpoint/ep_workers.c).
 */
#ifndef UBXDP_XSK_WAKE_H
#define UBXDP_XSK_WAKE_H

#include <stdbool.h>
#include <stdint.h>

#include "xsk/xsk_handoff.h"

struct xsk_wake {
	int fd;			/* the eventfd the sleeper polls; -1: none */
	uint32_t asleep;	/* atomic */
	bool slept, slept_ext;	/* a sleep prepared (by the caller's own poll: ext) */
};

/* fd -1, nothing prepared. */
void xsk_wake_clear(struct xsk_wake *w);
/* The eventfd (nonblocking), once. 0 or -errno. */
int xsk_wake_open(struct xsk_wake *w);
void xsk_wake_close(struct xsk_wake *w);
/* The producer, after publishing: wake w's sleeper if it may be asleep. */
void xsk_wake_kick(struct xsk_wake *w);
/* The sleeper, before poll()ing w->fd: asleep set, then the n rings to it
 * (rings[i * stride], NULL ones skipped) looked at. true: one holds a frame
 * (do not sleep: the sleep is undone); false: sleep, a producer now wakes it. */
bool xsk_wake_sleep(struct xsk_wake *w, bool ext, struct xsk_handoff *rings, uint32_t n, uint32_t stride,
		    uint32_t skip);
/* The sleeper, after the poll: fd_ready, w->fd was readable. A producer
 * that took asleep has written the eventfd, or is about to: read now
 * (nonblocking), or at the next sleep, which its late write ends at once.
 * A caller's own poll (ext) tells us nothing: read anyway. */
void xsk_wake_awake(struct xsk_wake *w, bool fd_ready);

#endif
