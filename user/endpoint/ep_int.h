/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The endpoint's state (ep.h), shared by its two files: ep.c opens and
 * closes it (ports, sockets, peers, channels, the UB MTU), ep_datapath.c
 * moves packets (rx into the core, the core's packets out, the waits).
 */
#ifndef UBXDP_EP_INT_H
#define UBXDP_EP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "endpoint/ep.h"
#include "endpoint/ep_share.h"
#include "endpoint/ep_xdp.h"
#include "io/wake_timer.h"
#include "xsk/xsk_handoff.h"
#include "xsk/xsk_mt.h"
#include "xsk/xsk_wake.h"

/* A multi-buffer frame, gathered (rx) or built (tx) in one piece: the
 * largest UB MTU's data packet with every header, and a 9216-byte jumbo frame. */
#define JUMBO_BUF	16384
/* Each worker's runs of JUMBO_BUF / EP_FRAME_SIZE UMEM frames side by side
 * (xsk_mt_thread_runs), where do_tx builds a multi-buffer packet in place:
 * more than a batch's packets (with 2 frames a packet), so that the copy
 * mode's completions, which come back within the batch's sendto, keep it
 * supplied; without one free, a packet is built in jbuf and copied out. */
#define EP_TX_RUNS	256

struct ep {
	struct ep_config cfg;
	struct ep_xdp *xdp[EP_MAX_MEMBERS];
	/* One UMEM and its sockets (user/xsk/xsk_mt.h), driven by this one thread. */
	struct xsk_mt *xm;
	struct xsk_mt_thr *xt;
	/* Multi-buffer AF_XDP (jumbo frames): packets longer than a UMEM frame
	 * come in, and go out, in several; jbuf holds one whole. big: the
	 * devices carry a UB MTU whose packets need that (else every packet is
	 * built in its frame, as without). */
	bool big;
	uint8_t *jbuf;
	struct tp_ep *tp;
	int ifindex;
	struct ep_stats st;
	ep_ctl_fn ctl;
	void *ctl_ctx;
	/* The entity's member ports (one: the device): first socket, MAC, frames
	 * sent; each one's device is its program's (ep_xdp_ifindex). */
	uint32_t nmem;
	int sock0[EP_MAX_MEMBERS];
	uint8_t mac[EP_MAX_MEMBERS][6];
	uint32_t dev_mtu[EP_MAX_MEMBERS];	/* each member device's MTU */
	uint64_t mem_tx[EP_MAX_MEMBERS];
	/*
	 * Next hops: rt asks the route and neighbour tables, for the thread
	 * that drives the endpoint only (ep_peer_init opens its own); mon hears their
	 * changes (and the links' and addresses'), nonblocking, read when a wait
	 * wakes for it and at least every EP_NL_READ_NS while busy. A change
	 * that may move a peer's next hop adds one to nh_gen, and each peer is
	 * looked up again before its next packet leaves (ep_peer.nh_gen).
	 */
	struct nl *rt, *mon;
	uint64_t nh_gen, mon_read_ns;
	/* The time of the sleeps between rounds (ep_progress, ep_wait). */
	struct wake_timer wt;
	/* shared mode (ep_share.h) */
	struct ep_share *sh;
	bool holder;		/* it will hold the device's queues: a multi-buffer UMEM */
	int tx_fd;		/* veth mode: frames leave by this AF_PACKET socket */
	int loop_fd;		/* frames to the device's own jetties: into our veth */
	uint32_t tpn_next;	/* the next TPN to try in the slot's (or worker's) range */
	/* Workers: worker 0 holds the others, the device's program and the
	 * UMEM; each other one has lead pointing back at it. */
	uint32_t nworkers, widx;
	struct ep *lead, *wk[UB_EP_MAX_WORKERS];
	bool folded;		/* the lead's: every worker's frames to it (ep_workers_fold) */
	uint64_t loop_tx, loop_fail;
	/*
	 * Owned queues (ep_workers.c): this worker's sockets are on its own
	 * queues alone, one for each worker there; sock_for[s]: the worker
	 * whose frames socket s takes, plus one (0: this worker's own). A frame
	 * for another is copied to the ring ho[this * nworkers + that] (the
	 * lead's array), and that worker woken through its eventfd when it may
	 * be asleep (xsk/xsk_wake.h).
	 */
	bool owned;
	uint8_t sock_for[XSK_MT_MAX_SOCKS];
	struct xsk_handoff *ho;
	struct xsk_wake wake;	/* ext: a sleep prepared by ep_poll_fds */
};

/* ep_workers.c: the workers' sockets and the frames they pass each other. */
/* e's lead: worker 0, whose struct holds what the workers share (e itself for worker 0). */
static inline struct ep *ep_lead(struct ep *e) { return e->lead ? e->lead : e; }
struct xsk_mt_thr *ep_worker_thread(struct ep *lead);
/* e's sockets on dev's nq queues, at e's keys in xskmap_fd: on every queue,
 * or with workers on as many queues, on its own queues alone (owned). The
 * socket its frames leave by in *tx. 0, or -errno with one line in err. */
int ep_bind_queues(struct ep *e, const char *dev, unsigned nq, int xskmap_fd, int *tx, char *err,
		   size_t errlen);
/* The sockets' threads e's rounds drive: its own, and a folded lead's
 * workers' (owned: their queues are theirs alone). Returns how many. */
int ep_driven(struct ep *e, struct ep **out);
/* The worker whose channel a frame on socket s of o's is for (owned queues:
 * the worker that socket is for; else o's own). */
uint32_t ep_sock_target(const struct ep *o, int s);
/* Up to max socket fds e waits on (its driven threads' rings serviced
 * first): every one, or a folded lead's one a queue. Returns how many. */
int ep_poll_socks(struct ep *e, int *fds, int max);
/* Up to max frames handed to e, each into ep_rx_packet. Returns how many. */
unsigned ep_handoff_drain(struct ep *e, uint64_t now, unsigned max);
/* A frame of n pieces for worker `to`, copied into e's ring to it. */
void ep_handoff_put(struct ep *e, struct ep *to, const struct xsk_mt_frame *fr, unsigned n);
/* Wake `to` if it may be asleep (after a batch of puts, not one each). */
void ep_handoff_wake(struct ep *to);
/* Before a sleep: true when a frame waits already (no sleep then). */
bool ep_handoff_sleep(struct ep *e, bool ext);
/* After one: fd_ready, e's eventfd was readable. */
void ep_handoff_awake(struct ep *e, bool fd_ready);
void ep_handoff_free(struct ep *lead);

/* ep_datapath.c: one received frame's bytes into e's core (or its hook). */
void ep_rx_packet(struct ep *e, uint64_t now, const uint8_t *data, size_t flen);

#endif
