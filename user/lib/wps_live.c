// SPDX-License-Identifier: BSD-2-Clause
#include "wps_live.h"

#include <linux/neighbour.h>

#define NUD_STATIC	(NUD_PERMANENT | NUD_NOARP)
#define NUD_ASKABLE	(NUD_REACHABLE | NUD_STALE | NUD_DELAY)

bool wps_nh_alive(const struct wps_nh_seen *s, unsigned dead_ms, bool grace)
{
	if (!s->present || !s->has_lladdr)
		return false;
	if (s->state & NUD_STATIC)
		return true;
	if (!(s->state & (NUD_ASKABLE | NUD_PROBE)))
		return false;	/* INCOMPLETE, FAILED, NONE */
	return grace || s->confirmed_ago_ms <= dead_ms;
}

enum wps_nh_act wps_nh_next(const struct wps_nh_seen *s, unsigned probe_ms, unsigned since_probe_ms)
{
	if (since_probe_ms < probe_ms)
		return WPS_NH_NONE;
	if (!s->present || !s->state || (s->state & NUD_FAILED))
		return WPS_NH_RESOLVE;
	if (s->state & (NUD_STATIC | NUD_INCOMPLETE))
		return WPS_NH_NONE;	/* static, or the kernel is resolving it */
	if (s->confirmed_ago_ms < probe_ms)
		return WPS_NH_NONE;
	return (s->state & NUD_PROBE) ? WPS_NH_REPROBE : WPS_NH_PROBE;
}
