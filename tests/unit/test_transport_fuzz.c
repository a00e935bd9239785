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
 *   - registered regions the fuzzer has no right to (a token value it never
 *     sends, read-only access) never change, whatever Writes, Writes with
 *     immediate and atomics come in.
 * And the same for CTP (fuzz_ctp_rx): CTPH | TAH | [MAETAH] | payload with
 * IniRCIDs and source entities right and wrong, damaged and cut; what the
 * core sends is framed with uboe_wrap() on a native port and decoded by the
 * packet library's CTP parser; every Send completes (answered or timed out):
 * nothing hangs.
 * fuzz_ctp_memory: memory operations (Write, Write with immediate, Read, CAS,
 * FADD, other atomics) on CTP, where each packet is a whole operation, with
 * TokenIDs, token values (or none), access flags, addresses and lengths
 * right and wrong, damaged and cut. A model decodes each packet fed as the
 * wire layout says (docs/WIRE.md §4) and keeps a shadow of every region:
 * after each packet the regions equal the shadow byte for byte (nothing
 * written on a refusal, an atomic's effect exactly once), each Atomic
 * response carries the original value the model computed and each Read
 * response the shadow's bytes.
 * Its Sends' packets take paths at random (tp_chan_tx_entropy), so that
 * RACK's per-path loss detection meets every ack the fuzzer makes up.
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

#include "transport/tp.h"
#include "transport/tp_int.h"	/* the send window's slots: n_sacked counts them */
#include "lib/frame.h"
#include "lib/uboe_wrap.h"

#define PEER	77
#define MTU	128
#define NMSG	4
#define SEG_MAX	16	/* packets of a Send: 4, or 16 to keep more than the window out */
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
	uint32_t seg;			/* packets per Send of ours */
	uint32_t peer_range;		/* what the peer was told to keep: RANGE, or less */
	uint8_t src[NMSG * SEG_MAX * MTU];
	uint8_t rbuf[4][RBUF];
	uint64_t frames, responses, data_out, events;
	/* Regions the fuzzer may not change: [0] a token value it never sends,
	 * [1] read-only (it sends the right value). */
	uint8_t guarded[2][256], was[2][256];
	struct tp_rkey gkey[2];
	/* Data packets MTU-sized up to a message's last, undamaged: whole
	 * messages of each kind that complete (a Send longer than its receive
	 * among them), not only rejections. */
	bool mtu_cut;
	/* Our data in PSN order as the target reassembles it, from the
	 * library's decoding: what each PSN carried first (message * SEG_MAX +
	 * segment + 1, or TPMSN + 1 for an answer), the next PSN never sent,
	 * and the message whose Last has not gone yet (open: its TPMSN). */
	uint32_t carried[1 << 12];
	uint32_t snext, open_tpmsn;
	int open_msg;			/* our Send's index, -1 an answer's */
	bool open;
	uint32_t open_seg;
	/* Our Sends' TASSNs as sent (0 before): answers that find them,
	 * RNR among them, make it resend */
	uint16_t tassn[NMSG];
	bool have_tassn[NMSG];
	bool begun[NMSG];		/* a Send's first packet went: again only as a Retry */
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
				    .rack = rnd(2) == 0, .entropies = (uint32_t)rnd(3) * 4,
				    /* SR past a hole half of the time, up to the range */
				    .span = rnd(2) ? 0 : 32 + (uint32_t)rnd(RANGE - 32 + 1) };
	/* Sends of 16 packets half of the time: 64 outstanding, twice the
	 * window, so that the span and the SACKed packets' count decide. */
	uint32_t seg = rnd(2) ? 4 : SEG_MAX;

	memset(m, 0, sizeof(*m));
	m->ep = tp_ep_create(&ec);
	assert_non_null(m->ep);
	m->ch = tp_chan_create(m->ep, &c);
	assert_non_null(m->ch);
	/* A peer that keeps less than our ring (an older one: half; or a
	 * quarter) a quarter of the time: check_window then holds the
	 * sender to what was told, not to the ring it has. */
	m->peer_range = RANGE;
	if (rnd(4) == 0) {
		m->peer_range = RANGE >> (1 + rnd(2));
		tp_chan_peer_range(m->ch, m->peer_range);
	}
	/* Near the wrap half of the time. */
	m->rbase = rnd(2) ? TP_PSN_MASK - (uint32_t)rnd(64) : (uint32_t)rnd(TP_PSN_MASK);
	m->sbase = tp_chan_init_psn(m->ch);
	m->mtu_cut = rnd(2);
	m->seg = seg;
	assert_int_equal(tp_chan_connect(m->ch, PEER, m->rbase), 0);
	/* UTP: a message is one packet (at most an MTU). */
	post_work(m->ch, m->src, mode == TP_MODE_UTP ? MTU : m->seg * MTU, m->rbuf[0]);
	for (int i = 0; i < 2; i++) {
		struct tp_mr_cfg rc = { .addr = m->guarded[i], .len = sizeof(m->guarded[i]),
					.access = i ? TP_ACCESS_READ : TP_ACCESS_REMOTE_ALL,
					.token_value = (uint32_t)rnd(0) | 1 };

		for (size_t k = 0; k < sizeof(m->guarded[i]); k++)
			m->guarded[i][k] = (uint8_t)rnd(256);
		memcpy(m->was[i], m->guarded[i], sizeof(m->was[i]));
		assert_int_equal(tp_mr_register(m->ep, &rc, &m->gkey[i].token_id), 0);
		m->gkey[i].token_value = rc.token_value;
	}
}

/* A plausible TP packet for the channel, made with the library's encoders. */
static size_t make_pkt(struct model *m, uint8_t *b)
{
	static const uint8_t tp_ops[] = { UB_TP_RTP_DATA, UB_TP_RTP_DATA, UB_TP_RTP_DATA,
					  UB_TP_ACK, UB_TP_ACK_CE, UB_TP_SACK, UB_TP_SACK_CE,
					  UB_TP_CNP, UB_TP_UTP_DATA };
	static const uint8_t ta_ops[] = { UB_TA_SEND, UB_TA_WRITE, UB_TA_READ, UB_TA_TAACK,
					  UB_TA_READ_RESP, UB_TA_SEND_IMM, UB_TA_WRITE_IMM,
					  UB_TA_ATOMIC_CAS, UB_TA_ATOMIC_FADD, UB_TA_ATOMIC_SWAP,
					  UB_TA_ATOMIC_RESP, 0x7f };
	struct ub_tph_fields f = { 0 };
	size_t n = sizeof(struct ub_tph);
	uint8_t ta = ta_ops[rnd(sizeof(ta_ops))];
	uint16_t tassn = (uint16_t)rnd(8);
	uint32_t ours = (uint32_t)rnd(NMSG);
	bool resp;

	f.opcode = tp_ops[rnd(sizeof(tp_ops))];
	resp = f.opcode >= UB_TP_ACK;
	if (resp && m->have_tassn[ours] && rnd(2))
		tassn = m->tassn[ours];
	f.src_tpn = PEER;
	f.dst_tpn = tp_chan_tpn(m->ch);
	f.ackreq = rnd(4) == 0;
	f.last = rnd(3) == 0;
	f.nlp = resp && rnd(2) ? TP_NLP_NONE : UB_NLP_TAH;
	if (resp) {
		/* Acks around what we sent. */
		f.psn = (m->sbase + (uint32_t)rnd(NMSG * m->seg + 24) - 4) & TP_PSN_MASK;
		f.rspst = rnd(4) ? UB_RSPST_ACK : (uint8_t)rnd(8);
	} else {
		/* Mostly at or near the edge of what was offered, to get far. */
		if (rnd(3))
			f.psn = (m->rbase + m->next_off + (uint32_t)rnd(4) - 1) & TP_PSN_MASK;
		else
			f.psn = (m->rbase + m->next_off + (uint32_t)rnd(RANGE + 40) - 20) & TP_PSN_MASK;
		f.tpmsn = (uint32_t)rnd(4);
		if (m->mtu_cut) {
			/* Messages of two packets, one after another, each of
			 * one kind (TASSN, TA opcode). */
			uint32_t off = (f.psn - m->rbase) & TP_PSN_MASK;
			uint32_t h = (off / 2) * 2654435761u >> 8;

			f.tpmsn = (off / 2) & TP_PSN_MASK;
			f.last = off % 2;
			ta = h % 3 ? UB_TA_SEND : ta_ops[(h / 3) % sizeof(ta_ops)];
			tassn = (uint16_t)((off / 2) & 7);
		}
	}
	ub_tph_encode((struct ub_tph *)b, &f);
	if (ub_tp_has_cetph(f.opcode)) {
		struct ub_cetph_fields ce = { .ack_seq = (uint32_t)rnd(0) };

		ub_cetph_encode((struct ub_cetph *)(b + n), &ce);
		n += sizeof(struct ub_cetph);
	}
	if (ub_tp_has_saetph(f.opcode)) {
		struct ub_saetph_fields sa = { .size_code = (uint8_t)rnd(5),
					       .max_rcv_psn = (m->sbase + (uint32_t)rnd(NMSG * m->seg + 24)) &
							      TP_PSN_MASK };

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
		struct ub_tah_fields t = { .opcode = resp ? UB_TA_TAACK : ta, .ini_tassn = tassn,
					   .rspst = (uint8_t)rnd(5),
					   .order = (uint8_t)rnd(4), .retry = rnd(4) == 0,
					   .tv_en = rnd(4) != 0,
					   /* UTP finds its channel by the sender's jetty */
					   .ini_rcid = rnd(8) ? PEER : (uint32_t)rnd(1 << 20) };
		int g = (int)rnd(3);	/* a guarded region, or none */

		ub_tah_encode((struct ub_tah *)(b + n), &t);
		n += sizeof(struct ub_tah);
		if (ub_ta_has_maetah(t.opcode)) {
			struct ub_maetah_fields mae = { .va = rnd(0), .token_id = (uint32_t)rnd(3),
							.length = (uint32_t)rnd(600) };

			if (g < 2) {
				mae.va = (uintptr_t)m->guarded[g] + rnd(300) - 20;
				mae.token_id = m->gkey[g].token_id;
				if (ub_ta_is_atomic(t.opcode) && rnd(2))
					mae.va &= ~7ull;
				if (rnd(2))
					mae.length = (uint32_t)rnd(2) ? 8 : (uint32_t)rnd(64);
			}
			ub_maetah_encode((struct ub_maetah *)(b + n), &mae);
			n += sizeof(struct ub_maetah);
		}
		if (ub_ta_has_immetah(t.opcode)) {
			struct ub_immetah_fields imm = { .imm = rnd(0), .msg_len = (uint32_t)rnd(600) };

			ub_immetah_encode((struct ub_immetah *)(b + n), &imm);
			n += sizeof(struct ub_immetah);
		}
		if (t.tv_en && !ub_ta_is_answer(t.opcode)) {
			/* Region 0: never its value; region 1: its value (read-only). */
			uint32_t v = g == 1 ? m->gkey[1].token_value :
				     g == 0 ? m->gkey[0].token_value ^ (1u << rnd(32)) : (uint32_t)rnd(0);

			ub_tvetah_encode((struct ub_tvetah *)(b + n), v);
			n += sizeof(struct ub_tvetah);
		}
		if (!resp) {
			size_t pl = m->mtu_cut && !f.last ? MTU : rnd(MTU + 1);

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

/*
 * A data packet of ours at PSN offset off (msg: our Send's index and g its
 * segment, or -1 for an answer): a resend carries what the PSN first did;
 * a new PSN continues the message whose Last has not gone (its TPMSN, a
 * Send's next segment) or, after that Last, begins one at its first
 * segment. A message begun before another's Last is one the target cuts
 * short (liburma's Send bench at 1 % loss: "remote unsupported request",
 * or a message delivered short).
 */
static void check_framing(struct model *m, uint32_t off, const struct ub_view *v, int msg,
			  uint32_t g)
{
	uint32_t what = msg >= 0 ? (uint32_t)msg * SEG_MAX + g + 1 : v->tp.tpmsn + 1;

	if (off >= sizeof(m->carried) / sizeof(m->carried[0]))
		return;	/* past what the model keeps: no Send is there */
	if (off < m->snext) {
		if (m->carried[off] != what)
			fail_msg("PSN +%u sent again with other data (%u, first %u)", off, what,
				 m->carried[off]);
		return;
	}
	if (off > m->snext)
		fail_msg("PSN +%u sent before +%u", off, m->snext);
	if (m->open) {
		if (v->tp.tpmsn != m->open_tpmsn || msg != m->open_msg ||
		    (msg >= 0 && g != m->open_seg + 1))
			fail_msg("PSN +%u: TPMSN %u (Send %d segment %u) while TPMSN %u (Send %d "
				 "segment %u) has not sent its Last", off, v->tp.tpmsn, msg, g,
				 m->open_tpmsn, m->open_msg, m->open_seg);
	} else if (msg >= 0 && g) {
		fail_msg("PSN +%u: Send %d begins at segment %u", off, msg, g);
	} else if (msg >= 0) {
		if (m->begun[msg] && !v->ta.retry)
			fail_msg("PSN +%u: Send %d sent again without Retry", off, msg);
		m->begun[msg] = true;
	}
	m->carried[off] = what;
	m->snext = off + 1;
	m->open = !v->tp.last;
	m->open_tpmsn = v->tp.tpmsn;
	m->open_msg = msg;
	m->open_seg = g;
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
		int msg = -1;
		uint32_t g = 0;

		assert_non_null(v.tah);
		m->data_out++;
		if (v.ta.opcode == UB_TA_SEND) {
			/* Ours: seg packets per message, one message after another;
			 * the fuzzer's RNR answers make it resend some later, at
			 * new PSNs: so find the segment by content. */
			bool found = false;

			assert_int_equal(v.payload_len, MTU);
			for (int i = 0; i < NMSG && !found; i++)
				for (uint32_t k = 0; k < m->seg && !found; k++)
					if (!memcmp(v.payload, m->src + (i * m->seg + k) * MTU, MTU)) {
						found = true;
						msg = i;
						g = k;
						m->tassn[i] = v.ta.ini_tassn;
						m->have_tassn[i] = true;
						assert_int_equal(v.tp.last, k == m->seg - 1);
					}
			if (!found)
				fail_msg("a Send packet with bytes that were never posted");
		} else {
			/* Answers to the fuzzer: a TAACK, Read data (from the read-only
			 * region it may read), never an atomic's: it may run none. */
			assert_true(v.ta.opcode == UB_TA_TAACK || v.ta.opcode == UB_TA_READ_RESP);
		}
		check_framing(m, off, &v, msg, g);
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
			found = !memcmp(v.payload, m->src + i * MTU, MTU);
		assert_true(found);
		m->data_out++;
	} else {
		fail_msg("core sent TP opcode %u", v.tp.opcode);
	}
}

static void drain(struct model *m, uint64_t now)
{
	static uint8_t out[4096];
	struct tp_tx_info info;
	struct tp_event ev;
	size_t n;

	while ((n = tp_ep_tx(m->ep, now, out, sizeof(out), &info))) {
		/* Its path (per-packet LB), now and then one out of range or
		 * a PSN that is not in flight. */
		if (info.data)
			tp_chan_tx_entropy(m->ch, rnd(8) ? info.psn : (uint32_t)rnd(TP_PSN_MASK + 1),
					   (uint32_t)rnd(10));
		check_out(m, out, n);
	}
	while (tp_ep_poll(m->ep, &ev)) {
		m->events++;
		if (ev.type == TP_EV_RECV) {
			assert_true(ev.len <= sizeof(m->rbuf[0]));
			/* Buffers come back, so that Sends go on landing. */
			if (m->mtu_cut && ev.wr_id < 4)
				tp_post_recv(m->ch, m->rbuf[ev.wr_id], RBUF, ev.wr_id);
			/* A Write with immediate completes only a Write that ran. */
			assert_true(ev.opcode != TP_OP_WRITE_IMM || ev.status != TP_ST_OK);
		}
	}
	for (int i = 0; i < 2; i++)
		if (memcmp(m->guarded[i], m->was[i], sizeof(m->was[i])))
			fail_msg("guarded region %d changed", i);
}

/* The send window after each packet: nothing past una + span, no more than
 * the window neither acknowledged nor SACKed, and n_sacked the SACKed slots
 * (what new data may go past a hole by). */
static void check_window(const struct model *m)
{
	const struct tp_chan *ch = m->ch;
	uint32_t out = (uint32_t)tp_psn_diff(ch->nxt, ch->una), n = 0;

	if (ch->cfg.mode == TP_MODE_UTP)
		return;
	for (uint32_t psn = ch->una; psn != ch->nxt; psn = tp_psn_add(psn, 1))
		n += TP_SLOT(ch, psn)->sacked;
	if (n != ch->n_sacked)
		fail_msg("n_sacked %u, %u slots SACKed", ch->n_sacked, n);
	if (out > ch->span || out - n > ch->cfg.window)
		fail_msg("%u out (%u SACKed) past a span of %u or a window of %u", out, n, ch->span,
			 ch->cfg.window);
	/* the window is a floor under what the peer was told */
	if (out > m->peer_range && out > ch->cfg.window)
		fail_msg("%u out past the peer's range of %u", out, m->peer_range);
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
		len = make_pkt(&m, b);
		if (!m.mtu_cut)
			len = damage(b, len);
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
		check_window(&m);
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
	struct tp_rkey token;
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
			.token_id = rnd(4) ? m->token.token_id : (uint32_t)rnd(3), .length = (uint32_t)rnd(MTU + 40) };

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

/* ---- CTP memory operations against a shadow ---------------------------------- */

#define NREG	4
static const struct { uint32_t len, access; bool token_none; } reg_cfg[NREG] = {
	{ 256, TP_ACCESS_REMOTE_ALL, false },
	{ 128, TP_ACCESS_READ | TP_ACCESS_WRITE, false },
	{ 64, TP_ACCESS_ATOMIC, true },
	{ 64, TP_ACCESS_LOCAL_ONLY, false },
};

struct mem_model {
	struct tp_ep *ep;
	struct tp_chan *ch;
	uint64_t mem[NREG][32] __attribute__((aligned(8)));	/* the regions */
	uint64_t shadow[NREG][32];
	struct tp_rkey key[NREG];
	uint8_t rbuf[64][RBUF];
	/* What this packet must bring back. */
	enum { EXP_NONE, EXP_ATOMIC, EXP_READ } expect;
	uint64_t orig;			/* EXP_ATOMIC: the original value */
	uint8_t rd[MTU];		/* EXP_READ: the bytes */
	uint32_t rd_len;
	uint64_t atomics, reads, writes, refused, answers;
};

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void mem_init(struct mem_model *m)
{
	struct tp_ep_config ec = { .seed = rnd(0), .token_seed = rnd(0) | 1 };
	struct tp_chan_config c = { .mode = TP_MODE_CTP, .mtu = MTU, .ta_timeout_ns = 100000,
				    .ta_mode = (enum tp_ta_mode)rnd(3) };

	memset(m, 0, sizeof(*m));
	memcpy(c.peer_entity, ctp_peer, 16);
	m->ep = tp_ep_create(&ec);
	m->ch = tp_chan_create(m->ep, &c);
	assert_non_null(m->ch);
	assert_int_equal(tp_chan_connect(m->ch, CTP_JETTY, 0), 0);
	for (int r = 0; r < NREG; r++) {
		struct tp_mr_cfg rc = { .addr = m->mem[r], .len = reg_cfg[r].len,
					.access = reg_cfg[r].access, .token_none = reg_cfg[r].token_none,
					.token_value = (uint32_t)rnd(0) };

		for (int i = 0; i < 32; i++)
			m->mem[r][i] = rnd(0);
		assert_int_equal(tp_mr_register(m->ep, &rc, &m->key[r].token_id), 0);
		m->key[r].token_value = rc.token_value;
	}
	memcpy(m->shadow, m->mem, sizeof(m->mem));
	for (int i = 0; i < 64; i++)
		assert_int_equal(tp_post_recv(m->ch, m->rbuf[i], RBUF, (uint64_t)i), 0);
}

static size_t mem_make_pkt(struct mem_model *m, uint8_t *b)
{
	static const uint8_t ops[] = { UB_TA_WRITE, UB_TA_WRITE, UB_TA_WRITE_IMM, UB_TA_READ,
				       UB_TA_READ, UB_TA_ATOMIC_CAS, UB_TA_ATOMIC_CAS,
				       UB_TA_ATOMIC_FADD, UB_TA_ATOMIC_FADD, UB_TA_ATOMIC_SWAP,
				       UB_TA_SEND_IMM, UB_TA_ATOMIC_RESP };
	struct ub_tah_fields t = { .opcode = ops[rnd(sizeof(ops))], .ini_tassn = (uint16_t)rnd(0),
				   .order = (uint8_t)rnd(4), .tv_en = rnd(8) != 0,
				   .ini_rcid = rnd(16) ? CTP_JETTY : (uint32_t)rnd(1 << 20) };
	int r = (int)rnd(NREG), other = (int)rnd(NREG);
	bool atomic = ub_ta_is_atomic(t.opcode);
	size_t n = 1, pl;

	b[0] = ub_ctph_make(UB_CTP_OP_TA, UB_NLP_TAH);
	ub_tah_encode((struct ub_tah *)(b + n), &t);
	n += sizeof(struct ub_tah);
	if (ub_ta_has_maetah(t.opcode)) {
		uint64_t base = (uintptr_t)m->mem[r];
		struct ub_maetah_fields mae = {
			.va = base + rnd(reg_cfg[r].len + 24) - 12,
			.token_id = rnd(8) ? m->key[rnd(4) ? r : other].token_id : (uint32_t)rnd(4),
			.length = atomic ? (rnd(8) ? 8 : (uint32_t)rnd(17)) : (uint32_t)rnd(MTU + 8),
		};

		if (atomic && rnd(4))
			mae.va &= ~7ull;
		ub_maetah_encode((struct ub_maetah *)(b + n), &mae);
		n += sizeof(struct ub_maetah);
	}
	if (ub_ta_has_immetah(t.opcode)) {
		struct ub_immetah_fields imm = { .imm = rnd(0), .msg_len = (uint32_t)rnd(MTU) };

		ub_immetah_encode((struct ub_immetah *)(b + n), &imm);
		n += sizeof(struct ub_immetah);
	}
	if (t.tv_en) {
		ub_tvetah_encode((struct ub_tvetah *)(b + n),
				 rnd(4) ? m->key[r].token_value : (uint32_t)rnd(0));
		n += sizeof(struct ub_tvetah);
	}
	pl = atomic ? (rnd(8) ? 16 : rnd(24)) : t.opcode == UB_TA_READ ? (rnd(8) ? 0 : rnd(3)) :
	     rnd(MTU + 8);
	for (size_t i = 0; i < pl; i++)
		b[n + i] = (uint8_t)rnd(256);
	return n + pl;
}

/* The region a TokenID names, or -1. */
static int mem_region(const struct mem_model *m, uint32_t id)
{
	for (int r = 0; r < NREG; r++)
		if (id && m->key[r].token_id == id)
			return r;
	return -1;
}

/*
 * What a correct target does with the packet fed (decoded here from the
 * bytes as docs/WIRE.md lays them out, not by the core): the shadow
 * changes, and m->expect says what must come back.
 */
static void mem_model_packet(struct mem_model *m, const uint8_t *b, size_t len, bool from_peer)
{
	const uint8_t *end = b + len, *q;
	uint8_t op, tv;
	uint32_t rcid, id = 0, mlen = 0, tvalue = 0;
	uint64_t va = 0, lo;
	size_t pl;
	int r;
	bool mae, imm, has_tv, ok;
	uint32_t need;

	m->expect = EXP_NONE;
	if (len < 1 + 8 || (b[0] & 0xcf) != 0)
		return;				/* not a transaction packet */
	op = b[1];
	tv = b[2] & 0x08;
	rcid = (uint32_t)(b[6] & 0x0f) << 16 | (uint32_t)b[7] << 8 | b[8];
	q = b + 9;
	mae = op == 3 || op == 4 || op == 6 || (op >= 7 && op <= 0x0f);
	imm = op == 1 || op == 4;
	has_tv = tv && !(op >= 0x11 && op <= 0x13);
	if ((size_t)(end - q) < (mae ? 16u : 0u) + (imm ? 16u : 0u) + (has_tv ? 4u : 0u))
		return;				/* cut short: malformed */
	if (mae) {
		va = be64(q);
		id = (uint32_t)(q[8] & 0x0f) << 16 | (uint32_t)q[9] << 8 | q[10];
		mlen = (uint32_t)q[12] << 24 | (uint32_t)q[13] << 16 | (uint32_t)q[14] << 8 | q[15];
		q += 16;
	}
	if (imm)
		q += 16;
	if (has_tv) {
		tvalue = (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
		q += 4;
	}
	pl = (size_t)(end - q);
	if (pl > MTU || (op >= 0x11 && op <= 0x13) || rcid != CTP_JETTY || !from_peer)
		return;				/* dropped, or an answer to nothing */
	if (!mae)
		return;				/* Sends: no region */
	r = mem_region(m, id);
	need = op == 6 ? TP_ACCESS_READ : op >= 7 ? TP_ACCESS_ATOMIC : TP_ACCESS_WRITE;
	if (op >= 7 && ((op != 7 && op != 0x0b) || mlen != 8)) {
		m->refused++;
		return;				/* unsupported atomic */
	}
	lo = r < 0 ? 0 : (uintptr_t)m->mem[r];
	ok = r >= 0 && (reg_cfg[r].token_none || (has_tv && tvalue == m->key[r].token_value)) &&
	     (reg_cfg[r].access & need) && va >= lo && va - lo <= reg_cfg[r].len &&
	     mlen <= reg_cfg[r].len - (va - lo) && (op < 7 || !(va & 7));
	if (!ok) {
		m->refused++;
		return;
	}
	if (op == 6) {
		if (pl || mlen > MTU)
			return;			/* a Read with a payload, or over the MTU */
		m->expect = EXP_READ;
		m->rd_len = mlen;
		memcpy(m->rd, (uint8_t *)m->shadow[r] + (va - lo), mlen);
		m->reads++;
		return;
	}
	if (op >= 7) {
		uint64_t *w = &m->shadow[r][(va - lo) / 8], o1, o2;

		if (pl > 16 || pl < (op == 7 ? 16u : 8u))
			return;
		o1 = be64(q);
		o2 = op == 7 ? be64(q + 8) : 0;
		m->orig = *w;
		if (op == 7 && *w == o2)
			*w = o1;
		else if (op == 0x0b)
			*w += o1;
		m->expect = EXP_ATOMIC;
		m->atomics++;
		return;
	}
	if (pl <= mlen) {		/* a Write: longer than its MAETAH Length is refused */
		memcpy((uint8_t *)m->shadow[r] + (va - lo), q, pl);
		m->writes++;
	}
}

static void mem_drain(struct mem_model *m, uint64_t now)
{
	static uint8_t out[4096];
	struct tp_tx_info info;
	struct tp_event ev;
	int answered = 0;
	size_t n;

	while ((n = tp_ep_tx(m->ep, now, out, sizeof(out), &info))) {
		struct ub_tah_fields t;
		const uint8_t *pl = out + 1 + 8;

		assert_true(n >= 1 + 8);
		ub_tah_decode((const struct ub_tah *)(out + 1), &t);
		m->answers++;
		if (t.opcode == UB_TA_ATOMIC_RESP) {
			assert_int_equal(m->expect, EXP_ATOMIC);
			assert_int_equal(n, 1 + 8 + 8);
			if (be64(pl) != m->orig)
				fail_msg("atomic returned %llx, the model %llx",
					 (unsigned long long)be64(pl), (unsigned long long)m->orig);
			answered++;
		} else if (t.opcode == UB_TA_READ_RESP) {
			assert_int_equal(m->expect, EXP_READ);
			assert_int_equal(n, 1 + 8 + m->rd_len);
			assert_memory_equal(pl, m->rd, m->rd_len);
			answered++;
		} else {
			assert_int_equal(t.opcode, UB_TA_TAACK);
		}
	}
	assert_int_equal(answered, m->expect != EXP_NONE);
	while (tp_ep_poll(m->ep, &ev))
		if (ev.type == TP_EV_RECV)	/* keep receives plentiful: never RNR */
			assert_int_equal(tp_post_recv(m->ch, m->rbuf[ev.wr_id], RBUF, ev.wr_id), 0);
	if (memcmp(m->mem, m->shadow, sizeof(m->mem)))
		fail_msg("a region differs from the model's shadow");
}

static void fuzz_ctp_memory(void **state)
{
	uint64_t iters = fuzz_iters(), now = 0;
	struct mem_model *m = calloc(1, sizeof(*m));
	uint64_t atomics = 0, reads = 0, writes = 0, refused = 0;

	(void)state;
	for (uint64_t i = 0; i < iters; i++) {
		uint8_t b[2048];
		struct tp_rx_meta meta = { .ctp = true };
		bool peer = rnd(16) != 0;
		size_t len;

		if (i % 400 == 0) {
			if (m->ep) {
				atomics += m->atomics;
				reads += m->reads;
				writes += m->writes;
				refused += m->refused;
				tp_ep_destroy(m->ep);
			}
			mem_init(m);
		}
		len = mem_make_pkt(m, b);
		if (rnd(4) == 0)
			len = damage(b, len);
		memcpy(meta.src, peer ? ctp_peer : ctp_other, 16);
		mem_model_packet(m, b, len, peer);
		feed(m->ep, now, b, len, &meta);
		now += rnd(1000);
		mem_drain(m, now);
	}
	atomics += m->atomics;
	reads += m->reads;
	writes += m->writes;
	refused += m->refused;
	tp_ep_destroy(m->ep);
	free(m);
	print_message("# ctp memory fuzz: %llu packets: %llu atomics, %llu reads, %llu writes "
		      "run; %llu refused\n", (unsigned long long)iters, (unsigned long long)atomics,
		      (unsigned long long)reads, (unsigned long long)writes,
		      (unsigned long long)refused);
	if (iters >= 20000)
		assert_true(atomics > 100 && reads > 100 && writes > 100 && refused > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fuzz_rx),
		cmocka_unit_test(fuzz_ctp_rx),
		cmocka_unit_test(fuzz_ctp_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
