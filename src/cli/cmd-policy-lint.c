/* cmd-policy-lint.c — `cordon policy lint` and `cordon policy test`
 * (cmd-policy.c): load each file strictly, run its inline examples and the
 * generated boundary cases, and print the findings, as text or JSON.
 *
 * Trust boundary: the policy file is untrusted input; what is printed from
 * it comes from the loader's checked messages. */
#include "cli.h"

#include "cmd-policy-int.h"

#include "policy/policy-review.h"

#include <string.h>
#include <time.h>

/* `lint --json` of a refused file: the loader's "FILE:LINE:COL: message"
 * split for a program (a CI check, an editor). */
static int lint_json_error(const char *file, const char *msg)
{
	size_t fl = strlen(file);
	const char *q = msg + fl + 1;
	uint64_t line = 0, col = 0;
	json_t *o;

	if (strncmp(msg, file, fl) != 0 || msg[fl] != ':' || policy_take_number(&q, &line) < 0 ||
	    *q++ != ':' || policy_take_number(&q, &col) < 0 || strncmp(q, ": ", 2) != 0) {
		line = col = 0;
		q = msg;
	} else {
		q += 2;
	}
	o = json_pack("{s:s,s:b,s:s}", "file", file, "ok", 0, "error", q);
	if (o && line) {
		json_object_set_new(o, "line", json_integer((json_int_t)line));
		json_object_set_new(o, "column", json_integer((json_int_t)col));
	}
	return policy_print_json(o, CD_EXIT_FAIL);
}

struct lint_warn {
	const char *file;
	json_t *arr; /* --json: the warnings; NULL: printed */
};

/* FILE:LINE:COL: warning: MSG on stderr, as compilers write them (editors
 * jump to them), or one {line, column, message} for --json. */
static void lint_warn_one(unsigned line, unsigned col, const char *msg, void *ctx)
{
	struct lint_warn *lw = ctx;
	struct cd_buf f, m;

	if (lw->arr) {
		json_array_append_new(lw->arr,
		                      json_pack("{s:I,s:I,s:s}", "line", (json_int_t)line, "column",
		                                (json_int_t)col, "message", msg));
		return;
	}
	cd_buf_init(&f, 4096);
	cd_buf_init(&m, 4096);
	if (cd_buf_escape(&f, lw->file, strlen(lw->file)) == 0 &&
	    cd_buf_escape(&m, msg, strlen(msg)) == 0)
		fprintf(stderr, "%s:%u:%u: warning: %s\n", f.data, line, col, m.data);
	cd_buf_release(&f);
	cd_buf_release(&m);
}

static int lint_json_ok(const char *file, const struct cd_policy *p)
{
	struct cd_policy_stats st;
	struct lint_warn lw = { file, json_array() };
	json_t *o;

	cd_policy_stats(p, &st);
	if (lw.arr)
		cd_policy_warnings(p, (int64_t)time(NULL), lint_warn_one, &lw);
	o = json_pack("{s:s,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:o}", "file", file, "ok", 1,
	              "agents", (json_int_t)st.agents, "tasks", (json_int_t)st.tasks, "tools",
	              (json_int_t)st.tools, "profiles", (json_int_t)st.profiles, "grants",
	              (json_int_t)st.grants, "forbids", (json_int_t)st.forbids, "examples",
	              (json_int_t)st.examples, "sha256", cd_policy_sha256(p), "warnings", lw.arr);
	return policy_print_json(o, CD_EXIT_OK);
}

/* One FILE of `policy lint`: 0 ok, 1 failed (reported), 125 out of memory. */
static int lint_one(const char *file, int json)
{
	struct cd_policy *p = NULL;
	struct cd_policy_stats st;
	struct cd_err err = { 0 };
	struct lint_warn lw = { file, NULL };
	int rc;

	if (cd_policy_load_file(file, &p, &err) < 0) {
		if (json)
			lint_json_error(file, err.msg);
		cli_errorf("%s", err.msg);
		return CD_EXIT_FAIL;
	}
	if (json) {
		rc = lint_json_ok(file, p);
		cd_policy_free(p);
		return rc;
	}
	lw.file = file;
	cd_policy_warnings(p, (int64_t)time(NULL), lint_warn_one, &lw);
	cd_policy_stats(p, &st);
	printf("%s: ok (%zu agents, %zu tasks, %zu tools, %zu profiles, %zu grants, %zu forbid "
	       "rules, %zu examples; sha256 %s)\n",
	       file, st.agents, st.tasks, st.tools, st.profiles, st.grants, st.forbids, st.examples,
	       cd_policy_sha256(p));
	cd_policy_free(p);
	return CD_EXIT_OK;
}

/* Every FILE is linted and reported (with --json, one object a line, one
 * per FILE, in order); exit 1 when any failed. */
int policy_lint_cmd(int argc, char **argv)
{
	int i, json = 0, nfiles = 0, rc = CD_EXIT_OK, r;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			policy_usage_sub("lint", stdout);
			return CD_EXIT_OK;
		}
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (argv[i][0] == '-') {
			cli_opt_unknown(argv[i], policy_json_opts);
			return CD_EXIT_USAGE;
		} else {
			nfiles++;
		}
	}
	if (!nfiles) {
		cli_errorf("lint takes one or more policy FILEs and --json (see --help)");
		return CD_EXIT_USAGE;
	}
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			continue;
		r = lint_one(argv[i], json);
		if (r == CD_EXIT_CORDON)
			return r;
		if (r != CD_EXIT_OK)
			rc = CD_EXIT_FAIL;
	}
	return rc;
}

struct test_ctx {
	size_t n;
	json_t *cases; /* --json: one {"pass", "case"} per case */
};

static void test_line(int pass, const char *desc, void *ctx)
{
	struct test_ctx *t = ctx;
	struct cd_buf b;
	json_t *o;

	t->n++;
	if (t->cases) {
		o = json_pack("{s:b, s:s}", "pass", pass, "case", desc);
		if (!o || json_array_append_new(t->cases, o) < 0)
			cli_errorf("out of memory");
		return;
	}
	cd_buf_init(&b, 2048);
	if (cd_buf_escape(&b, desc, strlen(desc)) < 0)
		cd_buf_reset(&b);
	printf("%sok %zu - %s\n", pass ? "" : "not ", t->n, b.data ? b.data : "");
	cd_buf_release(&b);
}

int policy_test_cmd(int argc, char **argv)
{
	struct cd_policy *p;
	struct test_ctx t = { 0, NULL };
	const char *file = NULL;
	size_t failed = 0;
	int i, json = 0, rc;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			policy_usage_sub("test", stdout);
			return CD_EXIT_OK;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (argv[i][0] == '-') {
			cli_opt_unknown(argv[i], policy_json_opts);
			return CD_EXIT_USAGE;
		} else if (file) {
			cli_errorf("test takes one policy FILE and --json (see --help)");
			return CD_EXIT_USAGE;
		} else {
			file = argv[i];
		}
	}
	if (!file) {
		cli_errorf("test takes one policy FILE (see --help)");
		return CD_EXIT_USAGE;
	}
	p = policy_load(file);
	if (!p) {
		if (json)
			return policy_print_json(json_pack("{s:s, s:b, s:i, s:i}", "file", file,
			                                   "loaded", 0, "total", 0, "failed", 0),
			                         CD_EXIT_FAIL);
		printf("not ok 1 - %s loads\n1..1\n", file);
		return CD_EXIT_FAIL;
	}
	if (json && !(t.cases = json_array())) {
		cli_errorf("out of memory");
		cd_policy_free(p);
		return CD_EXIT_CORDON;
	}
	if (cd_policy_test(p, test_line, &t, &failed) < 0) {
		cli_errorf("out of memory");
		json_decref(t.cases);
		cd_policy_free(p);
		return CD_EXIT_FAIL;
	}
	rc = failed ? CD_EXIT_FAIL : CD_EXIT_OK;
	if (json) {
		rc = policy_print_json(json_pack("{s:s, s:b, s:s, s:I, s:I, s:o}", "file", file,
		                                 "loaded", 1, "policy_sha256", cd_policy_sha256(p),
		                                 "total", (json_int_t)t.n, "failed",
		                                 (json_int_t)failed, "cases", t.cases),
		                       rc);
		cd_policy_free(p);
		return rc;
	}
	printf("1..%zu\n", t.n);
	if (failed)
		printf("# %zu of %zu failed\n", failed, t.n);
	cd_policy_free(p);
	return rc;
}
