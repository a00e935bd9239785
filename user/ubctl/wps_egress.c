// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl wps egress: run the WPS egress gateway in the foreground, and show
 * the statistics of running ones.
 *
 *   ubctl wps egress run --dev DEV[,DEV...] --out-dev DEV --node-id N
 *                        (--peer ADDR[=ID][,...] ... | --any-peer) [--config FILE]
 *                        [--release-timeout US|auto] [--flow-buffer PKTS] [--total-buffer PKTS]
 *                        [--idle-timeout S] [--max-flows N] [--new-flows-per-sec N]
 *                        [--new-flows-total-per-sec N] [--inflight-groups N]
 *                        [--log-rate N] [--generic] [--zerocopy | --copy]
 *                        [--threads N] [--priority N] [--no-pin]
 *                        [--name NAME] [--quiet]
 *   ubctl wps egress stats [--json] [--name NAME]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/conf.h"
#include "wps/egress_run.h"
#include "lib/parse_num.h"
#include "ubctl/ubctl.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

#define OPT_CONFIG 'C'

static const struct optab run_opts[] = {
	{ "dev", "DEV[,DEV...]", "the WAN ports the WPS packets arrive on (AF_XDP; required)", 'd', 0 },
	{ "out-dev", "DEV", "the port the inner packets leave by, in order (required)", 'o', 0 },
	{ "node-id", "N", "this egress node's Node ID, 0..65535 (required)", 'N', 0 },
	{ "peer", "ADDR[=ID][,...]", "an ingress node served, by its outer source address, with the\n"
	  "Ingress Node IDs it may use (ADDR alone: any); WPS packets from any\n"
	  "other source, or with an ID their source may not use, are dropped in\n"
	  "XDP and counted (bad_peer, bad_peer_node)", 'p', OPTAB_REPEAT },
	{ "any-peer", NULL, "serve WPS packets from any source (instead of --peer)", 'A', 0 },
	{ "release-timeout", "TIME|auto", "the release timer (bare: us; default auto: 3 x the largest\n"
	  "recent lateness between paths, 200us..100ms, 10ms before any)", 't', 0 },
	{ "flow-buffer", "PKTS", "packets buffered per flow (default 4096); reaching a bound\n"
	  "releases in order, never discards", 'f', 0 },
	{ "total-buffer", "PKTS", "packets buffered in all (default 16384; each peer has total /\n"
	  "peers of it)", 'T', 0 },
	{ "idle-timeout", "TIME", "flow state reclaimed after this long without packets (bare: s;\n"
	  "default 30s)", 'i', 0 },
	{ "max-flows", "N", "the flow table's size (default 65536, each peer max / peers)", 'm', 0 },
	{ "new-flows-per-sec", "N", "new flow states per second per peer (default 10000; 0:\n"
	  "unpoliced)", 'n', 0 },
	{ "new-flows-total-per-sec", "N", "new flow states per second for all peers (default 50000;\n"
	  "0: unpoliced)", 'F', 0 },
	{ "inflight-groups", "N", "a Group ID jump beyond this is suspect: forwarded at once,\n"
	  "counted, not buffered (default 1024)", 'g', 0 },
	{ "log-rate", "N", "validation-failure log lines per second and CPU (default 10)", 'l', 0 },
	{ "generic", NULL, "XDP in generic (skb) mode", 'G', 0 },
	{ "zerocopy", NULL, "zero-copy AF_XDP, or fail (default: copy mode, as the devices and\n"
	  "--out-dev share one UMEM, and --out-dev runs no XDP of its own; not with --generic)", 'Z', 0 },
	{ "copy", NULL, "copy-mode AF_XDP (the default)", 'K', 0 },
	{ "threads", "N", "reorder threads (default: the CPUs it may use, at most 8)", 'j', 0 },
	{ "priority", "N", "the threads' SCHED_FIFO priority (default 10; 0: normal\n"
	  "scheduling)", 'P', 0 },
	{ "no-pin", NULL, "leave the threads unpinned (default: thread k on the k-th CPU)", 'U', 0 },
	{ "name", "NAME", "instance name (default [NETNS:]DEV[+DEV...]-OUT-DEV)", 'a', 0 },
	{ "quiet", NULL, "no live line", 'q', 0 },
	{ "config", "FILE", "options from FILE: one \"key value\" per line, keys the long\n"
	  "options without \"--\", flags alone, '#' comments; applied where\n"
	  "--config stands (later options win)", OPT_CONFIG, 0 },
	{ 0 },
};

static const struct optab stats_opts[] = {
	UBCTL_OPT_JSON('j'),
	{ "name", "NAME", "only the instance NAME", 'n', 0 },
	{ 0 },
};

static int cmd_run(int argc, char **argv);
static int cmd_stats_wps(int argc, char **argv);

static const struct optab_cmd egress_cmd = {
	.path = "ubctl wps egress",
	.summary = "the WPS egress gateway: reorders what the ingress sprayed (foreground)",
}, run_cmd = {
	.path = "ubctl wps egress run",
	.summary = "run the WPS egress in the foreground until SIGINT/SIGTERM",
	.synopsis = "--dev DEV[,DEV...] --out-dev DEV --node-id N\n"
		    "    (--peer ADDR[=ID][,ADDR[=ID]...] ... | --any-peer) [OPTIONS]\n"
		    "--config FILE [OPTIONS]",
	.about = "The WPS egress (draft-wps-ipv6-option) takes WPS packets off --dev by AF_XDP,\n"
		 "puts each flow's groups back in order and sends the inner packets out of\n"
		 "--out-dev. Without --peer it refuses to start unless --any-peer is given.\n"
		 "Its counters: ubctl wps egress stats, ubctl stats.",
	.opts = run_opts,
	.run = cmd_run,
}, egress_stats_cmd = {
	.path = "ubctl wps egress stats",
	.summary = "the counters of the running egress instances",
	.synopsis = "[--json] [--name NAME]",
	.opts = stats_opts,
	.run = cmd_stats_wps,
};

const struct optab_cmd *const wps_egress_cmds[] = { &egress_cmd, &run_cmd, &egress_stats_cmd, NULL };

struct run_args {
	struct wps_eg_run_opts o;
	char devlist[512], name[256];
	bool have_node;
};

/* One option, from the command line or the config file. 0, or -1 with one line in err. */
static int run_opt(struct run_args *a, int c, const char *val, char *err, size_t errlen)
{
	struct wps_eg_run_opts *o = &a->o;
	uint64_t v;

#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)
	switch (c) {
	case 'd':
		snprintf(a->devlist, sizeof(a->devlist), "%s", val);
		break;
	case 'o':
		o->out_dev = val;
		break;
	case 'N':
		if (pn_uint("--node-id", val, 0, 65535, &v, err, errlen))
			return -1;
		o->node_id = (uint16_t)v;
		a->have_node = true;
		break;
	case 'p':
		if (wps_eg_peers_parse(&o->peers, val, err, errlen))
			return -1;
		break;
	case 'A':
		o->any_peer = true;
		break;
	case 't':
		if (!strcmp(val, "auto"))
			o->rcfg.release_timeout_ns = 0;
		else if (pn_time("--release-timeout", val, PN_US, PN_US, 10 * PN_S, &v, err, errlen))
			return -1;
		else
			o->rcfg.release_timeout_ns = v;
		break;
	case 'f':
		if (pn_uint("--flow-buffer", val, 1, 1u << 20, &v, err, errlen))
			return -1;
		o->rcfg.flow_buffer = (uint32_t)v;
		break;
	case 'T':
		if (pn_uint("--total-buffer", val, 1, 1u << 20, &v, err, errlen))
			return -1;
		o->rcfg.total_buffer = (uint32_t)v;
		break;
	case 'i':
		if (pn_time("--idle-timeout", val, PN_S, PN_S, 86400 * PN_S, &v, err, errlen))
			return -1;
		o->rcfg.idle_ns = v;
		break;
	case 'm':
		if (pn_uint("--max-flows", val, 1, 1u << 24, &v, err, errlen))
			return -1;
		o->rcfg.max_flows = (uint32_t)v;
		break;
	case 'n':
		if (pn_uint("--new-flows-per-sec", val, 0, 100000000, &v, err, errlen))
			return -1;
		o->rcfg.new_flows_per_sec = (uint32_t)v;
		o->rcfg.new_flows_burst = v > 1000 ? (uint32_t)v / 10 : (v ? (uint32_t)v : 1);
		break;
	case 'F':
		if (pn_uint("--new-flows-total-per-sec", val, 0, 100000000, &v, err, errlen))
			return -1;
		o->rcfg.new_flows_total_per_sec = (uint32_t)v;
		o->rcfg.new_flows_total_burst = v > 1000 ? (uint32_t)v / 10 : (v ? (uint32_t)v : 1);
		break;
	case 'g':
		if (pn_uint("--inflight-groups", val, 1, 32767, &v, err, errlen))
			return -1;
		o->rcfg.inflight_groups = (uint16_t)v;
		break;
	case 'l':
		if (pn_uint("--log-rate", val, 0, 1000000, &v, err, errlen))
			return -1;
		o->log_per_sec = (uint32_t)v;
		break;
	case 'G':
		o->generic = true;
		break;
	case 'Z': case 'K':
		if (o->xsk_mode != XSK_MODE_AUTO) {
			snprintf(err, errlen, "--zerocopy or --copy, not both");
			return -1;
		}
		o->xsk_mode = c == 'Z' ? XSK_MODE_ZEROCOPY : XSK_MODE_COPY;
		break;
	case 'j':
		if (pn_uint("--threads", val, 1, WPS_EG_MAX_SHARDS, &v, err, errlen))
			return -1;
		o->threads = (unsigned)v;
		break;
	case 'P':
		if (pn_uint("--priority", val, 0, 99, &v, err, errlen))
			return -1;
		o->rt_priority = (unsigned)v;
		break;
	case 'U':
		o->no_pin = true;
		break;
	case 'a':
		if (!*val || strchr(val, '/') || strlen(val) > 200)
			BAD("bad --name '%s'", val);
		snprintf(a->name, sizeof(a->name), "%s", val);
		break;
	case 'q':
		o->live = false;
		break;
	default:
		BAD("unknown option");
	}
#undef BAD
	return 0;
}

static int conf_apply(void *ctx, const struct conf_key *k, const char *value, char *err, size_t errlen)
{
	const struct optab *o = optab_find(run_opts, k->name);

	return o ? run_opt(ctx, o->key, value, err, errlen) : -1;
}

/*
 * --config FILE: one "key value" per line, the keys the long options without
 * their dashes ("peer fd00::2=1", "any-peer"); entries apply where --config
 * stands among the options. The text is kept for the life of the command
 * (values point into it).
 */
static int load_config(struct run_args *a, const char *path, char *err, size_t errlen)
{
	struct conf_key keys[sizeof(run_opts) / sizeof(run_opts[0])];
	size_t nk = 0;

	for (const struct optab *o = run_opts; o->name; o++)
		if (o->key != OPT_CONFIG)	/* no nesting */
			keys[nk++] = (struct conf_key){ o->name, o->arg != NULL };
	keys[nk] = (struct conf_key){ 0 };
	switch (conf_parse_file(path, keys, conf_apply, a, err, errlen)) {
	case 0: return 0;
	case -1: return EXIT_FAIL;
	default: return EXIT_USAGE;
	}
}

/* An option of the command line: --config reads its file where it stands. */
static int run_optab(void *ctx, const struct optab *o, const char *val)
{
	char err[512];
	int rc;

	if (o->key == OPT_CONFIG)
		rc = load_config(ctx, val, err, sizeof(err));
	else
		rc = run_opt(ctx, o->key, val, err, sizeof(err)) ? EXIT_USAGE : 0;
	return rc ? fail(rc, "wps egress run: %s", err) : 0;
}

static int cmd_run(int argc, char **argv)
{
	static struct run_args args;
	struct run_args *a = &args;
	struct wps_eg_run_opts *po = &a->o;
	char netns[128], base[PATH_MAX], pin_dir[PATH_MAX + 260], *name = a->name;
	char stats[PATH_MAX], lockp[PATH_MAX], err[512], *save, *tok;
	struct sigaction sa = { .sa_handler = on_signal };
	int lock, rc;

	memset(a, 0, sizeof(*a));
	po->log_per_sec = 10;
	po->live = true;
	/* Real-time by default: a reorder thread descheduled past the release timeout lets a
	 * later group overtake one still on its way (where not permitted, it runs as it is). */
	po->rt_priority = 10;
	wps_reorder_cfg_defaults(&po->rcfg);
	po->rcfg.total_buffer = 16384;
	rc = optab_parse(&run_cmd, argc, argv, run_optab, a, NULL);
	if (rc)
		return OPTAB_STATUS(rc);
	if (!a->devlist[0] || !po->out_dev || !a->have_node)
		return fail(EXIT_USAGE, "wps egress run: --dev, --out-dev and --node-id are required");
	if (po->generic && po->xsk_mode == XSK_MODE_ZEROCOPY)
		return fail(EXIT_USAGE, "wps egress run: --zerocopy needs native XDP (a driver's zero-copy AF_XDP "
			    "runs behind its own XDP only): not with --generic");
	if (po->any_peer && po->peers.n)
		return fail(EXIT_USAGE, "wps egress run: --peer and --any-peer exclude each other");
	if (!po->any_peer && !po->peers.n)
		return fail(EXIT_USAGE, "wps egress run: no --peer ADDR[=ID] (the ingress nodes served); "
			    "--any-peer serves WPS packets from any source");
	for (tok = strtok_r(a->devlist, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (po->ndevs == WPS_EG_MAX_DEVS)
			return fail(EXIT_USAGE, "wps egress run: at most %d devices in --dev", WPS_EG_MAX_DEVS);
		po->devs[po->ndevs++] = tok;
	}
	if (!po->ndevs)
		return fail(EXIT_USAGE, "wps egress run: --dev names no device");
	if (po->rcfg.flow_buffer > po->rcfg.total_buffer)
		po->rcfg.flow_buffer = po->rcfg.total_buffer;

	if (!name[0]) {
		size_t len;

		pin_netns_name(netns, sizeof(netns));
		len = (size_t)snprintf(name, sizeof(a->name), "%s%s", netns, netns[0] ? ":" : "");
		for (int i = 0; i < po->ndevs && len < sizeof(a->name); i++)
			len += (size_t)snprintf(name + len, sizeof(a->name) - len, "%s%s", i ? "+" : "", po->devs[i]);
		if (len < sizeof(a->name))
			snprintf(name + len, sizeof(a->name) - len, "-%s", po->out_dev);
	}
	/* One instance per name: a lock held for the life of the process. */
	if (mkdir("/run/ubxdp", 0755) && errno != EEXIST)
		return fail(EXIT_FAIL, "wps egress run: /run/ubxdp: %s", strerror(errno));
	if (mkdir(WPS_EG_STATS_DIR, 0755) && errno != EEXIST)
		return fail(EXIT_FAIL, "wps egress run: %s: %s", WPS_EG_STATS_DIR, strerror(errno));
	snprintf(lockp, sizeof(lockp), "%s/%s.lock", WPS_EG_STATS_DIR, name);
	snprintf(stats, sizeof(stats), "%s/%s.json", WPS_EG_STATS_DIR, name);
	lock = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB))
		return fail(UB_EXIT_CONFLICT, "wps egress run: an instance named '%s' is already running", name);
	if (pin_role_dir("wps_egress", base, sizeof(base), err, sizeof(err)))
		return fail(EXIT_FAIL, "wps egress run: %s", err);
	snprintf(pin_dir, sizeof(pin_dir), "%s/%s", base, name);
	pin_remove_dir(pin_dir);	/* stale pins of a killed run: the lock says nobody owns them */
	if (pin_mkdir_p(pin_dir))
		return fail(EXIT_FAIL, "wps egress run: %s: %s", pin_display(pin_dir), strerror(errno));
	po->pin_dir = pin_dir;
	po->stats_path = stats;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (po->live)
		fprintf(stderr, "wps egress '%s': node %u, %d domain device(s) -> %s, %s; SIGINT/SIGTERM stops\n",
			name, po->node_id, po->ndevs, po->out_dev, po->any_peer ? "any peer" : "peers given");
	rc = wps_eg_run(po, &stop, err, sizeof(err));
	pin_remove_dir(pin_dir);
	unlink(lockp);
	close(lock);
	if (rc)
		return fail(EXIT_FAIL, "wps egress run: %s", err);
	return 0;
}

/* ---- stats ------------------------------------------------------------ */

/* JSON as key/value lines: the run loop writes flat objects and arrays of flat objects (peers, flows). */
static void print_flat(const char *json)
{
	char key[64] = "", str[64], arr[64] = "";
	int depth = 0, in_arr = 0;

	for (const char *p = json; *p; p++) {
		if (*p == '"') {
			const char *q = strchr(p + 1, '"'), *b = p;
			size_t n;

			if (!q)
				return;
			n = (size_t)(q - p - 1) < sizeof(str) - 1 ? (size_t)(q - p - 1) : sizeof(str) - 1;
			memcpy(str, p + 1, n);
			str[n] = '\0';
			p = q;
			while (b > json && (b[-1] == ' '))
				b--;
			if (b > json && b[-1] == ':') {	/* a string value */
				if (in_arr)
					printf(" %s=%s", key, str);
				else
					printf("    %-24s %s\n", key, str);
			} else {
				memcpy(key, str, n + 1);
			}
		} else if (*p == '{') {
			depth++;
			if (depth == 2 && !in_arr)
				printf("  %s\n", key);
			else if (in_arr)
				printf("    %.*s", (int)(strlen(arr) > 1 ? strlen(arr) - 1 : strlen(arr)), arr);
		} else if (*p == '}') {
			depth--;
			if (in_arr && depth == 1)
				printf("\n");
		} else if (*p == '[') {
			in_arr = 1;
			snprintf(arr, sizeof(arr), "%s", key);
			printf("  %s\n", arr);
		} else if (*p == ']') {
			in_arr = 0;
		} else if (*p == ':' && (p[1] == '-' || (p[1] >= '0' && p[1] <= '9'))) {
			char *end;
			unsigned long long v = strtoull(p + 1, &end, 10);

			if (in_arr)
				printf(" %s=%llu", key, v);
			else
				printf("    %-24s %llu\n", key, v);
			p = end - 1;
		}
	}
}

/*
 * Every running instance (or `only`): text when arr is NULL, else one object
 * per instance added to arr. Returns how many were shown.
 */
static int egress_stats(struct json_object *arr, const char *only)
{
	struct dirent *de;
	DIR *dir = opendir(WPS_EG_STATS_DIR);
	int shown = 0;

	while (dir && (de = readdir(dir))) {
		char path[PATH_MAX], name[256], *buf;
		size_t len = strlen(de->d_name);
		FILE *f;
		long n;

		if (len < 6 || strcmp(de->d_name + len - 5, ".json"))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(len - 5), de->d_name);
		if (only && strcmp(only, name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", WPS_EG_STATS_DIR, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		rewind(f);
		buf = n > 0 ? calloc(1, (size_t)n + 1) : NULL;
		if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			fclose(f);
			continue;
		}
		fclose(f);
		if (arr) {
			struct json_object *o = json_tokener_parse(buf);

			if (!o) {	/* caught mid-rewrite: skip it rather than print half */
				free(buf);
				continue;
			}
			json_add_str(o, "instance", name);
			json_object_array_add(arr, o);
		} else {
			buf[strcspn(buf, "\n")] = '\0';
			printf("wps_egress %s\n", name);
			print_flat(buf);
		}
		free(buf);
		shown++;
	}
	if (dir)
		closedir(dir);
	return shown;
}

/* The role's stats: the running egress instances under "wps_egress". */
static int wps_egress_stats(struct json_object *out, const char *only)
{
	struct json_object *arr = out ? json_object_new_array() : NULL;
	int shown = egress_stats(arr, only);

	if (out)
		json_object_object_add(out, "wps_egress", arr);
	return shown;
}

const struct ubctl_role wps_egress_role = {
	.name = "wps egress",
	.key = "wps_egress",
	.pin_dir = "wps_egress",
	.lock_dir = WPS_EG_STATS_DIR,
	.stats = wps_egress_stats,
};

struct stats_args {
	struct json_object *out;
	const char *only;
};

static int stats_opt(void *ctx, const struct optab *o, const char *val)
{
	struct stats_args *a = ctx;

	if (o->key == 'j')
		a->out = a->out ? a->out : json_object_new_object();
	else
		a->only = val;
	return 0;
}

static int cmd_stats_wps(int argc, char **argv)
{
	struct stats_args args = { 0 };
	struct json_object *out, *arr = NULL;
	const char *only;
	int shown, rc = optab_parse(&egress_stats_cmd, argc, argv, stats_opt, &args, NULL);

	out = args.out;
	only = args.only;
	if (rc) {
		json_object_put(out);
		return OPTAB_STATUS(rc);
	}
	if (out) {
		arr = json_object_new_array();
		json_object_object_add(out, "wps_egress", arr);
	}
	shown = egress_stats(arr, only);
	if (only && !shown) {
		json_object_put(out);
		return fail(UB_EXIT_NOTFOUND, "wps egress stats: no running instance named '%s'", only);
	}
	if (out)
		json_print(out);
	else if (!shown)
		printf("no WPS egress instance is running\n");
	return 0;
}
