// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz of the congestion-control engines and the CAQM switch rule: random
 * configurations and random event sequences (sends, acks, losses, CNPs of
 * any level, TPACK-CC of any content, data with any ECN/CCI/entropy, ticks)
 * against invariants checked here: rates and windows stay within their
 * bounds, alpha in [0, 1], at most one CNP per interval, CCIs are CAQM
 * requests with EN, the CETPH echo fits its fields, the switch never grants
 * more than asked nor grants while congested. A short run in the unit
 * suite; `make fuzz-cc` runs long (CC_FUZZ_ITERS).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "transport/cc.h"
#include "transport/tp_sim.h"
#include "lib/ubhdr.h"

static uint64_t iters(void)
{
	const char *s = getenv("CC_FUZZ_ITERS");

	return s ? strtoull(s, NULL, 0) : 3000;
}

static uint64_t rnd(uint64_t *st, uint64_t n) { return n ? tp_sim_rand(st) % n : 0; }

static void one_run(uint64_t seed)
{
	uint64_t st = seed, now = rnd(&st, 1000000), last_cnp = 0;
	bool any_cnp = false;
	struct tp_cc_config cfg = {
		.algo = (enum tp_cc_algo)(1 + rnd(&st, 3)),
		.mtu = 256 + (uint32_t)rnd(&st, 4096),
		.line_rate_bps = 1000000000ull * (1 + rnd(&st, 100)),
		.cnp_interval_ns = rnd(&st, 2) ? 0 : 1 + rnd(&st, 200000),
		.alpha_timer_ns = rnd(&st, 2) ? 0 : 1 + rnd(&st, 200000),
		.rate_timer_ns = rnd(&st, 2) ? 0 : 1 + rnd(&st, 200000),
		.byte_counter = rnd(&st, 2) ? 0 : 1 + rnd(&st, 1 << 24),
		.f = (uint32_t)rnd(&st, 10),
		.g_shift = (uint32_t)rnd(&st, 12),
		.ce_minor = rnd(&st, 2),
		.paths = (uint32_t)rnd(&st, 5),
		.hint_unit = (uint32_t)rnd(&st, 1024),
		.caqm_ai_units = (uint32_t)rnd(&st, 256),
	};
	struct tp_chan_config chan = { 0 };
	struct tp_cc_stats s;
	struct tp_cc *cc = tp_cc_create(&cfg);
	const struct tp_cc_ops *ops;
	uint64_t interval;
	void *ctx;

	if (!cc)
		fail_msg("seed %llu: a valid config refused", (unsigned long long)seed);
	tp_cc_attach(cc, &chan);
	ops = chan.cc;
	ctx = chan.cc_ctx;
	interval = cfg.cnp_interval_ns ? cfg.cnp_interval_ns : 50000;
	for (int k = 0; k < 300; k++) {
		now += rnd(&st, 4) ? rnd(&st, 5000) : rnd(&st, 2000000);
		switch (rnd(&st, 10)) {
		case 0:
			if (ops->can_send)
				ops->can_send(ctx, now, rnd(&st, 1 << 22), (uint32_t)rnd(&st, 9000));
			break;
		case 1:
			if (ops->on_send)
				ops->on_send(ctx, now, (uint32_t)rnd(&st, 9000), rnd(&st, 4) == 0);
			break;
		case 2:
			if (ops->on_loss)
				ops->on_loss(ctx, now, (enum tp_loss_kind)rnd(&st, 3));
			break;
		case 3:
			if (ops->on_cnp)
				ops->on_cnp(ctx, now, (uint8_t)rnd(&st, 4), rnd(&st, 2));
			break;
		case 4: {
			struct ub_cetph_fields ce = {
				.ack_seq = (uint32_t)tp_sim_rand(&st), .c = (uint8_t)rnd(&st, 256),
				.i = rnd(&st, 2), .hint = (uint16_t)rnd(&st, 65536), .loc = rnd(&st, 2),
			};
			if (ops->on_cetph)
				ops->on_cetph(ctx, now, &ce);
			break;
		}
		case 5: {
			struct tp_rx_meta m = {
				.ecn = (uint8_t)rnd(&st, 4), .has_cci = rnd(&st, 2),
				.cci = (uint16_t)tp_sim_rand(&st), .entropy = (uint16_t)tp_sim_rand(&st),
			};
			ops->on_rx_data(ctx, now, (uint32_t)rnd(&st, 9000), &m);
			break;
		}
		case 6: {
			struct ub_cnpetph_fields cnp;

			if (ops->cnp_due && ops->cnp_due(ctx, now, &cnp)) {
				if (any_cnp && now - last_cnp < interval)
					fail_msg("seed %llu: two CNPs %llu ns apart", (unsigned long long)seed,
						 (unsigned long long)(now - last_cnp));
				if (cnp.ecn != UB_CNP_ECN_MINOR && cnp.ecn != UB_CNP_ECN_SEVERE)
					fail_msg("seed %llu: CNP level %u", (unsigned long long)seed, cnp.ecn);
				any_cnp = true;
				last_cnp = now;
			}
			break;
		}
		case 7: {
			struct ub_cetph_fields ce;
			struct ub_cetph raw;
			struct ub_cetph_fields back;

			if (ops->ack_cetph && ops->ack_cetph(ctx, now, &ce)) {
				/* What goes on the wire decodes to what was meant. */
				ub_cetph_encode(&raw, &ce);
				ub_cetph_decode(&raw, &back);
				/* Field by field: the struct's padding byte is
				 * whatever the stack held. */
				if (back.ack_seq != ce.ack_seq || back.loc != ce.loc || back.i != ce.i ||
				    back.c != ce.c || back.hint != ce.hint)
					fail_msg("seed %llu: CETPH does not round-trip", (unsigned long long)seed);
			}
			break;
		}
		case 8: {
			uint16_t cci;

			if (ops->tx_cci && ops->tx_cci(ctx, now, 1000, rnd(&st, 2), &cci)) {
				if (tp_cci_mode(cci) != TP_CCI_MODE_CAQM || !(cci & TP_CCI_CAQM_EN) ||
				    (cci & TP_CCI_CAQM_C) || (!(cci & TP_CCI_CAQM_I) && (cci & 0xff)))
					fail_msg("seed %llu: bad CCI %#x", (unsigned long long)seed, cci);
			}
			break;
		}
		default:
			if (ops->on_tick)
				ops->on_tick(ctx, now);
			if (ops->next_deadline)
				ops->next_deadline(ctx);
			break;
		}
		tp_cc_get_stats(cc, &s);
		if (cfg.algo == TP_CC_DCQCN) {
			uint64_t min = 10000000ull;

			if (s.rate_bps + 1 < min || s.rate_bps > cfg.line_rate_bps || s.alpha < 0 ||
			    s.alpha > 1)
				fail_msg("seed %llu: rate %llu alpha %f", (unsigned long long)seed,
					 (unsigned long long)s.rate_bps, s.alpha);
		} else {
			uint64_t mtu = cfg.mtu;

			if (s.cw + 1 < mtu || s.cw > 1024 * mtu || s.alpha < 0 || s.alpha > 1)
				fail_msg("seed %llu: cw %llu alpha %f", (unsigned long long)seed,
					 (unsigned long long)s.cw, s.alpha);
		}
	}
	tp_cc_destroy(cc);
}

static void engines(void **state)
{
	(void)state;
	for (uint64_t i = 0; i < iters(); i++)
		one_run(i * 2654435761u + 17);
}

/* The switch rule against its contract, on random CCIs and queues. */
static void caqm_switch_contract(void **state)
{
	uint64_t st = 99, n = iters() * 50;

	(void)state;
	for (uint64_t i = 0; i < n; i++) {
		struct tp_caqm_port p = {
			.thresh = (uint32_t)rnd(&st, 1 << 20), .hint_unit = (uint32_t)rnd(&st, 2048),
			.window_ns = 1 + rnd(&st, 1000000), .approved = rnd(&st, 1 << 21),
			.win_start = rnd(&st, 1000000),
		};
		uint16_t in = (uint16_t)tp_sim_rand(&st), out;
		uint32_t q = (uint32_t)rnd(&st, 1 << 21);
		bool last = rnd(&st, 2);

		out = tp_caqm_switch(&p, rnd(&st, 2000000), q, last, in);
		if (tp_cci_mode(in) != TP_CCI_MODE_CAQM || !(in & TP_CCI_CAQM_EN)) {
			if (out != in)
				fail_msg("non-request %#x rewritten to %#x", in, out);
			continue;
		}
		if ((out & 0xf000) != (in & 0xf000) || !(out & TP_CCI_CAQM_EN))
			fail_msg("mode or EN changed: %#x -> %#x", in, out);
		if (last && !(out & TP_CCI_LOC))
			fail_msg("last hop without LoC: %#x", out);
		if ((out & TP_CCI_CAQM_I) && (!(in & TP_CCI_CAQM_I) || (out & 0xff) > (in & 0xff) ||
					      !(out & 0xff)))
			fail_msg("grant %#x for request %#x", out, in);
		if (q > p.thresh && ((out & TP_CCI_CAQM_I) || !(out & TP_CCI_CAQM_C)))
			fail_msg("congested (q %u > %u) yet %#x", q, p.thresh, out);
		if (!(out & TP_CCI_CAQM_I) && (out & 0xff))
			fail_msg("a Hint without I: %#x", out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(engines),
		cmocka_unit_test(caqm_switch_contract),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
