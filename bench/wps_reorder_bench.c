// SPDX-License-Identifier: BSD-2-Clause
/*
 * ns/packet of the WPS egress reorder engine (user/wps/reorder.c) with 1,
 * 1,000 and 100,000 active flows, in order and out of order, beside a floor:
 * a per-flow sequence-number ring of the kind DPDK's rte_reorder uses (every
 * packet numbered, a slot per number in a window, drain while the next slot
 * is full), indexed directly by flow number so it pays no lookup at all.
 *
 * Traffic: groups of 4 packets; flows take turns group by group in a shuffled
 * order (the same for engine and floor), so with many flows consecutive
 * groups belong to unrelated flows, as on a real link: a 64-packet batch
 * holds 16 runs of one flow. Out of order: every pair of groups arrives
 * swapped, so half of the groups are buffered and released by their
 * predecessor's E. "1-pkt groups", an added row: groups of one packet in
 * order, so with many flows the flow changes at every packet (64 runs a
 * batch), the worst case for the flow states' cache misses. Flow states
 * exist before timing starts (a warm-up pass, in another shuffled order: were
 * the flows timed in the order their states were made, the states would be
 * visited in memory order, which the hardware prefetcher follows and a real
 * link does not). Time is this thread's CPU time.
 * Both are fed as the egress loop feeds the engine, in batches
 * (wps_reorder_rx_batch), the floor's rings prefetched batch by batch as the
 * engine prefetches its flow states.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"
#include "wps/reorder.h"
#include "wps_opt.h"

#define GLEN	4
#define PKTS	(1u << 20)	/* per measurement */
#define RING	16		/* floor window (>= 2 groups) */

struct in {
	struct wps_pkt p;
	uint32_t flow;
	uint32_t seq;		/* per-flow packet number, for the floor */
};

static volatile uint64_t sink;
static uint32_t *perm;		/* visiting order of the flows */

static void shuffle(uint32_t flows, uint64_t x)
{
	for (uint32_t i = 0; i < flows; i++)
		perm[i] = i;
	for (uint32_t i = flows - 1; i > 0; i--) {
		uint32_t j, t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = (uint32_t)(x % (i + 1));
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* Packet stream for `flows` flows starting at group `g0`, PKTS long (whole rounds). */
static size_t make_stream(struct in *v, uint32_t flows, uint16_t g0, int ooo, uint32_t glen, uint32_t *seq)
{
	uint32_t rounds = PKTS / (flows * glen) ? PKTS / (flows * glen) : 1;
	size_t n = 0;

	rounds += rounds & 1;	/* pairs of groups */
	for (uint32_t r = 0; r < rounds; r++)
		for (uint32_t k = 0; k < flows; k++) {
			uint32_t f = perm[k];
			uint32_t gi = ooo ? (r ^ 1) : r;	/* swapped pairs */

			for (uint32_t i = 0; i < glen; i++, n++) {
				v[n].flow = f;
				v[n].p.ingress_node = (uint16_t)(1 + (f >> 16));
				v[n].p.flow_id = (uint16_t)f;
				v[n].p.group_id = (uint16_t)(g0 + gi);
				v[n].p.flags = (uint8_t)((i == 0 ? WPS_FLAG_S : 0) | (i == glen - 1 ? WPS_FLAG_E : 0));
				v[n].seq = seq[f] + gi * glen + i;
			}
		}
	for (uint32_t f = 0; f < flows; f++)
		seq[f] += rounds * glen;
	return n;
}

/*
 * The packets as the egress loop hands them over: batches of its size
 * (WPS_REORDER_BATCH), one clock reading each. The floor gets the same
 * treatment as the engine: from PF_MIN_FLOWS flows (below, its rings stay in
 * the caches), a first pass over the batch prefetches each packet's ring (the
 * engine's, at any number of flows: the flow table's bucket, then the flow
 * state), then the packets go through in order.
 */
#define PF_MIN_FLOWS	4096

static double run_engine(struct wps_reorder *e, const struct in *v, size_t n, uint64_t *now)
{
	uint64_t acc = 0, t0 = bench_cpu_ns();
	struct wps_pkt p[WPS_REORDER_BATCH];
	uint64_t h[WPS_REORDER_BATCH];

	for (size_t i = 0; i < n; i += WPS_REORDER_BATCH) {
		uint32_t m = n - i < WPS_REORDER_BATCH ? (uint32_t)(n - i) : WPS_REORDER_BATCH, k;
		const struct wps_out *o;

		for (uint32_t j = 0; j < m; j++) {	/* the descriptors' fields, as the loop copies them */
			p[j] = v[i + j].p;
			h[j] = i + j;
		}
		k = wps_reorder_rx_batch(e, p, h, m, (*now)++);
		o = wps_reorder_out(e);
		for (uint32_t j = 0; j < k; j++)
			acc += o[j].handle;
	}
	sink = acc;
	return (double)(bench_cpu_ns() - t0) / (double)n;
}

/*
 * Memory that packets reach at random, zeroed, on huge pages where the kernel
 * gives them, as the engine's pools (user/wps/reorder_flows.c): the floor's
 * rings and the memory probe pay what the engine pays for a line, not page
 * walks besides (on 4 KiB pages 100,000 rings span 3,300 pages).
 */
static void *huge_zalloc(size_t bytes)
{
	const size_t huge = 2u << 20;
	void *p;

	bytes = (bytes + huge - 1) & ~(huge - 1);
	p = aligned_alloc(huge, bytes);
	if (p) {
		(void)madvise(p, bytes, MADV_HUGEPAGE);	/* before the first touch, which allocates */
		memset(p, 0, bytes);
	}
	return p;
}

struct ring {
	uint32_t next;
	uint32_t full;			/* bitmap of occupied slots */
	uint64_t slot[RING];
};

static double run_ring(struct ring *rings, uint32_t flows, const struct in *v, size_t n)
{
	uint64_t acc = 0, t0 = bench_cpu_ns();

	for (size_t i0 = 0; i0 < n; i0 += WPS_REORDER_BATCH) {
		size_t end = n - i0 < WPS_REORDER_BATCH ? n : i0 + WPS_REORDER_BATCH;

		for (size_t i = i0; flows >= PF_MIN_FLOWS && i < end; i++)
			if (i == i0 || v[i].flow != v[i - 1].flow)
				__builtin_prefetch(&rings[v[i].flow], 1);
		for (size_t i = i0; i < end; i++) {
			struct ring *r = &rings[v[i].flow];
			uint32_t s = v[i].seq;

			if (s != r->next) {
				r->slot[s % RING] = i;
				r->full |= 1u << (s % RING);
				continue;
			}
			acc += i;
			r->next++;
			while (r->full & (1u << (r->next % RING))) {
				r->full &= ~(1u << (r->next % RING));
				acc += r->slot[r->next % RING];
				r->next++;
			}
		}
	}
	sink = acc;
	return (double)(bench_cpu_ns() - t0) / (double)n;
}

/*
 * What memory gives on this machine in the same run (it moves with the VM's
 * other load, and the ratios below with it): ns per 64-byte line read from
 * random places of a region as large as the 100,000 flows' states (19 MiB),
 * with k independent chains in flight (one random cycle through every line,
 * split in k).
 */
static double mem_line_ns(size_t bytes, uint32_t k)
{
	const size_t lines = bytes / 64, steps = (1u << 22) / k;
	uint64_t *mem = huge_zalloc(bytes);
	uint32_t *order = malloc(lines * sizeof(*order));
	uint64_t pos[32], x = 0x9e3779b97f4a7c15ull, acc = 0, t0;

	if (!mem || !order || k > 32) {
		free(order);
		free(mem);
		return 0;
	}
	for (size_t i = 0; i < lines; i++)
		order[i] = (uint32_t)i;
	for (size_t i = lines - 1; i > 0; i--) {	/* Sattolo: one cycle through every line */
		size_t j;
		uint32_t t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = x % i;
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < lines; i++)
		mem[(size_t)order[i] * 8] = (uint64_t)order[(i + 1) % lines] * 8;
	for (uint32_t j = 0; j < k; j++)
		pos[j] = (uint64_t)order[j * (lines / k)] * 8;
	t0 = bench_cpu_ns();
	for (size_t s = 0; s < steps; s++)
		for (uint32_t j = 0; j < k; j++)
			pos[j] = mem[pos[j]];
	t0 = bench_cpu_ns() - t0;
	for (uint32_t j = 0; j < k; j++)
		acc += pos[j];
	sink = acc;
	free(order);
	free(mem);
	return (double)t0 / (double)(steps * k);
}

/* The table's 100,000-flow rows against 1 flow, the engine's and the floor's
 * (which looks nothing up: what per-flow state alone costs), and memory. */
static void flat_summary(const double one[2][3], const double many[2][3])
{
	static const uint32_t ks[] = { 1, 4, 16, 32 };
	double ns[4];

	for (int i = 0; i < 4; i++)
		ns[i] = mem_line_ns(19u << 20, ks[i]);
	for (int w = 0; w < 2; w++)
		printf("100,000 flows / 1 flow, %-8s in order %.2fx, out of order %.2fx, 1-pkt groups %.2fx\n",
		       w ? "seq ring:" : "engine:", many[w][0] / one[w][0], many[w][1] / one[w][1],
		       many[w][2] / one[w][2]);
	printf("memory, same run: a random line of 19 MiB %.0f ns alone, %.1f / %.1f / %.1f ns each "
	       "with 4 / 16 / 32 in flight\n", ns[0], ns[1], ns[2], ns[3]);
}

int wps_reorder_bench(int rounds)
{
	static const uint32_t nflows[] = { 1, 1000, 100000 };
	struct in *v = calloc(PKTS + 200000 * GLEN, sizeof(*v));
	double one[2][3] = { { 0 } }, many[2][3] = { { 0 } };
	int rc = 0;

	perm = calloc(100000, sizeof(*perm));
	if (!v || !perm) {
		fprintf(stderr, "wps_reorder_bench: out of memory\n");
		return 1;
	}
	printf("WPS egress reorder engine, ns/packet (median of %d, minimum in brackets; groups of %d packets,\n"
	       "1-pkt groups: of 1, the flow changing at every packet)\n", rounds, GLEN);
	printf("%-8s %-13s %16s %16s %7s\n", "flows", "arrival", "engine", "seq ring", "ratio");
	for (size_t fi = 0; fi < sizeof(nflows) / sizeof(nflows[0]); fi++) {
		uint32_t flows = nflows[fi];

		for (int mode = 0; mode < 3; mode++) {
			static const char *const arrival[] = { "in order", "out of order", "1-pkt groups" };
			int ooo = mode == 1;
			uint32_t glen = mode == 2 ? 1 : GLEN;
			struct wps_reorder_cfg c;
			struct wps_reorder *e;
			struct ring *rings = huge_zalloc((size_t)flows * sizeof(struct ring));
			uint32_t *seq = calloc(flows, sizeof(*seq));
			double te[99], tr[99];
			uint64_t now = 1;
			uint16_t g = 100;
			size_t n;

			wps_reorder_cfg_defaults(&c);
			c.max_flows = 131072;
			c.total_buffer = 1u << 20;
			c.new_flows_per_sec = 0;
			c.new_flows_total_per_sec = 0;
			c.start_hold = false;	/* flows exist before timing anyway */
			c.release_timeout_ns = 1ull << 62;	/* no timer in the way */
			c.idle_ns = 1ull << 62;
			e = wps_reorder_new(&c);
			if (!e || !rings || !seq) {
				fprintf(stderr, "wps_reorder_bench: cannot set up %u flows\n", flows);
				rc = 1;
				wps_reorder_free(e);
				free(rings);
				free(seq);
				continue;
			}
			/* Warm-up: creates the flow states and fills the ring floor's state. */
			shuffle(flows, 0x9e3779b97f4a7c15ull);
			n = make_stream(v, flows, g, 0, glen, seq);
			run_engine(e, v, n, &now);
			run_ring(rings, flows, v, n);
			g = (uint16_t)(g + n / flows / glen);
			shuffle(flows, 0x2545f4914f6cdd1dull);
			for (int r = 0; r < rounds; r++) {
				n = make_stream(v, flows, g, ooo, glen, seq);
				g = (uint16_t)(g + n / flows / glen);
				te[r] = run_engine(e, v, n, &now);
				tr[r] = run_ring(rings, flows, v, n);
			}
			{
				struct wps_total_stats t;

				wps_reorder_totals(e, &t);
				if (t.buffered || t.f.timer_expiries || t.f.late_pkts || t.flows != flows) {
					fprintf(stderr, "wps_reorder_bench: unexpected engine state (%u buffered, "
						"%u flows)\n", t.buffered, t.flows);
					rc = 1;
				}
			}
			if (flows == 1 || flows == 100000) {
				double(*to)[3] = flows == 1 ? one : many;

				to[0][mode] = bench_median(te, rounds);
				to[1][mode] = bench_median(tr, rounds);
			}
			printf("%-8u %-13s %8.1f (%5.1f) %8.1f (%5.1f) %6.2fx\n", flows,
			       arrival[mode], bench_median(te, rounds), bench_min(te, rounds),
			       bench_median(tr, rounds), bench_min(tr, rounds),
			       bench_median(te, rounds) / bench_median(tr, rounds));
			wps_reorder_free(e);
			free(rings);
			free(seq);
		}
	}
	flat_summary(one, many);
	free(v);
	free(perm);
	return rc;
}
