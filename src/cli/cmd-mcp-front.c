/* cmd-mcp-front.c — `cordon mcp --listen ADDR:PORT`: MCP over Streamable
 * HTTP at /mcp (http/httpd.h), one gateway for many agents.  Each request
 * names its agent by a bearer token (cmd-mcp-token.c; the state database
 * keeps its SHA-256); `initialize` opens a session bound to that agent,
 * and the session is its own `cordon mcp --agent A` process (this binary,
 * the stdio gateway: the same decisions, pins, masking and records, and
 * its own sandboxed server or its own connection to a url: server).  The
 * front only authenticates, carries each POST's message (or 2025-03-26
 * batch) to the session's stdin and brings the answer back: as
 * application/json when it comes first, else as an event stream that
 * carries the session's notifications and requests to the client before
 * it; messages no POST carries go to the session's GET stream (resumable
 * with Last-Event-ID while the last FSESS_EVENTS are kept).  Session
 * opening and closing, refused tokens and refused requests are `mcp.front`
 * records (the session's gateway records its calls).
 *
 * Trust boundary: every HTTP peer.  A request without a token in force
 * gets 401 and nothing else; a foreign Origin 403; a session id of
 * another agent is unknown (404).  The agent is never taken from what the
 * client says. */
#include "cli.h"

#include "cli-audit.h"
#include "cmd-mcp-front.h"
#include "cmd-mcp-fsess.h"
#include "cmd-mcp.h"
#include "http/httpd.h"
#include "mcp/mcp.h"
#include "policy/policy.h"
#include "store/state.h"
#include "util/num.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* ---- who is asking ------------------------------------------------------ */

static int origin_ok(struct front *f, const struct cd_http_req *rq)
{
	const char *o = cd_http_header(rq, "Origin");
	size_t i;

	if (!o) /* SDK clients send none; a browser always does */
		return 1;
	for (i = 0; i < FRONT_HOSTS + 1; i++)
		if (f->origins[i][0] && !strcmp(o, f->origins[i]))
			return 1;
	return 0;
}

struct tok {
	char id[64];
	char hash[65];
	char agent[128];
	char policy[4096];
};

static int tok_cb(const struct cd_agent_token *t, void *ctx)
{
	struct tok *k = ctx;

	if (strlen(t->agent) >= sizeof k->agent || strlen(t->id) >= sizeof k->id ||
	    (t->policy && strlen(t->policy) >= sizeof k->policy))
		return -CD_E_CORRUPT;
	memcpy(k->id, t->id, strlen(t->id) + 1);
	memcpy(k->agent, t->agent, strlen(t->agent) + 1);
	if (t->policy)
		memcpy(k->policy, t->policy, strlen(t->policy) + 1);
	return 0;
}

/* Origin, then the agent of the request's bearer token: 0, or -1 with the
 * answer (403, or 401 and nothing else, recorded) in rs. */
static int authenticate(struct front *f, const struct cd_http_req *rq, struct tok *k,
                        struct cd_http_resp *rs)
{
	const char *a = cd_http_header(rq, "Authorization");
	struct cd_store *st = cd_state_store(f->state);
	struct cd_err err = { 0, "" };
	char hash[65];
	int r;

	memset(k, 0, sizeof *k);
	if (!origin_ok(f, rq)) {
		cd_http_resp_text(rs, 403, "forbidden: origin\n");
		return -1;
	}
	if (!a || strncasecmp(a, "Bearer ", 7) || strlen(a + 7) < 16 || strlen(a + 7) > 256) {
		record_401(f, rq, a ? "not a bearer token" : "no Authorization header");
		goto no;
	}
	mcp_token_hash(a + 7, hash);
	pthread_mutex_lock(&f->mu);
	r = st->ops->agent_token_find(st, hash, (int64_t)time(NULL), tok_cb, k, &err);
	pthread_mutex_unlock(&f->mu);
	memcpy(k->hash, hash, sizeof hash);
	if (r < 0 && r != -ENOENT)
		cli_warnf("token lookup: %s", err.msg);
	if (r == 0 && k->agent[0])
		return 0;
	record_401(f, rq, r == -ENOENT || r == 0 ? "no token in force" : "token lookup failed");
no:
	cd_http_resp_text(rs, 401, "unauthorized\n");
	cd_http_resp_header(rs, "WWW-Authenticate", "Bearer");
	return -1;
}

/* ---- sessions: a `cordon mcp` process each, or one shared -------------- */

static int spawn(struct front *f, struct fsess *s, const struct tok *k)
{
	const char *argv[64];
	size_t n = 0, i;

	argv[n++] = "cordon";
	argv[n++] = "mcp";
	argv[n++] = "--policy";
	argv[n++] = k->policy[0] ? k->policy : f->policy;
	argv[n++] = "--agent";
	argv[n++] = k->agent;
	if (f->server) {
		argv[n++] = "--server";
		argv[n++] = f->server;
	}
	if (f->audit) {
		argv[n++] = "--audit";
		argv[n++] = f->audit;
	}
	if (f->state_opt) {
		argv[n++] = "--state";
		argv[n++] = f->state_opt;
	}
	if (f->cwd) {
		argv[n++] = "--cwd";
		argv[n++] = f->cwd;
	}
	if (f->cmd) {
		argv[n++] = "--";
		for (i = 0; f->cmd[i] && n < 63; i++)
			argv[n++] = f->cmd[i];
	}
	argv[n] = NULL;
	return fsess_start(s, argv);
}

/* Whether session o is id's, opened by token k (a session of another
 * token, even of the same agent, is none: under f->mu). */
static int sess_is(const struct fsession *o, const char *id, const struct tok *k)
{
	return o && !strcmp(o->id, id) && !strcmp(o->agent, k->agent) && !strcmp(o->token, k->id);
}

/* Take a session out of the table (the caller closes it). */
static struct fsession *sess_take(struct front *f, const char *id, const struct tok *k)
{
	struct fsession *x = NULL;
	size_t i;

	pthread_mutex_lock(&f->mu);
	for (i = 0; i < FRONT_SESSIONS_MAX; i++)
		if (sess_is(f->sess[i], id, k)) {
			x = f->sess[i];
			f->sess[i] = NULL;
			break;
		}
	pthread_mutex_unlock(&f->mu);
	return x;
}

/* Close a session taken out of the table, with a record: its own process
 * ends now; a shared one with its last session, and meanwhile the
 * session's requests still waiting fail at once and are cancelled on the
 * shared gateway (fsession_close: a call held for approval is withdrawn). */
static void sess_close(struct front *f, const struct cd_http_req *rq, struct fsession *x,
                       const char *why)
{
	if (!x)
		return;
	if (!x->shared)
		fsess_stop(x->b);
	front_record(f, rq, "session-close", x->agent, x->token, x->id, "allow", why, 0);
	fsession_close(x);
}

/* A session with `id` of token k, with a reference; NULL when there is
 * none (an id of another token's is none; a session whose process ended
 * is closed now). */
static struct fsession *sess_find(struct front *f, const struct cd_http_req *rq, const char *id,
                                  const struct tok *k)
{
	struct fsession *x = NULL;
	size_t i;
	int dead = 0;

	pthread_mutex_lock(&f->mu);
	for (i = 0; i < FRONT_SESSIONS_MAX && !x; i++)
		if (sess_is(f->sess[i], id, k))
			x = f->sess[i];
	if (x) {
		fsession_get(x);
		atomic_store(&x->used, fsess_now_ms());
		pthread_mutex_lock(&x->b->mu);
		dead = x->b->dead;
		pthread_mutex_unlock(&x->b->mu);
	}
	pthread_mutex_unlock(&f->mu);
	if (x && dead) {
		fsession_put(x);
		sess_close(f, rq, sess_take(f, id, k), "the session's gateway ended");
		return NULL;
	}
	return x;
}

/* Why session x must end now (under f->mu): its token is no longer in
 * force (revoked, expired, or not found), or it was idle too long; NULL
 * while it may live.  A failed lookup ends it too (fail closed). */
static const char *sess_expired(struct front *f, struct fsession *x, int64_t now)
{
	struct cd_store *st = cd_state_store(f->state);
	struct cd_err err = { 0, "" };
	struct tok k;
	int r;

	memset(&k, 0, sizeof k);
	r = st->ops->agent_token_find(st, x->hash, (int64_t)time(NULL), tok_cb, &k, &err);
	if (r < 0 && r != -ENOENT)
		cli_warnf("token lookup: %s", err.msg);
	if (r < 0 || !k.agent[0] || strcmp(k.id, x->token) || strcmp(k.agent, x->agent))
		return r < 0 && r != -ENOENT ? "token lookup failed"
		                             : "the session's token is revoked or expired";
	if (!atomic_load(&x->streams) && now - atomic_load(&x->used) >= (int64_t)f->idle_ms)
		return "idle (--session-idle)";
	return NULL;
}

/* Close every session whose token is no longer in force, and the idle
 * ones: their streams end, their processes stop, with a record each. */
static void sess_sweep(struct front *f)
{
	struct fsession *gone[FRONT_SESSIONS_MAX];
	const char *why[FRONT_SESSIONS_MAX];
	int64_t now = fsess_now_ms();
	size_t i, n = 0;

	pthread_mutex_lock(&f->mu);
	for (i = 0; i < FRONT_SESSIONS_MAX; i++)
		if (f->sess[i] && (why[n] = sess_expired(f, f->sess[i], now))) {
			gone[n++] = f->sess[i];
			f->sess[i] = NULL;
		}
	pthread_mutex_unlock(&f->mu);
	for (i = 0; i < n; i++)
		sess_close(f, NULL, gone[i], why[i]);
}

/* ---- answers ------------------------------------------------------------ */

static int reply_json(struct cd_http_resp *rs, json_t *m)
{
	char *t = json_dumps(m, JSON_COMPACT | JSON_ENCODE_ANY);

	if (!t)
		return -ENOMEM;
	rs->status = 200;
	rs->ctype = "application/json";
	if (cd_buf_append(&rs->body, t, strlen(t)) < 0) {
		free(t);
		return -ENOMEM;
	}
	free(t);
	return 0;
}

/* A JSON-RPC error answer of cordon's own (HTTP status `status`). */
static void reply_error(struct cd_http_resp *rs, int status, json_t *id, int code, const char *msg)
{
	json_t *e = json_pack("{s:s,s:O?,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id, "error", "code",
	                      code, "message", msg);

	if (!e || reply_json(rs, e) < 0)
		cd_http_resp_text(rs, 500, "out of memory\n");
	else
		rs->status = status;
	json_decref(e);
}

/* Send a request (or a batch: id NULL) and answer it: JSON when the
 * answer comes first, else an event stream.  Takes a reference of x. */
static int request(struct front *f, struct fsession *x, json_t *msg, json_t *id,
                   struct cd_http_resp *rs)
{
	json_t *out = fsession_out(x, msg);
	json_t *wid = out && id ? json_object_get(out, "id") : NULL;
	char bkey[48];
	struct fwait *w;
	int64_t deadline = fsess_now_ms() + (int64_t)f->wait_s * 1000, first;
	int r;

	/* A shared instance's sessions each have their batch key. */
	snprintf(bkey, sizeof bkey, x->shared ? FSESS_BATCH_KEY ":s%llu" : FSESS_BATCH_KEY,
	         (unsigned long long)x->n);
	w = out ? fsess_wait_add(x->b, &x->v, wid, bkey) : NULL;
	if (!w) {
		int busy = out && errno == EBUSY;
		json_decref(out);
		fsession_put(x);
		if (!busy)
			return -ENOMEM;
		reply_error(rs, 409, NULL, -32600, "a batch is in flight on this session");
		return 0;
	}
	if (!id && x->shared)
		fsession_batch_ids(x, w, out);
	r = fsess_send(x->b, out);
	json_decref(out);
	if (r < 0) {
		fsess_wait_done(x->b, w, 0);
		fsession_put(x);
		reply_error(rs, 502, id, -32603, "cordon: the session is over");
		return 0;
	}
	first = fsess_now_ms() + FRONT_JSON_WAIT_MS;
	r = fsess_wait(x->b, w, first < deadline ? first : deadline, 1);
	if (r == 1 || r == -1) {
		if (r == 1)
			fsession_in(x, w->ans);
		if (r == 1 && (r = reply_json(rs, w->ans)) < 0)
			cd_http_resp_text(rs, 500, "out of memory\n");
		else if (r == -1)
			reply_error(rs, 502, id, -32603, "cordon: the session is over");
		fsess_wait_done(x->b, w, 0);
		fsession_put(x);
		return 0;
	}
	if (fstream_post(x, w, id, deadline, rs) < 0) {
		fsess_wait_done(x->b, w, 0);
		fsession_put(x);
		return -ENOMEM;
	}
	return 0;
}

static int random_id(char out[65])
{
	unsigned char b[32];
	size_t i;

	if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
		return -1;
	for (i = 0; i < sizeof b; i++) {
		out[2 * i] = "0123456789abcdef"[b[i] >> 4];
		out[2 * i + 1] = "0123456789abcdef"[b[i] & 15];
	}
	out[64] = 0;
	return 0;
}

/* Whether the token's policy lets the agent's sessions share the launched
 * server (its tool's shared: true): 1, 0, or -1 when it does not load
 * (the session's gateway then says why). */
static int policy_shared(struct front *f, const char *path)
{
	struct cd_policy *p = NULL;
	struct cd_err err = { 0, "" };
	char name[256];
	const char *server = f->server;
	int r = -1;

	if (!f->cmd || cd_policy_load_file(path, &p, &err) < 0)
		return -1;
	if (!server && cd_mcp_policy_server(p, name, sizeof name) == 0)
		server = name;
	if (server)
		r = cd_mcp_policy_shared(p, server);
	cd_policy_free(p);
	return r;
}

/* Whether a shared instance takes new sessions: its gateway has not
 * ended (under f->mu). */
static int joinable(struct fsess *b)
{
	int r;

	pthread_mutex_lock(&b->mu);
	r = !b->dead;
	pthread_mutex_unlock(&b->mu);
	return r;
}

/* A new session in the table within the agent's limit, on a new process
 * or on the agent's shared one (same policy): with a reference of the
 * caller's besides the table's; NULL when over (429 in rs). */
static struct fsession *sess_add(struct front *f, const struct cd_http_req *rq, const struct tok *k,
                                 int shared, struct cd_http_resp *rs)
{
	const char *pol = k->policy[0] ? k->policy : f->policy;
	struct fsession *x = NULL;
	struct fsess *b = NULL;
	struct flimits lim;
	size_t i, mine = 0, slot = FRONT_SESSIONS_MAX;
	int first;

	front_limits(f, pol, k->agent, &lim);
	pthread_mutex_lock(&f->mu);
	for (i = 0; i < FRONT_SESSIONS_MAX; i++) {
		struct fsession *o = f->sess[i];
		if (o && !strcmp(o->agent, k->agent)) {
			mine++;
			if (shared == 1 && o->shared && !b && !strcmp(o->policy, pol) &&
			    joinable(o->b))
				fsess_get(b = o->b);
		} else if (!o && slot == FRONT_SESSIONS_MAX) {
			slot = i;
		}
	}
	if (mine >= lim.max_sessions || slot == FRONT_SESSIONS_MAX) {
		char why[96];
		pthread_mutex_unlock(&f->mu);
		fsess_put(b);
		snprintf(why, sizeof why, "too many sessions for this agent (max_sessions %u, %s)",
		         lim.max_sessions, lim.sessions_src);
		record_refused(f, rq, "session-refused", k->agent, k->id,
		               mine >= lim.max_sessions ? why : "too many sessions");
		cd_http_resp_text(rs, 429, "too many sessions for this agent\n");
		return NULL;
	}
	/* A shared instance starts once (its first session's initialize),
	 * under f->mu: the others join it, started or starting. */
	first = !b;
	if (!b)
		b = fsess_new(k->agent, k->id);
	if (b)
		x = fsession_new(k->agent, k->id, pol, b);
	if (!x || random_id(x->id) < 0) {
		pthread_mutex_unlock(&f->mu);
		if (x)
			fsession_put(x);
		else
			fsess_put(b);
		cd_http_resp_text(rs, 500, "out of memory\n");
		return NULL;
	}
	memcpy(x->hash, k->hash, sizeof x->hash);
	x->shared = shared == 1;
	x->first = first;
	if (x->first) /* before its reader starts */
		b->shared = x->shared;
	f->sess[slot] = x;
	fsession_get(x);
	pthread_mutex_unlock(&f->mu);
	return x;
}

/* A later session of a shared instance: the instance's initialize
 * result, under the client's id. */
static int join_shared(struct front *f, struct fsession *x, json_t *id, struct cd_http_resp *rs)
{
	int64_t deadline = fsess_now_ms() + (int64_t)f->wait_s * 1000;
	struct fsess *b = x->b;
	json_t *a, *v;
	int r;

	/* Its first session may still be starting it: wait for its answer
	 * (init, set once) or its end. */
	pthread_mutex_lock(&b->mu);
	while (!b->init && !b->dead && fsess_now_ms() < deadline)
		fsess_cv_wait(b, 1000);
	a = b->init ? json_deep_copy(b->init) : NULL;
	pthread_mutex_unlock(&b->mu);
	if (!a) {
		cd_http_resp_text(rs, 502, "the shared instance did not start\n");
		return -1;
	}
	v = json_object_get(json_object_get(a, "result"), "protocolVersion");

	snprintf(x->version, sizeof x->version, "%s",
	         json_is_string(v) ? json_string_value(v) : "");
	if (!a || json_object_set(a, "id", id) < 0)
		r = -ENOMEM;
	else if ((r = reply_json(rs, a)) == 0)
		r = cd_http_resp_header(rs, "Mcp-Session-Id", x->id);
	json_decref(a);
	return r;
}

/* `initialize`: a new session of the token's agent, within its limit. */
static int open_session(struct front *f, const struct cd_http_req *rq, const struct tok *k,
                        json_t *msg, json_t *id, struct cd_http_resp *rs)
{
	int shared = policy_shared(f, k->policy[0] ? k->policy : f->policy);
	struct fsession *x = sess_add(f, rq, k, shared, rs);
	struct fwait *w = NULL;
	json_t *v, *out = NULL;
	int r = -1;

	if (!x)
		return 0;
	if (front_record(f, rq, "session-open", k->agent, k->id, x->id, "allow",
	                 x->shared ? (x->first ? "initialize (shared instance, new)"
	                                       : "initialize (shared instance)")
	                           : "initialize",
	                 0) < 0) {
		cd_http_resp_text(rs, 503, "the audit log cannot be written\n");
		goto fail;
	}
	if (!x->first) {
		if (join_shared(f, x, id, rs) < 0)
			goto fail;
		fsession_put(x);
		return 0;
	}
	if (spawn(f, x->b, k) < 0 || !(out = fsession_out(x, msg)) ||
	    !(w = fsess_wait_add(x->b, &x->v, json_object_get(out, "id"), FSESS_BATCH_KEY)) ||
	    fsess_send(x->b, out) < 0 ||
	    (r = fsess_wait(x->b, w, fsess_now_ms() + (int64_t)f->wait_s * 1000, 0)) != 1) {
		cd_http_resp_text(rs, r == 0 ? 504 : 502, "the session's gateway did not start\n");
		goto fail;
	}
	fsession_in(x, w->ans);
	if (!json_object_get(w->ans, "result")) {
		reply_json(rs, w->ans); /* the gateway's refusal */
		goto fail;
	}
	v = json_object_get(json_object_get(w->ans, "result"), "protocolVersion");
	snprintf(x->version, sizeof x->version, "%s",
	         json_is_string(v) ? json_string_value(v) : "");
	if (reply_json(rs, w->ans) < 0 || cd_http_resp_header(rs, "Mcp-Session-Id", x->id) < 0)
		goto fail;
	if (x->shared) { /* the sessions waiting in join_shared go on */
		pthread_mutex_lock(&x->b->mu);
		x->b->init = json_incref(w->ans);
		pthread_cond_broadcast(&x->b->cv);
		pthread_mutex_unlock(&x->b->mu);
	}
	json_decref(out);
	fsess_wait_done(x->b, w, 0);
	fsession_put(x);
	return 0;
fail:
	json_decref(out);
	if (w)
		fsess_wait_done(x->b, w, 0);
	if (x->first && x->shared) /* the sessions joining it fail too */
		fsess_stop(x->b);
	sess_close(f, rq, sess_take(f, x->id, k), "initialize failed");
	fsession_put(x);
	return 0;
}

/* A batch (an array) where the session's version has them (2025-03-26):
 * the gateway splits it and answers with one array (or nothing: 202). */
static int post_batch(struct front *f, struct fsession *x, json_t *msg, struct cd_http_resp *rs)
{
	json_t *el, *out;
	size_t i;

	if (strcmp(x->version, "2025-03-26")) {
		fsession_put(x);
		reply_error(rs, 400, NULL, -32600,
		            "batches exist only in protocol version 2025-03-26");
		return 0;
	}
	json_array_foreach(msg, i, el)
	{
		if (json_object_get(el, "method") && json_object_get(el, "id"))
			return request(f, x, msg, NULL, rs);
	}
	if (!(out = fsession_out(x, msg)) || fsess_send(x->b, out) < 0)
		reply_error(rs, 502, NULL, -32603, "cordon: the session is over");
	else
		cd_http_resp_text(rs, 202, "");
	json_decref(out);
	fsession_put(x);
	return 0;
}

/* A notification or a response (to a server's request): 202.  A later
 * session of a shared instance does not repeat `initialized`. */
static void post_other(struct fsession *x, json_t *msg, struct cd_http_resp *rs)
{
	const char *m = json_string_value(json_object_get(msg, "method"));
	json_t *out = NULL;

	if (!x->first && m && !strcmp(m, "notifications/initialized"))
		cd_http_resp_text(rs, 202, "");
	else if (!(out = fsession_out(x, msg)) || fsess_send(x->b, out) < 0)
		reply_error(rs, 502, NULL, -32603, "cordon: the session is over");
	else
		cd_http_resp_text(rs, 202, "");
	json_decref(out);
	fsession_put(x);
}

/* The tools/call requests in a message or a batch. */
static unsigned tool_calls(json_t *msg)
{
	const char *m = json_string_value(json_object_get(msg, "method"));
	unsigned n = 0;
	json_t *el;
	size_t i;

	if (!json_is_array(msg))
		return m && !strcmp(m, "tools/call");
	json_array_foreach(msg, i, el)
	{
		m = json_string_value(json_object_get(el, "method"));
		n += m && !strcmp(m, "tools/call");
	}
	return n;
}

static int post_mcp(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct front *f = ctx;
	struct flimits lim;
	struct tok k;
	json_t *msg, *id, *meth;
	const char *sid, *m;
	struct fsession *x;
	int r = 0;

	if (authenticate(f, rq, &k, rs) < 0)
		return 0;
	front_limits(f, k.policy[0] ? k.policy : f->policy, k.agent, &lim);
	if (rq->body_len > lim.max_request) {
		char why[96];
		snprintf(why, sizeof why, "request too large (max_request %zu, %s)",
		         lim.max_request, lim.request_src);
		record_refused(f, rq, "request-refused", k.agent, k.id, why);
		cd_http_resp_text(rs, 413, "request too large\n");
		return 0;
	}
	msg = json_loadb(rq->body, rq->body_len, 0, NULL);
	if (!json_is_object(msg) && !(json_is_array(msg) && json_array_size(msg))) {
		json_decref(msg);
		reply_error(rs, 400, NULL, -32700, "Bad Request: a JSON-RPC message per POST");
		return 0;
	}
	id = json_object_get(msg, "id");
	meth = json_object_get(msg, "method");
	m = json_string_value(meth);
	sid = cd_http_header(rq, "Mcp-Session-Id");
	if (m && !strcmp(m, "initialize")) {
		if (sid || !id)
			cd_http_resp_text(rs, 400, "Bad Request: initialize opens a new session\n");
		else
			r = open_session(f, rq, &k, msg, id, rs);
		json_decref(msg);
		return r;
	}
	if (!sid) {
		json_decref(msg);
		cd_http_resp_text(rs, 400, "Bad Request: Mcp-Session-Id required\n");
		return 0;
	}
	if (!(x = sess_find(f, rq, sid, &k))) {
		json_decref(msg);
		cd_http_resp_text(rs, 404, "no such session\n");
		return 0;
	}
	if (!front_calls_ok(f, k.agent, tool_calls(msg), lim.max_cpm)) {
		char why[96];
		snprintf(why, sizeof why, "too many tool calls (max_calls_per_minute %u, policy)",
		         lim.max_cpm);
		record_refused(f, rq, "request-refused", k.agent, k.id, why);
		reply_error(rs, 429, json_is_object(msg) ? id : NULL, -32000,
		            "cordon: too many tool calls for this agent this minute");
		fsession_put(x);
		json_decref(msg);
		return 0;
	}
	if (json_is_array(msg))
		r = post_batch(f, x, msg, rs);
	else if (meth && id)
		r = request(f, x, msg, id, rs);
	else
		post_other(x, msg, rs);
	json_decref(msg);
	return r;
}

/* A request the HTTP server refused before us (413 over --max-request):
 * recorded when its token names an agent. */
static void refused(void *ctx, const struct cd_http_req *rq, int status)
{
	struct front *f = ctx;
	struct cd_http_resp rs;
	struct tok k;
	char why[96];

	if (status == 408) { /* cut before its headers were complete: no agent */
		snprintf(why, sizeof why, "request not complete within %us (--request-deadline)",
		         f->request_s);
		record_refused(f, rq, "request-refused", NULL, NULL, why);
		return;
	}
	if (status != 413)
		return;
	memset(&rs, 0, sizeof rs);
	cd_buf_init(&rs.body, 4096);
	snprintf(why, sizeof why, "request too large (over %zu, the largest max_request)",
	         f->ceiling);
	if (authenticate(f, rq, &k, &rs) == 0)
		record_refused(f, rq, "request-refused", k.agent, k.id, why);
	cd_buf_release(&rs.body);
}

static int delete_mcp(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct front *f = ctx;
	struct tok k;
	const char *sid;
	struct fsession *x;

	if (authenticate(f, rq, &k, rs) < 0)
		return 0;
	sid = cd_http_header(rq, "Mcp-Session-Id");
	if (!sid || !(x = sess_take(f, sid, &k))) {
		cd_http_resp_text(rs, 404, "no such session\n");
		return 0;
	}
	/* Requests and streams in flight see the session end. */
	sess_close(f, rq, x, "DELETE");
	cd_http_resp_text(rs, 200, "session ended\n");
	return 0;
}

/* The GET stream: the session's events no POST carries, from after
 * Last-Event-ID when given. */
static int get_mcp(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct front *f = ctx;
	const char *sid, *lei;
	struct fsession *x;
	struct tok k;
	uint64_t last = 0;

	if (authenticate(f, rq, &k, rs) < 0)
		return 0;
	sid = cd_http_header(rq, "Mcp-Session-Id");
	lei = cd_http_header(rq, "Last-Event-ID");
	if (!sid) {
		cd_http_resp_text(rs, 400, "Bad Request: Mcp-Session-Id required\n");
		return 0;
	}
	if (lei && cd_parse_u64(lei, strlen(lei), UINT64_MAX, &last) < 0) {
		cd_http_resp_text(rs, 400, "Bad Request: Last-Event-ID is not one of ours\n");
		return 0;
	}
	if (!(x = sess_find(f, rq, sid, &k))) {
		cd_http_resp_text(rs, 404, "no such session\n");
		return 0;
	}
	if (fstream_get(x, last, lei != NULL, rs) < 0) {
		fsession_put(x);
		return -ENOMEM;
	}
	return 0;
}

static const struct cd_http_route routes[] = {
	{ "POST", "/mcp", post_mcp },
	{ "DELETE", "/mcp", delete_mcp },
	{ "GET", "/mcp", get_mcp },
};

/* ---- the command ------------------------------------------------------- */

/* The Host values and Origins accepted: the address itself, and
 * localhost on a loopback address (filled once the port is known). */
static void front_names(struct front *f, const char *addr, uint16_t port)
{
	const char *scheme = f->tls ? "https" : "http";
	size_t n = 0, i;

	if (strchr(addr, ':'))
		snprintf(f->hostbuf[n++], sizeof f->hostbuf[0], "[%s]:%u", addr, port);
	else
		snprintf(f->hostbuf[n++], sizeof f->hostbuf[0], "%s:%u", addr, port);
	if (cd_http_addr_loopback(addr) == 1)
		snprintf(f->hostbuf[n++], sizeof f->hostbuf[0], "localhost:%u", port);
	for (i = 0; i < n; i++)
		snprintf(f->origins[i], sizeof f->origins[0], "%s://%s", scheme, f->hostbuf[i]);
	if (f->origin_opt)
		snprintf(f->origins[n], sizeof f->origins[0], "%s", f->origin_opt);
	/* hosts[] held only a placeholder no Host equals until now: no
	 * request was taken before the port was known. */
	for (i = 0; i < n; i++)
		f->hosts[i] = f->hostbuf[i];
}

int mcp_front_cmd(int argc, char **argv)
{
	struct front f;
	struct cd_httpd_conf c;
	struct cd_httpd *h = NULL;
	struct cd_err err = { 0, "" };
	char addr[256];
	struct timespec sweep = { FRONT_SWEEP_S, 0 };
	sigset_t set;
	size_t i;
	int r, sig, rc = CD_EXIT_CORDON;

	memset(&f, 0, sizeof f);
	f.max_sessions = 8;
	f.max_request = 1u << 20;
	f.wait_s = 660;
	f.idle_ms = 30 * 60 * 1000;
	f.request_s = CD_HTTPD_REQUEST_S;
	if ((r = front_args(argc, argv, &f)) >= 0)
		return r;
	memset(&c, 0, sizeof c);
	if (cd_http_parse_listen(f.listen, addr, sizeof addr, &c.port) < 0) {
		cli_errorf("--listen '%s': write ADDR:PORT or [V6]:PORT", f.listen);
		return CD_EXIT_USAGE;
	}
	if (mcp_open_state(f.state_opt, &f.state) < 0)
		return CD_EXIT_CORDON;
	if (cli_audit_open(f.audit, &f.log) < 0) {
		cd_state_close(f.state);
		return CD_EXIT_CORDON;
	}
	pthread_mutex_init(&f.mu, NULL);
	pthread_mutex_init(&f.amu, NULL);
	pthread_mutex_init(&f.lmu, NULL);
	f.ceiling = f.max_request;
	f.ceiling = front_ceiling(&f);
	f.tls = f.cert != NULL;
	/* A placeholder no Host header can equal until the port is known. */
	f.hosts[0] = "\001";
	c.addr = addr;
	c.tls_cert = f.cert;
	c.tls_key = f.key;
	c.max_body = f.ceiling;
	c.hosts = f.hosts;
	c.routes = routes;
	c.nroutes = sizeof routes / sizeof routes[0];
	c.ctx = &f;
	c.refused = refused;
	c.timeout_s = f.wait_s + 30;
	c.request_s = f.request_s;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (cd_httpd_start(&c, &h, &err) < 0) {
		cli_errorf("%s", err.msg);
		goto out;
	}
	front_names(&f, addr, cd_httpd_port(h));
	fprintf(stderr, "cordon mcp: listening on %s/mcp\n", f.origins[0]);
	/* SIGHUP: every session reloads its policy (as a stdio gateway
	 * does); INT, TERM: the end. */
	while ((sig = sigtimedwait(&set, NULL, &sweep)) == SIGHUP || sig < 0) {
		if (sig < 0) { /* a tick: tokens revoked or expired, idle sessions */
			sess_sweep(&f);
			continue;
		}
		front_limits_reload(&f);
		pthread_mutex_lock(&f.mu);
		for (i = 0; i < FRONT_SESSIONS_MAX; i++)
			if (f.sess[i] && f.sess[i]->b->pid > 0)
				kill(f.sess[i]->b->pid, SIGHUP);
		pthread_mutex_unlock(&f.mu);
	}
	fprintf(stderr, "cordon mcp: stopping (%s)\n", strsignal(sig));
	rc = CD_EXIT_OK;
out:
	cd_httpd_stop(h);
	for (i = 0; i < FRONT_SESSIONS_MAX; i++)
		if (f.sess[i])
			sess_close(&f, NULL, f.sess[i], "the front stopped");
	cd_state_close(f.state);
	if (f.log)
		cd_audit_sync(f.log, &err);
	cd_audit_close(f.log);
	front_limits_free(&f);
	pthread_mutex_destroy(&f.mu);
	pthread_mutex_destroy(&f.amu);
	pthread_mutex_destroy(&f.lmu);
	return rc;
}
