// SPDX-License-Identifier: BSD-2-Clause
#include "wps/egress_stats.h"
#include "io/percpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define WPS_EG_CNT_NAME(id, name) [WPS_EG_CNT_##id] = name,
static const char *const names[WPS_EG_CNT__MAX] = { WPS_EG_COUNTERS(WPS_EG_CNT_NAME) };

const char *wps_eg_counter_name(unsigned id)
{
	return id < WPS_EG_CNT__MAX ? names[id] : "?";
}

int wps_eg_counter_id(const char *name)
{
	for (int i = 0; i < WPS_EG_CNT__MAX; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

int wps_eg_counters_read(int fd, __u64 out[WPS_EG_CNT__MAX])
{
	return percpu_counters_sum(fd, WPS_EG_CNT__MAX, out);
}
