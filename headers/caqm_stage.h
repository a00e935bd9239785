/* SPDX-License-Identifier: BSD-2-Clause */
/* Counters of the CAQM stage (bpf/caqm_stage.bpf.c), shared with user space. */
#ifndef UBXDP_CAQM_STAGE_H
#define UBXDP_CAQM_STAGE_H

enum caqm_cnt {
	CAQM_CNT_OTHER = 0,	/* not a native UB frame: passed */
	CAQM_CNT_TRUNCATED,	/* native EtherType, LPH/NTH cut short: passed */
	CAQM_CNT_NOT_CAQM,	/* CCI in another mode, or EN clear: passed */
	CAQM_CNT_REQUESTS,	/* CAQM data frames seen */
	CAQM_CNT_GRANTED,	/* Hint granted in full */
	CAQM_CNT_TRIMMED,	/* Hint granted in part */
	CAQM_CNT_REFUSED,	/* I cleared */
	CAQM_CNT_CONGESTED,	/* C set */
	CAQM_CNT_MAX,
};

#endif
