/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Load bpf/ub_endpoint.bpf.c on one device (one instance per device, so each
 * has its own XSKMAP keyed by rx queue), read its counters, detach it.
 */
#ifndef UBXDP_EP_XDP_H
#define UBXDP_EP_XDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ub_endpoint_maps.h"

struct ep_xdp;

/* NULL on failure with one line in err. generic: XDP_FLAGS_SKB_MODE. Refuses
 * to replace a program already attached to the device. Attached through a
 * BPF link: the program goes with ep_xdp_detach() or with the process,
 * however it ends (SIGKILL included). ub_ethertype: 0 steers
 * UBoE; otherwise the device is a UB port and native UB of that EtherType is
 * steered (docs/WIRE.md §5). workers > 1: frames steered to workers
 * (ub_endpoint_maps.h), at most UB_EP_MAX_WORKERS. */
struct ep_xdp *ep_xdp_attach(const char *ifname, bool generic, uint16_t ub_ethertype, uint32_t workers,
			     char *err, size_t errlen);
/* The same in two steps: loaded (its maps ready for the sockets), refused
 * already when another program is on the device; then attached (0, or -1
 * with one line in err). Until then the device steers nothing to it, and
 * the device's lock is held: another endpoint's load waits for the link. */
struct ep_xdp *ep_xdp_load(const char *ifname, bool generic, uint16_t ub_ethertype, uint32_t workers,
			   char *err, size_t errlen);
int ep_xdp_link(struct ep_xdp *x, char *err, size_t errlen);
/* Another program is on x's device (with one line in err): what an EBUSY
 * bind on its queue means when it came meanwhile. */
bool ep_xdp_taken(const struct ep_xdp *x, char *err, size_t errlen);
void ep_xdp_detach(struct ep_xdp *x);
int ep_xdp_xskmap_fd(const struct ep_xdp *x);
/* (IP source, IniRCID) -> worker: where a UTP channel's packets go. */
int ep_xdp_rcid_fd(const struct ep_xdp *x);
int ep_xdp_ifindex(const struct ep_xdp *x);
/* Counters summed over CPUs; 0 on success. */
int ep_xdp_stats(const struct ep_xdp *x, uint64_t out[UB_EP_CNT__MAX]);
/* The same from the counters' map (a program another process loaded). */
int ep_xdp_stats_fd(int stats_fd, uint64_t out[UB_EP_CNT__MAX]);
const char *ep_xdp_counter_name(unsigned id);

#endif
