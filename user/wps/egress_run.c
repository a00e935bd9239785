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
 *
 * Here: setting it all up and tearing it down; the threads' loop is
 * egress_shard.c, the statistics egress_report.c.
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
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/clock.h"
#include "wps/egress_int.h"
#include "wps/egress_stats.h"
#include "io/cpus.h"
#include "io/run_link.h"
#include "wps_egress.skel.h"
#include "xsk/xsk_port.h"	/* xsk_dev_queues() */

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
	long n = cpus_usable();

	return n < 1 ? 1 : n > WPS_EG_MAX_SHARDS ? WPS_EG_MAX_SHARDS : (unsigned)n;
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
	/* The --dev devices and --out-dev share the UMEM. */
	struct xsk_mt_cfg xcfg = { .ring_size = RING_SIZE,
				  .mode = xsk_mode_for(o->xsk_mode, o->generic, (unsigned)o->ndevs + 1) };
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
		s->cpu = o->no_pin || g->nshards > wps_eg_default_threads() ? -1 : cpus_nth(i);
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
					snprintf(err, errlen, "AF_XDP socket on %s queue %u: %s%s%s", o->devs[i], q,
						 strerror(-r), r == -EBUSY ? " (another instance?)" : "",
						 xsk_mode_refusal(o->xsk_mode, r));
					return -1;
				}
				s->nrx++;
			}
		/* Its own queue of the site-facing device where it has enough, else shared. */
		s->out_sock = xsk_mt_add(s->t, o->out_dev, k % out_queues, false, true, -1, 0);
		if (s->out_sock < 0) {
			snprintf(err, errlen, "AF_XDP socket on %s: %s%s%s", o->out_dev, strerror(-s->out_sock),
				 s->out_sock == -EBUSY ? " (another instance?)" : "",
				 xsk_mode_refusal(o->xsk_mode, s->out_sock));
			return -1;
		}
	}
	for (unsigned k = 0; k < g->nshards; k++)
		xsk_mt_service(g->sh[k].t);	/* the fill rings, before any frame comes */
	/* What the sockets take: any frame with multi-buffer, else one buffer's worth. */
	cfg.xsk_max = xsk_mt_is_sg(g->xm) ? 0 : g->frame_size - 256;
	if (xcfg.sg && !xsk_mt_is_sg(g->xm) && o->live)
		fprintf(stderr, "wps egress: no multi-buffer AF_XDP here (XDP_USE_SG: Linux 6.6; zero-copy: the driver's too): R = 1 "
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
		int rc = pthread_create(&g.sh[i].th, NULL, wps_eg_shard_main, &g.sh[i]);

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
			wps_eg_write_stats(&g);
			if (o->live)
				wps_eg_live_line(&g);
			next_report = now + 1000000000ull;
		}
	}
	stop_threads(&g);	/* each releases what it holds, in order */
	ring_buffer__consume(g.log);
	wps_eg_write_stats(&g);
	if (o->live)
		wps_eg_live_line(&g);
	teardown(&g);
	return 0;
}
