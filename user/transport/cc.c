// SPDX-License-Identifier: BSD-2-Clause
/* Congestion control: instances, the receiver half, helpers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/cc_int.h"
#include "transport/cc.h"

static const char *const algo_names[] = {
	[TP_CC_NONE] = "none", [TP_CC_LDCP] = "ldcp", [TP_CC_DCQCN] = "dcqcn",
	[TP_CC_CAQM] = "caqm",
};

const char *tp_cc_algo_name(enum tp_cc_algo a)
{
	return (unsigned)a < sizeof(algo_names) / sizeof(algo_names[0]) ? algo_names[a] : "?";
}

int tp_cc_algo_parse(const char *s, enum tp_cc_algo *a)
{
	for (unsigned i = 0; i < sizeof(algo_names) / sizeof(algo_names[0]); i++) {
		if (s && !strcmp(s, algo_names[i])) {
			*a = (enum tp_cc_algo)i;
			return 0;
		}
	}
	return -EINVAL;
}

#define DEF(field, v) do { if (!c->field) c->field = (v); } while (0)

struct tp_cc *tp_cc_create(const struct tp_cc_config *cfg)
{
	struct tp_cc *cc;
	struct tp_cc_config *c;

	if (!cfg || (unsigned)cfg->algo > TP_CC_CAQM || cfg->paths > CC_MAX_PATHS ||
	    cfg->g_shift > 30 || cfg->ldcp_g_shift > 30) {
		errno = EINVAL;
		return NULL;
	}
	cc = calloc(1, sizeof(*cc));
	if (!cc)
		return NULL;
	cc->cfg = *cfg;
	c = &cc->cfg;
	DEF(mtu, 1024);
	DEF(line_rate_bps, 10000000000ull);
	DEF(min_rate_bps, 10000000ull);
	DEF(cnp_interval_ns, 50000);
	DEF(alpha_timer_ns, 55000);
	DEF(rate_timer_ns, 55000);
	DEF(byte_counter, 10ull << 20);
	DEF(rai_bps, 40000000ull);
	DEF(rhai_bps, 100000000ull);
	DEF(f, 5);
	DEF(g_shift, 8);
	DEF(paths, 1);
	DEF(burst_bytes, 64 * c->mtu);
	DEF(init_cw, 16 * c->mtu);
	DEF(min_cw, c->mtu);
	DEF(max_cw, 1024 * c->mtu);
	DEF(ldcp_g_shift, 4);
	DEF(hint_unit, c->mtu / 8 ? c->mtu / 8 : 1);
	DEF(caqm_ai_units, 8);
	if (c->min_cw > c->max_cw || c->init_cw < c->min_cw || c->init_cw > c->max_cw ||
	    c->min_rate_bps > c->line_rate_bps || c->caqm_ai_units > 255) {
		free(cc);
		errno = EINVAL;
		return NULL;
	}
	switch (c->algo) {
	case TP_CC_LDCP:	cc_ldcp_init(cc); break;
	case TP_CC_DCQCN:	cc_dcqcn_init(cc); break;
	case TP_CC_CAQM:	cc_caqm_init(cc); break;
	default:		break;
	}
	return cc;
}

void tp_cc_destroy(struct tp_cc *cc)
{
	free(cc);
}

void tp_cc_attach(struct tp_cc *cc, struct tp_chan_config *chan_cfg)
{
	static const struct tp_cc_ops *const ops[] = {
		[TP_CC_LDCP] = &tp_cc_ldcp_ops, [TP_CC_DCQCN] = &tp_cc_dcqcn_ops,
		[TP_CC_CAQM] = &tp_cc_caqm_ops,
	};

	chan_cfg->cc = cc ? ops[cc->cfg.algo] : NULL;
	chan_cfg->cc_ctx = chan_cfg->cc ? cc : NULL;
}

void tp_cc_get_stats(const struct tp_cc *cc, struct tp_cc_stats *st)
{
	*st = cc->st;
	st->rate_bps = (uint64_t)cc->dq.rc;
	st->cw = (uint64_t)cc->w.cw;
	st->alpha = cc->cfg.algo == TP_CC_DCQCN ? cc->dq.alpha : cc->w.alpha;
}

double tp_jain(const double *x, unsigned n)
{
	double s = 0, s2 = 0;

	for (unsigned i = 0; i < n; i++) {
		s += x[i];
		s2 += x[i] * x[i];
	}
	return s2 > 0 ? s * s / (n * s2) : 0;
}
