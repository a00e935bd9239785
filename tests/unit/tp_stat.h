/* SPDX-License-Identifier: BSD-2-Clause */
/* A channel's counter by its TP_STATS name, for the transport's unit tests (cmocka). */
#ifndef UBXDP_TP_STAT_H
#define UBXDP_TP_STAT_H

#include <string.h>

#include "transport/tp.h"

static inline uint64_t chan_stat(const struct tp_chan *ch, const char *name)
{
	struct tp_stats st;

	tp_chan_stats(ch, &st);
	for (size_t i = 0; i < tp_stats_count(); i++)
		if (!strcmp(tp_stats_name(i), name))
			return tp_stats_get(&st, i);
	fail_msg("no counter %s", name);
	return 0;
}

#endif
