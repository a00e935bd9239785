/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ubperf --interval: cumulative counters of every channel sampled at the same
 * instants; what each interval moved is the difference of two rows, so a late
 * sample (the loop was busy) still gives the right rate over its own length.
 */
#ifndef UBPERF_SERIES_H
#define UBPERF_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "transport/cc.h"

struct series_sample {
	uint64_t bytes;			/* payload the channel moved, cumulative */
	uint64_t cnp_sent, cnp_rcvd;	/* cumulative */
	uint64_t rate_bps, cw;		/* at the instant */
};

struct series {
	uint32_t nch;
	enum tp_cc_algo cc;
	uint64_t interval_ns;
	size_t n, cap;		/* rows; row 0 is the baseline at the start */
	uint64_t next_ns;	/* when the next row is due */
	uint64_t *t_ns;		/* [row] */
	struct series_sample *s;	/* [row * nch + channel] */
};

/* 0, or -ENOMEM. A zero interval keeps nothing (every call is a no-op). */
int series_init(struct series *sr, uint32_t nch, enum tp_cc_algo cc, uint64_t interval_ns);
void series_free(struct series *sr);
static inline bool series_on(const struct series *sr) { return sr->interval_ns && sr->s; }
/* Whether a row is due at now (the baseline first, then every interval). */
bool series_due(const struct series *sr, uint64_t now);
/* Appends row s[0..nch) taken at now (s NULL: zeros); -ENOMEM. */
int series_add(struct series *sr, uint64_t now, const struct series_sample *s);
/*
 * The run ended at t_ns: forgets the rows after it (the server idles until the
 * client says so) and adds the last, shorter, one, so the rows sum to the run.
 */
void series_end(struct series *sr, uint64_t t_ns, const struct series_sample *s);
/* The line for the last row: goodput in total and each channel's rate or window. */
void series_print_last(const struct series *sr, FILE *f);
/* Channel c's rows after the baseline as a JSON array. */
struct json_object *series_json(const struct series *sr, uint32_t c);

#endif
