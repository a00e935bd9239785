/* SPDX-License-Identifier: BSD-2-Clause */
/* Retransmission at a channel's sender: bytes in flight, the RTO, RACK and TLP (tp_rtx.c). */
#ifndef UBXDP_TP_RTX_H
#define UBXDP_TP_RTX_H

#include "transport/tp_int.h"

/* A slot's bytes out of inflight (acknowledged, SACKed or lost): how many. */
uint32_t tp_infl_out(struct tp_chan *ch, struct tp_slot *s);
/* Nothing in flight any more (an RTO, a Go-Back-N go-back). */
void tp_infl_reset(struct tp_chan *ch);

/* The RTO now, backed off by consecutive timeouts. */
uint64_t tp_rto_value(const struct tp_chan *ch, uint64_t now);
/* What RACK's timers wait for now: the largest of SRTT, a sprayed channel's
 * recent deliveries' RTTs and the D-SACKs' recent bounds. */
uint64_t tp_rtt_hi(const struct tp_chan *ch, uint64_t now);
/* The same without the D-SACKs' bounds: what the paths and SRTT show. */
uint64_t tp_rtt_hi_paths(const struct tp_chan *ch, uint64_t now);
void tp_rtt_sample(struct tp_chan *ch, uint64_t now, uint64_t rtt);
/* The oldest initiator op acknowledged but not answered, or NULL. */
struct tp_op *tp_unanswered(struct tp_chan *ch);
void tp_rto_rearm(struct tp_chan *ch, uint64_t now);
/* The sender's timers: RTO, RACK's reordering timer, the tail loss probe. */
void tp_snd_tick(struct tp_chan *ch, uint64_t now);
uint64_t tp_snd_deadline(const struct tp_chan *ch);
/* Of those, the loss timers' (RTO, tail loss probe), and the others' (RACK's
 * reordering timer, RNR, CC pacing); UINT64_MAX when none. */
uint64_t tp_snd_loss_deadline(const struct tp_chan *ch);
uint64_t tp_snd_exact_deadline(const struct tp_chan *ch);

/* RACK (cfg.rack): a packet delivered (acked or SACKed), a D-SACK of PSN d,
 * the packets sent before the latest delivered one by more than the
 * reordering window marked lost; the tail loss probe armed. */
void tp_rack_delivered(struct tp_chan *ch, uint64_t now, const struct tp_slot *s, uint32_t psn);
void tp_rack_dsack(struct tp_chan *ch, uint64_t now, uint32_t d);
void tp_rack_detect(struct tp_chan *ch, uint64_t now);
void tp_tlp_arm(struct tp_chan *ch, uint64_t now);

#endif
