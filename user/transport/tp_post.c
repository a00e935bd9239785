// SPDX-License-Identifier: BSD-2-Clause
/*
 * Posting: work requests checked and queued on the send queue, receives on
 * the receive queue, and a manual answer handed to the target.
 */
#include <stdlib.h>
#include <string.h>

#include "transport/tp_answer.h"
#include "transport/tp_sge.h"
#include "transport/tp_sq.h"

static const uint8_t op_kind_of[] = {
	[TP_OP_SEND] = OP_SEND, [TP_OP_SEND_IMM] = OP_SEND, [TP_OP_WRITE] = OP_WRITE,
	[TP_OP_WRITE_IMM] = OP_WRITE, [TP_OP_READ] = OP_READ, [TP_OP_CAS] = OP_ATOMIC,
	[TP_OP_FADD] = OP_ATOMIC,
};

static int post_check(struct tp_chan *ch, size_t len)
{
	if (ch->failed)
		return -EIO;
	if (!ch->connected)
		return -ENOTCONN;
	if (len > UINT32_MAX)
		return -EMSGSIZE;
	/* CTP does not segment: one operation, one packet; nor does UTP,
	 * whose UTPH has no PSN to put segments in order by. */
	if ((tp_is_ctp(ch) || ch->cfg.mode == TP_MODE_UTP) && len > ch->cfg.mtu)
		return -EMSGSIZE;
	if (ch->n_init_ops >= ch->cfg.max_ops)
		return -EAGAIN;
	return 0;
}

/*
 * The payload's segments, kept with the op: one in sge1, more copied to the
 * heap; TP_WR_INLINE: the bytes themselves, copied now (one segment).
 */
static int op_set_sge(struct tp_op *op, const struct tp_sge *sge, uint32_t n, size_t len,
		      bool inl)
{
	if (inl) {
		op->heap = malloc(len ? len : 1);
		if (!op->heap)
			return -ENOMEM;
		tp_sge_out(sge, n, 0, op->heap, len);
		op->sge1 = (struct tp_sge){ .addr = op->heap, .len = (uint32_t)len };
		op->nsge = 1;
		return 0;
	}
	op->nsge = n;
	if (n == 1)
		op->sge1 = sge[0];
	if (n > 1) {
		op->heap = op->sgev = malloc(n * sizeof(*sge));
		if (!op->sgev)
			return -ENOMEM;
		memcpy(op->sgev, sge, n * sizeof(*sge));
	}
	return 0;
}

int tp_post(struct tp_chan *ch, const struct tp_wr *wr)
{
	bool inl = wr->flags & TP_WR_INLINE, atomic, mem, bad;
	struct tp_op *op;
	size_t len = 0;
	int rc;

	/* Errors in the order the single-buffer calls always gave them: the
	 * channel and the length first, then the operation, then its buffers. */
	bad = (unsigned)wr->opcode > TP_OP_FADD ||
	      (wr->flags & ~(TP_WR_INLINE | TP_WR_FENCE | TP_WR_SO)) ||
	      wr->num_sge > TP_MAX_SGE || (wr->num_sge && !wr->sge) ||
	      !tp_sge_total(wr->sge, wr->num_sge, &len);
	atomic = wr->opcode == TP_OP_CAS || wr->opcode == TP_OP_FADD;
	mem = wr->opcode >= TP_OP_WRITE && !bad;
	rc = post_check(ch, atomic ? 2 * TP_ATOMIC_LEN : len);
	if (rc)
		return rc;
	if (mem && ch->cfg.mode == TP_MODE_UTP)
		return -EOPNOTSUPP;
	if (bad || (atomic && (wr->num_sge != 1 || wr->sge[0].len < TP_ATOMIC_LEN)))
		return -EINVAL;
	if (inl && (wr->opcode == TP_OP_READ || atomic))
		return -EINVAL;
	if (inl && len > TP_INLINE_MAX)
		return -EMSGSIZE;
	if (atomic && ch->cfg.mtu < 2 * TP_ATOMIC_LEN)
		return -EMSGSIZE;
	op = tp_sq_push(ch);
	if (!op)
		return -EAGAIN;
	op->kind = op_kind_of[wr->opcode];
	op->opcode = (uint8_t)wr->opcode;
	op->fence = wr->flags & TP_WR_FENCE;
	op->wr_id = wr->wr_id;
	op->imm = wr->imm;
	if (mem) {
		op->va = wr->remote_va;
		op->token = wr->rkey.token_id;
		op->token_value = wr->rkey.token_value;
	}
	if (atomic) {
		/* [chosen] big-endian operands: operand 1 | operand 2 (UB 2.0
		 * §7.4.2.3: CAS swap | compare, FADD add | ignored). */
		ub_put_be64(op->abuf, wr->opcode == TP_OP_CAS ? wr->swap : wr->add);
		ub_put_be64(op->abuf + 8, wr->opcode == TP_OP_CAS ? wr->compare : 0);
		op->sge1 = (struct tp_sge){ .addr = op->abuf, .len = sizeof(op->abuf) };
		op->nsge = 1;
		op->len = sizeof(op->abuf);
		op->dst = wr->sge[0].addr;
	} else if (op->kind == OP_READ) {
		rc = op_set_sge(op, wr->sge, wr->num_sge, len, false);
		op->rd_len = len;
	} else {
		rc = op_set_sge(op, wr->sge, wr->num_sge, len, inl);
		op->len = len;
	}
	if (rc) {
		/* Undo the push: nothing else touched the ring since. */
		tp_op_free(op);
		op->state = OS_FREE;
		ch->sq_tail = (ch->sq_tail + ch->sq_cap - 1) % ch->sq_cap;
		return rc;
	}
	op->nseg = op->len ? (uint32_t)((op->len + ch->cfg.mtu - 1) / ch->cfg.mtu) : 1;
	op->tassn = ch->next_tassn++;
	ch->n_init_ops++;
	return 0;
}

/* The single-buffer shorthands: one segment (a length past 32 bits is
 * refused as tp_post() would refuse the message). */
static int post1(struct tp_chan *ch, struct tp_wr *wr, const void *buf, size_t len)
{
	struct tp_sge sge = { .addr = (void *)buf, .len = (uint32_t)len };

	if (len > UINT32_MAX)
		return post_check(ch, len);
	wr->sge = &sge;
	wr->num_sge = 1;
	return tp_post(ch, wr);
}

int tp_post_send(struct tp_chan *ch, const void *buf, size_t len, uint64_t wr_id)
{
	struct tp_wr wr = { .opcode = TP_OP_SEND, .wr_id = wr_id };

	return post1(ch, &wr, buf, len);
}

int tp_post_write(struct tp_chan *ch, const void *buf, size_t len,
		  uint64_t remote_va, struct tp_rkey rkey, uint64_t wr_id)
{
	struct tp_wr wr = { .opcode = TP_OP_WRITE, .wr_id = wr_id, .remote_va = remote_va,
			    .rkey = rkey };

	return post1(ch, &wr, buf, len);
}

int tp_post_read(struct tp_chan *ch, void *buf, size_t len,
		 uint64_t remote_va, struct tp_rkey rkey, uint64_t wr_id)
{
	struct tp_wr wr = { .opcode = TP_OP_READ, .wr_id = wr_id, .remote_va = remote_va,
			    .rkey = rkey };

	return post1(ch, &wr, buf, len);
}

int tp_post_recv_sge(struct tp_chan *ch, const struct tp_sge *sge, uint32_t num_sge,
		     uint64_t wr_id)
{
	uint32_t next = (ch->rq_tail + 1) % ch->rq_cap;
	struct tp_recvbuf rb = { .nsge = num_sge, .wr_id = wr_id };

	if (ch->failed)
		return -EIO;
	if (num_sge > TP_MAX_SGE || (num_sge && !sge) || !tp_sge_total(sge, num_sge, &rb.cap))
		return -EINVAL;
	if (next == ch->rq_head)
		return -EAGAIN;
	if (num_sge == 1)
		rb.sge1 = sge[0];
	if (num_sge > 1) {
		rb.sgev = malloc(num_sge * sizeof(*sge));
		if (!rb.sgev)
			return -ENOMEM;
		memcpy(rb.sgev, sge, num_sge * sizeof(*sge));
	}
	ch->rq[ch->rq_tail] = rb;
	ch->rq_tail = next;
	return 0;
}

uint32_t tp_recv_take_back(struct tp_chan *ch, uint64_t *ids, uint32_t max)
{
	uint32_t n = 0;

	/* The head is the next one a message takes: the tail end is unused. */
	while (n < max && ch->rq_tail != ch->rq_head) {
		ch->rq_tail = (ch->rq_tail + ch->rq_cap - 1) % ch->rq_cap;
		ids[n++] = ch->rq[ch->rq_tail].wr_id;
		tp_rb_free(&ch->rq[ch->rq_tail]);
	}
	return n;
}

int tp_post_recv(struct tp_chan *ch, void *buf, size_t cap, uint64_t wr_id)
{
	struct tp_sge sge = { .addr = buf, .len = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap };

	return tp_post_recv_sge(ch, &sge, 1, wr_id);
}

int tp_recv_answer(struct tp_chan *ch, uint16_t tassn, int status)
{
	return tp_rcv_answer(ch, tassn, status);
}
