// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubperf client: the run asked of the server channel by channel in band,
 * then each channel's operations posted and their completions taken until
 * the time or count is reached, Reads checked against the keyed payload,
 * and the end-of-run counts exchanged.
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

/* The server's region for channel c: its TokenID and token value. */
static struct tp_rkey rkey_of(const struct run *r, uint32_t c)
{
	return (struct tp_rkey){ .token_id = r->ans[c].token, .token_value = r->ans[c].token_value };
}

static uint64_t write_number(struct run *r)
{
	return r->threaded ? __atomic_fetch_add(&r->parent->write_num, 1, __ATOMIC_RELAXED) : r->posted;
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
		 * server checks its region by position at the end. Workers
		 * draw the numbers from one counter (one per message, not per
		 * packet): each once, all under the messages completed (a
		 * post is refused only with more than the depth outstanding). */
		payload_msg_fill(msg, size, r->run_id, c, write_number(r), off);
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
		return r->posted < r->quota;
	return now < r->t_start + (uint64_t)(r->o->seconds * 1e9);
}

static int client_loop(struct run *r)
{
	const struct ubperf_opts *o = r->o;
	uint64_t outstanding = 0, stall_ns = (uint64_t)(o->stall_s * 1e9);
	struct tp_event ev;

	r->t_start = r->last_progress = ep_now_ns();
	if (run_sample_tick(r, false, r->t_start))
		return 1;
	for (;;) {
		uint64_t now = ep_now_ns();

		for (uint32_t c = 0; c < o->channels && more_to_post(r, now); c++) {
			if (!run_mine(r, c))
				continue;
			for (uint32_t s = 0; s < o->depth && more_to_post(r, now); s++) {
				uint64_t *w = &r->free_slots[c * 4 + s / 64], bit = 1ull << (s % 64);
				int rc;

				if (!(*w & bit))
					continue;
				rc = post_one(r, c, s);
				if (rc == -EAGAIN)
					break;
				if (rc)
					return run_fail(r, "channel %u: posting failed: %s", c, strerror(-rc));
				*w &= ~bit;
				outstanding++;
				r->posted++;
			}
		}
		if (!outstanding && !more_to_post(r, now))
			break;
		run_progress(r);
		while (run_poll_event(r, &ev)) {
			uint32_t c, s;

			if (ev.type == TP_EV_CHAN_ERROR || ev.status != TP_ST_OK)
				return run_event_error(r, &ev);
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
			if (r->nlat < r->lat_cap)
				r->lat[r->nlat++] = now - r->post_ns[c * o->depth + s];
			r->free_slots[c * 4 + s / 64] |= 1ull << (s % 64);
			outstanding--;
			r->messages++;
			r->bytes += o->size;
			r->chan_bytes[c] += o->size;
			r->last_progress = now;
		}
		if (run_sample_tick(r, false, ep_now_ns()))
			return 1;
		if (run_stopped(r) == RUN_FAILED)
			return 1;	/* another worker's failure, said */
		if (outstanding && ep_now_ns() - r->last_progress > stall_ns)
			return run_fail(r, "peer stopped answering: no completion for %.1f s "
				    "(%" PRIu64 " operations outstanding)", o->stall_s, outstanding);
	}
	r->t_end = ep_now_ns();
	run_sample_end(r, false, r->t_end);
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
		peer = run_peer_for(r, e, p->ver, p->ip, wait_ms, err, sizeof(err));
		if (!peer) {
			inet_ntop(p->ver == 6 ? AF_INET6 : AF_INET, p->ip, a_s, sizeof(a_s));
			return run_fail(r, "channel %u: server port %s via %s: %s", c, a_s,
				    port_dev(r, e), err);
		}
		r->ch[c].peer = peer;
	}
	return 0;
}

#define SETUP_AGAIN	(-1)	/* *mtu: the server's default, smaller than ours */

/*
 * Every channel's hello to --peer by the channel's port (so from that port's
 * address, where the server answers the channel), again every CTL_RETRY_NS
 * until the server answered it, for --wait at most. The first one tells the
 * server the run; each answer connects its channel. A server that cannot
 * carry our MTU, when neither side was given --mtu, tells us its own
 * (UBPF_ANS_MTU_OWN): SETUP_AGAIN with it in *mtu, nothing said.
 */
static int client_setup(struct run *r, int wait_ms, uint32_t *mtu)
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
			return run_fail(r, "peer %s never answered (%u hellos in %.1f s; no ubperf server there?)",
				    o->peer, sent, o->wait_s);
		if (now >= deadline)
			return run_fail(r, "peer %s answered %u of %u channels in %.1f s (hellos or answers lost, or it went away)",
				    o->peer, r->nconnected, o->channels, o->wait_s);
		if (now >= next) {
			for (uint32_t c = 0; c < o->channels; c++) {
				if (r->connected[c])
					continue;
				m.index = c;
				sent += !run_ctl_send(r, port_of(r, c), r->ch[c].peer, &r->ch[c], 0, false, &m);
			}
			next = now + CTL_RETRY_NS;
		}
		run_progress(r);
		for (uint32_t i = 0; i < r->ninbox; i++) {
			const struct inbox_ent *e = &r->inbox[i];
			uint32_t c = e->m.index;
			int rc;

			if (e->m.kind != CTL_SETUP || !e->h.reply || e->m.run_id != r->run_id ||
			    c >= o->channels || r->connected[c] ||
			    e->h.dst_tpn != tp_chan_tpn(r->ch[c].tp))
				continue;	/* a duplicate answer, or not ours */
			if (e->m.u.ans.status == EMSGSIZE && e->m.u.ans.mtu_default && o->mtu_default &&
			    e->h.mtu >= EP_UB_MTU_MIN && e->h.mtu < o->mtu &&
			    !(e->h.mtu & (e->h.mtu - 1))) {
				*mtu = e->h.mtu;
				r->ninbox = 0;
				return SETUP_AGAIN;
			}
			/* A server given a larger --mtu: ours is the one to give it. */
			if (e->m.u.ans.status == EMSGSIZE && e->h.mtu > o->mtu)
				return run_fail(r, "peer %s refused a UB MTU of %u: it takes %u (the MTU is agreed in the hello: run the server with --mtu %u or without --mtu)",
					    o->peer, o->mtu, e->h.mtu, o->mtu);
			if (e->m.u.ans.status == EMSGSIZE)
				return run_fail(r, "peer %s refused a UB MTU of %u: it takes %u (the MTU is agreed in the hello: --mtu %u)",
					    o->peer, o->mtu, e->h.mtu, e->h.mtu);
			if (e->m.u.ans.status)
				return run_fail(r, "peer refused the test: %s", strerror((int)e->m.u.ans.status));
			if (e->h.mtu != o->mtu)
				return run_fail(r, "peer %s answered with a UB MTU of %u, ours is %u", o->peer,
					    e->h.mtu, o->mtu);
			/* an older server receives 256 past a hole: no span past that */
			tp_chan_peer_range(r->ch[c].tp, e->m.u.ans.rx_range);
			rc = ep_chan_connect(r->ep[port_of(r, c)], &r->ch[c], e->h.tpn, e->h.init_psn);
			if (rc)
				return run_fail(r, "channel %u: connect: %s", c, strerror(-rc));
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
			return run_fail(r, "channel %u: the server's region is %u bytes, the test needs "
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
		return run_fail(r, "the server verified %" PRIu64 " of the %" PRIu64 " %s", got, want,
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
			run_ctl_send(r, port_of(r, 0), r->ch[0].peer, &r->ch[0], r->peer_tpn[0], false, &m);
			next = now + CTL_RETRY_NS;
		}
		run_progress(r);
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
	return run_fail(r, "peer %s did not confirm the end of the test", r->o->peer);
}

/* The channels (none connected) again, as r->o says now: at the server's MTU. */
static int remake_chans(struct run *r)
{
	for (uint32_t i = 0; i < UBPERF_MAX_CHANS; i++) {
		if (r->ch[i].tp)
			ep_chan_destroy(r->ep[port_of(r, i)], &r->ch[i]);
		tp_cc_destroy(r->cc[i]);
		r->cc[i] = r->cc_of[i] = NULL;
	}
	tpg_destroy(r->g);
	r->g = NULL;
	series_free(&r->ser);
	return run_make_chans(r);
}

int ubperf_client(const struct ubperf_opts *opts)
{
	struct ubperf_opts co = *opts, *o = &co;	/* the MTU may become the server's */
	struct run r = { .o = o, .who = "client" };
	uint32_t mtu = 0;
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
		run_fail(&r, "out of memory");
		goto out;
	}
	for (uint32_t c = 0; c < o->channels; c++)
		for (uint32_t s = 0; s < o->depth; s++)
			r.free_slots[c * 4 + s / 64] |= 1ull << (s % 64);
	rc = run_open_ep(&r);
	if (rc)
		goto out;
	rc = 1;
	snprintf(peer_s, sizeof(peer_s), "peer %s", o->peer);
	if (run_init_peers(&r, ver, ip, wait_ms, peer_s))
		goto out;
	if (run_make_chans(&r))
		goto out;
	for (;;) {
		/* Tells this run's answers from a previous one's still on the way. */
		r.run_id = (uint32_t)(ep_now_ns() ^ (uint64_t)getpid() << 16);
		rc = client_setup(&r, wait_ms, &mtu);
		if (rc != SETUP_AGAIN)
			break;
		/* The channels were made for our MTU, and are not connected yet. */
		o->mtu = mtu;
		if (o->size_from_mtu)
			o->size = mtu;
		rc = remake_chans(&r);
		if (rc)
			goto out;
	}
	if (rc)
		goto out;
	rc = 1;
	if (regions(&r))
		goto out;
	if (follow_paths(&r, wait_ms))
		goto out;
	if (run_workers(&r, client_loop))
		goto out;
	if (client_done(&r, wait_ms))
		goto out;
	run_report(&r, ctl_u64(r.peer_done.messages), false);
	if (r.corrupt) {
		run_fail(&r, "%" PRIu64 " Reads brought back wrong bytes", r.corrupt);
		goto out;
	}
	if (r.peer_done.failed) {
		run_fail(&r, "the server reports a failure");
		goto out;
	}
	if (check_peer_verified(&r))
		goto out;
	rc = 0;
out:
	run_cleanup(&r);
	return rc;
}
