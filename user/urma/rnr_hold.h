/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The shared receive path's RNR hold (manual_taack): once a Send is refused
 * for want of a buffer, later Sends are refused too so that they stay in
 * order, as the core's target does (tp_rxmsg.c rnr_refuse).
 */
#ifndef UBXDP_URMA_RNR_HOLD_H
#define UBXDP_URMA_RNR_HOLD_H

#include <stdbool.h>
#include <stdint.h>

struct ubx_rnr_hold {
	bool on;
	uint16_t tassn;		/* the newest Send refused */
};

bool ubx_hold_refuses(struct ubx_rnr_hold *h, uint16_t tassn, bool retry);
void ubx_hold_refused(struct ubx_rnr_hold *h, uint16_t tassn);

#endif
