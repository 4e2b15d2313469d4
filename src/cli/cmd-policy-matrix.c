/* cmd-policy-matrix.c — `cordon policy matrix FILE [--format text|markdown]
 * [--agent A] [--at TIME]`: agents x tools with their action classes, for
 * review, as an aligned terminal table or as Markdown.  src/lib/
 * policy-matrix.c computes; this file only lays out and escapes.
 *
 * Trust boundary: ids were checked by the loader, but operation names, the
 * file name and anything else shown go through cd_buf_escape() (terminal)
 * and a Markdown escape, so no byte of the policy can drive the terminal
 * or break a table. */
#include "cmd-policy-matrix.h"

#include "cli.h"

#include "util/buf.h"
#include "util/clock-time.h"
#include "policy/policy-matrix.h"
#include "policy/policy.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { FMT_TEXT, FMT_MARKDOWN, FMT_JSON };

#define EXIT_NOPOLICY 4

void policy_matrix_usage(FILE *f)
{
	fprintf(f,
	        "usage: cordon policy matrix FILE [--format text|markdown|json | --json] [--agent "
	        "A]\n"
	        "                            [--at TIME]\n"
	        "\n"
	        "Print the grant matrix for review: one row per agent, one column per tool,\n"
	        "each cell the action classes r(ead) c(reate) u(pdate) d(elete) (e)x(ecute)\n"
	        "n(etwork): lower case allowed, UPPER CASE only with approval, '!' forbidden\n"
	        "outright, '-' not granted; '~' given only within a task, '*' narrowed by a\n"
	        "forbid rule; then the first expiry among the cell's grants.  Below it,\n"
	        "every grant as one row and the tools with the class of each operation.\n"
	        "Grants expired at --at (default: now) are absent, as in a decision, and\n"
	        "listed as expired.  A letter means some request of that class may be\n"
	        "allowed: scopes are in the policy and 'cordon policy explain'.\n"
	        "--json (= --format json): one object with agents, tools, cells (each\n"
	        "with its classes by name: allow, approval, forbidden, narrowed, task_only)\n"
	        "and grants.\n"
	        "TIME is YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ (or +HH:MM for Z) or @SECONDS.\n"
	        "Exit 0 printed, 1 unknown --agent, 2 usage, 4 the policy did not load.\n");
}

/* ---- cells as strings ---- */

/* Terminal: printable and safe; ids are ASCII so widths are byte counts. */
static int put_text(struct cd_buf *b, const char *s)
{
	return cd_buf_escape(b, s, strlen(s));
}

/* Markdown: a code span when the text allows one, else every ASCII
 * punctuation byte backslash-escaped (GFM renders "\X" as "X"). */
static int put_md(struct cd_buf *b, const char *s)
{
	struct cd_buf e;
	size_t i;
	int r;

	cd_buf_init(&e, 8192);
	r = cd_buf_escape(&e, s, strlen(s));
	if (r == 0 && e.data && !memchr(e.data, '`', e.len) && !memchr(e.data, '|', e.len) &&
	    !memchr(e.data, '\\', e.len)) {
		r = cd_buf_putc(b, '`');
		if (r == 0)
			r = cd_buf_append(b, e.data, e.len);
		if (r == 0)
			r = cd_buf_putc(b, '`');
	} else {
		for (i = 0; r == 0 && e.data && i < e.len; i++) {
			unsigned char c = (unsigned char)e.data[i];
			if (c < 0x80 && ispunct(c))
				r = cd_buf_putc(b, '\\');
			if (r == 0)
				r = cd_buf_putc(b, (char)c);
		}
	}
	cd_buf_release(&e);
	return r;
}

static void fmt_time(int64_t t, char *out, size_t n)
{
	struct tm tm;
	time_t tt = (time_t)t;
	size_t w;

	if (t == CD_MATRIX_NEVER) {
		snprintf(out, n, "-");
		return;
	}
	if (!gmtime_r(&tt, &tm))
		w = 0;
	else if (t % 86400 == 0)
		w = strftime(out, n, "%Y-%m-%d", &tm);
	else
		w = cd_time_format(t, out, n) == 0;
	if (w == 0)
		snprintf(out, n, "@%lld", (long long)t);
}

static void cell_string(const struct cd_matrix_cell *c, char *out, size_t n)
{
	char mask[7], date[40];
	int w;

	cd_matrix_cell_mask(c, mask);
	if (c->ngrants)
		fmt_time(c->expires, date, sizeof date);
	else
		snprintf(date, sizeof date, "%s", c->nexpired ? "(expired)" : "");
	w = snprintf(out, n, "%s%s%s%s%s", mask, c->task_only ? "~" : "", c->narrowed ? "*" : "",
	             date[0] ? " " : "", date);
	if (w < 0 || (size_t)w >= n)
		snprintf(out, n, "%s", mask);
}

static void grant_mask(const struct cd_matrix_grant *g, char out[7])
{
	unsigned a;

	for (a = 0; a < CD_ACTION_COUNT; a++) {
		char l = cd_action_letter((enum cd_action)a);
		if (!(g->actions & (1u << a)))
			out[a] = '-';
		else
			out[a] = g->approval ? (char)(l - 'a' + 'A') : l;
	}
	out[CD_ACTION_COUNT] = '\0';
}

/* ---- a table of strings ---- */

struct table {
	size_t ncols, n, cap;
	char **cell; /* n cells, ncols a row, row 0 the header */
	int md;
	int indent; /* text: two spaces before each row */
	int oom;
};

static void table_add(struct table *t, const char *s, int code)
{
	struct cd_buf b;
	size_t n = t->n;
	int r;

	if (t->oom)
		return;
	if (n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **v = reallocarray(t->cell, cap, sizeof *v);
		if (!v) {
			t->oom = 1;
			return;
		}
		t->cell = v;
		t->cap = cap;
	}
	cd_buf_init(&b, 8192);
	r = t->md && code ? put_md(&b, s) : put_text(&b, s);
	if (r < 0 || cd_buf_putc(&b, '\0') < 0) {
		cd_buf_release(&b);
		t->oom = 1;
		return;
	}
	t->cell[n] = cd_buf_take(&b);
	if (!t->cell[n])
		t->oom = 1;
	else
		t->n++;
}

/* Cells are added left to right; a row ends every ncols cells. */
static void table_cell(struct table *t, const char *s, int code)
{
	table_add(t, s, code);
}

static void table_print(const struct table *t)
{
	size_t *w, r, c, nrows = t->n / t->ncols;

	w = calloc(t->ncols ? t->ncols : 1, sizeof *w);
	if (!w)
		return;
	for (r = 0; r < nrows; r++)
		for (c = 0; c < t->ncols; c++) {
			size_t l = strlen(t->cell[r * t->ncols + c]);
			if (l > w[c])
				w[c] = l;
		}
	for (r = 0; r < nrows; r++) {
		if (t->indent && !t->md)
			printf("  ");
		for (c = 0; c < t->ncols; c++) {
			const char *s = t->cell[r * t->ncols + c];
			if (t->md)
				printf("| %-*s ", (int)w[c], s);
			else if (c + 1 < t->ncols)
				printf("%-*s  ", (int)w[c], s);
			else
				printf("%s", s);
		}
		printf("%s\n", t->md ? "|" : "");
		if (t->md && r == 0) {
			for (c = 0; c < t->ncols; c++) {
				printf("|");
				for (size_t k = 0; k < w[c] + 2; k++)
					putchar('-');
			}
			printf("|\n");
		}
	}
	free(w);
}

static void table_release(struct table *t)
{
	size_t i;
	for (i = 0; i < t->n; i++)
		free(t->cell[i]);
	free(t->cell);
}

/* ---- the report ---- */

/* The title line (the file's name escaped for the format) and the legend. */
static void print_heading(const char *file, const char *sha, int64_t at, int md)
{
	char when[40];
	struct cd_buf b;

	fmt_time(at, when, sizeof when);
	cd_buf_init(&b, 8192);
	if ((md ? put_md(&b, file) : put_text(&b, file)) < 0 || cd_buf_putc(&b, '\0') < 0)
		cd_buf_reset(&b);
	if (md)
		printf("# Grant matrix\n\nPolicy %s, sha256 `%s`, at %s.\n\n",
		       b.data ? b.data : "?", sha, when);
	else
		printf("grant matrix of %s (sha256 %.16s...) at %s\n", b.data ? b.data : "?", sha,
		       when);
	cd_buf_release(&b);
	if (md)
		printf("`r` read, `c` create, `u` update, `d` delete, `x` execute, `n` network: "
		       "lower case\nallowed, UPPER CASE only with approval, `!` forbidden "
		       "outright, "
		       "`-` not granted;\n`~` only within a task, `*` narrowed by a forbid rule; "
		       "then "
		       "the first expiry.\n\n");
	else
		printf("r read, c create, u update, d delete, x execute, n network: lower case\n"
		       "allowed, UPPER CASE only with approval, '!' forbidden outright, '-' not "
		       "granted;\n'~' only within a task, '*' narrowed by a forbid rule; then the "
		       "first expiry.\n\n");
}

static int print_matrix(const struct cd_matrix *m, const char *file, const char *sha, int64_t at,
                        int md)
{
	struct table t = { .md = md };
	char buf[128], when[40];
	size_t r, c;

	print_heading(file, sha, at, md);

	/* The matrix. */
	t.ncols = m->ntools + 1;
	table_cell(&t, "agent", 0);
	for (c = 0; c < m->ntools; c++)
		table_cell(&t, m->tools[c].id, 1);
	for (r = 0; r < m->nagents; r++) {
		table_cell(&t, m->agents[r], 1);
		for (c = 0; c < m->ntools; c++) {
			cell_string(cd_matrix_cell(m, r, c), buf, sizeof buf);
			table_cell(&t, buf, 1);
		}
	}
	if (t.oom)
		goto oom;
	if (m->ntools == 0)
		printf("(no tools)\n");
	else
		table_print(&t);
	table_release(&t);

	/* Every grant. */
	printf(md ? "\n## Grants\n\n" : "\ngrants:\n");
	memset(&t, 0, sizeof t);
	t.md = md;
	t.indent = 1;
	t.ncols = 9;
	{
		static const char *const head[] = { "agent",   "tool",    "actions",
			                            "grant",   "task",    "approval",
			                            "profile", "expires", "state" };
		for (c = 0; c < 9; c++)
			table_cell(&t, head[c], 0);
	}
	for (r = 0; r < m->ngrants; r++) {
		const struct cd_matrix_grant *g = &m->grants[r];
		char mask[7];
		grant_mask(g, mask);
		fmt_time(g->expires, when, sizeof when);
		table_cell(&t, g->agent, 1);
		table_cell(&t, g->tool, 1);
		table_cell(&t, mask, 1);
		table_cell(&t, g->id, 1);
		table_cell(&t, g->task ? g->task : "-", !!g->task);
		table_cell(&t, g->approval ? g->approval : "none", !!g->approval);
		table_cell(&t, g->profile ? g->profile : "-", !!g->profile);
		table_cell(&t, when, 0);
		table_cell(&t, g->expired ? "expired" : "in force", 0);
	}
	if (t.oom)
		goto oom;
	if (m->ngrants == 0)
		printf("(none)\n");
	else
		table_print(&t);
	table_release(&t);

	/* The inventory: what each operation counts as. */
	printf(md ? "\n## Tools\n\n" : "\ntools:\n");
	memset(&t, 0, sizeof t);
	t.md = md;
	t.indent = 1;
	t.ncols = 3;
	table_cell(&t, "tool", 0);
	table_cell(&t, "kind", 0);
	table_cell(&t, "operations", 0);
	for (c = 0; c < m->ntools; c++) {
		const struct cd_matrix_tool *tl = &m->tools[c];
		struct cd_buf ops;
		size_t k;
		cd_buf_init(&ops, 65536);
		for (k = 0; k < tl->nops; k++)
			(void)cd_buf_printf(&ops, "%s%s=%c", k ? " " : "", tl->op_names[k],
			                    cd_action_letter((enum cd_action)tl->op_actions[k]));
		if (cd_buf_putc(&ops, '\0') < 0)
			t.oom = 1;
		table_cell(&t, tl->id, 1);
		table_cell(&t, tl->kind ? tl->kind : "-", 0);
		table_cell(&t, tl->nops && ops.data ? ops.data : "-", tl->nops > 0);
		cd_buf_release(&ops);
	}
	if (t.oom)
		goto oom;
	if (m->ntools)
		table_print(&t);
	table_release(&t);
	return 0;
oom:
	table_release(&t);
	cli_errorf("out of memory");
	return -1;
}

/* The agents' limits behind `cordon mcp --listen` (mcp_front:), when any
 * agent (or the one asked for) sets some. */
static void print_limits(const struct cd_policy *p, const char *only, int md)
{
	const char *ids[256];
	struct cd_agent_limits l;
	size_t n = cd_policy_agents(p, ids, 256), i;
	int head = 0;

	for (i = 0; i < n && i < 256; i++) {
		if ((only && strcmp(only, ids[i])) || !cd_policy_agent_limits(p, ids[i], &l))
			continue;
		if (!head++)
			printf(md ? "\n## Limits behind `cordon mcp --listen`\n\n"
			          : "\nlimits behind cordon mcp --listen (mcp_front):\n");
		printf("%s%s: max_sessions %s%.0u, max_request %s%.0llu, max_calls_per_minute "
		       "%s%.0u\n",
		       md ? "- " : "  ", ids[i], l.max_sessions ? "" : "(flag)", l.max_sessions,
		       l.max_request ? "" : "(flag)", (unsigned long long)l.max_request,
		       l.max_calls_per_minute ? "" : "none", l.max_calls_per_minute);
	}
}

/* ---- --json: the same matrix for a program ---------------------------- */

static json_t *actions_json(unsigned mask)
{
	json_t *a = json_array();
	int i;

	for (i = 0; a && i < CD_ACTION_COUNT; i++)
		if ((mask & (1u << i)) &&
		    json_array_append_new(a, json_string(cd_action_name((enum cd_action)i))) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* A time as fmt_time() writes it, null for "never". */
static json_t *time_json(int64_t t)
{
	char buf[32];

	if (t == CD_MATRIX_NEVER)
		return json_null();
	fmt_time(t, buf, sizeof buf);
	return json_string(buf);
}

static json_t *nullable(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *cells_json(const struct cd_matrix *m)
{
	json_t *cells = json_array(), *o;
	size_t r, c;

	for (r = 0; cells && r < m->nagents; r++) {
		for (c = 0; c < m->ntools; c++) {
			const struct cd_matrix_cell *x = cd_matrix_cell(m, r, c);
			o = json_pack("{s:s, s:s, s:o*, s:o*, s:o*, s:o*, s:o*, s:I, s:I, s:o*}",
			              "agent", m->agents[r], "tool", m->tools[c].id, "allow",
			              actions_json(x->allow), "approval", actions_json(x->approval),
			              "forbidden", actions_json(x->forbidden), "narrowed",
			              actions_json(x->narrowed), "task_only",
			              actions_json(x->task_only), "grants", (json_int_t)x->ngrants,
			              "expired", (json_int_t)x->nexpired, "expires",
			              time_json(x->expires));
			if (!o || json_array_append_new(cells, o) < 0) {
				json_decref(cells);
				return NULL;
			}
		}
	}
	return cells;
}

static json_t *grants_json(const struct cd_matrix *m)
{
	json_t *grants = json_array(), *o;
	size_t i;

	for (i = 0; grants && i < m->ngrants; i++) {
		const struct cd_matrix_grant *g = &m->grants[i];
		o = json_pack("{s:s, s:s, s:o*, s:s, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*, s:b}",
		              "id", g->id, "agent", g->agent, "task", nullable(g->task), "tool",
		              g->tool, "actions", actions_json(g->actions), "approval",
		              nullable(g->approval), "profile", nullable(g->profile), "owner",
		              nullable(g->owner), "review_by", time_json(g->review_by), "expires",
		              time_json(g->expires), "expired", g->expired);
		if (!o || json_array_append_new(grants, o) < 0) {
			json_decref(grants);
			return NULL;
		}
	}
	return grants;
}

static int print_matrix_json(const struct cd_matrix *m, const char *file, const char *sha,
                             int64_t at)
{
	json_t *agents = json_array(), *tools = json_array(), *o;
	char *txt;
	size_t i;

	for (i = 0; agents && i < m->nagents; i++)
		if (json_array_append_new(agents, json_string(m->agents[i])) < 0)
			break;
	for (i = 0; tools && i < m->ntools; i++)
		if (json_array_append_new(tools, json_pack("{s:s, s:s}", "id", m->tools[i].id,
		                                           "kind", m->tools[i].kind)) < 0)
			break;
	o = json_pack("{s:s, s:s, s:o*, s:o*, s:o*, s:o*, s:o*}", "file", file, "policy_sha256",
	              sha, "at", time_json(at), "agents", agents, "tools", tools, "cells",
	              cells_json(m), "grants", grants_json(m));
	txt = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	json_decref(o);
	if (!txt) {
		cli_errorf("out of memory");
		return -ENOMEM;
	}
	printf("%s\n", txt);
	free(txt);
	return 0;
}

static int missing; /* an option lacked its value */

static const struct option matrix_opts[] = {
	{ "format", required_argument, NULL, 0 }, { "agent", required_argument, NULL, 0 },
	{ "at", required_argument, NULL, 0 },     { "json", no_argument, NULL, 0 },
	{ "help", no_argument, NULL, 'h' },       { NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_policy_matrix = matrix_opts; /* cordon completion */

/* "--name value" or "--name=value"; advances *i past the value. */
static const char *optarg_of(int argc, char **argv, int *i, const char *name)
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
		missing = 1;
		return "";
	}
	return argv[++*i];
}

int policy_matrix_cmd(int argc, char **argv)
{
	struct cd_policy *p = NULL;
	struct cd_matrix *m = NULL;
	struct cd_err err = { 0 };
	const char *file = NULL, *agent = NULL;
	int64_t at = (int64_t)time(NULL);
	int i, fmt = FMT_TEXT, r;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			policy_matrix_usage(stdout);
			return CD_EXIT_OK;
		} else if ((v = optarg_of(argc, argv, &i, "--format"))) {
			if (!strcmp(v, "text"))
				fmt = FMT_TEXT;
			else if (!strcmp(v, "markdown"))
				fmt = FMT_MARKDOWN;
			else if (!strcmp(v, "json"))
				fmt = FMT_JSON;
			else {
				cli_errorf("--format '%s': text, markdown or json", v);
				return CD_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--json")) {
			fmt = FMT_JSON;
		} else if ((v = optarg_of(argc, argv, &i, "--agent"))) {
			agent = v;
		} else if ((v = optarg_of(argc, argv, &i, "--at"))) {
			if (cd_policy_parse_time(v, strlen(v), &at) < 0) {
				cli_errorf("--at '%s': write " CLI_TIME_FORMS, v);
				return CD_EXIT_USAGE;
			}
		} else if (a[0] == '-') {
			cli_opt_unknown(a, matrix_opts);
			return CD_EXIT_USAGE;
		} else if (file) {
			cli_errorf("matrix takes one policy FILE and options (see --help)");
			return CD_EXIT_USAGE;
		} else {
			file = a;
		}
		if (missing)
			return CD_EXIT_USAGE;
	}
	if (!file) {
		cli_errorf("matrix needs a policy FILE (see --help)");
		return CD_EXIT_USAGE;
	}
	if (cd_policy_load_file(file, &p, &err) < 0) {
		cli_errorf("%s", err.msg);
		return EXIT_NOPOLICY;
	}
	r = cd_policy_matrix(p, agent, at, &m);
	if (r == -ENOENT) {
		cli_errorf("unknown agent '%s' (not declared in the policy)", agent);
		cd_policy_free(p);
		return CD_EXIT_FAIL;
	}
	if (r < 0) {
		cli_errorf("out of memory");
		cd_policy_free(p);
		return CD_EXIT_FAIL;
	}
	if (fmt == FMT_JSON)
		r = print_matrix_json(m, file, cd_policy_sha256(p), at);
	else
		r = print_matrix(m, file, cd_policy_sha256(p), at, fmt == FMT_MARKDOWN);
	if (r == 0 && fmt != FMT_JSON)
		print_limits(p, agent, fmt == FMT_MARKDOWN);
	cd_matrix_free(m);
	cd_policy_free(p);
	return r < 0 ? CD_EXIT_FAIL : CD_EXIT_OK;
}
