/* SPDX-License-Identifier: BSD-2-Clause */
/* The UB2E counters (UB2E_COUNTERS in headers/ub2e_maps.h): names and reading the per-CPU map. */
#ifndef UBXDP_UB2E_STATS_H
#define UBXDP_UB2E_STATS_H

#include <linux/types.h>
#include "ub2e_maps.h"

const char *ub2e_counter_name(unsigned id);
/* The id of a counter name, or -1. */
int ub2e_counter_id(const char *name);
/* Every counter of the ub2e_stats map behind fd, summed over CPUs. Returns 0 or -errno. */
int ub2e_counters_read(int fd, __u64 out[UB2E_CNT__MAX]);

#endif
