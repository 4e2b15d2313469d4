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
#include "egress-proxy-int.h"

#include "audit/audit.h"
#include "util/buf.h"
#include "egress-addr.h"
#include "egress-http.h"
#include "egress-relay.h"
#include "egress-resolve.h"
#include "egress-socks.h"
#include "egress-tls.h"
#include "mask/logmask.h"
#include "util/util.h"

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

uint64_t cd_eproxy_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void cd_eproxy_set_events(struct loop *l, struct end *e, uint32_t want)
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

int cd_eproxy_add_end(struct loop *l, struct end *e, uint32_t want)
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
int cd_eproxy_log_event(struct loop *l, const struct cd_egress_event *ev)
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
void cd_eproxy_no_delay(int fd)
{
	int one = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* A one-line reason: our own text, but never a control byte. */
void cd_eproxy_reply(int fd, int status, const char *reason)
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
void cd_eproxy_reply_conn(const struct conn *c, int status, const char *reason)
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

void cd_eproxy_fill_event(const struct conn *c, struct cd_egress_event *ev, const char *kind)
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
void cd_eproxy_conn_close(struct loop *l, struct conn *c, const char *why)
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
void cd_eproxy_refuse(struct loop *l, struct conn *c, int status, const char *reason)
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

int cd_eproxy_status_for(int code)
{
	if (code == -CD_E_DENIED)
		return 403;
	if (code == -CD_E_LIMIT)
		return 431;
	return 400;
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

/* Closed connections are freed once no epoll event left to handle can name
 * them. */
static void free_dead(struct loop *l)
{
	while (l->dead) {
		struct conn *c = l->dead;
		l->dead = c->dead_next;
		conn_free(c);
	}
}

/* One epoll event: the stop descriptor (1: stop), the listening socket, the
 * resolver's answers, or a connection, handled by its state. */
static int on_event(struct loop *l, struct end *e, uint32_t events)
{
	struct conn *c = e->c;

	if (e == &l->stop_end)
		return 1;
	if (e == &l->listen_end) {
		accept_all(l);
		return 0;
	}
	if (e == &l->res_end) {
		cd_eproxy_take_decisions(l);
		return 0;
	}
	if (c->st == ST_HEAD)
		cd_eproxy_on_head(l, c);
	else if (c->st == ST_RESOLVING) {
		/* Not reading: only a hang-up or an error reaches us. */
		if (events & (EPOLLHUP | EPOLLERR))
			cd_eproxy_conn_close(l, c, "client left while its request was decided");
		return 0;
	} else if (c->st == ST_HELLO)
		cd_eproxy_on_hello(l, c);
	else if (c->st == ST_CONNECTING && e == &c->up)
		cd_eproxy_on_connected(l, c);
	else if (c->st == ST_CONNECTING) {
		/* The client spoke early (kept for later) or left. */
		if (events & (EPOLLHUP | EPOLLERR))
			cd_eproxy_conn_close(l, c, "client left while connecting");
		return 0;
	}
	if (c->st == ST_RELAY && (events & EPOLLERR))
		cd_eproxy_conn_close(l, c, "connection reset");
	if (c->st == ST_RELAY)
		cd_eproxy_on_relay(l, c);
	return 0;
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
		for (i = 0; i < n && !l.fatal; i++)
			if (on_event(&l, evs[i].data.ptr, evs[i].events))
				goto out;
		free_dead(&l);
		now = cd_eproxy_now_ms();
		if (now - l.last_scan_ms >= 250)
			scan_timeouts(&l, now);
		free_dead(&l);
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
	free_dead(&l);
	free(l.pend);
	close(l.ep);
	return r;
}
