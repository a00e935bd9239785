// SPDX-License-Identifier: BSD-2-Clause
/*
 * tpsim: two UB transport endpoints over the simulated link, from the command
 * line. Runs Sends, Writes or Reads between them in simulated time, prints a
 * summary, and with --dump every UBoE frame put on the link (hex), so that
 * an independent decoder (tests/golden/check_tpsim.py, scapy) can check what
 * the core sends.
 *
 *   tpsim [--mode rtp-sr|rtp-gbn|rtp-gbn-fast|utp|ctp] [--ta rol|roi|rot]
 *         [--op send|write|read] [--msgs N] [--size BYTES] [--mtu BYTES]
 *         [--loss P] [--ack-loss P] [--seed N] [--wrap] [--dump]
 *
 * Exit status: 0 when every operation completed successfully, 1 when not,
 * 2 for a bad command line.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icrc.h"
#include "tp.h"
#include "tp_sim.h"

/* Content of registered memory and Write sources: a function of the address,
 * so a decoder can check any packet's payload from its MAETAH alone. */
static uint8_t content(uint64_t a)
{
	return (uint8_t)(a * 131 + (a >> 9));
}

struct run {
	struct tp_ep *ep[2];
	struct tp_chan *ch[2];
	uint32_t msgs, size, posted, done, ok, recvd;
	int op;			/* 0 send, 1 write, 2 read */
	uint8_t *src, *dst, *region, *rbuf;
	uint64_t region_va;
	struct tp_rkey token;
	bool dump;
};

static void trace(void *ctx, int from, const uint8_t *f, size_t len, bool lost)
{
	struct run *r = ctx;

	if (!r->dump)
		return;
	printf("%d %c ", from, lost ? 'L' : 'D');
	for (size_t i = 0; i < len; i++)
		printf("%02x", f[i]);
	printf("\n");
}

static int post(struct run *r)
{
	uint32_t i = r->posted;
	size_t off = (size_t)i * r->size;

	switch (r->op) {
	case 0:
		return tp_post_send(r->ch[0], r->src + off, r->size, i);
	case 1:
		return tp_post_write(r->ch[0], r->src + off, r->size, r->region_va + off, r->token, i);
	default:
		return tp_post_read(r->ch[0], r->dst + off, r->size, r->region_va + off, r->token, i);
	}
}

static bool step(void *ctx)
{
	struct run *r = ctx;
	struct tp_event ev;

	for (int i = 0; i < 2; i++)
		while (tp_ep_poll(r->ep[i], &ev)) {
			if (ev.type == TP_EV_RECV) {
				r->recvd++;
				tp_post_recv(r->ch[1], r->rbuf + ev.wr_id * r->size, r->size, ev.wr_id);
			} else if (ev.type == TP_EV_SEND_DONE || ev.type == TP_EV_WRITE_DONE ||
				   ev.type == TP_EV_READ_DONE) {
				r->done++;
				r->ok += ev.status == TP_ST_OK;
			} else if (ev.type == TP_EV_CHAN_ERROR) {
				fprintf(stderr, "tpsim: channel failed: %s\n", tp_status_name(ev.status));
				return true;
			}
		}
	while (r->posted < r->msgs && r->posted - r->done < 8 && !post(r))
		r->posted++;
	return r->done == r->msgs;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tpsim [--mode rtp-sr|rtp-gbn|rtp-gbn-fast|utp|ctp] [--ta rol|roi|rot]\n"
		   "             [--op send|write|read] [--msgs N] [--size BYTES] [--mtu BYTES]\n"
		   "             [--loss P] [--ack-loss P] [--seed N] [--wrap] [--dump]\n");
}

static int bad(const char *what, const char *v)
{
	fprintf(stderr, "tpsim: bad %s: %s\n", what, v);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, 0, 'm' }, { "ta", required_argument, 0, 't' },
		{ "op", required_argument, 0, 'o' }, { "msgs", required_argument, 0, 'n' },
		{ "size", required_argument, 0, 's' }, { "mtu", required_argument, 0, 'u' },
		{ "loss", required_argument, 0, 'l' }, { "ack-loss", required_argument, 0, 'a' },
		{ "seed", required_argument, 0, 'S' }, { "wrap", no_argument, 0, 'w' },
		{ "dump", no_argument, 0, 'd' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
	};
	struct tp_chan_config cc = { .mode = TP_MODE_RTP_SR, .mtu = 1024, .rto_static_ns = 200000,
				     .retry_limit = 15 };
	struct tp_sim_cfg sc = { .seed = 1, .frames = true, .trace = trace };
	struct run r = { .msgs = 20, .size = 3000 };
	double loss = 0, ack_loss = 0;
	bool wrap = false, finished;
	struct tp_sim *sim;
	struct tp_stats st;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (tp_mode_parse(optarg, &cc.mode))
				return bad("mode", optarg);
			break;
		case 't':
			if (!strcmp(optarg, "rol"))
				cc.ta_mode = TP_TA_ROL;
			else if (!strcmp(optarg, "roi"))
				cc.ta_mode = TP_TA_ROI;
			else if (!strcmp(optarg, "rot"))
				cc.ta_mode = TP_TA_ROT;
			else
				return bad("transaction mode", optarg);
			break;
		case 'o':
			r.op = !strcmp(optarg, "send") ? 0 : !strcmp(optarg, "write") ? 1 :
			       !strcmp(optarg, "read") ? 2 : -1;
			if (r.op < 0)
				return bad("op", optarg);
			break;
		case 'n':
			r.msgs = (uint32_t)strtoul(optarg, &end, 0);
			if (*end || !r.msgs || r.msgs > 100000)
				return bad("message count", optarg);
			break;
		case 's':
			r.size = (uint32_t)strtoul(optarg, &end, 0);
			if (*end || r.size > (1u << 20))
				return bad("size", optarg);
			break;
		case 'u':
			cc.mtu = (uint32_t)strtoul(optarg, &end, 0);
			if (*end || cc.mtu < 64 || cc.mtu > 9000)
				return bad("mtu", optarg);
			break;
		case 'l':
		case 'a':
			errno = 0;
			*(c == 'l' ? &loss : &ack_loss) = strtod(optarg, &end);
			if (*end || errno || (c == 'l' ? loss : ack_loss) < 0 ||
			    (c == 'l' ? loss : ack_loss) >= 1)
				return bad("loss", optarg);
			break;
		case 'S':
			sc.seed = strtoull(optarg, &end, 0);
			if (*end)
				return bad("seed", optarg);
			break;
		case 'w': wrap = true; break;
		case 'd': r.dump = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (cc.mode == TP_MODE_UTP && (r.op || r.size > (cc.mtu ? cc.mtu : 1024))) {
		fprintf(stderr, "tpsim: utp carries Sends only, each in one packet (--size at most --mtu)\n");
		return 2;
	}
	if (cc.mode == TP_MODE_CTP && (r.size > (cc.mtu ? cc.mtu : 1024) || wrap)) {
		fprintf(stderr, "tpsim: ctp sends each operation in one packet (--size at most --mtu) "
			"and never in UBoE (no --wrap)\n");
		return 2;
	}
	r.src = malloc((size_t)r.msgs * r.size + 1);
	r.dst = calloc((size_t)r.msgs * r.size + 1, 1);
	r.region = malloc((size_t)r.msgs * r.size + 1);
	r.rbuf = malloc((size_t)8 * r.size + 1);
	if (!r.src || !r.dst || !r.region || !r.rbuf) {
		fprintf(stderr, "tpsim: out of memory\n");
		return 1;
	}
	r.region_va = (uint64_t)(uintptr_t)r.region;
	for (size_t i = 0; i < (size_t)r.msgs * r.size; i++) {
		r.src[i] = content(r.region_va + i);
		r.region[i] = r.op == 2 ? content(r.region_va + i) : 0;
	}
	for (int i = 0; i < 2; i++) {
		struct tp_ep_config ec = { .seed = sc.seed * 2 + (uint64_t)i };
		struct tp_chan_config c2 = cc;

		if (wrap) {
			c2.fixed_init_psn = true;
			c2.init_psn = TP_PSN_MASK - 5 - (uint32_t)i;
		}
		r.ep[i] = tp_ep_create(&ec);
		r.ch[i] = r.ep[i] ? tp_chan_create(r.ep[i], &c2) : NULL;
		if (!r.ch[i]) {
			fprintf(stderr, "tpsim: cannot create a channel: %s\n", strerror(errno));
			return 1;
		}
		sc.dir[i] = (struct tp_sim_dir_cfg){ .loss_data = loss, .loss_resp = ack_loss,
						     .delay_ns = 10000, .rate_bps = 10000000000ull };
	}
	for (int i = 0; i < 2; i++)
		tp_chan_connect(r.ch[i], tp_chan_tpn(r.ch[1 - i]), tp_chan_init_psn(r.ch[1 - i]));
	if (tp_mr_reg(r.ep[1], r.region, (size_t)r.msgs * r.size + 1, &r.token)) {
		fprintf(stderr, "tpsim: cannot register memory\n");
		return 1;
	}
	for (uint64_t i = 0; i < 8; i++)
		tp_post_recv(r.ch[1], r.rbuf + i * r.size, r.size, i);
	sc.trace_ctx = &r;
	if (r.dump)
		printf("# region 0x%llx size %u mtu %u tpn %u %u op %d\n",
		       (unsigned long long)r.region_va, r.size, cc.mtu, tp_chan_tpn(r.ch[0]),
		       tp_chan_tpn(r.ch[1]), r.op);
	ub_icrc_init();		/* the backend's timing outside the simulation */
	sim = tp_sim_create(&sc, r.ep[0], r.ep[1]);
	if (!sim) {
		fprintf(stderr, "tpsim: out of memory\n");
		return 1;
	}
	finished = tp_sim_run(sim, 600ull * 1000000000, step, &r);
	tp_chan_stats(r.ch[0], &st);
	fprintf(r.dump ? stderr : stdout,
		"tpsim: %s %s, %u/%u operations ok, %.1f us simulated, %llu packets, "
		"retransmitted rto %llu nak %llu sack %llu mark %llu\n",
		tp_mode_name(cc.mode), r.op == 0 ? "send" : r.op == 1 ? "write" : "read",
		r.ok, r.msgs, (double)tp_sim_now(sim) / 1000, (unsigned long long)st.tx_data,
		(unsigned long long)st.rtx_rto, (unsigned long long)st.rtx_nak,
		(unsigned long long)st.rtx_sack, (unsigned long long)st.rtx_mark);
	if (r.op == 1 && memcmp(r.region, r.src, (size_t)r.msgs * r.size))
		finished = false;
	if (r.op == 2 && memcmp(r.dst, r.region, (size_t)r.msgs * r.size))
		finished = false;
	tp_sim_destroy(sim);
	tp_ep_destroy(r.ep[0]);
	tp_ep_destroy(r.ep[1]);
	free(r.src);
	free(r.dst);
	free(r.region);
	free(r.rbuf);
	return finished && r.ok == r.msgs ? 0 : 1;
}
