/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef UBPERF_CTL_H
#define UBPERF_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ubperf.h"

int ctl_parse_addr(const char *s, uint8_t *ver, uint8_t ip[16]);
/* Connected socket, or -errno (-ETIMEDOUT, -ECONNREFUSED after retrying). */
int ctl_connect(uint8_t ver, const uint8_t ip[16], uint16_t port, int timeout_ms);
int ctl_listen(uint16_t port);	/* dual-stack */
/* timeout_ms <= 0: wait forever. Fills the client's address. */
int ctl_accept(int lfd, int timeout_ms, uint8_t *ver, uint8_t ip[16]);
int ctl_send(int fd, const void *buf, size_t len);
int ctl_recv(int fd, void *buf, size_t len, int timeout_ms);
int ctl_readable(int fd);
void ctl_hello_order(struct ctl_hello *h, bool to_net);
void ctl_welcome_order(struct ctl_welcome *w, bool to_net);
void ctl_done_order(struct ctl_done *d, bool to_net);

#endif
