/* mcp-http.h — MCP's Streamable HTTP transport (protocol 2025-03-26 and
 * later), client side: the gateway's way to a remote server named by a
 * policy tool's url:.  It stands where the pipes of a launched server
 * stand: the gateway's lines to the server go in (cd_mcp_http_send), the
 * server's messages come out one line each (on_message), and the
 * gateway's state machine (mcp.h) decides on them exactly as on a
 * launched server's.
 *
 * What it does for the session: every message is a POST with
 * MCP-Protocol-Version (once negotiated) and Mcp-Session-Id (once the
 * server gave one in its answer to initialize); an answer is JSON or an
 * event stream; a stream that ends before it answered its requests is
 * resumed with GET and Last-Event-ID when the server numbered its events
 * (at most CD_MCP_HTTP_RESUMES times), else those requests get an error
 * answer (-32000) so the client is never left waiting; a GET stream
 * carries the server's own requests and notifications when the server
 * offers one; DELETE ends the session.  A server that refuses initialize
 * with a 4xx is tried as a 2024-11-05 one (HTTP+SSE): GET opens its event
 * stream, whose `endpoint` event (same origin only) names where to POST;
 * answers come on that stream, and its end ends the session.
 *
 * Refused, with an on_event record, and the requests concerned answered
 * with an error: a redirect (never followed), a content type other than
 * JSON or an event stream, a body or an event past its cap, a session id
 * that is not 1..256 visible ASCII bytes or that changes, appears late or
 * disappears, a connection to any address but the vetted one.  A 404 on
 * an established session ends it (the gateway ends the client's).
 *
 * Trust boundary: the server is hostile.  Its bytes reach the gateway as
 * lines (newlines folded to spaces), where they are parsed and decided as
 * any server's; here they are only parsed to match answers to requests.
 * The Authorization value is copied, sent on each request, never put in
 * an event, and wiped on free. */
#ifndef CD_MCP_HTTP_H
#define CD_MCP_HTTP_H

#include "policy/tool-url.h"
#include "util/err.h"

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define CD_MCP_HTTP_RESUMES     2 /* resumptions of one stream (Last-Event-ID) */
#define CD_MCP_HTTP_GET_RETRIES 3 /* GET streams reopened with no event in between */

struct cd_mcp_http;

struct cd_mcp_http_cfg {
	const struct cd_tool_url *url;
	const struct sockaddr_storage *pin; /* the vetted address, port set */
	const char *authorization;          /* the header's value, or NULL */
	const char *ca_file;                /* NULL: the system's CAs */
	uint64_t request_timeout_ms;        /* one POST and its answer; 0: none */
	/* One message from the server (a JSON text without newlines).
	 * Negative: the session cannot go on (cd_mcp_http_run returns it). */
	int (*on_message)(void *ctx, const char *line, size_t len);
	/* A refusal or a failure, for the record: `what` is "refused" or
	 * "failed", `why` one line without secrets. */
	void (*on_event)(void *ctx, const char *what, const char *why);
	/* Each connection opened to the server (or refused: another address). */
	void (*on_connect)(void *ctx, const struct sockaddr_storage *addr, int allowed);
	void *ctx;
};

/* A transport for one session (loads libcurl).  0, or negative with the
 * reason in err. */
int cd_mcp_http_new(const struct cd_mcp_http_cfg *cfg, struct cd_mcp_http **ret,
                    struct cd_err *err);

/* Send one line from the gateway (a JSON-RPC message or batch).  0, or
 * negative when it could not be started (its requests are answered with
 * an error through on_message first). */
int cd_mcp_http_send(struct cd_mcp_http *h, const char *line, size_t len);

/* Wait up to timeout_ms (-1: no limit) for the transport or the caller's
 * fds (see cd_http_client_run), and move everything on.  0, or negative
 * when the session cannot go on. */
int cd_mcp_http_run(struct cd_mcp_http *h, struct pollfd *extra, size_t nextra, int timeout_ms);

/* 1 when the server ended the session (404 on it, or its answers can no
 * longer be had); the caller ends the client's. */
int cd_mcp_http_dead(const struct cd_mcp_http *h);
/* Requests in flight (the caller's loop keeps running while any). */
size_t cd_mcp_http_busy(const struct cd_mcp_http *h);

/* End the session: DELETE when the server gave a session id (waited for
 * up to wait_ms), then every request cancelled.  Then free. */
void cd_mcp_http_close(struct cd_mcp_http *h, int wait_ms);
void cd_mcp_http_free(struct cd_mcp_http *h);

#endif
