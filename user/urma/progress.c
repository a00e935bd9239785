// SPDX-License-Identifier: BSD-2-Clause
/*
 * The I/O of a port: rounds of the endpoint (receive, timers, transmit),
 * the core's events handed to the send side (wr.c) and the receive side
 * (recv.c), and the progress thread that runs the rounds while no
 * application thread does.
 */
#include <errno.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "urma/urma_int.h"

/* ---- events -------------------------------------------------------------------------- */

static struct ubx_chan *chan_of(const struct tp_event *ev)
{
	struct ep_chan *ec = ev->user;

	return ec ? ec->app : NULL;
}

void ubx_dispatch(struct ubx_port *p)
{
	struct tp_event ev;

	while (tp_ep_poll(p->tp, &ev)) {
		struct ubx_chan *ch = chan_of(&ev);
		struct ubx_wr *w;

		if (!ch)
			continue;
		switch (ev.type) {
		case TP_EV_SEND_DONE:
		case TP_EV_WRITE_DONE:
		case TP_EV_READ_DONE:
		case TP_EV_ATOMIC_DONE:
			w = ubx_wr_lookup(p, ev.wr_id);
			if (!w)
				break;
			if (ev.status == TP_ST_FLUSHED && ch->fail_st != TP_ST_OK) {
				/* The oldest request of a failed channel is the one
				 * that ran out of retries: it says so; the rest are
				 * flushed. */
				ev.status = ch->fail_st;
				ch->fail_st = TP_ST_OK;
			}
			ubx_wr_complete(p, w, ubx_cr_status(ev.status, ev.rspinfo), (uint32_t)ev.len);
			break;
		case TP_EV_RECV:
			ubx_recv(p, ch, &ev);
			break;
		case TP_EV_RECV_FLUSHED:
			ubx_recv_flushed(ch, &ev);
			break;
		case TP_EV_CHAN_ERROR:
			ch->state = CH_FAILED;
			ch->err = EIO;
			ch->fail_st = ev.status;
			ubx_info("channel to jetty %u failed: %s", ch->remote.id,
				 tp_status_name(ev.status));
			/* What waited for room never reached the core: flushed too. */
			while (ch->held) {
				w = ch->held;
				ch->held = w->next_held;
				w->next_held = NULL;
				ubx_wr_complete(p, w, URMA_CR_WR_FLUSH_ERR, 0);
			}
			ch->held_tail = NULL;
			break;
		}
	}
}

static int rounds(struct ubx_port *p, int max)
{
	int moved = 0;

	for (int i = 0; i < max; i++) {
		int m = ep_progress(p->ep, 0);

		moved += m;
		ubx_dispatch(p);
		ubx_ctl_run(p, ep_now_ns());
		if (!m)
			break;
	}
	return moved;
}

int ubx_progress(struct ubx_port *p)
{
	return rounds(p, 8);
}

/* One round: the application gets its completions (and reposts its
 * receive buffers) every UBX_RX_BATCH frames. */
int ubx_app_progress(struct ubx_port *p)
{
	p->app_active = ep_now_ns();
	return rounds(p, 1);
}

void ubx_app_idle(struct ubx_port *p)
{
	if (p->app_active) {
		p->app_active = 0;
		ubx_port_kick(p);
	}
}

/* ---- the progress thread ---------------------------------------------------------- */

#define MAX_IDLE_NS	100000000ull	/* housekeeping: hellos (a next-hop change wakes the poll itself) */

void *ubx_progress_thread(void *arg)
{
	struct ubx_port *p = arg;
	struct pollfd pfd[UBX_POLL_FDS + 1];

	for (;;) {
		int fds[UBX_POLL_FDS], n, moved;
		uint64_t now, dl, ctl_dl;
		struct timespec ts;

		pthread_mutex_lock(&p->lock);
		if (p->stop) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		now = ep_now_ns();
		if (p->app_active && now - p->app_active < UBX_APP_DRIVES_NS) {
			/* Only the wake-up fd, until the application stops. */
			dl = p->app_active + UBX_APP_DRIVES_NS;
			moved = 0;
			n = 0;
			p->thr_idle++;
		} else {
			p->thr_rounds++;
			moved = ubx_progress(p);
			now = ep_now_ns();
			dl = tp_ep_next_deadline(p->tp);
			ctl_dl = ubx_ctl_run(p, now);
			if (ctl_dl < dl)
				dl = ctl_dl;
			n = moved ? 0 : ep_poll_fds(p->ep, fds, UBX_POLL_FDS);
		}
		if (dl > now + MAX_IDLE_NS)
			dl = now + MAX_IDLE_NS;
		p->wake_at = moved ? now : dl;
		pthread_mutex_unlock(&p->lock);
		if (moved)
			continue;
		for (int i = 0; i < n; i++)
			pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		pfd[n] = (struct pollfd){ .fd = p->wake_fd, .events = POLLIN };
		ts = ub_ns_timespec(dl > now ? dl - now : 0);
		if (ppoll(pfd, (nfds_t)n + 1, &ts, NULL) > 0 && pfd[n].revents) {
			uint64_t v;

			if (read(p->wake_fd, &v, sizeof(v)) < 0) {
				/* nothing pending */
			}
		}
	}
	return NULL;
}
