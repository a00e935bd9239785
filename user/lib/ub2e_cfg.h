/* SPDX-License-Identifier: BSD-2-Clause */
/* UB2E switch configuration: defaults of draft-li-uboe-00 §5 and the named choices ubctl offers. */
#ifndef UBXDP_UB2E_CFG_H
#define UBXDP_UB2E_CFG_H

#include <stddef.h>
#include "ub2e_maps.h"

void ub2e_cfg_defaults(struct ub2e_cfg *cfg);

/*
 * Apply one named option: the flags "untagged", "strict", "no-ttl-dec",
 * "caqm-tag" (value ignored) or "light-ce", "markable", "ce-to", "ect1-to",
 * "cci-policy", "rt", "vl", "ub-ethertype", "caqm-ethertype", "default-pid",
 * "default-perm". Returns 0, or -1 with one line in err.
 */
int ub2e_cfg_set(struct ub2e_cfg *cfg, const char *name, const char *value, char *err, size_t errlen);

/* What single options cannot see: the CAQM tag's EtherType must not be the native one. */
int ub2e_cfg_check(const struct ub2e_cfg *cfg, char *err, size_t errlen);

#endif
