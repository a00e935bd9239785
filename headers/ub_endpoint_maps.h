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

#include <linux/types.h>

#define UB_EP_MAX_QUEUES	64

/*
 * Workers (ep.h, ub_workers set before load; shared mode: below): N
 * threads, each with its own transport core and a socket on every rx queue, at
 * ub_ep_xsks[worker * UB_EP_MAX_QUEUES + queue]. A frame goes to the worker
 * owning its destination, on the queue it came in on:
 *   RTP (data, TPACK, TPSACK, CNP)  DstTPN % ub_workers
 *   a setup hello (UTP)              the TPN it names (0 before it knows one)
 *   other UTP                        (IP source, IniRCID) (ub_ep_rcid: the worker)
 *   CTP, and what no entry names     worker 0
 */
#define UB_EP_MAX_WORKERS	16

/*
 * Shared mode (ub_steer, liburma's processes on one device,
 * docs/URMA.md "Processes and threads"): every process holds a slot
 * (1 .. UB_EP_SLOTS - 1) and allocates its TPNs (RTP) and RCIDs (UTP, CTP)
 * in [slot << UB_EP_TPN_SHIFT, (slot + 1) << UB_EP_TPN_SHIFT): 20-bit RCIDs
 * leave 63 slots of 16384 channels. The program finds a frame's slot by
 *   RTP (data, TPACK, TPSACK, CNP)  DstTPN >> UB_EP_TPN_SHIFT
 *   a URMA setup hello (UTP)         its target UASID (ub_ep_uasid)
 *   other UTP, CTP requests          (IP source, IniRCID) (ub_ep_rcid)
 *   CTP answers                      IniRCID >> UB_EP_TPN_SHIFT
 *   CTP CNPs                         the slot holding the device's queues
 * and the slot's mode (ub_ep_slot) says where it goes: DIRECT, the AF_XDP
 * sockets on the device's own rx queues (ub_ep_xsks; with workers, the
 * mode's value is DIRECT | workers << UB_EP_WORKER_SHIFT, and a frame goes
 * to worker (DstTPN, the TPN a hello names, or the worker its RCID entry
 * names) % workers, at worker * UB_EP_MAX_QUEUES + queue; an RCID entry is
 * slot | worker << UB_EP_WORKER_SHIFT); VETH, the slot's
 * veth (ub_ep_devs), whose other end in the process's own network
 * namespace carries its socket; FREE, nobody: dropped and counted
 * (drop_no_owner). ub_ep_slot[0] names the DIRECT slot (0: none). Every
 * process has the veth: an instance of the program loaded with ub_loop and
 * these maps runs on its near end, for frames the process sends to a jetty
 * of the device itself (loopback); it sends a DIRECT slot's to its veth as
 * well (only the device's own frames can reach the sockets on its queues).
 */
#define UB_EP_SLOTS		64
#define UB_EP_TPN_SHIFT		14
#define UB_EP_SLOT_FREE		0
#define UB_EP_SLOT_DIRECT	1
#define UB_EP_SLOT_VETH		2
#define UB_EP_UASIDS		1024
#define UB_EP_RCIDS		16384
#define UB_EP_SLOT_MASK		0xff
#define UB_EP_WORKER_SHIFT	8
/* ub_steer's value in a program that reads the worker level above; one
 * before it (1) takes DIRECT | workers for no mode and drops the frames. */
#define UB_EP_STEER_WORKERS	2
/* A process's veth MTU at most: one UMEM frame (a page) per frame, as its
 * AF_PACKET sends and its veth's non-frags XDP take them. A larger frame for
 * a VETH slot (a jumbo frame the holder of the queues could take) is dropped
 * and counted (drop_veth_mtu) rather than left to the kernel's redirect,
 * which drops it uncounted here. */
#define UB_EP_VETH_MTU_MAX	3500

/* (IP source, IniRCID): IPv4 in the first 4 bytes, the rest zero. */
struct ub_ep_rcid_key {
	__u8 ip[16];
	__u32 rcid;
};

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
	X(RX_CTP,		"rx_ctp")				\
	X(TO_VETH,		"to_veth")				\
	X(DROP_NO_OWNER,	"drop_no_owner")				\
	X(DROP_VETH_MTU,	"drop_veth_mtu")

#define UB_EP_CNT_ENUM(id, name) UB_EP_CNT_##id,
enum ub_ep_counter {
	UB_EP_COUNTERS(UB_EP_CNT_ENUM)
	UB_EP_CNT__MAX
};
#undef UB_EP_CNT_ENUM

#endif
