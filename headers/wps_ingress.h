/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * WPS ingress gateway (bpf/wps_ingress.bpf.c) and boundary filter
 * (bpf/wps_boundary.bpf.c): map key/value types, counters and the pure
 * helpers both the BPF programs and user code use (classification, flow
 * label, scheduler maths, serial arithmetic). The option's wire layout is in
 * wps_opt.h. No libc: shared by BPF and user code. Layout changes are ABI for
 * pinned maps (bump WPS_IN_CFG_VERSION).
 */
#ifndef WPS_INGRESS_H
#define WPS_INGRESS_H

#include <linux/types.h>
#include <linux/bpf.h>	/* struct bpf_spin_lock */
#include "wps_opt.h"

#define WPS_IN_CFG_VERSION	7

#define WPS_IN_MAX_RULES	16
#define WPS_IN_FEAT_WORDS	2	/* ETHTOOL_DEV_FEATURE_WORDS: 64 netdev features */
#define WPS_IN_MAX_PATHS	16
#define WPS_IN_MAX_ECMP_DEVS	64	/* egress devices counted in ECMP mode */
#define WPS_IN_INFLIGHT_RING	16	/* close times kept per flow; bounds --max-inflight */
#define WPS_IN_MAX_FLOWS	4096
#define WPS_IN_FID_SLOTS	65536	/* Flow ID state array, indexed by Flow ID */
#define WPS_IN_FID_TRIES	32	/* candidates tried per allocation */
#define WPS_IN_SWEEP_MAX	64	/* idle flows forgotten per sweep of a full table */
#define WPS_IN_SWEEP_INTERVAL_NS 1000000ULL	/* a full table is walked at most once per 1 ms */

/* Flow ID state (fid_state map): free since/at time T (ns), or in use. */
#define WPS_IN_FID_IN_USE	(~0ULL)

enum wps_quantum_kind {
	WPS_Q_PACKETS = 0,	/* wire packets (segments) */
	WPS_Q_BYTES = 1,	/* inner bytes (IP header onward) */
	WPS_Q_TIME = 2,		/* nanoseconds since the group's first packet */
};

enum wps_sched_kind {
	WPS_SCHED_RR = 0,
	WPS_SCHED_WEIGHTED = 1,
	WPS_SCHED_LEAST_LOADED = 2,
};

#define WPS_IN_F_HBH		(1u << 0)	/* carry the option in Hop-by-Hop, not DestOpt */
#define WPS_IN_F_MTU_DROP	(1u << 1)	/* too big: counted drop instead of ICMP */
/* A rule schedules least-loaded: the paths' load windows are kept (ubctl sets it with the rules). */
#define WPS_IN_F_LEAST_LOADED	(1u << 2)
/* Interfaces are named in the ports map (attach --ingress-port IF=ID): it is looked up. */
#define WPS_IN_F_PORTS_NAMED	(1u << 3)
#define WPS_IN_F_TEST_CLOCK	(1u << 8)	/* tests: now = test_now_ns */
#define WPS_IN_F_TEST_GID0	(1u << 9)	/* tests: first Group ID = test_gid0, rr start 0 */
/* bench/wps_bench.c only: Flow IDs handed out in turn, in use or not, so the bench can hold
 * more flows than the 16-bit Flow ID space (nothing it sends reaches a wire). */
#define WPS_IN_F_TEST_FID_REUSE	(1u << 10)

/* Single entry of the cfg array map; ubctl writes it, bpftool can edit it. */
struct wps_in_cfg {
	__u32 version;
	__u32 flags;			/* WPS_IN_F_* */
	__u8 src[16];			/* outer source: this ingress node */
	__u8 dst[16];			/* outer destination: the egress node */
	__u16 node_id;			/* Ingress Node ID */
	__u16 egress_node_id;
	__u8 ingress_port;		/* Ingress Port ID of packets the node sends itself */
	__u8 egress_port;		/* Egress Port ID */
	__u8 hop_limit;
	__u8 ecmp;			/* 0: explicit paths; N: ECMP over N paths by flow label */
	__u8 npaths;			/* explicit paths in use: paths[path_slot[0..npaths-1]] */
	__u8 max_inflight;		/* groups of one flow in flight, 2..WPS_IN_INFLIGHT_RING */
	__u16 path_mtu;			/* smallest MTU of the member paths */
	__u32 seg_ifindex;		/* segmentation detour for GSO skbs (0: none) */
	__u32 fid_pool;			/* Flow IDs 1..fid_pool */
	__u8 weight[WPS_IN_MAX_PATHS];	/* per path slot, for the weighted scheduler */
	__u64 quarantine_ns;		/* a released Flow ID rests this long */
	__u64 idle_ns;			/* a flow idle this long is reclaimed */
	__u64 max_delay_ns;		/* a group counts as in flight this long after its E */
	__u64 load_window_ns;		/* least-loaded: window of bytes sent per path */
	__u64 test_now_ns;		/* WPS_IN_F_TEST_CLOCK */
	__u32 test_gid0;		/* WPS_IN_F_TEST_GID0 */
	__be32 icmp_src4;		/* source of ICMP Frag Needed (0: the packet's destination) */
	__u32 dev_ifindex;		/* the device whose TC egress runs the ingress */
	__u32 dev_offloads;		/* WPS_IN_OFFL_SAVED: dev_feat_* hold what attach changed */
	/*
	 * The slots (keys of paths, path_stats, path_load; index of weight) of
	 * the paths in use, in the order they were added. A slot is a path's
	 * identity: deleting another path never moves it, so groups pinned to
	 * it, its counters and its weight stay with it. ECMP: 0..ecmp-1.
	 */
	__u8 path_slot[WPS_IN_MAX_PATHS];
	/*
	 * DEV's netdev features as ETHTOOL_GFEATURES words (one bit per
	 * feature, each TSO sub-feature its own): the ones attach changed and
	 * what they were requested as before, for detach to put back exactly.
	 */
	__u32 dev_feat_changed[WPS_IN_FEAT_WORDS];
	__u32 dev_feat_before[WPS_IN_FEAT_WORDS];
	/* Resolution of the coarse clock (a kernel tick), by which the in-flight bound and the
	 * quarantine are lengthened (0: 10 ms), and jiffies turned into ns for a packet that
	 * joins its group (0: it reads the coarse clock). */
	__u64 coarse_tick_ns;
	/*
	 * Bumped by ubctl on every rule add and del: a flow keeps the rule it
	 * was classified under (wps_in_flow.cls) while this is unchanged, and
	 * is classified again on its next packet when it is not.
	 */
	__u32 rules_gen;
	/* The slots in use (bit = slot): path_slot[0..npaths-1] as a mask, written with it. */
	__u32 path_mask;
};

/* Where docs/WPS.md's bpftool recipe and tests/wps find it. */
_Static_assert(__builtin_offsetof(struct wps_in_cfg, rules_gen) == 176, "cfg.rules_gen at byte 176");

#define WPS_IN_OFFL_SAVED	(1u << 31)	/* dev_offloads: dev_feat_* were read */

/*
 * Ingress Port ID: the interface a packet came in on. The map `ports`
 * (array, direct-mapped by ifindex & 255) names interfaces explicitly
 * (attach --ingress-port IF=ID); any other interface is its ifindex's low
 * byte; a packet the node sends itself (no interface) cfg.ingress_port.
 */
#define WPS_IN_PORTS		256
struct wps_in_port {
	__u32 ifindex;			/* 0: no entry */
	__u8 id;
	__u8 pad[3];
};

/*
 * skb->cb[0] of a packet the program on DEV sends through the segmentation
 * detour: this magic, and its Ingress Port ID in the low byte (after the
 * detour the packet has come in on the detour's veth).
 */
#define WPS_IN_CB_MAGIC		0x57500000u
#define WPS_IN_CB_MAGIC_MASK	0xffff0000u
/* ... and a fragment the program cut: cb[1] holds its flow's ports (IPv4 fragments after the
 * first have none). */
#define WPS_IN_CB_PORTS		0x00000100u
/* ... and a GSO detour's wire packet: cb[2] holds where its skb starts in the flow's count of
 * packets sent into the detour (wps_in_flow_det), so the detour's program can count it handled. */
#define WPS_IN_CB_COUNTED	0x00000200u

/* Set by the detour's program on a packet it hands back to DEV unsprayed. */
#define WPS_IN_MARK_BYPASS	0x40000000u

/* A classification rule. IPv4 prefixes are stored IPv4-mapped (::ffff:a.b.c.d/96+n). */
struct wps_in_rule {
	__u8 used;
	__u8 family;			/* 4 or 6 */
	__u8 proto;			/* 0 = any */
	__u8 src_plen;			/* over the 128-bit (mapped) address */
	__u8 dst_plen;
	__u8 qkind;			/* enum wps_quantum_kind */
	__u8 sched;			/* enum wps_sched_kind */
	__u8 reorder;			/* R flag */
	__u16 dport;			/* host order, 0 = any */
	__u16 pad;
	__u32 pad2;
	__u64 quantum;			/* packets, bytes or ns */
	__u8 src[16];
	__u8 dst[16];
};

/* An explicit member path: leave on ifindex towards nexthop MAC. Key: its slot. */
struct wps_in_path {
	__u32 ifindex;
	__u16 mtu;
	__u8 dmac[6];
	__u8 smac[6];
	__u8 flags;			/* WPS_PATH_F_* */
	__u8 nh_family;			/* 4 or 6 with WPS_PATH_F_NEXTHOP */
	__u8 nexthop[16];		/* the next hop's address (IPv4 in the last 4 bytes) */
};

/* dmac is the next hop's, found in the kernel's neighbour table (ubctl wps ingress watch). */
#define WPS_PATH_F_NEXTHOP	(1u << 0)

/*
 * Path liveness, the pinned map `live` (array[1], mmapable): the slots out of
 * rotation for each reason, one word per writer so each writes its own in
 * place. No group opens on a slot that is down; a group open on it is closed
 * (its E never sent) and the flow's next packet opens a new one elsewhere.
 */
struct wps_in_live {
	__u32 admin_down;		/* ubctl wps ingress path set ... down */
	__u32 link_down;		/* watch: the device is down or has no carrier */
	__u32 neigh_down;		/* watch: the next hop does not resolve */
	__u16 pmtu;			/* watch: smallest MTU Packet Too Big taught (0: none) */
	__u16 pad;
	__u16 slot_pmtu[WPS_IN_MAX_PATHS];	/* watch: per slot, learned MTU (0: none) */
};

/* Per path slot (explicit paths) or per egress ifindex (ECMP), per CPU. */
struct wps_in_path_stats {
	__u64 packets;
	__u64 bytes;
	__u64 groups;
};

/* Per path, shared: bytes sent in the current and the previous load window. */
struct wps_in_path_load {
	__u64 win_start;
	__u64 cur;
	__u64 prev;
};

/* Flow key: the 5-tuple (IPv4 addresses mapped), ports 0 for fragments / no ports. */
struct wps_in_flow_key {
	__u8 saddr[16];
	__u8 daddr[16];
	__be16 sport;
	__be16 dport;
	__u8 proto;
	__u8 family;
	__u16 pad;
};

/*
 * The flow table (bpf/wps_ingress/flow.h): the hash map `flows`
 * gives a flow's slot; at its slot the array `flow_hot` holds all a packet
 * that joins its group touches, in one 64-byte entry, and `flow_state` the
 * rest, taken under the flow's lock. Most flows sit at their home slot
 * (wps_flow_home), found there at once; a set-associative cache shared by the
 * CPUs (`flow_cache`) in front of the hash map finds the others' slots from a
 * hash of the key, checked against the key in flow_hot. Sizes: attach
 * --max-flows.
 */
struct wps_in_flow_ref {
	__u32 slot;
	__u32 pad;
};

/*
 * What a packet of the open group needs (Group ID, Flow ID, path, how many
 * more packets it may take, open) is one word, gs, so a packet that is
 * neither the first nor the last of its group joins it with one
 * compare-and-swap and no lock (packet quanta); every other decision (S, E,
 * the in-flight bound, byte and time quanta, reclaim, a group ended with its
 * path) is taken under the lock, which first freezes gs so no lock-free
 * packet joins meanwhile. Packets of one flow on several CPUs thus never tear
 * a group.
 */
struct wps_in_flow_hot {
	struct wps_in_flow_key key;	/* the slot's flow; all zero: none */
	__u64 gs;			/* group state word, WPS_GS_* */
	__u64 bytes;			/* inner bytes sprayed */
	/* The rule the flow was classified under and cfg.rules_gen then (WPS_CLS_*), one word so
	 * that a packet on another CPU never reads one without the other; 0: none yet. */
	__u32 cls;
	__u32 seen;			/* its last packet, in units of 2^16 ns (wps_seen), wrapping */
};

struct wps_in_flow {
	struct bpf_spin_lock lock;
	__u32 claim;			/* 0: the slot is free; 1: taken (compare-and-swap) */
	__u16 fid;			/* copies of gs's, written under the lock, for ubctl and bpftool */
	__u16 gid;
	__u8 path;
	__u8 open;			/* a group is open (its E not sent yet); 2: extended */
	__u16 pad;
	__u32 seq;			/* scheduler sequence */
	__u32 rem_set;			/* gs's REM as the last lock holder left it */
	__u64 packets;			/* wire packets decided under the lock (wps_flow_packets) */
	__u64 group_pkts;		/* wire packets of the open group, as the lock holder counted */
	__u64 group_bytes;
	__u64 group_t0;
	__u64 groups;
	__u64 extended;			/* groups extended at the in-flight bound */
	__u64 closed_ts[WPS_IN_INFLIGHT_RING];	/* time group g closed, at [g % ring] */
	/* The path slot group g went on, at [g % ring]: whose MTU a Packet Too Big about it lowers. */
	__u8 gpath[WPS_IN_INFLIGHT_RING];
};

_Static_assert(sizeof(struct wps_in_flow_hot) == 64, "flow_hot: one cache line");

/*
 * A flow's wire packets through the GSO detour, wrapping: sent into it from
 * DEV, and handled by its program (done may skip those the backlog dropped).
 * While they differ, the flow's packets follow them (bpf/wps_ingress/mtu.h).
 * An array of its own beside flow_state, at the flow's slot: only a flow that
 * took the detour touches it.
 */
struct wps_in_flow_det {
	__u32 sent;
	__u32 done;
};

/* A set of the flow cache: 4 ways of (tag, slot + 1). */
#define WPS_IN_CACHE_WAYS	4
struct wps_in_fcache {
	__u32 tag[WPS_IN_CACHE_WAYS];	/* the key hash's high half, low bit set; 0: empty */
	__u32 slot1[WPS_IN_CACHE_WAYS];	/* the flow's slot + 1 */
};

/*
 * The weighted scheduler's cycle: the weights' sum in lowest terms, at most
 * 16 paths of 255, one slot a group.
 */
#define WPS_IN_SCHED_CYCLE	4096
_Static_assert(WPS_IN_MAX_PATHS * 255 <= WPS_IN_SCHED_CYCLE, "the longest cycle fits");

/*
 * What the scheduler picks among (wps_sched_make): made where the paths up
 * are found (BPF: per CPU, again when they or the weights change), read by
 * every pick.
 */
struct wps_in_sched {
	__u8 slot[WPS_IN_MAX_PATHS];	/* the slots in use and up, in order */
	__u8 weight[WPS_IN_MAX_PATHS];	/* their weights in lowest terms, by slot */
	__s32 cur[WPS_IN_MAX_PATHS];	/* smooth weighted round robin's values while the cycle is made */
	__u32 n;			/* slots up */
	__u32 len;			/* the cycle's groups: the weights' sum (0: rr) */
	__u8 cycle[WPS_IN_SCHED_CYCLE];	/* the slot of each group of the cycle */
};

/*
 * gs: packets the open group may still take lock-free (REM, at most 0xffff),
 * its Group ID, the Flow ID, path slot, state bits.
 */
#define WPS_GS_REM(w)		((__u16)(w))
#define WPS_GS_GID(w)		((__u16)((w) >> 16))
#define WPS_GS_FID(w)		((__u16)((w) >> 32))
#define WPS_GS_PATH(w)		((__u8)(((w) >> 48) & (WPS_IN_MAX_PATHS - 1)))
#define WPS_GS_OPEN		(1ULL << 56)	/* a group is open */
#define WPS_GS_EXT		(1ULL << 57)	/* ... and extended at the in-flight bound */
#define WPS_GS_FROZEN		(1ULL << 58)	/* a lock holder is deciding: no lock-free join */
#define WPS_GS_DETOUR		(1ULL << 59)	/* the flow used the GSO detour: check wps_in_flow_det (set once) */
#define WPS_GS_DETOUR_ALL	(1ULL << 60)	/* all its packets take the detour (fragments made; set once) */

/* cls: the rule (4 bits), valid, and rules_gen's low 24 bits. */
#define WPS_CLS_VALID		(1u << 4)
#define WPS_CLS_PACK(gen, rule)	((__u32)(gen) << 8 | WPS_CLS_VALID | ((__u32)(rule) & (WPS_IN_MAX_RULES - 1)))
#define WPS_CLS_RULE(c)		((__u32)(c) & (WPS_IN_MAX_RULES - 1))
#define WPS_CLS_GEN_OK(c, gen)	(((c) & WPS_CLS_VALID) && ((c) >> 8) == ((__u32)(gen) & 0xffffff))

/*
 * A time in ns as flow_hot.seen counts it: 2^16 ns (about 66 us) units,
 * wrapping after 3.3 days, which idle times (at most an hour) stay far below.
 */
#define WPS_SEEN_SHIFT		16
#define wps_seen(ns)		((__u32)((ns) >> WPS_SEEN_SHIFT))

/*
 * Counters: one X-macro so the BPF enum and ubctl's names cannot drift.
 * Every packet the ingress program sees moves rx and exactly one of tx_*,
 * pass_*, drop_*, redirect_* (a detoured packet is seen again after
 * segmentation, and once more on DEV when its path is DEV, each time
 * counted). Other counters are events.
 */
#define WPS_IN_COUNTERS(X)						\
	X(RX,			"rx")					\
	X(TX_SPRAYED,		"tx_sprayed")				\
	X(PASS_NOT_IP,		"pass_not_ip")				\
	X(PASS_NO_RULE,		"pass_no_rule")				\
	X(PASS_MALFORMED,	"pass_malformed")			\
	X(PASS_ALREADY_WPS,	"pass_already_wps")			\
	X(DROP_SITE_WPS,	"drop_site_wps")			\
	X(DROP_UNWALKED,	"drop_inner_unwalked")			\
	X(PASS_TABLE_FULL,	"pass_flow_table_full")			\
	X(PASS_FID_EXHAUSTED,	"pass_flow_id_exhausted")		\
	X(PASS_NO_PATH,		"pass_no_path")				\
	X(DROP_NO_LIVE_PATH,	"drop_no_live_path")			\
	X(REDIRECT_SEGMENT,	"redirect_gso_detour")			\
	X(REDIRECT_BACK,	"redirect_detour_unsprayed")		\
	X(PASS_BYPASS,		"pass_from_detour")			\
	X(DROP_ENCAP_FAILED,	"drop_encap_failed")			\
	X(DROP_MTU,		"drop_mtu")				\
	X(TX_MTU_ICMP,		"tx_mtu_icmp")				\
	X(TX_FRAGMENTED,	"tx_fragmented")			\
	X(DROP_FRAG_FAILED,	"drop_frag_failed")			\
	X(EV_INNER_EXTHDR,	"inner_ipv6_exthdr")			\
	X(EV_INNER_FRAGMENT,	"inner_fragment")			\
	X(EV_GSO_UNSPLIT,	"gso_not_segmented")			\
	X(EV_FLOW_NEW,		"flows_new")				\
	X(EV_FLOW_RECLAIMED,	"flows_reclaimed")			\
	X(EV_GROUP_OPENED,	"groups_opened")			\
	X(EV_GROUP_EXTENDED,	"groups_extended_inflight")		\
	X(EV_FIB_FAILED,	"ecmp_fib_failed")				\
	X(EV_GROUP_CLOSED_DOWN,	"groups_closed_path_down")		\
	X(EV_TABLE_WALK,	"flow_table_sweeps")				\
	X(EV_FRAGMENTS,		"fragments_made")				\
	X(EV_CACHE_MISS,	"flow_cache_misses")				\
	X(EV_GSO_WHOLE,		"gso_whole_in_group")

#define WPS_IN_CNT_ENUM(id, name) WPS_IN_CNT_##id,
enum wps_in_counter {
	WPS_IN_COUNTERS(WPS_IN_CNT_ENUM)
	WPS_IN_CNT__MAX
};
#undef WPS_IN_CNT_ENUM

#define WPS_BND_COUNTERS(X)						\
	X(RX_IN,		"rx_in")				\
	X(RX_OUT,		"rx_out")				\
	X(DROP_IN,		"drop_wps_in")				\
	X(DROP_OUT,		"drop_wps_out")				\
	X(PASS_IN,		"pass_in")				\
	X(PASS_OUT,		"pass_out")				\
	X(EV_TOO_DEEP,		"exthdr_chain_too_long")

#define WPS_BND_CNT_ENUM(id, name) WPS_BND_CNT_##id,
enum wps_bnd_counter {
	WPS_BND_COUNTERS(WPS_BND_CNT_ENUM)
	WPS_BND_CNT__MAX
};
#undef WPS_BND_CNT_ENUM

/* ---- pure helpers, shared by BPF and user code --------------------------- */

/* Always inlined: the BPF side calls some of them under a bpf_spin_lock. */
#define WPS_INLINE static inline __attribute__((always_inline))

/*
 * Does addr fall in prefix/plen (128-bit, byte arrays in network order)?
 * Four 32-bit words, no loop: the BPF verifier of older kernels gives up on
 * a byte loop nested in the rule loop ("sequence of jumps too complex").
 */
WPS_INLINE __u32 wps_word(const __u8 *p)
{
	/* One load and a byte swap: the rule and the key keep addresses 4-aligned. */
	__u32 w;

#ifdef __bpf__
	/* Told, or the BPF backend loads the word byte by byte. */
	p = __builtin_assume_aligned(p, 4);
#endif
	__builtin_memcpy(&w, p, 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap32(w);
#else
	return w;
#endif
}

WPS_INLINE int wps_prefix_match(const __u8 *addr, const __u8 *prefix, __u8 plen)
{
	int b0 = plen, b1 = plen - 32, b2 = plen - 64, b3 = plen - 96;
#define WPS_WMASK(b) ((b) <= 0 ? 0u : (b) >= 32 ? ~0u : ~0u << (32 - (b)))
	return !((wps_word(addr) ^ wps_word(prefix)) & WPS_WMASK(b0)) &&
	       !((wps_word(addr + 4) ^ wps_word(prefix + 4)) & WPS_WMASK(b1)) &&
	       !((wps_word(addr + 8) ^ wps_word(prefix + 8)) & WPS_WMASK(b2)) &&
	       !((wps_word(addr + 12) ^ wps_word(prefix + 12)) & WPS_WMASK(b3));
#undef WPS_WMASK
}

/* The Ingress Port ID of a packet that came in on ifindex (0: the node's own, ID own). */
WPS_INLINE __u8 wps_port_id(const struct wps_in_port *e, __u32 ifindex, __u8 own)
{
	if (!ifindex)
		return own;
	if (e && e->ifindex == ifindex)
		return e->id;
	return (__u8)ifindex;
}

/* Outer flow label from (Flow ID, Group ID): constant within a group, never 0. */
WPS_INLINE __u32 wps_flow_label(__u16 fid, __u16 gid)
{
	__u32 h = ((__u32)fid << 16 | gid) * 0x9E3779B1u;

	h = (h ^ (h >> 15)) & 0xfffff;
	return h ? h : 1;
}

/* Serial arithmetic (SERIAL_BITS 16): the Group ID after g. */
WPS_INLINE __u16 wps_gid_next(__u16 g)
{
	return (__u16)(g + 1);
}

/*
 * i & 15, with the mask kept: the compiler may know i < 16 (i = x % n, n <= 16)
 * and drop it, but the BPF verifier, which cannot follow a modulo, needs it.
 */
WPS_INLINE __u32 wps_idx(__u32 i)
{
#ifdef __bpf__
	asm volatile("" : "+r"(i));
#endif
	return i & (WPS_IN_MAX_PATHS - 1);
}

/* One step of Euclid's algorithm on (a, b); 1 when done (b is 0). */
WPS_INLINE int wps_gcd_step(__u32 *a, __u32 *b)
{
	__u32 t;

	if (!*b)
		return 1;
	t = *a % *b;
	*a = *b;
	*b = t;
	return 0;
}

#ifdef __bpf__
struct wps_gcd_ctx {
	__u32 a, b;
};

static __attribute__((unused)) long wps_gcd_loop_step(__u32 i, void *ctx)
{
	struct wps_gcd_ctx *c = ctx;

	(void)i;
	return wps_gcd_step(&c->a, &c->b);
}
#endif

/*
 * Greatest common divisor of a and b < 256 (Euclid ends within 13 steps).
 * BPF: through bpf_loop, whose step the verifier checks once; unrolled, the
 * loop's paths doubled the ingress programs' verified instructions.
 */
WPS_INLINE __u32 wps_gcd(__u32 a, __u32 b)
{
#ifdef __bpf__
	struct wps_gcd_ctx c = { a, b };

	bpf_loop(14, wps_gcd_loop_step, &c, 0);
	return c.a;
#else
	for (int k = 0; k < 14 && !wps_gcd_step(&a, &b); k++)
		;
	return a;
#endif
}

/* Slots masked: the BPF verifier cannot see that they are < 16. */
#define WPS_SLOT(i) (slot[wps_idx(i)] & (WPS_IN_MAX_PATHS - 1))

/*
 * The weights of the n paths in use, slot[0..n-1], in lowest terms into out
 * (indexed by slot; other slots left as they are): the weighted scheduler's
 * cycle is then their sum long (40:30:20:10 and 4:3:2:1 make the same 10
 * groups), cheaper to make and to fit.
 */
WPS_INLINE void wps_weights_lowest(const __u8 *slot, __u32 n, const __u8 *weight, __u8 *out)
{
	__u32 g = 0;

	if (n > WPS_IN_MAX_PATHS)
		n = WPS_IN_MAX_PATHS;
	for (__u32 i = 0; i < WPS_IN_MAX_PATHS && i < n; i++)
		g = wps_gcd(weight[WPS_SLOT(i)], g);
	for (__u32 i = 0; i < WPS_IN_MAX_PATHS && i < n; i++)
		out[WPS_SLOT(i)] = (__u8)(g ? weight[WPS_SLOT(i)] / g : 0);
}

/*
 * The group quantum reached by this packet? It is then the group's last (E):
 * packets count segments, bytes include this packet, time runs from the
 * group's first packet (docs/WIRE.md §6: the first packet that reaches or passes
 * the bound closes the group).
 */
WPS_INLINE int wps_quantum_reached(__u8 kind, __u64 quantum, __u64 pkts_after,
				      __u64 bytes_after, __u64 elapsed_ns)
{
	switch (kind) {
	case WPS_Q_BYTES:
		return bytes_after >= quantum;
	case WPS_Q_TIME:
		return elapsed_ns >= quantum;
	default:
		return pkts_after >= quantum;
	}
}

/*
 * May group g close now and g+1 open next, with at most max groups in
 * flight? The group max places before g+1 must have left the domain.
 */
WPS_INLINE int wps_inflight_allows(const __u64 *closed_ts, __u16 g, __u8 max, __u64 delay,
				      __u64 now)
{
	__u16 old = (__u16)(g + 1 - max);
	__u64 t = closed_ts[old % WPS_IN_INFLIGHT_RING];

	return t == 0 || t + delay <= now;
}

/*
 * The slots of slot[0..n-1] that usable (bit = slot) holds, in order, into
 * out; returns how many. The scheduler then picks among them.
 */
WPS_INLINE __u32 wps_live_slots(const __u8 *slot, __u32 n, __u32 usable, __u8 *out)
{
	__u32 k = 0;

	/* Unrolled: 6.1's verifier refused the loop the compiler laid out ("back-edge"). */
#ifdef __clang__
#pragma unroll
#endif
	for (__u32 i = 0; i < WPS_IN_MAX_PATHS; i++) {
		__u8 s = slot[i] & (WPS_IN_MAX_PATHS - 1);

		if (i < n && (usable >> s & 1))
			out[wps_idx(k++)] = s;
	}
	return k;
}

/*
 * One group of the weighted scheduler's cycle, position k: nginx's smooth
 * weighted round robin. Each path's current value grows by its weight, the
 * largest (the first of equals) takes the group and gives back the weights'
 * sum. Of any k consecutive groups a path then takes at most its share
 * rounded up with two paths, at most one more with more paths
 * (tests/unit/test_wps_sched.c checks every window): 7:3 is A B A A A B A
 * A B A, never seven groups in a row into A.
 */
WPS_INLINE void wps_sched_cycle_step(struct wps_in_sched *s, __u32 k)
{
	const __u8 *slot = s->slot;
	__u32 n = s->n, best = 0;
	__s32 top = 0;

#ifdef __clang__
#pragma unroll
#endif
	for (__u32 i = 0; i < WPS_IN_MAX_PATHS; i++) {
		if (i < n) {
			__s32 v = s->cur[i] + s->weight[WPS_SLOT(i)];

			s->cur[i] = v;
			if (i == 0 || v > top) {
				top = v;
				best = i;
			}
		}
	}
	s->cur[wps_idx(best)] -= (__s32)s->len;
	s->cycle[k & (WPS_IN_SCHED_CYCLE - 1)] = (__u8)WPS_SLOT(best);
}

#ifdef __bpf__
struct wps_sched_ctx {
	struct wps_in_sched *s;
};

static __attribute__((unused)) long wps_sched_loop_step(__u32 k, void *ctx)
{
	wps_sched_cycle_step(((struct wps_sched_ctx *)ctx)->s, k);
	return 0;
}
#endif

/*
 * The scheduler's view of the paths in use, path_slot[0..n-1], that usable
 * (bit = slot) holds: their slots, their weights (by slot) in lowest terms
 * and the weighted cycle. BPF: the cycle through bpf_loop, whose step the
 * verifier checks once, so a cycle of any length costs it the same.
 */
WPS_INLINE void wps_sched_make(struct wps_in_sched *s, const __u8 *path_slot, __u32 n, __u32 usable,
			       const __u8 *weight)
{
	const __u8 *slot = s->slot;
	__u32 total = 0;

	s->n = wps_live_slots(path_slot, n, usable, s->slot);
	n = s->n;
	wps_weights_lowest(s->slot, n, weight, s->weight);
	for (__u32 i = 0; i < WPS_IN_MAX_PATHS; i++) {
		s->cur[i] = 0;
		if (i < n)
			total += s->weight[WPS_SLOT(i)];
	}
	s->len = total;
#ifdef __bpf__
	{
		struct wps_sched_ctx c = { s };

		bpf_loop(total, wps_sched_loop_step, &c, 0);
	}
#else
	for (__u32 k = 0; k < total; k++)
		wps_sched_cycle_step(s, k);
#endif
}

/*
 * Scheduler: the slot of the member path for the group opened at scheduler
 * step seq, among the paths of s (wps_sched_make); load is indexed by slot.
 * rr: the (seq mod n)th. weighted: the (seq mod len)th of the cycle, so a
 * path gets its weight's share of every cycle, interleaved (a path of weight
 * 0 gets nothing; all 0 falls back to rr). least-loaded: the smallest load,
 * ties to the first after the (seq mod n)th (so equal loads still rotate).
 */
WPS_INLINE __u32 wps_sched_pick(__u8 kind, __u32 seq, const struct wps_in_sched *s, const __u64 *load)
{
	const __u8 *slot = s->slot;
	__u32 n = s->n, len = s->len, pos, best;

	if (n == 0)
		return 0;
	if (n > WPS_IN_MAX_PATHS)
		n = WPS_IN_MAX_PATHS;
	if (kind == WPS_SCHED_WEIGHTED && len)
		return s->cycle[seq % len & (WPS_IN_SCHED_CYCLE - 1)] & (WPS_IN_MAX_PATHS - 1);
	if (kind == WPS_SCHED_LEAST_LOADED) {
		pos = seq % n;
		best = WPS_SLOT(pos);
		for (__u32 k = 1; k < WPS_IN_MAX_PATHS && k < n; k++) {
			__u32 t = WPS_SLOT((pos + k) % n);

			if (load[t] < load[best])
				best = t;
		}
		return best;
	}
	return WPS_SLOT(seq % n);
}
#undef WPS_SLOT

WPS_INLINE __u64 wps_gs_pack(__u16 rem, __u16 gid, __u16 fid, __u8 path, __u8 open)
{
	return (__u64)rem | (__u64)gid << 16 | (__u64)fid << 32 | (__u64)(path & (WPS_IN_MAX_PATHS - 1)) << 48 |
	       (open ? WPS_GS_OPEN : 0) | (open == 2 ? WPS_GS_EXT : 0);
}

/* wps_gs_pack()'s `open` back: 0 no group open, 1 open, 2 open and extended. */
WPS_INLINE __u8 wps_gs_open(__u64 w)
{
	return !(w & WPS_GS_OPEN) ? 0 : (w & WPS_GS_EXT) ? 2 : 1;
}

/*
 * May a packet of segs segments join the group of gs without the lock? Only
 * when it is neither the group's first (a group is open) nor its last (the
 * group may take more than segs packets: REM, which the lock holder sets to
 * what the packet quantum leaves, at most 0xffff, and joins take from), and
 * no lock holder is deciding. A group extended at the in-flight bound takes
 * max(quantum, WPS_GS_EXT_JOINS) more lock-free each time the lock holder
 * finds it may not close yet (wps_gs_rem_ext): its E comes with the first
 * packet the lock holder sees after the bound allows it, at most that many
 * late.
 */
WPS_INLINE int wps_gs_joins(__u64 w, __u32 segs)
{
	return (w & (WPS_GS_OPEN | WPS_GS_FROZEN)) == WPS_GS_OPEN && WPS_GS_REM(w) > segs;
}

/* wps_gs_joins(), and the group's path is usable (bit = slot): else the group ends under the lock. */
WPS_INLINE int wps_gs_joins_on(__u64 w, __u32 segs, __u32 usable)
{
	return wps_gs_joins(w, segs) && (usable >> WPS_GS_PATH(w) & 1);
}

/* REM for a group that has counted pkts of a packet quantum (0 for other quanta: no joins). */
WPS_INLINE __u16 wps_gs_rem(__u8 qkind, __u64 quantum, __u64 pkts)
{
	if (qkind != WPS_Q_PACKETS || pkts >= quantum)
		return 0;
	return quantum - pkts > 0xffff ? 0xffff : (__u16)(quantum - pkts);
}

/*
 * Packets a group extended at the in-flight bound takes lock-free before the
 * lock asks again, at least: room for a whole GSO skb of the sender's
 * (40-odd segments) to join, which a quantum of 16 would never leave. Its
 * cost: E comes up to this many packets after the bound frees.
 */
#define WPS_GS_EXT_JOINS	128

/* REM for a group extended at the in-flight bound: max(quantum, WPS_GS_EXT_JOINS) more before the lock asks again. */
WPS_INLINE __u16 wps_gs_rem_ext(__u8 qkind, __u64 quantum)
{
	if (qkind != WPS_Q_PACKETS)
		return 0;
	if (quantum < WPS_GS_EXT_JOINS)
		quantum = WPS_GS_EXT_JOINS;
	return quantum > 0xffff ? 0xffff : (__u16)quantum;
}

/* The flow's wire packets: as decided under the lock, and those that joined lock-free since. */
WPS_INLINE __u64 wps_flow_packets(const struct wps_in_flow_hot *h, const struct wps_in_flow *f)
{
	__u16 rem = WPS_GS_REM(h->gs);

	return f->packets + ((h->gs & WPS_GS_OPEN) && f->rem_set > rem ? f->rem_set - rem : 0);
}

/* The flow cache's hash of a key (5 words): set = hash & (sets - 1), tag = high half | 1. */
WPS_INLINE __u64 wps_key_hash(const struct wps_in_flow_key *k)
{
	const __u64 *w = (const __u64 *)k;
	__u64 h = w[0] * 0x9E3779B97F4A7C15ULL ^ w[1] * 0xC2B2AE3D27D4EB4FULL ^ w[2] * 0x165667B19E3779F9ULL ^
		  w[3] * 0x27D4EB2F165667C5ULL ^ w[4] * 0x94D049BB133111EBULL;

	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ULL;
	return h ^ (h >> 29);
}

/*
 * A flow's home slot in a table of 2 * max_flows (key hash h): a new flow
 * takes it, or the other slot of its pair (home ^ 1, the same 128 bytes of
 * flow_hot), if free, and a packet looks there first; only a flow placed
 * elsewhere is found through flow_cache.
 */
WPS_INLINE __u32 wps_flow_home(__u64 h, __u32 max_flows)
{
	return (__u32)(h >> 20) & (2 * max_flows - 1);
}

#endif
