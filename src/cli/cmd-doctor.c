/* cmd-doctor.c — `cordon doctor`: what this host enforces, and the exact fix
 * for each gap.  Every check is made the way cordon run depends on it (a
 * user namespace is created in a child, the Landlock ABI and the seccomp
 * actions are asked of the kernel), never inferred from a version number.
 * Read-only: nothing on the host is changed (the state and log locations
 * are checked with access(), not created).
 *
 * Exit 0 when everything the default profile needs works (user and mount
 * namespaces, Landlock, seccomp with user notification, a writable audit
 * log), 1 otherwise. */
#include "cli.h"

#include "cli-audit.h"
#include "policy/policy.h"
#include "sandbox/landlock.h"
#include "store/store.h"
#include "sandbox/userns-why.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct doctor {
	json_t *checks; /* every check, in order */
	int json, failed;
};

/* One check: NAME, ok, what was found, the fix when not ok; `needed` when
 * the default profile cannot run without it. */
static void check(struct doctor *d, const char *name, int ok, int needed, const char *found,
                  const char *fix)
{
	json_t *o = json_pack("{s:s,s:b,s:b,s:s}", "check", name, "ok", ok, "needed", needed,
	                      "found", found);

	if (o && !ok && fix)
		json_object_set_new(o, "fix", json_string(fix));
	if (o)
		json_array_append_new(d->checks, o);
	if (!ok && needed)
		d->failed = 1;
	if (d->json)
		return;
	printf("%-4s %-16s %s\n", ok ? "ok" : needed ? "FAIL" : "warn", name, found);
	if (!ok && fix)
		printf("     %-16s fix: %s\n", "", fix);
}

/* The first line of a /proc or /sys file, or "" when unreadable. */
static const char *read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (!f)
		return buf;
	if (!fgets(buf, (int)n, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* Create a user and mount namespace in a child, as cordon run does; 0 or
 * the child's -errno. */
static int try_userns(void)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0 ? (errno & 0x7f) : 0);
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) ? -WEXITSTATUS(st) : -EINTR;
}

static void check_userns(struct doctor *d)
{
	struct cd_userns_facts facts;
	char found[256];
	int r = try_userns();

	if (r == 0) {
		check(d, "user-namespaces", 1, 1, "a user and mount namespace can be created",
		      NULL);
		return;
	}
	snprintf(found, sizeof found, "cannot create a user namespace: %s", strerror(-r));
	cd_userns_facts_read(&facts);
	check(d, "user-namespaces", 0, 1, found, cd_userns_hint(cd_userns_classify(&facts)));
}

static void check_landlock(struct doctor *d)
{
	char found[128];
	int abi = cd_landlock_abi();

	snprintf(found, sizeof found, abi > 0 ? "Landlock ABI %d" : "Landlock is not available",
	         abi);
	check(d, "landlock", abi > 0, 1, found,
	      "boot a kernel with CONFIG_SECURITY_LANDLOCK=y and landlock in lsm= (e.g. "
	      "lsm=landlock,lockdown,yama,integrity,apparmor on the kernel command line)");
}

static void check_seccomp(struct doctor *d)
{
	uint32_t errno_act = SECCOMP_RET_ERRNO, notif_act = SECCOMP_RET_USER_NOTIF;
	int filter, notif;

	filter = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &errno_act) == 0;
	notif = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &notif_act) == 0;
	check(d, "seccomp", filter, 1,
	      filter ? "seccomp filters are available" : "seccomp is not available",
	      "boot a kernel with CONFIG_SECCOMP_FILTER=y");
	check(d, "seccomp-notify", notif, 1,
	      notif ? "seccomp user notification is available"
	            : "seccomp user notification is not available",
	      "use Linux 5.5 or later (SECCOMP_RET_USER_NOTIF with addfd)");
}

static void check_cgroup(struct doctor *d)
{
	char own[512], dir[600], ctl[256], found[1100];
	const char *rel;

	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) != 0) {
		check(d, "cgroup", access("/sys/fs/cgroup/memory", F_OK) == 0, 0,
		      "cgroup v1 (limits are set per hierarchy)",
		      "mount cgroup v2 (systemd.unified_cgroup_hierarchy=1) for memory and pids "
		      "limits");
		return;
	}
	read_line("/proc/self/cgroup", own, sizeof own);
	rel = !strncmp(own, "0::", 3) ? own + 3 : "/";
	snprintf(dir, sizeof dir, "/sys/fs/cgroup%s", strcmp(rel, "/") ? rel : "");
	snprintf(found, sizeof found, "%s/cgroup.subtree_control", dir);
	read_line(found, ctl, sizeof ctl);
	if (access(dir, W_OK) == 0 && strstr(ctl, "memory") && strstr(ctl, "pids")) {
		snprintf(found, sizeof found, "cgroup v2, %s delegated (%s)", dir, ctl);
		check(d, "cgroup", 1, 0, found, NULL);
		return;
	}
	snprintf(found, sizeof found,
	         "cgroup v2, %s not delegated (controllers '%s'): memory, pids and cpu limits "
	         "fall back to rlimits",
	         dir, ctl);
	check(d, "cgroup", 0, 0, found,
	      "run cordon in a delegated cgroup: systemd-run --user --scope -p Delegate=yes "
	      "cordon run ...");
}

/* Where AppArmor restricts user namespaces, whether cordon got them (its
 * profile loaded): a warn beside user-namespaces' FAIL, with the fix. */
static void check_apparmor(struct doctor *d)
{
	struct cd_userns_facts facts;
	char v[16];

	cd_userns_facts_read(&facts);
	if (!strcmp(facts.apparmor, "1")) {
		int got = try_userns() == 0;

		check(d, "apparmor", got, 0,
		      got ? "AppArmor restricts unprivileged user namespaces; cordon can create "
		            "them (as root, or through its profile, " CD_APPARMOR_PROFILE ")"
		          : "AppArmor restricts unprivileged user namespaces; cordon's profile "
		            "(" CD_APPARMOR_PROFILE ") is not loaded for this binary",
		      cd_userns_hint(CD_USERNS_APPARMOR));
		return;
	}
	read_line("/sys/module/apparmor/parameters/enabled", v, sizeof v);
	check(d, "apparmor", 1, 0,
	      v[0] == 'Y' ? "AppArmor is enabled and does not restrict user namespaces"
	                  : "AppArmor is not enabled (nothing to configure)",
	      NULL);
}

/* Whether PATH is writable, or, when it does not exist, the nearest
 * existing directory above it: what creating it on first use needs. */
static int writable(const char *path)
{
	char p[4096];
	char *slash;
	struct stat st;

	if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p)
		return 0;
	if (access(p, F_OK) == 0)
		return access(p, W_OK) == 0;
	do {
		slash = strrchr(p, '/');
		if (!slash)
			return 0;
		if (slash == p)
			slash[1] = '\0';
		else
			*slash = '\0';
	} while (stat(p, &st) != 0 && strcmp(p, "/"));
	return S_ISDIR(st.st_mode) && access(p, W_OK) == 0;
}

/* A shared store (a postgresql:// URI): reachable, with its schema?  It
 * is connected to (libpq loaded) and shown without its password. */
static void check_uri(struct doctor *d, const char *name, const char *what, const char *uri,
                      int needed, int audit)
{
	struct cd_err err = { 0, "" };
	struct cd_store *st = NULL;
	char found[4400], *shown = cd_store_uri_shown(uri);
	int r = audit ? cd_store_audit_open(uri, 1, "", 0, &st, &err)
	              : cd_store_state_open(uri, &st, &err);

	snprintf(found, sizeof found, "%s %s (%s%s)", what, shown ? shown : "postgresql://...",
	         r < 0 ? "unreachable: " : "shared store, reachable", r < 0 ? err.msg : "");
	free(shown);
	if (st)
		st->ops->close(st);
	check(d, name, r == 0, needed, found,
	      "check the URI, the server, the role's password (~/.pgpass) and "
	      "docs/postgresql-roles.sql");
}

static void check_paths(struct doctor *d)
{
	char p[4096], found[4200];
	int r;

	r = cli_state_path(NULL, p, sizeof p);
	snprintf(found, sizeof found, "state database %s%s", r < 0 ? "unknown" : p,
	         r < 0 || !writable(p) ? " (not writable)" : "");
	if (r == 0 && cd_store_is_uri(p))
		check_uri(d, "state", "state store", p, 0, 0);
	else
		check(d, "state", r == 0 && writable(p), 0, found,
		      "set CORDON_STATE to a writable path, or HOME or XDG_STATE_HOME");
	r = cli_audit_path(NULL, p, sizeof p);
	snprintf(found, sizeof found, "audit log %s%s", r < 0 ? "unknown" : p,
	         r < 0 || !writable(p) ? " (not writable)" : "");
	if (r == 0 && cd_store_is_uri(p))
		check_uri(d, "audit-log", "audit log", p, 1, 1);
	else
		check(d, "audit-log", r == 0 && writable(p), 1, found,
		      "set CORDON_AUDIT to a writable path, or HOME or XDG_STATE_HOME (no log, no "
		      "run)");
	r = cli_mask_key_path(p, sizeof p);
	snprintf(found, sizeof found, "mask key %s (%s)", r < 0 ? "unknown" : p,
	         r < 0                  ? "no location"
	         : access(p, R_OK) == 0 ? "present"
	         : access(p, F_OK) == 0 ? "present, not readable"
	         : writable(p)          ? "created on first use"
	                                : "absent, its directory not writable");
	check(d, "mask-key", r == 0 && (access(p, R_OK) == 0 || writable(p)), 0, found,
	      "set CORDON_MASK_KEY to a readable key file (or a writable path for a new one)");
}

/* --policy FILE: does every approver have a key (approvers.keys)?  One
 * without signs nothing: their decisions are taken from a local state
 * database only, and a shared store refuses them. */
static void check_approver_keys(struct doctor *d, const char *path)
{
	struct cd_err err = { 0, "" };
	struct cd_policy *p = NULL;
	char found[1200], pk[32];
	size_t i, n = 0, len = 0;
	const char *who;

	if (cd_policy_load_file(path, &p, &err) < 0) {
		snprintf(found, sizeof found, "policy: %s", err.msg);
		check(d, "approver-keys", 0, 1, found, "fix the policy ('cordon policy lint')");
		return;
	}
	found[0] = '\0';
	for (i = 0; (who = cd_policy_approver_listed(p, i)); i++)
		if (!cd_policy_approver_key(p, who, (unsigned char *)pk) && len < 1000) {
			len += (size_t)snprintf(found + len, sizeof found - len, "%s%.64s",
			                        n++ ? ", " : "without a key: ", who);
		}
	if (!i)
		snprintf(found, sizeof found, "the policy lists no approvers.people");
	else if (!n)
		snprintf(found, sizeof found, "every approver has a key");
	cd_policy_free(p);
	check(d, "approver-keys", i && !n, 0, found,
	      "'cordon approvals keygen' for each, and pin the keys under approvers.keys "
	      "(unsigned decisions are refused through a shared store)");
}

static void usage(FILE *f)
{
	fprintf(f, "usage: cordon doctor [--json] [--policy FILE]\n\n"
	           "What this host enforces, each with the exact fix for a gap: user\n"
	           "namespaces (and why not: sysctls, AppArmor, a chroot), Landlock ABI,\n"
	           "seccomp and its user notification, cgroup v1/v2 and delegation, AppArmor,\n"
	           "the state database, the audit log and the mask key (where, and whether\n"
	           "writable; a postgresql:// store: reachable, shown without its password).\n"
	           "Changes nothing.\n\n"
	           "  --json     one object: {ok, checks: [{check, ok, needed, found, fix}]}\n"
	           "  --policy FILE  also: does every approver have a signing key?\n"
	           "  -h, --help this text\n\n"
	           "Exit 0 when everything the default profile needs works, 1 otherwise,\n"
	           "2 usage.\n");
}

/* The options, also for `cordon completion` (cli-complete.c). */
static const struct option doctor_opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "policy", required_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_doctor = doctor_opts;

int cmd_doctor(int argc, char **argv)
{
	struct doctor d = { json_array(), 0, 0 };
	const char *policy = NULL;
	int c;
	char *txt;

	optind = 1;
	while ((c = cli_getopt(argc, argv, "h", doctor_opts, CD_EXIT_USAGE)) != -1) {
		if (c == 'h') {
			usage(stdout);
			json_decref(d.checks);
			return CD_EXIT_OK;
		}
		if (c == 'p')
			policy = optarg;
		else
			d.json = 1;
	}
	if (optind != argc || !d.checks) {
		cli_errorf("doctor takes no arguments (see --help)");
		json_decref(d.checks);
		return CD_EXIT_USAGE;
	}
	check_userns(&d);
	check_landlock(&d);
	check_seccomp(&d);
	check_cgroup(&d);
	check_apparmor(&d);
	check_paths(&d);
	if (policy)
		check_approver_keys(&d, policy);
	if (d.json) {
		json_t *o = json_pack("{s:b,s:O}", "ok", !d.failed, "checks", d.checks);
		txt = o ? json_dumps(o, JSON_COMPACT) : NULL;
		json_decref(o);
		if (!txt) {
			cli_errorf("out of memory");
			json_decref(d.checks);
			return CD_EXIT_CORDON;
		}
		printf("%s\n", txt);
		free(txt);
	} else {
		printf("%s\n", d.failed ? "cordon cannot run its default profile here (see FAIL)"
		                        : "cordon can run its default profile here");
	}
	json_decref(d.checks);
	return d.failed ? CD_EXIT_FAIL : CD_EXIT_OK;
}
