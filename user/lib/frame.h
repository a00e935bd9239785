/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Build and parse whole UB frames: UBoE (docs/WIRE.md §1) and native UB on an
 * emulated UB port (§5). Pure logic on caller buffers, no I/O and no
 * allocation, so tests and fuzzers can drive it directly.
 *
 *   UBoE:   Eth | [802.1Q] | IPv4/IPv6 | UDP 4792 | TPH | [ETPHs] | [TAH [MAETAH] [IMMETAH] [TVETAH]] | payload | ICRC
 *   native: Eth(0x88B5) | LPH | NTH | IPv4/IPv6 | UDP 4792 | ... the same ... | ICRC
 */
#ifndef UBXDP_UBPKT_H
#define UBXDP_UBPKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/icrc.h"
#include "lib/ubhdr.h"

#define UB_ETH_ALEN		6
#define UB_VLAN_NONE		(-1)

/*
 * Everything one frame is made of. Start from ub_pkt_spec_init(), which sets
 * the defaults a real sender would use, then change what the test is about.
 * Which optional headers appear is said explicitly (has_*), not derived from
 * the opcodes, so that tests can build inconsistent frames too.
 */
struct ub_pkt_spec {
	/* L2 */
	uint8_t dst_mac[UB_ETH_ALEN];
	uint8_t src_mac[UB_ETH_ALEN];
	int vlan;			/* UBoE only: VID 0..4095, or UB_VLAN_NONE */
	uint8_t vlan_pcp;		/* 3 bits */
	bool vlan_dei;

	/* native UB: EtherType, LPH, NTH */
	uint16_t ub_ethertype;		/* default UB_ETH_P_NATIVE */
	uint8_t vl;			/* 4 bits */
	uint8_t rt;			/* 2 bits, UB_RT_*; default UB_RT_FLOW_SHORTEST */
	uint16_t cci;			/* default FECN mode, not marked (0x4000) */
	uint8_t perm;			/* UB_PERM_* */
	uint32_t pid;			/* 24 bits, default UB_PID_DEFAULT */

	/* IP */
	uint8_t ip_ver;			/* 4 or 6 */
	uint8_t src_ip[16];		/* IPv4: the first 4 bytes */
	uint8_t dst_ip[16];
	uint8_t dscp;			/* 6 bits */
	uint8_t ecn;			/* 2 bits, ECN_* */
	uint8_t ttl;			/* TTL or hop limit, default UBOE_DEFAULT_TTL */
	uint16_t ip_id;			/* IPv4 only */
	uint32_t flow_label;		/* IPv6 only, 20 bits */

	/* UDP (destination port is always UBOE_UDP_PORT, checksum 0) */
	uint16_t sport;

	/* UB transport and transaction headers, in wire order */
	struct ub_tph_fields tph;
	bool has_cetph;
	struct ub_cetph_fields cetph;
	bool has_saetph;
	struct ub_saetph_fields saetph;
	bool has_cnpetph;
	struct ub_cnpetph_fields cnpetph;
	bool has_tah;
	struct ub_tah_fields tah;
	bool has_maetah;
	struct ub_maetah_fields maetah;
	bool has_immetah;
	struct ub_immetah_fields immetah;
	bool has_tvetah;		/* set tah.tv_en with it */
	uint32_t tvetah;		/* its token value */

	const void *payload;		/* NULL: payload_len zero bytes */
	size_t payload_len;
};

/* Defaults: IPv4, TTL 64, RTP data opcode with a Send TAH, CCI 0x4000,
 * partition 1, RT per-flow/shortest, no VLAN, sport 0xC000. */
void ub_pkt_spec_init(struct ub_pkt_spec *s);

/*
 * Write the frame into buf. Returns its length, or 0 when it does not fit in
 * `cap`, when ip_ver is neither 4 nor 6, or when the IP packet would exceed
 * 65535 bytes. The ICRC and the IPv4 header checksum are computed.
 */
size_t ub_build_uboe(const struct ub_pkt_spec *s, void *buf, size_t cap);
size_t ub_build_native(const struct ub_pkt_spec *s, void *buf, size_t cap);

/* Bytes the IP packet (IP header .. ICRC) of `s` takes. */
size_t ub_pkt_ip_len(const struct ub_pkt_spec *s);

/* RFC 791 header checksum over `len` bytes, with the checksum field as it is
 * (so 0 over a correct header); for tests that edit a built header. */
uint16_t ub_ipv4_csum(const void *hdr, size_t len);

enum ub_frame_kind {
	UB_KIND_NONE = 0,
	UB_KIND_NATIVE,
	UB_KIND_UBOE,
};

/*
 * Parser verdicts. They follow the UB2E switch (bpf/ub2e_common.bpf.h): a
 * native frame claims to be UB from its EtherType on, so every later defect
 * is an error; an Ethernet/IP frame is UBoE only once it is UDP to port 4792,
 * and before that a defect just means UB_PARSE_NOT_UB.
 */
#define UB_PARSE_ERRORS(X)						\
	X(OK,		"ok",		"valid UB frame")		\
	X(NOT_UB,	"not_ub",	"not a UB or UBoE frame")	\
	X(TRUNCATED,	"truncated",	"frame ends inside a header or before the IP length") \
	X(LPH_CONFIG,	"lph_config",	"LPH Config is neither 3 (IPv4) nor 4 (IPv6)") \
	X(IP_VERSION,	"ip_version",	"IP version does not match the LPH Config") \
	X(IPV4_OPTIONS,	"ipv4_options",	"IPv4 header with options (IHL != 5)") \
	X(IPV4_FRAGMENT, "ipv4_fragment", "IPv4 fragment")		\
	X(NOT_UDP_4792,	"not_udp_4792",	"native UB whose IP payload is not UDP to port 4792") \
	X(IP_LENGTH,	"ip_length",	"IP and UDP lengths disagree or leave no room for TPH and ICRC") \
	X(TP_OPCODE,	"tp_opcode",	"TP opcode reserved or not carried in UBoE") \
	X(SAETPH_SIZE,	"saetph_size",	"SAETPH bitmap size code above 4") \
	X(HDR_OVERRUN,	"hdr_overrun",	"extension or transaction headers run into the ICRC") \
	X(PARTITION_ZERO, "partition_zero", "native UB with Partition ID 0")

#define UB_PARSE_ENUM(id, name, text) UB_PARSE_##id,
enum ub_parse_err {
	UB_PARSE_ERRORS(UB_PARSE_ENUM)
	UB_PARSE__MAX
};
#undef UB_PARSE_ENUM

const char *ub_parse_strerror(enum ub_parse_err e);	/* sentence */
const char *ub_parse_errname(enum ub_parse_err e);	/* short key, e.g. "ip_length" */

/*
 * What the parser found. Header pointers point into the parsed buffer and are
 * NULL when the header is absent or was not reached; decoded fields are valid
 * as far as parsing got (kind says which family the frame claimed to be).
 */
struct ub_view {
	enum ub_frame_kind kind;
	const uint8_t *frame;
	size_t frame_len;

	/* L2 */
	const uint8_t *dst_mac;
	const uint8_t *src_mac;
	uint16_t ethertype;		/* outer EtherType */
	int vlan;			/* VID or UB_VLAN_NONE */
	uint8_t vlan_pcp;

	/* native */
	const struct ub_lph *lph;
	uint8_t lbf;			/* LPH LBF (headers/ub_wire.h) */
	const struct ub_nth *nth;
	uint8_t lph_config, vl, rt;
	uint16_t cci;
	uint8_t perm;
	uint32_t pid;

	/* IP, UDP */
	const uint8_t *ip;
	const uint8_t *udp;
	uint8_t ip_ver;
	uint8_t dscp, ecn, ttl;
	uint16_t ip_id;
	uint32_t flow_label;
	bool ip_csum_ok;		/* IPv4 header checksum; true for IPv6 */
	uint8_t src_ip[16], dst_ip[16];
	size_t ip_len;			/* IP header .. ICRC, from the IP header */
	uint16_t sport, dport, udp_len, udp_csum;

	/* CTP (ub_parse_frame_ctp only): CTPH instead of the TPH */
	bool ctp;
	const uint8_t *ctph;
	uint8_t ctp_opcode, ctp_nlp;

	/* UB */
	const struct ub_tph *tph;
	struct ub_tph_fields tp;
	bool nak;			/* TPACK with RSPST NAK */
	const struct ub_cetph *cetph;
	struct ub_cetph_fields ce;
	const struct ub_saetph *saetph;
	struct ub_saetph_fields sa;
	const struct ub_cnpetph *cnpetph;
	struct ub_cnpetph_fields cnp;
	const struct ub_tah *tah;
	struct ub_tah_fields ta;
	const struct ub_maetah *maetah;
	struct ub_maetah_fields mae;
	const struct ub_immetah *immetah;	/* Send/Write with immediate */
	struct ub_immetah_fields imm;
	const struct ub_tvetah *tvetah;		/* TAH TV_EN (requests) */
	uint32_t token_value;

	const uint8_t *payload;
	size_t payload_len;
	uint32_t icrc;			/* as stored */
	bool icrc_ok;
};

/* Offset of a header pointer of `v` in the frame (or -1 when absent). */
static inline long ub_view_off(const struct ub_view *v, const void *hdr)
{
	return hdr ? (long)((const uint8_t *)hdr - v->frame) : -1;
}

/*
 * Parse one Ethernet frame. `ub_ethertype` is the native UB EtherType (0 =
 * UB_ETH_P_NATIVE); native frames are recognised untagged only, UBoE frames
 * with at most one 802.1Q tag. Trailing bytes after the IP packet (Ethernet
 * padding) are allowed. A bad ICRC is not an error: see v->icrc_ok.
 */
enum ub_parse_err ub_parse_frame(const void *buf, size_t len, uint16_t ub_ethertype,
				 struct ub_view *v);

/*
 * The same, on a native UB port that may also carry CTP (headers/ub_wire.h):
 * a native frame with UDP destination port UB_CTP_UDP_PORT, which
 * ub_parse_frame() reports as UB_PARSE_NOT_UDP_4792 (as the UB2E switch
 * drops it: UBoE never carries CTP), is parsed on: CTPH, TAH, [MAETAH],
 * payload, ICRC; v->ctp and v->ctph set, v->tph NULL. A CTP CNP (CTPH
 * opcode UB_CTP_OP_CNP, NLP UB_NLP_NONE) is CTPH, CNPETPH (v->cnpetph,
 * v->cnp), no TAH. A reserved CTPH opcode or another NLP is
 * UB_PARSE_TP_OPCODE. Other frames: as ub_parse_frame().
 */
enum ub_parse_err ub_parse_frame_ctp(const void *buf, size_t len, uint16_t ub_ethertype,
				     struct ub_view *v);

/* The TP packet of a parsed frame: TPH (or CTPH) .. the end of the payload. */
static inline const uint8_t *ub_view_tp(const struct ub_view *v, size_t *len)
{
	const uint8_t *tp = v->ctp ? v->ctph : (const uint8_t *)v->tph;

	*len = (size_t)(v->payload + v->payload_len - tp);
	return tp;
}

#endif
