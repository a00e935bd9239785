// SPDX-License-Identifier: BSD-2-Clause
#include "endpoint/nexthop.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include "lib/clock.h"

static int family_of(uint8_t ver)
{
	return ver == 6 ? AF_INET6 : AF_INET;
}

static int route_get(struct nl *rt, uint8_t ver, const uint8_t dst[16], int oif, struct ep_nexthop *nh,
		     char *err, size_t errlen)
{
	const size_t alen = ver == 6 ? 16 : 4;
	struct nl_route r;
	int rc = nl_route_get(rt, family_of(ver), dst, oif, &r);

	if (rc) {
		char a_s[INET6_ADDRSTRLEN];

		inet_ntop(family_of(ver), dst, a_s, sizeof(a_s));
		snprintf(err, errlen, "no route to %s: %s", a_s, nl_error(rt));
		return rc;
	}
	if (r.type == RTN_LOCAL) {
		snprintf(err, errlen, "the peer address is one of this host's own");
		return -EADDRINUSE;
	}
	if (r.type != RTN_UNICAST) {
		snprintf(err, errlen, "route to the peer is not unicast (type %u)", r.type);
		return -ENETUNREACH;
	}
	if (!r.oif) {
		snprintf(err, errlen, "route to the peer has no output device");
		return -ENETUNREACH;
	}
	memset(nh, 0, sizeof(*nh));
	nh->ip_ver = ver;
	nh->ifindex = r.oif;
	nh->gateway = r.has_gateway;
	memcpy(nh->via, r.has_gateway ? r.gateway : dst, alen);
	if (r.has_prefsrc)
		memcpy(nh->src_ip, r.prefsrc, alen);
	return 0;
}

int ep_nexthop_dev_info(struct nl *rt, struct ep_nexthop *nh, char *err, size_t errlen)
{
	struct nl_link l;
	int rc = nl_link_get(rt, nh->ifindex, NULL, &l);

	if (!rc && l.addr_len != 6)
		snprintf(err, errlen, "output device %s has no Ethernet address", l.name);
	else if (rc)
		snprintf(err, errlen, "output device %d: %s", nh->ifindex, nl_error(rt));
	if (rc || l.addr_len != 6)
		return rc ? rc : -EAFNOSUPPORT;
	memcpy(nh->src_mac, l.addr, 6);
	nh->mtu = l.mtu;
	return 0;
}

/* Returns 0 with the MAC, -ENOENT when there is no usable entry. */
static int neigh_get(struct nl *rt, struct ep_nexthop *nh)
{
	struct nl_neigh n;

	nh->nud_state = NUD_NONE;
	if (nl_neigh_get(rt, family_of(nh->ip_ver), nh->ifindex, nh->via, &n))
		return -ENOENT;
	nh->nud_state = n.state;
	if (!n.has_lladdr || !(n.state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE |
					  NUD_PERMANENT | NUD_NOARP)))
		return -ENOENT;
	memcpy(nh->dst_mac, n.lladdr, 6);
	return 0;
}

int ep_nexthop_lookup(struct nl *rt, uint8_t ip_ver, const uint8_t dst[16], int oif, struct ep_nexthop *nh,
		      char *err, size_t errlen)
{
	int rc;

	if (ip_ver != 4 && ip_ver != 6) {
		snprintf(err, errlen, "IP version %u", ip_ver);
		return -EINVAL;
	}
	rc = route_get(rt, ip_ver, dst, oif, nh, err, errlen);
	if (!rc)
		rc = ep_nexthop_dev_info(rt, nh, err, errlen);
	if (rc)
		return rc;
	rc = neigh_get(rt, nh);
	/* A stale entry still names the right MAC almost always, but nobody
	 * else will confirm it while our traffic bypasses the kernel. A probe
	 * that fails changes nothing we could act on: the lookup says what is. */
	if (rc || (nh->nud_state & NUD_STALE))
		nl_neigh_probe(rt, family_of(ip_ver), nh->ifindex, nh->via);
	if (rc) {
		snprintf(err, errlen, "neighbour not resolved yet");
		return -EAGAIN;
	}
	return 0;
}

int ep_nexthop_resolve(struct nl *rt, uint8_t ip_ver, const uint8_t dst[16], int oif, int timeout_ms,
		       struct ep_nexthop *nh, char *err, size_t errlen)
{
	static const unsigned groups[] = { RTNLGRP_NEIGH };
	struct nl *mon = nl_open_monitor(groups, 1, err, errlen);
	const uint64_t t0 = ub_mono_ns();
	int rc;

	if (!mon)
		return -EIO;
	for (;;) {
		struct pollfd pfd = { .fd = nl_fd(mon), .events = POLLIN };
		int64_t left;

		rc = ep_nexthop_lookup(rt, ip_ver, dst, oif, nh, err, errlen);
		left = timeout_ms - (int64_t)(ub_mono_ns() - t0) / 1000000;
		if (rc != -EAGAIN)
			break;
		if (left <= 0) {
			char a_s[INET6_ADDRSTRLEN];

			inet_ntop(family_of(ip_ver), nh->via, a_s, sizeof(a_s));
			snprintf(err, errlen, "next hop %s does not answer %s", a_s,
				 ip_ver == 6 ? "neighbour solicitations" : "ARP");
			rc = -EHOSTUNREACH;
			break;
		}
		/* Any change of a neighbour entry (ours resolved, or failed and
		 * to be probed again) is worth another lookup; the others cost one. */
		if (poll(&pfd, 1, (int)left) > 0)
			nl_monitor_read(mon, NULL, NULL);
	}
	nl_close(mon);
	return rc;
}
