// SPDX-License-Identifier: BSD-2-Clause
/*
 * The endpoint's workers (ep.h): their UMEM frames, their sockets on the
 * device's queues, the frames they hand each other, the fold onto worker 0.
 *
 * With W workers on a device of Q >= W queues (the default: ep_workers_for),
 * queue q is worker q % W's alone: only it has sockets there, so the pool's
 * fill and completion rings have one thread and take no lock (xsk_mt.h), and
 * it transmits by its own queues only. On each of its queues it holds one
 * socket for every worker, at that worker's key of the program's map
 * (w * UB_EP_MAX_QUEUES + q): the program is unchanged, and the socket a
 * frame came in on says whose channel it is. A frame for another worker is
 * copied into a single-producer single-consumer ring to it (xsk/xsk_handoff.h)
 * and its UMEM frame freed at once; the other drains its rings as it reads
 * its sockets. On a veth whose peer's worker w sends by queue w that is
 * rare; behind a router, or a NIC's RSS, it is common. A full ring drops the
 * frame (rx_handoff_drop; the transport resends).
 *
 * Where shared pools remain, under their lock: more workers than queues
 * (an explicit --workers past them: every worker on every queue), a shared
 * endpoint's own veth (one queue), and the WPS egress (user/wps), whose
 * reorder threads share every queue by design.
 */
#include "endpoint/ep_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "io/cpus.h"
#include "xsk/xsk_port.h"

/* Every handoff ring's slots together, at most: many workers on a
 * jumbo-frame device would map gigabytes. Each slot takes its frame and 64
 * bytes (its length, aligned: xsk_handoff.c). The fewest slots a ring has,
 * HO_MIN_SLOTS, keep within it the most workers on the largest slots. */
#define HO_BUDGET	(64u << 20)
#define HO_SLOT_COST(s)	((uint64_t)(s) + 64)
#define HO_MIN_SLOTS	16u
#define HO_MAX_SLOTS	1024u
_Static_assert((uint64_t)UB_EP_MAX_WORKERS * (UB_EP_MAX_WORKERS - 1) * HO_MIN_SLOTS * HO_SLOT_COST(JUMBO_BUF) <=
		       HO_BUDGET,
	       "the handoff rings' fewest slots overrun their budget");

/*
 * A worker's part of the UMEM. Beside other workers it keeps a quarter of
 * its frames for its sends (xsk_mt_thread_keep): an idle worker 0 gave the
 * shared fill rings all of its own, and its first PROBE never left. A
 * quarter, not a half: the first pool made is filled for one pool, and a
 * half kept left the next ones empty. One worker keeps none: alone on many
 * queues, it would leave some without frames.
 */
struct xsk_mt_thr *ep_worker_thread(struct ep *lead)
{
	uint32_t nf = lead->cfg.nframes ? lead->cfg.nframes : 8192;
	struct xsk_mt_thr *t = xsk_mt_thread(lead->xm, nf);

	if (t && lead->nworkers > 1)
		xsk_mt_thread_keep(t, nf / 4);
	if (t)
		xsk_mt_thread_runs(t, EP_TX_RUNS);
	return t;
}

/* The lead's rings, one for each (from, to) pair of workers, slots as large
 * as dev's largest frame. */
static int handoff_rings(struct ep *lead, const char *dev, char *err, size_t errlen)
{
	const uint32_t w = lead->nworkers, pairs = w * (w - 1);
	uint32_t mtu = 0, slot, n = HO_MAX_SLOTS;
	int rc;

	if (lead->ho)
		return 0;
	if (ep_dev_mtu(dev, &mtu, err, errlen))
		return -EIO;
	slot = (mtu + 64 + 63) & ~63u;	/* the Ethernet header, a VLAN tag, LPH and NTH */
	if (slot > JUMBO_BUF)
		slot = JUMBO_BUF;
	while (n > HO_MIN_SLOTS && n * HO_SLOT_COST(slot) * pairs > HO_BUDGET)
		n /= 2;
	lead->ho = calloc((size_t)w * w, sizeof(*lead->ho));
	if (!lead->ho) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < w * w; i++)
		if (i / w != i % w && (rc = xsk_handoff_init(&lead->ho[i], n, slot))) {
			snprintf(err, errlen, "handoff ring of %u frames: %s", n, strerror(-rc));
			return rc;
		}
	return 0;
}

void ep_handoff_free(struct ep *lead)
{
	const uint32_t w = lead->nworkers;

	for (uint32_t k = 0; k < w; k++) {
		struct ep *x = k ? lead->wk[k] : lead;

		if (x)
			xsk_wake_close(&x->wake);
	}
	if (!lead->ho)
		return;
	for (uint32_t i = 0; i < w * w; i++)
		xsk_handoff_fini(&lead->ho[i]);
	free(lead->ho);
	lead->ho = NULL;
}

static int add_sock(struct ep *e, const char *dev, unsigned q, bool tx, int xskmap_fd, uint32_t w, char *err,
		    size_t errlen)
{
	int s = xsk_mt_add(e->xt, dev, q, true, tx, xskmap_fd, w * UB_EP_MAX_QUEUES + q);

	if (s < 0) {
		snprintf(err, errlen, "AF_XDP socket on %s queue %u: %s%s", dev, q, strerror(-s),
			 xsk_mode_refusal(e->cfg.xsk_mode, s));
		return s;
	}
	e->sock_for[s] = w == e->widx ? 0 : (uint8_t)(w + 1);
	return s;
}

int ep_bind_queues(struct ep *e, const char *dev, unsigned nq, int xskmap_fd, int *tx, char *err, size_t errlen)
{
	const uint32_t nw = e->nworkers;
	int s, rc;

	if (nw <= 1 || nq < nw) {
		/* Every queue: a socket of its own at its own key, and frames out
		 * by queue widx (mod the queues), the workers' by different ones. */
		*tx = xsk_mt_nsocks(e->xt) + (int)(nq ? e->widx % nq : 0);
		for (unsigned q = 0; q < nq; q++)
			if ((s = add_sock(e, dev, q, true, xskmap_fd, e->widx, err, errlen)) < 0)
				return s;
		return 0;
	}
	rc = handoff_rings(ep_lead(e), dev, err, errlen);
	if (rc)
		return rc;
	e->ho = ep_lead(e)->ho;
	if ((rc = xsk_wake_open(&e->wake))) {
		snprintf(err, errlen, "eventfd: %s", strerror(-rc));
		return rc;
	}
	e->owned = true;
	for (unsigned q = e->widx; q < nq; q += nw) {
		/* Its own first: on queue widx, the socket its frames leave by. */
		if ((s = add_sock(e, dev, q, true, xskmap_fd, e->widx, err, errlen)) < 0)
			return s;
		if (q == e->widx)
			*tx = s;
		for (uint32_t w = 0; w < nw; w++)
			if (w != e->widx && (s = add_sock(e, dev, q, false, xskmap_fd, w, err, errlen)) < 0)
				return s;
	}
	return 0;
}

int ep_driven(struct ep *e, struct ep **out)
{
	int n = 0;

	out[n++] = e;
	if (!e->lead && e->folded && e->owned)
		for (uint32_t w = 1; w < e->nworkers; w++)
			out[n++] = e->wk[w];
	return n;
}

uint32_t ep_sock_target(const struct ep *o, int s)
{
	return o->sock_for[s] ? o->sock_for[s] - 1u : o->widx;
}

/* A folded lead's map sends every frame to the owner's socket for worker 0
 * on its queue (ep_workers_fold), so it waits on those alone: one a queue,
 * where every worker's would pass poll()'s EP_WAIT_MAX_FDS on many queues. */
int ep_poll_socks(struct ep *e, int *fds, int max)
{
	struct ep *src[UB_EP_MAX_WORKERS];
	const int ns = ep_driven(e, src);
	const bool folded = !e->lead && e->folded && e->owned;
	int n = 0;

	for (int j = 0; j < ns; j++) {
		xsk_mt_service(src[j]->xt);
		for (int k = 0; k < xsk_mt_nsocks(src[j]->xt) && n < max; k++)
			if (!folded || !ep_sock_target(src[j], k))
				fds[n++] = xsk_mt_fd(src[j]->xt, k);
	}
	return n;
}

void ep_handoff_put(struct ep *e, struct ep *to, const struct xsk_mt_frame *fr, unsigned n)
{
	struct xsk_handoff *h = &e->ho[e->widx * e->nworkers + to->widx];
	uint8_t *p = xsk_handoff_reserve(h);
	uint32_t len = 0;

	for (unsigned i = 0; i < n; i++)
		len += fr[i].len;
	if (!p || len > h->slot_size) {
		e->st.rx_handoff_drop++;
		return;
	}
	len = 0;
	for (unsigned i = 0; i < n; i++) {
		memcpy(p + len, fr[i].data, fr[i].len);
		len += fr[i].len;
	}
	xsk_handoff_push(h, len);
	e->st.rx_handoff++;
}

unsigned ep_handoff_drain(struct ep *e, uint64_t now, unsigned max)
{
	/* Folded: what was handed to a worker is its lead's now (ep_workers_fold). */
	struct ep *to = e->lead && e->lead->folded ? e->lead : e;
	unsigned n = 0;

	if (!e->ho)
		return 0;
	for (uint32_t from = 0; from < e->nworkers; from++) {
		struct xsk_handoff *h = &e->ho[from * e->nworkers + e->widx];
		const uint8_t *p;
		uint32_t len;

		for (; from != e->widx && n < max && (p = xsk_handoff_peek(h, &len)); n++) {
			ep_rx_packet(to, now, p, len);
			xsk_handoff_pop(h);
		}
	}
	return n;
}

void ep_handoff_wake(struct ep *to)
{
	xsk_wake_kick(&to->wake);
}

bool ep_handoff_sleep(struct ep *e, bool ext)
{
	return e->ho && xsk_wake_sleep(&e->wake, ext, &e->ho[e->widx], e->nworkers, e->nworkers, e->widx);
}

void ep_handoff_awake(struct ep *e, bool fd_ready)
{
	xsk_wake_awake(&e->wake, fd_ready);
}

/* The CPUs the calling thread may run on (taskset, a cgroup's cpuset), not
 * every online one: a worker more than those only shares a CPU with another. */
uint32_t ep_workers_for(const char *dev)
{
	long cpus = cpus_usable();
	uint32_t n = xsk_dev_queues(dev, UB_EP_MAX_WORKERS);

	return cpus > 0 && (uint32_t)cpus < n ? (uint32_t)cpus : n;
}

struct ep *ep_worker(struct ep *e, uint32_t w)
{
	if (!w)
		return e;
	return w < e->nworkers ? e->wk[w] : NULL;
}

/* Worker w's entries in the program's map, queue by queue, to the sockets of
 * worker `to` (socket s of every worker is on queue s: one device, every
 * worker on every queue). */
static int workers_point(struct ep *e, uint32_t w, const struct ep *to)
{
	const int xsks = ep_xdp_xskmap_fd(e->xdp[0]);

	for (int s = 0; s < xsk_mt_nsocks(to->xt); s++) {
		uint32_t key = w * UB_EP_MAX_QUEUES + (uint32_t)s;
		int fd = xsk_mt_fd(to->xt, s);

		if (bpf_map_update_elem(xsks, &key, &fd, 0))
			return -errno;
	}
	return 0;
}

/* Owned queues: every worker's key on each queue to the owner's socket
 * there for worker 0 (fold), or back to its own socket (not). */
static int owned_point(struct ep *lead, bool fold)
{
	const int xsks = ep_xdp_xskmap_fd(lead->xdp[0]);

	for (uint32_t o = 0; o < lead->nworkers; o++) {
		const struct ep *x = ep_worker(lead, o);

		for (int s = 0; s < xsk_mt_nsocks(x->xt); s++) {
			uint32_t w = ep_sock_target(x, s), q = xsk_mt_sock_queue(x->xt, s);
			uint32_t key = w * UB_EP_MAX_QUEUES + q;
			int fd = xsk_mt_fd(x->xt, s);

			for (int z = 0; fold && z < xsk_mt_nsocks(x->xt); z++)
				if (!ep_sock_target(x, z) && xsk_mt_sock_queue(x->xt, z) == q)
					fd = xsk_mt_fd(x->xt, z);
			if (w && bpf_map_update_elem(xsks, &key, &fd, 0))
				return -errno;
		}
	}
	return 0;
}

/* Owned queues keep their sockets (only an owner's socket can read its
 * queue), the map's entries move to each queue's socket for worker 0, read
 * by worker 0's thread (ep_driven, ep_poll_socks). Else the map's entries
 * move to worker 0's sockets. */
int ep_workers_fold(struct ep *e)
{
	int rc = 0;

	if (e->lead || e->nworkers <= 1)
		return -EINVAL;
	if (e->owned)
		rc = owned_point(e, true);
	for (uint32_t w = 1; w < e->nworkers && !rc && !e->owned; w++)
		rc = workers_point(e, w, e);
	if (rc) {
		/* Back as it was: no worker half folded, whose channels would
		 * miss the frames of some queues. */
		if (e->owned)
			owned_point(e, false);
		for (uint32_t w = 1; w < e->nworkers && !e->owned; w++)
			workers_point(e, w, e->wk[w]);
		return rc;
	}
	e->folded = true;
	/* What came before: dropped by the workers' cores, which have no
	 * channel, and counted (owned: what their sockets and rings held is
	 * worker 0's now, taken by its core as they go). Nothing new comes, so
	 * until they are empty. No setup hook there: the caller (ubperf's
	 * server) may hold the lock its hook takes, and a hello there has no
	 * channel to reach either. */
	for (uint32_t w = 1; w < e->nworkers; w++) {
		ep_set_ctl(e->wk[w], NULL, NULL);
		while (ep_progress(e->wk[w], 0) + ep_handoff_drain(e, ep_now_ns(), ~0u) > 0)
			;
	}
	return 0;
}
