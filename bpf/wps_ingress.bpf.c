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
 */
#include <linux/bpf.h>
#include <linux/errno.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <stdbool.h>

#include "wps_opt.h"
#include "wps_ingress.h"
#include "lib/ip6_chain.h"
#include "lib/compat.h"
#include "lib/csum.h"
#include "lib/icmp.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wps_in_cfg);
} wps_in_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WPS_IN_MAX_RULES);
	__type(key, __u32);
	__type(value, struct wps_in_rule);
} wps_in_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WPS_IN_MAX_PATHS);
	__type(key, __u32);
	__type(value, struct wps_in_path);
} wps_in_paths SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WPS_IN_MAX_PATHS);
	__type(key, __u32);
	__type(value, struct wps_in_path_stats);
} wps_in_path_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WPS_IN_MAX_PATHS);
	__type(key, __u32);
	__type(value, struct wps_in_path_load);
} wps_in_path_load SEC(".maps");

/*
 * ECMP mode: the kernel's multipath route picks the member by the flow
 * label, so a path is what the FIB answered: counters per egress ifindex.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, WPS_IN_MAX_ECMP_DEVS);
	__type(key, __u32);
	__type(value, struct wps_in_path_stats);
} wps_in_ecmp_stats SEC(".maps");

/*
 * The flow table. flows: key -> slot (membership, and the way to a flow
 * found nowhere else); at the slot, flow_hot (one cache line: what a packet
 * that joins its group touches) and flow_state (the rest, under the lock). A
 * flow takes its home slot or the other of the pair if free (wps_flow_home),
 * where a packet looks first: with 100,000 flows that is one line of memory
 * where the cache below and then the slot were two. flow_cache: 4-way sets of
 * (hash tag, slot) for the flows placed elsewhere, checked against the key in
 * flow_hot; neither needs the hash map's hash of 40 bytes and bucket walk.
 * All sized by max_flows (a power of 2), which the loader sets with their
 * max_entries: attach --max-flows. The arrays have twice as many slots as the
 * hash map has flows, so that most homes are free and WPS_IN_FID_TRIES slots
 * from the cursor hold a free one even when the table is all but full (at
 * most half the slots taken).
 */
const volatile __u32 max_flows = WPS_IN_MAX_FLOWS;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WPS_IN_MAX_FLOWS);
	__type(key, struct wps_in_flow_key);
	__type(value, struct wps_in_flow_ref);
} wps_in_flows SEC(".maps");

/*
 * Mmapable, not to be mapped, but for its values to start on a page: each
 * 64-byte entry is then one cache line (a plain array's values start where
 * its header ends, 56 bytes into a line on 6.18, so every entry would span
 * two), and each 32-byte set of flow_cache half of one.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * WPS_IN_MAX_FLOWS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct wps_in_flow_hot);
} wps_in_flow_hot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * WPS_IN_MAX_FLOWS);
	__type(key, __u32);
	__type(value, struct wps_in_flow);
} wps_in_flow_state SEC(".maps");

/*
 * max_flows sets of 4 ways: 4 entries a flow. Shared by the CPUs (one load,
 * where a per-CPU array's lookup is two): it is written only when a flow is
 * made or missed, and a stale entry is caught by the key check.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WPS_IN_MAX_FLOWS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct wps_in_fcache);
} wps_in_flow_cache SEC(".maps");

/* Ingress Port IDs of named interfaces, by ifindex & 255 (wps_port_id). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WPS_IN_PORTS);
	__type(key, __u32);
	__type(value, struct wps_in_port);
} wps_in_ports SEC(".maps");

/* Which path slots are down, and why: ubctl and the watch agent write it in place. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct wps_in_live);
} wps_in_live SEC(".maps");

/* Flow ID -> WPS_IN_FID_IN_USE, or the time from which it may be reused. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WPS_IN_FID_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} wps_in_fid_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WPS_IN_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} wps_in_stats SEC(".maps");

/* ---- Path MTU: ICMP back to the sender ------------------------------------ */

#define ICMP_QUOTE	128	/* bytes of the offending packet quoted (>= header + 64 bits) */

/* The 2-byte pad aligns the IP header for the checksum helper; not sent. */
struct icmp4_pkt {
	__u8 pad[2];
	struct ethhdr eth;
	struct icmp4_too_big h;
	__u8 quote[ICMP_QUOTE];
};

struct icmp6_pkt {
	__u8 pad[2];
	struct ethhdr eth;
	struct icmp6_too_big h;
	__u8 quote[ICMP_QUOTE];
};

/* Per-CPU scratch: too big for the stack. */
struct scratch {
	/* A new flow is built here: bytes, since per-CPU maps may not hold a spin lock. */
	__u64 flow[sizeof(struct wps_in_flow) / 8];
	__u64 load[WPS_IN_MAX_PATHS];	/* path loads for least-loaded */
	__u8 live_slot[WPS_IN_MAX_PATHS];	/* the slots in use and up, when some are down */
	/* what live_slot was made from (usable, n, cfg.path_slot), and its count */
	__u64 live_for[3];
	__u32 live_n;
	/* Idle flows the current sweep found (keys, their last packet). Kept
	 * here, not in the callback's stack context, so the verifier does not
	 * walk every count. */
	__u64 swept;
	struct wps_in_flow_key swept_key[WPS_IN_SWEEP_MAX];
	__u32 swept_slot[WPS_IN_SWEEP_MAX];
	__u32 swept_seen[WPS_IN_SWEEP_MAX];
	/* The ICMP error is built here (the stack is spoken for). */
	__u64 icmp[(sizeof(struct icmp6_pkt) + 7) / 8];
	/* The outer header (struct outer), off the stack: with it there, 6.1 finds
	 * the program, sweep() and its callback over the 512 bytes together. */
	__u64 outer[9];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} wps_in_scratch SEC(".maps");

/*
 * A DF=0 IPv4 packet being cut into fragments (frag_send): the whole inner
 * packet, and the header of the fragments after the first. Offsets into data
 * are masked with FRAG_MASK, so a chunk of FRAG_CHUNK at any of them is in it.
 */
#define FRAG_MAX_LEN	9216		/* the largest inner packet cut (jumbo frames) */
#define FRAG_MASK	16383
#define FRAG_CHUNK	256
#define FRAG_MAX	16		/* fragments of one packet at most */
struct fragbuf {
	__u32 seg, ihl, tot, pay, f, n, off0;	/* detour, lengths, fragment size and count, offset */
	__u8 mf, evil, pad[2];			/* the original's MF and reserved flags */
	__u8 hdr[64];			/* the header of the fragment being made */
	__u8 later[64];			/* the original header, non-copied options NOP'd (RFC 791) */
	__u8 data[FRAG_MASK + 1 + 2 * FRAG_CHUNK];	/* the inner packet, IP header on */
};

/*
 * The length of the chunk `rem` (>= 1) bytes before the end: at most
 * FRAG_CHUNK, bounded last, on the register the helper gets, so that 6.1's
 * verifier (which loses a bound checked on a copy) knows it.
 */
/* x & FRAG_MASK, the mask kept (the compiler may fold it into an OR 6.1's verifier cannot bound). */
static __always_inline __u32 fb_off(__u32 x)
{
	asm volatile("" : "+r"(x));
	return x & FRAG_MASK;
}

static __always_inline __u32 chunk_len(__u32 rem)
{
	__u32 l = rem < FRAG_CHUNK ? rem : FRAG_CHUNK;

	asm volatile("" : "+r"(l));	/* or the compiler drops the mask it sees no need for */
	/* 1..2 * FRAG_CHUNK as the verifier sees it (6.1 learns no lower bound from l != 0); rem >= 1 */
	return ((l - 1) & (2 * FRAG_CHUNK - 1)) + 1;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fragbuf);
} wps_in_fragbuf SEC(".maps");

/* Next Flow ID candidate, next slot candidate; tests reset them. */
__u32 fid_cursor = 0;
__u32 slot_cursor = 0;

/*
 * No sweep before this time. While the table stays full (or the Flow IDs
 * spent), a new flow's packet costs O(1): at most WPS_IN_FID_TRIES
 * candidates and one failed insert, never a walk of the table, which runs
 * at most once per WPS_IN_SWEEP_INTERVAL_NS. Tests reset it.
 */
__u64 sweep_after = 0;

/*
 * bench/wps_bench.c only, to see where the time goes: return TC_ACT_OK
 * after stage N (BENCH_*). Read-only data set before load, so for ubctl's 0
 * the verifier removes every check.
 */
const volatile __u32 bench_stop = 0;
enum { BENCH_PARSED = 1, BENCH_FLOW, BENCH_CLASSIFIED, BENCH_CLOCK, BENCH_DECIDED, BENCH_ROOM, BENCH_STORED };
#define BENCH_STOP(stage) do { if (bench_stop == (stage)) return TC_ACT_OK; } while (0)

static __always_inline void cnt_add(__u32 id, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&wps_in_stats, &id);

	if (v)
		*v += n;
}

static __always_inline void cnt(__u32 id)
{
	cnt_add(id, 1);
}

/*
 * Two clocks. What is counted in milliseconds (idle flows, Flow ID
 * quarantine, the in-flight bound) reads the coarse clock, a few ns against
 * bpf_ktime_get_ns's 25-35 here; it lags the fine one by at most a tick,
 * which the in-flight bound adds to its delay. Time quanta and the
 * least-loaded window read the fine clock.
 */
static __always_inline __u64 now_ns(const struct wps_in_cfg *cfg, bool fine)
{
	if (cfg->flags & WPS_IN_F_TEST_CLOCK)
		return cfg->test_now_ns;
	return fine ? bpf_ktime_get_ns() : bpf_ktime_get_coarse_ns();
}

/*
 * How far the coarse clock may lag: one tick, which ubctl reads as the
 * resolution of CLOCK_MONOTONIC_COARSE (the kernel's config, for a
 * __kconfig extern, is not readable everywhere); 10 ms (HZ = 100, the
 * longest tick) when not set.
 */
static __always_inline __u64 clock_slack(const struct wps_in_cfg *cfg)
{
	if (cfg->flags & WPS_IN_F_TEST_CLOCK)
		return 0;
	return cfg->coarse_tick_ns ? cfg->coarse_tick_ns : 10000000ULL;
}

struct pkt {
	struct wps_in_flow_key key __attribute__((aligned(8)));	/* word stores */
	__u32 inner_len;	/* IP header onward */
	__u8 tclass;
	__u8 inner_nh;		/* WPS_IPPROTO_IPIP or WPS_IPPROTO_IPV6 */
	__u8 has_ports;
	__u8 in_port;		/* Ingress Port ID */
	__u8 may_frag;		/* IPv4, DF clear */
};

static const __u8 v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/*
 * bpf_skb_load_bytes, read straight from the linear area when the bytes are
 * there (they are for every header of a linear skb): a helper call less.
 * In 32-bit words (to is 4-aligned, len a multiple of 4): a memcpy from a
 * __u8 * is compiled byte by byte. The packet side may be unaligned: only
 * strict-alignment architectures (not x86) make the verifier refuse that.
 */
static __always_inline long pkt_load(const struct __sk_buff *skb, __u32 off, void *to, const __u32 len)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	__u8 *at;

	if (off > 0xffff)
		return -1;
	at = (__u8 *)data + off;
	if ((void *)(at + len) <= end) {
#pragma unroll
		for (__u32 i = 0; i < len / 4; i++)
			((__u32 *)to)[i] = ((const __u32 *)at)[i];
		return 0;
	}
	return bpf_skb_load_bytes(skb, off, to, len);
}

/* parse(): not to be touched (counted); carries the WPS option; a chain that cannot tell. */
enum { PARSE_SKIP = -1, PARSE_WPS = -2, PARSE_UNWALKED = -3 };

/*
 * Parse the inner packet. Returns 0, PARSE_SKIP (counted) when it is not to
 * be touched, or PARSE_WPS / PARSE_UNWALKED (not counted) for the caller.
 */
static __always_inline int parse(struct __sk_buff *skb, struct pkt *p)
{
	__u32 l4_off = 0, len = skb->len, w;
	__be16 proto;

	__builtin_memset(p, 0, sizeof(*p));
	/* EtherType and the 2 bytes after it in one word; a frame that short, just the EtherType */
	if (pkt_load(skb, 12, &w, 4) && bpf_skb_load_bytes(skb, 12, &w, 2)) {
		cnt(WPS_IN_CNT_PASS_NOT_IP);
		return -1;
	}
	__builtin_memcpy(&proto, &w, 2);
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr ip;
		__u32 ihl, tot;

		if (pkt_load(skb, ETH_HLEN, &ip, sizeof(ip))) {
			cnt(WPS_IN_CNT_PASS_MALFORMED);
			return -1;
		}
		ihl = ip.ihl * 4;
		tot = bpf_ntohs(ip.tot_len);
		if (ip.version != 4 || ihl < 20 || tot < ihl || ETH_HLEN + tot > len) {
			cnt(WPS_IN_CNT_PASS_MALFORMED);
			return -1;
		}
		__builtin_memcpy(p->key.saddr + 8, v4mapped + 8, 4);
		__builtin_memcpy(p->key.daddr + 8, v4mapped + 8, 4);
		__builtin_memcpy(p->key.saddr + 12, &ip.saddr, 4);
		__builtin_memcpy(p->key.daddr + 12, &ip.daddr, 4);
		p->key.proto = ip.protocol;
		p->key.family = 4;
		p->tclass = ip.tos;
		p->inner_nh = WPS_IPPROTO_IPIP;
		p->inner_len = len - ETH_HLEN;
		p->may_frag = !(ip.frag_off & bpf_htons(0x4000));
		if (ip.frag_off & bpf_htons(0x3fff))
			cnt(WPS_IN_CNT_EV_INNER_FRAGMENT);
		/* Only a first (or unfragmented) packet has the ports. */
		if (!(ip.frag_off & bpf_htons(0x1fff)))
			l4_off = ETH_HLEN + ihl;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;
		struct ip6_chain c;

		if (pkt_load(skb, ETH_HLEN, &ip6, sizeof(ip6))) {
			cnt(WPS_IN_CNT_PASS_MALFORMED);
			return -1;
		}
		if (ip6.version != 6 || !ip6.payload_len ||
		    ETH_HLEN + 40 + (__u32)bpf_ntohs(ip6.payload_len) > len) {
			cnt(WPS_IN_CNT_PASS_MALFORMED);
			return -1;
		}
		ip6_walk(skb, ETH_HLEN, ip6.nexthdr, &c);
		if (c.wps)
			return PARSE_WPS;
		if (c.truncated || c.too_long)
			return PARSE_UNWALKED;
		if (c.nhdrs)
			cnt(WPS_IN_CNT_EV_INNER_EXTHDR);
		if (c.fragment)
			cnt(WPS_IN_CNT_EV_INNER_FRAGMENT);
		__builtin_memcpy(p->key.saddr, &ip6.saddr, 16);
		__builtin_memcpy(p->key.daddr, &ip6.daddr, 16);
		p->key.proto = c.proto;
		p->key.family = 6;
		p->tclass = (__u8)((ip6.priority << 4) | (ip6.flow_lbl[0] >> 4));
		p->inner_nh = WPS_IPPROTO_IPV6;
		p->inner_len = len - ETH_HLEN;
		if (!c.nonfirst)
			l4_off = c.l4_off;
	} else {
		cnt(WPS_IN_CNT_PASS_NOT_IP);
		return -1;
	}
	if (l4_off && (p->key.proto == IPPROTO_TCP || p->key.proto == IPPROTO_UDP ||
		       p->key.proto == IPPROTO_SCTP || p->key.proto == IPPROTO_UDPLITE)) {
		__u32 ports;

		if (pkt_load(skb, l4_off, &ports, 4)) {
			cnt(WPS_IN_CNT_PASS_MALFORMED);
			return -1;
		}
		__builtin_memcpy(&p->key.sport, &ports, 4);
		p->has_ports = 1;
	}
	return 0;
}

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
 * The slot of the flow of key (hash h), or -1: its home slot first (most
 * flows are there: one cache line found, the one the packet then uses), then
 * the cache; on a miss the hash map, and the slot then goes into the cache.
 */
static __always_inline int flow_find(const struct wps_in_flow_key *key, __u64 h)
{
	__u32 set = (__u32)h & (max_flows - 1), tag = (__u32)(h >> 32) | 1, slot = wps_flow_home(h, max_flows);
	struct wps_in_flow_hot *hot = bpf_map_lookup_elem(&wps_in_flow_hot, &slot);
	struct wps_in_flow_ref *ref;
	struct wps_in_fcache *c;

	if (hot && key_eq(&hot->key, key))
		return (int)slot;
	slot ^= 1;
	hot = bpf_map_lookup_elem(&wps_in_flow_hot, &slot);
	if (hot && key_eq(&hot->key, key))
		return (int)slot;
	c = bpf_map_lookup_elem(&wps_in_flow_cache, &set);
	if (!c)
		return -1;
#pragma unroll
	for (int w = 0; w < WPS_IN_CACHE_WAYS; w++) {
		if (c->tag[w] != tag)
			continue;
		slot = c->slot1[w] - 1;
		hot = bpf_map_lookup_elem(&wps_in_flow_hot, &slot);
		if (hot && key_eq(&hot->key, key))
			return (int)slot;
	}
	ref = bpf_map_lookup_elem(&wps_in_flows, key);
	if (!ref)
		return -1;
	cnt(WPS_IN_CNT_EV_CACHE_MISS);
	slot = ref->slot;
	cache_fill(c, h, slot);
	return (int)slot;
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
		/* Rests from its last packet: from the end of the unit seen names (never earlier). */
		seen_end = ((now >> WPS_SEEN_SHIFT) - (__u32)(c.now - sc->swept_seen[i]) + 1) << WPS_SEEN_SHIFT;
		fid_release(fid, seen_end + cfg->quarantine_ns + clock_slack(cfg));
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
 * The group decision under the flow's lock: S, E, the in-flight bound,
 * byte and time quanta, reclaim. gs is frozen first, so no packet joins the
 * group lock-free while it is decided (wps_gs_joins); the packets that
 * joined since the last decision are what REM went down by.
 */
static __always_inline void decide(struct wps_in_flow_hot *h, struct wps_in_flow *f, const struct wps_in_cfg *cfg,
				   const struct wps_in_rule *r, __u32 segs, __u32 len, __u64 now,
				   __u16 new_fid, __u16 new_gid, __u32 npaths, const __u8 *slots,
				   __u32 usable, const __u64 *load, struct decision *d)
{
	__u64 pkts, bytes, w, max_delay = cfg->max_delay_ns, joined;
	__u8 max = cfg->max_inflight, path, open;
	__u16 gid, fid, rem;

	if (max < 2 || max > WPS_IN_INFLIGHT_RING)
		max = WPS_IN_INFLIGHT_RING;
	if (max_delay)
		max_delay += clock_slack(cfg);
	bpf_spin_lock(&f->lock);
	w = __sync_fetch_and_or(&h->gs, WPS_GS_FROZEN);
	gid = WPS_GS_GID(w);
	fid = WPS_GS_FID(w);
	path = WPS_GS_PATH(w);
	open = wps_gs_open(w);
	rem = WPS_GS_REM(w);
	joined = open && f->rem_set > rem ? f->rem_set - rem : 0;
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
		path = (__u8)wps_sched_pick(r->sched, f->seq++, npaths, slots, cfg->weight, load);
		f->gpath[gid % WPS_IN_INFLIGHT_RING] = path;
		f->groups++;
	}
	pkts += segs;
	f->packets += segs;
	bytes = f->group_bytes + len;
	f->group_bytes = bytes;
	if (wps_quantum_reached(r->qkind, r->quantum, pkts, bytes, now - f->group_t0)) {
		if (wps_inflight_allows(f->closed_ts, gid, max, max_delay, now)) {
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
	h->gs = wps_gs_pack(rem, gid, fid, path, open) | (w & WPS_GS_DETOUR);
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
 * Built on the stack, stored from eth on (OUTER_LEN bytes). The pad aligns
 * the IPv6 header so its fields are stored in words: a packed layout made
 * the compiler store every field byte by byte.
 */
struct outer {
	__u8 pad[2];
	struct ethhdr eth;
	struct ipv6hdr ip6;
	struct wps_exthdr ext;
} __attribute__((aligned(8)));

#define OUTER_LEN	(ETH_HLEN + 40 + WPS_EXTHDR_LEN)
_Static_assert(sizeof(struct outer) == 2 + OUTER_LEN, "outer: Ethernet + IPv6 + the options header");
_Static_assert(sizeof(struct outer) == sizeof(((struct scratch *)0)->outer), "scratch.outer holds struct outer");

static __always_inline void build_outer(struct outer *o, const struct wps_in_cfg *cfg, const struct pkt *p,
					const struct decision *d, __u32 label)
{
	__be32 vtcfl = bpf_htonl(6u << 28 | (__u32)p->tclass << 20 | (label & 0xfffff));

	o->eth.h_proto = bpf_htons(ETH_P_IPV6);
	__builtin_memcpy(&o->ip6, &vtcfl, 4);
	o->ip6.payload_len = bpf_htons((__u16)(p->inner_len + WPS_EXTHDR_LEN));
	o->ip6.nexthdr = (cfg->flags & WPS_IN_F_HBH) ? WPS_IPPROTO_HOPOPTS : WPS_IPPROTO_DSTOPTS;
	o->ip6.hop_limit = cfg->hop_limit;
	__builtin_memcpy(&o->ip6.saddr, cfg->src, 16);
	__builtin_memcpy(&o->ip6.daddr, cfg->dst, 16);
	o->ext.nexthdr = p->inner_nh;
	o->ext.hdrlen = WPS_EXTHDR_HDRLEN;
	o->ext.opt.type = WPS_OPT_TYPE;
	o->ext.opt.len = WPS_OPT_DATA_LEN;
	o->ext.opt.flags = d->flags;
	o->ext.opt.reserved = 0;
	o->ext.opt.flow_id = bpf_htons(d->fid);
	o->ext.opt.ingress_node = bpf_htons(cfg->node_id);
	o->ext.opt.egress_node = bpf_htons(cfg->egress_node_id);
	o->ext.opt.group_id = bpf_htons(d->gid);
	o->ext.opt.ingress_port = p->in_port;
	o->ext.opt.egress_port = cfg->egress_port;
}

/*
 * The outer header into the room adjust_room made, written in place: no
 * helper call, no copy through the helper. The 72-byte stack image is read
 * in aligned words (the verifier wants stack reads aligned); the packet side
 * is 2 bytes off, which only strict-alignment architectures refuse, as in
 * pkt_load. Writing the packet directly makes the verifier add its unclone
 * prologue to the program: a cloned skb's head is made private first, which
 * for a clone whose header is its own (TCP's) costs a check.
 */
static __always_inline long store_outer(struct __sk_buff *skb, const struct outer *o)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	const __u64 *w = (const __u64 *)o;

	if (data + OUTER_LEN > end)
		return bpf_skb_store_bytes(skb, 0, &o->eth, OUTER_LEN, 0);
	*(__u16 *)data = ((const __u16 *)o)[1];
	*(__u32 *)(data + 2) = ((const __u32 *)o)[1];
#pragma unroll
	for (int i = 1; i < (int)(sizeof(*o) / 8); i++)
		*(__u64 *)(data + 6 + 8 * (i - 1)) = w[i];
	return 0;
}

/* ---- DF=0 IPv4 too big: fragments ------------------------------------------------ */

/* Sum of n bytes (a multiple of 4, at most FRAG_CHUNK) of the buffer at off. */
static __always_inline __s64 frag_sum(struct fragbuf *fb, __u32 off, __u32 n, __s64 seed)
{
	if (n == 0 || n > FRAG_CHUNK)
		return seed;
	return bpf_csum_diff(NULL, 0, (__be32 *)(fb->data + fb_off(off)), n & 0x1fc, (__u32)seed);
}

/*
 * A TCP or UDP checksum left for the device to finish (CHECKSUM_PARTIAL: the
 * field holds the pseudo-header's sum) is finished here, before the packet is
 * cut: no device sees the datagram whole again. A finished checksum, right or
 * wrong, is left as it is. For an inner packet that is not a fragment.
 */
__noinline int frag_l4_csum(void)
{
	__u32 zero = 0, ihl, tot, coff, l4;
	struct fragbuf *fb = bpf_map_lookup_elem(&wps_in_fragbuf, &zero);
	__be32 ph[3];
	__s64 sum;
	__u16 *field;
	__u8 proto;

	if (!fb)
		return 0;
	ihl = fb->ihl & 0x3c;
	tot = fb->tot;
	proto = fb->data[9];
	coff = proto == IPPROTO_UDP ? 6 : proto == IPPROTO_TCP ? 16 : 0;
	if (!coff || tot > FRAG_MAX_LEN || tot < ihl + coff + 2)
		return 0;
	l4 = tot - ihl;
	__builtin_memcpy(ph, fb->data + 12, 8);
	ph[2] = bpf_htonl((__u32)proto << 16 | l4);
	sum = bpf_csum_diff(NULL, 0, ph, sizeof(ph), 0);
	field = (__u16 *)(fb->data + (fb_off(ihl + coff) & 63));
	if (*field != (__u16)~csum_finish(sum) || (proto == IPPROTO_UDP && !*field))
		return 0;
	*field = 0;
	/* Zeros past the end, up to a multiple of 4: part of the last word summed. */
	for (__u32 i = 0; i < 4; i++)
		fb->data[fb_off(tot + i)] = 0;
	for (__u32 c = 0; c < FRAG_MAX_LEN / FRAG_CHUNK; c++) {
		__u32 at = c * FRAG_CHUNK, n;

		if (at >= l4)
			break;
		n = l4 - at < FRAG_CHUNK ? (l4 - at + 3) & ~3u : FRAG_CHUNK;
		sum = frag_sum(fb, ihl + at, n, sum);
	}
	*field = csum_finish(sum);
	if (proto == IPPROTO_UDP && !*field)
		*field = 0xffff;
	return 1;
}

/* The inner packet (fb->tot bytes from the IP header) into the buffer, in chunks; 0 or -1. */
__noinline int frag_load(struct __sk_buff *skb)
{
	__u32 zero = 0, tot;
	struct fragbuf *fb = bpf_map_lookup_elem(&wps_in_fragbuf, &zero);

	if (!skb || !fb)
		return -1;
	tot = fb->tot;
	for (__u32 c = 0; c < FRAG_MAX_LEN / FRAG_CHUNK; c++) {
		__u32 at = c * FRAG_CHUNK, len;

		if (at >= tot)
			break;
		len = chunk_len(tot - at);
		if (bpf_skb_load_bytes(skb, ETH_HLEN + at, fb->data + fb_off(at), len))
			return -1;
	}
	return 0;
}

/*
 * fb->later: the original header with the options not copied into later
 * fragments NOP'd (RFC 791: copied flag 0), byte by byte (one pass, no nested
 * loop for the verifier to follow).
 */
__noinline int frag_later(void)
{
	__u32 zero = 0, ihl, rem = 0, nop = 0, done = 0;
	struct fragbuf *fb = bpf_map_lookup_elem(&wps_in_fragbuf, &zero);

	if (!fb)
		return -1;
	ihl = fb->ihl & 0x3c;
	__builtin_memcpy(fb->later, fb->data, 60);
	for (__u32 j = 20; j < 60; j++) {
		__u8 b;

		if (j >= ihl || done)
			break;
		b = fb->later[j];
		if (!rem) {
			if (b == 0) {		/* end of options */
				done = 1;
				continue;
			}
			if (b == 1)		/* NOP */
				continue;
			rem = fb->later[(j + 1) & 63];
			if (rem < 2) {		/* malformed: the rest as it is */
				done = 1;
				continue;
			}
			nop = !(b & 0x80);
		}
		if (nop)
			fb->later[j] = 1;
		rem--;
	}
	return 0;
}

/*
 * Fragment k of the packet in the buffer made in the skb (its header, then
 * its data); all but the last sent at once round the detour as clones.
 */
__noinline int frag_one(struct __sk_buff *skb, __u32 k)
{
	__u32 zero = 0, ihl, f, n, o, fl, fo;
	struct fragbuf *fb = bpf_map_lookup_elem(&wps_in_fragbuf, &zero);
	__s64 sum;

	if (!skb || !fb)
		return -1;
	ihl = fb->ihl & 0x3c;
	f = fb->f;
	n = fb->n;
	if (k >= n || f == 0 || f > FRAG_MAX_LEN || ihl < 20)
		return -1;
	o = k * f;
	fl = k == n - 1 ? fb->pay - o : f;
	if (fl == 0 || fl > FRAG_MAX_LEN)
		return -1;
	__builtin_memcpy(fb->hdr, k ? fb->later : fb->data, 60);
	*(__be16 *)(fb->hdr + 2) = bpf_htons((__u16)(ihl + fl));
	fo = (fb->off0 + o / 8) | (k < n - 1 || fb->mf ? 0x2000 : 0) | (fb->evil ? 0x8000 : 0);
	*(__be16 *)(fb->hdr + 6) = bpf_htons((__u16)fo);
	*(__u16 *)(fb->hdr + 10) = 0;
	sum = bpf_csum_diff(NULL, 0, (__be32 *)fb->hdr, ihl, 0);
	*(__u16 *)(fb->hdr + 10) = csum_finish(sum);
	if (bpf_skb_change_tail(skb, ETH_HLEN + ihl + fl, 0) || bpf_skb_store_bytes(skb, ETH_HLEN, fb->hdr, ihl, 0))
		return -1;
	for (__u32 c = 0; c < FRAG_MAX_LEN / FRAG_CHUNK; c++) {
		__u32 at = c * FRAG_CHUNK, len;

		if (at >= fl)
			break;
		len = chunk_len(fl - at);
		if (bpf_skb_store_bytes(skb, ETH_HLEN + ihl + at, fb->data + fb_off(ihl + o + at), len, 0))
			return -1;
	}
	if (k < n - 1 && bpf_clone_redirect(skb, fb->seg, 0))
		return -1;
	return 0;
}

/*
 * A DF=0 IPv4 packet that will not fit once encapsulated (RFC 2473 §7: the
 * inner packet is fragmented before encapsulation; RFC 791 fragmentation,
 * at most `limit` bytes each): each fragment is sent round the segmentation
 * detour as a packet of its own (clones, the last the skb itself), where the
 * detour's program sprays it in its flow (cb: Ingress Port ID, the flow's
 * ports). Returns the original's verdict, or -1 when it cannot be cut.
 * Global: checked once by the verifier, as are its parts.
 */
__noinline int frag_send(struct __sk_buff *skb, __u32 limit, __u32 cb0, __u32 ports)
{
	__u32 zero = 0, ihl, tot, n;
	const struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	struct fragbuf *fb = bpf_map_lookup_elem(&wps_in_fragbuf, &zero);
	__u8 b[8];

	if (!skb || !cfg || !fb || !cfg->seg_ifindex || bpf_skb_load_bytes(skb, ETH_HLEN, b, 8))
		return -1;
	ihl = (b[0] & 0xf) * 4;
	tot = (__u32)b[2] << 8 | b[3];
	if (ihl < 20 || tot <= ihl || tot > FRAG_MAX_LEN || limit <= ihl + 8 || limit > FRAG_MAX_LEN)
		return -1;
	fb->seg = cfg->seg_ifindex;
	fb->ihl = ihl;
	fb->tot = tot;
	fb->pay = tot - ihl;
	fb->f = (limit - ihl) & ~7u;
	n = (fb->pay + fb->f - 1) / fb->f;
	fb->n = n;
	fb->off0 = ((__u32)b[6] << 8 | b[7]) & 0x1fff;
	fb->mf = !!(b[6] & 0x20);
	fb->evil = !!(b[6] & 0x80);
	if (n < 2 || n > FRAG_MAX || frag_load(skb))
		return -1;
	if (!fb->off0 && !fb->mf)
		frag_l4_csum();
	frag_later();
	/* So that RPS puts every fragment on the CPU of the flow's other packets. */
	bpf_get_hash_recalc(skb);
	skb->cb[0] = cb0;
	skb->cb[1] = ports;
	for (__u32 k = 0; k < FRAG_MAX; k++) {
		if (k >= n)
			break;
		if (frag_one(skb, k))
			return -1;
	}
	cnt_add(WPS_IN_CNT_EV_FRAGMENTS, n);
	return bpf_redirect(cfg->seg_ifindex, 0);
}

/*
 * Turn the skb into ICMP Fragmentation Needed / Packet Too Big (MTU = path
 * MTU - 56) quoting its first bytes, and deliver it back into the stack as if
 * it arrived on this device, which routes it to the sender.
 */
static __noinline int mtu_icmp(struct __sk_buff *skb, __u32 mtu, __u8 family)
{
	__u32 zero = 0;
	struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	struct scratch *sc = bpf_map_lookup_elem(&wps_in_scratch, &zero);
	struct ethhdr eth;

	if (!cfg || !sc || bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)))
		return -1;
	__builtin_memset(sc->icmp, 0, sizeof(sc->icmp));
	if (family == 4) {
		struct icmp4_pkt *m = (void *)sc->icmp;
		__s64 s;

		if (bpf_skb_load_bytes(skb, ETH_HLEN, m->quote, ICMP_QUOTE))
			return -1;
		__builtin_memcpy(m->eth.h_dest, eth.h_source, ETH_ALEN);
		__builtin_memcpy(m->eth.h_source, eth.h_dest, ETH_ALEN);
		m->eth.h_proto = bpf_htons(ETH_P_IP);
		__builtin_memcpy(&m->h.ip.daddr, m->quote + 12, 4);	/* the sender */
		if (cfg->icmp_src4)
			m->h.ip.saddr = cfg->icmp_src4;
		else
			__builtin_memcpy(&m->h.ip.saddr, m->quote + 16, 4);
		s = icmp4_too_big_init(&m->h, 0, ICMP_QUOTE, (__u16)mtu);
		s = bpf_csum_diff(NULL, 0, (__be32 *)m->quote, ICMP_QUOTE, (__wsum)s);
		m->h.csum = csum_finish(s);
		if (bpf_skb_change_tail(skb, sizeof(*m) - 2, 0) ||
		    bpf_skb_store_bytes(skb, 0, &m->eth, sizeof(*m) - 2, 0))
			return -1;
	} else {
		struct icmp6_pkt *m = (void *)sc->icmp;
		__s64 s;

		if (bpf_skb_load_bytes(skb, ETH_HLEN, m->quote, ICMP_QUOTE))
			return -1;
		__builtin_memcpy(m->eth.h_dest, eth.h_source, ETH_ALEN);
		__builtin_memcpy(m->eth.h_source, eth.h_dest, ETH_ALEN);
		m->eth.h_proto = bpf_htons(ETH_P_IPV6);
		__builtin_memcpy(&m->h.ip.saddr, cfg->src, 16);
		__builtin_memcpy(&m->h.ip.daddr, m->quote + 8, 16);	/* the sender */
		s = icmp6_too_big_init(&m->h, ICMP_QUOTE, mtu);
		s = bpf_csum_diff(NULL, 0, (__be32 *)m->quote, ICMP_QUOTE, (__wsum)s);
		m->h.csum = csum_finish(s);
		if (bpf_skb_change_tail(skb, sizeof(*m) - 2, 0) ||
		    bpf_skb_store_bytes(skb, 0, &m->eth, sizeof(*m) - 2, 0))
			return -1;
	}
	return 0;
}

/* ---- transmit ---------------------------------------------------------------- */

static __always_inline void stats_account(struct wps_in_path_stats *ps, __u32 segs, __u32 len, bool opened)
{
	ps->packets += segs;
	ps->bytes += len;
	ps->groups += opened;
}

static __always_inline void path_account(__u32 path, __u32 segs, __u32 len, bool opened, __u64 now,
					 const struct wps_in_cfg *cfg)
{
	struct wps_in_path_stats *ps = bpf_map_lookup_elem(&wps_in_path_stats, &path);
	struct wps_in_path_load *pl = (cfg->flags & WPS_IN_F_LEAST_LOADED) ?
					      bpf_map_lookup_elem(&wps_in_path_load, &path) : NULL;

	if (ps)
		stats_account(ps, segs, len, opened);
	/* The load windows only a least-loaded rule reads: kept only while there is one. */
	if (pl && (cfg->flags & WPS_IN_F_LEAST_LOADED)) {
		/* win_start may be ahead: set from the fine clock, now from the coarse one. */
		if (now > pl->win_start && now - pl->win_start >= cfg->load_window_ns) {
			pl->prev = pl->cur;
			pl->cur = 0;
			pl->win_start = now;
		}
		__sync_fetch_and_add(&pl->cur, len);
	}
}

static __always_inline void ecmp_account(__u32 ifindex, __u32 segs, __u32 len, bool opened)
{
	struct wps_in_path_stats *ps = bpf_map_lookup_elem(&wps_in_ecmp_stats, &ifindex);

	if (!ps) {
		struct wps_in_path_stats z = {};

		/* Full (more devices than counted): the packet still goes. */
		bpf_map_update_elem(&wps_in_ecmp_stats, &ifindex, &z, BPF_NOEXIST);
		ps = bpf_map_lookup_elem(&wps_in_ecmp_stats, &ifindex);
	}
	if (ps)
		stats_account(ps, segs, len, opened);
}

/* Sets *oif to the egress device the FIB chose. */
static __always_inline int ecmp_xmit(struct __sk_buff *skb, const struct wps_in_cfg *cfg, __u32 label, __u32 *oif)
{
	struct bpf_fib_lookup fib = {};
	long rc;

	fib.family = AF_INET6;
	fib.ifindex = skb->ifindex;
	fib.flowinfo = bpf_htonl(label);
	fib.l4_protocol = (cfg->flags & WPS_IN_F_HBH) ? WPS_IPPROTO_HOPOPTS : WPS_IPPROTO_DSTOPTS;
	fib.tot_len = (__u16)(skb->len - ETH_HLEN);
	__builtin_memcpy(fib.ipv6_src, cfg->src, 16);
	__builtin_memcpy(fib.ipv6_dst, cfg->dst, 16);
	/*
	 * As if forwarded from DEV: an output lookup pins the route to DEV (its
	 * oif) and skips the multipath choice, which is where the flow label
	 * counts. Needs IPv6 forwarding on DEV; without it, an output lookup.
	 */
	rc = bpf_fib_lookup(skb, &fib, sizeof(fib), 0);
	if (rc == BPF_FIB_LKUP_RET_FWD_DISABLED) {
		fib.ifindex = skb->ifindex;
		rc = bpf_fib_lookup(skb, &fib, sizeof(fib), BPF_FIB_LOOKUP_OUTPUT);
	}
	*oif = fib.ifindex;
	if (rc == BPF_FIB_LKUP_RET_SUCCESS) {
		__u8 macs[12];

		__builtin_memcpy(macs, fib.dmac, 6);
		__builtin_memcpy(macs + 6, fib.smac, 6);
		if (bpf_skb_store_bytes(skb, 0, macs, 12, 0))
			return -1;
		if (fib.ifindex == skb->ifindex)
			return TC_ACT_OK;
		if (fib.ifindex == cfg->dev_ifindex)
			skb->mark |= WPS_IN_MARK_BYPASS;
		return bpf_redirect(fib.ifindex, 0);
	}
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH) {
		struct bpf_redir_neigh nh = { .nh_family = AF_INET6 };

		__builtin_memcpy(nh.ipv6_nh, fib.ipv6_dst, 16);
		if (fib.ifindex == cfg->dev_ifindex)
			skb->mark |= WPS_IN_MARK_BYPASS;
		return bpf_redirect_neigh(fib.ifindex, &nh, sizeof(nh), 0);
	}
	return -1;
}

/*
 * The slots of cfg.path_slot[0..n-1] that usable holds, into the scratch's
 * live_slot; returns how many. Global: checked once by the verifier, which
 * would otherwise follow the group decision once per possible count.
 */
__noinline int live_slots(__u32 usable, __u32 n)
{
	__u32 zero = 0;
	const struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	struct scratch *sc = bpf_map_lookup_elem(&wps_in_scratch, &zero);

	__u64 w0, w1, key = (__u64)usable | (__u64)n << 32;

	if (!cfg || !sc)
		return 0;
	/* Made from the same paths last time on this CPU: as it is (a group decision's fixed cost). */
	__builtin_memcpy(&w0, cfg->path_slot, 8);
	__builtin_memcpy(&w1, cfg->path_slot + 8, 8);
	if (sc->live_for[0] == key && sc->live_for[1] == w0 && sc->live_for[2] == w1 && key)
		return (int)sc->live_n;
	sc->live_n = wps_live_slots(cfg->path_slot, n, usable, sc->live_slot);
	sc->live_for[0] = key;
	sc->live_for[1] = w0;
	sc->live_for[2] = w1;
	return (int)sc->live_n;
}

static __always_inline struct wps_in_rule *rule_at(int rule)
{
	__u32 k = (__u32)rule;

	return rule >= 0 ? bpf_map_lookup_elem(&wps_in_rules, &k) : NULL;
}

/*
 * Did the packet come from the domain's side: in on DEV or on a member path's
 * device? (Then it is WPS traffic the domain routes through this node.)
 * Global: checked once, and only packets that carry the option ask.
 */
__noinline int from_domain(__u32 ifindex)
{
	__u32 zero = 0;
	const struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);

	if (!cfg || !ifindex)
		return 0;
	if (ifindex == cfg->dev_ifindex)
		return 1;
	for (__u32 i = 0; i < WPS_IN_MAX_PATHS; i++) {
		__u32 k = i;
		const struct wps_in_path *p = bpf_map_lookup_elem(&wps_in_paths, &k);

		if (p && p->ifindex == ifindex && (cfg->path_mask >> i & 1))
			return 1;
	}
	return 0;
}

/*
 * A packet that carries the WPS option already (wps), or whose IPv6 chain is
 * too long or cut short to tell: from the site, it never enters the domain
 * (draft: boundary filtering); from the domain's side, it goes on as it is.
 * A packet from the detour (after_detour) came from the site: the program
 * before the detour passed the domain's own.
 */
static __noinline int foreign_wps(struct __sk_buff *skb, bool wps, bool after_detour)
{
	if (!after_detour && from_domain(skb->ingress_ifindex)) {
		cnt(wps ? WPS_IN_CNT_PASS_ALREADY_WPS : WPS_IN_CNT_PASS_MALFORMED);
		return TC_ACT_OK;
	}
	cnt(wps ? WPS_IN_CNT_DROP_SITE_WPS : WPS_IN_CNT_DROP_UNWALKED);
	return TC_ACT_SHOT;
}

/*
 * The Ingress Port ID: of the interface the packet came in on; after the
 * detour, what the program on DEV found and left in cb[0].
 */
static __always_inline __u8 in_port(const struct __sk_buff *skb, const struct wps_in_cfg *cfg, bool after_detour)
{
	__u32 ifindex, k;

	if (after_detour) {
		__u32 c = skb->cb[0];

		return (c & WPS_IN_CB_MAGIC_MASK) == WPS_IN_CB_MAGIC ? (__u8)c : cfg->ingress_port;
	}
	ifindex = skb->ingress_ifindex;
	k = ifindex & (WPS_IN_PORTS - 1);
	return wps_port_id((cfg->flags & WPS_IN_F_PORTS_NAMED) ? bpf_map_lookup_elem(&wps_in_ports, &k) : NULL,
			   ifindex, cfg->ingress_port);
}

/*
 * A packet too big for the paths once encapsulated. DF=0 IPv4: cut into
 * fragments that take the detour as packets of the flow (the flow takes the
 * detour from now on, so its later packets cannot pass them). Else ICMP
 * Fragmentation Needed / Packet Too Big to the sender (--mtu-drop: a
 * counted drop).
 */
static __always_inline int too_big(struct __sk_buff *skb, struct wps_in_flow_hot *h, const struct pkt *p, __u32 mtu,
				   bool after_detour)
{
	__u32 zero = 0;
	const struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	__u32 ports;
	int rc;

	if (!cfg)
		return TC_ACT_SHOT;
	if (p->key.family == 4 && p->may_frag && cfg->seg_ifindex && mtu > WPS_OVERHEAD) {
		if (!after_detour)
			__sync_fetch_and_or(&h->gs, WPS_GS_DETOUR);
		__builtin_memcpy(&ports, &p->key.sport, 4);
		rc = frag_send(skb, mtu - WPS_OVERHEAD,
			       WPS_IN_CB_MAGIC | (p->has_ports ? WPS_IN_CB_PORTS : 0) | p->in_port, ports);
		if (rc >= 0) {
			cnt(WPS_IN_CNT_TX_FRAGMENTED);
			return rc;
		}
		cnt(WPS_IN_CNT_DROP_FRAG_FAILED);
		return TC_ACT_SHOT;
	}
	if (!(cfg->flags & WPS_IN_F_MTU_DROP) && mtu > WPS_OVERHEAD &&
	    mtu_icmp(skb, mtu - WPS_OVERHEAD, p->key.family) == 0) {
		cnt(WPS_IN_CNT_TX_MTU_ICMP);
		/* Into the stack as if it came in on DEV, whose routes lead back
		 * to the sender (also from the detour, so rp_filter agrees). */
		return bpf_redirect(cfg->dev_ifindex ? cfg->dev_ifindex : skb->ifindex, BPF_F_INGRESS);
	}
	cnt(WPS_IN_CNT_DROP_MTU);
	return TC_ACT_SHOT;
}

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
