// SPDX-License-Identifier: BSD-2-Clause
/*
 * Test helper: another program on a TC hook beside ubxdp's. It counts the
 * packets it sees and gives no verdict (TC_ACT_UNSPEC: tcx's TCX_NEXT, the
 * next clsact filter), so whatever runs after it on the hook runs too.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} tc_count SEC(".maps");

SEC("tc")
int tc_count_pkts(struct __sk_buff *skb)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&tc_count, &zero);

	(void)skb;
	if (n)
		__sync_fetch_and_add(n, 1);
	return TC_ACT_UNSPEC;
}
