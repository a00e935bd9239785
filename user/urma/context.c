// SPDX-License-Identifier: BSD-2-Clause
/*
 * urma_init, contexts, and the port behind them: the UBoE (or native UB)
 * endpoint of one device in this process (ep.h: the transport core over
 * AF_XDP behind the endpoint XDP program, attached by a BPF link that goes
 * with the process however it ends), shared by every context this process
 * makes on the device, with a progress thread of its own.
 *
 * One process owns a device's endpoint: a second process on the same
 * device finds the XDP program of the first attached, and its
 * urma_create_context() fails (errno EBUSY) with one line logged.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "endpoint/ep_xdp.h"
#include "lib/parse_num.h"
#include "ub_wire.h"
#include "urma/urma_int.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_init;
static uint32_t g_uasid;
static struct ubx_devport *g_devs;
static int g_nctx;

/* ---- logging ------------------------------------------------------------- */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static urma_log_cb_t log_cb;
static int log_level = -1;

static int level_now(void)
{
	if (log_level < 0) {
		const char *e = getenv("UBXDP_URMA_LOG");

		log_level = e && *e >= '0' && *e <= '7' ? *e - '0' : URMA_VLOG_LEVEL_WARNING;
	}
	return log_level;
}

void ubx_log(int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (level > level_now())
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	if (log_cb)
		log_cb(level, msg);
	else
		fprintf(stderr, "liburma(ubxdp): %s\n", msg);
	pthread_mutex_unlock(&log_lock);
}

UBX_VISIBLE urma_status_t urma_register_log_func(urma_log_cb_t func)
{
	if (!func)
		return URMA_EINVAL;
	pthread_mutex_lock(&log_lock);
	log_cb = func;
	pthread_mutex_unlock(&log_lock);
	return URMA_SUCCESS;
}

UBX_VISIBLE urma_status_t urma_unregister_log_func(void)
{
	pthread_mutex_lock(&log_lock);
	log_cb = NULL;
	pthread_mutex_unlock(&log_lock);
	return URMA_SUCCESS;
}

UBX_VISIBLE urma_vlog_level_t urma_log_get_level(void)
{
	return (urma_vlog_level_t)level_now();
}

UBX_VISIBLE void urma_log_set_level(urma_vlog_level_t level)
{
	if ((int)level >= 0 && level < URMA_VLOG_LEVEL_MAX)
		log_level = (int)level;
}

/* ---- init ------------------------------------------------------------------- */

bool ubx_initialized(void)
{
	bool r;

	pthread_mutex_lock(&g_lock);
	r = g_init;
	pthread_mutex_unlock(&g_lock);
	return r;
}

uint32_t ubx_uasid(void) { return g_uasid; }

UBX_VISIBLE urma_status_t urma_init(urma_init_attr_t *conf)
{
	uint32_t uasid = conf ? conf->uasid : 0;

	if (uasid > 0xffffff)
		return URMA_EINVAL;	/* 24 bits in UB */
	pthread_mutex_lock(&g_lock);
	if (g_init) {
		/* Again: the UASID stays (another value cannot be taken now). */
		int rc = uasid && uasid != g_uasid ? URMA_EEXIST : URMA_SUCCESS;

		pthread_mutex_unlock(&g_lock);
		return rc;
	}
	if (!uasid) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		uasid = (uint32_t)(((uint64_t)getpid() * 2654435761u) ^ (uint64_t)ts.tv_nsec) & 0xffffff;
		if (!uasid)
			uasid = 1;
	}
	g_uasid = uasid;
	g_init = true;
	pthread_mutex_unlock(&g_lock);
	return URMA_SUCCESS;
}

UBX_VISIBLE urma_status_t urma_uninit(void)
{
	int nctx;

	pthread_mutex_lock(&g_lock);
	if (!g_init) {
		pthread_mutex_unlock(&g_lock);
		return URMA_EINVAL;
	}
	g_init = false;
	nctx = g_nctx;
	pthread_mutex_unlock(&g_lock);
	/* Device objects stay while contexts use them (an application bug,
	 * but not a crash). */
	if (!nctx)
		ubx_devs_free();
	return URMA_SUCCESS;
}

/* ---- configuration from the environment ------------------------------------ */

static bool in_list(const char *l, const char *name)
{
	if (l && (!strcmp(l, "all") || !strcmp(l, "1")))
		return true;
	return ubx_name_in_list(l, name);
}

bool ubx_dev_native(const char *ifname)
{
	return in_list(getenv("UBXDP_URMA_NATIVE"), ifname);
}

uint32_t ubx_port_timeout_ms(void)
{
	const char *e = getenv("UBXDP_URMA_TIMEOUT_MS");
	long v = e ? strtol(e, NULL, 10) : 0;

	return v > 0 && v < 3600000 ? (uint32_t)v : UBX_TIMEOUT_MS;
}

/* UBXDP_URMA_TEST_DOOMED_MS, a test's hook (docs/TESTING.md): ms, 1..10000,
 * the thread woken from a destroyed channel's setup waits before it frees
 * it; anything else is none. */
static uint32_t test_doomed_ms(void)
{
	const char *e = getenv("UBXDP_URMA_TEST_DOOMED_MS");
	long v = e ? strtol(e, NULL, 10) : 0;

	return v > 0 && v <= 10000 ? (uint32_t)v : 0;
}

/* Native UB port settings: partition and permission (draft-li-uboe-00 §5.3). */
static int native_cfg(struct ubx_port *p)
{
	const char *pid = getenv("UBXDP_URMA_PARTITION"), *perm = getenv("UBXDP_URMA_PERM");

	ep_native_init(&p->nat);
	if (pid && *pid) {
		unsigned long v;

		if (parse_uint(pid, (size_t)-1, 0xffffff, &v) || v == 0) {
			ubx_err("UBXDP_URMA_PARTITION=%s: a Partition ID is 1 .. 16777215", pid);
			return -EINVAL;
		}
		p->nat.pid = (uint32_t)v;
	}
	if (perm && *perm) {
		if (!strcmp(perm, "low"))
			p->nat.perm = UB_PERM_LOW;
		else if (!strcmp(perm, "high"))
			p->nat.perm = UB_PERM_HIGH;
		else {
			ubx_err("UBXDP_URMA_PERM=%s: high or low", perm);
			return -EINVAL;
		}
	}
	return 0;
}

static int rtx_cfg(struct ubx_port *p)
{
	const char *m = getenv("UBXDP_URMA_RTX"), *sp = getenv("UBXDP_URMA_SPAN");
	unsigned long v;

	p->rtx = TP_MODE_RTP_SR;
	/* SR past a hole as ubperf's rtp-sr: a quarter window, the round
	 * trip a repair costs (docs/TRANSPORT.md) */
	p->span = TP_WINDOW_DEFAULT + TP_WINDOW_DEFAULT / 4;
	if (sp && *sp) {
		if (parse_uint(sp, (size_t)-1, TP_SPAN_MAX, &v)) {
			ubx_err("UBXDP_URMA_SPAN=%s: packets past the oldest unacknowledged one, 0 .. %u",
				sp, TP_SPAN_MAX);
			return -EINVAL;
		}
		p->span = (uint32_t)v;
	}
	if (!m || !*m)
		return 0;
	if (tp_mode_parse(m, &p->rtx) || (p->rtx != TP_MODE_RTP_SR && p->rtx != TP_MODE_RTP_GBN &&
					  p->rtx != TP_MODE_RTP_GBN_FAST)) {
		ubx_err("UBXDP_URMA_RTX=%s: rtp-sr, rtp-gbn or rtp-gbn-fast", m);
		return -EINVAL;
	}
	return 0;
}

/* ---- ports --------------------------------------------------------------------- */

uint64_t ubx_rand(struct ubx_port *p)
{
	/* xorshift64*: hello nonces, not secrets */
	p->rng ^= p->rng >> 12;
	p->rng ^= p->rng << 25;
	p->rng ^= p->rng >> 27;
	return p->rng * 2685821657736338717ull;
}

void ubx_port_kick(struct ubx_port *p)
{
	uint64_t one = 1;

	if (write(p->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: a wake-up is pending anyway */
	}
}

static void stats_dump(struct ubx_port *p)
{
	const char *path = getenv("UBXDP_URMA_STATS");
	struct tp_stats ts;
	struct ep_stats es;
	FILE *f;

	if (!path || !*path)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	tp_ep_stats(p->tp, &ts);
	ep_get_stats(p->ep, &es);
	fprintf(f, "{\"dev\": \"%s\", \"pid\": %d, \"uasid\": %u, \"worker\": %u, \"workers\": %u",
		p->ifname, (int)getpid(), g_uasid, p->widx, p->dp->n);
	fprintf(f, ", \"rx_frames\": %" PRIu64 ", \"tx_frames\": %" PRIu64, es.rx_frames, es.tx_frames);
	/* What the kernel dropped before the endpoint saw it: an empty fill
	 * ring (once per queue, in the worker that made its pool), a full rx ring. */
	fprintf(f, ", \"ep_xsk_rx_dropped\": %" PRIu64 ", \"ep_xsk_rx_ring_full\": %" PRIu64
		", \"ep_xsk_fill_empty\": %" PRIu64, es.xsk_rx_dropped, es.xsk_rx_ring_full, es.xsk_fill_empty);
	/* Jumbo frames: packets in several UMEM frames, and the UB MTU the
	 * port offers (IPv4; each channel's is what its two ends agree). */
	fprintf(f, ", \"ep_rx_multi_buffer\": %" PRIu64 ", \"ep_tx_multi_buffer\": %" PRIu64
		", \"ub_mtu\": %u", es.rx_multi_buffer, es.tx_multi_buffer, p->mtu[0]);
	{
		uint64_t xc[UB_EP_CNT__MAX], lt, lf;
		bool direct;
		uint32_t slot = ep_shared_slot(p->ep, &direct);

		ep_loop_stats(p->ep, &lt, &lf);
		fprintf(f, ", \"slot\": %u, \"direct\": %d, \"loop_tx\": %" PRIu64
			", \"loop_fail\": %" PRIu64, slot, direct, lt, lf);
		/* The device program's: every process's frames, and those for none. */
		if (!ep_xdp_counters(p->ep, xc))
			for (unsigned i = 0; i < UB_EP_CNT__MAX; i++)
				fprintf(f, ", \"xdp_%s\": %" PRIu64, ep_xdp_counter_name(i), xc[i]);
	}
#define EPS(n, d) fprintf(f, ", \"ep_%s\": %" PRIu64, #n, es.n);
	EP_RX_ERRORS(EPS)
#undef EPS
	for (size_t i = 0; i < tp_stats_count(); i++)
		fprintf(f, ", \"tp_%s\": %" PRIu64, tp_stats_name(i), tp_stats_get(&ts, i));
	fprintf(f, ", \"jfc_overflow\": %" PRIu64 ", \"rnr_sent\": %" PRIu64
		", \"recv_len_err\": %" PRIu64 ", \"um_dropped\": %" PRIu64
		", \"setup_refused\": %" PRIu64 ", \"token_refused\": %" PRIu64
		", \"ctl_bad\": %" PRIu64 ", \"imm_late\": %" PRIu64 ", \"thread_rounds\": %" PRIu64
		", \"thread_aside\": %" PRIu64 ", \"mtu_crossed\": %" PRIu64 ", \"mtu_path_shrank\": %" PRIu64
		", \"jfr_shared\": %" PRIu64 "}\n",
		p->jfc_overflow, p->rnr_sent, p->recv_len_err, p->um_dropped, p->setup_refused,
		p->token_refused, p->ctl_bad, p->imm_late, p->thr_rounds, p->thr_idle, p->mtu_crossed,
		p->mtu_path_shrank, p->jfr_shared);
	fclose(f);
}

/* The progress thread gone (nothing runs the port after). */
static void port_stop(struct ubx_port *p)
{
	if (!p->thr_started)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_mutex_unlock(&p->lock);
	ubx_port_kick(p);
	pthread_join(p->thr, NULL);
	p->thr_started = false;
}

/* Its channels closed (the peers told), its counters written. */
static void port_drain(struct ubx_port *p)
{
	if (!p->ep)
		return;
	pthread_mutex_lock(&p->lock);
	while (p->chans)
		ubx_chan_destroy(p->chans, true);
	ubx_progress(p);	/* the CLOSE hellos leave */
	stats_dump(p);
	pthread_mutex_unlock(&p->lock);
	if (p->ctl)
		tp_chan_destroy(p->ctl);
	p->ctl = NULL;
}

static void port_free(struct ubx_port *p)
{
	if (!p)
		return;
	while (p->peers) {
		struct ubx_peer *n = p->peers->next;

		free(p->peers);
		p->peers = n;
	}
	for (uint32_t i = 0; i < p->nwrs; i++) {
		if (p->wrs[i])
			free(p->wrs[i]->buf);
		free(p->wrs[i]);
	}
	free(p->wrs);
	free(p->wr_free);
	if (p->wake_fd >= 0)
		close(p->wake_fd);
	wake_timer_close(&p->wt);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&p->mb_lock);
	free(p);
}

/* Every port's thread first: a round of one may hand a hello to another. */
static void devport_free(struct ubx_devport *d)
{
	for (uint32_t w = 0; w < d->n; w++)
		if (d->lane[w])
			port_stop(d->lane[w]);
	for (uint32_t w = 0; w < d->n; w++)
		if (d->lane[w])
			port_drain(d->lane[w]);
	ep_close(d->ep);
	for (uint32_t w = 0; w < d->n; w++)
		port_free(d->lane[w]);
	free(d->ids);
	pthread_mutex_destroy(&d->id_lock);
	free(d);
}

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

/* UBXDP_URMA_WORKERS, or as many as the device can keep busy (ubperf's
 * default); one on a native port (CTP is steered to worker 0 alone).
 * 0 when the variable is wrong (logged). */
static uint32_t workers_cfg(const char *ifname, bool native)
{
	const char *v = getenv("UBXDP_URMA_WORKERS");
	unsigned long n;

	if (!v || !*v)
		return native ? 1 : ep_workers_for(ifname);
	if (parse_uint(v, (size_t)-1, UB_EP_MAX_WORKERS, &n) || !n) {
		ubx_err("UBXDP_URMA_WORKERS=%s: 1 .. %d", v, UB_EP_MAX_WORKERS);
		return 0;
	}
	if (native && n > 1) {
		ubx_warn("device %s: a native UB port runs one worker (CTP reaches worker 0 alone)",
			 ifname);
		return 1;
	}
	return (uint32_t)n;
}

static struct ep *open_ep(struct ubx_port *p, uint32_t workers, bool generic, char *err, size_t errlen)
{
	struct ep_config ec = { 0 };

	ec.dev = p->ifname;
	ec.generic = generic;
	ec.nframes = 4096;
	ec.rx_batch = UBX_RX_BATCH;
	ec.workers = workers;
	if (p->native) {
		ec.native = p->nat;
		ec.npi_check = true;
	}
	ec.tp.seed = ((uint64_t)getpid() << 32) ^ ep_now_ns();
	ec.tp.max_chans = UBX_MAX_CHANS + 1;
	ec.tp.max_mrs = UBX_MAX_SEGS;	/* TokenIDs and token values: getrandom() */
	/* Other processes may use the device too (docs/URMA.md). */
	ec.shared = true;
	ec.share_no_direct = env_on("UBXDP_URMA_VETH");
	return ep_open(&ec, err, errlen);
}

/* A port's own state, before its worker's endpoint. */
static struct ubx_port *port_new(struct ubx_devport *d, uint32_t w)
{
	struct ubx_port *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	d->lane[w] = p;
	p->dp = d;
	p->widx = w;
	p->wake_fd = -1;
	p->wt.fd = -1;
	snprintf(p->ifname, sizeof(p->ifname), "%s", d->ifname);
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->mb_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	p->rng = ((uint64_t)getpid() << 32) ^ ep_now_ns() ^ (uintptr_t)p;
	p->native = ubx_dev_native(d->ifname);
	p->test_doomed_ms = test_doomed_ms();
	if ((p->native && native_cfg(p)) || rtx_cfg(p)) {
		errno = EINVAL;
		return NULL;
	}
	p->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->wake_fd < 0)
		return NULL;
	wake_timer_open(&p->wt);	/* without one, urma_wait_jfc sleeps with poll timeouts */
	return p;
}

/* Port p on its worker's endpoint: its hello channel, MTU, thread. */
static int port_start(struct ubx_port *p)
{
	struct tp_chan_config cc = { .mode = TP_MODE_UTP };

	p->ep = ep_worker(p->dp->ep, p->widx);
	p->tp = ep_tp(p->ep);
	p->ctl = ep_tp_chan_create(p->ep, &cc);
	if (!p->ctl) {
		ubx_err("device %s: transport core: %s", p->ifname, strerror(errno));
		return -1;
	}
	p->mtu[0] = ep_ub_mtu_max(p->ep, 4, NULL, NULL);
	p->mtu[1] = ep_ub_mtu_max(p->ep, 6, NULL, NULL);
	if (!p->mtu[0] && !p->mtu[1]) {
		ubx_err("device %s: its MTU carries no UB MTU with the %s headers", p->ifname,
			p->native ? "native UB" : "UBoE");
		errno = EMSGSIZE;
		return -1;
	}
	ep_set_ctl(p->ep, ubx_ctl_rx, p);
	if (pthread_create(&p->thr, NULL, ubx_progress_thread, p)) {
		ubx_err("device %s: cannot start the progress thread", p->ifname);
		errno = EAGAIN;
		return -1;
	}
	p->thr_started = true;
	return 0;
}

static struct ubx_devport *devport_open(const char *ifname)
{
	struct ubx_devport *d = calloc(1, sizeof(*d));
	const char *g = getenv("UBXDP_URMA_GENERIC");
	struct ubx_port *p0;
	uint32_t workers;
	char err[256];
	int rc;

	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	snprintf(d->ifname, sizeof(d->ifname), "%s", ifname);
	pthread_mutex_init(&d->id_lock, NULL);
	d->next_id = UBX_ID_RESERVED_MAX + 1;
	d->n = 1;
	p0 = port_new(d, 0);
	if (!p0)
		goto fail;
	workers = workers_cfg(ifname, p0->native);
	if (!workers) {
		errno = EINVAL;
		goto fail;
	}
	d->ep = open_ep(p0, workers, g && !strcmp(g, "1"), err, sizeof(err));
	if (!d->ep) {
		int e = errno;

		if (e == EBUSY)
			ubx_err("device %s: another program's XDP is attached to it (%s)", ifname, err);
		else
			ubx_err("device %s: %s", ifname, err);
		errno = e == EBUSY || e == EUSERS || e == EPROTO ? e : e == EINPROGRESS ? EBUSY : ENODEV;
		goto fail;
	}
	rc = ep_share_set_uasid(d->ep, g_uasid);
	if (rc) {
		ubx_err("device %s: UASID %u is another live process's on it", ifname, g_uasid);
		errno = -rc;
		goto fail;
	}
	for (uint32_t w = 1; w < workers; w++) {
		d->n = w + 1;	/* freed with the others, whatever comes */
		if (!port_new(d, w))
			goto fail;
	}
	for (uint32_t w = 0; w < workers; w++)
		if (port_start(d->lane[w]))
			goto fail;
	{
		bool direct;
		uint32_t slot = ep_shared_slot(d->ep, &direct);

		ubx_info("device %s: endpoint open (%s), slot %u, %s, %u worker%s", ifname,
			 p0->native ? "native UB" : "UBoE", slot,
			 direct ? "the device's queues" : "a veth of its own", workers,
			 workers == 1 ? "" : "s");
	}
	return d;
fail:
	{
		int e = errno;

		devport_free(d);
		errno = e;
	}
	return NULL;
}

struct ubx_port *ubx_port_get(const char *ifname)
{
	struct ubx_devport *d;
	struct ubx_port *p = NULL;

	pthread_mutex_lock(&g_lock);
	for (d = g_devs; d; d = d->next)
		if (!strcmp(d->ifname, ifname))
			break;
	if (!d) {
		d = devport_open(ifname);
		if (d) {
			d->next = g_devs;
			g_devs = d;
		}
	}
	if (d) {
		/* The port with the fewest contexts: a context per thread
		 * spreads the application's jetties over the workers. */
		for (uint32_t w = 0; w < d->n; w++)
			if (!p || d->lane[w]->refs < p->refs)
				p = d->lane[w];
		p->refs++;
		d->refs++;
	}
	pthread_mutex_unlock(&g_lock);
	return p;
}

/* Is ifname's port open in this process? *m its UB MTU then. */
static bool open_dev_ub_mtu(const char *ifname, uint32_t *m)
{
	bool found = false;

	pthread_mutex_lock(&g_lock);
	for (struct ubx_devport *d = g_devs; d && !found; d = d->next)
		if (!strcmp(d->ifname, ifname)) {
			*m = d->lane[0]->mtu[0];
			found = true;
		}
	pthread_mutex_unlock(&g_lock);
	return found;
}

uint32_t ubx_dev_ub_mtu(const char *ifname, uint32_t dev_mtu, bool native)
{
	uint32_t m;

	/* Open here: the path this process took (the queues or its veth) is
	 * for its life. Else the one its opening would take now, peeked
	 * outside g_lock (every context call here would wait with it), under
	 * the device's lock for 100 ms at most: another process opening the
	 * device (which will likely take the queues) or closing it holds it
	 * longer, and the veth's is said then, the smaller MTU, safe either
	 * way. Opened meanwhile: what it took. */
	if (open_dev_ub_mtu(ifname, &m))
		return m;
	m = ep_shared_ub_mtu(ifname, dev_mtu, native, env_on("UBXDP_URMA_VETH"), 4);
	open_dev_ub_mtu(ifname, &m);
	return m;
}

void ubx_port_put(struct ubx_port *p)
{
	struct ubx_devport *d = p->dp, **dd;

	pthread_mutex_lock(&g_lock);
	p->refs--;
	if (--d->refs > 0) {
		pthread_mutex_unlock(&g_lock);
		return;
	}
	for (dd = &g_devs; *dd; dd = &(*dd)->next)
		if (*dd == d) {
			*dd = d->next;
			break;
		}
	pthread_mutex_unlock(&g_lock);
	devport_free(d);
}

/* ---- contexts ------------------------------------------------------------------ */

struct ubx_ctx *ubx_ctx_of(const urma_context_t *c)
{
	struct ubx_ctx *x = (struct ubx_ctx *)c;

	return x && x->magic == UBX_M_CTX ? x : NULL;
}

UBX_VISIBLE urma_context_t *urma_create_context(urma_device_t *dev, uint32_t eid_index)
{
	struct ubx_dev *d = ubx_dev_of(dev);
	struct ubx_ctx *c;
	struct ubx_eids e;

	if (!d || !ubx_initialized()) {
		errno = EINVAL;
		return NULL;
	}
	if (ubx_dev_eids(d->ifname, &e) || eid_index >= e.n) {
		ubx_err("device %s has no EID of index %u", d->ifname, eid_index);
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->port = ubx_port_get(d->ifname);
	if (!c->port) {
		int err = errno;

		free(c);
		errno = err;
		return NULL;
	}
	c->magic = UBX_M_CTX;
	c->dev = d;
	c->ip_ver = ubx_eid_to_ip(&e.eid[eid_index], c->ip);
	c->pub.dev = &d->pub;
	c->pub.dev_fd = -1;
	c->pub.async_fd = -1;
	pthread_mutex_init(&c->pub.mutex, NULL);
	c->pub.eid = e.eid[eid_index];
	c->pub.eid_index = eid_index;
	c->pub.uasid = g_uasid;
	atomic_init(&c->pub.ref.atomic_cnt, 1);
	c->pub.aggr_mode = URMA_AGGR_MODE_STANDALONE;
	pthread_mutex_lock(&g_lock);
	g_nctx++;
	pthread_mutex_unlock(&g_lock);
	return &c->pub;
}

UBX_VISIBLE urma_status_t urma_delete_context(urma_context_t *ctx)
{
	struct ubx_ctx *c = ubx_ctx_of(ctx);
	bool last;

	if (!c)
		return URMA_EINVAL;
	pthread_mutex_lock(&c->port->lock);
	if (ubx_cnt_get(&c->nobj)) {
		pthread_mutex_unlock(&c->port->lock);
		ubx_err("urma_delete_context: %d objects (JFCE, JFC, JFS, JFR, jetty, segment, "
			"import) of the context remain", ubx_cnt_get(&c->nobj));
		return URMA_EINVAL;
	}
	pthread_mutex_unlock(&c->port->lock);
	ubx_port_put(c->port);
	pthread_mutex_destroy(&c->pub.mutex);
	c->magic = UBX_M_DEAD;
	free(c);
	pthread_mutex_lock(&g_lock);
	last = --g_nctx == 0 && !g_init;
	pthread_mutex_unlock(&g_lock);
	if (last)
		ubx_devs_free();
	return URMA_SUCCESS;
}
