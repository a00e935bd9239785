// SPDX-License-Identifier: BSD-2-Clause
/*
 * What the URMA API (user/urma) needs of the transport core, over the
 * deterministic simulated link: registered regions with random TokenIDs,
 * token values and access flags, every refusal checked byte for byte
 * ("nothing written", "nothing read"); SGE lists; Send and Write with
 * immediate; CAS and FADD; inline data and the fence.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "tp_pair.h"
#include "lib/ubhdr.h"

#define US 1000ull
#define MS 1000000ull

static void chan_cfg(struct tp_chan_config c[2], enum tp_mode mode, enum tp_ta_mode ta)
{
	memset(c, 0, 2 * sizeof(*c));
	for (int i = 0; i < 2; i++) {
		c[i].mode = mode;
		c[i].ta_mode = ta;
		c[i].mtu = 256;
		c[i].window = 64;
		c[i].ooo_range = 128;
		c[i].rto_static_ns = 200 * US;
		c[i].retry_limit = 12;
		c[i].rnr_retry = 2;
		c[i].rnr_delay_ns = 20 * US;
	}
}

/* A pair with no Send workload; loss both ways; UBoE frames on the link. */
static void setup(struct tp_pair *p, enum tp_mode mode, enum tp_ta_mode ta, double loss,
		  uint64_t seed)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;

	chan_cfg(c, mode, ta);
	pair_link_cfg(&s, seed);
	s.frames = mode != TP_MODE_CTP;
	for (int i = 0; i < 2; i++) {
		s.dir[i].loss_data = loss;
		s.dir[i].loss_resp = loss;
	}
	assert_int_equal(pair_init(p, c, &s, 0, 64, seed), 0);
}

/* Every event of both endpoints, until `want` of ep 0 (and want1 of ep 1). */
#define EVMAX 64
struct evs {
	struct tp_pair *p;
	struct tp_event ev[2][EVMAX];
	int n[2], want[2];
};

static bool evs_done(void *ctx)
{
	struct evs *e = ctx;
	struct tp_event ev;

	for (int i = 0; i < 2; i++)
		while (tp_ep_poll(e->p->ep[i], &ev))
			if (e->n[i] < EVMAX)
				e->ev[i][e->n[i]++] = ev;
	return e->n[0] >= e->want[0] && e->n[1] >= e->want[1];
}

static void run_evs(struct tp_pair *p, struct evs *e, int want0, int want1)
{
	memset(e, 0, sizeof(*e));
	e->p = p;
	e->want[0] = want0;
	e->want[1] = want1;
	if (!tp_sim_run(p->sim, tp_sim_now(p->sim) + 500 * MS, evs_done, e))
		fail_msg("ran out of time: %d/%d and %d/%d events", e->n[0], want0, e->n[1], want1);
}

/* One operation of ep 0: its completion. */
static struct tp_event run_op(struct tp_pair *p)
{
	struct evs e;

	run_evs(p, &e, 1, 0);
	return e.ev[0][0];
}

static struct tp_stats stats(struct tp_chan *ch)
{
	struct tp_stats st;

	tp_chan_stats(ch, &st);
	return st;
}

static struct tp_rkey rkey(uint32_t id, uint32_t value)
{
	return (struct tp_rkey){ .token_id = id, .token_value = value };
}

/* ---- registered memory: TokenIDs ------------------------------------------ */

/*
 * TokenIDs are random 20-bit values, never 0, never two alike, not slot
 * numbers; thousands of regions are found again, deregistered ones are not,
 * and freed slots serve again. Without token_seed two endpoints draw
 * different ones (getrandom).
 */
static void token_ids_random_many(void **state)
{
	enum { N = 5000 };
	static uint32_t id[N];
	static uint8_t buf[N];
	struct tp_ep_config ec = { .seed = 1, .max_mrs = N, .token_seed = 77 };
	struct tp_ep *ep = tp_ep_create(&ec), *a, *b;
	struct tp_mr_cfg c = { .len = 1, .access = TP_ACCESS_REMOTE_ALL };
	uint32_t consecutive = 0, small = 0, x, y;

	(void)state;
	assert_non_null(ep);
	for (int i = 0; i < N; i++) {
		c.addr = &buf[i];
		c.token_value = (uint32_t)i;
		assert_int_equal(tp_mr_register(ep, &c, &id[i]), 0);
		assert_true(id[i] >= 1 && id[i] <= TP_TOKEN_ID_MAX);
		if (i && id[i] == id[i - 1] + 1)
			consecutive++;
		if (id[i] <= N)
			small++;
	}
	/* Slot numbers would be 1..N in order; random IDs fall there ~0.5 %. */
	assert_true(consecutive < 5);
	assert_true(small < N / 50);
	for (int i = 0; i < N; i++)
		for (int k = i + 1; k < N; k++)
			if (id[i] == id[k])
				fail_msg("TokenID %u given twice", id[i]);
	assert_int_equal(tp_mr_count(ep), N);
	c.addr = buf;
	assert_int_equal(tp_mr_register(ep, &c, &x), -ENOSPC);
	/* Every other one goes; the rest are still found, the others not. */
	for (int i = 0; i < N; i += 2)
		assert_int_equal(tp_mr_dereg(ep, id[i]), 0);
	assert_int_equal(tp_mr_count(ep), N / 2);
	for (int i = 0; i < N; i++)
		assert_int_equal(tp_mr_set_resident(ep, id[i], true), i % 2 ? 0 : -ENOENT);
	assert_int_equal(tp_mr_dereg(ep, id[0]), -ENOENT);
	assert_int_equal(tp_mr_dereg(ep, 0), -ENOENT);
	for (int i = 0; i < N; i += 2)
		assert_int_equal(tp_mr_register(ep, &c, &id[i]), 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(tp_mr_set_resident(ep, id[i], true), 0);
	/* Bad configurations. */
	for (int i = 1; i < N; i += 2)
		assert_int_equal(tp_mr_dereg(ep, id[i]), 0);
	c.access = TP_ACCESS_LOCAL_ONLY | TP_ACCESS_READ;
	assert_int_equal(tp_mr_register(ep, &c, &x), -EINVAL);
	c.access = 0x10;
	assert_int_equal(tp_mr_register(ep, &c, &x), -EINVAL);
	c.access = TP_ACCESS_READ;
	c.len = 0;
	assert_int_equal(tp_mr_register(ep, &c, &x), -EINVAL);
	tp_ep_destroy(ep);

	/* getrandom: two endpoints, the same seeds otherwise, other IDs. */
	ec.token_seed = 0;
	a = tp_ep_create(&ec);
	b = tp_ep_create(&ec);
	c = (struct tp_mr_cfg){ .addr = buf, .len = 1, .access = TP_ACCESS_READ };
	assert_int_equal(tp_mr_register(a, &c, &x), 0);
	assert_int_equal(tp_mr_register(b, &c, &y), 0);
	if (x == y) {	/* 1 in 2^20: one more draw each */
		assert_int_equal(tp_mr_register(a, &c, &x), 0);
		assert_int_equal(tp_mr_register(b, &c, &y), 0);
	}
	assert_int_not_equal(x, y);
	tp_ep_destroy(a);
	tp_ep_destroy(b);
	ec.max_mrs = TP_MRS_MAX + 1;
	assert_null(tp_ep_create(&ec));
}

/*
 * A TokenID the caller gives (liburma's segment, one region in every
 * worker's core): taken as given, refused when taken or over 20 bits, and
 * the random draws that follow avoid it.
 */
static void token_id_given(void **state)
{
	struct tp_ep_config ec = { .seed = 1, .max_mrs = 64, .token_seed = 5 };
	struct tp_ep *a = tp_ep_create(&ec), *b;
	static uint8_t buf[64];
	struct tp_mr_cfg c = { .addr = buf, .len = sizeof(buf), .access = TP_ACCESS_READ };
	uint32_t x, y, z;

	(void)state;
	ec.token_seed = 6;	/* b draws others than a */
	b = tp_ep_create(&ec);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(tp_mr_register(a, &c, &x), 0);
	c.token_id = x;
	assert_int_equal(tp_mr_register(b, &c, &y), 0);
	assert_int_equal(y, x);
	assert_int_equal(tp_mr_register(b, &c, &y), -EEXIST);
	c.token_id = TP_TOKEN_ID_MAX + 1;
	assert_int_equal(tp_mr_register(b, &c, &y), -EINVAL);
	c.token_id = TP_TOKEN_ID_MAX;
	assert_int_equal(tp_mr_register(b, &c, &y), 0);
	assert_int_equal(y, TP_TOKEN_ID_MAX);
	assert_int_equal(tp_mr_count(b), 2);
	/* b's own draws: never one it holds. */
	c.token_id = 0;
	for (int i = 0; i < 60; i++) {
		assert_int_equal(tp_mr_register(b, &c, &z), 0);
		assert_true(z != x && z != TP_TOKEN_ID_MAX);
	}
	assert_int_equal(tp_mr_dereg(b, x), 0);
	assert_int_equal(tp_mr_set_resident(a, x, true), 0);
	tp_ep_destroy(a);
	tp_ep_destroy(b);
}

/* ---- registered memory: every refusal, nothing written or read ----------- */

#define RLEN 4096

struct region {
	uint8_t *mem;			/* RLEN bytes */
	uint8_t snap[RLEN];		/* what it held before the refused access */
	uint32_t id, value;
};

static void region_reg(struct tp_pair *p, struct region *r, uint8_t *mem, uint32_t access,
		       uint32_t value, bool token_none)
{
	struct tp_mr_cfg c = { .addr = mem, .len = RLEN, .access = access,
			       .token_value = value, .token_none = token_none };

	r->mem = mem;
	r->value = value;
	for (int i = 0; i < RLEN; i++)
		mem[i] = (uint8_t)(i * 31 + value);
	assert_int_equal(tp_mr_register(p->ep[1], &c, &r->id), 0);
}

/* A Write that must be refused with `info`: not one byte of the region moves. */
static void write_refused(struct tp_pair *p, struct region *r, uint64_t off, size_t len,
			  struct tp_rkey k, uint8_t info)
{
	static uint8_t src[RLEN + 64];
	struct tp_event ev;

	memcpy(r->snap, r->mem, RLEN);
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)~r->snap[i % RLEN];
	assert_int_equal(tp_post_write(p->ch[0], src, len, (uintptr_t)r->mem + off, k, 77), 0);
	ev = run_op(p);
	assert_int_equal(ev.type, TP_EV_WRITE_DONE);
	assert_int_equal(ev.wr_id, 77);
	assert_int_equal(ev.status, TP_ST_COMPLETER_ERR);
	assert_int_equal(ev.rspinfo, info);
	assert_memory_equal(r->mem, r->snap, RLEN);
}

/* A Read that must be refused with `info`: nothing lands in the buffer. */
static void read_refused(struct tp_pair *p, struct region *r, uint64_t off, size_t len,
			 struct tp_rkey k, uint8_t info)
{
	static uint8_t dst[RLEN + 64], was[RLEN + 64];
	struct tp_event ev;

	memset(dst, 0xee, sizeof(dst));
	memcpy(was, dst, sizeof(dst));
	memcpy(r->snap, r->mem, RLEN);
	assert_int_equal(tp_post_read(p->ch[0], dst, len, (uintptr_t)r->mem + off, k, 78), 0);
	ev = run_op(p);
	assert_int_equal(ev.type, TP_EV_READ_DONE);
	assert_int_equal(ev.status, TP_ST_COMPLETER_ERR);
	assert_int_equal(ev.rspinfo, info);
	assert_int_equal(ev.len, 0);
	assert_memory_equal(dst, was, sizeof(dst));
	assert_memory_equal(r->mem, r->snap, RLEN);
}

static void write_ok(struct tp_pair *p, struct region *r, uint64_t off, size_t len,
		     struct tp_rkey k)
{
	static uint8_t src[RLEN];
	struct tp_event ev;

	for (size_t i = 0; i < len; i++)
		src[i] = (uint8_t)(i * 7 + off + 3);
	assert_int_equal(tp_post_write(p->ch[0], src, len, (uintptr_t)r->mem + off, k, 79), 0);
	ev = run_op(p);
	assert_int_equal(ev.type, TP_EV_WRITE_DONE);
	assert_int_equal(ev.status, TP_ST_OK);
	assert_memory_equal(r->mem + off, src, len);
}

static void read_ok(struct tp_pair *p, struct region *r, uint64_t off, size_t len,
		    struct tp_rkey k)
{
	static uint8_t dst[RLEN];
	struct tp_event ev;

	memset(dst, 0, sizeof(dst));
	assert_int_equal(tp_post_read(p->ch[0], dst, len, (uintptr_t)r->mem + off, k, 80), 0);
	ev = run_op(p);
	assert_int_equal(ev.type, TP_EV_READ_DONE);
	assert_int_equal(ev.status, TP_ST_OK);
	assert_int_equal(ev.len, len);
	assert_memory_equal(dst, r->mem + off, len);
}

/*
 * Token value, TokenID, range and access flags, on RTP (ROL and ROI, lossy)
 * and CTP: every refusal leaves the region (and a Read's buffer) as it was,
 * is counted by reason at the target and shows its RSPINFO at the initiator.
 */
static void tokens_and_access(void **state)
{
	static const struct { enum tp_mode mode; enum tp_ta_mode ta; double loss; } runs[] = {
		{ TP_MODE_RTP_SR, TP_TA_ROL, 0.03 },
		{ TP_MODE_RTP_GBN, TP_TA_ROI, 0.03 },
		{ TP_MODE_CTP, TP_TA_ROI, 0 },
	};
	static uint8_t mem[5][RLEN];

	(void)state;
	for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		struct region rw, ro, wo, lo, none;
		struct tp_pair p;
		struct tp_stats t;
		bool ctp = runs[k].mode == TP_MODE_CTP;
		size_t big = ctp ? 200 : 1000;	/* CTP: one packet */

		setup(&p, runs[k].mode, runs[k].ta, runs[k].loss, 40 + k);
		region_reg(&p, &rw, mem[0], TP_ACCESS_READ | TP_ACCESS_WRITE, 0x11111111, false);
		region_reg(&p, &ro, mem[1], TP_ACCESS_READ, 0x22222222, false);
		region_reg(&p, &wo, mem[2], TP_ACCESS_WRITE, 0x33333333, false);
		region_reg(&p, &lo, mem[3], TP_ACCESS_LOCAL_ONLY, 0x44444444, false);
		region_reg(&p, &none, mem[4], TP_ACCESS_REMOTE_ALL, 0x55555555, true);

		write_ok(&p, &rw, 100, big, rkey(rw.id, rw.value));
		read_ok(&p, &rw, 100, big, rkey(rw.id, rw.value));
		/* Wrong token value; the value of another region. */
		write_refused(&p, &rw, 0, big, rkey(rw.id, rw.value ^ 1), TP_RSPINFO_TOKEN_VALUE);
		write_refused(&p, &rw, 0, 8, rkey(rw.id, ro.value), TP_RSPINFO_TOKEN_VALUE);
		read_refused(&p, &rw, 0, big, rkey(rw.id, 0), TP_RSPINFO_TOKEN_VALUE);
		/* Unknown TokenID (a neighbour of a real one, and 0). */
		write_refused(&p, &rw, 0, big, rkey(rw.id ^ 0x40, rw.value), TP_RSPINFO_BAD_TOKEN);
		read_refused(&p, &rw, 0, 16, rkey(0, rw.value), TP_RSPINFO_BAD_TOKEN);
		/* Out of range: past the end by one byte, before the start, huge. */
		write_refused(&p, &rw, RLEN - 99, 100, rkey(rw.id, rw.value), TP_RSPINFO_RANGE);
		write_refused(&p, &rw, (uint64_t)-8, 16, rkey(rw.id, rw.value), TP_RSPINFO_RANGE);
		read_refused(&p, &rw, RLEN, 1, rkey(rw.id, rw.value), TP_RSPINFO_RANGE);
		/* The same region through the other's TokenID: its own value is
		 * checked first, then the range of that one. */
		write_refused(&p, &ro, 0, 8, rkey(rw.id, ro.value), TP_RSPINFO_TOKEN_VALUE);
		/* Access flags. */
		write_refused(&p, &ro, 0, 8, rkey(ro.id, ro.value), TP_RSPINFO_ACCESS);
		read_ok(&p, &ro, 0, 64, rkey(ro.id, ro.value));
		read_refused(&p, &wo, 0, 8, rkey(wo.id, wo.value), TP_RSPINFO_ACCESS);
		write_ok(&p, &wo, 0, 64, rkey(wo.id, wo.value));
		write_refused(&p, &lo, 0, 8, rkey(lo.id, lo.value), TP_RSPINFO_ACCESS);
		read_refused(&p, &lo, 0, 8, rkey(lo.id, lo.value), TP_RSPINFO_ACCESS);
		/* URMA_TOKEN_NONE: any value; range still checked. */
		write_ok(&p, &none, 10, 20, rkey(none.id, 12345));
		read_ok(&p, &none, 10, 20, rkey(none.id, 0));
		write_refused(&p, &none, RLEN - 4, 8, rkey(none.id, 0), TP_RSPINFO_RANGE);
		/* Deregistered: the TokenID names nothing any more. */
		assert_int_equal(tp_mr_dereg(p.ep[1], rw.id), 0);
		write_refused(&p, &rw, 0, 8, rkey(rw.id, rw.value), TP_RSPINFO_BAD_TOKEN);

		t = stats(p.ch[1]);
		print_message("# %s %s: rtx %llu, refused %llu\n", tp_mode_name(runs[k].mode),
			      runs[k].ta == TP_TA_ROL ? "rol" : "roi",
			      (unsigned long long)(stats(p.ch[0]).rtx_rto + stats(p.ch[0]).rtx_sack +
						   stats(p.ch[0]).rtx_nak),
			      (unsigned long long)t.ta_completer_err);
		assert_int_equal(t.ta_bad_token_value, 4);
		assert_int_equal(t.ta_bad_token_id, 3);
		assert_int_equal(t.ta_bad_range, 4);
		assert_int_equal(t.ta_bad_access, 4);
		assert_int_equal(t.ta_completer_err, 15);
		assert_int_equal(stats(p.ch[0]).ta_bad_token_value, 0);
		pair_free(&p);
	}
}

/*
 * A TVETAH-less Write (TV_EN 0, as a peer that does not know the token
 * would send) is refused as a wrong token value: the packet is built by
 * hand, the region stays as it was.
 */
static void write_without_tvetah(void **state)
{
	static uint8_t mem[RLEN], was[RLEN];
	struct tp_ep_config ec = { .seed = 3, .token_seed = 3 };
	struct tp_chan_config c = { .mtu = 256 };
	struct tp_ep *ep = tp_ep_create(&ec);
	struct tp_chan *ch = tp_chan_create(ep, &c);
	struct tp_rkey k;
	uint8_t b[512];
	struct ub_tph_fields h = { .opcode = UB_TP_RTP_DATA, .last = true, .nlp = UB_NLP_TAH,
				   .ackreq = true, .src_tpn = 9, .psn = 100 };
	struct ub_tah_fields a = { .opcode = UB_TA_WRITE, .ini_tassn = 1, .order = 1 };
	struct ub_maetah_fields m = { .va = (uintptr_t)mem, .length = 32 };
	struct tp_stats st;
	size_t n;

	(void)state;
	assert_non_null(ch);
	assert_int_equal(tp_chan_connect(ch, 9, 100), 0);
	assert_int_equal(tp_mr_reg(ep, mem, sizeof(mem), &k), 0);
	memset(mem, 0x42, sizeof(mem));
	memcpy(was, mem, sizeof(mem));
	h.dst_tpn = tp_chan_tpn(ch);
	m.token_id = k.token_id;
	ub_tph_encode((struct ub_tph *)b, &h);
	ub_tah_encode((struct ub_tah *)(b + 16), &a);
	ub_maetah_encode((struct ub_maetah *)(b + 24), &m);
	n = 40;
	memset(b + n, 0x99, 32);
	n += 32;
	assert_int_equal(tp_ep_rx(ep, 0, b, n, NULL), TP_RX_OK);
	assert_memory_equal(mem, was, sizeof(mem));
	tp_chan_stats(ch, &st);
	assert_int_equal(st.ta_bad_token_value, 1);
	tp_ep_destroy(ep);
}

/* A 1 GiB region (mapped, never touched but where written): its last bytes
 * are written and read back; one byte past it is refused. */
static void large_region(void **state)
{
	const size_t gib = 1ull << 30;
	uint8_t *mem = mmap(NULL, gib, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	static uint8_t src[3000], dst[3000];
	struct tp_mr_cfg c = { .len = gib, .access = TP_ACCESS_REMOTE_ALL, .token_value = 0xabc };
	struct tp_pair p;
	struct tp_event ev;
	uint32_t id;
	uint64_t end;

	(void)state;
	if (mem == MAP_FAILED)
		skip();
	setup(&p, TP_MODE_RTP_SR, TP_TA_ROL, 0.01, 9);
	c.addr = mem;
	assert_int_equal(tp_mr_register(p.ep[1], &c, &id), 0);
	end = (uintptr_t)mem + gib;
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i ^ 0x5a);
	assert_int_equal(tp_post_write(p.ch[0], src, sizeof(src), end - sizeof(src),
				       rkey(id, 0xabc), 1), 0);
	ev = run_op(&p);
	assert_int_equal(ev.status, TP_ST_OK);
	assert_memory_equal(mem + gib - sizeof(src), src, sizeof(src));
	assert_int_equal(tp_post_read(p.ch[0], dst, sizeof(dst), end - sizeof(dst),
				      rkey(id, 0xabc), 2), 0);
	ev = run_op(&p);
	assert_int_equal(ev.status, TP_ST_OK);
	assert_memory_equal(dst, src, sizeof(src));
	assert_int_equal(tp_post_write(p.ch[0], src, 2, end - 1, rkey(id, 0xabc), 3), 0);
	ev = run_op(&p);
	assert_int_equal(ev.status, TP_ST_COMPLETER_ERR);
	assert_int_equal(ev.rspinfo, TP_RSPINFO_RANGE);
	assert_int_equal(mem[gib - 1], src[sizeof(src) - 1]);
	pair_free(&p);
	munmap(mem, gib);
}


/* ---- SGE lists ------------------------------------------------------------ */

/* Guard bytes around every segment: a byte outside the lists must not move. */
#define GUARD 0xa5

struct segs {
	uint8_t mem[8192];
	struct tp_sge sge[TP_MAX_SGE + 1];
	uint32_t n;
	size_t total;
};

/* n segments of the given lengths, 16 guard bytes apart, filled from `seed`
 * (or GUARD when seed is 0). */
static void segs_make(struct segs *s, const uint32_t *lens, uint32_t n, unsigned seed)
{
	size_t at = 16;

	memset(s->mem, GUARD, sizeof(s->mem));
	s->n = n;
	s->total = 0;
	for (uint32_t i = 0; i < n; i++) {
		s->sge[i] = (struct tp_sge){ .addr = s->mem + at, .len = lens[i] };
		for (uint32_t k = 0; seed && k < lens[i]; k++)
			s->mem[at + k] = (uint8_t)(seed + s->total + k * 3);
		s->total += lens[i];
		at += lens[i] + 16;
		assert_true(at < sizeof(s->mem));
	}
}

/* The list's bytes, in order. */
static void segs_flat(const struct segs *s, uint8_t *out)
{
	for (uint32_t i = 0, at = 0; i < s->n; at += s->sge[i].len, i++)
		memcpy(out + at, s->sge[i].addr, s->sge[i].len);
}

/* Every byte not in a segment is still a guard byte. */
static void segs_guarded(const struct segs *s)
{
	for (size_t b = 0; b < sizeof(s->mem); b++) {
		bool in = false;

		for (uint32_t i = 0; i < s->n && !in; i++)
			in = b >= (size_t)((uint8_t *)s->sge[i].addr - s->mem) &&
			     b < (size_t)((uint8_t *)s->sge[i].addr - s->mem) + s->sge[i].len;
		if (!in && s->mem[b] != GUARD)
			fail_msg("byte %zu outside the segments changed", b);
	}
}

/*
 * A Send gathered from 16 segments (empty ones among them, the message
 * several MTUs long) lands in a receive of 3 uneven segments over a lossy
 * link; the first byte of the third segment is the MTU boundary's neighbour.
 * A 17th segment is refused; a receive too short is a completer error.
 */
static void sge_send_recv(void **state)
{
	static const uint32_t slens[16] = { 1, 0, 255, 256, 257, 3, 0, 100, 1000, 1, 2, 3, 4, 5,
					    600, 7 };
	static const uint32_t rlens[3] = { 700, 1, 2000 };
	static struct segs src, dst;
	static uint8_t want[4096], got[4096];
	struct tp_wr wr = { .opcode = TP_OP_SEND, .wr_id = 5, .sge = src.sge, .num_sge = 16 };
	struct tp_pair p;
	struct evs e;

	(void)state;
	setup(&p, TP_MODE_RTP_SR, TP_TA_ROL, 0.05, 21);
	segs_make(&src, slens, 16, 7);
	segs_make(&dst, rlens, 3, 0);
	assert_true(src.total <= dst.total);
	assert_int_equal(tp_post_recv_sge(p.ch[1], dst.sge, 3, 9), 0);
	assert_int_equal(tp_post(p.ch[0], &wr), 0);
	run_evs(&p, &e, 1, 1);
	assert_int_equal(e.ev[0][0].type, TP_EV_SEND_DONE);
	assert_int_equal(e.ev[0][0].status, TP_ST_OK);
	assert_int_equal(e.ev[0][0].len, src.total);
	assert_int_equal(e.ev[1][0].type, TP_EV_RECV);
	assert_int_equal(e.ev[1][0].status, TP_ST_OK);
	assert_int_equal(e.ev[1][0].wr_id, 9);
	assert_int_equal(e.ev[1][0].len, src.total);
	assert_int_equal(e.ev[1][0].opcode, TP_OP_SEND);
	assert_int_equal(e.ev[1][0].flags & TP_EVF_IMM, 0);
	segs_flat(&src, want);
	segs_flat(&dst, got);
	assert_memory_equal(got, want, src.total);
	segs_guarded(&dst);

	/* Too many segments; one without an address. */
	wr.num_sge = TP_MAX_SGE + 1;
	assert_int_equal(tp_post(p.ch[0], &wr), -EINVAL);
	assert_int_equal(tp_post_recv_sge(p.ch[1], dst.sge, TP_MAX_SGE + 1, 1), -EINVAL);
	wr.num_sge = 2;
	src.sge[1] = (struct tp_sge){ .addr = NULL, .len = 5 };
	assert_int_equal(tp_post(p.ch[0], &wr), -EINVAL);
	src.sge[1].len = 0;	/* an empty segment needs no address */
	/* A receive of 2 segments too short for the message. */
	segs_make(&dst, rlens, 2, 0);
	wr.num_sge = 16;
	assert_int_equal(tp_post_recv_sge(p.ch[1], dst.sge, 2, 10), 0);
	assert_int_equal(tp_post(p.ch[0], &wr), 0);
	run_evs(&p, &e, 1, 1);
	assert_int_equal(e.ev[0][0].status, TP_ST_COMPLETER_ERR);
	assert_int_equal(e.ev[0][0].rspinfo, TP_RSPINFO_TOO_LONG);
	assert_int_equal(e.ev[1][0].status, TP_ST_COMPLETER_ERR);
	pair_free(&p);
}

/* A Write gathered from 16 segments and a Read scattered into 7, lossy,
 * RTP and CTP; every byte in its place, nothing outside the lists. */
static void sge_write_read(void **state)
{
	static const uint32_t wl[16] = { 17, 300, 1, 0, 64, 64, 64, 511, 2, 90, 90, 90, 1, 1, 1, 400 };
	static const uint32_t rl[7] = { 1, 255, 256, 257, 0, 500, 527 };
	static const uint32_t wl_ctp[3] = { 10, 0, 200 }, rl_ctp[2] = { 100, 110 };
	static struct segs src, dst;
	static uint8_t region[RLEN], flat[RLEN];

	(void)state;
	for (int ctp = 0; ctp < 2; ctp++) {
		struct tp_pair p;
		struct tp_event ev;
		struct tp_rkey k;
		struct tp_wr wr = { .opcode = TP_OP_WRITE, .wr_id = 1, .sge = src.sge };

		setup(&p, ctp ? TP_MODE_CTP : TP_MODE_RTP_GBN_FAST, TP_TA_ROL, ctp ? 0 : 0.04, 22);
		memset(region, 0, sizeof(region));
		assert_int_equal(tp_mr_reg(p.ep[1], region, sizeof(region), &k), 0);
		segs_make(&src, ctp ? wl_ctp : wl, ctp ? 3 : 16, 99);
		wr.num_sge = src.n;
		wr.remote_va = (uintptr_t)region + 33;
		wr.rkey = k;
		assert_int_equal(tp_post(p.ch[0], &wr), 0);
		ev = run_op(&p);
		assert_int_equal(ev.status, TP_ST_OK);
		assert_int_equal(ev.opcode, TP_OP_WRITE);
		assert_int_equal(ev.len, src.total);
		segs_flat(&src, flat);
		assert_memory_equal(region + 33, flat, src.total);
		assert_int_equal(region[32], 0);
		assert_int_equal(region[33 + src.total], 0);

		segs_make(&dst, ctp ? rl_ctp : rl, ctp ? 2 : 7, 0);
		wr = (struct tp_wr){ .opcode = TP_OP_READ, .wr_id = 2, .sge = dst.sge,
				     .num_sge = dst.n, .remote_va = (uintptr_t)region + 40,
				     .rkey = k };
		assert_int_equal(tp_post(p.ch[0], &wr), 0);
		ev = run_op(&p);
		assert_int_equal(ev.type, TP_EV_READ_DONE);
		assert_int_equal(ev.status, TP_ST_OK);
		assert_int_equal(ev.len, dst.total);
		segs_flat(&dst, flat);
		assert_memory_equal(flat, region + 40, dst.total);
		segs_guarded(&dst);
		pair_free(&p);
	}
}

/* TP_WR_INLINE: the payload is copied at post time, so the buffer may be
 * overwritten at once; limits and refusals. */
static void inline_data(void **state)
{
	static uint8_t buf[TP_INLINE_MAX + 1], rbuf[512], region[512], was[TP_INLINE_MAX];
	struct tp_sge sge = { .addr = buf, .len = TP_INLINE_MAX };
	struct tp_wr wr = { .opcode = TP_OP_SEND, .flags = TP_WR_INLINE, .wr_id = 3,
			    .sge = &sge, .num_sge = 1 };
	struct tp_pair p;
	struct tp_rkey k;
	struct evs e;

	(void)state;
	setup(&p, TP_MODE_RTP_SR, TP_TA_ROI, 0.05, 23);
	assert_int_equal(tp_mr_reg(p.ep[1], region, sizeof(region), &k), 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i + 1);
	memcpy(was, buf, sizeof(was));
	assert_int_equal(tp_post_recv(p.ch[1], rbuf, sizeof(rbuf), 1), 0);
	assert_int_equal(tp_post(p.ch[0], &wr), 0);
	wr.opcode = TP_OP_WRITE;
	wr.remote_va = (uintptr_t)region;
	wr.rkey = k;
	assert_int_equal(tp_post(p.ch[0], &wr), 0);
	memset(buf, 0, sizeof(buf));	/* before a single packet left */
	run_evs(&p, &e, 2, 1);
	assert_int_equal(e.ev[0][0].status, TP_ST_OK);
	assert_int_equal(e.ev[0][1].status, TP_ST_OK);
	assert_int_equal(e.ev[1][0].len, TP_INLINE_MAX);
	assert_memory_equal(rbuf, was, TP_INLINE_MAX);
	assert_memory_equal(region, was, TP_INLINE_MAX);
	sge.len = TP_INLINE_MAX + 1;
	assert_int_equal(tp_post(p.ch[0], &wr), -EMSGSIZE);
	sge.len = 8;
	wr.opcode = TP_OP_READ;
	assert_int_equal(tp_post(p.ch[0], &wr), -EINVAL);
	wr.opcode = TP_OP_FADD;
	assert_int_equal(tp_post(p.ch[0], &wr), -EINVAL);
	wr.opcode = TP_OP_SEND;
	wr.flags = 0x80;
	assert_int_equal(tp_post(p.ch[0], &wr), -EINVAL);
	wr.flags = 0;
	wr.opcode = (enum tp_opcode)99;
	assert_int_equal(tp_post(p.ch[0], &wr), -EINVAL);
	pair_free(&p);
}

/* ---- the fence ------------------------------------------------------------ */

struct order_log {
	uint64_t first_write, last_resp;	/* tx times; 0: not seen */
	uint8_t resp_op;			/* READ_RESP or ATOMIC_RESP */
};

static bool order_filter(void *ctx, const struct tp_sim_pkt *p, uint64_t now)
{
	struct order_log *l = ctx;
	struct tp_parsed_view { uint8_t tp, ta; } v = { p->tp[0] & 0x7f, 0 };

	if (v.tp != UB_TP_RTP_DATA || p->len < 24)
		return false;
	v.ta = p->tp[16];
	if (p->from == 0 && v.ta == UB_TA_WRITE && !l->first_write)
		l->first_write = now + 1;
	if (p->from == 1 && v.ta == l->resp_op)
		l->last_resp = now + 1;
	return false;
}

/*
 * A Write posted with TP_WR_FENCE behind a long Read (or an atomic) leaves
 * only once the answer came back; without the fence it leaves at once,
 * before the answer.
 */
static void fence_waits_for_reads(void **state)
{
	static uint8_t region[RLEN], dst[RLEN], src[64];
	uint64_t result;

	(void)state;
	for (int atomic = 0; atomic < 2; atomic++)
		for (int fence = 0; fence < 2; fence++) {
			struct tp_chan_config c[2];
			struct tp_sim_cfg s;
			struct tp_pair p;
			struct order_log l = { .resp_op = atomic ? UB_TA_ATOMIC_RESP :
								   UB_TA_READ_RESP };
			struct tp_sge sg = { .addr = atomic ? (void *)&result : (void *)dst,
					     .len = atomic ? 8 : RLEN - 512 };
			struct tp_sge ws = { .addr = src, .len = sizeof(src) };
			struct tp_rkey k;
			struct tp_wr rd = { .opcode = atomic ? TP_OP_FADD : TP_OP_READ, .wr_id = 1,
					    .sge = &sg, .num_sge = 1, .add = 1 };
			struct tp_wr wr = { .opcode = TP_OP_WRITE, .wr_id = 2, .sge = &ws,
					    .num_sge = 1, .flags = fence ? TP_WR_FENCE : 0 };
			struct evs e;

			chan_cfg(c, TP_MODE_RTP_SR, TP_TA_ROL);
			pair_link_cfg(&s, 24);
			s.filter = order_filter;
			s.filter_ctx = &l;
			assert_int_equal(pair_init(&p, c, &s, 0, 64, 24), 0);
			assert_int_equal(tp_mr_reg(p.ep[1], region, sizeof(region), &k), 0);
			rd.remote_va = (uintptr_t)region + 512;
			rd.rkey = k;
			wr.remote_va = (uintptr_t)region;
			wr.rkey = k;
			assert_int_equal(tp_post(p.ch[0], &rd), 0);
			assert_int_equal(tp_post(p.ch[0], &wr), 0);
			run_evs(&p, &e, 2, 0);
			assert_int_equal(e.ev[0][0].status, TP_ST_OK);
			assert_int_equal(e.ev[0][1].status, TP_ST_OK);
			assert_true(l.first_write && l.last_resp);
			if (fence)
				assert_true(l.first_write > l.last_resp);
			else
				assert_true(l.first_write < l.last_resp);
			pair_free(&p);
		}
}

/* ---- immediate data --------------------------------------------------------- */

static void check_imm_recv(const struct tp_event *ev, uint8_t opcode, uint64_t imm, size_t len,
			   uint64_t wr_id, const struct tp_pair *p)
{
	assert_int_equal(ev->type, TP_EV_RECV);
	assert_int_equal(ev->status, TP_ST_OK);
	assert_int_equal(ev->opcode, opcode);
	assert_true(ev->flags & TP_EVF_IMM);
	assert_true(ev->imm == imm);
	assert_int_equal(ev->len, len);
	assert_int_equal(ev->wr_id, wr_id);
	assert_int_equal(ev->src_id, tp_chan_tpn(p->ch[0]));
}

/*
 * Send with immediate, one packet and several, lossy RTP (ROL and ROI), CTP
 * and UTP: the data lands in the posted receive, whose completion carries
 * the immediate, the opcode and the sending channel; a plain Send has none.
 */
static void send_with_imm(void **state)
{
	static const struct { enum tp_mode mode; enum tp_ta_mode ta; double loss; } runs[] = {
		{ TP_MODE_RTP_SR, TP_TA_ROL, 0.05 }, { TP_MODE_RTP_GBN, TP_TA_ROI, 0.05 },
		{ TP_MODE_CTP, TP_TA_ROI, 0 }, { TP_MODE_UTP, TP_TA_ROL, 0 },
	};
	static uint8_t src[1000], rbuf[3][1000];

	(void)state;
	for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		bool one = runs[k].mode >= TP_MODE_UTP;	/* one packet a message */
		size_t lens[3] = { one ? 200 : 1000, 0, 17 };
		struct tp_pair p;
		struct evs e;

		setup(&p, runs[k].mode, runs[k].ta, runs[k].loss, 30 + k);
		for (size_t i = 0; i < sizeof(src); i++)
			src[i] = (uint8_t)(i * 5 + k);
		for (int i = 0; i < 3; i++)
			assert_int_equal(tp_post_recv(p.ch[1], rbuf[i], sizeof(rbuf[i]), 100 + i), 0);
		for (int i = 0; i < 3; i++) {
			struct tp_sge sge = { .addr = src, .len = (uint32_t)lens[i] };
			struct tp_wr wr = { .opcode = i == 2 ? TP_OP_SEND : TP_OP_SEND_IMM,
					    .wr_id = (uint64_t)i, .sge = &sge, .num_sge = 1,
					    .imm = 0xfeedface00000000ull + (uint64_t)i };

			assert_int_equal(tp_post(p.ch[0], &wr), 0);
		}
		run_evs(&p, &e, 3, 3);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(e.ev[0][i].type, TP_EV_SEND_DONE);
			assert_int_equal(e.ev[0][i].status, TP_ST_OK);
			assert_int_equal(e.ev[0][i].opcode, i == 2 ? TP_OP_SEND : TP_OP_SEND_IMM);
			assert_memory_equal(rbuf[i], src, lens[i]);
		}
		check_imm_recv(&e.ev[1][0], TP_OP_SEND_IMM, 0xfeedface00000000ull, lens[0], 100, &p);
		check_imm_recv(&e.ev[1][1], TP_OP_SEND_IMM, 0xfeedface00000001ull, 0, 101, &p);
		assert_int_equal(e.ev[1][2].opcode, TP_OP_SEND);
		assert_int_equal(e.ev[1][2].flags, 0);
		assert_int_equal(e.ev[1][2].len, 17);
		assert_int_equal(stats(p.ch[1]).ta_imm, 2);
		pair_free(&p);
	}
}

/*
 * Write with immediate: the data lands in the region (several packets, the
 * last one 0x04 with the IMMETAH), and a posted receive completes with the
 * immediate and the Write's length, its buffer untouched. RTP lossy and CTP.
 */
static void write_with_imm(void **state)
{
	static uint8_t region[RLEN], src[2000], rbuf[64], was[64];

	(void)state;
	for (int ctp = 0; ctp < 2; ctp++) {
		size_t len = ctp ? 250 : sizeof(src);
		struct tp_pair p;
		struct tp_rkey k;
		struct tp_sge sge = { .addr = src, .len = (uint32_t)len };
		struct tp_wr wr = { .opcode = TP_OP_WRITE_IMM, .wr_id = 7, .sge = &sge,
				    .num_sge = 1, .imm = 0x0123456789abcdefull };
		struct evs e;

		setup(&p, ctp ? TP_MODE_CTP : TP_MODE_RTP_SR, TP_TA_ROL, ctp ? 0 : 0.05, 33);
		memset(region, 0, sizeof(region));
		memset(rbuf, 0x3c, sizeof(rbuf));
		memcpy(was, rbuf, sizeof(rbuf));
		for (size_t i = 0; i < len; i++)
			src[i] = (uint8_t)(i * 11 + 1);
		assert_int_equal(tp_mr_reg(p.ep[1], region, sizeof(region), &k), 0);
		wr.remote_va = (uintptr_t)region + 100;
		wr.rkey = k;
		assert_int_equal(tp_post_recv(p.ch[1], rbuf, sizeof(rbuf), 55), 0);
		assert_int_equal(tp_post(p.ch[0], &wr), 0);
		run_evs(&p, &e, 1, 1);
		assert_int_equal(e.ev[0][0].type, TP_EV_WRITE_DONE);
		assert_int_equal(e.ev[0][0].status, TP_ST_OK);
		assert_int_equal(e.ev[0][0].opcode, TP_OP_WRITE_IMM);
		check_imm_recv(&e.ev[1][0], TP_OP_WRITE_IMM, 0x0123456789abcdefull, len, 55, &p);
		assert_memory_equal(region + 100, src, len);
		assert_memory_equal(rbuf, was, sizeof(rbuf));	/* nothing in the buffer */
		pair_free(&p);
	}
}

/*
 * Write with immediate and no receive posted: RNR, retried (the data lands
 * again: a Write is idempotent) until a receive comes; with none at all the
 * initiator reports RNR and no receive was taken. A Write with immediate
 * the target refuses (wrong token) takes no receive either: the one posted
 * serves the next Send.
 */
static void write_imm_rnr_and_refused(void **state)
{
	static uint8_t region[RLEN], src[600], rbuf[64];
	struct tp_pair p;
	struct tp_rkey k;
	struct tp_sge sge = { .addr = src, .len = sizeof(src) };
	struct tp_wr wr = { .opcode = TP_OP_WRITE_IMM, .wr_id = 1, .sge = &sge, .num_sge = 1,
			    .imm = 42 };
	struct tp_event ev;
	struct evs e;

	(void)state;
	setup(&p, TP_MODE_RTP_SR, TP_TA_ROL, 0.02, 34);
	assert_int_equal(tp_mr_reg(p.ep[1], region, sizeof(region), &k), 0);
	memset(src, 0x77, sizeof(src));
	wr.remote_va = (uintptr_t)region;
	wr.rkey = k;
	/* None posted: RNR once the retries (2) are spent. */
	assert_int_equal(tp_post(p.ch[0], &wr), 0);
	ev = run_op(&p);
	assert_int_equal(ev.status, TP_ST_RNR);
	assert_int_equal(stats(p.ch[0]).ta_retry_rnr, 2);
	/* Posted while the initiator waits to retry: it completes. */
	wr.wr_id = 2;
	assert_int_equal(tp_post(p.ch[0], &wr), 0);
	tp_sim_run(p.sim, tp_sim_now(p.sim) + 30 * US, NULL, NULL);
	assert_int_equal(tp_post_recv(p.ch[1], rbuf, sizeof(rbuf), 9), 0);
	run_evs(&p, &e, 1, 1);
	assert_int_equal(e.ev[0][0].wr_id, 2);
	assert_int_equal(e.ev[0][0].status, TP_ST_OK);
	check_imm_recv(&e.ev[1][0], TP_OP_WRITE_IMM, 42, sizeof(src), 9, &p);
	/* Refused (wrong token value): the posted receive stays for a Send. */
	assert_int_equal(tp_post_recv(p.ch[1], rbuf, sizeof(rbuf), 10), 0);
	wr.wr_id = 3;
	wr.rkey.token_value ^= 1;
	assert_int_equal(tp_post(p.ch[0], &wr), 0);
	ev = run_op(&p);
	assert_int_equal(ev.status, TP_ST_COMPLETER_ERR);
	assert_int_equal(ev.rspinfo, TP_RSPINFO_TOKEN_VALUE);
	assert_int_equal(tp_post_send(p.ch[0], "hi", 2, 4), 0);
	run_evs(&p, &e, 1, 1);
	assert_int_equal(e.ev[1][0].wr_id, 10);
	assert_int_equal(e.ev[1][0].opcode, TP_OP_SEND);
	assert_int_equal(e.ev[1][0].len, 2);
	pair_free(&p);
}

/* ---- atomics ------------------------------------------------------------------ */

static struct tp_event atomic_op(struct tp_pair *p, enum tp_opcode opc, uint64_t *result,
				 uint64_t va, struct tp_rkey k, uint64_t a, uint64_t b)
{
	struct tp_sge sge = { .addr = result, .len = 8 };
	struct tp_wr wr = { .opcode = opc, .wr_id = 0xa7, .sge = &sge, .num_sge = 1,
			    .remote_va = va, .rkey = k };
	struct tp_event ev;

	if (opc == TP_OP_CAS) {
		wr.swap = a;
		wr.compare = b;
	} else {
		wr.add = a;
	}
	assert_int_equal(tp_post(p->ch[0], &wr), 0);
	ev = run_op(p);
	assert_int_equal(ev.type, TP_EV_ATOMIC_DONE);
	assert_int_equal(ev.opcode, opc);
	assert_int_equal(ev.wr_id, 0xa7);
	return ev;
}

/*
 * CAS (hit and miss) and FADD on lossy RTP (ROL, ROI) and CTP: the word
 * changes as it must, the original comes back in native order.
 */
static void cas_fadd(void **state)
{
	static const struct { enum tp_mode mode; enum tp_ta_mode ta; double loss; } runs[] = {
		{ TP_MODE_RTP_SR, TP_TA_ROL, 0.05 }, { TP_MODE_RTP_GBN_FAST, TP_TA_ROI, 0.05 },
		{ TP_MODE_CTP, TP_TA_ROI, 0 },
	};
	static uint64_t words[8];

	(void)state;
	for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		struct tp_pair p;
		struct tp_rkey key;
		struct tp_event ev;
		uint64_t r = 0, va = (uintptr_t)&words[3];

		setup(&p, runs[k].mode, runs[k].ta, runs[k].loss, 50 + k);
		memset(words, 0, sizeof(words));
		words[3] = 0x1111222233334444ull;
		assert_int_equal(tp_mr_reg(p.ep[1], words, sizeof(words), &key), 0);
		/* CAS hit: compare matches, swap goes in. */
		ev = atomic_op(&p, TP_OP_CAS, &r, va, key, 0xaaaabbbbccccddddull, 0x1111222233334444ull);
		assert_int_equal(ev.status, TP_ST_OK);
		assert_int_equal(ev.len, 8);
		assert_true(r == 0x1111222233334444ull);
		assert_true(words[3] == 0xaaaabbbbccccddddull);
		/* CAS miss: nothing changes, the value seen comes back. */
		ev = atomic_op(&p, TP_OP_CAS, &r, va, key, 5, 6);
		assert_int_equal(ev.status, TP_ST_OK);
		assert_true(r == 0xaaaabbbbccccddddull);
		assert_true(words[3] == 0xaaaabbbbccccddddull);
		/* FADD, with a carry across bytes and a wrap past 2^64. */
		words[3] = 0x00000000ffffffffull;
		ev = atomic_op(&p, TP_OP_FADD, &r, va, key, 1, 0);
		assert_true(r == 0x00000000ffffffffull && words[3] == 0x0000000100000000ull);
		ev = atomic_op(&p, TP_OP_FADD, &r, va, key, (uint64_t)-0x100000001ll, 0);
		assert_true(r == 0x0000000100000000ull && words[3] == (uint64_t)-1);
		for (int i = 0; i < 8; i++)
			if (i != 3)
				assert_true(words[i] == 0);
		assert_int_equal(stats(p.ch[1]).ta_atomic, 4);
		pair_free(&p);
	}
}

/*
 * Atomics are atomic and executed once: 64 FADDs in flight at once over a
 * link that loses, duplicates and reorders; the word ends at their sum and
 * the originals returned are exactly its 64 prefix sums (each add saw every
 * earlier one and no other: the channel executes in posting order).
 */
static void fadd_exactly_once(void **state)
{
	enum { N = 64 };
	static uint64_t word, result[N];
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct tp_rkey key;
	struct evs e;
	uint64_t sum = 0;

	(void)state;
	chan_cfg(c, TP_MODE_RTP_SR, TP_TA_ROL);
	pair_link_cfg(&s, 60);
	s.frames = true;
	for (int i = 0; i < 2; i++) {
		s.dir[i].loss_data = 0.05;
		s.dir[i].loss_resp = 0.05;
		s.dir[i].dup = 0.05;
		s.dir[i].reorder = 0.1;
		s.dir[i].reorder_ns = 30 * US;
	}
	assert_int_equal(pair_init(&p, c, &s, 0, 64, 60), 0);
	word = 1000;
	assert_int_equal(tp_mr_reg(p.ep[1], &word, sizeof(word), &key), 0);
	for (int i = 0; i < N; i++) {
		struct tp_sge sge = { .addr = &result[i], .len = 8 };
		struct tp_wr wr = { .opcode = TP_OP_FADD, .wr_id = (uint64_t)i, .sge = &sge,
				    .num_sge = 1, .remote_va = (uintptr_t)&word, .rkey = key,
				    .add = (uint64_t)i + 1 };

		assert_int_equal(tp_post(p.ch[0], &wr), 0);
	}
	run_evs(&p, &e, N, 0);
	for (int i = 0; i < N; i++) {
		assert_int_equal(e.ev[0][i].status, TP_ST_OK);
		assert_int_equal(e.ev[0][i].wr_id, i);	/* completed in posting order */
	}
	for (int i = 0; i < N; i++)
		sum += (uint64_t)i + 1;
	assert_true(word == 1000 + sum);
	/* Executed in order on one channel: result[i] = 1000 + 1 + ... + i. */
	for (int i = 0, pre = 1000; i < N; pre += i + 1, i++)
		assert_true(result[i] == (uint64_t)pre);
	assert_int_equal(stats(p.ch[1]).ta_atomic, N);
	assert_true(tp_sim_stats(p.sim)->duped[0] > 0);
	pair_free(&p);
}

/*
 * Every refusal of an atomic, nothing written (the region byte for byte) and
 * nothing returned (the result untouched): misaligned, no atomic access,
 * wrong token value, unknown TokenID, out of range. A non-resident region
 * is a page fault, retried, then executed once when it is back.
 */
static void atomic_refusals(void **state)
{
	static uint64_t words[4], ro[2];
	static uint8_t snap[sizeof(words)];
	static const struct { int what; uint8_t info; } cases[] = {
		{ 0, TP_RSPINFO_ALIGN }, { 1, TP_RSPINFO_ACCESS }, { 2, TP_RSPINFO_TOKEN_VALUE },
		{ 3, TP_RSPINFO_BAD_TOKEN }, { 4, TP_RSPINFO_RANGE }, { 5, TP_RSPINFO_ALIGN },
	};

	(void)state;
	for (int ctp = 0; ctp < 2; ctp++) {
		struct tp_pair p;
		struct tp_rkey key, rokey;
		struct tp_mr_cfg rc = { .addr = ro, .len = sizeof(ro),
					.access = TP_ACCESS_READ | TP_ACCESS_WRITE, .token_value = 9 };
		struct tp_event ev;
		uint64_t r, base = (uintptr_t)words;
		struct tp_stats t;

		setup(&p, ctp ? TP_MODE_CTP : TP_MODE_RTP_SR, TP_TA_ROL, ctp ? 0 : 0.03, 70);
		assert_int_equal(tp_mr_reg(p.ep[1], words, sizeof(words), &key), 0);
		assert_int_equal(tp_mr_register(p.ep[1], &rc, &rokey.token_id), 0);
		rokey.token_value = 9;
		for (size_t i = 0; i < sizeof(words) / 8; i++)
			words[i] = 0x0102030405060708ull * (i + 1);
		ro[0] = ro[1] = 77;
		memcpy(snap, words, sizeof(words));
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
			for (int cas = 0; cas < 2; cas++) {
				enum tp_opcode o = cas ? TP_OP_CAS : TP_OP_FADD;
				uint64_t va = base + 8;
				struct tp_rkey k = key;

				switch (cases[c].what) {
				case 0: va = base + 12; break;		/* 4-byte aligned only */
				case 1: va = (uintptr_t)ro; k = rokey; break;
				case 2: k.token_value ^= 0x80000000u; break;
				case 3: k.token_id ^= 0x40; break;
				case 4: va = base + sizeof(words); break;	/* just past */
				case 5: va = base + 1; break;
				}
				r = 0xdeaddeaddeaddeadull;
				ev = atomic_op(&p, o, &r, va, k, 1, snap[8]);
				assert_int_equal(ev.status, TP_ST_COMPLETER_ERR);
				assert_int_equal(ev.rspinfo, cases[c].info);
				assert_int_equal(ev.len, 0);
				assert_true(r == 0xdeaddeaddeaddeadull);
				assert_memory_equal(words, snap, sizeof(words));
				assert_true(ro[0] == 77 && ro[1] == 77);
			}
		t = stats(p.ch[1]);
		assert_int_equal(t.ta_bad_align, 4);
		assert_int_equal(t.ta_bad_access, 2);
		assert_int_equal(t.ta_bad_token_value, 2);
		assert_int_equal(t.ta_bad_token_id, 2);
		assert_int_equal(t.ta_bad_range, 2);
		assert_int_equal(t.ta_atomic, 0);

		/* Not resident: page faults, then executed once it is back. */
		assert_int_equal(tp_mr_set_resident(p.ep[1], key.token_id, false), 0);
		{
			struct tp_sge sge = { .addr = &r, .len = 8 };
			struct tp_wr wr = { .opcode = TP_OP_FADD, .wr_id = 1, .sge = &sge,
					    .num_sge = 1, .remote_va = base, .rkey = key, .add = 5 };
			struct evs e;

			assert_int_equal(tp_post(p.ch[0], &wr), 0);
			tp_sim_run(p.sim, tp_sim_now(p.sim) + 30 * US, NULL, NULL);
			assert_int_equal(tp_mr_set_resident(p.ep[1], key.token_id, true), 0);
			run_evs(&p, &e, 1, 0);
			assert_int_equal(e.ev[0][0].status, TP_ST_OK);
			assert_true(r == 0x0102030405060708ull);
			assert_true(words[0] == 0x0102030405060708ull + 5);
			assert_int_equal(stats(p.ch[1]).ta_atomic, 1);
			assert_true(stats(p.ch[0]).ta_retry_pf >= 1);
		}
		/* Post-time refusals. */
		{
			struct tp_sge sge = { .addr = &r, .len = 7 };
			struct tp_wr wr = { .opcode = TP_OP_CAS, .sge = &sge, .num_sge = 1,
					    .remote_va = base, .rkey = key };

			assert_int_equal(tp_post(p.ch[0], &wr), -EINVAL);
			wr.num_sge = 0;
			assert_int_equal(tp_post(p.ch[0], &wr), -EINVAL);
		}
		pair_free(&p);
	}
	{
		struct tp_pair p;
		struct tp_sge sge = { .addr = words, .len = 8 };
		struct tp_wr wr = { .opcode = TP_OP_FADD, .sge = &sge, .num_sge = 1 };

		setup(&p, TP_MODE_UTP, TP_TA_ROL, 0, 71);
		assert_int_equal(tp_post(p.ch[0], &wr), -EOPNOTSUPP);
		pair_free(&p);
	}
}

/*
 * Atomic requests a peer could send that this target does not take, built
 * by hand: MAETAH Length 4, a CAS with one operand, Atomic_swap (0x08).
 * Each is refused unsupported; the word is untouched.
 */
static void atomic_unsupported_by_hand(void **state)
{
	static uint64_t word = 0x5555;
	static const struct { uint8_t op; uint32_t length; size_t payload; } cases[] = {
		{ UB_TA_ATOMIC_FADD, 4, 16 }, { UB_TA_ATOMIC_CAS, 8, 8 }, { UB_TA_ATOMIC_SWAP, 8, 16 },
	};
	struct tp_ep_config ec = { .seed = 5, .token_seed = 5 };
	struct tp_chan_config c = { .mtu = 256 };
	struct tp_ep *ep = tp_ep_create(&ec);
	struct tp_chan *ch = tp_chan_create(ep, &c);
	struct tp_rkey k;
	struct tp_stats st;

	(void)state;
	assert_int_equal(tp_chan_connect(ch, 9, 100), 0);
	assert_int_equal(tp_mr_reg(ep, &word, sizeof(word), &k), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ub_tph_fields h = { .opcode = UB_TP_RTP_DATA, .last = true, .nlp = UB_NLP_TAH,
					   .ackreq = true, .src_tpn = 9, .dst_tpn = tp_chan_tpn(ch),
					   .psn = 100 + (uint32_t)i, .tpmsn = (uint32_t)i };
		struct ub_tah_fields a = { .opcode = cases[i].op, .ini_tassn = (uint16_t)i,
					   .order = 1, .tv_en = true };
		struct ub_maetah_fields m = { .va = (uintptr_t)&word, .token_id = k.token_id,
					      .length = cases[i].length };
		uint8_t b[128], pkt[512];
		size_t n = 0;
		struct tp_tx_info info;
		int answers = 0;

		ub_tph_encode((struct ub_tph *)b, &h);
		ub_tah_encode((struct ub_tah *)(b + 16), &a);
		ub_maetah_encode((struct ub_maetah *)(b + 24), &m);
		ub_tvetah_encode((struct ub_tvetah *)(b + 40), k.token_value);
		n = 44;
		memset(b + n, 0x11, cases[i].payload);
		n += cases[i].payload;
		assert_int_equal(tp_ep_rx(ep, 0, b, n, NULL), TP_RX_OK);
		assert_true(word == 0x5555);
		/* The answer: a TAACK packet, completer error, unsupported. */
		for (size_t len; (len = tp_ep_tx(ep, 0, pkt, sizeof(pkt), &info));) {
			struct ub_tah_fields t;

			if (!info.data)
				continue;
			ub_tah_decode((const struct ub_tah *)(pkt + 16), &t);
			assert_int_equal(t.opcode, UB_TA_TAACK);
			assert_int_equal(t.rspst, UB_RSPST_COMPLETER_ERR);
			assert_int_equal(t.rspinfo, TP_RSPINFO_UNSUPPORTED);
			answers++;
		}
		assert_int_equal(answers, 1);
	}
	tp_chan_stats(ch, &st);
	assert_int_equal(st.ta_bad_align, 3);
	assert_int_equal(st.ta_atomic, 0);
	tp_ep_destroy(ep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(token_ids_random_many),
		cmocka_unit_test(token_id_given),
		cmocka_unit_test(tokens_and_access),
		cmocka_unit_test(write_without_tvetah),
		cmocka_unit_test(large_region),
		cmocka_unit_test(sge_send_recv),
		cmocka_unit_test(sge_write_read),
		cmocka_unit_test(inline_data),
		cmocka_unit_test(fence_waits_for_reads),
		cmocka_unit_test(send_with_imm),
		cmocka_unit_test(write_with_imm),
		cmocka_unit_test(write_imm_rnr_and_refused),
		cmocka_unit_test(cas_fadd),
		cmocka_unit_test(fadd_exactly_once),
		cmocka_unit_test(atomic_refusals),
		cmocka_unit_test(atomic_unsupported_by_hand),
	};

	return cmocka_run_group_tests_name("transport_urma", tests, NULL, NULL);
}
