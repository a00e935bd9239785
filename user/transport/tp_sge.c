// SPDX-License-Identifier: BSD-2-Clause
/* Scatter/gather lists: an operation's payload and a posted receive's buffers. */
#include <stdlib.h>
#include <string.h>

#include "transport/tp_sge.h"

void tp_sge_out(const struct tp_sge *sge, uint32_t n, size_t off, uint8_t *dst, size_t len)
{
	for (uint32_t i = 0; i < n && len; i++) {
		size_t k;

		if (off >= sge[i].len) {
			off -= sge[i].len;
			continue;
		}
		k = sge[i].len - off < len ? sge[i].len - off : len;
		memcpy(dst, (const uint8_t *)sge[i].addr + off, k);
		dst += k;
		len -= k;
		off = 0;
	}
}

void tp_sge_in(const struct tp_sge *sge, uint32_t n, size_t off, const uint8_t *src, size_t len)
{
	for (uint32_t i = 0; i < n && len; i++) {
		size_t k;

		if (off >= sge[i].len) {
			off -= sge[i].len;
			continue;
		}
		k = sge[i].len - off < len ? sge[i].len - off : len;
		memcpy((uint8_t *)sge[i].addr + off, src, k);
		src += k;
		len -= k;
		off = 0;
	}
}

void tp_rb_free(struct tp_recvbuf *rb)
{
	free(rb->sgev);
	rb->sgev = NULL;
	rb->nsge = 0;
}

void tp_op_free(struct tp_op *op)
{
	free(op->heap);
	op->heap = NULL;
	op->sgev = NULL;
}

/* The segments' lengths summed; false when one has no address. */
bool tp_sge_total(const struct tp_sge *sge, uint32_t n, size_t *len)
{
	*len = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!sge[i].addr && sge[i].len)
			return false;
		*len += sge[i].len;
	}
	return true;
}
