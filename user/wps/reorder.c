// SPDX-License-Identifier: BSD-2-Clause
/*
 * WPS egress reorder engine; the contract is in reorder.h.
 *
 * The procedure: each packet to its flow (reorder_flows.c), cut through,
 * late, or buffered behind a gap; groups released in order as NEG reaches
 * them, by a bound, or by the timers (reorder_timers.c).
 */
#include <string.h>

#include "wps/reorder_int.h"
#include "wps_opt.h"

/* ---- output and release ------------------------------------------------- */

static void emit(struct wps_reorder *e, uint64_t handle, enum wps_action a)
{
	e->out[e->nout].handle = handle;
	e->out[e->nout].action = (uint8_t)a;
	e->nout++;
	e->tot.actions[a]++;
}

bool reorder_pop_group(struct wps_reorder *e, struct flow *f, enum wps_action a, uint64_t now)
{
	uint32_t gi = f->gfirst;
	struct grp *g = &e->grps[gi];
	bool closed = g->closed;
	uint32_t pi = g->head;

	if (a == WPS_ACT_INORDER && now > g->first_at)
		reorder_skew_sample(e, &e->peers[f->peer], now - g->first_at);

	while (pi != NIL) {
		struct pkt *p = &e->pkts[pi];
		uint32_t next = p->next;

		emit(e, p->handle, a);
		p->next = e->pfree;
		e->pfree = pi;
		pi = next;
	}
	f->buffered -= g->npkts;
	e->peers[f->peer].st.buffered -= g->npkts;
	e->tot.buffered -= g->npkts;
	f->gfirst = g->next;
	if (f->gfirst != NIL)
		e->grps[f->gfirst].prev = NIL;
	else
		f->glast = NIL;
	g->next = e->gfree;
	e->gfree = gi;
	return closed;
}

/*
 * NEG skips the gap [lo, hi): remember it, so that a late packet of it, and
 * only that, measures the skew (late()). The first skip of a release forgets
 * the gaps of earlier releases and notes when the timer was armed;
 * a release remembers its first WPS_SKIPS gaps (later ones give no samples).
 */
/* One release in the making: whether it has skipped yet, and counted a timer expiry. */
struct rel {
	bool skipped, counted;
};

static void skip_add(struct flow *f, uint16_t lo, uint16_t hi, struct rel *r)
{
	if (!r->skipped) {
		f->nskip = 0;
		f->gap_start = f->armed_at;
		r->skipped = true;
	}
	if (f->nskip < WPS_SKIPS) {
		f->skip_lo[f->nskip] = lo;
		f->skip_hi[f->nskip] = hi;
		f->nskip++;
	}
}

/* Where a walk of the buffered groups stopped. */
enum stop {
	STOP_EMPTY,	/* nothing buffered */
	STOP_OPEN,	/* NEG on a group whose E has not come: still arriving */
	STOP_GAP,	/* before a gap whose next group has not waited a timeout yet */
};

/*
 * Release what is in order from NEG: its buffered group for `a`, the ones
 * contiguous after it in order. A group whose E has not arrived yet stops the
 * walk with NEG on it: its remaining packets cut through (and, while later
 * groups wait, restart the timer: nothing is released past a group that is
 * arriving). A gap is given up on when the group after it has waited a full
 * release timeout since it was buffered (for its predecessors: the time a
 * group gets), that group leaving by `gapr` (WPS_ACT_TIMER, a timer expiry
 * counted once per release; at shutdown WPS_ACT_IDLE, at once); otherwise the
 * walk stops there. So each gap costs one wait, never one wait per gap.
 */
static enum stop drain(struct wps_reorder *e, struct flow *f, enum wps_action a, uint64_t now,
		       enum wps_action gapr, struct rel *r)
{
	while (f->gfirst != NIL) {
		struct grp *g = &e->grps[f->gfirst];

		if (g->gid != f->neg) {
			if (gapr != WPS_ACT_IDLE && now - g->first_at < e->peers[f->peer].timeout)
				return STOP_GAP;
			if (gapr == WPS_ACT_TIMER && !r->counted)
				BUMP(e, f, timer_expiries);
			r->counted = true;
			skip_add(f, f->neg, g->gid, r);
			f->neg = g->gid;
			a = gapr;
		}
		if (!reorder_pop_group(e, f, a, now))
			return STOP_OPEN;
		f->neg++;
		a = WPS_ACT_INORDER;
	}
	return STOP_EMPTY;
}

/*
 * After NEG moved: nothing buffered stops the timer; NEG's group still open
 * restarts it (its packets will); a gap lets it run from when the group after
 * the gap was buffered, so that group waits one timeout in all.
 */
static void rearm(struct wps_reorder *e, struct flow *f, uint64_t now, enum stop stop)
{
	if (f->gfirst == NIL)
		timer_disarm(e, f);
	else
		timer_arm(e, f, stop == STOP_GAP ? e->grps[f->gfirst].first_at : now);
}

/*
 * NEG skips to the smallest buffered group, released for `a` (the draft's
 * expiry: "advance NEG to the smallest buffered Group ID"); then the groups
 * after it as drain() says, gaps being given up on for `gapr`. A start hold
 * gives up on the groups it would still have taken, those within the
 * in-flight bound before the smallest Group ID seen; a gap after that group
 * is one the timer gives up on. `counted`: the caller counted this release as
 * a timer expiry.
 */
static void force_release(struct wps_reorder *e, struct flow *f, enum wps_action a, uint64_t now,
			  enum wps_action gapr, bool counted)
{
	struct rel r = { .counted = counted };
	bool holding = f->holding;
	uint16_t first;

	f->holding = 0;
	if (f->gfirst == NIL)
		return;
	first = e->grps[f->gfirst].gid;
	skip_add(f, holding ? (uint16_t)(f->neg - e->cfg.inflight_groups) : f->neg, first, &r);
	f->neg = first;
	rearm(e, f, now, drain(e, f, a, now, gapr, &r));
}

/* ---- the procedure ------------------------------------------------------ */

/*
 * NEG's group arriving: out at once. While later groups wait, each of its
 * packets restarts the timer (the draft's "start/restart"): the timer runs
 * out only when the awaited group stops coming, not while it is arriving.
 */
static void cut_through(struct wps_reorder *e, struct flow *f, const struct wps_pkt *p,
			uint64_t handle, uint64_t now)
{
	struct rel r = { 0 };

	emit(e, handle, WPS_ACT_CUT);
	if (!(p->flags & WPS_FLAG_E)) {
		if (f->armed)
			timer_arm(e, f, now);
		return;
	}
	f->neg++;
	rearm(e, f, now, drain(e, f, WPS_ACT_INORDER, now, WPS_ACT_TIMER, &r));
}

/* Whether gid lies in a gap the last skipping release gave up on. */
static bool skipped(const struct flow *f, uint16_t gid)
{
	for (uint8_t k = 0; k < f->nskip; k++)
		if (wps_gid_diff(gid, f->skip_lo[k]) >= 0 && wps_gid_diff(gid, f->skip_hi[k]) < 0)
			return true;
	return false;
}

static void late(struct wps_reorder *e, struct flow *f, const struct wps_pkt *p, uint64_t handle,
		 uint64_t now, int d)
{
	emit(e, handle, WPS_ACT_LATE);
	BUMP(e, f, late_pkts);
	if (!f->has_late || f->last_late_gid != p->group_id)
		BUMP(e, f, late_groups);
	f->has_late = 1;
	f->last_late_gid = p->group_id;
	if (-d > e->cfg.inflight_groups) {
		BUMP(e, f, suspect);
		return;	/* a forged or stale Group ID says nothing about path skew */
	}
	/* How late a group came after it was given up on is skew; a copy of a
	 * group delivered (or a packet after its E) is late, and says nothing. */
	if (skipped(f, p->group_id))
		reorder_skew_sample(e, &e->peers[f->peer], now - f->gap_start);
}

/*
 * A bound is reached and this flow gives way: when the arriving group comes
 * before everything buffered, NEG skips to it (it then cuts through and its
 * successors follow in order); otherwise the buffered head goes first.
 */
static void give_way(struct wps_reorder *e, struct flow *f, uint16_t gid, uint64_t now)
{
	struct rel r = { 0 };

	BUMP(e, f, bound_releases);
	if (wps_gid_diff(gid, e->grps[f->gfirst].gid) < 0) {
		skip_add(f, f->holding ? (uint16_t)(f->neg - e->cfg.inflight_groups) : f->neg, gid, &r);
		f->holding = 0;
		f->neg = gid;
		return;
	}
	force_release(e, f, WPS_ACT_BOUND, now, WPS_ACT_TIMER, false);
}

/*
 * Room for one more buffered packet of f in its peer's share: the peer's flow
 * waiting longest gives way (another peer's flows never do).
 */
static void make_room(struct wps_reorder *e, struct flow *f, uint16_t gid, uint64_t now)
{
	struct peer *p = &e->peers[f->peer];

	while (p->st.buffered >= e->peer_buffer) {
		struct flow *v = &e->flows[p->tm_head];

		p->st.bound_releases++;
		if (v == f) {
			give_way(e, f, gid, now);
			return;
		}
		force_release(e, v, WPS_ACT_BOUND, now, WPS_ACT_TIMER, false);
		BUMP(e, v, bound_releases);
	}
}

static void buffer(struct wps_reorder *e, struct flow *f, const struct wps_pkt *p, uint64_t handle,
		   uint64_t now)
{
	uint32_t gi = f->glast, pi;
	struct grp *g;

	/* Arrivals mostly extend the newest groups: search from the tail. */
	while (gi != NIL && wps_gid_diff(e->grps[gi].gid, p->group_id) > 0)
		gi = e->grps[gi].prev;
	if (gi == NIL || e->grps[gi].gid != p->group_id) {
		uint32_t ni = e->gfree;
		struct grp *n = &e->grps[ni];

		e->gfree = n->next;
		memset(n, 0, sizeof(*n));
		n->gid = p->group_id;
		n->first_at = now;
		n->head = n->tail = NIL;
		n->prev = gi;
		n->next = gi == NIL ? f->gfirst : e->grps[gi].next;
		if (n->next != NIL)
			e->grps[n->next].prev = ni;
		else
			f->glast = ni;
		if (gi == NIL)
			f->gfirst = ni;
		else
			e->grps[gi].next = ni;
		gi = ni;
		BUMP(e, f, ooo_groups);
	}
	g = &e->grps[gi];
	pi = e->pfree;
	e->pfree = e->pkts[pi].next;
	e->pkts[pi].handle = handle;
	e->pkts[pi].next = NIL;
	if (g->tail == NIL)
		g->head = pi;
	else
		e->pkts[g->tail].next = pi;
	g->tail = pi;
	g->npkts++;
	if (p->flags & WPS_FLAG_E)
		g->closed = 1;

	f->buffered++;
	if (f->buffered > f->hwm)
		f->hwm = f->buffered;
	if (++e->peers[f->peer].st.buffered > e->peers[f->peer].st.hwm)
		e->peers[f->peer].st.hwm = e->peers[f->peer].st.buffered;
	if (++e->tot.buffered > e->tot.hwm)
		e->tot.hwm = e->tot.buffered;
	if (!f->armed)
		timer_arm(e, f, now);
}

/*
 * One packet (its key's hash_key() h, cand its flow_candidate()), its outputs
 * after those before it; f, when not NULL, is its flow's state (the packet
 * before it was of the same flow: nothing frees a state in between). Returns
 * the flow's state, NULL when it has none.
 */
static struct flow *rx_one(struct wps_reorder *e, const struct wps_pkt *p, uint32_t h, uint32_t cand,
			   uint64_t handle, uint64_t now, struct flow *f)
{
	struct rel r;
	int d;

	if (!f) {
		if (p->peer >= e->cfg.max_peers) {	/* the caller's bug: forwarded, not trusted */
			emit(e, handle, WPS_ACT_NOSTATE);
			e->tot.f.pkts++;
			return NULL;
		}
		if (cand != NIL && flow_is(&e->flows[cand], p))
			f = &e->flows[cand];
		else
			f = flow_find(e, h, p->peer, p->ingress_node, p->flow_id);
		if (!f)
			f = reorder_flow_create(e, p, now);
		if (!f) {
			emit(e, handle, WPS_ACT_NOSTATE);
			e->tot.f.pkts++;
			return NULL;
		}
	}
	f->last_seen = now;
	lru_touch(e, f, now);
	BUMP(e, f, pkts);
	if (p->flags & WPS_FLAG_E)
		BUMP(e, f, groups);

	d = wps_gid_diff(p->group_id, f->neg);
	if (f->holding && d <= 0 && d >= -(int)e->cfg.inflight_groups) {
		/* Still learning where the flow starts: the smallest Group ID seen is NEG. */
		f->neg = p->group_id;
		d = 1;
	}
	if (d > e->cfg.inflight_groups) {
		BUMP(e, f, suspect);
		if (++f->suspect_run < e->cfg.suspect_resync) {
			emit(e, handle, WPS_ACT_SUSPECT);
			return f;
		}
		/* Not a stray: the ingress really moved on (restart, long outage). */
		while (f->gfirst != NIL && wps_gid_diff(e->grps[f->gfirst].gid, p->group_id) < 0) {
			f->neg = e->grps[f->gfirst].gid;
			reorder_pop_group(e, f, WPS_ACT_RESYNC, now);
		}
		f->holding = 0;
		f->neg = p->group_id;
		r = (struct rel){ 0 };
		/* this group's earlier packets first */
		rearm(e, f, now, drain(e, f, WPS_ACT_RESYNC, now, WPS_ACT_TIMER, &r));
		d = wps_gid_diff(p->group_id, f->neg);
	}
	f->suspect_run = 0;
	/* Bounds first, so that buffering never passes them; both may move NEG. */
	if (d > 0 && f->buffered >= e->cfg.flow_buffer) {
		give_way(e, f, p->group_id, now);
		d = f->holding ? 1 : wps_gid_diff(p->group_id, f->neg);
	}
	if (d > 0 && e->peers[f->peer].st.buffered >= e->peer_buffer) {
		make_room(e, f, p->group_id, now);	/* another flow's hold may end, not ours */
		d = f->holding ? 1 : wps_gid_diff(p->group_id, f->neg);
	}
	if (d == 0)
		cut_through(e, f, p, handle, now);
	else if (d < 0)
		late(e, f, p, handle, now, d);
	else
		buffer(e, f, p, handle, now);
	return f;
}

static bool same_flow(const struct wps_pkt *a, const struct wps_pkt *b)
{
	return a->flow_id == b->flow_id && a->ingress_node == b->ingress_node && a->peer == b->peer;
}

#define SAME (NIL - 1)	/* of the packet before's flow (never a flow state's index) */

/*
 * With many flows each packet's flow state is a cache miss, and its bucket
 * one more: the whole batch's buckets are fetched together, then the states
 * they name, then the packets go through in order, their misses overlapped
 * instead of one after the other (DPDK's bulk hash lookup does the same).
 * A packet of the same flow as the one before it needs neither, nor a
 * lookup: it takes the state the one before it found.
 */
uint32_t wps_reorder_rx_batch(struct wps_reorder *e, const struct wps_pkt *p, const uint64_t *handle,
			      uint32_t n, uint64_t now)
{
	uint32_t h[WPS_REORDER_BATCH], c[WPS_REORDER_BATCH];	/* c: flow_candidate(), or SAME */
	uint8_t first[WPS_REORDER_BATCH];	/* the packets that start a run of one flow */
	uint32_t runs = 0;
	struct flow *f = NULL;

	e->nout = 0;
	if (n > WPS_REORDER_BATCH)
		n = WPS_REORDER_BATCH;
	for (uint32_t i = 0; i < n; i++) {
		if (i && same_flow(&p[i], &p[i - 1])) {
			h[i] = h[i - 1];
			c[i] = SAME;
		} else {
			h[i] = pkt_hash(&p[i]);
			first[runs++] = (uint8_t)i;
			flow_prefetch_bucket(e, h[i]);
		}
	}
	for (uint32_t k = 0; k < runs; k++)
		c[first[k]] = flow_candidate(e, h[first[k]]);
	for (uint32_t i = 0; i < n; i++)
		f = rx_one(e, &p[i], h[i], c[i] == SAME ? NIL : c[i], handle[i], now, c[i] == SAME ? f : NULL);
	return e->nout;
}

uint32_t wps_reorder_rx(struct wps_reorder *e, const struct wps_pkt *p, uint64_t handle, uint64_t now)
{
	return wps_reorder_rx_batch(e, p, &handle, 1, now);
}

uint32_t wps_reorder_tick(struct wps_reorder *e, uint64_t now)
{
	struct flow *f;

	e->nout = 0;
	/* An expiry gives up on the group that stopped coming, and on every gap
	 * behind it whose next group has waited its timeout too. The end of a
	 * start hold releases the group it expects; a gap behind it is the timer's. */
	while ((f = reorder_timer_first(e, true, now))) {
		if (f->holding) {
			force_release(e, f, WPS_ACT_HOLD, now, WPS_ACT_TIMER, false);
			continue;
		}
		BUMP(e, f, timer_expiries);
		force_release(e, f, WPS_ACT_TIMER, now, WPS_ACT_TIMER, true);
	}
	while (e->lru_head != NIL && now - e->flows[e->lru_head].lru_stamp >= e->cfg.idle_ns) {
		struct flow *f = &e->flows[e->lru_head];

		if (now - f->last_seen >= e->cfg.idle_ns) {
			reorder_flow_free(e, f, WPS_ACT_IDLE);
		} else {
			/* Seen since its last move: file it again, whatever
			 * lru_touch's limit says, or this loop meets it again. */
			lru_file(e, f, f->last_seen);
		}
	}
	return e->nout;
}

uint32_t wps_reorder_flush(struct wps_reorder *e)
{
	struct flow *f;

	e->nout = 0;
	while ((f = reorder_armed_first(e))) {
		while (f->gfirst != NIL)
			force_release(e, f, WPS_ACT_IDLE, 0, WPS_ACT_IDLE, false);
		timer_disarm(e, f);
	}
	return e->nout;
}
