// SPDX-License-Identifier: BSD-2-Clause
/*
 * The frame parser (user/lib/frame_parse.c) against a decoder that is not it:
 * tests/bpf/ubref.c, written from docs/WIRE.md for the UB2E fuzzer. Frames built
 * by the library (random fields, every TP opcode, tagged or not), damaged by
 * tests/bpf/ubmutate.c, or random bytes; on each the two must agree on what
 * the frame is (not UB, broken UB and the first rule it breaks, valid UB)
 * and, when valid, on every field both decode, the IPv4 checksum and the ICRC
 * verdicts included.
 *
 * UBPKT_FUZZ_COUNT (default 1,000,000) frames from UBPKT_FUZZ_SEED (default: a
 * new one each run, printed, so that a failure can be replayed).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/frame.h"
#include "../bpf/ubmutate.h"
#include "../bpf/ubref.h"

#define CAP 2048

static uint8_t payload[1500];

static size_t build(struct fz_rng *g, uint8_t *f, bool *native)
{
	static const uint8_t ops[] = { UB_TP_UTP_DATA, UB_TP_RTP_DATA, UB_TP_ACK, UB_TP_ACK_CE, UB_TP_SACK,
				       UB_TP_SACK_CE, UB_TP_CNP };
	static const uint8_t ta_ops[] = { UB_TA_SEND, UB_TA_WRITE, UB_TA_READ, UB_TA_MESSAGE, UB_TA_TAACK };
	struct ub_pkt_spec s;
	uint8_t op = ops[fz_rnd(g, 7)];

	ub_pkt_spec_init(&s);
	fz_bytes(g, s.dst_mac, 6);
	fz_bytes(g, s.src_mac, 6);
	s.ip_ver = fz_chance(g, 50) ? 6 : 4;
	fz_bytes(g, s.src_ip, 16);
	fz_bytes(g, s.dst_ip, 16);
	s.dscp = (uint8_t)fz_rnd(g, 64);
	s.ecn = (uint8_t)fz_rnd(g, 4);
	s.ttl = (uint8_t)fz_rnd(g, 256);
	s.ip_id = (uint16_t)fz_rnd(g, 0x10000);
	s.flow_label = fz_rnd(g, 1u << 20);
	s.sport = (uint16_t)fz_rnd(g, 0x10000);
	s.vl = (uint8_t)fz_rnd(g, 16);
	s.rt = (uint8_t)fz_rnd(g, 4);
	s.cci = (uint16_t)fz_rnd(g, 0x10000);
	s.perm = (uint8_t)fz_rnd(g, 2);
	s.pid = fz_chance(g, 5) ? 0 : fz_rnd(g, 1u << 24);
	s.vlan = fz_chance(g, 50) ? (int)fz_rnd(g, 4096) : UB_VLAN_NONE;
	s.tph.opcode = op;
	s.tph.psn = fz_rnd(g, 1u << 24);
	s.has_cetph = ub_tp_has_cetph(op);
	s.has_saetph = ub_tp_has_saetph(op);
	s.saetph.size_code = (uint8_t)fz_rnd(g, 5);
	s.has_cnpetph = ub_tp_has_cnpetph(op);
	s.has_tah = op <= UB_TP_RTP_DATA || fz_chance(g, 20);
	s.tph.nlp = s.has_tah ? UB_NLP_TAH : (uint8_t)(1 + fz_rnd(g, 15));
	s.tah.opcode = ta_ops[fz_rnd(g, 5)];
	s.has_maetah = s.tah.opcode == UB_TA_WRITE || s.tah.opcode == UB_TA_READ;
	s.payload = payload;
	s.payload_len = fz_chance(g, 10) ? fz_rnd(g, sizeof(payload)) : fz_rnd(g, 100);
	*native = fz_chance(g, 50);
	return *native ? ub_build_native(&s, f, CAP) : ub_build_uboe(&s, f, CAP);
}

/* The parser's error for the first rule the reference finds broken. */
static const enum ub_parse_err defect_err[] = {
	[REF_NONE] = UB_PARSE_OK,
	[REF_TRUNCATED] = UB_PARSE_TRUNCATED,
	[REF_LPH_CONFIG] = UB_PARSE_LPH_CONFIG,
	[REF_IP_VERSION] = UB_PARSE_IP_VERSION,
	[REF_NOT_UB_PAYLOAD] = UB_PARSE_NOT_UDP_4792,
	[REF_FRAGMENT] = UB_PARSE_IPV4_FRAGMENT,
	[REF_OPTIONS] = UB_PARSE_IPV4_OPTIONS,
	[REF_LENGTH] = UB_PARSE_IP_LENGTH,
	[REF_TP_OPCODE] = UB_PARSE_TP_OPCODE,
	[REF_PARTITION_ZERO] = UB_PARSE_PARTITION_ZERO,
};

static void hex(char *out, size_t cap, const uint8_t *p, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 3 < cap; i++)
		o += (size_t)snprintf(out + o, cap - o, "%02x", p[i]);
}

#define AGREE(cond, what) do {								\
	if (!(cond)) {									\
		char _h[2 * CAP + 1] = "";						\
		hex(_h, sizeof(_h), f, len);						\
		fail_msg("seed %llu frame %ld: %s (parser %s, reference %s)\n  frame %s",	\
			 (unsigned long long)seed, i, what, ub_parse_errname(e), r.why, _h);	\
	}										\
} while (0)

static void test_parser_agrees_with_reference(void **state)
{
	const char *cs = getenv("UBPKT_FUZZ_COUNT"), *ss = getenv("UBPKT_FUZZ_SEED");
	long count = cs ? atol(cs) : 1000000;
	unsigned long long seed = ss ? strtoull(ss, NULL, 0) : (unsigned long long)time(NULL) ^ (unsigned long long)getpid();
	unsigned long kinds[3] = { 0 };
	uint8_t f[CAP];

	(void)state;
	print_message("# seed %llu, %ld frames (UBPKT_FUZZ_SEED / UBPKT_FUZZ_COUNT)\n", seed, count);
	for (long i = 0; i < count; i++) {
		struct fz_rng g = { seed ^ (0x2545f4914f6cdd1dull * (uint64_t)(i + 1)) };
		bool native = false;
		struct ref_frame r;
		struct ub_view v;
		enum ub_parse_err e;
		size_t len;

		fz_splitmix(&g.s);
		if (fz_chance(&g, 5)) {
			len = fz_rnd(&g, 120);
			fz_bytes(&g, f, len);
			if (len >= 14)
				memcpy(f + 12, (const uint8_t *[]){ (const uint8_t *)"\x88\xb5", (const uint8_t *)"\x08\x00",
					(const uint8_t *)"\x86\xdd", (const uint8_t *)"\x81\x00" }[fz_rnd(&g, 4)], 2);
			native = len >= 14 && f[12] == 0x88;
		} else {
			len = build(&g, f, &native);
			assert_true(len > 0);
			if (fz_chance(&g, 80))
				len = fz_mutate(&g, f, len, CAP, native);
		}

		e = ub_parse_frame(f, len, 0, &v);
		if (len >= 14 && ref_get16(f + 12) == 0x88b5)
			ref_decode_native(f, len, 0x88b5, &r);
		else
			ref_decode_uboe(f, len, &r);
		kinds[r.kind]++;

		switch (r.kind) {
		case REF_FOREIGN:
			AGREE(e == UB_PARSE_NOT_UB, "not UB for the reference");
			continue;
		case REF_DROP:
			AGREE(e == defect_err[r.defect] ||
			      /* the parser reads the headers after the TPH before it looks at the PID */
			      (r.defect == REF_PARTITION_ZERO && (e == UB_PARSE_SAETPH_SIZE || e == UB_PARSE_HDR_OVERRUN)),
			      "broken UB for the reference, for another reason");
			continue;
		case REF_VALID:
			/* The parser also reads what follows the TPH; the reference stops there. */
			AGREE(e == UB_PARSE_OK || e == UB_PARSE_SAETPH_SIZE || e == UB_PARSE_HDR_OVERRUN,
			      "valid UB for the reference");
			break;
		}
		AGREE(v.ip == f + r.l2_len && v.udp == f + r.udp_off, "IP / UDP offsets");
		AGREE(v.ip_ver == (r.v6 ? 6 : 4) && v.ip_len == r.ip_len, "IP version / length");
		AGREE(v.ttl == r.ttl && v.ecn == r.ecn && v.dscp == r.dscp, "TTL / ECN / DSCP");
		AGREE(v.ip_csum_ok == r.csum_ok, "IPv4 header checksum verdict");
		AGREE(v.icrc_ok == r.icrc_ok, "ICRC verdict");
		AGREE(v.tp.opcode == r.tp_opcode, "TP opcode");
		if (r.lph_config) {
			AGREE(v.kind == UB_KIND_NATIVE && v.lph_config == r.lph_config && v.vl == r.vl && v.rt == r.rt,
			      "LPH Config / VL / RT");
			AGREE(v.cci == r.cci && v.perm == r.perm && v.pid == r.pid, "NTH CCI / Permission / Partition");
		} else {
			AGREE(v.kind == UB_KIND_UBOE, "kind");
			AGREE(v.vlan == (r.tagged ? (int)(r.tci & 0xfff) : UB_VLAN_NONE), "VLAN");
		}
		if (e == UB_PARSE_OK)
			AGREE(v.payload + v.payload_len + 4 == v.ip + v.ip_len, "payload ends at the ICRC");
	}
	print_message("# reference: %lu not UB, %lu broken UB, %lu valid\n", kinds[REF_FOREIGN], kinds[REF_DROP],
		      kinds[REF_VALID]);
	/* A fuzzer that never reaches a class tests nothing there. */
	assert_true(count < 1000 || (kinds[REF_FOREIGN] && kinds[REF_DROP] && kinds[REF_VALID] * 10 >= (unsigned long)count));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parser_agrees_with_reference),
	};

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13 + 5);
	return cmocka_run_group_tests_name("ubpkt_ref", tests, NULL, NULL);
}
