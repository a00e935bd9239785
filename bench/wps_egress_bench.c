// SPDX-License-Identifier: BSD-2-Clause
/*
 * ns/packet of the WPS egress XDP program (bpf/wps_egress.bpf.c) beside floor
 * (a), the xdp_fwd-style IPv4 forwarder (bench/floor_fwd.bpf.c), in the same
 * interleaved rounds through bench/testrun_reset.bpf.c (the frame is put back
 * before every repetition; the harness's own cost is measured and
 * subtracted). Cases: R = 0 (validate, decapsulate, FIB on the inner IPv4
 * destination, devmap redirect: floor (a)'s work plus the WPS part, the
 * peer check included) and a validation drop (wrong Egress Node ID). Runs in the switch namespace of
 * scripts/bench.sh: the inner destination is the IP host behind sw-ip.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bench.h"
#include "wps/egress_stats.h"
#include "testrun_reset.h"
#include "wps_egress.skel.h"
#include "wps_opt.h"

#define NODE	2

struct wcase {
	const char *name;
	uint8_t frame[256];
	uint32_t len;
	int fd;
	uint32_t verdict;
	int counter;		/* must move once per repetition (-1: none) */
	double ns[99];
};

static int wfail(const char *fmt, const char *arg)
{
	fprintf(stderr, "wps_egress_bench: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return 1;
}

/* IPv4 / UDP / 60 bytes, from the UBPU to the IP host (floor (a)'s packet, and our inner one);
 * long enough that the harness's restored head (RESET_BYTES) fits in the frame. */
static uint32_t ip4_udp(uint8_t *p, const char *src, const char *dst)
{
	uint32_t len = 20 + 8 + 60;

	memset(p, 0, len);
	p[0] = 0x45;
	p[2] = (uint8_t)(len >> 8);
	p[3] = (uint8_t)len;
	p[8] = 64;
	p[9] = 17;
	inet_pton(AF_INET, src, p + 12);
	inet_pton(AF_INET, dst, p + 16);
	p[20] = 0x12, p[21] = 0x34, p[22] = 0x13, p[23] = 0x89;
	p[24] = 0, p[25] = 68;
	return len;
}

static uint32_t wps_frame(uint8_t *f, uint16_t egress_node, const uint8_t *mac_dst, const char *src4,
			  const char *dst4)
{
	struct wps_exthdr *x;
	uint32_t in_len;

	memset(f, 0, 128);
	memcpy(f, mac_dst, 6);
	f[6] = 0x02;
	f[12] = 0x86, f[13] = 0xdd;
	f[14] = 0x60;
	f[20] = WPS_IPPROTO_DSTOPTS;
	f[21] = 64;
	inet_pton(AF_INET6, "fd00:20::2", f + 22);
	inet_pton(AF_INET6, "fd00:20::1", f + 38);
	x = (struct wps_exthdr *)(f + 54);
	x->nexthdr = WPS_IPPROTO_IPIP;
	x->hdrlen = WPS_EXTHDR_HDRLEN;
	x->opt.type = WPS_OPT_TYPE;
	x->opt.len = WPS_OPT_DATA_LEN;
	x->opt.flags = WPS_FLAG_S | WPS_FLAG_E;	/* R = 0 */
	x->opt.flow_id = htons(7);
	x->opt.ingress_node = htons(1);
	x->opt.egress_node = htons(egress_node);
	x->opt.group_id = htons(100);
	in_len = ip4_udp(f + 70, src4, dst4);
	f[18] = (uint8_t)((16 + in_len) >> 8);
	f[19] = (uint8_t)(16 + in_len);
	return 70 + in_len;
}

static int run_once(int reset_fd, int frame_map, int target_map, struct wcase *c, int ifindex, int repeat,
		    uint32_t *dur, uint32_t *ret)
{
	struct reset_frame rf = { .len = c->len };
	uint8_t out[512];
	uint32_t zero = 0;
	struct xdp_md md = { .data_end = c->len, .ingress_ifindex = (uint32_t)ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = c->frame, .data_size_in = c->len, .data_out = out,
		    .data_size_out = sizeof(out), .ctx_in = &md, .ctx_size_in = sizeof(md), .repeat = repeat);

	memcpy(rf.head, c->frame, RESET_BYTES);
	if (bpf_map_update_elem(frame_map, &zero, &rf, 0) || bpf_map_update_elem(target_map, &zero, &c->fd, 0) ||
	    bpf_prog_test_run_opts(reset_fd, &o))
		return wfail("%s: BPF_PROG_RUN failed", c->name);
	*dur = o.duration;
	*ret = o.retval;
	return 0;
}

int wps_egress_bench(const struct xdp_bench_opts *o)
{
	struct bpf_object *fwd = NULL, *reset = NULL;
	struct wps_egress *skel = NULL;
	struct wcase cs[4] = {
		{ .name = "harness only", .verdict = XDP_PASS, .counter = -1 },
		{ .name = "floor (a) fwd IPv4", .verdict = XDP_REDIRECT, .counter = -1 },
		{ .name = "wps_egress R=0 decap+fwd", .verdict = XDP_REDIRECT, .counter = WPS_EG_CNT_R0_FWD },
		{ .name = "wps_egress bad node, drop", .verdict = XDP_DROP, .counter = WPS_EG_CNT_WRONG_NODE },
	};
	struct wps_eg_cfg cfg = { .node_id = NODE };
	struct wps_eg_peer_key peer = { .node = 1 };	/* the frames' source and Ingress Node ID */
	uint32_t peer_idx = 0;
	char path[512];
	uint8_t sw_mac[6] = { 0 }, one = 1, in6[16];
	unsigned ub_if = if_nametoindex(o->ub_if), ip_if = if_nametoindex(o->ip_if);
	int reset_fd, frame_map, target_map, rc = 1, repeat = o->repeat / 4 ? o->repeat / 4 : 1;
	const char *src4 = getenv("UBPU_IP4"), *dst4 = getenv("IPHOST_IP4"), *mac = getenv("SW_UB_MAC");
	uint32_t zero = 0;

	if (!ub_if || !ip_if || !src4 || !dst4 || !mac)
		return wfail("%s", "run in the switch namespace with tests/lib/topo.env exported (scripts/bench.sh)");
	sscanf(mac, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &sw_mac[0], &sw_mac[1], &sw_mac[2], &sw_mac[3], &sw_mac[4],
	       &sw_mac[5]);
	snprintf(path, sizeof(path), "%s/floor_fwd.bpf.o", o->bpf_dir);
	fwd = bpf_object__open_file(path, NULL);
	snprintf(path, sizeof(path), "%s/testrun_reset.bpf.o", o->bpf_dir);
	reset = bpf_object__open_file(path, NULL);
	skel = wps_egress__open_and_load();
	if (!fwd || !reset || !skel || bpf_object__load(fwd) || bpf_object__load(reset)) {
		wfail("%s", "cannot load floor_fwd, testrun_reset or wps_egress");
		goto out;
	}
	reset_fd = bpf_program__fd(bpf_object__find_program_by_name(reset, "testrun_reset"));
	frame_map = bpf_object__find_map_fd_by_name(reset, "reset_frame");
	target_map = bpf_object__find_map_fd_by_name(reset, "reset_target");
	cs[0].fd = bpf_program__fd(bpf_object__find_program_by_name(reset, "testrun_null"));
	cs[1].fd = bpf_program__fd(bpf_object__find_program_by_name(fwd, "floor_fwd"));
	cs[2].fd = cs[3].fd = bpf_program__fd(skel->progs.wps_egress);
	inet_pton(AF_INET6, "fd00:20::1", in6);
	inet_pton(AF_INET6, "fd00:20::2", peer.addr);
	if (bpf_map_update_elem(bpf_object__find_map_fd_by_name(fwd, "floor_tx_ports"), &ip_if, &ip_if, 0) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.wps_eg_tx), &ip_if, &ip_if, 0) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.wps_eg_local), in6, &one, 0) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.wps_eg_peers), &peer, &peer_idx, 0) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.wps_eg_cfg), &zero, &cfg, 0)) {
		wfail("%s", "map set-up failed");
		goto out;
	}
	/* Frames: floor (a) gets the inner packet alone, under the same MACs. */
	memcpy(cs[0].frame, sw_mac, 6);
	cs[0].frame[12] = 0x08;
	cs[0].len = 14 + ip4_udp(cs[0].frame + 14, src4, dst4);
	memcpy(cs[1].frame, cs[0].frame, cs[0].len);
	cs[1].len = cs[0].len;
	cs[2].len = wps_frame(cs[2].frame, NODE, sw_mac, src4, dst4);
	cs[3].len = wps_frame(cs[3].frame, NODE + 1, sw_mac, src4, dst4);

	for (int r = 0; r < o->rounds; r++)
		for (int i = 0; i < 4; i++) {
			__u64 before[WPS_EG_CNT__MAX], after[WPS_EG_CNT__MAX];
			uint32_t dur, ret;

			wps_eg_counters_read(bpf_map__fd(skel->maps.wps_eg_stats), before);
			if (run_once(reset_fd, frame_map, target_map, &cs[i], (int)ub_if, repeat, &dur, &ret))
				goto out;
			wps_eg_counters_read(bpf_map__fd(skel->maps.wps_eg_stats), after);
			if (ret != cs[i].verdict) {
				wfail("%s: unexpected verdict (FIB or neighbour state under the bench?)", cs[i].name);
				goto out;
			}
			if (cs[i].counter >= 0 && after[cs[i].counter] - before[cs[i].counter] != (__u64)repeat) {
				wfail("%s: the counter did not move once per repetition (frame not restored?)",
				      cs[i].name);
				goto out;
			}
			cs[i].ns[r] = dur;
		}
	printf("WPS egress XDP program, ns/packet (BPF_PROG_RUN x %d, median of %d, harness subtracted)\n",
	       repeat, o->rounds);
	printf("%-28s %8s %12s\n", "program", "ns/pkt", "vs floor (a)");
	for (int i = 1; i < 4; i++) {
		double net[99], ratio[99];

		for (int r = 0; r < o->rounds; r++) {
			double fl = cs[1].ns[r] - cs[0].ns[r];

			net[r] = cs[i].ns[r] - cs[0].ns[r];
			ratio[r] = fl > 0 ? net[r] / fl : 0;
		}
		printf("%-28s %8.1f %11.2fx\n", cs[i].name, bench_median(net, o->rounds), bench_median(ratio, o->rounds));
	}
	rc = 0;
out:
	wps_egress__destroy(skel);
	bpf_object__close(fwd);
	bpf_object__close(reset);
	return rc;
}
