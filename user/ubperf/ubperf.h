/* SPDX-License-Identifier: BSD-2-Clause */
/* ubperf: UB transport benchmark over the UBoE endpoint (user/endpoint/ep.h). */
#ifndef UBPERF_H
#define UBPERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc.h"
#include "ep.h"
#include "tp.h"
#include "tpg.h"

#define UBPERF_MAX_CHANS	64
#define UBPERF_MAX_DEVS		8	/* --dev A,B,...: ports served at once */
#define UBPERF_DEFAULT_PORT	4793	/* TCP control, like perftest's out-of-band exchange */

enum ubperf_op { OP_SEND = 0, OP_WRITE, OP_READ };

struct ubperf_opts {
	bool server;
	const char *dev;
	const char *devs[UBPERF_MAX_DEVS];	/* --dev split at commas */
	uint32_t ndevs;
	const char *peer;
	uint16_t port;
	bool generic, zerocopy, json, verbose;
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
	uint64_t rto_ns;	/* 0: dynamic */
	uint64_t rto_min_ns;	/* dynamic: floor of the base; 0: the core's */
	double wait_s;		/* how long to wait for the peer */
	double stall_s;		/* no completion this long: the peer is gone */
	enum tp_cc_algo cc;	/* congestion control per channel */
	enum tpg_lb lb;		/* the channels form a group: per-flow / per-packet LB */
	uint64_t interval_ns;	/* --interval: a sample per channel this often; 0: none */
	const char *stage_pin;	/* --stage-pin: a CAQM/ECN stage's pinned maps (ubcaqm --pin) */
};

/*
 * Control messages over TCP, fixed layout, network byte order. The client
 * says what to run and its channels; the server answers with its channels
 * and the region to write/read; at the end each side reports what it saw.
 */
#define UBPERF_MAGIC	0x55425046u	/* "UBPF" */

struct ctl_chan {
	uint32_t tpn, init_psn;
};

/* Where a channel's port is (bytes: no byte order); ver 0: the control connection's address. */
struct ctl_path {
	uint8_t ver, pad[3];
	uint8_t ip[16];
};

struct ctl_hello {
	uint32_t magic, mode, op, ta, size, channels, mtu, window, depth;
	uint32_t rto_us, rto_min_us;
	struct ctl_chan ch[UBPERF_MAX_CHANS];
	uint32_t cc, lb;	/* enum tp_cc_algo, enum tpg_lb */
	struct ctl_path path[UBPERF_MAX_CHANS];	/* a client on several ports */
};

struct ctl_welcome {
	uint32_t magic, status;		/* 0 ok, else errno */
	uint32_t token, mr_len;
	uint64_t va;
	struct ctl_chan ch[UBPERF_MAX_CHANS];
	struct ctl_path path[UBPERF_MAX_CHANS];	/* a server on several ports */
};

struct ctl_done {
	uint32_t magic, failed;
	uint64_t messages, bytes, duration_ns;
};

int ubperf_server(const struct ubperf_opts *o);
int ubperf_client(const struct ubperf_opts *o);

#endif
