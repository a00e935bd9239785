/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * liburma (ubxdp) internals. One file per concern:
 *
 *   device.c    devices (network devices with addresses) and their EIDs
 *   context.c   urma_init, contexts, the port (one endpoint per device and
 *               process) and its progress thread, logging
 *   jfc.c       JFCE (an eventfd) and JFC (a ring of completion records)
 *   cr_ring.c   that ring: many producers and consumers, no lock
 *   jetty.c     JFS, JFR, jetty
 *   post.c      posting work requests
 *   seg.c       segments: register (the core's memory regions), import
 *   import.c    peers, remote jetties: import, advise, bind
 *   chan.c      the transport channels: made, destroyed, failed, waited for
 *   setup.c     their in-band setup and the imports' probes (hellos over
 *               UTP carrying struct ubx_ctl), the silent-peer watchdog
 *   wr.c        work requests: records, submission to the core, completion
 *   recv.c      JFR buffers; received Sends placed into them, completed
 *   progress.c  the I/O: driving the endpoint, the core's events to wr.c
 *               and recv.c, the progress thread
 *
 * Locking: everything of a port (its endpoint, core, channels, queues,
 * the fired lists of each JFCE) is under port->lock; a JFS, JFR or
 * jetty belongs to one port (struct ubx_q.port: docs/URMA.md "Worker
 * threads" for which), a JFC has one ring of its depth that every port
 * feeding it writes without a lock (cr_ring.c), and the counts of objects a
 * context or a JFC still has are atomic. A device has a port per worker thread of its
 * endpoint (struct ubx_devport); ports share no lock on the per-packet
 * path. The global device list and port list are under a global mutex
 * (context.c). The port's progress thread runs the
 * endpoint whenever no application thread does (posting and polling run
 * a round of it themselves).
 *
 * A transport channel (struct ubx_chan) joins one local JFS/JFR/jetty and
 * one remote JFR/jetty: the core's channel demultiplexes by TPN (or, UTP
 * and CTP, by the sender's channel), so a channel per jetty pair is what
 * tells a receive which local JFR it is for and which remote jetty sent it.
 * Both directions of a pair use the same channel.
 */
#ifndef UBXDP_URMA_INT_H
#define UBXDP_URMA_INT_H

#include <net/if.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "urma_api.h"
#include "urma/cr_ring.h"
#include "endpoint/ep.h"
#include "io/wake_timer.h"
#include "transport/tp.h"
#include "transport/tp_rnr_hold.h"

#define UBX_VISIBLE __attribute__((visibility("default")))

/* Limits this implementation advertises (urma_query_device). */
#define UBX_MAX_JFC		4096
#define UBX_MAX_JFS		4096
#define UBX_MAX_JFR		4096
#define UBX_MAX_JETTY		4096
#define UBX_MAX_JFC_DEPTH	(1u << 20)
#define UBX_MAX_JFS_DEPTH	1024
#define UBX_MAX_JFR_DEPTH	4096
#define UBX_MAX_INLINE		1024
#define UBX_MAX_SGE		TP_MAX_SGE
#define UBX_MAX_RSGE		1
#define UBX_MAX_MSG		(1u << 20)	/* a Send, Write or Read */
#define UBX_MAX_CHANS		4096		/* transport channels per port */
#define UBX_MAX_SEGS		4096
#define UBX_ID_MAX		0xfffffu	/* jetty IDs: 20 bits, as UB's */
#define UBX_ID_RESERVED_MAX	1023		/* IDs an application may pick (cfg.id) */
#define UBX_BOUNCE		64		/* receive buffers per channel (bounce path) */
#define UBX_RX_BATCH		32		/* frames a round takes: answers stay < TP_FIFO */
#define UBX_TIMEOUT_MS		2000		/* in-band setup (UBXDP_URMA_TIMEOUT_MS) */
#define UBX_HELLO_RETRY_NS	100000000ull	/* an unanswered hello goes again */
#define UBX_POLL_FDS		16		/* an endpoint's descriptors (ep_poll_fds) */
/* An application thread that polled an empty JFC, or waits in urma_wait_jfc,
 * this recently drives the endpoint: the progress thread stands back. */
#define UBX_APP_DRIVES_NS	1000000ull
/* The longest spin of urma_wait_jfc before it sleeps (jfc.c spin_budget). */
#define UBX_SPIN_MAX_NS		50000ull

enum ubx_magic {
	UBX_M_CTX = 0x75637478,
	UBX_M_JFCE,
	UBX_M_JFC,
	UBX_M_Q,
	UBX_M_TJETTY,
	UBX_M_SEG,
	UBX_M_DEAD = 0x64656164,
};

/* ---- logging (context.c) ---------------------------------------------------- */

void ubx_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define ubx_err(...)	ubx_log(URMA_VLOG_LEVEL_ERR, __VA_ARGS__)
#define ubx_warn(...)	ubx_log(URMA_VLOG_LEVEL_WARNING, __VA_ARGS__)
#define ubx_info(...)	ubx_log(URMA_VLOG_LEVEL_INFO, __VA_ARGS__)
#define ubx_dbg(...)	ubx_log(URMA_VLOG_LEVEL_DEBUG, __VA_ARGS__)

/* ---- devices (device.c) ---------------------------------------------------- */

struct ubx_dev {
	urma_device_t pub;
	char ifname[IF_NAMESIZE];
	bool present;
	struct ubx_dev *next;
};

#define UBX_MAX_EIDS	16
struct ubx_eids {
	uint32_t n;
	uint8_t ver[UBX_MAX_EIDS];	/* 4 or 6 */
	urma_eid_t eid[UBX_MAX_EIDS];
};

bool ubx_initialized(void);
uint32_t ubx_uasid(void);
/* The device behind a public pointer, NULL when it is not one of ours. */
struct ubx_dev *ubx_dev_of(const urma_device_t *d);
int ubx_dev_eids(const char *ifname, struct ubx_eids *out);
void ubx_devs_free(void);
/* Whether name is one of the comma-separated list l (empty or NULL: no). */
bool ubx_name_in_list(const char *l, const char *name);
/* Whether a device is a native UB port here (UBXDP_URMA_NATIVE: "all" or a list). */
bool ubx_dev_native(const char *ifname);
/* EID <-> IP address: 4 (IPv4-mapped) or 6. */
uint8_t ubx_eid_to_ip(const urma_eid_t *eid, uint8_t ip[16]);
void ubx_ip_to_eid(uint8_t ver, const uint8_t ip[16], urma_eid_t *eid);
bool ubx_eid_eq(const urma_eid_t *a, const urma_eid_t *b);

/* ---- the port: one endpoint per device and process (context.c) ------------- */

struct ubx_port;
struct ubx_q;
struct ubx_jfc;

struct ubx_peer {
	struct ep_peer ep;
	struct ubx_peer *next;
	bool path_warned;		/* ubx_mtu_to logged a failed path lookup */
};

/* A work request in flight: its completion record's fields, and what to
 * post while it waits for room in the core's queue. */
struct ubx_wr {
	uint32_t gen, idx;
	bool used;
	bool linked;			/* on its channel's outstanding list */
	struct ubx_q *q;
	struct ubx_chan *ch;
	uint64_t user_ctx;
	urma_opcode_t opcode;
	bool signaled;
	uint8_t *buf;			/* inline data, copied at posting */
	size_t buf_cap;
	struct tp_wr t;			/* t.sge points at sg */
	struct ubx_wr *next_held;
	struct ubx_wr *prev_ch, *next_ch;	/* the channel's outstanding list */
	struct tp_sge sg[UBX_MAX_SGE];	/* last: not cleared */
};

/* A Write with immediate that took a receive buffer of the core's while its
 * JFR had none posted: completed into the next one posted. */
struct ubx_imm {
	uint64_t imm;
	uint32_t len;
	struct ubx_imm *next;
};

enum ubx_chan_state { CH_SETUP, CH_READY, CH_FAILED };

struct ubx_chan {
	struct ep_chan ec;		/* ec.tp: the core's; ec.app: this */
	struct ubx_port *port;
	struct ubx_q *q;		/* the local JFS, JFR or jetty */
	urma_jetty_id_t remote;
	struct ubx_peer *peer;
	urma_transport_mode_t mode;
	urma_tp_type_t tp_type;
	uint8_t order;
	enum ubx_chan_state state;
	int err;			/* why setup failed (errno) */
	bool rc;			/* an RC binding */
	bool bound;			/* RC: the local jetty's binding */
	int waiters;			/* threads waiting for its setup */
	bool doomed;			/* destroyed while waited on: unlisted, the last waiter frees it */
	uint32_t peer_tpn;		/* the other side's channel */
	enum tp_status fail_st;		/* why it failed, for its oldest request */
	/* The peer's last sign of life (acknowledgements, data) while requests
	 * were outstanding: silent past the JFS's err_timeout, it is failed. */
	uint64_t life, life_ns, budget_ns;
	uint32_t nonce;		/* this channel's, in its OPENs and OPEN_ACKs */
	/* The peer's channel's (its OPEN's, or its OPEN_ACK's; 0: an older
	 * library said none): a reopened one may get the same TPN back. */
	uint32_t peer_nonce;
	uint32_t token;			/* presented in the OPEN */
	uint64_t next_hello, deadline;
	uint32_t hellos;
	uint32_t mtu;
	uint32_t peer_mtu;		/* named by a peer that refused ours (EMSGSIZE) */
	/* receive buffers the core fills, copied into the JFR's */
	uint8_t *bounce;
	size_t bounce_size;
	uint32_t nbounce;
	struct tp_rnr_hold hold;	/* answering RNR to Sends until a Retry */
	/* work requests outstanding on it, and those waiting for room */
	struct ubx_wr *out;
	uint32_t nout;
	struct ubx_wr *held, *held_tail;
	struct ubx_imm *imm_head, *imm_tail;
	struct ubx_chan *next;
	uint64_t rx_msgs;
};

/* A pending import: the remote side's answer to a probe. */
struct ubx_probe {
	uint32_t nonce;
	bool done;
	int status;
	struct ubx_probe *next;
};

#define UBX_INBOX	64

/* A hello taken by the endpoint, handled after the round (setup.c). */
struct ubx_hello_in {
	uint8_t ver, ip[16];
	struct tp_hello h;
	uint8_t app[128];
	size_t app_len;
};

/* A jetty ID's holder (struct ubx_devport). */
struct ubx_id {
	struct ubx_q *q;
	struct ubx_port *port;
};

/*
 * A device's endpoint in this process: its workers (ep.h, one transport
 * core and one set of sockets each, the program steering each frame to the
 * worker of its channel), a port each. A JFS, JFR or jetty, and its
 * channels, are one port's (ubx_q_place), so nothing on the per-packet path
 * is shared between ports. What is: the jetty IDs and the queues per port
 * (id_lock: a setup's, never a packet's) and the hellos a port hands to
 * another (its mailbox).
 */
struct ubx_devport {
	char ifname[IF_NAMESIZE];
	struct ep *ep;			/* worker 0's: the others' lead */
	uint32_t n;
	struct ubx_port *lane[UB_EP_MAX_WORKERS];
	int refs;			/* contexts */
	pthread_mutex_t id_lock;
	struct ubx_id *ids;
	uint32_t ids_cap, next_id;
	uint32_t nq[UB_EP_MAX_WORKERS];	/* JFS, JFR and jetties per port */
	struct ubx_devport *next;
};

struct ubx_port {
	char ifname[IF_NAMESIZE];
	int refs;			/* contexts on this port */
	struct ubx_devport *dp;
	uint32_t widx;			/* its worker */
	/* hellos for this port's jetties that another port's worker took
	 * (a first hello names no TPN: the program steers it to worker 0) */
	pthread_mutex_t mb_lock;
	struct ubx_hello_in mbox[UBX_INBOX];
	uint32_t nmbox;
	bool native;
	struct ep_native nat;
	enum tp_mode rtx;		/* RTP's retransmission mode */
	uint32_t span;			/* SR: new data this far past una (UBXDP_URMA_SPAN) */
	struct ep *ep;
	struct tp_ep *tp;
	struct tp_chan *ctl;		/* a channel never connected: hellos outside channels */
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* a setup or probe finished */
	pthread_t thr;
	bool thr_started, stop;
	int wake_fd;
	/* urma_wait_jfc's clock, kept armed across its sleeps; one waiter at a
	 * time has it (wt_busy), others sleep with a poll timeout */
	struct wake_timer wt;
	bool wt_busy;
	uint64_t wake_at;		/* when the progress thread means to wake */
	uint64_t app_active;		/* an application thread ran a round then */
	uint32_t mtu[2];		/* the largest UB MTU to IPv4, IPv6 peers */
	struct ubx_chan *chans;
	uint32_t nchans;
	struct ubx_peer *peers;
	struct ubx_probe *probes;
	/* local JFS/JFR/jetty by ID */
	struct ubx_q **ids;
	uint32_t ids_cap;
	uint32_t next_id;
	/* work requests in flight (wr_id = gen << 32 | index) */
	struct ubx_wr **wrs;
	uint32_t nwrs, *wr_free, nfree;
	/* hellos taken during a round, handled after it */
	struct ubx_hello_in inbox[UBX_INBOX];
	uint32_t ninbox;
	uint64_t rng;
	uint64_t watch_ns;		/* the next look at the channels' signs of life */
	/* counters beside the endpoint's and the core's */
	uint64_t jfc_overflow, rnr_sent, recv_len_err, um_dropped, setup_refused;
	uint64_t open_in, ctl_bad, token_refused, imm_late;
	uint64_t mtu_crossed;		/* OPENs that met one of ours of another UB MTU */
	uint64_t mtu_path_shrank;	/* answered setups whose path took less by then (setup.c) */
	uint64_t jfr_shared;		/* JFRs that went on bounce buffers (a second channel) */
	uint64_t thr_rounds, thr_idle;	/* the progress thread's rounds, its waits aside */
	uint32_t test_doomed_ms;	/* UBXDP_URMA_TEST_DOOMED_MS (wait_setup), read at open */
};

/* Open (or take another reference on) the port of a device. NULL, errno and
 * one line logged on failure. */
struct ubx_port *ubx_port_get(const char *ifname);
/* The UB MTU this process's channels on ifname (of MTU dev_mtu) take to
 * other hosts, the path beyond aside: its port's once open, else what
 * opening it now would give (the holder of the queues or a veth). */
uint32_t ubx_dev_ub_mtu(const char *ifname, uint32_t dev_mtu, bool native);
void ubx_port_put(struct ubx_port *p);
/* Wake the progress thread (new timers, work queued). */
void ubx_port_kick(struct ubx_port *p);
uint32_t ubx_port_timeout_ms(void);
uint64_t ubx_rand(struct ubx_port *p);

/* ---- contexts and objects -------------------------------------------------- */

struct ubx_ctx {
	urma_context_t pub;
	uint32_t magic;
	struct ubx_dev *dev;
	struct ubx_port *port;
	uint8_t ip_ver, ip[16];
	int nobj;			/* objects still made from it */
};

struct ubx_ctx *ubx_ctx_of(const urma_context_t *c);

/* Counts of objects still using another (a context's, a JFC's, a JFR's):
 * changed under the locks of different ports. */
static inline void ubx_cnt(int *v, int d) { __atomic_add_fetch(v, d, __ATOMIC_RELAXED); }
static inline int ubx_cnt_get(const int *v) { return __atomic_load_n(v, __ATOMIC_RELAXED); }

/* The JFCs of a JFCE that one port's worker fired (under that port's lock). */
struct ubx_fired {
	struct ubx_jfc **v;
	uint32_t n, cap;
};

struct ubx_jfce {
	urma_jfce_t pub;
	uint32_t magic;
	struct ubx_ctx *ctx;
	struct ubx_fired fired[UB_EP_MAX_WORKERS];
	uint32_t wmask;			/* ports of its JFCs' rings (atomic) */
	int njfc;
	/* urma_wait_jfc's spin before it sleeps (jfc.c): how long, and the
	 * waits since the last that tried one while it is 0 (its lead port's lock) */
	uint64_t spin_ns;
	uint32_t spin_skipped;
};

struct ubx_jfc {
	urma_jfc_t pub;
	uint32_t magic;
	struct ubx_ctx *ctx;
	struct ubx_jfce *jfce;
	uint32_t depth;
	/* One ring of depth records, whichever ports feed it (cr_ring.c). */
	struct ubx_cring ring;
	bool logged;			/* atomic: its first loss logged */
	uint32_t wmask;			/* ports that feed it (atomic) */
	bool armed, fired;		/* atomic: one event per arming, whichever port */
	int users;
};

struct ubx_jfce *ubx_jfce_of(const urma_jfce_t *e);
struct ubx_jfc *ubx_jfc_of(const urma_jfc_t *j);
/* Port p feeds jfc from now on (p's lock held). */
void ubx_jfc_attach(struct ubx_jfc *jfc, struct ubx_port *p);
/* Add a record from port p (its lock held): false when the JFC was full
 * (lost, counted). */
bool ubx_jfc_push(struct ubx_jfc *jfc, struct ubx_port *p, const urma_cr_t *cr);

enum ubx_kind { UBX_JFS = 1, UBX_JFR, UBX_JETTY };

/* A receive work request of a JFR: queued (for the bounce path), or
 * posted straight to the core of the JFR's only channel. */
struct ubx_rwr {
	uint64_t user_ctx;
	uint32_t nsg;
	uint64_t total;
	urma_sge_t *sg;			/* the JFR's max_sge of them */
	int32_t next;			/* the free list, or the queue */
	struct ubx_chan *posted;
};

struct ubx_q {
	union {
		urma_jfs_t jfs;
		urma_jfr_t jfr;
		urma_jetty_t jetty;
	} pub;
	uint32_t magic;
	enum ubx_kind kind;
	struct ubx_ctx *ctx;
	struct ubx_port *port;		/* its worker's: it, its channels, its requests */
	bool placed;			/* counted in its port's queues (a jetty's own JFR: not) */
	uint32_t id;
	urma_transport_mode_t mode;
	uint8_t order;
	/* send side (JFS, jetty) */
	struct ubx_jfc *scq;
	uint32_t sdepth, sout;
	uint32_t max_sge, max_inline;
	uint8_t rnr_retry, err_timeout;
	/* receive side: a JFR, or a jetty's JFR (its own or shared) */
	struct ubx_q *jfr;
	struct ubx_jfc *rcq;
	bool rcq_ref;			/* a reference on rcq taken: given back at teardown */
	bool own_jfr;
	/* JFR: posted receive work requests, rdepth slots */
	struct ubx_rwr *rq;
	uint32_t rdepth, rmax_sge;
	int32_t rfree, rq_head, rq_tail;
	uint32_t rcount;		/* queued, for the bounce path */
	uint32_t rposted;		/* posted to a channel's core */
	uint32_t nchans;		/* channels receiving for it */
	struct ubx_chan *direct;	/* the only one: its buffers are posted to it */
	bool shared;			/* it had several: bounce buffers from then on */
	urma_token_t token;
	uint8_t token_policy;
	uint8_t min_rnr_timer;
	int users;			/* jetties sharing this JFR */
	uint32_t imm_waiting;		/* JFR: Writes with immediate waiting for a buffer */
	/* RC: the channel it is bound by */
	struct ubx_chan *bound;
	urma_target_jetty_t *bound_tj;
	/* Threads in ubx_chan_get for it, the port lock released meanwhile
	 * (a setup waited on): its teardown waits them out before it is
	 * freed, and marks it dying first so that none sets up again. */
	int getters;
	bool dying;
};

struct ubx_q *ubx_q_of(const void *pub, enum ubx_kind kind);
/* Port p's JFS, JFR or jetty of that ID (NULL: none, or another port's). */
struct ubx_q *ubx_q_find(struct ubx_port *p, uint32_t id);
/* The port holding a jetty ID (NULL: none). */
struct ubx_port *ubx_id_port(struct ubx_devport *d, uint32_t id);

struct ubx_tjetty {
	urma_target_jetty_t pub;
	uint32_t magic;
	struct ubx_ctx *ctx;
	struct ubx_peer *peer;		/* its context's port's; another port resolves its own */
	urma_token_t token;
	int binds;
};

struct ubx_tjetty *ubx_tjetty_of(const urma_target_jetty_t *t);

struct ubx_seg {
	urma_target_seg_t pub;
	uint32_t magic;
	struct ubx_ctx *ctx;
	bool imported;
	urma_token_id_t tid;		/* registered: its token ID */
	urma_token_t token;
	uint8_t access;
};

struct ubx_seg *ubx_seg_of(const urma_target_seg_t *s);

/* ---- peers (import.c) --------------------------------------------------------- */

/* The peer for an address (resolved, waiting up to the setup timeout with
 * the lock released). NULL with *err. */
struct ubx_peer *ubx_peer_get(struct ubx_port *p, uint8_t ver, const uint8_t ip[16], int *err);
/* Port p's peer of an import (p's lock held; released while resolving). */
struct ubx_peer *ubx_tjetty_peer(struct ubx_port *p, struct ubx_tjetty *tj, int *err);

/* ---- channels (chan.c) ---------------------------------------------------------- */

bool ubx_jid_eq(const urma_jetty_id_t *a, const urma_jetty_id_t *b);
/* ep_now_ns() ms from now. */
uint64_t ubx_deadline_after(uint32_t ms);
/* A time of ep_now_ns()'s clock as an absolute CLOCK_MONOTONIC time (the
 * port's condition variable waits on that clock). */
void ubx_abs_time(uint64_t at_ns, struct timespec *ts);
/* 0, or why a TP type does not go with a mode here (errno). */
int ubx_tp_type_check(const struct ubx_port *p, urma_transport_mode_t mode, urma_tp_type_t t);
/* The channel of q to remote, NULL when there is none (port lock held). */
struct ubx_chan *ubx_chan_find(struct ubx_port *p, const struct ubx_q *q, const urma_jetty_id_t *remote);
/* A channel of q to remote by peer, its core's channel made but not
 * connected (port lock held). NULL with *err (errno). */
struct ubx_chan *ubx_chan_new(struct ubx_port *p, struct ubx_q *q, const urma_jetty_id_t *remote,
			      struct ubx_peer *peer, urma_transport_mode_t mode,
			      urma_tp_type_t tp_type, uint8_t order, uint32_t mtu,
			      uint32_t peer_depth, bool span, int *err);
/* The channel from local object q to the remote one, set up (bounded by the
 * setup timeout) when there is none yet. Port lock held; it is released
 * while waiting. NULL with *err (errno) when it cannot be had. */
struct ubx_chan *ubx_chan_get(struct ubx_q *q, struct ubx_tjetty *tj, bool rc, int *err);
uint32_t ubx_mtu_to(const struct ubx_port *p, struct ubx_peer *peer);
/* Destroy, flushing its work requests (error records) first; tell the peer. */
void ubx_chan_destroy(struct ubx_chan *ch, bool tell_peer);
/* All of q's, at its teardown: it waits out (the lock released) the threads
 * still in ubx_chan_get for q, which read q when they wake. */
void ubx_chans_of_q_destroy(struct ubx_q *q);
/* A channel waited on that must never connect (the peer refused its UB MTU,
 * or offers a smaller one): failed with EMSGSIZE, peer_mtu the smaller named,
 * out of the port's list; its waiter frees it (port lock held). */
void ubx_chan_refused(struct ubx_chan *ch, uint32_t peer_mtu);
/* Fail a channel here (its peer went silent): its requests end, the oldest
 * with st, the rest flushed, and its core's channel goes; the channel stays
 * as FAILED (RC: its requests fail at once; RM: set up again when used). */
void ubx_chan_kill(struct ubx_chan *ch, urma_cr_status_t st);

/* ---- the in-band setup (setup.c) ------------------------------------------------ */

/* A hello the endpoint took (inside a round): queued for ubx_ctl_run(). */
bool ubx_ctl_rx(void *ctx, const uint8_t *tp, size_t len, uint8_t ver, const uint8_t ip[16]);
/* The queued hellos, and the setups' timers. Returns the next timer (ns). */
uint64_t ubx_ctl_run(struct ubx_port *p, uint64_t now);
/* A channel's OPEN (again: its next one is due UBX_HELLO_RETRY_NS later);
 * its CLOSE. */
void ubx_send_open(struct ubx_chan *ch);
void ubx_send_close(struct ubx_chan *ch);
/* Whether the remote side has jetty id (a JFR or jetty as type says) in this
 * mode and TP type, and takes the token: a PROBE, resent until answered or
 * until the setup timeout. Port lock held; released while waiting. 0 or the
 * errno of the refusal (ETIMEDOUT: no answer). */
int ubx_probe(struct ubx_ctx *c, struct ubx_peer *peer, const urma_jetty_id_t *id,
	      urma_transport_mode_t mode, urma_target_type_t type, uint8_t order,
	      urma_tp_type_t tp_type, uint32_t token);

/* ---- I/O (progress.c) ---------------------------------------------------------- */

/* The receive buffers posted to a channel's core, by their wr_id: a bounce
 * buffer of the library's, or a JFR's buffer posted straight to the core;
 * any other wr_id is a work request's (ubx_wr_id). */
#define BOUNCE_TAG	(1ull << 63)
#define DIRECT_TAG	(1ull << 62)

/* One round (port lock held): receive, timers, transmit, then the events.
 * Returns what moved (0: idle). */
int ubx_progress(struct ubx_port *p);
/* The same, from an application thread that keeps at it (polling an empty
 * JFC, waiting on a JFCE): the progress thread stands back while one does
 * (UBX_APP_DRIVES_NS), and takes over when they stop (or ubx_app_idle). */
int ubx_app_progress(struct ubx_port *p);
void ubx_app_idle(struct ubx_port *p);
void ubx_dispatch(struct ubx_port *p);
void *ubx_progress_thread(void *arg);

/* ---- the receive side (recv.c) ---------------------------------------------------- */

/* A receive the core completed on ch: into a JFR buffer, answered. */
void ubx_recv(struct ubx_port *p, struct ubx_chan *ch, const struct tp_event *ev);
/* A receive buffer of ch's failed core channel, given back. */
void ubx_recv_flushed(struct ubx_chan *ch, const struct tp_event *ev);
/* Post the bounce buffers of a new channel. */
int ubx_chan_rx_init(struct ubx_chan *ch);
void ubx_chan_rx_fini(struct ubx_chan *ch);
/* A JFR got buffers: channels holding back with RNR may let go. */
void ubx_jfr_refilled(struct ubx_q *jfr);
/* JFR buffers: init (port lock not needed), free, post one (0 or URMA_EAGAIN). */
int ubx_jfr_rq_init(struct ubx_q *jfr, uint32_t depth, uint32_t max_sge);
void ubx_jfr_rq_free(struct ubx_q *jfr);
int ubx_jfr_post(struct ubx_q *jfr, const urma_jfr_wr_t *wr, uint64_t total);
void ubx_chan_imm_free(struct ubx_chan *ch);

/* ---- work requests (wr.c) ------------------------------------------------------- */

/* Work request records. */
struct ubx_wr *ubx_wr_alloc(struct ubx_port *p, uint64_t *wr_id);
struct ubx_wr *ubx_wr_lookup(struct ubx_port *p, uint64_t wr_id);
void ubx_wr_free(struct ubx_port *p, struct ubx_wr *w);
uint64_t ubx_wr_id(struct ubx_port *p, const struct ubx_wr *w);
/* Submit w to its channel's core (or keep it behind a fence). 0 or -errno. */
int ubx_wr_submit(struct ubx_wr *w);
/* Complete w with status (record into its JFC when signaled or failed). */
void ubx_wr_complete(struct ubx_port *p, struct ubx_wr *w, urma_cr_status_t st, uint32_t len);
urma_cr_status_t ubx_cr_status(enum tp_status st, uint8_t rspinfo);
/* A completion record of q (ch: its channel, or NULL), its status and
 * request's fields left to the caller. */
void ubx_cr_fill(urma_cr_t *cr, const struct ubx_q *q, const struct ubx_chan *ch, bool recv);

#endif
