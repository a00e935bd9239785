/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The reorder engine's insides, shared by its three files (the contract is
 * reorder.h): reorder.c, the procedure (packets in, groups released);
 * reorder_flows.c, the flow table and the engine's pools; reorder_timers.c,
 * the release timers and the adaptive timeout. All of it pure: no I/O, no
 * clock.
 *
 * Everything lives in index-linked pools sized once at creation (no malloc per
 * packet): packet slots and group slots (total_buffer each: a buffered group
 * holds at least one packet), flow slots (max_flows) chained in a hash table,
 * and intrusive lists over flows: LRU by last arrival (idle reclaim from its
 * head) and, per peer, armed timers by arming time (expiry from the heads).
 * A peer's timer list stays sorted without a heap because every flow is armed
 * at "now" and one timeout applies to all the peer's flows. The peers' shares
 * partition the pools, so a peer under its share always finds a free slot.
 *
 * What every packet does to the lists and the table (lookup, LRU, timer)
 * is inline here: the files are built without link-time optimisation, and a
 * call per packet would cost what bench/wps_reorder_bench.c measures.
 */
#ifndef WPS_REORDER_INT_H
#define WPS_REORDER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "wps/reorder.h"

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

/*
 * A flow state is three cache lines, split by what touches them: the first
 * is all an in-order packet reads or writes (the key, NEG, the counters of
 * every packet), the second what a packet buffered or released behind a gap
 * adds (the groups' tail, timer and LRU links), the third what late packets
 * and gaps given up on need. wps_reorder_rx_batch() prefetches the first.
 */
struct flow {
	uint16_t peer, node, fid;
	uint16_t neg;
	uint16_t suspect_run;
	uint8_t armed;
	uint8_t holding;		/* new: NEG is only the smallest Group ID seen */
	uint32_t gfirst;
	uint32_t buffered;
	uint64_t last_seen;
	uint64_t lru_stamp;		/* last_seen when last moved in the LRU */
	uint64_t pkts, groups;
	/* reordering */
	uint32_t glast __attribute__((aligned(64)));
	uint32_t hwm;
	uint32_t tm_prev, tm_next;
	uint32_t lru_prev, lru_next;	/* lru_next: the free list's link while unused */
	uint64_t armed_at;		/* when the current gap opened */
	uint64_t arm_seq;		/* arming order, across peers */
	uint64_t ooo_groups;
	uint64_t gap_start;		/* when the timer of the last release that skipped was armed */
	/* late packets, gaps */
	uint16_t skip_lo[WPS_SKIPS] __attribute__((aligned(64)));	/* the gaps it gave up on: [lo, hi) */
	uint16_t skip_hi[WPS_SKIPS];
	uint16_t last_late_gid;
	uint8_t has_late, nskip;
	uint64_t late_pkts, late_groups, timer_expiries, bound_releases, suspect;
} __attribute__((aligned(64)));

_Static_assert(offsetof(struct flow, glast) == 64 && offsetof(struct flow, skip_lo) == 128 &&
	       sizeof(struct flow) == 192, "a flow state's lines");

/*
 * The flow table: buckets of one cache line, each holding up to HB_SLOTS
 * flows as (hash | 1, flow index), a full bucket's newcomers in the next
 * ones (ovf counts those that passed it, so a lookup stops at a bucket with
 * none). One line tells which flow state to fetch: a prefetch of the bucket,
 * then of the state, reaches every flow (a chained table's second state
 * would need the first one's line first).
 */
#define HB_SLOTS 7

struct hbkt {
	uint32_t sig[HB_SLOTS];		/* 0: free */
	uint32_t idx[HB_SLOTS];
	uint32_t ovf;
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
	struct hbkt *hb;
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

static inline uint32_t fidx(const struct wps_reorder *e, const struct flow *f)
{
	return (uint32_t)(f - e->flows);
}

/* File f at the LRU's tail, stamped `stamp`. */
static inline void lru_file(struct wps_reorder *e, struct flow *f, uint64_t stamp)
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
static inline void lru_touch(struct wps_reorder *e, struct flow *f, uint64_t now)
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
static inline void timer_arm(struct wps_reorder *e, struct flow *f, uint64_t at)
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

static inline void timer_disarm(struct wps_reorder *e, struct flow *f)
{
	struct peer *p = &e->peers[f->peer];
	uint32_t i = fidx(e, f);

	if (!f->armed)
		return;
	LIST_UNLINK(e, f, i, tm_prev, tm_next, p->tm_head, p->tm_tail);
	f->armed = 0;
}

/* ---- the flow table (reorder_flows.c) ------------------------------------ */

static inline uint32_t hash_key(uint16_t peer, uint16_t node, uint16_t fid)
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

static inline uint32_t pkt_hash(const struct wps_pkt *p)
{
	return hash_key(p->peer, p->ingress_node, p->flow_id);
}

/* The flow of key (peer, node, fid), whose hash_key() is h; NULL: none. */
static inline struct flow *flow_find(struct wps_reorder *e, uint32_t h, uint16_t peer, uint16_t node, uint16_t fid)
{
	uint32_t sig = h | 1, b = h & e->hmask;

	/* At most once round the table: a lookup ends even were every bucket passed. */
	for (uint32_t n = 0; n <= e->hmask; n++, b = (b + 1) & e->hmask) {
		const struct hbkt *k = &e->hb[b];

		for (int s = 0; s < HB_SLOTS; s++) {
			struct flow *f;

			if (k->sig[s] != sig)
				continue;
			f = &e->flows[k->idx[s]];
			if (f->node == node && f->fid == fid && f->peer == peer)
				return f;
		}
		if (!k->ovf)
			return NULL;
	}
	return NULL;
}

static inline bool flow_is(const struct flow *f, const struct wps_pkt *p)
{
	return f->node == p->ingress_node && f->fid == p->flow_id && f->peer == p->peer;
}

static inline void flow_prefetch_bucket(const struct wps_reorder *e, uint32_t h)
{
	__builtin_prefetch(&e->hb[h & e->hmask]);
}

/* The bucket's slots holding sig, one bit each, compared all at once. */
static inline uint32_t hb_match(const struct hbkt *k, uint32_t sig)
{
#ifdef __SSE2__
	/* slots 0-3 and 3-6: two compares of four */
	__m128i v = _mm_set1_epi32((int)sig);
	__m128i lo = _mm_cmpeq_epi32(_mm_load_si128((const __m128i *)k->sig), v);
	__m128i hi = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)&k->sig[3]), v);

	return (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(lo)) |
	       (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(hi)) << 3;
#else
	uint32_t m = 0;

	for (int s = 0; s < HB_SLOTS; s++)
		m |= (uint32_t)(k->sig[s] == sig) << s;
	return m;
#endif
}

/*
 * The flow state h's first bucket names first, its first line fetched (all
 * that a packet in order reads; fetching the second too, for a packet
 * buffered, cost the packets in order more than it saved those out of order,
 * bench/README.md): a candidate whose key the packet checks, NIL when the
 * bucket names none. Found without a branch on where in the bucket it sits,
 * which differs from flow to flow: a scan that stops at it mispredicts
 * nearly every change of flow. flow_find() is left for what the candidate is
 * not (a new flow, one in a bucket further on, a signature two flows share).
 * The packet uses what this returns, which keeps the prefetch in: GCC 12 at
 * -O2 takes a function that only prefetches for one without side effects
 * and drops its calls, as it dropped the prefetch of the states this
 * replaces.
 */
static inline uint32_t flow_candidate(const struct wps_reorder *e, uint32_t h)
{
	const struct hbkt *k = &e->hb[h & e->hmask];
	uint32_t m = hb_match(k, h | 1), i;

	if (!m)
		return NIL;
	i = k->idx[__builtin_ctz(m)];
	__builtin_prefetch(&e->flows[i], 1);
	return i;
}

/* A new flow state for p's flow; NULL when its peer's share is taken or a
 * policer refuses it (counted). */
struct flow *reorder_flow_create(struct wps_reorder *e, const struct wps_pkt *p, uint64_t now);
/* Release what f holds for a, and free its state. */
void reorder_flow_free(struct wps_reorder *e, struct flow *f, enum wps_action a);

/* ---- release (reorder.c) ------------------------------------------------- */

/* Emit and free the flow's first buffered group. Returns whether it was closed. */
bool reorder_pop_group(struct wps_reorder *e, struct flow *f, enum wps_action a, uint64_t now);

/* ---- timers and the adaptive timeout (reorder_timers.c) ------------------ */

struct flow *reorder_timer_first(const struct wps_reorder *e, bool due, uint64_t now);
/* The armed flow armed first, over all peers (NULL: none). */
struct flow *reorder_armed_first(const struct wps_reorder *e);
/* The peer's release timeout from its skew (or the fixed one). */
void reorder_timeout_update(struct wps_reorder *e, struct peer *p);
void reorder_skew_sample(struct wps_reorder *e, struct peer *p, uint64_t s);

#endif
