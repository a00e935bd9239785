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
 * The validation is the UB2E switch's (ub2e_parse_l3, lib/ub_parse.h), so an
 * endpoint and a switch agree on what UB and UBoE are. The ICRC is user
 * space's job.
 *
 * Shared mode (ub_steer set before load; liburma): several processes use
 * the device, each with a slot of its own, and each valid frame goes to
 * the process its destination belongs to (headers/ub_endpoint_maps.h): the
 * AF_XDP sockets on the device's queues (the process holding them), or a
 * devmap redirect into another process's veth. A frame for no live
 * process is dropped and counted (drop_no_owner).
 */
#include "lib/parse.h"
#include "lib/ub_parse.h"
#include "ub_endpoint_maps.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u16 ub_ethertype;	/* native mode: this EtherType; 0: UBoE */
const volatile __u8 ub_steer;		/* shared mode: steer by destination (UB_EP_STEER_WORKERS) */
const volatile __u8 ub_loop;		/* shared mode, the instance on a process's veth */
const volatile __u8 ub_workers;		/* > 1: steer to workers (ub_endpoint_maps.h) */

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, UB_EP_MAX_QUEUES * UB_EP_MAX_WORKERS);
	__type(key, __u32);		/* worker * UB_EP_MAX_QUEUES + rx queue index */
	__type(value, __u32);		/* AF_XDP socket fd (user space writes it) */
} ub_ep_xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UB_EP_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} ub_ep_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UB_EP_SLOTS);
	__type(key, __u32);		/* slot; 0: the DIRECT slot's number */
	__type(value, __u32);		/* UB_EP_SLOT_* */
} ub_ep_slot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, UB_EP_SLOTS);
	__type(key, __u32);		/* slot */
	__type(value, __u32);		/* ifindex of the slot's veth */
} ub_ep_devs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UB_EP_UASIDS);
	__type(key, __u32);		/* UASID */
	__type(value, __u32);		/* slot */
} ub_ep_uasid SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UB_EP_RCIDS);
	__type(key, struct ub_ep_rcid_key);
	__type(value, __u32);		/* slot (| worker << 8); with workers alone, the worker */
} ub_ep_rcid SEC(".maps");

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

/* What a URMA setup hello (user/urma/setup.c) carries up to its target's
 * UASID: TPH, TAH, the hello body ("UBH2" ..), the library's message
 * ("URMA" .., the target jetty's UASID at byte 60). */
struct ep_hello_peek {
	struct ub_tph tph;
	struct ub_tah tah;
	__u8 magic[4];
	__u8 body[16];
	__u8 app_magic[4];
	__u8 app[56];
	__be32 dst_uasid;
} __attribute__((packed));

static __always_inline __u32 be24(const __u8 *b)
{
	return (__u32)b[0] << 16 | (__u32)b[1] << 8 | b[2];
}

static __always_inline __u32 rcid_slot(const struct ub_l3 *l3, __u32 rcid)
{
	struct ub_ep_rcid_key k = { .rcid = rcid };
	__u32 *slot;

	/* From the header: l3->saddr is not set for CTP (not UDP 4792). */
	if (l3->v6)
		__builtin_memcpy(k.ip, &L3_IP6(l3)->saddr, 16);
	else
		__builtin_memcpy(k.ip, &L3_IP4(l3)->saddr, 4);
	slot = bpf_map_lookup_elem(&ub_ep_rcid, &k);
	return slot ? *slot : 0;
}

/* Shared mode: an RCID entry is slot | worker << UB_EP_WORKER_SHIFT. */
static __always_inline __u32 rcid_dest(const struct ub_l3 *l3, __u32 rcid, __u32 *wkey)
{
	__u32 v = rcid_slot(l3, rcid);

	*wkey = v >> UB_EP_WORKER_SHIFT;
	return v & UB_EP_SLOT_MASK;
}

/*
 * The slot a valid UBoE or UB frame (TPH at l3->tph) is for; 0: none. *wkey:
 * what picks the slot's worker (wkey % its workers), as worker_of does
 * without slots: the DstTPN, the TPN a hello names, an RCID entry's worker.
 */
static __always_inline __u32 tp_slot(const struct ub_l3 *l3, void *end, __u32 *wkey)
{
	const struct ub_tph *tph = l3->tph;
	const struct ep_hello_peek *h = (const void *)tph;
	const struct ub_tah *tah = (const void *)(tph + 1);
	__u32 *slot;

	*wkey = 0;
	if (ub_tph_opcode(tph) != UB_TP_UTP_DATA) {
		*wkey = be24(tph->dst_tpn);
		return *wkey >> UB_EP_TPN_SHIFT;
	}
	if ((void *)(tah + 1) > end)
		return 0;
	if ((void *)(h + 1) <= end && h->magic[0] == 'U' && h->magic[1] == 'B' &&
	    h->magic[2] == 'H' && h->magic[3] == '2') {
		__u32 uasid;

		/* An answer names the TPN of the asker's channel: its worker. A
		 * first hello names none (worker 0, which hands it to the
		 * worker of its target jetty: user/urma/setup.c). */
		*wkey = be24(&h->body[13]);

		if (h->app_magic[0] != 'U' || h->app_magic[1] != 'R' || h->app_magic[2] != 'M' ||
		    h->app_magic[3] != 'A')
			return 0;
		uasid = bpf_ntohl(h->dst_uasid);
		slot = bpf_map_lookup_elem(&ub_ep_uasid, &uasid);
		if (slot)
			return *slot;
		/* A UASID no process here has (any more): the holder of the
		 * device's queues answers that it is stale (ESTALE), so the
		 * sender learns it at once. */
		uasid = 0;
		slot = bpf_map_lookup_elem(&ub_ep_slot, &uasid);
		return slot ? *slot : 0;
	}
	return rcid_dest(l3, ub_tah_rcid(tah), wkey);
}

/* A native CTP frame (CTPH right after UDP): its slot; 0: none. */
static __always_inline __u32 ctp_slot(const struct ub_l3 *l3, void *end)
{
	const __u8 *ctph = (const void *)(l3->udph + 1);
	const struct ub_tah *tah = (const void *)(ctph + 1);
	__u32 zero = 0, *slot;

	if ((void *)(ctph + 1) > end)
		return 0;
	if (ub_ctph_opcode(*ctph) != UB_CTP_OP_TA) {
		/* A CNP concerns every channel to its source: the holder of
		 * the device's queues takes it. */
		slot = bpf_map_lookup_elem(&ub_ep_slot, &zero);
		return slot ? *slot : 0;
	}
	if ((void *)(tah + 1) > end)
		return 0;
	if (ub_ta_is_answer(tah->opcode))
		return ub_tah_rcid(tah) >> UB_EP_TPN_SHIFT;
	return rcid_slot(l3, ub_tah_rcid(tah)) & UB_EP_SLOT_MASK;
}

/* Workers: the one a valid UBoE or UB frame (TPH at l3->tph) is for. */
static __always_inline __u32 worker_of(const struct ub_l3 *l3, void *end)
{
	const struct ub_tph *tph = l3->tph;
	const struct ep_hello_peek *h = (const void *)tph;
	const struct ub_tah *tah = (const void *)(tph + 1);

	if (ub_workers <= 1)
		return 0;
	if (ub_tph_opcode(tph) != UB_TP_UTP_DATA)
		return be24(tph->dst_tpn) % ub_workers;
	if ((void *)(tah + 1) > end)
		return 0;
	/* A hello's body names the TPN it is for at byte 12 (tp_hello_build_app).
	 * Bounded by the body alone: a plain hello (ubperf's, 20 bytes after the
	 * TAH) has no library part after it. */
	if ((void *)(h->body + sizeof(h->body)) <= end && h->magic[0] == 'U' && h->magic[1] == 'B' &&
	    h->magic[2] == 'H' && h->magic[3] == '2')
		return be24(&h->body[13]) % ub_workers;
	return rcid_slot(l3, ub_tah_rcid(tah)) % ub_workers;
}

/* wkey: see tp_slot (0: worker 0). */
static __always_inline int to_slot(struct xdp_md *ctx, __u32 slot, __u32 wkey)
{
	__u32 *mode, m, nw, q;
	int rc;

	if (slot == 0 || slot >= UB_EP_SLOTS)
		goto none;
	mode = bpf_map_lookup_elem(&ub_ep_slot, &slot);
	if (!mode)
		goto none;
	m = *mode & UB_EP_SLOT_MASK;
	/* From the device: its queues' holder reads them. On a process's own
	 * veth (the instance there, sharing these maps: a frame to a jetty of
	 * this very device, loopback) the AF_XDP sockets are the device's
	 * queues', not this device's, so the queues' holder takes it through
	 * its veth too. */
	if (m == UB_EP_SLOT_DIRECT && !ub_loop) {
		/* The holder's workers: worker w's socket on queue q at w * 64 + q. */
		nw = *mode >> UB_EP_WORKER_SHIFT;
		q = ctx->rx_queue_index;
		if (nw > 1 && q < UB_EP_MAX_QUEUES)
			q += wkey % nw * UB_EP_MAX_QUEUES;
		rc = q < UB_EP_MAX_QUEUES * UB_EP_MAX_WORKERS ?
			     bpf_redirect_map(&ub_ep_xsks, q, XDP_DROP) : XDP_DROP;
		ep_count(rc == XDP_REDIRECT ? UB_EP_CNT_TO_XSK : UB_EP_CNT_DROP_NO_SOCKET);
		return rc;
	}
	if (m == UB_EP_SLOT_DIRECT || m == UB_EP_SLOT_VETH) {
		/* The kernel's own bound for a redirect to a device (MTU, its
		 * Ethernet header and a VLAN tag), with the veth's MTU. */
		if (bpf_xdp_get_buff_len(ctx) > UB_EP_VETH_MTU_MAX + 14 + 4) {
			ep_count(UB_EP_CNT_DROP_VETH_MTU);
			return XDP_DROP;
		}
		rc = bpf_redirect_map(&ub_ep_devs, slot, XDP_DROP);
		ep_count(rc == XDP_REDIRECT ? UB_EP_CNT_TO_VETH : UB_EP_CNT_DROP_NO_SOCKET);
		return rc;
	}
none:
	ep_count(UB_EP_CNT_DROP_NO_OWNER);
	return XDP_DROP;
}

/*
 * Frags-aware (multi-buffer): on a link whose MTU exceeds a page (native
 * XDP), or for a non-linear skb (generic XDP), a jumbo frame comes as a first
 * buffer and fragments. Every header read here lies in the first buffer; the
 * IP length is checked against the whole frame (ub2e_parse_l3). The AF_XDP
 * socket takes the frame in several UMEM frames where it is multi-buffer
 * (XDP_USE_SG, Linux 6.6+); a kernel without that copies only a first
 * buffer, which user space then drops for its ICRC (on such a kernel the
 * endpoint keeps its UB MTU to what one buffer holds: user/endpoint/ep.c).
 */
SEC("xdp.frags")
int ub_endpoint(struct xdp_md *ctx)
{
	struct hdr_cursor c = { (void *)(long)ctx->data, (void *)(long)ctx->data_end };
	bool native = ub_ethertype != 0, v6;
	struct ethhdr *eth;
	struct ub_lph *lph;
	struct ub_nth *nth;
	struct ub_l3 l3 = {};
	__u32 w = 0, q;
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
	rc = ub2e_parse_l3(ctx, &c, v6, native, &l3);
	/* CTP (headers/ub_wire.h) has a UDP port of its own, which the switch's
	 * parser calls not UBoE; on a UB port it is the endpoint's: its 1-byte
	 * CTPH and the rest are checked in user space with the ICRC. */
	if (native && rc == UB2E_CNT_DROP_NOT_UBOE && l3.udph &&
	    l3.udph->dest == bpf_htons(UB_CTP_UDP_PORT)) {
		ep_count(UB_EP_CNT_RX_CTP);
		if (ub_steer)
			return to_slot(ctx, ctp_slot(&l3, c.end), 0);
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
	if (ub_steer) {
		__u32 slot = tp_slot(&l3, c.end, &w);

		return to_slot(ctx, slot, w);
	}
	w = worker_of(&l3, c.end);
steer:
	/* No socket on this queue: the endpoint is not listening there, and a
	 * kernel UDP socket must not see UB traffic half the time. */
	q = ctx->rx_queue_index;
	rc = q < UB_EP_MAX_QUEUES ? bpf_redirect_map(&ub_ep_xsks, w * UB_EP_MAX_QUEUES + q, XDP_DROP) :
				    XDP_DROP;
	ep_count(rc == XDP_REDIRECT ? UB_EP_CNT_TO_XSK : UB_EP_CNT_DROP_NO_SOCKET);
	return rc;
}
