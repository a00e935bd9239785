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
#include "ubhdr.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(token_ids_random_many),
		cmocka_unit_test(tokens_and_access),
		cmocka_unit_test(write_without_tvetah),
		cmocka_unit_test(large_region),
	};

	return cmocka_run_group_tests_name("transport_urma", tests, NULL, NULL);
}
