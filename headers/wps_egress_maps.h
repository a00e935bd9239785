/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * WPS egress XDP program (bpf/wps_egress.bpf.c): configuration, counters,
 * the descriptor it leaves for the reorder thread and its log records.
 * Shared by the program, ubctl, the reorder thread and the tests.
 */
#ifndef WPS_EGRESS_MAPS_H
#define WPS_EGRESS_MAPS_H

#include <linux/types.h>

#define WPS_EG_MAX_DEVS		16	/* domain-facing devices */
#define WPS_EG_MAX_QUEUES	16	/* rx queues per device with a socket */
#define WPS_EG_MAX_SHARDS	8	/* reorder threads, each with a socket on every queue */
#define WPS_EG_MAX_LOCAL	64	/* our outer IPv6 addresses */
#define WPS_EG_MAX_OPTHDR	64	/* longest options header we parse (HdrExtLen <= 7) */
#define WPS_EG_MAX_OPTS		16	/* options per header we walk */
#define WPS_EG_MAX_PEERS	64	/* ingress nodes' outer addresses (--peer) */
#define WPS_EG_MAX_PEER_KEYS	1024	/* entries of wps_eg_peers: addresses x Ingress Node IDs */

struct wps_eg_cfg {
	__u16 node_id;		/* our Egress Node ID */
	__u16 flags;		/* WPS_EG_F_* */
	__u32 log_per_sec;	/* log records per second and CPU (0: none) */
	__u32 xsk_max;		/* longest frame the reorder sockets take, in one buffer (0: any,
				 * multi-buffer sockets); a longer R = 1 frame is decapsulated in XDP */
	__u32 shards;		/* reorder threads (1..WPS_EG_MAX_SHARDS; 0 counts as 1) */
};

/*
 * The reorder thread (shard) of a flow: its peer index, Ingress Node ID and
 * Flow ID hashed onto 0..shards-1, the same in the XDP program and anywhere
 * user space needs it. A flow is always on one shard, so its order is one
 * thread's to keep. The XSKMAP key of a socket: device slot, rx queue, shard.
 */
static inline __u32 wps_eg_shard(__u32 peer, __u32 node, __u32 flow, __u32 shards)
{
	__u32 h = (peer << 16 | node) * 0x9e3779b1u ^ flow * 0x85ebca77u;

	h ^= h >> 15;
	h *= 0xc2b2ae3du;
	h ^= h >> 13;
	return shards > 1 ? (__u32)(((__u64)h * shards) >> 32) : 0;
}

static inline __u32 wps_eg_xsk_key(__u32 slot, __u32 queue, __u32 shard)
{
	return (slot * WPS_EG_MAX_QUEUES + queue % WPS_EG_MAX_QUEUES) * WPS_EG_MAX_SHARDS + shard;
}

/* Every R=1 packet is decapsulated in XDP too (tests, and a fallback mode). */
#define WPS_EG_F_NO_REORDER	0x1
/* No peer check (--any-peer): a WPS packet from any source is served, as peer 0. */
#define WPS_EG_F_ANY_PEER	0x2

/*
 * The peers (--peer ADDR[=ID]): a WPS packet is served only when the map has
 * its outer source with its Ingress Node ID, or with WPS_EG_PEER_ANY_NODE
 * (ADDR alone: any ID). Every peer address also has a WPS_EG_PEER_ADDR entry,
 * so that a refusal can tell an unknown source (bad_peer) from a known one
 * using an ID it may not (bad_peer_node). The value is the peer's index
 * (0..WPS_EG_MAX_PEERS-1), the same for all entries of one address: the
 * reorder thread keeps its state and shares per index.
 */
#define WPS_EG_PEER_ANY_NODE	0x10000u
#define WPS_EG_PEER_ADDR	0x20000u

struct wps_eg_peer_key {
	__u8 addr[16];		/* outer IPv6 source */
	__u32 node;		/* Ingress Node ID, or WPS_EG_PEER_ANY_NODE / WPS_EG_PEER_ADDR */
};

/*
 * rx_wps: WPS packets addressed to us (before validation). pass_other: all
 * else, untouched. r0_*: R = 0, decapsulated in XDP and redirected (fwd) or
 * handed to the kernel (unresolved neighbour, local, no route, too big).
 * r1_xsk: R = 1 to the reorder thread; r1_no_xsk: no socket on that queue,
 * handled as R = 0 (order not restored, never lost); r1_too_big: longer than
 * the reorder sockets take (cfg xsk_max: sockets without multi-buffer, kernels
 * before 6.6), handled as R = 0 too. bad_*: validation
 * failures, dropped (draft: Egress Node Procedures step 1); bad_peer and
 * bad_peer_node: the outer source is not a peer, or a peer whose --peer
 * ADDR=ID entries do not include the packet's Ingress Node ID.
 * drop_inner_wps: a valid WPS packet whose inner IPv6 packet itself carries
 * the WPS option (in a Hop-by-Hop or Destination Options header of its
 * chain): it must not leave the domain, and its ways out (devmap redirect,
 * AF_XDP) pass no TC boundary filter; drop_inner_unwalked: an inner chain
 * longer (IP6X_MAX_HDRS) or more malformed than can be walked, so it might.
 * Both dropped and logged. Decapsulation follows RFC 6040 (normal mode):
 * ecn_ce, CE on the outer header copied into an ECN-capable inner packet;
 * drop_ce_not_ect, CE on the outer header of a Not-ECT inner packet: dropped
 * (and logged), as RFC 6040 says (its sender would not react to a mark).
 */
#define WPS_EG_COUNTERS(X)						\
	X(RX_WPS,		"rx_wps")				\
	X(PASS_OTHER,		"pass_other")				\
	X(R0_FWD,		"r0_fwd")				\
	X(R0_KERNEL,		"r0_kernel")				\
	X(R1_XSK,		"r1_xsk")				\
	X(R1_NO_XSK,		"r1_no_xsk")				\
	X(R1_TOO_BIG,		"r1_too_big")				\
	X(BAD_OPT_LEN,		"bad_opt_len")				\
	X(WRONG_NODE,		"bad_egress_node")			\
	X(BAD_PEER,		"bad_peer")				\
	X(BAD_PEER_NODE,	"bad_peer_node")			\
	X(DUP_OPT,		"bad_two_options")			\
	X(BOTH_HDRS,		"bad_both_headers")			\
	X(BAD_EXTHDR,		"bad_options_header")			\
	X(BAD_INNER,		"bad_inner")				\
	X(BAD_LENGTH,		"bad_length")				\
	X(DROP_INNER_WPS,	"drop_inner_wps")			\
	X(DROP_INNER_UNWALKED,	"drop_inner_unwalked")			\
	X(DROP_CE_NOT_ECT,	"drop_ce_not_ect")			\
	X(ECN_CE,		"ecn_ce")				\
	X(LOG_SUPPRESSED,	"log_suppressed")

#define WPS_EG_CNT_ENUM(id, name) WPS_EG_CNT_##id,
enum wps_eg_counter {
	WPS_EG_COUNTERS(WPS_EG_CNT_ENUM)
	WPS_EG_CNT__MAX
};
#undef WPS_EG_CNT_ENUM

/*
 * What an R = 1 frame looks like when the reorder thread gets it: the first
 * bytes (the outer Ethernet and IPv6 headers, no longer needed) hold this
 * descriptor; at l2_off starts the frame to transmit: an Ethernet header
 * from the FIB lookup on the inner destination, then the inner packet, as it
 * entered the domain. Host byte order.
 */
#define WPS_XSK_MAGIC	0x57505332u	/* "WPS2" */

struct wps_xsk_desc {
	__u32 magic;
	__u8 flags;		/* WPS_FLAG_* of the option */
	__u8 fib_rc;		/* BPF_FIB_LKUP_RET_*: 0 means the MACs are valid */
	__u16 l2_off;		/* where the frame to transmit starts */
	__u32 ifindex;		/* FIB's egress device */
	__u16 ingress_node;
	__u16 flow_id;
	__u16 group_id;
	__u16 peer;		/* the outer source's peer index (0 with --any-peer) */
	__u32 len;		/* 0 from XDP; the thread keeps the frame's length here */
};

/* A validation failure, for the rate-limited log (ringbuf). */
struct wps_eg_log {
	__u32 reason;		/* enum wps_eg_counter */
	__u32 ifindex;
	__u8 saddr[16];		/* outer source */
	__u16 ingress_node, flow_id, egress_node, group_id;	/* 0 when not parsed */
	__u8 opt_len;
	__u8 pad[3];
};

#endif
