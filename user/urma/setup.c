// SPDX-License-Identifier: BSD-2-Clause
/*
 * The in-band setup of remote jetties (import.c) and of the transport
 * channels to them (chan.c): a hello over UTP (tp_hello_build_app) carrying
 * a struct ubx_ctl after the hello's body, resent every 100 ms until
 * answered or until the setup timeout (UBXDP_URMA_TIMEOUT_MS, 2 s by
 * default), when the call fails.
 *
 *   PROBE / PROBE_ACK  urma_import_*: does the JFR or jetty exist, in this
 *                      mode and TP type, and is the token right?
 *   OPEN / OPEN_ACK    a channel between a local and a remote jetty: the
 *                      hello's TPN and initial PSN are the sender's
 *                      channel; each side connects its channel to the
 *                      other's. Two OPENs crossing (both sides posting or
 *                      binding first) meet in one channel pair.
 *   CLOSE              a channel's side went (jetty deleted, unbind): the
 *                      other side flushes its work requests.
 *
 * struct ubx_ctl (ctl.c) follows the hello body. OPEN and OPEN_ACK carry
 * each side's receive range: an SR channel sends no further past a hole
 * than the peer keeps (docs/TRANSPORT.md "SR past a hole"), an older
 * peer's 0 reading as 256.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "urma/ctl.h"
#include "urma/urma_int.h"

/* ---- sending hellos --------------------------------------------------------------- */

static int send_ctl(struct ubx_port *p, struct ubx_peer *peer, const struct tp_chan *tp,
		    uint16_t sport, uint32_t peer_tpn, bool reply, const struct ubx_ctl *m)
{
	uint8_t app[CTL_LEN], pkt[TP_HELLO_LEN + CTL_LEN];
	size_t n;

	ubx_ctl_encode(m, app);
	n = tp_hello_build_app(tp ? tp : p->ctl, peer_tpn, reply, app, sizeof(app), pkt, sizeof(pkt));
	if (!n)
		return -EINVAL;
	return ep_send_raw(p->ep, &peer->ep, sport, pkt, n);
}

static void open_msg(const struct ubx_chan *ch, struct ubx_ctl *m)
{
	memset(m, 0, sizeof(*m));
	m->kind = CTL_OPEN;
	m->mode = (uint8_t)ch->mode;
	m->tp_type = (uint8_t)ch->tp_type;
	m->order = ch->order;
	m->flags = ch->rc ? CTL_F_RC : 0;
	m->mtu = (uint16_t)ch->mtu;
	m->depth = (uint16_t)(ch->q->sdepth ? ch->q->sdepth : UBX_BOUNCE);
	m->nonce = ch->nonce;
	m->src.eid = ch->q->ctx->pub.eid;
	m->src.uasid = ch->q->ctx->pub.uasid;
	m->src.id = ch->q->id;
	m->dst = ch->remote;
	m->token = ch->token;
	m->rx_range = tp_chan_rx_range(ch->ec.tp);
}

void ubx_send_open(struct ubx_chan *ch)
{
	struct ubx_ctl m;

	open_msg(ch, &m);
	send_ctl(ch->port, ch->peer, ch->ec.tp, ch->ec.sport, 0, false, &m);
	ch->hellos++;
	ch->next_hello = ep_now_ns() + UBX_HELLO_RETRY_NS;
}

void ubx_send_close(struct ubx_chan *ch)
{
	struct ubx_ctl m;

	open_msg(ch, &m);
	m.kind = CTL_CLOSE;
	m.rx_range = 0;
	send_ctl(ch->port, ch->peer, ch->ec.tp, ch->ec.sport, ch->peer_tpn, false, &m);
}

/* What the local side of q can take from a remote (PROBE or OPEN): 0 or errno. */
static int q_accepts(struct ubx_port *p, const struct ubx_ctl *m, struct ubx_q **out)
{
	struct ubx_q *q = ubx_q_find(p, m->dst.id);

	*out = NULL;
	if (m->dst.uasid != ubx_uasid())
		return ESTALE;		/* another process (of before) had that UASID */
	if (!q || q->kind == UBX_JFS || q->magic != UBX_M_Q)
		return ENOENT;
	if (m->kind == CTL_PROBE && (m->flags >> 1) != (q->kind == UBX_JETTY ? URMA_JETTY : URMA_JFR))
		return ENOENT;		/* imported as a JFR, is a jetty, or the other way round */
	if (m->mode != q->mode)
		return EPROTO;
	if ((m->tp_type == URMA_UTP) != (q->mode == URMA_TM_UM) ||
	    (m->tp_type == URMA_CTP && !p->native) || m->tp_type > URMA_UTP)
		return EPROTONOSUPPORT;
	if (q->token_policy != URMA_TOKEN_NONE && m->token != q->token.token)
		return EACCES;
	*out = q;
	return 0;
}

/* ---- the setup timers and answers (progress thread, port lock held) --------------- */

struct ubx_probe_run {
	struct ubx_probe pr;
	struct ubx_peer *peer;
	struct ubx_ctl m;
	uint64_t next, deadline;
};

/* What reply() is told for an MTU not asked yet: it asks the path. */
#define MTU_ASK UINT32_MAX

/* An answer to req: ch, the channel accepting it (NULL: a refusal, a PROBE's). */
static void reply(struct ubx_port *p, const uint8_t ip[16], uint8_t ver, const struct ubx_chan *ch,
		  uint32_t peer_tpn, const struct ubx_ctl *req, uint8_t kind, int status, uint32_t mtu)
{
	const struct tp_chan *tp = ch ? ch->ec.tp : NULL;
	struct ubx_ctl m = *req;
	struct ubx_peer *peer;
	int err;

	peer = ubx_peer_get(p, ver, ip, &err);
	if (!peer)
		return;
	m.kind = kind;
	m.status = (uint8_t)status;
	m.src = req->dst;
	m.dst = req->src;
	/* What we take on this path: the caller's figure (MTU_ASK: asked here). */
	m.mtu = (uint16_t)(mtu != MTU_ASK ? mtu : ubx_mtu_to(p, peer));
	m.rx_range = tp ? tp_chan_rx_range(tp) : 0;	/* ours, not the request's */
	/* Who answers: the opener tells a reopened channel of ours from this one. */
	m.chan_nonce = ch && !status ? ch->nonce : 0;
	send_ctl(p, peer, tp, ch ? ch->ec.sport : 0, peer_tpn, true, &m);
}

/*
 * Our channel *chp in setup (or failed, still waited on) met the peer's
 * OPEN m of another UB MTU: connected as it is, each end would send at its
 * own. An OPEN of a smaller MTU (ours will be refused): ours fails and the
 * OPEN makes the channel at its MTU, which our waiter's retry finds (*chp
 * NULL, 0). One of a larger MTU: refused naming ours (EMSGSIZE), which the
 * peer takes so. One nobody waits on (an earlier OPEN's, never connected)
 * goes: refused, no one would free it; the OPEN starts afresh. (A channel
 * of ours refused is never found here: ubx_chan_refused unlists it.)
 */
static int crossed(struct ubx_port *p, struct ubx_chan **chp, const struct ubx_ctl *m)
{
	struct ubx_chan *ch = *chp;

	if (!ch || ch->state == CH_READY || m->mtu == ch->mtu)
		return 0;
	if (!ch->waiters) {
		ubx_chan_destroy(ch, false);
		*chp = NULL;
		return 0;
	}
	p->mtu_crossed++;
	if (m->mtu > ch->mtu)
		return EMSGSIZE;
	ubx_chan_refused(ch, m->mtu);
	*chp = NULL;
	return 0;
}

static void on_open(struct ubx_port *p, uint8_t ver, const uint8_t ip[16], const struct tp_hello *h,
		    const struct ubx_ctl *m)
{
	struct ubx_q *q;
	struct ubx_chan *ch;
	struct ubx_peer *peer;
	uint32_t mtu = MTU_ASK;	/* ubx_mtu_to once asked, or what a refusal names */
	bool other;
	int st, err;

	p->open_in++;
	st = q_accepts(p, m, &q);
	if (!st && m->mtu > p->mtu[ver == 6])
		st = EMSGSIZE;
	ch = st ? NULL : ubx_chan_find(p, q, &m->src);
	/* Another channel than the one ours is connected to: another TPN, or
	 * the same TPN given again to a channel reopened (a process's TPNs go
	 * round a range of 2^14), told by its nonce. A duplicate (a resend, a
	 * crossed OPEN) is answered as before: crossed setups count on it. */
	other = ch && ch->state == CH_READY &&
		(ch->peer_tpn != h->tpn || (ch->peer_nonce && ch->peer_nonce != m->nonce));
	if (other && m->mtu > ch->mtu && m->mtu > (mtu = ubx_mtu_to(p, ch->peer))) {
		/* Larger than we take to that peer: a late OPEN of a channel we
		 * refused, not a replacement for ours. */
		st = EMSGSIZE;
		ch = NULL;
	} else if (other) {
		/* The other side made a new channel (its old one failed): ours is stale. */
		ubx_chan_destroy(ch, false);
		ch = NULL;
	} else if (ch && ch->state == CH_FAILED && !ch->waiters) {
		ubx_chan_destroy(ch, false);
		ch = NULL;
	}
	if (!st && (st = crossed(p, &ch, m)))
		mtu = ch->mtu;	/* ours, not a path's asked again: the peer retries at it */
	if (!st && !ch && q->mode == URMA_TM_RC && q->bound)
		st = EBUSY;		/* an RC jetty has one remote jetty */
	if (st) {
		p->setup_refused++;
		p->token_refused += st == EACCES;
		ubx_dbg("refused an OPEN for jetty %u: %s", m->dst.id, strerror(st));
		/* The path counts for a smaller MTU only; else the device's. */
		reply(p, ip, ver, NULL, h->tpn, m, CTL_OPEN_ACK, st,
		      st == EMSGSIZE ? mtu : p->mtu[ver == 6]);
		return;
	}
	if (!ch) {
		peer = ubx_peer_get(p, ver, ip, &err);
		if (!peer)
			return;
		/* The lock was released: the channel may have come meanwhile. */
		ch = ubx_chan_find(p, q, &m->src);
		if (!ch && ubx_q_find(p, m->dst.id) != q)
			return;		/* the jetty went meanwhile; the sender retries */
		if (crossed(p, &ch, m)) {
			p->setup_refused++;
			reply(p, ip, ver, NULL, h->tpn, m, CTL_OPEN_ACK, EMSGSIZE, ch->mtu);
			return;
		}
		if (!ch && mtu == MTU_ASK)
			mtu = ubx_mtu_to(p, peer);
		if (!ch && m->mtu > mtu) {
			/* A path of ours smaller than the device's (loopback, by
			 * the process's veth, a route's or learned path MTU back
			 * to the peer): the refusal names its MTU. */
			p->setup_refused++;
			reply(p, ip, ver, NULL, h->tpn, m, CTL_OPEN_ACK, EMSGSIZE, mtu);
			return;
		}
		if (!ch) {
			ch = ubx_chan_new(p, q, &m->src, peer, (urma_transport_mode_t)m->mode,
				      (urma_tp_type_t)m->tp_type, m->order, m->mtu, m->depth,
				      m->rx_range > TP_OOO_RANGE_DEFAULT, &err);
			if (!ch) {
				reply(p, ip, ver, NULL, h->tpn, m, CTL_OPEN_ACK, err, mtu);
				return;
			}
			ch->rc = m->flags & CTL_F_RC;
			if (q->mode == URMA_TM_RC && !q->bound)
				q->bound = ch;	/* accepted: the jetty's bind finds it */
		}
	}
	if (ch->state != CH_READY && ch->ec.tp) {
		/* New, or our own OPEN crossed theirs: connect to their channel,
		 * sending no further past a hole than it keeps (a failed one may
		 * have lost its core channel already). */
		tp_chan_peer_range(ch->ec.tp, m->rx_range);
		st = ep_chan_connect(p->ep, &ch->ec, h->tpn, h->init_psn);
		if (st) {
			/* Not connected: the opener hears why, not a success, and
			 * ours goes too, so it holds no TPN, JFR share or bind
			 * and resends no OPEN: destroyed when nobody waits on it,
			 * else failed for its waiter to free. */
			p->setup_refused++;
			reply(p, ip, ver, NULL, h->tpn, m, CTL_OPEN_ACK, st < 0 ? -st : EIO, ch->mtu);
			if (!ch->waiters) {
				ubx_chan_destroy(ch, false);
			} else {
				ch->state = CH_FAILED;
				ch->err = st < 0 ? -st : EIO;
				pthread_cond_broadcast(&p->cond);
			}
			return;
		}
		ch->peer_tpn = h->tpn;
		ch->peer_nonce = m->nonce;
		ch->state = CH_READY;
		pthread_cond_broadcast(&p->cond);
	}
	reply(p, ip, ver, ch, h->tpn, m, CTL_OPEN_ACK, 0, ch->mtu);
}

/*
 * The peer's answer (a success) came after it connected its end of ch: ours
 * failing at it, that end would stay READY at the peer, holding a TPN and a
 * share of its JFR (its Sends on bounce buffers once another channel comes),
 * until an OPEN of ours replaced it, maybe never. A CLOSE from ch (its
 * nonce, to the TPN the answer came from) removes it, as a READY one's would.
 */
static void close_answered(struct ubx_chan *ch, const struct tp_hello *h)
{
	ch->peer_tpn = h->tpn;
	ubx_send_close(ch);
}

/*
 * Our path to the peer asked again at its answer: a route changed (or a path
 * MTU learned) since the OPEN may take less than the channel was opened at,
 * and connected so its packets would not pass. Then it goes as if the peer
 * had refused it naming that MTU: its waiters set up again at it, the peer's
 * end closed (close_answered). True: gone.
 */
static bool path_shrank(struct ubx_port *p, struct ubx_chan *ch, const struct tp_hello *h)
{
	const uint32_t now = ubx_mtu_to(p, ch->peer);

	if (!now || now >= ch->mtu)
		return false;
	p->mtu_path_shrank++;
	close_answered(ch, h);
	if (ch->waiters)
		ubx_chan_refused(ch, now);
	else
		ubx_chan_destroy(ch, false);	/* none would free it */
	return true;
}

static void on_open_ack(struct ubx_port *p, const struct tp_hello *h, const struct ubx_ctl *m)
{
	struct ubx_q *q = ubx_q_find(p, m->dst.id);
	struct ubx_chan *ch = q ? ubx_chan_find(p, q, &m->src) : NULL;

	if (!ch || ch->state != CH_SETUP || ch->nonce != m->nonce || m->dst.uasid != ubx_uasid())
		return;		/* a duplicate, or for a channel gone */
	if (m->status == EMSGSIZE && ubx_ub_mtu_valid(m->mtu) && m->mtu < ch->mtu) {
		/* A smaller UB MTU of the peer's: the opener's waiters all set
		 * up again at it (ubx_chan_get). Off the list now, so the first
		 * one's new channel is the one the others find. */
		if (ch->waiters)
			ubx_chan_refused(ch, m->mtu);
		else
			ubx_chan_destroy(ch, false);	/* none would free it */
		return;
	}
	if (m->status) {
		ch->state = CH_FAILED;
		ch->err = m->status;
		/* One it cannot take is an error. */
		if (m->status == EMSGSIZE)
			ubx_err("jetty %u: the peer takes a UB MTU of %u, this device %u", m->src.id,
				m->mtu, ch->mtu);
	} else if (path_shrank(p, ch, h)) {
		return;
	} else {
		int rc;

		tp_chan_peer_range(ch->ec.tp, m->rx_range);
		rc = ep_chan_connect(p->ep, &ch->ec, h->tpn, h->init_psn);
		if (rc == 0) {
			ch->peer_tpn = h->tpn;
			ch->peer_nonce = m->chan_nonce;
			ch->state = CH_READY;
		} else {
			/* Failed now, not left in setup for its waiters to time
			 * out on an answer that came (the RCID steering full). */
			ch->state = CH_FAILED;
			ch->err = rc < 0 ? -rc : EIO;
			close_answered(ch, h);
			ubx_err("jetty %u: its channel to the peer's jetty %u cannot connect: %s", ch->q->id,
				ch->remote.id, strerror(ch->err));
		}
	}
	pthread_cond_broadcast(&p->cond);
}

static void on_close(struct ubx_port *p, const struct tp_hello *h, const struct ubx_ctl *m)
{
	struct ubx_q *q = ubx_q_find(p, m->dst.id);
	struct ubx_chan *ch = q ? ubx_chan_find(p, q, &m->src) : NULL;

	/* The nonce too: a late CLOSE of the peer's old channel, whose TPN came
	 * round again, does not close the new one (0: an older peer's). */
	if (ch && ch->state == CH_READY && ch->peer_tpn == h->tpn &&
	    (!ch->peer_nonce || ch->peer_nonce == m->nonce))
		ubx_chan_destroy(ch, false);
}

static void on_probe(struct ubx_port *p, uint8_t ver, const uint8_t ip[16], const struct tp_hello *h,
		     const struct ubx_ctl *m)
{
	struct ubx_q *q;
	int st = q_accepts(p, m, &q);

	if (st) {
		p->setup_refused++;
		p->token_refused += st == EACCES;
	}
	/* No channel comes of it: the device's MTU, no path asked. */
	reply(p, ip, ver, NULL, h->tpn, m, CTL_PROBE_ACK, st, p->mtu[ver == 6]);
}

static void on_probe_ack(struct ubx_port *p, const struct ubx_ctl *m)
{
	for (struct ubx_probe *pr = p->probes; pr; pr = pr->next)
		if (pr->nonce == m->nonce && !pr->done) {
			pr->done = true;
			pr->status = m->status;
			pthread_cond_broadcast(&p->cond);
		}
}

/*
 * The port a hello is for: its target jetty's (by ID; an import's PROBE_ACK
 * names none: the asker's, whose TPN the program steered it by). A first
 * hello (PROBE, OPEN) names no TPN and reaches worker 0 whatever its jetty.
 */
static struct ubx_port *hello_port(struct ubx_port *p, const struct tp_hello *h)
{
	struct ubx_port *t;
	struct ubx_ctl m;

	if (p->dp->n <= 1 || ubx_ctl_decode(h->app, h->app_len, &m) || m.kind == CTL_PROBE_ACK)
		return p;	/* not a message of ours: this port counts it */
	t = ubx_id_port(p->dp, m.dst.id);
	return t ? t : p;	/* no such jetty: this port answers so */
}

bool ubx_ctl_rx(void *ctx, const uint8_t *tp, size_t len, uint8_t ver, const uint8_t ip[16])
{
	struct ubx_port *p = ctx, *t;
	struct ubx_hello_in *e, in;
	struct tp_hello h;

	if (len < TP_HELLO_LEN || memcmp(tp + TP_HELLO_MAGIC_OFF, TP_HELLO_MAGIC, 4) ||
	    tp_hello_parse(tp, len, &h))
		return false;
	if (h.app_len < CTL_LEN || memcmp(h.app, "URMA", 4)) {
		p->ctl_bad++;
		return true;	/* a hello, not ours (ubperf's): not for the core either */
	}
	t = hello_port(p, &h);
	if (t == p && p->ninbox == UBX_INBOX)
		return true;	/* its sender retries */
	e = t == p ? &p->inbox[p->ninbox++] : &in;
	e->ver = ver;
	memcpy(e->ip, ip, 16);
	e->h = h;
	e->app_len = h.app_len < sizeof(e->app) ? h.app_len : sizeof(e->app);
	memcpy(e->app, h.app, e->app_len);
	e->h.app = NULL;
	if (t != p) {
		/* Its port's mailbox (emptied by its next round), and a wake-up;
		 * full: its sender retries. */
		pthread_mutex_lock(&t->mb_lock);
		if (t->nmbox < UBX_INBOX)
			t->mbox[t->nmbox++] = in;
		pthread_mutex_unlock(&t->mb_lock);
		ubx_port_kick(t);
	}
	return true;
}

/*
 * The JFS's err_timeout (0..31; 0: URMA_TYPICAL_ERR_TIMEOUT) asks for
 * 4.096 us x 2^err_timeout before a silent peer is an error: a channel with
 * requests outstanding that heard nothing from its peer (acknowledgements,
 * data) that long is failed here, its oldest request with ack timeout. The
 * RTO stays dynamic (losses recovered at the RTT's pace); counting on its
 * retry limit instead would make the time to an error depend on the RTT.
 */
static void watchdog(struct ubx_port *p, uint64_t now)
{
	struct ubx_chan *ch = p->chans;

	while (ch) {
		struct ubx_chan *n = ch->next;
		struct tp_stats st;
		uint64_t life;

		if (ch->state != CH_READY || !ch->ec.tp || !ch->nout) {
			ch->life_ns = now;
			ch = n;
			continue;
		}
		tp_chan_stats(ch->ec.tp, &st);
		life = st.rx_ack + st.rx_sack + st.rx_nak + st.rx_inorder + st.rx_ooo + st.rx_dup +
		       st.rx_ctp;
		if (life != ch->life || !ch->life_ns) {
			ch->life = life;
			ch->life_ns = now;
		} else if (now - ch->life_ns > ch->budget_ns) {
			ubx_info("jetty %u: the peer's jetty %u silent for %.2f s: failed", ch->q->id,
				 ch->remote.id, (double)(now - ch->life_ns) / 1e9);
			ubx_chan_kill(ch, URMA_CR_ACK_TIMEOUT_ERR);
			n = p->chans;	/* the list may have changed */
		}
		ch = n;
	}
}

uint64_t ubx_ctl_run(struct ubx_port *p, uint64_t now)
{
	uint64_t next = UINT64_MAX;

	if (p->dp->n > 1) {
		pthread_mutex_lock(&p->mb_lock);
		while (p->nmbox && p->ninbox < UBX_INBOX) {
			p->inbox[p->ninbox++] = p->mbox[0];
			memmove(&p->mbox[0], &p->mbox[1], (p->nmbox - 1) * sizeof(p->mbox[0]));
			p->nmbox--;
		}
		pthread_mutex_unlock(&p->mb_lock);
	}
	/* Handlers may release the lock (peer resolution): take the inbox first. */
	while (p->ninbox) {
		struct ubx_hello_in e = p->inbox[0];
		struct ubx_ctl m;

		memmove(&p->inbox[0], &p->inbox[1], (p->ninbox - 1) * sizeof(p->inbox[0]));
		p->ninbox--;
		if (ubx_ctl_decode(e.app, e.app_len, &m)) {
			p->ctl_bad++;
			continue;
		}
		switch (m.kind) {
		case CTL_PROBE:		on_probe(p, e.ver, e.ip, &e.h, &m); break;
		case CTL_PROBE_ACK:	on_probe_ack(p, &m); break;
		case CTL_OPEN:		on_open(p, e.ver, e.ip, &e.h, &m); break;
		case CTL_OPEN_ACK:	on_open_ack(p, &e.h, &m); break;
		case CTL_CLOSE:		on_close(p, &e.h, &m); break;
		}
	}
	now = ep_now_ns();
	if (now >= p->watch_ns) {
		watchdog(p, now);
		p->watch_ns = now + 10000000ull;
	}
	if (p->watch_ns < next)
		next = p->watch_ns;
	for (struct ubx_chan *ch = p->chans; ch; ch = ch->next) {
		if (ch->state != CH_SETUP)
			continue;
		if (now >= ch->deadline) {
			ch->state = CH_FAILED;
			ch->err = ETIMEDOUT;
			pthread_cond_broadcast(&p->cond);
			continue;
		}
		if (now >= ch->next_hello)
			ubx_send_open(ch);
		if (ch->next_hello < next)
			next = ch->next_hello;
		if (ch->deadline < next)
			next = ch->deadline;
	}
	for (struct ubx_probe *pr = p->probes; pr; pr = pr->next) {
		struct ubx_probe_run *r = (struct ubx_probe_run *)pr;

		if (pr->done)
			continue;
		if (now >= r->deadline) {
			pr->done = true;
			pr->status = ETIMEDOUT;
			pthread_cond_broadcast(&p->cond);
			continue;
		}
		if (now >= r->next) {
			send_ctl(p, r->peer, NULL, (uint16_t)(0xc000 | (r->m.nonce & 0x3fff)), 0, false,
				 &r->m);
			r->next = now + UBX_HELLO_RETRY_NS;
		}
		if (r->next < next)
			next = r->next;
	}
	return next;
}

/* ---- probing a remote jetty (application threads) ------------------------------------- */

int ubx_probe(struct ubx_ctx *c, struct ubx_peer *peer, const urma_jetty_id_t *id,
	      urma_transport_mode_t mode, urma_target_type_t type, uint8_t order,
	      urma_tp_type_t tp_type, uint32_t token)
{
	struct ubx_port *p = c->port;
	struct ubx_probe_run r = { 0 };
	struct timespec ts;

	r.peer = peer;
	r.pr.nonce = (uint32_t)ubx_rand(p);
	r.m.kind = CTL_PROBE;
	r.m.mode = (uint8_t)mode;
	r.m.tp_type = (uint8_t)tp_type;
	r.m.order = order;
	r.m.flags = (uint8_t)(type << 1);
	r.m.nonce = r.pr.nonce;
	r.m.src.eid = c->pub.eid;
	r.m.src.uasid = c->pub.uasid;
	r.m.dst = *id;
	r.m.token = token;
	r.deadline = ubx_deadline_after(ubx_port_timeout_ms());
	r.pr.next = p->probes;
	p->probes = &r.pr;
	ubx_ctl_run(p, ep_now_ns());	/* the first PROBE leaves now */
	ubx_progress(p);
	ubx_app_idle(p);
	ubx_port_kick(p);
	ubx_abs_time(r.deadline + 50000000ull, &ts);
	while (!r.pr.done)
		if (pthread_cond_timedwait(&p->cond, &p->lock, &ts) == ETIMEDOUT && !r.pr.done) {
			r.pr.done = true;
			r.pr.status = ETIMEDOUT;
		}
	for (struct ubx_probe **pp = &p->probes; *pp; pp = &(*pp)->next)
		if (*pp == &r.pr) {
			*pp = r.pr.next;
			break;
		}
	return r.pr.status;
}
