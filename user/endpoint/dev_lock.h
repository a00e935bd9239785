/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef UBXDP_ENDPOINT_DEV_LOCK_H
#define UBXDP_ENDPOINT_DEV_LOCK_H

#include <stdbool.h>

/*
 * Locks on a device: abstract unix sockets named "ubxdp-<scope>/<ifindex>/<what>",
 * bound or refused (EADDRINUSE) at once, released by the kernel with the
 * process however it ends. The abstract namespace is the network
 * namespace's, as an ifindex is.
 */

/* The lock's fd, or -errno (-EADDRINUSE: another holds it). */
int dev_lock_try(const char *scope, int ifindex, const char *what);
/* The same, retried while another holds it until wait_ms have passed (CLOCK_MONOTONIC). */
int dev_lock_wait(const char *scope, int ifindex, const char *what, unsigned wait_ms);
/* The lock of every endpoint opening the device (ubperf's, liburma's alike),
 * held from its check that no program is on it to the attach of its own:
 * two that start at once cannot both pass the check. 0 ms: tried once. */
int dev_lock_open(int ifindex, unsigned wait_ms);
/* Held by an endpoint (ep_xdp: ubperf's, and liburma's own veth's program
 * alike) from its attach for as long as its program is on the device, given
 * up before it detaches: a program of another kind found there with this
 * held is a live process's, not one just ended whose link the kernel has
 * still to release. */
int dev_lock_attached(int ifindex);
/* Does another hold it? (Bound and let go at once: ask under dev_lock_open,
 * which every taker of it holds.) */
bool dev_lock_attached_held(int ifindex);
/* Closes *fd if held, and marks it not held (-1). */
void dev_unlock(int *fd);

#endif
