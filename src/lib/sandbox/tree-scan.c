/* tree-scan.c — one walk over the host trees a plan binds (plan-int.h).
 *
 * Three things hide in a bound tree that a bind alone does not handle:
 * host Unix sockets (connect() works through a read-only bind and no
 * Landlock right covers it, THREATS row 11), credential files (a project
 * or a home-like directory holding .netrc, cloud and registry tokens,
 * private keys), and, in a writable tree, files the host runs on its own
 * later (git config and hooks of any repository at any depth, .envrc,
 * editor tasks, MCP client configs).  One walk finds all three: sockets
 * and credentials are covered with /dev/null, the others are kept
 * read-only (a mount point also cannot be renamed or removed).
 *
 * The walk fails closed: an entry it cannot reach (past CD_SOCKET_SCAN_MAX
 * entries, deeper than SCAN_MAX_DEPTH, a path longer than PATH_MAX)
 * refuses the run instead of running half-protected.  What appears on
 * the host after the walk is not covered; in a workspace-write tree the
 * front end walks again after the run (cd_plan_planted) and reports any
 * new git control path or host-run file.
 */
#include "tree-scan-int.h"

#include "util/bounds.h"
#include "util/path.h"
#include "profile.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MODULES_MAX_DEPTH 16
#define DENTS_BYTES       32768 /* one getdents64 read */

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

void cd_tree_file_id(const struct stat *st, struct cd_file_id *ret)
{
	ret->dev = st->st_dev;
	ret->ino = st->st_ino;
	ret->ctime_ns = cd_tree_ctime_ns(st);
	ret->dir = S_ISDIR(st->st_mode);
	ret->known = 1;
}

static void file_id(const char *path, struct cd_file_id *ret)
{
	struct stat st;

	memset(ret, 0, sizeof *ret);
	if (lstat(path, &st) == 0)
		cd_tree_file_id(&st, ret);
}

/* Room for one more entry in plan->host_run_id (which follows host_run). */
static int note_id(struct cd_plan *p)
{
	struct cd_file_id *v;

	if (p->nhost_run % 64)
		return 0;
	if (!(v = realloc(p->host_run_id, (p->nhost_run + 64) * sizeof *v)))
		return -ENOMEM;
	p->host_run_id = v;
	return 0;
}

/* Remember REL (relative to the tree; "" is the tree itself) with why,
 * as "SRC/REL\0WHY" (WHY empty for an ordinary new path). */
int cd_tree_list_add_why(struct walk *w, const char *rel, const char *why)
{
	size_t sl, rl, wl;
	char **v, *s;
	int root = !strcmp(w->src, "/"), r;

	if (!w->list)
		return 0;
	if (*w->nlist >= CD_PLAN_MAX_MOUNTS * 4) {
		/* enough to warn about; the mounts are what protects */
		if (w->list_only && !w->incomplete[0])
			snprintf(w->incomplete, sizeof w->incomplete,
			         "more than %d paths to report: the rest not listed",
			         CD_PLAN_MAX_MOUNTS * 4);
		return 0;
	}
	if (w->list == &w->p->host_run && (r = note_id(w->p)) < 0)
		return cd_err_set(w->err, r, "out of memory");
	sl = strlen(w->src);
	rl = strlen(rel);
	wl = why ? strlen(why) : 0;
	v = realloc(*w->list, (*w->nlist + 1) * sizeof *v);
	if (!v)
		return cd_err_set(w->err, -ENOMEM, "out of memory");
	*w->list = v;
	if (!(s = malloc(sl + 1 + rl + wl + 2)))
		return cd_err_set(w->err, -ENOMEM, "out of memory");
	memcpy(s, w->src, sl);
	if (rl && !root)
		s[sl++] = '/';
	memcpy(s + sl, rel, rl + 1);
	memcpy(s + sl + rl + 1, why ? why : "", wl + 1);
	if (w->list == &w->p->host_run)
		file_id(s, &w->p->host_run_id[*w->nlist]);
	v[(*w->nlist)++] = s;
	return 0;
}

/* list_only: rel (a directory) could not be checked whole; listed with
 * why, and the first such reason kept for the record. */
int cd_tree_incomplete(struct walk *w, const char *rel, const char *why)
{
	size_t k = sizeof w->incomplete;
	int n;

	if (!w->incomplete[0]) {
		n = snprintf(w->incomplete, k, "%s: '%s%s%s'", why, w->src,
		             rel[0] && w->srclen ? "/" : "", rel);
		if (n < 0 || (size_t)n >= k)
			memcpy(w->incomplete + k - 5, "...'", 5); /* cut: say so */
	}
	return cd_tree_list_add_why(w, rel, why);
}

int cd_tree_list_add(struct walk *w, const char *host)
{
	return cd_tree_list_add_why(w, host[w->srclen] ? host + w->srclen + 1 : "", NULL);
}

int cd_tree_has_dest(const struct cd_plan *p, const char *dest, enum cd_mount_kind kind)
{
	size_t i;

	for (i = 0; i < p->nmounts; i++) {
		if (p->mounts[i].kind == kind && strcmp(p->mounts[i].dest, dest) == 0)
			return 1;
	}
	return 0;
}

/* Mount over the host path `host` (below w->src) at its place inside. */
int cd_tree_cover(struct walk *w, const char *host, enum cd_mount_kind kind, unsigned flags,
                  const char *why)
{
	char dest[CD_PATH_MAX];
	int n, r;

	if (w->list_only)
		return 0;
	/* a file kept read-only because the host runs it: its other names
	 * in the writable trees too (a hook hard-linked to scripts/pc),
	 * whether or not the plan covered its path already */
	if (w->writable && kind == CD_MNT_REMOUNT_RO && !w->link_pass &&
	    (r = cd_tree_note_pinned(w, host)) < 0)
		return r;
	n = snprintf(dest, sizeof dest, "%s%s", strcmp(w->dest, "/") ? w->dest : "",
	             host + w->srclen);
	if (n < 0 || (size_t)n >= sizeof dest)
		return cd_err_set(
		        w->err, -ENAMETOOLONG,
		        "'%.64s...' is longer than PATH_MAX inside the sandbox: it cannot "
		        "be covered, so the run is refused",
		        host);
	if ((kind != CD_MNT_MASK || w->link_pass) && cd_tree_has_dest(w->p, dest, kind))
		return kind == CD_MNT_BIND ? cd_tree_pin_planned(w, dest, host) : 0;
	if (cd_tree_shadowed(w->p, w->first, w->mount, dest))
		return 0; /* not seen there (or covered already) */
	n = cd_plan_mount_add(w->p, kind, flags, kind == CD_MNT_BIND ? host : NULL, dest, why,
	                      w->err);
	if (n < 0 || (why && !strcmp(why, WHY_SOCKET)))
		return n;
	r = kind == CD_MNT_BIND ? cd_tree_pin_source(w, &w->p->mounts[w->p->nmounts - 1], host)
	                        : cd_tree_pin(w, host);
	if (r == 0 && w->writable && why && !strcmp(why, WHY_CREDENTIAL))
		r = cd_tree_hold_dirs(w, host);
	return r;
}

/* The cover just planned must land on the file the walk judged at
 * `host`: the child compares the inode it mounts on (a concurrent rename
 * of a directory above moves the file between the walk and the mount).
 * One gone already moved. */
int cd_tree_pin(struct walk *w, const char *host)
{
	struct cd_mount *m = &w->p->mounts[w->p->nmounts - 1];
	struct stat st;

	if (lstat(host, &st) < 0)
		return cd_err_sys(
		        w->err, -errno,
		        "'%s' moved while cordon checked the tree (a concurrent rename?): "
		        "it cannot be covered, so the run is refused",
		        host);
	m->flags |= CD_MNT_PINNED;
	m->pin_dev = st.st_dev;
	m->pin_ino = st.st_ino;
	return 0;
}

static int refuse_symlink(struct walk *w, const char *host)
{
	if (w->list_only)
		return cd_tree_list_add(w, host);
	return cd_err_set(w->err, -CD_E_USAGE,
	                  "'%s' is a symlink; a writable tree cannot keep it read-only (the host "
	                  "would run what it points to), so the run is refused",
	                  host);
}

static int protect_gitdir(struct walk *w, const char *gd, unsigned depth);

/* A git directory, wherever it is and whatever its name (a repository's
 * .git, a submodule's, a worktree's, a bare repository, a tree made into
 * one): git's own rule, a HEAD and either an objects directory (a symlink
 * to one counts) or a commondir file naming where the objects are.  Wider
 * than git's (which also wants refs and a HEAD that parses): what it
 * wrongly takes for one is only kept read-only or reported. */
int cd_tree_is_gitdir(const char *dir)
{
	char c[CD_PATH_MAX];
	struct stat st;
	int n = snprintf(c, sizeof c, "%s/HEAD", dir);

	if (n < 0 || (size_t)n + sizeof "/commondir" > sizeof c || lstat(c, &st) < 0 ||
	    S_ISDIR(st.st_mode))
		return 0;
	/* objects: a directory, or a symlink even while it dangles (a later
	 * run may create its target: counted now, erring toward a pin). */
	memcpy(c + n - 4, "objects", 8);
	if (lstat(c, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)))
		return 1;
	memcpy(c + n - 4, "commondir", 10);
	return lstat(c, &st) == 0;
}

/* Does the HEAD of git directory `dir` still parse the way git wants
 * ("ref: refs/...", a symlink into refs/, or an object id)?  If not git
 * skips the directory and takes the one above it, which the run may
 * have made.  1 yes, 0 no (or gone). */
int cd_tree_head_parses(const char *dir)
{
	char c[CD_PATH_MAX], buf[256];
	ssize_t n;
	size_t i;
	int fd;

	if (snprintf(c, sizeof c, "%s/HEAD", dir) >= (int)sizeof c)
		return 0;
	if ((n = readlink(c, buf, sizeof buf - 1)) > 0)
		return (size_t)n > 5 && !memcmp(buf, "refs/", 5);
	fd = open(c, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (!strncmp(buf, "ref: refs/", 10))
		return 1;
	for (i = 0; buf[i] && strchr("0123456789abcdef", buf[i]); i++)
		;
	return !buf[i] && (i == 40 || i == 64);
}

/* gd/modules holds the git directories of submodules, at paths that may
 * have several components: each directory with a HEAD is one. */
static int protect_modules(struct walk *w, const char *dir, unsigned depth)
{
	char sub[CD_PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *d;
	int r = 0, n;

	if (depth > MODULES_MAX_DEPTH)
		return cd_err_set(w->err, -CD_E_LIMIT,
		                  "'%s': submodules nested deeper than %d levels; refused", dir,
		                  MODULES_MAX_DEPTH);
	if ((r = cd_tree_cover(w, dir, CD_MNT_BIND, CD_MNT_RW, NULL)) < 0)
		return r;
	if (!(d = opendir(dir)))
		return 0;
	while (r == 0 && (e = readdir(d))) {
		int is_gd;

		if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, "..")))
			continue;
		n = snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
		if (n < 0 || (size_t)n + sizeof "/HEAD" > sizeof sub) {
			r = cd_err_set(w->err, -ENAMETOOLONG, "'%.64s...': path too long", dir);
			break;
		}
		memcpy(sub + n, "/HEAD", sizeof "/HEAD");
		is_gd = lstat(sub, &st) == 0;
		sub[n] = '\0';
		if (lstat(sub, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode))
			r = refuse_symlink(w, sub); /* git would follow it */
		else if (S_ISDIR(st.st_mode))
			r = is_gd ? protect_gitdir(w, sub, depth + 1)
			          : protect_modules(w, sub, depth + 1);
	}
	closedir(d);
	return r;
}

/* gd/name, when it exists: read-only (a symlink is refused). */
static int pin_control(struct walk *w, const char *gd, const char *name)
{
	char c[CD_PATH_MAX];
	struct stat st;
	int n = snprintf(c, sizeof c, "%s/%s", gd, name);

	if (n < 0 || (size_t)n >= sizeof c)
		return cd_err_set(w->err, -ENAMETOOLONG, "'%.64s...': path too long", gd);
	if (lstat(c, &st) < 0)
		return 0;
	if (S_ISLNK(st.st_mode))
		return refuse_symlink(w, c);
	if (cd_tree_list_add(w, c) < 0)
		return -ENOMEM;
	return cd_tree_cover(w, c, CD_MNT_REMOUNT_RO, 0, WHY_GIT);
}

static const char *const git_state_dirs[] = { "rebase-merge", "rebase-apply", "sequencer", NULL };

/* A git directory (a repository's .git, a submodule's or worktree's):
 * itself a mount point (no rename-and-replace), its control paths
 * read-only (commondir among them; objects/info/alternates too: other
 * object stores git would read), its submodules' directories the same.
 * HEAD stays writable (switching branches writes it); the check after
 * the run reports one that no longer parses. */
static int protect_gitdir(struct walk *w, const char *gd, unsigned depth)
{
	char c[CD_PATH_MAX];
	struct stat st;
	size_t i;
	int r, n;

	if ((r = cd_tree_cover(w, gd, CD_MNT_BIND, CD_MNT_RW, NULL)) < 0)
		return r;
	for (i = 0; cd_git_control_names[i]; i++) {
		if ((r = pin_control(w, gd, cd_git_control_names[i])) < 0)
			return r;
	}
	if ((r = pin_control(w, gd, "objects/info/alternates")) < 0)
		return r;
	/* a rebase or cherry-pick in progress: `git rebase --continue` runs
	 * its todo's `exec` lines; git writes them, so listed, not pinned */
	for (i = 0; git_state_dirs[i]; i++) {
		n = snprintf(c, sizeof c, "%s/%s", gd, git_state_dirs[i]);
		if (n > 0 && (size_t)n < sizeof c && (r = cd_tree_list_state(w, c)) < 0)
			return r;
	}
	if ((r = cd_tree_git_targets(w, gd, NULL)) < 0)
		return r;
	n = snprintf(c, sizeof c, "%s/modules", gd);
	if (n > 0 && (size_t)n < sizeof c && lstat(c, &st) == 0 && S_ISDIR(st.st_mode))
		return protect_modules(w, c, depth);
	return 0;
}

/* A .git file ("gitdir: PATH", linked worktrees and submodules): itself
 * read-only so it cannot be pointed elsewhere, what the repository's
 * configuration names in this tree read-only, and the git directory it
 * names protected when it lies in a tree the sandbox can write. */
static int protect_gitfile(struct walk *w, int dfd, const char *name)
{
	char buf[CD_PATH_MAX], target[CD_PATH_MAX], canon[CD_PATH_MAX];
	const char *dir_end = strrchr(w->path, '/');
	ssize_t n;
	size_t i;
	int fd, r;

	if (w->list_only)
		return 0;
	if ((r = cd_tree_cover(w, w->path, CD_MNT_REMOUNT_RO, 0, WHY_GIT)) < 0)
		return r;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 8 || memcmp(buf, "gitdir: ", 8) != 0)
		return 0; /* git ignores it */
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (buf[8] == '/')
		r = snprintf(target, sizeof target, "%s", buf + 8);
	else
		r = snprintf(target, sizeof target, "%.*s/%s", (int)(dir_end - w->path), w->path,
		             buf + 8);
	if (r < 0 || (size_t)r >= sizeof target ||
	    cd_path_canonical(target, canon, sizeof canon) < 0)
		return 0; /* git finds nothing there either */
	/* git takes a ".." of it on disk (gitdir: x/../rg): x held */
	if ((r = cd_tree_dotdot_ways(w, target)) < 0)
		return r;
	/* What the repository's config and hooks name in this tree, from
	 * this worktree's top: a linked worktree's config is its common
	 * directory's, wherever that is, and a relative core.hooksPath or
	 * fsmonitor script is each worktree's own. */
	snprintf(target, sizeof target, "%.*s", (int)(dir_end - w->path), w->path);
	if ((r = cd_tree_git_targets(w, canon, target)) < 0)
		return r;
	for (i = 0; i < w->p->nmounts; i++) {
		const struct cd_mount *m = &w->p->mounts[i];
		struct walk sub;

		if (m->kind != CD_MNT_BIND || !(m->flags & CD_MNT_RW) || !m->src ||
		    (m->flags & CD_MNT_DEV) || i < w->first || m->why ||
		    (w->p->scratch_host && !strcmp(m->src, w->p->scratch_host)) ||
		    !cd_path_is_under(canon, m->src))
			continue;
		sub = *w;
		sub.mount = i;
		sub.src = m->src;
		sub.dest = m->dest;
		sub.srclen = strcmp(m->src, "/") ? strlen(m->src) : 0;
		sub.list = NULL;
		return protect_gitdir(&sub, canon, 0);
	}
	return 0;
}

/* Walk w->path (plen bytes), directory `name` of dfd, at depth + 1. */
static int walk_sub(struct walk *w, int dfd, const char *name, size_t plen, unsigned depth)
{
	int fd;

	if (depth + 1 > SCAN_MAX_DEPTH && w->list_only)
		return cd_tree_incomplete(w, w->path + w->srclen + 1, WHY_TOO_DEEP);
	if (depth + 1 > SCAN_MAX_DEPTH)
		return cd_err_set(w->err, -CD_E_LIMIT,
		                  "'%.200s' is nested deeper than %d directories: cordon cannot "
		                  "check it for host sockets, git control files and "
		                  "credentials, so the run is refused",
		                  w->path, SCAN_MAX_DEPTH);
	if (w->cache && (fd = cd_tree_cache_dir(w, dfd, name, plen, depth + 1)) != 1)
		return fd;
	if (dfd < 0) {
		dfd = AT_FDCWD; /* a directory replayed from the cache: by path */
		name = w->path;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		return cd_tree_walk_dir(w, fd, plen, depth + 1);
	if (errno != ENOENT)
		return cd_tree_unopenable(w, dfd, name, errno);
	return 0;
}

/* Does an entry of nl bytes fit after w->path's len?  If not, *ret is
 * the walk's answer (listed as unchecked after the run, else refused). */
static int path_fits(struct walk *w, size_t len, size_t nl, int *ret)
{
	if (len + 1 + nl + 1 < sizeof w->path)
		return 1;
	if (w->list_only)
		*ret = cd_tree_incomplete(w, w->path[w->srclen] ? w->path + w->srclen + 1 : "",
		                          WHY_TOO_LONG);
	else
		*ret = cd_err_set(
		        w->err, -ENAMETOOLONG,
		        "a path under '%s' is longer than PATH_MAX: cordon cannot check it "
		        "for host sockets, git control files and credentials, so the run "
		        "is refused",
		        w->src);
	return 0;
}

/* Walk the plain directory `name` of dfd (w->path, len bytes; dfd < 0:
 * by path), whose parent the cache replayed. */
int cd_tree_enter(struct walk *w, int dfd, const char *name, size_t len, unsigned depth)
{
	size_t nl = strlen(name);
	int r;

	if (!path_fits(w, len, nl, &r))
		return r;
	w->path[len] = '/';
	memcpy(w->path + len + 1, name, nl + 1);
	r = walk_sub(w, dfd, name, len + 1 + nl, depth);
	w->path[len] = '\0';
	return r;
}

static int visit(struct walk *w, int dfd, const char *name, unsigned char type, size_t len,
                 unsigned depth)
{
	size_t nl = strlen(name);
	struct stat st;
	int r = 0, hpath = 0, crun = 0;

	if (!path_fits(w, len, nl, &r))
		return r;
	w->path[len] = '/';
	memcpy(w->path + len + 1, name, nl + 1);
	if (type == DT_UNKNOWN) {
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			goto out;
		type = S_ISDIR(st.st_mode)    ? DT_DIR
		       : S_ISSOCK(st.st_mode) ? DT_SOCK
		       : S_ISLNK(st.st_mode)  ? DT_LNK
		       : S_ISREG(st.st_mode)  ? DT_REG
		                              : DT_UNKNOWN;
	}
	if (w->link_pass) {
		if (type == DT_REG)
			r = cd_tree_link_visit(w, dfd, name);
		if (r == 0 && type == DT_DIR)
			goto descend;
		goto out;
	}
	if (type == DT_SOCK && w->sockets) {
		r = cd_tree_cover(w, w->path, CD_MNT_MASK, CD_MNT_OPTIONAL, WHY_SOCKET);
	} else if (type == DT_LNK && w->creds && !w->list_only) {
		r = cd_tree_credential_link(w, dfd, name, nl, len + 1 + nl);
	} else if (type == DT_REG && w->creds &&
	           cd_tree_is_credential(w, dfd, name, nl, len + 1 + nl, 0)) {
		r = cd_tree_cover(w, w->path, CD_MNT_MASK, CD_MNT_OPTIONAL, WHY_CREDENTIAL);
		if (r == 0)
			r = cd_tree_note_links(w, dfd, name);
	}
	/* A setuid or setgid file already in a writable tree keeps its bits
	 * when its content is rewritten through a shared mapping (the kernel
	 * clears them on write(2), not on page faults), and the seccomp mode
	 * filter never sees that: such a file is kept read-only, where that
	 * would grant more than the sandbox's own host ids (suid_matters). */
	if (r == 0 && w->writable && (w->suid_matters || w->want_shared) && !w->list_only &&
	    type == DT_REG && (r = cd_tree_is_setid(w, dfd, name)) > 0) {
		w->setid_hit = 1;
		r = cd_tree_cover(w, w->path, CD_MNT_REMOUNT_RO, 0,
		                  r == 2 ? WHY_FCAPS : WHY_SETUID);
	} else if (r == 0 && !w->writable && w->shared.n && !w->list_only && type == DT_REG)
		r = cd_tree_note_ro_link(w, dfd, name);
	/* A git directory not named .git (a bare repository, one a .git
	 * file names): found by its HEAD, protected the same way.  So is the
	 * tree's own top whatever its name (--rw REPO/.git: no parent met
	 * it by name); a .git below it was handled by its name. */
	if (r == 0 && w->protect && (type == DT_REG || type == DT_LNK) && !strcmp(name, "HEAD") &&
	    (len == w->srclen || !cd_tree_suffix_is(w->path, len, ".git"))) {
		char dir[CD_PATH_MAX];

		memcpy(dir, w->path, len);
		dir[len] = '\0';
		if (cd_tree_is_gitdir(dir)) {
			/* after the run, a directory that was not one before */
			r = cd_tree_list_add_why(w, dir[w->srclen] ? dir + w->srclen + 1 : "",
			                         WHY_BECAME_GIT);
			if (r == 0)
				r = protect_gitdir(w, dir, 0);
		}
	}
	if (r == 0 && w->list_only && type != DT_DIR && !strcmp(name, "alternates") &&
	    cd_tree_objects_info(w->path, len))
		r = cd_tree_list_add(w, w->path);
	/* before the run too: a link there already is not reported after */
	if (r == 0 && w->protect && type == DT_LNK && !cd_tree_is_host_run(name) &&
	    cd_tree_link_leaves(w, dfd, name))
		r = cd_tree_list_add_why(w, w->path + w->srclen + 1, WHY_LINK_OUT);
	/* reported when written (.pnp.cjs, a pyproject.toml without a hook),
	 * or read-only while it holds a hook (crun 2) */
	if (r == 0 && w->protect && type == DT_REG && cd_config_run_name(name))
		crun = 1 + cd_tree_content_runs(dfd, name);
	if (r == 0 && w->protect && type == DT_REG && (crun == 1 || cd_tree_is_reported(name)))
		r = cd_tree_list_add(w, w->path);
	if (r == 0 && w->protect &&
	    (cd_tree_is_host_run(name) || cd_tree_python_run(dfd, w->path, len + 1 + nl, name) ||
	     (hpath = cd_tree_host_run_path(w->path, len + 1 + nl, name)) || crun == 2)) {
		if ((r = cd_tree_list_add(w, w->path)) < 0)
			goto out;
		/* a virtualenv's python is a link to the system's: listed, so
		 * the check after the run reports it replaced or retargeted */
		if (type == DT_LNK && hpath)
			r = 0;
		else if (type == DT_LNK)
			r = refuse_symlink(w, w->path);
		else if (!strcmp(name, ".git") && type == DT_DIR)
			r = protect_gitdir(w, w->path, 0);
		else if (!strcmp(name, ".git") && type == DT_REG)
			r = protect_gitfile(w, dfd, name);
		else if (!w->list_only)
			r = cd_tree_cover(w, w->path, CD_MNT_REMOUNT_RO, 0, WHY_HOST_RUN);
		if (r == 0 && type == DT_REG)
			r = cd_tree_run_targets(w, dfd, name, len);
		if (r == 0 && w->list_only && !strcmp(name, ".git"))
			goto out; /* listing: the control paths are listed already */
	}
descend:
	if (r == 0 && type == DT_DIR)
		r = walk_sub(w, dfd, name, len + 1 + nl, depth);
out:
	w->path[len] = '\0';
	return r;
}

int cd_tree_visit(struct walk *w, int dfd, const char *name, unsigned char type, size_t len,
                  unsigned depth)
{
	return visit(w, dfd, name, type, len, depth);
}

int64_t cd_tree_ctime_ns(const struct stat *st)
{
	return (int64_t)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
}

/* workspace-write: each directory of the tree and its ctime, so that
 * cd_plan_planted reads only the ones whose entries changed (a new entry,
 * a rename or a removal sets the directory's ctime, which no one without
 * CAP_SYS_TIME can set back). */
static int stamp(struct walk *w, const struct stat *st)
{
	if (!st) {
		w->p->trees[w->tree].complete = 0; /* the check walks the whole tree instead */
		return 0;
	}
	return cd_tree_stamp_id(w, st->st_dev, st->st_ino, cd_tree_ctime_ns(st));
}

/* n more entries read (or replayed): refused past CD_SOCKET_SCAN_MAX. */
int cd_tree_count(struct walk *w, size_t n)
{
	w->seen += n;
	if (w->seen <= CD_SOCKET_SCAN_MAX)
		return 0;
	return cd_err_set(w->err, -CD_E_LIMIT,
	                  "cannot check '%s' for host sockets, git control files and "
	                  "credentials: more than %d entries; run from a smaller directory",
	                  w->src, CD_SOCKET_SCAN_MAX);
}

/* The entries of dfd, read straight with getdents64 into this depth's
 * buffer (no DIR stream: no allocation and no fcntl calls per directory),
 * each handed to visit(). */
int cd_tree_walk_dir(struct walk *w, int dfd, size_t len, unsigned depth)
{
	size_t idx = w->p->ndirs;
	char **buf = &w->dents[depth < SCAN_MAX_DEPTH + 1 ? depth : SCAN_MAX_DEPTH + 1];
	int r = 0, head = 0, folded, have = 0;
	struct fold *fold = NULL;
	struct stat st;
	long n;

	if ((r = cd_tree_searchable(w, dfd)) != 0)
		goto out;
	if ((w->stamp || w->cache) && (have = fstat(dfd, &st) == 0) && w->cache)
		cd_tree_cache_read_begin(w, depth, &st);
	if (w->stamp && (r = stamp(w, have ? &st : NULL)) < 0)
		goto out;
	if (!*buf && !(*buf = malloc(DENTS_BYTES))) {
		r = cd_err_set(w->err, -ENOMEM, "out of memory");
		goto out;
	}
	/* one ioctl a directory; the lookups only where names fold */
	if ((folded = cd_tree_fold_probe(dfd, 0, NULL)) && !(fold = malloc(sizeof *fold))) {
		r = cd_err_set(w->err, -ENOMEM, "out of memory");
		goto out;
	}
	if (folded)
		cd_tree_fold_probe(dfd, 1, fold);
	while (r == 0 && (n = syscall(SYS_getdents64, dfd, *buf, DENTS_BYTES)) != 0) {
		long off = 0;

		if (n < 0 && w->list_only) {
			r = cd_tree_incomplete(w, w->path[w->srclen] ? w->path + w->srclen + 1 : "",
			                       WHY_UNREADABLE);
			break;
		}
		if (n < 0) {
			r = cd_err_sys(w->err, -errno,
			               "cannot read '%s' to check it for host sockets, git control "
			               "files and credentials; refused",
			               w->path);
			break;
		}
		while (r == 0 && off < n) {
			const struct linux_dirent64 *e = (const void *)(*buf + off);
			const char *name;

			off += e->d_reclen;
			if (e->d_name[0] == '.' &&
			    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
				continue;
			if ((r = cd_tree_count(w, 1)) < 0)
				break;
			name = folded ? cd_tree_fold_name(fold, e->d_ino, e->d_name) : e->d_name;
			head |= name[0] == 'H' && !strcmp(name, "HEAD");
			/* kept after its visit: a set-id file is kept (suid_matters) */
			w->setid_hit = 0;
			r = visit(w, dfd, name, e->d_type, len, depth);
			if (w->cache && r == 0)
				cd_tree_cache_item(w, depth, name, e->d_type, len);
		}
	}
	/* a git directory now: after the run its HEAD must still parse */
	if (r == 0 && head)
		cd_tree_mark_gitdir(w, idx);
	if (w->cache && have)
		cd_tree_cache_read_end(w, depth, r == 0 && !folded);
out:
	free(fold);
	close(dfd);
	return r < 0 ? r : 0; /* 1: not searchable, skipped */
}

int cd_tree_walk_tree(struct walk *w, const char *src, const char *dest)
{
	size_t len = strlen(src);
	struct stat st;
	int pfd, fd, keep, r;

	if (len >= sizeof w->path)
		return cd_err_set(w->err, -ENAMETOOLONG, "'%.64s...': path too long", src);
	if ((pfd = cd_tree_source_open(w, src, &st)) < 0)
		return pfd == -ENOENT ? 0 : pfd;
	if (!S_ISDIR(st.st_mode)) {
		r = cd_tree_walk_file(w, pfd, &st, src, dest);
		close(pfd);
		return r;
	}
	fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(pfd);
	if (fd < 0 && (errno == EACCES || errno == EPERM) && (w->list_only || w->writable))
		return w->list_only ? cd_tree_incomplete(w, "", WHY_UNREADABLE)
		                    : cd_err_sys(w->err, -errno,
		                                 "cannot read '%s' to check it for host sockets, "
		                                 "git control files and credentials; refused",
		                                 src);
	if (fd < 0) /* unreadable read-only tree: pinned, so the sandbox gets it unread */
		return errno == EACCES || errno == EPERM
		               ? 0
		               : cd_err_sys(w->err, -errno, "cannot check '%s'; refused", src);
	if ((r = cd_tree_root_opened(w, fd, src)) < 0 ||
	    (keep = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
		close(fd);
		return r < 0 ? r : cd_err_sys(w->err, -errno, "cannot check '%s'; refused", src);
	}
	memcpy(w->path, src, len + 1);
	w->src = src;
	w->dest = dest;
	w->srclen = strcmp(src, "/") ? len : 0;
	if ((r = cd_tree_planned_fit(w, keep)) < 0) {
		close(fd);
		close(keep);
		return r;
	}
	/* The top's listing from the cache only after the top is pinned and
	 * kept open (above): a hit is then checked for a moved top as a walk
	 * is, and the after-run check reads through the kept descriptor. */
	r = w->cache && w->srclen ? cd_tree_cache_dir(w, -1, src, len, 0) : 1;
	if (r == 1)
		r = cd_tree_walk_dir(w, fd, w->srclen, 0);
	else
		close(fd);
	if (r == 0)
		r = cd_tree_root_unchanged(w, keep, src);
	close(keep);
	return r;
}

void cd_tree_walk_free(struct walk *w)
{
	size_t i;

	for (i = 0; i < CD_ARRAY_SIZE(w->dents); i++)
		free(w->dents[i]);
	free(w);
}

/* A writable tree whose directories the walk stamps: plan->trees[w->tree]. */
static int stamped_tree(struct walk *w, const char *root, int planted)
{
	struct cd_plan *p = w->p;
	struct cd_stamped_tree *v;
	struct timespec now;

	if (!(v = realloc(p->trees, (p->ntrees + 1) * sizeof *v)))
		return cd_err_set(w->err, -ENOMEM, "out of memory");
	p->trees = v;
	if (!(v[p->ntrees].root = strdup(root)))
		return cd_err_set(w->err, -ENOMEM, "out of memory");
	v[p->ntrees].complete = 1;
	v[p->ntrees].planted = planted;
	p->nplanted += planted != 0;
	v[p->ntrees].mount = w->mount;
	v[p->ntrees].fd = -1;
	w->tree = p->ntrees++;
	if (w->tree == 0) {
		/* the first tree's start: a later tree is measured against it
		 * too, which can only read more directories again */
		clock_gettime(CLOCK_REALTIME, &now);
		p->scan_ns = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
	}
	return 0;
}

/* Is mount i a host tree the walk reads?  *scratch: the --scratch DIR. */
static int walked(const struct cd_plan *p, size_t i, size_t first, int *scratch)
{
	const struct cd_mount *m = &p->mounts[i];

	*scratch = p->scratch_host && m->kind == CD_MNT_BIND && m->src &&
	           !strcmp(m->src, p->scratch_host) && i < first;
	return !((i < first && !*scratch) ||
	         (m->kind != CD_MNT_BIND && m->kind != CD_MNT_OVERLAY) || (m->flags & CD_MNT_DEV) ||
	         m->why);
}

static int tree_writable(const struct cd_mount *m)
{
	return m->kind == CD_MNT_BIND && (m->flags & CD_MNT_RW);
}

/* Could a set-id file the sandbox rewrites in a writable tree grant
 * more than the sandbox's own host identity?  The sandbox rewrites only
 * files its writes are allowed on.  A rootless caller's sandbox writes
 * as the caller, with the caller's groups: the set-id files it can
 * rewrite are the caller's own, which grant only ids the sandbox itself
 * has on the host, or another id's left writable to the caller (a hole
 * every process of the caller can use without cordon: the kernel keeps
 * the bits on mapped writes for anyone).  A root caller's sandbox is an
 * id of its own, but the caller's trees are idmapped to it: through them
 * it writes root-owned files, and a rewritten setuid-root file would
 * give root to any local account that runs it.  So: root callers only
 * (and any run of cordon with euid 0, however its ids were chosen). */
static int suid_grants_more(const struct walk *w)
{
	return w->o->idmap || geteuid() == 0;
}

/* Walk mount i (pass 0: find and cover; 1: the other names only). */
static int walk_mount(struct walk *w, size_t i, int scratch, int pass)
{
	struct cd_plan *p = w->p;
	const struct cd_mount *m = &p->mounts[i];
	int r;

	w->mount = i;
	/* workspace-write's tree and --rw binds: the host runs what is
	 * written there later; the scratch is the sandbox's own. */
	w->writable = tree_writable(m);
	w->suid_matters =
	        w->writable && !pass && suid_grants_more(w) && cd_tree_suid_honoured(m->src);
	w->protect = w->writable && !scratch && !pass;
	w->link_pass = pass;
	w->list = NULL;
	w->nlist = NULL;
	/* every bound tree is stamped, for the child's check that nothing
	 * moved in after the walk; the writable ones for the check after
	 * the run too (an overlay's directories have inodes of its own) */
	w->stamp = !pass && m->kind == CD_MNT_BIND;
	if (w->protect) {
		w->list = &p->host_run;
		w->nlist = &p->nhost_run;
	}
	if (w->stamp && (r = stamped_tree(w, m->src, w->protect)) < 0)
		return r;
	/* what only a file's own inode says (other names) is read from every
	 * file: such a tree is read whole; set-id bits and capabilities only
	 * where the watcher vouches for them (tree-cache.c) */
	w->cache = w->scan_cache && !pass && !(w->writable && w->want_shared) &&
	                           !(!w->writable && w->shared.n)
	                   ? w->scan_cache
	                   : NULL;
	if (w->cache)
		cd_tree_cache_begin(w, m->src);
	r = cd_tree_walk_tree(w, m->src, m->dest);
	if (r == 0 && w->protect) {
		w->src = m->src; /* a file bound alone left them its directory's */
		w->dest = m->dest;
		w->srclen = strcmp(m->src, "/") ? strlen(m->src) : 0;
		r = cd_tree_git_above(w);
		if (r == 0)
			r = cd_tree_path_dirs(w);
	}
	if (w->cache)
		cd_tree_cache_end(w, r == 0);
	w->cache = NULL; /* the stamps stay in walk order: sorted where looked up */
	return r;
}

/* A credential with names the walk of the bound trees did not meet: the
 * sandbox sees no host path outside them but the system directories and
 * files (/usr, /etc/ssl/certs ...), so those on its filesystem are walked
 * for the missing names, which are covered there.  A name found nowhere
 * lies where the sandbox cannot see. */
static int system_names(struct walk *w, size_t n)
{
	size_t i;
	int r = 0, scratch;
	struct stat st;

	w->seen = 0;
	for (i = 0; i < w->first && i < n && r == 0; i++) {
		const struct cd_mount *m = &w->p->mounts[i];

		if (m->kind != CD_MNT_BIND || !m->src || (m->flags & CD_MNT_DEV) || m->why ||
		    walked(w->p, i, w->first, &scratch) || stat(m->src, &st) < 0 ||
		    !cd_tree_links_missing(w, st.st_dev))
			continue;
		r = walk_mount(w, i, 0, 1);
	}
	return r;
}

int cd_plan_scan_trees(struct cd_plan *p, size_t first, const struct cd_plan_opts *o,
                       struct cd_err *err)
{
	size_t i, n = p->nmounts;
	struct walk *w = calloc(1, sizeof *w);
	int r = 0, scratch, round, nw = 0, nro = 0;

	if (!w)
		return cd_err_set(err, -ENOMEM, "out of memory");
	w->p = p;
	w->o = o;
	w->err = err;
	w->watch_fd = -2;
	w->sockets = !o->skip_socket_scan;
	w->creds = 1;
	cd_tree_creds_init(w);
	w->first = first;
	for (i = 0; i < n; i++) {
		if (walked(p, i, first, &scratch))
			*(tree_writable(&p->mounts[i]) ? &nw : &nro) += 1;
	}
	if (o->scan_cache && !cd_tree_cache_in_tree(p, first, o) &&
	    cd_tree_cache_new(o, &w->scan_cache) < 0)
		r = cd_err_set(err, -ENOMEM, "out of memory");
	/* Writable trees first, so that a read-only one can be checked for
	 * other names of their files (a hard link across the trees would
	 * make the read-only name writable). */
	w->want_shared = nw && nro;
	for (round = 0; round < 2 && r == 0; round++) {
		for (i = 0; i < n && r == 0; i++) {
			if (walked(p, i, first, &scratch) &&
			    tree_writable(&p->mounts[i]) == (round == 0))
				r = walk_mount(w, i, scratch, 0);
		}
	}
	/* The other names of covered credentials, in any tree, and those
	 * of read-only files in the writable trees: one more walk. */
	w->seen = 0; /* the entry cap counts over all trees, in each pass */
	for (i = 0; i < n && r == 0 && (w->credlinks.n || w->ro.n); i++) {
		if (walked(p, i, first, &scratch))
			r = walk_mount(w, i, scratch, 1);
	}
	if (r == 0 && w->credlinks.n)
		r = system_names(w, n);
	cd_tree_cache_watch_end(w, r);
	cd_tree_cache_free(w->scan_cache);
	cd_tree_creds_free(w);
	cd_tree_walk_free(w);
	return r;
}
