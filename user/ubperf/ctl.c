// SPDX-License-Identifier: BSD-2-Clause
/* ubperf's out-of-band control connection (TCP), with timeouts everywhere. */
#include "ctl.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int ctl_parse_addr(const char *s, uint8_t *ver, uint8_t ip[16])
{
	memset(ip, 0, 16);
	if (inet_pton(AF_INET, s, ip) == 1) {
		*ver = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, ip) == 1) {
		*ver = 6;
		return 0;
	}
	return -1;
}

static void to_sockaddr(uint8_t ver, const uint8_t ip[16], uint16_t port,
			struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (ver == 4) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		memcpy(&a->sin_addr, ip, 4);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		memcpy(&a->sin6_addr, ip, 16);
		*len = sizeof(*a);
	}
}

static int wait_fd(int fd, short ev, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = ev };
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r ? 0 : -ETIMEDOUT;
}

int ctl_connect(uint8_t ver, const uint8_t ip[16], uint16_t port, int timeout_ms)
{
	struct sockaddr_storage ss;
	socklen_t len, el = sizeof(int);
	int fd, rc, soerr = 0, one = 1;
	uint64_t t_end = (uint64_t)time(NULL) + (uint64_t)(timeout_ms + 999) / 1000;

	to_sockaddr(ver, ip, port, &ss, &len);
	/* A refused connection is retried until the deadline: the server may
	 * still be starting. */
	for (;;) {
		fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return -errno;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		rc = connect(fd, (struct sockaddr *)&ss, len);
		if (rc && errno != EINPROGRESS) {
			rc = -errno;
		} else {
			rc = wait_fd(fd, POLLOUT, timeout_ms);
			if (!rc && !getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el) && soerr)
				rc = -soerr;
		}
		if (!rc) {
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
			return fd;
		}
		close(fd);
		if (rc != -ECONNREFUSED || (uint64_t)time(NULL) >= t_end)
			return rc;
		usleep(100000);
	}
}

int ctl_listen(uint16_t port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0), zero = 0, one = 1;

	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1)) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	return fd;
}

int ctl_accept(int lfd, int timeout_ms, uint8_t *ver, uint8_t ip[16])
{
	struct sockaddr_in6 a;
	socklen_t len = sizeof(a);
	int fd, rc, one = 1;

	rc = wait_fd(lfd, POLLIN, timeout_ms > 0 ? timeout_ms : -1);
	if (rc)
		return rc;
	fd = accept4(lfd, (struct sockaddr *)&a, &len, SOCK_CLOEXEC);
	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memset(ip, 0, 16);
	if (IN6_IS_ADDR_V4MAPPED(&a.sin6_addr)) {
		*ver = 4;
		memcpy(ip, &a.sin6_addr.s6_addr[12], 4);
	} else {
		*ver = 6;
		memcpy(ip, &a.sin6_addr, 16);
	}
	return fd;
}

int ctl_send(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ctl_recv(int fd, void *buf, size_t len, int timeout_ms)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n;
		int rc = wait_fd(fd, POLLIN, timeout_ms);

		if (rc)
			return rc;
		n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ctl_readable(int fd)
{
	return wait_fd(fd, POLLIN, 0) == 0;
}

/* Every control message is 32-bit words with 64-bit counters in known places. */
static void swap32(void *p, size_t words, bool to_net)
{
	uint32_t *w = p;

	for (size_t i = 0; i < words; i++)
		w[i] = to_net ? htonl(w[i]) : ntohl(w[i]);
}

void ctl_hello_order(struct ctl_hello *h, bool to_net)
{
	swap32(h, offsetof(struct ctl_hello, path) / 4, to_net);	/* paths are bytes */
}

void ctl_welcome_order(struct ctl_welcome *w, bool to_net)
{
	swap32(w, 4, to_net);
	w->va = to_net ? htobe64(w->va) : be64toh(w->va);
	swap32(w->ch, sizeof(w->ch) / 4, to_net);
}

void ctl_done_order(struct ctl_done *d, bool to_net)
{
	swap32(d, 2, to_net);
	d->messages = to_net ? htobe64(d->messages) : be64toh(d->messages);
	d->bytes = to_net ? htobe64(d->bytes) : be64toh(d->bytes);
	d->duration_ns = to_net ? htobe64(d->duration_ns) : be64toh(d->duration_ns);
}
