// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target for the WPS egress reorder engine (user/wps/reorder.c).
 *
 * The input picks a configuration (small bounds so they are hit) and then a
 * stream of operations: packet arrivals for a few flows of two ingress nodes
 * (one peer, or two peers, which may both use the same Ingress Node ID) with
 * Group IDs near or far from the flow's progress, timer ticks, time steps.
 *
 * A reference model kept here decides what must happen to every packet, from
 * the contract in reorder.h and the draft's egress procedure, written with
 * plain arrays and scans instead of the engine's pools, lists and hash table:
 * per (peer, Ingress Node ID, Flow ID) the NEG, the buffered packets, the
 * release timer, the start hold and the run of suspect Group IDs; the bounds
 * (flow, and the peer's share of the buffer) and the flow that gives way (the
 * peer's one whose timer was armed first); each peer's share of the flow
 * states, its policer and the aggregate one; each peer's adaptive timeout. After every
 * call the engine's outputs must be the model's, handle for handle and reason
 * for reason: the model, not the engine, says which arriving packet is late,
 * suspect or without state, and which buffered ones leave. The one freedom
 * the contract leaves is when an idle flow is reclaimed (the LRU is kept to
 * within a fraction of the idle period): the model accepts a reclaim at any
 * tick once the flow has been silent for the idle period, never before, reads
 * which flows the engine still holds (wps_reorder_foreach) and requires a
 * reclaimed flow's buffered packets to leave as idle flushes.
 *
 * Independently of the model, after every call:
 *   - every handle leaves at most once, and only after it came in; after the
 *     final flush every handle has left exactly once;
 *   - per flow, what the model does not call late, suspect or without state
 *     leaves in (Group ID, arrival) order: a timer or a bound may skip a gap
 *     but never sends a group before one already sent;
 *   - memory: packets waiting per flow <= flow bound, in total <= total
 *     bound, and the engine's occupancy, NEG per flow and timeout equal the
 *     model's;
 *   - after a tick nothing is overdue (the next deadline is in the future).
 *
 * A twin engine takes the same calls, its packets through
 * wps_reorder_rx_batch: the packets that come at one time (half the
 * operations keep the time of the one before), cut where the input says, at
 * a tick and at 64. A batch must give the outputs the first engine gave for
 * its packets one by one, and the twin's tick and flush what the first's did.
 *
 * libFuzzer:  make fuzz-wps  (build/fuzz/fuzz_wps_reorder, clang -fsanitize=fuzzer)
 * make test:  tests/unit/test_wps_reorder_fuzz.c runs it on seeded random inputs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wps/reorder.h"
#include "wps_opt.h"

#define FZ_FLOWS 8	/* 2 ingress nodes x 4 flows */
#define FZ_MAX_OPS 4096
#define FZ_MAX_BUF 24	/* the largest total bound the input can pick */

#define CHECK(cond, ...)								\
	do {										\
		if (!(cond)) {								\
			fprintf(stderr, "fuzz_wps_reorder: " __VA_ARGS__);		\
			fputc('\n', stderr);						\
			abort();							\
		}									\
	} while (0)

struct fz_pkt {
	uint8_t flow;		/* model flow index */
	uint16_t gid;
	uint32_t seq;		/* arrival index within the flow */
	uint8_t state;		/* 0 not in, 1 waiting, 2 out */
};

struct fz_flow {
	uint16_t base;		/* the sender's current group */
	uint32_t seq;		/* arrivals so far */
	int has_last;		/* the last packet delivered in order (the order check) */
	uint16_t last_gid;
	uint32_t last_seq;
	uint32_t waiting;
};

/* ---- the reference model ------------------------------------------------ */

struct md_pkt {
	uint32_t h;
	uint16_t gid;
	uint8_t end;		/* carries E: its group is complete */
	uint64_t at;		/* arrival */
};

struct md_flow {
	int live;
	int peer;
	int holding;		/* start hold: NEG is only the smallest Group ID seen */
	int armed;		/* release timer running (exactly when packets wait) */
	int nskip;		/* gaps the last skipping release gave up on: late ones measure the skew */
	uint16_t neg;
	uint16_t suspect_run;
	uint16_t skip_lo[4], skip_hi[4];	/* its first four gaps, [lo, hi) */
	uint64_t armed_at, arm_seq, gap_start, last_seen;
	uint32_t n;
	struct md_pkt q[FZ_MAX_BUF];	/* buffered, in arrival order */
};

struct md_bucket {
	int init;
	uint64_t tokens, last;		/* new flows x 1e9 */
};

struct md {
	const struct wps_reorder_cfg *cfg;
	struct md_flow fl[FZ_FLOWS];
	struct md_bucket pol[2], pol_all;	/* per peer, all peers */
	uint32_t total, live;
	uint32_t pbuf[2], plive[2];	/* per peer: buffered, flow states */
	uint64_t arms;			/* timers armed so far: the arming order */
	uint64_t skew[2], timeout[2];	/* per peer */
	struct wps_out out[2 * FZ_MAX_BUF + 2];	/* what the engine must emit */
	uint32_t nout;
	/* A resync starts the flow anew from output out[resync_at] on: what
	 * follows may be anywhere ahead of NEG, up to half the Group ID space,
	 * so no longer comparable with the groups delivered before. */
	int resync_flow;		/* -1: none in this call */
	uint32_t resync_at;
};

/* Serial distance, written here rather than taken from the code under test. */
static int fz_serial(uint16_t a, uint16_t b)
{
	int d = (int)a - (int)b;

	if (d > 32767)
		d -= 65536;
	if (d < -32768)
		d += 65536;
	return d;
}

static void md_emit(struct md *m, uint32_t h, enum wps_action a)
{
	CHECK(m->nout < sizeof(m->out) / sizeof(m->out[0]), "model: too many outputs");
	m->out[m->nout].handle = h;
	m->out[m->nout].action = (uint8_t)a;
	m->nout++;
}

/* A peer's release timeout: fixed, or a multiple of its measured skew, clamped. */
static void md_timeout(struct md *m, int pr)
{
	const struct wps_reorder_cfg *c = m->cfg;

	if (c->release_timeout_ns) {
		m->timeout[pr] = c->release_timeout_ns;
		return;
	}
	m->timeout[pr] = m->skew[pr] * c->skew_mult;
	if (m->timeout[pr] < c->timeout_min_ns)
		m->timeout[pr] = c->timeout_min_ns;
	if (m->timeout[pr] > c->timeout_max_ns)
		m->timeout[pr] = c->timeout_max_ns;
}

/* A peer's skew estimate: a larger sample at once, a smaller one by 1/64 of the difference. */
static void md_skew(struct md *m, int pr, uint64_t s)
{
	if (s > m->skew[pr])
		m->skew[pr] = s;
	else
		m->skew[pr] -= (m->skew[pr] - s) / 64;
	md_timeout(m, pr);
}

/* Every buffered Group ID is at or after NEG, within a small window: the
 * smallest is the one nearest NEG. */
static uint16_t md_first(const struct md_flow *f)
{
	uint16_t best = f->q[0].gid;

	for (uint32_t i = 1; i < f->n; i++)
		if ((uint16_t)(f->q[i].gid - f->neg) < (uint16_t)(best - f->neg))
			best = f->q[i].gid;
	return best;
}

/* The timer runs from `at`, but from no earlier than any other timer of the peer. */
static void md_arm(struct md *m, struct md_flow *f, uint64_t at)
{
	for (int i = 0; i < FZ_FLOWS; i++) {
		struct md_flow *o = &m->fl[i];

		if (o != f && o->live && o->armed && o->peer == f->peer && o->armed_at > at)
			at = o->armed_at;
	}
	f->armed = 1;
	f->armed_at = at;
	f->arm_seq = ++m->arms;
}

/* After NEG moved: a gap left restarts the timer, none stops it. */
/* Where md_drain stopped: nothing buffered, on an open group, before a gap. */
enum { MD_EMPTY, MD_OPEN, MD_GAP };

static uint64_t md_first_at(const struct md_flow *f, uint16_t gid);
static uint16_t md_first(const struct md_flow *f);

/* After NEG moved: nothing buffered stops the timer; an open group restarts it; a
 * gap lets it run from when the group after the gap was buffered. */
static void md_rearm(struct md *m, struct md_flow *f, uint64_t now, int stop)
{
	if (!f->n)
		f->armed = 0;
	else
		md_arm(m, f, stop == MD_GAP ? md_first_at(f, md_first(f)) : now);
}

/* The flow's smallest buffered group leaves, in arrival order, for reason a.
 * A group released in order tells how long it waited for its predecessors:
 * a skew sample. Returns whether the group was complete (its E had come). */
static int md_pop(struct md *m, struct md_flow *f, enum wps_action a, uint64_t now)
{
	uint16_t gid = md_first(f);
	uint64_t first_at = 0;
	int end = 0, any = 0;
	uint32_t k = 0;

	for (uint32_t i = 0; i < f->n; i++) {
		if (f->q[i].gid != gid) {
			f->q[k++] = f->q[i];
			continue;
		}
		if (!any)
			first_at = f->q[i].at;
		any = 1;
		end |= f->q[i].end;
		md_emit(m, f->q[i].h, a);
	}
	m->total -= f->n - k;
	m->pbuf[f->peer] -= f->n - k;
	f->n = k;
	if (a == WPS_ACT_INORDER && now > first_at)
		md_skew(m, f->peer, now - first_at);
	return end;
}

/* When the flow's buffered group gid came: its first buffered packet's arrival. */
static uint64_t md_first_at(const struct md_flow *f, uint16_t gid)
{
	for (uint32_t i = 0; i < f->n; i++)
		if (f->q[i].gid == gid)
			return f->q[i].at;
	CHECK(0, "model: group %u not buffered", gid);
	return 0;
}

/* NEG skips the gap [lo, hi): how late a group of it comes, from when the
 * timer was armed, is a skew sample. A release's first skip (*fresh) forgets
 * the gaps of earlier ones; a release keeps its first four. */
static void md_skip_add(struct md_flow *f, uint16_t lo, uint16_t hi, int *fresh)
{
	if (*fresh) {
		f->nskip = 0;
		f->gap_start = f->armed_at;
		*fresh = 0;
	}
	if (f->nskip < 4) {
		f->skip_lo[f->nskip] = lo;
		f->skip_hi[f->nskip] = hi;
		f->nskip++;
	}
}

/* Release what is in order now: NEG's group for reason a, the complete
 * groups that follow it without a gap in order. An incomplete group stops
 * the walk with NEG on it (its remaining packets will cut through). A gap is
 * given up on, the group after it leaving for gapr, when that group has
 * waited a full timeout since it was buffered (at shutdown, gapr IDLE: at
 * once); otherwise the walk stops there. */
static int md_drain(struct md *m, struct md_flow *f, enum wps_action a, uint64_t now,
		    enum wps_action gapr, int *fresh)
{
	while (f->n) {
		uint16_t g = md_first(f);

		if (g != f->neg) {
			if (gapr != WPS_ACT_IDLE && now - md_first_at(f, g) < m->timeout[f->peer])
				return MD_GAP;
			md_skip_add(f, f->neg, g, fresh);
			f->neg = g;
			a = gapr;
		}
		if (!md_pop(m, f, a, now))
			return MD_OPEN;
		f->neg++;
		a = WPS_ACT_INORDER;
	}
	return MD_EMPTY;
}

/* Give up on the gap: NEG to the smallest buffered group, released for a,
 * then the rest as md_drain says. A start hold gives up on the groups it
 * would still have taken, within the in-flight bound before the smallest
 * Group ID seen. */
static void md_skip(struct md *m, struct md_flow *f, enum wps_action a, uint64_t now,
		    enum wps_action gapr)
{
	int fresh = 1;

	if (!f->n) {
		f->holding = 0;
		return;
	}
	md_skip_add(f, (uint16_t)(f->neg - (f->holding ? m->cfg->inflight_groups : 0)), md_first(f), &fresh);
	f->holding = 0;
	f->neg = md_first(f);
	md_rearm(m, f, now, md_drain(m, f, a, now, gapr, &fresh));
}

/* A bound is reached and f gives way: an arrival before everything buffered
 * becomes NEG (it will cut through), else the buffered head is released. */
static void md_give_way(struct md *m, struct md_flow *f, uint16_t gid, uint64_t now)
{
	int fresh = 1;

	if (fz_serial(gid, md_first(f)) < 0) {
		md_skip_add(f, (uint16_t)(f->neg - (f->holding ? m->cfg->inflight_groups : 0)), gid, &fresh);
		f->holding = 0;
		f->neg = gid;
		return;
	}
	md_skip(m, f, WPS_ACT_BOUND, now, WPS_ACT_TIMER);
}

/* The armed flow (of peer pr; -1: of any) whose timer was armed first (the one waiting longest). */
static struct md_flow *md_oldest(struct md *m, int pr)
{
	struct md_flow *o = NULL;

	for (int i = 0; i < FZ_FLOWS; i++)
		if (m->fl[i].live && m->fl[i].armed && (pr < 0 || m->fl[i].peer == pr) &&
		    (!o || m->fl[i].arm_seq < o->arm_seq))
			o = &m->fl[i];
	return o;
}

/* A token bucket of burst new flows refilled at rate per second: whether it holds one now. */
static int md_bucket(struct md_bucket *b, uint32_t rate, uint32_t burst, uint64_t now)
{
	uint64_t cap = (uint64_t)burst * 1000000000ull;

	if (!b->init) {
		b->init = 1;
		b->tokens = cap;
		b->last = now;
	}
	if ((now - b->last) > cap / rate)
		b->tokens = cap;
	else
		b->tokens += (now - b->last) * rate;
	if (b->tokens > cap)
		b->tokens = cap;
	b->last = now;
	return b->tokens >= 1000000000ull;
}

/* A new flow state: refused when the peer's share of states is taken, its
 * policer has no token, or then the aggregate policer has none; a state
 * takes a token from both. */
static int md_admit(struct md *m, int pr, uint64_t now)
{
	const struct wps_reorder_cfg *c = m->cfg;

	if (m->plive[pr] == c->max_flows / c->max_peers)
		return 0;
	if (c->new_flows_per_sec && !md_bucket(&m->pol[pr], c->new_flows_per_sec, c->new_flows_burst, now))
		return 0;
	if (c->new_flows_total_per_sec &&
	    !md_bucket(&m->pol_all, c->new_flows_total_per_sec, c->new_flows_total_burst, now))
		return 0;
	if (c->new_flows_per_sec)
		m->pol[pr].tokens -= 1000000000ull;
	if (c->new_flows_total_per_sec)
		m->pol_all.tokens -= 1000000000ull;
	return 1;
}

/* One arrival, as the contract says. */
static void md_rx(struct md *m, int fi, const struct wps_pkt *p, uint32_t h, uint64_t now)
{
	const struct wps_reorder_cfg *c = m->cfg;
	struct md_flow *f = &m->fl[fi];
	int d, inflight = c->inflight_groups, fresh;

	m->nout = 0;
	m->resync_flow = -1;
	if (!f->live) {
		if (!md_admit(m, p->peer, now)) {
			md_emit(m, h, WPS_ACT_NOSTATE);
			return;
		}
		memset(f, 0, sizeof(*f));
		f->live = 1;
		f->peer = p->peer;
		f->neg = p->group_id;
		f->holding = c->start_hold;
		m->live++;
		m->plive[f->peer]++;
	}
	f->last_seen = now;
	d = fz_serial(p->group_id, f->neg);
	if (f->holding && d <= 0 && d >= -inflight) {
		f->neg = p->group_id;		/* the smallest seen so far */
		d = 1;				/* buffered, never cut through */
	}
	if (d > inflight) {
		if (++f->suspect_run < c->suspect_resync) {
			md_emit(m, h, WPS_ACT_SUSPECT);
			return;
		}
		/* The ingress moved on: what is buffered before it leaves. */
		while (f->n && fz_serial(md_first(f), p->group_id) < 0) {
			f->neg = md_first(f);
			md_pop(m, f, WPS_ACT_RESYNC, now);
		}
		f->holding = 0;
		f->neg = p->group_id;
		m->resync_flow = fi;
		m->resync_at = m->nout;
		fresh = 1;
		md_rearm(m, f, now, md_drain(m, f, WPS_ACT_RESYNC, now, WPS_ACT_TIMER, &fresh));
		d = fz_serial(p->group_id, f->neg);
	}
	f->suspect_run = 0;
	/* The bounds before buffering, so that buffering never passes them. */
	if (d > 0 && f->n >= c->flow_buffer) {
		md_give_way(m, f, p->group_id, now);
		d = f->holding ? 1 : fz_serial(p->group_id, f->neg);
	}
	/* The peer's share: its flow waiting longest gives way, until there is room. */
	while (d > 0 && m->pbuf[f->peer] == c->total_buffer / c->max_peers) {
		struct md_flow *v = md_oldest(m, f->peer);

		CHECK(v, "model: the peer's share is full and no timer of it runs");
		if (v == f) {
			md_give_way(m, f, p->group_id, now);
			d = fz_serial(p->group_id, f->neg);
			break;
		}
		md_skip(m, v, WPS_ACT_BOUND, now, WPS_ACT_TIMER);
	}
	if (d == 0) {
		/* NEG's group: out at once; while groups wait, each of its
		 * packets restarts the timer (it is still arriving). */
		md_emit(m, h, WPS_ACT_CUT);
		if (p->flags & WPS_FLAG_E) {
			f->neg++;
			fresh = 1;
			md_rearm(m, f, now, md_drain(m, f, WPS_ACT_INORDER, now, WPS_ACT_TIMER, &fresh));
		} else if (f->armed) {
			md_arm(m, f, now);
		}
	} else if (d < 0) {
		int gap = 0;

		md_emit(m, h, WPS_ACT_LATE);
		/* A group given up on: how late it came is a skew sample. A copy
		 * of one delivered, or a Group ID too far behind, says nothing. */
		for (int k = 0; k < f->nskip; k++)
			gap |= fz_serial(p->group_id, f->skip_lo[k]) >= 0 &&
			       fz_serial(p->group_id, f->skip_hi[k]) < 0;
		if (-d <= inflight && gap)
			md_skew(m, f->peer, now - f->gap_start);
	} else {
		CHECK(f->n < FZ_MAX_BUF, "model: flow buffer overflow");
		f->q[f->n++] = (struct md_pkt){ .h = h, .gid = p->group_id,
						.end = !!(p->flags & WPS_FLAG_E), .at = now };
		m->total++;
		m->pbuf[f->peer]++;
		if (!f->armed)
			md_arm(m, f, now);
	}
}

/* The flow whose timer is due by now with the earliest deadline (its peer's
 * timeout after it was armed); ties to the one armed first. */
static struct md_flow *md_due(struct md *m, uint64_t now)
{
	struct md_flow *o = NULL;

	for (int i = 0; i < FZ_FLOWS; i++) {
		struct md_flow *f = &m->fl[i];
		uint64_t dl = f->armed_at + m->timeout[f->peer];

		if (!f->live || !f->armed || now - f->armed_at < m->timeout[f->peer])
			continue;
		if (!o || dl < o->armed_at + m->timeout[o->peer] ||
		    (dl == o->armed_at + m->timeout[o->peer] && f->arm_seq < o->arm_seq))
			o = f;
	}
	return o;
}

/* Timers due by now, earliest deadline first; an expiry during the start hold ends the hold. */
static void md_tick(struct md *m, uint64_t now)
{
	struct md_flow *f;

	m->nout = 0;
	m->resync_flow = -1;
	/* NEG to the smallest buffered group, then every gap whose next group
	 * has waited its timeout; a start hold's end releases the group it
	 * expects for HOLD, and the groups after gaps behind it by timer. */
	while ((f = md_due(m, now)))
		md_skip(m, f, f->holding ? WPS_ACT_HOLD : WPS_ACT_TIMER, now, WPS_ACT_TIMER);
}

/* Shutdown: each flow, oldest timer first, releases all it holds. */
static void md_flush(struct md *m)
{
	struct md_flow *f;

	m->nout = 0;
	m->resync_flow = -1;
	while ((f = md_oldest(m, -1))) {
		while (f->n)
			md_skip(m, f, WPS_ACT_IDLE, 0, WPS_ACT_IDLE);
		f->armed = 0;
	}
}

/* ---- the run -------------------------------------------------------------- */

/* What the runs so far went through, for a driver to see that they reached
 * every reason a packet can leave for and some idle reclaims. */
uint64_t wps_fuzz_actions[WPS_ACT__MAX], wps_fuzz_reclaims;
uint64_t wps_fuzz_batched;	/* packets the twin took in batches of more than one */

struct fz {
	struct fz_pkt pkt[FZ_MAX_OPS];
	struct fz_flow fl[FZ_FLOWS];
	uint32_t waiting;
	struct wps_reorder_cfg cfg;
	int same_node;			/* two peers, both with Ingress Node ID 1 */
	struct md m;
	/* the engine's live flows, read with wps_reorder_foreach */
	int eng_live[FZ_FLOWS];
	uint16_t eng_neg[FZ_FLOWS];
	uint32_t eng_buffered[FZ_FLOWS];
};

/* Model flow fi: peer fi / 4 with two peers (else 0); Ingress Node ID 1 + fi / 4, or
 * 1 for both peers (same_node); Flow ID fi % 4. */
static void fz_key(const struct fz *z, int fi, struct wps_pkt *p)
{
	p->peer = z->cfg.max_peers == 2 ? (uint16_t)(fi / 4) : 0;
	p->ingress_node = z->same_node ? 1 : (uint16_t)(1 + fi / 4);
	p->flow_id = (uint16_t)(fi % 4);
}

static int fz_flow_of(const struct fz *z, uint16_t peer, uint16_t node, uint16_t fid)
{
	for (int fi = 0; fi < FZ_FLOWS; fi++) {
		struct wps_pkt p;

		fz_key(z, fi, &p);
		if (p.peer == peer && p.ingress_node == node && p.flow_id == fid)
			return fi;
	}
	return -1;
}

static int fz_foreach_cb(uint16_t peer, uint16_t node, uint16_t fid, uint16_t neg,
			 const struct wps_flow_stats *s, void *arg)
{
	struct fz *z = arg;
	int fi = fz_flow_of(z, peer, node, fid);

	CHECK(fi >= 0 && !z->eng_live[fi], "engine reports flow (%u, %u, %u) twice or unknown", peer, node,
	      fid);
	z->eng_live[fi] = 1;
	z->eng_neg[fi] = neg;
	z->eng_buffered[fi] = s->buffered;
	return 0;
}

static void fz_read_flows(struct fz *z, struct wps_reorder *e)
{
	memset(z->eng_live, 0, sizeof(z->eng_live));
	wps_reorder_foreach(e, fz_foreach_cb, z);
}

static const char *fz_act(unsigned a)
{
	return wps_action_name(a);
}

/* The engine's outputs against the model's, one by one; with more_ok (a
 * tick), the engine may emit more: idle flushes, checked by fz_reclaims(). */
static void fz_expect(struct fz *z, const struct wps_out *o, uint32_t n, const char *call,
		      int more_ok)
{
	for (uint32_t i = 0; i < z->m.nout; i++) {
		const struct wps_out *w = &z->m.out[i];

		CHECK(i < n, "%s: output %u: the engine stops after %u, the model has h%llu %s", call,
		      i, n, (unsigned long long)w->handle, fz_act(w->action));
		CHECK(o[i].handle == w->handle && o[i].action == w->action,
		      "%s: output %u: engine h%llu %s, model h%llu %s (flow %u gid %u)", call, i,
		      (unsigned long long)o[i].handle, fz_act(o[i].action),
		      (unsigned long long)w->handle, fz_act(w->action), z->pkt[w->handle].flow,
		      z->pkt[w->handle].gid);
	}
	CHECK(more_ok || n == z->m.nout, "%s: output %u: engine h%llu %s, the model has no more",
	      call, z->m.nout, (unsigned long long)o[z->m.nout].handle, fz_act(o[z->m.nout].action));
}

/* Handle bookkeeping and the order check, on outputs the model agreed with. */
static void fz_outputs(struct fz *z, const struct wps_out *o, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t h = o[i].handle;
		struct fz_pkt *p;
		struct fz_flow *f;

		CHECK(h < FZ_MAX_OPS && z->pkt[h].state == 1,
		      "handle %llu left but is not waiting (state %d)", (unsigned long long)h,
		      h < FZ_MAX_OPS ? z->pkt[h].state : -1);
		p = &z->pkt[h];
		f = &z->fl[p->flow];
#ifdef FZ_TRACE
		fprintf(stderr, "  out h%llu flow %u gid %u #%u %s\n", (unsigned long long)h, p->flow,
			p->gid, p->seq, fz_act(o[i].action));
#endif
		p->state = 2;
		f->waiting--;
		z->waiting--;
		wps_fuzz_actions[o[i].action]++;
		if (p->flow == z->m.resync_flow && i >= z->m.resync_at) {
			f->has_last = 0;
			z->m.resync_flow = -1;
		}
		if (o[i].action == WPS_ACT_LATE || o[i].action == WPS_ACT_SUSPECT ||
		    o[i].action == WPS_ACT_NOSTATE)
			continue;
		if (f->has_last) {
			int d = fz_serial(p->gid, f->last_gid);

			CHECK(d > 0 || (d == 0 && p->seq > f->last_seq),
			      "flow %u: group %u #%u (%s) left after group %u #%u", p->flow, p->gid,
			      p->seq, fz_act(o[i].action), f->last_gid, f->last_seq);
		}
		f->has_last = 1;
		f->last_gid = p->gid;
		f->last_seq = p->seq;
	}
}

/* After a tick's timers, the engine may have reclaimed idle flows: each must
 * have been silent for the idle period, and its buffered packets are the rest
 * of the outputs, idle flushes in (Group ID, arrival) order per flow. The
 * flows reclaimed are left in gone[]. */
static void fz_reclaims(struct fz *z, struct wps_reorder *e, const struct wps_out *o, uint32_t n,
			uint64_t now, int gone[FZ_FLOWS])
{
	struct md *m = &z->m;

	fz_read_flows(z, e);
	for (int i = 0; i < FZ_FLOWS; i++) {
		struct md_flow *f = &m->fl[i];

		CHECK(!z->eng_live[i] || f->live, "engine holds flow %d, the model has none", i);
		if (!f->live || z->eng_live[i])
			continue;
		CHECK(now - f->last_seen >= z->cfg.idle_ns,
		      "flow %d reclaimed %llu ns after its last packet (idle period %llu)", i,
		      (unsigned long long)(now - f->last_seen), (unsigned long long)z->cfg.idle_ns);
		gone[i] = 1;
	}
	for (uint32_t i = m->nout; i < n; i++) {
		uint64_t h = o[i].handle;
		struct md_flow *f;
		uint16_t gid;
		uint32_t k;

		CHECK(o[i].action == WPS_ACT_IDLE && h < FZ_MAX_OPS && gone[z->pkt[h].flow],
		      "tick: output %u: engine h%llu %s, the model has no more (after the timers "
		      "only idle flushes of reclaimed flows)", i, (unsigned long long)h,
		      fz_act(o[i].action));
		f = &m->fl[z->pkt[h].flow];
		gid = md_first(f);
		for (k = 0; k < f->n && f->q[k].gid != gid; k++)
			;
		CHECK(k < f->n && f->q[k].h == h, "tick: idle flush h%llu out of order",
		      (unsigned long long)h);
		memmove(&f->q[k], &f->q[k + 1], (f->n - k - 1) * sizeof(f->q[0]));
		f->n--;
		m->total--;
		m->pbuf[f->peer]--;
	}
	for (int i = 0; i < FZ_FLOWS; i++) {
		if (!gone[i])
			continue;
		CHECK(!m->fl[i].n, "flow %d reclaimed with %u packets kept", i, m->fl[i].n);
		m->fl[i].live = 0;
		m->fl[i].armed = 0;
		m->live--;
		m->plive[m->fl[i].peer]--;
		wps_fuzz_reclaims++;
	}
}

/* What the engine holds against the model: occupancy, flows, NEG, timeout, bounds. */
static void fz_state(struct fz *z, struct wps_reorder *e)
{
	struct wps_total_stats t;

	wps_reorder_totals(e, &t);
	CHECK(t.buffered == z->waiting, "engine buffers %u, model counts %u", t.buffered, z->waiting);
	CHECK(z->m.total == z->waiting, "the model buffers %u, %u are waiting", z->m.total,
	      z->waiting);
	CHECK(z->waiting <= z->cfg.total_buffer, "%u waiting > total bound %u", z->waiting,
	      z->cfg.total_buffer);
	CHECK(t.flows == z->m.live && t.flows <= z->cfg.max_flows, "%u flows, the model %u (max %u)",
	      t.flows, z->m.live, z->cfg.max_flows);
	for (uint16_t k = 0; k < z->cfg.max_peers; k++) {
		struct wps_peer_stats ps;

		wps_reorder_peer(e, k, &ps);
		CHECK(wps_reorder_timeout(e, k) == z->m.timeout[k], "peer %u: timeout %llu, the model's %llu", k,
		      (unsigned long long)wps_reorder_timeout(e, k), (unsigned long long)z->m.timeout[k]);
		CHECK(ps.buffered == z->m.pbuf[k] && ps.buffered <= z->cfg.total_buffer / z->cfg.max_peers,
		      "peer %u: buffers %u, the model %u (share %u)", k, ps.buffered, z->m.pbuf[k],
		      z->cfg.total_buffer / z->cfg.max_peers);
		CHECK(ps.flows == z->m.plive[k] && ps.flows <= z->cfg.max_flows / z->cfg.max_peers,
		      "peer %u: %u flows, the model %u", k, ps.flows, z->m.plive[k]);
	}
	fz_read_flows(z, e);
	for (int i = 0; i < FZ_FLOWS; i++) {
		CHECK(z->fl[i].waiting <= z->cfg.flow_buffer, "flow %d: %u waiting > flow bound %u", i,
		      z->fl[i].waiting, z->cfg.flow_buffer);
		CHECK(z->eng_live[i] == z->m.fl[i].live, "flow %d: engine state %d, model %d", i,
		      z->eng_live[i], z->m.fl[i].live);
		if (!z->eng_live[i])
			continue;
		CHECK(z->eng_neg[i] == z->m.fl[i].neg && z->eng_buffered[i] == z->m.fl[i].n,
		      "flow %d: engine NEG %u buffering %u, model NEG %u buffering %u", i,
		      z->eng_neg[i], z->eng_buffered[i], z->m.fl[i].neg, z->m.fl[i].n);
	}
}

/* The batched twin (see the top): packets kept for its next batch, and the
 * first engine's outputs for them, which the batch must give. */
struct fz_twin {
	struct wps_reorder *e;
	struct wps_pkt p[WPS_REORDER_BATCH];
	uint64_t h[WPS_REORDER_BATCH], now;
	uint32_t n, nwant;
	struct wps_out want[FZ_MAX_OPS];
};

static void twin_want(struct fz_twin *t, const struct wps_out *o, uint32_t n)
{
	CHECK(t->nwant + n <= FZ_MAX_OPS, "twin: too many outputs");
	memcpy(&t->want[t->nwant], o, n * sizeof(*o));
	t->nwant += n;
}

static void twin_same(struct fz_twin *t, const struct wps_out *o, uint32_t n, const char *call)
{
	CHECK(n == t->nwant, "%s: the twin gives %u outputs, one by one gave %u", call, n, t->nwant);
	for (uint32_t i = 0; i < n; i++)
		CHECK(o[i].handle == t->want[i].handle && o[i].action == t->want[i].action,
		      "%s: output %u: twin h%llu %s, one by one h%llu %s", call, i,
		      (unsigned long long)o[i].handle, fz_act(o[i].action),
		      (unsigned long long)t->want[i].handle, fz_act(t->want[i].action));
	t->nwant = 0;
}

/* The twin runs its batch; the first engine e has run its packets one by one. */
static void twin_batch(struct fz_twin *t, struct wps_reorder *e)
{
	struct wps_total_stats a, b;
	uint32_t n;

	if (!t->n)
		return;
	if (t->n > 1)
		wps_fuzz_batched += t->n;
	n = wps_reorder_rx_batch(t->e, t->p, t->h, t->n, t->now);
	twin_same(t, wps_reorder_out(t->e), n, "batch");
	t->n = 0;
	wps_reorder_totals(e, &a);
	wps_reorder_totals(t->e, &b);
	CHECK(a.buffered == b.buffered && a.flows == b.flows, "twin: %u buffered in %u flows, one by one %u in %u",
	      b.buffered, b.flows, a.buffered, a.flows);
}

int wps_reorder_fuzz_one(const uint8_t *data, size_t size)
{
	static struct fz_twin tw;
	static struct fz z;
	struct wps_reorder *e;
	const struct wps_out *o;
	uint64_t now = 1000;
	size_t pos = 8;
	uint32_t nin = 0, n;

	if (size < 8)
		return 0;
	memset(&z, 0, sizeof(z));
	wps_reorder_cfg_defaults(&z.cfg);
	z.cfg.flow_buffer = 1 + data[0] % 12;
	z.cfg.total_buffer = 1 + data[1] % FZ_MAX_BUF;
	z.cfg.max_flows = 1 + data[2] % FZ_FLOWS;
	z.cfg.release_timeout_ns = (data[3] & 1) ? 0 : 1000ull * (1 + data[3] % 50);
	z.cfg.timeout_min_ns = 1000;
	z.cfg.timeout_max_ns = 200000;
	z.cfg.timeout_init_ns = 20000;
	z.cfg.skew_mult = 1 + data[4] % 4;
	z.cfg.idle_ns = 100000ull * (1 + data[4] / 16);
	z.cfg.new_flows_per_sec = (data[5] & 1) ? 0 : 1000u * (1 + data[5] % 100);
	z.cfg.new_flows_burst = 1 + data[5] % 3;
	z.cfg.inflight_groups = (uint16_t)(1 + data[6] % 40);
	z.cfg.suspect_resync = (uint16_t)(1 + data[7] % 6);
	z.cfg.start_hold = data[7] & 0x80;
	/* Two peers (shares of at least one packet and one state each), maybe with the same node ID. */
	z.cfg.max_peers = (data[2] & 0x80) && z.cfg.total_buffer >= 2 && z.cfg.max_flows >= 2 ? 2 : 1;
	z.same_node = z.cfg.max_peers == 2 && (data[2] & 0x40);
	z.cfg.new_flows_total_per_sec = (data[7] & 0x40) ? 1000u * (1 + data[6] % 50) : 0;
	z.cfg.new_flows_total_burst = 1 + (data[7] >> 3) % 4;
	e = wps_reorder_new(&z.cfg);
	CHECK(e, "valid configuration refused");
	memset(&tw, 0, sizeof(tw));
	tw.e = wps_reorder_new(&z.cfg);
	CHECK(tw.e, "valid configuration refused");
	z.m.cfg = &z.cfg;
	for (int k = 0; k < 2; k++) {
		if (!z.cfg.release_timeout_ns)	/* the estimate starts where the initial timeout puts it */
			z.m.skew[k] = z.cfg.timeout_init_ns / z.cfg.skew_mult;
		md_timeout(&z.m, k);
	}
	for (int i = 0; i < FZ_FLOWS; i++)
		z.fl[i].base = (uint16_t)(i * 9000 + 65530);

	for (; pos + 4 <= size && nin < FZ_MAX_OPS; pos += 4) {
		uint8_t op = data[pos], a = data[pos + 1], b = data[pos + 2], c = data[pos + 3];

		if (c & 0x80)
			now += (uint64_t)(c & 0x7f) * 200;
		else if (c & 0x40)
			twin_batch(&tw, e);	/* a cut the input asks for */
		if (now != tw.now || tw.n == WPS_REORDER_BATCH)
			twin_batch(&tw, e);
		tw.now = now;
		if ((op & 3) == 3) {
			now += (uint64_t)a * 10000;
			continue;
		}
		if ((op & 3) == 2) {
#ifdef FZ_TRACE
			fprintf(stderr, "tick t %llu\n", (unsigned long long)now);
#endif
			int gone[FZ_FLOWS] = { 0 };

			twin_batch(&tw, e);
			n = wps_reorder_tick(e, now);
			o = wps_reorder_out(e);
			twin_want(&tw, o, n);
			twin_same(&tw, wps_reorder_out(tw.e), wps_reorder_tick(tw.e, now), "tick");
			md_tick(&z.m, now);
			fz_expect(&z, o, n, "tick", 1);
			fz_reclaims(&z, e, o, n, now, gone);
			fz_outputs(&z, o, n);
			/* A new state for a reclaimed flow starts wherever the flow is. */
			for (int i = 0; i < FZ_FLOWS; i++)
				if (gone[i])
					z.fl[i].has_last = 0;
			fz_state(&z, e);
			CHECK(wps_reorder_next_deadline(e) > now, "a deadline is overdue after tick");
			continue;
		}
		{
			uint8_t fi = (op >> 2) & (FZ_FLOWS - 1);
			struct fz_flow *f = &z.fl[fi];
			struct wps_pkt p = {
				.flags = op & 0xc0,	/* S and E at random; E ends the group below */
			};
			uint32_t h = nin++;

			fz_key(&z, fi, &p);
			if ((a & 0xc0) == 0xc0)		/* far: forged or stale */
				p.group_id = (uint16_t)((b << 8) | a);
			else				/* near the sender's progress, mostly ahead */
				p.group_id = (uint16_t)(f->base + (int)(a & 0x0f) - 3);
			if (p.group_id == f->base && (p.flags & WPS_FLAG_E))
				f->base++;
			z.pkt[h] = (struct fz_pkt){ .flow = fi, .gid = p.group_id, .seq = f->seq++, .state = 1 };
			f->waiting++;
			z.waiting++;
#ifdef FZ_TRACE
			fprintf(stderr, "rx h%u flow %u gid %u flags %x t %llu\n", h, fi, p.group_id, p.flags,
				(unsigned long long)now);
#endif
			n = wps_reorder_rx(e, &p, h, now);
			o = wps_reorder_out(e);
			twin_want(&tw, o, n);
			tw.p[tw.n] = p;
			tw.h[tw.n++] = h;
			md_rx(&z.m, fi, &p, h, now);
			fz_expect(&z, o, n, "rx", 0);
			fz_outputs(&z, o, n);
			fz_state(&z, e);
		}
	}
	twin_batch(&tw, e);
	n = wps_reorder_flush(e);
	o = wps_reorder_out(e);
	twin_want(&tw, o, n);
	twin_same(&tw, wps_reorder_out(tw.e), wps_reorder_flush(tw.e), "flush");
	md_flush(&z.m);
	fz_expect(&z, o, n, "flush", 0);
	fz_outputs(&z, o, n);
	CHECK(z.waiting == 0, "%u packets never left", z.waiting);
	for (uint32_t h = 0; h < nin; h++)
		CHECK(z.pkt[h].state == 2, "packet %u never left", h);
	wps_reorder_free(e);
	wps_reorder_free(tw.e);
	return 0;
}

#ifdef WPS_FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return wps_reorder_fuzz_one(data, size);
}
#endif
