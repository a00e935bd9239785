/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The WPS ingress's state (bpf/wps_ingress.bpf.c): its maps, the per-CPU
 * scratch, the globals that tests and the bench reset, its counters and its
 * clocks. Every other part of the ingress (bpf/wps_ingress/) works on these.
 */
#ifndef UBXDP_WPS_INGRESS_STATE_H
#define UBXDP_WPS_INGRESS_STATE_H

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
#include "lib/icmp.h"

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

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * WPS_IN_MAX_FLOWS);
	__type(key, __u32);
	__type(value, struct wps_in_flow_det);
} wps_in_flow_det SEC(".maps");

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

/* The answer to a packet too big for the paths (mtu.h), built in the scratch. */
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
	/* what sched was made from (usable, n, cfg.path_slot, cfg.weight) */
	__u64 live_for[5];
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
	/* The slots in use and up, their weights in lowest terms and the weighted cycle (live_slots). */
	struct wps_in_sched sched;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} wps_in_scratch SEC(".maps");

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
 * The coarse clock's base in the jiffies counter's terms (now_join), set
 * where the coarse clock is read; 0: not yet. A line of its own: the
 * cursors above are written by every new flow, this is read by every packet.
 */
__s64 clock_off __attribute__((aligned(64))) = 0;

/*
 * bench/wps_bench.c only, to see where the time goes: return TC_ACT_OK
 * after stage N (BENCH_*). Read-only data set before load; for ubctl's 0
 * each check is a load and a branch never taken (the verifier keeps it: its
 * early return shares the exit that other paths reach).
 */
const volatile __u32 bench_stop = 0;
enum { BENCH_PARSED = 1, BENCH_FLOW, BENCH_CLASSIFIED, BENCH_CLOCK, BENCH_DECIDED, BENCH_ROOM, BENCH_STORED };
#define BENCH_STOP(stage) do { if (bench_stop == (stage)) return TC_ACT_OK; } while (0)

/* Which way a branch mostly goes: the usual way is laid out straight. */
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

/*
 * What a stage of process() returns to let the packet go on to the next,
 * where the others return a verdict (no verdict is negative but
 * TC_ACT_UNSPEC, which process() never gives).
 */
#define STAGE_NEXT	(-1000)
/* ... or to send it through the segmentation detour instead (a GSO skb that may not go whole). */
#define STAGE_DETOUR	(-1001)

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
 * The coarse clock as jiffies x tick + clock_off, kept within half a tick
 * of what the coarse clock read just now (t): the kernel counts jiffies from
 * the same monotonic clock, so the offset stays put and is rewritten only
 * when a reading strays (the first, or one taken between the tick's jiffies
 * and clock updates).
 */
static __always_inline void clock_calibrate(const struct wps_in_cfg *cfg, __u64 t)
{
	__u64 tick = cfg->coarse_tick_ns;
	__s64 off, d;

	if (!tick || tick > 1000000000ULL)
		return;
	off = (__s64)(t - bpf_jiffies64() * tick);
	d = off - clock_off;
	if (d > (__s64)(tick / 2) || d < -(__s64)(tick / 2))
		clock_off = off;
}

/*
 * Two clocks. What is counted in milliseconds (idle flows, Flow ID
 * quarantine, the in-flight bound) reads the coarse clock; it lags the fine
 * one by at most a tick, which the in-flight bound adds to its delay. Time
 * quanta and the least-loaded window read the fine clock.
 */
static __always_inline __u64 now_ns(const struct wps_in_cfg *cfg, bool fine)
{
	__u64 t;

	if (cfg->flags & WPS_IN_F_TEST_CLOCK)
		return cfg->test_now_ns;
	if (fine)
		return bpf_ktime_get_ns();
	t = bpf_ktime_get_coarse_ns();
	clock_calibrate(cfg, t);
	return t;
}

/*
 * The clock of a packet before it is known to take a decision: for the
 * coarse clock, the jiffies counter in its terms (one load: the verifier
 * inlines bpf_jiffies64), where bpf_ktime_get_coarse_ns is a helper call of
 * 15-50 ns, the largest single cost of a packet that joins its group
 * (bench/README.md). Good for what such a packet does with it (its flow's
 * last-seen time, the idle check, the least-loaded window), it is read again
 * exactly (now_exact) before any decision: a group's S or E, the in-flight
 * bound, Flow IDs and their quarantine, the sweep. Without a tick (a cfg not
 * written by ubctl) or before the first calibration, the coarse clock itself.
 */
static __always_inline __u64 now_join(const struct wps_in_cfg *cfg, bool fine)
{
	__u64 tick = cfg->coarse_tick_ns;
	__s64 off = clock_off;

	if (fine || !off || !tick || tick > 1000000000ULL || (cfg->flags & WPS_IN_F_TEST_CLOCK))
		return now_ns(cfg, fine);
	return bpf_jiffies64() * tick + (__u64)off;
}

/* now_join's reading as a decision needs it: as it is when it was exact (fine), else read again. */
static __always_inline __u64 now_exact(const struct wps_in_cfg *cfg, bool fine, __u64 now)
{
	return fine ? now : now_ns(cfg, false);
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

#endif
