/* cmd-approvals.c — `cordon approvals list|show|approve|deny|sample|stats`:
 * the person's side of the approval queue (approval.h).  Parsing options,
 * checking who approves and printing are all this file does; every change
 * is made by approval.c inside a transaction that also writes its audit
 * record (gate-approval.c).
 *
 * Exit statuses: 0 done, 1 refused (not pending, past its deadline, an
 * approver the policy does not accept, the requesting agent itself), 2
 * usage, 125 the state database, the audit log or the policy could not be
 * used. */
#include "cli.h"

#include "cli-audit.h"

#include "audit/audit.h"
#include "util/buf.h"
#include "gate/approval-sign.h"
#include "gate/gate-approval.h"
#include "util/num.h"
#include "policy/policy.h"
#include "store/state.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
        "usage: cordon approvals list [--all | --status S] [--since TIME] [--json]\n"
        "       cordon approvals show ID [--json]\n"
        "       cordon approvals approve ID [--as NAME] [--comment TEXT] [--policy FILE]\n"
        "                                [--key FILE]\n"
        "       cordon approvals deny ID [--as NAME] [--reason TEXT] [--policy FILE]\n"
        "                             [--key FILE]\n"
        "       cordon approvals keygen [--key FILE]\n"
        "       cordon approvals sample N [--since TIME] [--as NAME] [--json]\n"
        "       cordon approvals stats [--since TIME] [--json]\n"
        "\n"
        "Calls whose grant says 'approval: human' wait here, in cordon's state\n"
        "database, until a person approves or denies them or their deadline passes\n"
        "(a deny).  An approval is bound to the SHA-256 of the call's tool, action and\n"
        "arguments, is used once, expires with the request, and never changes the\n"
        "sandbox.  'list' shows pending requests (--all: every one); 'show' one in\n"
        "full.  The approver is --as NAME or the invoking user's login name; the\n"
        "policy that made the request (or --policy FILE) must accept them\n"
        "(approvers.people), and an agent never approves, least of all its own\n"
        "request.  'sample' picks N approved calls at random for a second review and\n"
        "records that; 'stats' shows, per approver, how many calls were approved and\n"
        "denied and the median seconds to decide (a one-second approval of a\n"
        "destructive call is a rubber stamp worth seeing).\n"
        "'keygen' makes an approver's Ed25519 key (--key FILE, default\n"
        "~/.config/cordon/approver.key, 0600) and prints the public key to pin in\n"
        "the policy (approvers.keys: {NAME: ed25519:...}).  approve and deny sign\n"
        "with --key FILE, else that file when it exists; the waiting run refuses a\n"
        "decision whose approver has a pinned key but did not sign with it, and,\n"
        "with a shared (postgresql://) state store, any unsigned decision.\n"
        "Common options: --state PATH (default $CORDON_STATE, else\n"
        "~/.local/state/cordon/state.db), --audit PATH.  TIME is YYYY-MM-DD,\n"
        "YYYY-MM-DDTHH:MM:SSZ (or +HH:MM for Z) or @SECONDS.  Exit 0 done, 1 refused,\n"
        "2 usage, 125 cordon could not proceed.\n";

struct aopts {
	const char *as, *comment, *policy, *state, *audit, *status, *key;
	int64_t since;
	int all, json;
};

enum {
	OPT_AS = 256,
	OPT_COMMENT,
	OPT_POLICY,
	OPT_STATE,
	OPT_AUDIT,
	OPT_STATUS,
	OPT_SINCE,
	OPT_ALL,
	OPT_JSON,
	OPT_KEY,
	OPT_HELP,
};

static const struct option long_opts[] = {
	{ "as", required_argument, NULL, OPT_AS },
	{ "comment", required_argument, NULL, OPT_COMMENT },
	{ "reason", required_argument, NULL, OPT_COMMENT },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "audit", required_argument, NULL, OPT_AUDIT },
	{ "status", required_argument, NULL, OPT_STATUS },
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_approvals = long_opts; /* cordon completion */

/* 0 parsed (positional arguments from optind), 1 --help, -1 usage error. */
static int parse(int argc, char **argv, struct aopts *o)
{
	int c;

	memset(o, 0, sizeof *o);
	optind = 1;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, "h", long_opts, CD_EXIT_USAGE)) != -1) {
		switch (c) {
		case OPT_AS:
			o->as = optarg;
			break;
		case OPT_COMMENT:
			o->comment = optarg;
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
		case OPT_STATUS:
			o->status = optarg;
			break;
		case OPT_SINCE:
			if (cd_policy_parse_time(optarg, strlen(optarg), &o->since) < 0) {
				cli_errorf("--since '%s': write " CLI_TIME_FORMS, optarg);
				return -1;
			}
			break;
		case OPT_ALL:
			o->all = 1;
			break;
		case OPT_JSON:
			o->json = 1;
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
	if (o->status && strcmp(o->status, "pending") && strcmp(o->status, "approved") &&
	    strcmp(o->status, "denied") && strcmp(o->status, "expired") &&
	    strcmp(o->status, "used") && strcmp(o->status, "withdrawn")) {
		cli_errorf("--status is pending, approved, denied, expired, used or withdrawn");
		return -1;
	}
	return 0;
}

struct env {
	struct cd_state *state;
	struct cd_audit *audit;
	int64_t now;
};

/* Open the log and the state database, and expire what is past its
 * deadline (with records).  0 or -1 (reported). */
static int env_open(struct env *v, const struct aopts *o)
{
	struct cd_err err = { 0, "" };

	memset(v, 0, sizeof *v);
	v->now = (int64_t)time(NULL);
	if (cli_audit_open(o->audit, &v->audit) < 0 || cli_state_open(o->state, &v->state) < 0)
		return -1;
	if (cd_gate_approvals_expire(v->audit, v->state, v->now, &err) < 0) {
		cli_errorf("expiring approvals: %s", err.msg);
		return -1;
	}
	return 0;
}

static void env_close(struct env *v)
{
	cd_state_close(v->state);
	cd_audit_close(v->audit);
}

static json_t *to_json(const struct cd_approval *a)
{
	json_t *o = json_object(), *args = json_loads(a->args_json, 0, NULL);
	char t[32];

	if (!o) {
		json_decref(args);
		return NULL;
	}
	json_object_set_new(o, "id", json_string(a->id));
	json_object_set_new(o, "status", json_string(a->status));
	json_object_set_new(o, "agent", json_string(a->agent));
	if (a->task)
		json_object_set_new(o, "task", json_string(a->task));
	json_object_set_new(o, "tool", json_string(a->tool));
	json_object_set_new(o, "action", json_string(a->action));
	json_object_set_new(o, "args", args ? args : json_string(a->args_json));
	json_object_set_new(o, "args_sha256", json_string(a->args_sha256));
	json_object_set_new(o, "approval", json_string(a->approval));
	if (a->grant_ids)
		json_object_set_new(o, "grant_ids", json_string(a->grant_ids));
	if (a->profile)
		json_object_set_new(o, "profile", json_string(a->profile));
	if (a->run_id)
		json_object_set_new(o, "run_id", json_string(a->run_id));
	cli_time_utc(a->created, t, sizeof t);
	json_object_set_new(o, "created", json_string(t));
	cli_time_utc(a->deadline, t, sizeof t);
	json_object_set_new(o, "deadline", json_string(t));
	if (a->decided_by) {
		json_object_set_new(o, "decided_by", json_string(a->decided_by));
		cli_time_utc(a->decided_at, t, sizeof t);
		json_object_set_new(o, "decided_at", json_string(t));
	}
	if (a->comment)
		json_object_set_new(o, "comment", json_string(a->comment));
	if (a->requester) {
		json_t *r = json_loads(a->requester, 0, NULL);
		if (r)
			json_object_set_new(o, "requester", r);
	}
	if (a->sampled_at) {
		cli_time_utc(a->sampled_at, t, sizeof t);
		json_object_set_new(o, "sampled_at", json_string(t));
	}
	return o;
}

static void print_json(json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	if (s)
		printf("%s\n", s);
	free(s);
}

/* One line: every stored string escaped (the arguments are the agent's). */
static void print_line(const struct cd_approval *a)
{
	char created[32], deadline[32];
	struct cd_buf b;

	cli_time_utc(a->created, created, sizeof created);
	cli_time_utc(a->deadline, deadline, sizeof deadline);
	cd_buf_init(&b, 1 << 20);
	if (cd_buf_printf(&b, "%s\t%s\t", a->id, a->status) == 0 &&
	    cd_buf_escape(&b, a->agent, strlen(a->agent)) == 0 && cd_buf_append(&b, "\t", 1) == 0 &&
	    cd_buf_escape(&b, a->tool, strlen(a->tool)) == 0 &&
	    cd_buf_printf(&b, "\t%s\t%s..%s\t", a->action, created, deadline) == 0 &&
	    cd_buf_escape(&b, a->args_json, strlen(a->args_json)) == 0)
		printf("%s\n", b.data);
	cd_buf_release(&b);
}

struct list_ctx {
	json_t *arr;
	size_t n;
};

static int list_one(const struct cd_approval *a, void *ctx)
{
	struct list_ctx *l = ctx;

	l->n++;
	if (l->arr)
		json_array_append_new(l->arr, to_json(a));
	else
		print_line(a);
	return 0;
}

static int list_cmd(struct env *v, const struct aopts *o)
{
	struct cd_err err = { 0, "" };
	struct list_ctx l = { o->json ? json_array() : NULL, 0 };
	const char *status = o->status ? o->status : o->all ? NULL : "pending";

	if (!o->json)
		printf("ID\tSTATUS\tAGENT\tTOOL\tACTION\tCREATED..DEADLINE\tARGS\n");
	if (cd_approval_list(v->state, status, o->since, list_one, &l, &err) < 0) {
		cli_errorf("%s", err.msg);
		json_decref(l.arr);
		return CD_EXIT_CORDON;
	}
	if (l.arr) {
		print_json(l.arr);
		json_decref(l.arr);
	}
	return CD_EXIT_OK;
}

static int show_one(const struct cd_approval *a, void *ctx)
{
	json_t *o = to_json(a);
	(void)ctx;
	if (!o)
		return -ENOMEM;
	if (*(int *)ctx) {
		print_json(o);
	} else {
		/* Pretty, escaped by jansson (ASCII only: no terminal controls). */
		char *s = json_dumps(o, JSON_INDENT(2) | JSON_ENSURE_ASCII);
		if (s)
			printf("%s\n", s);
		free(s);
	}
	json_decref(o);
	return 0;
}

/* The approver's key: --key FILE, else ~/.config/cordon/approver.key when
 * it exists.  0 with *ret (NULL: none), or -1 after saying why. */
int cli_approver_key_open(const char *file, struct cd_approver_key **ret)
{
	struct cd_err err = { 0, "" };
	char path[4096];

	*ret = NULL;
	if (file)
		snprintf(path, sizeof path, "%s", file);
	else if (cli_config_path("approver.key", path, sizeof path) < 0 || access(path, F_OK) < 0)
		return 0;
	if (cd_approver_key_load(path, ret, &err) < 0) {
		cli_errorf("%s", err.msg);
		return -1;
	}
	return 0;
}

static int keygen_cmd(const struct aopts *o)
{
	struct cd_err err = { 0, "" };
	char path[4096], pub[CD_APPROVER_PUB_MAX];

	if (o->key)
		snprintf(path, sizeof path, "%s", o->key);
	else if (cli_config_path("approver.key", path, sizeof path) < 0) {
		cli_errorf("no place for the key: pass --key FILE (or set HOME)");
		return CD_EXIT_CORDON;
	}
	if (cd_approver_keygen(path, pub, &err) < 0) {
		cli_errorf("%s", err.msg);
		return CD_EXIT_CORDON;
	}
	printf("%s\n", pub);
	fprintf(stderr,
	        "cordon: secret key in %s; pin the public key in the policy:\n"
	        "  approvers:\n    keys:\n      %s: \"%s\"\n",
	        path, o->as ? o->as : cli_login_name(), pub);
	return CD_EXIT_OK;
}

static int decide_cmd(struct env *v, const struct aopts *o, const char *id, int approve)
{
	struct cd_err err = { 0, "" };
	char refusal[CD_ERR_MSG_MAX];
	const char *by = o->as ? o->as : cli_login_name();
	struct cd_approver_key *key;
	int r;

	if (cli_approver_key_open(o->key, &key) < 0)
		return CD_EXIT_CORDON;
	r = cd_gate_approval_decide_signed(v->audit, v->state, id, approve, by, o->comment,
	                                   o->policy, key, v->now, refusal, sizeof refusal, &err);
	cd_approver_key_free(key);
	if (refusal[0]) {
		cli_errorf("refused: %s", refusal);
		return CD_EXIT_FAIL;
	}
	if (r == -ENOENT || r == -ESTALE) {
		cli_errorf("%s", err.msg);
		return CD_EXIT_FAIL;
	}
	if (r < 0) {
		cli_errorf("%s", err.msg[0] ? err.msg : "failed");
		return CD_EXIT_CORDON;
	}
	printf("%s\t%s by %s\n", id, approve ? "approved" : "denied", by);
	return CD_EXIT_OK;
}

struct sample_ctx {
	struct cd_audit *audit;
	const char *by;
	json_t *arr;
	struct cd_err *err;
};

static int sample_one(const struct cd_approval *a, void *ctx)
{
	struct sample_ctx *s = ctx;

	if (cd_gate_approval_record(s->audit, "approval.sampled", a, s->by,
	                            "picked for a second review", s->err) < 0)
		return -EIO;
	if (s->arr)
		json_array_append_new(s->arr, to_json(a));
	else
		print_line(a);
	return 0;
}

static int sample_cmd(struct env *v, const struct aopts *o, const char *nstr)
{
	struct cd_err err = { 0, "" };
	struct sample_ctx s = { v->audit, o->as ? o->as : cli_login_name(),
		                o->json ? json_array() : NULL, &err };
	uint64_t n;
	size_t got = 0;

	if (cd_parse_u64(nstr, strlen(nstr), 100000, &n) < 0 || n == 0) {
		cli_errorf("sample N: N is a number from 1 to 100000");
		json_decref(s.arr);
		return CD_EXIT_USAGE;
	}
	if (cd_approval_sample(v->state, (size_t)n, o->since, s.by, v->now, sample_one, &s, &got,
	                       &err) < 0) {
		cli_errorf("%s", err.msg);
		json_decref(s.arr);
		return CD_EXIT_CORDON;
	}
	if (s.arr) {
		print_json(s.arr);
		json_decref(s.arr);
	} else if (!got) {
		printf("# no approved call left to sample\n");
	}
	return CD_EXIT_OK;
}

/* ---- stats ---- */

struct person {
	char name[128];
	size_t approved, denied;
	int64_t *secs; /* time to approve, per approval */
	size_t nsecs, cap;
};

struct stats_ctx {
	struct person *v;
	size_t n, cap;
	int oom;
};

static struct person *person_get(struct stats_ctx *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		struct person *nv = realloc(s->v, cap * sizeof *nv);
		if (!nv)
			return NULL;
		s->v = nv;
		s->cap = cap;
	}
	memset(&s->v[s->n], 0, sizeof s->v[s->n]);
	snprintf(s->v[s->n].name, sizeof s->v[s->n].name, "%s", name);
	return &s->v[s->n++];
}

static int stats_one(const struct cd_approval *a, void *ctx)
{
	struct stats_ctx *s = ctx;
	struct person *p;
	int approved = !strcmp(a->status, "approved") || !strcmp(a->status, "used");

	if (!a->decided_by || (!approved && strcmp(a->status, "denied")))
		return 0;
	if (!(p = person_get(s, a->decided_by)))
		return s->oom = 1, -ENOMEM;
	if (!approved) {
		p->denied++;
		return 0;
	}
	p->approved++;
	if (p->nsecs == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		int64_t *nv = realloc(p->secs, cap * sizeof *nv);
		if (!nv)
			return s->oom = 1, -ENOMEM;
		p->secs = nv;
		p->cap = cap;
	}
	p->secs[p->nsecs++] = a->decided_at - a->created;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int stats_cmd(struct env *v, const struct aopts *o)
{
	struct cd_err err = { 0, "" };
	struct stats_ctx s = { NULL, 0, 0, 0 };
	json_t *arr = o->json ? json_array() : NULL;
	size_t i;
	int rc = CD_EXIT_OK;

	if (cd_approval_list(v->state, NULL, o->since, stats_one, &s, &err) < 0) {
		cli_errorf("%s", s.oom ? "out of memory" : err.msg);
		rc = CD_EXIT_CORDON;
		goto out;
	}
	if (!arr)
		printf("APPROVER\tAPPROVED\tDENIED\tMEDIAN_SECONDS_TO_APPROVE\tFASTEST\n");
	for (i = 0; i < s.n; i++) {
		struct person *p = &s.v[i];
		double median = 0;
		int64_t fastest = 0;
		struct cd_buf b;
		if (p->nsecs) {
			qsort(p->secs, p->nsecs, sizeof *p->secs, cmp_i64);
			median = p->nsecs % 2 ? (double)p->secs[p->nsecs / 2]
			                      : ((double)p->secs[p->nsecs / 2 - 1] +
			                         (double)p->secs[p->nsecs / 2]) /
			                                2;
			fastest = p->secs[0];
		}
		if (arr) {
			json_array_append_new(
			        arr, json_pack("{s:s,s:I,s:I,s:f,s:I}", "approver", p->name,
			                       "approved", (json_int_t)p->approved, "denied",
			                       (json_int_t)p->denied, "median_seconds_to_approve",
			                       median, "fastest_seconds", (json_int_t)fastest));
			continue;
		}
		cd_buf_init(&b, 4096);
		if (cd_buf_escape(&b, p->name, strlen(p->name)) == 0)
			printf("%s\t%zu\t%zu\t%.1f\t%lld\n", b.data ? b.data : "", p->approved,
			       p->denied, median, (long long)fastest);
		cd_buf_release(&b);
	}
	if (arr)
		print_json(arr);
out:
	for (i = 0; i < s.n; i++)
		free(s.v[i].secs);
	free(s.v);
	json_decref(arr);
	return rc;
}

int cmd_approvals(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;
	struct aopts o;
	struct env v;
	int r, rc = CD_EXIT_CORDON, npos;
	struct cd_err err = { 0, "" };

	if (!sub) {
		fputs(usage, stderr);
		return CD_EXIT_USAGE;
	}
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		fputs(usage, stdout);
		return CD_EXIT_OK;
	}
	if (strcmp(sub, "list") && strcmp(sub, "show") && strcmp(sub, "approve") &&
	    strcmp(sub, "deny") && strcmp(sub, "sample") && strcmp(sub, "stats") &&
	    strcmp(sub, "keygen")) {
		cli_errorf("unknown subcommand '%s' (list, show, approve, deny, sample, stats, "
		           "keygen)",
		           sub);
		return CD_EXIT_USAGE;
	}
	r = parse(argc - 1, argv + 1, &o);
	if (r)
		return r > 0 ? CD_EXIT_OK : CD_EXIT_USAGE;
	npos = argc - 1 - optind;
	if (npos !=
	    (!strcmp(sub, "list") || !strcmp(sub, "stats") || !strcmp(sub, "keygen") ? 0 : 1)) {
		cli_errorf("%s: wrong number of arguments (see --help)", sub);
		return CD_EXIT_USAGE;
	}
	if (!strcmp(sub, "keygen"))
		return keygen_cmd(&o);
	if (env_open(&v, &o) < 0)
		goto out;
	if (!strcmp(sub, "list")) {
		rc = list_cmd(&v, &o);
	} else if (!strcmp(sub, "show")) {
		r = cd_approval_get(v.state, argv[1 + optind], show_one, &o.json, &err);
		rc = r == -ENOENT ? CD_EXIT_FAIL : r < 0 ? CD_EXIT_CORDON : CD_EXIT_OK;
		if (r < 0)
			cli_errorf("%s", err.msg);
	} else if (!strcmp(sub, "approve") || !strcmp(sub, "deny")) {
		rc = decide_cmd(&v, &o, argv[1 + optind], !strcmp(sub, "approve"));
	} else if (!strcmp(sub, "sample")) {
		rc = sample_cmd(&v, &o, argv[1 + optind]);
	} else {
		rc = stats_cmd(&v, &o);
	}
out:
	env_close(&v);
	return rc;
}
