// SPDX-License-Identifier: BSD-2-Clause
/*
 * JFS, JFR and jetty (a JFS and a JFR, its own or shared), and posting
 * work requests to them. IDs: one space for the three in a port (so a
 * remote importer names any of them by number), 1 .. UBX_ID_RESERVED_MAX
 * for IDs an application picks (cfg.id), the rest handed out in order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "urma_int.h"

struct ubx_q *ubx_q_of(const void *pub, enum ubx_kind kind)
{
	struct ubx_q *q = (struct ubx_q *)pub;

	return q && q->magic == UBX_M_Q && q->kind == kind ? q : NULL;
}

struct ubx_q *ubx_q_find(struct ubx_port *p, uint32_t id)
{
	return id < p->ids_cap ? p->ids[id] : NULL;
}

/* An ID for q (port lock held): want, or the next free one. 0 or -errno. */
static int id_take(struct ubx_port *p, struct ubx_q *q, uint32_t want)
{
	uint32_t id = want;

	if (want > UBX_ID_MAX)
		return -EINVAL;
	if (!want) {
		for (uint32_t n = 0; n <= UBX_ID_MAX - UBX_ID_RESERVED_MAX; n++) {
			id = p->next_id++;
			if (p->next_id > UBX_ID_MAX)
				p->next_id = UBX_ID_RESERVED_MAX + 1;
			if (!ubx_q_find(p, id))
				break;
			id = 0;
		}
		if (!id)
			return -ENOSPC;
	} else if (ubx_q_find(p, id)) {
		return -EEXIST;
	}
	if (id >= p->ids_cap) {
		uint32_t n = p->ids_cap ? p->ids_cap : 4096;
		struct ubx_q **a;

		while (n <= id)
			n *= 2;
		a = realloc(p->ids, n * sizeof(*a));
		if (!a)
			return -ENOMEM;
		memset(a + p->ids_cap, 0, (n - p->ids_cap) * sizeof(*a));
		p->ids = a;
		p->ids_cap = n;
	}
	p->ids[id] = q;
	q->id = id;
	return 0;
}

static void id_give(struct ubx_port *p, struct ubx_q *q)
{
	if (q->id < p->ids_cap && p->ids[q->id] == q)
		p->ids[q->id] = NULL;
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
	q->scq->users++;
	q->sdepth = cfg->depth;
	q->max_sge = cfg->max_sge ? cfg->max_sge : UBX_MAX_SGE;
	q->max_inline = cfg->max_inline_data ? cfg->max_inline_data : UBX_MAX_INLINE;
	q->rnr_retry = cfg->rnr_retry;
	q->err_timeout = cfg->err_timeout;
}

static struct ubx_q *q_new(struct ubx_ctx *c, enum ubx_kind kind)
{
	struct ubx_q *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->magic = UBX_M_Q;
	q->kind = kind;
	q->ctx = c;
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
	q = q_new(c, UBX_JFS);
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	p = c->port;
	pthread_mutex_lock(&p->lock);
	rc = id_take(p, q, 0);
	if (rc) {
		pthread_mutex_unlock(&p->lock);
		free(q);
		errno = -rc;
		return NULL;
	}
	jfs_init(q, cfg);
	q->pub.jfs.urma_ctx = ctx;
	q->pub.jfs.jfs_cfg = *cfg;
	q_pub_common(q, &q->pub.jfs.jfs_id, &q->pub.jfs.event_mutex, &q->pub.jfs.event_cond,
		     &q->pub.jfs.handle);
	c->nobj++;
	pthread_mutex_unlock(&p->lock);
	return &q->pub.jfs;
}

/* Common teardown (port lock held): channels, ID, JFC references. */
static void q_teardown(struct ubx_q *q)
{
	struct ubx_port *p = q->ctx->port;

	ubx_chans_of_q_destroy(q);
	id_give(p, q);
	if (q->scq)
		q->scq->users--;
	if (q->rcq && (q->kind == UBX_JFR || q->rcq != q->jfr->rcq))
		q->rcq->users--;
	q->ctx->nobj--;
	q->magic = UBX_M_DEAD;
}

UBX_VISIBLE urma_status_t urma_delete_jfs(urma_jfs_t *jfs)
{
	struct ubx_q *q = ubx_q_of(jfs, UBX_JFS);
	struct ubx_port *p;

	if (!q)
		return URMA_EINVAL;
	p = q->ctx->port;
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

/* A JFR (port lock held). */
static struct ubx_q *jfr_make(struct ubx_ctx *c, const urma_jfr_cfg_t *cfg, int *err)
{
	struct ubx_q *q = q_new(c, UBX_JFR);
	int rc;

	if (!q) {
		*err = ENOMEM;
		return NULL;
	}
	if (ubx_jfr_rq_init(q, cfg->depth, cfg->max_sge ? cfg->max_sge : UBX_MAX_SGE)) {
		free(q);
		*err = ENOMEM;
		return NULL;
	}
	rc = id_take(c->port, q, cfg->id);
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
	q->rcq->users++;
	q->token = cfg->token_value;
	q->token_policy = (uint8_t)cfg->flag.bs.token_policy;
	q->min_rnr_timer = cfg->min_rnr_timer;
	q->pub.jfr.urma_ctx = &c->pub;
	q->pub.jfr.jfr_cfg = *cfg;
	q_pub_common(q, &q->pub.jfr.jfr_id, &q->pub.jfr.event_mutex, &q->pub.jfr.event_cond,
		     &q->pub.jfr.handle);
	c->nobj++;
	return q;
}

UBX_VISIBLE urma_jfr_t *urma_create_jfr(urma_context_t *ctx, urma_jfr_cfg_t *cfg)
{
	struct ubx_ctx *c = ubx_ctx_of(ctx);
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
	pthread_mutex_lock(&c->port->lock);
	q = jfr_make(c, cfg, &err);
	pthread_mutex_unlock(&c->port->lock);
	if (!q) {
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
	p = q->ctx->port;
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
	q = q_new(c, UBX_JETTY);
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	p = c->port;
	pthread_mutex_lock(&p->lock);
	rc = id_take(p, q, cfg->id);
	if (rc) {
		pthread_mutex_unlock(&p->lock);
		free(q);
		errno = -rc;
		return NULL;
	}
	if (!jfr) {
		urma_jfr_cfg_t jc = *cfg->jfr_cfg;

		jc.id = 0;	/* the jetty's ID is what importers name */
		jfr = jfr_make(c, &jc, &err);
		if (!jfr) {
			id_give(p, q);
			pthread_mutex_unlock(&p->lock);
			free(q);
			errno = err;
			return NULL;
		}
		q->own_jfr = true;
	}
	jfs_init(q, &cfg->jfs_cfg);
	q->jfr = jfr;
	jfr->users++;
	q->rcq = rjfc ? rjfc : jfr->rcq;
	if (rjfc)
		rjfc->users++;
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
	c->nobj++;
	pthread_mutex_unlock(&p->lock);
	return &q->pub.jetty;
}

UBX_VISIBLE urma_status_t urma_delete_jetty(urma_jetty_t *jetty)
{
	struct ubx_q *q = ubx_q_of(jetty, UBX_JETTY);
	struct ubx_port *p;

	if (!q)
		return URMA_EINVAL;
	p = q->ctx->port;
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

/* ---- posting: checks --------------------------------------------------------------- */

/* A local SGE: inside a segment this context registered. */
static bool local_sge_ok(const struct ubx_ctx *c, const urma_sge_t *s)
{
	struct ubx_seg *g = ubx_seg_of(s->tseg);

	if (!g || g->imported || g->ctx != c || s->user_tseg)
		return false;
	return s->addr >= g->pub.seg.ubva.va && s->len <= g->pub.seg.len &&
	       s->addr - g->pub.seg.ubva.va <= g->pub.seg.len - s->len;
}

static int local_sg(const struct ubx_q *q, const urma_sg_t *sg, bool inl, uint32_t max,
		    uint64_t *total)
{
	*total = 0;
	if (sg->num_sge > max || (sg->num_sge && !sg->sge))
		return URMA_EINVAL;
	for (uint32_t i = 0; i < sg->num_sge; i++) {
		if (!inl && !local_sge_ok(q->ctx, &sg->sge[i]))
			return URMA_EINVAL;
		if (!sg->sge[i].addr && sg->sge[i].len)
			return URMA_EINVAL;
		*total += sg->sge[i].len;
	}
	return *total > UBX_MAX_MSG ? URMA_EINVAL : 0;
}

/* The remote SGE of a Write or Read: one, in a segment imported from the
 * target's side (the target checks the range, the token and the access). */
static int remote_sge(const struct ubx_tjetty *tj, const urma_sg_t *sg, const urma_sge_t **out)
{
	struct ubx_seg *g;

	if (sg->num_sge != 1 || !sg->sge)
		return URMA_EINVAL;
	g = ubx_seg_of(sg->sge[0].tseg);
	if (sg->sge[0].user_tseg) {
		ubx_err("work request: user_tseg is not supported (import the segment)");
		return URMA_ENOPERM;
	}
	if (!g || !g->imported || g->ctx != tj->ctx ||
	    memcmp(g->pub.seg.ubva.eid.raw, tj->pub.id.eid.raw, URMA_EID_SIZE) ||
	    g->pub.seg.ubva.uasid != tj->pub.id.uasid)
		return URMA_EINVAL;	/* a segment of another process than the target's */
	*out = &sg->sge[0];
	return 0;
}

static int want_buf(struct ubx_wr *w, size_t len)
{
	if (w->buf_cap >= len)
		return 0;
	free(w->buf);
	w->buf = malloc(len ? len : 1);
	w->buf_cap = w->buf ? len : 0;
	return w->buf ? 0 : -ENOMEM;
}

static int opcode_ok(urma_opcode_t op)
{
	switch (op) {
	case URMA_OPC_SEND:
	case URMA_OPC_SEND_IMM:
	case URMA_OPC_WRITE:
	case URMA_OPC_WRITE_IMM:
	case URMA_OPC_READ:
	case URMA_OPC_CAS:
	case URMA_OPC_FADD:
		return 0;
	case URMA_OPC_WRITE_NOTIFY:
	case URMA_OPC_SWAP:
	case URMA_OPC_FSUB:
	case URMA_OPC_FAND:
	case URMA_OPC_FOR:
	case URMA_OPC_FXOR:
	case URMA_OPC_SEND_INVALIDATE:
	case URMA_OPC_NOP:
	case URMA_OPC_WRITE_ATOMIC:
	case URMA_OPC_FLUSH_DMA:
		ubx_err("work request: opcode 0x%x is not supported", op);
		return URMA_ENOPERM;
	default:
		return URMA_EINVAL;
	}
}

static enum tp_opcode tp_opcode_of(urma_opcode_t op)
{
	switch (op) {
	case URMA_OPC_SEND_IMM:		return TP_OP_SEND_IMM;
	case URMA_OPC_WRITE:		return TP_OP_WRITE;
	case URMA_OPC_WRITE_IMM:	return TP_OP_WRITE_IMM;
	case URMA_OPC_READ:		return TP_OP_READ;
	case URMA_OPC_CAS:		return TP_OP_CAS;
	case URMA_OPC_FADD:		return TP_OP_FADD;
	default:			return TP_OP_SEND;
	}
}

/* ---- posting ------------------------------------------------------------------------ */

/* An atomic's two SGEs: the remote word and the local one for the old value. */
static int atomic_sges(const struct ubx_tjetty *tj, const urma_sge_t *dst, const urma_sge_t *src,
		       urma_sg_t *rsg, urma_sg_t *lsg)
{
	if (!dst || !src || dst->len != TP_ATOMIC_LEN || src->len < TP_ATOMIC_LEN)
		return URMA_EINVAL;	/* 8-byte words only (max_cas_size) */
	rsg->sge = (urma_sge_t *)dst;
	rsg->num_sge = 1;
	lsg->sge = (urma_sge_t *)src;
	lsg->num_sge = 1;
	(void)tj;
	return 0;
}

static int post_one(struct ubx_q *q, urma_jfs_wr_t *wr)
{
	struct ubx_port *p = q->ctx->port;
	const urma_sge_t *rs = NULL;
	struct ubx_tjetty *tj;
	struct ubx_chan *ch;
	struct ubx_wr *w;
	urma_sg_t lsg, rsg;
	uint64_t total, id;
	bool inl = wr->flag.bs.inline_flag;
	bool atomic = wr->opcode == URMA_OPC_CAS || wr->opcode == URMA_OPC_FADD;
	bool rd = wr->opcode == URMA_OPC_READ;
	int rc;

	rc = opcode_ok(wr->opcode);
	if (rc)
		return rc;
	if (wr->flag.bs.place_order > URMA_STRONG_ORDER || wr->flag.bs.reserved)
		return URMA_EINVAL;
	if (q->mode == URMA_TM_RC) {
		if (!q->bound || (wr->tjetty && wr->tjetty != q->bound_tj))
			return URMA_EINVAL;
		tj = ubx_tjetty_of(q->bound_tj);
	} else {
		tj = ubx_tjetty_of(wr->tjetty);
	}
	if (!tj || tj->ctx != q->ctx || tj->pub.trans_mode != q->mode)
		return URMA_EINVAL;
	if (q->mode == URMA_TM_UM && wr->opcode != URMA_OPC_SEND && wr->opcode != URMA_OPC_SEND_IMM)
		return URMA_EINVAL;
	if (inl && (rd || atomic))
		return URMA_EINVAL;
	switch (wr->opcode) {
	case URMA_OPC_SEND:
	case URMA_OPC_SEND_IMM:
		lsg = wr->send.src;
		if (wr->send.tseg) {
			ubx_err("work request: Send with invalidate is not supported");
			return URMA_ENOPERM;
		}
		break;
	case URMA_OPC_WRITE:
	case URMA_OPC_WRITE_IMM:
		lsg = wr->rw.src;
		rc = remote_sge(tj, &wr->rw.dst, &rs);
		break;
	case URMA_OPC_READ:
		lsg = wr->rw.dst;
		rc = remote_sge(tj, &wr->rw.src, &rs);
		break;
	default:	/* CAS, FADD */
		rc = atomic_sges(tj, wr->opcode == URMA_OPC_CAS ? wr->cas.dst : wr->faa.dst,
				 wr->opcode == URMA_OPC_CAS ? wr->cas.src : wr->faa.src, &rsg, &lsg);
		if (!rc)
			rc = remote_sge(tj, &rsg, &rs);
		break;
	}
	if (rc)
		return rc;
	rc = local_sg(q, &lsg, inl, q->max_sge, &total);
	if (rc)
		return rc;
	if (inl && total > q->max_inline)
		return URMA_EINVAL;
	if (rs && !atomic && !rd && rs->len < total)
		return URMA_EINVAL;
	if (rd) {
		if (rs->len > total)
			return URMA_EINVAL;	/* no room for what is read */
		total = rs->len;
	}
	if (q->sout >= q->sdepth)
		return URMA_EAGAIN;
	if (q->mode == URMA_TM_RC) {
		ch = q->bound;
	} else {
		ch = ubx_chan_get(q, tj, false, &rc);
		if (!ch)
			return rc;
	}
	w = ubx_wr_alloc(p, &id);
	if (!w)
		return URMA_ENOMEM;
	w->q = q;
	w->ch = ch;
	w->user_ctx = wr->user_ctx;
	w->opcode = wr->opcode;
	w->signaled = wr->flag.bs.complete_enable;
	w->t.opcode = tp_opcode_of(wr->opcode);
	w->t.flags = (wr->flag.bs.fence ? TP_WR_FENCE : 0) |
		     (wr->flag.bs.place_order == URMA_STRONG_ORDER ? TP_WR_SO : 0);
	if (rs) {
		struct ubx_seg *g = ubx_seg_of(rs->tseg);

		w->t.remote_va = rs->addr;
		w->t.rkey.token_id = g->pub.seg.token_id;
		w->t.rkey.token_value = g->token.token;
	}
	if (wr->opcode == URMA_OPC_SEND_IMM)
		w->t.imm = wr->send.imm_data;
	else if (wr->opcode == URMA_OPC_WRITE_IMM)
		w->t.imm = wr->rw.notify_data;
	else if (wr->opcode == URMA_OPC_CAS) {
		w->t.compare = wr->cas.cmp_data;
		w->t.swap = wr->cas.swap_data;
	} else if (wr->opcode == URMA_OPC_FADD) {
		w->t.add = wr->faa.operand;
	}
	if (inl) {
		/* Copied now: the caller may reuse its buffers at once. */
		uint8_t *d;

		if (want_buf(w, total)) {
			ubx_wr_free(p, w);
			return URMA_ENOMEM;
		}
		d = w->buf;
		for (uint32_t i = 0; i < lsg.num_sge; i++) {
			memcpy(d, (const void *)(uintptr_t)lsg.sge[i].addr, lsg.sge[i].len);
			d += lsg.sge[i].len;
		}
		w->sg[0] = (struct tp_sge){ .addr = w->buf, .len = (uint32_t)total };
		w->t.num_sge = total ? 1 : 0;
	} else {
		uint64_t left = total;

		/* A Read fills exactly what the remote SGE names. */
		for (uint32_t i = 0; i < lsg.num_sge && (left || !rd); i++) {
			uint32_t n = lsg.sge[i].len;

			if (rd && n > left)
				n = (uint32_t)left;
			w->sg[w->t.num_sge++] = (struct tp_sge){
				.addr = (void *)(uintptr_t)lsg.sge[i].addr, .len = n };
			left -= rd ? n : 0;
		}
	}
	q->sout++;
	if (ch->state == CH_FAILED) {
		/* The channel failed (the peer went away): as a failed
		 * connection does, every request completes with an error. */
		ubx_wr_complete(p, w, URMA_CR_WR_FLUSH_ERR, 0);
		return 0;
	}
	rc = ubx_wr_submit(w);
	if (rc) {
		q->sout--;
		ubx_wr_free(p, w);
		if (rc != -EMSGSIZE && rc != -EINVAL)
			ubx_info("work request refused by the transport core: %s", strerror(-rc));
		return rc == -EIO ? URMA_FAIL : URMA_EINVAL;
	}
	return 0;
}

static urma_status_t post_send(struct ubx_q *q, urma_jfs_wr_t *wr, urma_jfs_wr_t **bad_wr)
{
	struct ubx_port *p = q->ctx->port;
	int rc = 0;

	if (!wr) {
		if (bad_wr)
			*bad_wr = NULL;
		return URMA_EINVAL;
	}
	pthread_mutex_lock(&p->lock);
	for (; wr; wr = wr->next) {
		rc = post_one(q, wr);
		if (rc)
			break;
	}
	/* What was posted leaves now; posting alone does not make this thread
	 * the one that drives the endpoint (see ubx_app_progress). */
	ubx_progress(p);
	pthread_mutex_unlock(&p->lock);
	if (bad_wr)
		*bad_wr = rc ? wr : NULL;
	return rc;
}

UBX_VISIBLE urma_status_t urma_post_jfs_wr(urma_jfs_t *jfs, urma_jfs_wr_t *wr, urma_jfs_wr_t **bad_wr)
{
	struct ubx_q *q = ubx_q_of(jfs, UBX_JFS);

	if (!q) {
		if (bad_wr)
			*bad_wr = wr;
		return URMA_EINVAL;
	}
	return post_send(q, wr, bad_wr);
}

UBX_VISIBLE urma_status_t urma_post_jetty_send_wr(urma_jetty_t *jetty, urma_jfs_wr_t *wr,
						  urma_jfs_wr_t **bad_wr)
{
	struct ubx_q *q = ubx_q_of(jetty, UBX_JETTY);

	if (!q) {
		if (bad_wr)
			*bad_wr = wr;
		return URMA_EINVAL;
	}
	return post_send(q, wr, bad_wr);
}

static urma_status_t post_recv(struct ubx_q *jfr, urma_jfr_wr_t *wr, urma_jfr_wr_t **bad_wr)
{
	struct ubx_port *p = jfr->ctx->port;
	int rc = 0;

	if (!wr) {
		if (bad_wr)
			*bad_wr = NULL;
		return URMA_EINVAL;
	}
	pthread_mutex_lock(&p->lock);
	for (; wr; wr = wr->next) {
		uint64_t total;

		rc = local_sg(jfr, &wr->src, false, jfr->rmax_sge, &total);
		if (!rc)
			rc = ubx_jfr_post(jfr, wr, total);
		if (rc)
			break;
	}
	ubx_jfr_refilled(jfr);
	pthread_mutex_unlock(&p->lock);
	if (bad_wr)
		*bad_wr = rc ? wr : NULL;
	return rc;
}

UBX_VISIBLE urma_status_t urma_post_jfr_wr(urma_jfr_t *jfr, urma_jfr_wr_t *wr, urma_jfr_wr_t **bad_wr)
{
	struct ubx_q *q = ubx_q_of(jfr, UBX_JFR);

	if (!q) {
		if (bad_wr)
			*bad_wr = wr;
		return URMA_EINVAL;
	}
	return post_recv(q, wr, bad_wr);
}

UBX_VISIBLE urma_status_t urma_post_jetty_recv_wr(urma_jetty_t *jetty, urma_jfr_wr_t *wr,
						  urma_jfr_wr_t **bad_wr)
{
	struct ubx_q *q = ubx_q_of(jetty, UBX_JETTY);

	if (!q) {
		if (bad_wr)
			*bad_wr = wr;
		return URMA_EINVAL;
	}
	return post_recv(q->jfr, wr, bad_wr);
}

/* ---- one-call forms ---------------------------------------------------------------- */

UBX_VISIBLE urma_status_t urma_write(urma_jfs_t *jfs, urma_target_jetty_t *target_jfr,
				     urma_target_seg_t *dst_tseg, urma_target_seg_t *src_tseg,
				     uint64_t dst, uint64_t src, uint32_t len,
				     urma_jfs_wr_flag_t flag, uint64_t user_ctx)
{
	urma_sge_t s = { .addr = src, .len = len, .tseg = src_tseg };
	urma_sge_t d = { .addr = dst, .len = len, .tseg = dst_tseg };
	urma_jfs_wr_t wr = {
		.opcode = URMA_OPC_WRITE, .flag = flag, .tjetty = target_jfr, .user_ctx = user_ctx,
		.rw = { .src = { .sge = &s, .num_sge = 1 }, .dst = { .sge = &d, .num_sge = 1 } },
	};

	return urma_post_jfs_wr(jfs, &wr, NULL);
}

UBX_VISIBLE urma_status_t urma_read(urma_jfs_t *jfs, urma_target_jetty_t *target_jfr,
				    urma_target_seg_t *dst_tseg, urma_target_seg_t *src_tseg,
				    uint64_t dst, uint64_t src, uint32_t len,
				    urma_jfs_wr_flag_t flag, uint64_t user_ctx)
{
	urma_sge_t s = { .addr = src, .len = len, .tseg = src_tseg };
	urma_sge_t d = { .addr = dst, .len = len, .tseg = dst_tseg };
	urma_jfs_wr_t wr = {
		.opcode = URMA_OPC_READ, .flag = flag, .tjetty = target_jfr, .user_ctx = user_ctx,
		.rw = { .src = { .sge = &s, .num_sge = 1 }, .dst = { .sge = &d, .num_sge = 1 } },
	};

	return urma_post_jfs_wr(jfs, &wr, NULL);
}

UBX_VISIBLE urma_status_t urma_send(urma_jfs_t *jfs, urma_target_jetty_t *target_jfr,
				    urma_target_seg_t *src_tseg, uint64_t src, uint32_t len,
				    urma_jfs_wr_flag_t flag, uint64_t user_ctx)
{
	urma_sge_t s = { .addr = src, .len = len, .tseg = src_tseg };
	urma_jfs_wr_t wr = {
		.opcode = URMA_OPC_SEND, .flag = flag, .tjetty = target_jfr, .user_ctx = user_ctx,
		.send = { .src = { .sge = &s, .num_sge = 1 } },
	};

	return urma_post_jfs_wr(jfs, &wr, NULL);
}

UBX_VISIBLE urma_status_t urma_recv(urma_jfr_t *jfr, urma_target_seg_t *recv_tseg, uint64_t buf,
				    uint32_t len, uint64_t user_ctx)
{
	urma_sge_t s = { .addr = buf, .len = len, .tseg = recv_tseg };
	urma_jfr_wr_t wr = { .src = { .sge = &s, .num_sge = 1 }, .user_ctx = user_ctx };

	return urma_post_jfr_wr(jfr, &wr, NULL);
}
