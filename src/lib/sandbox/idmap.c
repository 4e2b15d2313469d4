/* idmap.c — the host identity of a root caller's sandbox (see idmap.h).
 *
 * Trust boundary: runs in the supervisor with host root's privileges,
 * before the sandbox exists.  The host paths it opens come from the
 * checked plan and are opened again without following symlinks (they may
 * have been swapped since the plan was built).
 */
#include "idmap.h"

#include "util/num.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define SUBID_FILE_MAX (64u * 1024) /* more of /etc/subuid is not read */

int cd_idmap_parse_subid(const char *text, size_t len, const char *name, unsigned long id,
                         uint32_t *ret_start, uint32_t *ret_count)
{
	char idbuf[24];
	size_t at = 0, nlen = strlen(name);
	int n = snprintf(idbuf, sizeof idbuf, "%lu", id);

	if (n < 0 || (size_t)n >= sizeof idbuf)
		return -EINVAL;
	while (at < len) {
		const char *line = text + at, *nl = memchr(line, '\n', len - at);
		size_t ll = nl ? (size_t)(nl - line) : len - at;
		const char *c1 = memchr(line, ':', ll), *c2;
		uint64_t start, count;
		size_t klen;

		at += ll + 1;
		if (!c1)
			continue;
		klen = (size_t)(c1 - line);
		if (!((klen == nlen && memcmp(line, name, nlen) == 0) ||
		      (klen == (size_t)n && memcmp(line, idbuf, (size_t)n) == 0)))
			continue;
		c2 = memchr(c1 + 1, ':', ll - klen - 1);
		if (!c2)
			continue;
		if (cd_parse_u64(c1 + 1, (size_t)(c2 - c1 - 1), UINT32_MAX, &start) < 0 ||
		    cd_parse_u64(c2 + 1, (size_t)(line + ll - c2 - 1), UINT32_MAX, &count) < 0)
			continue;
		if (start == 0 || start == 65534 || start >= UINT32_MAX || count == 0 ||
		    start + count - 1 > UINT32_MAX - 1)
			continue;
		*ret_start = (uint32_t)start;
		*ret_count = (uint32_t)count;
		return 0;
	}
	return -ENOENT;
}

/* root's first subordinate range in `path` (*start, *count), or the
 * default one. */
static void root_subid(const char *path, uint32_t *start, uint32_t *count)
{
	char *buf = malloc(SUBID_FILE_MAX);
	size_t len = 0;
	ssize_t n;
	int fd;

	*start = CD_IDMAP_DEFAULT_ID;
	*count = CD_IDMAP_SLOTS_MAX;
	if (!buf)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		while (len < SUBID_FILE_MAX &&
		       (n = read(fd, buf + len, SUBID_FILE_MAX - len)) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				len = 0;
				break;
			}
			len += (size_t)n;
		}
		close(fd);
		if (cd_idmap_parse_subid(buf, len, "root", 0, start, count) < 0) {
			*start = CD_IDMAP_DEFAULT_ID;
			*count = CD_IDMAP_SLOTS_MAX;
		}
		/* Never nobody (65534), which daemons and rootless runs share:
		 * a range across it is cut below it. */
		if (*start < 65534 && *start + *count > 65534)
			*count = 65534 - *start;
	}
	free(buf);
}

void cd_idmap_root_range_from(const char *subuid, const char *subgid, struct cd_idmap_range *ret)
{
	uint32_t ucount, gcount;

	root_subid(subuid, &ret->uid, &ucount);
	root_subid(subgid, &ret->gid, &gcount);
	ret->count = ucount < gcount ? ucount : gcount;
	if (ret->count > CD_IDMAP_SLOTS_MAX)
		ret->count = CD_IDMAP_SLOTS_MAX;
}

void cd_idmap_root_range(struct cd_idmap_range *ret)
{
	cd_idmap_root_range_from("/etc/subuid", "/etc/subgid", ret);
}

int cd_idmap_is_caller_tree(const struct cd_mount *m)
{
	if (m->kind == CD_MNT_OVERLAY)
		return 1;
	return m->kind == CD_MNT_BIND && !(m->flags & (CD_MNT_OPTIONAL | CD_MNT_DEV));
}

/* The helper that holds the idmap's user namespace open until its fd is
 * taken: it waits for EOF on the pipe.  It shares our memory (CLONE_VM)
 * and makes system calls only. */
static int hold_pipe[2];
static char hold_stack[16 * 1024] __attribute__((aligned(16)));

static int hold(void *unused)
{
	unsigned int fd = (unsigned int)hold_pipe[0];
	char c;

	(void)unused;
	/* Its fd table is a copy of cordon's (no CLONE_FILES): keep nothing
	 * of it (the audit database, the run's pipes) but the pipe it waits
	 * on, the write end included, so that cordon's death is its EOF. */
	if (fd > 0)
		syscall(SYS_close_range, 0, fd - 1, 0);
	syscall(SYS_close_range, fd + 1, ~0U, 0);
	while (read((int)fd, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

static int write_map(pid_t pid, const char *file, unsigned long id)
{
	char path[64], map[64];
	int n1 = snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, file);
	int n2 = snprintf(map, sizeof map, "0 %lu 1\n", id);
	ssize_t w;
	int fd, e;

	if (n1 < 0 || (size_t)n1 >= sizeof path || n2 < 0 || (size_t)n2 >= sizeof map)
		return -EINVAL;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	w = write(fd, map, (size_t)n2);
	e = w < 0 ? errno : EIO;
	close(fd);
	return w == n2 ? 0 : -e;
}

/* A user namespace whose uid and gid 0 are the sandbox's host ids: the
 * idmapping of the caller's trees.  Returns its fd or -errno. */
static int idmap_userns(uid_t uid, gid_t gid)
{
	char path[64];
	pid_t pid;
	int fd = -1, r, n;

	if (pipe2(hold_pipe, O_CLOEXEC) < 0)
		return -errno;
	pid = clone(hold, hold_stack + sizeof hold_stack, CLONE_NEWUSER | CLONE_VM | SIGCHLD, NULL);
	if (pid < 0) {
		r = -errno;
		close(hold_pipe[0]);
		close(hold_pipe[1]);
		return r;
	}
	close(hold_pipe[0]);
	r = write_map(pid, "uid_map", (unsigned long)uid);
	if (r == 0)
		r = write_map(pid, "gid_map", (unsigned long)gid);
	n = snprintf(path, sizeof path, "/proc/%ld/ns/user", (long)pid);
	if (r == 0 && (n < 0 || (size_t)n >= sizeof path))
		r = -EINVAL;
	if (r == 0 && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		r = -errno;
	close(hold_pipe[1]);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	return r < 0 ? r : fd;
}

/* A detached recursive clone of m's source: made from the descriptor the
 * walk opened and judged (m->src_fd: no path is looked up again, so a
 * rename since cannot put another file under the walk's judgement), else
 * opened without symlinks and the very inode the walk read there
 * (CD_MNT_SRC_PINNED), else -EXDEV with *moved set.  A file rewritten
 * since the walk judged it is refused too. */
static int open_tree_nofollow(const struct cd_mount *m, int *moved)
{
	struct open_how how;
	struct stat st;
	int fd, tree, e;

	if ((m->flags & CD_MNT_SRC_PINNED) && m->src_fd >= 0) {
		if (fstat(m->src_fd, &st) < 0 || !cd_mount_source_is(m, &st)) {
			*moved = 1;
			return -EXDEV;
		}
		tree = (int)syscall(SYS_open_tree, m->src_fd, "",
		                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
		                            AT_RECURSIVE);
		return tree < 0 ? -errno : tree;
	}
	memset(&how, 0, sizeof how);
	how.flags = O_PATH | O_CLOEXEC;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, m->src, &how, sizeof how);
	if (fd < 0 && (m->flags & CD_MNT_SRC_PINNED) && (errno == ENOENT || errno == ENOTDIR))
		*moved = 1; /* gone since the walk read it */
	if (fd < 0)
		return -errno;
	if ((m->flags & CD_MNT_SRC_PINNED) && (fstat(fd, &st) < 0 || !cd_mount_source_is(m, &st))) {
		close(fd);
		*moved = 1;
		return -EXDEV;
	}
	tree = (int)syscall(SYS_open_tree, fd, "",
	                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	e = errno;
	close(fd);
	return tree < 0 ? -e : tree;
}

static int setattr(int tree, uint64_t attrs, int userns)
{
	struct mount_attr a;

	memset(&a, 0, sizeof a);
	a.attr_set = attrs;
	if (userns >= 0) {
		a.attr_set |= MOUNT_ATTR_IDMAP;
		a.userns_fd = (uint64_t)userns;
	}
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0)
		return -errno;
	return 0;
}

#define MOVED_SOURCE                                                                               \
	"refused: the tree walk checked another directory or file than is now at '%s' "            \
	"(exchanged or rewritten since: a concurrent rename?)"

/* One caller tree: idmapped, or plain when read-only and its filesystem
 * (or a mount under it) cannot be idmapped.  *plain says which. */
static int open_one(const struct cd_mount *m, int userns, int *plain, struct cd_err *err)
{
	uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	int writable = m->kind == CD_MNT_BIND && (m->flags & CD_MNT_RW);
	int tree, r, moved = 0;

	if (!writable)
		attrs |= MOUNT_ATTR_RDONLY;
	tree = open_tree_nofollow(m, &moved);
	if (moved)
		return cd_err_set(err, -CD_E_DENIED, MOVED_SOURCE, m->src);
	if (tree == -ELOOP || tree == -EXDEV)
		return cd_err_sys(err, tree,
		                  "bind source '%s' changed into a symlink since it was checked",
		                  m->src);
	if (tree < 0)
		return cd_err_sys(err, tree, "open bind source '%s'", m->src);
	*plain = 0;
	if (m->flags & CD_MNT_PLAIN) {
		*plain = 1;
		r = setattr(tree, attrs, -1);
		if (r < 0) {
			close(tree);
			return cd_err_sys(err, r, "set mount flags on '%s'", m->src);
		}
		return tree;
	}
	r = setattr(tree, attrs, userns);
	if (r == -EINVAL || r == -EPERM || r == -EOPNOTSUPP) {
		close(tree);
		if (writable)
			return cd_err_set(
			        err, -CD_E_USAGE,
			        "'%s': its filesystem cannot be idmapped, so a root "
			        "caller's sandbox (which does not run as root) cannot "
			        "write to it; bind it read-only or run cordon as its owner",
			        m->src);
		if ((tree = open_tree_nofollow(m, &moved)) < 0)
			return moved ? cd_err_set(err, -CD_E_DENIED, MOVED_SOURCE, m->src)
			             : cd_err_sys(err, tree, "open bind source '%s'", m->src);
		*plain = 1;
		r = setattr(tree, attrs, -1);
	}
	if (r < 0) {
		close(tree);
		return cd_err_sys(err, r, "set mount flags on '%s'", m->src);
	}
	return tree;
}

int cd_idmap_open_trees(const struct cd_plan *p, int *fds, size_t nfds, unsigned *ret_idmapped,
                        unsigned *ret_plain, struct cd_err *err)
{
	unsigned idmapped = 0, nplain = 0;
	int userns, r = 0, plain = 0;
	size_t i;

	for (i = 0; i < nfds; i++)
		fds[i] = -1;
	userns = idmap_userns(p->host_uid, p->host_gid);
	if (userns < 0)
		return cd_err_sys(err, userns,
		                  "create the user namespace that idmaps the caller's trees");
	for (i = 0; i < p->nmounts && i < nfds; i++) {
		if (!cd_idmap_is_caller_tree(&p->mounts[i]))
			continue;
		r = open_one(&p->mounts[i], userns, &plain, err);
		if (r < 0)
			break;
		fds[i] = r;
		if (plain)
			nplain++;
		else
			idmapped++;
		r = 0;
	}
	close(userns);
	if (r < 0) {
		for (i = 0; i < nfds; i++) {
			if (fds[i] >= 0)
				close(fds[i]);
			fds[i] = -1;
		}
		return r;
	}
	*ret_idmapped = idmapped;
	*ret_plain = nplain;
	return 0;
}

int cd_idmap_creds_enter(const struct cd_plan *p, struct cd_idmap_creds *c)
{
	int n, r, l;

	memset(c, 0, sizeof *c);
	n = getgroups(0, NULL);
	if (n < 0)
		return -errno;
	c->groups = calloc((size_t)n + 1, sizeof *c->groups);
	if (!c->groups)
		return -ENOMEM;
	if ((c->ngroups = getgroups(n, c->groups)) < 0) {
		r = -errno;
		free(c->groups);
		c->groups = NULL;
		return r;
	}
	c->dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	c->active = 1;
	/* Raw system calls: glibc's wrappers would change every thread. */
	if (syscall(SYS_setgroups, 0, NULL) < 0 ||
	    syscall(SYS_setresgid, -1, p->host_gid, -1) < 0 ||
	    syscall(SYS_setresuid, -1, p->host_uid, -1) < 0) {
		r = -errno;
		l = cd_idmap_creds_leave(c);
		return l < 0 ? l : r;
	}
	return 0;
}

int cd_idmap_creds_leave(struct cd_idmap_creds *c)
{
	int r = 0;

	if (!c->active)
		return 0;
	c->active = 0;
	if (syscall(SYS_setresuid, -1, 0, -1) < 0 || syscall(SYS_setresgid, -1, 0, -1) < 0 ||
	    syscall(SYS_setgroups, (size_t)c->ngroups, c->groups) < 0)
		r = -errno;
	/* Changing the effective uid made us non-dumpable. */
	if (r == 0 && (c->dumpable == 0 || c->dumpable == 1) &&
	    prctl(PR_SET_DUMPABLE, c->dumpable, 0, 0, 0) < 0)
		r = -errno;
	free(c->groups);
	c->groups = NULL;
	return r;
}
