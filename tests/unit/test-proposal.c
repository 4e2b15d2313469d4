/* test-proposal.c — the pieces of proposal mode that need no kernel
 * feature: the in-process unified diff (table-driven, exact output as
 * diff -u prints it), path validation and the flagging of files that would
 * run later on the host. */
#include "../tap.h"

#include "buf.h"
#include "proposal-int.h"

#include <string.h>

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

int main(void)
{
	size_t i;

	tap_start(30);
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
	ok(!cd_prop_flagged("x.git/hooks/a", 13), "a name merely ending in .git is not flagged");
	return tap_done();
}
