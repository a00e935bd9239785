/* SPDX-License-Identifier: BSD-2-Clause */
/* Scatter/gather lists of operations and posted receives (tp_sge.c). */
#ifndef UBXDP_TP_SGE_H
#define UBXDP_TP_SGE_H

#include "transport/tp_int.h"

/* Copy len bytes at byte `off` of the list out to dst (gather) or in from
 * src (scatter); the caller checked off + len against the total. */
void tp_sge_out(const struct tp_sge *sge, uint32_t n, size_t off, uint8_t *dst, size_t len);
void tp_sge_in(const struct tp_sge *sge, uint32_t n, size_t off, const uint8_t *src, size_t len);
void tp_rb_free(struct tp_recvbuf *rb);
void tp_op_free(struct tp_op *op);
/* The segments' lengths summed into *len; false when they overflow. */
bool tp_sge_total(const struct tp_sge *sge, uint32_t n, size_t *len);

#endif
