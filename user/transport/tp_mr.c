// SPDX-License-Identifier: BSD-2-Clause
/*
 * Registered memory (URMA segments): a region is named on the wire by a
 * 20-bit TokenID (MAETAH) drawn at random, and a remote access to it is
 * checked against its token value (TVETAH), its access flags and its bounds
 * (tp.h "registered memory"; tp_mr_access(), which the target's
 * transaction layer, tp_rxmsg.c, asks).
 *
 * The table is internal: an open-addressing hash (linear probing, backward
 * shift on delete) keyed by TokenID, grown by doubling up to twice
 * max_mrs slots, so a lookup is O(1) expected however many regions there
 * are. TokenIDs are random, so a peer learns nothing of the others from the
 * ones it was given, and an ID nobody holds is refused like any other.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "transport/tp_mr.h"

/* A random 32-bit word for TokenIDs and token values: getrandom() unless
 * token_seed asked for a reproducible sequence. */
static uint32_t tok_rand(struct tp_ep *ep)
{
	uint64_t z;

	if (!ep->cfg.token_seed) {
		uint32_t v;

		if (getrandom(&v, sizeof(v), 0) == (ssize_t)sizeof(v))
			return v;
		/* No entropy source (very early boot): better than nothing. */
		if (!ep->tok_rng)
			ep->tok_rng = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)ep;
	}
	z = (ep->tok_rng += 0x9e3779b97f4a7c15ull);	/* splitmix64 */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)((z ^ (z >> 31)) >> 32);
}

static uint32_t slot_of(const struct tp_ep *ep, uint32_t token_id)
{
	return (token_id * 0x9e3779b1u) & (ep->mr_cap - 1);
}

struct tp_mr *tp_mr_find(struct tp_ep *ep, uint32_t token_id)
{
	if (!token_id || !ep->mr_cap)
		return NULL;
	for (uint32_t i = slot_of(ep, token_id);; i = (i + 1) & (ep->mr_cap - 1)) {
		struct tp_mr *mr = &ep->mrs[i];

		if (!mr->token_id)
			return NULL;
		if (mr->token_id == token_id)
			return mr;
	}
}

static void put(struct tp_ep *ep, const struct tp_mr *m)
{
	uint32_t i = slot_of(ep, m->token_id);

	while (ep->mrs[i].token_id)
		i = (i + 1) & (ep->mr_cap - 1);
	ep->mrs[i] = *m;
}

/* Keep the load at most 1/2: double the table (from 16 slots). */
static int grow(struct tp_ep *ep)
{
	uint32_t ncap = ep->mr_cap ? ep->mr_cap * 2 : 16, ocap = ep->mr_cap;
	struct tp_mr *old = ep->mrs, *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	ep->mrs = n;
	ep->mr_cap = ncap;
	for (uint32_t i = 0; i < ocap; i++)
		if (old[i].token_id)
			put(ep, &old[i]);
	free(old);
	return 0;
}

int tp_mr_register(struct tp_ep *ep, const struct tp_mr_cfg *cfg, uint32_t *token_id)
{
	struct tp_mr m;
	uint32_t id;

	if (!cfg || !cfg->addr || !cfg->len || !token_id ||
	    (cfg->access & ~(TP_ACCESS_LOCAL_ONLY | TP_ACCESS_REMOTE_ALL)) ||
	    ((cfg->access & TP_ACCESS_LOCAL_ONLY) && (cfg->access & TP_ACCESS_REMOTE_ALL)))
		return -EINVAL;
	if ((uintptr_t)cfg->addr + (cfg->len - 1) < (uintptr_t)cfg->addr ||
	    cfg->token_id > TP_TOKEN_ID_MAX)
		return -EINVAL;		/* wraps the address space; not a TokenID */
	if (cfg->token_id && tp_mr_find(ep, cfg->token_id))
		return -EEXIST;
	if (ep->nmrs >= ep->cfg.max_mrs)
		return -ENOSPC;
	if (2 * (ep->nmrs + 1) > ep->mr_cap && grow(ep))
		return -ENOMEM;
	/* Random, non-zero (a zeroed MAETAH names nothing), not in use. With at
	 * most 2^18 of the 2^20 IDs taken, a draw fails at most 1 time in 4. */
	id = cfg->token_id;
	while (!id || tp_mr_find(ep, id))
		id = tok_rand(ep) & TP_TOKEN_ID_MAX;
	m = (struct tp_mr){
		.token_id = id, .resident = true, .token_none = cfg->token_none,
		.addr = cfg->addr, .len = cfg->len, .access = cfg->access,
		.token_value = cfg->token_value,
	};
	put(ep, &m);
	ep->nmrs++;
	*token_id = id;
	return 0;
}

int tp_mr_reg(struct tp_ep *ep, void *addr, size_t len, struct tp_rkey *key)
{
	struct tp_mr_cfg c = { .addr = addr, .len = len, .access = TP_ACCESS_REMOTE_ALL,
			       .token_value = tok_rand(ep) };
	int rc;

	if (!key)
		return -EINVAL;
	rc = tp_mr_register(ep, &c, &key->token_id);
	if (!rc)
		key->token_value = c.token_value;
	return rc;
}

int tp_mr_dereg(struct tp_ep *ep, uint32_t token_id)
{
	struct tp_mr *mr = tp_mr_find(ep, token_id);
	uint32_t i, j, mask = ep->mr_cap - 1;

	if (!mr)
		return -ENOENT;
	/* Backward shift: every entry after the hole in its probe run moves
	 * up if its home slot allows, so lookups never need tombstones. */
	i = (uint32_t)(mr - ep->mrs);
	memset(mr, 0, sizeof(*mr));
	for (j = (i + 1) & mask; ep->mrs[j].token_id; j = (j + 1) & mask) {
		uint32_t home = slot_of(ep, ep->mrs[j].token_id);

		/* j may move to i if home is not in (i, j] (cyclically). */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			ep->mrs[i] = ep->mrs[j];
			memset(&ep->mrs[j], 0, sizeof(ep->mrs[j]));
			i = j;
		}
	}
	ep->nmrs--;
	return 0;
}

int tp_mr_set_resident(struct tp_ep *ep, uint32_t token_id, bool resident)
{
	struct tp_mr *mr = tp_mr_find(ep, token_id);

	if (!mr)
		return -ENOENT;
	mr->resident = resident;
	return 0;
}

static uint8_t *refuse(enum tp_status *st, uint8_t *info, uint8_t why)
{
	*st = TP_ST_COMPLETER_ERR;
	*info = why;
	return NULL;
}

uint8_t *tp_mr_access(struct tp_ep *ep, const struct tp_parsed *p, uint64_t va, size_t len,
		      uint32_t need, enum tp_status *st, uint8_t *info)
{
	struct tp_mr *mr = tp_mr_find(ep, p->mae.token_id);
	uint64_t base;

	if (!mr)
		return refuse(st, info, TP_RSPINFO_BAD_TOKEN);
	if (!mr->token_none && (!p->has_tvetah || p->token_value != mr->token_value))
		return refuse(st, info, TP_RSPINFO_TOKEN_VALUE);
	if (!(mr->access & need))
		return refuse(st, info, TP_RSPINFO_ACCESS);
	base = (uint64_t)(uintptr_t)mr->addr;
	if (va < base || va - base > mr->len || len > mr->len - (va - base))
		return refuse(st, info, TP_RSPINFO_RANGE);
	if (need == TP_ACCESS_ATOMIC && (va & (TP_ATOMIC_LEN - 1)))
		return refuse(st, info, TP_RSPINFO_ALIGN);
	if (!mr->resident) {
		*st = TP_ST_PAGE_FAULT;
		return NULL;
	}
	*st = TP_ST_OK;
	return mr->addr + (va - base);
}

uint32_t tp_mr_count(const struct tp_ep *ep) { return ep->nmrs; }

void tp_mr_free(struct tp_ep *ep)
{
	free(ep->mrs);
	ep->mrs = NULL;
	ep->mr_cap = ep->nmrs = 0;
}
