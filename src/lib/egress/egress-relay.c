/* egress-relay.c — see egress-relay.h.
 *
 * Trust boundary: the relayed bytes are never parsed; what is bounded is
 * how many wait here (one pipe or one buffer per direction) and how many
 * are read when the caller gives a budget (a plain-HTTP request body). */
#include "egress-relay.h"

#include "util/bounds.h"
#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CD_RELAY_ROUNDS 16

int cd_relay_init(struct cd_relay *r, int use_splice)
{
	memset(r, 0, sizeof *r);
	r->pipe[0] = r->pipe[1] = -1;
	if (!use_splice || pipe2(r->pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		r->pipe[0] = r->pipe[1] = -1;
		return 0;
	}
	/* A larger pipe moves more per call; when the per-user pipe quota
	 * says no, the default one (16 pages) works as well. */
	(void)fcntl(r->pipe[1], F_SETPIPE_SZ, CD_EGRESS_PIPE_SIZE);
	return 0;
}

static void drop_pipe(struct cd_relay *r)
{
	if (r->pipe[0] >= 0)
		close(r->pipe[0]);
	if (r->pipe[1] >= 0)
		close(r->pipe[1]);
	r->pipe[0] = r->pipe[1] = -1;
}

void cd_relay_release(struct cd_relay *r)
{
	if (!r)
		return;
	drop_pipe(r);
	free(r->buf);
	r->buf = NULL;
	r->off = r->len = r->piped = 0;
}

static int want_buf(struct cd_relay *r)
{
	if (!r->buf)
		r->buf = malloc(CD_EGRESS_RELAY_BUF);
	return r->buf ? 0 : -ENOMEM;
}

int cd_relay_queue(struct cd_relay *r, const void *data, size_t len)
{
	if (len == 0)
		return 0;
	if (len > CD_EGRESS_RELAY_BUF - r->len)
		return -CD_E_LIMIT;
	if (want_buf(r) < 0)
		return -ENOMEM;
	if (r->off) {
		memmove(r->buf, r->buf + r->off, r->len);
		r->off = 0;
	}
	memcpy(r->buf + r->len, data, len);
	r->len += len;
	return 0;
}

/* Deliver what waits: the buffer first, then the pipe.  1 when all is
 * delivered, 0 when dst would block, -errno. */
static int deliver(struct cd_relay *r, int dst)
{
	ssize_t n;

	while (r->len > 0) {
		n = send(dst, r->buf + r->off, r->len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		r->off += (size_t)n;
		r->len -= (size_t)n;
		r->moved += (uint64_t)n;
	}
	r->off = 0;
	/* Bytes of our own are sent once: a splicing direction needs the
	 * buffer no more. */
	if (r->buf && r->pipe[0] >= 0) {
		free(r->buf);
		r->buf = NULL;
	}
	while (r->piped > 0) {
		n = splice(r->pipe[0], NULL, dst, NULL, r->piped,
		           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		if (n == 0)
			return -EIO; /* the pipe cannot be empty: it holds r->piped */
		r->piped -= (size_t)n;
		r->moved += (uint64_t)n;
		r->full = 0;
	}
	return 1;
}

/* Read once into the pipe (or the buffer).  Returns 1 + the bytes read
 * (1: the source ended), 0 when it would block, -errno.  A pipe that
 * holds bytes and takes no more is marked full until some are delivered:
 * its EAGAIN says nothing about the source. */
static ssize_t fill(struct cd_relay *r, int src, size_t want)
{
	ssize_t n;

	for (;;) {
		if (r->pipe[0] >= 0) {
			n = splice(src, NULL, r->pipe[1], NULL, want,
			           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (n < 0 && errno == EINVAL && r->piped == 0) {
				/* This source cannot splice: the buffer from now on. */
				drop_pipe(r);
				if (want_buf(r) < 0)
					return -ENOMEM;
				continue;
			}
		} else {
			if (want_buf(r) < 0)
				return -ENOMEM;
			if (want > CD_EGRESS_RELAY_BUF)
				want = CD_EGRESS_RELAY_BUF;
			n = recv(src, r->buf, want, MSG_DONTWAIT);
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (r->piped > 0)
				r->full = 1;
			return 0;
		}
		if (n < 0)
			return -errno;
		if (n == 0)
			r->eof = 1;
		else if (r->pipe[0] >= 0)
			r->piped += (size_t)n;
		else
			r->len = (size_t)n;
		return n + 1;
	}
}

int cd_relay_pump(struct cd_relay *r, int src, int dst, uint64_t *budget)
{
	size_t want;
	ssize_t got;
	int sent, round;

	/* A bounded number of rounds, so that one fast connection cannot
	 * starve the others: epoll calls again while there is work. */
	for (round = 0; round < CD_RELAY_ROUNDS; round++) {
		sent = deliver(r, dst);
		if (sent < 0)
			return sent;
		if (r->eof) {
			if (sent && !r->shut) {
				(void)shutdown(dst, SHUT_WR);
				r->shut = 1;
			}
			return 0;
		}
		/* A pipe takes more while it still holds bytes (the source
		 * keeps flowing while the destination drains); the buffer is
		 * refilled once it is empty. */
		if (!cd_relay_wants_read(r) || (budget && *budget == 0))
			return 0;
		want = CD_EGRESS_PIPE_SIZE;
		if (budget && *budget < want)
			want = (size_t)*budget;
		got = fill(r, src, want);
		if (got < 0)
			return got;
		if (got == 0)
			return 0;
		if (budget)
			*budget -= (uint64_t)(got - 1);
	}
	return 0;
}
