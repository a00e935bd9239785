/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ubperf: one run of either side, what the session core (session.c: the
 * endpoints and channels, in-band control, samples, the report) gives the
 * client (client.c) and the server (server.c).
 */
#ifndef UBPERF_SESSION_H
#define UBPERF_SESSION_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ubperf/ctl.h"
#include "endpoint/ep.h"
#include "ubperf/series.h"
#include "ubperf/ubperf.h"

#define MAX_LAT_SAMPLES	(4u << 20)
#define CTL_RETRY_NS	200000000ull	/* an unanswered hello goes again */
#define CTL_DALLY_NS	(3 * CTL_RETRY_NS)	/* the server answers a lost DONE reply's retries */
#define INBOX_MAX	256

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
	/* ctl_rx runs in every worker's thread: the inbox is taken under it. */
	pthread_mutex_t inbox_lock;
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
	/* Server: a refusal a client may answer by setting up again at our
	 * default MTU (UBPF_ANS_MTU_OWN): said only if none does by until. */
	struct mtu_offer {
		char line[320];		/* "": none pending */
		uint32_t run_id;	/* the refused run: its other hellos are stale */
		uint64_t until;		/* 0: from when we listen again */
	} *offer;
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
	uint64_t cpu_ns;	/* the process's CPU time in run_workers (both sides) */
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
	/*
	 * --workers: the ports are the endpoint's workers on one device. While
	 * run_workers runs a loop, each thread has a run of its own (this one
	 * is worker 0's), driving port wk and its channels only; its counters
	 * are added into this run afterwards. stop: any thread's end ends the
	 * others' (parent's, read by all).
	 */
	bool threaded;
	uint32_t wk;
	struct run *parent;
	int stop;
	size_t lat_cap;		/* lat's room (the thread's share) */
	uint64_t quota;		/* --count: this thread's share of the messages */
	uint64_t write_num;	/* the next Write's number (parent's, threaded) */
};

/* The device of port k (--workers: the one device of every port). */
static inline const char *port_dev(const struct run *r, uint32_t k)
{
	return r->o->devs[r->o->ndevs > 1 ? k : 0];
}

/* Channel c in this thread's hands (every channel when not threaded). */
static inline bool run_mine(const struct run *r, uint32_t c)
{
	return !r->threaded || c % r->nep == r->wk;
}

/* Channel c's port: each side spreads its channels over its ports. */
static inline uint32_t port_of(const struct run *r, uint32_t c)
{
	return c % r->nep;
}

/* One line on stderr, "ubperf WHO: ..."; returns the exit status 1. */
int run_fail(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* CTP over an entity of several ports (--mode ctp with more than one --dev). */
bool run_ctp_entity(const struct ubperf_opts *o);
/* The endpoints on the ports (the ports exist: main.c checked); 0 or the exit status. */
int run_open_ep(struct run *r);
const char *run_xsk_mode(const struct run *r);	/* "zero-copy", "copy" or "mixed" (ports) */
/* m in channel c's hello to the peer's channel peer_tpn (0: not known yet),
 * by port k to p (the channel's own peer, or the client as port k reaches it). */
int run_ctl_send(struct run *r, uint32_t k, struct ep_peer *p, const struct ep_chan *c, uint32_t peer_tpn,
		 bool reply, const struct ctl_msg *m);
/* The other side's first address as each port reaches it. */
int run_init_peers(struct run *r, uint8_t ver, const uint8_t ip[16], int wait_ms, const char *what);
/* The peer for address ip by port k: a known one, or a new one resolved
 * (waiting up to wait_ms). NULL with err set when the table is full or the
 * address cannot be reached by that port. */
struct ep_peer *run_peer_for(struct run *r, uint32_t k, uint8_t ver, const uint8_t ip[16], int wait_ms, char *err,
			     size_t errlen);
/*
 * loop(r) on every worker's thread at once (--workers; else just on this
 * one), each with a run of its own, the counters summed into r after.
 * Returns the first non-zero status.
 */
int run_workers(struct run *r, int (*loop)(struct run *));
struct json_object;
/* The JSON array of the first n workers' counters and queues (--json). */
struct json_object *workers_json(struct run *r, uint32_t n);
/* Whether another thread's loop has ended the run (threaded only): 0 not,
 * RUN_ENDED worker 0's loop ended well (the others end theirs), RUN_FAILED
 * a loop failed, having said why (the others give up). */
#define RUN_ENDED	1
#define RUN_FAILED	2
int run_stopped(const struct run *r);
/* Every port a round (a wait on all of them when none had work); a worker's
 * thread, its own port. */
void run_progress(struct run *r);
/* The next completion or channel event of any port; false when there is none. */
bool run_poll_event(struct run *r, struct tp_event *ev);
/* The channels of the run (--channels) over the ports, with --cc and --lb. */
int run_make_chans(struct run *r);
/* --interval: a row when one is due (and its line unless the output is JSON). */
int run_sample_tick(struct run *r, bool server, uint64_t now);
/* --interval: the last, partial row at t_ns. */
void run_sample_end(struct run *r, bool server, uint64_t t_ns);
/* Everything the run holds, released. */
void run_cleanup(struct run *r);
/* The end-of-run report, text or --json. */
void run_report(struct run *r, uint64_t peer_messages, bool server);
/* An event that ends the run (a failed channel or operation), said; the exit status. */
int run_event_error(struct run *r, const struct tp_event *ev);

#endif
