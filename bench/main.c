// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubxdp_bench: ns/packet of the UB2E conversion programs beside two floor
 * programs, timed with BPF_PROG_RUN in one run, and ICRC throughput of the
 * packet library. Prints numbers; never judges the machine by them (the
 * PASS/FAIL column is the target, not an exit status).
 *
 * Run it in the switch's network namespace (scripts/bench.sh does), with the
 * topology's addresses in the environment (tests/lib/topo.env).
 */
#include <getopt.h>
#include <stdbool.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "lib/icrc.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ubxdp_bench [--bpf-dir DIR] [--ub-if DEV] [--ip-if DEV] [--repeat N]\n"
		"                   [--rounds N] [--npi-entry] [--baseline OBJ] [--no-xdp] [--no-icrc]\n"
		"                   [--no-transport] [--no-wps] [--no-live] [--no-npi]\n"
		"  Times ub2e_to_uboe / ub2e_to_ub (IPv4, IPv6) and the floor programs with\n"
		"  BPF_PROG_RUN, then ICRC throughput (zlib vs ISA-L). Run inside the switch\n"
		"  namespace with tests/lib/topo.env exported; scripts/bench.sh does both.\n"
		"  --npi-entry: map partition 1 to VLAN 1 in ub2e_npi2vlan instead of leaving\n"
		"  the table empty (ub2e_to_uboe then hits its first lookup).\n"
		"  --baseline OBJ: also time the conversions of another build of the switch\n"
		"  (its build/bpf/ub2e.linked.o, e.g. main's) in the same rounds, so that a\n"
		"  change is measured side by side with what it changes.\n"
		"  --no-live, --no-npi: leave out the live-frames and the NPI table tables\n"
		"  (quicker side-by-side runs; a profile of the test_run rounds alone).\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bpf-dir", required_argument, 0, 'b' },
		{ "ub-if", required_argument, 0, 'u' },
		{ "ip-if", required_argument, 0, 'i' },
		{ "repeat", required_argument, 0, 'r' },
		{ "rounds", required_argument, 0, 'n' },
		{ "npi-entry", no_argument, 0, 'N' },
		{ "baseline", required_argument, 0, 'B' },
		{ "no-xdp", no_argument, 0, 'X' },
		{ "no-icrc", no_argument, 0, 'C' },
		{ "no-transport", no_argument, 0, 'T' },
		{ "no-wps", no_argument, 0, 'W' },
		{ "no-live", no_argument, 0, 'L' },
		{ "no-npi", no_argument, 0, 'P' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct xdp_bench_opts o = {
		.ub_if = "sw-ub", .ip_if = "sw-ip", .repeat = 1000000, .rounds = 11,
	};
	char exe[PATH_MAX], dir[PATH_MAX + 8];
	bool run_xdp = true, run_icrc = true, run_tp = true, run_wps = true;
	int c, rc = 0;
	ssize_t n;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'b': o.bpf_dir = optarg; break;
		case 'u': o.ub_if = optarg; break;
		case 'i': o.ip_if = optarg; break;
		case 'r': o.repeat = atoi(optarg); break;
		case 'n': o.rounds = atoi(optarg); break;
		case 'N': o.npi_entry = true; break;
		case 'B': o.baseline = optarg; break;
		case 'X': run_xdp = false; break;
		case 'C': run_icrc = false; break;
		case 'T': run_tp = false; break;
		case 'W': run_wps = false; break;
		case 'L': o.no_live = true; break;
		case 'P': o.no_npi = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || o.repeat < 1 || o.rounds < 1 || o.rounds > 99) {
		usage(stderr);
		return 2;
	}
	if (!o.bpf_dir) {
		/* Installed next to the objects: build/bin/ubxdp_bench -> build/bpf. */
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0) {
			perror("readlink /proc/self/exe");
			return 1;
		}
		exe[n] = '\0';
		snprintf(dir, sizeof(dir), "%s/../bpf", dirname(exe));
		o.bpf_dir = dir;
	}

	setvbuf(stdout, NULL, _IOLBF, 0);
	ub_icrc_init();		/* outside every measurement */
	if (run_xdp)
		rc |= xdp_bench(&o);
	if (run_xdp && run_wps) {
		printf("\n");
		rc |= wps_egress_bench(&o);
	}
	if (run_icrc) {
		if (run_xdp)
			printf("\n");
		rc |= icrc_bench(o.rounds);
	}
	if (run_tp) {
		printf("\n");
		rc |= tp_goodput_bench();
		printf("\n");
		rc |= cc_bench();
	}
	if (run_wps) {
		printf("\n");
		rc |= wps_reorder_bench(o.rounds);
	}
	return rc;
}
