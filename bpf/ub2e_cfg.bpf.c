// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The UB2E switch's configuration, defined once for the linked ub2e object
 * (the programs see it through the extern in ub2e_common.bpf.h). Its own
 * section, so that the array map libbpf makes of it holds exactly one
 * struct ub2e_cfg, the layout the pinned `cfg` map has always had. All zero
 * until ubctl writes it: no UB EtherType matches, so everything passes.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "ub2e_maps.h"

struct ub2e_cfg ub2e_cfg SEC(".data.cfg");

/*
 * How a punt carries its mark to TC ingress, fixed at load (the loader sets it,
 * user/io/ub2e_punt.c): 0, in XDP metadata; otherwise in a header that ends
 * with this key (struct ub2e_punt_hdr), for kernels that refuse bpf_xdp_adjust_meta() to XDP. Read-only
 * data: the verifier prunes the way not taken, so a kernel without the helper
 * never sees the call.
 */
const volatile __u64 ub2e_punt_key = 0;
