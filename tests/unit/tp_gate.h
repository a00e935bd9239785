/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A congestion control that only holds: no data packet may leave in
 * [from, until) (pacing that holds the resends, a deep DCQCN cut, in its
 * simplest deterministic form). Its deadline wakes the simulation when it
 * opens, so a gate also makes an idle gap. Shut it again by setting from,
 * until and open = false.
 */
#ifndef UBXDP_TP_GATE_H
#define UBXDP_TP_GATE_H

#include "transport/tp.h"

struct gate {
	uint64_t from, until;
	bool open;
	uint32_t losses, rto_losses;
};

static inline bool gate_can_send(void *cc, uint64_t now, uint64_t inflight, uint32_t bytes)
{
	struct gate *g = cc;

	(void)inflight;
	(void)bytes;
	return now < g->from || now >= g->until;
}

static inline void gate_on_tick(void *cc, uint64_t now)
{
	struct gate *g = cc;

	g->open = g->open || now >= g->until;
}

static inline uint64_t gate_deadline(void *cc)
{
	struct gate *g = cc;

	return g->open ? UINT64_MAX : g->until;
}

static inline void gate_on_loss(void *cc, uint64_t now, enum tp_loss_kind kind)
{
	struct gate *g = cc;

	(void)now;
	g->losses++;
	g->rto_losses += kind == TP_LOSS_RTO;
}

static const struct tp_cc_ops gate_ops = {
	.can_send = gate_can_send, .on_tick = gate_on_tick,
	.next_deadline = gate_deadline, .on_loss = gate_on_loss,
};

#endif
