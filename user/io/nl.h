/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Netlink on libmnl: the kernel's route, neighbour and link tables
 * (rtnetlink), veth pairs, and device features through ethtool's generic
 * netlink family, instead of running ip(8) and ethtool(8); and a socket
 * subscribed to the tables' changes for a program's own poll loop.
 *
 * A socket acts in the network namespace of the thread that opened it,
 * whichever that is and whatever the thread does later: a caller that
 * enters a namespace (setns, unshare) opens its socket there, and may go
 * back at once. Interface indexes and names are that namespace's.
 *
 * Every request returns 0 or -errno; nl_error() then gives one line of what
 * the kernel said: the errno's text and its extended ACK message (extack),
 * e.g. "Numerical result out of range (MTU greater than device maximum)".
 * Not thread-safe: one socket per thread.
 */
#ifndef UBXDP_NL_H
#define UBXDP_NL_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nl;

/* Requests over rtnetlink. NULL with one line in err. */
struct nl *nl_open_route(char *err, size_t errlen);
/* Requests to ethtool's generic netlink family (its id resolved by name:
 * CTRL_CMD_GETFAMILY). NULL with one line in err (no such family: a kernel
 * before 5.6, or without CONFIG_ETHTOOL_NETLINK). */
struct nl *nl_open_ethtool(char *err, size_t errlen);
void nl_close(struct nl *s);
/* The last failed request's line (empty after a success). */
const char *nl_error(const struct nl *s);

/* ---- routes and neighbours ---------------------------------------------------------- */

struct nl_route {
	uint8_t type;		/* RTN_UNICAST, RTN_LOCAL, ... */
	int oif;		/* output device, 0 when none */
	bool has_gateway, has_prefsrc;
	uint8_t gateway[16];	/* IPv4 in the first 4 bytes */
	uint8_t prefsrc[16];
	uint32_t mtu;		/* RTAX_MTU: the route's mtu, or a path MTU the kernel
				 * learned (ICMP); 0 when it has neither */
};

/* The route the kernel takes to dst (family AF_INET or AF_INET6), by device
 * oif when not 0: `ip route get DST [oif DEV]`. */
int nl_route_get(struct nl *s, int family, const void *dst, int oif, struct nl_route *r);

struct nl_neigh {
	uint16_t state;		/* NUD_* */
	bool has_lladdr;
	uint8_t lladdr[6];
	uint32_t confirmed_ms;	/* since the neighbour last answered; UINT32_MAX: unknown */
};

/* dst's entry in ifindex's neighbour table; -ENOENT when there is none. */
int nl_neigh_get(struct nl *s, int family, int ifindex, const void *dst, struct nl_neigh *n);
/*
 * Ask the kernel to resolve dst on ifindex, or confirm a stale entry: NTF_USE
 * runs what a packet waiting for the neighbour would (an entry made when
 * missing, ARP or ND sent). For a sender the kernel never sees (AF_XDP),
 * nothing else would.
 */
int nl_neigh_probe(struct nl *s, int family, int ifindex, const void *dst);

/* An existing entry of dst on ifindex into state: NUD_PROBE has the kernel
 * confirm it now, by a unicast probe. -ENOENT when there is none. */
int nl_neigh_set_state(struct nl *s, int family, int ifindex, const void *dst, uint16_t state);

/* ---- links ------------------------------------------------------------------------- */

struct nl_link {
	int ifindex;
	char name[IF_NAMESIZE];
	unsigned flags;		/* IFF_* */
	uint32_t mtu;
	uint8_t addr[6];	/* the first addr_len bytes of its hardware address */
	unsigned addr_len;
};

/* A device by index, or by name when ifindex is 0. -ENODEV when none. */
int nl_link_get(struct nl *s, int ifindex, const char *name, struct nl_link *l);

/* What nl_link_set changes: up (1), down (0), or leave (-1); mtu when not 0;
 * the hardware address when addr is not NULL. One request: all or nothing. */
struct nl_link_change {
	int up;
	uint32_t mtu;
	const uint8_t *addr;
};
int nl_link_set(struct nl *s, int ifindex, const struct nl_link_change *c);
/* A device by index, or by name when ifindex is 0. */
int nl_link_del(struct nl *s, int ifindex, const char *name);

/* A veth pair name <-> peer, both of MTU mtu (0: the kernel's) and with
 * `queues` tx and rx queues each (0: the kernel's), in the socket's
 * namespace; -EEXIST when either name is taken. */
int nl_veth_add(struct nl *s, const char *name, const char *peer, uint32_t mtu, unsigned queues);

/* ---- ethtool features -------------------------------------------------------------- */

/* A feature by the kernel's name (`ethtool -k` lists them: tx-tcp-segmentation,
 * rx-gro, ...), and whether it is wanted on. */
struct nl_feature {
	const char *name;
	bool on;
};

/*
 * ETHTOOL_MSG_FEATURES_SET: the features f[0..n) of dev as wanted
 * (ETHTOOL_A_FEATURES_WANTED, the others left as they are). -EOPNOTSUPP,
 * with the names in nl_error(), when the device kept any of them otherwise
 * (a fixed feature, or one its driver refused).
 */
int nl_features_set(struct nl *s, const char *dev, const struct nl_feature *f, unsigned n);

/* The names of dev's active features (`ethtool -k` shows them on), each to fn. */
int nl_features_active(struct nl *s, const char *dev, void (*fn)(void *ctx, const char *name), void *ctx);

/* ---- changes ----------------------------------------------------------------------- */

/* A socket subscribed to rtnetlink groups (RTNLGRP_*, n of them), nonblocking,
 * for a poll loop: its descriptor is nl_fd(). NULL with one line in err. */
struct nl *nl_open_monitor(const unsigned *groups, unsigned n, char *err, size_t errlen);
int nl_fd(const struct nl *s);

struct nl_event {
	uint16_t type;		/* RTM_NEWNEIGH, RTM_DELROUTE, ... */
	uint8_t family;		/* AF_INET, AF_INET6, AF_BRIDGE (fdb), AF_UNSPEC (links) */
	int ifindex;		/* the device a link or neighbour is on; 0 for the others */
};

typedef void (*nl_event_fn)(void *ctx, const struct nl_event *ev);

/*
 * Every change queued on a monitor socket, each to fn (NULL: only counted),
 * without waiting.
 * Returns how many, or -ENOBUFS when the kernel dropped some (its queue was
 * full): the caller cannot tell which, and must take every table as changed.
 */
int nl_monitor_read(struct nl *s, nl_event_fn fn, void *ctx);

#endif
