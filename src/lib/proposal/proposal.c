/* proposal.c — see proposal.h: scanning an overlay upper layer into a
 * change set (its new content copied into the proposal's store), and
 * choosing files to apply.
 *
 * Trust boundary: the upper layer is the sandboxed command's work.  It is
 * read through directory fds with O_NOFOLLOW everywhere; a name is any
 * byte string; types and xattrs are checked before anything is opened for
 * reading (no FIFO, device or symlink is ever opened).  Overlay metadata
 * cordon does not understand refuses the whole proposal (fail closed).
 * What reaches the host's disk is bounded: the content by max_bytes
 * (apparent sizes: a sparse file on the layer's tmpfs costs nothing there
 * but its full size here), the entries by CD_PROP_MAX_FILES, the diffs by
 * CD_PROP_DIFF_TOTAL. */
#include "proposal.h"

#include "util/bounds.h"
#include "util/buf.h"
#include "sandbox/profile.h"
#include "proposal-int.h"
#include "store/state.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

struct scan {
	struct cd_proposal *p;
	size_t cap;
	char path[4096]; /* relative path being built */
	size_t len;
	int storefd;          /* the store the new content is copied into */
	uint64_t stored, max; /* content bytes stored so far, and the cap */
	size_t diffs;         /* diff bytes kept so far */
	int fail;             /* why add_file failed: -ENOMEM or -CD_E_LIMIT */
	struct cd_err *err;
};

void cd_proposal_counts(const struct cd_proposal *p, size_t ret_counts[CD_PROP_NOPS],
                        size_t *ret_flagged)
{
	size_t i, fl = 0;

	memset(ret_counts, 0, CD_PROP_NOPS * sizeof *ret_counts);
	for (i = 0; i < p->nfiles; i++) {
		if ((unsigned)p->files[i].op < CD_PROP_NOPS)
			ret_counts[p->files[i].op]++;
		fl += p->files[i].flagged != 0;
	}
	if (ret_flagged)
		*ret_flagged = fl;
}

/* SHA-256 of an open regular file, as lower-case hex; *ret_binary (may be
 * NULL) says whether a NUL byte occurs in the first 8 KiB. */
int cd_prop_hash_fd(int fd, char out[65], uint64_t *ret_size, int *ret_binary)
{
	crypto_hash_sha256_state st;
	unsigned char buf[65536], h[crypto_hash_sha256_BYTES];
	uint64_t total = 0;
	ssize_t n;
	int bin = 0;

	crypto_hash_sha256_init(&st);
	while ((n = read(fd, buf, sizeof buf)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (total < 8192 && memchr(buf, 0, (size_t)n < 8192 ? (size_t)n : 8192))
			bin = 1;
		crypto_hash_sha256_update(&st, buf, (size_t)n);
		total += (uint64_t)n;
	}
	crypto_hash_sha256_final(&st, h);
	sodium_bin2hex(out, 65, h, sizeof h);
	if (ret_size)
		*ret_size = total;
	if (ret_binary)
		*ret_binary = bin;
	return 0;
}

/* Open a regular file below dirfd for reading, never following a symlink
 * and never opening anything else (O_PATH first, then reopen). */
int cd_prop_open_regular(int dirfd, const char *name, struct stat *ret_st)
{
	int pfd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC), fd;
	char proc[64];
	struct stat st;

	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(pfd);
		return -EINVAL;
	}
	if (snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd) >= (int)sizeof proc) {
		close(pfd);
		return -ENAMETOOLONG;
	}
	fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0 && errno == ELOOP)
		fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
	close(pfd);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (ret_st)
		*ret_st = st;
	return fd;
}

/* Overlay metadata on an upper entry: 1 opaque directory, 0 nothing that
 * matters, -CD_E_CORRUPT for a feature cordon does not understand
 * (redirects, metacopy, data-only whiteouts). */
static int overlay_xattrs(int fd, struct scan *sc)
{
	char names[4096], val[8];
	ssize_t n = flistxattr(fd, names, sizeof names), v;
	size_t i = 0;
	int opaque = 0;

	if (n < 0) {
		if (errno == ENOTSUP)
			return 0;
		return cd_err_sys(sc->err, -errno, "read attributes of '%.*s'", (int)sc->len,
		                  sc->path);
	}
	while (i < (size_t)n) {
		const char *nm = names + i;
		size_t l = strnlen(nm, (size_t)n - i);

		i += l + 1;
		if (strncmp(nm, "user.overlay.", 13) != 0 &&
		    strncmp(nm, "trusted.overlay.", 16) != 0)
			continue;
		nm += nm[0] == 'u' ? 13 : 16; /* past "user.overlay." / "trusted.overlay." */
		if (!strcmp(nm, "origin") || !strcmp(nm, "impure") || !strcmp(nm, "uuid") ||
		    !strcmp(nm, "nlink") || !strcmp(nm, "protattr"))
			continue;
		if (!strcmp(nm, "opaque")) {
			/* "y": opaque; anything else ("x": data-only whiteouts
			 * below) is a feature proposals do not handle. */
			v = fgetxattr(fd, names + i - l - 1, val, sizeof val);
			if (v == 1 && val[0] == 'y') {
				opaque = 1;
				continue;
			}
		}
		return cd_err_set(sc->err, -CD_E_CORRUPT,
		                  "the upper layer uses overlay feature '%.32s' (at '%.*s'), which "
		                  "proposals do not understand: refused",
		                  nm, (int)(sc->len > 200 ? 200 : sc->len), sc->path);
	}
	return opaque;
}

static int path_push(struct scan *sc, const char *name, size_t *ret_old)
{
	size_t nl = strlen(name), need = sc->len + (sc->len ? 1 : 0) + nl;

	if (need >= sizeof sc->path)
		return cd_err_set(sc->err, -CD_E_LIMIT, "a path in the change set is too long");
	*ret_old = sc->len;
	if (sc->len)
		sc->path[sc->len++] = '/';
	memcpy(sc->path + sc->len, name, nl + 1);
	sc->len += nl;
	return 0;
}

static void path_pop(struct scan *sc, size_t old)
{
	sc->len = old;
	sc->path[old] = '\0';
}

static int comp_in(const char *c, size_t cl, const char *const *names)
{
	size_t i;

	for (i = 0; names[i]; i++) {
		if (strlen(names[i]) == cl && memcmp(c, names[i], cl) == 0)
			return 1;
	}
	return 0;
}

/* Any component a host-run name (.git itself, a file or a directory,
 * .gitmodules, .gitattributes, .envrc ...), or a git control path below
 * a .git (its config and hooks, a submodule's under .git/modules). */
static int host_run_path(const char *path, size_t len)
{
	size_t at = 0, cl;
	int in_git = 0;

	while (at < len) {
		const char *c = path + at, *slash = memchr(c, '/', len - at);

		cl = slash ? (size_t)(slash - c) : len - at;
		if (in_git && comp_in(c, cl, cd_git_control_names))
			return 1;
		if (cl == 4 && memcmp(c, ".git", 4) == 0) {
			if (!slash)
				return 1;
			in_git = 1;
		} else if (cl > 4 && memcmp(c + cl - 4, ".git", 4) == 0) {
			return 1; /* x.git: a bare repository by its usual name */
		} else if ((comp_in(c, cl, cd_host_run_names) ||
		            comp_in(c, cl, cd_host_reported_names)) &&
		           (cl != 4 || !in_git)) {
			return 1;
		}
		at += cl + 1;
	}
	/* a host-run path at any depth, or a path below one (.yarn/releases/) */
	for (at = 0; at < len; at++) {
		size_t i, pl;

		if (at && path[at - 1] != '/')
			continue;
		for (i = 0; cd_host_run_paths[i]; i++) {
			pl = strlen(cd_host_run_paths[i]);
			if (len - at >= pl && !memcmp(path + at, cd_host_run_paths[i], pl) &&
			    (len - at == pl || path[at + pl] == '/'))
				return 1;
		}
	}
	return 0;
}

/* Would this path run later on the host?  A protected entry at the top or
 * at any depth (nested repositories, dot files in subdirectories). */
int cd_prop_flagged(const char *path, size_t len)
{
	size_t i, at;

	if (host_run_path(path, len))
		return 1;
	for (at = 0; at < len; at++) {
		if (at && path[at - 1] != '/')
			continue;
		for (i = 0; cd_protected_workspace_paths[i]; i++) {
			const char *pp = cd_protected_workspace_paths[i];
			size_t pl = strlen(pp);
			if (len - at >= pl && memcmp(path + at, pp, pl) == 0 &&
			    (len - at == pl || path[at + pl] == '/'))
				return 1;
		}
	}
	return 0;
}

static struct cd_prop_file *add_file(struct scan *sc, enum cd_prop_op op, const char *note)
{
	struct cd_proposal *p = sc->p;
	struct cd_prop_file *f;

	if (p->nfiles >= CD_PROP_MAX_FILES) {
		sc->fail = cd_err_set(sc->err, -CD_E_LIMIT,
		                      "more than %d changed files and directories: more than a "
		                      "proposal may hold",
		                      CD_PROP_MAX_FILES);
		return NULL;
	}
	if (p->nfiles == sc->cap) {
		size_t nc = sc->cap ? sc->cap * 2 : 64;
		struct cd_prop_file *v = realloc(p->files, nc * sizeof *v);
		if (!v) {
			sc->fail = cd_err_set(sc->err, -ENOMEM, "out of memory");
			return NULL;
		}
		p->files = v;
		sc->cap = nc;
	}
	f = &p->files[p->nfiles];
	memset(f, 0, sizeof *f);
	f->path = malloc(sc->len + 1);
	f->note = note ? strdup(note) : NULL;
	if (!f->path || (note && !f->note)) {
		free(f->path);
		free(f->note);
		sc->fail = cd_err_set(sc->err, -ENOMEM, "out of memory");
		return NULL;
	}
	memcpy(f->path, sc->path, sc->len + 1);
	f->path_len = sc->len;
	f->op = op;
	f->flagged = cd_prop_flagged(f->path, f->path_len);
	p->nfiles++;
	return f;
}

static int refuse(struct scan *sc, const char *why)
{
	return add_file(sc, CD_PROP_REFUSED, why) ? 0 : sc->fail;
}

/* A directory created (its mode) or removed (its base mode).  Only the
 * permission bits and the sticky bit: setuid/setgid on a directory are
 * inherited from its parent where it is applied, never copied. */
static int emit_dir(struct scan *sc, enum cd_prop_op op, unsigned mode)
{
	struct cd_prop_file *f = add_file(sc, op, NULL);

	if (!f)
		return sc->fail;
	if (op == CD_PROP_MKDIR)
		f->new_mode = mode & 01777;
	else
		f->base_mode = mode & 01777;
	return 0;
}

/* Read a whole (small, already size-checked) file from offset 0. */
static int slurp(int fd, struct cd_buf *b)
{
	char chunk[16384];
	ssize_t n;

	if (fd < 0)
		return 0;
	if (lseek(fd, 0, SEEK_SET) != 0)
		return -errno;
	while ((n = read(fd, chunk, sizeof chunk)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (cd_buf_append(b, chunk, (size_t)n) < 0)
			return -CD_E_LIMIT;
	}
	return 0;
}

/* The unified diff of a text file, computed in process (proposal-diff.c);
 * old_fd or new_fd is -1 for an added or deleted file.  Past the
 * proposal's diff budget the file gets none. */
static int diff_one(struct scan *sc, struct cd_prop_file *f, int old_fd, int new_fd)
{
	struct cd_buf lab_a, lab_b, ta, tb, out;
	int r;

	cd_buf_init(&lab_a, 8192);
	cd_buf_init(&lab_b, 8192);
	cd_buf_init(&ta, CD_PROP_DIFF_INPUT + 1);
	cd_buf_init(&tb, CD_PROP_DIFF_INPUT + 1);
	cd_buf_init(&out, CD_PROP_DIFF_MAX);
	/* Labels escaped: a newline in a name must not forge diff lines. */
	if (cd_buf_puts(&lab_a, old_fd >= 0 ? "a/" : "/dev/null") < 0 ||
	    (old_fd >= 0 && cd_buf_escape(&lab_a, f->path, f->path_len) < 0) ||
	    cd_buf_puts(&lab_b, new_fd >= 0 ? "b/" : "/dev/null") < 0 ||
	    (new_fd >= 0 && cd_buf_escape(&lab_b, f->path, f->path_len) < 0)) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = slurp(old_fd, &ta)) < 0 || (r = slurp(new_fd, &tb)) < 0)
		goto out;
	r = cd_prop_diff(ta.data ? ta.data : "", ta.len, tb.data ? tb.data : "", tb.len, lab_a.data,
	                 lab_b.data, &out);
	if (r == 0 && out.len && out.len <= CD_PROP_DIFF_TOTAL - sc->diffs) {
		sc->diffs += out.len;
		f->diff_len = out.len;
		f->diff = cd_buf_take(&out);
		if (!f->diff)
			r = -ENOMEM;
	}
out:
	cd_buf_release(&lab_a);
	cd_buf_release(&lab_b);
	cd_buf_release(&ta);
	cd_buf_release(&tb);
	cd_buf_release(&out);
	/* A missing diff (too large) is not an error: show says "no diff". */
	return r == -ENOMEM ? r : 0;
}

/* A DIR over a copy of directory fd `fd` (the caller keeps its own), or
 * NULL with errno set. */
static DIR *dir_copy(int fd)
{
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3), e;
	DIR *d;

	if (dfd < 0)
		return NULL;
	if (!(d = fdopendir(dfd))) {
		e = errno;
		close(dfd);
		errno = e;
	}
	return d;
}

/* Hash a lower file for a deletion. */
static int emit_delete(struct scan *sc, int lofd, const char *name)
{
	struct cd_prop_file *f;
	struct stat st;
	uint64_t size = 0;
	int fd = cd_prop_open_regular(lofd, name, &st), bin = 0, r;

	if (fd < 0)
		return refuse(sc, "would delete a symlink or special file");
	f = add_file(sc, CD_PROP_DELETED, NULL);
	if (!f) {
		close(fd);
		return sc->fail;
	}
	f->base_mode = st.st_mode & 07777;
	r = cd_prop_hash_fd(fd, f->base_sha256, &size, &bin);
	if (r == 0 && !bin && size <= CD_PROP_DIFF_INPUT && lseek(fd, 0, SEEK_SET) == 0)
		r = diff_one(sc, f, fd, -1);
	close(fd);
	if (r < 0)
		return cd_err_sys(sc->err, r, "read '%.*s'", (int)sc->len, sc->path);
	return 0;
}

static int delete_dir(struct scan *sc, int lofd, const char *name, unsigned mode, unsigned depth);

/* Everything below lower directory `lofd` is deleted. */
static int delete_tree(struct scan *sc, int lofd, unsigned depth)
{
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (depth > CD_PROP_MAX_DEPTH)
		return cd_err_set(sc->err, -CD_E_LIMIT, "directories nested too deep");
	if (!(d = dir_copy(lofd)))
		return cd_err_sys(sc->err, -errno, "read directory '%.*s'", (int)sc->len, sc->path);
	while (r == 0 && (de = readdir(d))) {
		struct stat st;
		size_t old;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((r = path_push(sc, de->d_name, &old)) < 0)
			break;
		if (fstatat(lofd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = cd_err_sys(sc->err, -errno, "stat '%.*s'", (int)sc->len, sc->path);
		} else if (S_ISDIR(st.st_mode)) {
			r = delete_dir(sc, lofd, de->d_name, st.st_mode, depth + 1);
		} else {
			r = emit_delete(sc, lofd, de->d_name);
		}
		path_pop(sc, old);
	}
	closedir(d);
	return r;
}

/* Lower directory lofd/name is removed, with everything in it. */
static int delete_dir(struct scan *sc, int lofd, const char *name, unsigned mode, unsigned depth)
{
	int sub, r;

	if ((r = emit_dir(sc, CD_PROP_RMDIR, mode)) < 0)
		return r;
	sub = openat(lofd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0)
		return cd_err_sys(sc->err, -errno, "open '%.*s'", (int)sc->len, sc->path);
	r = delete_tree(sc, sub, depth);
	close(sub);
	return r;
}

/* Copy an upper file's content into the store at the path being scanned,
 * hashing it on the way: it must be what was hashed before. */
static int store_copy(struct scan *sc, int ufd, const char *sha)
{
	crypto_hash_sha256_state st;
	unsigned char buf[65536], h[crypto_hash_sha256_BYTES];
	char hex[65];
	const char *name;
	ssize_t n;
	int pfd, out, r = 0;

	pfd = cd_prop_open_parent(sc->storefd, sc->path, 1, &name);
	if (pfd < 0)
		return pfd;
	out = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		r = -errno;
		close(pfd);
		return r;
	}
	crypto_hash_sha256_init(&st);
	if (lseek(ufd, 0, SEEK_SET) != 0)
		r = -errno;
	while (r == 0 && (n = read(ufd, buf, sizeof buf)) != 0) {
		if (n < 0) {
			if (errno != EINTR)
				r = -errno;
			continue;
		}
		crypto_hash_sha256_update(&st, buf, (size_t)n);
		r = cd_write_all(out, buf, (size_t)n);
	}
	close(out);
	if (r == 0) {
		crypto_hash_sha256_final(&st, h);
		sodium_bin2hex(hex, sizeof hex, h, sizeof h);
		if (strcmp(hex, sha) != 0)
			r = -ESTALE;
	}
	if (r < 0)
		unlinkat(pfd, name, 0);
	close(pfd);
	return r;
}

/* An entry the command left unreadable to its owner (chmod 000): the
 * layer is cordon's alone once the run is over, so it is given the
 * owner's read (and search) bits back; the caller keeps the mode it
 * recorded before.  Never a symlink (checked, and nothing else writes the
 * layer any more). */
static int make_readable(int dirfd, const char *name, unsigned bits)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	return fchmodat(dirfd, name, (st.st_mode | bits) & 07777, 0) < 0 ? -errno : 0;
}

static int exists_in(int upfd, int lofd, const char *name)
{
	struct stat st;

	return fstatat(upfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
	       (lofd >= 0 && fstatat(lofd, name, &st, AT_SYMLINK_NOFOLLOW) == 0);
}

/* A HEAD, config, commondir or packed-refs in a directory that is a git
 * directory in the proposed tree (git's rule: HEAD, and objects or
 * commondir, in either layer; a whiteout counts, erring toward a flag),
 * whatever the directory is called. */
static int git_control_by_content(int upfd, int lofd, const char *name)
{
	static const char *const names[] = { "HEAD", "config", "commondir", "packed-refs", NULL };
	size_t i;

	for (i = 0; names[i] && strcmp(name, names[i]); i++)
		;
	return names[i] && exists_in(upfd, lofd, "HEAD") &&
	       (exists_in(upfd, lofd, "objects") || exists_in(upfd, lofd, "commondir"));
}

/* A file in hooks/ or info/ of a git directory by git's rule (as above),
 * whatever that directory is called: hooks run on the host's next commit
 * or push, info/attributes selects filters.  `path` (len bytes) is the
 * file's relative path; upfd and lofd are its directory in each layer. */
static int git_hook_by_content(int upfd, int lofd, const char *path, size_t len)
{
	const char *end = memrchr(path, '/', len), *start;
	size_t dl;
	int pu, pl = -1, r;

	if (!end)
		return 0;
	for (start = end; start > path && start[-1] != '/'; start--)
		;
	dl = (size_t)(end - start);
	if (!((dl == 5 && !memcmp(start, "hooks", 5)) || (dl == 4 && !memcmp(start, "info", 4))))
		return 0;
	pu = openat(upfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pu < 0)
		return 1; /* unknown: err toward a flag */
	if (lofd >= 0)
		pl = openat(lofd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = exists_in(pu, pl, "HEAD") &&
	    (exists_in(pu, pl, "objects") || exists_in(pu, pl, "commondir"));
	close(pu);
	if (pl >= 0)
		close(pl);
	return r;
}

/* A regular file in the upper layer: added, modified, or unchanged. */
static int upper_file(struct scan *sc, int upfd, int lofd, const char *name)
{
	struct cd_prop_file *f;
	struct stat ust, lst;
	uint64_t usize = 0, lsize = 0;
	int ufd, lfd = -1, r, ubin = 0, lbin = 0, have_lower = 0;
	char lsha[65];

	ufd = cd_prop_open_regular(upfd, name, &ust);
	if (ufd == -EACCES && fstatat(upfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0 &&
	    make_readable(upfd, name, 0400) == 0) {
		ufd = cd_prop_open_regular(upfd, name, &ust);
		ust.st_mode = lst.st_mode; /* the mode the command gave it */
	}
	if (ufd < 0)
		return cd_err_sys(sc->err, ufd, "open '%.*s' in the upper layer", (int)sc->len,
		                  sc->path);
	if ((r = overlay_xattrs(ufd, sc)) < 0)
		goto out;
	if (ust.st_mode & (S_ISUID | S_ISGID)) {
		r = refuse(sc, "setuid or setgid bit");
		goto out;
	}
	/* Checked before anything is read: a sparse file of any apparent
	 * size costs nothing on the layer's tmpfs. */
	if ((uint64_t)ust.st_size > sc->max - sc->stored) {
		char why[160];
		snprintf(why, sizeof why,
		         "%llu bytes: more than the %llu bytes the proposal may still store "
		         "(its cap is %llu; a sparse file?)",
		         (unsigned long long)ust.st_size,
		         (unsigned long long)(sc->max - sc->stored), (unsigned long long)sc->max);
		r = refuse(sc, why);
		goto out;
	}
	if (lofd >= 0 && fstatat(lofd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(lst.st_mode)) {
			r = refuse(sc, "replaces a directory with a file");
			goto out;
		}
		if (!S_ISREG(lst.st_mode)) {
			r = refuse(sc, "replaces a symlink or special file");
			goto out;
		}
		lfd = cd_prop_open_regular(lofd, name, &lst);
		if (lfd < 0) {
			r = cd_err_sys(sc->err, lfd, "open '%.*s'", (int)sc->len, sc->path);
			goto out;
		}
		if ((r = cd_prop_hash_fd(lfd, lsha, &lsize, &lbin)) < 0) {
			r = cd_err_sys(sc->err, r, "read '%.*s'", (int)sc->len, sc->path);
			goto out;
		}
		have_lower = 1;
	} else if (lofd >= 0 && errno != ENOENT) {
		r = cd_err_sys(sc->err, -errno, "stat '%.*s'", (int)sc->len, sc->path);
		goto out;
	}
	f = add_file(sc, have_lower ? CD_PROP_MODIFIED : CD_PROP_ADDED, NULL);
	if (!f) {
		r = sc->fail;
		goto out;
	}
	f->flagged |= git_control_by_content(upfd, lofd, name) ||
	              git_hook_by_content(upfd, lofd, sc->path, sc->len);
	f->new_mode = ust.st_mode & 07777;
	if ((r = cd_prop_hash_fd(ufd, f->new_sha256, &usize, &ubin)) < 0) {
		r = cd_err_sys(sc->err, r, "read '%.*s' in the upper layer", (int)sc->len,
		               sc->path);
		goto out;
	}
	if (have_lower) {
		memcpy(f->base_sha256, lsha, sizeof lsha);
		f->base_mode = lst.st_mode & 07777;
		if (!strcmp(f->base_sha256, f->new_sha256) && f->base_mode == f->new_mode) {
			/* Copied up but unchanged (touch, open for write). */
			cd_prop_file_release(f);
			sc->p->nfiles--;
			r = 0;
			goto out;
		}
	}
	if ((r = store_copy(sc, ufd, f->new_sha256)) < 0) {
		r = cd_err_sys(sc->err, r, "store '%.*s' in the proposal", (int)sc->len, sc->path);
		goto out;
	}
	sc->stored += usize;
	if (!ubin && !lbin && usize <= CD_PROP_DIFF_INPUT && lsize <= CD_PROP_DIFF_INPUT &&
	    strcmp(f->base_sha256, f->new_sha256) != 0 && lseek(ufd, 0, SEEK_SET) == 0 &&
	    (lfd < 0 || lseek(lfd, 0, SEEK_SET) == 0))
		r = diff_one(sc, f, lfd, ufd);
out:
	close(ufd);
	if (lfd >= 0)
		close(lfd);
	return r;
}

static int walk(struct scan *sc, int upfd, int lofd, int opaque, unsigned depth);

static int upper_entry(struct scan *sc, int upfd, int lofd, int opaque, const char *name,
                       unsigned depth)
{
	struct stat st, lst;
	int have_lower, r = 0;

	if (fstatat(upfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return cd_err_sys(sc->err, -errno, "stat '%.*s' in the upper layer", (int)sc->len,
		                  sc->path);
	have_lower = lofd >= 0 && fstatat(lofd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0;
	if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) {
		/* A whiteout: the lower entry is deleted. */
		if (!have_lower)
			return 0;
		if (S_ISDIR(lst.st_mode))
			return delete_dir(sc, lofd, name, lst.st_mode, depth + 1);
		return emit_delete(sc, lofd, name);
	}
	if (S_ISREG(st.st_mode))
		return upper_file(sc, upfd, lofd, name);
	if (S_ISLNK(st.st_mode))
		return refuse(sc, "symlink");
	if (!S_ISDIR(st.st_mode))
		return refuse(sc, "special file");
	if (have_lower && !S_ISDIR(lst.st_mode))
		return refuse(sc, "replaces a file with a directory");
	if (!have_lower && (r = emit_dir(sc, CD_PROP_MKDIR, st.st_mode)) < 0)
		return r;
	{
		int usub = openat(upfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int lsub = -1, op;

		if (usub < 0 && errno == EACCES && make_readable(upfd, name, 0500) == 0)
			usub = openat(upfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (usub < 0)
			return cd_err_sys(sc->err, -errno, "open '%.*s' in the upper layer",
			                  (int)sc->len, sc->path);
		if ((op = overlay_xattrs(usub, sc)) < 0) {
			close(usub);
			return op;
		}
		if (have_lower) {
			lsub = openat(lofd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (lsub < 0) {
				close(usub);
				return cd_err_sys(sc->err, -errno, "open '%.*s'", (int)sc->len,
				                  sc->path);
			}
		}
		r = walk(sc, usub, lsub, opaque || op == 1, depth + 1);
		close(usub);
		if (lsub >= 0)
			close(lsub);
	}
	return r;
}

/* One directory of the upper layer, with its lower counterpart (or -1).
 * In an opaque directory (and below it) the lower entries are hidden: those
 * the upper layer lacks are deleted. */
static int walk(struct scan *sc, int upfd, int lofd, int opaque, unsigned depth)
{
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (depth > CD_PROP_MAX_DEPTH)
		return cd_err_set(sc->err, -CD_E_LIMIT, "directories nested too deep");
	if (!(d = dir_copy(upfd)))
		return cd_err_sys(sc->err, -errno, "read the upper layer");
	while (r == 0 && (de = readdir(d))) {
		size_t old;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((r = path_push(sc, de->d_name, &old)) < 0)
			break;
		r = upper_entry(sc, upfd, lofd, opaque, de->d_name, depth);
		path_pop(sc, old);
	}
	closedir(d);
	if (r < 0 || !opaque || lofd < 0)
		return r;
	/* Opaque: lower entries with no upper counterpart are gone. */
	if (!(d = dir_copy(lofd)))
		return cd_err_sys(sc->err, -errno, "read directory '%.*s'", (int)sc->len, sc->path);
	while (r == 0 && (de = readdir(d))) {
		struct stat st;
		size_t old;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(upfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		if ((r = path_push(sc, de->d_name, &old)) < 0)
			break;
		if (fstatat(lofd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode)) {
			r = delete_dir(sc, lofd, de->d_name, st.st_mode, depth + 1);
		} else {
			r = emit_delete(sc, lofd, de->d_name);
		}
		path_pop(sc, old);
	}
	closedir(d);
	return r;
}

static int cmp_file(const void *a, const void *b)
{
	const struct cd_prop_file *x = a, *y = b;
	size_t n = x->path_len < y->path_len ? x->path_len : y->path_len;
	int c = memcmp(x->path, y->path, n);

	if (c)
		return c;
	return x->path_len < y->path_len ? -1 : x->path_len > y->path_len;
}

void cd_prop_sort(struct cd_proposal *p)
{
	if (p->nfiles > 1)
		qsort(p->files, p->nfiles, sizeof *p->files, cmp_file);
}

int cd_proposal_scan(const struct cd_prop_scan_in *in, struct cd_proposal **ret, struct cd_err *err)
{
	struct scan sc;
	struct cd_proposal *p = calloc(1, sizeof *p);
	int upfd = -1, lofd = -1, made = 0, r;

	if (!p)
		return cd_err_set(err, -ENOMEM, "out of memory");
	memset(&sc, 0, sizeof sc);
	sc.p = p;
	sc.err = err;
	sc.storefd = -1;
	sc.max = in->max_bytes ? in->max_bytes : CD_PROPOSE_SIZE_MAX;
	cd_state_random_id("pr-", p->id, sizeof p->id);
	snprintf(p->run_id, sizeof p->run_id, "%s", in->run_id ? in->run_id : "");
	p->created = in->now;
	memcpy(p->status, "pending", 8);
	p->tree = strdup(in->tree);
	p->upper = strdup(in->store);
	p->agent = in->agent ? strdup(in->agent) : NULL;
	p->task = in->task ? strdup(in->task) : NULL;
	if (!p->tree || !p->upper || (in->agent && !p->agent) || (in->task && !p->task)) {
		r = cd_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	/* A fresh open of it: walk reads it from the start. */
	upfd = openat(in->upper_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (upfd < 0) {
		r = cd_err_sys(err, -errno, "the upper layer");
		goto fail;
	}
	lofd = open(in->tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lofd < 0) {
		r = cd_err_sys(err, -errno, "tree '%s'", in->tree);
		goto fail;
	}
	if (mkdir(in->store, 0700) < 0) {
		r = cd_err_sys(err, -errno, "the proposal's store '%s'", in->store);
		goto fail;
	}
	made = 1;
	sc.storefd = open(in->store, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sc.storefd < 0) {
		r = cd_err_sys(err, -errno, "the proposal's store '%s'", in->store);
		goto fail;
	}
	/* The store is written without fsyncs (a syncfs flushes the whole
	 * filesystem: 3 s on a busy disk).  A crash may tear it; apply then
	 * refuses the torn files, whose content no longer matches the
	 * recorded hashes. */
	if ((r = walk(&sc, upfd, lofd, 0, 0)) < 0)
		goto fail;
	cd_prop_flag_gitdirs(p, upfd, lofd);
	cd_prop_flag_git_named(p, &in->git);
	cd_prop_flag_path_dirs(p, in->path, in->git.home);
	cd_prop_flag_run_through(p, upfd, lofd);
	cd_prop_sort(p);
	close(upfd);
	close(lofd);
	close(sc.storefd);
	*ret = p;
	return 0;
fail:
	if (upfd >= 0)
		close(upfd);
	if (lofd >= 0)
		close(lofd);
	if (sc.storefd >= 0)
		close(sc.storefd);
	if (made)
		cd_prop_remove_tree(in->store);
	cd_proposal_free(p);
	return r;
}

static int name_in(const struct cd_prop_file *f, const char *const *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strlen(v[i]) == f->path_len && memcmp(v[i], f->path, f->path_len) == 0)
			return 1;
	}
	return 0;
}

int cd_proposal_select(struct cd_proposal *p, const char *const *paths, size_t npaths,
                       const char *const *accept, size_t naccept, struct cd_err *err)
{
	size_t i, j;

	for (j = 0; j < npaths + naccept; j++) {
		const char *want = j < npaths ? paths[j] : accept[j - npaths];
		for (i = 0; i < p->nfiles; i++) {
			if (name_in(&p->files[i], &want, 1))
				break;
		}
		if (i == p->nfiles)
			return cd_err_set(err, -ENOENT, "'%s' is not a file of proposal %s", want,
			                  p->id);
	}
	for (i = 0; i < p->nfiles; i++) {
		struct cd_prop_file *f = &p->files[i];

		f->selected = 0;
		f->problem[0] = '\0';
		if (f->applied)
			continue;
		if (paths && !name_in(f, paths, npaths))
			continue;
		if (f->op == CD_PROP_REFUSED) {
			snprintf(f->problem, sizeof f->problem, "refused: %s",
			         f->note ? f->note : "?");
			continue;
		}
		if (f->flagged && !name_in(f, accept, naccept)) {
			snprintf(f->problem, sizeof f->problem,
			         "flagged (would run on the host): not applied unless accepted "
			         "with --accept-flagged");
			continue;
		}
		f->selected = 1;
	}
	return 0;
}
