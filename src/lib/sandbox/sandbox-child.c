/* sandbox-child.c — the sandbox child: from clone to execve.
 *
 * This code runs in the freshly cloned child, inside the new namespaces,
 * and later as the sandbox's init (pid 1).  Between clone and exec it makes
 * system calls only: no malloc, no stdio, no locks — everything it needs is
 * in the plan and the context the supervisor prepared.  A failure is
 * reported as one fixed-size record on the report socket, then the child
 * exits; the supervisor turns the record into a message.
 *
 * Order (STYLE.md): identity maps, private mounts, open every source,
 * build the new root, pivot, close fds, drop capabilities, no_new_privs,
 * (Landlock, seccomp last), then fork the command under init.
 *
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

#define CD_CHILD_NEWROOT "/tmp" /* where the new root is built before pivot_root */

/* Exit codes of the child when it cannot report (the supervisor maps
 * these, but the record is what carries the reason). */
#define CHILD_EXIT_SETUP 125

static const struct cd_child_ctx *cd_child_g_ctx;
static volatile pid_t g_cmd_pid;
static int g_report_fd = -1;
static int g_listener_fd = -1;
static int g_sync_fd = -1;
static int g_lifeline_fd = -1;           /* pidfd of the supervisor (see hold_lifeline) */
static int cd_child_g_pty_follower = -1; /* plan->tty: the session pty's follower side */
static int g_stdio[3] = { -1, -1, -1 };  /* the command's stdio, lifted above 15 */

static size_t copy_str(char *dst, size_t cap, size_t at, const char *src)
{
	while (src && *src && at + 1 < cap)
		dst[at++] = *src++;
	dst[at] = '\0';
	return at;
}

static void report(uint32_t type, int err, int status, uint32_t walls, const char *what,
                   const char *subject)
{
	struct cd_report r;
	size_t n;
	ssize_t w;

	memset(&r, 0, sizeof r);
	r.type = type;
	r.err = err;
	r.status = status;
	r.walls = walls;
	n = copy_str(r.what, sizeof r.what, 0, what);
	if (subject) {
		n = copy_str(r.what, sizeof r.what, n, " '");
		n = copy_str(r.what, sizeof r.what, n, subject);
		copy_str(r.what, sizeof r.what, n, "'");
	}
	do {
		w = send(g_report_fd, &r, sizeof r, MSG_NOSIGNAL);
	} while (w < 0 && errno == EINTR);
}

__attribute__((noreturn)) static void cd_child_fail(const char *what, const char *subject, int err)
{
	report(CD_REPORT_SETUP_FAIL, err, 0, 0, what, subject);
	_exit(CHILD_EXIT_SETUP);
}

static int cd_child_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how;

	memset(&how, 0, sizeof how);
	how.flags = flags;
	how.resolve = resolve;
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

static int write_file(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	size_t len = strlen(data);

	if (fd < 0)
		return -errno;
	n = write(fd, data, len);
	if (n < 0 || (size_t)n != len) {
		int e = n < 0 ? errno : EIO;
		close(fd);
		return -e;
	}
	close(fd);
	return 0;
}

static void set_identity(void)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	int r;

	/* A root caller's child was cloned with the dedicated id as its
	 * effective id (idmap.h), which left it non-dumpable: its /proc/self
	 * files would be root's and closed to it.  Init turns it off again. */
	if (p->idmap && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		cd_child_fail("make the child dumpable to write its id maps", NULL, errno);
	if ((r = write_file("/proc/self/setgroups", "deny")) < 0)
		cd_child_fail("write /proc/self/setgroups", NULL, -r);
	if ((r = write_file("/proc/self/uid_map", cd_child_g_ctx->uid_map)) < 0)
		cd_child_fail("write /proc/self/uid_map", NULL, -r);
	if ((r = write_file("/proc/self/gid_map", cd_child_g_ctx->gid_map)) < 0)
		cd_child_fail("write /proc/self/gid_map", NULL, -r);
	/* Its real and saved ids were still root's: RLIMIT_NPROC and the
	 * other per-user counts follow the real id. */
	if (p->idmap && (syscall(SYS_setresgid, p->gid, p->gid, p->gid) < 0 ||
	                 syscall(SYS_setresuid, p->uid, p->uid, p->uid) < 0))
		cd_child_fail("take the sandbox's ids", NULL, errno);
}

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
static void cd_child_make_pty(void)
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

/* A detached, recursive clone of a host path opened without symlinks. */
static int clone_source(const char *path)
{
	int fd = cd_child_openat2(AT_FDCWD, path, O_PATH | O_CLOEXEC,
	                          RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	int tree;

	if (fd < 0)
		return -errno;
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
 * 0 when it is absent and the mount is optional, -errno otherwise. */
static int open_existing(int pfd, const char *name, const struct cd_mount *m, int *ret)
{
	int fd = cd_child_openat2(pfd, name, O_PATH | O_CLOEXEC,
	                          RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH);

	if (fd < 0) {
		if (errno == ENOENT && (m->flags & CD_MNT_OPTIONAL))
			return 0;
		return -errno;
	}
	*ret = fd;
	return 1;
}

static void do_mount(int rootfd, size_t i, int srcfd, int nullfd)
{
	const struct cd_mount *m = &cd_child_g_ctx->plan->mounts[i];
	char name[256];
	int pfd, tfd = -1, mfd = -1, r = 0, fd, is_dir;
	const char *what = "mount";

	if (strcmp(m->dest, "/") == 0) {
		/* Only the final remount applies to the root itself. */
		if ((r = set_attr(rootfd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
		                  0)) < 0)
			cd_child_fail("make the sandbox root read-only", NULL, -r);
		return;
	}
	pfd = parent_of(rootfd, m->dest, name, sizeof name);
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
		if ((r = open_existing(pfd, name, m, &tfd)) <= 0)
			break;
		r = 0;
		is_dir = fd_is_dir(tfd);
		if (is_dir)
			mfd = new_fs("tmpfs", "0", "0555",
			             MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			                     MOUNT_ATTR_NOEXEC);
		else
			mfd = (int)syscall(SYS_open_tree, nullfd, "",
			                   OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
		if (mfd < 0) {
			r = mfd == -1 ? -errno : mfd;
			break;
		}
		if (!is_dir)
			r = set_attr(mfd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
			             0);
		if (r == 0)
			r = attach(mfd, tfd);
		break;
	case CD_MNT_DEVPTS:
		what = "mount devpts at";
		tfd = make_target(pfd, name, 1);
		mfd = tfd < 0 ? tfd : new_devpts();
		r = mfd < 0 ? mfd : attach(mfd, tfd);
		break;
	case CD_MNT_REMOUNT_RO:
		what = "make read-only";
		if ((r = open_existing(pfd, name, m, &tfd)) <= 0)
			break;
		r = 0;
		if (is_mount_root(tfd)) {
			r = set_attr(tfd, MOUNT_ATTR_RDONLY, 0);
			break;
		}
		mfd = (int)syscall(SYS_open_tree, tfd, "",
		                   OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
		                           AT_RECURSIVE);
		if (mfd < 0) {
			r = -errno;
			break;
		}
		r = set_attr(mfd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 1);
		if (r == 0)
			r = attach(mfd, tfd);
		break;
	}
	if (mfd >= 0)
		close(mfd);
	if (tfd >= 0)
		close(tfd);
	if (r < 0)
		cd_child_fail(what, m->dest, -r);
	if (m->kind != CD_MNT_SYMLINK && m->kind != CD_MNT_DIR && m->kind != CD_MNT_FILE)
		parent_covered(m->dest);
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

	if (cd_child_g_ctx->tree_fd[i] < 0)
		return cd_child_openat2(AT_FDCWD, m->src, O_PATH | O_DIRECTORY | O_CLOEXEC,
		                        RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
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
		fd = clone_source(m->src);
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

static void cd_child_build_root(void)
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
	close(nullfd);
	parent_drop();
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

static void loopback_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		cd_child_fail("open a socket to bring up lo", NULL, errno);
	memset(&ifr, 0, sizeof ifr);
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		cd_child_fail("read flags of lo", NULL, errno);
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		cd_child_fail("bring up lo", NULL, errno);
	close(s);
}

/* Parse one decimal field of /proc/self/stat (1-based, counted after the
 * comm field, which may hold spaces).  0 on failure. */
static unsigned long stat_field(const char *buf, size_t len, unsigned field)
{
	size_t i = len, f = 2;
	unsigned long v = 0;

	while (i > 0 && buf[i - 1] != ')')
		i--;
	if (i == 0)
		return 0;
	for (; i < len && f < field; i++) {
		if (buf[i] == ' ')
			f++;
	}
	for (; i < len && buf[i] >= '0' && buf[i] <= '9'; i++)
		v = v * 10 + (unsigned long)(buf[i] - '0');
	return v;
}

/* Init is a copy of cordon: its command line (cordon's options, host
 * paths) would be readable in /proc/1/cmdline, which needs no ptrace
 * access.  Blank it; the sandbox learns nothing of the host from it. */
static void blank_cmdline(void)
{
	char buf[1024];
	unsigned long start, end;
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	start = stat_field(buf, (size_t)n, 48); /* arg_start */
	end = stat_field(buf, (size_t)n, 49);   /* arg_end */
	if (start && end > start && end - start < (1UL << 24))
		memset((void *)start, 0, end - start);
}

/* Egress: the proxy's listening socket lives in the sandbox's network
 * namespace (loopback only) but is served by the supervisor outside, so
 * the sandbox can reach exactly this port and nothing else. */
static void proxy_listener(void)
{
	struct sockaddr_in sin;
	int s, r, one = 1;

	if (!cd_child_g_ctx->plan->proxy_port)
		return;
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		cd_child_fail("create the egress proxy socket", NULL, errno);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)cd_child_g_ctx->plan->proxy_port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(s, (struct sockaddr *)&sin, sizeof sin) < 0 || listen(s, 64) < 0)
		cd_child_fail("listen for the egress proxy on 127.0.0.1", NULL, errno);
	r = cd_fd_send(cd_child_g_ctx->proxy_fd, s);
	close(s);
	if (r < 0)
		cd_child_fail("hand the egress proxy socket to the supervisor", NULL, -r);
}

static void drop_privileges(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	unsigned long cap;

	/* Lock root semantics away for good, then empty the bounding and
	 * ambient sets, then every other set.  Nothing can come back: no_new_privs
	 * (set next) blocks setuid and file capabilities at exec. */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
	                                     SECBIT_NO_SETUID_FIXUP_LOCKED |
	                                     SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
	                                     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
		cd_child_fail("set securebits", NULL, errno);
	for (cap = 0; cap < 64; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break;
			cd_child_fail("drop capability bounding set", NULL, errno);
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		cd_child_fail("clear ambient capabilities", NULL, errno);
	memset(data, 0, sizeof data);
	if (syscall(SYS_capset, &hdr, data) < 0)
		cd_child_fail("clear capabilities", NULL, errno);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		cd_child_fail("set no_new_privs", NULL, errno);
}

/* Keep fds 0-2 (the command's pipes), the report socket (moved to 3), the
 * listener socket (moved to 4), the sync pipe (5) and the lifeline (6);
 * close everything else the build left open. */
static void close_fds(void)
{
	int i;

	/* Out of the way of 0-4 first, so no dup2 below clobbers them. */
	if ((g_report_fd = fcntl(g_report_fd, F_DUPFD_CLOEXEC, 16)) < 0 ||
	    (g_listener_fd = fcntl(g_listener_fd, F_DUPFD_CLOEXEC, 16)) < 0 ||
	    (g_sync_fd = fcntl(g_sync_fd, F_DUPFD_CLOEXEC, 16)) < 0 ||
	    (g_lifeline_fd = fcntl(g_lifeline_fd, F_DUPFD_CLOEXEC, 16)) < 0 ||
	    (cd_child_g_pty_follower >= 0 &&
	     (cd_child_g_pty_follower = fcntl(cd_child_g_pty_follower, F_DUPFD_CLOEXEC, 16)) < 0))
		_exit(CHILD_EXIT_SETUP);

	/* A direct stream may already be one of 0-2 (cordon run's own stdin
	 * or stdout, handed over): each is lifted out of the way first, so no
	 * dup2 below clobbers another, and dup2 always makes a fresh fd 0-2
	 * without close-on-exec. */
	for (i = 0; i < 3; i++)
		if (cd_child_g_pty_follower < 0 &&
		    (g_stdio[i] = fcntl(cd_child_g_ctx->stdio[i], F_DUPFD_CLOEXEC, 16)) < 0)
			cd_child_fail("set up stdio", NULL, errno);
	for (i = 0; i < 3; i++) {
		if (dup2(cd_child_g_pty_follower >= 0 ? cd_child_g_pty_follower : g_stdio[i], i) <
		    0)
			cd_child_fail("set up stdio", NULL, errno);
	}
	if (g_report_fd != 3) {
		if (dup3(g_report_fd, 3, O_CLOEXEC) < 0)
			cd_child_fail("move the report socket", NULL, errno);
		g_report_fd = 3;
	}
	if (dup3(g_listener_fd, 4, O_CLOEXEC) < 0)
		cd_child_fail("move the listener socket", NULL, errno);
	g_listener_fd = 4;
	if (dup3(g_sync_fd, 5, O_CLOEXEC) < 0)
		cd_child_fail("move the sync pipe", NULL, errno);
	g_sync_fd = 5;
	if (dup3(g_lifeline_fd, 6, O_CLOEXEC) < 0)
		cd_child_fail("move the lifeline", NULL, errno);
	g_lifeline_fd = 6;
	if (syscall(SYS_close_range, 7, ~0U, 0) < 0)
		cd_child_fail("close inherited fds", NULL, errno);
}

static void reset_signals(void)
{
	struct sigaction sa;
	sigset_t none;
	int sig;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < _NSIG; sig++) {
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &sa, NULL); /* fails harmlessly for glibc's reserved ones */
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static size_t path_join(char *out, size_t cap, const char *dir, const char *file)
{
	size_t n = copy_str(out, cap, 0, dir);
	n = copy_str(out, cap, n, "/");
	return copy_str(out, cap, n, file);
}

__attribute__((noreturn)) static void exec_command(void)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	const char *arg0 = p->argv[0];
	char path[CD_PATH_MAX];
	int saw_eacces = 0, e = ENOENT;
	size_t i;

	if (setsid() < 0 && errno != EPERM)
		_exit(CHILD_EXIT_SETUP);
	/* cordon shell: the session pty becomes the command's controlling
	 * terminal (the only one it ever has: the host's is never here). */
	if (p->tty && ioctl(0, TIOCSCTTY, 0) < 0) {
		report(CD_REPORT_EXEC_FAIL, errno, 0, 0,
		       "make the session pty the controlling terminal", NULL);
		_exit(CHILD_EXIT_SETUP);
	}
	reset_signals();
	if (strchr(arg0, '/')) {
		execve(arg0, p->argv, p->envp);
		e = errno;
	} else {
		for (i = 0; p->path_dirs[i]; i++) {
			if (path_join(path, sizeof path, p->path_dirs[i], arg0) + 1 >= sizeof path)
				continue;
			execve(path, p->argv, p->envp);
			if (errno == EACCES)
				saw_eacces = 1;
			else if (errno != ENOENT && errno != ENOTDIR) {
				e = errno;
				break;
			}
		}
		if (e == ENOENT && saw_eacces)
			e = EACCES;
	}
	report(CD_REPORT_EXEC_FAIL, e, 0, 0, "execute", arg0);
	_exit(e == ENOENT ? 127 : 126);
}

/* The command's stack until its execve (see run_init). */
static char cmd_stack[64 * 1024] __attribute__((aligned(16)));

static int spawn_command(void *unused)
{
	(void)unused;
	exec_command();
}

static void forward_signal(int sig)
{
	if (g_cmd_pid > 0)
		kill(g_cmd_pid, sig);
}

/* pid 1: fork the command, reap everything, report the command's status,
 * exit.  When init exits the kernel kills whatever is left in the pid
 * namespace, so nothing outlives the command. */
__attribute__((noreturn)) static void run_init(uint32_t walls)
{
	static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	struct sigaction sa;
	int status = 0;
	size_t i;
	pid_t pid;

	/* The sandbox is built while the supervisor makes the intent durable;
	 * the command starts only on its second "go" (EOF: it could not). */
	{
		char go;
		ssize_t n;

		do {
			n = read(g_sync_fd, &go, 1);
		} while (n < 0 && errno == EINTR);
		if (n != 1 || go != CD_SYNC_RUN)
			cd_child_fail("wait for the run to be recorded", NULL,
			              n < 0 ? errno : EPIPE);
		close(g_sync_fd);
	}
	/* vfork semantics: the command borrows init's memory until its execve
	 * (init waits meanwhile), so init's pages are neither copied into it
	 * nor made copy-on-write for the rest of the run.  Until then it makes
	 * system calls only and writes nothing of init's but its own stack;
	 * its signal handlers are its own copy (no CLONE_SIGHAND). */
	pid = clone(spawn_command, cmd_stack + sizeof cmd_stack, CLONE_VM | CLONE_VFORK | SIGCHLD,
	            NULL);
	if (pid < 0)
		cd_child_fail("fork the command", NULL, errno);
	g_cmd_pid = pid;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = forward_signal;
	sa.sa_flags = SA_RESTART;
	for (i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
		sigaction(forwarded[i], &sa, NULL);
	{
		/* The supervisor blocks these for its signalfd; init must see them. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
	}
	/* The command's stdio belong to the command alone: init keeps no
	 * pipe end open, so EOF reaches the supervisor when the command's
	 * tree closes them. */
	for (i = 0; i < 3; i++)
		close((int)i);
	report(CD_REPORT_STARTED, 0, 0, walls, "", NULL);
	for (;;) {
		int st;
		pid_t w = wait4(-1, &st, 0, NULL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: nothing left */
		}
		if (w == pid) {
			status = st;
			break;
		}
	}
	report(CD_REPORT_STATUS, 0, status, 0, "", NULL);
	_exit(0);
}

/* The supervisor's death must end the sandbox at every moment of its
 * life.  The parent-death signal (SIGKILL: init dies, and the kernel kills
 * the rest of its pid namespace) is armed first; a supervisor that died
 * before it took effect (between the clone and here, when the signal never
 * comes) is seen dead on its pidfd, however many processes still hold its
 * descriptors.  The kernel clears the parent-death signal when the
 * effective or filesystem uid or gid changes: call this again after any
 * such change.  (The supervisor is single-threaded: the signal follows the
 * thread that cloned us.) */
static void hold_lifeline(int lifeline_fd)
{
	struct pollfd pfd;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(CHILD_EXIT_SETUP);
	pfd.fd = lifeline_fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) != 0)
		_exit(CHILD_EXIT_SETUP); /* dead, or we cannot tell: stop */
}

/* The fds the child keeps from the moment it starts: the ones the
 * supervisor prepared for it in the context, and nothing else.  A new fd
 * handed to the child is added here (and to struct cd_child_ctx). */
static size_t child_keep(const struct cd_child_ctx *ctx, int *keep, size_t cap)
{
	const int fds[] = {
		ctx->report_fd, ctx->sync_fd,  ctx->lifeline_fd, ctx->stdio[0], ctx->stdio[1],
		ctx->stdio[2],  ctx->proxy_fd, ctx->listener_fd, ctx->pty_fd,   ctx->layer_fd,
	};
	size_t i, n = 0;

	for (i = 0; i < sizeof fds / sizeof fds[0] && n < cap; i++) {
		if (fds[i] >= 0)
			keep[n++] = fds[i];
	}
	/* The caller's trees, idmapped by the supervisor (idmap.h): mounted
	 * by cd_child_build_root(), each closed there once attached. */
	for (i = 0; ctx->plan->idmap && i < ctx->plan->nmounts && i < CD_PLAN_MAX_MOUNTS && n < cap;
	     i++) {
		if (ctx->tree_fd[i] >= 0)
			keep[n++] = ctx->tree_fd[i];
	}
	return n;
}

/* Close every fd but those in keep[] (n of them, any order, duplicates
 * allowed).  Returns 0 or -errno. */
static int close_all_but(int *keep, size_t n)
{
	unsigned int lo = 0;
	size_t i, j;

	for (i = 1; i < n; i++) {
		for (j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	}
	for (i = 0; i < n; i++) {
		unsigned int k = (unsigned int)keep[i];

		if (k < lo)
			continue; /* a duplicate */
		if (k > lo && syscall(SYS_close_range, lo, k - 1, 0) < 0)
			return -errno;
		lo = k + 1;
	}
	return syscall(SYS_close_range, lo, ~0U, 0) < 0 ? -errno : 0;
}

void cd_child_main(const struct cd_child_ctx *ctx)
{
	/* Static: the child has its own copy of memory (no CLONE_VM), and
	 * 4 KiB of tree fds is more than its stack should carry. */
	static int keep[16 + CD_PLAN_MAX_MOUNTS];
	size_t nkeep;
	uint32_t walls;
	ssize_t n;
	char go;
	int r, quota_fd;

	/* Before anything else: die with the supervisor, then drop every fd
	 * inherited from it but our own.  clone does not exec, so
	 * close-on-exec protects nothing here: without this the child would
	 * hold cordon's audit and state databases (and their WAL and SHM),
	 * the other end of each of its pipes and the caller's terminal. */
	hold_lifeline(ctx->lifeline_fd);
	cd_child_g_ctx = ctx;
	g_report_fd = ctx->report_fd;
	g_listener_fd = ctx->listener_fd;
	g_lifeline_fd = ctx->lifeline_fd;
	nkeep = child_keep(ctx, keep, sizeof keep / sizeof keep[0]);
	if ((r = close_all_but(keep, nkeep)) < 0)
		cd_child_fail("close the fds inherited from cordon", NULL, -r);
	if (setsid() < 0)
		cd_child_fail("setsid", NULL, errno);
	set_identity();
	/* /proc/sys/user of our user namespace, opened while the host's
	 * /proc is here; written once our cgroup namespace exists. */
	if ((quota_fd = cd_quotas_open()) < 0)
		cd_child_fail("open /proc/sys/user", NULL, -quota_fd);
	/* The filesystem, hostname and network are built while the supervisor
	 * makes the run's cgroup and moves us in: nothing here runs code of
	 * the command's, and nothing the command can reach starts before we
	 * are placed. */
	g_sync_fd = ctx->sync_fd;
	cd_child_build_root();
	if (chdir(ctx->plan->cwd) < 0)
		cd_child_fail("enter the working directory", ctx->plan->cwd, errno);
	if (sethostname(ctx->plan->hostname, strlen(ctx->plan->hostname)) < 0)
		cd_child_fail("set the hostname", NULL, errno);
	loopback_up();
	proxy_listener();
	close(ctx->proxy_fd);
	cd_child_make_pty();
	/* Wait until the supervisor has placed us (cgroups); EOF means it
	 * could not, and nothing starts. */
	do {
		n = read(g_sync_fd, &go, 1);
	} while (n < 0 && errno == EINTR);
	if (n != 1 || (go & ~(CD_SYNC_CG_MEMORY | CD_SYNC_CG_PIDS)) != CD_SYNC_PLACED)
		_exit(CHILD_EXIT_SETUP);
	/* Now inside the run's cgroup: make it the root of our cgroup view. */
	if (unshare(CLONE_NEWCGROUP) < 0)
		cd_child_fail("create the cgroup namespace", NULL, errno);
	if ((r = cd_quotas_apply(quota_fd, &ctx->plan->limits)) < 0)
		cd_child_fail("set the kernel object quotas in /proc/sys/user", NULL, -r);
	close(quota_fd);
	close_fds();
	if ((r = cd_rlimits_apply(&ctx->plan->limits, (go & CD_SYNC_CG_MEMORY) != 0,
	                          (go & CD_SYNC_CG_PIDS) != 0)) < 0)
		cd_child_fail("set resource limits", NULL, -r);
	drop_privileges();
	walls = ctx->plan->walls &
	        (CD_WALL_USERNS | CD_WALL_MOUNTNS | CD_WALL_PIDNS | CD_WALL_NETNS | CD_WALL_IPCNS |
	         CD_WALL_UTSNS | CD_WALL_CGROUPNS | CD_WALL_NNP | CD_WALL_CAPS);
	if (ctx->plan->landlock_abi > 0) {
		if ((r = cd_landlock_apply(&ctx->plan->landlock, ctx->plan->landlock_abi)) < 0)
			cd_child_fail("apply Landlock rules", NULL, -r);
		walls |= CD_WALL_LANDLOCK;
	}
	/* Past the last change of credentials: arm the lifeline again, in
	 * case one cleared it, and let go of the supervisor's pidfd. */
	hold_lifeline(g_lifeline_fd);
	close(g_lifeline_fd);
	/* Init holds nothing the command may not have: non-dumpable, so
	 * /proc/1/mem and /proc/1/exe are closed to it (THREATS row 2). */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		cd_child_fail("make init non-dumpable", NULL, errno);
	/* seccomp last: the listener goes to the supervisor and is closed here
	 * before the command exists. */
	if (ctx->plan->seccomp.len > 0) {
		const struct cd_seccomp_prog *prog =
		        cd_quotas_prog(ctx->plan, (go & CD_SYNC_CG_MEMORY) != 0);
		int listener = -1;

		if ((r = cd_seccomp_install(prog, &listener)) < 0)
			cd_child_fail("install the seccomp filter", NULL, -r);
		if (listener >= 0) {
			r = cd_fd_send(g_listener_fd, listener);
			close(listener);
			if (r < 0)
				cd_child_fail("hand the seccomp listener to the supervisor", NULL,
				              -r);
		}
		walls |= CD_WALL_SECCOMP;
	}
	close(g_listener_fd);
	blank_cmdline();
	run_init(walls);
}
