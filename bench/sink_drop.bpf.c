// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The far end of the live-frames bench: attached to the veth peers the switch
 * redirects into (a veth delivers XDP_REDIRECTed frames only to a peer with an
 * XDP program), it drops every frame, so the bench times forwarding, not a stack.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int sink_drop(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_DROP;
}
