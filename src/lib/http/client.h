/* client.h — a small HTTP client over libcurl (loaded on first use with
 * cd_dl_load: `cordon run` never maps it), for cordon's remote upstreams
 * (cordon mcp with a url: tool), and an event-stream parser (client-sse.c).
 *
 * One client talks to one origin, through one address the caller has
 * already vetted (resolved and classified as the egress proxy does): every
 * connection libcurl opens is checked against that address in its
 * open-socket callback and refused when it is any other, and the name is
 * pinned to it (CURLOPT_RESOLVE), so neither DNS rebinding nor a second
 * lookup can move it.  Redirects are never followed (the caller sees the
 * 3xx and refuses it), proxies from the environment are ignored, only
 * http and https are spoken, TLS peers are verified (chain and name), no
 * content encoding is asked for (no decompression bombs), and each body is
 * capped.
 *
 * Requests run concurrently on one libcurl multi handle, driven by
 * cd_http_client_run() from the caller's own loop (its fds are polled
 * together with libcurl's); the callbacks run inside it, on the caller's
 * thread.  Nothing here is thread-safe.
 *
 * Trust boundary: the peer is untrusted.  Status, header lines and body
 * bytes are handed over as (pointer, length) views, already capped; the
 * caller parses them.  Header values the caller sends (credentials) are
 * never logged here and are wiped when a request ends. */
#ifndef CD_HTTP_CLIENT_H
#define CD_HTTP_CLIENT_H

#include "util/bounds.h"
#include "util/buf.h"
#include "util/err.h"

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct cd_http_client;
struct cd_http_call;

struct cd_http_client_cfg {
	const char *host; /* the URL's host: a name, a dotted quad or "[v6]" */
	uint16_t port;
	const struct sockaddr_storage *pin; /* the vetted address, port set (required) */
	uint64_t connect_timeout_ms;        /* 0: 10 s */
	const char *ca_file;                /* trust these CAs instead of the system's (NULL) */
	/* Each connection opened (allowed: the pinned address) or refused
	 * (another address): for the record.  May be NULL. */
	void (*on_connect)(void *ctx, const struct sockaddr_storage *addr, int allowed);
	void *ctx;
};

/* One request.  Header lines and the body are copied; the callbacks run
 * inside cd_http_client_run(). */
struct cd_http_call_cfg {
	const char *method;         /* "GET", "POST", "DELETE" */
	const char *url;            /* on the client's origin */
	const char *const *headers; /* "Name: value" lines */
	size_t nheaders;
	const char *body; /* POST */
	size_t body_len;
	uint64_t timeout_ms; /* the whole request; 0: none (an event stream) */
	size_t max_body;     /* bytes of body in all: past it the request fails (required) */
	/* The response's status and headers, once complete (the final block:
	 * 1xx blocks are skipped).  Negative: the request is aborted (on_done
	 * gets that code). */
	int (*on_head)(void *ctx, int status, const struct cd_http_call *rq);
	/* Body bytes, in order.  Negative: aborted. */
	int (*on_body)(void *ctx, const char *p, size_t n);
	/* The end: rc 0 when the body was complete, else negative (-ETIMEDOUT,
	 * -ECONNRESET for a dropped connection, -CD_E_LIMIT for a body past
	 * max_body, -CD_E_DENIED for a connection refused by the pin, the
	 * callbacks' codes) with a one-line reason.  Called once, unless the
	 * request was cancelled; the request is freed after it returns. */
	void (*on_done)(void *ctx, int rc, int status, const char *why);
	void *ctx;
};

/* A client for one origin; libcurl is loaded here (-CD_E_KERNEL with the
 * package to install when it is missing).  Free with cd_http_client_free
 * (NULL is fine), which cancels every request without calling on_done. */
int cd_http_client_new(const struct cd_http_client_cfg *cfg, struct cd_http_client **ret,
                       struct cd_err *err);
void cd_http_client_free(struct cd_http_client *c);

/* Start a request; *ret (may be NULL) names it for cd_http_cancel until
 * its on_done.  -CD_E_LIMIT past CD_HTTP_INFLIGHT_MAX, -ENOMEM, -EINVAL. */
int cd_http_start(struct cd_http_client *c, const struct cd_http_call_cfg *rq,
                  struct cd_http_call **ret, struct cd_err *err);
/* Stop a request now; its on_done is not called. */
void cd_http_cancel(struct cd_http_client *c, struct cd_http_call *rq);
size_t cd_http_active(const struct cd_http_client *c);

/* The value of response header `name` (case-insensitive) in the final
 * header block, as a view (*ret_len), or NULL.  Valid inside on_head. */
const char *cd_http_call_header(const struct cd_http_call *rq, const char *name, size_t *ret_len);

/* Wait up to timeout_ms (-1: no limit) for libcurl's sockets or one of
 * the caller's `extra` fds (events POLLIN/POLLOUT; revents filled), then
 * move every request on and run the callbacks.  0, or negative when the
 * multi handle failed. */
int cd_http_client_run(struct cd_http_client *c, struct pollfd *extra, size_t nextra,
                       int timeout_ms);

/* ---- text/event-stream (client-sse.c) ------------------------------- */

/* One event, dispatched at its blank line: type ("message" when the
 * stream gave none), data (the data lines joined by "\n", NUL-terminated,
 * never empty: an event without data is not dispatched), id (the last
 * event id so far: "" when none) and retry (ms, capped at
 * CD_SSE_RETRY_MAX_MS; -1 when the stream never set one). */
struct cd_sse_event {
	const char *type;
	const char *data;
	size_t data_len;
	const char *id;
	int64_t retry_ms;
};

/* Return negative to stop: cd_sse_feed returns that code. */
typedef int (*cd_sse_event_fn)(void *ctx, const struct cd_sse_event *ev);

struct cd_sse {
	struct cd_buf line; /* the line being read, capped at line_max */
	struct cd_buf data; /* the event's data so far, capped at event_max */
	char type[64];
	char id[CD_SSE_ID_MAX + 1]; /* the last event id */
	char pending_id[CD_SSE_ID_MAX + 1];
	int id_set;       /* this event set an id */
	int64_t retry_ms; /* -1: none */
	int has_data;
	int after_cr; /* the last byte was CR: an LF right after it ends nothing */
	int started;  /* a BOM at the very start is skipped */
	int failed;   /* a cap was passed: every later feed fails */
};

/* A parser with its caps (line and event data, bytes); no allocation
 * until bytes come. */
void cd_sse_init(struct cd_sse *s, size_t line_max, size_t event_max);
void cd_sse_release(struct cd_sse *s);

/* Feed n bytes (any split: CR, LF and CRLF end lines, "\r" "\n" across
 * two feeds is one end).  Comments (":...") and unknown fields are
 * ignored; "id" with a NUL is ignored; "retry" must be digits.  0, the
 * callback's negative code, or -CD_E_LIMIT when a line or an event's data
 * passes its cap (the stream must be dropped: the parser stays failed). */
int cd_sse_feed(struct cd_sse *s, const char *p, size_t n, cd_sse_event_fn fn, void *ctx);

#endif
