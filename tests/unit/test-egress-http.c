/* test-egress-http.c — the proxy's request-head parser (THREATS rows 21,
 * 23, 25): what is accepted and how it reads, and every trick refused.
 * Table-driven. */
#include "../tap.h"

#include "egress/egress-http.h"

#include <errno.h>

#define CONNECT_OK "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"

static void test_accepted(void)
{
	static const struct {
		const char *head;
		int is_connect;
		const char *method, *host;
		unsigned port;
		const char *path;
	} cases[] = {
		{ CONNECT_OK, 1, "CONNECT", "example.com", 443, "" },
		{ "CONNECT Example.COM.:8443 HTTP/1.1\r\n\r\n", 1, "CONNECT", "example.com", 8443,
		  "" },
		{ "CONNECT 127.0.0.1:8080 HTTP/1.0\r\n\r\n", 1, "CONNECT", "127.0.0.1", 8080, "" },
		{ "CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\n\r\n", 1, "CONNECT", "[::1]",
		  443, "" },
		{ "CONNECT a.example:443 HTTP/1.1\r\nHost: A.example\r\n\r\n", 1, "CONNECT",
		  "a.example", 443, "" },
		{ "GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", 0, "GET",
		  "example.com", 80, "/" },
		{ "GET http://example.com HTTP/1.1\r\nHost: example.com:80\r\n\r\n", 0, "GET",
		  "example.com", 80, "/" },
		{ "GET HTTP://example.com?q=1 HTTP/1.1\r\nHost: example.com\r\n\r\n", 0, "GET",
		  "example.com", 80, "/?q=1" },
		{ "GET http://example.com:8080/a/b?c=d HTTP/1.1\r\nHost: example.com:8080\r\n"
		  "Accept: */*\r\n\r\n",
		  0, "GET", "example.com", 8080, "/a/b?c=d" },
		{ "GET http://example.com/a@b HTTP/1.0\r\n\r\n", 0, "GET", "example.com", 80,
		  "/a@b" },
		{ "POST http://example.com/up HTTP/1.1\r\nHost: example.com\r\nContent-Length: "
		  "5\r\n\r\nhello",
		  0, "POST", "example.com", 80, "/up" },
		{ "PUT http://example.com/up HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: "
		  "chunked\r\n\r\n",
		  0, "PUT", "example.com", 80, "/up" },
		{ "HEAD http://example.com/ HTTP/1.1\r\nhost:example.com\t\r\n\r\n", 0, "HEAD",
		  "example.com", 80, "/" },
	};
	struct cd_http_request rq;
	struct cd_err err;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *h = cases[i].head;
		const char *end = strstr(h, "\r\n\r\n");
		int want = (int)(end - h) + 4;
		int r = cd_http_parse_head(h, strlen(h), &rq, &err);
		is_int(r, want, "accepted case %zu", i);
		if (r != want) {
			diag("%s", err.msg);
			continue;
		}
		is_int(rq.is_connect, cases[i].is_connect, "  is_connect");
		is_str(rq.method, cases[i].method, "  method");
		is_str(rq.host, cases[i].host, "  host");
		is_int(rq.port, cases[i].port, "  port");
		is_str(rq.path, cases[i].path, "  path");
	}

	/* Header lines to forward: Host and hop-by-hop headers are dropped. */
	{
		const char *h = "GET http://e.com/ HTTP/1.1\r\nHost: e.com\r\nAccept: */*\r\n"
		                "Proxy-Connection: keep-alive\r\nConnection: keep-alive\r\n"
		                "Proxy-Authorization: Basic eA==\r\nX-A: 1\r\n\r\n";
		int r = cd_http_parse_head(h, strlen(h), &rq, &err);
		ok(r > 0, "forwarding: parsed");
		is_int(rq.nfields, 2, "forwarding: two fields kept");
		ok(rq.fields[0].len == 11 && memcmp(h + rq.fields[0].off, "Accept: */*", 11) == 0,
		   "forwarding: Accept kept as given");
		ok(rq.fields[1].len == 6 && memcmp(h + rq.fields[1].off, "X-A: 1", 6) == 0,
		   "forwarding: X-A kept as given");
	}
}

/* The body framing the proxy relays by. */
static void test_body(void)
{
	static const char cl[] = "POST http://a.com/ HTTP/1.1\r\nHost: a.com\r\nContent-Length: "
	                         "12\r\n\r\nhello";
	static const char te[] = "PUT http://a.com/ HTTP/1.1\r\nHost: a.com\r\nTransfer-Encoding: "
	                         "Chunked\r\n\r\n";
	struct cd_http_request rq;

	ok(cd_http_parse_head(cl, strlen(cl), &rq, NULL) > 0, "body: Content-Length parsed");
	is_int(rq.content_length, 12, "body: length 12");
	is_int(rq.chunked, 0, "body: not chunked");
	ok(cd_http_parse_head(te, strlen(te), &rq, NULL) > 0, "body: chunked parsed");
	is_int(rq.chunked, 1, "body: chunked (any case)");
	is_int(rq.content_length, 0, "body: no length");
}

static void test_incomplete(void)
{
	static const char *const partial[] = {
		"",
		"C",
		"CONNECT example.com:443 HTTP/1.1",
		"CONNECT example.com:443 HTTP/1.1\r",
		"CONNECT example.com:443 HTTP/1.1\r\n",
		"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n",
		"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r",
	};
	struct cd_http_request rq;
	size_t i;

	for (i = 0; i < sizeof partial / sizeof partial[0]; i++)
		is_int(cd_http_parse_head(partial[i], strlen(partial[i]), &rq, NULL), 0,
		       "incomplete head %zu waits for more", i);
	is_int(cd_http_parse_head(CONNECT_OK "\x16\x03\x01", strlen(CONNECT_OK) + 3, &rq, NULL),
	       (int)strlen(CONNECT_OK), "bytes after the head are not part of it");
}

static void test_refused(void)
{
	static const struct {
		const char *head;
		int want;
		const char *why;
	} cases[] = {
		/* Odd targets: 403. */
		{ "CONNECT 2130706433:80 HTTP/1.1\r\n\r\n", -CD_E_DENIED, "decimal address" },
		{ "CONNECT 0177.0.0.1:80 HTTP/1.1\r\n\r\n", -CD_E_DENIED, "octal address" },
		{ "CONNECT 0x7f.1:80 HTTP/1.1\r\n\r\n", -CD_E_DENIED, "hex short address" },
		{ "CONNECT 127.1:80 HTTP/1.1\r\n\r\n", -CD_E_DENIED, "short address" },
		{ "CONNECT [0::1]:80 HTTP/1.1\r\n\r\n", -CD_E_DENIED, "non-canonical IPv6" },
		{ "GET http://allowed.com@evil.com/ HTTP/1.1\r\nHost: evil.com\r\n\r\n",
		  -CD_E_DENIED, "userinfo" },
		{ "GET http://u:p@evil.com/ HTTP/1.0\r\n\r\n", -CD_E_DENIED,
		  "userinfo with password" },
		{ "CONNECT allowed.com@evil.com:443 HTTP/1.1\r\n\r\n", -CD_E_DENIED,
		  "userinfo in CONNECT" },
		{ "CONNECT allowed.com:443 HTTP/1.1\r\nHost: evil.com:443\r\n\r\n", -CD_E_DENIED,
		  "Host names another host (CONNECT)" },
		{ "GET http://allowed.com/ HTTP/1.1\r\nHost: evil.com\r\n\r\n", -CD_E_DENIED,
		  "Host names another host" },
		{ "GET http://allowed.com/ HTTP/1.1\r\nHost: allowed.com:8080\r\n\r\n",
		  -CD_E_DENIED, "Host names another port" },
		{ "GET http://allowed.com:8080/ HTTP/1.1\r\nHost: allowed.com\r\n\r\n",
		  -CD_E_DENIED, "Host without the target's port" },
		{ "GET http://allowed.com/ HTTP/1.1\r\nHost: allowed.com\r\nHost: evil.com\r\n\r\n",
		  -CD_E_DENIED, "two Host headers" },
		{ "GET http://allowed.com/ HTTP/1.1\r\nHost: allowed.com\r\nHost: "
		  "allowed.com\r\n\r\n",
		  -CD_E_DENIED, "two equal Host headers" },
		{ "GET http://allowed.com/ HTTP/1.1\r\nHost: 2130706433\r\n\r\n", -CD_E_DENIED,
		  "odd address in Host" },
		/* Malformed: 400. */
		{ "GET http://allowed.com/#frag HTTP/1.1\r\nHost: allowed.com\r\n\r\n", -CD_E_PARSE,
		  "fragment" },
		{ "GET http://allowed.com\\@evil.com/ HTTP/1.1\r\n\r\n", -CD_E_PARSE, "backslash" },
		{ "GET https://allowed.com/ HTTP/1.1\r\nHost: allowed.com\r\n\r\n", -CD_E_PARSE,
		  "https in absolute form" },
		{ "GET /path HTTP/1.1\r\nHost: allowed.com\r\n\r\n", -CD_E_PARSE, "origin form" },
		{ "GET ftp://allowed.com/ HTTP/1.1\r\n\r\n", -CD_E_PARSE, "other scheme" },
		{ "GET http:///x HTTP/1.1\r\n\r\n", -CD_E_PARSE, "empty host" },
		{ "GET http://allowed.com:/ HTTP/1.1\r\n\r\n", -CD_E_PARSE, "empty port" },
		{ "GET http://allowed.com:0/ HTTP/1.1\r\n\r\n", -CD_E_PARSE, "port 0" },
		{ "GET http://allowed.com:080/ HTTP/1.1\r\n\r\n", -CD_E_PARSE,
		  "port leading zero" },
		{ "GET http://allowed.com:65536/ HTTP/1.1\r\n\r\n", -CD_E_PARSE, "port too big" },
		{ "GET http://allowed.com:80:80/ HTTP/1.1\r\n\r\n", -CD_E_PARSE, "two ports" },
		{ "GET http://%65vil.com/ HTTP/1.1\r\n\r\n", -CD_E_PARSE, "percent in host" },
		{ "GET http://exa_mple.com/ HTTP/1.1\r\n\r\n", -CD_E_PARSE, "underscore in host" },
		{ "CONNECT example.com HTTP/1.1\r\n\r\n", -CD_E_PARSE, "CONNECT without port" },
		{ "CONNECT http://example.com:443 HTTP/1.1\r\n\r\n", -CD_E_PARSE,
		  "CONNECT with a URI" },
		{ "CONNECT ::1:443 HTTP/1.1\r\n\r\n", -CD_E_PARSE, "unbracketed IPv6" },
		{ "CONNECT [::1]x:443 HTTP/1.1\r\n\r\n", -CD_E_PARSE, "junk after IPv6" },
		{ "CONNECT example.com:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\n", -CD_E_PARSE,
		  "CONNECT with a body" },
		{ "GET http://a.com/ HTTP/1.1\r\n\r\n", -CD_E_PARSE, "HTTP/1.1 without Host" },
		{ "GET http://a.com/ HTTP/2.0\r\nHost: a.com\r\n\r\n", -CD_E_PARSE, "HTTP/2" },
		{ "GET http://a.com/ http/1.1\r\nHost: a.com\r\n\r\n", -CD_E_PARSE,
		  "lower-case version" },
		{ "get http://a.com/ HTTP/1.1\r\nHost: a.com\r\n\r\n", -CD_E_PARSE,
		  "lower-case method" },
		{ "TRACE http://a.com/ HTTP/1.1\r\nHost: a.com\r\n\r\n", -CD_E_PARSE, "TRACE" },
		{ "GET  http://a.com/ HTTP/1.1\r\nHost: a.com\r\n\r\n", -CD_E_PARSE, "two spaces" },
		{ "GET http://a.com/ HTTP/1.1 \r\nHost: a.com\r\n\r\n", -CD_E_PARSE,
		  "trailing space" },
		{ "GET\thttp://a.com/ HTTP/1.1\r\nHost: a.com\r\n\r\n", -CD_E_PARSE, "tab" },
		{ "\r\nGET http://a.com/ HTTP/1.1\r\nHost: a.com\r\n\r\n", -CD_E_PARSE,
		  "leading blank line" },
		{ "GET http://a.com/ HTTP/1.1\nHost: a.com\r\n\r\n", -CD_E_PARSE, "bare LF" },
		{ "GET http://a.com/ HTTP/1.1\r\nHost: a.com\rX: y\r\n\r\n", -CD_E_PARSE,
		  "bare CR" },
		{ "GET http://a.com/ HTTP/1.1\r\nHost: a.com\n\n", -CD_E_PARSE, "LF LF" },
		{ "GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\nX: a\r\n b\r\n\r\n", -CD_E_PARSE,
		  "obs-fold" },
		{ "GET http://a.com/ HTTP/1.1\r\nHost : a.com\r\n\r\n", -CD_E_PARSE,
		  "space before colon" },
		{ "GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\nNoColon\r\n\r\n", -CD_E_PARSE,
		  "no colon" },
		{ "GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\n: v\r\n\r\n", -CD_E_PARSE,
		  "empty name" },
		{ "GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\nX: \x01\r\n\r\n", -CD_E_PARSE,
		  "control byte" },
		{ "GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\nX: \xc3\xa9\r\n\r\n", -CD_E_PARSE,
		  "non-ASCII value" },
		{ "GET http://b\xc3\xbc"
		  "cher.de/ HTTP/1.1\r\n\r\n",
		  -CD_E_PARSE, "non-ASCII host" },
		{ "GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\nContent-Length: 5\r\n"
		  "Transfer-Encoding: chunked\r\n\r\n",
		  -CD_E_PARSE, "CL and TE" },
		{ "GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\nContent-Length: 5\r\n"
		  "Content-Length: 5\r\n\r\n",
		  -CD_E_PARSE, "two CL" },
		{ "GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\nContent-Length: -1\r\n\r\n",
		  -CD_E_PARSE, "negative CL" },
		{ "GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\nContent-Length: 1,1\r\n\r\n",
		  -CD_E_PARSE, "list CL" },
		{ "GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\nTransfer-Encoding: gzip, "
		  "chunked\r\n\r\n",
		  -CD_E_PARSE, "TE list" },
		{ "GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\nTransfer-Encoding: chunked\r\n"
		  "Transfer-Encoding: chunked\r\n\r\n",
		  -CD_E_PARSE, "two TE" },
		{ "GET http://a.com/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", -CD_E_PARSE,
		  "TE in HTTP/1.0" },
		{ "GET http://a.com/ HTTP/1.1\r\nHost: a.com:\r\n\r\n", -CD_E_PARSE,
		  "Host with empty port" },
	};
	struct cd_http_request rq;
	struct cd_err err;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int r;
		err.msg[0] = '\0';
		r = cd_http_parse_head(cases[i].head, strlen(cases[i].head), &rq, &err);
		is_int(r, cases[i].want, "refused: %s", cases[i].why);
		ok(r >= 0 || (err.msg[0] && !strchr(err.msg, '\n')), "  one-line reason: %s",
		   err.msg);
	}
	is_int(cd_http_parse_head("CONNECT a.com:443 HTTP/1.1\r\nX: \0\r\n\r\n", 37, &rq, &err),
	       -CD_E_PARSE, "refused: NUL byte");
	is_int(cd_http_parse_head("CONNECT a.com:443 HTTP/1.1\r\n\0", 29, &rq, &err), -CD_E_PARSE,
	       "refused: NUL in an incomplete head");
}

static void test_caps(void)
{
	static char big[CD_EGRESS_HEAD_MAX * 2];
	struct cd_http_request rq;
	size_t n;
	int i;

	/* A head that never ends, under the line cap: refused at the head cap. */
	n = (size_t)snprintf(big, sizeof big, "CONNECT a.com:443 HTTP/1.1\r\n");
	while (n + 20 < CD_EGRESS_HEAD_MAX + 100)
		n += (size_t)snprintf(big + n, sizeof big - n, "X-Pad: %010d\r\n", (int)n);
	is_int(cd_http_parse_head(big, n, &rq, NULL), -CD_E_LIMIT, "head past the cap refused");
	is_int(cd_http_parse_head(big, CD_EGRESS_HEAD_MAX - 1, &rq, NULL), -CD_E_LIMIT,
	       "too many header lines refused before the head cap");

	/* One long line. */
	memset(big, 'a', sizeof big);
	memcpy(big, "GET http://a.com/", 17);
	is_int(cd_http_parse_head(big, CD_EGRESS_LINE_MAX + 1, &rq, NULL), -CD_E_LIMIT,
	       "request line past the line cap refused");
	is_int(cd_http_parse_head(big, CD_EGRESS_LINE_MAX - 10, &rq, NULL), 0,
	       "a long line under the cap waits");

	/* Exactly the header count cap is fine, one more is not. */
	for (int extra = 0; extra <= 1; extra++) {
		n = (size_t)snprintf(big, sizeof big, "CONNECT a.com:443 HTTP/1.1\r\n");
		for (i = 0; i < CD_EGRESS_HEADERS_MAX + extra; i++)
			n += (size_t)snprintf(big + n, sizeof big - n, "X-%d: v\r\n", i);
		n += (size_t)snprintf(big + n, sizeof big - n, "\r\n");
		if (extra)
			is_int(cd_http_parse_head(big, n, &rq, NULL), -CD_E_LIMIT,
			       "%d headers refused", CD_EGRESS_HEADERS_MAX + 1);
		else
			is_int(cd_http_parse_head(big, n, &rq, NULL), (int)n, "%d headers accepted",
			       CD_EGRESS_HEADERS_MAX);
	}
}

int main(void)
{
	tap_start(30);
	test_accepted();
	test_body();
	test_incomplete();
	test_refused();
	test_caps();
	return tap_done();
}
