/* egress-relay.h — one direction of an established egress connection:
 * bytes from a source socket to a destination socket, without copying them
 * through user space where the kernel can move them (splice through a pipe
 * of our own), and through a bounded buffer where it cannot.
 *
 * A direction may start with bytes of the proxy's own (the rewritten
 * request head, the TLS ClientHello that was checked, the "200" line):
 * they are queued in the buffer and always sent before anything relayed.
 * A direction holds at most one pipe (CD_EGRESS_PIPE_SIZE, read into
 * while it has room) or one buffer (CD_EGRESS_RELAY_BUF, refilled once
 * empty) of peer bytes: a slow reader slows the writer.
 *
 * splice(2) has no MSG_NOSIGNAL: a direction splices only when the caller
 * told cd_relay_init() it may (the process ignores SIGPIPE), and falls
 * back to recv/send when a pipe cannot be had or a socket refuses splice.
 *
 * Trust boundary: the bytes are untrusted and never looked at; only their
 * count is kept.  The library never blocks: both sockets are non-blocking. */
#ifndef CD_EGRESS_RELAY_H
#define CD_EGRESS_RELAY_H

#include <stddef.h>
#include <stdint.h>

struct cd_relay {
	int pipe[2];  /* -1, -1: recv/send through buf */
	size_t piped; /* bytes in the pipe, not yet delivered */
	char *buf;    /* NULL until needed; CD_EGRESS_RELAY_BUF bytes */
	size_t off, len;
	int full;       /* the pipe took no more: wait for the destination */
	int eof;        /* the source said it is done */
	int shut;       /* and the destination was told (SHUT_WR) */
	uint64_t moved; /* bytes delivered to the destination */
};

/* Set up one direction.  With use_splice, a pipe is made (O_CLOEXEC,
 * O_NONBLOCK, enlarged to CD_EGRESS_PIPE_SIZE when the kernel lets us);
 * when that fails the direction uses the buffer instead.  Returns 0, or
 * -ENOMEM.  Release with cd_relay_release() either way. */
int cd_relay_init(struct cd_relay *r, int use_splice);
void cd_relay_release(struct cd_relay *r);

/* Queue bytes of the proxy's own, sent before anything relayed.  At most
 * CD_EGRESS_RELAY_BUF bytes may wait at once: -CD_E_LIMIT past that,
 * -ENOMEM when the buffer cannot be had. */
int cd_relay_queue(struct cd_relay *r, const void *data, size_t len);

/* Move what can be moved now from src to dst: deliver what waits, then
 * read and deliver again until either socket would block.  When budget is
 * not NULL, read at most *budget bytes in all (it is decreased).  At the
 * source's end of file, once everything is delivered, dst is shut down
 * for writing.  Returns 0, or -errno on a socket error (the connection is
 * over). */
int cd_relay_pump(struct cd_relay *r, int src, int dst, uint64_t *budget);

/* Bytes read but not yet delivered. */
static inline size_t cd_relay_pending(const struct cd_relay *r)
{
	return r->len + r->piped;
}

/* 1 when the source should be read now: it has not ended, and the pipe
 * has room (or the buffer is empty). */
static inline int cd_relay_wants_read(const struct cd_relay *r)
{
	if (r->eof)
		return 0;
	return r->pipe[0] >= 0 ? !r->full && r->len == 0 : r->len == 0;
}

/* 1 when this direction moves bytes with splice. */
static inline int cd_relay_splices(const struct cd_relay *r)
{
	return r->pipe[0] >= 0;
}

#endif
