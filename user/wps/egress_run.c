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
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "egress_run.h"
#include "egress_stats.h"
#include "run_link.h"
#include "wps_egress.skel.h"
#include "wps_opt.h"
#include "xsk_port.h"

#define BATCH		64
#define RING_SIZE	2048
#define NIL		UINT32_MAX
#define MAX_SEGS	(BATCH / 2)	/* frames of one multi-buffer packet we take (a 64 KiB one in 2 KiB frames) */

/*
 * A multi-buffer packet (a jumbo frame over sockets with XDP_USE_SG) comes as
 * several UMEM frames; the engine keeps only the first one's address. The
 * others hang off it here, indexed by frame number: where each starts, its
 * length, the next.
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

struct eg {
	const struct wps_eg_run_opts *o;
	struct wps_egress *skel;
	struct xsk_port *port;
	struct wps_reorder *e;
	struct ring_buffer *log;
	unsigned ifindex[WPS_EG_MAX_DEVS], out_if;
	int link[WPS_EG_MAX_DEVS];	/* XDP links: detached when closed or when the process ends */
	int out_sock, raw4, raw6;
	struct xsk_frame batch[BATCH];
	unsigned nb, nsocks, npeers;
	uint32_t frame_size;
	struct seg *seg;		/* per UMEM frame: the rest of a multi-buffer packet */
	struct partial part[XSK_PORT_MAX_SOCKS];
	/* loop counters */
	uint64_t rx, bad_desc, tx_xsk, tx_kernel, tx_kernel_fail, tx_fail, rx_multi, bad_multi;
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

static void flush_tx(struct eg *g)
{
	unsigned sent = 0, idle = 0;

	while (sent < g->nb) {
		unsigned got = xsk_port_tx(g->port, g->out_sock, g->batch + sent, g->nb - sent);

		for (unsigned i = sent; i < sent + got; i++)
			g->tx_xsk += !g->batch[i].more;	/* packets, not frames */
		sent += got;
		if (got) {
			idle = 0;
			continue;
		}
		xsk_port_service(g->port);
		if (++idle > 100000) {	/* the device stopped taking frames */
			for (unsigned i = sent; i < g->nb; i++) {
				xsk_port_free(g->port, &g->batch[i]);
				g->tx_fail += !g->batch[i].more;
			}
			break;
		}
	}
	g->nb = 0;
}

/*
 * The kernel routes the inner packet itself: resolves the neighbour, delivers,
 * or answers ICMP. The packet: iov[0] from its IP header on, then its other
 * frames.
 */
static void to_kernel(struct eg *g, struct iovec *iov, int niov)
{
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
		g->tx_kernel++;
	else
		g->tx_kernel_fail++;
}

/* A packet's frames after its first, back to the port. */
static void free_segs(struct eg *g, uint64_t addr)
{
	for (uint32_t k = g->seg[fno(g, addr)].next, n; k != NIL; k = n) {
		n = g->seg[k].next;
		xsk_port_free(g->port, &(struct xsk_frame){ .addr = g->seg[k].addr });
	}
}

/* What the engine released, in its order. */
static void deliver(struct eg *g, const struct wps_out *out, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t addr = out[i].handle;
		uint8_t *data = xsk_port_umem_data(g->port, addr);
		const struct wps_xsk_desc *d = (const void *)data;
		uint32_t len = d->len, l2 = d->l2_off, k = g->seg[fno(g, addr)].next, nsegs = 1;

		for (uint32_t j = k; j != NIL; j = g->seg[j].next)
			nsegs++;
		if (d->fib_rc == 0 && d->ifindex == g->out_if) {
			if (g->nb + nsegs > BATCH)
				flush_tx(g);	/* a packet's frames go in one batch */
			g->batch[g->nb++] = (struct xsk_frame){ .addr = addr + l2, .data = data + l2, .len = len - l2,
								.more = k != NIL };
			for (; k != NIL; k = g->seg[k].next)
				g->batch[g->nb++] = (struct xsk_frame){
					.addr = g->seg[k].addr, .data = xsk_port_umem_data(g->port, g->seg[k].addr),
					.len = g->seg[k].len, .more = g->seg[k].next != NIL };
			if (g->nb == BATCH)
				flush_tx(g);
			continue;
		}
		flush_tx(g);	/* keep the order across the two ways out */
		{
			struct iovec iov[MAX_SEGS];
			int niov = 1;

			iov[0] = (struct iovec){ data + l2 + 14, len - l2 - 14 };
			for (; k != NIL && niov < MAX_SEGS; k = g->seg[k].next)
				iov[niov++] = (struct iovec){ xsk_port_umem_data(g->port, g->seg[k].addr), g->seg[k].len };
			to_kernel(g, iov, niov);
		}
		free_segs(g, addr);
		xsk_port_free(g->port, &(struct xsk_frame){ .addr = addr });
	}
	flush_tx(g);
}

/* ---- reception ---------------------------------------------------------- */

/* A whole packet, its first frame at `addr`: into the engine, or refused. */
static void rx_packet(struct eg *g, uint64_t addr, uint32_t len, bool bad, uint64_t now)
{
	struct wps_xsk_desc *d = xsk_port_umem_data(g->port, addr);
	struct wps_pkt p;

	g->rx++;
	if (bad || len < sizeof(*d) || d->magic != WPS_XSK_MAGIC || d->l2_off < sizeof(*d) ||
	    (uint32_t)d->l2_off + 14 + 20 > len || d->peer >= g->npeers) {
		g->bad_desc++;
		free_segs(g, addr);
		xsk_port_free(g->port, &(struct xsk_frame){ .addr = addr });
		return;
	}
	d->len = len;	/* the first frame's length travels with it */
	p = (struct wps_pkt){ .peer = d->peer, .ingress_node = d->ingress_node, .flow_id = d->flow_id,
			      .group_id = d->group_id, .flags = d->flags };
	deliver(g, wps_reorder_out(g->e), wps_reorder_rx(g->e, &p, addr, now));
}

/* One received frame: a packet, or part of one (multi-buffer: `more` on all but its last). */
static void rx_frame(struct eg *g, const struct xsk_frame *f, uint64_t now)
{
	struct partial *pt = &g->part[f->sock];
	uint32_t k = fno(g, f->addr);

	g->seg[k] = (struct seg){ .addr = f->addr, .len = f->len, .next = NIL };
	if (!pt->open) {
		if (!f->more) {
			rx_packet(g, f->addr, f->len, f->sock == g->out_sock, now);
			return;
		}
		*pt = (struct partial){ .first = k, .last = k, .nsegs = 1, .open = true,
					.bad = f->sock == g->out_sock };
		return;
	}
	g->seg[pt->last].next = k;
	pt->last = k;
	if (++pt->nsegs > MAX_SEGS)
		pt->bad = true;
	if (f->more)
		return;
	pt->open = false;
	g->rx_multi++;
	g->bad_multi += pt->bad;
	rx_packet(g, g->seg[pt->first].addr, g->seg[pt->first].len, pt->bad, now);
}

/* ---- statistics ------------------------------------------------------- */

struct flow_json {
	FILE *f;
	int n;
};

static int flow_to_json(uint16_t peer, uint16_t node, uint16_t fid, uint16_t neg, const struct wps_flow_stats *s,
			void *arg)
{
	struct flow_json *j = arg;

	fprintf(j->f,
		"%s{\"peer\":%u,\"ingress_node\":%u,\"flow_id\":%u,\"next_expected_group\":%u,\"packets\":%llu,"
		"\"groups\":%llu,\"ooo_groups\":%llu,\"late_packets\":%llu,\"late_groups\":%llu,"
		"\"timer_expiries\":%llu,\"bound_releases\":%llu,\"suspect\":%llu,\"buffered\":%u,\"hwm\":%u}",
		j->n ? "," : "", peer, node, fid, neg, (unsigned long long)s->pkts, (unsigned long long)s->groups,
		(unsigned long long)s->ooo_groups, (unsigned long long)s->late_pkts,
		(unsigned long long)s->late_groups, (unsigned long long)s->timer_expiries,
		(unsigned long long)s->bound_releases, (unsigned long long)s->suspect, s->buffered, s->hwm);
	return ++j->n >= 10000;	/* the busiest part of a huge table is enough */
}

static void write_stats(struct eg *g)
{
	char tmp[4200];
	struct wps_total_stats t;
	__u64 xdp[WPS_EG_CNT__MAX] = { 0 };
	struct flow_json j = { 0 };
	FILE *f;

	if (!g->o->stats_path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", g->o->stats_path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	wps_reorder_totals(g->e, &t);
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
		(unsigned long long)t.f.pkts, (unsigned long long)t.f.groups, (unsigned long long)t.f.ooo_groups,
		(unsigned long long)t.f.late_pkts, (unsigned long long)t.f.late_groups,
		(unsigned long long)t.f.timer_expiries, (unsigned long long)t.f.bound_releases,
		(unsigned long long)t.f.suspect, t.buffered, t.hwm, t.flows, (unsigned long long)t.flows_created,
		(unsigned long long)t.flows_reclaimed, (unsigned long long)t.flows_policed,
		(unsigned long long)t.flows_policed_total, (unsigned long long)t.flows_table_full, (unsigned long long)(t.timeout_ns / 1000),
		(unsigned long long)(t.skew_ns / 1000));
	for (unsigned a = 0; a < WPS_ACT__MAX; a++)
		fprintf(f, "%s\"%s\":%llu", a ? "," : "", wps_action_name(a), (unsigned long long)t.actions[a]);
	fprintf(f, "}},\"io\":{\"rx\":%llu,\"bad_descriptor\":%llu,\"tx_xsk\":%llu,\"tx_kernel\":%llu,"
		"\"tx_kernel_failed\":%llu,\"tx_failed\":%llu,\"rx_multi_buffer\":%llu,\"frame_size\":%u,"
		"\"multi_buffer\":%u},\"peers\":[",
		(unsigned long long)g->rx, (unsigned long long)g->bad_desc, (unsigned long long)g->tx_xsk,
		(unsigned long long)g->tx_kernel, (unsigned long long)g->tx_kernel_fail, (unsigned long long)g->tx_fail,
		(unsigned long long)g->rx_multi, g->frame_size, xsk_port_is_sg(g->port) ? 1u : 0u);
	for (unsigned k = 0; k < g->npeers; k++) {
		struct wps_peer_stats ps;
		char addr[INET6_ADDRSTRLEN] = "any";

		wps_reorder_peer(g->e, (uint16_t)k, &ps);
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
	wps_reorder_foreach(g->e, flow_to_json, &j);
	fprintf(f, "]}\n");
	if (fclose(f) == 0)
		rename(tmp, g->o->stats_path);
}

static void live_line(struct eg *g)
{
	struct wps_total_stats t;
	__u64 xdp[WPS_EG_CNT__MAX] = { 0 };
	__u64 bad = 0;

	wps_reorder_totals(g->e, &t);
	wps_eg_counters_read(bpf_map__fd(g->skel->maps.wps_eg_stats), xdp);
	for (int i = WPS_EG_CNT_BAD_OPT_LEN; i <= WPS_EG_CNT_DROP_CE_NOT_ECT; i++)
		bad += xdp[i];
	fprintf(stderr,
		"wps egress: rx %llu tx %llu kernel %llu | flows %u buffered %u (hwm %u) ooo %llu late %llu "
		"timer %llu bound %llu timeout %lluus | xdp r0 %llu invalid %llu\n",
		(unsigned long long)g->rx, (unsigned long long)g->tx_xsk, (unsigned long long)g->tx_kernel, t.flows,
		t.buffered, t.hwm, (unsigned long long)t.f.ooo_groups, (unsigned long long)t.f.late_pkts,
		(unsigned long long)t.f.timer_expiries, (unsigned long long)t.f.bound_releases,
		(unsigned long long)(t.timeout_ns / 1000),
		(unsigned long long)(xdp[WPS_EG_CNT_R0_FWD] + xdp[WPS_EG_CNT_R0_KERNEL]), (unsigned long long)bad);
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

static void teardown(struct eg *g)
{
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
	xsk_port_destroy(g->port);
	free(g->seg);
	wps_egress__destroy(g->skel);
	wps_reorder_free(g->e);
	if (g->raw4 >= 0)
		close(g->raw4);
	if (g->raw6 >= 0)
		close(g->raw6);
}

static int setup(struct eg *g, char *err, size_t errlen)
{
	const struct wps_eg_run_opts *o = g->o;
	struct wps_eg_cfg cfg = { .node_id = o->node_id, .log_per_sec = o->log_per_sec,
				  .flags = o->any_peer ? WPS_EG_F_ANY_PEER : 0 };
	struct xsk_port_cfg pcfg = { .ring_size = RING_SIZE, .zerocopy = o->zerocopy };
	unsigned queues[WPS_EG_MAX_DEVS], nsocks = 1, max_frame = 0, fpp;
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
		nsocks += queues[i];
		if (dev_frame_len(o->devs[i]) > max_frame)
			max_frame = dev_frame_len(o->devs[i]);
	}
	if (nsocks > XSK_PORT_MAX_SOCKS) {
		snprintf(err, errlen, "%u AF_XDP sockets needed, at most %d", nsocks, XSK_PORT_MAX_SOCKS);
		return -1;
	}
	/* One reorder share per peer address (--any-peer: one for all). */
	g->npeers = o->any_peer ? 1 : wps_eg_peers_count(&o->peers);
	rcfg = o->rcfg;
	rcfg.max_peers = (uint16_t)g->npeers;
	g->e = wps_reorder_new(&rcfg);
	if (!g->e) {
		snprintf(err, errlen, "reorder engine: %s", errno == EINVAL ? "invalid bounds or timeouts" : strerror(errno));
		return -1;
	}
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
	if (bpf_map_update_elem(bpf_map__fd(g->skel->maps.wps_eg_cfg), &zero, &cfg, 0) ||
	    bpf_map_update_elem(bpf_map__fd(g->skel->maps.wps_eg_tx), &g->out_if, &g->out_if, 0)) {
		snprintf(err, errlen, "configuring the XDP program: %s", strerror(errno));
		return -1;
	}
	if (load_peers(g, err, errlen) || load_local_addrs(g, err, errlen))
		return -1;
	g->nsocks = nsocks;
	/*
	 * Frames: 2 KiB while the devices' frames fit one (a copy-mode frame keeps
	 * XDP_PACKET_HEADROOM, 256 bytes, in front), else 4 KiB (a UMEM chunk is at
	 * most a page) and, for frames longer than that, multi-buffer sockets.
	 * Every buffered packet holds its frames; the fill and tx rings need theirs.
	 */
	pcfg.frame_size = max_frame <= 2048 - 256 ? 2048 : 4096;
	pcfg.sg = max_frame > pcfg.frame_size - 256;
	fpp = (max_frame + pcfg.frame_size - 257) / (pcfg.frame_size - 256);
	pcfg.nframes = o->rcfg.total_buffer * (fpp ? fpp : 1) + nsocks * RING_SIZE * 2 + 1024;
	g->frame_size = pcfg.frame_size;
	g->port = xsk_port_create(&pcfg);
	g->seg = calloc(pcfg.nframes, sizeof(*g->seg));
	if (!g->port || !g->seg) {
		snprintf(err, errlen, "AF_XDP UMEM of %u frames: %s", pcfg.nframes, strerror(errno));
		return -1;
	}
	xsk_fd = bpf_map__fd(g->skel->maps.wps_eg_xsks);
	for (int i = 0; i < o->ndevs; i++) {
		__u32 slot = (__u32)i;

		if (bpf_map_update_elem(bpf_map__fd(g->skel->maps.wps_eg_ifslot), &g->ifindex[i], &slot, 0)) {
			snprintf(err, errlen, "device slot map: %s", strerror(errno));
			return -1;
		}
		for (unsigned q = 0; q < queues[i]; q++) {
			int s = xsk_port_add(g->port, o->devs[i], q, xsk_fd, slot * WPS_EG_MAX_QUEUES + q);

			if (s < 0) {
				snprintf(err, errlen, "AF_XDP socket on %s queue %u: %s%s", o->devs[i], q, strerror(-s),
					 s == -EBUSY ? " (another instance?)" : "");
				return -1;
			}
		}
	}
	g->out_sock = xsk_port_add(g->port, o->out_dev, 0, -1, 0);
	if (g->out_sock < 0) {
		snprintf(err, errlen, "AF_XDP socket on %s: %s%s", o->out_dev, strerror(-g->out_sock),
			 g->out_sock == -EBUSY ? " (another instance?)" : "");
		return -1;
	}
	/* What the sockets take: any frame with multi-buffer, else one buffer's worth. */
	cfg.xsk_max = xsk_port_is_sg(g->port) ? 0 : g->frame_size - 256;
	if (pcfg.sg && !xsk_port_is_sg(g->port) && o->live)
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
	struct eg g = { .o = o, .raw4 = -1, .raw6 = -1 };
	struct xsk_frame fr[BATCH];
	uint64_t next_report;
	unsigned full_batches = 0;

	for (int i = 0; i < WPS_EG_MAX_DEVS; i++)
		g.link[i] = -1;
	if (setup(&g, err, errlen)) {
		teardown(&g);
		return -1;
	}
	next_report = ub_mono_ns() + 1000000000ull;
	while (!*stop) {
		uint64_t now = ub_mono_ns(), dl = wps_reorder_next_deadline(g.e);
		int wait_ms = 100;
		unsigned n;

		if (dl != UINT64_MAX)
			wait_ms = dl <= now ? 0 : (int)((dl - now + 999999) / 1000000 < 100 ? (dl - now + 999999) / 1000000 : 100);
		n = xsk_port_rx(g.port, -1, fr, BATCH);
		if (!n && wait_ms) {
			xsk_port_poll(g.port, wait_ms);
			n = xsk_port_rx(g.port, -1, fr, BATCH);
		}
		now = ub_mono_ns();
		for (unsigned i = 0; i < n; i++)
			rx_frame(&g, &fr[i], now);
		/* A full batch may leave frames in the rings, the group a timer waits for among
		 * them (this thread was descheduled while the paths kept delivering): expire
		 * timers once the rings are read dry or, under overload, once as many frames
		 * as they hold have been read (what was there at the deadline is in). */
		if (n < BATCH || ++full_batches >= g.nsocks * RING_SIZE / BATCH) {
			full_batches = 0;
			deliver(&g, wps_reorder_out(g.e), wps_reorder_tick(g.e, now));
		}
		if (now >= next_report) {
			ring_buffer__consume(g.log);
			write_stats(&g);
			if (o->live)
				live_line(&g);
			next_report = now + 1000000000ull;
		}
	}
	deliver(&g, wps_reorder_out(g.e), wps_reorder_flush(g.e));
	for (int i = 0; i < 100; i++)	/* let the last frames leave */
		xsk_port_service(g.port);
	ring_buffer__consume(g.log);
	write_stats(&g);
	if (o->live)
		live_line(&g);
	teardown(&g);
	return 0;
}
