/* proposal-git.c — a proposal committed on a new branch of the tree's git
 * repository, so review happens where teams already review.
 *
 * git is run with fork/exec (no shell) in a clean environment: no system or
 * global configuration, no prompts, C locale.  The repository's own
 * configuration still applies and may be hostile (the host's, but the tree
 * is what an agent worked in): every git gets core.hooksPath=/dev/null on
 * its command line, which outranks any config file, so no hook runs (git
 * fast-import's ref update runs the reference-transaction hook otherwise),
 * and core.fsmonitor=false; only plumbing that reads no index and runs no
 * filter is used (rev-parse, check-ref-format, fast-import: blobs go in
 * as they are, no clean/smudge filter, no attributes).  One fast-import process
 * writes every blob, the tree and the commit, with paths C-quoted (any
 * byte is safe) and contents read from the proposal's layer after their
 * hash is checked again.  libgit2 is not used: it is not installed on the
 * target machines and git itself is, and fast-import keeps cordon out of
 * git's object format (SHA-1 or SHA-256 repositories alike).  The branch
 * must not exist yet (fast-import is told its parent explicitly, and
 * update-ref semantics in fast-import refuse a non-fast-forward).  git
 * holds files only: a removed directory goes with its last file, a new
 * one comes with its first; a new directory left empty cannot be
 * committed, and says so. */
#include "proposal-int.h"

#include "util/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *const git_env[] = {
	"PATH=/usr/bin:/bin",    "HOME=/nonexistent",
	"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
	"GIT_OPTIONAL_LOCKS=0",  NULL,
};

/* Run git -C dir ARGS with stdin from in_fd (-1: /dev/null); its stdout
 * (up to cap bytes, trailing newline removed) into out.  Exit status, or
 * -errno. */
static int git_run(const char *dir, const char *const *args, int in_fd, struct cd_buf *out)
{
	const char *argv[20];
	int pfd[2], st, r = 0;
	size_t n = 0, i;
	pid_t pid;

	argv[n++] = "git";
	argv[n++] = "-c";
	argv[n++] = "core.hooksPath=/dev/null";
	argv[n++] = "-c";
	argv[n++] = "core.fsmonitor=false";
	argv[n++] = "-C";
	argv[n++] = dir;
	for (i = 0; args[i] && n < 19; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return r;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (nul < 0 || dup2(in_fd >= 0 ? in_fd : nul, 0) < 0 || dup2(pfd[1], 1) < 0 ||
		    dup2(nul, 2) < 0)
			_exit(127);
		execve("/usr/bin/git", (char *const *)argv, git_env);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		char chunk[4096];
		ssize_t k = read(pfd[0], chunk, sizeof chunk);
		if (k == 0)
			break;
		if (k < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (out)
			cd_buf_append(out, chunk, (size_t)k); /* past the cap: truncated */
	}
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (out)
		while (out->len && (out->data[out->len - 1] == '\n'))
			out->data[--out->len] = '\0';
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* A path for fast-import: always C-quoted; bytes outside printable ASCII,
 * '"' and '\\' escaped (octal), so newlines and quotes in names are data. */
static int put_quoted(struct cd_buf *b, const char *p, size_t n)
{
	size_t i;
	int r = cd_buf_putc(b, '"');

	for (i = 0; r == 0 && i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
			r = cd_buf_printf(b, "\\%03o", c);
		else
			r = cd_buf_putc(b, (char)c);
	}
	return r == 0 ? cd_buf_putc(b, '"') : r;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t k = write(fd, c, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Stream one file's content as an inline data block, re-checking its hash. */
static int put_blob(int wfd, int upfd, const struct cd_prop_file *f)
{
	const char *name;
	char hdr[64], sha[65], buf[65536];
	struct stat st;
	int pfd = cd_prop_open_parent(upfd, f->path, 0, &name), fd, r = 0;
	off_t left;

	if (pfd < 0)
		return pfd;
	fd = cd_prop_open_regular(pfd, name, &st);
	close(pfd);
	if (fd < 0)
		return fd;
	if (cd_prop_hash_fd(fd, sha, NULL, NULL) < 0 || strcmp(sha, f->new_sha256) != 0 ||
	    lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -ESTALE;
	}
	snprintf(hdr, sizeof hdr, "data %lld\n", (long long)st.st_size);
	r = write_all(wfd, hdr, strlen(hdr));
	for (left = st.st_size; r == 0 && left > 0;) {
		ssize_t k = read(fd, buf, sizeof buf < (size_t)left ? sizeof buf : (size_t)left);
		if (k <= 0) {
			r = -EIO;
			break;
		}
		r = write_all(wfd, buf, (size_t)k);
		left -= k;
	}
	close(fd);
	return r == 0 ? write_all(wfd, "\n", 1) : r;
}

static int fast_import(struct cd_proposal *p, const char *branch, const char *parent,
                       const char *by, struct cd_err *err)
{
	struct cd_buf cmd;
	const char *args[] = { "fast-import", "--quiet", "--date-format=raw", NULL };
	int in[2], upfd, r = 0, st;
	size_t i;
	pid_t pid;
	void (*old)(int);

	upfd = open(p->upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (upfd < 0)
		return cd_err_sys(err, -errno, "the proposal's layer '%s'", p->upper);
	if (pipe2(in, O_CLOEXEC) < 0) {
		close(upfd);
		return cd_err_sys(err, -errno, "pipe");
	}
	old = signal(SIGPIPE, SIG_IGN);
	pid = fork();
	if (pid == 0) {
		close(in[1]);
		_exit(git_run(p->tree, args, in[0], NULL));
	}
	close(in[0]);
	cd_buf_init(&cmd, 1 << 20);
	r = cd_buf_printf(&cmd,
	                  "commit refs/heads/%s\ncommitter cordon <cordon@localhost> %lld +0000\n",
	                  branch, (long long)time(NULL));
	{
		struct cd_buf msg;
		cd_buf_init(&msg, 4096);
		if (r == 0)
			r = cd_buf_printf(&msg,
			                  "cordon proposal %s\n\nProposal: %s\nRun: %s\nAgent: "
			                  "%s\nTask: %s\nApplied-by: %s\n",
			                  p->id, p->id, p->run_id, p->agent ? p->agent : "-",
			                  p->task ? p->task : "-", by ? by : "-");
		if (r == 0)
			r = cd_buf_printf(&cmd, "data %zu\n", msg.len);
		if (r == 0)
			r = cd_buf_append(&cmd, msg.data, msg.len);
		cd_buf_release(&msg);
	}
	if (r == 0)
		r = cd_buf_printf(&cmd, "from %s\n", parent);
	if (r == 0)
		r = write_all(in[1], cmd.data, cmd.len);
	for (i = 0; r == 0 && i < p->nfiles; i++) {
		const struct cd_prop_file *f = &p->files[i];
		if (!f->selected || f->op == CD_PROP_MKDIR || f->op == CD_PROP_RMDIR)
			continue;
		cd_buf_reset(&cmd);
		if (f->op == CD_PROP_DELETED) {
			r = cd_buf_puts(&cmd, "D ");
		} else {
			r = cd_buf_puts(&cmd, (f->new_mode & 0111) ? "M 100755 inline "
			                                           : "M 100644 inline ");
		}
		if (r == 0)
			r = put_quoted(&cmd, f->path, f->path_len);
		if (r == 0)
			r = cd_buf_putc(&cmd, '\n');
		if (r == 0)
			r = write_all(in[1], cmd.data, cmd.len);
		if (r == 0 && f->op != CD_PROP_DELETED)
			r = put_blob(in[1], upfd, f);
		if (r == -ESTALE)
			snprintf(((struct cd_prop_file *)f)->problem, sizeof f->problem,
			         "the proposed content changed since the run");
	}
	if (r == 0)
		r = write_all(in[1], "done\n", 5);
	cd_buf_release(&cmd);
	close(in[1]);
	close(upfd);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	signal(SIGPIPE, old);
	if (r < 0)
		return cd_err_sys(err, r, "git fast-import: writing the commit");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return cd_err_set(err, -EIO, "git fast-import failed (exit %d)",
		                  WIFEXITED(st) ? WEXITSTATUS(st) : 128);
	return 0;
}

/* Does a selected added or modified file lie below directory entry i?
 * (Entries are sorted: those below it follow it directly, with names
 * that sort between, like "d-x" before "d/x", skipped.) */
static int has_file_below(const struct cd_proposal *p, size_t i)
{
	const struct cd_prop_file *d = &p->files[i];
	size_t j;

	for (j = i + 1; j < p->nfiles; j++) {
		const struct cd_prop_file *f = &p->files[j];
		if (f->path_len <= d->path_len || memcmp(f->path, d->path, d->path_len) != 0)
			break;
		if (f->path[d->path_len] == '/' && f->selected &&
		    (f->op == CD_PROP_ADDED || f->op == CD_PROP_MODIFIED))
			return 1;
	}
	return 0;
}

/* The ref of a new branch: a name git accepts, that no branch has yet. */
static int new_branch_ref(const struct cd_proposal *p, const char *branch, struct cd_buf *ref,
                          struct cd_err *err)
{
	int r;

	if (!branch[0] || branch[0] == '-' || strlen(branch) > 200)
		return cd_err_set(err, -CD_E_USAGE, "branch name '%s' is not accepted", branch);
	{
		const char *a[] = { "check-ref-format", "--branch", branch, NULL };
		if (git_run(p->tree, a, -1, NULL) != 0)
			return cd_err_set(err, -CD_E_USAGE, "'%s' is not a valid branch name",
			                  branch);
	}
	if ((r = cd_buf_printf(ref, "refs/heads/%s", branch)) < 0)
		return r;
	{
		const char *a[] = { "rev-parse", "--verify", "--quiet", ref->data, NULL };
		if (git_run(p->tree, a, -1, NULL) == 0)
			return cd_err_set(err, -EEXIST, "branch '%s' exists already", branch);
	}
	return 0;
}

int cd_proposal_commit_branch(struct cd_proposal *p, const char *branch, const char *by,
                              char ret_commit[65], struct cd_err *err)
{
	struct cd_buf out, prefix, ref;
	char parent[65];
	int r;
	size_t i;

	cd_buf_init(&out, 4096);
	cd_buf_init(&prefix, 4096);
	cd_buf_init(&ref, 512);
	if ((r = new_branch_ref(p, branch, &ref, err)) < 0)
		goto out;
	{
		const char *a[] = { "rev-parse", "--verify", "--quiet", "HEAD^{commit}", NULL };
		if (git_run(p->tree, a, -1, &out) != 0 || out.len < 40 || out.len > 64) {
			r = cd_err_set(err, -ENOENT,
			               "'%s' is not in a git repository with a commit at HEAD",
			               p->tree);
			goto out;
		}
		memcpy(parent, out.data, out.len + 1);
	}
	{
		/* The tree may be a subdirectory of the repository. */
		const char *a[] = { "rev-parse", "--show-prefix", NULL };
		if (git_run(p->tree, a, -1, &prefix) != 0) {
			r = cd_err_set(err, -EIO, "git rev-parse --show-prefix failed in '%s'",
			               p->tree);
			goto out;
		}
	}
	for (i = 0; i < p->nfiles; i++) {
		const struct cd_prop_file *f = &p->files[i];
		if (f->selected && (f->op == CD_PROP_ADDED || f->op == CD_PROP_MODIFIED ||
		                    f->op == CD_PROP_DELETED))
			break;
	}
	if (i == p->nfiles) {
		r = cd_err_set(err, -CD_E_USAGE,
		               "nothing git can hold: the selection has directories only (git "
		               "holds no empty directory); apply it to the tree instead");
		goto out;
	}
	if ((r = cd_proposal_check(p, err)) < 0)
		goto out;
	if (prefix.len) {
		/* Paths in the commit are relative to the repository's top. */
		for (i = 0; i < p->nfiles; i++) {
			struct cd_prop_file *f = &p->files[i];
			char *np;
			if (!f->selected)
				continue;
			np = malloc(prefix.len + f->path_len + 1);
			if (!np) {
				r = cd_err_set(err, -ENOMEM, "out of memory");
				goto out;
			}
			memcpy(np, prefix.data, prefix.len);
			memcpy(np + prefix.len, f->path, f->path_len + 1);
			free(f->path);
			f->path = np;
			f->path_len += prefix.len;
		}
	}
	r = fast_import(p, branch, parent, by, err);
	if (prefix.len) {
		for (i = 0; i < p->nfiles; i++) {
			struct cd_prop_file *f = &p->files[i];
			if (!f->selected)
				continue;
			memmove(f->path, f->path + prefix.len, f->path_len - prefix.len + 1);
			f->path_len -= prefix.len;
		}
	}
	if (r < 0)
		goto out;
	cd_buf_reset(&out);
	{
		const char *a[] = { "rev-parse", "--verify", "--quiet", ref.data, NULL };
		if (git_run(p->tree, a, -1, &out) != 0 || out.len < 40 || out.len > 64) {
			r = cd_err_set(err, -EIO, "the branch '%s' was not created", branch);
			goto out;
		}
	}
	memcpy(ret_commit, out.data, out.len + 1);
	for (i = 0; i < p->nfiles; i++) {
		struct cd_prop_file *f = &p->files[i];
		if (!f->selected)
			continue;
		if (f->op == CD_PROP_MKDIR && !has_file_below(p, i)) {
			snprintf(f->problem, sizeof f->problem,
			         "an empty directory: git cannot hold one, not in the commit");
			continue;
		}
		f->applied = 1;
	}
	r = 0;
out:
	cd_buf_release(&out);
	cd_buf_release(&prefix);
	cd_buf_release(&ref);
	return r;
}
