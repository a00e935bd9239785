/* SPDX-License-Identifier: BSD-2-Clause */
/* Transmission at a channel's sender: the next packet, new or resent (tp_send.c). */
#ifndef UBXDP_TP_SEND_H
#define UBXDP_TP_SEND_H

#include "transport/tp_int.h"

/* The next data packet into buf (new or resent), 0 when none may go now. */
size_t tp_snd_data(struct tp_chan *ch, uint64_t now, void *out, size_t cap,
		   struct tp_tx_info *info);

#endif
