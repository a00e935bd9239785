// SPDX-License-Identifier: BSD-2-Clause
#include "endpoint/ep_xdp.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "endpoint/dev_lock.h"
#include "io/run_link.h"
#include "ub_endpoint.skel.h"

struct ep_xdp {
	struct ub_endpoint *skel;
	int ifindex;
	int link;	/* the XDP link: the program goes with it, or with this process */
	int lock;	/* the device's, from the check that no program is there to the link */
	int attached;	/* from the link to the detach (dev_lock_attached) */
	bool generic;
	char ifname[IF_NAMESIZE];
};

#define EP_CNT_NAME(id, name) [UB_EP_CNT_##id] = name,
static const char *const cnt_names[UB_EP_CNT__MAX] = { UB_EP_COUNTERS(EP_CNT_NAME) };
#undef EP_CNT_NAME

const char *ep_xdp_counter_name(unsigned id)
{
	return id < UB_EP_CNT__MAX ? cnt_names[id] : "?";
}

/* The message of a device another program holds, from the early check or the attach. */
static void say_taken(const char *ifname, bool generic, int rc, char *err, size_t errlen)
{
	snprintf(err, errlen, "cannot attach XDP to %s%s: %s", ifname,
		 generic ? " (generic)" : " (native; try --generic)",
		 rc == -EEXIST || rc == -EBUSY ? "another XDP program is attached" : strerror(-rc));
}

/* How long one waits for another endpoint to put its program on the device
 * (its sockets bound, their queues free): then it sees the program. */
#define OPEN_LOCK_WAIT_MS	2000

bool ep_xdp_taken(const struct ep_xdp *x, char *err, size_t errlen)
{
	__u32 prog_id = 0;

	if (bpf_xdp_query_id(x->ifindex, 0, &prog_id) || !prog_id)
		return false;
	say_taken(x->ifname, x->generic, -EEXIST, err, errlen);
	return true;
}

struct ep_xdp *ep_xdp_load(const char *ifname, bool generic, uint16_t ub_ethertype, uint32_t workers,
			   char *err, size_t errlen)
{
	struct ep_xdp *x = calloc(1, sizeof(*x));
	int rc;

	if (!x) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	x->link = x->lock = x->attached = -1;
	x->generic = generic;
	snprintf(x->ifname, sizeof(x->ifname), "%s", ifname);
	x->ifindex = (int)if_nametoindex(ifname);
	if (!x->ifindex) {
		snprintf(err, errlen, "no device %s", ifname);
		goto fail;
	}
	/* Taken already: said now, before our sockets wait out its queues'
	 * holder. Under the device's lock until our link: another endpoint
	 * opening the device now (it had passed this check, its program not
	 * yet on) is waited for, then seen, rather than met at its queues. */
	x->lock = dev_lock_open(x->ifindex, OPEN_LOCK_WAIT_MS);
	if (x->lock < 0) {
		snprintf(err, errlen, "cannot attach XDP to %s: %s", ifname,
			 x->lock == -EADDRINUSE ? "another endpoint is still opening it" : strerror(-x->lock));
		goto fail;
	}
	if (ep_xdp_taken(x, err, errlen))
		goto fail;
	x->skel = ub_endpoint__open();
	if (x->skel) {
		x->skel->rodata->ub_ethertype = ub_ethertype;
		x->skel->rodata->ub_workers = (__u8)workers;
		rc = ub_endpoint__load(x->skel);
		if (rc) {
			ub_endpoint__destroy(x->skel);
			x->skel = NULL;
			errno = -rc;
		}
	}
	if (!x->skel) {
		snprintf(err, errlen, "cannot load the endpoint XDP program: %s", strerror(errno));
		goto fail;
	}
	return x;
fail:
	dev_unlock(&x->lock);
	ub_endpoint__destroy(x->skel);
	free(x);
	return NULL;
}

int ep_xdp_link(struct ep_xdp *x, char *err, size_t errlen)
{
	int rc = run_link_xdp(bpf_program__fd(x->skel->progs.ub_endpoint), x->ifindex, x->generic);

	if (rc < 0) {
		dev_unlock(&x->lock);	/* refused: the next sees what is there */
		say_taken(x->ifname, x->generic, rc, err, errlen);
		return -1;
	}
	x->link = rc;
	/* Taken under the open lock still ours (a liburma process asks under
	 * it); none (an error): it waits for our link to go, then says so. */
	x->attached = dev_lock_attached(x->ifindex);
	dev_unlock(&x->lock);	/* on the device now: seen by the next */
	return 0;
}

struct ep_xdp *ep_xdp_attach(const char *ifname, bool generic, uint16_t ub_ethertype, uint32_t workers,
			     char *err, size_t errlen)
{
	struct ep_xdp *x = ep_xdp_load(ifname, generic, ub_ethertype, workers, err, errlen);

	if (x && ep_xdp_link(x, err, errlen)) {
		ep_xdp_detach(x);
		return NULL;
	}
	return x;
}

void ep_xdp_detach(struct ep_xdp *x)
{
	if (!x)
		return;
	dev_unlock(&x->attached);	/* before: ours is not a live process's while it goes */
	close(x->link);	/* detaches our program, and only ours */
	dev_unlock(&x->lock);
	ub_endpoint__destroy(x->skel);
	free(x);
}

int ep_xdp_xskmap_fd(const struct ep_xdp *x) { return bpf_map__fd(x->skel->maps.ub_ep_xsks); }
int ep_xdp_rcid_fd(const struct ep_xdp *x) { return bpf_map__fd(x->skel->maps.ub_ep_rcid); }
int ep_xdp_ifindex(const struct ep_xdp *x) { return x->ifindex; }

int ep_xdp_stats(const struct ep_xdp *x, uint64_t out[UB_EP_CNT__MAX])
{
	return ep_xdp_stats_fd(bpf_map__fd(x->skel->maps.ub_ep_stats), out);
}

int ep_xdp_stats_fd(int fd, uint64_t out[UB_EP_CNT__MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals;

	if (ncpu <= 0)
		return -1;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -1;
	for (__u32 id = 0; id < UB_EP_CNT__MAX; id++) {
		out[id] = 0;
		if (bpf_map_lookup_elem(fd, &id, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[id] += vals[c];
	}
	free(vals);
	return 0;
}
