// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Harness for timing packet-rewriting XDP programs with BPF_PROG_RUN.
 *
 * Without BPF_F_TEST_XDP_LIVE_FRAMES the kernel runs the program `repeat`
 * times on ONE xdp_buff and never resets it: bpf_xdp_adjust_head() and header
 * edits accumulate, so from the second run on a converter sees its own output
 * (UBoE instead of native UB, TTL going down) and takes a short exit. Live
 * mode would reset the buffer but really transmits every frame, which times
 * veth and the peer's stack too.
 *
 * So each run goes through testrun_reset: it puts the frame back (head
 * position and the first RESET_BYTES bytes, which cover every header a
 * program under test edits) and tail-calls the program under test. Every
 * program, floors included, is timed through it; testrun_null measures what
 * the harness itself costs, and the bench subtracts that.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "testrun_reset.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} reset_target SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct reset_frame);
} reset_frame SEC(".maps");

SEC("xdp.frags")
int testrun_reset(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct reset_frame *f = bpf_map_lookup_elem(&reset_frame, &zero);
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u64 *dst;
	int delta;

	if (!f)
		return XDP_ABORTED;
	/* adjust_head moves data only, never data_end: the length tells how far. */
	delta = (int)f->len - (int)(end - data);
	if (bpf_xdp_adjust_head(ctx, -delta))
		return XDP_ABORTED;
	dst = (void *)(long)ctx->data;
	if ((void *)(dst + RESET_WORDS) > (void *)(long)ctx->data_end)
		return XDP_ABORTED;
#pragma unroll
	for (int i = 0; i < RESET_WORDS; i++)
		dst[i] = f->head[i];

	bpf_tail_call(ctx, &reset_target, 0);
	return XDP_ABORTED;
}

/* The harness's own cost: reset, tail call, a verdict. */
SEC("xdp.frags")
int testrun_null(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

/*
 * Traffic spread over many Partition IDs: as testrun_reset, then the 24-bit
 * big-endian Partition ID at byte `off` becomes 1 + (next++ % n), so that
 * successive runs look up different NPI table entries.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct reset_spread);
} reset_spread SEC(".maps");

SEC("xdp.frags")
int testrun_reset_spread(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct reset_frame *f = bpf_map_lookup_elem(&reset_frame, &zero);
	struct reset_spread *s = bpf_map_lookup_elem(&reset_spread, &zero);
	__u8 *pid;
	__u64 *dst;
	__u32 v;
	int delta;

	if (!f || !s || !s->n || s->off > RESET_BYTES - 3)
		return XDP_ABORTED;
	delta = (int)f->len - (int)((long)ctx->data_end - (long)ctx->data);
	if (bpf_xdp_adjust_head(ctx, -delta))
		return XDP_ABORTED;
	dst = (void *)(long)ctx->data;
	if ((void *)(dst + RESET_WORDS) > (void *)(long)ctx->data_end)
		return XDP_ABORTED;
#pragma unroll
	for (int i = 0; i < RESET_WORDS; i++)
		dst[i] = f->head[i];
	v = 1 + s->next++ % s->n;
	pid = (__u8 *)dst + (s->off & 0x7f);
	if ((void *)(pid + 3) > (void *)(long)ctx->data_end)
		return XDP_ABORTED;
	pid[0] = v >> 16;
	pid[1] = v >> 8;
	pid[2] = v;

	bpf_tail_call(ctx, &reset_target, 0);
	return XDP_ABORTED;
}
