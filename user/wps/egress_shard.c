// SPDX-License-Identifier: BSD-2-Clause
/*
 * A WPS egress reorder thread (egress_run.c starts them): its sockets' frames
 * into its engine, what the engine releases out on the site-facing socket,
 * or to the kernel when the XDP program's FIB lookup did not resolve.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "lib/clock.h"
#include "io/cpus.h"
#include "wps/egress_int.h"
#include "xsk/xsk_mt.h"

static uint32_t fno(const struct eg *g, uint64_t addr)
{
	return (uint32_t)(addr / g->frame_size);
}

/* ---- transmission ------------------------------------------------------- */

static void flush_tx(struct shard *s)
{
	unsigned sent = 0, idle = 0;

	while (sent < s->nb) {
		unsigned got = xsk_mt_tx(s->t, s->out_sock, s->batch + sent, s->nb - sent);

		for (unsigned i = sent; i < sent + got; i++)
			s->tx_xsk += !s->batch[i].more;	/* packets, not frames */
		sent += got;
		if (got) {
			idle = 0;
			continue;
		}
		xsk_mt_service(s->t);
		if (++idle > 100000) {	/* the device stopped taking frames */
			for (unsigned i = sent; i < s->nb; i++) {
				xsk_mt_free(s->t, s->batch[i].addr);
				s->tx_fail += !s->batch[i].more;
			}
			break;
		}
	}
	s->nb = 0;
}

/*
 * The kernel routes the inner packet itself: resolves the neighbour, delivers,
 * or answers ICMP. The packet: iov[0] from its IP header on, then its other
 * frames.
 */
static void to_kernel(struct shard *s, struct iovec *iov, int niov)
{
	struct eg *g = s->g;
	const uint8_t *ip = iov[0].iov_base;
	size_t len = 0, first = iov[0].iov_len;
	struct sockaddr_in sa4 = { .sin_family = AF_INET };
	struct sockaddr_in6 sa6 = { .sin6_family = AF_INET6 };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)niov };
	ssize_t r = -1;

	for (int i = 0; i < niov; i++)
		len += iov[i].iov_len;
	if (first >= 20 && ip[0] >> 4 == 4) {
		memcpy(&sa4.sin_addr, ip + 16, 4);
		m.msg_name = &sa4;
		m.msg_namelen = sizeof(sa4);
		r = sendmsg(g->raw4, &m, 0);
	} else if (first >= 40 && ip[0] >> 4 == 6) {
		memcpy(&sa6.sin6_addr, ip + 24, 16);
		m.msg_name = &sa6;
		m.msg_namelen = sizeof(sa6);
		r = sendmsg(g->raw6, &m, 0);
	}
	if (r == (ssize_t)len)
		s->tx_kernel++;
	else
		s->tx_kernel_fail++;
}

/* A packet's frames after its first, back to the port. */
static void free_segs(struct shard *s, uint64_t addr)
{
	struct eg *g = s->g;

	for (uint32_t k = s->seg[fno(g, addr)].next, n; k != NIL; k = n) {
		n = s->seg[k].next;
		xsk_mt_free(s->t, s->seg[k].addr);
	}
}

/* What the engine released, in its order. */
static void deliver(struct shard *s, const struct wps_out *out, uint32_t n)
{
	struct eg *g = s->g;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t addr = out[i].handle;
		uint8_t *data = xsk_mt_data(g->xm, addr);
		const struct wps_xsk_desc *d = (const void *)data;
		uint32_t len = d->len, l2 = d->l2_off, k = s->seg[fno(g, addr)].next, nsegs = 1;

		for (uint32_t j = k; j != NIL; j = s->seg[j].next)
			nsegs++;
		if (d->fib_rc == 0 && d->ifindex == g->out_if) {
			if (s->nb + nsegs > BATCH)
				flush_tx(s);	/* a packet's frames go in one batch */
			s->batch[s->nb++] = (struct xsk_mt_frame){ .addr = addr + l2, .data = data + l2, .len = len - l2,
								.more = k != NIL };
			for (; k != NIL; k = s->seg[k].next)
				s->batch[s->nb++] = (struct xsk_mt_frame){
					.addr = s->seg[k].addr, .data = xsk_mt_data(g->xm, s->seg[k].addr),
					.len = s->seg[k].len, .more = s->seg[k].next != NIL };
			if (s->nb == BATCH)
				flush_tx(s);
			continue;
		}
		flush_tx(s);	/* keep the order across the two ways out */
		{
			struct iovec iov[MAX_SEGS];
			int niov = 1;

			iov[0] = (struct iovec){ data + l2 + 14, len - l2 - 14 };
			for (; k != NIL && niov < MAX_SEGS; k = s->seg[k].next)
				iov[niov++] = (struct iovec){ xsk_mt_data(g->xm, s->seg[k].addr), s->seg[k].len };
			to_kernel(s, iov, niov);
		}
		free_segs(s, addr);
		xsk_mt_free(s->t, addr);
	}
	/* The batch goes when full, before the kernel path, or at the end of the loop's round. */
}

/* ---- reception ---------------------------------------------------------- */

/* A whole packet, its first frame at `addr`: to the engine with the others of the round. */
static void rx_packet(struct shard *s, uint64_t addr, uint32_t len, bool bad)
{
	s->pend[s->npend++] = (struct pend){ .addr = addr, .len = len, .bad = bad };
}

/*
 * The round's packets into the engine in one batch, in the order they came,
 * the descriptors checked first (the engine overlaps their flow states'
 * cache misses).
 */
_Static_assert(BATCH <= WPS_REORDER_BATCH, "a round's packets are one engine batch");

static void rx_packets(struct shard *s, uint64_t now)
{
	struct eg *g = s->g;
	struct wps_pkt pk[BATCH];
	uint64_t addr[BATCH];
	unsigned m = 0;

	for (unsigned i = 0; i < s->npend; i++) {
		struct wps_xsk_desc *d = xsk_mt_data(g->xm, s->pend[i].addr);
		uint32_t len = s->pend[i].len;

		s->rx++;
		if (s->pend[i].bad || len < sizeof(*d) || d->magic != WPS_XSK_MAGIC || d->l2_off < sizeof(*d) ||
		    (uint32_t)d->l2_off + 14 + 20 > len || d->peer >= g->npeers) {
			s->bad_desc++;
			free_segs(s, s->pend[i].addr);
			xsk_mt_free(s->t, s->pend[i].addr);
			continue;
		}
		d->len = len;	/* the first frame's length travels with it */
		pk[m] = (struct wps_pkt){ .peer = d->peer, .ingress_node = d->ingress_node, .flow_id = d->flow_id,
					  .group_id = d->group_id, .flags = d->flags };
		addr[m++] = s->pend[i].addr;
	}
	s->npend = 0;
	if (m)
		deliver(s, wps_reorder_out(s->e), wps_reorder_rx_batch(s->e, pk, addr, m, now));
}

/* One received frame: a packet, or part of one (multi-buffer: `more` on all but its last). */
static void rx_frame(struct shard *s, const struct xsk_mt_frame *f)
{
	struct eg *g = s->g;
	struct partial *pt = &s->part[f->sock];
	uint32_t k = fno(g, f->addr);
	bool bad = f->sock == s->out_sock;	/* nothing should come in there */

	s->seg[k] = (struct seg){ .addr = f->addr, .len = f->len, .next = NIL };
	if (!pt->open) {
		if (!f->more) {
			rx_packet(s, f->addr, f->len, bad);
			return;
		}
		*pt = (struct partial){ .first = k, .last = k, .nsegs = 1, .open = true, .bad = bad };
		return;
	}
	s->seg[pt->last].next = k;
	pt->last = k;
	if (++pt->nsegs > MAX_SEGS)
		pt->bad = true;
	if (f->more)
		return;
	pt->open = false;
	s->rx_multi++;
	s->bad_multi += pt->bad;
	rx_packet(s, s->seg[pt->first].addr, s->seg[pt->first].len, pt->bad);
}

/* ---- the reorder threads --------------------------------------------------- */

void *wps_eg_shard_main(void *arg)
{
	struct shard *s = arg;
	struct eg *g = s->g;
	struct xsk_mt_frame fr[BATCH];
	unsigned full_batches = 0;

	if (s->cpu >= 0)
		cpus_bind_thread(s->cpu);
	if (g->prio) {
		struct sched_param sp = { .sched_priority = (int)g->prio };

		pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);	/* not permitted: stays as it is */
	}
	while (!*g->stop) {
		uint64_t now = ub_mono_ns(), dl;
		int wait_ms = 100;
		unsigned n;

		pthread_mutex_lock(&s->lock);
		dl = wps_reorder_next_deadline(s->e);
		if (dl != UINT64_MAX)
			wait_ms = dl <= now ? 0 : (int)((dl - now + 999999) / 1000000 < 100 ? (dl - now + 999999) / 1000000 : 100);
		n = xsk_mt_rx(s->t, fr, BATCH);
		if (!n && wait_ms) {
			pthread_mutex_unlock(&s->lock);
			xsk_mt_poll(s->t, -1, wait_ms);
			pthread_mutex_lock(&s->lock);
			n = xsk_mt_rx(s->t, fr, BATCH);
		}
		now = ub_mono_ns();
		for (unsigned i = 0; i < n; i++)
			__builtin_prefetch(fr[i].data);	/* the descriptors, written on another CPU */
		for (unsigned i = 0; i < n; i++)
			rx_frame(s, &fr[i]);
		rx_packets(s, now);
		/* A full batch may leave frames in the rings, the group a timer waits for among
		 * them (this thread was descheduled while the paths kept delivering): expire
		 * timers once the rings are read dry or, under overload, once as many frames
		 * as they hold have been read (what was there at the deadline is in). */
		if (n < BATCH || ++full_batches >= s->nrx * RING_SIZE / BATCH) {
			full_batches = 0;
			deliver(s, wps_reorder_out(s->e), wps_reorder_tick(s->e, now));
		}
		flush_tx(s);	/* one send for the round's releases */
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_lock(&s->lock);
	deliver(s, wps_reorder_out(s->e), wps_reorder_flush(s->e));
	flush_tx(s);
	pthread_mutex_unlock(&s->lock);
	for (int i = 0; i < 100; i++)	/* let the last frames leave */
		xsk_mt_service(s->t);
	return NULL;
}
