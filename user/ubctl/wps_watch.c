// SPDX-License-Identifier: BSD-2-Clause
/*
 * ubctl wps ingress watch --dev DEV: the WPS ingress's agent, in the
 * foreground (the systemd unit ubxdp-wps-ingress-watch@DEV runs it). It keeps
 * the instance's member paths live:
 *
 *  - link: a path whose device is down or has lost its carrier is out of
 *    rotation (live.link_down) at the rtnetlink event (RTNLGRP_LINK), and
 *    back when it is up again;
 *  - next hop (path add --nexthop ADDR): its MAC comes from the kernel's
 *    neighbour table and follows it (RTNLGRP_NEIGH); the kernel is asked to
 *    probe it whenever it has not confirmed for --probe, so a next hop
 *    that stops answering is out of rotation (live.neigh_down) --dead
 *    after its last answer, once a question has waited --dead minus
 *    --probe for its answer (an agent scheduled late asks before it
 *    judges), and back when it answers again.
 *
 *  - path MTU: an ICMPv6 Packet Too Big from the WAN about a packet the
 *    ingress sent lowers the MTU of the path its group went on (the flow's
 *    record of its groups' paths; else the paths of the device it came in
 *    on; else all) in live.slot_pmtu, and the program's limit
 *    (live.pmtu, their smallest); it is relayed to the inner packet's sender
 *    as the ICMP of its family (RFC 2473 §7.1: IPv4 with DF, Fragmentation
 *    Needed; IPv6, Packet Too Big; MTU less 56), at most --relay-rate a
 *    second (bursts of as many). A learned MTU is forgotten after
 *    --pmtu-expire-s (600, RFC 8201's ten minutes), so a path that grew again
 *    is used whole.
 *
 * Every --tick-ms, and at once on an rtnetlink event, each path in use is
 * looked at again (paths added or deleted meanwhile included). The looks at
 * events leave the ticks where they were (wps_look_due), and a next hop's
 * silence is counted up to the ticks (wps_nh_look). The agent
 * writes only its own words of the live map; on SIGINT/SIGTERM it clears
 * them (without it, only the operator's up/down counts).
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP	(1 << 16)	/* carrier (linux/if.h, which clashes with net/if.h) */
#endif
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <netinet/icmp6.h>

#include <bpf/bpf.h>

#include "io/nl.h"
#include "lib/parse_num.h"
#include "wps/wps_cfg.h"
#include "wps/wps_live.h"
#include "wps/wps_pins.h"
#include "ubctl/ubctl.h"

/* ---- rtnetlink ----------------------------------------------------------------- */

/* Device ifindex: up (IFF_UP) with its carrier (IFF_LOWER_UP); its MAC. -1 when it is gone. */
static int link_get(struct nl *rt, unsigned ifindex, bool *up, __u8 mac[6])
{
	struct nl_link l;

	if (nl_link_get(rt, (int)ifindex, NULL, &l))
		return -1;
	*up = (l.flags & IFF_UP) && (l.flags & IFF_LOWER_UP);
	if (l.addr_len == 6)
		memcpy(mac, l.addr, 6);
	return 0;
}

static int af_of(unsigned char family)
{
	return family == 4 ? AF_INET : AF_INET6;
}

/* The address of a next hop as the kernel takes it: IPv4 in its last 4 bytes. */
static const unsigned char *nh_addr(unsigned char family, const unsigned char *addr)
{
	return family == 4 ? addr + 12 : addr;
}

/* The kernel's neighbour entry for addr (IPv4 in its last 4 bytes) on ifindex. */
int wps_neigh_get(struct nl *rt, unsigned char family, unsigned ifindex, const unsigned char *addr,
		  struct wps_nh_seen *s)
{
	struct nl_neigh n;
	int rc = nl_neigh_get(rt, af_of(family), (int)ifindex, nh_addr(family, addr), &n);

	memset(s, 0, sizeof(*s));
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return -1;
	s->present = true;
	s->state = n.state;
	s->confirmed_ago_ms = n.confirmed_ms;
	s->has_lladdr = n.has_lladdr;
	memcpy(s->lladdr, n.lladdr, 6);
	return 0;
}

/* Ask the kernel about the neighbour: a unicast probe now (state PROBE), or resolution (NTF_USE). */
int wps_neigh_ask(struct nl *rt, unsigned char family, unsigned ifindex, const unsigned char *addr, int act)
{
	const int af = af_of(family);
	const unsigned char *a = nh_addr(family, addr);
	int rc;

	if (act == WPS_NH_NONE)
		return 0;
	if (act == WPS_NH_RESOLVE)
		return nl_neigh_probe(rt, af, (int)ifindex, a);
	/* PROBE again is no change: the kernel asks once more only on entering it. */
	if (act == WPS_NH_REPROBE && (rc = nl_neigh_set_state(rt, af, (int)ifindex, a, NUD_STALE)))
		return rc;
	return nl_neigh_set_state(rt, af, (int)ifindex, a, NUD_PROBE);
}

/* ---- the agent ------------------------------------------------------------------- */

struct slot_watch {
	bool known;			/* seen in use at the last look */
	bool link_up;
	struct wps_nh_track nh;		/* its next hop's */
	__u64 pmtu_at_ms;		/* when live.slot_pmtu was learned (0: not) */
	struct wps_in_path p;		/* as last written or read */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static __u64 mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

/*
 * What a look found is said only once the live map holds it: a reader that
 * acts on "down" (an operator, a test) then finds the path out of rotation.
 * At most a few lines a path a look.
 */
static struct said {
	__u32 slot, ifindex;
	char what[160];
} said[WPS_IN_MAX_PATHS * 4];
static unsigned nsaid;

static void say(__u32 slot, const struct wps_in_path *p, const char *what)
{
	if (nsaid < sizeof(said) / sizeof(said[0])) {
		said[nsaid].slot = slot;
		said[nsaid].ifindex = p->ifindex;
		snprintf(said[nsaid].what, sizeof(said[nsaid].what), "%s", what);
		nsaid++;
	}
}

static void say_now(void)
{
	char name[IF_NAMESIZE];

	for (unsigned i = 0; i < nsaid; i++) {
		if (!if_indextoname(said[i].ifindex, name))
			snprintf(name, sizeof(name), "ifindex %u", said[i].ifindex);
		printf("path %u via %s: %s\n", said[i].slot, name, said[i].what);
	}
	nsaid = 0;
	fflush(stdout);
}

/* Look at every path in use once: link, next hop; the live map's words and the paths' MACs. */
static int look(struct nl *rt, int cfg_fd, int paths_fd, struct wps_in_live *lv, struct slot_watch *w,
		unsigned probe_ms, unsigned dead_ms, unsigned expire_s, const struct wps_nh_when *when)
{
	__u16 pmtu = 0;
	struct wps_in_cfg cfg;
	__u32 zero = 0, link_down = 0, neigh_down = 0, in_use = 0;
	__u64 now = mono_ms();

	if (bpf_map_lookup_elem(cfg_fd, &zero, &cfg) || cfg.version != WPS_IN_CFG_VERSION)
		return -1;
	for (__u32 i = 0; i < cfg.npaths && i < WPS_IN_MAX_PATHS; i++) {
		__u32 k = cfg.path_slot[i] & (WPS_IN_MAX_PATHS - 1);
		struct slot_watch *s = &w[k];
		struct wps_in_path p;
		__u8 mac[6] = { 0 };
		bool up = false, write = false;

		if (bpf_map_lookup_elem(paths_fd, &k, &p) || !p.ifindex)
			continue;
		in_use |= 1u << k;
		if (!s->known || s->p.ifindex != p.ifindex || memcmp(s->p.nexthop, p.nexthop, 16)) {
			memset(s, 0, sizeof(*s));
			s->known = s->link_up = s->nh.up = true;
		}
		if (link_get(rt, p.ifindex, &up, mac))
			up = false;	/* the device is gone */
		if (up != s->link_up)
			say(k, &p, up ? "link up" : "down (link: device down or no carrier)");
		s->link_up = up;
		if (up && memcmp(mac, "\0\0\0\0\0\0", 6) && memcmp(mac, p.smac, 6)) {
			memcpy(p.smac, mac, 6);	/* the device's own MAC changed */
			write = true;
		}
		if ((p.flags & WPS_PATH_F_NEXTHOP) && up) {
			/* (Without its link, the next hop is not asked: the kernel flushed it.) */
			struct wps_nh_seen seen;
			const bool was_up = s->nh.up;
			enum wps_nh_act act;
			struct wps_nh_when at = *when;

			/* Before the reading: a stall after the kernel's reply must not
			 * date its confirmation later than it was (wps_nh_look). */
			at.t0_ms = mono_ms();
			if (wps_neigh_get(rt, p.nh_family, p.ifindex, p.nexthop, &seen))
				memset(&seen, 0, sizeof(seen));
			at.t_ms = mono_ms();
			act = wps_nh_look(&s->nh, &seen, p.dmac, &at, probe_ms, dead_ms);
			if (s->nh.up != was_up)
				say(k, &p, s->nh.up ? "next hop up" : "down (next hop does not answer)");
			if (s->nh.up && memcmp(seen.lladdr, p.dmac, 6)) {
				char m[40];

				memcpy(p.dmac, seen.lladdr, 6);
				write = true;
				snprintf(m, sizeof(m), "next hop at %02x:%02x:%02x:%02x:%02x:%02x", p.dmac[0], p.dmac[1],
					 p.dmac[2], p.dmac[3], p.dmac[4], p.dmac[5]);
				say(k, &p, m);
			}
			if (act != WPS_NH_NONE)
				wps_neigh_ask(rt, p.nh_family, p.ifindex, p.nexthop, act);
		}
		if ((p.flags & WPS_PATH_F_NEXTHOP) && !s->nh.up)
			neigh_down |= 1u << k;
		if (!up) {
			link_down |= 1u << k;
			s->nh.up = false;	/* the kernel flushes its neighbours: resolved afresh when up */
		}
		if (write) {
			/* Read again just before: a path del or add meanwhile is not undone. */
			struct wps_in_path cur;

			if (!bpf_map_lookup_elem(paths_fd, &k, &cur) && cur.ifindex == p.ifindex &&
			    !memcmp(cur.nexthop, p.nexthop, 16) && cur.flags == p.flags) {
				memcpy(cur.dmac, p.dmac, 6);
				memcpy(cur.smac, p.smac, 6);
				bpf_map_update_elem(paths_fd, &k, &cur, BPF_ANY);
			}
		}
		s->p = p;
		/* A learned path MTU: forgotten after expire_s (one found at start counts from then). */
		{
			__u16 m = __atomic_load_n(&lv->slot_pmtu[k], __ATOMIC_SEQ_CST);

			if (m && !s->pmtu_at_ms)
				s->pmtu_at_ms = now;
			if (m && now - s->pmtu_at_ms >= (__u64)expire_s * 1000) {
				__atomic_store_n(&lv->slot_pmtu[k], 0, __ATOMIC_SEQ_CST);
				say(k, &p, "learned path MTU forgotten (expired)");
				m = 0;
			}
			if (!m)
				s->pmtu_at_ms = 0;
			else if (!pmtu || m < pmtu)
				pmtu = m;
		}
	}
	for (__u32 k = 0; k < WPS_IN_MAX_PATHS; k++)
		if (!(in_use >> k & 1))
			w[k].known = false;
	__atomic_store_n(&lv->link_down, link_down, __ATOMIC_SEQ_CST);
	__atomic_store_n(&lv->neigh_down, neigh_down, __ATOMIC_SEQ_CST);
	if (!cfg.ecmp)
		__atomic_store_n(&lv->pmtu, pmtu, __ATOMIC_SEQ_CST);
	say_now();
	return 0;
}

/* ---- Packet Too Big ----------------------------------------------------------------- */

struct ptb_ctx {
	int icmp6, raw4, cfg_fd, paths_fd, flows_fd, state_fd;
	struct wps_in_live *lv;
	struct slot_watch *w;
	unsigned rate, burst;
	struct wps_bucket bucket;
	unsigned long long received, relayed, limited;
};

/* Raw ICMPv6 for Packet Too Big (in, and the relay out), raw IPv4 for the IPv4 relay. */
static int ptb_open(struct ptb_ctx *c)
{
	struct icmp6_filter flt;
	int on = 1;

	c->icmp6 = socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMPV6);
	c->raw4 = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (c->icmp6 < 0 || c->raw4 < 0)
		return -1;
	ICMP6_FILTER_SETBLOCKALL(&flt);
	ICMP6_FILTER_SETPASS(ICMP6_PACKET_TOO_BIG, &flt);
	if (setsockopt(c->icmp6, IPPROTO_ICMPV6, ICMP6_FILTER, &flt, sizeof(flt)) ||
	    setsockopt(c->icmp6, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof(on)))
		return -1;
	return 0;
}

/* The slot of group gid of the flow, from the flow's record of its groups' paths; -1 if gone. */
static int ptb_slot(const struct ptb_ctx *c, const struct wps_ptb *p)
{
	struct wps_in_flow_ref ref;
	struct wps_in_flow f;

	if (bpf_map_lookup_elem(c->flows_fd, &p->key, &ref) || bpf_map_lookup_elem(c->state_fd, &ref.slot, &f) ||
	    f.fid != p->fid || (__u16)(f.gid - p->gid) >= WPS_IN_INFLIGHT_RING)
		return -1;
	return f.gpath[p->gid % WPS_IN_INFLIGHT_RING] & (WPS_IN_MAX_PATHS - 1);
}

static void ptb_relay(struct ptb_ctx *c, const struct wps_in_cfg *cfg, const struct wps_ptb *p, unsigned mtu)
{
	__u8 buf[1400];
	size_t n;

	if (p->family == 4) {
		struct sockaddr_in to = { .sin_family = AF_INET };
		/* As the program's own answers: from --icmp-src4, else from the inner destination. */
		const __u8 *src = cfg->icmp_src4 ? (const __u8 *)&cfg->icmp_src4 : p->inner + 16;

		n = wps_ptb_relay4(p, mtu - WPS_OVERHEAD, src, buf, sizeof(buf));
		if (!n)
			return;		/* DF clear: the ingress fragments from now on, nothing to tell */
		if (!wps_bucket_take(&c->bucket, c->rate, c->burst, mono_ms())) {
			c->limited++;
			return;
		}
		memcpy(&to.sin_addr, p->inner + 12, 4);
		if (sendto(c->raw4, buf, n, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)n)
			c->relayed++;
	} else {
		struct sockaddr_in6 to = { .sin6_family = AF_INET6 };
		char cbuf[CMSG_SPACE(sizeof(struct in6_pktinfo))] = { 0 };
		struct iovec iov;
		struct msghdr m = { .msg_name = &to, .msg_namelen = sizeof(to), .msg_iov = &iov, .msg_iovlen = 1,
				    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
		struct in6_pktinfo *pi = (struct in6_pktinfo *)CMSG_DATA(cm);

		n = wps_ptb_relay6(p, mtu - WPS_OVERHEAD, buf, sizeof(buf));
		if (!n)
			return;
		if (!wps_bucket_take(&c->bucket, c->rate, c->burst, mono_ms())) {
			c->limited++;
			return;
		}
		memcpy(&to.sin6_addr, p->inner + 8, 16);
		cm->cmsg_level = IPPROTO_IPV6;
		cm->cmsg_type = IPV6_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(*pi));
		memcpy(&pi->ipi6_addr, cfg->src, 16);	/* from this node */
		iov.iov_base = buf;
		iov.iov_len = n;
		if (sendmsg(c->icmp6, &m, 0) == (ssize_t)n)
			c->relayed++;
	}
}

/* Every Packet Too Big waiting: the path's MTU lowered, the sender told. */
static void ptb_read(struct ptb_ctx *c)
{
	for (;;) {
		__u8 buf[2048];
		char cbuf[256];
		struct sockaddr_in6 from;
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr m = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1,
				    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;
		struct wps_in_cfg cfg;
		struct wps_ptb p;
		unsigned ifindex = 0, mtu;
		__u32 zero = 0, slots = 0;
		ssize_t n = recvmsg(c->icmp6, &m, 0);
		char from_s[INET6_ADDRSTRLEN];
		int k;

		if (n < 0)
			return;
		if (n < 8 || buf[0] != ICMP6_PACKET_TOO_BIG || bpf_map_lookup_elem(c->cfg_fd, &zero, &cfg) ||
		    wps_ptb_parse(cfg.src, cfg.dst, buf + 8, (size_t)n - 8, &p))
			continue;	/* not about a packet of ours */
		for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
			if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO)
				ifindex = ((struct in6_pktinfo *)CMSG_DATA(cm))->ipi6_ifindex;
		c->received++;
		mtu = (unsigned)buf[4] << 24 | (unsigned)buf[5] << 16 | (unsigned)buf[6] << 8 | buf[7];
		if (mtu < 1280)
			mtu = 1280;	/* IPv6's minimum: a smaller one is not to be believed (RFC 8201) */
		inet_ntop(AF_INET6, &from.sin6_addr, from_s, sizeof(from_s));
		k = cfg.ecmp ? -1 : ptb_slot(c, &p);
		if (k >= 0) {
			slots = 1u << k;
		} else if (!cfg.ecmp) {
			/* The flow's record is gone: the paths of the device it came in on, else all. */
			for (__u32 i = 0; i < cfg.npaths && i < WPS_IN_MAX_PATHS; i++) {
				__u32 s = cfg.path_slot[i] & (WPS_IN_MAX_PATHS - 1);
				struct wps_in_path pa;

				if (!bpf_map_lookup_elem(c->paths_fd, &s, &pa) && pa.ifindex == ifindex)
					slots |= 1u << s;
			}
			if (!slots)
				slots = cfg.path_mask;
		}
		for (__u32 s = 0; s < WPS_IN_MAX_PATHS; s++) {
			struct wps_in_path pa;
			__u16 cur;
			char what[160];

			if (!(slots >> s & 1) || bpf_map_lookup_elem(c->paths_fd, &s, &pa))
				continue;
			cur = __atomic_load_n(&c->lv->slot_pmtu[s], __ATOMIC_SEQ_CST);
			if (mtu >= pa.mtu || (cur && mtu >= cur))
				continue;
			__atomic_store_n(&c->lv->slot_pmtu[s], (__u16)mtu, __ATOMIC_SEQ_CST);
			c->w[s].pmtu_at_ms = mono_ms();
			snprintf(what, sizeof(what), "path MTU %u (Packet Too Big from %s, flow %u group %u%s)", mtu,
				 from_s, p.fid, p.gid, k >= 0 ? "" : "; its path not known");
			say(s, &pa, what);
		}
		if (cfg.ecmp || !slots) {
			__u16 cur = __atomic_load_n(&c->lv->pmtu, __ATOMIC_SEQ_CST);

			if (!cur || mtu < cur)
				__atomic_store_n(&c->lv->pmtu, (__u16)mtu, __ATOMIC_SEQ_CST);
		} else {
			__u16 cur = __atomic_load_n(&c->lv->pmtu, __ATOMIC_SEQ_CST);

			/* at once, not at the next look */
			if ((!cur || mtu < cur) && mtu < cfg.path_mtu)
				__atomic_store_n(&c->lv->pmtu, (__u16)mtu, __ATOMIC_SEQ_CST);
		}
		say_now();
		ptb_relay(c, &cfg, &p, mtu);
	}
}

static __u32 map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

static int watch(int argc, char **argv);

static const struct optab watch_opts[] = {
	{ "dev", "DEV", "the instance's port (required)", 'd', 0 },
	{ "probe", "TIME", "have the kernel probe a next hop not confirmed for this long\n"
	  "(bare: ms; 10ms..60s, default 200ms)", 'p', 0 },
	{ "probe-ms", "TIME", NULL, 'p', OPTAB_ALIAS },
	{ "dead", "TIME", "a next hop not confirmed for this long, and that has left a probe\n"
	  "unanswered for this less --probe, is out of rotation (bare: ms;\n"
	  "10ms..60s, longer than --probe; default 500ms)", 'D', 0 },
	{ "dead-ms", "TIME", NULL, 'D', OPTAB_ALIAS },
	{ "tick", "TIME", "look at every path this often, and at once on an event (bare:\n"
	  "ms; 10ms..60s; default 100ms); times the ticks from a lost probe\n"
	  "to the next (--probe / --tick, rounded up): less than --dead less --probe", 't', 0 },
	{ "tick-ms", "TIME", NULL, 't', OPTAB_ALIAS },
	{ "relay-rate", "N", "Packet Too Big relayed to inner senders per second (1..60000,\n"
	  "default 10)", 'r', 0 },
	{ "relay-burst", "N", "... in bursts of at most N (1..60000, default 10)", 'b', 0 },
	{ "pmtu-expire", "TIME", "a learned path MTU is forgotten after this long (bare: s;\n"
	  "1s..60000s, default 600s)", 'e', 0 },
	{ "pmtu-expire-s", "TIME", NULL, 'e', OPTAB_ALIAS },
	{ 0 },
};

const struct optab_cmd wps_watch_cmd = {
	.path = "ubctl wps ingress watch",
	.summary = "the agent that follows the paths' links, next hops and MTUs (foreground)",
	.synopsis = "--dev DEV [--probe TIME] [--dead TIME] [--tick TIME]\n"
		    "    [--relay-rate N] [--relay-burst N] [--pmtu-expire TIME]",
	.about = "Runs in the foreground until SIGINT/SIGTERM or detach (systemd:\n"
		 "ubxdp-wps-ingress-watch@DEV). A path whose device is down or has no carrier,\n"
		 "or whose next hop (--nexthop) has not answered the kernel's probes for\n"
		 "--dead, is out of rotation until it is up again. A Packet Too Big from the\n"
		 "WAN about a packet the ingress sent lowers the MTU of the path its group went\n"
		 "on and is relayed to the inner sender as the ICMP of its family, MTU less 56.",
	.opts = watch_opts,
	.run = watch,
};

struct watch_args {
	const char *dev;
	unsigned long long probe_ms, dead_ms, tick_ms, rate, burst, expire_s;
};

static int watch_opt(void *ctx, const struct optab *o, const char *v)
{
	struct watch_args *a = ctx;
	char opt[40], err[256];
	uint64_t t;

	snprintf(opt, sizeof(opt), "--%s", o->name);
	switch (o->key) {
	case 'd':
		a->dev = v;
		return 0;
	case 'r':
	case 'b':
		if (wps_parse_uint(v, 1, 60000, o->key == 'r' ? &a->rate : &a->burst, opt, err, sizeof(err)))
			return fail(EXIT_USAGE, "%s", err);
		return 0;
	case 'e':
		if (pn_time(opt, v, PN_S, PN_S, 60000 * PN_S, &t, err, sizeof(err)))
			return fail(EXIT_USAGE, "%s", err);
		a->expire_s = t / PN_S;
		return 0;
	}
	if (pn_time(opt, v, PN_MS, 10 * PN_MS, 60 * PN_S, &t, err, sizeof(err)))
		return fail(EXIT_USAGE, "%s", err);
	*(o->key == 'p' ? &a->probe_ms : o->key == 'D' ? &a->dead_ms : &a->tick_ms) = t / PN_MS;
	return 0;
}

static int watch(int argc, char **argv)
{
	__u32 cfg_id = 0;
	struct wps_look_sched sched;
	int pin_fd;
	bool gone, periodic;
	__u64 start;
	struct ptb_ctx ptb = { .icmp6 = -1, .raw4 = -1, .flows_fd = -1, .state_fd = -1 };
	char dir[PATH_MAX], p[PATH_MAX + 64], err[256];
	struct slot_watch w[WPS_IN_MAX_PATHS] = { 0 };
	struct wps_in_live *lv = NULL;
	static const unsigned groups[] = { RTNLGRP_LINK, RTNLGRP_NEIGH };
	int cfg_fd = -1, paths_fd = -1, live_fd = -1, rc = EXIT_FAIL;
	struct nl *rt = NULL, *mon = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	struct watch_args a = { .probe_ms = 200, .dead_ms = 500, .tick_ms = 100, .rate = 10, .burst = 10,
				.expire_s = 600 };

	rc = optab_parse(&wps_watch_cmd, argc, argv, watch_opt, &a, NULL);
	if (rc)
		return OPTAB_STATUS(rc);
	rc = EXIT_FAIL;
	if (!a.dev)
		return fail(EXIT_USAGE, "wps ingress watch: --dev DEV is required");
	if (a.dead_ms <= a.probe_ms)
		return fail(EXIT_USAGE, "wps ingress watch: --dead must be longer than --probe");
	/* Longer, and the question asked again after one lost probe is judged
	 * unanswered before it is asked: one lost probe takes the next hop down. */
	if (!wps_nh_tick_ok((unsigned)a.tick_ms, (unsigned)a.probe_ms, (unsigned)a.dead_ms))
		return fail(EXIT_USAGE, "wps ingress watch: --tick (%llu ms) x %llu, the ticks from a lost probe to the next, must be shorter than --dead less --probe (%llu ms)",
			    a.tick_ms, (a.probe_ms + a.tick_ms - 1) / a.tick_ms, a.dead_ms - a.probe_ms);
	if ((rc = wps_ingress_dir(a.dev, dir, sizeof(dir))))
		return rc;
	snprintf(p, sizeof(p), "%s/%s", dir, WPS_PIN_CFG);
	cfg_fd = bpf_obj_get(p);
	snprintf(p, sizeof(p), "%s/%s", dir, WPS_PIN_PATHS);
	paths_fd = bpf_obj_get(p);
	snprintf(p, sizeof(p), "%s/%s", dir, WPS_PIN_LIVE);
	live_fd = bpf_obj_get(p);
	snprintf(p, sizeof(p), "%s/%s", dir, WPS_PIN_FLOWS);
	ptb.flows_fd = bpf_obj_get(p);
	snprintf(p, sizeof(p), "%s/%s", dir, WPS_PIN_FLOW_STATE);
	ptb.state_fd = bpf_obj_get(p);
	if (cfg_fd < 0 || paths_fd < 0 || live_fd < 0 || ptb.flows_fd < 0 || ptb.state_fd < 0 ||
	    !(lv = wps_live_map(live_fd))) {
		rc = fail(EXIT_FAIL, "cannot open the pins of %s: %s", pin_display(dir), strerror(errno));
		goto out;
	}
	rt = nl_open_route(err, sizeof(err));
	mon = rt ? nl_open_monitor(groups, sizeof(groups) / sizeof(groups[0]), err, sizeof(err)) : NULL;
	if (!mon) {
		rc = fail(EXIT_FAIL, "rtnetlink: %s", err);
		goto out;
	}
	ptb.cfg_fd = cfg_fd;
	ptb.paths_fd = paths_fd;
	ptb.lv = lv;
	ptb.w = w;
	ptb.rate = (unsigned)a.rate;
	ptb.burst = (unsigned)a.burst;
	if (ptb_open(&ptb)) {
		rc = fail(EXIT_FAIL, "raw ICMP sockets (Packet Too Big): %s", strerror(errno));
		goto out;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	wps_look_init(&sched, mono_ms(), (unsigned)a.tick_ms);
	start = mono_ms();
	periodic = wps_look_start(&sched, start);
	if (look(rt, cfg_fd, paths_fd, lv, w, (unsigned)a.probe_ms, (unsigned)a.dead_ms, (unsigned)a.expire_s,
		 &sched.when)) {
		rc = fail(EXIT_FAIL, "%s: cannot read the instance (detached, or another ubctl's layout)", a.dev);
		goto out;
	}
	cfg_id = map_id(cfg_fd);
	printf("watching the paths of %s (probe %llu ms, dead after %llu ms)\n", a.dev, a.probe_ms, a.dead_ms);
	fflush(stdout);
	wps_look_done(&sched, start, periodic);
	while (!stop) {
		struct pollfd pfd[2] = { { .fd = nl_fd(mon), .events = POLLIN }, { .fd = ptb.icmp6, .events = POLLIN } };
		__u64 now = mono_ms();

		if (poll(pfd, 2, sched.next_ms > now ? (int)(sched.next_ms - now) : 0) > 0) {
			/* An event: look again now; what changed (or was lost) is read back by look(). */
			nl_monitor_read(mon, NULL, NULL);
			ptb_read(&ptb);
		}
		/* The look's start clock for done as well: a look that took time is not a stall. */
		start = mono_ms();
		periodic = wps_look_start(&sched, start);
		/* Detached (the pins gone, or another instance's since): the maps held open live on unused. */
		snprintf(p, sizeof(p), "%s/%s", dir, WPS_PIN_CFG);
		pin_fd = bpf_obj_get(p);
		gone = pin_fd < 0 || map_id(pin_fd) != cfg_id;
		if (pin_fd >= 0)
			close(pin_fd);
		if (gone ||
		    look(rt, cfg_fd, paths_fd, lv, w, (unsigned)a.probe_ms, (unsigned)a.dead_ms, (unsigned)a.expire_s,
			 &sched.when)) {
			printf("%s: the instance is gone; watch ends\n", a.dev);
			rc = 0;
			goto out;
		}
		wps_look_done(&sched, start, periodic);
	}
	/* Leaving: the paths are no longer watched, so no longer held down for what it saw. */
	__atomic_store_n(&lv->link_down, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&lv->neigh_down, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&lv->pmtu, 0, __ATOMIC_SEQ_CST);
	for (int k = 0; k < WPS_IN_MAX_PATHS; k++)
		__atomic_store_n(&lv->slot_pmtu[k], 0, __ATOMIC_SEQ_CST);
	printf("watch of %s ends: Packet Too Big %llu received, %llu relayed, %llu not (rate)\n", a.dev, ptb.received,
	       ptb.relayed, ptb.limited);
	rc = 0;
out:
	wps_live_unmap(lv);
	nl_close(mon);
	nl_close(rt);
	for (int *x = (int[]){ cfg_fd, paths_fd, live_fd, ptb.icmp6, ptb.raw4, ptb.flows_fd, ptb.state_fd, -2 };
	     *x != -2; x++)
		if (*x >= 0)
			close(*x);
	return rc;
}
