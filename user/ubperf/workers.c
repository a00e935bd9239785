// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubperf --workers: a loop (the client's posting, the server's checking) on
 * every worker's thread at once, each thread with a run of its own that
 * drives its worker's endpoint and channels only, the counters summed after
 * (session.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ubperf/session.h"

struct worker {
	struct run r;
	int (*loop)(struct run *);
	int rc;
	pthread_t th;
};

int run_stopped(const struct run *r)
{
	return r->threaded ? __atomic_load_n(&r->parent->stop, __ATOMIC_RELAXED) : 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->rc = w->loop(&w->r);
	if (w->rc)
		__atomic_store_n(&w->r.parent->stop, RUN_FAILED, __ATOMIC_RELAXED);
	return NULL;
}

/* Thread k's run: r's channels and settings, counters of its own, its share of lat. */
static void worker_run(struct run *r, struct run *w, uint32_t k, size_t lat_share)
{
	const uint64_t count = r->o->count;

	if (w != r)
		*w = *r;
	w->threaded = true;
	w->wk = k;
	w->parent = r;
	w->messages = w->bytes = w->posted = w->corrupt = w->verified = w->bad_seq = w->lost = 0;
	w->slots_used = 0;
	w->t_start = w->t_end = 0;
	w->nlat = 0;
	w->lat = r->lat ? r->lat + k * lat_share : NULL;
	w->lat_cap = lat_share;
	w->quota = count / r->nep + (k < count % r->nep);
}

/* Thread w's counters (w->wk > 0) into r, worker 0's. */
static void worker_sum(struct run *r, const struct run *w)
{
	r->messages += w->messages;
	r->bytes += w->bytes;
	r->posted += w->posted;
	r->slots_used += w->slots_used;
	r->corrupt += w->corrupt;
	r->verified += w->verified;
	r->bad_seq += w->bad_seq;
	r->lost += w->lost;
	for (uint32_t c = w->wk; c < UBPERF_MAX_CHANS; c += r->nep) {
		r->chan_bytes[c] = w->chan_bytes[c];
		r->seq[c] = w->seq[c];
	}
	if (w->t_start && (!r->t_start || w->t_start < r->t_start))
		r->t_start = w->t_start;
	if (w->t_end > r->t_end)
		r->t_end = w->t_end;
	if (w->last_progress > r->last_progress)
		r->last_progress = w->last_progress;
	if (r->lat && w->nlat)	/* packed: each share lies at or past the samples before it */
		memmove(r->lat + r->nlat, w->lat, w->nlat * sizeof(r->lat[0]));
	r->nlat += w->nlat;
}

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int run_loops(struct run *r, int (*loop)(struct run *))
{
	const size_t share = MAX_LAT_SAMPLES / r->nep;
	struct worker *w;
	uint32_t started = 1;
	int rc;

	if (r->nep == 1 || r->o->workers <= 1) {
		r->lat_cap = MAX_LAT_SAMPLES;
		r->quota = r->o->count;
		return loop(r);
	}
	w = calloc(r->nep, sizeof(*w));
	if (!w)
		return run_fail(r, "out of memory for %u workers", r->nep);
	r->stop = 0;
	for (uint32_t k = 1; k < r->nep; k++) {
		worker_run(r, &w[k].r, k, share);
		w[k].loop = loop;
	}
	worker_run(r, r, 0, share);
	r->parent = r;
	for (; started < r->nep; started++)
		if (pthread_create(&w[started].th, NULL, worker_main, &w[started]))
			break;
	rc = started < r->nep ? run_fail(r, "cannot start worker %u: %s", started, strerror(errno)) : loop(r);
	__atomic_store_n(&r->stop, rc ? RUN_FAILED : RUN_ENDED, __ATOMIC_RELAXED);
	for (uint32_t k = 1; k < started; k++) {
		pthread_join(w[k].th, NULL);
		if (!rc)
			rc = w[k].rc;
		worker_sum(r, &w[k].r);
	}
	r->threaded = false;
	r->wk = 0;
	free(w);
	return rc;
}

/* The process's CPU time over the loops (every thread's; setup left out) in r->cpu_ns. */
int run_workers(struct run *r, int (*loop)(struct run *))
{
	uint64_t t0 = process_cpu_ns();
	int rc = run_loops(r, loop);

	r->cpu_ns = process_cpu_ns() - t0;
	return rc;
}
