// SPDX-License-Identifier: BSD-2-Clause
#include "io/ub2e_ports.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

/* By ioctl, not sysfs: under `nsenter --net` /sys is the host's. */
static int dev_mac(int fd, const char *dev, __u8 mac[6])
{
	struct ifreq ifr = {};

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		return -1;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

int ub2e_cfg_ports(struct ub2e_cfg *cfg, const char *ub_dev, const char *ip_dev)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -1;
	rc = dev_mac(fd, ub_dev, cfg->ub_mac) || dev_mac(fd, ip_dev, cfg->ip_mac) ? -1 : 0;
	close(fd);
	return rc;
}

int ub2e_icmp_src_read(struct ub2e_icmp_src *src, const char *dev)
{
	struct ifaddrs *all, *a;
	bool v6_global = false;

	memset(src, 0, sizeof(*src));
	if (getifaddrs(&all))
		return -1;
	for (a = all; a; a = a->ifa_next) {
		if (!a->ifa_addr || strcmp(a->ifa_name, dev))
			continue;
		if (a->ifa_addr->sa_family == AF_INET && !src->ip4) {
			src->ip4 = ((const struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr;
		} else if (a->ifa_addr->sa_family == AF_INET6 && !v6_global) {
			const struct in6_addr *in6 = &((const struct sockaddr_in6 *)a->ifa_addr)->sin6_addr;

			if (!IN6_IS_ADDR_LINKLOCAL(in6))
				v6_global = true;
			else if (src->ip6[0] | src->ip6[1] | src->ip6[2] | src->ip6[3])
				continue;
			memcpy(src->ip6, in6, sizeof(src->ip6));
		}
	}
	freeifaddrs(all);
	return 0;
}
