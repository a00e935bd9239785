/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The UBoE endpoint (draft-li-uboe-00 Fig. 1) as a library: the transport
 * core (user/transport/tp.h) driven over AF_XDP (user/xsk) behind the
 * endpoint XDP program, so that a program can open channels and post
 * sends/writes/reads without ubperf.
 *
 *   rx:  AF_XDP -> parse UBoE -> ICRC verify -> tp_ep_rx (with the IP ECN)
 *   tx:  tp_ep_tx writes TPH..payload straight into a UMEM frame ->
 *        uboe_wrap (Eth, IPv4 DF / IPv6, UDP entropy port, ECT(0), ICRC) -> AF_XDP
 *
 * Every channel needs a peer (struct ep_peer: its address, and the next hop
 * resolved from the kernel's route and neighbour tables, looked up again
 * when they change: the endpoint listens to their changes over netlink). Create channels with ep_chan_create(), which sets the core's
 * per-channel user pointer; tp_chan_user() gives back struct ep_chan.
 *
 * With a native EtherType (struct ep_native) the device is an emulated UB
 * port instead (docs/WIRE.md §5): frames are Eth(0x88B5) | LPH | NTH | the same
 * IP packet, received and sent; the next hop is then the UB2E switch's UB-side
 * port, which has an IP address and answers ARP/ND like any router.
 *
 * Single-threaded: one thread calls ep_progress() and the tp_* functions of
 * an endpoint. With workers (ep_config.workers > 1) the endpoint is several,
 * one per worker thread (ep_worker()): each its own transport core, TPNs
 * (local TPN % workers == its index), frames, and its own rx queues (queue
 * q is worker q % workers's, where the device has at least as many queues
 * as workers), so no lock is shared on the per-packet path. The device's
 * program steers each frame to the worker of its channel
 * (headers/ub_endpoint_maps.h): to the socket the queue's owner holds for
 * that worker, and the owner copies a frame for another worker to it
 * (ep_workers.c). With more workers than queues, each has a socket on every
 * queue, and the queues' fill and completion rings are shared under a lock
 * (user/xsk/xsk_mt.h, in batches).
 */
#ifndef UBXDP_EP_H
#define UBXDP_EP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "endpoint/nexthop.h"
#include "transport/tp.h"
#include "ub_endpoint_maps.h"
#include "xsk/xsk_mode.h"

struct tpg;

/* What a native UB frame carries besides the IP packet. */
struct ep_native {
	uint16_t ethertype;	/* 0: UBoE, not native */
	uint8_t rt, vl;		/* LPH: UB_RT_*, virtual lane */
	uint16_t cci;		/* NTH CCI when the channel's CC asks for none */
	uint8_t perm;		/* UB_PERM_* */
	uint32_t pid;		/* Partition ID, 1 .. 0xffffff */
};

/* Native mode with the defaults: EtherType 0x88B5, RT per-flow/shortest,
 * CCI 0x4002 (FECN mode, 10 = markable: ECT(0) beyond a UB2E switch),
 * high privilege, partition 1. */
void ep_native_init(struct ep_native *n);

#define EP_MAX_MEMBERS	4

struct ep_config {
	const char *dev;
	/* A CTP entity (native only): several emulated UB ports bound as one
	 * entity behind one transport core, members[0] == dev (its route gives
	 * the entity's address). Each CTP frame leaves by member LBF mod n, its
	 * LBF the low byte of its entropy (per flow, or per packet with a
	 * per-packet channel group), to the next hop that member's device
	 * reaches the peer by (route and neighbour by that device, as for
	 * members[0]); RTP frames by members[0]. n <= 1: dev alone. */
	const char *members[EP_MAX_MEMBERS];
	uint32_t nmembers;
	bool generic;		/* XDP in SKB mode */
	/* AF_XDP zero-copy or copy; 0 (auto): zero-copy where the driver has
	 * it, copy mode otherwise, and always copy with generic XDP (a driver's
	 * zero-copy path needs its own native XDP). */
	enum xsk_mode xsk_mode;
	uint32_t nframes;	/* UMEM frames; 0: 8192 */
	uint8_t dscp;
	struct ep_native native;
	/* Every peer's next-hop MAC, for a next hop that answers no ARP/ND;
	 * the route still gives the device and the source address. */
	bool nexthop_mac_set;
	uint8_t nexthop_mac[6];
	/* Native only: the NPI rules of draft-li-uboe-00 §5.3 at this endpoint:
	 * a frame of another Partition ID than native.pid, or from a
	 * low-privilege sender when native.perm is low too, is dropped and
	 * counted (npi_partition, npi_permission). */
	bool npi_check;
	/* Frames one round (ep_progress) takes at most; 0: 256. A caller that
	 * answers Sends itself (manual_taack) keeps it under the core's
	 * pending answers. */
	uint32_t rx_batch;
	/*
	 * Shared with other processes on the device (liburma; ep_share.h):
	 * the device's program in shared mode, this process's slot, its TPNs
	 * in the slot's range (ep_tp_chan_create), the AF_XDP sockets on the
	 * device's queues when free, else on a veth of the process's own;
	 * peers at an address of the device itself are reached through the
	 * device's program (loopback). One device, no entity. share_no_direct:
	 * the veth even when the queues are free.
	 */
	bool shared, share_no_direct;
	/* Worker threads, 2 .. UB_EP_MAX_WORKERS (0, 1: one), each driving its
	 * own endpoint (ep_worker); one device: no entity. Shared: each
	 * worker's TPNs in the slot's range, its sockets on the process's veth
	 * and (when it holds them) on the device's queues. */
	uint32_t workers;
	struct tp_ep_config tp;
};

struct ep_peer {
	uint8_t ip_ver;
	uint8_t ip[16];
	struct ep_nexthop nh;	/* device, our source address, next-hop MAC */
	/* A CTP entity's members 1 .. n-1: the next-hop MAC by each one's device. */
	uint8_t member_mac[EP_MAX_MEMBERS][6];
	int oif;		/* the route asked by this device (0: any), see ep_peer_init */
	uint64_t nh_gen;	/* the endpoint's nh_gen when last looked up */
	uint64_t nh_changes;	/* MAC or device changed (route change, failover) */
	bool local;		/* an address of the device itself (shared mode) */
};

struct ep_chan {
	struct tp_chan *tp;
	struct ep_peer *peer;
	uint16_t sport;		/* UDP source port: entropy of this channel */
	struct tpg *tpg;	/* per-packet LB: the group picks the port per packet */
	void *app;		/* the application's */
	bool by_rcid;		/* UTP, CTP: steered to us by (peer, its RCID) */
	bool steered;		/* ... and that entry is in (ep_chan_connect) */
	uint32_t rcid;		/* the peer's channel, its key */
};

#define EP_RX_ERRORS(X)							\
	X(icrc_bad,	"UB/UBoE frames with a bad ICRC (dropped)")	\
	X(parse,	"frames the packet library rejects (dropped)")	\
	X(tp_drop,	"TP packets the core dropped (see its counters)")	\
	X(npi_partition, "native UB of another partition (npi_check)")	\
	X(npi_permission, "native UB low-to-low privilege (npi_check)")

struct ep_stats {
	uint64_t rx_frames, tx_frames, tx_ring_full, no_frame;
	/* packets that came, and went, in several UMEM frames (multi-buffer AF_XDP) */
	uint64_t rx_multi_buffer, tx_multi_buffer;
	/* of the multi-buffer ones sent, those built in place in a run of UMEM
	 * frames (not built apart and copied in) */
	uint64_t tx_in_place;
	/* of the multi-buffer ones received, those parsed where they lay: two
	 * frames in adjacent UMEM chunks (not gathered into a buffer first) */
	uint64_t rx_in_place;
	/* of those, UTP packets the ep_set_ctl() hook took and ep_send_raw() sent */
	uint64_t ctl_rx, ctl_tx;
	uint64_t ce_marked;	/* IP ECN CE, or native FECN light/severe CE */
	/* the kernel's AF_XDP counters (XDP_STATISTICS), summed over sockets;
	 * xsk_fill_empty: frames a queue dropped for an empty fill ring (its
	 * workers share it: in the worker that made its pool) */
	uint64_t xsk_rx_dropped, xsk_rx_ring_full, xsk_fill_empty;
	/* sockets whose queue was busy when bound: the open waited for it */
	uint64_t xsk_busy_binds;
	/* owned queues (ep_workers.c): frames that came on this worker's queue
	 * for another's channel, copied to it, and those dropped for its full
	 * ring (or too long for a slot) */
	uint64_t rx_handoff, rx_handoff_drop;
	/* pool locks this worker's thread took: 0 where its queues are its own */
	uint64_t xsk_pool_locks;
#define EP_STAT_FIELD(n, d) uint64_t n;
	EP_RX_ERRORS(EP_STAT_FIELD)
#undef EP_STAT_FIELD
};

struct ep;

/* NULL with one line in err. With workers, worker 0's endpoint. */
struct ep *ep_open(const struct ep_config *cfg, char *err, size_t errlen);
/* Every worker's too, the threads stopped first; never a worker's own. */
void ep_close(struct ep *e);
/* Worker w's endpoint (0: e itself), NULL past the last; each is driven by
 * one thread: ep_progress, its channels' tp_* calls, its peers. */
struct ep *ep_worker(struct ep *e, uint32_t w);
/*
 * A run on worker 0 alone (e: worker 0, before any channel on another
 * worker, while no other thread drives one): from now until ep_close the
 * program hands worker 0 every frame it would steer to another worker,
 * whose sockets it no longer fills (owned queues: every worker's entry on
 * a queue moves to the owner's socket there for worker 0, which worker 0
 * waits on, one a queue; its rounds read every socket). A frame for no channel of
 * worker 0 is dropped and counted there (tp_drop, parse, ...) like any
 * other; what the others held already is dropped and counted in theirs now
 * (owned: what their sockets held, and what was handed to them, is taken by
 * worker 0's core now, the ring to worker 0 emptied as it fills; a frame
 * the program redirected in the very instant of the fold may still land
 * after, on a socket worker 0's rounds read but do not wait on).
 * Their channel creates then fail (EOPNOTSUPP), and their setup hooks
 * (ep_set_ctl) are gone. 0, or -errno with every worker's entries as they
 * were (-EINVAL: no workers, or not worker 0).
 */
int ep_workers_fold(struct ep *e);
/* How many workers a device can keep busy: min(the CPUs the calling thread
 * may run on now (sched_getaffinity; no CPU quota), its rx queues,
 * UB_EP_MAX_WORKERS); 1 when it has no queues to tell. */
uint32_t ep_workers_for(const char *dev);
struct tp_ep *ep_tp(struct ep *e);

/*
 * Resolve the route and next hop to ip (waits up to timeout_ms). 0 or -errno + err.
 * The route must leave by the endpoint's device: the main one, or else a route
 * by the device through a gateway (a host with several ports, each routed,
 * e.g. `ip route add NET via GW2 dev PORT2 metric 200` beside the main one).
 * It asks the kernel on a netlink socket of its own, so it may run on any
 * thread while another drives the endpoint: it reads what ep_open set and
 * the next-hop generation (atomic), and resolves in the calling thread's
 * network namespace, which must be the endpoint's.
 */
int ep_peer_init(struct ep *e, struct ep_peer *p, uint8_t ip_ver, const uint8_t ip[16],
		 int timeout_ms, char *err, size_t errlen);

/* tp_chan_create() with cfg->user pointing at c; c->peer must be set (a CTP
 * channel takes the peer's address as its entity). */
struct tp_chan *ep_chan_create(struct ep *e, struct ep_chan *c, struct tp_chan_config *cfg);
/* tp_chan_connect(), and in shared mode the steering of the peer's UTP and
 * CTP requests to this process. */
int ep_chan_connect(struct ep *e, struct ep_chan *c, uint32_t peer_tpn, uint32_t peer_init_psn);
/* tp_chan_destroy() (c->tp then NULL), and that steering undone. */
void ep_chan_destroy(struct ep *e, struct ep_chan *c);
/* tp_chan_create() for a channel of no peer: in shared mode its TPN in
 * this process's range; with workers, one of this worker's (TPN % workers
 * == its index). NULL with errno EOPNOTSUPP for a CTP channel on a worker
 * other than 0, which would never receive (the program steers all of CTP to
 * worker 0), and for any channel on one after ep_workers_fold. */
struct tp_chan *ep_tp_chan_create(struct ep *e, const struct tp_chan_config *cfg);
/* Shared mode: hellos to jetties of this UASID come to this process. 0, or
 * -EADDRINUSE (a live process on the device has it), -EINVAL (not shared). */
int ep_share_set_uasid(struct ep *e, uint32_t uasid);
/* Shared mode: this process's slot (0: not shared) and whether it holds the
 * device's queues (else a veth of its own). */
uint32_t ep_shared_slot(const struct ep *e, bool *direct);
/* Shared mode: frames to this device's own jetties run through its program,
 * and those the kernel refused. */
void ep_loop_stats(const struct ep *e, uint64_t *sent, uint64_t *failed);
/* The counters of the device's XDP program (shared: every process's). 0 on success. */
int ep_xdp_counters(const struct ep *e, uint64_t out[UB_EP_CNT__MAX]);

/*
 * One round: receive and hand packets to the core, run its timers, transmit
 * what it has. Waits up to timeout_ms (0: not at all) when there was nothing
 * to do, until a frame or a route change comes or the core's next timer is
 * due (late by up to EP_TIMER_SLACK_NS, as a poll timeout would be, and
 * never by more than it was away; a loss timer by up to EP_LOSS_SLACK_NS;
 * one due within 10 us is not slept for: the caller's next round runs it).
 * Returns the packets moved.
 */
int ep_progress(struct ep *e, int timeout_ms);

/* How late a deadline may wake a sleeping loop (ep_progress's, and a
 * caller's own with io/wake_timer.h): the kernel's default timer slack,
 * which a poll timeout had too. */
#define EP_TIMER_SLACK_NS	50000ull
/* ... and a loss timer's (RTO, tail loss probe: tp_ep_deadlines),
 * whatever its distance: re-arming the wake timer tens of us ahead costs
 * 11-17 us on the bench VM, and a Send at a time, whose probe 2 SRTT away
 * moves at every message, re-armed it at nearly every sleep. */
#define EP_LOSS_SLACK_NS	200000ull

/*
 * Several endpoints served by one thread, when a round of ep_progress(e, 0)
 * on each moved nothing: sleep until a frame arrives on any of their
 * sockets or the earliest of their cores' deadlines, at most max_ns (the
 * same waits as ep_progress's). Returns 0 when the time came (or was too
 * near to sleep for), > 0 when a frame or a change came, or -errno
 * (-EINVAL for none, or more than 64 endpoints).
 */
int ep_wait(struct ep *const *eps, unsigned n, uint64_t max_ns);

/*
 * For a caller that waits itself (beside descriptors of its own): the
 * endpoint's descriptors to poll for POLLIN (its sockets, and the netlink
 * socket that hears route and neighbour changes), at most max of them, after
 * the housekeeping a sleep needs first (completions reaped, the fill ring
 * topped up, the changes read). Returns how many.
 */
int ep_poll_fds(struct ep *e, int *fds, int max);

/*
 * In-band setup (tp_hello_*): fn sees every received UTP packet (TPH ..
 * payload, ICRC checked) before the core, with the IP source; it returns
 * true when it took the packet (a hello), which the core then never sees.
 */
typedef bool (*ep_ctl_fn)(void *ctx, const uint8_t *tp, size_t len, uint8_t ip_ver,
			  const uint8_t src_ip[16]);
void ep_set_ctl(struct ep *e, ep_ctl_fn fn, void *ctx);

/* Send one TP packet (TPH .. payload, e.g. a hello) to p outside any
 * channel, wrapped as the channels' packets are, with UDP source port sport
 * (a channel's: its hello takes its path). 0, or -ENOBUFS when no frame or
 * no room (a lost packet: the caller retries). */
int ep_send_raw(struct ep *e, struct ep_peer *p, uint16_t sport, const void *tp, size_t len);

/* All counters, the kernel's socket statistics included (a syscall per socket). */
void ep_get_stats(const struct ep *e, struct ep_stats *st);
/* The device's rx queues (below 64) this worker reads, a bit each. */
uint64_t ep_rx_queues(const struct ep *e);
/* Whether its AF_XDP sockets are bound zero-copy (else copy mode). */
bool ep_zerocopy(const struct ep *e);
/* Frames received, without the syscalls: for a loop that watches for progress. */
uint64_t ep_rx_frames(const struct ep *e);
/*
 * The UB MTU (TP payload bytes per packet: a power of two, EP_UB_MTU_MIN ..
 * EP_UB_MTU_MAX) this endpoint can carry to a peer of IP version ip_ver:
 * the largest whose data frames fit every member device's MTU with the
 * UBoE (or native) headers, and, where AF_XDP has no multi-buffer sockets
 * (before Linux 6.6, and in shared mode but for the holder of the device's
 * queues), its UMEM frame. 0: none fits.
 * *dev_mtu: the smallest device MTU, *member: which member has it (either
 * may be NULL). With multi-buffer sockets a frame longer than a UMEM frame
 * comes and goes in several (4096 on a 9000-byte link; 2048 without).
 */
#define EP_UB_MTU_MIN	256
#define EP_UB_MTU_MAX	4096
#define EP_FRAME_SIZE	4096	/* each UMEM frame */
uint32_t ep_ub_mtu_max(const struct ep *e, uint8_t ip_ver, uint32_t *dev_mtu, uint32_t *member);
/* The UB MTU to peer p: ep_ub_mtu_max's, and in shared mode to an address
 * of the device itself (loopback, through the process's veth) what the veth
 * carries in one UMEM frame. */
uint32_t ep_ub_mtu_to(const struct ep *e, const struct ep_peer *p);
/* The same for one device of MTU dev_mtu, before any endpoint is open;
 * frame_size 0: multi-buffer frames (no UMEM frame bound). */
uint32_t ep_ub_mtu_fit(uint32_t dev_mtu, bool native, uint8_t ip_ver, uint32_t frame_size);
/* The UB MTU a shared endpoint (ep_config.shared) opened on dev now would
 * take to other hosts, by the rule its opening follows: the holder of the
 * device's queues (none holds them, and not no_direct) the device's MTU in
 * multi-buffer frames where the kernel has them; any other its veth's, in
 * one UMEM frame. The device's MTU in dev_mtu. */
uint32_t ep_shared_ub_mtu(const char *dev, uint32_t dev_mtu, bool native, bool no_direct, uint8_t ip_ver);
/* The frame_size for ep_ub_mtu_fit of a (not shared) endpoint on this
 * kernel: 0 where AF_XDP takes multi-buffer sockets, else EP_FRAME_SIZE. */
uint32_t ep_frame_bound(void);
/* A device's MTU. 0, or -errno with one line in err. */
int ep_dev_mtu(const char *dev, uint32_t *mtu, char *err, size_t errlen);
/* What the kernel knows of the path to ip by dev beyond dev's own MTU: its
 * route's mtu, or a path MTU it learned from an ICMP "fragmentation needed"
 * or "packet too big" (`ip route get IP oif DEV`). 0 when it knows none (a
 * narrower hop that never answered one is not known), or no route by dev;
 * then, when the kernel could not be asked or had no route by dev, why (if
 * not NULL) says so in one line, else it is "". */
uint32_t ep_path_mtu(const char *dev, uint8_t ip_ver, const uint8_t ip[16], char *why, size_t whylen);
/* The UB MTU that path carries, an IP packet there (no LPH or NTH: a UB2E
 * switch's IP side), UINT32_MAX when the kernel knows nothing of it; the
 * path's MTU in *path_mtu (0: nothing known). Less than a device's
 * ep_ub_mtu_fit (or ep_ub_mtu_max): the path is the limit. */
uint32_t ep_path_ub_mtu(const char *dev, uint8_t ip_ver, const uint8_t ip[16], uint32_t *path_mtu,
			char *why, size_t whylen);

/* Frames sent by entity member k (0 .. nmembers-1; the device alone: 0). */
uint64_t ep_member_tx(const struct ep *e, uint32_t k);
uint64_t ep_now_ns(void);

#endif
