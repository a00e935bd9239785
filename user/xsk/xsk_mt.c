// SPDX-License-Identifier: BSD-2-Clause
/* AF_XDP for several threads on one UMEM; the contract is in xsk_mt.h. */
#include "xsk/xsk_mt.h"
#include "xsk/xsk_frames.h"
#include "xsk/xsk_mb.h"

#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#ifndef XDP_USE_SG
#define XDP_USE_SG	(1 << 4)
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

/* One (device, queue): the kernel's buffer pool, its fill and completion rings. */
struct pool {
	uint64_t netns;			/* the namespace's inode: ifindexes are per namespace */
	unsigned ifindex;
	uint32_t queue;
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	pthread_spinlock_t lock;	/* fill production and completion consumption, when shared */
	/* Sockets of several threads on it (fixed at setup): its rings are used
	 * under lock. A pool of one thread's sockets alone needs none. */
	bool shared;
	struct xsk_mt_thr *thr;		/* the thread of its first socket */
	uint32_t in_fill;		/* frames lent to the kernel (atomic) */
	int first_fd;			/* the socket that made it: later ones bind sharing it */
};

struct sock {
	int fd;
	struct xsk_socket *xsk;		/* made by libxdp (a pool's first), else NULL */
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	void *rx_map, *tx_map;		/* raw sockets' own mappings */
	size_t rx_len, tx_len;
	struct pool *pool;
	bool has_rx, has_tx;
};

struct xsk_mt_thr {
	struct xsk_mt *m;
	struct sock socks[XSK_MT_MAX_SOCKS];
	int nsocks, rr;
	struct xsk_frames fr;	/* its free frames, and its free runs (xsk_mt_alloc_run) */
	uint32_t keep;		/* frames it never gives to the fill rings: its sends' */
	struct pool *rx_pools[XSK_MT_MAX_SOCKS];	/* distinct pools t receives from */
	struct pool *tx_pools[XSK_MT_MAX_SOCKS];	/* ... and sends through */
	int nrx_pools, ntx_pools;
	uint64_t locks;		/* pool locks it took (its own thread's count) */
	struct xsk_mt_thr *next;
};

struct xsk_mt {
	struct xsk_mt_cfg cfg;
	void *area;
	size_t area_len;
	struct xsk_umem *umem;
	struct xsk_ring_prod fill0;	/* the UMEM's own rings: the first pool binds them, then copies them */
	struct xsk_ring_cons comp0;
	struct pool pools[XSK_MT_MAX_POOLS];
	int npools;
	uint32_t handed;		/* frames given to threads so far */
	uint32_t runs_handed;		/* runs given to threads so far */
	uint64_t run_base;		/* the runs' first byte: past every single frame */
	bool zc;			/* bound zero-copy */
	unsigned busy_binds;		/* binds that met a busy queue and waited (atomic) */
	struct xsk_mt_thr *threads;
};

#define HUGE_PAGE	(2ul << 20)

/*
 * The UMEM on transparent huge pages where the host allows them (THP
 * "madvise" mode): every frame is a page of its own on small pages, so each
 * packet the endpoint writes or reads takes TLB entries of its own (an
 * endpoint's 8192 frames span 32 MiB). Aligned to a huge page, so that the
 * kernel can back it with them; without them, small pages as before. What it
 * bought at MTU 9000 was within the shared host's noise (bench/README.md,
 * the jumbo section). munmap takes back the whole mapping, the trimmed ends
 * being gone already.
 */
static void *umem_map(size_t len)
{
	size_t span = len + HUGE_PAGE;
	uint8_t *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;

	if (p == MAP_FAILED)
		return NULL;
	a = (uint8_t *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (a + len < p + span)
		munmap(a + len, (size_t)(p + span - (a + len)));
	(void)madvise(a, len, MADV_HUGEPAGE);	/* before the UMEM's pinning touches it */
	return a;
}

struct xsk_mt *xsk_mt_create(const struct xsk_mt_cfg *cfg)
{
	struct xsk_umem_config ucfg = { 0 };
	struct xsk_mt *m;
	int err;

	if (!cfg->nframes || (cfg->frame_size != 2048 && cfg->frame_size != 4096) || !cfg->ring_size ||
	    (cfg->ring_size & (cfg->ring_size - 1))) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->cfg = *cfg;
	if (!cfg->run_frames)
		m->cfg.nruns = 0;
	m->run_base = (uint64_t)cfg->nframes * cfg->frame_size;
	m->area_len = m->run_base + (size_t)m->cfg.nruns * cfg->run_frames * cfg->frame_size;
	m->area = umem_map(m->area_len);
	if (!m->area) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	ucfg.fill_size = cfg->ring_size;
	ucfg.comp_size = cfg->ring_size;
	ucfg.frame_size = cfg->frame_size;
	err = xsk_umem__create(&m->umem, m->area, m->area_len, &m->fill0, &m->comp0, &ucfg);
	if (err) {
		munmap(m->area, m->area_len);
		free(m);
		errno = -err;
		return NULL;
	}
	return m;
}

static void close_sock(struct sock *s)
{
	if (s->xsk) {
		xsk_socket__delete(s->xsk);
	} else {
		if (s->rx_map)
			munmap(s->rx_map, s->rx_len);
		if (s->tx_map)
			munmap(s->tx_map, s->tx_len);
		if (s->fd > 0)
			close(s->fd);
	}
}

void xsk_mt_destroy(struct xsk_mt *m)
{
	struct xsk_mt_thr *t, *n;

	if (!m)
		return;
	/* Sockets sharing a pool before the one that made it (libxdp's, on the UMEM). */
	for (t = m->threads; t; t = t->next)
		for (int i = 0; i < t->nsocks; i++)
			if (!t->socks[i].xsk)
				close_sock(&t->socks[i]);
	for (t = m->threads; t; t = t->next)
		for (int i = 0; i < t->nsocks; i++)
			if (t->socks[i].xsk)
				close_sock(&t->socks[i]);
	for (int i = 0; i < m->npools; i++)
		pthread_spin_destroy(&m->pools[i].lock);
	for (t = m->threads; t; t = n) {
		n = t->next;
		xsk_frames_fini(&t->fr);
		free(t);
	}
	xsk_umem__delete(m->umem);
	munmap(m->area, m->area_len);
	free(m);
}

bool xsk_mt_is_sg(const struct xsk_mt *m) { return m->cfg.sg; }
bool xsk_mt_is_zerocopy(const struct xsk_mt *m) { return m->zc; }
unsigned xsk_mt_busy_binds(const struct xsk_mt *m) { return __atomic_load_n(&m->busy_binds, __ATOMIC_RELAXED); }
uint32_t xsk_mt_frame_size(const struct xsk_mt *m) { return m->cfg.frame_size; }
void *xsk_mt_data(const struct xsk_mt *m, uint64_t addr) { return xsk_umem__get_data(m->area, addr); }
uint32_t xsk_mt_free_frames(const struct xsk_mt_thr *t) { return t->fr.nfree; }

void xsk_mt_thread_keep(struct xsk_mt_thr *t, uint32_t n)
{
	t->keep = n;
}

struct xsk_mt_thr *xsk_mt_thread(struct xsk_mt *m, uint32_t nframes)
{
	struct xsk_mt_thr *t;

	if (nframes > m->cfg.nframes - m->handed) {
		errno = ENOSPC;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->m = m;
	if (xsk_frames_init(&t->fr, m->cfg.nframes, m->cfg.frame_size, m->cfg.nruns, m->cfg.run_frames)) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	/* In address order: refill lends the top of the stack in this order, so
	 * the fill ring starts with adjacent chunks, first to last. */
	for (uint32_t i = 0; i < nframes; i++)
		xsk_frames_push(&t->fr, (uint64_t)(m->handed + i) * m->cfg.frame_size);
	m->handed += nframes;
	t->next = m->threads;
	m->threads = t;
	return t;
}

void xsk_mt_thread_runs(struct xsk_mt_thr *t, uint32_t n)
{
	struct xsk_mt *m = t->m;
	const uint64_t span = (uint64_t)m->cfg.run_frames * m->cfg.frame_size;

	for (; n && m->runs_handed < m->cfg.nruns; n--)
		xsk_frames_push(&t->fr, m->run_base + m->runs_handed++ * span);
}

static void track(struct pool **list, int *n, struct pool *p)
{
	for (int i = 0; i < *n; i++)
		if (list[i] == p)
			return;
	list[(*n)++] = p;
}

static void refill(struct xsk_mt_thr *t, struct pool *p);

/* A socket that shares the pool of (ifindex, queue): the rings it needs, then a shared bind. */
static int add_shared(struct xsk_mt *m, struct sock *s, struct pool *p, bool rx, bool tx)
{
	struct xdp_mmap_offsets off;
	socklen_t optlen = sizeof(off);
	struct sockaddr_xdp sxdp = { .sxdp_family = AF_XDP, .sxdp_ifindex = p->ifindex, .sxdp_queue_id = p->queue,
				     .sxdp_flags = XDP_SHARED_UMEM, .sxdp_shared_umem_fd = (__u32)p->first_fd };
	int ring = (int)m->cfg.ring_size;

	s->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -errno;
	if ((rx && setsockopt(s->fd, SOL_XDP, XDP_RX_RING, &ring, sizeof(ring))) ||
	    (tx && setsockopt(s->fd, SOL_XDP, XDP_TX_RING, &ring, sizeof(ring))) ||
	    getsockopt(s->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen))
		return -errno;
	if (rx) {
		s->rx_len = off.rx.desc + m->cfg.ring_size * sizeof(struct xdp_desc);
		s->rx_map = mmap(NULL, s->rx_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, s->fd,
				 XDP_PGOFF_RX_RING);
		if (s->rx_map == MAP_FAILED) {
			s->rx_map = NULL;
			return -errno;
		}
		s->rx.mask = m->cfg.ring_size - 1;
		s->rx.size = m->cfg.ring_size;
		s->rx.producer = (void *)((char *)s->rx_map + off.rx.producer);
		s->rx.consumer = (void *)((char *)s->rx_map + off.rx.consumer);
		s->rx.flags = (void *)((char *)s->rx_map + off.rx.flags);
		s->rx.ring = (char *)s->rx_map + off.rx.desc;
		s->rx.cached_prod = *s->rx.producer;
		s->rx.cached_cons = *s->rx.consumer;
	}
	if (tx) {
		s->tx_len = off.tx.desc + m->cfg.ring_size * sizeof(struct xdp_desc);
		s->tx_map = mmap(NULL, s->tx_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, s->fd,
				 XDP_PGOFF_TX_RING);
		if (s->tx_map == MAP_FAILED) {
			s->tx_map = NULL;
			return -errno;
		}
		s->tx.mask = m->cfg.ring_size - 1;
		s->tx.size = m->cfg.ring_size;
		s->tx.producer = (void *)((char *)s->tx_map + off.tx.producer);
		s->tx.consumer = (void *)((char *)s->tx_map + off.tx.consumer);
		s->tx.flags = (void *)((char *)s->tx_map + off.tx.flags);
		s->tx.ring = (char *)s->tx_map + off.tx.desc;
		s->tx.cached_prod = *s->tx.producer;
		s->tx.cached_cons = *s->tx.consumer + m->cfg.ring_size;
	}
	/* A socket sharing a pool takes the pool's mode: it may name no flags of its own. */
	if (bind(s->fd, (struct sockaddr *)&sxdp, sizeof(sxdp)))
		return -errno;
	return 0;
}

int xsk_mt_add(struct xsk_mt_thr *t, const char *ifname, uint32_t queue, bool rx, bool tx, int xskmap_fd,
	       uint32_t key)
{
	struct xsk_mt *m = t->m;
	unsigned ifindex = if_nametoindex(ifname);
	struct pool *p = NULL;
	struct sock *s;
	int err;

	struct stat ns;

	if (!ifindex)
		return -ENODEV;
	if (t->nsocks >= XSK_MT_MAX_SOCKS || (!rx && !tx))
		return -EINVAL;
	/* A device of this thread's namespace (liburma binds a veth in one of its own). */
	if (stat("/proc/thread-self/ns/net", &ns))
		ns.st_ino = 0;
	for (int i = 0; i < m->npools; i++)
		if (m->pools[i].netns == (uint64_t)ns.st_ino && m->pools[i].ifindex == ifindex &&
		    m->pools[i].queue == queue)
			p = &m->pools[i];
	s = &t->socks[t->nsocks];
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (!p) {
		struct xsk_socket_config scfg = { 0 };
		/* The first pool binds the UMEM's own rings, made with it, and copies
		 * them after. Handed other rings, libxdp copies the UMEM's into them and,
		 * if the bind fails, unmaps the UMEM's: the next try would write a fill
		 * ring that is gone. */
		bool first = !m->npools;

		if (m->npools >= XSK_MT_MAX_POOLS)
			return -ENOSPC;
		p = &m->pools[m->npools];
		memset(p, 0, sizeof(*p));
		scfg.rx_size = m->cfg.ring_size;
		scfg.tx_size = m->cfg.ring_size;
		scfg.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
		scfg.bind_flags = xsk_mode_bind_flags(m->cfg.mode) | XDP_USE_NEED_WAKEUP |
				  (m->cfg.sg ? XDP_USE_SG : 0);
		/* Two reasons to try again. A kernel before 6.6 knows no XDP_USE_SG:
		 * at once, without it. A socket closed just before on this queue (a
		 * process just ended, a server reopening its ports) frees it from a
		 * kernel workqueue, under the RTNL lock: EBUSY for a moment, not for
		 * good, though the moment lasts as long as another holds that lock. */
		struct timespec t0, t1;
		int sg_err = 0;
		bool waited = false;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			err = xsk_socket__create_shared(&s->xsk, ifname, queue, m->umem, rx ? &s->rx : NULL,
							tx ? &s->tx : NULL, first ? &m->fill0 : &p->fill,
							first ? &m->comp0 : &p->comp, &scfg);
			err = err > 0 ? -err : err;
			if (err && m->cfg.sg && first && (err == -EINVAL || err == -EOPNOTSUPP)) {
				m->cfg.sg = false;
				scfg.bind_flags &= ~XDP_USE_SG;
				sg_err = err;
				continue;
			}
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if (err != -EBUSY || (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 >=
						     XSK_MT_BUSY_WAIT_MS)
				break;
			if (!waited)
				__atomic_add_fetch(&m->busy_binds, 1, __ATOMIC_RELAXED);
			waited = true;
			usleep(20 * 1000);
		}
		if (err) {
			/* Refused without XDP_USE_SG too: it was not the kernel's lack of
			 * multi-buffer (a forced zero-copy the driver has not, a bad
			 * queue), and the first refusal is the one to report. */
			if (sg_err) {
				m->cfg.sg = true;
				err = sg_err;
			}
			s->xsk = NULL;
			return err;
		}
		s->fd = xsk_socket__fd(s->xsk);
		if (first) {
			p->fill = m->fill0;
			p->comp = m->comp0;
			m->zc = xsk_fd_zerocopy(s->fd);
		}
		p->netns = (uint64_t)ns.st_ino;
		p->ifindex = ifindex;
		p->queue = queue;
		p->first_fd = s->fd;
		p->thr = t;
		pthread_spin_init(&p->lock, PTHREAD_PROCESS_PRIVATE);
		m->npools++;
	} else {
		err = add_shared(m, s, p, rx, tx);
		if (err) {
			close_sock(s);
			memset(s, 0, sizeof(*s));
			return err;
		}
		/* Setup is single-threaded: no thread uses the pool yet while it
		 * turns shared. */
		if (p->thr != t)
			p->shared = true;
	}
	s->pool = p;
	s->has_rx = rx;
	s->has_tx = tx;
	t->nsocks++;	/* from here on it goes with t, whatever comes */
	if (xskmap_fd >= 0 && bpf_map_update_elem(xskmap_fd, &key, &s->fd, 0))
		return -errno;
	if (rx)
		track(t->rx_pools, &t->nrx_pools, p);
	if (tx)
		track(t->tx_pools, &t->ntx_pools, p);
	/* Frames in the fill ring from the start: a frame that comes before the
	 * thread's first rx or poll (the answer to a hello sent right after the
	 * bind) is not dropped for an empty fill ring. */
	if (rx)
		refill(t, p);
	return t->nsocks - 1;
}

/* Fill-ring depth per pool: its ring, but never more than half the UMEM over
 * all pools; less what a thread keeps for its sends (xsk_mt_thread_keep). */
static uint32_t fill_target(const struct xsk_mt *m)
{
	uint32_t share = m->cfg.nframes / 2 / (uint32_t)(m->npools ? m->npools : 1);

	return share < m->cfg.ring_size ? share : m->cfg.ring_size;
}

static void pool_lock(struct xsk_mt_thr *t, struct pool *p)
{
	if (p->shared) {
		pthread_spin_lock(&p->lock);
		t->locks++;
	}
}

static void pool_unlock(struct pool *p)
{
	if (p->shared)
		pthread_spin_unlock(&p->lock);
}

static void refill(struct xsk_mt_thr *t, struct pool *p)
{
	uint32_t want = fill_target(t->m), have = __atomic_load_n(&p->in_fill, __ATOMIC_RELAXED), n, idx;

	if (have >= want || t->fr.nfree <= t->keep)
		return;
	pool_lock(t, p);
	have = __atomic_load_n(&p->in_fill, __ATOMIC_RELAXED);
	n = have < want ? want - have : 0;
	if (n > t->fr.nfree - t->keep)
		n = t->fr.nfree - t->keep;
	if (n)
		n = xsk_ring_prod__reserve(&p->fill, n, &idx);
	/* The top n of the stack in the order they were pushed, which for
	 * received frames is the order they came in: a multi-buffer packet's
	 * frames then come back in adjacent chunks, first to last, and the
	 * endpoint joins them where they lie (endpoint/ep_rx_join.h). */
	t->fr.nfree -= n;
	for (uint32_t i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&p->fill, idx + i) = t->fr.free[t->fr.nfree + i];
	if (n) {
		xsk_ring_prod__submit(&p->fill, n);
		__atomic_fetch_add(&p->in_fill, n, __ATOMIC_RELAXED);
	}
	pool_unlock(p);
}

static void reap(struct xsk_mt_thr *t, struct pool *p)
{
	if (!p->shared) {
		xsk_frames_reap(&t->fr, &p->comp);
		return;
	}
	if (pthread_spin_trylock(&p->lock))
		return;	/* another thread reaps it now */
	t->locks++;
	xsk_frames_reap(&t->fr, &p->comp);
	pthread_spin_unlock(&p->lock);
}

/* Frames the kernel has not taken from s's tx ring yet. */
static uint32_t tx_pending(const struct sock *s)
{
	return s->tx.cached_prod - __atomic_load_n(s->tx.consumer, __ATOMIC_ACQUIRE);
}

static void kick_tx(struct sock *s)
{
	/* Copy mode transmits inside sendto(), a bounded batch per call, and says
	 * EAGAIN while more is queued; zero-copy only needs the wakeup. */
	if (!xsk_ring_prod__needs_wakeup(&s->tx))
		return;
	for (int i = 0; i < 64; i++)
		if (sendto(s->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0 || errno != EAGAIN)
			break;
}

void xsk_mt_service(struct xsk_mt_thr *t)
{
	for (int i = 0; i < t->ntx_pools; i++)
		reap(t, t->tx_pools[i]);
	for (int i = 0; i < t->nsocks; i++) {
		struct sock *s = &t->socks[i];

		if (s->has_tx && tx_pending(s))
			kick_tx(s);
	}
	for (int i = 0; i < t->nrx_pools; i++) {
		struct pool *p = t->rx_pools[i];

		refill(t, p);
		if (xsk_ring_prod__needs_wakeup(&p->fill))
			for (int k = 0; k < t->nsocks; k++)
				if (t->socks[k].pool == p) {
					recvfrom(t->socks[k].fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
					break;
				}
	}
}

static bool m_sg(const struct xsk_mt_thr *t) { return t->m->cfg.sg; }

/* Up to max frames of socket si, whole packets only: a packet cut by max
 * stays in the ring. *held: nothing taken for that reason alone. */
static unsigned rx_one(struct xsk_mt_thr *t, int si, struct xsk_mt_frame *out, unsigned max, bool may_split,
		       bool *held)
{
	struct sock *s = &t->socks[si];
	uint32_t idx, n;

	if (!s->has_rx)
		return 0;
	n = xsk_ring_cons__peek(&s->rx, max, &idx);
	if (m_sg(t) && n == max) {
		uint32_t k = xsk_mb_whole(&s->rx, idx, n, may_split);

		xsk_ring_cons__cancel(&s->rx, n - k);
		*held = !k;
		n = k;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&s->rx, idx + i);

		out[i].addr = d->addr;
		out[i].data = xsk_umem__get_data(t->m->area, d->addr);
		out[i].len = d->len;
		out[i].sock = si;
		out[i].more = d->options & XDP_PKT_CONTD;
	}
	if (n) {
		xsk_ring_cons__release(&s->rx, n);
		__atomic_fetch_sub(&s->pool->in_fill, n, __ATOMIC_RELAXED);
	}
	return n;
}

unsigned xsk_mt_rx(struct xsk_mt_thr *t, struct xsk_mt_frame *out, unsigned max)
{
	unsigned got = 0;

	xsk_mt_service(t);
	for (int k = 0; k < t->nsocks && got < max; k++) {
		bool held = false;

		/* A packet that did not fit what this call had left is the first of
		 * the next call, where all of max is its. */
		got += rx_one(t, t->rr, out + got, max - got, !got, &held);
		if (held)
			break;
		t->rr = (t->rr + 1) % t->nsocks;
	}
	return got;
}

unsigned xsk_mt_tx(struct xsk_mt_thr *t, int sock, struct xsk_mt_frame *f, unsigned n)
{
	struct sock *s;
	unsigned got;

	if (sock < 0 || sock >= t->nsocks || !t->socks[sock].has_tx || !n)
		return 0;
	s = &t->socks[sock];
	got = xsk_frames_post(&s->tx, f, n, t->m->cfg.sg);
	if (!got) {
		/* The ring is full of frames the kernel has not sent yet. */
		kick_tx(s);
		reap(t, s->pool);
		got = xsk_frames_post(&s->tx, f, n, t->m->cfg.sg);
	}
	if (got)
		kick_tx(s);
	return got;
}

void xsk_mt_free(struct xsk_mt_thr *t, uint64_t addr)
{
	xsk_frames_push(&t->fr, addr);
}

int xsk_mt_poll(struct xsk_mt_thr *t, int extra_fd, int timeout_ms)
{
	struct pollfd pfd[XSK_MT_MAX_SOCKS + 1];
	nfds_t n = 0;
	int r;

	xsk_mt_service(t);
	for (int i = 0; i < t->nsocks; i++)
		if (t->socks[i].has_rx)
			pfd[n++] = (struct pollfd){ .fd = t->socks[i].fd, .events = POLLIN };
	if (extra_fd >= 0)
		pfd[n++] = (struct pollfd){ .fd = extra_fd, .events = POLLIN };
	r = poll(pfd, n, timeout_ms);
	return r < 0 ? -errno : r;
}

/* The top of one of t's free stacks (frames, or runs) into f, completions
 * reaped first when it is empty. */
static bool take(struct xsk_mt_thr *t, bool run, struct xsk_mt_frame *f)
{
	if (!xsk_frames_pop(&t->fr, run, &f->addr)) {
		for (int i = 0; i < t->ntx_pools; i++)
			reap(t, t->tx_pools[i]);
		if (!xsk_frames_pop(&t->fr, run, &f->addr))
			return false;
	}
	f->data = xsk_umem__get_data(t->m->area, f->addr);
	f->len = 0;
	f->sock = -1;
	f->more = false;
	return true;
}

bool xsk_mt_alloc(struct xsk_mt_thr *t, struct xsk_mt_frame *f)
{
	return take(t, false, f);
}

bool xsk_mt_alloc_run(struct xsk_mt_thr *t, struct xsk_mt_frame *f)
{
	return take(t, true, f);
}

unsigned xsk_mt_tx_room(struct xsk_mt_thr *t, int sock)
{
	struct sock *s;

	if (sock < 0 || sock >= t->nsocks || !t->socks[sock].has_tx)
		return 0;
	s = &t->socks[sock];
	reap(t, s->pool);
	return xsk_prod_nb_free(&s->tx, t->m->cfg.ring_size);
}

int xsk_mt_nsocks(const struct xsk_mt_thr *t) { return t->nsocks; }
uint64_t xsk_mt_pool_locks(const struct xsk_mt_thr *t) { return t->locks; }

uint64_t xsk_mt_queues(const struct xsk_mt_thr *t, unsigned ifindex)
{
	uint64_t mask = 0;

	for (int i = 0; i < t->nsocks; i++)
		if (t->socks[i].pool->ifindex == ifindex && t->socks[i].pool->queue < 64)
			mask |= 1ull << t->socks[i].pool->queue;
	return mask;
}

uint32_t xsk_mt_sock_queue(const struct xsk_mt_thr *t, int sock) { return t->socks[sock].pool->queue; }
int xsk_mt_fd(const struct xsk_mt_thr *t, int sock) { return t->socks[sock].fd; }

void xsk_mt_get_stats(const struct xsk_mt_thr *t, struct xsk_kstats *st)
{
	memset(st, 0, sizeof(*st));
	for (int i = 0; i < t->nsocks; i++) {
		const struct sock *s = &t->socks[i];
		uint64_t fill_empty = st->fill_empty;

		xsk_kstats_add(s->fd, st);
		/* The kernel counts an empty fill ring per pool, and every socket
		 * on the queue reads that one count: it is the pool's first
		 * socket's alone, or N workers would report it N times. */
		if (s->fd != s->pool->first_fd)
			st->fill_empty = fill_empty;
	}
}

bool xsk_mt_sg_supported(void)
{
	struct sockaddr_xdp sxdp = { .sxdp_family = AF_XDP, .sxdp_flags = XDP_USE_SG };
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0), rc, err;

	if (fd < 0)
		return false;
	rc = bind(fd, (struct sockaddr *)&sxdp, sizeof(sxdp));
	err = errno;
	close(fd);
	return rc && err == ENODEV;
}
