/* proposal-apply.c — applying a proposal to the real tree, one file at a
 * time, atomically, and never over a change made since the run.
 *
 * Trust boundary: the real tree may be changing under us (other people,
 * other agents' applied proposals) and the stored proposal may have been
 * edited by hand.  Every path is re-validated, resolved below the tree
 * with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, and every file's base is
 * checked twice: before anything is written (all files, so a refusal
 * names every stale one and changes nothing), and once more after the new
 * content has been swapped in with RENAME_EXCHANGE — the old content, now
 * under the temporary name, must still be the base, or the swap is
 * undone.  That closes the gap between check and write.  A new directory
 * is made with mkdir, which fails when one has appeared since the check;
 * a removed directory with rmdir, which fails when it is not empty. */
#include "proposal-int.h"

#include "store/state.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int cd_prop_path_ok(const char *path, size_t len)
{
	size_t i, start = 0;

	if (len == 0 || len >= 4096 || memchr(path, '\0', len) || path[0] == '/')
		return 0;
	for (i = 0; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		if (i == start || (i - start == 1 && path[start] == '.') ||
		    (i - start == 2 && path[start] == '.' && path[start + 1] == '.'))
			return 0;
		start = i + 1;
	}
	return 1;
}

static int beneath(int dirfd, const char *path, uint64_t flags)
{
	struct open_how how;

	memset(&how, 0, sizeof how);
	how.flags = flags;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

int cd_prop_open_parent(int rootfd, const char *path, int create, const char **ret_name)
{
	const char *slash = strrchr(path, '/'), *p;
	char dir[4096];
	int fd, next;

	*ret_name = slash ? slash + 1 : path;
	if (!slash) {
		fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	if ((size_t)(slash - path) >= sizeof dir)
		return -ENAMETOOLONG;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	fd = beneath(rootfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 || errno != ENOENT || !create)
		return fd >= 0 ? fd : -errno;
	/* Create the missing directories one component at a time. */
	fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	for (p = dir; *p;) {
		const char *e = strchr(p, '/');
		char part[256];
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n >= sizeof part) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(part, p, n);
		part[n] = '\0';
		if (mkdirat(fd, part, 0755) < 0 && errno != EEXIST) {
			int e2 = errno;
			close(fd);
			return -e2;
		}
		next = beneath(fd, part, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return -errno;
		fd = next;
		p += n;
		if (*p == '/')
			p++;
	}
	return fd;
}

/* Hash dirfd/name: 1 and the hash and mode, 0 when absent, -EINVAL when
 * not a regular file, -errno otherwise. */
static int hash_at(int dirfd, const char *name, char out[65], unsigned *ret_mode)
{
	struct stat st;
	int fd = cd_prop_open_regular(dirfd, name, &st), r;

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	r = cd_prop_hash_fd(fd, out, NULL, NULL);
	close(fd);
	if (r < 0)
		return r;
	*ret_mode = st.st_mode & 07777;
	return 1;
}

static void problem(struct cd_prop_file *f, const char *what)
{
	snprintf(f->problem, sizeof f->problem, "%s", what);
}

/* A new directory must not exist yet (its parent may be missing: apply
 * makes it); a removed one must still be a directory. */
static int check_dir(int treefd, struct cd_prop_file *f)
{
	const char *name;
	struct stat st;
	int pfd = cd_prop_open_parent(treefd, f->path, 0, &name), r;

	if (pfd == -ENOENT && f->op == CD_PROP_MKDIR)
		return 1;
	if (pfd < 0) {
		problem(f, pfd == -ENOENT ? "missing now: its parent is gone since the run"
		                          : "its parent cannot be opened below the tree (a "
		                            "symlink or no access)");
		return 0;
	}
	r = fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	close(pfd);
	if (f->op == CD_PROP_MKDIR) {
		if (r != -ENOENT) {
			problem(f, "exists now: created since the run");
			return 0;
		}
		return 1;
	}
	if (r == -ENOENT) {
		problem(f, "missing now: deleted since the run");
		return 0;
	}
	if (r < 0 || !S_ISDIR(st.st_mode)) {
		problem(f, r < 0 ? "cannot be read" : "no longer a directory");
		return 0;
	}
	return 1;
}

int cd_prop_check_one(int treefd, int upfd, struct cd_prop_file *f)
{
	const char *name;
	char sha[65];
	unsigned mode = 0;
	int pfd, r;

	f->problem[0] = '\0';
	if (!cd_prop_path_ok(f->path, f->path_len)) {
		problem(f, "malformed path in the stored proposal");
		return 0;
	}
	if (f->op == CD_PROP_MKDIR || f->op == CD_PROP_RMDIR)
		return check_dir(treefd, f);
	if (f->op == CD_PROP_ADDED || f->op == CD_PROP_MODIFIED) {
		pfd = cd_prop_open_parent(upfd, f->path, 0, &name);
		r = pfd < 0 ? pfd : hash_at(pfd, name, sha, &mode);
		if (pfd >= 0)
			close(pfd);
		if (r <= 0 || strcmp(sha, f->new_sha256) != 0) {
			problem(f, "the proposed content is gone or changed since the run");
			return 0;
		}
	}
	pfd = cd_prop_open_parent(treefd, f->path, 0, &name);
	if (pfd == -ENOENT && f->op == CD_PROP_ADDED)
		return 1;
	if (pfd < 0) {
		problem(f, pfd == -ENOENT ? "its directory is gone since the run"
		                          : "its directory cannot be opened below the tree (a "
		                            "symlink or no access)");
		return 0;
	}
	r = hash_at(pfd, name, sha, &mode);
	close(pfd);
	if (f->op == CD_PROP_ADDED) {
		if (r != 0) {
			problem(f, "exists now: created since the run");
			return 0;
		}
		return 1;
	}
	if (r == 0) {
		problem(f, "missing now: deleted since the run");
		return 0;
	}
	if (r < 0) {
		problem(f, r == -EINVAL ? "no longer a regular file" : "cannot be read");
		return 0;
	}
	if (strcmp(sha, f->base_sha256) != 0) {
		problem(f, "changed since the run");
		return 0;
	}
	if (mode != f->base_mode) {
		problem(f, "mode changed since the run");
		return 0;
	}
	return 1;
}

static int open_roots(const struct cd_proposal *p, int *treefd, int *upfd, struct cd_err *err)
{
	*treefd = open(p->tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*treefd < 0)
		return cd_err_sys(err, -errno, "tree '%s'", p->tree);
	*upfd = open(p->upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*upfd < 0) {
		int r = cd_err_sys(err, -errno, "the proposal's layer '%s'", p->upper);
		close(*treefd);
		return r;
	}
	return 0;
}

int cd_proposal_check(struct cd_proposal *p, struct cd_err *err)
{
	int treefd, upfd, r;
	size_t i, bad = 0, sel = 0;

	if ((r = open_roots(p, &treefd, &upfd, err)) < 0)
		return r;
	for (i = 0; i < p->nfiles; i++) {
		if (!p->files[i].selected)
			continue;
		sel++;
		r = cd_prop_check_one(treefd, upfd, &p->files[i]);
		if (r < 0) {
			close(treefd);
			close(upfd);
			return cd_err_sys(err, r, "checking '%s'", p->files[i].path);
		}
		bad += r == 0;
	}
	close(treefd);
	close(upfd);
	if (bad)
		return cd_err_set(err, -ESTALE,
		                  "%zu of %zu files changed since the run: nothing applied", bad,
		                  sel);
	return 0;
}

static void temp_name(char out[64])
{
	char id[32];

	cd_state_random_id("", id, sizeof id);
	snprintf(out, 64, ".cordon-apply-%s", id);
}

/* The new content: copied from the upper layer into a temporary file next
 * to the target, hashed on the way (it must still be what was proposed),
 * given its mode, and made durable. */
static int write_temp(int upfd, int pfd, const struct cd_prop_file *f, const char *tmp)
{
	const char *uname;
	char sha[65], buf[65536];
	int upar = cd_prop_open_parent(upfd, f->path, 0, &uname), in, out, r = 0;
	ssize_t n;

	if (upar < 0)
		return upar;
	in = cd_prop_open_regular(upar, uname, NULL);
	close(upar);
	if (in < 0)
		return in;
	out = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		r = -errno;
		close(in);
		return r;
	}
	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (write(out, buf, (size_t)n) != n) {
			r = -EIO;
			break;
		}
	}
	if (r == 0 && (lseek(in, 0, SEEK_SET) != 0 || cd_prop_hash_fd(in, sha, NULL, NULL) < 0))
		r = -EIO;
	if (r == 0 && strcmp(sha, f->new_sha256) != 0)
		r = -ESTALE;
	if (r == 0 && fchmod(out, f->new_mode & 0777) < 0)
		r = -errno;
	close(in);
	close(out);
	if (r < 0)
		unlinkat(pfd, tmp, 0);
	return r;
}

/* The old content now at `tmp` must be the base; 1 when it is. */
static int old_is_base(int pfd, const char *tmp, const struct cd_prop_file *f)
{
	char sha[65];
	unsigned mode = 0;

	return hash_at(pfd, tmp, sha, &mode) == 1 && strcmp(sha, f->base_sha256) == 0 &&
	       mode == f->base_mode;
}

/* Phase one for a new or modified file: its new content, checked, under a
 * temporary name beside the target (made durable with one syncfs for all
 * files, not one fsync each). */
static int stage_one(int treefd, int upfd, struct cd_prop_file *f)
{
	const char *name;
	int pfd, r;

	pfd = cd_prop_open_parent(treefd, f->path, f->op == CD_PROP_ADDED, &name);
	if (pfd < 0) {
		problem(f, "its directory cannot be opened or created below the tree");
		return pfd;
	}
	temp_name(f->tmp);
	if ((r = write_temp(upfd, pfd, f, f->tmp)) < 0) {
		f->tmp[0] = '\0';
		problem(f, r == -ESTALE ? "the proposed content changed since the run"
		                        : "cannot write the new content beside it");
	}
	close(pfd);
	return r;
}

/* Phase two: one atomic rename per file, the old content checked once
 * more after it has left the name. */
static int swap_one(int treefd, struct cd_prop_file *f)
{
	const char *name;
	char tmp[64];
	int pfd, r = 0;

	pfd = cd_prop_open_parent(treefd, f->path, 0, &name);
	if (pfd < 0) {
		problem(f, "its directory is gone during apply");
		return pfd;
	}
	if (f->op == CD_PROP_DELETED) {
		temp_name(tmp);
		if (renameat2(pfd, name, pfd, tmp, RENAME_NOREPLACE) < 0) {
			r = -errno;
			problem(f, "cannot be moved aside for deletion");
		} else if (!old_is_base(pfd, tmp, f)) {
			r = -ESTALE;
			problem(f, "changed during apply: left in place");
			if (renameat2(pfd, tmp, pfd, name, RENAME_NOREPLACE) < 0)
				problem(f,
				        "changed during apply: kept as .cordon-apply-* beside it");
		} else if (unlinkat(pfd, tmp, 0) < 0) {
			r = -errno;
			problem(f, "cannot be deleted");
		}
		goto out;
	}
	if (f->op == CD_PROP_ADDED) {
		if (renameat2(pfd, f->tmp, pfd, name, RENAME_NOREPLACE) < 0) {
			r = -errno;
			problem(f, r == -EEXIST ? "exists now: created during apply"
			                        : "cannot be renamed into place");
		}
		goto out;
	}
	if (renameat2(pfd, f->tmp, pfd, name, RENAME_EXCHANGE) < 0) {
		r = -errno;
		problem(f, "cannot be swapped into place");
		goto out;
	}
	if (!old_is_base(pfd, f->tmp, f)) {
		r = -ESTALE;
		problem(f, "changed during apply: swapped back, left as it was");
		if (renameat2(pfd, f->tmp, pfd, name, RENAME_EXCHANGE) < 0)
			f->tmp[0] = '\0'; /* keep both: the human edit is at tmp */
		goto out;
	}
out:
	if (f->op != CD_PROP_DELETED && f->tmp[0] && (r < 0 || f->op == CD_PROP_MODIFIED))
		unlinkat(pfd, f->tmp, 0); /* the old content, or an unused copy */
	if (r == 0 || f->op != CD_PROP_DELETED)
		f->tmp[0] = '\0';
	close(pfd);
	if (r == 0)
		f->applied = 1;
	return r;
}

/* A new directory, parents first (the entries are sorted by path, and a
 * parent's path sorts before its children's): made 0700, so the files
 * can go in (and it is never more open than proposed); set_dir_mode gives
 * it its mode once everything is in. */
static int make_dir(int treefd, struct cd_prop_file *f)
{
	const char *name;
	int pfd, r = 0;

	pfd = cd_prop_open_parent(treefd, f->path, 1, &name);
	if (pfd < 0) {
		problem(f, "its parent cannot be opened or created below the tree");
		return pfd;
	}
	if (mkdirat(pfd, name, 0700) < 0) {
		r = errno == EEXIST ? -ESTALE : -errno;
		problem(f, r == -ESTALE ? "exists now: created during apply" : "cannot be created");
	}
	close(pfd);
	if (r == 0)
		f->applied = 1;
	return r;
}

/* The proposed mode of a directory made by this apply, children before
 * parents (a parent's 0500 must not stop its children's chmod). */
static int set_dir_mode(int treefd, struct cd_prop_file *f)
{
	const char *name;
	int pfd, fd, r = 0;

	pfd = cd_prop_open_parent(treefd, f->path, 0, &name);
	fd = pfd < 0 ? -1 : openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fchmod(fd, f->new_mode & 01777) < 0) {
		r = pfd < 0 ? pfd : -errno;
		problem(f, "made, but its mode cannot be set (left 0700)");
	}
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	return r;
}

/* A removed directory, after the files: rmdir refuses one that is not
 * empty (something added since the run, or a deletion not selected), and
 * never follows a symlink (ENOTDIR). */
static int remove_dir(int treefd, struct cd_prop_file *f)
{
	const char *name;
	int pfd, r = 0;

	pfd = cd_prop_open_parent(treefd, f->path, 0, &name);
	if (pfd < 0) {
		problem(f, "its parent is gone during apply");
		return pfd;
	}
	if (unlinkat(pfd, name, AT_REMOVEDIR) < 0) {
		r = errno == ENOTEMPTY || errno == EEXIST ? -ESTALE : -errno;
		problem(f, r == -ESTALE    ? "not empty (something in it was added since the run, "
		                             "or is not deleted): left in place"
		           : r == -ENOTDIR ? "no longer a directory: left in place"
		                           : "cannot be removed");
	}
	close(pfd);
	if (r == 0)
		f->applied = 1;
	return r;
}

/* Remove staged temporaries that never went in (after a failure). */
static void unstage(int treefd, struct cd_proposal *p)
{
	const char *name;
	size_t i;

	for (i = 0; i < p->nfiles; i++) {
		struct cd_prop_file *f = &p->files[i];
		int pfd;
		if (!f->tmp[0])
			continue;
		pfd = cd_prop_open_parent(treefd, f->path, 0, &name);
		if (pfd >= 0) {
			unlinkat(pfd, f->tmp, 0);
			close(pfd);
		}
		f->tmp[0] = '\0';
	}
}

int cd_proposal_apply(struct cd_proposal *p, struct cd_err *err)
{
	int treefd, upfd, r = 0;
	size_t i;

	if ((r = cd_proposal_check(p, err)) < 0)
		return r;
	if ((r = open_roots(p, &treefd, &upfd, err)) < 0)
		return r;
	for (i = 0; i < p->nfiles && r == 0; i++) {
		struct cd_prop_file *f = &p->files[i];
		f->tmp[0] = '\0';
		if (!f->selected || f->applied || f->op == CD_PROP_DELETED ||
		    f->op == CD_PROP_RMDIR)
			continue;
		if (f->op == CD_PROP_MKDIR) {
			if ((r = make_dir(treefd, f)) < 0)
				r = cd_err_sys(err, r, "making directory '%s': %s", f->path,
				               f->problem);
			continue;
		}
		if ((r = stage_one(treefd, upfd, f)) < 0)
			r = cd_err_sys(err, r, "staging '%s': %s", f->path, f->problem);
	}
	if (r == 0 && syncfs(treefd) < 0)
		r = cd_err_sys(err, -errno, "syncing the staged files");
	for (i = 0; i < p->nfiles && r == 0; i++) {
		struct cd_prop_file *f = &p->files[i];
		if (!f->selected || f->applied || f->op == CD_PROP_RMDIR)
			continue;
		if ((r = swap_one(treefd, f)) < 0)
			r = cd_err_sys(err, r, "applying '%s': %s", f->path, f->problem);
	}
	/* New directories get their modes, then removed ones go: children
	 * before parents in both. */
	for (i = p->nfiles; i-- > 0 && r == 0;) {
		struct cd_prop_file *f = &p->files[i];
		if (f->selected && f->applied && f->op == CD_PROP_MKDIR &&
		    (r = set_dir_mode(treefd, f)) < 0)
			r = cd_err_sys(err, r, "directory '%s': %s", f->path, f->problem);
	}
	for (i = p->nfiles; i-- > 0 && r == 0;) {
		struct cd_prop_file *f = &p->files[i];
		if (!f->selected || f->applied || f->op != CD_PROP_RMDIR)
			continue;
		if ((r = remove_dir(treefd, f)) < 0)
			r = cd_err_sys(err, r, "removing directory '%s': %s", f->path, f->problem);
	}
	unstage(treefd, p);
	if (syncfs(treefd) < 0 && r == 0)
		r = cd_err_sys(err, -errno, "syncing the tree");
	close(treefd);
	close(upfd);
	return r < 0 ? r : 0;
}

static int remove_at(int at, const char *name, unsigned depth)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int fd, r = 0;

	if (depth > CD_PROP_MAX_DEPTH + 4)
		return -CD_E_LIMIT;
	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(at, name, 0) < 0 ? -errno : 0;
	/* overlayfs leaves its work directory mode 000: make it readable. */
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES) {
		int pf = openat(at, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		char proc[64];
		if (pf >= 0) {
			snprintf(proc, sizeof proc, "/proc/self/fd/%d", pf);
			chmod(proc, 0700);
			close(pf);
		}
		fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while (r == 0 && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			r = remove_at(dirfd(d), de->d_name, depth + 1);
	}
	closedir(d);
	if (r == 0 && unlinkat(at, name, AT_REMOVEDIR) < 0)
		r = -errno;
	return r;
}

int cd_prop_remove_tree(const char *dir)
{
	return remove_at(AT_FDCWD, dir, 0);
}
