/* SPDX-License-Identifier: BSD-2-Clause */
/* Registered memory, inside the transport (tp_mr.c; the API is in tp.h). */
#ifndef UBXDP_TP_MR_H
#define UBXDP_TP_MR_H

#include "transport/tp_int.h"

/* The region of token_id, or NULL. */
struct tp_mr *tp_mr_find(struct tp_ep *ep, uint32_t token_id);
void tp_mr_free(struct tp_ep *ep);
/*
 * A remote access of [va, va+len) with the packet's TVETAH (p) against the
 * region its MAETAH names: its TokenID, its token value, the access flag
 * `need` (TP_ACCESS_*), its bounds and (atomics) the VA's alignment, in
 * that order. The address to access, or NULL with *st set and, for a
 * completer error, *info the reason (TP_RSPINFO_*). Counts nothing.
 */
uint8_t *tp_mr_access(struct tp_ep *ep, const struct tp_parsed *p, uint64_t va, size_t len,
		      uint32_t need, enum tp_status *st, uint8_t *info);

#endif
