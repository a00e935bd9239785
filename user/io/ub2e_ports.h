/* SPDX-License-Identifier: BSD-2-Clause */
/* What a UB2E switch's configuration reads from its ports, by device name (ioctl, getifaddrs). */
#ifndef UBXDP_UB2E_PORTS_H
#define UBXDP_UB2E_PORTS_H

#include "ub2e_maps.h"

/* Fill in the ports' MAC addresses (cfg->ub_mac, ip_mac) by device name. Returns 0 or -1 with errno. */
int ub2e_cfg_ports(struct ub2e_cfg *cfg, const char *ub_dev, const char *ip_dev);

/*
 * The source addresses of the ICMP errors the slow path sends itself: the
 * first IPv4 address of ip_dev, and its first global IPv6 address (else its
 * link-local one). A family without an address stays zero. Returns 0 or -1
 * with errno.
 */
int ub2e_icmp_src_read(struct ub2e_icmp_src *src, const char *dev);

#endif
