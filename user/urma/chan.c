// SPDX-License-Identifier: BSD-2-Clause
/*
 * Transport channels: one per local JFS/JFR/jetty and remote jetty (see
 * urma_int.h), made here and connected by the in-band setup (setup.c);
 * destroyed with their work requests flushed, failed when the peer goes
 * silent, and waited for by the application threads that need one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "urma/ctl.h"
#include "urma/urma_int.h"

bool ubx_jid_eq(const urma_jetty_id_t *a, const urma_jetty_id_t *b)
{
	return a->id == b->id && a->uasid == b->uasid && ubx_eid_eq(&a->eid, &b->eid);
}

uint64_t ubx_deadline_after(uint32_t ms) { return ep_now_ns() + (uint64_t)ms * 1000000; }

void ubx_abs_time(uint64_t at_ns, struct timespec *ts)
{
	struct timespec now;
	uint64_t t;

	clock_gettime(CLOCK_MONOTONIC, &now);
	t = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	{
		uint64_t mono = ep_now_ns();

		t += at_ns > mono ? at_ns - mono : 0;
	}
	*ts = ub_ns_timespec(t);
}

/* ---- channels -------------------------------------------------------------------------- */

struct ubx_chan *ubx_chan_find(struct ubx_port *p, const struct ubx_q *q, const urma_jetty_id_t *remote)
{
	/* A destroyed one still waited on is not listed (ubx_chan_destroy). */
	for (struct ubx_chan *c = p->chans; c; c = c->next)
		if (c->q == q && ubx_jid_eq(&c->remote, remote))
			return c;
	return NULL;
}

static enum tp_mode core_mode(const struct ubx_port *p, urma_tp_type_t t)
{
	return t == URMA_UTP ? TP_MODE_UTP : t == URMA_CTP ? TP_MODE_CTP : p->rtx;
}

static enum tp_ta_mode ta_mode(uint8_t order)
{
	return order == URMA_OT ? TP_TA_ROT : order == URMA_OI ? TP_TA_ROI : TP_TA_ROL;
}

struct ubx_chan *ubx_chan_new(struct ubx_port *p, struct ubx_q *q, const urma_jetty_id_t *remote,
			      struct ubx_peer *peer, urma_transport_mode_t mode,
			      urma_tp_type_t tp_type, uint8_t order, uint32_t mtu,
			      uint32_t peer_depth, bool span, int *err)
{
	struct tp_chan_config cc = { 0 };
	struct ubx_chan *ch;
	int rc;
	uint32_t ops = q->sdepth > peer_depth ? q->sdepth : peer_depth;

	/* Room in the core's receive queue for every JFR buffer (posted to its
	 * only channel) and the bounce buffers. */
	if (q->jfr && q->jfr->rdepth + UBX_BOUNCE > ops)
		ops = q->jfr->rdepth + UBX_BOUNCE;

	if (p->nchans >= UBX_MAX_CHANS) {
		*err = ENOSPC;
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		*err = ENOMEM;
		return NULL;
	}
	ch->port = p;
	ch->q = q;
	ch->remote = *remote;
	ch->peer = peer;
	ch->mode = mode;
	ch->tp_type = tp_type;
	ch->order = order;
	ch->mtu = mtu;
	rc = ubx_ctl_nonce(&ch->nonce);
	if (rc) {
		static int said;

		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			ubx_warn("getrandom: %s: channel nonces from a generator, guessable from one another",
				 strerror(-rc));
		ch->nonce = (uint32_t)ubx_rand(p) | 1u;	/* never 0: "none" on the wire */
	}
	ch->ec.peer = &peer->ep;
	ch->ec.app = ch;
	cc.mode = core_mode(p, tp_type);
	cc.ta_mode = ta_mode(order);
	cc.mtu = mtu;
	cc.max_ops = (ops > UBX_BOUNCE ? ops : UBX_BOUNCE) + 8;
	cc.manual_taack = tp_type != URMA_UTP;
	/* rnr_retry 7 is "for ever", as in RDMA; 0 is one retry here (the
	 * core's least). */
	cc.rnr_retry = q->rnr_retry == 7 ? UINT32_MAX : q->rnr_retry ? q->rnr_retry : 1;
	cc.rnr_wait_code = q->jfr ? q->jfr->min_rnr_timer : 0;
	cc.rto_mode = TP_RTO_DYNAMIC;
	/* Both ends alike, each told the other's range in the setup; a span
	 * within the window (UBXDP_URMA_SPAN=0) leaves the channel as before.
	 * Not for an opener that keeps only the default range: ours would go
	 * no further past its holes anyway, and would double our buffer. */
	if (cc.mode == TP_MODE_RTP_SR && span)
		tp_chan_span(&cc, p->span);
	/* SR finds losses by time too, as ubperf's (RACK, TLP, D-SACK:
	 * docs/TRANSPORT.md "Per flow too"): a lost resend or tail without an
	 * RTO. The wire is the same; a peer without it reads it all. */
	cc.rack = cc.mode == TP_MODE_RTP_SR;
	/* The watchdog (ubx_ctl_run) fails a silent peer's channel after the
	 * err_timeout budget; the core's own limit comes well after it. */
	cc.retry_limit = 16;
	ch->budget_ns = 4096ull << (q->err_timeout ? q->err_timeout : URMA_TYPICAL_ERR_TIMEOUT);
	if (tp_type == URMA_CTP)
		cc.ta_timeout_ns = 1000000000ull;
	if (!ep_chan_create(p->ep, &ch->ec, &cc)) {
		*err = errno;
		free(ch);
		return NULL;
	}
	if (q->jfr && ubx_chan_rx_init(ch)) {
		ep_chan_destroy(p->ep, &ch->ec);
		ubx_chan_rx_fini(ch);
		free(ch);
		*err = ENOMEM;
		return NULL;
	}
	ch->next = p->chans;
	p->chans = ch;
	p->nchans++;
	return ch;
}

static void chan_unlink(struct ubx_port *p, struct ubx_chan *ch)
{
	for (struct ubx_chan **pp = &p->chans; *pp; pp = &(*pp)->next)
		if (*pp == ch) {
			*pp = ch->next;
			p->nchans--;
			return;
		}
}

/* All of ch but its struct: off the list, its core channel, its share of
 * the JFR, its Write-with-imm entries. What frees ch, or leaves it to a
 * waiter, calls it; a second call finds nothing left to do. */
static void chan_release(struct ubx_port *p, struct ubx_chan *ch)
{
	chan_unlink(p, ch);
	if (ch->ec.tp) {
		ep_chan_destroy(p->ep, &ch->ec);
		ubx_chan_rx_fini(ch);
	}
	ubx_chan_imm_free(ch);
}

/* Everything ch still had, in posting order: the oldest with st, then flushed. */
static void flush_all(struct ubx_port *p, struct ubx_chan *ch, urma_cr_status_t st)
{
	struct ubx_wr *w = ch->out;

	while (w && w->next_ch)
		w = w->next_ch;		/* the list is newest first: its tail is the oldest */
	while (w) {
		struct ubx_wr *prev = w->prev_ch;

		ubx_wr_complete(p, w, st, 0);
		st = URMA_CR_WR_FLUSH_ERR;
		w = prev;
	}
	while (ch->held) {
		w = ch->held;
		ch->held = w->next_held;
		w->next_held = NULL;
		ubx_wr_complete(p, w, st, 0);
		st = URMA_CR_WR_FLUSH_ERR;
	}
	ch->held_tail = NULL;
}

void ubx_chan_kill(struct ubx_chan *ch, urma_cr_status_t st)
{
	struct ubx_port *p = ch->port;

	ubx_dispatch(p);
	if (!ch->ec.tp)
		return;
	ch->state = CH_FAILED;
	ch->err = ETIMEDOUT;
	flush_all(p, ch, st);
	ep_chan_destroy(p->ep, &ch->ec);
	ch->ec.tp = NULL;
	ubx_chan_rx_fini(ch);
	ubx_chan_imm_free(ch);
}

void ubx_chan_destroy(struct ubx_chan *ch, bool tell_peer)
{
	struct ubx_port *p = ch->port;

	/* Events already queued name the channel: they go first. */
	ubx_dispatch(p);
	if (tell_peer && ch->state == CH_READY && ch->ec.tp)
		ubx_send_close(ch);
	/* What it still had outstanding, or held, ends flushed. */
	flush_all(p, ch, URMA_CR_WR_FLUSH_ERR);
	if (ch->q->bound == ch) {
		ch->q->bound = NULL;
		if (ch->q->bound_tj) {
			struct ubx_tjetty *tj = ubx_tjetty_of(ch->q->bound_tj);

			if (tj)
				ubx_cnt(&tj->binds, -1);
			ch->q->bound_tj = NULL;
			ch->q->pub.jetty.remote_jetty = NULL;
		}
	}
	chan_release(p, ch);
	if (ch->waiters) {
		/* A thread waits on its setup: it frees the struct, all else
		 * went above, as a refused one's (ubx_chan_refused): a channel
		 * made meanwhile (advised again) would find the JFR with two
		 * and put it on bounce buffers for good. */
		ch->state = CH_FAILED;
		ch->err = ECONNRESET;
		ch->doomed = true;
		pthread_cond_broadcast(&p->cond);
		return;
	}
	free(ch);
}

void ubx_chan_refused(struct ubx_chan *ch, uint32_t peer_mtu)
{
	struct ubx_port *p = ch->port;

	ch->state = CH_FAILED;
	ch->err = EMSGSIZE;
	ch->peer_mtu = peer_mtu;	/* once: it leaves the list, never found again */
	if (ch->q->bound == ch)
		ch->q->bound = NULL;
	/* Out of the list: the channel its peer's OPEN makes is the one found.
	 * Its core channel and its share of the JFR go now, not when its waiter
	 * frees it: the OPEN's channel would find the JFR with two and put it
	 * on bounce buffers for good. */
	ubx_dispatch(p);
	chan_release(p, ch);
	pthread_cond_broadcast(&p->cond);
}

void ubx_chans_of_q_destroy(struct ubx_q *q)
{
	struct ubx_port *p = q->port;

	/* A thread waiting on a setup of q's, woken by the destroy below (or
	 * by a refusal just before), reads q and its channel when it has the
	 * lock again: q is freed only once none is left in ubx_chan_get, and
	 * none sets up again meanwhile (dying). A peer's OPEN may make a
	 * channel of q while we wait: the list is looked at again after. */
	q->dying = true;
	for (;;) {
		struct ubx_chan *c = p->chans;

		while (c) {
			struct ubx_chan *n = c->next;

			if (c->q == q) {
				ubx_chan_destroy(c, true);
				n = p->chans;	/* the list may have changed: again from the start */
			}
			c = n;
		}
		if (!q->getters)
			return;
		pthread_cond_wait(&p->cond, &p->lock);
	}
}

/* ---- getting a channel (application threads) -------------------------------------- */

int ubx_tp_type_check(const struct ubx_port *p, urma_transport_mode_t mode, urma_tp_type_t t)
{
	if (t > URMA_UTP)
		return EINVAL;
	if ((mode == URMA_TM_UM) != (t == URMA_UTP))
		return EINVAL;		/* UM is UTP; RM and RC are RTP or CTP */
	if (t == URMA_CTP && !p->native) {
		ubx_err("CTP needs a native UB port (UBXDP_URMA_NATIVE)");
		return EPERM;
	}
	return 0;
}

/*
 * Wait (port lock held, released meanwhile) until ch is set up or fails.
 * The caller counted itself in ch->waiters before (ubx_chan_get: from the
 * channel's creation, before the progress that may handle its refusal and
 * would free a channel failed with no waiter); this ends its count.
 */
static void wait_setup(struct ubx_port *p, struct ubx_chan *ch)
{
	struct timespec ts;

	ubx_abs_time(ch->deadline + 50000000ull, &ts);	/* the progress thread marks it */
	ubx_app_idle(p);
	while (ch->state == CH_SETUP) {
		if (pthread_cond_timedwait(&p->cond, &p->lock, &ts) == ETIMEDOUT &&
		    ch->state == CH_SETUP) {
			ch->state = CH_FAILED;
			ch->err = ETIMEDOUT;
		}
	}
	if (ch->doomed && p->test_doomed_ms) {
		/* Test hook (api_test destroyed_while_waited_on): the window
		 * before this waiter frees its destroyed channel, held open. */
		pthread_mutex_unlock(&p->lock);
		usleep(p->test_doomed_ms * 1000u);
		pthread_mutex_lock(&p->lock);
	}
	ch->waiters--;
}

/*
 * The UB MTU this port takes to a peer: its device's (or its veth's), and
 * the path beyond as far as the kernel knows it (a route's mtu, a learned
 * path MTU: ep_path_ub_mtu), as ubperf's client and server fit it.
 * Asked at each channel's setup, never kept: a route changed or a path MTU
 * expired counts for the next channel.
 */
uint32_t ubx_mtu_to(const struct ubx_port *p, struct ubx_peer *peer)
{
	const uint32_t m = ep_ub_mtu_to(p->ep, &peer->ep);
	uint32_t pm;
	char why[160];
	const uint32_t fit = ep_path_ub_mtu(p->ifname, peer->ep.ip_ver, peer->ep.ip, &pm, why, sizeof(why));

	/* The device's MTU alone may be more than a hop takes: once a peer
	 * (one on this device is reached by no route of its, but by lo). */
	if (*why && !peer->ep.local && !peer->path_warned) {
		peer->path_warned = true;
		ubx_warn("device %s: the path MTU to a peer is unknown (%s): its channels take the device's",
			 p->ifname, why);
	}
	return fit < m ? fit : m;
}

static struct ubx_chan *chan_get(struct ubx_q *q, struct ubx_tjetty *tj, bool rc, int *err)
{
	struct ubx_port *p = q->port;
	struct ubx_chan *ch = ubx_chan_find(p, q, &tj->pub.id);
	struct ubx_peer *peer;
	uint32_t cap = 0;	/* what the peer's refusal named: a setup again goes no higher */
	uint32_t mtu;
	bool retry;

	if (ch && ch->state == CH_READY)
		return ch;
	/* Resolving the import's peer for this port may release the lock:
	 * look for the channel again after. */
	peer = ubx_tjetty_peer(p, tj, err);
	if (!peer)
		return NULL;
find:
	/* Deleted while the lock was released (in ubx_tjetty_peer, or the
	 * wait below before a retry). A second guard, not the fix: without
	 * it a new channel of q would be made and its OPEN sent, and the
	 * teardown, which looks at the list again at each wake-up until no
	 * getter is left (ubx_chans_of_q_destroy), destroys it under its
	 * waiter, who frees it and leaves. This check and !q->dying below
	 * spare that OPEN and the wait for its answer (up to the setup's
	 * timeout); no test removes them, as none fails without. */
	if (q->dying) {
		*err = ECONNRESET;
		return NULL;
	}
	ch = ubx_chan_find(p, q, &tj->pub.id);
	if (ch && ch->state == CH_READY) {
		*err = 0;
		return ch;
	}
	if (ch && ch->state == CH_FAILED && !ch->waiters) {
		if (ch->q->bound == ch && ch->q->bound_tj) {
			*err = 0;
			return ch;	/* RC: a failed connection; requests complete flushed */
		}
		ubx_chan_destroy(ch, false);	/* RM: try afresh */
		ch = NULL;
	}
	if (!ch) {
		*err = ubx_tp_type_check(p, tj->pub.trans_mode, tj->pub.tp_type);
		if (*err)
			return NULL;
		mtu = cap ? cap : ubx_mtu_to(p, peer);
		if (!mtu) {
			*err = EMSGSIZE;
			return NULL;
		}
		ch = ubx_chan_new(p, q, &tj->pub.id, peer, tj->pub.trans_mode, tj->pub.tp_type,
			      (uint8_t)(tj->pub.flag.bs.order_type ? tj->pub.flag.bs.order_type : q->order),
			      mtu, 0, true, err);
		if (!ch)
			return NULL;
		ch->waiters++;
		ch->rc = rc;
		ch->token = tj->token.token;
		ch->state = CH_SETUP;
		ch->deadline = ubx_deadline_after(ubx_port_timeout_ms());
		ubx_send_open(ch);
		ubx_progress(p);
		ubx_port_kick(p);
	} else {
		ch->waiters++;	/* another thread's setup (or set up again): its outcome is ours */
	}
	wait_setup(p, ch);
	if (ch->state == CH_READY) {
		*err = 0;
		return ch;
	}
	*err = ch->err ? ch->err : EIO;
	/* The peer takes a smaller UB MTU (a process on a veth, a device of a
	 * smaller MTU, a smaller path back) and named it: every waiter sets up
	 * again at that, from the start; the first makes the channel, the
	 * others find it and wait on it. Each time smaller: a few at most. A
	 * channel above our cap was made by a thread that came fresh (no
	 * refusal seen yet) between ours and our retry: its refusal is not
	 * news to us, but ours to retry at what we know. */
	retry = !q->dying && ch->err == EMSGSIZE && ch->peer_mtu && ch->peer_mtu < ch->mtu &&
		(!cap || ch->peer_mtu < cap || ch->mtu > cap);
	if (retry && (!cap || ch->peer_mtu < cap))
		cap = ch->peer_mtu;
	if (ch->err == ETIMEDOUT)
		ubx_err("jetty %u: no answer from the peer's jetty %u within %u ms", q->id,
			tj->pub.id.id, ubx_port_timeout_ms());
	if (!ch->waiters) {
		if (ch->q->bound == ch)
			ch->q->bound = NULL;
		ubx_dispatch(p);
		chan_release(p, ch);	/* a refused or destroyed one's went already */
		free(ch);
	}
	if (retry) {
		ubx_dbg("jetty %u: the peer's jetty %u takes a UB MTU of %u: again at that", q->id,
			tj->pub.id.id, cap);
		goto find;
	}
	return NULL;
}

struct ubx_chan *ubx_chan_get(struct ubx_q *q, struct ubx_tjetty *tj, bool rc, int *err)
{
	struct ubx_port *p = q->port;
	struct ubx_chan *ch;

	/* Counted while in: q's teardown waits for it (ubx_chans_of_q_destroy). */
	q->getters++;
	ch = chan_get(q, tj, rc, err);
	if (!--q->getters && q->dying)
		pthread_cond_broadcast(&p->cond);
	return ch;
}
