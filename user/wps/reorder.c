// SPDX-License-Identifier: BSD-2-Clause
/*
 * WPS egress reorder engine; the contract is in reorder.h.
 *
 * Everything lives in index-linked pools sized once at creation (no malloc per
 * packet): packet slots and group slots (total_buffer each: a buffered group
 * holds at least one packet), flow slots (max_flows) chained in a hash table,
 * and intrusive lists over flows: LRU by last arrival (idle reclaim from its
 * head) and, per peer, armed timers by arming time (expiry from the heads).
 * A peer's timer list stays sorted without a heap because every flow is armed
 * at "now" and one timeout applies to all the peer's flows. The peers' shares
 * partition the pools, so a peer under its share always finds a free slot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reorder.h"
#include "wps_opt.h"

#define NIL UINT32_MAX
#define WPS_SKIPS 4	/* gaps of one release remembered for late samples */

#define BUMP(e, fl, field)			\
	do {					\
		(fl)->field++;			\
		(e)->tot.f.field++;		\
	} while (0)

struct pkt {
	uint64_t handle;
	uint32_t next;
};

struct grp {
	uint32_t head, tail;		/* packets, arrival order */
	uint32_t prev, next;		/* flow's groups, ascending Group ID */
	uint32_t npkts;
	uint64_t first_at;		/* arrival of its first buffered packet */
	uint16_t gid;
	uint8_t closed;			/* its E packet is buffered */
};

/* The first cache line is all an in-order packet touches. */
struct flow {
	uint16_t peer, node, fid;
	uint16_t neg;
	uint16_t suspect_run;
	uint8_t used, armed, has_late, nskip;
	uint8_t holding;		/* new: NEG is only the smallest Group ID seen */
	uint32_t hnext;
	uint32_t gfirst, glast;
	uint32_t lru_prev, lru_next;
	uint64_t last_seen;
	uint64_t lru_stamp;		/* last_seen when last moved in the LRU */
	uint64_t pkts, groups;
	/* reordering */
	uint32_t tm_prev, tm_next;
	uint64_t armed_at;		/* when the current gap opened */
	uint64_t arm_seq;		/* arming order, across peers */
	uint64_t gap_start;		/* when the timer of the last release that skipped was armed */
	uint16_t skip_lo[WPS_SKIPS], skip_hi[WPS_SKIPS];	/* the gaps it gave up on: [lo, hi) */
	uint32_t buffered, hwm;
	uint16_t last_late_gid;
	uint64_t ooo_groups, late_pkts, late_groups, timer_expiries, bound_releases, suspect;
} __attribute__((aligned(64)));

struct policer {
	uint64_t tokens;		/* flows x 1e9 */
	uint64_t last;
	uint8_t init;
};

struct peer {
	uint32_t tm_head, tm_tail;	/* the peer's armed timers, by arming time */
	uint64_t skew, timeout;
	struct policer pol;
	struct wps_peer_stats st;
};

struct wps_reorder {
	struct wps_reorder_cfg cfg;
	struct pkt *pkts;
	struct grp *grps;
	struct flow *flows;
	uint32_t *buckets;
	uint32_t hmask;
	uint32_t pfree, gfree, ffree;
	uint32_t lru_head, lru_tail;
	struct peer *peers;		/* max_peers */
	uint32_t peer_buffer, peer_flows;	/* each peer's share */
	struct policer pol_all;		/* new flow states of all peers */
	uint64_t arms;			/* timers armed so far */
	struct wps_out *out;
	uint32_t nout;
	struct wps_total_stats tot;
};

static const char *const action_names[WPS_ACT__MAX] = {
	[WPS_ACT_CUT] = "cut_through",
	[WPS_ACT_INORDER] = "released_in_order",
	[WPS_ACT_TIMER] = "released_by_timer",
	[WPS_ACT_BOUND] = "released_by_bound",
	[WPS_ACT_LATE] = "late",
	[WPS_ACT_SUSPECT] = "suspect",
	[WPS_ACT_NOSTATE] = "no_state",
	[WPS_ACT_IDLE] = "idle_flush",
	[WPS_ACT_RESYNC] = "resync",
	[WPS_ACT_HOLD] = "released_after_start_hold",
};

const char *wps_action_name(unsigned a)
{
	return a < WPS_ACT__MAX ? action_names[a] : "?";
}

void wps_reorder_cfg_defaults(struct wps_reorder_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->flow_buffer = 4096;
	c->total_buffer = 65536;
	c->max_flows = 65536;
	c->release_timeout_ns = 0;
	c->timeout_min_ns = 200000ull;		/* 200 us */
	c->timeout_max_ns = 100000000ull;	/* 100 ms */
	c->timeout_init_ns = 10000000ull;	/* 10 ms until a skew is measured */
	c->skew_mult = 3;
	c->idle_ns = 30000000000ull;		/* 30 s */
	c->max_peers = 1;
	c->new_flows_per_sec = 10000;
	c->new_flows_burst = 1000;
	c->new_flows_total_per_sec = 50000;
	c->new_flows_total_burst = 5000;
	c->inflight_groups = 1024;
	c->suspect_resync = 64;
	c->start_hold = true;
}

/* ---- lists ------------------------------------------------------------- */

/* HEAD and TAIL: the list's head and tail indexes (lvalues). */
#define LIST_UNLINK(e, f, idx, PREV, NEXT, HEAD, TAIL)				\
	do {									\
		if ((f)->PREV != NIL)						\
			(e)->flows[(f)->PREV].NEXT = (f)->NEXT;			\
		else								\
			HEAD = (f)->NEXT;					\
		if ((f)->NEXT != NIL)						\
			(e)->flows[(f)->NEXT].PREV = (f)->PREV;			\
		else								\
			TAIL = (f)->PREV;					\
		(f)->PREV = (f)->NEXT = NIL;					\
		(void)(idx);							\
	} while (0)

#define LIST_APPEND(e, f, idx, PREV, NEXT, HEAD, TAIL)				\
	do {									\
		(f)->NEXT = NIL;						\
		(f)->PREV = TAIL;						\
		if (TAIL != NIL)						\
			(e)->flows[TAIL].NEXT = (idx);				\
		else								\
			HEAD = (idx);						\
		TAIL = (idx);							\
	} while (0)

static uint32_t fidx(const struct wps_reorder *e, const struct flow *f)
{
	return (uint32_t)(f - e->flows);
}

/* File f at the LRU's tail, stamped `stamp`. */
static void lru_file(struct wps_reorder *e, struct flow *f, uint64_t stamp)
{
	uint32_t i = fidx(e, f);

	f->lru_stamp = stamp;
	if (e->lru_tail == i)
		return;
	LIST_UNLINK(e, f, i, lru_prev, lru_next, e->lru_head, e->lru_tail);
	LIST_APPEND(e, f, i, lru_prev, lru_next, e->lru_head, e->lru_tail);
}

/*
 * The LRU only needs the order to within a fraction of the idle period, so a
 * flow moves to the tail at most once per idle/64: the common packet writes
 * no neighbour's cache line. Reclaim re-checks last_seen (tick).
 */
static void lru_touch(struct wps_reorder *e, struct flow *f, uint64_t now)
{
	if (now - f->lru_stamp < e->cfg.idle_ns >> 6)
		return;
	lru_file(e, f, now);
}

/*
 * The timer runs from `at` (now, or when the group after a gap was buffered),
 * but from no earlier than the peer's latest timer: the list stays in arming
 * order, which is deadline order, at the cost of a wait a little longer.
 */
static void timer_arm(struct wps_reorder *e, struct flow *f, uint64_t at)
{
	struct peer *p = &e->peers[f->peer];
	uint32_t i = fidx(e, f);

	if (f->armed)
		LIST_UNLINK(e, f, i, tm_prev, tm_next, p->tm_head, p->tm_tail);
	if (p->tm_tail != NIL && e->flows[p->tm_tail].armed_at > at)
		at = e->flows[p->tm_tail].armed_at;
	f->armed = 1;
	f->armed_at = at;
	f->arm_seq = ++e->arms;
	LIST_APPEND(e, f, i, tm_prev, tm_next, p->tm_head, p->tm_tail);
}

static void timer_disarm(struct wps_reorder *e, struct flow *f)
{
	struct peer *p = &e->peers[f->peer];
	uint32_t i = fidx(e, f);

	if (!f->armed)
		return;
	LIST_UNLINK(e, f, i, tm_prev, tm_next, p->tm_head, p->tm_tail);
	f->armed = 0;
}

/*
 * The flow whose timer is due first (now: only one due by then), over the
 * peers' oldest timers; ties go to the one armed first. NULL: none.
 */
static struct flow *timer_first(const struct wps_reorder *e, bool due, uint64_t now)
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

/* ---- adaptive timeout --------------------------------------------------- */

static void timeout_update(struct wps_reorder *e, struct peer *p)
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
static void skew_sample(struct wps_reorder *e, struct peer *p, uint64_t s)
{
	if (s > p->skew)
		p->skew = s;
	else
		p->skew -= (p->skew - s) >> 6;
	timeout_update(e, p);
}

/* ---- flows ------------------------------------------------------------- */

static uint32_t hash_key(uint16_t peer, uint16_t node, uint16_t fid)
{
	uint32_t k = ((uint32_t)node << 16) | fid;

	k ^= (uint32_t)peer * 0x9e3779b1U;
	k ^= k >> 16;
	k *= 0x7feb352dU;
	k ^= k >> 15;
	k *= 0x846ca68bU;
	k ^= k >> 16;
	return k;
}

static struct flow *flow_find(struct wps_reorder *e, uint16_t peer, uint16_t node, uint16_t fid)
{
	for (uint32_t i = e->buckets[hash_key(peer, node, fid) & e->hmask]; i != NIL; i = e->flows[i].hnext) {
		struct flow *f = &e->flows[i];

		if (f->node == node && f->fid == fid && f->peer == peer)
			return f;
	}
	return NULL;
}

/* Below this many flow states they stay in the caches: a prefetch would only cost. */
#define PREFETCH_MIN_FLOWS	4096

bool wps_reorder_wants_prefetch(const struct wps_reorder *e)
{
	return e->tot.flows >= PREFETCH_MIN_FLOWS;
}

void wps_reorder_prefetch(const struct wps_reorder *e, const struct wps_pkt *p, int stage)
{
	const uint32_t *b;

	if (e->tot.flows < PREFETCH_MIN_FLOWS)
		return;
	b = &e->buckets[hash_key(p->peer, p->ingress_node, p->flow_id) & e->hmask];
	if (stage == 0) {
		__builtin_prefetch(b);
		return;
	}
	if (*b != NIL) {
		const char *f = (const char *)&e->flows[*b];

		__builtin_prefetch(f);
		__builtin_prefetch(f + 64);
	}
}

/* A token bucket of burst flows, rate per second: refilled to now; whether a token is there. */
static bool bucket_refill(struct policer *p, uint32_t rate, uint32_t burst, uint64_t now)
{
	uint64_t cap = (uint64_t)burst * 1000000000ull;
	uint64_t dt;

	if (!p->init) {
		p->init = 1;
		p->tokens = cap;
		p->last = now;
	}
	dt = now - p->last;
	p->last = now;
	if (dt >= cap / rate + 1)
		p->tokens = cap;
	else if ((p->tokens += dt * rate) > cap)
		p->tokens = cap;
	return p->tokens >= 1000000000ull;
}

/* A new flow state needs a token from its peer's policer, then one from the aggregate's. */
static bool policer_admit(struct wps_reorder *e, struct peer *pr, uint64_t now)
{
	const struct wps_reorder_cfg *c = &e->cfg;
	bool own = !c->new_flows_per_sec, all = !c->new_flows_total_per_sec;

	if (!own && !bucket_refill(&pr->pol, c->new_flows_per_sec, c->new_flows_burst, now)) {
		pr->st.flows_policed++;
		e->tot.flows_policed++;
		return false;
	}
	if (!all && !bucket_refill(&e->pol_all, c->new_flows_total_per_sec, c->new_flows_total_burst, now)) {
		pr->st.flows_policed_total++;
		e->tot.flows_policed_total++;
		return false;
	}
	if (!own)
		pr->pol.tokens -= 1000000000ull;
	if (!all)
		e->pol_all.tokens -= 1000000000ull;
	return true;
}

static struct flow *flow_create(struct wps_reorder *e, const struct wps_pkt *p, uint64_t now)
{
	struct peer *pr = &e->peers[p->peer];
	struct flow *f;
	uint32_t i, b;

	if (pr->st.flows >= e->peer_flows || e->ffree == NIL) {
		pr->st.flows_table_full++;
		e->tot.flows_table_full++;
		return NULL;
	}
	if (!policer_admit(e, pr, now))
		return NULL;
	i = e->ffree;
	f = &e->flows[i];
	e->ffree = f->hnext;
	memset(f, 0, sizeof(*f));
	f->used = 1;
	f->peer = p->peer;
	f->node = p->ingress_node;
	f->fid = p->flow_id;
	f->neg = p->group_id;	/* the ingress starts at an arbitrary Group ID */
	f->holding = e->cfg.start_hold;
	f->lru_stamp = now;
	f->gfirst = f->glast = NIL;
	f->lru_prev = f->lru_next = f->tm_prev = f->tm_next = NIL;
	b = hash_key(f->peer, f->node, f->fid) & e->hmask;
	f->hnext = e->buckets[b];
	e->buckets[b] = i;
	LIST_APPEND(e, f, i, lru_prev, lru_next, e->lru_head, e->lru_tail);
	e->tot.flows_created++;
	e->tot.flows++;
	pr->st.flows_created++;
	pr->st.flows++;
	return f;
}

/* ---- output and release ------------------------------------------------- */

static void emit(struct wps_reorder *e, uint64_t handle, enum wps_action a)
{
	e->out[e->nout].handle = handle;
	e->out[e->nout].action = (uint8_t)a;
	e->nout++;
	e->tot.actions[a]++;
}

/* Emit and free the flow's first buffered group. Returns whether it was closed. */
static bool pop_group(struct wps_reorder *e, struct flow *f, enum wps_action a, uint64_t now)
{
	uint32_t gi = f->gfirst;
	struct grp *g = &e->grps[gi];
	bool closed = g->closed;
	uint32_t pi = g->head;

	if (a == WPS_ACT_INORDER && now > g->first_at)
		skew_sample(e, &e->peers[f->peer], now - g->first_at);

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
		if (!pop_group(e, f, a, now))
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

static void flow_free(struct wps_reorder *e, struct flow *f, enum wps_action a)
{
	uint32_t i = fidx(e, f);
	uint32_t *pp = &e->buckets[hash_key(f->peer, f->node, f->fid) & e->hmask];

	while (f->gfirst != NIL)
		pop_group(e, f, a, 0);
	timer_disarm(e, f);
	LIST_UNLINK(e, f, i, lru_prev, lru_next, e->lru_head, e->lru_tail);
	while (*pp != i)
		pp = &e->flows[*pp].hnext;
	*pp = f->hnext;
	f->used = 0;
	f->hnext = e->ffree;
	e->ffree = i;
	e->tot.flows--;
	e->peers[f->peer].st.flows--;
	e->tot.flows_reclaimed++;
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
		skew_sample(e, &e->peers[f->peer], now - f->gap_start);
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

uint32_t wps_reorder_rx(struct wps_reorder *e, const struct wps_pkt *p, uint64_t handle, uint64_t now)
{
	struct flow *f;
	struct rel r;
	int d;

	e->nout = 0;
	if (p->peer >= e->cfg.max_peers) {	/* the caller's bug: forwarded, not trusted */
		emit(e, handle, WPS_ACT_NOSTATE);
		e->tot.f.pkts++;
		return e->nout;
	}
	f = flow_find(e, p->peer, p->ingress_node, p->flow_id);
	if (!f)
		f = flow_create(e, p, now);
	if (!f) {
		emit(e, handle, WPS_ACT_NOSTATE);
		e->tot.f.pkts++;
		return e->nout;
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
			return e->nout;
		}
		/* Not a stray: the ingress really moved on (restart, long outage). */
		while (f->gfirst != NIL && wps_gid_diff(e->grps[f->gfirst].gid, p->group_id) < 0) {
			f->neg = e->grps[f->gfirst].gid;
			pop_group(e, f, WPS_ACT_RESYNC, now);
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
	return e->nout;
}

uint32_t wps_reorder_tick(struct wps_reorder *e, uint64_t now)
{
	struct flow *f;

	e->nout = 0;
	/* An expiry gives up on the group that stopped coming, and on every gap
	 * behind it whose next group has waited its timeout too. The end of a
	 * start hold releases the group it expects; a gap behind it is the timer's. */
	while ((f = timer_first(e, true, now))) {
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
			flow_free(e, f, WPS_ACT_IDLE);
		} else {
			/* Seen since its last move: file it again, whatever
			 * lru_touch's limit says, or this loop meets it again. */
			lru_file(e, f, f->last_seen);
		}
	}
	return e->nout;
}

uint64_t wps_reorder_next_deadline(const struct wps_reorder *e)
{
	const struct flow *f = timer_first(e, false, 0);
	uint64_t t = UINT64_MAX;

	if (f)
		t = f->armed_at + e->peers[f->peer].timeout;
	if (e->lru_head != NIL && e->flows[e->lru_head].lru_stamp + e->cfg.idle_ns < t)
		t = e->flows[e->lru_head].lru_stamp + e->cfg.idle_ns;
	return t;
}

/* The armed flow armed first, over all peers (NULL: none). */
static struct flow *armed_first(const struct wps_reorder *e)
{
	struct flow *best = NULL;

	for (uint32_t k = 0; k < e->cfg.max_peers; k++) {
		uint32_t h = e->peers[k].tm_head;

		if (h != NIL && (!best || e->flows[h].arm_seq < best->arm_seq))
			best = &e->flows[h];
	}
	return best;
}

uint32_t wps_reorder_flush(struct wps_reorder *e)
{
	struct flow *f;

	e->nout = 0;
	while ((f = armed_first(e))) {
		while (f->gfirst != NIL)
			force_release(e, f, WPS_ACT_IDLE, 0, WPS_ACT_IDLE, false);
		timer_disarm(e, f);
	}
	return e->nout;
}

const struct wps_out *wps_reorder_out(const struct wps_reorder *e)
{
	return e->out;
}

uint64_t wps_reorder_timeout(const struct wps_reorder *e, uint16_t peer)
{
	return peer < e->cfg.max_peers ? e->peers[peer].timeout : 0;
}

void wps_reorder_totals(const struct wps_reorder *e, struct wps_total_stats *t)
{
	*t = e->tot;
	t->f.buffered = e->tot.buffered;
	t->f.hwm = e->tot.hwm;
	t->timeout_ns = t->skew_ns = 0;
	for (uint32_t k = 0; k < e->cfg.max_peers; k++) {
		if (e->peers[k].timeout > t->timeout_ns)
			t->timeout_ns = e->peers[k].timeout;
		if (e->peers[k].skew > t->skew_ns)
			t->skew_ns = e->peers[k].skew;
	}
}

void wps_reorder_peer(const struct wps_reorder *e, uint16_t peer, struct wps_peer_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (peer >= e->cfg.max_peers)
		return;
	*s = e->peers[peer].st;
	s->timeout_ns = e->peers[peer].timeout;
	s->skew_ns = e->peers[peer].skew;
}

void wps_reorder_foreach(const struct wps_reorder *e, wps_flow_cb cb, void *arg)
{
	for (uint32_t i = e->lru_head; i != NIL; i = e->flows[i].lru_next) {
		const struct flow *f = &e->flows[i];
		struct wps_flow_stats st = {
			.pkts = f->pkts, .groups = f->groups, .ooo_groups = f->ooo_groups,
			.late_pkts = f->late_pkts, .late_groups = f->late_groups,
			.timer_expiries = f->timer_expiries, .bound_releases = f->bound_releases,
			.suspect = f->suspect, .buffered = f->buffered, .hwm = f->hwm,
		};

		if (cb(f->peer, f->node, f->fid, f->neg, &st, arg))
			return;
	}
}

void wps_reorder_free(struct wps_reorder *e)
{
	if (!e)
		return;
	free(e->pkts);
	free(e->grps);
	free(e->flows);
	free(e->buckets);
	free(e->peers);
	free(e->out);
	free(e);
}

struct wps_reorder *wps_reorder_new(const struct wps_reorder_cfg *cfg)
{
	struct wps_reorder *e;
	uint32_t nb = 1;

	if (!cfg->flow_buffer || !cfg->total_buffer || cfg->total_buffer >= NIL - 1 ||
	    !cfg->max_flows || cfg->max_flows > (1u << 24) || !cfg->inflight_groups ||
	    cfg->inflight_groups >= 0x8000 || !cfg->suspect_resync || !cfg->idle_ns ||
	    (!cfg->release_timeout_ns && (!cfg->skew_mult || !cfg->timeout_min_ns ||
					  cfg->timeout_min_ns > cfg->timeout_max_ns ||
					  !cfg->timeout_init_ns)) ||
	    (cfg->new_flows_per_sec && !cfg->new_flows_burst) ||
	    (cfg->new_flows_total_per_sec && !cfg->new_flows_total_burst) ||
	    !cfg->max_peers || cfg->max_peers > cfg->total_buffer || cfg->max_peers > cfg->max_flows) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->cfg = *cfg;
	/* Twice the flows, in buckets of 4 bytes: chains of about one, whose second
	 * state a prefetch of the first cannot reach. */
	while (nb < 2 * cfg->max_flows)
		nb <<= 1;
	e->hmask = nb - 1;
	e->pkts = calloc(cfg->total_buffer, sizeof(*e->pkts));
	e->grps = calloc(cfg->total_buffer, sizeof(*e->grps));
	e->flows = aligned_alloc(64, ((size_t)cfg->max_flows * sizeof(*e->flows) + 63) & ~(size_t)63);
	e->buckets = malloc(nb * sizeof(*e->buckets));
	e->peers = calloc(cfg->max_peers, sizeof(*e->peers));
	e->out = calloc((size_t)cfg->total_buffer + 1, sizeof(*e->out));
	if (!e->pkts || !e->grps || !e->flows || !e->buckets || !e->peers || !e->out) {
		wps_reorder_free(e);
		errno = ENOMEM;
		return NULL;
	}
	memset(e->buckets, 0xff, nb * sizeof(*e->buckets));
	memset(e->flows, 0, (size_t)cfg->max_flows * sizeof(*e->flows));
	for (uint32_t i = 0; i < cfg->total_buffer; i++) {
		e->pkts[i].next = i + 1 < cfg->total_buffer ? i + 1 : NIL;
		e->grps[i].next = i + 1 < cfg->total_buffer ? i + 1 : NIL;
	}
	for (uint32_t i = 0; i < cfg->max_flows; i++)
		e->flows[i].hnext = i + 1 < cfg->max_flows ? i + 1 : NIL;
	e->pfree = e->gfree = e->ffree = 0;
	e->lru_head = e->lru_tail = NIL;
	e->peer_buffer = cfg->total_buffer / cfg->max_peers;
	e->peer_flows = cfg->max_flows / cfg->max_peers;
	for (uint32_t k = 0; k < cfg->max_peers; k++) {
		struct peer *p = &e->peers[k];

		p->tm_head = p->tm_tail = NIL;
		if (!cfg->release_timeout_ns)
			p->skew = cfg->timeout_init_ns / cfg->skew_mult;
		timeout_update(e, p);
	}
	return e;
}
