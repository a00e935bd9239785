/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The WPS egress's peers (`ubctl wps egress run --peer ADDR[=ID][,...]`): the
 * outer source addresses of the ingress nodes it serves, each with the
 * Ingress Node IDs it may use (none given: any). Pure parsing, and the
 * entries of the XDP program's wps_eg_peers map (headers/wps_egress_maps.h).
 */
#ifndef WPS_EGRESS_PEERS_H
#define WPS_EGRESS_PEERS_H

#include <stddef.h>
#include <stdint.h>

#include "wps_egress_maps.h"

struct wps_eg_peer {
	uint8_t addr[16];
	int32_t node;		/* Ingress Node ID, or -1: any */
};

struct wps_eg_peers {
	struct wps_eg_peer e[WPS_EG_MAX_PEER_KEYS];
	unsigned n;
};

/*
 * Append one --peer value (a comma-separated list of ADDR or ADDR=ID) to s.
 * Returns 0, or -1 with one line in err (nothing of the value appended):
 * not an IPv6 unicast address, an ID outside 0-65535, more than
 * WPS_EG_MAX_PEERS addresses or the map's WPS_EG_MAX_PEER_KEYS entries.
 */
int wps_eg_peers_parse(struct wps_eg_peers *s, const char *list, char *err, size_t errlen);

/* Distinct addresses: the peers. */
unsigned wps_eg_peers_count(const struct wps_eg_peers *s);

/* Peer index of the address of entry i: its rank among distinct addresses by first appearance. */
unsigned wps_eg_peer_index(const struct wps_eg_peers *s, unsigned i);

/*
 * The map's entries (at most WPS_EG_MAX_PEER_KEYS): for every address a
 * WPS_EG_PEER_ADDR entry, and an entry per ID given, or WPS_EG_PEER_ANY_NODE.
 * Returns how many were written.
 */
unsigned wps_eg_peers_keys(const struct wps_eg_peers *s, struct wps_eg_peer_key *keys, uint32_t *idx);

/* "ADDR" of peer index p, for statistics ("" if none). */
void wps_eg_peer_name(const struct wps_eg_peers *s, unsigned p, char *buf, size_t len);

#endif
