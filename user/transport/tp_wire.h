/* SPDX-License-Identifier: BSD-2-Clause */
/* TP packets to and from bytes: parsing, and the headers a channel writes (tp_wire.c). */
#ifndef UBXDP_TP_WIRE_H
#define UBXDP_TP_WIRE_H

#include "transport/tp_int.h"

/* 0, or -EINVAL with *why set to the reason (a short key). */
int tp_parse(const void *pkt, size_t len, struct tp_parsed *p, const char **why);
/* TAH [MAETAH] [IMMETAH] [TVETAH] at b, the payload up to end, into p. 0, or
 * -EINVAL when cut short. */
int tp_parse_ta(const uint8_t *b, const uint8_t *end, struct tp_parsed *p);
/* The TPH of a channel's packet at buf; its length. */
size_t tp_enc_tph(uint8_t *buf, const struct tp_chan *ch, uint8_t opcode, bool last,
		  uint8_t nlp, uint32_t psn, uint32_t tpmsn);
/* TAH and the extensions of segment seg of op at buf; its length, or 0 when
 * it does not fit in cap. */
size_t tp_enc_ta(struct tp_chan *ch, const struct tp_op *op, uint32_t seg, uint8_t *buf,
		 size_t cap);

#endif
