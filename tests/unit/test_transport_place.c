// SPDX-License-Identifier: BSD-2-Clause
/*
 * Out-of-order placement (user/transport/tp_place.c), packet by packet: a
 * packet that arrives past a hole has its payload where its message will
 * take it at once (a posted receive, a registered region, a Read's buffer),
 * and the fill of the hole copies nothing again. Hand-made TP packets,
 * MTU-sized up to each message's last, PSNs across the 24-bit wrap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "transport/tp.h"
#include "lib/ubhdr.h"
#include "tp_stat.h"

#define PEER	77
#define MTU	256
#define BASE	(TP_PSN_MASK - 1)	/* wraps after 2 packets */

struct pl {
	struct tp_ep *ep;
	struct tp_chan *ch;
	uint8_t buf[3][1024];
	uint8_t region[2048];
	struct tp_rkey key;
};

static void pl_setup(struct pl *r, uint32_t nrecv)
{
	struct tp_ep_config ec = { .seed = 1 };
	struct tp_chan_config c = { .mode = TP_MODE_RTP_SR, .mtu = MTU, .ooo_range = 128,
				    .ack_coalesce = 8, .ack_delay_ns = 10000 };

	memset(r, 0, sizeof(*r));
	r->ep = tp_ep_create(&ec);
	assert_non_null(r->ep);
	r->ch = tp_chan_create(r->ep, &c);
	assert_non_null(r->ch);
	assert_int_equal(tp_chan_connect(r->ch, PEER, BASE), 0);
	for (uint32_t i = 0; i < nrecv; i++)
		assert_int_equal(tp_post_recv(r->ch, r->buf[i], sizeof(r->buf[i]), i), 0);
	assert_int_equal(tp_mr_reg(r->ep, r->region, sizeof(r->region), &r->key), 0);
}

/* The byte at offset k of message msn's payload. */
static uint8_t content(uint32_t msn, size_t k)
{
	return (uint8_t)(msn * 31 + k * 7 + 1);
}

struct msg {
	uint8_t ta;		/* UB_TA_SEND, UB_TA_WRITE, UB_TA_READ_RESP */
	uint32_t tpmsn;
	uint16_t tassn;
	uint32_t psn0;		/* of its first packet */
	size_t len;
	uint64_t va;		/* Write: where its first byte goes */
	uint32_t token_value;	/* Write */
};

static uint32_t npkts(const struct msg *m) { return (uint32_t)((m->len + MTU - 1) / MTU); }

/* Packet seg of message m, into the endpoint. */
static enum tp_rx_verdict feed(struct pl *r, const struct msg *m, uint32_t seg)
{
	size_t off = (size_t)seg * MTU, plen = m->len - off < MTU ? m->len - off : MTU;
	struct ub_tph_fields f = {
		.opcode = UB_TP_RTP_DATA, .last = seg + 1 == npkts(m), .nlp = UB_NLP_TAH,
		.src_tpn = PEER, .dst_tpn = tp_chan_tpn(r->ch), .psn = (m->psn0 + seg) & TP_PSN_MASK,
		.tpmsn = m->tpmsn,
	};
	struct ub_tah_fields t = { .opcode = m->ta, .ini_tassn = m->tassn, .order = 1,
				   .tv_en = m->ta == UB_TA_WRITE };
	uint8_t b[1024];
	size_t n = sizeof(struct ub_tph) + sizeof(struct ub_tah);

	ub_tph_encode((struct ub_tph *)b, &f);
	ub_tah_encode((struct ub_tah *)(b + sizeof(struct ub_tph)), &t);
	if (m->ta == UB_TA_WRITE) {
		struct ub_maetah_fields mae = { .va = m->va + off, .token_id = r->key.token_id,
						.length = (uint32_t)m->len };

		ub_maetah_encode((struct ub_maetah *)(b + n), &mae);
		n += sizeof(struct ub_maetah);
		ub_tvetah_encode((struct ub_tvetah *)(b + n), m->token_value);
		n += sizeof(struct ub_tvetah);
	}
	for (size_t k = 0; k < plen; k++)
		b[n + k] = content(m->tpmsn, off + k);
	return tp_ep_rx(r->ep, 0, b, n + plen, NULL);
}

static uint64_t stat(const struct pl *r, const char *name)
{
	return chan_stat(r->ch, name);
}

/* Bytes [from, to) of message msn at dst? */
static bool holds(const uint8_t *dst, uint32_t msn, size_t from, size_t to)
{
	for (size_t k = from; k < to; k++)
		if (dst[k] != content(msn, k))
			return false;
	return true;
}

/* The next event: a receive of wr_id, len bytes, OK. */
static void expect_recv(struct pl *r, uint64_t wr_id, size_t len)
{
	struct tp_event ev;

	assert_true(tp_ep_poll(r->ep, &ev));
	assert_int_equal(ev.type, TP_EV_RECV);
	assert_int_equal(ev.status, TP_ST_OK);
	assert_int_equal(ev.wr_id, wr_id);
	assert_int_equal(ev.len, len);
}

/*
 * Sends: a packet past the hole is in the posted receive its message will
 * take as soon as it arrives, for the message being reassembled and for the
 * next one (the receive after it), and filling the hole does not write it
 * again: a byte the test changes in a placed range stays changed.
 */
static void send_placed_on_arrival(void **state)
{
	struct msg m0 = { .ta = UB_TA_SEND, .tpmsn = 0, .tassn = 1, .psn0 = BASE, .len = 4 * MTU };
	struct msg m1 = { .ta = UB_TA_SEND, .tpmsn = 1, .tassn = 2, .psn0 = BASE + 4, .len = MTU + 100 };
	struct pl r;

	(void)state;
	pl_setup(&r, 2);
	assert_int_equal(feed(&r, &m0, 0), TP_RX_OK);		/* in order: takes buf 0 */
	assert_int_equal(feed(&r, &m0, 2), TP_RX_OK);		/* past the hole at seg 1 */
	assert_true(holds(r.buf[0], 0, 2 * MTU, 3 * MTU));
	assert_int_equal(feed(&r, &m0, 3), TP_RX_OK);		/* its last: m1 starts after */
	assert_true(holds(r.buf[0], 0, 3 * MTU, 4 * MTU));
	assert_int_equal(feed(&r, &m1, 1), TP_RX_OK);		/* m1's last, 100 bytes */
	assert_true(holds(r.buf[1], 1, MTU, MTU + 100));
	assert_int_equal(feed(&r, &m1, 0), TP_RX_OK);
	assert_true(holds(r.buf[1], 1, 0, MTU));
	assert_int_equal(stat(&r, "rx_ooo"), 4);
	assert_int_equal(stat(&r, "rx_placed"), 4);
	assert_int_equal(stat(&r, "msgs_delivered"), 0);

	r.buf[0][2 * MTU + 5] ^= 0xff;				/* not written again below */
	assert_int_equal(feed(&r, &m0, 1), TP_RX_OK);		/* the hole: all follows */
	assert_int_equal(stat(&r, "msgs_delivered"), 2);
	assert_int_equal(stat(&r, "rx_place_miss"), 0);
	expect_recv(&r, 0, 4 * MTU);
	expect_recv(&r, 1, MTU + 100);
	assert_int_equal(r.buf[0][2 * MTU + 5], (uint8_t)~content(0, 2 * MTU + 5));
	r.buf[0][2 * MTU + 5] ^= 0xff;
	assert_true(holds(r.buf[0], 0, 0, 4 * MTU));
	assert_true(holds(r.buf[1], 1, 0, MTU + 100));
	tp_ep_destroy(r.ep);
}

/*
 * A Send past the hole whose receive is not posted yet is held whole and
 * copied when the hole fills, after the receive came; once the receive is
 * there, the next packet of the same message is placed.
 */
static void send_recv_posted_late(void **state)
{
	struct msg m0 = { .ta = UB_TA_SEND, .tpmsn = 0, .tassn = 1, .psn0 = BASE, .len = 2 * MTU };
	struct msg m1 = { .ta = UB_TA_SEND, .tpmsn = 1, .tassn = 2, .psn0 = BASE + 2, .len = 2 * MTU };
	struct pl r;

	(void)state;
	pl_setup(&r, 1);
	assert_int_equal(feed(&r, &m0, 1), TP_RX_OK);		/* into buf 0, m0 not begun */
	assert_true(holds(r.buf[0], 0, MTU, 2 * MTU));
	assert_int_equal(feed(&r, &m1, 1), TP_RX_OK);		/* the receive m1 takes: none yet */
	assert_int_equal(stat(&r, "rx_placed"), 1);
	assert_int_equal(tp_post_recv(r.ch, r.buf[1], sizeof(r.buf[1]), 1), 0);
	assert_int_equal(feed(&r, &m1, 0), TP_RX_OK);		/* now it is posted */
	assert_int_equal(stat(&r, "rx_placed"), 2);
	assert_true(holds(r.buf[1], 1, 0, MTU));
	assert_false(holds(r.buf[1], 1, MTU, 2 * MTU));	/* held, not placed */
	assert_int_equal(feed(&r, &m0, 0), TP_RX_OK);
	expect_recv(&r, 0, 2 * MTU);
	expect_recv(&r, 1, 2 * MTU);
	assert_true(holds(r.buf[0], 0, 0, 2 * MTU));
	assert_true(holds(r.buf[1], 1, 0, 2 * MTU));
	assert_int_equal(stat(&r, "rx_place_miss"), 0);
	tp_ep_destroy(r.ep);
}

/*
 * A receive with placed bytes taken back (a shared receive queue moving its
 * buffers): what was placed in it goes back into the held packets, and the
 * message lands whole in the receive it takes instead.
 */
static void take_back_unplaces(void **state)
{
	struct msg m0 = { .ta = UB_TA_SEND, .tpmsn = 0, .tassn = 1, .psn0 = BASE, .len = 2 * MTU };
	struct msg m1 = { .ta = UB_TA_SEND, .tpmsn = 1, .tassn = 2, .psn0 = BASE + 2, .len = 2 * MTU };
	uint64_t ids[4];
	struct pl r;

	(void)state;
	pl_setup(&r, 2);
	assert_int_equal(feed(&r, &m0, 1), TP_RX_OK);
	assert_int_equal(feed(&r, &m1, 0), TP_RX_OK);
	assert_int_equal(feed(&r, &m1, 1), TP_RX_OK);
	assert_int_equal(stat(&r, "rx_placed"), 3);
	assert_true(holds(r.buf[1], 1, 0, 2 * MTU));
	assert_int_equal(tp_recv_take_back(r.ch, ids, 1), 1);	/* buf 1, m1's */
	assert_int_equal(ids[0], 1);
	memset(r.buf[1], 0, sizeof(r.buf[1]));			/* its owner's again */
	assert_int_equal(tp_post_recv(r.ch, r.buf[2], sizeof(r.buf[2]), 2), 0);
	assert_int_equal(feed(&r, &m0, 0), TP_RX_OK);
	expect_recv(&r, 0, 2 * MTU);
	expect_recv(&r, 2, 2 * MTU);
	assert_true(holds(r.buf[2], 1, 0, 2 * MTU));
	assert_int_equal(r.buf[1][0], 0);
	assert_int_equal(stat(&r, "rx_place_miss"), 0);
	tp_ep_destroy(r.ep);
}

/*
 * Writes: a packet past the hole is in the region at once, checked as its
 * message's first packet will be (a wrong token value: nothing written,
 * held, and the message refused when its turn comes).
 */
static void write_placed_on_arrival(void **state)
{
	struct pl r;
	struct msg m0 = { .ta = UB_TA_WRITE, .tpmsn = 0, .tassn = 1, .psn0 = BASE, .len = 2 * MTU + 88 };
	struct msg m1 = { .ta = UB_TA_WRITE, .tpmsn = 1, .tassn = 2, .psn0 = BASE + 3, .len = 2 * MTU };
	uint8_t zero[2 * MTU] = { 0 };
	struct tp_event ev;

	(void)state;
	pl_setup(&r, 0);
	m0.va = (uintptr_t)r.region + 64;
	m0.token_value = r.key.token_value;
	m1.va = (uintptr_t)r.region + 1024;
	m1.token_value = r.key.token_value ^ 1;
	assert_int_equal(feed(&r, &m0, 2), TP_RX_OK);		/* m0's last, first of all */
	assert_true(holds(r.region + 64, 0, 2 * MTU, 2 * MTU + 88));
	assert_int_equal(feed(&r, &m0, 1), TP_RX_OK);
	assert_true(holds(r.region + 64, 0, MTU, 2 * MTU));
	assert_int_equal(feed(&r, &m1, 1), TP_RX_OK);		/* the wrong token value */
	assert_memory_equal(r.region + 1024, zero, sizeof(zero));
	assert_int_equal(stat(&r, "rx_placed"), 2);
	assert_int_equal(stat(&r, "ta_bad_token_value"), 0);	/* counted in its turn */

	r.region[64 + MTU] ^= 0xff;				/* not written again below */
	assert_int_equal(feed(&r, &m0, 0), TP_RX_OK);
	assert_int_equal(r.region[64 + MTU], (uint8_t)~content(0, MTU));
	r.region[64 + MTU] ^= 0xff;
	assert_true(holds(r.region + 64, 0, 0, m0.len));
	assert_int_equal(feed(&r, &m1, 0), TP_RX_OK);		/* m1 in its turn: refused */
	assert_memory_equal(r.region + 1024, zero, sizeof(zero));
	assert_int_equal(stat(&r, "msgs_delivered"), 1);
	assert_int_equal(stat(&r, "ta_bad_token_value"), 1);
	assert_int_equal(stat(&r, "rx_place_miss"), 0);
	assert_false(tp_ep_poll(r.ep, &ev));			/* Writes complete nothing here */
	tp_ep_destroy(r.ep);
}

/* Read data: a packet of the answer past the hole is in the Read's buffer at once. */
static void read_data_placed_on_arrival(void **state)
{
	static uint8_t dst[3 * MTU];
	struct pl r;
	struct msg m0 = { .ta = UB_TA_READ_RESP, .tpmsn = 0, .psn0 = BASE, .len = 2 * MTU + 40 };
	struct tp_rkey far = { .token_id = 5, .token_value = 9 };
	struct ub_tah_fields t;
	struct tp_event ev;
	uint8_t b[64], req[4096];
	size_t n;

	(void)state;
	pl_setup(&r, 0);
	assert_int_equal(tp_post_read(r.ch, dst, m0.len, 0x1000, far, 42), 0);
	n = tp_ep_tx(r.ep, 0, req, sizeof(req), NULL);		/* the Read request */
	assert_true(n >= sizeof(struct ub_tph) + sizeof(struct ub_tah));
	ub_tah_decode((const struct ub_tah *)(req + sizeof(struct ub_tph)), &t);
	assert_int_equal(t.opcode, UB_TA_READ);
	m0.tassn = t.ini_tassn;
	assert_int_equal(feed(&r, &m0, 2), TP_RX_OK);
	assert_true(holds(dst, 0, 2 * MTU, m0.len));
	assert_int_equal(feed(&r, &m0, 1), TP_RX_OK);
	assert_true(holds(dst, 0, MTU, 2 * MTU));
	assert_int_equal(stat(&r, "rx_placed"), 2);
	dst[MTU] ^= 0xff;					/* not written again below */
	assert_int_equal(feed(&r, &m0, 0), TP_RX_OK);
	assert_int_equal(dst[MTU], (uint8_t)~content(0, MTU));
	dst[MTU] ^= 0xff;
	assert_true(holds(dst, 0, 0, m0.len));
	{
		/* The request acknowledged: the Read completes. */
		struct ub_tph_fields q, a = { .opcode = UB_TP_ACK, .nlp = TP_NLP_NONE, .src_tpn = PEER,
					      .dst_tpn = tp_chan_tpn(r.ch) };

		ub_tph_decode((const struct ub_tph *)req, &q);
		a.psn = q.psn;
		ub_tph_encode((struct ub_tph *)b, &a);
		assert_int_equal(tp_ep_rx(r.ep, 0, b, sizeof(struct ub_tph), NULL), TP_RX_OK);
	}
	assert_true(tp_ep_poll(r.ep, &ev));
	assert_int_equal(ev.type, TP_EV_READ_DONE);
	assert_int_equal(ev.status, TP_ST_OK);
	assert_int_equal(ev.wr_id, 42);
	assert_int_equal(stat(&r, "rx_place_miss"), 0);
	tp_ep_destroy(r.ep);
}

/*
 * A peer that cuts its packets short of the MTU: once one such packet came
 * in order, nothing more is placed (held whole, delivered right); a packet
 * placed before that is not where the message looks for it, and the
 * message fails, counted, rather than deliver wrong bytes.
 */
static void short_packets_not_placed(void **state)
{
	struct pl r;
	struct msg m0 = { .ta = UB_TA_SEND, .tpmsn = 0, .tassn = 1, .psn0 = BASE, .len = 3 * MTU };
	uint8_t b[1024];
	struct tp_event ev;

	(void)state;
	pl_setup(&r, 2);
	assert_int_equal(feed(&r, &m0, 2), TP_RX_OK);		/* placed at 2 MTU */
	assert_int_equal(stat(&r, "rx_placed"), 1);
	{
		/* The first packet, 100 bytes and not the last. */
		struct ub_tph_fields f = {
			.opcode = UB_TP_RTP_DATA, .nlp = UB_NLP_TAH, .src_tpn = PEER,
			.dst_tpn = tp_chan_tpn(r.ch), .psn = BASE,
		};
		struct ub_tah_fields t = { .opcode = UB_TA_SEND, .ini_tassn = 1, .order = 1 };

		ub_tph_encode((struct ub_tph *)b, &f);
		ub_tah_encode((struct ub_tah *)(b + 16), &t);
		memset(b + 24, 1, 100);
		assert_int_equal(tp_ep_rx(r.ep, 0, b, 124, NULL), TP_RX_OK);
	}
	assert_int_equal(feed(&r, &m0, 1), TP_RX_OK);		/* m0 is 100 + 256 + 256 */
	assert_int_equal(stat(&r, "rx_place_miss"), 1);
	assert_true(tp_ep_poll(r.ep, &ev));
	assert_int_equal(ev.type, TP_EV_RECV);
	assert_int_equal(ev.status, TP_ST_COMPLETER_ERR);

	/* The next message, past a hole: held whole, delivered right. */
	{
		struct msg m1 = { .ta = UB_TA_SEND, .tpmsn = 1, .tassn = 2, .psn0 = BASE + 3,
				  .len = 2 * MTU };

		assert_int_equal(feed(&r, &m1, 1), TP_RX_OK);
		assert_int_equal(stat(&r, "rx_placed"), 1);
		assert_int_equal(feed(&r, &m1, 0), TP_RX_OK);
		expect_recv(&r, 1, 2 * MTU);
		assert_true(holds(r.buf[1], 1, 0, 2 * MTU));
	}
	tp_ep_destroy(r.ep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(send_placed_on_arrival),
		cmocka_unit_test(send_recv_posted_late),
		cmocka_unit_test(take_back_unplaces),
		cmocka_unit_test(write_placed_on_arrival),
		cmocka_unit_test(read_data_placed_on_arrival),
		cmocka_unit_test(short_packets_not_placed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
