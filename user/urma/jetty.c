// SPDX-License-Identifier: BSD-2-Clause
/*
 * JFS, JFR and jetty (a JFS and a JFR, its own or shared); posting work
 * requests to them: post.c. IDs: one space for the three in a device, over
 * its workers' ports (so a remote importer names any of them by number),
 * 1 .. UBX_ID_RESERVED_MAX for IDs an application picks (cfg.id), the rest
 * handed out in order.
 *
 * Each is one worker's (its port; docs/URMA.md "Worker threads"): a JFR
 * the port with the fewest queues, a jetty sharing a JFR the JFR's (one
 * worker consumes a receive queue, no lock per Send), any other the port
 * with the fewest queues; its JFCs get a ring on that port (jfc.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "urma/urma_int.h"

struct ubx_q *ubx_q_of(const void *pub, enum ubx_kind kind)
{
	struct ubx_q *q = (struct ubx_q *)pub;

	return q && q->magic == UBX_M_Q && q->kind == kind ? q : NULL;
}

/* IDs are the device's, over every worker's port: importers name a jetty by
 * (EID, UASID, ID) alone, and a hello for it is handed to its port
 * (ubx_id_port). The ID lock is taken inside a port's (never the other way). */
static struct ubx_id *id_slot(struct ubx_devport *d, uint32_t id)
{
	return id < d->ids_cap ? &d->ids[id] : NULL;
}

struct ubx_q *ubx_q_find(struct ubx_port *p, uint32_t id)
{
	struct ubx_devport *d = p->dp;
	struct ubx_id *e;
	struct ubx_q *q = NULL;

	pthread_mutex_lock(&d->id_lock);
	e = id_slot(d, id);
	if (e && e->port == p)
		q = e->q;
	pthread_mutex_unlock(&d->id_lock);
	return q;
}

struct ubx_port *ubx_id_port(struct ubx_devport *d, uint32_t id)
{
	struct ubx_port *p = NULL;
	struct ubx_id *e;

	pthread_mutex_lock(&d->id_lock);
	e = id_slot(d, id);
	if (e)
		p = e->port;
	pthread_mutex_unlock(&d->id_lock);
	return p;
}

/* An ID for q of port p: want, or the next free one. 0 or -errno. */
static int id_take(struct ubx_port *p, struct ubx_q *q, uint32_t want)
{
	struct ubx_devport *d = p->dp;
	uint32_t id = want;
	int rc = 0;

	if (want > UBX_ID_MAX)
		return -EINVAL;
	pthread_mutex_lock(&d->id_lock);
	if (!want) {
		for (uint32_t n = 0; n <= UBX_ID_MAX - UBX_ID_RESERVED_MAX; n++) {
			struct ubx_id *e;

			id = d->next_id++;
			if (d->next_id > UBX_ID_MAX)
				d->next_id = UBX_ID_RESERVED_MAX + 1;
			e = id_slot(d, id);
			if (!e || !e->q)
				break;
			id = 0;
		}
		if (!id)
			rc = -ENOSPC;
	} else if (id_slot(d, id) && id_slot(d, id)->q) {
		rc = -EEXIST;
	}
	if (!rc && id >= d->ids_cap) {
		uint32_t n = d->ids_cap ? d->ids_cap : 4096;
		struct ubx_id *a;

		while (n <= id)
			n *= 2;
		a = realloc(d->ids, n * sizeof(*a));
		if (!a) {
			rc = -ENOMEM;
		} else {
			memset(a + d->ids_cap, 0, (n - d->ids_cap) * sizeof(*a));
			d->ids = a;
			d->ids_cap = n;
		}
	}
	if (!rc) {
		d->ids[id].q = q;
		d->ids[id].port = p;
		q->id = id;
	}
	pthread_mutex_unlock(&d->id_lock);
	return rc;
}

static void id_give(struct ubx_port *p, struct ubx_q *q)
{
	struct ubx_devport *d = p->dp;
	struct ubx_id *e;

	pthread_mutex_lock(&d->id_lock);
	e = id_slot(d, q->id);
	if (e && e->q == q)
		memset(e, 0, sizeof(*e));
	pthread_mutex_unlock(&d->id_lock);
}

/* The port for a new queue: want (a shared JFR's), or the one with the
 * fewest queues; counted until unplace(). */
static struct ubx_port *place(struct ubx_ctx *c, struct ubx_port *want)
{
	struct ubx_devport *d = c->port->dp;

	pthread_mutex_lock(&d->id_lock);
	if (!want) {
		want = d->lane[0];
		for (uint32_t w = 1; w < d->n; w++)
			if (d->nq[w] < d->nq[want->widx])
				want = d->lane[w];
	}
	d->nq[want->widx]++;
	pthread_mutex_unlock(&d->id_lock);
	return want;
}

static void unplace(struct ubx_port *p)
{
	pthread_mutex_lock(&p->dp->id_lock);
	p->dp->nq[p->widx]--;
	pthread_mutex_unlock(&p->dp->id_lock);
}

static bool mode_ok(urma_transport_mode_t m)
{
	return m == URMA_TM_RM || m == URMA_TM_RC || m == URMA_TM_UM;
}

/* ---- JFS ------------------------------------------------------------------------------ */

static int jfs_check(struct ubx_ctx *c, const urma_jfs_cfg_t *cfg, bool jetty)
{
	struct ubx_jfc *j = cfg ? ubx_jfc_of(cfg->jfc) : NULL;

	if (!cfg || !j || j->ctx != c || !cfg->depth || cfg->depth > UBX_MAX_JFS_DEPTH ||
	    !mode_ok(cfg->trans_mode) || (cfg->trans_mode == URMA_TM_RC && !jetty) ||
	    cfg->max_sge > UBX_MAX_SGE || cfg->max_rsge > UBX_MAX_RSGE ||
	    cfg->max_inline_data > UBX_MAX_INLINE || cfg->priority > URMA_MAX_PRIORITY ||
	    cfg->rnr_retry > 7 || cfg->err_timeout > 31 || cfg->flag.bs.order_type > URMA_NO)
		return URMA_EINVAL;
	if ((cfg->flag.bs.order_type == URMA_NO) != (cfg->trans_mode == URMA_TM_UM) &&
	    cfg->flag.bs.order_type != URMA_DEF_ORDER)
		return URMA_EINVAL;	/* UM is unordered; RM and RC are not */
	if (cfg->flag.bs.error_suspend || cfg->flag.bs.multi_path ||
	    cfg->flag.bs.ctp_rc_mul_path_mode) {
		ubx_err("JFS: error_suspend and multi-path are not supported");
		return URMA_ENOPERM;
	}
	return 0;
}

static void jfs_init(struct ubx_q *q, const urma_jfs_cfg_t *cfg)
{
	q->mode = cfg->trans_mode;
	q->order = (uint8_t)cfg->flag.bs.order_type;
	q->scq = ubx_jfc_of(cfg->jfc);
	ubx_cnt(&q->scq->users, 1);
	q->sdepth = cfg->depth;
	q->max_sge = cfg->max_sge ? cfg->max_sge : UBX_MAX_SGE;
	q->max_inline = cfg->max_inline_data ? cfg->max_inline_data : UBX_MAX_INLINE;
	q->rnr_retry = cfg->rnr_retry;
	q->err_timeout = cfg->err_timeout;
}

static struct ubx_q *q_new(struct ubx_ctx *c, struct ubx_port *p, enum ubx_kind kind)
{
	struct ubx_q *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->magic = UBX_M_Q;
	q->kind = kind;
	q->ctx = c;
	q->port = p;
	return q;
}

static void q_pub_common(struct ubx_q *q, urma_jetty_id_t *id, pthread_mutex_t *m,
			 pthread_cond_t *cv, uint64_t *handle)
{
	id->eid = q->ctx->pub.eid;
	id->uasid = q->ctx->pub.uasid;
	id->id = q->id;
	pthread_mutex_init(m, NULL);
	pthread_cond_init(cv, NULL);
	*handle = (uintptr_t)q;
}

UBX_VISIBLE urma_jfs_t *urma_create_jfs(urma_context_t *ctx, urma_jfs_cfg_t *cfg)
{
	struct ubx_ctx *c = ubx_ctx_of(ctx);
	struct ubx_port *p;
	struct ubx_q *q;
	int rc;

	if (!c) {
		errno = EINVAL;
		return NULL;
	}
	rc = jfs_check(c, cfg, false);
	if (rc) {
		errno = rc;
		return NULL;
	}
	p = place(c, NULL);
	q = q_new(c, p, UBX_JFS);
	if (!q) {
		unplace(p);
		errno = ENOMEM;
		return NULL;
	}
	q->placed = true;
	pthread_mutex_lock(&p->lock);
	ubx_jfc_attach(ubx_jfc_of(cfg->jfc), p);
	rc = id_take(p, q, 0);
	if (rc) {
		pthread_mutex_unlock(&p->lock);
		unplace(p);
		free(q);
		errno = -rc;
		return NULL;
	}
	jfs_init(q, cfg);
	q->pub.jfs.urma_ctx = ctx;
	q->pub.jfs.jfs_cfg = *cfg;
	q_pub_common(q, &q->pub.jfs.jfs_id, &q->pub.jfs.event_mutex, &q->pub.jfs.event_cond,
		     &q->pub.jfs.handle);
	ubx_cnt(&c->nobj, 1);
	pthread_mutex_unlock(&p->lock);
	return &q->pub.jfs;
}

/* Common teardown (port lock held): channels, ID, JFC references. */
static void q_teardown(struct ubx_q *q)
{
	struct ubx_port *p = q->port;

	ubx_chans_of_q_destroy(q);
	id_give(p, q);
	if (q->scq)
		ubx_cnt(&q->scq->users, -1);
	if (q->rcq_ref)
		ubx_cnt(&q->rcq->users, -1);
	ubx_cnt(&q->ctx->nobj, -1);
	if (q->placed)
		unplace(p);
	q->magic = UBX_M_DEAD;
}

UBX_VISIBLE urma_status_t urma_delete_jfs(urma_jfs_t *jfs)
{
	struct ubx_q *q = ubx_q_of(jfs, UBX_JFS);
	struct ubx_port *p;

	if (!q)
		return URMA_EINVAL;
	p = q->port;
	pthread_mutex_lock(&p->lock);
	q_teardown(q);
	ubx_progress(p);
	pthread_mutex_unlock(&p->lock);
	pthread_mutex_destroy(&q->pub.jfs.event_mutex);
	pthread_cond_destroy(&q->pub.jfs.event_cond);
	free(q);
	return URMA_SUCCESS;
}

/* ---- JFR ------------------------------------------------------------------------------ */

static int jfr_check(struct ubx_ctx *c, const urma_jfr_cfg_t *cfg)
{
	struct ubx_jfc *j = cfg ? ubx_jfc_of(cfg->jfc) : NULL;

	if (!cfg || !j || j->ctx != c || !cfg->depth || cfg->depth > UBX_MAX_JFR_DEPTH ||
	    !mode_ok(cfg->trans_mode) || cfg->max_sge > UBX_MAX_SGE || cfg->id > UBX_ID_MAX ||
	    cfg->min_rnr_timer > 31 || cfg->flag.bs.order_type > URMA_NO ||
	    cfg->flag.bs.token_policy >= URMA_TOKEN_RESERVED)
		return URMA_EINVAL;
	if (cfg->flag.bs.tag_matching) {
		ubx_err("JFR: tag matching is not supported");
		return URMA_ENOPERM;
	}
	if (cfg->flag.bs.token_policy > URMA_TOKEN_PLAIN_TEXT) {
		ubx_err("JFR: token policy %u: only none and plain text are supported",
			cfg->flag.bs.token_policy);
		return URMA_ENOPERM;
	}
	return 0;
}

static void jfr_free_rq(struct ubx_q *q)
{
	ubx_jfr_rq_free(q);
}

/* A JFR of port p (its lock held). */
static struct ubx_q *jfr_make(struct ubx_ctx *c, struct ubx_port *p, const urma_jfr_cfg_t *cfg,
			      int *err)
{
	struct ubx_q *q = q_new(c, p, UBX_JFR);
	int rc;

	if (!q) {
		*err = ENOMEM;
		return NULL;
	}
	ubx_jfc_attach(ubx_jfc_of(cfg->jfc), p);
	if (ubx_jfr_rq_init(q, cfg->depth, cfg->max_sge ? cfg->max_sge : UBX_MAX_SGE)) {
		free(q);
		*err = ENOMEM;
		return NULL;
	}
	rc = id_take(p, q, cfg->id);
	if (rc) {
		jfr_free_rq(q);
		free(q);
		*err = -rc;
		return NULL;
	}
	q->mode = cfg->trans_mode;
	q->order = (uint8_t)cfg->flag.bs.order_type;
	q->jfr = q;
	q->rcq = ubx_jfc_of(cfg->jfc);
	ubx_cnt(&q->rcq->users, 1);
	q->rcq_ref = true;
	q->token = cfg->token_value;
	q->token_policy = (uint8_t)cfg->flag.bs.token_policy;
	q->min_rnr_timer = cfg->min_rnr_timer;
	q->pub.jfr.urma_ctx = &c->pub;
	q->pub.jfr.jfr_cfg = *cfg;
	q_pub_common(q, &q->pub.jfr.jfr_id, &q->pub.jfr.event_mutex, &q->pub.jfr.event_cond,
		     &q->pub.jfr.handle);
	ubx_cnt(&c->nobj, 1);
	return q;
}

UBX_VISIBLE urma_jfr_t *urma_create_jfr(urma_context_t *ctx, urma_jfr_cfg_t *cfg)
{
	struct ubx_ctx *c = ubx_ctx_of(ctx);
	struct ubx_port *p;
	struct ubx_q *q;
	int rc, err = 0;

	if (!c) {
		errno = EINVAL;
		return NULL;
	}
	rc = jfr_check(c, cfg);
	if (rc) {
		errno = rc;
		return NULL;
	}
	p = place(c, NULL);
	pthread_mutex_lock(&p->lock);
	q = jfr_make(c, p, cfg, &err);
	if (q)
		q->placed = true;
	pthread_mutex_unlock(&p->lock);
	if (!q) {
		unplace(p);
		errno = err;
		return NULL;
	}
	return &q->pub.jfr;
}

static void jfr_destroy(struct ubx_q *q)
{
	q_teardown(q);
	jfr_free_rq(q);
}

UBX_VISIBLE urma_status_t urma_delete_jfr(urma_jfr_t *jfr)
{
	struct ubx_q *q = ubx_q_of(jfr, UBX_JFR);
	struct ubx_port *p;

	if (!q)
		return URMA_EINVAL;
	p = q->port;
	pthread_mutex_lock(&p->lock);
	if (q->users) {
		pthread_mutex_unlock(&p->lock);
		ubx_err("urma_delete_jfr: %d jetties still share it", q->users);
		return URMA_EINVAL;
	}
	jfr_destroy(q);
	ubx_progress(p);
	pthread_mutex_unlock(&p->lock);
	pthread_mutex_destroy(&q->pub.jfr.event_mutex);
	pthread_cond_destroy(&q->pub.jfr.event_cond);
	free(q);
	return URMA_SUCCESS;
}

/* ---- jetty ---------------------------------------------------------------------------- */

UBX_VISIBLE urma_jetty_t *urma_create_jetty(urma_context_t *ctx, urma_jetty_cfg_t *cfg)
{
	struct ubx_ctx *c = ubx_ctx_of(ctx);
	struct ubx_q *q, *jfr = NULL;
	struct ubx_jfc *rjfc = NULL;
	struct ubx_port *p;
	int rc, err = 0;

	if (!c || !cfg) {
		errno = EINVAL;
		return NULL;
	}
	rc = jfs_check(c, &cfg->jfs_cfg, true);
	if (rc) {
		errno = rc;
		return NULL;
	}
	if (cfg->jetty_grp) {
		ubx_err("urma_create_jetty: jetty groups are not supported");
		errno = EPERM;
		return NULL;
	}
	if (cfg->flag.bs.share_jfr) {
		jfr = ubx_q_of(cfg->shared.jfr, UBX_JFR);
		if (!jfr || jfr->ctx != c || jfr->mode != cfg->jfs_cfg.trans_mode ||
		    (cfg->shared.jfc && (!(rjfc = ubx_jfc_of(cfg->shared.jfc)) || rjfc->ctx != c))) {
			errno = EINVAL;
			return NULL;
		}
	} else {
		rc = cfg->jfr_cfg ? jfr_check(c, cfg->jfr_cfg) : URMA_EINVAL;
		if (!rc && cfg->jfr_cfg->trans_mode != cfg->jfs_cfg.trans_mode)
			rc = URMA_EINVAL;
		if (rc) {
			errno = rc;
			return NULL;
		}
	}
	if (cfg->id > UBX_ID_MAX) {
		errno = EINVAL;
		return NULL;
	}
	/* A shared JFR's worker consumes it: its jetties are that worker's. */
	p = place(c, jfr ? jfr->port : NULL);
	q = q_new(c, p, UBX_JETTY);
	if (!q) {
		unplace(p);
		errno = ENOMEM;
		return NULL;
	}
	q->placed = true;
	pthread_mutex_lock(&p->lock);
	ubx_jfc_attach(ubx_jfc_of(cfg->jfs_cfg.jfc), p);
	if (rjfc)
		ubx_jfc_attach(rjfc, p);
	rc = id_take(p, q, cfg->id);
	if (rc) {
		pthread_mutex_unlock(&p->lock);
		unplace(p);
		free(q);
		errno = -rc;
		return NULL;
	}
	if (!jfr) {
		urma_jfr_cfg_t jc = *cfg->jfr_cfg;

		jc.id = 0;	/* the jetty's ID is what importers name */
		jfr = jfr_make(c, p, &jc, &err);
		if (!jfr) {
			id_give(p, q);
			pthread_mutex_unlock(&p->lock);
			unplace(p);
			free(q);
			errno = err;
			return NULL;
		}
		q->own_jfr = true;
	}
	jfs_init(q, &cfg->jfs_cfg);
	q->jfr = jfr;
	jfr->users++;
	/* A JFC of its own for receives (it may be its JFR's too: counted
	 * again all the same, and given back at teardown as taken). */
	q->rcq = rjfc ? rjfc : jfr->rcq;
	if (rjfc) {
		ubx_cnt(&rjfc->users, 1);
		q->rcq_ref = true;
	}
	q->token = jfr->token;
	q->token_policy = jfr->token_policy;
	q->min_rnr_timer = jfr->min_rnr_timer;
	q->pub.jetty.urma_ctx = ctx;
	q->pub.jetty.jetty_cfg = *cfg;
	if (!cfg->flag.bs.share_jfr) {
		/* The caller's jfr_cfg need not outlive the call. */
		q->pub.jetty.jetty_cfg.shared.jfr = &jfr->pub.jfr;
		q->pub.jetty.jetty_cfg.shared.jfc = NULL;
	}
	q_pub_common(q, &q->pub.jetty.jetty_id, &q->pub.jetty.event_mutex,
		     &q->pub.jetty.event_cond, &q->pub.jetty.handle);
	ubx_cnt(&c->nobj, 1);
	pthread_mutex_unlock(&p->lock);
	return &q->pub.jetty;
}

UBX_VISIBLE urma_status_t urma_delete_jetty(urma_jetty_t *jetty)
{
	struct ubx_q *q = ubx_q_of(jetty, UBX_JETTY);
	struct ubx_port *p;

	if (!q)
		return URMA_EINVAL;
	p = q->port;
	pthread_mutex_lock(&p->lock);
	q_teardown(q);
	q->jfr->users--;
	if (q->own_jfr) {
		jfr_destroy(q->jfr);
		pthread_mutex_destroy(&q->jfr->pub.jfr.event_mutex);
		pthread_cond_destroy(&q->jfr->pub.jfr.event_cond);
		free(q->jfr);
	}
	ubx_progress(p);
	pthread_mutex_unlock(&p->lock);
	pthread_mutex_destroy(&q->pub.jetty.event_mutex);
	pthread_cond_destroy(&q->pub.jetty.event_cond);
	free(q);
	return URMA_SUCCESS;
}
