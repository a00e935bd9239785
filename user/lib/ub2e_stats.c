// SPDX-License-Identifier: BSD-2-Clause
#include "ub2e_stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define UB2E_CNT_NAME(id, name) [UB2E_CNT_##id] = name,
static const char *const names[UB2E_CNT__MAX] = { UB2E_COUNTERS(UB2E_CNT_NAME) };

const char *ub2e_counter_name(unsigned id)
{
	return id < UB2E_CNT__MAX ? names[id] : "?";
}

int ub2e_counter_id(const char *name)
{
	for (int i = 0; i < UB2E_CNT__MAX; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

int ub2e_counters_read(int fd, __u64 out[UB2E_CNT__MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *vals;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (__u32 i = 0; i < UB2E_CNT__MAX; i++) {
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
