// SPDX-License-Identifier: BSD-2-Clause
/*
 * Remote jetties and the transport channels to them, set up in band: a
 * hello over UTP (tp_hello_build_app) carrying a struct ubx_ctl after the
 * hello's body, resent every 100 ms until answered or until the setup
 * timeout (UBXDP_URMA_TIMEOUT_MS, 2 s by default), when the call fails.
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
 * struct ubx_ctl on the wire (big-endian), after the hello body:
 *   "URMA" | ver | kind | status (errno) | mode (URMA_TM_*) | tp_type |
 *   order | flags (1: RC bind) | rsv | mtu(16) | depth(16) | nonce(32) |
 *   src EID(128) | src UASID(32) | src ID(32) | dst EID(128) |
 *   dst UASID(32) | dst ID(32) | token(32)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uboe_wrap.h"
#include "urma_int.h"

enum { CTL_PROBE = 1, CTL_PROBE_ACK, CTL_OPEN, CTL_OPEN_ACK, CTL_CLOSE };
#define CTL_VER		1
#define CTL_LEN		76
#define CTL_F_RC	1

struct ubx_ctl {
	uint8_t kind, status, mode, tp_type, order, flags;
	uint16_t mtu, depth;
	uint32_t nonce;
	urma_jetty_id_t src, dst;
	uint32_t token;
};

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)); put16(p + 2, (uint16_t)v); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }

static size_t ctl_encode(const struct ubx_ctl *m, uint8_t *b)
{
	memcpy(b, "URMA", 4);
	b[4] = CTL_VER;
	b[5] = m->kind;
	b[6] = m->status;
	b[7] = m->mode;
	b[8] = m->tp_type;
	b[9] = m->order;
	b[10] = m->flags;
	b[11] = 0;
	put16(b + 12, m->mtu);
	put16(b + 14, m->depth);
	put32(b + 16, m->nonce);
	memcpy(b + 20, m->src.eid.raw, 16);
	put32(b + 36, m->src.uasid);
	put32(b + 40, m->src.id);
	memcpy(b + 44, m->dst.eid.raw, 16);
	put32(b + 60, m->dst.uasid);
	put32(b + 64, m->dst.id);
	put32(b + 68, m->token);
	put32(b + 72, 0);
	return CTL_LEN;
}

static int ctl_decode(const uint8_t *b, size_t len, struct ubx_ctl *m)
{
	if (len < CTL_LEN || memcmp(b, "URMA", 4) || b[4] != CTL_VER || !b[5] || b[5] > CTL_CLOSE)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->kind = b[5];
	m->status = b[6];
	m->mode = b[7];
	m->tp_type = b[8];
	m->order = b[9];
	m->flags = b[10];
	m->mtu = get16(b + 12);
	m->depth = get16(b + 14);
	m->nonce = get32(b + 16);
	memcpy(m->src.eid.raw, b + 20, 16);
	m->src.uasid = get32(b + 36);
	m->src.id = get32(b + 40);
	memcpy(m->dst.eid.raw, b + 44, 16);
	m->dst.uasid = get32(b + 60);
	m->dst.id = get32(b + 64);
	m->token = get32(b + 68);
	return 0;
}

static bool jid_eq(const urma_jetty_id_t *a, const urma_jetty_id_t *b)
{
	return a->id == b->id && a->uasid == b->uasid && ubx_eid_eq(&a->eid, &b->eid);
}

static uint64_t deadline_after(uint32_t ms) { return ep_now_ns() + (uint64_t)ms * 1000000; }

static void abs_time(uint64_t at_ns, struct timespec *ts)
{
	struct timespec now;
	uint64_t t;

	clock_gettime(CLOCK_MONOTONIC, &now);
	t = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	{
		uint64_t mono = ep_now_ns();

		t += at_ns > mono ? at_ns - mono : 0;
	}
	ts->tv_sec = (time_t)(t / 1000000000u);
	ts->tv_nsec = (long)(t % 1000000000u);
}

/* ---- peers --------------------------------------------------------------------------- */

static struct ubx_peer *peer_find(struct ubx_port *p, uint8_t ver, const uint8_t ip[16])
{
	for (struct ubx_peer *x = p->peers; x; x = x->next)
		if (x->ep.ip_ver == ver && !memcmp(x->ep.ip, ip, ver == 6 ? 16 : 4))
			return x;
	return NULL;
}

struct ubx_peer *ubx_peer_get(struct ubx_port *p, uint8_t ver, const uint8_t ip[16], int *err)
{
	struct ubx_peer *x = peer_find(p, ver, ip), *n;
	char why[256];
	int rc;

	if (x)
		return x;
	n = calloc(1, sizeof(*n));
	if (!n) {
		*err = ENOMEM;
		return NULL;
	}
	/* Route and neighbour lookups may wait: not under the lock. They
	 * read only what ep_open() set. */
	pthread_mutex_unlock(&p->lock);
	rc = ep_peer_init(p->ep, &n->ep, ver, ip, (int)ubx_port_timeout_ms(), why, sizeof(why));
	pthread_mutex_lock(&p->lock);
	if (rc) {
		free(n);
		ubx_err("device %s: the peer cannot be reached: %s", p->ifname, why);
		*err = EHOSTUNREACH;
		return NULL;
	}
	x = peer_find(p, ver, ip);
	if (x) {
		free(n);	/* another thread resolved it meanwhile */
		return x;
	}
	n->next = p->peers;
	p->peers = n;
	return n;
}

/* ---- sending hellos --------------------------------------------------------------- */

static int send_ctl(struct ubx_port *p, struct ubx_peer *peer, const struct tp_chan *tp,
		    uint16_t sport, uint32_t peer_tpn, bool reply, const struct ubx_ctl *m)
{
	uint8_t app[CTL_LEN], pkt[TP_HELLO_LEN + CTL_LEN];
	size_t n;

	ctl_encode(m, app);
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
}

static void send_open(struct ubx_chan *ch)
{
	struct ubx_ctl m;

	open_msg(ch, &m);
	send_ctl(ch->port, ch->peer, ch->ec.tp, ch->ec.sport, 0, false, &m);
	ch->hellos++;
	ch->next_hello = ep_now_ns() + UBX_HELLO_RETRY_NS;
}

/* ---- channels -------------------------------------------------------------------------- */

static struct ubx_chan *chan_find(struct ubx_port *p, const struct ubx_q *q,
				  const urma_jetty_id_t *remote)
{
	for (struct ubx_chan *c = p->chans; c; c = c->next)
		if (c->q == q && jid_eq(&c->remote, remote))
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

/* A channel of q to remote by peer (port lock held). */
static struct ubx_chan *chan_new(struct ubx_port *p, struct ubx_q *q, const urma_jetty_id_t *remote,
				 struct ubx_peer *peer, urma_transport_mode_t mode,
				 urma_tp_type_t tp_type, uint8_t order, uint32_t mtu,
				 uint32_t peer_depth, int *err)
{
	struct tp_chan_config cc = { 0 };
	struct ubx_chan *ch;
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
	if (tell_peer && ch->state == CH_READY && ch->ec.tp) {
		struct ubx_ctl m;

		open_msg(ch, &m);
		m.kind = CTL_CLOSE;
		send_ctl(p, ch->peer, ch->ec.tp, ch->ec.sport, ch->peer_tpn, false, &m);
	}
	/* What it still had outstanding, or held, ends flushed. */
	flush_all(p, ch, URMA_CR_WR_FLUSH_ERR);
	if (ch->q->bound == ch) {
		ch->q->bound = NULL;
		if (ch->q->bound_tj) {
			struct ubx_tjetty *tj = ubx_tjetty_of(ch->q->bound_tj);

			if (tj)
				tj->binds--;
			ch->q->bound_tj = NULL;
			ch->q->pub.jetty.remote_jetty = NULL;
		}
	}
	if (ch->waiters) {
		/* A thread waits on its setup: it frees it. */
		ch->state = CH_FAILED;
		ch->err = ECONNRESET;
		ch->doomed = true;
		pthread_cond_broadcast(&p->cond);
		return;
	}
	chan_unlink(p, ch);
	if (ch->ec.tp) {
		ep_chan_destroy(p->ep, &ch->ec);
		ubx_chan_rx_fini(ch);
	}
	ubx_chan_imm_free(ch);
	free(ch);
}

void ubx_chans_of_q_destroy(struct ubx_q *q)
{
	struct ubx_port *p = q->ctx->port;
	struct ubx_chan *c = p->chans;

	while (c) {
		struct ubx_chan *n = c->next;

		if (c->q == q && !c->doomed) {
			ubx_chan_destroy(c, true);
			n = p->chans;	/* the list may have changed: again from the start */
		}
		c = n;
	}
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

static void reply(struct ubx_port *p, const uint8_t ip[16], uint8_t ver, const struct tp_chan *tp,
		  uint16_t sport, uint32_t peer_tpn, const struct ubx_ctl *req, uint8_t kind,
		  int status)
{
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
	m.mtu = (uint16_t)p->mtu[ver == 6];
	send_ctl(p, peer, tp, sport, peer_tpn, true, &m);
}

static void on_open(struct ubx_port *p, uint8_t ver, const uint8_t ip[16], const struct tp_hello *h,
		    const struct ubx_ctl *m)
{
	struct ubx_q *q;
	struct ubx_chan *ch;
	struct ubx_peer *peer;
	int st = q_accepts(p, m, &q), err;

	p->open_in++;
	if (!st && m->mtu > p->mtu[ver == 6])
		st = EMSGSIZE;
	ch = st ? NULL : chan_find(p, q, &m->src);
	if (ch && ch->state == CH_READY && ch->peer_tpn != h->tpn) {
		/* The other side made a new channel (its old one failed): ours is stale. */
		ubx_chan_destroy(ch, false);
		ch = NULL;
	} else if (ch && ch->state == CH_FAILED && !ch->waiters) {
		ubx_chan_destroy(ch, false);
		ch = NULL;
	}
	if (!st && !ch && q->mode == URMA_TM_RC && q->bound)
		st = EBUSY;		/* an RC jetty has one remote jetty */
	if (st) {
		p->setup_refused++;
		p->token_refused += st == EACCES;
		ubx_dbg("refused an OPEN for jetty %u: %s", m->dst.id, strerror(st));
		reply(p, ip, ver, NULL, 0, h->tpn, m, CTL_OPEN_ACK, st);
		return;
	}
	if (!ch) {
		peer = ubx_peer_get(p, ver, ip, &err);
		if (!peer)
			return;
		/* The lock was released: the channel may have come meanwhile. */
		ch = chan_find(p, q, &m->src);
		if (!ch && ubx_q_find(p, m->dst.id) != q)
			return;		/* the jetty went meanwhile; the sender retries */
		if (!ch) {
			ch = chan_new(p, q, &m->src, peer, (urma_transport_mode_t)m->mode,
				      (urma_tp_type_t)m->tp_type, m->order, m->mtu, m->depth, &err);
			if (!ch) {
				reply(p, ip, ver, NULL, 0, h->tpn, m, CTL_OPEN_ACK, err);
				return;
			}
			ch->rc = m->flags & CTL_F_RC;
			if (q->mode == URMA_TM_RC && !q->bound)
				q->bound = ch;	/* accepted: the jetty's bind finds it */
		}
	}
	if (ch->state != CH_READY) {
		/* New, or our own OPEN crossed theirs: connect to their channel. */
		if (ep_chan_connect(p->ep, &ch->ec, h->tpn, h->init_psn) == 0) {
			ch->peer_tpn = h->tpn;
			ch->state = CH_READY;
			pthread_cond_broadcast(&p->cond);
		}
	}
	reply(p, ip, ver, ch->ec.tp, ch->ec.sport, h->tpn, m, CTL_OPEN_ACK, 0);
}

static void on_open_ack(struct ubx_port *p, const struct tp_hello *h, const struct ubx_ctl *m)
{
	struct ubx_q *q = ubx_q_find(p, m->dst.id);
	struct ubx_chan *ch = q ? chan_find(p, q, &m->src) : NULL;

	if (!ch || ch->state != CH_SETUP || ch->nonce != m->nonce || m->dst.uasid != ubx_uasid())
		return;		/* a duplicate, or for a channel gone */
	if (m->status) {
		ch->state = CH_FAILED;
		ch->err = m->status;
		if (m->status == EMSGSIZE)
			ubx_err("jetty %u: the peer takes a UB MTU of %u, this device %u", m->src.id,
				m->mtu, ch->mtu);
	} else if (ep_chan_connect(p->ep, &ch->ec, h->tpn, h->init_psn) == 0) {
		ch->peer_tpn = h->tpn;
		ch->state = CH_READY;
	}
	pthread_cond_broadcast(&p->cond);
}

static void on_close(struct ubx_port *p, const struct tp_hello *h, const struct ubx_ctl *m)
{
	struct ubx_q *q = ubx_q_find(p, m->dst.id);
	struct ubx_chan *ch = q ? chan_find(p, q, &m->src) : NULL;

	if (ch && ch->state == CH_READY && ch->peer_tpn == h->tpn && !ch->doomed)
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
	reply(p, ip, ver, NULL, 0, h->tpn, m, CTL_PROBE_ACK, st);
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

bool ubx_ctl_rx(void *ctx, const uint8_t *tp, size_t len, uint8_t ver, const uint8_t ip[16])
{
	struct ubx_port *p = ctx;
	struct tp_hello h;
	typeof(p->inbox[0]) *e;

	if (len < TP_HELLO_LEN || memcmp(tp + TP_HELLO_MAGIC_OFF, TP_HELLO_MAGIC, 4) ||
	    tp_hello_parse(tp, len, &h))
		return false;
	if (h.app_len < CTL_LEN || memcmp(h.app, "URMA", 4)) {
		p->ctl_bad++;
		return true;	/* a hello, not ours (ubperf's): not for the core either */
	}
	if (p->ninbox == UBX_INBOX)
		return true;	/* its sender retries */
	e = &p->inbox[p->ninbox++];
	e->ver = ver;
	memcpy(e->ip, ip, 16);
	e->h = h;
	e->app_len = h.app_len < sizeof(e->app) ? h.app_len : sizeof(e->app);
	memcpy(e->app, h.app, e->app_len);
	e->h.app = NULL;
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

	/* Handlers may release the lock (peer resolution): take the inbox first. */
	while (p->ninbox) {
		typeof(p->inbox[0]) e = p->inbox[0];
		struct ubx_ctl m;

		memmove(&p->inbox[0], &p->inbox[1], (p->ninbox - 1) * sizeof(p->inbox[0]));
		p->ninbox--;
		if (ctl_decode(e.app, e.app_len, &m)) {
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
			send_open(ch);
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

/* ---- getting a channel (application threads) -------------------------------------- */

static int tp_type_check(const struct ubx_port *p, urma_transport_mode_t mode, urma_tp_type_t t)
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

/* Wait (port lock held, released meanwhile) until ch is set up or fails. */
static void wait_setup(struct ubx_port *p, struct ubx_chan *ch)
{
	struct timespec ts;

	abs_time(ch->deadline + 50000000ull, &ts);	/* the progress thread marks it */
	ubx_app_idle(p);
	ch->waiters++;
	while (ch->state == CH_SETUP) {
		if (pthread_cond_timedwait(&p->cond, &p->lock, &ts) == ETIMEDOUT &&
		    ch->state == CH_SETUP) {
			ch->state = CH_FAILED;
			ch->err = ETIMEDOUT;
		}
	}
	ch->waiters--;
}

struct ubx_chan *ubx_chan_get(struct ubx_q *q, struct ubx_tjetty *tj, bool rc, int *err)
{
	struct ubx_port *p = q->ctx->port;
	struct ubx_chan *ch = chan_find(p, q, &tj->pub.id);
	uint8_t ip[16];
	uint8_t ver;

	if (ch && ch->state == CH_READY)
		return ch;
	if (ch && ch->state == CH_FAILED && !ch->waiters && !ch->doomed) {
		if (ch->q->bound == ch && ch->q->bound_tj) {
			*err = 0;
			return ch;	/* RC: a failed connection; requests complete flushed */
		}
		ubx_chan_destroy(ch, false);	/* RM: try afresh */
		ch = NULL;
	}
	if (!ch) {
		*err = tp_type_check(p, tj->pub.trans_mode, tj->pub.tp_type);
		if (*err)
			return NULL;
		ver = ubx_eid_to_ip(&tj->pub.id.eid, ip);
		if (!p->mtu[ver == 6]) {
			*err = EMSGSIZE;
			return NULL;
		}
		ch = chan_new(p, q, &tj->pub.id, tj->peer, tj->pub.trans_mode, tj->pub.tp_type,
			      (uint8_t)(tj->pub.flag.bs.order_type ? tj->pub.flag.bs.order_type : q->order),
			      p->mtu[ver == 6], 0, err);
		if (!ch)
			return NULL;
		ch->rc = rc;
		ch->token = tj->token.token;
		ch->state = CH_SETUP;
		ch->nonce = (uint32_t)ubx_rand(p);
		ch->deadline = deadline_after(ubx_port_timeout_ms());
		send_open(ch);
		ubx_progress(p);
		ubx_port_kick(p);
	}
	wait_setup(p, ch);
	if (ch->state == CH_READY)
		return ch;
	*err = ch->err ? ch->err : EIO;
	if (ch->err == ETIMEDOUT)
		ubx_err("jetty %u: no answer from the peer's jetty %u within %u ms", q->id,
			tj->pub.id.id, ubx_port_timeout_ms());
	if (!ch->waiters) {
		ch->doomed = false;
		if (ch->q->bound == ch)
			ch->q->bound = NULL;
		chan_unlink(p, ch);
		ubx_dispatch(p);
		ep_chan_destroy(p->ep, &ch->ec);
		ubx_chan_rx_fini(ch);
		free(ch);
	}
	return NULL;
}

/* ---- import --------------------------------------------------------------------------- */

struct ubx_tjetty *ubx_tjetty_of(const urma_target_jetty_t *t)
{
	struct ubx_tjetty *x = (struct ubx_tjetty *)t;

	return x && x->magic == UBX_M_TJETTY ? x : NULL;
}

static struct ubx_tjetty *import(struct ubx_ctx *c, const urma_jetty_id_t *id,
				 urma_transport_mode_t mode, urma_target_type_t type,
				 urma_import_jetty_flag_t flag, urma_tp_type_t tp_type,
				 urma_jetty_grp_policy_t policy, const urma_token_t *token)
{
	struct ubx_port *p = c->port;
	struct ubx_probe_run r = { 0 };
	struct ubx_tjetty *tj;
	struct ubx_peer *peer;
	struct timespec ts;
	uint8_t ip[16], ver;
	int err;

	if ((mode != URMA_TM_RM && mode != URMA_TM_RC && mode != URMA_TM_UM) ||
	    flag.bs.order_type > URMA_NO || flag.bs.reserved ||
	    flag.bs.token_policy >= URMA_TOKEN_RESERVED) {
		errno = EINVAL;
		return NULL;
	}
	if (type == URMA_JETTY_GROUP) {
		ubx_err("import: jetty groups are not supported");
		errno = EPERM;
		return NULL;
	}
	if (type != URMA_JFR && type != URMA_JETTY) {
		errno = EINVAL;
		return NULL;
	}
	if (mode == URMA_TM_RC && type != URMA_JETTY) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&p->lock);
	err = tp_type_check(p, mode, tp_type);
	if (err) {
		pthread_mutex_unlock(&p->lock);
		errno = err;
		return NULL;
	}
	ver = ubx_eid_to_ip(&id->eid, ip);
	peer = ubx_peer_get(p, ver, ip, &err);
	if (!peer) {
		pthread_mutex_unlock(&p->lock);
		errno = err;
		return NULL;
	}
	if (tp_type == URMA_CTP && peer->ep.nh.gateway) {
		/* CTP is not UBoE: no UB2E switch or router carries it. */
		pthread_mutex_unlock(&p->lock);
		ubx_err("import: CTP needs the peer on this UB link; " EID_FMT " is routed", EID_ARGS(id->eid));
		errno = ENETUNREACH;
		return NULL;
	}
	r.peer = peer;
	r.pr.nonce = (uint32_t)ubx_rand(p);
	r.m.kind = CTL_PROBE;
	r.m.mode = (uint8_t)mode;
	r.m.tp_type = (uint8_t)tp_type;
	r.m.order = (uint8_t)flag.bs.order_type;
	r.m.flags = (uint8_t)(type << 1);
	r.m.nonce = r.pr.nonce;
	r.m.src.eid = c->pub.eid;
	r.m.src.uasid = c->pub.uasid;
	r.m.dst = *id;
	r.m.token = token ? token->token : 0;
	r.deadline = deadline_after(ubx_port_timeout_ms());
	r.pr.next = p->probes;
	p->probes = &r.pr;
	ubx_ctl_run(p, ep_now_ns());	/* the first PROBE leaves now */
	ubx_progress(p);
	ubx_app_idle(p);
	ubx_port_kick(p);
	abs_time(r.deadline + 50000000ull, &ts);
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
	if (r.pr.status) {
		pthread_mutex_unlock(&p->lock);
		if (r.pr.status == ETIMEDOUT)
			ubx_err("import: no answer from " EID_FMT " (jetty %u) within %u ms",
				EID_ARGS(id->eid), id->id, ubx_port_timeout_ms());
		else
			ubx_info("import: jetty %u refused: %s", id->id, strerror(r.pr.status));
		errno = r.pr.status;
		return NULL;
	}
	tj = calloc(1, sizeof(*tj));
	if (!tj) {
		pthread_mutex_unlock(&p->lock);
		errno = ENOMEM;
		return NULL;
	}
	tj->magic = UBX_M_TJETTY;
	tj->ctx = c;
	tj->peer = peer;
	if (token)
		tj->token = *token;
	tj->pub.urma_ctx = &c->pub;
	tj->pub.id = *id;
	tj->pub.handle = (uintptr_t)tj;
	tj->pub.trans_mode = mode;
	tj->pub.type = type;
	tj->pub.flag = flag;
	tj->pub.policy = policy;
	tj->pub.tp_type = tp_type;
	c->nobj++;
	pthread_mutex_unlock(&p->lock);
	return tj;
}

UBX_VISIBLE urma_target_jetty_t *urma_import_jfr(urma_context_t *ctx, urma_rjfr_t *rjfr,
						 urma_token_t *token_value)
{
	struct ubx_ctx *c = ubx_ctx_of(ctx);
	struct ubx_tjetty *tj;

	if (!c || !rjfr) {
		errno = EINVAL;
		return NULL;
	}
	tj = import(c, &rjfr->jfr_id, rjfr->trans_mode, URMA_JFR, rjfr->flag, rjfr->tp_type,
		    URMA_JETTY_GRP_POLICY_RR, token_value);
	return tj ? &tj->pub : NULL;
}

UBX_VISIBLE urma_target_jetty_t *urma_import_jetty(urma_context_t *ctx, urma_rjetty_t *rjetty,
						   urma_token_t *token_value)
{
	struct ubx_ctx *c = ubx_ctx_of(ctx);
	struct ubx_tjetty *tj;

	if (!c || !rjetty) {
		errno = EINVAL;
		return NULL;
	}
	tj = import(c, &rjetty->jetty_id, rjetty->trans_mode, rjetty->type, rjetty->flag,
		    rjetty->tp_type, rjetty->policy, token_value);
	return tj ? &tj->pub : NULL;
}

static urma_status_t unimport(urma_target_jetty_t *t)
{
	struct ubx_tjetty *tj = ubx_tjetty_of(t);
	struct ubx_port *p;

	if (!tj)
		return URMA_EINVAL;
	p = tj->ctx->port;
	pthread_mutex_lock(&p->lock);
	if (tj->binds) {
		pthread_mutex_unlock(&p->lock);
		ubx_err("unimport: a jetty is still bound to it (urma_unbind_jetty first)");
		return URMA_EINVAL;
	}
	tj->ctx->nobj--;
	tj->magic = UBX_M_DEAD;
	pthread_mutex_unlock(&p->lock);
	free(tj);
	return URMA_SUCCESS;
}

UBX_VISIBLE urma_status_t urma_unimport_jfr(urma_target_jetty_t *target_jfr)
{
	return unimport(target_jfr);
}

UBX_VISIBLE urma_status_t urma_unimport_jetty(urma_target_jetty_t *tjetty)
{
	return unimport(tjetty);
}

/* ---- advise, bind ---------------------------------------------------------------------- */

static urma_status_t advise(struct ubx_q *q, urma_target_jetty_t *t)
{
	struct ubx_tjetty *tj = ubx_tjetty_of(t);
	struct ubx_port *p;
	struct ubx_chan *ch;
	int err = 0;

	if (!q || !tj || tj->ctx != q->ctx || tj->pub.trans_mode != q->mode || q->mode == URMA_TM_RC)
		return URMA_EINVAL;
	p = q->ctx->port;
	pthread_mutex_lock(&p->lock);
	ch = chan_find(p, q, &tj->pub.id);
	if (ch && ch->state == CH_READY) {
		pthread_mutex_unlock(&p->lock);
		return URMA_EEXIST;
	}
	ch = ubx_chan_get(q, tj, false, &err);
	pthread_mutex_unlock(&p->lock);
	return ch ? URMA_SUCCESS : err;
}

static urma_status_t unadvise(struct ubx_q *q, urma_target_jetty_t *t)
{
	struct ubx_tjetty *tj = ubx_tjetty_of(t);
	struct ubx_port *p;
	struct ubx_chan *ch;

	if (!q || !tj || tj->ctx != q->ctx || q->mode == URMA_TM_RC)
		return URMA_EINVAL;
	p = q->ctx->port;
	pthread_mutex_lock(&p->lock);
	ch = chan_find(p, q, &tj->pub.id);
	if (ch && !ch->doomed)
		ubx_chan_destroy(ch, true);
	ubx_progress(p);
	pthread_mutex_unlock(&p->lock);
	return ch ? URMA_SUCCESS : URMA_EINVAL;
}

UBX_VISIBLE urma_status_t urma_advise_jfr(urma_jfs_t *jfs, urma_target_jetty_t *tjfr)
{
	return advise(ubx_q_of(jfs, UBX_JFS), tjfr);
}

UBX_VISIBLE urma_status_t urma_unadvise_jfr(urma_jfs_t *jfs, urma_target_jetty_t *tjfr)
{
	return unadvise(ubx_q_of(jfs, UBX_JFS), tjfr);
}

UBX_VISIBLE urma_status_t urma_advise_jetty(urma_jetty_t *jetty, urma_target_jetty_t *tjetty)
{
	return advise(ubx_q_of(jetty, UBX_JETTY), tjetty);
}

UBX_VISIBLE urma_status_t urma_unadvise_jetty(urma_jetty_t *jetty, urma_target_jetty_t *tjetty)
{
	return unadvise(ubx_q_of(jetty, UBX_JETTY), tjetty);
}

UBX_VISIBLE urma_status_t urma_bind_jetty(urma_jetty_t *jetty, urma_target_jetty_t *tjetty)
{
	struct ubx_q *q = ubx_q_of(jetty, UBX_JETTY);
	struct ubx_tjetty *tj = ubx_tjetty_of(tjetty);
	struct ubx_port *p;
	struct ubx_chan *ch;
	int err = 0;

	if (!q || !tj || tj->ctx != q->ctx || q->mode != URMA_TM_RC ||
	    tj->pub.trans_mode != URMA_TM_RC || tj->pub.type != URMA_JETTY)
		return URMA_EINVAL;
	p = q->ctx->port;
	pthread_mutex_lock(&p->lock);
	if (q->bound_tj) {
		pthread_mutex_unlock(&p->lock);
		return URMA_EEXIST;
	}
	if (q->bound && !jid_eq(&q->bound->remote, &tj->pub.id)) {
		/* Another remote jetty bound to this one first. */
		pthread_mutex_unlock(&p->lock);
		ubx_err("urma_bind_jetty: jetty %u is bound to jetty %u of another peer", q->id,
			q->bound->remote.id);
		return URMA_EEXIST;
	}
	ch = ubx_chan_get(q, tj, true, &err);
	if (ch && ch->state == CH_READY && (!q->bound || q->bound == ch) && !q->bound_tj) {
		q->bound = ch;
		ch->bound = true;
		q->bound_tj = tjetty;
		q->pub.jetty.remote_jetty = tjetty;
		tj->binds++;
	} else if (ch) {
		err = EEXIST;
	}
	pthread_mutex_unlock(&p->lock);
	return err;
}

UBX_VISIBLE urma_status_t urma_unbind_jetty(urma_jetty_t *jetty)
{
	struct ubx_q *q = ubx_q_of(jetty, UBX_JETTY);
	struct ubx_port *p;

	if (!q || q->mode != URMA_TM_RC)
		return URMA_EINVAL;
	p = q->ctx->port;
	pthread_mutex_lock(&p->lock);
	if (!q->bound || !q->bound_tj) {
		pthread_mutex_unlock(&p->lock);
		return URMA_EINVAL;
	}
	if (!q->bound->doomed)
		ubx_chan_destroy(q->bound, true);
	ubx_progress(p);
	pthread_mutex_unlock(&p->lock);
	return URMA_SUCCESS;
}
