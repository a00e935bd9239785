// SPDX-License-Identifier: BSD-2-Clause
#include "xsk/xsk_port.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

struct xsk_sock {
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx, comp;
	struct xsk_ring_prod tx, fill;
	uint32_t in_fill;	/* frames lent to the kernel through the fill ring */
	uint32_t in_tx;		/* frames queued for tx, not completed yet */
	char ifname[IF_NAMESIZE];
	uint32_t queue;
	bool zerocopy;
};

struct xsk_port {
	struct xsk_port_cfg cfg;
	void *area;
	size_t area_len;
	struct xsk_umem *umem;
	struct xsk_sock socks[XSK_PORT_MAX_SOCKS];
	int nsocks;
	int rr;			/* next socket for round-robin rx */
	uint64_t *free_stack;
	uint32_t nfree;
	struct xsk_port_stats st;
};

static void push_free(struct xsk_port *p, uint64_t addr)
{
	/* Aligned mode: a descriptor address may point past the frame's start
	 * (headroom); the frame is the power-of-two slot that holds it. */
	p->free_stack[p->nfree++] = addr & ~(uint64_t)(p->cfg.frame_size - 1);
}

struct xsk_port *xsk_port_create(const struct xsk_port_cfg *cfg)
{
	struct xsk_umem_config ucfg = { 0 };
	struct xsk_port *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return NULL;
	if (cfg)
		p->cfg = *cfg;
	if (!p->cfg.nframes)
		p->cfg.nframes = 4096;
	if (!p->cfg.frame_size)
		p->cfg.frame_size = 4096;
	if (!p->cfg.ring_size)
		p->cfg.ring_size = 1024;
	if ((p->cfg.frame_size != 2048 && p->cfg.frame_size != 4096) ||
	    (p->cfg.ring_size & (p->cfg.ring_size - 1))) {
		free(p);
		errno = EINVAL;
		return NULL;
	}
	p->area_len = (size_t)p->cfg.nframes * p->cfg.frame_size;
	p->area = mmap(NULL, p->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p->free_stack = calloc(p->cfg.nframes, sizeof(*p->free_stack));
	if (p->area == MAP_FAILED || !p->free_stack) {
		err = ENOMEM;
		goto fail;
	}
	/* The first socket uses the rings made here; later ones bring their own. */
	ucfg.fill_size = p->cfg.ring_size;
	ucfg.comp_size = p->cfg.ring_size;
	ucfg.frame_size = p->cfg.frame_size;
	err = xsk_umem__create(&p->umem, p->area, p->area_len, &p->socks[0].fill,
			       &p->socks[0].comp, &ucfg);
	if (err) {
		err = -err;
		goto fail;
	}
	for (uint32_t i = p->cfg.nframes; i-- > 0;)
		push_free(p, (uint64_t)i * p->cfg.frame_size);
	return p;
fail:
	if (p->area && p->area != MAP_FAILED)
		munmap(p->area, p->area_len);
	free(p->free_stack);
	free(p);
	errno = err;
	return NULL;
}

void xsk_port_destroy(struct xsk_port *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nsocks; i++)
		xsk_socket__delete(p->socks[i].xsk);
	if (p->umem)
		xsk_umem__delete(p->umem);
	munmap(p->area, p->area_len);
	free(p->free_stack);
	free(p);
}

/* Fill-ring depth each socket aims for: its ring, but never more than half
 * the UMEM shared among the sockets, so that tx always finds frames. */
static uint32_t fill_target(const struct xsk_port *p)
{
	uint32_t share = p->cfg.nframes / 2 / (uint32_t)(p->nsocks ? p->nsocks : 1);

	return share < p->cfg.ring_size ? share : p->cfg.ring_size;
}

static void refill(struct xsk_port *p, struct xsk_sock *s)
{
	uint32_t want = fill_target(p), n, idx;

	if (s->in_fill >= want)
		return;
	n = want - s->in_fill;
	if (n > p->nfree)
		n = p->nfree;
	if (!n)
		return;
	n = xsk_ring_prod__reserve(&s->fill, n, &idx);
	for (uint32_t i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&s->fill, idx + i) = p->free_stack[--p->nfree];
	xsk_ring_prod__submit(&s->fill, n);
	s->in_fill += n;
}

static void reap(struct xsk_port *p, struct xsk_sock *s)
{
	uint32_t idx, n = xsk_ring_cons__peek(&s->comp, p->cfg.ring_size, &idx);

	for (uint32_t i = 0; i < n; i++)
		push_free(p, *xsk_ring_cons__comp_addr(&s->comp, idx + i));
	if (n)
		xsk_ring_cons__release(&s->comp, n);
	s->in_tx -= n;
}

static void kick_tx(struct xsk_port *p, struct xsk_sock *s)
{
	/* Copy mode transmits inside sendto(), a bounded batch per call, and
	 * says EAGAIN while more is queued; zero-copy only needs the wakeup. */
	if (!p->cfg.no_wakeup && !xsk_ring_prod__needs_wakeup(&s->tx))
		return;
	for (int i = 0; i < 64; i++)
		if (sendto(xsk_socket__fd(s->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0 ||
		    errno != EAGAIN)
			break;
}

void xsk_port_service(struct xsk_port *p)
{
	for (int i = 0; i < p->nsocks; i++) {
		struct xsk_sock *s = &p->socks[i];

		reap(p, s);
		if (s->in_tx)
			kick_tx(p, s);
		refill(p, s);
		if (!p->cfg.no_wakeup && xsk_ring_prod__needs_wakeup(&s->fill))
			recvfrom(xsk_socket__fd(s->xsk), NULL, 0, MSG_DONTWAIT, NULL, NULL);
	}
}

int xsk_port_add(struct xsk_port *p, const char *ifname, uint32_t queue, int xskmap_fd,
		 uint32_t map_key)
{
	struct xsk_socket_config scfg = { 0 };
	struct xsk_sock *s;
	int err, fd;

	if (p->nsocks >= XSK_PORT_MAX_SOCKS)
		return -ENOSPC;
	if (strlen(ifname) >= IF_NAMESIZE)
		return -ENAMETOOLONG;
	s = &p->socks[p->nsocks];
	scfg.rx_size = p->cfg.ring_size;
	scfg.tx_size = p->cfg.ring_size;
	scfg.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
	scfg.bind_flags = xsk_mode_bind_flags(p->cfg.mode);
	if (!p->cfg.no_wakeup)
		scfg.bind_flags |= XDP_USE_NEED_WAKEUP;
	err = xsk_socket__create_shared(&s->xsk, ifname, queue, p->umem, &s->rx, &s->tx,
					&s->fill, &s->comp, &scfg);
	if (err)
		return err < 0 ? err : -err;
	fd = xsk_socket__fd(s->xsk);
	/* A socket not in the map stays the port's, for xsk_port_destroy: deleting
	 * a first socket here would unmap the UMEM's fill and completion rings
	 * (libxdp) under every socket added after. */
	if (xskmap_fd >= 0 && bpf_map_update_elem(xskmap_fd, &map_key, &fd, 0)) {
		err = -errno;
		p->nsocks++;
		return err;
	}
	s->zerocopy = xsk_fd_zerocopy(fd);
	strcpy(s->ifname, ifname);
	s->queue = queue;
	p->nsocks++;
	refill(p, s);
	return p->nsocks - 1;
}

int xsk_port_nsocks(const struct xsk_port *p) { return p->nsocks; }
int xsk_port_fd(const struct xsk_port *p, int sock) { return xsk_socket__fd(p->socks[sock].xsk); }
const char *xsk_port_ifname(const struct xsk_port *p, int sock) { return p->socks[sock].ifname; }
uint32_t xsk_port_frame_size(const struct xsk_port *p) { return p->cfg.frame_size; }
bool xsk_port_is_zerocopy(const struct xsk_port *p, int sock) { return p->socks[sock].zerocopy; }
uint32_t xsk_port_free_frames(const struct xsk_port *p) { return p->nfree; }
void *xsk_port_umem_data(const struct xsk_port *p, uint64_t addr) { return xsk_umem__get_data(p->area, addr); }

static unsigned rx_one(struct xsk_port *p, int si, struct xsk_frame *out, unsigned max)
{
	struct xsk_sock *s = &p->socks[si];
	uint32_t idx, n = xsk_ring_cons__peek(&s->rx, max, &idx);

	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&s->rx, idx + i);

		out[i].addr = d->addr;
		out[i].data = xsk_umem__get_data(p->area, d->addr);
		out[i].len = d->len;
		out[i].sock = si;
	}
	if (n) {
		xsk_ring_cons__release(&s->rx, n);
		s->in_fill -= n;
		p->st.rx += n;
	}
	return n;
}

unsigned xsk_port_rx(struct xsk_port *p, int sock, struct xsk_frame *out, unsigned max)
{
	unsigned got = 0;

	xsk_port_service(p);
	if (sock >= 0)
		return sock < p->nsocks ? rx_one(p, sock, out, max) : 0;
	for (int k = 0; k < p->nsocks && got < max; k++) {
		got += rx_one(p, p->rr, out + got, max - got);
		p->rr = (p->rr + 1) % p->nsocks;
	}
	return got;
}

unsigned xsk_port_tx_room(struct xsk_port *p, int sock)
{
	struct xsk_sock *s;

	if (sock < 0 || sock >= p->nsocks)
		return 0;
	s = &p->socks[sock];
	reap(p, s);
	return xsk_prod_nb_free(&s->tx, p->cfg.ring_size);
}

bool xsk_port_alloc(struct xsk_port *p, struct xsk_frame *f)
{
	if (!p->nfree) {
		for (int i = 0; i < p->nsocks; i++)
			reap(p, &p->socks[i]);
		if (!p->nfree) {
			p->st.alloc_fail++;
			return false;
		}
	}
	f->addr = p->free_stack[--p->nfree];
	f->data = xsk_umem__get_data(p->area, f->addr);
	f->len = 0;
	f->sock = -1;
	return true;
}

void xsk_port_free(struct xsk_port *p, const struct xsk_frame *f)
{
	push_free(p, f->addr);
}

unsigned xsk_port_tx(struct xsk_port *p, int sock, struct xsk_frame *f, unsigned n)
{
	struct xsk_sock *s;
	uint32_t idx;
	unsigned got;

	if (sock < 0 || sock >= p->nsocks || !n)
		return 0;
	s = &p->socks[sock];
	reap(p, s);
	got = xsk_ring_prod__reserve(&s->tx, n, &idx);
	if (!got) {
		/* The ring is full of frames the kernel has not sent yet. */
		kick_tx(p, s);
		reap(p, s);
		got = xsk_ring_prod__reserve(&s->tx, n, &idx);
	}
	for (unsigned i = 0; i < got; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&s->tx, idx + i);

		d->addr = f[i].addr;
		d->len = f[i].len;
		d->options = 0;
	}
	if (got) {
		xsk_ring_prod__submit(&s->tx, got);
		s->in_tx += got;
		p->st.tx += got;
		kick_tx(p, s);
	}
	p->st.tx_busy += n - got;
	return got;
}

int xsk_port_poll(struct xsk_port *p, int timeout_ms)
{
	struct pollfd pfd[XSK_PORT_MAX_SOCKS];
	int r;

	xsk_port_service(p);
	for (int i = 0; i < p->nsocks; i++) {
		pfd[i].fd = xsk_socket__fd(p->socks[i].xsk);
		pfd[i].events = POLLIN;
		pfd[i].revents = 0;
	}
	r = poll(pfd, (nfds_t)p->nsocks, timeout_ms);
	return r < 0 ? -errno : r;
}

void xsk_kstats_add(int fd, struct xsk_kstats *st)
{
	struct xdp_statistics ks = { 0 };
	socklen_t len = sizeof(ks);

	if (getsockopt(fd, SOL_XDP, XDP_STATISTICS, &ks, &len))
		return;
	st->rx_dropped += ks.rx_dropped;
	st->rx_invalid += ks.rx_invalid_descs;
	st->tx_invalid += ks.tx_invalid_descs;
	st->rx_ring_full += ks.rx_ring_full;
	st->fill_empty += ks.rx_fill_ring_empty_descs;
}

void xsk_port_get_stats(const struct xsk_port *p, struct xsk_port_stats *st)
{
	struct xsk_kstats k = { 0 };

	*st = p->st;
	for (int i = 0; i < p->nsocks; i++)
		xsk_kstats_add(xsk_socket__fd(p->socks[i].xsk), &k);
	st->rx_dropped += k.rx_dropped;
	st->rx_invalid += k.rx_invalid;
	st->tx_invalid += k.tx_invalid;
	st->rx_ring_full += k.rx_ring_full;
	st->fill_empty += k.fill_empty;
}

unsigned xsk_dev_queues(const char *dev, unsigned max)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr = { 0 };
	unsigned n = 1;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = (void *)&ch;
	if (!ioctl(fd, SIOCETHTOOL, &ifr)) {
		n = ch.rx_count > ch.combined_count ? ch.rx_count : ch.combined_count;
		if (!n)
			n = 1;
	}
	close(fd);
	return n > max ? max : n;
}
