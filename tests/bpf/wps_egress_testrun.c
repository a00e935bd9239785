// SPDX-License-Identifier: BSD-2-Clause
/*
 * Runs the scapy-made WPS egress fixtures (tests/bpf/fixtures/wps_egress.txt,
 * the format of ub2e.txt) through BPF_PROG_TEST_RUN against
 * bpf/wps_egress.bpf.c and prints TAP. The XSKMAP holds a real AF_XDP socket
 * (user/xsk) on queue 0 of the domain device, the devmap the site device, our
 * outer address and node ID come from the environment (wps_egress.env). Per
 * case: verdict, output bytes, the counters that moved (each listed name once
 * per expected increment, all others unmoved) and the log records written.
 *
 * Case options: --no-socket (empty XSKMAP), --no-reorder (cfg flag),
 * --log N (records per second), --repeat N (runs of the same frame),
 * --peer ADDR[=ID][,...] (the peers, as `ubctl wps egress run --peer`;
 * repeatable; default: the ingress's address with its node ID, both from
 * the environment), --any-peer (no peer check), --xsk-max N (cfg xsk_max: the
 * longest frame the reorder sockets take; 0, multi-buffer sockets, by default).
 * A frame longer than a page's first buffer runs as a multi-buffer one (the
 * program is xdp.frags).
 *
 *   wps_egress_testrun --dom-dev DEV --site-dev DEV FIXTURES...
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "wps_egress.skel.h"
#include "wps_egress_maps.h"
#include "wps/egress_peers.h"
#include "wps/egress_stats.h"
#include "xsk/xsk_port.h"
#include "fixture.h"

#define MAX_PKT FIXTURE_MAX_PKT

struct fixture {
	struct fixture_case c;
	int ifindex_at, logs;	/* where the site's ifindex goes into out; log records */
};

static struct wps_egress *skel;
static unsigned dom_if, site_if;
static int sock_fd, nlogs, log_reason_bad;
static struct ring_buffer *rb;
static __u32 log_want_reason;

static int on_log(void *ctx, void *data, size_t len)
{
	const struct wps_eg_log *r = data;

	(void)ctx;
	nlogs++;
	if (len < sizeof(*r) || r->reason != log_want_reason || r->ifindex != dom_if)
		log_reason_bad++;
	return 0;
}

/* Node ID and our address from the environment; per-case options on top. */
static int configure(const char *opts, int *repeat, char *err, size_t errlen)
{
	struct wps_eg_cfg cfg = { .node_id = (__u16)atoi(getenv("WPS_EG_NODE") ?: "0") };
	int xsk_fd = bpf_map__fd(skel->maps.wps_eg_xsks), ncpu = libbpf_num_possible_cpus();
	static struct wps_eg_peers peers;
	static struct wps_eg_peer_key keys[WPS_EG_MAX_PEER_KEYS], key, next;
	static __u32 idx[WPS_EG_MAX_PEER_KEYS];
	int peers_fd = bpf_map__fd(skel->maps.wps_eg_peers);
	char buf[256], *save, *tok, deflt[80];
	bool socket = true;
	__u32 zero = 0;
	unsigned nkeys;

	*repeat = 1;
	memset(&peers, 0, sizeof(peers));
	snprintf(buf, sizeof(buf), "%s", opts);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (!strcmp(tok, "--no-socket")) {
			socket = false;
		} else if (!strcmp(tok, "--no-reorder")) {
			cfg.flags |= WPS_EG_F_NO_REORDER;
		} else if (!strcmp(tok, "--log") && (tok = strtok_r(NULL, " ", &save))) {
			cfg.log_per_sec = (__u32)atoi(tok);
		} else if (!strcmp(tok, "--repeat") && (tok = strtok_r(NULL, " ", &save))) {
			*repeat = atoi(tok);
		} else if (!strcmp(tok, "--peer") && (tok = strtok_r(NULL, " ", &save))) {
			if (wps_eg_peers_parse(&peers, tok, err, errlen))
				return -1;
		} else if (!strcmp(tok, "--any-peer")) {
			cfg.flags |= WPS_EG_F_ANY_PEER;
		} else if (!strcmp(tok, "--xsk-max") && (tok = strtok_r(NULL, " ", &save))) {
			cfg.xsk_max = (__u32)atoi(tok);
		} else {
			snprintf(err, errlen, "unknown option '%s'", tok);
			return -1;
		}
	}
	if (!peers.n && !(cfg.flags & WPS_EG_F_ANY_PEER)) {
		snprintf(deflt, sizeof(deflt), "%s=%s", getenv("WPS_IN_IP6") ?: "", getenv("WPS_IN_NODE") ?: "");
		if (wps_eg_peers_parse(&peers, deflt, err, errlen))
			return -1;
	}
	/* The peers map as ubctl fills it, emptied first. */
	while (!bpf_map_get_next_key(peers_fd, NULL, &next)) {
		key = next;
		bpf_map_delete_elem(peers_fd, &key);
	}
	nkeys = wps_eg_peers_keys(&peers, keys, idx);
	for (unsigned i = 0; i < nkeys; i++)
		if (bpf_map_update_elem(peers_fd, &keys[i], &idx[i], 0)) {
			snprintf(err, errlen, "peers map: %s", strerror(errno));
			return -1;
		}
	if (socket ? bpf_map_update_elem(xsk_fd, &zero, &sock_fd, 0) : (bpf_map_delete_elem(xsk_fd, &zero), 0)) {
		snprintf(err, errlen, "XSKMAP: %s", strerror(errno));
		return -1;
	}
	{	/* a fresh log budget on every CPU */
		struct { __u64 window; __u32 used, pad; } b[ncpu > 0 ? ncpu : 1];

		memset(b, 0, sizeof(b));
		bpf_map_update_elem(bpf_map__fd(skel->maps.wps_eg_log_budget), &zero, b, 0);
	}
	return bpf_map_update_elem(bpf_map__fd(skel->maps.wps_eg_cfg), &zero, &cfg, 0);
}

static bool run_case(void *rec)
{
	struct fixture *f = rec;
	__u64 before[WPS_EG_CNT__MAX], after[WPS_EG_CNT__MAX], want_n[WPS_EG_CNT__MAX] = {};
	unsigned char out[MAX_PKT + 64];
	struct xdp_md ctx = {};
	char err[256], want[256], *save, *tok;
	bool ok = true;
	int rc, repeat;
	__u32 retval = 0, out_len = 0;

	if (strcmp(f->c.prog, "wps_egress")) {
		printf("#   unknown prog '%s'\n", f->c.prog);
		return false;
	}
	if (configure(f->c.opts, &repeat, err, sizeof(err))) {
		printf("#   options '%s': %s\n", f->c.opts, err);
		return false;
	}
	ring_buffer__consume(rb);	/* leftovers of earlier cases */
	nlogs = log_reason_bad = 0;
	log_want_reason = WPS_EG_CNT__MAX;
	snprintf(want, sizeof(want), "%s", f->c.counters);
	for (tok = strtok_r(want, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		int i = wps_eg_counter_id(tok);

		if (i < 0) {
			printf("#   unknown counter '%s'\n", tok);
			return false;
		}
		want_n[i]++;
		if (!strncmp(tok, "bad_", 4) || !strncmp(tok, "drop_", 5))
			log_want_reason = (__u32)i;
	}
	if (f->ifindex_at > 0 && (size_t)f->ifindex_at + 4 <= f->c.out_len)
		memcpy(f->c.out + f->ifindex_at, &site_if, 4);

	if (wps_eg_counters_read(bpf_map__fd(skel->maps.wps_eg_stats), before))
		memset(before, 0xff, sizeof(before));
	/* Each run on a fresh copy of the frame (the program rewrites it). */
	for (int r = 0; r < repeat; r++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->c.in, .data_size_in = (__u32)f->c.in_len,
			    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = 1);

		ctx.data_end = (__u32)f->c.in_len;
		ctx.ingress_ifindex = dom_if;
		ctx.rx_queue_index = 0;
		rc = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.wps_egress), &o);
		if (rc) {
			printf("#   BPF_PROG_TEST_RUN failed: %s\n", strerror(errno));
			return false;
		}
		retval = o.retval;
		out_len = o.data_size_out;
	}
	if (wps_eg_counters_read(bpf_map__fd(skel->maps.wps_eg_stats), after))
		memset(after, 0, sizeof(after));
	ring_buffer__consume(rb);

	if (strcmp(fixture_xdp_verdict(retval), f->c.verdict)) {
		printf("#   verdict: want %s, got %s\n", f->c.verdict, fixture_xdp_verdict(retval));
		ok = false;
	}
	if (f->c.has_out && (out_len != f->c.out_len || memcmp(out, f->c.out, f->c.out_len))) {
		printf("#   output bytes differ\n");
		fixture_diff(f->c.out, f->c.out_len, out, out_len);
		ok = false;
	}
	ok &= fixture_counters_moved(before, after, want_n, WPS_EG_CNT__MAX, wps_eg_counter_name);
	if (nlogs != f->logs || log_reason_bad) {
		printf("#   log records: %d (want %d), %d with the wrong reason or device\n", nlogs, f->logs,
		       log_reason_bad);
		ok = false;
	}
	return ok;
}

/* The lines of a WPS egress case beyond the common ones. */
static int egress_line(void *rec, struct fixture_file *ff, const char *key, char *val)
{
	struct fixture *f = rec;

	(void)ff;
	if (!strcmp(key, "ifindex-at"))
		f->ifindex_at = atoi(val);
	else if (!strcmp(key, "logs"))
		f->logs = atoi(val);
	else
		return 1;
	return 0;
}

static const struct fixture_driver egress_driver = {
	.tool = "wps_egress_testrun", .tap = "wps_egress", .case_size = sizeof(struct fixture),
	.line = egress_line, .run = run_case,
};

int main(int argc, char **argv)
{
	struct xsk_port_cfg cfg = { .nframes = 256, .frame_size = 2048, .ring_size = 64 };
	struct xsk_port *port = NULL;
	struct in6_addr local;
	__u32 zero = 0;
	__u8 one = 1;
	int failed = 0, s;

	if (argc < 6 || strcmp(argv[1], "--dom-dev") || strcmp(argv[3], "--site-dev")) {
		fprintf(stderr, "usage: wps_egress_testrun --dom-dev DEV --site-dev DEV FIXTURES...\n");
		return 2;
	}
	dom_if = if_nametoindex(argv[2]);
	site_if = if_nametoindex(argv[4]);
	if (!dom_if || !site_if) {
		fprintf(stderr, "wps_egress_testrun: no device %s or %s in this namespace\n", argv[2], argv[4]);
		return 2;
	}
	if (!getenv("WPS_EG_IP6") || inet_pton(AF_INET6, getenv("WPS_EG_IP6"), &local) != 1) {
		fprintf(stderr, "wps_egress_testrun: WPS_EG_IP6 not set (source tests/lib/wps_egress.env)\n");
		return 2;
	}
	skel = wps_egress__open_and_load();
	if (!skel) {
		printf("not ok 1 - wps_egress program loads (verifier): %s\n", strerror(errno));
		return 1;
	}
	fixture_tap(true, "wps_egress program loads (verifier)");
	port = xsk_port_create(&cfg);
	s = port ? xsk_port_add(port, argv[2], 0, -1, 0) : -errno;
	if (s < 0) {
		fixture_tap(false, "AF_XDP socket on %s: %s", argv[2], strerror(-s));
		failed++;
		goto out;
	}
	sock_fd = xsk_port_fd(port, s);
	rb = ring_buffer__new(bpf_map__fd(skel->maps.wps_eg_log), on_log, NULL, NULL);
	if (!rb || bpf_map_update_elem(bpf_map__fd(skel->maps.wps_eg_local), &local, &one, 0) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.wps_eg_ifslot), &dom_if, &zero, 0) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.wps_eg_tx), &site_if, &site_if, 0)) {
		fixture_tap(false, "wps_egress maps set up: %s", strerror(errno));
		failed++;
		goto out;
	}
	for (int i = 5; i < argc; i++)
		if (fixture_run(&egress_driver, argv[i], &failed))
			failed++;
out:
	ring_buffer__free(rb);
	xsk_port_destroy(port);
	wps_egress__destroy(skel);
	return failed ? 1 : 0;
}
