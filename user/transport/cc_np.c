// SPDX-License-Identifier: BSD-2-Clause
/*
 * The receiver half of congestion control, which every algorithm shares:
 * what the channel owes its peer (bytes and marks for the next TPACK-CC,
 * CAQM's answers, a CNP when one is due).
 */
#include "transport/cc_np.h"

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
