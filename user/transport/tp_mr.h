/* SPDX-License-Identifier: BSD-2-Clause */
/* Registered memory, inside the transport (tp_mr.c; the API is in tp.h). */
#ifndef UBXDP_TP_MR_H
#define UBXDP_TP_MR_H

#include "transport/tp_int.h"

/* The region of token_id, or NULL. */
struct tp_mr *tp_mr_find(struct tp_ep *ep, uint32_t token_id);
void tp_mr_free(struct tp_ep *ep);

#endif
