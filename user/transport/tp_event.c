// SPDX-License-Identifier: BSD-2-Clause
/* The endpoint's event queue: completions, receives, channel errors. */
#include <stdlib.h>

#include "transport/tp_event.h"

struct tp_event *tp_emit(struct tp_chan *ch, enum tp_event_type t, enum tp_status st,
			 uint64_t wr_id, size_t len, uint16_t tassn)
{
	struct tp_ep *ep = ch->ep;
	struct tp_event *ev;

	if (ep->ev_len == ep->ev_cap) {
		size_t ncap = ep->ev_cap * 2;
		struct tp_event *n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;	/* out of memory: the event is lost, not the core */
		for (size_t i = 0; i < ep->ev_len; i++)
			n[i] = ep->evq[(ep->ev_head + i) % ep->ev_cap];
		free(ep->evq);
		ep->evq = n;
		ep->ev_cap = ncap;
		ep->ev_head = 0;
	}
	ev = &ep->evq[(ep->ev_head + ep->ev_len++) % ep->ev_cap];
	*ev = (struct tp_event){
		.type = t, .status = st, .chan = ch, .user = ch->cfg.user,
		.wr_id = wr_id, .len = len, .tassn = tassn,
	};
	return ev;
}

bool tp_ep_poll(struct tp_ep *ep, struct tp_event *ev)
{
	if (!ep->ev_len)
		return false;
	*ev = ep->evq[ep->ev_head];
	ep->ev_head = (ep->ev_head + 1) % ep->ev_cap;
	ep->ev_len--;
	return true;
}
