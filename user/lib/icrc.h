/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * UBoE invariant CRC (docs/WIRE.md §2) and the CRC-32 backends behind it.
 *
 * Every function takes the IP header as its start: the ICRC covers IP header
 * .. last payload byte, never L2, LPH or NTH, so it survives UB <-> UBoE
 * conversion and the ECN/DSCP/TTL edits a UB2E switch makes.
 */
#ifndef UBXDP_ICRC_H
#define UBXDP_ICRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * CRC-32/IEEE, reflected, zlib chaining: crc = 0 starts a new CRC, and passing
 * the result of one call as `crc` of the next continues over the
 * concatenation. The two backends must agree bit for bit (tests check it);
 * _fast is ISA-L when built with HAVE_ISAL, zlib otherwise.
 */
uint32_t ub_crc32_zlib(uint32_t crc, const void *buf, size_t len);
uint32_t ub_crc32_fast(uint32_t crc, const void *buf, size_t len);
const char *ub_crc32_fast_name(void);	/* "isa-l" or "zlib" */

typedef uint32_t (*ub_crc32_fn)(uint32_t crc, const void *buf, size_t len);

/*
 * The backend ub_icrc uses: the faster of zlib and _fast on this CPU (under
 * emulation zlib can win), timed once, by ub_icrc_init() or else at the first
 * ICRC; UBXDP_ICRC_CRC=zlib or =isa-l in the environment fixes it. "zlib" or
 * ub_crc32_fast_name().
 */
const char *ub_icrc_crc_name(void);
/*
 * Choose that backend now (a few microseconds of timing), so that the first
 * packet a program sends or receives does not pay for it: ep_open() and the
 * tools call it at start-up. Once chosen it stays (later calls return the
 * same); returns ub_icrc_crc_name().
 */
const char *ub_icrc_init(void);
/* Make ub_icrc use crc32 (tests); NULL: choose again at the next init or ICRC. */
void ub_icrc_use(ub_crc32_fn crc32);

/* ICRC value over `len` bytes from the IP header on (ICRC bytes excluded). */
uint32_t ub_icrc(const void *ip, size_t len_without_icrc);
/* The same with a chosen backend, for cross-checks and benchmarks. */
uint32_t ub_icrc_with(ub_crc32_fn crc32, const void *ip, size_t len_without_icrc);

/* Compute and store the ICRC in the last 4 of `len_with_icrc` bytes, LSB first. */
void ub_icrc_put(void *ip, size_t len_with_icrc);
/* Does the ICRC stored in the last 4 bytes match? False when len < 4. */
bool ub_icrc_ok(const void *ip, size_t len_with_icrc);

/* The stored ICRC field, read LSB first (0 when len < 4). */
uint32_t ub_icrc_get(const void *ip, size_t len_with_icrc);

#endif
