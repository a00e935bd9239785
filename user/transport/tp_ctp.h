/* SPDX-License-Identifier: BSD-2-Clause */
/* CTP: no PSN, no acks; one packet per operation (tp_ctp.c). */
#ifndef UBXDP_TP_CTP_H
#define UBXDP_TP_CTP_H

#include "transport/tp_int.h"

enum tp_rx_verdict tp_ctp_rx(struct tp_ep *ep, uint64_t now, const void *pkt, size_t len,
			     const struct tp_rx_meta *meta);
size_t tp_ctp_send(struct tp_chan *ch, uint64_t now, uint8_t *buf, size_t cap,
		   struct tp_tx_info *info);
void tp_ctp_tick(struct tp_chan *ch, uint64_t now);
uint64_t tp_ctp_deadline(const struct tp_chan *ch);

#endif
