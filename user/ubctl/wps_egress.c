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
 *                        [--log-rate N] [--generic] [--zerocopy]
 *                        [--threads N] [--priority N] [--no-pin]
 *                        [--name NAME] [--quiet]
 *   ubctl wps egress stats [--json] [--name NAME]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "egress_run.h"
#include "ubctl.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static void usage_run(FILE *f)
{
	fputs("usage: ubctl wps egress run --dev DEV[,DEV...] --out-dev DEV --node-id N\n"
	      "         (--peer ADDR[=ID][,ADDR[=ID]...] ... | --any-peer) [--config FILE]\n"
	      "         [--release-timeout US|auto] [--flow-buffer PKTS] [--total-buffer PKTS]\n"
	      "         [--idle-timeout S] [--max-flows N] [--new-flows-per-sec N] [--new-flows-total-per-sec N]\n"
	      "         [--inflight-groups N] [--log-rate N] [--generic] [--zerocopy]\n"
	      "         [--threads N (reorder threads; default: the CPUs it may use, at most 8)]\n"
	      "         [--priority N (their SCHED_FIFO priority, 0: normal; default 10)] [--no-pin] [--name NAME] [--quiet]\n"
	      "       ubctl wps egress stats [--json] [--name NAME]\n", f);
}

#define OPT_CONFIG 'C'

static const struct option run_opts[] = {
	{ "dev", required_argument, 0, 'd' },
	{ "out-dev", required_argument, 0, 'o' },
	{ "node-id", required_argument, 0, 'N' },
	{ "peer", required_argument, 0, 'p' },
	{ "any-peer", no_argument, 0, 'A' },
	{ "release-timeout", required_argument, 0, 't' },
	{ "flow-buffer", required_argument, 0, 'f' },
	{ "total-buffer", required_argument, 0, 'T' },
	{ "idle-timeout", required_argument, 0, 'i' },
	{ "max-flows", required_argument, 0, 'm' },
	{ "new-flows-per-sec", required_argument, 0, 'n' },
	{ "new-flows-total-per-sec", required_argument, 0, 'F' },
	{ "inflight-groups", required_argument, 0, 'g' },
	{ "log-rate", required_argument, 0, 'l' },
	{ "generic", no_argument, 0, 'G' },
	{ "zerocopy", no_argument, 0, 'Z' },
	{ "threads", required_argument, 0, 'j' },
	{ "priority", required_argument, 0, 'P' },
	{ "no-pin", no_argument, 0, 'U' },
	{ "name", required_argument, 0, 'a' },
	{ "quiet", no_argument, 0, 'q' },
	{ "config", required_argument, 0, OPT_CONFIG },
	{ "help", no_argument, 0, 'h' },
	{ 0 },
};

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
		if (parse_u64(val, 0, 65535, &v))
			BAD("--node-id takes 0-65535, not '%s'", val);
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
		else if (parse_u64(val, 1, 10000000, &v))
			BAD("--release-timeout takes 1-10000000 (us) or auto, not '%s'", val);
		else
			o->rcfg.release_timeout_ns = v * 1000;
		break;
	case 'f':
		if (parse_u64(val, 1, 1u << 20, &v))
			BAD("--flow-buffer takes 1-1048576 packets, not '%s'", val);
		o->rcfg.flow_buffer = (uint32_t)v;
		break;
	case 'T':
		if (parse_u64(val, 1, 1u << 20, &v))
			BAD("--total-buffer takes 1-1048576 packets, not '%s'", val);
		o->rcfg.total_buffer = (uint32_t)v;
		break;
	case 'i':
		if (parse_u64(val, 1, 86400, &v))
			BAD("--idle-timeout takes 1-86400 (s), not '%s'", val);
		o->rcfg.idle_ns = v * 1000000000ull;
		break;
	case 'm':
		if (parse_u64(val, 1, 1u << 24, &v))
			BAD("--max-flows takes 1-16777216, not '%s'", val);
		o->rcfg.max_flows = (uint32_t)v;
		break;
	case 'n':
		if (parse_u64(val, 0, 100000000, &v))
			BAD("--new-flows-per-sec takes 0 (unpoliced)-100000000, not '%s'", val);
		o->rcfg.new_flows_per_sec = (uint32_t)v;
		o->rcfg.new_flows_burst = v > 1000 ? (uint32_t)v / 10 : (v ? (uint32_t)v : 1);
		break;
	case 'F':
		if (parse_u64(val, 0, 100000000, &v))
			BAD("--new-flows-total-per-sec takes 0 (unpoliced)-100000000, not '%s'", val);
		o->rcfg.new_flows_total_per_sec = (uint32_t)v;
		o->rcfg.new_flows_total_burst = v > 1000 ? (uint32_t)v / 10 : (v ? (uint32_t)v : 1);
		break;
	case 'g':
		if (parse_u64(val, 1, 32767, &v))
			BAD("--inflight-groups takes 1-32767, not '%s'", val);
		o->rcfg.inflight_groups = (uint16_t)v;
		break;
	case 'l':
		if (parse_u64(val, 0, 1000000, &v))
			BAD("--log-rate takes 0-1000000 records/s, not '%s'", val);
		o->log_per_sec = (uint32_t)v;
		break;
	case 'G':
		o->generic = true;
		break;
	case 'Z':
		o->zerocopy = true;
		break;
	case 'j':
		if (parse_u64(val, 1, WPS_EG_MAX_SHARDS, &v))
			BAD("--threads takes 1-%d, not '%s'", WPS_EG_MAX_SHARDS, val);
		o->threads = (unsigned)v;
		break;
	case 'P':
		if (parse_u64(val, 0, 99, &v))
			BAD("--priority takes 0 (normal scheduling)-99, not '%s'", val);
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
	for (const struct option *o = run_opts; o->name; o++)
		if (!strcmp(o->name, k->name))
			return run_opt(ctx, o->val, value, err, errlen);
	return -1;
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

	for (const struct option *o = run_opts; o->name; o++)
		if (o->val != OPT_CONFIG && o->val != 'h')
			keys[nk++] = (struct conf_key){ o->name, o->has_arg == required_argument };
	keys[nk] = (struct conf_key){ 0 };
	switch (conf_parse_file(path, keys, conf_apply, a, err, errlen)) {
	case 0: return 0;
	case -1: return EXIT_FAIL;
	default: return EXIT_USAGE;
	}
}

static int cmd_run(int argc, char **argv)
{
	static struct run_args args;
	struct run_args *a = &args;
	struct wps_eg_run_opts *po = &a->o;
	char netns[128], base[PATH_MAX], pin_dir[PATH_MAX + 260], *name = a->name;
	char stats[PATH_MAX], lockp[PATH_MAX], err[512], *save, *tok;
	struct sigaction sa = { .sa_handler = on_signal };
	int c, lock, rc;

	memset(a, 0, sizeof(*a));
	po->log_per_sec = 10;
	po->live = true;
	/* Real-time by default: a reorder thread descheduled past the release timeout lets a
	 * later group overtake one still on its way (where not permitted, it runs as it is). */
	po->rt_priority = 10;
	wps_reorder_cfg_defaults(&po->rcfg);
	po->rcfg.total_buffer = 16384;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", run_opts, NULL)) != -1) {
		if (c == 'h') {
			usage_run(stdout);
			return 0;
		}
		if (c == '?')
			return fail(EXIT_USAGE, "wps egress run: unknown or incomplete option %s", argv[optind - 1]);
		if (c == OPT_CONFIG)
			rc = load_config(a, optarg, err, sizeof(err));
		else
			rc = run_opt(a, c, optarg, err, sizeof(err)) ? EXIT_USAGE : 0;
		if (rc)
			return fail(rc, "wps egress run: %s", err);
	}
	if (optind < argc)
		return fail(EXIT_USAGE, "wps egress run: unexpected argument '%s'", argv[optind]);
	if (!a->devlist[0] || !po->out_dev || !a->have_node)
		return fail(EXIT_USAGE, "wps egress run: --dev, --out-dev and --node-id are required");
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
		return fail(EXIT_FAIL, "wps egress run: an instance named '%s' is already running", name);
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

/* UBCTL_STATS hook: the running egress instances under "wps_egress". */
int wps_egress_stats(struct json_object *out, const char *only)
{
	struct json_object *arr = out ? json_object_new_array() : NULL;
	int shown = egress_stats(arr, only);

	if (out)
		json_object_object_add(out, "wps_egress", arr);
	return shown;
}

static int cmd_stats_wps(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, 0, 'j' }, { "name", required_argument, 0, 'n' }, { 0 },
	};
	struct json_object *out = NULL, *arr = NULL;
	const char *only = NULL;
	int c, shown;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'j')
			out = out ? out : json_object_new_object();
		else if (c == 'n')
			only = optarg;
		else
			return fail(EXIT_USAGE, "wps egress stats: unknown option %s", argv[optind - 1]);
	}
	if (optind < argc) {
		json_object_put(out);
		return fail(EXIT_USAGE, "wps egress stats: unexpected argument '%s'", argv[optind]);
	}
	if (out) {
		arr = json_object_new_array();
		json_object_object_add(out, "wps_egress", arr);
	}
	shown = egress_stats(arr, only);
	if (only && !shown) {
		json_object_put(out);
		return fail(EXIT_FAIL, "wps egress stats: no running instance named '%s'", only);
	}
	if (out)
		json_print(out);
	else if (!shown)
		printf("no WPS egress instance is running\n");
	return 0;
}

/* argv[0] is "egress". */
int cmd_wps_egress(int argc, char **argv)
{
	if (argc < 2) {
		usage_run(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stats"))
		return cmd_stats_wps(argc - 1, argv + 1);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help")) {
		usage_run(stdout);
		return 0;
	}
	return fail(EXIT_USAGE, "wps egress: unknown command '%s' (run, stats)", argv[1]);
}
