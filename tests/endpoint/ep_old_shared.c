// SPDX-License-Identifier: BSD-2-Clause
/*
 * ep_old_shared DEV: what a process of a library before the worker level
 * leaves on a device: the endpoint program in shared mode with ub_steer 1,
 * attached through a link it holds until killed. A library of now joins
 * it; with workers it must refuse (that program would drop their frames).
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "ub_endpoint.skel.h"

int main(int argc, char **argv)
{
	struct ub_endpoint *skel;
	struct bpf_link *link;
	unsigned ifindex;

	if (argc != 2 || !(ifindex = if_nametoindex(argv[1]))) {
		fprintf(stderr, "usage: ep_old_shared DEV (a device of this namespace)\n");
		return 2;
	}
	skel = ub_endpoint__open();
	if (!skel) {
		fprintf(stderr, "ep_old_shared: open: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->ub_steer = 1;
	if (ub_endpoint__load(skel)) {
		fprintf(stderr, "ep_old_shared: load: %s\n", strerror(errno));
		return 1;
	}
	link = bpf_program__attach_xdp(skel->progs.ub_endpoint, (int)ifindex);
	if (!link) {
		fprintf(stderr, "ep_old_shared: attach to %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	pause();
	return 0;
}
