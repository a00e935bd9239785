// SPDX-License-Identifier: BSD-2-Clause
/*
 * uboe_wrap (user/lib/uboe_wrap.c), the endpoint's in-place UBoE framing,
 * against the packet library's builder (ub_build_uboe, itself checked against
 * scapy goldens): same spec in, the same bytes out, for IPv4 and IPv6 and
 * every kind of TP packet the core sends; and its native UB framing (docs/WIRE.md
 * §5) against ub_build_native the same way.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/frame.h"
#include "lib/uboe_wrap.h"
#include "ub_wire.h"

static void spec_for(struct ub_pkt_spec *s, int ver, int kind, size_t payload_len)
{
	static uint8_t payload[9000];

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 31 + 7);
	ub_pkt_spec_init(s);
	s->ip_ver = (uint8_t)ver;
	memcpy(s->src_mac, "\x02\x00\x00\x00\x41\x01", 6);
	memcpy(s->dst_mac, "\x02\x00\x00\x00\x41\x02", 6);
	if (ver == 4) {
		memcpy(s->src_ip, "\x0a\x29\x00\x01", 4);
		memcpy(s->dst_ip, "\x0a\x2a\x00\x01", 4);
	} else {
		memcpy(s->src_ip, "\xfd\x00\x00\x41\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
		memcpy(s->dst_ip, "\xfd\x00\x00\x42\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
		s->flow_label = 0xabcde;
	}
	s->sport = 0xd00d;
	s->ecn = ECN_ECT0;
	s->dscp = 10;
	s->tph.psn = 0xfffffe;
	s->tph.src_tpn = 0x123;
	s->tph.dst_tpn = 0x456;
	switch (kind) {
	case 0:		/* data + TAH */
		s->payload = payload;
		s->payload_len = payload_len;
		break;
	case 1:		/* TPACK */
		s->tph.opcode = UB_TP_ACK;
		s->tph.nlp = 1;
		s->has_tah = false;
		break;
	default:	/* TPSACK with a bitmap */
		s->tph.opcode = UB_TP_SACK;
		s->tph.nlp = 1;
		s->has_tah = false;
		s->has_saetph = true;
		s->saetph.size_code = 1;
		s->saetph.max_rcv_psn = 0x10;
		s->saetph.bitmap[0] = 0xa5;
		break;
	}
}

/* The flow uboe_wrap needs for the frame s describes. */
static void flow_for(const struct ub_pkt_spec *s, bool native, struct uboe_flow *f)
{
	memset(f, 0, sizeof(*f));
	f->ip_ver = s->ip_ver;
	memcpy(f->src_mac, s->src_mac, 6);
	memcpy(f->dst_mac, s->dst_mac, 6);
	memcpy(f->src_ip, s->src_ip, 16);
	memcpy(f->dst_ip, s->dst_ip, 16);
	f->sport = s->sport;
	f->ecn = s->ecn;
	f->dscp = s->dscp;
	f->flow_label = s->flow_label;
	if (native) {
		f->ub_ethertype = s->ub_ethertype;
		f->vl = s->vl;
		f->rt = s->rt;
		f->cci = s->cci;
		f->perm = s->perm;
		f->pid = s->pid;
	}
}

static void same_bytes_as_builder(void **state)
{
	static uint8_t want[10000], got[10000];

	(void)state;
	for (int native = 0; native < 2; native++)
	for (int ver = 4; ver <= 6; ver += 2) {
		for (int kind = 0; kind < 3; kind++) {
			for (size_t pl = 0; pl <= 8960; pl += kind ? 9000 : 97) {
				struct ub_pkt_spec s;
				struct uboe_flow f;
				size_t n, hdr, m;
				struct ub_view v;

				spec_for(&s, ver, kind, pl);
				if (native) {
					/* Not the defaults: each field must land where the builder puts it. */
					s.ub_ethertype = 0x88b6;
					s.vl = 9;
					s.rt = UB_RT_PACKET_ALL;
					s.cci = ub_cci_make_fecn(UB_FECN_MARKABLE, 1);
					s.perm = UB_PERM_LOW;
					s.pid = 0xabcdef;
				}
				n = native ? ub_build_native(&s, want, sizeof(want)) : ub_build_uboe(&s, want, sizeof(want));
				flow_for(&s, native, &f);
				hdr = uboe_wrap_flow_hdr_len(&f);
				assert_int_equal(hdr, uboe_wrap_hdr_len((uint8_t)ver) + (native ? 10 : 0));
				assert_true(hdr <= UBOE_WRAP_HDR_MAX);
				assert_true(n > hdr + UBOE_ICRC_LEN);
				/* The TP packet as the core would have written it. */
				memset(got, 0xee, sizeof(got));
				memcpy(got + hdr, want + hdr, n - hdr - UBOE_ICRC_LEN);
				m = uboe_wrap(got, n - hdr - UBOE_ICRC_LEN, &f);
				assert_int_equal(m, n);
				assert_memory_equal(got, want, n);
				assert_int_equal(ub_parse_frame(got, m, s.ub_ethertype, &v), UB_PARSE_OK);
				assert_int_equal(v.kind, native ? UB_KIND_NATIVE : UB_KIND_UBOE);
				assert_true(v.icrc_ok);
				assert_int_equal(v.ecn, ECN_ECT0);
			}
		}
	}
}

static void refuses_oversize_and_bad_version(void **state)
{
	static uint8_t buf[70000];
	struct uboe_flow f = { .ip_ver = 4 };

	(void)state;
	assert_int_equal(uboe_wrap(buf, 65535 - 20 - 8 - 4, &f), 65535 + 14);
	assert_int_equal(uboe_wrap(buf, 65535 - 20 - 8 - 3, &f), 0);
	f.ip_ver = 5;
	assert_int_equal(uboe_wrap(buf, 100, &f), 0);
}

static void entropy_port_range_and_spread(void **state)
{
	int seen[16] = { 0 };

	(void)state;
	for (uint32_t a = 0; a < 256; a++) {
		uint16_t p = uboe_entropy_port(a, a + 1);

		assert_true(p >= 0xc000);
		seen[(p >> 10) & 15]++;
	}
	for (int i = 0; i < 16; i++)
		assert_true(seen[i] > 0);	/* channels spread over the range */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_bytes_as_builder),
		cmocka_unit_test(refuses_oversize_and_bad_version),
		cmocka_unit_test(entropy_port_range_and_spread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
