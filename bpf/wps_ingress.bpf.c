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
 * segment, so a GSO skb goes whole only when all its segments join the open
 * group, none of them S or E; any other is sent through a segmentation
 * detour (a veth pair whose sending end has GSO off; ubctl creates it), and
 * the flow's later packets follow the same way while the detour holds its
 * packets, so they stay in order (bpf/wps_ingress/mtu.h). The second
 * program, wps_ingress_seg, runs on the detour's receiving end and sees one
 * wire packet per skb.
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
	__u32 zero = 0, segs, len, npaths, gen, seen;
	struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	const struct wps_in_live *lv;
	struct wps_in_flow_hot *h;
	struct wps_in_rule *r;
	struct decision d = {};
	struct scratch *sc;
	__u16 new_fid = 0, new_gid = 0;
	struct pkt p;
	__u64 hash, now;
	int slot, rule, rc;
	bool fine, whole;

	cnt(WPS_IN_CNT_RX);
	if (unlikely(!cfg))
		return TC_ACT_OK;
	rc = parse(skb, &p);
	if (unlikely(rc))
		return rc == PARSE_SKIP ? TC_ACT_OK : foreign_wps(skb, rc == PARSE_WPS, after_detour);
	if (after_detour)
		pkt_fragment_ports(skb, &p);
	BENCH_STOP(BENCH_PARSED);
	/*
	 * The flow first: it keeps the rule it was classified under while the
	 * rules stay as they were (ubctl bumps rules_gen on each add and del),
	 * so a packet of a known flow walks no rules. The cost: a packet no rule
	 * sprays looks the table up in vain before the walk.
	 */
	gen = cfg->rules_gen;
	hash = wps_key_hash(&p.key);
	h = flow_find(&p.key, hash, &slot);
	if (after_detour && h)
		detour_handled(skb, slot);
	BENCH_STOP(BENCH_FLOW);
	segs = skb->gso_segs > 1 ? skb->gso_segs : 1;
	r = flow_rule(&p, h, gen, segs, &rule);
	if (unlikely(!r)) {
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
	fine = r->qkind == WPS_Q_TIME || r->sched == WPS_SCHED_LEAST_LOADED;
	now = now_join(cfg, fine);
	BENCH_STOP(BENCH_CLOCK);
	if (unlikely(!h)) {
		now = now_exact(cfg, fine, now);
		slot = flow_new(&p, cfg, WPS_CLS_PACK(gen, rule), now, hash);
		h = slot >= 0 ? bpf_map_lookup_elem(&wps_in_flow_hot, &slot) : NULL;
		if (!h)
			return TC_ACT_OK;
	}
	p.in_port = in_port(skb, cfg, after_detour);
	lv = bpf_map_lookup_elem(&wps_in_live, &zero);
	rc = sprayed_elsewhere(skb, cfg, lv, h, slot, &p, segs, after_detour);
	if (rc != STAGE_NEXT)
		return rc;
	/* A GSO skb here goes whole if it can (sprayed_elsewhere() let it by): with the detour. */
	whole = segs > 1 && !after_detour && cfg->seg_ifindex;
	/* seen may be ahead of now: another CPU took its clock later. */
	seen = *(volatile __u32 *)&h->seen;
	if (unlikely(!flow_renewal(cfg, seen, now, fine, &new_fid, &new_gid)))
		return TC_ACT_OK;
	sc = bpf_map_lookup_elem(&wps_in_scratch, &zero);
	if (!sc)
		return TC_ACT_OK;
	rc = group(cfg, lv, r, h, slot, sc, seen, segs, len, npaths, now, fine, new_fid, new_gid, whole, &d);
	if (rc == STAGE_NEXT)
		rc = encap_send(skb, cfg, &p, &d, sc, segs, len, now, whole);
	if (rc == STAGE_DETOUR)
		return spray_elsewhere(skb, slot, &p, 0);
	if (segs > 1 && rc != TC_ACT_SHOT)
		cnt(whole ? WPS_IN_CNT_EV_GSO_WHOLE : WPS_IN_CNT_EV_GSO_UNSPLIT);
	return rc;
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
