/* SPDX-License-Identifier: BSD-2-Clause */
/* ubctl: the UB2E slow path's TC programs on a port (bpf/ub2e_tc.bpf.c). */
#ifndef UBCTL_UB2E_TC_H
#define UBCTL_UB2E_TC_H

#include <stdbool.h>

/* clsact handle and priority of the switch's filters, so detach finds only its own. */
#define UB2E_TC_HANDLE	0xb2e
#define UB2E_TC_PRIO	0xb2e

/*
 * Attach ingress and egress on ifindex: tcx links pinned in dir as
 * link_tc_{ingress,egress}_SIDE where the kernel has tcx (*tcx true), else
 * clsact filters (clsact created if missing). 0 or -errno; on failure no
 * filter is left, a tcx link made may be (link_detach_pinned(dir) takes it).
 */
int ub2e_tc_attach(unsigned ifindex, int ingress_fd, int egress_fd, const char *dir, const char *side, bool *tcx);
/* Detach the switch's filters from ifindex where they run `ingress_fd`/`egress_fd`. Returns failures. */
int ub2e_tc_detach(unsigned ifindex, int ingress_fd, int egress_fd);

#endif
