/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The WPS egress gateway's insides (egress_run.h), shared by its three
 * files: egress_run.c sets up and tears down (devices, XDP program, UMEM,
 * sockets, threads), egress_shard.c is a reorder thread's loop,
 * egress_report.c writes the statistics.
 */
#ifndef WPS_EGRESS_INT_H
#define WPS_EGRESS_INT_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "wps/egress_run.h"
#include "xsk/xsk_mt.h"

struct ring_buffer;
struct wps_egress;

#define BATCH		64
#define RING_SIZE	2048
#define NIL		UINT32_MAX
#define MAX_SEGS	(BATCH / 2)	/* frames of one multi-buffer packet we take (a 64 KiB one in 2 KiB frames) */

/*
 * A multi-buffer packet (a jumbo frame over sockets with XDP_USE_SG) comes as
 * several UMEM frames; the engine keeps only the first one's address. The
 * others hang off it here, indexed by frame number: where each starts, its
 * length, the next. A frame belongs to one shard at a time.
 */
struct seg {
	uint64_t addr;
	uint32_t len;
	uint32_t next;
};

/* A socket's packet still coming in: its first frame and the last one so far. */
struct partial {
	uint32_t first, last, nsegs;
	bool open, bad;
};

struct eg;

/* A whole packet received this round, for the engine. */
struct pend {
	uint64_t addr;
	uint32_t len;
	bool bad;
};

/* One reorder thread: its engine, its sockets, what it has to send. */
struct shard {
	struct eg *g;
	unsigned idx;
	int cpu;			/* pinned to it (-1: not pinned) */
	struct xsk_mt_thr *t;
	struct wps_reorder *e;
	int out_sock;			/* its socket on the site-facing device */
	unsigned nrx;			/* its rx sockets */
	struct xsk_mt_frame batch[BATCH];
	unsigned nb;
	struct pend pend[BATCH];
	unsigned npend;
	struct partial part[XSK_MT_MAX_SOCKS];
	struct seg *seg;		/* per UMEM frame: the rest of a multi-buffer packet (its own: no
					 * cache line shared with another shard) */
	pthread_mutex_t lock;		/* held while it works: the statistics read its engine under it */
	pthread_t th;
	bool started;
	/* loop counters */
	uint64_t rx, bad_desc, tx_xsk, tx_kernel, tx_kernel_fail, tx_fail, rx_multi, bad_multi;
};

struct eg {
	const struct wps_eg_run_opts *o;
	volatile sig_atomic_t *stop;
	struct wps_egress *skel;
	struct xsk_mt *xm;
	struct ring_buffer *log;
	unsigned ifindex[WPS_EG_MAX_DEVS], out_if;
	int link[WPS_EG_MAX_DEVS];	/* XDP links: detached when closed or when the process ends */
	int raw4, raw6;
	unsigned npeers, nshards, prio;
	uint32_t frame_size;
	struct shard sh[WPS_EG_MAX_SHARDS];
};

/* A reorder thread (arg: its struct shard), until *g->stop; then it
 * releases what its engine holds, in order. */
void *wps_eg_shard_main(void *arg);
/* The statistics JSON (o->stats_path, when set), rewritten whole; the
 * one-line summary of --live on stderr. */
void wps_eg_write_stats(struct eg *g);
void wps_eg_live_line(struct eg *g);

#endif
