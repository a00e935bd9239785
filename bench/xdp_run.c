// SPDX-License-Identifier: BSD-2-Clause
/*
 * The machinery of the XDP benches (xdp_bench.h): the topology and frames,
 * BPF_PROG_RUN, the checks that a run did the full job, the objects loaded
 * and configured as ubctl attaches them. The benches themselves are
 * xdp_bench.c, xdp_live.c and xdp_npi.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "xdp_bench.h"
#include "testrun_reset.h"
#include "ub2e_maps.h"	/* first: the skeleton's .data.cfg is a struct ub2e_cfg */
#include "ub2e.skel.h"
#include "lib/ub2e_cfg.h"
#include "io/ub2e_ports.h"
#include "io/ub2e_punt.h"
#include "io/ub2e_tables.h"
#include "io/ub2e_stats.h"
#include "lib/frame.h"

int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bench: FAILED: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return 1;
}

const char *xdp_name(uint32_t a)
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

int topo_from_env(struct topo *t)
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
int frame_from_ubpu(struct bprog *p, const struct topo *t, int ipv, bool native)
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
int frame_uboe_to_ubpu(struct bprog *p, const struct topo *t, int ipv)
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

/*
 * The time is the kernel's: it leaves out the time the task was scheduled
 * away, which the wall clock would count on a busy two-core machine.
 */
int test_run(int fd, const struct bprog *p, int repeat, struct run *r)
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

int counter_sum(int map_fd, int id, uint64_t *sum)
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
void dump_counters(int map_fd)
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

int check_output(const struct bprog *p, const struct run *r, const struct topo *t)
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

int prog_fd(struct bpf_object *o, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(o, name);

	return p ? bpf_program__fd(p) : -1;
}

int map_fd(struct bpf_object *o, const char *name)
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

int load_all(struct objs *ob, const struct xdp_bench_opts *o, int ub_if, int ip_if)
{
	struct ub2e_cfg cfg;
	uint32_t zero = 0;

	ob->ub2e = ub2e__open();
	if (ob->ub2e) {
		ob->ub2e->rodata->ub2e_punt_key = ub2e_punt_key_pick();	/* as ubctl loads it */
		if (ub2e__load(ob->ub2e)) {
			ub2e__destroy(ob->ub2e);
			ob->ub2e = NULL;
		}
	}
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
int load_baseline(struct objs *ob, const struct xdp_bench_opts *o, int ub_if, int ip_if)
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

void unload_all(struct objs *ob)
{
	bpf_object__close(ob->base);
	bpf_object__close(ob->reset);
	bpf_object__close(ob->tx);
	bpf_object__close(ob->fwd);
	ub2e__destroy(ob->ub2e);
}

/* One timed measurement of p, with the checks that every repetition did the full job. */
int timed_run(const struct objs *ob, struct bprog *p, int repeat, struct run *r)
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
