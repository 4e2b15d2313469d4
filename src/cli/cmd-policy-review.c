/* cmd-policy-review.c — `cordon policy diff` and `cordon policy review`
 * (cmd-policy.c): what a new version of a policy widens, and what in a
 * policy needs attention (grants ending or due for review, grants the
 * audit log shows unused), as text or JSON.
 *
 * Trust boundary: both policy files and the audit log are read, never
 * written; src/lib/policy-diff.c and policy-review.c do the work. */
#include "cli.h"

#include "cli-audit.h"
#include "cmd-policy-int.h"

#include "util/clock-time.h"
#include "util/num.h"
#include "policy/policy-diff.h"
#include "policy/policy-review.h"

#include <errno.h>
#include <string.h>
#include <time.h>

static const struct option review_opts[] = {
	{ "json", no_argument, NULL, 0 },         { "no-audit", no_argument, NULL, 0 },
	{ "audit", required_argument, NULL, 0 },  { "soon", required_argument, NULL, 0 },
	{ "unused", required_argument, NULL, 0 }, { "at", required_argument, NULL, 0 },
	{ "help", no_argument, NULL, 'h' },       { NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_policy_review = review_opts; /* cordon completion */

struct diff_out {
	int json;
	json_t *widen, *narrow;
};

static void diff_line(const struct cd_diff_item *it, void *ctx)
{
	struct diff_out *o = ctx;
	json_t *j;

	if (!o->json) {
		printf("%s %s %s %s: %s\n",
		       it->widens                       ? "+"
		       : !strcmp(it->change, "covered") ? "="
		                                        : "-",
		       it->kind, it->id, it->change, it->detail);
		return;
	}
	j = json_pack("{s:s, s:s, s:s, s:s}", "kind", it->kind, "id", it->id, "change", it->change,
	              "detail", it->detail);
	if (j)
		json_array_append_new(it->widens ? o->widen : o->narrow, j);
}

int policy_diff_cmd(int argc, char **argv)
{
	struct diff_out o = { 0, NULL, NULL };
	struct cd_policy *a, *b;
	const char *files[2] = { NULL, NULL };
	size_t nf = 0, widen = 0, narrow = 0;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			policy_usage_sub("diff", stdout);
			return CD_EXIT_OK;
		} else if (!strcmp(argv[i], "--json")) {
			o.json = 1;
		} else if (argv[i][0] == '-') {
			cli_opt_unknown(argv[i], policy_json_opts);
			return CD_EXIT_USAGE;
		} else if (nf == 2) {
			cli_errorf("diff takes OLD NEW [--json] (see --help)");
			return CD_EXIT_USAGE;
		} else {
			files[nf++] = argv[i];
		}
	}
	if (nf != 2) {
		cli_errorf("diff takes OLD NEW [--json] (see --help)");
		return CD_EXIT_USAGE;
	}
	a = policy_load(files[0]);
	if (!a)
		return EXIT_NOPOLICY;
	b = policy_load(files[1]);
	if (!b) {
		cd_policy_free(a);
		return EXIT_NOPOLICY;
	}
	if (o.json) {
		o.widen = json_array();
		o.narrow = json_array();
	}
	if ((o.json && (!o.widen || !o.narrow)) ||
	    cd_policy_diff(a, b, diff_line, &o, &widen, &narrow) < 0) {
		cli_errorf("out of memory");
		widen = 1; /* fail closed: an unfinished diff is not "nothing new" */
	} else if (o.json) {
		json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:b, s:O, s:O}", "old", files[0], "new",
		                      files[1], "old_sha256", cd_policy_sha256(a), "new_sha256",
		                      cd_policy_sha256(b), "widens", widen > 0, "widening", o.widen,
		                      "narrowing", o.narrow);
		char *s = r ? json_dumps(r, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
		if (s)
			printf("%s\n", s);
		else {
			cli_errorf("out of memory");
			widen = 1;
		}
		free(s);
		json_decref(r);
	} else {
		printf("%zu widening, %zu narrowing (old sha256 %.16s..., new sha256 %.16s...)\n",
		       widen, narrow, cd_policy_sha256(a), cd_policy_sha256(b));
	}
	json_decref(o.widen);
	json_decref(o.narrow);
	cd_policy_free(a);
	cd_policy_free(b);
	return widen ? CD_EXIT_FAIL : CD_EXIT_OK;
}

/* "30d", "12h", "5m", "90s" or a bare number of seconds, into seconds. */
static int parse_days(const char *v, int64_t *ret)
{
	size_t n = strlen(v);
	uint64_t x;

	if (n > 1 && v[n - 1] == 'd') {
		if (cd_parse_u64(v, n - 1, 100000, &x) < 0)
			return -EINVAL;
		*ret = (int64_t)x * 86400;
		return 0;
	}
	if (cd_parse_duration_ms(v, &x) < 0 || x / 1000 > (uint64_t)100000 * 86400)
		return -EINVAL;
	*ret = (int64_t)(x / 1000);
	return 0;
}

static void fmt_utc(int64_t t, char *out, size_t n)
{
	cd_time_format(t, out, n);
}

struct review_out {
	int json;
	int64_t at;
	json_t *arr;
};

static void review_line(const struct cd_review_item *it, void *ctx)
{
	struct review_out *o = ctx;
	char rb[40], ex[40], lu[40];
	unsigned bit;
	json_t *j, *fl;
	struct cd_buf b;

	fmt_utc(it->review_by, rb, sizeof rb);
	fmt_utc(it->expires, ex, sizeof ex);
	fmt_utc(it->last_used, lu, sizeof lu);
	if (o->json) {
		fl = json_array();
		for (bit = 1; bit <= CD_REVIEW_UNUSED; bit <<= 1)
			if (it->flags & bit)
				json_array_append_new(fl, json_string(cd_review_flag_name(bit)));
		j = json_pack("{s:s, s:s, s:s, s:s?, s:s, s:s, s:s?, s:I, s:o}", "id", it->id,
		              "agent", it->agent, "tool", it->tool, "owner", it->owner, "review_by",
		              rb, "expires", ex, "last_used", it->uses ? lu : NULL, "uses",
		              (json_int_t)it->uses, "attention", fl ? fl : json_array());
		if (j)
			json_array_append_new(o->arr, j);
		return;
	}
	if (!it->flags)
		return;
	cd_buf_init(&b, 4096);
	if (cd_buf_escape(&b, it->id, strlen(it->id)) < 0 || !b.data)
		cd_buf_reset(&b);
	printf("%s (owner %s):", b.data ? b.data : "?", it->owner ? it->owner : "-");
	cd_buf_release(&b);
	if (it->flags & CD_REVIEW_PAST_REVIEW)
		printf(" past-review (review_by %s);", rb);
	if (it->flags & CD_REVIEW_EXPIRED)
		printf(" expired (expires %s);", ex);
	if (it->flags & CD_REVIEW_EXPIRING)
		printf(" expiring (expires %s, in %lld days);", ex,
		       (long long)((it->expires - o->at) / 86400));
	if (it->flags & CD_REVIEW_NEVER_USED)
		printf(" never-used;");
	if (it->flags & CD_REVIEW_UNUSED)
		printf(" unused (last used %s, %lld days ago);", lu,
		       (long long)((o->at - it->last_used) / 86400));
	printf("\n");
}

int policy_review_cmd(int argc, char **argv)
{
	struct cd_review_opts ro;
	struct review_out out = { 0, 0, NULL };
	struct cli_audit_cfg cfg;
	struct cd_policy *p = NULL;
	struct cd_audit *log = NULL;
	struct cd_err err = { 0 };
	const char *file = NULL, *v;
	size_t attention = 0;
	int i, no_audit = 0, rc = EXIT_NOPOLICY;

	memset(&ro, 0, sizeof ro);
	memset(&cfg, 0, sizeof cfg);
	ro.at = (int64_t)time(NULL);
	ro.soon = 30 * 86400;
	ro.unused = 90 * 86400;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			policy_usage_sub("review", stdout);
			return CD_EXIT_OK;
		} else if (!strcmp(a, "--json")) {
			out.json = 1;
		} else if (!strcmp(a, "--no-audit")) {
			no_audit = 1;
		} else if ((v = policy_optval(argc, argv, &i, "--audit"))) {
			cfg.path = v;
		} else if ((v = policy_optval(argc, argv, &i, "--soon"))) {
			if (!policy_opt_missing && parse_days(v, &ro.soon) < 0) {
				cli_errorf("--soon '%s': write Nd, Nh, Nm or Ns", v);
				return CD_EXIT_USAGE;
			}
		} else if ((v = policy_optval(argc, argv, &i, "--unused"))) {
			if (!policy_opt_missing && parse_days(v, &ro.unused) < 0) {
				cli_errorf("--unused '%s': write Nd, Nh, Nm or Ns", v);
				return CD_EXIT_USAGE;
			}
		} else if ((v = policy_optval(argc, argv, &i, "--at"))) {
			if (!policy_opt_missing && cd_policy_parse_time(v, strlen(v), &ro.at) < 0) {
				cli_errorf("--at '%s': write " CLI_TIME_FORMS, v);
				return CD_EXIT_USAGE;
			}
		} else if (a[0] == '-') {
			cli_opt_unknown(a, review_opts);
			return CD_EXIT_USAGE;
		} else if (file) {
			cli_errorf("review takes one policy FILE and options (see --help)");
			return CD_EXIT_USAGE;
		} else {
			file = a;
		}
		if (policy_opt_missing)
			return CD_EXIT_USAGE;
	}
	if (!file) {
		cli_errorf("review needs a policy FILE (see --help)");
		return CD_EXIT_USAGE;
	}
	if (no_audit && cfg.path) {
		cli_errorf("--audit and --no-audit exclude each other");
		return CD_EXIT_USAGE;
	}
	p = policy_load(file);
	if (!p)
		return EXIT_NOPOLICY;
	/* The log is read, never written: a review leaves no trace in it. */
	cfg.read_only = 1;
	if (!no_audit && cli_audit_open_cfg(&cfg, &log) < 0)
		goto out;
	ro.log = log;
	out.at = ro.at;
	if (out.json && !(out.arr = json_array())) {
		cli_errorf("out of memory");
		goto out;
	}
	if (cd_policy_review(p, &ro, review_line, &out, &attention, &err) < 0) {
		cli_errorf("%s", err.msg);
		goto out;
	}
	if (out.json) {
		char at[40];
		json_t *r;
		char *s;
		fmt_utc(ro.at, at, sizeof at);
		r = json_pack("{s:s, s:s, s:s, s:b, s:I, s:O}", "policy", file, "policy_sha256",
		              cd_policy_sha256(p), "at", at, "usage_checked", log != NULL,
		              "attention", (json_int_t)attention, "grants", out.arr);
		s = r ? json_dumps(r, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
		json_decref(r);
		if (!s) {
			cli_errorf("out of memory");
			goto out;
		}
		printf("%s\n", s);
		free(s);
	} else {
		struct cd_policy_stats st;
		cd_policy_stats(p, &st);
		printf("%zu of %zu grants need attention%s (policy sha256 %.16s...)\n", attention,
		       st.grants, log ? "" : "; usage not checked (--no-audit)",
		       cd_policy_sha256(p));
	}
	rc = attention ? CD_EXIT_FAIL : CD_EXIT_OK;
out:
	json_decref(out.arr);
	if (log)
		cd_audit_close(log);
	cd_policy_free(p);
	return rc;
}
