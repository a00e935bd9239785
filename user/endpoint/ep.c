// SPDX-License-Identifier: BSD-2-Clause
#include "ep.h"

#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "ep_share.h"
#include "ep_xdp.h"
#include "tpg.h"
#include "ubpkt.h"
#include "uboe_wrap.h"
#include "ub_wire.h"
#include "xsk_mt.h"
#include "xsk_port.h"

#define BATCH		256
/* A multi-buffer frame, gathered (rx) or built (tx) in one piece: the
 * largest UB MTU's data packet with every header, and a 9216-byte jumbo frame. */
#define JUMBO_BUF	16384
#define FRAG_MAX	(JUMBO_BUF / EP_FRAME_SIZE)	/* UMEM frames of one packet */
#define NH_REFRESH_NS	1000000000ull

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
	/* shared mode (ep_share.h) */
	struct ep_share *sh;
	int tx_fd;		/* veth mode: frames leave by this AF_PACKET socket */
	int loop_fd;		/* frames to the device's own jetties: into our veth */
	uint32_t tpn_next;	/* the next TPN to try in the slot's range */
	uint64_t loop_tx, loop_fail;
};

void ep_set_ctl(struct ep *e, ep_ctl_fn fn, void *ctx)
{
	e->ctl = fn;
	e->ctl_ctx = ctx;
}

/* The UMEM: multi-buffer where the kernel has it (not in shared mode, whose
 * veth and AF_PACKET paths carry one buffer per frame). */
static int make_port(struct ep *e)
{
	struct xsk_mt_cfg mc = { 0 };

	mc.nframes = e->cfg.nframes ? e->cfg.nframes : 8192;
	mc.frame_size = EP_FRAME_SIZE;
	mc.ring_size = 2048;
	mc.zerocopy = e->cfg.zerocopy;
	mc.sg = !e->cfg.shared && xsk_mt_sg_supported();
	e->xm = xsk_mt_create(&mc);
	if (!e->xm)
		return -errno;
	e->xt = xsk_mt_thread(e->xm, mc.nframes);
	return e->xt ? 0 : -errno;
}

static int bind_socks(void *arg, const char *dev, unsigned nq, int xskmap_fd, bool is_dev, char *err,
		      size_t errlen)
{
	struct ep *e = arg;

	/* Shared mode: the UMEM's socket is the first one (libxdp), so it is
	 * made here, in the namespace of the device it binds to. */
	if (!e->xm && make_port(e)) {
		snprintf(err, errlen, "AF_XDP UMEM: %s", strerror(errno));
		return -errno;
	}
	if (is_dev)
		e->sock0[0] = xsk_mt_nsocks(e->xt);	/* the device's: frames leave by it */

	for (unsigned q = 0; q < nq; q++) {
		int s = xsk_mt_add(e->xt, dev, q, true, true, xskmap_fd, q);

		/* A socket closed just before (a server reopening its ports for the
		 * next client, a process just ended) frees its queue
		 * asynchronously: EBUSY for a moment. */
		for (int tries = 0; s == -EBUSY && tries < 100; tries++) {
			usleep(20 * 1000);
			s = xsk_mt_add(e->xt, dev, q, true, true, xskmap_fd, q);
		}
		if (s < 0) {
			snprintf(err, errlen, "AF_XDP socket on %s queue %u%s: %s", dev, q,
				 e->cfg.zerocopy ? " (zero-copy)" : "", strerror(-s));
			return s;
		}
	}
	return 0;
}

/* Shared mode: the device's program joined (or attached), a slot, the sockets. */
static int open_shared(struct ep *e, char *err, size_t errlen)
{
	const struct ep_config *cfg = &e->cfg;
	struct ep_nexthop nh = { .ifindex = e->ifindex };
	struct ep_share_cfg sc = { 0 };

	if (ep_nexthop_dev_info(&nh, err, errlen))
		return -1;
	memcpy(e->mac[0], nh.src_mac, 6);
	sc.dev = cfg->dev;
	sc.generic = cfg->generic;
	sc.ethertype = cfg->native.ethertype;
	sc.no_direct = cfg->share_no_direct;
	sc.dev_mtu = nh.mtu;
	sc.bind = bind_socks;
	sc.arg = e;
	e->sh = ep_share_open(&sc, err, errlen);
	if (!e->sh)
		return -1;
	e->dev_mtu[0] = ep_share_mtu(e->sh, nh.mtu);
	e->tx_fd = ep_share_tx_fd(e->sh);
	e->loop_fd = ep_share_loop_fd(e->sh);
	return 0;
}

/* Attach the endpoint program to member k and a socket to each of its queues. */
static int open_member(struct ep *e, uint32_t k, const char *dev, char *err, size_t errlen)
{
	const struct ep_config *cfg = &e->cfg;
	struct ep_nexthop nh = { .ifindex = (int)if_nametoindex(dev) };
	unsigned nq;

	if (!nh.ifindex) {
		snprintf(err, errlen, "no device %s", dev);
		return -1;
	}
	if (ep_nexthop_dev_info(&nh, err, errlen))
		return -1;
	memcpy(e->mac[k], nh.src_mac, 6);
	e->dev_mtu[k] = nh.mtu;
	e->xdp[k] = ep_xdp_attach(dev, cfg->generic, cfg->native.ethertype, err, errlen);
	if (!e->xdp[k])
		return -1;
	e->sock0[k] = xsk_mt_nsocks(e->xt);
	nq = xsk_dev_queues(dev, UB_EP_MAX_QUEUES);	/* a socket on each: no queue drops */
	return bind_socks(e, dev, nq, ep_xdp_xskmap_fd(e->xdp[k]), false, err, errlen) ? -1 : 0;
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
	uint32_t dmin;

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->cfg = *cfg;
	e->tx_fd = e->loop_fd = -1;
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
	e->nmem = cfg->nmembers > 1 ? cfg->nmembers : 1;
	e->ifindex = (int)if_nametoindex(cfg->dev);
	if (!e->ifindex) {
		snprintf(err, errlen, "no device %s", cfg->dev);
		goto fail;
	}
	e->tp = tp_ep_create(&cfg->tp);
	if (!e->tp) {
		snprintf(err, errlen, "transport core: %s", strerror(errno));
		goto fail;
	}
	if (cfg->shared) {
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
	/* Multi-buffer sockets: any frame longer than a UMEM frame is gathered
	 * on rx; packets are built whole in jbuf only for a UB MTU that one
	 * frame cannot hold. */
	if (xsk_mt_is_sg(e->xm)) {
		e->jbuf = malloc(JUMBO_BUF);
		if (!e->jbuf) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		e->big = ep_ub_mtu_max(e, 4, &dmin, NULL) >
			 ep_ub_mtu_fit(dmin, cfg->native.ethertype, 4, EP_FRAME_SIZE);
	}
	return e;
fail:
	ep_close(e);
	return NULL;
}

void ep_close(struct ep *e)
{
	if (!e)
		return;
	/* Sockets before the program: nothing is steered to a closed socket. */
	xsk_mt_destroy(e->xm);
	free(e->jbuf);
	ep_share_close(e->sh);
	for (uint32_t k = 0; k < EP_MAX_MEMBERS; k++)
		ep_xdp_detach(e->xdp[k]);
	tp_ep_destroy(e->tp);
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
static int peer_oif(struct ep *e, uint8_t ip_ver, const uint8_t ip[16])
{
	struct ep_nexthop nh;
	char err[128];
	int rc = ep_nexthop_lookup(ip_ver, ip, 0, &nh, err, sizeof(err));

	if ((rc && rc != -EAGAIN) || nh.ifindex == e->ifindex)
		return 0;
	rc = ep_nexthop_lookup(ip_ver, ip, e->ifindex, &nh, err, sizeof(err));
	return (!rc || rc == -EAGAIN) && nh.gateway && nh.ifindex == e->ifindex ? e->ifindex : 0;
}

/*
 * Each other member's next hop to p: the route by that member's device (the
 * kernel takes the peer as on link there when nothing routes by it) and its
 * neighbour entry, resolved as the first member's is.
 */
static int member_hops(struct ep *e, struct ep_peer *p, int timeout_ms, char *err, size_t errlen)
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
		rc = ep_nexthop_resolve(p->ip_ver, p->ip, ifindex, timeout_ms, &nh, why, sizeof(why));
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
	int rc;

	memset(p, 0, sizeof(*p));
	p->ip_ver = ip_ver;
	memcpy(p->ip, ip, ip_ver == 6 ? 16 : 4);
	if (e->sh && addr_on_dev(e->cfg.dev, ip_ver, ip)) {
		/* A jetty on this very device: through its program, from and to itself. */
		p->local = true;
		p->nh.ip_ver = ip_ver;
		p->nh.ifindex = e->ifindex;
		memcpy(p->nh.src_ip, ip, 16);
		memcpy(p->nh.via, ip, 16);
		memcpy(p->nh.src_mac, e->mac[0], 6);
		memcpy(p->nh.dst_mac, e->mac[0], 6);
		p->nh.mtu = e->dev_mtu[0];
		p->checked_ns = ep_now_ns();
		return 0;
	}
	p->oif = peer_oif(e, ip_ver, ip);
	if (e->cfg.nexthop_mac_set) {
		/* The MAC is given, so an unresolved neighbour is no failure. */
		rc = ep_nexthop_lookup(ip_ver, ip, p->oif, &p->nh, err, errlen);
		if (rc == -EAGAIN)
			rc = 0;
		memcpy(p->nh.dst_mac, e->cfg.nexthop_mac, 6);
	} else {
		rc = ep_nexthop_resolve(ip_ver, ip, p->oif, timeout_ms, &p->nh, err, errlen);
	}
	if (!rc)
		rc = check_route(e, p, err, errlen);
	if (!rc)
		rc = member_hops(e, p, timeout_ms, err, errlen);
	p->checked_ns = ep_now_ns();
	return rc;
}

struct tp_chan *ep_tp_chan_create(struct ep *e, const struct tp_chan_config *cfg)
{
	const uint32_t span = 1u << UB_EP_TPN_SHIFT;
	struct tp_chan_config c = *cfg;
	struct tp_chan *ch;

	if (!e->sh || cfg->local_tpn)
		return tp_chan_create(e->tp, cfg);
	/* This process's TPNs (and RCIDs): the slot's range. */
	for (uint32_t tries = 0; tries < span; tries++) {
		c.local_tpn = ep_share_slot(e->sh) << UB_EP_TPN_SHIFT | (e->tpn_next++ & (span - 1));
		ch = tp_chan_create(e->tp, &c);
		if (ch || errno != EEXIST)
			return ch;
	}
	errno = ENOSPC;
	return NULL;
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

int ep_chan_connect(struct ep *e, struct ep_chan *c, uint32_t peer_tpn, uint32_t peer_init_psn)
{
	int rc = tp_chan_connect(c->tp, peer_tpn, peer_init_psn);

	if (!rc && e->sh && c->by_rcid && c->peer) {
		rc = ep_share_rcid(e->sh, c->peer->ip_ver, c->peer->ip, peer_tpn, true);
		c->steered = !rc;
		c->rcid = peer_tpn;
	}
	return rc;
}

void ep_chan_destroy(struct ep *e, struct ep_chan *c)
{
	if (e->sh && c->steered && c->tp)
		ep_share_rcid(e->sh, c->peer->ip_ver, c->peer->ip, c->rcid, false);
	c->steered = false;
	tp_chan_destroy(c->tp);
	c->tp = NULL;
}

int ep_share_set_uasid(struct ep *e, uint32_t uasid)
{
	return e->sh ? ep_share_uasid(e->sh, uasid) : -EINVAL;
}

uint32_t ep_shared_slot(const struct ep *e, bool *direct)
{
	if (direct)
		*direct = e->sh && ep_share_direct(e->sh);
	return e->sh ? ep_share_slot(e->sh) : 0;
}

void ep_loop_stats(const struct ep *e, uint64_t *sent, uint64_t *failed)
{
	*sent = e->loop_tx;
	*failed = e->loop_fail;
}

int ep_xdp_counters(const struct ep *e, uint64_t out[UB_EP_CNT__MAX])
{
	if (e->sh)
		return ep_share_stats(e->sh, out);
	return e->xdp[0] ? ep_xdp_stats(e->xdp[0], out) : -1;
}

/* Follow route and neighbour changes; keep the old next hop on failure. */
static void refresh_peer(struct ep *e, struct ep_peer *p, uint64_t now)
{
	struct ep_nexthop nh;
	char err[128];
	int rc;

	if (p->local || now - p->checked_ns < NH_REFRESH_NS)
		return;
	p->checked_ns = now;
	rc = ep_nexthop_lookup(p->ip_ver, p->ip, p->oif, &nh, err, sizeof(err));
	if (e->cfg.nexthop_mac_set && rc == -EAGAIN)
		rc = 0;
	if (rc || nh.ifindex != e->ifindex)
		return;
	if (e->cfg.nexthop_mac_set)
		memcpy(nh.dst_mac, e->cfg.nexthop_mac, 6);
	if (memcmp(nh.dst_mac, p->nh.dst_mac, 6) || memcmp(nh.src_ip, p->nh.src_ip, 16))
		p->nh_changes++;
	p->nh = nh;
	for (uint32_t k = 1; k < e->nmem && !e->cfg.nexthop_mac_set; k++) {
		const int ifindex = ep_xdp_ifindex(e->xdp[k]);

		if (ep_nexthop_lookup(p->ip_ver, p->ip, ifindex, &nh, err, sizeof(err)) ||
		    nh.ifindex != ifindex)
			continue;
		if (memcmp(nh.dst_mac, p->member_mac[k], 6))
			p->nh_changes++;
		memcpy(p->member_mac[k], nh.dst_mac, 6);
	}
}

/* Congestion marked on the way: IP CE, or on a UB port the NTH's FECN. */
static bool ce_marked(const struct ub_view *v)
{
	uint8_t fecn = ub_cci_fecn(v->cci);

	if (v->kind == UB_KIND_NATIVE)
		return ub_cci_mode(v->cci) == UB_CCI_MODE_FECN &&
		       (fecn == UB_FECN_LIGHT_CE || fecn == UB_FECN_SEVERE_CE);
	return v->ecn == ECN_CE;
}

static bool is_utp(const uint8_t *tp, size_t len)
{
	struct ub_tph_fields f;

	if (len < sizeof(struct ub_tph))
		return false;
	ub_tph_decode((const struct ub_tph *)tp, &f);
	return f.opcode == UB_TP_UTP_DATA;
}

/* One received packet (its frame's bytes: in the UMEM, or gathered). */
static void rx_packet(struct ep *e, uint64_t now, const uint8_t *data, size_t flen)
{
	const uint16_t ethertype = e->cfg.native.ethertype;
	const enum ub_frame_kind want = ethertype ? UB_KIND_NATIVE : UB_KIND_UBOE;
	struct tp_rx_meta meta;
	struct ub_view v;
	const uint8_t *tp;
	size_t len;

	/* A UB port may carry CTP too (headers/ub_wire.h); UBoE never does. */
	if ((ethertype ? ub_parse_frame_ctp(data, flen, ethertype, &v) :
			 ub_parse_frame(data, flen, ethertype, &v)) != UB_PARSE_OK ||
	    v.kind != want) {
		e->st.parse++;
	} else if (!v.icrc_ok) {
		e->st.icrc_bad++;
	} else if (e->cfg.npi_check && v.pid != e->cfg.native.pid) {
		e->st.npi_partition++;
	} else if (e->cfg.npi_check && v.perm == UB_PERM_LOW && e->cfg.native.perm == UB_PERM_LOW) {
		e->st.npi_permission++;
	} else {
		tp = ub_view_tp(&v, &len);
		if (e->ctl && !v.ctp && is_utp(tp, len) && e->ctl(e->ctl_ctx, tp, len, v.ip_ver, v.src_ip)) {
			e->st.ctl_rx++;
			return;
		}
		tp_rx_meta_from_view(&v, &meta);
		e->st.ce_marked += ce_marked(&v);
		if (tp_ep_rx(e->tp, now, tp, len, &meta) == TP_RX_DROP)
			e->st.tp_drop++;
	}
}

/*
 * The frames of a multi-buffer packet, fr[i] on (`more` on all but its last),
 * gathered into jbuf and freed. Returns the index of its last frame; *len 0
 * when the packet does not fit jbuf or lacks its end (a packet of more
 * frames than one rx batch: xsk_mt_rx splits no other).
 */
static unsigned rx_gather(struct ep *e, struct xsk_mt_frame *fr, unsigned i, unsigned n, size_t *len)
{
	size_t got = 0;
	bool fits = e->jbuf != NULL;

	for (;; i++) {
		if (fits && got + fr[i].len <= JUMBO_BUF)
			memcpy(e->jbuf + got, fr[i].data, fr[i].len);
		else
			fits = false;
		got += fr[i].len;
		xsk_mt_free(e->xt, fr[i].addr);
		if (!fr[i].more || i + 1 == n)
			break;
	}
	*len = fits && !fr[i].more ? got : 0;
	return i;
}

static unsigned do_rx(struct ep *e, uint64_t now)
{
	struct xsk_mt_frame fr[BATCH];
	unsigned n = xsk_mt_rx(e->xt, fr, e->cfg.rx_batch && e->cfg.rx_batch < BATCH ? e->cfg.rx_batch : BATCH);
	unsigned pkts = 0;

	for (unsigned i = 0; i < n; i++, pkts++) {
		size_t len;

		if (!fr[i].more) {
			rx_packet(e, now, fr[i].data, fr[i].len);
			xsk_mt_free(e->xt, fr[i].addr);
			continue;
		}
		i = rx_gather(e, fr, i, n, &len);
		e->st.rx_multi_buffer++;
		if (len)
			rx_packet(e, now, e->jbuf, len);
		else
			e->st.parse++;
	}
	e->st.rx_frames += pkts;
	return pkts;
}

/* The flow of a packet to p: addresses, entropy port, ECN, native fields. */
static void flow_to(const struct ep *e, const struct ep_peer *p, uint16_t sport,
		    const struct tp_tx_info *info, struct uboe_flow *f)
{
	const struct ep_native *nat = &e->cfg.native;

	memset(f, 0, sizeof(*f));
	f->ip_ver = p->ip_ver;
	memcpy(f->src_mac, p->nh.src_mac, 6);
	memcpy(f->dst_mac, p->nh.dst_mac, 6);
	memcpy(f->src_ip, p->nh.src_ip, 16);
	memcpy(f->dst_ip, p->ip, 16);
	f->sport = sport;
	f->flow_label = sport;
	f->ecn = ECN_ECT0;
	f->dscp = e->cfg.dscp;
	if (nat->ethertype) {
		f->ub_ethertype = nat->ethertype;
		f->vl = nat->vl;
		f->rt = nat->rt;
		f->cci = info && info->has_cci ? info->cci : nat->cci;
		f->perm = nat->perm;
		f->pid = nat->pid;
	}
}

/* The TP packet sits at data + off: headers go right before it, and the
 * descriptor points there. */
static void wrap_frame(struct xsk_mt_frame *fr, size_t off, size_t len, const struct uboe_flow *f)
{
	size_t hdr = uboe_wrap_flow_hdr_len(f);

	fr->addr += off - hdr;
	fr->data += off - hdr;
	fr->len = (uint32_t)uboe_wrap(fr->data, len, f);
}

/* n frames out through AF_PACKET socket fd, which copies them: each is
 * free again at once. Returns how many left. */
static unsigned pkt_send(struct ep *e, int fd, struct xsk_mt_frame *f, unsigned n)
{
	struct mmsghdr m[BATCH];
	struct iovec v[BATCH];
	unsigned sent = 0;

	for (unsigned i = 0; i < n; i++) {
		v[i].iov_base = f[i].data;
		v[i].iov_len = f[i].len;
		memset(&m[i], 0, sizeof(m[i]));
		m[i].msg_hdr.msg_iov = &v[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	while (sent < n) {
		int r = sendmmsg(fd, m + sent, n - sent, MSG_DONTWAIT);

		if (r <= 0)
			break;
		sent += (unsigned)r;
	}
	for (unsigned i = 0; i < n; i++)
		xsk_mt_free(e->xt, f[i].addr);
	return sent;
}

/*
 * Frames of member 0 out: the AF_XDP socket, or in veth mode the AF_PACKET
 * socket on the device. Returns how many left; the rest are the caller's
 * still (xsk) or freed.
 */
static unsigned send_frames(struct ep *e, struct xsk_mt_frame *f, unsigned n)
{
	if (e->tx_fd < 0)
		return xsk_mt_tx(e->xt, e->sock0[0], f, n);
	return pkt_send(e, e->tx_fd, f, n);
}

/* Frames to jetties of this device: into our veth, whose near end runs the
 * device's program (it steers them as it steers the device's frames). */
static void loop_frames(struct ep *e, struct xsk_mt_frame *f, unsigned n)
{
	unsigned sent = pkt_send(e, e->loop_fd, f, n);

	e->loop_tx += sent;
	e->loop_fail += n - sent;
}

int ep_send_raw(struct ep *e, struct ep_peer *p, uint16_t sport, const void *tp, size_t len)
{
	const size_t off = UBOE_WRAP_HDR_MAX;
	struct uboe_flow f;
	struct xsk_mt_frame fr;

	if (len > EP_FRAME_SIZE - off - UBOE_ICRC_LEN ||
	    (e->tx_fd < 0 && !p->local && !xsk_mt_tx_room(e->xt, e->sock0[0])))
		return -ENOBUFS;
	if (!xsk_mt_alloc(e->xt, &fr)) {
		e->st.no_frame++;
		return -ENOBUFS;
	}
	memcpy(fr.data + off, tp, len);
	refresh_peer(e, p, ep_now_ns());
	flow_to(e, p, sport, NULL, &f);
	wrap_frame(&fr, off, len, &f);
	if (p->local) {
		loop_frames(e, &fr, 1);
	} else if (send_frames(e, &fr, 1) != 1) {
		if (e->tx_fd < 0)
			xsk_mt_free(e->xt, fr.addr);
		e->st.tx_ring_full++;
		return -ENOBUFS;
	}
	e->st.tx_frames++;
	e->st.ctl_tx++;
	e->mem_tx[0]++;		/* socket 0 is the first member's */
	return 0;
}

/*
 * A packet built in jbuf (at off, wrapped there) into UMEM frames: a frame's
 * worth each, `more` on all but the last (multi-buffer AF_XDP). Returns how
 * many frames (0: not enough free ones; none kept).
 */
static unsigned split_frames(struct ep *e, const uint8_t *pkt, size_t len, struct xsk_mt_frame *out)
{
	unsigned k = 0;

	for (size_t done = 0; done < len; k++) {
		size_t chunk = len - done < EP_FRAME_SIZE ? len - done : EP_FRAME_SIZE;

		if (!xsk_mt_alloc(e->xt, &out[k])) {
			while (k--)
				xsk_mt_free(e->xt, out[k].addr);
			return 0;
		}
		memcpy(out[k].data, pkt + done, chunk);
		out[k].len = (uint32_t)chunk;
		done += chunk;
		out[k].more = done < len;
	}
	return k;
}

static unsigned do_tx(struct ep *e, uint64_t now)
{
	const size_t off = UBOE_WRAP_HDR_MAX;
	/* The core's room for one TP packet: the rest of a UMEM frame, or with
	 * multi-buffer frames the rest of jbuf. */
	const size_t cap = (e->big ? JUMBO_BUF : EP_FRAME_SIZE) - off - UBOE_ICRC_LEN;
	const unsigned per_pkt = e->big ? FRAG_MAX : 1;	/* tx ring slots a packet may take */
	struct xsk_mt_frame fr[EP_MAX_MEMBERS][BATCH];	/* 32 KiB */
	struct xsk_mt_frame lo[BATCH];			/* to this device's own jetties */
	unsigned n = 0, cnt[EP_MAX_MEMBERS] = { 0 }, room = BATCH, nlo = 0, tot = 0;

	/* Take from the core only what the tx rings can hold now: a packet it
	 * handed over and a ring refused would be lost on our own host. Every
	 * member may get them all, so the smallest room bounds the batch. (An
	 * AF_PACKET socket has no ring to fill.) Counted in frames: a
	 * multi-buffer packet's frames go into the ring together. */
	for (uint32_t k = 0; k < e->nmem && e->tx_fd < 0; k++) {
		unsigned r = xsk_mt_tx_room(e->xt, e->sock0[k]);

		if (r < room)
			room = r;
	}
	while (tot + per_pkt <= room && nlo + per_pkt <= BATCH) {
		struct tp_tx_info info;
		struct uboe_flow f;
		struct xsk_mt_frame x;
		struct ep_chan *c;
		uint8_t *buf;
		size_t len;
		uint32_t k = 0;
		unsigned nf = 1;

		if (!e->big) {
			if (!xsk_mt_alloc(e->xt, &x)) {
				e->st.no_frame++;
				break;
			}
			buf = x.data;
		} else {
			if (xsk_mt_free_frames(e->xt) < FRAG_MAX) {
				xsk_mt_service(e->xt);
				if (xsk_mt_free_frames(e->xt) < FRAG_MAX) {
					e->st.no_frame++;
					break;
				}
			}
			buf = e->jbuf;
		}
		len = tp_ep_tx(e->tp, now, buf + off, cap, &info);
		if (!len) {
			if (!e->big)
				xsk_mt_free(e->xt, x.addr);
			break;
		}
		c = info.user;
		refresh_peer(e, c->peer, now);
		flow_to(e, c->peer, c->tpg ? tpg_entropy(c->tpg, &info) : c->sport, &info, &f);
		if (info.ctp) {
			/* The entity's load balancing: the LBF picks the member port. */
			f.ctp = true;
			f.lbf = (uint8_t)f.sport;
			k = f.lbf % e->nmem;
			if (k) {
				memcpy(f.src_mac, e->mac[k], 6);
				memcpy(f.dst_mac, c->peer->member_mac[k], 6);
			}
		}
		if (e->big) {
			/* Wrapped in jbuf, then copied out a UMEM frame's worth at a time. */
			struct xsk_mt_frame w = { .data = buf };

			wrap_frame(&w, off, len, &f);
			nf = split_frames(e, w.data, w.len, c->peer->local ? &lo[nlo] : &fr[k][cnt[k]]);
			if (!nf) {
				e->st.no_frame++;	/* lost: the core retransmits */
				break;
			}
			e->st.tx_multi_buffer += nf > 1;
		} else {
			wrap_frame(&x, off, len, &f);
			if (c->peer->local)
				lo[nlo] = x;
			else
				fr[k][cnt[k]] = x;
		}
		if (c->peer->local)
			nlo += nf;
		else
			cnt[k] += nf;
		tot += nf;
		n++;
	}
	if (nlo) {
		loop_frames(e, lo, nlo);
		e->st.tx_frames += nlo;
		e->mem_tx[0] += nlo;
	}
	for (uint32_t k = 0; k < e->nmem; k++) {
		unsigned sent = !cnt[k] ? 0 : k ? xsk_mt_tx(e->xt, e->sock0[k], fr[k], cnt[k]) :
				 send_frames(e, fr[k], cnt[k]);

		unsigned pk = 0, lost = 0;

		/* A full tx ring loses these like a wire would (RTP retransmits).
		 * Counted in packets: a multi-buffer one's last frame has no `more`. */
		for (unsigned i = 0; i < cnt[k]; i++) {
			if (i >= sent && e->tx_fd < 0)
				xsk_mt_free(e->xt, fr[k][i].addr);
			if (!fr[k][i].more)
				*(i < sent ? &pk : &lost) += 1;
		}
		e->st.tx_ring_full += lost;
		e->st.tx_frames += pk;
		e->mem_tx[k] += pk;
	}
	return n;
}

int ep_progress(struct ep *e, int timeout_ms)
{
	uint64_t now = ep_now_ns(), dl;
	unsigned moved;

	moved = do_rx(e, now);
	dl = tp_ep_next_deadline(e->tp);
	if (dl <= now)
		tp_ep_tick(e->tp, now);
	moved += do_tx(e, now);
	if (!moved && timeout_ms) {
		dl = tp_ep_next_deadline(e->tp);
		if (dl != UINT64_MAX) {
			uint64_t ms = dl > now ? (dl - now) / 1000000 : 0;

			if (ms < (uint64_t)timeout_ms)
				timeout_ms = (int)ms;
		}
		if (timeout_ms > 0)
			xsk_mt_poll(e->xt, timeout_ms);
	}
	return (int)moved;
}

#define EP_WAIT_MAX_FDS 64

int ep_wait(struct ep *const *eps, unsigned n, uint64_t max_ns)
{
	struct pollfd pfd[EP_WAIT_MAX_FDS];
	uint64_t now = ep_now_ns(), dl = now + max_ns, t;
	struct timespec ts;
	nfds_t nfd = 0;
	int r;

	for (unsigned i = 0; i < n; i++) {
		uint64_t d = tp_ep_next_deadline(eps[i]->tp);

		if (d < dl)
			dl = d;
		/* Completions reaped, the fill ring topped up: what poll() waits on is real. */
		xsk_mt_service(eps[i]->xt);
		for (int k = 0; k < xsk_mt_nsocks(eps[i]->xt) && nfd < EP_WAIT_MAX_FDS; k++) {
			pfd[nfd].fd = xsk_mt_fd(eps[i]->xt, k);
			pfd[nfd].events = POLLIN;
			pfd[nfd++].revents = 0;
		}
	}
	if (dl <= now)
		return 0;
	t = dl - now;
	ts.tv_sec = (time_t)(t / 1000000000u);
	ts.tv_nsec = (long)(t % 1000000000u);
	r = ppoll(pfd, nfd, &ts, NULL);
	return r < 0 ? -errno : r;
}

int ep_poll_fds(struct ep *e, int *fds, int max)
{
	int n = 0;

	xsk_mt_service(e->xt);
	for (int k = 0; k < xsk_mt_nsocks(e->xt) && n < max; k++)
		fds[n++] = xsk_mt_fd(e->xt, k);
	return n;
}

/* What a data packet of a UB MTU's payload adds, above the payload. */
#define TP_DATA_HDR_MAX	(16 + 8 + 16)	/* TPH | TAH | MAETAH (CTP: less) */
#define XSK_RX_HEADROOM	256		/* XDP_PACKET_HEADROOM: a received frame starts there */

uint32_t ep_ub_mtu_fit(uint32_t dev_mtu, bool native, uint8_t ip_ver, uint32_t frame_size)
{
	/* The IP packet's overhead; a native frame adds LPH and NTH, which the
	 * device MTU covers too (everything after the Ethernet header). */
	const uint32_t l3 = (native ? (uint32_t)UB_NATIVE_HDR_LEN : 0) + (ip_ver == 6 ? 40 : 20) +
			    8 + TP_DATA_HDR_MAX + UBOE_ICRC_LEN;
	uint32_t best = 0;

	/* The UMEM frame: sent from UBOE_WRAP_HDR_MAX with room for any TP
	 * packet (TP_HDR_MAX), received at the kernel's headroom. Multi-buffer
	 * (frame_size 0): a packet is built whole in JUMBO_BUF, then split. */
	if (!frame_size)
		frame_size = JUMBO_BUF;
	for (uint32_t m = EP_UB_MTU_MIN; m <= EP_UB_MTU_MAX; m *= 2)
		if (m + l3 <= dev_mtu && m + TP_HDR_MAX + UBOE_WRAP_HDR_MAX + UBOE_ICRC_LEN +
					 XSK_RX_HEADROOM <= frame_size)
			best = m;
	return best;
}

uint32_t ep_frame_bound(void)
{
	static int sg = -1;

	if (sg < 0)
		sg = xsk_mt_sg_supported();
	return sg ? 0 : EP_FRAME_SIZE;
}

int ep_dev_mtu(const char *dev, uint32_t *mtu, char *err, size_t errlen)
{
	struct ep_nexthop nh = { .ifindex = (int)if_nametoindex(dev) };

	if (!nh.ifindex) {
		snprintf(err, errlen, "no device %s", dev);
		return -ENODEV;
	}
	if (ep_nexthop_dev_info(&nh, err, errlen))
		return -EIO;
	*mtu = nh.mtu;
	return 0;
}

uint32_t ep_ub_mtu_max(const struct ep *e, uint8_t ip_ver, uint32_t *dev_mtu, uint32_t *member)
{
	uint32_t dmin = UINT32_MAX, kmin = 0;

	for (uint32_t k = 0; k < e->nmem; k++)
		if (e->dev_mtu[k] < dmin) {
			dmin = e->dev_mtu[k];
			kmin = k;
		}
	if (dev_mtu)
		*dev_mtu = dmin;
	if (member)
		*member = kmin;
	return ep_ub_mtu_fit(dmin, e->cfg.native.ethertype != 0, ip_ver,
			     e->xm && xsk_mt_is_sg(e->xm) ? 0 : EP_FRAME_SIZE);
}

uint64_t ep_member_tx(const struct ep *e, uint32_t k)
{
	return k < e->nmem ? e->mem_tx[k] : 0;
}

uint64_t ep_rx_frames(const struct ep *e)
{
	return e->st.rx_frames;
}

void ep_get_stats(const struct ep *e, struct ep_stats *st)
{
	struct xsk_kstats xs;

	*st = e->st;
	xsk_mt_get_stats(e->xt, &xs);
	st->xsk_rx_dropped = xs.rx_dropped;
	st->xsk_rx_ring_full = xs.rx_ring_full;
	st->xsk_fill_empty = xs.fill_empty;
}
