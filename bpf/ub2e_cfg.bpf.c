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
