// SPDX-License-Identifier: BSD-2-Clause
#include "ub2e_tc.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ubctl.h"

static int tc_one(unsigned ifindex, enum bpf_tc_attach_point where, int prog_fd)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex, .attach_point = where);
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = UB2E_TC_HANDLE, .priority = UB2E_TC_PRIO, .prog_fd = prog_fd);
	int rc = bpf_tc_hook_create(&hook);

	if (rc && rc != -EEXIST)
		return rc;
	return bpf_tc_attach(&hook, &o);
}

static __u32 fd_prog_id(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* 1 detached, 0 nothing of ours there, -1 failed. */
static int tc_one_off(unsigned ifindex, enum bpf_tc_attach_point where, int prog_fd)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex, .attach_point = where);
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = UB2E_TC_HANDLE, .priority = UB2E_TC_PRIO);
	LIBBPF_OPTS(bpf_tc_opts, d, .handle = UB2E_TC_HANDLE, .priority = UB2E_TC_PRIO);
	char name[IF_NAMESIZE] = "?";

	if (bpf_tc_query(&hook, &q))
		return 0;
	if_indextoname(ifindex, name);
	if (q.prog_id != fd_prog_id(prog_fd)) {
		warnx_("%s: TC filter %#x runs program %u, not this switch's: left alone", name,
		       UB2E_TC_HANDLE, q.prog_id);
		return 0;
	}
	if (bpf_tc_detach(&hook, &d)) {
		warnx_("detach TC %s from %s: %s", where == BPF_TC_INGRESS ? "ingress" : "egress", name,
		       strerror(errno));
		return -1;
	}
	return 1;
}

int ub2e_tc_attach(unsigned ifindex, int ingress_fd, int egress_fd, const char *dir, const char *side, bool *tcx)
{
	char in[64], eg[64];
	int rc;

	/* tcx links where the kernel has them (6.6+), beside other programs on the hook. */
	snprintf(in, sizeof(in), LINK_PIN_PREFIX "tc_ingress_%s", side);
	snprintf(eg, sizeof(eg), LINK_PIN_PREFIX "tc_egress_%s", side);
	rc = link_tcx_pinned(ingress_fd, ifindex, false, NULL, dir, in);
	*tcx = rc != -EOPNOTSUPP;
	if (*tcx)
		return rc ? rc : link_tcx_pinned(egress_fd, ifindex, true, NULL, dir, eg);
	rc = tc_one(ifindex, BPF_TC_INGRESS, ingress_fd);
	if (rc)
		return rc;
	rc = tc_one(ifindex, BPF_TC_EGRESS, egress_fd);
	if (rc)
		tc_one_off(ifindex, BPF_TC_INGRESS, ingress_fd);
	return rc;
}

int ub2e_tc_detach(unsigned ifindex, int ingress_fd, int egress_fd)
{
	return (tc_one_off(ifindex, BPF_TC_INGRESS, ingress_fd) < 0) +
	       (tc_one_off(ifindex, BPF_TC_EGRESS, egress_fd) < 0);
}
