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

#include <json-c/json.h>

#include "ubperf/session.h"

struct worker {
	struct run r;
	int (*loop)(struct run *);
	int rc;
	pthread_t th;
	uint32_t *live;		/* loops still running (atomic) */
};

int run_stopped(const struct run *r)
{
	return r->threaded ? __atomic_load_n(&r->parent->stop, __ATOMIC_RELAXED) : 0;
}

/*
 * A loop done, its thread keeps its worker's endpoint going until every
 * loop is: the device's queues are each one worker's (endpoint/ep_workers.c),
 * and the frames of the others' channels that come on its queues would
 * wait there unread.
 */
static void serve_until_all_done(struct run *r, uint32_t *live)
{
	__atomic_sub_fetch(live, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(live, __ATOMIC_ACQUIRE))
		ep_progress(r->ep[r->wk], 1);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->rc = w->loop(&w->r);
	if (w->rc)
		__atomic_store_n(&w->r.parent->stop, RUN_FAILED, __ATOMIC_RELAXED);
	serve_until_all_done(&w->r, w->live);
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
	uint32_t started = 1, live;
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
	live = r->nep;
	for (uint32_t k = 1; k < r->nep; k++) {
		worker_run(r, &w[k].r, k, share);
		w[k].loop = loop;
		w[k].live = &live;
	}
	worker_run(r, r, 0, share);
	r->parent = r;
	for (; started < r->nep; started++)
		if (pthread_create(&w[started].th, NULL, worker_main, &w[started]))
			break;
	if (started < r->nep) {
		rc = run_fail(r, "cannot start worker %u: %s", started, strerror(errno));
		__atomic_sub_fetch(&live, r->nep - started, __ATOMIC_RELEASE);	/* never started */
	} else {
		rc = loop(r);
	}
	__atomic_store_n(&r->stop, rc ? RUN_FAILED : RUN_ENDED, __ATOMIC_RELAXED);
	serve_until_all_done(r, &live);
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

/* Each of the first n workers: its frames (every one moved its channels'
 * own), the device's rx queues it reads, the frames it copied to another
 * worker (and dropped for a full ring), and the pool locks it took. */
struct json_object *workers_json(struct run *r, uint32_t n)
{
	struct json_object *x = json_object_new_array();

	for (uint32_t k = 0; k < n; k++) {
		struct json_object *m = json_object_new_object(), *q = json_object_new_array();
		uint64_t mask = ep_rx_queues(r->ep[k]);
		struct ep_stats st;

		ep_get_stats(r->ep[k], &st);
		json_object_object_add(m, "rx_frames", json_object_new_uint64(st.rx_frames));
		json_object_object_add(m, "tx_frames", json_object_new_uint64(st.tx_frames));
		for (uint32_t b = 0; b < 64; b++)
			if (mask >> b & 1)
				json_object_array_add(q, json_object_new_uint64(b));
		json_object_object_add(m, "queues", q);
		json_object_object_add(m, "rx_handoff", json_object_new_uint64(st.rx_handoff));
		json_object_object_add(m, "rx_handoff_drop", json_object_new_uint64(st.rx_handoff_drop));
		json_object_object_add(m, "xsk_pool_locks", json_object_new_uint64(st.xsk_pool_locks));
		json_object_array_add(x, m);
	}
	return x;
}
