/* egress-proxy.c — see egress-proxy.h.
 *
 * Trust boundary: everything a client sends is hostile until
 * cd_http_parse_head() and cd_egress_decide() have accepted it; after that
 * the bytes are relayed as they are, in both directions, and never parsed.
 * Each connection is bounded: the head by CD_EGRESS_HEAD_MAX and the head
 * timeout, the relay by one pipe or one buffer per direction
 * (egress-relay.h) and the idle timeout, the number of connections by
 * max_conns.
 *
 * File descriptors: a connection holds two sockets, and two pipes while it
 * splices.  Pipes are handed out only while the descriptor limit leaves
 * room for two sockets for every connection max_conns allows, so a flood
 * of tunnels makes later ones copy, never fail to accept.
 *
 * A connection's life: HEAD (reading the request head) -> RESOLVING (the
 * decision, made by egress-resolve.c's threads: the loop never waits for
 * a lookup) -> CONNECTING (non-blocking connect to the vetted address) ->
 * RELAY -> closed.  One client address has at most
 * CD_EGRESS_RESOLVE_PER_CLIENT decisions in the threads at once (the rest
 * wait their turn), and at the connection cap the oldest request head
 * still incomplete after CD_EGRESS_EVICT_AFTER_MS is closed to admit a new
 * client: slow clients cannot starve others.  Closed
 * connections are unlinked at once but freed after the current batch of
 * epoll events, which may still name them. */
#include "egress-proxy.h"

#include "audit.h"
#include "buf.h"
#include "egress-addr.h"
#include "egress-http.h"
#include "egress-relay.h"
#include "egress-resolve.h"
#include "egress-socks.h"
#include "egress-tls.h"
#include "logmask.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum state { ST_HEAD, ST_RESOLVING, ST_HELLO, ST_CONNECTING, ST_RELAY, ST_DEAD };

struct conn;

struct end {
	struct conn *c;
	int fd;
	uint32_t events; /* registered with epoll */
};

struct conn {
	struct end cl, up;
	enum state st;
	int is_connect, minor;
	char method[CD_HTTP_METHOD_MAX];
	char host[CD_HOST_MAX];
	uint16_t port;
	char client[64];
	struct sockaddr_storage peer; /* the client's address (for the per-client caps) */
	struct cd_egress_job *job;    /* ST_RESOLVING: the decision being made */
	char rule[CD_HOST_MAX + 8];
	struct sockaddr_storage addr; /* the vetted address */
	char *head;
	size_t head_len;
	/* ST_HELLO (CONNECT to 443, 200 already sent): the request and the
	 * decision wait here while the TLS ClientHello is read into hello. */
	struct cd_http_request *rq;
	struct cd_egress_decision *d;
	unsigned char *hello;
	size_t hello_len;
	int answered; /* the client has its 200: no other status may follow */
	int socks;    /* SOCKS5 (the first byte was 5), not HTTP */
	int socks_greeted;
	size_t socks_used;             /* bytes of the head the greeting took */
	enum cd_socks_reply socks_rep; /* a refusal's reply code, when not the status's */
	int report_only;               /* allowed although enforcement would refuse */
	struct cd_relay c2u, u2c;      /* set up (no pipe) at accept */
	int pipes;                     /* c2u and u2c hold pipes (4 fds) */
	int body_limited;              /* plain HTTP: relay the body only, then stop reading */
	uint64_t body_left;            /* body bytes still to read from the client */
	uint64_t start_ms, deadline_ms, last_ms;
	struct conn *prev, *next, *dead_next;
};

/* A closing record waiting for the next write, with its own copies of
 * the strings (the connection is gone). */
struct pending {
	struct cd_egress_event ev;
	char client[64], method[CD_HTTP_METHOD_MAX], host[CD_HOST_MAX];
	char rule[CD_HOST_MAX + 8], reason[160];
	struct sockaddr_storage addr;
};

struct loop {
	const struct cd_egress_proxy_cfg *cfg;
	struct pending *pend; /* CD_EGRESS_RESULTS_PENDING */
	size_t npend;
	uint64_t pend_since_ms;
	int ep;
	struct end listen_end, stop_end, res_end;
	struct cd_egress_resolver *res;
	struct conn *conns, *dead;
	unsigned nconns;
	unsigned pipe_conns; /* connections holding pipes */
	unsigned pipe_conns_max;
	uint64_t dropped, last_scan_ms, last_cap_log_ms;
	int fatal;
	struct cd_err *err;
};

static uint64_t cd_eproxy_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void cd_eproxy_set_events(struct loop *l, struct end *e, uint32_t want)
{
	struct epoll_event ev;

	if (e->fd < 0 || e->events == want)
		return;
	memset(&ev, 0, sizeof ev);
	ev.events = want;
	ev.data.ptr = e;
	if (epoll_ctl(l->ep, EPOLL_CTL_MOD, e->fd, &ev) == 0)
		e->events = want;
}

static int cd_eproxy_add_end(struct loop *l, struct end *e, uint32_t want)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof ev);
	ev.events = want;
	ev.data.ptr = e;
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, e->fd, &ev) < 0)
		return -errno;
	e->events = want;
	return 0;
}

/* Write the waiting closing records and then ev (may be NULL), durable
 * together. */
static int cd_eproxy_log_event(struct loop *l, const struct cd_egress_event *ev)
{
	struct cd_egress_event evs[CD_EGRESS_RESULTS_PENDING + 1];
	size_t i, n = 0;
	int r = 0;

	for (i = 0; i < l->npend; i++)
		evs[n++] = l->pend[i].ev;
	if (ev)
		evs[n++] = *ev;
	l->npend = 0;
	if (n == 0)
		return 0;
	if (l->cfg->log_many)
		r = l->cfg->log_many(evs, n, l->cfg->log_ctx);
	else
		for (i = 0; i < n && r >= 0; i++)
			r = l->cfg->log(&evs[i], l->cfg->log_ctx);
	if (r < 0 && !l->fatal) {
		l->fatal = r;
		cd_err_set(l->err, r, "egress log failed: no log, no proxy");
	}
	return r;
}

static void copy_str(char *dst, size_t size, const char **s)
{
	size_t n;

	if (!*s)
		return;
	n = strnlen(*s, size - 1);
	memcpy(dst, *s, n);
	dst[n] = '\0';
	*s = dst;
}

/* Hold a closing record for the next write (written at once when the
 * holding area is full). */
static void log_result(struct loop *l, const struct cd_egress_event *ev)
{
	struct pending *p;

	if (!l->pend) {
		cd_eproxy_log_event(l, ev);
		return;
	}
	if (l->npend == CD_EGRESS_RESULTS_PENDING)
		cd_eproxy_log_event(l, NULL);
	if (l->npend == 0)
		l->pend_since_ms = cd_eproxy_now_ms();
	p = &l->pend[l->npend++];
	p->ev = *ev;
	copy_str(p->client, sizeof p->client, &p->ev.client);
	copy_str(p->method, sizeof p->method, &p->ev.method);
	copy_str(p->host, sizeof p->host, &p->ev.host);
	copy_str(p->rule, sizeof p->rule, &p->ev.rule);
	copy_str(p->reason, sizeof p->reason, &p->ev.reason);
	if (ev->connect) {
		p->addr = *ev->connect;
		p->ev.connect = &p->addr;
	}
	p->ev.addrs = NULL;
	p->ev.naddrs = 0;
	p->ev.request = NULL;
	p->ev.request_len = 0;
}

/* The relay forwards each write as it comes: Nagle's algorithm would hold
 * a small one back until the previous is acknowledged (up to a delayed
 * ACK, 40 ms) although the endpoint chose to send it now. */
static void cd_eproxy_no_delay(int fd)
{
	int one = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* A one-line reason: our own text, but never a control byte. */
static void cd_eproxy_reply(int fd, int status, const char *reason)
{
	char head[512], clean[200];
	const char *phrase;
	size_t i;
	int n;

	switch (status) {
	case 200:
		phrase = "Connection established";
		break;
	case 400:
		phrase = "Bad Request";
		break;
	case 403:
		phrase = "Forbidden";
		break;
	case 408:
		phrase = "Request Timeout";
		break;
	case 431:
		phrase = "Request Header Fields Too Large";
		break;
	case 502:
		phrase = "Bad Gateway";
		break;
	case 504:
		phrase = "Gateway Timeout";
		break;
	default:
		phrase = "Service Unavailable";
		break;
	}
	for (i = 0; reason && reason[i] && i < sizeof clean - 1; i++)
		clean[i] = (reason[i] < 0x20 || reason[i] == 0x7f) ? '?' : reason[i];
	clean[i] = '\0';
	if (status == 200)
		n = snprintf(head, sizeof head, "HTTP/1.1 200 %s\r\n\r\n", phrase);
	else
		n = snprintf(head, sizeof head,
		             "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
		             "Connection: close\r\nX-Cordon-Reason: %s\r\n\r\n%s\n",
		             status, phrase, i + 1, clean, clean);
	if (n < 0 || (size_t)n >= sizeof head)
		return;
	(void)send(fd, head, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* The answer in the client's protocol: an HTTP status line, or a SOCKS5
 * reply whose code stands for the status (the reason is in the record;
 * SOCKS5 has no room for it). */
static void cd_eproxy_reply_conn(const struct conn *c, int status, const char *reason)
{
	unsigned char r[CD_SOCKS_REPLY_LEN];
	enum cd_socks_reply rep;

	if (!c->socks) {
		cd_eproxy_reply(c->cl.fd, status, reason);
		return;
	}
	if (c->answered)
		return; /* a method refusal, or a success already sent */
	switch (status) {
	case 200:
		rep = CD_SOCKS_OK;
		break;
	case 403:
		rep = CD_SOCKS_NOT_ALLOWED;
		break;
	case 502:
		rep = CD_SOCKS_REFUSED;
		break;
	case 504:
		rep = CD_SOCKS_HOST_UNREACHABLE;
		break;
	default:
		rep = CD_SOCKS_FAILURE;
		break;
	}
	if (c->socks_rep)
		rep = c->socks_rep;
	cd_socks_reply(rep, r);
	(void)send(c->cl.fd, r, sizeof r, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void cd_eproxy_fill_event(const struct conn *c, struct cd_egress_event *ev, const char *kind)
{
	memset(ev, 0, sizeof *ev);
	ev->kind = kind;
	ev->client = c->client;
	ev->method = c->method[0] ? c->method : NULL;
	ev->host = c->host[0] ? c->host : NULL;
	ev->port = c->port;
	ev->rule = c->rule[0] ? c->rule : NULL;
	ev->report_only = c->report_only;
}

/* Unlink, close both sockets, queue for freeing.  An allowed connection
 * (it has an address) gets its result record. */
static void cd_eproxy_conn_close(struct loop *l, struct conn *c, const char *why)
{
	if (c->st == ST_DEAD)
		return;
	if (c->addr.ss_family) {
		struct cd_egress_event ev;
		cd_eproxy_fill_event(c, &ev, "egress.result");
		ev.allow = 1;
		ev.reason = why;
		ev.connect = &c->addr;
		ev.has_result = 1;
		ev.bytes_up = c->c2u.moved;
		ev.bytes_down = c->u2c.moved;
		ev.duration_ms = cd_eproxy_now_ms() - c->start_ms;
		log_result(l, &ev);
	}
	if (c->job) {
		/* In the threads: abandoned, freed when it comes back. */
		c->job->owner = NULL;
		c->job = NULL;
	}
	c->st = ST_DEAD;
	if (c->cl.fd >= 0)
		close(c->cl.fd);
	if (c->up.fd >= 0)
		close(c->up.fd);
	c->cl.fd = c->up.fd = -1;
	cd_relay_release(&c->c2u);
	cd_relay_release(&c->u2c);
	if (c->pipes)
		l->pipe_conns--;
	c->pipes = 0;
	if (c->prev)
		c->prev->next = c->next;
	else
		l->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	l->nconns--;
	c->dead_next = l->dead;
	l->dead = c;
}

static void conn_free(struct conn *c)
{
	free(c->rq);
	free(c->d);
	free(c->hello);
	free(c->head);
	cd_relay_release(&c->c2u);
	cd_relay_release(&c->u2c);
	free(c);
}

/* Refuse: log the attempt, answer, close. */
static void cd_eproxy_refuse(struct loop *l, struct conn *c, int status, const char *reason)
{
	struct cd_egress_event ev;
	size_t rl = 0;

	cd_eproxy_fill_event(c, &ev, "egress");
	ev.status = status;
	ev.reason = reason;
	if (!c->host[0] && c->head_len) {
		while (rl < c->head_len && rl < 200 && c->head[rl] != '\r' && c->head[rl] != '\n')
			rl++;
		ev.request = c->head;
		ev.request_len = rl;
	}
	cd_eproxy_log_event(l, &ev);
	cd_eproxy_reply_conn(c, status, reason);
	shutdown(c->cl.fd, SHUT_WR);
	cd_eproxy_conn_close(l, c, reason);
}

static int cd_eproxy_status_for(int code)
{
	if (code == -CD_E_DENIED)
		return 403;
	if (code == -CD_E_LIMIT)
		return 431;
	return 400;
}

/* The plain-HTTP head sent upstream: origin form, our Host, the client's
 * end-to-end fields, Connection: close. */
static int rewrite_head(struct conn *c, const struct cd_http_request *rq)
{
	struct cd_buf b;
	size_t i;
	int r;

	cd_buf_init(&b, CD_EGRESS_RELAY_BUF);
	r = cd_buf_printf(&b, "%s %s HTTP/1.%d\r\nHost: %s", rq->method, rq->path, rq->minor,
	                  rq->host);
	if (r == 0 && rq->port != 80)
		r = cd_buf_printf(&b, ":%u", rq->port);
	r = r < 0 ? r : cd_buf_puts(&b, "\r\n");
	for (i = 0; r == 0 && i < rq->nfields; i++) {
		r = cd_buf_append(&b, c->head + rq->fields[i].off, rq->fields[i].len);
		r = r < 0 ? r : cd_buf_puts(&b, "\r\n");
	}
	r = r < 0 ? r : cd_buf_puts(&b, "Connection: close\r\n\r\n");
	r = r < 0 ? r : cd_relay_queue(&c->c2u, b.data, b.len);
	cd_buf_release(&b);
	return r;
}

/* Close after a failure: the status only while the client has none. */
static void cd_eproxy_fail(struct loop *l, struct conn *c, int status, const char *why)
{
	if (!c->answered)
		cd_eproxy_reply_conn(c, status, why);
	cd_eproxy_conn_close(l, c, why);
}

static void start_connect(struct loop *l, struct conn *c, const struct cd_http_request *rq,
                          const struct cd_egress_decision *d, const char *early, size_t rest)
{
	struct cd_egress_event ev;
	int fd, r;

	memcpy(c->rule, d->rule, sizeof c->rule);
	cd_eproxy_fill_event(c, &ev, "egress");
	ev.allow = 1;
	ev.reason = d->reason;
	ev.addrs = d->addrs;
	ev.naddrs = d->naddrs;
	ev.connect = &d->connect;
	if (cd_eproxy_log_event(l, &ev) < 0) {
		cd_eproxy_fail(l, c, 503, "audit log unavailable");
		return;
	}
	c->addr = d->connect;
	if (l->pipe_conns < l->pipe_conns_max) {
		cd_relay_init(&c->c2u, 1);
		cd_relay_init(&c->u2c, 1);
		c->pipes = 1;
		l->pipe_conns++;
	}
	if (!c->is_connect && rewrite_head(c, rq) < 0) {
		cd_eproxy_reply_conn(c, 431, "request head too large to forward");
		cd_eproxy_conn_close(l, c, "request head too large to forward");
		return;
	}
	/* What the client sent after the head (a TLS hello, a body).  For
	 * plain HTTP only the body of this one request is relayed: a second,
	 * pipelined request would reach the same address unchecked (another
	 * virtual host behind a shared IP). */
	if (!c->is_connect) {
		c->body_limited = 1;
		if (rest > rq->content_length)
			rest = (size_t)rq->content_length;
		c->body_left = rq->content_length - rest;
	}
	if (cd_relay_queue(&c->c2u, early, rest) < 0) {
		/* Cannot happen (a head and what follows it fit the buffer),
		 * but never cut bytes short. */
		cd_eproxy_fail(l, c, 431, "request too large to forward");
		return;
	}
	free(c->head);
	c->head = NULL;
	c->head_len = 0;

	fd = socket(c->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		cd_eproxy_fail(l, c, 502, "cannot create a socket");
		return;
	}
	cd_eproxy_no_delay(fd);
	c->up.fd = fd;
	r = connect(fd, (const struct sockaddr *)&c->addr, cd_addr_len(&c->addr));
	if (r < 0 && errno != EINPROGRESS) {
		cd_eproxy_fail(l, c, 502, "connect failed");
		return;
	}
	if (cd_eproxy_add_end(l, &c->up, EPOLLOUT) < 0) {
		cd_eproxy_fail(l, c, 502, "epoll failed");
		return;
	}
	cd_eproxy_set_events(l, &c->cl, 0);
	c->st = ST_CONNECTING;
	c->deadline_ms = cd_eproxy_now_ms() + l->cfg->connect_timeout_ms;
}

/* A refusal after the 200: logged, no status, the tunnel closed. */
static void cd_eproxy_refuse_tunnel(struct loop *l, struct conn *c, const char *reason)
{
	struct cd_egress_event ev;

	cd_eproxy_fill_event(c, &ev, "egress");
	ev.reason = reason;
	if (c->d) {
		ev.addrs = c->d->addrs;
		ev.naddrs = c->d->naddrs;
	}
	cd_eproxy_log_event(l, &ev);
	cd_eproxy_conn_close(l, c, reason);
}

/* ST_HELLO: read the first TLS record; a server_name must name the
 * CONNECT target.  Then connect, with the hello as the first bytes up. */
static void cd_eproxy_on_hello(struct loop *l, struct conn *c)
{
	char sni[CD_HOST_MAX], why[CD_HOST_MAX * 2 + 64];
	struct cd_err perr;
	ssize_t n;
	int r, w;

	for (;;) {
		perr.msg[0] = '\0';
		r = cd_tls_client_hello_sni(c->hello, c->hello_len, sni, sizeof sni, &perr);
		if (r != CD_TLS_MORE || c->hello_len >= CD_TLS_RECORD_MAX)
			break;
		n = recv(c->cl.fd, c->hello + c->hello_len, CD_TLS_RECORD_MAX - c->hello_len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			cd_eproxy_refuse_tunnel(
			        l, c, "connection closed before a complete tls client hello");
			return;
		}
		c->hello_len += (size_t)n;
	}
	if (r < 0 || (r == CD_TLS_SNI && strcmp(sni, c->host) != 0)) {
		const char *reason = perr.msg[0] ? perr.msg : "malformed tls client hello";
		if (r >= 0) {
			w = snprintf(why, sizeof why,
			             "tls sni '%s' differs from the CONNECT target '%s'", sni,
			             c->host);
			reason = w > 0 && (size_t)w < sizeof why
			                 ? why
			                 : "tls sni differs from the CONNECT target";
		}
		if (!l->cfg->report_only) {
			cd_eproxy_refuse_tunnel(l, c, reason);
			return;
		}
		w = snprintf(c->d->reason, sizeof c->d->reason, "%s", reason);
		if (w < 0 || (size_t)w >= sizeof c->d->reason)
			memcpy(c->d->reason, "tls sni check failed", sizeof "tls sni check failed");
		c->report_only = 1;
	}
	if (r == CD_TLS_NO_SNI) {
		size_t rl = strlen(c->d->reason);
		static const char tag[] = "; no tls sni";
		if (rl + sizeof tag <= sizeof c->d->reason)
			memcpy(c->d->reason + rl, tag, sizeof tag);
	}
	start_connect(l, c, c->rq, c->d, (const char *)c->hello, c->hello_len);
}

/* SOCKS5: the greeting (answered at once: no authentication), then the
 * CONNECT request, both from the bytes read so far.  Returns like
 * cd_http_parse_head(): 0 for more, > 0 with *rq filled as a CONNECT
 * (head_len: the bytes both messages took), negative with a reason and,
 * for the reply, c->socks_rep. */
static int parse_socks(struct conn *c, struct cd_http_request *rq, struct cd_err *err)
{
	static const unsigned char no_auth[2] = { CD_SOCKS_VERSION, 0x00 };
	static const unsigned char none[2] = { CD_SOCKS_VERSION, 0xff };
	const unsigned char *p = (const unsigned char *)c->head;
	struct cd_socks_request sr;
	int r;

	c->socks = 1;
	memcpy(c->method, "SOCKS5", sizeof "SOCKS5");
	if (!c->socks_greeted) {
		r = cd_socks_greeting(p, c->head_len, err);
		if (r == -CD_E_DENIED) {
			(void)send(c->cl.fd, none, sizeof none, MSG_NOSIGNAL | MSG_DONTWAIT);
			c->answered = 1; /* no request reply may follow */
		}
		if (r <= 0)
			return r;
		(void)send(c->cl.fd, no_auth, sizeof no_auth, MSG_NOSIGNAL | MSG_DONTWAIT);
		c->socks_greeted = 1;
		c->socks_used = (size_t)r;
	}
	r = cd_socks_request(p + c->socks_used, c->head_len - c->socks_used, &sr, err);
	if (r < 0) {
		c->socks_rep = cd_socks_reply_for(r);
		return r == -CD_E_DENIED ? r : -CD_E_PARSE;
	}
	if (r == 0)
		return 0;
	memset(rq, 0, sizeof *rq);
	rq->is_connect = 1;
	memcpy(rq->method, "SOCKS5", sizeof "SOCKS5");
	memcpy(rq->host, sr.host, sizeof rq->host);
	rq->port = sr.port;
	rq->minor = 1;
	rq->head_len = c->socks_used + (size_t)r;
	return (int)rq->head_len;
}

static void start_decision(struct loop *l, struct conn *c);

static void cd_eproxy_on_head(struct loop *l, struct conn *c)
{
	struct cd_http_request *rq = NULL;
	struct cd_err perr;
	ssize_t n;
	int r;

	for (;;) {
		if (c->head_len >= CD_EGRESS_HEAD_MAX)
			break;
		n = recv(c->cl.fd, c->head + c->head_len, CD_EGRESS_HEAD_MAX - c->head_len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			cd_eproxy_refuse(l, c, 400,
			                 "connection closed before a complete request head");
			return;
		}
		c->head_len += (size_t)n;
	}
	rq = malloc(sizeof *rq);
	if (!rq) {
		cd_eproxy_refuse(l, c, 503, "out of memory");
		return;
	}
	perr.msg[0] = '\0';
	if (c->socks || (c->head_len > 0 && (unsigned char)c->head[0] == CD_SOCKS_VERSION))
		r = parse_socks(c, rq, &perr);
	else
		r = cd_http_parse_head(c->head, c->head_len, rq, &perr);
	if (r == 0 && c->head_len >= CD_EGRESS_HEAD_MAX) {
		cd_eproxy_refuse(l, c, 431, "request too large");
		goto out;
	}
	if (r == 0)
		goto out;
	if (r < 0) {
		cd_eproxy_refuse(l, c, cd_eproxy_status_for(r),
		                 perr.msg[0] ? perr.msg : "malformed request");
		goto out;
	}
	memcpy(c->method, rq->method, sizeof c->method);
	memcpy(c->host, rq->host, sizeof c->host);
	c->port = rq->port;
	c->is_connect = rq->is_connect;
	c->minor = rq->minor;
	if (!rq->is_connect && rq->chunked) {
		cd_eproxy_refuse(l, c, 400, "chunked request bodies are not relayed");
		goto out;
	}
	c->rq = rq;
	rq = NULL;
	start_decision(l, c);
out:
	free(rq);
}

/* The decision goes to the threads (egress-resolve.h); the client is not
 * read meanwhile: what it sends next waits in its socket. */
static void start_decision(struct loop *l, struct conn *c)
{
	struct cd_egress_job *job = calloc(1, sizeof *job);

	if (!job) {
		cd_eproxy_refuse(l, c, 503, "out of memory");
		return;
	}
	memcpy(job->host, c->rq->host, sizeof job->host);
	job->host[sizeof job->host - 1] = '\0';
	job->port = c->rq->port;
	job->report_only = l->cfg->report_only;
	/* The client's address, not its port: its connections share one
	 * share of the threads. */
	if (cd_addr_format(&c->peer, job->client, sizeof job->client) < 0)
		job->client[0] = '\0';
	job->owner = c;
	c->job = job;
	c->st = ST_RESOLVING;
	c->deadline_ms = cd_eproxy_now_ms() + l->cfg->head_timeout_ms + l->cfg->connect_timeout_ms;
	cd_eproxy_set_events(l, &c->cl, 0);
	cd_egress_resolver_submit(l->res, job);
}

/* The threads answered: refuse, or go on to the TLS check or the
 * connect, as the decision says. */
static void cd_eproxy_decided(struct loop *l, struct conn *c, struct cd_egress_job *job)
{
	struct cd_http_request *rq = c->rq;
	struct cd_egress_decision *d;

	c->job = NULL;
	if (job->rc < 0) {
		cd_eproxy_refuse(l, c, job->rc == -ECANCELED ? 503 : 403,
		                 "no decision could be made");
		return;
	}
	d = malloc(sizeof *d);
	if (!d) {
		cd_eproxy_refuse(l, c, 503, "out of memory");
		return;
	}
	memcpy(d, &job->d, sizeof *d);
	if (!d->allow && job->report_ok) {
		c->report_only = 1;
		d->allow = 1;
	}
	if (!d->allow) {
		struct cd_egress_event ev;
		cd_eproxy_fill_event(c, &ev, "egress");
		ev.status = 403;
		ev.reason = d->reason;
		ev.addrs = d->addrs;
		ev.naddrs = d->naddrs;
		cd_eproxy_log_event(l, &ev);
		cd_eproxy_reply_conn(c, 403, d->reason);
		shutdown(c->cl.fd, SHUT_WR);
		cd_eproxy_conn_close(l, c, d->reason);
		free(d);
		return;
	}
	if (rq->is_connect && rq->port == 443) {
		/* Peek at the TLS ClientHello before anything leaves. */
		size_t rest = c->head_len - rq->head_len;
		c->hello = malloc(CD_TLS_RECORD_MAX);
		if (!c->hello) {
			free(d);
			cd_eproxy_refuse(l, c, 503, "out of memory");
			return;
		}
		if (rest > CD_TLS_RECORD_MAX)
			rest = CD_TLS_RECORD_MAX;
		memcpy(c->hello, c->head + rq->head_len, rest);
		c->hello_len = rest;
		c->d = d;
		cd_eproxy_reply_conn(c, 200, NULL);
		c->answered = 1;
		c->st = ST_HELLO;
		c->deadline_ms = cd_eproxy_now_ms() + l->cfg->head_timeout_ms;
		cd_eproxy_set_events(l, &c->cl, EPOLLIN);
		cd_eproxy_on_hello(l, c);
		return;
	}
	c->rq = NULL;
	start_connect(l, c, rq, d, c->head + rq->head_len, c->head_len - rq->head_len);
	free(rq);
	free(d);
}

/* Take every answer the threads have: an abandoned one (its client left)
 * is freed. */
static void cd_eproxy_take_decisions(struct loop *l)
{
	struct cd_egress_job *job;

	while ((job = cd_egress_resolver_done(l->res))) {
		struct conn *c = job->owner;
		if (c && c->st == ST_RESOLVING)
			cd_eproxy_decided(l, c, job);
		free(job);
	}
}

static void cd_eproxy_on_connected(struct loop *l, struct conn *c)
{
	int e = 0;
	socklen_t elen = sizeof e;

	if (getsockopt(c->up.fd, SOL_SOCKET, SO_ERROR, &e, &elen) < 0)
		e = errno;
	if (e == EINPROGRESS)
		return;
	if (e != 0) {
		cd_eproxy_fail(l, c, 502, "connect failed");
		return;
	}
	if (c->is_connect && !c->answered) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		unsigned char sok[CD_SOCKS_REPLY_LEN];
		int q;
		cd_socks_reply(CD_SOCKS_OK, sok);
		q = c->socks ? cd_relay_queue(&c->u2c, sok, sizeof sok)
		             : cd_relay_queue(&c->u2c, ok, sizeof ok - 1);
		if (q < 0) {
			cd_eproxy_fail(l, c, 503, "out of memory");
			return;
		}
	}
	c->st = ST_RELAY;
	c->last_ms = cd_eproxy_now_ms();
}

static void cd_eproxy_on_relay(struct loop *l, struct conn *c)
{
	uint32_t cl_ev = 0, up_ev = 0;

	if (cd_relay_pump(&c->c2u, c->cl.fd, c->up.fd, c->body_limited ? &c->body_left : NULL) <
	            0 ||
	    cd_relay_pump(&c->u2c, c->up.fd, c->cl.fd, NULL) < 0) {
		cd_eproxy_conn_close(l, c, "connection reset");
		return;
	}
	c->last_ms = cd_eproxy_now_ms();
	/* Plain HTTP ends with the upstream's response; a tunnel when both
	 * directions are done. */
	if ((c->u2c.shut && (c->c2u.shut || !c->is_connect))) {
		cd_eproxy_conn_close(l, c, "closed");
		return;
	}
	if (cd_relay_wants_read(&c->c2u) && (!c->body_limited || c->body_left))
		cl_ev |= EPOLLIN;
	if (cd_relay_pending(&c->c2u))
		up_ev |= EPOLLOUT;
	if (cd_relay_wants_read(&c->u2c))
		up_ev |= EPOLLIN;
	if (cd_relay_pending(&c->u2c))
		cl_ev |= EPOLLOUT;
	cd_eproxy_set_events(l, &c->cl, cl_ev);
	cd_eproxy_set_events(l, &c->up, up_ev);
}

/* Connections refused at the cap are logged as one record per second at
 * most, so that a flood cannot turn into a flood of fsyncs. */
static void log_dropped(struct loop *l, uint64_t now)
{
	struct cd_egress_event ev;
	char why[96];
	int n = snprintf(why, sizeof why, "connection cap reached: %llu connections refused",
	                 (unsigned long long)l->dropped);

	memset(&ev, 0, sizeof ev);
	ev.kind = "egress";
	ev.status = 503;
	ev.reason = n > 0 && (size_t)n < sizeof why ? why : "connection cap reached";
	l->dropped = 0;
	l->last_cap_log_ms = now;
	cd_eproxy_log_event(l, &ev);
}

/* Past the cap: answer 503 and close.  What the client already sent is
 * read and dropped first (a bounded amount): closing a socket with
 * unread bytes resets it, and the reset can overtake the answer. */
static void refuse_at_cap(int fd)
{
	char sink[4096];
	int i;

	for (i = 0; i < CD_EGRESS_HEAD_MAX / (int)sizeof sink; i++)
		if (recv(fd, sink, sizeof sink, MSG_DONTWAIT) <= 0)
			break;
	cd_eproxy_reply(fd, 503, "connection cap reached");
	shutdown(fd, SHUT_WR);
	close(fd);
}

/* At the cap: the oldest connection still sending its request head after
 * CD_EGRESS_EVICT_AFTER_MS is closed (408) to make room, so that clients
 * holding heads open (slowloris) cannot keep prompt ones out.  A prompt
 * client sends its head at once and is past ST_HEAD long before. */
static void evict_slow_head(struct loop *l)
{
	struct conn *c, *oldest = NULL;
	uint64_t now = cd_eproxy_now_ms();

	for (c = l->conns; c; c = c->next)
		if (c->st == ST_HEAD && now - c->start_ms >= CD_EGRESS_EVICT_AFTER_MS &&
		    (!oldest || c->start_ms <= oldest->start_ms))
			oldest = c;
	if (oldest)
		cd_eproxy_refuse(l, oldest, 408, "request head too slow while the proxy is full");
}

static void accept_all(struct loop *l)
{
	for (;;) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof peer;
		struct conn *c;
		char text[64];
		int fd = accept4(l->cfg->listen_fd, (struct sockaddr *)&peer, &plen,
		                 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN, or a client gone before accept */
		cd_eproxy_no_delay(fd);
		if (l->nconns >= l->cfg->max_conns)
			evict_slow_head(l);
		if (l->nconns >= l->cfg->max_conns) {
			uint64_t now = cd_eproxy_now_ms();
			refuse_at_cap(fd);
			l->dropped++;
			if (now - l->last_cap_log_ms >= 1000)
				log_dropped(l, now);
			continue;
		}
		c = calloc(1, sizeof *c);
		if (c)
			c->head = malloc(CD_EGRESS_HEAD_MAX);
		if (!c || !c->head) {
			if (c)
				free(c);
			cd_eproxy_reply(fd, 503, "out of memory");
			close(fd);
			continue;
		}
		c->cl.c = c->up.c = c;
		cd_relay_init(&c->c2u, 0);
		cd_relay_init(&c->u2c, 0);
		c->cl.fd = fd;
		c->up.fd = -1;
		c->peer = peer;
		if (cd_addr_format(&peer, text, sizeof text) < 0)
			text[0] = '\0';
		{
			uint16_t port = ntohs(peer.ss_family == AF_INET6
			                              ? ((struct sockaddr_in6 *)&peer)->sin6_port
			                              : ((struct sockaddr_in *)&peer)->sin_port);
			int n = snprintf(c->client, sizeof c->client, "%s:%u", text, port);
			if (n < 0 || (size_t)n >= sizeof c->client)
				c->client[0] = '\0';
		}
		c->st = ST_HEAD;
		c->start_ms = c->last_ms = cd_eproxy_now_ms();
		c->deadline_ms = c->start_ms + l->cfg->head_timeout_ms;
		c->next = l->conns;
		if (l->conns)
			l->conns->prev = c;
		l->conns = c;
		l->nconns++;
		if (cd_eproxy_add_end(l, &c->cl, EPOLLIN) < 0)
			cd_eproxy_conn_close(l, c, "epoll failed");
	}
}

static void scan_timeouts(struct loop *l, uint64_t now)
{
	struct conn *c, *next;

	for (c = l->conns; c; c = next) {
		next = c->next;
		if (c->st == ST_HEAD && now >= c->deadline_ms)
			cd_eproxy_refuse(l, c, 408, "no complete request head in time");
		else if (c->st == ST_RESOLVING && now >= c->deadline_ms)
			cd_eproxy_refuse(l, c, 504,
			                 "no decision in time: the name did not resolve");
		else if (c->st == ST_HELLO && now >= c->deadline_ms)
			cd_eproxy_refuse_tunnel(l, c, "no complete tls client hello in time");
		else if (c->st == ST_CONNECTING && now >= c->deadline_ms) {
			cd_eproxy_fail(l, c, 504, "connect timed out");
		} else if (c->st == ST_RELAY && now - c->last_ms >= l->cfg->idle_timeout_ms) {
			cd_eproxy_conn_close(l, c, "idle timeout");
		}
	}
	if (l->dropped && now - l->last_cap_log_ms >= 1000)
		log_dropped(l, now);
	if (l->npend && now - l->pend_since_ms >= CD_EGRESS_RESULTS_WAIT_MS)
		cd_eproxy_log_event(l, NULL);
	l->last_scan_ms = now;
}

/* How many connections may hold pipes: none unless SIGPIPE is ignored
 * (a splice to a socket the peer closed raises it), and only as many as
 * the descriptor limit allows beyond two sockets for every connection
 * and a margin for the log and the listening socket. */
static unsigned splice_budget(unsigned max_conns)
{
	struct sigaction sa;
	struct rlimit rl;
	rlim_t need = 2 * (rlim_t)max_conns + 64;

	if (sigaction(SIGPIPE, NULL, &sa) < 0 || sa.sa_handler != SIG_IGN)
		return 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur <= need)
		return 0;
	if (rl.rlim_cur == RLIM_INFINITY || (rl.rlim_cur - need) / 4 >= max_conns)
		return max_conns;
	return (unsigned)((rl.rlim_cur - need) / 4);
}

int cd_egress_proxy_run(const struct cd_egress_proxy_cfg *in, struct cd_err *err)
{
	struct cd_egress_proxy_cfg cfg = *in;
	struct epoll_event evs[64];
	struct loop l;
	int r = 0;

	if (!cfg.policy || !cfg.log || cfg.listen_fd < 0)
		return cd_err_set(err, -EINVAL, "proxy: missing policy, log or socket");
	if (!cfg.max_conns)
		cfg.max_conns = CD_EGRESS_CONNS_MAX;
	if (!cfg.head_timeout_ms)
		cfg.head_timeout_ms = CD_EGRESS_HEAD_TIMEOUT_MS;
	if (!cfg.connect_timeout_ms)
		cfg.connect_timeout_ms = CD_EGRESS_CONNECT_TIMEOUT_MS;
	if (!cfg.idle_timeout_ms)
		cfg.idle_timeout_ms = CD_EGRESS_IDLE_TIMEOUT_MS;
	memset(&l, 0, sizeof l);
	l.cfg = &cfg;
	l.err = err;
	l.pipe_conns_max = splice_budget(cfg.max_conns);
	l.ep = epoll_create1(EPOLL_CLOEXEC);
	if (l.ep < 0)
		return cd_err_sys(err, -errno, "proxy: epoll_create1");
	/* Without room to hold them, closing records are written at once. */
	l.pend = calloc(CD_EGRESS_RESULTS_PENDING, sizeof *l.pend);
	{
		int fl = fcntl(cfg.listen_fd, F_GETFL);
		if (fl < 0 || fcntl(cfg.listen_fd, F_SETFL, fl | O_NONBLOCK) < 0) {
			r = cd_err_sys(err, -errno, "proxy: listening socket");
			goto out;
		}
	}
	r = cd_egress_resolver_new(cfg.policy, CD_EGRESS_RESOLVE_THREADS,
	                           CD_EGRESS_RESOLVE_PER_CLIENT, &l.res);
	if (r < 0) {
		r = cd_err_set(err, r, "proxy: cannot start the resolver threads");
		goto out;
	}
	l.res_end.fd = cd_egress_resolver_fd(l.res);
	l.listen_end.fd = cfg.listen_fd;
	l.stop_end.fd = cfg.stop_fd;
	if (cd_eproxy_add_end(&l, &l.res_end, EPOLLIN) < 0 ||
	    cd_eproxy_add_end(&l, &l.listen_end, EPOLLIN) < 0 ||
	    (cfg.stop_fd >= 0 && cd_eproxy_add_end(&l, &l.stop_end, EPOLLIN) < 0)) {
		r = cd_err_sys(err, -errno, "proxy: epoll_ctl");
		goto out;
	}
	l.last_scan_ms = cd_eproxy_now_ms();
	while (!l.fatal) {
		int i, n, timeout = (l.conns || l.dropped) ? 250 : -1;
		uint64_t now;

		/* Closing records wait only while there is other work. */
		if (l.npend)
			timeout = 0;
		n = epoll_wait(l.ep, evs, (int)CD_ARRAY_SIZE(evs), timeout);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && l.npend) {
			cd_eproxy_log_event(&l, NULL);
			continue;
		}
		if (n < 0) {
			r = cd_err_sys(err, -errno, "proxy: epoll_wait");
			break;
		}
		for (i = 0; i < n && !l.fatal; i++) {
			struct end *e = evs[i].data.ptr;
			struct conn *c = e->c;
			if (e == &l.stop_end)
				goto out;
			if (e == &l.listen_end) {
				accept_all(&l);
				continue;
			}
			if (e == &l.res_end) {
				cd_eproxy_take_decisions(&l);
				continue;
			}
			if (c->st == ST_HEAD)
				cd_eproxy_on_head(&l, c);
			else if (c->st == ST_RESOLVING) {
				/* Not reading: only a hang-up or an error reaches us. */
				if (evs[i].events & (EPOLLHUP | EPOLLERR))
					cd_eproxy_conn_close(
					        &l, c, "client left while its request was decided");
				continue;
			} else if (c->st == ST_HELLO)
				cd_eproxy_on_hello(&l, c);
			else if (c->st == ST_CONNECTING && e == &c->up)
				cd_eproxy_on_connected(&l, c);
			else if (c->st == ST_CONNECTING) {
				/* The client spoke early (kept for later) or left. */
				if (evs[i].events & (EPOLLHUP | EPOLLERR))
					cd_eproxy_conn_close(&l, c, "client left while connecting");
				continue;
			}
			if (c->st == ST_RELAY && (evs[i].events & EPOLLERR))
				cd_eproxy_conn_close(&l, c, "connection reset");
			if (c->st == ST_RELAY)
				cd_eproxy_on_relay(&l, c);
		}
		while (l.dead) {
			struct conn *c = l.dead;
			l.dead = c->dead_next;
			conn_free(c);
		}
		now = cd_eproxy_now_ms();
		if (now - l.last_scan_ms >= 250)
			scan_timeouts(&l, now);
		while (l.dead) {
			struct conn *c = l.dead;
			l.dead = c->dead_next;
			conn_free(c);
		}
	}
	if (l.fatal)
		r = l.fatal;
out:
	if (l.dropped && !l.fatal)
		log_dropped(&l, cd_eproxy_now_ms());
	while (l.conns)
		cd_eproxy_conn_close(&l, l.conns, "proxy stopped");
	if (l.res) {
		struct cd_egress_job *job;
		cd_egress_resolver_stop(l.res);
		while ((job = cd_egress_resolver_done(l.res)))
			free(job); /* every owner is closed */
		cd_egress_resolver_free(l.res);
	}
	if (l.npend && !l.fatal && cd_eproxy_log_event(&l, NULL) < 0 && r == 0)
		r = l.fatal;
	while (l.dead) {
		struct conn *c = l.dead;
		l.dead = c->dead_next;
		conn_free(c);
	}
	free(l.pend);
	close(l.ep);
	return r;
}

/* ---- the audit record --------------------------------------------- */

static json_t *addr_json(const struct sockaddr_storage *ss)
{
	char text[64];

	if (cd_addr_format(ss, text, sizeof text) < 0)
		return json_null();
	return json_string(text);
}

static int set_new(json_t *o, const char *key, json_t *v)
{
	return v ? json_object_set_new(o, key, v) : -1;
}

static json_t *event_details(const struct cd_egress_event *ev)
{
	json_t *o = json_object(), *a;
	size_t i;
	int r = 0;

	if (!o)
		return NULL;
	if (ev->client)
		r |= set_new(o, "client", json_string(ev->client));
	if (ev->method)
		r |= set_new(o, "method", json_string(ev->method));
	if (ev->host) {
		r |= set_new(o, "host", json_string(ev->host));
		r |= set_new(o, "port", json_integer(ev->port));
	}
	if (ev->request) {
		struct cd_buf b;
		cd_buf_init(&b, 4 * ev->request_len + 16);
		if (cd_buf_escape(&b, ev->request, ev->request_len) == 0)
			r |= set_new(o, "request", json_string(b.data ? b.data : ""));
		cd_buf_release(&b);
	}
	if (ev->status)
		r |= set_new(o, "status", json_integer(ev->status));
	if (ev->naddrs) {
		a = json_array();
		for (i = 0; a && i < ev->naddrs; i++)
			r |= json_array_append_new(a, addr_json(&ev->addrs[i]));
		r |= set_new(o, "addresses", a);
	}
	if (ev->connect)
		r |= set_new(o, "address", addr_json(ev->connect));
	if (ev->has_result) {
		r |= set_new(o, "bytes_up", json_integer((json_int_t)ev->bytes_up));
		r |= set_new(o, "bytes_down", json_integer((json_int_t)ev->bytes_down));
	}
	if (r) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* One event as a record; *ret_details is the caller's to free. */
static int to_record(const struct cd_egress_audit *a, const struct cd_egress_event *ev,
                     struct cd_record *rec, char target[CD_HOST_MAX + 8], char **ret_details,
                     json_t **ret_keep)
{
	char *details = NULL;
	json_t *o;
	int n;

	o = event_details(ev);
	if (!o)
		return -ENOMEM;
	memset(rec, 0, sizeof *rec);
	rec->kind = ev->kind;
	rec->run_id = a->run_id;
	rec->agent = a->agent;
	rec->action = "network";
	if (ev->host) {
		n = snprintf(target, CD_HOST_MAX + 8, "%s:%u", ev->host, ev->port);
		if (n > 0 && n < CD_HOST_MAX + 8)
			rec->target = target;
	}
	if (strcmp(ev->kind, "egress") == 0)
		rec->decision = ev->report_only ? "report-only-deny" : ev->allow ? "allow" : "deny";
	rec->grant_ids = ev->rule;
	rec->reason = ev->reason;
	if (ev->has_result) {
		rec->has_duration = 1;
		rec->duration_ms = ev->duration_ms;
	}
	*ret_keep = NULL;
	if (a->mask && cd_logmask_record(a->masker, a->mask, rec, o, ret_keep) < 0) {
		json_decref(o);
		return -ENOMEM;
	}
	details = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (!details) {
		json_decref(*ret_keep);
		*ret_keep = NULL;
		return -ENOMEM;
	}
	rec->details_json = details;
	*ret_details = details;
	return 0;
}

int cd_egress_audit_log(const struct cd_egress_event *ev, void *ctx)
{
	return cd_egress_audit_log_many(ev, 1, ctx);
}

int cd_egress_audit_log_many(const struct cd_egress_event *evs, size_t n, void *ctx)
{
	struct cd_egress_audit *a = ctx;
	struct cd_record recs[CD_EGRESS_RESULTS_PENDING + 1];
	char targets[CD_EGRESS_RESULTS_PENDING + 1][CD_HOST_MAX + 8];
	char *details[CD_EGRESS_RESULTS_PENDING + 1];
	json_t *keep[CD_EGRESS_RESULTS_PENDING + 1];
	size_t i, made = 0;
	int r = 0;

	if (!a || !a->audit || !evs || n == 0 || n > CD_EGRESS_RESULTS_PENDING + 1)
		return -EINVAL;
	for (i = 0; i < n && r == 0; i++) {
		r = to_record(a, &evs[i], &recs[i], targets[i], &details[i], &keep[i]);
		if (r == 0)
			made++;
	}
	if (r < 0)
		r = cd_err_set(&a->err, r, "egress record: out of memory");
	else if (n == 1)
		r = cd_audit_append(a->audit, &recs[0], NULL, &a->err);
	else
		r = cd_audit_append_many(a->audit, recs, n, NULL, &a->err);
	for (i = 0; i < made; i++) {
		free(details[i]);
		json_decref(keep[i]);
	}
	return r;
}
