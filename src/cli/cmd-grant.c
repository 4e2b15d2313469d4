/* cmd-grant.c — temporary grants from the command line:
 *   cordon grant break-glass|list|revoke
 *   cordon delegate
 * Parsing options into a grant, and printing, is all this file does: the
 * policy loader checks the grant (policy.h), temp-grant.c stores it, the
 * audit log records every creation, revocation and expiry.
 *
 * Exit statuses: 0 done, 1 refused (not covered, over the cap, no such
 * grant), 2 usage, 125 the policy, the state database or the audit log
 * could not be used. */
#include "cli.h"

#include "cli-audit.h"

#include "audit/audit.h"
#include "gate/approval-sign.h"
#include "util/buf.h"
#include "util/num.h"
#include "policy/policy.h"
#include "store/state.h"
#include "policy/temp-grant.h"
#include "util/util.h"

#include <getopt.h>
#include <jansson.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SCOPE CD_TEMP_MAX_SCOPE

static const char usage_grant[] =
        "usage: cordon grant break-glass --agent A --tool T --actions LIST --ticket ID --ttl DUR\n"
        "                                [--scope KEY=VALUE]... [--task T] [--by PERSON]\n"
        "                                [--approval human] [--reason TEXT] [--policy FILE]\n"
        "                                [--mask TYPE[=ACTION],...] [--fields PATH,...]\n"
        "                                [--require-task] [--key FILE]\n"
        "       cordon grant list [--all] [--json]\n"
        "       cordon grant revoke ID [--by PERSON] [--reason TEXT]\n"
        "\n"
        "Temporary grants kept in cordon's state database.  A break-glass grant gives\n"
        "a declared agent access the policy file does not, for an incident: it names a\n"
        "ticket, lives at most the policy's break_glass max_ttl (default 4h), is\n"
        "checked against the policy in force at every use (forbid rules still win),\n"
        "and its creation, each use, revocation and expiry are audit records.\n"
        "It never unmasks data: it carries the mask, fields and require_task of every\n"
        "grant the policy gives the agent on that tool (a type any of them masks is\n"
        "masked, a field none of them keeps is cut) and, when they all name one, their\n"
        "profile; --mask, --fields and --require-task narrow it further.  A revoke\n"
        "ends it at once, in running MCP sessions too.\n"
        "'list' shows the active grants (--all: every one ever made), break-glass and\n"
        "delegated, with who made them, when, the ticket or the delegating agent, uses\n"
        "and time left; 'revoke' ends one at once.\n"
        "\n"
        "Scope (repeatable, as in a policy's scope):\n"
        "  path=GLOB  host=HOST  port=N|N-M  argv='TOKEN TOKEN...'  field=NAME\n"
        "  arg:NAME=VALUE (equals)  arg:NAME^=PREFIX (starts with)\n"
        "The grant is signed with the approver's key (--key FILE, else\n"
        "~/.config/cordon/approver.key when it exists): the gate honours it only when\n"
        "that is the key the policy pins for --by (approvers.keys) or a console key; an\n"
        "unsigned grant only from a local SQLite state database, for a person the\n"
        "policy pins no key for.\n"
        "Common options: --policy FILE (checked now, and its max_ttl applies), --state\n"
        "PATH (default $CORDON_STATE, else ~/.local/state/cordon/state.db), --audit\n"
        "PATH.  Exit 0 done, 1 refused, 2 usage, 125 cordon could not proceed.\n";

static const char usage_delegate[] =
        "usage: cordon delegate --policy FILE --from AGENT --to AGENT/NAME --tool T\n"
        "                       --actions LIST [--scope KEY=VALUE]... --ttl DUR [--task T]\n"
        "                       [--by PERSON] [--reason TEXT] [--mask TYPE[=ACTION],...]\n"
        "                       [--fields PATH,...] [--require-task] [--key FILE]\n"
        "\n"
        "Give the sub-agent AGENT/NAME part of what AGENT holds.  Refused unless, for\n"
        "each action, one grant AGENT holds (in FILE or delegated to it) for that tool\n"
        "covers the whole scope and outlives the delegation: a parent cannot hand down\n"
        "what it was never granted.  The child carries the parent's approval\n"
        "requirement and profile; AGENT's forbid rules apply to it; and every\n"
        "decision for the child asks AGENT's grants again, so revoking or narrowing\n"
        "the parent reaches the child at once.  The child sees no more of a result\n"
        "than AGENT would: AGENT's mask, fields and require_task apply to it, and\n"
        "--mask (redact unless ACTION says pseudonymize or drop), --fields (dotted\n"
        "paths kept in JSON results) and --require-task narrow it further.  The chain (parent, "
        "child, who, when)\n"
        "is logged and shown by 'cordon grant list'.  Scope keys, and the signature\n"
        "(--key), as for 'cordon grant'.\n"
        "Exit 0 done, 1 refused, 2 usage, 125 cordon could not proceed.\n";

struct gopts {
	const char *agent, *to, *task, *tool, *actions, *ticket, *ttl, *by, *approval, *reason;
	const char *policy, *state, *audit, *mask, *fields, *key;
	int require_task;
	const char *scope[MAX_SCOPE];
	size_t nscope;
	int all, json;
};

enum {
	OPT_AGENT = 256,
	OPT_FROM,
	OPT_TO,
	OPT_TASK,
	OPT_TOOL,
	OPT_ACTIONS,
	OPT_SCOPE,
	OPT_TICKET,
	OPT_TTL,
	OPT_BY,
	OPT_APPROVAL,
	OPT_REASON,
	OPT_POLICY,
	OPT_STATE,
	OPT_AUDIT,
	OPT_ALL,
	OPT_JSON,
	OPT_MASK,
	OPT_FIELDS,
	OPT_REQUIRE_TASK,
	OPT_KEY,
	OPT_HELP,
};

static const struct option long_opts[] = {
	{ "agent", required_argument, NULL, OPT_AGENT },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "task", required_argument, NULL, OPT_TASK },
	{ "tool", required_argument, NULL, OPT_TOOL },
	{ "actions", required_argument, NULL, OPT_ACTIONS },
	{ "scope", required_argument, NULL, OPT_SCOPE },
	{ "ticket", required_argument, NULL, OPT_TICKET },
	{ "ttl", required_argument, NULL, OPT_TTL },
	{ "by", required_argument, NULL, OPT_BY },
	{ "approval", required_argument, NULL, OPT_APPROVAL },
	{ "reason", required_argument, NULL, OPT_REASON },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "audit", required_argument, NULL, OPT_AUDIT },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "mask", required_argument, NULL, OPT_MASK },
	{ "fields", required_argument, NULL, OPT_FIELDS },
	{ "require-task", no_argument, NULL, OPT_REQUIRE_TASK },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_grant = long_opts; /* cordon completion */

/* 0 parsed, 1 --help printed, -1 usage error (reported). */
static int parse(int argc, char **argv, const char *usage, struct gopts *o)
{
	int c;

	memset(o, 0, sizeof *o);
	optind = 1;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, "h", long_opts, CD_EXIT_USAGE)) != -1) {
		switch (c) {
		case OPT_AGENT:
		case OPT_FROM:
			o->agent = optarg;
			break;
		case OPT_TO:
			o->to = optarg;
			break;
		case OPT_TASK:
			o->task = optarg;
			break;
		case OPT_TOOL:
			o->tool = optarg;
			break;
		case OPT_ACTIONS:
			o->actions = optarg;
			break;
		case OPT_SCOPE:
			if (o->nscope == MAX_SCOPE) {
				cli_errorf("more than %d --scope options", MAX_SCOPE);
				return -1;
			}
			o->scope[o->nscope++] = optarg;
			break;
		case OPT_TICKET:
			o->ticket = optarg;
			break;
		case OPT_TTL:
			o->ttl = optarg;
			break;
		case OPT_BY:
			o->by = optarg;
			break;
		case OPT_APPROVAL:
			o->approval = optarg;
			break;
		case OPT_REASON:
			o->reason = optarg;
			break;
		case OPT_POLICY:
			o->policy = optarg;
			break;
		case OPT_STATE:
			o->state = optarg;
			break;
		case OPT_AUDIT:
			o->audit = optarg;
			break;
		case OPT_ALL:
			o->all = 1;
			break;
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_MASK:
			o->mask = optarg;
			break;
		case OPT_FIELDS:
			o->fields = optarg;
			break;
		case OPT_REQUIRE_TASK:
			o->require_task = 1;
			break;
		case OPT_KEY:
			o->key = optarg;
			break;
		case 'h':
		case OPT_HELP:
			fputs(usage, stdout);
			return 1;
		default:
			cli_errorf("unknown or incomplete option '%s' (see --help)",
			           argv[optind - 1]);
			return -1;
		}
	}
	return 0;
}

/* The person acting: --by, else the invoking user's name. */
static const char *who(const char *by)
{
	return by && *by ? by : cli_login_name();
}

static void warn_temp(const char *id, const char *msg, void *ctx)
{
	(void)ctx;
	cli_warnf("temporary grant %s left out: %s", id, msg);
}

int cli_temp_join(struct cd_state *state, struct cd_audit *audit, struct cd_policy *policy,
                  int64_t now)
{
	struct cd_err err = { 0, "" };
	if (cd_temp_sweep_logged(state, audit, now, NULL, &err) < 0) {
		cli_errorf("expiring temporary grants: %s", err.msg[0] ? err.msg : "failed");
		return -1;
	}
	if (policy && cd_temp_apply(state, policy, now, warn_temp, NULL, NULL, &err) < 0) {
		cli_errorf("%s", err.msg);
		return -1;
	}
	return 0;
}

/* ---- shared set-up ---- */

struct env {
	struct cd_state *state;
	struct cd_audit *audit;
	struct cd_policy *policy;
	int64_t now;
};

static void env_close(struct env *v)
{
	cd_state_close(v->state);
	cd_audit_close(v->audit);
	cd_policy_free(v->policy);
}

/* Open the log, the state database and (when named) the policy with the
 * active temporary grants added.  0, or -1 (reported). */
static int env_open(struct env *v, const struct gopts *o)
{
	struct cd_err err = { 0, "" };

	memset(v, 0, sizeof *v);
	v->now = (int64_t)time(NULL);
	if (o->policy && cd_policy_load_file(o->policy, &v->policy, &err) < 0) {
		cli_errorf("policy: %s", err.msg);
		return -1;
	}
	if (cli_audit_open(o->audit, &v->audit) < 0 || cli_state_open(o->state, &v->state) < 0 ||
	    cli_temp_join(v->state, v->audit, v->policy, v->now) < 0)
		return -1;
	return 0;
}

static void print_created(const struct cd_temp_grant *g, int json)
{
	char until[64];

	cli_time_utc(g->expires, until, sizeof until);
	if (json) {
		json_t *o =
		        json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}", "id", g->id, "kind",
		                  cd_temp_kind_name(g->kind), "agent", g->agent, "tool", g->tool,
		                  "expires", until, "expires_unix", (json_int_t)g->expires);
		char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(o);
		return;
	}
	printf("%s\t%s grant for %s on %s until %s\n", g->id, cd_temp_kind_name(g->kind), g->agent,
	       g->tool, until);
}

/* The request of o's options; 0, or -1 (reported: a usage error). */
static int make_req(const struct gopts *o, enum cd_temp_kind kind, struct cd_temp_req *q)
{
	struct cd_err err = { 0, "" };

	memset(q, 0, sizeof *q);
	q->kind = kind;
	q->agent = o->agent;
	q->to = o->to;
	q->task = o->task;
	q->tool = o->tool;
	q->actions = o->actions;
	q->ticket = o->ticket;
	q->by = who(o->by);
	q->approval = o->approval;
	q->reason = o->reason;
	q->mask = o->mask;
	q->fields = o->fields;
	q->require_task = o->require_task;
	q->scope = o->scope;
	q->nscope = o->nscope;
	if (cd_temp_req_check(q, &err) < 0 || cd_temp_parse_ttl(o->ttl, &q->ttl_s, &err) < 0) {
		cli_errorf("%s", err.msg);
		return -1;
	}
	return 0;
}

/* Make it (temp-grant-make.c), signed with the key, and say so: an exit
 * status. */
static int make(struct env *v, struct cd_temp_req *q, const char *key, int json)
{
	struct cd_temp_grant g;
	struct cd_err err = { 0, "" };
	struct cd_approver_key *k = NULL;
	int r;

	if (cli_approver_key_open(key, &k) < 0)
		return CD_EXIT_CORDON;
	q->sign = k ? cd_approver_row_sign : NULL;
	q->sign_ctx = k;
	r = cd_temp_make(v->state, v->audit, v->policy, q, v->now, &g, &err);
	cd_approver_key_free(k);
	if (r < 0) {
		cli_errorf("%s", err.msg);
		return r == -EINVAL        ? CD_EXIT_USAGE
		       : r == -CD_E_DENIED ? CD_EXIT_FAIL
		                           : CD_EXIT_CORDON;
	}
	if (q->kind == CD_TEMP_BREAK_GLASS && !v->policy)
		cli_warnf("no --policy: the grant will be checked against the policy in force when "
		          "it is used");
	print_created(&g, json);
	return CD_EXIT_OK;
}

/* ---- cordon grant break-glass ---- */

static int break_glass(int argc, char **argv)
{
	struct gopts o;
	struct env v;
	struct cd_temp_req q;
	int r = parse(argc, argv, usage_grant, &o), rc = CD_EXIT_CORDON;

	if (r)
		return r > 0 ? CD_EXIT_OK : CD_EXIT_USAGE;
	if (optind != argc) {
		cli_errorf("unexpected argument '%s'", argv[optind]);
		return CD_EXIT_USAGE;
	}
	if (!o.agent || !o.tool || !o.actions || !o.ticket || !*o.ticket) {
		cli_errorf("break-glass needs --agent, --tool, --actions and --ticket");
		return CD_EXIT_USAGE;
	}
	if (make_req(&o, CD_TEMP_BREAK_GLASS, &q) < 0)
		return CD_EXIT_USAGE;
	if (env_open(&v, &o) == 0)
		rc = make(&v, &q, o.key, o.json);
	env_close(&v);
	return rc;
}

/* ---- cordon grant list ---- */

struct list_ctx {
	int json;
	int64_t now;
	json_t *arr;
	size_t n;
};

static int list_one(const struct cd_temp_grant *g, void *ctx)
{
	struct list_ctx *l = ctx;
	char created[32], expires[32];
	const char *status = g->ended ? g->ended : g->expires <= l->now ? "expired" : "active";
	struct cd_buf b;

	cli_time_utc(g->created, created, sizeof created);
	cli_time_utc(g->expires, expires, sizeof expires);
	l->n++;
	if (l->json) {
		json_t *o = json_object();
		if (!o)
			return -ENOMEM;
		json_object_set_new(o, "id", json_string(g->id));
		json_object_set_new(o, "kind", json_string(cd_temp_kind_name(g->kind)));
		json_object_set_new(o, "status", json_string(status));
		json_object_set_new(o, "agent", json_string(g->agent));
		json_object_set_new(o, "tool", json_string(g->tool));
		if (g->task)
			json_object_set_new(o, "task", json_string(g->task));
		if (g->parent)
			json_object_set_new(o, "parent", json_string(g->parent));
		if (g->ticket)
			json_object_set_new(o, "ticket", json_string(g->ticket));
		json_object_set_new(o, "by", json_string(g->by));
		json_object_set_new(o, "created", json_string(created));
		json_object_set_new(o, "expires", json_string(expires));
		json_object_set_new(o, "uses", json_integer(g->uses));
		if (g->ended_by)
			json_object_set_new(o, "ended_by", json_string(g->ended_by));
		json_object_set_new(o, "grant", json_string(g->grant_json));
		json_array_append_new(l->arr, o);
		return 0;
	}
	/* Every stored string is escaped: rows may hold anything. */
	cd_buf_init(&b, 1 << 16);
	if (cd_buf_printf(&b, "%s\t%s\t%s\t", g->id, status, cd_temp_kind_name(g->kind)) == 0 &&
	    cd_buf_escape(&b, g->agent, strlen(g->agent)) == 0 && cd_buf_append(&b, "\t", 1) == 0 &&
	    cd_buf_escape(&b, g->tool, strlen(g->tool)) == 0 &&
	    cd_buf_append(&b, g->parent ? "\tfrom " : "\tticket ", g->parent ? 6 : 8) == 0 &&
	    cd_buf_escape(&b,
	                  g->parent   ? g->parent
	                  : g->ticket ? g->ticket
	                              : "-",
	                  strlen(g->parent   ? g->parent
	                         : g->ticket ? g->ticket
	                                     : "-")) == 0 &&
	    cd_buf_append(&b, "\tby ", 4) == 0 && cd_buf_escape(&b, g->by, strlen(g->by)) == 0 &&
	    cd_buf_printf(&b, "\t%s..%s\tuses %lld", created, expires, (long long)g->uses) == 0)
		printf("%s\n", b.data);
	cd_buf_release(&b);
	return 0;
}

static int list_cmd(int argc, char **argv)
{
	struct gopts o;
	struct env v;
	struct cd_err err = { 0, "" };
	struct list_ctx l;
	int r = parse(argc, argv, usage_grant, &o), rc = CD_EXIT_CORDON;

	if (r)
		return r > 0 ? CD_EXIT_OK : CD_EXIT_USAGE;
	if (optind != argc) {
		cli_errorf("unexpected argument '%s'", argv[optind]);
		return CD_EXIT_USAGE;
	}
	if (env_open(&v, &o) < 0)
		goto out;
	memset(&l, 0, sizeof l);
	l.json = o.json;
	l.now = v.now;
	l.arr = o.json ? json_array() : NULL;
	if (o.json && !l.arr)
		goto out;
	if (!o.json)
		printf("ID\tSTATUS\tKIND\tAGENT\tTOOL\tFROM/TICKET\tBY\tCREATED..EXPIRES\tUSES\n");
	if (cd_temp_list(v.state, o.all, v.now, list_one, &l, &err) < 0) {
		cli_errorf("%s", err.msg);
		json_decref(l.arr);
		goto out;
	}
	if (o.json) {
		char *s = json_dumps(l.arr, JSON_COMPACT);
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(l.arr);
	}
	rc = CD_EXIT_OK;
out:
	env_close(&v);
	return rc;
}

/* ---- cordon grant revoke ---- */

static int revoke_cmd(int argc, char **argv)
{
	struct gopts o;
	struct env v;
	struct cd_err err = { 0, "" };
	int r = parse(argc, argv, usage_grant, &o), rc = CD_EXIT_CORDON;

	if (r)
		return r > 0 ? CD_EXIT_OK : CD_EXIT_USAGE;
	if (optind + 1 != argc) {
		cli_errorf("revoke takes one grant id");
		return CD_EXIT_USAGE;
	}
	if (env_open(&v, &o) < 0)
		goto out;
	r = cd_temp_revoke(v.state, v.audit, argv[optind], who(o.by), o.reason, v.now, NULL, NULL,
	                   &err);
	if (r == -ENOENT) {
		cli_errorf("%s", err.msg);
		rc = CD_EXIT_FAIL;
		goto out;
	}
	if (r < 0) {
		cli_errorf("%s", err.msg);
		goto out;
	}
	printf("%s\trevoked\n", argv[optind]);
	rc = CD_EXIT_OK;
out:
	env_close(&v);
	return rc;
}

int cmd_grant(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub) {
		fputs(usage_grant, stderr);
		return CD_EXIT_USAGE;
	}
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		fputs(usage_grant, stdout);
		return CD_EXIT_OK;
	}
	cli_set_prog(!strcmp(sub, "break-glass") ? "grant break-glass" : "grant");
	if (!strcmp(sub, "break-glass"))
		return break_glass(argc - 1, argv + 1);
	if (!strcmp(sub, "list"))
		return list_cmd(argc - 1, argv + 1);
	if (!strcmp(sub, "revoke"))
		return revoke_cmd(argc - 1, argv + 1);
	cli_errorf("unknown subcommand '%s' (break-glass, list, revoke)", sub);
	return CD_EXIT_USAGE;
}

/* ---- cordon delegate ---- */

int cmd_delegate(int argc, char **argv)
{
	struct gopts o;
	struct env v;
	struct cd_temp_req q;
	int r = parse(argc, argv, usage_delegate, &o), rc = CD_EXIT_CORDON;

	if (r)
		return r > 0 ? CD_EXIT_OK : CD_EXIT_USAGE;
	if (optind != argc) {
		cli_errorf("unexpected argument '%s'", argv[optind]);
		return CD_EXIT_USAGE;
	}
	if (!o.policy || !o.agent || !o.to || !o.tool || !o.actions) {
		cli_errorf("delegate needs --policy, --from, --to, --tool and --actions");
		return CD_EXIT_USAGE;
	}
	if (make_req(&o, CD_TEMP_DELEGATED, &q) < 0)
		return CD_EXIT_USAGE;
	if (env_open(&v, &o) == 0)
		rc = make(&v, &q, o.key, o.json);
	env_close(&v);
	return rc;
}
