/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where a UBoE packet to an IP address leaves and to which MAC: the kernel's
 * route (device, gateway, preferred source) and neighbour tables, read over
 * rtnetlink (nl.h). AF_XDP bypasses the kernel's output path, so nothing
 * else would resolve or refresh the neighbour: when the entry is missing,
 * failed or stale, a probe (NTF_USE) asks the kernel to, exactly as if it had
 * a packet to send.
 */
#ifndef UBXDP_NEXTHOP_H
#define UBXDP_NEXTHOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/nl.h"

struct ep_nexthop {
	uint8_t ip_ver;		/* 4 or 6 */
	int ifindex;		/* output device */
	uint8_t src_ip[16];	/* the route's preferred source */
	uint8_t via[16];	/* gateway, or the destination when on-link */
	bool gateway;
	uint8_t src_mac[6];	/* the device's */
	uint8_t dst_mac[6];	/* the neighbour's */
	uint16_t nud_state;	/* NUD_* of the neighbour entry when found */
	uint32_t mtu;		/* the device's MTU */
};

/*
 * Route and neighbour for `dst` (IPv4 in the first 4 bytes when ip_ver 4),
 * by any device (oif 0) or by device oif (the kernel's `ip route get DST oif
 * DEV`: when nothing routes by it, it guesses the peer on link, no gateway),
 * asked over rt (nl_open_route). Returns 0 with nh filled and dst_mac valid;
 * -EAGAIN when the neighbour is not resolved yet (resolution was triggered;
 * route fields are filled); another -errno with one line in err (no route,
 * local address, ...).
 */
int ep_nexthop_lookup(struct nl *rt, uint8_t ip_ver, const uint8_t dst[16], int oif, struct ep_nexthop *nh,
		      char *err, size_t errlen);

/* The MAC and MTU of device nh->ifindex into nh. 0 or -errno with err. */
int ep_nexthop_dev_info(struct nl *rt, struct ep_nexthop *nh, char *err, size_t errlen);

/*
 * ep_nexthop_lookup() until resolved or timeout_ms passed (-EHOSTUNREACH):
 * after each unresolved lookup it sleeps until the neighbour table changes
 * (subscribed before the first lookup, so no answer comes unseen).
 */
int ep_nexthop_resolve(struct nl *rt, uint8_t ip_ver, const uint8_t dst[16], int oif, int timeout_ms,
		       struct ep_nexthop *nh, char *err, size_t errlen);

#endif
