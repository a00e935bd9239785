/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The WPS ingress's watch agent (ubctl wps ingress watch), its decisions
 * without the I/O: is a member path's next hop alive, as the kernel's
 * neighbour table shows it, and what to ask of the kernel next so that a
 * next hop that stops answering is seen within a second. Unit-tested.
 */
#ifndef UBXDP_WPS_LIVE_H
#define UBXDP_WPS_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <linux/types.h>
#include "wps_ingress.h"

/* One next hop as the kernel's neighbour table has it (RTM_GETNEIGH). */
struct wps_nh_seen {
	bool present;			/* the kernel has an entry */
	bool has_lladdr;
	__u16 state;			/* NUD_* */
	__u32 confirmed_ago_ms;		/* since it last confirmed it is reachable (NDA_CACHEINFO) */
	__u8 lladdr[6];
};

enum wps_nh_act {
	WPS_NH_NONE,		/* nothing to ask */
	WPS_NH_PROBE,		/* make the entry PROBE: the kernel asks the neighbour now, unicast */
	WPS_NH_REPROBE,		/* already PROBE: STALE then PROBE again, for one more question now */
	WPS_NH_RESOLVE,		/* none or failed: NTF_USE, the kernel resolves it (multicast) */
};

#define WPS_NH_NOT_ASKED	UINT32_MAX

/*
 * Alive: a static entry (PERMANENT, NOARP), or a dynamic one with an address
 * that confirmed it within dead_ms, or that has not been left a question
 * unanswered for dead_ms - probe_ms. unanswered_ms: since the first question
 * asked after it last confirmed (WPS_NH_NOT_ASKED: none). Silence alone is
 * not death: an agent scheduled late, or a path just added, has not asked
 * yet, and a next hop is not taken out of rotation before it could answer.
 */
bool wps_nh_alive(const struct wps_nh_seen *s, unsigned probe_ms, unsigned dead_ms, unsigned unanswered_ms);

/*
 * wps_nh_alive's unanswered_ms, at now_ms, for the first question asked at
 * question_ms after the confirmation at confirmed_ms (all on one clock; 0:
 * none asked). The kernel's confirmation time is coarse (jiffies, told in
 * 10 ms ticks: 16 ms off seen), so a question counts as after it only
 * WPS_NH_CONFIRM_SLACK_MS on; one nearer is taken as answered. Clamped
 * below WPS_NH_NOT_ASKED.
 */
#define WPS_NH_CONFIRM_SLACK_MS	50
unsigned wps_nh_unanswered(uint64_t now_ms, uint64_t question_ms, uint64_t confirmed_ms);

/*
 * What to ask now, since_probe_ms after the last question asked: every
 * probe_ms while the neighbour has not confirmed for probe_ms, the kernel's
 * unicast probe; a missing or failed entry, resolution.
 */
enum wps_nh_act wps_nh_next(const struct wps_nh_seen *s, unsigned probe_ms, unsigned since_probe_ms);

/* A next hop as the agent follows it from look to look (all times on one clock, ms). */
struct wps_nh_track {
	bool up;
	uint64_t asked_ms;		/* the last question, as the periodic look's due time (wps_nh_when) */
	uint64_t question_ms;		/* the first question not surely answered, its clock (0: none) */
	uint64_t later_ms;		/* a later one, judged by while a stall leaves the first in doubt (0: none) */
	uint64_t question_due_ms, later_due_ms;	/* theirs as due times: where their silence starts */
	uint64_t confirmed_ms;		/* its last confirmation, at the earliest it can have been (0: none) */
	__u8 mac[6];			/* the kernel's MAC for it at the last look */
};

/*
 * When a look is. The agent looks periodically, a tick apart (wps_look_due),
 * and at rtnetlink events between: its own questions raise some (the entry set
 * to PROBE, then answered), other neighbours any number.
 */
struct wps_nh_when {
	uint64_t t0_ms, t_ms;		/* the clock before the kernel's reply and after it */
	uint64_t due_ms;		/* the periodic look's due time: this one's, or at an event the last one's */
	unsigned tick_ms;		/* the ticks' period: an answer comes within one */
};

/*
 * One look at a next hop whose path sends to dmac, with seen read from the
 * kernel between w->t0_ms and w->t_ms: tr->up judged, and what to ask now (tr
 * then counts it asked). A new MAC (gratuitous ARP, unsolicited NA),
 * or a confirmation gone back in time, is the neighbour speaking: the kernel
 * dates such an entry confirmed 2 x base_reachable_time ago, which would take
 * the last question, answered, for unanswered. It is asked at once and, if
 * up, its silence counts from that question; a next hop that is down stays
 * down until it really answers. A MAC other than dmac speaks once (tr->mac):
 * the path keeps dmac while the next hop is down.
 *
 * A question's silence runs from its look's due time to this look's, and
 * questions are paced on the due times: on ticks late by less than a tick, a
 * question asked again ceil(probe / tick) ticks after a lost one is judged
 * unanswered that many ticks (wps_nh_tick_ok's margin), however late either
 * look; after a stall of a tick or more the grid starts again from the
 * stall's end, so the stall counts (as it did on the clock). While up, the
 * silence judged goes no further than the question asked again's look until
 * that one is a tick old on the clock (to w->t0_ms, before the kernel's
 * reply): the tick after a late look comes sooner, and a next hop that lost
 * one answer gives the next within a tick. At an event, an answer, a new MAC or an entry the
 * kernel gave up on counts at once; a question asked there counts as asked at
 * the last tick, so the next comes on the ticks, up to a tick sooner than
 * --probe after it.
 */
enum wps_nh_act wps_nh_look(struct wps_nh_track *tr, const struct wps_nh_seen *seen, const __u8 dmac[6],
			    const struct wps_nh_when *w, unsigned probe_ms, unsigned dead_ms);

/*
 * The agent's schedule: after a look at now_ms, the due time of the next
 * periodic one, the last one due at due_ms. A look at an event leaves it as
 * it was; a periodic one moves it a tick on, or, after a stall of a tick or
 * more, a tick after now (the missed ones are not made up in a burst).
 */
uint64_t wps_look_due(uint64_t due_ms, uint64_t now_ms, unsigned tick_ms, bool event);

/*
 * The agent's loop around its looks (wps_watch.c), apart from its clock and
 * poll: the next periodic look's due time, and the wps_nh_when its looks
 * are given (due_ms the last tick's). wps_look_start before a look at now_ms
 * (true: it is the tick's, at or after its due time; false: an event's),
 * wps_look_done after it, at now_ms again, with what start said.
 */
struct wps_look_sched {
	uint64_t next_ms;		/* the next periodic look's due time */
	struct wps_nh_when when;
};
void wps_look_init(struct wps_look_sched *s, uint64_t now_ms, unsigned tick_ms);
bool wps_look_start(struct wps_look_sched *s, uint64_t now_ms);
void wps_look_done(struct wps_look_sched *s, uint64_t now_ms, bool periodic);

/*
 * Whether a look every tick_ms keeps a next hop that loses one probe in
 * rotation: the question asked again ceil(probe / tick) looks on is judged,
 * before it is asked, as unanswered for that many ticks, which must be less
 * than dead_ms - probe_ms (the answer in less than a tick).
 */
bool wps_nh_tick_ok(unsigned tick_ms, unsigned probe_ms, unsigned dead_ms);

/*
 * Packet Too Big from the WAN for a packet the ingress sent (the ICMPv6
 * message body after its 8-byte header: the quoted outer packet): ours (outer
 * source and destination this node's and the egress's, the WPS option right
 * behind), and the inner packet it carried, for the relay to its sender.
 */
struct wps_ptb {
	__u16 fid, gid;			/* the quoted option's Flow ID and Group ID */
	__u8 family;			/* the inner packet's: 4 or 6 */
	bool df;			/* inner IPv4: DF set (the sender wants to hear) */
	struct wps_in_flow_key key;	/* the inner flow, as the program keys it */
	const __u8 *inner;		/* the quoted inner packet, from its IP header */
	size_t inner_len;		/* as much of it as was quoted */
};

/* 0 and *out filled, or -1: not a packet this ingress (src, dst) sent. */
int wps_ptb_parse(const __u8 src[16], const __u8 dst[16], const __u8 *quote, size_t len, struct wps_ptb *out);

/*
 * The relay to the inner packet's sender (RFC 2473 §7.1), MTU the path's
 * minus the 56 bytes: for IPv4, a whole IPv4 packet (ICMP Fragmentation
 * Needed, from src4) for a raw socket with IP_HDRINCL; for IPv6, an ICMPv6
 * Packet Too Big body (checksum left to the kernel) quoting as much as fits
 * in 1280 bytes. Returns its length, 0 when there is nothing to relay (IPv4
 * with DF clear: the ingress fragments from now on).
 */
size_t wps_ptb_relay4(const struct wps_ptb *p, unsigned mtu, const __u8 src4[4], __u8 *buf, size_t len);
size_t wps_ptb_relay6(const struct wps_ptb *p, unsigned mtu, __u8 *buf, size_t len);

/* A token bucket: rate per second, burst deep; true when one may go now (then taken). */
struct wps_bucket {
	double tokens;
	unsigned long long last_ms;
};
bool wps_bucket_take(struct wps_bucket *b, unsigned rate, unsigned burst, unsigned long long now_ms);

#endif
