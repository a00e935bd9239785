/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Zero-copy or copy AF_XDP, for xsk_port and xsk_mt.
 *
 * XSK_MODE_AUTO binds naming neither XDP_ZEROCOPY nor XDP_COPY: the kernel
 * then tries zero-copy and, where the driver refuses it (veth: EOPNOTSUPP,
 * native or generic XDP alike), binds in copy mode within the same bind(). A
 * bind of our own retried in copy mode would do the same with a failed bind
 * between, which libxdp 1.3.1 answers by unmapping the UMEM's rings unless
 * they are the ones it was handed (xsk_mt.c). Only the UMEM's first socket
 * chooses: a socket sharing the UMEM takes its mode, on any device.
 */
#ifndef UBXDP_XSK_MODE_H
#define UBXDP_XSK_MODE_H

#include <stdbool.h>
#include <stdint.h>

enum xsk_mode {
	XSK_MODE_AUTO,		/* zero-copy where the driver has it, else copy */
	XSK_MODE_COPY,
	XSK_MODE_ZEROCOPY,	/* the bind fails where the driver has none */
};

/* The mode to bind in, asked for behind XDP attached generic_xdp or not,
 * for a UMEM whose sockets are on ndevs devices. Auto is copy:
 * - behind generic XDP, as a driver's zero-copy path runs only its own
 *   native XDP (frames of a generic program reach the socket by copy, and
 *   zero-copy tx needs the driver's XDP rings);
 * - on several devices: the first socket's mode binds every socket sharing
 *   the UMEM (the kernel forces it on XDP_SHARED_UMEM binds), so a second
 *   device without zero-copy would refuse the bind, and one without native
 *   XDP of its own (the WPS egress's --out-dev) would take zero-copy and
 *   then fail every tx wakeup. */
enum xsk_mode xsk_mode_for(enum xsk_mode asked, bool generic_xdp, unsigned ndevs);
/* The bind flags that ask for the mode. */
uint16_t xsk_mode_bind_flags(enum xsk_mode mode);
/* Whether socket fd is bound zero-copy (XDP_OPTIONS). */
bool xsk_fd_zerocopy(int fd);
/* What to add to a failed bind's error -err when it was asked for mode:
 * the driver's refusal of a forced zero-copy, said as such; else "". */
const char *xsk_mode_refusal(enum xsk_mode mode, int err);
/* "zero-copy" or "copy": the mode a socket was bound in, for reports. */
const char *xsk_mode_bound_name(bool zerocopy);

#endif
