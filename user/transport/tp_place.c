// SPDX-License-Identifier: BSD-2-Clause
/*
 * Out-of-order placement: a packet that arrives past a hole puts its payload
 * where its message will take it (the posted receive a Send will take, the
 * region a Write names, the buffer of a Read), so that when the hole fills
 * the transaction layer only checks that it landed where the message's next
 * bytes go (tp_rxmsg.c) instead of copying it a second time. Only the
 * packet's headers wait in the out-of-order slot.
 *
 * Where a packet goes follows from what the held packets say: packets of a
 * message are MTU-sized up to its last (the notes: cut by MTU), so its
 * offset is the MTU times its distance from the message's first PSN, which
 * is the PSN after the previous message's last packet; a Send takes the
 * posted receive after those the messages before it take, known when each
 * of them has a packet held. Anything not known (a message with nothing
 * held between, a Write with immediate before a Send, an RNR outstanding, a
 * peer that cuts short of the MTU) is held whole, as before.
 */
#include <string.h>

#include "transport/tp_place.h"
#include "transport/tp_mr.h"
#include "transport/tp_sge.h"
#include "transport/tp_sq.h"

static struct tp_ahead *ahead(struct tp_chan *ch, uint32_t tpmsn, bool make)
{
	struct tp_ahead *a = &ch->ahead[tpmsn % TP_AHEAD];

	if (a->f && a->tpmsn == tpmsn)
		return a;
	if (!make)
		return NULL;
	*a = (struct tp_ahead){ .tpmsn = tpmsn };
	return a;
}

/* The message now being reassembled, or the next to begin. */
static uint32_t base_msn(const struct tp_chan *ch)
{
	return ch->rx.active ? ch->rx.tpmsn : ch->rcv_msn;
}

static bool is_send(uint8_t op) { return op == UB_TA_SEND || op == UB_TA_SEND_IMM; }
static bool is_write(uint8_t op) { return op == UB_TA_WRITE || op == UB_TA_WRITE_IMM; }

/* What packet p of the message `a` ahead of the base says of it and of the next. */
static void note(struct tp_chan *ch, const struct tp_parsed *p, uint32_t psn, uint32_t a)
{
	uint8_t op = p->tah.opcode;
	struct tp_ahead *e = ahead(ch, p->tph.tpmsn, true);

	e->f |= TPA_SEEN;
	if (is_send(op))
		e->f |= TPA_TAKES;
	if (is_write(op))
		e->f |= TPA_WRITE;
	if (op == UB_TA_WRITE_IMM)
		e->f |= TPA_TAKES;
	if (!p->tph.last)
		return;
	e->f |= TPA_LAST;
	if (a + 1 < TP_AHEAD) {
		struct tp_ahead *n = ahead(ch, tp_psn_add(p->tph.tpmsn, 1), true);

		n->f |= TPA_START;
		n->start = tp_psn_add(psn, 1);
	}
}

/*
 * How many posted receives the messages before the one `a` ahead take
 * first, into *c; false when one of them is not known well enough: nothing
 * of it held, or a Write with immediate (it takes one only if it succeeds).
 */
static bool takes_before(struct tp_chan *ch, uint32_t base, uint32_t a, uint32_t *c)
{
	*c = 0;
	for (uint32_t j = 0; j < a; j++) {
		const struct tp_ahead *e;

		/* A Send being reassembled has its receive already. */
		if (!j && ch->rx.active && !is_write(ch->rx.ta_op))
			continue;
		e = ahead(ch, tp_psn_add(base, j), false);
		if (!e || !(e->f & TPA_SEEN))
			return false;
		if (e->f & TPA_WRITE) {
			if (!(e->f & TPA_LAST) || (e->f & TPA_TAKES))
				return false;
			continue;
		}
		*c += !!(e->f & TPA_TAKES);
	}
	return true;
}

static bool place_send(struct tp_chan *ch, const struct tp_parsed *p, uint32_t a, size_t off,
		       struct tp_placed *pl)
{
	struct tp_rxmsg *m = &ch->rx;
	const struct tp_recvbuf *rb;
	uint32_t c;

	if (!a && m->active) {
		if (!is_send(m->ta_op) || !m->have_recv || m->status != TP_ST_OK)
			return false;
		rb = &m->rb;
	} else {
		if (!takes_before(ch, base_msn(ch), a, &c) ||
		    c >= (ch->rq_tail + ch->rq_cap - ch->rq_head) % ch->rq_cap)
			return false;
		rb = &ch->rq[(ch->rq_head + c) % ch->rq_cap];
	}
	if (off + p->payload_len > rb->cap)
		return false;
	tp_sge_in(rb_sge(rb), rb->nsge, off, p->payload, p->payload_len);
	*pl = (struct tp_placed){ .kind = TPP_RECV, .key = rb->seq, .off = off };
	return true;
}

static bool place_write(struct tp_chan *ch, const struct tp_parsed *p, uint32_t a, size_t off,
			struct tp_placed *pl)
{
	struct tp_rxmsg *m = &ch->rx;
	enum tp_status st;
	uint8_t *dst, info;
	size_t cap;

	if (!a && m->active) {
		if (!is_write(m->ta_op) || !m->dst || m->status != TP_ST_OK)
			return false;
		dst = m->dst;
		cap = m->cap;
	} else {
		/* Checked as the message's first packet will be: its VA is
		 * this one's less the offset, its Length the message's. */
		if (!p->has_maetah || p->mae.va < off)
			return false;
		dst = tp_mr_access(ch->ep, p, p->mae.va - off, p->mae.length, TP_ACCESS_WRITE, &st,
				   &info);
		if (!dst)
			return false;
		cap = p->mae.length;
	}
	if (off + p->payload_len > cap)
		return false;
	memcpy(dst + off, p->payload, p->payload_len);
	*pl = (struct tp_placed){ .kind = TPP_WRITE, .key = (uintptr_t)dst, .off = off };
	return true;
}

static bool place_read(struct tp_chan *ch, const struct tp_parsed *p, uint32_t a, size_t off,
		       struct tp_placed *pl)
{
	struct tp_rxmsg *m = &ch->rx;
	struct tp_op *op;

	if (!a && m->active) {
		if (m->ta_op != UB_TA_READ_RESP || m->op == UINT32_MAX || m->status != TP_ST_OK)
			return false;
		op = &ch->sq[m->op];
	} else {
		op = tp_snd_find_op(ch, p->tah.ini_tassn);
		if (!op || op->kind != OP_READ || op->state != OS_SENT)
			return false;
	}
	if (off + p->payload_len > op->rd_len)
		return false;
	tp_sge_in(op_sge(op), op->nsge, off, p->payload, p->payload_len);
	*pl = (struct tp_placed){ .kind = TPP_READ, .key = (uint64_t)(op - ch->sq), .off = off };
	return true;
}

bool tp_place(struct tp_chan *ch, const struct tp_parsed *p, uint32_t psn, struct tp_placed *pl)
{
	struct tp_rxmsg *m = &ch->rx;
	uint32_t a = (p->tph.tpmsn - base_msn(ch)) & TP_PSN_MASK;
	uint32_t mtu = ch->cfg.mtu;
	const struct tp_ahead *e;
	uint8_t op = p->tah.opcode;
	int32_t k;
	size_t off;

	*pl = (struct tp_placed){ .kind = TPP_NONE };
	if (a >= TP_AHEAD || !p->has_tah)
		return false;
	note(ch, p, psn, a);
	if (ch->place_off || ch->rnr_block || !p->payload_len ||
	    (!p->tph.last && p->payload_len != mtu))
		return false;
	/* Its offset in the message: MTU-sized packets from the message's first PSN. */
	if (!a && m->active) {
		if (p->tph.tpmsn != m->tpmsn || p->tah.ini_tassn != m->tassn)
			return false;
		k = tp_psn_diff(psn, ch->rcv_nxt);
		off = m->off + (size_t)k * mtu;
	} else {
		if (!a) {
			k = tp_psn_diff(psn, ch->rcv_nxt);
		} else {
			e = ahead(ch, p->tph.tpmsn, false);
			if (!e || !(e->f & TPA_START))
				return false;
			k = tp_psn_diff(psn, e->start);
		}
		if (k < 0 || (uint32_t)k >= ch->cfg.ooo_range)
			return false;
		off = (size_t)k * mtu;
	}
	if (is_send(op))
		return place_send(ch, p, a, off, pl);
	if (is_write(op))
		return place_write(ch, p, a, off, pl);
	if (op == UB_TA_READ_RESP)
		return place_read(ch, p, a, off, pl);
	return false;
}

void tp_place_done(struct tp_chan *ch, uint32_t tpmsn)
{
	struct tp_ahead *e = ahead(ch, tpmsn, false);

	if (e)
		e->f = 0;
	ch->rcv_msn = tp_psn_add(tpmsn, 1);
}

void tp_place_unplace(struct tp_chan *ch, const struct tp_recvbuf *rb)
{
	for (uint32_t i = 0; ch->n_ooo && i < ch->cfg.ooo_range; i++) {
		struct tp_held *h = &ch->ooo[i];

		if (!h->len || h->pl.kind != TPP_RECV || h->pl.key != rb->seq)
			continue;
		/* The headers are in the slot: the payload goes back behind them. */
		tp_sge_out(rb_sge(rb), rb->nsge, h->pl.off,
			   ch->ooo_buf + (size_t)i * ch->ooo_stride + h->len, h->n);
		h->len += h->n;
		h->pl.kind = TPP_NONE;
	}
}
