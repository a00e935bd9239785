/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Attaching for the length of a run: through a BPF link that only this
 * process holds, so the kernel detaches the program when the process ends,
 * however it ends (SIGKILL included); closing the link's fd detaches it
 * earlier. Roles that must outlive the command (ubctl's UB2E switch, WPS
 * ingress and boundary) pin the link (user/ubctl/link.c).
 *
 * XDP links are in every kernel this project runs on (5.9 and later). tcx
 * links (TC ingress/egress) came with 6.6: before that run_link_tcx() says
 * -EOPNOTSUPP and the caller decides (ubcaqm falls back to a clsact filter).
 */
#ifndef UBXDP_RUN_LINK_H
#define UBXDP_RUN_LINK_H

#include <stdbool.h>
#include <stdint.h>

/* uapi of kernel 6.6 (enum bpf_attach_type); libbpf 1.1 and Debian 12's
 * headers predate it, so the values are named here, once. */
#define UB_BPF_TCX_INGRESS	46
#define UB_BPF_TCX_EGRESS	47

/*
 * An XDP link on ifindex, native (XDP_FLAGS_DRV_MODE) or generic
 * (XDP_FLAGS_SKB_MODE). The link's fd, or -errno: -EBUSY or -EEXIST when
 * another program is attached (by a link or not), -EOPNOTSUPP when the
 * device has no native XDP. close() the fd to detach.
 */
int run_link_xdp(int prog_fd, int ifindex, bool generic);

/*
 * A tcx link at ifindex's ingress or egress, after the programs already
 * there. alone: refuse (-EEXIST) when a program of that name is already
 * attached at that hook, checked and attached atomically (the hook's
 * revision). The link's fd, or -errno; -EOPNOTSUPP: the kernel has no tcx
 * (or UBXDP_NO_TCX=1 is in the environment, so that tests can take a
 * caller's fallback on a kernel that has it).
 */
int run_link_tcx(int prog_fd, int ifindex, bool egress, const char *alone);

/*
 * The programs (and their links: 0 for none) attached by tcx at ifindex's
 * ingress or egress, at most max of each. Their number, or -errno (-EINVAL:
 * a kernel without tcx).
 */
int run_link_tcx_query(int ifindex, bool egress, uint32_t *prog_ids, uint32_t *link_ids, uint32_t max);

#endif
