// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubperf server: waits for a client's hellos, answers each channel, checks
 * every Send (order, loss, payload) and after Writes its region, and serves
 * the next client when one run ends or a setup is abandoned.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ubperf/payload.h"
#include "ubperf/session.h"

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

/*
 * The run until the client's DONE: every Send checked and its buffer posted
 * again. With --workers, on each worker's thread for its channels; worker
 * 0's also hears the control (the DONE, late setup hellos) and watches for
 * a client gone, the others run until it ends.
 */
static int server_loop(struct run *r)
{
	const struct ubperf_opts *o = r->o;
	struct ubperf_opts *so = (struct ubperf_opts *)r->o;	/* serve()'s own copy */
	uint64_t idle_ns = (uint64_t)((o->stall_s > 10 ? o->stall_s : 10) * 1e9), last_rx = 0, rx;
	struct tp_event ev;

	r->last_progress = ep_now_ns();
	for (;;) {
		uint64_t now;

		run_progress(r);
		while (run_poll_event(r, &ev)) {
			uint32_t c = (uint32_t)(uintptr_t)((struct ep_chan *)ev.user)->app;

			if (ev.type == TP_EV_CHAN_ERROR)
				return run_event_error(r, &ev);
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
		if (r->threaded && r->wk) {
			if (run_stopped(r))
				return 0;
			continue;
		}
		/* Another worker's channel failed and its thread ended (said): its
		 * sockets are no longer read, so the run ends now, not at the idle timeout. */
		if (run_stopped(r) == RUN_FAILED)
			return 1;
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
		if (last_rx && run_sample_tick(r, true, now))
			return 1;
		if (server_inbox(r, so))
			return 1;
		if (r->done_rcvd) {
			run_sample_end(r, true, r->last_progress);
			return 0;
		}
		if (now - r->last_progress > idle_ns)
			return run_fail(r, "client %s went away: nothing received for %.0f s", r->peer_s,
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
 * with our own MTU in the answering hello (the --mtu we were given if it
 * differs, else the largest we carry), and each side says so in one
 * line -- unless ours is a default (no --mtu) and so is the client's: the
 * answer says ours is (mtu_default), the client sets up again at it, the
 * smaller, and nobody says anything (server_inbox_locked). so->mtu: the
 * one our channels get.
 */
static int server_mtu(struct run *r, struct ubperf_opts *so, const struct inbox_ent *e)
{
	uint32_t want = e->m.u.run.mtu, own = so->mtu, best = 0, dmtu = 0, m, d, mem;
	const char *dev = so->devs[0];
	bool path = false;

	/* Each port (or an entity's members) towards the client's IP version. */
	for (uint32_t k = 0; k < r->nep; k++) {
		m = ep_ub_mtu_max(r->ep[k], e->ver, &d, &mem);
		if (!k || m < best) {
			best = m;
			dmtu = d;
			dev = r->nep > 1 ? port_dev(r, k) : so->devs[mem];
		}
	}
	/* And the way back to the client as far as our kernel knows it (a
	 * route's mtu here): what we send, a Read's data, takes it, and the
	 * client cannot see it. Every port's device is one of --dev. */
	for (uint32_t i = 0; i < so->ndevs; i++) {
		m = ep_path_ub_mtu(so->devs[i], e->ver, e->ip, &d, NULL, 0);
		if (m < best) {
			best = m;
			dmtu = d;
			dev = so->devs[i];
			path = true;
		}
	}
	r->mtu_why[0] = 0;
	if (own && own != want)
		snprintf(r->mtu_why, sizeof(r->mtu_why), "this server was given --mtu %u", own);
	else if (want > best && path)
		snprintf(r->mtu_why, sizeof(r->mtu_why),
			 "the path to it by %s: the path MTU the kernel knows (route or learned) %u carries a UB MTU of %u at most with the UBoE headers",
			 dev, dmtu, best);
	else if (want > best)
		snprintf(r->mtu_why, sizeof(r->mtu_why),
			 "%s (MTU %u) carries a UB MTU of %u at most with the %s headers", dev, dmtu,
			 best, so->native.ethertype ? "native UB" : "UBoE");
	/* Refused: the answer says what to ask for. Our --mtu if it is the reason;
	 * given the client's own but unable to carry it, the largest we can. */
	if (!r->mtu_why[0])
		so->mtu = want;
	else if (own && own != want)
		so->mtu = own;
	else
		so->mtu = best;
	if (!so->mtu)
		return path ? run_fail(r, "the path to client %s by %s: the path MTU the kernel knows (route or learned) %u carries no UB MTU with the UBoE headers",
				       r->peer_s, dev, dmtu) :
			      run_fail(r, "%s: its MTU %u carries no UB MTU with the %s headers", dev, dmtu,
				       so->native.ethertype ? "native UB" : "UBoE");
	return 0;
}

/* The first setup hello: the run it describes, the client's peers, the channels, the region. */
static int server_start(struct run *r, struct ubperf_opts *so, const struct inbox_ent *e)
{
	const struct ctl_run *h = &e->m.u.run;
	bool entity = run_ctp_entity(so);	/* ours, before the client's mode replaces --mode */
	bool own_mtu = so->mtu;			/* ours, before the agreed one replaces --mtu */

	inet_ntop(e->ver == 6 ? AF_INET6 : AF_INET, e->ip, r->peer_s, sizeof(r->peer_s));
	if (h->channels == 0 || h->channels > UBPERF_MAX_CHANS ||
	    !strcmp(tp_mode_name((enum tp_mode)h->mode), "?") || h->op > OP_READ ||
	    h->ta > TP_TA_ROT || h->size == 0 || h->size > (64u << 20) || h->depth == 0 ||
	    h->depth > 256 || h->mtu < EP_UB_MTU_MIN || h->mtu > EP_UB_MTU_MAX ||
	    (h->mtu & (h->mtu - 1)) || h->mtu != e->h.mtu || h->window == 0 ||
	    h->window >= TP_PSN_HALF || h->cc > TP_CC_CAQM || h->lb > TPG_LB_PACKET)
		return run_fail(r, "client %s sent a bad test description", r->peer_s);
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
	/* A run on one core (CTP, a per-packet group): worker 0 alone, whose
	 * channels' TPNs the program steers to it, as it steers all of CTP;
	 * the others' frames go to it too, so none waits unread on an idle
	 * worker's socket (docs/ENDPOINT.md). */
	if (r->nep > 1 && so->ndevs == 1 && (so->mode == TP_MODE_CTP || so->lb == TPG_LB_PACKET)) {
		int rc = ep_workers_fold(r->ep[0]);

		if (rc)
			return run_fail(r, "a run on worker 0 alone: %s", strerror(-rc));
		r->nep = 1;
	}
	/* Send: depth x 2 receive buffers per channel; Write/Read: a region of
	 * depth slots per channel, each Write or Read at its own slot's place. */
	r->buf_len = (size_t)so->channels * so->depth * so->size * (so->op == OP_SEND ? 2 : 1);
	r->buf = calloc(1, r->buf_len);
	if (!r->buf)
		return run_fail(r, "out of memory for %zu bytes of buffers", r->buf_len);
	if (run_init_peers(r, e->ver, e->ip, 5000, r->peer_s) || run_make_chans(r))
		return 1;
	/* The answer says how far past a hole the client may send to us. The
	 * run description cannot say the client's range (an older server takes
	 * its exact length): what we send, Read data, goes as to an older
	 * client, whose range is the default. */
	for (uint32_t c = 0; c < so->channels; c++) {
		r->ans[c].rx_range = tp_chan_rx_range(r->ch[c].tp);
		tp_chan_peer_range(r->ch[c].tp, TP_OOO_RANGE_DEFAULT);
	}
	if (r->mtu_why[0]) {
		for (uint32_t c = 0; c < so->channels; c++) {
			r->ans[c].status = EMSGSIZE;
			r->ans[c].mtu_default = !own_mtu;
		}
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

	p = run_peer_for(r, port_of(r, c), e->ver, e->ip, 5000, err, sizeof(err));
	if (!p) {
		run_fail(r, "channel %u: client %s via %s: %s", c, r->peer_s,
		     port_dev(r, port_of(r, c)), err);
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
	const uint32_t k = r->threaded ? r->wk : e->k;	/* workers running: our own port's */
	struct ep_peer *p;
	char err[256];

	p = run_peer_for(r, k, e->ver, e->ip, 5000, err, sizeof(err));
	if (p)
		run_ctl_send(r, k, p, &r->ch[c], e->h.tpn, true, m);
}

/*
 * The hellos of the last round: a setup hello connects its channel (the
 * first one starts the run) and is answered, every time it comes (the
 * client resends until an answer reaches it); a DONE is answered with our
 * counts once they are known.
 */
static int server_inbox_locked(struct run *r, struct ubperf_opts *so);

#define SERVE_AGAIN	(-1)	/* a setup abandoned: wait for a new client */
/* How long a client whose MTU we refused (UBPF_ANS_MTU_OWN) has to set up
 * again at ours, from when we listen again: its channels rebuilt, hellos
 * resent every CTL_RETRY_NS. */
#define MTU_OFFER_NS	(10 * CTL_RETRY_NS)

/* The inbox, which the workers' threads add to (ctl_rx) while it is read. */
static int server_inbox(struct run *r, struct ubperf_opts *so)
{
	int rc;

	pthread_mutex_lock(&r->inbox_lock);
	rc = server_inbox_locked(r, so);
	pthread_mutex_unlock(&r->inbox_lock);
	return rc;
}

static int server_inbox_locked(struct run *r, struct ubperf_opts *so)
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
		/* The other channels' hellos of a run we refused, after it set up again. */
		if (!r->started && r->offer->line[0] && e->m.run_id == r->offer->run_id)
			continue;
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
			rc = r->ans[c].status ? 0 : ep_chan_connect(r->ep[port_of(r, c)], &r->ch[c], e->h.tpn, e->h.init_psn);
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
			if (r->ans[c].status == EMSGSIZE && r->mtu_why[0]) {
				snprintf(r->offer->line, sizeof(r->offer->line),
					 "client %s asks for a UB MTU of %u: %s", r->peer_s,
					 e->m.u.run.mtu, r->mtu_why);
				if (!r->ans[c].mtu_default)
					return run_fail(r, "%s", r->offer->line);
				r->offer->run_id = r->run_id;
				r->offer->until = 0;
				return SERVE_AGAIN;
			}
			if (r->ans[c].status == EPROTONOSUPPORT)
				return run_fail(r, "client %s asks for %s%s", r->peer_s, tp_mode_name(so->mode),
					    so->cc == TP_CC_CAQM && !so->native.ethertype ?
					    " with --cc caqm over UBoE, which has no CCI to carry it (--native)" :
					    so->mode == TP_MODE_UTP && so->size > so->mtu ?
					    " with --size above --mtu (a UTP message is one packet)" :
					    so->mode != TP_MODE_CTP ? ": the ports are one CTP entity (--mode ctp)" :
					    so->size > so->mtu ? " with --size above --mtu" :
					    " with --cc other than dcqcn (CTP has no transport acks)");
			return run_fail(r, "could not set up the test with client %s: %s", r->peer_s,
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
		return run_fail(r, "out of memory to check the Write region");
	r->verified = t.verified;
	r->corrupt += t.corrupt;
	return 0;
}

/* One client, from its first hello; t0: when the server began to wait. */
static int serve(const struct ubperf_opts *o, uint64_t t0, bool first, struct mtu_offer *offer)
{
	struct run r = { .o = o, .who = "server", .offer = offer };
	struct ubperf_opts so = *o;
	uint64_t wait_ns = (uint64_t)(o->wait_s * 1e9), stall_ns = (uint64_t)(o->stall_s * 1e9);
	int rc = 1;

	r.lat = NULL;
	r.o = &so;
	rc = run_open_ep(&r);
	if (rc)
		goto out;
	rc = 1;
	if (!o->json && first) {
		struct ep_stats es;

		/* A queue another socket held delays the start by up to 5 s: said. */
		ep_get_stats(r.ep[0], &es);
		printf("ubperf server: listening on %s (in-band setup, AF_XDP %s", o->dev, run_xsk_mode(&r));
		if (es.xsk_busy_binds)
			printf("; waited for %" PRIu64 " busy queue(s)", es.xsk_busy_binds);
		printf(")\n");
	}
	fflush(stdout);
	if (offer->line[0] && !offer->until)
		offer->until = ep_now_ns() + MTU_OFFER_NS;
	while (!r.started || r.nconnected < so.channels) {
		if (!r.started && offer->line[0] && ep_now_ns() > offer->until) {
			run_fail(&r, "%s", offer->line);	/* the client did not come back */
			goto out;
		}
		if (r.started)
			offer->line[0] = 0;
		if (wait_ns && ep_now_ns() - t0 > wait_ns) {
			if (r.started)
				run_fail(&r, "client %s set up %u of %u channels within %.0f s", r.peer_s,
				     r.nconnected, so.channels, o->wait_s);
			else if (offer->line[0])	/* a client came: its refusal, not "no client" */
				run_fail(&r, "%s", offer->line);
			else
				run_fail(&r, "no client within %.0f s", o->wait_s);
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
			run_fail(&r, "client %s went away during setup (%u of %u channels, nothing for "
			     "%.1f s): waiting for a new client", r.peer_s, r.nconnected,
			     so.channels, o->stall_s);
			rc = SERVE_AGAIN;
			goto out;
		}
		run_progress(&r);
		rc = server_inbox(&r, &so);
		if (rc)
			goto out;
		rc = 1;
	}
	if (run_workers(&r, server_loop))
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

		run_ctl_send(&r, port_of(&r, 0), r.ch[0].peer, &r.ch[0], r.peer_tpn[0], true, &m);
		while (ep_now_ns() < until) {
			run_progress(&r);
			server_inbox(&r, &so);
		}
	}
	run_report(&r, ctl_u64(r.peer_done.messages), true);
	if (r.bad_seq || r.corrupt) {
		run_fail(&r, "%" PRIu64 " messages out of order or duplicated, %" PRIu64 " corrupt",
		     r.bad_seq, r.corrupt);
		goto out;
	}
	rc = 0;
out:
	run_cleanup(&r);
	return rc;
}

int ubperf_server(const struct ubperf_opts *o)
{
	struct mtu_offer offer = { .line = "" };
	uint64_t t0 = ep_now_ns();
	int rc;

	for (bool first = true; (rc = serve(o, t0, first, &offer)) == SERVE_AGAIN; first = false)
		;
	return rc;
}
