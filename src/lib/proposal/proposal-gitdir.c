/* proposal-gitdir.c — flags the changes to a git directory's control
 * paths wherever the directory is and whatever its name.  proposal.c
 * flags by names (.git, x.git, .gitmodules ...); a git directory known by
 * its contents escapes that: the tree's own top when the run was in a
 * bare repository or in a .git itself, a bare repository named without
 * .git, a directory the run made into one.  Git takes any of them for a
 * repository when the host runs it there, and reads its config and
 * hooks (a core.fsmonitor runs on the next `git status`). */
#include "proposal-int.h"

#include "util/bounds.h"
#include "sandbox/envrc.h"
#include "sandbox/gitcfg.h"
#include "sandbox/profile.h"
#include "util/path.h"

#define RUN_READ_MAX   (256 * 1024) /* of a pyproject.toml: a larger one is flagged */
#define GIT_AROUND_MAX 8            /* repositories around the tree looked at */

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* dir/name in the tree after the change: in the upper layer, or in the
 * lower one (a whiteout in the upper layer counts too: erring toward a
 * flag, which only asks the reviewer). */
static int present(int upfd, int lofd, const char *dir, size_t dl, const char *name, int want_dir)
{
	char rel[CD_PATH_MAX];
	struct stat st;
	int n = snprintf(rel, sizeof rel, "%.*s%s%s", (int)dl, dir, dl ? "/" : "", name);

	if (n < 0 || (size_t)n >= sizeof rel)
		return 1; /* cannot tell: flag */
	if (fstatat(upfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (!want_dir || S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)))
		return 1;
	return lofd >= 0 && fstatat(lofd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (!want_dir || S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode));
}

/* git's own test, as the sandbox's walk makes it (tree-scan.c): a HEAD,
 * and an objects directory or a commondir file. */
static int gitdir(int upfd, int lofd, const char *dir, size_t dl)
{
	return present(upfd, lofd, dir, dl, "HEAD", 0) &&
	       (present(upfd, lofd, dir, dl, "objects", 1) ||
	        present(upfd, lofd, dir, dl, "commondir", 0));
}

static int is_control(const char *c, size_t cl)
{
	/* a rebase's or cherry-pick's state: its todo's `exec` lines run on
	 * `git rebase --continue` */
	static const char *const state[] = { "rebase-merge", "rebase-apply", "sequencer", NULL };
	size_t i;

	for (i = 0; cd_git_control_names[i]; i++) {
		if (strlen(cd_git_control_names[i]) == cl &&
		    !memcmp(c, cd_git_control_names[i], cl))
			return 1;
	}
	for (i = 0; state[i]; i++) {
		if (strlen(state[i]) == cl && !memcmp(c, state[i], cl))
			return 1;
	}
	return 0;
}

/* Does f change a control path of a git directory above it: config,
 * hooks, info ... (cd_git_control_names), objects/info/alternates (other
 * object stores git reads), or a HEAD the run added (a directory made into
 * a repository)?  Only a path with such a component costs a look. */
static int controls_gitdir(const struct cd_prop_file *f, int upfd, int lofd)
{
	const char *path = f->path;
	size_t len = f->path_len, at = 0;

	while (at < len) {
		const char *c = path + at, *slash = memchr(c, '/', len - at);
		size_t cl = slash ? (size_t)(slash - c) : len - at;
		size_t dl = at ? at - 1 : 0; /* the directory above c */
		int cand = is_control(c, cl) ||
		           (len - at == sizeof "objects/info/alternates" - 1 &&
		            !memcmp(c, "objects/info/alternates", len - at)) ||
		           (!slash && cl == 4 && !memcmp(c, "HEAD", 4) && f->op == CD_PROP_ADDED);

		if (cand && gitdir(upfd, lofd, path, dl))
			return 1;
		at += cl + 1;
	}
	return 0;
}

void cd_prop_flag_gitdirs(struct cd_proposal *p, int upfd, int lofd)
{
	size_t i;

	for (i = 0; i < p->nfiles; i++) {
		struct cd_prop_file *f = &p->files[i];

		if (!f->flagged && f->op != CD_PROP_REFUSED && controls_gitdir(f, upfd, lofd))
			f->flagged = 1;
	}
}

/* A path the repository's config or hooks name (sandbox/gitcfg.h): a
 * change to it, or below it, is flagged. */
static int flag_named(void *arg, const char *path, enum cd_git_named kind)
{
	struct cd_proposal *p = arg;
	size_t i, tl = strlen(p->tree), rl;
	const char *rel;

	(void)kind;
	if (!strcmp(p->tree, "/"))
		tl = 0;
	if (strlen(path) <= tl || !cd_path_is_under(path, p->tree))
		return 0;
	rel = path + tl + 1;
	rl = strlen(rel);
	for (i = 0; i < p->nfiles; i++) {
		struct cd_prop_file *f = &p->files[i];

		if (f->op != CD_PROP_REFUSED && f->path_len >= rl && !memcmp(f->path, rel, rl) &&
		    (f->path_len == rl || f->path[rl] == '/'))
			f->flagged = 1;
	}
	return 0;
}

/* The repository holding the tree (its .git at the tree's top or above,
 * a directory or a linked worktree's .git file, and those around it):
 * what their config and hooks name, as the host has them, flagged. */
void cd_prop_flag_git_named(struct cd_proposal *p, const struct cd_git_env *env)
{
	char at[CD_PATH_MAX], gd[CD_PATH_MAX], top[CD_PATH_MAX];
	const char *from = p->tree, *slash;
	unsigned n;
	size_t i;

	/* in no repository: the caller's and the system's configuration */
	if (!cd_git_discover(from, gd, top) &&
	    cd_git_named_paths(NULL, NULL, env, flag_named, p) < 0)
		for (i = 0; i < p->nfiles; i++)
			if (p->files[i].op != CD_PROP_REFUSED)
				p->files[i].flagged = 1;
	for (n = 0; n < GIT_AROUND_MAX && cd_git_discover(from, gd, top); n++) {
		/* not read to the end (too many includes, no memory): any
		 * change may be one it names */
		if (cd_git_named_paths(gd, top, env, flag_named, p) < 0) {
			for (i = 0; i < p->nfiles; i++)
				if (p->files[i].op != CD_PROP_REFUSED)
					p->files[i].flagged = 1;
			return;
		}
		/* then git run at the directory above that repository's top */
		slash = strrchr(top, '/');
		if (!slash || !strcmp(top, "/"))
			return;
		snprintf(at, sizeof at, "%.*s", slash == top ? 1 : (int)(slash - top), top);
		from = at;
	}
}

static void flag_all(struct cd_proposal *p)
{
	size_t i;

	for (i = 0; i < p->nfiles; i++)
		if (p->files[i].op != CD_PROP_REFUSED)
			p->files[i].flagged = 1;
}

/* A relative PATH entry e (n bytes): the shell searches it from any
 * directory, so a change below that name at any depth is flagged
 * (packages/app/node_modules/.bin/git for ./node_modules/.bin; "../bin":
 * any bin), and with "." or an empty entry every executable file. */
static void flag_relative(struct cd_proposal *p, const char *e, size_t n)
{
	size_t i, at;

	for (;;) {
		if (n >= 2 && e[0] == '.' && e[1] == '/')
			e += 2, n -= 2;
		else if (n >= 3 && !memcmp(e, "../", 3))
			e += 3, n -= 3;
		else if (n && e[0] == '/')
			e++, n--;
		else
			break;
	}
	while (n && e[n - 1] == '/')
		n--;
	if ((n == 1 && e[0] == '.') || (n == 2 && !memcmp(e, "..", 2)))
		n = 0;
	for (i = 0; i < p->nfiles; i++) {
		struct cd_prop_file *f = &p->files[i];

		if (f->op == CD_PROP_REFUSED)
			continue;
		/* ".": any file made executable runs by name where it is */
		if (!n && (f->new_mode & 0111))
			f->flagged = 1;
		for (at = 0; n && at + n <= f->path_len && !f->flagged; at++) {
			if ((at == 0 || f->path[at - 1] == '/') && !memcmp(f->path + at, e, n) &&
			    (at + n == f->path_len || f->path[at + n] == '/'))
				f->flagged = 1;
		}
	}
}

/* The caller's PATH directories in the tree (direnv's PATH_add bin, ~/
 * the caller's home; a relative entry at any depth): a change in one is
 * flagged, as the host runs what is there by name.  An absolute entry
 * that is the tree itself (or resolves to it), which a run refuses:
 * every change flagged. */
void cd_prop_flag_path_dirs(struct cd_proposal *p, const char *path, const char *home)
{
	char norm[CD_PATH_MAX], real[CD_PATH_MAX];

	while (path) {
		size_t n = strcspn(path, ":");

		if (cd_path_search_relative(path, n)) {
			flag_relative(p, path, n);
		} else if (cd_path_search_entry(path, n, p->tree, home, norm, sizeof norm) == 0) {
			if (!strcmp(norm, p->tree) ||
			    (cd_path_resolve_links(norm, real, sizeof real) == 0 &&
			     !strcmp(real, p->tree))) {
				flag_all(p);
				return;
			}
			flag_named(p, norm, CD_GIT_NAMED_DIR);
			if (cd_path_resolve_links(norm, real, sizeof real) == 0)
				flag_named(p, real, CD_GIT_NAMED_DIR);
		}
		path = path[n] == ':' ? path + n + 1 : NULL;
	}
}

/* Files an .envrc beside them usually runs on the host's next cd
 * (source_env_if_exists .envrc.local, use nix, use flake). */
static const char *const envrc_run[] = { ".envrc.local", "shell.nix",  "default.nix",
	                                 "flake.nix",    "flake.lock", NULL };

/* The new content of f (in the upper layer) makes an editor run code
 * (a pylint init-hook, mypy plugins: cd_config_runs_code)?  One that
 * cannot be read is taken as one. */
static int runs_code(int upfd, const struct cd_prop_file *f)
{
	char *buf;
	size_t got = 0;
	ssize_t k = 1;
	int fd, hit;

	fd = openat(upfd, f->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	if (!(buf = malloc(RUN_READ_MAX))) {
		close(fd);
		return 1;
	}
	while (got < RUN_READ_MAX && (k = read(fd, buf + got, RUN_READ_MAX - got)) > 0)
		got += (size_t)k;
	close(fd);
	hit = k < 0 || got == RUN_READ_MAX || cd_config_runs_code(buf, got);
	free(buf);
	return hit;
}

#define ENVRC_DIRS_MAX 4096 /* directories whose .envrc is looked for */

static int flag_envrc_path(void *arg, const char *path, enum cd_envrc_named kind)
{
	(void)kind;
	return flag_named(arg, path, CD_GIT_NAMED_DIR);
}

/* The .envrc of directory rel (dl bytes, 0: the top) in layer fd: what
 * it names (a PATH_add directory, a file it sources) flagged. */
static void envrc_in(struct cd_proposal *p, int fd, const char *rel, size_t dl)
{
	char name[CD_PATH_MAX], dir[CD_PATH_MAX];
	struct stat st;
	size_t got = 0;
	ssize_t k = 1;
	char *buf;
	int efd, n;

	n = snprintf(name, sizeof name, "%.*s%s.envrc", (int)dl, rel, dl ? "/" : "");
	if (fd < 0 || n < 0 || (size_t)n >= sizeof name)
		return;
	efd = openat(fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (efd < 0)
		return;
	if (fstat(efd, &st) < 0 || !S_ISREG(st.st_mode) || !(buf = malloc(RUN_READ_MAX))) {
		close(efd);
		return;
	}
	while (got < RUN_READ_MAX && (k = read(efd, buf + got, RUN_READ_MAX - got)) > 0)
		got += (size_t)k;
	close(efd);
	n = snprintf(dir, sizeof dir, "%s%s%.*s", strcmp(p->tree, "/") ? p->tree : "",
	             dl || !strcmp(p->tree, "/") ? "/" : "", (int)dl, rel);
	if (n < 0 || (size_t)n >= sizeof dir ||
	    cd_envrc_named_paths(buf, got, dir, flag_envrc_path, p) < 0)
		flag_all(p); /* cannot tell what it names */
	free(buf);
}

/* An .envrc in a directory of a changed file or above it, before or
 * after the run: the directories it puts on PATH (direnv's PATH_add bin,
 * layout python's .direnv) and the files it sources, which the host's
 * shell runs by name on its next cd there: a change in one is flagged
 * (envrc.h). */
static void flag_envrc(struct cd_proposal *p, int upfd, int lofd)
{
	char **done = calloc(ENVRC_DIRS_MAX, sizeof *done);
	size_t ndone = 0, i, j, dl;

	if (!done) {
		flag_all(p);
		return;
	}
	for (i = 0; i < p->nfiles; i++) {
		const char *path = p->files[i].path;

		for (dl = p->files[i].path_len; ndone < ENVRC_DIRS_MAX;) {
			while (dl && path[dl - 1] != '/')
				dl--;
			dl -= dl > 0; /* the directory above: "" at the top */
			for (j = 0; j < ndone; j++)
				if (strlen(done[j]) == dl && !memcmp(done[j], path, dl))
					break;
			if (j < ndone || !(done[ndone] = strndup(path, dl)))
				break; /* read already, and all above it */
			ndone++;
			envrc_in(p, upfd, path, dl);
			envrc_in(p, lofd, path, dl);
			if (!dl)
				break;
		}
	}
	for (j = 0; j < ndone; j++)
		free(done[j]);
	free(done);
}

void cd_prop_flag_run_through(struct cd_proposal *p, int upfd, int lofd)
{
	size_t i, j, dl;

	flag_envrc(p, upfd, lofd);
	for (i = 0; i < p->nfiles; i++) {
		struct cd_prop_file *f = &p->files[i];
		const char *base = memrchr(f->path, '/', f->path_len);

		if (f->flagged || (f->op != CD_PROP_ADDED && f->op != CD_PROP_MODIFIED))
			continue;
		base = base ? base + 1 : f->path;
		dl = base > f->path ? (size_t)(base - f->path - 1) : 0;
		for (j = 0; envrc_run[j] && !f->flagged; j++) {
			if (!strcmp(base, envrc_run[j]) &&
			    present(upfd, lofd, f->path, dl, ".envrc", 0))
				f->flagged = 1;
		}
		if (!f->flagged && cd_config_run_name(base) && runs_code(upfd, f))
			f->flagged = 1;
	}
}
