// SPDX-License-Identifier: BSD-2-Clause
/*
 * Netlink on libmnl (nl.h): each request is sent with NLM_F_ACK and read
 * until its ACK or error, so a request that answers with data (a route, a
 * neighbour, a link) and one that answers with nothing end the same way;
 * answers to an earlier request (a late one after a timeout) are skipped by
 * their sequence number. Errors carry the kernel's extended ACK message.
 */
#include "io/nl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

/* A request's answer (a link with its statistics, a verbose feature bitset), or a batch of changes. */
#define NL_BUF		32768
/* A request the kernel never answers (its answer dropped: our receive
 * queue full) fails after this, rather than hang the caller. */
#define NL_TIMEOUT_S	2
/* The features a device kept other than asked, named in one line. */
#define NL_NAMES	200

struct nl {
	struct mnl_socket *m;
	uint32_t portid, seq;
	uint16_t ethtool_id;	/* the ethtool family's id (generic netlink) */
	char err[256];
	char buf[NL_BUF];
};

const char *nl_error(const struct nl *s)
{
	return s->err;
}

int nl_fd(const struct nl *s)
{
	return mnl_socket_get_fd(s->m);
}

void nl_close(struct nl *s)
{
	if (!s)
		return;
	if (s->m)
		mnl_socket_close(s->m);
	free(s);
}

/* rc (-errno), its line kept for nl_error(): the errno's text, and the kernel's message when it gave one. */
static int fail(struct nl *s, int rc, const char *extack)
{
	snprintf(s->err, sizeof(s->err), "%s%s%s%s", strerror(-rc), extack ? " (" : "", extack ? extack : "",
		 extack ? ")" : "");
	return rc;
}

static struct nl *open_bus(int bus, int flags, char *err, size_t errlen)
{
	struct nl *s = calloc(1, sizeof(*s));
	int one = 1;

	if (!s) {
		snprintf(err, errlen, "netlink: out of memory");
		return NULL;
	}
	s->m = mnl_socket_open2(bus, SOCK_CLOEXEC | flags);
	if (!s->m || mnl_socket_bind(s->m, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "netlink socket: %s", strerror(errno));
		nl_close(s);
		return NULL;
	}
	s->portid = mnl_socket_get_portid(s->m);
	/* The kernel's reason with each error, and no copy of the request in it.
	 * Both since Linux 4.12: a failure here only costs the reason. */
	mnl_socket_setsockopt(s->m, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(s->m, NETLINK_CAP_ACK, &one, sizeof(one));
	return s;
}

static struct nl *open_requests(int bus, char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = NL_TIMEOUT_S };
	struct nl *s = open_bus(bus, 0, err, errlen);

	if (s)
		setsockopt(nl_fd(s), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return s;
}

struct nl *nl_open_route(char *err, size_t errlen)
{
	return open_requests(NETLINK_ROUTE, err, errlen);
}

/* ---- one request ------------------------------------------------------------------- */

struct call {
	struct nl *s;
	mnl_cb_t cb;	/* each answer message but the ACK; NULL: none expected */
	void *data;
	int rc;		/* the kernel's -errno */
};

static int extack_attr(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG && !mnl_attr_validate(a, MNL_TYPE_NUL_STRING))
		*(const char **)data = mnl_attr_get_str(a);
	return MNL_CB_OK;
}

static int on_error(const struct nlmsghdr *h, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(h);
	struct call *c = data;
	const char *msg = NULL;

	if (h->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		c->rc = fail(c->s, -EBADMSG, "a short error message");
		return MNL_CB_ERROR;
	}
	if (!e->error)
		return MNL_CB_STOP;	/* the ACK: done */
	if (h->nlmsg_flags & NLM_F_ACK_TLVS) {
		/* The TLVs follow the request's header, or the whole request when not capped. */
		size_t off = sizeof(*e);

		if (!(h->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
		mnl_attr_parse(h, (unsigned)off, extack_attr, &msg);
	}
	c->rc = fail(c->s, e->error, msg);
	return MNL_CB_ERROR;
}

static int on_data(const struct nlmsghdr *h, void *data)
{
	struct call *c = data;

	return c->cb ? c->cb(h, c->data) : MNL_CB_OK;
}

static int request(struct nl *s, struct nlmsghdr *h, mnl_cb_t cb, void *data)
{
	static mnl_cb_t ctl[NLMSG_MIN_TYPE] = { [NLMSG_ERROR] = on_error };
	struct call c = { .s = s, .cb = cb, .data = data };
	const uint32_t seq = ++s->seq;

	h->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	h->nlmsg_seq = seq;
	s->err[0] = '\0';
	if (mnl_socket_sendto(s->m, h, h->nlmsg_len) < 0)
		return fail(s, -errno, NULL);
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(s->m, s->buf, sizeof(s->buf));
		int rc;

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return fail(s, -ETIMEDOUT, "no answer from the kernel");
		if (n < 0)
			return fail(s, -errno, NULL);
		/* An earlier request's answer (each answer is a datagram of its own) */
		if ((size_t)n >= sizeof(struct nlmsghdr) && ((struct nlmsghdr *)s->buf)->nlmsg_seq != seq)
			continue;
		rc = mnl_cb_run2(s->buf, (size_t)n, seq, s->portid, on_data, &c, ctl, NLMSG_MIN_TYPE);
		if (rc == MNL_CB_STOP)
			return 0;
		if (rc == MNL_CB_ERROR)
			return c.rc ? c.rc : fail(s, -errno, NULL);
	}
}

/* A request of type t with flags and a family header of hlen bytes, in s->buf. */
static struct nlmsghdr *start(struct nl *s, uint16_t t, uint16_t flags, void **hdr, size_t hlen)
{
	struct nlmsghdr *h = mnl_nlmsg_put_header(s->buf);

	h->nlmsg_type = t;
	h->nlmsg_flags = flags;
	*hdr = mnl_nlmsg_put_extra_header(h, hlen);
	return h;
}

/* ---- routes and neighbours --------------------------------------------------------- */

static size_t addr_len(int family)
{
	return family == AF_INET6 ? 16 : 4;
}

static int route_cb(const struct nlmsghdr *h, void *data)
{
	const struct rtmsg *rt = mnl_nlmsg_get_payload(h);
	struct nl_route *r = data;
	const size_t alen = addr_len(rt->rtm_family);
	const struct nlattr *a;

	if (h->nlmsg_type != RTM_NEWROUTE)
		return MNL_CB_OK;
	memset(r, 0, sizeof(*r));
	r->type = rt->rtm_type;
	mnl_attr_for_each(a, h, sizeof(*rt)) {
		const uint16_t t = mnl_attr_get_type(a);

		if (t == RTA_OIF && mnl_attr_get_payload_len(a) == 4) {
			r->oif = (int)mnl_attr_get_u32(a);
		} else if (t == RTA_GATEWAY && mnl_attr_get_payload_len(a) == alen) {
			memcpy(r->gateway, mnl_attr_get_payload(a), alen);
			r->has_gateway = true;
		} else if (t == RTA_PREFSRC && mnl_attr_get_payload_len(a) == alen) {
			memcpy(r->prefsrc, mnl_attr_get_payload(a), alen);
			r->has_prefsrc = true;
		} else if (t == RTA_METRICS) {
			const struct nlattr *m;

			mnl_attr_for_each_nested(m, a)
				if (mnl_attr_get_type(m) == RTAX_MTU && mnl_attr_get_payload_len(m) == 4)
					r->mtu = mnl_attr_get_u32(m);
		}
	}
	return MNL_CB_OK;
}

int nl_route_get(struct nl *s, int family, const void *dst, int oif, struct nl_route *r)
{
	struct rtmsg *rt;
	struct nlmsghdr *h = start(s, RTM_GETROUTE, 0, (void **)&rt, sizeof(*rt));

	rt->rtm_family = (uint8_t)family;
	rt->rtm_dst_len = (uint8_t)(addr_len(family) * 8);
	mnl_attr_put(h, RTA_DST, addr_len(family), dst);
	if (oif)
		mnl_attr_put_u32(h, RTA_OIF, (uint32_t)oif);
	memset(r, 0, sizeof(*r));
	return request(s, h, route_cb, r);
}

static int neigh_cb(const struct nlmsghdr *h, void *data)
{
	const struct ndmsg *nd = mnl_nlmsg_get_payload(h);
	struct nl_neigh *n = data;
	const struct nlattr *a;

	if (h->nlmsg_type != RTM_NEWNEIGH)
		return MNL_CB_OK;
	n->state = nd->ndm_state;
	n->confirmed_ms = UINT32_MAX;
	mnl_attr_for_each(a, h, sizeof(*nd)) {
		const uint16_t t = mnl_attr_get_type(a);

		if (t == NDA_LLADDR && mnl_attr_get_payload_len(a) == 6) {
			memcpy(n->lladdr, mnl_attr_get_payload(a), 6);
			n->has_lladdr = true;
		} else if (t == NDA_CACHEINFO && mnl_attr_get_payload_len(a) >= sizeof(struct nda_cacheinfo)) {
			/* In clock ticks (USER_HZ), as times() counts. */
			const struct nda_cacheinfo *ci = mnl_attr_get_payload(a);
			const long hz = sysconf(_SC_CLK_TCK);
			const uint64_t ms = (uint64_t)ci->ndm_confirmed * 1000 / (uint64_t)(hz > 0 ? hz : 100);

			n->confirmed_ms = ms < UINT32_MAX ? (uint32_t)ms : UINT32_MAX;
		}
	}
	return MNL_CB_OK;
}

static struct nlmsghdr *neigh_msg(struct nl *s, uint16_t t, uint16_t flags, int family, int ifindex,
				  const void *dst, struct ndmsg **nd)
{
	struct nlmsghdr *h = start(s, t, flags, (void **)nd, sizeof(**nd));

	(*nd)->ndm_family = (uint8_t)family;
	(*nd)->ndm_ifindex = ifindex;
	mnl_attr_put(h, NDA_DST, addr_len(family), dst);
	return h;
}

int nl_neigh_get(struct nl *s, int family, int ifindex, const void *dst, struct nl_neigh *n)
{
	struct ndmsg *nd;
	struct nlmsghdr *h = neigh_msg(s, RTM_GETNEIGH, 0, family, ifindex, dst, &nd);

	memset(n, 0, sizeof(*n));
	return request(s, h, neigh_cb, n);
}

int nl_neigh_probe(struct nl *s, int family, int ifindex, const void *dst)
{
	struct ndmsg *nd;
	struct nlmsghdr *h = neigh_msg(s, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE, family, ifindex, dst, &nd);

	nd->ndm_state = NUD_NONE;
	nd->ndm_flags = NTF_USE;
	return request(s, h, NULL, NULL);
}

int nl_neigh_set_state(struct nl *s, int family, int ifindex, const void *dst, uint16_t state)
{
	struct ndmsg *nd;
	struct nlmsghdr *h = neigh_msg(s, RTM_NEWNEIGH, 0, family, ifindex, dst, &nd);

	nd->ndm_state = state;
	return request(s, h, NULL, NULL);
}

/* ---- links ------------------------------------------------------------------------- */

static int link_cb(const struct nlmsghdr *h, void *data)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(h);
	struct nl_link *l = data;
	const struct nlattr *a;

	if (h->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	l->ifindex = ifi->ifi_index;
	l->flags = ifi->ifi_flags;
	mnl_attr_for_each(a, h, sizeof(*ifi)) {
		const uint16_t t = mnl_attr_get_type(a);
		const uint16_t len = mnl_attr_get_payload_len(a);

		if (t == IFLA_IFNAME && !mnl_attr_validate(a, MNL_TYPE_NUL_STRING))
			snprintf(l->name, sizeof(l->name), "%s", mnl_attr_get_str(a));
		else if (t == IFLA_MTU && len == 4)
			l->mtu = mnl_attr_get_u32(a);
		else if (t == IFLA_ADDRESS && len <= sizeof(l->addr)) {
			memcpy(l->addr, mnl_attr_get_payload(a), len);
			l->addr_len = len;
		}
	}
	return MNL_CB_OK;
}

/* A link request for ifindex, or for name when ifindex is 0. */
static struct nlmsghdr *link_msg(struct nl *s, uint16_t t, uint16_t flags, int ifindex, const char *name,
				 struct ifinfomsg **ifi)
{
	struct nlmsghdr *h = start(s, t, flags, (void **)ifi, sizeof(**ifi));

	(*ifi)->ifi_family = AF_UNSPEC;
	(*ifi)->ifi_index = ifindex;
	if (!ifindex)
		mnl_attr_put_strz(h, IFLA_IFNAME, name);
	return h;
}

int nl_link_get(struct nl *s, int ifindex, const char *name, struct nl_link *l)
{
	struct ifinfomsg *ifi;
	struct nlmsghdr *h = link_msg(s, RTM_GETLINK, 0, ifindex, name, &ifi);

	memset(l, 0, sizeof(*l));
	return request(s, h, link_cb, l);
}

int nl_link_set(struct nl *s, int ifindex, const struct nl_link_change *c)
{
	struct ifinfomsg *ifi;
	struct nlmsghdr *h = link_msg(s, RTM_NEWLINK, 0, ifindex, NULL, &ifi);

	if (c->up >= 0) {
		ifi->ifi_change = IFF_UP;
		ifi->ifi_flags = c->up ? IFF_UP : 0;
	}
	if (c->mtu)
		mnl_attr_put_u32(h, IFLA_MTU, c->mtu);
	if (c->addr)
		mnl_attr_put(h, IFLA_ADDRESS, 6, c->addr);
	return request(s, h, NULL, NULL);
}

int nl_link_del(struct nl *s, int ifindex, const char *name)
{
	struct ifinfomsg *ifi;
	struct nlmsghdr *h = link_msg(s, RTM_DELLINK, 0, ifindex, name, &ifi);

	return request(s, h, NULL, NULL);
}

/* The attributes both ends of a veth get: name, MTU, queues. */
static void veth_end(struct nlmsghdr *h, const char *name, uint32_t mtu, unsigned queues)
{
	mnl_attr_put_strz(h, IFLA_IFNAME, name);
	if (mtu)
		mnl_attr_put_u32(h, IFLA_MTU, mtu);
	if (queues) {
		mnl_attr_put_u32(h, IFLA_NUM_TX_QUEUES, queues);
		mnl_attr_put_u32(h, IFLA_NUM_RX_QUEUES, queues);
	}
}

int nl_veth_add(struct nl *s, const char *name, const char *peer, uint32_t mtu, unsigned queues)
{
	struct ifinfomsg *ifi;
	struct nlmsghdr *h = start(s, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, (void **)&ifi, sizeof(*ifi));
	struct nlattr *info, *data, *p;

	ifi->ifi_family = AF_UNSPEC;
	veth_end(h, name, mtu, queues);
	info = mnl_attr_nest_start(h, IFLA_LINKINFO);
	mnl_attr_put_strz(h, IFLA_INFO_KIND, "veth");
	data = mnl_attr_nest_start(h, IFLA_INFO_DATA);
	/* The peer's attributes follow an ifinfomsg of its own. */
	p = mnl_attr_nest_start(h, VETH_INFO_PEER);
	mnl_nlmsg_put_extra_header(h, sizeof(struct ifinfomsg));
	veth_end(h, peer, mtu, queues);
	mnl_attr_nest_end(h, p);
	mnl_attr_nest_end(h, data);
	mnl_attr_nest_end(h, info);
	return request(s, h, NULL, NULL);
}

/* ---- ethtool features over generic netlink ----------------------------------------- */

static int family_cb(const struct nlmsghdr *h, void *data)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, h, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID && mnl_attr_get_payload_len(a) == 2)
			*(uint16_t *)data = mnl_attr_get_u16(a);
	return MNL_CB_OK;
}

/* A generic netlink message of family (its id) and cmd. */
static struct nlmsghdr *genl_msg(struct nl *s, uint16_t family, uint8_t cmd, uint8_t version)
{
	struct genlmsghdr *g;
	struct nlmsghdr *h = start(s, family, 0, (void **)&g, sizeof(*g));

	g->cmd = cmd;
	g->version = version;
	return h;
}

struct nl *nl_open_ethtool(char *err, size_t errlen)
{
	struct nl *s = open_requests(NETLINK_GENERIC, err, errlen);
	struct nlmsghdr *h;
	int rc;

	if (!s)
		return NULL;
	h = genl_msg(s, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(h, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
	rc = request(s, h, family_cb, &s->ethtool_id);
	if (rc || !s->ethtool_id) {
		snprintf(err, errlen, "ethtool netlink family: %s", rc ? s->err : "no id in the answer");
		nl_close(s);
		return NULL;
	}
	return s;
}

/* Each name in a verbose bitset (nested ETHTOOL_A_BITSET_BITS of BIT nests):
 * in a list (ETHTOOL_A_BITSET_NOMASK) the bits set, else the bits of the mask. */
static void bitset_names(const struct nlattr *set, void (*fn)(void *ctx, const char *name), void *ctx)
{
	const struct nlattr *bits, *bit, *a;

	mnl_attr_for_each_nested(bits, set) {
		if (mnl_attr_get_type(bits) != ETHTOOL_A_BITSET_BITS)
			continue;
		mnl_attr_for_each_nested(bit, bits)
			mnl_attr_for_each_nested(a, bit)
				if (mnl_attr_get_type(a) == ETHTOOL_A_BITSET_BIT_NAME &&
				    !mnl_attr_validate(a, MNL_TYPE_NUL_STRING))
					fn(ctx, mnl_attr_get_str(a));
	}
}

/* One of a bitset's names, from fn's ctx: which bitset, and where to. */
struct names {
	uint16_t set;	/* ETHTOOL_A_FEATURES_* */
	void (*fn)(void *ctx, const char *name);
	void *ctx;
};

static int features_cb(const struct nlmsghdr *h, void *data)
{
	const struct names *n = data;
	const struct nlattr *a;

	mnl_attr_for_each(a, h, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == n->set)
			bitset_names(a, n->fn, n->ctx);
	return MNL_CB_OK;
}

static void append_name(void *ctx, const char *name)
{
	char *out = ctx;
	size_t len = strlen(out);

	snprintf(out + len, NL_NAMES - len, "%s%s", len ? ", " : "", name);
}

static struct nlmsghdr *features_msg(struct nl *s, uint8_t cmd, const char *dev)
{
	struct nlmsghdr *h = genl_msg(s, s->ethtool_id, cmd, ETHTOOL_GENL_VERSION);
	struct nlattr *hdr = mnl_attr_nest_start(h, ETHTOOL_A_FEATURES_HEADER);

	mnl_attr_put_strz(h, ETHTOOL_A_HEADER_DEV_NAME, dev);
	mnl_attr_nest_end(h, hdr);
	return h;
}

int nl_features_active(struct nl *s, const char *dev, void (*fn)(void *ctx, const char *name), void *ctx)
{
	struct names n = { .set = ETHTOOL_A_FEATURES_ACTIVE, .fn = fn, .ctx = ctx };

	return request(s, features_msg(s, ETHTOOL_MSG_FEATURES_GET, dev), features_cb, &n);
}

int nl_features_set(struct nl *s, const char *dev, const struct nl_feature *f, unsigned n)
{
	struct nlmsghdr *h = features_msg(s, ETHTOOL_MSG_FEATURES_SET, dev);
	char kept[NL_NAMES] = "";
	struct names k = { .set = ETHTOOL_A_FEATURES_WANTED, .fn = append_name, .ctx = kept };
	struct nlattr *wanted, *bits;
	int rc;

	/* Without ETHTOOL_A_BITSET_NOMASK the bits listed are the ones to change,
	 * each on when it carries ETHTOOL_A_BITSET_BIT_VALUE. */
	wanted = mnl_attr_nest_start(h, ETHTOOL_A_FEATURES_WANTED);
	bits = mnl_attr_nest_start(h, ETHTOOL_A_BITSET_BITS);
	for (unsigned i = 0; i < n; i++) {
		struct nlattr *bit = mnl_attr_nest_start(h, ETHTOOL_A_BITSET_BITS_BIT);

		mnl_attr_put_strz(h, ETHTOOL_A_BITSET_BIT_NAME, f[i].name);
		if (f[i].on)
			mnl_attr_put(h, ETHTOOL_A_BITSET_BIT_VALUE, 0, NULL);
		mnl_attr_nest_end(h, bit);
	}
	mnl_attr_nest_end(h, bits);
	mnl_attr_nest_end(h, wanted);
	/* The answer's ETHTOOL_A_FEATURES_WANTED lists what was asked for and
	 * did not come true. */
	rc = request(s, h, features_cb, &k);
	if (!rc && kept[0]) {
		snprintf(s->err, sizeof(s->err), "%s kept other than asked: %s", dev, kept);
		return -EOPNOTSUPP;
	}
	return rc;
}

/* ---- changes ----------------------------------------------------------------------- */

struct nl *nl_open_monitor(const unsigned *groups, unsigned n, char *err, size_t errlen)
{
	struct nl *s = open_bus(NETLINK_ROUTE, SOCK_NONBLOCK, err, errlen);
	int sz = 4 << 20;

	if (!s)
		return NULL;
	/* Room for a burst (a device going down flushes its routes and
	 * neighbours at once): an overflow costs the reader a full re-read. */
	if (setsockopt(nl_fd(s), SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(nl_fd(s), SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	for (unsigned i = 0; i < n; i++) {
		unsigned g = groups[i];

		if (mnl_socket_setsockopt(s->m, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)) < 0) {
			snprintf(err, errlen, "netlink group %u: %s", g, strerror(errno));
			nl_close(s);
			return NULL;
		}
	}
	return s;
}

/* The fields of a change every rtnetlink message has: each family header
 * starts with the address family; links, neighbours and addresses name a
 * device. */
static bool decode(const struct nlmsghdr *h, struct nl_event *ev)
{
	const size_t len = mnl_nlmsg_get_payload_len(h);
	const void *p = mnl_nlmsg_get_payload(h);

	if (h->nlmsg_type < RTM_BASE || len < 1)
		return false;
	memset(ev, 0, sizeof(*ev));
	ev->type = h->nlmsg_type;
	ev->family = *(const uint8_t *)p;
	switch (h->nlmsg_type) {
	case RTM_NEWLINK:
	case RTM_DELLINK:
		if (len >= sizeof(struct ifinfomsg))
			ev->ifindex = ((const struct ifinfomsg *)p)->ifi_index;
		break;
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		if (len >= sizeof(struct ndmsg))
			ev->ifindex = ((const struct ndmsg *)p)->ndm_ifindex;
		break;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		if (len >= sizeof(struct ifaddrmsg))
			ev->ifindex = (int)((const struct ifaddrmsg *)p)->ifa_index;
		break;
	}
	return true;
}

int nl_monitor_read(struct nl *s, nl_event_fn fn, void *ctx)
{
	bool lost = false;
	int count = 0;

	for (;;) {
		ssize_t n = recv(nl_fd(s), s->buf, sizeof(s->buf), MSG_DONTWAIT);
		const struct nlmsghdr *h;
		int left;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			lost = true;	/* and read on: what is queued is still news */
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0)
			return fail(s, -errno, NULL);
		left = (int)n;
		for (h = (const struct nlmsghdr *)s->buf; mnl_nlmsg_ok(h, left); h = mnl_nlmsg_next(h, &left)) {
			struct nl_event ev;

			if (decode(h, &ev)) {
				if (fn)
					fn(ctx, &ev);
				count++;
			}
		}
	}
	return lost ? fail(s, -ENOBUFS, "changes lost") : count;
}
