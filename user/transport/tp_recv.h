/* SPDX-License-Identifier: BSD-2-Clause */
/* The receiver of a channel: PSNs, out of order, the responses (tp_recv.c). */
#ifndef UBXDP_TP_RECV_H
#define UBXDP_TP_RECV_H

#include "transport/tp_int.h"

/* A data packet (p parsed from raw) received on the channel. */
enum tp_rx_verdict tp_rcv_data(struct tp_chan *ch, uint64_t now, const struct tp_parsed *p,
			       const uint8_t *raw, size_t len, uint8_t ecn);
/* The next response due (TPACK, TPNAK, TPSACK, a TAACK aboard), 0 when none. */
size_t tp_rcv_response(struct tp_chan *ch, uint64_t now, void *out, size_t cap,
		       struct tp_tx_info *info);
void tp_rcv_tick(struct tp_chan *ch, uint64_t now);
uint64_t tp_rcv_deadline(const struct tp_chan *ch);
/* Room in the send queue for what the target owes (answers, Read data). */
bool tp_rcv_room(const struct tp_chan *ch);

#endif
