// SPDX-License-Identifier: BSD-2-Clause
/*
 * The endpoint set up (ep.h): its AF_XDP port and sockets on each member
 * device (or a slot of a shared device), its peers' next hops, its
 * channels' TPNs; the UB MTU its devices and frames allow is ep_mtu.c, its
 * datapath ep_datapath.c.
 */
#include "endpoint/ep_int.h"

#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/rtnetlink.h>

#include <bpf/bpf.h>

#include "io/cpus.h"
#include "lib/clock.h"
#include "lib/frame.h"
#include "lib/uboe_wrap.h"
#include "ub_wire.h"
#include "xsk/xsk_port.h"

void ep_set_ctl(struct ep *e, ep_ctl_fn fn, void *ctx)
{
	e->ctl = fn;
	e->ctl_ctx = ctx;
}

/* Each worker's UMEM frames. */
static uint32_t worker_frames(const struct ep *e)
{
	return e->cfg.nframes ? e->cfg.nframes : 8192;
}

/* The UMEM: multi-buffer where the kernel has it (in shared mode for the
 * holder of a jumbo-frame device's queues alone: a veth and AF_PACKET path
 * carries one buffer per frame); every worker's frames. */
static int make_port(struct ep *e)
{
	struct xsk_mt_cfg mc = { 0 };

	mc.nframes = worker_frames(e) * (e->nworkers ? e->nworkers : 1);
	mc.frame_size = EP_FRAME_SIZE;
	mc.ring_size = 2048;
	mc.mode = xsk_mode_for(e->cfg.xsk_mode, e->cfg.generic, e->cfg.nmembers > 1 ? e->cfg.nmembers : 1);
	mc.sg = (!e->cfg.shared || e->holder) && xsk_mt_sg_supported();
	if (mc.sg) {
		mc.nruns = EP_TX_RUNS * (e->nworkers ? e->nworkers : 1);
		mc.run_frames = JUMBO_BUF / EP_FRAME_SIZE;
	}
	e->xm = xsk_mt_create(&mc);
	if (!e->xm)
		return -errno;
	e->xt = ep_worker_thread(e);
	return e->xt ? 0 : -errno;
}

/* Worker e's sockets on dev's nq queues, in x's map (ep_bind_queues), the
 * one its frames leave by as member k's. A queue busy past the wait, with
 * another program on the device now, is its holder's: said as the early
 * check says it (one that opened without the device's lock, a legacy attach). */
static int bind_dev(struct ep *e, uint32_t k, const char *dev, unsigned nq, struct ep_xdp *x, char *err,
		    size_t errlen)
{
	int rc = ep_bind_queues(e, dev, nq, ep_xdp_xskmap_fd(x), &e->sock0[k], err, errlen);

	if (rc == -EBUSY)
		ep_xdp_taken(x, err, errlen);
	return rc ? -1 : 0;
}

/* The share of a shared endpoint's lead (a worker has none of its own). */
static struct ep_share *sh_of(const struct ep *e)
{
	return e->lead ? e->lead->sh : e->sh;
}

/* Shared mode: every worker's sockets on dev (the UMEM's first socket made
 * with the lead's, here: libxdp makes it, in the namespace of the device it
 * binds to), worker w's frames leaving by its own queue (ep_bind_queues). */
static int bind_shared(void *arg, const char *dev, unsigned nq, int xskmap_fd, bool is_dev, char *err,
		       size_t errlen)
{
	struct ep *lead = arg;

	if (!lead->xm && make_port(lead)) {
		snprintf(err, errlen, "AF_XDP UMEM: %s", strerror(errno));
		return -errno;
	}
	for (uint32_t w = 0; w < lead->nworkers; w++) {
		struct ep *e = ep_worker(lead, w);
		int tx, rc;

		if (w && !e->xt) {
			e->xm = lead->xm;
			e->xt = ep_worker_thread(lead);
			if (!e->xt) {
				snprintf(err, errlen, "AF_XDP frames for worker %u: %s", w, strerror(errno));
				return -errno;
			}
		}
		rc = ep_bind_queues(e, dev, nq, xskmap_fd, &tx, err, errlen);
		if (rc)
			return rc;
		if (is_dev)
			e->sock0[0] = tx;
	}
	return 0;
}

static void share_holder(void *arg)
{
	((struct ep *)arg)->holder = true;
}

/*
 * Multi-buffer sockets: any frame longer than a UMEM frame is gathered on
 * rx, in each worker's jbuf; packets are built whole there only for a UB
 * MTU that one frame cannot hold (big).
 */
static int jumbo_bufs(struct ep *e, char *err, size_t errlen)
{
	uint32_t dmin;
	bool big;

	if (!xsk_mt_is_sg(e->xm))
		return 0;
	big = ep_ub_mtu_max(e, 4, &dmin, NULL) > ep_ub_mtu_fit(dmin, e->cfg.native.ethertype, 4, EP_FRAME_SIZE);
	for (uint32_t w = 0; w < e->nworkers; w++) {
		struct ep *x = ep_worker(e, w);

		if (x && !x->jbuf)
			x->jbuf = malloc(JUMBO_BUF);
		if (x && !x->jbuf) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		if (x)
			x->big = big;
	}
	return 0;
}

/* Shared mode: the device's program joined (or attached), a slot, the sockets. */
static int open_shared(struct ep *e, char *err, size_t errlen)
{
	const struct ep_config *cfg = &e->cfg;
	struct ep_nexthop nh = { .ifindex = e->ifindex };
	struct ep_share_cfg sc = { 0 };

	if (ep_nexthop_dev_info(e->rt, &nh, err, errlen))
		return -1;
	memcpy(e->mac[0], nh.src_mac, 6);
	sc.dev = cfg->dev;
	sc.generic = cfg->generic;
	sc.ethertype = cfg->native.ethertype;
	sc.no_direct = cfg->share_no_direct;
	sc.dev_mtu = nh.mtu;
	sc.workers = e->nworkers;
	sc.bind = bind_shared;
	/* Multi-buffer sockets for the holder only where the device's MTU
	 * carries a UB MTU larger than one frame holds: below that its path
	 * stays as it was (one buffer per frame). */
	if (ep_ub_mtu_fit(nh.mtu, sc.ethertype, 4, 0) > ep_ub_mtu_fit(nh.mtu, sc.ethertype, 4, EP_FRAME_SIZE))
		sc.holder = share_holder;
	sc.arg = e;
	e->sh = ep_share_open(&sc, err, errlen);
	if (!e->sh)
		return -1;
	e->dev_mtu[0] = ep_share_mtu(e->sh, nh.mtu);
	e->tx_fd = ep_share_tx_fd(e->sh, 0);
	e->loop_fd = ep_share_loop_fd(e->sh, 0);
	/* Each worker sends by AF_PACKET sockets of its own (veth mode, loopback). */
	for (uint32_t w = 1; w < e->nworkers; w++) {
		struct ep *x = e->wk[w];

		x->tx_fd = ep_share_tx_fd(e->sh, w);
		x->loop_fd = ep_share_loop_fd(e->sh, w);
		x->dev_mtu[0] = e->dev_mtu[0];
		memcpy(x->mac[0], e->mac[0], 6);
	}
	return jumbo_bufs(e, err, errlen);
}

/* The endpoint program of member k, loaded, and a socket on each of its queues. */
static int open_member(struct ep *e, uint32_t k, const char *dev, char *err, size_t errlen)
{
	const struct ep_config *cfg = &e->cfg;
	struct ep_nexthop nh = { .ifindex = (int)if_nametoindex(dev) };
	unsigned nq;

	if (!nh.ifindex) {
		snprintf(err, errlen, "no device %s", dev);
		return -1;
	}
	if (ep_nexthop_dev_info(e->rt, &nh, err, errlen))
		return -1;
	memcpy(e->mac[k], nh.src_mac, 6);
	e->dev_mtu[k] = nh.mtu;
	e->xdp[k] = ep_xdp_load(dev, cfg->generic, cfg->native.ethertype, e->nworkers, err, errlen);
	if (!e->xdp[k])
		return -1;
	nq = xsk_dev_queues(dev, UB_EP_MAX_QUEUES);	/* a socket on each: no queue drops */
	return bind_dev(e, k, dev, nq, e->xdp[k], err, errlen);
}

/* What can move a peer's next hop: the route and neighbour tables, and the
 * rules, next-hop objects, addresses and links the routes depend on. */
static const unsigned nh_groups[] = { RTNLGRP_NEIGH, RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE,
				      RTNLGRP_IPV4_RULE, RTNLGRP_IPV6_RULE, RTNLGRP_NEXTHOP,
				      RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR, RTNLGRP_LINK };

/* The next-hop sockets and the transport core: each worker's own. */
static int open_core(struct ep *e, const struct tp_ep_config *tc, char *err, size_t errlen)
{
	e->rt = nl_open_route(err, errlen);
	if (!e->rt)
		return -1;
	e->mon = nl_open_monitor(nh_groups, sizeof(nh_groups) / sizeof(nh_groups[0]), err, errlen);
	if (!e->mon)
		return -1;
	wake_timer_open(&e->wt);	/* without one, the sleeps take poll timeouts */
	e->tp = tp_ep_create(tc);
	if (!e->tp) {
		snprintf(err, errlen, "transport core: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Worker w (> 0) of lead: its own core, no sockets yet. */
static struct ep *worker_new(struct ep *lead, uint32_t w, char *err, size_t errlen)
{
	struct ep *e = calloc(1, sizeof(*e));
	struct tp_ep_config tc = lead->cfg.tp;

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	lead->wk[w] = e;
	e->cfg = lead->cfg;
	e->lead = lead;
	e->nworkers = lead->nworkers;
	e->widx = w;
	e->tx_fd = e->loop_fd = -1;
	xsk_wake_clear(&e->wake);
	e->wt.fd = -1;
	e->nmem = 1;
	e->ifindex = lead->ifindex;
	memcpy(e->mac[0], lead->mac[0], 6);
	e->dev_mtu[0] = lead->dev_mtu[0];
	e->xm = lead->xm;	/* the lead's: ep_close never reaches a worker's */
	e->big = lead->big;
	tc.seed ^= (uint64_t)w * 0x9e3779b97f4a7c15ull;	/* its own initial PSNs */
	return open_core(e, &tc, err, errlen) ? NULL : e;
}

/*
 * Worker w (> 0) of lead, whose device, program and UMEM are open: its own
 * core, frames, and its sockets on the device's queues (ep_bind_queues), its
 * tx on queue w (mod the queues), so the workers' frames leave by different
 * queues and the peer's veth takes them on different ones.
 */
static int open_worker(struct ep *lead, uint32_t w, char *err, size_t errlen)
{
	unsigned nq = xsk_dev_queues(lead->cfg.dev, UB_EP_MAX_QUEUES);
	struct ep *e = worker_new(lead, w, err, errlen);
	if (!e)
		return -1;
	e->xt = ep_worker_thread(lead);
	if (!e->xt || (lead->jbuf && !(e->jbuf = malloc(JUMBO_BUF)))) {
		snprintf(err, errlen, "AF_XDP frames for worker %u: %s", w, strerror(errno));
		return -1;
	}
	return bind_dev(e, 0, lead->cfg.dev, nq, lead->xdp[0], err, errlen);
}

void ep_native_init(struct ep_native *n)
{
	memset(n, 0, sizeof(*n));
	n->ethertype = UB_ETH_P_NATIVE;
	n->rt = UB_RT_FLOW_SHORTEST;
	/* Markable, as UBoE sends ECT(0): a UB2E switch writes ECT(0) for it on
	 * the IP side (FECN 00 would be Not-ECT there, out of routers' reach). */
	n->cci = ub_cci_make_fecn(UB_FECN_MARKABLE, 0);
	n->perm = UB_PERM_HIGH;
	n->pid = UB_PID_DEFAULT;
}

uint64_t ep_now_ns(void)
{
	return ub_mono_ns();
}

struct ep *ep_open(const struct ep_config *cfg, char *err, size_t errlen)
{
	struct ep *e = calloc(1, sizeof(*e));

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->cfg = *cfg;
	e->tx_fd = e->loop_fd = -1;
	xsk_wake_clear(&e->wake);
	e->wt.fd = -1;
	ub_icrc_init();		/* not on the first packet's time */
	if (cfg->shared && cfg->nmembers > 1) {
		snprintf(err, errlen, "a shared endpoint is one device");
		goto fail;
	}
	if (cfg->nmembers > EP_MAX_MEMBERS ||
	    (cfg->nmembers > 1 && (!cfg->native.ethertype || !cfg->members[0] ||
				   strcmp(cfg->members[0], cfg->dev)))) {
		snprintf(err, errlen, "an entity is native UB, of at most %d ports, the first --dev",
			 EP_MAX_MEMBERS);
		goto fail;
	}
	if (cfg->workers > UB_EP_MAX_WORKERS || (cfg->workers > 1 && cfg->nmembers > 1)) {
		snprintf(err, errlen, "workers: at most %d, on one device", UB_EP_MAX_WORKERS);
		goto fail;
	}
	e->nworkers = cfg->workers > 1 ? cfg->workers : 1;
	e->nmem = cfg->nmembers > 1 ? cfg->nmembers : 1;
	e->ifindex = (int)if_nametoindex(cfg->dev);
	if (!e->ifindex) {
		snprintf(err, errlen, "no device %s", cfg->dev);
		goto fail;
	}
	if (open_core(e, &cfg->tp, err, errlen))
		goto fail;
	if (cfg->shared) {
		for (uint32_t w = 1; w < e->nworkers; w++)
			if (!worker_new(e, w, err, errlen))
				goto fail;
		if (open_shared(e, err, errlen))
			goto fail;
		return e;
	}
	if (make_port(e)) {
		snprintf(err, errlen, "AF_XDP UMEM: %s", strerror(errno));
		goto fail;
	}
	for (uint32_t k = 0; k < e->nmem; k++)
		if (open_member(e, k, k ? cfg->members[k] : cfg->dev, err, errlen))
			goto fail;
	if (jumbo_bufs(e, err, errlen))
		goto fail;
	for (uint32_t w = 1; w < e->nworkers; w++)
		if (open_worker(e, w, err, errlen))
			goto fail;
	/* The programs last, every socket in their maps: a frame the device
	 * steers is read, where one steered before its socket was there was
	 * dropped (drop_no_socket), and "XDP on the device" is a port open. */
	for (uint32_t k = 0; k < e->nmem; k++)
		if (ep_xdp_link(e->xdp[k], err, errlen))
			goto fail;
	return e;
fail:
	ep_close(e);
	return NULL;
}

static void close_core(struct ep *e)
{
	tp_ep_destroy(e->tp);
	wake_timer_close(&e->wt);
	nl_close(e->mon);
	nl_close(e->rt);
	free(e->jbuf);
}

void ep_close(struct ep *e)
{
	if (!e || e->lead)
		return;
	/* Sockets before the program: nothing is steered to a closed socket.
	 * Every worker's sockets and frames go with the UMEM. */
	xsk_mt_destroy(e->xm);
	ep_handoff_free(e);
	for (uint32_t w = 1; w < UB_EP_MAX_WORKERS; w++)
		if (e->wk[w]) {
			close_core(e->wk[w]);
			free(e->wk[w]);
		}
	ep_share_close(e->sh);
	for (uint32_t k = 0; k < EP_MAX_MEMBERS; k++)
		ep_xdp_detach(e->xdp[k]);
	close_core(e);
	free(e);
}

struct tp_ep *ep_tp(struct ep *e) { return e->tp; }

static int check_route(struct ep *e, const struct ep_peer *p, char *err, size_t errlen)
{
	char ifn[IF_NAMESIZE] = "?";

	if (p->nh.ifindex == e->ifindex)
		return 0;
	if_indextoname((unsigned)p->nh.ifindex, ifn);
	snprintf(err, errlen, "the route to the peer leaves via %s, not %s", ifn, e->cfg.dev);
	return -ENETUNREACH;
}

/*
 * Our device when the main route to the peer leaves by another and ours has
 * a gateway route of its own; else 0. The kernel's guess of an on-link peer
 * (what it answers for a device nothing routes by) has no gateway: not taken,
 * so a plain misrouting still gets check_route's clear line.
 */
static int peer_oif(struct ep *e, struct nl *rt, uint8_t ip_ver, const uint8_t ip[16])
{
	struct ep_nexthop nh;
	char err[128];
	int rc = ep_nexthop_lookup(rt, ip_ver, ip, 0, &nh, err, sizeof(err));

	if ((rc && rc != -EAGAIN) || nh.ifindex == e->ifindex)
		return 0;
	rc = ep_nexthop_lookup(rt, ip_ver, ip, e->ifindex, &nh, err, sizeof(err));
	return (!rc || rc == -EAGAIN) && nh.gateway && nh.ifindex == e->ifindex ? e->ifindex : 0;
}

/*
 * Each other member's next hop to p: the route by that member's device (the
 * kernel takes the peer as on link there when nothing routes by it) and its
 * neighbour entry, resolved as the first member's is.
 */
static int member_hops(struct ep *e, struct nl *rt, struct ep_peer *p, int timeout_ms, char *err,
		       size_t errlen)
{
	for (uint32_t k = 1; k < e->nmem; k++) {
		const int ifindex = ep_xdp_ifindex(e->xdp[k]);
		struct ep_nexthop nh;
		char why[192], ifn[IF_NAMESIZE] = "?";
		int rc;

		if (e->cfg.nexthop_mac_set) {
			memcpy(p->member_mac[k], e->cfg.nexthop_mac, 6);
			continue;
		}
		rc = ep_nexthop_resolve(rt, p->ip_ver, p->ip, ifindex, timeout_ms, &nh, why, sizeof(why));
		if (!rc && nh.ifindex != ifindex)
			rc = -ENETUNREACH;
		if (rc) {
			if_indextoname((unsigned)ifindex, ifn);
			snprintf(err, errlen, "entity member %s: %s", ifn,
				 rc == -ENETUNREACH ? "the route to the peer leaves by another device" : why);
			return rc;
		}
		memcpy(p->member_mac[k], nh.dst_mac, 6);
	}
	return 0;
}

/* Is ip one of dev's own addresses? */
static bool addr_on_dev(const char *dev, uint8_t ip_ver, const uint8_t ip[16])
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, dev))
			continue;
		if (ip_ver == 4 && i->ifa_addr->sa_family == AF_INET)
			found = !memcmp(&((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, 4);
		else if (ip_ver == 6 && i->ifa_addr->sa_family == AF_INET6)
			found = !memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, ip, 16);
	}
	freeifaddrs(ifa);
	return found;
}

int ep_peer_init(struct ep *e, struct ep_peer *p, uint8_t ip_ver, const uint8_t ip[16],
		 int timeout_ms, char *err, size_t errlen)
{
	struct nl *rt;
	int rc;

	memset(p, 0, sizeof(*p));
	p->ip_ver = ip_ver;
	memcpy(p->ip, ip, ip_ver == 6 ? 16 : 4);
	if (sh_of(e) && addr_on_dev(e->cfg.dev, ip_ver, ip)) {
		/* A jetty on this very device: through its program, from and to itself. */
		p->local = true;
		p->nh.ip_ver = ip_ver;
		p->nh.ifindex = e->ifindex;
		memcpy(p->nh.src_ip, ip, 16);
		memcpy(p->nh.via, ip, 16);
		memcpy(p->nh.src_mac, e->mac[0], 6);
		memcpy(p->nh.dst_mac, e->mac[0], 6);
		p->nh.mtu = e->dev_mtu[0];
		return 0;
	}
	/* A route socket of this call's own: e->rt (its buffer, its sequence
	 * numbers) is the datapath's, under the caller's port lock, and this
	 * may run on another thread meanwhile (liburma: an application's
	 * import while the progress thread answers a hello); on one socket
	 * each took the other's answers. */
	rt = nl_open_route(err, errlen);
	if (!rt)
		return -EIO;
	/* Changes read from here on make the peer look its next hop up again. */
	p->nh_gen = __atomic_load_n(&e->nh_gen, __ATOMIC_RELAXED);
	p->oif = peer_oif(e, rt, ip_ver, ip);
	if (e->cfg.nexthop_mac_set) {
		/* The MAC is given, so an unresolved neighbour is no failure. */
		rc = ep_nexthop_lookup(rt, ip_ver, ip, p->oif, &p->nh, err, errlen);
		if (rc == -EAGAIN)
			rc = 0;
		memcpy(p->nh.dst_mac, e->cfg.nexthop_mac, 6);
	} else {
		rc = ep_nexthop_resolve(rt, ip_ver, ip, p->oif, timeout_ms, &p->nh, err, errlen);
	}
	if (!rc)
		rc = check_route(e, p, err, errlen);
	if (!rc)
		rc = member_hops(e, rt, p, timeout_ms, err, errlen);
	nl_close(rt);
	return rc;
}

struct tp_chan *ep_tp_chan_create(struct ep *e, const struct tp_chan_config *cfg)
{
	const uint32_t span = 1u << UB_EP_TPN_SHIFT;
	struct tp_chan_config c = *cfg;
	struct tp_chan *ch;

	/* The program steers CTP to worker 0 alone, and a folded endpoint's
	 * every frame: such a channel would never receive. */
	if (e->lead && (cfg->mode == TP_MODE_CTP || e->lead->folded)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (sh_of(e) && !cfg->local_tpn) {
		/* This process's TPNs (and RCIDs): the slot's range; with
		 * workers, this worker's of it (TPN % workers). */
		const uint32_t base = ep_share_slot(sh_of(e)) << UB_EP_TPN_SHIFT;

		for (uint32_t tries = 0; tries < span; tries++) {
			c.local_tpn = base | (e->tpn_next++ & (span - 1));
			if (c.local_tpn % e->nworkers != e->widx)
				continue;
			ch = tp_chan_create(e->tp, &c);
			if (ch || errno != EEXIST)
				return ch;
		}
		errno = ENOSPC;
		return NULL;
	}
	if (e->nworkers > 1 && !cfg->local_tpn) {
		/* This worker's: the program steers by TPN % workers. Below every
		 * mode's limit (UTP and CTP: the 20-bit IniRCID), and round again
		 * past it, over the TPNs freed since. */
		const uint32_t per = (TP_CTP_RCID_MAX + 1) / e->nworkers;

		for (uint32_t tries = 0; tries < per; tries++) {
			e->tpn_next = e->tpn_next % (per - 1) + 1;
			c.local_tpn = e->tpn_next * e->nworkers + e->widx;
			ch = tp_chan_create(e->tp, &c);
			if (ch || errno != EEXIST)
				return ch;
		}
		errno = ENOSPC;
		return NULL;
	}
	return tp_chan_create(e->tp, cfg);
}

struct tp_chan *ep_chan_create(struct ep *e, struct ep_chan *c, struct tp_chan_config *cfg)
{
	cfg->user = c;
	if (cfg->mode == TP_MODE_CTP) {
		/* The key of its CC instance, {peer entity, VL}: the VL its frames take. */
		memcpy(cfg->peer_entity, c->peer->ip, sizeof(cfg->peer_entity));
		cfg->vl = e->cfg.native.vl;
	}
	c->by_rcid = cfg->mode == TP_MODE_CTP || cfg->mode == TP_MODE_UTP;
	c->steered = false;
	c->tp = ep_tp_chan_create(e, cfg);
	if (c->tp)
		c->sport = uboe_entropy_port(tp_chan_tpn(c->tp), (uint32_t)(uintptr_t)c->peer);
	return c->tp;
}

/*
 * A UTP channel's packets, (peer, its RCID), to the worker of the channel
 * (TPN mod workers: whichever worker's ep the caller holds), or not any more.
 * Another channel's entry for the same key is not taken over: -EEXIST.
 */
static int worker_rcid(struct ep *e, const struct ep_chan *c, uint32_t rcid, bool add)
{
	const struct ep *lead = e->lead ? e->lead : e;

	return ep_rcid_steer(ep_xdp_rcid_fd(lead->xdp[0]), c->peer->ip_ver, c->peer->ip, rcid,
			     tp_chan_tpn(c->tp) % lead->nworkers, add, false);
}

int ep_chan_connect(struct ep *e, struct ep_chan *c, uint32_t peer_tpn, uint32_t peer_init_psn)
{
	int rc = tp_chan_connect(c->tp, peer_tpn, peer_init_psn);

	if (!rc && sh_of(e) && c->by_rcid && c->peer) {
		rc = ep_share_rcid(sh_of(e), c->peer->ip_ver, c->peer->ip, peer_tpn, e->widx, true);
		c->steered = !rc;
		c->rcid = peer_tpn;
	} else if (!rc && e->nworkers > 1 && c->by_rcid && c->peer) {
		if (c->steered && c->rcid != peer_tpn)
			worker_rcid(e, c, c->rcid, false);	/* connected again, to another */
		rc = worker_rcid(e, c, peer_tpn, true);
		c->steered = !rc;
		c->rcid = peer_tpn;
	}
	return rc;
}

void ep_chan_destroy(struct ep *e, struct ep_chan *c)
{
	if (sh_of(e) && c->steered && c->tp)
		ep_share_rcid(sh_of(e), c->peer->ip_ver, c->peer->ip, c->rcid, e->widx, false);
	else if (e->nworkers > 1 && c->steered && c->tp)
		worker_rcid(e, c, c->rcid, false);
	c->steered = false;
	tp_chan_destroy(c->tp);
	c->tp = NULL;
}

int ep_share_set_uasid(struct ep *e, uint32_t uasid)
{
	return sh_of(e) ? ep_share_uasid(sh_of(e), uasid) : -EINVAL;
}

uint32_t ep_shared_slot(const struct ep *e, bool *direct)
{
	if (direct)
		*direct = sh_of(e) && ep_share_direct(sh_of(e));
	return sh_of(e) ? ep_share_slot(sh_of(e)) : 0;
}

void ep_loop_stats(const struct ep *e, uint64_t *sent, uint64_t *failed)
{
	*sent = e->loop_tx;
	*failed = e->loop_fail;
}

int ep_xdp_counters(const struct ep *e, uint64_t out[UB_EP_CNT__MAX])
{
	if (e->lead)
		e = e->lead;
	if (e->sh)
		return ep_share_stats(e->sh, out);
	return e->xdp[0] ? ep_xdp_stats(e->xdp[0], out) : -1;
}

uint64_t ep_member_tx(const struct ep *e, uint32_t k)
{
	return k < e->nmem ? e->mem_tx[k] : 0;
}

uint64_t ep_rx_frames(const struct ep *e)
{
	return __atomic_load_n(&e->st.rx_frames, __ATOMIC_RELAXED);	/* another worker's thread may ask */
}

bool ep_zerocopy(const struct ep *e) { return xsk_mt_is_zerocopy(e->xm); }
uint64_t ep_rx_queues(const struct ep *e) { return xsk_mt_queues(e->xt, (unsigned)e->ifindex); }

void ep_get_stats(const struct ep *e, struct ep_stats *st)
{
	struct xsk_kstats xs;

	*st = e->st;
	xsk_mt_get_stats(e->xt, &xs);
	st->xsk_rx_dropped = xs.rx_dropped;
	st->xsk_rx_ring_full = xs.rx_ring_full;
	st->xsk_fill_empty = xs.fill_empty;
	st->xsk_pool_locks = xsk_mt_pool_locks(e->xt);
	/* The UMEM's, every worker's binds: counted once, in the lead's. */
	st->xsk_busy_binds = e->lead || !e->xm ? 0 : xsk_mt_busy_binds(e->xm);
}
