// SPDX-License-Identifier: BSD-2-Clause
/*
 * One-line warnings about the host around an attached switch: settings that
 * make it forward nothing, or misread frames, without any error.
 */
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "ubctl/ubctl.h"

/* 1 on, 0 off, -1 unknown. /proc/sys/net answers for our network namespace. */
static int sysctl_on(const char *fam, const char *dev)
{
	char p[160];
	FILE *f;
	int v = -1;

	snprintf(p, sizeof(p), "/proc/sys/net/%s/conf/%s/forwarding", fam, dev);
	f = fopen(p, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

bool ub2e_rx_vlan_offload(const char *dev)
{
	struct ethtool_value ev = { .cmd = ETHTOOL_GFLAGS };
	struct ifreq ifr = {};
	bool on = false;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return false;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = (void *)&ev;
	if (!ioctl(fd, SIOCETHTOOL, &ifr))
		on = ev.data & ETH_FLAG_RXVLAN;
	close(fd);
	return on;
}

bool ub2e_have_rx_vlan_kfunc(void)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool have;

	if (!vmlinux)
		return false;
	have = btf__find_by_name_kind(vmlinux, "bpf_xdp_metadata_rx_vlan_tag", BTF_KIND_FUNC) > 0;
	btf__free(vmlinux);
	return have;
}

void ub2e_warn_host(const char *ub_dev, const char *ip_dev, bool vlan_meta, bool generic)
{
	static const struct { const char *fam, *name; } fams[] = { { "ipv4", "IPv4" }, { "ipv6", "IPv6" } };

	/* bpf_fib_lookup checks forwarding on the receiving device. */
	for (int i = 0; i < 2; i++) {
		bool ub_off = sysctl_on(fams[i].fam, ub_dev) == 0, ip_off = sysctl_on(fams[i].fam, ip_dev) == 0;

		if (ub_off || ip_off)
			warnx_("%s forwarding is off on %s%s%s: XDP cannot forward %s (sysctl -w net.%s.conf.all.forwarding=1)",
			       fams[i].name, ub_off ? ub_dev : "", ub_off && ip_off ? " and " : "", ip_off ? ip_dev : "",
			       fams[i].name, fams[i].fam);
	}
	if (vlan_meta)
		printf("ub2e: %s strips VLAN tags into offload metadata (rx-vlan-offload on): the switch reads them "
		       "with bpf_xdp_metadata_rx_vlan_tag(), its program bound to %s (counted as vlan_from_metadata)\n",
		       ip_dev, ip_dev);
	else if (ub2e_rx_vlan_offload(ip_dev))
		warnx_("%s strips VLAN tags into offload metadata (rx-vlan-offload on): XDP sees them only through "
		       "bpf_xdp_metadata_rx_vlan_tag(), %s; ethtool -K %s rxvlan off keeps them in the frame",
		       ip_dev, generic ? "not in generic XDP" : "which this kernel lacks (6.8+)", ip_dev);
}
