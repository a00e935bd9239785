/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The WPS ingress's rules and flow table: the rule a packet matches, Flow IDs
 * and table slots claimed and given back, the flow found (home slot, flow
 * cache, hash map) or made, idle flows swept.
 */
#ifndef UBXDP_WPS_INGRESS_FLOW_H
#define UBXDP_WPS_INGRESS_FLOW_H

#include "wps_ingress/parse.h"

/*
 * The index of the first rule the packet matches, or -1. ubctl keeps rules
 * disjoint and packed. Global: the verifier checks the walk once, not on
 * every path through the rest of the program; a known flow's packet mostly
 * does without it (wps_in_flow.cls), so the call seldom costs.
 */
__noinline int classify(const struct pkt *p)
{
	if (!p)
		return -1;
	/* The key is a copy: a counter whose address goes to a helper lives on
	 * the stack, where 6.1's verifier loses its value ("infinite loop"). */
	for (__u32 i = 0; i < WPS_IN_MAX_RULES; i++) {
		__u32 key = i;
		struct wps_in_rule *r = bpf_map_lookup_elem(&wps_in_rules, &key);

		if (!r || !r->used)
			return -1;
		if (r->family != p->key.family)
			continue;
		if (r->proto && r->proto != p->key.proto)
			continue;
		if (r->dport && (!p->has_ports || r->dport != bpf_ntohs(p->key.dport)))
			continue;
		/* A wildcard prefix (length 0) matches without its four words compared. */
		if ((r->dst_plen && !wps_prefix_match(p->key.daddr, r->dst, r->dst_plen)) ||
		    (r->src_plen && !wps_prefix_match(p->key.saddr, r->src, r->src_plen)))
			continue;
		return (int)i;
	}
	return -1;
}

static __always_inline void fid_release(__u16 fid, __u64 reusable_at)
{
	__u32 k = fid;
	__u64 *st = bpf_map_lookup_elem(&wps_in_fid_state, &k);

	if (st)
		__sync_lock_test_and_set(st, reusable_at);
}

/*
 * A Flow ID neither in use nor resting in quarantine, claimed atomically; 0
 * if none. Global, as sweep(): checked once by the verifier, not at each
 * call site.
 */
__noinline int fid_alloc(__u64 now)
{
	__u32 zero = 0;
	const struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	__u32 pool, start = __sync_fetch_and_add(&fid_cursor, 1);

	if (!cfg)
		return 0;
	pool = cfg->fid_pool;

	if (pool == 0 || pool >= WPS_IN_FID_SLOTS)
		pool = WPS_IN_FID_SLOTS - 1;
	if (cfg->flags & WPS_IN_F_TEST_FID_REUSE)
		return (int)(1 + start % pool);
	for (__u32 i = 0; i < WPS_IN_FID_TRIES && i < pool; i++) {
		__u32 fid = 1 + (start + i) % pool;
		__u64 *st = bpf_map_lookup_elem(&wps_in_fid_state, &fid);
		__u64 old;

		if (!st)
			return 0;
		old = *st;
		if (old == WPS_IN_FID_IN_USE || old > now)
			continue;
		if (__sync_val_compare_and_swap(st, old, WPS_IN_FID_IN_USE) == old) {
			__sync_fetch_and_add(&fid_cursor, i);
			return (int)fid;
		}
	}
	return 0;
}

/*
 * A free slot of the flow table, claimed atomically (flow_state.claim): the
 * flow's home slot or the other of its pair (wps_flow_home), else one of
 * WPS_IN_FID_TRIES candidates from the cursor; -1 if none. Global: checked
 * once.
 */
__noinline int slot_alloc(__u32 home)
{
	__u32 start, n = 2 * max_flows;

	/* Its home slot or the other of its pair if free: a flow there is found without the cache. */
	for (__u32 i = 0; i < 2; i++) {
		__u32 slot = home ^ i;
		struct wps_in_flow *hf = bpf_map_lookup_elem(&wps_in_flow_state, &slot);

		if (hf && !*(volatile __u32 *)&hf->claim && __sync_val_compare_and_swap(&hf->claim, 0, 1) == 0)
			return (int)slot;
	}
	start = __sync_fetch_and_add(&slot_cursor, 1);
	for (__u32 i = 0; i < WPS_IN_FID_TRIES; i++) {
		__u32 slot = (start + i) & (n - 1);
		struct wps_in_flow *f = bpf_map_lookup_elem(&wps_in_flow_state, &slot);

		if (!f)
			return -1;
		if (!*(volatile __u32 *)&f->claim && __sync_val_compare_and_swap(&f->claim, 0, 1) == 0) {
			__sync_fetch_and_add(&slot_cursor, i);
			return (int)slot;
		}
	}
	return -1;
}

/* A slot given back: its key cleared first, so no cache entry finds it. */
static __always_inline void slot_release(__u32 slot)
{
	struct wps_in_flow_hot *h = bpf_map_lookup_elem(&wps_in_flow_hot, &slot);
	struct wps_in_flow *f = bpf_map_lookup_elem(&wps_in_flow_state, &slot);

	if (h)
		__builtin_memset(&h->key, 0, sizeof(h->key));
	if (f)
		__sync_lock_test_and_set(&f->claim, 0);
}

static __always_inline bool key_eq(const struct wps_in_flow_key *a, const struct wps_in_flow_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	return !((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3]) | (x[4] ^ y[4]));
}

/*
 * The flow cache learns the slot of key (hash h): in an empty way of its set
 * if there is one (or the way that already names it), else in the way the
 * hash picks.
 */
static __always_inline void cache_fill(struct wps_in_fcache *c, __u64 h, __u32 slot)
{
	__u32 tag = (__u32)(h >> 32) | 1, w = wps_idx((__u32)(h >> 16)) & (WPS_IN_CACHE_WAYS - 1);

#pragma unroll
	for (int i = WPS_IN_CACHE_WAYS - 1; i >= 0; i--)
		if (!c->tag[i] || c->tag[i] == tag)
			w = (__u32)i;
	c->tag[w] = tag;
	c->slot1[w] = slot + 1;
}

static __always_inline void cache_put(__u64 h, __u32 slot)
{
	__u32 set = (__u32)h & (max_flows - 1);
	struct wps_in_fcache *c = bpf_map_lookup_elem(&wps_in_flow_cache, &set);

	if (c)
		cache_fill(c, h, slot);
}

/*
 * The slot of a flow not at its home pair (hash h), or -1: the cache, then
 * the hash map, whose slot then goes into the cache. Global: checked once,
 * and its code is out of the way of a packet whose flow is at home (most).
 */
__noinline int flow_find_away(const struct wps_in_flow_key *key, __u64 h)
{
	__u32 set = (__u32)h & (max_flows - 1), tag = (__u32)(h >> 32) | 1, slot;
	struct wps_in_flow_key k;
	struct wps_in_flow_hot *hot;
	struct wps_in_flow_ref *ref;
	struct wps_in_fcache *c;

	if (!key)
		return -1;
	/* On the stack: a map key must be there for 6.1's verifier. */
	__builtin_memcpy(&k, key, sizeof(k));
	c = bpf_map_lookup_elem(&wps_in_flow_cache, &set);
	if (!c)
		return -1;
#pragma unroll
	for (int w = 0; w < WPS_IN_CACHE_WAYS; w++) {
		if (c->tag[w] != tag)
			continue;
		slot = c->slot1[w] - 1;
		hot = bpf_map_lookup_elem(&wps_in_flow_hot, &slot);
		if (hot && key_eq(&hot->key, &k))
			return (int)slot;
	}
	ref = bpf_map_lookup_elem(&wps_in_flows, &k);
	if (!ref)
		return -1;
	cnt(WPS_IN_CNT_EV_CACHE_MISS);
	slot = ref->slot;
	cache_fill(c, h, slot);
	return (int)slot;
}

/*
 * The flow of key (hash h): its hot line, its slot in *slot; NULL (and -1)
 * when there is none. Its home slot first (most flows are there: one cache
 * line found, the one the packet then uses), then flow_find_away().
 */
static __always_inline struct wps_in_flow_hot *flow_find(const struct wps_in_flow_key *key, __u64 h, int *slot)
{
	__u32 home = wps_flow_home(h, max_flows), s = home;
	struct wps_in_flow_hot *hot = bpf_map_lookup_elem(&wps_in_flow_hot, &s);
	int away;

	if (likely(hot && key_eq(&hot->key, key))) {
		*slot = (int)s;
		return hot;
	}
	s = home ^ 1;
	hot = bpf_map_lookup_elem(&wps_in_flow_hot, &s);
	if (hot && key_eq(&hot->key, key)) {
		*slot = (int)s;
		return hot;
	}
	away = flow_find_away(key, h);
	*slot = away;
	if (away < 0)
		return NULL;
	s = (__u32)away;
	return bpf_map_lookup_elem(&wps_in_flow_hot, &s);
}

struct bpf_map;

struct sweep_ctx {
	__u32 now;
	__u32 idle;
};

/*
 * Only notes the idle flows; sweep() deletes them after the walk and
 * releases a Flow ID only once its flow is gone (a failed delete must not
 * free an ID still in use).
 */
static long sweep_cb(struct bpf_map *map, struct wps_in_flow_key *key, struct wps_in_flow_ref *ref,
		     struct sweep_ctx *c)
{
	__u32 zero = 0, slot = ref->slot;
	struct scratch *sc = bpf_map_lookup_elem(&wps_in_scratch, &zero);
	struct wps_in_flow_hot *h = bpf_map_lookup_elem(&wps_in_flow_hot, &slot);
	__u32 seen;
	__u64 n;

	(void)map;
	if (!sc || !h)
		return 1;
	seen = h->seen;
	n = sc->swept;
	if (n >= WPS_IN_SWEEP_MAX)
		return 1;
	/* idle: wrapping distance, a flow seen "in the future" (another CPU's later clock) is not */
	if ((__s32)(c->now - seen) >= 0 && c->now - seen >= c->idle) {
		__builtin_memcpy(&sc->swept_key[n], key, sizeof(*key));
		sc->swept_slot[n] = slot;
		sc->swept_seen[n] = seen;
		sc->swept = n + 1;
	}
	return sc->swept >= WPS_IN_SWEEP_MAX;
}

/* cfg.idle_ns in flow_hot.seen's units, rounded up. */
static __always_inline __u32 idle_units(const struct wps_in_cfg *cfg)
{
	return (__u32)((cfg->idle_ns + (1ULL << WPS_SEEN_SHIFT) - 1) >> WPS_SEEN_SHIFT);
}

/*
 * Forget idle flows (at most WPS_IN_SWEEP_MAX), their Flow IDs into
 * quarantine from their last packet: on a full table, and when the Flow ID
 * pool is spent, since idle flows would otherwise hold their IDs for ever.
 */
__noinline int sweep(__u64 now)
{
	__u32 zero = 0, found;
	const struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	struct scratch *sc = bpf_map_lookup_elem(&wps_in_scratch, &zero);
	struct sweep_ctx c = { .now = wps_seen(now) };
	__u64 freed = 0, seen_end;

	if (!cfg || !sc || now < sweep_after)
		return 0;
	c.idle = idle_units(cfg);
	sweep_after = now + WPS_IN_SWEEP_INTERVAL_NS;
	cnt(WPS_IN_CNT_EV_TABLE_WALK);
	sc->swept = 0;
	bpf_for_each_map_elem(&wps_in_flows, sweep_cb, &c, 0);
	found = (__u32)sc->swept;
	for (__u32 i = 0; i < WPS_IN_SWEEP_MAX && i < found; i++) {
		struct wps_in_flow_key *k = &sc->swept_key[i];
		__u32 slot = sc->swept_slot[i];
		struct wps_in_flow_ref *ref = bpf_map_lookup_elem(&wps_in_flows, k);
		struct wps_in_flow_hot *h = bpf_map_lookup_elem(&wps_in_flow_hot, &slot);
		struct wps_in_flow *f = bpf_map_lookup_elem(&wps_in_flow_state, &slot);
		__u16 fid;

		/* Still idle as seen (no packet since), and ours to delete. */
		if (!ref || ref->slot != slot || !h || !f || h->seen != sc->swept_seen[i])
			continue;
		fid = WPS_GS_FID(h->gs);
		if (bpf_map_delete_elem(&wps_in_flows, k))
			continue;
		slot_release(slot);
		/* Rests from its last packet: from the end of the unit seen names (never earlier).
		 * A joiner's seen is on the jiffies clock (now_join), which may lag the coarse
		 * clock by a further tick (a calibration between the tick's jiffies and clock
		 * updates): two ticks of slack, not one. */
		seen_end = ((now >> WPS_SEEN_SHIFT) - (__u32)(c.now - sc->swept_seen[i]) + 1) << WPS_SEEN_SHIFT;
		fid_release(fid, seen_end + cfg->quarantine_ns + 2 * clock_slack(cfg));
		freed++;
	}
	cnt_add(WPS_IN_CNT_EV_FLOW_RECLAIMED, freed);
	return 0;
}

/* Make the flow (not found before); its slot, or -1 (counted) when it cannot be sprayed. */
static __always_inline int flow_new(const struct pkt *p, const struct wps_in_cfg *cfg, __u32 cls, __u64 now,
				    __u64 kh)
{
	bool test = cfg->flags & WPS_IN_F_TEST_GID0;
	__u32 home = wps_flow_home(kh, max_flows);
	struct wps_in_flow_ref ref = {};
	struct wps_in_flow_det *det;
	struct wps_in_flow_hot *h;
	struct wps_in_flow *n;
	struct scratch *sc;
	__u32 zero = 0, slot;
	__u16 fid, gid;
	int s;
	/*
	 * int: before 6.4 map ops returned int and the upper half of R0 is
	 * not sign-extended (6.1 gives 0xfffffff9 for -E2BIG), so a long
	 * never equals -E2BIG or -EEXIST there.
	 */
	int err;

	fid = (__u16)fid_alloc(now);
	if (!fid) {
		sweep(now);
		cnt(WPS_IN_CNT_PASS_FID_EXHAUSTED);
		return -1;
	}
	s = slot_alloc(home);
	if (s < 0) {
		sweep(now);
		s = slot_alloc(home);
	}
	if (s < 0) {
		fid_release(fid, 0);
		cnt(WPS_IN_CNT_PASS_TABLE_FULL);
		return -1;
	}
	slot = (__u32)s;
	sc = bpf_map_lookup_elem(&wps_in_scratch, &zero);
	h = bpf_map_lookup_elem(&wps_in_flow_hot, &slot);
	if (!sc || !h)
		goto fail;
	/* The state, then the hot line, the hash map entry, and the key that makes the slot findable. */
	n = (struct wps_in_flow *)sc->flow;
	__builtin_memset(n, 0, sizeof(*n));
	gid = test ? (__u16)cfg->test_gid0 : (__u16)bpf_get_prandom_u32();
	n->claim = 1;
	n->fid = fid;
	n->gid = gid;
	n->seq = test ? 0 : bpf_get_prandom_u32();
	if (bpf_map_update_elem(&wps_in_flow_state, &slot, n, BPF_ANY))
		goto fail;
	det = bpf_map_lookup_elem(&wps_in_flow_det, &slot);
	if (det) {
		det->sent = 0;	/* none of the slot's last flow's counts */
		det->done = 0;
	}
	h->gs = wps_gs_pack(0, gid, fid, 0, 0);
	h->bytes = 0;
	h->cls = cls;
	h->seen = wps_seen(now);
	ref.slot = slot;
	err = (int)bpf_map_update_elem(&wps_in_flows, &p->key, &ref, BPF_NOEXIST);
	if (err == -E2BIG) {
		sweep(now);
		err = (int)bpf_map_update_elem(&wps_in_flows, &p->key, &ref, BPF_NOEXIST);
	}
	if (err == -EEXIST) {
		/* Another CPU made it first: use theirs, our Flow ID was never on the wire. */
		struct wps_in_flow_ref *theirs;

		slot_release(slot);
		fid_release(fid, 0);
		theirs = bpf_map_lookup_elem(&wps_in_flows, &p->key);
		return theirs ? (int)theirs->slot : -1;
	}
	if (err)
		goto fail;
	/*
	 * The key last, once the hash map holds the flow: a slot is found at its
	 * home by its key, and a CPU that lost the race above (its slot released
	 * on -EEXIST) must never have made its own findable.
	 */
	__builtin_memcpy(&h->key, &p->key, sizeof(h->key));
	if ((slot | 1) != (home | 1))
		cache_put(kh, slot);
	cnt(WPS_IN_CNT_EV_FLOW_NEW);
	return (int)slot;
fail:
	slot_release(slot);
	fid_release(fid, 0);
	cnt(WPS_IN_CNT_PASS_TABLE_FULL);
	return -1;
}

static __always_inline struct wps_in_rule *rule_at(int rule)
{
	__u32 k = (__u32)rule;

	return rule >= 0 ? bpf_map_lookup_elem(&wps_in_rules, &k) : NULL;
}

/*
 * The rule of a packet of the flow at h (NULL: a flow not made yet), and its
 * index in *rule; NULL when none matches. A known flow keeps the rule it was
 * classified under while rules_gen stays (wps_in_flow.cls), and walks the
 * rules again when it does not.
 */
static __always_inline struct wps_in_rule *flow_rule(const struct pkt *p, struct wps_in_flow_hot *h, __u32 gen,
						     __u32 segs, int *rule)
{
	struct wps_in_rule *r = NULL;
	__u32 cls;

	*rule = -1;
	if (h) {
		cls = *(volatile __u32 *)&h->cls;
		if (WPS_CLS_GEN_OK(cls, gen)) {
			*rule = (int)WPS_CLS_RULE(cls);
			r = rule_at(*rule);
			/*
			 * Walked again all the same when cleared with bpftool, and
			 * for a packet that will not join its group lock-free (a
			 * group's first or last, byte and time quanta): so a rule
			 * edited with bpftool (no rules_gen bump) reaches the flow
			 * by its next group at the latest.
			 */
			if (!r || !r->used || !(r->qkind == WPS_Q_PACKETS && wps_gs_joins(*(volatile __u64 *)&h->gs, segs)))
				*rule = -1;
		}
	}
	if (unlikely(*rule < 0)) {
		*rule = classify(p);
		r = rule_at(*rule);
		/* Until a rule matches again, each packet of the flow walks the rules. */
		cls = *rule >= 0 ? WPS_CLS_PACK(gen, *rule) : 0;
		if (h && *(volatile __u32 *)&h->cls != cls)
			*(volatile __u32 *)&h->cls = cls;
	}
	return r;
}

/*
 * A flow idle since `seen` goes on as a new flow: a fresh Flow ID and Group
 * ID into *new_fid, *new_gid, which decide() takes under the lock (they stay
 * 0 for a flow that is not idle). False when no Flow ID is free (counted):
 * the packet passes unsprayed. now is now_join's, looked at again exactly
 * when it says idle.
 */
static __always_inline bool flow_renewal(const struct wps_in_cfg *cfg, __u32 seen, __u64 now, bool fine,
					 __u16 *new_fid, __u16 *new_gid)
{
	if (likely((__s32)(wps_seen(now) - seen) < 0 || wps_seen(now) - seen < idle_units(cfg)))
		return true;
	now = now_exact(cfg, fine, now);
	if ((__s32)(wps_seen(now) - seen) < 0 || wps_seen(now) - seen < idle_units(cfg))
		return true;
	*new_fid = (__u16)fid_alloc(now);
	if (!*new_fid) {
		/* This flow too may go: its ID rests, then serves it anew. */
		sweep(now);
		cnt(WPS_IN_CNT_PASS_FID_EXHAUSTED);
		return false;
	}
	*new_gid = (cfg->flags & WPS_IN_F_TEST_GID0) ? (__u16)cfg->test_gid0 : (__u16)bpf_get_prandom_u32();
	return true;
}

#endif
