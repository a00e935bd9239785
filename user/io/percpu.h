/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef UBXDP_PERCPU_H
#define UBXDP_PERCPU_H

#include <linux/types.h>

/*
 * Entries 0..n-1 of a per-CPU array of u64 counters, each summed over every
 * possible CPU (the kernel copies one value per possible CPU, not per online
 * one). Returns 0, or -errno with out[] partly written.
 */
int percpu_counters_sum(int fd, __u32 n, __u64 *out);

#endif
