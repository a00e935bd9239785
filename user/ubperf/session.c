// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubperf client and server: channels over the UBoE endpoint (ep.h), set up
 * in band (each channel's hello over UTP, retried, answered by the server,
 * carrying the run; ctl.h), then driven until the time or count is reached,
 * and the end-of-run counts exchanged the same way. Every failure path ends
 * in one line on stderr and exit status 1.
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

#include "caqm_pins.h"
#include "ctl.h"
#include "ep.h"
#include "exit_codes.h"
#include "payload.h"
#include "series.h"
#include "ubperf.h"

#define MAX_LAT_SAMPLES	(4u << 20)
#define CTL_RETRY_NS	200000000ull	/* an unanswered hello goes again */
#define CTL_DALLY_NS	(3 * CTL_RETRY_NS)	/* the server answers a lost DONE reply's retries */
#define INBOX_MAX	256

static const char *const op_names[] = { "send", "write", "read" };
static const char *const ta_names[] = { "rol", "roi", "rot" };

struct run {
	const struct ubperf_opts *o;
	const char *who;
	/* A port per --dev; peer[k] (k < nep) the other side's first address
	 * (client: --peer; server: its first hello's source) as port k reaches
	 * it, then each other (port, address) a channel or an answer needs
	 * (peer_ep[k]: by which port). Both sides on several ports at once: up
	 * to one per port and address of the other side, plus the first. */
	struct ep *ep[UBPERF_MAX_DEVS];
	struct ep_peer peer[UBPERF_MAX_PEERS];
	uint32_t peer_ep[UBPERF_MAX_PEERS];
	uint32_t nep, npeer;
	struct ep_chan ch[UBPERF_MAX_CHANS];
	uint8_t *buf;		/* message source / destination / registered region */
	size_t buf_len;
	/* in-band control: hellos the ports took, handled after each round */
	struct hook {
		struct run *r;
		uint32_t k;
	} hook[UBPERF_MAX_DEVS];
	struct inbox_ent {
		uint32_t k;		/* the port it came in by */
		uint8_t ver, ip[16];	/* from */
		struct tp_hello h;	/* h.app not kept: decoded into m */
		struct ctl_msg m;
	} inbox[INBOX_MAX];
	uint32_t ninbox;
	uint32_t run_id;
	uint32_t peer_tpn[UBPERF_MAX_CHANS];
	bool connected[UBPERF_MAX_CHANS];
	uint32_t nconnected;
	struct ctl_answer ans[UBPERF_MAX_CHANS];
	bool started, done_rcvd, md_ready;	/* server */
	struct ctl_done peer_done, md;
	char peer_s[64];
	char mtu_why[160];	/* server: why the client's MTU was refused ("": it was not) */
	/* client */
	uint64_t *post_ns;	/* [chan * depth + slot] */
	uint64_t slots_used;	/* slots posted at least once: the Write slots the server must find */
	uint32_t *outstanding;	/* per channel */
	uint64_t *free_slots;	/* bitmap per channel (depth <= 64 per word, 4 words) */
	uint64_t *lat;
	size_t nlat;
	uint64_t messages, bytes, posted;
	uint64_t seq[UBPERF_MAX_CHANS];		/* next Send sequence number (client) or expected (server) */
	uint64_t bad_seq, lost;		/* server: Sends out of order / missing (UTP) */
	/* Checked against the keyed payload (payload.h): the server each Send
	 * and, after Writes, its region; the client each Read. corrupt: Sends,
	 * region slots or Reads that failed; verified: bytes that passed. */
	uint64_t corrupt, verified;
	uint64_t seen[UBPERF_MAX_CHANS][4];	/* server, CTP: Sends seen past seq[c], a ring of 256 */
	uint64_t t_start, t_end, last_progress;
	uint64_t heard_ns;	/* server: the last hello of this run */
	uint64_t va[UBPERF_MAX_CHANS];		/* client: each channel's region (token in ans[c]) */
	struct tp_cc *cc[UBPERF_MAX_CHANS];	/* --cc: the instances (CTP: one per port) */
	struct tp_cc *cc_of[UBPERF_MAX_CHANS];	/* each channel's: its own, or with CTP its
						 * port's, {peer entity, VL} (tp.h) */
	struct tpg *g;				/* --lb: the channels as one group */
	uint64_t chan_bytes[UBPERF_MAX_CHANS];	/* client: completed per channel */
	struct series ser;			/* --interval */
	bool has_stage;				/* --stage-pin: the maps below are open */
	int stage_budget_fd, stage_stats_fd;
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

static bool ctl_rx(void *ctx, const uint8_t *tp, size_t len, uint8_t ver, const uint8_t ip[16]);

static bool ctp_entity(const struct ubperf_opts *o)
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
	if (o->mode == TP_MODE_CTP)	/* no retransmission: --rto bounds the wait for an answer */
		cc->ta_timeout_ns = o->rto_ns ? o->rto_ns : 1000000000ull;
	if (o->rto_ns) {
		cc->rto_mode = TP_RTO_STATIC;
		cc->rto_static_ns = o->rto_ns;
	} else {
		cc->rto_mode = TP_RTO_DYNAMIC;
		cc->rto_min_ns = o->rto_min_ns;
	}
}

/* The endpoints on the ports (the ports exist: main.c checked); 0 or the exit status. */
static int open_ep(struct run *r)
{
	struct ep_config ec = { 0 };
	char err[256];

	ec.generic = r->o->generic;
	ec.zerocopy = r->o->zerocopy;
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
			return fail(r, "--stage-pin: %s", err), UB_EXIT_NOTFOUND;
		r->has_stage = true;
	}
	if (ctp_entity(r->o)) {
		/* CTP: the ports are one entity behind one transport core. */
		ec.dev = r->o->devs[0];
		ec.nmembers = r->o->ndevs;
		memcpy(ec.members, r->o->devs, sizeof(ec.members[0]) * r->o->ndevs);
		r->ep[0] = ep_open(&ec, err, sizeof(err));
		if (!r->ep[0])
			return fail(r, "%s", err), UB_EXIT_KERNEL;
		r->nep = 1;
		r->hook[0] = (struct hook){ .r = r, .k = 0 };
		ep_set_ctl(r->ep[0], ctl_rx, &r->hook[0]);	/* setup on the first member */
		return 0;
	}
	for (; r->nep < r->o->ndevs; r->nep++) {
		ec.dev = r->o->devs[r->nep];
		r->ep[r->nep] = ep_open(&ec, err, sizeof(err));
		if (!r->ep[r->nep])
			return fail(r, "%s", err), UB_EXIT_KERNEL;
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
	if (r->ninbox == INBOX_MAX)
		return true;
	e = &r->inbox[r->ninbox];
	if (ctl_decode(h.app, h.app_len, h.reply, &e->m))
		return true;
	e->h = h;
	e->h.app = NULL;
	e->k = hk->k;
	e->ver = ver;
	memcpy(e->ip, ip, 16);
	r->ninbox++;
	return true;
}

/* m in channel c's hello to the peer's channel peer_tpn (0: not known yet),
 * by port k to p (the channel's own peer, or the client as port k reaches it). */
static int ctl_send(struct run *r, uint32_t k, struct ep_peer *p, const struct ep_chan *c,
		    uint32_t peer_tpn, bool reply, const struct ctl_msg *m)
{
	uint8_t app[64], pkt[TP_HELLO_LEN + 64];
	size_t a = ctl_encode(m, reply, app, sizeof(app));
	size_t n = a ? tp_hello_build_app(c->tp, peer_tpn, reply, app, a, pkt, sizeof(pkt)) : 0;

	return n ? ep_send_raw(r->ep[k], p, c->sport, pkt, n) : -EINVAL;
}

/* The other side's first address as each port reaches it. */
static int init_peers(struct run *r, uint8_t ver, const uint8_t ip[16], int wait_ms,
		      const char *what)
{
	char err[256];

	for (; r->npeer < r->nep; r->npeer++) {
		r->peer_ep[r->npeer] = r->npeer;
		if (ep_peer_init(r->ep[r->npeer], &r->peer[r->npeer], ver, ip, wait_ms, err,
				 sizeof(err)))
			return fail(r, "%s via %s: %s", what, r->o->devs[r->npeer], err);
	}
	return 0;
}

/* The peer for address ip by port k: a known one, or a new one resolved
 * (waiting up to wait_ms). NULL with err set when the table is full or the
 * address cannot be reached by that port. */
static struct ep_peer *peer_for(struct run *r, uint32_t k, uint8_t ver, const uint8_t ip[16],
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
static uint32_t port_of(const struct run *r, uint32_t c) { return c % r->nep; }

/*
 * Every port a round. With several, none sleeps while another may have work;
 * when none had any, one wait on all their sockets until a frame or the
 * earliest timer (at most 1 ms, as one port's ep_progress(ep, 1) waits).
 */
static void progress(struct run *r)
{
	int moved = 0;

	if (r->nep == 1) {
		ep_progress(r->ep[0], 1);
		return;
	}
	for (uint32_t k = 0; k < r->nep; k++)
		moved += ep_progress(r->ep[k], 0);
	if (!moved)
		ep_wait(r->ep, r->nep, 1000000);
}

static bool poll_event(struct run *r, struct tp_event *ev)
{
	for (uint32_t k = 0; k < r->nep; k++)
		if (tp_ep_poll(ep_tp(r->ep[k]), ev))
			return true;
	return false;
}

/* The ports' counters, summed (srtt/rto: the first port's). */
static void ports_stats(struct run *r, struct tp_stats *ts, struct ep_stats *es)
{
#define ONE(n, d) + 1
	/* A counter added to struct ep_stats must be added to the sum below too. */
	_Static_assert(sizeof(struct ep_stats) == sizeof(uint64_t) * (12 EP_RX_ERRORS(ONE)),
		       "struct ep_stats changed: sum the new counter");
#undef ONE
	tp_ep_stats(ep_tp(r->ep[0]), ts);
	ep_get_stats(r->ep[0], es);
	for (uint32_t k = 1; k < r->nep; k++) {
		struct tp_stats t;
		struct ep_stats e;

		tp_ep_stats(ep_tp(r->ep[k]), &t);
		ep_get_stats(r->ep[k], &e);
#define ADD_TP(n, d) ts->n += t.n;
		TP_STATS(ADD_TP)
#undef ADD_TP
#define ADD_EP(n, d) es->n += e.n;
		EP_RX_ERRORS(ADD_EP)
#undef ADD_EP
		es->rx_frames += e.rx_frames;
		es->tx_frames += e.tx_frames;
		es->ctl_rx += e.ctl_rx;
		es->ctl_tx += e.ctl_tx;
		es->tx_ring_full += e.tx_ring_full;
		es->no_frame += e.no_frame;
		es->rx_multi_buffer += e.rx_multi_buffer;
		es->tx_multi_buffer += e.tx_multi_buffer;
		es->ce_marked += e.ce_marked;
		es->xsk_rx_dropped += e.xsk_rx_dropped;
		es->xsk_rx_ring_full += e.xsk_rx_ring_full;
		es->xsk_fill_empty += e.xsk_fill_empty;
	}
}

static int make_chans(struct run *r)
{
	struct tpg_config gc = { .lb = r->o->lb };

	if (series_init(&r->ser, r->o->channels, r->o->cc, r->o->interval_ns))
		return fail(r, "out of memory for the --interval samples");
	r->g = tpg_create(&gc);
	if (!r->g)
		return fail(r, "cannot create the channel group: %s", strerror(errno));
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
				return fail(r, "cannot create %s for channel %u: %s",
					    tp_cc_algo_name(r->o->cc), i, strerror(errno));
			r->cc_of[i] = r->cc[k];
			tp_cc_attach(r->cc_of[i], &cc);
		}
		r->ch[i].peer = &r->peer[port_of(r, i)];
		r->ch[i].app = (void *)(uintptr_t)i;
		r->ch[i].tpg = r->o->lb == TPG_LB_PACKET ? r->g : NULL;
		if (!ep_chan_create(r->ep[port_of(r, i)], &r->ch[i], &cc))
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
static int sample_tick(struct run *r, bool server, uint64_t now)
{
	struct series_sample s[UBPERF_MAX_CHANS];

	if (!series_due(&r->ser, now))
		return 0;
	if (r->ser.n)
		take_sample(r, server, s);
	if (series_add(&r->ser, now, r->ser.n ? s : NULL))
		return fail(r, "out of memory for the --interval samples");
	if (!r->o->json)
		series_print_last(&r->ser, stdout);
	return 0;
}

static void sample_end(struct run *r, bool server, uint64_t t_ns)
{
	struct series_sample s[UBPERF_MAX_CHANS];

	take_sample(r, server, s);
	series_end(&r->ser, t_ns, s);
}

static void cleanup(struct run *r)
{
	for (uint32_t i = 0; i < UBPERF_MAX_CHANS; i++)
		if (r->ch[i].tp)
			tp_chan_destroy(r->ch[i].tp);
	for (uint32_t i = 0; i < UBPERF_MAX_CHANS; i++)
		tp_cc_destroy(r->cc[i]);
	tpg_destroy(r->g);
	for (uint32_t k = 0; k < r->nep; k++)
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
			(t)->rtx_answer + (t)->rtx_rack + (t)->rtx_tlp)

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
		jset(o, "dev", json_object_new_string(ctp_entity(r->o) ? r->o->dev : r->o->devs[k]));
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
		jset(o, "dev", json_object_new_string(r->o->devs[port_of(r, i)]));
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
	jset(j, "duration_s", jreal(secs, "%.6f"));
	jset(j, "goodput_bps", jbps(goodput_bytes(r, server), secs));
	jset(j, "messages", ju64(r->messages));
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
	jset(x, "tlp", ju64(ts->rtx_tlp));
	/* of all those, resends whose packet was acked too soon to be the resend */
	jset(x, "spurious", ju64(ts->rtx_spurious));
	jset(j, "retransmissions", x);
	jset(j, "rto_fired", ju64(ts->rto_fired));
	jset(j, "rto_spurious", ju64(ts->rto_spurious));
	/* RTOs the oldest packet's timing showed were delay or reordering alone */
	jset(j, "rto_undone", ju64(ts->rto_undone));
	jset(j, "reordered", ju64(ts->reo_seen));
	jset(j, "duplicates_received", ju64(ts->rx_dup));
	jset(j, "ecn_ce", ju64(es->ce_marked));
	jset(j, "core_ecn_ce", ju64(ts->rx_ecn_ce));
	jset(j, "icrc_bad", ju64(es->icrc_bad));
	/* packets (jumbo frames) that came and went in several UMEM frames */
	jset(j, "rx_multi_buffer", ju64(es->rx_multi_buffer));
	jset(j, "tx_multi_buffer", ju64(es->tx_multi_buffer));
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
	if (o->mode == TP_MODE_CTP && o->cc != TP_CC_NONE)
		jset(j, "ctp_cc", ctp_cc_json(r));
	if (ctp_entity(o)) {
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
		       ctp_entity(r->o) ? r->o->dev : r->o->devs[k], cs.cnp_sent, cs.cnp_rcvd,
		       (double)cs.rate_bps / 1e6);
	}
}

static void report(struct run *r, uint64_t peer_messages, bool server)
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
	       ", mark %" PRIu64 ", answer %" PRIu64 ", rack %" PRIu64 ", tlp %" PRIu64
	       "; spurious %" PRIu64 "), RTO fired %" PRIu64 " (undone %" PRIu64 ")\n", rtx,
	       ts.rtx_rto, ts.rtx_nak, ts.rtx_sack, ts.rtx_mark, ts.rtx_answer, ts.rtx_rack,
	       ts.rtx_tlp, ts.rtx_spurious, ts.rto_fired, ts.rto_undone);
	printf("  frames rx %" PRIu64 " tx %" PRIu64 ", ECN CE %" PRIu64 ", bad ICRC %" PRIu64
	       ", TP dropped %" PRIu64 "\n", es.rx_frames, es.tx_frames, es.ce_marked, es.icrc_bad,
	       es.tp_drop);
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
		printf("    srtt_us %.1f rto_us %.1f min_rtt_us %.1f reo_wnd_us %.1f\n",
		       (double)ts.srtt_ns / 1e3, (double)ts.rto_ns / 1e3, (double)ts.min_rtt_ns / 1e3,
		       (double)ts.reo_wnd_ns / 1e3);
	}
}

/* An event that ends the run: a failed channel or operation. */
static int event_error(struct run *r, const struct tp_event *ev)
{
	uintptr_t i = (uintptr_t)((struct ep_chan *)ev->user)->app;

	if (ev->type == TP_EV_CHAN_ERROR)
		return fail(r, "channel %u failed: %s (the peer stopped answering)", (unsigned)i,
			    tp_status_name(ev->status));
	if (ev->status == TP_ST_TIMEOUT)
		return fail(r, "channel %u: operation failed: timeout (no answer: CTP does not resend "
			    "what the link lost)", (unsigned)i);
	return fail(r, "channel %u: operation failed: %s", (unsigned)i, tp_status_name(ev->status));
}

/* ---- client --------------------------------------------------------------- */

/* The server's region for channel c: its TokenID and token value. */
static struct tp_rkey rkey_of(const struct run *r, uint32_t c)
{
	return (struct tp_rkey){ .token_id = r->ans[c].token, .token_value = r->ans[c].token_value };
}

static int post_one(struct run *r, uint32_t c, uint32_t slot)
{
	uint64_t wr = (uint64_t)c << 32 | slot;
	struct tp_chan *ch = r->ch[c].tp;
	size_t size = r->o->size;
	uint8_t *msg = r->buf + ((size_t)c * r->o->depth + slot) * size;
	uint64_t off = (uint64_t)slot * size;	/* the slot's own place in the channel's region */
	int rc;

	switch (r->o->op) {
	case OP_SEND:
		/* Each Send carries its channel's sequence number, and bytes
		 * keyed by it: the server checks every message arrives exactly
		 * once, in order, every byte in its place. */
		payload_msg_fill(msg, size, r->run_id, c, r->seq[c], 0);
		rc = tp_post_send(ch, msg, size, wr);
		if (!rc)
			r->seq[c]++;
		break;
	case OP_WRITE:
		/* Numbered across the run, keyed by where it must land: the
		 * server checks its region by position at the end. */
		payload_msg_fill(msg, size, r->run_id, c, r->posted, off);
		rc = tp_post_write(ch, msg, size, r->va[c] + off, rkey_of(r, c), wr);
		break;
	default:
		memset(msg, 0, size);	/* so a Read that lands nothing shows */
		rc = tp_post_read(ch, msg, size, r->va[c] + off, rkey_of(r, c), wr);
		break;
	}
	if (!rc) {
		uint64_t *t = &r->post_ns[c * r->o->depth + slot];

		r->slots_used += !*t;
		*t = ep_now_ns();
	}
	return rc;
}

/* A Read brought its slot's place in the channel's region: the server's keyed bytes there. */
static void read_check(struct run *r, uint32_t c, uint32_t slot)
{
	size_t size = r->o->size;
	uint64_t seed = payload_seed(r->run_id, c, PAYLOAD_READ_MSG);

	if (payload_check(r->buf + ((size_t)c * r->o->depth + slot) * size, size, seed,
			  (uint64_t)slot * size))
		r->verified += size;
	else
		r->corrupt++;
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
	if (sample_tick(r, false, r->t_start))
		return 1;
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
		progress(r);
		while (poll_event(r, &ev)) {
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
			if (ev.type == TP_EV_READ_DONE)
				read_check(r, c, s);
			now = ep_now_ns();
			if (r->nlat < MAX_LAT_SAMPLES)
				r->lat[r->nlat++] = now - r->post_ns[c * o->depth + s];
			r->free_slots[c * 4 + s / 64] |= 1ull << (s % 64);
			outstanding--;
			r->messages++;
			r->bytes += o->size;
			r->chan_bytes[c] += o->size;
			r->last_progress = now;
		}
		if (sample_tick(r, false, ep_now_ns()))
			return 1;
		if (outstanding && ep_now_ns() - r->last_progress > stall_ns)
			return fail(r, "peer stopped answering: no completion for %.1f s "
				    "(%" PRIu64 " operations outstanding)", o->stall_s, outstanding);
	}
	r->t_end = ep_now_ns();
	sample_end(r, false, r->t_end);
	return 0;
}

/*
 * A server on several ports: each channel to the address of its port there
 * (the answer's path; ver 0: --peer), reached by the channel's own port here.
 */
static int follow_paths(struct run *r, int wait_ms)
{
	char err[256], a_s[INET6_ADDRSTRLEN];

	for (uint32_t c = 0; c < r->o->channels; c++) {
		const struct ctl_path *p = &r->ans[c].path;
		uint32_t e = port_of(r, c);
		struct ep_peer *peer;

		if (p->ver != 4 && p->ver != 6)
			continue;
		peer = peer_for(r, e, p->ver, p->ip, wait_ms, err, sizeof(err));
		if (!peer) {
			inet_ntop(p->ver == 6 ? AF_INET6 : AF_INET, p->ip, a_s, sizeof(a_s));
			return fail(r, "channel %u: server port %s via %s: %s", c, a_s,
				    r->o->devs[e], err);
		}
		r->ch[c].peer = peer;
	}
	return 0;
}

/*
 * Every channel's hello to --peer by the channel's port (so from that port's
 * address, where the server answers the channel), again every CTL_RETRY_NS
 * until the server answered it, for --wait at most. The first one tells the
 * server the run; each answer connects its channel.
 */
static int client_setup(struct run *r, int wait_ms)
{
	const struct ubperf_opts *o = r->o;
	uint64_t now = ep_now_ns(), deadline = now + (uint64_t)wait_ms * 1000000, next = 0;
	struct ctl_msg m = { .kind = CTL_SETUP, .run_id = r->run_id };
	uint32_t sent = 0;

	m.u.run = (struct ctl_run){
		.mode = o->mode, .op = o->op, .ta = o->ta, .size = o->size,
		.channels = o->channels, .mtu = o->mtu, .window = o->window, .depth = o->depth,
		.rto_us = (uint32_t)(o->rto_ns / 1000), .rto_min_us = (uint32_t)(o->rto_min_ns / 1000),
		.cc = o->cc, .lb = o->lb,
	};
	while (r->nconnected < o->channels) {
		now = ep_now_ns();
		if (now >= deadline && !r->nconnected)
			return fail(r, "peer %s never answered (%u hellos in %.1f s; no ubperf server there?)",
				    o->peer, sent, o->wait_s);
		if (now >= deadline)
			return fail(r, "peer %s answered %u of %u channels in %.1f s (hellos or answers lost, or it went away)",
				    o->peer, r->nconnected, o->channels, o->wait_s);
		if (now >= next) {
			for (uint32_t c = 0; c < o->channels; c++) {
				if (r->connected[c])
					continue;
				m.index = c;
				sent += !ctl_send(r, port_of(r, c), r->ch[c].peer, &r->ch[c], 0, false, &m);
			}
			next = now + CTL_RETRY_NS;
		}
		progress(r);
		for (uint32_t i = 0; i < r->ninbox; i++) {
			const struct inbox_ent *e = &r->inbox[i];
			uint32_t c = e->m.index;
			int rc;

			if (e->m.kind != CTL_SETUP || !e->h.reply || e->m.run_id != r->run_id ||
			    c >= o->channels || r->connected[c] ||
			    e->h.dst_tpn != tp_chan_tpn(r->ch[c].tp))
				continue;	/* a duplicate answer, or not ours */
			if (e->m.u.ans.status == EMSGSIZE)
				return fail(r, "peer %s refused a UB MTU of %u: it takes %u (the MTU is agreed in the hello: --mtu %u)",
					    o->peer, o->mtu, e->h.mtu, e->h.mtu < o->mtu ? e->h.mtu : o->mtu);
			if (e->m.u.ans.status)
				return fail(r, "peer refused the test: %s", strerror((int)e->m.u.ans.status));
			if (e->h.mtu != o->mtu)
				return fail(r, "peer %s answered with a UB MTU of %u, ours is %u", o->peer,
					    e->h.mtu, o->mtu);
			rc = tp_chan_connect(r->ch[c].tp, e->h.tpn, e->h.init_psn);
			if (rc)
				return fail(r, "channel %u: connect: %s", c, strerror(-rc));
			r->ans[c] = e->m.u.ans;
			r->peer_tpn[c] = e->h.tpn;
			r->connected[c] = true;
			r->nconnected++;
		}
		r->ninbox = 0;
	}
	return 0;
}

/*
 * Write/Read: each channel's part of the server's region (named in its
 * server port's core) has a place for each of the channel's slots here:
 * the Write or Read of slot s goes to offset s x size there.
 */
static int regions(struct run *r)
{
	uint64_t need = (uint64_t)r->o->depth * r->o->size;

	if (r->o->op == OP_SEND)
		return 0;
	for (uint32_t c = 0; c < r->o->channels; c++) {
		if (r->ans[c].mr_len < need)
			return fail(r, "channel %u: the server's region is %u bytes, the test needs "
				    "%" PRIu64 " (--depth x --size)", c, r->ans[c].mr_len, need);
		r->va[c] = (uint64_t)r->ans[c].va_hi << 32 | r->ans[c].va_lo;
	}
	return 0;
}

/*
 * What the server verified against what it must have: every byte of every
 * Send (UTP: at most those, it may lose some), or after Writes every slot
 * they used (each the last Write to it, checked by position). Reads the
 * client checked itself.
 */
static int check_peer_verified(struct run *r)
{
	uint64_t got = ctl_u64(r->peer_done.verified), want;
	const char *what;

	switch (r->o->op) {
	case OP_SEND:
		want = r->bytes;
		what = "bytes of the Sends";
		if (r->o->mode == TP_MODE_UTP && got <= want)
			return 0;
		break;
	case OP_WRITE:
		want = r->slots_used * r->o->size;
		what = "bytes of the region slots the Writes used";
		break;
	default:
		return 0;
	}
	if (got != want)
		return fail(r, "the server verified %" PRIu64 " of the %" PRIu64 " %s", got, want,
			    what);
	return 0;
}

/* DONE with our counts on channel 0's hello until the server's DONE comes. */
static int client_done(struct run *r, int wait_ms)
{
	uint64_t now = ep_now_ns(), deadline = now + (uint64_t)wait_ms * 1000000, next = 0;
	struct ctl_msg m = { .kind = CTL_DONE, .run_id = r->run_id };

	ctl_set_u64(m.u.done.messages, r->messages);
	ctl_set_u64(m.u.done.bytes, r->bytes);
	ctl_set_u64(m.u.done.duration_ns, r->t_end - r->t_start);
	ctl_set_u64(m.u.done.verified, r->verified);
	while ((now = ep_now_ns()) < deadline) {
		if (now >= next) {
			ctl_send(r, port_of(r, 0), r->ch[0].peer, &r->ch[0], r->peer_tpn[0], false, &m);
			next = now + CTL_RETRY_NS;
		}
		progress(r);
		for (uint32_t i = 0; i < r->ninbox; i++) {
			const struct inbox_ent *e = &r->inbox[i];

			if (e->m.kind == CTL_DONE && e->h.reply && e->m.run_id == r->run_id) {
				r->peer_done = e->m.u.done;
				r->ninbox = 0;
				return 0;
			}
		}
		r->ninbox = 0;
	}
	return fail(r, "peer %s did not confirm the end of the test", r->o->peer);
}

int ubperf_client(const struct ubperf_opts *o)
{
	struct run r = { .o = o, .who = "client" };
	uint8_t ver, ip[16];
	char peer_s[128];
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
	for (uint32_t c = 0; c < o->channels; c++)
		for (uint32_t s = 0; s < o->depth; s++)
			r.free_slots[c * 4 + s / 64] |= 1ull << (s % 64);
	rc = open_ep(&r);
	if (rc)
		goto out;
	rc = 1;
	snprintf(peer_s, sizeof(peer_s), "peer %s", o->peer);
	if (init_peers(&r, ver, ip, wait_ms, peer_s))
		goto out;
	if (make_chans(&r))
		goto out;
	/* Tells this run's answers from a previous one's still on the way. */
	r.run_id = (uint32_t)(ep_now_ns() ^ (uint64_t)getpid() << 16);
	if (client_setup(&r, wait_ms))
		goto out;
	if (regions(&r))
		goto out;
	if (follow_paths(&r, wait_ms))
		goto out;
	if (client_loop(&r))
		goto out;
	if (client_done(&r, wait_ms))
		goto out;
	report(&r, ctl_u64(r.peer_done.messages), false);
	if (r.corrupt) {
		fail(&r, "%" PRIu64 " Reads brought back wrong bytes", r.corrupt);
		goto out;
	}
	if (r.peer_done.failed) {
		fail(&r, "the server reports a failure");
		goto out;
	}
	if (check_peer_verified(&r))
		goto out;
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

/*
 * CTP has no PSN: over an entity's several ports Sends may pass each other.
 * Each must still come exactly once, within the client's depth (<= 256) of
 * the lowest one not seen yet (seq[c]).
 */
static bool check_seq_ctp(struct run *r, uint32_t c, uint64_t seq)
{
	uint64_t *w = r->seen[c];

	if (seq < r->seq[c] || seq - r->seq[c] >= 256 || (w[seq / 64 % 4] >> (seq % 64) & 1))
		return false;
	w[seq / 64 % 4] |= 1ull << (seq % 64);
	while (w[r->seq[c] / 64 % 4] >> (r->seq[c] % 64) & 1) {
		w[r->seq[c] / 64 % 4] &= ~(1ull << (r->seq[c] % 64));
		r->seq[c]++;
	}
	return true;
}

/* Send number seq on channel c where it may come; the next one expected moves past it. */
static bool check_seq(struct run *r, uint32_t c, uint64_t seq)
{
	bool ok;

	if (r->o->mode == TP_MODE_CTP)
		return check_seq_ctp(r, c, seq);
	/* UTP may lose messages (a gap) but never repeat or reorder them. */
	ok = seq >= r->seq[c] && (seq == r->seq[c] || r->o->mode == TP_MODE_UTP);
	if (ok)
		r->lost += seq - r->seq[c];
	r->seq[c] = seq + 1;
	return ok;
}

/* A Send: its number (a message under 8 bytes has none), then every byte keyed by it. */
static void check_message(struct run *r, uint32_t c, const uint8_t *m, size_t len)
{
	bool bytes_ok, seq_ok = true;
	uint64_t seq;

	if (len != r->o->size) {
		r->corrupt++;
		return;
	}
	bytes_ok = payload_msg_check(m, len, r->run_id, c, 0, &seq);
	if (len >= PAYLOAD_HDR)
		seq_ok = check_seq(r, c, seq);
	r->bad_seq += !seq_ok;
	r->corrupt += !bytes_ok;
	if (seq_ok && bytes_ok)
		r->verified += len;
}

static int server_inbox(struct run *r, struct ubperf_opts *so);

static int server_loop(struct run *r, struct ubperf_opts *so)
{
	const struct ubperf_opts *o = r->o;
	uint64_t idle_ns = (uint64_t)((o->stall_s > 10 ? o->stall_s : 10) * 1e9), last_rx = 0, rx;
	struct tp_event ev;

	r->last_progress = ep_now_ns();
	for (;;) {
		uint64_t now;

		progress(r);
		while (poll_event(r, &ev)) {
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
		/* Every round: no getsockopt here (one per socket), it is a syscall a round. */
		rx = 0;
		for (uint32_t k = 0; k < r->nep; k++)
			rx += ep_rx_frames(r->ep[k]);
		now = ep_now_ns();
		if (rx != last_rx) {
			last_rx = rx;
			r->last_progress = now;
		}
		/* Samples from the first frame in: the server waits for its client before. */
		if (last_rx && sample_tick(r, true, now))
			return 1;
		if (server_inbox(r, so))
			return 1;
		if (r->done_rcvd) {
			sample_end(r, true, r->last_progress);
			return 0;
		}
		if (now - r->last_progress > idle_ns)
			return fail(r, "client %s went away: nothing received for %.0f s", r->peer_s,
				    (double)idle_ns / 1e9);
	}
}

/*
 * Write/Read: channel c's part of the region is its answer's (VA, length),
 * depth x size bytes. Reads fetch its keyed payload at each offset; Writes
 * find it zero (an untouched slot) and are checked by position at the end.
 */
static void share_region(struct run *r, const struct ubperf_opts *so)
{
	uint64_t part = (uint64_t)so->depth * so->size;
	struct tp_rkey key[UBPERF_MAX_DEVS] = { 0 };
	int rc = part > UINT32_MAX ? -EFBIG : 0;	/* the answer's length is 32 bits */

	for (uint32_t c = 0; c < so->channels && so->op == OP_READ; c++)
		payload_fill(r->buf + c * part, part, payload_seed(r->run_id, c, PAYLOAD_READ_MSG), 0);
	/* A token names a region in one port's core only: the one region
	 * is registered in each, and each channel gets its port's token. */
	for (uint32_t k = 0; k < r->nep && !rc; k++)
		rc = tp_mr_reg(ep_tp(r->ep[k]), r->buf, r->buf_len, &key[k]);
	for (uint32_t c = 0; c < so->channels; c++) {
		uint64_t va = (uint64_t)(uintptr_t)r->buf + c * part;

		r->ans[c].status = rc ? (uint32_t)-rc : 0;
		r->ans[c].token = key[port_of(r, c)].token_id;
		r->ans[c].token_value = key[port_of(r, c)].token_value;
		r->ans[c].va_hi = (uint32_t)(va >> 32);
		r->ans[c].va_lo = (uint32_t)va;
		r->ans[c].mr_len = (uint32_t)part;
	}
}

/*
 * The UB MTU, agreed in the hello: the client's (its --mtu, or the largest
 * its devices carry), when our devices carry it too (ep_ub_mtu_max) and we
 * were given no other --mtu. Otherwise every channel is refused (EMSGSIZE)
 * with our own MTU in the answering hello, and each side says so in one
 * line. so->mtu: the one our channels get.
 */
static int server_mtu(struct run *r, struct ubperf_opts *so, const struct inbox_ent *e)
{
	uint32_t want = e->m.u.run.mtu, own = so->mtu, best = 0, dmtu = 0, m, d, mem;
	const char *dev = so->devs[0];

	/* Each port (or an entity's members) towards the client's IP version. */
	for (uint32_t k = 0; k < r->nep; k++) {
		m = ep_ub_mtu_max(r->ep[k], e->ver, &d, &mem);
		if (!k || m < best) {
			best = m;
			dmtu = d;
			dev = so->devs[r->nep > 1 ? k : mem];
		}
	}
	r->mtu_why[0] = 0;
	if (own && own != want)
		snprintf(r->mtu_why, sizeof(r->mtu_why), "this server was given --mtu %u", own);
	else if (want > best)
		snprintf(r->mtu_why, sizeof(r->mtu_why),
			 "%s (MTU %u) carries a UB MTU of %u at most with the %s headers", dev, dmtu,
			 best, so->native.ethertype ? "native UB" : "UBoE");
	so->mtu = r->mtu_why[0] ? (own ? own : best) : want;
	if (!so->mtu)
		return fail(r, "%s: its MTU %u carries no UB MTU with the %s headers", dev, dmtu,
			    so->native.ethertype ? "native UB" : "UBoE");
	return 0;
}

/* The first setup hello: the run it describes, the client's peers, the channels, the region. */
static int server_start(struct run *r, struct ubperf_opts *so, const struct inbox_ent *e)
{
	const struct ctl_run *h = &e->m.u.run;
	bool entity = ctp_entity(so);	/* ours, before the client's mode replaces --mode */

	inet_ntop(e->ver == 6 ? AF_INET6 : AF_INET, e->ip, r->peer_s, sizeof(r->peer_s));
	if (h->channels == 0 || h->channels > UBPERF_MAX_CHANS ||
	    !strcmp(tp_mode_name((enum tp_mode)h->mode), "?") || h->op > OP_READ ||
	    h->ta > TP_TA_ROT || h->size == 0 || h->size > (64u << 20) || h->depth == 0 ||
	    h->depth > 256 || h->mtu < EP_UB_MTU_MIN || h->mtu > EP_UB_MTU_MAX ||
	    (h->mtu & (h->mtu - 1)) || h->mtu != e->h.mtu || h->window == 0 ||
	    h->window >= TP_PSN_HALF || h->cc > TP_CC_CAQM || h->lb > TPG_LB_PACKET)
		return fail(r, "client %s sent a bad test description", r->peer_s);
	if (server_mtu(r, so, e))
		return 1;
	so->mode = (enum tp_mode)h->mode;
	so->op = (enum ubperf_op)h->op;
	so->ta = (enum tp_ta_mode)h->ta;
	so->size = h->size;
	so->channels = h->channels;
	so->window = h->window;
	so->depth = h->depth;
	so->rto_ns = (uint64_t)h->rto_us * 1000;
	so->rto_min_ns = (uint64_t)h->rto_min_us * 1000;
	so->cc = (enum tp_cc_algo)h->cc;
	so->lb = (enum tpg_lb)h->lb;
	r->run_id = e->m.run_id;
	r->started = true;
	/* Send: depth x 2 receive buffers per channel; Write/Read: a region of
	 * depth slots per channel, each Write or Read at its own slot's place. */
	r->buf_len = (size_t)so->channels * so->depth * so->size * (so->op == OP_SEND ? 2 : 1);
	r->buf = calloc(1, r->buf_len);
	if (!r->buf)
		return fail(r, "out of memory for %zu bytes of buffers", r->buf_len);
	if (init_peers(r, e->ver, e->ip, 5000, r->peer_s) || make_chans(r))
		return 1;
	if (r->mtu_why[0]) {
		for (uint32_t c = 0; c < so->channels; c++)
			r->ans[c].status = EMSGSIZE;
		return 0;	/* answered (our MTU in the hello), then server_inbox fails */
	}
	/* Ports bound as a CTP entity speak CTP only; CTP, one packet per operation. */
	if ((entity && so->mode != TP_MODE_CTP) ||
	    (so->cc == TP_CC_CAQM && !so->native.ethertype) ||
	    (so->mode == TP_MODE_UTP && so->size > so->mtu) ||
	    (so->mode == TP_MODE_CTP && (so->size > so->mtu ||
					 (so->cc != TP_CC_NONE && so->cc != TP_CC_DCQCN)))) {
		for (uint32_t c = 0; c < so->channels; c++)
			r->ans[c].status = EPROTONOSUPPORT;
		return 0;	/* answered, then server_inbox fails */
	}
	if (so->op != OP_SEND)
		share_region(r, so);
	return 0;
}

/*
 * Channel c's first hello: the client's channel c is at the hello's source
 * (a client on several ports sends each channel's hello by that channel's
 * port), reached by our port for c. Several ports here: the answer tells
 * the client our port's address (a route without a preferred source leaves
 * it at --peer). Fails when that port cannot reach the address.
 */
static int server_follow(struct run *r, uint32_t c, const struct inbox_ent *e)
{
	static const uint8_t no_ip[16];
	struct ep_peer *p;
	char err[256];

	p = peer_for(r, port_of(r, c), e->ver, e->ip, 5000, err, sizeof(err));
	if (!p) {
		fail(r, "channel %u: client %s via %s: %s", c, r->peer_s,
		     r->o->devs[port_of(r, c)], err);
		return -EHOSTUNREACH;
	}
	r->ch[c].peer = p;
	if (r->nep > 1 && memcmp(p->nh.src_ip, no_ip, 16)) {
		r->ans[c].path.ver = p->nh.ip_ver;
		memcpy(r->ans[c].path.ip, p->nh.src_ip, 16);
	}
	return 0;
}

/* m to the hello e came in (by its port, to its source), in channel c's hello. */
static void answer(struct run *r, const struct inbox_ent *e, uint32_t c, const struct ctl_msg *m)
{
	struct ep_peer *p;
	char err[256];

	p = peer_for(r, e->k, e->ver, e->ip, 5000, err, sizeof(err));
	if (p)
		ctl_send(r, e->k, p, &r->ch[c], e->h.tpn, true, m);
}

/*
 * The hellos of the last round: a setup hello connects its channel (the
 * first one starts the run) and is answered, every time it comes (the
 * client resends until an answer reaches it); a DONE is answered with our
 * counts once they are known.
 */
static int server_inbox(struct run *r, struct ubperf_opts *so)
{
	for (uint32_t i = 0; i < r->ninbox; i++) {
		const struct inbox_ent *e = &r->inbox[i];
		struct ctl_msg m = { .kind = e->m.kind, .run_id = e->m.run_id, .index = e->m.index };
		uint32_t c = e->m.index;

		if (e->h.reply)
			continue;
		if (e->m.kind == CTL_DONE) {
			if (!r->started || e->m.run_id != r->run_id)
				continue;
			r->done_rcvd = true;
			r->peer_done = e->m.u.done;
			if (r->md_ready) {
				m.u.done = r->md;
				answer(r, e, 0, &m);
			}
			continue;
		}
		if (!r->started && server_start(r, so, e)) {
			r->ninbox = 0;
			return 1;
		}
		/* Another client's, or a previous run's: not this one's. */
		if (e->m.run_id != r->run_id || c >= so->channels)
			continue;
		r->heard_ns = ep_now_ns();	/* the client is alive (a setup's bound) */
		if (!r->connected[c]) {
			int rc = r->ans[c].status ? 0 : server_follow(r, c, e);

			if (rc) {	/* said; the answer tells the client, then we stop */
				r->ans[c].status = (uint32_t)-rc;
				r->ninbox = 0;
				m.u.ans = r->ans[c];
				answer(r, e, c, &m);
				return 1;
			}
			rc = r->ans[c].status ? 0 : tp_chan_connect(r->ch[c].tp, e->h.tpn, e->h.init_psn);
			if (!rc && !r->ans[c].status && so->op == OP_SEND)
				rc = post_recvs(r, c, so->depth * 2);
			if (rc)
				r->ans[c].status = (uint32_t)-rc;
			r->connected[c] = true;
			r->peer_tpn[c] = e->h.tpn;
			r->nconnected++;
		} else if (e->h.tpn != r->peer_tpn[c]) {
			continue;
		}
		m.u.ans = r->ans[c];
		answer(r, e, c, &m);
		if (r->ans[c].status) {
			r->ninbox = 0;
			if (r->ans[c].status == EMSGSIZE && r->mtu_why[0])
				return fail(r, "client %s asks for a UB MTU of %u: %s", r->peer_s,
					    e->m.u.run.mtu, r->mtu_why);
			if (r->ans[c].status == EPROTONOSUPPORT)
				return fail(r, "client %s asks for %s%s", r->peer_s, tp_mode_name(so->mode),
					    so->cc == TP_CC_CAQM && !so->native.ethertype ?
					    " with --cc caqm over UBoE, which has no CCI to carry it (--native)" :
					    so->mode == TP_MODE_UTP && so->size > so->mtu ?
					    " with --size above --mtu (a UTP message is one packet)" :
					    so->mode != TP_MODE_CTP ? ": the ports are one CTP entity (--mode ctp)" :
					    so->size > so->mtu ? " with --size above --mtu" :
					    " with --cc other than dcqcn (CTP has no transport acks)");
			return fail(r, "could not set up the test with client %s: %s", r->peer_s,
				    strerror((int)r->ans[c].status));
		}
	}
	r->ninbox = 0;
	return 0;
}

/*
 * After the Writes: every slot of every channel's part holds the last
 * Write to it, or nothing (the client counts the slots it used and fails
 * the run unless we verified that many). The core says no Write landed,
 * so this is what "verified" can mean for Writes: the region as the run
 * left it, every byte by position, not each Write.
 */
static int check_region(struct run *r)
{
	struct payload_tally t;

	if (payload_region_check(r->buf, r->o->channels, r->o->depth, r->o->size, r->run_id,
				 ctl_u64(r->peer_done.messages), &t))
		return fail(r, "out of memory to check the Write region");
	r->verified = t.verified;
	r->corrupt += t.corrupt;
	return 0;
}

#define SERVE_AGAIN	(-1)	/* a setup abandoned: wait for a new client */

/* One client, from its first hello; t0: when the server began to wait. */
static int serve(const struct ubperf_opts *o, uint64_t t0, bool first)
{
	struct run r = { .o = o, .who = "server" };
	struct ubperf_opts so = *o;
	uint64_t wait_ns = (uint64_t)(o->wait_s * 1e9), stall_ns = (uint64_t)(o->stall_s * 1e9);
	int rc = 1;

	r.lat = NULL;
	r.o = &so;
	rc = open_ep(&r);
	if (rc)
		goto out;
	rc = 1;
	if (!o->json && first)
		printf("ubperf server: listening on %s (in-band setup)\n", o->dev);
	fflush(stdout);
	while (!r.started || r.nconnected < so.channels) {
		if (wait_ns && ep_now_ns() - t0 > wait_ns) {
			if (r.started)
				fail(&r, "client %s set up %u of %u channels within %.0f s", r.peer_s,
				     r.nconnected, so.channels, o->wait_s);
			else
				fail(&r, "no client within %.0f s", o->wait_s);
			goto out;
		}
		/*
		 * A client resends each unanswered hello every 200 ms: one
		 * silent for --stall died half way. Its channels and region
		 * would hold the server forever (--wait 0): the server starts
		 * afresh and waits for the next client instead, as it waited
		 * for this one (what is left of --wait, or forever).
		 */
		if (r.started && ep_now_ns() - r.heard_ns > stall_ns) {
			fail(&r, "client %s went away during setup (%u of %u channels, nothing for "
			     "%.1f s): waiting for a new client", r.peer_s, r.nconnected,
			     so.channels, o->stall_s);
			rc = SERVE_AGAIN;
			goto out;
		}
		progress(&r);
		if (server_inbox(&r, &so))
			goto out;
	}
	if (server_loop(&r, &so))
		goto out;
	if (so.op == OP_WRITE && check_region(&r))
		goto out;
	/* One-sided operations leave no trace here: count what the client did. */
	if (so.op != OP_SEND) {
		r.messages = ctl_u64(r.peer_done.messages);
		r.bytes = ctl_u64(r.peer_done.bytes);
		r.t_start = 0;
		r.t_end = ctl_u64(r.peer_done.duration_ns);
	}
	ctl_set_u64(r.md.messages, r.messages);
	ctl_set_u64(r.md.bytes, r.bytes);
	ctl_set_u64(r.md.verified, r.verified);
	r.md.failed = r.bad_seq || r.corrupt;
	r.md_ready = true;
	/* Answer the DONE that ended the loop, and its repeats should the
	 * answer be lost, for a while. */
	r.done_rcvd = false;
	{
		struct ctl_msg m = { .kind = CTL_DONE, .run_id = r.run_id, .u.done = r.md };
		uint64_t until = ep_now_ns() + CTL_DALLY_NS;

		ctl_send(&r, port_of(&r, 0), r.ch[0].peer, &r.ch[0], r.peer_tpn[0], true, &m);
		while (ep_now_ns() < until) {
			progress(&r);
			server_inbox(&r, &so);
		}
	}
	report(&r, ctl_u64(r.peer_done.messages), true);
	if (r.bad_seq || r.corrupt) {
		fail(&r, "%" PRIu64 " messages out of order or duplicated, %" PRIu64 " corrupt",
		     r.bad_seq, r.corrupt);
		goto out;
	}
	rc = 0;
out:
	cleanup(&r);
	return rc;
}

int ubperf_server(const struct ubperf_opts *o)
{
	uint64_t t0 = ep_now_ns();
	int rc;

	for (bool first = true; (rc = serve(o, t0, first)) == SERVE_AGAIN; first = false)
		;
	return rc;
}
