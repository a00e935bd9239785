// SPDX-License-Identifier: BSD-2-Clause
/*
 * RNR through a real JFR (docs/URMA.md, the receive side: user/urma/recv.c).
 * The peer's JFR starts empty and gets one buffer every POST_US; its RNR
 * answers ask for a wait of 2^10 us. This side keeps BURST Sends of one RM
 * jetty with rnr_retry 1 (one retry, then the Send fails with "receiver not
 * ready"), so most are refused, retried and given up. Then the peer fills
 * its JFR, says so, and TAIL more Sends follow.
 *
 * What must hold, from the two ends' own records (not the library's counters):
 *   - every Send completed OK reached the peer's JFR exactly once, and no
 *     failed one did (the peer reports each buffer's sequence number);
 *   - the peer received them in the order they were posted;
 *   - some Sends were given up (rnr_retry honoured; else nothing here was
 *     tested), and every TAIL Send completes OK: the channel serves again
 *     after its give-ups.
 * (That the target's hold lifts without a refusal of its own is
 * test_urma_rnr_hold's, which counts the RNR answers: here a Send refused
 * once more by a hold that did not lift is retried and passes, which the
 * API does not show.)
 *
 *   URMA_TEST_DEV, URMA_TEST_PEER_NS, URMA_TEST_PEER_DEV as api_test's.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "urma_api.h"
#include "two_ends.h"

#define BURST		24
#define TAIL		8
#define MSG		4096	/* four packets at UB MTU 1024 */
#define NBUF		64
#define SEG_LEN		(2u * NBUF * MSG)
#define PEER_ID		300
#define POST_US		20000	/* against RNR waits of 1 ms: the client stalled for 20 ms under load still gives up */
#define RNR_CODE	10	/* the peer's RNR answers: wait 2^10 us */

struct side {
	urma_context_t *ctx;
	urma_jfc_t *jfc;
	urma_jfr_t *jfr;
	urma_jetty_t *jet;
	urma_target_seg_t *seg;
	uint8_t *buf;
};

struct info {
	urma_eid_t eid;
	uint32_t uasid;
};

static void side_open(struct side *s, urma_device_t *d, uint32_t id, uint8_t rnr_retry)
{
	urma_jfc_cfg_t jc = { .depth = 1024 };
	urma_jfr_cfg_t rc = { .depth = NBUF, .trans_mode = URMA_TM_RM, .max_sge = 1,
			      .min_rnr_timer = RNR_CODE };
	urma_jetty_cfg_t c = { .id = id };

	if (!(s->ctx = urma_create_context(d, 0)) || !(s->jfc = urma_create_jfc(s->ctx, &jc)))
		die("context, JFC");
	s->seg = two_ends_seg(s->ctx, SEG_LEN, 0, &s->buf);
	rc.jfc = s->jfc;
	if (!(s->jfr = urma_create_jfr(s->ctx, &rc)))
		die("urma_create_jfr");
	c.flag.bs.share_jfr = 1;
	c.jfs_cfg.depth = 64;
	c.jfs_cfg.trans_mode = URMA_TM_RM;
	c.jfs_cfg.jfc = s->jfc;
	c.jfs_cfg.rnr_retry = rnr_retry;
	c.shared.jfr = s->jfr;
	if (!(s->jet = urma_create_jetty(s->ctx, &c)))
		die("urma_create_jetty");
}

static void post_recv(struct side *s, uint32_t i)
{
	urma_sge_t g = { .addr = (uint64_t)(uintptr_t)(s->buf + (size_t)i * MSG), .len = MSG, .tseg = s->seg };
	urma_jfr_wr_t wr = { .src = { .sge = &g, .num_sge = 1 }, .user_ctx = i };
	urma_jfr_wr_t *bad;

	if (urma_post_jetty_recv_wr(s->jet, &wr, &bad))
		die("urma_post_jetty_recv_wr");
}

/* ---- the peer: an empty JFR fed slowly, every receive told by its number ---------- */

static void peer_main(int fd)
{
	urma_device_t *d = two_ends_peer_device();
	struct info info = { 0 };
	uint32_t posted = 0, next = 0;
	double post_at = 0;
	bool slow = true;
	struct side s;

	side_open(&s, d, PEER_ID, 7);
	info.eid = s.ctx->eid;
	info.uasid = s.ctx->uasid;
	if (write(fd, &info, sizeof(info)) != sizeof(info))
		die("peer: write");
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		urma_cr_t cr;
		int got = urma_poll_jfc(s.jfc, 1, &cr) == 1;
		char c;

		if (got && cr.flag.bs.s_r) {
			uint32_t seq;
			char line[64];
			int n;

			memcpy(&seq, s.buf + cr.user_ctx * MSG, 4);
			n = snprintf(line, sizeof(line), "R %d %u\n", (int)cr.status, seq);
			if (write(fd, line, (size_t)n) != n)
				die("peer: write");
			posted--;
		}
		/* One buffer at a time while slow; all of them after "fill", below. */
		if (slow && !posted && now_s() >= post_at) {
			post_recv(&s, next++ % NBUF);
			posted++;
			post_at = now_s() + POST_US / 1e6;
		}
		if (poll(&pfd, 1, got ? 0 : 1) > 0) {
			if (read(fd, &c, 1) != 1)
				break;	/* the parent closed its end: done */
			slow = false;
			while (posted < NBUF) {
				post_recv(&s, next++ % NBUF);
				posted++;
			}
			if (write(fd, "F\n", 2) != 2)
				die("peer: write");
		}
	}
	exit(0);
}

/* ---- this side ------------------------------------------------------------------- */

static struct side C;
static urma_target_jetty_t *tj;
static int peer_fd;
/* per Send: its completion (0 none yet, 1 OK, 2 failed) and times the peer took it */
static int done[BURST + TAIL], taken[BURST + TAIL];
static int last_taken = -1, out_of_order;
static bool filled;

static void send_seq(uint32_t seq)
{
	urma_sge_t g = { .addr = (uint64_t)(uintptr_t)(C.buf + (size_t)(NBUF + seq % NBUF) * MSG), .len = MSG,
			 .tseg = C.seg };
	urma_jfs_wr_t wr = { .opcode = URMA_OPC_SEND, .tjetty = tj, .user_ctx = seq,
			     .send = { .src = { .sge = &g, .num_sge = 1 } } };
	urma_jfs_wr_t *bad;

	memcpy(C.buf + (size_t)(NBUF + seq % NBUF) * MSG, &seq, 4);
	wr.flag.bs.complete_enable = 1;
	if (urma_post_jetty_send_wr(C.jet, &wr, &bad))
		die("urma_post_jetty_send_wr");
}

/* The peer's lines so far. */
static void peer_lines(void)
{
	static char acc[4096];
	static size_t n;
	struct pollfd pfd = { .fd = peer_fd, .events = POLLIN };
	char *nl;

	while (poll(&pfd, 1, 0) > 0) {
		ssize_t r = read(peer_fd, acc + n, sizeof(acc) - 1 - n);

		if (r <= 0)
			die("the peer went away");
		n += (size_t)r;
		acc[n] = 0;
		while ((nl = strchr(acc, '\n'))) {
			int st;
			unsigned seq;

			if (acc[0] == 'F') {
				filled = true;
			} else if (sscanf(acc, "R %d %u", &st, &seq) != 2 || seq >= BURST + TAIL ||
				   st != URMA_CR_SUCCESS) {
				die("the peer's JFR took something it should not");
			} else {
				taken[seq]++;
				out_of_order += (int)seq <= last_taken;
				last_taken = (int)seq;
			}
			n -= (size_t)(nl + 1 - acc);
			memmove(acc, nl + 1, n + 1);
		}
	}
}

/* Until Sends [from, to) have completed, or 20 s. */
static void complete(uint32_t from, uint32_t to)
{
	double until = now_s() + 20;

	for (;;) {
		urma_cr_t cr;
		uint32_t left = 0;

		for (uint32_t i = from; i < to; i++)
			left += !done[i];
		if (!left)
			return;
		if (now_s() > until)
			die("Sends without a completion after 20 s");
		peer_lines();
		if (urma_poll_jfc(C.jfc, 1, &cr) != 1 || cr.flag.bs.s_r)
			continue;
		if (cr.user_ctx >= BURST + TAIL || done[cr.user_ctx])
			die("a completion for no Send, or a second one");
		if (cr.status != URMA_CR_SUCCESS && cr.status != URMA_CR_RNR_RETRY_CNT_EXC_ERR) {
			fprintf(stderr, "Send %lu: status %d\n", (unsigned long)cr.user_ctx, (int)cr.status);
			die("a Send failed other than by RNR");
		}
		done[cr.user_ctx] = cr.status == URMA_CR_SUCCESS ? 1 : 2;
	}
}

int main(void)
{
	struct info peer;
	int status, given_up = 0;
	pid_t pid;

	pid = two_ends_fork(peer_main, &peer_fd, &peer, sizeof(peer));
	side_open(&C, two_ends_device(), 0, 1);
	{
		urma_rjetty_t rj = { .jetty_id = { .eid = peer.eid, .uasid = peer.uasid, .id = PEER_ID },
				     .trans_mode = URMA_TM_RM, .type = URMA_JETTY, .tp_type = URMA_RTP };
		urma_token_t t = { 0 };

		if (!(tj = urma_import_jetty(C.ctx, &rj, &t)))
			die("urma_import_jetty");
	}
	for (uint32_t i = 0; i < BURST; i++)
		send_seq(i);
	complete(0, BURST);
	if (write(peer_fd, "f", 1) != 1)
		die("write");
	for (double until = now_s() + 5; !filled; peer_lines())
		if (now_s() > until)
			die("the peer did not fill its JFR");
	for (uint32_t i = BURST; i < BURST + TAIL; i++)
		send_seq(i);
	complete(BURST, BURST + TAIL);
	/* The peer's reports of the last receives may trail their answers. */
	for (double until = now_s() + 1; now_s() < until;)
		peer_lines();
	printf("Sends:");
	for (int i = 0; i < BURST + TAIL; i++) {
		printf(" %d%s", i, done[i] == 1 ? "" : "x");
		given_up += done[i] == 2;
		if ((done[i] == 1) != (taken[i] == 1) || taken[i] > 1) {
			fprintf(stderr, "Send %d: %s, taken %d times by the peer's JFR\n", i,
				done[i] == 1 ? "OK" : "given up", taken[i]);
			die("a Send's completion and its receive disagree");
		}
	}
	printf(" (x: given up)\n");
	if (out_of_order)
		die("the peer received Sends out of order");
	if (!given_up)
		die("no Send was given up: the peer's JFR was never short enough");
	for (int i = BURST; i < BURST + TAIL; i++)
		if (done[i] != 1)
			die("a Send after the JFR was filled failed: the RNR hold never lifted");
	urma_unimport_jetty(tj);
	urma_delete_jetty(C.jet);
	urma_delete_jfr(C.jfr);
	urma_unregister_seg(C.seg);
	urma_delete_jfc(C.jfc);
	urma_delete_context(C.ctx);
	close(peer_fd);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die("the peer failed");
	printf("all passed: %d of %d given up in the burst\n", given_up, BURST);
	return 0;
}
