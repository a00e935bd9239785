/* SPDX-License-Identifier: BSD-2-Clause */
/* Congestion feedback on the wire, through the channel's tp_cc_ops (cc_wire.c). */
#ifndef UBXDP_CC_WIRE_H
#define UBXDP_CC_WIRE_H

#include "transport/tp_int.h"

void tp_cc_rx_data(struct tp_chan *ch, uint64_t now, uint32_t bytes, const struct tp_rx_meta *m);
void tp_cc_on_cetph(struct tp_chan *ch, uint64_t now, const struct ub_cetph_fields *ce);
void tp_cc_on_cnp(struct tp_chan *ch, uint64_t now, const struct ub_cnpetph_fields *cnp);
bool tp_cc_can_send(struct tp_chan *ch, uint64_t now, uint32_t bytes);
void tp_cc_on_lost(struct tp_chan *ch, uint64_t now, uint32_t bytes);
void tp_cc_on_send(struct tp_chan *ch, uint64_t now, uint32_t bytes, bool rtx);
size_t tp_cc_response(struct tp_chan *ch, uint64_t now, void *out, size_t cap,
		      struct tp_tx_info *info);
size_t tp_cc_ack_ext(struct tp_chan *ch, uint64_t now, uint8_t *buf, size_t n, size_t cap);
void tp_cc_tx_data(struct tp_chan *ch, uint64_t now, struct tp_tx_info *info);

#endif
