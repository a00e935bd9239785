/* SPDX-License-Identifier: BSD-2-Clause */
/* ubperf: UB transport benchmark over the UBoE endpoint (user/endpoint/ep.h). */
#ifndef UBPERF_H
#define UBPERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/cc.h"
#include "endpoint/ep.h"
#include "transport/tp.h"
#include "transport/tpg.h"

#define UBPERF_MAX_CHANS	64
#define UBPERF_MAX_DEVS		8	/* --dev A,B,...: ports served at once */
/* (port, address) pairs one side may need: each of its ports to each port of
 * the other side, plus the other side's first address (--peer, or the first
 * hello's source) by each port. */
#define UBPERF_MAX_PEERS	(UBPERF_MAX_DEVS * (UBPERF_MAX_DEVS + 1))

enum ubperf_op { OP_SEND = 0, OP_WRITE, OP_READ };

struct ubperf_opts {
	bool server;
	const char *dev;
	const char *devs[UBPERF_MAX_DEVS];	/* --dev split at commas */
	uint32_t ndevs;
	const char *peer;
	bool generic, json, verbose;
	enum xsk_mode xsk_mode;		/* --zerocopy, --copy; default auto */
	struct ep_native native;	/* --native: EtherType non-zero */
	bool nexthop_mac_set;
	uint8_t nexthop_mac[6];
	enum tp_mode mode;
	enum ubperf_op op;
	enum tp_ta_mode ta;
	uint32_t size;		/* message bytes */
	double seconds;		/* 0 with count */
	uint64_t count;		/* messages; 0: by time */
	uint32_t channels;
	uint32_t depth;		/* operations outstanding per channel */
	uint32_t mtu, window;
	/* The client's MTU from its devices (no --mtu), and --size from the
	 * MTU (UTP, CTP): both may follow a smaller default of the server's. */
	bool mtu_default, size_from_mtu;
	uint64_t rto_ns;	/* 0: dynamic */
	uint64_t rto_min_ns;	/* dynamic: floor of the base; 0: the core's */
	double wait_s;		/* how long to wait for the peer */
	double stall_s;		/* no completion this long: the peer is gone */
	enum tp_cc_algo cc;	/* congestion control per channel */
	enum tpg_lb lb;		/* the channels form a group: per-flow / per-packet LB */
	uint64_t interval_ns;	/* --interval: a sample per channel this often; 0: none */
	const char *stage_pin;	/* --stage-pin: a CAQM/ECN stage's pinned maps (ubcaqm --pin) */
	uint32_t workers;	/* threads: each an endpoint's worker, channel i on i mod workers */
};

/*
 * In-band setup ([chosen], docs/WIRE.md §7, docs/TRANSPORT.md): each
 * channel's hello (tp_hello_build_app) carries after its 16 bytes a control
 * message, u32 words in network byte order (headers/ubperf_wire.h):
 * magic, kind, run id, channel index, then per kind the run description
 * (client -> server), the server's answer for that channel, or the end-of-run
 * counts (DONE, both ways on channel 0).
 */
#define UBPERF_MAGIC	0x55425046u	/* "UBPF" */

enum ctl_kind { CTL_SETUP = 1, CTL_DONE = 2 };

struct ctl_run {
	uint32_t mode, op, ta, size, channels, mtu, window, depth;
	uint32_t rto_us, rto_min_us, cc, lb;
};

/* Where a channel's server port is (bytes: no byte order); ver 0: the --peer address. */
struct ctl_path {
	uint8_t ver, pad[3];
	uint8_t ip[16];
};

struct ctl_answer {
	uint32_t status;		/* 0 ok, else errno */
	uint32_t token, mr_len, va_hi, va_lo;
	struct ctl_path path;		/* a server on several ports */
	uint32_t token_value;		/* UBPF_ANS_TOKEN_VALUE */
	uint32_t rx_range;		/* UBPF_ANS_RX_RANGE, a power of two 256 .. 2048 */
	bool mtu_default;		/* UBPF_ANS_MTU_OWN */
};

struct ctl_done {
	uint32_t failed;
	uint32_t messages[2], bytes[2], duration_ns[2];	/* hi, lo */
	uint32_t verified[2];	/* bytes checked against the keyed payload (UBPF_DONE_VERIFIED) */
};

struct ctl_msg {
	uint32_t magic, kind, run_id, index;
	union {
		struct ctl_run run;	/* CTL_SETUP, client -> server */
		struct ctl_answer ans;	/* CTL_SETUP reply */
		struct ctl_done done;	/* CTL_DONE, both ways */
	} u;
};

int ubperf_server(const struct ubperf_opts *o);
int ubperf_client(const struct ubperf_opts *o);

#endif
