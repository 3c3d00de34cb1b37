// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-integrity: the TCP control channel. Every message has the same
 * fixed size; integers travel big-endian.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "integrity.h"

#define SI_MAGIC	0x53524954u	/* "SRIT" */

struct si_wire {
	uint32_t magic;
	uint32_t type;
	uint64_t v[SI_MSG_WORDS];
	uint8_t gid[16];
	char text[SI_ERR_LEN];
};

_Static_assert(sizeof(struct si_wire) == 8 + 8 * SI_MSG_WORDS + 16 + SI_ERR_LEN,
	       "wire message has padding");

static void set_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int remaining_ms(double deadline)
{
	double left = deadline - si_now();

	if (left <= 0)
		return 0;
	if (left > 3600)
		return 3600 * 1000;
	return (int)(left * 1000) + 1;
}

int si_ctl_listen(const char *port, char *err, size_t errlen)
{
	struct addrinfo hints = {
		.ai_flags = AI_PASSIVE,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res, *ai;
	int fd = -1, one = 1, zero = 0, rc;
	int families[] = { AF_INET6, AF_INET };
	unsigned int i;

	for (i = 0; i < 2 && fd < 0; i++) {
		hints.ai_family = families[i];
		rc = getaddrinfo(NULL, port, &hints, &res);
		if (rc) {
			snprintf(err, errlen, "port %s: %s", port,
				 gai_strerror(rc));
			continue;
		}
		for (ai = res; ai; ai = ai->ai_next) {
			fd = socket(ai->ai_family, ai->ai_socktype,
				    ai->ai_protocol);
			if (fd < 0)
				continue;
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				   sizeof(one));
			if (ai->ai_family == AF_INET6)
				setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY,
					   &zero, sizeof(zero));
			if (!bind(fd, ai->ai_addr, ai->ai_addrlen) &&
			    !listen(fd, 1))
				break;
			snprintf(err, errlen, "bind/listen on port %s: %s",
				 port, strerror(errno));
			close(fd);
			fd = -1;
		}
		freeaddrinfo(res);
	}
	return fd;
}

int si_ctl_accept(int lfd, unsigned int wait_s, char *err, size_t errlen)
{
	double deadline = si_now() + wait_s;
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	int fd, rc;

	for (;;) {
		rc = poll(&pfd, 1, remaining_ms(deadline));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			return -1;
		}
		if (rc == 0) {
			snprintf(err, errlen,
				 "no client connected within %u s", wait_s);
			return -1;
		}
		fd = accept(lfd, NULL, NULL);
		if (fd >= 0)
			break;
		if (errno != EINTR && errno != ECONNABORTED) {
			snprintf(err, errlen, "accept: %s", strerror(errno));
			return -1;
		}
	}
	set_nodelay(fd);
	return fd;
}

/* A non-blocking connect bounded by a few seconds. */
static int try_connect(const struct addrinfo *ai, char *err, size_t errlen)
{
	struct pollfd pfd;
	socklen_t len = sizeof(int);
	int fd, flags, soerr = 0;

	fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
		snprintf(err, errlen, "connect: %s", strerror(errno));
		goto fail;
	}
	pfd.fd = fd;
	pfd.events = POLLOUT;
	if (poll(&pfd, 1, 3000) <= 0) {
		snprintf(err, errlen, "connect: timed out");
		goto fail;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) || soerr) {
		snprintf(err, errlen, "connect: %s", strerror(soerr));
		goto fail;
	}
	fcntl(fd, F_SETFL, flags);
	set_nodelay(fd);
	return fd;
fail:
	close(fd);
	return -1;
}

int si_ctl_connect(const char *host, const char *port, unsigned int wait_s,
		   char *err, size_t errlen)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	double deadline = si_now() + wait_s;
	struct addrinfo *res, *ai;
	int fd = -1, rc;

	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "%s port %s: %s", host, port,
			 gai_strerror(rc));
		return -1;
	}
	for (;;) {
		for (ai = res; ai && fd < 0; ai = ai->ai_next)
			fd = try_connect(ai, err, errlen);
		if (fd >= 0 || si_now() >= deadline)
			break;
		usleep(200 * 1000);
	}
	freeaddrinfo(res);
	return fd;
}

int si_ctl_send(int fd, const struct si_msg *m)
{
	struct si_wire w;
	const char *p = (const char *)&w;
	size_t left = sizeof(w);
	unsigned int i;
	ssize_t n;

	memset(&w, 0, sizeof(w));
	w.magic = htobe32(SI_MAGIC);
	w.type = htobe32(m->type);
	for (i = 0; i < SI_MSG_WORDS; i++)
		w.v[i] = htobe64(m->v[i]);
	memcpy(w.gid, m->gid, sizeof(w.gid));
	memcpy(w.text, m->text, sizeof(w.text));
	w.text[SI_ERR_LEN - 1] = '\0';

	while (left) {
		n = send(fd, p, left, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		left -= n;
	}
	return 0;
}

int si_ctl_recv(int fd, struct si_msg *m, double deadline)
{
	struct si_wire w;
	char *p = (char *)&w;
	size_t left = sizeof(w);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	unsigned int i;
	ssize_t n;
	int rc;

	while (left) {
		rc = poll(&pfd, 1, remaining_ms(deadline));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return -1;
		if (rc == 0)
			return -2;
		n = recv(fd, p, left, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		left -= n;
	}
	if (be32toh(w.magic) != SI_MAGIC)
		return -1;
	m->type = be32toh(w.type);
	for (i = 0; i < SI_MSG_WORDS; i++)
		m->v[i] = be64toh(w.v[i]);
	memcpy(m->gid, w.gid, sizeof(m->gid));
	memcpy(m->text, w.text, sizeof(m->text));
	m->text[SI_ERR_LEN - 1] = '\0';
	return 0;
}
