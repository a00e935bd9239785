// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl wps ingress: the netdev plumbing of the segmentation detour (the
 * veth pair wpsgN -> wpsgNp, GSO off on wpsgN, RPS on wpsgNp) and of DEV's
 * offloads (--offloads-off, and putting them back at detach), through
 * netlink (io/nl.h: rtnetlink, ethtool's generic netlink family), the
 * ethtool ioctl and sysfs. Nothing here runs ip(8) or ethtool(8).
 */
#include <errno.h>
#include <fnmatch.h>
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

#include "io/nl.h"
#include "wps/wps_cfg.h"
#include "wps/wps_pins.h"
#include "ubctl/wps_ingress_int.h"

int wps_dev_info(const char *dev, unsigned char mac[6], unsigned *mtu)
{
	char err[256];
	struct nl *rt = nl_open_route(err, sizeof(err));
	struct nl_link l;
	int rc;

	if (!rt)
		return -1;
	rc = nl_link_get(rt, 0, dev, &l);
	nl_close(rt);
	if (rc || (mac && l.addr_len != 6)) {
		errno = rc ? -rc : EAFNOSUPPORT;
		return -1;
	}
	if (mac)
		memcpy(mac, l.addr, 6);
	if (mtu)
		*mtu = l.mtu;
	return 0;
}

/* ---- DEV's offloads ------------------------------------------------------------ */

/*
 * Off over ethtool netlink by name: the device's active features that
 * match ethtool(8)'s tso, gso and gro (tx-tcp*-segmentation: each kernel has
 * its own set of TSO sub-features); back through ETHTOOL_SFEATURES with the
 * exact bits that changed, so a TSO sub-feature that was off before attach
 * stays off after detach (on by name would turn every one on).
 */
static const char *const offloads[] = { "tx-tcp*-segmentation", "tx-generic-segmentation", "rx-gro" };
/* What tso and gso leave on, off too on the detour's sending end: UDP and tunnel GSO are segmented there. */
static const char *const more_gso[] = { "tx-udp-segmentation", "tx-gre-segmentation", "tx-gre-csum-segmentation",
					"tx-ipxip4-segmentation", "tx-ipxip6-segmentation", "tx-udp_tnl-segmentation",
					"tx-udp_tnl-csum-segmentation" };
#define N(a) (unsigned)(sizeof(a) / sizeof((a)[0]))

#define MAX_OFF 64

/* The active features whose names match one of the patterns, to be turned off. */
struct picked {
	const char *const *pat;
	unsigned npat, n;
	char name[MAX_OFF][ETH_GSTRING_LEN];
	struct nl_feature f[MAX_OFF];
};

static void pick(void *ctx, const char *name)
{
	struct picked *p = ctx;

	for (unsigned i = 0; i < p->npat && p->n < MAX_OFF; i++)
		if (!fnmatch(p->pat[i], name, 0)) {
			snprintf(p->name[p->n], ETH_GSTRING_LEN, "%s", name);
			p->f[p->n] = (struct nl_feature){ .name = p->name[p->n], .on = false };
			p->n++;
			return;
		}
}

/* dev's active features that match pat[0..npat) off; 0, or -1 with the reason in err. */
static int features_off(const char *dev, const char *const *pat, unsigned npat, char *err, size_t errlen)
{
	struct nl *s = nl_open_ethtool(err, errlen);
	struct picked *p = calloc(1, sizeof(*p));
	int rc = -1;

	if (s && p) {
		p->pat = pat;
		p->npat = npat;
		rc = nl_features_active(s, dev, pick, p);
		if (!rc && p->n)
			rc = nl_features_set(s, dev, p->f, p->n);
		if (rc)
			snprintf(err, errlen, "%s", nl_error(s));
	} else if (s) {
		snprintf(err, errlen, "out of memory");
	}
	free(p);
	nl_close(s);
	return rc ? -1 : 0;
}

int wps_offloads_off(const char *dev, char *err, size_t errlen)
{
	return features_off(dev, offloads, N(offloads), err, errlen);
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
 * -1: the pair, -2: its features, -3: RPS; err says the kernel's reason.
 */
static int seg_setup(struct nl *rt, unsigned dev_if, unsigned mtu, unsigned *a_if, unsigned *b_if, char *err,
		     size_t errlen)
{
	const struct nl_link_change up = { .up = 1 };
	char a[IF_NAMESIZE], b[IF_NAMESIZE];

	seg_names(dev_if, a, b);
	if (nl_veth_add(rt, a, b, mtu, 1)) {
		snprintf(err, errlen, "%s", nl_error(rt));
		return -1;
	}
	ipv6_off(a);
	ipv6_off(b);
	*a_if = if_nametoindex(a);
	*b_if = if_nametoindex(b);
	if (!*a_if || !*b_if) {
		snprintf(err, errlen, "%s", strerror(ENODEV));
		return -1;
	}
	if (nl_link_set(rt, (int)*a_if, &up) || nl_link_set(rt, (int)*b_if, &up)) {
		snprintf(err, errlen, "%s", nl_error(rt));
		return -1;
	}
	if (features_off(a, offloads, N(offloads), err, errlen) || features_off(a, more_gso, N(more_gso), err, errlen))
		return -2;
	return seg_rps(b) ? -3 : 0;
}

/* The detour's pair by name (-ENODEV: there was none). */
static int seg_del(struct nl *rt, unsigned dev_if)
{
	char a[IF_NAMESIZE], b[IF_NAMESIZE];

	seg_names(dev_if, a, b);
	return nl_link_del(rt, 0, a);
}

void wps_seg_delete(unsigned dev_if)
{
	char err[256];
	struct nl *rt = nl_open_route(err, sizeof(err));

	if (rt)
		seg_del(rt, dev_if);
	nl_close(rt);
}

/* seg_setup(), and on its failure the pair taken away again. */
int wps_seg_create(unsigned dev_if, unsigned mtu, unsigned *a_if, unsigned *b_if, char *err, size_t errlen)
{
	struct nl *rt = nl_open_route(err, errlen);
	int rc;

	if (!rt)
		return -1;
	rc = seg_setup(rt, dev_if, mtu, a_if, b_if, err, errlen);
	if (rc)
		seg_del(rt, dev_if);
	nl_close(rt);
	return rc;
}
