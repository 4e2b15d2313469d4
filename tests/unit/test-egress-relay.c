/* test-egress-relay.c — one direction of the egress relay, with splice and
 * with the buffer: the proxy's own bytes go first, everything arrives in
 * order and once, the byte count is exact, the end of the source shuts
 * the destination down, a body budget stops reading where it says, and a
 * destination that is gone is an error, not a signal.  Sockets are
 * socketpairs and loopback TCP pairs made here. */
#include "../tap.h"

#include "util/bounds.h"
#include "egress/egress-relay.h"
#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>

/* A connected pair: [0] is the test's end, [1] the relay's (non-blocking). */
static int pair(int tcp, int fds[2])
{
	struct sockaddr_in sin;
	socklen_t slen = sizeof sin;
	int ls;

	if (!tcp) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
			return -1;
		return fcntl(fds[1], F_SETFL, O_NONBLOCK);
	}
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sin, sizeof sin) < 0 || listen(ls, 1) < 0 ||
	    getsockname(ls, (struct sockaddr *)&sin, &slen) < 0)
		return -1;
	fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fds[0] < 0 || connect(fds[0], (struct sockaddr *)&sin, sizeof sin) < 0)
		return -1;
	fds[1] = accept4(ls, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	close(ls);
	return fds[1] < 0 ? -1 : 0;
}

/* Write n pattern bytes (offset-dependent) to fd, all of them. */
static void pattern(unsigned char *p, size_t off, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)((off + i) * 7 + ((off + i) >> 11));
}

/* Pump src -> dst while the test writes `total` pattern bytes into
 * in[0] (then shuts it) and reads out[0] until end of file.  Returns the
 * bytes read, checks them as it goes. */
static size_t run(struct cd_relay *r, int in[2], int out[2], const char *own, size_t total,
                  int *bad, int *pump_err)
{
	static unsigned char wbuf[65536], rbuf[65536], want[65536];
	size_t sent = 0, got = 0, ownlen = strlen(own);
	int wclosed = 0, done = 0, spins = 0;

	fcntl(in[0], F_SETFL, O_NONBLOCK);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	*bad = 0;
	*pump_err = 0;
	while (!done && spins++ < 2000000) {
		ssize_t n;
		if (sent < total) {
			size_t k = total - sent < sizeof wbuf ? total - sent : sizeof wbuf;
			pattern(wbuf, sent, k);
			n = send(in[0], wbuf, k, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n > 0)
				sent += (size_t)n;
		} else if (!wclosed) {
			shutdown(in[0], SHUT_WR);
			wclosed = 1;
		}
		if (cd_relay_pump(r, in[1], out[1], NULL) < 0) {
			*pump_err = 1;
			return got;
		}
		n = recv(out[0], rbuf, sizeof rbuf, MSG_DONTWAIT);
		if (n == 0)
			done = 1;
		for (ssize_t i = 0; n > 0 && i < n; i++, got++) {
			unsigned char w;
			if (got < ownlen) {
				w = (unsigned char)own[got];
			} else {
				pattern(want, got - ownlen, 1);
				w = want[0];
			}
			if (rbuf[i] != w)
				*bad = 1;
		}
	}
	return got;
}

static void test_mode(int use_splice, int tcp)
{
	const char *name = use_splice ? "splice" : "buffer";
	const char *kind = tcp ? "tcp" : "unix";
	const char own[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	size_t total = 3 * CD_EGRESS_PIPE_SIZE + 12345, got;
	struct cd_relay r;
	int in[2], out[2], bad, perr;

	if (pair(tcp, in) < 0 || pair(tcp, out) < 0) {
		tap_skip("no socket pair");
		return;
	}
	is_int(cd_relay_init(&r, use_splice), 0, "%s/%s: init", name, kind);
	is_int(cd_relay_splices(&r), use_splice, "%s/%s: splices as asked", name, kind);
	is_int(cd_relay_queue(&r, own, sizeof own - 1), 0, "%s/%s: own bytes queued", name, kind);
	got = run(&r, in, out, own, total, &bad, &perr);
	is_int(perr, 0, "%s/%s: no pump error", name, kind);
	is_int(got, total + sizeof own - 1, "%s/%s: every byte arrives once, own bytes first", name,
	       kind);
	is_int(bad, 0, "%s/%s: in order and unchanged", name, kind);
	is_int(r.moved, total + sizeof own - 1, "%s/%s: the count is exact", name, kind);
	ok(r.eof && r.shut, "%s/%s: the end of the source shut the destination", name, kind);
	is_int(cd_relay_pending(&r), 0, "%s/%s: nothing left behind", name, kind);
	cd_relay_release(&r);
	cd_relay_release(&r); /* twice is fine */
	ok(r.pipe[0] == -1 && r.buf == NULL, "%s/%s: released", name, kind);
	close(in[0]);
	close(in[1]);
	close(out[0]);
	close(out[1]);
}

static void test_budget(int use_splice)
{
	const char *name = use_splice ? "splice" : "buffer";
	unsigned char data[100], back[200];
	uint64_t budget = 10;
	struct cd_relay r;
	int in[2], out[2];
	ssize_t n;

	if (pair(0, in) < 0 || pair(0, out) < 0) {
		tap_skip("no socket pair");
		return;
	}
	memset(data, 'b', sizeof data);
	cd_relay_init(&r, use_splice);
	(void)!write(in[0], data, sizeof data);
	is_int(cd_relay_pump(&r, in[1], out[1], &budget), 0, "%s: pump with a budget", name);
	is_int(budget, 0, "%s: the budget is spent", name);
	n = recv(out[0], back, sizeof back, MSG_DONTWAIT);
	is_int(n, 10, "%s: only the budget's bytes are relayed", name);
	is_int(cd_relay_pump(&r, in[1], out[1], &budget), 0, "%s: pump again", name);
	n = recv(out[0], back, sizeof back, MSG_DONTWAIT);
	ok(n < 0 && errno == EAGAIN, "%s: still nothing past the budget", name);
	n = recv(in[1], back, sizeof back, MSG_DONTWAIT);
	is_int(n, 90, "%s: the rest waits in the source, unread", name);
	cd_relay_release(&r);
	close(in[0]);
	close(in[1]);
	close(out[0]);
	close(out[1]);
}

static void test_gone(int use_splice)
{
	const char *name = use_splice ? "splice" : "buffer";
	static unsigned char data[200000];
	struct cd_relay r;
	int in[2], out[2], rc = 0, i;

	if (pair(1, in) < 0 || pair(1, out) < 0) {
		tap_skip("no socket pair");
		return;
	}
	cd_relay_init(&r, use_splice);
	close(out[0]); /* the destination went away */
	fcntl(in[0], F_SETFL, O_NONBLOCK);
	for (i = 0; i < 200 && rc == 0; i++) {
		(void)!send(in[0], data, sizeof data, MSG_DONTWAIT | MSG_NOSIGNAL);
		rc = cd_relay_pump(&r, in[1], out[1], NULL);
		usleep(1000);
	}
	ok(rc < 0, "%s: a destination that is gone is an error (%d)", name, rc);
	cd_relay_release(&r);
	close(in[0]);
	close(in[1]);
	close(out[1]);
}

static void test_queue(void)
{
	static char big[CD_EGRESS_RELAY_BUF];
	struct cd_relay r;

	cd_relay_init(&r, 0);
	is_int(cd_relay_queue(&r, big, sizeof big), 0, "a full buffer of own bytes is queued");
	is_int(cd_relay_queue(&r, "x", 1), -CD_E_LIMIT, "one byte more is refused");
	is_int(cd_relay_queue(&r, "x", 0), 0, "nothing is always fine");
	is_int(cd_relay_pending(&r), sizeof big, "pending counts the queued bytes");
	ok(!cd_relay_wants_read(&r), "no reading while own bytes wait");
	cd_relay_release(&r);
	cd_relay_release(NULL);
}

int main(void)
{
	tap_start(60);
	/* splice has no MSG_NOSIGNAL: the proxy ignores SIGPIPE, so do we. */
	signal(SIGPIPE, SIG_IGN);
	test_mode(1, 0);
	test_mode(1, 1);
	test_mode(0, 0);
	test_mode(0, 1);
	test_budget(1);
	test_budget(0);
	test_gone(1);
	test_gone(0);
	test_queue();
	return tap_done();
}
