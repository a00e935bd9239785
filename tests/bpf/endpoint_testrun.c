// SPDX-License-Identifier: BSD-2-Clause
/*
 * Runs the scapy-made endpoint fixtures (tests/bpf/fixtures/endpoint.txt,
 * the format of ub2e.txt) through BPF_PROG_TEST_RUN against
 * bpf/ub_endpoint.bpf.c and prints TAP. The XSKMAP holds a real AF_XDP
 * socket (user/xsk) bound to queue 0 of DEV, so a valid UBoE frame gives
 * XDP_REDIRECT; `opts --no-socket` empties the map for the case. Per case:
 * verdict and the counters that moved (listed ones by one, others not).
 *
 *   endpoint_testrun --dev DEV FIXTURES...
 */
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "ub_endpoint.skel.h"
#include "ub_endpoint_maps.h"
#include "ep_xdp.h"
#include "xsk_port.h"

#define MAX_PKT 4096

struct fixture {
	char name[128], prog[16], opts[128], verdict[32], counters[256];
	unsigned char in[MAX_PKT];
	size_t in_len;
};

static struct ub_endpoint *skel;
static unsigned dev_if;
static int sock_fd, tap_n;

static int unhex(const char *s, unsigned char *buf, size_t *len)
{
	size_t n = strlen(s);

	if (n % 2 || n / 2 > MAX_PKT)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		buf[i] = (unsigned char)v;
	}
	*len = n / 2;
	return 0;
}

static const char *verdict_name(__u32 v)
{
	static const char *const names[] = { "XDP_ABORTED", "XDP_DROP", "XDP_PASS", "XDP_TX", "XDP_REDIRECT" };

	return v < 5 ? names[v] : "XDP_?";
}

static int counter_id(const char *name)
{
	for (unsigned i = 0; i < UB_EP_CNT__MAX; i++)
		if (!strcmp(ep_xdp_counter_name(i), name))
			return (int)i;
	return -1;
}

static void read_counters(__u64 *out)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(skel->maps.ub_ep_stats);
	__u64 vals[ncpu > 0 ? ncpu : 1];

	for (__u32 id = 0; id < UB_EP_CNT__MAX; id++) {
		out[id] = 0;
		if (ncpu <= 0 || bpf_map_lookup_elem(fd, &id, vals)) {
			out[id] = ~0ull;	/* mismatches, loudly */
			continue;
		}
		for (int c = 0; c < ncpu; c++)
			out[id] += vals[c];
	}
}

static bool run_case(const struct fixture *f)
{
	int xsk_fd = bpf_map__fd(skel->maps.ub_ep_xsks);
	__u64 before[UB_EP_CNT__MAX], after[UB_EP_CNT__MAX];
	bool ok = true, expected[UB_EP_CNT__MAX] = {};
	unsigned char out[MAX_PKT + 64];
	struct xdp_md ctx = {};
	char want[256], *save, *tok;
	__u32 zero = 0;
	int rc;

	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->in, .data_size_in = (__u32)f->in_len,
		    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);

	if (strcmp(f->prog, "endpoint")) {
		printf("#   unknown prog '%s'\n", f->prog);
		return false;
	}
	ctx.data_end = (__u32)f->in_len;
	ctx.ingress_ifindex = dev_if;
	ctx.rx_queue_index = 0;
	if (!strcmp(f->opts, "--no-socket")) {
		bpf_map_delete_elem(xsk_fd, &zero);
	} else if (f->opts[0]) {
		printf("#   unknown opts '%s'\n", f->opts);
		return false;
	} else if (bpf_map_update_elem(xsk_fd, &zero, &sock_fd, 0)) {
		printf("#   cannot put the AF_XDP socket into the XSKMAP: %s\n", strerror(errno));
		return false;
	}
	read_counters(before);
	rc = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.ub_endpoint), &o);
	read_counters(after);
	if (rc) {
		printf("#   BPF_PROG_TEST_RUN failed: %s\n", strerror(errno));
		return false;
	}
	if (strcmp(verdict_name(o.retval), f->verdict)) {
		printf("#   verdict: want %s, got %s\n", f->verdict, verdict_name(o.retval));
		ok = false;
	}
	snprintf(want, sizeof(want), "%s", f->counters);
	for (tok = strtok_r(want, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		int i = counter_id(tok);

		if (i < 0) {
			printf("#   unknown counter '%s'\n", tok);
			ok = false;
			continue;
		}
		expected[i] = true;
	}
	for (int i = 0; i < UB_EP_CNT__MAX; i++) {
		__u64 d = after[i] - before[i], w = expected[i] ? 1 : 0;

		if (d != w) {
			printf("#   counter %s moved by %llu, want %llu\n", ep_xdp_counter_name((unsigned)i),
			       (unsigned long long)d, (unsigned long long)w);
			ok = false;
		}
	}
	return ok;
}

static int run_file(const char *path, int *failed)
{
	static char line[2 * MAX_PKT + 64];
	static struct fixture f;
	FILE *fp = fopen(path, "r");
	int lineno = 0;

	if (!fp) {
		fprintf(stderr, "endpoint_testrun: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), fp)) {
		char *v = strchr(line, ' ');

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		if (v)
			*v++ = '\0';
		else
			v = line + strlen(line);
		if (!strcmp(line, "case")) {
			memset(&f, 0, sizeof(f));
			snprintf(f.name, sizeof(f.name), "%s", v);
		} else if (!strcmp(line, "prog")) {
			snprintf(f.prog, sizeof(f.prog), "%s", v);
		} else if (!strcmp(line, "opts")) {
			snprintf(f.opts, sizeof(f.opts), "%s", v);
		} else if (!strcmp(line, "in")) {
			if (unhex(v, f.in, &f.in_len)) {
				fprintf(stderr, "endpoint_testrun: %s:%d: bad hex\n", path, lineno);
				fclose(fp);
				return -1;
			}
		} else if (!strcmp(line, "verdict")) {
			snprintf(f.verdict, sizeof(f.verdict), "%s", v);
		} else if (!strcmp(line, "count")) {
			snprintf(f.counters, sizeof(f.counters), "%s", v);
		} else if (!strcmp(line, "end")) {
			bool ok = run_case(&f);

			printf("%sok %d - endpoint %s\n", ok ? "" : "not ", ++tap_n, f.name);
			*failed += !ok;
		} else {
			fprintf(stderr, "endpoint_testrun: %s:%d: unknown line '%s'\n", path, lineno, line);
			fclose(fp);
			return -1;
		}
	}
	fclose(fp);
	return 0;
}

int main(int argc, char **argv)
{
	struct xsk_port_cfg cfg = { .nframes = 256, .frame_size = 2048, .ring_size = 64 };
	struct xsk_port *port;
	int i = 1, failed = 0, s;

	if (argc < 4 || strcmp(argv[1], "--dev")) {
		fprintf(stderr, "usage: endpoint_testrun --dev DEV FIXTURES...\n");
		return 2;
	}
	dev_if = if_nametoindex(argv[2]);
	if (!dev_if) {
		fprintf(stderr, "endpoint_testrun: no device %s in this namespace\n", argv[2]);
		return 2;
	}
	skel = ub_endpoint__open_and_load();
	if (!skel) {
		printf("not ok 1 - endpoint program loads (verifier): %s\n", strerror(errno));
		return 1;
	}
	printf("ok %d - endpoint program loads (verifier)\n", ++tap_n);
	/* A real socket for the XSKMAP; the caller inserts it per case. */
	port = xsk_port_create(&cfg);
	s = port ? xsk_port_add(port, argv[2], 0, -1, 0) : -errno;
	if (s < 0) {
		printf("not ok %d - AF_XDP socket on %s: %s\n", ++tap_n, argv[2], strerror(-s));
		xsk_port_destroy(port);
		ub_endpoint__destroy(skel);
		return 1;
	}
	sock_fd = xsk_port_fd(port, s);
	for (i = 3; i < argc; i++)
		if (run_file(argv[i], &failed))
			failed++;
	xsk_port_destroy(port);
	ub_endpoint__destroy(skel);
	return failed ? 1 : 0;
}
