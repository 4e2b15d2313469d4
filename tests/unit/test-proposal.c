/* test-proposal.c — the pieces of proposal mode that need no overlay:
 * the in-process unified diff (table-driven, exact output as diff -u
 * prints it), path validation, the flagging of files that would run later
 * on the host, and the scan of a hand-made upper layer (whiteouts as 0/0
 * character devices, which need no privilege) into a change set and its
 * store: new and removed directories, the store's byte cap (a sparse file
 * refused), then applying directories. */
#include "../tap.h"

#include "util/buf.h"
#include "proposal/proposal-int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static const struct {
	const char *a, *b, *want;
} diffs[] = {
	{ "hello\n", "hello\nworld\n", "--- A\n+++ B\n@@ -1 +1,2 @@\n hello\n+world\n" },
	{ "", "new\n", "--- A\n+++ B\n@@ -0,0 +1 @@\n+new\n" },
	{ "gone\n", "", "--- A\n+++ B\n@@ -1 +0,0 @@\n-gone\n" },
	{ "a\nb\nc\n", "a\nB\nc\n", "--- A\n+++ B\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n" },
	{ "x", "y",
	  "--- A\n+++ B\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+y\n"
	  "\\ No newline at end of file\n" },
	{ "x\n", "x", "--- A\n+++ B\n@@ -1 +1 @@\n-x\n+x\n\\ No newline at end of file\n" },
	/* Two changes 10 lines apart: two hunks with 3 lines of context. */
	{ "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
	  "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve\n",
	  "--- A\n+++ B\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n"
	  "-12\n+twelve\n" },
	/* A name with a newline and an escape in the text: bytes, not lines
	 * of the diff format (the display escapes them). */
	{ "a\x1b[2J\n", "b\n", "--- A\n+++ B\n@@ -1 +1 @@\n-a\x1b[2J\n+b\n" },
};

static char base[64];

static void put(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof p, "%s/%s", base, rel);
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void dir(const char *rel, mode_t mode)
{
	char p[256];

	snprintf(p, sizeof p, "%s/%s", base, rel);
	mkdir(p, mode);
	chmod(p, mode);
}

static const struct cd_prop_file *find(const struct cd_proposal *p, const char *path)
{
	size_t i;

	for (i = 0; p && i < p->nfiles; i++) {
		if (!strcmp(p->files[i].path, path))
			return &p->files[i];
	}
	return NULL;
}

static int scan(uint64_t max, struct cd_proposal **ret)
{
	struct cd_prop_scan_in in;
	char tree[128], up[128], store[128];
	int fd, r;

	snprintf(tree, sizeof tree, "%s/lower", base);
	snprintf(up, sizeof up, "%s/upper", base);
	snprintf(store, sizeof store, "%s/store", base);
	fd = open(up, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	memset(&in, 0, sizeof in);
	in.tree = tree;
	in.upper_fd = fd;
	in.store = store;
	in.max_bytes = max;
	in.run_id = "run";
	r = cd_proposal_scan(&in, ret, NULL);
	close(fd);
	return r;
}

static void test_scan(void)
{
	struct cd_proposal *p = NULL;
	const struct cd_prop_file *f;
	char path[256];
	struct stat st;
	int r;

	snprintf(base, sizeof base, "/tmp/cordon-test-proposal.XXXXXX");
	if (!mkdtemp(base)) {
		ok(0, "make a temporary directory");
		return;
	}
	dir("lower", 0755);
	dir("lower/empty", 0755);
	dir("lower/gone", 0700);
	dir("lower/gone/sub", 0755);
	put("lower/gone/sub/f", "f\n");
	put("lower/keep", "keep\n");
	dir("upper", 0755);
	dir("upper/newdir", 0750);
	dir("upper/newdir/inner", 0700);
	put("upper/new.txt", "new\n");
	snprintf(path, sizeof path, "%s/upper/empty", base);
	r = mknod(path, S_IFCHR | 0, makedev(0, 0));
	snprintf(path, sizeof path, "%s/upper/gone", base);
	r |= mknod(path, S_IFCHR | 0, makedev(0, 0));
	if (r < 0) {
		tap_skip("whiteouts cannot be made here (mknod 0/0)");
		return;
	}
	/* A sparse file: 512 MiB that take no block. */
	snprintf(path, sizeof path, "%s/upper/sparse", base);
	r = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ok(r >= 0 && ftruncate(r, 512L << 20) == 0, "a sparse file in the upper layer");
	if (r >= 0)
		close(r);

	r = scan(1 << 20, &p);
	is_int(r, 0, "the scan succeeds");
	if (r < 0)
		return;
	f = find(p, "newdir");
	ok(f && f->op == CD_PROP_MKDIR && f->new_mode == 0750, "a new directory: mkdir, mode 0750");
	f = find(p, "newdir/inner");
	ok(f && f->op == CD_PROP_MKDIR && f->new_mode == 0700, "a new nested directory: mkdir");
	f = find(p, "empty");
	ok(f && f->op == CD_PROP_RMDIR && f->base_mode == 0755,
	   "a whiteout over an empty directory: rmdir");
	ok(find(p, "gone") && find(p, "gone")->op == CD_PROP_RMDIR && find(p, "gone/sub") &&
	           find(p, "gone/sub")->op == CD_PROP_RMDIR && find(p, "gone/sub/f") &&
	           find(p, "gone/sub/f")->op == CD_PROP_DELETED,
	   "a whiteout over a tree: rmdir of each directory, delete of each file");
	f = find(p, "new.txt");
	ok(f && f->op == CD_PROP_ADDED, "a new file: added");
	snprintf(path, sizeof path, "%s/store/new.txt", base);
	ok(stat(path, &st) == 0 && st.st_size == 4, "its content is in the store");
	f = find(p, "sparse");
	ok(f && f->op == CD_PROP_REFUSED && f->note && strstr(f->note, "sparse"),
	   "a sparse file past the store's cap is refused: %s", f && f->note ? f->note : "-");
	snprintf(path, sizeof path, "%s/store/sparse", base);
	ok(stat(path, &st) < 0 && errno == ENOENT, "and not stored");
	ok(!find(p, "keep"), "an untouched file is no change");

	/* Apply the directories: mkdir with the mode; rmdir refused when the
	 * directory is not empty any more; mkdir refused when one exists. */
	cd_proposal_select(p, NULL, 0, NULL, 0, NULL);
	put("lower/empty/since", "x\n");
	r = cd_proposal_apply(p, NULL);
	is_int(r, -ESTALE, "apply stops at a removed directory that is not empty now");
	snprintf(path, sizeof path, "%s/lower/newdir/inner", base);
	ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0700, "the new directories are made");
	snprintf(path, sizeof path, "%s/lower/newdir", base);
	ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0750, "with their modes");
	snprintf(path, sizeof path, "%s/lower/gone", base);
	ok(stat(path, &st) < 0 && errno == ENOENT, "the removed tree is gone");
	f = find(p, "empty");
	ok(f && !f->applied && strstr(f->problem, "not empty"), "the filled one says why: %s",
	   f ? f->problem : "-");
	cd_proposal_free(p);

	/* A second scan: the store exists already; with no cap left for
	 * new.txt (max 1 byte) it is refused too. */
	p = NULL;
	r = scan(1, &p);
	ok(r < 0, "a scan into an existing store is refused");
	snprintf(path, sizeof path, "%s/store", base);
	cd_prop_remove_tree(path);
	dir("upper/later", 0755);
	r = scan(1, &p);
	f = find(p, "new.txt");
	ok(r == 0 && f && f->op == CD_PROP_REFUSED, "a file past the store's byte cap is refused");
	ok(!find(p, "newdir"), "a directory that exists in the tree now is no change");
	dir("lower/later", 0755);
	cd_proposal_select(p, NULL, 0, NULL, 0, NULL);
	r = cd_proposal_check(p, NULL);
	f = find(p, "later");
	ok(r == -ESTALE && f && strstr(f->problem, "exists now"),
	   "a new directory that exists by now is refused");
	cd_proposal_free(p);
	cd_prop_remove_tree(base);
}

int main(void)
{
	size_t i;

	tap_start(30);
	test_scan();
	for (i = 0; i < sizeof diffs / sizeof diffs[0]; i++) {
		struct cd_buf b;
		int r;

		cd_buf_init(&b, 1 << 20);
		r = cd_prop_diff(diffs[i].a, strlen(diffs[i].a), diffs[i].b, strlen(diffs[i].b),
		                 "A", "B", &b);
		is_int(r, 0, "diff %zu: no error", i);
		is_str(b.data ? b.data : "", diffs[i].want, "diff %zu: as diff -u prints it", i);
		cd_buf_release(&b);
	}
	{
		struct cd_buf b;
		cd_buf_init(&b, 20);
		ok(cd_prop_diff("a\n", 2, "b\n", 2, "A", "B", &b) < 0 && b.len <= 20,
		   "a diff past its buffer's cap fails, never overflows");
		cd_buf_release(&b);
	}

	ok(cd_prop_path_ok("a/b.txt", 7), "a relative path is accepted");
	ok(!cd_prop_path_ok("/etc/passwd", 11), "an absolute path is refused");
	ok(!cd_prop_path_ok("a/../../x", 9), "'..' is refused");
	ok(!cd_prop_path_ok("a//b", 4), "an empty component is refused");
	ok(!cd_prop_path_ok("./a", 3), "'.' is refused");
	ok(!cd_prop_path_ok("a\0b", 3), "a NUL byte is refused");
	ok(cd_prop_path_ok("evil\nname", 9), "a newline is a byte of a name like any other");

	ok(cd_prop_flagged(".git/hooks/pre-commit", 21), ".git/hooks/pre-commit is flagged");
	ok(cd_prop_flagged(".git/config", 11), ".git/config is flagged");
	ok(cd_prop_flagged("sub/repo/.git/hooks/x", 21), "a nested repository's hook is flagged");
	ok(cd_prop_flagged(".github/workflows/ci.yml", 24), "a CI definition is flagged");
	ok(cd_prop_flagged("pkg/.bashrc", 11), "a shell rc file below the top is flagged");
	ok(cd_prop_flagged(".mcp.json", 9), ".mcp.json is flagged");
	ok(!cd_prop_flagged("src/main.c", 10), "an ordinary file is not flagged");
	ok(!cd_prop_flagged(".gitignore", 10), ".gitignore is not flagged");
	ok(cd_prop_flagged("x.git/hooks/a", 13), "a path through a name ending in .git is flagged");
	ok(cd_prop_flagged("srv/x.git", 9), "... and that name itself");
	ok(!cd_prop_flagged("x.gitx/hooks/a", 14), "a name merely containing .git is not");
	ok(cd_prop_flagged(".git/modules/x/config", 21), "a submodule's config is flagged");
	ok(cd_prop_flagged(".git/modules/a/b/hooks/post-checkout", 36),
	   "a nested submodule's hook is flagged");
	ok(cd_prop_flagged("wt/.git", 7), "a .git file (worktree, submodule) is flagged");
	ok(cd_prop_flagged("deep/er/.gitattributes", 22), "a .gitattributes at depth is flagged");
	ok(cd_prop_flagged("a/b/.envrc", 10), "an .envrc at depth is flagged");
	ok(cd_prop_flagged(".git/worktrees/w/commondir", 26), "a worktree's commondir is flagged");
	ok(!cd_prop_flagged(".git/objects/ab/cdef", 20), "git objects are not flagged");
	ok(!cd_prop_flagged(".git/refs/heads/main", 20), "git refs are not flagged");
	ok(cd_prop_flagged("w/.yarn/releases/yarn.cjs", 25),
	   "a file in yarn's releases is flagged");
	ok(cd_prop_flagged("gradle/wrapper/gradle-wrapper.jar", 33),
	   "gradle's wrapper jar is flagged");
	ok(cd_prop_flagged("a/.cargo/config.toml", 20), "a host-run path at depth is flagged");
	ok(!cd_prop_flagged(".yarn/cache/x.zip", 17), "yarn's cache is not flagged");
	ok(cd_prop_flagged("pkg/.npmrc", 10), "an .npmrc at depth is flagged (node-options)");
	ok(cd_prop_flagged("a/.yarnrc.yml", 13), "a .yarnrc.yml at depth is flagged (yarnPath)");
	ok(cd_prop_flagged("a/.yarnrc", 9), "a .yarnrc at depth is flagged (yarn-path)");
	ok(!cd_prop_flagged("a/Makefile", 10), "a Makefile is not flagged (project code)");
	return tap_done();
}
