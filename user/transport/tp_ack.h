/* SPDX-License-Identifier: BSD-2-Clause */
/* Acknowledgements and answers at a channel's sender (tp_ack.c). */
#ifndef UBXDP_TP_ACK_H
#define UBXDP_TP_ACK_H

#include "transport/tp_int.h"

/* A TPACK, TPNAK or TPSACK (p) for this channel. */
void tp_snd_on_ack(struct tp_chan *ch, uint64_t now, const struct tp_parsed *p);
/* The target's answer (TAACK, RSPST) to operation tassn. */
void tp_snd_on_answer(struct tp_chan *ch, uint64_t now, uint16_t tassn, uint8_t rspst,
		      uint8_t rspinfo);

#endif
