/* egress-proxy-request.c — one connection through the egress proxy
 * (egress-proxy.c): the request head (HTTP, CONNECT or SOCKS5), its
 * decision by egress-resolve.c's threads, the TLS ClientHello check of a
 * tunnel, the connect to the vetted address, and the relay.
 *
 * Trust boundary: the client's bytes are hostile until cd_http_parse_head()
 * (or the SOCKS5 parser) and cd_egress_decide() have accepted them; after
 * that they are relayed as they are and never parsed. */
#include "egress-proxy-int.h"

#include "egress-addr.h"
#include "egress-http.h"
#include "egress-relay.h"
#include "egress-resolve.h"
#include "egress-socks.h"
#include "egress-tls.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

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
void cd_eproxy_fail(struct loop *l, struct conn *c, int status, const char *why)
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
void cd_eproxy_refuse_tunnel(struct loop *l, struct conn *c, const char *reason)
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
void cd_eproxy_on_hello(struct loop *l, struct conn *c)
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

void cd_eproxy_on_head(struct loop *l, struct conn *c)
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
void cd_eproxy_decided(struct loop *l, struct conn *c, struct cd_egress_job *job)
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
void cd_eproxy_take_decisions(struct loop *l)
{
	struct cd_egress_job *job;

	while ((job = cd_egress_resolver_done(l->res))) {
		struct conn *c = job->owner;
		if (c && c->st == ST_RESOLVING)
			cd_eproxy_decided(l, c, job);
		free(job);
	}
}

void cd_eproxy_on_connected(struct loop *l, struct conn *c)
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

void cd_eproxy_on_relay(struct loop *l, struct conn *c)
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
