// SPDX-License-Identifier: BSD-2-Clause
/*
 * The UB MTU an endpoint can use (ep.h): the largest whose data packets fit
 * its devices' MTU, the path's the kernel knows, and its UMEM frames (or,
 * multi-buffer, its jumbo buffer).
 */
#include "endpoint/ep_int.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <sys/socket.h>

#include "endpoint/ep_share.h"
#include "io/nl.h"
#include "lib/uboe_wrap.h"
#include "ub_wire.h"

/* What a data packet of a UB MTU's payload adds, above the payload: the
 * largest stack the core sends with a full payload, the last packet of a
 * Write with immediate (tp_enc_ta), 60 bytes; CTP's is less. */
#define TP_DATA_HDR_MAX	(sizeof(struct ub_tph) + sizeof(struct ub_tah) + sizeof(struct ub_maetah) + \
			 sizeof(struct ub_immetah) + sizeof(struct ub_tvetah))
#define XSK_RX_HEADROOM	256		/* XDP_PACKET_HEADROOM: a received frame starts there */

uint32_t ep_ub_mtu_fit(uint32_t dev_mtu, bool native, uint8_t ip_ver, uint32_t frame_size)
{
	/* The IP packet's overhead; a native frame adds LPH and NTH, which the
	 * device MTU covers too (everything after the Ethernet header). */
	const uint32_t l3 = (native ? (uint32_t)UB_NATIVE_HDR_LEN : 0) + (ip_ver == 6 ? 40 : 20) +
			    8 + (uint32_t)TP_DATA_HDR_MAX + UBOE_ICRC_LEN;
	uint32_t best = 0;

	/* The UMEM frame: sent from UBOE_WRAP_HDR_MAX with room for any TP
	 * packet (TP_HDR_MAX), received at the kernel's headroom. Multi-buffer
	 * (frame_size 0): a packet is built whole in JUMBO_BUF, then split. */
	if (!frame_size)
		frame_size = JUMBO_BUF;
	for (uint32_t m = EP_UB_MTU_MIN; m <= EP_UB_MTU_MAX; m *= 2)
		if (m + l3 <= dev_mtu && m + TP_HDR_MAX + UBOE_WRAP_HDR_MAX + UBOE_ICRC_LEN +
					 XSK_RX_HEADROOM <= frame_size)
			best = m;
	return best;
}

uint32_t ep_frame_bound(void)
{
	static int sg = -1;

	if (sg < 0)
		sg = xsk_mt_sg_supported();
	return sg ? 0 : EP_FRAME_SIZE;
}

uint32_t ep_shared_ub_mtu(const char *dev, uint32_t dev_mtu, bool native, bool no_direct, uint8_t ip_ver)
{
	if (!no_direct && ep_share_queues_free(dev))
		return ep_ub_mtu_fit(dev_mtu, native, ip_ver, ep_frame_bound());
	return ep_ub_mtu_fit(dev_mtu < UB_EP_VETH_MTU_MAX ? dev_mtu : UB_EP_VETH_MTU_MAX, native, ip_ver,
			     EP_FRAME_SIZE);
}

int ep_dev_mtu(const char *dev, uint32_t *mtu, char *err, size_t errlen)
{
	struct nl *rt = nl_open_route(err, errlen);
	struct nl_link l;
	int rc;

	if (!rt)
		return -EIO;
	rc = nl_link_get(rt, 0, dev, &l);
	if (rc == -ENODEV)
		snprintf(err, errlen, "no device %s", dev);
	else if (rc)
		snprintf(err, errlen, "device %s: %s", dev, nl_error(rt));
	else
		*mtu = l.mtu;
	nl_close(rt);
	return rc;
}

uint32_t ep_ub_mtu_max(const struct ep *e, uint8_t ip_ver, uint32_t *dev_mtu, uint32_t *member)
{
	uint32_t dmin = UINT32_MAX, kmin = 0;

	for (uint32_t k = 0; k < e->nmem; k++)
		if (e->dev_mtu[k] < dmin) {
			dmin = e->dev_mtu[k];
			kmin = k;
		}
	if (dev_mtu)
		*dev_mtu = dmin;
	if (member)
		*member = kmin;
	return ep_ub_mtu_fit(dmin, e->cfg.native.ethertype != 0, ip_ver,
			     e->xm && xsk_mt_is_sg(e->xm) ? 0 : EP_FRAME_SIZE);
}

uint32_t ep_path_mtu(const char *dev, uint8_t ip_ver, const uint8_t ip[16], char *why, size_t whylen)
{
	const int ifindex = (int)if_nametoindex(dev);
	char err[128] = "";
	struct nl *rt = ifindex ? nl_open_route(err, sizeof(err)) : NULL;
	struct nl_route r;
	uint32_t mtu = 0;

	if (why && whylen)
		*why = 0;
	if (!rt) {
		if (why)
			snprintf(why, whylen, "%s", ifindex ? err : "no such device");
		return 0;
	}
	if (nl_route_get(rt, ip_ver == 6 ? AF_INET6 : AF_INET, ip, ifindex, &r)) {
		if (why)
			snprintf(why, whylen, "no route by %s: %s", dev, nl_error(rt));
	} else if (r.oif != ifindex) {
		if (why)
			snprintf(why, whylen, "the route leaves by another device than %s", dev);
	} else {
		mtu = r.mtu;
	}
	nl_close(rt);
	return mtu;
}

uint32_t ep_ub_mtu_to(const struct ep *e, const struct ep_peer *p)
{
	const struct ep_share *sh = e->lead ? e->lead->sh : e->sh;
	uint32_t m = ep_ub_mtu_max(e, p->ip_ver, NULL, NULL), v;

	if (!sh || !p->local)
		return m;
	v = ep_ub_mtu_fit(ep_share_veth_mtu(sh), e->cfg.native.ethertype != 0, p->ip_ver, EP_FRAME_SIZE);
	return v < m ? v : m;
}

uint32_t ep_path_ub_mtu(const char *dev, uint8_t ip_ver, const uint8_t ip[16], uint32_t *path_mtu,
			char *why, size_t whylen)
{
	uint32_t pm = ep_path_mtu(dev, ip_ver, ip, why, whylen);

	*path_mtu = pm;
	/* No LPH or NTH beyond a UB2E switch; the frame bound is the device's
	 * fit's, so none here (multi-buffer's JUMBO_BUF holds any). */
	return pm ? ep_ub_mtu_fit(pm, false, ip_ver, 0) : UINT32_MAX;
}
