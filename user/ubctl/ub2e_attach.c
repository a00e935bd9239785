// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl ub2e attach: every check first (ports free, plan consistent, no
 * instance there), then load, fill the maps, pin, and attach the TC slow
 * path before the XDP programs; a failure half way takes off what was
 * attached and removes the pins.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* uapi of kernel 6.3; the distribution's headers may predate it. */
#ifndef BPF_F_XDP_DEV_BOUND_ONLY
#define BPF_F_XDP_DEV_BOUND_ONLY	(1U << 6)
#endif

#include "ub2e_maps.h"	/* first: the skeleton's .data.cfg is a struct ub2e_cfg */
#include "ub2e.skel.h"
#include "lib/ub2e_cfg.h"
#include "io/ub2e_ports.h"
#include "io/ub2e_punt.h"
#include "lib/npimap.h"
#include "ubctl/ub2e_int.h"
#include "io/ub2e_pins.h"
#include "io/ub2e_tables.h"

/* The switch attaches by XDP links, which share a hook with no other program. */
static int xdp_conflict(const char *dev, __u32 prog_id)
{
	if (xdp_is_dispatcher(prog_id))
		return fail(UB_EXIT_CONFLICT, "%s has libxdp's dispatcher (xdp-loader, program %u): an XDP link cannot "
			    "share the hook with it; xdp-loader unload %s --all first", dev, prog_id, dev);
	return fail(UB_EXIT_CONFLICT, "%s already has an XDP program (id %u); detach it first", dev, prog_id);
}

static int check_dev(const char *opt, const char *dev, unsigned *ifindex)
{
	__u32 prog_id = 0;

	if (!dev)
		return fail(EXIT_USAGE, "ub2e attach needs --%s DEV", opt);
	*ifindex = if_nametoindex(dev);
	if (!*ifindex)
		return fail(UB_EXIT_NOTFOUND, "--%s %s: no such network device", opt, dev);
	if (!bpf_xdp_query_id((int)*ifindex, 0, &prog_id) && prog_id)
		return xdp_conflict(dev, prog_id);
	return 0;
}

static int attach_err(const char *dev, int err, bool generic)
{
	if (err == -EPERM || err == -EACCES)
		return fail(UB_EXIT_KERNEL, "attach to %s: permission denied (needs root: CAP_BPF, CAP_NET_ADMIN)", dev);
	if (err == -EBUSY || err == -EEXIST)
		return fail(UB_EXIT_CONFLICT, "%s already has an XDP program (attached since the check); detach it first", dev);
	if (!generic && (err == -EOPNOTSUPP || err == -EINVAL))
		return fail(UB_EXIT_KERNEL, "native XDP refused by %s (%s): retry with --generic", dev, strerror(-err));
	return fail(UB_EXIT_KERNEL, "attach to %s: %s", dev, strerror(-err));
}

/* One line with libbpf's own words for what failed. */
static int load_err(int rc)
{
	const char *why = ubctl_libbpf_error();
	const char *hint = rc == -EPERM || rc == -EACCES ? "needs root: CAP_BPF, CAP_NET_ADMIN" : "-v shows the verifier log";

	if (*why)
		return fail(UB_EXIT_KERNEL, "loading BPF programs failed (%s): %s", hint, why);
	return fail(UB_EXIT_KERNEL, "loading BPF programs failed (%s): %s", hint, strerror(-rc));
}

/*
 * The kernel's own answers to punted packets (ICMP Time Exceeded, Fragmentation
 * Needed, Port Unreachable, ...) must leave converted, in the partition of the
 * packet they answer: fwmark_reflect gives them that packet's skb->mark, which
 * TC egress converts from. A namespace-wide setting, so it stays after detach
 * (another switch may share the namespace; without marks it changes nothing).
 */
static void fwmark_reflect_on(void)
{
	static const char *const fams[] = { "ipv4", "ipv6" };
	char p[64];
	int v;

	for (int i = 0; i < 2; i++) {
		FILE *f;

		snprintf(p, sizeof(p), "/proc/sys/net/%s/fwmark_reflect", fams[i]);
		f = fopen(p, "r");
		if (!f)
			continue;	/* no such family here */
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
		if (v == 1)
			continue;
		f = fopen(p, "w");
		if (!f || fputs("1\n", f) < 0 || fclose(f)) {
			warnx_("cannot set net.%s.fwmark_reflect=1 (%s): the kernel's ICMP answers to UB packets "
			       "would leave unconverted, so the slow path drops them", fams[i], strerror(errno));
			continue;
		}
		printf("ub2e: set net.%s.fwmark_reflect=1 in this network namespace, so that the kernel's "
		       "ICMP answers to UB packets leave converted (left set on detach)\n", fams[i]);
	}
}

/* The token buckets of the switch's own answers out of each port, full (out of
 * the UB-side port: too big for a CAQM tag, --caqm-tag). */
static int icmp_limit_fill(struct ub2e *skel, unsigned ub_if, unsigned ip_if, const struct ub2e_args *a)
{
	struct ub2e_icmp_limit l = {
		.rate = a->icmp_rate, .burst = a->icmp_burst,
		.credit = (__u64)a->icmp_burst * UB2E_NSEC_PER_SEC,
	};
	int fd = bpf_map__fd(skel->maps.ub2e_icmp_limit);

	return bpf_map_update_elem(fd, &ip_if, &l, BPF_ANY) || bpf_map_update_elem(fd, &ub_if, &l, BPF_ANY);
}

/* Source addresses of the switch's own Packet Too Big answers where the kernel
 * cannot tell them (BPF_FIB_LOOKUP_SRC is 6.7+; bpf/ub2e_tc.bpf.c), per port;
 * *src gets the IP-side port's. */
static int icmp_src_fill(struct ub2e *skel, const char *ub_dev, const char *ip_dev, struct ub2e_icmp_src *src)
{
	__u32 ip = UB2E_SIDE_IP, ub = UB2E_SIDE_UB;
	int fd = bpf_map__fd(skel->maps.ub2e_icmp_src);
	struct ub2e_icmp_src usrc;

	return ub2e_icmp_src_read(&usrc, ub_dev) || bpf_map_update_elem(fd, &ub, &usrc, BPF_ANY) ||
	       ub2e_icmp_src_read(src, ip_dev) || bpf_map_update_elem(fd, &ip, src, BPF_ANY) ? -1 : 0;
}

static void icmp_src_warn(const struct ub2e_icmp_src *src, const char *ip_dev)
{
	if (!src->ip4)
		warnx_("%s has no IPv4 address: UBoE -> UB IPv4 packets too big for the UB side get the switch's "
		       "Fragmentation Needed only from another port's address (kernel 6.7+), else none "
		       "(slow_icmp_no_source)", ip_dev);
	if (!(src->ip6[0] | src->ip6[1] | src->ip6[2] | src->ip6[3]))
		warnx_("%s has no IPv6 address: UBoE -> UB IPv6 packets too big for the UB side get the switch's "
		       "Packet Too Big only from another port's address (kernel 6.7+), else none "
		       "(slow_icmp_no_source)", ip_dev);
}

/*
 * The slow path's ingress and egress programs on a port: tcx links pinned as
 * link_tc_{ingress,egress}_SIDE where the kernel has tcx (*tcx true), else the
 * switch's clsact filters (clsact made if missing). 0 or -errno; on failure no
 * filter is left, a tcx link made may be (role_unpin takes it).
 */
static int tc_attach(unsigned ifindex, int ingress_fd, int egress_fd, const char *dir, const char *side, bool *tcx)
{
	char in[64], eg[64];
	int rc;

	snprintf(in, sizeof(in), LINK_PIN_PREFIX "tc_ingress_%s", side);
	snprintf(eg, sizeof(eg), LINK_PIN_PREFIX "tc_egress_%s", side);
	rc = role_tc_attach(&ub2e_role, ingress_fd, ifindex, false, dir, in, tcx);
	if (rc)
		return rc;
	rc = role_tc_attach(&ub2e_role, egress_fd, ifindex, true, dir, eg, tcx);
	if (rc && !*tcx)
		role_tc_detach(&ub2e_role, ifindex, false, ingress_fd);
	return rc;
}

int ub2e_tc_detach(unsigned ifindex, int ingress_fd, int egress_fd)
{
	char name[IF_NAMESIZE] = "?";
	int failures = 0;

	for (int eg = 0; eg < 2; eg++) {
		int rc = role_tc_detach(&ub2e_role, ifindex, eg, eg ? egress_fd : ingress_fd);

		if (rc < 0) {
			if_indextoname(ifindex, name);
			warnx_("detach TC %s from %s: %s", eg ? "egress" : "ingress", name, strerror(-rc));
			failures++;
		}
	}
	return failures;
}

int ub2e_do_attach(struct ub2e_args *a)
{
	unsigned ub_if, ip_if;
	char dir[PATH_MAX], err[512];
	struct ub2e *skel = NULL;
	struct bpf_program *to_ub;
	struct ub2e_icmp_src src;
	bool vlan_meta, tcx = false;
	struct stat st;
	__u32 zero = 0;
	int rc, tc_in = -1, tc_ub = -1, tc_ip = -1;

	if ((rc = check_dev("ub-dev", a->sel.ub_dev, &ub_if)) || (rc = check_dev("ip-dev", a->sel.ip_dev, &ip_if)))
		return rc;
	if (ub_if == ip_if)
		return fail(EXIT_USAGE, "--ub-dev and --ip-dev must be different devices");
	if (npimap_check(a->plan, a->nplan, err, sizeof(err)))
		return fail(EXIT_USAGE, "refusing mapping: %s", err);
	int prc = pin_instance_dir("ub2e", &a->sel, false, dir, sizeof(dir), err, sizeof(err));

	if (prc)
		return fail(prc, "%s", err);
	if (!stat(dir, &st))
		return fail(UB_EXIT_CONFLICT, "an instance is already pinned at %s: detach it first", pin_display(dir));

	skel = ub2e__open();
	if (!skel)
		return fail(EXIT_FAIL, "cannot open the UB2E BPF object: %s", strerror(errno));
	/* A port that strips VLAN tags into offload metadata: the variant that
	 * reads them, device-bound to that port as the kfunc requires (native
	 * XDP only); everywhere else the plain program, which pays nothing. */
	vlan_meta = !a->generic && ub2e_rx_vlan_offload(a->sel.ip_dev) && ub2e_have_rx_vlan_kfunc();
	to_ub = vlan_meta ? skel->progs.ub2e_to_ub_vlanmeta : skel->progs.ub2e_to_ub;
	if (vlan_meta &&
	    (bpf_program__set_autoload(skel->progs.ub2e_to_ub, false) || bpf_program__set_autoload(to_ub, true) ||
	     bpf_program__set_flags(to_ub, bpf_program__flags(to_ub) | BPF_F_XDP_DEV_BOUND_ONLY))) {
		ub2e__destroy(skel);
		return fail(EXIT_FAIL, "cannot set up the VLAN metadata program: %s", strerror(errno));
	}
	if (vlan_meta)
		bpf_program__set_ifindex(to_ub, ip_if);
	skel->rodata->ub2e_punt_key = ub2e_punt_key_pick();
	rc = ub2e__load(skel);
	if (rc) {
		ub2e__destroy(skel);
		return load_err(rc);
	}

	/* XDP routes only frames addressed to the port (RFC 1812 §5.3.7). */
	if (ub2e_cfg_ports(&a->cfg, a->sel.ub_dev, a->sel.ip_dev)) {
		rc = fail(EXIT_FAIL, "reading the ports' MAC addresses: %s", strerror(errno));
		goto out;
	}
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.data_cfg), &zero, &a->cfg, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_tx_ip), &ip_if, &ip_if, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_tx_ub), &ub_if, &ub_if, BPF_ANY) ||
	    ub2e_tables_write(bpf_map__fd(skel->maps.ub2e_npi2vlan), bpf_map__fd(skel->maps.ub2e_vlan2npi),
			      a->plan, a->nplan) ||
	    icmp_src_fill(skel, a->sel.ub_dev, a->sel.ip_dev, &src) || icmp_limit_fill(skel, ub_if, ip_if, a)) {
		rc = fail(EXIT_FAIL, "filling the switch maps: %s", strerror(errno));
		goto out;
	}

	/* Pin before attaching, so an attached switch is always manageable. */
	if (pin_mkdir_p(dir)) {
		rc = fail(EXIT_FAIL, "cannot create %s: %s", dir, strerror(errno));
		goto out;
	}
	/* Which network namespace the ports are in, for detach run elsewhere. */
	if (netns_record(dir, err, sizeof(err))) {
		rc = fail(EXIT_FAIL, "%s", err);
		goto unpin;
	}
	if ((rc = role_pin(&ub2e_role, skel, dir)))
		goto unpin;

	/* The slow path first: from the moment XDP punts, TC converts what the kernel sends. */
	tc_in = bpf_program__fd(skel->progs.ub2e_slow_in);
	tc_ub = bpf_program__fd(skel->progs.ub2e_slow_ub);
	tc_ip = bpf_program__fd(skel->progs.ub2e_slow_ip);
	rc = tc_attach(ub_if, tc_in, tc_ub, dir, "ub", &tcx);
	if (rc) {
		rc = fail(UB_EXIT_KERNEL, "attach TC to %s: %s", a->sel.ub_dev, strerror(-rc));
		goto unpin;
	}
	rc = tc_attach(ip_if, tc_in, tc_ip, dir, "ip", &tcx);
	if (rc) {
		rc = fail(UB_EXIT_KERNEL, "attach TC to %s: %s", a->sel.ip_dev, strerror(-rc));
		goto untc_ub;
	}

	/* XDP by links pinned beside the maps: they outlive ubctl, and detach
	 * (or the last reference going) takes them off. */
	rc = link_xdp_pinned(bpf_program__fd(skel->progs.ub2e_to_uboe), ub_if, a->generic, dir, UB2E_PIN_LINK_XDP_UB);
	if (rc) {
		rc = attach_err(a->sel.ub_dev, rc, a->generic);
		goto untc;
	}
	rc = link_xdp_pinned(bpf_program__fd(to_ub), ip_if, a->generic, dir, UB2E_PIN_LINK_XDP_IP);
	if (rc) {
		rc = attach_err(a->sel.ip_dev, rc, a->generic);
		goto untc;
	}
	ub2e_warn_host(a->sel.ub_dev, a->sel.ip_dev, vlan_meta, a->generic);
	icmp_src_warn(&src, a->sel.ip_dev);
	fwmark_reflect_on();
	printf("ub2e attached: %s (UB side) <-> %s (IP side), %s XDP by links, TC slow path by %s, pinned at %s\n",
	       a->sel.ub_dev, a->sel.ip_dev, a->generic ? "generic" : "native",
	       LINK_TC_WAY(tcx), pin_display(dir));
	rc = 0;
	goto out;
untc:
	ub2e_tc_detach(ip_if, tc_in, tc_ip);
untc_ub:
	ub2e_tc_detach(ub_if, tc_in, tc_ub);
unpin:
	role_unpin(dir);
out:
	ub2e__destroy(skel);
	return rc;
}
