/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AF_XDP port: one UMEM shared by one or more AF_XDP sockets on one or more
 * devices (libxdp's xsk API), a frame allocator over it, and batch rx / tx
 * with fill and completion handling. It knows nothing of UB: it moves
 * Ethernet frames. Frames received on one socket may be transmitted on any
 * socket of the same port without a copy (they live in the shared UMEM).
 *
 * The caller loads its own XDP program and owns its XSKMAP: libxdp's default
 * program is never loaded, and each socket is inserted into the given map at
 * the given key (usually the rx queue index).
 *
 * Not thread safe: one thread drives a port (use one port per thread).
 *
 * Frame life cycle: xsk_port_rx() hands out received frames; each must be
 * given back with xsk_port_free() or passed to xsk_port_tx() (which frees it
 * once the kernel completes it). xsk_port_alloc() gives an empty frame to
 * fill and transmit.
 */
#ifndef UBXDP_XSK_PORT_H
#define UBXDP_XSK_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include "xsk/xsk_mode.h"

#define XSK_PORT_MAX_SOCKS	16

struct xsk_port_cfg {
	uint32_t nframes;	/* UMEM frames (0: 4096) */
	uint32_t frame_size;	/* power of two, 2048 or 4096 (0: 4096) */
	uint32_t ring_size;	/* rx, tx, fill, completion per socket (0: 1024) */
	enum xsk_mode mode;	/* 0: zero-copy where the driver has it, else copy */
	bool no_wakeup;		/* do not request XDP_USE_NEED_WAKEUP */
};

struct xsk_frame {
	uint64_t addr;		/* UMEM address of the first byte */
	uint8_t *data;		/* the bytes */
	uint32_t len;
	int sock;		/* socket index it came in on (rx) */
};

struct xsk_port_stats {
	uint64_t rx, tx, tx_busy;	/* tx_busy: no room in the tx ring */
	uint64_t alloc_fail;		/* no free frame */
	uint64_t rx_dropped, rx_invalid, rx_ring_full, fill_empty, tx_invalid;	/* kernel's XDP_STATISTICS */
};

struct xsk_port;

/* NULL with errno set on failure. */
struct xsk_port *xsk_port_create(const struct xsk_port_cfg *cfg);
void xsk_port_destroy(struct xsk_port *p);

/*
 * Bind a socket to (ifname, queue) on the port's UMEM and insert it into
 * `xskmap_fd` at `map_key` (xskmap_fd < 0: the caller inserts it, see
 * xsk_port_fd()). Returns the socket index (0, 1, ...) or -errno.
 */
int xsk_port_add(struct xsk_port *p, const char *ifname, uint32_t queue, int xskmap_fd,
		 uint32_t map_key);
int xsk_port_nsocks(const struct xsk_port *p);
int xsk_port_fd(const struct xsk_port *p, int sock);	/* for poll() */
const char *xsk_port_ifname(const struct xsk_port *p, int sock);
uint32_t xsk_port_frame_size(const struct xsk_port *p);
/* Whether the kernel bound `sock` zero-copy. */
bool xsk_port_is_zerocopy(const struct xsk_port *p, int sock);

/* Up to `max` received frames from socket `sock` (-1: round robin over all). */
unsigned xsk_port_rx(struct xsk_port *p, int sock, struct xsk_frame *out, unsigned max);

/* An empty frame (data, addr; len = 0) or false when none is free. */
bool xsk_port_alloc(struct xsk_port *p, struct xsk_frame *f);
void xsk_port_free(struct xsk_port *p, const struct xsk_frame *f);

/*
 * Queue `n` frames for transmission on `sock` and kick the kernel. Returns how
 * many were queued; the rest still belong to the caller (free or retry).
 */
unsigned xsk_port_tx(struct xsk_port *p, int sock, struct xsk_frame *f, unsigned n);

/* Free tx ring slots of `sock` now (frames xsk_port_tx() would take). */
unsigned xsk_port_tx_room(struct xsk_port *p, int sock);

/*
 * Housekeeping: reap completions, refill the fill rings, and kick tx when
 * frames are still pending. Called by xsk_port_rx/tx too; call it when idle.
 */
void xsk_port_service(struct xsk_port *p);

/*
 * Wait up to `timeout_ms` (-1: forever) for a socket to have rx frames.
 * Returns > 0 when some may be ready, 0 on timeout, -errno on error.
 */
int xsk_port_poll(struct xsk_port *p, int timeout_ms);

/* The bytes at a UMEM address (a frame kept by address, e.g. in a reorder buffer). */
void *xsk_port_umem_data(const struct xsk_port *p, uint64_t addr);

/* Free frames left in the allocator (for tests: all back after a drain). */
uint32_t xsk_port_free_frames(const struct xsk_port *p);
void xsk_port_get_stats(const struct xsk_port *p, struct xsk_port_stats *st);

/* The kernel's counters of one AF_XDP socket (XDP_STATISTICS), for xsk_port and xsk_mt. */
struct xsk_kstats {
	uint64_t rx_dropped, rx_invalid, rx_ring_full, fill_empty, tx_invalid;
};
/* Add socket fd's counters to st (none when the kernel gives none). */
void xsk_kstats_add(int fd, struct xsk_kstats *st);

/* Rx queues of a device (ethtool channels), 1 to max: a socket on each, so that no
 * queue's frames go unread. */
unsigned xsk_dev_queues(const char *dev, unsigned max);

#endif
