/* sandbox-verify.c — the child's checks after its mounts, before
 * pivot_root: every cover is in place, and nothing the walk never read
 * moved into a bound tree between the walk and the mounts (see
 * sandbox-int.h).
 *
 * The walk (tree-scan.c) planned each cover by path, and a concurrent run
 * with --rw on the same tree can rename directories before the child
 * mounts it.  A cover is attached to the inode the walk judged, or the run
 * is refused (sandbox-mount.c); once attached it stays with its file
 * through later renames (a mount sits on the file's dentry, which a rename
 * moves).  Left: a directory the walk never read.  Two exchanges of a/sub
 * and b/sub between the walk's reads of them show it the same directory
 * twice, and the other one, with the credential, is never read.  Moving a
 * directory into another changes that one's ctime (no one without
 * CAP_SYS_TIME sets it back), and the walk stamped every directory of
 * every bound tree (dev, inode, ctime) before reading it: so each stamped
 * directory is looked at again here, through the sandbox's own view, once
 * every cover is attached.  One that is another directory now is refused;
 * one whose ctime moved is read again, and each directory in it must be
 * the one the walk read under that name, a mount of the plan's, or empty
 * (made since; what lands in it later is the sandbox's own, as any file
 * made after the walk).  Files are not checked: the walk's covers stop a
 * concurrent sandbox from renaming or linking a credential it found (a
 * mount point cannot be renamed in the namespace that has the mount, and
 * the cover hides the inode from link), so only directories carry one in.
 *
 * System calls only, no malloc (the child's rules).
 */
#include "sandbox-int.h"
#include "util/bounds.h"
#include "util/util.h"
#include "tree-scan-int.h"
#include "tree-watch.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

struct ldirent {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static char g_dents[16384]; /* the child's own copy: no CLONE_VM */

static const char MOVED[] = "refused: a directory changed between the tree walk and the "
                            "mounts (a concurrent rename?), a credential could be uncovered:";

int cd_child_same_file(int fd, dev_t dev, ino_t ino)
{
	struct stat st;
	struct statfs sf;

	if (fstat(fd, &st) < 0)
		return 0;
	if (st.st_dev == dev && st.st_ino == ino)
		return 1;
	if (fstatfs(fd, &sf) < 0 || sf.f_type != OVERLAYFS_SUPER_MAGIC)
		return 0;
	return S_ISDIR(st.st_mode) || st.st_ino == ino;
}

static int mount_root(int fd)
{
	struct statx stx;

	return statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx) == 0 &&
	       (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	       (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/* /dev/null, or the root of a read-only tmpfs (sized 0: empty). */
static int is_mask(int fd, dev_t null_rdev)
{
	struct stat st;
	struct statfs sf;

	if (fstat(fd, &st) < 0)
		return 0;
	if (S_ISCHR(st.st_mode))
		return st.st_rdev == null_rdev;
	return S_ISDIR(st.st_mode) && fstatfs(fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
	       (sf.f_flags & ST_RDONLY) && mount_root(fd);
}

static int is_rdonly(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 && (sf.f_flags & ST_RDONLY);
}

static int open_in(int dfd, const char *rel, uint64_t flags)
{
	while (*rel == '/')
		rel++;
	return cd_child_openat2(dfd, *rel ? rel : ".", flags | O_CLOEXEC,
	                        RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

/* Every cover and read-only path of the plan, as the command will see it. */
static void covers_in_place(int rootfd, dev_t null_rdev)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	size_t i;

	for (i = 0; i < p->nmounts; i++) {
		const struct cd_mount *m = &p->mounts[i];
		int fd, ok;

		if ((m->kind != CD_MNT_MASK && m->kind != CD_MNT_REMOUNT_RO) ||
		    !strcmp(m->dest, "/"))
			continue;
		fd = open_in(rootfd, m->dest, O_PATH);
		if (fd < 0 && (errno == ENOENT || errno == EACCES))
			continue; /* not there (or hidden under another cover) */
		if (fd < 0)
			cd_child_fail("check the cover at", m->dest, errno);
		ok = m->kind == CD_MNT_MASK ? is_mask(fd, null_rdev) : is_rdonly(fd);
		close(fd);
		if (!ok)
			cd_child_fail("refused: after the mounts a path is not covered as planned "
			              "(moved by a concurrent rename?):",
			              m->dest, 0);
	}
}

/* The stamp of `rel` in tree t (plan->dirs is sorted by tree, then rel). */
static const struct cd_dir_stamp *stamp_of(size_t t, const char *rel)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	size_t lo = 0, hi = p->ndirs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cd_dir_stamp *s = &p->dirs[mid];
		int c = s->tree != t ? (s->tree < t ? -1 : 1) : strcmp(s->rel, rel);

		if (c == 0)
			return s;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int dot(const char *n)
{
	return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]));
}

static int64_t ctime_of(const struct statx *stx)
{
	return (int64_t)stx->stx_ctime.tv_sec * 1000000000LL + stx->stx_ctime.tv_nsec;
}

/* Directories made since the walk, as the first pass found them: the
 * second pass checks each still has that ctime (no entry changed). */
static struct {
	size_t tree;
	char rel[512];
	int64_t ctime_ns;
} g_new[64];
static size_t g_nnew;

#define NEW_DEPTH_MAX 8

/* A directory the walk never read, at rel (name, in dfd) of tree t: fine
 * when it was made after the walk began (its birth time, with the 1 s
 * guard the stamps use: a directory moved in was born before) and so is
 * every directory in it but a mount of the plan's (the child's own mount
 * points, made in a bound tree); without a birth time, only when empty.
 * Files in it are not checked (see the top). */
static int new_dir_ok(int dfd, const char *name, const struct statx *stx, size_t t, const char *rel,
                      unsigned depth)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	int64_t born = (int64_t)stx->stx_btime.tv_sec * 1000000000LL + stx->stx_btime.tv_nsec;
	int has_btime = (stx->stx_mask & STATX_BTIME) != 0, fd, ok = 1, any = 0;
	size_t rl = strlen(rel);
	char buf[2048];
	long n, off;

	if (depth > NEW_DEPTH_MAX || g_nnew == CD_ARRAY_SIZE(g_new) || rl >= sizeof g_new[0].rel ||
	    (has_btime && born < p->scan_ns - STAMP_GUARD_NS))
		return 0;
	g_new[g_nnew].tree = t;
	memcpy(g_new[g_nnew].rel, rel, rl + 1);
	g_new[g_nnew++].ctime_ns = ctime_of(stx);
	fd = cd_child_openat2(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC,
	                      RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	if (fd < 0)
		return errno == EACCES; /* unsearchable: passed over as by the walk */
	while (ok && (n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
		for (off = 0; ok && off < n;) {
			const struct ldirent *e = (const void *)(buf + off);
			char sub[sizeof g_new[0].rel];
			size_t nl = strlen(e->d_name);
			struct statx sx;

			off += e->d_reclen;
			if (dot(e->d_name))
				continue;
			any = 1;
			if ((e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) ||
			    statx(fd, e->d_name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
			          STATX_TYPE | STATX_CTIME | STATX_BTIME, &sx) < 0 ||
			    !S_ISDIR(sx.stx_mode) ||
			    (sx.stx_attributes_mask & sx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
				continue;
			if (rl + 1 + nl + 1 > sizeof sub)
				ok = 0;
			else {
				memcpy(sub, rel, rl);
				sub[rl] = '/';
				memcpy(sub + rl + 1, e->d_name, nl + 1);
				ok = new_dir_ok(fd, e->d_name, &sx, t, sub, depth + 1);
			}
		}
	}
	close(fd);
	return ok && n == 0 && (has_btime || !any);
}

/* Stamped directory `s` (of tree t, seen at view/rel) changed since the
 * walk read it: each directory in it must be one the walk read there, a
 * mount of the plan's, or made since (new_dir_ok). */
static void reread(int view, size_t t, const struct cd_dir_stamp *s, const char *dest)
{
	char rel[CD_PATH_MAX];
	size_t rl = strlen(s->rel);
	int dfd = open_in(view, s->rel, O_RDONLY | O_DIRECTORY);
	long n, off;

	if (dfd < 0)
		cd_child_fail(MOVED, dest, errno);
	memcpy(rel, s->rel, rl);
	while ((n = syscall(SYS_getdents64, dfd, g_dents, sizeof g_dents)) > 0) {
		for (off = 0; off < n;) {
			const struct ldirent *e = (const void *)(g_dents + off);
			const struct cd_dir_stamp *was;
			size_t nl = strlen(e->d_name);
			struct statx stx;

			off += e->d_reclen;
			if ((e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) || dot(e->d_name))
				continue;
			if (statx(dfd, e->d_name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
			          STATX_TYPE | STATX_INO | STATX_CTIME | STATX_BTIME, &stx) < 0 ||
			    !S_ISDIR(stx.stx_mode))
				continue; /* gone again, or not a directory */
			if (rl + 1 + nl + 1 > sizeof rel)
				cd_child_fail(MOVED, dest, ENAMETOOLONG);
			rel[rl] = '/';
			memcpy(rel + (rl ? rl + 1 : 0), e->d_name, nl + 1);
			was = stamp_of(t, rel);
			if ((was && was->dev == makedev(stx.stx_dev_major, stx.stx_dev_minor) &&
			     was->ino == stx.stx_ino) ||
			    (stx.stx_attributes_mask & stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
				continue; /* read by the walk; or a mount of the plan's */
			if (!new_dir_ok(dfd, e->d_name, &stx, t, rel, 0))
				cd_child_fail(MOVED, dest, 0);
		}
	}
	if (n < 0)
		cd_child_fail(MOVED, dest, errno);
	close(dfd);
}

/* `rel` is `pre` or below it (pre "" holds everything). */
static int under(const char *rel, const char *pre, size_t pl)
{
	return pre && strncmp(rel, pre, pl) == 0 && (pl == 0 || rel[pl] == '\0' || rel[pl] == '/');
}

/* dest/rel, for messages (cut short past cap) */
static void dest_of(char *buf, size_t cap, const char *dest, const char *rel)
{
	size_t dl = strnlen(dest, cap - 1), rl;

	memcpy(buf, dest, dl);
	if (*rel && dl + 1 < cap)
		buf[dl++] = '/';
	rl = strnlen(rel, cap - 1 - dl);
	memcpy(buf + dl, rel, rl);
	buf[dl + rl] = '\0';
}

#define ABSENT INT64_MIN
static int64_t g_seen[STAMP_MAX]; /* each stamp's ctime in the first pass */

/* The directories the tree watcher saw change since the walk (sorted);
 * g_ndirty < 0: no answer, every stamped directory is looked at. */
static struct cd_watch_id g_dirty[CD_WATCH_DIRTY_MAX];
static long g_ndirty = -1;

/* Ask the watcher (the connection the walk left in the plan) which
 * directories of the watched trees had an event since the walk's
 * answers; the rest are as the walk stamped them (tree-watch.h). */
static void ask_watcher(void)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	uint32_t ids[CD_WATCH_TREES_MAX];
	uint32_t n = 0;
	size_t t;

	g_ndirty = -1;
	if (!p->watch_instance || cd_child_g_ctx->watch_fd < 0)
		return;
	for (t = 0; t < p->ntrees && n < CD_ARRAY_SIZE(ids); t++) {
		if (p->trees[t].watch_id)
			ids[n++] = p->trees[t].watch_id;
	}
	if (n)
		g_ndirty = cd_watch_since(cd_child_g_ctx->watch_fd, p->watch_instance,
		                          p->watch_since, ids, n, g_dirty, CD_ARRAY_SIZE(g_dirty));
	close(cd_child_g_ctx->watch_fd); /* nothing of it reaches the command */
}

/* A stamped directory below a watched tree's top with no event since the
 * walk: not looked at (its top always is: the bind itself). */
static int unchanged_by_watch(size_t t, const struct cd_dir_stamp *s)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;

	return g_ndirty >= 0 && p->trees[t].watch_id && *s->rel &&
	       !cd_watch_has(g_dirty, (size_t)g_ndirty, s->dev, s->ino);
}

/* The walk leaves its stamps in its own order (each tree's together, its
 * top first, a directory before those below it); reread()'s stamp_of
 * needs them sorted by (tree, rel).  Sorted here, in place and without
 * malloc (a heapsort of the child's own copy), unless the watcher says
 * no stamped directory changed: then nothing is read again. */
static void sift(struct cd_dir_stamp *v, size_t root, size_t n)
{
	size_t child;

	while ((child = 2 * root + 1) < n) {
		if (child + 1 < n && cd_tree_stamp_cmp(&v[child], &v[child + 1]) < 0)
			child++;
		if (cd_tree_stamp_cmp(&v[root], &v[child]) >= 0)
			return;
		struct cd_dir_stamp t = v[root];
		v[root] = v[child];
		v[child] = t;
		root = child;
	}
}

static void sort_stamps(void)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	struct cd_dir_stamp *v = (struct cd_dir_stamp *)p->dirs, t;
	size_t n = p->ndirs, i, j;

	for (i = 0; i + 1 < n && cd_tree_stamp_cmp(&v[i], &v[i + 1]) < 0; i++)
		;
	if (n < 2 || i + 1 >= n)
		return; /* sorted already */
	for (i = n / 2; i-- > 0;)
		sift(v, i, n);
	for (j = n; j-- > 1;) {
		t = v[0];
		v[0] = v[j];
		v[j] = t;
		sift(v, 0, j);
	}
}

/* Is the top of stamped tree t (stamp s) not as the walk stamped it?
 * Pass 1 looks at every top, listed or not (a chattr moves its ctime
 * and reports to no watch). */
static int top_moved(int rootfd, size_t t, const struct cd_dir_stamp *s)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	const struct cd_mount *m =
	        &p->mounts[p->trees[t].mount < p->nmounts ? p->trees[t].mount : 0];
	int view = open_in(rootfd, m->dest, O_PATH | O_DIRECTORY), moved;
	struct statx stx;

	moved = view < 0 ||
	        statx(view, ".", AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_CTIME, &stx) < 0 ||
	        ctime_of(&stx) != s->ctime_ns;
	if (view >= 0)
		close(view);
	return moved;
}

/* Could pass 1 read a stamped directory again? */
static int may_reread(int rootfd)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	size_t j;

	if (g_ndirty < 0)
		return 1;
	for (j = 0; j < p->ndirs; j++) {
		const struct cd_dir_stamp *s = &p->dirs[j];

		if (!p->trees[s->tree].watch_id ||
		    cd_watch_has(g_dirty, (size_t)g_ndirty, s->dev, s->ino) ||
		    (!*s->rel && p->trees[s->tree].complete && top_moved(rootfd, s->tree, s)))
			return 1;
	}
	return 0;
}

/* Does the plan mount something at dest (a cover, a hold, a bind)? */
static int plan_mount_at(const char *dest)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	size_t i;

	for (i = 0; i < p->nmounts; i++) {
		if (p->mounts[i].dest && !strcmp(p->mounts[i].dest, dest))
			return 1;
	}
	return 0;
}

/* One stamped tree, seen through its bind.  Pass 1 checks each directory
 * against the walk's stamps and reads the changed ones again.  When
 * nothing changed, each directory kept the entries the walk read from
 * its stamp until pass 1 saw it, so at the moment between the walk and
 * pass 1 the whole tree was as the walk read it.  Otherwise pass 2 finds
 * every directory as pass 1 left it (same ctime: no entry changed in
 * between), so at a moment between the passes the tree was as pass 1
 * checked it, whatever moved while pass 1 read it.  One statx per
 * directory: a path that crosses a symlink now (a directory replaced by
 * one) lands on another inode, or on none, and that is a change too.
 * Returns whether pass 1 saw a change. */
static int tree_unchanged(int rootfd, size_t t, size_t *j, int pass)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	const struct cd_mount *m =
	        &p->mounts[p->trees[t].mount < p->nmounts ? p->trees[t].mount : 0];
	const char *skip = NULL;
	size_t sl = 0;
	char dest[CD_PATH_MAX];
	int view = open_in(rootfd, m->dest, O_PATH | O_DIRECTORY), changed = 0;

	if (p->trees[t].mount >= p->nmounts)
		cd_child_fail(MOVED, p->trees[t].root, 0); /* lost its bind: never */

	for (; *j < p->ndirs && p->dirs[*j].tree == t; (*j)++) {
		const struct cd_dir_stamp *s = &p->dirs[*j];
		struct statx stx;
		int64_t ct;
		int r;

		if (view < 0 || !p->trees[t].complete || *j >= STAMP_MAX || under(s->rel, skip, sl))
			continue; /* an optional bind missing; past STAMP_MAX; hidden */
		if (unchanged_by_watch(t, s))
			continue;
		dest_of(dest, sizeof dest, m->dest, s->rel);
		r = statx(view, *s->rel ? s->rel : ".", AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
		          STATX_TYPE | STATX_INO | STATX_CTIME, &stx);
		if ((r < 0 &&
		     (errno == ENOENT || errno == EACCES || errno == ELOOP || errno == ENOTDIR)) ||
		    (r == 0 && S_ISLNK(stx.stx_mode))) {
			/* moved away: what it holds is checked where it is now;
			 * unsearchable (another user's 0700 directory under a root
			 * caller's idmapped view): the sandbox cannot look either */
			if (pass == 2 && g_seen[*j] != ABSENT)
				cd_child_fail(MOVED, dest, 0);
			g_seen[*j] = ABSENT;
			changed |= !(r < 0 && errno == EACCES);
			continue;
		}
		if (r < 0)
			cd_child_fail(MOVED, dest, errno);
		ct = ctime_of(&stx);
		if (makedev(stx.stx_dev_major, stx.stx_dev_minor) != s->dev ||
		    stx.stx_ino != s->ino) {
			/* the top is the bind itself: never hidden by one; and
			 * only a mount the plan makes there may hide a stamped
			 * directory (one mounted on the host after the walk,
			 * carried in by the recursive clone, is not ours) */
			if (!*s->rel ||
			    !(stx.stx_attributes_mask & stx.stx_attributes &
			      STATX_ATTR_MOUNT_ROOT) ||
			    !plan_mount_at(dest))
				cd_child_fail(MOVED, dest, 0);
			skip = s->rel; /* a cover or a bind of the plan's hides it */
			sl = strlen(skip);
		} else if (pass == 2 && ct != g_seen[*j]) {
			cd_child_fail(MOVED, dest, 0);
		} else if (pass == 1) {
			g_seen[*j] = ct;
			if (ct != s->ctime_ns) {
				changed = 1;
				reread(view, t, s, dest);
			}
		}
	}
	if (view >= 0)
		close(view);
	return changed;
}

/* Pass 2 for the directories made since the walk. */
static void new_dirs_unchanged(int rootfd)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	char dest[CD_PATH_MAX];
	struct statx stx;
	size_t i;

	for (i = 0; i < g_nnew; i++) {
		const struct cd_mount *m = &p->mounts[p->trees[g_new[i].tree].mount];
		int view = open_in(rootfd, m->dest, O_PATH | O_DIRECTORY);

		dest_of(dest, sizeof dest, m->dest, g_new[i].rel);
		if (view < 0 ||
		    statx(view, g_new[i].rel, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_CTIME,
		          &stx) < 0 ||
		    ctime_of(&stx) != g_new[i].ctime_ns)
			cd_child_fail(MOVED, dest, 0);
		close(view);
	}
}

void cd_child_verify_covers(int rootfd, int nullfd)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	struct stat st;
	size_t t, j;
	int pass, changed, whole, reread_some;

	if (fstat(nullfd, &st) < 0)
		cd_child_fail("stat", "/dev/null", errno);
	covers_in_place(rootfd, st.st_rdev);
	ask_watcher();
	/* the stamp runs (plan.h) only when a directory is read again (its
	 * subdirectories' stamps are looked up) or one of them is listed:
	 * then all of them, sorted with the rest */
	reread_some = may_reread(rootfd);
	whole = p->nruns &&
	        (g_ndirty < 0 || reread_some || cd_plan_stamps_hit(p, g_dirty, (size_t)g_ndirty));
	if (whole && cd_plan_stamps_whole((struct cd_plan *)p) < 0)
		cd_child_fail("refused: the directories the walk stamped cannot be checked", "", 0);
	if (whole || reread_some)
		sort_stamps();
	for (pass = 1, changed = 0; pass <= 2 && (pass == 1 || changed); pass++) {
		for (t = 0, j = 0; t < p->ntrees; t++) {
			while (j < p->ndirs && p->dirs[j].tree < t)
				j++;
			changed |= tree_unchanged(rootfd, t, &j, pass);
		}
	}
	new_dirs_unchanged(rootfd);
}
