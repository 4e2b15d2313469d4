/* cmd-policy.c — `cordon policy lint|check|explain|test|diff|review|matrix`: the grant matrix
 * from the command line.  Parsing argv into a request and printing the
 * outcome is all this file does; src/lib/policy*.c decides.
 *
 * Exit statuses (documented in docs/policy.md):
 *   lint, test       0 valid / all cases pass, 1 invalid policy or a failing
 *                    case, 2 usage
 *   check, explain   0 allow, 1 deny, 3 needs approval, 2 usage, 4 the
 *                    policy did not load (which is also a deny)
 *   diff             0 nothing widens, 1 something widens, 2 usage, 4 a file
 *                    did not load
 *   review           0 nothing needs attention, 1 something does, 2 usage,
 *                    4 the policy or the audit log did not load
 *   matrix           0 printed, 1 unknown --agent, 2 usage, 4 the policy did
 *                    not load (cmd-policy-matrix.c) */
#include "cli.h"

#include "cli-audit.h"
#include "cmd-policy-int.h"
#include "cmd-policy-matrix.h"

#include "util/buf.h"
#include "util/clock-time.h"
#include "util/num.h"
#include "policy/policy-diff.h"
#include "policy/policy-review.h"
#include "policy/policy.h"
#include "store/state.h"
#include "store/store.h"
#include "policy/temp-grant.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char usage_main[] =
        "usage: cordon policy lint FILE... [--json]\n"
        "       cordon policy check FILE --agent A --tool T --action X [REQUEST...] [--json]\n"
        "                           [--no-temp | --state PATH]\n"
        "       cordon policy explain FILE --agent A --tool T --action X [REQUEST...] [--json]\n"
        "                           [--no-temp | --state PATH]\n"
        "       cordon policy test FILE [--json]\n"
        "       cordon policy diff OLD NEW [--json]\n"
        "       cordon policy review FILE [--audit PATH | --no-audit] [--soon 30d] [--unused 90d]\n"
        "                            [--at TIME] [--json]\n"
        "       cordon policy matrix FILE [--format text|markdown|json | --json] [--agent A] [--at "
        "TIME]\n"
        "\n"
        "The grant matrix: validate a policy, decide one request, show how every\n"
        "rule saw it, run its examples and generated boundary cases, or print\n"
        "agents x tools for review.\n"
        "Run 'cordon policy SUB --help' for details; the file format is in docs/policy.md.\n";

static const char usage_request[] =
        "\n"
        "Request:\n"
        "  --agent ID         the agent making the call (required)\n"
        "  --task ID          the task the call belongs to\n"
        "  --tool ID          the tool called (required)\n"
        "  --action CLASS     read|create|update|delete|execute|network (required)\n"
        "  --path PATH        a path the call touches (repeatable; absolute)\n"
        "  --host HOST[:PORT] the host the call reaches\n"
        "  --port N           the port the call reaches\n"
        "  --arg NAME=VALUE   a named argument (repeatable)\n"
        "  --field NAME       a record field the call reads or writes (repeatable)\n"
        "  --at TIME          decide at TIME: YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ (or an\n"
        "                     offset +HH:MM for Z) or @SECONDS (default: now)\n"
        "  -- ARGV...         the command line of a command tool\n"
        "\n"
        "Temporary grants:\n"
        "  --state PATH       the state database whose live break-glass and delegated\n"
        "                     grants join the policy, as they join runs and MCP sessions\n"
        "                     (default $CORDON_STATE, else $XDG_STATE_HOME/cordon/state.db;\n"
        "                     none when it does not exist)\n"
        "  --no-temp          decide from the policy file alone\n";

void policy_usage_sub(const char *sub, FILE *f)
{
	if (!strcmp(sub, "lint")) {
		fprintf(f,
		        "usage: cordon policy lint FILE... [--json]\n\n"
		        "Load each FILE strictly and run its inline examples.  Prints\n"
		        "FILE: ok and a summary, or one error as FILE:LINE:COL: message\n"
		        "(hint), for every FILE; with --json one object a line per FILE:\n"
		        "{file, ok, counts, sha256, warnings} or {file, ok: false, line,\n"
		        "column, error}.\n"
		        "Warnings (the file is still valid) for grants that can never work:\n"
		        "a write or delete grant whose profile has no writable path, an\n"
		        "expired grant, every grant expired; on stderr as\n"
		        "FILE:LINE:COL: warning: message, with --json in warnings:\n"
		        "[{line, column, message}].\n"
		        "Exit 0 when every FILE is valid, 1 when any is not, 2 on usage errors.\n");
	} else if (!strcmp(sub, "test")) {
		fprintf(f,
		        "usage: cordon policy test FILE [--json]\n\n"
		        "Run the inline examples and, for every grant, generated boundary cases\n"
		        "(each other action class, a path just outside the scope, '..' and case\n"
		        "variants, a host one label off, another port, another agent, the second\n"
		        "of expiry) that must be denied.  Prints a TAP report naming any grant\n"
		        "that leaks; with --json one object (file, policy_sha256, total, failed,\n"
		        "cases: [{pass, case}]).  Exit 0 when every case passes, 1 otherwise, 2 "
		        "on\n"
		        "usage errors.\n");
	} else if (!strcmp(sub, "review")) {
		fprintf(f,
		        "usage: cordon policy review FILE [--audit PATH | --no-audit] [--soon "
		        "DUR]\n"
		        "       [--unused DUR] [--at TIME] [--json]\n\n"
		        "Re-certification: list the grants that are past review_by (past-review),\n"
		        "already expired (expired), expiring within --soon (expiring, default\n"
		        "30d), never used (never-used) or not used for --unused (unused, default\n"
		        "90d; 0 turns it off) according to the audit log.  A use is a decision\n"
		        "record that allowed, or held for approval, a request of the grant's\n"
		        "agent and tool and names the grant.  The log is --audit PATH, else\n"
		        "$CORDON_AUDIT, else $XDG_STATE_HOME/cordon/audit.db, opened read-only;\n"
		        "--no-audit skips the usage checks.  DUR is Nd, Nh, Nm or Ns; TIME is\n"
		        "YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ (or +HH:MM for Z) or @SECONDS (default:\n"
		        "now).\n"
		        "Exit 0 when nothing needs attention, 1 when something does, 2 on usage\n"
		        "errors, 4 when the policy or the audit log does not load.\n");
	} else if (!strcmp(sub, "diff")) {
		fprintf(f,
		        "usage: cordon policy diff OLD NEW [--json]\n\n"
		        "Report the access NEW adds to OLD: grants added, and for each grant in\n"
		        "both every widened dimension (actions, agent, task, tool, paths, hosts,\n"
		        "ports, argv, args, fields, a later expiry, a weaker approval, another\n"
		        "profile), forbid rules removed or narrowed, and tool inventory changes\n"
		        "(an operation added or reclassed, an argument kind changed).  A new\n"
		        "matcher counts as new access unless it is proven covered by an old one.\n"
		        "Removed access is listed too, marked '-'; '+' marks new access, '='\n"
		        "a change one old grant already covers.\n"
		        "Exit 0 when nothing widens, 1 when something does, 2 on usage errors,\n"
		        "4 when a file does not load.\n");
	} else {
		fprintf(f,
		        "usage: cordon policy %s FILE --agent A [--task T] --tool T --action X\n"
		        "       [--path P]... [--host H[:PORT]] [--port N] [--arg K=V]... [--field "
		        "F]...\n"
		        "       [--at TIME] [--json] [--no-temp | --state PATH] [-- ARGV...]\n\n"
		        "%s",
		        sub,
		        !strcmp(sub, "check") ? "Decide one request; print the decision, the "
		                                "deciding rule ids and the\n"
		                                "reason, each temporary grant that decided (its "
		                                "ticket or delegating\n"
		                                "agent and expiry) and the data minimization the "
		                                "decision carries.\n"
		                                "Exit 0 allow, 1 deny, 3 needs approval, 2 usage, "
		                                "4 policy or state\n"
		                                "database not loaded.\n"
		                              : "Decide one request and show every grant and "
		                                "forbid rule with why it\n"
		                                "matched or not (--json: the check object with "
		                                "rules: [{id, kind,\n"
		                                "matched, why}]).  Exit statuses as for check.\n");
		fputs(usage_request, f);
	}
}

struct reqopts {
	struct cd_request req;
	const char *paths[CD_REQ_MAX_PATHS];
	struct cd_req_arg args[CD_REQ_MAX_ARGS];
	const char *fields[CD_REQ_MAX_ARGS];
	char host[300];
	int json;
	int have_action;
	int no_temp;       /* --no-temp */
	const char *state; /* --state PATH */
};

/* The options of each subcommand, for did-you-mean (these parse by hand,
 * exact names only, as every command does: cli-opt.c). */
static const struct option request_opts[] = {
	{ "agent", required_argument, NULL, 0 },
	{ "task", required_argument, NULL, 0 },
	{ "tool", required_argument, NULL, 0 },
	{ "action", required_argument, NULL, 0 },
	{ "path", required_argument, NULL, 0 },
	{ "host", required_argument, NULL, 0 },
	{ "port", required_argument, NULL, 0 },
	{ "arg", required_argument, NULL, 0 },
	{ "field", required_argument, NULL, 0 },
	{ "at", required_argument, NULL, 0 },
	{ "state", required_argument, NULL, 0 },
	{ "no-temp", no_argument, NULL, 0 },
	{ "json", no_argument, NULL, 0 },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_policy_request = request_opts; /* cordon completion */
const struct option policy_json_opts[] = {
	{ "json", no_argument, NULL, 0 },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_policy_json = policy_json_opts; /* cordon completion */

int policy_opt_missing; /* set when an option lacked its value */

/* "--name value" or "--name=value"; advances *i past the value. */
const char *policy_optval(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		cli_errorf("%s needs a value", name);
		policy_opt_missing = 1;
		return "";
	}
	return argv[++*i];
}

static int parse_hostport(struct reqopts *o, const char *v)
{
	const char *colon = strrchr(v, ':');
	size_t hlen = strlen(v);
	uint64_t port;

	if (colon && (v[0] != '[' || colon > strrchr(v, ']'))) {
		if (cd_parse_u64(colon + 1, strlen(colon + 1), 65535, &port) < 0) {
			cli_errorf("--host '%s': bad port", v);
			return -1;
		}
		o->req.port = (long)port;
		hlen = (size_t)(colon - v);
	}
	if (hlen >= sizeof o->host) {
		cli_errorf("--host is too long");
		return -1;
	}
	memcpy(o->host, v, hlen);
	o->host[hlen] = '\0';
	o->req.host = o->host;
	return 0;
}

static int parse_request(int argc, char **argv, int start, struct reqopts *o)
{
	int i;
	const char *v;
	uint64_t n;

	memset(o, 0, sizeof *o);
	cd_request_init(&o->req);
	o->req.now = (int64_t)time(NULL);
	o->req.paths = o->paths;
	o->req.args = o->args;
	o->req.fields = o->fields;
	for (i = start; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			o->req.argv = (const char *const *)&argv[i + 1];
			o->req.argc = (size_t)(argc - i - 1);
			if (o->req.argc == 0) {
				cli_errorf("'--' needs a command line after it");
				return -1;
			}
			break;
		} else if (!strcmp(a, "--json")) {
			o->json = 1;
		} else if (!strcmp(a, "--no-temp")) {
			o->no_temp = 1;
		} else if ((v = policy_optval(argc, argv, &i, "--state"))) {
			o->state = v;
		} else if ((v = policy_optval(argc, argv, &i, "--agent"))) {
			o->req.agent = v;
		} else if ((v = policy_optval(argc, argv, &i, "--task"))) {
			o->req.task = v;
		} else if ((v = policy_optval(argc, argv, &i, "--tool"))) {
			o->req.tool = v;
		} else if ((v = policy_optval(argc, argv, &i, "--action"))) {
			if (cd_action_parse(v, &o->req.action) < 0) {
				cli_errorf(
				        "--action '%s': use read, create, update, delete, execute "
				        "or network",
				        v);
				return -1;
			}
			o->have_action = 1;
		} else if ((v = policy_optval(argc, argv, &i, "--path"))) {
			if (o->req.npaths >= CD_REQ_MAX_PATHS) {
				cli_errorf("too many --path options");
				return -1;
			}
			o->paths[o->req.npaths++] = v;
		} else if ((v = policy_optval(argc, argv, &i, "--host"))) {
			if (parse_hostport(o, v) < 0)
				return -1;
		} else if ((v = policy_optval(argc, argv, &i, "--port"))) {
			if (cd_parse_u64(v, strlen(v), 65535, &n) < 0) {
				cli_errorf("--port '%s': a number from 0 to 65535", v);
				return -1;
			}
			o->req.port = (long)n;
		} else if ((v = policy_optval(argc, argv, &i, "--arg"))) {
			const char *eq = strchr(v, '=');
			char *name;
			if (!eq || eq == v || o->req.nargs >= CD_REQ_MAX_ARGS) {
				cli_errorf("--arg '%s': write NAME=VALUE", v);
				return -1;
			}
			name = strndup(v, (size_t)(eq - v));
			if (!name) {
				cli_errorf("out of memory");
				return -1;
			}
			o->args[o->req.nargs].name = name;
			o->args[o->req.nargs++].value = eq + 1;
		} else if ((v = policy_optval(argc, argv, &i, "--field"))) {
			if (o->req.nfields >= CD_REQ_MAX_ARGS) {
				cli_errorf("too many --field options");
				return -1;
			}
			o->fields[o->req.nfields++] = v;
		} else if ((v = policy_optval(argc, argv, &i, "--at"))) {
			int64_t t;
			if (cd_policy_parse_time(v, strlen(v), &t) < 0) {
				cli_errorf("--at '%s': write " CLI_TIME_FORMS, v);
				return -1;
			}
			o->req.now = t;
		} else {
			cli_opt_unknown(a, request_opts);
			return -1;
		}
		if (policy_opt_missing)
			return -1;
	}
	if (!o->req.agent || !o->req.tool || !o->have_action) {
		cli_errorf("--agent, --tool and --action are required (see --help)");
		return -1;
	}
	if (o->no_temp && o->state) {
		cli_errorf("--no-temp and --state contradict each other");
		return -1;
	}
	return 0;
}

static void free_request(struct reqopts *o)
{
	size_t i;
	for (i = 0; i < o->req.nargs; i++)
		free((char *)o->args[i].name);
}

struct cd_policy *policy_load(const char *file)
{
	struct cd_policy *p = NULL;
	struct cd_err err = { 0 };

	if (cd_policy_load_file(file, &p, &err) < 0) {
		cli_errorf("%s", err.msg);
		return NULL;
	}
	return p;
}

/* ---- temporary grants ---- */

/* What the output says of one live temporary grant. */
struct temp_row {
	char id[CD_TEMP_ID_MAX];
	enum cd_temp_kind kind;
	char *ticket, *parent, *by;
};

struct temps {
	struct temp_row *v;
	size_t n, cap;
	size_t joined; /* added to the policy */
	int on;        /* the state database was consulted */
};

static void temps_release(struct temps *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].ticket);
		free(t->v[i].parent);
		free(t->v[i].by);
	}
	free(t->v);
}

static char *dup_opt(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int keep_row(const struct cd_temp_grant *g, void *ctx)
{
	struct temps *t = ctx;
	struct temp_row *r;

	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct temp_row *v = realloc(t->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	r = &t->v[t->n];
	memset(r, 0, sizeof *r);
	snprintf(r->id, sizeof r->id, "%s", g->id);
	r->kind = g->kind;
	r->ticket = dup_opt(g->ticket);
	r->parent = dup_opt(g->parent);
	r->by = dup_opt(g->by);
	if ((g->ticket && !r->ticket) || (g->parent && !r->parent) || (g->by && !r->by)) {
		free(r->ticket);
		free(r->parent);
		free(r->by);
		return -ENOMEM;
	}
	t->n++;
	return 0;
}

static const struct temp_row *temp_find(const struct temps *t, const char *id)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].id, id))
			return &t->v[i];
	return NULL;
}

static void warn_left_out(const char *id, const char *msg, void *ctx)
{
	(void)ctx;
	cli_warnf("temporary grant %s left out: %s", id, msg);
}

/* Add the live break-glass and delegated grants of the state database to
 * p, as a run or an MCP session would (without ending the expired ones:
 * a check writes nothing).  No database yet: nothing to add.  0, or -1
 * (reported): the answer would not be the one a run gets. */
static int temps_join(const struct reqopts *o, struct cd_policy *p, struct temps *t)
{
	struct cd_state *state = NULL;
	struct cd_err err = { 0, "" };
	char path[4096];
	struct stat st;
	int64_t now = (int64_t)time(NULL);
	size_t n = 0;
	int r;

	memset(t, 0, sizeof *t);
	if (o->no_temp)
		return 0;
	if ((r = cli_state_path(o->state, path, sizeof path)) < 0) {
		cli_errorf("state database: %s (set CORDON_STATE, pass --state PATH, or "
		           "--no-temp to decide from the file alone)",
		           cd_strerror(r));
		return -1;
	}
	if (!cd_store_is_uri(path) && stat(path, &st) < 0 && errno == ENOENT && !o->state)
		return 0;
	if (cd_state_open(path, &state, &err) < 0 ||
	    cd_temp_list(state, 0, now, keep_row, t, &err) < 0 ||
	    cd_temp_apply(state, p, now, warn_left_out, NULL, &n, &err) < 0) {
		cli_errorf("%s (--no-temp decides from the file alone)",
		           err.msg[0] ? err.msg : "temporary grants could not be read");
		cd_state_close(state);
		return -1;
	}
	cd_state_close(state);
	t->on = 1;
	t->joined = n;
	return 0;
}

/* The temporary grants among the deciding ids, one line each, or as a
 * JSON array (NULL when there are none). */
static void print_temps(const struct cd_policy *p, const struct cd_decision *d,
                        const struct temps *t, json_t *arr)
{
	size_t i;

	for (i = 0; i < d->nids; i++) {
		const struct temp_row *r = temp_find(t, d->ids[i]);
		int64_t exp = cd_policy_temp_expires(p, d->ids[i]);
		const char *from = r && r->parent ? r->parent : r && r->ticket ? r->ticket : "-";
		char until[40];
		struct cd_buf b;
		if (!exp)
			continue;
		cli_time_utc(exp, until, sizeof until);
		if (arr) {
			json_t *o = json_pack("{s:s,s:s,s:s,s:I}", "id", d->ids[i], "kind",
			                      cd_temp_kind_name(cd_policy_temp_kind(p, d->ids[i])),
			                      "expires", until, "expires_unix", (json_int_t)exp);
			if (o && r && r->parent)
				json_object_set_new(o, "parent", json_string(r->parent));
			if (o && r && r->ticket)
				json_object_set_new(o, "ticket", json_string(r->ticket));
			if (o && r && r->by)
				json_object_set_new(o, "by", json_string(r->by));
			json_array_append_new(arr, o);
			continue;
		}
		/* The rows hold what their makers typed: escaped. */
		cd_buf_init(&b, 4096);
		if (cd_buf_printf(&b, "  temporary grant %s: %s, %s ", d->ids[i],
		                  cd_temp_kind_name(cd_policy_temp_kind(p, d->ids[i])),
		                  r && r->parent ? "from" : "ticket") == 0 &&
		    cd_buf_escape(&b, from, strlen(from)) == 0 &&
		    (!r || !r->by ||
		     (cd_buf_puts(&b, ", by ") == 0 &&
		      cd_buf_escape(&b, r->by, strlen(r->by)) == 0)) &&
		    cd_buf_printf(&b, ", expires %s", until) == 0)
			printf("%s\n", b.data);
		cd_buf_release(&b);
	}
}

/* The data minimization a decision carries: "mask email=redact,card=drop"
 * and one "fields A,B" per list (a field passes each), or NULL/nothing. */
static json_t *minimize_json(const struct cd_decision *d)
{
	json_t *o = json_object(), *mask = json_object(), *fields = json_array();
	size_t i, k;

	if (!o || !mask || !fields) {
		json_decref(o);
		json_decref(mask);
		json_decref(fields);
		return NULL;
	}
	for (i = 0; i < CD_SCAN_NTYPES; i++)
		if (d->mask.action[i] != CD_MASK_NONE)
			json_object_set_new(mask, cd_scan_type_name((enum cd_scan_type)i),
			                    json_string(cd_mask_action_name(
			                            (enum cd_mask_action)d->mask.action[i])));
	for (i = 0; i < d->nfield_lists; i++) {
		json_t *l = json_array();
		for (k = 0; l && k < d->field_counts[i]; k++)
			json_array_append_new(l, json_string(d->field_lists[i][k]));
		json_array_append_new(fields, l);
	}
	json_object_set_new(o, "mask", mask);
	json_object_set_new(o, "fields", fields);
	if (d->minimize_overflow)
		json_object_set_new(o, "overflow", json_true());
	return o;
}

static void print_minimize(const struct cd_decision *d)
{
	size_t i, k, n = 0;
	struct cd_buf b;

	if (d->verdict == CD_VERDICT_DENY ||
	    (!cd_mask_rules_active(&d->mask) && !d->nfield_lists && !d->minimize_overflow))
		return;
	cd_buf_init(&b, 1 << 20);
	(void)cd_buf_puts(&b, "  minimize:");
	for (i = 0; i < CD_SCAN_NTYPES; i++) {
		if (d->mask.action[i] == CD_MASK_NONE)
			continue;
		(void)cd_buf_printf(&b, "%s%s=%s", n++ ? "," : " mask ",
		                    cd_scan_type_name((enum cd_scan_type)i),
		                    cd_mask_action_name((enum cd_mask_action)d->mask.action[i]));
	}
	for (i = 0; i < d->nfield_lists; i++) {
		(void)cd_buf_puts(&b, n++ ? "; fields " : " fields ");
		for (k = 0; k < d->field_counts[i]; k++) {
			if (k)
				(void)cd_buf_putc(&b, ',');
			(void)cd_buf_escape(&b, d->field_lists[i][k], strlen(d->field_lists[i][k]));
		}
	}
	if (d->minimize_overflow)
		(void)cd_buf_puts(&b, "; too many field lists: results are withheld");
	if (b.data)
		printf("%s\n", b.data);
	cd_buf_release(&b);
}

static int verdict_exit(const struct cd_decision *d)
{
	switch (d->verdict) {
	case CD_VERDICT_ALLOW:
		return CD_EXIT_OK;
	case CD_VERDICT_NEEDS_APPROVAL:
		return EXIT_APPROVAL;
	case CD_VERDICT_DENY:
		break;
	}
	return EXIT_DENY;
}

static void print_decision(const struct cd_policy *p, const struct cd_decision *d,
                           const struct temps *t, int json, json_t *rules)
{
	size_t i;

	if (json) {
		json_t *o = json_object(), *ids = json_array();
		char *s;
		if (!o || !ids) {
			json_decref(o);
			json_decref(ids);
			cli_errorf("out of memory");
			return;
		}
		for (i = 0; i < d->nids; i++)
			json_array_append_new(ids, json_string(d->ids[i]));
		json_object_set_new(o, "decision", json_string(cd_verdict_name(d->verdict)));
		json_object_set_new(o, d->forbidden ? "forbid" : "grants", ids);
		json_object_set_new(o, "profile",
		                    d->profile ? json_string(d->profile) : json_null());
		json_object_set_new(o, "approval",
		                    d->approval ? json_string(d->approval) : json_null());
		json_object_set_new(o, "reason", json_string(d->reason));
		json_object_set_new(o, "policy_sha256", json_string(cd_policy_sha256(p)));
		if (d->nids_total > d->nids)
			json_object_set_new(o, "truncated", json_true());
		json_object_set_new(o, "temp_grants_joined",
		                    t->on ? json_integer((json_int_t)t->joined) : json_null());
		if (d->verdict != CD_VERDICT_DENY) {
			json_t *tg = json_array();
			if (tg)
				print_temps(p, d, t, tg);
			if (tg && json_array_size(tg))
				json_object_set_new(o, "temp_grants", tg);
			else
				json_decref(tg);
			json_object_set_new(o, "minimize", minimize_json(d));
		}
		if (rules)
			json_object_set(o, "rules", rules);
		s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(o);
		return;
	}
	printf("%s", cd_verdict_name(d->verdict));
	if (d->nids) {
		printf(" %s", d->forbidden ? "forbid:" : "grants:");
		for (i = 0; i < d->nids; i++)
			printf("%s%s", i ? "," : "", d->ids[i]);
		if (d->nids_total > d->nids)
			printf(",...");
	}
	if (d->profile)
		printf(" profile:%s", d->profile);
	if (d->approval)
		printf(" approval:%s", d->approval);
	printf(" (%s)\n", d->reason);
	if (d->verdict != CD_VERDICT_DENY)
		print_temps(p, d, t, NULL);
	print_minimize(d);
}

/* explain: one line per rule, or (--json) one object per rule in ctx's
 * array. */
static void explain_step(const struct cd_explain_step *st, void *ctx)
{
	json_t *rules = ctx, *o;

	if (!rules) {
		printf("  %-6s %-32s %-9s %s\n", st->forbid ? "forbid" : "grant", st->id,
		       st->matched ? "match" : "no-match", st->why);
		return;
	}
	o = json_pack("{s:s, s:s, s:b, s:s}", "id", st->id, "kind", st->forbid ? "forbid" : "grant",
	              "matched", st->matched, "why", st->why);
	if (!o || json_array_append_new(rules, o) < 0)
		cli_errorf("out of memory");
}

static int decide_cmd(const char *sub, int argc, char **argv)
{
	struct reqopts o;
	struct cd_policy *p;
	struct cd_decision d;
	struct cd_err err = { 0 };
	struct temps t;
	json_t *rules = NULL;
	int rc, explain = !strcmp(sub, "explain");

	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			policy_usage_sub(sub, stdout);
			return CD_EXIT_OK;
		}
		cli_errorf("%s needs a policy FILE first (see --help)", sub);
		return CD_EXIT_USAGE;
	}
	if (parse_request(argc, argv, 2, &o) < 0) {
		free_request(&o);
		return CD_EXIT_USAGE;
	}
	p = policy_load(argv[1]);
	if (!p) {
		free_request(&o);
		return EXIT_NOPOLICY;
	}
	/* A decision as a run or an MCP session would take it: with the live
	 * break-glass and delegated grants, unless --no-temp. */
	if (temps_join(&o, p, &t) < 0) {
		temps_release(&t);
		cd_policy_free(p);
		free_request(&o);
		return EXIT_NOPOLICY;
	}
	if (explain && o.json && !(rules = json_array())) {
		cli_errorf("out of memory");
		rc = CD_EXIT_CORDON;
		goto out;
	}
	if (explain && !o.json)
		printf("rules of %s (sha256 %.16s...):\n", argv[1], cd_policy_sha256(p));
	if (cd_policy_explain(p, &o.req, explain ? explain_step : NULL, rules, &d, &err) < 0)
		cli_errorf("%s", err.msg);
	if (explain && !o.json)
		printf("decision: ");
	print_decision(p, &d, &t, o.json, rules);
	rc = verdict_exit(&d);
out:
	json_decref(rules);
	temps_release(&t);
	cd_policy_free(p);
	free_request(&o);
	return rc;
}

/* One JSON object on stdout; CD_EXIT_CORDON when it cannot be made. */
int policy_print_json(json_t *o, int rc)
{
	char *txt = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;

	json_decref(o);
	if (!txt) {
		cli_errorf("out of memory");
		return CD_EXIT_CORDON;
	}
	printf("%s\n", txt);
	free(txt);
	return rc;
}

/* A decimal number at *s, which then points past it. */
int policy_take_number(const char **s, uint64_t *ret)
{
	size_t n = strspn(*s, "0123456789");

	if (!n || cd_parse_u64(*s, n, UINT32_MAX, ret) < 0)
		return -1;
	*s += n;
	return 0;
}

int cmd_policy(int argc, char **argv)
{
	const char *sub;

	if (argc < 2) {
		fputs(usage_main, stderr);
		return CD_EXIT_USAGE;
	}
	sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		fputs(usage_main, stdout);
		return CD_EXIT_OK;
	}
	if (!strcmp(sub, "lint"))
		return policy_lint_cmd(argc - 1, argv + 1);
	if (!strcmp(sub, "test"))
		return policy_test_cmd(argc - 1, argv + 1);
	if (!strcmp(sub, "check") || !strcmp(sub, "explain"))
		return decide_cmd(sub, argc - 1, argv + 1);
	if (!strcmp(sub, "diff"))
		return policy_diff_cmd(argc - 1, argv + 1);
	if (!strcmp(sub, "review"))
		return policy_review_cmd(argc - 1, argv + 1);
	if (!strcmp(sub, "matrix"))
		return policy_matrix_cmd(argc - 1, argv + 1);
	cli_errorf("unknown subcommand '%s' (lint, check, explain, test, diff, review, matrix)",
	           sub);
	return CD_EXIT_USAGE;
}
