// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl wps ingress: the netdev plumbing of the segmentation detour (the
 * veth pair wpsgN -> wpsgNp, GSO off on wpsgN, RPS on wpsgNp) and of DEV's
 * offloads (--offloads-off, and putting them back at detach), through ip(8),
 * ethtool(8), the ethtool ioctl and sysfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wps/wps_cfg.h"
#include "wps/wps_pins.h"
#include "ubctl/wps_ingress_int.h"

/* Run a command (ip, ethtool) quietly; returns its exit status, -1 if it could not run. */
static int run_quiet(char *const argv[])
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {	/* quiet when it opens; runs either way */
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int wps_dev_info(const char *dev, unsigned char mac[6], unsigned *mtu)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rc = 0;

	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (mac) {
		rc |= ioctl(fd, SIOCGIFHWADDR, &ifr);
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	}
	if (mtu) {
		rc |= ioctl(fd, SIOCGIFMTU, &ifr);
		*mtu = (unsigned)ifr.ifr_mtu;
	}
	close(fd);
	return rc ? -1 : 0;
}

/* ---- DEV's offloads ------------------------------------------------------------ */

/*
 * Off through ethtool(8) by name (tso, gso, gro, each with its
 * sub-features); back through ETHTOOL_SFEATURES with the exact bits that
 * changed, so a TSO sub-feature that was off before attach stays off after
 * detach (ethtool -K DEV tso on would turn every one on).
 */
static const char *const offloads[] = { "tso", "gso", "gro" };

int wps_offloads_off(const char *dev)
{
	char *argv[12] = { "ethtool", "-K", (char *)dev };
	int n = 3;

	for (size_t i = 0; i < sizeof(offloads) / sizeof(offloads[0]); i++) {
		argv[n++] = (char *)offloads[i];
		argv[n++] = "off";
	}
	argv[n] = NULL;
	return run_quiet(argv);
}

static int ethtool_ioctl(const char *dev, void *data)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = data;
	rc = ioctl(fd, SIOCETHTOOL, &ifr);
	close(fd);
	return rc;
}

int wps_features_get(const char *dev, __u32 *req)
{
	/* struct ethtool_gfeatures and its blocks, without a flexible member inside a struct */
	__u32 q[2 + 4 * WPS_IN_FEAT_WORDS] = { ETHTOOL_GFEATURES, WPS_IN_FEAT_WORDS };

	if (ethtool_ioctl(dev, q) < 0 || q[1] != WPS_IN_FEAT_WORDS)
		return -1;
	for (int i = 0; i < WPS_IN_FEAT_WORDS; i++)
		req[i] = q[2 + 4 * i + 1];	/* { available, requested, active, never_changed } */
	return 0;
}

int wps_features_restore(const char *dev, const struct wps_in_cfg *cfg)
{
	__u32 q[2 + 2 * WPS_IN_FEAT_WORDS] = { ETHTOOL_SFEATURES, WPS_IN_FEAT_WORDS };
	bool any = false;

	if (!(cfg->dev_offloads & WPS_IN_OFFL_SAVED))
		return 0;
	for (int i = 0; i < WPS_IN_FEAT_WORDS; i++) {
		q[2 + 2 * i] = cfg->dev_feat_changed[i];	/* valid */
		q[2 + 2 * i + 1] = cfg->dev_feat_before[i];	/* requested */
		any |= cfg->dev_feat_changed[i] != 0;
	}
	/* >= 0: done (a positive value flags features the device could not take as asked) */
	return any && ethtool_ioctl(dev, q) < 0 ? -1 : 0;
}

/* The devices of the detour for DEV (ifindex). */
static void seg_names(unsigned ifindex, char *a, char *b)
{
	snprintf(a, IF_NAMESIZE, WPS_SEG_FMT, ifindex);
	snprintf(b, IF_NAMESIZE, WPS_SEG_PEER_FMT, ifindex);
}

/* Link-local IPv6 on the detour would send its MLD reports through it, and out of DEV. */
static void ipv6_off(const char *dev)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", dev);
	f = fopen(path, "w");	/* absent: no IPv6 in this kernel or namespace */
	if (f) {
		fputs("1", f);
		fclose(f);
	}
}

/* Does /sys show this namespace's DEV? Its MAC (random for a veth) read both ways. */
static bool sysfs_shows_ours(const char *dev)
{
	unsigned char mac[6];
	char path[96], want[18], got[32] = "";
	FILE *f;

	if (wps_dev_info(dev, mac, NULL))
		return false;
	snprintf(want, sizeof(want), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
	snprintf(path, sizeof(path), "/sys/class/net/%s/address", dev);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(got, sizeof(got), f))
		got[0] = 0;
	fclose(f);
	return !strncmp(got, want, strlen(want));
}

/*
 * Writes S to DEV's sysfs FILE as this network namespace sees it. /sys shows
 * the devices of the namespace that mounted it, which need not be ours
 * (nsenter --net keeps the host's), so a child mounts a sysfs of its own in
 * a mount namespace of its own, as ip netns exec does, and writes there;
 * without CAP_SYS_ADMIN (a container), /sys as it is if it shows our DEV.
 */
static int write_dev_sysfs(const char *dev, const char *file, const char *s)
{
	char path[128];
	int status;
	pid_t pid;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", dev, file);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		FILE *f;

		if ((unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) ||
		     mount("sysfs", "/sys", "sysfs", 0, NULL)) && !sysfs_shows_ours(dev))
			_exit(1);
		f = fopen(path, "w");
		if (!f)
			_exit(1);
		_exit(fputs(s, f) < 0 || fclose(f) ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/*
 * RPS over the online CPUs on the detour's receiving end (its one queue):
 * veth hands a packet to the backlog of the CPU its flow hashes to, not of
 * the CPU that sent it, so one flow's packets are decided and sent by one
 * CPU at a time, in the order they entered the detour, even when they enter
 * from several CPUs at once. Without it, two CPUs would decide and transmit
 * one flow's packets together and E could leave before the group's others.
 * The mask is written as the kernel prints it: 32-bit words, high first.
 */
static int seg_rps(const char *dev)
{
	__u32 words[64] = {};
	char buf[640], *p;	/* 64 words of "%08x," */
	int nwords = 0, n;
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");

	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	while (p && *p >= '0' && *p <= '9') {	/* "0-3,6,8-9\n" */
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		if (hi < lo || hi >= 64 * 32)
			return -1;
		for (long c = lo; c <= hi; c++)
			words[c / 32] |= 1u << (c % 32);
		if (hi / 32 + 1 > nwords)
			nwords = (int)(hi / 32 + 1);
		p = *end == ',' ? end + 1 : end;
	}
	if (!nwords)
		return -1;
	n = 0;
	for (int i = nwords - 1; i >= 0; i--)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, i ? "%08x," : "%08x", words[i]);
	return write_dev_sysfs(dev, "queues/rx-0/rps_cpus", buf);
}

/*
 * The detour for DEV: a veth pair of one queue each, every GSO kind off on
 * the sending end (each skb reaching the other end is one wire packet), RPS
 * on the receiving end (see seg_rps). A failure leaves no pair behind:
 * -1: the pair, -2: ethtool, -3: RPS.
 */
static int seg_setup(unsigned dev_if, unsigned mtu, unsigned *a_if, unsigned *b_if)
{
	char a[IF_NAMESIZE], b[IF_NAMESIZE], m[16];
	char *add[] = { "ip", "link", "add", a, "mtu", m, "numtxqueues", "1", "numrxqueues", "1", "type", "veth",
			"peer", "name", b, "mtu", m, "numtxqueues", "1", "numrxqueues", "1", NULL, 0 };
	char *up_a[] = { "ip", "link", "set", a, "up", NULL, 0 };
	char *up_b[] = { "ip", "link", "set", b, "up", NULL, 0 };
	/* What ethtool's tso and gso leave on: UDP and tunnel GSO are segmented here too. */
	char *gso_a[] = { "ethtool", "-K", a, "tx-udp-segmentation", "off", "tx-gre-segmentation", "off",
			  "tx-gre-csum-segmentation", "off", "tx-ipxip4-segmentation", "off",
			  "tx-ipxip6-segmentation", "off", "tx-udp_tnl-segmentation", "off",
			  "tx-udp_tnl-csum-segmentation", "off", NULL, 0 };

	seg_names(dev_if, a, b);
	snprintf(m, sizeof(m), "%u", mtu);
	if (run_quiet(add))
		return -1;
	ipv6_off(a);
	ipv6_off(b);
	if (run_quiet(up_a) || run_quiet(up_b))
		return -1;
	*a_if = if_nametoindex(a);
	*b_if = if_nametoindex(b);
	if (!*a_if || !*b_if)
		return -1;
	if (wps_offloads_off(a) || run_quiet(gso_a))
		return -2;
	return seg_rps(b) ? -3 : 0;
}

void wps_seg_delete(unsigned dev_if)
{
	char a[IF_NAMESIZE], b[IF_NAMESIZE];
	char *del[] = { "ip", "link", "del", a, NULL, 0 };

	seg_names(dev_if, a, b);
	run_quiet(del);
}

/* seg_setup(), and on its failure the pair taken away again. */
int wps_seg_create(unsigned dev_if, unsigned mtu, unsigned *a_if, unsigned *b_if)
{
	int rc = seg_setup(dev_if, mtu, a_if, b_if);

	if (rc)
		wps_seg_delete(dev_if);
	return rc;
}
