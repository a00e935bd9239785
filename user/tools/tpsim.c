// SPDX-License-Identifier: BSD-2-Clause
/*
 * tpsim: two UB transport endpoints over the simulated link, from the command
 * line. Runs Sends, Writes or Reads (Sends and Writes with immediate, FADDs)
 * between them in simulated time, prints a
 * summary, and with --dump every UBoE frame put on the link (hex), so that
 * an independent decoder (tests/golden/check_tpsim.py, scapy) can check what
 * the core sends.
 *
 *   tpsim [--mode rtp-sr|rtp-gbn|rtp-gbn-fast|utp|ctp] [--ta rol|roi|rot]
 *         [--op send|write|read|send-imm|write-imm|fadd] [--msgs N] [--size BYTES]
 *         [--mtu BYTES]
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

#include "lib/icrc.h"
#include "lib/parse_num.h"
#include "transport/tp.h"
#include "transport/tp_sim.h"

/* Content of registered memory and Write sources: a function of the address,
 * so a decoder can check any packet's payload from its MAETAH alone. */
static uint8_t content(uint64_t a)
{
	return (uint8_t)(a * 131 + (a >> 9));
}

struct run {
	struct tp_ep *ep[2];
	struct tp_chan *ch[2];
	uint32_t msgs, size, posted, done, ok, recvd, imms;
	int op;			/* OP_* below */
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

enum { OP_SEND, OP_WRITE, OP_READ, OP_SEND_IMM, OP_WRITE_IMM, OP_FADD };
static const char *const op_names[] = { "send", "write", "read", "send-imm", "write-imm", "fadd" };

/* Message i: Sends and Writes from src + i x size; with immediate, imm = i;
 * FADD i adds i + 1 to the word at the region + i x size (the original
 * value to dst + i x size). */
static int post(struct run *r)
{
	uint32_t i = r->posted;
	size_t off = (size_t)i * r->size;
	struct tp_sge sge = { .addr = r->src + off, .len = r->size };
	struct tp_wr wr = { .wr_id = i, .sge = &sge, .num_sge = 1, .imm = i,
			    .remote_va = r->region_va + off, .rkey = r->token };

	switch (r->op) {
	case OP_SEND:
		return tp_post_send(r->ch[0], r->src + off, r->size, i);
	case OP_WRITE:
		return tp_post_write(r->ch[0], r->src + off, r->size, r->region_va + off, r->token, i);
	case OP_READ:
		return tp_post_read(r->ch[0], r->dst + off, r->size, r->region_va + off, r->token, i);
	case OP_SEND_IMM:
		wr.opcode = TP_OP_SEND_IMM;
		return tp_post(r->ch[0], &wr);
	case OP_WRITE_IMM:
		wr.opcode = TP_OP_WRITE_IMM;
		return tp_post(r->ch[0], &wr);
	default:
		wr.opcode = TP_OP_FADD;
		wr.add = i + 1;
		sge = (struct tp_sge){ .addr = r->dst + off, .len = 8 };
		return tp_post(r->ch[0], &wr);
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
				/* in order: message k brings imm k */
				r->imms += (ev.flags & TP_EVF_IMM) && ev.imm == r->imms;
				tp_post_recv(r->ch[1], r->rbuf + ev.wr_id * r->size, r->size, ev.wr_id);
			} else if (ev.type == TP_EV_SEND_DONE || ev.type == TP_EV_WRITE_DONE ||
				   ev.type == TP_EV_READ_DONE || ev.type == TP_EV_ATOMIC_DONE) {
				r->done++;
				r->ok += ev.status == TP_ST_OK;
			} else if (ev.type == TP_EV_CHAN_ERROR) {
				fprintf(stderr, "tpsim: channel failed: %s\n", tp_status_name(ev.status));
				return true;
			}
		}
	while (r->posted < r->msgs && r->posted - r->done < 8 && !post(r))
		r->posted++;
	/* With immediate: until every completion with its immediate arrived. */
	return r->done == r->msgs &&
	       ((r->op != OP_SEND_IMM && r->op != OP_WRITE_IMM) || r->recvd == r->msgs);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tpsim [--mode rtp-sr|rtp-gbn|rtp-gbn-fast|utp|ctp] [--ta rol|roi|rot]\n"
		   "             [--op send|write|read|send-imm|write-imm|fadd] [--msgs N]\n"
		   "             [--size BYTES] [--mtu BYTES]\n"
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
	char *end, perr[160];
	unsigned long v;
	uint64_t v64;
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
			r.op = -1;
			for (int k = 0; k <= OP_FADD; k++)
				if (!strcmp(optarg, op_names[k]))
					r.op = k;
			if (r.op < 0)
				return bad("op", optarg);
			break;
		case 'n':
			if (parse_uint(optarg, (size_t)-1, 100000, &v) || !(r.msgs = (uint32_t)v))
				return bad("message count", optarg);
			break;
		case 's':
			if (pn_size("--size", optarg, 0, 1u << 20, &v64, perr, sizeof(perr)))
				return bad("size", optarg);
			r.size = (uint32_t)v64;
			break;
		case 'u':
			if (parse_uint(optarg, (size_t)-1, 9000, &v) || (cc.mtu = (uint32_t)v) < 64)
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
			if (pn_uint("--seed", optarg, 0, UINT64_MAX, &v64, perr, sizeof(perr)))
				return bad("seed", optarg);
			sc.seed = v64;
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
	if (r.op == OP_FADD && (r.size < 8 || r.size % 8)) {
		fprintf(stderr, "tpsim: fadd needs --size a multiple of 8 (a word per message)\n");
		return 2;
	}
	if (cc.mode == TP_MODE_UTP && ((r.op != OP_SEND && r.op != OP_SEND_IMM) ||
				       r.size > (cc.mtu ? cc.mtu : 1024))) {
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
		r.region[i] = r.op == OP_READ ? content(r.region_va + i) : 0;
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
		tp_mode_name(cc.mode), op_names[r.op],
		r.ok, r.msgs, (double)tp_sim_now(sim) / 1000, (unsigned long long)st.tx_data,
		(unsigned long long)st.rtx_rto, (unsigned long long)st.rtx_nak,
		(unsigned long long)st.rtx_sack, (unsigned long long)st.rtx_mark);
	if ((r.op == OP_WRITE || r.op == OP_WRITE_IMM) &&
	    memcmp(r.region, r.src, (size_t)r.msgs * r.size))
		finished = false;
	if (r.op == OP_READ && memcmp(r.dst, r.region, (size_t)r.msgs * r.size))
		finished = false;
	for (uint32_t i = 0; r.op == OP_FADD && i < r.msgs; i++) {
		uint64_t w, orig;

		memcpy(&w, r.region + (size_t)i * r.size, 8);
		memcpy(&orig, r.dst + (size_t)i * r.size, 8);
		if (w != (uint64_t)i + 1 || orig)
			finished = false;	/* each added once, to 0 */
	}
	if ((r.op == OP_SEND_IMM || r.op == OP_WRITE_IMM) && r.imms != r.msgs)
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
