/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Numbers as a network engineer types them: decimal, or hexadecimal with 0x.
 * A leading zero is not octal ("010" is ten), unlike strtoul(..., 0).
 */
#ifndef UBXDP_NUMPARSE_H
#define UBXDP_NUMPARSE_H

#include <stddef.h>

/* Parse s[0..len) (len (size_t)-1: up to the NUL). Returns 0, or -1 when it is
 * empty, signed, has trailing characters or exceeds max. */
int parse_uint(const char *s, size_t len, unsigned long max, unsigned long *out);

#endif
