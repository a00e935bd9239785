// SPDX-License-Identifier: BSD-2-Clause
/*
 * The remote side as an application sees it: the peers (addresses resolved
 * to next hops), remote JFRs and jetties imported (probed in band: setup.c),
 * advised (a channel set up ahead of the first request) and bound (RC).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/uboe_wrap.h"
#include "urma/urma_int.h"

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
	 * read only what ep_open() set, on a netlink socket of their own: an
	 * application thread's import and the progress thread's answer to
	 * that peer's PROBE may run at once. */
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

struct ubx_peer *ubx_tjetty_peer(struct ubx_port *p, struct ubx_tjetty *tj, int *err)
{
	uint8_t ip[16], ver;

	if (p == tj->ctx->port)
		return tj->peer;
	ver = ubx_eid_to_ip(&tj->pub.id.eid, ip);
	return ubx_peer_get(p, ver, ip, err);
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
	struct ubx_tjetty *tj;
	struct ubx_peer *peer;
	uint8_t ip[16], ver;
	int err, st;

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
	err = ubx_tp_type_check(p, mode, tp_type);
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
	st = ubx_probe(c, peer, id, mode, type, (uint8_t)flag.bs.order_type, tp_type,
		       token ? token->token : 0);
	if (st) {
		pthread_mutex_unlock(&p->lock);
		if (st == ETIMEDOUT)
			ubx_err("import: no answer from " EID_FMT " (jetty %u) within %u ms",
				EID_ARGS(id->eid), id->id, ubx_port_timeout_ms());
		else
			ubx_info("import: jetty %u refused: %s", id->id, strerror(st));
		errno = st;
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
	ubx_cnt(&c->nobj, 1);
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
	if (ubx_cnt_get(&tj->binds)) {
		pthread_mutex_unlock(&p->lock);
		ubx_err("unimport: a jetty is still bound to it (urma_unbind_jetty first)");
		return URMA_EINVAL;
	}
	ubx_cnt(&tj->ctx->nobj, -1);
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
	p = q->port;
	pthread_mutex_lock(&p->lock);
	ch = ubx_chan_find(p, q, &tj->pub.id);
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
	p = q->port;
	pthread_mutex_lock(&p->lock);
	ch = ubx_chan_find(p, q, &tj->pub.id);
	if (ch)
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
	p = q->port;
	pthread_mutex_lock(&p->lock);
	if (q->bound_tj) {
		pthread_mutex_unlock(&p->lock);
		return URMA_EEXIST;
	}
	if (q->bound && !ubx_jid_eq(&q->bound->remote, &tj->pub.id)) {
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
		ubx_cnt(&tj->binds, 1);
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
	p = q->port;
	pthread_mutex_lock(&p->lock);
	if (!q->bound || !q->bound_tj) {
		pthread_mutex_unlock(&p->lock);
		return URMA_EINVAL;
	}
	ubx_chan_destroy(q->bound, true);
	ubx_progress(p);
	pthread_mutex_unlock(&p->lock);
	return URMA_SUCCESS;
}
