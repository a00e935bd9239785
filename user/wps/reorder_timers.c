// SPDX-License-Identifier: BSD-2-Clause
/*
 * The reorder engine's release timers (reorder_int.h: one list per peer, in
 * arming order, which is deadline order) and each peer's adaptive release
 * timeout.
 */
#include "wps/reorder_int.h"

/*
 * The flow whose timer is due first (now: only one due by then), over the
 * peers' oldest timers; ties go to the one armed first. NULL: none.
 */
struct flow *reorder_timer_first(const struct wps_reorder *e, bool due, uint64_t now)
{
	struct flow *best = NULL;
	uint64_t best_dl = 0;

	for (uint32_t k = 0; k < e->cfg.max_peers; k++) {
		const struct peer *p = &e->peers[k];
		struct flow *f;
		uint64_t dl;

		if (p->tm_head == NIL)
			continue;
		f = &e->flows[p->tm_head];
		if (due && now - f->armed_at < p->timeout)
			continue;
		dl = f->armed_at + p->timeout;
		if (!best || dl < best_dl || (dl == best_dl && f->arm_seq < best->arm_seq)) {
			best = f;
			best_dl = dl;
		}
	}
	return best;
}

uint64_t wps_reorder_next_deadline(const struct wps_reorder *e)
{
	const struct flow *f = reorder_timer_first(e, false, 0);
	uint64_t t = UINT64_MAX;

	if (f)
		t = f->armed_at + e->peers[f->peer].timeout;
	if (e->lru_head != NIL && e->flows[e->lru_head].lru_stamp + e->cfg.idle_ns < t)
		t = e->flows[e->lru_head].lru_stamp + e->cfg.idle_ns;
	return t;
}

struct flow *reorder_armed_first(const struct wps_reorder *e)
{
	struct flow *best = NULL;

	for (uint32_t k = 0; k < e->cfg.max_peers; k++) {
		uint32_t h = e->peers[k].tm_head;

		if (h != NIL && (!best || e->flows[h].arm_seq < best->arm_seq))
			best = &e->flows[h];
	}
	return best;
}

uint64_t wps_reorder_timeout(const struct wps_reorder *e, uint16_t peer)
{
	return peer < e->cfg.max_peers ? e->peers[peer].timeout : 0;
}

/* ---- adaptive timeout --------------------------------------------------- */

void reorder_timeout_update(struct wps_reorder *e, struct peer *p)
{
	const struct wps_reorder_cfg *c = &e->cfg;
	uint64_t t;

	if (c->release_timeout_ns) {
		p->timeout = c->release_timeout_ns;
		return;
	}
	t = p->skew * c->skew_mult;
	if (t < c->timeout_min_ns)
		t = c->timeout_min_ns;
	if (t > c->timeout_max_ns)
		t = c->timeout_max_ns;
	p->timeout = t;
}

/*
 * A lateness sample: how long a group waited in the buffer for its
 * predecessors (the skew between its path and theirs), or how late a group
 * came after the timer gave up on it. Peak-hold with slow decay, so the
 * timeout follows the largest recent skew rather than the average and forgets
 * a skew that is gone over some hundred samples. The estimate starts where the
 * initial timeout puts it, so the first small samples do not shorten it. Per
 * peer: the paths from one ingress node say nothing of another's, and a
 * peer's forged lateness moves only its own flows' timeout.
 */
void reorder_skew_sample(struct wps_reorder *e, struct peer *p, uint64_t s)
{
	if (s > p->skew)
		p->skew = s;
	else
		p->skew -= (p->skew - s) >> 6;
	reorder_timeout_update(e, p);
}
