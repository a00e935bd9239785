/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * UBoE endpoint XDP program (bpf/ub_endpoint.bpf.c): counters shared with the
 * endpoint's user space and the tests. One X-macro so names cannot drift.
 * rx_uboe counts valid UBoE, rx_ub valid native UB (--native), rx_ctp native
 * CTP frames (UDP to UB_CTP_UDP_PORT, checked in user space), to_xsk what
 * was steered to an AF_XDP socket, pass_* what went to the kernel, drop_*
 * what was dropped, per reason.
 */
#ifndef UB_ENDPOINT_MAPS_H
#define UB_ENDPOINT_MAPS_H

#define UB_EP_MAX_QUEUES	64

#define UB_EP_COUNTERS(X)						\
	X(RX_UBOE,		"rx_uboe")				\
	X(TO_XSK,		"to_xsk")				\
	X(PASS_NOT_IP,		"pass_not_ip")				\
	X(PASS_NOT_UBOE,	"pass_not_uboe")			\
	X(DROP_NO_SOCKET,	"drop_no_socket")			\
	X(DROP_TRUNCATED,	"drop_truncated")			\
	X(DROP_IP_LENGTH,	"drop_ip_bad_length")			\
	X(DROP_IPV4_OPTIONS,	"drop_ipv4_options")			\
	X(DROP_IPV4_FRAGMENT,	"drop_ipv4_fragment")			\
	X(DROP_TP_OPCODE,	"drop_tp_opcode_invalid")		\
	X(DROP_OTHER,		"drop_other")				\
	X(RX_UB,		"rx_ub")				\
	X(PASS_NOT_UB,		"pass_not_ub")				\
	X(DROP_LPH_CONFIG,	"drop_lph_config")			\
	X(DROP_IP_VERSION,	"drop_ip_version")			\
	X(DROP_NOT_UDP_4792,	"drop_not_udp_4792")			\
	X(DROP_PARTITION_ZERO,	"drop_partition_zero")	\
	X(RX_CTP,		"rx_ctp")

#define UB_EP_CNT_ENUM(id, name) UB_EP_CNT_##id,
enum ub_ep_counter {
	UB_EP_COUNTERS(UB_EP_CNT_ENUM)
	UB_EP_CNT__MAX
};
#undef UB_EP_CNT_ENUM

#endif
