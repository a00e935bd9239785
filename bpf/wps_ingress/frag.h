/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DF=0 IPv4 too big for the paths once encapsulated: the inner packet cut
 * into fragments (RFC 2473 §7, RFC 791) that go round the segmentation
 * detour as packets of their flow. Global functions, each checked once by
 * the verifier.
 */
#ifndef UBXDP_WPS_INGRESS_FRAG_H
#define UBXDP_WPS_INGRESS_FRAG_H

#include "wps_ingress/state.h"
#include "lib/csum.h"

/*
 * A DF=0 IPv4 packet being cut into fragments (frag_send): the whole inner
 * packet, and the header of the fragments after the first. Offsets into data
 * are masked with FRAG_MASK, so a chunk of FRAG_CHUNK at any of them is in it.
 */
#define FRAG_MAX_LEN	9216		/* the largest inner packet cut (jumbo frames) */
#define FRAG_MASK	16383
#define FRAG_CHUNK	256
#define FRAG_MAX	16		/* fragments of one packet at most */
struct fragbuf {
	__u32 seg, ihl, tot, pay, f, n, off0;	/* detour, lengths, fragment size and count, offset */
	__u8 mf, evil, pad[2];			/* the original's MF and reserved flags */
	__u8 hdr[64];			/* the header of the fragment being made */
	__u8 later[64];			/* the original header, non-copied options NOP'd (RFC 791) */
	__u8 data[FRAG_MASK + 1 + 2 * FRAG_CHUNK];	/* the inner packet, IP header on */
};

/*
 * The length of the chunk `rem` (>= 1) bytes before the end: at most
 * FRAG_CHUNK, bounded last, on the register the helper gets, so that 6.1's
 * verifier (which loses a bound checked on a copy) knows it.
 */
/* x & FRAG_MASK, the mask kept (the compiler may fold it into an OR 6.1's verifier cannot bound). */
static __always_inline __u32 fb_off(__u32 x)
{
	asm volatile("" : "+r"(x));
	return x & FRAG_MASK;
}

static __always_inline __u32 chunk_len(__u32 rem)
{
	__u32 l = rem < FRAG_CHUNK ? rem : FRAG_CHUNK;

	asm volatile("" : "+r"(l));	/* or the compiler drops the mask it sees no need for */
	/* 1..2 * FRAG_CHUNK as the verifier sees it (6.1 learns no lower bound from l != 0); rem >= 1 */
	return ((l - 1) & (2 * FRAG_CHUNK - 1)) + 1;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fragbuf);
} wps_in_fragbuf SEC(".maps");

/* Sum of n bytes (a multiple of 4, at most FRAG_CHUNK) of the buffer at off. */
static __always_inline __s64 frag_sum(struct fragbuf *fb, __u32 off, __u32 n, __s64 seed)
{
	if (n == 0 || n > FRAG_CHUNK)
		return seed;
	return bpf_csum_diff(NULL, 0, (__be32 *)(fb->data + fb_off(off)), n & 0x1fc, (__u32)seed);
}

/*
 * A TCP or UDP checksum left for the device to finish (CHECKSUM_PARTIAL: the
 * field holds the pseudo-header's sum) is finished here, before the packet is
 * cut: no device sees the datagram whole again. A finished checksum, right or
 * wrong, is left as it is. For an inner packet that is not a fragment.
 */
__noinline int frag_l4_csum(void)
{
	__u32 zero = 0, ihl, tot, coff, l4;
	struct fragbuf *fb = bpf_map_lookup_elem(&wps_in_fragbuf, &zero);
	__be32 ph[3];
	__s64 sum;
	__u16 *field;
	__u8 proto;

	if (!fb)
		return 0;
	ihl = fb->ihl & 0x3c;
	tot = fb->tot;
	proto = fb->data[9];
	coff = proto == IPPROTO_UDP ? 6 : proto == IPPROTO_TCP ? 16 : 0;
	if (!coff || tot > FRAG_MAX_LEN || tot < ihl + coff + 2)
		return 0;
	l4 = tot - ihl;
	__builtin_memcpy(ph, fb->data + 12, 8);
	ph[2] = bpf_htonl((__u32)proto << 16 | l4);
	sum = bpf_csum_diff(NULL, 0, ph, sizeof(ph), 0);
	field = (__u16 *)(fb->data + (fb_off(ihl + coff) & 63));
	if (*field != (__u16)~csum_finish(sum) || (proto == IPPROTO_UDP && !*field))
		return 0;
	*field = 0;
	/* Zeros past the end, up to a multiple of 4: part of the last word summed. */
	for (__u32 i = 0; i < 4; i++)
		fb->data[fb_off(tot + i)] = 0;
	for (__u32 c = 0; c < FRAG_MAX_LEN / FRAG_CHUNK; c++) {
		__u32 at = c * FRAG_CHUNK, n;

		if (at >= l4)
			break;
		n = l4 - at < FRAG_CHUNK ? (l4 - at + 3) & ~3u : FRAG_CHUNK;
		sum = frag_sum(fb, ihl + at, n, sum);
	}
	*field = csum_finish(sum);
	if (proto == IPPROTO_UDP && !*field)
		*field = 0xffff;
	return 1;
}

/* The inner packet (fb->tot bytes from the IP header) into the buffer, in chunks; 0 or -1. */
__noinline int frag_load(struct __sk_buff *skb)
{
	__u32 zero = 0, tot;
	struct fragbuf *fb = bpf_map_lookup_elem(&wps_in_fragbuf, &zero);

	if (!skb || !fb)
		return -1;
	tot = fb->tot;
	for (__u32 c = 0; c < FRAG_MAX_LEN / FRAG_CHUNK; c++) {
		__u32 at = c * FRAG_CHUNK, len;

		if (at >= tot)
			break;
		len = chunk_len(tot - at);
		if (bpf_skb_load_bytes(skb, ETH_HLEN + at, fb->data + fb_off(at), len))
			return -1;
	}
	return 0;
}

/*
 * fb->later: the original header with the options not copied into later
 * fragments NOP'd (RFC 791: copied flag 0), byte by byte (one pass, no nested
 * loop for the verifier to follow).
 */
__noinline int frag_later(void)
{
	__u32 zero = 0, ihl, rem = 0, nop = 0, done = 0;
	struct fragbuf *fb = bpf_map_lookup_elem(&wps_in_fragbuf, &zero);

	if (!fb)
		return -1;
	ihl = fb->ihl & 0x3c;
	__builtin_memcpy(fb->later, fb->data, 60);
	for (__u32 j = 20; j < 60; j++) {
		__u8 b;

		if (j >= ihl || done)
			break;
		b = fb->later[j];
		if (!rem) {
			if (b == 0) {		/* end of options */
				done = 1;
				continue;
			}
			if (b == 1)		/* NOP */
				continue;
			rem = fb->later[(j + 1) & 63];
			if (rem < 2) {		/* malformed: the rest as it is */
				done = 1;
				continue;
			}
			nop = !(b & 0x80);
		}
		if (nop)
			fb->later[j] = 1;
		rem--;
	}
	return 0;
}

/*
 * Fragment k of the packet in the buffer made in the skb (its header, then
 * its data); all but the last sent at once round the detour as clones.
 */
__noinline int frag_one(struct __sk_buff *skb, __u32 k)
{
	__u32 zero = 0, ihl, f, n, o, fl, fo;
	struct fragbuf *fb = bpf_map_lookup_elem(&wps_in_fragbuf, &zero);
	__s64 sum;

	if (!skb || !fb)
		return -1;
	ihl = fb->ihl & 0x3c;
	f = fb->f;
	n = fb->n;
	if (k >= n || f == 0 || f > FRAG_MAX_LEN || ihl < 20)
		return -1;
	o = k * f;
	fl = k == n - 1 ? fb->pay - o : f;
	if (fl == 0 || fl > FRAG_MAX_LEN)
		return -1;
	__builtin_memcpy(fb->hdr, k ? fb->later : fb->data, 60);
	*(__be16 *)(fb->hdr + 2) = bpf_htons((__u16)(ihl + fl));
	fo = (fb->off0 + o / 8) | (k < n - 1 || fb->mf ? 0x2000 : 0) | (fb->evil ? 0x8000 : 0);
	*(__be16 *)(fb->hdr + 6) = bpf_htons((__u16)fo);
	*(__u16 *)(fb->hdr + 10) = 0;
	sum = bpf_csum_diff(NULL, 0, (__be32 *)fb->hdr, ihl, 0);
	*(__u16 *)(fb->hdr + 10) = csum_finish(sum);
	if (bpf_skb_change_tail(skb, ETH_HLEN + ihl + fl, 0) || bpf_skb_store_bytes(skb, ETH_HLEN, fb->hdr, ihl, 0))
		return -1;
	for (__u32 c = 0; c < FRAG_MAX_LEN / FRAG_CHUNK; c++) {
		__u32 at = c * FRAG_CHUNK, len;

		if (at >= fl)
			break;
		len = chunk_len(fl - at);
		if (bpf_skb_store_bytes(skb, ETH_HLEN + ihl + at, fb->data + fb_off(ihl + o + at), len, 0))
			return -1;
	}
	if (k < n - 1 && bpf_clone_redirect(skb, fb->seg, 0))
		return -1;
	return 0;
}

/*
 * A DF=0 IPv4 packet that will not fit once encapsulated (RFC 2473 §7: the
 * inner packet is fragmented before encapsulation; RFC 791 fragmentation,
 * at most `limit` bytes each): each fragment is sent round the segmentation
 * detour as a packet of its own (clones, the last the skb itself), where the
 * detour's program sprays it in its flow (cb: Ingress Port ID, the flow's
 * ports). Returns the original's verdict, or -1 when it cannot be cut.
 * Global: checked once by the verifier, as are its parts.
 */
__noinline int frag_send(struct __sk_buff *skb, __u32 limit, __u32 cb0, __u32 ports)
{
	__u32 zero = 0, ihl, tot, n;
	const struct wps_in_cfg *cfg = bpf_map_lookup_elem(&wps_in_cfg, &zero);
	struct fragbuf *fb = bpf_map_lookup_elem(&wps_in_fragbuf, &zero);
	__u8 b[8];

	if (!skb || !cfg || !fb || !cfg->seg_ifindex || bpf_skb_load_bytes(skb, ETH_HLEN, b, 8))
		return -1;
	ihl = (b[0] & 0xf) * 4;
	tot = (__u32)b[2] << 8 | b[3];
	if (ihl < 20 || tot <= ihl || tot > FRAG_MAX_LEN || limit <= ihl + 8 || limit > FRAG_MAX_LEN)
		return -1;
	fb->seg = cfg->seg_ifindex;
	fb->ihl = ihl;
	fb->tot = tot;
	fb->pay = tot - ihl;
	fb->f = (limit - ihl) & ~7u;
	n = (fb->pay + fb->f - 1) / fb->f;
	fb->n = n;
	fb->off0 = ((__u32)b[6] << 8 | b[7]) & 0x1fff;
	fb->mf = !!(b[6] & 0x20);
	fb->evil = !!(b[6] & 0x80);
	if (n < 2 || n > FRAG_MAX || frag_load(skb))
		return -1;
	if (!fb->off0 && !fb->mf)
		frag_l4_csum();
	frag_later();
	/* So that RPS puts every fragment on the CPU of the flow's other packets. */
	bpf_get_hash_recalc(skb);
	skb->cb[0] = cb0;
	skb->cb[1] = ports;
	for (__u32 k = 0; k < FRAG_MAX; k++) {
		if (k >= n)
			break;
		if (frag_one(skb, k))
			return -1;
	}
	cnt_add(WPS_IN_CNT_EV_FRAGMENTS, n);
	return bpf_redirect(cfg->seg_ifindex, 0);
}

#endif
