/* test-httpd.c — the HTTP server wrapper: routing, addresses, form fields,
 * and a live server on loopback answering raw requests: the security
 * headers on every answer, 404/405, the body cap (413), the header cap
 * (431), an unknown Host (421), a non-loopback address without TLS
 * refused, an event stream that delivers its events; connections that
 * send nothing are closed after the short idle timeout, so they cannot hold
 * the per-address slots (all loopback clients share one address). */
#include "../tap.h"

#include "http/httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int h_hello(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	(void)ctx;
	(void)rq;
	rs->ctype = "text/html; charset=utf-8";
	return cd_buf_puts(&rs->body, "<p>hello</p>");
}

static int h_echo(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	char v[64];
	(void)ctx;
	if (cd_http_form_get(rq->body, rq->body_len, "x", v, sizeof v) < 0)
		return cd_http_resp_text(rs, 400, "no x\n"), 0;
	cd_http_resp_header(rs, "X-Echo", v);
	return cd_buf_printf(&rs->body, "x=%s", v);
}

static int ev_count;
static int sse_next(void *ctx, struct cd_buf *out, unsigned wait_ms)
{
	(void)ctx;
	(void)wait_ms;
	if (ev_count >= 2)
		return -1;
	ev_count++;
	return cd_buf_printf(out, "event: tick\ndata: %d\n\n", ev_count) < 0 ? -1 : 1;
}

static int h_events(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	(void)ctx;
	(void)rq;
	rs->sse.next = sse_next;
	return 0;
}

static const struct cd_http_route routes[] = {
	{ "GET", "/", h_hello },
	{ "POST", "/echo", h_echo },
	{ "GET", "/events", h_events },
	{ "GET", "/files/*", h_hello },
};

/* conf.refused: the statuses refused before a handler, and a header. */
static int refused_status[8];
static size_t nrefused;
static char refused_hdr[64];

static void on_refused(void *ctx, const struct cd_http_req *rq, int status)
{
	const char *v = cd_http_header(rq, "X-Who");
	(void)ctx;

	if (nrefused < 8)
		refused_status[nrefused++] = status;
	snprintf(refused_hdr, sizeof refused_hdr, "%s", v ? v : "");
}

static void test_routes(void)
{
	is_int(cd_http_route_find(routes, 4, "GET", "/"), 0, "GET / is route 0");
	is_int(cd_http_route_find(routes, 4, "POST", "/echo"), 1, "POST /echo is route 1");
	is_int(cd_http_route_find(routes, 4, "GET", "/echo"), -EPERM, "GET /echo: wrong method");
	is_int(cd_http_route_find(routes, 4, "GET", "/echo/x"), -ENOENT,
	       "no prefix match on /echo");
	is_int(cd_http_route_find(routes, 4, "GET", "/files/a/b"), 3, "a star route matches below");
	is_int(cd_http_route_find(routes, 4, "GET", "/file"), -ENOENT, "... not a shorter path");
	is_int(cd_http_route_find(routes, 4, "GET", "//"), -ENOENT, "unknown path: 404");
}

static void test_addrs(void)
{
	char a[64];
	uint16_t port = 1;

	is_int(cd_http_addr_loopback("127.0.0.1"), 1, "127.0.0.1 is loopback");
	is_int(cd_http_addr_loopback("127.9.8.7"), 1, "127/8 is loopback");
	is_int(cd_http_addr_loopback("::1"), 1, "::1 is loopback");
	is_int(cd_http_addr_loopback("::ffff:127.0.0.1"), 1, "mapped 127.0.0.1 is loopback");
	is_int(cd_http_addr_loopback("0.0.0.0"), 0, "0.0.0.0 is not");
	is_int(cd_http_addr_loopback("10.1.2.3"), 0, "10.1.2.3 is not");
	is_int(cd_http_addr_loopback("::"), 0, ":: is not");
	is_int(cd_http_addr_loopback("localhost"), -EINVAL, "a name is not an address");
	is_int(cd_http_parse_listen("127.0.0.1:8750", a, sizeof a, &port), 0, "ADDR:PORT parses");
	ok(!strcmp(a, "127.0.0.1") && port == 8750, "... into 127.0.0.1 and 8750");
	is_int(cd_http_parse_listen("[::1]:0", a, sizeof a, &port), 0, "[V6]:PORT parses");
	ok(!strcmp(a, "::1") && port == 0, "... into ::1 and 0");
	is_int(cd_http_parse_listen("::1:80", a, sizeof a, &port), -EINVAL, "bare v6 refused");
	is_int(cd_http_parse_listen("127.0.0.1:65536", a, sizeof a, &port), -EINVAL, "port range");
	is_int(cd_http_parse_listen("127.0.0.1", a, sizeof a, &port), -EINVAL, "no port");
	is_int(cd_http_parse_listen("host:80", a, sizeof a, &port), -EINVAL, "a name refused");
}

static void test_form(void)
{
	const char *b = "a=1&csrf=ab%2Fc+d&x=&bad=%4&nul=%00";
	char v[8];
	size_t n = strlen(b);

	is_int(cd_http_form_get(b, n, "csrf", v, sizeof v), 0, "field found");
	is_str(v, "ab/c d", "... decoded (%%2F, +)");
	is_int(cd_http_form_get(b, n, "x", v, sizeof v), 0, "empty field found");
	is_str(v, "", "... empty");
	is_int(cd_http_form_get(b, n, "cs", v, sizeof v), -ENOENT, "a prefix of a name is not it");
	is_int(cd_http_form_get(b, n, "bad", v, sizeof v), -CD_E_PARSE, "a cut %%-escape refused");
	is_int(cd_http_form_get(b, n, "nul", v, sizeof v), -CD_E_PARSE, "%%00 refused");
	is_int(cd_http_form_get("a=123456789", 11, "a", v, sizeof v), -CD_E_LIMIT, "too long");
}

/* One raw request over loopback; the whole answer into out. */
static int raw(uint16_t port, const char *req, char *out, size_t outlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t got = 0;
	ssize_t n;

	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		return -1;
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		return close(fd), -1;
	while (got + 1 < outlen && (n = read(fd, out + got, outlen - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(fd);
	return 0;
}

static void test_server(void)
{
	static char out[65536], req[16384];
	static const char *const hosts[] = { "ok.test:1", NULL };
	struct cd_httpd_conf c = { 0 };
	struct cd_httpd *h = NULL;
	struct cd_err err = { 0 };
	uint16_t port;
	size_t i, n;

	c.addr = "0.0.0.0";
	c.routes = routes;
	c.nroutes = 4;
	is_int(cd_httpd_start(&c, &h, &err), -CD_E_DENIED, "0.0.0.0 without TLS is refused");
	ok(strstr(err.msg, "--tls-cert") != NULL, "... saying how to fix it (%s)", err.msg);
	c.addr = "127.0.0.1";
	c.tls_cert = "/nonexistent.pem";
	is_int(cd_httpd_start(&c, &h, &err), -EINVAL, "a cert without a key is refused");
	c.tls_cert = NULL;
	c.max_body = 100;
	c.max_headers = 8;
	c.hosts = hosts;
	c.refused = on_refused;
	if (!ok(cd_httpd_start(&c, &h, &err) == 0, "loopback starts (%s)", err.msg))
		return;
	port = cd_httpd_port(h);
	ok(port != 0, "listening on port %u", port);

	raw(port, "GET / HTTP/1.0\r\nHost: ok.test:1\r\n\r\n", out, sizeof out);
	ok(!strncmp(out, "HTTP/1.0 200", 12) || !strncmp(out, "HTTP/1.1 200", 12), "GET / is 200");
	ok(strstr(out, "<p>hello</p>") != NULL, "... with the body");
	ok(strstr(out, "Content-Security-Policy: default-src 'none'; script-src 'self'") &&
	           strstr(out, "frame-ancestors 'none'"),
	   "... the strict CSP");
	ok(strstr(out, "X-Content-Type-Options: nosniff") &&
	           strstr(out, "Cache-Control: no-store") &&
	           strstr(out, "Referrer-Policy: same-origin"),
	   "... nosniff, no-store, same-origin referrers");
	raw(port, "GET / HTTP/1.0\r\nHost: evil.test:1\r\n\r\n", out, sizeof out);
	ok(strstr(out, " 421 ") && !strstr(out, "hello"), "an unknown Host is 421");
	raw(port, "GET /nope HTTP/1.0\r\nHost: ok.test:1\r\n\r\n", out, sizeof out);
	ok(strstr(out, " 404 ") && strstr(out, "nosniff"), "unknown path is 404, with the headers");
	raw(port, "GET /echo HTTP/1.0\r\nHost: ok.test:1\r\n\r\n", out, sizeof out);
	ok(strstr(out, " 405 ") != NULL, "wrong method is 405");
	raw(port,
	    "POST /echo HTTP/1.0\r\nHost: ok.test:1\r\nContent-Type: "
	    "application/x-www-form-urlencoded\r\nContent-Length: 6\r\n\r\nx=a%21",
	    out, sizeof out);
	ok(strstr(out, " 200 ") && strstr(out, "X-Echo: a!"), "a form body reaches the handler");
	n = (size_t)snprintf(req, sizeof req,
	                     "POST /echo HTTP/1.0\r\nHost: ok.test:1\r\nX-Who: "
	                     "w1\r\nContent-Length: 200\r\n\r\n");
	for (i = 0; i < 200; i++)
		req[n + i] = 'x';
	req[n + 200] = '\0';
	raw(port, req, out, sizeof out);
	ok(strstr(out, " 413 ") != NULL, "a body over the cap is 413");
	ok(nrefused == 2 && refused_status[0] == 421 && refused_status[1] == 413 &&
	           !strcmp(refused_hdr, "w1"),
	   "conf.refused is told of the 421 and the 413, with the headers (%zu)", nrefused);
	n = (size_t)snprintf(req, sizeof req, "GET / HTTP/1.0\r\nHost: ok.test:1\r\n");
	for (i = 0; i < 20; i++)
		n += (size_t)snprintf(req + n, sizeof req - n, "X-H%zu: v\r\n", i);
	snprintf(req + n, sizeof req - n, "\r\n");
	raw(port, req, out, sizeof out);
	ok(strstr(out, " 431 ") && !strstr(out, "hello"), "too many headers is 431");
	raw(port, "GET /events HTTP/1.0\r\nHost: ok.test:1\r\n\r\n", out, sizeof out);
	ok(strstr(out, "text/event-stream") && strstr(out, "event: tick\ndata: 1\n\n") &&
	           strstr(out, "data: 2\n\n"),
	   "an event stream delivers its events and ends");
	cd_httpd_stop(h);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 16 connections that send nothing fill the per-address cap; a real
 * request is refused at first, then served once the idle timeout (10 s,
 * not the long timeout_s) has closed them. */
static void test_idle(void)
{
	static char out[4096];
	struct cd_httpd_conf c = { 0 };
	struct cd_httpd *h = NULL;
	struct cd_err err = { 0 };
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fds[16], first_ok, served = 0;
	double t0, took = 0;
	size_t i;

	c.addr = "127.0.0.1";
	c.routes = routes;
	c.nroutes = 1;
	c.max_per_ip = 16;
	c.timeout_s = 600;
	if (!ok(cd_httpd_start(&c, &h, &err) == 0, "idle: server starts (%s)", err.msg))
		return;
	sa.sin_port = htons(cd_httpd_port(h));
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	for (i = 0; i < 16; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[i] >= 0 && connect(fds[i], (struct sockaddr *)&sa, sizeof sa) < 0) {
			close(fds[i]);
			fds[i] = -1;
		}
	}
	usleep(200 * 1000);
	t0 = now_s();
	out[0] = '\0';
	raw(cd_httpd_port(h), "GET / HTTP/1.0\r\n\r\n", out, sizeof out);
	first_ok = strstr(out, " 200 ") != NULL;
	ok(!first_ok, "16 idle connections fill the per-address cap (control)");
	while (!first_ok && now_s() - t0 < 14) {
		usleep(250 * 1000);
		out[0] = '\0';
		raw(cd_httpd_port(h), "GET / HTTP/1.0\r\n\r\n", out, sizeof out);
		if (strstr(out, " 200 ")) {
			served = 1;
			took = now_s() - t0;
			break;
		}
	}
	ok(served && took < 12.5, "a real request is served after the idle ones time out (%.1f s)",
	   took);
	for (i = 0; i < 16; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	cd_httpd_stop(h);
}

int main(void)
{
	tap_start(60);
	test_routes();
	test_addrs();
	test_form();
	test_server();
	test_idle();
	return tap_done();
}
