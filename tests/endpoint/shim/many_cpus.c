// SPDX-License-Identifier: BSD-2-Clause
/*
 * A kernel with more possible CPUs than a fixed cpu_set_t holds (1024), for a
 * program run under LD_PRELOAD (tests/endpoint/workers.sh): sched_getaffinity
 * refuses a set of fewer than MANY_CPUS bits with EINVAL, as the kernel does
 * one smaller than its possible CPUs, and otherwise answers the real affinity.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MANY_CPUS	4096

int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
	long n;

	if (size * 8 < MANY_CPUS) {
		errno = EINVAL;
		return -1;
	}
	n = syscall(SYS_sched_getaffinity, pid, size, set);
	if (n < 0)
		return -1;
	memset((char *)set + n, 0, size - (size_t)n);	/* the kernel writes its own size only */
	return 0;
}
