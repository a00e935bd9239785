// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target of the transport core's receive path: TP packets made with the
 * packet library's encoders (data of every transaction kind, TPACK, TPNAK,
 * TPSACK, CETPH and CNP variants), randomly damaged and cut, fed into an
 * endpoint that also has Sends of its own in flight. Everything the core
 * sends back is wrapped in a UBoE frame by hand and decoded by the packet
 * library's parser, not by the core, and checked against a model kept here:
 *   - every frame parses, its TPNs are the channel's;
 *   - a cumulative ack (TPACK, TPSACK base, TPNAK - 1) never covers a PSN
 *     that was never offered as RTP data; nor does a SACK bit;
 *   - a data packet carries exactly the posted bytes for its PSN;
 *   - a receive completion never exceeds its buffer.
 * And the same for CTP (fuzz_ctp_rx): CTPH | TAH | [MAETAH] | payload with
 * IniRCIDs and source entities right and wrong, damaged and cut; what the
 * core sends is framed with uboe_wrap() on a native port and decoded by the
 * packet library's CTP parser; every Send completes (answered or timed out):
 * nothing hangs.
 * TP_FUZZ_ITERS sets the number of packets (make test: a short run; make
 * fuzz: a long one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tp.h"
#include "ubpkt.h"
#include "uboe_wrap.h"

#define PEER	77
#define MTU	128
#define NMSG	4
#define MSG	(4 * MTU)
#define RANGE	128
#define RBUF	300

static uint64_t rng = 1;

static uint64_t rnd(uint64_t n)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return n ? z % n : z;
}

struct model {
	struct tp_ep *ep;
	struct tp_chan *ch;
	uint32_t rbase;			/* peer's initial PSN (our receive side) */
	uint32_t sbase;			/* our initial PSN */
	uint8_t offered[1 << 12];	/* PSN offsets (from rbase) offered as RTP data */
	uint32_t next_off;		/* first offset not offered */
	uint8_t src[NMSG][MSG];
	uint8_t rbuf[4][RBUF];
	uint64_t frames, responses, data_out, events;
};

/* NMSG Sends of len random bytes (src: NMSG x len), 4 receive buffers of RBUF. */
static void post_work(struct tp_chan *ch, uint8_t *src, size_t len, uint8_t *rbuf)
{
	for (int i = 0; i < NMSG; i++) {
		for (size_t j = 0; j < len; j++)
			src[i * len + j] = (uint8_t)rnd(256);
		assert_int_equal(tp_post_send(ch, src + i * len, len, (uint64_t)i), 0);
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(tp_post_recv(ch, rbuf + i * RBUF, RBUF, (uint64_t)i), 0);
}

static void model_init(struct model *m, enum tp_mode mode)
{
	struct tp_ep_config ec = { .seed = rnd(0) };
	struct tp_chan_config c = { .mode = mode, .mtu = MTU, .ooo_range = RANGE, .window = 32,
				    .ack_coalesce = 1 + (uint32_t)rnd(4),
				    .ta_mode = (enum tp_ta_mode)rnd(3), .manual_taack = rnd(4) == 0,
				    .rack = rnd(2) == 0 };

	memset(m, 0, sizeof(*m));
	m->ep = tp_ep_create(&ec);
	assert_non_null(m->ep);
	m->ch = tp_chan_create(m->ep, &c);
	assert_non_null(m->ch);
	/* Near the wrap half of the time. */
	m->rbase = rnd(2) ? TP_PSN_MASK - (uint32_t)rnd(64) : (uint32_t)rnd(TP_PSN_MASK);
	m->sbase = tp_chan_init_psn(m->ch);
	assert_int_equal(tp_chan_connect(m->ch, PEER, m->rbase), 0);
	/* UTP: a message is one packet (at most an MTU). */
	post_work(m->ch, m->src[0], mode == TP_MODE_UTP ? MTU : MSG, m->rbuf[0]);
}

/* A plausible TP packet for the channel, made with the library's encoders. */
static size_t make_pkt(struct model *m, uint8_t *b)
{
	static const uint8_t tp_ops[] = { UB_TP_RTP_DATA, UB_TP_RTP_DATA, UB_TP_RTP_DATA,
					  UB_TP_ACK, UB_TP_ACK_CE, UB_TP_SACK, UB_TP_SACK_CE,
					  UB_TP_CNP, UB_TP_UTP_DATA };
	static const uint8_t ta_ops[] = { UB_TA_SEND, UB_TA_WRITE, UB_TA_READ, UB_TA_TAACK,
					  UB_TA_READ_RESP, UB_TA_SEND_IMM, 0x7f };
	struct ub_tph_fields f = { 0 };
	size_t n = sizeof(struct ub_tph);
	bool resp;

	f.opcode = tp_ops[rnd(sizeof(tp_ops))];
	resp = f.opcode >= UB_TP_ACK;
	f.src_tpn = PEER;
	f.dst_tpn = tp_chan_tpn(m->ch);
	f.ackreq = rnd(4) == 0;
	f.last = rnd(3) == 0;
	f.nlp = resp && rnd(2) ? TP_NLP_NONE : UB_NLP_TAH;
	if (resp) {
		/* Acks around what we sent. */
		f.psn = (m->sbase + (uint32_t)rnd(40) - 4) & TP_PSN_MASK;
		f.rspst = rnd(4) ? UB_RSPST_ACK : (uint8_t)rnd(8);
	} else {
		/* Mostly at or near the edge of what was offered, to get far. */
		if (rnd(3))
			f.psn = (m->rbase + m->next_off + (uint32_t)rnd(4) - 1) & TP_PSN_MASK;
		else
			f.psn = (m->rbase + m->next_off + (uint32_t)rnd(RANGE + 40) - 20) & TP_PSN_MASK;
		f.tpmsn = (uint32_t)rnd(4);
	}
	ub_tph_encode((struct ub_tph *)b, &f);
	if (ub_tp_has_cetph(f.opcode)) {
		struct ub_cetph_fields ce = { .ack_seq = (uint32_t)rnd(0) };

		ub_cetph_encode((struct ub_cetph *)(b + n), &ce);
		n += sizeof(struct ub_cetph);
	}
	if (ub_tp_has_saetph(f.opcode)) {
		struct ub_saetph_fields sa = { .size_code = (uint8_t)rnd(5),
					       .max_rcv_psn = (m->sbase + (uint32_t)rnd(40)) & TP_PSN_MASK };

		for (size_t i = 0; i < ub_sack_bitmap_len(sa.size_code); i++)
			sa.bitmap[i] = (uint8_t)rnd(256);
		n += ub_saetph_encode(b + n, &sa);
	}
	if (ub_tp_has_cnpetph(f.opcode)) {
		struct ub_cnpetph_fields cnp = { .ecn = 3 };

		ub_cnpetph_encode((struct ub_cnpetph *)(b + n), &cnp);
		n += sizeof(struct ub_cnpetph);
	}
	if (f.nlp == UB_NLP_TAH) {
		struct ub_tah_fields t = { .opcode = resp ? UB_TA_TAACK : ta_ops[rnd(sizeof(ta_ops))],
					   .ini_tassn = (uint16_t)rnd(8), .rspst = (uint8_t)rnd(5),
					   .order = (uint8_t)rnd(4), .retry = rnd(4) == 0,
					   /* UTP finds its channel by the sender's jetty */
					   .ini_rcid = rnd(8) ? PEER : (uint32_t)rnd(1 << 20) };

		ub_tah_encode((struct ub_tah *)(b + n), &t);
		n += sizeof(struct ub_tah);
		if (ub_ta_has_maetah(t.opcode)) {
			struct ub_maetah_fields mae = { .va = rnd(0), .token_id = (uint32_t)rnd(3),
							.length = (uint32_t)rnd(600) };

			ub_maetah_encode((struct ub_maetah *)(b + n), &mae);
			n += sizeof(struct ub_maetah);
		}
		if (!resp) {
			size_t pl = rnd(MTU + 1);

			for (size_t i = 0; i < pl; i++)
				b[n + i] = (uint8_t)rnd(256);
			n += pl;
		}
	}
	return n;
}

/* Remember what was offered as RTP data to this channel, as the wire says. */
static void note_offer(struct model *m, const uint8_t *b, size_t n)
{
	struct ub_tph_fields f;
	uint32_t off;

	if (n < sizeof(struct ub_tph))
		return;
	ub_tph_decode((const struct ub_tph *)b, &f);
	if (f.opcode != UB_TP_RTP_DATA || f.dst_tpn != tp_chan_tpn(m->ch) || f.src_tpn != PEER)
		return;
	off = (f.psn - m->rbase) & TP_PSN_MASK;
	if (off < sizeof(m->offered))
		m->offered[off] = 1;
	while (m->next_off < sizeof(m->offered) && m->offered[m->next_off])
		m->next_off++;
}

static bool offered_upto(const struct model *m, uint32_t psn)
{
	uint32_t off = (psn - m->rbase) & TP_PSN_MASK;

	if (off == TP_PSN_MASK)
		return true;	/* rbase - 1: nothing acknowledged yet */
	if (off >= sizeof(m->offered))
		return false;
	for (uint32_t i = 0; i <= off; i++)
		if (!m->offered[i])
			return false;
	return true;
}

/* Wrap in Ethernet/IPv4/UDP by hand, ICRC appended, parse with the library. */
static void check_out(struct model *m, const uint8_t *tp, size_t n)
{
	static uint8_t fr[4096];
	uint8_t *ip = fr + 14, *udp = ip + 20;
	size_t ip_len = 20 + 8 + n + 4;
	struct ub_view v;
	enum ub_parse_err e;

	assert_true(n + 14 + 20 + 8 + 4 <= sizeof(fr));
	memset(fr, 0, 42);
	fr[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = (uint8_t)(ip_len >> 8);
	ip[3] = (uint8_t)ip_len;
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = 17;
	ip[15] = 1;
	ip[19] = 2;
	udp[0] = 0xc0;
	udp[2] = 4792 >> 8;
	udp[3] = 4792 & 0xff;
	udp[4] = (uint8_t)((ip_len - 20) >> 8);
	udp[5] = (uint8_t)(ip_len - 20);
	memcpy(udp + 8, tp, n);
	ub_icrc_put(ip, ip_len);
	e = ub_parse_frame(fr, 14 + ip_len, 0, &v);
	if (e != UB_PARSE_OK)
		fail_msg("core sent a packet the library rejects: %s", ub_parse_errname(e));
	assert_true(v.icrc_ok);
	if (v.tp.opcode != UB_TP_UTP_DATA) {	/* a UTPH has no TPN */
		assert_int_equal(v.tp.src_tpn, tp_chan_tpn(m->ch));
		assert_int_equal(v.tp.dst_tpn, PEER);
	}
	m->frames++;
	if (v.tp.opcode == UB_TP_ACK || v.tp.opcode == UB_TP_SACK) {
		uint32_t c = v.nak ? (v.tp.psn + TP_PSN_MASK) & TP_PSN_MASK : v.tp.psn;

		m->responses++;
		assert_int_equal(v.payload_len, 0);
		if (!offered_upto(m, c))
			fail_msg("ack of PSN %u never offered (base %u)", c, m->rbase);
		if (v.saetph)
			/* Bit 0 is the cumulative PSN itself, checked above. */
			for (uint32_t k = 1; k < ub_saetph_bitmap_bits(v.sa.size_code); k++)
				if (ub_sack_test(v.sa.bitmap, k)) {
					uint32_t off = (c + k - m->rbase) & TP_PSN_MASK;

					assert_true(off < sizeof(m->offered) && m->offered[off]);
				}
	} else if (v.tp.opcode == UB_TP_RTP_DATA) {
		uint32_t off = (v.tp.psn - m->sbase) & TP_PSN_MASK;

		assert_non_null(v.tah);
		m->data_out++;
		if (v.ta.opcode == UB_TA_SEND) {
			/* Ours: 4 packets per message, one message after another;
			 * the fuzzer's RNR answers make it resend some later, at
			 * new PSNs: so find the segment by content. */
			bool found = false;

			/* Beyond the first transmission's PSNs only as a retry. */
			if (off >= NMSG * 4 && !v.ta.retry)
				fail_msg("Send packet at PSN +%u without Retry", off);
			assert_int_equal(v.payload_len, MTU);
			for (int i = 0; i < NMSG && !found; i++)
				for (int g = 0; g < 4 && !found; g++)
					if (!memcmp(v.payload, m->src[i] + g * MTU, MTU)) {
						found = true;
						assert_int_equal(v.tp.last, g == 3);
					}
			if (!found)
				fail_msg("a Send packet with bytes that were never posted");
		} else {
			/* Answers to the fuzzer: a TAACK, or Read data from no region. */
			assert_true(v.ta.opcode == UB_TA_TAACK || v.ta.opcode == UB_TA_READ_RESP);
		}
	} else if (v.tp.opcode == UB_TP_UTP_DATA) {
		/* UTP: a whole message in one packet behind the notes' UTPH
		 * (reserved bytes 0), found by the jetty in IniRCID. */
		bool found = false;

		assert_true(v.tp.last);
		assert_true(v.tp.src_tpn == 0 && v.tp.dst_tpn == 0 && v.tp.psn == 0 &&
			    v.tp.tpmsn == 0 && !v.tp.ackreq && v.tp.rspst == 0);
		assert_int_equal(v.ta.opcode, UB_TA_SEND);
		assert_int_equal(v.ta.ini_rcid, tp_chan_tpn(m->ch));
		assert_int_equal(v.payload_len, MTU);
		for (int i = 0; i < NMSG && !found; i++)
			found = !memcmp(v.payload, m->src[0] + i * MTU, MTU);
		assert_true(found);
		m->data_out++;
	} else {
		fail_msg("core sent TP opcode %u", v.tp.opcode);
	}
}

static void drain(struct model *m, uint64_t now)
{
	static uint8_t out[4096];
	struct tp_event ev;
	size_t n;

	while ((n = tp_ep_tx(m->ep, now, out, sizeof(out), NULL)))
		check_out(m, out, n);
	while (tp_ep_poll(m->ep, &ev)) {
		m->events++;
		if (ev.type == TP_EV_RECV)
			assert_true(ev.len <= sizeof(m->rbuf[0]));
	}
}

static uint64_t fuzz_iters(void)
{
	const char *env = getenv("TP_FUZZ_ITERS");

	return env ? strtoull(env, NULL, 0) : 60000;
}

static void add_stats(struct tp_stats *sum, const struct tp_ep *ep)
{
	struct tp_stats st;

	tp_ep_stats(ep, &st);
	for (size_t k = 0; k < tp_stats_count(); k++)
		((uint64_t *)sum)[k] += tp_stats_get(&st, k);
}

/* Damage a few bytes of b[0..n), and now and then cut it: its new length. */
static size_t damage(uint8_t *b, size_t n)
{
	for (int k = (int)rnd(4) - 1; k > 0; k--)
		b[rnd(n)] = (uint8_t)rnd(256);
	return rnd(8) ? n : rnd(n + 1);
}

/* Feed an exact-size copy (ASan sees overreads). */
static void feed(struct tp_ep *ep, uint64_t now, const uint8_t *b, size_t len,
		 const struct tp_rx_meta *meta)
{
	uint8_t *copy = malloc(len ? len : 1);

	memcpy(copy, b, len);
	tp_ep_rx(ep, now, copy, len, meta);
	free(copy);
}

static void fuzz_rx(void **state)
{
	uint64_t iters = fuzz_iters(), now = 0;
	static const enum tp_mode modes[] = { TP_MODE_RTP_SR, TP_MODE_RTP_GBN,
					      TP_MODE_RTP_GBN_FAST, TP_MODE_UTP };
	struct model m = { 0 };
	uint64_t frames = 0, resp = 0, data = 0;
	struct tp_stats sum = { 0 };

	(void)state;
	for (uint64_t i = 0; i < iters; i++) {
		uint8_t b[2048];
		size_t len;

		if (i % 400 == 0) {
			if (m.ep) {
				add_stats(&sum, m.ep);
				frames += m.frames;
				resp += m.responses;
				data += m.data_out;
				tp_ep_destroy(m.ep);
			}
			model_init(&m, modes[rnd(4)]);
			drain(&m, now);
		}
		len = damage(b, make_pkt(&m, b));
		note_offer(&m, b, len);
		{
			struct tp_rx_meta meta = { .ecn = (uint8_t)rnd(4) };
			struct tp_hello h;

			if (!tp_hello_parse(b, len, &h))	/* never, short of a forgery */
				assert_true(h.tpn <= TP_PSN_MASK && h.mode <= TP_MODE_UTP);
			feed(m.ep, now, b, len, &meta);
		}
		now += rnd(20000);
		tp_ep_tick(m.ep, now);
		drain(&m, now);
	}
	tp_ep_destroy(m.ep);
	print_message("# fuzz: %llu packets in, %llu out (%llu responses, %llu data); "
		      "inorder %llu ooo %llu dup %llu invalid %llu malformed %llu rtx %llu\n",
		      (unsigned long long)iters, (unsigned long long)frames,
		      (unsigned long long)resp, (unsigned long long)data,
		      (unsigned long long)sum.rx_inorder, (unsigned long long)sum.rx_ooo,
		      (unsigned long long)sum.rx_dup, (unsigned long long)sum.rx_invalid,
		      (unsigned long long)sum.rx_malformed,
		      (unsigned long long)(sum.rtx_rto + sum.rtx_nak + sum.rtx_sack + sum.rtx_mark));
	/* The run must have reached the interesting paths, not only rejections. */
	if (iters >= 20000) {
		assert_true(sum.rx_inorder > 100 && sum.rx_ooo > 100 && sum.rx_dup > 100);
		assert_true(sum.rx_malformed > 100 && resp > 100 && data > 100);
	}
}

/* ---- CTP ------------------------------------------------------------------ */

#define CTP_JETTY	7		/* the peer's channel (IniRCID of its requests) */
static const uint8_t ctp_peer[16] = { 10, 0, 0, 7 }, ctp_other[16] = { 10, 0, 0, 8 };

struct ctp_model {
	struct tp_ep *ep;
	struct tp_chan *ch;
	uint8_t src[NMSG][MTU];
	uint8_t rbuf[4][RBUF];
	uint8_t region[4096];
	uint32_t token;
	uint64_t sends_done, frames, taacks;
};

static void ctp_init(struct ctp_model *m)
{
	struct tp_ep_config ec = { .seed = rnd(0) };
	struct tp_chan_config c = { .mode = TP_MODE_CTP, .mtu = MTU, .ta_timeout_ns = 100000,
				    .ta_mode = (enum tp_ta_mode)rnd(3), .rnr_delay_ns = 20000 };

	memset(m, 0, sizeof(*m));
	memcpy(c.peer_entity, ctp_peer, 16);
	m->ep = tp_ep_create(&ec);
	assert_non_null(m->ep);
	m->ch = tp_chan_create(m->ep, &c);
	assert_non_null(m->ch);
	assert_int_equal(tp_chan_connect(m->ch, CTP_JETTY, 0), 0);
	assert_int_equal(tp_mr_reg(m->ep, m->region, sizeof(m->region), &m->token), 0);
	post_work(m->ch, m->src[0], MTU, m->rbuf[0]);
}

static size_t ctp_make_pkt(struct ctp_model *m, uint8_t *b)
{
	static const uint8_t ta_ops[] = { UB_TA_SEND, UB_TA_WRITE, UB_TA_READ, UB_TA_TAACK,
					  UB_TA_READ_RESP, UB_TA_SEND_IMM, 0x7f };
	struct ub_tah_fields t = { .opcode = ta_ops[rnd(sizeof(ta_ops))],
				   .ini_tassn = (uint16_t)rnd(8), .rspst = (uint8_t)rnd(5),
				   .order = (uint8_t)rnd(4), .retry = rnd(4) == 0 };
	bool answer = t.opcode == UB_TA_TAACK || t.opcode == UB_TA_READ_RESP;
	size_t n = 1, pl;

	b[0] = rnd(8) ? ub_ctph_make(UB_CTP_OP_TA, UB_NLP_TAH) : (uint8_t)rnd(256);
	/* Answers name our jetty, requests the peer's; now and then neither. */
	t.ini_rcid = rnd(8) ? (answer ? tp_chan_tpn(m->ch) : CTP_JETTY) : (uint32_t)rnd(1 << 20);
	if (!answer && rnd(2))
		t.ini_tassn = (uint16_t)rnd(0);
	ub_tah_encode((struct ub_tah *)(b + n), &t);
	n += sizeof(struct ub_tah);
	if (ub_ta_has_maetah(t.opcode)) {
		struct ub_maetah_fields mae = {
			.va = rnd(2) ? (uint64_t)(uintptr_t)m->region + rnd(4096) : rnd(0),
			.token_id = rnd(4) ? m->token : (uint32_t)rnd(3), .length = (uint32_t)rnd(MTU + 40) };

		ub_maetah_encode((struct ub_maetah *)(b + n), &mae);
		n += sizeof(struct ub_maetah);
	}
	pl = t.opcode == UB_TA_TAACK || t.opcode == UB_TA_READ ? rnd(3) : rnd(MTU + 20);
	for (size_t i = 0; i < pl; i++)
		b[n + i] = (uint8_t)rnd(256);
	return n + pl;
}

/* Frame what the core sent on a native port and decode it with the library. */
static void ctp_check_out(struct ctp_model *m, uint8_t *fr, size_t hdr, size_t n)
{
	struct uboe_flow f = { .ip_ver = 4, .ub_ethertype = UB_ETH_P_NATIVE, .pid = 1, .ctp = true,
			       .lbf = (uint8_t)rnd(256) };
	struct ub_view v;
	const uint8_t *tp;
	size_t len, fl;
	bool answer;

	memcpy(f.src_ip, ctp_other, 4);
	memcpy(f.dst_ip, ctp_peer, 4);
	fl = uboe_wrap(fr, n, &f);
	assert_int_equal(fl, hdr + n + 4);
	assert_int_equal(ub_parse_frame_ctp(fr, fl, 0, &v), UB_PARSE_OK);
	assert_true(v.ctp && v.icrc_ok);
	assert_int_equal(v.lbf, f.lbf);
	tp = ub_view_tp(&v, &len);
	assert_ptr_equal(tp, fr + hdr);
	assert_int_equal(len, n);
	assert_true(n <= 1 + 8 + 16 + MTU);
	m->frames++;
	answer = v.ta.opcode == UB_TA_TAACK || v.ta.opcode == UB_TA_READ_RESP;
	m->taacks += v.ta.opcode == UB_TA_TAACK;
	/* Answers go back to the peer's jetty; our requests name ours. */
	assert_int_equal(v.ta.ini_rcid, answer ? CTP_JETTY : tp_chan_tpn(m->ch));
	if (v.ta.opcode == UB_TA_SEND) {
		int i;

		for (i = 0; i < NMSG; i++)
			if (v.payload_len == MTU && !memcmp(v.payload, m->src[i], MTU))
				break;
		assert_true(i < NMSG);	/* exactly the posted bytes */
	} else {
		assert_true(answer);	/* we post nothing else */
	}
}

static void ctp_drain(struct ctp_model *m, uint64_t now)
{
	static uint8_t fr[4096];
	struct uboe_flow nat = { .ip_ver = 4, .ub_ethertype = UB_ETH_P_NATIVE, .ctp = true };
	size_t hdr = uboe_wrap_flow_hdr_len(&nat), n;
	struct tp_tx_info info;
	struct tp_event ev;

	while ((n = tp_ep_tx(m->ep, now, fr + hdr, sizeof(fr) - hdr - 4, &info))) {
		assert_true(info.ctp && info.data);
		ctp_check_out(m, fr, hdr, n);
	}
	while (tp_ep_poll(m->ep, &ev)) {
		if (ev.type == TP_EV_RECV)
			assert_true(ev.len <= sizeof(m->rbuf[0]));
		if (ev.type == TP_EV_SEND_DONE)
			m->sends_done++;
		assert_true(ev.type != TP_EV_CHAN_ERROR);	/* CTP fails operations, not channels */
	}
}

static void ctp_finish(struct ctp_model *m, uint64_t *now)
{
	/* Whatever came in, every Send completes: answered, or timed out. */
	for (int i = 0; i < 50 && m->sends_done < NMSG; i++) {
		*now += 60000;
		tp_ep_tick(m->ep, *now);
		ctp_drain(m, *now);
	}
	assert_int_equal(m->sends_done, NMSG);
	/* Every answer the target gave went out as a packet (there is no TPACK
	 * to carry one, whatever Order the request said). */
	{
		struct tp_stats st;

		tp_chan_stats(m->ch, &st);
		assert_int_equal(m->taacks, st.tx_taack);
	}
	tp_ep_destroy(m->ep);
}

/* One damaged packet in, the time on, what comes out checked. */
static void ctp_step(struct ctp_model *m, uint64_t *now)
{
	uint8_t b[2048];
	size_t len = damage(b, ctp_make_pkt(m, b));
	struct tp_rx_meta meta = { .ctp = true, .ecn = (uint8_t)rnd(4) };

	memcpy(meta.src, rnd(8) ? ctp_peer : ctp_other, 16);
	feed(m->ep, *now, b, len, &meta);
	*now += rnd(20000);
	tp_ep_tick(m->ep, *now);
	ctp_drain(m, *now);
}

static void fuzz_ctp_rx(void **state)
{
	uint64_t iters = fuzz_iters(), now = 0, frames = 0;
	struct ctp_model m;
	struct tp_stats sum = { 0 };

	(void)state;
	/* Rounds of 400 packets, each on a fresh endpoint. */
	for (uint64_t i = 0; i < iters; i += 400) {
		ctp_init(&m);
		ctp_drain(&m, now);
		for (uint64_t j = i; j < iters && j < i + 400; j++)
			ctp_step(&m, &now);
		add_stats(&sum, m.ep);
		ctp_finish(&m, &now);
		frames += m.frames;
	}
	print_message("# ctp fuzz: %llu packets in, %llu out; received %llu malformed %llu "
		      "unknown %llu timeouts %llu taacks %llu\n",
		      (unsigned long long)iters, (unsigned long long)frames,
		      (unsigned long long)sum.rx_ctp, (unsigned long long)sum.rx_malformed,
		      (unsigned long long)sum.rx_unknown_tpn, (unsigned long long)sum.ta_timeout,
		      (unsigned long long)sum.tx_taack);
	if (iters >= 20000) {
		assert_true(sum.rx_ctp > 100 && sum.rx_malformed > 100 && sum.rx_unknown_tpn > 100);
		assert_true(sum.ta_timeout > 10 && sum.tx_taack > 100 && frames > 100);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fuzz_rx),
		cmocka_unit_test(fuzz_ctp_rx),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
