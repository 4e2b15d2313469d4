/* httpd.c — the HTTP server wrapper (httpd.h) over libmicrohttpd, which is
 * loaded with cd_dl_load the first time a server starts: `cordon run` never
 * maps it.
 *
 * One thread per connection (libmicrohttpd's), at most max_conns of them
 * and max_per_ip from one address, each closed after idle_s without a byte
 * until its request is complete (the daemon's timeout), after timeout_s
 * while a handler answers it (raised per connection, lowered again when
 * the answer is sent); a
 * request is checked (header count, Host, Content-Length, body cap) before
 * any handler sees it; every response carries the security headers.
 *
 * Trust boundary: the peer's bytes (httpd.h). */
#include "httpd.h"

#include "util/dl.h"
#include "util/num.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static __typeof__(MHD_start_daemon) *p_MHD_start_daemon;
static __typeof__(MHD_stop_daemon) *p_MHD_stop_daemon;
static __typeof__(MHD_get_daemon_info) *p_MHD_get_daemon_info;
static __typeof__(MHD_lookup_connection_value) *p_MHD_lookup_connection_value;
static __typeof__(MHD_get_connection_values) *p_MHD_get_connection_values;
static __typeof__(MHD_get_connection_info) *p_MHD_get_connection_info;
static __typeof__(MHD_set_connection_option) *p_MHD_set_connection_option;
static __typeof__(MHD_create_response_from_buffer) *p_MHD_create_response_from_buffer;
static __typeof__(MHD_create_response_from_callback) *p_MHD_create_response_from_callback;
static __typeof__(MHD_add_response_header) *p_MHD_add_response_header;
static __typeof__(MHD_queue_response) *p_MHD_queue_response;
static __typeof__(MHD_destroy_response) *p_MHD_destroy_response;

static const struct cd_dl_sym mhd_syms[] = {
	CD_DL_SYM(MHD_start_daemon),
	CD_DL_SYM(MHD_stop_daemon),
	CD_DL_SYM(MHD_get_daemon_info),
	CD_DL_SYM(MHD_lookup_connection_value),
	CD_DL_SYM(MHD_get_connection_values),
	CD_DL_SYM(MHD_get_connection_info),
	CD_DL_SYM(MHD_set_connection_option),
	CD_DL_SYM(MHD_create_response_from_buffer),
	CD_DL_SYM(MHD_create_response_from_callback),
	CD_DL_SYM(MHD_add_response_header),
	CD_DL_SYM(MHD_queue_response),
	CD_DL_SYM(MHD_destroy_response),
};

#define TLS_FILE_MAX (256 * 1024)
#define SSE_SLICE_MS 500

/* A connection's watch (its socket context): since when it has been
 * receiving a request (headers and body), 0 while one is answered. */
struct cwatch {
	struct cwatch *next, **pprev;
	int fd;
	int64_t since; /* monotonic ms */
	char peer[64];
};

struct cd_httpd {
	struct cd_httpd_conf c;
	struct MHD_Daemon *d;
	char *cert, *key; /* PEM, wiped and freed at stop */
	uint16_t port;
	atomic_int stopping;
	/* The request deadline: every connection's watch, and the thread
	 * that cuts those receiving one request for longer than request_s. */
	pthread_mutex_t wmu;
	struct cwatch *watch;
	pthread_t sweeper;
	int has_sweeper;
};

/* One request's state across the library's calls. */
struct rstate {
	struct cd_buf body;
	int reject; /* an HTTP status decided before the body */
};

/* ---- pure helpers ------------------------------------------------- */

int cd_http_route_find(const struct cd_http_route *routes, size_t n, const char *method,
                       const char *path)
{
	size_t i, len;
	int other_method = 0;

	for (i = 0; i < n; i++) {
		const char *p = routes[i].path;
		len = strlen(p);
		if (len && p[len - 1] == '*' ? strncmp(p, path, len - 1) != 0
		                             : strcmp(p, path) != 0)
			continue;
		if (!strcmp(routes[i].method, method))
			return (int)i;
		other_method = 1;
	}
	return other_method ? -EPERM : -ENOENT;
}

int cd_http_addr_loopback(const char *addr)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (inet_pton(AF_INET, addr, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, addr, &a6) == 1) {
		if (IN6_IS_ADDR_LOOPBACK(&a6))
			return 1;
		if (IN6_IS_ADDR_V4MAPPED(&a6))
			return a6.s6_addr[12] == 127;
		return 0;
	}
	return -EINVAL;
}

int cd_http_parse_listen(const char *s, char *addr, size_t addrlen, uint16_t *ret_port)
{
	const char *colon, *a = s;
	size_t alen;
	uint64_t port;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			return -EINVAL;
		a = s + 1;
		alen = (size_t)(close - a);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			return -EINVAL;
		alen = (size_t)(colon - s);
	}
	if (alen == 0 || alen >= addrlen ||
	    cd_parse_u64(colon + 1, strlen(colon + 1), 65535, &port) < 0)
		return -EINVAL;
	memcpy(addr, a, alen);
	addr[alen] = '\0';
	if (cd_http_addr_loopback(addr) < 0)
		return -EINVAL;
	*ret_port = (uint16_t)port;
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode one form value (s, n) into out. */
static int form_decode(const char *s, size_t n, char *out, size_t outlen)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		int c = (unsigned char)s[i];
		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			int hi, lo;
			if (i + 2 >= n)
				return -CD_E_PARSE;
			hi = hexval((unsigned char)s[i + 1]);
			lo = hexval((unsigned char)s[i + 2]);
			if (hi < 0 || lo < 0)
				return -CD_E_PARSE;
			c = hi * 16 + lo;
			i += 2;
		}
		if (c == 0)
			return -CD_E_PARSE;
		if (o + 1 >= outlen)
			return -CD_E_LIMIT;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

int cd_http_form_get(const char *body, size_t len, const char *name, char *out, size_t outlen)
{
	size_t pos = 0, nlen = strlen(name);

	if (!outlen)
		return -CD_E_LIMIT;
	while (pos < len) {
		const char *amp = memchr(body + pos, '&', len - pos);
		size_t end = amp ? (size_t)(amp - body) : len;
		const char *eq = memchr(body + pos, '=', end - pos);
		size_t klen = eq ? (size_t)(eq - body) - pos : end - pos;
		if (klen == nlen && !memcmp(body + pos, name, nlen)) {
			const char *v = eq ? eq + 1 : body + end;
			return form_decode(v, (size_t)(body + end - v), out, outlen);
		}
		pos = end + 1;
	}
	return -ENOENT;
}

int cd_http_resp_header(struct cd_http_resp *rs, const char *name, const char *value)
{
	size_t nl = strlen(name), vl = strlen(value);

	if (strpbrk(name, "\r\n:") || strpbrk(value, "\r\n"))
		return -EINVAL;
	if (rs->nextra >= CD_HTTP_MAX_EXTRA || nl >= sizeof rs->extra[0].name ||
	    vl >= sizeof rs->extra[0].value)
		return -CD_E_LIMIT;
	memcpy(rs->extra[rs->nextra].name, name, nl + 1);
	memcpy(rs->extra[rs->nextra].value, value, vl + 1);
	rs->nextra++;
	return 0;
}

void cd_http_resp_text(struct cd_http_resp *rs, int status, const char *msg)
{
	rs->status = status;
	rs->ctype = NULL;
	cd_buf_reset(&rs->body);
	(void)cd_buf_puts(&rs->body, msg);
}

/* ---- request accessors -------------------------------------------- */

const char *cd_http_header(const struct cd_http_req *rq, const char *name)
{
	if (!rq->conn) /* a request cut before its headers were complete */
		return NULL;
	return p_MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, name);
}

struct count_ctx {
	const char *name;
	int n;
};

static enum MHD_Result count_one(void *ctx, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
	struct count_ctx *x = ctx;

	(void)kind;
	(void)value;
	if (key && !strcasecmp(key, x->name))
		x->n++;
	return MHD_YES;
}

int cd_http_header_count(const struct cd_http_req *rq, const char *name)
{
	struct count_ctx x = { name, 0 };

	if (!rq->conn)
		return 0;
	p_MHD_get_connection_values(rq->conn, MHD_HEADER_KIND, count_one, &x);
	return x.n;
}

const char *cd_http_cookie(const struct cd_http_req *rq, const char *name)
{
	return p_MHD_lookup_connection_value(rq->conn, MHD_COOKIE_KIND, name);
}

const char *cd_http_query(const struct cd_http_req *rq, const char *name)
{
	return p_MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
}

/* ---- responses ---------------------------------------------------- */

static void security_headers(const struct cd_httpd *h, struct MHD_Response *r)
{
	p_MHD_add_response_header(r, "Content-Security-Policy", h->c.csp ? h->c.csp : CD_HTTPD_CSP);
	p_MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	p_MHD_add_response_header(r, "X-Frame-Options", "DENY");
	/* same-origin, not no-referrer: with no-referrer a browser sends
	 * "Origin: null" on a same-origin form post, and the Origin check of
	 * a front end could not tell it from a foreign one. */
	p_MHD_add_response_header(r, "Referrer-Policy", "same-origin");
	p_MHD_add_response_header(r, "Cache-Control", "no-store");
	p_MHD_add_response_header(r, "Cross-Origin-Opener-Policy", "same-origin");
	p_MHD_add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
	if (h->cert)
		p_MHD_add_response_header(r, "Strict-Transport-Security", "max-age=31536000");
}

static enum MHD_Result send_resp(struct cd_httpd *h, struct MHD_Connection *conn,
                                 struct cd_http_resp *rs, struct MHD_Response *r)
{
	enum MHD_Result ret;
	size_t i;

	if (!r)
		return MHD_NO;
	security_headers(h, r);
	p_MHD_add_response_header(r, "Content-Type",
	                          rs->ctype ? rs->ctype : "text/plain; charset=utf-8");
	for (i = 0; i < rs->nextra; i++)
		p_MHD_add_response_header(r, rs->extra[i].name, rs->extra[i].value);
	ret = p_MHD_queue_response(conn, (unsigned)rs->status, r);
	p_MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_text(struct cd_httpd *h, struct MHD_Connection *conn, int status,
                                 const char *msg)
{
	struct cd_http_resp rs;
	enum MHD_Result ret;

	memset(&rs, 0, sizeof rs);
	cd_buf_init(&rs.body, 4096);
	cd_http_resp_text(&rs, status, msg);
	ret = send_resp(h, conn, &rs,
	                p_MHD_create_response_from_buffer(rs.body.len,
	                                                  rs.body.data ? rs.body.data : "",
	                                                  MHD_RESPMEM_MUST_COPY));
	cd_buf_release(&rs.body);
	return ret;
}

/* ---- event streams ------------------------------------------------ */

struct sse_stream {
	struct cd_httpd *h;
	struct cd_http_sse s;
	struct cd_buf pending;
	size_t off;
	unsigned quiet_ms;
};

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sse_stream *ss = cls;
	unsigned keep =
	        ss->h->c.sse_keepalive_ms ? ss->h->c.sse_keepalive_ms : CD_HTTPD_SSE_KEEPALIVE_MS;
	(void)pos;

	while (ss->off >= ss->pending.len) {
		int r;
		cd_buf_reset(&ss->pending);
		ss->off = 0;
		if (atomic_load(&ss->h->stopping))
			return MHD_CONTENT_READER_END_OF_STREAM;
		r = ss->s.next(ss->s.ctx, &ss->pending, SSE_SLICE_MS);
		if (r < 0)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (r > 0) {
			ss->quiet_ms = 0;
		} else if ((ss->quiet_ms += SSE_SLICE_MS) >= keep) {
			ss->quiet_ms = 0;
			if (cd_buf_puts(&ss->pending, ": keep-alive\n\n") < 0)
				return MHD_CONTENT_READER_END_WITH_ERROR;
		}
	}
	if (max > ss->pending.len - ss->off)
		max = ss->pending.len - ss->off;
	memcpy(buf, ss->pending.data + ss->off, max);
	ss->off += max;
	return (ssize_t)max;
}

static void sse_free(void *cls)
{
	struct sse_stream *ss = cls;

	if (ss->s.done)
		ss->s.done(ss->s.ctx);
	cd_buf_release(&ss->pending);
	free(ss);
}

static enum MHD_Result send_sse(struct cd_httpd *h, struct MHD_Connection *conn,
                                struct cd_http_resp *rs)
{
	struct sse_stream *ss = calloc(1, sizeof *ss);
	struct MHD_Response *r;

	if (!ss) {
		if (rs->sse.done)
			rs->sse.done(rs->sse.ctx);
		return send_text(h, conn, 503, "out of memory\n");
	}
	ss->h = h;
	ss->s = rs->sse;
	cd_buf_init(&ss->pending, 1 << 20);
	r = p_MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_read, ss, sse_free);
	if (!r) {
		sse_free(ss);
		return MHD_NO;
	}
	rs->ctype = "text/event-stream; charset=utf-8";
	return send_resp(h, conn, rs, r);
}

/* ---- the request handler ------------------------------------------ */

static int host_ok(const struct cd_httpd *h, const char *host)
{
	size_t i;

	if (!h->c.hosts)
		return 1;
	if (!host)
		return 0;
	for (i = 0; h->c.hosts[i]; i++)
		if (!strcmp(h->c.hosts[i], host))
			return 1;
	return 0;
}

/* The checks made before a body is read: an HTTP status, or 0. */
static int precheck(struct cd_httpd *h, struct MHD_Connection *conn)
{
	const char *cl = p_MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	unsigned max_h = h->c.max_headers ? h->c.max_headers : CD_HTTPD_MAX_HEADERS;
	size_t max_b = h->c.max_body ? h->c.max_body : CD_HTTPD_MAX_BODY;
	uint64_t n;

	if ((unsigned)p_MHD_get_connection_values(conn, MHD_HEADER_KIND, NULL, NULL) > max_h)
		return 431;
	if (!host_ok(h, p_MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host")))
		return 421;
	if (cl && (cd_parse_u64(cl, strlen(cl), UINT64_MAX, &n) < 0 || n > max_b))
		return 413;
	return 0;
}

static void peer_of(struct MHD_Connection *conn, struct cd_http_req *rq)
{
	const union MHD_ConnectionInfo *ci =
	        p_MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	snprintf(rq->peer, sizeof rq->peer, "?");
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr,
		          rq->peer, sizeof rq->peer);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
		          rq->peer, sizeof rq->peer);
	rq->peer_loopback = cd_http_addr_loopback(rq->peer) == 1;
}

static enum MHD_Result dispatch(struct cd_httpd *h, struct MHD_Connection *conn, const char *url,
                                const char *method, struct rstate *st)
{
	struct cd_http_req rq;
	struct cd_http_resp rs;
	enum MHD_Result ret;
	int i;

	i = cd_http_route_find(h->c.routes, h->c.nroutes, method, url);
	if (i == -ENOENT)
		return send_text(h, conn, 404, "not found\n");
	if (i < 0)
		return send_text(h, conn, 405, "method not allowed\n");
	memset(&rq, 0, sizeof rq);
	rq.method = method;
	rq.path = url;
	rq.body = st->body.data ? st->body.data : "";
	rq.body_len = st->body.len;
	rq.tls = h->cert != NULL;
	rq.conn = conn;
	peer_of(conn, &rq);
	/* The request is complete: answering it (a long poll, an event
	 * stream) may take the long timeout; on_completed lowers it again. */
	(void)p_MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
	                                  h->c.timeout_s ? h->c.timeout_s : CD_HTTPD_TIMEOUT_S);
	memset(&rs, 0, sizeof rs);
	cd_buf_init(&rs.body, 8u << 20);
	rs.status = 200;
	if (h->c.routes[i].fn(h->c.ctx, &rq, &rs) < 0) {
		if (rs.sse.done)
			rs.sse.done(rs.sse.ctx);
		cd_buf_release(&rs.body);
		return send_text(h, conn, 500, "internal error\n");
	}
	if (rs.sse.next)
		ret = send_sse(h, conn, &rs);
	else
		ret = send_resp(h, conn, &rs,
		                p_MHD_create_response_from_buffer(rs.body.len,
		                                                  rs.body.data ? rs.body.data : "",
		                                                  MHD_RESPMEM_MUST_COPY));
	cd_buf_release(&rs.body);
	return ret;
}

/* Tell the front end of a request refused here (conf.refused). */
static void tell_refused(struct cd_httpd *h, struct MHD_Connection *conn, const char *url,
                         const char *method, int status)
{
	struct cd_http_req rq;

	if (!h->c.refused)
		return;
	memset(&rq, 0, sizeof rq);
	rq.method = method;
	rq.path = url;
	rq.body = "";
	rq.tls = h->cert != NULL;
	rq.conn = conn;
	peer_of(conn, &rq);
	h->c.refused(h->c.ctx, &rq, status);
}

/* ---- the request deadline ------------------------------------------ */

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A connection's request is complete (receiving 0) or a new one may
 * begin (1): its deadline off, or counted from now. */
static void watch_set(struct cd_httpd *h, struct MHD_Connection *conn, int receiving)
{
	const union MHD_ConnectionInfo *ci =
	        p_MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct cwatch *w = ci ? ci->socket_context : NULL;

	if (!w)
		return;
	pthread_mutex_lock(&h->wmu);
	w->since = receiving ? mono_ms() : 0;
	pthread_mutex_unlock(&h->wmu);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	struct cd_httpd *h = cls;
	struct cwatch *w = *socket_context;
	const union MHD_ConnectionInfo *ci;
	struct cd_http_req rq;

	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		/* Before the library closes the socket: the sweeper never
		 * touches a number reused since. */
		if (w) {
			pthread_mutex_lock(&h->wmu);
			if ((*w->pprev = w->next))
				w->next->pprev = w->pprev;
			pthread_mutex_unlock(&h->wmu);
			free(w);
		}
		*socket_context = NULL;
		return;
	}
	ci = p_MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci || !(w = calloc(1, sizeof *w)))
		return; /* unwatched: the idle timeout still holds */
	w->fd = ci->connect_fd;
	memset(&rq, 0, sizeof rq);
	peer_of(conn, &rq);
	memcpy(w->peer, rq.peer, sizeof w->peer);
	pthread_mutex_lock(&h->wmu);
	w->since = mono_ms();
	if ((w->next = h->watch))
		w->next->pprev = &w->next;
	w->pprev = &h->watch;
	h->watch = w;
	pthread_mutex_unlock(&h->wmu);
	*socket_context = w;
}

/* Once a second: a connection receiving one request (a byte now and then
 * keeps the idle timeout away) for longer than request_s is cut, and the
 * front end told (408, the peer only). */
static void *sweeper(void *arg)
{
	struct cd_httpd *h = arg;
	int64_t limit = (int64_t)(h->c.request_s ? h->c.request_s : CD_HTTPD_REQUEST_S) * 1000;

	while (!atomic_load(&h->stopping)) {
		char peers[8][64];
		size_t n = 0, i;
		int64_t now = mono_ms();
		struct cwatch *w;

		pthread_mutex_lock(&h->wmu);
		for (w = h->watch; w; w = w->next)
			if (w->since && now - w->since > limit) {
				shutdown(w->fd, SHUT_RDWR);
				w->since = 0;
				if (n < 8)
					memcpy(peers[n++], w->peer, sizeof peers[0]);
			}
		pthread_mutex_unlock(&h->wmu);
		for (i = 0; i < n && h->c.refused; i++) {
			struct cd_http_req rq;
			memset(&rq, 0, sizeof rq);
			rq.method = "?";
			rq.path = "?";
			rq.body = "";
			rq.tls = h->cert != NULL;
			memcpy(rq.peer, peers[i], sizeof rq.peer);
			rq.peer_loopback = cd_http_addr_loopback(rq.peer) == 1;
			h->c.refused(h->c.ctx, &rq, 408);
		}
		usleep(250 * 1000);
	}
	return NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
	struct cd_httpd *h = cls;
	struct rstate *st = *con_cls;
	(void)version;

	if (!st) {
		if (!(st = calloc(1, sizeof *st)))
			return MHD_NO;
		cd_buf_init(&st->body, h->c.max_body ? h->c.max_body : CD_HTTPD_MAX_BODY);
		*con_cls = st;
		/* Refused before the body: the library answers and closes. */
		if ((st->reject = precheck(h, conn)) != 0) {
			watch_set(h, conn, 0);
			tell_refused(h, conn, url, method, st->reject);
			return send_text(h, conn, st->reject,
			                 st->reject == 431   ? "too many headers\n"
			                 : st->reject == 421 ? "misdirected request: unknown Host\n"
			                                     : "request body too large\n");
		}
		return MHD_YES;
	}
	if (*upload_size) {
		if (!st->reject && cd_buf_append(&st->body, upload, *upload_size) < 0)
			st->reject = 413;
		*upload_size = 0;
		return MHD_YES;
	}
	watch_set(h, conn, 0); /* the request is complete */
	if (st->reject) {
		tell_refused(h, conn, url, method, st->reject);
		return send_text(h, conn, st->reject, "request body too large\n");
	}
	if (memchr(st->body.data ? st->body.data : "", '\0', st->body.len))
		return send_text(h, conn, 400, "a NUL byte in the body\n");
	return dispatch(h, conn, url, method, st);
}

static unsigned idle_timeout(const struct cd_httpd *h)
{
	unsigned idle = h->c.idle_s ? h->c.idle_s : CD_HTTPD_IDLE_S;
	unsigned t = h->c.timeout_s ? h->c.timeout_s : CD_HTTPD_TIMEOUT_S;

	return idle < t ? idle : t;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct cd_httpd *h = cls;
	struct rstate *st = *con_cls;

	/* Back to waiting for a request: the short timeout again, and the
	 * deadline of the next request. */
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK) {
		(void)p_MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
		                                  idle_timeout(h));
		watch_set(h, conn, 1);
	}
	if (st) {
		cd_buf_release(&st->body);
		free(st);
		*con_cls = NULL;
	}
}

/* ---- start and stop ----------------------------------------------- */

static int read_pem(const char *path, char **ret, struct cd_err *err)
{
	struct cd_buf b;
	char chunk[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return cd_err_sys(err, -errno, "'%s'", path);
	cd_buf_init(&b, TLS_FILE_MAX);
	while ((n = read(fd, chunk, sizeof chunk)) > 0)
		if (cd_buf_append(&b, chunk, (size_t)n) < 0) {
			close(fd);
			cd_buf_release_secret(&b);
			return cd_err_set(err, -CD_E_LIMIT, "'%s': larger than %d bytes", path,
			                  TLS_FILE_MAX);
		}
	close(fd);
	if (n < 0 || !b.len) {
		cd_buf_release_secret(&b);
		return cd_err_set(err, -EINVAL, "'%s': %s", path, n < 0 ? "cannot read" : "empty");
	}
	*ret = cd_buf_take(&b);
	return 0;
}

static void free_secret(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

static int load_tls(struct cd_httpd *h, struct cd_err *err)
{
	const struct cd_httpd_conf *c = &h->c;
	int lo = cd_http_addr_loopback(c->addr);

	if (lo < 0)
		return cd_err_set(err, -EINVAL, "'%s' is not an IP address", c->addr);
	if (!c->tls_cert != !c->tls_key)
		return cd_err_set(err, -EINVAL, "give both --tls-cert and --tls-key, or neither");
	if (!c->tls_cert) {
		if (!lo)
			return cd_err_set(
			        err, -CD_E_DENIED,
			        "'%s' is not a loopback address: serving it without TLS "
			        "would send logins in clear (give --tls-cert and --tls-key)",
			        c->addr);
		return 0;
	}
	if (read_pem(c->tls_cert, &h->cert, err) < 0 || read_pem(c->tls_key, &h->key, err) < 0)
		return cd_err_prefix(err, "TLS");
	return 0;
}

static int listen_addr(const struct cd_httpd_conf *c, struct sockaddr_storage *ss, unsigned *flags)
{
	memset(ss, 0, sizeof *ss);
	if (strchr(c->addr, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(c->port);
		*flags |= MHD_USE_IPv6;
		return inet_pton(AF_INET6, c->addr, &s6->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	s4->sin_family = AF_INET;
	s4->sin_port = htons(c->port);
	return inet_pton(AF_INET, c->addr, &s4->sin_addr) == 1 ? 0 : -EINVAL;
}

int cd_httpd_start(const struct cd_httpd_conf *c, struct cd_httpd **ret, struct cd_err *err)
{
	struct cd_httpd *h;
	struct sockaddr_storage ss;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
	const union MHD_DaemonInfo *di;
	int r;

	if ((r = cd_dl_load("libmicrohttpd.so.12", "libmicrohttpd12", mhd_syms,
	                    sizeof mhd_syms / sizeof mhd_syms[0], err)) < 0)
		return r;
	if (!(h = calloc(1, sizeof *h)))
		return cd_err_set(err, -ENOMEM, "out of memory");
	h->c = *c;
	pthread_mutex_init(&h->wmu, NULL);
	if ((r = load_tls(h, err)) < 0)
		goto fail;
	if (listen_addr(c, &ss, &flags) < 0) {
		r = cd_err_set(err, -EINVAL, "'%s' is not an IP address", c->addr);
		goto fail;
	}
	if (h->cert)
		flags |= MHD_USE_TLS;
	{
		struct MHD_OptionItem o[] = {
			{ MHD_OPTION_SOCK_ADDR, 0, &ss },
			{ MHD_OPTION_CONNECTION_LIMIT,
			  c->max_conns ? c->max_conns : CD_HTTPD_MAX_CONNS, NULL },
			{ MHD_OPTION_PER_IP_CONNECTION_LIMIT,
			  c->max_per_ip                         ? c->max_per_ip
			  : cd_http_addr_loopback(c->addr) == 1 ? CD_HTTPD_MAX_PER_IP_LO
			                                        : CD_HTTPD_MAX_PER_IP,
			  NULL },
			{ MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout(h), NULL },
			{ MHD_OPTION_CONNECTION_MEMORY_LIMIT, 32 * 1024, NULL },
			{ MHD_OPTION_HTTPS_MEM_CERT, 0, h->cert },
			{ MHD_OPTION_HTTPS_MEM_KEY, 0, h->key },
			{ MHD_OPTION_END, 0, NULL },
		};
		if (!h->cert)
			o[5].option = MHD_OPTION_END;
		h->d = p_MHD_start_daemon(flags, c->port, NULL, NULL, on_request, h,
		                          MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
		                          MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
		                          MHD_OPTION_ARRAY, o, MHD_OPTION_END);
	}
	if (!h->d) {
		r = cd_err_set(err, -EADDRNOTAVAIL,
		               "cannot listen on %s port %u (in use, not an address of this host, "
		               "or a bad TLS key or certificate)",
		               c->addr, (unsigned)c->port);
		goto fail;
	}
	if ((r = pthread_create(&h->sweeper, NULL, sweeper, h)) != 0) {
		r = cd_err_set(err, -r, "cannot start the request deadline's thread");
		goto fail;
	}
	h->has_sweeper = 1;
	di = p_MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = di && di->port ? di->port : c->port;
	*ret = h;
	return 0;
fail:
	cd_httpd_stop(h);
	return r;
}

uint16_t cd_httpd_port(const struct cd_httpd *h)
{
	return h->port;
}

void cd_httpd_stop(struct cd_httpd *h)
{
	if (!h)
		return;
	atomic_store(&h->stopping, 1);
	if (h->has_sweeper)
		pthread_join(h->sweeper, NULL);
	if (h->d)
		p_MHD_stop_daemon(h->d);
	pthread_mutex_destroy(&h->wmu);
	free_secret(h->cert);
	free_secret(h->key);
	free(h);
}
