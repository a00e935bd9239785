/* SPDX-License-Identifier: BSD-2-Clause */
/* ubctl: the UB2E slow path's TC programs on a port (bpf/ub2e_tc.bpf.c). */
#ifndef UBCTL_UB2E_TC_H
#define UBCTL_UB2E_TC_H

/* clsact handle and priority of the switch's filters, so detach finds only its own. */
#define UB2E_TC_HANDLE	0xb2e
#define UB2E_TC_PRIO	0xb2e

/* Attach ingress and egress on ifindex (clsact created if missing). 0 or -errno; nothing left on failure. */
int ub2e_tc_attach(unsigned ifindex, int ingress_fd, int egress_fd);
/* Detach the switch's filters from ifindex where they run `ingress_fd`/`egress_fd`. Returns failures. */
int ub2e_tc_detach(unsigned ifindex, int ingress_fd, int egress_fd);

#endif
