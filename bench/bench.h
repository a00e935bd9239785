/* SPDX-License-Identifier: BSD-2-Clause */
/* ubxdp_bench: what main.c calls in its parts, and what the parts share (bench.c). */
#ifndef UBXDP_BENCH_H
#define UBXDP_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xdp_bench_opts {
	const char *bpf_dir;	/* where floor_*.bpf.o and testrun_reset.bpf.o are */
	const char *ub_if;	/* switch's UB-side port (ingress of UB -> UBoE) */
	const char *ip_if;	/* switch's IP-side port (ingress of UBoE -> UB) */
	int repeat;		/* BPF_PROG_RUN repetitions per measurement */
	int rounds;		/* interleaved rounds; medians are taken over these */
	bool npi_entry;		/* put partition 1 -> VLAN 1 in ub2e_npi2vlan (default: empty) */
	const char *baseline;	/* another build's ub2e.linked.o, timed beside this one, or NULL */
	bool no_live;		/* leave out the live-frames table */
	bool no_npi;		/* leave out the NPI table size table */
};

/* Both print their table; they return 0, or 1 after saying on stderr what failed. */
int xdp_bench(const struct xdp_bench_opts *o);
int icrc_bench(int rounds);
/* Transport goodput vs loss in simulated time (bench/tp_goodput.c). */
int tp_goodput_bench(void);
int wps_reorder_bench(int rounds);
int wps_egress_bench(const struct xdp_bench_opts *o);
/* Congestion control and channel groups in simulated time (bench/cc_bench.c). */
int cc_bench(void);

/* bench.c */
/* CPU time of this thread: leaves out the time others ran (the machine is shared). */
uint64_t bench_cpu_ns(void);
double bench_median(const double *v, int n);
double bench_min(const double *v, int n);

#endif
