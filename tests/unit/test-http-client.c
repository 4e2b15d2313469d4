/* test-http-client.c — the HTTP client (http/client.c) against a small
 * server forked on loopback: a request reaches the pinned address and
 * reads its answer; a URL to another port than the pinned address is
 * refused before any connection (the open-socket check); a name reaches
 * the pinned address without a lookup (no DNS to rebind); a redirect is
 * handed back, never followed; a body past its cap fails; a proxy in the
 * environment is ignored. */
#include "../tap.h"

#include "http/client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int conn_pipe[2];

static void serve(int lfd, uint16_t port)
{
	char req[4096], resp[512];
	static char big[100000];

	memset(big, 'b', sizeof big);
	for (;;) {
		int fd = accept(lfd, NULL, NULL);
		size_t n = 0;
		ssize_t k;
		int len;

		if (fd < 0)
			continue;
		(void)!write(conn_pipe[1], "c", 1);
		while (n < sizeof req - 1 && (k = read(fd, req + n, sizeof req - 1 - n)) > 0) {
			n += (size_t)k;
			req[n] = '\0';
			if (strstr(req, "\r\n\r\n"))
				break;
		}
		req[n] = '\0';
		if (strstr(req, "GET /redir ")) {
			len = snprintf(resp, sizeof resp,
			               "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.2:%u/ok\r\n"
			               "Content-Length: 0\r\nConnection: close\r\n\r\n",
			               port);
			(void)!write(fd, resp, (size_t)len);
		} else if (strstr(req, "GET /big ")) {
			len = snprintf(resp, sizeof resp,
			               "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: "
			               "close\r\n\r\n",
			               sizeof big);
			(void)!write(fd, resp, (size_t)len);
			(void)!write(fd, big, sizeof big);
		} else {
			len = snprintf(
			        resp, sizeof resp,
			        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Seen-Host: "
			        "%s\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
			        strstr(req, "Host: rebind.invalid") ? "name" : "addr");
			(void)!write(fd, resp, (size_t)len);
		}
		close(fd);
	}
}

struct result {
	int done, rc, status;
	char body[64];
	size_t got;
	char seen_host[16];
	int connects_ok, connects_refused;
};

static int on_head(void *ctx, int status, const struct cd_http_call *rq)
{
	struct result *r = ctx;
	size_t n = 0;
	const char *v = cd_http_call_header(rq, "x-seen-host", &n);

	r->status = status;
	if (v && n < sizeof r->seen_host) {
		memcpy(r->seen_host, v, n);
		r->seen_host[n] = '\0';
	}
	return 0;
}

static int on_body(void *ctx, const char *p, size_t n)
{
	struct result *r = ctx;

	if (r->got + n < sizeof r->body)
		memcpy(r->body + r->got, p, n);
	r->got += n;
	return 0;
}

static void on_done(void *ctx, int rc, int status, const char *why)
{
	struct result *r = ctx;

	(void)status;
	(void)why;
	r->done = 1;
	r->rc = rc;
}

static void on_connect(void *ctx, const struct sockaddr_storage *a, int allowed)
{
	struct result *r = ctx;

	(void)a;
	if (allowed)
		r->connects_ok++;
	else
		r->connects_refused++;
}

static int connections(void)
{
	char buf[64];
	ssize_t n;
	int total = 0;

	usleep(50000);
	while ((n = read(conn_pipe[0], buf, sizeof buf)) > 0)
		total += (int)n;
	return total;
}

static void fetch(const char *host, uint16_t port, uint16_t pin_port, const char *url,
                  size_t max_body, struct result *r)
{
	struct sockaddr_storage pin;
	struct sockaddr_in *in = (struct sockaddr_in *)&pin;
	struct cd_http_client_cfg cc;
	struct cd_http_call_cfg q;
	struct cd_http_client *c = NULL;
	struct cd_err err = { 0, "" };
	int i;

	memset(r, 0, sizeof *r);
	memset(&pin, 0, sizeof pin);
	in->sin_family = AF_INET;
	in->sin_port = htons(pin_port);
	in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memset(&cc, 0, sizeof cc);
	cc.host = host;
	cc.port = port;
	cc.pin = &pin;
	cc.on_connect = on_connect;
	cc.ctx = r;
	if (cd_http_client_new(&cc, &c, &err) < 0) {
		diag("client: %s", err.msg);
		r->rc = -999;
		return;
	}
	memset(&q, 0, sizeof q);
	q.method = "GET";
	q.url = url;
	q.timeout_ms = 5000;
	q.max_body = max_body;
	q.on_head = on_head;
	q.on_body = on_body;
	q.on_done = on_done;
	q.ctx = r;
	if (cd_http_start(c, &q, NULL, &err) < 0) {
		diag("start: %s", err.msg);
		r->rc = -998;
	}
	for (i = 0; i < 500 && !r->done && r->rc == 0; i++)
		cd_http_client_run(c, NULL, 0, 100);
	cd_http_client_free(c);
}

int main(void)
{
	struct sockaddr_in a;
	socklen_t al = sizeof a;
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	uint16_t port;
	char url[128];
	struct result r;
	pid_t pid;

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 16) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &al) < 0 || pipe2(conn_pipe, O_CLOEXEC) < 0) {
		printf("not ok 1 - cannot listen on loopback\n1..1\n");
		return 1;
	}
	port = ntohs(a.sin_port);
	pid = fork();
	if (pid == 0) {
		serve(lfd, port);
		_exit(0);
	}
	close(lfd);
	fcntl(conn_pipe[0], F_SETFL, O_NONBLOCK);
	/* A proxy in the environment must not be used. */
	setenv("http_proxy", "http://127.0.0.1:9", 1);
	setenv("ALL_PROXY", "http://127.0.0.1:9", 1);

	snprintf(url, sizeof url, "http://127.0.0.1:%u/ok", port);
	fetch("127.0.0.1", port, port, url, 1024, &r);
	is_int(r.rc, 0,
	       "a request to the pinned address completes (the environment's proxy unused)");
	is_int(r.status, 200, "... status 200");
	is_str(r.body, "ok", "... its body");
	is_int(r.connects_ok, 1, "... one connection, to the pinned address");
	is_int(connections(), 1, "... which the server saw");

	/* The URL says one port, the vetted address another: refused. */
	fetch("127.0.0.1", port, (uint16_t)(port == 65535 ? 1 : port + 1), url, 1024, &r);
	is_int(r.rc, -CD_E_DENIED, "a URL to another address than the pinned one is refused");
	is_int(r.connects_refused, 1, "... by the open-socket check");
	is_int(connections(), 0, "... and the server saw no connection");

	/* A name goes to the pinned address without a lookup. */
	snprintf(url, sizeof url, "http://rebind.invalid:%u/ok", port);
	fetch("rebind.invalid", port, port, url, 1024, &r);
	is_int(r.rc, 0, "a name reaches the pinned address without a DNS lookup");
	is_str(r.seen_host, "name", "... sending its own name as Host");
	is_int(connections(), 1, "... one connection");

	/* A redirect is handed back, not followed. */
	snprintf(url, sizeof url, "http://127.0.0.1:%u/redir", port);
	fetch("127.0.0.1", port, port, url, 1024, &r);
	is_int(r.status, 302, "a redirect comes back as its status");
	is_int(r.connects_ok + r.connects_refused, 1, "... and is not followed");
	is_int(connections(), 1, "... one connection in all");

	/* A body past its cap fails the request. */
	snprintf(url, sizeof url, "http://127.0.0.1:%u/big", port);
	fetch("127.0.0.1", port, port, url, 1000, &r);
	is_int(r.rc, -CD_E_LIMIT, "a body past max_body fails with -CD_E_LIMIT");
	ok(r.got <= 1000, "... having handed on no more than the cap (%zu)", r.got);
	fetch("127.0.0.1", port, port, url, 200000, &r);
	is_int(r.rc, 0, "... and one within a larger cap completes (positive control)");
	is_int(r.got, 100000, "... all of it");

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
