// SPDX-License-Identifier: BSD-2-Clause
/*
 * WPS egress gateway loop (egress_run.h).
 *
 * R = 1 frames arrive through the XSKMAP already laid out by the XDP program
 * (struct wps_xsk_desc at the start, a ready Ethernet header at l2_off before
 * the inner packet). The loop keeps only their UMEM addresses in the reorder
 * engine; what the engine releases is transmitted on the site-facing socket
 * from l2_off, in the order released, without a copy. A frame whose FIB
 * lookup did not resolve (neighbour unknown, another device, local) goes to
 * the kernel as the plain inner packet through a raw socket, so the kernel
 * resolves the neighbour or delivers it instead of the packet being lost.
 *
 * Every core: N reorder threads (shards), each with its own engine, its own
 * AF_XDP socket on every rx queue of every domain device and one on the
 * site-facing device. The XDP program sends a frame to the socket of its
 * flow's shard (wps_eg_shard: peer, Ingress Node ID, Flow ID) on the queue it
 * came in on, so a flow's order is one thread's to keep, whatever queue or
 * CPU its frames arrive on. The sockets of one queue share its buffer pool
 * (user/xsk/xsk_mt.h). The main thread only writes the statistics.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "egress_run.h"
#include "egress_stats.h"
#include "run_link.h"
#include "wps_egress.skel.h"
#include "wps_opt.h"
#include "xsk_mt.h"
#include "xsk_port.h"	/* xsk_dev_queues() */

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

static uint32_t fno(const struct eg *g, uint64_t addr)
{
	return (uint32_t)(addr / g->frame_size);
}

/* Our outer addresses: every IPv6 address of this node but loopback and link-local. */
static int load_local_addrs(struct eg *g, char *err, size_t errlen)
{
	int fd = bpf_map__fd(g->skel->maps.wps_eg_local), n = 0;
	struct ifaddrs *ifa, *i;
	__u8 one = 1;

	if (getifaddrs(&ifa)) {
		snprintf(err, errlen, "getifaddrs: %s", strerror(errno));
		return -1;
	}
	for (i = ifa; i; i = i->ifa_next) {
		const struct in6_addr *a;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET6)
			continue;
		a = &((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr;
		if (IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_MULTICAST(a))
			continue;
		if (n < WPS_EG_MAX_LOCAL && !bpf_map_update_elem(fd, a, &one, 0))
			n++;
	}
	freeifaddrs(ifa);
	if (!n) {
		snprintf(err, errlen, "this node has no IPv6 address for the ingress to send to");
		return -1;
	}
	return 0;
}

/* The peers' map entries (egress_peers.h); with --any-peer, none. */
static int load_peers(struct eg *g, char *err, size_t errlen)
{
	static struct wps_eg_peer_key keys[WPS_EG_MAX_PEER_KEYS];
	static uint32_t idx[WPS_EG_MAX_PEER_KEYS];
	int fd = bpf_map__fd(g->skel->maps.wps_eg_peers);
	unsigned n = wps_eg_peers_keys(&g->o->peers, keys, idx);

	for (unsigned i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, &keys[i], &idx[i], 0)) {
			snprintf(err, errlen, "peer map: %s", strerror(errno));
			return -1;
		}
	return 0;
}

static int on_log(void *ctx, void *data, size_t len)
{
	const struct wps_eg_log *r = data;
	char src[INET6_ADDRSTRLEN], dev[IF_NAMESIZE] = "?";

	(void)ctx;
	if (len < sizeof(*r))
		return 0;
	inet_ntop(AF_INET6, r->saddr, src, sizeof(src));
	if_indextoname(r->ifindex, dev);
	fprintf(stderr, "wps egress: dropped (%s) on %s from %s: ingress %u flow %u egress %u group %u opt len %u\n",
		wps_eg_counter_name(r->reason), dev, src, r->ingress_node, r->flow_id, r->egress_node,
		r->group_id, r->opt_len);
	return 0;
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
 * The round's packets into the engine, in the order they came: the
 * descriptors checked first, then each packet with the flow state of one a
 * few ahead prefetched (with many flows that state is a cache miss).
 */
#define PF_FAR		16
#define PF_NEAR		8

static void rx_packets(struct shard *s, uint64_t now)
{
	struct eg *g = s->g;
	struct wps_pkt pk[BATCH];
	uint64_t addr[BATCH];
	unsigned m = 0;
	bool pf;

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
	pf = wps_reorder_wants_prefetch(s->e);
	for (unsigned i = 0; pf && i < m && i < PF_FAR; i++)
		wps_reorder_prefetch(s->e, &pk[i], 0);
	for (unsigned i = 0; pf && i < m && i < PF_NEAR; i++)
		wps_reorder_prefetch(s->e, &pk[i], 1);
	for (unsigned i = 0; i < m; i++) {
		if (pf && i + PF_FAR < m)
			wps_reorder_prefetch(s->e, &pk[i + PF_FAR], 0);
		if (pf && i + PF_NEAR < m)
			wps_reorder_prefetch(s->e, &pk[i + PF_NEAR], 1);
		deliver(s, wps_reorder_out(s->e), wps_reorder_rx(s->e, &pk[i], addr[i], now));
	}
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

/* ---- statistics ------------------------------------------------------- */

struct flow_json {
	FILE *f;
	int n;
	unsigned shard;
};

static int flow_to_json(uint16_t peer, uint16_t node, uint16_t fid, uint16_t neg, const struct wps_flow_stats *s,
			void *arg)
{
	struct flow_json *j = arg;

	fprintf(j->f,
		"%s{\"peer\":%u,\"ingress_node\":%u,\"flow_id\":%u,\"shard\":%u,\"next_expected_group\":%u,"
		"\"packets\":%llu,\"groups\":%llu,\"ooo_groups\":%llu,\"late_packets\":%llu,\"late_groups\":%llu,"
		"\"timer_expiries\":%llu,\"bound_releases\":%llu,\"suspect\":%llu,\"buffered\":%u,\"hwm\":%u}",
		j->n ? "," : "", peer, node, fid, j->shard, neg, (unsigned long long)s->pkts,
		(unsigned long long)s->groups, (unsigned long long)s->ooo_groups, (unsigned long long)s->late_pkts,
		(unsigned long long)s->late_groups, (unsigned long long)s->timer_expiries,
		(unsigned long long)s->bound_releases, (unsigned long long)s->suspect, s->buffered, s->hwm);
	return ++j->n >= 10000;	/* the busiest part of a huge table is enough */
}

/* The shards' engines and loops added up (each read under its lock). */
struct totals {
	struct wps_total_stats t;
	uint64_t rx, bad_desc, tx_xsk, tx_kernel, tx_kernel_fail, tx_fail, rx_multi;
};

static void add_flow_stats(struct wps_flow_stats *a, const struct wps_flow_stats *b)
{
	a->pkts += b->pkts;
	a->groups += b->groups;
	a->ooo_groups += b->ooo_groups;
	a->late_pkts += b->late_pkts;
	a->late_groups += b->late_groups;
	a->timer_expiries += b->timer_expiries;
	a->bound_releases += b->bound_releases;
	a->suspect += b->suspect;
	a->buffered += b->buffered;
	a->hwm += b->hwm;
}

/*
 * Occupancy high-water marks add up over the shards (an upper bound of the
 * whole's: the shards' peaks need not coincide); timeouts and skews are the
 * largest of any shard.
 */
static void totals(struct eg *g, struct totals *x)
{
	memset(x, 0, sizeof(*x));
	for (unsigned i = 0; i < g->nshards; i++) {
		struct shard *s = &g->sh[i];
		struct wps_total_stats t;

		pthread_mutex_lock(&s->lock);
		wps_reorder_totals(s->e, &t);
		x->rx += s->rx, x->bad_desc += s->bad_desc, x->tx_xsk += s->tx_xsk, x->tx_kernel += s->tx_kernel;
		x->tx_kernel_fail += s->tx_kernel_fail, x->tx_fail += s->tx_fail, x->rx_multi += s->rx_multi;
		pthread_mutex_unlock(&s->lock);
		add_flow_stats(&x->t.f, &t.f);
		for (unsigned a = 0; a < WPS_ACT__MAX; a++)
			x->t.actions[a] += t.actions[a];
		x->t.flows_created += t.flows_created;
		x->t.flows_reclaimed += t.flows_reclaimed;
		x->t.flows_policed += t.flows_policed;
		x->t.flows_policed_total += t.flows_policed_total;
		x->t.flows_table_full += t.flows_table_full;
		x->t.flows += t.flows;
		x->t.buffered += t.buffered;
		x->t.hwm += t.hwm;
		if (t.timeout_ns > x->t.timeout_ns)
			x->t.timeout_ns = t.timeout_ns;
		if (t.skew_ns > x->t.skew_ns)
			x->t.skew_ns = t.skew_ns;
	}
}

static void peer_totals(struct eg *g, uint16_t peer, struct wps_peer_stats *ps)
{
	memset(ps, 0, sizeof(*ps));
	for (unsigned i = 0; i < g->nshards; i++) {
		struct wps_peer_stats p;

		pthread_mutex_lock(&g->sh[i].lock);
		wps_reorder_peer(g->sh[i].e, peer, &p);
		pthread_mutex_unlock(&g->sh[i].lock);
		ps->flows += p.flows;
		ps->buffered += p.buffered;
		ps->hwm += p.hwm;
		ps->flows_created += p.flows_created;
		ps->flows_policed += p.flows_policed;
		ps->flows_policed_total += p.flows_policed_total;
		ps->flows_table_full += p.flows_table_full;
		ps->bound_releases += p.bound_releases;
		if (p.timeout_ns > ps->timeout_ns)
			ps->timeout_ns = p.timeout_ns;
		if (p.skew_ns > ps->skew_ns)
			ps->skew_ns = p.skew_ns;
	}
}

static void write_stats(struct eg *g)
{
	char tmp[4200];
	struct totals x;
	struct wps_total_stats *t = &x.t;
	__u64 xdp[WPS_EG_CNT__MAX] = { 0 };
	struct flow_json j = { 0 };
	FILE *f;

	if (!g->o->stats_path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", g->o->stats_path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	totals(g, &x);
	wps_eg_counters_read(bpf_map__fd(g->skel->maps.wps_eg_stats), xdp);
	fprintf(f, "{\"xdp\":{");
	for (int i = 0; i < WPS_EG_CNT__MAX; i++)
		fprintf(f, "%s\"%s\":%llu", i ? "," : "", wps_eg_counter_name((unsigned)i), (unsigned long long)xdp[i]);
	fprintf(f, "},\"reorder\":{\"packets\":%llu,\"groups\":%llu,\"ooo_groups\":%llu,\"late_packets\":%llu,"
		"\"late_groups\":%llu,\"timer_expiries\":%llu,\"bound_releases\":%llu,\"suspect\":%llu,"
		"\"buffered\":%u,\"hwm\":%u,\"flows\":%u,\"flows_created\":%llu,\"flows_reclaimed\":%llu,"
		"\"flows_policed\":%llu,\"flows_policed_total\":%llu,\"flows_table_full\":%llu,"
		"\"release_timeout_us\":%llu,\"skew_us\":%llu,"
		"\"released\":{",
		(unsigned long long)t->f.pkts, (unsigned long long)t->f.groups, (unsigned long long)t->f.ooo_groups,
		(unsigned long long)t->f.late_pkts, (unsigned long long)t->f.late_groups,
		(unsigned long long)t->f.timer_expiries, (unsigned long long)t->f.bound_releases,
		(unsigned long long)t->f.suspect, t->buffered, t->hwm, t->flows, (unsigned long long)t->flows_created,
		(unsigned long long)t->flows_reclaimed, (unsigned long long)t->flows_policed,
		(unsigned long long)t->flows_policed_total, (unsigned long long)t->flows_table_full,
		(unsigned long long)(t->timeout_ns / 1000), (unsigned long long)(t->skew_ns / 1000));
	for (unsigned a = 0; a < WPS_ACT__MAX; a++)
		fprintf(f, "%s\"%s\":%llu", a ? "," : "", wps_action_name(a), (unsigned long long)t->actions[a]);
	fprintf(f, "}},\"io\":{\"rx\":%llu,\"bad_descriptor\":%llu,\"tx_xsk\":%llu,\"tx_kernel\":%llu,"
		"\"tx_kernel_failed\":%llu,\"tx_failed\":%llu,\"rx_multi_buffer\":%llu,\"frame_size\":%u,"
		"\"multi_buffer\":%u,\"threads\":%u},\"shards\":[",
		(unsigned long long)x.rx, (unsigned long long)x.bad_desc, (unsigned long long)x.tx_xsk,
		(unsigned long long)x.tx_kernel, (unsigned long long)x.tx_kernel_fail, (unsigned long long)x.tx_fail,
		(unsigned long long)x.rx_multi, g->frame_size, xsk_mt_is_sg(g->xm) ? 1u : 0u, g->nshards);
	for (unsigned i = 0; i < g->nshards; i++) {
		struct shard *s = &g->sh[i];
		struct wps_total_stats st;

		pthread_mutex_lock(&s->lock);
		wps_reorder_totals(s->e, &st);
		fprintf(f, "%s{\"shard\":%u,\"cpu\":%d,\"rx\":%llu,\"tx_xsk\":%llu,\"packets\":%llu,\"flows\":%u,"
			"\"buffered\":%u,\"hwm\":%u}", i ? "," : "", i, s->cpu, (unsigned long long)s->rx,
			(unsigned long long)s->tx_xsk, (unsigned long long)st.f.pkts, st.flows, st.buffered, st.hwm);
		pthread_mutex_unlock(&s->lock);
	}
	fprintf(f, "],\"peers\":[");
	for (unsigned k = 0; k < g->npeers; k++) {
		struct wps_peer_stats ps;
		char addr[INET6_ADDRSTRLEN] = "any";

		peer_totals(g, (uint16_t)k, &ps);
		if (!g->o->any_peer)
			wps_eg_peer_name(&g->o->peers, k, addr, sizeof(addr));
		fprintf(f, "%s{\"peer\":%u,\"addr\":\"%s\",\"flows\":%u,\"buffered\":%u,\"hwm\":%u,"
			"\"flows_created\":%llu,\"flows_policed\":%llu,\"flows_policed_total\":%llu,"
			"\"flows_table_full\":%llu,\"bound_releases\":%llu,\"release_timeout_us\":%llu,\"skew_us\":%llu}",
			k ? "," : "", k, addr, ps.flows, ps.buffered, ps.hwm, (unsigned long long)ps.flows_created,
			(unsigned long long)ps.flows_policed, (unsigned long long)ps.flows_policed_total,
			(unsigned long long)ps.flows_table_full, (unsigned long long)ps.bound_releases,
			(unsigned long long)(ps.timeout_ns / 1000), (unsigned long long)(ps.skew_ns / 1000));
	}
	fprintf(f, "],\"flows\":[");
	j.f = f;
	for (unsigned i = 0; i < g->nshards && j.n < 10000; i++) {
		j.shard = i;
		pthread_mutex_lock(&g->sh[i].lock);
		wps_reorder_foreach(g->sh[i].e, flow_to_json, &j);
		pthread_mutex_unlock(&g->sh[i].lock);
	}
	fprintf(f, "]}\n");
	if (fclose(f) == 0)
		rename(tmp, g->o->stats_path);
}

static void live_line(struct eg *g)
{
	struct totals x;
	__u64 xdp[WPS_EG_CNT__MAX] = { 0 };
	__u64 bad = 0;

	totals(g, &x);
	wps_eg_counters_read(bpf_map__fd(g->skel->maps.wps_eg_stats), xdp);
	for (int i = WPS_EG_CNT_BAD_OPT_LEN; i <= WPS_EG_CNT_DROP_CE_NOT_ECT; i++)
		bad += xdp[i];
	fprintf(stderr,
		"wps egress: rx %llu tx %llu kernel %llu | flows %u buffered %u (hwm %u) ooo %llu late %llu "
		"timer %llu bound %llu timeout %lluus | xdp r0 %llu invalid %llu\n",
		(unsigned long long)x.rx, (unsigned long long)x.tx_xsk, (unsigned long long)x.tx_kernel, x.t.flows,
		x.t.buffered, x.t.hwm, (unsigned long long)x.t.f.ooo_groups, (unsigned long long)x.t.f.late_pkts,
		(unsigned long long)x.t.f.timer_expiries, (unsigned long long)x.t.f.bound_releases,
		(unsigned long long)(x.t.timeout_ns / 1000),
		(unsigned long long)(xdp[WPS_EG_CNT_R0_FWD] + xdp[WPS_EG_CNT_R0_KERNEL]), (unsigned long long)bad);
}

/* ---- the reorder threads --------------------------------------------------- */

static void *shard_main(void *arg)
{
	struct shard *s = arg;
	struct eg *g = s->g;
	struct xsk_mt_frame fr[BATCH];
	unsigned full_batches = 0;

	if (s->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(s->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
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
			xsk_mt_poll(s->t, wait_ms);
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

/* ---- set up and tear down ----------------------------------------------- */

/* The longest frame a device may receive: its MTU and an Ethernet header with a VLAN tag. */
static unsigned dev_frame_len(const char *dev)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), mtu = 1500;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (fd >= 0 && !ioctl(fd, SIOCGIFMTU, &ifr))
		mtu = ifr.ifr_mtu;
	if (fd >= 0)
		close(fd);
	return (unsigned)mtu + 18;
}

unsigned wps_eg_default_threads(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	n = CPU_COUNT(&set);
	return n < 1 ? 1 : n > WPS_EG_MAX_SHARDS ? WPS_EG_MAX_SHARDS : (unsigned)n;
}

/* The k-th CPU this process may run on (-1: none). */
static int nth_cpu(unsigned k)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set) && !k--)
			return c;
	return -1;
}

static void stop_threads(struct eg *g)
{
	*g->stop = 1;
	for (unsigned i = 0; i < g->nshards; i++)
		if (g->sh[i].started) {
			pthread_join(g->sh[i].th, NULL);
			g->sh[i].started = false;
		}
}

static void teardown(struct eg *g)
{
	stop_threads(g);
	for (int i = 0; i < g->o->ndevs; i++)
		if (g->link[i] >= 0)
			close(g->link[i]);
	if (g->o->pin_dir && g->skel) {
		bpf_map__unpin(g->skel->maps.wps_eg_stats, NULL);
		bpf_map__unpin(g->skel->maps.wps_eg_cfg, NULL);
	}
	if (g->o->stats_path)
		unlink(g->o->stats_path);
	ring_buffer__free(g->log);
	xsk_mt_destroy(g->xm);
	wps_egress__destroy(g->skel);
	for (unsigned i = 0; i < WPS_EG_MAX_SHARDS; i++) {
		wps_reorder_free(g->sh[i].e);
		free(g->sh[i].seg);
		if (g->sh[i].g)
			pthread_mutex_destroy(&g->sh[i].lock);
	}
	if (g->raw4 >= 0)
		close(g->raw4);
	if (g->raw6 >= 0)
		close(g->raw6);
}

/* A shard's part of a bound shared by all: at least 1 where the whole is not 0. */
static uint32_t share_of(uint32_t v, unsigned n)
{
	return v && v / n == 0 ? 1 : v / n;
}

static int setup(struct eg *g, char *err, size_t errlen)
{
	const struct wps_eg_run_opts *o = g->o;
	struct wps_eg_cfg cfg = { .node_id = o->node_id, .log_per_sec = o->log_per_sec,
				  .flags = o->any_peer ? WPS_EG_F_ANY_PEER : 0 };
	struct xsk_mt_cfg xcfg = { .ring_size = RING_SIZE, .zerocopy = o->zerocopy };
	unsigned queues[WPS_EG_MAX_DEVS], npools = 0, max_frame = 0, fpp, out_queues;
	struct wps_reorder_cfg rcfg;
	__u32 zero = 0;
	char path[512];
	int xsk_fd;

	g->out_if = if_nametoindex(o->out_dev);
	if (!g->out_if) {
		snprintf(err, errlen, "no device '%s'", o->out_dev);
		return -1;
	}
	for (int i = 0; i < o->ndevs; i++) {
		g->ifindex[i] = if_nametoindex(o->devs[i]);
		if (!g->ifindex[i]) {
			snprintf(err, errlen, "no device '%s'", o->devs[i]);
			return -1;
		}
		if (g->ifindex[i] == g->out_if) {
			snprintf(err, errlen, "'%s' is both domain-facing (--dev) and site-facing (--out-dev)", o->devs[i]);
			return -1;
		}
		for (int k = 0; k < i; k++)
			if (g->ifindex[k] == g->ifindex[i]) {
				snprintf(err, errlen, "device '%s' given twice", o->devs[i]);
				return -1;
			}
		queues[i] = xsk_dev_queues(o->devs[i], WPS_EG_MAX_QUEUES);
		npools += queues[i];
		if (dev_frame_len(o->devs[i]) > max_frame)
			max_frame = dev_frame_len(o->devs[i]);
	}
	g->nshards = o->threads ? o->threads : wps_eg_default_threads();
	if (g->nshards > WPS_EG_MAX_SHARDS)
		g->nshards = WPS_EG_MAX_SHARDS;
	out_queues = xsk_dev_queues(o->out_dev, WPS_EG_MAX_QUEUES);
	npools += out_queues < g->nshards ? out_queues : g->nshards;
	if (npools > XSK_MT_MAX_POOLS || npools - (out_queues < g->nshards ? out_queues : g->nshards) + 1 >
	    XSK_MT_MAX_SOCKS) {
		snprintf(err, errlen, "%u device queues: at most %d", npools, XSK_MT_MAX_SOCKS - 1);
		return -1;
	}
	/* One reorder share per peer address (--any-peer: one for all), each shard its part. */
	g->npeers = o->any_peer ? 1 : wps_eg_peers_count(&o->peers);
	rcfg = o->rcfg;
	rcfg.max_peers = (uint16_t)g->npeers;
	rcfg.total_buffer = share_of(rcfg.total_buffer, g->nshards);
	rcfg.max_flows = share_of(rcfg.max_flows, g->nshards);
	rcfg.new_flows_per_sec = share_of(rcfg.new_flows_per_sec, g->nshards);
	rcfg.new_flows_burst = share_of(rcfg.new_flows_burst, g->nshards);
	rcfg.new_flows_total_per_sec = share_of(rcfg.new_flows_total_per_sec, g->nshards);
	rcfg.new_flows_total_burst = share_of(rcfg.new_flows_total_burst, g->nshards);
	if (rcfg.flow_buffer > rcfg.total_buffer)
		rcfg.flow_buffer = rcfg.total_buffer;
	for (unsigned i = 0; i < g->nshards; i++) {
		struct shard *s = &g->sh[i];
		pthread_mutexattr_t ma;

		s->g = g;
		s->idx = i;
		s->cpu = o->no_pin || g->nshards > wps_eg_default_threads() ? -1 : nth_cpu(i);
		/* The statistics thread reads under the lock: it inherits a real-time shard's priority. */
		pthread_mutexattr_init(&ma);
		pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
		pthread_mutex_init(&s->lock, &ma);
		pthread_mutexattr_destroy(&ma);
		s->e = wps_reorder_new(&rcfg);
		if (!s->e) {
			snprintf(err, errlen, "reorder engine: %s",
				 errno == EINVAL ? "invalid bounds or timeouts" : strerror(errno));
			return -1;
		}
	}
	g->prio = o->rt_priority;
	g->raw4 = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	g->raw6 = socket(AF_INET6, SOCK_RAW, IPPROTO_RAW);
	if (g->raw4 < 0 || g->raw6 < 0) {
		snprintf(err, errlen, "raw sockets for the kernel path: %s", strerror(errno));
		return -1;
	}
	g->skel = wps_egress__open_and_load();
	if (!g->skel) {
		snprintf(err, errlen, "loading the XDP program: %s (ubctl -v shows the verifier log)", strerror(errno));
		return -1;
	}
	cfg.shards = g->nshards;
	if (bpf_map_update_elem(bpf_map__fd(g->skel->maps.wps_eg_cfg), &zero, &cfg, 0) ||
	    bpf_map_update_elem(bpf_map__fd(g->skel->maps.wps_eg_tx), &g->out_if, &g->out_if, 0)) {
		snprintf(err, errlen, "configuring the XDP program: %s", strerror(errno));
		return -1;
	}
	if (load_peers(g, err, errlen) || load_local_addrs(g, err, errlen))
		return -1;
	/*
	 * Frames: 2 KiB while the devices' frames fit one (a copy-mode frame keeps
	 * XDP_PACKET_HEADROOM, 256 bytes, in front), else 4 KiB (a UMEM chunk is at
	 * most a page) and, for frames longer than that, multi-buffer sockets.
	 * Every buffered packet holds its frames; so do each queue's fill ring and
	 * each shard's tx ring and batch.
	 */
	xcfg.frame_size = max_frame <= 2048 - 256 ? 2048 : 4096;
	xcfg.sg = max_frame > xcfg.frame_size - 256;
	fpp = (max_frame + xcfg.frame_size - 257) / (xcfg.frame_size - 256);
	xcfg.nframes = o->rcfg.total_buffer * (fpp ? fpp : 1) + npools * RING_SIZE +
		       g->nshards * (RING_SIZE + BATCH) + 1024;
	g->frame_size = xcfg.frame_size;
	g->xm = xsk_mt_create(&xcfg);
	for (unsigned k = 0; k < g->nshards && g->xm; k++)
		if (!(g->sh[k].seg = calloc(xcfg.nframes, sizeof(*g->sh[k].seg))))
			break;
	if (!g->xm || !g->sh[g->nshards - 1].seg) {
		snprintf(err, errlen, "AF_XDP UMEM of %u frames: %s", xcfg.nframes, strerror(errno));
		return -1;
	}
	xsk_fd = bpf_map__fd(g->skel->maps.wps_eg_xsks);
	for (int i = 0; i < o->ndevs; i++) {
		__u32 slot = (__u32)i;

		if (bpf_map_update_elem(bpf_map__fd(g->skel->maps.wps_eg_ifslot), &g->ifindex[i], &slot, 0)) {
			snprintf(err, errlen, "device slot map: %s", strerror(errno));
			return -1;
		}
	}
	for (unsigned k = 0; k < g->nshards; k++) {
		struct shard *s = &g->sh[k];

		s->t = xsk_mt_thread(g->xm, xcfg.nframes / g->nshards);
		if (!s->t) {
			snprintf(err, errlen, "AF_XDP frames for thread %u: %s", k, strerror(errno));
			return -1;
		}
		for (int i = 0; i < o->ndevs; i++)
			for (unsigned q = 0; q < queues[i]; q++) {
				int r = xsk_mt_add(s->t, o->devs[i], q, true, false, xsk_fd,
						   wps_eg_xsk_key((__u32)i, q, k));

				if (r < 0) {
					snprintf(err, errlen, "AF_XDP socket on %s queue %u: %s%s", o->devs[i], q,
						 strerror(-r), r == -EBUSY ? " (another instance?)" : "");
					return -1;
				}
				s->nrx++;
			}
		/* Its own queue of the site-facing device where it has enough, else shared. */
		s->out_sock = xsk_mt_add(s->t, o->out_dev, k % out_queues, false, true, -1, 0);
		if (s->out_sock < 0) {
			snprintf(err, errlen, "AF_XDP socket on %s: %s%s", o->out_dev, strerror(-s->out_sock),
				 s->out_sock == -EBUSY ? " (another instance?)" : "");
			return -1;
		}
	}
	for (unsigned k = 0; k < g->nshards; k++)
		xsk_mt_service(g->sh[k].t);	/* the fill rings, before any frame comes */
	/* What the sockets take: any frame with multi-buffer, else one buffer's worth. */
	cfg.xsk_max = xsk_mt_is_sg(g->xm) ? 0 : g->frame_size - 256;
	if (xcfg.sg && !xsk_mt_is_sg(g->xm) && o->live)
		fprintf(stderr, "wps egress: this kernel's AF_XDP has no multi-buffer (XDP_USE_SG, Linux 6.6): R = 1 "
			"frames over %u bytes are decapsulated in XDP, their order not restored (r1_too_big)\n",
			cfg.xsk_max);
	if (bpf_map_update_elem(bpf_map__fd(g->skel->maps.wps_eg_cfg), &zero, &cfg, 0)) {
		snprintf(err, errlen, "configuring the XDP program: %s", strerror(errno));
		return -1;
	}
	g->log = ring_buffer__new(bpf_map__fd(g->skel->maps.wps_eg_log), on_log, g, NULL);
	if (!g->log) {
		snprintf(err, errlen, "log ring buffer: %s", strerror(errno));
		return -1;
	}
	if (o->pin_dir) {
		snprintf(path, sizeof(path), "%s/stats", o->pin_dir);
		if (bpf_map__pin(g->skel->maps.wps_eg_stats, path)) {
			snprintf(err, errlen, "pinning %s: %s", path, strerror(errno));
			return -1;
		}
		snprintf(path, sizeof(path), "%s/cfg", o->pin_dir);
		if (bpf_map__pin(g->skel->maps.wps_eg_cfg, path)) {
			snprintf(err, errlen, "pinning %s: %s", path, strerror(errno));
			return -1;
		}
	}
	/* Last: attaching is what makes traffic flow; refuse a device someone else holds.
	 * Links: nothing stays attached when this process ends, however it ends. */
	for (int i = 0; i < o->ndevs; i++) {
		int rc = run_link_xdp(bpf_program__fd(g->skel->progs.wps_egress), (int)g->ifindex[i], o->generic);

		if (rc < 0) {
			snprintf(err, errlen, "attaching XDP to %s: %s%s", o->devs[i], strerror(-rc),
				 rc == -EBUSY || rc == -EEXIST ? " (it already has an XDP program: another instance?)" :
				 rc == -EOPNOTSUPP ? " (try --generic)" : "");
			return -1;
		}
		g->link[i] = rc;
	}
	return 0;
}

int wps_eg_run(const struct wps_eg_run_opts *o, volatile sig_atomic_t *stop, char *err, size_t errlen)
{
	static struct eg g;
	uint64_t next_report;

	memset(&g, 0, sizeof(g));
	g.o = o;
	g.stop = stop;
	g.raw4 = g.raw6 = -1;
	for (int i = 0; i < WPS_EG_MAX_DEVS; i++)
		g.link[i] = -1;
	if (setup(&g, err, errlen)) {
		teardown(&g);
		return -1;
	}
	for (unsigned i = 0; i < g.nshards; i++) {
		int rc = pthread_create(&g.sh[i].th, NULL, shard_main, &g.sh[i]);

		if (rc) {
			snprintf(err, errlen, "reorder thread: %s", strerror(rc));
			teardown(&g);
			return -1;
		}
		g.sh[i].started = true;
	}
	next_report = ub_mono_ns() + 1000000000ull;
	while (!*stop) {
		struct timespec ts = { 0, 50000000 };
		uint64_t now;

		nanosleep(&ts, NULL);
		now = ub_mono_ns();
		if (now >= next_report) {
			ring_buffer__consume(g.log);
			write_stats(&g);
			if (o->live)
				live_line(&g);
			next_report = now + 1000000000ull;
		}
	}
	stop_threads(&g);	/* each releases what it holds, in order */
	ring_buffer__consume(g.log);
	write_stats(&g);
	if (o->live)
		live_line(&g);
	teardown(&g);
	return 0;
}
