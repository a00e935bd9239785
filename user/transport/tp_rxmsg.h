/* SPDX-License-Identifier: BSD-2-Clause */
/* The target's transaction layer: reassembly, Send, Write, Read, atomics (tp_rxmsg.c). */
#ifndef UBXDP_TP_RXMSG_H
#define UBXDP_TP_RXMSG_H

#include "transport/tp_int.h"

/* An in-order packet of PSN psn to the transaction layer. */
void tp_rcv_deliver(struct tp_chan *ch, uint64_t now, const struct tp_parsed *p, uint32_t psn);
/* The completion of a received Send (or Write with immediate) of TA opcode. */
void tp_emit_recv(struct tp_chan *ch, uint8_t opcode);

#endif
