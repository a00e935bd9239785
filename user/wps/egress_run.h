/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * WPS egress gateway, the running part: the XDP program on the domain-facing
 * devices, one AF_XDP UMEM shared by their sockets and the site-facing one,
 * and the loop that feeds the reorder engine and transmits what it releases.
 */
#ifndef WPS_EGRESS_RUN_H
#define WPS_EGRESS_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wps/egress_peers.h"
#include "wps/reorder.h"
#include "xsk/xsk_mode.h"
#include "wps_egress_maps.h"

struct wps_eg_run_opts {
	const char *devs[WPS_EG_MAX_DEVS];	/* domain-facing */
	int ndevs;
	const char *out_dev;			/* site-facing */
	uint16_t node_id;
	struct wps_eg_peers peers;		/* the ingress nodes served (--peer) */
	bool any_peer;				/* no peer check: any source, as one peer */
	struct wps_reorder_cfg rcfg;
	bool generic;				/* XDP generic (skb) mode */
	enum xsk_mode xsk_mode;			/* 0: zero-copy where the driver has it, else copy */
	unsigned threads;			/* reorder threads (0: wps_eg_default_threads()) */
	unsigned rt_priority;			/* their SCHED_FIFO priority (0: normal scheduling) */
	bool no_pin;				/* leave them unpinned (else thread k on the k-th CPU) */
	uint32_t log_per_sec;			/* validation failure log records per second */
	const char *pin_dir;			/* pin the XDP counters and config here (NULL: none) */
	const char *stats_path;			/* engine statistics as JSON, rewritten every second */
	bool live;				/* a statistics line every second on stderr */
};

/*
 * Runs until *stop becomes non-zero, then releases what is buffered (in
 * order), detaches and unpins. Returns 0, or -1 with one line in err when
 * setting up failed (nothing is left attached then).
 */
int wps_eg_run(const struct wps_eg_run_opts *o, volatile sig_atomic_t *stop, char *err, size_t errlen);

/* Reorder threads by default: the CPUs this process may run on, at most WPS_EG_MAX_SHARDS
 * (every thread has a socket on every queue: any CPU a queue's traffic lands on will do). */
unsigned wps_eg_default_threads(void);

/* The statistics JSON of a running instance, as wps_eg_run writes it (for ubctl). */
#define WPS_EG_STATS_DIR	"/run/ubxdp/wps_egress"

#endif
