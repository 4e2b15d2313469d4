/* test-egress-socks.c — the SOCKS5 greeting and CONNECT request parsers
 * (RFC 1928) the egress proxy accepts: every address type, every prefix
 * of a valid message asks for more, odd address spellings and non-ASCII
 * domains are refused like HTTP targets (THREATS rows 21, 23), other
 * commands and address types get their own reply codes.  Table-driven;
 * messages are written out byte by byte. */
#include "../tap.h"

#include "egress/egress-socks.h"

#include <errno.h>

/* A domain CONNECT request for `name`, port 443. */
static size_t domain_req(unsigned char *o, const char *name, size_t nlen)
{
	size_t i = 0;

	o[i++] = 5;
	o[i++] = 1;
	o[i++] = 0;
	o[i++] = 3;
	o[i++] = (unsigned char)nlen;
	memcpy(o + i, name, nlen);
	i += nlen;
	o[i++] = 0x01;
	o[i++] = 0xbb;
	return i;
}

static void test_greeting(void)
{
	static const struct {
		const char *what;
		unsigned char b[8];
		size_t len;
		int want;
	} cases[] = {
		{ "no auth only", { 5, 1, 0 }, 3, 3 },
		{ "user/pass and no auth", { 5, 2, 2, 0 }, 4, 4 },
		{ "no auth among three", { 5, 3, 1, 2, 0 }, 5, 5 },
		{ "user/pass only", { 5, 1, 2 }, 3, -CD_E_DENIED },
		{ "GSSAPI only", { 5, 1, 1 }, 3, -CD_E_DENIED },
		{ "no methods", { 5, 0 }, 2, -CD_E_PARSE },
		{ "SOCKS4", { 4, 1, 0 }, 3, -CD_E_PARSE },
		{ "HTTP", { 'C', 'O', 'N' }, 3, -CD_E_PARSE },
		{ "empty", { 0 }, 0, CD_SOCKS_MORE },
		{ "version only", { 5 }, 1, CD_SOCKS_MORE },
		{ "methods missing", { 5, 2, 0 }, 3, CD_SOCKS_MORE },
	};
	struct cd_err err;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		err.msg[0] = '\0';
		int r = cd_socks_greeting(cases[i].b, cases[i].len, &err);
		is_int(r, cases[i].want, "greeting: %s", cases[i].what);
		if (r < 0)
			ok(err.msg[0] != '\0', "  with a reason (%s)", err.msg);
	}
	/* A request may follow at once: only the greeting's bytes are taken. */
	{
		unsigned char b[] = { 5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 80 };
		is_int(cd_socks_greeting(b, sizeof b, NULL), 3, "greeting: pipelined request left");
	}
}

static void test_request(void)
{
	static const struct {
		const char *what;
		unsigned char b[32];
		size_t len;
		int want;
		const char *host;
		unsigned port;
	} cases[] = {
		{ "IPv4", { 5, 1, 0, 1, 93, 184, 216, 34, 1, 187 }, 10, 10, "93.184.216.34", 443 },
		{ "IPv4 loopback",
		  { 5, 1, 0, 1, 127, 0, 0, 1, 0x1f, 0x90 },
		  10,
		  10,
		  "127.0.0.1",
		  8080 },
		{ "IPv6",
		  { 5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 80 },
		  22,
		  22,
		  "[2001:db8::7]",
		  80 },
		{ "IPv6 mapped",
		  { 5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1, 0, 80 },
		  22,
		  22,
		  "[::ffff:127.0.0.1]",
		  80 },
		{ "BIND", { 5, 2, 0, 1, 1, 2, 3, 4, 0, 80 }, 10, -ENOTSUP, NULL, 0 },
		{ "UDP ASSOCIATE", { 5, 3, 0, 1, 1, 2, 3, 4, 0, 80 }, 10, -ENOTSUP, NULL, 0 },
		{ "unknown address type",
		  { 5, 1, 0, 2, 1, 2, 3, 4, 0, 80 },
		  10,
		  -EAFNOSUPPORT,
		  NULL,
		  0 },
		{ "reserved byte set",
		  { 5, 1, 1, 1, 1, 2, 3, 4, 0, 80 },
		  10,
		  -CD_E_PARSE,
		  NULL,
		  0 },
		{ "version 4", { 4, 1, 0, 1, 1, 2, 3, 4, 0, 80 }, 10, -CD_E_PARSE, NULL, 0 },
		{ "port 0", { 5, 1, 0, 1, 1, 2, 3, 4, 0, 0 }, 10, -CD_E_DENIED, NULL, 0 },
		{ "empty domain", { 5, 1, 0, 3, 0, 0, 80 }, 7, -CD_E_DENIED, NULL, 0 },
	};
	struct cd_socks_request rq;
	struct cd_err err;
	size_t i, k;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		err.msg[0] = '\0';
		int r = cd_socks_request(cases[i].b, cases[i].len, &rq, &err);
		is_int(r, cases[i].want, "request: %s", cases[i].what);
		if (r > 0) {
			is_str(rq.host, cases[i].host, "  host");
			is_int(rq.port, cases[i].port, "  port");
			/* Every shorter prefix asks for more. */
			for (k = 0; k < cases[i].len; k++)
				if (cd_socks_request(cases[i].b, k, &rq, NULL) != CD_SOCKS_MORE)
					break;
			is_int(k, cases[i].len, "  every prefix asks for more");
		} else {
			ok(err.msg[0] != '\0', "  with a reason (%s)", err.msg);
		}
	}
	is_int(cd_socks_reply_for(-ENOTSUP), CD_SOCKS_CMD_UNSUPPORTED, "reply: command");
	is_int(cd_socks_reply_for(-EAFNOSUPPORT), CD_SOCKS_ATYP_UNSUPPORTED, "reply: address type");
	is_int(cd_socks_reply_for(-CD_E_DENIED), CD_SOCKS_NOT_ALLOWED, "reply: not allowed");
	is_int(cd_socks_reply_for(-CD_E_PARSE), CD_SOCKS_FAILURE, "reply: failure");
}

static void test_domains(void)
{
	static const struct {
		const char *name;
		int ok;
		const char *host;
	} cases[] = {
		{ "example.com", 1, "example.com" },
		{ "API.Example.COM.", 1, "api.example.com" },
		{ "xn--bcher-kva.example", 1, "xn--bcher-kva.example" },
		{ "127.0.0.1", 1, "127.0.0.1" }, /* a canonical quad is an address */
		/* Row 21: odd spellings are refused, never reinterpreted. */
		{ "2130706433", 0, NULL },
		{ "0177.0.0.1", 0, NULL },
		{ "0x7f.1", 0, NULL },
		{ "127.1", 0, NULL },
		{ "127.0.0.1.", 0, NULL },
		{ "[::1]", 1, "[::1]" }, /* as in an HTTP target: canonical only */
		{ "[0::1]", 0, NULL },
		{ "::1", 0, NULL },
		{ "b\xc3\xbc"
		  "cher.example",
		  0, NULL }, /* not ASCII: A-labels on the wire */
		{ "xn--zz.example", 0, NULL },
		{ "exa mple.com", 0, NULL },
		{ "allowed.example@evil.example", 0, NULL },
		{ "evil.example:443", 0, NULL },
		{ "*.example.com", 0, NULL },
	};
	unsigned char b[300];
	struct cd_socks_request rq;
	struct cd_err err;
	size_t i, n;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int r;
		n = domain_req(b, cases[i].name, strlen(cases[i].name));
		r = cd_socks_request(b, n, &rq, &err);
		if (cases[i].ok) {
			is_int(r, (int)n, "domain '%s' read", cases[i].name);
			if (r > 0)
				is_str(rq.host, cases[i].host, "  normalized");
		} else {
			is_int(r, -CD_E_DENIED, "domain '%s' refused (%s)", cases[i].name,
			       r < 0 ? err.msg : "read");
		}
	}
	/* A NUL inside, and the longest domain the length byte allows. */
	n = domain_req(b, "a.com\0evil", 10);
	is_int(cd_socks_request(b, n, &rq, NULL), -CD_E_DENIED, "domain with a NUL refused");
	{
		char big[255];
		size_t k;
		for (k = 0; k < sizeof big; k++)
			big[k] = (k % 50 == 49) ? '.' : 'a';
		n = domain_req(b, big, sizeof big);
		is_int(cd_socks_request(b, n, &rq, NULL), -CD_E_DENIED,
		       "a 255-byte domain (over 253) refused");
		n = domain_req(b, big, 253);
		big[252] = 'a';
		n = domain_req(b, big, 253);
		is_int(cd_socks_request(b, n, &rq, NULL), (int)n, "a 253-byte domain read");
	}
	/* Bytes after the request (a TLS hello) are not taken. */
	n = domain_req(b, "example.com", 11);
	b[n] = 0x16;
	is_int(cd_socks_request(b, n + 1, &rq, NULL), (int)n, "bytes after the request left");
}

static void test_reply(void)
{
	unsigned char r[CD_SOCKS_REPLY_LEN];
	static const unsigned char want[CD_SOCKS_REPLY_LEN] = { 5, 2, 0, 1, 0, 0, 0, 0, 0, 0 };

	cd_socks_reply(CD_SOCKS_NOT_ALLOWED, r);
	ok(memcmp(r, want, sizeof r) == 0, "reply: 05 02 00 01 0.0.0.0:0");
}

int main(void)
{
	tap_start(30);
	test_greeting();
	test_request();
	test_domains();
	test_reply();
	return tap_done();
}
