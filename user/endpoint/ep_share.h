/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One device, several processes (liburma's stage 2, docs/URMA.md
 * "Processes and threads"): the endpoint XDP program in shared mode
 * (ub_steer, headers/ub_endpoint_maps.h) attached once to the device by a
 * BPF link that every process using the device holds a descriptor of, so
 * that it stays while any of them lives and goes with the last, however it
 * ends; and this process's claim on the device:
 *
 *   slot    1 .. UB_EP_SLOTS - 1, its TPNs and RCIDs; held by binding an
 *           abstract unix socket named after the device (the kernel lets
 *           go of it when the process ends, SIGKILL included: no stale
 *           claim outlives its process, nothing is left in a filesystem)
 *   veth    every process's: a veth pair in a network namespace of the
 *           process's own (unshared by the opening thread, which goes back
 *           at once; it lives as long as the process's socket in it, and
 *           the kernel deletes the pair with it), the device's program
 *           redirecting the process's frames into it through a devmap, the
 *           AF_XDP socket on its far end. The device's program runs on its
 *           near end too: what the process sends into the far end (frames
 *           to jetties of the device itself, loopback) is steered there.
 *   direct  the AF_XDP sockets on the device's own rx queues (with workers,
 *           each worker's on every queue), for the one
 *           process that holds them (the stage-1 path, as fast; its veth
 *           then carries only loopback); the others receive by the veth,
 *           and send through an AF_PACKET socket on the device.
 *
 * Claims are made under a device lock (another abstract socket), so two
 * processes starting together serialize; a process that died left only
 * map entries naming its slot, which the next holder of the slot (or of the
 * UASID) clears. Every call here is from one thread at a time (the
 * endpoint's).
 */
#ifndef UBXDP_EP_SHARE_H
#define UBXDP_EP_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ub_endpoint_maps.h"

struct ep_share;

struct ep_share_cfg {
	const char *dev;
	bool generic;			/* XDP in SKB mode, when this process attaches */
	uint16_t ethertype;		/* native UB: its EtherType; 0: UBoE */
	bool no_direct;			/* take the veth even when the queues are free */
	uint32_t dev_mtu;		/* the device's MTU (the veth's, at most UB_EP_VETH_MTU_MAX) */
	/* The process's workers (0, 1: one): bind makes every worker's sockets;
	 * the program steers to them by TPN (ub_endpoint_maps.h). */
	uint32_t workers;
	/*
	 * Bind the AF_XDP sockets: to the veth end (in the process's
	 * namespace; first), then (is_dev) to the device's nq rx queues when
	 * this process holds them, inserting each into xskmap_fd at its queue.
	 * 0, or -errno with one line in err.
	 */
	int (*bind)(void *arg, const char *ifname, unsigned nq, int xskmap_fd, bool is_dev,
		    char *err, size_t errlen);
	/* Called (may be NULL) before the first bind when this process will
	 * hold the device's queues: its sockets may be multi-buffer. */
	void (*holder)(void *arg);
	void *arg;
};

/* NULL with one line in err and errno: EBUSY, another program is on the
 * device; EINPROGRESS, another endpoint (ubperf's) is opening it, its program
 * next; EUSERS, every slot is taken; EPROTO, the processes there use the
 * device the other way (UBoE / native). */
struct ep_share *ep_share_open(const struct ep_share_cfg *cfg, char *err, size_t errlen);
void ep_share_close(struct ep_share *s);

bool ep_share_direct(const struct ep_share *s);
/* Would a process opening dev now hold its queues (nobody holds them)?
 * Asked under the device's lock: a peek outside it could make an opener
 * meanwhile find them taken. false when the lock cannot be had within
 * 100 ms: another process is opening the device (and will likely take them)
 * or closing it; the veth's smaller MTU is the safe answer then. */
bool ep_share_queues_free(const char *dev);
uint32_t ep_share_slot(const struct ep_share *s);
/* The largest frame MTU this process's path to other hosts takes: the
 * device's for the holder of its queues, else its veth's. */
uint32_t ep_share_mtu(const struct ep_share *s, uint32_t dev_mtu);
/* Its veth's MTU (UB_EP_VETH_MTU_MAX at most): the path to jetties of the
 * device itself (loopback), whichever process. */
uint32_t ep_share_veth_mtu(const struct ep_share *s);
/* Veth mode: the AF_PACKET socket worker w's frames leave by (on the
 * device); else -1. */
int ep_share_tx_fd(const struct ep_share *s, uint32_t w);
/* The AF_PACKET socket by which worker w sends frames to jetties of the
 * device itself (into the process's veth, through the device's program). */
int ep_share_loop_fd(const struct ep_share *s, uint32_t w);

/* Hellos for jetties of this UASID come here. 0, or -EADDRINUSE when a live
 * process on the device has it. */
int ep_share_uasid(struct ep_share *s, uint32_t uasid);
/* (ip, rcid) steered to owner (a slot, a worker) in the program's RCID map fd
 * (the key: IPv4 in the first 4 bytes), or (!add) its entry removed if it is
 * still owner's. An entry of another owner is taken over only with
 * take_over, else -EEXIST. */
int ep_rcid_steer(int fd, uint8_t ip_ver, const uint8_t ip[16], uint32_t rcid, uint32_t owner, bool add,
		  bool take_over);
/* UTP and CTP requests from (ip, rcid) come here, to that worker's sockets
 * (add), or no longer (!add). */
int ep_share_rcid(struct ep_share *s, uint8_t ip_ver, const uint8_t ip[16], uint32_t rcid,
		  uint32_t worker, bool add);

/* The device program's counters, summed over CPUs (0 on success). */
int ep_share_stats(const struct ep_share *s, uint64_t out[UB_EP_CNT__MAX]);

#endif
