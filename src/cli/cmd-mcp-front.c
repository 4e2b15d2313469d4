/* cmd-mcp-front.c — `cordon mcp --listen ADDR:PORT`: MCP over Streamable
 * HTTP at /mcp (http/httpd.h), one gateway for many agents.  Each request
 * names its agent by a bearer token (cmd-mcp-token.c; the state database
 * keeps its SHA-256); `initialize` opens a session bound to that agent,
 * and the session is its own `cordon mcp --agent A` process (this binary,
 * the stdio gateway: the same decisions, pins, masking and records, and
 * its own sandboxed server or its own connection to a url: server).  The
 * front only authenticates, carries one JSON-RPC message per POST to the
 * session's stdin and brings the answer back as application/json.
 *
 * Trust boundary: every HTTP peer.  A request without a token in force
 * gets 401 and nothing else; a foreign Origin 403; a session id of
 * another agent is unknown (404).  The agent is never taken from what the
 * client says.  Server-initiated messages have no stream here (GET is
 * 405): the session's notifications are dropped and its requests to the
 * client are answered with an error. */
#include "cli.h"

#include "cli-audit.h"
#include "cmd-mcp.h"
#include "http/httpd.h"
#include "store/state.h"
#include "util/num.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FRONT_SESSIONS_MAX 256
#define FRONT_LINE_MAX     (4 * 1024 * 1024)
#define FRONT_HOSTS        3

struct fsess {
	char id[65];
	char agent[128];
	pid_t pid;
	int to, from;
	char *rbuf; /* bytes read from the session, not yet a line */
	size_t rlen;
	pthread_mutex_t mu; /* one request at a time per session */
	int dead;
};

struct front {
	const char *policy, *server, *audit, *state_opt, *cwd, *cert, *key, *listen;
	const char *origin_opt;
	char **cmd;
	unsigned max_sessions; /* per agent */
	size_t max_request;
	unsigned wait_s; /* for one answer of a session */
	struct cd_state *state;
	pthread_mutex_t mu; /* sessions, and the state connection */
	struct fsess *sess[FRONT_SESSIONS_MAX];
	char hostbuf[FRONT_HOSTS][300];
	const char *hosts[FRONT_HOSTS + 1];
	char origins[FRONT_HOSTS + 1][320];
	int tls;
};

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
	char agent[128];
	char policy[4096];
};

static int tok_cb(const struct cd_agent_token *t, void *ctx)
{
	struct tok *k = ctx;

	if (strlen(t->agent) >= sizeof k->agent ||
	    (t->policy && strlen(t->policy) >= sizeof k->policy))
		return -CD_E_CORRUPT;
	memcpy(k->agent, t->agent, strlen(t->agent) + 1);
	if (t->policy)
		memcpy(k->policy, t->policy, strlen(t->policy) + 1);
	return 0;
}

/* The agent of the request's bearer token: 0, or -1 (401). */
static int authenticate(struct front *f, const struct cd_http_req *rq, struct tok *k)
{
	const char *a = cd_http_header(rq, "Authorization");
	struct cd_store *st = cd_state_store(f->state);
	struct cd_err err = { 0, "" };
	char hash[65];
	int r;

	memset(k, 0, sizeof *k);
	if (!a || strncasecmp(a, "Bearer ", 7) || strlen(a + 7) < 16 || strlen(a + 7) > 256)
		return -1;
	mcp_token_hash(a + 7, hash);
	pthread_mutex_lock(&f->mu);
	r = st->ops->agent_token_find(st, hash, (int64_t)time(NULL), tok_cb, k, &err);
	pthread_mutex_unlock(&f->mu);
	if (r < 0 && r != -ENOENT)
		cli_warnf("token lookup: %s", err.msg);
	return r < 0 || !k->agent[0] ? -1 : 0;
}

static void unauthorized(struct cd_http_resp *rs)
{
	cd_http_resp_text(rs, 401, "unauthorized\n");
	cd_http_resp_header(rs, "WWW-Authenticate", "Bearer");
}

/* ---- sessions: a `cordon mcp` process each ---------------------------- */

static int spawn(struct front *f, struct fsess *s, const struct tok *k)
{
	const char *argv[64];
	int in[2], out[2];
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
	if (pipe2(in, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return -errno;
	}
	s->pid = fork();
	if (s->pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		pthread_sigmask(SIG_SETMASK, &none, NULL);
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
			_exit(125);
		execv("/proc/self/exe", (char **)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (s->pid < 0) {
		close(in[1]);
		close(out[0]);
		return -errno;
	}
	s->to = in[1];
	s->from = out[0];
	return 0;
}

/* End a session's process: stdin closed (the gateway ends its server),
 * then TERM, then KILL. */
static void sess_end(struct fsess *s)
{
	int i, st;

	if (s->to >= 0)
		close(s->to);
	s->to = -1;
	for (i = 0; s->pid > 0 && i < 60; i++) {
		if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
			s->pid = 0;
			break;
		}
		if (i == 40)
			kill(s->pid, SIGTERM);
		usleep(50 * 1000);
	}
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, &st, 0);
	}
	s->pid = 0;
	if (s->from >= 0)
		close(s->from);
	s->from = -1;
}

static void sess_free(struct fsess *s)
{
	if (!s)
		return;
	sess_end(s);
	pthread_mutex_destroy(&s->mu);
	free(s->rbuf);
	free(s);
}

/* Take a session out of the table: the caller ends it. */
static struct fsess *sess_take(struct front *f, const char *id, const char *agent)
{
	struct fsess *s = NULL;
	size_t i;

	pthread_mutex_lock(&f->mu);
	for (i = 0; i < FRONT_SESSIONS_MAX; i++)
		if (f->sess[i] && !strcmp(f->sess[i]->id, id) &&
		    !strcmp(f->sess[i]->agent, agent)) {
			s = f->sess[i];
			f->sess[i] = NULL;
			break;
		}
	pthread_mutex_unlock(&f->mu);
	return s;
}

/* A session of `agent` with `id`, locked; NULL when there is none (an id
 * of another agent's is none). */
static struct fsess *sess_lock(struct front *f, const char *id, const char *agent)
{
	struct fsess *s = NULL;
	size_t i;

	pthread_mutex_lock(&f->mu);
	for (i = 0; i < FRONT_SESSIONS_MAX; i++)
		if (f->sess[i] && !strcmp(f->sess[i]->id, id) && !strcmp(f->sess[i]->agent, agent))
			s = f->sess[i];
	/* Sessions leave the table only under f->mu and are freed after
	 * their own lock is taken: lock it before letting go of the table. */
	if (s)
		pthread_mutex_lock(&s->mu);
	pthread_mutex_unlock(&f->mu);
	return s;
}

/* ---- one message through a session ------------------------------------ */

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int send_line(struct fsess *s, json_t *msg)
{
	char *t = json_dumps(msg, JSON_COMPACT);
	int r;

	if (!t)
		return -1;
	r = write_all(s->to, t, strlen(t)) < 0 || write_all(s->to, "\n", 1) < 0 ? -1 : 0;
	free(t);
	return r;
}

/* The next line from the session into *ret (owned): 1, 0 on timeout, -1
 * when the session is gone or wrote a line past the cap. */
static int read_line(struct fsess *s, int64_t deadline_ms, char **ret)
{
	for (;;) {
		char *nl = s->rbuf ? memchr(s->rbuf, '\n', s->rlen) : NULL;
		struct timespec ts;
		struct pollfd p = { .fd = s->from, .events = POLLIN };
		int64_t now;
		ssize_t n;
		char *nb;

		if (nl) {
			size_t len = (size_t)(nl - s->rbuf);
			if (!(*ret = strndup(s->rbuf, len)))
				return -1;
			memmove(s->rbuf, nl + 1, s->rlen - len - 1);
			s->rlen -= len + 1;
			return 1;
		}
		if (s->rlen >= FRONT_LINE_MAX)
			return -1;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
		if (now >= deadline_ms)
			return 0;
		if (poll(&p, 1, (int)(deadline_ms - now)) <= 0)
			continue;
		if (!(nb = realloc(s->rbuf, s->rlen + 65536)))
			return -1;
		s->rbuf = nb;
		n = read(s->from, s->rbuf + s->rlen, 65536);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		s->rlen += (size_t)n;
	}
}

/* Send msg (a request with `id`) and wait for its answer: 0 with *ret
 * (owned), -ETIMEDOUT, or -EPIPE (the session is over). */
static int exchange(struct front *f, struct fsess *s, json_t *msg, json_t *id, json_t **ret)
{
	struct timespec ts;
	int64_t deadline;

	if (send_line(s, msg) < 0)
		return -EPIPE;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	deadline = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + (int64_t)f->wait_s * 1000;
	for (;;) {
		char *line = NULL;
		int r = read_line(s, deadline, &line);
		json_t *m, *mid, *meth;

		if (r <= 0)
			return r == 0 ? -ETIMEDOUT : -EPIPE;
		m = json_loads(line, 0, NULL);
		free(line);
		if (!json_is_object(m)) {
			json_decref(m);
			continue;
		}
		mid = json_object_get(m, "id");
		meth = json_object_get(m, "method");
		if (!meth && mid && json_equal(mid, id)) {
			*ret = m;
			return 0;
		}
		if (meth && mid) {
			/* A request of the server's: no stream to carry it. */
			json_t *e = json_pack(
			        "{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", mid, "error",
			        "code", -32601, "message",
			        "cordon's HTTP front carries no server-initiated requests");
			if (e)
				send_line(s, e);
			json_decref(e);
		}
		json_decref(m);
	}
}

static int reply_json(struct cd_http_resp *rs, json_t *m)
{
	char *t = json_dumps(m, JSON_COMPACT);

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

/* `initialize`: a new session of the token's agent, within its limit. */
static int open_session(struct front *f, const struct tok *k, json_t *msg, json_t *id,
                        struct cd_http_resp *rs)
{
	struct fsess *s = calloc(1, sizeof *s);
	json_t *ans = NULL;
	size_t i, mine = 0, slot = FRONT_SESSIONS_MAX;
	int r;

	if (!s || random_id(s->id) < 0) {
		free(s);
		return -ENOMEM;
	}
	snprintf(s->agent, sizeof s->agent, "%s", k->agent);
	s->to = s->from = -1;
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_lock(&f->mu);
	for (i = 0; i < FRONT_SESSIONS_MAX; i++) {
		if (f->sess[i] && !strcmp(f->sess[i]->agent, k->agent))
			mine++;
		else if (!f->sess[i] && slot == FRONT_SESSIONS_MAX)
			slot = i;
	}
	if (mine >= f->max_sessions || slot == FRONT_SESSIONS_MAX) {
		pthread_mutex_unlock(&f->mu);
		sess_free(s);
		cd_http_resp_text(rs, 429, "too many sessions for this agent\n");
		return 0;
	}
	f->sess[slot] = s;
	pthread_mutex_lock(&s->mu);
	pthread_mutex_unlock(&f->mu);
	r = spawn(f, s, k);
	if (r == 0)
		r = exchange(f, s, msg, id, &ans);
	if (r == 0 && json_object_get(ans, "result")) {
		r = reply_json(rs, ans);
		if (r == 0)
			r = cd_http_resp_header(rs, "Mcp-Session-Id", s->id);
		json_decref(ans);
		pthread_mutex_unlock(&s->mu);
		if (r == 0)
			return 0;
	} else {
		if (ans)
			reply_json(rs, ans);
		else
			cd_http_resp_text(rs, 502, "the session's gateway did not start\n");
		json_decref(ans);
		pthread_mutex_unlock(&s->mu);
		r = 0;
	}
	sess_free(sess_take(f, s->id, s->agent));
	return r;
}

static int post_mcp(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct front *f = ctx;
	struct tok k;
	json_t *msg, *id, *meth, *ans = NULL;
	const char *sid, *m;
	struct fsess *s;
	int r = 0;

	if (!origin_ok(f, rq)) {
		cd_http_resp_text(rs, 403, "forbidden: origin\n");
		return 0;
	}
	if (authenticate(f, rq, &k) < 0) {
		unauthorized(rs);
		return 0;
	}
	if (rq->body_len > f->max_request) {
		cd_http_resp_text(rs, 413, "request too large\n");
		return 0;
	}
	msg = json_loadb(rq->body, rq->body_len, 0, NULL);
	if (!json_is_object(msg)) {
		json_decref(msg);
		cd_http_resp_text(rs, 400,
		                  "Bad Request: one JSON-RPC message (an object) per POST\n");
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
			r = open_session(f, &k, msg, id, rs);
		json_decref(msg);
		return r;
	}
	if (!sid) {
		json_decref(msg);
		cd_http_resp_text(rs, 400, "Bad Request: Mcp-Session-Id required\n");
		return 0;
	}
	if (!(s = sess_lock(f, sid, k.agent))) {
		json_decref(msg);
		cd_http_resp_text(rs, 404, "no such session\n");
		return 0;
	}
	if (!meth || !id) {
		/* A notification or a response: accepted, nothing to answer. */
		r = send_line(s, msg) < 0 ? -EPIPE : 0;
		if (r == 0)
			cd_http_resp_text(rs, 202, "");
	} else {
		r = exchange(f, s, msg, id, &ans);
		if (r == 0)
			r = reply_json(rs, ans);
		json_decref(ans);
	}
	if (r == -ETIMEDOUT)
		cd_http_resp_text(rs, 504, "the session did not answer in time\n");
	else if (r < 0)
		cd_http_resp_text(rs, 502, "the session is over\n");
	s->dead = r == -EPIPE;
	pthread_mutex_unlock(&s->mu);
	json_decref(msg);
	if (r == -EPIPE)
		sess_free(sess_take(f, sid, k.agent));
	return 0;
}

static int delete_mcp(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct front *f = ctx;
	struct tok k;
	const char *sid;
	struct fsess *s;

	if (!origin_ok(f, rq)) {
		cd_http_resp_text(rs, 403, "forbidden: origin\n");
		return 0;
	}
	if (authenticate(f, rq, &k) < 0) {
		unauthorized(rs);
		return 0;
	}
	sid = cd_http_header(rq, "Mcp-Session-Id");
	if (!sid || !(s = sess_take(f, sid, k.agent))) {
		cd_http_resp_text(rs, 404, "no such session\n");
		return 0;
	}
	/* Wait for a request in flight on it to finish. */
	pthread_mutex_lock(&s->mu);
	pthread_mutex_unlock(&s->mu);
	sess_free(s);
	cd_http_resp_text(rs, 200, "session ended\n");
	return 0;
}

static int get_mcp(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct front *f = ctx;
	struct tok k;

	if (!origin_ok(f, rq)) {
		cd_http_resp_text(rs, 403, "forbidden: origin\n");
		return 0;
	}
	if (authenticate(f, rq, &k) < 0) {
		unauthorized(rs);
		return 0;
	}
	cd_http_resp_text(rs, 405, "no server-initiated stream: POST only\n");
	cd_http_resp_header(rs, "Allow", "POST, DELETE");
	return 0;
}

static const struct cd_http_route routes[] = {
	{ "POST", "/mcp", post_mcp },
	{ "DELETE", "/mcp", delete_mcp },
	{ "GET", "/mcp", get_mcp },
};

/* ---- the command ------------------------------------------------------- */

/* `cordon mcp` with --listen before any "--": the front. */
int mcp_front_wanted(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--listen") || !strncmp(argv[i], "--listen=", 9))
			return 1;
	return 0;
}

static const struct option front_opts[] = {
	{ "listen", required_argument, NULL, 'l' },
	{ "policy", required_argument, NULL, 'p' },
	{ "server", required_argument, NULL, 's' },
	{ "audit", required_argument, NULL, 'A' },
	{ "state", required_argument, NULL, 'S' },
	{ "cwd", required_argument, NULL, 'C' },
	{ "tls-cert", required_argument, NULL, 'c' },
	{ "tls-key", required_argument, NULL, 'k' },
	{ "allow-origin", required_argument, NULL, 'o' },
	{ "max-sessions", required_argument, NULL, 'm' },
	{ "max-request", required_argument, NULL, 'r' },
	{ "agent", required_argument, NULL, 'a' },
	/* The stdio gateway's own (refused with --listen): the table is also
	 * what `cordon mcp` completes. */
	{ "task", required_argument, NULL, 'X' },
	{ "approval-timeout", required_argument, NULL, 'X' },
	{ "secret", required_argument, NULL, 'X' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* `cordon mcp`'s options, stdio and --listen (cli-complete.c). */
const struct option *const cli_opts_mcp = front_opts;

static int front_args(int argc, char **argv, struct front *f)
{
	uint64_t v;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, "+h", front_opts, CD_EXIT_USAGE)) != -1) {
		switch (c) {
		case 'l':
			f->listen = optarg;
			break;
		case 'p':
			f->policy = optarg;
			break;
		case 's':
			f->server = optarg;
			break;
		case 'A':
			f->audit = optarg;
			break;
		case 'S':
			f->state_opt = optarg;
			break;
		case 'C':
			f->cwd = optarg;
			break;
		case 'c':
			f->cert = optarg;
			break;
		case 'k':
			f->key = optarg;
			break;
		case 'o':
			f->origin_opt = optarg;
			break;
		case 'm':
		case 'r':
			if (cd_parse_u64(optarg, strlen(optarg), c == 'm' ? 256 : 16u << 20, &v) <
			            0 ||
			    v < 1) {
				cli_errorf("--%s '%s': out of range",
				           c == 'm' ? "max-sessions" : "max-request", optarg);
				return CD_EXIT_USAGE;
			}
			if (c == 'm')
				f->max_sessions = (unsigned)v;
			else
				f->max_request = (size_t)v;
			break;
		case 'a':
			cli_errorf("--agent is not given with --listen: each request's token names "
			           "its "
			           "agent (cordon mcp token add)");
			return CD_EXIT_USAGE;
		case 'X':
			cli_errorf("--task, --approval-timeout and --secret are not taken with "
			           "--listen");
			return CD_EXIT_USAGE;
		case 'h':
			mcp_usage(stdout);
			return CD_EXIT_OK;
		default:
			cli_errorf("unknown or incomplete option '%s' (see --help)",
			           argv[optind - 1]);
			return CD_EXIT_USAGE;
		}
	}
	if (!f->policy) {
		cli_errorf("usage: cordon mcp --listen ADDR:PORT --policy FILE [--server NAME] [-- "
		           "CMD [ARG...]]");
		return CD_EXIT_USAGE;
	}
	f->cmd = optind < argc ? argv + optind : NULL;
	return -1;
}

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
	sigset_t set;
	size_t i;
	int r, sig, rc = CD_EXIT_CORDON;

	memset(&f, 0, sizeof f);
	f.max_sessions = 8;
	f.max_request = 1u << 20;
	f.wait_s = 660;
	if ((r = front_args(argc, argv, &f)) >= 0)
		return r;
	memset(&c, 0, sizeof c);
	if (cd_http_parse_listen(f.listen, addr, sizeof addr, &c.port) < 0) {
		cli_errorf("--listen '%s': write ADDR:PORT or [V6]:PORT", f.listen);
		return CD_EXIT_USAGE;
	}
	if (mcp_open_state(f.state_opt, &f.state) < 0)
		return CD_EXIT_CORDON;
	pthread_mutex_init(&f.mu, NULL);
	f.tls = f.cert != NULL;
	/* A placeholder no Host header can equal until the port is known. */
	f.hosts[0] = "\001";
	c.addr = addr;
	c.tls_cert = f.cert;
	c.tls_key = f.key;
	c.max_body = f.max_request;
	c.hosts = f.hosts;
	c.routes = routes;
	c.nroutes = sizeof routes / sizeof routes[0];
	c.ctx = &f;
	c.timeout_s = f.wait_s + 30;
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
	while (sigwait(&set, &sig) == 0 && sig == SIGHUP) {
		pthread_mutex_lock(&f.mu);
		for (i = 0; i < FRONT_SESSIONS_MAX; i++)
			if (f.sess[i] && f.sess[i]->pid > 0)
				kill(f.sess[i]->pid, SIGHUP);
		pthread_mutex_unlock(&f.mu);
	}
	fprintf(stderr, "cordon mcp: stopping (%s)\n", strsignal(sig));
	rc = CD_EXIT_OK;
out:
	cd_httpd_stop(h);
	for (i = 0; i < FRONT_SESSIONS_MAX; i++)
		sess_free(f.sess[i]);
	cd_state_close(f.state);
	pthread_mutex_destroy(&f.mu);
	return rc;
}
