// SPDX-License-Identifier: BSD-2-Clause
/*
 * One context a side, its jetties spread over the workers (docs/URMA.md
 * "Worker threads"; UBXDP_URMA_WORKERS=2 on a veth pair of two queues).
 * Each side makes, in this order, a JFR R (RM), jetties J2 and J3 sharing
 * it (RM), J0 (RM) and J1 (UM) with JFRs of their own, all completing on
 * one JFC with a JFCE. By the placement rule R goes to worker 0 (the
 * fewest queues), J2 and J3 to R's, J0 and J1 to worker 1 (the fewest
 * then): WORKER[]. Every round, at once on the four pairs: a Send echoed by
 * the peer (its channel's TPN before the bytes); then, RM, a Write to the
 * peer's segment and a Read of it back. Checked: each channel's TPN % 2 at
 * both ends is its jetty's worker (so both workers carry channels, and the
 * pair sharing R one worker), the data, and that every request and echo
 * gives exactly one record of the one JFC, taken by urma_poll_jfc on even
 * rounds and after urma_wait_jfc on odd ones (a record due and no wake-up
 * within 2 s fails), where worker 1's jetties also run alone. Then a JFC
 * filled from both workers (jfc_from_two_workers), and one fed by both and
 * polled by three threads at once (jfc_polled_by_three).
 *
 *   URMA_TEST_DEV, URMA_TEST_PEER_NS, URMA_TEST_PEER_DEV as api_test's;
 *   URMA_TEST_ROUNDS       rounds (default 20)
 *
 * URMA_TEST_BENCH=SECONDS makes it a benchmark instead (bench/urma_workers.sh
 * --one-context): the one context a side has two RM jetties with JFRs and
 * JFCs of their own (so on the two workers), a thread each keeping
 * URMA_TEST_DEPTH (16) Writes of URMA_TEST_SIZE (65536) bytes outstanding,
 * polling its JFC; the peer's progress threads serve. It prints the
 * jetties' combined goodput.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <string.h>
#include <sys/wait.h>

#include "urma_api.h"
#include "write_bench.h"

#define NJ		4
#define NB		2		/* the benchmark's jetties */
#define BUF		4096
#define NBUF		16		/* receive buffers per jetty */
#define SEG_LEN		(1u << 20)	/* sources in the first half; receive buffers, Read-backs in the second */
#define TOKEN		0x5eed
#define PID(j)		(200u + (j))	/* the peer's jetty IDs; the benchmark's: PID(NJ + b) */

static const uint32_t WORKER[NJ] = { 1, 1, 0, 0 };
static const int ORDER[NJ] = { 2, 3, 0, 1 };

static bool is_um(int j) { return j == 1; }

struct side {
	urma_context_t *ctx;
	urma_jfce_t *jfce;
	urma_jfc_t *jfc, *bjfc[NB];
	urma_jfr_t *shared;
	urma_jetty_t *jet[NJ + NB];
	urma_target_seg_t *seg;
	uint8_t *buf;
};

static urma_sge_t sge(struct side *s, size_t off, uint32_t len)
{
	return (urma_sge_t){ .addr = (uint64_t)(uintptr_t)(s->buf + off), .len = len, .tseg = s->seg };
}

/* Receive buffer b (jetty b / NBUF's): in the second half of the segment. */
static size_t rbuf(uint32_t b) { return SEG_LEN / 2 + (size_t)b * BUF; }

static void post_recv(struct side *s, uint32_t b)
{
	urma_sge_t g = sge(s, rbuf(b), BUF);
	urma_jfr_wr_t wr = { .src = { .sge = &g, .num_sge = 1 }, .user_ctx = b };
	urma_jfr_wr_t *bad;

	if (urma_post_jetty_recv_wr(s->jet[b / NBUF], &wr, &bad))
		die("urma_post_jetty_recv_wr");
}

static urma_jetty_t *make_jetty(struct side *s, urma_jfc_t *jfc, bool um, bool shared, uint32_t id)
{
	urma_jfr_cfg_t rc = { .depth = 64, .trans_mode = um ? URMA_TM_UM : URMA_TM_RM, .jfc = jfc,
			      .max_sge = 1 };
	urma_jetty_cfg_t c = { .id = id, .jfr_cfg = &rc };
	urma_jetty_t *j;

	c.jfs_cfg.depth = 64;
	c.jfs_cfg.trans_mode = rc.trans_mode;
	c.jfs_cfg.jfc = jfc;
	c.jfs_cfg.rnr_retry = 7;
	if (shared) {
		c.flag.bs.share_jfr = 1;
		c.shared.jfr = s->shared;
	}
	if (!(j = urma_create_jetty(s->ctx, &c)))
		die("urma_create_jetty");
	return j;
}

static void side_open(struct side *s, urma_device_t *d, bool peer, bool bench)
{
	urma_jfc_cfg_t jc = { .depth = 1024 };
	urma_jfr_cfg_t rc = { .depth = 256, .trans_mode = URMA_TM_RM, .max_sge = 1 };

	if (!(s->ctx = urma_create_context(d, 0)) || !(s->jfce = urma_create_jfce(s->ctx)))
		die("context, JFCE");
	jc.jfce = s->jfce;
	if (!(s->jfc = urma_create_jfc(s->ctx, &jc)))
		die("urma_create_jfc");
	s->seg = two_ends_seg(s->ctx, SEG_LEN, TOKEN, &s->buf);
	if (bench) {
		urma_jfc_cfg_t bc = { .depth = 1024 };

		for (int b = 0; b < NB; b++)
			if (!(s->bjfc[b] = urma_create_jfc(s->ctx, &bc)) ||
			    !(s->jet[NJ + b] = make_jetty(s, s->bjfc[b], false, false,
							  peer ? PID(NJ + b) : 0)))
				die("the benchmark's jetties");
		return;
	}
	rc.jfc = s->jfc;
	if (!(s->shared = urma_create_jfr(s->ctx, &rc)))
		die("urma_create_jfr");
	for (int i = 0; i < NJ; i++) {
		int j = ORDER[i];

		s->jet[j] = make_jetty(s, s->jfc, is_um(j), j >= 2, peer ? PID(j) : 0);
	}
	for (uint32_t b = 0; b < NJ * NBUF; b++)
		post_recv(s, b);
}

static void side_close(struct side *s)
{
	for (int j = 0; j < NJ + NB; j++)
		if (s->jet[j])
			urma_delete_jetty(s->jet[j]);
	for (int b = 0; b < NB; b++)
		if (s->bjfc[b])
			urma_delete_jfc(s->bjfc[b]);
	if (s->shared)
		urma_delete_jfr(s->shared);
	urma_unregister_seg(s->seg);
	urma_delete_jfc(s->jfc);
	urma_delete_jfce(s->jfce);
	urma_delete_context(s->ctx);
}

static urma_target_jetty_t *import(struct side *s, bool um, const urma_jetty_id_t *id)
{
	urma_rjetty_t rj = { .jetty_id = *id, .trans_mode = um ? URMA_TM_UM : URMA_TM_RM,
			     .type = URMA_JETTY, .tp_type = um ? URMA_UTP : URMA_RTP };
	urma_token_t t = { 0 };

	return urma_import_jetty(s->ctx, &rj, &t);
}

/* ---- the peer: echoes every Send through the jetty it came to, its TPN first --------- */

static void peer_main(int fd)
{
	urma_target_jetty_t *back[NJ] = { 0 };
	struct two_ends_info info = { 0 };
	uint32_t slot = 0;
	struct side S;
	bool bench = getenv("URMA_TEST_BENCH");

	memset(&S, 0, sizeof(S));
	side_open(&S, two_ends_peer_device(), true, bench);
	info.va = S.seg->seg.ubva.va;
	info.token_id = S.seg->seg.token_id;
	info.eid = S.ctx->eid;
	info.uasid = S.ctx->uasid;
	if (write(fd, &info, sizeof(info)) != sizeof(info))
		die("peer: write");
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		urma_cr_t cr;
		int got = !bench && urma_poll_jfc(S.jfc, 1, &cr) == 1;

		if (got && cr.flag.bs.s_r && cr.status == URMA_CR_SUCCESS) {
			int j = (int)(cr.local_id - PID(0));
			size_t out = SEG_LEN / 2 - 65536 + (size_t)(slot++ % 16) * BUF;
			uint32_t tpn = cr.tpn;
			urma_sge_t g = sge(&S, out, cr.completion_len + 4);

			if (j < 0 || j >= NJ)
				die("peer: a receive on no jetty of the test");
			if (!back[j] || back[j]->id.id != cr.remote_id.id) {
				if (back[j])
					urma_unimport_jetty(back[j]);
				back[j] = import(&S, is_um(j), &cr.remote_id);
			}
			memcpy(S.buf + out, &tpn, 4);
			memcpy(S.buf + out + 4, S.buf + rbuf((uint32_t)cr.user_ctx), cr.completion_len);
			if (back[j])
				two_ends_post(S.jet[j], URMA_OPC_SEND, back[j], &g, NULL, 0);
			post_recv(&S, (uint32_t)cr.user_ctx);
		}
		if (poll(&pfd, 1, got ? 0 : 1) > 0)
			break;	/* the parent closed its end: done */
	}
	for (int j = 0; j < NJ; j++)
		if (back[j])
			urma_unimport_jetty(back[j]);
	side_close(&S);
	exit(0);
}

/* ---- this side ---------------------------------------------------------------------- */

static struct side C;
static struct two_ends_info peer;
static urma_target_jetty_t *tj[NJ + NB];
static urma_target_seg_t *tseg;
static uint32_t waits;

/* The next record of the one JFC: polled, or (wait) after the JFCE fired. */
static bool next_cr(urma_cr_t *cr, bool wait)
{
	urma_jfc_t *ev;
	uint32_t one = 1;

	if (urma_poll_jfc(C.jfc, 1, cr) == 1)
		return true;
	if (!wait)
		return false;
	if (urma_rearm_jfc(C.jfc, false))
		die("urma_rearm_jfc");
	if (urma_poll_jfc(C.jfc, 1, cr) == 1)
		return true;
	/* A record is due (the caller waits for one): the JFCE must fire. */
	if (urma_wait_jfc(C.jfce, 1, 2000, &ev) != 1)
		die("a record is due and the JFCE did not fire within 2 s (a lost wake-up)");
	if (ev != C.jfc)
		die("urma_wait_jfc: another JFC");
	urma_ack_jfc(&ev, &one, 1);
	waits++;
	return false;
}

static int jetty_of(uint32_t id)
{
	for (int j = 0; j < NJ; j++)
		if (C.jet[j]->jetty_id.id == id)
			return j;
	die("a record of no jetty of the test");
	return -1;
}

#define TAG(op, j, r)	((uint64_t)(op) << 32 | (uint64_t)(j) << 24 | (uint64_t)(r))

/*
 * The records of a round's requests (tags, one each) and, Sends, the
 * echoes (one per jetty of recv_mask): each exactly once, within 3 s.
 */
static void collect(const uint64_t *tags, int ntags, uint32_t recv_mask, int r, const uint32_t *len)
{
	uint32_t seen_tags = 0, seen_recv = 0;
	double until = now_s() + 3;

	while (seen_tags != (1u << ntags) - 1 || seen_recv != recv_mask) {
		urma_cr_t cr;
		int j, t;

		if (now_s() > until)
			die("a record missing after 3 s");
		if (!next_cr(&cr, r & 1))
			continue;
		if (cr.status != URMA_CR_SUCCESS) {
			fprintf(stderr, "completion status %d (%s)\n", (int)cr.status,
				cr.flag.bs.s_r ? "receive" : "send");
			die("a completion failed");
		}
		if (!cr.flag.bs.s_r) {
			for (t = 0; t < ntags && tags[t] != cr.user_ctx; t++)
				;
			if (t == ntags || seen_tags & 1u << t)
				die("a send record twice, or unasked");
			seen_tags |= 1u << t;
			continue;
		}
		j = jetty_of(cr.local_id);
		{
			uint8_t *echo = C.buf + rbuf((uint32_t)cr.user_ctx);
			uint32_t ptpn;

			if (!(recv_mask & 1u << j) || seen_recv & 1u << j)
				die("a receive record twice, or unasked");
			seen_recv |= 1u << j;
			memcpy(&ptpn, echo, 4);
			if (cr.completion_len != len[j] + 4 ||
			    memcmp(echo + 4, C.buf + (size_t)j * 65536, len[j]))
				die("the echo is not what was sent");
			if (cr.tpn % 2 != WORKER[j] || ptpn % 2 != WORKER[j]) {
				fprintf(stderr, "jetty %d: channel TPN %u here, %u at the peer, worker %u expected\n",
					j, cr.tpn, ptpn, WORKER[j]);
				die("a channel is not on its jetty's worker");
			}
			if (!r)
				printf("jetty %d (%s%s): channel TPN %u here, %u at the peer: worker %u\n", j,
				       is_um(j) ? "UM" : "RM", j >= 2 ? ", the shared JFR" : ", its own JFR",
				       cr.tpn, ptpn, cr.tpn % 2);
			post_recv(&C, (uint32_t)cr.user_ctx);
		}
	}
}

/* A Send echoed on each jetty of mask, and their records. */
static void sends(uint32_t mask, int r)
{
	uint64_t tags[NJ];
	uint32_t len[NJ];
	int n = 0;

	for (int j = 0; j < NJ; j++) {
		urma_sge_t g = sge(&C, (size_t)j * 65536, len[j] = is_um(j) ? 512 : 1000 + 700u * (uint32_t)j);

		if (!(mask & 1u << j))
			continue;
		fill(C.buf + (size_t)j * 65536, len[j], (uint32_t)(j * 100 + r));
		tags[n] = TAG(1, j, r);
		if (two_ends_post(C.jet[j], URMA_OPC_SEND, tj[j], &g, NULL, tags[n++]))
			die("Send");
	}
	collect(tags, n, mask, r, len);
}

static void round_all(int r)
{
	uint64_t tags[NJ];
	uint32_t len[NJ] = { 0 };
	int n = 0;

	sends((1u << NJ) - 1, r);
	/* Waiting rounds: worker 1's jetties alone too, so its records are the
	 * only ones to wake the JFCE (worker 0, the shared JFR's, idle). */
	if (r & 1)
		sends(1u << 0 | 1u << 1, r);
	/* RM: a Write each to the peer's segment, then a Read of it back. */
	for (int op = 2; op <= 3; op++) {
		n = 0;
		for (int j = 0; j < NJ; j++) {
			size_t off = 262144 + (size_t)j * 65536, back = 786432 + (size_t)j * 65536;
			urma_sge_t loc = sge(&C, op == 2 ? off : back, BUF);
			urma_sge_t rem = { .addr = peer.va + (uint64_t)j * 65536 + (uint64_t)(r % 16) * BUF,
					   .len = BUF, .tseg = tseg };

			if (is_um(j))
				continue;
			if (op == 2) {
				fill(C.buf + off, BUF, (uint32_t)(7000 + j * 100 + r));
			} else {
				memset(C.buf + back, 0, BUF);
			}
			tags[n] = TAG(op, j, r);
			if (two_ends_post(C.jet[j], op == 2 ? URMA_OPC_WRITE : URMA_OPC_READ, tj[j],
				 op == 2 ? &loc : &rem, op == 2 ? &rem : &loc, tags[n]))
				die(op == 2 ? "Write" : "Read");
			n++;
		}
		collect(tags, n, 0, r, len);
	}
	for (int j = 0; j < NJ; j++) {
		size_t off = 262144 + (size_t)j * 65536, back = 786432 + (size_t)j * 65536;

		if (!is_um(j) && memcmp(C.buf + off, C.buf + back, BUF))
			die("the Read did not bring back what was written");
	}
}

/*
 * A JFC of depth FILL_DEPTH fed by a JFS on each worker (its records' TPNs
 * tell which), not polled while they complete: it holds FILL_DEPTH records
 * whichever worker made them, each once and in posting order per JFS; the
 * records past that are lost, and the poll that finds the JFC empty says so
 * once (EOVERFLOW), as docs/URMA.md "Completion records" has it.
 */
#define FILL_DEPTH	8

/* Writes of 64 bytes, n[k] on jfs[k], their records left to come. */
static void fill_writes(urma_jfs_t *const jfs[2], const int n[2], int round)
{
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < n[k]; i++) {
			urma_sge_t loc = sge(&C, 262144, 64);
			urma_sge_t rem = { .addr = peer.va, .len = 64, .tseg = tseg };
			urma_jfs_wr_t wr = { .opcode = URMA_OPC_WRITE, .tjetty = tj[0],
					     .user_ctx = TAG(4, k, round * 100 + i) };
			urma_jfs_wr_t *bad;

			wr.flag.bs.complete_enable = 1;
			wr.rw.src = (urma_sg_t){ .sge = &loc, .num_sge = 1 };
			wr.rw.dst = (urma_sg_t){ .sge = &rem, .num_sge = 1 };
			if (urma_post_jfs_wr(jfs[k], &wr, &bad))
				die("urma_post_jfs_wr");
		}
	usleep(1000 * 1000);	/* every Write done by the progress threads, none polled */
}

/* The JFC's records: how many; each JFS's in order, on its own worker. */
static int fill_drain(urma_jfc_t *jfc, int round, uint32_t worker[2], bool *overflow)
{
	int got = 0, next[2] = { 0, 0 }, r;
	urma_cr_t cr;

	*overflow = false;
	while ((r = urma_poll_jfc(jfc, 1, &cr)) != 0) {
		int k, i;

		if (r < 0) {
			if (errno != EOVERFLOW || *overflow)
				die("urma_poll_jfc: an error other than one EOVERFLOW");
			*overflow = true;
			continue;
		}
		k = (int)(cr.user_ctx >> 24 & 0xff);
		i = (int)(cr.user_ctx & 0xffffff) - round * 100;
		if (cr.status != URMA_CR_SUCCESS || cr.user_ctx >> 32 != 4 || k > 1 || i != next[k]++)
			die("a record of the filled JFC out of order, twice or failed");
		if (!round)
			worker[k] = cr.tpn % 2;
		else if (worker[k] != cr.tpn % 2)
			die("a JFS's records from another worker");
		got++;
	}
	return got;
}

/* Records of the shared JFC taken by POLLERS threads at once, each once. */
#define POLLERS		3
#define STRESS_N	3000	/* Writes per JFS */

struct taker {
	pthread_t t;
	urma_jfc_t *jfc;
	uint8_t (*seen)[STRESS_N];
	int *left;		/* records still due, both JFSs (atomic) */
	int *out;		/* each JFS's Writes not yet taken (atomic) */
	int *worker;		/* each JFS's, from its records' TPNs (-1: none yet) */
	bool bad;
};

static void *take_records(void *arg)
{
	struct taker *k = arg;
	double until = now_s() + 30;

	while (__atomic_load_n(k->left, __ATOMIC_ACQUIRE) > 0 && now_s() < until) {
		urma_cr_t cr[4];
		int n = urma_poll_jfc(k->jfc, 4, cr);

		k->bad |= n < 0;
		for (int i = 0; i < n; i++) {
			uint32_t j = (uint32_t)(cr[i].user_ctx >> 24 & 0xff), m = (uint32_t)(cr[i].user_ctx & 0xffffff);

			int w = -1;

			if (cr[i].status != URMA_CR_SUCCESS || j > 1 || m >= STRESS_N ||
			    __atomic_fetch_add(&k->seen[j][m], 1, __ATOMIC_RELAXED) ||
			    (!__atomic_compare_exchange_n(&k->worker[j], &w, (int)(cr[i].tpn % 2), false,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED) &&
			     w != (int)(cr[i].tpn % 2))) {
				k->bad = true;
				continue;
			}
			__atomic_fetch_sub(&k->out[j], 1, __ATOMIC_RELEASE);
			__atomic_fetch_sub(k->left, 1, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

/*
 * The ring's other side: a JFC fed by a JFS on each worker and polled by
 * POLLERS threads at once (tickets taken on head by several, on tail by
 * both workers): every record taken exactly once, none lost (12 Writes of
 * each JFS outstanding at most, so the JFC of 64 never overflows).
 */
static void jfc_polled_by_three(void)
{
	static uint8_t seen[2][STRESS_N];
	urma_jfc_cfg_t jc = { .depth = 64 };
	urma_jfc_t *jfc = urma_create_jfc(C.ctx, &jc);
	urma_jfs_cfg_t sc = { .depth = 16, .trans_mode = URMA_TM_RM, .rnr_retry = 7 };
	int left = 2 * STRESS_N, out[2] = { 0, 0 }, sent[2] = { 0, 0 }, worker[2] = { -1, -1 };
	struct taker k[POLLERS];
	urma_jfs_t *jfs[2];
	double until = now_s() + 30;
	bool bad = false;

	sc.jfc = jfc;
	if (!jfc || !(jfs[0] = urma_create_jfs(C.ctx, &sc)) || !(jfs[1] = urma_create_jfs(C.ctx, &sc)))
		die("the polled JFC, its JFSs");
	for (int i = 0; i < POLLERS; i++) {
		k[i] = (struct taker){ .jfc = jfc, .seen = seen, .left = &left, .out = out, .worker = worker };
		if (pthread_create(&k[i].t, NULL, take_records, &k[i]))
			die("pthread_create");
	}
	while ((sent[0] < STRESS_N || sent[1] < STRESS_N) && now_s() < until)
		for (int j = 0; j < 2; j++) {
			urma_sge_t loc = sge(&C, 262144, 64);
			urma_sge_t rem = { .addr = peer.va, .len = 64, .tseg = tseg };
			urma_jfs_wr_t wr = { .opcode = URMA_OPC_WRITE, .tjetty = tj[0],
					     .user_ctx = TAG(5, j, sent[j]) };
			urma_jfs_wr_t *badwr;

			if (sent[j] == STRESS_N || __atomic_load_n(&out[j], __ATOMIC_ACQUIRE) >= 12)
				continue;
			wr.flag.bs.complete_enable = 1;
			wr.rw.src = (urma_sg_t){ .sge = &loc, .num_sge = 1 };
			wr.rw.dst = (urma_sg_t){ .sge = &rem, .num_sge = 1 };
			__atomic_fetch_add(&out[j], 1, __ATOMIC_RELEASE);
			if (urma_post_jfs_wr(jfs[j], &wr, &badwr))
				die("urma_post_jfs_wr");
			sent[j]++;
		}
	for (int i = 0; i < POLLERS; i++) {
		pthread_join(k[i].t, NULL);
		bad |= k[i].bad;
	}
	for (int j = 0; j < 2; j++)
		for (int m = 0; m < STRESS_N; m++)
			bad |= seen[j][m] != 1;
	printf("JFC of depth 64, %d + %d Writes' records from workers %d and %d taken by %d threads: %s\n",
	       sent[0], sent[1], worker[0], worker[1], POLLERS, bad ? "some twice, lost or failed" : "each once");
	if (bad)
		die("a record of a JFC polled by several threads twice, lost or failed");
	if (worker[0] == worker[1])
		die("the polled JFC's two JFSs are on one worker");
	if (urma_delete_jfs(jfs[0]) || urma_delete_jfs(jfs[1]) || urma_delete_jfc(jfc))
		die("deleting the polled JFC");
}

static void jfc_from_two_workers(void)
{
	urma_jfc_cfg_t jc = { .depth = FILL_DEPTH };
	urma_jfc_t *jfc = urma_create_jfc(C.ctx, &jc);
	urma_jfs_cfg_t sc = { .depth = 16, .trans_mode = URMA_TM_RM, .rnr_retry = 7 };
	urma_jfs_t *jfs[2];
	const int exact[2] = { 6, 2 }, over[2] = { 6, 6 };
	uint32_t worker[2];
	bool overflow;
	int got;

	sc.jfc = jfc;
	if (!jfc || !(jfs[0] = urma_create_jfs(C.ctx, &sc)) || !(jfs[1] = urma_create_jfs(C.ctx, &sc)))
		die("the filled JFC, its JFSs");
	/* As many records as it holds, most from one worker: every one kept. */
	fill_writes(jfs, exact, 0);
	got = fill_drain(jfc, 0, worker, &overflow);
	printf("JFC of depth %d, %d + %d records from workers %u and %u: %d taken%s\n", FILL_DEPTH,
	       exact[0], exact[1], worker[0], worker[1], got, overflow ? ", EOVERFLOW" : "");
	if (worker[0] == worker[1])
		die("the two JFSs are on one worker");
	if (got != FILL_DEPTH || overflow)
		die("a JFC given as many records as its depth lost some, or said so");
	/* More than it holds: its depth taken, the loss said once. */
	fill_writes(jfs, over, 1);
	got = fill_drain(jfc, 1, worker, &overflow);
	printf("JFC of depth %d, %d + %d records: %d taken%s\n", FILL_DEPTH, over[0], over[1], got,
	       overflow ? ", then EOVERFLOW" : "");
	if (got != FILL_DEPTH || !overflow)
		die("a JFC holds more records than its depth, or lost some unsaid");
	if (urma_delete_jfs(jfs[0]) || urma_delete_jfs(jfs[1]) || urma_delete_jfc(jfc))
		die("deleting the filled JFC");
}

int main(void)
{
	const char *rs = getenv("URMA_TEST_ROUNDS");
	int n = rs ? atoi(rs) : 20, status, fd;
	bool bench = getenv("URMA_TEST_BENCH");
	urma_import_seg_flag_t f = { 0 };
	urma_token_t t = { TOKEN };
	pid_t pid = two_ends_fork(peer_main, &fd, &peer, sizeof(peer));
	urma_seg_t sg;

	side_open(&C, two_ends_device(), false, bench);
	for (int j = bench ? NJ : 0; j < (bench ? NJ + NB : NJ); j++) {
		urma_jetty_id_t id = { .eid = peer.eid, .uasid = peer.uasid, .id = PID(j) };

		if (!(tj[j] = import(&C, j < NJ && is_um(j), &id)))
			die("urma_import_jetty");
	}
	sg = (urma_seg_t){ .ubva = { .eid = peer.eid, .uasid = peer.uasid, .va = peer.va },
			   .len = SEG_LEN, .token_id = peer.token_id };
	f.bs.access = URMA_ACCESS_READ | URMA_ACCESS_WRITE;
	if (!(tseg = urma_import_seg(C.ctx, &sg, &t, 0, f)))
		die("urma_import_seg");
	if (bench) {
		struct write_lane l[NB];

		for (int b = 0; b < NB; b++)
			l[b] = (struct write_lane){ .jet = C.jet[NJ + b], .jfc = C.bjfc[b],
							.tj = tj[NJ + b], .buf = C.buf, .seg = C.seg,
							.rva = peer.va, .tseg = tseg };
		write_bench(l, NB, SEG_LEN / 2, atof(getenv("URMA_TEST_BENCH")),
				"1 context, 2 jetties");
	} else {
		double until;
		urma_cr_t cr;

		for (int r = 0; r < n; r++)
			round_all(r);
		printf("%d rounds on the 4 pairs at once, every record once on the one JFC "
		       "(%u waits woken by its JFCE)\n", n, waits);
		if (n > 1 && !waits)
			die("no wait was woken by the JFCE");
		/* Nothing more: no record twice, none unasked. */
		for (until = now_s() + 0.1; now_s() < until;)
			if (urma_poll_jfc(C.jfc, 1, &cr) != 0)
				die("a completion record came twice, or unasked");
		jfc_from_two_workers();
		jfc_polled_by_three();
	}
	urma_unimport_seg(tseg);
	for (int j = 0; j < NJ + NB; j++)
		if (tj[j])
			urma_unimport_jetty(tj[j]);
	side_close(&C);
	close(fd);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die("the peer failed");
	if (!bench)
		printf("all passed\n");
	return 0;
}
