/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * WPS egress reorder engine (draft-wps-ipv6-option, Egress Node Procedures).
 *
 * Pure: no I/O, no clock. The caller hands in each packet's WPS fields, an
 * opaque 64-bit handle (a UMEM address in the AF_XDP loop) and the current
 * time; the engine answers with the handles to transmit now, in order, each
 * with the reason it leaves. Buffered packets are only handles: the bytes
 * never move.
 *
 * State per (peer, Ingress Node ID, Flow ID), the peer being the outer
 * source the XDP program checked (an index 0..max_peers-1): next expected
 * group (NEG), the buffered groups ahead of it in Group ID order, a release
 * timer. Each peer has its own share of everything one peer could take from
 * another: total_buffer / max_peers buffered packets, max_flows / max_peers
 * flow states, its own policer of new flow states, its own skew estimate and
 * release timeout. So a peer's traffic, forged or not, never releases,
 * refuses or delays another peer's flows. Bounds: packets per flow, packets
 * per peer, flow states per peer; every bound releases in order and never
 * discards. New flow states are policed per peer and in aggregate; a packet
 * that gets no state is forwarded at once (counted), never dropped.
 *
 * Timers ("buffer, start/restart timer"): a flow's timer starts when a group
 * is buffered behind NEG and restarts at every packet of NEG's group cut
 * through while groups wait, so nothing is released past a group that is
 * still arriving; it runs out after one release timeout without progress.
 * An expiry advances NEG to the smallest buffered group and releases in
 * Group ID order; a gap further on is given up on in the same release when
 * the group after it has itself waited a release timeout since it was
 * buffered (its wait ran alongside the first), and the release stops at a
 * gap whose next group has not (the timer then runs from when that group
 * came) or at a group whose E has not come (NEG stays on it; its remaining
 * packets cut through). The same holds when NEG's group completes with a gap
 * behind it. So every buffered group waits at most one timeout for its
 * predecessors once nothing ahead of it is arriving: one wait in total, not
 * one per gap. (A timer never runs from before the peer's latest one, which
 * keeps the peer's timer list in deadline order: a wait may be that little
 * longer.)
 *
 * A new flow cannot know its first group: the ingress starts at an arbitrary
 * Group ID and the first group may come over the slowest path. With
 * start_hold, a new flow buffers what arrives for one release timeout from
 * its first packet, not extended by anything that arrives (or less, when the
 * flow's bound or its peer's share is reached); the group it then expects is
 * the smallest Group ID it holds: that group and what follows it in order
 * leave (gaps behind it as at an expiry), and its next packets cut through.
 * Without start_hold,
 * the first packet's group is NEG and earlier groups arriving later are late.
 *
 * The work per packet does not depend on the number of flows: a hash
 * lookup, list moves in O(1) for the LRU and the timer (a timer list per
 * peer, ordered by arming time, the peer's timeout being one value for all
 * its flows), and a walk over the flow's own buffered groups (bounded by the
 * ingress's groups in flight). Timers and the next deadline look at each
 * peer's oldest timer. What does grow with the flows is cache misses (the
 * flow table's bucket and the flow's state, one line each for a packet in
 * order): wps_reorder_rx_batch() overlaps a batch's misses.
 *
 * Memory, allocated at creation: per flow state of max_flows, 192 bytes and
 * 16 of the flow table (a 64-byte bucket per 4 flow states); per packet of
 * total_buffer, a packet slot (16) and a group slot (40). A pool of 2 MiB or
 * more is rounded up to whole 2 MiB and asks for transparent huge pages: a
 * packet reaches the pools at random, and on 4 KiB pages most changes of
 * flow paid a page walk besides their cache misses.
 */
#ifndef WPS_REORDER_H
#define WPS_REORDER_H

#include <stdbool.h>
#include <stdint.h>

/* Why a handle leaves; every action means "decapsulate and transmit". */
enum wps_action {
	WPS_ACT_CUT = 0,	/* group == NEG on arrival: cut-through */
	WPS_ACT_INORDER,	/* buffered, released in order when NEG reached it */
	WPS_ACT_TIMER,		/* released by the release timer (a gap before it was skipped) */
	WPS_ACT_BOUND,		/* released because a buffer bound was reached */
	WPS_ACT_LATE,		/* group behind NEG: after a timer/bound release, or a duplicate */
	WPS_ACT_SUSPECT,	/* Group ID beyond the in-flight bound: forwarded, not buffered */
	WPS_ACT_NOSTATE,	/* no flow state (table full or policed): forwarded as is */
	WPS_ACT_IDLE,		/* flushed when an idle flow was reclaimed, or at shutdown */
	WPS_ACT_RESYNC,		/* released when a run of suspect Group IDs resynchronised NEG */
	WPS_ACT_HOLD,		/* released when a new flow's start hold ended (timer) */
	WPS_ACT__MAX,
};

struct wps_out {
	uint64_t handle;
	uint8_t action;		/* enum wps_action */
};

struct wps_reorder_cfg {
	uint32_t flow_buffer;		/* max packets buffered per flow */
	uint32_t total_buffer;		/* max packets buffered in total: each peer's share is total / max_peers */
	uint32_t max_flows;		/* flow states: each peer's share is max_flows / max_peers */
	uint16_t max_peers;		/* peer indexes 0..max_peers-1 (1: everything is peer 0) */
	uint64_t release_timeout_ns;	/* 0: adaptive */
	uint64_t timeout_min_ns;	/* adaptive clamp */
	uint64_t timeout_max_ns;
	uint64_t timeout_init_ns;	/* adaptive value before any skew was seen */
	uint32_t skew_mult;		/* adaptive timeout = skew_mult x measured skew */
	uint64_t idle_ns;		/* flow state reclaimed after this long without packets */
	uint32_t new_flows_per_sec;	/* per peer; 0: unpoliced */
	uint32_t new_flows_burst;
	uint32_t new_flows_total_per_sec;	/* all peers together; 0: unpoliced */
	uint32_t new_flows_total_burst;
	uint16_t inflight_groups;	/* a jump ahead by more than this is suspect */
	uint16_t suspect_resync;	/* this many suspect packets in a row: resync NEG */
	bool start_hold;		/* a new flow buffers for one timeout before trusting its NEG */
};

void wps_reorder_cfg_defaults(struct wps_reorder_cfg *cfg);

/* Per-flow and total counters (the draft's Manageability list). */
struct wps_flow_stats {
	uint64_t pkts;
	uint64_t groups;		/* E packets seen */
	uint64_t ooo_groups;		/* groups that arrived ahead of NEG (buffered) */
	uint64_t late_pkts;
	uint64_t late_groups;
	uint64_t timer_expiries;	/* timer expiries (not start holds), and gaps skipped at once behind a
					 * group that completed after the group beyond had waited a timeout */
	uint64_t bound_releases;	/* forced releases by the flow or total bound */
	uint64_t suspect;		/* packets with a Group ID jump beyond the in-flight bound */
	uint32_t buffered;		/* occupancy now */
	uint32_t hwm;			/* occupancy high-water mark */
};

struct wps_total_stats {
	struct wps_flow_stats f;	/* summed over all flows, live and reclaimed */
	uint64_t actions[WPS_ACT__MAX];
	uint64_t flows_created;
	uint64_t flows_reclaimed;
	uint64_t flows_policed;		/* new flows refused by their peer's policer */
	uint64_t flows_policed_total;	/* new flows refused by the aggregate policer */
	uint64_t flows_table_full;	/* new flows refused: their peer's share of states is taken */
	uint32_t flows;			/* live flow states */
	uint32_t buffered;
	uint32_t hwm;
	uint64_t timeout_ns;		/* the longest release timeout in force (of any peer) */
	uint64_t skew_ns;		/* the largest skew measured (of any peer) */
};

/* One peer's part (wps_reorder_peer()). */
struct wps_peer_stats {
	uint32_t flows;			/* live flow states, of max_flows / max_peers */
	uint32_t buffered;		/* of total_buffer / max_peers */
	uint32_t hwm;
	uint64_t flows_created;
	uint64_t flows_policed;		/* by this peer's policer */
	uint64_t flows_policed_total;	/* by the aggregate one */
	uint64_t flows_table_full;
	uint64_t bound_releases;	/* by the peer's share (the flow bound counts per flow) */
	uint64_t timeout_ns;		/* this peer's release timeout */
	uint64_t skew_ns;		/* this peer's measured skew */
};

struct wps_pkt {
	uint16_t peer;			/* < max_peers: the outer source's index */
	uint16_t ingress_node;
	uint16_t flow_id;
	uint16_t group_id;
	uint8_t flags;			/* WPS_FLAG_S / WPS_FLAG_E (headers/wps_opt.h) */
};

struct wps_reorder;

/* NULL on bad cfg (errno EINVAL) or out of memory. */
struct wps_reorder *wps_reorder_new(const struct wps_reorder_cfg *cfg);
void wps_reorder_free(struct wps_reorder *e);

/* The most packets wps_reorder_rx_batch() takes in one call. */
#define WPS_REORDER_BATCH	64

/*
 * Packets in, n <= WPS_REORDER_BATCH (the rest are not taken), all at time
 * `now`: what handing them to wps_reorder_rx() one by one would give, the
 * outputs of all of them in one list. Returns the number of outputs,
 * readable with wps_reorder_out() until the next call; at most total_buffer
 * + n. With many flows their buckets and flow states are cache misses,
 * which a batch overlaps (bench/README.md: how much of them that hides).
 */
uint32_t wps_reorder_rx_batch(struct wps_reorder *e, const struct wps_pkt *p, const uint64_t *handle,
			      uint32_t n, uint64_t now);

/* One packet: wps_reorder_rx_batch() of one. */
uint32_t wps_reorder_rx(struct wps_reorder *e, const struct wps_pkt *p, uint64_t handle, uint64_t now);

/* Timers and idle reclaim due by `now`; outputs as for rx. */
uint32_t wps_reorder_tick(struct wps_reorder *e, uint64_t now);

/* When tick must run next (UINT64_MAX: nothing pending). */
uint64_t wps_reorder_next_deadline(const struct wps_reorder *e);

/* Release everything buffered, in order per flow (shutdown). */
uint32_t wps_reorder_flush(struct wps_reorder *e);

const struct wps_out *wps_reorder_out(const struct wps_reorder *e);

void wps_reorder_totals(const struct wps_reorder *e, struct wps_total_stats *t);

/* One peer's part (peer < max_peers). */
void wps_reorder_peer(const struct wps_reorder *e, uint16_t peer, struct wps_peer_stats *s);

/* Walk live flows: cb returns non-zero to stop. */
typedef int (*wps_flow_cb)(uint16_t peer, uint16_t ingress_node, uint16_t flow_id, uint16_t neg,
			   const struct wps_flow_stats *s, void *arg);
void wps_reorder_foreach(const struct wps_reorder *e, wps_flow_cb cb, void *arg);

/* The release timeout in force for a peer's flows. */
uint64_t wps_reorder_timeout(const struct wps_reorder *e, uint16_t peer);

const char *wps_action_name(unsigned a);

#endif
