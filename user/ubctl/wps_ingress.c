// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl wps ingress: attach the WPS ingress to DEV's TC egress, manage its
 * member paths and classification rules through the pinned maps.
 *
 * attach also sets DEV up for "one packet on the wire per flag": a
 * segmentation detour (veth wpsgN -> wpsgNp, GSO off on wpsgN) that the GSO
 * skbs of sprayed flows take; the detour's receiving end runs
 * wps_ingress_seg, one flow on one CPU at a time (RPS). DEV keeps its
 * offloads for the traffic no rule sprays (--offloads-off: TSO, GSO and GRO
 * off on DEV, put back at detach).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/ethtool.h>
#include <linux/neighbour.h>
#include <linux/sockios.h>
#include <stdbool.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "wps_ingress.skel.h"
#include "conf.h"
#include "wps_cfg.h"
#include "wps_live.h"
#include "wps_pins.h"
#include "ubctl.h"

/* ---- small helpers ------------------------------------------------------------ */

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

static int dev_info(const char *dev, unsigned char mac[6], unsigned *mtu)
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

static int instance_dir(const char *dev, bool must_exist, char *out, size_t len)
{
	char ns[128], name[300], err[256];
	struct instance_sel sel = { .name = name };

	pin_netns_name(ns, sizeof(ns));
	snprintf(name, sizeof(name), "%s%s%s", ns, *ns ? ":" : "", dev);
	int prc = pin_instance_dir(WPS_ROLE_INGRESS, &sel, must_exist, out, len, err, sizeof(err));

	if (prc)
		return fail(prc, "%s", err);
	return 0;
}

int wps_ingress_dir(const char *dev, char *out, size_t len)
{
	return instance_dir(dev, true, out, len);
}

static int open_pin(const char *dir, const char *file)
{
	char p[PATH_MAX + 64];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	fd = bpf_obj_get(p);
	if (fd < 0)
		fail(EXIT_FAIL, "cannot open %s: %s", pin_display(p), strerror(errno));
	return fd;
}

/* ---- DEV's offloads ------------------------------------------------------------ */

/*
 * Off through ethtool(8) by name (tso, gso, gro, each with its
 * sub-features); back through ETHTOOL_SFEATURES with the exact bits that
 * changed, so a TSO sub-feature that was off before attach stays off after
 * detach (ethtool -K DEV tso on would turn every one on).
 */
static const char *const offloads[] = { "tso", "gso", "gro" };

/* TSO, GSO, GRO (with their sub-features) all off; non-zero if ethtool failed. */
static int offloads_off(const char *dev)
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

/* DEV's requested features (ETHTOOL_GFEATURES), WPS_IN_FEAT_WORDS words; non-zero if unreadable. */
static int features_get(const char *dev, __u32 *req)
{
	/* struct ethtool_gfeatures and its blocks, without a flexible member inside a struct */
	__u32 q[2 + 4 * WPS_IN_FEAT_WORDS] = { ETHTOOL_GFEATURES, WPS_IN_FEAT_WORDS };

	if (ethtool_ioctl(dev, q) < 0 || q[1] != WPS_IN_FEAT_WORDS)
		return -1;
	for (int i = 0; i < WPS_IN_FEAT_WORDS; i++)
		req[i] = q[2 + 4 * i + 1];	/* { available, requested, active, never_changed } */
	return 0;
}

/* The features attach changed back to what they were (cfg->dev_feat_*); non-zero on failure. */
static int features_restore(const char *dev, const struct wps_in_cfg *cfg)
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

/* ---- attach / detach --------------------------------------------------------- */

static const struct {
	const char *file;
	size_t off;	/* offset of the struct bpf_map * in the skeleton's maps */
} map_pins[] = {
#define M(f, m) { f, offsetof(struct wps_ingress, maps.m) }
	M(WPS_PIN_CFG, wps_in_cfg), M(WPS_PIN_RULES, wps_in_rules), M(WPS_PIN_PATHS, wps_in_paths),
	M(WPS_PIN_PATH_STATS, wps_in_path_stats), M(WPS_PIN_PATH_LOAD, wps_in_path_load),
	M(WPS_PIN_FLOWS, wps_in_flows), M(WPS_PIN_FLOW_HOT, wps_in_flow_hot), M(WPS_PIN_FLOW_STATE, wps_in_flow_state),
	M(WPS_PIN_FLOW_CACHE, wps_in_flow_cache),
	M(WPS_PIN_FID_STATE, wps_in_fid_state), M(WPS_PIN_STATS, wps_in_stats),
	M(WPS_PIN_ECMP_STATS, wps_in_ecmp_stats), M(WPS_PIN_LIVE, wps_in_live), M(WPS_PIN_PORTS, wps_in_ports),
#undef M
};

static int tc_attach(unsigned ifindex, enum bpf_tc_attach_point where, int prog_fd, __u32 prio)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex, .attach_point = where);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = WPS_TC_HANDLE, .priority = prio, .prog_fd = prog_fd);
	int rc = bpf_tc_hook_create(&hook);

	if (rc && rc != -EEXIST)
		return rc;
	return bpf_tc_attach(&hook, &opts);
}

static int tc_detach(unsigned ifindex, enum bpf_tc_attach_point where, __u32 prio)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex, .attach_point = where);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = WPS_TC_HANDLE, .priority = prio);

	return bpf_tc_detach(&hook, &opts);
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

	if (dev_info(dev, mac, NULL))
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
	if (offloads_off(a) || run_quiet(gso_a))
		return -2;
	return seg_rps(b) ? -3 : 0;
}

static void seg_delete(unsigned dev_if)
{
	char a[IF_NAMESIZE], b[IF_NAMESIZE];
	char *del[] = { "ip", "link", "del", a, NULL, 0 };

	seg_names(dev_if, a, b);
	run_quiet(del);
}

/* seg_setup(), and on its failure the pair taken away again. */
static int seg_create(unsigned dev_if, unsigned mtu, unsigned *a_if, unsigned *b_if)
{
	int rc = seg_setup(dev_if, mtu, a_if, b_if);

	if (rc)
		seg_delete(dev_if);
	return rc;
}

/*
 * --ingress-port IF=ID[,IF=ID...]: the Ingress Port ID of packets that came
 * in on IF, into ports[] (entries by ifindex & 255; two interfaces there, or
 * one named twice, are refused).
 */
static int port_map_parse(const char *arg, struct wps_in_port *ports, int *n, char *err, size_t errlen)
{
	char buf[512], *save, *tok;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		unsigned long long id;
		unsigned ifindex;

		if (!eq)
			return snprintf(err, errlen, "--ingress-port: '%s' is not IF=ID", tok), EXIT_USAGE;
		*eq = '\0';
		ifindex = if_nametoindex(tok);
		if (!ifindex)
			return snprintf(err, errlen, "--ingress-port: unknown device '%s'", tok), UB_EXIT_NOTFOUND;
		if (wps_parse_uint(eq + 1, 0, 255, &id, "--ingress-port ID", err, errlen))
			return EXIT_USAGE;
		if (ports[ifindex % WPS_IN_PORTS].ifindex)
			return snprintf(err, errlen, "--ingress-port %s: ifindex %u shares its entry with ifindex %u (entries "
				 "by ifindex mod %d)", tok, ifindex, ports[ifindex % WPS_IN_PORTS].ifindex, WPS_IN_PORTS),
			       EXIT_USAGE;
		ports[ifindex % WPS_IN_PORTS] = (struct wps_in_port){ .ifindex = ifindex, .id = (__u8)id };
		(*n)++;
	}
	return 0;
}

enum { WI_DEV = 1, WI_OFFL, WI_MAX_FLOWS, WI_INGRESS_PORT, WI_CFG, WI_CONFIG };

static const struct optab attach_opts[] = {
	{ "dev", "DEV", "the WAN port whose TC egress sprays the selected flows (required)", WI_DEV, 0 },
	{ "node-id", "N", "this ingress node's Node ID, 0..65535 (required)", WI_CFG, 0 },
	{ "src", "ADDR", "this node's IPv6 address: the outer source (required)", WI_CFG, 0 },
	{ "egress-node-id", "N", "the egress node's Node ID, 0..65535 (required)", WI_CFG, 0 },
	{ "egress-addr", "ADDR", "the egress node's IPv6 address: the outer destination (required)", WI_CFG, 0 },
	{ "hbh", NULL, "the WPS option in a Hop-by-Hop header (default: Destination Options)", WI_CFG, 0 },
	{ "hop-limit", "H", "the outer hop limit, 1..255 (default 64)", WI_CFG, 0 },
	{ "ecmp", "N", "no explicit paths: the kernel's multipath route to the egress\n"
	  "address (N next hops, 1..16) chooses by the outer flow label", WI_CFG, 0 },
	{ "mtu", "M", "the path MTU with --ecmp, 1280..65535 (default: DEV's)", WI_CFG, 0 },
	{ "ingress-port", "IF=ID[,...]|N", "IF=ID: the Ingress Port ID of packets that came in on IF\n"
	  "(else its ifindex's low byte); N: the ID of packets the node\n"
	  "sends itself (default 0)", WI_INGRESS_PORT, OPTAB_REPEAT },
	{ "egress-port", "P", "the option's Egress Port ID, 0..255 (default 0)", WI_CFG, 0 },
	{ "max-inflight", "G", "at most G groups of a flow in flight, 2..16 (default 16)", WI_CFG, 0 },
	{ "max-delay-us", "TIME", "a group counts as in flight this long after its E (bare: us;\n"
	  "0..10s, default 10ms)", WI_CFG, 0 },
	{ "quarantine-ms", "TIME", "a released Flow ID is not reused for this long (bare: ms;\n"
	  "0..3600s, default 1s)", WI_CFG, 0 },
	{ "idle-timeout", "TIME", "a flow idle this long is renewed under a fresh Flow ID (bare:\n"
	  "s; 1ms..3600s, default 5s)", WI_CFG, 0 },
	{ "idle-ms", "TIME", "a bare number in ms", WI_CFG, OPTAB_ALIAS },
	{ "load-window-us", "TIME", "least-loaded scheduling: the window of bytes sent per path\n"
	  "(bare: us; 1us..10s, default 1ms)", WI_CFG, 0 },
	{ "fid-pool", "N", "Flow IDs 1..N are used (default 65535)", WI_CFG, 0 },
	{ "max-flows", "N", "the flow table's size: flows sprayed at once (default 4096;\n"
	  "rounded up to a power of 2, 64..1048576)", WI_MAX_FLOWS, 0 },
	{ "mtu-drop", NULL, "too-big packets are dropped (counted) instead of answered", WI_CFG, 0 },
	{ "icmp-src4", "ADDR", "the IPv4 source of the node's Fragmentation Needed answers\n"
	  "(default: the inner packet's destination)", WI_CFG, 0 },
	{ "offloads-off", NULL, "turn TSO, GSO and GRO off on DEV (put back at detach)", WI_OFFL, 0 },
	{ "config", "FILE", "options from FILE: one \"key value\" per line, keys the long\n"
	  "options without --, a flag alone, # comments; they apply where\n"
	  "--config stands (later options win)", WI_CONFIG, 0 },
	{ 0 },
};

struct attach_args {
	struct wps_in_cfg *cfg;
	struct wps_in_port *ports;
	int nports;
	const char *dev;
	unsigned long long max_flows;
	bool offl_off, node, enode;
};

/* One of attach's options, from the command line or a --config file: 0, or the exit status with err set. */
static int attach_apply(struct attach_args *a, const struct optab *o, const char *v, char *err, size_t errlen)
{
	switch (o->key) {
	case WI_DEV:
		a->dev = v;
		return 0;
	case WI_OFFL:
		a->offl_off = true;
		return 0;
	case WI_MAX_FLOWS:
		return wps_parse_uint(v, 64, 1u << 20, &a->max_flows, "--max-flows", err, errlen) ? EXIT_USAGE : 0;
	case WI_INGRESS_PORT:
		if (strchr(v, '='))
			return port_map_parse(v, a->ports, &a->nports, err, errlen);
		break;
	}
	if (wps_in_cfg_set(a->cfg, o->name, v, err, errlen))
		return EXIT_USAGE;
	a->node |= !strcmp(o->name, "node-id");
	a->enode |= !strcmp(o->name, "egress-node-id");
	return 0;
}

static int attach_conf_entry(void *ctx, const struct conf_key *k, const char *v, char *err, size_t errlen)
{
	const struct optab *o = optab_find(attach_opts, k->name);

	return o && !attach_apply(ctx, o, v, err, errlen) ? 0 : -1;
}

/* --config FILE: its entries apply where --config stands among the options (no nesting). */
static int attach_config(struct attach_args *a, const char *path, char *err, size_t errlen)
{
	struct conf_key keys[sizeof(attach_opts) / sizeof(attach_opts[0])];
	size_t nk = 0;

	for (const struct optab *o = attach_opts; o->name; o++)
		if (o->key != WI_CONFIG)
			keys[nk++] = (struct conf_key){ o->name, o->arg != NULL };
	keys[nk] = (struct conf_key){ 0 };
	switch (conf_parse_file(path, keys, attach_conf_entry, a, err, errlen)) {
	case 0: return 0;
	case -1: return EXIT_FAIL;
	default: return EXIT_USAGE;
	}
}

static int attach_opt(void *ctx, const struct optab *o, const char *v)
{
	char err[640];
	int rc = o->key == WI_CONFIG ? attach_config(ctx, v, err, sizeof(err)) : attach_apply(ctx, o, v, err, sizeof(err));

	return rc ? fail(rc, "%s", err) : 0;
}

static int attach(int argc, char **argv);
static int detach(int argc, char **argv);
static int path_add(int argc, char **argv);
static int path_del(int argc, char **argv);
static int path_set(int argc, char **argv);
static int path_list(int argc, char **argv);
static int rule_add(int argc, char **argv);
static int rule_del(int argc, char **argv);
static int rule_change(int argc, char **argv);
static int rule_list(int argc, char **argv);

static const struct optab dev_opts[] = {
	{ "dev", "DEV", "the instance's port (required)", 'd', 0 },
	{ 0 },
};

#define PATH_WHICH \
	{ "dev", "DEV", "the instance's port (required)", 'd', 0 }, \
	{ "via", "DEV2", "the device the path leaves by (required)", 'v', 0 }, \
	{ "nexthop-mac", "MAC", "the next hop's MAC address", 'm', 0 }, \
	{ "nexthop", "ADDR", "the next hop's IPv4 or IPv6 address: its MAC from the kernel's\n" \
	  "neighbour table (followed while wps ingress watch runs)", 'n', 0 }

static const struct optab path_add_opts[] = {
	PATH_WHICH,
	{ "weight", "W", "its weight for the weighted scheduler, 1..255 (default 1)", 'w', 0 },
	{ "mtu", "M", "its MTU, 1280..65535 (default: DEV2's)", 'M', 0 },
	{ 0 },
}, path_which_opts[] = {
	PATH_WHICH,
	{ 0 },
}, path_set_opts[] = {
	PATH_WHICH,
	{ "weight", "W", "its new weight for the weighted scheduler, 1..255", 'w', 0 },
	{ 0 },
};

#define RULE_MATCH \
	{ "dev", "DEV", "the instance's port (required)", 'd', 0 }, \
	{ "dst", "PREFIX", "destination prefix, IPv4 or IPv6 (required)", 'D', 0 }, \
	{ "src", "PREFIX", "source prefix, of the same family (default: any)", 'S', 0 }, \
	{ "proto", "tcp|udp|sctp|N", "IP protocol (default: any)", 'p', 0 }, \
	{ "dport", "PORT", "destination port, with --proto tcp, udp or sctp", 'P', 0 }

static const struct optab rule_add_opts[] = {
	RULE_MATCH,
	{ "quantum", "N|Nb|TIME", "a group: N wire packets, N inner bytes (Nb), or a time from\n"
	  "the group's first packet (500us, 2ms) (required)", 'q', 0 },
	{ "no-reorder", NULL, "R = 0: the egress does not reorder the rule's flows", 'r', 0 },
	{ "sched", "rr|weighted|least-loaded", "how groups choose paths: round-robin (default), by\n"
	  "path add --weight, or the path with the fewest bytes in the last\n"
	  "--load-window-us", 's', 0 },
	{ 0 },
}, rule_del_opts[] = {
	RULE_MATCH,
	{ 0 },
};

static const struct optab_cmd wps_cmd = {
	.path = "ubctl wps",
	.summary = "WPS gateways: ingress spraying, egress reordering, boundary filter",
}, ingress_cmd = {
	.path = "ubctl wps ingress",
	.summary = "the WPS ingress: sprays selected flows over member paths (TC egress)",
}, attach_cmd = {
	.path = "ubctl wps ingress attach",
	.summary = "load the WPS ingress on DEV's TC egress and pin its maps",
	.synopsis = "--dev DEV --node-id N --src ADDR --egress-node-id M --egress-addr ADDR\n"
		    "    [--ecmp N [--mtu M]] [OPTIONS]\n--config FILE [OPTIONS]",
	.about = "Loads the WPS ingress (draft-wps-ipv6-option) on DEV's TC egress and pins its\n"
		 "maps under /sys/fs/bpf/ubxdp/wps/ingress/[NETNS:]DEV/. It creates the\n"
		 "segmentation detour, the veth pair wpsgIFINDEX -> wpsgIFINDEXp (GSO off on the\n"
		 "first), which the GSO skbs of sprayed flows take, so that one skb is one packet\n"
		 "on the wire and S and E appear once per group. DEV keeps its offloads for the\n"
		 "traffic no rule sprays. Then: path add (or --ecmp), rule add, and watch.",
	.opts = attach_opts,
	.run = attach,
}, detach_cmd = {
	.path = "ubctl wps ingress detach",
	.summary = "take the ingress off DEV, delete the detour, remove the pins",
	.synopsis = "--dev DEV",
	.about = "Puts TSO, GSO and GRO on DEV back as they were before attach (if\n"
		 "--offloads-off changed them).",
	.opts = dev_opts,
	.run = detach,
}, path_cmd_grp = {
	.path = "ubctl wps ingress path",
	.summary = "the member paths groups are sprayed over",
	.about = "A path gets the lowest free slot (0-15), its identity: the key of its entries\n"
		 "in the paths, path_stats and path_load maps and the index of its weight.\n"
		 "Deleting a path never moves another; a group still open on it ends there.",
}, path_add_cmd = {
	.path = "ubctl wps ingress path add",
	.summary = "add a member path",
	.synopsis = "--dev DEV --via DEV2 (--nexthop-mac MAC | --nexthop ADDR) [--weight W] [--mtu M]",
	.opts = path_add_opts,
	.run = path_add,
}, path_del_cmd = {
	.path = "ubctl wps ingress path del",
	.summary = "delete a member path",
	.synopsis = "--dev DEV --via DEV2 [--nexthop-mac MAC | --nexthop ADDR]",
	.opts = path_which_opts,
	.run = path_del,
}, path_set_cmd = {
	.path = "ubctl wps ingress path set",
	.summary = "take a path out of rotation (down), put it back (up), change its weight",
	.synopsis = "--dev DEV --via DEV2 [--nexthop-mac MAC | --nexthop ADDR] [--weight W] [up|down]",
	.about = "down: no group starts on the path; one open on it ends. up puts it back.\n"
		 "--weight W: its share under --sched weighted from the next group on. Both are\n"
		 "checked before either is written.",
	.opts = path_set_opts,
	.flags = OPTAB_ARGS,
	.run = path_set,
}, path_list_cmd = {
	.path = "ubctl wps ingress path list",
	.summary = "the paths, their state and counters",
	.synopsis = "--dev DEV",
	.opts = dev_opts,
	.run = path_list,
}, rule_cmd_grp = {
	.path = "ubctl wps ingress rule",
	.summary = "the classification rules: which flows are sprayed, and how",
	.about = "Overlapping rules are refused (same family, proto and port compatible, both\n"
		 "prefixes intersecting).",
}, rule_add_cmd = {
	.path = "ubctl wps ingress rule add",
	.summary = "add a rule",
	.synopsis = "--dev DEV --dst PREFIX [--src PREFIX] [--proto P [--dport PORT]] --quantum Q\n"
		    "    [--no-reorder] [--sched rr|weighted|least-loaded]",
	.opts = rule_add_opts,
	.run = rule_add,
}, rule_del_cmd = {
	.path = "ubctl wps ingress rule del",
	.summary = "delete the rule that matches the same packets",
	.synopsis = "--dev DEV --dst PREFIX [--src PREFIX] [--proto P] [--dport PORT]",
	.opts = rule_del_opts,
	.run = rule_del,
}, rule_change_cmd = {
	.path = "ubctl wps ingress rule change",
	.summary = "change the quantum, scheduler or reordering of a rule, in place",
	.synopsis = "--dev DEV --dst PREFIX [--src PREFIX] [--proto P [--dport PORT]] --quantum Q\n"
		    "    [--no-reorder] [--sched rr|weighted|least-loaded]",
	.about = "The rule that matches the same packets (--dst, --src, --proto, --dport) becomes\n"
		 "the one given, keeping its place in the order; flows classified under it take\n"
		 "the new one at their next group. Refused (nothing changed) when no rule matches\n"
		 "(exit 3) or the rule is wrong (exit 2).",
	.opts = rule_add_opts,
	.run = rule_change,
}, rule_list_cmd = {
	.path = "ubctl wps ingress rule list",
	.summary = "the rules, in the order they match",
	.synopsis = "--dev DEV",
	.opts = dev_opts,
	.run = rule_list,
};

const struct optab_cmd *const wps_cmds[] = {
	&wps_cmd, &ingress_cmd, &attach_cmd, &detach_cmd, &wps_watch_cmd,
	&path_cmd_grp, &path_add_cmd, &path_del_cmd, &path_set_cmd, &path_list_cmd,
	&rule_cmd_grp, &rule_add_cmd, &rule_del_cmd, &rule_change_cmd, &rule_list_cmd, NULL,
};

static int attach(int argc, char **argv)
{
	static struct wps_in_port ports[WPS_IN_PORTS];
	struct wps_in_cfg cfg;
	struct attach_args args = { .cfg = &cfg, .ports = ports, .max_flows = WPS_IN_MAX_FLOWS };
	unsigned long long max_flows;
	bool offl_off;
	int nports;
	struct wps_ingress *skel = NULL;
	const char *dev;
	char dir[PATH_MAX], p[PATH_MAX + 64], err[256];
	unsigned dev_if, mtu = 0, a_if = 0, b_if = 0;
	struct stat st;
	__u32 zero = 0;
	bool tcx;
	int rc;

	wps_in_cfg_defaults(&cfg);
	rc = optab_parse(&attach_cmd, argc, argv, attach_opt, &args, NULL);
	if (rc)
		return OPTAB_STATUS(rc);
	dev = args.dev;
	max_flows = args.max_flows;
	offl_off = args.offl_off;
	nports = args.nports;
	if (!dev)
		return fail(EXIT_USAGE, "wps ingress attach: --dev DEV is required");
	if (!args.node || !args.enode)
		return fail(EXIT_USAGE, "wps ingress attach: --node-id and --egress-node-id are required");
	if (wps_in_cfg_check(&cfg, err, sizeof(err)))
		return fail(EXIT_USAGE, "%s", err);
	dev_if = if_nametoindex(dev);
	if (!dev_if)
		return fail(UB_EXIT_NOTFOUND, "unknown device '%s'", dev);
	if (dev_info(dev, NULL, &mtu))
		return fail(EXIT_FAIL, "cannot read the MTU of %s: %s", dev, strerror(errno));
	if (cfg.ecmp && !cfg.path_mtu)
		cfg.path_mtu = (__u16)mtu;
	cfg.dev_ifindex = dev_if;
	if ((rc = instance_dir(dev, false, dir, sizeof(dir))))
		return rc;
	if (!stat(dir, &st))
		return fail(UB_EXIT_CONFLICT, "a WPS ingress is already attached to %s (%s): detach it first", dev,
			    pin_display(dir));

	skel = wps_ingress__open();
	if (!skel)
		return fail(EXIT_FAIL, "cannot open the WPS ingress BPF object: %s", strerror(errno));
	wps_in_flow_table_size(skel->obj, (__u32)max_flows);
	skel->rodata->max_flows = wps_in_pow2((__u32)max_flows);
	rc = wps_ingress__load(skel);
	if (rc) {
		wps_ingress__destroy(skel);
		if (rc == -EPERM || rc == -EACCES)
			return fail(UB_EXIT_KERNEL, "loading BPF programs: permission denied (needs root: CAP_BPF, CAP_NET_ADMIN)");
		return fail(UB_EXIT_KERNEL, "loading BPF programs failed: %s (run with -v for the verifier log)", strerror(-rc));
	}
	if (pin_mkdir_p(dir)) {
		rc = fail(EXIT_FAIL, "cannot create %s: %s", dir, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < sizeof(map_pins) / sizeof(map_pins[0]); i++) {
		struct bpf_map *m = *(struct bpf_map **)((char *)skel + map_pins[i].off);

		snprintf(p, sizeof(p), "%s/%s", dir, map_pins[i].file);
		if (bpf_map__pin(m, p)) {
			rc = fail(EXIT_FAIL, "pin %s: %s", p, strerror(errno));
			goto unpin;
		}
	}
	snprintf(p, sizeof(p), "%s/%s", dir, WPS_PIN_PROG);
	if (bpf_program__pin(skel->progs.wps_ingress, p)) {
		rc = fail(EXIT_FAIL, "pin %s: %s", p, strerror(errno));
		goto unpin;
	}
	snprintf(p, sizeof(p), "%s/%s", dir, WPS_PIN_PROG_SEG);
	if (bpf_program__pin(skel->progs.wps_ingress_seg, p)) {
		rc = fail(EXIT_FAIL, "pin %s: %s", p, strerror(errno));
		goto unpin;
	}

	/*
	 * One packet on the wire per flag: every GSO skb of a sprayed flow takes
	 * the detour, so DEV keeps its offloads, which traffic no rule sprays
	 * needs (without TSO, DEV would segment it in software: 27 % of a TCP
	 * flow's goodput in scripts/wps_bench.sh). --offloads-off turns TSO, GSO
	 * and GRO off on DEV all the same (a locally sent TCP flow then reaches
	 * the program a wire packet at a time, without the detour); what was on
	 * is kept in cfg, for detach to put back.
	 */
	if (offl_off) {
		__u32 after[WPS_IN_FEAT_WORDS];
		bool read = !features_get(dev, cfg.dev_feat_before);

		if (offloads_off(dev))
			warnx_("ethtool -K %s tso off gso off gro off failed: GSO skbs take the detour", dev);
		if (read && !features_get(dev, after)) {
			for (int i = 0; i < WPS_IN_FEAT_WORDS; i++)
				cfg.dev_feat_changed[i] = cfg.dev_feat_before[i] ^ after[i];
			cfg.dev_offloads = WPS_IN_OFFL_SAVED;
		} else {
			warnx_("cannot read the features of %s (ETHTOOL_GFEATURES): detach will leave TSO/GSO/GRO off",
			       dev);
		}
	}
	seg_delete(dev_if);	/* a leftover of a crashed attach */
	rc = seg_create(dev_if, mtu, &a_if, &b_if);
	if (rc == -1) {
		rc = fail(EXIT_FAIL, "cannot create the segmentation detour (veth " WPS_SEG_FMT ")", dev_if);
		goto unpin;
	}
	if (rc == -2) {
		rc = fail(EXIT_FAIL, "cannot turn GSO off on the detour (is ethtool installed?)");
		goto unpin;
	}
	if (rc == -3) {
		rc = fail(EXIT_FAIL, "cannot set RPS on the detour (/sys/class/net/" WPS_SEG_PEER_FMT
			  "/queues/rx-0/rps_cpus): needs a sysfs of this network namespace, mounted by ubctl"
			  " (CAP_SYS_ADMIN) or already on /sys", dev_if);
		goto unpin;
	}
	cfg.seg_ifindex = a_if;
	{
		struct timespec res;

		if (!clock_getres(CLOCK_MONOTONIC_COARSE, &res))
			cfg.coarse_tick_ns = (__u64)res.tv_sec * 1000000000ULL + (__u64)res.tv_nsec;
	}
	if (nports)
		cfg.flags |= WPS_IN_F_PORTS_NAMED;
	for (__u32 k = 0; k < WPS_IN_PORTS && nports; k++)
		if (ports[k].ifindex && bpf_map_update_elem(bpf_map__fd(skel->maps.wps_in_ports), &k, &ports[k], BPF_ANY)) {
			rc = fail(EXIT_FAIL, "writing the ingress ports: %s", strerror(errno));
			goto unseg;
		}
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.wps_in_cfg), &zero, &cfg, BPF_ANY)) {
		rc = fail(EXIT_FAIL, "writing the configuration: %s", strerror(errno));
		goto unseg;
	}
	/* tcx links pinned beside the programs where the kernel has tcx, else clsact filters. */
	rc = link_tcx_pinned(bpf_program__fd(skel->progs.wps_ingress_seg), b_if, false, NULL, dir, WPS_PIN_LINK_SEG);
	tcx = rc != -EOPNOTSUPP;
	if (!tcx)
		rc = tc_attach(b_if, BPF_TC_INGRESS, bpf_program__fd(skel->progs.wps_ingress_seg), WPS_TC_PRIO_INGRESS);
	if (rc) {
		rc = fail(UB_EXIT_KERNEL, "TC attach on the detour: %s", strerror(-rc));
		goto unseg;
	}
	rc = tcx ? link_tcx_pinned(bpf_program__fd(skel->progs.wps_ingress), dev_if, true, NULL, dir, WPS_PIN_LINK) :
		   tc_attach(dev_if, BPF_TC_EGRESS, bpf_program__fd(skel->progs.wps_ingress), WPS_TC_PRIO_INGRESS);
	if (rc) {
		rc = fail(UB_EXIT_KERNEL, "TC attach on %s egress: %s", dev, strerror(-rc));
		goto unseg;
	}
	printf("wps ingress attached: %s egress (node %u -> node %u, %s) by %s, pinned at %s\n", dev, cfg.node_id,
	       cfg.egress_node_id, cfg.ecmp ? "ECMP by flow label" : "explicit paths", LINK_TC_WAY(tcx),
	       pin_display(dir));
	if (!cfg.ecmp)
		printf("add member paths with: ubctl wps ingress path add --dev %s --via DEV --nexthop-mac MAC\n", dev);
	rc = 0;
	goto out;
unseg:
	link_detach_pinned(dir, NULL);
	seg_delete(dev_if);
unpin:
	features_restore(dev, &cfg);
	pin_remove_dir(dir);
out:
	wps_ingress__destroy(skel);
	return rc;
}

static int detach(int argc, char **argv)
{
	struct wps_in_cfg cfg;
	char dir[PATH_MAX];
	const char *dev = NULL;
	unsigned dev_if;
	__u32 zero = 0;
	int rc = optab_parse(&detach_cmd, argc, argv, optab_str, &dev, NULL), cfg_fd, links;

	if (rc)
		return OPTAB_STATUS(rc);
	if (!dev)
		return fail(EXIT_USAGE, "wps ingress detach: --dev DEV is required");
	if ((rc = instance_dir(dev, true, dir, sizeof(dir))))
		return rc;
	dev_if = if_nametoindex(dev);
	if (!dev_if)
		return fail(UB_EXIT_NOTFOUND, "device '%s' is gone; pins kept at %s (remove them with rm -r)", dev,
			    pin_display(dir));
	cfg_fd = open_pin(dir, WPS_PIN_CFG);
	if (cfg_fd < 0)
		return EXIT_FAIL;
	/* Another ubctl's layout has no offloads where this one looks for them. */
	if (bpf_map_lookup_elem(cfg_fd, &zero, &cfg) || cfg.version != WPS_IN_CFG_VERSION)
		cfg.dev_offloads = 0;
	close(cfg_fd);
	/* The links; else the clsact filter of a kernel without tcx, or of an older ubctl. */
	if (link_detach_pinned(dir, &links))
		return fail(UB_EXIT_KERNEL, "link detach on %s failed; pins kept", dev);
	rc = links ? 0 : tc_detach(dev_if, BPF_TC_EGRESS, WPS_TC_PRIO_INGRESS);
	if (rc && rc != -ENOENT)
		return fail(UB_EXIT_KERNEL, "TC detach on %s: %s; pins kept", dev, strerror(-rc));
	seg_delete(dev_if);	/* takes its filter with it */
	/* DEV's features as they were before attach, each one. */
	if (features_restore(dev, &cfg))
		warnx_("cannot restore the offloads of %s (ETHTOOL_SFEATURES: %s)", dev, strerror(errno));
	pin_remove_dir(dir);
	printf("wps ingress detached from %s: %s removed\n", dev, pin_display(dir));
	return 0;
}

/* ---- paths ------------------------------------------------------------------- */

/*
 * The `live` map of an instance, mapped: each writer (ubctl here, the watch
 * agent) changes its own words in place, atomically, never the whole value.
 */
struct wps_in_live *wps_live_map(int fd)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, (size_t)(pg > 0 ? pg : 4096), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return m == MAP_FAILED ? NULL : m;
}

void wps_live_unmap(struct wps_in_live *lv)
{
	long pg = sysconf(_SC_PAGESIZE);

	if (lv)
		munmap(lv, (size_t)(pg > 0 ? pg : 4096));
}

/* A slot taken into or out of use: none of its down bits (or learned MTU) outlive it. */
static void live_slot_reset(struct wps_in_live *lv, __u32 slot)
{
	__u32 keep = ~(1u << slot);

	if (!lv)
		return;
	__atomic_fetch_and(&lv->admin_down, keep, __ATOMIC_SEQ_CST);
	__atomic_fetch_and(&lv->link_down, keep, __ATOMIC_SEQ_CST);
	__atomic_fetch_and(&lv->neigh_down, keep, __ATOMIC_SEQ_CST);
	__atomic_store_n(&lv->slot_pmtu[slot], 0, __ATOMIC_SEQ_CST);
}

struct inst {
	char dir[PATH_MAX];
	int cfg_fd, paths_fd, rules_fd, pstats_fd, pload_fd, live_fd;
	struct wps_in_live *live;
	struct wps_in_cfg cfg;
};

/* Returns 0, or the exit status (said). */
static int inst_open(const char *dev, struct inst *in)
{
	__u32 zero = 0;
	int rc;

	memset(in, 0, sizeof(*in));
	in->cfg_fd = in->paths_fd = in->rules_fd = in->pstats_fd = in->pload_fd = in->live_fd = -1;
	if ((rc = instance_dir(dev, true, in->dir, sizeof(in->dir))))
		return rc;
	in->cfg_fd = open_pin(in->dir, WPS_PIN_CFG);
	if (in->cfg_fd < 0)
		return EXIT_FAIL;
	if (bpf_map_lookup_elem(in->cfg_fd, &zero, &in->cfg))
		return fail(EXIT_FAIL, "reading %s/cfg: %s", pin_display(in->dir), strerror(errno));
	/* Another ubctl's layout would be read as garbage and written back as worse. */
	if (in->cfg.version != WPS_IN_CFG_VERSION)
		return fail(EXIT_FAIL, "%s was attached by another ubctl (cfg layout %u, this one reads %u): detach and attach again",
			    pin_display(in->dir), in->cfg.version, WPS_IN_CFG_VERSION);
	in->paths_fd = open_pin(in->dir, WPS_PIN_PATHS);
	in->rules_fd = open_pin(in->dir, WPS_PIN_RULES);
	in->pstats_fd = open_pin(in->dir, WPS_PIN_PATH_STATS);
	in->pload_fd = open_pin(in->dir, WPS_PIN_PATH_LOAD);
	in->live_fd = open_pin(in->dir, WPS_PIN_LIVE);
	if (in->paths_fd < 0 || in->rules_fd < 0 || in->pstats_fd < 0 || in->pload_fd < 0 || in->live_fd < 0)
		return EXIT_FAIL;
	in->live = wps_live_map(in->live_fd);
	if (!in->live)
		return fail(EXIT_FAIL, "cannot map %s/%s: %s", pin_display(in->dir), WPS_PIN_LIVE, strerror(errno));
	return 0;
}

static void inst_close(struct inst *in)
{
	int fds[] = { in->cfg_fd, in->paths_fd, in->rules_fd, in->pstats_fd, in->pload_fd, in->live_fd };

	wps_live_unmap(in->live);
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static void recompute_mtu(struct inst *in)
{
	__u16 m = 0;

	for (__u32 i = 0; i < in->cfg.npaths; i++) {
		__u32 k = in->cfg.path_slot[i];
		struct wps_in_path p;

		if (!bpf_map_lookup_elem(in->paths_fd, &k, &p) && (!m || p.mtu < m))
			m = p.mtu;
	}
	if (!in->cfg.ecmp)
		in->cfg.path_mtu = m;
}

/* Zero a slot's entries in paths, path_stats and path_load. */
static int path_clear(const struct inst *in, __u32 k)
{
	struct wps_in_path zp = {};
	struct wps_in_path_load zl = {};
	int ncpu = libbpf_num_possible_cpus(), rc;
	void *zs = calloc((size_t)(ncpu > 0 ? ncpu : 1), sizeof(struct wps_in_path_stats));

	if (!zs)
		return -1;
	rc = bpf_map_update_elem(in->paths_fd, &k, &zp, BPF_ANY) ||
	     bpf_map_update_elem(in->pstats_fd, &k, zs, BPF_ANY) ||
	     bpf_map_update_elem(in->pload_fd, &k, &zl, BPF_ANY);
	free(zs);
	return rc ? -1 : 0;
}

/*
 * The slot of the path in use via ifindex (to the static next hop dmac, or
 * to the next hop at address nh, when given); -1 if none.
 */
static int path_find(const struct inst *in, unsigned ifindex, const __u8 *dmac, const __u8 *nh)
{
	for (__u32 i = 0; i < in->cfg.npaths; i++) {
		__u32 k = in->cfg.path_slot[i];
		struct wps_in_path p;

		if (bpf_map_lookup_elem(in->paths_fd, &k, &p) || p.ifindex != ifindex)
			continue;
		if (dmac && ((p.flags & WPS_PATH_F_NEXTHOP) || memcmp(p.dmac, dmac, 6)))
			continue;
		if (nh && (!(p.flags & WPS_PATH_F_NEXTHOP) || memcmp(p.nexthop, nh, 16)))
			continue;
		return (int)k;
	}
	return -1;
}

/* An IPv4 or IPv6 next-hop address: IPv4 in the last 4 bytes. */
static int parse_nexthop(const char *s, __u8 addr[16], __u8 *family)
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr + 12) == 1) {
		*family = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*family = 6;
		return 0;
	}
	return -1;
}

/*
 * The next hop of a new path from the kernel's neighbour table: its MAC if
 * the kernel has it, else resolution asked and waited for, at most 1 s.
 * False: not resolved (the path starts down; watch brings it up).
 */
static bool nexthop_resolve(struct wps_in_path *p)
{
	int fd = wps_rtnl_open();
	bool ok = false;

	if (fd < 0)
		return false;
	for (int n = 0; n < 20 && !ok; n++) {
		struct wps_nh_seen s;

		if (wps_neigh_get(fd, p->nh_family, p->ifindex, p->nexthop, &s))
			break;
		ok = wps_nh_alive(&s, UINT32_MAX, true);
		if (ok)
			memcpy(p->dmac, s.lladdr, 6);
		else {
			if (!n || (s.present && (s.state & NUD_FAILED)))
				wps_neigh_ask(fd, p->nh_family, p->ifindex, p->nexthop, WPS_NH_RESOLVE);
			usleep(50000);
		}
	}
	close(fd);
	return ok;
}

struct path_args {
	const char *dev, *via, *mac, *nhs;
	unsigned long long weight, mtu;
	bool weight_set;
};

static int path_opt(void *ctx, const struct optab *o, const char *v)
{
	struct path_args *a = ctx;
	char err[256];

	switch (o->key) {
	case 'd': a->dev = v; break;
	case 'v': a->via = v; break;
	case 'm': a->mac = v; break;
	case 'n': a->nhs = v; break;
	case 'w':
		if (wps_parse_uint(v, 1, 255, &a->weight, "--weight", err, sizeof(err)))
			return fail(EXIT_USAGE, "%s", err);
		a->weight_set = true;
		break;
	default:
		if (wps_parse_uint(v, 1280, 65535, &a->mtu, "--mtu", err, sizeof(err)))
			return fail(EXIT_USAGE, "%s", err);
	}
	return 0;
}

static int path_cmd(const struct optab_cmd *c, int argc, char **argv)
{
	const char *verb = strrchr(c->path, ' ') + 1, *dev, *via, *mac, *nhs, *updown = NULL;
	struct path_args args = { .weight = 1 };
	unsigned long long weight, mtu;
	struct wps_in_path np = {};
	__u8 nh[16], nh_family = 0, dmac[6];
	bool resolved = true;
	struct inst in;
	char err[256];
	__u32 zero = 0;
	int nargs, rc = optab_parse(c, argc, argv, path_opt, &args, &nargs);

	if (rc)
		return OPTAB_STATUS(rc);
	dev = args.dev;
	via = args.via;
	mac = args.mac;
	nhs = args.nhs;
	weight = args.weight;
	mtu = args.mtu;
	rc = EXIT_FAIL;
	if (c == &path_set_cmd) {
		if (nargs > 1 || (nargs == 1 && strcmp(argv[1], "up") && strcmp(argv[1], "down")) ||
		    (!nargs && !args.weight_set))
			return fail(EXIT_USAGE, "wps ingress path set: up, down or --weight W?");
		updown = nargs ? argv[1] : NULL;
	}
	if (!dev)
		return fail(EXIT_USAGE, "wps ingress path %s: --dev DEV is required", verb);
	if (strcmp(verb, "list") && !via)
		return fail(EXIT_USAGE, "wps ingress path %s: --via DEV is required", verb);
	if (mac && nhs)
		return fail(EXIT_USAGE, "wps ingress path %s: --nexthop-mac or --nexthop, not both", verb);
	if (mac && wps_parse_mac(mac, dmac, err, sizeof(err)))
		return fail(EXIT_USAGE, "%s", err);
	if (nhs && parse_nexthop(nhs, nh, &nh_family))
		return fail(EXIT_USAGE, "--nexthop: '%s' is not an IPv4 or IPv6 address", nhs);
	if (!strcmp(verb, "add")) {
		unsigned m;

		if (!mac && !nhs)
			return fail(EXIT_USAGE, "wps ingress path add: --nexthop-mac MAC or --nexthop ADDR is required");
		np.ifindex = if_nametoindex(via);
		if (!np.ifindex)
			return fail(UB_EXIT_NOTFOUND, "unknown device '%s'", via);
		if (dev_info(via, np.smac, &m))
			return fail(EXIT_FAIL, "cannot read %s: %s", via, strerror(errno));
		np.mtu = (__u16)(mtu ? mtu : m);
		if (mac)
			memcpy(np.dmac, dmac, 6);
		else {
			np.flags = WPS_PATH_F_NEXTHOP;
			np.nh_family = nh_family;
			memcpy(np.nexthop, nh, 16);
		}
	}
	if ((rc = inst_open(dev, &in)))
		goto out;
	if (in.cfg.ecmp && strcmp(verb, "list")) {
		rc = fail(EXIT_USAGE, "%s runs in ECMP mode: the kernel's routes are the paths", dev);
		goto out;
	}
	if (!strcmp(verb, "list")) {
		int ncpu = libbpf_num_possible_cpus();
		struct wps_in_path_stats *ps = calloc((size_t)ncpu, sizeof(*ps));

		printf("%-4s %-16s %-17s %-6s %-6s %-16s %12s %14s %10s\n", "slot", "via", "nexthop", "weight", "mtu",
		       "state", "packets", "bytes", "groups");
		for (__u32 i = 0; ps && !in.cfg.ecmp && i < in.cfg.npaths; i++) {
			__u32 k = in.cfg.path_slot[i];
			struct wps_in_path p = {};
			char name[IF_NAMESIZE], state[40], nhop[80];
			unsigned long long pk = 0, by = 0, gr = 0;

			if (bpf_map_lookup_elem(in.paths_fd, &k, &p) || !if_indextoname(p.ifindex, name))
				snprintf(name, sizeof(name), "ifindex %u", p.ifindex);
			if (!bpf_map_lookup_elem(in.pstats_fd, &k, ps))
				for (int c = 0; c < ncpu; c++) {
					pk += ps[c].packets;
					by += ps[c].bytes;
					gr += ps[c].groups;
				}
			wps_path_state(in.live, k, state, sizeof(state));
			wps_path_nexthop(&p, nhop, sizeof(nhop));
			/* What Packet Too Big taught the watch agent, if less. */
			if (in.live->slot_pmtu[k] && in.live->slot_pmtu[k] < p.mtu)
				p.mtu = in.live->slot_pmtu[k];
			printf("%-4u %-16s %-17s %-6u %-6u %-16s %12llu %14llu %10llu\n", k, name, nhop, in.cfg.weight[k],
			       p.mtu, state, pk, by, gr);
		}
		if (in.cfg.ecmp)
			printf("(ECMP over %u next hops: per-device counters in ubctl stats)\n", in.cfg.ecmp);
		free(ps);
		rc = 0;
		goto out;
	}
	if (!strcmp(verb, "add")) {
		struct wps_in_path_load zl = {};
		int ncpu = libbpf_num_possible_cpus();
		void *zs = calloc((size_t)(ncpu > 0 ? ncpu : 1), sizeof(struct wps_in_path_stats));
		__u32 k;

		if (path_find(&in, np.ifindex, mac ? np.dmac : NULL, nhs ? nh : NULL) >= 0) {
			free(zs);
			rc = fail(UB_EXIT_CONFLICT, "path via %s to %s exists already", via, mac ? mac : nhs);
			goto out;
		}
		if (in.cfg.npaths >= WPS_IN_MAX_PATHS) {
			free(zs);
			rc = fail(UB_EXIT_CONFLICT, "%d paths already: the most a WPS ingress has", WPS_IN_MAX_PATHS);
			goto out;
		}
		/* The lowest slot not in use; a slot freed by path del starts its counters afresh. */
		for (k = 0; k < WPS_IN_MAX_PATHS; k++) {
			bool used = false;

			for (__u32 i = 0; i < in.cfg.npaths; i++)
				used |= in.cfg.path_slot[i] == k;
			if (!used)
				break;
		}
		if (nhs)
			resolved = nexthop_resolve(&np);
		/* The path first, then the cfg that makes it visible. */
		if (!zs || bpf_map_update_elem(in.pstats_fd, &k, zs, BPF_ANY) ||
		    bpf_map_update_elem(in.pload_fd, &k, &zl, BPF_ANY) ||
		    bpf_map_update_elem(in.paths_fd, &k, &np, BPF_ANY)) {
			free(zs);
			rc = fail(EXIT_FAIL, "writing path: %s", strerror(errno));
			goto out;
		}
		free(zs);
		in.cfg.weight[k] = (__u8)weight;
		in.cfg.path_slot[in.cfg.npaths++] = (__u8)k;
		wps_in_cfg_sync_paths(&in.cfg);
		live_slot_reset(in.live, k);
		if (!resolved)	/* down until its next hop answers (watch keeps the bit from now on) */
			__atomic_fetch_or(&in.live->neigh_down, 1u << k, __ATOMIC_SEQ_CST);
		recompute_mtu(&in);
		if (bpf_map_update_elem(in.cfg_fd, &zero, &in.cfg, BPF_ANY)) {
			rc = fail(EXIT_FAIL, "writing cfg: %s", strerror(errno));
			goto out;
		}
		if (nhs)
			printf("path %u: %s -> %s at %02x:%02x:%02x:%02x:%02x:%02x (mtu %u, weight %llu)%s\n", k, via,
			       nhs, np.dmac[0], np.dmac[1], np.dmac[2], np.dmac[3], np.dmac[4], np.dmac[5], np.mtu, weight,
			       resolved ? "" : ": not resolved, down until it answers (ubctl wps ingress watch)");
		else
			printf("path %u: %s -> %s (mtu %u, weight %llu)\n", k, via, mac, np.mtu, weight);
		rc = 0;
		goto out;
	}
	if (!strcmp(verb, "set")) {
		int found;

		found = path_find(&in, if_nametoindex(via), mac ? dmac : NULL, nhs ? nh : NULL);
		if (found < 0) {
			rc = fail(UB_EXIT_NOTFOUND, "no path via %s%s%s", via, mac || nhs ? " to " : "", mac ? mac : nhs ? nhs : "");
			goto out;
		}
		if (args.weight_set) {
			in.cfg.weight[found] = (__u8)weight;
			if (bpf_map_update_elem(in.cfg_fd, &zero, &in.cfg, BPF_ANY)) {
				rc = fail(EXIT_FAIL, "writing cfg: %s", strerror(errno));
				goto out;
			}
			printf("path %d via %s: weight %llu\n", found, via, weight);
		}
		if (!updown) {
			rc = 0;
			goto out;
		}
		/* In place, this bit alone: the watch agent writes its own words beside it. */
		if (updown[0] == 'd')
			__atomic_fetch_or(&in.live->admin_down, 1u << found, __ATOMIC_SEQ_CST);
		else
			__atomic_fetch_and(&in.live->admin_down, ~(1u << found), __ATOMIC_SEQ_CST);
		printf("path %d via %s: %s by the operator\n", found, via, updown[0] == 'd' ? "down" : "up");
		rc = 0;
		goto out;
	}
	if (!strcmp(verb, "del")) {
		int found;

		found = path_find(&in, if_nametoindex(via), mac ? dmac : NULL, nhs ? nh : NULL);
		if (found < 0) {
			rc = fail(UB_EXIT_NOTFOUND, "no path via %s%s%s", via, mac || nhs ? " to " : "", mac ? mac : nhs ? nhs : "");
			goto out;
		}
		if (in.cfg.npaths == 1) {
			struct wps_in_rule r0 = {};
			__u32 z = 0;

			if (!bpf_map_lookup_elem(in.rules_fd, &z, &r0) && r0.used) {
				rc = fail(UB_EXIT_CONFLICT, "refusing to remove the last path while rules spray onto it "
					  "(rule del them first)");
				goto out;
			}
		}
		/*
		 * Out of the list of paths in use first (no group opens on it
		 * from then on; the others keep their slots), then its slot
		 * cleared: its entries in paths, path_stats and path_load zeroed
		 * (array maps have no holes), its weight back to 1, its down bits
		 * cleared. A group still open on it ends there; the flow's next
		 * packet opens a new group on a path in use (groups_closed_path_down).
		 */
		for (__u32 i = 0, j = 0; i < in.cfg.npaths; i++)
			if (in.cfg.path_slot[i] != found)
				in.cfg.path_slot[j++] = in.cfg.path_slot[i];
		in.cfg.npaths--;
		in.cfg.weight[found] = 1;
		wps_in_cfg_sync_paths(&in.cfg);
		recompute_mtu(&in);
		if (bpf_map_update_elem(in.cfg_fd, &zero, &in.cfg, BPF_ANY)) {
			rc = fail(EXIT_FAIL, "writing cfg: %s", strerror(errno));
			goto out;
		}
		live_slot_reset(in.live, (__u32)found);
		if (path_clear(&in, (__u32)found)) {
			rc = fail(EXIT_FAIL, "path %d is out of use but its entries are not cleared: %s", found,
				  strerror(errno));
			goto out;
		}
		printf("path %d via %s removed; %u left\n", found, via, in.cfg.npaths);
		rc = 0;
		goto out;
	}
	rc = fail(EXIT_USAGE, "wps ingress path: add, del, set or list");
out:
	inst_close(&in);
	return rc;
}

/* ---- rules ------------------------------------------------------------------- */

static int read_rules(int fd, struct wps_in_rule *r, int *n)
{
	*n = 0;
	for (__u32 i = 0; i < WPS_IN_MAX_RULES; i++) {
		if (bpf_map_lookup_elem(fd, &i, &r[i]))
			return -1;
		if (r[i].used)
			*n = (int)i + 1;
		else
			break;
	}
	return 0;
}

/*
 * After the rules changed: flows keep the rule they were classified under
 * while cfg.rules_gen stays, so it moves (cfg read afresh: only this field
 * is ours to change here).
 */
static int rules_changed(struct inst *in)
{
	struct wps_in_rule rules[WPS_IN_MAX_RULES];
	__u32 zero = 0;
	int n;

	if (bpf_map_lookup_elem(in->cfg_fd, &zero, &in->cfg) || read_rules(in->rules_fd, rules, &n))
		return -1;
	in->cfg.rules_gen++;
	wps_in_cfg_sync_rules(&in->cfg, rules, n);
	return bpf_map_update_elem(in->cfg_fd, &zero, &in->cfg, BPF_ANY);
}

/* The rule's options, as wps_rule_parse() reads them: "--name" "value" pairs. */
struct rule_args {
	const char *dev;
	char *rest[64], name[64][32];
	int nrest;
};

static int rule_opt(void *ctx, const struct optab *o, const char *v)
{
	struct rule_args *a = ctx;

	if (o->key == 'd') {
		a->dev = v;
		return 0;
	}
	if (a->nrest + 2 > 64)
		return fail(EXIT_USAGE, "wps ingress rule: too many options");
	snprintf(a->name[a->nrest], sizeof(a->name[0]), "--%s", o->name);
	a->rest[a->nrest] = a->name[a->nrest];
	a->nrest++;
	if (v)
		a->rest[a->nrest++] = (char *)v;
	return 0;
}

/* Rule k (added or changed) written and announced: 0, or the exit status (said). */
static int rule_write(struct inst *in, __u32 k, const struct wps_in_rule *nr)
{
	char buf[512];

	if (bpf_map_update_elem(in->rules_fd, &k, nr, BPF_ANY) || rules_changed(in))
		return fail(EXIT_FAIL, "writing rule: %s", strerror(errno));
	wps_rule_format(nr, buf, sizeof(buf));
	printf("rule %u: %s\n", k, buf);
	return 0;
}

static int rule_cmd(const struct optab_cmd *c, int argc, char **argv)
{
	static struct rule_args args;
	const char *verb = strrchr(c->path, ' ') + 1, *dev;
	struct wps_in_rule rules[WPS_IN_MAX_RULES], nr;
	char **rest = args.rest, err[256], buf[512];
	int nrest, n, rc = optab_parse(c, argc, argv, rule_opt, &args, NULL);
	struct inst in;

	if (rc)
		return OPTAB_STATUS(rc);
	dev = args.dev;
	nrest = args.nrest;
	rc = EXIT_FAIL;
	if (!dev)
		return fail(EXIT_USAGE, "wps ingress rule %s: --dev DEV is required", verb);
	if (!strcmp(verb, "add") || !strcmp(verb, "del") || !strcmp(verb, "change")) {
		if (wps_rule_parse(nrest, rest, &nr, err, sizeof(err))) {
			/* del needs no quantum: match on the classifier alone */
			if (strcmp(verb, "del") || !strstr(err, "--quantum"))
				return fail(EXIT_USAGE, "%s", err);
		}
	}
	if ((rc = inst_open(dev, &in)))
		goto out;
	if (read_rules(in.rules_fd, rules, &n)) {
		rc = fail(EXIT_FAIL, "reading rules: %s", strerror(errno));
		goto out;
	}
	if (!strcmp(verb, "list")) {
		for (int i = 0; i < n; i++) {
			wps_rule_format(&rules[i], buf, sizeof(buf));
			printf("%d: %s\n", i, buf);
		}
		rc = 0;
		goto out;
	}
	if (!strcmp(verb, "add")) {
		if (!in.cfg.ecmp && !in.cfg.npaths) {
			rc = fail(EXIT_USAGE, "%s has no member path: add one first (wps ingress path add)", dev);
			goto out;
		}
		for (int i = 0; i < n; i++)
			if (wps_rules_overlap(&rules[i], &nr)) {
				wps_rule_format(&rules[i], buf, sizeof(buf));
				rc = fail(UB_EXIT_CONFLICT, "rule overlaps rule %d (%s)", i, buf);
				goto out;
			}
		if (n >= WPS_IN_MAX_RULES) {
			rc = fail(UB_EXIT_CONFLICT, "%d rules already: the most a WPS ingress has", WPS_IN_MAX_RULES);
			goto out;
		}
		rc = rule_write(&in, (__u32)n, &nr);
		goto out;
	}
	for (int i = 0; i < n && !strcmp(verb, "change"); i++) {
		if (!wps_rule_same_match(&rules[i], &nr))
			continue;
		rc = rule_write(&in, (__u32)i, &nr);
		goto out;
	}
	for (int i = 0; i < n && strcmp(verb, "change"); i++) {
		if (!wps_rule_same_match(&rules[i], &nr))
			continue;
		/* Close the gap from the end backwards: the program stops at the first unused slot. */
		for (int j = i; j + 1 < n; j++) {
			__u32 k = (__u32)j;

			bpf_map_update_elem(in.rules_fd, &k, &rules[j + 1], BPF_ANY);
		}
		struct wps_in_rule empty = {};
		__u32 last = (__u32)n - 1;
		bpf_map_update_elem(in.rules_fd, &last, &empty, BPF_ANY);
		if (rules_changed(&in)) {
			rc = fail(EXIT_FAIL, "writing %s/cfg: %s", pin_display(in.dir), strerror(errno));
			goto out;
		}
		printf("rule %d removed; %d left\n", i, n - 1);
		rc = 0;
		goto out;
	}
	rc = fail(UB_EXIT_NOTFOUND, "no rule with that --dst/--src/--proto/--dport");
out:
	inst_close(&in);
	return rc;
}

static int path_add(int argc, char **argv) { return path_cmd(&path_add_cmd, argc, argv); }
static int path_del(int argc, char **argv) { return path_cmd(&path_del_cmd, argc, argv); }
static int path_set(int argc, char **argv) { return path_cmd(&path_set_cmd, argc, argv); }
static int path_list(int argc, char **argv) { return path_cmd(&path_list_cmd, argc, argv); }
static int rule_add(int argc, char **argv) { return rule_cmd(&rule_add_cmd, argc, argv); }
static int rule_del(int argc, char **argv) { return rule_cmd(&rule_del_cmd, argc, argv); }
static int rule_change(int argc, char **argv) { return rule_cmd(&rule_change_cmd, argc, argv); }
static int rule_list(int argc, char **argv) { return rule_cmd(&rule_list_cmd, argc, argv); }
