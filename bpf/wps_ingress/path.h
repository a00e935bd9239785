/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The WPS ingress's group decision: S and E, the Group ID and the path a
 * group takes (the scheduler over the paths that are up), under the flow's
 * lock or, for a packet inside an open group, by one compare-and-swap.
 */
#ifndef UBXDP_WPS_INGRESS_PATH_H
#define UBXDP_WPS_INGRESS_PATH_H

#include "wps_ingress/flow.h"

struct decision {
	__u16 fid;
	__u16 gid;
	__u8 flags;
	__u8 path;
	__u8 opened;
	__u8 extended;
	__u16 old_fid;		/* reclaimed in place: released after the lock */
	__u8 reclaimed;
	__u8 closed_down;	/* the open group's path went down: closed, this packet opened the next */
};

/*
 * May group gid of the flow close now: at most --max-inflight groups in
 * flight, each counted --max-delay after its E, plus the coarse clock's lag?
 */
static __always_inline bool inflight_allows(const struct wps_in_cfg *cfg, const struct wps_in_flow *f, __u16 gid,
					    __u64 now)
{
	__u64 max_delay = cfg->max_delay_ns;
	__u8 max = cfg->max_inflight;

	if (max < 2 || max > WPS_IN_INFLIGHT_RING)
		max = WPS_IN_INFLIGHT_RING;
	if (max_delay)
		max_delay += clock_slack(cfg);
	return wps_inflight_allows(f->closed_ts, gid, max, max_delay, now);
}

/*
 * Under the flow's lock, gs (w) as it was when frozen, so that no packet
 * joins the group lock-free while it is decided (wps_gs_joins): the packets
 * that joined since the last decision, what REM went down by.
 */
static __always_inline __u64 gs_joined(const struct wps_in_flow *f, __u64 w)
{
	__u16 rem = WPS_GS_REM(w);

	return wps_gs_open(w) && f->rem_set > rem ? f->rem_set - rem : 0;
}

/*
 * Unfreeze h with new's fields. While it is frozen only the DETOUR bits can
 * change (mtu.h sets them with an atomic or, from another CPU of the flow's),
 * so an xor of the frozen word's other bits into new's changes those alone
 * and keeps whatever DETOUR bits are set by then: a plain store could lose
 * one set since the freeze, and the flow's next packets then skip the check
 * that keeps them behind its packets in the detour.
 */
static __always_inline void gs_unfreeze(struct wps_in_flow_hot *h, __u64 frozen, __u64 new)
{
	const __u64 keep = WPS_GS_DETOUR | WPS_GS_DETOUR_ALL;

	__sync_fetch_and_xor(&h->gs, ((frozen | WPS_GS_FROZEN) ^ new) & ~keep);
}

/*
 * The group decision under the flow's lock: S, E, the in-flight bound,
 * byte and time quanta, reclaim; gs frozen first (gs_joined).
 */
static __always_inline void decide(struct wps_in_flow_hot *h, struct wps_in_flow *f, const struct wps_in_cfg *cfg,
				   const struct wps_in_rule *r, __u32 segs, __u32 len, __u64 now,
				   __u16 new_fid, __u16 new_gid, const struct wps_in_sched *sched, __u32 usable,
				   const __u64 *load, struct decision *d)
{
	__u64 pkts, bytes, w, joined;
	__u8 path, open;
	__u16 gid, fid, rem;

	bpf_spin_lock(&f->lock);
	w = __sync_fetch_and_or(&h->gs, WPS_GS_FROZEN);
	joined = gs_joined(f, w);
	gid = WPS_GS_GID(w);
	fid = WPS_GS_FID(w);
	path = WPS_GS_PATH(w);
	open = wps_gs_open(w);
	f->packets += joined;
	pkts = f->group_pkts + joined;
	if (new_fid && (__s32)(wps_seen(now) - h->seen) >= 0 && wps_seen(now) - h->seen >= idle_units(cfg)) {
		/* Idle long enough: a new flow under a fresh Flow ID. */
		d->old_fid = fid;
		d->reclaimed = 1;
		fid = new_fid;
		gid = new_gid;
		open = 0;
		for (int i = 0; i < WPS_IN_INFLIGHT_RING; i++)
			f->closed_ts[i] = 0;
	}
	if (open && !(usable >> path & 1)) {
		/*
		 * Its path went down or was deleted: the group ends here, without
		 * its E (the egress's release timer covers it), and is never moved
		 * to another path under its Group ID. It counts as in flight.
		 */
		f->closed_ts[gid % WPS_IN_INFLIGHT_RING] = now;
		gid = wps_gid_next(gid);
		open = 0;
		d->closed_down = 1;
	}
	if (!open) {
		d->flags |= WPS_FLAG_S;
		d->opened = 1;
		open = 1;
		pkts = 0;
		f->group_bytes = 0;
		f->group_t0 = now;
		path = (__u8)wps_sched_pick(r->sched, f->seq++, sched, load);
		f->gpath[gid % WPS_IN_INFLIGHT_RING] = path;
		f->groups++;
	}
	pkts += segs;
	f->packets += segs;
	bytes = f->group_bytes + len;
	f->group_bytes = bytes;
	if (wps_quantum_reached(r->qkind, r->quantum, pkts, bytes, now - f->group_t0)) {
		if (inflight_allows(cfg, f, gid, now)) {
			d->flags |= WPS_FLAG_E;
			f->closed_ts[gid % WPS_IN_INFLIGHT_RING] = now;
			open = 0;
		} else if (open == 1) {
			open = 2;	/* counted once per group */
			f->extended++;
			d->extended = 1;
		}
	}
	if (r->reorder)
		d->flags |= WPS_FLAG_R;
	d->fid = fid;
	d->gid = gid;
	d->path = path;
	if (d->flags & WPS_FLAG_E)
		gid = wps_gid_next(gid);
	f->fid = fid;
	f->gid = gid;
	f->path = path;
	f->open = open;
	f->group_pkts = open ? pkts : 0;
	rem = open == 1 ? wps_gs_rem(r->qkind, r->quantum, pkts) : open == 2 ? wps_gs_rem_ext(r->qkind, r->quantum) : 0;
	f->rem_set = rem;
	h->seen = wps_seen(now);
	/* Unfrozen: the open group's packets may join it lock-free again. */
	gs_unfreeze(h, w, wps_gs_pack(rem, gid, fid, path, open));
	bpf_spin_unlock(&f->lock);
}

/*
 * A packet that is neither the first nor the last of the open group
 * (packet quanta) joins it with one compare-and-swap on gs: its Flow ID,
 * Group ID and path are the group's, no flag but R. False: decide() under
 * the lock.
 */
static __always_inline bool join(struct wps_in_flow_hot *h, const struct wps_in_rule *r, __u32 segs,
				 __u32 usable, struct decision *d)
{
	__u64 w = *(volatile __u64 *)&h->gs;

	if (r->qkind != WPS_Q_PACKETS || !wps_gs_joins_on(w, segs, usable))
		return false;
	if (__sync_val_compare_and_swap(&h->gs, w, w - segs) != w)
		return false;
	d->fid = WPS_GS_FID(w);
	d->gid = WPS_GS_GID(w);
	d->path = WPS_GS_PATH(w);
	d->flags = r->reorder ? WPS_FLAG_R : 0;
	return true;
}

/*
 * A GSO skb to go whole that could not join lock-free (too little REM left,
 * or a lock holder was deciding) goes whole all the same when, under the
 * lock, none of its segments would be S or E: its group is open on a usable
 * path and either the quantum is not reached with it or the in-flight bound
 * keeps the group open (extended, as decide() does: E waits for the first
 * packet the lock sees once the bound allows it). Its segments then count as
 * the group's and *d is the group's; else nothing changes (the detour
 * decides its segments). Without it, every third or fourth 44-segment skb of
 * a flow held at the bound took the detour (REM left by WPS_GS_EXT_JOINS, 128,
 * less two or three skbs), each segment through the detour's veth and this
 * program (bench/README.md, "Whole skbs under the lock"). usable_segs: the
 * usable paths' mask << 32 | segs. Global: the lock and its frame apart
 * from the program's, whose call chains 6.1's verifier bounds at 512 bytes.
 */
__noinline int whole_locked(int slot, const struct wps_in_rule *r, __u64 usable_segs, __u64 now, struct decision *d)
{
	__u32 zero = 0, k = (__u32)slot, segs = (__u32)usable_segs, usable = (__u32)(usable_segs >> 32);
	const struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	struct wps_in_flow_hot *h = bpf_map_lookup_elem(&wps_in_flow_hot, &k);
	struct wps_in_flow *f = bpf_map_lookup_elem(&wps_in_flow_state, &k);
	__u64 w, pkts, quantum, joined;
	__u16 gid, rem;
	bool reached;
	__u8 open;

	if (!cfg || !h || !f || !r || !d || r->qkind != WPS_Q_PACKETS)
		return 0;
	quantum = r->quantum;
	bpf_spin_lock(&f->lock);
	w = __sync_fetch_and_or(&h->gs, WPS_GS_FROZEN);
	pkts = f->group_pkts + (joined = gs_joined(f, w));
	reached = wps_quantum_reached(WPS_Q_PACKETS, quantum, pkts + segs, 0, 0);
	open = wps_gs_open(w);
	gid = WPS_GS_GID(w);
	if (!open || !(usable >> WPS_GS_PATH(w) & 1) || (reached && inflight_allows(cfg, f, gid, now))) {
		__sync_fetch_and_and(&h->gs, ~WPS_GS_FROZEN);
		bpf_spin_unlock(&f->lock);
		return 0;
	}
	f->packets += joined + segs;
	pkts += segs;
	if (reached && open == 1) {
		open = 2;	/* counted once per group, as decide() does */
		f->extended++;
		d->extended = 1;
	}
	f->open = open;
	f->group_pkts = pkts;
	rem = open == 2 ? wps_gs_rem_ext(WPS_Q_PACKETS, quantum) : wps_gs_rem(WPS_Q_PACKETS, quantum, pkts);
	f->rem_set = rem;
	h->seen = wps_seen(now);
	gs_unfreeze(h, w, wps_gs_pack(rem, gid, WPS_GS_FID(w), WPS_GS_PATH(w), open));
	bpf_spin_unlock(&f->lock);
	d->fid = WPS_GS_FID(w);
	d->gid = gid;
	d->path = WPS_GS_PATH(w);
	d->flags = r->reorder ? WPS_FLAG_R : 0;
	return 1;
}

/*
 * The paths' loads into the scratch, for a least-loaded pick. Global:
 * checked once, and out of the way of other rules' packets.
 */
__noinline int loads_read(void)
{
	__u32 zero = 0;
	struct scratch *sc = bpf_map_lookup_elem(&wps_in_scratch, &zero);

	if (!sc)
		return 0;
	/* Unrolled: 6.1's verifier loses the spilled counter of this loop. */
#pragma unroll
	for (__u32 i = 0; i < WPS_IN_MAX_PATHS; i++) {
		__u32 key = i;
		struct wps_in_path_load *pl = bpf_map_lookup_elem(&wps_in_path_load, &key);

		sc->load[i] = pl ? pl->prev + pl->cur : 0;
	}
	return 0;
}

/*
 * The scheduler's view (the scratch's sched, wps_sched_make) of the slots of
 * cfg.path_slot[0..n-1] that usable holds: their slots, their weights in
 * lowest terms, the weighted cycle; returns how many. Global: checked once
 * by the verifier, which would otherwise follow the group decision once per
 * possible count, and walk Euclid's loop and the cycle's on every path
 * through it. Made again on a CPU only when the paths up or the weights
 * change: at most 4080 steps of up to 16 paths (16 paths of weights 255,
 * 254, ...), a few for usual weights.
 */
__noinline int live_slots(__u32 usable, __u32 n)
{
	__u32 zero = 0;
	const struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	struct scratch *sc = bpf_map_lookup_elem(&wps_in_scratch, &zero);
	__u64 w[4], key = (__u64)usable | (__u64)n << 32;

	if (!cfg || !sc)
		return 0;
	/* Made from the same paths and weights last time on this CPU: as it is (a group decision's fixed cost). */
	__builtin_memcpy(w, cfg->path_slot, 16);
	__builtin_memcpy(w + 2, cfg->weight, 16);
	if (sc->live_for[0] == key && sc->live_for[1] == w[0] && sc->live_for[2] == w[1] && sc->live_for[3] == w[2] &&
	    sc->live_for[4] == w[3] && key)
		return (int)sc->sched.n;
	wps_sched_make(&sc->sched, cfg->path_slot, n, usable, cfg->weight);
	sc->live_for[0] = key;
	sc->live_for[1] = w[0];
	sc->live_for[2] = w[1];
	sc->live_for[3] = w[2];
	sc->live_for[4] = w[3];
	return (int)sc->sched.n;
}

/*
 * The group decision for this packet of the flow at `slot` (h its hot line),
 * seen last at `seen`: the paths it may use (in use, and not down for any
 * reason; ECMP: all), the packet joining its open group lock-free or
 * decide() under the lock (on the exact clock: now is now_join's), the
 * flow's bytes and the events counted. Its verdict when it goes no further,
 * else STAGE_NEXT with *d filled. A GSO skb to go whole (whole) only joins
 * its open group, lock-free or under the lock (whole_locked): never S or E,
 * which every segment would copy; STAGE_DETOUR, nothing changed, when it
 * cannot.
 */
static __always_inline int group(const struct wps_in_cfg *cfg, const struct wps_in_live *lv,
				 const struct wps_in_rule *r, struct wps_in_flow_hot *h, int slot, struct scratch *sc,
				 __u32 seen, __u32 segs, __u32 len, __u32 npaths, __u64 now, bool fine, __u16 new_fid,
				 __u16 new_gid, bool whole, struct decision *d)
{
	__u32 usable = ~0u;
	bool joined;

	if (!cfg->ecmp) {
		usable = cfg->path_mask;
		if (lv)
			usable &= ~(lv->admin_down | lv->link_down | lv->neigh_down);
		if (!usable) {
			cnt(WPS_IN_CNT_DROP_NO_LIVE_PATH);
			return TC_ACT_SHOT;
		}
	}
	joined = !new_fid && join(h, r, segs, usable, d);
	if (whole && !joined && !new_fid)
		joined = whole_locked(slot, r, (__u64)usable << 32 | segs, now_exact(cfg, fine, now), d);
	if (whole && !joined) {
		if (new_fid)
			fid_release(new_fid, 0);	/* never on the wire */
		return STAGE_DETOUR;
	}
	if (likely(joined)) {
		if (seen != wps_seen(now))
			*(volatile __u32 *)&h->seen = wps_seen(now);	/* racy beside another CPU's: either is recent */
	} else if (r->sched == WPS_SCHED_LEAST_LOADED) {
		loads_read();
	}
	if (!joined) {
		struct wps_in_flow *f = bpf_map_lookup_elem(&wps_in_flow_state, &slot);

		if (!f)
			return TC_ACT_OK;
		now = now_exact(cfg, fine, now);
		/* The scheduler picks among the slots up (ECMP: 0..ecmp-1, path_slot's default). */
		live_slots(usable, npaths);
		decide(h, f, cfg, r, segs, len, now, new_fid, new_gid, &sc->sched, usable, sc->load, d);
	}
	/* Atomic: lock-free joiners and lock holders add at once. */
	__sync_fetch_and_add(&h->bytes, len);
	if (d->reclaimed) {
		fid_release(d->old_fid, now + cfg->quarantine_ns + clock_slack(cfg));
		cnt(WPS_IN_CNT_EV_FLOW_RECLAIMED);
		cnt(WPS_IN_CNT_EV_FLOW_NEW);
	} else if (new_fid) {
		fid_release(new_fid, 0);	/* another CPU renewed the flow first */
	}
	if (d->opened)
		cnt(WPS_IN_CNT_EV_GROUP_OPENED);
	if (d->extended)
		cnt(WPS_IN_CNT_EV_GROUP_EXTENDED);
	if (d->closed_down)
		cnt(WPS_IN_CNT_EV_GROUP_CLOSED_DOWN);
	return STAGE_NEXT;
}

#endif
