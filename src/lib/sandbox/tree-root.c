/* tree-root.c — what ties the tree walk to what the child mounts
 * (tree-scan-int.h): each walked bind source pinned to the directory (or
 * file) the walk read, the walk's top checked unrenamed across its passes,
 * the walk's own binds pinned, and the directories above a covered
 * credential held in place.
 *
 * A bind source is opened by path three times: by the walk, by the child
 * (or the supervisor for idmapped trees) to mount it, and by the check
 * after the run.  A concurrent rename (renameat2 RENAME_EXCHANGE of the
 * source with another directory, from the host or from another sandbox
 * with --rw on the parent) could make them three different directories:
 * the covers planned for one would land on another (session 8's F1).
 * So the walk's inode is recorded here and compared where the source is
 * opened again (sandbox-mount.c, idmap.c), and the check after the run
 * reads the descriptor the walk kept (plan->trees[].fd).
 */
#include "tree-scan-int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The top of a tree the walk reads before the run (pass 0) is the bind
 * source the child mounts: pinned to the directory opened here
 * (CD_MNT_SRC_PINNED), kept open for the check after the run, and a later
 * pass must meet the same one. */
int cd_tree_root_opened(struct walk *w, int fd, const char *src)
{
	struct cd_mount *m = &w->p->mounts[w->mount];
	struct stat st;

	if (w->list_only)
		return 0;
	if (fstat(fd, &st) < 0)
		return cd_err_sys(w->err, -errno, "cannot check '%s'; refused", src);
	if (w->link_pass)
		return !(m->flags & CD_MNT_SRC_PINNED) ||
		                       (st.st_dev == m->src_dev && st.st_ino == m->src_ino &&
		                        cd_tree_ctime_ns(&st) == m->src_ctime_ns)
		               ? 0
		               : cd_err_set(w->err, -EAGAIN, CD_TREE_TOP_MOVED, src);
	m->flags |= CD_MNT_SRC_PINNED;
	m->src_dev = st.st_dev;
	m->src_ino = st.st_ino;
	m->src_ctime_ns = cd_tree_ctime_ns(&st);
	if (w->stamp && w->p->trees[w->tree].fd < 0 &&
	    (w->p->trees[w->tree].fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
		return cd_err_sys(w->err, -errno, "cannot keep '%s' open; refused", src);
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

/* A file bound by itself: pinned as a tree's top is (cd_tree_root_opened). */
void cd_tree_pin_file(struct walk *w, const char *src)
{
	struct cd_mount *m = &w->p->mounts[w->mount];
	struct stat st;

	if (!w->list_only && !w->link_pass && lstat(src, &st) == 0) {
		m->flags |= CD_MNT_SRC_PINNED;
		m->src_dev = st.st_dev;
		m->src_ino = st.st_ino;
		m->src_ctime_ns = cd_tree_ctime_ns(&st);
	}
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
