// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl caqm (and ubcaqm, the same command under the name it had as a tool
 * of its own: ubctl run as ubcaqm) — run the CAQM stage
 * (bpf/caqm_stage.bpf.c) at the TC egress of a port until SIGINT/SIGTERM,
 * then print its counters as one JSON object and detach. The budget: the port's rate, the queue threshold, the hint unit.
 * --ecn makes it an ECN marking stage for IP frames as well; --pin DIR leaves
 * its maps there while it runs, so that ubperf --stage-pin DIR can report the
 * queue's high water (the directory goes when the stage does; pins a killed
 * stage left are replaced by the next one's).
 *
 * The stage is attached by a tcx link (kernel 6.6 and later): the kernel
 * detaches it when ubcaqm ends, however it ends, SIGKILL included. A kernel
 * without tcx gets a clsact filter (pref 1) instead, removed on SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT; SIGKILL leaves that one behind (the stage says
 * so when it attaches, and a later one on the device names the command that
 * removes it). One stage per port: a second is refused.
 *
 *   ubctl caqm DEV [--rate-mbps N] [--thresh BYTES] [--hint-unit BYTES]
 *                  [--window TIME] [--last-hop] [--ethertype 0xHHHH] [--tag-ethertype 0xHHHH]
 *                  [--ecn] [--pin DIR]
 *
 * On the IP segment the stage answers requests in Ethernet CAQM tags
 * (--tag-ethertype, default 0x88b6, the UB2E switch's --caqm-ethertype).
 */
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "caqm.skel.h"
#include "io/caqm_pins.h"
#include "caqm_stage.h"
#include "lib/parse_num.h"
#include "io/run_link.h"
#include "ubctl/ubctl.h"

/* The stage is no pinned instance: status and stats have nothing of it to
 * show; its clsact filter's identity is what the role says. */
const struct ubctl_role caqm_role = {
	.name = "caqm",
	.tc = { 1, 1, false, true },
};

/* The command running: "ubctl caqm", or "ubcaqm" (its messages start so). */
static const struct optab_cmd *cmd;

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static int num(const char *opt, const char *s, unsigned long long max, unsigned long long *v)
{
	char err[200];
	uint64_t n;

	if (pn_uint(opt, s, 0, max, &n, err, sizeof(err))) {
		optab_say(cmd, "%s", err);
		return -1;
	}
	*v = n;
	return 0;
}

static void print_stats(const struct caqm *skel)
{
	struct json_object *o = caqm_stage_json(bpf_map__fd(skel->maps.caqm_budget),
						bpf_map__fd(skel->maps.caqm_stats));

	if (!o) {
		optab_say(cmd, "reading the stage's maps: %s", strerror(errno));
		return;
	}
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

/* --pin DIR: the maps under their names; the directory made if missing. The
 * directory stays locked (flock) while the stage runs: pins found in one
 * nobody holds are a killed stage's, replaced. */
static int pin_maps(const struct caqm *skel, const char *dir, bool *made, int *lock)
{
	char path[4096];
	int err;

	struct statfs fs;

	*made = !mkdir(dir, 0700);
	if (!*made && errno != EEXIST) {
		optab_say(cmd, "--pin %s: %s", dir, strerror(errno));
		return -1;
	}
	/* Said here in one line, before libbpf says it in its own words. */
	if (statfs(dir, &fs) || fs.f_type != BPF_FS_MAGIC) {
		optab_say(cmd, "--pin %s: not a directory on a bpffs", dir);
		return -1;
	}
	*lock = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*lock < 0 || flock(*lock, LOCK_EX | LOCK_NB)) {
		optab_say(cmd, "--pin %s: %s", dir,
			  *lock >= 0 && errno == EWOULDBLOCK ? "another ubcaqm's stage is pinned there" : strerror(errno));
		return -1;
	}
	/* A killed stage's pins, if any (the lock says nobody owns them): replaced,
	 * and the directory is this stage's to take away, as it was that one's. */
	snprintf(path, sizeof(path), "%s/%s", dir, CAQM_PIN_BUDGET);
	if (!unlink(path))
		*made = true;
	err = bpf_map__pin(skel->maps.caqm_budget, path);
	if (!err) {
		snprintf(path, sizeof(path), "%s/%s", dir, CAQM_PIN_STATS);
		unlink(path);
		err = bpf_map__pin(skel->maps.caqm_stats, path);
	}
	if (err)
		optab_say(cmd, "--pin %s: %s", dir, strerror(-err));
	return err ? -1 : 0;
}

static void unpin_maps(const struct caqm *skel, const char *dir, bool made)
{
	if (bpf_map__is_pinned(skel->maps.caqm_budget))
		bpf_map__unpin(skel->maps.caqm_budget, NULL);
	if (bpf_map__is_pinned(skel->maps.caqm_stats))
		bpf_map__unpin(skel->maps.caqm_stats, NULL);
	if (made)
		rmdir(dir);
}

enum { O_RATE = 1, O_THRESH, O_UNIT, O_WINDOW, O_LAST_HOP, O_ET, O_TAG_ET, O_ECN, O_PIN };

static const struct optab opts[] = {
	{ "rate-mbps", "N", "the port's rate, Mb/s (0..1000000; 0: no budget)", O_RATE, 0 },
	{ "thresh", "SIZE", "the queue threshold in bytes (default 64k, up to 1g)", O_THRESH, 0 },
	{ "hint-unit", "SIZE", "the hint unit in bytes (default 128, up to 1m)", O_UNIT, 0 },
	{ "window", "TIME", "the budget's window (bare: us; default 100us, up to 10s)", O_WINDOW, 0 },
	{ "window-us", "TIME", NULL, O_WINDOW, OPTAB_ALIAS },
	{ "last-hop", NULL, "the stage is the last hop before the receiver", O_LAST_HOP, 0 },
	{ "ub-ethertype", "NUM", "EtherType of native UB frames (default 0x88b5)", O_ET, 0 },
	{ "ethertype", "NUM", NULL, O_ET, OPTAB_ALIAS },
	{ "caqm-ethertype", "NUM", "EtherType of the Ethernet CAQM tags it answers in on the IP\n"
	  "segment (default 0x88b6, the UB2E switch's --caqm-ethertype)", O_TAG_ET, 0 },
	{ "tag-ethertype", "NUM", NULL, O_TAG_ET, OPTAB_ALIAS },
	{ "ecn", NULL, "also an ECN marking stage for IP frames", O_ECN, 0 },
	{ "pin", "DIR", "pin its maps in DIR (on a bpffs) while it runs, for ubperf\n"
	  "--stage-pin DIR", O_PIN, 0 },
	{ 0 },
};

static int cmd_caqm(int argc, char **argv);

/* One command under two names: its help and man page sections say the same. */
#define CAQM_CMD(name, fn) { \
	.path = name, \
	.summary = "run the CAQM stage at a port's TC egress until SIGINT/SIGTERM", \
	.synopsis = "DEV [--rate-mbps N] [--thresh SIZE] [--hint-unit SIZE] [--window TIME]\n" \
		    "    [--last-hop] [--ub-ethertype NUM] [--caqm-ethertype NUM] [--ecn] [--pin DIR]", \
	.about = "Runs the CAQM stage (bpf/caqm_stage.bpf.c) at the TC egress of DEV until\n" \
		 "SIGINT/SIGTERM, then prints its counters as one JSON object and detaches. The\n" \
		 "stage is attached by a tcx link (kernel 6.6 and later), which the kernel takes\n" \
		 "off however the command ends; older kernels get a clsact filter (pref 1),\n" \
		 "removed on SIGINT, SIGTERM, SIGHUP and SIGQUIT. One stage per port: a second\n" \
		 "is refused. ubctl caqm and ubcaqm are the same command.", \
	.opts = opts, \
	.flags = OPTAB_ARGS, \
	.run = fn, \
}

static const struct optab_cmd caqm_cmd = CAQM_CMD("ubctl caqm", cmd_caqm), ubcaqm_cmd = CAQM_CMD("ubcaqm", NULL);

const struct optab_cmd *const caqm_cmds[] = { &caqm_cmd, NULL };
static const struct optab_cmd *const ubcaqm_cmds[] = { &ubcaqm_cmd, NULL };

struct args {
	unsigned long long rate, th, unit, win, et, tag_et;
	bool last_hop, ecn;
	const char *pin;
};

static int opt(void *ctx, const struct optab *o, const char *v)
{
	struct args *a = ctx;
	char name[40], err[200];
	uint64_t n;
	int bad = 0;

	snprintf(name, sizeof(name), "--%s", o->name);
	switch (o->key) {
	case O_RATE: bad = num(name, v, 1000000, &a->rate); break;
	case O_THRESH:
	case O_UNIT:
		bad = pn_size(name, v, o->key == O_UNIT, o->key == O_UNIT ? 1u << 20 : 1u << 30, &n, err, sizeof(err));
		if (bad)
			optab_say(cmd, "%s", err);
		*(o->key == O_UNIT ? &a->unit : &a->th) = n;
		break;
	case O_WINDOW:
		bad = pn_time(name, v, PN_US, PN_US, 10 * PN_S, &n, err, sizeof(err));
		if (bad)
			optab_say(cmd, "%s", err);
		a->win = n / PN_US;
		break;
	case O_ET:
	case O_TAG_ET:
		bad = pn_uint(name, v, 0x600, 0xffff, &n, err, sizeof(err));
		if (bad)
			optab_say(cmd, "%s", err);
		*(o->key == O_ET ? &a->et : &a->tag_et) = n;
		break;
	case O_LAST_HOP: a->last_hop = true; break;
	case O_ECN: a->ecn = true; break;
	case O_PIN: a->pin = v; break;
	}
	return bad ? UB_EXIT_USAGE : 0;
}

/* The stage on the DEV of c's command line, until a signal ends it. Returns the exit status. */
static int caqm_run(const struct optab_cmd *c, int argc, char **argv)
{
	struct args a = { .th = 64 * 1024, .unit = 128, .win = 100, .et = 0x88b5, .tag_et = 0x88b6 };
	unsigned long long rate, th, unit, win, et, tag_et;
	bool last_hop, ecn, hook_created = false, pin_made = false;
	const char *pin, *dev;
	struct caqm *skel = NULL;
	unsigned ifindex;
	int nargs, rc = 1, err, link = -1, pin_lock = -1;
	sigset_t stops, old;
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, tc, .handle = caqm_role.tc.handle, .priority = caqm_role.tc.pref);

	cmd = c;
	rc = optab_parse(c, argc, argv, opt, &a, &nargs);
	if (rc)
		return OPTAB_STATUS(rc);
	rc = 1;
	if (nargs != 1) {
		optab_say(c, "%s (see %s --help)", nargs ? "one DEV only" : "which DEV?", c->path);
		return UB_EXIT_USAGE;
	}
	rate = a.rate, th = a.th, unit = a.unit, win = a.win, et = a.et, tag_et = a.tag_et;
	last_hop = a.last_hop, ecn = a.ecn, pin = a.pin;
	dev = argv[1];
	ifindex = if_nametoindex(dev);
	if (!ifindex) {
		optab_say(cmd, "no device '%s'", dev);
		return UB_EXIT_NOTFOUND;
	}
	/* Every catchable way to stop the stage ends in the loop below, which
	 * detaches; held until the loop waits for one, so that one that comes
	 * while it attaches is not lost. Output to a closed pipe is not a reason
	 * to leave the stage behind either. */
	sigemptyset(&stops);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++) {
		struct sigaction sa = { .sa_handler = on_signal };

		sigaction(stop_signals[i], &sa, NULL);
		sigaddset(&stops, stop_signals[i]);
	}
	signal(SIGPIPE, SIG_IGN);
	sigprocmask(SIG_BLOCK, &stops, &old);

	skel = caqm__open();
	if (!skel) {
		optab_say(cmd, "open: %s", strerror(errno));
		return 1;
	}
	/* Mb/s to bytes per microsecond: 8 Mb/s is one byte per microsecond. */
	skel->rodata->rate_bytes_per_us = (__u32)(rate / 8);
	skel->rodata->thresh = (__u32)th;
	skel->rodata->hint_unit = (__u32)unit;
	skel->rodata->window_ns = win * 1000;
	skel->rodata->last_hop = last_hop;
	skel->rodata->eth_proto = (__u16)et;
	skel->rodata->tag_proto = (__u16)tag_et;
	skel->rodata->ecn_mark = ecn;
	if ((err = caqm__load(skel))) {
		optab_say(cmd, "load: %s", strerror(-err));
		rc = UB_EXIT_KERNEL;
		goto out;
	}
	if (pin && pin_maps(skel, pin, &pin_made, &pin_lock))
		goto out;
	link = run_link_tcx(bpf_program__fd(skel->progs.caqm_stage), (int)ifindex, true,
			    bpf_program__name(skel->progs.caqm_stage));
	if (link == -EEXIST) {
		optab_say(cmd, "%s egress already runs a CAQM stage (another ubcaqm)", dev);
		rc = UB_EXIT_CONFLICT;
		goto out;
	}
	if (link < 0 && link != -EOPNOTSUPP) {
		optab_say(cmd, "attach to %s egress: %s", dev, strerror(-link));
		rc = UB_EXIT_KERNEL;
		goto out;
	}
	if (link < 0) {	/* no tcx in this kernel: a clsact filter */
		/* libbpf would add the kernel's words (an existing clsact is no error here). */
		libbpf_print_fn_t prev = libbpf_set_print(NULL);

		hook.ifindex = (int)ifindex;
		err = bpf_tc_hook_create(&hook);
		if (err && err != -EEXIST) {
			libbpf_set_print(prev);
			optab_say(cmd, "clsact on %s: %s", dev, strerror(-err));
			rc = UB_EXIT_KERNEL;
			goto out;
		}
		hook_created = !err;
		tc.prog_fd = bpf_program__fd(skel->progs.caqm_stage);
		err = bpf_tc_attach(&hook, &tc);
		libbpf_set_print(prev);
		if (err) {
			rc = err == -EEXIST ? UB_EXIT_CONFLICT : UB_EXIT_KERNEL;
			if (err == -EEXIST)
				optab_say(cmd, "%s egress already has a filter at pref 1 (another ubcaqm, or "
					"a killed one's: tc filter del dev %s egress pref 1)", dev, dev);
			else
				optab_say(cmd, "attach to %s egress: %s", dev, strerror(-err));
			goto out;
		}
		optab_say(cmd, "no tcx links in this kernel: the stage is a clsact filter (pref 1), removed "
			"on SIGINT/SIGTERM/SIGHUP/SIGQUIT but left by SIGKILL (then: tc filter del dev %s egress pref 1)",
			dev);
	}
	printf("attached to %s egress\n", dev);
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
	print_stats(skel);
	if (link >= 0) {
		close(link);
	} else {
		tc.prog_fd = tc.prog_id = 0;
		tc.flags = 0;
		bpf_tc_detach(&hook, &tc);
	}
	rc = 0;
out:
	if (pin)
		unpin_maps(skel, pin, pin_made);
	if (pin_lock >= 0)
		close(pin_lock);
	if (hook_created) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	}
	caqm__destroy(skel);
	return rc;
}

static int cmd_caqm(int argc, char **argv)
{
	return caqm_run(&caqm_cmd, argc, argv);
}

int caqm_alias_main(int argc, char **argv)
{
	optab_set_registry(ubcaqm_cmds);
	/* The generated parts of ubcaqm(8), for scripts/mkman.sh. */
	if (argc > 1 && !strcmp(argv[1], "--dump-man"))
		return optab_dump_man(argc > 2 ? argv[2] : NULL);
	return caqm_run(&ubcaqm_cmd, argc, argv);
}
