/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CAQM stage (bpf/caqm_stage.bpf.c): its per-port state and counters,
 * shared with user space (ubcaqm, and ubperf --stage-pin through the maps
 * ubcaqm --pin leaves in a directory under these names).
 */
#ifndef UBXDP_CAQM_STAGE_H
#define UBXDP_CAQM_STAGE_H

#include <linux/bpf.h>
#include <linux/types.h>

#define CAQM_PIN_BUDGET	"caqm_budget"
#define CAQM_PIN_STATS	"caqm_stats"

/* One per port (a one-entry array). */
struct caqm_budget {
	struct bpf_spin_lock lock;
	__u64 vq;		/* virtual queue, bytes */
	__u64 last_ns;
	__u64 approved;		/* bytes granted in this window */
	__u64 win_start;
	__u64 vq_high;		/* the virtual queue's high water since the stage started */
};

enum caqm_cnt {
	CAQM_CNT_OTHER = 0,	/* not a native UB frame: passed */
	CAQM_CNT_TRUNCATED,	/* native EtherType, LPH/NTH cut short: passed */
	CAQM_CNT_NOT_CAQM,	/* CCI in another mode, or EN clear: passed */
	CAQM_CNT_REQUESTS,	/* CAQM data frames seen */
	CAQM_CNT_GRANTED,	/* Hint granted in full */
	CAQM_CNT_TRIMMED,	/* Hint granted in part */
	CAQM_CNT_REFUSED,	/* I cleared */
	CAQM_CNT_CONGESTED,	/* C set */
	CAQM_CNT_ECN_SEEN,	/* --ecn: IP frames counted in the queue */
	CAQM_CNT_ECN_MARKED,	/* --ecn: ECT frames left CE above the threshold */
	CAQM_CNT_TAGGED,	/* requests in an Ethernet CAQM tag (the IP segment) */
	CAQM_CNT_MAX,
};

#endif
