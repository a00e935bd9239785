// SPDX-License-Identifier: BSD-2-Clause
/* Numbers and units, one grammar for every tool: see parse_num.h. */
#include "lib/parse_num.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int digit(char c, unsigned base)
{
	int d = c >= '0' && c <= '9' ? c - '0' :
		c >= 'a' && c <= 'f' ? c - 'a' + 10 :
		c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;

	return d < (int)base ? d : -1;
}

/* The digits of s[0..len): decimal, or hex after 0x. Returns how many
 * characters it read (0: no number there), stopping at the first that is not
 * a digit; -1 when the value exceeds max. */
static long scan(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;
	size_t i = 0, start;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && digit(s[2], 16) >= 0) {
		base = 16;
		i = 2;
	}
	for (start = i; i < len; i++) {
		int d = digit(s[i], base);

		if (d < 0)
			break;
		if ((uint64_t)d > max || v > (max - (uint64_t)d) / base)
			return -1;
		v = v * base + (uint64_t)d;
	}
	if (i == start)
		return 0;
	*out = v;
	return (long)i;
}

int parse_uint(const char *s, size_t len, unsigned long max, unsigned long *out)
{
	uint64_t v;
	long n;

	if (len == (size_t)-1)
		len = strlen(s);
	n = scan(s, len, max, &v);
	if (n <= 0 || (size_t)n != len)
		return -1;
	*out = (unsigned long)v;
	return 0;
}

int pn_uint(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out,
	    char *err, size_t errlen)
{
	uint64_t v;
	long n = s ? scan(s, strlen(s), max, &v) : 0;

	if (n <= 0 || s[n] || v < min) {
		snprintf(err, errlen, "%s: '%s' is not a number in %" PRIu64 "..%" PRIu64, opt, s ? s : "",
			 min, max);
		return -1;
	}
	*out = v;
	return 0;
}

static const struct unit {
	const char *name;
	uint64_t mult;
} times[] = { { "s", PN_S }, { "ms", PN_MS }, { "us", PN_US }, { "ns", PN_NS }, { 0 } },
  sizes[] = { { "g", 1ULL << 30 }, { "m", 1ULL << 20 }, { "k", 1ULL << 10 },
	      { "G", 1ULL << 30 }, { "M", 1ULL << 20 }, { "K", 1ULL << 10 }, { "", 1 }, { 0 } };

/* A unit's multiplier, or 0 when `s` is none of them. */
static uint64_t unit_of(const struct unit *u, const char *s)
{
	for (; u->name; u++)
		if (!strcmp(u->name, s))
			return u->mult;
	return 0;
}

/* s = NUMBER[.FRACTION]UNIT, exactly value * mult (fraction only in decimal). */
static int scaled(const char *s, const struct unit *units, uint64_t bare, bool frac_ok, uint64_t *out)
{
	uint64_t ip, fp = 0, fdiv = 1, mult, v;
	size_t len = strlen(s);
	long n = scan(s, len, UINT64_MAX, &ip);
	const char *p;

	if (n <= 0)
		return -1;
	p = s + n;
	if (*p == '.' && frac_ok && !(n > 1 && (s[1] == 'x' || s[1] == 'X'))) {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (fdiv >= 1000000000ULL)
				return -1;	/* finer than any unit's nanosecond */
			fp = fp * 10 + (uint64_t)(*p - '0');
			fdiv *= 10;
		}
		if (fdiv == 1)
			return -1;	/* "1." */
	}
	mult = *p ? unit_of(units, p) : bare;
	if (!mult)
		return -1;
	if (ip > UINT64_MAX / mult)
		return -1;
	v = ip * mult;
	/* mult is at most 10^9 here (times) and fp < fdiv <= 10^9: no overflow. */
	if (fp) {
		if (fp * mult % fdiv)
			return -1;	/* not a whole number of nanoseconds */
		if (v > UINT64_MAX - fp * mult / fdiv)
			return -1;
		v += fp * mult / fdiv;
	}
	*out = v;
	return 0;
}

int pn_time(const char *opt, const char *s, uint64_t bare, uint64_t min_ns, uint64_t max_ns,
	    uint64_t *ns, char *err, size_t errlen)
{
	char lo[32], hi[32];
	uint64_t v;

	if (!s || scaled(s, times, bare, true, &v) || v < min_ns || v > max_ns) {
		snprintf(err, errlen, "%s: '%s' is not a time in %s..%s (10ms, 500us, 2s, 100ns%s)", opt,
			 s ? s : "", pn_time_str(min_ns, lo, sizeof(lo)), pn_time_str(max_ns, hi, sizeof(hi)),
			 bare == PN_MS ? "; bare: ms" : bare == PN_US ? "; bare: us" :
			 bare == PN_S ? "; bare: s" : bare == PN_NS ? "; bare: ns" : "");
		return -1;
	}
	*ns = v;
	return 0;
}

int pn_size(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out,
	    char *err, size_t errlen)
{
	char lo[32], hi[32];
	uint64_t v;

	if (!s || scaled(s, sizes, 1, false, &v) || v < min || v > max) {
		snprintf(err, errlen, "%s: '%s' is not a size in %s..%s (1500, 64k, 1m)", opt, s ? s : "",
			 pn_size_str(min, lo, sizeof(lo)), pn_size_str(max, hi, sizeof(hi)));
		return -1;
	}
	*out = v;
	return 0;
}

/* v in the first (largest) unit of u that divides it; u ends with a unit of 1. */
static const char *largest(uint64_t v, const struct unit *u, char *buf, size_t len)
{
	while (v && v % u->mult)
		u++;
	if (!v)
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, "%" PRIu64 "%s", v / u->mult, u->name);
	return buf;
}

const char *pn_time_str(uint64_t ns, char *buf, size_t len)
{
	return largest(ns, times, buf, len);
}

const char *pn_size_str(uint64_t v, char *buf, size_t len)
{
	return largest(v, sizes, buf, len);
}
