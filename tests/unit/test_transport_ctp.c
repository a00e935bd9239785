// SPDX-License-Identifier: BSD-2-Clause
/*
 * CTP in the transport core (user/transport/tp_ctp.c) over the deterministic
 * simulated link: no PSN, no transport acknowledgement, one packet per
 * operation, the TAACK as a data packet; on a lossless link every message
 * arrives, byte for byte; a lost request or answer fails its operation after
 * the transaction timeout instead of hanging. And the CTP frame on a native
 * port: uboe_wrap() builds it, ub_parse_frame_ctp() reads it, ub_parse_frame()
 * (the UB2E switch's view) refuses it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tp_pair.h"
#include "lib/ubhdr.h"
#include "lib/frame.h"
#include "lib/uboe_wrap.h"
#include "ub_wire.h"

#define US 1000ull
#define MS 1000000ull
#define MTU 1024

static void ctp_cfg(struct tp_chan_config c[2])
{
	c[0] = (struct tp_chan_config){ .mode = TP_MODE_CTP, .ta_mode = TP_TA_ROI, .mtu = MTU,
					.ta_timeout_ns = 2 * MS };
	c[1] = c[0];
}


/* What went on the wire, and a deterministic drop list per direction. */
struct wire {
	uint32_t pkts[2], not_ctp, bad_len, bad_ctph;
	uint32_t drop_nth[2][4];	/* 1-based packet numbers to drop; 0: none */
	uint32_t dropped[2];
};

static bool wire_filter(void *ctx, const struct tp_sim_pkt *p, uint64_t now)
{
	struct wire *w = ctx;
	uint32_t k = ++w->pkts[p->from];
	struct ub_tah_fields t;

	(void)now;
	if (!p->info.ctp)
		w->not_ctp++;
	if (p->len < 1 + sizeof(struct ub_tah) || p->tp[0] != ub_ctph_make(UB_CTP_OP_TA, UB_NLP_TAH)) {
		w->bad_ctph++;
	} else {
		/* No TPH: CTPH, TAH, [MAETAH], the payload, nothing else. */
		ub_tah_decode((const struct ub_tah *)(p->tp + 1), &t);
		if (t.opcode == UB_TA_SEND && p->len > 1 + sizeof(struct ub_tah) + MTU)
			w->bad_len++;
	}
	for (int i = 0; i < 4; i++)
		if (w->drop_nth[p->from][i] == k) {
			w->dropped[p->from]++;
			return true;
		}
	return false;
}

/* A lossless link: every Send arrives once, in order, byte for byte; the
 * only packets are the operations and their TAACKs. */
static void ctp_lossless_sends(void **state)
{
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct tp_stats a, b;
	struct wire w = { 0 };

	(void)state;
	ctp_cfg(c);
	pair_link_cfg(&s, 3);
	s.filter = wire_filter;
	s.filter_ctx = &w;
	assert_int_equal(pair_init(&p, c, &s, 400, MTU, 3), 0);
	PAIR_CHECK(&p, pair_run(&p, 1000 * MS));
	assert_int_equal(w.pkts[0], 400);	/* one packet per Send */
	assert_int_equal(w.pkts[1], 400);	/* one TAACK packet per Send */
	assert_int_equal(w.not_ctp + w.bad_len + w.bad_ctph, 0);
	tp_chan_stats(p.ch[0], &a);
	tp_chan_stats(p.ch[1], &b);
	assert_int_equal(a.tx_ack + a.tx_sack + a.tx_nak + b.tx_ack + b.tx_sack + b.tx_nak, 0);
	assert_int_equal(a.rtx_rto + a.rtx_nak + a.rtx_sack + a.rtx_mark + a.rto_fired, 0);
	assert_int_equal(b.tx_taack, 400);
	assert_int_equal(b.rx_ctp, 400);
	assert_int_equal(a.rx_ctp, 400);
	assert_int_equal(b.msgs_delivered, 400);
	assert_int_equal(a.ta_timeout, 0);
	assert_int_equal(tp_ep_next_deadline(p.ep[0]), UINT64_MAX);	/* nothing left to time */
	pair_free(&p);
}

/* Posts Sends of `len` bytes numbered 0..n-1 and collects their completions. */
struct loss_run {
	struct tp_pair *p;
	uint8_t msg[32][256];
	uint8_t rbuf[32][256];
	uint32_t n, posted, done, ok, timeouts, recvd, bad;
	uint64_t done_ns[32], post_ns[32];
	enum tp_status st[32];
};

static bool loss_step(void *ctx)
{
	struct loss_run *r = ctx;
	struct tp_event ev;

	while (tp_ep_poll(r->p->ep[0], &ev)) {
		if (ev.type != TP_EV_SEND_DONE || ev.wr_id != r->done) {
			r->bad++;	/* completions come in posting order */
			continue;
		}
		r->st[r->done] = ev.status;
		r->done_ns[r->done++] = tp_sim_now(r->p->sim);
		if (ev.status == TP_ST_OK)
			r->ok++;
		else if (ev.status == TP_ST_TIMEOUT)
			r->timeouts++;
		else
			r->bad++;
	}
	while (tp_ep_poll(r->p->ep[1], &ev)) {
		if (ev.type != TP_EV_RECV || ev.len != 256 ||
		    memcmp(r->rbuf[ev.wr_id], r->msg[r->rbuf[ev.wr_id][0]], 256))
			r->bad++;
		r->recvd++;
		tp_post_recv(r->p->ch[1], r->rbuf[ev.wr_id], 256, ev.wr_id);
	}
	while (r->posted < r->n && r->posted - r->done < 4) {
		r->post_ns[r->posted] = tp_sim_now(r->p->sim);
		if (tp_post_send(r->p->ch[0], r->msg[r->posted], 256, r->posted))
			r->bad++;
		r->posted++;
	}
	return r->done == r->n;
}

/* The 3rd request and the 6th answer lost: those two operations fail after
 * the transaction timeout (no retransmission, no hang), every other one
 * completes, the channel stays usable. */
static void ctp_loss_times_out(void **state)
{
	static struct loss_run r;
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct tp_stats a, b;
	struct wire w = { .drop_nth = { { 3 }, { 6 } } };

	(void)state;
	memset(&r, 0, sizeof(r));
	ctp_cfg(c);
	pair_link_cfg(&s, 4);
	s.filter = wire_filter;
	s.filter_ctx = &w;
	assert_int_equal(pair_init(&p, c, &s, 0, 256, 4), 0);
	r.p = &p;
	r.n = 20;
	for (uint32_t i = 0; i < r.n; i++)
		for (size_t j = 0; j < 256; j++)
			r.msg[i][j] = j ? (uint8_t)(i * 17 + j) : (uint8_t)i;
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(tp_post_recv(p.ch[1], r.rbuf[i], 256, i), 0);
	assert_true(tp_sim_run(p.sim, 1000 * MS, loss_step, &r));
	assert_int_equal(r.bad, 0);
	assert_int_equal(w.dropped[0], 1);
	assert_int_equal(w.dropped[1], 1);
	assert_int_equal(r.timeouts, 2);
	assert_int_equal(r.ok, 18);
	assert_int_equal(r.st[2], TP_ST_TIMEOUT);	/* its request was lost */
	/* The 6th answer is the 7th Send's (the 3rd was never answered). */
	assert_int_equal(r.st[6], TP_ST_TIMEOUT);
	assert_int_equal(r.recvd, 19);			/* the target got the 7th */
	/* Failed when the timeout said, not before, not much after. */
	assert_true(r.done_ns[2] - r.post_ns[2] >= 2 * MS);
	assert_true(r.done_ns[2] - r.post_ns[2] < 2 * MS + 100 * US);
	tp_chan_stats(p.ch[0], &a);
	tp_chan_stats(p.ch[1], &b);
	assert_int_equal(a.ta_timeout, 2);
	assert_int_equal(a.tx_data, 20);		/* nothing resent */
	assert_int_equal(a.rtx_rto + a.rtx_nak + a.rtx_sack + a.rtx_mark, 0);
	assert_false(tp_chan_failed(p.ch[0]));
	assert_int_equal(b.tx_ack + b.tx_sack + b.tx_nak, 0);
	assert_int_equal(tp_ep_next_deadline(p.ep[0]), UINT64_MAX);
	pair_free(&p);
}

struct evc {
	struct tp_pair *p;
	struct tp_event ev;
	bool got;
};

static bool evc_done(void *ctx)
{
	struct evc *e = ctx;
	struct tp_event ev;

	while (tp_ep_poll(e->p->ep[0], &ev))
		if (!e->got) {
			e->ev = ev;
			e->got = true;
		}
	while (tp_ep_poll(e->p->ep[1], &ev))
		;
	return e->got;
}

static struct tp_event run_op(struct tp_pair *p, uint64_t until)
{
	struct evc e = { .p = p };

	if (!tp_sim_run(p->sim, tp_sim_now(p->sim) + until, evc_done, &e))
		fail_msg("no completion");
	return e.ev;
}

/* Write and Read over CTP, each one packet; what does not fit one packet is
 * refused at posting (EMSGSIZE); the target's refusals come back as TAACKs. */
static void ctp_write_read(void **state)
{
	static uint8_t target[8192], src[MTU + 1], dst[MTU + 1];
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct tp_event ev;
	struct wire w = { 0 };
	uint64_t va = (uint64_t)(uintptr_t)target;
	struct tp_rkey tok;

	(void)state;
	ctp_cfg(c);
	pair_link_cfg(&s, 5);
	s.filter = wire_filter;
	s.filter_ctx = &w;
	assert_int_equal(pair_init(&p, c, &s, 0, 64, 5), 0);
	memset(target, 0, sizeof(target));
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 13 + 7);
	assert_int_equal(tp_mr_reg(p.ep[1], target, sizeof(target), &tok), 0);

	assert_int_equal(tp_post_write(p.ch[0], src, MTU, va + 1000, tok, 1), 0);
	ev = run_op(&p, 10 * MS);
	assert_int_equal(ev.type, TP_EV_WRITE_DONE);
	assert_int_equal(ev.status, TP_ST_OK);
	assert_memory_equal(target + 1000, src, MTU);
	assert_int_equal(target[999], 0);
	assert_int_equal(target[1000 + MTU], 0);
	assert_int_equal(w.pkts[0], 1);
	assert_int_equal(w.pkts[1], 1);

	memset(dst, 0, sizeof(dst));
	assert_int_equal(tp_post_read(p.ch[0], dst, MTU, va + 1000, tok, 2), 0);
	ev = run_op(&p, 10 * MS);
	assert_int_equal(ev.type, TP_EV_READ_DONE);
	assert_int_equal(ev.status, TP_ST_OK);
	assert_int_equal(ev.len, MTU);
	assert_memory_equal(dst, src, MTU);
	assert_int_equal(w.pkts[0], 2);	/* the request ... */
	assert_int_equal(w.pkts[1], 2);	/* ... and one ReadResp packet */

	/* One operation, one packet. */
	assert_int_equal(tp_post_write(p.ch[0], src, MTU + 1, va, tok, 3), -EMSGSIZE);
	assert_int_equal(tp_post_read(p.ch[0], dst, MTU + 1, va, tok, 3), -EMSGSIZE);
	assert_int_equal(tp_post_send(p.ch[0], src, MTU + 1, 3), -EMSGSIZE);

	assert_int_equal(tp_post_write(p.ch[0], src, 100, va, BAD_ID(tok), 4), 0);
	ev = run_op(&p, 10 * MS);
	assert_int_equal(ev.status, TP_ST_COMPLETER_ERR);
	assert_int_equal(ev.rspinfo, TP_RSPINFO_BAD_TOKEN);
	assert_int_equal(tp_post_read(p.ch[0], dst, 100, va + sizeof(target) - 10, tok, 5), 0);
	ev = run_op(&p, 10 * MS);
	assert_int_equal(ev.type, TP_EV_READ_DONE);
	assert_int_equal(ev.status, TP_ST_COMPLETER_ERR);
	assert_int_equal(ev.rspinfo, TP_RSPINFO_RANGE);
	assert_int_equal(w.not_ctp + w.bad_ctph, 0);
	pair_free(&p);
}

/* A Send to a target with no buffer posted is answered RNR and retried (the
 * transport resends nothing, the transaction layer does). */
static void ctp_rnr_retried(void **state)
{
	static uint8_t msg[200], rb[200];
	struct tp_chan_config c[2];
	struct tp_sim_cfg s;
	struct tp_pair p;
	struct tp_event ev;
	struct tp_stats a;

	(void)state;
	ctp_cfg(c);
	c[0].rnr_delay_ns = 50 * US;
	pair_link_cfg(&s, 6);
	assert_int_equal(pair_init(&p, c, &s, 0, 64, 6), 0);
	memset(msg, 0x5c, sizeof(msg));
	assert_int_equal(tp_post_send(p.ch[0], msg, sizeof(msg), 9), 0);
	tp_sim_run(p.sim, tp_sim_now(p.sim) + 70 * US, NULL, NULL);
	assert_int_equal(tp_post_recv(p.ch[1], rb, sizeof(rb), 0), 0);
	ev = run_op(&p, 10 * MS);
	assert_int_equal(ev.type, TP_EV_SEND_DONE);
	assert_int_equal(ev.status, TP_ST_OK);
	assert_memory_equal(rb, msg, sizeof(msg));
	tp_chan_stats(p.ch[0], &a);
	assert_true(a.ta_retry_rnr >= 1);
	assert_int_equal(a.ta_timeout, 0);
	pair_free(&p);
}

/* CTP packet by hand: CTPH | TAH (Send, IniRCID) | payload. */
static size_t ctp_send_pkt(uint8_t *b, uint32_t rcid, uint16_t tassn, size_t plen)
{
	struct ub_tah_fields t = { .opcode = UB_TA_SEND, .ini_tassn = tassn, .order = 1,
				   .ini_rcid = rcid };

	b[0] = ub_ctph_make(UB_CTP_OP_TA, UB_NLP_TAH);
	ub_tah_encode((struct ub_tah *)(b + 1), &t);
	memset(b + 9, 0xab, plen);
	return 9 + plen;
}

/* Without TPNs a packet finds its channel by IniRCID and the source entity;
 * what matches none is counted and dropped, and so is an RTPH for a CTP
 * channel or a CTPH with a reserved opcode. */
static void ctp_context_lookup(void **state)
{
	static uint8_t rb[4][64];
	struct tp_ep_config ec = { .seed = 1 };
	struct tp_chan_config c = { .mode = TP_MODE_CTP, .mtu = 256 };
	struct tp_rx_meta m = { .ctp = true };
	struct tp_ep *ep = tp_ep_create(&ec);
	struct tp_chan *x, *y;
	struct tp_stats st;
	struct tp_event ev;
	uint8_t pkt[128];
	size_t n;

	(void)state;
	memcpy(c.peer_entity, "\x0a\x00\x00\x01", 4);
	x = tp_chan_create(ep, &c);
	memcpy(c.peer_entity, "\x0a\x00\x00\x02", 4);
	y = tp_chan_create(ep, &c);
	assert_non_null(x);
	assert_non_null(y);
	/* Both peers call their channel 7. */
	assert_int_equal(tp_chan_connect(x, 7, 0), 0);
	assert_int_equal(tp_chan_connect(y, 7, 0), 0);
	assert_int_equal(tp_post_recv(x, rb[0], 64, 100), 0);
	assert_int_equal(tp_post_recv(y, rb[1], 64, 200), 0);

	memcpy(m.src, "\x0a\x00\x00\x02", 4);
	n = ctp_send_pkt(pkt, 7, 1, 10);
	assert_int_equal(tp_ep_rx(ep, 0, pkt, n, &m), TP_RX_OK);
	assert_true(tp_ep_poll(ep, &ev));
	assert_int_equal(ev.type, TP_EV_RECV);
	assert_ptr_equal(ev.chan, y);
	assert_int_equal(ev.wr_id, 200);
	assert_int_equal(ev.len, 10);

	memcpy(m.src, "\x0a\x00\x00\x01", 4);
	assert_int_equal(tp_ep_rx(ep, 0, pkt, n, &m), TP_RX_OK);
	assert_true(tp_ep_poll(ep, &ev));
	assert_ptr_equal(ev.chan, x);

	/* Answers are packets, whatever Order the request claimed (no TPACK). */
	{
		struct ub_tah_fields t = { .opcode = UB_TA_SEND, .ini_tassn = 9, .order = 3,
					   .ini_rcid = 7 };
		struct tp_tx_info info;
		uint8_t out[256];

		assert_int_equal(tp_post_recv(x, rb[2], 64, 101), 0);
		ub_tah_encode((struct ub_tah *)(pkt + 1), &t);
		assert_int_equal(tp_ep_rx(ep, 0, pkt, n, &m), TP_RX_OK);
		assert_true(tp_ep_poll(ep, &ev));
		assert_int_equal(ev.wr_id, 101);
		assert_int_equal(tp_ep_tx(ep, 0, out, sizeof(out), &info), 1 + 8);	/* two TAACKs before */
		assert_int_equal(tp_ep_tx(ep, 0, out, sizeof(out), &info), 1 + 8);
		assert_int_equal(tp_ep_tx(ep, 0, out, sizeof(out), &info), 1 + 8);
		assert_true(info.ctp);
		ub_tah_decode((const struct ub_tah *)(out + 1), &t);
		assert_int_equal(t.opcode, UB_TA_TAACK);
		assert_int_equal(t.ini_tassn, 9);
		assert_int_equal(t.ini_rcid, 7);
		assert_int_equal(tp_ep_tx(ep, 0, out, sizeof(out), &info), 0);
	}

	/* Unknown jetty, unknown entity: nobody's. */
	n = ctp_send_pkt(pkt, 8, 2, 10);
	assert_int_equal(tp_ep_rx(ep, 0, pkt, n, &m), TP_RX_DROP);
	memcpy(m.src, "\x0a\x00\x00\x03", 4);
	n = ctp_send_pkt(pkt, 7, 2, 10);
	assert_int_equal(tp_ep_rx(ep, 0, pkt, n, &m), TP_RX_DROP);
	tp_ep_stats(ep, &st);
	assert_int_equal(st.rx_unknown_tpn, 2);

	/* Reserved CTPH opcode, NLP other than TAH, too short: malformed. */
	memcpy(m.src, "\x0a\x00\x00\x01", 4);
	pkt[0] = ub_ctph_make(1, UB_NLP_TAH);
	assert_int_equal(tp_ep_rx(ep, 0, pkt, n, &m), TP_RX_DROP);
	pkt[0] = ub_ctph_make(UB_CTP_OP_TA, 1);
	assert_int_equal(tp_ep_rx(ep, 0, pkt, n, &m), TP_RX_DROP);
	pkt[0] = ub_ctph_make(UB_CTP_OP_TA, UB_NLP_TAH);
	assert_int_equal(tp_ep_rx(ep, 0, pkt, 8, &m), TP_RX_DROP);
	tp_ep_stats(ep, &st);
	assert_int_equal(st.rx_malformed, 3);

	/* An RTPH naming a CTP channel's TPN is not CTP. */
	{
		struct ub_tph_fields f = { .opcode = UB_TP_RTP_DATA, .last = true,
					   .src_tpn = 7, .dst_tpn = tp_chan_tpn(x) };
		struct ub_tah_fields t = { .opcode = UB_TA_SEND };

		ub_tph_encode((struct ub_tph *)pkt, &f);
		ub_tah_encode((struct ub_tah *)(pkt + 16), &t);
		assert_int_equal(tp_ep_rx(ep, 0, pkt, 24, NULL), TP_RX_DROP);
		tp_chan_stats(x, &st);
		assert_int_equal(st.rx_bad_opcode, 1);
	}
	assert_false(tp_ep_poll(ep, &ev));
	tp_ep_destroy(ep);
}

/* The frame on a native port: uboe_wrap builds Eth(0x88B5) | LPH (LBF) | NTH |
 * IP | UDP to UB_CTP_UDP_PORT | CTPH | TAH | payload | ICRC; the CTP parser
 * reads it back; the plain parser (and so the UB2E switch, which mirrors it)
 * calls it not UDP 4792; UBoE refuses to carry it. */
static void ctp_frame(void **state)
{
	static uint8_t frame[2048];
	struct uboe_flow f = {
		.ip_ver = 4, .sport = 0xc123, .ecn = ECN_ECT0, .ub_ethertype = UB_ETH_P_NATIVE,
		.rt = UB_RT_PACKET_ALL, .cci = 0x4000, .pid = 5, .lbf = 0x23, .ctp = true,
	};
	size_t hdr, tp_len, n, len;
	struct ub_view v;
	const uint8_t *tp;

	(void)state;
	memcpy(f.src_ip, "\x0a\x01\x00\x01", 4);
	memcpy(f.dst_ip, "\x0a\x01\x00\x02", 4);
	hdr = uboe_wrap_flow_hdr_len(&f);
	tp_len = ctp_send_pkt(frame + hdr, 0x12345, 0x77, 100);
	n = uboe_wrap(frame, tp_len, &f);
	assert_int_equal(n, hdr + tp_len + UBOE_ICRC_LEN);

	assert_int_equal(ub_parse_frame(frame, n, 0, &v), UB_PARSE_NOT_UDP_4792);
	assert_int_equal(ub_parse_frame_ctp(frame, n, 0, &v), UB_PARSE_OK);
	assert_true(v.ctp);
	assert_null(v.tph);
	assert_true(v.icrc_ok);
	assert_int_equal(v.dport, UB_CTP_UDP_PORT);
	assert_int_equal(v.lbf, 0x23);
	assert_int_equal(v.rt, UB_RT_PACKET_ALL);
	assert_int_equal(v.ta.opcode, UB_TA_SEND);
	assert_int_equal(v.ta.ini_rcid, 0x12345);
	assert_int_equal(v.ta.ini_tassn, 0x77);
	assert_int_equal(v.payload_len, 100);
	tp = ub_view_tp(&v, &len);
	assert_ptr_equal(tp, frame + hdr);
	assert_int_equal(len, tp_len);

	/* Damage: reserved opcode, bad ICRC, TAH cut short, Partition 0. */
	frame[hdr] = ub_ctph_make(2, UB_NLP_TAH);
	assert_int_equal(ub_parse_frame_ctp(frame, n, 0, &v), UB_PARSE_TP_OPCODE);
	frame[hdr] = ub_ctph_make(UB_CTP_OP_TA, UB_NLP_TAH);
	frame[n - 10] ^= 1;
	assert_int_equal(ub_parse_frame_ctp(frame, n, 0, &v), UB_PARSE_OK);
	assert_false(v.icrc_ok);
	tp_len = ctp_send_pkt(frame + hdr, 1, 1, 0) - 2;	/* 7 of the TAH's 8 bytes */
	n = uboe_wrap(frame, tp_len, &f);
	assert_int_equal(ub_parse_frame_ctp(frame, n, 0, &v), UB_PARSE_HDR_OVERRUN);
	f.pid = 0;
	tp_len = ctp_send_pkt(frame + hdr, 1, 1, 4);
	n = uboe_wrap(frame, tp_len, &f);
	assert_int_equal(ub_parse_frame_ctp(frame, n, 0, &v), UB_PARSE_PARTITION_ZERO);

	/* Not in UBoE. */
	f.ub_ethertype = 0;
	assert_int_equal(uboe_wrap(frame, tp_len, &f), 0);
	/* An RTP frame parses as before, LBF 0 unless set. */
	f.ub_ethertype = UB_ETH_P_NATIVE;
	f.ctp = false;
	f.pid = 1;
	f.lbf = 0;
	{
		struct ub_tph_fields t = { .opcode = UB_TP_ACK, .nlp = 1 };

		hdr = uboe_wrap_flow_hdr_len(&f);
		ub_tph_encode((struct ub_tph *)(frame + hdr), &t);
		n = uboe_wrap(frame, 16, &f);
		assert_int_equal(ub_parse_frame_ctp(frame, n, 0, &v), UB_PARSE_OK);
		assert_false(v.ctp);
		assert_non_null(v.tph);
		assert_int_equal(frame[14 + UB_LPH_LBF_BYTE], 0);
	}
}

/*
 * ub_parse_frame_ctp() on damaged and cut CTP frames (exact-size copies, so
 * ASan sees any overread): whatever it says OK to stays inside the frame and
 * the IP length, the CTPH sits right after UDP, the TP packet is CTPH ..
 * payload, the ICRC verdict is the library's own on those bytes; an
 * undamaged frame is OK with a good ICRC. UBPKT_FUZZ_COUNT frames (default
 * 200,000), as for the packet library's other parser fuzz.
 */
static void ctp_frame_fuzz(void **state)
{
	const char *cs = getenv("UBPKT_FUZZ_COUNT");
	long count = cs ? atol(cs) / 5 : 200000;
	uint64_t rng = 0x5eed;
	unsigned long ok = 0, ctp_ok = 0;

	(void)state;
	for (long i = 0; i < count; i++) {
		static uint8_t frame[2048];
		struct uboe_flow f = {
			.ip_ver = tp_sim_rand(&rng) & 1 ? 6 : 4, .ub_ethertype = UB_ETH_P_NATIVE,
			.pid = 1 + (uint32_t)(tp_sim_rand(&rng) % 100), .lbf = (uint8_t)tp_sim_rand(&rng),
			.ctp = true, .sport = 0xc000,
		};
		struct ub_tah_fields t = { .opcode = (uint8_t)(tp_sim_rand(&rng) % 0x14),
					   .ini_rcid = (uint32_t)tp_sim_rand(&rng) & 0xfffff };
		size_t hdr = uboe_wrap_flow_hdr_len(&f), n = hdr + 1, len, tl;
		int damage = (int)(tp_sim_rand(&rng) % 4);
		bool cnp = tp_sim_rand(&rng) % 4 == 0;	/* CTPH | CNPETPH */
		struct ub_view v;
		const uint8_t *tp;
		uint8_t *copy;
		enum ub_parse_err e;

		frame[hdr] = cnp ? ub_ctph_make(UB_CTP_OP_CNP, UB_NLP_NONE) :
				   ub_ctph_make(UB_CTP_OP_TA, UB_NLP_TAH);
		if (cnp) {
			struct ub_cnpetph_fields c = { .ecn = UB_CNP_ECN_MINOR, .vl = t.opcode & 15 };

			ub_cnpetph_encode((struct ub_cnpetph *)(frame + n), &c);
			n += sizeof(struct ub_cnpetph);
		} else {
			ub_tah_encode((struct ub_tah *)(frame + n), &t);
			n += sizeof(struct ub_tah);
		}
		if (!cnp && ub_ta_has_maetah(t.opcode)) {
			struct ub_maetah_fields m = { .length = 64 };

			ub_maetah_encode((struct ub_maetah *)(frame + n), &m);
			n += sizeof(struct ub_maetah);
		}
		if (!cnp && ub_ta_has_immetah(t.opcode)) {
			struct ub_immetah_fields m = { .imm = 1 };

			ub_immetah_encode((struct ub_immetah *)(frame + n), &m);
			n += sizeof(struct ub_immetah);
		}
		n += tp_sim_rand(&rng) % 300;
		len = uboe_wrap(frame, n - hdr, &f);
		for (int k = 0; k < damage; k++)
			frame[tp_sim_rand(&rng) % len] ^= (uint8_t)(1 + tp_sim_rand(&rng) % 255);
		if (tp_sim_rand(&rng) % 8 == 0)
			len = tp_sim_rand(&rng) % (len + 1);
		copy = malloc(len ? len : 1);
		memcpy(copy, frame, len);
		e = ub_parse_frame_ctp(copy, len, 0, &v);
		if (!damage && len == n + 4)
			assert_true(e == UB_PARSE_OK && v.ctp && v.icrc_ok);
		if (e == UB_PARSE_OK) {
			ok++;
			assert_true(v.ip >= copy && v.ip + v.ip_len <= copy + len);
			assert_true(v.payload + v.payload_len + UBOE_ICRC_LEN == v.ip + v.ip_len);
			assert_int_equal(v.icrc_ok, ub_icrc_ok(v.ip, v.ip_len));
			if (v.ctp) {
				ctp_ok++;
				assert_null(v.tph);
				assert_ptr_equal(v.ctph, v.udp + 8);
				/* Pad is ignored on receipt; opcode and NLP are not:
				 * a transaction packet with its TAH, or a CNP. */
				tp = ub_view_tp(&v, &tl);
				assert_ptr_equal(tp, v.ctph);
				if (ub_ctph_opcode(v.ctph[0]) == UB_CTP_OP_CNP) {
					assert_int_equal(ub_ctph_nlp(v.ctph[0]), UB_NLP_NONE);
					assert_ptr_equal(v.cnpetph, v.ctph + 1);
					assert_null(v.tah);
					assert_true(tl >= 1 + sizeof(struct ub_cnpetph));
				} else {
					assert_int_equal(ub_ctph_opcode(v.ctph[0]), UB_CTP_OP_TA);
					assert_int_equal(ub_ctph_nlp(v.ctph[0]), UB_NLP_TAH);
					assert_ptr_equal(v.tah, v.ctph + 1);
					assert_true(tl >= 1 + sizeof(struct ub_tah));
				}
			}
		}
		free(copy);
	}
	print_message("# %ld CTP frames, %lu parsed ok (%lu as CTP)\n", count, ok, ctp_ok);
	assert_true(ctp_ok > (unsigned long)count / 4);
}

/* A CTP channel whose mode the config gets wrong is refused; ROL becomes ROI. */
static void ctp_config(void **state)
{
	struct tp_ep_config ec = { .seed = 1 };
	struct tp_chan_config c = { .mode = TP_MODE_CTP, .local_tpn = TP_CTP_RCID_MAX + 1 };
	struct tp_ep *ep = tp_ep_create(&ec);
	enum tp_mode m;

	(void)state;
	assert_null(tp_chan_create(ep, &c));	/* the TPN must fit IniRCID */
	c.local_tpn = TP_CTP_RCID_MAX;
	assert_non_null(tp_chan_create(ep, &c));
	assert_int_equal(tp_mode_parse("ctp", &m), 0);
	assert_int_equal(m, TP_MODE_CTP);
	assert_string_equal(tp_mode_name(TP_MODE_CTP), "ctp");
	assert_string_equal(tp_status_name(TP_ST_TIMEOUT), "timeout");
	tp_ep_destroy(ep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ctp_lossless_sends),
		cmocka_unit_test(ctp_loss_times_out),
		cmocka_unit_test(ctp_write_read),
		cmocka_unit_test(ctp_rnr_retried),
		cmocka_unit_test(ctp_context_lookup),
		cmocka_unit_test(ctp_frame),
		cmocka_unit_test(ctp_frame_fuzz),
		cmocka_unit_test(ctp_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
