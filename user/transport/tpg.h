/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TP channel groups (TPG, UB 2.0 §6): several TP channels shown
 * to the transaction layer as one entity. Each message goes to the channel
 * with the fewest bytes queued (ties: round robin); each channel keeps its
 * own reliability and congestion context.
 *
 * Load balancing is by the UDP source port (the entropy an ECMP hash on
 * ports spreads):
 *   flow    one source port per channel: a channel stays on one path;
 *   packet  the source port changes per packet within a channel: the
 *           channel must then tolerate reordering across paths, so the
 *           group sets its channels to TPSACK at once only after
 *           `sack_after` out-of-order packets, a hole being no loss by
 *           itself (no_fast_rtx), SR finding losses by time instead
 *           (rack: docs/TRANSPORT.md "Loss detection under spraying"),
 *           first on each packet's path: a channel takes sport_chan ports
 *           in turn and tpg_entropy() tells the channel each packet's,
 *           and a CC instance cuts only when all paths were marked
 *           (tp_cc_config.paths).
 */
#ifndef UBXDP_TPG_H
#define UBXDP_TPG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/cc.h"
#include "transport/tp.h"

#define TPG_MAX_CHANS	16

enum tpg_lb { TPG_LB_FLOW = 0, TPG_LB_PACKET };

struct tpg_config {
	enum tpg_lb lb;
	uint16_t sport_base;	/* first source port; 0: 0xC000 */
	uint16_t sport_span;	/* per-packet: ports the group uses; 0: 256 */
	uint16_t sport_chan;	/* per-packet: ports a channel takes in turn (its
				 * paths; a loss shows within as many packets);
				 * 0: 16; at most sport_span */
	uint32_t sack_after;	/* per-packet: out-of-order packets before a
				 * TPSACK; 0: 32 */
	bool no_steer;		/* per-packet: the plain port rotation, not
				 * steered from ports whose packets were resent */
};

struct tpg;

struct tpg *tpg_create(const struct tpg_config *cfg);	/* NULL: errno */
void tpg_destroy(struct tpg *g);
/* Adjust a member's channel (and CC) config to the group's LB mode before
 * tp_chan_create(); paths: how many paths packets may take. */
void tpg_prepare(const struct tpg *g, struct tp_chan_config *chan, struct tp_cc_config *cc,
		 uint32_t paths);
/* Add a created channel; its index, or -ENOSPC / -EEXIST. */
int tpg_add(struct tpg *g, struct tp_chan *ch);
unsigned tpg_count(const struct tpg *g);
struct tp_chan *tpg_chan(const struct tpg *g, unsigned i);
int tpg_index(const struct tpg *g, const struct tp_chan *ch);	/* -1: not a member */

/* The member a message of len bytes goes to (queue depth), or -1 when none. */
int tpg_pick(struct tpg *g, size_t len);
/* Post through the group: the channel index, or -errno (the last member's). */
int tpg_post_send(struct tpg *g, const void *buf, size_t len, uint64_t wr_id);
int tpg_post_write(struct tpg *g, const void *buf, size_t len, uint64_t remote_va,
		   struct tp_rkey rkey, uint64_t wr_id);
/* Feed every completion event of the endpoint (others are ignored). */
void tpg_on_event(struct tpg *g, const struct tp_event *ev);
uint64_t tpg_queued(const struct tpg *g, unsigned i);	/* bytes posted, not completed */

/* UDP source port for a packet tp_ep_tx() produced on a member channel
 * (per packet: steered away from ports whose packets were resent, and
 * named to the channel, tp_chan_tx_entropy()). Call it once per packet, in
 * sending order, a packet lost on the way too. */
uint16_t tpg_entropy(struct tpg *g, const struct tp_tx_info *info);

int tpg_lb_parse(const char *s, enum tpg_lb *lb);	/* "flow" | "packet"; 0 or -EINVAL */
const char *tpg_lb_name(enum tpg_lb lb);

#endif
