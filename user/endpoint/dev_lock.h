/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef UBXDP_ENDPOINT_DEV_LOCK_H
#define UBXDP_ENDPOINT_DEV_LOCK_H

/*
 * Locks on a device: abstract unix sockets named "ubxdp-<scope>/<ifindex>/<what>",
 * bound or refused (EADDRINUSE) at once, released by the kernel with the
 * process however it ends. The abstract namespace is the network
 * namespace's, as an ifindex is.
 */

/* The lock's fd, or -errno (-EADDRINUSE: another holds it). */
int dev_lock_try(const char *scope, int ifindex, const char *what);
/* The same, retried for up to wait_ms while another holds it. */
int dev_lock_wait(const char *scope, int ifindex, const char *what, unsigned wait_ms);
/* Closes *fd if held, and marks it not held (-1). */
void dev_unlock(int *fd);

#endif
