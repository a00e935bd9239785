/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The WPS option (draft-wps-ipv6-option, docs/WIRE.md §6): wire constants and the
 * 16-byte Destination Options header that carries it. Usable from BPF and
 * user code alike (no libc). Only the wire layout lives here; map types of
 * the ingress and egress roles live in their own headers.
 */
#ifndef WPS_OPT_H
#define WPS_OPT_H

#include <linux/types.h>

#define WPS_OPT_TYPE		0x81	/* act 10 (discard + ICMP), chg 0, type 1 */
#define WPS_OPT_DATA_LEN	12
#define WPS_EXTHDR_LEN		16	/* NextHdr, HdrExtLen = 1, OptType, OptDataLen, 12 data bytes */
#define WPS_EXTHDR_HDRLEN	1	/* HdrExtLen: (16 / 8) - 1 */
#define WPS_OVERHEAD		56	/* outer IPv6 (40) + options header (16) */

/* Option data byte 0. Reserved bits are sent 0 and ignored on receipt. */
#define WPS_FLAG_S		0x80	/* first packet of a group */
#define WPS_FLAG_E		0x40	/* last packet of a group */
#define WPS_FLAG_R		0x20	/* egress must restore inter-group order */

#define WPS_IPPROTO_HOPOPTS	0
#define WPS_IPPROTO_DSTOPTS	60
#define WPS_IPPROTO_IPIP	4	/* inner IPv4 */
#define WPS_IPPROTO_IPV6	41	/* inner IPv6 */

/* The option itself: type, length and the 12 data bytes (all fields big-endian). */
struct wps_opt {
	__u8 type;
	__u8 len;
	__u8 flags;		/* S E R Rsvd(5) */
	__u8 reserved;
	__be16 flow_id;
	__be16 ingress_node;
	__be16 egress_node;
	__be16 group_id;	/* serial arithmetic, SERIAL_BITS 16 */
	__u8 ingress_port;
	__u8 egress_port;
} __attribute__((packed));

/* The options header as the ingress writes it: the WPS option alone, no padding. */
struct wps_exthdr {
	__u8 nexthdr;
	__u8 hdrlen;		/* 8-octet units, not counting the first 8 */
	struct wps_opt opt;
} __attribute__((packed));

_Static_assert(sizeof(struct wps_opt) == 2 + WPS_OPT_DATA_LEN, "WPS option is 14 bytes");
_Static_assert(sizeof(struct wps_exthdr) == WPS_EXTHDR_LEN, "WPS options header is 16 bytes");

/* Serial number arithmetic (RFC 1982, SERIAL_BITS 16): signed distance from a to b. */
static inline __s16 wps_gid_diff(__u16 b, __u16 a)
{
	return (__s16)(__u16)(b - a);
}

#endif
