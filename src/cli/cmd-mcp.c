/* cmd-mcp.c — `cordon mcp`: the MCP gateway front end, and `cordon mcp
 * pins` for the operator (cmd-mcp-pins.c).
 *
 * The gateway speaks newline-delimited JSON-RPC on its own stdin/stdout
 * toward the client and on pipes toward the tool server; the decisions are
 * the library's (src/lib/mcp-gw.c), this file only moves bytes, keeps the
 * server's life tied to the session, and turns gateway events into audit
 * records and pins.  Diagnostics never go to stdout (it is the protocol).
 *
 * The server is started as `/proc/self/exe run --policy F --agent A
 * --tool NAME -- CMD...` rather than by calling the sandbox library here:
 * the launch is then one ordinary decided, recorded run (its grant names
 * the profile, `cordon run` refuses options that would widen it), with the
 * same plan checks, walls, limits, signal forwarding and run.intent /
 * run.result records as every other command, and the gateway process
 * itself keeps no sandbox state.  A forked copy of this process would also
 * inherit the open audit and state databases; exec does not.
 */
#include "cli.h"

#include "cli-audit.h"
#include "cmd-mcp.h"
#include "cmd-mcp-int.h"
#include "gate/gate-approval.h"
#include "gate/gate-mcp.h"
#include "mcp/mcp-pins.h"
#include "mcp/mcp.h"
#include "util/num.h"
#include "util/path.h"
#include "policy/policy.h"
#include "sandbox/profile.h"
#include "policy/temp-grant.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SHUTDOWN_GRACE_MS 2000

void mcp_usage(FILE *f)
{
	fprintf(f,
	        "usage: cordon mcp --policy FILE --agent ID [--task ID] [--server NAME]\n"
	        "                  [--audit PATH] [--state PATH] [--cwd DIR]\n"
	        "                  [--approval-timeout DUR] [--secret NAME:FILE]\n"
	        "                  [-- CMD [ARG...]]\n"
	        "       cordon mcp --listen ADDR:PORT --policy FILE [--server NAME]\n"
	        "                  [--max-sessions N] [--max-request SIZE] [--allow-origin O]\n"
	        "                  [--session-idle DUR] [--request-deadline DUR]\n"
	        "                  [--tls-cert PEM --tls-key PEM] [-- CMD [ARG...]]\n"
	        "       cordon mcp token add --agent ID [--policy FILE] [--expires DUR]\n"
	        "       cordon mcp token list | revoke ID\n"
	        "       cordon mcp pins list [--server NAME] [--state PATH] [--json]\n"
	        "       cordon mcp pins approve --server NAME (--all | TOOL...) [--sha256 HEX] "
	        "[--key FILE]\n"
	        "                  [--state PATH] [--audit PATH]\n"
	        "       cordon mcp pins diff --server NAME TOOL [--state PATH]\n"
	        "\n"
	        "An MCP gateway: JSON-RPC on stdin/stdout toward the agent's client, and toward\n"
	        "the tool server CMD, which runs in a cordon run sandbox decided as action\n"
	        "execute on tool NAME with CMD as argv (the grant's profile is the sandbox).\n"
	        "The agent sees only the tools it is granted whose pinned definitions are\n"
	        "approved; every tools/call is decided against the policy (tool NAME/TOOL, the\n"
	        "arguments typed by the policy's inventory) and recorded; a denied call is a\n"
	        "tool result with isError and \"denied by policy: ...\", never sent to the\n"
	        "server.  A call whose grant needs approval is held (other messages keep\n"
	        "flowing) until 'cordon approvals approve' (or its approver rule) lets it\n"
	        "through; denied or unanswered, it is an isError result.  The client's roots\n"
	        "and sampling capabilities are not passed on.\n"
	        "\n"
	        "A server whose policy tool gives url: is remote (no CMD): cordon speaks\n"
	        "Streamable HTTP to it, to the one address it vetted as the egress proxy\n"
	        "does (each connection recorded), and sends the tool's secret: as the\n"
	        "Authorization header, never shown to the client nor recorded.\n"
	        "\n"
	        "Options:\n"
	        "  --policy FILE    the grant matrix (required)\n"
	        "  --agent ID       the agent every decision names (required)\n"
	        "  --task ID        the task, when calls belong to one\n"
	        "  --server NAME    the server's name in the policy's tools (default: the\n"
	        "                   one MCP server the policy names)\n"
	        "  --audit PATH     the audit log (default $CORDON_AUDIT, else\n"
	        "                   $XDG_STATE_HOME/cordon/audit.db); no log, no call\n"
	        "  --state PATH     the state database with the pins and the live break-glass\n"
	        "                   and delegated grants, which join the policy (default\n"
	        "                   $CORDON_STATE, else $XDG_STATE_HOME/cordon/state.db); never\n"
	        "                   visible to the sandbox\n"
	        "  --cwd DIR        the server's working directory, visible to its sandbox\n"
	        "                   read-only (default: cordon's, which an MCP client may\n"
	        "                   set to anything: name one)\n"
	        "  --approval-timeout DUR  how long a held call waits (default 10m)\n"
	        "  --secret NAME:FILE  the value of the remote server's secret NAME (default:\n"
	        "                   cordon's environment variable NAME)\n"
	        "  -h, --help       this text\n"
	        "\n"
	        "--listen: Streamable HTTP at /mcp for many agents; each request's bearer\n"
	        "token (cordon mcp token add) names its agent (no --agent); without a token\n"
	        "in force: 401; a foreign Origin: 403.  Each session is its own gateway\n"
	        "process with its own server (one per agent when the server's tool says\n"
	        "shared: true).  An answer comes as JSON, or as an event stream when the\n"
	        "server sends messages before it or it takes over 10 s; GET opens the\n"
	        "session's stream (Last-Event-ID resumes it).  Batches: 2025-03-26 only.\n"
	        "A session is its token's alone; a revoked or expired token's sessions close\n"
	        "(within 5 s), and so does one idle for --session-idle (default 30m).\n"
	        "--max-sessions (default 8) and --max-request (default 1M) hold for agents\n"
	        "whose policy entry sets no mcp_front: {max_sessions, max_request,\n"
	        "max_calls_per_minute}; a request not in whole within --request-deadline\n"
	        "(default 30s) is cut.\n"
	        "\n"
	        "pins: list the pinned definitions (approved, pending, superseded); approve the\n"
	        "newest pending definition of each TOOL (or --all, or one --sha256); diff the\n"
	        "approved definition of TOOL with its newest pending one.\n"
	        "\n"
	        "Exit status: 0 when the client ended the session, 125 when cordon refused or\n"
	        "failed (one line on stderr), 2 usage; pins: 0 (also approve --all with nothing\n"
	        "pending: it says so), 1 a named TOOL had nothing to approve, 2 usage.\n");
}

/* ---- paths ------------------------------------------------------------- */

int mcp_open_state(const char *opt, struct cd_state **ret)
{
	char path[CD_PATH_MAX];
	struct cd_err err = { 0, "" };

	if (cli_state_path(opt, path, sizeof path) < 0) {
		cli_errorf("no state database: pass --state PATH or set CORDON_STATE");
		return -1;
	}
	if (cd_state_open(path, ret, &err) < 0) {
		cli_errorf("%s", err.msg);
		return -1;
	}
	return 0;
}

/* ---- the session -------------------------------------------------------- */

static int64_t mono_ms(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int ev_record(void *ctx, const struct cd_mcp_event *ev)
{
	struct session *s = ctx;
	struct cd_err err = { 0, "" };
	int r;

	/* A result is recorded once the response queued for the client has
	 * been written to it: the agent does not wait for the record's
	 * transaction (the intent before it is durable already; an error
	 * writing here is the main loop's to notice). */
	if (ev->kind == CD_MCP_EV_RESULT)
		(void)mcp_flush(STDOUT_FILENO, cd_mcp_gw_to_client(s->gw));
	r = cd_gate_mcp_event(&s->gate, s->run_id, s->agent, s->task, ev, &err);

	if (r < 0)
		cli_errorf("audit: %s", err.msg);
	return r;
}

static int ev_pin(void *ctx, const char *tool, const char *sha256, const char *canonical,
                  enum cd_mcp_pin *ret)
{
	struct session *s = ctx;
	struct cd_err err = { 0, "" };
	int inserted = 0, shadowed = 0;
	char why[320];
	const char *pinned = cd_mcp_policy_pin(s->policy, s->server, tool);

	/* A pin in the policy decides: that definition and no other. */
	if (pinned) {
		*ret = strcmp(pinned, sha256) == 0 ? CD_MCP_PIN_APPROVED : CD_MCP_PIN_CHANGED;
		if (*ret != CD_MCP_PIN_APPROVED &&
		    cd_gate_mcp_pin(&s->gate, s->run_id, s->agent, s->server, tool, sha256,
		                    "changed", 0, &err) < 0) {
			cli_errorf("audit: %s", err.msg);
			return -1;
		}
		return 0;
	}

	if (cd_mcp_pin_check(s->state, s->policy, s->agent, s->server, tool, sha256, canonical,
	                     (int64_t)time(NULL), ret, &inserted, &shadowed, why, sizeof why,
	                     &err) < 0) {
		cli_errorf("pins: %s", err.msg);
		return -1;
	}
	if (why[0])
		cli_warnf("the approved definition of tool '%s/%s' is not taken: %s", s->server,
		          tool, why);
	if (inserted && *ret != CD_MCP_PIN_APPROVED &&
	    cd_gate_mcp_pin(&s->gate, s->run_id, s->agent, s->server, tool, sha256,
	                    cd_mcp_pin_name(*ret), shadowed, &err) < 0) {
		cli_errorf("audit: %s", err.msg);
		return -1;
	}
	return 0;
}

/* Where a path argument really leads on the host: the deepest existing
 * ancestor resolved, the rest appended (a file to be created). */
static int resolve_path(void *ctx, const char *path, char *out, size_t outlen)
{
	char tmp[CD_PATH_MAX], *slash, *real;
	size_t n = strlen(path);
	int k;

	(void)ctx;
	if (n >= sizeof tmp || path[0] != '/')
		return -EINVAL;
	memcpy(tmp, path, n + 1);
	for (;;) {
		real = realpath(tmp, NULL);
		if (real)
			break;
		if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
		slash = strrchr(tmp, '/');
		if (!slash || slash == tmp)
			return -ENOENT;
		*slash = '\0';
	}
	k = snprintf(out, outlen, "%s%s", strcmp(real, "/") ? real : "", path + strlen(tmp));
	free(real);
	return k > 0 && (size_t)k < outlen ? 0 : -ENAMETOOLONG;
}

static int64_t wall_s(void *ctx)
{
	(void)ctx;
	return (int64_t)time(NULL);
}

/* A break-glass or delegated grant is used: still in force in the state
 * database (a revoke during the session ends it at once), and counted. */
static int ev_temp_use(void *ctx, const char *grant_id, int64_t now)
{
	struct session *s = ctx;
	struct cd_err err = { 0, "" };
	int r;

	if (!s->state)
		return -EIO;
	r = cd_temp_use_active(s->state, grant_id, now, &err);
	if (r == -CD_E_DENIED)
		return cd_policy_temp_drop(s->policy, grant_id) == 0 ? r : -EIO;
	if (r < 0)
		cli_warnf("%s", err.msg);
	return r;
}

static const struct cd_mcp_gw_ops gw_ops = {
	.record = ev_record,
	.pin = ev_pin,
	.resolve = resolve_path,
	.now_ms = mono_ms,
	.wall_s = wall_s,
	.temp_use = ev_temp_use,
	.approval_request = mcp_approval_request,
	.approval_poll = mcp_approval_poll,
	.approval_withdraw = mcp_approval_withdraw,
};

/* The launch decision, made here once more to learn the profile, so the
 * state database and the audit log can be checked to be out of the
 * sandbox's reach (cordon run decides it again and records it). */
static int check_reach(struct session *s)
{
	struct cd_request rq;
	struct cd_decision d;
	const struct cd_profile_setting *set = NULL;
	char state[CD_PATH_MAX], audit[CD_PATH_MAX], cwd[CD_PATH_MAX];
	const char *secret[2] = { state, audit };
	size_t nset = 0, i, j, k, argc = 0;
	int inpolicy = 0;

	while (s->cmd[argc])
		argc++;
	cd_request_init(&rq);
	rq.agent = s->agent;
	rq.task = s->task;
	rq.tool = s->server;
	rq.action = CD_ACTION_EXECUTE;
	rq.argv = (const char *const *)s->cmd;
	rq.argc = argc;
	rq.now = (int64_t)time(NULL);
	cd_policy_decide(s->policy, &rq, &d, NULL);
	if (d.verdict != CD_VERDICT_ALLOW) {
		cli_errorf("the server may not start: %s (a grant of action execute on tool '%s' "
		           "with scope.argv is its launch grant)",
		           d.verdict == CD_VERDICT_DENY ? d.reason : "the launch needs approval",
		           s->server);
		return -1;
	}
	if (cd_mask_rules_active(&d.mask) || d.nfield_lists) {
		/* Masking holds a command's output until it ends: a server's
		 * whole session.  The grants on its tools mask their results. */
		cli_errorf("the server may not start: its launch grant masks or scopes output, "
		           "which would hold the server's answers until it ends (put mask: and "
		           "fields: on the grants of its tools)");
		return -1;
	}
	if (cli_state_local(s->state_opt, state, sizeof state) < 0 ||
	    cli_audit_local(s->audit_opt, audit, sizeof audit) < 0 ||
	    !(s->cwd_opt ? realpath(s->cwd_opt, cwd) : getcwd(cwd, sizeof cwd))) {
		cli_errorf("cannot resolve the state, audit or working directory paths");
		return -1;
	}
	if (d.profile)
		inpolicy = cd_policy_profile(s->policy, d.profile, &set, &nset) == 0;
	/* The output limit cordon run would enforce on a relayed stdout (the
	 * same profile: strict, then the grant's). */
	{
		struct cd_sandbox_profile prof;
		struct cd_err perr = { 0, "" };

		if (cd_profile_builtin("strict", &prof, &perr) < 0 ||
		    (d.profile && !inpolicy && cd_profile_builtin(d.profile, &prof, &perr) < 0) ||
		    cd_profile_apply(&prof, set, nset, &perr) < 0) {
			cli_errorf("the server's profile '%s': %s",
			           d.profile ? d.profile : "strict", perr.msg);
			return -1;
		}
		s->out_limit = prof.limits.output_limit;
	}
	for (k = 0; k < 2; k++) {
		if (cd_path_is_under(secret[k], cwd)) {
			cli_errorf("'%s' is under the working directory '%s', which the server's "
			           "sandbox sees: pass --cwd DIR (a directory not above it)",
			           secret[k], cwd);
			return -1;
		}
		for (i = 0; i < nset; i++) {
			if (strcmp(set[i].key, "ro") && strcmp(set[i].key, "rw"))
				continue;
			for (j = 0; j < set[i].nvalues; j++) {
				char src[CD_PATH_MAX];
				const char *v = set[i].values[j], *c = strrchr(v, ':');
				size_t len = c && c[1] == '/' ? (size_t)(c - v) : strlen(v);
				if (len >= sizeof src)
					continue;
				memcpy(src, v, len);
				src[len] = '\0';
				if (cd_path_is_under(secret[k], src)) {
					cli_errorf("profile '%s' binds '%s', which holds '%s': the "
					           "sandbox must never see cordon's state",
					           d.profile, src, secret[k]);
					return -1;
				}
			}
		}
	}
	return 0;
}

static int spawn_server(struct session *s)
{
	struct cli_spawn sp = { .policy = s->policy_path,
		                .agent = s->agent,
		                .task = s->task,
		                .tool = s->server,
		                .audit = s->audit_opt,
		                .state = s->state_opt,
		                .cwd = s->cwd_opt,
		                .cmd = s->cmd,
		                .direct = 1 };

	return cli_spawn_run(&sp, &s->child, &s->to_srv, &s->from_srv, &s->err_srv);
}

int mcp_on_client_line(void *ctx, const char *line, size_t len, int status)
{
	struct session *s = ctx;
	int r = status < 0 ? cd_mcp_gw_client_too_long(s->gw)
	                   : cd_mcp_gw_from_client(s->gw, line, len);
	return r < 0 ? r : 0;
}

static int on_server_line(void *ctx, const char *line, size_t len, int status)
{
	struct session *s = ctx;
	int r = status < 0 ? cd_mcp_gw_server_too_long(s->gw)
	                   : cd_mcp_gw_from_server(s->gw, line, len);
	return r < 0 ? r : 0;
}

/* Write what we can of b to fd; 0, or -1 when the peer is gone. */
int mcp_flush(int fd, struct cd_buf *b)
{
	while (b->len) {
		ssize_t w = write(fd, b->data, b->len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return 0;
		if (w <= 0)
			return -1;
		cd_mcp_gw_consumed(b, (size_t)w);
	}
	return 0;
}

/* The server's stderr is drained here, never left to block it, and passed
 * to ours only when ours can take it now (some clients never read it). */
static void drain_stderr(struct session *s)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(s->err_srv, buf, sizeof buf)) > 0) {
		struct pollfd p = { .fd = STDERR_FILENO, .events = POLLOUT };
		if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT))
			(void)!write(STDERR_FILENO, buf, (size_t)n);
	}
	if (n == 0) {
		close(s->err_srv);
		s->err_srv = -1;
	}
}

static int reap(struct session *s, int timeout_ms)
{
	int64_t end = mono_ms(NULL) + timeout_ms;
	int st;

	while (s->child > 0) {
		pid_t w = waitpid(s->child, &st, WNOHANG);
		if (w == s->child || (w < 0 && errno != EINTR)) {
			s->child = 0;
			return 0;
		}
		if (mono_ms(NULL) >= end)
			return -1;
		usleep(10000);
	}
	return 0;
}

/* The session is over: the server gets EOF, then SIGTERM, then SIGKILL
 * (cordon run forwards the first and kills its whole sandbox on the
 * second), each after a grace period, as MCP clients do. */
static void stop_server(struct session *s, int now)
{
	if (s->to_srv >= 0) {
		close(s->to_srv);
		s->to_srv = -1;
	}
	if (s->child <= 0)
		return;
	if (!now && reap(s, SHUTDOWN_GRACE_MS) == 0)
		return;
	kill(s->child, SIGTERM);
	if (reap(s, SHUTDOWN_GRACE_MS) == 0)
		return;
	kill(s->child, SIGKILL);
	reap(s, 60000);
}

static int signals(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* SIGHUP: load the policy file again.  A file that does not load is
 * refused and the last good policy stays in force (THREATS row 37); both
 * are policy.load records.  -1 only when the gateway cannot go on. */
int mcp_reload_policy(struct session *s)
{
	struct cd_policy *np = NULL, *old = s->policy;
	struct cd_err err = { 0, "" }, rerr = { 0, "" };
	int64_t now = (int64_t)time(NULL);

	if (cd_policy_load_file(s->policy_path, &np, &err) < 0) {
		cli_warnf("policy reload refused, the last good policy stays: %s", err.msg);
		if (cd_gate_policy_load(s->audit, s->run_id, s->policy_path, NULL, err.msg, 0,
		                        &rerr) < 0)
			cli_errorf("%s", rerr.msg);
		return 0;
	}
	if (cd_gate_policy_load(s->audit, s->run_id, s->policy_path, np, NULL, 0, &rerr) < 0) {
		cli_errorf("%s", rerr.msg);
		cd_policy_free(np);
		return 0; /* not on the record: not in force */
	}
	/* The live break-glass and delegated grants join the new policy, as
	 * they joined the first. */
	if (cli_temp_join(s->state, s->audit, np, now) < 0) {
		cli_warnf("policy reload refused, the last good policy stays: the temporary "
		          "grants could not be read");
		cd_policy_free(np);
		return 0;
	}
	if (cd_mcp_gw_set_policy(s->gw, np, now) < 0) {
		cd_policy_free(np);
		return -1;
	}
	s->policy = np;
	s->gate.policy = np;
	s->gate.now = now;
	cd_policy_free(old);
	return 0;
}

/* The server's stdout past its profile's output_limit: what fits is
 * kept (*n shrinks), the rest is never read, the session's record says
 * why and the server is stopped, as cordon run stops a relayed stream. */
static int over_limit(struct session *s, ssize_t *n)
{
	struct cd_mcp_event ev;
	struct cd_err err = { 0, "" };
	char why[160];

	if (!s->out_limit || s->out_bytes + (uint64_t)*n <= s->out_limit) {
		s->out_bytes += (uint64_t)*n;
		return 0;
	}
	*n = (ssize_t)(s->out_limit - s->out_bytes);
	s->out_bytes = s->out_limit;
	snprintf(why, sizeof why,
	         "the server's output passed its profile's output_limit (%llu bytes): stopped",
	         (unsigned long long)s->out_limit);
	memset(&ev, 0, sizeof ev);
	ev.kind = CD_MCP_EV_PROTOCOL;
	ev.direction = "server";
	ev.verdict = "deny";
	ev.reason = why;
	if (cd_gate_mcp_event(&s->gate, s->run_id, s->agent, s->task, &ev, &err) < 0)
		cli_errorf("audit: %s", err.msg);
	cli_errorf("%s", why);
	s->over_limit = 1;
	if (s->child > 0)
		kill(s->child, SIGTERM); /* cordon run passes it to the sandbox */
	return 1;
}

static int relay(struct session *s, int sfd)
{
	struct cd_buf *toc = cd_mcp_gw_to_client(s->gw), *tos = cd_mcp_gw_to_server(s->gw);
	int client_open = 1, server_open = 1;
	char buf[65536];

	fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
	while (client_open || toc->len) {
		struct pollfd p[6];
		int np = 0, ic = -1, is = -1, ie = -1, oc = -1, os = -1, isig;
		ssize_t n;

		p[np] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		isig = np++;
		/* Back-pressure: read a side only while its output is small. */
		if (client_open && tos->len < CD_JSONRPC_LINE_MAX) {
			p[np] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
			ic = np++;
		}
		if (server_open && toc->len < CD_JSONRPC_LINE_MAX) {
			p[np] = (struct pollfd){ .fd = s->from_srv, .events = POLLIN };
			is = np++;
		}
		if (s->err_srv >= 0) {
			p[np] = (struct pollfd){ .fd = s->err_srv, .events = POLLIN };
			ie = np++;
		}
		if (toc->len) {
			p[np] = (struct pollfd){ .fd = STDOUT_FILENO, .events = POLLOUT };
			oc = np++;
		}
		if (tos->len && s->to_srv >= 0) {
			p[np] = (struct pollfd){ .fd = s->to_srv, .events = POLLOUT };
			os = np++;
		}
		if (!server_open && !toc->len)
			break;
		/* Held calls: look at the approval queue five times a second. */
		if (poll(p, (nfds_t)np, cd_mcp_gw_held_approvals(s->gw) ? 200 : -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (cd_mcp_gw_held_approvals(s->gw) && cd_mcp_gw_poll_approvals(s->gw) < 0)
			return -1;
		if (p[isig].revents) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
				if (si.ssi_signo != SIGHUP)
					return 1;
				if (mcp_reload_policy(s) < 0)
					return -1;
			}
		}
		if (ic >= 0 && p[ic].revents) {
			n = read(STDIN_FILENO, buf, sizeof buf);
			if (n > 0) {
				if (cd_jsonrpc_feed(&s->rd_client, buf, (size_t)n,
				                    mcp_on_client_line, s) < 0)
					return -1;
			} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				client_open = 0; /* client EOF: the session ends */
				break;
			}
		}
		if (is >= 0 && p[is].revents) {
			n = read(s->from_srv, buf, sizeof buf);
			if (n > 0 && over_limit(s, &n))
				server_open = 0; /* what fits is still fed below */
			if (n > 0) {
				if (cd_jsonrpc_feed(&s->rd_server, buf, (size_t)n, on_server_line,
				                    s) < 0)
					return -1;
			} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				server_open = 0;
			}
		}
		if (ie >= 0 && p[ie].revents)
			drain_stderr(s);
		if (tos->len && s->to_srv >= 0 && (os < 0 || p[os].revents) &&
		    mcp_flush(s->to_srv, tos) < 0) {
			close(s->to_srv);
			s->to_srv = -1;
			cd_buf_reset(tos);
		}
		if (toc->len && (oc < 0 || p[oc].revents) && mcp_flush(STDOUT_FILENO, toc) < 0)
			return 0; /* the client is gone */
	}
	if (!server_open && client_open && !s->over_limit)
		cli_errorf("the server '%s' ended the session", s->server);
	return s->over_limit ? -2 : 0;
}

/* The options, also for `cordon completion` (cli-complete.c). */
static const struct option gateway_opts[] = {
	{ "policy", required_argument, NULL, 'p' },
	{ "agent", required_argument, NULL, 'a' },
	{ "task", required_argument, NULL, 't' },
	{ "server", required_argument, NULL, 's' },
	{ "audit", required_argument, NULL, 'A' },
	{ "state", required_argument, NULL, 'S' },
	{ "cwd", required_argument, NULL, 'C' },
	{ "approval-timeout", required_argument, NULL, 'T' },
	{ "secret", required_argument, NULL, 'K' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The options and CMD into s: the exit status to leave with (usage,
 * --help), or -1 to go on. */
static int gateway_args(int argc, char **argv, struct session *s)
{
	uint64_t ms;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, "+h", gateway_opts, CD_EXIT_USAGE)) != -1) {
		switch (c) {
		case 'p':
			s->policy_path = optarg;
			break;
		case 'a':
			s->agent = optarg;
			break;
		case 't':
			s->task = optarg;
			break;
		case 's':
			s->server = optarg;
			break;
		case 'A':
			s->audit_opt = optarg;
			break;
		case 'S':
			s->state_opt = optarg;
			break;
		case 'C':
			s->cwd_opt = optarg;
			break;
		case 'T':
			if (cd_parse_duration_ms(optarg, &ms) < 0 || ms < 1000 || ms > 86400000) {
				cli_errorf("--approval-timeout '%s': a duration from 1s to 24h",
				           optarg);
				return CD_EXIT_USAGE;
			}
			s->approval_timeout_s = (int64_t)(ms / 1000);
			break;
		case 'K':
			if (!strchr(optarg, ':')) {
				cli_errorf("--secret NAME:FILE (without FILE, NAME is read from "
				           "cordon's environment)");
				return CD_EXIT_USAGE;
			}
			s->secret_opt = optarg;
			break;
		case 'h':
			mcp_usage(stdout);
			return CD_EXIT_OK;
		default:
			cli_errorf("unknown or incomplete option '%s' (see --help)",
			           argv[optind - 1]);
			return CD_EXIT_USAGE;
		}
	}
	if (!s->policy_path || !s->agent) {
		cli_errorf("usage: cordon mcp --policy FILE --agent ID [--server NAME] [-- CMD "
		           "[ARG...]]");
		return CD_EXIT_USAGE;
	}
	s->cmd = optind < argc ? argv + optind : NULL;
	return -1;
}

/* A launched server needs CMD, a remote one (url:) must have none. */
static int check_server_kind(const struct session *s)
{
	const char *u, *sec;
	int remote = cd_mcp_policy_remote(s->policy, s->server, &u, &sec);

	if (remote != !!s->cmd)
		return 0;
	cli_errorf(remote ? "the MCP server '%s' is remote (url: in the policy): no CMD"
	                  : "usage: cordon mcp ... --server %s -- CMD [ARG...] (the policy gives "
	                    "the server no url:)",
	           s->server);
	return -1;
}

static int gateway(int argc, char **argv)
{
	struct session s;
	struct cd_mcp_gw_config cfg;
	struct cd_err err = { 0, "" };
	int rc = CD_EXIT_CORDON, sfd = -1, r;

	memset(&s, 0, sizeof s);
	s.to_srv = s.from_srv = s.err_srv = -1;
	s.approval_timeout_s = 600;
	if ((r = gateway_args(argc, argv, &s)) >= 0)
		return r;
	if (cd_policy_load_file(s.policy_path, &s.policy, &err) < 0) {
		cli_errorf("policy: %s", err.msg);
		goto out;
	}
	if (!s.server) {
		/* Without --server: the one MCP server the inventory names. */
		int sr = cd_mcp_policy_server(s.policy, s.server_buf, sizeof s.server_buf);
		if (sr < 0) {
			cli_errorf(sr == -EEXIST
			                   ? "the policy names several MCP servers: say which "
			                     "with --server NAME"
			                   : "the policy names no MCP server (a tool of kind "
			                     "mcp): --server NAME names it");
			goto out;
		}
		s.server = s.server_buf;
	}
	if (check_server_kind(&s) < 0) {
		rc = CD_EXIT_USAGE;
		goto out;
	}
	if (cli_audit_open(s.audit_opt, &s.audit) < 0 || mcp_open_state(s.state_opt, &s.state) < 0)
		goto out;
	/* Every allowed call fsyncs an intent: let those fsyncs overwrite the
	 * WAL in place rather than grow it (an optimization only). */
	if (cd_audit_presize_wal(s.audit, &err) < 0)
		cli_warnf("audit: %s", err.msg);
	/* Break-glass and delegated grants join the policy for this session
	 * (the launch grant may be one); then the key, when some grant
	 * (written or temporary) masks. */
	if (cli_temp_join(s.state, s.audit, s.policy, (int64_t)time(NULL)) < 0 ||
	    (s.cmd && check_reach(&s) < 0))
		goto out;
	if (cd_policy_masks(s.policy) && cli_masker_open(&s.masker) < 0)
		goto out;
	if (s.masker && cd_masker_prepare(s.masker, &err) < 0) {
		cli_errorf("masking is unavailable: %s", err.msg);
		goto out;
	}
	if (cd_run_id_new(s.run_id) < 0) {
		cli_errorf("cannot make a session id: no randomness");
		goto out;
	}
	if (cd_gate_policy_load(s.audit, s.run_id, s.policy_path, s.policy, NULL, 1, &err) < 0) {
		cli_errorf("%s", err.msg);
		goto out;
	}
	s.gate.audit = s.audit;
	s.gate.policy = s.policy;
	s.gate.policy_path = s.policy_path;
	s.gate.now = (int64_t)time(NULL);
	s.gate.masker = s.masker;
	memset(&cfg, 0, sizeof cfg);
	cfg.policy = s.policy;
	cfg.agent = s.agent;
	cfg.task = s.task;
	cfg.server = s.server;
	cfg.ops = &gw_ops;
	cfg.ctx = &s;
	cfg.now = s.gate.now;
	cfg.masker = s.masker;
	if (cd_mcp_gw_new(&cfg, &s.gw) < 0) {
		cli_errorf("cannot start the gateway: out of memory or no randomness");
		goto out;
	}
	cd_jsonrpc_reader_init(&s.rd_client, CD_JSONRPC_LINE_MAX);
	cd_jsonrpc_reader_init(&s.rd_server, CD_JSONRPC_LINE_MAX);
	sfd = signals();
	if (sfd < 0) {
		cli_errorf("cannot set up signals: %s", cd_strerror(-errno));
		goto out;
	}
	if ((r = mcp_remote_open(&s)) < 0) {
		goto out;
	} else if (r) {
		r = mcp_remote_relay(&s, sfd);
		mcp_remote_close(&s);
	} else {
		if (spawn_server(&s) < 0)
			goto out;
		r = relay(&s, sfd);
		stop_server(&s, r == 1 || r == -2);
	}
	rc = r < 0 ? CD_EXIT_CORDON : CD_EXIT_OK;
	if (r == -1)
		cli_errorf("the session failed: out of memory or an output buffer past its cap");
out:
	if (s.child > 0)
		stop_server(&s, 1);
	mcp_remote_close(&s);
	if (s.from_srv >= 0)
		close(s.from_srv);
	if (s.err_srv >= 0)
		close(s.err_srv);
	if (sfd >= 0)
		close(sfd);
	cd_jsonrpc_reader_release(&s.rd_client);
	cd_jsonrpc_reader_release(&s.rd_server);
	cd_mcp_gw_free(s.gw);
	cd_masker_free(s.masker);
	cd_state_close(s.state);
	/* Results and refusals were committed lazily: durable before we go. */
	if (s.audit && cd_audit_sync(s.audit, &err) < 0)
		cli_errorf("audit: %s", err.msg);
	cd_audit_close(s.audit);
	cd_policy_free(s.policy);
	return rc;
}

int cmd_mcp(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "pins"))
		return mcp_pins_cmd(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "token"))
		return mcp_token_cmd(argc - 1, argv + 1);
	if (mcp_front_wanted(argc, argv))
		return mcp_front_cmd(argc, argv);
	return gateway(argc, argv);
}
