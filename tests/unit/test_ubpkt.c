// SPDX-License-Identifier: BSD-2-Clause
/* Header codecs, frame builders and the frame parser (docs/WIRE.md §1, §3-§5). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/frame.h"

#define ETH 14
#define BUF 4096

enum kind { UBOE, UBOE_VLAN, NATIVE };
static const char *const kind_name[] = { "uboe", "uboe-vlan", "native" };

static uint8_t payload[2048];
static unsigned seed = 12345;

static uint32_t rnd(uint32_t mask) { return (uint32_t)rand_r(&seed) & mask; }

static void spec_base(struct ub_pkt_spec *s, int ver)
{
	static const uint8_t dmac[6] = { 0x02, 0, 0, 0, 0, 0x02 }, smac[6] = { 0x02, 0, 0, 0, 0, 0x01 };

	ub_pkt_spec_init(s);
	memcpy(s->dst_mac, dmac, 6);
	memcpy(s->src_mac, smac, 6);
	s->ip_ver = (uint8_t)ver;
	for (int i = 0; i < 16; i++) {
		s->src_ip[i] = (uint8_t)(0x10 + i);
		s->dst_ip[i] = (uint8_t)(0x80 + i);
	}
	s->payload = payload;
	s->payload_len = 32;
}

static size_t build(const struct ub_pkt_spec *s, enum kind k, uint8_t *buf)
{
	struct ub_pkt_spec t = *s;

	if (k == UBOE_VLAN && t.vlan == UB_VLAN_NONE)
		t.vlan = 100;
	return k == NATIVE ? ub_build_native(&t, buf, BUF) : ub_build_uboe(&t, buf, BUF);
}

static size_t l2_len(enum kind k)
{
	return k == NATIVE ? ETH + UB_NATIVE_HDR_LEN : k == UBOE_VLAN ? ETH + 4 : ETH;
}

/* After editing a built frame: make IPv4 checksum and ICRC right again, so
 * that the edit is the frame's only defect. ip_len 0: the checksum only. */
static void refix(uint8_t *ip, size_t ip_len)
{
	if (ip[0] >> 4 == 4) {
		size_t hl = (size_t)(ip[0] & 0xf) * 4;

		ip[10] = ip[11] = 0;
		uint16_t c = ub_ipv4_csum(ip, hl);
		ip[10] = (uint8_t)(c >> 8);
		ip[11] = (uint8_t)c;
	}
	ub_icrc_put(ip, ip_len);
}

static enum ub_parse_err parse(const uint8_t *f, size_t n, struct ub_view *v)
{
	return ub_parse_frame(f, n, 0, v);
}

#define assert_parse(f, n, want) do {						\
	struct ub_view _v;							\
	enum ub_parse_err _e = parse((f), (n), &_v);				\
	if (_e != (want))							\
		fail_msg("parse: got %s, want %s", ub_parse_errname(_e),	\
			 ub_parse_errname(want));				\
} while (0)


/* Field-wise equality: the structs have padding, so memcmp would be wrong. */
#define EQ(a, b, fld) do {							\
	if ((a)->fld != (b)->fld)						\
		fail_msg("%s: %s: %llu != %llu", __func__, #fld,		\
			 (unsigned long long)(a)->fld, (unsigned long long)(b)->fld); \
} while (0)

static void tph_eq(const struct ub_tph_fields *a, const struct ub_tph_fields *b)
{
	EQ(a, b, opcode); EQ(a, b, last); EQ(a, b, ver); EQ(a, b, pad); EQ(a, b, nlp);
	EQ(a, b, src_tpn); EQ(a, b, dst_tpn); EQ(a, b, ackreq); EQ(a, b, err);
	EQ(a, b, psn); EQ(a, b, rspst); EQ(a, b, rspinfo); EQ(a, b, tpmsn);
}

static void cetph_eq(const struct ub_cetph_fields *a, const struct ub_cetph_fields *b)
{
	EQ(a, b, ack_seq); EQ(a, b, loc); EQ(a, b, i); EQ(a, b, c); EQ(a, b, hint);
}

static void saetph_eq(const struct ub_saetph_fields *a, const struct ub_saetph_fields *b)
{
	EQ(a, b, size_code); EQ(a, b, max_rcv_psn);
	assert_memory_equal(a->bitmap, b->bitmap, ub_sack_bitmap_len(a->size_code));
}

static void cnpetph_eq(const struct ub_cnpetph_fields *a, const struct ub_cnpetph_fields *b)
{
	EQ(a, b, ecn); EQ(a, b, loc); EQ(a, b, vl);
}

static void tah_eq(const struct ub_tah_fields *a, const struct ub_tah_fields *b)
{
	EQ(a, b, opcode); EQ(a, b, taver); EQ(a, b, ee); EQ(a, b, tv_en); EQ(a, b, poison);
	EQ(a, b, ud_flg); EQ(a, b, ini_tassn); EQ(a, b, no_taack); EQ(a, b, order);
	EQ(a, b, mt_en); EQ(a, b, fce); EQ(a, b, retry); EQ(a, b, alloc); EQ(a, b, rspst);
	EQ(a, b, rspinfo); EQ(a, b, excl); EQ(a, b, ini_rc_type); EQ(a, b, ini_rcid);
}

static void maetah_eq(const struct ub_maetah_fields *a, const struct ub_maetah_fields *b)
{
	EQ(a, b, va); EQ(a, b, token_id); EQ(a, b, length);
}

static void immetah_eq(const struct ub_immetah_fields *a, const struct ub_immetah_fields *b)
{
	EQ(a, b, imm); EQ(a, b, token_value); EQ(a, b, msg_len);
}

static void tvetah_eq(const uint32_t *a, const uint32_t *b)
{
	assert_int_equal(*a, *b);
}

/* ---- header codecs ------------------------------------------------------- */

static void test_tph_layout(void **state)
{
	struct ub_tph_fields f = {
		.last = 1, .opcode = 0x05, .ver = 2, .pad = 1, .nlp = 0xa,
		.src_tpn = 0x123456, .dst_tpn = 0xabcdef, .ackreq = 1, .err = 0,
		.psn = 0x010203, .rspst = 3, .rspinfo = 0x11, .tpmsn = 0xfedcba,
	}, g;
	static const uint8_t want[16] = { 0x85, 0x9a, 0x12, 0x34, 0x56, 0xab, 0xcd, 0xef,
					  0x80, 0x01, 0x02, 0x03, 0x71, 0xfe, 0xdc, 0xba };
	struct ub_tph h;

	(void)state;
	ub_tph_encode(&h, &f);
	assert_memory_equal(&h, want, 16);
	f.err = 1;
	f.ackreq = 0;
	ub_tph_encode(&h, &f);
	assert_int_equal(h.flags, 0x40);
	ub_tph_decode(&h, &g);
	tph_eq(&f, &g);
}

static void test_tph_roundtrip(void **state)
{
	(void)state;
	for (int i = 0; i < 20000; i++) {
		struct ub_tph_fields f, g;
		struct ub_tph h;

		memset(&f, 0, sizeof(f));
		f.last = rnd(1);
		f.opcode = (uint8_t)rnd(0x7f);
		f.ver = (uint8_t)rnd(3);
		f.pad = (uint8_t)rnd(3);
		f.nlp = (uint8_t)rnd(0xf);
		f.src_tpn = rnd(0xffffff);
		f.dst_tpn = rnd(0xffffff);
		f.ackreq = rnd(1);
		f.err = rnd(1);
		f.psn = rnd(0xffffff);
		f.rspst = (uint8_t)rnd(7);
		f.rspinfo = (uint8_t)rnd(0x1f);
		f.tpmsn = rnd(0xffffff);
		ub_tph_encode(&h, &f);
		assert_int_equal(h.flags & 0x3f, 0);	/* reserved bits written 0 */
		memset(&g, 0xa5, sizeof(g));
		ub_tph_decode(&h, &g);
		tph_eq(&f, &g);
	}
}

static void test_cetph_codec(void **state)
{
	struct ub_cetph_fields f = { .ack_seq = 0x01020304, .loc = 1, .i = 0, .c = 0x7f, .hint = 0xbeef }, g;
	static const uint8_t want[8] = { 1, 2, 3, 4, 0x02, 0x7f, 0xbe, 0xef };
	struct ub_cetph h;

	(void)state;
	ub_cetph_encode(&h, &f);
	assert_memory_equal(&h, want, 8);
	f.loc = 0;
	f.i = 1;
	ub_cetph_encode(&h, &f);
	assert_int_equal(h.alg[0], 0x01);
	ub_cetph_decode(&h, &g);
	cetph_eq(&f, &g);
}

static void test_saetph_codec(void **state)
{
	uint8_t buf[4 + UB_SACK_BITMAP_MAX + 8];

	(void)state;
	for (uint8_t code = 0; code <= UB_SAETPH_MAX_SIZE_CODE; code++) {
		uint32_t bits = 64u << code, ks[] = { 0, 1, 7, 8, 13, bits / 2 + 3, bits - 1 };
		struct ub_saetph_fields f, g;
		size_t n;

		memset(&f, 0, sizeof(f));
		f.size_code = code;
		f.max_rcv_psn = 0xa1b2c3;
		for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
			ub_sack_set(f.bitmap, ks[i]);
		assert_int_equal(ub_saetph_len(code), 4 + bits / 8);
		memset(buf, 0xee, sizeof(buf));
		n = ub_saetph_encode(buf, &f);
		assert_int_equal(n, 4 + bits / 8);
		assert_int_equal(buf[0], code);
		assert_int_equal(buf[1], 0xa1);
		assert_int_equal(buf[3], 0xc3);
		assert_int_equal(buf[n], 0xee);		/* nothing past the bitmap */
		/* bit k = byte k/8, bit k%8 from the LSB */
		assert_int_equal(buf[4], 0x83);		/* k = 0, 1, 7 */
		assert_int_equal(buf[5], 0x21);		/* k = 8, 13 */
		assert_int_equal(buf[4 + bits / 8 - 1] & 0x80, 0x80);
		for (uint32_t k = 0; k < bits; k++) {
			bool set = false;

			for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
				set |= ks[i] == k;
			assert_int_equal(ub_sack_test(buf + 4, k), set);
		}
		memset(&g, 0x55, sizeof(g));
		assert_int_equal(ub_saetph_decode(buf, n, &g), n);
		saetph_eq(&f, &g);
		assert_int_equal(ub_saetph_decode(buf, n - 1, &g), 0);	/* bitmap cut */
		buf[0] |= 0xf8;		/* reserved bits are ignored */
		assert_int_equal(ub_saetph_decode(buf, n, &g), n);
	}
	struct ub_saetph_fields bad = { .size_code = 5 };

	assert_int_equal(ub_saetph_encode(buf, &bad), 0);
	buf[0] = 5;
	assert_int_equal(ub_saetph_decode(buf, sizeof(buf), &bad), 0);
	assert_int_equal(ub_saetph_decode(buf, 3, &bad), 0);
}

static void test_cnpetph_codec(void **state)
{
	struct ub_cnpetph_fields f = { .ecn = UB_CNP_ECN_SEVERE, .loc = 1 }, g;
	struct ub_cnpetph h;
	uint8_t zero[14] = { 0 };

	(void)state;
	memset(&h, 0xff, sizeof(h));
	ub_cnpetph_encode(&h, &f);
	assert_int_equal(h.b0, 0xe0);
	assert_int_equal(h.b1, 0);	/* VL 0: what an RTP CNP carries */
	assert_memory_equal(h.rsv, zero, 14);
	ub_cnpetph_decode(&h, &g);
	cnpetph_eq(&f, &g);
	f.ecn = UB_CNP_ECN_MINOR;
	f.loc = 0;
	f.vl = 9;	/* CTP: the VL in byte 1's low 4 bits */
	ub_cnpetph_encode(&h, &f);
	assert_int_equal(h.b0, 0x40);
	assert_int_equal(h.b1, 0x09);
	ub_cnpetph_decode(&h, &g);
	cnpetph_eq(&f, &g);
	h.b1 = 0xf3;	/* the reserved bits ignored on receipt */
	ub_cnpetph_decode(&h, &g);
	assert_int_equal(g.vl, 3);
}

static void test_tah_codec(void **state)
{
	struct ub_tah_fields f = {
		.opcode = UB_TA_WRITE, .ee = 2, .tv_en = 1, .ud_flg = 1, .ini_tassn = 0x1234,
		.no_taack = 1, .order = 5, .fce = 1, .alloc = 1,
		.excl = 1, .ini_rc_type = 2, .ini_rcid = 0xabcde,
	}, g;
	static const uint8_t want[8] = { 0x03, 0x29, 0x12, 0x34, 0xd5, 0x6a, 0xbc, 0xde };
	struct ub_tah h;

	(void)state;
	ub_tah_encode(&h, &f);
	assert_memory_equal(&h, want, 8);
	ub_tah_decode(&h, &g);
	tah_eq(&f, &g);

	/* TAACK: byte 4 is RSPST.RSPINFO */
	memset(&f, 0, sizeof(f));
	f.opcode = UB_TA_TAACK;
	f.rspst = 4;
	f.rspinfo = 3;
	f.ini_tassn = 7;
	ub_tah_encode(&h, &f);
	assert_int_equal(h.b4, 0x83);
	ub_tah_decode(&h, &g);
	tah_eq(&f, &g);

	for (int i = 0; i < 20000; i++) {
		memset(&f, 0, sizeof(f));
		f.opcode = (uint8_t)rnd(0xff);
		f.taver = (uint8_t)rnd(3);
		f.ee = (uint8_t)rnd(3);
		f.tv_en = rnd(1);
		f.poison = rnd(1);
		f.ud_flg = rnd(1);
		f.ini_tassn = (uint16_t)rnd(0xffff);
		if (ub_ta_is_answer(f.opcode)) {
			f.rspst = (uint8_t)rnd(7);
			f.rspinfo = (uint8_t)rnd(0x1f);
		} else {
			f.no_taack = rnd(1);
			f.order = (uint8_t)rnd(7);
			f.mt_en = rnd(1);
			f.fce = rnd(1);
			f.retry = rnd(1);
			f.alloc = rnd(1);
		}
		f.excl = rnd(1);
		f.ini_rc_type = (uint8_t)rnd(3);
		f.ini_rcid = rnd(0xfffff);
		ub_tah_encode(&h, &f);
		assert_int_equal(h.b1 & 0x02, 0);	/* rsv */
		assert_int_equal(h.b5 & 0x80, 0);	/* rsv */
		ub_tah_decode(&h, &g);
		tah_eq(&f, &g);
	}
}

static void test_maetah_codec(void **state)
{
	struct ub_maetah_fields f = { .va = 0x0102030405060708ull, .token_id = 0xabcde, .length = 0x11223344 }, g;
	static const uint8_t want[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0xbc, 0xde, 0x00,
					  0x11, 0x22, 0x33, 0x44 };
	struct ub_maetah h;

	(void)state;
	ub_maetah_encode(&h, &f);
	assert_memory_equal(&h, want, 16);
	ub_maetah_decode(&h, &g);
	maetah_eq(&f, &g);
	f.token_id = 0xffffffff;	/* masked to 20 bits, reserved stay 0 */
	ub_maetah_encode(&h, &f);
	assert_int_equal(((uint8_t *)&h)[8], 0x0f);
	assert_int_equal(((uint8_t *)&h)[11], 0x00);
}

/* IMMETAH (UB 2.0 §7.2.8) and TVETAH (§7.2.5): big-endian words. */
static void test_immetah_tvetah_codec(void **state)
{
	struct ub_immetah_fields f = { .imm = 0x0102030405060708ull, .token_value = 0x11223344,
				       .msg_len = 0xa0b0c0d0 }, g;
	static const uint8_t want[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x22, 0x33, 0x44,
					  0xa0, 0xb0, 0xc0, 0xd0 };
	static const uint8_t tv[4] = { 0xde, 0xad, 0xbe, 0xef };
	struct ub_immetah h;
	struct ub_tvetah t;
	uint8_t w[8];

	(void)state;
	ub_immetah_encode(&h, &f);
	assert_memory_equal(&h, want, 16);
	ub_immetah_decode(&h, &g);
	immetah_eq(&f, &g);
	ub_tvetah_encode(&t, 0xdeadbeef);
	assert_memory_equal(&t, tv, 4);
	assert_int_equal(ub_tvetah_decode(&t), 0xdeadbeef);
	ub_put_be64(w, 0x8877665544332211ull);
	assert_int_equal(w[0], 0x88);
	assert_int_equal(w[7], 0x11);
	assert_true(ub_get_be64(w) == 0x8877665544332211ull);
	/* Which opcodes carry what (Table 7-2). */
	assert_true(ub_ta_has_maetah(UB_TA_ATOMIC_CAS) && ub_ta_has_maetah(UB_TA_ATOMIC_FADD));
	assert_false(ub_ta_has_maetah(UB_TA_ATOMIC_RESP) || ub_ta_has_maetah(UB_TA_SEND_IMM));
	assert_true(ub_ta_has_immetah(UB_TA_SEND_IMM) && ub_ta_has_immetah(UB_TA_WRITE_IMM));
	assert_false(ub_ta_has_immetah(UB_TA_WRITE) || ub_ta_has_immetah(UB_TA_SEND));
	assert_true(ub_ta_is_answer(UB_TA_TAACK) && ub_ta_is_answer(UB_TA_ATOMIC_RESP));
	assert_false(ub_ta_is_answer(UB_TA_MESSAGE));
}

static void test_opcode_names(void **state)
{
	(void)state;
	assert_string_equal(ub_tp_opcode_name(UB_TP_CNP), "CNP");
	assert_string_equal(ub_tp_opcode_name(4), "?");
	assert_string_equal(ub_ta_opcode_name(UB_TA_READ_RESP), "ReadResp");
	assert_string_equal(ub_ta_opcode_name(UB_TA_ATOMIC_CAS), "CAS");
	assert_string_equal(ub_ta_opcode_name(UB_TA_ATOMIC_RESP), "AtomicResp");
	assert_string_equal(ub_ta_opcode_name(0x7f), "?");
}

/* ---- builders ------------------------------------------------------------ */

static void test_spec_defaults(void **state)
{
	struct ub_pkt_spec s;

	(void)state;
	ub_pkt_spec_init(&s);
	assert_int_equal(s.vlan, UB_VLAN_NONE);
	assert_int_equal(s.ub_ethertype, 0x88b5);
	assert_int_equal(s.ttl, 64);
	assert_int_equal(s.cci, 0x4000);
	assert_int_equal(s.pid, 1);
	assert_int_equal(s.rt, UB_RT_FLOW_SHORTEST);
	assert_int_equal(s.ip_ver, 4);
	assert_int_equal(s.tph.opcode, UB_TP_RTP_DATA);
	assert_true(s.has_tah);
}

static void test_build_wire_fields(void **state)
{
	uint8_t f[BUF];
	struct ub_pkt_spec s;
	size_t n;

	(void)state;
	spec_base(&s, 4);
	s.dscp = 46;
	s.ecn = ECN_ECT0;
	s.ttl = 9;
	s.ip_id = 0xbeef;
	s.sport = 0xc123;
	s.vlan = 0x123;
	s.vlan_pcp = 5;
	s.vlan_dei = 1;
	n = ub_build_uboe(&s, f, BUF);
	assert_int_equal(n, ETH + 4 + 20 + 8 + 16 + 8 + 32 + 4);
	assert_memory_equal(f, s.dst_mac, 6);
	assert_memory_equal(f + 6, s.src_mac, 6);
	assert_int_equal(f[12] << 8 | f[13], 0x8100);
	assert_int_equal(f[14] << 8 | f[15], 5 << 13 | 1 << 12 | 0x123);
	assert_int_equal(f[16] << 8 | f[17], 0x0800);
	uint8_t *ip = f + 18;

	assert_int_equal(ip[0], 0x45);
	assert_int_equal(ip[1], 46 << 2 | 2);
	assert_int_equal(ip[2] << 8 | ip[3], n - 18);		/* includes the ICRC */
	assert_int_equal(ip[4] << 8 | ip[5], 0xbeef);
	assert_int_equal(ip[6] << 8 | ip[7], 0x4000);		/* DF, offset 0 */
	assert_int_equal(ip[8], 9);
	assert_int_equal(ip[9], 17);
	assert_int_equal(ub_ipv4_csum(ip, 20), 0);
	assert_int_equal(ip[20] << 8 | ip[21], 0xc123);
	assert_int_equal(ip[22] << 8 | ip[23], 4792);
	assert_int_equal(ip[24] << 8 | ip[25], n - 18 - 20);
	assert_int_equal(ip[26] << 8 | ip[27], 0);		/* UDP checksum 0 */
	assert_true(ub_icrc_ok(ip, n - 18));

	spec_base(&s, 6);
	s.dscp = 0x2b;
	s.ecn = 1;
	s.flow_label = 0xabcde;
	s.ttl = 200;
	n = ub_build_native(&s, f, BUF);
	assert_int_equal(n, ETH + 10 + 40 + 8 + 16 + 8 + 32 + 4);
	assert_int_equal(f[12] << 8 | f[13], 0x88b5);
	assert_int_equal(ub_lph_config((struct ub_lph *)(f + 14)), UB_LPH_CONFIG_IPV6);
	ip = f + 24;
	assert_int_equal(ip[0], 0x60 | (0x2b << 2 | 1) >> 4);
	assert_int_equal(ip[1], ((0x2b << 2 | 1) & 0xf) << 4 | 0xa);
	assert_int_equal(ip[2] << 8 | ip[3], 0xbcde);
	assert_int_equal(ip[4] << 8 | ip[5], n - 24 - 40);	/* includes the ICRC */
	assert_int_equal(ip[6], 17);
	assert_int_equal(ip[7], 200);
	assert_memory_equal(ip + 8, s.src_ip, 16);
	assert_memory_equal(ip + 24, s.dst_ip, 16);
	assert_true(ub_icrc_ok(ip, n - 24));

	s.ub_ethertype = 0x9abc;
	s.ip_ver = 4;
	s.vl = 0xb;
	s.rt = 1;
	s.cci = 0x4803;
	s.perm = 1;
	s.pid = 0x345678;
	n = ub_build_native(&s, f, BUF);
	assert_int_equal(f[12] << 8 | f[13], 0x9abc);
	static const uint8_t lph_nth[10] = { 0x01, 0x60 | 3, 0x80, 0, 0x48, 0x03, 0x01, 0x34, 0x56, 0x78 };

	assert_memory_equal(f + 14, lph_nth, 10);
}

static void test_build_limits(void **state)
{
	static uint8_t f[70000];
	struct ub_pkt_spec s;
	size_t n;

	(void)state;
	for (int k = UBOE; k <= NATIVE; k++) {
		spec_base(&s, 6);
		n = build(&s, k, f);
		assert_true(n > 0);
		s.vlan = k == UBOE_VLAN ? 100 : UB_VLAN_NONE;
		assert_int_equal(k == NATIVE ? ub_build_native(&s, f, n) : ub_build_uboe(&s, f, n), n);
		assert_int_equal(k == NATIVE ? ub_build_native(&s, f, n - 1) : ub_build_uboe(&s, f, n - 1), 0);
		s.ip_ver = 5;
		assert_int_equal(build(&s, k, f), 0);
		s.ip_ver = 4;
		s.has_saetph = true;
		s.saetph.size_code = 5;
		assert_int_equal(build(&s, k, f), 0);
		s.saetph.size_code = 4;
		assert_true(build(&s, k, f) > 0);
		s.has_saetph = false;
		s.payload = NULL;
		s.has_tah = false;
		/* IPv4 Total Length: 65535 at most */
		s.payload_len = 65535 - 20 - 8 - 16 - 4;
		assert_int_equal(ub_pkt_ip_len(&s), 65535);
		assert_int_equal(k == NATIVE ? ub_build_native(&s, f, sizeof(f)) : ub_build_uboe(&s, f, sizeof(f)),
				 l2_len(k) + 65535);
		s.payload_len++;
		assert_int_equal(k == NATIVE ? ub_build_native(&s, f, sizeof(f)) : ub_build_uboe(&s, f, sizeof(f)), 0);
		/* IPv6 Payload Length: the header is not counted */
		s.ip_ver = 6;
		s.payload_len = 65535 - 8 - 16 - 4;
		assert_true((k == NATIVE ? ub_build_native(&s, f, sizeof(f)) : ub_build_uboe(&s, f, sizeof(f))) > 0);
		s.payload_len++;
		assert_int_equal(k == NATIVE ? ub_build_native(&s, f, sizeof(f)) : ub_build_uboe(&s, f, sizeof(f)), 0);
	}
	/* NULL payload: zero bytes */
	spec_base(&s, 4);
	s.payload = NULL;
	s.payload_len = 5;
	n = ub_build_uboe(&s, f, BUF);
	static const uint8_t zero[5] = { 0 };

	assert_memory_equal(f + n - 4 - 5, zero, 5);
}

/* ---- build -> parse ------------------------------------------------------ */

static void check_view(const struct ub_pkt_spec *s, enum kind k, const uint8_t *f, size_t n,
		       const struct ub_view *v)
{
	size_t l2 = l2_len(k), iplen = n - l2;

	assert_int_equal(v->kind, k == NATIVE ? UB_KIND_NATIVE : UB_KIND_UBOE);
	assert_ptr_equal(v->frame, f);
	assert_memory_equal(v->dst_mac, s->dst_mac, 6);
	assert_memory_equal(v->src_mac, s->src_mac, 6);
	assert_int_equal(v->vlan, k == UBOE_VLAN ? (s->vlan == UB_VLAN_NONE ? 100 : s->vlan) : UB_VLAN_NONE);
	if (k == NATIVE) {
		assert_int_equal(ub_view_off(v, v->lph), ETH);
		assert_int_equal(ub_view_off(v, v->nth), ETH + 4);
		assert_int_equal(v->lph_config, s->ip_ver == 6 ? 4 : 3);
		assert_int_equal(v->vl, s->vl);
		assert_int_equal(v->rt, s->rt);
		assert_int_equal(v->cci, s->cci);
		assert_int_equal(v->perm, s->perm);
		assert_int_equal(v->pid, s->pid);
	} else {
		assert_null(v->lph);
		assert_null(v->nth);
	}
	assert_int_equal(ub_view_off(v, v->ip), l2);
	assert_int_equal(v->ip_ver, s->ip_ver);
	assert_int_equal(v->ip_len, iplen);
	assert_int_equal(v->dscp, s->dscp);
	assert_int_equal(v->ecn, s->ecn);
	assert_int_equal(v->ttl, s->ttl);
	assert_true(v->ip_csum_ok);
	if (s->ip_ver == 4) {
		assert_int_equal(v->ip_id, s->ip_id);
		assert_memory_equal(v->src_ip, s->src_ip, 4);
		assert_memory_equal(v->dst_ip, s->dst_ip, 4);
	} else {
		assert_int_equal(v->flow_label, s->flow_label);
		assert_memory_equal(v->src_ip, s->src_ip, 16);
		assert_memory_equal(v->dst_ip, s->dst_ip, 16);
	}
	assert_int_equal(ub_view_off(v, v->udp), l2 + (s->ip_ver == 6 ? 40 : 20));
	assert_int_equal(v->sport, s->sport);
	assert_int_equal(v->dport, 4792);
	assert_int_equal(v->udp_csum, 0);
	assert_int_equal(ub_view_off(v, v->tph), ub_view_off(v, v->udp) + 8);
	tph_eq(&v->tp, &s->tph);
	assert_int_equal(v->nak, s->tph.opcode == UB_TP_ACK && s->tph.rspst == UB_RSPST_NAK);

	long off = ub_view_off(v, v->tph) + 16;

#define HDR(has, ptr, fld, sfld, len) do {					\
	if (has) {								\
		assert_int_equal(ub_view_off(v, v->ptr), off);			\
		sfld##_eq(&v->fld, &s->sfld);					\
		off += (len);							\
	} else {								\
		assert_null(v->ptr);						\
	}									\
} while (0)
	HDR(s->has_cetph, cetph, ce, cetph, 8);
	HDR(s->has_saetph, saetph, sa, saetph, (long)ub_saetph_len(s->saetph.size_code));
	HDR(s->has_cnpetph, cnpetph, cnp, cnpetph, 16);
	HDR(s->has_tah, tah, ta, tah, 8);
	HDR(s->has_maetah, maetah, mae, maetah, 16);
	HDR(s->has_immetah, immetah, imm, immetah, 16);
	HDR(s->has_tvetah, tvetah, token_value, tvetah, 4);
#undef HDR
	assert_int_equal(ub_view_off(v, v->payload), off);
	assert_int_equal(v->payload_len, s->payload_len);
	if (s->payload_len)
		assert_memory_equal(v->payload, s->payload, s->payload_len);
	assert_int_equal(off + (long)s->payload_len + 4, (long)n);
	assert_true(v->icrc_ok);
	assert_int_equal(v->icrc, ub_icrc(f + l2, iplen - 4));
}

static void roundtrip(const struct ub_pkt_spec *s, enum kind k)
{
	uint8_t f[BUF];
	struct ub_view v;
	enum ub_parse_err e;
	size_t n = build(s, k, f);

	assert_true(n > 0);
	e = parse(f, n, &v);
	if (e != UB_PARSE_OK)
		fail_msg("%s IPv%d TP op %u: %s", kind_name[k], s->ip_ver, s->tph.opcode,
			 ub_parse_strerror(e));
	check_view(s, k, f, n, &v);
}

/* Fill the headers an opcode carries, as a sender would. */
static void set_opcode(struct ub_pkt_spec *s, uint8_t op, uint8_t ta_op)
{
	bool resp = op >= UB_TP_ACK;

	s->tph.opcode = op;
	s->has_cetph = ub_tp_has_cetph(op);
	s->has_saetph = ub_tp_has_saetph(op);
	s->has_cnpetph = ub_tp_has_cnpetph(op);
	s->has_tah = !resp || ta_op == UB_TA_TAACK;
	s->tah.opcode = ta_op;
	/* An answer has RSPST.RSPINFO where the others have their flags. */
	if (ub_ta_is_answer(ta_op)) {
		s->tah.no_taack = s->tah.mt_en = s->tah.fce = s->tah.retry = s->tah.alloc = false;
		s->tah.order = 0;
		s->tah.rspst = (uint8_t)(s->tph.psn & 7);
		s->tah.rspinfo = (uint8_t)(s->tph.tpmsn & 31);
	} else {
		s->tah.rspst = s->tah.rspinfo = 0;
	}
	s->has_maetah = s->has_tah && ub_ta_has_maetah(ta_op);
	s->has_immetah = s->has_tah && ub_ta_has_immetah(ta_op);
	/* TV_EN: a TVETAH after the others (requests; an answer's bit is SV). */
	s->has_tvetah = s->has_tah && s->tah.tv_en && !ub_ta_is_answer(ta_op);
	s->tph.nlp = s->has_tah ? UB_NLP_TAH : 1;
	s->payload_len = resp ? 0 : s->payload_len;
}

static void randomize(struct ub_pkt_spec *s)
{
	s->dscp = (uint8_t)rnd(63);
	s->ecn = (uint8_t)rnd(3);
	s->ttl = (uint8_t)rnd(255);
	s->ip_id = (uint16_t)rnd(0xffff);
	s->flow_label = rnd(0xfffff);
	s->sport = (uint16_t)rnd(0xffff);
	s->vl = (uint8_t)rnd(15);
	s->rt = (uint8_t)rnd(3);
	s->cci = (uint16_t)rnd(0xffff);
	s->perm = (uint8_t)rnd(1);
	s->pid = 1 + rnd(0xfffffe);
	s->tph.last = rnd(1);
	s->tph.ver = (uint8_t)rnd(3);
	s->tph.pad = (uint8_t)rnd(3);
	s->tph.src_tpn = rnd(0xffffff);
	s->tph.dst_tpn = rnd(0xffffff);
	s->tph.ackreq = rnd(1);
	s->tph.err = rnd(1);
	s->tph.psn = rnd(0xffffff);
	s->tph.rspst = (uint8_t)rnd(7);
	s->tph.rspinfo = (uint8_t)rnd(31);
	s->tph.tpmsn = rnd(0xffffff);
	s->cetph = (struct ub_cetph_fields){ rnd(0xffffffff), rnd(1), rnd(1), (uint8_t)rnd(255),
					     (uint16_t)rnd(0xffff) };
	s->saetph.size_code = (uint8_t)rnd(7) % 5;
	s->saetph.max_rcv_psn = rnd(0xffffff);
	memset(s->saetph.bitmap, 0, sizeof(s->saetph.bitmap));
	for (size_t i = 0; i < ub_sack_bitmap_len(s->saetph.size_code); i++)
		s->saetph.bitmap[i] = (uint8_t)rnd(255);
	s->cnpetph.ecn = (uint8_t)rnd(3);
	s->cnpetph.loc = rnd(1);
	s->tah.ee = (uint8_t)rnd(3);
	s->tah.tv_en = rnd(1);
	s->tah.ini_tassn = (uint16_t)rnd(0xffff);
	s->tah.order = (uint8_t)rnd(7);
	s->tah.retry = rnd(1);
	s->tah.ini_rcid = rnd(0xfffff);
	s->maetah = (struct ub_maetah_fields){ (uint64_t)rnd(0xffffffff) << 32 | rnd(0xffffffff),
					       rnd(0xfffff), rnd(0xffffffff) };
	s->immetah = (struct ub_immetah_fields){ (uint64_t)rnd(0xffffffff) << 32 | rnd(0xffffffff),
						 rnd(0xffffffff), rnd(0xffffffff) };
	s->tvetah = rnd(0xffffffff);
}

static const uint8_t tp_ops[] = { UB_TP_UTP_DATA, UB_TP_RTP_DATA, UB_TP_ACK, UB_TP_ACK_CE,
				  UB_TP_SACK, UB_TP_SACK_CE, UB_TP_CNP };
static const uint8_t ta_ops[] = { UB_TA_SEND, UB_TA_SEND_IMM, UB_TA_WRITE, UB_TA_WRITE_IMM,
				  UB_TA_READ, UB_TA_ATOMIC_CAS, UB_TA_ATOMIC_FADD, UB_TA_MESSAGE,
				  UB_TA_TAACK, UB_TA_READ_RESP, UB_TA_ATOMIC_RESP };

static void test_roundtrip_all_kinds(void **state)
{
	struct ub_pkt_spec s;
	int count = 0;

	(void)state;
	for (int k = UBOE; k <= NATIVE; k++)
		for (int ver = 4; ver <= 6; ver += 2)
			for (size_t i = 0; i < sizeof(tp_ops); i++)
				for (size_t j = 0; j < sizeof(ta_ops); j++)
					for (int r = 0; r < 4; r++) {
						spec_base(&s, ver);
						if (r)
							randomize(&s);
						s.payload_len = (size_t)rnd(1023) * (r & 1);
						if (k == UBOE_VLAN)
							s.vlan = (int)rnd(4095);
						set_opcode(&s, tp_ops[i], ta_ops[j]);
						if (tp_ops[i] == UB_TP_ACK && r == 3)
							s.tph.rspst = UB_RSPST_NAK;
						roundtrip(&s, k);
						count++;
					}
	print_message("# %d frames built and parsed back\n", count);
}

/* Data packet with NLP != 0: no TAH, everything after TPH is payload. */
static void test_roundtrip_no_tah(void **state)
{
	struct ub_pkt_spec s;

	(void)state;
	spec_base(&s, 6);
	s.has_tah = false;
	s.tph.nlp = 3;
	roundtrip(&s, UBOE);
	s.payload_len = 0;
	roundtrip(&s, NATIVE);
}

/* ---- parser errors ------------------------------------------------------- */

static size_t make(enum kind k, int ver, uint8_t *f)
{
	struct ub_pkt_spec s;

	spec_base(&s, ver);
	return build(&s, k, f);
}

static void test_parse_not_ub(void **state)
{
	uint8_t f[BUF];
	size_t n;

	(void)state;
	n = make(UBOE, 4, f);
	assert_parse(f, 0, UB_PARSE_NOT_UB);
	assert_parse(f, 13, UB_PARSE_NOT_UB);
	f[12] = 0x08;
	f[13] = 0x06;			/* ARP */
	assert_parse(f, n, UB_PARSE_NOT_UB);

	for (int i = 0; i < 2; i++) {
		n = make(UBOE, 4, f);
		f[ETH + 9] = (uint8_t)(i ? 1 : 6);	/* ICMP, TCP */
		refix(f + ETH, n - ETH);
		assert_parse(f, n, UB_PARSE_NOT_UB);
	}

	n = make(UBOE, 6, f);
	f[ETH + 40 + 3] = 0xb7;		/* UDP 4791: RoCEv2, not UBoE */
	assert_parse(f, n, UB_PARSE_NOT_UB);

	/* Extension headers (hop-by-hop, destination options) or another
	 * protocol after IPv6: not UBoE */
	for (int i = 0; i < 3; i++) {
		n = make(UBOE, 6, f);
		f[ETH + 6] = (uint8_t)(i == 0 ? 0 : i == 1 ? 60 : 6);
		assert_parse(f, n, UB_PARSE_NOT_UB);
	}

	n = make(UBOE, 4, f);
	f[ETH] = 0x65;			/* EtherType IPv4, version 6 */
	assert_parse(f, n, UB_PARSE_NOT_UB);

	n = make(UBOE_VLAN, 4, f);
	f[16] = 0x88;
	f[17] = 0xb5;			/* native UB is never tagged */
	assert_parse(f, n, UB_PARSE_NOT_UB);
	assert_parse(f, 17, UB_PARSE_NOT_UB);

	/* The native EtherType is what the caller says it is. */
	n = make(NATIVE, 4, f);
	{
		struct ub_view v;

		assert_int_equal(ub_parse_frame(f, n, 0x88b6, &v), UB_PARSE_NOT_UB);
		assert_int_equal(v.kind, UB_KIND_NONE);
		f[13] = 0xb6;
		assert_int_equal(ub_parse_frame(f, n, 0x88b6, &v), UB_PARSE_OK);
		assert_int_equal(v.kind, UB_KIND_NATIVE);
		assert_int_equal(ub_parse_frame(f, n, 0, &v), UB_PARSE_NOT_UB);
	}
}

/* Every prefix of a valid frame is rejected, as TRUNCATED once it claims UB. */
static void test_parse_truncated(void **state)
{
	uint8_t f[BUF];

	(void)state;
	for (int k = UBOE; k <= NATIVE; k++) {
		for (int ver = 4; ver <= 6; ver += 2) {
			size_t n = make(k, ver, f), udp_end = l2_len(k) + (ver == 6 ? 40 : 20) + 8;

			for (size_t len = 0; len < n; len++) {
				uint8_t *copy = malloc(len ? len : 1);	/* exact size: overreads show under ASan/valgrind */
				struct ub_view v;
				enum ub_parse_err e, want;

				memcpy(copy, f, len);
				e = parse(copy, len, &v);
				if (k == NATIVE)
					want = len < ETH ? UB_PARSE_NOT_UB : UB_PARSE_TRUNCATED;
				else
					want = len < udp_end ? UB_PARSE_NOT_UB : UB_PARSE_TRUNCATED;
				if (e != want)
					fail_msg("%s IPv%d cut to %zu of %zu: %s", kind_name[k], ver, len, n,
						 ub_parse_errname(e));
				free(copy);
			}
			assert_parse(f, n, UB_PARSE_OK);
		}
	}
	/* IP length beyond the frame */
	size_t n = make(UBOE, 4, f);

	f[ETH + 3]++;
	refix(f + ETH, n - ETH);
	assert_parse(f, n, UB_PARSE_TRUNCATED);
}

static void test_parse_lph_config(void **state)
{
	uint8_t f[BUF];
	size_t n = make(NATIVE, 4, f);

	(void)state;
	for (uint8_t c = 0; c < 16; c++) {
		f[ETH + 1] = (uint8_t)((f[ETH + 1] & 0xf0) | c);
		assert_parse(f, n, c == 3 ? UB_PARSE_OK : c == 4 ? UB_PARSE_IP_VERSION : UB_PARSE_LPH_CONFIG);
	}
}

static void test_parse_ip_version(void **state)
{
	uint8_t f[BUF];
	size_t n = make(NATIVE, 6, f);

	(void)state;
	f[ETH + 1] = (uint8_t)((f[ETH + 1] & 0xf0) | UB_LPH_CONFIG_IPV4);
	assert_parse(f, n, UB_PARSE_IP_VERSION);
	n = make(NATIVE, 4, f);
	f[ETH + 10] = 0x55;		/* version 5 */
	assert_parse(f, n, UB_PARSE_IP_VERSION);
}

/* Insert 4 bytes of IPv4 options (NOPs) into a built frame. */
static size_t add_ip_options(uint8_t *f, size_t n, size_t l2, uint16_t dport)
{
	uint8_t *ip = f + l2;
	uint16_t tot;

	memmove(ip + 24, ip + 20, n - l2 - 20);
	memset(ip + 20, 1, 4);
	ip[0] = 0x46;
	tot = (uint16_t)(ip[2] << 8 | ip[3]);
	tot += 4;
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[24 + 2] = (uint8_t)(dport >> 8);
	ip[24 + 3] = (uint8_t)dport;
	refix(ip, tot);
	return n + 4;
}

static void test_parse_ipv4_options(void **state)
{
	uint8_t f[BUF];
	size_t n;

	(void)state;
	n = add_ip_options(f, make(UBOE, 4, f), ETH, 4792);
	assert_parse(f, n, UB_PARSE_IPV4_OPTIONS);
	n = add_ip_options(f, make(UBOE_VLAN, 4, f), ETH + 4, 4792);
	assert_parse(f, n, UB_PARSE_IPV4_OPTIONS);
	/* Options on other UDP traffic are none of our business. */
	n = add_ip_options(f, make(UBOE, 4, f), ETH, 53);
	assert_parse(f, n, UB_PARSE_NOT_UB);
	n = add_ip_options(f, make(NATIVE, 4, f), ETH + 10, 53);
	assert_parse(f, n, UB_PARSE_IPV4_OPTIONS);
	/* IHL below 5 */
	n = make(NATIVE, 4, f);
	f[ETH + 10] = 0x44;
	assert_parse(f, n, UB_PARSE_IPV4_OPTIONS);
	n = make(UBOE, 4, f);
	f[ETH] = 0x44;
	assert_parse(f, n, UB_PARSE_NOT_UB);
	/* IHL 15 on a frame too short for it */
	n = make(NATIVE, 4, f);
	f[ETH + 10] = 0x4f;
	assert_parse(f, 24 + 60, UB_PARSE_TRUNCATED);
}

static void test_parse_ipv4_fragment(void **state)
{
	uint8_t f[BUF];
	size_t n;

	(void)state;
	for (int k = UBOE; k <= NATIVE; k++) {
		uint8_t *ip;

		n = make(k, 4, f);
		ip = f + l2_len(k);
		ip[6] = 0x20;		/* MF, offset 0: first fragment of UDP 4792 */
		refix(ip, n - l2_len(k));
		assert_parse(f, n, UB_PARSE_IPV4_FRAGMENT);
		/* Later fragments have no UDP header to tell: every offset bit. */
		for (int bit = 0; bit < 13; bit++) {
			uint16_t fo = (uint16_t)(0x4000 | 1u << bit);

			ip[6] = (uint8_t)(fo >> 8);
			ip[7] = (uint8_t)fo;
			refix(ip, n - l2_len(k));
			assert_parse(f, n, k == NATIVE ? UB_PARSE_IPV4_FRAGMENT : UB_PARSE_NOT_UB);
		}
		ip[6] = 0x00;		/* DF clear, offset 0: not a fragment, accepted */
		ip[7] = 0x00;
		refix(ip, n - l2_len(k));
		assert_parse(f, n, UB_PARSE_OK);
	}
}

static void test_parse_not_udp_4792(void **state)
{
	uint8_t f[BUF];
	size_t n;

	(void)state;
	for (int i = 0; i < 2; i++) {
		n = make(NATIVE, 4, f);
		f[24 + 9] = (uint8_t)(i ? 132 : 6);	/* SCTP, TCP */
		refix(f + 24, n - 24);
		assert_parse(f, n, UB_PARSE_NOT_UDP_4792);
	}
	for (int i = 0; i < 3; i++) {
		n = make(NATIVE, 6, f);
		f[24 + 6] = (uint8_t)(i == 0 ? 0 : i == 1 ? 60 : 58);	/* HBH, DestOpt, ICMPv6 */
		assert_parse(f, n, UB_PARSE_NOT_UDP_4792);
	}
	n = make(NATIVE, 6, f);
	f[24 + 40 + 3] = 0xb7;		/* port 4791 */
	assert_parse(f, n, UB_PARSE_NOT_UDP_4792);
}

static void set16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void test_parse_ip_length(void **state)
{
	uint8_t f[BUF];

	(void)state;
	for (int k = UBOE; k <= NATIVE; k++) {
		for (int ver = 4; ver <= 6; ver += 2) {
			size_t n = make(k, ver, f), l2 = l2_len(k), hl = ver == 6 ? 40 : 20;
			uint8_t *ip = f + l2, *udp = ip + hl;
			size_t ip_len = n - l2;
			unsigned udp_len = (unsigned)(ip_len - hl);
			uint8_t *iplen_field = ver == 6 ? ip + 4 : ip + 2;
			unsigned iplen_val = ver == 6 ? (unsigned)(ip_len - 40) : (unsigned)ip_len;

			set16(udp + 4, udp_len + 1);
			refix(ip, ip_len);
			assert_parse(f, n, UB_PARSE_IP_LENGTH);
			set16(udp + 4, udp_len - 1);
			refix(ip, ip_len);
			assert_parse(f, n, UB_PARSE_IP_LENGTH);
			/* IP shorter than the frame, UDP not: UDP disagrees */
			set16(udp + 4, udp_len);
			set16(iplen_field, iplen_val - 1);
			refix(ip, ip_len - 1);
			assert_parse(f, n, UB_PARSE_IP_LENGTH);
			/* Both agree, but too short for TPH and ICRC */
			set16(udp + 4, 8 + 16 + 3);
			set16(iplen_field, (unsigned)(ver == 6 ? 8 + 16 + 3 : 20 + 8 + 16 + 3));
			refix(ip, hl + 8 + 16 + 3);
			assert_parse(f, n, UB_PARSE_IP_LENGTH);
			/* IPv4 Total Length below the header */
			if (ver == 4) {
				set16(iplen_field, 12);
				refix(ip, 0);	/* checksum only: an ICRC would land in the header */
				assert_parse(f, n, UB_PARSE_IP_LENGTH);
			}
			/* Smallest valid: TPH and ICRC, nothing else */
			set16(udp + 4, 8 + 16 + 4);
			set16(iplen_field, (unsigned)(ver == 6 ? 8 + 16 + 4 : 20 + 8 + 16 + 4));
			ip[hl + 8 + 1] = 1;	/* NLP 1: no TAH */
			refix(ip, hl + 8 + 16 + 4);
			assert_parse(f, n, UB_PARSE_OK);
		}
	}
}

static void test_parse_tp_opcode(void **state)
{
	uint8_t f[BUF];
	size_t n = make(UBOE, 4, f);
	uint8_t *tph = f + ETH + 28;

	(void)state;
	for (unsigned op = 0; op < 128; op++) {
		bool ok = op <= 8 && op != 4 && op != 7;
		struct ub_view v;
		enum ub_parse_err e;

		tph[0] = (uint8_t)(0x80 | op);		/* Last set: the opcode is 7 bits */
		e = parse(f, n, &v);
		if (ok)
			assert_int_not_equal(e, UB_PARSE_TP_OPCODE);
		else
			assert_int_equal(e, UB_PARSE_TP_OPCODE);
	}
}

static void test_parse_saetph_size(void **state)
{
	uint8_t f[BUF];
	struct ub_pkt_spec s;
	size_t n;

	(void)state;
	spec_base(&s, 4);
	set_opcode(&s, UB_TP_SACK, 0);
	s.saetph.size_code = 4;		/* room for any size code */
	n = build(&s, UBOE, f);
	for (uint8_t code = 0; code < 8; code++) {
		struct ub_view v;
		enum ub_parse_err e;

		f[ETH + 28 + 16] = code;
		e = parse(f, n, &v);
		/* a smaller bitmap leaves bytes over: taken as payload */
		assert_int_equal(e, code <= 4 ? UB_PARSE_OK : UB_PARSE_SAETPH_SIZE);
		if (code <= 4)
			assert_int_equal(v.payload_len, 128 - (8u << code));
	}
}

static void test_parse_hdr_overrun(void **state)
{
	uint8_t f[BUF];
	struct ub_pkt_spec s;
	size_t n;

	(void)state;
	/* Opcode promises ETPHs the packet does not have. */
	static const uint8_t ops[] = { UB_TP_ACK_CE, UB_TP_SACK, UB_TP_SACK_CE, UB_TP_CNP };

	for (size_t i = 0; i < sizeof(ops); i++) {
		spec_base(&s, 6);
		set_opcode(&s, UB_TP_ACK, 0);
		n = build(&s, NATIVE, f);
		f[24 + 48] = ops[i];
		assert_parse(f, n, UB_PARSE_HDR_OVERRUN);
	}
	/* SACK whose bitmap runs into the ICRC */
	spec_base(&s, 4);
	set_opcode(&s, UB_TP_SACK, 0);
	s.saetph.size_code = 1;
	n = build(&s, UBOE, f);
	f[ETH + 28 + 16] = 2;
	assert_parse(f, n, UB_PARSE_HDR_OVERRUN);
	/* Data packet, NLP says TAH, too short for one */
	spec_base(&s, 4);
	s.has_tah = false;
	s.payload_len = 7;
	n = build(&s, UBOE, f);
	assert_parse(f, n, UB_PARSE_HDR_OVERRUN);
	/* 8 bytes taken as a TAH: 01 08 .. is a Send with immediate (an IMMETAH
	 * follows) and TV_EN (then a TVETAH): 28 bytes at least. */
	s.payload_len = 27;
	n = build(&s, UBOE, f);
	assert_parse(f, n, UB_PARSE_HDR_OVERRUN);
	s.payload_len = 28;
	n = build(&s, UBOE, f);
	assert_parse(f, n, UB_PARSE_OK);
	/* Write TAH without its MAETAH */
	spec_base(&s, 4);
	s.tah.opcode = UB_TA_WRITE;
	s.payload_len = 15;
	n = build(&s, UBOE, f);
	assert_parse(f, n, UB_PARSE_HDR_OVERRUN);
	/* A response with under 8 bytes left has no TAACK: not an error */
	spec_base(&s, 4);
	set_opcode(&s, UB_TP_ACK, 0);
	s.tph.nlp = UB_NLP_TAH;
	s.payload_len = 7;
	n = build(&s, UBOE, f);
	assert_parse(f, n, UB_PARSE_OK);
}

static void test_parse_partition_zero(void **state)
{
	uint8_t f[BUF];
	struct ub_pkt_spec s;
	struct ub_view v;
	size_t n;

	(void)state;
	spec_base(&s, 4);
	s.pid = 0;
	n = build(&s, NATIVE, f);
	assert_int_equal(parse(f, n, &v), UB_PARSE_PARTITION_ZERO);
	/* Reported last: the view is complete. */
	assert_non_null(v.tah);
	assert_true(v.icrc_ok);
	assert_int_equal(v.payload_len, s.payload_len);
}

static void test_parse_padding_and_icrc(void **state)
{
	uint8_t f[BUF];
	struct ub_view v;

	(void)state;
	for (int k = UBOE; k <= NATIVE; k++) {
		size_t n = make(k, 4, f);

		memset(f + n, 0, 20);	/* Ethernet padding / trailer */
		assert_int_equal(parse(f, n + 20, &v), UB_PARSE_OK);
		assert_int_equal(v.payload_len, 32);
		assert_true(v.icrc_ok);
		/* Switch-style edits leave the ICRC valid... */
		f[l2_len(k) + 8]--;
		f[l2_len(k) + 1] ^= 3;
		assert_int_equal(parse(f, n, &v), UB_PARSE_OK);
		assert_true(v.icrc_ok);
		assert_false(v.ip_csum_ok);
		/* ...a payload edit does not, and is still a parsed frame */
		f[n - 5] ^= 1;
		assert_int_equal(parse(f, n, &v), UB_PARSE_OK);
		assert_false(v.icrc_ok);
	}
}

static void test_strerror(void **state)
{
	(void)state;
	for (int e = 0; e < UB_PARSE__MAX; e++) {
		assert_non_null(ub_parse_strerror(e));
		assert_true(strlen(ub_parse_errname(e)) > 0);
		for (int g = 0; g < e; g++) {
			assert_string_not_equal(ub_parse_errname(e), ub_parse_errname(g));
			assert_string_not_equal(ub_parse_strerror(e), ub_parse_strerror(g));
		}
	}
	assert_string_equal(ub_parse_errname(UB_PARSE_OK), "ok");
	assert_string_equal(ub_parse_errname(UB_PARSE__MAX), "unknown");
	assert_string_equal(ub_parse_errname((enum ub_parse_err)-1), "unknown");
	assert_non_null(ub_parse_strerror(UB_PARSE__MAX));
}

/* Random damage to valid frames: the parser must stay inside the buffer and
 * whatever it accepts must be self-consistent. */
static void test_parse_fuzz(void **state)
{
	uint8_t f[BUF];
	struct ub_pkt_spec s;
	unsigned results[UB_PARSE__MAX] = { 0 };

	(void)state;
	for (int i = 0; i < 200000; i++) {
		enum kind k = (enum kind)rnd(3) % 3;
		struct ub_view v;
		enum ub_parse_err e;
		size_t n, len;
		uint8_t *copy;

		spec_base(&s, rnd(1) ? 6 : 4);
		randomize(&s);
		s.payload_len = rnd(63);
		set_opcode(&s, tp_ops[rnd(7) % 7], ta_ops[rnd(7)]);
		n = build(&s, k, f);
		for (int m = (int)rnd(3); m >= 0; m--)
			f[rnd(0xffff) % n] = (uint8_t)rnd(255);
		len = rnd(7) ? n : rnd(0xffff) % (n + 1);
		copy = malloc(len ? len : 1);
		memcpy(copy, f, len);
		e = parse(copy, len, &v);
		assert_true((unsigned)e < UB_PARSE__MAX);
		results[e]++;
		if (e == UB_PARSE_OK) {
			assert_true(v.ip >= copy && v.ip + v.ip_len <= copy + len);
			assert_true(v.payload >= (const uint8_t *)(v.tph + 1));
			assert_true(v.payload + v.payload_len + 4 == v.ip + v.ip_len);
			assert_int_equal(v.icrc_ok, ub_icrc_ok(v.ip, v.ip_len));
		}
		free(copy);
	}
	for (int e = 0; e < UB_PARSE__MAX; e++)
		print_message("# fuzz %-15s %u\n", ub_parse_errname(e), results[e]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tph_layout),
		cmocka_unit_test(test_tph_roundtrip),
		cmocka_unit_test(test_cetph_codec),
		cmocka_unit_test(test_saetph_codec),
		cmocka_unit_test(test_cnpetph_codec),
		cmocka_unit_test(test_tah_codec),
		cmocka_unit_test(test_maetah_codec),
		cmocka_unit_test(test_immetah_tvetah_codec),
		cmocka_unit_test(test_opcode_names),
		cmocka_unit_test(test_spec_defaults),
		cmocka_unit_test(test_build_wire_fields),
		cmocka_unit_test(test_build_limits),
		cmocka_unit_test(test_roundtrip_all_kinds),
		cmocka_unit_test(test_roundtrip_no_tah),
		cmocka_unit_test(test_parse_not_ub),
		cmocka_unit_test(test_parse_truncated),
		cmocka_unit_test(test_parse_lph_config),
		cmocka_unit_test(test_parse_ip_version),
		cmocka_unit_test(test_parse_ipv4_options),
		cmocka_unit_test(test_parse_ipv4_fragment),
		cmocka_unit_test(test_parse_not_udp_4792),
		cmocka_unit_test(test_parse_ip_length),
		cmocka_unit_test(test_parse_tp_opcode),
		cmocka_unit_test(test_parse_saetph_size),
		cmocka_unit_test(test_parse_hdr_overrun),
		cmocka_unit_test(test_parse_partition_zero),
		cmocka_unit_test(test_parse_padding_and_icrc),
		cmocka_unit_test(test_strerror),
		cmocka_unit_test(test_parse_fuzz),
	};

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	return cmocka_run_group_tests_name("ubpkt", tests, NULL, NULL);
}
