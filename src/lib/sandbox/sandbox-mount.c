/* sandbox-mount.c — the sandbox child's filesystem: from the plan's mount
 * table to the new root (see sandbox-int.h).
 *
 * Runs in the freshly cloned child, between clone and exec: system calls
 * only, no malloc, no stdio; a failure goes through cd_child_fail().
 * Host paths are hostile at mount time: each source is opened with
 * RESOLVE_NO_SYMLINKS (the plan holds canonical paths, so a symlink there
 * now means someone swapped it in) and mounted by fd; each destination is
 * walked one component at a time without following symlinks.
 */
#include "sandbox-int.h"
#include "util/bounds.h"
#include "landlock.h"
#include "quotas.h"
#include "rlimits.h"
#include "seccomp.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/securebits.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Open the directory holding `dest` (relative to the new root), creating
 * missing directories, never following a symlink.  The last component is
 * written to `name`.  Returns an O_PATH fd or -errno. */
static int open_parent(int rootfd, const char *dest, char *name, size_t namecap)
{
	const char *p = dest;
	int dfd = dup(rootfd);

	if (dfd < 0)
		return -errno;
	for (;;) {
		size_t len = 0;
		char comp[256];
		int nfd;

		while (*p == '/')
			p++;
		while (p[len] && p[len] != '/')
			len++;
		if (len == 0 || len >= sizeof comp || len >= namecap) {
			close(dfd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		while (*p == '/')
			p++;
		if (*p == '\0') {
			memcpy(name, comp, len + 1);
			return dfd;
		}
		if (mkdirat(dfd, comp, 0755) < 0 && errno != EEXIST) {
			int e = errno;
			close(dfd);
			return -e;
		}
		nfd = cd_child_openat2(dfd, comp, O_PATH | O_DIRECTORY | O_CLOEXEC,
		                       RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH);
		close(dfd);
		if (nfd < 0)
			return -errno;
		dfd = nfd;
	}
}

/* The parent directory of the last mount point (an O_PATH fd owned here):
 * the plan's mounts come in runs under one directory (/etc, /dev, /proc),
 * so most mounts reuse it instead of walking from the root again.  Any
 * mount attached at the cached directory or above it drops it, since the
 * fd would still name the directory underneath. */
static struct {
	char path[CD_PATH_MAX]; /* "" for the root, else "/a/b" */
	int fd;
} g_parent = { "", -1 };

static void parent_drop(void)
{
	if (g_parent.fd >= 0)
		close(g_parent.fd);
	g_parent.fd = -1;
	g_parent.path[0] = '\0';
}

/* After a mount was attached at `dest`. */
static void parent_covered(const char *dest)
{
	size_t n = strlen(dest);

	if (g_parent.fd >= 0 && strncmp(g_parent.path, dest, n) == 0 &&
	    (g_parent.path[n] == '\0' || g_parent.path[n] == '/'))
		parent_drop();
}

/* open_parent() through the cache: the fd is borrowed (never closed by
 * the caller). */
static int parent_of(int rootfd, const char *dest, char *name, size_t namecap)
{
	const char *slash = strrchr(dest, '/');
	size_t plen = slash ? (size_t)(slash - dest) : 0, nlen;
	int fd;

	if (slash && g_parent.fd >= 0 && strlen(g_parent.path) == plen &&
	    memcmp(g_parent.path, dest, plen) == 0) {
		nlen = strlen(slash + 1);
		if (nlen == 0 || nlen >= 256 || nlen >= namecap)
			return -ENAMETOOLONG;
		memcpy(name, slash + 1, nlen + 1);
		return g_parent.fd;
	}
	fd = open_parent(rootfd, dest, name, namecap);
	if (fd < 0)
		return fd;
	parent_drop();
	if (slash && plen < sizeof g_parent.path) {
		memcpy(g_parent.path, dest, plen);
		g_parent.path[plen] = '\0';
	} else {
		g_parent.path[0] = '\x01'; /* matches no dest: used once */
		g_parent.path[1] = '\0';
	}
	g_parent.fd = fd;
	return fd;
}

/* Create the mount point for a bind of a directory or a file, and open
 * it without following symlinks. */
static int make_target(int pfd, const char *name, int is_dir)
{
	int fd;

	if (is_dir) {
		if (mkdirat(pfd, name, 0755) < 0 && errno != EEXIST)
			return -errno;
	} else {
		fd = openat(pfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
		            0644);
		if (fd < 0 && errno != EEXIST && errno != EISDIR && errno != EROFS &&
		    errno != EACCES)
			return -errno;
		if (fd >= 0)
			close(fd);
	}
	fd = cd_child_openat2(pfd, name, O_PATH | O_CLOEXEC | (is_dir ? O_DIRECTORY : 0),
	                      RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH);
	return fd < 0 ? -errno : fd;
}

static int attach(int mntfd, int tfd)
{
	if (syscall(SYS_move_mount, mntfd, "", tfd, "",
	            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}

static int set_attr(int fd, uint64_t set, int recursive)
{
	struct mount_attr a;

	memset(&a, 0, sizeof a);
	a.attr_set = set;
	if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a,
	            sizeof a) < 0)
		return -errno;
	return 0;
}

/* A new superblock (tmpfs, proc) as a detached mount fd. */
static int new_fs(const char *type, const char *size, const char *mode, uint64_t attrs)
{
	int fs = (int)syscall(SYS_fsopen, type, FSOPEN_CLOEXEC), m;

	if (fs < 0)
		return -errno;
	if ((size && syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", size, 0) < 0) ||
	    (mode && syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0) ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int e = errno;
		close(fs);
		return -e;
	}
	m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, attrs);
	if (m < 0) {
		int e = errno;
		close(fs);
		return -e;
	}
	close(fs);
	return m;
}

/* A devpts instance of the sandbox's own (every devpts mount is a new
 * instance since Linux 4.7): its ptys are not the host's, and nothing of
 * the host's terminals is reachable through it. */
static int new_devpts(void)
{
	int fs = (int)syscall(SYS_fsopen, "devpts", FSOPEN_CLOEXEC), m;

	if (fs < 0)
		return -errno;
	/* max: a sandbox may open a few ptys of its own (tmux, script), but
	 * not exhaust the host-wide kernel.pty.max. */
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "max", CD_SANDBOX_PTY_MAX, 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0620", 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int e = errno;
		close(fs);
		return -e;
	}
	m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	if (m < 0) {
		int e = errno;
		close(fs);
		return -e;
	}
	close(fs);
	return m;
}

/* cordon shell: make the session's pty in the sandbox's devpts (after
 * pivot_root, so it is the sandbox's instance), keep the follower for the
 * command's stdio and hand the controller to the supervisor.  Nothing in
 * the sandbox keeps the controller: the command can only write to its own
 * terminal, and cordon relays what the person types. */
void cd_child_make_pty(void)
{
	int ptm, pts, unlock = 0, r;

	if (!cd_child_g_ctx->plan->tty)
		return;
	ptm = cd_child_openat2(AT_FDCWD, "/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC,
	                       RESOLVE_NO_SYMLINKS);
	if (ptm < 0)
		cd_child_fail("open the sandbox's pty multiplexer", "/dev/pts/ptmx", errno);
	if (ioctl(ptm, TIOCSPTLCK, &unlock) < 0)
		cd_child_fail("unlock the session pty", NULL, errno);
	pts = ioctl(ptm, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (pts < 0)
		cd_child_fail("open the session pty's follower", NULL, errno);
	r = cd_fd_send(cd_child_g_ctx->pty_fd, ptm);
	close(ptm);
	if (r < 0)
		cd_child_fail("hand the session pty to the supervisor", NULL, -r);
	close(cd_child_g_ctx->pty_fd);
	cd_child_g_pty_follower = pts;
}

/* openat2 beneath a directory: gone, or a rename seen while resolving. */
static int moved_errno(int e)
{
	return e == ENOENT || e == EXDEV || e == EAGAIN || e == ELOOP || e == ENOTDIR;
}

static const char MOVED_SOURCE[] = "refused: the tree walk checked another directory or file "
                                   "than is now (exchanged or rewritten since: a concurrent "
                                   "rename?) at";

/* Is fd the source the walk read for m (CD_MNT_SRC_PINNED), if any? */
static int source_is_walked(int fd, const struct cd_mount *m)
{
	struct stat st;

	return !(m->flags & CD_MNT_SRC_PINNED) ||
	       (fstat(fd, &st) == 0 && cd_mount_source_is(m, &st));
}

/* A detached, recursive clone of a host path opened without symlinks:
 * the very inode the walk read there (what is checked is what is
 * cloned: the clone is made from this descriptor).  The path is opened
 * again here, not the walk's descriptor (m->src_fd) cloned: that is a
 * mount of the host's namespace, and open_tree clones only our own
 * namespace's (EINVAL). */
static int clone_source(const struct cd_mount *m)
{
	int fd = cd_child_openat2(AT_FDCWD, m->src, O_PATH | O_CLOEXEC,
	                          RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	int tree;

	if (fd < 0 && (m->flags & CD_MNT_SRC_PINNED) && (errno == ENOENT || errno == ENOTDIR))
		cd_child_fail(MOVED_SOURCE, m->src, 0); /* gone since the walk */
	if (fd < 0)
		return -errno;
	if (!source_is_walked(fd, m))
		cd_child_fail(MOVED_SOURCE, m->src, 0);
	tree = (int)syscall(SYS_open_tree, fd, "",
	                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	close(fd);
	return tree;
}

static int is_mount_root(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx) < 0)
		return 0;
	return (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	       (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

static int fd_is_dir(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Open an existing mount target without following symlinks: 1 and *ret,
 * 0 when it is absent and the mount is optional, -errno otherwise.  A
 * pinned one (the walk's cover) must be the inode the walk judged, and
 * the cover goes on this very descriptor: no rename between the check
 * and the attach can move it (CD_CHILD_MOVED otherwise; gone counts too). */
static int open_existing(int pfd, const char *name, const struct cd_mount *m, int *ret)
{
	int fd = cd_child_openat2(pfd, name, O_PATH | O_CLOEXEC,
	                          RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH);

	if (fd < 0) {
		if ((m->flags & CD_MNT_PINNED) && moved_errno(errno))
			return -CD_CHILD_MOVED;
		if (errno == ENOENT && (m->flags & CD_MNT_OPTIONAL))
			return 0;
		return -errno;
	}
	*ret = fd;
	if ((m->flags & CD_MNT_PINNED) && !cd_child_same_file(fd, m->pin_dev, m->pin_ino))
		return -CD_CHILD_MOVED;
	return 1;
}

/* CD_MNT_MASK: cover an existing path with an empty read-only tmpfs (a
 * directory) or /dev/null (anything else).  *tfd and *mfd, when opened,
 * are the caller's to close.  0 or -errno. */
static int mount_mask(int pfd, const char *name, const struct cd_mount *m, int nullfd, int *tfd,
                      int *mfd)
{
	int r, is_dir;

	if ((r = open_existing(pfd, name, m, tfd)) <= 0)
		return r;
	r = 0;
	is_dir = fd_is_dir(*tfd);
	if (is_dir)
		*mfd = new_fs("tmpfs", "0", "0555",
		              MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
		                      MOUNT_ATTR_NOEXEC);
	else
		*mfd = (int)syscall(SYS_open_tree, nullfd, "",
		                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (*mfd < 0)
		return *mfd == -1 ? -errno : *mfd;
	if (!is_dir)
		r = set_attr(*mfd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0);
	if (r == 0)
		r = attach(*mfd, *tfd);
	return r;
}

/* CD_MNT_REMOUNT_RO: make an existing path read-only, in place when it is
 * a mount's root, else as a read-only recursive copy attached over it.
 * *tfd and *mfd, when opened, are the caller's to close.  0 or -errno. */
static int remount_ro(int pfd, const char *name, const struct cd_mount *m, int *tfd, int *mfd)
{
	int r;

	if ((r = open_existing(pfd, name, m, tfd)) <= 0)
		return r;
	if (is_mount_root(*tfd))
		return set_attr(*tfd, MOUNT_ATTR_RDONLY, 0);
	*mfd = (int)syscall(SYS_open_tree, *tfd, "",
	                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (*mfd < 0)
		return -errno;
	r = set_attr(*mfd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 1);
	if (r == 0)
		r = attach(*mfd, *tfd);
	return r;
}

/* A credential cover (an optional mask) whose path this process cannot
 * search: it runs as the namespace's root with every capability there,
 * so the command, with none, can reach the file no more than it can.
 * That happens under plain (not idmapped) binds, where host files keep
 * their owners: cordon-oci binding a host /etc whose ssl/private is
 * 0710 root:ssl-cert.  Nothing to cover; failing would refuse the run. */
static int unreachable_cover(const struct cd_mount *m)
{
	return m->kind == CD_MNT_MASK && (m->flags & CD_MNT_OPTIONAL);
}

static const char MOVED_COVER[] = "refused: the tree walk checked another file than is now "
                                  "at (moved since by a concurrent rename?)";

/* Is mount i, a pinned cover, under (or at) a mask the plan made before
 * it?  A path both hidden as private (a home holding the store's
 * .pgpass) and found by the walk as a credential is covered twice: the
 * second finds the first cover, not the inode it was pinned to, though
 * nothing moved, and what it would hide is hidden already. */
static int hidden_before(size_t i)
{
	const struct cd_mount *v = cd_child_g_ctx->plan->mounts, *m = &v[i];
	size_t j, n;

	if (!(m->flags & CD_MNT_PINNED))
		return 0;
	for (j = 0; j < i; j++) {
		n = strlen(v[j].dest);
		if (v[j].kind == CD_MNT_MASK && !strncmp(m->dest, v[j].dest, n) &&
		    (m->dest[n] == '\0' || m->dest[n] == '/'))
			return 1;
	}
	return 0;
}

static void do_mount(int rootfd, size_t i, int srcfd, int nullfd)
{
	const struct cd_mount *m = &cd_child_g_ctx->plan->mounts[i];
	char name[256];
	int pfd, tfd = -1, mfd = -1, r = 0, fd;
	const char *what = "mount";

	if (hidden_before(i) || m->kind == CD_MNT_HOLD)
		return; /* holds: hold_dirs(), once everything is mounted */
	if (strcmp(m->dest, "/") == 0) {
		/* Only the final remount applies to the root itself. */
		if ((r = set_attr(rootfd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
		                  0)) < 0)
			cd_child_fail("make the sandbox root read-only", NULL, -r);
		return;
	}
	pfd = parent_of(rootfd, m->dest, name, sizeof name);
	if (pfd == -EACCES && unreachable_cover(m))
		return;
	if (pfd < 0 && (m->flags & CD_MNT_PINNED) && moved_errno(-pfd))
		cd_child_fail(MOVED_COVER, m->dest, 0);
	if (pfd < 0)
		cd_child_fail("create mount point for", m->dest, -pfd);

	switch (m->kind) {
	case CD_MNT_OVERLAY:
		tfd = make_target(pfd, name, 1);
		what = "attach the overlay at";
		r = tfd < 0 ? tfd : attach(srcfd, tfd);
		break;
	case CD_MNT_BIND:
		if (srcfd < 0) {
			if ((m->flags & CD_MNT_OPTIONAL) && srcfd == -ENOENT)
				return;
			cd_child_fail("open bind source", m->src, -srcfd);
		}
		tfd = make_target(pfd, name, fd_is_dir(srcfd));
		if (tfd < 0) {
			r = tfd;
			what = "create bind target";
			break;
		}
		what = "bind";
		r = attach(srcfd, tfd);
		break;
	case CD_MNT_TMPFS: {
		uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
		if (!(m->flags & CD_MNT_EXEC))
			attrs |= MOUNT_ATTR_NOEXEC;
		what = "mount tmpfs at";
		tfd = make_target(pfd, name, 1);
		mfd = tfd < 0 ? tfd
		              : new_fs("tmpfs", cd_child_g_ctx->tmpfs_size[i],
		                       (m->mode == 0700) ? "0700" : "0755", attrs);
		r = mfd < 0 ? mfd : attach(mfd, tfd);
		break;
	}
	case CD_MNT_PROC:
		what = "mount proc at";
		tfd = make_target(pfd, name, 1);
		mfd = tfd < 0 ? tfd
		              : new_fs("proc", NULL, NULL,
		                       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
		r = mfd < 0 ? mfd : attach(mfd, tfd);
		break;
	case CD_MNT_SYMLINK:
		what = "create symlink";
		if (symlinkat(m->src, pfd, name) < 0 && errno != EEXIST)
			r = -errno;
		break;
	case CD_MNT_DIR:
		what = "create directory";
		if (mkdirat(pfd, name, m->mode) < 0 && errno != EEXIST)
			r = -errno;
		break;
	case CD_MNT_FILE:
		what = "write file";
		fd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		            m->mode);
		if (fd < 0) {
			r = -errno;
			break;
		}
		if (write(fd, m->content, m->content_len) != (ssize_t)m->content_len)
			r = -EIO;
		close(fd);
		break;
	case CD_MNT_MASK:
		what = "mask";
		r = mount_mask(pfd, name, m, nullfd, &tfd, &mfd);
		if (r == -EACCES && unreachable_cover(m))
			r = 0;
		break;
	case CD_MNT_DEVPTS:
		what = "mount devpts at";
		tfd = make_target(pfd, name, 1);
		mfd = tfd < 0 ? tfd : new_devpts();
		r = mfd < 0 ? mfd : attach(mfd, tfd);
		break;
	case CD_MNT_REMOUNT_RO:
		what = "make read-only";
		r = remount_ro(pfd, name, m, &tfd, &mfd);
		break;
	case CD_MNT_HOLD:
		break;
	}
	if (mfd >= 0)
		close(mfd);
	if (tfd >= 0)
		close(tfd);
	if (r == -CD_CHILD_MOVED)
		cd_child_fail(MOVED_COVER, m->dest, 0);
	if (r < 0)
		cd_child_fail(what, m->dest, -r);
	if (m->kind != CD_MNT_SYMLINK && m->kind != CD_MNT_DIR && m->kind != CD_MNT_FILE)
		parent_covered(m->dest);
}

/* CD_MNT_HOLD, deepest first, once every other mount is in place: the
 * directory the walk judged (pinned), as the sandbox shows it with its
 * covers, cloned recursively over itself.  The covers stay on the
 * dentries of the tree's own mount too, so a host rename that moves the
 * directory elsewhere in the tree shows it covered there as well. */
static void hold_dirs(int rootfd)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	size_t i;

	for (i = p->nmounts; i-- > 0;) {
		const struct cd_mount *m = &p->mounts[i];
		int fd, tree, r;

		if (m->kind != CD_MNT_HOLD || hidden_before(i))
			continue;
		fd = cd_child_openat2(rootfd, m->dest + 1, O_PATH | O_DIRECTORY | O_CLOEXEC,
		                      RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
		if (fd < 0 && moved_errno(errno))
			cd_child_fail(MOVED_COVER, m->dest, 0);
		if (fd < 0)
			cd_child_fail("hold", m->dest, errno);
		if (!cd_child_same_file(fd, m->pin_dev, m->pin_ino))
			cd_child_fail(MOVED_COVER, m->dest, 0);
		tree = (int)syscall(SYS_open_tree, fd, "",
		                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
		                            AT_RECURSIVE);
		r = tree < 0 ? -errno : attach(tree, fd);
		if (tree >= 0)
			close(tree);
		close(fd);
		if (r < 0)
			cd_child_fail("hold", m->dest, -r);
	}
}

/* Proposal mode: the layer, a tmpfs made here, inside the sandbox's user
 * namespace (tmpfs mounts need no privilege there), capped in bytes and
 * inodes: the agent's writes through the overlay land in it and fail
 * with ENOSPC past the caps; the host's disk is never written during the
 * run.  Holds `upper` (given the lower root's mode, so the working
 * directory looks the same inside) and `work`.  *what says which step
 * failed. */
static int layer_tmpfs(size_t i, int lo, const char **what)
{
	struct stat st;
	int fs, mnt;

	*what = "make the proposal layer (a tmpfs inside the sandbox)";
	if (fstat(lo, &st) < 0)
		return -errno;
	fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", cd_child_g_ctx->tmpfs_size[i],
	            0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "nr_inodes",
	            cd_child_g_ctx->layer_inodes, 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int e = errno;
		close(fs);
		return -e;
	}
	mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
	                   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	close(fs);
	if (mnt < 0)
		return -errno;
	if (mkdirat(mnt, "upper", 0700) < 0 || mkdirat(mnt, "work", 0700) < 0 ||
	    fchmodat(mnt, "upper", st.st_mode & 07777, 0) < 0) {
		int e = errno;
		close(mnt);
		return -e;
	}
	return mnt;
}

/* The proposal's lower layer, O_PATH; -1 and errno on failure.  A root
 * caller's comes as an idmapped detached tree (idmap.h), but overlayfs
 * takes only a layer attached in our own mount namespace: it is attached
 * on a scratch tmpfs at CD_CHILD_NEWROOT, detached again once the overlay holds its
 * own clone of it. */
static int lower_open(size_t i, const struct cd_mount *m)
{
	int tfd, r;

	if (cd_child_g_ctx->tree_fd[i] < 0) {
		tfd = cd_child_openat2(AT_FDCWD, m->src, O_PATH | O_DIRECTORY | O_CLOEXEC,
		                       RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		if (tfd >= 0 && !source_is_walked(tfd, m))
			cd_child_fail(MOVED_SOURCE, m->src, 0);
		return tfd;
	}
	if (mount("cordon-lower", CD_CHILD_NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	          "mode=0700,size=4k") < 0 ||
	    mkdir(CD_CHILD_NEWROOT "/lower", 0700) < 0)
		return -1;
	tfd = open(CD_CHILD_NEWROOT "/lower", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tfd < 0)
		return -1;
	r = attach(cd_child_g_ctx->tree_fd[i], tfd);
	close(tfd);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return open(CD_CHILD_NEWROOT "/lower", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Proposal mode: a detached overlayfs whose layers are given by fd
 * (opened without following symlinks), so no path is parsed twice and no
 * layer option string needs escaping.  userxattr: the only way overlayfs
 * works in a user namespace (whiteouts and opaque marks as user.overlay.*;
 * no redirects, no metacopy; tmpfs holds user xattrs since Linux 6.6).
 * Layers by fd need Linux 6.13.  The layer goes to the supervisor at
 * once; the child keeps no copy (the overlay holds its own). */
static int overlay_source(size_t i, const struct cd_mount *m, const char **what)
{
	int lo, layer = -1, up = -1, wk = -1, fs, mnt = -1, e = 0, r;

	*what = "open the working directory for the proposal overlay";
	lo = lower_open(i, m);
	if (lo < 0)
		return -errno;
	layer = layer_tmpfs(i, lo, what);
	if (layer < 0) {
		close(lo);
		return layer;
	}
	up = cd_child_openat2(layer, "upper", O_PATH | O_DIRECTORY | O_CLOEXEC,
	                      RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH);
	wk = cd_child_openat2(layer, "work", O_PATH | O_DIRECTORY | O_CLOEXEC,
	                      RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH);
	if (up < 0 || wk < 0) {
		e = errno;
		goto out;
	}
	*what = "mount the proposal overlay (overlayfs in a user namespace with layers by fd: "
	        "Linux 6.13+) over";
	fs = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
	if (fs < 0) {
		e = errno;
		goto out;
	}
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_FD, "lowerdir+", NULL, lo) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_FD, "upperdir", NULL, up) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_FD, "workdir", NULL, wk) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		e = errno;
		close(fs);
		goto out;
	}
	mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mnt < 0)
		e = errno;
	close(fs);
	if (mnt >= 0) {
		*what = "hand the proposal layer to the supervisor";
		r = cd_fd_send(cd_child_g_ctx->layer_fd, layer);
		if (r < 0) {
			e = -r;
			close(mnt);
			mnt = -1;
		}
	}
out:
	close(lo);
	if (cd_child_g_ctx->tree_fd[i] >= 0)
		umount2(CD_CHILD_NEWROOT, MNT_DETACH); /* the overlay holds its own clone */
	close(layer);
	if (up >= 0)
		close(up);
	if (wk >= 0)
		close(wk);
	return mnt >= 0 ? mnt : -e;
}

/* Open (and clone) every bind source before the new root covers CD_CHILD_NEWROOT:
 * a source may live under it. */
static void open_sources(int *srcfds)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	size_t i;

	for (i = 0; i < p->nmounts; i++) {
		const struct cd_mount *m = &p->mounts[i];
		uint64_t attrs = MOUNT_ATTR_NOSUID;
		int fd, r;

		srcfds[i] = -1;
		if (m->kind == CD_MNT_OVERLAY) {
			const char *what = "";

			fd = overlay_source(i, m, &what);
			if (fd < 0)
				cd_child_fail(what, m->src, -fd);
			srcfds[i] = fd;
			continue;
		}
		if (m->kind != CD_MNT_BIND)
			continue;
		if (cd_child_g_ctx->tree_fd[i] >= 0) {
			srcfds[i] = cd_child_g_ctx->tree_fd[i]; /* idmapped, flags set (idmap.h) */
			continue;
		}
		fd = clone_source(m);
		if (fd < 0) {
			if (fd == -ELOOP || fd == -EXDEV)
				cd_child_fail(
				        "bind source changed into a symlink since it was checked",
				        m->src, -fd);
			if (!(m->flags & CD_MNT_OPTIONAL))
				cd_child_fail("open bind source", m->src, -fd);
			srcfds[i] = fd; /* -ENOENT etc.: skipped if optional */
			continue;
		}
		if (!(m->flags & CD_MNT_RW))
			attrs |= MOUNT_ATTR_RDONLY;
		if (!(m->flags & CD_MNT_DEV))
			attrs |= MOUNT_ATTR_NODEV;
		else
			attrs |= MOUNT_ATTR_NOEXEC;
		r = set_attr(fd, attrs, 1);
		if (r < 0)
			cd_child_fail("set mount flags on", m->src, -r);
		srcfds[i] = fd;
	}
}

void cd_child_build_root(void)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	int srcfds[CD_PLAN_MAX_MOUNTS];
	int rootfd, nullfd;
	size_t i;

	/* Nothing we mount may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		cd_child_fail("make mounts private", NULL, errno);
	open_sources(srcfds);
	close(cd_child_g_ctx->layer_fd); /* the layer went over it, or none will */
	nullfd = cd_child_openat2(AT_FDCWD, "/dev/null", O_PATH | O_CLOEXEC, RESOLVE_NO_SYMLINKS);
	if (nullfd < 0)
		cd_child_fail("open", "/dev/null", errno);
	if (mount("cordon", CD_CHILD_NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=4m") <
	    0)
		cd_child_fail("mount the root tmpfs", NULL, errno);
	rootfd = open(CD_CHILD_NEWROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		cd_child_fail("open the new root", NULL, errno);
	for (i = 0; i < p->nmounts; i++) {
		do_mount(rootfd, i, srcfds[i], nullfd);
		if (srcfds[i] >= 0)
			close(srcfds[i]);
	}
	parent_drop();
	hold_dirs(rootfd);
	cd_child_verify_covers(rootfd, nullfd);
	close(nullfd);
	if (fchdir(rootfd) < 0)
		cd_child_fail("enter the new root", NULL, errno);
	close(rootfd);
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		cd_child_fail("pivot_root", NULL, errno);
	if (umount2(".", MNT_DETACH) < 0)
		cd_child_fail("detach the host root", NULL, errno);
	if (chdir("/") < 0)
		cd_child_fail("chdir /", NULL, errno);
}
