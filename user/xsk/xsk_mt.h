/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AF_XDP for several threads on one UMEM (xsk_port.h is for one thread).
 *
 * The kernel gives an AF_XDP socket only the frames of the (device, queue) it
 * is bound to, and one buffer pool per (device, queue): its fill and
 * completion rings. So for N threads to each receive their own share of one
 * queue (an XDP program choosing the socket), every thread has a socket of
 * its own on that queue, all sharing the queue's pool (XDP_SHARED_UMEM on the
 * same queue), and the pool's rings are shared between the threads. Here:
 *
 *   - one UMEM (struct xsk_mt), made once, before the threads start;
 *   - one pool per (device, queue), made with its first socket; its fill and
 *     completion rings are used under the pool's spin lock, in batches,
 *     when sockets of several threads share it; a pool of one thread's
 *     sockets (the endpoint's owned queues: endpoint/ep_workers.c) takes no
 *     lock, which setup fixes, not the data path;
 *   - per thread (struct xsk_mt_thr): its sockets (rx and tx rings of its
 *     own: no lock), and a stack of free frames of its own. Frames move
 *     between threads only through the shared rings: a thread fills a queue
 *     with its free frames, the kernel hands them to whichever socket the XDP
 *     program picks, and that socket's thread frees them (or reaps them from
 *     a completion ring) onto its own stack.
 *
 * Setting up (xsk_mt_create, xsk_mt_thread, xsk_mt_add) is single-threaded;
 * afterwards each xsk_mt_thr is driven by one thread only.
 */
#ifndef UBXDP_XSK_MT_H
#define UBXDP_XSK_MT_H

#include <stdbool.h>
#include <stdint.h>

#include "xsk/xsk_frames.h"	/* struct xsk_mt_frame */
#include "xsk/xsk_port.h"	/* struct xsk_kstats */

#define XSK_MT_MAX_POOLS	512
#define XSK_MT_MAX_SOCKS	320	/* per thread */
#define XSK_MT_BUSY_WAIT_MS	5000

struct xsk_mt_cfg {
	uint32_t nframes;	/* UMEM frames */
	uint32_t frame_size;	/* 2048 or 4096 */
	uint32_t ring_size;	/* every ring, power of two */
	enum xsk_mode mode;	/* 0: zero-copy where the driver has it, else copy */
	bool sg;		/* multi-buffer (XDP_USE_SG, Linux 6.6+), where the kernel takes it */
	uint32_t nruns;		/* runs of run_frames adjacent frames, past the nframes (0: none) */
	uint32_t run_frames;
};

struct xsk_mt;
struct xsk_mt_thr;

/* NULL with errno set. */
struct xsk_mt *xsk_mt_create(const struct xsk_mt_cfg *cfg);
/* Every thread stopped first. */
void xsk_mt_destroy(struct xsk_mt *m);
bool xsk_mt_is_sg(const struct xsk_mt *m);
/* Whether the UMEM's sockets are bound zero-copy (its first socket's mode, read back from the kernel). */
bool xsk_mt_is_zerocopy(const struct xsk_mt *m);
/* Sockets whose queue was busy when first bound (xsk_mt_add waited): what
 * shows a start delayed by another's socket. */
unsigned xsk_mt_busy_binds(const struct xsk_mt *m);
uint32_t xsk_mt_frame_size(const struct xsk_mt *m);
void *xsk_mt_data(const struct xsk_mt *m, uint64_t addr);

/* A thread's part, with `nframes` of the UMEM's frames not yet handed out (NULL: none left). */
struct xsk_mt_thr *xsk_mt_thread(struct xsk_mt *m, uint32_t nframes);
/*
 * Keep n of t's frames out of the fill rings, for its sends: the rings are
 * shared by the threads on a queue, and an idle thread beside a busy one
 * that gave them all it had would never have one to send with (liburma's
 * worker 0, its first PROBE). Only for threads that send their own frames
 * beside others: one that forwards what it receives (the WPS egress) would
 * leave them unused, and a lone thread on many queues would leave some
 * queues without any (default 0).
 */
void xsk_mt_thread_keep(struct xsk_mt_thr *t, uint32_t n);

/*
 * Give t up to n of the UMEM's runs (xsk_mt_cfg.nruns): run_frames frames
 * side by side, where a multi-buffer packet is built whole and sent as it
 * lies, a descriptor per frame, where it would otherwise be built apart and
 * copied into single frames. Runs never go to the fill rings; freeing (or
 * the kernel completing) a run's first frame frees the run, its other
 * frames count for nothing. Like frames, runs move between the threads of
 * a queue through its completion ring.
 */
void xsk_mt_thread_runs(struct xsk_mt_thr *t, uint32_t n);

/*
 * A socket of thread t on (ifname, queue), with an rx ring, a tx ring or
 * both; inserted into xskmap_fd at key when xskmap_fd >= 0. The first socket
 * on a (device, queue) makes its pool; later ones, of any thread, share it.
 * A queue that stays busy (another process's socket) is -EBUSY after
 * XSK_MT_BUSY_WAIT_MS of retries: one just closed is freed by the kernel a
 * moment later, or as soon as the RTNL lock is free (a busy host deleting
 * namespaces holds it for seconds).
 * Returns the socket's index in t, or -errno.
 */
int xsk_mt_add(struct xsk_mt_thr *t, const char *ifname, uint32_t queue, bool rx, bool tx, int xskmap_fd,
	       uint32_t key);

/* Whether this kernel's AF_XDP takes multi-buffer sockets (XDP_USE_SG, Linux
 * 6.6+): a bind naming the flag and no device says EINVAL before 6.6 (an
 * unknown flag), ENODEV after. No device, no UMEM needed. */
bool xsk_mt_sg_supported(void);

int xsk_mt_nsocks(const struct xsk_mt_thr *t);
/* Pool locks t's thread took (refills, reaps): 0 where its pools are its own. */
uint64_t xsk_mt_pool_locks(const struct xsk_mt_thr *t);
/* The queues (below 64) of the device of ifindex t has sockets on, a bit
 * each (in any namespace: the caller's device's index); socket sock's queue. */
uint64_t xsk_mt_queues(const struct xsk_mt_thr *t, unsigned ifindex);
uint32_t xsk_mt_sock_queue(const struct xsk_mt_thr *t, int sock);
int xsk_mt_fd(const struct xsk_mt_thr *t, int sock);

/* The kernel's counters (XDP_STATISTICS) over t's sockets; fill_empty, a
 * queue's and not a socket's, in the counters of the thread whose socket made
 * the queue's pool, so that a sum over the threads counts each queue once. */
void xsk_mt_get_stats(const struct xsk_mt_thr *t, struct xsk_kstats *st);

/* The data path: only t's own thread. A multi-buffer packet's frames come
 * from one xsk_mt_rx call, never split between two (unless it has more
 * frames than max). */
unsigned xsk_mt_rx(struct xsk_mt_thr *t, struct xsk_mt_frame *out, unsigned max);	/* round robin over t's rx sockets */
unsigned xsk_mt_tx(struct xsk_mt_thr *t, int sock, struct xsk_mt_frame *f, unsigned n);	/* how many it took */
void xsk_mt_free(struct xsk_mt_thr *t, uint64_t addr);
/* An empty frame of t's (addr, data; len 0, not `more`), reaping completions
 * first when none is free; false when still none. */
bool xsk_mt_alloc(struct xsk_mt_thr *t, struct xsk_mt_frame *f);
/* A free run of t's (f: its first frame, its bytes going on through the
 * run), reaping completions first when none is free; false when still none. */
bool xsk_mt_alloc_run(struct xsk_mt_thr *t, struct xsk_mt_frame *f);
/* Free slots in the tx ring of t's socket `sock` now (frames xsk_mt_tx takes). */
unsigned xsk_mt_tx_room(struct xsk_mt_thr *t, int sock);
/* Reap t's completions, top up the fill rings of the queues t receives from, kick pending tx. */
void xsk_mt_service(struct xsk_mt_thr *t);
/* Wait up to timeout_ms for rx on t's sockets, or for extra_fd to be readable
 * (-1: none; a descriptor of the caller's own): > 0 maybe ready, 0 timeout, -errno. */
int xsk_mt_poll(struct xsk_mt_thr *t, int extra_fd, int timeout_ms);
uint32_t xsk_mt_free_frames(const struct xsk_mt_thr *t);

#endif
