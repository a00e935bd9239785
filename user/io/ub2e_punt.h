/* SPDX-License-Identifier: BSD-2-Clause */
/* How the UB2E switch's punts carry their mark to TC: XDP metadata, or a keyed header. */
#ifndef UBXDP_UB2E_PUNT_H
#define UBXDP_UB2E_PUNT_H

#include <stdbool.h>
#include <linux/types.h>

/* Whether this kernel lets an XDP program call bpf_xdp_adjust_meta() (probed once). */
bool ub2e_xdp_meta_ok(void);

/*
 * The value of the programs' ub2e_punt_key to load with: 0 where the kernel
 * lets XDP write metadata, else a random key that is never 0 (the punt
 * header's, struct ub2e_punt_hdr).
 */
__u64 ub2e_punt_key_pick(void);

#endif
