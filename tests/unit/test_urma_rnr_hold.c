// SPDX-License-Identifier: BSD-2-Clause
/*
 * liburma's RNR hold on the shared receive path (user/transport/tp_rnr_hold.h, the core's own rule), as
 * recv.c uses it: a Send the hold refuses, or one with no JFR buffer, is
 * answered RNR; or Sends are refused for ever or taken out of order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tp_pair.h"
#include "transport/tp_rnr_hold.h"

#define US 1000ull
#define MS 1000000ull

/* recv.c's decision for one Send: true if taken into a buffer. */
static bool send_in(struct tp_rnr_hold *h, uint16_t tassn, bool retry, bool have_buf)
{
	if (tp_rnr_hold_refuses(h, tassn, retry) || !have_buf) {
		tp_rnr_hold_refused(h, tassn);
		return false;
	}
	return true;
}

/* The client (rnr_retry 1) gives up on Send 5; the core flags the next
 * Send, 6, Retry to lift the hold. Before: held for 5 alone, 6 and every
 * later Send were refused until the channel failed. */
static void given_up_send_lifts_hold(void **state)
{
	struct tp_rnr_hold h = { 0 };

	(void)state;
	assert_false(send_in(&h, 5, false, false));
	assert_false(send_in(&h, 5, true, false));	/* retry refused: given up */
	assert_true(send_in(&h, 6, true, true));
	assert_true(send_in(&h, 7, false, true));
	assert_false(h.on);
}

/* 5 refused (no buffer), 6 refused by the hold, its answer lost: 5's retry
 * is taken, but a new 7 must wait for 6's retry. Before: the hold ended
 * with 5, and 7 was taken before 6. */
static void hold_waits_for_newest_refused(void **state)
{
	struct tp_rnr_hold h = { 0 };

	(void)state;
	assert_false(send_in(&h, 5, false, false));
	assert_false(send_in(&h, 6, false, true));
	assert_true(send_in(&h, 5, true, true));
	assert_false(send_in(&h, 7, false, true));
	assert_true(send_in(&h, 6, true, true));
	assert_false(send_in(&h, 7, false, true));	/* still: 7 was refused */
	assert_true(send_in(&h, 7, true, true));
	assert_true(send_in(&h, 8, false, true));
}

/* The newest refused moves only forward (an older retry refused again
 * does not pull it back), and TASSNs wrap. */
static void newest_forward_and_wrap(void **state)
{
	struct tp_rnr_hold h = { 0 };

	(void)state;
	assert_false(send_in(&h, 0xfffe, false, false));
	assert_false(send_in(&h, 0x0001, false, true));
	assert_false(send_in(&h, 0xfffe, true, false));
	assert_true(send_in(&h, 0xfffe, true, true));
	assert_false(send_in(&h, 0x0002, false, true));
	assert_true(send_in(&h, 0x0001, true, true));
	assert_false(send_in(&h, 0x0002, false, true));
	assert_true(send_in(&h, 0x0002, true, true));
	assert_true(send_in(&h, 0x0003, false, true));
}

/* A target as liburma's shared path: every Send answered by hand, into a
 * JFR that has no buffer before buf_ns. */
struct srv {
	struct tp_pair p;
	struct tp_rnr_hold hold;
	uint64_t buf_ns;
	int32_t last_taken;	/* message index, in order */
	uint32_t taken, ok, failed, retries_seen;
	int32_t last_ok;
};

static void srv_recv(struct srv *s, const struct tp_event *ev)
{
	struct tp_pair *p = &s->p;
	bool retry = ev->flags & TP_EVF_RETRY;
	bool have_buf = tp_sim_now(p->sim) >= s->buf_ns;
	int32_t m = -1;

	s->retries_seen += retry;
	if (send_in(&s->hold, ev->tassn, retry, have_buf)) {
		for (uint32_t i = 0; i < p->nmsg && m < 0; i++)
			if (ev->len == p->len[i] && !memcmp(p->rbuf[ev->wr_id], p->data + p->off[i], p->len[i]))
				m = (int32_t)i;
		if (m <= s->last_taken)
			pair_fail(p, "taken out of order or twice", (uint64_t)m, (uint64_t)s->last_taken);
		s->last_taken = m;
		s->taken++;
		tp_recv_answer(p->ch[1], ev->tassn, TP_ST_OK);
	} else {
		tp_recv_answer(p->ch[1], ev->tassn, TP_ST_RNR);
	}
	tp_post_recv(p->ch[1], p->rbuf[ev->wr_id], p->max_len, ev->wr_id);
}

static bool srv_step(void *ctx)
{
	struct srv *s = ctx;
	struct tp_pair *p = &s->p;
	struct tp_event ev;

	while (tp_ep_poll(p->ep[1], &ev))
		if (ev.type == TP_EV_RECV)
			srv_recv(s, &ev);
	while (tp_ep_poll(p->ep[0], &ev)) {
		if (ev.type == TP_EV_CHAN_ERROR)
			p->chan_errors++;
		if (ev.type != TP_EV_SEND_DONE)
			continue;
		p->done++;
		if (ev.status != TP_ST_OK) {
			s->failed++;
			continue;
		}
		if ((int32_t)ev.wr_id <= s->last_ok)
			pair_fail(p, "completed out of order", ev.wr_id, (uint64_t)s->last_ok);
		s->last_ok = (int32_t)ev.wr_id;
		s->ok++;
	}
	pair_refill(p);
	return p->errors || p->chan_errors || p->done == p->nmsg;
}

/*
 * Over the simulated link, the core's own Retry flag: a client with
 * rnr_retry 1 gives up on the first Sends while the JFR is empty; the
 * core flags the next Send Retry, and from then on every Send completes,
 * in order. Before: refused until each ran out of retries, none OK.
 */
static void client_gives_up_later_sends_complete(void **state)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg sc;
	struct srv s = { .buf_ns = 300 * US, .last_taken = -1, .last_ok = -1 };

	(void)state;
	memset(c, 0, sizeof(c));
	for (int i = 0; i < 2; i++) {
		c[i].mode = TP_MODE_RTP_SR;
		c[i].mtu = 256;
		c[i].window = 16;
		c[i].rto_mode = TP_RTO_DYNAMIC;
		c[i].retry_limit = 30;
		c[i].ta_mode = TP_TA_ROL;
		c[i].rnr_retry = 1;
		c[i].rnr_delay_ns = 40 * US;
	}
	c[1].manual_taack = true;
	pair_link_cfg(&sc, 3);
	assert_int_equal(pair_init(&s.p, c, &sc, 24, 512, 3), 0);
	pair_full_len(&s.p);
	s.p.window_ops = 4;
	pair_start(&s.p);
	assert_true(tp_sim_run(s.p.sim, 2000 * MS, srv_step, &s));
	if (s.p.errors)
		fail_msg("%s", s.p.err);
	print_message("%u OK, %u given up, %u retries seen\n", s.ok, s.failed, s.retries_seen);
	assert_int_equal(s.p.chan_errors, 0);
	assert_true(s.failed >= 1);		/* the client gave up on some */
	assert_true(s.retries_seen >= 1);
	assert_int_equal(s.ok, s.taken);
	assert_int_equal(s.ok + s.failed, 24);
	assert_int_equal(s.last_ok, 23);	/* the later Sends all OK */
	assert_true(s.ok >= 12);
	pair_free(&s.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(given_up_send_lifts_hold),
		cmocka_unit_test(hold_waits_for_newest_refused),
		cmocka_unit_test(newest_forward_and_wrap),
		cmocka_unit_test(client_gives_up_later_sends_complete),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
