// SPDX-License-Identifier: BSD-2-Clause
#include "wps/egress_peers.h"
#include "lib/parse_num.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int same_addr(const struct wps_eg_peer *a, const uint8_t *addr)
{
	return !memcmp(a->addr, addr, 16);
}

/* Index of the first entry with this address, or -1. */
static int first_with(const struct wps_eg_peers *s, unsigned upto, const uint8_t *addr)
{
	for (unsigned i = 0; i < upto; i++)
		if (same_addr(&s->e[i], addr))
			return (int)i;
	return -1;
}

unsigned wps_eg_peers_count(const struct wps_eg_peers *s)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->n; i++)
		n += first_with(s, i, s->e[i].addr) < 0;
	return n;
}

unsigned wps_eg_peer_index(const struct wps_eg_peers *s, unsigned i)
{
	int first = first_with(s, i, s->e[i].addr);
	unsigned n = 0;

	if (first < 0)
		first = (int)i;
	for (int k = 0; k < first; k++)
		n += first_with(s, (unsigned)k, s->e[k].addr) < 0;
	return n;
}

/* Map entries the set needs: an address marker per address, an entry per (address, ID or any). */
static unsigned nkeys(const struct wps_eg_peers *s)
{
	return wps_eg_peers_count(s) + s->n;
}

int wps_eg_peers_parse(struct wps_eg_peers *s, const char *list, char *err, size_t errlen)
{
	char buf[4096], *save, *tok;
	unsigned n0 = s->n;

	if (!list || !*list || strlen(list) >= sizeof(buf)) {
		snprintf(err, errlen, "--peer takes ADDR[=ID][,ADDR[=ID]...]");
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct wps_eg_peer p = { .node = -1 };
		struct in6_addr a;
		char *eq = strchr(tok, '=');

		if (eq) {
			unsigned long v;

			*eq = '\0';
			if (parse_uint(eq + 1, (size_t)-1, 65535, &v)) {
				snprintf(err, errlen, "--peer %s=%s: the Ingress Node ID takes 0-65535", tok, eq + 1);
				goto undo;
			}
			p.node = (int32_t)v;
		}
		if (inet_pton(AF_INET6, tok, &a) != 1 || IN6_IS_ADDR_UNSPECIFIED(&a) || IN6_IS_ADDR_MULTICAST(&a)) {
			snprintf(err, errlen, "--peer %s: not an IPv6 unicast address", tok);
			goto undo;
		}
		memcpy(p.addr, &a, 16);
		if (s->n == WPS_EG_MAX_PEER_KEYS) {
			snprintf(err, errlen, "--peer: more than %d entries", WPS_EG_MAX_PEER_KEYS);
			goto undo;
		}
		s->e[s->n++] = p;
		if (wps_eg_peers_count(s) > WPS_EG_MAX_PEERS) {
			snprintf(err, errlen, "--peer: more than %d peer addresses", WPS_EG_MAX_PEERS);
			goto undo;
		}
		if (nkeys(s) > WPS_EG_MAX_PEER_KEYS) {
			snprintf(err, errlen, "--peer: more than %d addresses and IDs in all", WPS_EG_MAX_PEER_KEYS);
			goto undo;
		}
	}
	if (s->n == n0) {
		snprintf(err, errlen, "--peer '%s' names no address", list);
		return -1;
	}
	return 0;
undo:
	s->n = n0;
	return -1;
}

unsigned wps_eg_peers_keys(const struct wps_eg_peers *s, struct wps_eg_peer_key *keys, uint32_t *idx)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->n; i++) {
		uint32_t p = wps_eg_peer_index(s, i);

		if (first_with(s, i, s->e[i].addr) < 0) {
			memset(&keys[n], 0, sizeof(keys[n]));
			memcpy(keys[n].addr, s->e[i].addr, 16);
			keys[n].node = WPS_EG_PEER_ADDR;
			idx[n++] = p;
		}
		memset(&keys[n], 0, sizeof(keys[n]));
		memcpy(keys[n].addr, s->e[i].addr, 16);
		keys[n].node = s->e[i].node < 0 ? WPS_EG_PEER_ANY_NODE : (uint32_t)s->e[i].node;
		idx[n++] = p;
	}
	return n;
}

void wps_eg_peer_name(const struct wps_eg_peers *s, unsigned p, char *buf, size_t len)
{
	if (len)
		buf[0] = '\0';
	for (unsigned i = 0; i < s->n; i++)
		if (wps_eg_peer_index(s, i) == p) {
			inet_ntop(AF_INET6, s->e[i].addr, buf, (socklen_t)len);
			return;
		}
}
