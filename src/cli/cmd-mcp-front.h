/* cmd-mcp-front.h — the HTTP front's state (cmd-mcp-front.c) and its
 * `mcp.front` records (cmd-mcp-frec.c). */
#ifndef CD_CMD_MCP_FRONT_H
#define CD_CMD_MCP_FRONT_H

#include "cli-audit.h"
#include "cmd-mcp-fsess.h"
#include "http/httpd.h"
#include "store/state.h"

#include <pthread.h>
#include <stdint.h>

#define FRONT_SESSIONS_MAX 256
#define FRONT_HOSTS        3
/* An answer not here by then goes out as an event stream (kept alive). */
#define FRONT_JSON_WAIT_MS 10000
/* 401s (and, apart, 413s and 429s) recorded per minute; the others are
 * counted in the next record. */
#define FRONT_AUTH_RECORDS 20
/* Every session's token is re-checked (and idle sessions closed) this
 * often: a revoked token's open streams end within it. */
#define FRONT_SWEEP_S 5

/* Policies read for the limits per agent (cmd-mcp-flimit.c). */
#define FRONT_POLICIES 8

struct cd_policy;

struct fcalls {
	char agent[128];
	int64_t window; /* the minute counted */
	unsigned n;
};

struct rate {
	int64_t window;
	unsigned recorded, suppressed;
};

struct front {
	const char *policy, *server, *audit, *state_opt, *cwd, *cert, *key, *listen;
	const char *origin_opt;
	char **cmd;
	unsigned max_sessions; /* per agent */
	size_t max_request;
	unsigned wait_s;    /* for one answer of a session */
	uint64_t idle_ms;   /* a session without requests or streams ends */
	unsigned request_s; /* one request's headers and body (--request-deadline) */
	struct cd_state *state;
	struct cd_audit *log;
	pthread_mutex_t mu;  /* sessions, and the state connection */
	pthread_mutex_t amu; /* the audit log, and the rates below */
	struct rate auth;    /* token-refused */
	struct rate refuse;  /* request-refused, session-refused */
	struct fsession *sess[FRONT_SESSIONS_MAX];
	char hostbuf[FRONT_HOSTS][300];
	const char *hosts[FRONT_HOSTS + 1];
	char origins[FRONT_HOSTS + 1][320];
	int tls;
	size_t ceiling;      /* the HTTP server's body cap (the largest limit) */
	pthread_mutex_t lmu; /* lpol and calls */
	struct {
		char path[4096];
		struct cd_policy *p;
	} lpol[FRONT_POLICIES];
	struct fcalls calls[FRONT_SESSIONS_MAX];
};

/* The options of `cordon mcp --listen` into f: -1 to go on, else the exit
 * status (usage, --help). */
int front_args(int argc, char **argv, struct front *f);

/* An agent's limits: its policy's mcp_front: values, else the flags. */
struct flimits {
	unsigned max_sessions;
	size_t max_request;
	unsigned max_cpm;                       /* 0: no limit */
	const char *sessions_src, *request_src; /* "policy" or the flag */
};

/* The limits of agent under the policy at `policy` (read once, again
 * after front_limits_reload; one that does not load: the flags). */
void front_limits(struct front *f, const char *policy, const char *agent, struct flimits *ret);
/* The largest max_request of --max-request and the agents of --policy:
 * the HTTP server's cap (a larger value elsewhere is held to it). */
size_t front_ceiling(struct front *f);
/* SIGHUP: the policies are read again at their next use. */
void front_limits_reload(struct front *f);
void front_limits_free(struct front *f);
/* Count n tool calls of agent in this minute: 1 within max (0: none), 0
 * over (not counted). */
int front_calls_ok(struct front *f, const char *agent, unsigned n, unsigned max);

/* One `mcp.front` record: action (session-open, session-close,
 * session-refused, request-refused, token-refused), the agent when known,
 * the decision and why (rq NULL: no peer).  0 or negative. */
int front_record(struct front *f, const struct cd_http_req *rq, const char *action,
                 const char *agent, const char *token, const char *sid, const char *decision,
                 const char *reason, unsigned suppressed);
/* A 413 or 429 of an agent's, recorded at most FRONT_AUTH_RECORDS a minute. */
void record_refused(struct front *f, const struct cd_http_req *rq, const char *action,
                    const char *agent, const char *token, const char *why);
/* A 401, recorded at the same rate. */
void record_401(struct front *f, const struct cd_http_req *rq, const char *why);

#endif
