// SPDX-License-Identifier: BSD-2-Clause
/* NPI <-> VLAN plans (user/lib/npimap.c) and the switch options (user/lib/ub2e_cfg.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/npimap.h"
#include "lib/ub2e_cfg.h"
#include "ub_wire.h"

static struct npimap_entry parse_ok(const char *s)
{
	struct npimap_entry e;
	char err[256] = "";

	assert_int_equal(npimap_parse(s, &e, err, sizeof(err)), 0);
	return e;
}

static void parse_forms(void **state)
{
	struct npimap_entry e;

	(void)state;
	e = parse_ok("4097");
	assert_int_equal(e.pid, 4097);
	assert_int_equal(e.perm, NPIMAP_ANY_PERM);
	assert_int_equal(e.vlan, 1);
	assert_true(e.truncated);
	e = parse_ok("0x1001=100");
	assert_int_equal(e.pid, 4097);
	assert_int_equal(e.vlan, 100);
	assert_false(e.truncated);
	e = parse_ok("7/1=71");
	assert_int_equal(e.perm, 1);
	assert_int_equal(e.vlan, 71);
	e = parse_ok("16777215=4094");
	assert_int_equal(e.pid, UB_PID_MASK);
}

static void parse_rejects(void **state)
{
	static const char *const bad[] = {
		"0", "0=5", "16777216=5", "-1=5", "5=0", "5=4095", "5=x", "5/2=7", "5/1", "x",
		"", "4096", "4095", "5/=7", "=5",
	};
	struct npimap_entry e;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (npimap_parse(bad[i], &e, err, sizeof(err)) != -1)
			fail_msg("'%s' was accepted", bad[i]);
		assert_true(strlen(err) > 0);
	}
}

static int check(const char *const *entries, size_t n, char *err, size_t errlen)
{
	struct npimap_entry plan[8];

	for (size_t i = 0; i < n; i++)
		plan[i] = parse_ok(entries[i]);
	return npimap_check(plan, n, err, errlen);
}

static void check_collisions_named(void **state)
{
	static const struct {
		const char *entries[3];
		size_t n;
		const char *needle;	/* NULL: the plan is valid */
	} cases[] = {
		{ { "1", "4097" }, 2, "Partition IDs 1 and 4097 collide on VLAN 1 after 12-bit truncation" },
		{ { "4097=100", "5=100" }, 2, "Partition IDs 4097 and 5 are both mapped to VLAN 100" },
		{ { "7/0=70", "7/1=70" }, 2, "distinct VLAN IDs" },
		{ { "7=70", "7/1=71" }, 2, "both a baseline and an enhanced mapping" },
		{ { "7=70", "7=71" }, 2, "mapped twice" },
		{ { "4097=100", "1", "7/0=70" }, 3, NULL },
		{ { "7/0=70", "7/1=71", "4097=100" }, 3, NULL },
		{ { "5=5", "5=5" }, 2, NULL },
	};
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		int rc = check(cases[i].entries, cases[i].n, err, sizeof(err));

		if (!cases[i].needle) {
			if (rc)
				fail_msg("case %zu refused: %s", i, err);
		} else if (rc != -1 || !strstr(err, cases[i].needle)) {
			fail_msg("case %zu: want '%s', got rc %d '%s'", i, cases[i].needle, rc, err);
		}
	}
}

static void value_round_trip(void **state)
{
	struct ub2e_npi_vlans v = {};
	struct npimap_entry out[3], a = parse_ok("7=70"), b = parse_ok("9/1=91"), c = parse_ok("9/0=90");

	(void)state;
	npimap_value_set(&v, &a);
	assert_int_equal(v.any, 70);
	assert_int_equal(npimap_value_entries(7, &v, out), 1);
	assert_int_equal(out[0].perm, NPIMAP_ANY_PERM);
	assert_int_equal(npimap_vlan_value(&out[0]), UB2E_VLAN_VALID | UB2E_VLAN_ANY_PERM | 7);

	memset(&v, 0, sizeof(v));
	npimap_value_set(&v, &b);
	npimap_value_set(&v, &c);
	assert_int_equal(v.perm[0], 90);
	assert_int_equal(v.perm[1], 91);
	assert_int_equal(npimap_value_entries(9, &v, out), 2);
	assert_int_equal(npimap_vlan_value(&b), UB2E_VLAN_VALID | (1u << UB2E_VLAN_PERM_SHIFT) | 9);
	assert_int_equal(npimap_value_take(&v, 1), 91);
	assert_int_equal(npimap_value_take(&v, 1), 0);
	assert_false(npimap_value_empty(&v));
	assert_int_equal(npimap_value_take(&v, 0), 90);
	assert_true(npimap_value_empty(&v));
}

static void cfg_defaults_follow_draft(void **state)
{
	struct ub2e_cfg c;

	(void)state;
	ub2e_cfg_defaults(&c);
	assert_int_equal(c.ub_ethertype, 0x88B5);
	assert_int_equal(c.fecn_to_ecn[UB_FECN_UNMARKABLE], ECN_NOT_ECT);
	assert_int_equal(c.fecn_to_ecn[UB_FECN_LIGHT_CE], ECN_CE);
	assert_int_equal(c.fecn_to_ecn[UB_FECN_MARKABLE], ECN_ECT0);
	assert_int_equal(c.fecn_to_ecn[UB_FECN_SEVERE_CE], ECN_CE);
	assert_int_equal(c.ecn_to_fecn[ECN_NOT_ECT], UB_FECN_UNMARKABLE);
	assert_int_equal(c.ecn_to_fecn[ECN_ECT1], UB_FECN_MARKABLE);
	assert_int_equal(c.ecn_to_fecn[ECN_ECT0], UB_FECN_MARKABLE);
	assert_int_equal(c.ecn_to_fecn[ECN_CE], UB_FECN_SEVERE_CE);
	assert_int_equal(c.rt, 2);	/* per-flow, shortest paths */
	assert_int_equal(c.default_pid, 1);
	assert_int_equal(c.default_perm, 0);
	assert_int_equal(c.flags, 0);
}

static void cfg_options(void **state)
{
	static const struct {
		const char *name, *value;
		int ok;
	} cases[] = {
		{ "light-ce", "ect1", 1 }, { "light-ce", "maybe", 0 }, { "markable", "ect1", 1 },
		{ "ce-to", "light", 1 }, { "ect1-to", "light", 1 }, { "cci-policy", "drop", 1 },
		{ "rt", "3", 1 }, { "rt", "4", 0 }, { "rt", "-1", 0 }, { "vl", "15", 1 }, { "vl", "16", 0 },
		{ "ub-ethertype", "0x88b6", 1 }, { "ub-ethertype", "0x0800", 0 }, { "ub-ethertype", "0x100", 0 },
		{ "default-pid", "0", 0 }, { "default-pid", "16777215", 1 }, { "default-perm", "2", 0 },
		{ "untagged", NULL, 1 }, { "bogus", "1", 0 }, { "rt", NULL, 0 },
	};
	struct ub2e_cfg c;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ub2e_cfg_defaults(&c);
		err[0] = '\0';
		int rc = ub2e_cfg_set(&c, cases[i].name, cases[i].value, err, sizeof(err));

		if ((rc == 0) != cases[i].ok)
			fail_msg("--%s %s: rc %d (%s)", cases[i].name, cases[i].value ? cases[i].value : "", rc, err);
		if (!cases[i].ok && !strlen(err))
			fail_msg("--%s: refused without a message", cases[i].name);
	}
	ub2e_cfg_defaults(&c);
	assert_int_equal(ub2e_cfg_set(&c, "light-ce", "ect1", err, sizeof(err)), 0);
	assert_int_equal(c.fecn_to_ecn[UB_FECN_LIGHT_CE], ECN_ECT1);
	assert_int_equal(ub2e_cfg_set(&c, "strict", NULL, err, sizeof(err)), 0);
	assert_int_equal(c.flags, UB2E_F_STRICT_VLAN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_forms),
		cmocka_unit_test(parse_rejects),
		cmocka_unit_test(check_collisions_named),
		cmocka_unit_test(value_round_trip),
		cmocka_unit_test(cfg_defaults_follow_draft),
		cmocka_unit_test(cfg_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
