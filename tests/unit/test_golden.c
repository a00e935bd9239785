// SPDX-License-Identifier: BSD-2-Clause
/*
 * Golden vectors (tests/golden/vectors.txt, made by scapy from
 * tests/scapy/ublayers.py): rebuild each frame from its parameters with the C
 * builders and compare byte for byte; check the ICRC against Python's zlib
 * value; parse the scapy frame and compare what the parser reads.
 *
 * The file is $UBXDP_GOLDEN, else tests/golden/vectors.txt from the current
 * directory, else from the repository this binary was built in.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/frame.h"

#define MAX_FRAME 4096

struct vector {
	char *name;
	char *params;		/* "key=value ..." without name */
};

static uint8_t payload_buf[MAX_FRAME];

struct parsed {
	struct ub_pkt_spec s;
	const char *kind;
	uint32_t icrc;
	uint8_t frame[MAX_FRAME];
	size_t frame_len;
};

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static unsigned long long num(const char *key, const char *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || *end || !*v)
		fail_msg("bad number %s=%s", key, v);
	return x;
}

static void mac(const char *key, const char *v, uint8_t *out)
{
	unsigned b[6];

	if (sscanf(v, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		fail_msg("bad MAC %s=%s", key, v);
	for (int i = 0; i < 6; i++)
		out[i] = (uint8_t)b[i];
}

static void addr(const char *key, const char *v, uint8_t *out)
{
	if (inet_pton(strchr(v, ':') ? AF_INET6 : AF_INET, v, out) != 1)
		fail_msg("bad address %s=%s", key, v);
}

/* Turn "key=value ..." into a spec; every key must be known. */
static void parse_params(const char *params, struct parsed *p)
{
	struct ub_pkt_spec *s = &p->s;
	char *copy = strdup(params), *save = NULL, *tok;
	unsigned pseed = 0;
	bool have_hex = false, have_icrc = false;

	memset(s, 0, sizeof(*s));
	s->vlan = UB_VLAN_NONE;
	p->kind = NULL;
	for (tok = strtok_r(copy, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		char *eq = strchr(tok, '='), *k = tok, *v;

		if (!eq)
			fail_msg("token without '=': %s", tok);
		*eq = 0;
		v = eq + 1;
#define IS(name) (strcmp(k, name) == 0)
#define N(name, field) else if (IS(name)) s->field = num(k, v)
		if (IS("kind"))
			p->kind = strcmp(v, "native") == 0 ? "native" : strcmp(v, "uboe") == 0 ? "uboe" : NULL;
		else if (IS("dmac")) mac(k, v, s->dst_mac);
		else if (IS("smac")) mac(k, v, s->src_mac);
		else if (IS("src")) addr(k, v, s->src_ip);
		else if (IS("dst")) addr(k, v, s->dst_ip);
		N("vlan", vlan); N("pcp", vlan_pcp); N("dei", vlan_dei);
		N("ethertype", ub_ethertype); N("vl", vl); N("rt", rt); N("cci", cci);
		N("perm", perm); N("pid", pid);
		N("ipver", ip_ver); N("dscp", dscp); N("ecn", ecn); N("ttl", ttl);
		N("ipid", ip_id); N("flow", flow_label); N("sport", sport);
		N("op", tph.opcode); N("last", tph.last); N("tpver", tph.ver); N("pad", tph.pad);
		N("nlp", tph.nlp); N("stpn", tph.src_tpn); N("dtpn", tph.dst_tpn);
		N("ackreq", tph.ackreq); N("err", tph.err); N("psn", tph.psn);
		N("rspst", tph.rspst); N("rspinfo", tph.rspinfo); N("tpmsn", tph.tpmsn);
		N("cetph", has_cetph); N("ce_ack", cetph.ack_seq); N("ce_loc", cetph.loc);
		N("ce_i", cetph.i); N("ce_c", cetph.c); N("ce_hint", cetph.hint);
		else if (IS("saetph")) {
			s->has_saetph = true;
			s->saetph.size_code = (uint8_t)num(k, v);
		}
		N("sa_max", saetph.max_rcv_psn);
		else if (IS("sa_bits")) {
			for (char *b = v; strcmp(v, "-") && *b; ) {
				unsigned long bit = strtoul(b, &b, 10);

				if (bit >= 1024)
					fail_msg("sa_bits: %lu", bit);
				ub_sack_set(s->saetph.bitmap, (uint32_t)bit);
				if (*b == ',')
					b++;
			}
		}
		N("cnpetph", has_cnpetph); N("cnp_ecn", cnpetph.ecn); N("cnp_loc", cnpetph.loc);
		else if (IS("tah")) {
			s->has_tah = true;
			s->tah.opcode = (uint8_t)num(k, v);
		}
		N("ta_ver", tah.taver); N("ta_ee", tah.ee); N("ta_tv", tah.tv_en);
		N("ta_poison", tah.poison); N("ta_ud", tah.ud_flg); N("ta_tassn", tah.ini_tassn);
		N("ta_notaack", tah.no_taack); N("ta_order", tah.order); N("ta_mt", tah.mt_en);
		N("ta_fce", tah.fce); N("ta_retry", tah.retry); N("ta_alloc", tah.alloc);
		N("ta_rspst", tah.rspst); N("ta_rspinfo", tah.rspinfo); N("ta_excl", tah.excl);
		N("ta_rctype", tah.ini_rc_type); N("ta_rcid", tah.ini_rcid);
		N("maetah", has_maetah); N("va", maetah.va); N("token", maetah.token_id);
		N("mlen", maetah.length);
		N("immetah", has_immetah); N("imm", immetah.imm); N("imm_tv", immetah.token_value);
		N("imm_len", immetah.msg_len);
		N("tvetah", has_tvetah); N("tv", tvetah);
		N("plen", payload_len);
		else if (IS("pseed")) pseed = (unsigned)num(k, v);
		else if (IS("icrc")) {
			p->icrc = (uint32_t)strtoul(v, NULL, 16);
			have_icrc = true;
		} else if (IS("hex")) {
			size_t n = strlen(v) / 2;

			if (strlen(v) % 2 || n > MAX_FRAME)
				fail_msg("bad hex length %zu", strlen(v));
			for (size_t i = 0; i < n; i++) {
				int hi = hexval(v[2 * i]), lo = hexval(v[2 * i + 1]);

				if (hi < 0 || lo < 0)
					fail_msg("bad hex digit at %zu", 2 * i);
				p->frame[i] = (uint8_t)(hi << 4 | lo);
			}
			p->frame_len = n;
			have_hex = true;
		} else {
			fail_msg("unknown key %s (gen_vectors.py and test_golden.c disagree)", k);
		}
#undef N
#undef IS
	}
	free(copy);
	if (!p->kind || !have_hex || !have_icrc)
		fail_msg("vector lacks kind, icrc or hex");
	if (s->payload_len > sizeof(payload_buf))
		fail_msg("plen %zu too large", s->payload_len);
	for (size_t i = 0; i < s->payload_len; i++)
		payload_buf[i] = (uint8_t)(pseed + i);
	s->payload = payload_buf;
}

/* Name of the header the byte at `off` of the golden frame belongs to. */
static const char *region(const struct ub_view *v, size_t off)
{
	const struct { const void *p; const char *name; } hdrs[] = {
		{ v->frame, "eth" }, { v->frame + 12, "ethertype/vlan" }, { v->lph, "lph" },
		{ v->nth, "nth" }, { v->ip, "ip" }, { v->udp, "udp" }, { v->tph, "tph" },
		{ v->cetph, "cetph" }, { v->saetph, "saetph" }, { v->cnpetph, "cnpetph" },
		{ v->tah, "tah" }, { v->maetah, "maetah" }, { v->immetah, "immetah" },
		{ v->tvetah, "tvetah" }, { v->payload, "payload" },
		{ v->ip && v->ip_len >= 4 ? v->ip + v->ip_len - 4 : NULL, "icrc" },
	};
	const char *name = "?";
	long best = -1;

	for (size_t i = 0; i < sizeof(hdrs) / sizeof(hdrs[0]); i++) {
		long o = ub_view_off(v, hdrs[i].p);

		if (o >= 0 && (size_t)o <= off && o >= best) {
			best = o;
			name = hdrs[i].name;
		}
	}
	return name;
}

static void byte_diff(const char *name, const uint8_t *want, size_t wn, const uint8_t *got, size_t gn)
{
	struct ub_view v;
	int shown = 0;

	ub_parse_frame(want, wn, 0, &v);
	if (v.kind == UB_KIND_NONE)
		ub_parse_frame(want, wn, (uint16_t)(want[12] << 8 | want[13]), &v);
	print_message("%s: C frame differs from scapy (lengths %zu, %zu)\n", name, gn, wn);
	print_message("  offset  header          scapy  C\n");
	for (size_t i = 0; i < (wn > gn ? wn : gn) && shown < 32; i++) {
		int w = i < wn ? want[i] : -1, g = i < gn ? got[i] : -1;

		if (w == g)
			continue;
		print_message("  %6zu  %-14s  %5s  %s\n", i, region(&v, i),
			      w < 0 ? "--" : (char[4]){ "0123456789abcdef"[w >> 4], "0123456789abcdef"[w & 15], 0 },
			      g < 0 ? "--" : (char[4]){ "0123456789abcdef"[g >> 4], "0123456789abcdef"[g & 15], 0 });
		shown++;
	}
}

static void check_view(const struct parsed *p, const struct ub_view *v, bool native)
{
	const struct ub_pkt_spec *s = &p->s;

#define CK(a, b) do {								\
	if ((unsigned long long)(a) != (unsigned long long)(b))			\
		fail_msg("parsed %s = %llu, vector says %llu", #a,		\
			 (unsigned long long)(a), (unsigned long long)(b));	\
} while (0)
	CK(v->kind, native ? UB_KIND_NATIVE : UB_KIND_UBOE);
	CK(v->vlan, native ? UB_VLAN_NONE : s->vlan);
	if (native) {
		CK(v->vl, s->vl); CK(v->rt, s->rt); CK(v->cci, s->cci);
		CK(v->perm, s->perm); CK(v->pid, s->pid);
	} else if (s->vlan != UB_VLAN_NONE) {
		CK(v->vlan_pcp, s->vlan_pcp);
	}
	CK(v->ip_ver, s->ip_ver); CK(v->dscp, s->dscp); CK(v->ecn, s->ecn); CK(v->ttl, s->ttl);
	CK(v->ip_csum_ok, 1);
	if (s->ip_ver == 4)
		CK(v->ip_id, s->ip_id);
	else
		CK(v->flow_label, s->flow_label);
	assert_memory_equal(v->src_ip, s->src_ip, s->ip_ver == 6 ? 16 : 4);
	assert_memory_equal(v->dst_ip, s->dst_ip, s->ip_ver == 6 ? 16 : 4);
	CK(v->sport, s->sport);
	CK(v->tp.opcode, s->tph.opcode); CK(v->tp.last, s->tph.last); CK(v->tp.ver, s->tph.ver);
	CK(v->tp.pad, s->tph.pad); CK(v->tp.nlp, s->tph.nlp); CK(v->tp.src_tpn, s->tph.src_tpn);
	CK(v->tp.dst_tpn, s->tph.dst_tpn); CK(v->tp.ackreq, s->tph.ackreq); CK(v->tp.err, s->tph.err);
	CK(v->tp.psn, s->tph.psn); CK(v->tp.rspst, s->tph.rspst); CK(v->tp.rspinfo, s->tph.rspinfo);
	CK(v->tp.tpmsn, s->tph.tpmsn);
	CK(v->cetph != NULL, s->has_cetph);
	if (s->has_cetph) {
		CK(v->ce.ack_seq, s->cetph.ack_seq); CK(v->ce.loc, s->cetph.loc);
		CK(v->ce.i, s->cetph.i); CK(v->ce.c, s->cetph.c); CK(v->ce.hint, s->cetph.hint);
	}
	CK(v->saetph != NULL, s->has_saetph);
	if (s->has_saetph) {
		CK(v->sa.size_code, s->saetph.size_code); CK(v->sa.max_rcv_psn, s->saetph.max_rcv_psn);
		assert_memory_equal(v->sa.bitmap, s->saetph.bitmap, ub_sack_bitmap_len(s->saetph.size_code));
	}
	CK(v->cnpetph != NULL, s->has_cnpetph);
	if (s->has_cnpetph) {
		CK(v->cnp.ecn, s->cnpetph.ecn); CK(v->cnp.loc, s->cnpetph.loc);
	}
	CK(v->tah != NULL, s->has_tah);
	if (s->has_tah) {
		CK(v->ta.opcode, s->tah.opcode); CK(v->ta.ini_tassn, s->tah.ini_tassn);
		CK(v->ta.ee, s->tah.ee); CK(v->ta.ini_rcid, s->tah.ini_rcid);
		CK(v->ta.order, s->tah.order); CK(v->ta.rspst, s->tah.rspst);
		CK(v->ta.rspinfo, s->tah.rspinfo);
	}
	CK(v->maetah != NULL, s->has_maetah);
	if (s->has_maetah) {
		CK(v->mae.va, s->maetah.va); CK(v->mae.token_id, s->maetah.token_id);
		CK(v->mae.length, s->maetah.length);
	}
	CK(v->immetah != NULL, s->has_immetah);
	if (s->has_immetah) {
		CK(v->imm.imm, s->immetah.imm); CK(v->imm.token_value, s->immetah.token_value);
		CK(v->imm.msg_len, s->immetah.msg_len);
	}
	CK(v->tvetah != NULL, s->has_tvetah);
	if (s->has_tvetah)
		CK(v->token_value, s->tvetah);
	CK(v->payload_len, s->payload_len);
	if (s->payload_len)
		assert_memory_equal(v->payload, s->payload, s->payload_len);
	CK(v->icrc, p->icrc);
	CK(v->icrc_ok, 1);
#undef CK
}

static void test_vector(void **state)
{
	const struct vector *vec = *state;
	static struct parsed p;
	static uint8_t got[MAX_FRAME];
	bool native;
	size_t n, l2;
	const uint8_t *ip;
	struct ub_view v;
	enum ub_parse_err e;

	parse_params(vec->params, &p);
	native = strcmp(p.kind, "native") == 0;
	n = native ? ub_build_native(&p.s, got, sizeof(got)) : ub_build_uboe(&p.s, got, sizeof(got));
	if (n != p.frame_len || memcmp(got, p.frame, n)) {
		byte_diff(vec->name, p.frame, p.frame_len, got, n);
		fail_msg("%s: built frame differs from the golden one", vec->name);
	}

	/* ICRC: C (both backends) against Python's zlib.crc32, stored LSB first. */
	l2 = native ? 14 + UB_NATIVE_HDR_LEN : p.s.vlan != UB_VLAN_NONE ? 18 : 14;
	ip = p.frame + l2;
	assert_int_equal(ub_icrc(ip, p.frame_len - l2 - 4), p.icrc);
	assert_int_equal(ub_icrc_with(ub_crc32_zlib, ip, p.frame_len - l2 - 4), p.icrc);
	assert_int_equal(ub_icrc_get(ip, p.frame_len - l2), p.icrc);

	/* The parser reads the scapy frame back to the vector's parameters. */
	e = ub_parse_frame(p.frame, p.frame_len, native ? p.s.ub_ethertype : 0, &v);
	if (e != UB_PARSE_OK)
		fail_msg("%s: parser says %s", vec->name, ub_parse_strerror(e));
	check_view(&p, &v, native);
}

static void test_no_vectors(void **state)
{
	fail_msg("%s", (const char *)*state);
}

static FILE *open_vectors(char *path, size_t cap)
{
	const char *env = getenv("UBXDP_GOLDEN");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		snprintf(path, cap, "%s", env);
		return fopen(path, "r");
	}
	snprintf(path, cap, "tests/golden/vectors.txt");
	FILE *f = fopen(path, "r");

	if (f)
		return f;
	/* build/bin/test_golden -> ../../tests/golden/vectors.txt */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	snprintf(path, cap, "%s/../../tests/golden/vectors.txt", dirname(exe));
	return fopen(path, "r");
}

int main(void)
{
	static char path[PATH_MAX + 64], err[PATH_MAX + 128];
	struct CMUnitTest *tests = NULL;
	struct vector *vecs = NULL;
	size_t count = 0, cap = 0, len = 0;
	char *line = NULL;
	FILE *f = open_vectors(path, sizeof(path));
	int rc;

	if (!f) {
		snprintf(err, sizeof(err), "cannot open golden vectors %s: %s", path, strerror(errno));
		const struct CMUnitTest none[] = { cmocka_unit_test_prestate(test_no_vectors, err) };

		return cmocka_run_group_tests_name("golden", none, NULL, NULL);
	}
	while (getline(&line, &len, f) > 0) {
		char *sp;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (count == cap) {
			cap = cap ? cap * 2 : 256;
			vecs = realloc(vecs, cap * sizeof(*vecs));
		}
		sp = strchr(line, ' ');
		if (!sp)
			continue;
		*sp = 0;
		vecs[count].name = strdup(line);
		vecs[count].params = strdup(sp + 1);
		count++;
	}
	free(line);
	fclose(f);
	if (!count) {
		snprintf(err, sizeof(err), "no vectors in %s", path);
		const struct CMUnitTest none[] = { cmocka_unit_test_prestate(test_no_vectors, err) };

		return cmocka_run_group_tests_name("golden", none, NULL, NULL);
	}
	tests = calloc(count, sizeof(*tests));
	for (size_t i = 0; i < count; i++) {
		tests[i].name = vecs[i].name;
		tests[i].test_func = test_vector;
		tests[i].initial_state = &vecs[i];
	}
	rc = _cmocka_run_group_tests("golden", tests, count, NULL, NULL);
	for (size_t i = 0; i < count; i++) {
		free(vecs[i].name);
		free(vecs[i].params);
	}
	free(vecs);
	free(tests);
	return rc;
}
