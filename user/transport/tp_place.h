/* SPDX-License-Identifier: BSD-2-Clause */
/* Out-of-order packets placed straight into their messages (tp_place.c). */
#ifndef UBXDP_TP_PLACE_H
#define UBXDP_TP_PLACE_H

#include "transport/tp_int.h"

/* Packet p of PSN psn, past a hole: its payload to where its message will
 * take it, if that is known now (*pl says where); false: hold it whole. */
bool tp_place(struct tp_chan *ch, const struct tp_parsed *p, uint32_t psn, struct tp_placed *pl);
/* The message of TPMSN tpmsn is over: the next one begins. */
void tp_place_done(struct tp_chan *ch, uint32_t tpmsn);
/* Receive rb is taken back: what was placed in it is held in its packets again. */
void tp_place_unplace(struct tp_chan *ch, const struct tp_recvbuf *rb);

#endif
