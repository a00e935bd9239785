// SPDX-License-Identifier: BSD-2-Clause
#include "io/cpus.h"

#include <errno.h>
#include <pthread.h>
#include <unistd.h>

cpu_set_t *cpus_allowed(size_t *size)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	int n = conf > CPU_SETSIZE && conf < (1 << 20) ? (int)conf : CPU_SETSIZE;

	/* Doubled until the kernel's mask fits (EINVAL: too small). */
	for (; n <= (1 << 20); n *= 2) {
		cpu_set_t *set = CPU_ALLOC(n);

		if (!set)
			return NULL;
		*size = CPU_ALLOC_SIZE(n);
		if (!sched_getaffinity(0, *size, set))
			return set;
		int err = errno;

		CPU_FREE(set);
		if (err != EINVAL)
			return NULL;
	}
	return NULL;
}

long cpus_usable(void)
{
	size_t size;
	cpu_set_t *set = cpus_allowed(&size);
	long n = set ? CPU_COUNT_S(size, set) : 0;

	CPU_FREE(set);
	return n > 0 ? n : sysconf(_SC_NPROCESSORS_ONLN);
}

int cpus_nth(unsigned k)
{
	size_t size;
	cpu_set_t *set = cpus_allowed(&size);
	int cpu = -1;

	for (int c = 0; set && c < (int)(size * 8); c++)
		if (CPU_ISSET_S(c, size, set) && !k--) {
			cpu = c;
			break;
		}
	CPU_FREE(set);
	return cpu;
}

int cpus_bind_thread(int cpu)
{
	cpu_set_t *set = cpu >= 0 ? CPU_ALLOC(cpu + 1) : NULL;
	size_t size = CPU_ALLOC_SIZE(cpu + 1);
	int rc;

	if (!set)
		return EINVAL;
	CPU_ZERO_S(size, set);
	CPU_SET_S(cpu, size, set);
	rc = pthread_setaffinity_np(pthread_self(), size, set);
	CPU_FREE(set);
	return rc;
}
