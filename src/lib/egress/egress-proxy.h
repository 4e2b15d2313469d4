/* egress-proxy.h — the egress proxy's event loop: accept, read one request
 * head (HTTP, or a SOCKS5 greeting and CONNECT request when the first byte
 * is 5) under a size and time cap, decide (egress-policy.h), connect to the
 * vetted address, answer, then relay bytes both ways until either side is
 * done.  One thread, epoll, non-blocking sockets; established connections
 * are relayed with splice (egress-relay.h), so no per-byte work.  splice
 * has no MSG_NOSIGNAL: the loop splices only when the caller has SIGPIPE
 * ignored, and copies otherwise.
 *
 * Every attempt is handed to a log callback before anything reaches the
 * network (the decision), and every allowed connection again when it
 * closes (bytes, duration).  When the callback fails the attempt is
 * refused and the loop stops: no log, no proxy.  The closing records
 * ("egress.result") wait, up to CD_EGRESS_RESULTS_PENDING of them and a
 * second at most, until the next decision (written in the same
 * transaction, before it) or until the loop is idle: the connection
 * they describe is already over, and the next decision need not pay a
 * write of its own for them.
 *
 * Trust boundary: clients are sandboxed agents (hostile); upstream servers
 * are untrusted too, but their bytes are only relayed.  The library never
 * prints, exits, installs signal handlers or reads the environment; the
 * caller passes a stop fd (a signalfd, an eventfd) to end the loop. */
#ifndef CD_EGRESS_PROXY_H
#define CD_EGRESS_PROXY_H

#include "egress-policy.h"
#include "util/err.h"
#include "mask/mask.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct cd_audit;

/* One attempt (kind "egress": the decision) or the end of an allowed
 * connection (kind "egress.result").  Strings may be NULL when unknown;
 * `request` is untrusted bytes (the start of a request line that could not
 * be parsed), escaped by whoever stores or shows it. */
struct cd_egress_event {
	const char *kind;
	const char *client; /* "127.0.0.1:40000" */
	const char *method; /* "CONNECT", "GET" ... */
	const char *host;   /* normalized target host */
	uint16_t port;
	const char *request; /* refusals before a target was known */
	size_t request_len;
	int allow;
	int report_only; /* allowed only because of --report-only: "report-only-deny" */
	int status;      /* HTTP status sent to the client (0: none) */
	const char *reason;
	const char *rule; /* the allowlist entry that matched */
	const struct sockaddr_storage *addrs;
	size_t naddrs;
	const struct sockaddr_storage *connect; /* the address used */
	int has_result;                         /* egress.result: the counters below */
	uint64_t bytes_up, bytes_down, duration_ms;
};

/* 0 when the event is durably logged; negative otherwise. */
typedef int (*cd_egress_log_fn)(const struct cd_egress_event *ev, void *ctx);
/* The same for n events in order, durable together (one transaction). */
typedef int (*cd_egress_log_many_fn)(const struct cd_egress_event *evs, size_t n, void *ctx);

struct cd_egress_proxy_cfg {
	int listen_fd; /* bound and listening; made non-blocking; the caller keeps it */
	int stop_fd;   /* the loop returns 0 when this becomes readable; -1: none */
	const struct cd_egress_policy *policy;
	cd_egress_log_fn log;           /* required */
	cd_egress_log_many_fn log_many; /* optional: batches (else one log call each) */
	void *log_ctx;
	unsigned max_conns;          /* 0: CD_EGRESS_CONNS_MAX */
	unsigned head_timeout_ms;    /* 0: CD_EGRESS_HEAD_TIMEOUT_MS */
	unsigned connect_timeout_ms; /* 0: CD_EGRESS_CONNECT_TIMEOUT_MS */
	unsigned idle_timeout_ms;    /* 0: CD_EGRESS_IDLE_TIMEOUT_MS */
	/* Allow what the allowlist, the address classes or the SNI check
	 * would refuse, logged as "report-only-deny" with the reason.
	 * Malformed, oversized or slow requests are still refused. */
	int report_only;
};

/* Run until stop_fd is readable (returns 0) or a fatal error: the log
 * callback failed (its code), epoll failed (-errno), out of memory.  All
 * connections are closed on return. */
int cd_egress_proxy_run(const struct cd_egress_proxy_cfg *cfg, struct cd_err *err);

/* A log callback writing one audit record per event (kind "egress" or
 * "egress.result", action "network", target "HOST:PORT", decision, reason,
 * grant_ids = the matching entry, decision "allow", "deny" or
 * "report-only-deny", details: client, method, addresses,
 * address used, status, bytes).  ctx is a struct cd_egress_audit. */
struct cd_egress_audit {
	struct cd_audit *audit;
	const char *run_id; /* may be NULL */
	const char *agent;  /* may be NULL */
	struct cd_err err;  /* the last failure */
	/* The run's grants mask data: each record's host, request line,
	 * target and reason are minimized (logmask.h; a DNS label or a URL
	 * can carry what the grant masks).  mask NULL or inactive: as given;
	 * masker NULL with an active mask: withheld. */
	const struct cd_mask_rules *mask;
	struct cd_masker *masker;
};
int cd_egress_audit_log(const struct cd_egress_event *ev, void *ctx);
int cd_egress_audit_log_many(const struct cd_egress_event *evs, size_t n, void *ctx);

#endif
