// SPDX-License-Identifier: BSD-2-Clause
/*
 * WPS ingress configuration (user/wps/wps_cfg.c) and the pure helpers the
 * BPF program shares (headers/wps_ingress.h): prefixes, quanta, rules and
 * their overlap, live slots, quantum and in-flight decisions, flow label
 * (the scheduler: test_wps_sched.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>

#include "wps/wps_cfg.h"
#include "wps/wps_live.h"

static struct wps_in_rule rule(const char *line)
{
	char buf[256], *argv[32], *save, *tok;
	struct wps_in_rule r;
	char err[256] = "";
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	if (wps_rule_parse(argc, argv, &r, err, sizeof(err)))
		fail_msg("rule '%s': %s", line, err);
	return r;
}

static int rule_err(const char *line, char *err, size_t len)
{
	char buf[256], *argv[32], *save, *tok;
	struct wps_in_rule r;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	return wps_rule_parse(argc, argv, &r, err, len);
}

static void quanta(void **state)
{
	char err[256];
	__u8 k;
	__u64 q;

	(void)state;
	assert_int_equal(wps_parse_quantum("16", &k, &q, err, sizeof(err)), 0);
	assert_int_equal(k, WPS_Q_PACKETS);
	assert_int_equal(q, 16);
	assert_int_equal(wps_parse_quantum("64000b", &k, &q, err, sizeof(err)), 0);
	assert_int_equal(k, WPS_Q_BYTES);
	assert_int_equal(q, 64000);
	assert_int_equal(wps_parse_quantum("500us", &k, &q, err, sizeof(err)), 0);
	assert_int_equal(k, WPS_Q_TIME);
	assert_int_equal(q, 500000);
	assert_int_equal(wps_parse_quantum("2ms", &k, &q, err, sizeof(err)), 0);
	assert_int_equal(q, 2000000);
	assert_int_not_equal(wps_parse_quantum("0", &k, &q, err, sizeof(err)), 0);
	assert_int_not_equal(wps_parse_quantum("0b", &k, &q, err, sizeof(err)), 0);
	assert_int_not_equal(wps_parse_quantum("12kb", &k, &q, err, sizeof(err)), 0);
	assert_int_not_equal(wps_parse_quantum("us", &k, &q, err, sizeof(err)), 0);
	assert_int_not_equal(wps_parse_quantum("-5", &k, &q, err, sizeof(err)), 0);
}

static void prefixes(void **state)
{
	__u8 a[16], plen, fam;
	char err[256];

	(void)state;
	assert_int_equal(wps_parse_prefix("10.20.0.0/24", a, &plen, &fam, err, sizeof(err)), 0);
	assert_int_equal(fam, 4);
	assert_int_equal(plen, 96 + 24);
	assert_int_equal(a[10], 0xff);
	assert_int_equal(a[12], 10);
	assert_int_equal(wps_parse_prefix("fd20::/64", a, &plen, &fam, err, sizeof(err)), 0);
	assert_int_equal(fam, 6);
	assert_int_equal(plen, 64);
	assert_int_equal(wps_parse_prefix("10.1.2.3", a, &plen, &fam, err, sizeof(err)), 0);
	assert_int_equal(plen, 128);
	assert_int_not_equal(wps_parse_prefix("10.20.0.1/24", a, &plen, &fam, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "host bits"));
	assert_int_not_equal(wps_parse_prefix("10.20.0.0/33", a, &plen, &fam, err, sizeof(err)), 0);
	assert_int_not_equal(wps_parse_prefix("fd20::/129", a, &plen, &fam, err, sizeof(err)), 0);
	assert_int_not_equal(wps_parse_prefix("nonsense", a, &plen, &fam, err, sizeof(err)), 0);
}

static void prefix_match(void **state)
{
	__u8 p[16], x[16], plen, fam;
	char err[256];

	(void)state;
	wps_parse_prefix("10.20.0.0/23", p, &plen, &fam, err, sizeof(err));
	wps_parse_prefix("10.20.1.255", x, &fam, &fam, err, sizeof(err));
	assert_true(wps_prefix_match(x, p, plen));
	wps_parse_prefix("10.20.2.0", x, &fam, &fam, err, sizeof(err));
	assert_false(wps_prefix_match(x, p, plen));
	assert_true(wps_prefix_match(x, p, 0));		/* ::/0 matches all */
}

static void rules_and_overlap(void **state)
{
	struct wps_in_rule a = rule("--dst 10.20.0.0/24 --proto tcp --dport 5201 --quantum 16");
	struct wps_in_rule b = rule("--dst 10.20.0.0/24 --proto udp --quantum 64000b --no-reorder");
	struct wps_in_rule c = rule("--dst 10.20.0.128/25 --quantum 500us --sched weighted");
	struct wps_in_rule d = rule("--dst 10.20.0.0/24 --src 10.10.0.0/16 --proto tcp --dport 80 --quantum 4");
	struct wps_in_rule e = rule("--dst ::/0 --quantum 4");
	struct wps_in_rule f = rule("--dst 10.20.0.0/24 --src 10.11.0.0/16 --quantum 4");
	struct wps_in_rule g = rule("--dst 10.20.0.0/24 --src 10.10.0.0/16 --quantum 4");
	char err[256];

	(void)state;
	assert_int_equal(a.reorder, 1);
	assert_int_equal(b.reorder, 0);
	assert_int_equal(c.sched, WPS_SCHED_WEIGHTED);
	assert_false(wps_rules_overlap(&a, &b));	/* tcp vs udp */
	assert_true(wps_rules_overlap(&a, &c));		/* any proto inside /24 */
	assert_true(wps_rules_overlap(&c, &b));
	assert_false(wps_rules_overlap(&a, &d));	/* dport 5201 vs 80 */
	assert_false(wps_rules_overlap(&a, &e));	/* IPv4 vs IPv6 */
	assert_false(wps_rules_overlap(&f, &g));	/* disjoint sources */
	assert_true(wps_rules_overlap(&g, &d));
	assert_true(wps_rules_overlap(&d, &g));		/* symmetric */
	assert_int_not_equal(rule_err("--quantum 4", err, sizeof(err)), 0);
	assert_non_null(strstr(err, "--dst"));
	assert_int_not_equal(rule_err("--dst 10.0.0.0/8", err, sizeof(err)), 0);
	assert_non_null(strstr(err, "--quantum"));
	assert_int_not_equal(rule_err("--dst 10.0.0.0/8 --src fd00::/8 --quantum 4", err, sizeof(err)), 0);
	assert_int_not_equal(rule_err("--dst 10.0.0.0/8 --dport 80 --quantum 4", err, sizeof(err)), 0);
	assert_int_not_equal(rule_err("--dst 10.0.0.0/8 --sched fastest --quantum 4", err, sizeof(err)), 0);
	assert_int_not_equal(rule_err("--dst 10.0.0.0/8 --quantum 4 --bogus 1", err, sizeof(err)), 0);
}

static void rule_format_roundtrip(void **state)
{
	struct wps_in_rule a = rule("--dst 10.20.0.0/24 --src 10.10.0.0/16 --proto udp --dport 6000 --quantum 3000b "
				    "--sched least-loaded --no-reorder"), b;
	char buf[512], *argv[32], *save, *tok;
	char err[256];
	int argc = 0;

	(void)state;
	wps_rule_format(&a, buf, sizeof(buf));
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		if (strcmp(tok, "any"))
			argv[argc++] = tok;
		else
			argc--;	/* "--dport any": drop the option too */
	assert_int_equal(wps_rule_parse(argc, argv, &b, err, sizeof(err)), 0);
	assert_memory_equal(&a, &b, sizeof(a));
}

static void attach_options(void **state)
{
	struct wps_in_cfg c;
	char err[256];

	(void)state;
	wps_in_cfg_defaults(&c);
	assert_int_not_equal(wps_in_cfg_check(&c, err, sizeof(err)), 0);
	assert_int_equal(wps_in_cfg_set(&c, "node-id", "65535", err, sizeof(err)), 0);
	assert_int_equal(c.node_id, 65535);
	assert_int_equal(wps_in_cfg_set(&c, "node-id", "65536", err, sizeof(err)), -1);
	assert_int_equal(wps_in_cfg_set(&c, "egress-node-id", "0x10", err, sizeof(err)), 0);
	assert_int_equal(c.egress_node_id, 16);
	assert_int_equal(wps_in_cfg_set(&c, "hop-limit", "0", err, sizeof(err)), -1);
	assert_int_equal(wps_in_cfg_set(&c, "max-inflight", "1", err, sizeof(err)), -1);
	assert_int_equal(wps_in_cfg_set(&c, "max-inflight", "17", err, sizeof(err)), -1);
	assert_int_equal(wps_in_cfg_set(&c, "src", "10.0.0.1", err, sizeof(err)), -1);
	assert_int_equal(wps_in_cfg_set(&c, "src", "fd00::1", err, sizeof(err)), 0);
	assert_int_equal(wps_in_cfg_set(&c, "egress-addr", "fd00::2", err, sizeof(err)), 0);
	assert_int_equal(wps_in_cfg_check(&c, err, sizeof(err)), 0);
	assert_int_equal(wps_in_cfg_set(&c, "hbh", NULL, err, sizeof(err)), 0);
	assert_true(c.flags & WPS_IN_F_HBH);
	assert_int_equal(wps_in_cfg_set(&c, "no-such-option", "1", err, sizeof(err)), 1);
}

/* The time options' names without a unit and their older names with one: the same
 * value, a bare number in the same unit, and a unit written out read as written. */
static void time_option_names(void **state)
{
	static const struct {
		const char *name, *old, *bare;
		size_t off;
		uint64_t bare_ns;
	} t[] = {
		{ "max-delay", "max-delay-us", "7", offsetof(struct wps_in_cfg, max_delay_ns), 7000 },
		{ "quarantine", "quarantine-ms", "3", offsetof(struct wps_in_cfg, quarantine_ns), 3000000 },
		{ "load-window", "load-window-us", "5", offsetof(struct wps_in_cfg, load_window_ns), 5000 },
	};
	struct wps_in_cfg a, b;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t va, vb;

		wps_in_cfg_defaults(&a);
		wps_in_cfg_defaults(&b);
		assert_int_equal(wps_in_cfg_set(&a, t[i].name, t[i].bare, err, sizeof(err)), 0);
		assert_int_equal(wps_in_cfg_set(&b, t[i].old, t[i].bare, err, sizeof(err)), 0);
		memcpy(&va, (char *)&a + t[i].off, sizeof(va));
		memcpy(&vb, (char *)&b + t[i].off, sizeof(vb));
		assert_int_equal(va, t[i].bare_ns);
		assert_int_equal(vb, t[i].bare_ns);
		assert_int_equal(wps_in_cfg_set(&a, t[i].name, "2ms", err, sizeof(err)), 0);
		memcpy(&va, (char *)&a + t[i].off, sizeof(va));
		assert_int_equal(va, 2000000);
	}
}

/* Paths down: the scheduler's list is the slots in use that are up, in their order; a group
 * on a slot that is down is not joined (it ends under the flow's lock). */
static void live_slots_and_joins(void **state)
{
	static const __u8 slot[WPS_IN_MAX_PATHS] = { 3, 0, 7, 2 };
	struct wps_in_cfg c;
	__u8 out[WPS_IN_MAX_PATHS];
	__u64 w = wps_gs_pack(6, 9, 1, 7, 1);

	(void)state;
	assert_int_equal(wps_live_slots(slot, 4, ~0u, out), 4);
	assert_memory_equal(out, slot, 4);
	assert_int_equal(wps_live_slots(slot, 4, ~(1u << 0 | 1u << 2), out), 2);
	assert_int_equal(out[0], 3);
	assert_int_equal(out[1], 7);
	assert_int_equal(wps_live_slots(slot, 3, 1u << 2, out), 0);	/* slot 2 is not among the first 3 */
	assert_true(wps_gs_joins_on(w, 1, 1u << 7));
	assert_false(wps_gs_joins_on(w, 1, ~(1u << 7)));
	wps_in_cfg_defaults(&c);
	c.npaths = 4;
	memcpy(c.path_slot, slot, 4);
	wps_in_cfg_sync_paths(&c);
	assert_int_equal(c.path_mask, 1u << 0 | 1u << 2 | 1u << 3 | 1u << 7);
}

static unsigned sum16(const __u8 *p, size_t n)
{
	unsigned long s = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += (unsigned long)(p[i] << 8 | p[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (unsigned)s;
}

/* Packet Too Big from the WAN (user/wps/wps_live.c): ours or not, the inner flow, the relays, the bucket. */
static void packet_too_big(void **state)
{
	static const __u8 src[16] = { 0xfd, 0, 0, 0xa, [15] = 1 }, dst[16] = { 0xfd, 0, 0, 0xb, [15] = 1 };
	__u8 q[200] = { 0x60 }, out[600], four[4] = { 192, 0, 2, 9 };
	struct wps_ptb p;
	struct wps_bucket b = { 0 };
	size_t n;

	(void)state;
	q[6] = 60;
	memcpy(q + 8, src, 16);
	memcpy(q + 24, dst, 16);
	q[40] = 4;			/* options header: inner IPv4 */
	q[41] = 1;
	q[42] = 0x81;
	q[43] = 12;
	q[47] = 5;			/* Flow ID 5 */
	q[53] = 9;			/* Group ID 9 */
	q[56] = 0x45;			/* inner IPv4, DF, UDP 10.10.0.2:4000 -> 10.20.0.2:6000 */
	q[56 + 6] = 0x40;
	q[56 + 9] = 17;
	memcpy(q + 56 + 12, (__u8[]){ 10, 10, 0, 2, 10, 20, 0, 2, 0x0f, 0xa0, 0x17, 0x70 }, 12);
	assert_int_equal(wps_ptb_parse(src, dst, q, sizeof(q), &p), 0);
	assert_int_equal(p.fid, 5);
	assert_int_equal(p.gid, 9);
	assert_int_equal(p.family, 4);
	assert_true(p.df);
	assert_int_equal(p.key.family, 4);
	assert_int_equal(p.key.proto, 17);
	assert_int_equal(ntohs(p.key.sport), 4000);
	assert_int_equal(p.key.saddr[10], 0xff);
	assert_int_equal(p.key.daddr[15], 2);
	n = wps_ptb_relay4(&p, 1344, four, out, sizeof(out));
	assert_int_equal(n, 28 + sizeof(q) - 56);
	assert_int_equal(sum16(out, 20), 0xffff);		/* IPv4 header checksum */
	assert_int_equal(sum16(out + 20, n - 20), 0xffff);	/* ICMP checksum */
	assert_int_equal(out[20], 3);
	assert_int_equal(out[21], 4);
	assert_int_equal(out[26] << 8 | out[27], 1344);
	assert_memory_equal(out + 12, four, 4);
	assert_memory_equal(out + 16, q + 56 + 12, 4);		/* to the inner packet's sender */
	assert_memory_equal(out + 28, q + 56, 20);
	p.df = false;
	assert_int_equal(wps_ptb_relay4(&p, 1344, four, out, sizeof(out)), 0);	/* DF clear: fragmented now */
	/* not ours: another outer source; nor another option */
	q[9] ^= 1;
	assert_int_equal(wps_ptb_parse(src, dst, q, sizeof(q), &p), -1);
	q[9] ^= 1;
	q[42] = 0x82;
	assert_int_equal(wps_ptb_parse(src, dst, q, sizeof(q), &p), -1);
	q[42] = 0x81;
	/* inner IPv6: Packet Too Big */
	q[40] = 41;
	memset(q + 56, 0, 48);
	q[56] = 0x60;
	q[56 + 6] = 17;
	q[56 + 8] = 0xfd;
	assert_int_equal(wps_ptb_parse(src, dst, q, sizeof(q), &p), 0);
	assert_int_equal(p.family, 6);
	n = wps_ptb_relay6(&p, 1344, out, sizeof(out));
	assert_int_equal(n, 8 + sizeof(q) - 56);
	assert_int_equal(out[0], 2);
	assert_int_equal(out[6] << 8 | out[7], 1344);
	/* 10 a second, bursts of 3 */
	assert_true(wps_bucket_take(&b, 10, 3, 1000));
	assert_true(wps_bucket_take(&b, 10, 3, 1000));
	assert_true(wps_bucket_take(&b, 10, 3, 1001));
	assert_false(wps_bucket_take(&b, 10, 3, 1050));
	assert_true(wps_bucket_take(&b, 10, 3, 1101));
	assert_false(wps_bucket_take(&b, 10, 3, 1102));
}

static void quantum_and_inflight(void **state)
{
	__u64 ts[WPS_IN_INFLIGHT_RING] = { 0 };

	(void)state;
	assert_false(wps_quantum_reached(WPS_Q_PACKETS, 4, 3, 0, 0));
	assert_true(wps_quantum_reached(WPS_Q_PACKETS, 4, 4, 0, 0));
	assert_true(wps_quantum_reached(WPS_Q_PACKETS, 4, 5, 0, 0));	/* a GSO skb passing the bound */
	assert_false(wps_quantum_reached(WPS_Q_BYTES, 1000, 9, 999, 0));
	assert_true(wps_quantum_reached(WPS_Q_BYTES, 1000, 1, 1000, 0));
	assert_false(wps_quantum_reached(WPS_Q_TIME, 500000, 9, 9, 499999));
	assert_true(wps_quantum_reached(WPS_Q_TIME, 500000, 1, 1, 500000));
	/* max 2 in flight, delay 100: group 10 may close only when group 9 has been gone 100 */
	assert_true(wps_inflight_allows(ts, 10, 2, 100, 5));		/* group 9 never existed */
	ts[9 % WPS_IN_INFLIGHT_RING] = 1000;
	assert_false(wps_inflight_allows(ts, 10, 2, 100, 1099));
	assert_true(wps_inflight_allows(ts, 10, 2, 100, 1100));
	/* serial arithmetic: group 0 after 65535, and the ring index follows */
	assert_int_equal(wps_gid_next(65535), 0);
	ts[65535 % WPS_IN_INFLIGHT_RING] = 2000;
	assert_false(wps_inflight_allows(ts, 0, 2, 100, 2050));
}

/* The group-state word: what joins lock-free, and what must take the flow's lock. */
static void group_state_word(void **state)
{
	/* quantum 8, 6 packets in: 2 more, the last of which is E */
	__u64 w = wps_gs_pack(wps_gs_rem(WPS_Q_PACKETS, 8, 6), 65535, 4242, 13, 1);
	struct wps_in_flow_hot h = { .gs = w };
	struct wps_in_flow f = { .packets = 6, .rem_set = 2 };

	(void)state;
	assert_int_equal(WPS_GS_REM(w), 2);
	assert_int_equal(WPS_GS_GID(w), 65535);
	assert_int_equal(WPS_GS_FID(w), 4242);
	assert_int_equal(WPS_GS_PATH(w), 13);
	for (__u8 open = 0; open <= 2; open++)
		assert_int_equal(wps_gs_open(wps_gs_pack(6, 65535, 1, 13, open)), open);
	assert_int_equal(wps_gs_open(w | WPS_GS_FROZEN | WPS_GS_DETOUR), 1);
	/* the 7th packet joins; the 8th (E), a 2-segment skb reaching 8, do not */
	assert_true(wps_gs_joins(w, 1));
	assert_false(wps_gs_joins(w - 1, 1));
	assert_false(wps_gs_joins(w, 2));
	/* no group open (the next packet is S), frozen by a lock holder */
	assert_false(wps_gs_joins(wps_gs_pack(5, 1, 1, 0, 0), 1));
	assert_false(wps_gs_joins(w | WPS_GS_FROZEN, 1));
	/* extended at the in-flight bound: a quantum more lock-free, at least WPS_GS_EXT_JOINS (room
	 * for a whole GSO skb of 44 segments), then the lock asks again */
	assert_int_equal(wps_gs_rem_ext(WPS_Q_PACKETS, 16), WPS_GS_EXT_JOINS);
	assert_int_equal(wps_gs_rem_ext(WPS_Q_PACKETS, 1000), 1000);
	assert_true(wps_gs_joins(wps_gs_pack(wps_gs_rem_ext(WPS_Q_PACKETS, 16), 1, 1, 0, 2), 44));
	assert_false(wps_gs_joins(wps_gs_pack(wps_gs_rem_ext(WPS_Q_PACKETS, 1), 1, 1, 0, 2), WPS_GS_EXT_JOINS));
	assert_int_equal(wps_gs_rem_ext(WPS_Q_TIME, 16), 0);
	assert_true(wps_gs_joins(w | WPS_GS_DETOUR, 1));
	/* a join takes from REM only: Group ID, Flow ID, path stay */
	assert_int_equal(WPS_GS_GID(w - 1), 65535);
	assert_int_equal(WPS_GS_FID(w - 1), 4242);
	/* REM saturates: a quantum beyond 16 bits is joined until 0xffff are left, then asked again */
	assert_int_equal(wps_gs_rem(WPS_Q_PACKETS, 100000, 1), 0xffff);
	assert_int_equal(wps_gs_rem(WPS_Q_PACKETS, 100000, 99999), 1);
	assert_int_equal(wps_gs_rem(WPS_Q_PACKETS, 8, 8), 0);
	assert_int_equal(wps_gs_rem(WPS_Q_BYTES, 8000, 1), 0);	/* byte and time quanta never join */
	/* the flow's packets: as the lock holder counted, and one joined since */
	assert_int_equal(wps_flow_packets(&h, &f), 6);
	h.gs = w - 1;
	assert_int_equal(wps_flow_packets(&h, &f), 7);
}

static void flow_label(void **state)
{
	(void)state;
	for (__u32 f = 0; f < 64; f++)
		for (__u32 g = 0; g < 64; g++) {
			__u32 l = wps_flow_label((__u16)f, (__u16)g);

			assert_true(l > 0 && l <= 0xfffff);
			assert_int_equal(l, wps_flow_label((__u16)f, (__u16)g));
		}
	assert_int_not_equal(wps_flow_label(1, 1), wps_flow_label(1, 2));
	assert_string_equal(wps_in_counter_name((unsigned)wps_in_counter_id("tx_sprayed")), "tx_sprayed");
	assert_int_equal(wps_in_counter_id("nope"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quanta),
		cmocka_unit_test(prefixes),
		cmocka_unit_test(prefix_match),
		cmocka_unit_test(rules_and_overlap),
		cmocka_unit_test(rule_format_roundtrip),
		cmocka_unit_test(attach_options),
		cmocka_unit_test(live_slots_and_joins),
		cmocka_unit_test(packet_too_big),
		cmocka_unit_test(quantum_and_inflight),
		cmocka_unit_test(group_state_word),
		cmocka_unit_test(flow_label),
		cmocka_unit_test(time_option_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
