// SPDX-License-Identifier: BSD-2-Clause
/*
 * Messages larger than 64 KiB on one RC jetty pair (docs/URMA.md, "Several
 * processes on one device": each channel's UB MTU is what its two ends
 * agree). This side Sends MSG bytes into the peer's JFR, Writes MSG bytes
 * into the peer's segment and Reads MSG other bytes back from it, ROUNDS
 * times; the peer checks each Send's and Write's bytes and says so, this
 * side the Read's. MSG is no multiple of 4096: every message ends in a
 * short packet. Which UB MTU the channel took shows on the wire
 * (tests/urma/run counts the packets' lengths on a router), not here.
 *
 * URMA_TEST_CROSS=RUNS: instead, RUNS crossed setups in this process pair:
 * each run both sides make a new jetty and urma_bind_jetty to the other's
 * at the same moment (their OPENs cross), then each Writes MSG bytes into
 * the other's segment, then Sends MSG bytes into the other's jetty, and
 * checks what it got of both. Between a holder (4096) and
 * a veth process (2048) both ends must take 2048: a channel left at 4096
 * toward the veth stalls (URMA_CR_ACK_TIMEOUT_ERR).
 *
 *   URMA_TEST_DEV, URMA_TEST_PEER_NS, URMA_TEST_PEER_DEV as api_test's;
 *   URMA_TEST_PEER_STATS as two_ends.h says; URMA_TEST_PEER_VETH=1: the
 *   peer reaches its device through a veth of its own (UBXDP_URMA_VETH).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "urma_api.h"
#include "two_ends.h"

#define MSG		(160u * 1024 + 100)	/* 40 packets of 4096 and a short one */
#define SEG_LEN		(4u * 1024 * 1024)
#define ROUNDS		4
#define PEER_ID		400
#define TOKEN		0x5a5a
#define SEND_SEED(r)	(1000u + (r))
#define WRITE_SEED(r)	(2000u + (r))
#define READ_SEED	3000u
#define CROSS_ID	100	/* this side's jetty in run r: CROSS_ID + r; the peer's PEER_ID + 1 + r */
#define CROSS_SEED(peer, r)	((peer) ? 6000u + (r) : 5000u + (r))
/* The peer's segment: Send buffer, Write target, Read source. */
#define OFF_RECV	0
#define OFF_WRITE	(1024u * 1024)
#define OFF_READ	(2u * 1024 * 1024)

struct side {
	urma_context_t *ctx;
	urma_jfc_t *jfc;
	urma_jetty_t *jet;
	urma_target_seg_t *seg;
	uint8_t *buf;
};

static void side_jetty(struct side *s, uint32_t id)
{
	urma_jfr_cfg_t rc = { .depth = 8, .trans_mode = URMA_TM_RC, .max_sge = 1, .jfc = s->jfc };
	urma_jetty_cfg_t c = { .id = id, .jfr_cfg = &rc };

	c.jfs_cfg.depth = 16;
	c.jfs_cfg.trans_mode = URMA_TM_RC;
	c.jfs_cfg.jfc = s->jfc;
	c.jfs_cfg.rnr_retry = 7;
	if (!(s->jet = urma_create_jetty(s->ctx, &c)))
		die("urma_create_jetty");
}

/* Its context, JFC and segment, and (but in crossed runs) its jetty id. */
static void side_open(struct side *s, urma_device_t *d, uint32_t id)
{
	urma_jfc_cfg_t jc = { .depth = 64 };

	*s = (struct side){ 0 };
	if (!(s->ctx = urma_create_context(d, 0)) || !(s->jfc = urma_create_jfc(s->ctx, &jc)))
		die("context, JFC");
	s->seg = two_ends_seg(s->ctx, SEG_LEN, TOKEN, &s->buf);
	if (!getenv("URMA_TEST_CROSS"))
		side_jetty(s, id);
}

static void side_close(struct side *s)
{
	if (s->jet)
		urma_delete_jetty(s->jet);
	urma_unregister_seg(s->seg);
	urma_delete_jfc(s->jfc);
	urma_delete_context(s->ctx);
}

static int cross_run = -1;	/* the crossed run under way, for the failure's line */

/* The next completion within 20 s. */
static urma_cr_t next_cr(struct side *s)
{
	double until = now_s() + 20;
	urma_cr_t cr;

	while (urma_poll_jfc(s->jfc, 1, &cr) != 1)
		if (now_s() > until)
			die("no completion within 20 s");
	if (cr.status != URMA_CR_SUCCESS) {
		fprintf(stderr, "completion status %d (crossed run %d)\n", (int)cr.status, cross_run);
		die("a request failed");
	}
	return cr;
}

static bool same(const uint8_t *b, uint32_t seed)
{
	static uint8_t want[MSG];

	fill(want, MSG, seed);
	return !memcmp(b, want, MSG);
}

/* What the other side needs of s: its EID, UASID and segment. */
static struct two_ends_info side_info(const struct side *s)
{
	return (struct two_ends_info){ .eid = s->ctx->eid, .uasid = s->ctx->uasid,
				       .va = (uint64_t)(uintptr_t)s->buf, .token_id = s->seg->seg.token_id };
}

static urma_target_jetty_t *import_jetty(struct side *s, const struct two_ends_info *o, uint32_t id)
{
	urma_rjetty_t rj = { .jetty_id = { .eid = o->eid, .uasid = o->uasid, .id = id },
			     .trans_mode = URMA_TM_RC, .type = URMA_JETTY, .tp_type = URMA_RTP };
	urma_token_t none = { 0 };
	urma_target_jetty_t *tj = urma_import_jetty(s->ctx, &rj, &none);

	if (!tj)
		die("urma_import_jetty");
	return tj;
}

static urma_target_seg_t *import_seg(struct side *s, const struct two_ends_info *o)
{
	urma_seg_t sg = { .ubva = { .eid = o->eid, .uasid = o->uasid, .va = o->va },
			  .len = SEG_LEN, .token_id = o->token_id };
	urma_token_t t = { TOKEN };
	urma_import_seg_flag_t f = { 0 };
	urma_target_seg_t *tseg;

	f.bs.access = URMA_ACCESS_READ | URMA_ACCESS_WRITE;
	if (!(tseg = urma_import_seg(s->ctx, &sg, &t, 0, f)))
		die("urma_import_seg");
	return tseg;
}

/* One request, until its completion. */
static void post(struct side *s, urma_target_jetty_t *tj, urma_opcode_t op, urma_sge_t *src, urma_sge_t *dst)
{
	if (two_ends_post(s->jet, op, tj, src, dst, 0))
		die("urma_post_jetty_send_wr");
	if (next_cr(s).user_ctx != 0)
		die("a completion for another request");
}

static void post_recv(struct side *s)
{
	urma_sge_t g = { .addr = (uint64_t)(uintptr_t)(s->buf + OFF_RECV), .len = MSG, .tseg = s->seg };
	urma_jfr_wr_t wr = { .src = { .sge = &g, .num_sge = 1 } };
	urma_jfr_wr_t *bad;

	if (urma_post_jetty_recv_wr(s->jet, &wr, &bad))
		die("urma_post_jetty_recv_wr");
}

/* ---- crossed setups: both sides alike ------------------------------------------------ */

/* Both sides at the same step: a byte each way. */
static void step(int fd)
{
	char c = '.';

	if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1)
		die("the other side went away");
}

/* A Send of MSG bytes each way on the crossed channel (from the Read
 * source's room, unused here: the receive lands at OFF_RECV): its completion
 * and the other side's Send's, intact, in either order. */
static void cross_send(struct side *s, int fd, urma_target_jetty_t *tj, bool peer, uint32_t r)
{
	urma_sge_t src = { .addr = (uint64_t)(uintptr_t)(s->buf + OFF_READ), .len = MSG, .tseg = s->seg };
	bool sent = false, got = false;

	fill(s->buf + OFF_READ, MSG, CROSS_SEED(peer, r) + 100);
	if (two_ends_post(s->jet, URMA_OPC_SEND, tj, &src, NULL, 0))
		die("urma_post_jetty_send_wr");
	while (!sent || !got) {
		urma_cr_t cr = next_cr(s);

		if (!cr.flag.bs.s_r) {
			sent = true;
			continue;
		}
		if (cr.completion_len != MSG || !same(s->buf + OFF_RECV, CROSS_SEED(!peer, r) + 100)) {
			fprintf(stderr, "crossed run %u\n", r);
			die("a Send arrived altered");
		}
		got = true;
	}
	memset(s->buf + OFF_RECV, 0, MSG);
	step(fd);	/* both Sends done */
}

/* runs crossed binds with the other side o (peer: this is the peer). */
static void cross(struct side *s, int fd, const struct two_ends_info *o, bool peer, uint32_t runs)
{
	urma_target_seg_t *tseg = import_seg(s, o);
	const uint32_t mine = peer ? PEER_ID + 1 : CROSS_ID, theirs = peer ? CROSS_ID : PEER_ID + 1;

	for (uint32_t r = 0; r < runs; r++) {
		urma_sge_t src = { .addr = (uint64_t)(uintptr_t)s->buf, .len = MSG, .tseg = s->seg };
		urma_sge_t dst = { .addr = o->va + OFF_WRITE, .len = MSG, .tseg = tseg };
		urma_target_jetty_t *tj;

		cross_run = (int)r;
		side_jetty(s, mine + r);
		post_recv(s);
		step(fd);	/* both jetties made, a receive posted */
		tj = import_jetty(s, o, theirs + r);
		step(fd);	/* both imported: bind at the same moment */
		if (urma_bind_jetty(s->jet, tj)) {
			fprintf(stderr, "crossed run %u\n", r);
			die("urma_bind_jetty");
		}
		fill(s->buf, MSG, CROSS_SEED(peer, r));
		post(s, tj, URMA_OPC_WRITE, &src, &dst);
		step(fd);	/* both Writes done */
		if (!same(s->buf + OFF_WRITE, CROSS_SEED(!peer, r))) {
			fprintf(stderr, "crossed run %u\n", r);
			die("a Write arrived altered");
		}
		memset(s->buf + OFF_WRITE, 0, MSG);
		cross_send(s, fd, tj, peer, r);
		urma_unbind_jetty(s->jet);
		urma_unimport_jetty(tj);
		urma_delete_jetty(s->jet);
		s->jet = NULL;
	}
	urma_unimport_seg(tseg);
}

/* ---- the peer: a receive posted per round, each Send's and Write's bytes checked --- */

static void peer_main(int fd)
{
	urma_device_t *d;
	struct two_ends_info info;
	struct side s;
	char c;

	if (getenv("URMA_TEST_PEER_VETH"))
		setenv("UBXDP_URMA_VETH", "1", 1);
	d = two_ends_peer_device();
	side_open(&s, d, PEER_ID);
	info = side_info(&s);
	if (getenv("URMA_TEST_CROSS")) {
		if (write(fd, &info, sizeof(info)) != sizeof(info) || read(fd, &info, sizeof(info)) != sizeof(info))
			die("peer: the info swap");
		cross(&s, fd, &info, true, (uint32_t)atoi(getenv("URMA_TEST_CROSS")));
		side_close(&s);
		exit(0);
	}
	fill(s.buf + OFF_READ, MSG, READ_SEED);
	post_recv(&s);
	if (write(fd, &info, sizeof(info)) != sizeof(info))
		die("peer: write");
	for (uint32_t r = 0; r < ROUNDS; r++) {
		urma_cr_t cr = next_cr(&s);
		char v[2];

		v[0] = cr.flag.bs.s_r && cr.completion_len == MSG && same(s.buf + OFF_RECV, SEND_SEED(r)) ? 'S' : 's';
		memset(s.buf + OFF_RECV, 0, MSG);
		post_recv(&s);
		/* This side's Write is done when it says so. */
		if (read(fd, &c, 1) != 1)
			die("peer: read");
		v[1] = same(s.buf + OFF_WRITE, WRITE_SEED(r)) ? 'W' : 'w';
		if (write(fd, v, 2) != 2)
			die("peer: write");
	}
	if (read(fd, &c, 1) != 0)
		die("peer: more than expected");
	side_close(&s);
	exit(0);
}

/* ---- this side ------------------------------------------------------------------- */

int main(void)
{
	struct two_ends_info peer, me;
	struct side C;
	urma_target_jetty_t *tj;
	urma_target_seg_t *tseg;
	const char *cross_runs = getenv("URMA_TEST_CROSS");
	int fd, status;
	pid_t pid;

	pid = two_ends_fork(peer_main, &fd, &peer, sizeof(peer));
	side_open(&C, two_ends_device(), 0);
	if (cross_runs) {
		me = side_info(&C);
		if (write(fd, &me, sizeof(me)) != sizeof(me))
			die("the peer went away");
		cross(&C, fd, &peer, false, (uint32_t)atoi(cross_runs));
		side_close(&C);
		close(fd);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			die("the peer failed");
		printf("all passed: %d crossed binds, a Write and a Send of %u bytes each way intact in each\n",
		       atoi(cross_runs), MSG);
		return 0;
	}
	tj = import_jetty(&C, &peer, PEER_ID);
	if (urma_bind_jetty(C.jet, tj)) {
		perror("urma_bind_jetty");
		die("urma_bind_jetty");
	}
	tseg = import_seg(&C, &peer);
	for (uint32_t r = 0; r < ROUNDS; r++) {
		urma_sge_t src = { .addr = (uint64_t)(uintptr_t)C.buf, .len = MSG, .tseg = C.seg };
		urma_sge_t dst = { .addr = peer.va + OFF_WRITE, .len = MSG, .tseg = tseg };
		urma_sge_t rsrc = { .addr = peer.va + OFF_READ, .len = MSG, .tseg = tseg };
		urma_sge_t rdst = { .addr = (uint64_t)(uintptr_t)(C.buf + MSG), .len = MSG, .tseg = C.seg };
		char v[2];

		fill(C.buf, MSG, SEND_SEED(r));
		post(&C, tj, URMA_OPC_SEND, &src, NULL);
		fill(C.buf, MSG, WRITE_SEED(r));
		post(&C, tj, URMA_OPC_WRITE, &src, &dst);
		memset(C.buf + MSG, 0, MSG);
		post(&C, tj, URMA_OPC_READ, &rsrc, &rdst);
		if (write(fd, "w", 1) != 1 || read(fd, v, 2) != 2)
			die("the peer went away");
		printf("round %u: Send of %u bytes %s, Write %s, Read %s\n", r, MSG,
		       v[0] == 'S' ? "intact" : "DIFFERS", v[1] == 'W' ? "intact" : "DIFFERS",
		       same(C.buf + MSG, READ_SEED) ? "intact" : "DIFFERS");
		if (v[0] != 'S' || v[1] != 'W' || !same(C.buf + MSG, READ_SEED))
			die("a message arrived altered");
	}
	urma_unimport_seg(tseg);
	urma_unbind_jetty(C.jet);
	urma_unimport_jetty(tj);
	side_close(&C);
	close(fd);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die("the peer failed");
	printf("all passed: %u rounds of Send, Write and Read of %u bytes\n", ROUNDS, MSG);
	return 0;
}
