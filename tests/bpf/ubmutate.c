// SPDX-License-Identifier: BSD-2-Clause
/* Seeded frame damage for the fuzzers (see ubmutate.h). */
#include "ubmutate.h"

#include <string.h>

#include "ubref.h"

uint64_t fz_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t fz_rnd(struct fz_rng *g, uint32_t n)	/* 0..n-1 */
{
	return n ? (uint32_t)(fz_splitmix(&g->s) % n) : 0;
}

bool fz_chance(struct fz_rng *g, unsigned pct)
{
	return fz_rnd(g, 100) < pct;
}

void fz_bytes(struct fz_rng *g, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)fz_rnd(g, 256);
}


/* Where the headers of a native or UBoE frame would be, whatever it holds. */
struct layout {
	size_t l2, ip, hl, udp, tph;
};

static void layout_of(const uint8_t *f, size_t len, bool native, struct layout *l)
{
	l->l2 = 14;
	if (native)
		l->l2 = 24;
	else if (len >= 18 && ref_get16(f + 12) == 0x8100)
		l->l2 = 18;
	l->ip = l->l2;
	l->hl = 40;
	if (len > l->ip && f[l->ip] >> 4 == 4)
		l->hl = (f[l->ip] & 15u) * 4 < 20 ? 20 : (f[l->ip] & 15u) * 4;
	l->udp = l->ip + l->hl;
	l->tph = l->udp + 8;
}

static void fix_sums(struct fz_rng *g, uint8_t *f, size_t len, bool native)
{
	struct layout l;
	uint8_t *ip;
	size_t ip_len;

	layout_of(f, len, native, &l);
	if (len < l.ip + 20)
		return;
	ip = f + l.ip;
	if (ip[0] >> 4 == 4 && (ip[0] & 15) >= 5 && len >= l.ip + (ip[0] & 15u) * 4 && fz_chance(g, 60))
		ref_ipv4_csum_fix(ip, (ip[0] & 15u) * 4);
	ip_len = ip[0] >> 4 == 4 ? ref_get16(ip + 2) : len >= l.ip + 40 ? ref_get16(ip + 4) + 40u : 0;
	if (ip_len >= l.hl + 8 && l.ip + ip_len <= len && fz_chance(g, 60))
		ref_icrc_fix(ip, ip_len);
}

size_t fz_mutate(struct fz_rng *g, uint8_t *f, size_t len, size_t cap, bool native)
{
	for (int n = 1 + (int)fz_rnd(g, 3); n > 0; n--) {
		struct layout l;
		size_t at, sz;

		layout_of(f, len, native, &l);
		switch (fz_rnd(g, 12)) {
		case 0:	/* bit flips anywhere */
			for (int k = 1 + (int)fz_rnd(g, 4); k > 0 && len; k--)
				f[fz_rnd(g, (uint32_t)len)] ^= (uint8_t)(1u << fz_rnd(g, 8));
			break;
		case 1: { /* random bytes over one header */
			static const size_t hdr_len[] = { 14, 10, 20, 8, 16 };
			size_t starts[] = { 0, 14, l.ip, l.udp, l.tph };
			unsigned h = fz_rnd(g, 5);

			at = starts[h];
			sz = h == 1 ? l.l2 - 14 : h == 2 ? l.hl : hdr_len[h];
			for (size_t i = at; i < at + sz && i < len; i++)
				f[i] = (uint8_t)fz_rnd(g, 256);
			break;
		}
		case 2:	/* truncation */
			len = fz_chance(g, 50) ? fz_rnd(g, (uint32_t)len + 1) : len - (len ? fz_rnd(g, len < 9 ? (uint32_t)len : 9) : 0);
			break;
		case 3:	/* trailing bytes */
			sz = 1 + fz_rnd(g, 64);
			if (len + sz <= cap) {
				fz_bytes(g, f + len, sz);
				len += sz;
			}
			break;
		case 4: { /* lengths that lie */
			size_t at4[] = { l.ip + 2, l.ip + 4, l.udp + 4 };
			unsigned old, v;

			if (l.udp + 6 <= len && fz_chance(g, 40)) {
				/* IP and UDP agree with each other, not with the frame: a short
				 * packet in a padded frame, or one with no room for TPH and ICRC. */
				bool v4 = f[l.ip] >> 4 == 4;
				unsigned ip_len = (unsigned)l.hl + fz_rnd(g, 8 + 16 + 4 + 16);

				ref_put16(f + l.ip + (v4 ? 2 : 4), v4 ? ip_len : ip_len - 40);
				ref_put16(f + l.udp + 4, ip_len - (unsigned)l.hl);
				break;
			}
			at = at4[fz_rnd(g, 3)];
			if (at + 2 > len)
				break;
			old = ref_get16(f + at);
			v = fz_chance(g, 30) ? fz_rnd(g, 0x10000) : (old + (fz_chance(g, 50) ? 1 : 0xffff) * (1 + fz_rnd(g, 8))) & 0xffff;
			ref_put16(f + at, v);
			break;
		}
		case 5: { /* values at the edges of a rule */
			unsigned which = fz_rnd(g, 10);

			if (len < l.tph + 1)
				break;
			if (which == 0)
				f[l.ip + (f[l.ip] >> 4 == 4 ? 8 : 7)] = (uint8_t)fz_rnd(g, 3);	/* TTL 0..2 */
			else if (which == 1)
				f[l.ip] = (uint8_t)(fz_rnd(g, 16) << 4 | (f[l.ip] & 15));	/* version */
			else if (which == 2)
				f[l.ip] = (uint8_t)((f[l.ip] & 0xf0) | fz_rnd(g, 16));	/* IHL, TC */
			else if (which == 3)
				f[l.ip + (f[l.ip] >> 4 == 4 ? 9 : 6)] = (uint8_t)(fz_chance(g, 50) ? 6 : fz_rnd(g, 256));
			else if (which == 4 && f[l.ip] >> 4 == 4)
				ref_put16(f + l.ip + 6, (unsigned[]){ 0x2000, 0x0001, 0x6000, 0x1fff, 0 }[fz_rnd(g, 5)]);
			else if (which == 5)
				f[l.tph] = (uint8_t)fz_rnd(g, 256);			/* TP opcode */
			else if (which == 6)
				ref_put16(f + l.udp + 2, fz_chance(g, 50) ? 4791 + fz_rnd(g, 3) : fz_rnd(g, 0x10000));
			else if (which == 7 && native)
				f[15] = (uint8_t)((f[15] & 0xf0) | fz_rnd(g, 16));	/* LPH Config */
			else if (which == 8 && native)
				memcpy(f + 21, (const uint8_t *[]){ (const uint8_t *)"\0\0\0", (const uint8_t *)"\0\x0f\xff",
					(const uint8_t *)"\0\x10\0", (const uint8_t *)"\xff\xff\xff" }[fz_rnd(g, 4)], 3);
			else if (which == 9 && native)
				ref_put16(f + 18, fz_rnd(g, 0x10000));			/* CCI */
			else if (which == 9 && l.l2 == 18)
				ref_put16(f + 14, fz_chance(g, 50) ? 0xfff : fz_rnd(g, 0x10000));	/* TCI */
			break;
		}
		case 6:	/* EtherType, or an 802.1Q tag in or out */
			if (len < 14)
				break;
			if (!native && l.l2 == 18 && fz_chance(g, 50)) {
				memmove(f + 12, f + 16, len - 16);
				len -= 4;
			} else if (!native && l.l2 == 14 && len + 4 <= cap && fz_chance(g, 50)) {
				memmove(f + 16, f + 12, len - 12);
				ref_put16(f + 12, 0x8100);
				ref_put16(f + 14, fz_rnd(g, 0x10000));
				len += 4;
			} else {
				ref_put16(f + 12, (unsigned[]){ 0x0800, 0x86dd, 0x8100, 0x88b5, 0x88a8,
					fz_rnd(g, 0x10000) }[fz_rnd(g, 6)]);
			}
			break;
		case 7:	/* destination MAC */
			if (len >= 6)
				f[0] |= 1;
			break;
		case 8:	/* random bytes in the IP header */
		case 9:
			for (int k = 1 + (int)fz_rnd(g, 3); k > 0; k--) {
				at = l.ip + fz_rnd(g, (uint32_t)l.hl);
				if (at < len)
					f[at] = (uint8_t)fz_rnd(g, 256);
			}
			break;
		default: /* bit flips in the first 80 bytes */
			for (int k = 1 + (int)fz_rnd(g, 3); k > 0 && len; k--)
				f[fz_rnd(g, len < 80 ? (uint32_t)len : 80)] ^= (uint8_t)(1u << fz_rnd(g, 8));
			break;
		}
	}
	if (fz_chance(g, 70))
		fix_sums(g, f, len, native);
	return len;
}
