// SPDX-License-Identifier: BSD-2-Clause
#include "io/run_link.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>

int run_link_xdp(int prog_fd, int ifindex, bool generic)
{
	/* A link takes only the mode: it never replaces a program, linked or not. */
	LIBBPF_OPTS(bpf_link_create_opts, o, .flags = generic ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);
	int fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &o);

	return fd < 0 ? -errno : fd;
}

/*
 * BPF_PROG_QUERY and BPF_LINK_CREATE for tcx as kernel 6.6's union bpf_attr
 * lays them out (libbpf 1.1 has neither the query's revision nor the link's
 * expected revision). A kernel checks that what it does not know is zero.
 */
struct tcx_query_attr {
	uint32_t target_ifindex, attach_type, query_flags, attach_flags;
	uint64_t prog_ids;
	uint32_t count, pad;
	uint64_t prog_attach_flags, link_ids, link_attach_flags, revision;
};

struct tcx_link_attr {
	uint32_t prog_fd, target_ifindex, attach_type, flags;
	uint32_t relative_fd, pad;
	uint64_t expected_revision;
};

#define TCX_MAX_PROGS	64	/* the kernel's bpf_mprog_max() */

static int sys_bpf(int cmd, void *attr, size_t size)
{
	long r = syscall(__NR_bpf, cmd, attr, size);

	return r < 0 ? -errno : (int)r;
}

static int tcx_query(int ifindex, uint32_t type, uint32_t *prog_ids, uint32_t *link_ids, uint32_t max,
		     uint64_t *revision)
{
	struct tcx_query_attr q = { .target_ifindex = (uint32_t)ifindex, .attach_type = type,
				    .prog_ids = (uint64_t)(uintptr_t)prog_ids,
				    .link_ids = (uint64_t)(uintptr_t)link_ids, .count = max };
	int rc = sys_bpf(BPF_PROG_QUERY, &q, sizeof(q));

	if (rc < 0)
		return rc;
	if (revision)
		*revision = q.revision;
	return (int)(q.count < max ? q.count : max);
}

int run_link_tcx_query(int ifindex, bool egress, uint32_t *prog_ids, uint32_t *link_ids, uint32_t max)
{
	return tcx_query(ifindex, egress ? UB_BPF_TCX_EGRESS : UB_BPF_TCX_INGRESS, prog_ids, link_ids, max, NULL);
}

/* Is a program called name attached there? 1, 0 or -errno; *revision: the hook's. */
static int tcx_has(int ifindex, uint32_t type, const char *name, uint64_t *revision)
{
	uint32_t ids[TCX_MAX_PROGS];
	int n = tcx_query(ifindex, type, ids, NULL, TCX_MAX_PROGS, revision);

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(ids[i]);
		bool same;

		if (fd < 0)
			continue;	/* gone since */
		memset(&info, 0, sizeof(info));
		same = !bpf_obj_get_info_by_fd(fd, &info, &len) && !strncmp(info.name, name, sizeof(info.name));
		close(fd);
		if (same)
			return 1;
	}
	return 0;
}

int run_link_tcx(int prog_fd, int ifindex, bool egress, const char *alone)
{
	uint32_t type = egress ? UB_BPF_TCX_EGRESS : UB_BPF_TCX_INGRESS;
	const char *no_tcx = getenv("UBXDP_NO_TCX");

	if (no_tcx && *no_tcx && strcmp(no_tcx, "0"))
		return -EOPNOTSUPP;	/* as a kernel before 6.6 says: how the fallback is tested */
	for (int tries = 0; tries < 10; tries++) {
		struct tcx_link_attr a = { .prog_fd = (uint32_t)prog_fd, .target_ifindex = (uint32_t)ifindex,
					   .attach_type = type };
		int rc;

		if (alone) {
			rc = tcx_has(ifindex, type, alone, &a.expected_revision);
			if (rc > 0)
				return -EEXIST;
			/* A kernel before 6.6 knows neither the attach type nor the command's use. */
			if (rc < 0)
				return rc == -EINVAL ? -EOPNOTSUPP : rc;
		}
		rc = sys_bpf(BPF_LINK_CREATE, &a, sizeof(a));
		if (rc == -ESTALE)
			continue;	/* the hook changed between the query and the attach */
		return rc == -EINVAL ? -EOPNOTSUPP : rc;
	}
	return -ESTALE;
}
