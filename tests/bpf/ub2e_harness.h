/* SPDX-License-Identifier: BSD-2-Clause */
/* What the fixture runner (ub2e_testrun.c) shares with the fuzzer (ub2e_fuzz.c). */
#ifndef UBXDP_UB2E_HARNESS_H
#define UBXDP_UB2E_HARNESS_H

#include <stddef.h>

struct ub2e;
extern struct ub2e *skel;	/* the loaded UB2E programs and maps */
extern unsigned ub_if, ip_if;	/* ingress ports of to_uboe and to_ub */

/* Put the switch into the state ubctl options ("--strict --map 5=100") describe. */
int configure(const char *opts, char *err, size_t errlen);

/* `ub2e_testrun fuzz [options]`: argv[0] is "fuzz". */
int ub2e_fuzz_main(int argc, char **argv);

#endif
