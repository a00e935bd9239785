// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CAQM stage of a switch port, TC egress on a native UB port
 * (e.g. the UB side of the UB2E switch, where converted frames leave).
 *
 * In/out: Eth(0x88B5) | LPH | NTH(CCI) | ...   only the CCI is rewritten.
 *
 * The port keeps a budget: a virtual queue that fills with every frame
 * leaving and drains at the port's configured rate (the qdisc's own backlog
 * is not visible here), plus the bytes it approved in the current window.
 * A CAQM request (mode 000, EN) is marked congested (C, I and Hint
 * cleared) above the threshold; below it the Hint is granted, trimmed to
 * the headroom left after this window's approvals, or refused. The same
 * rule as tp_caqm_switch() in user space, which the tests compare it with.
 * The CCI lies outside the ICRC's coverage: nothing else changes.
 *
 * On the IP segment the request crosses in the Ethernet CAQM tag (docs/WIRE.md
 * §5, the UB2E switch's --caqm-tag): Eth | [802.1Q] | tag(tag_proto) | IP.
 * The tag's C, I and Hint are the CCI's and get the same answer.
 *
 * With ecn_mark the same port is also an ECN marking stage for what is not
 * native UB (UBoE across the IP segment has no CCI): every IP frame fills
 * the virtual queue, and an ECT one leaves CE above the threshold, as RED
 * with min = max = thresh would. IP ECN is outside the ICRC too.
 * The queue's high water stays in the budget for ubcaqm and ubperf.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lib/ip_edit.h"
#include "lib/parse.h"
#include "caqm_stage.h"
#include "ub_wire.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u16 eth_proto = UB_ETH_P_NATIVE;
const volatile __u16 tag_proto = UB_ETH_P_CAQM;	/* the Ethernet CAQM tag's */
const volatile __u32 rate_bytes_per_us;	/* drain rate; 0: never drains (tests) */
const volatile __u32 thresh = 64 * 1024;	/* bytes */
const volatile __u32 hint_unit = 128;	/* bytes per Hint step */
const volatile __u64 window_ns = 100000;	/* approvals forgotten after this */
const volatile __u8 last_hop;		/* set LoC on what passes */
const volatile __u8 ecn_mark;		/* IP frames: queue them, CE above thresh */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct caqm_budget);
} caqm_budget SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CAQM_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} caqm_stats SEC(".maps");

static __always_inline void count(__u32 what)
{
	__u64 *v = bpf_map_lookup_elem(&caqm_stats, &what);

	if (v)
		*v += 1;
}

/* Under b->lock: drain since the last frame, add this one; the queue after it. */
static __always_inline __u64 vq_fill(struct caqm_budget *b, __u64 now, __u32 len)
{
	if (rate_bytes_per_us && b->last_ns) {
		__u64 el = now - b->last_ns, drain;

		if (el > 1000000000ull)
			el = 1000000000ull;	/* an idle second empties any queue */
		drain = el / 1000 * rate_bytes_per_us;
		b->vq = b->vq > drain ? b->vq - drain : 0;
	}
	b->last_ns = now;
	b->vq += len;
	if (b->vq > b->vq_high)
		b->vq_high = b->vq;
	return b->vq;
}

/* The budget's verdict on the CCI of a frame of len bytes leaving the port. */
static __always_inline __u16 decide(__u16 cci, __u32 len)
{
	struct caqm_budget *b;
	__u32 zero = 0, unit = hint_unit ? hint_unit : 1;
	__u64 now = bpf_ktime_get_ns(), vq, room, grant, want = cci & UB_CCI_CAQM_HINT_MASK;
	bool congested;

	b = bpf_map_lookup_elem(&caqm_budget, &zero);
	if (!b)
		return cci;
	bpf_spin_lock(&b->lock);
	vq = vq_fill(b, now, len);
	if (now - b->win_start >= window_ns) {
		b->win_start = now;
		b->approved = 0;
	}
	congested = vq > thresh;
	grant = 0;
	if (!congested && (cci & UB_CCI_CAQM_I)) {
		room = thresh - vq;
		room = room > b->approved ? room - b->approved : 0;
		grant = room / unit < want ? room / unit : want;
		b->approved += grant * unit;
	}
	bpf_spin_unlock(&b->lock);

	if (last_hop)
		cci |= UB_CCI_CAQM_LOC;
	if (congested) {
		count(CAQM_CNT_CONGESTED);
		if (cci & UB_CCI_CAQM_I)
			count(CAQM_CNT_REFUSED);
		return (cci | UB_CCI_CAQM_C) & ~(UB_CCI_CAQM_I | UB_CCI_CAQM_HINT_MASK);
	}
	if (!(cci & UB_CCI_CAQM_I))
		return cci & ~UB_CCI_CAQM_HINT_MASK;	/* a Hint means nothing without I */
	if (!grant) {
		count(CAQM_CNT_REFUSED);
		return cci & ~(UB_CCI_CAQM_I | UB_CCI_CAQM_HINT_MASK);
	}
	count(grant < want ? CAQM_CNT_TRIMMED : CAQM_CNT_GRANTED);
	return (cci & ~UB_CCI_CAQM_HINT_MASK) | (__u16)grant;
}

/* ecn_mark: an IP frame (after the Ethernet header at c) through the queue. */
static __always_inline void ecn_stage(struct hdr_cursor *c, __u16 proto, __u32 len)
{
	struct caqm_budget *b;
	struct ipv6hdr *ip6h = NULL;
	struct iphdr *iph = NULL;
	__u64 vq, now = bpf_ktime_get_ns();
	__u32 zero = 0;
	__u8 ecn;

	if (proto == bpf_htons(ETH_P_IP) && parse_iphdr(c, &iph) >= 0)
		ecn = ip4_ecn(iph);
	else if (proto == bpf_htons(ETH_P_IPV6) && parse_ip6hdr(c, &ip6h) >= 0)
		ecn = ip6_ecn(ip6h);
	else
		return;
	b = bpf_map_lookup_elem(&caqm_budget, &zero);
	if (!b)
		return;
	bpf_spin_lock(&b->lock);
	vq = vq_fill(b, now, len);
	bpf_spin_unlock(&b->lock);
	count(CAQM_CNT_ECN_SEEN);
	if (vq <= thresh || ecn == ECN_NOT_ECT || ecn == ECN_CE)
		return;
	if (iph)
		ip4_set_ecn(iph, ECN_CE);
	else if (ip6h)
		ip6_set_ecn(ip6h, ECN_CE);
	count(CAQM_CNT_ECN_MARKED);
}

/*
 * A frame of the IP segment: a CAQM request in an Ethernet CAQM tag gets the
 * budget's answer (1), anything else is not ours (0). The 802.1Q tag is in
 * the frame, or already taken out as skb metadata.
 */
static __always_inline int tagged_request(struct hdr_cursor *c, __u16 proto, __u32 len)
{
	struct ub_caqm_tag *t;
	__u16 info, cci, out;
	__u16 vid;

	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		int p = parse_vlan(c, &vid);

		if (p < 0)
			return 0;
		proto = (__u16)p;
	}
	if (proto != bpf_htons(tag_proto) || !(t = cursor_pull(c, sizeof(*t))))
		return 0;
	info = bpf_ntohs(t->info);
	cci = ub_caqm_tag_to_cci(info);
	if (ub_cci_mode(cci) != UB_CCI_MODE_CAQM || !(cci & UB_CCI_CAQM_EN)) {
		count(CAQM_CNT_NOT_CAQM);
		return 1;
	}
	count(CAQM_CNT_REQUESTS);
	count(CAQM_CNT_TAGGED);
	out = decide(cci, len);
	if (out != cci)
		t->info = bpf_htons(ub_cci_to_caqm_tag(out));
	return 1;
}

SEC("tc")
int caqm_stage(struct __sk_buff *skb)
{
	struct hdr_cursor c = {
		.pos = (void *)(long)skb->data, .end = (void *)(long)skb->data_end,
	};
	struct ethhdr *eth;
	struct ub_nth *nth;
	__u16 cci, out;

	if (parse_ethhdr(&c, &eth) < 0 || eth->h_proto != bpf_htons(eth_proto)) {
		if (eth && tagged_request(&c, eth->h_proto, skb->len))
			return TC_ACT_OK;
		count(CAQM_CNT_OTHER);
		if (ecn_mark && eth)
			ecn_stage(&c, eth->h_proto, skb->len);
		return TC_ACT_OK;	/* not a native UB frame: no CCI to answer */
	}
	if (!cursor_pull(&c, sizeof(struct ub_lph)) ||
	    !(nth = cursor_pull(&c, sizeof(struct ub_nth)))) {
		count(CAQM_CNT_TRUNCATED);
		return TC_ACT_OK;	/* the UB2E stage counts and drops those */
	}
	cci = bpf_ntohs(nth->cci);
	if (ub_cci_mode(cci) != UB_CCI_MODE_CAQM || !(cci & UB_CCI_CAQM_EN)) {
		count(CAQM_CNT_NOT_CAQM);
		return TC_ACT_OK;
	}
	count(CAQM_CNT_REQUESTS);
	out = decide(cci, skb->len);
	if (out != cci)
		nth->cci = bpf_htons(out);
	return TC_ACT_OK;
}
