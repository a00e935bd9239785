/* SPDX-License-Identifier: BSD-2-Clause */
/* The UB2E counters (UB2E_COUNTERS in headers/ub2e_maps.h): names and reading the per-CPU map. */
#ifndef UBXDP_UB2E_STATS_H
#define UBXDP_UB2E_STATS_H

#include <linux/types.h>
#include "ub2e_maps.h"

/*
 * What a counter says about a packet. Every packet a program sees moves exactly
 * one verdict counter (TX, PASS, DROP or FOREIGN), and the RX counter too unless
 * it is FOREIGN, so over any interval rx = tx + pass + drop.
 */
enum ub2e_counter_class {
	UB2E_CLASS_RX,		/* a UB (UBoE) packet received */
	UB2E_CLASS_TX,		/* received, converted and forwarded */
	UB2E_CLASS_PASS,	/* received, then handed to the kernel */
	UB2E_CLASS_DROP,	/* received, then dropped */
	UB2E_CLASS_FOREIGN,	/* not UB traffic: handed to the kernel as it is, not received */
	UB2E_CLASS_INFO,	/* a note on a packet that a verdict counter counts too */
};

const char *ub2e_counter_name(unsigned id);
enum ub2e_counter_class ub2e_counter_class(unsigned id);
const char *ub2e_class_name(enum ub2e_counter_class c);
/* The id of a counter name, or -1. */
int ub2e_counter_id(const char *name);
/* Every counter of the ub2e_stats map behind fd, summed over CPUs, rx_* including
 * the forwarded packets (tx_*), which the map counts only there. Returns 0 or -errno. */
int ub2e_counters_read(int fd, __u64 out[UB2E_CNT__MAX]);

#endif
