/* egress-proxy-int.h — the egress proxy's state, shared by egress-proxy.c
 * (the event loop, replies, closing) and egress-proxy-request.c (one
 * request, from its head to the relay).  Not part of the library's
 * interface: front ends use egress-proxy.h.  Everything here runs on the
 * loop's thread only. */
#ifndef CD_EGRESS_PROXY_INT_H
#define CD_EGRESS_PROXY_INT_H

#include "egress-proxy.h"

#include "egress-http.h"
#include "egress-relay.h"
#include "egress-socks.h"

#include <stdint.h>
#include <sys/socket.h>

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

/* egress-proxy.c */
uint64_t cd_eproxy_now_ms(void);
void cd_eproxy_set_events(struct loop *l, struct end *e, uint32_t want);
int cd_eproxy_add_end(struct loop *l, struct end *e, uint32_t want);
int cd_eproxy_log_event(struct loop *l, const struct cd_egress_event *ev);
void cd_eproxy_no_delay(int fd);
void cd_eproxy_reply(int fd, int status, const char *reason);
void cd_eproxy_reply_conn(const struct conn *c, int status, const char *reason);
void cd_eproxy_fill_event(const struct conn *c, struct cd_egress_event *ev, const char *kind);
void cd_eproxy_conn_close(struct loop *l, struct conn *c, const char *why);
void cd_eproxy_refuse(struct loop *l, struct conn *c, int status, const char *reason);
int cd_eproxy_status_for(int code);

/* egress-proxy-request.c */
void cd_eproxy_fail(struct loop *l, struct conn *c, int status, const char *why);
void cd_eproxy_refuse_tunnel(struct loop *l, struct conn *c, const char *reason);
void cd_eproxy_on_hello(struct loop *l, struct conn *c);
void cd_eproxy_on_head(struct loop *l, struct conn *c);
void cd_eproxy_decided(struct loop *l, struct conn *c, struct cd_egress_job *job);
void cd_eproxy_take_decisions(struct loop *l);
void cd_eproxy_on_connected(struct loop *l, struct conn *c);
void cd_eproxy_on_relay(struct loop *l, struct conn *c);

#endif
