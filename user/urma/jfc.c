// SPDX-License-Identifier: BSD-2-Clause
/*
 * Completion: a JFC is one ring of `depth` completion records, whichever
 * workers feed it (its JFS, JFR and jetties may be on several: jetty.c):
 * a bounded queue of many producers and consumers (cr_ring.c), each
 * worker pushing under its own port lock and urma_poll_jfc() taking from
 * any thread, with no lock shared between workers. So the JFC holds
 * `depth` records however many workers feed it (depth 1: 2, the ring's
 * least), in memory of its depth (a ring per worker, each as deep, took
 * N times that and lost a record only when one worker's ring was full).
 * A JFCE is an eventfd (jfce->fd, for poll or epoll) written when an armed
 * JFC of it gets a record, with a list per worker of the JFCs that fired
 * for urma_wait_jfc(); an arming fires once whichever worker's record
 * comes first (an atomic flag, not a lock).
 *
 * A full JFC loses the record that does not fit: it is counted, logged
 * once, and urma_poll_jfc() reports it (-1, errno EOVERFLOW) where it
 * happened, once the records pushed before it are taken and before those
 * pushed after it, so no loss goes unseen.
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

static struct ubx_port *lane(const struct ubx_ctx *c, uint32_t w) { return c->port->dp->lane[w]; }

/* The workers of a mask, lowest first: for (w = 0; next_w(mask, &w); w++). */
static bool next_w(uint32_t mask, uint32_t *w)
{
	mask &= ~((1u << *w) - 1);
	if (!mask)
		return false;
	*w = (uint32_t)__builtin_ctz(mask);
	return true;
}

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
	ubx_cnt(&c->nobj, 1);
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
	ubx_cnt(&e->ctx->nobj, -1);
	e->magic = UBX_M_DEAD;
	pthread_mutex_unlock(&p->lock);
	close(e->pub.fd);
	for (uint32_t w = 0; w < UB_EP_MAX_WORKERS; w++)
		free(e->fired[w].v);
	free(e);
	return URMA_SUCCESS;
}

/* An armed jfc got a record on port p (its lock held): the first port to
 * take the arming remembers it on its list and makes the fd readable. */
static void fire(struct ubx_jfc *jfc, struct ubx_port *p)
{
	struct ubx_fired *f = &jfc->jfce->fired[p->widx];
	uint64_t one = 1;

	if (!__atomic_exchange_n(&jfc->armed, false, __ATOMIC_ACQ_REL) ||
	    __atomic_exchange_n(&jfc->fired, true, __ATOMIC_ACQ_REL))
		return;
	if (f->n == f->cap) {
		uint32_t n = f->cap ? f->cap * 2 : 16;
		struct ubx_jfc **v = realloc(f->v, n * sizeof(*v));

		if (!v) {
			__atomic_store_n(&jfc->fired, false, __ATOMIC_RELEASE);
			return;
		}
		f->v = v;
		f->cap = n;
	}
	f->v[f->n++] = jfc;
	if (write(jfc->jfce->pub.fd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow here; nothing to do */
	}
}

/* ---- JFC ----------------------------------------------------------------------------- */

void ubx_jfc_attach(struct ubx_jfc *jfc, struct ubx_port *p)
{
	__atomic_or_fetch(&jfc->wmask, 1u << p->widx, __ATOMIC_SEQ_CST);
	if (jfc->jfce)
		__atomic_or_fetch(&jfc->jfce->wmask, 1u << p->widx, __ATOMIC_RELEASE);
}

bool ubx_jfc_push(struct ubx_jfc *jfc, struct ubx_port *p, const urma_cr_t *cr)
{
	bool kept;

	if (!jfc)
		return false;
	kept = ubx_cring_push(&jfc->ring, cr);
	if (!kept) {
		if (!__atomic_exchange_n(&jfc->logged, true, __ATOMIC_ACQ_REL))
			ubx_err("JFC %u overflowed (depth %u): completion records are lost "
				"(urma_poll_jfc reports it)", jfc->pub.jfc_id.id, jfc->depth);
		p->jfc_overflow++;
	}
	if (jfc->jfce && __atomic_load_n(&jfc->armed, __ATOMIC_SEQ_CST))
		fire(jfc, p);
	return kept;
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
	if (!j || ubx_cring_init(&j->ring, cfg->depth)) {
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
	ubx_cnt(&c->nobj, 1);
	if (e)
		e->njfc++;
	pthread_mutex_unlock(&c->port->lock);
	return &j->pub;
}

UBX_VISIBLE urma_status_t urma_delete_jfc(urma_jfc_t *jfc)
{
	struct ubx_jfc *j = ubx_jfc_of(jfc);
	struct ubx_port *p;
	uint32_t mask;

	if (!j)
		return URMA_EINVAL;
	if (ubx_cnt_get(&j->users)) {
		ubx_err("urma_delete_jfc: %d JFS/JFR/jetties still use it", ubx_cnt_get(&j->users));
		return URMA_EINVAL;
	}
	mask = __atomic_load_n(&j->wmask, __ATOMIC_ACQUIRE);
	/* Not returned by a later urma_wait_jfc, whichever worker fired it. */
	for (uint32_t w = 0; j->jfce && next_w(mask, &w); w++) {
		struct ubx_fired *f = &j->jfce->fired[w];

		p = lane(j->ctx, w);
		pthread_mutex_lock(&p->lock);
		for (uint32_t i = 0; i < f->n; i++)
			if (f->v[i] == j) {
				memmove(&f->v[i], &f->v[i + 1], (f->n - i - 1) * sizeof(f->v[0]));
				f->n--;
				break;
			}
		pthread_mutex_unlock(&p->lock);
	}
	p = j->ctx->port;
	pthread_mutex_lock(&p->lock);
	if (j->jfce)
		j->jfce->njfc--;
	ubx_cnt(&j->ctx->nobj, -1);
	j->magic = UBX_M_DEAD;
	pthread_mutex_unlock(&p->lock);
	pthread_mutex_destroy(&j->pub.event_mutex);
	pthread_cond_destroy(&j->pub.event_cond);
	ubx_cring_free(&j->ring);
	free(j);
	return URMA_SUCCESS;
}

/*
 * The records there, in the order they came; none: a round of I/O of each
 * worker that feeds it first, rather than waiting for their progress
 * threads (a polling application drives the endpoint), then what that
 * brought.
 */
UBX_VISIBLE int urma_poll_jfc(urma_jfc_t *jfc, int cr_cnt, urma_cr_t *cr)
{
	struct ubx_jfc *j = ubx_jfc_of(jfc);
	uint32_t mask;
	int n = 0;

	if (!j || cr_cnt < 0 || (cr_cnt && !cr)) {
		errno = EINVAL;
		return -1;
	}
	while (n < cr_cnt && ubx_cring_take(&j->ring, &cr[n]))
		n++;
	if (n)
		return n;
	/* No queue uses it yet: its context's worker's I/O. */
	mask = __atomic_load_n(&j->wmask, __ATOMIC_ACQUIRE);
	if (!mask)
		mask = 1u << j->ctx->port->widx;
	for (uint32_t w = 0; next_w(mask, &w); w++) {
		struct ubx_port *p = lane(j->ctx, w);

		pthread_mutex_lock(&p->lock);
		ubx_app_progress(p);
		pthread_mutex_unlock(&p->lock);
	}
	while (n < cr_cnt && ubx_cring_take(&j->ring, &cr[n]))
		n++;
	if (!n && cr_cnt && ubx_cring_report_loss(&j->ring)) {
		errno = EOVERFLOW;
		return -1;
	}
	return n;
}

UBX_VISIBLE urma_status_t urma_rearm_jfc(urma_jfc_t *jfc, bool solicited_only)
{
	struct ubx_jfc *j = ubx_jfc_of(jfc);
	uint32_t mask;

	if (!j || !j->jfce)
		return URMA_EINVAL;
	if (solicited_only) {
		/* The wire carries no solicited flag. */
		ubx_err("urma_rearm_jfc: solicited_only is not supported");
		return URMA_ENOPERM;
	}
	__atomic_store_n(&j->armed, true, __ATOMIC_SEQ_CST);
	/* Records already waiting fire at once: no wake-up is lost between
	 * the last poll and the arming. A push takes its ticket on tail, then
	 * looks at armed; a rearm sets armed, then looks at tail, all
	 * sequentially consistent: of the two, one sees the other. (A record
	 * whose ticket is taken but not yet written fires an arming its poll
	 * may not see yet: a wake-up too many, never one too few.) */
	mask = __atomic_load_n(&j->wmask, __ATOMIC_SEQ_CST);
	if (mask && ubx_cring_busy(&j->ring)) {
		/* On the list of a worker that feeds it, as a push would have. */
		struct ubx_port *p = lane(j->ctx, (uint32_t)__builtin_ctz(mask));

		pthread_mutex_lock(&p->lock);
		fire(j, p);
		pthread_mutex_unlock(&p->lock);
	}
	return URMA_SUCCESS;
}

/* The workers a JFCE's waits drive: those of its JFCs' rings (its
 * context's worker while there are none). */
static uint32_t jfce_mask(const struct ubx_jfce *e)
{
	uint32_t m = __atomic_load_n(&e->wmask, __ATOMIC_ACQUIRE);

	return m ? m : 1u << e->ctx->port->widx;
}

/* The JFCs that fired, up to cnt into jfc, from each worker's list under
 * its lock. */
static uint32_t take_fired(struct ubx_jfce *e, uint32_t cnt, urma_jfc_t *jfc[])
{
	uint32_t n = 0, mask = jfce_mask(e);
	bool rest = false;
	uint64_t v;

	if (read(e->pub.fd, &v, sizeof(v)) < 0) {
		/* not readable: nothing fired, or another thread took it */
	}
	for (uint32_t w = 0; next_w(mask, &w); w++) {
		struct ubx_port *p = lane(e->ctx, w);
		struct ubx_fired *f = &e->fired[w];
		uint32_t k = 0;

		pthread_mutex_lock(&p->lock);
		while (n < cnt && k < f->n) {
			jfc[n++] = &f->v[k]->pub;
			__atomic_store_n(&f->v[k]->fired, false, __ATOMIC_RELEASE);
			k++;
		}
		memmove(f->v, f->v + k, (f->n - k) * sizeof(f->v[0]));
		f->n -= k;
		rest |= f->n > 0;
		pthread_mutex_unlock(&p->lock);
	}
	if (rest) {
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
 * again to see whether it pays now. The lead port's lock held (wait_jfc).
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
 * Waiting drives the endpoint: the thread sleeps on the JFCE, the sockets
 * and timers of every worker that feeds its JFCs, and runs a round of each
 * when a frame comes (one thread does what the progress threads would,
 * without a hand-over per completion). The progress threads stand back
 * meanwhile. Before it sleeps it spins as long as spinning has paid
 * (spin_budget; docs/URMA.md "Waiting"). The time is kept by the lead
 * worker's (the lowest's) wake timer (io/wake_timer.h), armed once for many
 * sleeps where a poll timeout is armed and cancelled at each. Each worker's
 * lock is taken in turn, never two at once.
 */
UBX_VISIBLE int urma_wait_jfc(urma_jfce_t *jfce, uint32_t jfc_cnt, int time_out, urma_jfc_t *jfc[])
{
	struct ubx_jfce *e = ubx_jfce_of(jfce);
	uint64_t until, now, spin_until = 0;

	if (!e || !jfc_cnt || !jfc || time_out < -1) {
		errno = EINVAL;
		return -1;
	}
	now = ep_now_ns();
	until = time_out < 0 ? UINT64_MAX : now + (uint64_t)time_out * 1000000;
	for (bool first = true;; first = false) {
		struct pollfd pfd[(UBX_POLL_FDS + 1) * UB_EP_MAX_WORKERS + 2];
		int fds[UBX_POLL_FDS], k = 0, nw = 0, r;
		uint32_t mask = jfce_mask(e), w;
		struct ubx_port *lead = lane(e->ctx, (uint32_t)__builtin_ctz(mask));
		uint64_t dl = UINT64_MAX, bound, lo, hi;
		struct timespec ts, *tsp = NULL;
		bool timer = false, fired = false;

		for (w = 0; next_w(mask, &w); w++) {
			struct ubx_port *p = lane(e->ctx, w);

			pthread_mutex_lock(&p->lock);
			if (!e->fired[w].n && time_out)
				ubx_app_progress(p);
			fired |= e->fired[w].n > 0;
			pthread_mutex_unlock(&p->lock);
		}
		if (fired) {
			uint32_t n = take_fired(e, jfc_cnt, jfc);

			if (n) {
				pthread_mutex_lock(&lead->lock);
				if (spin_until)
					spin_paid(e, true);
				pthread_mutex_unlock(&lead->lock);
				return (int)n;
			}
		}
		now = ep_now_ns();
		pthread_mutex_lock(&lead->lock);
		if (first && time_out && (dl = spin_budget(e)))
			spin_until = now + dl;
		if (spin_until && now < spin_until && now < until) {
			pthread_mutex_unlock(&lead->lock);
			continue;
		}
		if (spin_until) {
			spin_until = 0;
			spin_paid(e, false);
		}
		pthread_mutex_unlock(&lead->lock);
		if (now >= until)
			return 0;
		dl = UINT64_MAX;
		for (w = 0; next_w(mask, &w); w++) {
			struct ubx_port *p = lane(e->ctx, w);
			uint64_t t, c;
			int m;

			pthread_mutex_lock(&p->lock);
			t = tp_ep_next_deadline(p->tp);
			c = ubx_ctl_run(p, now);
			m = ep_poll_fds(p->ep, fds, UBX_POLL_FDS);
			pthread_mutex_unlock(&p->lock);
			dl = t < dl ? t : dl;
			dl = c < dl ? c : dl;
			for (int i = 0; i < m; i++)
				pfd[k++] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
			nw++;
		}
		if (dl <= now)
			continue;	/* due: the next round runs it */
		bound = until - now < UBX_APP_DRIVES_NS / 2 ? until : now + UBX_APP_DRIVES_NS / 2;
		/* the deadline as the endpoint's own sleeps take it, else the caller's
		 * time, or stay the one that drives */
		wake_timer_window(now, dl, bound, EP_TIMER_SLACK_NS, &lo, &hi);
		pthread_mutex_lock(&lead->lock);
		if (!lead->wt_busy && !wake_timer_set(&lead->wt, now, lo, hi))
			timer = lead->wt_busy = true;
		pthread_mutex_unlock(&lead->lock);
		pfd[k] = (struct pollfd){ .fd = e->pub.fd, .events = POLLIN };
		for (w = 0, r = 1; next_w(mask, &w); w++)
			pfd[k + r++] = (struct pollfd){ .fd = lane(e->ctx, w)->wake_fd, .events = POLLIN };
		if (timer) {
			pfd[k + 1 + nw] = (struct pollfd){ .fd = lead->wt.fd, .events = POLLIN };
		} else {
			ts = ub_ns_timespec(hi - now);
			tsp = &ts;
		}
		r = ppoll(pfd, (nfds_t)k + 1 + (nfds_t)nw + timer, tsp, NULL);
		if (timer) {
			pthread_mutex_lock(&lead->lock);
			lead->wt_busy = false;
			pthread_mutex_unlock(&lead->lock);
		}
		if (r < 0 && errno != EINTR)
			return -1;
		for (int i = 0; r > 0 && i < nw; i++) {
			uint64_t v;

			if (pfd[k + 1 + i].revents && read(pfd[k + 1 + i].fd, &v, sizeof(v)) < 0) {
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
