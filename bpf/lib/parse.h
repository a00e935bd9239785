/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Header-cursor parsing for XDP and TC programs. Each parse_* bounds-checks
 * one header, advances the cursor past it and returns what comes next (or -1
 * when the header does not fit). The caller decides what "does not fit" means
 * for its role: truncated UB is dropped, truncated foreign traffic is passed.
 */
#ifndef UBXDP_PARSE_H
#define UBXDP_PARSE_H

#include <linux/types.h>
#include <stdbool.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct hdr_cursor {
	void *pos;
	void *end;
};

#define cursor_fits(c, len) ((void *)(c)->pos + (len) <= (c)->end)

/* Take `len` bytes at the cursor; NULL when the packet is shorter. */
static __always_inline void *cursor_pull(struct hdr_cursor *c, __u32 len)
{
	void *p = c->pos;

	if (p + len > c->end)
		return NULL;
	c->pos = p + len;
	return p;
}

/*
 * Move the cursor past `len` bytes at c->pos, which the caller already holds;
 * false when the packet is shorter. Unlike cursor_pull there is no NULL
 * result to test again after the bounds test.
 */
static __always_inline bool cursor_skip(struct hdr_cursor *c, __u32 len)
{
	if (c->pos + len > c->end)
		return false;
	c->pos += len;
	return true;
}

/* Returns the EtherType (network order) or -1. */
static __always_inline int parse_ethhdr(struct hdr_cursor *c, struct ethhdr **eth)
{
	*eth = cursor_pull(c, sizeof(**eth));
	return *eth ? (*eth)->h_proto : -1;
}

struct vlan_tag {
	__be16 tci;
	__be16 proto;
};

/* One 802.1Q tag. Returns the inner EtherType (network order) or -1. */
static __always_inline int parse_vlan(struct hdr_cursor *c, __u16 *vid)
{
	struct vlan_tag *v = cursor_pull(c, sizeof(*v));

	if (!v)
		return -1;
	*vid = bpf_ntohs(v->tci) & 0x0fff;
	return v->proto;
}

/* Fixed 20-byte IPv4 header (options are the caller's business). Returns protocol or -1. */
static __always_inline int parse_iphdr(struct hdr_cursor *c, struct iphdr **iph)
{
	*iph = cursor_pull(c, sizeof(**iph));
	return *iph ? (*iph)->protocol : -1;
}

/* Returns the next header or -1; extension headers are the caller's business. */
static __always_inline int parse_ip6hdr(struct hdr_cursor *c, struct ipv6hdr **ip6h)
{
	*ip6h = cursor_pull(c, sizeof(**ip6h));
	return *ip6h ? (*ip6h)->nexthdr : -1;
}

/* Returns the destination port (host order) or -1. */
static __always_inline int parse_udphdr(struct hdr_cursor *c, struct udphdr **udph)
{
	*udph = cursor_pull(c, sizeof(**udph));
	return *udph ? bpf_ntohs((*udph)->dest) : -1;
}

#endif
