// SPDX-License-Identifier: BSD-2-Clause
/*
 * Some kernels refuse bpf_xdp_adjust_meta() to every XDP program ("program of
 * this type cannot use helper"), although libbpf's helper probe, which looks
 * for other words in the verifier's log, calls it supported. So load the
 * smallest program that calls it and see.
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <bpf/bpf.h>

#include "io/ub2e_punt.h"

bool ub2e_xdp_meta_ok(void)
{
	static int ok = -1;
	const struct bpf_insn prog[] = {
		/* r1 = ctx already; r2 = -8; call bpf_xdp_adjust_meta; return XDP_PASS */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = -8 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_xdp_adjust_meta },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	if (ok < 0) {
		int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "ub2e_meta_probe", "Dual BSD/GPL", prog,
				       sizeof(prog) / sizeof(prog[0]), NULL);

		ok = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	return ok;
}

__u64 ub2e_punt_key_pick(void)
{
	__u64 key = 0;

	if (ub2e_xdp_meta_ok())
		return 0;
	while (!key) {
		if (getrandom(&key, sizeof(key), 0) == sizeof(key))
			continue;
		if (errno != EINTR) {	/* no getrandom(): the clock, never a constant */
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			key = ((__u64)getpid() << 40) ^ (__u64)ts.tv_sec << 30 ^ (__u64)ts.tv_nsec;
		}
	}
	return key;
}
