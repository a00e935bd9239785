// SPDX-License-Identifier: BSD-2-Clause
/*
 * DCQCN-like rate control of a TP channel. The reaction point follows the
 * usual scheme (Zhu et al., SIGCOMM 2015): a CNP sets the target rate to the
 * current one and cuts the current rate by alpha/2 (a minor CNP by alpha/4,
 * [chosen]: half the cut of a severe one); alpha decays by (1-g) every alpha
 * period without CNP; a rate timer and a byte counter drive the recovery:
 * fast recovery for the first F events, then additive (R_AI), then hyper
 * (R_HAI) once both counters passed F. The CNP's Loc [chosen]: 0, an
 * intermediate switch (or unknown: IP CE through a UB2E switch), the usual
 * reaction; 1, the last-hop switch, the receiver's own downlink that every
 * path and every sender to it shares: the target rate is clamped to the
 * cut rate (DCQCN's clamp_tgt_rate), so fast recovery does not climb back
 * to the rate that congested it. Sends are paced at the rate with a
 * burst allowance (burst_bytes). Timers run off the times the core
 * hands in, so they are processed lazily and in order.
 */
#include "transport/cc_np.h"

static double g_of(const struct tp_cc *cc)
{
	return 1.0 / (double)(1u << cc->cfg.g_shift);
}

void cc_dcqcn_init(struct tp_cc *cc)
{
	cc->dq.rc = cc->dq.rt = (double)cc->cfg.line_rate_bps;
	cc->dq.alpha = 1.0;
	cc->dq.t_alpha = cc->dq.t_rate = 0;	/* armed by the first cut */
}

static void increase(struct tp_cc *cc)
{
	struct cc_dcqcn *d = &cc->dq;
	uint32_t f = cc->cfg.f;
	uint32_t hi = d->t_cnt > d->bc_cnt ? d->t_cnt : d->bc_cnt;
	uint32_t lo = d->t_cnt < d->bc_cnt ? d->t_cnt : d->bc_cnt;

	if (lo > f)
		d->rt += (double)(lo - f) * (double)cc->cfg.rhai_bps;	/* hyper */
	else if (hi > f)
		d->rt += (double)cc->cfg.rai_bps;			/* additive */
	/* else fast recovery: towards the target only */
	d->rt = cc_clamp(d->rt, (double)cc->cfg.min_rate_bps, (double)cc->cfg.line_rate_bps);
	d->rc = cc_clamp((d->rt + d->rc) / 2, (double)cc->cfg.min_rate_bps,
			 (double)cc->cfg.line_rate_bps);
	cc->st.increases++;
}

/* Run every timer expiry up to now, oldest first. */
static void advance(struct tp_cc *cc, uint64_t now)
{
	struct cc_dcqcn *d = &cc->dq;
	uint32_t guard = 0;

	cc->now = now;
	while (d->t_alpha && d->t_alpha <= now && guard++ < 100000) {
		d->alpha *= 1.0 - g_of(cc);
		d->t_alpha += cc->cfg.alpha_timer_ns;
	}
	guard = 0;
	while (d->t_rate && d->t_rate <= now && guard++ < 100000) {
		d->t_rate += cc->cfg.rate_timer_ns;
		if (d->rc >= (double)cc->cfg.line_rate_bps) {
			d->t_rate = 0;	/* back at line rate: nothing to recover */
			break;
		}
		d->t_cnt++;
		increase(cc);
	}
	if (d->blocked_until && d->blocked_until <= now)
		d->blocked_until = 0;
}

static bool dq_can_send(void *ctx, uint64_t now, uint64_t inflight, uint32_t bytes)
{
	struct tp_cc *cc = ctx;

	(void)inflight;	/* rate-based: no window */
	(void)bytes;
	advance(cc, now);
	if (now >= cc->dq.next_send)
		return true;
	cc->dq.blocked_until = cc->dq.next_send;
	return false;
}

static void dq_on_send(void *ctx, uint64_t now, uint32_t bytes, bool rtx)
{
	struct tp_cc *cc = ctx;
	struct cc_dcqcn *d = &cc->dq;
	/* Pace on the wire size: TP headers and UBoE framing, about 64 bytes. */
	double ns = (double)(bytes + 64) * 8e9 / d->rc;

	(void)rtx;
	advance(cc, now);
	/* Credit for up to burst_bytes after an idle spell: a paced sender that
	 * may only ever send one packet at a time keeps its host busy-waiting. */
	uint64_t burst = (uint64_t)((double)cc->cfg.burst_bytes * 8e9 / d->rc);
	uint64_t floor = now > burst ? now - burst : 0;

	d->next_send = (d->next_send > floor ? d->next_send : floor) + (uint64_t)ns;
	if (d->rc >= (double)cc->cfg.line_rate_bps)
		return;
	d->bytes += bytes;
	if (d->bytes >= cc->cfg.byte_counter) {
		d->bytes = 0;
		d->bc_cnt++;
		increase(cc);
	}
}

static void dq_on_cnp(void *ctx, uint64_t now, uint8_t level, bool loc)
{
	struct tp_cc *cc = ctx;
	struct cc_dcqcn *d = &cc->dq;
	double cut = level == UB_CNP_ECN_MINOR ? d->alpha / 4 : d->alpha / 2;

	advance(cc, now);
	cc->st.cnp_rcvd++;
	cc->st.cuts++;
	cc->st.ecn_cuts++;
	d->rt = d->rc;
	d->rc = cc_clamp(d->rc * (1.0 - cut), (double)cc->cfg.min_rate_bps,
			 (double)cc->cfg.line_rate_bps);
	if (loc)
		d->rt = d->rc;	/* last hop: no way round it, recover from here */
	d->alpha = (1.0 - g_of(cc)) * d->alpha + g_of(cc);
	d->t_alpha = now + cc->cfg.alpha_timer_ns;
	d->t_rate = now + cc->cfg.rate_timer_ns;
	d->t_cnt = d->bc_cnt = 0;
	d->bytes = 0;
	/* A slower rate applies to what is already scheduled. */
	if (d->next_send > now)
		d->next_send = now + (uint64_t)((double)(d->next_send - now) / (1.0 - cut));
}

static void dq_on_tick(void *ctx, uint64_t now)
{
	advance(ctx, now);
}

static uint64_t dq_next_deadline(void *ctx)
{
	struct tp_cc *cc = ctx;

	/* Only while a packet waits for its turn: an idle channel sleeps. */
	return cc->dq.blocked_until ? cc->dq.blocked_until : UINT64_MAX;
}

static void dq_on_rx_data(void *ctx, uint64_t now, uint32_t bytes, const struct tp_rx_meta *m)
{
	cc_np_rx_data(ctx, now, bytes, m);
}

static bool dq_cnp_due(void *ctx, uint64_t now, struct ub_cnpetph_fields *cnp)
{
	return cc_np_cnp_due(ctx, now, cnp);
}

const struct tp_cc_ops tp_cc_dcqcn_ops = {
	.can_send = dq_can_send,
	.on_send = dq_on_send,
	.on_cnp = dq_on_cnp,
	.on_tick = dq_on_tick,
	.next_deadline = dq_next_deadline,
	.on_rx_data = dq_on_rx_data,
	.cnp_due = dq_cnp_due,
};
