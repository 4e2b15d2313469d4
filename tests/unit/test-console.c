/* test-console.c — the console's pieces: the HTML escaper (markup, quotes,
 * control bytes, invalid UTF-8, C1 controls, bidi overrides and isolates,
 * zero-width characters), origins, login links (hashed, single use,
 * expiring), and a live console on loopback: no session -> 401, a
 * session from a link, a POST without the Origin, with a foreign Origin or
 * without the CSRF token refused; the log and proposal pages behind the
 * same session, token and Origin; sessions kept across a restart under the
 * same session key, refused (and deleted) under another. */
#include "../tap.h"

#include "console/console.h"
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

static const char *html(const char *s, size_t n)
{
	static struct cd_buf b;

	cd_buf_release(&b);
	cd_buf_init(&b, 1 << 16);
	if (cd_console_html_escape(&b, s, n) < 0)
		return "(error)";
	return b.data ? b.data : "";
}

#define H(s) html(s, sizeof(s) - 1)

static void test_escape(void)
{
	is_str(H("plain text, ok"), "plain text, ok", "plain text as is");
	is_str(H("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;",
	       "markup becomes text");
	is_str(H("a\"b'c&d"), "a&quot;b&#39;c&amp;d", "quotes and & for attributes");
	is_str(H("\033[31mred"), "<span class=\"esc\">\\x1b</span>[31mred",
	       "a terminal escape is a visible \\x1b");
	is_str(H("a\nb\r"), "a<span class=\"esc\">\\x0a</span>b<span class=\"esc\">\\x0d</span>",
	       "newlines are visible (one line of HTML for an event)");
	is_str(H("x\x7f"), "x<span class=\"esc\">\\x7f</span>", "DEL is visible");
	is_str(H("\xe2\x80\xae"
	         "evil"),
	       "<span class=\"esc\">\\u202E</span>evil", "a right-to-left override is visible");
	is_str(H("\xe2\x81\xa6x\xe2\x81\xa9"),
	       "<span class=\"esc\">\\u2066</span>x<span class=\"esc\">\\u2069</span>",
	       "bidi isolates are visible");
	is_str(H("a\xe2\x80\x8b"
	         "b"),
	       "a<span class=\"esc\">\\u200B</span>b", "a zero-width space is visible");
	is_str(H("\xc2\x9b"
	         "31m"),
	       "<span class=\"esc\">\\u009B</span>31m", "a C1 CSI is visible");
	is_str(H("\xef\xbb\xbf"), "<span class=\"esc\">\\uFEFF</span>", "a BOM is visible");
	is_str(H("\xff\xfe"), "<span class=\"esc\">\\xff</span><span class=\"esc\">\\xfe</span>",
	       "invalid UTF-8 is visible bytes");
	is_str(H("\xc3\xa9t\xc3\xa9 \xe6\x97\xa5"), "\xc3\xa9t\xc3\xa9 \xe6\x97\xa5",
	       "ordinary UTF-8 as is");
	is_str(html("a\0b", 3), "a<span class=\"esc\">\\x00</span>b", "a NUL byte is visible");
}

static void test_origin(void)
{
	char o[64];

	is_int(cd_console_make_origin("127.0.0.1", 8750, 0, o, sizeof o), 0, "origin v4");
	is_str(o, "http://127.0.0.1:8750", "... http://127.0.0.1:8750");
	is_int(cd_console_make_origin("::1", 443, 1, o, sizeof o), 0, "origin v6");
	is_str(o, "https://[::1]:443", "... https://[::1]:443");
	is_int(cd_console_make_origin("127.0.0.1", 8750, 0, o, 10), -CD_E_LIMIT, "too long");
}

/* One raw HTTP/1.0 exchange; the answer into out. */
static void raw(uint16_t port, const char *req, char *out, size_t outlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t got = 0;
	ssize_t n;

	out[0] = '\0';
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while (got + 1 < outlen && (n = read(fd, out + got, outlen - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(fd);
}

static void post(uint16_t port, const char *path, const char *origin, const char *cookie,
                 const char *body, char *out, size_t outlen)
{
	static char req[8192];
	char host[64];

	snprintf(host, sizeof host, "127.0.0.1:%u", port);
	snprintf(req, sizeof req,
	         "POST %s HTTP/1.0\r\nHost: %s\r\n%s%s%s%s%s%sContent-Type: "
	         "application/x-www-form-urlencoded\r\nContent-Length: %zu\r\n\r\n%s",
	         path, host, origin ? "Origin: " : "", origin ? origin : "", origin ? "\r\n" : "",
	         cookie ? "Cookie: " : "", cookie ? cookie : "", cookie ? "\r\n" : "", strlen(body),
	         body);
	raw(port, req, out, outlen);
}

static void test_live(const char *dir)
{
	static char out[65536], req[4096], path[512], link[512], link2[512], cookie[256];
	struct cd_console_conf c = { 0 };
	struct cd_console *con = NULL;
	struct cd_state *st = NULL;
	struct cd_err err = { 0 };
	const char *origin, *t, *p;
	char csrf[80], body[256];
	uint16_t port;

	snprintf(path, sizeof path, "%s/state.db", dir);
	if (!ok(cd_state_open(path, &st, &err) == 0, "state database (%s)", err.msg))
		return;
	c.addr = "127.0.0.1";
	c.state = st;
	if (!ok(cd_console_start(&c, &con, &err) == 0, "the console starts (%s)", err.msg))
		goto out;
	origin = cd_console_origin(con);
	port = (uint16_t)atoi(strrchr(origin, ':') + 1);
	snprintf(req, sizeof req, "GET / HTTP/1.0\r\nHost: 127.0.0.1:%u\r\n\r\n", port);
	raw(port, req, out, sizeof out);
	ok(strstr(out, " 401 ") != NULL, "no session: 401");
	snprintf(req, sizeof req, "GET / HTTP/1.0\r\nHost: localhost:%u\r\n\r\n", port);
	raw(port, req, out, sizeof out);
	ok(strstr(out, " 421 ") != NULL, "another Host (DNS rebinding): 421");

	is_int(cd_console_link(con, "alice", 0, link, sizeof link, &err), 0, "a login link");
	ok(!strncmp(link, origin, strlen(origin)) && strstr(link, "/login?t="),
	   "... ORIGIN/login?t=SECRET");
	t = strstr(link, "t=") + 2;
	snprintf(body, sizeof body, "t=%s", t);
	post(port, "/login", NULL, NULL, body, out, sizeof out);
	ok(strstr(out, " 403 ") && !strstr(out, "Set-Cookie"), "a login without Origin: 403");
	post(port, "/login", "http://127.0.0.1:1", NULL, body, out, sizeof out);
	ok(strstr(out, " 403 ") && !strstr(out, "Set-Cookie"), "a login from another Origin: 403");
	post(port, "/login", origin, NULL, body, out, sizeof out);
	ok(strstr(out, " 303 ") && (p = strstr(out, "Set-Cookie: cordon_session=")),
	   "the link logs in: 303 and a cookie");
	ok(strstr(out, "HttpOnly; SameSite=Strict") != NULL, "... HttpOnly; SameSite=Strict");
	ok(!strstr(out, "Secure"), "... not Secure without TLS (the browser would drop it)");
	if (!p)
		goto out;
	snprintf(cookie, sizeof cookie, "%.*s", (int)strcspn(p + 12, ";\r"), p + 12);
	post(port, "/login", origin, NULL, body, out, sizeof out);
	ok(strstr(out, " 403 ") && !strstr(out, "Set-Cookie"), "the same link again: 403");

	snprintf(req, sizeof req, "GET / HTTP/1.0\r\nHost: 127.0.0.1:%u\r\nCookie: %s\r\n\r\n",
	         port, cookie);
	raw(port, req, out, sizeof out);
	ok(strstr(out, " 200 ") && strstr(out, "No call is waiting"), "with the session: 200");
	p = strstr(out, "name=\"csrf\" value=\"");
	snprintf(csrf, sizeof csrf, "%.64s", p ? p + 19 : "");
	ok(strlen(csrf) == 64, "the page carries a CSRF token");

	snprintf(body, sizeof body, "csrf=%s", csrf);
	post(port, "/logout", "http://evil.test", cookie, body, out, sizeof out);
	ok(strstr(out, " 403 ") != NULL, "logout from another Origin: 403");
	post(port, "/logout", origin, cookie, "csrf=00", out, sizeof out);
	ok(strstr(out, " 403 ") && strstr(out, "CSRF"), "logout with a wrong CSRF token: 403");
	snprintf(body, sizeof body, "csrf=%064d&decision=approve", 7);
	post(port, "/calls/ap-0000000000000000", origin, cookie, body, out, sizeof out);
	ok(strstr(out, " 403 ") && strstr(out, "CSRF"),
	   "a decision with a wrong 64-digit token: 403");
	post(port, "/calls/ap-00", origin, cookie, "decision=approve", out, sizeof out);
	ok(strstr(out, " 403 ") && strstr(out, "CSRF"), "a decision without the token: 403");
	snprintf(body, sizeof body, "csrf=%s&decision=approve", csrf);
	post(port, "/calls/ap-0000000000000000", origin, cookie, body, out, sizeof out);
	ok(strstr(out, " 409 ") != NULL, "a decision on no such call: 409 (%.12s)", out + 9);
	post(port, "/calls/..%2Fx", origin, cookie, body, out, sizeof out);
	ok(strstr(out, " 400 ") != NULL, "a malformed call id: 400");
	/* The log and proposal pages: the same session, token and Origin. */
	snprintf(req, sizeof req,
	         "GET /log?q=x HTTP/1.0\r\nHost: 127.0.0.1:%u\r\nCookie: %s\r\n\r\n", port, cookie);
	raw(port, req, out, sizeof out);
	ok(strstr(out, " 503 ") && strstr(out, "without an audit log"),
	   "the log page of a console without a log: 503");
	snprintf(req, sizeof req, "GET /log HTTP/1.0\r\nHost: 127.0.0.1:%u\r\n\r\n", port);
	raw(port, req, out, sizeof out);
	ok(strstr(out, " 401 ") != NULL, "the log page without a session: 401");
	snprintf(req, sizeof req,
	         "GET /proposals HTTP/1.0\r\nHost: 127.0.0.1:%u\r\nCookie: %s\r\n\r\n", port,
	         cookie);
	raw(port, req, out, sizeof out);
	ok(strstr(out, " 200 ") && strstr(out, "No proposal."), "the proposals page: none");
	snprintf(req, sizeof req,
	         "GET /proposal?id=..%%2Fx HTTP/1.0\r\nHost: 127.0.0.1:%u\r\nCookie: %s\r\n\r\n",
	         port, cookie);
	raw(port, req, out, sizeof out);
	ok(strstr(out, " 400 ") != NULL, "a malformed proposal id: 400");
	post(port, "/verify", origin, cookie, "csrf=00", out, sizeof out);
	ok(strstr(out, " 403 ") && strstr(out, "CSRF"), "verify now with a wrong token: 403");
	snprintf(body, sizeof body, "csrf=%s&decision=apply", csrf);
	post(port, "/proposals/pr-00", "http://evil.test", cookie, body, out, sizeof out);
	ok(strstr(out, " 403 ") != NULL, "apply from another Origin: 403");
	post(port, "/proposals/pr-00", origin, cookie, body, out, sizeof out);
	ok(strstr(out, " 404 ") != NULL, "apply on no such proposal: 404");

	snprintf(body, sizeof body, "csrf=%s", csrf);
	post(port, "/logout", origin, cookie, body, out, sizeof out);
	ok(strstr(out, " 303 ") != NULL, "logout with the token: 303");
	raw(port, req, out, sizeof out);
	ok(strstr(out, " 401 ") != NULL, "the session is gone: 401");

	is_int(cd_console_login_link(st, (const unsigned char *)"0123456789abcdef0123456789abcdef",
	                             origin, "bob", (int64_t)time(NULL) - 700, 600, link2,
	                             sizeof link2, &err),
	       0, "a link made 700 s ago, valid 600 s");
	snprintf(body, sizeof body, "t=%s", strstr(link2, "t=") + 2);
	post(port, "/login", origin, NULL, body, out, sizeof out);
	ok(strstr(out, " 403 ") && !strstr(out, "Set-Cookie"), "an expired link: 403");
out:
	cd_console_stop(con);
	cd_state_close(st);
}

/* Sessions are kept in the state database under a MAC key: the cookie
 * works in a console started again with the same key, not with another
 * (the row then goes: not even the first key brings it back). */
static void test_restart(const char *dir)
{
	static char out[65536], req[1024], path[512], link[512], cookie[256];
	static const unsigned char k1[32] = { 1 }, k2[32] = { 2 };
	const unsigned char *keys[4] = { k1, k1, k2, k1 };
	const char *want[4] = { " 303 ", " 200 ", " 401 ", " 401 " };
	struct cd_console_conf c = { 0 };
	struct cd_console *con = NULL;
	struct cd_state *st = NULL;
	struct cd_err err = { 0 };
	char body[256];
	const char *p;
	uint16_t port;
	int i;

	snprintf(path, sizeof path, "%s/state-restart.db", dir);
	if (!ok(cd_state_open(path, &st, &err) == 0, "state database (%s)", err.msg))
		return;
	c.addr = "127.0.0.1";
	c.state = st;
	for (i = 0; i < 4; i++) {
		c.session_key = keys[i];
		if (!ok(cd_console_start(&c, &con, &err) == 0, "console %d starts (%s)", i,
		        err.msg))
			break;
		port = (uint16_t)atoi(strrchr(cd_console_origin(con), ':') + 1);
		if (i == 0) {
			cd_console_link(con, "alice", 0, link, sizeof link, &err);
			snprintf(body, sizeof body, "t=%s", strstr(link, "t=") + 2);
			post(port, "/login", cd_console_origin(con), NULL, body, out, sizeof out);
			p = strstr(out, "Set-Cookie: cordon_session=");
			snprintf(cookie, sizeof cookie, "%.*s", p ? (int)strcspn(p + 12, ";\r") : 0,
			         p ? p + 12 : "");
		} else {
			snprintf(req, sizeof req,
			         "GET / HTTP/1.0\r\nHost: 127.0.0.1:%u\r\nCookie: %s\r\n\r\n", port,
			         cookie);
			raw(port, req, out, sizeof out);
		}
		ok(strstr(out, want[i]) != NULL, "%s:%s",
		   (const char *[]){ "log in", "the same key after a restart",
		                     "another key: the MAC fails", "the first key again: gone" }[i],
		   want[i]);
		cd_console_stop(con);
		con = NULL;
	}
	cd_state_close(st);
}

int main(void)
{
	char dir[] = "/tmp/test-console.XXXXXX";

	tap_start(67);
	test_escape();
	test_origin();
	if (mkdtemp(dir)) {
		static const char *const files[] = {
			"state.db",         "state.db-wal",         "state.db-shm",
			"state-restart.db", "state-restart.db-wal", "state-restart.db-shm"
		};
		char f[128];
		size_t i;
		test_live(dir);
		test_restart(dir);
		for (i = 0; i < 6; i++) {
			snprintf(f, sizeof f, "%s/%s", dir, files[i]);
			unlink(f);
		}
		rmdir(dir);
	}
	return tap_done();
}
