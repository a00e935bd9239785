// SPDX-License-Identifier: BSD-2-Clause
/*
 * The runs of UMEM frames a jumbo packet is built in (user/xsk/xsk_frames.h,
 * xsk_mt_alloc_run): a run, or a single frame, must never be handed out
 * while the kernel may still read one of its frames (posted on a tx ring,
 * its completion not yet written), and every one comes back exactly once. In
 * copy mode the kernel copies within sendto, so no end-to-end test could see
 * a run reused early; zero-copy would send whatever was written over it.
 *
 * Two workers, each with its tx ring, share one completion ring, as the
 * threads on a queue share its pool. The rings are plain memory in the
 * kernel's layout; the fake kernel here reads descriptors off the tx rings
 * and writes completions, a packet's together, packets in any order. An
 * independent model follows every item (single frame or run) from what the
 * rings show: a frame is busy from the moment its descriptor is on a tx ring
 * until its completion is written; an item is owed back once when the
 * driver frees it unsent, or when a worker consumes the completion of its
 * (first) frame. Each hand-out must be an item owed back, none of whose
 * frames is busy; at the end, with everything completed and reaped, each
 * item comes out of the stacks exactly once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "xsk/xsk_frames.h"
#include "xsk/xsk_mb.h"	/* XDP_PKT_CONTD */

#define FS		4096u
#define RUN_FRAMES	4u
#define NSINGLE		24u	/* single frames, 12 a worker */
#define NRUN		6u	/* runs, 3 a worker */
#define NITEM		(NSINGLE + NRUN)
#define NFRAME		(NSINGLE + NRUN * RUN_FRAMES)
#define TXR		8u	/* small: tx rings fill up */
#define CQR		64u	/* >= NFRAME: the kernel never waits for room */
#define NW		2
#define RUN_BASE	((uint64_t)NSINGLE * FS)

struct pkt {
	uint64_t addr[RUN_FRAMES];
	unsigned n;
};

static struct world {
	struct xsk_frames fs[NW];
	struct xdp_desc txd[NW][TXR];
	uint32_t txprod[NW], txcons[NW], txflags[NW];
	struct xsk_ring_prod tx[NW];
	uint64_t cqa[CQR], cq_shadow[CQR];	/* the ring, and what the kernel wrote there */
	uint32_t cqprod, cqcons, cqflags;
	struct xsk_ring_cons cq;	/* one, shared: the pool's */
	/* the kernel's side */
	uint32_t seen[NW];		/* tx descriptors noticed (busy from then on) */
	struct pkt partial[NW];		/* a packet whose descriptors are partly consumed */
	struct pkt flight[NFRAME];	/* consumed whole, not completed */
	unsigned nflight;
	/* the model */
	unsigned busy[NFRAME];		/* per frame: on a tx ring or in flight */
	int owed[NITEM];		/* per item: returned and not handed out since */
	int sender[NITEM];		/* the worker whose tx ring it was last on */
	unsigned long long runs_out, crossed;	/* runs handed out; items back to the other worker */
	uint64_t seed, first_seed;	/* the generator's state; the case's seed */
	unsigned step;
} w;

static uint64_t rnd(unsigned n)
{
	w.seed ^= w.seed << 13;
	w.seed ^= w.seed >> 7;
	w.seed ^= w.seed << 17;
	return n ? w.seed % n : 0;
}

#define expect(cond, ...)                                                                                  \
	do {                                                                                               \
		if (!(cond)) {                                                                             \
			char m_[256];                                                                      \
			snprintf(m_, sizeof(m_), __VA_ARGS__);                                             \
			fail_msg("step %u, case seed %#llx: %s", w.step, (unsigned long long)w.first_seed, \
				 m_);                                                                      \
		}                                                                                          \
	} while (0)

static unsigned frame_of(uint64_t addr) { return (unsigned)(addr / FS); }

static unsigned item_of_frame(unsigned fr)
{
	return fr < NSINGLE ? fr : NSINGLE + (fr - NSINGLE) / RUN_FRAMES;
}

/* The item a completion's address gives back, or -1: a run's other frames give nothing back. */
static int item_returned(uint64_t addr)
{
	unsigned fr = frame_of(addr);

	return fr < NSINGLE || (fr - NSINGLE) % RUN_FRAMES == 0 ? (int)item_of_frame(fr) : -1;
}

static void setup_world(uint64_t seed)
{
	unsigned long long runs_out = w.runs_out, crossed = w.crossed;

	for (int i = 0; i < NW; i++)
		xsk_frames_fini(&w.fs[i]);
	memset(&w, 0, sizeof(w));
	w.seed = w.first_seed = seed;
	w.runs_out = runs_out;
	w.crossed = crossed;
	for (int i = 0; i < NW; i++) {
		assert_int_equal(xsk_frames_init(&w.fs[i], NSINGLE, FS, NRUN, RUN_FRAMES), 0);
		w.tx[i] = (struct xsk_ring_prod){ .cached_cons = TXR, .mask = TXR - 1, .size = TXR,
						  .producer = &w.txprod[i], .consumer = &w.txcons[i],
						  .ring = w.txd[i], .flags = &w.txflags[i] };
	}
	w.cq = (struct xsk_ring_cons){ .mask = CQR - 1, .size = CQR, .producer = &w.cqprod,
				       .consumer = &w.cqcons, .ring = w.cqa, .flags = &w.cqflags };
	/* Dealt out as xsk_mt_thread and xsk_mt_thread_runs do: pushed. */
	for (unsigned i = 0; i < NSINGLE; i++) {
		xsk_frames_push(&w.fs[i % NW], (uint64_t)i * FS);
		w.owed[i] = 1;
	}
	for (unsigned r = 0; r < NRUN; r++) {
		xsk_frames_push(&w.fs[r % NW], RUN_BASE + (uint64_t)r * RUN_FRAMES * FS);
		w.owed[NSINGLE + r] = 1;
	}
}

static void teardown_world(void)
{
	for (int i = 0; i < NW; i++)
		xsk_frames_fini(&w.fs[i]);
}

/* ---- the fake kernel ---------------------------------------------------- */

/* Descriptors on worker k's tx ring that the kernel (so the NIC) may read from now on. */
static void notice(int k)
{
	for (; w.seen[k] != w.txprod[k]; w.seen[k]++) {
		const struct xdp_desc *d = &w.txd[k][w.seen[k] & (TXR - 1)];

		expect(frame_of(d->addr) < NFRAME, "descriptor %#llx outside the UMEM", (unsigned long long)d->addr);
		w.busy[frame_of(d->addr)]++;
		w.sender[item_of_frame(frame_of(d->addr))] = k;
	}
}

/* Up to n descriptors off worker k's tx ring; a packet is in flight once its last one is read. */
static void consume_tx(int k, unsigned n)
{
	for (; n && w.txcons[k] != w.txprod[k]; n--, w.txcons[k]++) {
		const struct xdp_desc *d = &w.txd[k][w.txcons[k] & (TXR - 1)];
		struct pkt *p = &w.partial[k];

		expect(p->n < RUN_FRAMES, "a packet of more than %u descriptors", RUN_FRAMES);
		p->addr[p->n++] = d->addr;
		if (!(d->options & XDP_PKT_CONTD)) {
			w.flight[w.nflight++] = *p;
			p->n = 0;
		}
	}
}

/* n packets in flight, picked at random, completed in one batch: a packet's frames in order. */
static void complete(unsigned n)
{
	for (; n && w.nflight; n--) {
		unsigned i = (unsigned)rnd(w.nflight);
		struct pkt p = w.flight[i];

		w.flight[i] = w.flight[--w.nflight];
		for (unsigned f = 0; f < p.n; f++) {
			uint32_t at = w.cqprod & (CQR - 1);

			expect(w.cqprod - w.cqcons < CQR, "completion ring overrun");
			w.cqa[at] = w.cq_shadow[at] = p.addr[f];
			expect(w.busy[frame_of(p.addr[f])], "frame %u completed twice", frame_of(p.addr[f]));
			w.busy[frame_of(p.addr[f])]--;
			__atomic_store_n(&w.cqprod, w.cqprod + 1, __ATOMIC_RELEASE);
		}
	}
}

/* ---- the driver: what xsk_mt and the endpoint do, checked by the model -- */

/* No more free than there are: a run given back twice shows here at once,
 * before the stacks (sized for every run) overflow. */
static void within_bounds(void)
{
	uint32_t runs = 0, frames = 0;

	for (int k = 0; k < NW; k++) {
		runs += w.fs[k].nruns;
		frames += w.fs[k].nfree;
	}
	expect(runs <= NRUN && frames <= NSINGLE, "%u free runs of %u, %u free frames of %u", runs, NRUN, frames,
	       NSINGLE);
}

/* Worker k reaps the shared completion ring; the model credits what it consumed. */
static void reap(int k)
{
	uint32_t from = w.cqcons;

	xsk_frames_reap(&w.fs[k], &w.cq);
	for (uint32_t i = from; i != w.cqcons; i++) {
		int it = item_returned(w.cq_shadow[i & (CQR - 1)]);

		if (it >= 0) {
			w.owed[it]++;
			w.crossed += w.sender[it] != k;
		}
	}
	within_bounds();
}

/* xsk_mt_alloc(_run): the top of k's stack, completions reaped first when empty. */
static bool take(int k, bool run, uint64_t *addr)
{
	unsigned it, fr;

	if (!xsk_frames_pop(&w.fs[k], run, addr)) {
		reap(k);
		if (!xsk_frames_pop(&w.fs[k], run, addr))
			return false;
	}
	fr = frame_of(*addr);
	expect(*addr % FS == 0 && fr < NFRAME, "handed out %#llx: not a frame's start", (unsigned long long)*addr);
	expect(run == (fr >= NSINGLE), "asked for a %s, got frame %u", run ? "run" : "single frame", fr);
	expect(!run || (fr - NSINGLE) % RUN_FRAMES == 0, "a run handed out from its frame %u, not its first",
	       (fr - NSINGLE) % RUN_FRAMES);
	it = item_of_frame(fr);
	for (unsigned f = 0; f < (run ? RUN_FRAMES : 1); f++)
		expect(!w.busy[fr + f], "%s %u handed out while its frame %u is the kernel's", run ? "run" : "frame",
		       run ? it - NSINGLE : it, f);
	expect(w.owed[it] == 1, "%s %u handed out, given back %d times since it last was", run ? "run" : "frame",
	       run ? it - NSINGLE : it, w.owed[it]);
	w.owed[it]--;
	w.runs_out += run;
	return true;
}

/* The packet's frames back unsent, each freed as the endpoint frees them. */
static void give_back(int k, const struct xsk_mt_frame *f, unsigned n, bool run)
{
	for (unsigned i = 0; i < n; i++) {
		xsk_frames_push(&w.fs[k], f[i].addr);
		if (!run || !i)
			w.owed[item_of_frame(frame_of(f[i].addr))]++;
	}
	within_bounds();
}

/* A packet of n frames posted on k's tx ring whole (the endpoint asks for
 * room first: a packet cut by a full ring would run into the next one), or
 * given back unsent. */
static void send(int k, struct xsk_mt_frame *f, unsigned n, bool run)
{
	if (xsk_prod_nb_free(&w.tx[k], n) < n) {
		give_back(k, f, n, run);
		return;
	}
	/* What the kernel reads is what was posted: address, length, and the
	 * continuation flag on every frame but a packet's last. Single frames
	 * are posted both with and without sg (a socket that takes no
	 * multi-buffer), to check both. */
	bool sg = n > 1 || k;
	uint32_t at = w.tx[k].cached_prod;

	expect(xsk_frames_post(&w.tx[k], f, n, sg) == n, "room for %u descriptors, not taken", n);
	for (unsigned i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_prod__tx_desc(&w.tx[k], at + i);
		uint32_t want = sg && i + 1 < n ? XDP_PKT_CONTD : 0;

		expect(d->addr == f[i].addr && d->len == f[i].len && d->options == want,
		       "descriptor %u of %u: %#llx+%u options %u, posted %#llx+%u options %u", i, n,
		       (unsigned long long)d->addr, d->len, d->options, (unsigned long long)f[i].addr, f[i].len, want);
	}
	notice(k);
}

/* A jumbo packet built in place in a run: from off in its first frame, n frames. */
static void send_run(int k, unsigned n, unsigned off)
{
	struct xsk_mt_frame f[RUN_FRAMES];
	uint64_t a;

	if (!take(k, true, &a))
		return;
	for (unsigned i = 0; i < n; i++)
		f[i] = (struct xsk_mt_frame){ .addr = i ? a + i * FS : a + off, .len = FS, .more = i + 1 < n };
	send(k, f, n, true);
}

/* A packet in n single frames (the copy out of jbuf, or one frame). */
static void send_singles(int k, unsigned n)
{
	struct xsk_mt_frame f[RUN_FRAMES];
	uint64_t a;

	for (unsigned i = 0; i < n; i++) {
		if (!take(k, false, &a)) {
			give_back(k, f, i, false);
			return;
		}
		f[i] = (struct xsk_mt_frame){ .addr = a + (i ? 0 : 256), .len = FS, .more = i + 1 < n };
	}
	send(k, f, n, false);
}

/* Everything posted sent and completed, reaped by both; then every item
 * must come out of the two workers' stacks once, and nothing more. */
static void drain(void)
{
	uint64_t a;
	unsigned got = 0;

	for (int k = 0; k < NW; k++)
		consume_tx(k, TXR);
	complete(NFRAME);
	for (int k = 0; k < NW; k++)
		reap(k);
	for (int k = 0; k < NW; k++)
		for (int run = 0; run < 2; run++)
			while (take(k, run, &a))
				got++;
	for (unsigned it = 0; it < NITEM; it++)
		expect(!w.owed[it], "%s %u never came back", it < NSINGLE ? "frame" : "run",
		       it < NSINGLE ? it : it - NSINGLE);
	expect(got == NITEM, "%u items came back, of %u", got, NITEM);
}

/* ---- the tests ---------------------------------------------------------- */

static void run_not_handed_out_before_its_completion(void **state)
{
	uint64_t a;

	(void)state;
	setup_world(1);
	/* Worker 0's three runs, all sent: none left until one completes. */
	for (int i = 0; i < 3; i++)
		send_run(0, 2, 64);
	consume_tx(0, TXR);
	assert_false(xsk_frames_pop(&w.fs[0], true, &a));
	reap(0);
	assert_false(take(0, true, &a));
	complete(1);
	assert_true(take(0, true, &a));
	assert_false(take(0, true, &a));
	give_back(0, (struct xsk_mt_frame[]){ { .addr = a } }, 1, true);
	drain();
	teardown_world();
}

static void run_back_once_for_all_its_frames(void **state)
{
	uint32_t singles;

	(void)state;
	setup_world(2);
	singles = w.fs[0].nfree;
	send_run(0, RUN_FRAMES, 200);
	consume_tx(0, TXR);
	complete(1);
	reap(0);
	/* Its four completions: one run back, no single frame gained. */
	assert_int_equal(w.fs[0].nruns, 3);
	assert_int_equal(w.fs[0].nfree, singles);
	drain();
	teardown_world();
}

static void unsent_run_back_once(void **state)
{
	(void)state;
	setup_world(3);
	/* A full tx ring: the packets that do not fit are freed frame by frame. */
	for (int i = 0; i < 3; i++)
		send_run(1, RUN_FRAMES, 0);
	assert_int_equal(w.txprod[1], TXR);
	assert_int_equal(w.fs[1].nruns, 1);
	drain();
	teardown_world();
}

static void runs_cross_between_workers_once(void **state)
{
	uint64_t a;

	(void)state;
	setup_world(4);
	/* Worker 0 sends, worker 1 reaps the shared ring: the run is 1's now, 0 reaps nothing. */
	send_run(0, 2, 0);
	consume_tx(0, TXR);
	complete(1);
	reap(1);
	reap(0);
	assert_int_equal(w.fs[1].nruns, 4);
	assert_int_equal(w.fs[0].nruns, 2);
	uint64_t held[4];

	for (int i = 0; i < 4; i++)
		assert_true(take(1, true, &held[i]));
	assert_false(take(1, true, &a));
	for (int i = 0; i < 4; i++)
		give_back(1, (struct xsk_mt_frame[]){ { .addr = held[i] } }, 1, true);
	drain();
	teardown_world();
}

static unsigned long long env_num(const char *name, unsigned long long def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

/* Random interleavings: each worker sends runs and single frames, the kernel
 * reads the tx rings and completes in batches, either worker reaps. */
static void random_interleavings(void **state)
{
	/* XSK_RUNS_FUZZ_SEED replays the one case whose seed a failure names. */
	unsigned long long one = env_num("XSK_RUNS_FUZZ_SEED", 0);
	unsigned long cases = one ? 1 : (unsigned long)env_num("XSK_RUNS_FUZZ_CASES", 20000);

	(void)state;
	w.runs_out = w.crossed = 0;
	for (unsigned long c = 0; c < cases; c++) {
		setup_world(one ? one : 0x9e3779b97f4a7c15ull + c * 0x2545f4914f6cdd1dull);
		for (w.step = 0; w.step < 400; w.step++) {
			int k = (int)rnd(NW);

			switch (rnd(8)) {
			case 0:
			case 1:
				send_run(k, 1 + (unsigned)rnd(RUN_FRAMES), (unsigned)rnd(256));
				break;
			case 2:
				send_singles(k, 1 + (unsigned)rnd(RUN_FRAMES));
				break;
			case 3: {
				/* Built in a run, then nothing to send (the core had none). */
				uint64_t a;

				if (take(k, true, &a))
					give_back(k, (struct xsk_mt_frame[]){ { .addr = a + 128 } }, 1, true);
				break;
			}
			case 4:
				consume_tx(k, 1 + (unsigned)rnd(TXR));
				break;
			case 5:
				complete(1 + (unsigned)rnd(3));
				break;
			default:
				reap(k);
				break;
			}
		}
		drain();
	}
	teardown_world();
	/* The interleavings did what they are for: runs reused, items back to the worker that did not send them. */
	print_message("# %lu cases: %llu runs handed out, %llu items back to the other worker\n", cases, w.runs_out,
		      w.crossed);
	assert_true(w.runs_out > cases * 10);
	assert_true(w.crossed > cases);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(run_not_handed_out_before_its_completion),
		cmocka_unit_test(run_back_once_for_all_its_frames),
		cmocka_unit_test(unsent_run_back_once),
		cmocka_unit_test(runs_cross_between_workers_once),
		cmocka_unit_test(random_interleavings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
