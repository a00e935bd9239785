// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A counting sink (bench/wps_threads.sh): drops every frame and keeps, per
 * CPU, how many it saw and when the first and the last came (bpf_ktime), so
 * a bench can time a burst from its first frame out to its last at the far
 * end, whatever the sender's wake-up took.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct sink_count {
	__u64 frames;
	__u64 first_ns;
	__u64 last_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sink_count);
} sink_counts SEC(".maps");

SEC("xdp")
int sink_count(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct sink_count *c = bpf_map_lookup_elem(&sink_counts, &zero);
	__u64 now = bpf_ktime_get_ns();

	(void)ctx;
	if (c) {
		if (!c->frames)
			c->first_ns = now;
		c->last_ns = now;
		c->frames++;
	}
	return XDP_DROP;
}
