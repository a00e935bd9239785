// SPDX-License-Identifier: BSD-2-Clause
/*
 * Posting work requests to a JFS, JFR or jetty (jetty.c): each one checked
 * against the queue, its segments and its target, then handed to the
 * channel's core (progress.c) or, for a JFR, queued for the Sends to come;
 * and the one-call forms (urma_write, urma_read, urma_send, urma_recv).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "urma/urma_int.h"

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
	struct ubx_port *p = q->port;
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

/* q: the JFS or jetty, NULL when the handle was not one (refused like an empty list). */
static urma_status_t post_send(struct ubx_q *q, urma_jfs_wr_t *wr, urma_jfs_wr_t **bad_wr)
{
	struct ubx_port *p;
	int rc = 0;

	if (!q || !wr) {
		if (bad_wr)
			*bad_wr = wr;
		return URMA_EINVAL;
	}
	p = q->port;
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
	return post_send(ubx_q_of(jfs, UBX_JFS), wr, bad_wr);
}

UBX_VISIBLE urma_status_t urma_post_jetty_send_wr(urma_jetty_t *jetty, urma_jfs_wr_t *wr,
						  urma_jfs_wr_t **bad_wr)
{
	return post_send(ubx_q_of(jetty, UBX_JETTY), wr, bad_wr);
}

/* jfr: NULL when the handle was not a JFR or jetty (refused like an empty list). */
static urma_status_t post_recv(struct ubx_q *jfr, urma_jfr_wr_t *wr, urma_jfr_wr_t **bad_wr)
{
	struct ubx_port *p;
	int rc = 0;

	if (!jfr || !wr) {
		if (bad_wr)
			*bad_wr = wr;
		return URMA_EINVAL;
	}
	p = jfr->port;
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
	return post_recv(ubx_q_of(jfr, UBX_JFR), wr, bad_wr);
}

UBX_VISIBLE urma_status_t urma_post_jetty_recv_wr(urma_jetty_t *jetty, urma_jfr_wr_t *wr,
						  urma_jfr_wr_t **bad_wr)
{
	struct ubx_q *q = ubx_q_of(jetty, UBX_JETTY);

	return post_recv(q ? q->jfr : NULL, wr, bad_wr);
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
