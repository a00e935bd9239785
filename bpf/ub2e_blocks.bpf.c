// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Which slots of a switch's npi2vlan (the outer map-in-map, reused from its
 * pin) hold a block, in one BPF_PROG_TEST_RUN: for ubctl's table listing
 * (user/io/ub2e_tables.c). Read from user space, every outer slot costs a
 * synchronize_rcu() on kernels before 6.8 (bpf_map_copy_value() waits for
 * running programs after a map-in-map lookup, found or not): ~18 ms a slot on
 * 6.1 under TCG, 72 s for the 4096. Read here, nothing waits.
 */
#include "ub2e_npi2vlan.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Bit hi % 32 of found[hi / 32]: slot hi holds a block. */
__u32 found[UB2E_NPI_BLOCKS / 32];

static long probe(__u32 hi, void *ctx)
{
	(void)ctx;
	/* A mask, not a test of hi: the key goes through the stack for the
	 * lookup, and 6.1's verifier forgets a tested bound across that. */
	if (bpf_map_lookup_elem(&ub2e_npi2vlan, &hi))
		found[(hi / 32) & (UB2E_NPI_BLOCKS / 32 - 1)] |= 1u << (hi % 32);
	return 0;
}

SEC("xdp")
int ub2e_blocks(struct xdp_md *ctx)
{
	(void)ctx;
	bpf_loop(UB2E_NPI_BLOCKS, probe, NULL, 0);
	return XDP_PASS;
}
