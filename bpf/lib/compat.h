/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Constants a BPF object needs but cannot take from where user space does:
 * the address families are in <sys/socket.h>, a libc header, not among the
 * uapi headers the programs are built against. One place for the fallbacks,
 * so that no program defines its own.
 */
#ifndef UBXDP_COMPAT_H
#define UBXDP_COMPAT_H

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

#endif
