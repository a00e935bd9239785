// SPDX-License-Identifier: BSD-2-Clause
/*
 * WPS ingress (draft-wps-ipv6-option, Ingress Node Procedures), TC egress of
 * the device the route to the far site points at.
 *
 * Order of work: parse and classify (anything not eligible passes untouched),
 * find or create the flow (a full table or an exhausted Flow ID pool passes
 * the packet unsprayed, counted), check the path MTU (ICMP back to the sender
 * or a counted drop), decide S/E, Group ID and path under the flow's lock,
 * then encapsulate (outer IPv6 + options header holding only the WPS option)
 * and send the packet on the group's path.
 *
 * One packet on the wire per flag: a GSO skb would copy S or E into every
 * segment, so a flow that shows a GSO skb is sent through a segmentation
 * detour (a veth pair whose sending end has GSO off; ubctl creates it) and
 * all its later packets follow the same way, so they stay in order. The
 * second program, wps_ingress_seg, runs on the detour's receiving end and
 * sees one wire packet per skb.
 *
 * The parts, one header each under bpf/wps_ingress/: state (maps, scratch,
 * counters, clocks), parse (the inner packet, where it came from), flow
 * (rules, flow table), path (the group decision), encap (outer header,
 * transmit), frag and mtu (a packet too big for the paths).
 */
#include "wps_ingress/state.h"
#include "wps_ingress/parse.h"
#include "wps_ingress/flow.h"
#include "wps_ingress/path.h"
#include "wps_ingress/encap.h"
#include "wps_ingress/mtu.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

static __always_inline int process(struct __sk_buff *skb, bool after_detour)
{
	__u32 zero = 0, segs, len, npaths, label, gen, usable, mtu, cls = 0, seen;
	const struct wps_in_live *lv;
	struct wps_in_flow_hot *h;
	__u64 hash;
	int slot;
	struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	struct wps_in_rule *r = NULL;
	struct wps_in_path *path = NULL;
	struct decision d = {};
	struct outer *o;
	struct scratch *sc;
	__u16 new_fid = 0, new_gid = 0;
	bool joined;
	struct pkt p;
	__u64 now;
	int rule = -1, rc;

	cnt(WPS_IN_CNT_RX);
	if (!cfg)
		return TC_ACT_OK;
	rc = parse(skb, &p);
	if (rc)
		return rc == PARSE_SKIP ? TC_ACT_OK : foreign_wps(skb, rc == PARSE_WPS, after_detour);
	if (after_detour && p.key.family == 4 &&
	    (skb->cb[0] & (WPS_IN_CB_MAGIC_MASK | WPS_IN_CB_PORTS)) == (WPS_IN_CB_MAGIC | WPS_IN_CB_PORTS)) {
		/* A fragment frag_send made: of the flow of the packet it was cut from. */
		__u32 ports = skb->cb[1];

		__builtin_memcpy(&p.key.sport, &ports, 4);
		p.has_ports = 1;
	}
	BENCH_STOP(BENCH_PARSED);
	/*
	 * The flow first: it keeps the rule it was classified under while the
	 * rules stay as they were (ubctl bumps rules_gen on each add and del),
	 * so a packet of a known flow walks no rules. The cost: a packet no rule
	 * sprays looks the table up in vain before the walk.
	 */
	gen = cfg->rules_gen;
	hash = wps_key_hash(&p.key);
	slot = flow_find(&p.key, hash);
	h = slot >= 0 ? bpf_map_lookup_elem(&wps_in_flow_hot, &slot) : NULL;
	BENCH_STOP(BENCH_FLOW);
	segs = skb->gso_segs > 1 ? skb->gso_segs : 1;
	if (h) {
		cls = *(volatile __u32 *)&h->cls;
		if (WPS_CLS_GEN_OK(cls, gen)) {
			rule = (int)WPS_CLS_RULE(cls);
			r = rule_at(rule);
			/*
			 * Walked again all the same when cleared with bpftool, and
			 * for a packet that will not join its group lock-free (a
			 * group's first or last, byte and time quanta): so a rule
			 * edited with bpftool (no rules_gen bump) reaches the flow
			 * by its next group at the latest.
			 */
			if (!r || !r->used || !(r->qkind == WPS_Q_PACKETS && wps_gs_joins(*(volatile __u64 *)&h->gs, segs)))
				rule = -1;
		}
	}
	if (rule < 0) {
		rule = classify(&p);
		r = rule_at(rule);
		/* Until a rule matches again, each packet of the flow walks the rules. */
		cls = rule >= 0 ? WPS_CLS_PACK(gen, rule) : 0;
		if (h && *(volatile __u32 *)&h->cls != cls)
			*(volatile __u32 *)&h->cls = cls;
	}
	if (!r) {
		cnt(WPS_IN_CNT_PASS_NO_RULE);
		return TC_ACT_OK;
	}
	BENCH_STOP(BENCH_CLASSIFIED);
	npaths = cfg->ecmp ? cfg->ecmp : cfg->npaths;
	if (npaths == 0 || npaths > WPS_IN_MAX_PATHS) {
		cnt(WPS_IN_CNT_PASS_NO_PATH);
		return TC_ACT_OK;
	}
	len = p.inner_len;
	now = now_ns(cfg, r->qkind == WPS_Q_TIME || r->sched == WPS_SCHED_LEAST_LOADED);
	BENCH_STOP(BENCH_CLOCK);
	if (!h) {
		slot = flow_new(&p, cfg, WPS_CLS_PACK(gen, rule), now, hash);
		h = slot >= 0 ? bpf_map_lookup_elem(&wps_in_flow_hot, &slot) : NULL;
		if (!h)
			return TC_ACT_OK;
	}
	p.in_port = in_port(skb, cfg, after_detour);
	lv = bpf_map_lookup_elem(&wps_in_live, &zero);
	/* The smallest path MTU, or less if Packet Too Big taught the watch agent so. */
	mtu = cfg->path_mtu;
	if (lv && lv->pmtu && lv->pmtu < mtu)
		mtu = lv->pmtu;
	/* Too big after the 56 bytes: fragmented (DF=0 IPv4), else answered here; never lost silently. */
	if (segs == 1 && mtu && len + WPS_OVERHEAD > mtu)
		return too_big(skb, h, &p, mtu, after_detour);
	if (!after_detour && cfg->seg_ifindex && (segs > 1 || (*(volatile __u64 *)&h->gs & WPS_GS_DETOUR))) {
		if (!(*(volatile __u64 *)&h->gs & WPS_GS_DETOUR))
			__sync_fetch_and_or(&h->gs, WPS_GS_DETOUR);
		skb->cb[0] = WPS_IN_CB_MAGIC | p.in_port;
		cnt(WPS_IN_CNT_REDIRECT_SEGMENT);
		return bpf_redirect(cfg->seg_ifindex, 0);
	}
	if (segs > 1)
		cnt(WPS_IN_CNT_EV_GSO_UNSPLIT);
	/* seen may be ahead of now: another CPU took its clock later. */
	seen = *(volatile __u32 *)&h->seen;
	if ((__s32)(wps_seen(now) - seen) >= 0 && wps_seen(now) - seen >= idle_units(cfg)) {
		new_fid = (__u16)fid_alloc(now);
		if (!new_fid) {
			/* This flow too may go: its ID rests, then serves it anew. */
			sweep(now);
			cnt(WPS_IN_CNT_PASS_FID_EXHAUSTED);
			return TC_ACT_OK;
		}
		new_gid = (cfg->flags & WPS_IN_F_TEST_GID0) ? (__u16)cfg->test_gid0 :
			  (__u16)bpf_get_prandom_u32();
	}
	sc = bpf_map_lookup_elem(&wps_in_scratch, &zero);
	if (!sc)
		return TC_ACT_OK;
	/* The path slots a group may use: in use, and not down for any reason (ECMP: all). */
	usable = ~0u;
	if (!cfg->ecmp) {
		usable = cfg->path_mask;
		if (lv)
			usable &= ~(lv->admin_down | lv->link_down | lv->neigh_down);
		if (!usable) {
			cnt(WPS_IN_CNT_DROP_NO_LIVE_PATH);
			return TC_ACT_SHOT;
		}
	}
	joined = !new_fid && join(h, r, segs, usable, &d);
	if (joined) {
		if (seen != wps_seen(now))
			*(volatile __u32 *)&h->seen = wps_seen(now);	/* racy beside another CPU's: either is recent */
	} else if (r->sched == WPS_SCHED_LEAST_LOADED) {
		/* Unrolled: 6.1's verifier loses the spilled counter of this loop. */
#pragma unroll
		for (__u32 i = 0; i < WPS_IN_MAX_PATHS; i++) {
			__u32 key = i;
			struct wps_in_path_load *pl = bpf_map_lookup_elem(&wps_in_path_load, &key);

			sc->load[i] = pl ? pl->prev + pl->cur : 0;
		}
	}
	if (!joined) {
		struct wps_in_flow *f = bpf_map_lookup_elem(&wps_in_flow_state, &slot);

		if (!f)
			return TC_ACT_OK;
		/* The scheduler picks among the slots up (ECMP: 0..ecmp-1, path_slot's default). */
		npaths = (__u32)live_slots(usable, npaths);
		decide(h, f, cfg, r, segs, len, now, new_fid, new_gid, npaths, sc->live_slot, usable, sc->load, &d);
	}
	/* Atomic: lock-free joiners and lock holders add at once. */
	__sync_fetch_and_add(&h->bytes, len);
	if (d.reclaimed) {
		fid_release(d.old_fid, now + cfg->quarantine_ns + clock_slack(cfg));
		cnt(WPS_IN_CNT_EV_FLOW_RECLAIMED);
		cnt(WPS_IN_CNT_EV_FLOW_NEW);
	} else if (new_fid) {
		fid_release(new_fid, 0);	/* another CPU renewed the flow first */
	}
	if (d.opened)
		cnt(WPS_IN_CNT_EV_GROUP_OPENED);
	if (d.extended)
		cnt(WPS_IN_CNT_EV_GROUP_EXTENDED);
	if (d.closed_down)
		cnt(WPS_IN_CNT_EV_GROUP_CLOSED_DOWN);

	if (!cfg->ecmp) {
		__u32 pi = d.path;

		path = bpf_map_lookup_elem(&wps_in_paths, &pi);
		if (!path || !path->ifindex) {
			cnt(WPS_IN_CNT_PASS_NO_PATH);
			return TC_ACT_OK;
		}
	}
	label = wps_flow_label(d.fid, d.gid);
	o = (struct outer *)sc->outer;
	build_outer(o, cfg, &p, &d, label);
	BENCH_STOP(BENCH_DECIDED);
	if (bpf_skb_adjust_room(skb, WPS_OVERHEAD, BPF_ADJ_ROOM_MAC, BPF_F_ADJ_ROOM_ENCAP_L3_IPV6)) {
		cnt(WPS_IN_CNT_DROP_ENCAP_FAILED);
		return TC_ACT_SHOT;
	}
	BENCH_STOP(BENCH_ROOM);
	if (cfg->ecmp) {
		__u32 oif = 0;
		int rc;

		if (bpf_skb_store_bytes(skb, ETH_HLEN - 2, &o->eth.h_proto, OUTER_LEN - ETH_HLEN + 2, 0)) {
			cnt(WPS_IN_CNT_DROP_ENCAP_FAILED);
			return TC_ACT_SHOT;
		}
		rc = ecmp_xmit(skb, cfg, label, &oif);
		if (rc < 0) {
			cnt(WPS_IN_CNT_EV_FIB_FAILED);
			cnt(WPS_IN_CNT_DROP_ENCAP_FAILED);
			return TC_ACT_SHOT;
		}
		ecmp_account(oif, segs, len, d.opened);
		cnt(WPS_IN_CNT_TX_SPRAYED);
		return rc;
	} else {
		__u32 pi = d.path;

		if (!path)
			return TC_ACT_SHOT;	/* looked up above; the verifier wants it again */
		__builtin_memcpy(o->eth.h_dest, path->dmac, ETH_ALEN);
		__builtin_memcpy(o->eth.h_source, path->smac, ETH_ALEN);
		if (store_outer(skb, o)) {
			cnt(WPS_IN_CNT_DROP_ENCAP_FAILED);
			return TC_ACT_SHOT;
		}
		BENCH_STOP(BENCH_STORED);
		path_account(pi, segs, len, d.opened, now, cfg);
		cnt(WPS_IN_CNT_TX_SPRAYED);
		if (path->ifindex == skb->ifindex)
			return TC_ACT_OK;
		/* Through DEV's egress again: the program there lets it by at once. */
		if (path->ifindex == cfg->dev_ifindex)
			skb->mark |= WPS_IN_MARK_BYPASS;
		return bpf_redirect(path->ifindex, 0);
	}
}

/*
 * What goes on out of DEV (passed, or sprayed out of DEV itself) gets no
 * verdict: the next program on DEV's egress has its turn (tcx stops at the
 * first verdict, before any clsact filter), else the kernel sends it.
 */
SEC("tc")
int wps_ingress(struct __sk_buff *skb)
{
	int rc;

	if (skb->mark & WPS_IN_MARK_BYPASS) {
		/* Back from the detour (sprayed, or unsprayed): leave as it is. */
		skb->mark &= ~WPS_IN_MARK_BYPASS;
		cnt(WPS_IN_CNT_RX);
		cnt(WPS_IN_CNT_PASS_BYPASS);
		return TC_ACT_UNSPEC;
	}
	rc = process(skb, false);
	return rc == TC_ACT_OK ? TC_ACT_UNSPEC : rc;
}

/*
 * On the receiving end of the segmentation detour: one wire packet per skb.
 * What is not sprayed here would die on the detour's veth; it goes back out
 * of DEV, marked so the program there lets it pass.
 */
SEC("tc")
int wps_ingress_seg(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct wps_in_cfg *cfg;
	int rc = process(skb, true);

	if (rc != TC_ACT_OK)
		return rc;
	cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	if (!cfg || !cfg->dev_ifindex)
		return TC_ACT_OK;
	skb->mark |= WPS_IN_MARK_BYPASS;
	cnt(WPS_IN_CNT_REDIRECT_BACK);
	return bpf_redirect(cfg->dev_ifindex, 0);
}
