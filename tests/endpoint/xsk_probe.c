// SPDX-License-Identifier: BSD-2-Clause
/*
 * Exercise the AF_XDP port (user/xsk) for real: one UMEM shared by sockets on
 * one or more devices, each behind the endpoint XDP program. For every path
 * it transmits UBoE frames through the socket to a peer whose kernel echoes
 * the UDP payload back (tests/endpoint/udp_echo.py), and receives the echoes
 * through the socket. Exit 0 only when every frame came back on the socket
 * of its own device with its payload intact and every UMEM frame is free
 * again at the end.
 *
 * With --hold it only binds a socket to each path's queue 0, with no XDP
 * program, says "held" and keeps the queues until SIGTERM or SIGINT: another
 * process binding them meanwhile meets EBUSY.
 *
 *   xsk_probe [--generic] [--count N] [--timeout-ms T] [--hold] --path IF,SRC_IP,DST_IP,DST_MAC ...
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib/clock.h"
#include "endpoint/ep_xdp.h"
#include "lib/frame.h"
#include "xsk/xsk_port.h"

#define MAX_PATHS	4
#define MAGIC		0x55425850u	/* "UBXP" */

struct path {
	char ifname[IF_NAMESIZE];
	struct ub_pkt_spec spec;
	struct ep_xdp *xdp;
	int sock;
	unsigned sent, got, bad;
};

struct marker {
	uint32_t magic, path, seq;
	uint8_t fill[52];
};

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return 0;
}

static int dev_mac(const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rc;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	rc = fd < 0 ? -1 : ioctl(fd, SIOCGIFHWADDR, &ifr);
	if (fd >= 0)
		close(fd);
	if (!rc)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return rc;
}

static int parse_path(char *arg, struct path *p)
{
	char *f[4], *save = NULL;
	int ver;

	for (int i = 0; i < 4; i++) {
		f[i] = strtok_r(i ? NULL : arg, ",", &save);
		if (!f[i])
			return -1;
	}
	snprintf(p->ifname, sizeof(p->ifname), "%s", f[0]);
	ub_pkt_spec_init(&p->spec);
	ver = strchr(f[1], ':') ? 6 : 4;
	p->spec.ip_ver = (uint8_t)ver;
	if (inet_pton(ver == 6 ? AF_INET6 : AF_INET, f[1], p->spec.src_ip) != 1 ||
	    inet_pton(ver == 6 ? AF_INET6 : AF_INET, f[2], p->spec.dst_ip) != 1 ||
	    parse_mac(f[3], p->spec.dst_mac) || dev_mac(p->ifname, p->spec.src_mac))
		return -1;
	/* The echo comes back to this port, so the XDP program steers it to us. */
	p->spec.sport = UBOE_UDP_PORT;
	p->spec.ecn = ECN_ECT0;
	return 0;
}

static double now_ms(void)
{
	return (double)ub_mono_ns() / 1e6;
}

static void check_echo(struct path *paths, int npaths, const struct xsk_frame *f)
{
	struct ub_view v;
	struct marker m;
	struct path *p;

	if (ub_parse_frame(f->data, f->len, 0, &v) != UB_PARSE_OK || v.kind != UB_KIND_UBOE ||
	    v.payload_len != sizeof(m)) {
		if (f->sock >= 0 && f->sock < npaths)
			paths[f->sock].bad++;
		return;
	}
	memcpy(&m, v.payload, sizeof(m));
	if (m.magic != MAGIC || m.path >= (uint32_t)npaths) {
		paths[f->sock].bad++;
		return;
	}
	p = &paths[m.path];
	/* Each echo must come back on the device its request left from. */
	if (p->sock != f->sock || memcmp(v.src_ip, p->spec.dst_ip, p->spec.ip_ver == 6 ? 16 : 4)) {
		p->bad++;
		return;
	}
	p->got++;
}

int main(int argc, char **argv)
{
	struct path paths[MAX_PATHS] = { 0 };
	struct xsk_port_cfg cfg = { .nframes = 1024, .frame_size = 2048, .ring_size = 256 };
	unsigned count = 32, timeout_ms = 3000;
	int npaths = 0, rc = 1;
	bool generic = false, hold = false;
	struct xsk_port *port = NULL;
	char err[256];
	double deadline;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--generic")) {
			generic = true;
		} else if (!strcmp(argv[i], "--zerocopy")) {
			cfg.mode = XSK_MODE_ZEROCOPY;
		} else if (!strcmp(argv[i], "--count") && i + 1 < argc) {
			count = (unsigned)atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--timeout-ms") && i + 1 < argc) {
			timeout_ms = (unsigned)atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--hold")) {
			hold = true;
		} else if (!strcmp(argv[i], "--path") && i + 1 < argc && npaths < MAX_PATHS) {
			if (parse_path(argv[++i], &paths[npaths])) {
				fprintf(stderr, "xsk_probe: bad --path (IF,SRC_IP,DST_IP,DST_MAC): %s\n", argv[i]);
				return 2;
			}
			npaths++;
		} else {
			fprintf(stderr, "usage: xsk_probe [--generic] [--zerocopy] [--count N] [--timeout-ms T] [--hold] --path IF,SRC_IP,DST_IP,DST_MAC ...\n");
			return 2;
		}
	}
	if (!npaths || !count || count > 256) {
		fprintf(stderr, "xsk_probe: need at least one --path and 1 <= --count <= 256\n");
		return 2;
	}
	port = xsk_port_create(&cfg);
	if (!port) {
		fprintf(stderr, "xsk_probe: cannot create the UMEM: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < npaths && hold; i++) {
		int sock = xsk_port_add(port, paths[i].ifname, 0, -1, 0);

		if (sock < 0) {
			fprintf(stderr, "xsk_probe: cannot hold %s: %s\n", paths[i].ifname, strerror(-sock));
			goto out;
		}
	}
	if (hold) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGINT);
		sigprocmask(SIG_BLOCK, &set, NULL);	/* sigwait's, not the default death */
		printf("held\n");
		fflush(stdout);
		rc = sigwait(&set, &sig) ? 1 : 0;
		goto out;
	}
	for (int i = 0; i < npaths; i++) {
		paths[i].xdp = ep_xdp_attach(paths[i].ifname, generic, 0, 0, err, sizeof(err));
		if (!paths[i].xdp) {
			fprintf(stderr, "xsk_probe: %s\n", err);
			goto out;
		}
		paths[i].sock = xsk_port_add(port, paths[i].ifname, 0, ep_xdp_xskmap_fd(paths[i].xdp), 0);
		if (paths[i].sock < 0) {
			fprintf(stderr, "xsk_probe: AF_XDP socket on %s: %s\n", paths[i].ifname,
				strerror(-paths[i].sock));
			goto out;
		}
	}
	const uint32_t free0 = xsk_port_free_frames(port);

	/* Send in bursts of 8 per path so the tx batch path is used. */
	for (unsigned seq = 0; seq < count; seq += 8) {
		for (int i = 0; i < npaths; i++) {
			struct xsk_frame fr[8];
			unsigned n = 0, q;

			for (unsigned k = seq; k < count && k < seq + 8; k++, n++) {
				struct marker m = { MAGIC, (uint32_t)i, k, { 0 } };

				memset(m.fill, (int)k, sizeof(m.fill));
				paths[i].spec.payload = &m;
				paths[i].spec.payload_len = sizeof(m);
				paths[i].spec.sport = UBOE_UDP_PORT;
				if (!xsk_port_alloc(port, &fr[n])) {
					fprintf(stderr, "xsk_probe: UMEM exhausted\n");
					goto out;
				}
				fr[n].len = (uint32_t)ub_build_uboe(&paths[i].spec, fr[n].data,
								    xsk_port_frame_size(port));
			}
			q = xsk_port_tx(port, paths[i].sock, fr, n);
			for (unsigned k = q; k < n; k++)
				xsk_port_free(port, &fr[k]);
			paths[i].sent += q;
		}
	}
	deadline = now_ms() + timeout_ms;
	for (;;) {
		struct xsk_frame fr[32];
		unsigned n, done = 0;

		for (int i = 0; i < npaths; i++)
			done += paths[i].got + paths[i].bad >= paths[i].sent;
		if (done == (unsigned)npaths || now_ms() > deadline)
			break;
		xsk_port_poll(port, 50);
		n = xsk_port_rx(port, -1, fr, 32);
		for (unsigned k = 0; k < n; k++) {
			check_echo(paths, npaths, &fr[k]);
			xsk_port_free(port, &fr[k]);
		}
	}
	/* Completions are reaped lazily: give the kernel a moment to finish. */
	for (int k = 0; k < 20 && xsk_port_free_frames(port) != free0; k++) {
		xsk_port_service(port);
		usleep(10000);
	}
	rc = 0;
	for (int i = 0; i < npaths; i++) {
		printf("path %s sock %d%s: sent %u echoed %u bad %u\n", paths[i].ifname, paths[i].sock,
		       xsk_port_is_zerocopy(port, paths[i].sock) ? " zerocopy" : " copy",
		       paths[i].sent, paths[i].got, paths[i].bad);
		if (paths[i].sent != count || paths[i].got != count || paths[i].bad)
			rc = 1;
	}
	if (xsk_port_free_frames(port) != free0) {
		printf("frames leaked: %u free, %u expected\n", xsk_port_free_frames(port), free0);
		rc = 1;
	}
	for (int i = 0; i < npaths; i++) {
		uint64_t st[UB_EP_CNT__MAX];

		if (!ep_xdp_stats(paths[i].xdp, st))
			printf("xdp %s: to_xsk %llu pass_not_ip %llu pass_not_uboe %llu\n",
			       paths[i].ifname, (unsigned long long)st[UB_EP_CNT_TO_XSK],
			       (unsigned long long)st[UB_EP_CNT_PASS_NOT_IP],
			       (unsigned long long)st[UB_EP_CNT_PASS_NOT_UBOE]);
	}
out:
	xsk_port_destroy(port);
	for (int i = 0; i < npaths; i++)
		ep_xdp_detach(paths[i].xdp);
	return rc;
}
