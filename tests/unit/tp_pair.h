/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Two transport endpoints over the simulated link, with a Send workload from
 * endpoint 0 to endpoint 1 whose every byte is checked on arrival: the
 * message index is the order, the content is a function of the index.
 * Shared by the simulation tests, the fuzz target and the goodput bench.
 */
#ifndef UBXDP_TP_PAIR_H
#define UBXDP_TP_PAIR_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/tp.h"
#include "transport/tp_sim.h"

#define PAIR_NBUF	32

/* A key naming no region: the TokenID changed (it stays 20 bits, not 0). */
static inline struct tp_rkey BAD_ID(struct tp_rkey k)
{
	return (struct tp_rkey){ .token_id = k.token_id ^ 0x40, .token_value = k.token_value };
}

struct tp_pair {
	struct tp_ep *ep[2];
	struct tp_chan *ch[2];
	struct tp_sim *sim;
	uint32_t nmsg, max_len, window_ops;
	bool fixed_len;
	uint8_t *data;		/* every message, back to back */
	size_t *off;
	uint32_t *len;
	uint32_t posted, done, received;
	uint8_t *rbuf[PAIR_NBUF];
	uint32_t next_buf;
	bool no_recv;		/* do not post receive buffers (RNR tests) */
	bool no_repost;		/* nor again once one is used (the test posts) */
	uint32_t errors;
	char err[256];
	uint64_t bytes;		/* payload received, checked */
	uint64_t done_ns;	/* when the last message arrived */
	uint32_t chan_errors;
	enum tp_status chan_error;
	uint32_t send_errors;
	enum tp_status send_error;	/* the last one */
	uint16_t last_tassn;		/* of the last TP_EV_RECV */
};

static inline void pair_fail(struct tp_pair *p, const char *what, uint64_t a, uint64_t b)
{
	if (!p->errors++)
		snprintf(p->err, sizeof(p->err), "%s (%llu, %llu)", what,
			 (unsigned long long)a, (unsigned long long)b);
}

static inline int pair_post_recv(struct tp_pair *p, uint32_t i)
{
	return tp_post_recv(p->ch[1], p->rbuf[i], p->max_len, i);
}

/* A clean link both ways: 10 us, 10 Gbit/s. */
static inline void pair_link_cfg(struct tp_sim_cfg *s, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->seed = seed;
	for (int i = 0; i < 2; i++) {
		s->dir[i].delay_ns = 10000;
		s->dir[i].rate_bps = 10000000000ull;
	}
}

/*
 * Build the pair. chan[i] configures endpoint i's channel (both must agree
 * on the mode). Initial PSNs: random from the seed, unless the configs fix them.
 */
static inline int pair_init(struct tp_pair *p, const struct tp_chan_config chan[2],
			    const struct tp_sim_cfg *simcfg, uint32_t nmsg, uint32_t max_len,
			    uint64_t seed)
{
	struct tp_ep_config ec = { .seed = seed, .token_seed = seed | 1 };
	uint64_t rng = seed * 7919 + 1;
	size_t total = 0;

	memset(p, 0, sizeof(*p));
	p->nmsg = nmsg;
	p->max_len = max_len;
	p->window_ops = 16;
	for (int i = 0; i < 2; i++) {
		ec.seed = seed + (uint64_t)i * 1000003;
		ec.token_seed = ec.seed | 1;	/* reproducible TokenIDs */
		p->ep[i] = tp_ep_create(&ec);
		if (!p->ep[i])
			return -1;
		p->ch[i] = tp_chan_create(p->ep[i], &chan[i]);
		if (!p->ch[i])
			return -1;
	}
	for (int i = 0; i < 2; i++)
		if (tp_chan_connect(p->ch[i], tp_chan_tpn(p->ch[1 - i]),
				    tp_chan_init_psn(p->ch[1 - i])))
			return -1;
	p->off = calloc(nmsg + 1, sizeof(*p->off));
	p->len = calloc(nmsg + 1, sizeof(*p->len));
	for (uint32_t i = 0; i < nmsg; i++) {
		p->off[i] = total;
		p->len[i] = (uint32_t)(tp_sim_rand(&rng) % (max_len + 1));
		total += p->len[i];
	}
	p->data = malloc(total + 1);
	for (size_t k = 0; k < total; k++)
		p->data[k] = (uint8_t)tp_sim_rand(&rng);
	for (int i = 0; i < PAIR_NBUF; i++)
		p->rbuf[i] = malloc(max_len + 1);
	p->sim = tp_sim_create(simcfg, p->ep[0], p->ep[1]);
	return p->sim && p->off && p->len && p->data ? 0 : -1;
}

/* Every message the same length (bench). Call right after pair_init(). */
static inline void pair_fixed_len(struct tp_pair *p)
{
	for (uint32_t i = 0; i < p->nmsg; i++) {
		p->len[i] = p->max_len;
		p->off[i] = 0;	/* the content check is off: one buffer suffices */
	}
	free(p->data);
	p->data = malloc(p->max_len + 1);
	memset(p->data, 0x5a, p->max_len + 1);
	p->fixed_len = true;
}

/* Every message max_len bytes, each its own. Call right after pair_init(). */
static inline void pair_full_len(struct tp_pair *p)
{
	uint64_t rng = p->max_len;

	free(p->data);
	p->data = malloc((size_t)p->nmsg * p->max_len + 1);
	for (uint32_t i = 0; i < p->nmsg; i++) {
		p->off[i] = (size_t)i * p->max_len;
		p->len[i] = p->max_len;
	}
	for (size_t k = 0; k < (size_t)p->nmsg * p->max_len; k++)
		p->data[k] = (uint8_t)tp_sim_rand(&rng);
}

/* One message of exactly `len` bytes (nmsg must be 1). */
static inline void pair_one_msg(struct tp_pair *p, uint32_t len)
{
	free(p->data);
	p->data = malloc(len + 1);
	for (uint32_t i = 0; i < len; i++)
		p->data[i] = (uint8_t)(i * 7 + 1);
	p->off[0] = 0;
	p->len[0] = len;
}

static inline void pair_start(struct tp_pair *p)
{
	if (!p->no_recv)
		for (uint32_t i = 0; i < PAIR_NBUF; i++)
			pair_post_recv(p, i);
	p->next_buf = 0;
}

static inline void pair_refill(struct tp_pair *p)
{
	/* A failed channel refuses every post (-EIO): nothing more to try. */
	if (p->chan_errors)
		return;
	while (p->posted < p->nmsg && p->posted - p->done < p->window_ops) {
		int rc = tp_post_send(p->ch[0], p->data + p->off[p->posted], p->len[p->posted],
				      p->posted);

		if (rc) {
			if (rc != -EAGAIN)
				pair_fail(p, "post_send", (uint64_t)-rc, p->posted);
			return;
		}
		p->posted++;
	}
}

static inline void pair_on_recv(struct tp_pair *p, const struct tp_event *ev)
{
	uint32_t m = p->received;

	if (ev->status != TP_ST_OK) {
		pair_fail(p, "recv status", ev->status, m);
		return;
	}
	if (m >= p->nmsg) {
		pair_fail(p, "message delivered twice or from nowhere", m, ev->wr_id);
		return;
	}
	if (ev->wr_id != p->next_buf) {
		pair_fail(p, "landed in the wrong buffer (out of order)", ev->wr_id, p->next_buf);
		return;
	}
	if (ev->len != p->len[m]) {
		pair_fail(p, "length", ev->len, p->len[m]);
		return;
	}
	if (!p->fixed_len && memcmp(p->rbuf[ev->wr_id], p->data + p->off[m], p->len[m])) {
		pair_fail(p, "content", m, 0);
		return;
	}
	p->received++;
	p->last_tassn = ev->tassn;
	p->bytes += ev->len;
	p->done_ns = tp_sim_now(p->sim);
	p->next_buf = (p->next_buf + 1) % PAIR_NBUF;
	if (!p->no_repost && pair_post_recv(p, (uint32_t)ev->wr_id))
		pair_fail(p, "repost", ev->wr_id, 0);
}

static inline void pair_poll(struct tp_pair *p)
{
	struct tp_event ev;

	for (int i = 0; i < 2; i++)
		while (tp_ep_poll(p->ep[i], &ev)) {
			switch (ev.type) {
			case TP_EV_SEND_DONE:
				if (ev.status != TP_ST_OK) {
					p->send_errors++;
					p->send_error = ev.status;
				}
				else if (ev.wr_id != p->done)
					pair_fail(p, "send completed out of order", ev.wr_id, p->done);
				p->done++;
				break;
			case TP_EV_RECV:
				if (i == 1)
					pair_on_recv(p, &ev);
				break;
			case TP_EV_CHAN_ERROR:
				p->chan_errors++;
				p->chan_error = ev.status;
				break;
			default:
				break;
			}
		}
	pair_refill(p);
}

static inline bool pair_finished(void *ctx)
{
	struct tp_pair *p = ctx;

	pair_poll(p);
	/* Every message accounted for: delivered, or its send failed (a failed
	 * send may have been delivered too: >=, so that such a run ends and
	 * pair_verdict() says so, instead of running into its deadline). */
	return p->errors || p->chan_errors ||
	       (p->received + p->send_errors >= p->nmsg && p->done == p->nmsg);
}

static inline bool pair_run(struct tp_pair *p, uint64_t until)
{
	pair_start(p);
	pair_refill(p);
	return tp_sim_run(p->sim, until, pair_finished, p);
}

/*
 * How a run must end. The default, PAIR_CHECK(), is every message received
 * and every send completed OK on a channel that never failed. A test that
 * expects less says exactly what, with PAIR_CHECK_EXPECT(): each count is
 * compared for equality, and a field it leaves out is 0.
 */
struct pair_expect {
	uint32_t received;		/* messages delivered (in order, whole) */
	uint32_t send_errors;		/* sends completed with an error... */
	enum tp_status send_error;	/* ...the last of them with this status */
	uint32_t chan_errors;		/* channel failures reported... */
	enum tp_status chan_error;	/* ...the last of them with this status */
};

/*
 * true if the run ended as `e` says; else false with the reason and the
 * run's counts in why. finished: the run's result (pair_run() and the like:
 * its end condition held before the deadline).
 */
static inline bool pair_verdict(const struct tp_pair *p, bool finished,
				const struct pair_expect *e, char *why, size_t n)
{
	const char *bad = NULL;

	if (!finished)
		bad = "the run hit its deadline";
	else if (p->errors)
		bad = p->err;
	else if (p->received != e->received)
		bad = "messages received";
	else if (p->send_errors != e->send_errors)
		bad = "send errors";
	else if (e->send_errors && p->send_error != e->send_error)
		bad = "send error status";
	else if (p->chan_errors != e->chan_errors)
		bad = "channel errors";
	else if (e->chan_errors && p->chan_error != e->chan_error)
		bad = "channel error status";
	else if (p->done != p->posted)
		bad = "a posted send never completed";
	else if (!e->chan_errors && p->posted != p->nmsg)
		bad = "not every message was sent";
	if (!bad)
		return true;
	snprintf(why, n, "%s: finished=%d errors=%u received=%u (want %u) of %u, "
		 "posted %u done %u, send errors %u (%s; want %u %s), "
		 "channel errors %u (%s; want %u %s)", bad, (int)finished, p->errors,
		 p->received, e->received, p->nmsg, p->posted, p->done,
		 p->send_errors, tp_status_name(p->send_error), e->send_errors,
		 tp_status_name(e->send_error), p->chan_errors, tp_status_name(p->chan_error),
		 e->chan_errors, tp_status_name(e->chan_error));
	return false;
}

/* Every message received, every send OK, the channel never failed. */
static inline bool pair_all_done(const struct tp_pair *p, bool finished, char *why, size_t n)
{
	const struct pair_expect all = { .received = p->nmsg };

	return pair_verdict(p, finished, &all, why, n);
}

#ifdef fail_msg		/* cmocka's: in the tests */
/* `ok` (the run) is evaluated before the counts are read. */
#define PAIR_CHECK_EXPECT(p, ok, ...)						\
	do {									\
		bool ok_ = (ok);						\
		const struct pair_expect e_ = { __VA_ARGS__ };			\
		char why_[400];							\
										\
		if (!pair_verdict((p), ok_, &e_, why_, sizeof(why_)))		\
			fail_msg("%s: %s", __func__, why_);			\
	} while (0)
#define PAIR_CHECK(p, ok)	PAIR_CHECK_EXPECT(p, ok, .received = (p)->nmsg)
#endif

static inline void pair_free(struct tp_pair *p)
{
	tp_sim_destroy(p->sim);
	tp_ep_destroy(p->ep[0]);
	tp_ep_destroy(p->ep[1]);
	for (int i = 0; i < PAIR_NBUF; i++)
		free(p->rbuf[i]);
	free(p->data);
	free(p->off);
	free(p->len);
}

#endif
