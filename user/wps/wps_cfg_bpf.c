// SPDX-License-Identifier: BSD-2-Clause
/* The WPS ingress flow table's size, set on an object before it is loaded (libbpf). */
#include <bpf/libbpf.h>

#include "wps/wps_cfg.h"

void wps_in_flow_table_size(struct bpf_object *obj, __u32 n)
{
	static const char *const slots[] = { "wps_in_flow_hot", "wps_in_flow_state", "wps_in_flow_det" };
	struct bpf_map *m;

	n = wps_in_pow2(n < 64 ? 64 : n);
	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
		if ((m = bpf_object__find_map_by_name(obj, slots[i])))
			bpf_map__set_max_entries(m, 2 * n);	/* twice the slots: never all but full */
	if ((m = bpf_object__find_map_by_name(obj, "wps_in_flows")))
		bpf_map__set_max_entries(m, n);
	if ((m = bpf_object__find_map_by_name(obj, "wps_in_flow_cache")))
		bpf_map__set_max_entries(m, n);
}
