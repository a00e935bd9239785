// SPDX-License-Identifier: BSD-2-Clause
/*
 * Test helper: passes every frame. Attached to a veth, it makes the veth
 * receive through its NAPI ring (one ring, one CPU at a time) instead of the
 * backlog of whichever CPU sent the frame, where two frames of one flow sent
 * from two CPUs can overtake each other.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}
