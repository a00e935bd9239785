/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The parts of the UB2E fuzzer (ub2e_fuzz.c drives, ub2e_fuzz_frames.c makes
 * frames, ub2e_fuzz_check.c says what each frame may become and checks it).
 */
#ifndef UBXDP_UB2E_FUZZ_H
#define UBXDP_UB2E_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

#include "ub2e_maps.h"
#include "lib/npimap.h"
#include "ubmutate.h"
#include "ubref.h"

#define FRAME_MAX	1600

enum dir { TO_UBOE, TO_UB };
extern const char *const dir_name[];

/* The configuration as the checker sees it. */
struct model {
	struct ub2e_cfg cfg;
	struct npimap_entry map[16];
	size_t nmap;
	bool raw;		/* the tables hold raw_npi and raw_vlan instead */
};

/* Tables as bpftool may write them (ub2e_fuzz_check.c). */
struct raw_npi_entry {
	uint32_t pid;
	struct ub2e_npi_vlans v;
};
struct raw_vlan_entry {
	uint32_t vid, val;
};
extern const struct raw_npi_entry raw_npi[];
extern const struct raw_vlan_entry raw_vlan[];
extern const size_t n_raw_npi, n_raw_vlan;

/* Outcomes a frame may have. */
enum {
	O_FWD = 1,	/* converted and redirected */
	O_PUNT = 2,	/* received, handed to the kernel */
	O_DROP = 4,
	O_FOREIGN = 8,	/* not UB: to the kernel untouched, not received */
	O_ASIS = 16,	/* to the kernel untouched, received or not */
};

/* The switch namespace of tests/bpf/run (tests/lib/topo.env and the ports). */
struct addr {
	bool v6;
	uint8_t a[16];
};

struct fuzz_topo {
	uint8_t ub_port_mac[6], ip_port_mac[6], ubpu_mac[6], iphost_mac[6];
	unsigned ub_mtu, ip_mtu;
	struct addr src[2][2];			/* [dir][v6] */
	struct addr dst[2][16];			/* [dir][] */
	size_t ndst[2];
};
extern struct fuzz_topo topo;

/* What one BPF_PROG_TEST_RUN gave. */
struct result {
	__u32 verdict;
	uint8_t out[FRAME_MAX + 64];
	size_t out_len;
	__u64 delta[UB2E_CNT__MAX];
};

/* What went wrong with a frame, "" when nothing. */
struct verdict_ctx {
	char msg[512];
	size_t n;
};

#define FAIL(c, ...) do {								\
	if ((c)->n < sizeof((c)->msg))							\
		(c)->n += (size_t)snprintf((c)->msg + (c)->n, sizeof((c)->msg) - (c)->n, __VA_ARGS__); \
	if ((c)->n < sizeof((c)->msg))							\
		(c)->n += (size_t)snprintf((c)->msg + (c)->n, sizeof((c)->msg) - (c)->n, "; "); \
} while (0)

/* ub2e_fuzz_frames.c */
int fuzz_load_topo(const char *path);
int fuzz_load_seeds(const char *path);
size_t fuzz_make_frame(struct fz_rng *g, enum dir d, const struct model *m, uint8_t *f);

/* What a frame may become. */
struct expect {
	unsigned ok;		/* O_* */
	const char *why;
	const char *counter;	/* the drop or pass counter its reason calls for; NULL: any */
	int vid;		/* UB -> UBoE: 802.1Q VLAN, 0 untagged */
	uint32_t pid;		/* UBoE -> UB: NTH Partition ID and Permission */
	unsigned perm;
	bool local_ok;		/* a drop found only at conversion: a local destination is delivered first */
};

/* ub2e_fuzz_check.c */
int fuzz_model(const char *opts, struct model *m, char *err, size_t errlen);
/* rc: the RFC 1812 receive checks expected; mtu: the egress MTU check expected. */
void fuzz_expect(enum dir d, const uint8_t *in, const struct ref_frame *r, const struct model *m, bool rc,
		 bool mtu, struct expect *e);
/* Check a result against what the frame may become; *outcome: what it was. */
void fuzz_check(struct verdict_ctx *c, enum dir d, const uint8_t *in, size_t in_len, const struct result *res,
		const struct model *m, bool rc, const struct ref_frame *r, const struct expect *e, unsigned *outcome);
const char *fuzz_outcome_name(unsigned o);

#endif
