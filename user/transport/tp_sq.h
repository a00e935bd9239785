/* SPDX-License-Identifier: BSD-2-Clause */
/* The send queue of a channel (tp_sq.c). */
#ifndef UBXDP_TP_SQ_H
#define UBXDP_TP_SQ_H

#include "transport/tp_int.h"

/* A free op at the tail, zeroed and queued; NULL: the queue is full. */
struct tp_op *tp_sq_push(struct tp_chan *ch);
/* Complete what can be, in posting order; free done ops from the head. */
void tp_sq_progress(struct tp_chan *ch);
/* Fail the channel: every op and posted receive flushed, timers off. */
void tp_chan_fail(struct tp_chan *ch, enum tp_status why);
/* The unanswered initiator op of TASSN tassn, or NULL. */
struct tp_op *tp_snd_find_op(struct tp_chan *ch, uint16_t tassn);
void tp_snd_op_answered(struct tp_chan *ch, struct tp_op *op, enum tp_status st);
/* The next op with segments to send that no fence holds back, or NULL. */
struct tp_op *tp_snd_next_op(struct tp_chan *ch);

#endif
