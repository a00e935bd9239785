// SPDX-License-Identifier: BSD-2-Clause
/*
 * The endpoint's datapath (ep.h): frames received, parsed, checked and
 * handed to the transport core (or to the control hook); the core's packets
 * wrapped in place in UMEM frames (multi-buffer: in a run of adjacent ones,
 * or, with none free, built whole and split)
 * and sent by the member ports, our own veth or an AF_PACKET socket; the
 * rounds and the waits.
 */
#include "endpoint/ep_int.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/rtnetlink.h>

#include "endpoint/ep_rx_join.h"
#include "transport/tpg.h"
#include "lib/clock.h"
#include "lib/frame.h"
#include "lib/uboe_wrap.h"
#include "ub_wire.h"

#define BATCH		256
#define FRAG_MAX	(JUMBO_BUF / EP_FRAME_SIZE)	/* UMEM frames of one packet */
/* While rounds move packets (no wait, so no wake for a change), the changes
 * are read at least this often: one syscall, nothing when none came. */
#define EP_NL_READ_NS	1000000ull
/* A deadline nearer than this is run by the caller's next round, not slept
 * for: a pacer's next packet, a delayed TPACK (5 us), sooner than a sleep
 * and its wake-up. */
#define EP_SPIN_NS	10000ull

static bool on_member(const struct ep *e, int ifindex)
{
	if (ifindex == e->ifindex)
		return true;
	for (uint32_t k = 1; k < e->nmem; k++)
		if (ifindex == ep_xdp_ifindex(e->xdp[k]))
			return true;
	return false;
}

/* Atomic: ep_peer_init reads it on another thread (relaxed: a generation,
 * nothing published with it). */
static void nh_changed(struct ep *e) { __atomic_fetch_add(&e->nh_gen, 1, __ATOMIC_RELAXED); }

/*
 * A change that may move a peer's next hop: a neighbour entry (of IP, not a
 * bridge's) on a device we send by; any route, rule, next-hop object,
 * address or link, since each can change which route the kernel takes
 * (IPv4 flushes routes when a link goes down or an address goes, without a
 * message of their own).
 */
static void nh_event(void *ctx, const struct nl_event *ev)
{
	struct ep *e = ctx;

	if (ev->type == RTM_NEWNEIGH || ev->type == RTM_DELNEIGH) {
		if ((ev->family == AF_INET || ev->family == AF_INET6) && on_member(e, ev->ifindex))
			nh_changed(e);
		return;
	}
	nh_changed(e);
}

/* The changes queued on the monitor socket; lost ones (a full queue) count
 * as a change of everything. */
static void read_changes(struct ep *e, uint64_t now)
{
	e->mon_read_ns = now;
	if (nl_monitor_read(e->mon, nh_event, e) < 0)
		nh_changed(e);
}

/* Follow route and neighbour changes; keep the old next hop on failure
 * (the change that mends it will come as a change too). */
static void refresh_peer(struct ep *e, struct ep_peer *p)
{
	struct ep_nexthop nh;
	char err[128];
	int rc;

	if (p->local || p->nh_gen == e->nh_gen)
		return;
	p->nh_gen = e->nh_gen;
	rc = ep_nexthop_lookup(e->rt, p->ip_ver, p->ip, p->oif, &nh, err, sizeof(err));
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

		if (ep_nexthop_lookup(e->rt, p->ip_ver, p->ip, ifindex, &nh, err, sizeof(err)) ||
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

/* One received packet (its frame's bytes: in the UMEM, gathered, or handed
 * over by another worker). */
void ep_rx_packet(struct ep *e, uint64_t now, const uint8_t *data, size_t flen)
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
static unsigned rx_gather(struct ep *e, struct xsk_mt_thr *xt, struct xsk_mt_frame *fr, unsigned i, unsigned n,
			  size_t *len)
{
	size_t got = 0;
	bool fits = e->jbuf != NULL;

	for (;; i++) {
		if (fits && got + fr[i].len <= JUMBO_BUF)
			memcpy(e->jbuf + got, fr[i].data, fr[i].len);
		else
			fits = false;
		got += fr[i].len;
		xsk_mt_free(xt, fr[i].addr);
		if (!fr[i].more || i + 1 == n)
			break;
	}
	*len = fits && !fr[i].more ? got : 0;
	return i;
}

/* The worker whose channel a frame on src's socket sock is for: every
 * one's own where src is on every queue; on owned queues, the one its
 * socket is for (a folded lead: the lead). */
static struct ep *rx_target(struct ep *e, struct ep *src, int sock)
{
	struct ep *lead = ep_lead(e);

	if (!src->owned)
		return e;
	if (lead->folded)
		return lead;
	return ep_worker(lead, ep_sock_target(src, sock));
}

/* A round of src's sockets (e's own, or a folded lead's worker's, whose
 * frames go back to src's stack): e's packets read, each other worker's
 * copied to it (a bit in *woke). Returns the packets; e's own in *mine. */
static unsigned rx_from(struct ep *e, struct ep *src, uint64_t now, unsigned *mine, uint32_t *woke)
{
	struct xsk_mt_frame fr[BATCH];
	unsigned n = xsk_mt_rx(src->xt, fr, e->cfg.rx_batch && e->cfg.rx_batch < BATCH ? e->cfg.rx_batch : BATCH);
	unsigned pkts = 0;

	for (unsigned i = 0; i < n; i++, pkts++) {
		struct ep *to = rx_target(e, src, fr[i].sock);
		size_t len;

		if (to != e) {
			unsigned k = i;

			while (fr[k].more && k + 1 < n)
				k++;
			/* Its end past this batch (more frames than rx_batch): dropped
			 * and counted, as rx_gather does our own, not handed over in two. */
			if (fr[k].more)
				e->st.parse++;
			else
				ep_handoff_put(e, to, &fr[i], k - i + 1);
			for (; i <= k; i++)
				xsk_mt_free(src->xt, fr[i].addr);
			i--;
			*woke |= fr[k].more ? 0 : 1u << to->widx;
			continue;
		}
		++*mine;
		if (!fr[i].more) {
			ep_rx_packet(e, now, fr[i].data, fr[i].len);
			xsk_mt_free(src->xt, fr[i].addr);
			continue;
		}
		e->st.rx_multi_buffer++;
		if (i + 1 < n && ep_rx_join(&fr[i], &fr[i + 1])) {
			e->st.rx_in_place++;
			ep_rx_packet(e, now, fr[i].data, fr[i].len);
			xsk_mt_free(src->xt, fr[i].addr);
			xsk_mt_free(src->xt, fr[++i].addr);
			continue;
		}
		i = rx_gather(e, src->xt, fr, i, n, &len);
		if (len)
			ep_rx_packet(e, now, e->jbuf, len);
		else
			e->st.parse++;
	}
	return pkts;
}

static unsigned do_rx(struct ep *e, uint64_t now)
{
	struct ep *src[UB_EP_MAX_WORKERS];
	const int ns = ep_driven(e, src);
	unsigned pkts = 0, mine = 0, got;
	uint32_t woke = 0;

	for (int k = 0; k < ns; k++)
		pkts += rx_from(e, src[k], now, &mine, &woke);
	if (e->ho) {
		got = ep_handoff_drain(e, now, BATCH);
		pkts += got;
		mine += got;
		for (uint32_t w = 0; woke; w++, woke >>= 1)
			if (woke & 1)
				ep_handoff_wake(ep_worker(ep_lead(e), w));
	}
	/* One writer (this worker's thread); ep_rx_frames may be read from another. */
	__atomic_store_n(&e->st.rx_frames, e->st.rx_frames + mine, __ATOMIC_RELAXED);
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
	refresh_peer(e, p);
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

/*
 * A packet built in place in a run (x: wrapped, from its first byte in the
 * run's first frame) as the run's frames: a frame's worth each, `more` on
 * all but the last. Returns how many.
 */
static unsigned run_descs(const struct xsk_mt_frame *x, struct xsk_mt_frame *out)
{
	uint64_t addr = x->addr;
	uint8_t *data = x->data;
	unsigned k = 0;

	for (size_t left = x->len; left; k++) {
		size_t room = EP_FRAME_SIZE - (addr & (EP_FRAME_SIZE - 1));
		size_t chunk = left < room ? left : room;

		out[k] = (struct xsk_mt_frame){ .addr = addr, .data = data, .len = (uint32_t)chunk,
						.sock = -1, .more = left > chunk };
		addr += chunk;
		data += chunk;
		left -= chunk;
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
		bool run = false;

		if (!e->big) {
			if (!xsk_mt_alloc(e->xt, &x)) {
				e->st.no_frame++;
				break;
			}
			buf = x.data;
		} else if (xsk_mt_alloc_run(e->xt, &x)) {
			/* Built where it is sent from: no copy out of jbuf. */
			run = true;
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
			if (!e->big || run)
				xsk_mt_free(e->xt, x.addr);
			break;
		}
		c = info.user;
		refresh_peer(e, c->peer);
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
		if (run) {
			wrap_frame(&x, off, len, &f);
			nf = run_descs(&x, c->peer->local ? &lo[nlo] : &fr[k][cnt[k]]);
			e->st.tx_multi_buffer += nf > 1;
			e->st.tx_in_place += nf > 1;
		} else if (e->big) {
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

#define EP_WAIT_MAX_FDS 64

/*
 * Asleep on the endpoints' sockets and their route changes until a frame,
 * a change, or the time: the earliest of their cores' deadlines (up to
 * EP_TIMER_SLACK_NS late, as a poll timeout's default slack would be), or
 * else the caller's bound (up to half of it early). The time is kept by
 * eps[0]'s wake timer (io/wake_timer.h: armed once for many sleeps, where a
 * poll timeout is armed and cancelled at each). A deadline is late by at
 * most its own distance (a near one is kept near); a loss timer by up to
 * EP_LOSS_SLACK_NS, so that the armed timer serves several sleeps of a
 * Send at a time, whose loss probe moves at every message. Only one due within
 * EP_SPIN_NS is not slept for: when this loop spun through every wait
 * shorter than a millisecond (a Send's loss probe, 2 SRTT away) it took
 * the CPU its peer on the same host needed, and lost its own on a shared
 * machine a time slice at a time. Returns 0 on the time (or a deadline too
 * near to sleep for), > 0 when a frame or a change came, or -errno.
 */
static int sleep_on(struct ep *const *eps, unsigned n, uint64_t now, uint64_t bound_ns)
{
	struct pollfd pfd[EP_WAIT_MAX_FDS + 1];
	struct wake_timer *wt = &eps[0]->wt;
	uint64_t dl = UINT64_MAX, loss = UINT64_MAX, bound = now + bound_ns, first, lo, hi;
	struct timespec ts, *tsp = NULL;
	nfds_t nfd = 0, nl_at[EP_WAIT_MAX_FDS], wake_at[EP_WAIT_MAX_FDS];
	bool handed = false;
	int r;

	for (unsigned i = 0; i < n; i++) {
		uint64_t l, d = tp_ep_deadlines(eps[i]->tp, &l);
		int socks[EP_WAIT_MAX_FDS], ns;

		if (d < dl)
			dl = d;
		if (l < loss)
			loss = l;
		/* Completions reaped, the fill ring topped up: what poll() waits on is real. */
		ns = ep_poll_socks(eps[i], socks, EP_WAIT_MAX_FDS);
		nl_at[i] = wake_at[i] = EP_WAIT_MAX_FDS + 1;	/* none: past the timer's slot too */
		if (nfd < EP_WAIT_MAX_FDS) {
			nl_at[i] = nfd;
			pfd[nfd++] = (struct pollfd){ .fd = nl_fd(eps[i]->mon), .events = POLLIN };
		}
		if (eps[i]->ho && nfd < EP_WAIT_MAX_FDS) {
			wake_at[i] = nfd;
			pfd[nfd++] = (struct pollfd){ .fd = eps[i]->wake.fd, .events = POLLIN };
		}
		for (int j = 0; j < ns && nfd < EP_WAIT_MAX_FDS; j++)
			pfd[nfd++] = (struct pollfd){ .fd = socks[j], .events = POLLIN };
	}
	first = dl < loss ? dl : loss;
	if (first < bound && first < now + EP_SPIN_NS)
		return 0;
	/* From here another worker handing one a frame wakes it. */
	for (unsigned i = 0; i < n; i++)
		handed |= ep_handoff_sleep(eps[i], false);
	if (handed) {
		for (unsigned i = 0; i < n; i++)
			ep_handoff_awake(eps[i], false);
		return 1;
	}
	wake_timer_window(now, dl, bound, EP_TIMER_SLACK_NS, &lo, &hi);
	wake_timer_lax(loss, EP_LOSS_SLACK_NS, &lo, &hi);
	if (!wake_timer_set(wt, now, lo, hi)) {
		pfd[nfd++] = (struct pollfd){ .fd = wt->fd, .events = POLLIN };
	} else {	/* a poll timeout: until the deadline itself, or the bound */
		ts = ub_ns_timespec((first < bound ? first : bound) - now);
		tsp = &ts;
	}
	r = ppoll(pfd, nfd, tsp, NULL);
	if (r < 0)
		r = -errno;	/* before ep_handoff_awake's read() sets its own */
	for (unsigned i = 0; i < n; i++)
		ep_handoff_awake(eps[i], r > 0 && wake_at[i] < nfd && pfd[wake_at[i]].revents);
	if (r < 0)
		return r;
	if (r && !tsp && pfd[nfd - 1].revents)
		r--;	/* the timer: the time came */
	for (unsigned i = 0; r && i < n; i++)
		if (nl_at[i] < nfd && pfd[nl_at[i]].revents)
			read_changes(eps[i], ep_now_ns());
	return r;
}

int ep_progress(struct ep *e, int timeout_ms)
{
	uint64_t now = ep_now_ns(), dl;
	unsigned moved;

	ep_handoff_awake(e, false);	/* after a caller's own poll (ep_poll_fds) */
	if (now - e->mon_read_ns >= EP_NL_READ_NS)
		read_changes(e, now);
	moved = do_rx(e, now);
	dl = tp_ep_next_deadline(e->tp);
	if (dl <= now)
		tp_ep_tick(e->tp, now);
	moved += do_tx(e, now);
	if (!moved && timeout_ms > 0)
		sleep_on(&e, 1, now, (uint64_t)timeout_ms * 1000000u);
	return (int)moved;
}

int ep_wait(struct ep *const *eps, unsigned n, uint64_t max_ns)
{
	if (!n || n > EP_WAIT_MAX_FDS)
		return -EINVAL;
	return sleep_on(eps, n, ep_now_ns(), max_ns);
}

int ep_poll_fds(struct ep *e, int *fds, int max)
{
	const uint64_t one = 1;
	int n = 0;

	read_changes(e, ep_now_ns());
	if (n < max)
		fds[n++] = nl_fd(e->mon);	/* first: never left out by max */
	if (e->ho && n < max) {
		fds[n++] = e->wake.fd;
		/* A frame handed over already: the caller's poll ends at once. */
		if (ep_handoff_sleep(e, true) && write(e->wake.fd, &one, sizeof(one)) < 0) {
			/* readable anyway */
		}
	}
	return n + ep_poll_socks(e, fds + n, max - n);
}
