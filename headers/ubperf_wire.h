/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ubperf's in-band control message ([chosen], docs/TRANSPORT.md "ubperf's
 * setup in band"): the application bytes of a tp_hello (UTP, TAH Message,
 * after "UBH2" | TPN | PSN | MTU | mode | flags | DstTPN). Byte offsets into those
 * bytes; every field a big-endian u32 unless said. The bytes of the test's
 * messages (Sends, Writes, the Read region) are user/ubperf/payload.h's.
 */
#ifndef UBPERF_WIRE_H
#define UBPERF_WIRE_H

#define UBPF_OFF_MAGIC		0	/* "UBPF" */
#define UBPF_OFF_KIND		4	/* 1 setup, 2 done */
#define UBPF_OFF_RUN		8	/* the client's random run id */
#define UBPF_OFF_INDEX		12	/* channel index (done: 0) */
#define UBPF_OFF_BODY		16

/* setup, client -> server: the run (12 words). The channel's client address
 * is no field: the hello's IP source (it leaves by the channel's own port). */
#define UBPF_RUN_MODE		16
#define UBPF_RUN_OP		20
#define UBPF_RUN_TA		24
#define UBPF_RUN_SIZE		28
#define UBPF_RUN_CHANNELS	32
#define UBPF_RUN_MTU		36
#define UBPF_RUN_WINDOW		40
#define UBPF_RUN_DEPTH		44
#define UBPF_RUN_RTO_US		48
#define UBPF_RUN_RTO_MIN_US	52
#define UBPF_RUN_CC		56
#define UBPF_RUN_LB		60
#define UBPF_RUN_LEN		64

/* setup reply, server -> client: the answer for this channel */
#define UBPF_ANS_STATUS		16	/* 0 or an errno */
#define UBPF_ANS_TOKEN		20
#define UBPF_ANS_MR_LEN		24	/* the channel's part of the region at VA: depth x size */
#define UBPF_ANS_VA_HI		28
#define UBPF_ANS_VA_LO		32
#define UBPF_ANS_PATH_VER	36	/* u8: 0 (the --peer address), 4 or 6 */
#define UBPF_ANS_RX_RANGE	37	/* u8: log2 of the channel's receive range, how
					 * far past a hole the client's data may go;
					 * 0 (an older server: zero there): 256 */
#define UBPF_ANS_MTU_OWN	38	/* u8, with status EMSGSIZE: 1 when the UB MTU
					 * in the answering hello is the server's
					 * default (its devices', no --mtu): a client
					 * whose own is a default too sets up again at
					 * it; 0 (an older server): the refusal stands */
#define UBPF_ANS_PATH_IP	40	/* 16 bytes, as on the wire */
#define UBPF_ANS_TOKEN_VALUE	56	/* the region's token value (random; tp_mr_reg) */
#define UBPF_ANS_LEN		60

/* done, both ways: counts (u64 as hi, lo words). VERIFIED: the bytes the
 * sender of this DONE checked, each against the keyed payload at its place
 * (user/ubperf/payload.h) -- the server: each Send it received, or its
 * Write region as the run left it (every slot, by position: not each
 * Write, which it cannot see land); the client: what its Reads brought. */
#define UBPF_DONE_FAILED	16
#define UBPF_DONE_MESSAGES	20
#define UBPF_DONE_BYTES		28
#define UBPF_DONE_DURATION	36
#define UBPF_DONE_VERIFIED	44
#define UBPF_DONE_LEN		52

#endif
