/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Deterministic network of transport endpoint pairs sharing bottleneck
 * paths, in simulated time (tp_sim.h is the two-endpoint link).
 * Everything pair i's endpoint A sends crosses one of the paths: its NIC,
 * then the path's FIFO queue (ECN CE above a threshold, drop at a limit, an
 * optional CAQM stage rewriting the CCI), a line rate and a delay (with a
 * seeded jitter, if asked, that reorders a port's packets). What B
 * sends comes back over a fixed delay without a queue. The path of a packet
 * is its entropy (the UDP source port it would carry) mod the number of
 * paths, as an ECMP hash on ports would spread it. CTP packets
 * (tp_tx_info.ctp) arrive with meta.ctp and no source entity (meta.src
 * zero): a pair's CTP channels take any source.
 */
#ifndef UBXDP_TP_NET_H
#define UBXDP_TP_NET_H

#include <stdbool.h>
#include <stdint.h>

#include "transport/cc.h"
#include "transport/tp.h"

#define TP_NET_MAX_PATHS	8
#define TP_NET_MAX_PAIRS	32
#define TP_NET_WIRE_OVERHEAD	64	/* Eth + IP + UDP + ICRC per TP packet */

struct tp_net_path_cfg {
	uint64_t rate_bps;	/* bottleneck line rate; 0: infinite */
	uint64_t delay_ns;	/* propagation after the queue */
	uint32_t ecn_thresh;	/* mark ECN CE above this many queued bytes; 0: never */
	uint32_t limit;		/* drop a packet that would queue beyond this; 0: 4 MiB */
	bool caqm;		/* CAQM stage on this port (threshold ecn_thresh,
				 * or limit/4 without ECN) */
	uint64_t jitter_ns;	/* more delay, uniform in [0, jitter_ns) a packet:
				 * one port's packets reorder (a LAG or a switch
				 * below spraying per packet) */
};

typedef uint16_t (*tp_net_entropy_fn)(void *ctx, int pair, const struct tp_tx_info *info);
/* True: lose this packet of pair's A side before it reaches its path, the
 * one its entropy takes (tests). */
typedef bool (*tp_net_drop_fn)(void *ctx, int pair, const struct tp_tx_info *info, uint32_t path,
			       uint64_t now);

struct tp_net_cfg {
	uint32_t npaths;			/* 0: 1 */
	struct tp_net_path_cfg path[TP_NET_MAX_PATHS];
	uint64_t host_rate_bps;			/* every NIC; 0: infinite */
	uint64_t host_delay_ns;			/* NIC to the bottleneck */
	uint64_t return_delay_ns;		/* B to A, one way */
	tp_net_entropy_fn entropy;		/* NULL: the pair's index */
	void *entropy_ctx;
	tp_net_drop_fn drop;			/* NULL: nothing lost but by the queues */
	void *drop_ctx;
	uint64_t seed;				/* of the paths' jitter */
};

struct tp_net_path_stats {
	uint64_t pkts, bytes;	/* dequeued (wire bytes) */
	uint64_t marked, dropped;
	uint64_t qlen, qmax;	/* bytes now, high water */
	struct tp_caqm_port caqm;
};

struct tp_net;

struct tp_net *tp_net_create(const struct tp_net_cfg *cfg);
void tp_net_destroy(struct tp_net *n);
/* Pair A (sender side, through the paths) with B; returns its index or -errno. */
int tp_net_add_pair(struct tp_net *n, struct tp_ep *a, struct tp_ep *b);
uint64_t tp_net_now(const struct tp_net *n);
bool tp_net_run(struct tp_net *n, uint64_t until, bool (*done)(void *ctx), void *ctx);
const struct tp_net_path_stats *tp_net_path(const struct tp_net *n, uint32_t path);
/* A path's jitter from now on (its ports stop or start reordering). */
void tp_net_set_jitter(struct tp_net *n, uint32_t path, uint64_t jitter_ns);
/* Reset the high-water marks and counters of every path (a new window). */
void tp_net_reset_window(struct tp_net *n);

#endif
