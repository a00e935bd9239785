/* SPDX-License-Identifier: BSD-2-Clause */
/* The receiver half of congestion control, shared by the algorithms (cc_np.c). */
#ifndef UBXDP_CC_NP_H
#define UBXDP_CC_NP_H

#include "transport/cc_int.h"

void cc_np_rx_data(struct tp_cc *cc, uint64_t now, uint32_t bytes, const struct tp_rx_meta *m);
bool cc_np_cnp_due(struct tp_cc *cc, uint64_t now, struct ub_cnpetph_fields *cnp);

#endif
