/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Wrap a TP packet (TPH .. payload) already sitting in a frame into UBoE
 * (docs/WIRE.md §1), in place: Ethernet, IPv4 (DF) or IPv6, UDP to 4792 with the
 * flow's source port as entropy, and the ICRC after it. Or, for a flow with a
 * native EtherType, into a native UB frame on an emulated UB port (§5):
 * the same IP packet behind Eth(EtherType) | LPH | NTH. The endpoint's
 * transport core writes its packet at ep_uboe_hdr_len() into the frame, so
 * the payload is never copied. Pure logic, unit-tested against the packet
 * library's builder.
 */
#ifndef UBXDP_UBOE_WRAP_H
#define UBXDP_UBOE_WRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct uboe_flow {
	uint8_t ip_ver;		/* 4 or 6 */
	uint8_t src_mac[6], dst_mac[6];
	uint8_t src_ip[16], dst_ip[16];
	uint16_t sport;		/* entropy: ECMP/WPS hash on it */
	uint8_t dscp, ecn;	/* ecn: ECN_ECT0 for an ECN-capable sender */
	uint8_t ttl;		/* 0: UBOE_DEFAULT_TTL */
	uint32_t flow_label;	/* IPv6, 20 bits */
	/* Native UB: non-zero EtherType (UB_ETH_P_NATIVE), then LPH and NTH. */
	uint16_t ub_ethertype;
	uint8_t vl, rt;		/* LPH: 4 bits, UB_RT_* */
	uint16_t cci;		/* NTH */
	uint8_t perm;		/* UB_PERM_* */
	uint32_t pid;		/* Partition ID, 24 bits */
	uint8_t lbf;		/* LPH LBF (native; headers/ub_wire.h) */
	bool ctp;		/* the TP packet is CTP: UDP to UB_CTP_UDP_PORT (native only) */
};

#define UBOE_WRAP_HDR_MAX	(14 + 10 + 40 + 8)

/* Ethernet + IP + UDP bytes for this IP version (42 or 62). */
size_t uboe_wrap_hdr_len(uint8_t ip_ver);
/* What uboe_wrap() puts before the TP packet of f: the above, + LPH and NTH when native. */
size_t uboe_wrap_flow_hdr_len(const struct uboe_flow *f);

/*
 * frame[0 .. hdr) gets the headers (hdr from uboe_wrap_flow_hdr_len), frame[hdr .. hdr + tp_len) must hold the
 * TP packet, and the ICRC lands right after it. Returns the frame length, or
 * 0 when the IP packet would exceed 65535 bytes, ip_ver is not 4 or 6, or a
 * CTP packet is asked for in UBoE (which never carries CTP).
 */
size_t uboe_wrap(uint8_t *frame, size_t tp_len, const struct uboe_flow *f);

/* A UDP source port in 0xC000..0xFFFF from channel identifiers. */
uint16_t uboe_entropy_port(uint32_t a, uint32_t b);

#endif
