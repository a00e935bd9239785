/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Ethernet CAQM tag (headers/ub_wire.h, docs/WIRE.md §5) for the UB2E switch
 * and the CAQM stage: what UB -> UBoE inserts after the Ethernet/802.1Q
 * header when the CCI asks for CAQM, what UBoE -> UB reads back into the CCI
 * and removes. Kept apart from the conversion programs so the fast path's
 * own code stays as it is when the tag is off.
 */
#ifndef UBXDP_CAQM_TAG_H
#define UBXDP_CAQM_TAG_H

#include <stdbool.h>
#include <linux/types.h>
#include <bpf/bpf_endian.h>

#include "ub_wire.h"
#include "ub2e_maps.h"
#include "parse.h"

/* UB -> UBoE: the tag's length when this CCI crosses the IP segment in one
 * (the switch tags and the CCI is a CAQM one), else 0. */
static __always_inline int caqm_tag_len(const struct ub2e_cfg *cfg, __u16 cci)
{
	return (cfg->flags & UB2E_F_CAQM_TAG) && ub_cci_mode(cci) == UB_CCI_MODE_CAQM ?
	       UB_CAQM_TAG_LEN : 0;
}

/* UB -> UBoE: write the tag at `t` (already bounds-checked), for `cci`, in front of `proto`. */
static __always_inline void caqm_tag_write(struct ub_caqm_tag *t, __u16 cci, __be16 proto)
{
	t->info = bpf_htons(ub_cci_to_caqm_tag(cci));
	t->proto = proto;
}

/*
 * UBoE -> UB: the info of "no tag came". cc_type 111 is none a tag defines, so
 * caqm_tag_cci() and caqm_tag_slow() treat it as they treat a tag of another
 * type, which is what they must do without a tag: FECN CCI, no request. The
 * fast path then needs no separate "a tag came" flag across the FIB lookup.
 */
#define UB2E_TAG_NONE	0xffffu

/*
 * UBoE -> UB: when `*proto` is the switch's tag EtherType, take the tag at
 * the cursor, return its info in *info and the EtherType it carries in
 * *proto. Returns the bytes taken (0: no tag, -1: the tag is cut short).
 */
static __always_inline int caqm_tag_pull(const struct ub2e_cfg *cfg, struct hdr_cursor *c,
					 int *proto, __u16 *info)
{
	struct ub_caqm_tag *t;

	if (!(cfg->flags & UB2E_F_CAQM_TAG) || *proto != bpf_htons(cfg->caqm_ethertype))
		return 0;
	t = cursor_pull(c, sizeof(*t));
	if (!t)
		return -1;
	*info = bpf_ntohs(t->info);
	*proto = t->proto;
	return UB_CAQM_TAG_LEN;
}

/* UBoE -> UB: the CCI from a tag; only cc_type 000 (CAQM) is defined, other types give none. */
static __always_inline bool caqm_tag_cci(__u16 info, __u16 *cci)
{
	if (info >> UB_CAQM_TAG_TYPE_SHIFT != UB_CCI_MODE_CAQM)
		return false;
	*cci = ub_caqm_tag_to_cci(info);
	return true;
}

/* The slow path's word for a tag's info (headers/ub2e_maps.h): a CAQM one, else 0. */
static __always_inline __u32 caqm_tag_slow(__u16 info)
{
	return info >> UB_CAQM_TAG_TYPE_SHIFT == UB_CCI_MODE_CAQM ?
	       UB2E_SLOW_CAQM | (info & UB2E_SLOW_CAQM_INFO) : 0;
}

#endif
