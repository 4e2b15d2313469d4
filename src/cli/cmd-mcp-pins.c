/* cmd-mcp-pins.c — `cordon mcp pins`: the operator lists the pinned tool
 * definitions of an MCP server, approves the pending ones (each approval
 * an mcp.pin audit record) and shows what changed.  The gateway session
 * itself is cmd-mcp.c.  Names from the state database are escaped before
 * they reach the terminal. */
#include "gate/approval-sign.h"
#include "cli.h"

#include "cli-audit.h"
#include "cmd-mcp.h"
#include "mcp/mcp-pins.h"
#include "util/buf.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- pins ------------------------------------------------------------- */

struct pins_opts {
	const char *server, *state, *audit, *sha256, *key;
	int all, json;
	char **tools;
	int ntools;
};

/* The options, also for `cordon completion` (cli-complete.c). */
static const struct option pins_opts_table[] = {
	{ "server", required_argument, NULL, 's' },
	{ "state", required_argument, NULL, 'S' },
	{ "audit", required_argument, NULL, 'A' },
	{ "sha256", required_argument, NULL, 'H' },
	{ "all", no_argument, NULL, 'a' },
	{ "json", no_argument, NULL, 'j' },
	{ "key", required_argument, NULL, 'K' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_mcp_pins = pins_opts_table;

static int pins_args(int argc, char **argv, struct pins_opts *o)
{
	int c;

	memset(o, 0, sizeof *o);
	optind = 1;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, "h", pins_opts_table, CD_EXIT_USAGE)) != -1) {
		switch (c) {
		case 's':
			o->server = optarg;
			break;
		case 'S':
			o->state = optarg;
			break;
		case 'A':
			o->audit = optarg;
			break;
		case 'H':
			o->sha256 = optarg;
			break;
		case 'a':
			o->all = 1;
			break;
		case 'K':
			o->key = optarg;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'h':
			mcp_usage(stdout);
			exit(CD_EXIT_OK);
		default:
			cli_errorf("unknown or incomplete option '%s' (see --help)",
			           argv[optind - 1]);
			return -1;
		}
	}
	o->tools = argv + optind;
	o->ntools = argc - optind;
	return 0;
}

static void put_escaped(const char *s)
{
	struct cd_buf b;

	cd_buf_init(&b, 1 << 20);
	if (cd_buf_escape(&b, s, strlen(s)) == 0)
		fputs(b.data ? b.data : "", stdout);
	cd_buf_release(&b);
}

static int list_row(const struct cd_mcp_pin_row *row, void *ctx)
{
	json_t *arr = ctx;

	if (arr) {
		json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:s?}", "server",
		                                     row->server, "tool", row->tool, "sha256",
		                                     row->sha256, "state", row->state, "first_seen",
		                                     (json_int_t)row->first_seen, "last_seen",
		                                     (json_int_t)row->last_seen, "approved_by",
		                                     row->approved_by));
		return 0;
	}
	put_escaped(row->server);
	fputc('/', stdout);
	put_escaped(row->tool);
	printf(" %s %.16s", row->state, row->sha256);
	if (row->approved_by) {
		fputs(" by ", stdout);
		put_escaped(row->approved_by);
	}
	fputc('\n', stdout);
	return 0;
}

struct approve_ctx {
	struct cd_state *st;
	const struct pins_opts *o;
	int approved;
	struct cd_audit *audit;
	const char *by;
	struct cd_approver_key *key; /* NULL: unsigned */
};

static int approve_one(struct approve_ctx *a, const char *tool)
{
	struct cd_err err = { 0, "" };
	char sha[65];

	if (cd_mcp_pin_approve_recorded(a->st, a->audit, a->o->server, tool, a->o->sha256, a->by,
	                                (int64_t)time(NULL), a->key ? cd_approver_row_sign : NULL,
	                                a->key, sha, &err) < 0) {
		cli_errorf("%s", err.msg);
		return -1;
	}
	printf("approved %s/%s %.16s\n", a->o->server, tool, sha);
	a->approved++;
	return 0;
}

static int pending_row(const struct cd_mcp_pin_row *row, void *ctx)
{
	json_t *names = ctx;
	size_t i;

	if (strcmp(row->state, "pending"))
		return 0;
	for (i = 0; i < json_array_size(names); i++)
		if (!strcmp(json_string_value(json_array_get(names, i)), row->tool))
			return 0;
	return json_array_append_new(names, json_string(row->tool)) ? -ENOMEM : 0;
}

struct diff_ctx {
	json_t *approved, *pending;
	char asha[65], psha[65];
};

static int diff_row(const struct cd_mcp_pin_row *row, void *ctx)
{
	struct diff_ctx *d = ctx;
	json_t **slot = !strcmp(row->state, "approved")  ? &d->approved
	                : !strcmp(row->state, "pending") ? &d->pending
	                                                 : NULL;
	char *sha = slot == &d->approved ? d->asha : d->psha;

	if (!slot)
		return 0;
	json_decref(*slot);
	*slot = json_loads(row->definition, 0, NULL);
	snprintf(sha, 65, "%s", row->sha256);
	return 0;
}

/* One line per top-level member that differs: "- key: old" / "+ key: new". */
static void show_diff(json_t *a, json_t *b)
{
	const char *key;
	json_t *v;

	json_object_foreach(a, key, v)
	{
		json_t *w = json_object_get(b, key);
		if (!w || !json_equal(v, w)) {
			char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
			printf("- %s: ", key);
			put_escaped(s ? s : "?");
			fputc('\n', stdout);
			free(s);
		}
	}
	json_object_foreach(b, key, v)
	{
		json_t *w = json_object_get(a, key);
		if (!w || !json_equal(v, w)) {
			char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
			printf("+ %s: ", key);
			put_escaped(s ? s : "?");
			fputc('\n', stdout);
			free(s);
		}
	}
}

int mcp_pins_cmd(int argc, char **argv)
{
	struct pins_opts o;
	struct cd_state *st = NULL;
	struct cd_err err = { 0, "" };
	const char *sub = argc > 1 ? argv[1] : NULL;
	int rc = CD_EXIT_CORDON, i;

	if (!sub || !strcmp(sub, "--help") || !strcmp(sub, "-h")) {
		mcp_usage(sub ? stdout : stderr);
		return sub ? CD_EXIT_OK : CD_EXIT_USAGE;
	}
	if (pins_args(argc - 1, argv + 1, &o) < 0)
		return CD_EXIT_USAGE;
	if (strcmp(sub, "list") && !o.server) {
		cli_errorf("pins %s needs --server NAME", sub);
		return CD_EXIT_USAGE;
	}
	if (mcp_open_state(o.state, &st) < 0)
		return CD_EXIT_CORDON;
	if (!strcmp(sub, "list")) {
		json_t *arr = o.json ? json_array() : NULL;
		if (cd_mcp_pins_list(st, o.server, NULL, list_row, arr, &err) < 0) {
			cli_errorf("%s", err.msg);
		} else {
			if (arr) {
				char *s = json_dumps(arr, JSON_COMPACT);
				if (s)
					puts(s);
				free(s);
			}
			rc = CD_EXIT_OK;
		}
		json_decref(arr);
	} else if (!strcmp(sub, "approve")) {
		struct approve_ctx a = { st, &o, 0, NULL, NULL, NULL };
		struct passwd *pw = getpwuid(geteuid());
		json_t *names = json_array();

		a.by = pw && pw->pw_name ? pw->pw_name : "operator";
		if ((o.all != 0) == (o.ntools != 0) || (o.all && o.sha256) ||
		    (o.sha256 && o.ntools != 1)) {
			cli_errorf("pins approve: name TOOL(s) or --all (--sha256 with one TOOL)");
			json_decref(names);
			cd_state_close(st);
			return CD_EXIT_USAGE;
		}
		if (cli_audit_open(o.audit, &a.audit) < 0 ||
		    cli_approver_key_open(o.key, &a.key) < 0)
			goto done_approve;
		if (o.all && cd_mcp_pins_list(st, o.server, NULL, pending_row, names, &err) < 0) {
			cli_errorf("%s", err.msg);
			goto done_approve;
		}
		for (i = 0; i < o.ntools; i++)
			json_array_append_new(names, json_string(o.tools[i]));
		rc = CD_EXIT_OK;
		for (i = 0; i < (int)json_array_size(names); i++)
			if (approve_one(&a, json_string_value(json_array_get(names, i))) < 0)
				rc = CD_EXIT_FAIL;
		/* --all over nothing pending is done, not failed; a named TOOL
		 * without a pending definition stays an error. */
		if (o.all && json_array_size(names) == 0)
			printf("nothing pending for server '%s'\n", o.server);
		else if (!a.approved)
			rc = CD_EXIT_FAIL;
	done_approve:
		cd_approver_key_free(a.key);
		json_decref(names);
		cd_audit_close(a.audit);
	} else if (!strcmp(sub, "diff")) {
		struct diff_ctx d;

		memset(&d, 0, sizeof d);
		if (o.ntools != 1) {
			cli_errorf("pins diff: name one TOOL");
			rc = CD_EXIT_USAGE;
		} else if (cd_mcp_pins_list(st, o.server, o.tools[0], diff_row, &d, &err) < 0) {
			cli_errorf("%s", err.msg);
		} else if (!d.pending) {
			printf("no pending definition of %s/%s\n", o.server, o.tools[0]);
			rc = CD_EXIT_OK;
		} else {
			printf("--- approved %.16s\n+++ pending %.16s\n",
			       d.approved ? d.asha : "(none)", d.psha);
			show_diff(d.approved ? d.approved : json_object(), d.pending);
			rc = CD_EXIT_OK;
		}
		json_decref(d.approved);
		json_decref(d.pending);
	} else {
		cli_errorf("unknown pins command '%s' (list, approve, diff)", sub);
		rc = CD_EXIT_USAGE;
	}
	cd_state_close(st);
	return rc;
}
