/* egress-http.h — the strict parser for the egress proxy's request head.
 *
 * Two forms are accepted, HTTP/1.1 or HTTP/1.0:
 *   CONNECT host:port HTTP/1.1        (authority form only; any TCP)
 *   METHOD http://host[:port]/path HTTP/1.1   (absolute form, plain HTTP)
 * and everything else is refused rather than guessed at (THREATS row 23):
 * userinfo ("http://allowed@evil/"), fragments, backslashes, other schemes,
 * bare CR or LF, obs-fold, whitespace before a colon, NUL and non-ASCII
 * bytes, a Host header that names another host or port than the target (the
 * target decides), more than one Host, Content-Length together with
 * Transfer-Encoding, repeated Content-Length, a Transfer-Encoding other than
 * "chunked", and IP literals in any non-canonical spelling
 * (cd_addr_literal()).
 *
 * Trust boundary: the head comes from the sandboxed agent; it is a
 * (pointer, length) view, never read past `len`, and capped in bytes, line
 * length and header count (bounds.h). */
#ifndef CD_EGRESS_HTTP_H
#define CD_EGRESS_HTTP_H

#include "util/bounds.h"
#include "util/err.h"
#include "policy/match-host.h"

#include <stddef.h>
#include <stdint.h>

#define CD_HTTP_METHOD_MAX 16

/* One header line kept for forwarding: a view into the parsed head. */
struct cd_http_field {
	size_t off, len; /* the whole line without its CRLF */
};

struct cd_http_request {
	int is_connect;                  /* CONNECT: a tunnel */
	char method[CD_HTTP_METHOD_MAX]; /* "CONNECT", "GET", ... */
	int minor;                       /* HTTP/1.minor: 0 or 1 */
	char host[CD_HOST_MAX];          /* normalized (cd_host_normalize) */
	uint16_t port;                   /* given, or 80 for http:// */
	char path[CD_EGRESS_LINE_MAX];   /* origin form ("/x?y"); "" for CONNECT */
	size_t head_len;                 /* bytes of the head, blank line included */
	uint64_t content_length;         /* Content-Length, or 0 */
	int chunked;                     /* Transfer-Encoding: chunked */
	size_t nfields;                  /* header lines to forward (plain HTTP) */
	struct cd_http_field fields[CD_EGRESS_HEADERS_MAX];
};

/* Parse the head at the start of (p, len).
 * Returns 0 when the head is not complete yet (and nothing seen so far is
 * wrong), the head's length (> 0) with *ret filled when it is complete and
 * valid, or:
 *   -CD_E_LIMIT   past CD_EGRESS_HEAD_MAX, CD_EGRESS_LINE_MAX or
 *                 CD_EGRESS_HEADERS_MAX;
 *   -CD_E_DENIED  a target in an odd IP spelling, or a Host that disagrees
 *                 with the target (the caller answers 403);
 *   -CD_E_PARSE   anything else malformed (the caller answers 400).
 * On failure `err` (may be NULL) holds a one-line reason; the reason never
 * quotes the request's bytes.  `ret` is written only on success.  The
 * caller keeps the buffer: the fields in *ret point into it by offset.
 * Header lines named Host, Connection, Proxy-Connection, Keep-Alive,
 * Proxy-Authorization, Proxy-Authenticate, TE, Trailer and Upgrade are
 * checked but not listed in fields[] (they are hop-by-hop or replaced). */
int cd_http_parse_head(const char *p, size_t len, struct cd_http_request *ret, struct cd_err *err);

#endif
