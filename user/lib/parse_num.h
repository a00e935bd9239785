/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Numbers and units as every ubxdp tool reads them (ubctl, ubperf, ubpkt,
 * ubcaqm, configuration files): one grammar, one set of messages.
 *
 *   number  decimal, or hexadecimal after 0x. A leading zero is not octal:
 *           "010" is ten (unlike strtoul(..., 0)). No sign, no blanks.
 *   time    a number and a unit: ns, us, ms, s ("10ms", "500us", "2s",
 *           "100ns"); decimal fractions down to the nanosecond ("1.5s",
 *           "0.25ms"). A bare number is in the option's own unit (the
 *           one its name or man page gives: --idle-ms 500 is 500ms).
 *   size    a number and an optional k, m or g (either case): times 1024,
 *           1024^2, 1024^3 ("64k" is 65536), as ubperf --size always took.
 *
 * Every parser checks a range and, when the value is wrong, writes one line
 * naming the option ("--rt: '9' is not a number in 0..3") into err.
 */
#ifndef UBXDP_PARSE_NUM_H
#define UBXDP_PARSE_NUM_H

#include <stddef.h>
#include <stdint.h>

/* Parse s[0..len) (len (size_t)-1: up to the NUL) as a number. Returns 0, or
 * -1 when it is empty, signed, has trailing characters or exceeds max. */
int parse_uint(const char *s, size_t len, unsigned long max, unsigned long *out);

/* A number in [min, max]. Returns 0, or -1 with "OPT: 'S' is not a number in MIN..MAX". */
int pn_uint(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out,
	    char *err, size_t errlen);

/* Nanoseconds per unit, for pn_time's `bare`. */
#define PN_NS	1ULL
#define PN_US	1000ULL
#define PN_MS	1000000ULL
#define PN_S	1000000000ULL

/*
 * A time in nanoseconds within [min_ns, max_ns]. `bare`: what a number
 * without unit counts (PN_MS for an option in milliseconds), 0 when a unit
 * is required. Returns 0, or -1 with "OPT: 'S' is not a time in MIN..MAX
 * (10ms, 500us, 2s, 100ns)".
 */
int pn_time(const char *opt, const char *s, uint64_t bare, uint64_t min_ns, uint64_t max_ns,
	    uint64_t *ns, char *err, size_t errlen);

/* A size within [min, max] (k, m, g: x1024). Returns 0, or -1 with
 * "OPT: 'S' is not a size in MIN..MAX (1500, 64k, 1m)". */
int pn_size(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out,
	    char *err, size_t errlen);

/* ns written the way pn_time reads it, in the largest exact unit ("1500us", "2s"). */
const char *pn_time_str(uint64_t ns, char *buf, size_t len);
/* A size the way pn_size reads it ("64k", "1500"). */
const char *pn_size_str(uint64_t v, char *buf, size_t len);

#endif
