/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef UBPERF_CTL_H
#define UBPERF_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ubperf/ubperf.h"

int ctl_parse_addr(const char *s, uint8_t *ver, uint8_t ip[16]);
/* The control message m as hello application bytes (headers/ubperf_wire.h);
 * is_reply: a setup message is then an answer. Bytes written. */
size_t ctl_encode(const struct ctl_msg *m, bool is_reply, uint8_t *out, size_t cap);
/* 0, or -EINVAL when the bytes are no ubperf control message. */
int ctl_decode(const uint8_t *in, size_t len, bool is_reply, struct ctl_msg *m);

static inline uint64_t ctl_u64(const uint32_t w[2]) { return (uint64_t)w[0] << 32 | w[1]; }
static inline void ctl_set_u64(uint32_t w[2], uint64_t v)
{
	w[0] = (uint32_t)(v >> 32);
	w[1] = (uint32_t)v;
}

#endif
