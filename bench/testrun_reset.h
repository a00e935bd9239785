/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared by bench/testrun_reset.bpf.c and the bench: the frame the harness restores. */
#ifndef UBXDP_BENCH_TESTRUN_RESET_H
#define UBXDP_BENCH_TESTRUN_RESET_H

#include <linux/types.h>

/*
 * Bytes restored from the frame's start: more than the largest header stack
 * a program under test edits (native UB over IPv6: Eth + LPH + NTH + IPv6 +
 * UDP = 72 bytes). Headers written in front of the start need no restoring.
 */
#define RESET_WORDS	11
#define RESET_BYTES	(RESET_WORDS * 8)

struct reset_frame {
	__u32 len;		/* frame length handed to BPF_PROG_RUN */
	__u32 pad;
	__u64 head[RESET_WORDS];	/* its first RESET_BYTES bytes */
};

/* testrun_reset_spread: rewrite the 24-bit Partition ID at `off` to 1 + next++ % n. */
struct reset_spread {
	__u32 off;
	__u32 n;
	__u32 next;
	__u32 pad;
};

#endif
