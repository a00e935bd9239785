/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Deterministic simulated link between two transport endpoints, in simulated
 * time: seeded loss, reordering, duplication, delay and a line rate, per
 * direction. For the simulation tests, the fuzz target and the goodput bench.
 * Same seed, same run, packet for packet.
 */
#ifndef UBXDP_TP_SIM_H
#define UBXDP_TP_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "transport/tp.h"

struct tp_sim_dir_cfg {
	double loss_data;	/* probability a data packet is lost */
	double loss_resp;	/* probability a response (ACK/NAK/SACK) is lost */
	double dup;		/* probability a packet is delivered twice */
	double reorder;		/* probability a packet takes extra delay */
	uint64_t delay_ns;	/* one-way propagation delay */
	uint64_t reorder_ns;	/* extra delay, uniform in [0, reorder_ns) */
	uint64_t rate_bps;	/* line rate; 0: infinite */
	/* A stall: what would arrive in [stall_at_ns, +stall_ns) arrives at its
	 * end, in order (a receiver whose loop does not run, e.g. descheduled). */
	uint64_t stall_at_ns, stall_ns;
};

struct tp_sim_pkt {
	int from;		/* 0 or 1 */
	const uint8_t *tp;	/* TPH .. payload */
	size_t len;
	struct tp_tx_info info;
};

/* Return true to drop this packet (deterministic test scenarios). */
typedef bool (*tp_sim_filter_fn)(void *ctx, const struct tp_sim_pkt *p, uint64_t now);

struct tp_sim_cfg {
	uint64_t seed;
	struct tp_sim_dir_cfg dir[2];	/* dir[0]: ep 0 -> ep 1 */
	bool frames;		/* carry each packet as a UBoE frame with ICRC and
				 * parse it with the packet library on arrival */
	tp_sim_filter_fn filter;	/* called for every transmitted packet */
	void *filter_ctx;
	/* Called for every frame put on the link (frames mode), lost or not. */
	void (*trace)(void *ctx, int from, const uint8_t *frame, size_t len, bool lost);
	void *trace_ctx;
};

struct tp_sim_stats {
	uint64_t sent[2], lost[2], duped[2], delivered[2], frame_errors;
};

struct tp_sim;

struct tp_sim *tp_sim_create(const struct tp_sim_cfg *cfg, struct tp_ep *a, struct tp_ep *b);
void tp_sim_destroy(struct tp_sim *s);
uint64_t tp_sim_now(const struct tp_sim *s);

/*
 * Run until `until` (simulated ns), until `done(ctx)` returns true (checked
 * after every step), or until nothing is left to happen. Returns true when
 * done() ended the run.
 */
bool tp_sim_run(struct tp_sim *s, uint64_t until, bool (*done)(void *ctx), void *ctx);
const struct tp_sim_stats *tp_sim_stats(const struct tp_sim *s);
/* A direction's one-way delay from now on (a route change); packets on
 * the way keep theirs. */
void tp_sim_set_delay(struct tp_sim *s, int dir, uint64_t delay_ns);

/* The same seeded generator the link uses, for test drivers. */
uint64_t tp_sim_rand(uint64_t *state);

#endif
