// SPDX-License-Identifier: BSD-2-Clause
/*
 * urma_example: a URMA application, written against urma_api.h alone
 * (no ubxdp header), for ubxdp's liburma or any other.
 *
 *   server:  urma_example -d DEV [-p PORT] [-m rm|rc|um] [-t rtp|ctp|utp] [-e] [--once]
 *   client:  urma_example -d DEV -s SERVER_IP [same options]
 *   client of several servers at once: -s IP1 -p PORT1 -s IP2 -p PORT2 ...
 *            (the i-th -p goes with the i-th -s; one -p serves them all): a
 *            thread per server, each with a context, jetty and segment of
 *            its own on the device, all running together
 *
 * The two exchange their jetty and segment over TCP (PORT, 18515), then
 * the client
 *   1. sends a message and waits for the server's reply (a Send back),
 *   2. writes a pattern into the server's segment and reads it back,
 *   3. adds to a word of the server's segment atomically, then swaps it
 *      (when the device offers atomics), and writes with immediate data,
 * each completion awaited by polling or, with -e, through the JFCE. UM
 * does the first only. --rounds N repeats the first two N times (--size:
 * the Write's length, 4096 by default). Every check prints a line; the
 * exit status is 0 when all passed.
 *
 *   --bench write|send|read --size N --depth N --seconds S
 *      the client keeps DEPTH requests of SIZE bytes outstanding for S
 *      seconds and prints goodput, message rate and the p50 and p99 of a
 *      request's time from post to completion (with --depth 1 a round
 *      trip: a Send's or Write's acknowledgement, a Read's data) (JSON
 *      with --json).
 *   --violate range|token|segtoken
 *      the client writes past the end of the server's segment, imports
 *      the server's jetty with a wrong token, or writes with a wrong token
 *      value for the segment, and expects the refusal.
 *   --hold S
 *      the client, once connected, keeps writing for S seconds and reports
 *      how its requests ended (for a server that dies meanwhile).
 *   --seconds S (without --bench)
 *      the rounds go on for S seconds at least (every byte still checked).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "urma_api.h"

#define MSG_SIZE	160
#define RECV_SLOTS	64
#define DEFAULT_PORT	18515
#define SEG_DEFAULT	(16u << 20)
#define REPLY_PREFIX	"echo: "
#define MAX_SERVERS	8

struct opts {
	const char *dev, *server;
	int port, eid_index;
	urma_transport_mode_t mode;
	urma_tp_type_t tp_type;
	int order;
	bool event, once, json;
	const char *bench, *violate;
	uint32_t size, depth;
	double seconds, hold;
	bool seconds_set;
	uint32_t rounds;
	uint64_t seg_size;
	uint32_t token;
	uint32_t uasid;			/* urma_init's; 0: the library picks one */
	const char *servers[MAX_SERVERS];
	int ports[MAX_SERVERS];
	int nservers, nports;
	const char *tag;		/* several servers: whose lines these are */
};

/* What the two sides tell each other (both run this program: host order). */
struct info {
	uint8_t eid[16];
	uint32_t uasid, jetty_id;
	uint64_t seg_va, seg_len;
	uint32_t seg_token_id, seg_attr;
	uint32_t mode, tp_type;
	uint32_t bench, size, depth;	/* client: what it will run */
} __attribute__((packed));

struct app {
	struct opts o;
	urma_device_t *dev;
	urma_device_attr_t attr;
	urma_context_t *ctx;
	urma_jfce_t *jfce;
	urma_jfc_t *jfc;
	urma_jfr_t *jfr;
	urma_jetty_t *jetty;
	uint8_t *buf;
	uint64_t buf_len;
	urma_target_seg_t *seg;
	urma_target_jetty_t *tjetty;
	urma_target_seg_t *tseg;
	struct info peer;
	urma_token_t token;
	int fails;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void check(struct app *a, bool ok, const char *what)
{
	printf("%s%s: %s\n", a->o.tag ? a->o.tag : "", ok ? "ok" : "FAILED", what);
	fflush(stdout);
	a->fails += !ok;
}

/* ---- setup ------------------------------------------------------------------- */

static int setup(struct app *a)
{
	const struct opts *o = &a->o;
	urma_eid_info_t *eids;
	uint32_t neid = 0;
	urma_jfc_cfg_t jc = { 0 };
	urma_jfr_cfg_t rc = { 0 };
	urma_jetty_cfg_t tc = { 0 };
	urma_seg_cfg_t sc = { 0 };
	urma_init_attr_t ia = { .uasid = o->uasid };

	/* Again in every thread of a client of several servers: the same. */
	if (urma_init(&ia)) {
		fprintf(stderr, "urma_init failed\n");
		return -1;
	}
	a->dev = urma_get_device_by_name((char *)o->dev);
	if (!a->dev) {
		fprintf(stderr, "no URMA device %s: %s\n", o->dev, strerror(errno));
		return -1;
	}
	if (urma_query_device(a->dev, &a->attr)) {
		fprintf(stderr, "urma_query_device %s failed\n", o->dev);
		return -1;
	}
	eids = urma_get_eid_list(a->dev, &neid);
	if (!eids || (uint32_t)o->eid_index >= neid) {
		fprintf(stderr, "device %s has no EID %d\n", o->dev, o->eid_index);
		urma_free_eid_list(eids);
		return -1;
	}
	printf("device %s eid " EID_FMT "\n", a->dev->name, EID_ARGS(eids[o->eid_index].eid));
	printf("device %s port MTU %u\n", a->dev->name, 128u << a->attr.port_attr[0].active_mtu);
	urma_free_eid_list(eids);
	a->ctx = urma_create_context(a->dev, (uint32_t)o->eid_index);
	if (!a->ctx) {
		fprintf(stderr, "urma_create_context on %s failed: %s\n", o->dev, strerror(errno));
		return -1;
	}
	a->token.token = o->token;
	if (o->event) {
		a->jfce = urma_create_jfce(a->ctx);
		if (!a->jfce)
			return -1;
	}
	jc.depth = 4096;
	jc.jfce = a->jfce;
	a->jfc = urma_create_jfc(a->ctx, &jc);
	if (!a->jfc)
		return -1;
	if (o->event && urma_rearm_jfc(a->jfc, false))
		return -1;
	rc.depth = 1024;
	rc.trans_mode = o->mode;
	rc.flag.bs.token_policy = URMA_TOKEN_PLAIN_TEXT;
	rc.flag.bs.order_type = (uint32_t)o->order;
	rc.min_rnr_timer = 6;
	rc.jfc = a->jfc;
	rc.token_value = a->token;
	rc.max_sge = 1;
	a->jfr = urma_create_jfr(a->ctx, &rc);
	if (!a->jfr) {
		fprintf(stderr, "urma_create_jfr failed: %s\n", strerror(errno));
		return -1;
	}
	tc.flag.bs.share_jfr = URMA_SHARE_JFR;
	tc.jfs_cfg.depth = 1024;
	tc.jfs_cfg.trans_mode = o->mode;
	tc.jfs_cfg.flag.bs.order_type = (uint32_t)o->order;
	tc.jfs_cfg.max_sge = 1;
	tc.jfs_cfg.rnr_retry = URMA_TYPICAL_RNR_RETRY;
	tc.jfs_cfg.err_timeout = URMA_TYPICAL_ERR_TIMEOUT;
	tc.jfs_cfg.jfc = a->jfc;
	tc.shared.jfr = a->jfr;
	a->jetty = urma_create_jetty(a->ctx, &tc);
	if (!a->jetty) {
		fprintf(stderr, "urma_create_jetty failed: %s\n", strerror(errno));
		return -1;
	}
	a->buf_len = o->seg_size;
	a->buf = mmap(NULL, a->buf_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a->buf == MAP_FAILED) {
		a->buf = NULL;
		return -1;
	}
	sc.va = (uint64_t)(uintptr_t)a->buf;
	sc.len = a->buf_len;
	sc.token_value = a->token;
	sc.flag.bs.token_policy = URMA_TOKEN_PLAIN_TEXT;	/* every access presents it */
	sc.flag.bs.access = URMA_ACCESS_READ | URMA_ACCESS_WRITE | URMA_ACCESS_ATOMIC;
	a->seg = urma_register_seg(a->ctx, &sc);
	if (!a->seg) {
		fprintf(stderr, "urma_register_seg of %" PRIu64 " bytes failed: %s\n", a->buf_len,
			strerror(errno));
		return -1;
	}
	return 0;
}

static void teardown(struct app *a)
{
	if (a->tjetty && a->o.mode == URMA_TM_RC)
		urma_unbind_jetty(a->jetty);
	if (a->tjetty)
		urma_unimport_jetty(a->tjetty);
	if (a->tseg)
		urma_unimport_seg(a->tseg);
	if (a->seg)
		urma_unregister_seg(a->seg);
	if (a->jetty)
		urma_delete_jetty(a->jetty);
	if (a->jfr)
		urma_delete_jfr(a->jfr);
	if (a->jfc)
		urma_delete_jfc(a->jfc);
	if (a->jfce)
		urma_delete_jfce(a->jfce);
	if (a->ctx)
		urma_delete_context(a->ctx);
	if (a->buf)
		munmap(a->buf, a->buf_len);
	if (!a->o.tag)
		urma_uninit();	/* several servers: main does, once all threads are done */
}

static void my_info(struct app *a, struct info *i)
{
	memset(i, 0, sizeof(*i));
	memcpy(i->eid, a->ctx->eid.raw, 16);
	i->uasid = a->ctx->uasid;
	i->jetty_id = a->jetty->jetty_id.id;
	i->seg_va = a->seg->seg.ubva.va;
	i->seg_len = a->seg->seg.len;
	i->seg_token_id = a->seg->seg.token_id;
	i->seg_attr = a->seg->seg.attr.value;
	i->mode = a->o.mode;
	i->tp_type = a->o.tp_type;
}

/* Import the peer's jetty (RC: and bind to it) and segment. */
static int import_peer(struct app *a, const urma_token_t *token)
{
	urma_rjetty_t rj = { 0 };
	urma_seg_t s = { 0 };
	urma_import_seg_flag_t f = { 0 };

	memcpy(rj.jetty_id.eid.raw, a->peer.eid, 16);
	rj.jetty_id.uasid = a->peer.uasid;
	rj.jetty_id.id = a->peer.jetty_id;
	rj.trans_mode = a->o.mode;
	rj.type = URMA_JETTY;
	rj.tp_type = a->o.tp_type;
	rj.flag.bs.order_type = (uint32_t)a->o.order;
	a->tjetty = urma_import_jetty(a->ctx, &rj, (urma_token_t *)token);
	if (!a->tjetty)
		return -errno;
	if (a->o.mode == URMA_TM_RC && urma_bind_jetty(a->jetty, a->tjetty)) {
		fprintf(stderr, "urma_bind_jetty failed\n");
		urma_unimport_jetty(a->tjetty);
		a->tjetty = NULL;
		return -EIO;
	}
	memcpy(s.ubva.eid.raw, a->peer.eid, 16);
	s.ubva.uasid = a->peer.uasid;
	s.ubva.va = a->peer.seg_va;
	s.len = a->peer.seg_len;
	s.attr.value = a->peer.seg_attr;
	s.token_id = a->peer.seg_token_id;
	f.bs.access = URMA_ACCESS_READ | URMA_ACCESS_WRITE | URMA_ACCESS_ATOMIC;
	f.bs.mapping = URMA_SEG_NOMAP;
	a->tseg = urma_import_seg(a->ctx, &s, &a->token, 0, f);
	return a->tseg ? 0 : -errno;
}

/* ---- TCP ----------------------------------------------------------------------- */

static int xfer(int fd, const void *out, void *in, size_t n)
{
	size_t got = 0;

	if (write(fd, out, n) != (ssize_t)n)
		return -1;
	while (got < n) {
		ssize_t r = read(fd, (uint8_t *)in + got, n - got);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int tcp_listen(int port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };
	int fd = socket(AF_INET6, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int tcp_connect(const char *host, int port, double wait_s)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	double until = now_s() + wait_s;

	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
		len = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
		len = sizeof(struct sockaddr_in6);
	} else {
		return -1;
	}
	do {
		int fd = socket(ss.ss_family, SOCK_STREAM, 0), one = 1;

		if (fd < 0)
			return -1;
		if (!connect(fd, (struct sockaddr *)&ss, len)) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		close(fd);
		usleep(100000);
	} while (now_s() < until);
	return -1;
}

/* ---- completions ------------------------------------------------------------------ */

/*
 * One completion record, waiting up to timeout_s: by polling, or (-e) by
 * the JFCE: wait, poll, acknowledge, rearm (and poll once more: a record
 * may come between the poll and the rearm).
 */
static int next_cr(struct app *a, urma_cr_t *cr, double timeout_s)
{
	double until = now_s() + timeout_s;

	for (;;) {
		int n = urma_poll_jfc(a->jfc, 1, cr);

		if (n < 0) {
			fprintf(stderr, "urma_poll_jfc: %s\n", strerror(errno));
			return -1;
		}
		if (n)
			return 0;
		if (now_s() > until)
			return -ETIMEDOUT;
		if (a->o.event) {
			urma_jfc_t *ev = NULL;
			uint32_t one = 1;
			int w = urma_wait_jfc(a->jfce, 1, 100, &ev);

			if (w < 0)
				return -1;
			if (w == 1) {
				if (ev != a->jfc)
					return -1;
				urma_ack_jfc(&ev, &one, 1);
				if (urma_rearm_jfc(a->jfc, false))
					return -1;
			}
		}
	}
}

/*
 * Nothing completed: with a JFCE, sleep until something does (at most ms);
 * rearming first is safe, a JFC with records waiting fires at once. No spin
 * of its own: liburma's urma_wait_jfc spins while spinning pays (docs/URMA.md
 * "Waiting"); a 50 us spin in every wait made a one-at-a-time Send 3-4x
 * slower where the peer shared the CPU.
 */
static void idle_wait(struct app *a, int ms)
{
	urma_jfc_t *ev;
	uint32_t one = 1;

	if (!a->jfce || urma_rearm_jfc(a->jfc, false))
		return;
	if (urma_wait_jfc(a->jfce, 1, ms, &ev) == 1)
		urma_ack_jfc(&ev, &one, 1);
}

static const char *cr_status_name(urma_cr_status_t s)
{
	switch (s) {
	case URMA_CR_SUCCESS:			return "success";
	case URMA_CR_LOC_LEN_ERR:		return "local length error";
	case URMA_CR_REM_ACCESS_ABORT_ERR:	return "remote access error";
	case URMA_CR_REM_OPERATION_ERR:		return "remote operation error";
	case URMA_CR_REM_UNSUPPORTED_REQ_ERR:	return "remote unsupported request";
	case URMA_CR_ACK_TIMEOUT_ERR:		return "ack timeout";
	case URMA_CR_RNR_RETRY_CNT_EXC_ERR:	return "receiver not ready";
	case URMA_CR_WR_FLUSH_ERR:		return "flushed";
	default:				return "error";
	}
}

static urma_sge_t sge(struct app *a, void *p, uint32_t len)
{
	return (urma_sge_t){ .addr = (uint64_t)(uintptr_t)p, .len = len, .tseg = a->seg };
}

static int post_recv(struct app *a, uint32_t slot, uint32_t size)
{
	urma_sge_t s = sge(a, a->buf + a->buf_len / 2 + (uint64_t)slot * size, size);
	urma_jfr_wr_t wr = { .src = { .sge = &s, .num_sge = 1 }, .user_ctx = slot };
	urma_jfr_wr_t *bad;

	return urma_post_jetty_recv_wr(a->jetty, &wr, &bad);
}

static int post_send(struct app *a, void *p, uint32_t len, uint64_t ctx, bool signaled)
{
	urma_sge_t s = sge(a, p, len);
	urma_jfs_wr_t wr = {
		.opcode = URMA_OPC_SEND, .tjetty = a->tjetty, .user_ctx = ctx,
		.send = { .src = { .sge = &s, .num_sge = 1 } },
	};
	urma_jfs_wr_t *bad;

	wr.flag.bs.complete_enable = signaled;
	return urma_post_jetty_send_wr(a->jetty, &wr, &bad);
}

static int post_rw(struct app *a, urma_opcode_t op, void *local, uint64_t remote, uint32_t len,
		   uint64_t ctx)
{
	urma_sge_t l = sge(a, local, len);
	urma_sge_t r = { .addr = remote, .len = len, .tseg = a->tseg };
	urma_jfs_wr_t wr = { .opcode = op, .tjetty = a->tjetty, .user_ctx = ctx };
	urma_jfs_wr_t *bad;

	wr.flag.bs.complete_enable = 1;
	if (op == URMA_OPC_WRITE) {
		wr.rw.src = (urma_sg_t){ .sge = &l, .num_sge = 1 };
		wr.rw.dst = (urma_sg_t){ .sge = &r, .num_sge = 1 };
	} else {
		wr.rw.src = (urma_sg_t){ .sge = &r, .num_sge = 1 };
		wr.rw.dst = (urma_sg_t){ .sge = &l, .num_sge = 1 };
	}
	return urma_post_jetty_send_wr(a->jetty, &wr, &bad);
}

/* ---- server ------------------------------------------------------------------------- */

static int serve_one(struct app *a, int fd)
{
	struct info mine;
	uint32_t slots;
	uint8_t *msg;
	double until;

	my_info(a, &mine);
	if (xfer(fd, &mine, &a->peer, sizeof(mine)))
		return -1;
	if (a->peer.mode != (uint32_t)a->o.mode || a->peer.tp_type != (uint32_t)a->o.tp_type) {
		fprintf(stderr, "server: the client runs another mode\n");
		return -1;
	}
	/* Receive buffers first: the client's first Send may come at once
	 * (a bench: twice what it keeps outstanding, as ubperf's server). */
	slots = a->peer.bench && a->peer.depth * 2 > RECV_SLOTS ? a->peer.depth * 2 : RECV_SLOTS;
	if ((uint64_t)slots * (a->peer.bench ? a->peer.size : MSG_SIZE) > a->buf_len / 2) {
		fprintf(stderr, "server: %u receive buffers of %u bytes exceed half the segment\n", slots,
			a->peer.size);
		return -1;
	}
	for (uint32_t i = 0; i < slots; i++)
		if (post_recv(a, i, a->peer.bench ? a->peer.size : MSG_SIZE))
			return -1;
	/* The client's jetty, to reply to it (RC: bound to it). */
	if (import_peer(a, &a->token)) {
		fprintf(stderr, "server: cannot import the client's jetty: %s\n", strerror(errno));
		return -1;
	}
	if (write(fd, "S", 1) != 1)
		return -1;
	printf("server: client jetty %u\n", a->peer.jetty_id);
	fflush(stdout);
	/* Serve until the client closes the TCP connection. */
	until = 0;
	while (!stop) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		urma_cr_t cr;
		int n = urma_poll_jfc(a->jfc, 1, &cr);

		if (n < 0)
			return -1;
		if (n == 0) {
			if (poll(&pfd, 1, a->jfce ? 0 : 1) > 0) {
				char c;

				if (read(fd, &c, 1) <= 0)
					break;
			}
			idle_wait(a, 20);
			continue;
		}
		if (!cr.flag.bs.s_r)
			continue;	/* our replies */
		if (cr.status != URMA_CR_SUCCESS) {
			fprintf(stderr, "server: receive failed: %s\n", cr_status_name(cr.status));
			post_recv(a, (uint32_t)cr.user_ctx, a->peer.bench ? a->peer.size : MSG_SIZE);
			continue;
		}
		if (a->peer.bench) {
			post_recv(a, (uint32_t)cr.user_ctx, a->peer.size);
			continue;
		}
		if (cr.opcode == URMA_CR_OPC_WRITE_WITH_IMM) {
			printf("server: Write with immediate 0x%llx, %u bytes, from jetty %u\n",
			       (unsigned long long)cr.imm_data, cr.completion_len, cr.remote_id.id);
			fflush(stdout);
			post_recv(a, (uint32_t)cr.user_ctx, MSG_SIZE);
			continue;
		}
		msg = a->buf + a->buf_len / 2 + cr.user_ctx * MSG_SIZE;
		printf("server: received \"%.*s\" (%u bytes) from jetty %u\n", (int)cr.completion_len,
		       (char *)msg, cr.completion_len, cr.remote_id.id);
		/* The reply from the first half of the segment. */
		{
			uint8_t *out = a->buf + a->buf_len / 2 - MSG_SIZE;
			int len = snprintf((char *)out, MSG_SIZE, REPLY_PREFIX "%.*s",
					   (int)cr.completion_len, (char *)msg);

			post_recv(a, (uint32_t)cr.user_ctx, MSG_SIZE);
			if (post_send(a, out, (uint32_t)len, 1000, true))
				fprintf(stderr, "server: reply failed\n");
		}
		fflush(stdout);
	}
	(void)until;
	if (a->tjetty && a->o.mode == URMA_TM_RC)
		urma_unbind_jetty(a->jetty);
	urma_unimport_jetty(a->tjetty);
	urma_unimport_seg(a->tseg);
	a->tjetty = NULL;
	a->tseg = NULL;
	/* Buffers still posted: the next client's posting finds the JFR full
	 * otherwise; drain by deleting nothing, they stay for it. */
	return 0;
}

static int run_server(struct app *a)
{
	int lfd = tcp_listen(a->o.port);

	if (lfd < 0) {
		fprintf(stderr, "server: cannot listen on TCP port %d\n", a->o.port);
		return 1;
	}
	printf("server: listening on TCP port %d\n", a->o.port);
	fflush(stdout);
	do {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0)
			break;	/* SIGINT or SIGTERM: the context is deleted on the way out */
		if (serve_one(a, fd))
			a->fails++;
		close(fd);
	} while (!a->o.once);
	close(lfd);
	return a->fails ? 1 : 0;
}

/* ---- client -------------------------------------------------------------------------- */

static int demo_send(struct app *a)
{
	uint8_t *out = a->buf, *in;
	char want[MSG_SIZE];
	bool got_send = false, got_recv = false;
	urma_cr_t cr;
	int len;

	if (post_recv(a, 0, MSG_SIZE))
		return -1;
	len = snprintf((char *)out, MSG_SIZE, "hello from pid %d", (int)getpid());
	if (post_send(a, out, (uint32_t)len, 1, true)) {
		check(a, false, "post Send");
		return -1;
	}
	while (!got_send || !got_recv) {
		if (next_cr(a, &cr, 10)) {
			check(a, false, "Send and reply completed");
			return -1;
		}
		if (cr.status != URMA_CR_SUCCESS) {
			fprintf(stderr, "client: %s completion: %s\n", cr.flag.bs.s_r ? "receive" : "send",
				cr_status_name(cr.status));
			check(a, false, "Send and reply completed");
			return -1;
		}
		if (cr.flag.bs.s_r)
			got_recv = true;
		else
			got_send = cr.user_ctx == 1;
		if (cr.flag.bs.s_r) {
			in = a->buf + a->buf_len / 2 + cr.user_ctx * MSG_SIZE;
			snprintf(want, sizeof(want), REPLY_PREFIX "%s", (char *)out);
			check(a, cr.completion_len == strlen(want) && !memcmp(in, want, strlen(want)) &&
				 cr.opcode == URMA_CR_OPC_SEND && cr.remote_id.id == a->peer.jetty_id,
			      "Send, and the reply carries it back");
		}
	}
	return 0;
}

/* The port's UB MTU: CTP carries an operation in one packet. */
static uint32_t op_max(const struct app *a)
{
	uint32_t mtu = 128u << a->attr.port_attr[0].active_mtu;

	return a->o.tp_type == URMA_CTP && a->o.size > mtu ? mtu : a->o.size;
}

static int demo_write_read(struct app *a, uint32_t round)
{
	uint32_t len = op_max(a);
	uint8_t *src = a->buf + 8192, *dst = src + len;
	urma_cr_t cr;

	if (8192 + 2 * (uint64_t)len > a->buf_len / 2 || 4096 + (uint64_t)len > a->peer.seg_len / 2) {
		check(a, false, "--size fits half of both segments");
		return -1;
	}
	for (uint32_t i = 0; i < len; i++)
		src[i] = (uint8_t)(i * 7 + getpid() + round * 31);
	memset(dst, 0, len);
	if (post_rw(a, URMA_OPC_WRITE, src, a->peer.seg_va + 4096, len, 2) || next_cr(a, &cr, 10)) {
		check(a, false, "Write");
		return -1;
	}
	check(a, cr.status == URMA_CR_SUCCESS && cr.user_ctx == 2 && cr.completion_len == len,
	      "Write into the server's segment");
	if (post_rw(a, URMA_OPC_READ, dst, a->peer.seg_va + 4096, len, 3) || next_cr(a, &cr, 10)) {
		check(a, false, "Read");
		return -1;
	}
	check(a, cr.status == URMA_CR_SUCCESS && cr.user_ctx == 3 && !memcmp(src, dst, len),
	      "Read brings back what was written");
	return 0;
}

/* One atomic on the server's word at offset 64: the old value comes back. */
static int atomic_op(struct app *a, urma_opcode_t op, uint64_t x, uint64_t y, uint64_t *old)
{
	urma_sge_t l = sge(a, a->buf + 24576, 8);
	urma_sge_t r = { .addr = a->peer.seg_va + 64, .len = 8, .tseg = a->tseg };
	urma_jfs_wr_t wr = { .opcode = op, .tjetty = a->tjetty, .user_ctx = 4 };
	urma_jfs_wr_t *bad;
	urma_cr_t cr;

	wr.flag.bs.complete_enable = 1;
	if (op == URMA_OPC_FADD) {
		wr.faa.dst = &r;
		wr.faa.src = &l;
		wr.faa.operand = x;
	} else {
		wr.cas.dst = &r;
		wr.cas.src = &l;
		wr.cas.cmp_data = x;
		wr.cas.swap_data = y;
	}
	if (urma_post_jetty_send_wr(a->jetty, &wr, &bad) || next_cr(a, &cr, 10) ||
	    cr.status != URMA_CR_SUCCESS || cr.user_ctx != 4)
		return -1;
	memcpy(old, a->buf + 24576, 8);
	return 0;
}

static int demo_atomic(struct app *a)
{
	uint64_t v0, v1, v2;

	if (!a->attr.dev_cap.atomic_feat.bs.fetch_and_add || !a->attr.dev_cap.atomic_feat.bs.cas) {
		printf("skip: atomics (the device offers none)\n");
		return 0;
	}
	/* Add 5, then swap in a value only if the word is what it now must be. */
	if (atomic_op(a, URMA_OPC_FADD, 5, 0, &v0) || atomic_op(a, URMA_OPC_CAS, v0 + 5, 1000, &v1) ||
	    atomic_op(a, URMA_OPC_FADD, 0, 0, &v2)) {
		check(a, false, "fetch-and-add, compare-and-swap");
		return -1;
	}
	check(a, v1 == v0 + 5 && v2 == 1000, "fetch-and-add, then compare-and-swap, on the server's word");
	return 0;
}

/* Write with immediate: the data lands and the server's receive carries the imm. */
static int demo_write_imm(struct app *a)
{
	urma_sge_t l = sge(a, a->buf + 32768, 256);
	urma_sge_t r = { .addr = a->peer.seg_va + 8192, .len = 256, .tseg = a->tseg };
	urma_jfs_wr_t wr = { .opcode = URMA_OPC_WRITE_IMM, .tjetty = a->tjetty, .user_ctx = 5,
			     .rw = { .src = { .sge = &l, .num_sge = 1 }, .dst = { .sge = &r, .num_sge = 1 },
				     .notify_data = 0x1234abcdull } };
	urma_jfs_wr_t *bad;
	urma_cr_t cr;

	wr.flag.bs.complete_enable = 1;
	memset(a->buf + 32768, 0x5a, 256);
	if (urma_post_jetty_send_wr(a->jetty, &wr, &bad) || next_cr(a, &cr, 10)) {
		check(a, false, "Write with immediate");
		return -1;
	}
	check(a, cr.status == URMA_CR_SUCCESS && cr.user_ctx == 5, "Write with immediate");
	return 0;
}

/* Requests' times from post to completion, in ns. */
struct lat {
	uint32_t *ns;
	size_t n, cap;
};

static void lat_add(struct lat *l, double s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 65536;
		uint32_t *ns = realloc(l->ns, cap * sizeof(*ns));

		if (!ns)
			return;	/* the rest go uncounted */
		l->ns = ns;
		l->cap = cap;
	}
	l->ns[l->n++] = s >= 4.0 ? UINT32_MAX : (uint32_t)(s * 1e9);
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* The q-quantile in us (l sorted). */
static double lat_us(const struct lat *l, double q)
{
	return l->n ? l->ns[(size_t)(q * (double)(l->n - 1))] / 1e3 : 0;
}

static int bench(struct app *a)
{
	const struct opts *o = &a->o;
	urma_opcode_t op = !strcmp(o->bench, "send") ? URMA_OPC_SEND :
			   !strcmp(o->bench, "read") ? URMA_OPC_READ : URMA_OPC_WRITE;
	uint64_t done = 0, posted = 0, bytes = 0, errs = 0;
	uint32_t out = 0;
	double t0 = now_s(), t_end = t0 + o->seconds, t;
	double *posted_at;
	struct lat lat = { 0 };
	urma_cr_t cr[64];
	int rc = -1;

	if ((uint64_t)o->depth * o->size > a->buf_len / 2 ||
	    (uint64_t)o->depth * o->size > a->peer.seg_len / 2) {
		fprintf(stderr, "client: --depth x --size exceeds half the segment\n");
		return -1;
	}
	posted_at = calloc(o->depth, sizeof(*posted_at));
	if (!posted_at)
		return -1;
	for (;;) {
		t = now_s();
		while (out < o->depth && t < t_end) {
			uint32_t slot = (uint32_t)(posted % o->depth);
			uint8_t *l = a->buf + (uint64_t)slot * o->size;
			int pr = op == URMA_OPC_SEND ? post_send(a, l, o->size, slot, true) :
				 post_rw(a, op, l, a->peer.seg_va + (uint64_t)slot * o->size, o->size, slot);

			if (pr == URMA_EAGAIN)
				break;
			if (pr) {
				fprintf(stderr, "client: post failed: %d\n", pr);
				goto out;
			}
			posted_at[slot] = t;
			out++;
			posted++;
		}
		if (!out && t >= t_end)
			break;
		{
			int n = urma_poll_jfc(a->jfc, 64, cr);

			if (n < 0)
				goto out;
			if (!n)
				idle_wait(a, 10);
			if (n)
				t = now_s();
			for (int i = 0; i < n; i++) {
				if (cr[i].flag.bs.s_r)
					continue;
				out--;
				if (cr[i].status != URMA_CR_SUCCESS) {
					if (!errs)
						fprintf(stderr, "client: request failed: %s\n",
							cr_status_name(cr[i].status));
					errs++;
					continue;
				}
				done++;
				bytes += cr[i].completion_len;
				if (cr[i].user_ctx < o->depth)
					lat_add(&lat, t - posted_at[cr[i].user_ctx]);
			}
		}
		if (errs) {
			fprintf(stderr, "client: %" PRIu64 " requests failed\n", errs);
			goto out;
		}
	}
	t = now_s() - t0;
	qsort(lat.ns, lat.n, sizeof(*lat.ns), cmp_u32);
	if (o->json)
		printf("{\"op\": \"%s\", \"size\": %u, \"depth\": %u, \"seconds\": %.3f, "
		       "\"messages\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"goodput_bps\": %.0f, "
		       "\"msg_rate\": %.0f, \"latency_us\": {\"p50\": %.1f, \"p99\": %.1f}}\n",
		       o->bench, o->size, o->depth, t, done, bytes, (double)bytes * 8 / t,
		       (double)done / t, lat_us(&lat, 0.5), lat_us(&lat, 0.99));
	else
		printf("%s %u B x %u: %" PRIu64 " messages in %.2f s, %.1f Mbit/s, %.0f msg/s, "
		       "post to completion p50 %.1f us, p99 %.1f us\n", o->bench, o->size, o->depth,
		       done, t, (double)bytes * 8 / t / 1e6, (double)done / t, lat_us(&lat, 0.5),
		       lat_us(&lat, 0.99));
	rc = 0;
out:
	free(lat.ns);
	free(posted_at);
	return rc;
}

/* Keep writing until told to stop or hold_s passes; report how requests ended. */
static int hold(struct app *a)
{
	double until = now_s() + a->o.hold;
	uint64_t ok = 0, failed = 0;
	uint32_t out = 0;
	urma_cr_t cr;
	int last = -1;

	printf("client: holding\n");
	fflush(stdout);
	while (now_s() < until) {
		if (out < 8 && post_rw(a, URMA_OPC_WRITE, a->buf, a->peer.seg_va, 1024, 9) == 0)
			out++;
		if (urma_poll_jfc(a->jfc, 1, &cr) == 1 && !cr.flag.bs.s_r) {
			out--;
			if (cr.status == URMA_CR_SUCCESS) {
				ok++;
			} else {
				failed++;
				last = cr.status;
				break;
			}
		}
	}
	printf("client: writes ok %" PRIu64 ", failed %" PRIu64 " (%s)\n", ok, failed,
	       last < 0 ? "none" : cr_status_name((urma_cr_status_t)last));
	return failed ? 0 : -1;
}

static int violate(struct app *a, int fd)
{
	urma_cr_t cr;

	if (!strcmp(a->o.violate, "range")) {
		/* Past the end of the server's segment: refused there, nothing written. */
		if (post_rw(a, URMA_OPC_WRITE, a->buf, a->peer.seg_va + a->peer.seg_len - 100, 4096, 7) ||
		    next_cr(a, &cr, 10)) {
			check(a, false, "a Write past the segment completes");
			return -1;
		}
		printf("client: out-of-range Write: %s\n", cr_status_name(cr.status));
		check(a, cr.status == URMA_CR_REM_ACCESS_ABORT_ERR,
		      "a Write past the end of the segment fails at the initiator");
		/* And the jetty still works afterwards. */
		return demo_write_read(a, 0);
	}
	if (!strcmp(a->o.violate, "segtoken")) {
		/* The segment's token value wrong: refused there, nothing written. */
		{
			urma_seg_t s = a->tseg->seg;
			urma_token_t wrong = { .token = a->token.token ^ 1 };
			urma_import_seg_flag_t f = { .bs.access = URMA_ACCESS_READ | URMA_ACCESS_WRITE };
			urma_target_seg_t *bad = urma_import_seg(a->ctx, &s, &wrong, 0, f), *good = a->tseg;

			if (!bad)
				return -1;
			a->tseg = bad;
			if (post_rw(a, URMA_OPC_WRITE, a->buf, a->peer.seg_va, 512, 7) || next_cr(a, &cr, 10)) {
				check(a, false, "a Write with a wrong token value completes");
				return -1;
			}
			printf("client: Write with a wrong token value: %s\n", cr_status_name(cr.status));
			check(a, cr.status == URMA_CR_REM_ACCESS_ABORT_ERR,
			      "a Write with a wrong token value fails at the initiator");
			a->tseg = good;
			urma_unimport_seg(bad);
		}
		return demo_write_read(a, 0);
	}
	(void)fd;
	return -1;
}

static int run_client(struct app *a)
{
	struct info mine;
	int fd = tcp_connect(a->o.server, a->o.port, 10);
	char sync;

	if (fd < 0) {
		fprintf(stderr, "client: cannot reach %s TCP port %d\n", a->o.server, a->o.port);
		return 1;
	}
	my_info(a, &mine);
	if (a->o.bench) {
		mine.bench = 1;
		mine.size = a->o.size;
		mine.depth = a->o.depth;
	}
	if (xfer(fd, &mine, &a->peer, sizeof(mine)) || read(fd, &sync, 1) != 1) {
		fprintf(stderr, "client: the server hung up\n");
		close(fd);
		return 1;
	}
	if (a->o.violate && !strcmp(a->o.violate, "token")) {
		urma_token_t wrong = { .token = a->token.token ^ 0x5a5a };
		int rc = import_peer(a, &wrong);

		printf("client: import with a wrong token: %s\n", rc ? strerror(-rc) : "accepted");
		check(a, rc == -EACCES, "importing with a wrong token is refused");
		close(fd);
		return a->fails ? 1 : 0;
	}
	if (import_peer(a, &a->token)) {
		fprintf(stderr, "client: cannot import the server's jetty: %s\n", strerror(errno));
		close(fd);
		return 1;
	}
	printf("%sclient: server jetty %u imported\n", a->o.tag ? a->o.tag : "", a->peer.jetty_id);
	fflush(stdout);
	if (a->o.bench) {
		if (bench(a))
			a->fails++;
	} else if (a->o.hold > 0) {
		if (hold(a))
			a->fails++;
	} else if (a->o.violate) {
		violate(a, fd);
	} else {
		double until = a->o.seconds_set ? now_s() + a->o.seconds : 0;
		uint32_t r;

		for (r = 0; (r < a->o.rounds || now_s() < until) && !a->fails; r++) {
			demo_send(a);
			if (a->o.mode != URMA_TM_UM)
				demo_write_read(a, r);
		}
		printf("%sclient: %u rounds\n", a->o.tag ? a->o.tag : "", r);
		if (a->o.mode != URMA_TM_UM && !a->fails) {
			demo_atomic(a);
			demo_write_imm(a);
		}
	}
	close(fd);
	return a->fails ? 1 : 0;
}

/* ---- several servers: a thread each ---------------------------------------------------- */

struct worker {
	struct app a;
	pthread_t thr;
	char tag[32];
	int rc;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;

	w->rc = setup(&w->a) ? 1 : run_client(&w->a);
	teardown(&w->a);
	return NULL;
}

static int run_clients(const struct opts *o)
{
	struct worker *w = calloc((size_t)o->nservers, sizeof(*w));
	int fails = 0;

	if (!w)
		return 1;
	for (int i = 0; i < o->nservers; i++) {
		w[i].a.o = *o;
		w[i].a.o.server = o->servers[i];
		w[i].a.o.port = o->ports[i < o->nports ? i : o->nports - 1];
		snprintf(w[i].tag, sizeof(w[i].tag), "[%s port %d] ", w[i].a.o.server, w[i].a.o.port);
		w[i].a.o.tag = w[i].tag;
		if (pthread_create(&w[i].thr, NULL, worker_run, &w[i])) {
			w[i].rc = 1;
			w[i].thr = 0;
		}
	}
	for (int i = 0; i < o->nservers; i++) {
		if (w[i].thr)
			pthread_join(w[i].thr, NULL);
		fails += w[i].rc != 0;
	}
	urma_uninit();
	free(w);
	return fails ? 1 : 0;
}

/* ---- main ------------------------------------------------------------------------------ */

/*
 * A number as every ubxdp tool reads it: decimal, or hex after 0x (010 is
 * ten, not octal); anything else is refused in one line, exit 2. (The example
 * builds against the public headers alone, so not the library's parse_num.)
 */
static unsigned long long num(const char *opt, const char *s)
{
	const char *d = s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? s + 2 : s;
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(d, &end, d == s ? 10 : 16);
	if (!(*d >= '0' && *d <= '9') && !(d != s && ((*d >= 'a' && *d <= 'f') || (*d >= 'A' && *d <= 'F'))))
		end = (char *)d;
	if (errno || end == d || *end) {
		fprintf(stderr, "urma_example: --%s: '%s' is not a number (decimal or 0x hex)\n", opt, s);
		exit(2);
	}
	return v;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: urma_example -d DEV [-s SERVER_IP [-p PORT]]... [-m rm|rc|um] [-t rtp|ctp|utp]\n"
		"                    [-o ot|oi|ol] [-e] [-i EID_INDEX] [--once] [--seg-size BYTES]\n"
		"                    [--token N] [--bench write|send|read --size N --depth N --seconds S]\n"
		"                    [--json] [--violate range|token|segtoken] [--hold SECONDS] [--rounds N]\n"
		"                    [--uasid N]\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, 'd' }, { "server", required_argument, NULL, 's' },
		{ "port", required_argument, NULL, 'p' }, { "mode", required_argument, NULL, 'm' },
		{ "tp", required_argument, NULL, 't' }, { "order", required_argument, NULL, 'o' },
		{ "event", no_argument, NULL, 'e' }, { "eid", required_argument, NULL, 'i' },
		{ "once", no_argument, NULL, 1 }, { "bench", required_argument, NULL, 2 },
		{ "size", required_argument, NULL, 3 }, { "depth", required_argument, NULL, 4 },
		{ "seconds", required_argument, NULL, 5 }, { "json", no_argument, NULL, 6 },
		{ "violate", required_argument, NULL, 7 }, { "seg-size", required_argument, NULL, 8 },
		{ "token", required_argument, NULL, 9 }, { "hold", required_argument, NULL, 10 },
		{ "rounds", required_argument, NULL, 11 }, { "uasid", required_argument, NULL, 12 },
		{ NULL, 0, NULL, 0 },
	};
	struct app a = { 0 };
	struct opts *o = &a.o;
	bool tp_given = false;
	int c, rc;

	o->port = DEFAULT_PORT;
	o->mode = URMA_TM_RM;
	o->tp_type = URMA_RTP;
	o->size = 0;
	o->rounds = 1;
	o->depth = 16;
	o->seconds = 2;
	o->seg_size = SEG_DEFAULT;
	o->token = 0xacfe;
	while ((c = getopt_long(argc, argv, "d:s:p:m:t:o:ei:h", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 's':
			o->server = optarg;
			if (o->nservers < MAX_SERVERS)
				o->servers[o->nservers++] = optarg;
			break;
		case 'p':
			o->port = (int)num("port", optarg);
			if (o->nports < MAX_SERVERS)
				o->ports[o->nports++] = o->port;
			break;
		case 'm':
			o->mode = !strcmp(optarg, "rc") ? URMA_TM_RC : !strcmp(optarg, "um") ? URMA_TM_UM :
				  URMA_TM_RM;
			break;
		case 't':
			tp_given = true;
			o->tp_type = !strcmp(optarg, "ctp") ? URMA_CTP : !strcmp(optarg, "utp") ? URMA_UTP :
				     URMA_RTP;
			break;
		case 'o':
			o->order = !strcmp(optarg, "ot") ? URMA_OT : !strcmp(optarg, "oi") ? URMA_OI :
				   !strcmp(optarg, "ol") ? URMA_OL : URMA_DEF_ORDER;
			break;
		case 'e': o->event = true; break;
		case 'i': o->eid_index = (int)num("eid", optarg); break;
		case 1: o->once = true; break;
		case 2: o->bench = optarg; break;
		case 3: o->size = (uint32_t)num("size", optarg); break;
		case 4: o->depth = (uint32_t)num("depth", optarg); break;
		case 5:
			o->seconds = atof(optarg);
			o->seconds_set = true;
			break;
		case 6: o->json = true; break;
		case 7: o->violate = optarg; break;
		case 8: o->seg_size = num("seg-size", optarg); break;
		case 9: o->token = (uint32_t)num("token", optarg); break;
		case 10: o->hold = atof(optarg); break;
		case 11: o->rounds = (uint32_t)num("rounds", optarg); break;
		case 12: o->uasid = (uint32_t)num("uasid", optarg); break;
		default: usage(); return 2;
		}
	}
	if (!o->size)
		o->size = o->bench ? 65536 : 4096;	/* Write and Read length, or the bench's */
	if (!o->dev || !o->depth || !o->rounds || o->seg_size < (1u << 20)) {
		usage();
		return 2;
	}
	if (o->bench)
		o->event = true;	/* both sides sleep when there is nothing to do */
	if (o->mode == URMA_TM_UM && !tp_given)
		o->tp_type = URMA_UTP;
	if (o->mode == URMA_TM_UM)
		o->order = URMA_NO;
	if (o->mode == URMA_TM_UM && o->bench && o->size > 1024) {
		fprintf(stderr, "UM: a message is one packet (--size 1024 at most)\n");
		return 2;
	}
	{
		/* Not restarted: a blocked accept() returns, and the server ends cleanly. */
		struct sigaction sa = { .sa_handler = on_signal };

		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	if (o->nservers > 1) {
		if (!o->nports)
			o->ports[o->nports++] = o->port;
		rc = run_clients(o);
		printf("%s\n", rc ? "FAILED" : "all passed");
		return rc;
	}
	if (setup(&a)) {
		teardown(&a);
		return 1;
	}
	rc = o->server ? run_client(&a) : run_server(&a);
	teardown(&a);
	if (!o->bench && o->server && !o->hold && !o->violate)
		printf("%s\n", rc ? "FAILED" : "all passed");
	return rc;
}
