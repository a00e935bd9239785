// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubperf client and server: channels over the UBoE endpoint (ep.h), set up
 * through the TCP control connection, then driven until the time or count is
 * reached. Every failure path ends in one line on stderr and exit status 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "ep.h"
#include "ubperf.h"

#define MAX_LAT_SAMPLES	(4u << 20)

static const char *const op_names[] = { "send", "write", "read" };
static const char *const ta_names[] = { "rol", "roi", "rot" };

struct run {
	const struct ubperf_opts *o;
	const char *who;
	struct ep *ep;
	struct ep_peer peer;
	struct ep_chan ch[UBPERF_MAX_CHANS];
	uint8_t *buf;		/* message source / destination / registered region */
	size_t buf_len;
	int ctl;
	/* client */
	uint64_t *post_ns;	/* [chan * depth + slot] */
	uint32_t *outstanding;	/* per channel */
	uint64_t *free_slots;	/* bitmap per channel (depth <= 64 per word, 4 words) */
	uint64_t *lat;
	size_t nlat;
	uint64_t messages, bytes, posted;
	uint64_t seq[UBPERF_MAX_CHANS];		/* next Send sequence number (client) or expected (server) */
	uint64_t bad_seq, corrupt, lost;	/* server: Sends out of order / with wrong bytes / missing (UTP) */
	uint64_t t_start, t_end, last_progress;
	uint32_t token;
	uint64_t va;
	struct tp_cc *cc[UBPERF_MAX_CHANS];	/* --cc: one instance per channel */
	struct tpg *g;				/* --lb: the channels as one group */
};

static int fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ubperf %s: ", r->who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static void chan_config(const struct ubperf_opts *o, struct tp_chan_config *cc)
{
	memset(cc, 0, sizeof(*cc));
	cc->mode = o->mode;
	cc->ta_mode = o->ta;
	cc->mtu = o->mtu;
	cc->window = o->window;
	cc->max_ops = o->depth * 2 + 8;
	if (o->rto_ns) {
		cc->rto_mode = TP_RTO_STATIC;
		cc->rto_static_ns = o->rto_ns;
	} else {
		cc->rto_mode = TP_RTO_DYNAMIC;
		cc->rto_min_ns = o->rto_min_ns;
	}
}

static int open_ep(struct run *r)
{
	struct ep_config ec = { 0 };
	char err[256];

	ec.dev = r->o->dev;
	ec.generic = r->o->generic;
	ec.zerocopy = r->o->zerocopy;
	ec.native = r->o->native;
	ec.nexthop_mac_set = r->o->nexthop_mac_set;
	memcpy(ec.nexthop_mac, r->o->nexthop_mac, 6);
	ec.tp.seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	ec.tp.max_chans = UBPERF_MAX_CHANS + 1;
	ec.tp.max_mrs = 4;
	r->ep = ep_open(&ec, err, sizeof(err));
	return r->ep ? 0 : fail(r, "%s", err);
}

static int make_chans(struct run *r)
{
	struct tpg_config gc = { .lb = r->o->lb };

	r->g = tpg_create(&gc);
	if (!r->g)
		return fail(r, "cannot create the channel group: %s", strerror(errno));
	for (uint32_t i = 0; i < r->o->channels; i++) {
		struct tp_chan_config cc;
		struct tp_cc_config ccc = { .algo = r->o->cc, .mtu = r->o->mtu };

		chan_config(r->o, &cc);
		tpg_prepare(r->g, &cc, &ccc, 1);
		if (r->o->cc != TP_CC_NONE) {
			r->cc[i] = tp_cc_create(&ccc);
			if (!r->cc[i])
				return fail(r, "cannot create %s for channel %u: %s",
					    tp_cc_algo_name(r->o->cc), i, strerror(errno));
			tp_cc_attach(r->cc[i], &cc);
		}
		r->ch[i].peer = &r->peer;
		r->ch[i].app = (void *)(uintptr_t)i;
		r->ch[i].tpg = r->o->lb == TPG_LB_PACKET ? r->g : NULL;
		if (!ep_chan_create(r->ep, &r->ch[i], &cc))
			return fail(r, "cannot create TP channel %u: %s", i, strerror(errno));
		tpg_add(r->g, r->ch[i].tp);
	}
	return 0;
}

static void cc_totals(const struct run *r, uint64_t *sent, uint64_t *rcvd)
{
	*sent = *rcvd = 0;
	for (uint32_t i = 0; i < UBPERF_MAX_CHANS; i++) {
		struct tp_cc_stats st;

		if (!r->cc[i])
			continue;
		tp_cc_get_stats(r->cc[i], &st);
		*sent += st.cnp_sent;
		*rcvd += st.cnp_rcvd;
	}
}

static void cleanup(struct run *r)
{
	for (uint32_t i = 0; i < UBPERF_MAX_CHANS; i++)
		if (r->ch[i].tp)
			tp_chan_destroy(r->ch[i].tp);
	for (uint32_t i = 0; i < UBPERF_MAX_CHANS; i++)
		tp_cc_destroy(r->cc[i]);
	tpg_destroy(r->g);
	ep_close(r->ep);
	if (r->ctl >= 0)
		close(r->ctl);
	free(r->buf);
	free(r->post_ns);
	free(r->outstanding);
	free(r->free_slots);
	free(r->lat);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct_us(const uint64_t *v, size_t n, double p)
{
	size_t i;

	if (!n)
		return 0;
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return (double)v[i] / 1000.0;
}

/* Closes the summary object: what each channel sent, delivered and its CC saw. */
static void per_channel_json(const struct run *r, double secs)
{
	printf(", \"per_channel\": [");
	for (uint32_t i = 0; i < r->o->channels; i++) {
		struct tp_cc_stats cs = { 0 };
		struct tp_stats ts;

		tp_chan_stats(r->ch[i].tp, &ts);
		if (r->cc[i])
			tp_cc_get_stats(r->cc[i], &cs);
		printf("%s{\"sent_bps\": %.0f, \"delivered_bps\": %.0f, \"cnp_sent\": %" PRIu64
		       ", \"cnp_received\": %" PRIu64 ", \"rate_bps\": %" PRIu64 ", \"cw\": %" PRIu64
		       "}", i ? ", " : "", secs > 0 ? (double)ts.tx_bytes * 8 / secs : 0,
		       secs > 0 ? (double)ts.bytes_delivered * 8 / secs : 0, cs.cnp_sent,
		       cs.cnp_rcvd, r->o->cc == TP_CC_DCQCN ? cs.rate_bps : 0, cs.cw);
	}
	printf("]}\n");
}

static void report(struct run *r, uint64_t peer_messages, bool server)
{
	const struct ubperf_opts *o = r->o;
	double secs = (double)(r->t_end - r->t_start) / 1e9;
	double bps = secs > 0 ? (double)r->bytes * 8 / secs : 0;
	struct tp_stats ts;
	struct ep_stats es;
	uint64_t rtx, cnp_sent, cnp_rcvd;

	tp_ep_stats(ep_tp(r->ep), &ts);
	ep_get_stats(r->ep, &es);
	rtx = ts.rtx_rto + ts.rtx_nak + ts.rtx_sack + ts.rtx_mark;
	cc_totals(r, &cnp_sent, &cnp_rcvd);
	qsort(r->lat, r->nlat, sizeof(r->lat[0]), cmp_u64);
	if (o->json) {
		printf("{\"role\": \"%s\", \"mode\": \"%s\", \"op\": \"%s\", \"ta\": \"%s\", "
		       "\"size\": %u, \"channels\": %u, \"duration_s\": %.6f, "
		       "\"goodput_bps\": %.0f, \"messages\": %" PRIu64 ", \"bytes\": %" PRIu64 ", "
		       "\"peer_messages\": %" PRIu64 ", "
		       "\"retransmissions\": {\"total\": %" PRIu64 ", \"rto\": %" PRIu64
		       ", \"nak\": %" PRIu64 ", \"sack\": %" PRIu64 ", \"mark\": %" PRIu64 "}, "
		       "\"rto_fired\": %" PRIu64 ", \"ecn_ce\": %" PRIu64 ", \"core_ecn_ce\": %" PRIu64 ", "
		       "\"icrc_bad\": %" PRIu64 ", "
		       "\"latency_us\": {\"p50\": %.1f, \"p99\": %.1f, \"p999\": %.1f}, "
		       "\"frames\": {\"rx\": %" PRIu64 ", \"tx\": %" PRIu64 "}, "
		       "\"out_of_order\": %" PRIu64 ", \"corrupt\": %" PRIu64 ", "
		       "\"cc\": \"%s\", \"lb\": \"%s\", \"cnp\": {\"sent\": %" PRIu64
		       ", \"received\": %" PRIu64 "}",
		       server ? "server" : "client", tp_mode_name(o->mode), op_names[o->op],
		       ta_names[o->ta], o->size, o->channels, secs, bps, r->messages, r->bytes,
		       peer_messages, rtx, ts.rtx_rto, ts.rtx_nak, ts.rtx_sack, ts.rtx_mark,
		       ts.rto_fired, es.ce_marked, ts.rx_ecn_ce, es.icrc_bad, pct_us(r->lat, r->nlat, 0.5),
		       pct_us(r->lat, r->nlat, 0.99), pct_us(r->lat, r->nlat, 0.999),
		       es.rx_frames, es.tx_frames, r->bad_seq, r->corrupt, tp_cc_algo_name(o->cc),
		       tpg_lb_name(o->lb), cnp_sent, cnp_rcvd);
		per_channel_json(r, secs);
		return;
	}
	printf("ubperf %s: %s %s/%s, %u B x %u channel(s), %.2f s\n", server ? "server" : "client",
	       tp_mode_name(o->mode), op_names[o->op], ta_names[o->ta], o->size, o->channels, secs);
	printf("  messages %" PRIu64 " (peer counted %" PRIu64 "), %.1f MB, goodput %.1f Mbit/s\n",
	       r->messages, peer_messages, (double)r->bytes / 1e6, bps / 1e6);
	if (r->nlat)
		printf("  latency us: p50 %.1f  p99 %.1f  p99.9 %.1f\n", pct_us(r->lat, r->nlat, 0.5),
		       pct_us(r->lat, r->nlat, 0.99), pct_us(r->lat, r->nlat, 0.999));
	printf("  retransmissions %" PRIu64 " (rto %" PRIu64 ", nak %" PRIu64 ", sack %" PRIu64
	       ", mark %" PRIu64 "), RTO fired %" PRIu64 "\n", rtx, ts.rtx_rto, ts.rtx_nak,
	       ts.rtx_sack, ts.rtx_mark, ts.rto_fired);
	printf("  frames rx %" PRIu64 " tx %" PRIu64 ", ECN CE %" PRIu64 ", bad ICRC %" PRIu64
	       ", TP dropped %" PRIu64 "\n", es.rx_frames, es.tx_frames, es.ce_marked, es.icrc_bad,
	       es.tp_drop);
	if (o->cc != TP_CC_NONE || o->lb != TPG_LB_FLOW)
		printf("  cc %s, lb %s: CNPs sent %" PRIu64 ", received %" PRIu64 "\n",
		       tp_cc_algo_name(o->cc), tpg_lb_name(o->lb), cnp_sent, cnp_rcvd);
	if (o->verbose) {
		printf("    tx ring full %" PRIu64 ", no free frame %" PRIu64 ", AF_XDP rx dropped %" PRIu64
		       " rx ring full %" PRIu64 " fill ring empty %" PRIu64 "\n", es.tx_ring_full,
		       es.no_frame, es.xsk_rx_dropped, es.xsk_rx_ring_full, es.xsk_fill_empty);
		for (size_t i = 0; i < tp_stats_count(); i++)
			if (tp_stats_get(&ts, i))
				printf("    %-18s %12" PRIu64 "  %s\n", tp_stats_name(i),
				       tp_stats_get(&ts, i), tp_stats_desc(i));
		printf("    srtt_us %.1f rto_us %.1f\n", (double)ts.srtt_ns / 1e3, (double)ts.rto_ns / 1e3);
	}
}

/* An event that ends the run: a failed channel or operation. */
static int event_error(struct run *r, const struct tp_event *ev)
{
	uintptr_t i = (uintptr_t)((struct ep_chan *)ev->user)->app;

	if (ev->type == TP_EV_CHAN_ERROR)
		return fail(r, "channel %u failed: %s (the peer stopped answering)", (unsigned)i,
			    tp_status_name(ev->status));
	return fail(r, "channel %u: operation failed: %s", (unsigned)i, tp_status_name(ev->status));
}

/* ---- client --------------------------------------------------------------- */

/* Message bytes: a fixed pattern the server checks, after the sequence number. */
static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 7 + 1);
}

static bool is_pattern(const uint8_t *m, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (m[i] != pattern(i))
			return false;
	return true;
}

static int post_one(struct run *r, uint32_t c, uint32_t slot)
{
	uint64_t wr = (uint64_t)c << 32 | slot;
	struct tp_chan *ch = r->ch[c].tp;
	uint8_t *msg = r->buf + ((size_t)c * r->o->depth + slot) * r->o->size;
	int rc;

	switch (r->o->op) {
	case OP_SEND:
		/* Each Send carries its channel's sequence number: the server
		 * checks every message arrives exactly once and in order. */
		if (r->o->size >= 8)
			memcpy(msg, &r->seq[c], 8);
		rc = tp_post_send(ch, msg, r->o->size, wr);
		if (!rc)
			r->seq[c]++;
		break;
	case OP_WRITE:
		rc = tp_post_write(ch, msg, r->o->size, r->va, r->token, wr);
		break;
	default:
		memset(msg, 0, r->o->size);	/* so a Read that lands nothing shows */
		rc = tp_post_read(ch, msg, r->o->size, r->va, r->token, wr);
		break;
	}
	if (!rc)
		r->post_ns[c * r->o->depth + slot] = ep_now_ns();
	return rc;
}

static bool more_to_post(const struct run *r, uint64_t now)
{
	if (r->o->count)
		return r->posted < r->o->count;
	return now < r->t_start + (uint64_t)(r->o->seconds * 1e9);
}

static int client_loop(struct run *r)
{
	const struct ubperf_opts *o = r->o;
	uint64_t outstanding = 0, stall_ns = (uint64_t)(o->stall_s * 1e9);
	struct tp_event ev;

	r->t_start = r->last_progress = ep_now_ns();
	for (;;) {
		uint64_t now = ep_now_ns();

		for (uint32_t c = 0; c < o->channels && more_to_post(r, now); c++) {
			for (uint32_t s = 0; s < o->depth && more_to_post(r, now); s++) {
				uint64_t *w = &r->free_slots[c * 4 + s / 64], bit = 1ull << (s % 64);
				int rc;

				if (!(*w & bit))
					continue;
				rc = post_one(r, c, s);
				if (rc == -EAGAIN)
					break;
				if (rc)
					return fail(r, "channel %u: posting failed: %s", c, strerror(-rc));
				*w &= ~bit;
				outstanding++;
				r->posted++;
			}
		}
		if (!outstanding && !more_to_post(r, now))
			break;
		ep_progress(r->ep, 1);
		while (tp_ep_poll(ep_tp(r->ep), &ev)) {
			uint32_t c, s;

			if (ev.type == TP_EV_CHAN_ERROR || ev.status != TP_ST_OK)
				return event_error(r, &ev);
			if (ev.type != TP_EV_SEND_DONE && ev.type != TP_EV_WRITE_DONE &&
			    ev.type != TP_EV_READ_DONE)
				continue;
			c = (uint32_t)(ev.wr_id >> 32);
			s = (uint32_t)ev.wr_id;
			if (c >= o->channels || s >= o->depth)
				continue;
			/* A Read brings the server's region: the pattern, every byte. */
			if (ev.type == TP_EV_READ_DONE &&
			    !is_pattern(r->buf + ((size_t)c * o->depth + s) * o->size, o->size))
				r->corrupt++;
			now = ep_now_ns();
			if (r->nlat < MAX_LAT_SAMPLES)
				r->lat[r->nlat++] = now - r->post_ns[c * o->depth + s];
			r->free_slots[c * 4 + s / 64] |= 1ull << (s % 64);
			outstanding--;
			r->messages++;
			r->bytes += o->size;
			r->last_progress = now;
		}
		if (outstanding && ep_now_ns() - r->last_progress > stall_ns)
			return fail(r, "peer stopped answering: no completion for %.1f s "
				    "(%" PRIu64 " operations outstanding)", o->stall_s, outstanding);
	}
	r->t_end = ep_now_ns();
	return 0;
}

int ubperf_client(const struct ubperf_opts *o)
{
	struct run r = { .o = o, .who = "client", .ctl = -1 };
	struct ctl_hello h = { 0 };
	struct ctl_welcome w;
	struct ctl_done d = { 0 }, pd;
	uint8_t ver, ip[16];
	char err[256];
	int rc = 1, wait_ms = (int)(o->wait_s * 1000);

	if (ctl_parse_addr(o->peer, &ver, ip)) {
		fprintf(stderr, "ubperf client: bad --peer address '%s'\n", o->peer);
		return 2;
	}
	r.buf_len = (size_t)o->channels * o->depth * o->size;
	r.buf = calloc(1, r.buf_len);
	r.post_ns = calloc((size_t)o->channels * o->depth, sizeof(uint64_t));
	r.outstanding = calloc(o->channels, sizeof(uint32_t));
	r.free_slots = calloc((size_t)o->channels * 4, sizeof(uint64_t));
	r.lat = malloc(MAX_LAT_SAMPLES * sizeof(uint64_t));
	if (!r.buf || !r.post_ns || !r.outstanding || !r.free_slots || !r.lat) {
		fail(&r, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < r.buf_len; i++)
		r.buf[i] = pattern(i % o->size);
	for (uint32_t c = 0; c < o->channels; c++)
		for (uint32_t s = 0; s < o->depth; s++)
			r.free_slots[c * 4 + s / 64] |= 1ull << (s % 64);
	if (open_ep(&r))
		goto out;
	if (ep_peer_init(r.ep, &r.peer, ver, ip, wait_ms, err, sizeof(err))) {
		fail(&r, "peer %s: %s", o->peer, err);
		goto out;
	}
	if (make_chans(&r))
		goto out;
	r.ctl = ctl_connect(ver, ip, o->port, wait_ms);
	if (r.ctl < 0) {
		fail(&r, "peer %s never answered (no ubperf server on TCP port %u: %s)", o->peer,
		     o->port, strerror(-r.ctl));
		goto out;
	}
	h.magic = UBPERF_MAGIC;
	h.mode = o->mode;
	h.op = o->op;
	h.ta = o->ta;
	h.size = o->size;
	h.channels = o->channels;
	h.mtu = o->mtu;
	h.window = o->window;
	h.depth = o->depth;
	h.rto_us = (uint32_t)(o->rto_ns / 1000);
	h.rto_min_us = (uint32_t)(o->rto_min_ns / 1000);
	h.cc = o->cc;
	h.lb = o->lb;
	for (uint32_t c = 0; c < o->channels; c++) {
		h.ch[c].tpn = tp_chan_tpn(r.ch[c].tp);
		h.ch[c].init_psn = tp_chan_init_psn(r.ch[c].tp);
	}
	ctl_hello_order(&h, true);
	if (ctl_send(r.ctl, &h, sizeof(h)) || ctl_recv(r.ctl, &w, sizeof(w), wait_ms)) {
		fail(&r, "peer %s never answered the control handshake", o->peer);
		goto out;
	}
	ctl_welcome_order(&w, false);
	if (w.magic != UBPERF_MAGIC || w.status) {
		fail(&r, "peer refused the test: %s", w.magic != UBPERF_MAGIC ? "not ubperf" :
		     strerror((int)w.status));
		goto out;
	}
	r.token = w.token;
	r.va = w.va;
	for (uint32_t c = 0; c < o->channels; c++) {
		int e = tp_chan_connect(r.ch[c].tp, w.ch[c].tpn, w.ch[c].init_psn);

		if (e) {
			fail(&r, "channel %u: connect: %s", c, strerror(-e));
			goto out;
		}
	}
	if (client_loop(&r))
		goto out;
	d.magic = UBPERF_MAGIC;
	d.messages = r.messages;
	d.bytes = r.bytes;
	d.duration_ns = r.t_end - r.t_start;
	ctl_done_order(&d, true);
	if (ctl_send(r.ctl, &d, sizeof(d)) || ctl_recv(r.ctl, &pd, sizeof(pd), wait_ms)) {
		fail(&r, "peer %s did not confirm the end of the test", o->peer);
		goto out;
	}
	ctl_done_order(&pd, false);
	report(&r, pd.messages, false);
	if (r.corrupt) {
		fail(&r, "%" PRIu64 " Reads brought back wrong bytes", r.corrupt);
		goto out;
	}
	if (pd.failed) {
		fail(&r, "the server reports a failure");
		goto out;
	}
	rc = 0;
out:
	cleanup(&r);
	return rc;
}

/* ---- server ----------------------------------------------------------------- */

static int post_recvs(struct run *r, uint32_t c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		size_t slot = (size_t)c * r->o->depth * 2 + i % (r->o->depth * 2);
		int rc = tp_post_recv(r->ch[c].tp, r->buf + slot * r->o->size, r->o->size, slot);

		if (rc == -EAGAIN)
			break;
		if (rc)
			return rc;
	}
	return 0;
}

static void check_message(struct run *r, uint32_t c, const uint8_t *m, size_t len)
{
	uint64_t seq;

	if (len != r->o->size) {
		r->corrupt++;
		return;
	}
	if (len >= 8) {
		memcpy(&seq, m, 8);
		/* UTP may lose messages (a gap) but never repeat or reorder them. */
		if (seq < r->seq[c] || (seq > r->seq[c] && r->o->mode != TP_MODE_UTP))
			r->bad_seq++;
		else
			r->lost += seq - r->seq[c];
		r->seq[c] = seq + 1;
	}
	for (size_t i = 8; i < len; i++)
		if (m[i] != pattern(i)) {
			r->corrupt++;
			return;
		}
}

static int server_loop(struct run *r)
{
	const struct ubperf_opts *o = r->o;
	uint64_t idle_ns = (uint64_t)((o->stall_s > 10 ? o->stall_s : 10) * 1e9), last_rx = 0;
	struct tp_event ev;
	struct ep_stats es;

	r->last_progress = ep_now_ns();
	for (;;) {
		uint64_t now;

		ep_progress(r->ep, 1);
		while (tp_ep_poll(ep_tp(r->ep), &ev)) {
			uint32_t c = (uint32_t)(uintptr_t)((struct ep_chan *)ev.user)->app;

			if (ev.type == TP_EV_CHAN_ERROR)
				return event_error(r, &ev);
			if (ev.type != TP_EV_RECV)
				continue;
			now = ep_now_ns();
			if (!r->messages)
				r->t_start = now;
			r->t_end = now;
			r->messages++;
			r->bytes += ev.len;
			check_message(r, c, r->buf + ev.wr_id * o->size, ev.len);
			tp_post_recv(r->ch[c].tp, r->buf + ev.wr_id * o->size, o->size, ev.wr_id);
		}
		ep_get_stats(r->ep, &es);
		now = ep_now_ns();
		if (es.rx_frames != last_rx) {
			last_rx = es.rx_frames;
			r->last_progress = now;
		}
		if (ctl_readable(r->ctl))
			return 0;	/* the client's DONE, or its disappearance */
		if (now - r->last_progress > idle_ns)
			return fail(r, "client stopped sending: nothing received for %.0f s",
				    (double)idle_ns / 1e9);
	}
}

int ubperf_server(const struct ubperf_opts *o)
{
	struct run r = { .o = o, .who = "server", .ctl = -1 };
	struct ubperf_opts so = *o;
	struct ctl_hello h;
	struct ctl_welcome w = { 0 };
	struct ctl_done d, md = { 0 };
	uint8_t ver, ip[16];
	char err[256], peer_s[64];
	int rc = 1, lfd = -1;

	r.lat = NULL;
	if (open_ep(&r))
		goto out;
	lfd = ctl_listen(o->port);
	if (lfd < 0) {
		fail(&r, "cannot listen on TCP port %u: %s", o->port, strerror(-lfd));
		goto out;
	}
	if (!o->json)
		printf("ubperf server: listening on %s, control TCP port %u\n", o->dev, o->port);
	fflush(stdout);
	r.ctl = ctl_accept(lfd, (int)(o->wait_s * 1000), &ver, ip);
	if (r.ctl < 0) {
		fail(&r, "no client within %.0f s", o->wait_s);
		goto out;
	}
	inet_ntop(ver == 6 ? AF_INET6 : AF_INET, ip, peer_s, sizeof(peer_s));
	if (ctl_recv(r.ctl, &h, sizeof(h), 5000)) {
		fail(&r, "client %s sent no test description", peer_s);
		goto out;
	}
	ctl_hello_order(&h, false);
	if (h.magic != UBPERF_MAGIC || h.channels == 0 || h.channels > UBPERF_MAX_CHANS ||
	    h.mode > TP_MODE_UTP || h.op > OP_READ || h.ta > TP_TA_ROT || h.size == 0 ||
	    h.size > (64u << 20) || h.depth == 0 || h.depth > 256 || h.mtu < 64 || h.mtu > 3072 ||
	    h.window == 0 || h.window >= TP_PSN_HALF || h.cc > TP_CC_CAQM || h.lb > TPG_LB_PACKET) {
		fail(&r, "client %s sent a bad test description", peer_s);
		goto out;
	}
	so.mode = (enum tp_mode)h.mode;
	so.op = (enum ubperf_op)h.op;
	so.ta = (enum tp_ta_mode)h.ta;
	so.size = h.size;
	so.channels = h.channels;
	so.mtu = h.mtu;
	so.window = h.window;
	so.depth = h.depth;
	so.rto_ns = (uint64_t)h.rto_us * 1000;
	so.rto_min_ns = (uint64_t)h.rto_min_us * 1000;
	so.cc = (enum tp_cc_algo)h.cc;
	so.lb = (enum tpg_lb)h.lb;
	r.o = &so;
	/* Send: depth x 2 receive buffers per channel; Write/Read: one region. */
	r.buf_len = so.op == OP_SEND ? (size_t)so.channels * so.depth * 2 * so.size : so.size;
	r.buf = calloc(1, r.buf_len);
	if (!r.buf) {
		fail(&r, "out of memory for %zu bytes of buffers", r.buf_len);
		goto out;
	}
	if (ep_peer_init(r.ep, &r.peer, ver, ip, 5000, err, sizeof(err))) {
		fail(&r, "client %s: %s", peer_s, err);
		goto out;
	}
	if (make_chans(&r))
		goto out;
	w.magic = UBPERF_MAGIC;
	for (uint32_t c = 0; c < so.channels; c++) {
		int e = tp_chan_connect(r.ch[c].tp, h.ch[c].tpn, h.ch[c].init_psn);

		if (!e && so.op == OP_SEND)
			e = post_recvs(&r, c, so.depth * 2);
		if (e) {
			w.status = (uint32_t)-e;
			break;
		}
		w.ch[c].tpn = tp_chan_tpn(r.ch[c].tp);
		w.ch[c].init_psn = tp_chan_init_psn(r.ch[c].tp);
	}
	if (!w.status && so.op != OP_SEND) {
		int e;

		/* Reads fetch the pattern; Writes must leave it there (checked at the end). */
		for (size_t i = 0; i < r.buf_len; i++)
			r.buf[i] = so.op == OP_READ ? pattern(i) : 0;
		e = tp_mr_reg(ep_tp(r.ep), r.buf, r.buf_len, &w.token);

		w.status = e ? (uint32_t)-e : 0;
		w.va = (uintptr_t)r.buf;
		w.mr_len = (uint32_t)r.buf_len;
	}
	ctl_welcome_order(&w, true);
	if (ctl_send(r.ctl, &w, sizeof(w)) || w.status) {
		fail(&r, "could not set up the test with client %s", peer_s);
		goto out;
	}
	if (server_loop(&r))
		goto out;
	if (ctl_recv(r.ctl, &d, sizeof(d), 1000)) {
		fail(&r, "client %s went away before the end of the test", peer_s);
		goto out;
	}
	ctl_done_order(&d, false);
	/* Every Write carried the pattern: the region must hold it now. */
	if (so.op == OP_WRITE && d.messages && !is_pattern(r.buf, r.buf_len))
		r.corrupt++;
	/* One-sided operations leave no trace here: count what the client did. */
	if (so.op != OP_SEND) {
		r.messages = d.messages;
		r.bytes = d.bytes;
		r.t_start = 0;
		r.t_end = d.duration_ns;
	}
	md.magic = UBPERF_MAGIC;
	md.messages = r.messages;
	md.bytes = r.bytes;
	md.failed = r.bad_seq || r.corrupt;
	ctl_done_order(&md, true);
	ctl_send(r.ctl, &md, sizeof(md));
	report(&r, d.messages, true);
	if (r.bad_seq || r.corrupt) {
		fail(&r, "%" PRIu64 " messages out of order or duplicated, %" PRIu64 " corrupt",
		     r.bad_seq, r.corrupt);
		goto out;
	}
	rc = 0;
out:
	if (lfd >= 0)
		close(lfd);
	cleanup(&r);
	return rc;
}
