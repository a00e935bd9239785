// SPDX-License-Identifier: BSD-2-Clause
/*
 * Drives user/io/nl.c in the namespace it runs in, one step a command, so
 * that the shell test checks each step with ip(8) and ethtool(8):
 *   nl_check veth NAME PEER MTU       a pair of one queue each
 *   nl_check set NAME up|down MTU MAC  one nl_link_set (MTU 0: leave it)
 *   nl_check get NAME                 "ifindex N mtu M addr MAC up|down"
 *   nl_check features NAME FEAT=on|off...
 *   nl_check active NAME              its active features, one a line
 *   nl_check del NAME
 *   nl_check watch NAME               nl_link_set down and up on NAME, then
 *                                     "events N on NAME" the monitor saw
 * Exit 0, or 1 with "nl_check: <nl_error()>" on stderr.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/rtnetlink.h>

#include "io/nl.h"

static int failed(struct nl *s)
{
	fprintf(stderr, "nl_check: %s\n", nl_error(s));
	return 1;
}

static void count_on(void *ctx, const struct nl_event *ev)
{
	int *c = ctx;

	if (ev->type == RTM_NEWLINK && ev->ifindex == c[0])
		c[1]++;
}

static int features(const char *dev, int n, char **spec)
{
	struct nl_feature f[32];
	char err[256];
	struct nl *s = nl_open_ethtool(err, sizeof(err));
	int rc;

	if (!s || n > 32) {
		fprintf(stderr, "nl_check: %s\n", s ? "too many features" : err);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		char *eq = strchr(spec[i], '=');

		if (!eq)
			return 2;
		*eq = '\0';
		f[i] = (struct nl_feature){ .name = spec[i], .on = !strcmp(eq + 1, "on") };
	}
	rc = nl_features_set(s, dev, f, (unsigned)n) ? failed(s) : 0;
	nl_close(s);
	return rc;
}

static void print_name(void *ctx, const char *name)
{
	(void)ctx;
	puts(name);
}

static int active(const char *dev)
{
	char err[256];
	struct nl *s = nl_open_ethtool(err, sizeof(err));
	int rc;

	if (!s) {
		fprintf(stderr, "nl_check: %s\n", err);
		return 1;
	}
	rc = nl_features_active(s, dev, print_name, NULL) ? failed(s) : 0;
	nl_close(s);
	return rc;
}

static int watch(struct nl *s, const char *dev)
{
	static const unsigned groups[] = { RTNLGRP_LINK };
	char err[256];
	struct nl *mon = nl_open_monitor(groups, 1, err, sizeof(err));
	int c[2] = { (int)if_nametoindex(dev), 0 }, n;

	if (!mon) {
		fprintf(stderr, "nl_check: %s\n", err);
		return 1;
	}
	if (nl_link_set(s, c[0], &(struct nl_link_change){ .up = 0 }) ||
	    nl_link_set(s, c[0], &(struct nl_link_change){ .up = 1 }))
		return failed(s);
	n = nl_monitor_read(mon, count_on, c);
	if (n < 0)
		return failed(mon);
	printf("events %d on %s\n", c[1], dev);
	nl_close(mon);
	return 0;
}

int main(int argc, char **argv)
{
	char err[256];
	struct nl *s;
	struct nl_link l;
	int rc = 0;

	if (argc < 3)
		return 2;
	s = nl_open_route(err, sizeof(err));
	if (!s) {
		fprintf(stderr, "nl_check: %s\n", err);
		return 1;
	}
	if (!strcmp(argv[1], "veth") && argc == 5) {
		rc = nl_veth_add(s, argv[2], argv[3], (uint32_t)atoi(argv[4]), 1) ? failed(s) : 0;
	} else if (!strcmp(argv[1], "set") && argc == 6) {
		uint8_t mac[6];
		struct nl_link_change c = { .up = !strcmp(argv[3], "up"), .mtu = (uint32_t)atoi(argv[4]),
					    .addr = mac };

		if (sscanf(argv[5], "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3], &mac[4],
			   &mac[5]) != 6)
			return 2;
		rc = nl_link_set(s, (int)if_nametoindex(argv[2]), &c) ? failed(s) : 0;
	} else if (!strcmp(argv[1], "get")) {
		rc = nl_link_get(s, 0, argv[2], &l) ? failed(s) : 0;
		if (!rc)
			printf("ifindex %d mtu %u addr %02x:%02x:%02x:%02x:%02x:%02x %s\n", l.ifindex, l.mtu,
			       l.addr[0], l.addr[1], l.addr[2], l.addr[3], l.addr[4], l.addr[5],
			       l.flags & IFF_UP ? "up" : "down");
	} else if (!strcmp(argv[1], "features")) {
		rc = features(argv[2], argc - 3, argv + 3);
	} else if (!strcmp(argv[1], "active")) {
		rc = active(argv[2]);
	} else if (!strcmp(argv[1], "del")) {
		rc = nl_link_del(s, 0, argv[2]) ? failed(s) : 0;
	} else if (!strcmp(argv[1], "watch")) {
		rc = watch(s, argv[2]);
	} else {
		rc = 2;
	}
	nl_close(s);
	return rc;
}
