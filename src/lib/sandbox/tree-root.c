/* tree-root.c — what ties the tree walk to what the child mounts
 * (tree-scan-int.h): each walked bind source pinned to the directory (or
 * file) the walk read, the walk's top checked unrenamed across its passes,
 * the walk's own binds pinned, the directories above a covered
 * credential (or a credential link's target) held in place, which mount
 * hides a path (cd_tree_shadowed), and the unreadable-directory rule for
 * one the walk cannot open or cannot search.
 *
 * A concurrent rename (renameat2 RENAME_EXCHANGE of a bind source with
 * another directory or file, from the host or from another sandbox with
 * --rw on the parent) makes each opening of the source's path a possibly
 * different one: covers planned for one would land on another (session
 * 8's F1), a file judged by another's content would be mounted unmasked
 * (G1).  So the source is opened once, here, and everything after goes
 * through that descriptor: the walk's reads, a bound file's content, the
 * mount a root caller's supervisor clones (idmap.c), the check after the
 * run (plan->trees[].fd).  Only the rootless child opens the path again
 * (it cannot clone a mount of another mount namespace): it must find the
 * inode recorded here (sandbox-mount.c).
 */
#include "tree-scan-int.h"

#include "util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* plan.h: the rootless child and the supervisor compare with it. */
int cd_mount_source_is(const struct cd_mount *m, const struct stat *st)
{
	if (!(m->flags & CD_MNT_SRC_PINNED))
		return 1;
	if (st->st_dev != m->src_dev || st->st_ino != m->src_ino)
		return 0;
	/* A directory's ctime moves with every entry made at its top: the
	 * child's check after the mounts reads such a one again
	 * (sandbox-verify.c).  A file's moves when it is rewritten. */
	return S_ISDIR(st->st_mode) || cd_tree_ctime_ns(st) == m->src_ctime_ns;
}

static int same_source(const struct cd_mount *m, const struct stat *st)
{
	return st->st_dev == m->src_dev && st->st_ino == m->src_ino &&
	       cd_tree_ctime_ns(st) == m->src_ctime_ns;
}

/* A bind source, opened once by path without following a symlink at its
 * end (O_PATH): the walk reads through this descriptor, a file is judged
 * through it, and the mount is made from it (a root caller's supervisor,
 * idmap.c) or compared with it (the rootless child, sandbox-mount.c).
 * Before the run (pass 0) it is pinned (CD_MNT_SRC_PINNED) and kept
 * (m->src_fd: an inode held open keeps its number, so dev+inode name
 * it alone); a later pass must meet the same one.  Returns the
 * descriptor (the caller's), -ENOENT when it is gone and nothing is
 * mounted from this walk (the check after the run, the second pass:
 * the child refuses a pinned source gone), or a refusal: gone before the
 * run (a rename away and back would mount a tree the walk never read),
 * now a symlink, or another than the first pass met (-EAGAIN: the walk
 * is done again, cd_plan_build). */
int cd_tree_source_open(struct walk *w, const char *src, struct stat *ret_st)
{
	struct cd_mount *m = &w->p->mounts[w->mount];
	int fd = open(src, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT && (w->list_only || w->link_pass))
		return -ENOENT;
	if (fd < 0 && errno == ENOENT)
		return cd_err_set(w->err, -EAGAIN, CD_TREE_TOP_MOVED, src);
	if (fd < 0)
		return cd_err_sys(w->err, -errno, "cannot open '%s' to check it; refused", src);
	if (fstat(fd, ret_st) < 0) {
		int e = errno;

		close(fd);
		return cd_err_sys(w->err, -e, "cannot check '%s'; refused", src);
	}
	if (S_ISLNK(ret_st->st_mode)) {
		close(fd);
		return cd_err_set(w->err, -ELOOP,
		                  "'%s' changed into a symlink while cordon checked it (a "
		                  "concurrent rename?); refused",
		                  src);
	}
	if (w->list_only)
		return fd;
	if (w->link_pass) {
		if (!(m->flags & CD_MNT_SRC_PINNED) || same_source(m, ret_st))
			return fd;
		close(fd);
		return cd_err_set(w->err, -EAGAIN, CD_TREE_TOP_MOVED, src);
	}
	if (m->src_fd < 0 && (m->src_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
		close(fd);
		return cd_err_sys(w->err, -errno, "cannot keep '%s' open; refused", src);
	}
	m->flags |= CD_MNT_SRC_PINNED;
	m->src_dev = ret_st->st_dev;
	m->src_ino = ret_st->st_ino;
	m->src_ctime_ns = cd_tree_ctime_ns(ret_st);
	cd_tree_cache_watch(w, src, ret_st); /* this inode is the one walked */
	return fd;
}

/* The top of a writable tree (stamped) opened for reading before the
 * run: kept open for the check after the run (plan->trees[].fd). */
int cd_tree_root_opened(struct walk *w, int fd, const char *src)
{
	if (w->list_only || w->link_pass || !w->stamp || w->p->trees[w->tree].fd >= 0)
		return 0;
	if ((w->p->trees[w->tree].fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
		return cd_err_sys(w->err, -errno, "cannot keep '%s' open; refused", src);
	return 0;
}

/* Mounts planned before the walk below the tree's top by host path
 * (workspace-write's .git bound over itself and its hooks, config and
 * info kept read-only, each pinned by its own lstat: plan.c), and binds
 * of its paths over themselves walked already: each must be the inode
 * the walk's top (fd) has there.
 * A concurrent exchange of the top between those lookups and the walk's
 * open would mount the .git of one directory, writable, into the other,
 * with no read-only hooks: the walk is done again (-EAGAIN). */
int cd_tree_planned_fit(struct walk *w, int fd)
{
	size_t i, dl = strcmp(w->dest, "/") ? strlen(w->dest) : 0;
	char host[CD_PATH_MAX];
	struct stat st;

	if (w->list_only || w->link_pass)
		return 0;
	for (i = 0; i < w->p->nmounts; i++) {
		const struct cd_mount *m = &w->p->mounts[i];
		int bind = m->kind == CD_MNT_BIND && (m->flags & CD_MNT_SRC_PINNED);
		int n;

		if (i == w->mount ||
		    (!bind && !(m->kind == CD_MNT_REMOUNT_RO && (m->flags & CD_MNT_PINNED))) ||
		    strncmp(m->dest, w->dest, dl) != 0 || m->dest[dl] != '/' || !m->dest[dl + 1] ||
		    cd_tree_shadowed(w->p, w->first, w->mount, m->dest))
			continue; /* not in this tree, or seen through another bind there */
		n = snprintf(host, sizeof host, "%s%s", w->srclen ? w->src : "", m->dest + dl);
		if (n < 0 || (size_t)n >= sizeof host || (bind && strcmp(m->src, host) != 0))
			continue; /* a bind of another host path: not this tree's */
		if (fstatat(fd, m->dest + dl + 1, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    st.st_dev != (bind ? m->src_dev : m->pin_dev) ||
		    st.st_ino != (bind ? m->src_ino : m->pin_ino))
			return cd_err_set(w->err, -EAGAIN, CD_TREE_TOP_MOVED, w->src);
	}
	return 0;
}

/* After a pass over the tree: its top is still the directory the walk
 * opened at src, and was not renamed meanwhile.  A rename (an exchange
 * with another directory and back) sets the moved directory's ctime, as
 * does an entry made or removed at the top: either way what the walk
 * read by path below the top (git control paths, a cover's inode) may
 * have come from the other directory, so the walk is done again
 * (cd_plan_build), and the run refused if it keeps changing. */
int cd_tree_root_unchanged(struct walk *w, int keep, const char *src)
{
	const struct cd_mount *m = &w->p->mounts[w->mount];
	struct stat st, now;
	int fd;

	if (w->list_only || !(m->flags & CD_MNT_SRC_PINNED))
		return 0;
	fd = open(src, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &now) < 0 || fstat(keep, &st) < 0 || st.st_dev != m->src_dev ||
	    st.st_ino != m->src_ino || cd_tree_ctime_ns(&st) != m->src_ctime_ns ||
	    now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
		if (fd >= 0)
			close(fd);
		return cd_err_set(w->err, -EAGAIN, CD_TREE_TOP_MOVED, src);
	}
	close(fd);
	return 0;
}

/* A file bound by itself covered (a credential), where it is mounted:
 * the cover pinned to the inode judged, the one the bind shows. */
int cd_tree_mask_file(struct walk *w, const struct stat *st, const char *dest)
{
	struct cd_mount *m;
	int r = cd_plan_mount_add(w->p, CD_MNT_MASK, CD_MNT_OPTIONAL, NULL, dest, WHY_CREDENTIAL,
	                          w->err);

	if (r < 0)
		return r;
	m = &w->p->mounts[w->p->nmounts - 1];
	m->flags |= CD_MNT_PINNED;
	m->pin_dev = st->st_dev;
	m->pin_ino = st->st_ino;
	return 0;
}

/* The file behind fd (O_PATH) opened for reading, by its own inode
 * (/proc/self/fd/N: no name is looked up again); -1 with errno. */
static int reopen_read(int fd, const struct stat *st)
{
	char path[32];
	struct stat now;
	int n = snprintf(path, sizeof path, "/proc/self/fd/%d", fd), rfd;

	if (n < 0 || (size_t)n >= sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	rfd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (rfd < 0)
		return -1;
	if (fstat(rfd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		close(rfd);
		errno = EXDEV; /* not the inode opened: /proc is not ours */
		return -1;
	}
	return rfd;
}

/* A file bound by itself (--ro FILE, --rw FILE), opened at src as fd
 * (cd_tree_source_open, st its status): the same name and content checks
 * as one met in a tree, the content read through fd's own inode.  So
 * what is judged is what is pinned and mounted: a file exchanged with
 * another between the checks (session 8's G1: a key judged by a
 * certificate's content) is judged as the inode mounted, or the run is
 * refused where the path is opened again (the rootless child). */
int cd_tree_walk_file(struct walk *w, int fd, const struct stat *st, const char *src,
                      const char *dest)
{
	const char *slash = strrchr(src, '/');
	size_t len = strlen(src);
	int rfd, hit;

	if (w->link_pass)
		return cd_tree_cred_bound_file(w, st, src, dest);
	if (!w->creds || !slash || len >= sizeof w->path || !S_ISREG(st->st_mode))
		return 0;
	/* unreadable to us: the content is not judged, or covered unread
	 * where the sandbox could make it readable (cd_tree_is_credential) */
	rfd = reopen_read(fd, st);
	if (rfd < 0 && errno != EACCES && errno != EPERM)
		return cd_err_sys(w->err, -errno, "cannot check '%s' for credentials; refused",
		                  src);
	memcpy(w->path, src, len + 1);
	w->src = src;
	w->srclen = (size_t)(slash - src); /* names relative to its directory */
	hit = cd_tree_file_is_credential(w, rfd, st, slash + 1, strlen(slash + 1), len);
	if (rfd >= 0)
		close(rfd);
	if (!hit || cd_tree_has_dest(w->p, dest, CD_MNT_MASK))
		return 0;
	if ((hit = cd_tree_note_cred(w, st)) < 0)
		return hit;
	return cd_tree_mask_file(w, st, dest);
}

/* The bind just planned (a git directory bound over itself) must mount
 * the directory the walk read at `host` (CD_MNT_SRC_PINNED). */
int cd_tree_pin_source(struct walk *w, struct cd_mount *m, const char *host)
{
	struct stat st;

	if (lstat(host, &st) < 0)
		return cd_err_sys(w->err, -errno,
		                  "'%s' moved while cordon checked the tree (a concurrent "
		                  "rename?): refused",
		                  host);
	m->flags |= CD_MNT_SRC_PINNED;
	m->src_dev = st.st_dev;
	m->src_ino = st.st_ino;
	m->src_ctime_ns = cd_tree_ctime_ns(&st);
	return 0;
}

/* The same bind planned before the walk (the working tree's .git, from
 * plan.c): pinned to what the walk reads there too. */
int cd_tree_pin_planned(struct walk *w, const char *dest, const char *host)
{
	size_t i;

	for (i = 0; i < w->p->nmounts; i++) {
		struct cd_mount *m = &w->p->mounts[i];

		if (m->kind == CD_MNT_BIND && !(m->flags & CD_MNT_SRC_PINNED) && m->src &&
		    !strcmp(m->src, host) && !strcmp(m->dest, dest))
			return cd_tree_pin_source(w, m, host);
	}
	return 0;
}

/* A credential covered in a writable tree: every directory between the
 * tree's top and it is held (CD_MNT_HOLD: a mount point cannot be renamed
 * or removed), so the sandbox cannot carry it, by renaming a directory
 * above it, to a path no rule matches (.kube to k, a key's directory into
 * node_modules/) for the next run to read.  The hold is a clone of the
 * sandbox's own view, made after the covers: a plain bind of the host
 * directory would be a second view of it without them, and a host rename
 * moving the directory elsewhere in the tree would show the credential
 * through the first. */
int cd_tree_hold_dirs(struct walk *w, const char *host)
{
	char dir[CD_PATH_MAX];
	size_t i, n = strlen(host);
	int r = 0;

	if (w->list_only || n >= sizeof dir)
		return 0;
	memcpy(dir, host, n + 1);
	for (i = w->srclen + 1; i < n && r == 0; i++) {
		if (dir[i] != '/')
			continue;
		dir[i] = '\0';
		r = cd_tree_cover(w, dir, CD_MNT_HOLD, 0, NULL);
		dir[i] = '/';
	}
	return r;
}

/* The host path that sandbox path `dest` shows through mount m (dest
 * lies under m->dest), or -1. */
static int host_of(const struct cd_mount *m, const char *dest, char *out, size_t outlen)
{
	size_t dl = strcmp(m->dest, "/") ? strlen(m->dest) : 0;
	int n = snprintf(out, outlen, "%s%s", strcmp(m->src, "/") || !dest[dl] ? m->src : "",
	                 dest + dl);

	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

/* Is sandbox path `dest`, seen through mount i, hidden by a mount placed
 * over it after mount i (the plan's user mounts come after the system
 * ones and are sorted by depth, a deeper destination mounted later)?  A
 * mount that shows the same host path there (a git directory bound over
 * itself) hides nothing; a mask there means it is covered already.  The
 * walk covers nothing in such a place: the file is not seen there, and
 * making the mount point would create directories in the tree on top. */
int cd_tree_shadowed(const struct cd_plan *p, size_t first, size_t i, const char *dest)
{
	const struct cd_mount *m = &p->mounts[i];
	char a[CD_PATH_MAX], b[CD_PATH_MAX];
	size_t j, md = cd_path_depth(m->dest);

	for (j = 0; j < p->nmounts; j++) {
		const struct cd_mount *o = &p->mounts[j];
		size_t od;
		int after;

		if (j == i || o->kind == CD_MNT_REMOUNT_RO || o->kind == CD_MNT_HOLD ||
		    o->kind == CD_MNT_SYMLINK || o->kind == CD_MNT_DIR || o->kind == CD_MNT_FILE ||
		    !cd_path_is_under(dest, o->dest))
			continue;
		od = cd_path_depth(o->dest);
		if ((j >= first) != (i >= first))
			after = j >= first;
		else
			after = od != md ? od > md : j > i;
		if (!after)
			continue;
		if ((o->kind == CD_MNT_BIND || o->kind == CD_MNT_OVERLAY) && o->src && m->src &&
		    host_of(o, dest, a, sizeof a) == 0 && host_of(m, dest, b, sizeof b) == 0 &&
		    !strcmp(a, b))
			continue;
		return 1;
	}
	return 0;
}

/* The directories between the top of writable bind i and `host` (a
 * credential link's target shown there) are held, as a credential's are
 * (cd_tree_hold_dirs): the sandbox cannot rename them to leave the link
 * dangling, for the next run to read the target under a plain name. */
int cd_tree_hold_in(struct walk *w, size_t i, const char *host)
{
	const struct cd_mount *m = &w->p->mounts[i];
	struct walk sub;

	if (m->kind != CD_MNT_BIND || !(m->flags & CD_MNT_RW) || i < w->first)
		return 0;
	sub = *w;
	sub.mount = i;
	sub.src = m->src;
	sub.dest = m->dest;
	sub.srclen = strcmp(m->src, "/") ? strlen(m->src) : 0;
	sub.writable = 1;
	return cd_tree_hold_dirs(&sub, host);
}

/* w->path (entry `name` of dfd), a directory, cannot be opened (err).
 * After the run: one the sandbox could have made (the caller's, or
 * searchable) is reported and makes the check incomplete; another user's
 * unsearchable one is passed over, as before the run.  Before it, in a tree the
 * sandbox can write, one the caller owns is refused: the sandbox could
 * chmod it and reach what the walk never saw (a credential, a git
 * config).  Elsewhere (a read-only tree, or another user's directory) the
 * sandbox cannot make it readable either: skipped, as long as it cannot
 * be searched (names inside would be reachable). */
int cd_tree_unopenable(struct walk *w, int dfd, const char *name, int e)
{
	struct stat st;

	/* after the run: what the sandbox could have made (the caller's) is
	 * left unchecked, what it could not is passed over as before it */
	if (w->list_only && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_uid != geteuid() && e == EACCES && faccessat(dfd, name, X_OK, AT_EACCESS) < 0)
		return 0;
	if (w->list_only)
		return cd_tree_incomplete(w, w->path + w->srclen + 1, WHY_UNREADABLE);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && cd_tree_chmodable(w, &st))
		return cd_err_set(w->err, -CD_E_USAGE,
		                  "cannot read '%s' (%s) to check it for host sockets, git "
		                  "control files and credentials, and the sandbox could make it "
		                  "readable: run 'chmod u+rx' on it or run elsewhere; refused",
		                  w->path, strerror(e));
	if (!(e == EACCES && faccessat(dfd, name, X_OK, AT_EACCESS) < 0))
		/* unlistable but searchable: names inside are reachable */
		return cd_err_sys(w->err, -e,
		                  "cannot check '%s' for host sockets, git control files and "
		                  "credentials, so the run is refused",
		                  w->path);
	return 0;
}

/* dfd (w->path), opened for reading, but can the walk search it?  One
 * with read but not search permission (mode 644) lists its names, but
 * nothing below it opens: its subdirectories would be passed over and
 * its files judged by content never read, silently.  So it gets the
 * unreadable-directory rule: refused (after the run: reported as not
 * checked) when the sandbox could chmod it (the caller's, in a tree it
 * writes or the proposal overlay); another user's, which the sandbox
 * cannot search either, is skipped whole.  0: searchable (a root caller
 * searches every directory), 1: skip it, < 0: refused. */
int cd_tree_searchable(struct walk *w, int dfd)
{
	struct stat st, dot;
	int r;

	if (fstatat(dfd, ".", &dot, AT_SYMLINK_NOFOLLOW) == 0 || errno != EACCES)
		return 0; /* another error: the lookups below meet it too */
	if (fstat(dfd, &st) < 0)
		return cd_err_sys(w->err, -errno, "cannot check '%s'; refused", w->path);
	if (w->list_only) {
		r = st.st_uid != geteuid()
		            ? 0
		            : cd_tree_incomplete(w,
		                                 w->path[w->srclen] ? w->path + w->srclen + 1 : "",
		                                 WHY_UNREADABLE);
		return r < 0 ? r : 1;
	}
	if (cd_tree_chmodable(w, &st))
		return cd_err_set(w->err, -CD_E_USAGE,
		                  "cannot search '%s' (%s) to check it for host sockets, git "
		                  "control files and credentials, and the sandbox could make it "
		                  "searchable: run 'chmod u+rx' on it or run elsewhere; refused",
		                  w->path, strerror(EACCES));
	return 1;
}
