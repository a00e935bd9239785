// SPDX-License-Identifier: BSD-2-Clause
/*
 * What ep_tp_chan_create (user/endpoint/ep.h) gives a channel of MODE on
 * worker W of an endpoint of N workers on DEV, optionally after
 * ep_workers_fold:
 *   ep_workers_chan DEV N W MODE [fold]  ->  "worker W MODE: tpn T" (exit 0)
 *                                            "worker W MODE: ERROR" (exit 1)
 * The endpoint's queues (a device with several) and program are real; no
 * peer is needed, the channel is only created and destroyed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "endpoint/ep.h"

int main(int argc, char **argv)
{
	struct ep_config ec = { 0 };
	struct tp_chan_config cc = { 0 };
	struct tp_chan *ch;
	struct ep *e, *w;
	char err[256];
	int rc = 1;

	if (argc < 5 || tp_mode_parse(argv[4], &cc.mode)) {
		fprintf(stderr, "usage: ep_workers_chan DEV WORKERS W MODE [fold]\n");
		return 2;
	}
	ec.dev = argv[1];
	ec.workers = (uint32_t)atoi(argv[2]);
	ec.tp.max_chans = 4;
	if (cc.mode == TP_MODE_CTP)
		ep_native_init(&ec.native);
	e = ep_open(&ec, err, sizeof(err));
	if (!e) {
		fprintf(stderr, "ep_workers_chan: %s\n", err);
		return 2;
	}
	if (argc > 5 && !strcmp(argv[5], "fold") && (rc = ep_workers_fold(e))) {
		fprintf(stderr, "ep_workers_chan: fold: %s\n", strerror(-rc));
		ep_close(e);
		return 2;
	}
	w = ep_worker(e, (uint32_t)atoi(argv[3]));
	if (!w) {
		fprintf(stderr, "ep_workers_chan: no worker %s\n", argv[3]);
		ep_close(e);
		return 2;
	}
	cc.mtu = 1024;
	cc.window = 64;
	cc.max_ops = 16;
	if (cc.mode == TP_MODE_CTP)
		cc.ta_timeout_ns = 1000000000ull;
	ch = ep_tp_chan_create(w, &cc);
	if (ch) {
		printf("worker %s %s: tpn %u\n", argv[3], argv[4], tp_chan_tpn(ch));
		tp_chan_destroy(ch);
		rc = 0;
	} else {
		printf("worker %s %s: %s\n", argv[3], argv[4], strerror(errno));
		rc = 1;
	}
	ep_close(e);
	return rc;
}
