/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CPUs this process may run on, whatever their number: a fixed cpu_set_t
 * holds CPU_SETSIZE (1024), and sched_getaffinity fails with EINVAL on a
 * kernel with more possible CPUs, so the set is sized as the kernel's.
 */
#ifndef UBXDP_CPUS_H
#define UBXDP_CPUS_H

#include <sched.h>
#include <stddef.h>

/* This process's affinity in a set of *size bytes (CPU_*_S, CPU_FREE when done); NULL: unknown. */
cpu_set_t *cpus_allowed(size_t *size);

/* How many CPUs it may run on (the online count if the affinity is unknown). */
long cpus_usable(void);

/* The k-th of them (-1: none). */
int cpus_nth(unsigned k);

/* Bind the calling thread to cpu alone (0, or an errno). */
int cpus_bind_thread(int cpu);

#endif
