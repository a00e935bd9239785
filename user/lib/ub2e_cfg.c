// SPDX-License-Identifier: BSD-2-Clause
#include "lib/ub2e_cfg.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/parse_num.h"
#include "ub_wire.h"

void ub2e_cfg_defaults(struct ub2e_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->version = UB2E_CFG_VERSION;
	cfg->ub_ethertype = UB_ETH_P_NATIVE;
	/* draft §5.2.1 defaults: both CE levels -> CE, Markable -> ECT(0) */
	cfg->fecn_to_ecn[UB_FECN_UNMARKABLE] = ECN_NOT_ECT;
	cfg->fecn_to_ecn[UB_FECN_LIGHT_CE] = ECN_CE;
	cfg->fecn_to_ecn[UB_FECN_MARKABLE] = ECN_ECT0;
	cfg->fecn_to_ecn[UB_FECN_SEVERE_CE] = ECN_CE;
	/* CE -> Severe CE; both ECTs -> Markable (RFC 3168) */
	cfg->ecn_to_fecn[ECN_NOT_ECT] = UB_FECN_UNMARKABLE;
	cfg->ecn_to_fecn[ECN_ECT1] = UB_FECN_MARKABLE;
	cfg->ecn_to_fecn[ECN_ECT0] = UB_FECN_MARKABLE;
	cfg->ecn_to_fecn[ECN_CE] = UB_FECN_SEVERE_CE;
	cfg->cci_policy = UB2E_CCI_FORWARD;
	cfg->rt = UB_RT_FLOW_SHORTEST;
	cfg->default_pid = UB_PID_DEFAULT;
	cfg->default_perm = UB_PERM_HIGH;
	cfg->caqm_ethertype = UB_ETH_P_CAQM;
}

struct choice {
	const char *word;
	unsigned value;
};

static int pick(const struct choice *c, const char *name, const char *value,
		unsigned *out, char *err, size_t errlen)
{
	char words[128] = "";

	for (const struct choice *p = c; p->word; p++) {
		if (!strcmp(p->word, value)) {
			*out = p->value;
			return 0;
		}
		snprintf(words + strlen(words), sizeof(words) - strlen(words), "%s%s",
			 p == c ? "" : "|", p->word);
	}
	snprintf(err, errlen, "--%s: '%s' is not one of %s", name, value, words);
	return -1;
}

static int number(const char *name, const char *value, unsigned long min, unsigned long max,
		  unsigned long *out, char *err, size_t errlen)
{
	if (parse_uint(value, (size_t)-1, max, out) || *out < min) {
		snprintf(err, errlen, "--%s: '%s' is not a number in %lu..%lu", name, value, min, max);
		return -1;
	}
	return 0;
}

int ub2e_cfg_set(struct ub2e_cfg *cfg, const char *name, const char *value, char *err, size_t errlen)
{
	static const struct choice light_ce[] = { { "ce", ECN_CE }, { "ect0", ECN_ECT0 }, { "ect1", ECN_ECT1 }, { 0 } };
	static const struct choice markable[] = { { "ect0", ECN_ECT0 }, { "ect1", ECN_ECT1 }, { 0 } };
	static const struct choice ce_to[] = { { "severe", UB_FECN_SEVERE_CE }, { "light", UB_FECN_LIGHT_CE }, { 0 } };
	static const struct choice ect1_to[] = { { "markable", UB_FECN_MARKABLE }, { "light", UB_FECN_LIGHT_CE }, { 0 } };
	static const struct choice cci[] = { { "forward", UB2E_CCI_FORWARD }, { "drop", UB2E_CCI_DROP }, { 0 } };
	unsigned c;
	unsigned long n;

	if (!strcmp(name, "untagged")) {
		cfg->flags |= UB2E_F_UNTAGGED;
	} else if (!strcmp(name, "strict")) {
		cfg->flags |= UB2E_F_STRICT_VLAN;
	} else if (!strcmp(name, "no-ttl-dec")) {
		cfg->flags |= UB2E_F_NO_TTL_DEC;
	} else if (!strcmp(name, "caqm-tag")) {
		cfg->flags |= UB2E_F_CAQM_TAG;
	} else if (!value) {
		snprintf(err, errlen, "--%s needs a value", name);
		return -1;
	} else if (!strcmp(name, "light-ce")) {
		if (pick(light_ce, name, value, &c, err, errlen))
			return -1;
		cfg->fecn_to_ecn[UB_FECN_LIGHT_CE] = (__u8)c;
	} else if (!strcmp(name, "markable")) {
		if (pick(markable, name, value, &c, err, errlen))
			return -1;
		cfg->fecn_to_ecn[UB_FECN_MARKABLE] = (__u8)c;
	} else if (!strcmp(name, "ce-to")) {
		if (pick(ce_to, name, value, &c, err, errlen))
			return -1;
		cfg->ecn_to_fecn[ECN_CE] = (__u8)c;
	} else if (!strcmp(name, "ect1-to")) {
		if (pick(ect1_to, name, value, &c, err, errlen))
			return -1;
		cfg->ecn_to_fecn[ECN_ECT1] = (__u8)c;
	} else if (!strcmp(name, "cci-policy")) {
		if (pick(cci, name, value, &c, err, errlen))
			return -1;
		cfg->cci_policy = (__u8)c;
	} else if (!strcmp(name, "rt")) {
		if (number(name, value, 0, 3, &n, err, errlen))
			return -1;
		cfg->rt = (__u8)n;
	} else if (!strcmp(name, "vl")) {
		if (number(name, value, 0, 15, &n, err, errlen))
			return -1;
		cfg->vl = (__u8)n;
	} else if (!strcmp(name, "ub-ethertype") || !strcmp(name, "caqm-ethertype")) {
		/* Below 0x600 it would be an 802.3 length; the IP types would hijack IP. */
		if (number(name, value, 0x600, 0xffff, &n, err, errlen))
			return -1;
		if (n == 0x0800 || n == 0x86dd || n == 0x0806 || n == 0x8100 || n == 0x88a8) {
			snprintf(err, errlen, "--%s: 0x%04lx is an EtherType the switch must leave alone", name, n);
			return -1;
		}
		if (name[0] == 'u')
			cfg->ub_ethertype = (__u16)n;
		else
			cfg->caqm_ethertype = (__u16)n;
	} else if (!strcmp(name, "default-pid")) {
		if (number(name, value, 1, UB_PID_MASK, &n, err, errlen))
			return -1;
		cfg->default_pid = (__u32)n;
	} else if (!strcmp(name, "default-perm")) {
		if (number(name, value, 0, 1, &n, err, errlen))
			return -1;
		cfg->default_perm = (__u8)n;
	} else {
		snprintf(err, errlen, "unknown option --%s", name);
		return -1;
	}
	return 0;
}

int ub2e_cfg_check(const struct ub2e_cfg *cfg, char *err, size_t errlen)
{
	if ((cfg->flags & UB2E_F_CAQM_TAG) && cfg->caqm_ethertype == cfg->ub_ethertype) {
		snprintf(err, errlen, "--caqm-ethertype 0x%04x is the native UB EtherType too", cfg->caqm_ethertype);
		return -1;
	}
	return 0;
}
