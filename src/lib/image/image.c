/* image.c — cd_image_open: an image file to its entry in the cache,
 * unpacked once, checked at every use (see image.h).
 *
 * Trust boundary: the image file is the author's; the cache directory is
 * the caller's own, so anything running as the caller could change an
 * entry.  The stamp (the digest and the tree's identity, MACed with a key
 * kept beside the cache) makes such a change visible: the entry is then
 * refused, never used, never repaired behind the caller's back.  Whoever
 * can read the key (the caller) could forge a stamp: the MAC tells a
 * changed tree from the one unpacked, not the caller from an intruder
 * running as the caller. */
#include "image-int.h"

#include "util/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STAMP_MAX (64 * 1024)

/* ---- reading the image's files from a directory ---- */

static int open_beneath(int dirfd, const char *name)
{
	/* O_NONBLOCK: a FIFO in place of a blob must not block (it is
	 * then refused: not a regular file). */
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
		                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
		                           RESOLVE_NO_MAGICLINKS };

	return (int)syscall(SYS_openat2, dirfd, name, &how, sizeof how);
}

static int read_fd(int fd, size_t cap, char **ret_buf, size_t *ret_len, const char *name,
                   struct cd_err *err)
{
	struct stat st;
	char *buf;
	size_t len = 0;
	ssize_t n;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return cd_err_set(err, -CD_E_PARSE, "'%s': not a regular file", name);
	if ((uint64_t)st.st_size > cap)
		return cd_err_set(err, -CD_E_LIMIT, "'%s': larger than %zu bytes", name, cap);
	if (!(buf = malloc(cap + 1)))
		return cd_err_set(err, -ENOMEM, "out of memory");
	while (len <= cap && (n = read(fd, buf + len, cap + 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return cd_err_sys(err, -errno, "'%s'", name);
		}
		len += (size_t)n;
	}
	if (len > cap) {
		free(buf);
		return cd_err_set(err, -CD_E_LIMIT, "'%s': larger than %zu bytes", name, cap);
	}
	buf[len] = '\0';
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

static int dir_get(void *ctx, const char *name, size_t cap, char **ret_buf, size_t *ret_len,
                   struct cd_err *err)
{
	int fd = open_beneath(*(int *)ctx, name), r;

	if (fd < 0)
		return errno == ENOENT ? -ENOENT
		                       : cd_err_sys(err, -errno, "'%s' (a link is refused)", name);
	r = read_fd(fd, cap, ret_buf, ret_len, name, err);
	close(fd);
	return r;
}

/* ---- the stamp ---- */

static int mac_key(int cache, unsigned char key[crypto_auth_hmacsha256_KEYBYTES],
                   struct cd_err *err)
{
	struct stat st;
	ssize_t n;
	int fd;

	/* Under CACHE/.lock: a second run never reads a key half written. */
	fd = openat(cache, ".mac-key", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT) {
		fd = openat(cache, ".mac-key", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		            0600);
		if (fd >= 0) {
			randombytes_buf(key, crypto_auth_hmacsha256_KEYBYTES);
			n = write(fd, key, crypto_auth_hmacsha256_KEYBYTES);
			close(fd);
			if (n != crypto_auth_hmacsha256_KEYBYTES)
				return cd_err_sys(err, -EIO, "image cache key");
			return 0;
		}
		if (errno == EEXIST)
			fd = openat(cache, ".mac-key", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return cd_err_sys(err, -errno, "image cache key");
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077) ||
	    read(fd, key, crypto_auth_hmacsha256_KEYBYTES) != crypto_auth_hmacsha256_KEYBYTES) {
		close(fd);
		return cd_err_set(err, -CD_E_CORRUPT,
		                  "image cache key .mac-key: not the caller's "
		                  "0600 file of %d bytes",
		                  crypto_auth_hmacsha256_KEYBYTES);
	}
	close(fd);
	return 0;
}

static void stamp_mac(const unsigned char *key, const char *ikey, const char *format,
                      const char *digest, const char *tree, char out[65])
{
	unsigned char m[crypto_auth_hmacsha256_BYTES];
	crypto_auth_hmacsha256_state st;
	size_t i;

	crypto_auth_hmacsha256_init(&st, key, crypto_auth_hmacsha256_KEYBYTES);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)"cordon-image-v1", 16);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)ikey, strlen(ikey) + 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)format, strlen(format) + 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)digest, strlen(digest) + 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)tree, strlen(tree) + 1);
	crypto_auth_hmacsha256_final(&st, m);
	for (i = 0; i < sizeof m; i++)
		snprintf(out + 2 * i, 3, "%02x", m[i]);
}

static int stamp_write(int tfd, int rfd, const unsigned char *key, const struct cd_image_desc *d,
                       const char *format, const struct cd_image_stats *s, struct cd_err *err)
{
	char tree[72], mac[65], *txt;
	uint64_t n;
	json_t *o;
	ssize_t w;
	int fd, r;

	if ((r = cd_image_tree_id(rfd, tree, &n, err)) < 0)
		return r;
	stamp_mac(key, d->key, format, d->digest, tree, mac);
	o = json_pack("{s:i,s:s,s:s,s:s,s:s,s:I,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I},s:s}", "version", 1,
	              "key", d->key, "format", format, "digest", d->digest, "tree", tree,
	              "tree_entries", (json_int_t)n, "unpack", "entries", (json_int_t)s->entries,
	              "bytes", (json_int_t)s->bytes, "setid_dropped", (json_int_t)s->setid,
	              "xattrs_dropped", (json_int_t)s->xattrs, "capabilities_dropped",
	              (json_int_t)s->caps, "skipped", (json_int_t)s->skipped, "whiteouts",
	              (json_int_t)s->whiteouts, "mac", mac);
	txt = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	if (!txt)
		return cd_err_set(err, -ENOMEM, "out of memory");
	fd = openat(tfd, "stamp", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	w = fd < 0 ? -1 : write(fd, txt, strlen(txt));
	r = (fd < 0 || w != (ssize_t)strlen(txt) || fsync(fd) < 0)
	            ? cd_err_sys(err, -errno, "image cache stamp")
	            : 0;
	if (fd >= 0)
		close(fd);
	free(txt);
	return r;
}

#define TAMPERED                                                                                   \
	"image cache entry %s/%s is not what was unpacked (%s): remove it to unpack the image "    \
	"again"

/* The entry KEY checked against its stamp: 0 (and *ret filled), -ENOENT
 * when there is none, -CD_E_CORRUPT when it differs. */
static int entry_check(int cfd, const char *cdir, const unsigned char *key,
                       const struct cd_image_desc *d, struct cd_image *ret, struct cd_err *err)
{
	char *buf = NULL, tree[72], mac[65];
	const char *fmt, *dg, *tr, *mc, *k;
	size_t len;
	uint64_t n;
	json_t *o = NULL;
	int efd, rfd = -1, fd, r;

	efd = openat(cfd, d->key, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (efd < 0)
		return errno == ENOENT ? -ENOENT
		                       : cd_err_sys(err, -errno, "image cache %s", d->key);
	fd = openat(efd, "stamp", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || read_fd(fd, STAMP_MAX, &buf, &len, "stamp", NULL) < 0 ||
	    !(o = json_loadb(buf, len, 0, NULL))) {
		r = cd_err_set(err, -CD_E_CORRUPT, TAMPERED, cdir, d->key, "no readable stamp");
		goto out;
	}
	k = json_string_value(json_object_get(o, "key"));
	fmt = json_string_value(json_object_get(o, "format"));
	dg = json_string_value(json_object_get(o, "digest"));
	tr = json_string_value(json_object_get(o, "tree"));
	mc = json_string_value(json_object_get(o, "mac"));
	if (!k || !fmt || !dg || !tr || !mc || strcmp(k, d->key) || strcmp(dg, d->digest) ||
	    strlen(fmt) >= sizeof ret->format || strlen(tr) != 71 || strlen(mc) != 64) {
		r = cd_err_set(err, -CD_E_CORRUPT, TAMPERED, cdir, d->key,
		               "its stamp names another");
		goto out;
	}
	stamp_mac(key, k, fmt, dg, tr, mac);
	if (sodium_memcmp(mac, mc, 64) != 0) {
		r = cd_err_set(err, -CD_E_CORRUPT, TAMPERED, cdir, d->key,
		               "its stamp's MAC does not match");
		goto out;
	}
	rfd = openat(efd, "rootfs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rfd < 0 || cd_image_tree_id(rfd, tree, &n, NULL) < 0 || strcmp(tree, tr) != 0) {
		r = cd_err_set(err, -CD_E_CORRUPT, TAMPERED, cdir, d->key,
		               "a file of it changed since");
		goto out;
	}
	snprintf(ret->format, sizeof ret->format, "%s", fmt);
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rfd >= 0)
		close(rfd);
	close(efd);
	json_decref(o);
	free(buf);
	return r;
}

/* CACHE/.unpack-* whose unpack is gone (killed): no process holds its
 * flock.  Called under CACHE/.lock, which a new one is made under. */
static void stale_remove(int cfd)
{
	int dfd = openat(cfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
	struct dirent *de;
	DIR *d;

	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, ".unpack-", 8) != 0)
			continue;
		fd = openat(cfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			cd_image_remove(cfd, de->d_name);
		close(fd);
	}
	closedir(d);
}

/* CACHE/.unpack-XXXXXX made and flocked (held through *ret_own until the
 * unpack ends) under CACHE/.lock, the stale ones removed first. */
static int unpack_dir(int cfd, const char *cdir, char *tmp, size_t cap, int *ret_own,
                      struct cd_err *err)
{
	int lfd = openat(cfd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600), r = 0;

	if (lfd < 0 || flock(lfd, LOCK_EX) < 0) {
		r = cd_err_sys(err, -errno, "image cache lock '%s/.lock'", cdir);
		goto out;
	}
	stale_remove(cfd);
	if (snprintf(tmp, cap, "%s/.unpack-XXXXXX", cdir) >= (int)cap || !mkdtemp(tmp)) {
		r = cd_err_sys(err, -errno, "image cache '%s'", cdir);
		goto out;
	}
	*ret_own =
	        openat(cfd, strrchr(tmp, '/') + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*ret_own < 0 || flock(*ret_own, LOCK_EX | LOCK_NB) < 0)
		r = cd_err_sys(err, -errno, "image cache '%s'", tmp);
out:
	if (lfd >= 0)
		close(lfd);
	return r;
}

static void budget_init(struct cd_image_budget *b, const struct cd_image_limits *lim)
{
	memset(b, 0, sizeof *b);
	b->bytes_max = lim && lim->bytes_max ? lim->bytes_max : CD_IMAGE_BYTES_MAX;
	b->ratio_max = lim && lim->ratio_max ? lim->ratio_max : CD_IMAGE_RATIO_MAX;
	b->entries_max = lim && lim->entries_max ? lim->entries_max : CD_IMAGE_ENTRIES_MAX;
}

/* Unpack into CACHE/.unpack-XXXXXX, stamp it, rename it to CACHE/KEY. */
static int unpack(int cfd, const char *cdir, int in, int isdir, const struct cd_image_desc *d,
                  const unsigned char *key, struct cd_image_budget *b, struct cd_image *ret,
                  struct cd_err *err)
{
	char tmp[4096], *base;
	struct cd_image_desc *d2 = NULL;
	int tfd = -1, sfd = -1, rfd = -1, own = -1, lfd, r;
	size_t i;

	if ((r = unpack_dir(cfd, cdir, tmp, sizeof tmp, &own, err)) < 0) {
		if (own >= 0)
			close(own);
		return r;
	}
	base = strrchr(tmp, '/') + 1;
	tfd = openat(cfd, base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tfd < 0 || mkdirat(tfd, "rootfs", 0755) < 0 ||
	    (rfd = openat(tfd, "rootfs", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		r = cd_err_sys(err, -errno, "image cache '%s'", tmp);
		goto out;
	}
	if (isdir) {
		sfd = dup(in);
	} else {
		/* A tarball: its files staged, then read like a layout directory. */
		if (mkdirat(tfd, "src", 0700) < 0 ||
		    (sfd = openat(tfd, "src", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			r = cd_err_sys(err, -errno, "image cache '%s'", tmp);
			goto out;
		}
		if ((r = cd_image_stage(in, sfd, b, err)) < 0)
			goto out;
		b->read = 0; /* the layers' ratio: to their own bytes */
		if (!(d2 = calloc(1, sizeof *d2))) {
			r = cd_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		if ((r = cd_image_desc_read(dir_get, &sfd, d2, err)) < 0)
			goto out;
		if (strcmp(d2->key, d->key) != 0) {
			r = cd_err_set(err, -CD_E_CORRUPT, "the archive changed while it was read");
			goto out;
		}
		d = d2;
	}
	for (i = 0; i < d->nlayers; i++) {
		lfd = open_beneath(sfd, d->layers[i].path);
		if (lfd < 0) {
			r = cd_err_sys(err, -errno, "layer %zu '%s' (a link is refused)", i + 1,
			               d->layers[i].path);
			goto out;
		}
		r = cd_image_layer_apply(lfd, d->layers[i].digest, rfd, &ret->stats, b, err);
		close(lfd);
		if (r < 0) {
			cd_err_prefix(err, "layer %zu: ", i + 1);
			goto out;
		}
	}
	if ((r = cd_image_links_check(rfd, err)) < 0)
		goto out;
	snprintf(ret->format, sizeof ret->format, "%s",
	         d->format == CD_IMAGE_OCI ? "oci" : "docker");
	if ((r = stamp_write(tfd, rfd, key, d, ret->format, &ret->stats, err)) < 0)
		goto out;
	if (!isdir)
		cd_image_remove(tfd, "src");
	if (renameat(cfd, base, cfd, d->key) < 0)
		r = cd_err_sys(err, -errno, "image cache: %s into place", d->key);
	else
		ret->unpacked = 1;
out:
	if (r < 0)
		cd_image_remove(cfd, base);
	if (tfd >= 0)
		close(tfd);
	if (sfd >= 0)
		close(sfd);
	if (rfd >= 0)
		close(rfd);
	if (own >= 0)
		close(own);
	free(d2);
	return r;
}

/* What FILE is: a layout directory read in place, or a tarball's small files. */
static int describe(int in, int *ret_isdir, const struct cd_image_budget *b,
                    struct cd_image_desc *d, struct cd_err *err)
{
	struct cd_image_small *sm = NULL;
	struct stat st;
	int r;

	if (fstat(in, &st) < 0)
		return cd_err_sys(err, -errno, "image");
	*ret_isdir = S_ISDIR(st.st_mode);
	if (*ret_isdir)
		return cd_image_desc_read(dir_get, &in, d, err);
	if (!S_ISREG(st.st_mode))
		return cd_err_set(err, -CD_E_USAGE, "not a directory or a file");
	if ((r = cd_image_small_read(in, b, &sm, err)) < 0)
		return r;
	r = cd_image_desc_read(cd_image_small_get, sm, d, err);
	cd_image_small_free(sm);
	return r;
}

static int cache_open(const char *cdir, struct cd_err *err)
{
	char probe[4096];
	struct stat st;
	int fd;

	if (snprintf(probe, sizeof probe, "%s/x", cdir) >= (int)sizeof probe)
		return cd_err_set(err, -ENAMETOOLONG, "image cache '%s': too long", cdir);
	if (cd_mkdir_parents(probe, err) < 0)
		return err ? err->code : -EIO;
	fd = open(cdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return cd_err_sys(err, -errno, "image cache '%s'", cdir);
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return cd_err_set(err, -CD_E_DENIED,
		                  "image cache '%s': not the caller's, or "
		                  "writable by others",
		                  cdir);
	}
	return fd;
}

int cd_image_open(const char *file, const char *cache_dir, const struct cd_image_limits *lim,
                  struct cd_image *ret, struct cd_err *err)
{
	unsigned char key[crypto_auth_hmacsha256_KEYBYTES];
	struct cd_image_budget b;
	struct cd_image_desc *d = calloc(1, sizeof *d);
	char lock[CD_IMAGE_KEY_MAX + 8];
	int in = -1, cfd = -1, lfd = -1, isdir = 0, r;
	struct stat st;

	memset(ret, 0, sizeof *ret);
	if (!d)
		return cd_err_set(err, -ENOMEM, "out of memory");
	budget_init(&b, lim);
	in = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (in < 0) {
		r = cd_err_sys(err, -errno, "image '%s'", file);
		goto out;
	}
	if (fstat(in, &st) == 0 && S_ISREG(st.st_mode))
		b.read = (uint64_t)st.st_size; /* the first pass's ratio */
	if ((r = describe(in, &isdir, &b, d, err)) < 0) {
		cd_err_prefix(err, "image '%s': ", file);
		goto out;
	}
	if ((cfd = r = cache_open(cache_dir, err)) < 0)
		goto out;
	lfd = openat(cfd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lfd < 0 || flock(lfd, LOCK_EX) < 0) {
		r = cd_err_sys(err, -errno, "image cache lock '%s/.lock'", cache_dir);
		goto out;
	}
	r = mac_key(cfd, key, err);
	close(lfd);
	if (r < 0)
		goto out;
	snprintf(lock, sizeof lock, "%s.lock", d->key);
	lfd = openat(cfd, lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lfd < 0 || flock(lfd, LOCK_EX) < 0) {
		r = cd_err_sys(err, -errno, "image cache lock '%s/%s'", cache_dir, lock);
		goto out;
	}
	r = entry_check(cfd, cache_dir, key, d, ret, err);
	if (r == -ENOENT) {
		b.read = 0;
		r = unpack(cfd, cache_dir, in, isdir, d, key, &b, ret, err);
		if (r < 0)
			cd_err_prefix(err, "image '%s': ", file);
	}
	if (r == 0) {
		memcpy(ret->key, d->key, sizeof ret->key);
		memcpy(ret->digest, d->digest, sizeof ret->digest);
		if (snprintf(ret->rootfs, sizeof ret->rootfs, "%s/%s/rootfs", cache_dir, d->key) >=
		    (int)sizeof ret->rootfs)
			r = cd_err_set(err, -ENAMETOOLONG, "image cache '%s': too long", cache_dir);
	}
out:
	sodium_memzero(key, sizeof key);
	if (lfd >= 0)
		close(lfd);
	if (cfd >= 0)
		close(cfd);
	if (in >= 0)
		close(in);
	free(d);
	return r < 0 ? r : 0;
}
