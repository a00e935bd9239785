// SPDX-License-Identifier: BSD-2-Clause
/*
 * URMA devices: every network device that is up, is not a loopback and has
 * an IPv4 or a global IPv6 address is a device, named as the network
 * device (UBXDP_URMA_DEVS=a,b narrows the list). Its EIDs are its
 * addresses, IPv4 first (as IPv4-mapped IPv6), in the kernel's order.
 * Devices are found again at each urma_get_device_list(); a device object
 * lives until urma_uninit(), so a pointer an application holds stays valid
 * when its network device goes away (it is then refused).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urma/urma_int.h"

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ubx_dev *devs;

uint8_t ubx_eid_to_ip(const urma_eid_t *eid, uint8_t ip[16])
{
	static const uint8_t v4map[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memset(ip, 0, 16);
	if (!memcmp(eid->raw, v4map, sizeof(v4map))) {
		memcpy(ip, eid->raw + 12, 4);
		return 4;
	}
	memcpy(ip, eid->raw, 16);
	return 6;
}

void ubx_ip_to_eid(uint8_t ver, const uint8_t ip[16], urma_eid_t *eid)
{
	memset(eid, 0, sizeof(*eid));
	if (ver == 4) {
		eid->raw[10] = eid->raw[11] = 0xff;
		memcpy(eid->raw + 12, ip, 4);
	} else {
		memcpy(eid->raw, ip, 16);
	}
}

bool ubx_eid_eq(const urma_eid_t *a, const urma_eid_t *b)
{
	return !memcmp(a->raw, b->raw, sizeof(a->raw));
}

UBX_VISIBLE void urma_u32_to_eid(uint32_t ipv4, urma_eid_t *eid)
{
	uint32_t be = htonl(ipv4);
	uint8_t ip[16] = { 0 };

	if (!eid)
		return;
	memcpy(ip, &be, 4);
	ubx_ip_to_eid(4, ip, eid);
}

UBX_VISIBLE int urma_str_to_eid(const char *buf, urma_eid_t *eid)
{
	uint8_t ip[16] = { 0 };

	if (!buf || !eid)
		return -1;
	if (inet_pton(AF_INET, buf, ip) == 1) {
		ubx_ip_to_eid(4, ip, eid);
		return 0;
	}
	if (inet_pton(AF_INET6, buf, ip) == 1) {
		memcpy(eid->raw, ip, 16);
		return 0;
	}
	return -1;
}

/* Whether name is one of the comma-separated list l (empty or NULL: no). */
bool ubx_name_in_list(const char *l, const char *name)
{
	size_t n = strlen(name);

	while (l && *l) {
		const char *e = strchr(l, ',');
		size_t k = e ? (size_t)(e - l) : strlen(l);

		if (k == n && !strncmp(l, name, n))
			return true;
		if (!e)
			break;
		l = e + 1;
	}
	return false;
}

/* UBXDP_URMA_DEVS, when set, names the only devices served. */
static bool dev_allowed(const char *name)
{
	const char *l = getenv("UBXDP_URMA_DEVS");

	return !l || !*l || ubx_name_in_list(l, name);
}

static bool usable_addr(const struct sockaddr *sa)
{
	if (!sa)
		return false;
	if (sa->sa_family == AF_INET)
		return true;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		/* A link-local address needs a scope UBoE does not carry. */
		return !IN6_IS_ADDR_LINKLOCAL(a) && !IN6_IS_ADDR_LOOPBACK(a) &&
		       !IN6_IS_ADDR_V4MAPPED(a);
	}
	return false;
}

/* The device's EIDs now: IPv4 addresses first, then IPv6, each in the kernel's order. */
int ubx_dev_eids(const char *ifname, struct ubx_eids *out)
{
	struct ifaddrs *ifa, *i;

	memset(out, 0, sizeof(*out));
	if (getifaddrs(&ifa))
		return -errno;
	for (int fam = 0; fam < 2; fam++) {
		for (i = ifa; i; i = i->ifa_next) {
			const struct sockaddr *sa = i->ifa_addr;
			uint8_t ip[16] = { 0 };

			if (strcmp(i->ifa_name, ifname) || !usable_addr(sa) ||
			    sa->sa_family != (fam ? AF_INET6 : AF_INET) || out->n == UBX_MAX_EIDS)
				continue;
			if (fam)
				memcpy(ip, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
			else
				memcpy(ip, &((const struct sockaddr_in *)sa)->sin_addr, 4);
			out->ver[out->n] = fam ? 6 : 4;
			ubx_ip_to_eid(out->ver[out->n], ip, &out->eid[out->n]);
			out->n++;
		}
	}
	freeifaddrs(ifa);
	return 0;
}

static struct ubx_dev *dev_find(const char *name)
{
	for (struct ubx_dev *d = devs; d; d = d->next)
		if (!strcmp(d->ifname, name))
			return d;
	return NULL;
}

/* Find the devices again (dev_lock held): new ones are added, gone ones marked. */
static int refresh(void)
{
	struct ifaddrs *ifa, *i;

	if (getifaddrs(&ifa))
		return -errno;
	for (struct ubx_dev *d = devs; d; d = d->next)
		d->present = false;
	for (i = ifa; i; i = i->ifa_next) {
		struct ubx_dev *d;

		if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK) ||
		    !usable_addr(i->ifa_addr) || strlen(i->ifa_name) >= IF_NAMESIZE ||
		    !dev_allowed(i->ifa_name))
			continue;
		d = dev_find(i->ifa_name);
		if (!d) {
			d = calloc(1, sizeof(*d));
			if (!d)
				continue;
			snprintf(d->ifname, sizeof(d->ifname), "%s", i->ifa_name);
			snprintf(d->pub.name, sizeof(d->pub.name), "%s", i->ifa_name);
			snprintf(d->pub.path, sizeof(d->pub.path), "/sys/class/net/%s", i->ifa_name);
			d->pub.type = URMA_TRANSPORT_UB;
			d->pub.sysfs_dev = (struct urma_sysfs_dev *)d;
			/* Appended: the list keeps the order devices were first seen in. */
			struct ubx_dev **t = &devs;

			while (*t)
				t = &(*t)->next;
			*t = d;
		}
		d->present = true;
	}
	freeifaddrs(ifa);
	return 0;
}

struct ubx_dev *ubx_dev_of(const urma_device_t *p)
{
	struct ubx_dev *r = NULL;

	if (!p)
		return NULL;
	pthread_mutex_lock(&dev_lock);
	for (struct ubx_dev *d = devs; d; d = d->next)
		if (&d->pub == p)
			r = d;
	pthread_mutex_unlock(&dev_lock);
	return r;
}

void ubx_devs_free(void)
{
	pthread_mutex_lock(&dev_lock);
	while (devs) {
		struct ubx_dev *d = devs;

		devs = d->next;
		free(d);
	}
	pthread_mutex_unlock(&dev_lock);
}

UBX_VISIBLE urma_device_t **urma_get_device_list(int *num_devices)
{
	urma_device_t **list = NULL;
	int n = 0, k = 0, rc;

	if (!num_devices || !ubx_initialized()) {
		errno = EINVAL;
		return NULL;
	}
	*num_devices = 0;
	pthread_mutex_lock(&dev_lock);
	rc = refresh();
	if (rc) {
		pthread_mutex_unlock(&dev_lock);
		errno = -rc;
		return NULL;
	}
	for (struct ubx_dev *d = devs; d; d = d->next)
		n += d->present;
	if (n) {
		list = calloc((size_t)n + 1, sizeof(*list));
		for (struct ubx_dev *d = devs; list && d; d = d->next)
			if (d->present)
				list[k++] = &d->pub;
	}
	pthread_mutex_unlock(&dev_lock);
	if (!n) {
		errno = ENODEV;
		return NULL;
	}
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	*num_devices = n;
	return list;
}

UBX_VISIBLE void urma_free_device_list(urma_device_t **device_list)
{
	free(device_list);
}

UBX_VISIBLE urma_device_t *urma_get_device_by_name(char *dev_name)
{
	struct ubx_dev *d;

	if (!dev_name || !*dev_name || !ubx_initialized()) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&dev_lock);
	refresh();
	d = dev_find(dev_name);
	if (d && !d->present)
		d = NULL;
	pthread_mutex_unlock(&dev_lock);
	if (!d) {
		errno = ENODEV;
		return NULL;
	}
	return &d->pub;
}

UBX_VISIBLE urma_device_t *urma_get_device_by_eid(urma_eid_t eid, urma_transport_type_t type)
{
	urma_device_t *r = NULL;

	if (type != URMA_TRANSPORT_UB || !ubx_initialized()) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&dev_lock);
	refresh();
	for (struct ubx_dev *d = devs; d && !r; d = d->next) {
		struct ubx_eids e;

		if (!d->present || ubx_dev_eids(d->ifname, &e))
			continue;
		for (uint32_t i = 0; i < e.n; i++)
			if (ubx_eid_eq(&e.eid[i], &eid))
				r = &d->pub;
	}
	pthread_mutex_unlock(&dev_lock);
	if (!r)
		errno = ENODEV;
	return r;
}

UBX_VISIBLE urma_eid_info_t *urma_get_eid_list(urma_device_t *dev, uint32_t *cnt)
{
	struct ubx_dev *d = ubx_dev_of(dev);
	urma_eid_info_t *l;
	struct ubx_eids e;
	int rc;

	if (!d || !cnt) {
		errno = EINVAL;
		return NULL;
	}
	*cnt = 0;
	rc = ubx_dev_eids(d->ifname, &e);
	if (rc) {
		errno = -rc;
		return NULL;
	}
	if (!e.n) {
		errno = EADDRNOTAVAIL;
		return NULL;
	}
	l = calloc(e.n, sizeof(*l));
	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < e.n; i++) {
		l[i].eid = e.eid[i];
		l[i].eid_index = i;
	}
	*cnt = e.n;
	return l;
}

UBX_VISIBLE void urma_free_eid_list(urma_eid_info_t *eid_list)
{
	free(eid_list);
}

static urma_mtu_t mtu_enum(uint32_t m)
{
	switch (m) {
	case 256:	return URMA_MTU_256;
	case 512:	return URMA_MTU_512;
	case 1024:	return URMA_MTU_1024;
	case 2048:	return URMA_MTU_2048;
	case 4096:	return URMA_MTU_4096;
	default:	return (urma_mtu_t)0;
	}
}

UBX_VISIBLE urma_status_t urma_query_device(urma_device_t *dev, urma_device_attr_t *attr)
{
	struct ubx_dev *d = ubx_dev_of(dev);
	urma_device_cap_t *c;
	uint32_t mtu = 0, ub;
	char err[128];
	bool native;

	if (!d || !attr)
		return URMA_EINVAL;
	native = ubx_dev_native(d->ifname);
	if (ep_dev_mtu(d->ifname, &mtu, err, sizeof(err)))
		return URMA_EINVAL;
	memset(attr, 0, sizeof(*attr));
	/* A GUID from the device name: stable, unique on the host. */
	snprintf((char *)attr->guid.raw, sizeof(attr->guid.raw), "%s", d->ifname);
	c = &attr->dev_cap;
	c->feature.bs.oor = 1;			/* out-of-order receive range */
	c->feature.bs.selective_retrans = 1;
	c->feature.bs.spray_en = 0;
	c->max_jfc = UBX_MAX_JFC;
	c->max_jfs = UBX_MAX_JFS;
	c->max_jfr = UBX_MAX_JFR;
	c->max_jetty = UBX_MAX_JETTY;
	c->max_jfc_depth = UBX_MAX_JFC_DEPTH;
	c->max_jfs_depth = UBX_MAX_JFS_DEPTH;
	c->max_jfr_depth = UBX_MAX_JFR_DEPTH;
	c->max_jfs_inline_len = UBX_MAX_INLINE;
	c->max_jfs_sge = UBX_MAX_SGE;
	c->max_jfs_rsge = UBX_MAX_RSGE;
	c->max_jfr_sge = UBX_MAX_SGE;
	c->max_msg_size = UBX_MAX_MSG;
	c->max_read_size = UBX_MAX_MSG;
	c->max_write_size = UBX_MAX_MSG;
	/* The core's atomics: one 8-byte word. */
	c->atomic_feat.bs.cas = 1;
	c->atomic_feat.bs.fetch_and_add = 1;
	c->max_cas_size = TP_ATOMIC_LEN;
	c->max_fetch_and_add_size = TP_ATOMIC_LEN;
	c->trans_mode = URMA_TM_RM | URMA_TM_RC | URMA_TM_UM;
	c->congestion_ctrl_alg = URMA_CC_NONE;
	c->max_eid_cnt = UBX_MAX_EIDS;
	c->page_size_cap = 4096;
	c->max_oor_cnt = 256;
	c->rm_order_cap.bs.ot = c->rm_order_cap.bs.oi = c->rm_order_cap.bs.ol = 1;
	c->rc_order_cap = c->rm_order_cap;
	c->rm_tp_cap.bs.rtp = 1;
	c->rm_tp_cap.bs.ctp = native;
	c->rc_tp_cap = c->rm_tp_cap;
	c->um_tp_cap.bs.utp = 1;
	attr->port_cnt = 1;
	ub = ubx_dev_ub_mtu(d->ifname, mtu, native);
	attr->port_attr[0].max_mtu = mtu_enum(ub);
	attr->port_attr[0].active_mtu = mtu_enum(ub);
	attr->port_attr[0].state = d->present ? URMA_PORT_ACTIVE : URMA_PORT_DOWN;
	attr->port_attr[0].active_width = URMA_LINK_X1;
	attr->port_attr[0].active_speed = URMA_SP_10G;
	attr->reserved_jetty_id_min = 1;
	attr->reserved_jetty_id_max = UBX_ID_RESERVED_MAX;
	return URMA_SUCCESS;
}
