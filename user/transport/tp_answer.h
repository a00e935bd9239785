/* SPDX-License-Identifier: BSD-2-Clause */
/* The target's answers, TAACK (tp_answer.c). */
#ifndef UBXDP_TP_ANSWER_H
#define UBXDP_TP_ANSWER_H

#include "transport/tp_int.h"

/* Queue a TPACK carrying a TAACK (ROL). */
void tp_push_taack_ack(struct tp_chan *ch, uint32_t psn, uint16_t tassn, uint8_t rspst,
		       uint8_t rspinfo);
/* Answer operation tassn with st (info: RSPINFO of a refusal), in order for ROL. */
void tp_answer(struct tp_chan *ch, uint16_t tassn, enum tp_status st, uint8_t info,
	       uint32_t last_psn, uint8_t order, bool manual);
int tp_rcv_answer(struct tp_chan *ch, uint16_t tassn, int status);

#endif
