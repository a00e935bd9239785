/* SPDX-License-Identifier: BSD-2-Clause */
/* WPS egress XDP counters (headers/wps_egress_maps.h): names and per-CPU sums. */
#ifndef WPS_EGRESS_STATS_H
#define WPS_EGRESS_STATS_H

#include <linux/types.h>
#include "wps_egress_maps.h"

const char *wps_eg_counter_name(unsigned id);
int wps_eg_counter_id(const char *name);
/* Sum of the per-CPU values of every counter; 0 or -errno. */
int wps_eg_counters_read(int fd, __u64 out[WPS_EG_CNT__MAX]);

#endif
