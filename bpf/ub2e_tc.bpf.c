// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UB2E switch, the slow path (TC on the same two ports as the XDP programs).
 *
 * What XDP cannot finish — neighbour not resolved, too big for the egress MTU,
 * TTL expired, addressed to the switch — it hands to the kernel as the plain IP
 * packet, with the NPI and any CAQM request in XDP metadata, or in a header where
 * the kernel refuses XDP metadata (ub2e_punt(), struct ub2e_punt_hdr). The kernel
 * does what routers do: resolves the neighbour and queues the packet meanwhile,
 * answers with ICMP, delivers locally. Whatever it then sends out of a switch
 * port is converted here on egress, from skb->mark (and skb->tc_index, the
 * CAQM request of --caqm-tag):
 *
 *   ub2e_slow_in   both ports: XDP metadata (or the punt's header, taken off)
 *                  -> skb->mark, skb->tc_index; what
 *                  is too big once the conversion's headers come (UBoE -> UB:
 *                  LPH+NTH, UB -> UBoE: a CAQM tag) is answered here
 *                  (slow_too_big()); --no-ttl-dec undoes the kernel's decrement
 *   ub2e_slow_ip   IP-side port: marked IP packet -> UBoE with the NPI's VLAN
 *                  and the CAQM tag, if any
 *   ub2e_slow_ub   UB-side port: marked IP packet -> Eth | LPH | NTH | IP, the
 *                  CCI from the CAQM tag or the FECN;
 *                  unmarked UBoE, or an ICMP error about UBoE, never leaves
 *
 * The kernel's own answers to punted packets (ICMP errors, Port Unreachable)
 * carry the mark of what they answer because ubctl sets fwmark_reflect, so
 * they leave converted into the sender's partition like forwarded packets.
 *
 * Converting on egress rather than redirecting from ingress with
 * bpf_redirect_neigh() is what lets the kernel queue the first packets while it
 * resolves ARP/ND: the neighbour layer writes only an Ethernet header for the
 * skb's protocol, so LPH+NTH could not be written before it.
 */
#include "ub2e_common.bpf.h"
#include "lib/icmp.h"
#include <linux/pkt_cls.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * A packet the switch neither converts nor answers gets no verdict: the next
 * program on the hook has its turn (tcx: TCX_NEXT; clsact: the next filter),
 * and the kernel passes it when none is left. What the switch handles keeps
 * TC_ACT_OK, whose tc_classid -> tc_index carries the CAQM request.
 */
#define UB2E_TC_NOT_OURS	TC_ACT_UNSPEC

static __always_inline bool ub2e_marked(const struct __sk_buff *skb)
{
	return (skb->mark & UB2E_MARK_MAGIC_MASK) == UB2E_MARK_MAGIC;
}

/* The CAQM tag's info a punted packet carries (UB2E_SLOW_CAQM set), or 0. */
static __always_inline __u32 slow_caqm(const struct __sk_buff *skb)
{
	return skb->tc_index & UB2E_SLOW_CAQM ? skb->tc_index : 0;
}

static __always_inline bool skb_is_ip(const struct __sk_buff *skb)
{
	return skb->protocol == bpf_htons(ETH_P_IP) || skb->protocol == bpf_htons(ETH_P_IPV6);
}

/*
 * The IP header at `off`: its upper-layer protocol, and in *l4 where that
 * starts (IPv6: right after the fixed header; UBoE has no extension headers).
 * -1 when it cannot be read.
 */
static __always_inline int skb_ip_proto(struct __sk_buff *skb, __u32 off, bool v6, __u32 *l4)
{
	__u8 b[2];

	if (!v6) {
		if (bpf_skb_load_bytes(skb, off, b, 1) || bpf_skb_load_bytes(skb, off + 9, b + 1, 1))
			return -1;
		*l4 = off + (b[0] & 0xf) * 4;
		return b[1];
	}
	if (bpf_skb_load_bytes(skb, off + 6, b, 1))
		return -1;
	*l4 = off + sizeof(struct ipv6hdr);
	return b[0];
}

/* Is the IP packet at `off` UBoE (UDP to 4792)? Only the ports are needed. */
static __always_inline bool skb_is_uboe_at(struct __sk_buff *skb, __u32 off, bool v6)
{
	__be16 dport;
	__u32 l4;

	if (skb_ip_proto(skb, off, v6, &l4) != IPPROTO_UDP ||
	    bpf_skb_load_bytes(skb, l4 + 2, &dport, sizeof(dport)))
		return false;
	return dport == bpf_htons(UBOE_UDP_PORT);
}

/*
 * An ICMP error about UBoE, unmarked: with fwmark_reflect off, the kernel's
 * answers to punted packets come without the mark, their partition lost, and
 * must not leave as plain IP. The kernel's other traffic (ARP/ND, ping,
 * answers to plain IP) stays IP, as plain IP crossing the switch does.
 */
static __always_inline bool skb_icmp_error(struct __sk_buff *skb, bool v6, __u32 *l4)
{
	__u8 type;

	if (skb_ip_proto(skb, sizeof(struct ethhdr), v6, l4) != (v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP) ||
	    bpf_skb_load_bytes(skb, *l4, &type, 1))
		return false;
	/* The errors, which quote the packet they are about after 8 bytes:
	 * ICMPv6 1-4; ICMP 3 (unreachable), 4, 5, 11 (time exceeded), 12. */
	return v6 ? type >= 1 && type <= 4 : type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
}

static __always_inline bool skb_icmp_about_uboe(struct __sk_buff *skb, bool v6)
{
	__u32 l4;

	return skb_icmp_error(skb, v6, &l4) && skb_is_uboe_at(skb, l4 + 8, v6);
}

/* The switch's own addresses on its ports (ubctl fills them in; index
 * UB2E_SIDE_IP, UB2E_SIDE_UB): the source of the Packet Too Big answers below
 * out of that port, as a router's must be (RFC 1812 §4.3.2.4). Zero: none of
 * that family. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UB2E_SIDES);
	__type(key, __u32);
	__type(value, struct ub2e_icmp_src);
} ub2e_icmp_src SEC(".maps");

/* As much of the packet as an ICMP error quotes: 576 bytes in all for IPv4
 * (RFC 1812 §4.3.2.3), the IPv6 minimum MTU (RFC 4443 §3.2). */
#define ICMP4_QUOTE_MAX	(576 - sizeof(struct iphdr) - 8)
#define ICMP6_QUOTE_MAX	(1280 - sizeof(struct ipv6hdr) - 8)
#define CSUM_CHUNK	512	/* the most bpf_csum_diff() sums in one call */

struct icmp_quote {
	__u8 b[ICMP6_QUOTE_MAX + 4];	/* + zero padding to a multiple of 4 */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct icmp_quote);
} ub2e_icmp_scratch SEC(".maps");

/* Ones' complement sum of n bytes at p (n a multiple of 4, at most CSUM_CHUNK). */
static __always_inline __s64 csum_tail(__u8 *p, __u64 n, __s64 sum)
{
	barrier_var(n);
	if (!n || n > CSUM_CHUNK || sum < 0)
		return sum;
	return bpf_csum_diff(NULL, 0, (__be32 *)p, n, (__wsum)sum);
}

/* Ones' complement sum of the quote (zero-padded to 4 bytes) onto `sum`:
 * whole chunks at fixed offsets, so only the last one has a variable size. */
static __always_inline __s64 quote_csum(struct icmp_quote *q, __u32 len, __s64 sum)
{
	__u64 n = (len + 3) & ~3u;	/* 64 bits: checked in the register csum_tail() passes on */
	__u32 off = 0;

	if (n > CSUM_CHUNK && sum >= 0) {
		sum = bpf_csum_diff(NULL, 0, (__be32 *)q->b, CSUM_CHUNK, (__wsum)sum);
		off = CSUM_CHUNK;
	}
	if (n > 2 * CSUM_CHUNK && sum >= 0) {
		sum = bpf_csum_diff(NULL, 0, (__be32 *)(q->b + CSUM_CHUNK), CSUM_CHUNK, (__wsum)sum);
		off = 2 * CSUM_CHUNK;
	}
	return off == 2 * CSUM_CHUNK ? csum_tail(q->b + 2 * CSUM_CHUNK, n - 2 * CSUM_CHUNK, sum) :
	       off == CSUM_CHUNK ? csum_tail(q->b + CSUM_CHUNK, n - CSUM_CHUNK, sum) :
	       csum_tail(q->b, n, sum);
}

/*
 * An ICMP error the kernel sends onto the UB side that does not fit the UB
 * port once LPH+NTH come (its 1280-byte Packet Too Big on a port of MTU
 * 1280-1289, a 576-byte IPv4 error below 586): cut its quote to what fits,
 * as RFC 4443 §2.4 (c) and RFC 1812 §4.3.2.3 allow, fixing the IP length
 * and the ICMP checksum. The kept quote is a multiple of 4 bytes, so what
 * goes starts on a checksum word. Returns 0 when it now fits, -1 if not.
 */
static __always_inline int icmp_error_fit(struct __sk_buff *skb, bool v6, __u32 mtu)
{
	const __u32 eth = sizeof(struct ethhdr);
	__u32 zero = 0, l4, room, keep, cut, ip_len = skb->len - eth;
	struct icmp_quote *q;
	__u64 n;
	__s64 sum;

	if (!skb_icmp_error(skb, v6, &l4) || mtu < UB_NATIVE_HDR_LEN)
		return -1;
	room = mtu - UB_NATIVE_HDR_LEN;
	/* Keep at least the quoted IP header and 8 bytes of what follows it. */
	if (l4 < eth || room < l4 - eth + 8 + (v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) + 8)
		return -1;
	keep = (room - (l4 - eth) - 8) & ~3u;
	cut = ip_len - (l4 - eth) - 8 - keep;
	q = bpf_map_lookup_elem(&ub2e_icmp_scratch, &zero);
	if (!q)
		return -1;
	/* 64 bits, so that the register checked is the one passed (no zero
	 * extension between), and checked as n - 1: 6.1's verifier learns no
	 * lower bound from n != 0. */
	n = cut - 1;
	barrier_var(n);
	if (n >= ICMP6_QUOTE_MAX)
		return -1;
	n++;
	if (bpf_skb_load_bytes(skb, l4 + 8 + keep, q->b, n))
		return -1;
	*(__u32 *)(q->b + n) = 0;
	/* The checksum loses what goes: add its ones' complement. */
	sum = quote_csum(q, n, 0);
	if (sum < 0)
		return -1;
	sum = (__u32)~(__u32)sum;
	if (v6) {
		__be32 from = bpf_htonl(ip_len - sizeof(struct ipv6hdr));
		__be32 to = bpf_htonl(ip_len - sizeof(struct ipv6hdr) - cut);
		__be16 plen = bpf_htons(ip_len - sizeof(struct ipv6hdr) - cut);

		/* and the pseudo-header's upper-layer length changes */
		sum = bpf_csum_diff(&from, sizeof(from), &to, sizeof(to), (__wsum)sum);
		if (sum < 0 || bpf_skb_store_bytes(skb, eth + __builtin_offsetof(struct ipv6hdr, payload_len),
						   &plen, sizeof(plen), 0))
			return -1;
	} else {
		__be16 from = bpf_htons(ip_len), to = bpf_htons(ip_len - cut);

		if (bpf_skb_store_bytes(skb, eth + __builtin_offsetof(struct iphdr, tot_len), &to, sizeof(to), 0) ||
		    bpf_l3_csum_replace(skb, eth + __builtin_offsetof(struct iphdr, check), from, to, sizeof(to)))
			return -1;
	}
	if (bpf_l4_csum_replace(skb, l4 + 2, 0, (__u32)sum, 0) ||
	    bpf_skb_change_tail(skb, skb->len - cut, 0))
		return -1;
	return 0;
}

SEC("tc")
int ub2e_slow_ip(struct __sk_buff *skb)
{
	const struct ub2e_cfg *cfg = ub2e_config();
	__u32 mtu = 0, caqm = slow_caqm(skb), off = 2 * ETH_ALEN;
	__be16 h[2];
	int vid, grow;

	if (!cfg || !skb_is_ip(skb))
		return UB2E_TC_NOT_OURS;
	if (!ub2e_marked(skb)) {
		/* Plain UBoE is the IP side's own (untagged: the default
		 * partition); an answer about UBoE without its partition is not. */
		if (skb_icmp_about_uboe(skb, skb->protocol == bpf_htons(ETH_P_IPV6))) {
			count(UB2E_CNT_SLOW_DROP_UNCONVERTED);
			return TC_ACT_SHOT;
		}
		return UB2E_TC_NOT_OURS;
	}
	vid = ub2e_npi_to_vlan(cfg, skb->mark & UB_PID_MASK, (skb->mark >> UB2E_MARK_PERM_SHIFT) & 1);
	if (vid < 0) {
		count(UB2E_CNT_SLOW_DROP_VLAN);
		return TC_ACT_SHOT;
	}
	/* The kernel checked the bare IP length; a CAQM tag must fit as well, as
	 * on the fast path (slow_too_big() answered what it could). */
	if (caqm && bpf_check_mtu(skb, skb->ifindex, &mtu, UB_CAQM_TAG_LEN, 0)) {
		count(UB2E_CNT_SLOW_DROP_TOO_BIG);
		return TC_ACT_SHOT;
	}
	grow = (vid ? (int)sizeof(struct vlan_tag) : 0) + (caqm ? UB_CAQM_TAG_LEN : 0);
	if (!grow)
		goto out;
	/* The tags go between the MACs and the EtherType, in the frame itself,
	 * so that every receiver sees them (not only an offload):
	 * [8100 | TCI] [tag EtherType | info] IP EtherType. */
	if (bpf_skb_adjust_room(skb, grow, BPF_ADJ_ROOM_MAC, 0))
		goto fail;
	if (vid) {
		h[0] = bpf_htons(ETH_P_8021Q);
		h[1] = bpf_htons(vid);
		if (bpf_skb_store_bytes(skb, off, h, sizeof(h), 0))
			goto fail;
		off += sizeof(h);
	}
	if (caqm) {
		h[0] = bpf_htons(cfg->caqm_ethertype);
		h[1] = bpf_htons(caqm & UB2E_SLOW_CAQM_INFO);
		if (bpf_skb_store_bytes(skb, off, h, sizeof(h), 0))
			goto fail;
		off += sizeof(h);
		count(UB2E_CNT_SLOW_CAQM);
	}
	h[0] = skb->protocol;
	if (bpf_skb_store_bytes(skb, off, h, sizeof(h[0]), 0))
		goto fail;
out:
	count(UB2E_CNT_SLOW_TX_UBOE);
	return TC_ACT_OK;
fail:
	count(UB2E_CNT_SLOW_DROP_ADJUST);
	return TC_ACT_SHOT;
}

SEC("tc")
int ub2e_slow_ub(struct __sk_buff *skb)
{
	const struct ub2e_cfg *cfg = ub2e_config();
	struct {
		__be16 proto;
		struct ub_lph lph;
		struct ub_nth nth;
	} __attribute__((packed)) h;
	__u32 mtu = 0, m = skb->mark, caqm = slow_caqm(skb);
	__u16 cci;
	bool v6;

	if (!cfg || !skb_is_ip(skb))
		return UB2E_TC_NOT_OURS;
	v6 = skb->protocol == bpf_htons(ETH_P_IPV6);
	if (!ub2e_marked(skb)) {
		/* UBoE that did not come through the switch never reaches UB as it is. */
		if (skb_is_uboe_at(skb, sizeof(struct ethhdr), v6) || skb_icmp_about_uboe(skb, v6)) {
			count(UB2E_CNT_SLOW_DROP_UNCONVERTED);
			return TC_ACT_SHOT;
		}
		return UB2E_TC_NOT_OURS;
	}
	/* The kernel checked the bare IP length; LPH+NTH must fit as well. */
	if (bpf_check_mtu(skb, skb->ifindex, &mtu, UB_NATIVE_HDR_LEN, 0)) {
		if (icmp_error_fit(skb, v6, mtu)) {
			count(UB2E_CNT_SLOW_DROP_TOO_BIG);
			return TC_ACT_SHOT;
		}
		count(UB2E_CNT_SLOW_ICMP_TRUNCATED);
	}
	h.proto = bpf_htons(cfg->ub_ethertype);
	ub_lph_init(&h.lph, v6 ? UB_LPH_CONFIG_IPV6 : UB_LPH_CONFIG_IPV4, cfg->vl, cfg->rt);
	/* A CAQM tag's request and answers go on in the CCI, as on the fast path. */
	cci = caqm ? ub_caqm_tag_to_cci(caqm & UB2E_SLOW_CAQM_INFO) :
		     ub_cci_make_fecn((m >> UB2E_MARK_FECN_SHIFT) & 3, 0);
	ub_nth_init(&h.nth, cci, (m >> UB2E_MARK_PERM_SHIFT) & 1, m & UB_PID_MASK);
	if (bpf_skb_adjust_room(skb, UB_NATIVE_HDR_LEN, BPF_ADJ_ROOM_MAC, 0) ||
	    bpf_skb_store_bytes(skb, 2 * ETH_ALEN, &h, sizeof(h), 0)) {
		count(UB2E_CNT_SLOW_DROP_ADJUST);
		return TC_ACT_SHOT;
	}
	if (caqm)
		count(UB2E_CNT_SLOW_CAQM);
	count(UB2E_CNT_SLOW_TX_UB);
	return TC_ACT_OK;
}

/* ---- TC ingress: what XDP punted, before the kernel routes it ---------------- */

/* struct ub2e_icmp_limit with the lock the verifier knows. */
struct icmp_limit {
	struct bpf_spin_lock lock;
	__u32 rate, burst, pad;
	__u64 credit, last_ns;
};
_Static_assert(sizeof(struct icmp_limit) == sizeof(struct ub2e_icmp_limit), "icmp_limit layout");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UB2E_MAX_PORTS);
	__type(key, __u32);		/* ifindex of the port the answers leave by */
	__type(value, struct icmp_limit);
} ub2e_icmp_limit SEC(".maps");

/* The longest refill counted at once: keeps credit += elapsed * rate in 64 bits. */
#define ICMP_REFILL_MAX_NS	(10 * UB2E_NSEC_PER_SEC)

/*
 * May port `ifindex` send one more ICMP error? A token bucket of `burst`
 * answers refilled at `rate` per second, as the kernel bounds its own ICMP
 * (net.ipv4.icmp_msgs_per_sec / icmp_msgs_burst), so a flood of too-big
 * packets cannot make the switch flood answers.
 */
static __always_inline bool icmp_allow(__u32 ifindex)
{
	struct icmp_limit *l = bpf_map_lookup_elem(&ub2e_icmp_limit, &ifindex);
	__u64 now = bpf_ktime_get_ns(), el, cap, rate;
	bool ok = true;

	if (!l)
		return true;
	bpf_spin_lock(&l->lock);
	rate = l->rate < UB2E_ICMP_RATE_MAX ? l->rate : UB2E_ICMP_RATE_MAX;
	if (rate) {
		cap = (__u64)(l->burst ? (l->burst < UB2E_ICMP_BURST_MAX ? l->burst : UB2E_ICMP_BURST_MAX) : 1) *
		      UB2E_NSEC_PER_SEC;
		el = now - l->last_ns;
		if (el > ICMP_REFILL_MAX_NS)
			el = ICMP_REFILL_MAX_NS;
		l->last_ns = now;
		l->credit += el * rate;
		if (l->credit > cap)
			l->credit = cap;
		ok = l->credit >= UB2E_NSEC_PER_SEC;
		if (ok)
			l->credit -= UB2E_NSEC_PER_SEC;
	}
	bpf_spin_unlock(&l->lock);
	return ok;
}

/*
 * The source of an answer leaving port skb->ifindex towards `dst`: the
 * address the kernel would choose now (BPF_FIB_LOOKUP_SRC, kernel 6.7+: the
 * route's preferred source or the port's address for it), so that a changed
 * address is used at once. Older kernels refuse the flag; then the port's
 * address read at attach (map ub2e_icmp_src, at `side`), counted. False: none.
 */
static __always_inline bool icmp_src(struct __sk_buff *skb, __u32 side, bool v6, const void *dst, void *src)
{
	struct bpf_fib_lookup p = {};
	struct ub2e_icmp_src *a;
	int rc;

	p.family = v6 ? AF_INET6 : AF_INET;
	p.ifindex = skb->ifindex;
	if (v6)
		__builtin_memcpy(p.ipv6_dst, dst, sizeof(p.ipv6_dst));
	else
		p.ipv4_dst = *(const __be32 *)dst;
	rc = bpf_fib_lookup(skb, &p, sizeof(p),
			    BPF_FIB_LOOKUP_OUTPUT | BPF_FIB_LOOKUP_SKIP_NEIGH | BPF_FIB_LOOKUP_SRC);
	if (rc == BPF_FIB_LKUP_RET_SUCCESS) {
		/* The answer leaves by the port it came in by: so must the route. */
		if (p.ifindex != skb->ifindex)
			return false;
		if (v6)
			__builtin_memcpy(src, p.ipv6_src, sizeof(p.ipv6_src));
		else
			*(__be32 *)src = p.ipv4_src;
		return v6 ? !!(p.ipv6_src[0] | p.ipv6_src[1] | p.ipv6_src[2] | p.ipv6_src[3]) : !!p.ipv4_src;
	}
	if (rc >= 0)	/* the kernel has the flag: no route back by this port, no address */
		return false;
	a = bpf_map_lookup_elem(&ub2e_icmp_src, &side);
	if (!a || (v6 ? !(a->ip6[0] | a->ip6[1] | a->ip6[2] | a->ip6[3]) : !a->ip4))
		return false;
	if (v6)
		__builtin_memcpy(src, a->ip6, sizeof(a->ip6));
	else
		*(__be32 *)src = a->ip4;
	count(UB2E_CNT_SLOW_ICMP_SRC_ATTACH);
	return true;
}

/*
 * Too big for the egress port once the conversion's `grow` bytes come (UBoE
 * -> UB: LPH+NTH, 10; UB -> UBoE with a CAQM request: its tag, 4): the kernel
 * would check only the IP length against the MTU — forward what fits as IP
 * but not converted (then dropped on egress), and quote the full MTU to what
 * it does answer, an MTU the sender could never use. So the switch answers
 * itself, with the MTU that fits (egress MTU - grow), turning this packet into
 * ICMP Fragmentation Needed / Packet Too Big back out of the port it came in
 * by (`side`); the mark stays, so TC egress converts it into the sender's
 * partition, without the CAQM request (the answer is not the request).
 * Returns -1 when this is not the case (the kernel goes on), else a verdict.
 */
static __always_inline int slow_too_big(struct __sk_buff *skb, const struct ub2e_cfg *cfg, __u16 grow,
					__u32 side)
{
	struct hdr_cursor c = { (void *)(long)skb->data, (void *)(long)skb->data_end };
	struct bpf_fib_lookup fib;
	struct icmp_quote *q;
	struct udphdr *udph;
	struct ethhdr *eth;
	__u8 mac[2 * ETH_ALEN];
	__u32 zero = 0, ip_len, qlen, mtu;
	bool v6 = skb->protocol == bpf_htons(ETH_P_IPV6);
	struct icmp4_too_big h4 = {};
	struct icmp6_too_big h6 = {};
	__s64 sum;
	int rc;

	if (parse_ethhdr(&c, &eth) < 0)
		return -1;
	__builtin_memcpy(mac, eth->h_source, ETH_ALEN);
	__builtin_memcpy(mac + ETH_ALEN, eth->h_dest, ETH_ALEN);
	if (!v6) {
		struct iphdr *iph;

		if (parse_iphdr(&c, &iph) != IPPROTO_UDP || iph->ihl != 5 || parse_udphdr(&c, &udph) < 0)
			return -1;
		if (!(cfg->flags & UB2E_F_NO_TTL_DEC) && iph->ttl <= 1)
			return -1;	/* Time Exceeded comes first, from the kernel */
		rc = fib_lookup_ip4(skb, &fib, skb->ifindex, iph, udph, grow);
		ip_len = bpf_ntohs(iph->tot_len);
		h4.ip.daddr = iph->saddr;
	} else {
		struct ipv6hdr *ip6h;

		if (parse_ip6hdr(&c, &ip6h) != IPPROTO_UDP || parse_udphdr(&c, &udph) < 0)
			return -1;
		if (!(cfg->flags & UB2E_F_NO_TTL_DEC) && ip6h->hop_limit <= 1)
			return -1;
		rc = fib_lookup_ip6(skb, &fib, skb->ifindex, ip6h, udph, grow);
		ip_len = bpf_ntohs(ip6h->payload_len) + sizeof(*ip6h);
		h6.ip.daddr = ip6h->saddr;
	}
	if (rc != BPF_FIB_LKUP_RET_FRAG_NEEDED)
		return -1;
	mtu = fib.mtu_result > grow ? fib.mtu_result - grow : 0;

	q = bpf_map_lookup_elem(&ub2e_icmp_scratch, &zero);
	if (!q)
		return -1;
	if (!(v6 ? icmp_src(skb, side, true, &h6.ip.daddr, &h6.ip.saddr) :
		   icmp_src(skb, side, false, &h4.ip.daddr, &h4.ip.saddr))) {
		count(UB2E_CNT_SLOW_ICMP_NO_SOURCE);
		return -1;
	}
	/* Too big either way: a suppressed answer leaves nothing. */
	if (!icmp_allow(skb->ifindex)) {
		count(UB2E_CNT_SLOW_ICMP_RATELIMITED);
		return TC_ACT_SHOT;
	}

	qlen = v6 ? ICMP6_QUOTE_MAX : ICMP4_QUOTE_MAX;
	if (ip_len < qlen)
		qlen = ip_len;
	if (qlen < sizeof(struct iphdr) || qlen > ICMP6_QUOTE_MAX)
		return -1;
	if (bpf_skb_load_bytes(skb, sizeof(struct ethhdr), q->b, qlen))
		return -1;
	*(__u32 *)(q->b + qlen) = 0;

	if (!v6) {
		/* IPTOS_PREC_INTERNETCONTROL, as the kernel's */
		sum = quote_csum(q, qlen, icmp4_too_big_init(&h4, 0xc0, qlen, mtu));
		h4.csum = csum_finish(sum);
	} else {
		sum = quote_csum(q, qlen, icmp6_too_big_init(&h6, qlen, mtu));
		h6.csum = csum_finish(sum);
	}
	if (sum < 0)
		return -1;

	/* Eth | IP | ICMP | quote: cut to the quote, open room for the headers. */
	if (bpf_skb_change_tail(skb, sizeof(struct ethhdr) + qlen, 0) ||
	    bpf_skb_adjust_room(skb, v6 ? sizeof(h6) : sizeof(h4), BPF_ADJ_ROOM_MAC, 0) ||
	    bpf_skb_store_bytes(skb, 0, mac, sizeof(mac), 0) ||
	    (v6 ? bpf_skb_store_bytes(skb, sizeof(struct ethhdr), &h6, sizeof(h6), 0) :
		  bpf_skb_store_bytes(skb, sizeof(struct ethhdr), &h4, sizeof(h4), 0))) {
		count(UB2E_CNT_SLOW_DROP_ADJUST);
		return TC_ACT_SHOT;
	}
	/* Whatever checksum state came with the packet is stale: verify afresh. */
	bpf_csum_level(skb, BPF_CSUM_LEVEL_RESET);
	skb->tc_classid = 0;
	skb->tc_index = 0;
	count(UB2E_CNT_SLOW_ICMP_TOO_BIG);
	return bpf_redirect(skb->ifindex, 0);
}

/*
 * --no-ttl-dec on the slow path: the kernel decrements TTL / hop limit when it
 * forwards, so add the one it will take (a packet at 255 loses one; one that
 * would die at 1 now passes, as on the fast path).
 */
static __always_inline void slow_keep_ttl(struct __sk_buff *skb)
{
	__u32 off = sizeof(struct ethhdr);
	__be16 old, new;
	__u8 hl;

	if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		off += __builtin_offsetof(struct ipv6hdr, hop_limit);
		if (bpf_skb_load_bytes(skb, off, &hl, 1) || hl == 0 || hl == 255)
			return;
		hl++;
		bpf_skb_store_bytes(skb, off, &hl, 1, 0);
		return;
	}
	off += __builtin_offsetof(struct iphdr, ttl);	/* TTL and protocol: one checksum word */
	if (bpf_skb_load_bytes(skb, off, &old, 2))
		return;
	hl = *(__u8 *)&old;
	if (hl == 0 || hl == 255)
		return;
	new = old;
	*(__u8 *)&new = hl + 1;
	if (!bpf_skb_store_bytes(skb, off, &new, 2, 0))
		bpf_l3_csum_replace(skb, sizeof(struct ethhdr) + __builtin_offsetof(struct iphdr, check), old, new, 2);
}

/*
 * A punt's words from the header XDP wrote after the MACs (ub2e_punt_key != 0),
 * taken off before the kernel parses IP: 1 taken, 0 none (the packet as it
 * came), -1 one that cannot be taken off (the packet is no IP packet).
 */
static __always_inline int slow_punt_hdr(struct __sk_buff *skb, struct ub2e_punt_meta *m)
{
	struct ub2e_punt_hdr h;

	if (bpf_skb_load_bytes(skb, sizeof(struct ethhdr), &h, sizeof(h)) || h.key != ub2e_punt_key ||
	    h.not_ip[0] || h.not_ip[UB2E_PUNT_NOT_IP6_NH] != 0xff)
		return 0;
	/* Taking off bytes in front of IP changes no checksum, and a GSO packet keeps its segment size. */
	if (bpf_skb_adjust_room(skb, -(int)sizeof(h), BPF_ADJ_ROOM_MAC,
				BPF_F_ADJ_ROOM_FIXED_GSO | BPF_F_ADJ_ROOM_NO_CSUM_RESET))
		return -1;
	/* With RPS on, the kernel hashed the header as if it were IP (one hash
	 * for every IPv4 punt, one per length for IPv6): let it hash the packet. */
	bpf_set_hash_invalid(skb);
	*m = h.m;
	return 1;
}

SEC("tc")
int ub2e_slow_in(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	struct ub2e_punt_meta *meta = (void *)(long)skb->data_meta, tm;
	const struct ub2e_cfg *cfg;
	__u32 caqm = 0;
	int rc;

	if ((void *)(meta + 1) > data) {
		meta = NULL;
		if (ub2e_punt_key) {
			rc = slow_punt_hdr(skb, &tm);
			if (rc < 0) {
				count(UB2E_CNT_SLOW_DROP_ADJUST);
				return TC_ACT_SHOT;
			}
			if (rc)
				meta = &tm;
		}
	}
	if (meta && (meta->mark & UB2E_MARK_MAGIC_MASK) == UB2E_MARK_MAGIC) {
		skb->mark = meta->mark;
		if (meta->caqm & UB2E_SLOW_CAQM)
			caqm = meta->caqm & (UB2E_SLOW_CAQM | UB2E_SLOW_CAQM_INFO);
		/* On TC_ACT_OK the kernel sets skb->tc_index to the classid's
		 * minor, which a direct-action program leaves here: written
		 * to tc_index itself, it would be overwritten. */
		skb->tc_classid = caqm;
	}
	cfg = ub2e_config();
	if (!cfg || !ub2e_marked(skb) || !skb_is_ip(skb))
		return UB2E_TC_NOT_OURS;
	/* What grows on the way out: UBoE -> UB by LPH+NTH, UB -> UBoE by a CAQM
	 * tag only (an 802.1Q tag is not in the MTU). */
	if (ub2e_is_port(&ub2e_tx_ip, skb->ifindex)) {
		/* A tag XDP read from offload metadata is the NPI now: without a
		 * VLAN device the kernel would drop the packet for it. */
		if (skb->vlan_present && bpf_skb_vlan_pop(skb)) {
			count(UB2E_CNT_SLOW_DROP_ADJUST);
			return TC_ACT_SHOT;
		}
		rc = slow_too_big(skb, cfg, UB_NATIVE_HDR_LEN, UB2E_SIDE_IP);
		if (rc >= 0)
			return rc;
	} else if (caqm && ub2e_is_port(&ub2e_tx_ub, skb->ifindex)) {
		rc = slow_too_big(skb, cfg, UB_CAQM_TAG_LEN, UB2E_SIDE_UB);
		if (rc >= 0)
			return rc;
	}
	if (cfg->flags & UB2E_F_NO_TTL_DEC)
		slow_keep_ttl(skb);
	return TC_ACT_OK;
}
