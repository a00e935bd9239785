// SPDX-License-Identifier: BSD-2-Clause
/*
 * Segments. Registering one makes it a memory region of the transport core
 * of every worker of the device (tp_mr_register), under one TokenID: a
 * remote access may come in on any jetty of the process, so on any worker,
 * and each core checks it alone (its TokenID, the token value, the access
 * flags and the range; refused: the initiator gets an error completion,
 * the core counts ta_bad_* and touches nothing), with no lock shared on the
 * per-packet path. Worker 0's core draws the random TokenID, the others
 * take it as given, one lock at a time; unregistering goes the other way,
 * worker 0 last, so every TokenID another worker holds is worker 0's too
 * and the given one is never taken there. Importing one is local: it
 * records what the owner published (urma_seg_t) and the token value for the
 * work requests that name it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "urma/urma_int.h"

/* Take token_id out of workers [0, n) of d's cores, the last first. */
static void seg_dereg(struct ubx_devport *d, uint32_t n, uint32_t token_id)
{
	while (n--) {
		struct ubx_port *p = d->lane[n];

		pthread_mutex_lock(&p->lock);
		tp_mr_dereg(p->tp, token_id);
		pthread_mutex_unlock(&p->lock);
	}
}

/* The region in every worker's core of d: 0 with *tid, or -errno. */
static int seg_reg(struct ubx_devport *d, struct tp_mr_cfg *mc, uint32_t *tid)
{
	for (uint32_t w = 0; w < d->n; w++) {
		struct ubx_port *p = d->lane[w];
		int rc;

		pthread_mutex_lock(&p->lock);
		rc = tp_mr_register(p->tp, mc, tid);
		pthread_mutex_unlock(&p->lock);
		if (rc) {
			seg_dereg(d, w, mc->token_id);
			return rc;
		}
		mc->token_id = *tid;
	}
	return 0;
}

struct ubx_seg *ubx_seg_of(const urma_target_seg_t *s)
{
	struct ubx_seg *x = (struct ubx_seg *)s;

	return x && x->magic == UBX_M_SEG ? x : NULL;
}

UBX_VISIBLE urma_target_seg_t *urma_register_seg(urma_context_t *ctx, urma_seg_cfg_t *cfg)
{
	struct ubx_ctx *c = ubx_ctx_of(ctx);
	urma_reg_seg_flag_t f;
	struct ubx_seg *g;
	uint32_t tid = 0, access;
	int rc = 0;

	if (!c || !cfg || !cfg->va || !cfg->len || cfg->va + cfg->len < cfg->va ||
	    cfg->flag.bs.token_policy >= URMA_TOKEN_RESERVED || cfg->flag.bs.reserved) {
		errno = EINVAL;
		return NULL;
	}
	f = cfg->flag;
	access = f.bs.access;
	if (f.bs.dsva || f.bs.user_iova || cfg->iova || f.bs.token_id_valid || cfg->token_id) {
		ubx_err("urma_register_seg: DSVA, user IOVA and token IDs of the application's "
			"are not supported");
		errno = EPERM;
		return NULL;
	}
	if (f.bs.token_policy > URMA_TOKEN_PLAIN_TEXT) {
		ubx_err("urma_register_seg: token policy %u: only none and plain text are supported",
			f.bs.token_policy);
		errno = EPERM;
		return NULL;
	}
	if (access & ~(uint32_t)(URMA_ACCESS_LOCAL_ONLY | URMA_ACCESS_READ | URMA_ACCESS_WRITE |
				 URMA_ACCESS_ATOMIC)) {
		errno = EINVAL;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		errno = ENOMEM;
		return NULL;
	}
	{
		/* LOCAL_ONLY (or no flag): a region every remote access is refused. */
		struct tp_mr_cfg mc = {
			.addr = (void *)(uintptr_t)cfg->va, .len = cfg->len,
			.access = access & URMA_ACCESS_LOCAL_ONLY || !access ? TP_ACCESS_LOCAL_ONLY :
				  access,
			.token_value = cfg->token_value.token,
			.token_none = f.bs.token_policy == URMA_TOKEN_NONE,
		};

		rc = seg_reg(c->port->dp, &mc, &tid);
		if (!rc)
			ubx_cnt(&c->nobj, 1);
	}
	if (rc) {
		free(g);
		ubx_err("urma_register_seg: %s", strerror(-rc));
		errno = -rc;
		return NULL;
	}
	g->magic = UBX_M_SEG;
	g->ctx = c;
	g->access = (uint8_t)access;
	g->token = cfg->token_value;
	g->tid.urma_ctx = ctx;
	g->tid.token_id = tid;
	atomic_init(&g->tid.ref.atomic_cnt, 1);
	g->pub.seg.ubva.eid = ctx->eid;
	g->pub.seg.ubva.uasid = ctx->uasid;
	g->pub.seg.ubva.va = cfg->va;
	g->pub.seg.len = cfg->len;
	g->pub.seg.attr.bs.token_policy = f.bs.token_policy;
	g->pub.seg.attr.bs.cacheable = f.bs.cacheable;
	g->pub.seg.attr.bs.access = access;
	g->pub.seg.attr.bs.non_pin = f.bs.non_pin;
	g->pub.seg.token_id = tid;
	g->pub.user_ctx = cfg->user_ctx;
	g->pub.urma_ctx = ctx;
	g->pub.token_id = &g->tid;
	g->pub.handle = (uintptr_t)g;
	return &g->pub;
}

UBX_VISIBLE urma_status_t urma_unregister_seg(urma_target_seg_t *target_seg)
{
	struct ubx_seg *g = ubx_seg_of(target_seg);
	struct ubx_port *p;

	if (!g || g->imported)
		return URMA_EINVAL;
	p = g->ctx->port;
	if (g->tid.token_id)
		seg_dereg(p->dp, p->dp->n, g->tid.token_id);
	ubx_cnt(&g->ctx->nobj, -1);
	pthread_mutex_lock(&p->lock);
	g->magic = UBX_M_DEAD;
	pthread_mutex_unlock(&p->lock);
	free(g);
	return URMA_SUCCESS;
}

UBX_VISIBLE urma_target_seg_t *urma_import_seg(urma_context_t *ctx, urma_seg_t *seg,
					       urma_token_t *token_value, uint64_t addr,
					       urma_import_seg_flag_t flag)
{
	struct ubx_ctx *c = ubx_ctx_of(ctx);
	struct ubx_seg *g;

	if (!c || !seg || !seg->len || flag.bs.reserved) {
		errno = EINVAL;
		return NULL;
	}
	if (flag.bs.mapping != URMA_SEG_NOMAP || addr) {
		ubx_err("urma_import_seg: mapping a remote segment is not supported (URMA_SEG_NOMAP)");
		errno = EPERM;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		errno = ENOMEM;
		return NULL;
	}
	g->magic = UBX_M_SEG;
	g->ctx = c;
	g->imported = true;
	g->access = (uint8_t)flag.bs.access;
	if (token_value)
		g->token = *token_value;
	g->pub.seg = *seg;
	g->pub.urma_ctx = ctx;
	g->pub.handle = (uintptr_t)g;
	ubx_cnt(&c->nobj, 1);
	return &g->pub;
}

UBX_VISIBLE urma_status_t urma_unimport_seg(urma_target_seg_t *tseg)
{
	struct ubx_seg *g = ubx_seg_of(tseg);
	struct ubx_port *p;

	if (!g || !g->imported)
		return URMA_EINVAL;
	p = g->ctx->port;
	ubx_cnt(&g->ctx->nobj, -1);
	pthread_mutex_lock(&p->lock);
	g->magic = UBX_M_DEAD;
	pthread_mutex_unlock(&p->lock);
	free(g);
	return URMA_SUCCESS;
}
