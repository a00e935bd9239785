// SPDX-License-Identifier: BSD-2-Clause
/*
 * Runs the scapy-made UB2E fixtures (tests/bpf/fixtures/) through
 * BPF_PROG_TEST_RUN and prints TAP. Per case: set the ubctl options in force,
 * run the program with the real ingress ifindex (so bpf_fib_lookup answers from
 * the switch namespace's tables), then compare verdict, output bytes and the
 * counters that moved. Run it inside the switch namespace (tests/bpf/run).
 *
 *   ub2e_testrun [--ub-dev DEV] [--ip-dev DEV] FIXTURES...
 *   ub2e_testrun fuzz ...          (ub2e_fuzz.c)
 */
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include "ub2e_maps.h"	/* first: the skeleton's .data.cfg is a struct ub2e_cfg */
#include "ub2e.skel.h"
#include "lib/ub2e_cfg.h"
#include "io/ub2e_ports.h"
#include "lib/npimap.h"
#include "io/ub2e_tables.h"
#include "io/ub2e_stats.h"
#include "io/ub2e_punt.h"
#include "ub2e_harness.h"
#include "fixture.h"

#define MAX_PKT FIXTURE_MAX_PKT

struct fixture {
	struct fixture_case c;
	__u32 mark;		/* TC programs: skb->mark going in */
	__u32 mark_out;		/* and coming out, with has_mark_out */
	bool has_mark_out;
	bool hdr_only;		/* "punt header": the programs' header mode only */
};

struct ub2e *skel;	/* shared with ub2e_fuzz.c */
unsigned ub_if, ip_if;
__u64 punt_key;
static const char *ub_dev = "sw-ub", *ip_dev = "sw-ip";
static bool tables_dirty, vlans_used[UB2E_VLAN_MAX];
static __u32 blocks[72];	/* npi2vlan blocks the current case made */
static int nblocks;

static const char *verdict_name(bool tc, __u32 v)
{
	static const char *const act[] = { "TC_ACT_OK", "TC_ACT_RECLASSIFY", "TC_ACT_SHOT" };

	if (tc && v == TC_ACT_REDIRECT)
		return "TC_ACT_REDIRECT";
	if (tc && v == (__u32)TC_ACT_UNSPEC)
		return "TC_ACT_UNSPEC";
	if (tc)
		return v < 3 ? act[v] : "TC_ACT_?";
	return fixture_xdp_verdict(v);
}

/* What bpftool can write and ubctl never would: "PID=VAL" straight into npi2vlan's `any`. */
static int raw_npi(const char *arg, char *err, size_t errlen)
{
	struct ub2e_npi_vlans v = {};
	unsigned pid, val;

	if (sscanf(arg, "%u=%i", &pid, &val) != 2) {
		snprintf(err, errlen, "--raw-npi %s: want PID=VAL", arg);
		return -1;
	}
	v.any = (__u16)val;
	return ub2e_npi_put(bpf_map__fd(skel->maps.ub2e_npi2vlan), pid, &v);
}

/* Put the switch into the state the case's ubctl options describe. */
int configure(const char *opts, char *err, size_t errlen)
{
	int npi_fd = bpf_map__fd(skel->maps.ub2e_npi2vlan), vlan_fd = bpf_map__fd(skel->maps.ub2e_vlan2npi);
	struct npimap_entry plan[64];
	size_t nplan = 0;
	struct ub2e_cfg cfg;
	char buf[512], *save, *tok, raw[8][64];
	__u32 zero = 0;
	int nraw = 0;

	struct ub2e_icmp_src src;

	ub2e_cfg_defaults(&cfg);
	if (ub2e_cfg_ports(&cfg, ub_dev, ip_dev)) {
		snprintf(err, errlen, "MACs of %s, %s: %s", ub_dev, ip_dev, strerror(errno));
		return -1;
	}
	/* As ubctl does: each port's addresses answer Packet Too Big out of it. */
	if (ub2e_icmp_src_read(&src, ub_dev) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_icmp_src), &(__u32){ UB2E_SIDE_UB }, &src, BPF_ANY) ||
	    ub2e_icmp_src_read(&src, ip_dev) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_icmp_src), &zero, &src, BPF_ANY)) {
		snprintf(err, errlen, "addresses of %s, %s: %s", ub_dev, ip_dev, strerror(errno));
		return -1;
	}
	/* Forget the previous case's table: only the blocks it used (a full
	 * ub2e_tables_clear() is 4096 deletes, slow under TCG in vmtest). */
	if (tables_dirty) {
		for (int i = 0; i < nblocks; i++)
			bpf_map_delete_elem(npi_fd, &blocks[i]);
		for (__u32 vid = 0, zero = 0; vid < UB2E_VLAN_MAX; vid++)
			if (vlans_used[vid])
				bpf_map_update_elem(vlan_fd, &vid, &zero, BPF_ANY);
		memset(vlans_used, 0, sizeof(vlans_used));
		nblocks = 0;
	}
	tables_dirty = false;

	snprintf(buf, sizeof(buf), "%s", opts);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		const char *name = tok + 2;

		if (strncmp(tok, "--", 2)) {
			snprintf(err, errlen, "option '%s' does not start with --", tok);
			return -1;
		}
		if (!strcmp(name, "raw-npi")) {
			tok = strtok_r(NULL, " ", &save);
			if (!tok) {
				snprintf(err, errlen, "--raw-npi needs PID=VAL");
				return -1;
			}
			snprintf(raw[nraw++ % 8], sizeof(raw[0]), "%s", tok);
		} else if (!strcmp(name, "raw-vlan")) {
			/* "VID=VAL" straight into vlan2npi, as bpftool may write it. */
			unsigned vid, val;

			tok = strtok_r(NULL, " ", &save);
			if (!tok || sscanf(tok, "%u=%i", &vid, &val) != 2 || vid >= UB2E_VLAN_MAX) {
				snprintf(err, errlen, "--raw-vlan needs VID=VAL");
				return -1;
			}
			if (bpf_map_update_elem(vlan_fd, &vid, &val, BPF_ANY)) {
				snprintf(err, errlen, "--raw-vlan %s: %s", tok, strerror(errno));
				return -1;
			}
			vlans_used[vid] = true;
			tables_dirty = true;
		} else if (!strcmp(name, "map") || !strcmp(name, "partition")) {
			tok = strtok_r(NULL, " ", &save);
			if (!tok || nplan == 64 || npimap_parse(tok, &plan[nplan++], err, errlen))
				return -1;
		} else if (!strcmp(name, "no-icmp-source")) {
			/* An IP-side port without addresses, as ubctl would have found it. */
			memset(&src, 0, sizeof(src));
			if (bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_icmp_src), &zero, &src, BPF_ANY)) {
				snprintf(err, errlen, "--no-icmp-source: %s", strerror(errno));
				return -1;
			}
		} else if (!strcmp(name, "untagged") || !strcmp(name, "strict") || !strcmp(name, "no-ttl-dec") ||
			   !strcmp(name, "caqm-tag")) {
			if (ub2e_cfg_set(&cfg, name, NULL, err, errlen))
				return -1;
		} else {
			tok = strtok_r(NULL, " ", &save);
			if (ub2e_cfg_set(&cfg, name, tok, err, errlen))
				return -1;
		}
	}
	tables_dirty = tables_dirty || nplan || nraw;
	for (size_t i = 0; i < nplan && nblocks < 64; i++) {
		blocks[nblocks++] = plan[i].pid >> 12;
		vlans_used[plan[i].vlan & 0xfff] = true;
	}
	for (int i = 0; i < nraw && i < 8; i++)
		blocks[nblocks++] = (__u32)strtoul(raw[i], NULL, 0) >> 12;
	if (npimap_check(plan, nplan, err, errlen))
		return -1;
	if (ub2e_tables_write(npi_fd, vlan_fd, plan, nplan)) {
		snprintf(err, errlen, "writing the tables: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < nraw && i < 8; i++)
		if (raw_npi(raw[i], err, errlen))
			return -1;
	return bpf_map_update_elem(bpf_map__fd(skel->maps.data_cfg), &zero, &cfg, BPF_ANY);
}

static void read_counters(__u64 *out)
{
	if (ub2e_counters_read(bpf_map__fd(skel->maps.ub2e_stats), out))
		memset(out, 0xff, sizeof(__u64) * UB2E_CNT__MAX);	/* mismatches, loudly */
}

/*
 * The fixtures give a punt's words as XDP metadata ahead of the frame; in
 * header mode they follow the MACs, with the key: put them where the fixture
 * has them. A header not exactly as specified stays, and fails the compare.
 */
static void punt_hdr_to_meta(unsigned char *out, __u32 *len)
{
	struct ub2e_punt_hdr h;
	unsigned char eth[14];

	if (*len < sizeof(eth) + sizeof(h))
		return;
	static const __u8 not_ip[8] = { [UB2E_PUNT_NOT_IP6_NH] = 0xff };

	memcpy(&h, out + sizeof(eth), sizeof(h));
	if (h.key != punt_key || memcmp(h.not_ip, not_ip, sizeof(not_ip)))
		return;
	memcpy(eth, out, sizeof(eth));
	memcpy(out, &h.m, sizeof(h.m));
	memcpy(out + sizeof(h.m), eth, sizeof(eth));
	memmove(out + sizeof(h.m) + sizeof(eth), out + sizeof(eth) + sizeof(h), *len - sizeof(eth) - sizeof(h));
	*len -= sizeof(h) - sizeof(h.m);
}

static bool case_applies(void *rec)
{
	const struct fixture *f = rec;

	return !f->hdr_only || punt_key;
}

static bool run_case(void *rec)
{
	const struct fixture *f = rec;
	unsigned char out[MAX_PKT + 64];
	struct xdp_md ctx = {};
	struct __sk_buff skb = {}, skb_out = {};
	bool tc = !strncmp(f->c.prog, "tc_", 3);
	__u64 before[UB2E_CNT__MAX], after[UB2E_CNT__MAX];
	struct bpf_program *prog;
	__u64 want[UB2E_CNT__MAX] = {};
	char err[256];
	bool ok = true;
	int rc;

	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->c.in, .data_size_in = (__u32)f->c.in_len,
		    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
		    .repeat = 1);

	if (!strcmp(f->c.prog, "to_uboe")) {
		prog = skel->progs.ub2e_to_uboe;
		ctx.ingress_ifindex = ub_if;
	} else if (!strcmp(f->c.prog, "to_ub")) {
		prog = skel->progs.ub2e_to_ub;
		ctx.ingress_ifindex = ip_if;
	} else if (!strcmp(f->c.prog, "tc_ingress_ub") || !strcmp(f->c.prog, "tc_ingress_ip")) {
		/* The mark comes in the ctx (no XDP metadata under test). */
		prog = skel->progs.ub2e_slow_in;
		skb.ifindex = f->c.prog[11] == 'u' ? ub_if : ip_if;
	} else if (!strcmp(f->c.prog, "tc_egress_ub")) {
		prog = skel->progs.ub2e_slow_ub;
		skb.ifindex = ub_if;
	} else if (!strcmp(f->c.prog, "tc_egress_ip")) {
		prog = skel->progs.ub2e_slow_ip;
		skb.ifindex = ip_if;
	} else {
		printf("#   line %d: unknown prog '%s'\n", f->c.line, f->c.prog);
		return false;
	}
	ctx.data_end = (__u32)f->c.in_len;
	if (tc) {
		skb.mark = f->mark;
		o.ctx_in = &skb;
		o.ctx_size_in = sizeof(skb);
		o.ctx_out = &skb_out;
		o.ctx_size_out = sizeof(skb_out);
	}

	if (configure(f->c.opts, err, sizeof(err))) {
		printf("#   options '%s': %s\n", f->c.opts, err);
		return false;
	}
	read_counters(before);
	rc = bpf_prog_test_run_opts(bpf_program__fd(prog), &o);
	read_counters(after);
	if (rc) {
		printf("#   BPF_PROG_TEST_RUN failed: %s\n", strerror(errno));
		return false;
	}
	if (!tc && punt_key && o.retval == XDP_PASS)
		punt_hdr_to_meta(out, &o.data_size_out);
	if (strcmp(verdict_name(tc, o.retval), f->c.verdict)) {
		printf("#   verdict: want %s, got %s\n", f->c.verdict, verdict_name(tc, o.retval));
		ok = false;
	}
	if (f->c.has_out && (o.data_size_out != f->c.out_len || memcmp(out, f->c.out, f->c.out_len))) {
		printf("#   output bytes differ\n");
		fixture_diff(f->c.out, f->c.out_len, out, o.data_size_out);
		ok = false;
	}
	if (f->has_mark_out && skb_out.mark != f->mark_out) {
		printf("#   skb->mark: want %#x, got %#x\n", f->mark_out, skb_out.mark);
		ok = false;
	}

	ok &= fixture_want_counters(f->c.counters, ub2e_counter_id, want);
	ok &= fixture_counters_moved(before, after, want, UB2E_CNT__MAX, ub2e_counter_name);
	return ok;
}

/* The one line of a UB2E case beyond the common ones. */
static int ub2e_line(void *rec, struct fixture_file *ff, const char *key, char *val)
{
	struct fixture *f = rec;

	if (!strcmp(key, "mark")) {
		f->mark = (__u32)strtoul(val, NULL, 0);
	} else if (!strcmp(key, "mark_out")) {
		f->mark_out = (__u32)strtoul(val, NULL, 0);
		f->has_mark_out = true;
	} else if (!strcmp(key, "punt")) {
		if (strcmp(val, "header")) {
			fixture_error(ff, "punt: only 'header'");
			return -1;
		}
		f->hdr_only = true;
	} else {
		return 1;
	}
	return 0;
}

int ub2e_harness_load(__u64 key)
{
	skel = ub2e__open();
	if (skel) {
		skel->rodata->ub2e_punt_key = key;
		if (ub2e__load(skel)) {
			ub2e__destroy(skel);
			skel = NULL;
		}
	}
	if (!skel) {
		/* The verifier rejecting a program is a test failure, not a setup problem. */
		fixture_tap(false, "%s programs load (verifier): %s", key ? "ub2e-punthdr" : "ub2e", strerror(errno));
		return -1;
	}
	punt_key = key;
	bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_tx_ip), &ip_if, &ip_if, BPF_ANY);
	bpf_map_update_elem(bpf_map__fd(skel->maps.ub2e_tx_ub), &ub_if, &ub_if, BPF_ANY);
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1, failed = 0;

	if (argc > 1 && !strcmp(argv[1], "fuzz"))
		return ub2e_fuzz_main(argc - 1, argv + 1);
	for (; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
		if (!strcmp(argv[i], "--ub-dev"))
			ub_dev = argv[i + 1];
		else if (!strcmp(argv[i], "--ip-dev"))
			ip_dev = argv[i + 1];
	}
	if (i >= argc) {
		fprintf(stderr, "usage: ub2e_testrun [--ub-dev DEV] [--ip-dev DEV] FIXTURES...\n");
		return 2;
	}
	ub_if = if_nametoindex(ub_dev);
	ip_if = if_nametoindex(ip_dev);
	if (!ub_if || !ip_if) {
		fprintf(stderr, "ub2e_testrun: need devices %s and %s in this namespace\n", ub_dev, ip_dev);
		return 2;
	}
	/*
	 * Every case once with punts as the kernel lets XDP make them (metadata
	 * where it allows bpf_xdp_adjust_meta(), ubctl's choice), and once more in
	 * header mode where that was metadata, so both ways are checked wherever
	 * they can run; "punt header" cases run in header mode only.
	 */
	bool meta = ub2e_xdp_meta_ok();

	for (int pass = meta ? 0 : 1; pass < 2; pass++) {
		const struct fixture_driver d = {
			.tool = "ub2e_testrun", .tap = pass ? "ub2e-punthdr" : "ub2e",
			.case_size = sizeof(struct fixture), .line = ub2e_line, .run = run_case,
			.applies = case_applies,
		};

		if (ub2e_harness_load(pass ? UB2E_TEST_PUNT_KEY : 0))
			return 1;
		fixture_tap(true, "%s programs load (verifier)", d.tap);
		for (int k = i; k < argc; k++)
			if (fixture_run(&d, argv[k], &failed))
				failed++;
		ub2e__destroy(skel);
		tables_dirty = false;
		nblocks = 0;
		memset(vlans_used, 0, sizeof(vlans_used));
	}
	return failed ? 1 : 0;
}
