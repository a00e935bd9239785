// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl wps boundary attach|detach --dev DEV: the domain-edge filter on DEV's
 * TC ingress (WPS packets from outside are dropped) and egress (WPS packets
 * never leave), counted; pinned under <bpffs>/ubxdp/wps/boundary/<name>/.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "wps_boundary.skel.h"
#include "wps/wps_cfg.h"
#include "wps/wps_pins.h"
#include "ubctl/ubctl.h"

const struct ubctl_role wps_boundary_role = {
	.name = "wps boundary",
	.key = "wps_boundary",
	.pin_dir = WPS_ROLE_BOUNDARY,
	.pins = (const struct role_pin[]){
		ROLE_MAP(wps_boundary, WPS_PIN_STATS, wps_bnd_stats),
		ROLE_PROG(wps_boundary, WPS_PIN_PROG_IN, wps_boundary_in),
		ROLE_PROG(wps_boundary, WPS_PIN_PROG_OUT, wps_boundary_out),
		{ 0 },
	},
	.tc = { WPS_TC_HANDLE, WPS_TC_PRIO_BOUNDARY, true, true },
	.stats_pin = WPS_PIN_STATS,
	.ncounters = WPS_BND_CNT__MAX,
	.counter_name = wps_bnd_counter_name,
};

static const struct optab dev_opts[] = {
	{ "dev", "DEV", "the port at the domain's edge (required)", 'd', 0 },
	{ 0 },
};

static int boundary_attach(int argc, char **argv);
static int boundary_detach(int argc, char **argv);

static const struct optab_cmd boundary_cmd = {
	.path = "ubctl wps boundary",
	.summary = "the WPS domain-edge filter: WPS packets neither enter nor leave through a port",
}, boundary_attach_cmd = {
	.path = "ubctl wps boundary attach",
	.summary = "drop packets carrying the WPS option entering or leaving through DEV",
	.synopsis = "--dev DEV",
	.about = "On DEV's TC ingress (WPS packets from outside are dropped) and egress (WPS\n"
		 "packets never leave), counted in ubctl stats; pinned under\n"
		 "/sys/fs/bpf/ubxdp/wps/boundary/[NETNS:]DEV/.",
	.opts = dev_opts,
	.run = boundary_attach,
}, boundary_detach_cmd = {
	.path = "ubctl wps boundary detach",
	.summary = "take the filter off DEV and remove its pins",
	.synopsis = "--dev DEV",
	.opts = dev_opts,
	.run = boundary_detach,
};

const struct optab_cmd *const wps_boundary_cmds[] = {
	&boundary_cmd, &boundary_attach_cmd, &boundary_detach_cmd, NULL,
};

static int boundary(const struct optab_cmd *c, int argc, char **argv)
{
	struct wps_boundary *skel;
	char dir[PATH_MAX];
	const char *dev = NULL;
	unsigned ifx;
	struct stat st;
	bool tcx;
	int rc = optab_parse(c, argc, argv, optab_str, &dev, NULL);

	if (rc)
		return OPTAB_STATUS(rc);
	if (!dev)
		return fail(EXIT_USAGE, "%s: --dev DEV is required", c->path + 6);
	ifx = if_nametoindex(dev);
	if (!ifx)
		return fail(UB_EXIT_NOTFOUND, "unknown device '%s'", dev);
	if (c == &boundary_detach_cmd) {
		if ((rc = pin_dev_instance_dir(WPS_ROLE_BOUNDARY, dev, true, dir, sizeof(dir))) ||
		    (rc = role_detach_tc(&wps_boundary_role, dir, ifx, dev)))
			return rc;
		pin_remove_dir(dir);
		printf("wps boundary detached from %s\n", dev);
		return 0;
	}
	if ((rc = pin_dev_instance_dir(WPS_ROLE_BOUNDARY, dev, false, dir, sizeof(dir))))
		return rc;
	if (!stat(dir, &st))
		return fail(UB_EXIT_CONFLICT, "a WPS boundary filter is already on %s: detach it first", dev);
	skel = wps_boundary__open_and_load();
	if (!skel)
		return fail(UB_EXIT_KERNEL, "loading the boundary filter failed: %s (run with -v)", strerror(errno));
	rc = EXIT_FAIL;
	if (pin_mkdir_p(dir)) {
		fail(EXIT_FAIL, "cannot create %s: %s", dir, strerror(errno));
		goto out;
	}
	if (role_pin(&wps_boundary_role, skel, dir))
		goto unpin;
	rc = role_tc_attach(&wps_boundary_role, bpf_program__fd(skel->progs.wps_boundary_in), ifx, false, dir,
			    WPS_PIN_LINK_IN, &tcx);
	if (rc) {
		rc = fail(UB_EXIT_KERNEL, "TC attach on %s ingress: %s", dev, strerror(-rc));
		goto unpin;
	}
	rc = role_tc_attach(&wps_boundary_role, bpf_program__fd(skel->progs.wps_boundary_out), ifx, true, dir,
			    WPS_PIN_LINK_OUT, &tcx);
	if (rc) {
		if (!tcx)
			role_tc_detach(&wps_boundary_role, ifx, false, -1);
		rc = fail(UB_EXIT_KERNEL, "TC attach on %s egress: %s", dev, strerror(-rc));
		goto unpin;
	}
	printf("wps boundary attached: %s (in and out) by %s, pinned at %s\n", dev, LINK_TC_WAY(tcx), pin_display(dir));
	rc = 0;
	goto out;
unpin:
	role_unpin(dir);
out:
	wps_boundary__destroy(skel);
	return rc;
}

static int boundary_attach(int argc, char **argv)
{
	return boundary(&boundary_attach_cmd, argc, argv);
}

static int boundary_detach(int argc, char **argv)
{
	return boundary(&boundary_detach_cmd, argc, argv);
}
