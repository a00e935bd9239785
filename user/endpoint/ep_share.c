// SPDX-License-Identifier: BSD-2-Clause
#include "endpoint/ep_share.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "endpoint/dev_lock.h"
#include "endpoint/ep_xdp.h"
#include "io/nl.h"
#include "io/run_link.h"
#include "ub_endpoint.skel.h"
#include "xsk/xsk_port.h"

#define VETH_SOCK	"urma0"		/* the end with the AF_XDP socket */
#define VETH_DEV	"urma1"		/* the end the device's program redirects into */
#define LOCK_WAIT_MS	5000
/* A peek at the queues (ep_share_queues_free) waits no longer: the lock is
 * held so long only by a process opening the device (which will likely
 * take them) or closing it (which may leave them free): either way "not
 * free", and the caller says the veth's path, the smaller MTU, the safe one. */
#define PEEK_WAIT_MS	100
/* A just-ended holder's link is released late (the detach takes the RTNL,
 * which a busy host holds long): ours, 1 s; another program's, 2 s. */
#define JOIN_TRIES	50
#define BUSY_TRIES	100

struct ep_share {
	char dev[IF_NAMESIZE];
	int ifindex;
	uint16_t ethertype;
	struct ub_endpoint *skel;	/* when this process attached the program */
	int prog_fd, link_fd;
	int xsks_fd, stats_fd, slot_fd, devs_fd, uasid_fd, rcid_fd;
	bool own_fds;			/* joined: the fds above are ours to close */
	uint32_t slot;
	int slot_lock, direct_lock;
	bool direct;
	/* the process's veth (every process: loopback; veth mode: everything) */
	struct ep_xdp *vxdp;		/* the plain endpoint program on VETH_SOCK */
	struct nl *rt;			/* rtnetlink, in the process's namespace */
	int veth_ifindex;		/* VETH_SOCK's, there */
	uint32_t veth_mtu;
	/* AF_PACKET sockets, one a worker, so workers share no socket (its
	 * send-buffer count) on the way out: on the device (veth mode), and on
	 * VETH_SOCK, to the device's own jetties (every mode) */
	int tx_fd[UB_EP_MAX_WORKERS];
	int loop_fd[UB_EP_MAX_WORKERS];
	struct ub_endpoint *loop_skel;	/* the program with the device's maps, for VETH_DEV */
	int loop_link;
	uint32_t uasid;
	bool has_uasid;
	uint32_t workers;		/* the process's (> 1: their steering level) */
};

/* ---- locks (dev_lock.h): the device's, a slot's, the direct path's ---- */

static int abs_lock(int ifindex, const char *what) { return dev_lock_try("urma", ifindex, what); }
static int dev_lock(int ifindex) { return dev_lock_wait("urma", ifindex, "lock", LOCK_WAIT_MS); }
static void unlock(int *fd) { dev_unlock(fd); }

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Is slot k held by a live process? (Device lock held.) */
static bool slot_live(int ifindex, uint32_t k)
{
	char name[32];
	int fd;

	snprintf(name, sizeof(name), "slot/%u", k);
	fd = abs_lock(ifindex, name);
	if (fd < 0)
		return fd == -EADDRINUSE;
	close(fd);
	return false;
}

/* ---- the device's program: attach, or join the one there ------------------------- */

static const char *const map_names[] = { "ub_ep_xsks", "ub_ep_stats", "ub_ep_slot", "ub_ep_devs",
					 "ub_ep_uasid", "ub_ep_rcid" };

static int *map_slot(struct ep_share *s, unsigned i)
{
	int *f[] = { &s->xsks_fd, &s->stats_fd, &s->slot_fd, &s->devs_fd, &s->uasid_fd, &s->rcid_fd };

	return f[i];
}

static int attach_new(struct ep_share *s, bool generic, char *err, size_t errlen)
{
	int rc;

	s->skel = ub_endpoint__open();
	if (!s->skel) {
		snprintf(err, errlen, "cannot open the endpoint XDP program: %s", strerror(errno));
		return -errno;
	}
	s->skel->rodata->ub_ethertype = s->ethertype;
	s->skel->rodata->ub_steer = UB_EP_STEER_WORKERS;
	rc = ub_endpoint__load(s->skel);
	if (rc) {
		snprintf(err, errlen, "cannot load the endpoint XDP program: %s", strerror(-rc));
		return rc;
	}
	rc = run_link_xdp(bpf_program__fd(s->skel->progs.ub_endpoint), s->ifindex, generic);
	/* A device without native XDP (not every driver has it): generic. */
	if (rc < 0 && !generic && rc != -EEXIST && rc != -EBUSY)
		rc = run_link_xdp(bpf_program__fd(s->skel->progs.ub_endpoint), s->ifindex, true);
	if (rc < 0) {
		snprintf(err, errlen, "cannot attach XDP to %s: %s", s->dev,
			 rc == -EEXIST || rc == -EBUSY ? "another XDP program is attached" : strerror(-rc));
		return rc == -EEXIST ? -EBUSY : rc;
	}
	s->link_fd = rc;
	s->prog_fd = bpf_program__fd(s->skel->progs.ub_endpoint);
	s->xsks_fd = bpf_map__fd(s->skel->maps.ub_ep_xsks);
	s->stats_fd = bpf_map__fd(s->skel->maps.ub_ep_stats);
	s->slot_fd = bpf_map__fd(s->skel->maps.ub_ep_slot);
	s->devs_fd = bpf_map__fd(s->skel->maps.ub_ep_devs);
	s->uasid_fd = bpf_map__fd(s->skel->maps.ub_ep_uasid);
	s->rcid_fd = bpf_map__fd(s->skel->maps.ub_ep_rcid);
	return 0;
}

/* The XDP link through which prog_id is on our device: its fd, or -1. */
static int find_link(int ifindex, uint32_t prog_id)
{
	uint32_t id = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info li;
		uint32_t len = sizeof(li);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&li, 0, sizeof(li));
		if (!bpf_obj_get_info_by_fd(fd, &li, &len) && li.type == BPF_LINK_TYPE_XDP &&
		    li.prog_id == prog_id && (int)li.xdp.ifindex == ifindex)
			return fd;
		close(fd);
	}
	return -1;
}

/*
 * The program prog_id on the device: ours in shared mode, for the same
 * kind of device? Then take a descriptor of its link and of its maps.
 * 0; -EAGAIN (its link is going: look again); -EBUSY (not ours); -EPROTO.
 */
static int join(struct ep_share *s, uint32_t prog_id, char *err, size_t errlen)
{
	struct ub_endpoint__rodata ro;
	struct bpf_prog_info pi;
	uint32_t ids[32], len = sizeof(pi), nmaps;
	int rodata = -1, rc = -EBUSY;
	uint8_t val[256];

	s->prog_fd = bpf_prog_get_fd_by_id(prog_id);
	if (s->prog_fd < 0)
		return -EAGAIN;
	s->own_fds = true;
	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = 32;
	pi.map_ids = (uint64_t)(uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(s->prog_fd, &pi, &len) || strcmp(pi.name, "ub_endpoint"))
		goto not_ours;
	nmaps = pi.nr_map_ids < 32 ? pi.nr_map_ids : 32;
	for (uint32_t i = 0; i < nmaps; i++) {
		struct bpf_map_info mi;
		uint32_t mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);
		bool kept = false;

		if (fd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		if (!bpf_obj_get_info_by_fd(fd, &mi, &mlen)) {
			for (unsigned k = 0; k < sizeof(map_names) / sizeof(map_names[0]); k++)
				if (!strcmp(mi.name, map_names[k]) && *map_slot(s, k) < 0) {
					*map_slot(s, k) = fd;
					kept = true;
				}
			/* Its value is the variables' bytes, without the struct's padding. */
			if (strstr(mi.name, ".rodata") && rodata < 0 && mi.value_size <= sizeof(val) &&
			    mi.value_size >= offsetof(struct ub_endpoint__rodata, ub_steer) + 1) {
				uint32_t zero = 0;

				memset(val, 0, sizeof(val));
				if (!bpf_map_lookup_elem(fd, &zero, val)) {
					memcpy(&ro, val, sizeof(ro));
					rodata = 1;
				}
			}
		}
		if (!kept)
			close(fd);
	}
	for (unsigned k = 0; k < sizeof(map_names) / sizeof(map_names[0]); k++)
		if (*map_slot(s, k) < 0)
			goto not_ours;
	if (rodata < 0 || !ro.ub_steer)
		goto not_ours;
	if (s->workers > 1 && ro.ub_steer < UB_EP_STEER_WORKERS) {
		snprintf(err, errlen, "the XDP program on %s was attached by an older library, which steers to no worker: UBXDP_URMA_WORKERS=1, or restart its processes",
			 s->dev);
		return -EPROTO;
	}
	if (ro.ub_ethertype != s->ethertype) {
		snprintf(err, errlen, "the processes on %s use it as %s, not %s", s->dev,
			 ro.ub_ethertype ? "a native UB port" : "UBoE",
			 s->ethertype ? "a native UB port" : "UBoE");
		return -EPROTO;
	}
	s->link_fd = find_link(s->ifindex, prog_id);
	if (s->link_fd < 0)
		return -EAGAIN;		/* going with its last holder, or not a link */
	return 0;
not_ours:
	snprintf(err, errlen, "another XDP program is attached (%s)", pi.name[0] ? pi.name : "?");
	return rc;
}

static void drop_program(struct ep_share *s)
{
	if (s->link_fd >= 0)
		close(s->link_fd);
	s->link_fd = -1;
	if (s->own_fds) {
		if (s->prog_fd >= 0)
			close(s->prog_fd);
		for (unsigned k = 0; k < sizeof(map_names) / sizeof(map_names[0]); k++)
			if (*map_slot(s, k) >= 0)
				close(*map_slot(s, k));
	}
	ub_endpoint__destroy(s->skel);
	s->skel = NULL;
	s->own_fds = false;
	s->prog_fd = -1;
	for (unsigned k = 0; k < sizeof(map_names) / sizeof(map_names[0]); k++)
		*map_slot(s, k) = -1;
}

/* The XDP program on the device, in *id (0: none); 0 or -errno. */
static int prog_on(int ifindex, uint32_t *id)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(ifindex, 0, &q))
		return -errno;
	*id = q.prog_id ? q.prog_id : q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
	return 0;
}

static int program(struct ep_share *s, bool generic, char *err, size_t errlen)
{
	for (int tries = 0;; tries++) {
		uint32_t id = 0;
		int rc = prog_on(s->ifindex, &id);

		if (rc) {
			snprintf(err, errlen, "cannot query XDP on %s: %s", s->dev, strerror(-rc));
			return rc;
		}
		rc = id ? join(s, id, err, errlen) : attach_new(s, generic, err, errlen);
		if (!rc)
			return 0;
		drop_program(s);
		/* A process that just ended leaves its link (ours, or another
		 * program's: ubperf's) for the kernel to release a few
		 * milliseconds later: a while before "another program". Not
		 * for a live endpoint's (ubperf's), which stays. */
		if (rc == -EBUSY && dev_lock_attached_held(s->ifindex))
			return rc;
		if ((rc != -EAGAIN && rc != -EBUSY) || tries >= (rc == -EBUSY ? BUSY_TRIES : JOIN_TRIES)) {
			if (rc == -EAGAIN)
				snprintf(err, errlen, "another XDP program is attached (not through a link)");
			return rc == -EAGAIN ? -EBUSY : rc;
		}
		sleep_ms(20);
	}
}

/* Joined to our program already on the device: none put on, so no need of
 * the endpoints' open lock, whose holder (a ubperf) will find it at its
 * check and fail: it would refuse a URMA process for a ubperf that cannot win. */
static int join_present(struct ep_share *s, char *err, size_t errlen)
{
	uint32_t id = 0;
	int rc = prog_on(s->ifindex, &id);

	if (!rc)
		rc = id ? join(s, id, err, errlen) : -ENOENT;
	if (rc)
		drop_program(s);
	return rc;
}

/* ---- map entries -------------------------------------------------------------- */

static void set_mode(struct ep_share *s, uint32_t slot, uint32_t mode)
{
	bpf_map_update_elem(s->slot_fd, &slot, &mode, BPF_ANY);
}

static uint32_t get_mode(struct ep_share *s, uint32_t slot)
{
	uint32_t v = 0;

	bpf_map_lookup_elem(s->slot_fd, &slot, &v);
	return v & UB_EP_SLOT_MASK;
}

/* Delete every entry of a hash map (key size ksz) whose slot is `slot`
 * (RCID entries carry a worker above it). */
static void sweep_map(int fd, size_t ksz, uint32_t slot)
{
	size_t cap = 256, n = 0;
	uint8_t *keys = malloc(cap * ksz), cur[32], next[32];
	bool first = true;

	if (!keys)
		return;
	while (!bpf_map_get_next_key(fd, first ? NULL : cur, next)) {
		uint32_t v;

		first = false;
		memcpy(cur, next, ksz);
		if (bpf_map_lookup_elem(fd, cur, &v) || (v & UB_EP_SLOT_MASK) != slot)
			continue;
		if (n == cap) {
			uint8_t *k = realloc(keys, cap * 2 * ksz);

			if (!k)
				break;
			keys = k;
			cap *= 2;
		}
		memcpy(keys + n++ * ksz, cur, ksz);
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, keys + i * ksz);
	free(keys);
}

static void sweep(struct ep_share *s, uint32_t slot)
{
	sweep_map(s->uasid_fd, sizeof(uint32_t), slot);
	sweep_map(s->rcid_fd, sizeof(struct ub_ep_rcid_key), slot);
}

/* ---- the veth, and the device's queues ------------------------------------------------ */

/* An AF_PACKET socket that sends on ifindex (of this thread's namespace). */
static int pkt_socket(int ifindex)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = ifindex };
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), sz = 8 << 20;

	/* Protocol 0: it receives nothing; it only sends. */
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	return fd;
}

/* A socket a worker (n of them, 1 at least) on ifindex, named what in err. */
static int pkt_sockets(int *fd, uint32_t n, int ifindex, const char *what, char *err, size_t errlen)
{
	for (uint32_t w = 0; w < (n ? n : 1) && w < UB_EP_MAX_WORKERS; w++) {
		fd[w] = pkt_socket(ifindex);
		if (fd[w] < 0) {
			int rc = fd[w];

			snprintf(err, errlen, "AF_PACKET socket on %s: %s", what, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static void pkt_sockets_close(int *fd)
{
	for (uint32_t w = 0; w < UB_EP_MAX_WORKERS; w++) {
		if (fd[w] >= 0)
			close(fd[w]);
		fd[w] = -1;
	}
}

/* An instance of the program on the veth's near end, with the device's
 * maps (ub_loop: a DIRECT slot's frames go to its veth too). */
static int loop_program(struct ep_share *s, int ifindex)
{
	struct ub_endpoint *k = ub_endpoint__open();
	struct bpf_map *maps[] = { k ? k->maps.ub_ep_xsks : NULL, k ? k->maps.ub_ep_stats : NULL,
				   k ? k->maps.ub_ep_slot : NULL, k ? k->maps.ub_ep_devs : NULL,
				   k ? k->maps.ub_ep_uasid : NULL, k ? k->maps.ub_ep_rcid : NULL };
	int rc;

	if (!k)
		return -errno;
	s->loop_skel = k;
	k->rodata->ub_ethertype = s->ethertype;
	k->rodata->ub_steer = UB_EP_STEER_WORKERS;
	k->rodata->ub_loop = 1;
	for (unsigned i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		rc = bpf_map__reuse_fd(maps[i], *map_slot(s, i));	/* map_names' order */
		if (rc)
			return rc;
	}
	rc = ub_endpoint__load(k);
	if (rc)
		return rc;
	rc = run_link_xdp(bpf_program__fd(k->progs.ub_endpoint), ifindex, false);
	if (rc < 0)
		return rc;
	s->loop_link = rc;
	return 0;
}

/*
 * In the process's own namespace: the pair; on its far end (VETH_SOCK) the
 * plain endpoint program and the AF_XDP socket; on its near end (VETH_DEV)
 * the device's program (another instance, on the same maps), which steers
 * what the process sends into VETH_SOCK (frames to jetties of the device
 * itself) as the device's steers the device's; the devmap entry; the
 * socket that sends those frames.
 */
static int veth_inside(struct ep_share *s, const struct ep_share_cfg *cfg, char *err, size_t errlen)
{
	const struct nl_link_change up = { .up = 1 };
	int rc, dev_if;
	uint32_t v;

	s->rt = nl_open_route(err, errlen);
	if (!s->rt)
		return -EIO;
	rc = nl_veth_add(s->rt, VETH_SOCK, VETH_DEV, s->veth_mtu, 0);
	s->veth_ifindex = (int)if_nametoindex(VETH_SOCK);
	dev_if = (int)if_nametoindex(VETH_DEV);
	if (!rc && (!s->veth_ifindex || !dev_if))
		rc = -ENODEV;
	if (!rc)
		rc = nl_link_set(s->rt, dev_if, &up);
	if (!rc)
		rc = nl_link_set(s->rt, s->veth_ifindex, &up);
	if (rc) {
		snprintf(err, errlen, "cannot make the process's veth pair: %s",
			 rc == -ENODEV ? strerror(ENODEV) : nl_error(s->rt));
		return rc;
	}
	/* The plain program, steering to the process's workers by TPN as
	 * ubperf's does (its own RCID map: ep_share_rcid). */
	s->vxdp = ep_xdp_attach(VETH_SOCK, false, s->ethertype, s->workers, err, errlen);
	if (!s->vxdp)
		return -EIO;
	rc = cfg->bind(cfg->arg, VETH_SOCK, xsk_dev_queues(VETH_SOCK, UB_EP_MAX_QUEUES),
		       ep_xdp_xskmap_fd(s->vxdp), false, err, errlen);
	if (rc)
		return rc;
	rc = loop_program(s, dev_if);
	if (rc < 0) {
		snprintf(err, errlen, "the device's program on the process's veth: %s", strerror(-rc));
		return rc;
	}
	/* The devmap takes the ifindex in the updater's namespace: this one. */
	v = (uint32_t)dev_if;
	if (bpf_map_update_elem(s->devs_fd, &s->slot, &v, BPF_ANY)) {
		rc = -errno;
		snprintf(err, errlen, "devmap entry for the process's veth: %s", strerror(errno));
		return rc;
	}
	return pkt_sockets(s->loop_fd, s->workers, s->veth_ifindex, "the process's veth", err, errlen);
}

static int make_veth(struct ep_share *s, const struct ep_share_cfg *cfg, char *err, size_t errlen)
{
	int orig, rc;

	orig = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (orig < 0) {
		snprintf(err, errlen, "this thread's network namespace: %s", strerror(errno));
		return -errno;
	}
	/* This thread alone, for a moment: the namespace then lives as long
	 * as the process's socket in it, and takes the pair with it. */
	if (unshare(CLONE_NEWNET)) {
		rc = -errno;
		close(orig);
		snprintf(err, errlen, "cannot make a network namespace: %s", strerror(-rc));
		return rc;
	}
	rc = veth_inside(s, cfg, err, errlen);
	if (setns(orig, CLONE_NEWNET)) {
		/* Not where it was: nothing sensible can go on in this thread. */
		fprintf(stderr, "ubxdp: cannot go back to the network namespace: %s\n", strerror(errno));
		abort();
	}
	close(orig);
	return rc;
}

static int go_direct(struct ep_share *s, const struct ep_share_cfg *cfg, char *err, size_t errlen)
{
	uint32_t zero = 0, d = 0;
	int rc;

	/* A holder of the queues that died may have left its slot's mode. */
	bpf_map_lookup_elem(s->slot_fd, &zero, &d);
	if (d && d != s->slot && d < UB_EP_SLOTS && get_mode(s, d) == UB_EP_SLOT_DIRECT)
		set_mode(s, d, UB_EP_SLOT_FREE);
	rc = cfg->bind(cfg->arg, s->dev, xsk_dev_queues(s->dev, UB_EP_MAX_QUEUES), s->xsks_fd, true,
		       err, errlen);
	if (rc)
		return rc;
	s->direct = true;
	set_mode(s, s->slot, UB_EP_SLOT_DIRECT | (s->workers > 1 ? s->workers << UB_EP_WORKER_SHIFT : 0));
	bpf_map_update_elem(s->slot_fd, &zero, &s->slot, BPF_ANY);
	return 0;
}

static int go_veth(struct ep_share *s, char *err, size_t errlen)
{
	int rc = pkt_sockets(s->tx_fd, s->workers, s->ifindex, s->dev, err, errlen);

	if (rc)
		return rc;
	set_mode(s, s->slot, UB_EP_SLOT_VETH);
	return 0;
}

/* ---- open, close ------------------------------------------------------------------ */

static void release(struct ep_share *s)
{
	uint32_t zero = 0, d = 0;

	if (s->slot_fd >= 0 && s->slot) {
		set_mode(s, s->slot, UB_EP_SLOT_FREE);
		if (s->direct && !bpf_map_lookup_elem(s->slot_fd, &zero, &d) && d == s->slot) {
			d = 0;
			bpf_map_update_elem(s->slot_fd, &zero, &d, BPF_ANY);
		}
		bpf_map_delete_elem(s->devs_fd, &s->slot);
		sweep(s, s->slot);
	}
	pkt_sockets_close(s->loop_fd);
	if (s->loop_link >= 0)
		close(s->loop_link);
	s->loop_link = -1;
	ub_endpoint__destroy(s->loop_skel);
	s->loop_skel = NULL;
	if (s->vxdp) {
		ep_xdp_detach(s->vxdp);
		s->vxdp = NULL;
	}
	if (s->rt) {
		/* The pair goes with the namespace anyway; now is tidier. */
		if (s->veth_ifindex)
			nl_link_del(s->rt, s->veth_ifindex, NULL);
		nl_close(s->rt);
		s->rt = NULL;
	}
	pkt_sockets_close(s->tx_fd);
	drop_program(s);
	unlock(&s->direct_lock);
	unlock(&s->slot_lock);
}

struct ep_share *ep_share_open(const struct ep_share_cfg *cfg, char *err, size_t errlen)
{
	struct ep_share *s = calloc(1, sizeof(*s));
	int lock = -1, open_lock = -1, rc = 0;
	uint32_t dev_mtu;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	s->prog_fd = s->link_fd = s->slot_lock = s->direct_lock = -1;
	s->loop_link = -1;
	for (unsigned w = 0; w < UB_EP_MAX_WORKERS; w++)
		s->tx_fd[w] = s->loop_fd[w] = -1;
	for (unsigned k = 0; k < sizeof(map_names) / sizeof(map_names[0]); k++)
		*map_slot(s, k) = -1;
	snprintf(s->dev, sizeof(s->dev), "%s", cfg->dev);
	s->ethertype = cfg->ethertype;
	s->workers = cfg->workers;
	s->ifindex = (int)if_nametoindex(cfg->dev);
	if (!s->ifindex) {
		snprintf(err, errlen, "no device %s", cfg->dev);
		rc = -ENODEV;
		goto fail;
	}
	lock = dev_lock(s->ifindex);
	if (lock < 0) {
		snprintf(err, errlen, "the lock of device %s: %s", cfg->dev, strerror(-lock));
		rc = lock;
		goto fail;
	}
	/* The endpoints' lock too, ours then theirs, over the check and the
	 * attach: a ubperf past its check, not yet attached (waiting out a
	 * busy queue), holds it and would find our program at its attach.
	 * None of ours holds it here (under our device lock): one that does is
	 * another endpoint. Refused at once, but for a join (join_present: its -EPROTO says why). */
	open_lock = dev_lock_open(s->ifindex, 0);
	if (open_lock >= 0) {
		rc = program(s, cfg->generic, err, errlen);
		unlock(&open_lock);
	} else if (open_lock != -EADDRINUSE || ((rc = join_present(s, err, errlen)) && rc != -EPROTO)) {
		snprintf(err, errlen, "cannot attach XDP to %s: %s", cfg->dev,
			 open_lock == -EADDRINUSE ? "another endpoint (not a URMA process) is opening it" :
			 strerror(-open_lock));
		rc = open_lock == -EADDRINUSE ? -EINPROGRESS : open_lock;
		goto fail;
	}
	if (rc)
		goto fail;
	for (uint32_t k = 1; k < UB_EP_SLOTS && s->slot_lock < 0; k++) {
		char name[32];

		snprintf(name, sizeof(name), "slot/%u", k);
		s->slot_lock = abs_lock(s->ifindex, name);
		if (s->slot_lock >= 0)
			s->slot = k;
	}
	if (s->slot_lock < 0) {
		snprintf(err, errlen, "%d processes use %s already", UB_EP_SLOTS - 1, cfg->dev);
		rc = -EUSERS;
		goto fail;
	}
	/* What a process of before left under this slot. */
	set_mode(s, s->slot, UB_EP_SLOT_FREE);
	bpf_map_delete_elem(s->devs_fd, &s->slot);
	sweep(s, s->slot);
	dev_mtu = cfg->dev_mtu ? cfg->dev_mtu : 1500;
	s->veth_mtu = dev_mtu < UB_EP_VETH_MTU_MAX ? dev_mtu : UB_EP_VETH_MTU_MAX;
	/* Will the queues be ours? Asked before any socket is made: their
	 * holder's UMEM, made with its first socket (on the veth), is then
	 * multi-buffer. Claimed after the veth, as before: claimed before
	 * it, the frames of a holder just killed were no longer counted
	 * drop_no_socket by the device's program (tests/urma/run
	 * test_killed_process_peers_fail_other_unaffected_nothing_left failed
	 * 3 runs in 8; why is not understood). No one else can take them
	 * meanwhile: every claim is under the device's lock, which we hold.
	 * The claim lasts the process's life, so does the path (and each
	 * channel's MTU). */
	if (!cfg->no_direct && cfg->holder) {
		int peek = abs_lock(s->ifindex, "direct");

		if (peek >= 0)
			cfg->holder(cfg->arg);
		unlock(&peek);
	}
	rc = make_veth(s, cfg, err, errlen);
	if (!rc && !cfg->no_direct)
		s->direct_lock = abs_lock(s->ifindex, "direct");
	if (!rc)
		rc = s->direct_lock >= 0 ? go_direct(s, cfg, err, errlen) : go_veth(s, err, errlen);
	if (rc)
		goto fail;
	unlock(&lock);
	return s;
fail:
	release(s);
	unlock(&lock);
	free(s);
	errno = -rc;
	return NULL;
}

void ep_share_close(struct ep_share *s)
{
	int lock;

	if (!s)
		return;
	/* Under the device's lock: a process joining meanwhile must not take
	 * a link about to go with us. */
	lock = dev_lock(s->ifindex);
	release(s);
	unlock(&lock);
	free(s);
}

bool ep_share_direct(const struct ep_share *s) { return s->direct; }

bool ep_share_queues_free(const char *dev)
{
	const int ifindex = (int)if_nametoindex(dev);
	int lock = ifindex ? dev_lock_wait("urma", ifindex, "lock", PEEK_WAIT_MS) : -1, peek = -1;
	bool free_ = false;

	if (lock >= 0) {
		peek = abs_lock(ifindex, "direct");
		free_ = peek >= 0;
	}
	unlock(&peek);
	unlock(&lock);
	return free_;
}
uint32_t ep_share_slot(const struct ep_share *s) { return s->slot; }
int ep_share_tx_fd(const struct ep_share *s, uint32_t w) { return w < UB_EP_MAX_WORKERS ? s->tx_fd[w] : -1; }

uint32_t ep_share_mtu(const struct ep_share *s, uint32_t dev_mtu)
{
	if (s->direct)
		return dev_mtu;
	return ep_share_veth_mtu(s);
}

uint32_t ep_share_veth_mtu(const struct ep_share *s) { return s->veth_mtu; }

int ep_share_loop_fd(const struct ep_share *s, uint32_t w) { return w < UB_EP_MAX_WORKERS ? s->loop_fd[w] : -1; }

int ep_share_uasid(struct ep_share *s, uint32_t uasid)
{
	int lock = dev_lock(s->ifindex), rc = 0;
	uint32_t v;

	if (!bpf_map_lookup_elem(s->uasid_fd, &uasid, &v) && v != s->slot && v < UB_EP_SLOTS &&
	    slot_live(s->ifindex, v))
		rc = -EADDRINUSE;
	else if (bpf_map_update_elem(s->uasid_fd, &uasid, &s->slot, BPF_ANY))
		rc = -errno;
	if (!rc && s->has_uasid && s->uasid != uasid)
		bpf_map_delete_elem(s->uasid_fd, &s->uasid);
	if (!rc) {
		s->uasid = uasid;
		s->has_uasid = true;
	}
	unlock(&lock);
	return rc;
}

int ep_rcid_steer(int fd, uint8_t ip_ver, const uint8_t ip[16], uint32_t rcid, uint32_t owner, bool add,
		  bool take_over)
{
	struct ub_ep_rcid_key k;
	uint32_t v;

	memset(&k, 0, sizeof(k));
	memcpy(k.ip, ip, ip_ver == 6 ? 16 : 4);
	k.rcid = rcid;
	if (!add) {
		/* Only the owner's: the key may have gone to another since. */
		if (!bpf_map_lookup_elem(fd, &k, &v) && v == owner)
			bpf_map_delete_elem(fd, &k);
		return 0;
	}
	if (!take_over && !bpf_map_lookup_elem(fd, &k, &v) && v != owner)
		return -EEXIST;
	return bpf_map_update_elem(fd, &k, &owner, BPF_ANY) ? -errno : 0;
}

int ep_share_rcid(struct ep_share *s, uint8_t ip_ver, const uint8_t ip[16], uint32_t rcid,
		  uint32_t worker, bool add)
{
	int rc = ep_rcid_steer(s->rcid_fd, ip_ver, ip, rcid, s->slot | worker << UB_EP_WORKER_SHIFT,
			       add, true);

	/* The veth's program (this process's frames in veth mode, loopback
	 * in any) steers to the worker by its own map. */
	if (!rc && s->workers > 1)
		rc = ep_rcid_steer(ep_xdp_rcid_fd(s->vxdp), ip_ver, ip, rcid, worker, add, true);
	return rc;
}

int ep_share_stats(const struct ep_share *s, uint64_t out[UB_EP_CNT__MAX])
{
	return ep_xdp_stats_fd(s->stats_fd, out);
}
