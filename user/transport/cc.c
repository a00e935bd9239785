// SPDX-License-Identifier: BSD-2-Clause
/* Congestion control: instances, the receiver half, helpers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/cc_int.h"

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

/* ---- the receiver half ----------------------------------------------------- */

static bool all_paths_marked(const struct tp_cc *cc, uint64_t now)
{
	for (uint32_t p = 0; p < cc->cfg.paths; p++) {
		uint64_t m = cc->np.path_marked[p];

		if (!m || now - (m - 1) > cc->cfg.cnp_interval_ns)
			return false;
	}
	return true;
}

void cc_np_rx_data(struct tp_cc *cc, uint64_t now, uint32_t bytes, const struct tp_rx_meta *m)
{
	struct cc_np *np = &cc->np;
	bool ce = m->ecn == 3, loc = false;
	uint8_t level = cc->cfg.ce_minor ? UB_CNP_ECN_MINOR : UB_CNP_ECN_SEVERE;

	cc->now = now;
	np->rx_bytes += bytes;
	np->pkts++;
	if (m->has_cci && tp_cci_mode(m->cci) == TP_CCI_MODE_FECN &&
	    ((m->cci & 3) == TP_CCI_FECN_LIGHT || (m->cci & 3) == TP_CCI_FECN_SEVERE)) {
		/* Native FECN has two levels: keep them (the UB2E switch maps). */
		ce = true;
		level = (m->cci & 3) == TP_CCI_FECN_SEVERE ? UB_CNP_ECN_SEVERE : UB_CNP_ECN_MINOR;
		loc = m->cci & TP_CCI_LOC;
	}
	if (m->has_cci && tp_cci_mode(m->cci) == TP_CCI_MODE_CAQM && (m->cci & TP_CCI_CAQM_EN)) {
		if (m->cci & TP_CCI_CAQM_C)
			np->caqm_c++;
		if (m->cci & TP_CCI_CAQM_I) {
			np->caqm_i = true;
			np->caqm_hint += m->cci & 0xff;
		}
		np->caqm_loc |= !!(m->cci & TP_CCI_LOC);
	}
	if (!ce)
		return;
	cc->st.ce_rcvd++;
	np->marked++;
	if (cc->cfg.algo != TP_CC_DCQCN)
		return;
	np->path_marked[cc->cfg.paths > 1 ? m->entropy % cc->cfg.paths : 0] = now + 1;
	/* A last-hop mark (FECN LoC) is congestion every path shares. */
	if (!loc && !all_paths_marked(cc, now))
		return;
	if (np->cnp_pending) {
		if (level > np->cnp_level)
			np->cnp_level = level;
		np->cnp_loc |= loc;
		return;
	}
	if (np->cnp_ever && now - np->last_cnp < cc->cfg.cnp_interval_ns)
		return;	/* at most one CNP per interval per channel */
	np->cnp_pending = true;
	np->cnp_level = level;
	np->cnp_loc = loc;
}

bool cc_np_cnp_due(struct tp_cc *cc, uint64_t now, struct ub_cnpetph_fields *cnp)
{
	struct cc_np *np = &cc->np;

	if (!np->cnp_pending)
		return false;
	np->cnp_pending = false;
	np->cnp_ever = true;
	np->last_cnp = now;
	cnp->ecn = np->cnp_level;
	cnp->loc = np->cnp_loc;
	cc->st.cnp_sent++;
	return true;
}
