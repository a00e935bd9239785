/* SPDX-License-Identifier: BSD-2-Clause */
/* Internals of the congestion-control modules (cc*.c). */
#ifndef UBXDP_CC_INT_H
#define UBXDP_CC_INT_H

#include "transport/cc.h"
#include "lib/ubhdr.h"

#define CC_MAX_PATHS	16

/* The receiver half: what the channel owes its peer. */
struct cc_np {
	uint32_t rx_bytes;		/* CETPH AckSequence: new data bytes received */
	uint32_t pkts, marked;		/* since the last TPACK-CC (LDCP) */
	uint32_t caqm_c, caqm_hint;	/* CAQM answers since the last TPACK-CC */
	bool caqm_i, caqm_loc;
	bool cnp_pending, cnp_ever;
	uint8_t cnp_level;
	bool cnp_loc;
	uint64_t last_cnp;
	uint64_t path_marked[CC_MAX_PATHS];	/* last CE per path, +1 (0: never) */
};

struct cc_dcqcn {
	double rc, rt, alpha;		/* b/s, b/s, 0..1 */
	uint64_t next_send;		/* pacing */
	uint64_t blocked_until;		/* reported to the core while waiting */
	uint64_t t_alpha, t_rate;	/* next timer expiries */
	uint64_t bytes;			/* towards the byte counter */
	uint32_t t_cnt, bc_cnt;		/* increase events since the last cut */
};

struct cc_win {
	double cw;			/* bytes */
	double alpha;			/* LDCP */
	uint32_t sent;			/* LDCP: bytes sent (mod 2^32) */
	uint32_t ack_seq;		/* LDCP: last AckSequence */
	bool have_ack_seq;
	uint64_t win_pkts, win_marked;	/* LDCP: this observation window */
	uint32_t win_end;		/* LDCP: ack_seq that closes it */
	uint64_t since_req;		/* CAQM: bytes sent since the last request */
};

struct tp_cc {
	struct tp_cc_config cfg;
	struct tp_cc_stats st;
	struct cc_np np;
	struct cc_dcqcn dq;
	struct cc_win w;
	uint64_t now;			/* latest time seen */
};

extern const struct tp_cc_ops tp_cc_ldcp_ops, tp_cc_dcqcn_ops, tp_cc_caqm_ops;
void cc_ldcp_init(struct tp_cc *cc);
void cc_dcqcn_init(struct tp_cc *cc);
void cc_caqm_init(struct tp_cc *cc);

static inline double cc_clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

#endif
