// SPDX-License-Identifier: BSD-2-Clause
#include "ubperf/series.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* 1 ms: far below any interval ubperf takes (--interval is in ms, at least 1). */
#define SERIES_END_MERGE_NS 1000000ull

int series_init(struct series *sr, uint32_t nch, enum tp_cc_algo cc, uint64_t interval_ns)
{
	memset(sr, 0, sizeof(*sr));
	sr->nch = nch;
	sr->cc = cc;
	sr->interval_ns = interval_ns;
	if (!interval_ns)
		return 0;
	sr->cap = 64;
	sr->t_ns = calloc(sr->cap, sizeof(*sr->t_ns));
	sr->s = calloc(sr->cap * nch, sizeof(*sr->s));
	if (sr->t_ns && sr->s)
		return 0;
	series_free(sr);
	return -ENOMEM;
}

void series_free(struct series *sr)
{
	free(sr->t_ns);
	free(sr->s);
	sr->t_ns = NULL;
	sr->s = NULL;
	sr->n = sr->cap = 0;
}

bool series_due(const struct series *sr, uint64_t now)
{
	if (!series_on(sr))
		return false;
	return !sr->n || now >= sr->next_ns;
}

int series_add(struct series *sr, uint64_t now, const struct series_sample *s)
{
	if (!series_on(sr))
		return 0;
	if (sr->n == sr->cap) {
		size_t cap = sr->cap * 2;
		uint64_t *t = realloc(sr->t_ns, cap * sizeof(*t));
		struct series_sample *ns;

		if (!t)
			return -ENOMEM;
		sr->t_ns = t;
		ns = realloc(sr->s, cap * sr->nch * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		sr->s = ns;
		sr->cap = cap;
	}
	sr->t_ns[sr->n] = now;
	if (s)
		memcpy(&sr->s[sr->n * sr->nch], s, sr->nch * sizeof(*s));
	else
		memset(&sr->s[sr->n * sr->nch], 0, sr->nch * sizeof(*s));
	sr->n++;
	/* The next boundary after now: a loop held up past one is not made up
	 * for by rows microseconds apart, its row just covers more. */
	sr->next_ns = sr->t_ns[0] + ((now - sr->t_ns[0]) / sr->interval_ns + 1) * sr->interval_ns;
	return 0;
}

void series_end(struct series *sr, uint64_t t_ns, const struct series_sample *s)
{
	if (!series_on(sr) || !sr->n)
		return;
	while (sr->n > 1 && sr->t_ns[sr->n - 1] > t_ns)
		sr->n--;
	/* An end a moment after the last interval row would be a row of next to no
	 * time, whose rate means nothing (and whose t_s printed the same): that
	 * last row ends the run instead. */
	if (sr->n > 1 && t_ns - sr->t_ns[sr->n - 1] < SERIES_END_MERGE_NS)
		sr->n--;
	if (t_ns > sr->t_ns[sr->n - 1])
		series_add(sr, t_ns, s);
}

/* Row k's figures for channel c against row k - 1. */
static void row(const struct series *sr, size_t k, uint32_t c, double *secs, double *bps,
		uint64_t *cnp_sent, uint64_t *cnp_rcvd)
{
	const struct series_sample *a = &sr->s[(k - 1) * sr->nch + c], *b = &sr->s[k * sr->nch + c];

	*secs = (double)(sr->t_ns[k] - sr->t_ns[k - 1]) / 1e9;
	*bps = *secs > 0 ? (double)(b->bytes - a->bytes) * 8 / *secs : 0;
	*cnp_sent = b->cnp_sent - a->cnp_sent;
	*cnp_rcvd = b->cnp_rcvd - a->cnp_rcvd;
}

static bool has_rate(const struct series *sr) { return sr->cc == TP_CC_DCQCN; }
static bool has_cw(const struct series *sr) { return sr->cc == TP_CC_LDCP || sr->cc == TP_CC_CAQM; }

void series_print_last(const struct series *sr, FILE *f)
{
	size_t k = sr->n - 1;
	double secs, bps, total = 0;
	uint64_t cs, cr;

	if (!series_on(sr) || sr->n < 2)
		return;
	for (uint32_t c = 0; c < sr->nch; c++) {
		row(sr, k, c, &secs, &bps, &cs, &cr);
		total += bps;
	}
	fprintf(f, "  [%7.3f-%7.3f s] %9.1f Mbit/s", (double)(sr->t_ns[k - 1] - sr->t_ns[0]) / 1e9,
		(double)(sr->t_ns[k] - sr->t_ns[0]) / 1e9, total / 1e6);
	for (uint32_t c = 0; c < sr->nch; c++) {
		const struct series_sample *b = &sr->s[k * sr->nch + c];

		row(sr, k, c, &secs, &bps, &cs, &cr);
		fprintf(f, " | ch%u %.1f", c, bps / 1e6);
		if (has_rate(sr))
			fprintf(f, " rate %.1f", (double)b->rate_bps / 1e6);
		if (has_cw(sr))
			fprintf(f, " cw %" PRIu64, b->cw);
		if (cs || cr)
			fprintf(f, " cnp %" PRIu64 "/%" PRIu64, cs, cr);
	}
	fputc('\n', f);
	fflush(f);
}

struct json_object *series_json(const struct series *sr, uint32_t c)
{
	struct json_object *a = json_object_new_array();
	char t[32];

	for (size_t k = 1; k < sr->n; k++) {
		struct json_object *o = json_object_new_object();
		const struct series_sample *b = &sr->s[k * sr->nch + c];
		double secs, bps, ts = (double)(sr->t_ns[k] - sr->t_ns[0]) / 1e9;
		uint64_t cs, cr;

		row(sr, k, c, &secs, &bps, &cs, &cr);
		snprintf(t, sizeof(t), "%.6f", ts);
		json_object_object_add(o, "t_s", json_object_new_double_s(ts, t));
		json_object_object_add(o, "goodput_bps", json_object_new_int64((int64_t)(bps + 0.5)));
		if (has_rate(sr))
			json_object_object_add(o, "rate_bps", json_object_new_uint64(b->rate_bps));
		if (has_cw(sr))
			json_object_object_add(o, "cw", json_object_new_uint64(b->cw));
		json_object_object_add(o, "cnp_sent", json_object_new_uint64(cs));
		json_object_object_add(o, "cnp_received", json_object_new_uint64(cr));
		json_object_array_add(a, o);
	}
	return a;
}
