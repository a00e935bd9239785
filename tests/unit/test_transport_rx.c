// SPDX-License-Identifier: BSD-2-Clause
/*
 * The transport core's receiver, packet by packet: hand-made TP packets in
 * (encoded with the packet library's header codecs), the classification
 * counters and the responses out, decoded the same way. PSNs straddle the
 * 24-bit wrap on purpose.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "transport/tp.h"
#include "lib/ubhdr.h"
#include "lib/frame.h"

#define PEER_TPN	77
#define BASE		(TP_PSN_MASK - 2)	/* 0xfffffd: wraps after 3 packets */

struct rx {
	struct tp_ep *ep;
	struct tp_chan *ch;
	uint8_t buf[4][4096];
	uint64_t now;
};

static void rx_setup(struct rx *r, enum tp_mode mode, uint32_t coalesce)
{
	struct tp_ep_config ec = { .seed = 1 };
	struct tp_chan_config c = {
		.mode = mode, .mtu = 256, .ooo_range = 128, .ack_coalesce = coalesce,
		.ack_delay_ns = 10000,
	};

	memset(r, 0, sizeof(*r));
	r->ep = tp_ep_create(&ec);
	assert_non_null(r->ep);
	r->ch = tp_chan_create(r->ep, &c);
	assert_non_null(r->ch);
	assert_int_equal(tp_chan_connect(r->ch, PEER_TPN, BASE), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(tp_post_recv(r->ch, r->buf[i], sizeof(r->buf[i]), (uint64_t)i), 0);
}

/* A packet of one long Send (TPMSN 0, TASSN 1); `last` ends it. */
static size_t data_pkt(uint8_t *b, const struct rx *r, uint32_t psn, bool ackreq, bool last)
{
	struct ub_tph_fields f = {
		.opcode = UB_TP_RTP_DATA, .last = last, .nlp = UB_NLP_TAH,
		.src_tpn = PEER_TPN, .dst_tpn = tp_chan_tpn(r->ch), .ackreq = ackreq,
		.psn = psn & TP_PSN_MASK,
	};
	uint16_t tassn = 1;
	struct ub_tah_fields t = { .opcode = UB_TA_SEND, .ini_tassn = tassn, .order = 1 };

	ub_tph_encode((struct ub_tph *)b, &f);
	ub_tah_encode((struct ub_tah *)(b + 16), &t);
	memset(b + 24, (int)(psn & 0xff), 40);
	return 64;
}

static enum tp_rx_verdict feed(struct rx *r, uint32_t psn, bool ackreq)
{
	uint8_t b[128];
	size_t n = data_pkt(b, r, psn, ackreq, false);

	return tp_ep_rx(r->ep, r->now, b, n, NULL);
}

/* Pull one response; 0 when none. */
static size_t pull(struct rx *r, uint8_t *b, struct ub_tph_fields *f)
{
	size_t n = tp_ep_tx(r->ep, r->now, b, 4096, NULL);

	if (n)
		ub_tph_decode((const struct ub_tph *)b, f);
	return n;
}

static uint64_t stat(const struct rx *r, const char *name)
{
	struct tp_stats st;

	tp_chan_stats(r->ch, &st);
	for (size_t i = 0; i < tp_stats_count(); i++)
		if (!strcmp(tp_stats_name(i), name))
			return tp_stats_get(&st, i);
	fail_msg("no counter %s", name);
	return 0;
}

static void classify_sr(void **state)
{
	struct rx r;
	uint8_t b[4096];
	struct ub_tph_fields f;
	struct ub_saetph_fields sa;
	size_t n;

	(void)state;
	rx_setup(&r, TP_MODE_RTP_SR, 8);
	assert_int_equal(feed(&r, BASE, false), TP_RX_OK);		/* in order */
	assert_int_equal(stat(&r, "rx_inorder"), 1);
	assert_int_equal(pull(&r, b, &f), 0);				/* coalesced */
	assert_int_equal(feed(&r, BASE + 5, false), TP_RX_OK);		/* OOO, across the wrap */
	assert_int_equal(stat(&r, "rx_ooo"), 1);
	n = pull(&r, b, &f);
	assert_true(n > 16);
	assert_int_equal(f.opcode, UB_TP_SACK);
	assert_int_equal(f.psn, BASE);					/* cumulative */
	assert_int_equal(f.src_tpn, tp_chan_tpn(r.ch));
	assert_int_equal(f.dst_tpn, PEER_TPN);
	assert_int_equal(ub_saetph_decode(b + 16, n - 16, &sa), n - 16);
	assert_int_equal(sa.max_rcv_psn, (BASE + 5) & TP_PSN_MASK);
	assert_int_equal(sa.size_code, 0);
	for (uint32_t k = 0; k < 64; k++)
		assert_int_equal(ub_sack_test(sa.bitmap, k), k == 0 || k == 5);
	assert_int_equal(pull(&r, b, &f), 0);

	assert_int_equal(feed(&r, BASE + 5, false), TP_RX_DUP);	/* held twice */
	assert_int_equal(feed(&r, BASE - 1, false), TP_RX_DUP);	/* before the window */
	assert_int_equal(stat(&r, "rx_dup"), 2);
	n = pull(&r, b, &f);						/* re-acknowledged */
	assert_true(n > 0);
	assert_int_equal(f.psn, BASE);
	assert_int_equal(feed(&r, BASE + 1 + 128, false), TP_RX_DROP);	/* beyond the range */
	assert_int_equal(feed(&r, BASE + 1 + 127, false), TP_RX_OK);	/* its last PSN */
	assert_int_equal(stat(&r, "rx_invalid"), 1);

	for (uint32_t p = BASE + 1; p < BASE + 4; p++)
		assert_int_equal(feed(&r, p, false), TP_RX_OK);
	n = data_pkt(b, &r, BASE + 4, true, false);
	assert_int_equal(tp_ep_rx(r.ep, 0, b, n, NULL), TP_RX_OK);
	n = pull(&r, b, &f);
	/* Still a SACK: PSN +128 is held. */
	assert_int_equal(f.opcode, UB_TP_SACK);
	assert_int_equal(f.rspst, UB_RSPST_ACK);
	assert_int_equal(f.psn, (BASE + 5) & TP_PSN_MASK);	/* the held one followed */
	assert_int_equal(f.nlp, TP_NLP_NONE);
	assert_int_equal(ub_saetph_decode(b + 16, n - 16, &sa), n - 16);
	assert_int_equal(sa.size_code, 1);			/* 128 bits cover +128 */
	assert_int_equal(sa.max_rcv_psn, (BASE + 128) & TP_PSN_MASK);
	for (uint32_t k = 0; k < 128; k++)
		assert_int_equal(ub_sack_test(sa.bitmap, k), k == 0 || k == 123);
	assert_int_equal(stat(&r, "rx_inorder"), 5);
	assert_int_equal(stat(&r, "rx_ooo"), 2);
	assert_int_equal(stat(&r, "bytes_delivered"), 6 * 40);
	assert_int_equal(stat(&r, "msgs_delivered"), 0);	/* no Last yet */
	n = data_pkt(b, &r, BASE + 6, true, true);
	assert_int_equal(tp_ep_rx(r.ep, 0, b, n, NULL), TP_RX_OK);
	assert_int_equal(stat(&r, "msgs_delivered"), 1);
	{
		struct tp_event ev;

		assert_true(tp_ep_poll(r.ep, &ev));
		assert_int_equal(ev.type, TP_EV_RECV);
		assert_int_equal(ev.len, 7 * 40);
		assert_int_equal(ev.wr_id, 0);
		for (int i = 0; i < 7; i++)
			assert_int_equal(r.buf[0][i * 40], (uint8_t)(BASE + i));
	}
	n = pull(&r, b, &f);		/* the acknowledgement first, */
	assert_int_equal(f.opcode, UB_TP_SACK);
	assert_int_equal(f.psn, (BASE + 6) & TP_PSN_MASK);
	n = pull(&r, b, &f);		/* then the TAACK in its own packet (ROI) */
	assert_int_equal(f.opcode, UB_TP_RTP_DATA);
	assert_int_equal(n, 24);
	{
		struct ub_tah_fields t;

		ub_tah_decode((const struct ub_tah *)(b + 16), &t);
		assert_int_equal(t.opcode, UB_TA_TAACK);
		assert_int_equal(t.ini_tassn, 1);
		assert_int_equal(t.rspst, UB_RSPST_ACK);
	}
	tp_ep_destroy(r.ep);
}

/* AckReq forces an immediate TPACK; otherwise one per ack_coalesce packets,
 * or when the delayed-ack timer runs out. */
static void ack_coalescing(void **state)
{
	struct rx r;
	uint8_t b[4096];
	struct ub_tph_fields f;

	(void)state;
	rx_setup(&r, TP_MODE_RTP_SR, 3);
	assert_int_equal(feed(&r, BASE, false), TP_RX_OK);
	assert_int_equal(pull(&r, b, &f), 0);
	assert_int_equal(tp_ep_next_deadline(r.ep), 10000);
	assert_int_equal(feed(&r, BASE + 1, true), TP_RX_OK);
	assert_int_equal(pull(&r, b, &f), 16);
	assert_int_equal(f.psn, (BASE + 1) & TP_PSN_MASK);
	assert_int_equal(pull(&r, b, &f), 0);
	for (uint32_t p = BASE + 2; p < BASE + 5; p++) {
		assert_int_equal(pull(&r, b, &f), 0);
		assert_int_equal(feed(&r, p, false), TP_RX_OK);
	}
	assert_int_equal(pull(&r, b, &f), 16);			/* the third one */
	assert_int_equal(f.psn, (BASE + 4) & TP_PSN_MASK);
	assert_int_equal(feed(&r, BASE + 5, false), TP_RX_OK);
	assert_int_equal(pull(&r, b, &f), 0);
	r.now = tp_ep_next_deadline(r.ep);
	assert_int_equal(r.now, 10000);
	tp_ep_tick(r.ep, r.now);
	assert_int_equal(pull(&r, b, &f), 16);			/* the timer's */
	assert_int_equal(f.psn, (BASE + 5) & TP_PSN_MASK);
	assert_int_equal(tp_ep_next_deadline(r.ep), UINT64_MAX);
	tp_ep_destroy(r.ep);
}

/* Go-Back-N drops what is out of order; with fast retransmission it NAKs the
 * expected PSN once per gap. */
static void gbn_nak_once(void **state)
{
	for (int fast = 0; fast < 2; fast++) {
		struct rx r;
		uint8_t b[4096];
		struct ub_tph_fields f;

		(void)state;
		rx_setup(&r, fast ? TP_MODE_RTP_GBN_FAST : TP_MODE_RTP_GBN, 8);
		assert_int_equal(feed(&r, BASE, false), TP_RX_OK);
		assert_int_equal(feed(&r, BASE + 2, false), TP_RX_DROP);
		assert_int_equal(feed(&r, BASE + 3, false), TP_RX_DROP);
		assert_int_equal(stat(&r, "rx_gbn_drop"), 2);
		if (fast) {
			assert_int_equal(pull(&r, b, &f), 16);
			assert_int_equal(f.opcode, UB_TP_ACK);
			assert_int_equal(f.rspst, UB_RSPST_NAK);
			assert_int_equal(f.psn, (BASE + 1) & TP_PSN_MASK);
			assert_int_equal(stat(&r, "tx_nak"), 1);
		}
		assert_int_equal(pull(&r, b, &f), 0);
		assert_int_equal(stat(&r, "tx_nak"), fast ? 1 : 0);
		tp_ep_destroy(r.ep);
	}
}

/* What the core refuses, counted by reason, and nothing answered. */
static void malformed_counted(void **state)
{
	struct rx r;
	uint8_t b[4096], p[128];
	struct ub_tph_fields f;
	struct tp_stats st;
	size_t n;

	(void)state;
	rx_setup(&r, TP_MODE_RTP_SR, 1);
	n = data_pkt(p, &r, BASE, false, true);
	assert_int_equal(tp_ep_rx(r.ep, 0, p, 10, NULL), TP_RX_DROP);	/* short */
	assert_int_equal(tp_ep_rx(r.ep, 0, p, 20, NULL), TP_RX_DROP);	/* TAH cut */
	p[0] = 0x84;							/* opcode 4 */
	assert_int_equal(tp_ep_rx(r.ep, 0, p, n, NULL), TP_RX_DROP);
	n = data_pkt(p, &r, BASE, false, true);
	p[7] ^= 1;							/* DstTPN */
	assert_int_equal(tp_ep_rx(r.ep, 0, p, n, NULL), TP_RX_DROP);
	n = data_pkt(p, &r, BASE, false, true);
	p[4] ^= 1;							/* SrcTPN */
	assert_int_equal(tp_ep_rx(r.ep, 0, p, n, NULL), TP_RX_DROP);
	n = data_pkt(p, &r, BASE, false, true);
	p[0] = 0x80;		/* UTP: for no UTP channel (IniRCID 0), whatever the TPNs say */
	assert_int_equal(tp_ep_rx(r.ep, 0, p, n, NULL), TP_RX_DROP);
	n = data_pkt(p, &r, BASE, false, true);
	p[1] = TP_NLP_NONE;						/* data, no TAH */
	assert_int_equal(tp_ep_rx(r.ep, 0, p, n, NULL), TP_RX_DROP);
	tp_ep_stats(r.ep, &st);
	assert_int_equal(st.rx_malformed, 4);	/* short, cut, opcode 4, no TAH */
	assert_int_equal(st.rx_unknown_tpn, 3);
	assert_int_equal(st.rx_bad_opcode, 0);
	assert_int_equal(st.rx_inorder + st.rx_ooo + st.rx_dup, 0);
	assert_int_equal(pull(&r, b, &f), 0);
	tp_ep_destroy(r.ep);
}

/* One single-packet ROL request (TAH Order 3) of TA opcode ta, TASSN tassn,
 * at PSN psn; its answer, the TPACK of that PSN, pulled into f and t, the
 * one packet it gets. */
/* A Write's MAETAH comes with a TVETAH carrying this token value. */
static uint32_t rol_token_value;

static void rol_answer(struct rx *r, uint8_t ta, uint16_t tassn, uint32_t psn,
		       const struct ub_maetah_fields *mae, struct ub_tph_fields *f,
		       struct ub_tah_fields *t)
{
	struct ub_tph_fields h = {
		.opcode = UB_TP_RTP_DATA, .last = true, .nlp = UB_NLP_TAH, .ackreq = true,
		.src_tpn = PEER_TPN, .dst_tpn = tp_chan_tpn(r->ch), .psn = psn & TP_PSN_MASK,
		.tpmsn = tassn,
	};
	struct ub_tah_fields a = { .opcode = ta, .ini_tassn = tassn, .order = 3, .tv_en = !!mae };
	uint8_t b[4096];
	size_t n = 24;

	ub_tph_encode((struct ub_tph *)b, &h);
	ub_tah_encode((struct ub_tah *)(b + 16), &a);
	if (mae) {
		ub_maetah_encode((struct ub_maetah *)(b + n), mae);
		n += sizeof(struct ub_maetah);
		ub_tvetah_encode((struct ub_tvetah *)(b + n), rol_token_value);
		n += sizeof(struct ub_tvetah);
	}
	memset(b + n, 0x5a, 16);
	n += 16;
	assert_int_equal(tp_ep_rx(r->ep, r->now, b, n, NULL), TP_RX_OK);
	n = pull(r, b, f);
	assert_int_equal(n, 24);
	assert_int_equal(f->opcode, UB_TP_ACK);
	assert_int_equal(f->nlp, UB_NLP_TAH);
	assert_int_equal(f->psn, psn & TP_PSN_MASK);
	ub_tah_decode((const struct ub_tah *)(b + 16), t);
	assert_int_equal(t->opcode, UB_TA_TAACK);
	assert_int_equal(t->ini_tassn, tassn);
	/* ... and nothing after it: the AckReq's plain TPACK would
	 * acknowledge no further (a packet each way for every small message). */
	{
		struct ub_tph_fields more;

		assert_int_equal(pull(r, b, &more), 0);
	}
}

/*
 * ROL: the TAACK rides the TPACK of the request's last packet, and that
 * TPACK's RTPH carries the answer's RSPST/RSPINFO (UB 2.0 §6: they tell a
 * plain acknowledgement from RNR, page fault and completer error), as its
 * TAH does. An initiator takes the answer from the RTPH.
 */
static void rol_status_in_rtph(void **state)
{
	static uint8_t region[256];
	struct ub_maetah_fields mae = { .length = 16 };
	struct ub_tph_fields f;
	struct ub_tah_fields t;
	struct rx r;
	struct tp_rkey token;

	(void)state;
	rx_setup(&r, TP_MODE_RTP_SR, 8);
	assert_int_equal(tp_mr_reg(r.ep, region, sizeof(region), &token), 0);
	rol_token_value = token.token_value;
	/* Completer error: a Write with a token nobody registered. */
	mae.va = (uintptr_t)region;
	mae.token_id = token.token_id ^ 0x40;
	rol_answer(&r, UB_TA_WRITE, 10, BASE, &mae, &f, &t);
	assert_int_equal(f.rspst, UB_RSPST_COMPLETER_ERR);
	assert_int_equal(f.rspinfo, TP_RSPINFO_BAD_TOKEN);
	assert_int_equal(t.rspst, f.rspst);
	assert_int_equal(t.rspinfo, f.rspinfo);
	/* A plain acknowledgement: a good Write, a Send into a posted buffer. */
	mae.token_id = token.token_id;
	rol_answer(&r, UB_TA_WRITE, 11, BASE + 1, &mae, &f, &t);
	assert_int_equal(f.rspst, UB_RSPST_ACK);
	assert_int_equal(f.rspinfo, 0);
	rol_answer(&r, UB_TA_SEND, 12, BASE + 2, NULL, &f, &t);
	assert_int_equal(f.rspst, UB_RSPST_ACK);
	/* Page fault: the region is not resident. */
	assert_int_equal(tp_mr_set_resident(r.ep, token.token_id, false), 0);
	rol_answer(&r, UB_TA_WRITE, 13, BASE + 3, &mae, &f, &t);
	assert_int_equal(f.rspst, UB_RSPST_PAGE_FAULT);
	assert_int_equal(t.rspst, UB_RSPST_PAGE_FAULT);
	tp_ep_destroy(r.ep);

	/* RNR: a Send with no receive buffer; RSPINFO the wait asked for. */
	{
		struct tp_ep_config ec = { .seed = 1 };
		struct tp_chan_config c = { .mtu = 256, .rnr_wait_code = 9 };

		memset(&r, 0, sizeof(r));
		r.ep = tp_ep_create(&ec);
		r.ch = tp_chan_create(r.ep, &c);
		assert_non_null(r.ch);
		assert_int_equal(tp_chan_connect(r.ch, PEER_TPN, BASE), 0);
		rol_answer(&r, UB_TA_SEND, 20, BASE, NULL, &f, &t);
		assert_int_equal(f.rspst, UB_RSPST_RNR);
		assert_int_equal(f.rspinfo, 9);
		assert_int_equal(t.rspst, UB_RSPST_RNR);
		tp_ep_destroy(r.ep);
	}

	/* The initiator: the answer in the RTPH completes the Send. */
	{
		struct tp_ep_config ec = { .seed = 1 };
		struct tp_chan_config c = { .mtu = 256, .ta_mode = TP_TA_ROL };
		struct ub_tah_fields ta = { .opcode = UB_TA_TAACK };
		struct ub_tph_fields d;
		struct tp_event ev;
		uint8_t b[4096];
		size_t n;

		memset(&r, 0, sizeof(r));
		r.ep = tp_ep_create(&ec);
		r.ch = tp_chan_create(r.ep, &c);
		assert_int_equal(tp_chan_connect(r.ch, PEER_TPN, BASE), 0);
		assert_int_equal(tp_post_send(r.ch, "abc", 3, 7), 0);
		n = pull(&r, b, &d);
		assert_true(n > 24);
		ub_tah_decode((const struct ub_tah *)(b + 16), &t);
		f = (struct ub_tph_fields){
			.opcode = UB_TP_ACK, .last = true, .nlp = UB_NLP_TAH,
			.src_tpn = PEER_TPN, .dst_tpn = tp_chan_tpn(r.ch), .psn = d.psn,
			.rspst = UB_RSPST_COMPLETER_ERR, .rspinfo = TP_RSPINFO_TOO_LONG,
		};
		ta.ini_tassn = t.ini_tassn;
		ta.rspst = UB_RSPST_COMPLETER_ERR;
		ta.rspinfo = TP_RSPINFO_TOO_LONG;
		ub_tph_encode((struct ub_tph *)b, &f);
		ub_tah_encode((struct ub_tah *)(b + 16), &ta);
		assert_int_equal(tp_ep_rx(r.ep, 0, b, 24, NULL), TP_RX_OK);
		assert_true(tp_ep_poll(r.ep, &ev));
		assert_int_equal(ev.type, TP_EV_SEND_DONE);
		assert_int_equal(ev.wr_id, 7);
		assert_int_equal(ev.status, TP_ST_COMPLETER_ERR);
		assert_int_equal(ev.rspinfo, TP_RSPINFO_TOO_LONG);
		tp_ep_destroy(r.ep);
	}
}

/* Packet seg of a Write of len bytes of `byte` to va (TPMSN = TASSN = msn),
 * MTU-cut, its first packet at PSN psn0; into the endpoint. */
static void write_seg(struct rx *r, const struct tp_rkey *key, uint32_t msn, uint32_t psn0,
		      uintptr_t va, size_t len, uint32_t seg, uint8_t byte)
{
	size_t off = (size_t)seg * 256, plen = len - off < 256 ? len - off : 256;
	struct ub_tph_fields h = {
		.opcode = UB_TP_RTP_DATA, .last = off + plen == len, .nlp = UB_NLP_TAH,
		.src_tpn = PEER_TPN, .dst_tpn = tp_chan_tpn(r->ch),
		.psn = (psn0 + seg) & TP_PSN_MASK, .tpmsn = msn,
	};
	struct ub_tah_fields a = { .opcode = UB_TA_WRITE, .ini_tassn = (uint16_t)msn, .order = 1,
				   .tv_en = true };
	struct ub_maetah_fields mae = { .va = va + off, .token_id = key->token_id,
					.length = (uint32_t)len };
	uint8_t b[512];
	size_t n = 24;

	ub_tph_encode((struct ub_tph *)b, &h);
	ub_tah_encode((struct ub_tah *)(b + 16), &a);
	ub_maetah_encode((struct ub_maetah *)(b + n), &mae);
	n += sizeof(struct ub_maetah);
	ub_tvetah_encode((struct ub_tvetah *)(b + n), key->token_value);
	n += sizeof(struct ub_tvetah);
	memset(b + n, byte, plen);
	assert_int_equal(tp_ep_rx(r->ep, r->now, b, n + plen, NULL), TP_RX_OK);
}

/*
 * A peer's Writes take effect in posting order however their packets arrive
 * (docs/TRANSPORT.md): a later Write to the same bytes whose packets come
 * while an earlier one waits for a hole is not overwritten by the earlier
 * one when the hole fills. Placing a packet in memory as it arrives (tried
 * once, to save a copy) broke exactly this.
 */
static void writes_in_posting_order(void **state)
{
	static uint8_t region[512];
	struct tp_rkey key;
	struct rx r;

	(void)state;
	rx_setup(&r, TP_MODE_RTP_SR, 8);
	assert_int_equal(tp_mr_reg(r.ep, region, sizeof(region), &key), 0);
	memset(region, 0, sizeof(region));
	write_seg(&r, &key, 0, BASE, (uintptr_t)region, 512, 1, 0xaa);	/* m0, past the hole */
	write_seg(&r, &key, 1, BASE + 2, (uintptr_t)region, 256, 0, 0xbb);	/* m1, all of it */
	assert_int_equal(stat(&r, "rx_ooo"), 2);
	assert_int_equal(region[0], 0);	/* nothing of m1 before m0 ran */
	write_seg(&r, &key, 0, BASE, (uintptr_t)region, 512, 0, 0xaa);	/* the hole */
	assert_int_equal(stat(&r, "msgs_delivered"), 2);
	for (size_t k = 0; k < 512; k++)
		assert_int_equal(region[k], k < 256 ? 0xbb : 0xaa);
	tp_ep_destroy(r.ep);
}

/* A TPSACK to a sender whose init PSN is base: cumulative base + cum,
 * MaxRcvPSN base + max, the offsets in held SACKed. */
static void feed_sack(struct rx *r, uint32_t base, uint32_t cum, uint32_t max,
		      const uint32_t *held, size_t n)
{
	struct ub_tph_fields f = {
		.opcode = UB_TP_SACK, .nlp = TP_NLP_NONE, .src_tpn = PEER_TPN,
		.dst_tpn = tp_chan_tpn(r->ch), .psn = (base + cum) & TP_PSN_MASK,
	};
	struct ub_saetph_fields sa = { .size_code = 0, .max_rcv_psn = (base + max) & TP_PSN_MASK };
	uint8_t b[256];
	size_t len;

	ub_sack_set(sa.bitmap, 0);
	for (size_t i = 0; i < n; i++)
		ub_sack_set(sa.bitmap, held[i] - cum);
	ub_tph_encode((struct ub_tph *)b, &f);
	len = 16 + ub_saetph_encode(b + 16, &sa);
	assert_int_equal(tp_ep_rx(r->ep, r->now, b, len, NULL), TP_RX_OK);
}

/* The PSN offsets (from base) of the data packets the sender has now. */
static size_t pull_data(struct rx *r, uint32_t base, uint32_t *off, size_t max)
{
	uint8_t b[4096];
	struct ub_tph_fields f;
	size_t n = 0;

	while (n < max && pull(r, b, &f))
		if (f.opcode == UB_TP_RTP_DATA)
			off[n++] = (f.psn - base) & TP_PSN_MASK;
	return n;
}

/*
 * Selective retransmission's two marks as UB 2.0 §6 has them. MarkPSN: the
 * next new PSN when the channel switches from new data to retransmission.
 * HighRtxPSN: the highest PSN resent in the current round; a hole at or
 * below it is not resent again in the round, however often a TPSACK shows
 * it, until a TPSACK shows a packet at or past MarkPSN (sent after those
 * resends: they were lost), which begins a new round.
 */
static void sr_markpsn_highrtx(void **state)
{
	static const uint8_t msg[24 * 256];
	const uint32_t base = TP_PSN_MASK - 9;	/* across the wrap */
	struct tp_ep_config ec = { .seed = 1 };
	struct tp_chan_config c = {
		.mode = TP_MODE_RTP_SR, .mtu = 256, .window = 64, .fixed_init_psn = true,
		.init_psn = base, .rto_static_ns = TP_RTO_4S,
	};
	static const uint32_t held1[] = { 3, 4, 6, 7, 8, 9 };
	static const uint32_t held2[] = { 3, 4, 6, 7, 8, 9, 10, 12 };
	static const uint32_t held3[] = { 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
					  18, 19, 20 };
	uint32_t off[64];
	struct tp_stats st;
	struct rx r;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.ep = tp_ep_create(&ec);
	r.ch = tp_chan_create(r.ep, &c);
	assert_int_equal(tp_chan_connect(r.ch, PEER_TPN, 0), 0);
	assert_int_equal(tp_post_send(r.ch, msg, 20 * 256, 1), 0);
	assert_int_equal(pull_data(&r, base, off, 64), 20);		/* 0 .. 19 */
	/* Holes 2 and 5 below MaxRcvPSN 9: both resent, in order; the switch
	 * to retransmission marks the next new PSN, 20. */
	feed_sack(&r, base, 1, 9, held1, 6);
	assert_int_equal(pull_data(&r, base, off, 64), 2);
	assert_int_equal(off[0], 2);
	assert_int_equal(off[1], 5);
	tp_chan_stats(r.ch, &st);
	assert_int_equal(st.rtx_sack, 2);
	assert_int_equal(st.high_rtx_psn, (base + 5) & TP_PSN_MASK);
	assert_int_equal(st.mark_psn, (base + 20) & TP_PSN_MASK);
	/* The same holes again: resent in this round, not twice. */
	feed_sack(&r, base, 1, 9, held1, 6);
	assert_int_equal(pull_data(&r, base, off, 64), 0);
	/* A new hole above HighRtxPSN in the round: its first loss, resent;
	 * HighRtxPSN rises, MarkPSN stays (no new data went between). */
	feed_sack(&r, base, 1, 12, held2, 8);
	assert_int_equal(pull_data(&r, base, off, 64), 1);
	assert_int_equal(off[0], 11);
	tp_chan_stats(r.ch, &st);
	assert_int_equal(st.high_rtx_psn, (base + 11) & TP_PSN_MASK);
	assert_int_equal(st.mark_psn, (base + 20) & TP_PSN_MASK);
	/* New data: 20 .. 23. */
	assert_int_equal(tp_post_send(r.ch, msg, 4 * 256, 2), 0);
	assert_int_equal(pull_data(&r, base, off, 64), 4);
	assert_int_equal(off[0], 20);
	/* MaxRcvPSN 19 < MarkPSN: 2 may still be on its way. */
	feed_sack(&r, base, 1, 19, held3, 17);
	assert_int_equal(pull_data(&r, base, off, 64), 0);
	/* MaxRcvPSN 20 = MarkPSN with 2 still open: its resend was lost. It
	 * goes again at once, a new round: MarkPSN 24, HighRtxPSN 2. */
	feed_sack(&r, base, 1, 20, held3, 18);
	assert_int_equal(pull_data(&r, base, off, 64), 1);
	assert_int_equal(off[0], 2);
	tp_chan_stats(r.ch, &st);
	assert_int_equal(st.rtx_mark, 1);
	assert_int_equal(st.high_rtx_psn, (base + 2) & TP_PSN_MASK);
	assert_int_equal(st.mark_psn, (base + 24) & TP_PSN_MASK);
	assert_int_equal(st.rto_fired, 0);
	tp_ep_destroy(r.ep);
}

/*
 * UTP as UB 2.0 §6 has it: the UTPH is 16 bytes, mostly reserved, with no
 * PSN and no TPN ([chosen] layout, docs/TRANSPORT.md: byte 0 Last . TPOpcode
 * 0, byte 1 TPVer . Pad . NLP, bytes 2-15 reserved, sent 0 and ignored). A
 * message is one packet (no PSN to put segments in order by); it finds its
 * channel by what the transaction layer carries: the TAH's IniRCID, the
 * sender's jetty (its channel), and the source entity when the channel
 * names one.
 */
static size_t utp_pkt(uint8_t *b, uint8_t byte0, uint8_t rsv, uint32_t rcid, uint16_t tassn,
		      size_t plen)
{
	struct ub_tah_fields t = { .opcode = UB_TA_SEND, .ini_tassn = tassn, .ini_rcid = rcid };

	memset(b, rsv, 16);
	b[0] = byte0;
	b[1] = UB_NLP_TAH;
	ub_tah_encode((struct ub_tah *)(b + 16), &t);
	for (size_t i = 0; i < plen; i++)
		b[24 + i] = (uint8_t)(tassn + i);
	return 24 + plen;
}

static void utp_notes_header(void **state)
{
	struct tp_ep_config ec = { .seed = 1 };
	struct tp_chan_config c = { .mode = TP_MODE_UTP, .mtu = 256 };
	struct tp_rx_meta m = { 0 };
	uint8_t b[512], rb[2][300];
	struct tp_tx_info info;
	struct tp_event ev;
	struct tp_stats st;
	struct tp_chan *ch2;
	struct tp_ep *ep;
	struct tp_chan *ch;
	size_t n;

	(void)state;
	ep = tp_ep_create(&ec);
	ch = tp_chan_create(ep, &c);
	assert_non_null(ch);
	assert_int_equal(tp_chan_connect(ch, PEER_TPN, 0), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(tp_post_recv(ch, rb[i], sizeof(rb[i]), (uint64_t)i), 0);
	/* A conforming peer's message, reserved bytes 0: taken, whole. */
	n = utp_pkt(b, 0x80, 0, PEER_TPN, 5, 200);
	assert_int_equal(tp_ep_rx(ep, 0, b, n, NULL), TP_RX_OK);
	assert_true(tp_ep_poll(ep, &ev));
	assert_int_equal(ev.type, TP_EV_RECV);
	assert_int_equal(ev.len, 200);
	assert_int_equal(ev.tassn, 5);
	assert_memory_equal(rb[0], b + 24, 200);
	/* Reserved bytes (and Last) are ignored on receipt. */
	n = utp_pkt(b, 0x00, 0xa5, PEER_TPN, 6, 10);
	b[1] = 0x30 | UB_NLP_TAH;	/* Pad */
	assert_int_equal(tp_ep_rx(ep, 0, b, n, NULL), TP_RX_OK);
	assert_true(tp_ep_poll(ep, &ev));
	assert_int_equal(ev.tassn, 6);
	assert_int_equal(ev.len, 10);
	/* Another jetty's message is not this channel's. */
	n = utp_pkt(b, 0x80, 0, PEER_TPN + 1, 7, 10);
	assert_int_equal(tp_ep_rx(ep, 0, b, n, NULL), TP_RX_DROP);
	assert_false(tp_ep_poll(ep, &ev));
	tp_ep_stats(ep, &st);
	assert_int_equal(st.rx_unknown_tpn, 1);

	/* What this core sends: the same layout, one packet per message. */
	assert_int_equal(tp_post_send(ch, b, 257, 1), -EMSGSIZE);
	assert_int_equal(tp_post_send(ch, "hello", 5, 1), 0);
	n = tp_ep_tx(ep, 0, b, sizeof(b), &info);
	assert_int_equal(n, 16 + 8 + 5);
	assert_int_equal(b[0], 0x80);			/* Last, TPOpcode 0 */
	assert_int_equal(b[1], UB_NLP_TAH);
	for (int i = 2; i < 16; i++)
		assert_int_equal(b[i], 0);
	{
		struct ub_tah_fields t;

		ub_tah_decode((const struct ub_tah *)(b + 16), &t);
		assert_int_equal(t.opcode, UB_TA_SEND);
		assert_int_equal(t.ini_rcid, tp_chan_tpn(ch));
	}
	assert_memory_equal(b + 24, "hello", 5);

	assert_true(tp_ep_poll(ep, &ev));
	assert_int_equal(ev.type, TP_EV_SEND_DONE);
	/* A channel that names its peer entity takes only that source's. */
	c.peer_entity[0] = 10;
	c.peer_entity[3] = 2;
	ch2 = tp_chan_create(ep, &c);
	assert_non_null(ch2);
	assert_int_equal(tp_chan_connect(ch2, PEER_TPN + 1, 0), 0);
	assert_int_equal(tp_post_recv(ch2, rb[0], sizeof(rb[0]), 9), 0);
	n = utp_pkt(b, 0x80, 0, PEER_TPN + 1, 8, 10);
	m.src[0] = 10;
	m.src[3] = 3;
	assert_int_equal(tp_ep_rx(ep, 0, b, n, &m), TP_RX_DROP);
	m.src[3] = 2;
	assert_int_equal(tp_ep_rx(ep, 0, b, n, &m), TP_RX_OK);
	assert_true(tp_ep_poll(ep, &ev));
	assert_int_equal(ev.wr_id, 9);
	/* A UTP channel's jetty is its TPN, an IniRCID: at most 20 bits. */
	c.local_tpn = TP_CTP_RCID_MAX + 1;
	assert_null(tp_chan_create(ep, &c));
	tp_ep_destroy(ep);
}

/* Configuration errors are refused, not clamped. */
static void config_checked(void **state)
{
	struct tp_ep_config ec = { .seed = 1 };
	struct tp_ep *ep = tp_ep_create(&ec);
	struct tp_chan_config c = { 0 };
	struct tp_chan *a, *b;
	enum tp_mode m;

	(void)state;
	c.ooo_range = 100;
	assert_null(tp_chan_create(ep, &c));
	c.ooo_range = 4096;
	assert_null(tp_chan_create(ep, &c));
	c.ooo_range = 2048;
	c.window = TP_PSN_HALF;
	assert_null(tp_chan_create(ep, &c));
	c.window = TP_PSN_HALF - 1;
	a = tp_chan_create(ep, &c);
	assert_non_null(a);
	c.local_tpn = tp_chan_tpn(a);
	assert_null(tp_chan_create(ep, &c));				/* TPN taken */
	c.local_tpn = 0;
	b = tp_chan_create(ep, &c);
	assert_non_null(b);
	assert_int_not_equal(tp_chan_tpn(a), tp_chan_tpn(b));
	assert_int_not_equal(tp_chan_init_psn(a), tp_chan_init_psn(b));	/* random */
	assert_int_equal(tp_post_send(a, "x", 1, 0), -ENOTCONN);
	{
		/* Bounded queues: posted operations, receive buffers. */
		struct tp_chan_config q = { .max_ops = 2 };
		struct tp_chan *qc = tp_chan_create(ep, &q);
		char buf[4];

		assert_non_null(qc);
		assert_int_equal(tp_chan_connect(qc, 9, 0), 0);
		assert_int_equal(tp_post_send(qc, "x", 1, 0), 0);
		assert_int_equal(tp_post_write(qc, "x", 1, 0, (struct tp_rkey){ 1, 0 }, 1), 0);
		assert_int_equal(tp_post_send(qc, "x", 1, 2), -EAGAIN);
		assert_int_equal(tp_chan_outstanding(qc), 2);
		assert_int_equal(tp_post_recv(qc, buf, 4, 0), 0);
		assert_int_equal(tp_post_recv(qc, buf, 4, 1), 0);
		assert_int_equal(tp_post_recv(qc, buf, 4, 2), -EAGAIN);
		assert_int_equal(tp_post_send(qc, NULL, 5, 3), -EAGAIN);
		tp_chan_destroy(qc);
	}
	assert_int_equal(tp_chan_connect(a, 1u << 24, 0), -EINVAL);
	assert_int_equal(tp_chan_connect(a, 5, 0), 0);
	assert_int_equal(tp_chan_connect(a, 5, 0), -EISCONN);
	assert_int_equal(tp_mode_parse("rtp-gbn-fast", &m), 0);
	assert_int_equal(m, TP_MODE_RTP_GBN_FAST);
	assert_int_equal(tp_mode_parse("rtp", &m), -EINVAL);
	assert_int_equal(tp_psn_diff(1, TP_PSN_MASK), 2);
	assert_int_equal(tp_psn_diff(TP_PSN_MASK, 1), -2);
	tp_ep_destroy(ep);
}

/* Whole frames: the packet library parses, the ICRC is checked, ECN passes. */
static void frames_in(void **state)
{
	struct rx r;
	uint8_t p[128], f[512];
	struct ub_pkt_spec spec;
	struct tp_stats st;
	size_t n, fl;

	(void)state;
	rx_setup(&r, TP_MODE_RTP_SR, 8);
	n = data_pkt(p, &r, BASE, false, false);
	ub_pkt_spec_init(&spec);
	spec.ecn = 3;	/* CE */
	assert_int_equal(tp_pkt_to_spec(p, n, &spec), 0);
	assert_int_equal(spec.payload_len, 40);
	assert_true(spec.has_tah);
	fl = ub_build_uboe(&spec, f, sizeof(f));
	assert_true(fl > n);
	f[fl - 6] ^= 1;						/* payload: ICRC breaks */
	assert_int_equal(tp_ep_rx_frame(r.ep, 0, f, fl), TP_RX_DROP);
	f[fl - 6] ^= 1;
	assert_int_equal(tp_ep_rx_frame(r.ep, 0, f, fl), TP_RX_OK);
	assert_int_equal(tp_ep_rx_frame(r.ep, 0, f, 30), TP_RX_DROP);	/* not UB */
	memset(f + 12, 0x08, 1);
	f[13] = 0x06;						/* ARP */
	assert_int_equal(tp_ep_rx_frame(r.ep, 0, f, fl), TP_RX_DROP);
	tp_ep_stats(r.ep, &st);
	assert_int_equal(st.rx_bad_icrc, 1);
	assert_int_equal(st.rx_not_ub, 2);
	assert_int_equal(st.rx_inorder, 1);
	assert_int_equal(st.rx_ecn_ce, 1);
	tp_ep_destroy(r.ep);
}

/* The endpoint's deadlines in two (tp_ep_deadlines, which a sleeping loop may
 * meet up to 200 us late only for the loss timers): the RTO of a Send apart,
 * the delayed TPACK with the timers that must be met on time. */
static void deadlines_loss_timers_apart(void **state)
{
	static uint8_t msg[100];
	struct rx r;
	uint8_t b[4096];
	struct ub_tph_fields f;
	uint64_t loss, exact;

	(void)state;
	rx_setup(&r, TP_MODE_RTP_SR, 3);
	assert_int_equal(tp_ep_deadlines(r.ep, &loss), UINT64_MAX);
	assert_int_equal(loss, UINT64_MAX);
	assert_int_equal(feed(&r, BASE, false), TP_RX_OK);	/* its TPACK delayed */
	assert_int_equal(tp_ep_deadlines(r.ep, &loss), 10000);
	assert_int_equal(loss, UINT64_MAX);
	assert_int_equal(tp_post_send(r.ch, msg, sizeof(msg), 9), 0);
	assert_true(pull(&r, b, &f) > 16);			/* the Send, its RTO armed */
	assert_int_equal(f.opcode, UB_TP_RTP_DATA);
	exact = tp_ep_deadlines(r.ep, &loss);
	assert_int_equal(exact, 10000);
	assert_true(loss > 10000 && loss < UINT64_MAX);
	assert_int_equal(tp_ep_next_deadline(r.ep), 10000);
	r.now = 10000;
	tp_ep_tick(r.ep, r.now);
	assert_int_equal(pull(&r, b, &f), 16);			/* the delayed TPACK */
	assert_int_equal(tp_ep_deadlines(r.ep, &exact), UINT64_MAX);
	assert_int_equal(exact, loss);				/* the RTO, still */
	assert_int_equal(tp_ep_next_deadline(r.ep), loss);
	tp_ep_destroy(r.ep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(classify_sr),
		cmocka_unit_test(ack_coalescing),
		cmocka_unit_test(gbn_nak_once),
		cmocka_unit_test(malformed_counted),
		cmocka_unit_test(config_checked),
		cmocka_unit_test(rol_status_in_rtph),
		cmocka_unit_test(writes_in_posting_order),
		cmocka_unit_test(sr_markpsn_highrtx),
		cmocka_unit_test(utp_notes_header),
		cmocka_unit_test(frames_in),
		cmocka_unit_test(deadlines_loss_timers_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
