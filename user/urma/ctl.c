// SPDX-License-Identifier: BSD-2-Clause
/*
 * liburma's control message on the wire (docs/WIRE.md §7.3):
 *   "URMA" | ver | kind | status (errno) | mode (URMA_TM_*) | tp_type |
 *   order | flags (1: RC bind) | rx range (log2) | mtu(16) | depth(16) |
 *   nonce(32) | src EID(128) | src UASID(32) | src ID(32) | dst EID(128) |
 *   dst UASID(32) | dst ID(32) | token(32) | the acker's channel nonce(32)
 * Byte 11 was reserved, sent 0 and never read: a library before the span
 * sends 0 there and ignores what a newer one puts in it; so for bytes
 * 72-75, the accepting OPEN_ACK's own channel nonce (0 before).
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "transport/tp.h"
#include "urma/ctl.h"

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)); put16(p + 2, (uint16_t)v); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }

size_t ubx_ctl_encode(const struct ubx_ctl *m, uint8_t *b)
{
	memcpy(b, "URMA", 4);
	b[4] = CTL_VER;
	b[5] = m->kind;
	b[6] = m->status;
	b[7] = m->mode;
	b[8] = m->tp_type;
	b[9] = m->order;
	b[10] = m->flags;
	/* The default range says nothing: a channel that receives no more
	 * than an older library's sends its message byte for byte. */
	b[CTL_RX_RANGE] = m->rx_range && m->rx_range != TP_OOO_RANGE_DEFAULT ?
			  (uint8_t)(31 - __builtin_clz(m->rx_range)) : 0;
	put16(b + 12, m->mtu);
	put16(b + 14, m->depth);
	put32(b + 16, m->nonce);
	memcpy(b + 20, m->src.eid.raw, 16);
	put32(b + 36, m->src.uasid);
	put32(b + 40, m->src.id);
	memcpy(b + 44, m->dst.eid.raw, 16);
	put32(b + 60, m->dst.uasid);
	put32(b + 64, m->dst.id);
	put32(b + 68, m->token);
	put32(b + 72, m->chan_nonce);
	return CTL_LEN;
}

int ubx_ctl_decode(const uint8_t *b, size_t len, struct ubx_ctl *m)
{
	uint8_t r;

	if (len < CTL_LEN || memcmp(b, "URMA", 4) || b[4] != CTL_VER || !b[5] || b[5] > CTL_CLOSE)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->kind = b[5];
	m->status = b[6];
	m->mode = b[7];
	m->tp_type = b[8];
	m->order = b[9];
	m->flags = b[10];
	/* an older library's 0, or a range we do not know: the default */
	r = b[CTL_RX_RANGE];
	m->rx_range = r >= 8 && r <= 11 ? 1u << r : TP_OOO_RANGE_DEFAULT;
	m->mtu = get16(b + 12);
	m->depth = get16(b + 14);
	m->nonce = get32(b + 16);
	memcpy(m->src.eid.raw, b + 20, 16);
	m->src.uasid = get32(b + 36);
	m->src.id = get32(b + 40);
	memcpy(m->dst.eid.raw, b + 44, 16);
	m->dst.uasid = get32(b + 60);
	m->dst.id = get32(b + 64);
	m->token = get32(b + 68);
	m->chan_nonce = get32(b + 72);
	/* A channel would be made at it: none can be at another. */
	return m->kind == CTL_OPEN && !ubx_ub_mtu_valid(m->mtu) ? -EINVAL : 0;
}

int ubx_ctl_nonce(uint32_t *nonce)
{
	uint32_t v = 0;

	/* Not blocking: the pool not yet ready (early boot) is a failure,
	 * not a setup that hangs. */
	do {
		ssize_t n = getrandom(&v, sizeof(v), GRND_NONBLOCK);

		if (n != (ssize_t)sizeof(v))
			return n < 0 ? -errno : -EIO;
	} while (!v);
	*nonce = v;
	return 0;
}
