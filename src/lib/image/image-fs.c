/* image-fs.c — the image's names and the cache's files: entry paths made
 * relative and plain, symlink targets kept inside the root, directories
 * walked below a descriptor without following a link, trees removed, a
 * tree's identity hashed.
 *
 * Trust boundary: names are the image author's; the tree below the
 * descriptor is the one this process is unpacking (or the cache's, which
 * anything running as the caller could have changed: see tree_id). */
#include "image-int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cd_image_name_norm(const char *in, char *out, size_t cap, struct cd_err *err)
{
	size_t o = 0, n, depth = 0;
	const char *p = in, *e;

	if (in[0] == '/')
		return cd_err_set(err, -CD_E_DENIED, "entry '%.200s': an absolute path", in);
	if (strlen(in) >= CD_IMAGE_NAME_MAX || cap == 0)
		return cd_err_set(err, -CD_E_LIMIT, "entry '%.200s...': a path too long", in);
	while (*p) {
		e = strchr(p, '/');
		n = e ? (size_t)(e - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return cd_err_set(err, -CD_E_DENIED, "entry '%.200s': a '..' component",
			                  in);
		if (n && !(n == 1 && p[0] == '.')) {
			if (++depth > CD_IMAGE_DEPTH_MAX || o + n + 2 > cap)
				return cd_err_set(err, -CD_E_LIMIT, "entry '%.200s': too deep", in);
			if (o)
				out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
		while (*p == '/')
			p++;
	}
	out[o] = '\0';
	return 0;
}

int cd_image_link_inside(const char *at, const char *target)
{
	long depth = 0;
	const char *p, *e;
	size_t n;

	if (!target[0])
		return 0;
	if (target[0] != '/') {
		/* The link's own directory: every component of `at` but its last. */
		for (p = at; (e = strchr(p, '/')); p = e + 1)
			depth++;
	}
	for (p = target; *p; p += n) {
		while (*p == '/')
			p++;
		e = strchr(p, '/');
		n = e ? (size_t)(e - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return 0;
		} else if (n && !(n == 1 && p[0] == '.')) {
			depth++;
		}
	}
	return 1;
}

int cd_image_parent(int top, const char *path, uint64_t *made, int *ret_fd, const char **ret_leaf,
                    struct cd_err *err)
{
	char comp[256];
	const char *p = path, *e;
	int fd = openat(top, ".", O_PATH | O_DIRECTORY | O_CLOEXEC), nfd;
	size_t n;

	if (fd < 0)
		return cd_err_sys(err, -errno, "image root");
	while ((e = strchr(p, '/'))) {
		n = (size_t)(e - p);
		if (n >= sizeof comp) {
			close(fd);
			return cd_err_set(err, -CD_E_LIMIT, "entry '%.200s': a name too long",
			                  path);
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && made) {
			if (mkdirat(fd, comp, 0755) < 0 && errno != EEXIST) {
				int r = -errno;
				close(fd);
				return cd_err_sys(err, r, "entry '%.200s'", path);
			}
			(*made)++;
			nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0) {
			int r = errno;
			close(fd);
			if (r == ENOENT)
				return cd_err_set(err, -ENOENT, "entry '%.200s': '%s' is missing",
				                  path, comp);
			if (r == ELOOP || r == ENOTDIR)
				return cd_err_set(err, -CD_E_DENIED,
				                  "entry '%.200s': passes through "
				                  "'%s', a link or a file",
				                  path, comp);
			return cd_err_sys(err, -r, "entry '%.200s'", path);
		}
		close(fd);
		fd = nfd;
		p = e + 1;
	}
	*ret_fd = fd;
	*ret_leaf = p;
	return 0;
}

static int empty_fd(int dfd)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		close(dfd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (cd_image_remove(dirfd(d), de->d_name) < 0)
			r = -errno;
	}
	closedir(d);
	return r;
}

int cd_image_remove(int dirfd, const char *name)
{
	struct stat st;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) < 0 ? -errno : 0;
	/* Ours: made 0700 at least, but a tree someone chmodded is emptied too. */
	if (fchmodat(dirfd, name, 0700, 0) < 0 && errno != EPERM)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	empty_fd(fd);
	return unlinkat(dirfd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

int cd_image_empty_dir(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? 0 : -errno;
	return empty_fd(fd);
}

struct walk {
	crypto_hash_sha256_state h;
	uint64_t n;
	char path[CD_PATH_MAX];
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk_dir(struct walk *w, int dfd, size_t plen, unsigned depth, struct cd_err *err);

/* One entry: its line in the hash, then its children. */
static int walk_one(struct walk *w, int dfd, const char *name, size_t plen, unsigned depth,
                    struct cd_err *err)
{
	struct statx sx;
	char line[256], target[CD_PATH_MAX];
	size_t nl = strlen(name);
	ssize_t tn = 0;
	int n, fd, r = 0;

	if (plen + 1 + nl + 1 > sizeof w->path)
		return cd_err_set(err, -CD_E_LIMIT, "image cache: a path too long");
	w->path[plen] = '/';
	memcpy(w->path + plen + 1, name, nl + 1);
	if (statx(dfd, name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) < 0)
		return cd_err_sys(err, -errno, "image cache '%s'", w->path);
	if (S_ISLNK(sx.stx_mode) && (tn = readlinkat(dfd, name, target, sizeof target)) < 0)
		return cd_err_sys(err, -errno, "image cache '%s'", w->path);
	n = snprintf(line, sizeof line, "\n%o %llu %llu %u %lld.%u ", sx.stx_mode,
	             (unsigned long long)sx.stx_size, (unsigned long long)sx.stx_ino, sx.stx_nlink,
	             (long long)sx.stx_ctime.tv_sec, sx.stx_ctime.tv_nsec);
	crypto_hash_sha256_update(&w->h, (unsigned char *)w->path, plen + 1 + nl + 1);
	crypto_hash_sha256_update(&w->h, (unsigned char *)line, (size_t)n);
	crypto_hash_sha256_update(&w->h, (unsigned char *)target, (size_t)tn);
	w->n++;
	if (S_ISDIR(sx.stx_mode)) {
		if (depth >= CD_IMAGE_DEPTH_MAX + 2)
			return cd_err_set(err, -CD_E_LIMIT, "image cache: too deep");
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return cd_err_sys(err, -errno, "image cache '%s'", w->path);
		r = walk_dir(w, fd, plen + 1 + nl, depth + 1, err);
	}
	return r;
}

/* Takes dfd. */
static int walk_dir(struct walk *w, int dfd, size_t plen, unsigned depth, struct cd_err *err)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	char **names = NULL, **nn;
	size_t n = 0, cap = 0, i;
	int r = 0;

	if (!d) {
		close(dfd);
		return cd_err_sys(err, -errno, "image cache");
	}
	while (r == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			nn = realloc(names, cap * sizeof *names);
			if (!nn) {
				r = cd_err_set(err, -ENOMEM, "out of memory");
				break;
			}
			names = nn;
		}
		if (!(names[n] = strdup(de->d_name)))
			r = cd_err_set(err, -ENOMEM, "out of memory");
		else
			n++;
	}
	if (r == 0)
		qsort(names, n, sizeof *names, cmp_name);
	for (i = 0; i < n; i++) {
		if (r == 0)
			r = walk_one(w, dirfd(d), names[i], plen, depth, err);
		free(names[i]);
	}
	free(names);
	closedir(d);
	return r;
}

int cd_image_tree_id(int top, char out[72], uint64_t *ret_n, struct cd_err *err)
{
	struct walk *w = calloc(1, sizeof *w);
	unsigned char d[crypto_hash_sha256_BYTES];
	int fd, r;
	size_t i;

	if (!w)
		return cd_err_set(err, -ENOMEM, "out of memory");
	crypto_hash_sha256_init(&w->h);
	fd = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		free(w);
		return cd_err_sys(err, -errno, "image cache");
	}
	w->path[0] = '\0';
	r = walk_dir(w, fd, 0, 0, err);
	if (r == 0) {
		crypto_hash_sha256_final(&w->h, d);
		memcpy(out, "sha256:", 7);
		for (i = 0; i < sizeof d; i++)
			snprintf(out + 7 + 2 * i, 3, "%02x", d[i]);
		*ret_n = w->n;
	}
	free(w);
	return r;
}

/* ---- links resolved in the tree ---- */

#define HOPS_MAX 40

/* 1 when link target `target`, read from directory `dir` (relative to
 * top, "" the top, every component a directory), stays inside the top
 * with every link it passes through followed in the tree (an absolute
 * target from the top, as in the sandbox); 0 when a ".." climbs out;
 * -ELOOP past HOPS_MAX links, -ENAMETOOLONG past the buffers. */
static int resolve_inside(int top, const char *dir, const char *target)
{
	char cur[CD_PATH_MAX], rest[CD_PATH_MAX], lt[CD_PATH_MAX], cand[CD_PATH_MAX];
	unsigned hops = 0;
	struct stat sb;
	size_t n, cl;
	char *p, *e, *slash;
	ssize_t tn;

	if (snprintf(rest, sizeof rest, "%s", target) >= (int)sizeof rest)
		return -ENAMETOOLONG;
	snprintf(cur, sizeof cur, "%s", target[0] == '/' ? "" : dir);
	p = rest;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		n = e ? (size_t)(e - p) : strlen(p);
		if (n == 1 && p[0] == '.') {
			p += n;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (!cur[0])
				return 0;
			slash = strrchr(cur, '/');
			*(slash ? slash : cur) = '\0';
			p += n;
			continue;
		}
		cl = strlen(cur);
		if (cl + 1 + n + 1 > sizeof cand)
			return -ENAMETOOLONG;
		memcpy(cand, cur, cl);
		if (cl)
			cand[cl++] = '/';
		memcpy(cand + cl, p, n);
		cand[cl + n] = '\0';
		p += n;
		if (fstatat(top, cand, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode)) {
			if (++hops > HOPS_MAX)
				return -ELOOP;
			tn = readlinkat(top, cand, lt, sizeof lt - 1);
			if (tn <= 0)
				return 1;
			lt[tn] = '\0';
			/* The rest: the link's target, then what followed it. */
			n = strlen(p);
			if ((size_t)tn + 1 + n + 1 > sizeof cand)
				return -ENAMETOOLONG;
			memcpy(cand, lt, (size_t)tn);
			cand[tn] = '/';
			memcpy(cand + tn + 1, p, n + 1);
			memcpy(rest, cand, (size_t)tn + 1 + n + 1);
			p = rest;
			if (lt[0] == '/')
				cur[0] = '\0';
			continue;
		}
		/* A directory; or what is missing or a file, read lexically
		 * from here (stricter than the kernel, which stops there). */
		memcpy(cur, cand, strlen(cand) + 1);
	}
	return 1;
}

static int links_dir(int top, int dfd, char *path, size_t plen, unsigned depth, struct cd_err *err);

static int links_one(int top, int dfd, const char *name, char *path, size_t plen, unsigned depth,
                     struct cd_err *err)
{
	char target[CD_PATH_MAX];
	size_t nl = strlen(name);
	struct stat sb;
	ssize_t tn;
	int fd, r;

	if (plen + 1 + nl + 1 > CD_PATH_MAX)
		return cd_err_set(err, -CD_E_LIMIT, "image: a path too long");
	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return cd_err_sys(err, -errno, "image '%s/%s'", path, name);
	if (S_ISDIR(sb.st_mode)) {
		if (depth >= CD_IMAGE_DEPTH_MAX + 2)
			return cd_err_set(err, -CD_E_LIMIT, "image: too deep");
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return cd_err_sys(err, -errno, "image '%s/%s'", path, name);
		if (plen)
			path[plen++] = '/';
		memcpy(path + plen, name, nl + 1);
		r = links_dir(top, fd, path, plen + nl, depth + 1, err);
		path[plen ? plen - 1 : 0] = '\0';
		return r;
	}
	if (!S_ISLNK(sb.st_mode))
		return 0;
	if ((tn = readlinkat(dfd, name, target, sizeof target - 1)) < 0)
		return cd_err_sys(err, -errno, "image '%s/%s'", path, name);
	target[tn] = '\0';
	r = resolve_inside(top, path, target);
	if (r == 1)
		return 0;
	return cd_err_set(err, -CD_E_DENIED, "entry '%.200s%s%.200s': a link to '%.200s' %s", path,
	                  plen ? "/" : "", name, target,
	                  r == 0 ? "climbs out of the image through the links it passes"
	                         : "passes through too many links");
}

/* Takes dfd. */
static int links_dir(int top, int dfd, char *path, size_t plen, unsigned depth, struct cd_err *err)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		close(dfd);
		return cd_err_sys(err, -errno, "image");
	}
	while (r == 0 && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			r = links_one(top, dirfd(d), de->d_name, path, plen, depth, err);
	}
	closedir(d);
	return r;
}

int cd_image_links_check(int top, struct cd_err *err)
{
	char *path = malloc(CD_PATH_MAX);
	int fd = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	if (!path || fd < 0) {
		free(path);
		if (fd >= 0)
			close(fd);
		return cd_err_set(err, -ENOMEM, "image: out of memory or no root");
	}
	path[0] = '\0';
	r = links_dir(top, fd, path, 0, 0, err);
	free(path);
	return r;
}
