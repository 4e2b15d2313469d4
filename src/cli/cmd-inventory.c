/* cmd-inventory.c — `cordon inventory --policy F --config mcp.json`: start
 * each configured MCP server in its sandbox, ask it what it really offers
 * (initialize, tools/list through every page), and print per agent the
 * tools granted, the tools offered but not in the policy (the unknown
 * tools are the ones that cause incidents), the tools the policy names
 * that the server no longer offers, and each server's indirect reach (what
 * its sandbox profile lets it touch).
 *
 * Each tool definition offered is pinned as `cordon mcp` pins it (mcp-pins.h):
 * one not seen before is recorded as pending in the state database the
 * server's session will read, so an operator approves it before the first
 * session; nothing is approved here.
 *
 * Trust boundary: the configuration is the operator's; the server's
 * answers are untrusted (names are checked, escaped when printed, capped
 * in number; definitions are only hashed and stored as data); the server
 * runs under `cordon run --policy`, decided and recorded like any launch,
 * and never sees the state database (cordon run keeps it out).
 *
 * Exit statuses: 0 nothing unknown, 1 a server offers tools the policy does
 * not name or could not be inventoried, 2 usage, 125 cordon could not
 * proceed (a pin or its record not written: the report is still printed). */
#include "cli.h"

#include "util/buf.h"
#include "cli-audit.h"
#include "gate/gate-mcp.h"
#include "mcp/jsonrpc.h"
#include "mcp/mcp-pins.h"
#include "mcp/mcp.h"
#include "policy/policy.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SERVERS 64
#define MAX_TOOLS   4096
#define MAX_AGENTS  4096
#define PROBE_SECS  30

static const char usage[] =
        "usage: cordon inventory --policy FILE --config MCP.json [--json] [--audit PATH]\n"
        "                        [--state PATH]\n"
        "\n"
        "Start each MCP server of an MCP client configuration ({\"mcpServers\": {NAME:\n"
        "{\"command\": ..., \"args\": [...]}}}; entries already wrapped in 'cordon mcp\n"
        "... --server NAME -- CMD' are unwrapped) in its cordon sandbox, as the first\n"
        "agent of the policy allowed to launch it, list what it really offers, and\n"
        "print per agent: the tools granted; the tools offered but not in the policy\n"
        "(unknown tools cause incidents); the tools in the policy the server no longer\n"
        "offers; and the server's reach (its sandbox profile: paths, network).\n"
        "Each tool definition not seen before is recorded as pending in the state\n"
        "database (the entry's own --state, else --state, $CORDON_STATE, else\n"
        "$XDG_STATE_HOME/cordon/state.db), as 'cordon mcp' would on first sight, so\n"
        "'cordon mcp pins approve' can approve it before the first session; nothing\n"
        "is approved here.  A wrapped entry is inventoried as its session would run:\n"
        "its --server (else the one MCP server the policy names), --agent (tried\n"
        "first), --state, --audit and --cwd.\n"
        "Exit 0 when every offered tool is in the policy, 1 when one is not or a\n"
        "server could not be inventoried, 2 usage, 125 cordon could not proceed\n"
        "(a pin or its audit record could not be written).\n";

struct server {
	char name[128];
	char **cmd; /* NULL-terminated, owned */
	char *launcher;
	const char *profile; /* the launch decision's profile */
	/* A wrapped entry's own options (owned; NULL: not given). */
	char *agent_opt, *state_opt, *audit_opt, *policy_opt, *cwd_opt;
	char *tools[MAX_TOOLS];
	size_t ntools;
	json_t *defs; /* the definitions offered, as offered */
	json_t *pins; /* tool -> "approved", "new", "changed" (mcp.h) */
	size_t pins_recorded;
	char error[256];
};

static void server_release(struct server *s)
{
	size_t i;

	for (i = 0; s->cmd && s->cmd[i]; i++)
		free(s->cmd[i]);
	free(s->cmd);
	free(s->launcher);
	free(s->agent_opt);
	free(s->state_opt);
	free(s->audit_opt);
	free(s->policy_opt);
	free(s->cwd_opt);
	json_decref(s->defs);
	json_decref(s->pins);
	for (i = 0; i < s->ntools; i++)
		free(s->tools[i]);
}

/* ---- the configuration ---- */

static char **argv_of(const char *command, json_t *args, size_t skip)
{
	size_t n = json_is_array(args) ? json_array_size(args) : 0, i, k = 0;
	char **v = calloc(n + 2, sizeof *v);

	if (!v)
		return NULL;
	if (command && !(v[k++] = strdup(command)))
		goto fail;
	for (i = skip; i < n; i++) {
		const char *a = json_string_value(json_array_get(args, i));
		if (!a || !(v[k++] = strdup(a)))
			goto fail;
	}
	return v;
fail:
	for (i = 0; i < k; i++)
		free(v[i]);
	free(v);
	return NULL;
}

/* The value of a wrapped entry's option at args[*i] when it is `name`
 * (`--name VALUE` or `--name=VALUE`), else NULL. */
static const char *entry_opt(json_t *args, size_t *i, const char *name)
{
	const char *a = json_string_value(json_array_get(args, *i));
	size_t n = strlen(name);

	if (!a || strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] || !json_string_value(json_array_get(args, *i + 1)))
		return NULL;
	return json_string_value(json_array_get(args, ++*i));
}

/* A wrapped entry: `cordon mcp [OPTIONS] -- CMD`.  Its server is --server,
 * else the one MCP server the policy names (as the session decides). */
static int load_wrapped(const struct cd_policy *p, json_t *args, struct server *s)
{
	size_t i, n = json_array_size(args);
	const char *v;
	char **slot;

	for (i = 1; i < n && !s->cmd; i++) {
		const char *a = json_string_value(json_array_get(args, i));
		if (!a) {
			snprintf(s->error, sizeof s->error,
			         "a 'cordon mcp' argument is not a string");
			return -1;
		}
		slot = NULL;
		if (!strcmp(a, "--")) {
			s->cmd = argv_of(NULL, args, i + 1);
			break;
		} else if ((v = entry_opt(args, &i, "--server"))) {
			snprintf(s->name, sizeof s->name, "%s", v);
			continue;
		} else if ((v = entry_opt(args, &i, "--agent"))) {
			slot = &s->agent_opt;
		} else if ((v = entry_opt(args, &i, "--state"))) {
			slot = &s->state_opt;
		} else if ((v = entry_opt(args, &i, "--audit"))) {
			slot = &s->audit_opt;
		} else if ((v = entry_opt(args, &i, "--policy"))) {
			slot = &s->policy_opt;
		} else if ((v = entry_opt(args, &i, "--cwd"))) {
			slot = &s->cwd_opt;
		} else if (!strncmp(a, "--", 2) && !strchr(a, '=') && strcmp(a, "--help")) {
			i++; /* another option of cordon mcp: its value is not ours */
			continue;
		}
		if (slot) {
			free(*slot);
			if (!(*slot = strdup(v)))
				return -1;
		}
	}
	if (!s->cmd || !s->cmd[0]) {
		snprintf(s->error, sizeof s->error, "'cordon mcp' entry without '-- CMD'");
		return -1;
	}
	if (!s->name[0] && cd_mcp_policy_server(p, s->name, sizeof s->name) < 0) {
		snprintf(s->error, sizeof s->error,
		         "'cordon mcp' entry without --server, and the policy does not name "
		         "exactly one MCP server");
		return -1;
	}
	return 0;
}

/* One mcpServers entry: a raw server, or `cordon mcp ... -- CMD`. */
static int load_entry(const struct cd_policy *p, const char *key, json_t *e, struct server *s)
{
	const char *command = json_string_value(json_object_get(e, "command"));
	json_t *args = json_object_get(e, "args");

	if (!command || (args && !json_is_array(args))) {
		snprintf(s->error, sizeof s->error, "entry has no command or bad args");
		return -1;
	}
	if (strcmp(command, "cordon") == 0 || strstr(command, "/cordon")) {
		const char *a0 = json_string_value(json_array_get(args, 0));
		if (!a0 || strcmp(a0, "mcp") != 0) {
			snprintf(s->error, sizeof s->error,
			         "a cordon command that is not 'cordon mcp'");
			return -1;
		}
		return load_wrapped(p, args, s);
	}
	snprintf(s->name, sizeof s->name, "%s", key);
	s->cmd = argv_of(command, args, 0);
	return s->cmd ? 0 : -1;
}

/* ---- asking a server what it offers ---- */

struct probe {
	struct server *s;
	int to, from, done, failed;
	json_int_t want;   /* the id of the request we wait for */
	char cursor[1024]; /* tools/list: the next page */
	int have_cursor;
	unsigned pages;
};

static int send_line(int fd, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	size_t len, off = 0;
	int r = 0;

	json_decref(msg);
	if (!s)
		return -1;
	len = strlen(s);
	s[len] = '\n';
	while (off < len + 1) {
		ssize_t w = write(fd, s + off, len + 1 - off);
		if (w < 0 && (errno == EINTR || errno == EAGAIN)) {
			struct pollfd p = { fd, POLLOUT, 0 };
			poll(&p, 1, 1000);
			continue;
		}
		if (w <= 0) {
			r = -1;
			break;
		}
		off += (size_t)w;
	}
	free(s);
	return r;
}

static int ask_page(struct probe *p)
{
	json_t *params = json_object();

	if (p->have_cursor)
		json_object_set_new(params, "cursor", json_string(p->cursor));
	p->want = 2 + (json_int_t)p->pages;
	return send_line(p->to, json_pack("{s:s,s:I,s:s,s:o}", "jsonrpc", "2.0", "id", p->want,
	                                  "method", "tools/list", "params", params));
}

static int on_line(void *ctx, const char *line, size_t len, int status)
{
	struct probe *p = ctx;
	struct cd_jsonrpc_msg m;
	struct cd_err err = { 0, "" };
	json_t *tools, *next;
	size_t i;

	if (status != 0)
		return 0; /* an over-long line: ignored */
	if (cd_jsonrpc_parse(line, len, &m, &err) < 0) {
		cd_jsonrpc_msg_release(&m);
		return 0;
	}
	if (m.kind == CD_JSONRPC_REQUEST) {
		/* roots/list, sampling ...: we have nothing to give. */
		send_line(p->to, json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", m.id,
		                           "error", "code", -32601, "message", "not offered"));
	} else if ((m.kind == CD_JSONRPC_RESULT || m.kind == CD_JSONRPC_ERROR) &&
	           json_is_integer(m.id) && json_integer_value(m.id) == p->want) {
		if (m.kind == CD_JSONRPC_ERROR) {
			snprintf(p->s->error, sizeof p->s->error,
			         "the server answered with an error");
			p->failed = p->done = 1;
		} else if (p->want == 1) {
			send_line(p->to, json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method",
			                           "notifications/initialized"));
			if (ask_page(p) < 0)
				p->failed = p->done = 1;
		} else {
			tools = json_object_get(m.result, "tools");
			for (i = 0; json_is_array(tools) && i < json_array_size(tools); i++) {
				json_t *def = json_array_get(tools, i);
				const char *name = json_string_value(json_object_get(def, "name"));
				if (name && strlen(name) < 256 && p->s->ntools < MAX_TOOLS) {
					p->s->tools[p->s->ntools++] = strdup(name);
					json_array_append(p->s->defs, def);
				}
			}
			next = json_object_get(m.result, "nextCursor");
			p->pages++;
			if (json_is_string(next) && json_string_length(next) < sizeof p->cursor &&
			    p->pages < 100) {
				snprintf(p->cursor, sizeof p->cursor, "%s",
				         json_string_value(next));
				p->have_cursor = 1;
				if (ask_page(p) < 0)
					p->failed = p->done = 1;
			} else {
				p->done = 1;
			}
		}
	}
	cd_jsonrpc_msg_release(&m);
	return 0;
}

static void probe_server(const char *policy, const char *audit, const char *state, struct server *s)
{
	struct cli_spawn sp = { .policy = policy,
		                .agent = s->launcher,
		                .tool = s->name,
		                .audit = s->audit_opt ? s->audit_opt : audit,
		                .state = s->state_opt ? s->state_opt : state,
		                .cwd = s->cwd_opt,
		                .cmd = s->cmd };
	struct cd_jsonrpc_reader rd;
	struct probe p;
	pid_t pid;
	int errfd, st;
	time_t deadline = time(NULL) + PROBE_SECS;
	char buf[65536];

	memset(&p, 0, sizeof p);
	p.s = s;
	if (cli_spawn_run(&sp, &pid, &p.to, &p.from, &errfd) < 0) {
		snprintf(s->error, sizeof s->error, "could not start");
		return;
	}
	cd_jsonrpc_reader_init(&rd, CD_JSONRPC_LINE_MAX);
	p.want = 1;
	if (send_line(p.to, json_pack("{s:s,s:i,s:s,s:{s:s,s:{},s:{s:s,s:s}}}", "jsonrpc", "2.0",
	                              "id", 1, "method", "initialize", "params", "protocolVersion",
	                              "2025-06-18", "capabilities", "clientInfo", "name",
	                              "cordon-inventory", "version", "1")) < 0)
		p.failed = p.done = 1;
	while (!p.done && time(NULL) < deadline) {
		struct pollfd fds[2] = { { p.from, POLLIN, 0 }, { errfd, POLLIN, 0 } };
		ssize_t n;
		if (poll(fds, 2, 1000) <= 0)
			continue;
		if (fds[1].revents && read(errfd, buf, sizeof buf) <= 0)
			fds[1].fd = -1; /* the server's stderr is not ours to show */
		if (!fds[0].revents)
			continue;
		n = read(p.from, buf, sizeof buf);
		if (n > 0) {
			cd_jsonrpc_feed(&rd, buf, (size_t)n, on_line, &p);
		} else if (n == 0 || errno != EAGAIN) {
			if (!s->error[0])
				snprintf(s->error, sizeof s->error,
				         "the server (or its launch) ended before answering");
			p.failed = 1;
			break;
		}
	}
	if (!p.done && !p.failed && !s->error[0])
		snprintf(s->error, sizeof s->error, "no answer within %d s", PROBE_SECS);
	close(p.to);
	close(p.from);
	close(errfd);
	kill(pid, SIGTERM);
	for (st = 0; st < 50 && waitpid(pid, NULL, WNOHANG) == 0; st++) {
		struct timespec ts = { 0, 100000000L };
		nanosleep(&ts, NULL);
	}
	if (st == 50) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	cd_jsonrpc_reader_release(&rd);
}

static int may_launch(const struct cd_policy *p, const char *agent, struct server *s)
{
	struct cd_request q;
	struct cd_decision d;
	size_t argc = 0;

	while (s->cmd[argc])
		argc++;
	cd_request_init(&q);
	q.agent = agent;
	q.tool = s->name;
	q.action = CD_ACTION_EXECUTE;
	q.argv = (const char *const *)s->cmd;
	q.argc = argc;
	q.now = (int64_t)time(NULL);
	if (cd_policy_decide(p, &q, &d, NULL) != 0 || d.verdict != CD_VERDICT_ALLOW)
		return 0;
	s->launcher = strdup(agent);
	s->profile = d.profile;
	return s->launcher ? 1 : -1;
}

/* The agent a wrapped entry names, else the first agent the policy lets
 * launch CMD as tool NAME; its profile. */
static int find_launcher(const struct cd_policy *p, const char *const *agents, size_t nagents,
                         struct server *s)
{
	size_t i;
	int r = s->agent_opt ? may_launch(p, s->agent_opt, s) : 0;

	for (i = 0; r == 0 && i < nagents; i++)
		r = may_launch(p, agents[i], s);
	if (r < 0)
		snprintf(s->error, sizeof s->error, "out of memory");
	else if (r == 0)
		snprintf(s->error, sizeof s->error, "no agent of the policy may launch it");
	return r > 0 ? 0 : -1;
}

/* ---- pins: what a first session would record ---- */

struct pinning {
	const struct cd_policy *policy;
	const char *policy_path, *state_opt, *audit_opt;
	char run_id[CD_RUN_ID_LEN + 1];
};

/* Pin one definition as the gateway does (mcp-gw.c tool_seen, cmd-mcp.c
 * ev_pin): a name it would hide or a second definition of one name is
 * left out; a pin in the policy decides without the database; otherwise
 * a definition not seen before is recorded as pending, with its record.
 * 0, or -1 (said on stderr). */
static int pin_one(const struct pinning *pc, struct server *s, struct cd_state *st,
                   const struct cd_gate *gate, json_t *def)
{
	json_t *name = json_object_get(def, "name");
	const char *tool = json_string_value(name), *pinned;
	struct cd_err err = { 0, "" };
	struct cd_buf canon;
	enum cd_mcp_pin pin;
	char sha[65], why[320];
	int r, inserted = 0, shadowed = 0;

	if (!tool || !cd_mcp_tool_name_valid(tool, json_string_length(name)) ||
	    json_object_get(s->pins, tool))
		return 0;
	cd_buf_init(&canon, CD_JSONRPC_LINE_MAX);
	r = cd_mcp_tool_pin_form(def, &canon, sha);
	if (r < 0) {
		cd_buf_release(&canon);
		if (r == -ENOMEM)
			cli_errorf("pins: out of memory");
		return r == -ENOMEM ? -1 : 0; /* the gateway hides it too */
	}
	pinned = cd_mcp_policy_pin(pc->policy, s->name, tool);
	if (pinned) {
		pin = strcmp(pinned, sha) == 0 ? CD_MCP_PIN_APPROVED : CD_MCP_PIN_CHANGED;
	} else if (cd_mcp_pin_check(st, pc->policy, s->launcher, s->name, tool, sha, canon.data,
	                            (int64_t)time(NULL), &pin, &inserted, &shadowed, why,
	                            sizeof why, &err) < 0) {
		cd_buf_release(&canon);
		cli_errorf("pins: %s", err.msg);
		return -1;
	} else if (why[0]) {
		cli_warnf("the approved definition of tool '%s/%s' is not taken: %s", s->name, tool,
		          why);
	}
	cd_buf_release(&canon);
	if (inserted && pin != CD_MCP_PIN_APPROVED) {
		if (cd_gate_mcp_pin(gate, pc->run_id, s->launcher, s->name, tool, sha,
		                    cd_mcp_pin_name(pin), shadowed, &err) < 0) {
			cli_errorf("audit: %s", err.msg);
			return -1;
		}
		s->pins_recorded++;
	}
	return json_object_set_new(s->pins, tool, json_string(cd_mcp_pin_name(pin))) < 0 ? -1 : 0;
}

/* Every definition server s offered, in the state database its session
 * reads (the entry's --state, else ours).  0, or -1 (said on stderr). */
static int pin_server(const struct pinning *pc, struct server *s)
{
	struct cd_state *st = NULL;
	struct cd_audit *audit = NULL;
	struct cd_gate gate;
	size_t i;
	int r = 0;

	if (cli_state_open(s->state_opt ? s->state_opt : pc->state_opt, &st) < 0)
		return -1;
	if (cli_audit_open(s->audit_opt ? s->audit_opt : pc->audit_opt, &audit) < 0) {
		cd_state_close(st);
		return -1;
	}
	memset(&gate, 0, sizeof gate);
	gate.audit = audit;
	gate.policy = pc->policy;
	gate.policy_path = pc->policy_path;
	gate.now = (int64_t)time(NULL);
	for (i = 0; r == 0 && i < json_array_size(s->defs); i++)
		r = pin_one(pc, s, st, &gate, json_array_get(s->defs, i));
	cd_state_close(st);
	cd_audit_close(audit);
	return r;
}

/* ---- the report ---- */

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

struct declared {
	const char *names[MAX_TOOLS];
	enum cd_action actions[MAX_TOOLS];
	size_t n;
};

static void add_declared(const char *tool, enum cd_action a, void *ctx)
{
	struct declared *d = ctx;

	if (d->n < MAX_TOOLS) {
		d->names[d->n] = tool;
		d->actions[d->n++] = a;
	}
}

static int offered(const struct server *s, const char *tool)
{
	size_t i;

	for (i = 0; i < s->ntools; i++)
		if (!strcmp(s->tools[i], tool))
			return 1;
	return 0;
}

static const char *declared_action(const struct declared *d, const char *tool)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (!strcmp(d->names[i], tool))
			return cd_action_name(d->actions[i]);
	return NULL;
}

static json_t *reach_json(const struct cd_policy *p, const char *profile)
{
	const struct cd_profile_setting *set;
	size_t n, i, k;
	json_t *o = json_object();

	json_object_set_new(o, "profile", profile ? json_string(profile) : json_string("strict"));
	if (profile && cd_policy_profile(p, profile, &set, &n) == 0) {
		for (i = 0; i < n; i++) {
			if (strcmp(set[i].key, "ro") && strcmp(set[i].key, "rw") &&
			    strcmp(set[i].key, "net") && strcmp(set[i].key, "allow_hosts") &&
			    strcmp(set[i].key, "workspace"))
				continue;
			json_t *v = json_array();
			for (k = 0; k < set[i].nvalues; k++)
				json_array_append_new(v, json_string(set[i].values[k]));
			json_object_set_new(o, set[i].key, v);
		}
	}
	return o;
}

static void print_list(const char *label, json_t *arr)
{
	size_t i;
	struct cd_buf b;

	cd_buf_init(&b, 1 << 20);
	for (i = 0; i < json_array_size(arr); i++) {
		const char *s = json_string_value(json_array_get(arr, i));
		if (i)
			cd_buf_append(&b, ", ", 2);
		if (s)
			cd_buf_escape(&b, s, strlen(s));
	}
	printf("    %-22s %s\n", label, b.data && b.len ? b.data : "-");
	cd_buf_release(&b);
}

/* The tools whose definition is not approved, and where to approve them. */
static void print_pins(const char *server, json_t *e)
{
	json_t *pins = json_object_get(e, "pins"), *v, *names = json_array();
	const char *tool;

	json_object_foreach(pins, tool, v)
	{
		if (strcmp(json_string_value(v), "approved"))
			json_array_append_new(names,
			                      json_sprintf("%s (%s)", tool, json_string_value(v)));
	}
	print_list("not approved:", names);
	if (json_array_size(names) && json_object_get(e, "state"))
		printf("    %-22s %lld new pending; approve: cordon mcp pins approve --server %s "
		       "--state %s TOOL... (or --all)\n",
		       "", (long long)json_integer_value(json_object_get(e, "pins_recorded")),
		       server, json_string_value(json_object_get(e, "state")));
	json_decref(names);
}

/* One server's part of the report; *unknown = 1 when it offers a tool
 * the policy does not name or could not be inventoried. */
static json_t *server_json(const struct cd_policy *p, const char *const *agents, size_t na,
                           const char *state, const struct server *s, int *unknown)
{
	struct declared d;
	json_t *srv = json_object(), *extra = json_array(), *gone = json_array(), *per;
	size_t j, k;

	d.n = 0;
	cd_mcp_policy_operations(p, s->name, add_declared, &d);
	for (k = 0; k < s->ntools; k++)
		if (!declared_action(&d, s->tools[k]))
			json_array_append_new(extra, json_string(s->tools[k]));
	for (k = 0; k < d.n; k++)
		if (!s->error[0] && !offered(s, d.names[k]))
			json_array_append_new(gone, json_string(d.names[k]));
	if (s->error[0] || json_array_size(extra))
		*unknown = 1;
	json_object_set_new(srv, "offered", json_integer((json_int_t)s->ntools));
	json_object_set_new(srv, "not_in_policy", extra);
	json_object_set_new(srv, "not_offered", gone);
	if (s->launcher)
		json_object_set_new(srv, "launched_as", json_string(s->launcher));
	if (s->error[0])
		json_object_set_new(srv, "error", json_string(s->error));
	json_object_set_new(srv, "reach", reach_json(p, s->profile));
	if (!s->error[0]) {
		char path[CD_PATH_MAX];
		json_object_set(srv, "pins", s->pins);
		json_object_set_new(srv, "pins_recorded",
		                    json_integer((json_int_t)s->pins_recorded));
		if (cli_state_path(s->state_opt ? s->state_opt : state, path, sizeof path) == 0)
			json_object_set_new(srv, "state", json_string(path));
	}
	per = json_object();
	for (j = 0; j < na; j++) {
		json_t *granted = json_array();
		for (k = 0; k < s->ntools; k++) {
			const char *act = declared_action(&d, s->tools[k]);
			if (act && cd_mcp_tool_granted(p, agents[j], NULL, s->name, s->tools[k],
			                               (int64_t)time(NULL)))
				json_array_append_new(
				        granted,
				        json_pack("{s:s,s:s}", "tool", s->tools[k], "action", act));
		}
		json_object_set_new(per, agents[j], granted);
	}
	json_object_set_new(srv, "granted", per);
	return srv;
}

static void print_text(json_t *report)
{
	const char *key, *agent;
	json_t *e, *g;
	size_t k;

	json_object_foreach(report, key, e)
	{
		json_t *per = json_object_get(e, "granted");
		char *r;
		printf("server %s", key);
		if (json_object_get(e, "error"))
			printf(": NOT INVENTORIED (%s)\n",
			       json_string_value(json_object_get(e, "error")));
		else
			printf(" (launched as %s; offers %lld tools)\n",
			       json_string_value(json_object_get(e, "launched_as")),
			       (long long)json_integer_value(json_object_get(e, "offered")));
		print_list("not in the policy:", json_object_get(e, "not_in_policy"));
		print_list("in policy, not offered:", json_object_get(e, "not_offered"));
		r = json_dumps(json_object_get(e, "reach"),
		               JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
		printf("    %-22s %s\n", "reach:", r ? r : "?");
		free(r);
		if (json_object_get(e, "pins"))
			print_pins(key, e);
		json_object_foreach(per, agent, g)
		{
			json_t *names = json_array();
			char label[200];
			for (k = 0; k < json_array_size(g); k++)
				json_array_append_new(
				        names,
				        json_sprintf("%s (%s)",
				                     json_string_value(json_object_get(
				                             json_array_get(g, k), "tool")),
				                     json_string_value(json_object_get(
				                             json_array_get(g, k), "action"))));
			snprintf(label, sizeof label, "%s granted:", agent);
			print_list(label, names);
			json_decref(names);
		}
	}
}

/* The options, also for `cordon completion` (cli-complete.c). */
static const struct option inventory_opts[] = {
	{ "policy", required_argument, NULL, 'p' },
	{ "config", required_argument, NULL, 'c' },
	{ "audit", required_argument, NULL, 'A' },
	{ "state", required_argument, NULL, 'S' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_inventory = inventory_opts;

int cmd_inventory(int argc, char **argv)
{
	const char *policy_path = NULL, *config = NULL, *audit = NULL, *state = NULL, *key;
	static const char *agents[MAX_AGENTS];
	static struct server servers[MAX_SERVERS];
	struct cd_policy *p = NULL;
	struct cd_err err = { 0, "" };
	json_error_t jerr;
	json_t *cfg = NULL, *entries, *e, *report = NULL;
	size_t ns = 0, na, i;
	struct pinning pc;
	int c, json = 0, rc = CD_EXIT_CORDON, unknown = 0, pin_failed = 0;

	optind = 1;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, "h", inventory_opts, CD_EXIT_USAGE)) != -1) {
		switch (c) {
		case 'p':
			policy_path = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'A':
			audit = optarg;
			break;
		case 'S':
			state = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return CD_EXIT_OK;
		default:
			cli_errorf("unknown or incomplete option '%s' (see --help)",
			           argv[optind - 1]);
			return CD_EXIT_USAGE;
		}
	}
	if (!policy_path || !config || optind != argc) {
		cli_errorf("usage: cordon inventory --policy FILE --config MCP.json [--json] "
		           "[--state PATH]");
		return CD_EXIT_USAGE;
	}
	if (cd_policy_load_file(policy_path, &p, &err) < 0) {
		cli_errorf("policy: %s", err.msg);
		return CD_EXIT_CORDON;
	}
	cfg = json_load_file(config, JSON_REJECT_DUPLICATES, &jerr);
	entries = cfg ? json_object_get(cfg, "mcpServers") : NULL;
	if (!json_is_object(entries)) {
		cli_errorf("%s: %s", config,
		           cfg            ? "no \"mcpServers\" object"
		           : jerr.text[0] ? jerr.text
		                          : "unreadable");
		goto out;
	}
	na = cd_policy_agents(p, agents, MAX_AGENTS);
	if (na > MAX_AGENTS)
		na = MAX_AGENTS;
	json_object_foreach(entries, key, e)
	{
		struct server *s;
		if (ns == MAX_SERVERS) {
			cli_warnf("more than %d servers: the rest are left out", MAX_SERVERS);
			break;
		}
		s = &servers[ns++];
		memset(s, 0, sizeof *s);
		s->defs = json_array();
		s->pins = json_object();
		if (!s->defs || !s->pins || !json_is_object(e) || load_entry(p, key, e, s) < 0) {
			if (!s->error[0])
				snprintf(s->error, sizeof s->error, "out of memory");
			snprintf(s->name, sizeof s->name, "%s", key);
			continue;
		}
		if (s->policy_opt && !same_file(s->policy_opt, policy_path))
			cli_warnf(
			        "server %s: its entry names the policy '%s'; inventoried with '%s'",
			        s->name, s->policy_opt, policy_path);
		if (find_launcher(p, agents, na, s) == 0)
			probe_server(policy_path, audit, state, s);
	}
	memset(&pc, 0, sizeof pc);
	pc.policy = p;
	pc.policy_path = policy_path;
	pc.state_opt = state;
	pc.audit_opt = audit;
	if (cd_run_id_new(pc.run_id) < 0) {
		cli_errorf("cannot make a run id");
		goto out;
	}
	for (i = 0; i < ns; i++)
		if (!servers[i].error[0] && pin_server(&pc, &servers[i]) < 0)
			pin_failed = 1;
	report = json_object();
	for (i = 0; i < ns; i++)
		json_object_set_new(report, servers[i].name,
		                    server_json(p, agents, na, state, &servers[i], &unknown));
	if (json) {
		char *out = json_dumps(report, JSON_COMPACT | JSON_SORT_KEYS);
		if (out)
			printf("%s\n", out);
		free(out);
	} else {
		print_text(report);
	}
	rc = pin_failed ? CD_EXIT_CORDON : unknown ? CD_EXIT_FAIL : CD_EXIT_OK;
out:
	for (i = 0; i < ns; i++)
		server_release(&servers[i]);
	json_decref(report);
	json_decref(cfg);
	cd_policy_free(p);
	return rc;
}
