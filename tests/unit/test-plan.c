/* test-plan.c — the plan builder and lexical path handling. */
#include "../tap.h"

#include "util/path.h"
#include "sandbox/plan.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_normalize(void)
{
	static const struct {
		const char *in, *want;
		int rc;
	} cases[] = {
		{ "/", "/", 0 },
		{ "/a/b", "/a/b", 0 },
		{ "//a///b/", "/a/b", 0 },
		{ "/a/./b/.", "/a/b", 0 },
		{ "/a/b/../c", "/a/c", 0 },
		{ "/a/..", "/", 0 },
		{ "/..", NULL, -EPERM },
		{ "/a/../../etc", NULL, -EPERM },
		{ "a/b", NULL, -EINVAL },
		{ "", NULL, -EINVAL },
	};
	char out[64];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int r = cd_path_normalize(cases[i].in, out, sizeof out);
		is_int(r, cases[i].rc, "normalize '%s' rc", cases[i].in);
		if (cases[i].want && r == 0)
			is_str(out, cases[i].want, "normalize '%s'", cases[i].in);
	}
	is_int(cd_path_normalize("/aaaaaaaaaa/bbbbbbbbbb", out, 8), -ENAMETOOLONG,
	       "too long is refused, not truncated");
	ok(cd_path_is_under("/a/b", "/a"), "/a/b under /a");
	ok(cd_path_is_under("/a", "/a"), "/a under /a");
	ok(!cd_path_is_under("/ab", "/a"), "/ab not under /a");
	ok(cd_path_is_under("/x", "/"), "everything under /");
	is_int(cd_path_depth("/"), 0, "depth of /");
	is_int(cd_path_depth("/a/b/c"), 3, "depth of /a/b/c");
}

static const struct cd_mount *find(const struct cd_plan *p, const char *dest)
{
	size_t i;
	for (i = 0; i < p->nmounts; i++) {
		if (strcmp(p->mounts[i].dest, dest) == 0)
			return &p->mounts[i];
	}
	return NULL;
}

static int env_has(const struct cd_plan *p, const char *entry)
{
	size_t i;
	for (i = 0; i < p->envc; i++) {
		if (strcmp(p->envp[i], entry) == 0)
			return 1;
	}
	return 0;
}

static void test_default_plan(const char *dir)
{
	char *argv[] = { "true", NULL };
	char *secrets[] = { "TOKEN=s3cret", NULL };
	struct cd_plan_opts o;
	struct cd_plan *p = NULL;
	struct cd_err err = { 0, "" };
	const struct cd_mount *m;
	size_t i, order_ok = 1;
	char *desc;

	memset(&o, 0, sizeof o);
	o.argv = argv;
	o.host_cwd = dir;
	o.secrets = secrets;
	o.nsecrets = 1;
	o.host_uid = getuid();
	o.host_gid = getgid();
	o.allow_degraded = 1;
	is_int(cd_plan_build(&o, &p, &err), 0, "default plan builds (%s)", err.msg);
	if (!p)
		return;
	m = find(p, "/usr");
	ok(m && m->kind == CD_MNT_BIND && !(m->flags & CD_MNT_RW), "/usr is a read-only bind");
	m = find(p, "/tmp");
	ok(m && m->kind == CD_MNT_TMPFS && (m->flags & CD_MNT_RW), "/tmp is a writable tmpfs");
	ok(m && m->size == p->limits.scratch_size, "the scratch has the size cap");
	m = find(p, dir);
	ok(m && m->kind == CD_MNT_BIND && !(m->flags & CD_MNT_RW), "the cwd is a read-only bind");
	ok(!find(p, "/home") && !find(p, "/root") && !find(p, "/run") && !find(p, "/sys") &&
	           !find(p, "/etc/shadow") && !find(p, "/etc/ssl/private"),
	   "no home, root, run, sys, shadow or ssl/private");
	m = find(p, "/etc/passwd");
	ok(m && m->kind == CD_MNT_FILE && strstr(m->content, "agent:x:1000:1000"),
	   "/etc/passwd is generated and names the sandbox user");
	ok(find(p, "/proc") && find(p, "/proc/kcore"), "/proc is new and kcore is masked");
	is_str(p->mounts[p->nmounts - 1].dest, "/", "the root is made read-only last");
	for (i = 0; i + 1 < p->nmounts; i++) {
		if (strcmp(p->mounts[i].dest, dir) == 0 && i < 3)
			order_ok = 0;
	}
	ok(order_ok, "the cwd is mounted after the system dirs");
	ok(env_has(p, "HOME=/tmp") && env_has(p, "TMPDIR=/tmp") && env_has(p, "LANG=C.UTF-8"),
	   "HOME, TMPDIR, LANG");
	ok(env_has(p, "TOKEN=s3cret"), "the secret is in the environment");
	desc = cd_plan_describe(p);
	ok(desc && !strstr(desc, "s3cret") && strstr(desc, "TOKEN"),
	   "the described plan names the secret but not its value");
	free(desc);
	is_int(p->uid, 1000, "inside uid is 1000");
	ok(p->path_dirs && p->path_dirs[0] && strcmp(p->path_dirs[0], "/usr/local/bin") == 0,
	   "PATH search list is prepared");
	cd_plan_free(p);
}

static void expect_refusal(const char *dir, const struct cd_plan_bind *b, size_t nb,
                           const char *what)
{
	char *argv[] = { "true", NULL };
	struct cd_plan_opts o;
	struct cd_plan *p = NULL;
	struct cd_err err = { 0, "" };
	int r;

	memset(&o, 0, sizeof o);
	o.argv = argv;
	o.host_cwd = dir;
	o.binds = b;
	o.nbinds = nb;
	o.allow_degraded = 1;
	r = cd_plan_build(&o, &p, &err);
	ok(r < 0 && p == NULL && err.msg[0], "%s is refused (%s)", what, err.msg);
	cd_plan_free(p);
}

static void test_refusals(const char *dir)
{
	char home[256];
	struct cd_plan_bind b[2];
	int n;

	expect_refusal("/", NULL, 0, "cwd /");
	expect_refusal("/etc", NULL, 0, "cwd /etc");
	expect_refusal("/tmp", NULL, 0, "cwd /tmp");
	expect_refusal("/proc", NULL, 0, "cwd /proc");
	n = snprintf(home, sizeof home, "%s/home", dir);
	if (n > 0 && (size_t)n < sizeof home) {
		char ssh[300];
		mkdir(home, 0755);
		n = snprintf(ssh, sizeof ssh, "%s/.ssh", home);
		if (n > 0 && (size_t)n < sizeof ssh)
			mkdir(ssh, 0700);
		expect_refusal(home, NULL, 0, "a cwd that looks like a home directory");
	}
	memset(b, 0, sizeof b);
	b[0].src = dir;
	b[0].dest = "/";
	expect_refusal(dir, b, 1, "a bind over /");
	b[0].dest = "/proc/x";
	expect_refusal(dir, b, 1, "a bind under /proc");
	b[0].dest = "/x/../../y";
	expect_refusal(dir, b, 1, "a destination climbing above /");
	b[0].dest = "/data";
	b[1].src = dir;
	b[1].dest = "/data/";
	expect_refusal(dir, b, 2, "two binds at one destination");
	b[0].src = "/nonexistent/cordon/path";
	b[0].dest = NULL;
	expect_refusal(dir, b, 1, "a missing bind source");
}

static void put(const char *dir, const char *rel)
{
	char path[512];
	FILE *f;

	if (snprintf(path, sizeof path, "%s/%s", dir, rel) >= (int)sizeof path)
		return;
	if ((f = fopen(path, "w"))) {
		fputs("x\n", f);
		fclose(f);
	}
}

static void unlink_in(const char *dir, const char *rel)
{
	char path[512];

	if (snprintf(path, sizeof path, "%s/%s", dir, rel) < (int)sizeof path)
		unlink(path);
}

static const struct cd_mount *find_kind(const struct cd_plan *p, const char *dir, const char *rel,
                                        enum cd_mount_kind kind)
{
	char path[512];
	size_t i;

	snprintf(path, sizeof path, "%s/%s", dir, rel);
	for (i = 0; i < p->nmounts; i++) {
		if (p->mounts[i].kind == kind && strcmp(p->mounts[i].dest, path) == 0)
			return &p->mounts[i];
	}
	return NULL;
}

/* The credential names of issue 16's review (dotenv files, gcloud, azure,
 * cargo) are covered at any depth, the dotenv templates are not; in a
 * writable tree the package managers' run-control files are kept
 * read-only (.npmrc, a credential too, is covered instead). */
static void test_cred_names(const char *dir)
{
	static const char *const dirs[] = { "c",
		                            "c/p",
		                            "c/p/.config",
		                            "c/p/.config/gcloud",
		                            "c/p/.config/gcloud/legacy_credentials",
		                            "c/p/.azure",
		                            "c/p/.cargo",
		                            "c/q",
		                            NULL };
	static const char *const covered[] = {
		"p/.env",
		"p/.env.local",
		"p/.env.production",
		"p/.config/gcloud/credentials.db",
		"p/.config/gcloud/legacy_credentials/adc.json",
		"p/.azure/msal_token_cache.json",
		"p/.cargo/credentials",
		"p/.cargo/credentials.toml",
		NULL,
	};
	static const char *const open_files[] = {
		"p/.env.example",       "p/.env.sample",  "p/.env.template",
		"p/.envrc.txt",         "p/.environment", "p/.cargo/config.toml",
		"p/.config/other.conf", "p/Makefile",     NULL
	};
	char *argv[] = { "true", NULL };
	char cwd[300];
	struct cd_plan_opts o;
	struct cd_plan *p = NULL;
	struct cd_err err = { 0, "" };
	size_t i;

	for (i = 0; dirs[i]; i++) {
		snprintf(cwd, sizeof cwd, "%s/%s", dir, dirs[i]);
		mkdir(cwd, 0755);
	}
	snprintf(cwd, sizeof cwd, "%s/c", dir);
	for (i = 0; covered[i]; i++)
		put(cwd, covered[i]);
	for (i = 0; open_files[i]; i++)
		put(cwd, open_files[i]);
	put(cwd, "q/.yarnrc.yml");
	put(cwd, "q/.yarnrc");
	put(cwd, "q/.npmrc");
	memset(&o, 0, sizeof o);
	o.argv = argv;
	o.host_cwd = cwd;
	o.host_uid = getuid();
	o.host_gid = getgid();
	o.allow_degraded = 1;
	o.cwd_writable = 1;
	is_int(cd_plan_build(&o, &p, &err), 0, "a plan over credential names builds (%s)", err.msg);
	if (!p)
		return;
	for (i = 0; covered[i]; i++)
		ok(find_kind(p, cwd, covered[i], CD_MNT_MASK), "%s is covered", covered[i]);
	for (i = 0; open_files[i]; i++)
		ok(!find_kind(p, cwd, open_files[i], CD_MNT_MASK), "%s is not", open_files[i]);
	ok(find_kind(p, cwd, "q/.yarnrc.yml", CD_MNT_REMOUNT_RO),
	   ".yarnrc.yml at depth is read-only");
	ok(find_kind(p, cwd, "q/.yarnrc", CD_MNT_REMOUNT_RO), ".yarnrc at depth is read-only");
	ok(find_kind(p, cwd, "q/.npmrc", CD_MNT_MASK) &&
	           !find_kind(p, cwd, "q/.npmrc", CD_MNT_REMOUNT_RO),
	   ".npmrc at depth is covered (a mount point: not replaced, not written)");
	ok(!find_kind(p, cwd, "p/Makefile", CD_MNT_REMOUNT_RO), "a Makefile stays writable");
	cd_plan_free(p);
	for (i = 0; covered[i]; i++)
		unlink_in(cwd, covered[i]);
	for (i = 0; open_files[i]; i++)
		unlink_in(cwd, open_files[i]);
	unlink_in(cwd, "q/.yarnrc.yml");
	unlink_in(cwd, "q/.yarnrc");
	unlink_in(cwd, "q/.npmrc");
	for (i = CD_ARRAY_SIZE(dirs) - 1; i-- > 0;) {
		snprintf(cwd, sizeof cwd, "%s/%s", dir, dirs[i]);
		rmdir(cwd);
	}
}

int main(void)
{
	char tmpl[] = "/tmp/cordon-test-plan.XXXXXX";
	char *dir;

	tap_start(30);
	test_normalize();
	dir = mkdtemp(tmpl);
	if (!dir) {
		tap_skip("cannot make a temp dir");
		return tap_done();
	}
	test_default_plan(dir);
	test_refusals(dir);
	test_cred_names(dir);
	{
		char home[300], ssh[310];
		int n1 = snprintf(home, sizeof home, "%s/home", dir);
		int n2 = snprintf(ssh, sizeof ssh, "%s/home/.ssh", dir);
		if (n1 > 0 && n2 > 0 && (size_t)n2 < sizeof ssh) {
			rmdir(ssh);
			rmdir(home);
		}
	}
	rmdir(dir);
	return tap_done();
}
