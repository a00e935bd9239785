// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target for the WPS egress reorder engine (user/wps/reorder.c).
 *
 * The input picks a configuration (small bounds so they are hit) and then a
 * stream of operations: packet arrivals for a few flows of two ingress nodes
 * with Group IDs near or far from the flow's progress, timer ticks, time
 * steps. A model kept here, not the engine, checks after every call:
 *   - every handle leaves at most once, and only after it came in; after the
 *     final flush every handle has left exactly once;
 *   - per flow, handles leave in (Group ID, arrival) order unless the engine
 *     says the packet is late, suspect or without state: a timer or a bound
 *     may skip a gap but never sends a group before one already sent;
 *   - an action about the arriving packet (cut-through, late, suspect, no
 *     state) is about that packet;
 *   - memory: packets waiting per flow <= flow bound, in total <= total
 *     bound, and the engine's occupancy equals the model's;
 *   - after a tick nothing is overdue (the next deadline is in the future).
 *
 * libFuzzer:  make fuzz-wps  (build/fuzz/fuzz_wps_reorder, clang -fsanitize=fuzzer)
 * make test:  tests/unit/test_wps_reorder_fuzz.c runs it on seeded random inputs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reorder.h"
#include "wps_opt.h"

#define FZ_FLOWS 8	/* 2 ingress nodes x 4 flows */
#define FZ_MAX_OPS 4096

#define CHECK(cond, ...)								\
	do {										\
		if (!(cond)) {								\
			fprintf(stderr, "fuzz_wps_reorder: " __VA_ARGS__);		\
			fputc('\n', stderr);						\
			abort();							\
		}									\
	} while (0)

struct fz_pkt {
	uint8_t flow;		/* model flow index */
	uint16_t gid;
	uint32_t seq;		/* arrival index within (flow, gid) run */
	uint8_t state;		/* 0 not in, 1 waiting, 2 out */
};

struct fz_flow {
	uint16_t base;		/* the sender's current group */
	uint32_t seq;		/* arrivals so far */
	int has_last;
	uint16_t last_gid;
	uint32_t last_seq;
	uint64_t last_rx;
	int seen;
	uint32_t waiting;
};

struct fz {
	struct fz_pkt pkt[FZ_MAX_OPS];
	struct fz_flow fl[FZ_FLOWS];
	uint32_t waiting;
	struct wps_reorder_cfg cfg;
};

/* Serial distance, written here rather than taken from the code under test. */
static int fz_serial(uint16_t a, uint16_t b)
{
	int d = (int)a - (int)b;

	if (d > 32767)
		d -= 65536;
	if (d < -32768)
		d += 65536;
	return d;
}

static void fz_outputs(struct fz *z, struct wps_reorder *e, uint32_t n, int64_t current)
{
	const struct wps_out *o = wps_reorder_out(e);

	for (uint32_t i = 0; i < n; i++) {
		uint64_t h = o[i].handle;
		struct fz_pkt *p;
		struct fz_flow *f;

		CHECK(h < FZ_MAX_OPS && z->pkt[h].state == 1,
		      "handle %llu left but is not waiting (state %d)", (unsigned long long)h,
		      h < FZ_MAX_OPS ? z->pkt[h].state : -1);
		p = &z->pkt[h];
		f = &z->fl[p->flow];
#ifdef FZ_TRACE
		fprintf(stderr, "  out h%llu flow %u gid %u #%u %s\n", (unsigned long long)h, p->flow, p->gid, p->seq,
			wps_action_name(o[i].action));
#endif
		p->state = 2;
		f->waiting--;
		z->waiting--;
		switch (o[i].action) {
		case WPS_ACT_CUT:
		case WPS_ACT_LATE:
		case WPS_ACT_SUSPECT:
		case WPS_ACT_NOSTATE:
			CHECK((int64_t)h == current, "%s for handle %llu, but packet %lld arrived",
			      wps_action_name(o[i].action), (unsigned long long)h, (long long)current);
			break;
		case WPS_ACT_INORDER:
		case WPS_ACT_TIMER:
		case WPS_ACT_BOUND:
		case WPS_ACT_IDLE:
		case WPS_ACT_RESYNC:
		case WPS_ACT_HOLD:
			CHECK((int64_t)h != current || o[i].action != WPS_ACT_IDLE,
			      "arriving packet flushed as idle");
			break;
		default:
			CHECK(0, "unknown action %u", o[i].action);
		}
		if (o[i].action == WPS_ACT_LATE || o[i].action == WPS_ACT_SUSPECT ||
		    o[i].action == WPS_ACT_NOSTATE)
			continue;
		if (f->has_last) {
			int d = fz_serial(p->gid, f->last_gid);

			CHECK(d > 0 || (d == 0 && p->seq > f->last_seq),
			      "flow %u: group %u #%u (%s) left after group %u #%u", p->flow, p->gid,
			      p->seq, wps_action_name(o[i].action), f->last_gid, f->last_seq);
		}
		f->has_last = 1;
		f->last_gid = p->gid;
		f->last_seq = p->seq;
	}
}

static void fz_bounds(struct fz *z, struct wps_reorder *e)
{
	struct wps_total_stats t;

	wps_reorder_totals(e, &t);
	CHECK(t.buffered == z->waiting, "engine buffers %u, model counts %u", t.buffered, z->waiting);
	CHECK(z->waiting <= z->cfg.total_buffer, "%u waiting > total bound %u", z->waiting,
	      z->cfg.total_buffer);
	CHECK(t.flows <= z->cfg.max_flows, "%u flows > %u", t.flows, z->cfg.max_flows);
	for (int i = 0; i < FZ_FLOWS; i++)
		CHECK(z->fl[i].waiting <= z->cfg.flow_buffer, "flow %d: %u waiting > flow bound %u", i,
		      z->fl[i].waiting, z->cfg.flow_buffer);
}

int wps_reorder_fuzz_one(const uint8_t *data, size_t size)
{
	static struct fz z;
	struct wps_reorder *e;
	uint64_t now = 1000;
	size_t pos = 8;
	uint32_t nin = 0;

	if (size < 8)
		return 0;
	memset(&z, 0, sizeof(z));
	wps_reorder_cfg_defaults(&z.cfg);
	z.cfg.flow_buffer = 1 + data[0] % 12;
	z.cfg.total_buffer = 1 + data[1] % 24;
	z.cfg.max_flows = 1 + data[2] % FZ_FLOWS;
	z.cfg.release_timeout_ns = (data[3] & 1) ? 0 : 1000ull * (1 + data[3] % 50);
	z.cfg.timeout_min_ns = 1000;
	z.cfg.timeout_max_ns = 200000;
	z.cfg.timeout_init_ns = 20000;
	z.cfg.skew_mult = 1 + data[4] % 4;
	z.cfg.idle_ns = 100000ull * (1 + data[4] / 16);
	z.cfg.new_flows_per_sec = (data[5] & 1) ? 0 : 1000u * (1 + data[5] % 100);
	z.cfg.new_flows_burst = 1 + data[5] % 3;
	z.cfg.inflight_groups = (uint16_t)(1 + data[6] % 40);
	z.cfg.suspect_resync = (uint16_t)(1 + data[7] % 6);
	z.cfg.start_hold = data[7] & 0x80;
	e = wps_reorder_new(&z.cfg);
	CHECK(e, "valid configuration refused");
	for (int i = 0; i < FZ_FLOWS; i++)
		z.fl[i].base = (uint16_t)(i * 9000 + 65530);

	for (; pos + 4 <= size && nin < FZ_MAX_OPS; pos += 4) {
		uint8_t op = data[pos], a = data[pos + 1], b = data[pos + 2], c = data[pos + 3];
		uint32_t n;

		now += (uint64_t)c * 100;
		if ((op & 3) == 3) {
			now += (uint64_t)a * 10000;
			continue;
		}
		if ((op & 3) == 2) {
#ifdef FZ_TRACE
			fprintf(stderr, "tick t %llu\n", (unsigned long long)now);
#endif
			n = wps_reorder_tick(e, now);
			fz_outputs(&z, e, n, -1);
			fz_bounds(&z, e);
			CHECK(wps_reorder_next_deadline(e) > now, "a deadline is overdue after tick");
			continue;
		}
		{
			uint8_t fi = (op >> 2) & (FZ_FLOWS - 1);
			struct fz_flow *f = &z.fl[fi];
			struct wps_pkt p = {
				.ingress_node = (uint16_t)(1 + fi / 4),
				.flow_id = (uint16_t)(fi % 4),
				.flags = op & 0xc0,	/* S and E at random; E ends the group below */
			};
			uint32_t h = nin++;

			if ((a & 0xc0) == 0xc0)		/* far: forged or stale */
				p.group_id = (uint16_t)((b << 8) | a);
			else				/* near the sender's progress, mostly ahead */
				p.group_id = (uint16_t)(f->base + (int)(a & 0x0f) - 3);
			if (p.group_id == f->base && (p.flags & WPS_FLAG_E))
				f->base++;
			/* A flow silent for the idle period may have been forgotten: start over. */
			if (f->seen && now - f->last_rx >= z.cfg.idle_ns)
				f->has_last = 0;
			f->seen = 1;
			f->last_rx = now;
			z.pkt[h] = (struct fz_pkt){ .flow = fi, .gid = p.group_id, .seq = f->seq++, .state = 1 };
			f->waiting++;
			z.waiting++;
#ifdef FZ_TRACE
			fprintf(stderr, "rx h%u flow %u gid %u flags %x t %llu\n", h, fi, p.group_id, p.flags,
				(unsigned long long)now);
#endif
			n = wps_reorder_rx(e, &p, h, now);
			fz_outputs(&z, e, n, h);
			fz_bounds(&z, e);
		}
	}
	fz_outputs(&z, e, wps_reorder_flush(e), -1);
	CHECK(z.waiting == 0, "%u packets never left", z.waiting);
	for (uint32_t h = 0; h < nin; h++)
		CHECK(z.pkt[h].state == 2, "packet %u never left", h);
	wps_reorder_free(e);
	return 0;
}

#ifdef WPS_FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return wps_reorder_fuzz_one(data, size);
}
#endif
