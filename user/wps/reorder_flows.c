// SPDX-License-Identifier: BSD-2-Clause
/*
 * The reorder engine's flow table and pools (reorder_int.h): made and freed
 * with the engine, flow states created (policed per peer and in aggregate)
 * and reclaimed, prefetched, and read out for the statistics.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "wps/reorder_int.h"

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

struct flow *reorder_flow_create(struct wps_reorder *e, const struct wps_pkt *p, uint64_t now)
{
	struct peer *pr = &e->peers[p->peer];
	struct flow *f;
	uint32_t i, b, h;

	if (pr->st.flows >= e->peer_flows || e->ffree == NIL) {
		pr->st.flows_table_full++;
		e->tot.flows_table_full++;
		return NULL;
	}
	if (!policer_admit(e, pr, now))
		return NULL;
	i = e->ffree;
	f = &e->flows[i];
	e->ffree = f->lru_next;
	memset(f, 0, sizeof(*f));
	f->peer = p->peer;
	f->node = p->ingress_node;
	f->fid = p->flow_id;
	f->neg = p->group_id;	/* the ingress starts at an arbitrary Group ID */
	f->holding = e->cfg.start_hold;
	f->lru_stamp = now;
	f->gfirst = f->glast = NIL;
	f->lru_prev = f->lru_next = f->tm_prev = f->tm_next = NIL;
	h = hash_key(f->peer, f->node, f->fid);
	for (b = h & e->hmask;; b = (b + 1) & e->hmask) {
		struct hbkt *k = &e->hb[b];
		int s;

		for (s = 0; s < HB_SLOTS && k->sig[s]; s++)
			;
		if (s < HB_SLOTS) {
			k->sig[s] = h | 1;
			k->idx[s] = i;
			break;
		}
		k->ovf++;
	}
	LIST_APPEND(e, f, i, lru_prev, lru_next, e->lru_head, e->lru_tail);
	e->tot.flows_created++;
	e->tot.flows++;
	pr->st.flows_created++;
	pr->st.flows++;
	return f;
}

void reorder_flow_free(struct wps_reorder *e, struct flow *f, enum wps_action a)
{
	uint32_t i = fidx(e, f);

	while (f->gfirst != NIL)
		reorder_pop_group(e, f, a, 0);
	timer_disarm(e, f);
	LIST_UNLINK(e, f, i, lru_prev, lru_next, e->lru_head, e->lru_tail);
	/* Out of the table: the buckets it passed on its way in no longer lead past them to it. */
	for (uint32_t b = hash_key(f->peer, f->node, f->fid) & e->hmask;; b = (b + 1) & e->hmask) {
		struct hbkt *k = &e->hb[b];
		int s;

		for (s = 0; s < HB_SLOTS && k->idx[s] != i; s++)
			;
		if (s < HB_SLOTS) {
			k->sig[s] = 0;
			k->idx[s] = NIL;
			break;
		}
		k->ovf--;
	}
	f->lru_next = e->ffree;
	e->ffree = i;
	e->tot.flows--;
	e->peers[f->peer].st.flows--;
	e->tot.flows_reclaimed++;
}

const struct wps_out *wps_reorder_out(const struct wps_reorder *e)
{
	return e->out;
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
	free(e->hb);
	free(e->peers);
	free(e->out);
	free(e);
}

/*
 * A pool that packets reach at random, zeroed: from 2 MiB on, on huge pages
 * where the kernel gives them (transparent huge pages in "always" or
 * "madvise" mode). At 100,000 flows the states alone span 4,800 pages of
 * 4 KiB, more than the TLB holds: nearly every change of flow paid a page
 * walk besides its cache misses (bench/README.md: 7-14 % of the time a
 * packet at 100,000 flows). Without them the pool is the same, on small
 * pages.
 */
static void *pool_alloc(size_t n, size_t elem)
{
	const size_t huge = 2u << 20;
	size_t size = n * elem;
	void *p;

	/* As calloc: a count whose size, rounded up, does not fit (32-bit builds) is no pool. */
	if (elem && n > (SIZE_MAX - huge) / elem)
		return NULL;
	if (size < huge) {
		p = aligned_alloc(64, (size + 63) & ~(size_t)63);
	} else {
		size = (size + huge - 1) & ~(huge - 1);
		p = aligned_alloc(huge, size);
		if (p)
			(void)madvise(p, size, MADV_HUGEPAGE);	/* before the first touch, which allocates */
	}
	if (p)
		memset(p, 0, size);
	return p;
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
	/* Buckets for four flows each of their seven: few overflow. */
	while (nb * 4 < cfg->max_flows)
		nb <<= 1;
	e->hmask = nb - 1;
	e->pkts = pool_alloc(cfg->total_buffer, sizeof(*e->pkts));
	e->grps = pool_alloc(cfg->total_buffer, sizeof(*e->grps));
	e->flows = pool_alloc(cfg->max_flows, sizeof(*e->flows));
	e->hb = pool_alloc(nb, sizeof(*e->hb));
	e->peers = calloc(cfg->max_peers, sizeof(*e->peers));
	e->out = calloc((size_t)cfg->total_buffer + WPS_REORDER_BATCH, sizeof(*e->out));
	if (!e->pkts || !e->grps || !e->flows || !e->hb || !e->peers || !e->out) {
		wps_reorder_free(e);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t b = 0; b < nb; b++)
		for (int s = 0; s < HB_SLOTS; s++)
			e->hb[b].idx[s] = NIL;
	for (uint32_t i = 0; i < cfg->total_buffer; i++) {
		e->pkts[i].next = i + 1 < cfg->total_buffer ? i + 1 : NIL;
		e->grps[i].next = i + 1 < cfg->total_buffer ? i + 1 : NIL;
	}
	for (uint32_t i = 0; i < cfg->max_flows; i++)
		e->flows[i].lru_next = i + 1 < cfg->max_flows ? i + 1 : NIL;
	e->pfree = e->gfree = e->ffree = 0;
	e->lru_head = e->lru_tail = NIL;
	e->peer_buffer = cfg->total_buffer / cfg->max_peers;
	e->peer_flows = cfg->max_flows / cfg->max_peers;
	for (uint32_t k = 0; k < cfg->max_peers; k++) {
		struct peer *p = &e->peers[k];

		p->tm_head = p->tm_tail = NIL;
		if (!cfg->release_timeout_ns)
			p->skew = cfg->timeout_init_ns / cfg->skew_mult;
		reorder_timeout_update(e, p);
	}
	return e;
}
