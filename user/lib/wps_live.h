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
#include <linux/types.h>

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

/*
 * Alive: a static entry (PERMANENT, NOARP), or a dynamic one with an address
 * that confirmed it within dead_ms; grace (the path was first seen less than
 * dead_ms ago) lets an entry not yet asked count while it is valid.
 */
bool wps_nh_alive(const struct wps_nh_seen *s, unsigned dead_ms, bool grace);

/*
 * What to ask now, since_probe_ms after the last question asked: every
 * probe_ms while the neighbour has not confirmed for probe_ms, the kernel's
 * unicast probe; a missing or failed entry, resolution.
 */
enum wps_nh_act wps_nh_next(const struct wps_nh_seen *s, unsigned probe_ms, unsigned since_probe_ms);

#endif
