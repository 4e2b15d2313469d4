/* test-planted.c — the check after the run (cd_plan_planted) on a --rw
 * tree changed by hand between the plan and the check, with no sandbox:
 * a directory renamed away and rebuilt at its path, two directories
 * exchanged, a host-run file rewritten through another name, must each be
 * reported at the path the host will use, with why; a renamed directory
 * holding nothing the host runs must not be; a tree deeper than the walk
 * goes keeps what was found and says the check is incomplete.  And the
 * name lookup of casefolded directories (tree-names.c): this kernel has
 * no CONFIG_UNICODE, so no casefolded directory can be made here; the
 * lookup is forced on an ordinary one, where another name of the same
 * inode (a hard link) stands for what a folded name would be. */
#include "../tap.h"

#include "sandbox/plan.h"
#include "sandbox/tree-scan-int.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char base[64];

static void put(const char *rel, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof p, "%s/tree/%s", base, rel);
	if ((f = fopen(p, "a"))) {
		fputs(text, f);
		fclose(f);
	}
}

static void dir(const char *rel)
{
	char p[512];

	snprintf(p, sizeof p, "%s/tree/%s", base, rel);
	mkdir(p, 0755);
}

static int in_tree(const char *from, const char *to, unsigned flags)
{
	char a[512], b[512];

	snprintf(a, sizeof a, "%s/tree/%s", base, from);
	snprintf(b, sizeof b, "%s/tree/%s", base, to);
	if (!flags)
		return rename(a, b);
	return renameat2(AT_FDCWD, a, AT_FDCWD, b, flags);
}

static struct cd_plan *plan(void)
{
	char *argv[] = { "true", NULL }, cwd[128], tree[128];
	struct cd_plan_bind b;
	struct cd_plan_opts o;
	struct cd_plan *p = NULL;
	struct cd_err err = { 0, "" };

	snprintf(cwd, sizeof cwd, "%s/cwd", base);
	snprintf(tree, sizeof tree, "%s/tree", base);
	memset(&b, 0, sizeof b);
	b.src = tree;
	b.rw = 1;
	memset(&o, 0, sizeof o);
	o.argv = argv;
	o.host_cwd = cwd;
	o.binds = &b;
	o.nbinds = 1;
	o.host_uid = getuid();
	o.host_gid = getgid();
	o.allow_degraded = 1;
	if (cd_plan_build(&o, &p, &err) < 0)
		diag("plan: %s", err.msg);
	return p;
}

/* The why of rel in v (NULL: not listed). */
static const char *why_of(char **v, size_t n, const char *rel)
{
	char want[512];
	size_t i;

	snprintf(want, sizeof want, "%s/tree/%s", base, rel);
	for (i = 0; i < n; i++) {
		if (!strcmp(v[i], want))
			return v[i] + strlen(v[i]) + 1;
	}
	return NULL;
}

static void release(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void nap(void)
{
	struct timespec ts = { 0, 30 * 1000000L }; /* past the ctime's granularity */

	nanosleep(&ts, NULL);
}

static void test_renames(void)
{
	struct cd_plan *p;
	struct cd_err err = { 0, "" };
	char **v = NULL, other[512], keep[512];
	const char *w;
	size_t n = 0;
	int r;

	dir("sub");
	dir("sub/.git");
	dir("sub/.git/objects");
	put("sub/.git/HEAD", "ref: refs/heads/main\n");
	put("sub/.git/config", "[core]\n");
	dir("d");
	put("d/.envrc", "export D=1\n");
	dir("a");
	put("a/.envrc", "export A=1\n");
	dir("b");
	put("b/.envrc", "export B=1\n");
	dir("keep");
	put("keep/.envrc", "export K=1\n");
	snprintf(keep, sizeof keep, "%s/tree/keep/.envrc", base);
	snprintf(other, sizeof other, "%s/tree/notes.txt", base);
	if (link(keep, other) < 0)
		diag("link: %s", strerror(errno));
	dir("plain");
	put("plain/f", "p\n");
	dir("ln");
	put("ln/.envrc", "export L=1\n");
	dir("dl");
	put("dl/.envrc", "export L=1\n");
	if (!(p = plan())) {
		ok(0, "the plan of a --rw tree builds");
		return;
	}
	r = cd_plan_planted(p, &v, &n, &err);
	ok(r == 0 && n == 0, "control: nothing changed, nothing reported, complete (r %d, %zu)", r,
	   n);
	release(v, n);
	nap();
	/* what a command in the sandbox can do to a --rw tree */
	in_tree("sub", "subX", 0);
	dir("sub");
	dir("sub/.git");
	dir("sub/.git/objects");
	put("sub/.git/HEAD", "ref: refs/heads/main\n");
	put("sub/.git/config", "[core]\n\tfsmonitor = touch ran\n");
	in_tree("d", "dX", 0);
	dir("d");
	put("d/.envrc", "echo evil\n");
	is_int(in_tree("a", "b", RENAME_EXCHANGE), 0, "a and b exchanged");
	put("notes.txt", "echo evil\n");
	in_tree("plain", "plainX", 0);
	dir("plain");
	in_tree("ln", "lnX", 0);
	snprintf(other, sizeof other, "%s/tree/ln", base);
	if (symlink("/tmp/cordon-test-planted-elsewhere", other) < 0)
		diag("symlink: %s", strerror(errno));
	in_tree("dl", "dlX", 0);
	snprintf(other, sizeof other, "%s/tree/dl", base);
	if (symlink("dlX", other) < 0)
		diag("symlink: %s", strerror(errno));
	v = NULL;
	n = 0;
	r = cd_plan_planted(p, &v, &n, &err);
	is_int(r, 0, "the check is complete (%s)", err.msg);
	w = why_of(v, n, "sub/.git/config");
	ok(w && strstr(w, "another file than before"),
	   "sub/.git/config rebuilt under a renamed sub: replaced (%s)", w ? w : "not listed");
	w = why_of(v, n, "sub/.git");
	ok(w && strstr(w, "another file than before"), "sub/.git: replaced (%s)",
	   w ? w : "not listed");
	w = why_of(v, n, "d/.envrc");
	ok(w && strstr(w, "another file than before"), "d/.envrc rebuilt: replaced (%s)",
	   w ? w : "not listed");
	w = why_of(v, n, "a/.envrc");
	ok(w && strstr(w, "another file than before"), "a/.envrc exchanged: replaced (%s)",
	   w ? w : "not listed");
	w = why_of(v, n, "b/.envrc");
	ok(w && strstr(w, "another file than before"), "b/.envrc exchanged: replaced (%s)",
	   w ? w : "not listed");
	w = why_of(v, n, "keep/.envrc");
	ok(w && strstr(w, "rewritten"), "keep/.envrc rewritten through notes.txt (%s)",
	   w ? w : "not listed");
	w = why_of(v, n, "ln/.envrc");
	ok(w && strstr(w, "now a symlink"), "ln replaced by a dangling symlink: ln/.envrc (%s)",
	   w ? w : "not listed");
	w = why_of(v, n, "dl/.envrc");
	ok(w && strstr(w, "now a symlink"), "dl replaced by a symlink to its renamed self (%s)",
	   w ? w : "not listed");
	w = why_of(v, n, "dX/.envrc");
	ok(w && !*w, "the renamed original dX/.envrc: new (%s)", w ? w : "not listed");
	ok(!why_of(v, n, "plain") && !why_of(v, n, "plainX") && !why_of(v, n, "plainX/f"),
	   "control: a renamed directory holding nothing the host runs is not reported");
	release(v, n);
	cd_plan_free(p);
}

/* A listed file replaced by a directory that got the file's inode back
 * (ext4 mostly hands a freed inode out again; a symlinked PATH entry
 * replaced by a directory, H8): the inode alone cannot tell, the type
 * does.  The reuse is made certain by giving the plan's record the new
 * directory's inode. */
static void test_reused_inode(void)
{
	struct cd_plan *p;
	struct cd_err err = { 0, "" };
	char **v = NULL, path[512];
	const char *w;
	struct stat st;
	size_t n = 0, i;
	int r;

	dir("ri");
	put("ri/.envrc", "export R=1\n");
	if (!(p = plan())) {
		ok(0, "the plan of a --rw tree builds");
		return;
	}
	snprintf(path, sizeof path, "%s/tree/ri/.envrc", base);
	for (i = 0; i < p->nhost_run && strcmp(p->host_run[i], path); i++)
		;
	ok(i < p->nhost_run, "ri/.envrc is listed before the run");
	nap();
	unlink(path);
	mkdir(path, 0755);
	if (i < p->nhost_run && lstat(path, &st) == 0) {
		p->host_run_id[i].dev = st.st_dev;
		p->host_run_id[i].ino = st.st_ino;
	}
	r = cd_plan_planted(p, &v, &n, &err);
	w = why_of(v, n, "ri/.envrc");
	ok(r == 0 && w && strstr(w, "another file than before"),
	   "a file replaced by a directory with its inode: replaced (%s)", w ? w : "not listed");
	release(v, n);
	cd_plan_free(p);
}

static void test_deep(void)
{
	struct cd_plan *p = plan();
	struct cd_err err = { 0, "" };
	char **v = NULL, rel[512];
	size_t n = 0, i;
	int r, fd;

	if (!p) {
		ok(0, "the plan of a --rw tree builds");
		return;
	}
	nap();
	dir("e");
	put("e/.envrc", "echo evil\n");
	dir("deep");
	snprintf(rel, sizeof rel, "%s/tree/deep", base);
	fd = open(rel, O_RDONLY | O_DIRECTORY);
	for (i = 0; fd >= 0 && i < 80; i++) {
		int next;

		mkdirat(fd, "d", 0755);
		next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
		close(fd);
		fd = next;
	}
	if (fd >= 0)
		close(fd);
	r = cd_plan_planted(p, &v, &n, &err);
	is_int(r, 1, "80 levels deep: the check says it is incomplete");
	ok(strstr(err.msg, "nested too deep"), "... and why (%s)", err.msg);
	ok(why_of(v, n, "e/.envrc") != NULL, "the shallow e/.envrc is still reported");
	for (i = 0; i < n && !strstr(v[i] + strlen(v[i]) + 1, "nested too deep"); i++)
		;
	ok(i < n && strstr(v[i], "/deep/d/d/"), "the directory left unchecked is reported (%s)",
	   i < n ? v[i] : "none");
	release(v, n);
	cd_plan_free(p);
}

static void test_fold(void)
{
	char d[128], a[256], b[256];
	struct fold f;
	struct stat st, sg;
	int fd;

	snprintf(d, sizeof d, "%s/fold", base);
	mkdir(d, 0755);
	snprintf(a, sizeof a, "%s/.envrc", d);
	snprintf(b, sizeof b, "%s/ENVRC-other-name", d);
	put("../fold/.envrc", "echo x\n");
	if (link(a, b) < 0 || stat(b, &st) < 0) {
		ok(0, "a hard link for the fold test");
		return;
	}
	snprintf(a, sizeof a, "%s/.GIT", d);
	mkdir(a, 0755);
	snprintf(a, sizeof a, "%s/.git", d);
	mkdir(a, 0755);
	stat(a, &sg);
	fd = open(d, O_RDONLY | O_DIRECTORY);
	is_int(cd_tree_fold_probe(fd, 0, NULL), 0, "an ordinary directory is not casefolded");
	is_int(cd_tree_fold_probe(fd, 1, &f), 1, "forced: the known names are looked up");
	ok(!strcmp(cd_tree_fold_name(&f, st.st_ino, "ENVRC-other-name"), ".envrc"),
	   "the entry whose inode .envrc names is taken as .envrc");
	ok(!strcmp(cd_tree_fold_name(&f, sg.st_ino, "x"), ".git"),
	   "... and a directory the same way (.git)");
	ok(!strcmp(cd_tree_fold_name(&f, 1, "plain"), "plain"), "an unknown inode keeps its name");
	ok(cd_tree_is_host_run(".exrc") && cd_tree_is_host_run("bunfig.toml") &&
	           cd_tree_is_host_run("mise.toml") && cd_tree_is_host_run("lefthook.yml") &&
	           !cd_tree_is_host_run("Makefile") && !cd_tree_is_host_run("mise.tom"),
	   "host-run names: the new ones without a dot are found, others not");
	ok(cd_tree_host_run_path("/w/a/.cargo/config.toml", 23, "config.toml") &&
	           cd_tree_host_run_path(".x/.venv/bin/python", 19, "python") &&
	           !cd_tree_host_run_path("/w/a/cargo/config.toml", 22, "config.toml") &&
	           !cd_tree_host_run_path("/w/.git/config", 14, "config"),
	   "host-run path tails: .cargo/config.toml, .venv/bin/python; not cargo/ or .git/config");
	if (fd >= 0)
		close(fd);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	remove(path);
	return 0;
}

int main(void)
{
	char cmd[128];

	tap_start(30);
	snprintf(base, sizeof base, "/tmp/cordon-test-planted.XXXXXX");
	if (!mkdtemp(base)) {
		tap_skip("cannot make a temp dir");
		return tap_done();
	}
	dir("");
	snprintf(cmd, sizeof cmd, "%s/cwd", base);
	mkdir(cmd, 0755);
	test_renames();
	test_reused_inode();
	test_deep();
	test_fold();
	if (nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		diag("could not remove %s", base);
	return tap_done();
}
