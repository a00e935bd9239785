// SPDX-License-Identifier: BSD-2-Clause
/*
 * Completion: a JFC is a ring of completion records; a JFCE is an eventfd
 * (jfce->fd, for poll or epoll) written when an armed JFC of it gets a
 * record, with the list of JFCs that fired for urma_wait_jfc().
 *
 * A full JFC loses the record that does not fit: it is counted, logged
 * once, and urma_poll_jfc() reports it (-1, errno EOVERFLOW) once the
 * records before it are taken, so no loss goes unseen.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "urma/urma_int.h"

struct ubx_jfce *ubx_jfce_of(const urma_jfce_t *e)
{
	struct ubx_jfce *x = (struct ubx_jfce *)e;

	return x && x->magic == UBX_M_JFCE ? x : NULL;
}

struct ubx_jfc *ubx_jfc_of(const urma_jfc_t *j)
{
	struct ubx_jfc *x = (struct ubx_jfc *)j;

	return x && x->magic == UBX_M_JFC ? x : NULL;
}

/* ---- JFCE -------------------------------------------------------------------------- */

UBX_VISIBLE urma_jfce_t *urma_create_jfce(urma_context_t *ctx)
{
	struct ubx_ctx *c = ubx_ctx_of(ctx);
	struct ubx_jfce *e;

	if (!c) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		errno = ENOMEM;
		return NULL;
	}
	e->pub.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (e->pub.fd < 0) {
		int err = errno;

		free(e);
		errno = err;
		return NULL;
	}
	e->magic = UBX_M_JFCE;
	e->ctx = c;
	e->spin_ns = UBX_SPIN_MAX_NS;
	e->pub.urma_ctx = ctx;
	atomic_init(&e->pub.ref.atomic_cnt, 1);
	pthread_mutex_lock(&c->port->lock);
	c->nobj++;
	pthread_mutex_unlock(&c->port->lock);
	return &e->pub;
}

UBX_VISIBLE urma_status_t urma_delete_jfce(urma_jfce_t *jfce)
{
	struct ubx_jfce *e = ubx_jfce_of(jfce);
	struct ubx_port *p;

	if (!e)
		return URMA_EINVAL;
	p = e->ctx->port;
	pthread_mutex_lock(&p->lock);
	if (e->njfc) {
		pthread_mutex_unlock(&p->lock);
		ubx_err("urma_delete_jfce: %d JFCs still use it", e->njfc);
		return URMA_EINVAL;
	}
	e->ctx->nobj--;
	e->magic = UBX_M_DEAD;
	pthread_mutex_unlock(&p->lock);
	close(e->pub.fd);
	free(e->fired);
	free(e);
	return URMA_SUCCESS;
}

/* jfc fired (port lock held): remember it, make the fd readable. */
static void fire(struct ubx_jfc *jfc)
{
	struct ubx_jfce *e = jfc->jfce;
	uint64_t one = 1;

	jfc->armed = false;
	if (jfc->fired)
		return;
	if (e->nfired == e->cap) {
		uint32_t n = e->cap ? e->cap * 2 : 16;
		struct ubx_jfc **f = realloc(e->fired, n * sizeof(*f));

		if (!f)
			return;
		e->fired = f;
		e->cap = n;
	}
	e->fired[e->nfired++] = jfc;
	jfc->fired = true;
	if (write(e->pub.fd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow here; nothing to do */
	}
}

/* ---- JFC ----------------------------------------------------------------------------- */

bool ubx_jfc_push(struct ubx_jfc *jfc, const urma_cr_t *cr)
{
	if (!jfc)
		return false;
	if (jfc->count == jfc->depth) {
		if (!jfc->overflow)
			ubx_err("JFC %u overflowed (depth %u): completion records are lost "
				"(urma_poll_jfc reports it)", jfc->pub.jfc_id.id, jfc->depth);
		jfc->overflow = true;
		jfc->lost++;
		jfc->ctx->port->jfc_overflow++;
	} else {
		jfc->ring[(jfc->head + jfc->count) % jfc->depth] = *cr;
		jfc->count++;
	}
	if (jfc->armed && jfc->jfce)
		fire(jfc);
	return !jfc->overflow;
}

UBX_VISIBLE urma_jfc_t *urma_create_jfc(urma_context_t *ctx, urma_jfc_cfg_t *cfg)
{
	struct ubx_ctx *c = ubx_ctx_of(ctx);
	struct ubx_jfce *e = NULL;
	struct ubx_jfc *j;
	static uint32_t next_id = 1;

	if (!c || !cfg || !cfg->depth || cfg->depth > UBX_MAX_JFC_DEPTH ||
	    (cfg->jfce && !(e = ubx_jfce_of(cfg->jfce))) || (e && e->ctx != c)) {
		errno = EINVAL;
		return NULL;
	}
	if (cfg->flag.bs.jfc_inline || cfg->ceqn) {
		ubx_err("urma_create_jfc: jfc_inline and ceqn are not supported");
		errno = EPERM;
		return NULL;
	}
	j = calloc(1, sizeof(*j));
	if (!j || !(j->ring = calloc(cfg->depth, sizeof(*j->ring)))) {
		free(j);
		errno = ENOMEM;
		return NULL;
	}
	j->magic = UBX_M_JFC;
	j->ctx = c;
	j->jfce = e;
	j->depth = cfg->depth;
	j->pub.urma_ctx = ctx;
	j->pub.jfc_cfg = *cfg;
	j->pub.jfc_id.eid = ctx->eid;
	j->pub.jfc_id.uasid = ctx->uasid;
	pthread_mutex_init(&j->pub.event_mutex, NULL);
	pthread_cond_init(&j->pub.event_cond, NULL);
	pthread_mutex_lock(&c->port->lock);
	j->pub.jfc_id.id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
	j->pub.handle = (uintptr_t)j;
	c->nobj++;
	if (e)
		e->njfc++;
	pthread_mutex_unlock(&c->port->lock);
	return &j->pub;
}

UBX_VISIBLE urma_status_t urma_delete_jfc(urma_jfc_t *jfc)
{
	struct ubx_jfc *j = ubx_jfc_of(jfc);
	struct ubx_port *p;

	if (!j)
		return URMA_EINVAL;
	p = j->ctx->port;
	pthread_mutex_lock(&p->lock);
	if (j->users) {
		pthread_mutex_unlock(&p->lock);
		ubx_err("urma_delete_jfc: %d JFS/JFR/jetties still use it", j->users);
		return URMA_EINVAL;
	}
	if (j->jfce) {
		struct ubx_jfce *e = j->jfce;

		/* Not returned by a later urma_wait_jfc. */
		for (uint32_t i = 0; i < e->nfired; i++)
			if (e->fired[i] == j) {
				memmove(&e->fired[i], &e->fired[i + 1],
					(e->nfired - i - 1) * sizeof(e->fired[0]));
				e->nfired--;
				break;
			}
		e->njfc--;
	}
	j->ctx->nobj--;
	j->magic = UBX_M_DEAD;
	pthread_mutex_unlock(&p->lock);
	pthread_mutex_destroy(&j->pub.event_mutex);
	pthread_cond_destroy(&j->pub.event_cond);
	free(j->ring);
	free(j);
	return URMA_SUCCESS;
}

UBX_VISIBLE int urma_poll_jfc(urma_jfc_t *jfc, int cr_cnt, urma_cr_t *cr)
{
	struct ubx_jfc *j = ubx_jfc_of(jfc);
	struct ubx_port *p;
	int n = 0;

	if (!j || cr_cnt < 0 || (cr_cnt && !cr)) {
		errno = EINVAL;
		return -1;
	}
	p = j->ctx->port;
	pthread_mutex_lock(&p->lock);
	/* Nothing there: a round of I/O here rather than waiting for the
	 * progress thread (a polling application drives the endpoint). */
	if (!j->count)
		ubx_app_progress(p);
	while (n < cr_cnt && j->count) {
		cr[n++] = j->ring[j->head];
		j->head = (j->head + 1) % j->depth;
		j->count--;
	}
	if (!n && j->overflow && cr_cnt) {
		j->overflow = false;
		pthread_mutex_unlock(&p->lock);
		errno = EOVERFLOW;
		return -1;
	}
	pthread_mutex_unlock(&p->lock);
	return n;
}

UBX_VISIBLE urma_status_t urma_rearm_jfc(urma_jfc_t *jfc, bool solicited_only)
{
	struct ubx_jfc *j = ubx_jfc_of(jfc);
	struct ubx_port *p;

	if (!j || !j->jfce)
		return URMA_EINVAL;
	if (solicited_only) {
		/* The wire carries no solicited flag. */
		ubx_err("urma_rearm_jfc: solicited_only is not supported");
		return URMA_ENOPERM;
	}
	p = j->ctx->port;
	pthread_mutex_lock(&p->lock);
	j->armed = true;
	/* Records already waiting fire at once: no wake-up is lost between
	 * the last poll and the arming. */
	if (j->count)
		fire(j);
	pthread_mutex_unlock(&p->lock);
	return URMA_SUCCESS;
}

/* The JFCs that fired, up to cnt into jfc (port lock held). */
static uint32_t take_fired(struct ubx_jfce *e, uint32_t cnt, urma_jfc_t *jfc[])
{
	uint32_t n = 0;
	uint64_t v;

	if (read(e->pub.fd, &v, sizeof(v)) < 0) {
		/* not readable: nothing fired, or another thread took it */
	}
	while (n < cnt && n < e->nfired) {
		jfc[n] = &e->fired[n]->pub;
		e->fired[n]->fired = false;
		n++;
	}
	memmove(e->fired, e->fired + n, (e->nfired - n) * sizeof(e->fired[0]));
	e->nfired -= n;
	if (e->nfired) {
		uint64_t one = 1;

		/* The rest for the next call. */
		if (write(e->pub.fd, &one, sizeof(one)) < 0) {
			/* cannot overflow */
		}
	}
	return n;
}

/*
 * The spin of a wait before it sleeps, adapted to whether spinning pays: it
 * does while the peer runs on another CPU (a 64-byte Send's round trip then
 * 10-13 us on the bench machine, against 40-50 us asleep) and costs where
 * the two share one (75-165 us: each spins while the other waits for it).
 * A spin that catches its completion keeps the full spin; one that does not
 * halves it, down to none; then one wait in UBX_SPIN_PROBE spins in full
 * again to see whether it pays now. Port lock held.
 */
#define UBX_SPIN_MIN_NS		4000ull
#define UBX_SPIN_PROBE		32

static uint64_t spin_budget(struct ubx_jfce *e)
{
	if (e->spin_ns)
		return e->spin_ns;
	if (++e->spin_skipped < UBX_SPIN_PROBE)
		return 0;
	e->spin_skipped = 0;
	return UBX_SPIN_MAX_NS;
}

static void spin_paid(struct ubx_jfce *e, bool paid)
{
	e->spin_ns = paid ? UBX_SPIN_MAX_NS : e->spin_ns / 2 < UBX_SPIN_MIN_NS ? 0 : e->spin_ns / 2;
}

/*
 * Waiting drives the endpoint: the thread sleeps on the JFCE, the
 * endpoint's sockets and its timers, and runs a round when a frame comes
 * (one thread does what the progress thread would, without a hand-over per
 * completion). The progress thread stands back meanwhile. Before it
 * sleeps it spins as long as spinning has paid (spin_budget; docs/URMA.md
 * "Waiting"). The time is kept by the port's wake timer (io/wake_timer.h),
 * armed once for many sleeps where a poll timeout is armed and cancelled at
 * each.
 */
UBX_VISIBLE int urma_wait_jfc(urma_jfce_t *jfce, uint32_t jfc_cnt, int time_out, urma_jfc_t *jfc[])
{
	struct ubx_jfce *e = ubx_jfce_of(jfce);
	uint64_t until, now, spin_until = 0;
	struct ubx_port *p;
	uint32_t n;

	if (!e || !jfc_cnt || !jfc || time_out < -1) {
		errno = EINVAL;
		return -1;
	}
	p = e->ctx->port;
	now = ep_now_ns();
	until = time_out < 0 ? UINT64_MAX : now + (uint64_t)time_out * 1000000;
	for (bool first = true;; first = false) {
		struct pollfd pfd[UBX_POLL_FDS + 3];
		int fds[UBX_POLL_FDS], k, r;
		uint64_t dl, bound, lo, hi;
		struct timespec ts, *tsp = NULL;
		bool timer = false;

		pthread_mutex_lock(&p->lock);
		if (!e->nfired && time_out)
			ubx_app_progress(p);
		if (e->nfired) {
			if (spin_until)
				spin_paid(e, true);
			n = take_fired(e, jfc_cnt, jfc);
			pthread_mutex_unlock(&p->lock);
			return (int)n;
		}
		now = ep_now_ns();
		if (first && time_out && (dl = spin_budget(e)))
			spin_until = now + dl;
		if (spin_until && now < spin_until && now < until) {
			pthread_mutex_unlock(&p->lock);
			continue;
		}
		if (spin_until) {
			spin_until = 0;
			spin_paid(e, false);
		}
		if (now >= until) {
			pthread_mutex_unlock(&p->lock);
			return 0;
		}
		dl = tp_ep_next_deadline(p->tp);
		{
			uint64_t c = ubx_ctl_run(p, now);

			if (c < dl)
				dl = c;
		}
		if (dl <= now) {
			pthread_mutex_unlock(&p->lock);
			continue;	/* due: the next round runs it */
		}
		bound = until - now < UBX_APP_DRIVES_NS / 2 ? until : now + UBX_APP_DRIVES_NS / 2;
		/* the deadline as the endpoint's own sleeps take it, else the caller's
		 * time, or stay the one that drives */
		wake_timer_window(now, dl, bound, EP_TIMER_SLACK_NS, &lo, &hi);
		if (!p->wt_busy && !wake_timer_set(&p->wt, now, lo, hi))
			timer = p->wt_busy = true;
		k = ep_poll_fds(p->ep, fds, UBX_POLL_FDS);
		pthread_mutex_unlock(&p->lock);
		for (int i = 0; i < k; i++)
			pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		pfd[k] = (struct pollfd){ .fd = e->pub.fd, .events = POLLIN };
		pfd[k + 1] = (struct pollfd){ .fd = p->wake_fd, .events = POLLIN };
		if (timer) {
			pfd[k + 2] = (struct pollfd){ .fd = p->wt.fd, .events = POLLIN };
		} else {
			ts = ub_ns_timespec(hi - now);
			tsp = &ts;
		}
		r = ppoll(pfd, (nfds_t)k + 2 + timer, tsp, NULL);
		if (timer) {
			pthread_mutex_lock(&p->lock);
			p->wt_busy = false;
			pthread_mutex_unlock(&p->lock);
		}
		if (r < 0 && errno != EINTR)
			return -1;
		if (r > 0 && pfd[k + 1].revents) {
			uint64_t v;

			if (read(p->wake_fd, &v, sizeof(v)) < 0) {
				/* another thread took it */
			}
		}
	}
}

UBX_VISIBLE void urma_ack_jfc(urma_jfc_t *jfc[], uint32_t nevents[], uint32_t jfc_cnt)
{
	if (!jfc || !nevents)
		return;
	for (uint32_t i = 0; i < jfc_cnt; i++) {
		struct ubx_jfc *j = ubx_jfc_of(jfc[i]);

		if (!j)
			continue;
		pthread_mutex_lock(&j->ctx->port->lock);
		j->pub.comp_events_acked += nevents[i];
		pthread_mutex_unlock(&j->ctx->port->lock);
	}
}
