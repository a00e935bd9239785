// SPDX-License-Identifier: BSD-2-Clause
/*
 * Endpoint: channels, statistics, and the entry points that dispatch
 * received packets and pull packets to send (posting: tp_post.c, events:
 * tp_event.c, registered memory: tp_mr.c).
 */
#include <stdlib.h>
#include <string.h>

#include "transport/cc_wire.h"
#include "transport/tp_ack.h"
#include "transport/tp_ctp.h"
#include "transport/tp_mr.h"
#include "transport/tp_recv.h"
#include "transport/tp_rtx.h"
#include "transport/tp_send.h"
#include "transport/tp_sge.h"
#include "transport/tp_wire.h"
#include "lib/frame.h"

/* splitmix64: small, seedable, good enough for initial PSNs. */
static uint64_t tp_rand(struct tp_ep *ep)
{
	uint64_t z = (ep->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct tp_ep *tp_ep_create(const struct tp_ep_config *cfg)
{
	struct tp_ep *ep = calloc(1, sizeof(*ep));

	if (!ep)
		return NULL;
	ep->cfg = *cfg;
	if (!ep->cfg.max_chans)
		ep->cfg.max_chans = 64;
	if (!ep->cfg.max_mrs)
		ep->cfg.max_mrs = 4096;
	if (ep->cfg.max_mrs > TP_MRS_MAX) {
		free(ep);
		errno = EINVAL;
		return NULL;
	}
	ep->rng = cfg->seed;
	ep->tok_rng = cfg->token_seed;
	ep->chans = calloc(ep->cfg.max_chans, sizeof(*ep->chans));
	ep->ev_cap = 256;
	ep->evq = calloc(ep->ev_cap, sizeof(*ep->evq));
	if (!ep->chans || !ep->evq) {
		tp_ep_destroy(ep);
		errno = ENOMEM;
		return NULL;
	}
	return ep;
}

void tp_ep_destroy(struct tp_ep *ep)
{
	if (!ep)
		return;
	while (ep->chans && ep->nchans)
		tp_chan_destroy(ep->chans[0]);
	free(ep->chans);
	tp_mr_free(ep);
	free(ep->evq);
	free(ep);
}

static bool pow2(uint32_t v) { return v && !(v & (v - 1)); }

/* CTP and UTP name no TPN on the wire: the channel is the jetty of an IniRCID. */
static bool no_tpn(enum tp_mode m) { return m == TP_MODE_CTP || m == TP_MODE_UTP; }

static struct tp_chan *find_chan(const struct tp_ep *ep, uint32_t tpn)
{
	for (uint32_t i = 0; i < ep->nchans; i++)
		if (ep->chans[i]->tpn == tpn)
			return ep->chans[i];
	return NULL;
}

/* CTP: another channel of the same {peer entity, VL} with another CC instance. */
static bool ctp_cc_split(const struct tp_ep *ep, const struct tp_chan_config *c)
{
	for (uint32_t i = 0; i < ep->nchans; i++) {
		const struct tp_chan_config *o = &ep->chans[i]->cfg;

		if (o->mode == TP_MODE_CTP && o->vl == c->vl &&
		    !memcmp(o->peer_entity, c->peer_entity, sizeof(c->peer_entity)) &&
		    (o->cc != c->cc || o->cc_ctx != c->cc_ctx))
			return true;
	}
	return false;
}

void tp_chan_span(struct tp_chan_config *cfg, uint32_t span)
{
	uint32_t window = cfg->window ? cfg->window : TP_WINDOW_DEFAULT;
	uint32_t need, range;

	if (span > TP_SPAN_MAX)
		span = TP_SPAN_MAX;
	if (span > window)
		cfg->span = span;
	/* The range holds the window even when the span is off: a window of
	 * 1,024 with the default 256 has the receiver drop what it sends
	 * past 256 and goodput falls 6x at 1 % loss. */
	need = span > window ? span : window;
	if (span <= window && need <= TP_OOO_RANGE_DEFAULT)
		return;
	for (range = TP_OOO_RANGE_DEFAULT; range < need && range < TP_OOO_RANGE_MAX; range <<= 1)
		;
	cfg->ooo_range = range;
}

void tp_chan_peer_range(struct tp_chan *ch, uint32_t range)
{
	/* tp_chan_create takes span == ooo_range, so a peer keeps all of
	 * its range; 0 is an older peer's: the default */
	uint32_t cap = range ? range : TP_OOO_RANGE_DEFAULT;
	uint32_t span = cap < ch->cfg.span ? cap : ch->cfg.span;

	ch->span = span > ch->cfg.window ? span : ch->cfg.window;
}

struct tp_chan *tp_chan_create(struct tp_ep *ep, const struct tp_chan_config *cfg)
{
	struct tp_chan_config c = *cfg;
	struct tp_chan *ch;

	if (!c.mtu)
		c.mtu = 1024;
	if (!c.window)
		c.window = TP_WINDOW_DEFAULT;
	if (!c.ooo_range)
		c.ooo_range = TP_OOO_RANGE_DEFAULT;
	if (!c.ack_coalesce)
		c.ack_coalesce = 8;
	if (!c.ack_delay_ns)
		c.ack_delay_ns = 5000;
	if (!c.ackreq_every)
		c.ackreq_every = c.window / 4 ? c.window / 4 : 1;
	if (!c.rto_static_ns)
		c.rto_static_ns = TP_RTO_512US;
	if (!c.rto_min_ns)
		c.rto_min_ns = 10000;
	if (!c.rto_n)
		c.rto_n = 1;
	if (!c.retry_limit)
		c.retry_limit = 7;
	if (!c.rnr_retry)
		c.rnr_retry = 7;
	if (!c.rnr_delay_ns)
		c.rnr_delay_ns = 50000;
	if (!c.max_ops)
		c.max_ops = 1024;
	if (!c.sack_after)
		c.sack_after = 1;
	if (!c.span || c.mode != TP_MODE_RTP_SR)
		c.span = c.window;
	if (c.mode == TP_MODE_CTP) {
		/* No TPACK to carry a TAACK: the answer is always a packet. */
		if (c.ta_mode == TP_TA_ROL)
			c.ta_mode = TP_TA_ROI;
		if (!c.ta_timeout_ns)
			c.ta_timeout_ns = TP_RTO_128MS;
	}
	if (c.mode > TP_MODE_CTP || c.ta_mode > TP_TA_ROT || c.rto_mode > TP_RTO_DYNAMIC ||
	    c.window >= TP_PSN_HALF || c.span < c.window ||
	    (c.span > c.window && (c.span > c.ooo_range || c.span > TP_SPAN_MAX)) ||
	    c.entropies > 0xffff || !pow2(c.ooo_range) || c.ooo_range < 128 ||
	    c.ooo_range > TP_OOO_RANGE_MAX || c.local_tpn > TP_PSN_MASK || c.mtu > 65536 ||
	    c.init_psn > TP_PSN_MASK || (no_tpn(c.mode) && c.local_tpn > TP_CTP_RCID_MAX) ||
	    c.vl > UB_CNPETPH_VL_MASK || (c.mode == TP_MODE_CTP && ctp_cc_split(ep, &c))) {
		errno = EINVAL;
		return NULL;
	}
	if (!c.local_tpn) {
		/* Allocate: the lowest TPN above 0 in use by nobody. */
		for (c.local_tpn = 1; find_chan(ep, c.local_tpn); c.local_tpn++)
			;
		if (no_tpn(c.mode) && c.local_tpn > TP_CTP_RCID_MAX) {
			errno = ENOSPC;
			return NULL;
		}
	} else if (find_chan(ep, c.local_tpn)) {
		errno = EEXIST;
		return NULL;
	}
	if (ep->nchans == ep->cfg.max_chans) {
		errno = ENOSPC;
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		goto nomem;
	ch->ep = ep;
	ch->cfg = c;
	ch->tpn = c.local_tpn;
	/* Room for the peer's answers as well as our own operations. */
	ch->sq_cap = 2 * c.max_ops + 2;
	ch->sq = calloc(ch->sq_cap, sizeof(*ch->sq));
	ch->win_cap = ch->span = c.span;
	ch->win = calloc(ch->win_cap, sizeof(*ch->win));
	ch->path_mark = calloc(ch->win_cap, sizeof(*ch->path_mark));
	ch->dsk = calloc(ch->win_cap, sizeof(*ch->dsk));
	ch->rq_cap = c.max_ops + 1;
	ch->rq = calloc(ch->rq_cap, sizeof(*ch->rq));
	if (c.rack && c.entropies && c.mode == TP_MODE_RTP_SR) {
		ch->paths = calloc(c.entropies, sizeof(*ch->paths));
		if (!ch->paths)
			goto nomem;
	}
	if (!ch->sq || !ch->win || !ch->path_mark || !ch->dsk || !ch->rq)
		goto nomem;
	ch->init_psn = c.fixed_init_psn ? c.init_psn : (uint32_t)(tp_rand(ep) & TP_PSN_MASK);
	ch->una = ch->nxt = ch->rtx_nxt = ch->init_psn;
	ch->next_tassn = (uint16_t)tp_rand(ep);
	ch->next_tpmsn = 0;
	ep->chans[ep->nchans++] = ch;
	return ch;
nomem:
	if (ch) {
		free(ch->sq);
		free(ch->win);
		free(ch->path_mark);
		free(ch->dsk);
		free(ch->rq);
		free(ch->paths);
		free(ch);
	}
	errno = ENOMEM;
	return NULL;
}

void tp_chan_destroy(struct tp_chan *ch)
{
	struct tp_ep *ep;
	uint64_t *dst, *src;

	if (!ch)
		return;
	ep = ch->ep;
	dst = (uint64_t *)&ep->gone;
	src = (uint64_t *)&ch->st;
	for (size_t i = 0; i < tp_stats_count(); i++)
		dst[i] += src[i];
	/* Channels stay packed at the front: the datapath walks only those. */
	for (uint32_t i = 0; i < ep->nchans; i++)
		if (ep->chans[i] == ch) {
			ep->chans[i] = ep->chans[--ep->nchans];
			ep->chans[ep->nchans] = NULL;
			break;
		}
	for (uint32_t i = ch->sq_head; i != ch->sq_tail; i = (i + 1) % ch->sq_cap)
		tp_op_free(&ch->sq[i]);
	for (uint32_t i = ch->rq_head; i != ch->rq_tail; i = (i + 1) % ch->rq_cap)
		tp_rb_free(&ch->rq[i]);
	if (ch->rx.have_recv)
		tp_rb_free(&ch->rx.rb);
	free(ch->sq);
	free(ch->win);
	free(ch->path_mark);
	free(ch->dsk);
	free(ch->rq);
	free(ch->ooo_buf);
	free(ch->ooo_len);
	free(ch->paths);
	free(ch);
}

uint32_t tp_chan_tpn(const struct tp_chan *ch) { return ch->tpn; }
uint32_t tp_chan_init_psn(const struct tp_chan *ch) { return ch->init_psn; }
uint32_t tp_chan_rx_range(const struct tp_chan *ch) { return ch->cfg.ooo_range; }
bool tp_chan_failed(const struct tp_chan *ch) { return ch->failed; }
uint64_t tp_chan_inflight_bytes(const struct tp_chan *ch) { return ch->inflight_bytes; }
uint32_t tp_chan_outstanding(const struct tp_chan *ch) { return ch->n_init_ops; }
void *tp_chan_user(const struct tp_chan *ch) { return ch->cfg.user; }

void tp_chan_tx_entropy(struct tp_chan *ch, uint32_t psn, uint32_t e)
{
	int32_t d = tp_psn_diff(psn, ch->una);

	if (ch->paths && e < ch->cfg.entropies && d >= 0 && d < tp_psn_diff(ch->nxt, ch->una))
		TP_SLOT(ch, psn)->path = (uint16_t)(e + 1);
}

int tp_chan_connect(struct tp_chan *ch, uint32_t peer_tpn, uint32_t peer_init_psn)
{
	if (peer_tpn > TP_PSN_MASK || peer_init_psn > TP_PSN_MASK)
		return -EINVAL;
	if (ch->connected)
		return -EISCONN;	/* PSN state is per connection: a new channel */
	ch->peer_tpn = peer_tpn;
	ch->rcv_nxt = peer_init_psn;
	ch->rcv_max = tp_psn_add(peer_init_psn, TP_PSN_MASK);	/* nothing yet */
	ch->connected = true;
	return 0;
}

/* ---- datapath ------------------------------------------------------------ */

static bool utp_entity_match(const struct tp_chan *ch, const struct tp_rx_meta *meta)
{
	static const uint8_t any[16];

	return !memcmp(ch->cfg.peer_entity, any, sizeof(any)) ||
	       (meta && !memcmp(ch->cfg.peer_entity, meta->src, sizeof(meta->src)));
}

/*
 * LDCP's AckSequence counts the data bytes the receiver took (TP_RX_OK): a
 * duplicate (below the cumulative point or held already) adds nothing, nor
 * does a packet it dropped (out of range, no room, Go-Back-N out of order),
 * which the sender will resend. The sender counts a packet once its loss is
 * declared (on_lost takes the original out, the resend goes in), so a late
 * original arriving after its resend must not be counted twice, or every
 * spurious resend would lower the sender's in-flight estimate for good; a
 * dropped one counted would let a Go-Back-N sender run past its window
 * until the go-back (docs/CC.md). Their marks still count.
 */
static enum tp_rx_verdict rcv_data_cc(struct tp_chan *ch, uint64_t now, const struct tp_parsed *p,
				      const void *pkt, size_t len, const struct tp_rx_meta *meta)
{
	enum tp_rx_verdict v = tp_rcv_data(ch, now, p, pkt, len, meta ? meta->ecn : 0);

	tp_cc_rx_data(ch, now, v == TP_RX_OK ? (uint32_t)p->payload_len : 0, meta);
	return v;
}

/*
 * UTP: the UTPH names no channel. The transaction layer does: the TAH's
 * IniRCID is the sending jetty (its channel's TPN), the peer this channel
 * was connected to, from the source entity when the channel names one.
 */
static enum tp_rx_verdict utp_rx_dispatch(struct tp_ep *ep, uint64_t now, const struct tp_parsed *p,
					  const void *pkt, size_t len, const struct tp_rx_meta *meta)
{
	if (!p->has_tah) {
		ep->gone.rx_malformed++;
		return TP_RX_DROP;
	}
	for (uint32_t i = 0; i < ep->nchans; i++) {
		struct tp_chan *ch = ep->chans[i];

		if (ch->cfg.mode != TP_MODE_UTP || !ch->connected || ch->failed ||
		    ch->peer_tpn != p->tah.ini_rcid || !utp_entity_match(ch, meta))
			continue;
		return rcv_data_cc(ch, now, p, pkt, len, meta);
	}
	ep->gone.rx_unknown_tpn++;
	return TP_RX_DROP;
}

enum tp_rx_verdict tp_ep_rx(struct tp_ep *ep, uint64_t now, const void *pkt, size_t len,
			    const struct tp_rx_meta *meta)
{
	struct tp_parsed p;
	struct tp_chan *ch;
	const char *why;

	if (meta && meta->ctp)
		return tp_ctp_rx(ep, now, pkt, len, meta);
	if (tp_parse(pkt, len, &p, &why)) {
		ep->gone.rx_malformed++;
		return TP_RX_DROP;
	}
	if (p.tph.opcode == UB_TP_UTP_DATA)
		return utp_rx_dispatch(ep, now, &p, pkt, len, meta);
	ch = find_chan(ep, p.tph.dst_tpn);
	if (!ch || !ch->connected || ch->failed || p.tph.src_tpn != ch->peer_tpn) {
		if (ch)
			ch->st.rx_unknown_tpn++;
		else
			ep->gone.rx_unknown_tpn++;
		return TP_RX_DROP;
	}
	if (tp_is_ctp(ch)) {
		ch->st.rx_bad_opcode++;	/* an RTPH/UTPH for a CTP channel */
		return TP_RX_DROP;
	}
	switch (p.tph.opcode) {
	case UB_TP_RTP_DATA:
		if (ch->cfg.mode == TP_MODE_UTP) {
			ch->st.rx_bad_opcode++;
			return TP_RX_DROP;
		}
		if (!p.has_tah) {
			ch->st.rx_malformed++;
			return TP_RX_DROP;
		}
		return rcv_data_cc(ch, now, &p, pkt, len, meta);
	case UB_TP_ACK:
	case UB_TP_ACK_CE:
	case UB_TP_SACK:
	case UB_TP_SACK_CE:
		if (!tp_reliable(ch) || p.payload_len) {
			ch->st.rx_bad_opcode++;
			return TP_RX_DROP;
		}
		tp_snd_on_ack(ch, now, &p);
		if (p.has_cetph)
			tp_cc_on_cetph(ch, now, &p.ce);
		return TP_RX_OK;
	case UB_TP_CNP:
		ch->st.rx_cnp++;
		tp_cc_on_cnp(ch, now, &p.cnp);
		return TP_RX_OK;
	default:
		ch->st.rx_bad_opcode++;
		return TP_RX_DROP;
	}
}

void tp_rx_meta_from_view(const struct ub_view *v, struct tp_rx_meta *meta)
{
	memset(meta, 0, sizeof(*meta));
	meta->ecn = v->ecn;
	meta->entropy = v->sport;
	meta->has_cci = v->nth != NULL;	/* native UB: the CCI, for CC */
	meta->cci = v->cci;
	meta->ctp = v->ctp;
	meta->has_vl = v->lph != NULL;
	meta->vl = v->lph ? ub_lph_vl(v->lph) : 0;
	memcpy(meta->src, v->src_ip, sizeof(meta->src));
}

enum tp_rx_verdict tp_ep_rx_frame(struct tp_ep *ep, uint64_t now, const void *frame, size_t len)
{
	struct tp_rx_meta meta = { 0 };
	struct ub_view v;
	const uint8_t *tp;
	size_t n;

	if (ub_parse_frame_ctp(frame, len, 0, &v) != UB_PARSE_OK) {
		ep->gone.rx_not_ub++;
		return TP_RX_DROP;
	}
	if (!v.icrc_ok) {
		ep->gone.rx_bad_icrc++;
		return TP_RX_DROP;
	}
	tp_rx_meta_from_view(&v, &meta);
	tp = ub_view_tp(&v, &n);
	return tp_ep_rx(ep, now, tp, n, &meta);
}

size_t tp_ep_tx(struct tp_ep *ep, uint64_t now, void *buf, size_t cap, struct tp_tx_info *info)
{
	struct tp_tx_info dummy;
	uint32_t n = ep->nchans;

	if (!info)
		info = &dummy;
	if (!n)
		return 0;
	if (ep->rr >= n)
		ep->rr = 0;
	/* Responses of every channel before any data. */
	for (uint32_t k = 0; k < n; k++) {
		struct tp_chan *ch = ep->chans[(ep->rr + k) % n];
		size_t len;

		if (!ch->connected || ch->failed)
			continue;
		len = tp_cc_response(ch, now, buf, cap, info);
		if (!len)
			len = tp_rcv_response(ch, now, buf, cap, info);
		if (len)
			return len;
	}
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = (ep->rr + k) % n;
		struct tp_chan *ch = ep->chans[i];
		size_t len;

		if (!ch->connected || ch->failed)
			continue;
		len = tp_snd_data(ch, now, buf, cap, info);
		if (len) {
			tp_cc_tx_data(ch, now, info);
			ep->rr = (i + 1) % n;
			return len;
		}
	}
	return 0;
}

void tp_ep_tick(struct tp_ep *ep, uint64_t now)
{
	for (uint32_t i = 0; i < ep->nchans; i++) {
		struct tp_chan *ch = ep->chans[i];

		if (!ch->connected || ch->failed)
			continue;
		tp_rcv_tick(ch, now);
		tp_snd_tick(ch, now);
		if (tp_is_ctp(ch))
			tp_ctp_tick(ch, now);
	}
}

uint64_t tp_ep_deadlines(const struct tp_ep *ep, uint64_t *loss)
{
	uint64_t d = UINT64_MAX, l = UINT64_MAX, x;

	for (uint32_t i = 0; i < ep->nchans; i++) {
		const struct tp_chan *ch = ep->chans[i];

		if (!ch->connected || ch->failed)
			continue;
		x = tp_rcv_deadline(ch);
		if (x < d)
			d = x;
		x = tp_snd_exact_deadline(ch);
		if (x < d)
			d = x;
		x = tp_is_ctp(ch) ? tp_ctp_deadline(ch) : UINT64_MAX;
		if (x < d)
			d = x;
		x = tp_snd_loss_deadline(ch);
		if (x < l)
			l = x;
	}
	*loss = l;
	return d;
}

uint64_t tp_ep_next_deadline(const struct tp_ep *ep)
{
	uint64_t l, d = tp_ep_deadlines(ep, &l);

	return d < l ? d : l;
}

/* ---- statistics ------------------------------------------------------------ */

#define TP_STAT_NAME(name, text) #name,
#define TP_STAT_DESC(name, text) text,
static const char *const stat_names[] = { TP_STATS(TP_STAT_NAME) };
static const char *const stat_descs[] = { TP_STATS(TP_STAT_DESC) };

size_t tp_stats_count(void) { return sizeof(stat_names) / sizeof(stat_names[0]); }
const char *tp_stats_name(size_t i) { return i < tp_stats_count() ? stat_names[i] : NULL; }
const char *tp_stats_desc(size_t i) { return i < tp_stats_count() ? stat_descs[i] : NULL; }
uint64_t tp_stats_get(const struct tp_stats *st, size_t i)
{
	return i < tp_stats_count() ? ((const uint64_t *)st)[i] : 0;
}

void tp_chan_stats(const struct tp_chan *ch, struct tp_stats *st)
{
	*st = ch->st;
	st->srtt_ns = ch->srtt;
	st->high_rtx_psn = ch->rtx_round ? ch->high_rtx : 0;
	st->mark_psn = ch->mark_valid ? ch->mark_psn : 0;
	st->min_rtt_ns = ch->min_rtt;
	st->min_rtt_win_ns = ch->min_rtt_win;
}

void tp_ep_stats(const struct tp_ep *ep, struct tp_stats *st)
{
	uint64_t *d = (uint64_t *)st;

	*st = ep->gone;
	for (uint32_t i = 0; i < ep->nchans; i++) {
		const struct tp_chan *ch = ep->chans[i];

		for (size_t k = 0; k < tp_stats_count(); k++)
			d[k] += tp_stats_get(&ch->st, k);
		st->srtt_ns = ch->srtt;
		st->rto_ns = ch->st.rto_ns;
		st->min_rtt_ns = ch->min_rtt;
		st->min_rtt_win_ns = ch->min_rtt_win;
		st->reo_wnd_ns = ch->st.reo_wnd_ns;
	}
}
