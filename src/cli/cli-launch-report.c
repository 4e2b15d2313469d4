/* cli-launch-report.c — what a run tells: a refusal before anything ran
 * (one line, and the JSON record when asked for), the files the command
 * planted where the host could run them, what the plan covered, and the
 * JSON result record.  Paths and names that reach the terminal come from
 * the plan and the sandbox's scan of the trees the command could write.
 */
#include "cli.h"
#include "cli-launch-int.h"

#include "sandbox/profile.h"
#include "sandbox/quotas.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* workspace-write keeps what exists of the protected paths read-only, but
 * a path that did not exist can be created by the command.  Note which are
 * missing before the run and report any that appear: they would run later
 * on the host, so the operator must look at them. */
unsigned launch_missing_protected(const char *cwd)
{
	char path[CD_PATH_MAX];
	struct stat st;
	unsigned mask = 0;
	size_t i;

	for (i = 0; i < 32 && cd_protected_workspace_paths[i]; i++) {
		int n = snprintf(path, sizeof path, "%s/%s", cwd, cd_protected_workspace_paths[i]);
		if (n > 0 && (size_t)n < sizeof path && lstat(path, &st) < 0 && errno == ENOENT)
			mask |= 1u << i;
	}
	return mask;
}

static int json_has(json_t *a, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
	{
		if (!strcmp(json_string_value(v), s))
			return 1;
	}
	return 0;
}

/* rel, and why when it is not simply new (cd_plan_planted: after its NUL);
 * an absolute path lies in a --rw directory outside the working one */
static void planted_one(json_t *a, const char *rel, const char *why)
{
	const char *where = rel[0] == '/' ? "a --rw directory" : "the workspace";

	if (!a || json_has(a, rel))
		return;
	if (why && *why)
		cli_warnf("the command left '%s' in %s: %s; git or another tool on the "
		          "host could run what is there: review it",
		          rel, where, why);
	else
		cli_warnf("the command created '%s' in %s: it could run later on the "
		          "host; review or remove it",
		          rel, where);
	json_array_append_new(a, json_string(rel));
}

/* The protected paths at the top, and the git control paths and host-run
 * files at any depth of every writable tree (cd_plan_planted), that the
 * run created or replaced.  *ret_check: "complete", or "incomplete: WHY"
 * when some of a tree could not be checked (what was found is kept and
 * reported all the same; the caller fails the run). */
json_t *launch_planted_paths(const struct cd_plan *plan, unsigned before, json_t **ret_check)
{
	unsigned after = launch_missing_protected(plan->cwd);
	json_t *a = json_array();
	struct cd_err err;
	char **v = NULL, why[sizeof err.msg + 16];
	size_t i, n = 0;
	int r;

	for (i = 0; a && i < 32 && cd_protected_workspace_paths[i]; i++) {
		if ((before & (1u << i)) && !(after & (1u << i)))
			planted_one(a, cd_protected_workspace_paths[i], NULL);
	}
	r = cd_plan_planted(plan, &v, &n, &err);
	for (i = 0; r >= 0 && i < n; i++) {
		planted_one(a, v[i], v[i] + strlen(v[i]) + 1);
		free(v[i]);
	}
	if (r >= 0)
		free(v);
	if (r != 0)
		snprintf(why, sizeof why, "incomplete: %s", err.msg);
	*ret_check = json_string(r == 0 ? "complete" : why);
	return a;
}

/* What the plan covered or kept read-only inside bound trees, and why. */
json_t *launch_covered_paths(const struct cd_plan *p)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < p->nmounts; i++) {
		const struct cd_mount *m = &p->mounts[i];
		json_t *e;

		if (!m->why || m->kind == CD_MNT_BIND || !(e = json_object()))
			continue;
		json_object_set_new(e, "path", json_string(m->dest));
		json_object_set_new(e, "reason", json_string(m->why));
		json_array_append_new(a, e);
	}
	return a;
}

static json_t *walls_json(unsigned w)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {
		{ CD_WALL_USERNS, "userns" },     { CD_WALL_MOUNTNS, "mountns" },
		{ CD_WALL_PIDNS, "pidns" },       { CD_WALL_NETNS, "netns" },
		{ CD_WALL_IPCNS, "ipcns" },       { CD_WALL_UTSNS, "utsns" },
		{ CD_WALL_CGROUPNS, "cgroupns" }, { CD_WALL_NNP, "no_new_privs" },
		{ CD_WALL_CAPS, "caps_dropped" }, { CD_WALL_SECCOMP, "seccomp" },
		{ CD_WALL_LANDLOCK, "landlock" },
	};
	json_t *o = json_object();
	size_t i;

	for (i = 0; o && i < CD_ARRAY_SIZE(names); i++)
		json_object_set_new(o, names[i].name, json_boolean(w & names[i].bit));
	return o;
}

int launch_is_pipe(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

static int same_file(int a, int b)
{
	struct stat x, y;

	return fstat(a, &x) == 0 && fstat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

int launch_emit_result(const struct run_args *a, const struct cd_plan *p, const struct cd_result *r,
                       json_t *planted, json_t *check, const struct layer *layer)
{
	json_t *o = json_object();
	char *s;
	int fd = a->json_fd >= 0 ? a->json_fd : STDOUT_FILENO, rc;

	if (!o)
		return -ENOMEM;
	json_object_set_new(o, "run_id", json_string(r->run_id));
	json_object_set_new(o, "reason", json_string(cd_reason_name(r->reason)));
	json_object_set_new(o, "exit_code", json_integer(r->exit_code));
	json_object_set_new(o, "signal", r->signal ? json_integer(r->signal) : json_null());
	json_object_set_new(o, "error", r->error[0] ? json_string(r->error) : json_null());
	json_object_set_new(o, "wall_ms", json_integer((json_int_t)r->wall_ms));
	json_object_set_new(o, "cpu_ms", json_integer((json_int_t)r->cpu_ms));
	json_object_set_new(o, "max_rss_kb", json_integer((json_int_t)r->max_rss_kb));
	json_object_set_new(o, "argv_sha256", json_string(r->argv_sha256));
	/* null: the stream was handed to the command directly (--direct-stdio). */
	json_object_set_new(o, "stdin_sha256",
	                    r->stdin_direct ? json_null() : json_string(r->stdin_sha256));
	json_object_set_new(o, "stdout_sha256",
	                    r->stdout_direct ? json_null() : json_string(r->stdout_sha256));
	json_object_set_new(o, "stderr_sha256", json_string(r->stderr_sha256));
	json_object_set_new(o, "stdin_bytes", json_integer((json_int_t)r->stdin_bytes));
	json_object_set_new(o, "stdout_bytes", json_integer((json_int_t)r->stdout_bytes));
	json_object_set_new(o, "stderr_bytes", json_integer((json_int_t)r->stderr_bytes));
	json_object_set_new(o, "profile", json_string(p->profile));
	/* Who the sandbox was on the host (for root: the run's own id, from
	 * slot id_slot of root's range). */
	json_object_set_new(o, "host_uid", json_integer((json_int_t)p->host_uid));
	json_object_set_new(o, "host_gid", json_integer((json_int_t)p->host_gid));
	json_object_set_new(o, "id_slot", p->idmap ? json_integer(p->id_slot) : json_null());
	if (p->idmap) {
		json_object_set_new(o, "idmapped_binds", json_integer(r->idmapped_binds));
		json_object_set_new(o, "plain_binds", json_integer(r->plain_binds));
	}
	if (planted)
		json_object_set(o, "planted_paths", planted);
	if (check)
		json_object_set(o, "planted_check", check);
	json_object_set_new(o, "covered_paths", launch_covered_paths(p));
	if (layer)
		json_object_set_new(o, "proposal_layer", launch_layer_json(layer));
	json_object_set_new(o, "walls", walls_json(r->walls));
	json_object_set_new(o, "landlock_abi", json_integer(r->landlock_abi));
	{
		json_t *denied = NULL, *lim = json_object();

		if (cd_seccomp_stats_json(&r->denied, &denied) == 0)
			json_object_set_new(o, "denied_syscalls", denied);
		if (lim) {
			json_object_set_new(lim, "memory",
			                    json_integer((json_int_t)p->limits.memory));
			json_object_set_new(lim, "memory_by",
			                    json_string(r->mech_memory ? r->mech_memory : "none"));
			json_object_set_new(lim, "memory_cap",
			                    json_string(cd_quotas_memory_cap(r->mech_memory)));
			json_object_set_new(lim, "pids", json_integer((json_int_t)p->limits.pids));
			json_object_set_new(lim, "pids_by",
			                    json_string(r->mech_pids ? r->mech_pids : "none"));
			json_object_set_new(lim, "cpu_ms",
			                    json_integer((json_int_t)p->limits.cpu_ms));
			json_object_set_new(lim, "cpu_by",
			                    json_string(r->mech_cpu ? r->mech_cpu : "none"));
			json_object_set_new(lim, "timeout_ms",
			                    json_integer((json_int_t)p->limits.timeout_ms));
			json_object_set_new(lim, "output_limit",
			                    json_integer((json_int_t)p->limits.output_limit));
			json_object_set_new(lim, "scratch_size",
			                    json_integer((json_int_t)p->limits.scratch_size));
			json_object_set_new(lim, "note", json_string(r->limits_note));
			cd_quotas_json(&p->limits, lim);
			json_object_set_new(lim, "peak_memory",
			                    json_integer((json_int_t)r->peak_memory));
			json_object_set_new(o, "limits", lim);
		}
	}
	s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(o);
	if (!s)
		return -ENOMEM;
	/* The record is a line of its own, always the last: after output
	 * without a final newline on the same stream, a command could
	 * otherwise print the start of a record line for ours to complete. */
	rc = 0;
	if ((r->stdout_open_line && same_file(fd, STDOUT_FILENO)) ||
	    (r->stderr_open_line && same_file(fd, STDERR_FILENO)))
		rc = cd_write_all(fd, "\n", 1);
	if (rc == 0)
		rc = cd_write_all(fd, s, strlen(s));
	if (rc == 0)
		rc = cd_write_all(fd, "\n", 1);
	free(s);
	return rc;
}

/* A refusal before anything ran: one line on stderr, and the JSON record
 * when asked for, with reason "denied" or "setup-error". */
int launch_refuse(const struct run_args *a, const char *run_id, enum cd_reason why, const char *msg)
{
	cli_errorf("%s", msg);
	if (a->json) {
		json_t *o =
		        json_pack("{s:s,s:s,s:i,s:s}", "run_id", run_id ? run_id : "", "reason",
		                  cd_reason_name(why), "exit_code", CD_EXIT_CORDON, "error", msg);
		char *s = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
		int fd = a->json_fd >= 0 ? a->json_fd : STDOUT_FILENO;
		if (s && cd_write_all(fd, s, strlen(s)) == 0)
			cd_write_all(fd, "\n", 1);
		free(s);
		json_decref(o);
	}
	return CD_EXIT_CORDON;
}
