// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubperf client and server: channels over the UBoE endpoint (ep.h), set up
 * in band (each channel's hello over UTP, retried, answered by the server,
 * carrying the run; ctl.h), then driven until the time or count is reached,
 * and the end-of-run counts exchanged the same way. Every failure path ends
 * in one line on stderr and exit status 1. This is the session core both
 * sides share (session.h); client.c and server.c drive it.
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

#include <json-c/json.h>

#include "io/caqm_pins.h"
#include "ubperf/ctl.h"
#include "endpoint/ep.h"
#include "lib/exit_codes.h"
#include "ubperf/payload.h"
#include "ubperf/series.h"
#include "ubperf/session.h"
#include "ubperf/ubperf.h"

static const char *const op_names[] = { "send", "write", "read" };
static const char *const ta_names[] = { "rol", "roi", "rot" };

int run_fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ubperf %s: ", r->who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static bool ctl_rx(void *ctx, const uint8_t *tp, size_t len, uint8_t ver, const uint8_t ip[16]);

bool run_ctp_entity(const struct ubperf_opts *o)
{
	return o->mode == TP_MODE_CTP && o->ndevs > 1;
}

static void chan_config(const struct ubperf_opts *o, struct tp_chan_config *cc)
{
	memset(cc, 0, sizeof(*cc));
	cc->mode = o->mode;
	cc->ta_mode = o->ta;
	cc->mtu = o->mtu;
	cc->window = o->window;
	cc->max_ops = o->depth * 2 + 8;
	/* SR finds losses by time too (RACK, TLP, D-SACK: docs/TRANSPORT.md),
	 * per flow as well as sprayed: lost resends and tails without an RTO. */
	cc->rack = o->mode == TP_MODE_RTP_SR;
	if (o->mode == TP_MODE_RTP_SR)	/* a quarter window past a hole, both ends alike */
		tp_chan_span(cc, o->window + o->window / 4);
	if (o->mode == TP_MODE_CTP)	/* no retransmission: --rto bounds the wait for an answer */
		cc->ta_timeout_ns = o->rto_ns ? o->rto_ns : 1000000000ull;
	/* Each field the other mode leaves unused; 0 is the core's default. */
	cc->rto_mode = o->rto_ns ? TP_RTO_STATIC : TP_RTO_DYNAMIC;
	cc->rto_static_ns = o->rto_ns;
	cc->rto_min_ns = o->rto_min_ns;
	cc->retry_time_ns = (uint64_t)(o->stall_s * 1e9);	/* stalled is not gone */
}

int run_open_ep(struct run *r)
{
	struct ep_config ec = { 0 };
	char err[256];

	pthread_mutex_init(&r->inbox_lock, NULL);	/* before any ctl_rx */
	ec.generic = r->o->generic;
	ec.xsk_mode = r->o->xsk_mode;
	ec.native = r->o->native;
	ec.nexthop_mac_set = r->o->nexthop_mac_set;
	memcpy(ec.nexthop_mac, r->o->nexthop_mac, 6);
	ec.tp.seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	ec.tp.max_chans = UBPERF_MAX_CHANS + 1;
	ec.tp.max_mrs = 4;
	/* A wrong --stage-pin is said before the test, not after it. */
	if (r->o->stage_pin) {
		if (caqm_pins_open(r->o->stage_pin, &r->stage_budget_fd, &r->stage_stats_fd, err,
				   sizeof(err)))
			return run_fail(r, "--stage-pin: %s", err), UB_EXIT_NOTFOUND;
		r->has_stage = true;
	}
	if (run_ctp_entity(r->o)) {
		/* CTP: the ports are one entity behind one transport core. */
		ec.dev = r->o->devs[0];
		ec.nmembers = r->o->ndevs;
		memcpy(ec.members, r->o->devs, sizeof(ec.members[0]) * r->o->ndevs);
		r->ep[0] = ep_open(&ec, err, sizeof(err));
		if (!r->ep[0])
			return run_fail(r, "%s", err), UB_EXIT_KERNEL;
		r->nep = 1;
		r->hook[0] = (struct hook){ .r = r, .k = 0 };
		ep_set_ctl(r->ep[0], ctl_rx, &r->hook[0]);	/* setup on the first member */
		return 0;
	}
	if (r->o->workers > 1) {
		/* Workers: ports of one device, each driven by a thread of its own in the loops. */
		ec.dev = r->o->devs[0];
		ec.workers = r->o->workers;
		r->ep[0] = ep_open(&ec, err, sizeof(err));
		if (!r->ep[0])
			return run_fail(r, "%s", err), UB_EXIT_KERNEL;
		for (; r->nep < r->o->workers; r->nep++) {
			r->ep[r->nep] = ep_worker(r->ep[0], r->nep);
			r->hook[r->nep] = (struct hook){ .r = r, .k = r->nep };
			ep_set_ctl(r->ep[r->nep], ctl_rx, &r->hook[r->nep]);
		}
		return 0;
	}
	for (; r->nep < r->o->ndevs; r->nep++) {
		ec.dev = r->o->devs[r->nep];
		r->ep[r->nep] = ep_open(&ec, err, sizeof(err));
		if (!r->ep[r->nep])
			return run_fail(r, "%s", err), UB_EXIT_KERNEL;
		r->hook[r->nep] = (struct hook){ .r = r, .k = r->nep };
		ep_set_ctl(r->ep[r->nep], ctl_rx, &r->hook[r->nep]);
	}
	return 0;
}

/* A hello the core must not see: kept for the loop (ctl_rx is called
 * inside ep_progress). A hello not ubperf's, or past a full inbox, is
 * dropped: its sender retries. */
static bool ctl_rx(void *ctx, const uint8_t *tp, size_t len, uint8_t ver, const uint8_t ip[16])
{
	struct hook *hk = ctx;
	struct run *r = hk->r;
	struct inbox_ent *e;
	struct tp_hello h;

	/* Most UTP packets are data (--mode utp): look at the magic first. */
	if (len < TP_HELLO_LEN || memcmp(tp + TP_HELLO_MAGIC_OFF, TP_HELLO_MAGIC, 4) ||
	    tp_hello_parse(tp, len, &h))
		return false;
	pthread_mutex_lock(&r->inbox_lock);
	e = &r->inbox[r->ninbox];
	if (r->ninbox < INBOX_MAX && !ctl_decode(h.app, h.app_len, h.reply, &e->m)) {
		e->h = h;
		e->h.app = NULL;
		e->k = hk->k;
		e->ver = ver;
		memcpy(e->ip, ip, 16);
		r->ninbox++;
	}
	pthread_mutex_unlock(&r->inbox_lock);
	return true;
}

int run_ctl_send(struct run *r, uint32_t k, struct ep_peer *p, const struct ep_chan *c,
		    uint32_t peer_tpn, bool reply, const struct ctl_msg *m)
{
	uint8_t app[64], pkt[TP_HELLO_LEN + 64];
	size_t a = ctl_encode(m, reply, app, sizeof(app));
	size_t n = a ? tp_hello_build_app(c->tp, peer_tpn, reply, app, a, pkt, sizeof(pkt)) : 0;

	return n ? ep_send_raw(r->ep[k], p, c->sport, pkt, n) : -EINVAL;
}

int run_init_peers(struct run *r, uint8_t ver, const uint8_t ip[16], int wait_ms,
		      const char *what)
{
	char err[256];

	for (; r->npeer < r->nep; r->npeer++) {
		r->peer_ep[r->npeer] = r->npeer;
		if (ep_peer_init(r->ep[r->npeer], &r->peer[r->npeer], ver, ip, wait_ms, err,
				 sizeof(err)))
			return run_fail(r, "%s via %s: %s", what, port_dev(r, r->npeer), err);
	}
	return 0;
}

struct ep_peer *run_peer_for(struct run *r, uint32_t k, uint8_t ver, const uint8_t ip[16],
				int wait_ms, char *err, size_t errlen)
{
	uint32_t i = 0;

	while (i < r->npeer && (r->peer_ep[i] != k || r->peer[i].ip_ver != ver ||
				memcmp(r->peer[i].ip, ip, ver == 6 ? 16 : 4)))
		i++;
	if (i < r->npeer)
		return &r->peer[i];
	if (i == UBPERF_MAX_PEERS) {
		snprintf(err, errlen, "more than %d addresses of the other side", UBPERF_MAX_PEERS);
		return NULL;
	}
	if (ep_peer_init(r->ep[k], &r->peer[i], ver, ip, wait_ms, err, errlen))
		return NULL;
	r->peer_ep[i] = k;
	r->npeer++;
	return &r->peer[i];
}

/* Channel c's port: each side spreads its channels over its ports. */

/*
 * A round's longest sleep: the loop's own checks need no finer time, nor do
 * --interval samples (10 an interval). The wake timer armed for it stays while
 * in its second half: at 1 ms a depth-1 server re-armed it every 0.5 ms, 11 us
 * on its turn each as the CPU's earliest timer; 5-10 ms ahead lies past the
 * next tick (HZ=250), 1.5 us (bench/README.md, part 5).
 */
static int run_wait_ms(const struct run *r)
{
	uint64_t ms = r->o->interval_ns / 10000000u;

	return !r->o->interval_ns || ms >= 10 ? 10 : ms ? (int)ms : 1;
}

/*
 * Every port a round. With several, none sleeps while another may have work;
 * when none had any, one wait on all their sockets until a frame or the
 * earliest timer (at most run_wait_ms, as one port's ep_progress waits).
 */
void run_progress(struct run *r)
{
	int moved = 0;

	if (r->nep == 1 || r->threaded) {
		ep_progress(r->ep[r->wk], run_wait_ms(r));
		return;
	}
	for (uint32_t k = 0; k < r->nep; k++)
		moved += ep_progress(r->ep[k], 0);
	if (!moved)
		ep_wait(r->ep, r->nep, (uint64_t)run_wait_ms(r) * 1000000u);
}

bool run_poll_event(struct run *r, struct tp_event *ev)
{
	if (r->threaded)
		return tp_ep_poll(ep_tp(r->ep[r->wk]), ev);
	for (uint32_t k = 0; k < r->nep; k++)
		if (tp_ep_poll(ep_tp(r->ep[k]), ev))
			return true;
	return false;
}

/* The ports opened: with workers, every one, those a run on worker 0
 * alone left idle too (what reached them is counted there). */
static uint32_t ports_open(const struct run *r)
{
	return r->o->workers > 1 ? r->o->workers : r->nep;
}

/* The ports' counters, summed (srtt/rto: the first port's). */
static void ports_stats(struct run *r, struct tp_stats *ts, struct ep_stats *es)
{
#define ONE(n, d) + 1
	/* Summed as an array: every field of struct ep_stats a uint64_t counter. */
	_Static_assert(sizeof(struct ep_stats) == sizeof(uint64_t) * (18 EP_RX_ERRORS(ONE)),
		       "struct ep_stats changed: is every field a counter to sum?");
#undef ONE
	tp_ep_stats(ep_tp(r->ep[0]), ts);
	ep_get_stats(r->ep[0], es);
	for (uint32_t k = 1; k < ports_open(r); k++) {
		struct tp_stats t;
		struct ep_stats e;

		tp_ep_stats(ep_tp(r->ep[k]), &t);
		ep_get_stats(r->ep[k], &e);
#define ADD_TP(n, d) ts->n += t.n;
		TP_STATS(ADD_TP)
#undef ADD_TP
		for (size_t i = 0; i < sizeof(e) / sizeof(uint64_t); i++)
			((uint64_t *)es)[i] += ((const uint64_t *)&e)[i];
	}
}

int run_make_chans(struct run *r)
{
	struct tpg_config gc = { .lb = r->o->lb };

	if (series_init(&r->ser, r->o->channels, r->o->cc, r->o->interval_ns))
		return run_fail(r, "out of memory for the --interval samples");
	r->g = tpg_create(&gc);
	if (!r->g)
		return run_fail(r, "cannot create the channel group: %s", strerror(errno));
	for (uint32_t i = 0; i < r->o->channels; i++) {
		struct tp_chan_config cc;
		struct tp_cc_config ccc = { .algo = r->o->cc, .mtu = r->o->mtu };

		/* CTP's CC is per {peer entity, VL}: a port's channels go to one
		 * peer on the native VL, so they share the port's instance. */
		uint32_t k = r->o->mode == TP_MODE_CTP ? port_of(r, i) : i;

		chan_config(r->o, &cc);
		tpg_prepare(r->g, &cc, &ccc, 1);
		if (r->o->cc != TP_CC_NONE) {
			if (!r->cc[k] && !(r->cc[k] = tp_cc_create(&ccc)))
				return run_fail(r, "cannot create %s for channel %u: %s",
					    tp_cc_algo_name(r->o->cc), i, strerror(errno));
			r->cc_of[i] = r->cc[k];
			tp_cc_attach(r->cc_of[i], &cc);
		}
		r->ch[i].peer = &r->peer[port_of(r, i)];
		r->ch[i].app = (void *)(uintptr_t)i;
		r->ch[i].tpg = r->o->lb == TPG_LB_PACKET ? r->g : NULL;
		if (!ep_chan_create(r->ep[port_of(r, i)], &r->ch[i], &cc))
			return run_fail(r, "cannot create TP channel %u: %s", i, strerror(errno));
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

/* The CC instances' cuts by cause (ECN feedback, RTO), summed. */
static void cc_cuts(const struct run *r, uint64_t *ecn, uint64_t *rto)
{
	*ecn = *rto = 0;
	for (uint32_t i = 0; i < UBPERF_MAX_CHANS; i++) {
		struct tp_cc_stats st;

		if (!r->cc[i])
			continue;
		tp_cc_get_stats(r->cc[i], &st);
		*ecn += st.ecn_cuts;
		*rto += st.rto_cuts;
	}
}

/* The server counts what arrived in order (Writes too); the client what completed. */
static void take_sample(const struct run *r, bool server, struct series_sample *s)
{
	for (uint32_t c = 0; c < r->o->channels; c++) {
		struct tp_cc_stats cs = { 0 };
		struct tp_stats ts;

		if (server) {
			tp_chan_stats(r->ch[c].tp, &ts);
			s[c].bytes = ts.bytes_delivered;
		} else {
			s[c].bytes = r->chan_bytes[c];
		}
		if (r->cc_of[c])
			tp_cc_get_stats(r->cc_of[c], &cs);
		s[c].cnp_sent = cs.cnp_sent;
		s[c].cnp_rcvd = cs.cnp_rcvd;
		s[c].rate_bps = cs.rate_bps;
		s[c].cw = cs.cw;
	}
}

/*
 * --interval: a row when one is due, and its line unless the output is JSON.
 * The baseline is zeros: nothing moved before the start (the client's) or
 * before the first frame (the server's, which counts that frame's batch).
 */
int run_sample_tick(struct run *r, bool server, uint64_t now)
{
	struct series_sample s[UBPERF_MAX_CHANS];

	if (!series_due(&r->ser, now))
		return 0;
	if (r->ser.n)
		take_sample(r, server, s);
	if (series_add(&r->ser, now, r->ser.n ? s : NULL))
		return run_fail(r, "out of memory for the --interval samples");
	if (!r->o->json)
		series_print_last(&r->ser, stdout);
	return 0;
}

void run_sample_end(struct run *r, bool server, uint64_t t_ns)
{
	struct series_sample s[UBPERF_MAX_CHANS];

	take_sample(r, server, s);
	series_end(&r->ser, t_ns, s);
}

void run_cleanup(struct run *r)
{
	for (uint32_t i = 0; i < UBPERF_MAX_CHANS; i++)
		if (r->ch[i].tp)
			tp_chan_destroy(r->ch[i].tp);
	for (uint32_t i = 0; i < UBPERF_MAX_CHANS; i++)
		tp_cc_destroy(r->cc[i]);
	tpg_destroy(r->g);
	for (uint32_t k = r->nep; k-- > 0;)	/* workers' (no-ops) before worker 0's, which frees them */
		ep_close(r->ep[k]);
	free(r->buf);
	free(r->post_ns);
	free(r->outstanding);
	free(r->free_slots);
	free(r->lat);
	series_free(&r->ser);
	if (r->has_stage) {
		close(r->stage_budget_fd);
		close(r->stage_stats_fd);
	}
}

#define RTX_TOTAL(t) ((t)->rtx_rto + (t)->rtx_nak + (t)->rtx_sack + (t)->rtx_mark + \
			(t)->rtx_answer + (t)->rtx_rack + (t)->rtx_path + (t)->rtx_tlp)

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

static void jset(struct json_object *o, const char *key, struct json_object *v)
{
	json_object_object_add(o, key, v);
}

static struct json_object *ju64(uint64_t v) { return json_object_new_uint64(v); }

static const char *jstr(struct json_object *o, const char *key)
{
	return json_object_get_string(json_object_object_get(o, key));
}

/* Bits per second are whole; other reals keep the digits fmt gives them. */
static struct json_object *jreal(double v, const char *fmt)
{
	char s[48];

	snprintf(s, sizeof(s), fmt, v);
	return json_object_new_double_s(v, s);
}

static struct json_object *jbps(uint64_t bytes, double secs)
{
	return jreal(secs > 0 ? (double)bytes * 8 / secs : 0, "%.0f");
}

/* CTP's CC instances, one per {peer entity, VL}: the port's (or the entity's)
 * first channel names the peer. */
static struct json_object *ctp_cc_json(const struct run *r)
{
	struct json_object *a = json_object_new_array();

	for (uint32_t k = 0; k < r->nep && k < r->o->channels; k++) {
		struct json_object *o = json_object_new_object();
		const struct ep_peer *p = r->ch[k].peer;
		char ip[INET6_ADDRSTRLEN];
		struct tp_cc_stats cs;

		tp_cc_get_stats(r->cc[k], &cs);
		inet_ntop(p->ip_ver == 6 ? AF_INET6 : AF_INET, p->ip, ip, sizeof(ip));
		jset(o, "dev", json_object_new_string(run_ctp_entity(r->o) ? r->o->dev : port_dev(r, k)));
		jset(o, "entity", json_object_new_string(ip));
		jset(o, "vl", ju64(r->o->native.vl));
		jset(o, "cnp_sent", ju64(cs.cnp_sent));
		jset(o, "cnp_received", ju64(cs.cnp_rcvd));
		jset(o, "ce_received", ju64(cs.ce_rcvd));
		jset(o, "rate_bps", ju64(cs.rate_bps));
		json_object_array_add(a, o);
	}
	return a;
}

/* What each channel sent, delivered and its CC saw, and over time with --interval. */
static struct json_object *per_channel_json(const struct run *r, double secs)
{
	struct json_object *a = json_object_new_array();

	for (uint32_t i = 0; i < r->o->channels; i++) {
		struct json_object *o = json_object_new_object();
		struct tp_cc_stats cs = { 0 };
		char ip[INET6_ADDRSTRLEN];
		struct tp_stats ts;

		tp_chan_stats(r->ch[i].tp, &ts);
		if (r->cc_of[i])
			tp_cc_get_stats(r->cc_of[i], &cs);
		inet_ntop(r->ch[i].peer->ip_ver == 6 ? AF_INET6 : AF_INET, r->ch[i].peer->ip, ip,
			  sizeof(ip));
		jset(o, "dev", json_object_new_string(port_dev(r, port_of(r, i))));
		if (r->o->workers > 1)
			jset(o, "worker", ju64(port_of(r, i)));
		jset(o, "peer", json_object_new_string(ip));
		jset(o, "sent_bps", jbps(ts.tx_bytes, secs));
		jset(o, "delivered_bps", jbps(ts.bytes_delivered, secs));
		jset(o, "cnp_sent", ju64(cs.cnp_sent));
		jset(o, "cnp_received", ju64(cs.cnp_rcvd));
		jset(o, "rate_bps", ju64(r->o->cc == TP_CC_DCQCN ? cs.rate_bps : 0));
		jset(o, "cw", ju64(cs.cw));
		jset(o, "ecn_cuts", ju64(cs.ecn_cuts));
		jset(o, "rto_cuts", ju64(cs.rto_cuts));
		if (series_on(&r->ser))
			jset(o, "series", series_json(&r->ser, i));
		json_object_array_add(a, o);
	}
	return a;
}

/*
 * Goodput counts what the receiver verified, each byte against the keyed
 * payload at its place: the server's Sends, the client's Reads. The server
 * sees no Write land, only its region at the end (every slot, by position;
 * the client fails the run unless each slot it used verified): Writes
 * count as they completed.
 */
static uint64_t goodput_bytes(const struct run *r, bool server)
{
	uint64_t peer = ctl_u64(r->peer_done.verified);

	switch (r->o->op) {
	case OP_SEND:
		return server ? r->verified : peer;
	case OP_READ:
		return server ? peer : r->verified;
	default:
		return r->bytes;	/* the server's: the client's count */
	}
}

/* The AF_XDP mode the kernel bound each port's sockets in. */
const char *run_xsk_mode(const struct run *r)
{
	uint32_t zc = 0;

	for (uint32_t k = 0; k < r->nep; k++)
		zc += ep_zerocopy(r->ep[k]);
	return zc && zc < r->nep ? "mixed" : xsk_mode_bound_name(zc);
}

static void report_json(struct run *r, uint64_t peer_messages, bool server, double secs,
			const struct tp_stats *ts, const struct ep_stats *es,
			struct json_object *stage)
{
	const struct ubperf_opts *o = r->o;
	struct json_object *j = json_object_new_object(), *x;
	uint64_t cnp_sent, cnp_rcvd, ecn_cuts, rto_cuts;

	cc_totals(r, &cnp_sent, &cnp_rcvd);
	jset(j, "role", json_object_new_string(server ? "server" : "client"));
	jset(j, "mode", json_object_new_string(tp_mode_name(o->mode)));
	jset(j, "op", json_object_new_string(op_names[o->op]));
	jset(j, "ta", json_object_new_string(ta_names[o->ta]));
	jset(j, "size", ju64(o->size));
	jset(j, "channels", ju64(o->channels));
	jset(j, "mtu", ju64(o->mtu));
	/* the AF_XDP mode the kernel bound, read back from it */
	jset(j, "xsk_mode", json_object_new_string(run_xsk_mode(r)));
	jset(j, "duration_s", jreal(secs, "%.6f"));
	jset(j, "goodput_bps", jbps(goodput_bytes(r, server), secs));
	jset(j, "messages", ju64(r->messages));
	/* user + system, every thread, while the loop ran (setup and teardown left out) */
	jset(j, "cpu_s", jreal((double)r->cpu_ns / 1e9, "%.6f"));
	jset(j, "bytes", ju64(r->bytes));
	jset(j, "peer_messages", ju64(peer_messages));
	/* each side's own count, and the other's from its DONE (UBPF_DONE_VERIFIED) */
	jset(j, "verified_bytes", ju64(r->verified));
	jset(j, "peer_verified_bytes", ju64(ctl_u64(r->peer_done.verified)));
	x = json_object_new_object();
	jset(x, "total", ju64(RTX_TOTAL(ts)));
	jset(x, "rto", ju64(ts->rtx_rto));
	jset(x, "nak", ju64(ts->rtx_nak));
	jset(x, "sack", ju64(ts->rtx_sack));
	jset(x, "mark", ju64(ts->rtx_mark));
	jset(x, "answer", ju64(ts->rtx_answer));
	jset(x, "rack", ju64(ts->rtx_rack));
	jset(x, "path", ju64(ts->rtx_path));
	jset(x, "tlp", ju64(ts->rtx_tlp));
	/* of all those, resends whose packet was acked too soon to be the resend */
	jset(x, "spurious", ju64(ts->rtx_spurious));
	jset(j, "retransmissions", x);
	jset(j, "rto_fired", ju64(ts->rto_fired));
	jset(j, "rto_spurious", ju64(ts->rto_spurious));
	/* RTOs the oldest packet's timing showed were delay or reordering alone */
	jset(j, "rto_undone", ju64(ts->rto_undone));
	jset(j, "reordered", ju64(ts->reo_seen));
	/* times the per-path loss rule went off (a port reordered), its proofs: TRANSPORT.md */
	jset(j, "path_rule_off", ju64(ts->path_rule_off));
	jset(j, "path_dsack", ju64(ts->path_dsack));
	jset(j, "duplicates_received", ju64(ts->rx_dup));
	jset(j, "ecn_ce", ju64(es->ce_marked));
	jset(j, "core_ecn_ce", ju64(ts->rx_ecn_ce));
	jset(j, "icrc_bad", ju64(es->icrc_bad));
	/* every frame the endpoint dropped, by why (EP_RX_ERRORS) */
	x = json_object_new_object();
#define RX_DROP_JSON(n, d) jset(x, #n, ju64(es->n));
	EP_RX_ERRORS(RX_DROP_JSON)
#undef RX_DROP_JSON
	jset(j, "rx_dropped", x);
	/* and those the kernel dropped before the endpoint saw them */
	jset(j, "xsk_rx_dropped", ju64(es->xsk_rx_dropped));
	jset(j, "xsk_rx_ring_full", ju64(es->xsk_rx_ring_full));
	jset(j, "xsk_fill_empty", ju64(es->xsk_fill_empty));
	/* the sockets whose queue another still held when the port opened */
	jset(j, "xsk_busy_binds", ju64(es->xsk_busy_binds));
	/* packets (jumbo frames) that came and went in several UMEM frames */
	jset(j, "rx_multi_buffer", ju64(es->rx_multi_buffer));
	jset(j, "tx_multi_buffer", ju64(es->tx_multi_buffer));
	jset(j, "tx_in_place", ju64(es->tx_in_place));
	jset(j, "rx_in_place", ju64(es->rx_in_place));
	x = json_object_new_object();
	jset(x, "p50", jreal(pct_us(r->lat, r->nlat, 0.5), "%.1f"));
	jset(x, "p99", jreal(pct_us(r->lat, r->nlat, 0.99), "%.1f"));
	jset(x, "p999", jreal(pct_us(r->lat, r->nlat, 0.999), "%.1f"));
	jset(j, "latency_us", x);
	x = json_object_new_object();
	jset(x, "rx", ju64(es->rx_frames));
	jset(x, "tx", ju64(es->tx_frames));
	/* of those, the in-band setup and end-of-run hellos */
	jset(x, "ctl_rx", ju64(es->ctl_rx));
	jset(x, "ctl_tx", ju64(es->ctl_tx));
	jset(j, "frames", x);
	jset(j, "out_of_order", ju64(r->bad_seq));
	jset(j, "corrupt", ju64(r->corrupt));
	jset(j, "cc", json_object_new_string(tp_cc_algo_name(o->cc)));
	jset(j, "lb", json_object_new_string(tpg_lb_name(o->lb)));
	x = json_object_new_object();
	jset(x, "sent", ju64(cnp_sent));
	jset(x, "received", ju64(cnp_rcvd));
	jset(j, "cnp", x);
	/* The rate/window cuts of the CC by cause: ECN feedback or an RTO. */
	cc_cuts(r, &ecn_cuts, &rto_cuts);
	x = json_object_new_object();
	jset(x, "ecn", ju64(ecn_cuts));
	jset(x, "rto", ju64(rto_cuts));
	jset(j, "cc_cuts", x);
	if (o->interval_ns)
		jset(j, "interval_ms", ju64(o->interval_ns / 1000000));
	if (stage) {
		jset(stage, "pin", json_object_new_string(o->stage_pin));
		jset(j, "stage", json_object_get(stage));
	}
	jset(j, "per_channel", per_channel_json(r, secs));
	if (o->workers > 1)
		jset(j, "workers", workers_json(r, ports_open(r)));
	if (o->mode == TP_MODE_CTP && o->cc != TP_CC_NONE)
		jset(j, "ctp_cc", ctp_cc_json(r));
	if (run_ctp_entity(o)) {
		x = json_object_new_array();
		for (uint32_t k = 0; k < o->ndevs; k++) {
			struct json_object *m = json_object_new_object();

			jset(m, "dev", json_object_new_string(o->devs[k]));
			jset(m, "tx_frames", ju64(ep_member_tx(r->ep[0], k)));
			json_object_array_add(x, m);
		}
		jset(j, "entity", x);
	}
	puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
}

static void ctp_cc_print(const struct run *r)
{
	for (uint32_t k = 0; k < r->nep && k < r->o->channels; k++) {
		const struct ep_peer *p = r->ch[k].peer;
		char ip[INET6_ADDRSTRLEN];
		struct tp_cc_stats cs;

		tp_cc_get_stats(r->cc[k], &cs);
		inet_ntop(p->ip_ver == 6 ? AF_INET6 : AF_INET, p->ip, ip, sizeof(ip));
		printf("  ctp cc {entity %s, VL %u} via %s: CNPs sent %" PRIu64 ", received %" PRIu64
		       ", rate %.1f Mbit/s\n", ip, r->o->native.vl,
		       run_ctp_entity(r->o) ? r->o->dev : port_dev(r, k), cs.cnp_sent, cs.cnp_rcvd,
		       (double)cs.rate_bps / 1e6);
	}
}

void run_report(struct run *r, uint64_t peer_messages, bool server)
{
	const struct ubperf_opts *o = r->o;
	double secs = (double)(r->t_end - r->t_start) / 1e9;
	double bps = secs > 0 ? (double)goodput_bytes(r, server) * 8 / secs : 0;
	struct tp_stats ts;
	struct ep_stats es;
	uint64_t rtx, cnp_sent, cnp_rcvd;
	struct json_object *stage = NULL;

	if (r->has_stage) {
		stage = caqm_stage_json(r->stage_budget_fd, r->stage_stats_fd);
		if (!stage)
			fprintf(stderr, "ubperf %s: --stage-pin %s: the stage went away (%s)\n",
				r->who, o->stage_pin, strerror(errno));
	}
	ports_stats(r, &ts, &es);
	rtx = RTX_TOTAL(&ts);
	cc_totals(r, &cnp_sent, &cnp_rcvd);
	qsort(r->lat, r->nlat, sizeof(r->lat[0]), cmp_u64);
	if (o->json) {
		report_json(r, peer_messages, server, secs, &ts, &es, stage);
		json_object_put(stage);
		return;
	}
	printf("ubperf %s: %s %s/%s, %u B x %u channel(s), %.2f s\n", server ? "server" : "client",
	       tp_mode_name(o->mode), op_names[o->op], ta_names[o->ta], o->size, o->channels, secs);
	printf("  messages %" PRIu64 " (peer counted %" PRIu64 "), %.1f MB, goodput %.1f Mbit/s\n",
	       r->messages, peer_messages, (double)r->bytes / 1e6, bps / 1e6);
	printf("  bytes verified: %.1f MB here, %.1f MB by the peer\n", (double)r->verified / 1e6,
	       (double)ctl_u64(r->peer_done.verified) / 1e6);
	if (r->nlat)
		printf("  latency us: p50 %.1f  p99 %.1f  p99.9 %.1f\n", pct_us(r->lat, r->nlat, 0.5),
		       pct_us(r->lat, r->nlat, 0.99), pct_us(r->lat, r->nlat, 0.999));
	printf("  retransmissions %" PRIu64 " (rto %" PRIu64 ", nak %" PRIu64 ", sack %" PRIu64
	       ", mark %" PRIu64 ", answer %" PRIu64 ", rack %" PRIu64 ", path %" PRIu64
	       ", tlp %" PRIu64 "; spurious %" PRIu64 "), RTO fired %" PRIu64 " (undone %" PRIu64
	       ")\n", rtx, ts.rtx_rto, ts.rtx_nak, ts.rtx_sack, ts.rtx_mark, ts.rtx_answer,
	       ts.rtx_rack, ts.rtx_path, ts.rtx_tlp, ts.rtx_spurious, ts.rto_fired, ts.rto_undone);
	printf("  frames rx %" PRIu64 " tx %" PRIu64 ", ECN CE %" PRIu64 ", bad ICRC %" PRIu64
	       ", TP dropped %" PRIu64 ", AF_XDP %s\n", es.rx_frames, es.tx_frames, es.ce_marked, es.icrc_bad,
	       es.tp_drop, run_xsk_mode(r));
	if (o->cc != TP_CC_NONE || o->lb != TPG_LB_FLOW)
		printf("  cc %s, lb %s: CNPs sent %" PRIu64 ", received %" PRIu64 "\n",
		       tp_cc_algo_name(o->cc), tpg_lb_name(o->lb), cnp_sent, cnp_rcvd);
	if (o->cc != TP_CC_NONE) {
		uint64_t ecn_cuts, rto_cuts;

		cc_cuts(r, &ecn_cuts, &rto_cuts);
		printf("  cc cuts: by ECN feedback %" PRIu64 ", by RTO %" PRIu64 "\n", ecn_cuts, rto_cuts);
	}
	if (o->mode == TP_MODE_CTP && o->cc != TP_CC_NONE)
		ctp_cc_print(r);
	if (stage) {
		printf("  stage %s: queue high water %s B, ECN marked %s, CAQM congested %s\n",
		       o->stage_pin, jstr(stage, "queue_high_bytes"), jstr(stage, "ecn_marked"),
		       jstr(stage, "congested"));
		json_object_put(stage);
	}
	if (o->verbose) {
		printf("    tx ring full %" PRIu64 ", no free frame %" PRIu64 ", AF_XDP rx dropped %" PRIu64
		       " rx ring full %" PRIu64 " fill ring empty %" PRIu64 "\n", es.tx_ring_full,
		       es.no_frame, es.xsk_rx_dropped, es.xsk_rx_ring_full, es.xsk_fill_empty);
		for (size_t i = 0; i < tp_stats_count(); i++)
			if (tp_stats_get(&ts, i))
				printf("    %-18s %12" PRIu64 "  %s\n", tp_stats_name(i),
				       tp_stats_get(&ts, i), tp_stats_desc(i));
		printf("    srtt_us %.1f rto_us %.1f min_rtt_us %.1f min_rtt_10s_us %.1f reo_wnd_us %.1f\n",
		       (double)ts.srtt_ns / 1e3, (double)ts.rto_ns / 1e3, (double)ts.min_rtt_ns / 1e3,
		       (double)ts.min_rtt_win_ns / 1e3, (double)ts.reo_wnd_ns / 1e3);
	}
}

/* An event that ends the run: a failed channel or operation. */
int run_event_error(struct run *r, const struct tp_event *ev)
{
	uintptr_t i = (uintptr_t)((struct ep_chan *)ev->user)->app;

	if (ev->type == TP_EV_CHAN_ERROR)
		return run_fail(r, "channel %u failed: %s (the peer stopped answering)", (unsigned)i,
			    tp_status_name(ev->status));
	if (ev->status == TP_ST_TIMEOUT)
		return run_fail(r, "channel %u: operation failed: timeout (no answer: CTP does not resend "
			    "what the link lost)", (unsigned)i);
	return run_fail(r, "channel %u: operation failed: %s", (unsigned)i, tp_status_name(ev->status));
}
