// SPDX-License-Identifier: BSD-2-Clause
#include "xsk/xsk_mode.h"

#include <errno.h>
#include <sys/socket.h>

#include <linux/if_xdp.h>

#ifndef SOL_XDP
#define SOL_XDP 283
#endif

enum xsk_mode xsk_mode_for(enum xsk_mode asked, bool generic_xdp, unsigned ndevs)
{
	return asked == XSK_MODE_AUTO && (generic_xdp || ndevs > 1) ? XSK_MODE_COPY : asked;
}

uint16_t xsk_mode_bind_flags(enum xsk_mode mode)
{
	return mode == XSK_MODE_COPY ? XDP_COPY : mode == XSK_MODE_ZEROCOPY ? XDP_ZEROCOPY : 0;
}

bool xsk_fd_zerocopy(int fd)
{
	struct xdp_options opts = { 0 };
	socklen_t optlen = sizeof(opts);

	return !getsockopt(fd, SOL_XDP, XDP_OPTIONS, &opts, &optlen) && (opts.flags & XDP_OPTIONS_ZEROCOPY);
}

const char *xsk_mode_bound_name(bool zerocopy) { return zerocopy ? "zero-copy" : "copy"; }

const char *xsk_mode_refusal(enum xsk_mode mode, int err)
{
	/* EOPNOTSUPP: no zero-copy in the driver (veth); EINVAL: not for this
	 * queue or these frames (the driver's XDP_SETUP_XSK_POOL). */
	return mode == XSK_MODE_ZEROCOPY && (err == -EOPNOTSUPP || err == -EINVAL) ?
		       " (the driver refuses zero-copy AF_XDP; copy mode is the default)" : "";
}
