/* SPDX-License-Identifier: BSD-2-Clause */
/* What the fixture runner (ub2e_testrun.c) shares with the fuzzer (ub2e_fuzz.c). */
#ifndef UBXDP_UB2E_HARNESS_H
#define UBXDP_UB2E_HARNESS_H

#include <stddef.h>

#include <linux/types.h>

struct ub2e;
extern struct ub2e *skel;	/* the loaded UB2E programs and maps */
extern unsigned ub_if, ip_if;	/* ingress ports of to_uboe and to_ub */
extern __u64 punt_key;		/* skel's ub2e_punt_key: 0, punts carry XDP metadata */

/* The key of the fixtures' punt headers (gen_ub2e_fixtures.py: PUNT_KEY, "UB2EPUNT"). */
#define UB2E_TEST_PUNT_KEY 0x5542324550554e54ull

/* Load the programs with this ub2e_punt_key into skel, its ports in the tx maps. 0 or -1 (said). */
int ub2e_harness_load(__u64 key);

/* Put the switch into the state ubctl options ("--strict --map 5=100") describe. */
int configure(const char *opts, char *err, size_t errlen);

/* `ub2e_testrun fuzz [options]`: argv[0] is "fuzz". */
int ub2e_fuzz_main(int argc, char **argv);

#endif
