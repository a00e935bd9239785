/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the XDP benches of ubxdp_bench share (xdp_run.c): the programs under
 * test and their frames, BPF_PROG_RUN with its checks, the objects loaded.
 * The benches: xdp_bench.c (the test_run rounds, beside the floors),
 * xdp_live.c (live frames), xdp_npi.c (the NPI table's size).
 */
#ifndef UBXDP_BENCH_XDP_BENCH_H
#define UBXDP_BENCH_XDP_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "bench.h"

#define FRAME_MAX	512
#define PAYLOAD_LEN	64	/* frames of 130-170 bytes; these programs never read the payload */
/* The switch's speed targets, per direction and IP version: time within 1.25x
 * the floor (a), live-frames rate at least 0.85x the floor's. */
#define TARGET_TIME	1.25
#define TARGET_RATE	0.85
#define STR(x)		#x
#define XSTR(x)		STR(x)

enum role {
	CONVERT,	/* a UB2E conversion program */
	FLOOR_A,	/* floor_fwd */
	FLOOR_B,	/* floor_tx */
	HARNESS,	/* testrun_null behind the harness: what the harness costs */
	EMPTY,		/* testrun_null alone: what BPF_PROG_RUN's loop costs */
};

struct bprog {
	const char *name;
	enum role role;
	int ipv;		/* IP version of its frame */
	bool bare;		/* run directly, not behind the reset harness */
	int fd;			/* program under test */
	int ifindex;		/* ingress */
	uint8_t frame[FRAME_MAX];
	uint32_t len;
	uint32_t verdict;	/* expected XDP action */
	int counter;		/* ub2e_stats counter that each full run bumps, or -1 */
	int stats_fd;		/* the ub2e_stats of its object (the baseline has its own) */
	/* what one run on its own produced; every timed run must end with the same */
	uint8_t out[FRAME_MAX + 64];
	uint32_t out_len;
	double ns[100];		/* per round, as BPF_PROG_RUN reported (harness included) */
	double net[100];	/* per round, harness subtracted */
};

struct topo {
	uint8_t ubpu_mac[6], sw_ub_mac[6], sw_ip_mac[6], iphost_mac[6];
	uint8_t ubpu4[16], iphost4[16], ubpu6[16], iphost6[16];
};

struct run {
	uint32_t retval;
	uint32_t duration;	/* kernel's average per repetition, whole ns */
	uint8_t out[FRAME_MAX + 64];
	uint32_t out_len;
};

struct objs {
	struct ub2e *ub2e;
	struct bpf_object *fwd, *tx, *reset, *base;
	int reset_fd, null_fd, target_map, frame_map, stats_map;
};

int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *xdp_name(uint32_t a);
/* The topology's MACs and addresses from the environment (tests/lib/topo.env). */
int topo_from_env(struct topo *t);
int frame_from_ubpu(struct bprog *p, const struct topo *t, int ipv, bool native);
int frame_uboe_to_ubpu(struct bprog *p, const struct topo *t, int ipv);
int test_run(int fd, const struct bprog *p, int repeat, struct run *r);
int counter_sum(int map_fd, int id, uint64_t *sum);
void dump_counters(int map_fd);
int check_output(const struct bprog *p, const struct run *r, const struct topo *t);
int prog_fd(struct bpf_object *o, const char *name);
int map_fd(struct bpf_object *o, const char *name);
int load_all(struct objs *ob, const struct xdp_bench_opts *o, int ub_if, int ip_if);
int load_baseline(struct objs *ob, const struct xdp_bench_opts *o, int ub_if, int ip_if);
void unload_all(struct objs *ob);
int timed_run(const struct objs *ob, struct bprog *p, int repeat, struct run *r);

/* The other two benches, after the test_run rounds (h: the harness's rounds). */
int live_bench(const struct objs *ob, struct bprog *ps, int n, const struct bprog *h,
	       const struct xdp_bench_opts *o);
int npi_bench(const struct objs *ob, struct bprog *ps, const struct bprog *h, const struct xdp_bench_opts *o);

#endif
