// SPDX-License-Identifier: BSD-2-Clause
/* ubctl: attach ubxdp roles to interfaces and manage their pinned maps. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "ubctl.h"

bool ubctl_verbose;

int fail(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("ubctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}

void warnx_(const char *fmt, ...)
{
	va_list ap;

	fputs("ubctl: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* libbpf's own chatter (and the verifier log) only with -v. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!ubctl_verbose && level != LIBBPF_WARN)
		return 0;
	if (!ubctl_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void usage(FILE *f)
{
	fputs("usage: ubctl [-v] COMMAND ...\n"
	      "\n"
	      "  ub2e attach --ub-dev DEV --ip-dev DEV [--generic] [--name NAME | --pin-path DIR]\n"
	      "              [--map PID[/PERM]=VLAN]... [--partition PID]... [--strict] [--untagged]\n"
	      "              [--light-ce ce|ect0|ect1] [--markable ect0|ect1] [--ce-to severe|light]\n"
	      "              [--ect1-to markable|light] [--cci-policy forward|drop] [--rt 0-3] [--vl 0-15]\n"
	      "              [--default-pid PID] [--default-perm 0|1] [--no-ttl-dec] [--ub-ethertype HEX]\n"
	      "  ub2e detach  (--ub-dev DEV --ip-dev DEV | --name NAME | --pin-path DIR)\n"
	      "  ub2e status  [instance]\n"
	      "  ub2e map add PID[/PERM]=VLAN|PID ... [instance]\n"
	      "  ub2e map del PID[/PERM] ... [instance]\n"
	      "  ub2e map list [--json] [instance]\n"
	      "  stats [--json] [--name NAME]\n"
	      "\n"
	      "Instances are pinned under /sys/fs/bpf/ubxdp/<role>/<name>/; the default name is\n"
	      "[<netns>:]<ub-dev>-<ip-dev>. See README.md for the mapping rules and bpftool use.\n", f);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "-v")) {
		ubctl_verbose = true;
		argv++;
		argc--;
	}
	libbpf_set_print(libbpf_print);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "ub2e"))
		return cmd_ub2e(argc - 1, argv + 1);
	if (!strcmp(argv[1], "wps") && argc > 2 && !strcmp(argv[2], "egress"))
		return cmd_wps_egress(argc - 2, argv + 2);
	if (!strcmp(argv[1], "stats"))
		return cmd_stats(argc - 1, argv + 1);
	return fail(EXIT_USAGE, "unknown command '%s' (see ubctl help)", argv[1]);
}
