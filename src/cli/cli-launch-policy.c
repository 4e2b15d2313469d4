/* cli-launch-policy.c — what decides the shape of a run before the plan:
 * the policy's load (on the record), the profile and the limits given as
 * options, the caches, the install step, cordon's own files kept out of
 * the sandbox, and who the sandbox is on the host.  The policy file and
 * the profile file are the operator's; under --policy the options may
 * only narrow the grant's profile, never widen it.
 */
#include "cli.h"
#include "cli-warm.h"
#include "cli-launch-int.h"
#include "store/store.h"

#include "cli-audit.h"
#include "cli-cache.h"
#include "gate/gate.h"
#include "policy/policy-yaml.h"
#include "sandbox/idmap.h"
#include "sandbox/idslot.h"
#include "sandbox/profile.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A tmpfs is memory: the scratch and the proposal layer never exceed the
 * memory limit (without a cgroup nothing else would count them).  A size
 * given as an option above it is refused; a profile's or the default is
 * lowered to it. */
static int bound_tmpfs(struct run_args *a)
{
	static const struct {
		const char *opt;
		unsigned set;
		size_t off;
	} t[] = {
		{ "--scratch-size", SET_SCRATCH, offsetof(struct cd_limits, scratch_size) },
		{ "--propose-size", SET_PROPOSE_SIZE, offsetof(struct cd_limits, propose_size) },
	};
	char want[32], mem[32];
	size_t i;

	for (i = 0; a->limits.memory && i < CD_ARRAY_SIZE(t); i++) {
		uint64_t *v = (uint64_t *)((char *)&a->limits + t[i].off);

		if (*v <= a->limits.memory)
			continue;
		if (a->set & t[i].set) {
			cli_size_human(*v, want, sizeof want);
			cli_size_human(a->limits.memory, mem, sizeof mem);
			cli_errorf("%s %s is more than --memory %s: a tmpfs is held in memory "
			           "(lower it, or raise --memory)",
			           t[i].opt, want, mem);
			return -1;
		}
		*v = a->limits.memory;
	}
	return 0;
}

/* The profile is the base; limits given as options win; its binds and env
 * are added to the options' own. */
int launch_apply_profile(struct run_args *a, struct cd_sandbox_profile *prof,
                         const struct cd_policy *policy, const char *granted,
                         struct cd_arena *arena)
{
	struct cd_err err = { 0, "" };
	struct cd_limits mine = a->limits;
	size_t i;

	if (policy) {
		/* The grant decides the sandbox: options may not widen it. */
		const struct cd_profile_setting *set = NULL;
		size_t nset = 0;
		int n;

		/* --cache stays allowed: a cache is cordon's, per agent, never
		 * another agent's (issue 10: installs under a policy's install
		 * profile fill it). */
		if (a->profile || a->nbinds || a->scratch) {
			cli_errorf("with --policy the grant's profile decides the sandbox: "
			           "--profile, --ro, --rw and --scratch are refused");
			return -1;
		}
		if (cd_profile_builtin("strict", prof, &err) < 0)
			return -1;
		if (granted) {
			if (cd_policy_profile(policy, granted, &set, &nset) < 0 &&
			    cd_profile_builtin(granted, prof, &err) < 0) {
				cli_errorf("policy profile '%s' does not exist", granted);
				return -1;
			}
			if (cd_profile_apply(prof, set, nset, &err) < 0) {
				cli_errorf("policy profile '%s': %s", granted, err.msg);
				return -1;
			}
			n = snprintf(prof->name, sizeof prof->name, "%s", granted);
			if (n < 0 || (size_t)n >= sizeof prof->name)
				return -1;
		}
		/* Limits given as options may only lower the profile's. */
		if (((a->set & SET_MEMORY) && mine.memory > prof->limits.memory) ||
		    ((a->set & SET_PIDS) && mine.pids > prof->limits.pids) ||
		    ((a->set & SET_TIMEOUT) &&
		     (mine.timeout_ms == 0 || mine.timeout_ms > prof->limits.timeout_ms)) ||
		    ((a->set & SET_OUTPUT) && mine.output_limit > prof->limits.output_limit) ||
		    ((a->set & SET_SCRATCH) && mine.scratch_size > prof->limits.scratch_size)) {
			cli_errorf("with --policy, limit options may only lower the granted "
			           "profile's limits");
			return -1;
		}
	} else if (a->profile && strchr(a->profile, '/')) {
		/* A path: a profile file (a bare name is a built-in profile). */
		if (cd_profile_load_file(a->profile, arena, prof, &err) < 0) {
			cli_errorf("--profile: %s", err.msg);
			return -1;
		}
	} else if (cd_profile_builtin(a->profile ? a->profile : "strict", prof, &err) < 0) {
		cli_errorf("--profile: %s", err.msg);
		return -1;
	}
	a->limits = prof->limits;
	/* No profile sets the proposal layer's caps: the options' (or the
	 * defaults) stand. */
	a->limits.propose_size = mine.propose_size;
	a->limits.propose_inodes = mine.propose_inodes;
	if (a->set & SET_SCRATCH)
		a->limits.scratch_size = mine.scratch_size;
	if (a->set & SET_TIMEOUT)
		a->limits.timeout_ms = mine.timeout_ms;
	if (a->set & SET_CPU)
		a->limits.cpu_ms = mine.cpu_ms;
	if (a->set & SET_OUTPUT)
		a->limits.output_limit = mine.output_limit;
	if (a->set & SET_MEMORY)
		a->limits.memory = mine.memory;
	if (a->set & SET_PIDS)
		a->limits.pids = mine.pids;
	if (prof->image || prof->rootfs) {
		/* The profile's root; the command line's replaces it, except
		 * under a policy, where the grant decides the sandbox. */
		if (policy && (a->image || a->rootfs)) {
			cli_errorf("with --policy the grant's profile names the root: --image and "
			           "--rootfs are refused");
			return -1;
		}
		if (!a->image && !a->rootfs) {
			a->image = prof->image;
			a->rootfs = prof->rootfs;
		}
	}
	if (a->image && a->rootfs) {
		cli_errorf("--image and --rootfs exclude each other");
		return -1;
	}
	if (bound_tmpfs(a) < 0)
		return -1;
	for (i = 0; i < prof->nbinds; i++) {
		if (launch_add_bind(a, prof->binds[i], prof->bind_rw[i]) < 0)
			return -1;
	}
	for (i = 0; i < prof->nenv; i++) {
		if (launch_add_env(a, prof->env[i]) < 0)
			return -1;
	}
	return 0;
}

/* A shared store's connection secrets, kept out of the sandbox like
 * cordon's own files (cd_store_uri_secrets: the socket directories, the
 * password, key and service files), each as a file in the directory to
 * hide.  A URI libpq cannot parse cannot connect either: no run. */
struct secrets {
	char **v;
	char (*buf)[CD_PATH_MAX];
	size_t *n, max;
};

static int secret_add(const char *path, void *ctx)
{
	struct secrets *s = ctx;
	size_t i;

	for (i = 0; i < *s->n; i++)
		if (!strcmp(s->v[i], path))
			return 0;
	if (*s->n >= s->max || snprintf(s->buf[*s->n], CD_PATH_MAX, "%s", path) >= CD_PATH_MAX)
		return 0;
	s->v[*s->n] = s->buf[*s->n];
	(*s->n)++;
	return 0;
}

/* ENV's value, else HOME/TAIL, as a secret. */
static void secret_env(struct secrets *s, const char *env, const char *tail)
{
	const char *v = getenv(env), *home = getenv("HOME");
	char p[CD_PATH_MAX];

	if (v && *v)
		secret_add(v, s);
	else if (home && tail && snprintf(p, sizeof p, "%s/%s", home, tail) < (int)sizeof p)
		secret_add(p, s);
}

static void store_secrets(const char *uri, char *v[], char buf[][CD_PATH_MAX], size_t *n)
{
	struct secrets s = { v, buf, n, LAUNCH_NPRIVATE - 10 };
	struct cd_err err = { 0, "" };
	const char *h = getenv("PGHOST");
	char p[CD_PATH_MAX];
	size_t k;

	if (cd_store_uri_secrets(uri, secret_add, &s, &err) < 0)
		cli_warnf("%s", err.msg);
	/* PGHOST's socket directories (a comma list). */
	for (; h && *h; h += k + (h[k] == ',')) {
		k = strcspn(h, ",");
		if (h[0] == '/' &&
		    snprintf(p, sizeof p, "%.*s/.s.PGSQL", (int)k, h) < (int)sizeof p)
			secret_add(p, &s);
	}
	/* What libpq reads by default: the password file, the client key,
	 * the service file (which may hold passwords too). */
	secret_env(&s, "PGPASSFILE", ".pgpass");
	secret_env(&s, "PGSSLKEY", ".postgresql/postgresql.key");
	secret_env(&s, "PGSERVICEFILE", ".pg_service.conf");
}

/* cordon's own files, which the plan keeps out of the sandbox: the audit
 * log, its checkpoint file, the signing key, the state database and the
 * mask key (for a shared store: this host's local state directory, and
 * the store's connection secrets), and the warm service's directory. */
void launch_private_paths(const struct run_args *a, char *v[LAUNCH_NPRIVATE],
                          char buf[LAUNCH_NPRIVATE][CD_PATH_MAX], size_t *ret_n)
{
	char au[CD_PATH_MAX], su[CD_PATH_MAX];
	int have_au = cli_audit_path(a->audit, au, sizeof au) == 0;
	int have_su = cli_state_path(NULL, su, sizeof su) == 0;
	size_t n = 0;

	if (have_au && cd_store_is_uri(au))
		store_secrets(au, v, buf, &n);
	if (have_su && cd_store_is_uri(su) && !(have_au && strcmp(au, su) == 0))
		store_secrets(su, v, buf, &n);
	if (n + 10 > LAUNCH_NPRIVATE)
		n = LAUNCH_NPRIVATE - 10;
	if (have_au && cli_audit_local(a->audit, buf[n], CD_PATH_MAX) == 0) {
		v[n] = buf[n];
		n++;
		if (cli_checkpoint_path(NULL, au, buf[n], CD_PATH_MAX) == 0) {
			v[n] = buf[n];
			n++;
		}
	}
	if (cli_config_path("audit.key", buf[n], CD_PATH_MAX) == 0) {
		v[n] = buf[n];
		n++;
	}
	/* The approver's signing key: a sandbox holding it could sign its
	 * own approvals in that person's name. */
	if (cli_config_path("approver.key", buf[n], CD_PATH_MAX) == 0) {
		v[n] = buf[n];
		n++;
	}
	if (cli_state_local(NULL, buf[n], CD_PATH_MAX) == 0) {
		v[n] = buf[n];
		n++;
	}
	if (cli_mask_key_path(buf[n], CD_PATH_MAX) == 0) {
		v[n] = buf[n];
		n++;
	}
	n += cli_warm_private(buf + n, v + n, LAUNCH_NPRIVATE - n);
	*ret_n = n;
}

int launch_load_policy(const struct run_args *a, struct cd_audit *audit, const char *run_id,
                       struct cd_policy **ret)
{
	struct cd_err err = { 0, "" }, rerr = { 0, "" };

	if (!a->policy)
		return 0;
	if (cd_policy_load_file(a->policy, ret, &err) < 0) {
		cli_errorf("policy: %s", err.msg);
		/* The refusal is on the record (and made durable: nothing
		 * durable follows it). */
		if (cd_gate_policy_load(audit, run_id, a->policy, NULL, err.msg, 0, &rerr) < 0)
			cli_errorf("%s", rerr.msg);
		return -1;
	}
	if (cd_gate_policy_load(audit, run_id, a->policy, *ret, NULL, 1, &rerr) < 0) {
		cli_errorf("%s", rerr.msg);
		return -1;
	}
	return 0;
}

void launch_explain_refusal(const struct cd_decision *d, char *out, size_t cap)
{
	int n;

	if (d->verdict == CD_VERDICT_NEEDS_APPROVAL)
		n = snprintf(out, cap,
		             "needs approval (%s, grant %s): a dry run does not wait for one",
		             d->approval ? d->approval : "human", d->nids ? d->ids[0] : "?");
	else if (d->approval)
		n = snprintf(out, cap, "not approved: %s", d->reason);
	else
		n = snprintf(out, cap, "denied by policy: %s", d->reason);
	if (n < 0)
		out[0] = '\0';
}

/* --install: the install step is `cordon run` with this run's options
 * (caches writable, --allow-host as given: the install's allowlist), its
 * own decision (tool "install" under a policy) and its own records, run
 * before the command; its output goes to cordon's stderr, its stdin is
 * empty.  Returns its exit status, or -1 when it could not be started. */
int launch_run_install(const struct run_args *a, char **argv)
{
	const char *av[4 * MAX_OPT_ITEMS * 2 + 16];
	size_t n = 0, i;
	pid_t pid, self;
	int st, j;

	av[n++] = "cordon";
	av[n++] = "run";
	for (i = 0; i < a->nspans; i++) {
		int c = a->spans[i].code;

		if (c == OPT_INSTALL || c == OPT_JSON || c == OPT_JSON_FD || c == OPT_DRY_RUN ||
		    c == OPT_DIRECT_STDIO || c == OPT_RECORD_LIMIT ||
		    c == OPT_APPROVE_INTERACTIVE || (c == OPT_TOOL && a->policy))
			continue;
		for (j = a->spans[i].start; j < a->spans[i].end && n + 8 < CD_ARRAY_SIZE(av); j++)
			av[n++] = argv[j];
	}
	if (a->policy) {
		av[n++] = "--tool";
		av[n++] = "install";
	}
	av[n++] = "--";
	av[n++] = "/bin/sh";
	av[n++] = "-c";
	av[n++] = a->install;
	av[n] = NULL;
	fflush(stdout);
	fflush(stderr);
	self = getpid();
	pid = fork();
	if (pid < 0) {
		cli_errorf("--install: cannot fork: %s", cd_strerror(-errno));
		return -1;
	}
	if (pid == 0) {
		int null;

		cli_die_with_parent(self); /* its sandbox dies with it */
		null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, STDIN_FILENO) < 0 ||
		    dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(CD_EXIT_CORDON);
		execv("/proc/self/exe", (char *const *)av);
		_exit(CD_EXIT_CORDON);
	}
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			cli_errorf("--install: lost the install step: %s", cd_strerror(-errno));
			return -1;
		}
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* --cache NAME:DEST: the agent's cache directory bound at DEST, writable
 * unless the run has an install step (then only that step writes). */
int launch_add_caches(struct run_args *a)
{
	char dir[CD_PATH_MAX];
	size_t i;

	for (i = 0; i < a->ncaches; i++) {
		const char *spec = a->caches[i], *colon = strchr(spec, ':');
		struct cd_plan_bind *b;
		char *src;

		if (cli_cache_dir(a->agent, spec, (size_t)(colon - spec), dir, sizeof dir) < 0)
			return -1;
		if (a->nbinds >= MAX_OPT_ITEMS) {
			cli_errorf("too many binds (max %d)", MAX_OPT_ITEMS);
			return -1;
		}
		src = strdup(dir);
		if (!src) {
			cli_errorf("out of memory");
			return -1;
		}
		b = &a->binds[a->nbinds++];
		b->src = src;
		b->dest = colon + 1;
		b->rw = a->install == NULL;
	}
	return 0;
}

/* Who the sandbox is on the host: the caller, or for root a slot of root's
 * range, held until cordon exits (idmap.h, idslot.h).  The test seam
 * CORDON_TEST_ID_SLOTS=[FIRST:]COUNT narrows the slots a root run may take
 * and can never widen them: a window outside the range refuses the run. */
void launch_host_ids_start(struct launch_ids *ids, struct cd_idslot *slot)
{
	const char *w = getenv("CORDON_TEST_ID_SLOTS");

	memset(ids, 0, sizeof *ids);
	ids->started = 1;
	if (geteuid() != 0)
		return;
	if (w && cd_idslot_parse_window(w, &ids->first, &ids->count) < 0) {
		ids->r = cd_err_set(&ids->err, -EINVAL, "CORDON_TEST_ID_SLOTS: not [FIRST:]COUNT");
		return;
	}
	cd_idmap_root_range(&ids->range);
	ids->r = cd_idslot_take_async(CD_IDSLOT_DIR, &ids->range, ids->first, ids->count, slot,
	                              &ids->err);
}

int launch_host_ids_apply(struct launch_ids *ids, struct cd_plan_opts *po,
                          const struct cd_idslot *slot, struct cd_err *err)
{
	po->idmap = geteuid() == 0;
	po->id_slot = -1;
	if (!ids->started)
		return cd_err_set(err, -EINVAL, "the run's host ids were not taken");
	if (ids->r < 0) {
		*err = ids->err;
		return ids->r;
	}
	if (!po->idmap) {
		po->host_uid = geteuid();
		po->host_gid = getegid();
		return 0;
	}
	po->host_uid = slot->uid;
	po->host_gid = slot->gid;
	po->id_slot = (long)slot->index;
	return 0;
}

int launch_host_ids_confirm(struct launch_ids *ids, struct cd_plan_opts *po, struct cd_idslot *slot,
                            struct cd_err *err)
{
	int r;

	if (!po->idmap)
		return 0;
	r = cd_idslot_confirm(CD_IDSLOT_DIR, &ids->range, ids->first, ids->count, slot, err);
	if (r == 1 && launch_host_ids_apply(ids, po, slot, err) < 0)
		return -EINVAL;
	return r;
}

int launch_host_ids(struct cd_plan_opts *po, struct cd_idslot *slot, struct cd_err *err)
{
	struct launch_ids ids;
	int r;

	launch_host_ids_start(&ids, slot);
	if ((r = launch_host_ids_apply(&ids, po, slot, err)) < 0)
		return r;
	r = launch_host_ids_confirm(&ids, po, slot, err);
	return r < 0 ? r : 0;
}
