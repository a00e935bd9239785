// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UBoE endpoint (draft-li-uboe-00 Fig. 1), the XDP half of a software UBoE
 * NIC: valid UBoE (UDP to port 4792) goes to the AF_XDP socket of the rx
 * queue it arrived on; malformed UBoE is counted and dropped; everything else
 * (ARP, ND, ICMP, other UDP/TCP) passes to the kernel, which keeps answering
 * for the host's addresses and resolving neighbours for the endpoint.
 *
 * Native mode (ub_ethertype set before load, ubperf --native): the device is
 * an emulated UB port (docs/WIRE.md §5) and the frames of that EtherType (LPH |
 * NTH | IP | UDP 4792 | ..., and CTP: UDP to UB_CTP_UDP_PORT) are the ones
 * steered; everything else, UBoE
 * included, passes to the kernel.
 *
 * The validation is the UB2E switch's (ub2e_parse_l3), so an endpoint and a
 * switch agree on what UB and UBoE are. The ICRC is user space's job.
 */
#include "ub2e_common.bpf.h"
#include "ub_endpoint_maps.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u16 ub_ethertype;	/* native mode: this EtherType; 0: UBoE */

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, UB_EP_MAX_QUEUES);
	__type(key, __u32);		/* rx queue index */
	__type(value, __u32);		/* AF_XDP socket fd (user space writes it) */
} ub_ep_xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UB_EP_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} ub_ep_stats SEC(".maps");

static __always_inline void ep_count(__u32 id)
{
	__u64 *v = bpf_map_lookup_elem(&ub_ep_stats, &id);

	if (v)
		(*v)++;
}

/* The switch's drop reasons that ub2e_parse_l3 can give the endpoint. */
static __always_inline __u32 ep_drop_reason(int ub2e_reason)
{
	switch (ub2e_reason) {
	case UB2E_CNT_DROP_IP_VERSION:		return UB_EP_CNT_DROP_IP_VERSION;
	case UB2E_CNT_DROP_NOT_UBOE:		return UB_EP_CNT_DROP_NOT_UDP_4792;
	case UB2E_CNT_DROP_TRUNCATED:		return UB_EP_CNT_DROP_TRUNCATED;
	case UB2E_CNT_DROP_IP_LENGTH:		return UB_EP_CNT_DROP_IP_LENGTH;
	case UB2E_CNT_DROP_IPV4_OPTIONS:	return UB_EP_CNT_DROP_IPV4_OPTIONS;
	case UB2E_CNT_DROP_IPV4_FRAGMENT:	return UB_EP_CNT_DROP_IPV4_FRAGMENT;
	case UB2E_CNT_DROP_TP_OPCODE:		return UB_EP_CNT_DROP_TP_OPCODE;
	default:				return UB_EP_CNT_DROP_OTHER;
	}
}

SEC("xdp")
int ub_endpoint(struct xdp_md *ctx)
{
	struct hdr_cursor c = { (void *)(long)ctx->data, (void *)(long)ctx->data_end };
	bool native = ub_ethertype != 0, v6;
	struct ethhdr *eth;
	struct ub_lph *lph;
	struct ub_nth *nth;
	struct ub_l3 l3 = {};
	int proto, rc;
	__u16 vid;

	proto = parse_ethhdr(&c, &eth);
	if (native) {
		if (proto != bpf_htons(ub_ethertype)) {
			ep_count(UB_EP_CNT_PASS_NOT_UB);
			return XDP_PASS;
		}
		/* From the EtherType on it claims to be UB: every defect is a drop. */
		lph = cursor_pull(&c, sizeof(*lph));
		nth = cursor_pull(&c, sizeof(*nth));
		if (!lph || !nth) {
			ep_count(UB_EP_CNT_DROP_TRUNCATED);
			return XDP_DROP;
		}
		if (ub_lph_config(lph) != UB_LPH_CONFIG_IPV4 && ub_lph_config(lph) != UB_LPH_CONFIG_IPV6) {
			ep_count(UB_EP_CNT_DROP_LPH_CONFIG);
			return XDP_DROP;
		}
		if (ub_nth_pid(nth) == UB_PID_INVALID) {
			ep_count(UB_EP_CNT_DROP_PARTITION_ZERO);
			return XDP_DROP;
		}
		v6 = ub_lph_config(lph) == UB_LPH_CONFIG_IPV6;
	} else {
		if (proto == bpf_htons(ETH_P_8021Q))
			proto = parse_vlan(&c, &vid);
		if (proto != bpf_htons(ETH_P_IP) && proto != bpf_htons(ETH_P_IPV6)) {
			ep_count(UB_EP_CNT_PASS_NOT_IP);
			return XDP_PASS;
		}
		v6 = proto == bpf_htons(ETH_P_IPV6);
	}
	rc = ub2e_parse_l3(&c, v6, native, &l3);
	/* CTP (headers/ub_wire.h) has a UDP port of its own, which the switch's
	 * parser calls not UBoE; on a UB port it is the endpoint's: its 1-byte
	 * CTPH and the rest are checked in user space with the ICRC. */
	if (native && rc == UB2E_CNT_DROP_NOT_UBOE && l3.udph &&
	    l3.udph->dest == bpf_htons(UB_CTP_UDP_PORT)) {
		ep_count(UB_EP_CNT_RX_CTP);
		goto steer;
	}
	if (rc == UB2E_NOT_UBOE) {
		ep_count(UB_EP_CNT_PASS_NOT_UBOE);
		return XDP_PASS;
	}
	if (rc) {
		ep_count(ep_drop_reason(rc));
		return XDP_DROP;
	}
	ep_count(native ? UB_EP_CNT_RX_UB : UB_EP_CNT_RX_UBOE);
steer:
	/* No socket on this queue: the endpoint is not listening there, and a
	 * kernel UDP socket must not see UB traffic half the time. */
	rc = bpf_redirect_map(&ub_ep_xsks, ctx->rx_queue_index, XDP_DROP);
	ep_count(rc == XDP_REDIRECT ? UB_EP_CNT_TO_XSK : UB_EP_CNT_DROP_NO_SOCKET);
	return rc;
}
