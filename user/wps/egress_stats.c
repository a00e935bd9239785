// SPDX-License-Identifier: BSD-2-Clause
#include "egress_stats.h"

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
	int ncpu = libbpf_num_possible_cpus();
	__u64 *vals;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (__u32 i = 0; i < WPS_EG_CNT__MAX; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, vals)) {
			free(vals);
			return -errno;
		}
		for (int c = 0; c < ncpu; c++)
			out[i] += vals[c];
	}
	free(vals);
	return 0;
}
