// SPDX-License-Identifier: BSD-2-Clause
#include "endpoint/nexthop.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "lib/clock.h"

struct nl_req {
	struct nlmsghdr nh;
	union {
		struct rtmsg rt;
		struct ndmsg nd;
	};
	char attrs[64];
};

static void add_attr(struct nl_req *r, unsigned short type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/*
 * Send one request and read the answer into buf. Returns the answer's
 * length, or -errno (from an NLMSG_ERROR, or the socket).
 */
static int nl_talk(struct nl_req *r, char *buf, size_t cap)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), n, rc;
	struct timeval tv = { .tv_sec = 1 };

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	r->nh.nlmsg_seq = 1;
	if (sendto(fd, r, r->nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	n = (int)recv(fd, buf, cap, 0);
	rc = n < 0 ? -errno : n;
	close(fd);
	if (rc > 0) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (!NLMSG_OK(h, (unsigned)rc))
			return -EBADMSG;
		if (h->nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr *e = NLMSG_DATA(h);

			return e->error ? e->error : 0;
		}
	}
	return rc;
}

static int route_get(uint8_t ver, const uint8_t dst[16], int oif, struct ep_nexthop *nh,
		     char *err, size_t errlen)
{
	size_t alen = ver == 6 ? 16 : 4;
	struct nl_req r = { 0 };
	char buf[4096];
	struct rtmsg *rt;
	struct rtattr *a;
	int n, len;

	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	r.nh.nlmsg_type = RTM_GETROUTE;
	r.nh.nlmsg_flags = NLM_F_REQUEST;
	r.rt.rtm_family = ver == 6 ? AF_INET6 : AF_INET;
	r.rt.rtm_dst_len = (unsigned char)(alen * 8);
	add_attr(&r, RTA_DST, dst, alen);
	if (oif)
		add_attr(&r, RTA_OIF, &oif, sizeof(oif));
	n = nl_talk(&r, buf, sizeof(buf));
	if (n < 0) {
		char a_s[INET6_ADDRSTRLEN];

		inet_ntop(ver == 6 ? AF_INET6 : AF_INET, dst, a_s, sizeof(a_s));
		snprintf(err, errlen, "no route to %s: %s", a_s, strerror(-n));
		return n;
	}
	rt = NLMSG_DATA((struct nlmsghdr *)buf);
	if (rt->rtm_type == RTN_LOCAL) {
		snprintf(err, errlen, "the peer address is one of this host's own");
		return -EADDRINUSE;
	}
	if (rt->rtm_type != RTN_UNICAST) {
		snprintf(err, errlen, "route to the peer is not unicast (type %u)", rt->rtm_type);
		return -ENETUNREACH;
	}
	memset(nh, 0, sizeof(*nh));
	nh->ip_ver = ver;
	memcpy(nh->via, dst, alen);
	len = (int)RTM_PAYLOAD((struct nlmsghdr *)buf);
	for (a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		switch (a->rta_type) {
		case RTA_OIF:
			memcpy(&nh->ifindex, RTA_DATA(a), sizeof(int));
			break;
		case RTA_GATEWAY:
			if (RTA_PAYLOAD(a) == alen) {
				memcpy(nh->via, RTA_DATA(a), alen);
				nh->gateway = true;
			}
			break;
		case RTA_PREFSRC:
			if (RTA_PAYLOAD(a) == alen)
				memcpy(nh->src_ip, RTA_DATA(a), alen);
			break;
		}
	}
	if (!nh->ifindex) {
		snprintf(err, errlen, "route to the peer has no output device");
		return -ENETUNREACH;
	}
	return 0;
}

int ep_nexthop_dev_info(struct ep_nexthop *nh, char *err, size_t errlen)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;

	if (fd < 0 || !if_indextoname((unsigned)nh->ifindex, ifr.ifr_name)) {
		rc = -errno;
	} else if (ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		rc = -errno;
	} else {
		memcpy(nh->src_mac, ifr.ifr_hwaddr.sa_data, 6);
		nh->mtu = ioctl(fd, SIOCGIFMTU, &ifr) ? 1500 : (uint32_t)ifr.ifr_mtu;
	}
	if (fd >= 0)
		close(fd);
	if (rc)
		snprintf(err, errlen, "output device %d: %s", nh->ifindex, strerror(-rc));
	return rc;
}

/* Returns 0 with the MAC, -ENOENT when there is no usable entry. */
static int neigh_get(struct ep_nexthop *nh)
{
	size_t alen = nh->ip_ver == 6 ? 16 : 4;
	struct nl_req r = { 0 };
	char buf[1024];
	struct ndmsg *nd;
	struct rtattr *a;
	bool mac = false;
	int n, len;

	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg));
	r.nh.nlmsg_type = RTM_GETNEIGH;
	r.nh.nlmsg_flags = NLM_F_REQUEST;
	r.nd.ndm_family = nh->ip_ver == 6 ? AF_INET6 : AF_INET;
	r.nd.ndm_ifindex = nh->ifindex;
	add_attr(&r, NDA_DST, nh->via, alen);
	n = nl_talk(&r, buf, sizeof(buf));
	nh->nud_state = NUD_NONE;
	if (n <= 0)
		return -ENOENT;
	nd = NLMSG_DATA((struct nlmsghdr *)buf);
	nh->nud_state = nd->ndm_state;
	len = (int)(((struct nlmsghdr *)buf)->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));
	for (a = (struct rtattr *)((char *)nd + NLMSG_ALIGN(sizeof(*nd))); RTA_OK(a, len);
	     a = RTA_NEXT(a, len)) {
		if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(nh->dst_mac, RTA_DATA(a), 6);
			mac = true;
		}
	}
	if (!mac || !(nd->ndm_state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE |
				       NUD_PERMANENT | NUD_NOARP)))
		return -ENOENT;
	return 0;
}

/* Ask the kernel to resolve (or re-confirm) the neighbour: NTF_USE runs the
 * same neigh_event_send() that a packet waiting for it would. */
static void neigh_use(const struct ep_nexthop *nh)
{
	struct nl_req r = { 0 };
	char buf[512];

	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg));
	r.nh.nlmsg_type = RTM_NEWNEIGH;
	r.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK;
	r.nd.ndm_family = nh->ip_ver == 6 ? AF_INET6 : AF_INET;
	r.nd.ndm_ifindex = nh->ifindex;
	r.nd.ndm_state = NUD_NONE;
	r.nd.ndm_flags = NTF_USE;
	add_attr(&r, NDA_DST, nh->via, nh->ip_ver == 6 ? 16 : 4);
	nl_talk(&r, buf, sizeof(buf));
}

int ep_nexthop_lookup(uint8_t ip_ver, const uint8_t dst[16], int oif, struct ep_nexthop *nh,
		      char *err, size_t errlen)
{
	int rc;

	if (ip_ver != 4 && ip_ver != 6) {
		snprintf(err, errlen, "IP version %u", ip_ver);
		return -EINVAL;
	}
	rc = route_get(ip_ver, dst, oif, nh, err, errlen);
	if (!rc)
		rc = ep_nexthop_dev_info(nh, err, errlen);
	if (rc)
		return rc;
	rc = neigh_get(nh);
	/* A stale entry still names the right MAC almost always, but nobody
	 * else will confirm it while our traffic bypasses the kernel. */
	if (rc || (nh->nud_state & NUD_STALE))
		neigh_use(nh);
	if (rc) {
		snprintf(err, errlen, "neighbour not resolved yet");
		return -EAGAIN;
	}
	return 0;
}

int ep_nexthop_resolve(uint8_t ip_ver, const uint8_t dst[16], int oif, int timeout_ms,
		       struct ep_nexthop *nh, char *err, size_t errlen)
{
	uint64_t t0 = ub_mono_ns();
	int rc;

	for (;;) {
		rc = ep_nexthop_lookup(ip_ver, dst, oif, nh, err, errlen);
		if (rc != -EAGAIN)
			return rc;
		if ((int64_t)(ub_mono_ns() - t0) / 1000000 > timeout_ms) {
			char a_s[INET6_ADDRSTRLEN];

			inet_ntop(ip_ver == 6 ? AF_INET6 : AF_INET, nh->via, a_s, sizeof(a_s));
			snprintf(err, errlen, "next hop %s does not answer %s", a_s,
				 ip_ver == 6 ? "neighbour solicitations" : "ARP");
			return -EHOSTUNREACH;
		}
		usleep(10000);
	}
}
