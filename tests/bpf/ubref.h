/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A reference decoder of UB frames for the fuzzers, written straight from
 * /work/shared/design/WIRE.md §1, §2, §5 and draft-li-uboe-00 §5, with no code
 * shared with what it checks (bpf/ub2e_*.bpf.c, user/lib/frame_parse.c): byte
 * offsets and masks only, no project headers. Its verdict is the rule a UB2E
 * switch applies to a received frame:
 *
 *   REF_FOREIGN  not UB traffic at all: the switch leaves it to the kernel as is
 *   REF_DROP     claims to be UB but breaks a rule: must never be forwarded
 *   REF_VALID    a UB packet the switch may convert (TTL and FIB permitting)
 */
#ifndef UBXDP_UBREF_H
#define UBXDP_UBREF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ref_kind { REF_FOREIGN, REF_DROP, REF_VALID };

/* Which rule a REF_DROP frame breaks first, in the order a receiver meets them. */
enum ref_defect {
	REF_NONE,
	REF_TRUNCATED,		/* a header, or the IP length, beyond the frame */
	REF_LPH_CONFIG,		/* LPH Config neither 3 nor 4 */
	REF_IP_VERSION,		/* IP version against LPH Config */
	REF_NOT_UB_PAYLOAD,	/* native UB whose IP payload is not UDP to 4792 */
	REF_FRAGMENT,		/* IPv4 fragment */
	REF_OPTIONS,		/* IPv4 IHL other than 5 */
	REF_LENGTH,		/* IP and UDP lengths disagree, or no room for TPH and ICRC */
	REF_TP_OPCODE,		/* reserved TP opcode */
	REF_PARTITION_ZERO,	/* native UB with Partition ID 0 */
};

struct ref_frame {
	enum ref_kind kind;
	const char *why;		/* the rule that decided FOREIGN or DROP */
	enum ref_defect defect;		/* for DROP */
	/* L2 */
	size_t l2_len;			/* bytes before the IP header */
	bool tagged;
	unsigned tci;			/* whole TCI of the 802.1Q tag */
	uint16_t ethertype;		/* outer */
	bool caqm_tagged;		/* an Ethernet CAQM tag after the 802.1Q one */
	unsigned caqm_info;		/* its 16 info bits (cc_type, is_last_hop, EN, C, I, Hint) */
	/* native UB: LPH, NTH */
	unsigned lph_config, vl, rt;
	unsigned cci, perm;
	uint32_t pid;
	/* IP */
	bool v6;
	size_t ip_len;			/* from the IP header: IP header .. ICRC */
	size_t udp_off;			/* from the frame start */
	unsigned ttl, ecn, dscp;
	bool csum_ok;			/* IPv4 header checksum; true for IPv6 */
	bool martian_src;		/* multicast, limited broadcast, loopback, unspecified */
	bool martian_maybe;		/* 0/8, 240/4: RFC 1812 names them, the issue does not */
	bool icrc_ok;
	unsigned tp_opcode;
};

/* A frame received on the UB side (Eth type `ub_ethertype` | LPH | NTH | IP ...). */
void ref_decode_native(const uint8_t *f, size_t len, uint16_t ub_ethertype, struct ref_frame *r);
/* A frame received on the IP side (Eth | [802.1Q] | IP | UDP 4792 | TPH ...). */
void ref_decode_uboe(const uint8_t *f, size_t len, struct ref_frame *r);
/* The same where a CAQM tag of EtherType `caqm_ethertype` may follow the
 * Ethernet/802.1Q header (openEuler's struct caqm_hdr: info(16) | EtherType). */
void ref_decode_uboe_caqm(const uint8_t *f, size_t len, uint16_t caqm_ethertype, struct ref_frame *r);

/* RFC 1071 sum over an IPv4 header: true when it checks. */
bool ref_ipv4_csum_ok(const uint8_t *ip, size_t hlen);
/* Write a correct IPv4 header checksum. */
void ref_ipv4_csum_fix(uint8_t *ip, size_t hlen);
/* ICRC (docs/WIRE.md §2) of an IP packet of `ip_len` bytes whose last 4 are the ICRC. */
uint32_t ref_icrc(const uint8_t *ip, size_t ip_len);
bool ref_icrc_ok(const uint8_t *ip, size_t ip_len);
void ref_icrc_fix(uint8_t *ip, size_t ip_len);

static inline unsigned ref_get16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }
static inline void ref_put16(uint8_t *p, unsigned v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }

#endif
