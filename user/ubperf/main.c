// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubperf — UB transport benchmark between two UBoE endpoints.
 *
 *   ubperf server --dev DEV [options]
 *   ubperf client --dev DEV --peer ADDR [options]
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ubperf/ctl.h"
#include "lib/optab.h"
#include "lib/parse_num.h"
#include "ubperf/ubperf.h"
#include "ub_wire.h"
#include "wps/wps_cfg.h"

static int bad(const char *what, const char *val)
{
	fprintf(stderr, "ubperf: bad %s '%s' (see ubperf --help)\n", what, val);
	return 2;
}

/* A size (k, m, g: x1024) or a time (bare: seconds) the way every tool reads
 * them (parse_num.h); 0 on success, else one line and the usage status. */
static char num_err[256];

static int parse_size(const char *s, uint64_t *out)
{
	return pn_size("", s, 0, UINT64_MAX, out, num_err, sizeof(num_err));
}

static int parse_time(const char *s, uint64_t bare, uint64_t min, uint64_t max, uint64_t *ns)
{
	return pn_time("", s, bare, min, max, ns, num_err, sizeof(num_err));
}

static int parse_secs(const char *s, double *out)
{
	uint64_t ns;

	if (parse_time(s, PN_S, 0, 1000000 * PN_S, &ns))
		return -1;
	*out = (double)ns / 1e9;
	return 0;
}

/* Long-only options: codes past any letter, which other options may take. */
enum { OPT_INTERVAL = 0x100, OPT_STAGE_PIN, OPT_VL, OPT_COPY, OPT_WORKERS };

/* The native-only options, applied once the whole command line is read
 * (getopt takes them in any order, --native maybe last). */
struct native_args {
	bool on, pid_set, rt_set, vl_set, et_set;
	uint32_t pid;
	uint8_t rt, vl;
	uint16_t et;
};

static int native_opt(int c, const char *arg, struct ubperf_opts *o, struct native_args *na)
{
	unsigned long v;
	char err[128];

	switch (c) {
	case 'N':
		na->on = true;
		return 0;
	case 'I':
		if (parse_uint(arg, (size_t)-1, UB_PID_MASK, &v) || v == UB_PID_INVALID)
			return bad("--partition (1 .. 16777215)", arg);
		na->pid = (uint32_t)v;
		na->pid_set = true;
		return 0;
	case 'T':
		if (parse_uint(arg, (size_t)-1, 3, &v))
			return bad("--rt (0 .. 3)", arg);
		na->rt = (uint8_t)v;
		na->rt_set = true;
		return 0;
	case OPT_VL:
		if (parse_uint(arg, (size_t)-1, 15, &v))
			return bad("--vl (0 .. 15)", arg);
		na->vl = (uint8_t)v;
		na->vl_set = true;
		return 0;
	case 'E':
		if (parse_uint(arg, (size_t)-1, 0xffff, &v) || v < 0x0600)
			return bad("--ub-ethertype (0x0600 .. 0xffff)", arg);
		na->et = (uint16_t)v;
		na->et_set = true;
		return 0;
	default:
		if (wps_parse_mac(arg, o->nexthop_mac, err, sizeof(err)))
			return bad("--nexthop-mac", arg);
		o->nexthop_mac_set = true;
		return 0;
	}
}

/* o->native from the options, or one line when they came without --native. */
static int native_finish(struct ubperf_opts *o, const struct native_args *na)
{
	if (!na->on) {
		if (na->pid_set || na->rt_set || na->vl_set || na->et_set) {
			fprintf(stderr, "ubperf: --partition, --rt, --vl and --ub-ethertype need --native\n");
			return 2;
		}
		return 0;
	}
	ep_native_init(&o->native);
	if (na->pid_set)
		o->native.pid = na->pid;
	if (na->rt_set)
		o->native.rt = na->rt;
	if (na->vl_set)
		o->native.vl = na->vl;
	if (na->et_set)
		o->native.ethertype = na->et;
	return 0;
}

static int parse_rto(const char *s, uint64_t *ns)
{
	static const struct { const char *n; uint64_t v; } t[] = {
		{ "512us", TP_RTO_512US }, { "16ms", TP_RTO_16MS }, { "128ms", TP_RTO_128MS },
		{ "4s", TP_RTO_4S }, { "dynamic", 0 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(s, t[i].n)) {
			*ns = t[i].v;
			return 0;
		}
	return -1;
}

/* --dev A,B,...: at most UBPERF_MAX_DEVS names, none empty, none twice. */
static int split_devs(struct ubperf_opts *o)
{
	static char copy[1024];
	char *save = NULL, *t;

	if (strlen(o->dev) >= sizeof(copy))
		return bad("--dev", o->dev);
	strcpy(copy, o->dev);
	if (!*copy || copy[0] == ',' || copy[strlen(copy) - 1] == ',' || strstr(copy, ",,"))
		return bad("--dev (DEV[,DEV...])", o->dev);
	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (o->ndevs == UBPERF_MAX_DEVS) {
			fprintf(stderr, "ubperf: --dev names at most %d ports\n", UBPERF_MAX_DEVS);
			return 2;
		}
		for (uint32_t k = 0; k < o->ndevs; k++)
			if (!strcmp(o->devs[k], t)) {
				fprintf(stderr, "ubperf: --dev names %s twice\n", t);
				return 2;
			}
		o->devs[o->ndevs++] = t;
	}
	if (o->ndevs > EP_MAX_MEMBERS && o->mode == TP_MODE_CTP) {
		fprintf(stderr, "ubperf: --mode ctp binds at most %d ports as one entity\n",
			EP_MAX_MEMBERS);
		return 2;
	}
	return 0;
}

/*
 * The client's UB MTU: --mtu, or by default the largest every --dev carries
 * with the UBoE (or native) headers to a peer of --peer's IP version, and
 * the path beyond it as far as the kernel knows it (ep_path_mtu: a route's
 * mtu, a learned path MTU; an IP packet there, with no LPH or NTH), and
 * fits a UMEM frame (ep_ub_mtu_fit). A --mtu one of them cannot carry is
 * one line here, before anything is sent. The hello carries the MTU; the
 * server refuses it, in one line on both sides, when its own devices (or
 * its own --mtu) do not agree (server.c) -- unless neither side was given
 * --mtu: then the client sets up again at the server's, the smaller
 * (client.c).
 */
static int mtu_finish(struct ubperf_opts *o, bool native)
{
	uint32_t best = 0, dev_mtu = 0, m, pm, pf, fit, frame = ep_frame_bound();
	char why[96] = "", what[160];
	const char *dev = NULL;
	bool path = false, by_path;
	uint8_t ver, ip[16];
	char err[256];

	if (o->server || ctl_parse_addr(o->peer, &ver, ip))
		return 0;	/* the server: from its client; a bad --peer: said later */
	for (uint32_t k = 0; k < o->ndevs; k++) {
		if (ep_dev_mtu(o->devs[k], &m, err, sizeof(err))) {
			fprintf(stderr, "ubperf: %s\n", err);
			return 2;
		}
		fit = ep_ub_mtu_fit(m, native, ver, frame);
		pf = ep_path_ub_mtu(o->devs[k], ver, ip, &pm, NULL, 0);
		by_path = pf < fit;
		if (by_path) {
			fit = pf;
			m = pm;
		}
		if (!dev || fit < best) {
			best = fit;
			dev = o->devs[k];
			dev_mtu = m;
			path = by_path;
		}
	}
	if (o->mtu > best || !best) {
		if (frame)
			snprintf(why, sizeof(why), " (and a %u-byte UMEM frame: this kernel's AF_XDP has no multi-buffer)",
				 frame);
		if (path)
			snprintf(what, sizeof(what), "the path to %s by %s: the path MTU the kernel knows (route or learned) %u",
				 o->peer, dev, dev_mtu);
		else
			snprintf(what, sizeof(what), "%s: its MTU %u", dev, dev_mtu);
		fprintf(stderr, "ubperf: %s%u does not fit %s carries a UB MTU of %u at most with the %s headers%s\n",
			o->mtu ? "--mtu " : "a UB MTU of ", o->mtu ? o->mtu : EP_UB_MTU_MIN, what,
			best, path ? "UBoE" : native ? "native UB" : "UBoE", why);
		return 2;
	}
	o->mtu_default = !o->mtu;
	if (!o->mtu)
		o->mtu = best;
	return 0;
}

/* UTP's rule: a message is one packet (the UTPH has no PSN to reassemble
 * by); --size defaults to the MTU. The server takes the test from its client. */
static int utp_finish(struct ubperf_opts *o, bool size_set)
{
	if (o->mode != TP_MODE_UTP || o->server)
		return 0;
	if (!size_set) {
		o->size = o->mtu;
		o->size_from_mtu = true;
	} else if (o->size > o->mtu) {
		fprintf(stderr, "ubperf: --mode utp sends each message in one packet (the UTPH has no PSN to reassemble by): --size %u is more than the UB MTU %u\n",
			o->size, o->mtu);
		return 2;
	}
	return 0;
}

/* CTP's rules: native only, one packet per operation, the TAACK a packet. The
 * server takes the test from its client and --mode ctp only to bind an entity. */
static int ctp_finish(struct ubperf_opts *o, bool native, bool size_set, bool ta_set)
{
	if (o->mode != TP_MODE_CTP)
		return 0;
	if (!native) {
		fprintf(stderr, "ubperf: --mode ctp needs --native (UBoE never carries CTP)\n");
		return 2;
	}
	if (o->cc != TP_CC_NONE && o->cc != TP_CC_DCQCN) {
		fprintf(stderr, "ubperf: --cc %s needs transport acks (TPACK-CC, CETPH), which --mode ctp has none of: --cc dcqcn or none\n",
			tp_cc_algo_name(o->cc));
		return 2;
	}
	if (o->server)
		return 0;
	if (ta_set && o->ta == TP_TA_ROL) {
		fprintf(stderr, "ubperf: --mode ctp has no TPACK to carry the TAACK: --ta roi or rot\n");
		return 2;
	}
	if (!ta_set)
		o->ta = TP_TA_ROI;
	if (!size_set) {
		o->size = o->mtu;
		o->size_from_mtu = true;
	} else if (o->size > o->mtu) {
		fprintf(stderr, "ubperf: --mode ctp sends each operation in one packet: --size %u is more than the UB MTU %u\n",
			o->size, o->mtu);
		return 2;
	}
	return 0;
}

/*
 * --workers: what the device can keep busy by default; one where the run
 * needs a single core per side (an entity, several ports, a per-packet
 * group, samples across channels).
 */
static int workers_finish(struct ubperf_opts *o)
{
	bool one = o->ndevs > 1 || o->mode == TP_MODE_CTP || o->lb == TPG_LB_PACKET || o->interval_ns;

	if (o->workers > 1 && one) {
		fprintf(stderr, "ubperf: --workers %u: several --dev, --mode ctp, --lb packet and --interval run on one\n",
			o->workers);
		return 2;
	}
	if (!o->workers)
		o->workers = one ? 1 : ep_workers_for(o->devs[0]);
	if (o->workers > UBPERF_MAX_DEVS)	/* a port each (struct run) */
		o->workers = UBPERF_MAX_DEVS;
	if (!o->server && o->workers > o->channels)	/* the server's channels: its client's */
		o->workers = o->channels;
	return 0;
}

/* The options of ubperf server and client: the same table, --peer the client's only. */
#define UBPERF_OPTS(...) \
	{ "dev", "DEV[,DEV...]", "the port(s): channel i on port i mod N (required); with\n" \
	  "--mode ctp the ports are one entity, --lb choosing the member", 'd', 0 }, \
	__VA_ARGS__ \
	{ "mode", "M", "rtp-sr (default), rtp-gbn, rtp-gbn-fast, utp (one packet per\n" \
	  "message: --size <= --mtu, default --mtu), ctp (--native: one packet\n" \
	  "per operation; --rto is then the transaction timeout, dynamic: 1s)", 'm', 0 }, \
	{ "op", "OP", "send (default), write, read", 'o', 0 }, \
	{ "ta", "T", "rol (default), roi, rot: where the TAACK travels", 'a', 0 }, \
	{ "size", "SIZE", "message bytes (default 64k, up to 64m)", 's', 0 }, \
	{ "time", "TIME", "run this long (bare: s; default 10s)", 't', 0 }, \
	{ "count", "N", "or send N messages (k, m suffixes)", 'n', 0 }, \
	{ "channels", "N", "TP channels (default 1)", 'c', 0 }, \
	{ "depth", "N", "operations outstanding per channel (default 8, up to 256)", 'D', 0 }, \
	{ "mtu", "N", "UB MTU, TP payload bytes per packet: 256, 512, 1024, 2048, 4096\n" \
	  "(default: the largest the devices on both ends, and the path to\n" \
	  "the peer as far as the kernel knows it (a route's mtu, a learned\n" \
	  "path MTU), carry with the UBoE headers, agreed in the hello; a\n" \
	  "--mtu the other end does not take is refused)", 'M', 0 }, \
	{ "window", "N", "packets in flight per channel (default 256)", 'w', 0 }, \
	{ "rto", "R", "512us, 16ms, 128ms, 4s (static) or dynamic (default)", 'r', 0 }, \
	{ "rto-min", "TIME", "dynamic RTO: floor of its base (bare: us; default: the core's)", 'R', 0 }, \
	{ "wait", "TIME", "how long to wait for the peer (bare: s; default 5s; server: for\n" \
	  "a client, 0 = forever)", 'W', 0 }, \
	{ "stall", "TIME", "no completion for this long means the peer is gone, and no\n" \
	  "channel fails by its retry limit sooner (bare: s; default 3s;\n" \
	  "server: a client whose setup stays silent this long is\n" \
	  "dropped and the server waits for a new one)", 'S', 0 }, \
	{ "generic", NULL, "XDP in generic (SKB) mode", 'g', 0 }, \
	{ "zerocopy", NULL, "AF_XDP zero-copy, or fail (default: zero-copy where the driver\n" \
	  "has it, copy mode otherwise; copy with --generic, refused with it, and copy\n" \
	  "for a --mode ctp entity of several --dev, which share one UMEM)", 'z', 0 }, \
	{ "copy", NULL, "AF_XDP copy mode even where the driver has zero-copy", OPT_COPY, 0 }, \
	{ "native", NULL, "native UB frames on an emulated UB port (docs/WIRE.md section\n" \
	  "5), not UBoE", 'N', 0 }, \
	{ "partition", "PID", "native: the NTH's Partition ID (default 1)", 'I', 0 }, \
	{ "rt", "N", "native: the LPH's RT, 0..3 (default 2, per-flow/shortest)", 'T', 0 }, \
	{ "vl", "N", "native: the LPH's virtual lane, 0..15 (default 0); with --mode\n" \
	  "ctp --cc dcqcn the rate context is per {peer entity, VL}", OPT_VL, 0 }, \
	{ "ub-ethertype", "NUM", "native: the EtherType (default 0x88b5)", 'E', 0 }, \
	{ "nexthop-mac", "MAC", "the next hop's MAC instead of ARP/ND", 'X', 0 }, \
	{ "json", NULL, "one JSON summary object on stdout", 'j', OPTAB_SHORT('j') }, \
	{ "verbose", NULL, "also every non-zero transport counter", 'v', 0 }, \
	{ "cc", "CC", "congestion control per channel: none (default), ldcp, dcqcn,\n" \
	  "caqm (--native only, UBoE has no CCI); --mode ctp: dcqcn or none,\n" \
	  "one instance per {peer entity, VL}", 'C', 0 }, \
	{ "lb", "LB", "the channels as one group: flow (default: a port each), packet", 'L', 0 }, \
	{ "interval", "TIME", "this often: goodput and each channel's rate or window (bare:\n" \
	  "ms)", OPT_INTERVAL, 0 }, \
	{ "stage-pin", "DIR", "report the queue high water of the marking stage pinned in DIR\n" \
	  "(ubcaqm --pin DIR)", OPT_STAGE_PIN, 0 }, \
	{ "workers", "N", "threads, each with its own sockets on every queue and channel\n" \
	  "i on thread i mod N (default: the CPUs it may run on, as taskset\n" \
	  "sets them, or the device's rx queues, the fewer, up to 8; 1 with\n" \
	  "several --dev, --mode ctp, --lb packet, --interval)", OPT_WORKERS, 0 }, \
	{ 0 }

static const struct optab client_opts[] = {
	UBPERF_OPTS({ "peer", "ADDR", "the server's IPv4 or IPv6 address (required)", 'p', 0 },)
}, server_opts[] = {
	UBPERF_OPTS()
};

static int run_server(int argc, char **argv);
static int run_client(int argc, char **argv);

static const struct optab_cmd ubperf_cmd = {
	.path = "ubperf",
	.summary = "UB transport benchmark between two UBoE (or native UB) endpoints",
	.about = "The server waits for a client and takes the test from it; the client runs it\n"
		 "and prints goodput and latency (--json: one object).",
}, server_cmd = {
	.path = "ubperf server",
	.summary = "wait for clients and answer their tests",
	.synopsis = "--dev DEV[,DEV...] [OPTIONS]",
	.opts = server_opts,
	.run = run_server,
}, client_cmd = {
	.path = "ubperf client",
	.summary = "run a test against a server",
	.synopsis = "--dev DEV[,DEV...] --peer ADDR [OPTIONS]",
	.opts = client_opts,
	.run = run_client,
};

static const struct optab_cmd *const ubperf_cmds[] = { &ubperf_cmd, &server_cmd, &client_cmd, NULL };

struct args {
	struct ubperf_opts o;
	struct native_args nat;
	bool wait_set, size_set, ta_set;
};

static int opt(void *ctx, const struct optab *t, const char *optarg)
{
	struct args *a = ctx;
	struct ubperf_opts *o = &a->o;
	struct native_args *nat = &a->nat;
	int c = t->key;
	uint64_t v;

	switch (c) {
	case 'd': o->dev = optarg; break;
	case 'p': o->peer = optarg; break;
	case 'C':
		if (tp_cc_algo_parse(optarg, &o->cc))
			return bad("--cc", optarg);
		break;
	case 'L':
		if (tpg_lb_parse(optarg, &o->lb))
			return bad("--lb", optarg);
		break;
	case OPT_INTERVAL:
		if (parse_time(optarg, PN_MS, PN_MS, 3600 * PN_S, &v))
			return bad("--interval (a time in 1ms..3600s; bare: ms)", optarg);
		o->interval_ns = v;
		break;
	case OPT_STAGE_PIN: o->stage_pin = optarg; break;
	case OPT_WORKERS:
		if (parse_size(optarg, &v) || !v || v > UBPERF_MAX_DEVS)
			return bad("--workers (1..8)", optarg);
		o->workers = (uint32_t)v;
		break;
	case 'm':
		if (tp_mode_parse(optarg, &o->mode))
			return bad("--mode", optarg);
		break;
	case 'o':
		if (!strcmp(optarg, "send")) o->op = OP_SEND;
		else if (!strcmp(optarg, "write")) o->op = OP_WRITE;
		else if (!strcmp(optarg, "read")) o->op = OP_READ;
		else return bad("--op", optarg);
		break;
	case 'a':
		if (!strcmp(optarg, "rol")) o->ta = TP_TA_ROL;
		else if (!strcmp(optarg, "roi")) o->ta = TP_TA_ROI;
		else if (!strcmp(optarg, "rot")) o->ta = TP_TA_ROT;
		else return bad("--ta", optarg);
		a->ta_set = true;
		break;
	case 's':
		if (parse_size(optarg, &v) || !v || v > (64u << 20))
			return bad("--size (1 .. 64m)", optarg);
		o->size = (uint32_t)v;
		a->size_set = true;
		break;
	case 't':
		if (parse_secs(optarg, &o->seconds) || o->seconds == 0)
			return bad("--time", optarg);
		break;
	case 'n':
		if (parse_size(optarg, &o->count) || !o->count)
			return bad("--count", optarg);
		break;
	case 'c':
		if (parse_size(optarg, &v) || !v || v > UBPERF_MAX_CHANS)
			return bad("--channels", optarg);
		o->channels = (uint32_t)v;
		break;
	case 'D':
		if (parse_size(optarg, &v) || !v || v > 256)
			return bad("--depth (1 .. 256)", optarg);
		o->depth = (uint32_t)v;
		break;
	case 'M':
		if (parse_size(optarg, &v) || v < EP_UB_MTU_MIN || v > EP_UB_MTU_MAX ||
		    (v & (v - 1)))
			return bad("--mtu (a UB MTU: 256, 512, 1024, 2048 or 4096)", optarg);
		o->mtu = (uint32_t)v;
		break;
	case 'w':
		if (parse_size(optarg, &v) || !v || v >= TP_PSN_HALF)
			return bad("--window", optarg);
		o->window = (uint32_t)v;
		break;
	case 'r':
		if (parse_rto(optarg, &o->rto_ns))
			return bad("--rto", optarg);
		break;
	case 'R':
		if (parse_time(optarg, PN_US, 0, 4 * PN_S, &v))
			return bad("--rto-min (a time in 0..4s; bare: us)", optarg);
		o->rto_min_ns = v;
		break;
	case 'W':
		if (parse_secs(optarg, &o->wait_s))
			return bad("--wait", optarg);
		a->wait_set = true;
		break;
	case 'S':
		if (parse_secs(optarg, &o->stall_s) || o->stall_s == 0)
			return bad("--stall", optarg);
		break;
	case 'g': o->generic = true; break;
	case 'z': case OPT_COPY:
		if (o->xsk_mode != XSK_MODE_AUTO) {
			fprintf(stderr, "ubperf: --zerocopy or --copy, not both\n");
			return 2;
		}
		o->xsk_mode = c == 'z' ? XSK_MODE_ZEROCOPY : XSK_MODE_COPY;
		break;
	case 'j': o->json = true; break;
	case 'v': o->verbose = true; break;
	case 'N': case 'I': case 'T': case OPT_VL: case 'E': case 'X':
		if (native_opt(c, optarg, o, nat))
			return 2;
		break;
	}
	return 0;
}

static int run(bool server, int argc, char **argv)
{
	struct args args = {
		.o = {
			.mode = TP_MODE_RTP_SR, .op = OP_SEND, .ta = TP_TA_ROL,
			.size = 65536, .seconds = 10, .channels = 1, .depth = 8, .window = 256,
			.wait_s = 5, .stall_s = 3, .server = server,
		},
	};
	struct ubperf_opts o;
	struct native_args nat;
	bool wait_set, size_set, ta_set;
	int rc = optab_parse(server ? &server_cmd : &client_cmd, argc, argv, opt, &args, NULL);

	if (rc)
		return OPTAB_STATUS(rc);
	o = args.o;
	nat = args.nat;
	wait_set = args.wait_set;
	size_set = args.size_set;
	ta_set = args.ta_set;
	if (!o.dev) {
		fprintf(stderr, "ubperf: --dev DEV is required\n");
		return 2;
	}
	if (split_devs(&o))
		return 2;
	for (uint32_t k = 0; k < o.ndevs; k++)
		if (!if_nametoindex(o.devs[k])) {
			fprintf(stderr, "ubperf: --dev %s: no such device in this network namespace\n", o.devs[k]);
			return UB_EXIT_NOTFOUND;
		}
	if (o.generic && o.xsk_mode == XSK_MODE_ZEROCOPY) {
		fprintf(stderr, "ubperf: --zerocopy needs native XDP (a driver's zero-copy AF_XDP runs behind its own XDP only): not with --generic\n");
		return 2;
	}
	if (o.server && o.peer) {
		fprintf(stderr, "ubperf: --peer is for the client\n");
		return 2;
	}
	if (!o.server && !o.peer) {
		fprintf(stderr, "ubperf: client needs --peer ADDR\n");
		return 2;
	}
	if (o.mode == TP_MODE_UTP && o.op != OP_SEND) {
		fprintf(stderr, "ubperf: utp carries only --op send (no Write/Read without reliability)\n");
		return 2;
	}
	/* CAQM's window requests ride the CCI, which UBoE has none of
	 * (draft-li-uboe-00 §5.2: an extension is needed). */
	if (o.cc == TP_CC_CAQM && !nat.on) {
		fprintf(stderr, "ubperf: --cc caqm needs --native: UBoE has no CCI to carry its window requests (draft-li-uboe-00 5.2; across an IP segment the UB2E switches' CAQM tag carries them)\n");
		return 2;
	}
	if (native_finish(&o, &nat) || mtu_finish(&o, nat.on) ||
	    ctp_finish(&o, nat.on, size_set, ta_set) || utp_finish(&o, size_set))
		return 2;
	if (workers_finish(&o))
		return 2;
	if (o.server && !wait_set)
		o.wait_s = 0;
	if (o.count)
		o.seconds = 0;
	return o.server ? ubperf_server(&o) : ubperf_client(&o);
}

static int run_server(int argc, char **argv)
{
	return run(true, argc, argv);
}

static int run_client(int argc, char **argv)
{
	return run(false, argc, argv);
}

int main(int argc, char **argv)
{
	optab_set_registry(ubperf_cmds);
	/* The generated parts of ubperf(1), for scripts/mkman.sh. */
	if (argc > 1 && !strcmp(argv[1], "--dump-man"))
		return optab_dump_man(argc > 2 ? argv[2] : NULL);
	argv[0] = (char *)"ubperf";
	return optab_dispatch(argc, argv);
}
