/* mcp-http.c — MCP's Streamable HTTP transport toward a remote server;
 * see mcp-http.h for what it does and refuses.
 *
 * One exchange is one POST and what answers it (a JSON body or an event
 * stream, resumed with GET when it drops), the server's own GET stream,
 * or the closing DELETE.  An exchange keeps the ids of the requests it
 * carried until their answers went by; whatever ends it early answers
 * the rest with an error, so that no request of the client's waits for
 * ever on a server that went away or was refused.
 *
 * Trust boundary: status, headers and body come from the server and are
 * hostile: headers are compared and checked byte by byte, bodies capped
 * and parsed only to match answers; the gateway decides on the messages. */
#include "mcp-http.h"

#include "http/client.h"
#include "jsonrpc.h"
#include "util/bounds.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define DISCARD_MAX   (64 * 1024) /* a body read only to be dropped */
#define CLOSE_WAIT_MS 2000

enum xkind { X_POST, X_STREAM, X_DELETE };
enum xmode { M_NONE, M_JSON, M_SSE, M_DISCARD };

struct exchange {
	struct cd_mcp_http *h;
	enum xkind kind;
	enum xmode mode;
	json_t *ids; /* the ids of its requests not answered yet */
	int is_init;
	struct cd_buf body;
	struct cd_sse sse;
	unsigned resumes;
	int status;
	int refused; /* recorded already: the reason is in why */
	char why[200];
	struct cd_http_call *rq; /* the request in flight, or NULL */
	int64_t due_ms;          /* a GET waiting to be (re)started at this time */
	int events;              /* events seen on this stream */
	int fallback;            /* initialize refused with 4xx: try HTTP+SSE */
	char *line;              /* initialize: the message, to send again there */
	size_t line_len;
	struct exchange *next;
};

struct cd_mcp_http {
	struct cd_http_client *c;
	struct cd_mcp_http_cfg cfg;
	struct cd_tool_url url;
	char *auth; /* "Authorization: ..." */
	char session[CD_MCP_SESSION_ID_MAX + 1];
	int have_session, initialized;
	char version[16];
	struct exchange *xs;
	int stream; /* the GET stream was asked for */
	unsigned stream_fails;
	int dead, fatal, closing;
	/* HTTP+SSE (2024-11-05): 1 while waiting for the endpoint event of
	 * the GET stream, 2 once messages go to that endpoint. */
	int legacy;
	struct exchange *lstream;
	char endpoint[CD_URL_MAX];
	struct cd_buf pending; /* lines sent before the endpoint was known */
};

static int send_pending(struct cd_mcp_http *h, const char *why);

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void event(struct cd_mcp_http *h, const char *what, const char *why)
{
	if (h->cfg.on_event)
		h->cfg.on_event(h->cfg.ctx, what, why);
}

/* A header value of the server's, quoted for a record: printable ASCII,
 * at most 80 bytes. */
static void quote(char *out, size_t on, const char *v, size_t vl)
{
	size_t i, k = 0;

	for (i = 0; i < vl && k + 1 < on && i < 80; i++)
		out[k++] = v[i] > 0x20 && v[i] < 0x7f ? v[i] : '?';
	out[k] = '\0';
}

static void x_free(struct exchange *x)
{
	struct exchange **pp;

	if (!x)
		return;
	for (pp = &x->h->xs; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			break;
		}
	if (x->rq)
		cd_http_cancel(x->h->c, x->rq);
	if (x == x->h->lstream)
		x->h->lstream = NULL;
	json_decref(x->ids);
	free(x->line);
	cd_buf_release(&x->body);
	cd_sse_release(&x->sse);
	free(x);
}

static struct exchange *x_new(struct cd_mcp_http *h, enum xkind kind)
{
	struct exchange *x = calloc(1, sizeof *x);

	if (!x)
		return NULL;
	x->h = h;
	x->kind = kind;
	x->ids = json_array();
	if (!x->ids) {
		free(x);
		return NULL;
	}
	cd_buf_init(&x->body, CD_HTTP_BODY_MAX);
	cd_sse_init(&x->sse, CD_SSE_LINE_MAX, CD_SSE_EVENT_MAX);
	x->next = h->xs;
	h->xs = x;
	return x;
}

static int forward(struct cd_mcp_http *h, const char *line, size_t len)
{
	if (h->fatal)
		return h->fatal;
	if (h->cfg.on_message(h->cfg.ctx, line, len) < 0)
		h->fatal = -EIO;
	return h->fatal;
}

/* An error answer, from cordon, to each request still waiting in x. */
static void answer_rest(struct exchange *x, const char *why)
{
	char msg[256];
	size_t i, n;
	char *line;

	snprintf(msg, sizeof msg, "upstream: %s", why);
	for (i = 0; i < json_array_size(x->ids); i++) {
		line = cd_jsonrpc_error_line(json_array_get(x->ids, i), -32000, msg, &n);
		if (!line) {
			x->h->fatal = -ENOMEM;
			return;
		}
		(void)forward(x->h, line, n > 0 && line[n - 1] == '\n' ? n - 1 : n);
		free(line);
	}
	json_array_clear(x->ids);
}

/* An answer went by: its request waits no more, on whichever exchange. */
static void answered(struct cd_mcp_http *h, const char *key)
{
	struct exchange *x;
	char k[CD_JSONRPC_IDKEY_MAX];
	size_t i;

	for (x = h->xs; x; x = x->next)
		for (i = 0; i < json_array_size(x->ids); i++)
			if (cd_jsonrpc_idkey(json_array_get(x->ids, i), k) == 0 &&
			    !strcmp(k, key)) {
				json_array_remove(x->ids, i);
				return;
			}
}

static void note_version(struct cd_mcp_http *h, json_t *result)
{
	const char *v = json_string_value(json_object_get(result, "protocolVersion"));

	if (v && strlen(v) < sizeof h->version && strspn(v, "0123456789-") == strlen(v))
		memcpy(h->version, v, strlen(v) + 1);
	h->initialized = 1;
}

/* One message of the server's (an element of a batch, or the whole). */
static int deliver_value(struct exchange *x, json_t *v, const char *raw, size_t rawlen)
{
	struct cd_jsonrpc_msg m;
	char *line = NULL;
	size_t n = rawlen;
	int r;

	if (cd_jsonrpc_classify(v, &m, NULL) == 0 &&
	    (m.kind == CD_JSONRPC_RESULT || m.kind == CD_JSONRPC_ERROR)) {
		if (x->is_init && m.kind == CD_JSONRPC_RESULT)
			note_version(x->h, m.result);
		answered(x->h, m.idkey);
	}
	cd_jsonrpc_msg_release(&m);
	if (!raw) {
		line = cd_jsonrpc_dump_line(v, &n);
		if (!line)
			return x->h->fatal = -ENOMEM;
		raw = line;
		n = n && line[n - 1] == '\n' ? n - 1 : n;
	}
	r = forward(x->h, raw, n);
	free(line);
	return r;
}

/* A JSON text from the server: newlines folded (JSON allows them only
 * as white space), matched to its request, passed on.  Text that does not
 * parse is passed on as it is: the gateway refuses and records it. */
static int deliver(struct exchange *x, const char *p, size_t n)
{
	struct cd_jsonrpc_msg m;
	char *t = malloc(n ? n : 1);
	size_t i;
	int r = 0;

	if (!t)
		return x->h->fatal = -ENOMEM;
	for (i = 0; i < n; i++)
		t[i] = p[i] == '\n' || p[i] == '\r' ? ' ' : p[i];
	if (cd_jsonrpc_parse(t, n, &m, NULL) < 0 && m.batch && json_is_array(m.root)) {
		for (i = 0; i < json_array_size(m.root) && r == 0; i++)
			r = deliver_value(x, json_array_get(m.root, i), NULL, 0);
	} else if (m.root) {
		r = deliver_value(x, m.root, t, n);
	} else {
		r = forward(x->h, t, n);
	}
	cd_jsonrpc_msg_release(&m);
	free(t);
	return r;
}

static int legacy_endpoint(struct cd_mcp_http *h, const char *data);

static int on_sse(void *ctx, const struct cd_sse_event *ev)
{
	struct exchange *x = ctx;

	x->events++;
	if (x == x->h->lstream && !strcmp(ev->type, "endpoint"))
		return legacy_endpoint(x->h, ev->data) < 0 ? -CD_E_DENIED : 0;
	if (strcmp(ev->type, "message") != 0)
		return 0; /* no other type carries MCP messages */
	return deliver(x, ev->data, ev->data_len) < 0 ? -EIO : 0;
}

static int refuse(struct exchange *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(struct exchange *x, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->why, sizeof x->why, fmt, ap);
	va_end(ap);
	x->refused = 1;
	event(x->h, "refused", x->why);
	return -CD_E_DENIED;
}

/* The endpoint event of an HTTP+SSE stream: a path on the same origin,
 * or a URL of the same origin; anything else is refused (it would send
 * the session, and the credential, elsewhere). */
static int legacy_endpoint(struct cd_mcp_http *h, const char *data)
{
	struct cd_tool_url u;
	char full[CD_URL_MAX + 300], q[96];
	int n;

	quote(q, sizeof q, data, strlen(data));
	if (h->legacy != 1 || !h->lstream)
		return 0; /* one endpoint per session: later ones are ignored */
	if (data[0] == '/' && data[1] != '/')
		n = snprintf(full, sizeof full, "%s://%s:%u%s", h->url.https ? "https" : "http",
		             h->url.host, h->url.port, data);
	else
		n = snprintf(full, sizeof full, "%s", data);
	if (n < 0 || (size_t)n >= sizeof full || cd_tool_url_parse(full, &u, NULL) < 0 ||
	    u.https != h->url.https || strcmp(u.host, h->url.host) || u.port != h->url.port)
		return refuse(h->lstream, "an HTTP+SSE endpoint ('%s') off the server's origin", q);
	memcpy(h->endpoint, u.url, sizeof h->endpoint);
	h->legacy = 2;
	return 0;
}

static int valid_session_id(const char *v, size_t n)
{
	size_t i;

	if (n == 0 || n > CD_MCP_SESSION_ID_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (v[i] < 0x21 || v[i] > 0x7e)
			return 0;
	return 1;
}

/* Mcp-Session-Id: given once, with the answer to initialize, then the
 * same or none on every answer. */
static int check_session(struct exchange *x, const struct cd_http_call *rq)
{
	struct cd_mcp_http *h = x->h;
	size_t n = 0;
	const char *v = cd_http_call_header(rq, "mcp-session-id", &n);
	char q[96];

	if (!v)
		return 0;
	quote(q, sizeof q, v, n);
	if (!valid_session_id(v, n))
		return refuse(x, "a session id that is not 1-256 visible ASCII bytes ('%s')", q);
	if (h->have_session) {
		if (strlen(h->session) != n || memcmp(h->session, v, n))
			return refuse(x, "the server changed the session id (to '%s')", q);
		return 0;
	}
	if (!x->is_init || h->initialized)
		return refuse(x, "a session id ('%s') outside the answer to initialize", q);
	memcpy(h->session, v, n);
	h->session[n] = '\0';
	h->have_session = 1;
	return 0;
}

static int on_head(void *ctx, int status, const struct cd_http_call *rq)
{
	struct exchange *x = ctx;
	size_t n = 0;
	const char *ct;
	char q[96];

	x->status = status;
	if (status >= 300 && status < 400) {
		const char *loc = cd_http_call_header(rq, "location", &n);
		quote(q, sizeof q, loc ? loc : "", loc ? n : 0);
		return refuse(x, "a redirect (to '%s'): never followed", q);
	}
	if (x->kind == X_DELETE) {
		x->mode = M_DISCARD;
		return 0;
	}
	if (status >= 200 && status < 300 && check_session(x, rq) < 0)
		return -CD_E_DENIED;
	if (status == 404 && x->h->have_session) {
		snprintf(x->why, sizeof x->why, "the server ended the session (HTTP 404)");
		if (!x->h->dead)
			event(x->h, "failed", x->why);
		x->h->dead = 1;
		x->mode = M_DISCARD;
		return 0;
	}
	if (x->is_init && x->kind == X_POST && status >= 400 && status < 500 && status != 401 &&
	    status != 403 && !x->h->have_session && !x->h->initialized && !x->h->legacy &&
	    x->line) {
		x->fallback = 1; /* a 2024-11-05 server, perhaps */
		x->mode = M_DISCARD;
		return 0;
	}
	if (status != 200) {
		snprintf(x->why, sizeof x->why, "HTTP %d", status);
		x->mode = M_DISCARD;
		return 0;
	}
	ct = cd_http_call_header(rq, "content-type", &n);
	if (ct) {
		size_t k = 0;
		while (k < n && ct[k] != ';' && ct[k] != ' ')
			k++;
		if (k == 16 && !strncasecmp(ct, "application/json", 16) && x->kind == X_POST) {
			x->mode = M_JSON;
			return 0;
		}
		if (k == 17 && !strncasecmp(ct, "text/event-stream", 17)) {
			x->mode = M_SSE;
			return 0;
		}
	}
	quote(q, sizeof q, ct ? ct : "", ct ? n : 0);
	if (!ct && x->kind == X_POST && json_array_size(x->ids) == 0) {
		x->mode = M_DISCARD; /* an empty 200 for a notification */
		return 0;
	}
	return refuse(x, "a content type ('%s') that is neither JSON nor an event stream", q);
}

static int on_body(void *ctx, const char *p, size_t n)
{
	struct exchange *x = ctx;
	int r;

	switch (x->mode) {
	case M_JSON:
		if (cd_buf_append(&x->body, p, n) < 0)
			return refuse(x, "a JSON answer past %s", "16 MiB");
		return 0;
	case M_SSE:
		r = cd_sse_feed(&x->sse, p, n, on_sse, x);
		if (r == -CD_E_LIMIT)
			return refuse(x, "an event or a line past %s in the event stream",
			              "16 MiB");
		return r;
	case M_DISCARD:
		x->body.cap = DISCARD_MAX;
		return 0;
	default:
		return -EINVAL;
	}
}

static int x_start(struct exchange *x, const char *method, const char *body, size_t blen);

static void on_done(void *ctx, int rc, int status, const char *why);

/* A GET stream (the server's own, or the rest of a dropped answer). */
static int x_get(struct exchange *x)
{
	x->mode = M_NONE;
	x->due_ms = 0;
	cd_sse_release(&x->sse);
	/* A new stream: the parser starts over, the last id is kept. */
	{
		char id[CD_SSE_ID_MAX + 1];
		memcpy(id, x->sse.id, sizeof id);
		cd_sse_init(&x->sse, CD_SSE_LINE_MAX, CD_SSE_EVENT_MAX);
		memcpy(x->sse.id, id, sizeof id);
	}
	return x_start(x, "GET", NULL, 0);
}

static void stream_done(struct exchange *x, int rc)
{
	struct cd_mcp_http *h = x->h;

	if (x == h->lstream) {
		/* HTTP+SSE: the session is the stream; it does not come back. */
		if (!x->refused && !h->closing)
			event(h, "failed",
			      h->legacy == 2
			              ? "the server's HTTP+SSE stream ended: the session is over"
			              : "no HTTP+SSE endpoint either: the server speaks neither "
			                "transport");
		h->dead = 1;
		answer_rest(x, x->refused ? x->why : "the server's event stream ended");
		if (h->legacy == 1)
			(void)send_pending(h, x->refused
			                              ? x->why
			                              : "the server speaks neither Streamable HTTP "
			                                "nor HTTP+SSE");
		x_free(x);
		return;
	}

	/* No stream offered (405 and the like), or the session is over. */
	if (x->mode != M_SSE || x->refused || h->dead || h->closing) {
		x_free(x);
		return;
	}
	h->stream_fails = x->events ? 0 : h->stream_fails + 1;
	if (h->stream_fails > CD_MCP_HTTP_GET_RETRIES) {
		event(h, "failed", "the server's event stream keeps ending: not reopened");
		x_free(x);
		return;
	}
	(void)rc;
	x->events = 0;
	x->due_ms = now_ms() + (x->sse.retry_ms >= 0 ? x->sse.retry_ms : 1000);
}

static int x_get(struct exchange *x);

/* initialize was refused with a 4xx: the server may be a 2024-11-05 one,
 * which opens an event stream on GET and names the URL to POST to in its
 * first event ("endpoint").  initialize waits in `pending` until then. */
static void legacy_start(struct exchange *x)
{
	struct cd_mcp_http *h = x->h;
	struct exchange *st = x_new(h, X_STREAM);
	char msg[160];

	snprintf(msg, sizeof msg,
	         "initialize refused (HTTP %d): trying the HTTP+SSE transport (2024-11-05)",
	         x->status);
	event(h, "failed", msg);
	if (!st || cd_buf_append(&h->pending, x->line, x->line_len) < 0 ||
	    cd_buf_putc(&h->pending, '\n') < 0) {
		x_free(st);
		answer_rest(x, "out of memory");
		x_free(x);
		return;
	}
	h->legacy = 1;
	h->lstream = st;
	st->is_init = 1; /* the answer to initialize comes on it */
	x_free(x);       /* its ids are sent again from pending */
	if (x_get(st) < 0) {
		event(h, "failed", st->why);
		h->dead = 1;
		x_free(st);
	}
}

static void on_done(void *ctx, int rc, int status, const char *why)
{
	struct exchange *x = ctx;
	struct cd_mcp_http *h = x->h;
	char msg[200];

	x->rq = NULL;
	if (rc == 0 && x->mode == M_JSON && x->body.len)
		(void)deliver(x, x->body.data, x->body.len);
	cd_buf_reset(&x->body);
	if (rc < 0 && !x->refused && rc != -ECONNRESET && x->kind != X_DELETE) {
		snprintf(x->why, sizeof x->why, "%s", why && *why ? why : "the request failed");
		if (rc == -CD_E_DENIED || rc == -CD_E_LIMIT) {
			x->refused = 1;
			event(h, "refused", x->why);
		}
	}
	if (x->kind == X_DELETE) {
		x_free(x);
		return;
	}
	if (x->kind == X_STREAM) {
		stream_done(x, rc);
		return;
	}
	if (x->fallback && rc == 0) {
		legacy_start(x);
		return;
	}
	/* HTTP+SSE: a POST is accepted (202); its answer comes on the stream. */
	if (h->legacy == 2 && rc == 0 && status >= 200 && status < 300 && h->lstream &&
	    json_array_size(x->ids)) {
		if (json_array_extend(h->lstream->ids, x->ids) < 0)
			h->fatal = -ENOMEM;
		json_array_clear(x->ids);
	}
	if (!json_array_size(x->ids)) {
		x_free(x);
		return;
	}
	/* Requests still unanswered: resume the stream where it broke when
	 * the server numbered its events, else answer them with an error. */
	if (x->mode == M_SSE && !x->refused && !h->dead && x->sse.id[0] &&
	    x->resumes < CD_MCP_HTTP_RESUMES) {
		x->resumes++;
		snprintf(msg, sizeof msg,
		         "the event stream ended before its answer: resumed (attempt %u)",
		         x->resumes);
		event(h, "failed", msg);
		x->due_ms = now_ms() + (x->sse.retry_ms >= 0 ? x->sse.retry_ms : 0);
		if (x->due_ms <= now_ms())
			x->due_ms = now_ms();
		return;
	}
	if (!x->refused) {
		if (!x->why[0] || x->mode == M_SSE)
			snprintf(x->why, sizeof x->why, "%s",
			         x->mode == M_SSE ? "the event stream ended before its answer"
			         : rc < 0 ? "the server dropped the connection before its answer"
			                  : "the server's answer did not come");
		event(h, "failed", x->why);
	}
	answer_rest(x, x->why);
	x_free(x);
}

static int x_start(struct exchange *x, const char *method, const char *body, size_t blen)
{
	struct cd_mcp_http *h = x->h;
	char ver[64], sess[CD_MCP_SESSION_ID_MAX + 32], last[CD_SSE_ID_MAX + 32];
	const char *hdr[8];
	size_t n = 0;
	struct cd_http_call_cfg q;
	struct cd_err err = { 0, "" };
	int r;

	hdr[n++] = "User-Agent: cordon";
	hdr[n++] = !strcmp(method, "POST") ? "Accept: application/json, text/event-stream"
	                                   : "Accept: text/event-stream";
	if (!strcmp(method, "POST"))
		hdr[n++] = "Content-Type: application/json";
	if (h->version[0]) {
		snprintf(ver, sizeof ver, "MCP-Protocol-Version: %s", h->version);
		hdr[n++] = ver;
	}
	if (h->have_session) {
		snprintf(sess, sizeof sess, "Mcp-Session-Id: %s", h->session);
		hdr[n++] = sess;
	}
	if (!strcmp(method, "GET") && x->sse.id[0]) {
		snprintf(last, sizeof last, "Last-Event-ID: %s", x->sse.id);
		hdr[n++] = last;
	}
	if (h->auth)
		hdr[n++] = h->auth;
	memset(&q, 0, sizeof q);
	q.method = method;
	q.url = h->legacy == 2 && x->kind == X_POST ? h->endpoint : h->url.url;
	q.headers = hdr;
	q.nheaders = n;
	q.body = body;
	q.body_len = blen;
	q.timeout_ms = x->kind == X_STREAM ? 0 : h->cfg.request_timeout_ms;
	q.max_body = CD_HTTP_STREAM_MAX;
	q.on_head = on_head;
	q.on_body = on_body;
	q.on_done = on_done;
	q.ctx = x;
	x->status = 0;
	r = cd_http_start(h->c, &q, &x->rq, &err);
	if (r < 0)
		snprintf(x->why, sizeof x->why, "%s", err.msg);
	return r;
}

int cd_mcp_http_new(const struct cd_mcp_http_cfg *cfg, struct cd_mcp_http **ret, struct cd_err *err)
{
	struct cd_mcp_http *h = calloc(1, sizeof *h);
	struct cd_http_client_cfg cc;
	int r;

	if (!h)
		return cd_err_set(err, -ENOMEM, "out of memory");
	h->cfg = *cfg;
	cd_buf_init(&h->pending, CD_JSONRPC_LINE_MAX);
	h->url = *cfg->url;
	h->cfg.url = &h->url;
	if (cfg->authorization) {
		size_t n = strlen(cfg->authorization) + 16;
		h->auth = malloc(n);
		if (!h->auth || strchr(cfg->authorization, '\n') ||
		    strchr(cfg->authorization, '\r')) {
			free(h->auth);
			free(h);
			return cd_err_set(err, -EINVAL, "the upstream's secret is not one line");
		}
		snprintf(h->auth, n, "Authorization: %s", cfg->authorization);
	}
	memset(&cc, 0, sizeof cc);
	cc.host = h->url.host;
	cc.port = h->url.port;
	cc.pin = cfg->pin;
	cc.ca_file = cfg->ca_file;
	cc.on_connect = cfg->on_connect;
	cc.ctx = cfg->ctx;
	r = cd_http_client_new(&cc, &h->c, err);
	if (r < 0) {
		cd_mcp_http_free(h);
		return r;
	}
	*ret = h;
	return 0;
}

/* The ids of the requests in one outgoing message (or batch) into x. */
static int collect_ids(struct exchange *x, json_t *root)
{
	json_t *one[1] = { root };
	size_t i, n = json_is_array(root) ? json_array_size(root) : 1;

	for (i = 0; i < n; i++) {
		json_t *v = json_is_array(root) ? json_array_get(root, i) : one[0];
		json_t *id = json_object_get(v, "id");
		const char *method = json_string_value(json_object_get(v, "method"));
		if (!method || !id)
			continue; /* a notification or an answer: nothing comes back */
		if (!strcmp(method, "initialize"))
			x->is_init = 1;
		if (json_array_append(x->ids, id) < 0)
			return -ENOMEM;
	}
	return 0;
}

int cd_mcp_http_send(struct cd_mcp_http *h, const char *line, size_t len)
{
	struct exchange *x;
	json_t *root;
	int r;

	if (h->fatal)
		return h->fatal;
	if (h->legacy == 1) {
		if (cd_buf_append(&h->pending, line, len) < 0 || cd_buf_putc(&h->pending, '\n') < 0)
			return h->fatal = -ENOMEM;
		return 0;
	}
	x = x_new(h, X_POST);
	if (!x)
		return -ENOMEM;
	/* The gateway sends only what it parsed and re-serialized. */
	root = json_loadb(line, len, JSON_DECODE_ANY, NULL);
	r = root ? collect_ids(x, root) : 0;
	json_decref(root);
	if (r == 0 && x->is_init && !h->legacy) {
		x->line = malloc(len ? len : 1);
		if (!x->line)
			r = -ENOMEM;
		else
			memcpy(x->line, line, len);
		x->line_len = len;
	}
	if (r < 0) {
		x_free(x);
		return r;
	}
	if (h->dead) {
		answer_rest(x, "the server ended the session");
		x_free(x);
		return h->fatal;
	}
	r = x_start(x, "POST", line, len);
	if (r < 0) {
		event(h, "failed", x->why);
		answer_rest(x, x->why);
		x_free(x);
		return h->fatal;
	}
	/* After the handshake, the server's own stream is asked for once. */
	if (h->initialized && !h->stream && !x->is_init && !h->legacy) {
		struct exchange *s = x_new(h, X_STREAM);
		h->stream = 1;
		if (s && x_get(s) < 0)
			x_free(s);
	}
	return 0;
}

static int collect_ids(struct exchange *x, json_t *root);

/* The lines that waited for the HTTP+SSE endpoint: sent now, or (the
 * stream failed first) answered with an error. */
static int send_pending(struct cd_mcp_http *h, const char *why)
{
	struct cd_buf b = h->pending;
	size_t i = 0;
	int r = 0;

	cd_buf_init(&h->pending, CD_JSONRPC_LINE_MAX);
	while (i < b.len && r >= 0) {
		char *nl = memchr(b.data + i, '\n', b.len - i);
		size_t n = nl ? (size_t)(nl - (b.data + i)) : b.len - i;

		if (h->legacy == 2) {
			r = cd_mcp_http_send(h, b.data + i, n);
		} else {
			struct exchange *x = x_new(h, X_POST);
			json_t *root = json_loadb(b.data + i, n, JSON_DECODE_ANY, NULL);
			if (!x || (root && collect_ids(x, root) < 0))
				r = h->fatal = -ENOMEM;
			json_decref(root);
			if (x) {
				answer_rest(x, why);
				x_free(x);
			}
		}
		i += n + 1;
	}
	cd_buf_release(&b);
	return r < 0 ? r : h->fatal;
}

int cd_mcp_http_run(struct cd_mcp_http *h, struct pollfd *extra, size_t nextra, int timeout_ms)
{
	struct exchange *x, *next;
	int64_t t = now_ms(), due = -1;
	int r;

	for (x = h->xs; x; x = x->next)
		if (x->due_ms && (due < 0 || x->due_ms < due))
			due = x->due_ms;
	if (due >= 0) {
		int64_t wait = due > t ? due - t : 0;
		if (timeout_ms < 0 || wait < timeout_ms)
			timeout_ms = (int)wait;
	}
	r = cd_http_client_run(h->c, extra, nextra, timeout_ms);
	if (r < 0)
		return r;
	if (h->legacy == 2 && h->pending.len && (r = send_pending(h, "")) < 0)
		return r;
	t = now_ms();
	for (x = h->xs; x; x = next) {
		next = x->next;
		if (!x->due_ms || x->due_ms > t || x->rq)
			continue;
		if (x_get(x) < 0) {
			event(h, "failed", x->why);
			answer_rest(x, x->why);
			x_free(x);
		}
	}
	return h->fatal;
}

int cd_mcp_http_dead(const struct cd_mcp_http *h)
{
	return h->dead;
}

size_t cd_mcp_http_busy(const struct cd_mcp_http *h)
{
	size_t n = 0;
	const struct exchange *x;

	for (x = h->xs; x; x = x->next)
		n += x->kind == X_POST;
	return n;
}

void cd_mcp_http_close(struct cd_mcp_http *h, int wait_ms)
{
	struct exchange *x;
	int64_t end = now_ms() + (wait_ms < 0 ? CLOSE_WAIT_MS : wait_ms);

	if (!h)
		return;
	h->closing = 1;
	/* What is still open is dropped: nobody waits for it now. */
	while (h->xs)
		x_free(h->xs);
	if (h->have_session && !h->dead && (x = x_new(h, X_DELETE))) {
		if (x_start(x, "DELETE", NULL, 0) < 0)
			x_free(x);
		while (h->xs && now_ms() < end)
			if (cd_http_client_run(h->c, NULL, 0, (int)(end - now_ms())) < 0)
				break;
	}
	cd_mcp_http_free(h);
}

void cd_mcp_http_free(struct cd_mcp_http *h)
{
	if (!h)
		return;
	h->closing = 1;
	while (h->xs)
		x_free(h->xs);
	cd_http_client_free(h->c);
	cd_buf_release(&h->pending);
	if (h->auth) {
		explicit_bzero(h->auth, strlen(h->auth));
		free(h->auth);
	}
	explicit_bzero(h->session, sizeof h->session);
	free(h);
}
