/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Congestion control of UB TP channels, one instance per channel,
 * plugged into the core through tp_chan_config.cc / cc_ctx (tp_cc_attach()).
 * An instance holds both halves of a channel: the sender's algorithm and the
 * receiver's feedback (CNPs, TPACK-CC).
 *
 *   LDCP   window: aval_win = cw - inflight, inflight = bytes sent - the
 *          receiver's byte count (CETPH AckSequence); the receiver echoes in
 *          the CETPH how many of the packets an ack covers were CE-marked
 *          ([chosen] LDCP reading: C = marked packets, Hint = packets
 *          covered, I = 0), the sender cuts cw by alpha/2 once per window.
 *   DCQCN  rate: the receiver answers CE (IP ECN, or FECN in the CCI) with
 *          at most one CNP per interval; the sender's alpha, byte counter
 *          and timers cut and recover its rate. No inflight state.
 *   CAQM   window: data packets carry a request in the CCI (EN, C, I, Hint);
 *          switches approve, trim or refuse it (tp_caqm_switch()); the
 *          receiver sums the answers into the CETPH of its acks.
 *
 * Timers are driven by the calls the core makes (on_tick among them): no
 * clock of its own, same inputs same run.
 */
#ifndef UBXDP_CC_H
#define UBXDP_CC_H

#include <stdbool.h>
#include <stdint.h>

#include "transport/tp.h"
#include "ub_wire.h"

enum tp_cc_algo { TP_CC_NONE = 0, TP_CC_LDCP, TP_CC_DCQCN, TP_CC_CAQM };

struct tp_cc_config {
	enum tp_cc_algo algo;
	uint32_t mtu;			/* payload bytes per packet; 0: 1024 */
	/* DCQCN (defaults after Huawei's UB ns-3 model) */
	uint64_t line_rate_bps;		/* start and ceiling; 0: 10 Gb/s */
	uint64_t min_rate_bps;		/* 0: 10 Mb/s */
	uint64_t cnp_interval_ns;	/* 0: 50 us */
	uint64_t alpha_timer_ns;	/* 0: 55 us */
	uint64_t rate_timer_ns;		/* 0: 55 us */
	uint64_t byte_counter;		/* 0: 10 MiB */
	uint64_t rai_bps;		/* 0: 40 Mb/s */
	uint64_t rhai_bps;		/* 0: 100 Mb/s */
	uint32_t f;			/* fast-recovery steps; 0: 5 */
	uint32_t g_shift;		/* g = 2^-g_shift; 0: 8 (1/256) */
	bool ce_minor;			/* IP CE is a minor CNP (default: severe,
					 * draft-li-uboe-00 §5.2.2) */
	uint32_t burst_bytes;		/* pacing credit after idle; 0: 64 MTU */
	uint32_t paths;			/* per-packet LB: paths (entropies mod
					 * paths) of the channel; a CNP only when
					 * all were marked within an interval */
	/* LDCP and CAQM windows (bytes) */
	uint32_t init_cw;		/* 0: 16 MTU */
	uint32_t min_cw;		/* 0: 1 MTU */
	uint32_t max_cw;		/* 0: 1024 MTU */
	uint32_t ldcp_g_shift;		/* LDCP alpha gain 2^-n; 0: 4 */
	/* CAQM */
	uint32_t hint_unit;		/* bytes per Hint (and per C) step; 0: mtu/8 */
	uint32_t caqm_ai_units;		/* asked once per window; 0: 8 */
};

struct tp_cc_stats {
	uint64_t cnp_sent, cnp_rcvd, ce_rcvd, cuts, increases, cetph_rcvd;
	/* cuts by cause: ecn_cuts + rto_cuts == cuts. ECN: a CNP (DCQCN), a
	 * window of acks whose CETPH counted CE-marked packets (LDCP), a CETPH
	 * whose congested C outweighed the approved Hint (CAQM); RTO: a
	 * retransmission timeout the core reported as a loss (LDCP, CAQM). */
	uint64_t ecn_cuts, rto_cuts;
	uint64_t rate_bps;		/* DCQCN current rate */
	uint64_t cw;			/* LDCP/CAQM window (bytes) */
	uint64_t inflight;		/* LDCP: sent - AckSequence */
	double alpha;
};

struct tp_cc;

struct tp_cc *tp_cc_create(const struct tp_cc_config *cfg);	/* NULL: errno */
void tp_cc_destroy(struct tp_cc *cc);
/* Point a channel config at cc (algo NONE: no CC). */
void tp_cc_attach(struct tp_cc *cc, struct tp_chan_config *chan_cfg);
void tp_cc_get_stats(const struct tp_cc *cc, struct tp_cc_stats *st);

const char *tp_cc_algo_name(enum tp_cc_algo a);
int tp_cc_algo_parse(const char *s, enum tp_cc_algo *a);	/* 0 or -EINVAL */

/* ---- CCI (docs/WIRE.md §5) ---------------------------------------------- */

/* Short names for the layout constants of headers/ub_wire.h. */
#define TP_CCI_MODE_SHIFT	UB_CCI_MODE_SHIFT
#define TP_CCI_MODE_CAQM	UB_CCI_MODE_CAQM
#define TP_CCI_MODE_FECN	UB_CCI_MODE_FECN
#define TP_CCI_LOC		UB_CCI_CAQM_LOC
#define TP_CCI_CAQM_EN		UB_CCI_CAQM_EN
#define TP_CCI_CAQM_C		UB_CCI_CAQM_C
#define TP_CCI_CAQM_I		UB_CCI_CAQM_I
#define TP_CCI_FECN_LIGHT	UB_FECN_LIGHT_CE
#define TP_CCI_FECN_MARKABLE	UB_FECN_MARKABLE
#define TP_CCI_FECN_SEVERE	UB_FECN_SEVERE_CE

static inline unsigned tp_cci_mode(uint16_t cci) { return ub_cci_mode(cci); }

/*
 * The CAQM stage of one switch port: a budget of queue bytes. A request
 * (EN, I, Hint) arriving with qlen above `thresh` is refused and marked
 * congested (C); below it, the Hint is trimmed to what the headroom left
 * after recent approvals allows. Returns the rewritten CCI.
 */
struct tp_caqm_port {
	uint32_t thresh;		/* queue bytes above which C is set */
	uint32_t hint_unit;		/* bytes per Hint step */
	uint64_t window_ns;		/* approvals are forgotten after this */
	uint64_t approved;		/* bytes approved in the current window */
	uint64_t win_start;
	uint64_t refused, trimmed, granted, congested;
};
uint16_t tp_caqm_switch(struct tp_caqm_port *p, uint64_t now, uint32_t qlen, bool last_hop,
			uint16_t cci);

/* Jain's fairness index of n values (1 = fair). */
double tp_jain(const double *x, unsigned n);

#endif
