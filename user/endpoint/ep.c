// SPDX-License-Identifier: BSD-2-Clause
#include "ep.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ep_xdp.h"
#include "tpg.h"
#include "ubpkt.h"
#include "uboe_wrap.h"
#include "ub_wire.h"
#include "xsk_port.h"

#define BATCH		256
#define NH_REFRESH_NS	1000000000ull

struct ep {
	struct ep_config cfg;
	struct ep_xdp *xdp;
	struct xsk_port *port;
	struct tp_ep *tp;
	int ifindex;
	struct ep_stats st;
};

uint64_t ep_now_ns(void)
{
	return xsk_now_ns();
}

struct ep *ep_open(const struct ep_config *cfg, char *err, size_t errlen)
{
	struct xsk_port_cfg pc = { 0 };
	struct ep *e = calloc(1, sizeof(*e));
	unsigned nq;

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->cfg = *cfg;
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
	pc.nframes = cfg->nframes ? cfg->nframes : 8192;
	pc.frame_size = 4096;
	pc.ring_size = 2048;
	pc.zerocopy = cfg->zerocopy;
	e->port = xsk_port_create(&pc);
	if (!e->port) {
		snprintf(err, errlen, "AF_XDP UMEM: %s", strerror(errno));
		goto fail;
	}
	e->xdp = ep_xdp_attach(cfg->dev, cfg->generic, err, errlen);
	if (!e->xdp)
		goto fail;
	nq = xsk_dev_queues(cfg->dev, UB_EP_MAX_QUEUES);	/* a socket on each: no queue drops */
	for (unsigned q = 0; q < nq; q++) {
		int s = xsk_port_add(e->port, cfg->dev, q, ep_xdp_xskmap_fd(e->xdp), q);

		if (s < 0) {
			snprintf(err, errlen, "AF_XDP socket on %s queue %u%s: %s", cfg->dev, q,
				 cfg->zerocopy ? " (zero-copy)" : "", strerror(-s));
			goto fail;
		}
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
	xsk_port_destroy(e->port);
	ep_xdp_detach(e->xdp);
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

int ep_peer_init(struct ep *e, struct ep_peer *p, uint8_t ip_ver, const uint8_t ip[16],
		 int timeout_ms, char *err, size_t errlen)
{
	int rc;

	memset(p, 0, sizeof(*p));
	p->ip_ver = ip_ver;
	memcpy(p->ip, ip, ip_ver == 6 ? 16 : 4);
	rc = ep_nexthop_resolve(ip_ver, ip, timeout_ms, &p->nh, err, errlen);
	if (!rc)
		rc = check_route(e, p, err, errlen);
	p->checked_ns = ep_now_ns();
	return rc;
}

struct tp_chan *ep_chan_create(struct ep *e, struct ep_chan *c, struct tp_chan_config *cfg)
{
	cfg->user = c;
	c->tp = tp_chan_create(e->tp, cfg);
	if (c->tp)
		c->sport = uboe_entropy_port(tp_chan_tpn(c->tp), (uint32_t)(uintptr_t)c->peer);
	return c->tp;
}

/* Follow route and neighbour changes; keep the old next hop on failure. */
static void refresh_peer(struct ep *e, struct ep_peer *p, uint64_t now)
{
	struct ep_nexthop nh;
	char err[128];

	if (now - p->checked_ns < NH_REFRESH_NS)
		return;
	p->checked_ns = now;
	if (ep_nexthop_lookup(p->ip_ver, p->ip, &nh, err, sizeof(err)) || nh.ifindex != e->ifindex)
		return;
	if (memcmp(nh.dst_mac, p->nh.dst_mac, 6) || memcmp(nh.src_ip, p->nh.src_ip, 16))
		p->nh_changes++;
	p->nh = nh;
}

static unsigned do_rx(struct ep *e, uint64_t now)
{
	struct xsk_frame fr[BATCH];
	unsigned n = xsk_port_rx(e->port, -1, fr, BATCH);

	for (unsigned i = 0; i < n; i++) {
		struct tp_rx_meta meta = { 0 };
		struct ub_view v;
		const uint8_t *tp;

		if (ub_parse_frame(fr[i].data, fr[i].len, 0, &v) != UB_PARSE_OK ||
		    v.kind != UB_KIND_UBOE) {
			e->st.parse++;
		} else if (!v.icrc_ok) {
			e->st.icrc_bad++;
		} else {
			tp = (const uint8_t *)v.tph;
			meta.ecn = v.ecn;
			meta.entropy = v.sport;
			e->st.ce_marked += v.ecn == ECN_CE;
			if (tp_ep_rx(e->tp, now, tp, (size_t)(v.payload + v.payload_len - tp), &meta) ==
			    TP_RX_DROP)
				e->st.tp_drop++;
		}
		xsk_port_free(e->port, &fr[i]);
	}
	e->st.rx_frames += n;
	return n;
}

static unsigned do_tx(struct ep *e, uint64_t now)
{
	const size_t off = UBOE_WRAP_HDR_MAX, cap = xsk_port_frame_size(e->port) - off - UBOE_ICRC_LEN;
	struct xsk_frame fr[BATCH];
	unsigned n = 0, sent, room = xsk_port_tx_room(e->port, 0);

	/* Take from the core only what the tx ring can hold now: a packet it
	 * handed over and the ring refused would be lost on our own host. */
	if (room > BATCH)
		room = BATCH;
	while (n < room) {
		struct tp_tx_info info;
		struct uboe_flow f = { 0 };
		struct ep_chan *c;
		size_t len, hdr;

		if (!xsk_port_alloc(e->port, &fr[n])) {
			e->st.no_frame++;
			break;
		}
		len = tp_ep_tx(e->tp, now, fr[n].data + off, cap, &info);
		if (!len) {
			xsk_port_free(e->port, &fr[n]);
			break;
		}
		c = info.user;
		refresh_peer(e, c->peer, now);
		f.ip_ver = c->peer->ip_ver;
		memcpy(f.src_mac, c->peer->nh.src_mac, 6);
		memcpy(f.dst_mac, c->peer->nh.dst_mac, 6);
		memcpy(f.src_ip, c->peer->nh.src_ip, 16);
		memcpy(f.dst_ip, c->peer->ip, 16);
		f.sport = c->tpg ? tpg_entropy(c->tpg, &info) : c->sport;
		f.flow_label = f.sport;
		f.ecn = ECN_ECT0;
		f.dscp = e->cfg.dscp;
		/* Headers go right before the TP packet; the descriptor points there. */
		hdr = uboe_wrap_hdr_len(f.ip_ver);
		fr[n].addr += off - hdr;
		fr[n].data += off - hdr;
		fr[n].len = (uint32_t)uboe_wrap(fr[n].data, len, &f);
		n++;
	}
	sent = n ? xsk_port_tx(e->port, 0, fr, n) : 0;
	/* A full tx ring loses these like a wire would: the core retransmits. */
	for (unsigned i = sent; i < n; i++)
		xsk_port_free(e->port, &fr[i]);
	e->st.tx_ring_full += n - sent;
	e->st.tx_frames += sent;
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
			xsk_port_poll(e->port, timeout_ms);
	}
	return (int)moved;
}

void ep_get_stats(const struct ep *e, struct ep_stats *st)
{
	struct xsk_port_stats xs;

	*st = e->st;
	xsk_port_get_stats(e->port, &xs);
	st->xsk_rx_dropped = xs.rx_dropped;
	st->xsk_rx_ring_full = xs.rx_ring_full;
	st->xsk_fill_empty = xs.fill_empty;
}
