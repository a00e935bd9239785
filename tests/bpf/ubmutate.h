/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Seeded randomness and frame damage for the fuzzers (ub2e_fuzz.c, and
 * tests/unit/test_ubpkt_ref.c): bit flips, truncations, random bytes in every
 * header, lengths that lie, values at the edges of the rules, 802.1Q tags in
 * and out; afterwards the IPv4 checksum and the ICRC are often made right
 * again, so that the damage reaches the checks behind them.
 */
#ifndef UBXDP_UBMUTATE_H
#define UBXDP_UBMUTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fz_rng {
	uint64_t s;
};

uint64_t fz_splitmix(uint64_t *x);
uint32_t fz_rnd(struct fz_rng *g, uint32_t n);	/* 0..n-1, 0 when n is 0 */
bool fz_chance(struct fz_rng *g, unsigned pct);
void fz_bytes(struct fz_rng *g, uint8_t *p, size_t n);

/*
 * One to three kinds of damage to the frame f of len bytes (capacity cap).
 * `native`: lay the frame out as native UB (Eth | LPH | NTH | IP), else as
 * UBoE (Eth | [802.1Q] | IP). Returns the new length.
 */
size_t fz_mutate(struct fz_rng *g, uint8_t *f, size_t len, size_t cap, bool native);

#endif
