// SPDX-License-Identifier: BSD-2-Clause
/*
 * liburma over worker threads (docs/URMA.md "Worker threads"): two contexts
 * on each side of a link, so on two workers each (UBXDP_URMA_WORKERS=2),
 * each context with an RM and a UM jetty. Every round, on every pair: a
 * Send echoed by the peer (which puts its channel's TPN before the bytes),
 * and, RM, a Write read back. Then the RM jetty of the second context is
 * deleted and made again, and its pair runs again. Last, Writes read back
 * through each context's RM jetty to the peer's segment of the other
 * context: a segment is every worker's (docs/URMA.md "Worker threads").
 *
 * Each channel must be its jetty's worker's: its TPN % workers is the
 * worker the program steers its frames to (headers/ub_endpoint_maps.h), so
 * the channels of context k's pair m, here and at the peer, have TPN % 2 ==
 * WORKER_OF(k, m): each context's jetties on both workers, all completing
 * on the context's one JFC. The run (tests/urma/run) checks each worker's
 * counters (UBXDP_URMA_STATS).
 *
 *   URMA_TEST_DEV, URMA_TEST_PEER_NS, URMA_TEST_PEER_DEV as api_test's;
 *   URMA_TEST_PEER_STATS   the peer's UBXDP_URMA_STATS file
 *   URMA_TEST_ROUNDS       rounds per pair (default 20)
 *
 * URMA_TEST_BENCH=SECONDS makes it a benchmark instead (bench/urma_workers.sh):
 * a thread per context keeps URMA_TEST_DEPTH (16) Writes of URMA_TEST_SIZE
 * (65536) bytes outstanding on its RM pair, polling its JFC (so it drives
 * its worker's endpoint), for that long after a first Write set its channel
 * up; the peer's progress threads serve.
 * It prints the pairs' combined goodput.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <net/if.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>

#include "urma_api.h"
#include "write_bench.h"

#define NCTX		2
#define BUF		4096
#define NBUF		32
#define SEG_LEN		(1u << 20)	/* Writes in the first half, receive buffers in the second */
#define TOKEN		0x5eed
#define PEER_ID(k, m)	(100u + 2u * (k) + (m))	/* m: 0 RM, 1 UM */
/* The worker of context k's pair m, the same on both sides: a JFR goes to
 * the worker with the fewest queues, a jetty sharing it to the JFR's
 * (docs/URMA.md "Worker threads"); side_open's order makes it k ^ m. */
#define WORKER_OF(k, m)	((uint32_t)((k) ^ (m)))

static const urma_transport_mode_t MODES[2] = { URMA_TM_RM, URMA_TM_UM };

struct side {
	urma_context_t *ctx;
	urma_jfc_t *jfc;
	urma_jfr_t *jfr[2];
	urma_jetty_t *jet[2];
	urma_target_seg_t *seg;
	uint8_t *buf;
};

struct info {
	urma_eid_t eid;
	uint32_t uasid;
	uint64_t va[NCTX];
	uint32_t token_id[NCTX];
};

static urma_sge_t sge(struct side *s, size_t off, uint32_t len)
{
	return (urma_sge_t){ .addr = (uint64_t)(uintptr_t)(s->buf + off), .len = len, .tseg = s->seg };
}

/* Receive buffer i of jetty m: in the second half of the segment. */
static size_t rbuf(int m, uint32_t i) { return SEG_LEN / 2 + ((size_t)m * NBUF + i) * BUF; }

static void post_recv(struct side *s, int m, uint32_t i)
{
	urma_sge_t g = sge(s, rbuf(m, i), BUF);
	urma_jfr_wr_t wr = { .src = { .sge = &g, .num_sge = 1 }, .user_ctx = i };
	urma_jfr_wr_t *bad;

	if (urma_post_jetty_recv_wr(s->jet[m], &wr, &bad))
		die("urma_post_jetty_recv_wr");
}

static urma_jetty_t *make_jetty(struct side *s, int m, uint32_t id)
{
	urma_jetty_cfg_t c = { .id = id };

	c.flag.bs.share_jfr = 1;
	c.jfs_cfg.depth = 64;
	c.jfs_cfg.trans_mode = MODES[m];
	c.jfs_cfg.jfc = s->jfc;
	c.jfs_cfg.rnr_retry = 7;
	c.shared.jfr = s->jfr[m];
	s->jet[m] = urma_create_jetty(s->ctx, &c);
	if (!s->jet[m])
		die("urma_create_jetty");
	for (uint32_t i = 0; i < NBUF; i++)
		post_recv(s, m, i);
	return s->jet[m];
}

static void side_open(struct side *s, urma_device_t *d, bool peer, int k)
{
	urma_jfc_cfg_t jc = { .depth = 1024 };

	if (!(s->ctx = urma_create_context(d, 0)) || !(s->jfc = urma_create_jfc(s->ctx, &jc)))
		die("context, JFC");
	s->seg = two_ends_seg(s->ctx, SEG_LEN, TOKEN, &s->buf);
	/* Context 1 makes its UM pair first: each context's RM and UM pairs on
	 * both workers, the other way round (WORKER_OF). */
	for (int i = 0; i < 2; i++) {
		int m = i ^ k;
		urma_jfr_cfg_t rc = { .depth = 256, .trans_mode = MODES[m], .jfc = s->jfc, .max_sge = 1 };

		if (!(s->jfr[m] = urma_create_jfr(s->ctx, &rc)))
			die("urma_create_jfr");
		make_jetty(s, m, peer ? PEER_ID(k, m) : 0);
	}
}

/* A side's jetties, JFRs, segment, JFC and context, its imports gone first. */
static void side_close(struct side *s)
{
	for (int m = 0; m < 2; m++) {
		urma_delete_jetty(s->jet[m]);
		urma_delete_jfr(s->jfr[m]);
	}
	urma_unregister_seg(s->seg);
	urma_delete_jfc(s->jfc);
	urma_delete_context(s->ctx);
}

static urma_target_jetty_t *import(struct side *s, int m, const urma_jetty_id_t *id)
{
	urma_rjetty_t rj = { .jetty_id = *id, .trans_mode = MODES[m], .type = URMA_JETTY,
			     .tp_type = m ? URMA_UTP : URMA_RTP };
	urma_token_t t = { 0 };

	return urma_import_jetty(s->ctx, &rj, &t);
}

static int send_bytes(struct side *s, int m, urma_target_jetty_t *tj, size_t off, uint32_t len)
{
	urma_sge_t g = sge(s, off, len);
	urma_jfs_wr_t wr = { .opcode = URMA_OPC_SEND, .tjetty = tj, .user_ctx = 7,
			     .send = { .src = { .sge = &g, .num_sge = 1 } } };
	urma_jfs_wr_t *bad;

	wr.flag.bs.complete_enable = 1;
	return urma_post_jetty_send_wr(s->jet[m], &wr, &bad);
}

/* ---- the peer: echoes every Send, its channel's TPN first -------------------------- */

static void peer_main(int fd)
{
	struct side S[NCTX];
	struct info info = { 0 };
	urma_target_jetty_t *back[NCTX][2] = { { 0 } };
	uint32_t reply_slot = 0;
	urma_device_t *d = two_ends_peer_device();

	memset(S, 0, sizeof(S));
	for (int k = 0; k < NCTX; k++) {
		side_open(&S[k], d, true, k);
		info.va[k] = S[k].seg->seg.ubva.va;
		info.token_id[k] = S[k].seg->seg.token_id;
	}
	info.eid = S[0].ctx->eid;
	info.uasid = S[0].ctx->uasid;
	if (write(fd, &info, sizeof(info)) != sizeof(info))
		die("peer: write");
	if (getenv("URMA_TEST_BENCH")) {
		char c;

		/* Writes need nothing of the application: the progress threads. */
		while (read(fd, &c, 1) > 0)
			;
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int got = 0;

		for (int k = 0; k < NCTX; k++) {
			struct side *s = &S[k];
			urma_cr_t cr;

			if (urma_poll_jfc(s->jfc, 1, &cr) != 1)
				continue;
			got = 1;
			if (!cr.flag.bs.s_r || cr.status != URMA_CR_SUCCESS)
				continue;
			int m = cr.local_id == PEER_ID(k, 1);
			size_t r = rbuf(m, (uint32_t)cr.user_ctx);
			/* Replies: the first half's last 64 KiB, a ring. */
			size_t out = SEG_LEN / 2 - 65536 + (size_t)(reply_slot++ % 8) * BUF;
			uint32_t tpn = cr.tpn;

			if (!back[k][m] || back[k][m]->id.id != cr.remote_id.id) {
				if (back[k][m])
					urma_unimport_jetty(back[k][m]);
				back[k][m] = import(s, m, &cr.remote_id);
			}
			memcpy(s->buf + out, &tpn, 4);
			memcpy(s->buf + out + 4, s->buf + r, cr.completion_len);
			if (back[k][m])
				send_bytes(s, m, back[k][m], out, cr.completion_len + 4);
			post_recv(s, m, (uint32_t)cr.user_ctx);
		}
		if (poll(&pfd, 1, got ? 0 : 1) > 0)
			break;	/* the parent closed its end: done */
	}
	for (int k = 0; k < NCTX; k++) {
		for (int m = 0; m < 2; m++)
			if (back[k][m])
				urma_unimport_jetty(back[k][m]);
		side_close(&S[k]);
	}
	exit(0);
}

/* ---- this side -------------------------------------------------------------------- */

static struct side C[NCTX];
static struct info peer;
static urma_target_jetty_t *tj[NCTX][2];
/* the peer's segment of context g, imported into context k */
static urma_target_seg_t *tseg_of[NCTX][NCTX];

/* The next record of the JFC within 3 s (n of them: the send and receive). */
static void wait_cr(struct side *s, urma_cr_t *send, urma_cr_t *recv)
{
	double until = now_s() + 3;
	int have_s = !send, have_r = !recv;

	while (!(have_s && have_r)) {
		urma_cr_t cr;

		if (now_s() > until)
			die(have_s ? "no receive completion within 3 s" : "no send completion within 3 s");
		if (urma_poll_jfc(s->jfc, 1, &cr) != 1)
			continue;
		if (cr.status != URMA_CR_SUCCESS) {
			fprintf(stderr, "completion status %d (%s)\n", (int)cr.status,
				cr.flag.bs.s_r ? "receive" : "send");
			die("a completion failed");
		}
		if (cr.flag.bs.s_r && !have_r) {
			*recv = cr;
			have_r = 1;
		} else if (!cr.flag.bs.s_r && !have_s) {
			*send = cr;
			have_s = 1;
		}
	}
}

/* Round r of a Write read back through context k's RM jetty, to the peer's
 * segment of context g (its tseg_of[k][g]): g != k, a segment another worker's
 * jetty serves. */
static void write_read(int k, int g, int r)
{
	struct side *s = &C[k];
	const size_t wr_off = 65536, rd_off = 131072;
	urma_sge_t src = sge(s, wr_off, BUF), dst = sge(s, rd_off, BUF);
	urma_sge_t rem = { .addr = peer.va[g] + (uint64_t)r * BUF, .len = BUF, .tseg = tseg_of[k][g] };
	urma_jfs_wr_t w = { .opcode = URMA_OPC_WRITE, .tjetty = tj[k][0], .user_ctx = 8,
			    .rw = { .src = { .sge = &src, .num_sge = 1 },
				    .dst = { .sge = &rem, .num_sge = 1 } } };
	urma_jfs_wr_t *bad;
	urma_cr_t scr;

	w.flag.bs.complete_enable = 1;
	fill(s->buf + wr_off, BUF, (uint32_t)(77 + k * 1000 + g * 100 + r));
	memset(s->buf + rd_off, 0, BUF);
	if (urma_post_jetty_send_wr(s->jet[0], &w, &bad))
		die("Write");
	wait_cr(s, &scr, NULL);
	w.opcode = URMA_OPC_READ;
	w.rw.src.sge = &rem;
	w.rw.dst.sge = &dst;
	if (urma_post_jetty_send_wr(s->jet[0], &w, &bad))
		die("Read");
	wait_cr(s, &scr, NULL);
	if (memcmp(s->buf + rd_off, s->buf + wr_off, BUF))
		die("the Read did not bring back what was written");
}

/* One round on pair (k, m): a Send echoed back; RM: a Write read back. Its
 * channels' TPNs % workers must be WORKER_OF(k, m) (workers 0: not checked). */
static void round_on(int k, int m, int r, uint32_t workers, uint32_t *tpn_here, uint32_t *tpn_peer)
{
	struct side *s = &C[k];
	const uint32_t len = m ? 512 : 3000;
	const size_t out = 0;
	urma_cr_t scr, rcr;
	uint32_t ptpn;
	uint8_t *echo;

	fill(s->buf + out, len, (uint32_t)(k * 1000 + m * 100 + r));
	if (send_bytes(s, m, tj[k][m], out, len))
		die("urma_post_jetty_send_wr");
	wait_cr(s, &scr, &rcr);
	echo = s->buf + rbuf(m, (uint32_t)rcr.user_ctx);
	memcpy(&ptpn, echo, 4);
	if (rcr.completion_len != len + 4 || memcmp(echo + 4, s->buf + out, len))
		die("the echo is not what was sent");
	post_recv(s, m, (uint32_t)rcr.user_ctx);
	*tpn_here = rcr.tpn;
	*tpn_peer = ptpn;
	if (workers && (rcr.tpn % workers != WORKER_OF(k, m) || ptpn % workers != WORKER_OF(k, m))) {
		fprintf(stderr, "context %d %s: channel TPN %u here, %u at the peer, worker %u expected\n",
			k, m ? "UM" : "RM", rcr.tpn, ptpn, WORKER_OF(k, m));
		die("a channel is not on its jetty's worker");
	}
	if (!m)
		write_read(k, k, r);
}

static void rounds(int k, int m, int n, uint32_t workers)
{
	uint32_t here = 0, there = 0;

	for (int r = 0; r < n; r++)
		round_on(k, m, r, workers, &here, &there);
	printf("context %d %s: %d rounds, channel TPN %u here, %u at the peer (%% %u = %u)\n", k,
	       m ? "UM" : "RM", n, here, there, workers, WORKER_OF(k, m));
}

/* ---- the benchmark: a thread per context, its RM pair (write_bench.h) ------------------ */

static void bench(double secs)
{
	struct write_lane l[NCTX];

	for (int k = 0; k < NCTX; k++)
		l[k] = (struct write_lane){ .jet = C[k].jet[0], .jfc = C[k].jfc, .tj = tj[k][0],
						.buf = C[k].buf, .seg = C[k].seg, .rva = peer.va[k],
						.tseg = tseg_of[k][k] };
	write_bench(l, NCTX, SEG_LEN / 2, secs, "2 contexts");
}

/*
 * In veth mode each worker sends by AF_PACKET sockets of its own, so the
 * workers share no socket on the way out: the process holds one bound to
 * the device per worker (its loopback ones live in its veth's namespace).
 */
static void tx_sockets_per_worker(const char *dev, uint32_t workers)
{
	unsigned long ino, mine[256];
	unsigned n = 0, found = 0, iface;
	char line[256], link[64], path[300];
	struct dirent *de;
	DIR *fds = opendir("/proc/self/fd");
	FILE *f;

	if (!fds)
		die("/proc/self/fd");
	while ((de = readdir(fds)) && n < 256) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len > 0) {
			link[len] = 0;
			if (sscanf(link, "socket:[%lu]", &ino) == 1)
				mine[n++] = ino;
		}
	}
	closedir(fds);
	if (!(f = fopen("/proc/self/net/packet", "r")))
		die("/proc/self/net/packet");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %*s %*s %u %*s %*s %*s %lu", &iface, &ino) == 2 &&
		    iface == if_nametoindex(dev))
			for (unsigned i = 0; i < n; i++)
				found += mine[i] == ino;
	fclose(f);
	printf("AF_PACKET sockets on %s: %u for %u workers\n", dev, found, workers);
	if (found != workers)
		die("a worker without an AF_PACKET socket of its own");
}

int main(void)
{
	const char *rs = getenv("URMA_TEST_ROUNDS");
	int fd, n = rs ? atoi(rs) : 20, status;
	const uint32_t workers = NCTX;
	pid_t pid = two_ends_fork(peer_main, &fd, &peer, sizeof(peer));
	urma_device_t *d;

	d = two_ends_device();
	for (int k = 0; k < NCTX; k++) {
		urma_import_seg_flag_t f = { 0 };
		urma_token_t t = { TOKEN };

		side_open(&C[k], d, false, k);
		for (int m = 0; m < 2; m++) {
			urma_jetty_id_t id = { .eid = peer.eid, .uasid = peer.uasid, .id = PEER_ID(k, m) };

			if (!(tj[k][m] = import(&C[k], m, &id)))
				die("urma_import_jetty");
		}
		f.bs.access = URMA_ACCESS_READ | URMA_ACCESS_WRITE;
		for (int g = 0; g < NCTX; g++) {
			urma_seg_t sg = { .ubva = { .eid = peer.eid, .uasid = peer.uasid, .va = peer.va[g] },
					  .len = SEG_LEN, .token_id = peer.token_id[g] };

			if (!(tseg_of[k][g] = urma_import_seg(C[k].ctx, &sg, &t, 0, f)))
				die("urma_import_seg");
		}
	}
	if (getenv("UBXDP_URMA_VETH") && !strcmp(getenv("UBXDP_URMA_VETH"), "1"))
		tx_sockets_per_worker(getenv("URMA_TEST_DEV"), workers);
	if (getenv("URMA_TEST_BENCH")) {
		bench(atof(getenv("URMA_TEST_BENCH")));
	} else {
		for (int k = 0; k < NCTX; k++)
			for (int m = 0; m < 2; m++)
				rounds(k, m, n, workers);
		/* A jetty deleted and made again: its new channel, on the same worker. */
		if (urma_delete_jetty(C[1].jet[0]))
			die("urma_delete_jetty");
		make_jetty(&C[1], 0, 0);
		rounds(1, 0, n, workers);
		rounds(0, 0, n, workers);
		/* A segment of one context of the peer, reached through a jetty of
		 * its other one (on the other worker): served as with one worker. */
		for (int r = 0; r < n; r++) {
			write_read(1, 0, r);
			write_read(0, 1, r);
		}
		printf("Write and Read to the peer's segment of one context through the other's jetty: "
		       "%d rounds each way\n", n);

		/* Every request and echo was waited for: each took one record of
		 * its context's JFC, whichever worker fed it; nothing is left. */
		for (int k = 0; k < NCTX; k++) {
			double until = now_s() + 0.1;
			urma_cr_t cr;

			while (now_s() < until)
				if (urma_poll_jfc(C[k].jfc, 1, &cr) != 0)
					die("a completion record came twice, or unasked");
		}
		printf("each completion exactly once\n");
	}
	for (int k = 0; k < NCTX; k++) {
		for (int g = 0; g < NCTX; g++)
			urma_unimport_seg(tseg_of[k][g]);
		for (int m = 0; m < 2; m++)
			urma_unimport_jetty(tj[k][m]);
		side_close(&C[k]);
	}
	close(fd);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die("the peer failed");
	if (!getenv("URMA_TEST_BENCH"))
		printf("all passed\n");
	return 0;
}
