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
#include "sandbox/profile.h"

#include <fcntl.h>
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
	size_t i;

	for (i = 0; cd_git_control_names[i]; i++) {
		if (strlen(cd_git_control_names[i]) == cl &&
		    !memcmp(c, cd_git_control_names[i], cl))
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
