/* httpd.h — a small HTTP(S) server over libmicrohttpd, loaded on first use
 * (util/dl.h; never linked): an address to listen on, TLS from PEM files,
 * a route table, request limits and responses that always carry the
 * security headers.  Front ends (the console of `cordon serve`, MCP over
 * HTTP) give it routes and handlers; it knows nothing of cordon's policy.
 *
 * Trust boundary: everything a peer sends.  Requests over the limits are
 * answered here (400, 404, 405, 413, 421, 431, 503) and never reach a
 * handler; a handler sees the method, the path, the headers it asks for
 * and a body of at most max_body bytes.  A non-loopback address without
 * TLS is refused at start.  Handlers run on the connection's thread (one
 * thread per connection, at most max_conns): a handler that shares state
 * locks it. */
#ifndef CD_HTTPD_H
#define CD_HTTPD_H

#include "util/buf.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

struct cd_httpd;

/* One request, borrowed by the handler for the length of the call. */
struct cd_http_req {
	const char *method; /* "GET", "POST", ... */
	const char *path;   /* decoded by the library, without the query */
	const char *body;   /* NUL-terminated; body_len bytes (a cap applies) */
	size_t body_len;
	char peer[64]; /* the peer's address, printable */
	int peer_loopback;
	int tls;
	void *conn; /* the library's connection (httpd.c only) */
};

/* A header, a cookie or a query argument of the request (NULL: absent). */
const char *cd_http_header(const struct cd_http_req *rq, const char *name);
/* How many times the request carries header `name` (case-insensitive). */
int cd_http_header_count(const struct cd_http_req *rq, const char *name);
const char *cd_http_cookie(const struct cd_http_req *rq, const char *name);
const char *cd_http_query(const struct cd_http_req *rq, const char *name);

/* Field `name` of an application/x-www-form-urlencoded body (the first
 * occurrence), decoded into out (NUL-terminated).  0, -ENOENT when absent,
 * -CD_E_LIMIT when longer than outlen - 1, -CD_E_PARSE when malformed
 * (a bad %-escape or a NUL byte). */
int cd_http_form_get(const char *body, size_t len, const char *name, char *out, size_t outlen);

/* A stream of Server-Sent Events.  next appends complete events ("event:
 * x\ndata: y\n\n") to out, waiting up to wait_ms for one: > 0 something
 * appended, 0 nothing yet (the server sends a comment to keep the
 * connection alive), < 0 the end.  done is called once, when the stream is
 * over (the peer left or the server stops). */
struct cd_http_sse {
	int (*next)(void *ctx, struct cd_buf *out, unsigned wait_ms);
	void (*done)(void *ctx);
	void *ctx;
};

#define CD_HTTP_MAX_EXTRA 4

/* A response the handler fills: status, content type, body; up to
 * CD_HTTP_MAX_EXTRA extra headers (Location, Set-Cookie ...; values are
 * copied and must hold no CR or LF); or an event stream (sse.next set),
 * which the server owns from then on (sse.done frees it). */
struct cd_http_resp {
	int status;
	const char *ctype; /* NULL: text/plain; charset=utf-8 */
	struct cd_buf body;
	struct {
		char name[32];
		char value[512];
	} extra[CD_HTTP_MAX_EXTRA];
	size_t nextra;
	struct cd_http_sse sse;
};

/* Add a header to a response: 0, -CD_E_LIMIT (full or too long), -EINVAL
 * (CR, LF or NUL in it). */
int cd_http_resp_header(struct cd_http_resp *rs, const char *name, const char *value);

/* Set a short plain-text answer ("forbidden: wrong origin\n"). */
void cd_http_resp_text(struct cd_http_resp *rs, int status, const char *msg);

/* A handler: fill rs and return 0; a negative return is answered 500. */
typedef int (*cd_http_handler)(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);

/* A route: method and path.  A path ending in '*' matches every path
 * that starts with what comes before it ("/calls/" and a star); otherwise the whole
 * path must be equal. */
struct cd_http_route {
	const char *method;
	const char *path;
	cd_http_handler fn;
};

/* Which route serves (method, path): its index, -ENOENT when no path
 * matches (404), -EPERM when a path matches with another method (405).
 * The first match in table order wins. */
int cd_http_route_find(const struct cd_http_route *routes, size_t n, const char *method,
                       const char *path);

/* Whether `addr` (an IPv4 or IPv6 literal) is a loopback address: 1, 0,
 * or -EINVAL when it is not an address. */
int cd_http_addr_loopback(const char *addr);

/* Split "ADDR:PORT" or "[V6]:PORT" into addr (without brackets) and a
 * port (0 allowed: any free port).  0 or -EINVAL. */
int cd_http_parse_listen(const char *s, char *addr, size_t addrlen, uint16_t *ret_port);

/* The server's configuration.  Zero limits take the defaults below. */
struct cd_httpd_conf {
	const char *addr;               /* an IP literal */
	uint16_t port;                  /* 0: any free port (cd_httpd_port says which) */
	const char *tls_cert, *tls_key; /* PEM file paths, both or neither */
	size_t max_body;                /* bytes of a request body */
	unsigned max_headers;           /* header lines of a request */
	unsigned max_conns;             /* connections at once */
	unsigned max_per_ip;            /* connections at once from one address */
	/* A connection is closed after idle_s without a byte until its
	 * request (headers and body) is complete, and between requests; while
	 * a handler answers it (a long poll, an event stream) after
	 * timeout_s.  Connections that send nothing cannot hold the per-address
	 * slots for longer than idle_s. */
	unsigned idle_s;
	unsigned timeout_s;
	/* A request (its headers and body, from the end of the previous
	 * one on the connection) not complete after request_s is cut, however
	 * often its bytes come: refused() is told (408, no headers). */
	unsigned request_s;
	unsigned sse_keepalive_ms; /* a comment on a quiet event stream */
	/* Host header values accepted (NULL-terminated list), e.g.
	 * "127.0.0.1:8750": others get 421 (a DNS-rebinding page cannot reach
	 * the server).  NULL: any. */
	const char *const *hosts;
	const char *csp; /* NULL: CD_HTTPD_CSP */
	const struct cd_http_route *routes;
	size_t nroutes;
	void *ctx; /* handed to every handler */
	/* Optional: told of a request this server refuses before any handler
	 * (413 over max_body, 421, 431), with its headers but no body (a
	 * front end records it), or cuts (408 past request_s: no headers,
	 * the peer only).  Its answer is not the hook's to change. */
	void (*refused)(void *ctx, const struct cd_http_req *rq, int status);
};

#define CD_HTTPD_MAX_BODY    (64 * 1024)
#define CD_HTTPD_MAX_HEADERS 64
#define CD_HTTPD_MAX_CONNS   64
#define CD_HTTPD_MAX_PER_IP  16
/* On a loopback address every local client shares one address: the cap
 * is higher there (max_conns still bounds the total). */
#define CD_HTTPD_MAX_PER_IP_LO    32
#define CD_HTTPD_IDLE_S           10
#define CD_HTTPD_TIMEOUT_S        60
#define CD_HTTPD_REQUEST_S        30
#define CD_HTTPD_SSE_KEEPALIVE_MS 15000
/* Scripts and styles only from the server's own files, no inline script,
 * no framing, no plugins, forms only to the server. */
#define CD_HTTPD_CSP                                                                               \
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "                \
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

/* Load libmicrohttpd, check the configuration (a non-loopback address
 * without TLS is refused: "ADDR is not a loopback address: give
 * --tls-cert and --tls-key"), read the TLS files and start listening.
 * The routes, hosts and ctx must outlive the server.  Free with
 * cd_httpd_stop. */
int cd_httpd_start(const struct cd_httpd_conf *c, struct cd_httpd **ret, struct cd_err *err);

/* The port it listens on. */
uint16_t cd_httpd_port(const struct cd_httpd *h);

/* Stop listening, end the event streams (within one keep-alive wait) and
 * free.  NULL is fine. */
void cd_httpd_stop(struct cd_httpd *h);

#endif
