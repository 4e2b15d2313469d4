/* cmd-mcp-fsess.h — one session of the HTTP front (cmd-mcp-front.c): a
 * `cordon mcp --agent A` process, a thread reading its stdout, the
 * requests waiting for their answers and the session's events (the
 * server's notifications and requests to the client, numbered for
 * Last-Event-ID) until a stream carries them.
 *
 * Trust: the session's process is the stdio gateway (cordon's own), but
 * what it relays from the server is the server's: lines over the cap end
 * the session, answers go only to the request of their id. */
#ifndef CD_CMD_MCP_FSESS_H
#define CD_CMD_MCP_FSESS_H

#include "http/httpd.h"
#include "util/buf.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#define FSESS_LINE_MAX (4 * 1024 * 1024)
#define FSESS_EVENTS   256 /* kept for delivery and resumption */
/* The key of a batch's answer (an array, or one error with id null); a
 * shared instance's session N waits on "[batch]:sN", which an array
 * whose ids all carry "cordon-sN:" answers. */
#define FSESS_BATCH_KEY "[batch]"

/* What one session of a backend has had of its events (under its mu):
 * events are delivered in order, each once per session it is for. */
struct fview {
	uint64_t n;     /* the session's number (fsession.n) */
	uint64_t seen;  /* events up to this id are delivered (or not its) */
	unsigned posts; /* its POST streams waiting for an answer */
	int closed;     /* its session is closed: its waits fail, answers dropped */
};

struct fwait {
	struct fwait *next;
	struct fview *v; /* the session waiting */
	char *key;       /* the request's id, compact JSON */
	json_t *ids;     /* a shared instance's batch: its requests' ids (rewritten) */
	json_t *ans;     /* the answer, once here */
	int orphan;      /* its stream is gone: the answer becomes an event (1),
	              * or (2: a shared instance, whose events every session
	              * sees) is dropped */
};

/* fev.to of a server's request on a shared instance: the first session
 * whose stream takes it (and answers it). */
#define FEV_ANY UINT64_MAX

struct fev {
	uint64_t id; /* 0: free */
	char *data;  /* one JSON-RPC message */
	/* The session it is for: 0 every session (a notification not bound
	 * to a request: every session sharing the instance gets it), N the
	 * session N's (progress or cancellation of its request), FEV_ANY
	 * (then the N that took it). */
	uint64_t to;
};

struct fsess {
	char id[65];
	char agent[128];
	char token[64];   /* the token's id (records) */
	char version[16]; /* the protocol version of the initialize result */
	pid_t pid;
	int to, from;
	pthread_t reader;
	int has_reader;
	atomic_int stopping;
	pthread_mutex_t wmu; /* writes to the session's stdin */
	pthread_mutex_t mu;  /* everything below */
	pthread_cond_t cv;
	unsigned refs;
	int dead;
	struct fwait *waits;
	struct fev ev[FSESS_EVENTS]; /* event n at ev[n % FSESS_EVENTS] */
	uint64_t next_ev;            /* the next event's id (from 1) */
	json_t *init; /* a shared instance: its initialize result (set once, under mu) */
	int shared;   /* answers go by their ids' "cordon-sN:" */
	char *rbuf;
	size_t rlen;
};

/* A session of the HTTP front (an Mcp-Session-Id): its agent and its
 * gateway process, its own or (shared: true) one of all the sessions of
 * its agent under the same policy, whose request ids it rewrites to
 * "cordon-s<N>:<id>" (and back) so that the sessions' ids cannot meet. */
struct fsession {
	char id[65];
	char agent[128];
	char token[64];   /* the token's id: only it may use the session */
	char hash[65];    /* its hash (re-checked while the session lives) */
	char version[16]; /* the protocol version of the initialize result */
	char policy[4096];
	atomic_llong used;  /* fsess_now_ms() of its last request (idle timeout) */
	atomic_int streams; /* its streams open */
	struct fsess *b;
	int shared;
	int first; /* the session that opened b (forwards initialized) */
	uint64_t n;
	unsigned get_gen; /* the GET stream in force (under b->mu) */
	struct fview v;   /* its events (under b->mu) */
	int closed;       /* under b->mu */
	atomic_uint refs;
};

/* A session (one reference) on backend b (its reference is taken over). */
struct fsession *fsession_new(const char *agent, const char *token, const char *policy,
                              struct fsess *b);
void fsession_get(struct fsession *x);
void fsession_put(struct fsession *x);
/* Mark it closed (its streams and waiting requests end at once, no
 * answer forwarded) and drop a reference.  A shared instance is sent
 * notifications/cancelled for each request of the session still waiting
 * (its gateway withdraws a call held for approval). */
void fsession_close(struct fsession *x);

/* A shared session's batch `out` (rewritten) waited for by w: the ids of
 * its requests kept in w, to be cancelled if the session closes first. */
void fsession_batch_ids(struct fsession *x, struct fwait *w, json_t *out);

/* A shared session's copy of a message (or batch) with its request ids
 * (and notifications/cancelled's requestId) rewritten; others: msg with
 * a reference.  NULL without memory. */
json_t *fsession_out(const struct fsession *x, json_t *msg);
/* Restore a shared session's ids in an answer (an object or an array). */
void fsession_in(const struct fsession *x, json_t *ans);

/* A POST's answer as an event stream (rs->sse): the session's events
 * while w waits, the answer (its id restored), the end; an error answer
 * with `id` when the deadline passes or the session ends.  Takes the
 * reference of x and w.  0 or -ENOMEM (the caller still owns them). */
int fstream_post(struct fsession *x, struct fwait *w, json_t *id, int64_t deadline,
                 struct cd_http_resp *rs);
/* The session's GET stream, after `last` when `replay`: replaces the one
 * in force.  Takes the reference of x.  0 or -ENOMEM. */
int fstream_get(struct fsession *x, uint64_t last, int replay, struct cd_http_resp *rs);

/* A new session (one reference) of agent; NULL without memory. */
struct fsess *fsess_new(const char *agent, const char *token);
void fsess_get(struct fsess *s);
/* Drop a reference; the last frees (after fsess_stop). */
void fsess_put(struct fsess *s);
/* Start argv (execv of /proc/self/exe) and the reader: 0 or -errno. */
int fsess_start(struct fsess *s, const char *const *argv);
/* End the process (stdin closed, then TERM, then KILL) and the reader. */
void fsess_stop(struct fsess *s);
/* Write one message as a line: 0 or -EPIPE. */
int fsess_send(struct fsess *s, json_t *msg);

/* Session v waits for the answer of id, or (NULL) of a batch under
 * batch_key (one at a time per key: else NULL with errno EBUSY): register
 * first, then wait. */
struct fwait *fsess_wait_add(struct fsess *s, struct fview *v, json_t *id_or_null,
                             const char *batch_key);
/* Until the answer is in w->ans (1), an event is waiting for w's
 * session's stream (2, only when `events`), the deadline (0) or the
 * session's end or close (-1, before an answer already here). */
int fsess_wait(struct fsess *s, struct fwait *w, int64_t deadline_ms, int events);
/* Unregister w; `orphan` 1: its answer, when it comes, is an event; 2:
 * it is dropped. */
void fsess_wait_done(struct fsess *s, struct fwait *w, int orphan);

/* Append the events of session v not delivered yet (from_get: only when
 * none of its POSTs waits) as SSE ("id: N\nevent: message\ndata:
 * ...\n\n"): the number appended.  Under s->mu. */
int fsess_take_events(struct fsess *s, struct fview *v, struct cd_buf *out, int from_get);
/* Append again session v's events after `last` still kept (resumption). */
int fsess_replay(struct fsess *s, struct fview *v, uint64_t last, struct cd_buf *out);
/* One SSE event with a message: 0 or -ENOMEM. */
int fsess_sse(struct cd_buf *out, uint64_t id, const char *data);

int64_t fsess_now_ms(void);
/* Wait on s->cv (under s->mu) at most wait_ms. */
void fsess_cv_wait(struct fsess *s, unsigned wait_ms);

#endif
