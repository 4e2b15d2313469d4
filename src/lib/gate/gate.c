/* gate.c — decision, intent and result records for command runs (gate.h). */
#include "gate.h"

#include "mask/logmask.h"
#include "sandbox/quotas.h"
#include "policy/temp-grant.h"

#include "util/bounds.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define CODE_MAX (16 * CD_MIB)

static const char *const interpreters[] = {
	"sh",   "bash", "dash", "zsh", "ksh",     "python", "python3", "perl",
	"ruby", "node", "php",  "lua", "Rscript", "deno",   "bun",     "tclsh",
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static int is_interpreter(const char *arg0)
{
	const char *b = base_name(arg0);
	size_t i, n;

	for (i = 0; i < CD_ARRAY_SIZE(interpreters); i++) {
		n = strlen(interpreters[i]);
		/* python3.11, perl5.36 ... count too */
		if (strncmp(b, interpreters[i], n) == 0 &&
		    (b[n] == '\0' || (b[n] >= '0' && b[n] <= '9') || b[n] == '.'))
			return 1;
	}
	return 0;
}

static void hex_of(crypto_hash_sha256_state *st, char out[65])
{
	unsigned char d[crypto_hash_sha256_BYTES];

	crypto_hash_sha256_final(st, d);
	sodium_bin2hex(out, 65, d, sizeof d);
}

static int hash_file(int dirfd, const char *path, char out[65])
{
	crypto_hash_sha256_state st;
	char buf[64 * 1024];
	uint64_t total = 0;
	ssize_t n;
	struct stat sb;
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -ENOENT;
	}
	crypto_hash_sha256_init(&st);
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		total += (uint64_t)n;
		if (total > CODE_MAX) {
			close(fd);
			return -EFBIG;
		}
		crypto_hash_sha256_update(&st, (unsigned char *)buf, (size_t)n);
	}
	close(fd);
	if (n < 0)
		return -EIO;
	hex_of(&st, out);
	return 0;
}

int cd_gate_code_sha256(char *const *argv, const char *cwd, char ret[65])
{
	crypto_hash_sha256_state st;
	size_t i;
	int dirfd, r;

	if (!argv || !argv[0] || !is_interpreter(argv[0]))
		return -ENOENT;
	for (i = 1; argv[i]; i++) {
		const char *a = argv[i];

		if (strcmp(a, "-c") == 0 || strcmp(a, "-e") == 0 || strcmp(a, "--eval") == 0) {
			if (!argv[i + 1])
				return -ENOENT;
			crypto_hash_sha256_init(&st);
			crypto_hash_sha256_update(&st, (const unsigned char *)argv[i + 1],
			                          strlen(argv[i + 1]));
			hex_of(&st, ret);
			return 0;
		}
		if (a[0] == '-')
			continue;
		/* The first operand is the script. */
		dirfd = open(cwd ? cwd : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			return -errno;
		r = hash_file(dirfd, a, ret);
		close(dirfd);
		return r;
	}
	return -ENOENT;
}

static json_t *argv_json(char *const *argv)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && argv[i]; i++)
		json_array_append_new(a, json_stringn(argv[i], strlen(argv[i])));
	return a;
}

/* jansson refuses invalid UTF-8; argv is arbitrary bytes.  Keep the raw
 * bytes recoverable: invalid strings are stored hex-encoded with a flag. */
static json_t *argv_json_safe(char *const *argv)
{
	json_t *a = argv_json(argv);
	size_t i, n = 0;

	for (i = 0; argv[i]; i++)
		n++;
	if (a && json_array_size(a) == n)
		return a;
	json_decref(a);
	a = json_array();
	for (i = 0; a && argv[i]; i++) {
		size_t len = strlen(argv[i]);
		char *hex = malloc(len * 2 + 1);
		if (!hex)
			break;
		sodium_bin2hex(hex, len * 2 + 1, (const unsigned char *)argv[i], len);
		json_array_append_new(a, json_pack("{s:s}", "hex", hex));
		free(hex);
	}
	return a;
}

static char *dump(json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return s;
}

void cd_gate_log_rules(const struct cd_gate *g, const struct cd_decision *d,
                       struct cd_mask_rules *ret)
{
	memset(ret, 0, sizeof *ret);
	if (!g->policy)
		return;
	if (d && d->verdict != CD_VERDICT_DENY)
		*ret = d->mask;
	else
		cd_policy_mask_union(g->policy, ret);
}

int cd_gate_minimize(const struct cd_gate *g, const struct cd_decision *d, struct cd_record *rec,
                     json_t *details, char **ret_details, json_t **ret_keep, struct cd_err *err)
{
	struct cd_mask_rules rules;
	int r;

	*ret_details = NULL;
	*ret_keep = NULL;
	cd_gate_log_rules(g, d, &rules);
	if ((r = cd_logmask_record(g->masker, &rules, rec, details, ret_keep)) < 0)
		return cd_err_set(err, r, "audit log: the record could not be masked: %s",
		                  cd_strerror(r));
	*ret_details = json_dumps(details, JSON_COMPACT | JSON_SORT_KEYS);
	if (!*ret_details) {
		json_decref(*ret_keep);
		*ret_keep = NULL;
		return cd_err_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

static int append(const struct cd_gate *g, const struct cd_record *r, struct cd_err *err)
{
	int rc;

	if (!g->audit)
		return 0; /* a dry run: decided, not recorded */
	rc = cd_audit_append(g->audit, r, NULL, err);
	if (rc < 0)
		return cd_err_prefix(err, "audit log: ");
	return 0;
}

static void join_ids(const struct cd_decision *d, char *out, size_t cap)
{
	size_t i, n = 0;

	out[0] = '\0';
	for (i = 0; i < d->nids; i++) {
		int w = snprintf(out + n, cap - n, "%s%s", i ? "," : "", d->ids[i]);
		if (w < 0 || (size_t)w >= cap - n)
			break;
		n += (size_t)w;
	}
}

/* The fields every record about one command run shares. */
static void record_base(struct cd_record *rec, const char *kind, const struct cd_run_request *rq)
{
	memset(rec, 0, sizeof *rec);
	rec->kind = kind;
	rec->run_id = rq->run_id;
	rec->agent = rq->agent;
	rec->task = rq->task;
	rec->tool = rq->tool;
	rec->action = "execute";
	rec->target = rq->cwd;
}

/* The break-glass and delegated grants among the deciding ids, so that
 * every use of one is on the record with its kind. */
static void add_temp_ids(const struct cd_policy *p, const struct cd_decision *dec, json_t *d)
{
	json_t *arr = NULL;
	size_t i;

	for (i = 0; i < dec->nids; i++) {
		enum cd_temp_kind k = cd_policy_temp_kind(p, dec->ids[i]);
		if (!k)
			continue;
		if (!arr && !(arr = json_array()))
			return;
		json_array_append_new(
		        arr, json_pack("{s:s,s:s}", "id", dec->ids[i], "kind",
		                       k == CD_TEMP_BREAK_GLASS ? "break-glass" : "delegated"));
	}
	if (arr)
		json_object_set_new(d, "temp_grants", arr);
}

/* Every temporary grant the decision rests on (its own and those behind a
 * delegating parent) must still be in force in the state database, and
 * each use is counted there.  One revoked or ended since the policy was
 * joined denies (recorded like any deny); a failure to check denies and
 * returns the error. */
static int count_temp_uses(const struct cd_gate *g, struct cd_decision *dec, struct cd_err *err)
{
	size_t i;
	int r;

	if (!g->state || !g->audit || dec->verdict == CD_VERDICT_DENY)
		return 0;
	if (dec->temp_overflow) {
		dec->verdict = CD_VERDICT_DENY;
		snprintf(dec->reason, sizeof dec->reason,
		         "too many temporary grants behind the run to check them all");
		return 0;
	}
	for (i = 0; i < dec->ntemp_ids; i++) {
		if ((r = cd_temp_use_active(g->state, dec->temp_ids[i], g->now, err)) < 0) {
			dec->verdict = CD_VERDICT_DENY;
			if (r == -CD_E_DENIED) {
				snprintf(dec->reason, sizeof dec->reason,
				         "temporary grant '%.64s' was revoked or has ended",
				         dec->temp_ids[i]);
				return 0;
			}
			snprintf(dec->reason, sizeof dec->reason,
			         "the use of temporary grant '%.64s' could not be counted",
			         dec->temp_ids[i]);
			return r;
		}
	}
	return 0;
}

/* The "decision" record of a command run; *ret_details and *ret_keep are
 * the caller's to free. */
static int decision_record(const struct cd_gate *g, const struct cd_run_request *rq,
                           const struct cd_decision *dec, struct cd_record *rec, char *ids,
                           size_t idscap, char argv_sha[65], char **ret_details, json_t **ret_keep,
                           struct cd_err *err)
{
	json_t *d = json_object();
	int r;

	if (!d)
		return cd_err_set(err, -ENOMEM, "out of memory");
	join_ids(dec, ids, idscap);
	cd_argv_sha256(rq->argv, argv_sha);
	json_object_set_new(d, "argv", argv_json_safe(rq->argv));
	if (g->policy) {
		json_object_set_new(d, "policy", json_string(g->policy_path ? g->policy_path : ""));
		json_object_set_new(d, "policy_sha256", json_string(cd_policy_sha256(g->policy)));
		if (dec->profile)
			json_object_set_new(d, "profile", json_string(dec->profile));
		if (dec->approval)
			json_object_set_new(d, "approval", json_string(dec->approval));
		add_temp_ids(g->policy, dec, d);
	}
	if (rq->approval_id)
		json_object_set_new(d, "approval_id", json_string(rq->approval_id));
	record_base(rec, "decision", rq);
	rec->decision = cd_verdict_name(dec->verdict);
	rec->grant_ids = ids[0] ? ids : NULL;
	rec->reason = dec->reason;
	rec->argv_sha256 = argv_sha;
	r = cd_gate_minimize(g, dec, rec, d, ret_details, ret_keep, err);
	json_decref(d);
	rec->details_json = *ret_details;
	return r;
}

int cd_gate_decide_run(const struct cd_gate *g, const struct cd_run_request *rq,
                       struct cd_decision *ret, struct cd_err *err)
{
	struct cd_record rec;
	struct cd_request req;
	char ids[1024], argv_sha[65];
	char *details = NULL;
	json_t *keep = NULL;
	size_t argc = 0;
	int r;

	memset(ret, 0, sizeof *ret);
	ret->verdict = CD_VERDICT_DENY;
	while (rq->argv[argc])
		argc++;
	if (g->policy) {
		cd_request_init(&req);
		req.agent = rq->agent;
		req.task = rq->task;
		req.tool = rq->tool;
		req.action = CD_ACTION_EXECUTE;
		req.argv = (const char *const *)rq->argv;
		req.argc = argc;
		req.now = g->now;
		cd_policy_decide(g->policy, &req, ret, NULL);
		/* A failure to check is a deny with its reason, recorded
		 * below like any other. */
		(void)count_temp_uses(g, ret, err);
	} else {
		ret->verdict = CD_VERDICT_ALLOW;
		r = snprintf(ret->reason, sizeof ret->reason,
		             "no policy: the operator's own run, with the profile it asked for");
		if (r < 0)
			ret->reason[0] = '\0';
	}
	/* An allow is recorded with the intent, in one durable transaction;
	 * anything else is recorded now. */
	if (ret->verdict == CD_VERDICT_ALLOW)
		return 0;
	r = decision_record(g, rq, ret, &rec, ids, sizeof ids, argv_sha, &details, &keep, err);
	if (r == 0)
		r = append(g, &rec, err);
	free(details);
	json_decref(keep);
	return r;
}

int cd_gate_run_intent(const struct cd_gate *g, const struct cd_run_request *rq,
                       const struct cd_plan *plan, const struct cd_decision *dec,
                       struct cd_err *err)
{
	struct cd_record rec;
	char argv_sha[65], code_sha[65], ids[1024];
	json_t *d = json_object(), *env = json_array(), *lim = json_object(), *keep = NULL;
	char *details;
	size_t i;
	int r;

	if (!d || !env || !lim) {
		json_decref(d);
		json_decref(env);
		json_decref(lim);
		return cd_err_set(err, -ENOMEM, "out of memory");
	}
	cd_argv_sha256(rq->argv, argv_sha);
	/* Environment names only: values may be secrets. */
	for (i = 0; i < plan->envc; i++) {
		const char *eq = strchr(plan->envp[i], '=');
		if (eq)
			json_array_append_new(
			        env, json_stringn(plan->envp[i], (size_t)(eq - plan->envp[i])));
	}
	json_object_set_new(lim, "memory", json_integer((json_int_t)plan->limits.memory));
	json_object_set_new(lim, "pids", json_integer((json_int_t)plan->limits.pids));
	json_object_set_new(lim, "timeout_ms", json_integer((json_int_t)plan->limits.timeout_ms));
	json_object_set_new(lim, "cpu_ms", json_integer((json_int_t)plan->limits.cpu_ms));
	json_object_set_new(lim, "output_limit",
	                    json_integer((json_int_t)plan->limits.output_limit));
	json_object_set_new(lim, "scratch_size",
	                    json_integer((json_int_t)plan->limits.scratch_size));
	json_object_set_new(d, "argv", argv_json_safe(rq->argv));
	json_object_set_new(d, "env_names", env);
	json_object_set_new(d, "limits", lim);
	json_object_set_new(d, "profile", json_string(plan->profile));
	json_object_set_new(d, "walls_requested", json_integer(plan->walls));
	json_object_set_new(d, "landlock_abi", json_integer(plan->landlock_abi));
	if (plan->image)
		json_object_set_new(d, "image", cd_plan_image_json(plan));
	if (rq->approval_id)
		json_object_set_new(d, "approval_id", json_string(rq->approval_id));
	ids[0] = '\0';
	if (dec)
		join_ids(dec, ids, sizeof ids);
	record_base(&rec, "run.intent", rq);
	rec.decision = dec ? cd_verdict_name(dec->verdict) : NULL;
	rec.grant_ids = ids[0] ? ids : NULL;
	rec.argv_sha256 = argv_sha;
	rec.code_sha256 = cd_gate_code_sha256(rq->argv, rq->cwd, code_sha) == 0 ? code_sha : NULL;
	r = cd_gate_minimize(g, dec, &rec, d, &details, &keep, err);
	json_decref(d);
	if (r < 0)
		return r;
	rec.details_json = details;
	if (dec) {
		struct cd_record both[2];
		char dids[1024], dsha[65];
		char *ddetails = NULL;
		json_t *dkeep = NULL;

		r = decision_record(g, rq, dec, &both[0], dids, sizeof dids, dsha, &ddetails,
		                    &dkeep, err);
		if (r == 0) {
			both[1] = rec;
			r = cd_audit_append_many(g->audit, both, 2, NULL, err);
			if (r < 0)
				cd_err_prefix(err, "audit log: ");
		}
		free(ddetails);
		json_decref(dkeep);
	} else {
		r = append(g, &rec, err);
	}
	free(details);
	json_decref(keep);
	return r;
}

int cd_gate_run_result(const struct cd_gate *g, const struct cd_run_request *rq,
                       const struct cd_plan *plan, const struct cd_result *res, json_t *extra,
                       struct cd_err *err)
{
	struct cd_record rec;
	json_t *d = json_object(), *denied = NULL, *lim = json_object(), *keep = NULL;
	char *details;
	int r;

	if (!d || !lim) {
		json_decref(d);
		json_decref(lim);
		return cd_err_set(err, -ENOMEM, "out of memory");
	}
	if (cd_seccomp_stats_json(&res->denied, &denied) == 0)
		json_object_set_new(d, "denied_syscalls", denied);
	json_object_set_new(lim, "memory_by",
	                    json_string(res->mech_memory ? res->mech_memory : "none"));
	json_object_set_new(lim, "memory_cap", json_string(cd_quotas_memory_cap(res->mech_memory)));
	json_object_set_new(lim, "pids_by", json_string(res->mech_pids ? res->mech_pids : "none"));
	json_object_set_new(lim, "peak_memory", json_integer((json_int_t)res->peak_memory));
	json_object_set_new(d, "limits", lim);
	json_object_set_new(d, "walls_up", json_integer(res->walls));
	json_object_set_new(d, "landlock_abi", json_integer(res->landlock_abi));
	json_object_set_new(d, "cpu_ms", json_integer((json_int_t)res->cpu_ms));
	json_object_set_new(d, "max_rss_kb", json_integer((json_int_t)res->max_rss_kb));
	/* A stream handed to the command directly (cordon mcp's server) was
	 * never seen by the supervisor: "direct" instead of a count and a
	 * hash (the gateway's mcp.* records hash its messages). */
	if (res->stdin_direct)
		json_object_set_new(d, "stdin", json_string("direct"));
	else
		json_object_set_new(d, "stdin_bytes", json_integer((json_int_t)res->stdin_bytes));
	if (res->stdout_direct)
		json_object_set_new(d, "stdout", json_string("direct"));
	else
		json_object_set_new(d, "stdout_bytes", json_integer((json_int_t)res->stdout_bytes));
	json_object_set_new(d, "stderr_bytes", json_integer((json_int_t)res->stderr_bytes));
	if (res->signal)
		json_object_set_new(d, "signal", json_integer(res->signal));
	if (res->error[0])
		json_object_set_new(d, "error", json_string(res->error));
	if (extra)
		json_object_update(d, extra);
	(void)plan;
	record_base(&rec, "run.result", rq);
	rec.reason = cd_reason_name(res->reason);
	rec.has_exit = 1;
	rec.exit_code = res->exit_code;
	rec.has_duration = 1;
	rec.duration_ms = res->wall_ms;
	rec.argv_sha256 = res->argv_sha256;
	rec.stdin_sha256 = res->stdin_direct ? NULL : res->stdin_sha256;
	rec.stdout_sha256 = res->stdout_direct ? NULL : res->stdout_sha256;
	rec.stderr_sha256 = res->stderr_sha256;
	r = cd_gate_minimize(g, rq->decision, &rec, d, &details, &keep, err);
	json_decref(d);
	if (r < 0)
		return r;
	rec.details_json = details;
	r = append(g, &rec, err);
	free(details);
	json_decref(keep);
	return r;
}

int cd_gate_policy_load(struct cd_audit *audit, const char *run_id, const char *path,
                        const struct cd_policy *p, const char *error, int lazy, struct cd_err *err)
{
	struct cd_record rec;
	struct cd_policy_stats st;
	json_t *d;
	char *details;
	int r;

	if (!audit)
		return 0;
	d = json_object();
	if (!d)
		return cd_err_set(err, -ENOMEM, "out of memory");
	json_object_set_new(d, "policy", json_string(path ? path : ""));
	if (p) {
		cd_policy_stats(p, &st);
		json_object_set_new(d, "policy_sha256", json_string(cd_policy_sha256(p)));
		json_object_set_new(d, "agents", json_integer((json_int_t)st.agents));
		json_object_set_new(d, "tools", json_integer((json_int_t)st.tools));
		json_object_set_new(d, "grants", json_integer((json_int_t)st.grants));
		json_object_set_new(d, "forbids", json_integer((json_int_t)st.forbids));
	}
	details = dump(d);
	if (!details)
		return cd_err_set(err, -ENOMEM, "out of memory");
	memset(&rec, 0, sizeof rec);
	rec.kind = "policy.load";
	rec.run_id = run_id;
	rec.target = path;
	rec.decision = p ? "allow" : "deny";
	rec.reason = p ? "loaded" : error;
	rec.details_json = details;
	r = lazy ? cd_audit_append_lazy(audit, &rec, err) : cd_audit_append(audit, &rec, NULL, err);
	free(details);
	return r < 0 ? cd_err_prefix(err, "audit log: ") : 0;
}
