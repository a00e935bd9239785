// SPDX-License-Identifier: BSD-2-Clause
/*
 * ns/packet of the UB2E conversion programs beside two floors, all timed with
 * BPF_PROG_RUN in the same process, interleaved round by round.
 *
 *   floor (a)  bench/floor_fwd.bpf.c: xdp_fwd-style forwarder (FIB + redirect),
 *              IPv4 and, for the IPv6 conversions, IPv6
 *   floor (b)  bench/floor_tx.bpf.c: parse Eth/IPv4/UDP, swap MACs, XDP_TX
 *
 * All run on the switch namespace's devices (ingress_ifindex = sw-ub or sw-ip),
 * so bpf_fib_lookup answers from the switch's routes and neighbours.
 *
 * The packet is not reset between repetitions of a non-live BPF_PROG_RUN, so
 * every program runs behind bench/testrun_reset.bpf.c, which restores the
 * frame and tail-calls it; the harness's own cost (tail call to a program
 * that only returns) is measured in the same rounds and subtracted. Before
 * any timing each program runs once on its own and its verdict and output
 * frame are checked; after each timed run the verdict, the output frame and
 * (for the converters) the tx counter show that every repetition took the
 * full path. Any deviation stops the bench.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bench.h"
#include "testrun_reset.h"
#include "ub2e_maps.h"	/* first: the skeleton's .data.cfg is a struct ub2e_cfg */
#include "ub2e.skel.h"
#include "ub2e_cfg.h"
#include "ub2e_tables.h"
#include "ub2e_stats.h"
#include "ubpkt.h"

#define FRAME_MAX	512
#define PAYLOAD_LEN	64	/* frames of 130-170 bytes; these programs never read the payload */
/* The switch's speed targets, per direction and IP version: time within 1.25x
 * the floor (a), live-frames rate at least 0.85x the floor's. */
#define TARGET_TIME	1.25
#define TARGET_RATE	0.85
#define STR(x)		#x
#define XSTR(x)		STR(x)

enum role {
	CONVERT,	/* a UB2E conversion program */
	FLOOR_A,	/* floor_fwd */
	FLOOR_B,	/* floor_tx */
	HARNESS,	/* testrun_null behind the harness: what the harness costs */
	EMPTY,		/* testrun_null alone: what BPF_PROG_RUN's loop costs */
};

struct bprog {
	const char *name;
	enum role role;
	int ipv;		/* IP version of its frame */
	bool bare;		/* run directly, not behind the reset harness */
	int fd;			/* program under test */
	int ifindex;		/* ingress */
	uint8_t frame[FRAME_MAX];
	uint32_t len;
	uint32_t verdict;	/* expected XDP action */
	int counter;		/* ub2e_stats counter that each full run bumps, or -1 */
	int stats_fd;		/* the ub2e_stats of its object (the baseline has its own) */
	/* what one run on its own produced; every timed run must end with the same */
	uint8_t out[FRAME_MAX + 64];
	uint32_t out_len;
	double ns[100];		/* per round, as BPF_PROG_RUN reported (harness included) */
	double net[100];	/* per round, harness subtracted */
};

struct topo {
	uint8_t ubpu_mac[6], sw_ub_mac[6], sw_ip_mac[6], iphost_mac[6];
	uint8_t ubpu4[16], iphost4[16], ubpu6[16], iphost6[16];
};

static int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bench: FAILED: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return 1;
}

static const char *xdp_name(uint32_t a)
{
	static const char *const n[] = { "XDP_ABORTED", "XDP_DROP", "XDP_PASS", "XDP_TX", "XDP_REDIRECT" };

	return a < 5 ? n[a] : "XDP_?";
}

/* ---- topology from the environment (tests/lib/topo.env) ------------------ */

static int env_mac(const char *key, uint8_t *mac)
{
	const char *s = getenv(key);

	if (!s || sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx",
			 &mac[0], &mac[1], &mac[2], &mac[3], &mac[4], &mac[5]) != 6)
		return fail("environment %s: want a MAC address (export tests/lib/topo.env)", key);
	return 0;
}

static int env_ip(const char *key, int af, uint8_t *ip)
{
	const char *s = getenv(key);

	memset(ip, 0, 16);
	if (!s || inet_pton(af, s, ip) != 1)
		return fail("environment %s: want an IPv%c address (export tests/lib/topo.env)",
			    key, af == AF_INET ? '4' : '6');
	return 0;
}

static int topo_from_env(struct topo *t)
{
	return env_mac("UBPU_MAC", t->ubpu_mac) || env_mac("SW_UB_MAC", t->sw_ub_mac) ||
	       env_mac("SW_IP_MAC", t->sw_ip_mac) || env_mac("IPHOST_MAC", t->iphost_mac) ||
	       env_ip("UBPU_IP4", AF_INET, t->ubpu4) || env_ip("IPHOST_IP4", AF_INET, t->iphost4) ||
	       env_ip("UBPU_IP6", AF_INET6, t->ubpu6) || env_ip("IPHOST_IP6", AF_INET6, t->iphost6);
}

/* ---- frames ----------------------------------------------------------------- */

/*
 * UBPU -> IP host, arriving on the UB port. Native UB is what ub2e_to_uboe gets;
 * the floors get the same packet as plain Eth/IP/UDP (UBoE is IP/UDP like any
 * other), so that the FIB lookup gets the same keys as the conversion's.
 */
static int frame_from_ubpu(struct bprog *p, const struct topo *t, int ipv, bool native)
{
	struct ub_pkt_spec s;

	ub_pkt_spec_init(&s);
	memcpy(s.dst_mac, t->sw_ub_mac, 6);
	memcpy(s.src_mac, t->ubpu_mac, 6);
	s.ip_ver = (uint8_t)ipv;
	memcpy(s.src_ip, ipv == 4 ? t->ubpu4 : t->ubpu6, 16);
	memcpy(s.dst_ip, ipv == 4 ? t->iphost4 : t->iphost6, 16);
	s.payload_len = PAYLOAD_LEN;
	p->len = (uint32_t)(native ? ub_build_native(&s, p->frame, sizeof(p->frame))
				   : ub_build_uboe(&s, p->frame, sizeof(p->frame)));
	return p->len ? 0 : fail("%s: building the frame failed", p->name);
}

/*
 * UBoE from the IP host to the UBPU on VLAN 1: what ub2e_to_ub gets on the IP
 * port, and the reverse of what ub2e_to_uboe sends (partition 1 -> VLAN 1).
 */
static int frame_uboe_to_ubpu(struct bprog *p, const struct topo *t, int ipv)
{
	struct ub_pkt_spec s;

	ub_pkt_spec_init(&s);
	memcpy(s.dst_mac, t->sw_ip_mac, 6);
	memcpy(s.src_mac, t->iphost_mac, 6);
	s.vlan = 1;
	s.ip_ver = (uint8_t)ipv;
	memcpy(s.src_ip, ipv == 4 ? t->iphost4 : t->iphost6, 16);
	memcpy(s.dst_ip, ipv == 4 ? t->ubpu4 : t->ubpu6, 16);
	s.payload_len = PAYLOAD_LEN;
	p->len = (uint32_t)ub_build_uboe(&s, p->frame, sizeof(p->frame));
	return p->len ? 0 : fail("%s: ub_build_uboe failed", p->name);
}

/* ---- BPF_PROG_RUN --------------------------------------------------------- */

struct run {
	uint32_t retval;
	uint32_t duration;	/* kernel's average per repetition, whole ns */
	uint8_t out[FRAME_MAX + 64];
	uint32_t out_len;
};

/*
 * The time is the kernel's: it leaves out the time the task was scheduled
 * away, which the wall clock would count on a busy two-core machine.
 */
static int test_run(int fd, const struct bprog *p, int repeat, struct run *r)
{
	struct xdp_md md = {
		.data = 0, .data_meta = 0, .data_end = p->len,
		.ingress_ifindex = (uint32_t)p->ifindex, .rx_queue_index = 0,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = p->frame, .data_size_in = p->len,
		.data_out = r->out, .data_size_out = sizeof(r->out),
		.ctx_in = &md, .ctx_size_in = sizeof(md),
		.repeat = repeat);

	if (bpf_prog_test_run_opts(fd, &opts))
		return fail("%s: BPF_PROG_RUN: %s", p->name, strerror(errno));
	r->retval = opts.retval;
	r->duration = opts.duration;
	r->out_len = opts.data_size_out;
	return 0;
}

static int counter_sum(int map_fd, int id, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t v[ncpu > 0 ? ncpu : 1];
	uint32_t key = (uint32_t)id;

	if (ncpu <= 0)
		return fail("cannot count possible CPUs");
	if (bpf_map_lookup_elem(map_fd, &key, v))
		return fail("ub2e_stats lookup: %s", strerror(errno));
	*sum = 0;
	for (int i = 0; i < ncpu; i++)
		*sum += v[i];
	return 0;
}

/* After a wrong verdict: every counter of ub2e_stats that is not zero, so the punt reason shows. */
static void dump_counters(int map_fd)
{
	__u64 v[UB2E_CNT__MAX];

	fprintf(stderr, "bench: ub2e_stats since load:");
	if (!ub2e_counters_read(map_fd, v))
		for (unsigned id = 0; id < UB2E_CNT__MAX; id++)
			if (v[id])
				fprintf(stderr, " %s=%llu", ub2e_counter_name(id), (unsigned long long)v[id]);
	fprintf(stderr, "\n");
}

/* ---- output checks for the single untimed run ------------------------------ */

static int check_mac(const struct bprog *p, const char *what, const uint8_t *got, const uint8_t *want)
{
	if (memcmp(got, want, 6))
		return fail("%s: %s is %02x:%02x:%02x:%02x:%02x:%02x, want %02x:%02x:%02x:%02x:%02x:%02x",
			    p->name, what, got[0], got[1], got[2], got[3], got[4], got[5],
			    want[0], want[1], want[2], want[3], want[4], want[5]);
	return 0;
}

/* A converted frame parses as the other kind, carries a valid ICRC and went one hop. */
static int check_converted(const struct bprog *p, const struct run *r, const struct topo *t)
{
	bool to_uboe = p->counter == UB2E_CNT_TX_UBOE;
	struct ub_view v;
	enum ub_parse_err e = ub_parse_frame(r->out, r->out_len, 0, &v);

	if (e != UB_PARSE_OK)
		return fail("%s: output does not parse: %s", p->name, ub_parse_strerror(e));
	if (v.kind != (to_uboe ? UB_KIND_UBOE : UB_KIND_NATIVE) || v.ip_ver != p->ipv)
		return fail("%s: output is not %s over IPv%d", p->name,
			    to_uboe ? "UBoE" : "native UB", p->ipv);
	if (!v.icrc_ok)
		return fail("%s: output ICRC does not match", p->name);
	if (v.ttl != UBOE_DEFAULT_TTL - 1)
		return fail("%s: output TTL %u, want %u", p->name, v.ttl, UBOE_DEFAULT_TTL - 1);
	if (to_uboe) {
		if (v.vlan != 1)
			return fail("%s: output VLAN %d, want 1 (partition 1)", p->name, v.vlan);
		return check_mac(p, "destination MAC", v.dst_mac, t->iphost_mac) ||
		       check_mac(p, "source MAC", v.src_mac, t->sw_ip_mac);
	}
	if (v.pid != 1)
		return fail("%s: output partition %u, want 1 (VLAN 1)", p->name, v.pid);
	return check_mac(p, "destination MAC", v.dst_mac, t->ubpu_mac) ||
	       check_mac(p, "source MAC", v.src_mac, t->sw_ub_mac);
}

static int check_output(const struct bprog *p, const struct run *r, const struct topo *t)
{
	const uint8_t *ip = r->out + 14;

	if (r->retval != p->verdict)
		return fail("%s: verdict %s, want %s (is the switch namespace's FIB and neighbour "
			    "table set up? run through scripts/bench.sh)",
			    p->name, xdp_name(r->retval), xdp_name(p->verdict));
	switch (p->role) {
	case CONVERT:
		return check_converted(p, r, t);
	case FLOOR_A:
		if (r->out_len != p->len || memcmp(r->out + 12, p->frame + 12, 2) ||
		    (p->ipv == 4 ? ip[8] != UBOE_DEFAULT_TTL - 1 || ub_ipv4_csum(ip, 20)
				 : ip[7] != UBOE_DEFAULT_TTL - 1))
			return fail("%s: output is not the input with TTL-1 (and a valid checksum)", p->name);
		return check_mac(p, "destination MAC", r->out, t->iphost_mac) ||
		       check_mac(p, "source MAC", r->out + 6, t->sw_ip_mac);
	case FLOOR_B:
		return check_mac(p, "destination MAC", r->out, p->frame + 6) ||
		       check_mac(p, "source MAC", r->out + 6, p->frame);
	case HARNESS:
	case EMPTY:
		break;
	}
	return 0;
}

/* ---- the bench ------------------------------------------------------------- */

struct objs {
	struct ub2e *ub2e;
	struct bpf_object *fwd, *tx, *reset, *base;
	int reset_fd, null_fd, target_map, frame_map, stats_map;
};

static struct bpf_object *open_obj(const char *dir, const char *file)
{
	char path[4096];
	struct bpf_object *o;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	o = bpf_object__open_file(path, NULL);
	if (!o) {
		fail("open %s: %s (run make first)", path, strerror(errno));
		return NULL;
	}
	if (bpf_object__load(o)) {
		fail("load %s: %s", path, strerror(errno));
		bpf_object__close(o);
		return NULL;
	}
	return o;
}

static int prog_fd(struct bpf_object *o, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(o, name);

	return p ? bpf_program__fd(p) : -1;
}

static int map_fd(struct bpf_object *o, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(o, name);

	return m ? bpf_map__fd(m) : -1;
}

static int devmap_add(int fd, int ifindex)
{
	uint32_t k = (uint32_t)ifindex, v = (uint32_t)ifindex;

	if (bpf_map_update_elem(fd, &k, &v, BPF_ANY))
		return fail("devmap add ifindex %d: %s", ifindex, strerror(errno));
	return 0;
}

static int load_all(struct objs *ob, const struct xdp_bench_opts *o, int ub_if, int ip_if)
{
	struct ub2e_cfg cfg;
	uint32_t zero = 0;

	ob->ub2e = ub2e__open_and_load();
	if (!ob->ub2e)
		return fail("load the ub2e skeleton: %s", strerror(errno));
	ub2e_cfg_defaults(&cfg);
	/* As ubctl attaches it: the ports' MACs in, so the dst-MAC check runs in full. */
	if (ub2e_cfg_ports(&cfg, o->ub_if, o->ip_if))
		return fail("MACs of %s, %s: %s", o->ub_if, o->ip_if, strerror(errno));
	if (bpf_map_update_elem(bpf_map__fd(ob->ub2e->maps.data_cfg), &zero, &cfg, BPF_ANY))
		return fail("ub2e_cfg: %s", strerror(errno));
	if (devmap_add(bpf_map__fd(ob->ub2e->maps.ub2e_tx_ip), ip_if) ||
	    devmap_add(bpf_map__fd(ob->ub2e->maps.ub2e_tx_ub), ub_if))
		return 1;
	if (o->npi_entry) {
		/* What `ubctl ub2e map add 1=1` writes: partition 1 -> VLAN 1. */
		struct npimap_entry e = { .pid = 1, .perm = NPIMAP_ANY_PERM, .vlan = 1 };

		if (ub2e_tables_write(bpf_map__fd(ob->ub2e->maps.ub2e_npi2vlan),
				      bpf_map__fd(ob->ub2e->maps.ub2e_vlan2npi), &e, 1))
			return fail("ub2e_npi2vlan: %s", strerror(errno));
	}
	ob->stats_map = bpf_map__fd(ob->ub2e->maps.ub2e_stats);

	ob->fwd = open_obj(o->bpf_dir, "floor_fwd.bpf.o");
	ob->tx = open_obj(o->bpf_dir, "floor_tx.bpf.o");
	ob->reset = open_obj(o->bpf_dir, "testrun_reset.bpf.o");
	if (!ob->fwd || !ob->tx || !ob->reset)
		return 1;
	if (devmap_add(map_fd(ob->fwd, "floor_tx_ports"), ip_if))
		return 1;
	ob->reset_fd = prog_fd(ob->reset, "testrun_reset");
	ob->null_fd = prog_fd(ob->reset, "testrun_null");
	ob->target_map = map_fd(ob->reset, "reset_target");
	ob->frame_map = map_fd(ob->reset, "reset_frame");
	if (ob->reset_fd < 0 || ob->null_fd < 0 || ob->target_map < 0 || ob->frame_map < 0)
		return fail("testrun_reset.bpf.o lacks its programs or maps");
	return 0;
}

/*
 * --baseline: another build of the switch (its ub2e.linked.o), configured as
 * load_all() configures this one, so that a change is timed side by side with
 * what it changes, in the same rounds. Its configuration is the cfg map of
 * whichever layout that build has.
 */
static int load_baseline(struct objs *ob, const struct xdp_bench_opts *o, int ub_if, int ip_if)
{
	struct bpf_map *cfg_map;
	struct ub2e_cfg cfg;
	uint32_t zero = 0;

	ob->base = bpf_object__open_file(o->baseline, NULL);
	/* The harness is xdp.frags, and a tail call only reaches a program that
	 * says the same: a baseline from before the switch was frags-aware is
	 * loaded as one (it reads only the first buffer, all the bench's frames). */
	if (ob->base) {
		struct bpf_program *prog;

		bpf_object__for_each_program(prog, ob->base)
			if (bpf_program__type(prog) == BPF_PROG_TYPE_XDP)
				bpf_program__set_flags(prog, bpf_program__flags(prog) | BPF_F_XDP_HAS_FRAGS);
	}
	if (!ob->base || bpf_object__load(ob->base))
		return fail("load the baseline %s: %s", o->baseline, strerror(errno));
	cfg_map = bpf_object__find_map_by_name(ob->base, ".data.cfg");
	if (!cfg_map)
		cfg_map = bpf_object__find_map_by_name(ob->base, "ub2e_cfg");
	ub2e_cfg_defaults(&cfg);
	if (!cfg_map || ub2e_cfg_ports(&cfg, o->ub_if, o->ip_if) ||
	    bpf_map_update_elem(bpf_map__fd(cfg_map), &zero, &cfg, BPF_ANY))
		return fail("baseline configuration: %s", strerror(errno));
	if (devmap_add(map_fd(ob->base, "ub2e_tx_ip"), ip_if) ||
	    devmap_add(map_fd(ob->base, "ub2e_tx_ub"), ub_if))
		return 1;
	if (o->npi_entry) {
		struct npimap_entry e = { .pid = 1, .perm = NPIMAP_ANY_PERM, .vlan = 1 };

		if (ub2e_tables_write(map_fd(ob->base, "ub2e_npi2vlan"), map_fd(ob->base, "ub2e_vlan2npi"), &e, 1))
			return fail("baseline ub2e_npi2vlan: %s", strerror(errno));
	}
	return 0;
}

static void unload_all(struct objs *ob)
{
	bpf_object__close(ob->base);
	bpf_object__close(ob->reset);
	bpf_object__close(ob->tx);
	bpf_object__close(ob->fwd);
	ub2e__destroy(ob->ub2e);
}

/* One timed measurement of p, with the checks that every repetition did the full job. */
static int timed_run(const struct objs *ob, struct bprog *p, int repeat, struct run *r)
{
	struct reset_frame f = { .len = p->len };
	uint64_t before = 0, after = 0;
	uint32_t zero = 0;

	if (p->bare) {
		if (test_run(p->fd, p, repeat, r))
			return 1;
		if (r->retval != p->verdict)
			return fail("%s: timed run ended with %s, want %s", p->name,
				    xdp_name(r->retval), xdp_name(p->verdict));
		return 0;
	}
	memcpy(f.head, p->frame, RESET_BYTES);
	if (bpf_map_update_elem(ob->frame_map, &zero, &f, BPF_ANY) ||
	    bpf_map_update_elem(ob->target_map, &zero, &p->fd, BPF_ANY))
		return fail("%s: harness maps: %s", p->name, strerror(errno));
	if (p->counter >= 0 && counter_sum(p->stats_fd, p->counter, &before))
		return 1;
	if (test_run(ob->reset_fd, p, repeat, r))
		return 1;
	if (r->retval != p->verdict) {
		fail("%s: timed run ended with %s, want %s (a FIB or neighbour change under the "
		     "bench?)", p->name, xdp_name(r->retval), xdp_name(p->verdict));
		dump_counters(p->stats_fd);
		return 1;
	}
	if (p->role != HARNESS && (r->out_len != p->out_len || memcmp(r->out, p->out, p->out_len)))
		return fail("%s: timed run's last output differs from a single run's", p->name);
	if (p->counter >= 0) {
		if (counter_sum(p->stats_fd, p->counter, &after))
			return 1;
		if (after - before != (uint64_t)repeat) {
			fail("%s: %llu of %d repetitions converted; the harness did not "
			     "restore the frame", p->name, (unsigned long long)(after - before), repeat);
			dump_counters(p->stats_fd);
			return 1;
		}
	}
	return 0;
}

/*
 * Median over rounds of p / q, both harness subtracted, plus the bare loop's
 * cost of that round when `loop` is given. Rounds where q came out at 0 ns or
 * less (floor (b) is a few ns, measured in whole ns) are left out.
 */
static double median_ratio(const struct bprog *p, const struct bprog *q, const struct bprog *loop,
			   int rounds)
{
	double r[100];
	int n = 0;

	for (int k = 0; k < rounds; k++) {
		double add = loop ? loop->ns[k] : 0, den = q->net[k] + add;

		if (den > 0)
			r[n++] = (p->net[k] + add) / den;
	}
	return n ? bench_median(r, n) : 0.0 / 0.0;
}

/* ---- live frames ------------------------------------------------------------ */

/*
 * BPF_F_TEST_XDP_LIVE_FRAMES: every repetition really is redirected into the
 * veth peer (where bench/sink_drop.bpf.c drops it), behind the same reset
 * harness. ns per frame as the kernel reports it; 0 on error.
 */
static double live_run(const struct objs *ob, const struct bprog *p, int repeat)
{
	struct reset_frame f = { .len = p->len };
	struct xdp_md md = { .data_end = p->len, .ingress_ifindex = (uint32_t)p->ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = p->frame, .data_size_in = p->len,
		    .ctx_in = &md, .ctx_size_in = sizeof(md), .repeat = repeat,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64);
	uint64_t before = 0, after = 0;
	uint32_t zero = 0;

	memcpy(f.head, p->frame, RESET_BYTES);
	if (bpf_map_update_elem(ob->frame_map, &zero, &f, BPF_ANY) ||
	    bpf_map_update_elem(ob->target_map, &zero, &p->fd, BPF_ANY))
		return fail("%s: harness maps: %s", p->name, strerror(errno)), 0;
	if (p->counter >= 0 && counter_sum(p->stats_fd, p->counter, &before))
		return 0;
	if (bpf_prog_test_run_opts(ob->reset_fd, &opts))
		return fail("%s: live-frames BPF_PROG_RUN: %s", p->name, strerror(errno)), 0;
	if (p->counter >= 0) {
		if (counter_sum(p->stats_fd, p->counter, &after))
			return 0;
		if (after - before != (uint64_t)repeat) {
			fail("%s: live frames: %llu of %d converted", p->name,
			     (unsigned long long)(after - before), repeat);
			dump_counters(p->stats_fd);
			return 0;
		}
	}
	return opts.duration;
}

/* Floors (a) and the four conversions, live, interleaved; rates as ratios to the floor. */
static int live_bench(const struct objs *ob, struct bprog *ps, int n, const struct bprog *h,
		      const struct xdp_bench_opts *o)
{
	const int idx[] = { 4, 5, 0, 1, 2, 3, 10, 11, 12, 13 }, m = n > 10 ? 10 : 6;
	double ns[10][100];
	int repeat = o->repeat / 4 > 1 ? o->repeat / 4 : 1;

	for (int round = 0; round < o->rounds; round++)
		for (int k = 0; k < m; k++) {
			int i = (k + round) % m;

			ns[i][round] = live_run(ob, &ps[idx[i]], repeat);
			if (ns[i][round] <= 0)
				return 1;
		}
	printf("\nLive frames (BPF_F_TEST_XDP_LIVE_FRAMES, redirected into a veth whose peer drops in XDP),\n"
	       "repeat %d, %d rounds, same reset harness (%.1f ns, from the test_run rounds, subtracted):\n",
	       repeat, o->rounds, bench_median(h->ns, o->rounds));
	printf("%-24s %9s %12s %14s\n", "program", "ns/frame", "rate/floor", ">=" XSTR(TARGET_RATE) "x(a)");
	for (int i = 0; i < m; i++) {
		const struct bprog *p = &ps[idx[i]];
		int fi = p->ipv == 6 ? 1 : 0, ok = 0;
		double r[100], hn = bench_median(h->ns, o->rounds);
		char verdict[32] = "-";

		for (int k = 0; k < o->rounds; k++)
			r[k] = (ns[fi][k] - hn) / (ns[i][k] - hn);
		if (p->role == CONVERT) {
			for (int k = 0; k < o->rounds; k++)
				ok += r[k] >= TARGET_RATE;
			snprintf(verdict, sizeof(verdict), "%s %d/%d",
				 bench_median(r, o->rounds) >= TARGET_RATE ? "PASS" : "FAIL", ok, o->rounds);
		}
		printf("%-24s %9.1f %12.2f %14s\n", p->name, bench_median(ns[i], o->rounds) - hn,
		       bench_median(r, o->rounds), verdict);
	}
	return 0;
}

/* ---- NPI table size and spread ------------------------------------------------ */

/* npi2vlan with PIDs 1..n (VLAN 1 + pid % 4094), as bpftool or ubctl would leave it. */
static int npi_fill(int fd, uint32_t n)
{
	for (uint32_t hi = 0; hi < UB2E_NPI_BLOCKS; hi++)
		bpf_map_delete_elem(fd, &hi);
	for (uint32_t pid = 1; pid <= n; pid++) {
		struct ub2e_npi_vlans v = { .any = (uint16_t)(1 + pid % 4094) };

		int rc = ub2e_npi_put(fd, pid, &v);

		if (rc)
			return fail("npi2vlan entry %u: %s", pid, strerror(-rc));
	}
	return 0;
}

static int npi_bench(const struct objs *ob, struct bprog *ps, const struct bprog *h,
		     const struct xdp_bench_opts *o)
{
	const uint32_t sizes[] = { 1, 100, UB2E_MAX_NPI_ENTRIES };
	int spread_fd = prog_fd(ob->reset, "testrun_reset_spread");
	int spread_map = map_fd(ob->reset, "reset_spread");
	int npi = bpf_map__fd(ob->ub2e->maps.ub2e_npi2vlan);
	struct bprog one = ps[0], *fa = &ps[4];
	int repeat = o->repeat / 2 > 1 ? o->repeat / 2 : 1;
	uint32_t zero = 0;
	struct run r;

	if (spread_fd < 0 || spread_map < 0)
		return fail("testrun_reset.bpf.o lacks testrun_reset_spread");
	/* One PID (1, in every table), then the table's PIDs in turn. */
	one.frame[21] = 0, one.frame[22] = 0, one.frame[23] = 1;
	printf("\nNPI table size, ub2e_to_uboe IPv4 (test_run, harness subtracted, median of %d rounds):\n",
	       o->rounds);
	printf("%-34s %9s %10s\n", "NPI table", "ns/packet", "/floor(a)");
	for (size_t t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
		for (int spread = 0; spread < 2; spread++) {
			struct reset_spread sp = { .off = 21, .n = sizes[t] };
			double ns[100], ratio[100];
			uint64_t before, after;

			if (spread && sizes[t] == 1)
				continue;
			if (npi_fill(npi, sizes[t]))
				return 1;
			for (int k = 0; k < o->rounds; k++) {
				struct reset_frame f = { .len = one.len };

				memcpy(f.head, one.frame, RESET_BYTES);
				if (timed_run(ob, fa, repeat, &r))
					return 1;
				double fa_ns = r.duration;

				if (bpf_map_update_elem(ob->frame_map, &zero, &f, BPF_ANY) ||
				    bpf_map_update_elem(ob->target_map, &zero, &one.fd, BPF_ANY) ||
				    bpf_map_update_elem(spread_map, &zero, &sp, BPF_ANY) ||
				    counter_sum(ob->stats_map, UB2E_CNT_TX_UBOE, &before) ||
				    test_run(spread ? spread_fd : ob->reset_fd, &one, repeat, &r) ||
				    counter_sum(ob->stats_map, UB2E_CNT_TX_UBOE, &after))
					return fail("NPI bench run: %s", strerror(errno));
				if (r.retval != XDP_REDIRECT || after - before != (uint64_t)repeat) {
					dump_counters(ob->stats_map);
					return fail("NPI bench: %llu of %d converted (verdict %s)",
						    (unsigned long long)(after - before), repeat,
						    xdp_name(r.retval));
				}
				ns[k] = r.duration - bench_median(h->ns, o->rounds);
				ratio[k] = ns[k] / (fa_ns - bench_median(h->ns, o->rounds));
			}
			char what[64];

			snprintf(what, sizeof(what), "%u entr%s, %s", sizes[t], sizes[t] == 1 ? "y" : "ies",
				 spread ? "every PID in turn" : "one PID");
			printf("%-34s %9.1f %10.2f\n", what, bench_median(ns, o->rounds),
			       bench_median(ratio, o->rounds));
		}
	}
	return npi_fill(npi, 0);
}

/* The floor (a) a program is compared with: the one of its IP version. */
static const struct bprog *floor_a_for(const struct bprog *p, const struct bprog *fa4,
				       const struct bprog *fa6)
{
	return p->ipv == 6 ? fa6 : fa4;
}

int xdp_bench(const struct xdp_bench_opts *o)
{
	struct objs ob = { 0 };
	struct topo t;
	struct run r;
	int ub_if, ip_if, rc = 1, cpu;
	cpu_set_t set;
	struct bprog ps[] = {
		{ .name = "ub2e_to_uboe IPv4", .role = CONVERT, .ipv = 4, .verdict = XDP_REDIRECT,
		  .counter = UB2E_CNT_TX_UBOE },
		{ .name = "ub2e_to_uboe IPv6", .role = CONVERT, .ipv = 6, .verdict = XDP_REDIRECT,
		  .counter = UB2E_CNT_TX_UBOE },
		{ .name = "ub2e_to_ub IPv4", .role = CONVERT, .ipv = 4, .verdict = XDP_REDIRECT,
		  .counter = UB2E_CNT_TX_UB },
		{ .name = "ub2e_to_ub IPv6", .role = CONVERT, .ipv = 6, .verdict = XDP_REDIRECT,
		  .counter = UB2E_CNT_TX_UB },
		{ .name = "floor (a) fwd IPv4", .role = FLOOR_A, .ipv = 4, .verdict = XDP_REDIRECT,
		  .counter = -1 },
		{ .name = "floor (a) fwd IPv6", .role = FLOOR_A, .ipv = 6, .verdict = XDP_REDIRECT,
		  .counter = -1 },
		{ .name = "floor (b) swap+XDP_TX", .role = FLOOR_B, .ipv = 4, .verdict = XDP_TX,
		  .counter = -1 },
		{ .name = "harness", .role = HARNESS, .ipv = 4, .verdict = XDP_PASS, .counter = -1 },
		{ .name = "empty program, bare", .role = EMPTY, .ipv = 4, .bare = true,
		  .verdict = XDP_PASS, .counter = -1 },
		{ .name = "floor (b), bare", .role = FLOOR_B, .ipv = 4, .bare = true,
		  .verdict = XDP_TX, .counter = -1 },
		/* --baseline only: the first four in the other build (copied from them below) */
		{ .name = "  baseline to_uboe IPv4" }, { .name = "  baseline to_uboe IPv6" },
		{ .name = "  baseline to_ub IPv4" }, { .name = "  baseline to_ub IPv6" },
	};
	const int n = (int)(sizeof(ps) / sizeof(ps[0])) - (o->baseline ? 0 : 4);
	struct bprog *fa4 = &ps[4], *fa6 = &ps[5], *fb = &ps[6], *h = &ps[7];
	struct bprog *empty = &ps[8], *fb_bare = &ps[9];
	double bare_b[100];

	if (topo_from_env(&t))
		return 1;
	ub_if = (int)if_nametoindex(o->ub_if);
	ip_if = (int)if_nametoindex(o->ip_if);
	if (!ub_if || !ip_if)
		return fail("no device %s or %s in this network namespace (run through scripts/bench.sh)",
			    o->ub_if, o->ip_if);

	/* One core for every measurement, so that they compare. */
	cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "bench: cannot pin to cpu %d: %s\n", cpu, strerror(errno));

	libbpf_set_print(NULL);
	if (load_all(&ob, o, ub_if, ip_if) || (o->baseline && load_baseline(&ob, o, ub_if, ip_if)))
		goto out;
	for (int i = 0; i < 10; i++)
		ps[i].stats_fd = ob.stats_map;
	ps[0].fd = ps[1].fd = bpf_program__fd(ob.ub2e->progs.ub2e_to_uboe);
	ps[2].fd = ps[3].fd = bpf_program__fd(ob.ub2e->progs.ub2e_to_ub);
	fa4->fd = fa6->fd = prog_fd(ob.fwd, "floor_fwd");
	fb->fd = fb_bare->fd = prog_fd(ob.tx, "floor_tx");
	h->fd = empty->fd = ob.null_fd;
	for (int i = 0; i < n; i++)
		ps[i].ifindex = ub_if;
	ps[2].ifindex = ps[3].ifindex = ip_if;
	if (frame_from_ubpu(&ps[0], &t, 4, true) || frame_from_ubpu(&ps[1], &t, 6, true) ||
	    frame_uboe_to_ubpu(&ps[2], &t, 4) || frame_uboe_to_ubpu(&ps[3], &t, 6))
		goto out;
	for (int i = 4; i < n && i < 10; i++)
		if (frame_from_ubpu(&ps[i], &t, ps[i].ipv, false))
			goto out;
	for (int i = 10; i < n; i++) {
		const char *name = ps[i].name;

		ps[i] = ps[i - 10];
		ps[i].name = name;
		ps[i].fd = prog_fd(ob.base, i < 12 ? "ub2e_to_uboe" : "ub2e_to_ub");
		ps[i].stats_fd = map_fd(ob.base, "ub2e_stats");
	}

	/* Each program once on its own: right verdict, right frame, or no numbers. */
	for (int i = 0; i < n; i++) {
		struct bprog *p = &ps[i];

		if (p->fd < 0) {
			fail("%s: program not found", p->name);
			goto out;
		}
		if (p->len < RESET_BYTES) {
			fail("%s: frame shorter than the harness restores", p->name);
			goto out;
		}
		if (test_run(p->fd, p, 1, &r))
			goto out;
		if (check_output(p, &r, &t)) {
			if (p->role == CONVERT)
				dump_counters(p->stats_fd);
			goto out;
		}
		memcpy(p->out, r.out, r.out_len);
		p->out_len = r.out_len;
	}

	/* Why the harness: a bare repeated run converts once, then sees its own output. */
	{
		uint64_t before, after;
		const int k = 1000;

		if (counter_sum(ob.stats_map, UB2E_CNT_TX_UBOE, &before) ||
		    test_run(ps[0].fd, &ps[0], k, &r) ||
		    counter_sum(ob.stats_map, UB2E_CNT_TX_UBOE, &after))
			goto out;
		printf("note: BPF_PROG_RUN repeats on one buffer and never resets it: bare, ub2e_to_uboe "
		       "converted %llu of %d repetitions (last verdict %s).\n"
		       "      So every program runs behind bench/testrun_reset.bpf.c (restore frame, "
		       "tail call); its cost is measured and subtracted.\n",
		       (unsigned long long)(after - before), k, xdp_name(r.retval));
	}

	printf("BPF_PROG_RUN repeat %d, %d rounds interleaved, cpu %d, ingress %s (%d) / %s (%d), "
	       "NPI table %s\n", o->repeat, o->rounds, cpu, o->ub_if, ub_if, o->ip_if, ip_if,
	       o->npi_entry ? "{pid 1 high -> VLAN 1}" : "empty (cfg defaults)");

	for (int round = 0; round < o->rounds; round++) {
		/* Rotate the order so no program always runs first or after the same one. */
		for (int k = 0; k < n; k++) {
			struct bprog *p = &ps[(k + round) % n];

			if (timed_run(&ob, p, o->repeat, &r))
				goto out;
			p->ns[round] = r.duration;
		}
		for (int i = 0; i < n; i++)
			ps[i].net[round] = ps[i].ns[round] - h->ns[round];
	}

	/*
	 * Left: the program alone, "behind the harness" minus "harness alone" in
	 * the same round; median and min over rounds. Right: the same
	 * plus BPF_PROG_RUN's own loop (the empty program, bare), i.e. what
	 * BPF_PROG_RUN would report if it gave every repetition a fresh frame.
	 * Ratios are taken within each round, then the median over rounds, so
	 * that a machine that speeds up or slows down between rounds cancels out.
	 */
	printf("\n%-24s %-55s %s\n", "", "ns/packet, program alone", "+ BPF_PROG_RUN loop");
	printf("%-24s %7s %6s %10s %10s %12s   %6s %10s %10s\n", "program", "median", "min",
	       "/floor(a)", "/floor(b)", "<=" XSTR(TARGET_TIME) "x(a)", "ns", "/floor(a)", "/floor(b)");
	for (int i = 0; i < n; i++) {
		const struct bprog *p = &ps[i];

		if (i >= 7 && i < 10)
			continue;
		const struct bprog *fa = floor_a_for(p, fa4, fa6);
		double med = bench_median(p->net, o->rounds);
		double mn = bench_min(p->net, o->rounds);
		double ra = median_ratio(p, fa, NULL, o->rounds);
		char verdict[32] = "-";

		if (p->role == CONVERT) {
			int ok = 0;

			for (int k = 0; k < o->rounds; k++)
				ok += p->net[k] <= TARGET_TIME * fa->net[k];
			snprintf(verdict, sizeof(verdict), "%s %d/%d", ra <= TARGET_TIME ? "PASS" : "FAIL",
				 ok, o->rounds);
		}
		printf("%-24s %7.1f %6.1f %10.2f %10.2f %12s   %6.1f %10.2f %10.2f\n", p->name, med, mn,
		       ra, median_ratio(p, fb, NULL, o->rounds), verdict,
		       med + bench_median(empty->ns, o->rounds), median_ratio(p, fa, empty, o->rounds),
		       median_ratio(p, fb, empty, o->rounds));
	}
	printf("/floor(a): against the floor (a) of the same IP version; PASS/FAIL on the median "
	       "ratio, k/n = rounds within " XSTR(TARGET_TIME) "x.\n"
	       "Against the IPv4 floor (a), program alone: ub2e_to_uboe IPv6 %.2f, ub2e_to_ub IPv6 %.2f\n",
	       median_ratio(&ps[1], fa4, NULL, o->rounds), median_ratio(&ps[3], fa4, NULL, o->rounds));
	if (n > 10)
		printf("This build / the baseline, program alone, median of the per-round ratios: "
		       "to_uboe IPv4 %.2f, IPv6 %.2f; to_ub IPv4 %.2f, IPv6 %.2f\n",
		       median_ratio(&ps[0], &ps[10], NULL, o->rounds), median_ratio(&ps[1], &ps[11], NULL, o->rounds),
		       median_ratio(&ps[2], &ps[12], NULL, o->rounds), median_ratio(&ps[3], &ps[13], NULL, o->rounds));
	printf("harness (restore + tail call + return): median %.1f ns, subtracted; "
	       "BPF_PROG_RUN loop (empty program, bare): median %.1f ns\n",
	       bench_median(h->ns, o->rounds), bench_median(empty->ns, o->rounds));
	for (int k = 0; k < o->rounds; k++)
		bare_b[k] = fb->net[k] + empty->ns[k];
	printf("check: floor (b) bare (it needs no harness) measured %.1f ns, "
	       "program alone + loop says %.1f\n", bench_median(fb_bare->ns, o->rounds),
	       bench_median(bare_b, o->rounds));
	if ((!o->no_live && live_bench(&ob, ps, n, h, o)) || (!o->no_npi && npi_bench(&ob, ps, h, o)))
		goto out;
	rc = 0;
out:
	unload_all(&ob);
	return rc;
}
