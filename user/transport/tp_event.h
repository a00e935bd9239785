/* SPDX-License-Identifier: BSD-2-Clause */
/* The endpoint's event queue (tp_event.c). */
#ifndef UBXDP_TP_EVENT_H
#define UBXDP_TP_EVENT_H

#include "transport/tp_int.h"

/* The next event, filled with what every event says; NULL: the queue is full
 * (counted). */
struct tp_event *tp_emit(struct tp_chan *ch, enum tp_event_type t, enum tp_status st,
			 uint64_t wr_id, size_t len, uint16_t tassn);

#endif
