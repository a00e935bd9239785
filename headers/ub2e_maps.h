/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * UB2E switch: map key/value types and counters shared by the XDP programs
 * (bpf/ub2e_*.bpf.c), ubctl and the tests. Layout changes here are ABI for
 * pinned maps: bump UB2E_CFG_VERSION when struct ub2e_cfg changes.
 */
#ifndef UB2E_MAPS_H
#define UB2E_MAPS_H

#include <linux/types.h>

#define UB2E_CFG_VERSION	3

/* What to do with a native UB packet whose CCI is not in FECN mode (draft §5.2). */
enum ub2e_cci_policy {
	UB2E_CCI_FORWARD = 0,	/* forward, IP ECN left as it is, counted */
	UB2E_CCI_DROP = 1,
};

#define UB2E_F_NO_TTL_DEC	(1u << 0)	/* do not decrement TTL / hop limit */
#define UB2E_F_UNTAGGED		(1u << 1)	/* UB -> UBoE: never add an 802.1Q tag */
#define UB2E_F_STRICT_VLAN	(1u << 2)	/* only partitions/VLANs in the tables pass */
#define UB2E_F_CAQM_TAG		(1u << 3)	/* CAQM CCI <-> Ethernet CAQM tag on the IP side */

/* Single entry of the ub2e_cfg array map; ubctl writes it, bpftool can edit it. */
struct ub2e_cfg {
	__u32 version;
	__u32 flags;		/* UB2E_F_* */
	__u16 ub_ethertype;	/* native UB EtherType, default 0x88B5 */
	__u8 fecn_to_ecn[4];	/* UB -> UBoE: IP ECN for each FECN codepoint */
	__u8 ecn_to_fecn[4];	/* UBoE -> UB: FECN for each IP ECN codepoint */
	__u8 cci_policy;	/* enum ub2e_cci_policy */
	__u8 rt;		/* RT written into LPH on UBoE -> UB, default 10b */
	__u8 vl;		/* LPH virtual lane on UBoE -> UB */
	__u8 default_perm;	/* Permission for untagged / unmapped VLANs */
	__u16 caqm_ethertype;	/* with UB2E_F_CAQM_TAG: the tag's, default 0x88B6 */
	__u32 default_pid;	/* Partition ID for untagged UBoE, default 1 */
	/* The ports' own MACs (ubctl fills them in): unicast frames for another
	 * host are not routed (RFC 1812 §5.3.7). All zero: only group addresses
	 * are told apart. */
	__u8 ub_mac[6];
	__u8 ip_mac[6];
};

/* Source addresses of the ICMP errors the slow path sends itself out of a
 * port (that port's, network order; all zero: none of that family), one per
 * side: map ub2e_icmp_src's index. */
#define UB2E_SIDE_IP	0
#define UB2E_SIDE_UB	1
#define UB2E_SIDES	2
struct ub2e_icmp_src {
	__be32 ip4;
	__be32 ip6[4];
};

/*
 * Per-port token bucket of the ICMP errors the slow path sends itself (hash
 * map keyed by ifindex, pinned as `icmp_limit`; a port without an entry is
 * not limited). ubctl writes rate and burst with a full bucket; bpftool can
 * change them live. `lock` is a struct bpf_spin_lock on the BPF side.
 */
#define UB2E_ICMP_RATE_DEFAULT	1000	/* answers/s: net.ipv4.icmp_msgs_per_sec */
#define UB2E_ICMP_BURST_DEFAULT	50	/* net.ipv4.icmp_msgs_burst */
#define UB2E_ICMP_RATE_MAX	1000000
#define UB2E_ICMP_BURST_MAX	1000000
#define UB2E_NSEC_PER_SEC	1000000000ull

struct ub2e_icmp_limit {
	__u32 lock;
	__u32 rate;		/* answers per second; 0 = no limit */
	__u32 burst;		/* bucket depth in answers (0 counts as 1) */
	__u32 pad;
	__u64 credit;		/* answers x 1e9: one answer costs UB2E_NSEC_PER_SEC */
	__u64 last_ns;		/* bpf_ktime_get_ns() of the last refill */
};

/*
 * NPI -> VLAN table (draft §5.3): an array (Partition ID >> 12) of arrays
 * (Partition ID & 0xfff) of this value; all zero = no entry.
 * A baseline entry serves both permissions (`any`); an enhanced entry (Fig. 3)
 * gives each Permission its own VLAN (`perm[0]`, `perm[1]`). 0 = no entry;
 * an enhanced VLAN wins over the baseline one.
 */
struct ub2e_npi_vlans {
	__u16 any;
	__u16 perm[2];
};

/* VLAN -> NPI table value (array indexed by VLAN ID): Partition ID in bits
 * 0-23, Permission in bit 24, UB2E_VLAN_ANY_PERM for a baseline entry (the
 * Permission is then the configured default). */
#define UB2E_VLAN_VALID		(1u << 31)
#define UB2E_VLAN_ANY_PERM	(1u << 25)
#define UB2E_VLAN_PERM_SHIFT	24

_Static_assert(sizeof(struct ub2e_npi_vlans) == 6, "npi2vlan value is 6 bytes");

#define UB2E_VLAN_MAX		4096
#define UB2E_MAX_NPI_ENTRIES	8192	/* what ubctl accepts in one table */
#define UB2E_NPI_BLOCK		4096	/* npi2vlan: Partition IDs per block (lower 12 bits) */
#define UB2E_NPI_BLOCKS		4096	/* npi2vlan: blocks (upper 12 bits) */
#define UB2E_MAX_PORTS		64

/*
 * Counters: one X-macro so the BPF enum and ubctl's names cannot drift.
 * rx_* count packets seen, tx_* packets converted and redirected,
 * pass_* packets handed to the kernel, drop_* packets dropped, per reason.
 * A forwarded packet moves tx_* only, so the fast path pays one per-CPU
 * update: in the map, rx_* count the received packets that were not
 * forwarded, and readers add tx_* to them (ub2e_counters_read()).
 */
#define UB2E_COUNTERS(X)						\
	X(RX_UB,		"rx_ub")				\
	X(RX_UBOE,		"rx_uboe")				\
	X(TX_UBOE,		"tx_uboe")				\
	X(TX_UB,		"tx_ub")				\
	X(PASS_NOT_UB,		"pass_not_ub")				\
	X(PASS_NOT_UBOE,	"pass_not_uboe")			\
	X(PASS_TTL_EXPIRED,	"pass_ttl_expired")			\
	X(PASS_NO_NEIGH,	"pass_no_neigh")			\
	X(PASS_LOCAL,		"pass_local")				\
	X(PASS_FIB_OTHER,	"pass_fib_other")			\
	X(PASS_FRAG_NEEDED,	"pass_frag_needed")			\
	X(PASS_NOT_FOR_US,	"pass_not_for_us")			\
	X(CCI_NOT_FECN,		"cci_not_fecn_forwarded")		\
	X(DROP_TRUNCATED,	"drop_truncated")			\
	X(DROP_LPH_CONFIG,	"drop_lph_config_not_ip")		\
	X(DROP_IP_VERSION,	"drop_ip_version_mismatch")		\
	X(DROP_IP_LENGTH,	"drop_ip_bad_length")			\
	X(DROP_IPV4_OPTIONS,	"drop_ipv4_options")			\
	X(DROP_IPV4_FRAGMENT,	"drop_ipv4_fragment")			\
	X(DROP_NOT_UBOE,	"drop_not_uboe_payload")		\
	X(DROP_TP_OPCODE,	"drop_tp_opcode_invalid")		\
	X(DROP_PARTITION_ZERO,	"drop_partition_zero")			\
	X(DROP_CCI_NOT_FECN,	"drop_cci_not_fecn")			\
	X(DROP_NPI_UNMAPPED,	"drop_npi_unmapped")			\
	X(DROP_VLAN_RESERVED,	"drop_vlan_reserved")			\
	X(DROP_VLAN_UNMAPPED,	"drop_vlan_unmapped")			\
	X(DROP_ADJUST_FAILED,	"drop_adjust_failed")			\
	X(DROP_NOT_EGRESS_PORT,	"drop_not_egress_port")			\
	X(DROP_IPV4_CHECKSUM,	"drop_ipv4_bad_checksum")		\
	X(DROP_SRC_MARTIAN,	"drop_src_martian")			\
	X(SLOW_TX_UB,		"slow_tx_ub")				\
	X(SLOW_TX_UBOE,		"slow_tx_uboe")				\
	X(SLOW_DROP_TOO_BIG,	"slow_drop_too_big")			\
	X(SLOW_DROP_UNCONVERTED, "slow_drop_unconverted")		\
	X(SLOW_DROP_VLAN,	"slow_drop_vlan")			\
	X(SLOW_DROP_ADJUST,	"slow_drop_adjust_failed")			\
	X(SLOW_ICMP_TOO_BIG,	"slow_icmp_too_big")			\
	X(SLOW_ICMP_NO_SOURCE,	"slow_icmp_no_source")		\
	X(SLOW_ICMP_RATELIMITED, "slow_icmp_ratelimited")		\
	X(SLOW_ICMP_TRUNCATED,	"slow_icmp_truncated")			\
	X(SLOW_ICMP_SRC_ATTACH,	"slow_icmp_src_from_attach")		\
	X(VLAN_FROM_METADATA,	"vlan_from_metadata")			\
	X(SLOW_CAQM,		"slow_caqm")

/*
 * The slow path (bpf/ub2e_tc.bpf.c). What XDP cannot finish (no neighbour,
 * too big, TTL, local) it hands to the kernel as the plain IP packet, with the
 * NPI in 4 bytes of XDP metadata; TC ingress moves them to skb->mark, the
 * kernel routes (resolving neighbours, answering with ICMP), and TC egress on
 * the switch's ports converts every marked packet from the mark. The slow_*
 * counters are TC's: they are not per-input verdicts of the XDP programs
 * (rx_* = tx_* + pass_* + drop_* holds for those).
 */
#define UB2E_MARK_MAGIC		0xa0000000u	/* bits 31-27: 10100 */
#define UB2E_MARK_MAGIC_MASK	0xf8000000u
#define UB2E_MARK_FECN_SHIFT	25		/* bits 26-25: FECN for UBoE -> UB */
#define UB2E_MARK_PERM_SHIFT	24		/* bit 24: Permission */
/* bits 23-0: Partition ID */

static inline __u32 ub2e_mark(__u32 pid, __u8 perm, __u8 fecn)
{
	return UB2E_MARK_MAGIC | (__u32)(fecn & 3) << UB2E_MARK_FECN_SHIFT |
	       (__u32)(perm & 1) << UB2E_MARK_PERM_SHIFT | (pid & 0xffffffu);
}

/*
 * A CAQM request on the slow path (--caqm-tag): the mark has no room for it,
 * so it is a second word of XDP metadata, which TC ingress leaves in
 * skb->tc_index (through the classid: 16 bits the kernel's forwarding and
 * neighbour queue leave alone, as they do the mark): UB2E_SLOW_CAQM | the
 * tag's info, cc_type 000 (docs/WIRE.md §5; the only type carried). 0: none.
 */
#define UB2E_SLOW_CAQM		0x8000u
#define UB2E_SLOW_CAQM_INFO	0x1fffu

/* The two words of XDP metadata before a punted frame (bpf/ub2e_common.bpf.h). */
struct ub2e_punt_meta {
	__u32 mark;
	__u32 caqm;
};

/*
 * The same words in front of the IP packet, where the kernel refuses XDP
 * metadata (ub2e_punt_key != 0): Ethernet | this header | IP, the EtherType
 * the IP packet's. TC ingress takes it off before the kernel parses IP, when
 * it ends with the key the programs were loaded with (random, 64 bits: a frame
 * from the wire cannot set a switch's mark). Headroom, unlike tailroom, XDP
 * always has. Until TC takes it off it must not pass for IP: a first byte of 0
 * is no IPv4 header to GRO (nor to ip_rcv), and next header 255 (byte 6) has
 * no IPv6 GRO handler, so no punt is merged with another on the way.
 */
#define UB2E_PUNT_NOT_IP6_NH	6
struct ub2e_punt_hdr {
	__u8 not_ip[8];		/* 0, and 0xff at UB2E_PUNT_NOT_IP6_NH */
	struct ub2e_punt_meta m;
	__u64 key;
};

#define UB2E_CNT_ENUM(id, name) UB2E_CNT_##id,
enum ub2e_counter {
	UB2E_COUNTERS(UB2E_CNT_ENUM)
	UB2E_CNT__MAX
};
#undef UB2E_CNT_ENUM

#endif
