// SPDX-License-Identifier: BSD-2-Clause
/*
 * Print what user/endpoint/nexthop.c resolves for an address:
 *   ep_nexthop ADDR [TIMEOUT_MS]  ->  "dev IF via ADDR src ADDR mac MAC"
 * Exit 0 when resolved, 1 with one line on stderr otherwise.
 */
#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint/nexthop.h"

int main(int argc, char **argv)
{
	struct ep_nexthop nh;
	struct nl *rt;
	uint8_t dst[16] = { 0 };
	char err[256], via[INET6_ADDRSTRLEN], src[INET6_ADDRSTRLEN], ifn[IF_NAMESIZE] = "?";
	uint8_t ver;
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: ep_nexthop ADDR [TIMEOUT_MS]\n");
		return 2;
	}
	ver = strchr(argv[1], ':') ? 6 : 4;
	if (inet_pton(ver == 6 ? AF_INET6 : AF_INET, argv[1], dst) != 1) {
		fprintf(stderr, "ep_nexthop: bad address %s\n", argv[1]);
		return 2;
	}
	rt = nl_open_route(err, sizeof(err));
	rc = rt ? ep_nexthop_resolve(rt, ver, dst, 0, argc > 2 ? atoi(argv[2]) : 2000, &nh, err, sizeof(err)) : -1;
	nl_close(rt);
	if (rc) {
		fprintf(stderr, "ep_nexthop: %s\n", err);
		return 1;
	}
	inet_ntop(ver == 6 ? AF_INET6 : AF_INET, nh.via, via, sizeof(via));
	inet_ntop(ver == 6 ? AF_INET6 : AF_INET, nh.src_ip, src, sizeof(src));
	if_indextoname((unsigned)nh.ifindex, ifn);
	printf("dev %s via %s%s src %s mac %02x:%02x:%02x:%02x:%02x:%02x\n", ifn, via,
	       nh.gateway ? " (gateway)" : "", src, nh.dst_mac[0], nh.dst_mac[1], nh.dst_mac[2],
	       nh.dst_mac[3], nh.dst_mac[4], nh.dst_mac[5]);
	return 0;
}
