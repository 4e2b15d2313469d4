/* image-arc.c — an image's tar streams through libarchive: a tarball's
 * small files (the first pass that finds the key), a tarball staged into
 * a private directory, a layer applied onto the root being unpacked.
 *
 * Trust boundary: every stream is the image author's.  libarchive only
 * reads (tar, plain, gzip or zstd, decompressed in the library: never an
 * external program); this file writes, below a directory descriptor,
 * never following a link, by the rules in image.h.  A layer's bytes are
 * hashed as libarchive reads them, on both of its passes, and a digest
 * that differs fails the unpack, whose directory is then removed. */
#include "image-int.h"

#include "util/dl.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static __typeof__(archive_read_new) *p_archive_read_new;
static __typeof__(archive_read_free) *p_archive_read_free;
static __typeof__(archive_read_support_format_tar) *p_archive_read_support_format_tar;
static __typeof__(archive_read_support_filter_gzip) *p_archive_read_support_filter_gzip;
static __typeof__(archive_read_support_filter_zstd) *p_archive_read_support_filter_zstd;
static __typeof__(archive_read_open2) *p_archive_read_open2;
static __typeof__(archive_read_next_header) *p_archive_read_next_header;
static __typeof__(archive_read_data) *p_archive_read_data;
static __typeof__(archive_read_data_skip) *p_archive_read_data_skip;
static __typeof__(archive_read_data_block) *p_archive_read_data_block;
static __typeof__(archive_filter_bytes) *p_archive_filter_bytes;
static __typeof__(archive_filter_count) *p_archive_filter_count;
static __typeof__(archive_error_string) *p_archive_error_string;
static __typeof__(archive_entry_pathname) *p_archive_entry_pathname;
static __typeof__(archive_entry_filetype) *p_archive_entry_filetype;
static __typeof__(archive_entry_mode) *p_archive_entry_mode;
static __typeof__(archive_entry_size) *p_archive_entry_size;
static __typeof__(archive_entry_symlink) *p_archive_entry_symlink;
static __typeof__(archive_entry_hardlink) *p_archive_entry_hardlink;
static __typeof__(archive_entry_xattr_reset) *p_archive_entry_xattr_reset;
static __typeof__(archive_entry_xattr_next) *p_archive_entry_xattr_next;

static const struct cd_dl_sym syms[] = {
	CD_DL_SYM(archive_read_new),
	CD_DL_SYM(archive_read_free),
	CD_DL_SYM(archive_read_support_format_tar),
	CD_DL_SYM(archive_read_support_filter_gzip),
	CD_DL_SYM(archive_read_support_filter_zstd),
	CD_DL_SYM(archive_read_open2),
	CD_DL_SYM(archive_read_next_header),
	CD_DL_SYM(archive_read_data),
	CD_DL_SYM(archive_read_data_skip),
	CD_DL_SYM(archive_read_data_block),
	CD_DL_SYM(archive_filter_bytes),
	CD_DL_SYM(archive_filter_count),
	CD_DL_SYM(archive_error_string),
	CD_DL_SYM(archive_entry_pathname),
	CD_DL_SYM(archive_entry_filetype),
	CD_DL_SYM(archive_entry_mode),
	CD_DL_SYM(archive_entry_size),
	CD_DL_SYM(archive_entry_symlink),
	CD_DL_SYM(archive_entry_hardlink),
	CD_DL_SYM(archive_entry_xattr_reset),
	CD_DL_SYM(archive_entry_xattr_next),
};

#define BUFSZ (64 * 1024)

/* The stream's bytes, hashed as libarchive reads them. */
struct src {
	int fd;
	int hash; /* 0: skips may seek */
	crypto_hash_sha256_state h;
	char buf[BUFSZ];
};

static la_ssize_t src_read(struct archive *a, void *ctx, const void **ret)
{
	struct src *s = ctx;
	ssize_t n;

	do
		n = read(s->fd, s->buf, sizeof s->buf);
	while (n < 0 && errno == EINTR);
	if (n > 0 && s->hash)
		crypto_hash_sha256_update(&s->h, (unsigned char *)s->buf, (size_t)n);
	*ret = s->buf;
	return n;
}

static la_int64_t src_skip(struct archive *a, void *ctx, la_int64_t req)
{
	struct src *s = ctx;

	/* Skipped bytes are read (and hashed) when the stream is hashed. */
	if (s->hash || req <= 0 || lseek(s->fd, req, SEEK_CUR) < 0)
		return 0;
	return req;
}

static struct archive *arc_open(struct src *s, int fd, int hash, struct cd_err *err)
{
	struct archive *a;

	s->fd = fd;
	s->hash = hash;
	crypto_hash_sha256_init(&s->h);
	if (cd_dl_load("libarchive.so.13", "libarchive13", syms, sizeof syms / sizeof syms[0],
	               err) < 0)
		return NULL;
	if (lseek(fd, 0, SEEK_SET) < 0) {
		cd_err_sys(err, -errno, "image");
		return NULL;
	}
	if (!(a = p_archive_read_new())) {
		cd_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	/* ARCHIVE_WARN would mean an external program: refused. */
	if (p_archive_read_support_format_tar(a) != ARCHIVE_OK ||
	    p_archive_read_support_filter_gzip(a) != ARCHIVE_OK ||
	    p_archive_read_support_filter_zstd(a) != ARCHIVE_OK) {
		cd_err_set(err, -CD_E_KERNEL, "libarchive lacks built-in tar, gzip or zstd");
		p_archive_read_free(a);
		return NULL;
	}
	if (p_archive_read_open2(a, s, NULL, src_read, src_skip, NULL) != ARCHIVE_OK) {
		cd_err_set(err, -CD_E_PARSE, "not a tar stream: %s",
		           p_archive_error_string(a) ? p_archive_error_string(a) : "?");
		p_archive_read_free(a);
		return NULL;
	}
	return a;
}

/* The next entry: 1, 0 at the end, <0 with err. */
static int arc_next(struct archive *a, struct archive_entry **e, const char *what,
                    struct cd_err *err)
{
	int r = p_archive_read_next_header(a, e);
	const char *m;

	if (r == ARCHIVE_EOF)
		return 0;
	if (r == ARCHIVE_OK)
		return 1;
	m = p_archive_error_string(a);
	return cd_err_set(err, -CD_E_PARSE, "%s: %s", what, m ? m : "a damaged tar stream");
}

/* The rest of the stream hashed, the digest compared. */
static int digest_check(struct src *s, const char *digest, struct cd_err *err)
{
	unsigned char d[crypto_hash_sha256_BYTES];
	char got[72];
	const void *dummy;
	size_t i;
	la_ssize_t n;

	while ((n = src_read(NULL, s, &dummy)) > 0)
		;
	if (n < 0)
		return cd_err_sys(err, -errno, "layer %s", digest);
	crypto_hash_sha256_final(&s->h, d);
	memcpy(got, "sha256:", 7);
	for (i = 0; i < sizeof d; i++)
		snprintf(got + 7 + 2 * i, 3, "%02x", d[i]);
	if (strcmp(got, digest) != 0)
		return cd_err_set(err, -CD_E_CORRUPT, "layer %s: its bytes hash to %s", digest,
		                  got);
	return 0;
}

/* After the end: the archive freed, the digest compared. */
static int arc_close(struct archive *a, struct src *s, const char *digest, struct cd_err *err)
{
	p_archive_read_free(a);
	return digest ? digest_check(s, digest, err) : 0;
}

/* The bytes decompressed so far in this pass (base: of the passes before,
 * this stream's own counted by libarchive) against the cap: the lower of
 * bytes_max and ratio_max times the bytes read, never under the floor. */
static int budget_check(struct archive *a, const struct cd_image_budget *b, uint64_t *used,
                        uint64_t base, struct cd_err *err)
{
	la_int64_t n = p_archive_filter_bytes(a, 0);
	uint64_t cap = b->read > UINT64_MAX / b->ratio_max ? UINT64_MAX : b->read * b->ratio_max;

	if (cap < CD_IMAGE_RATIO_FLOOR)
		cap = CD_IMAGE_RATIO_FLOOR;
	if (cap > b->bytes_max)
		cap = b->bytes_max;
	*used = base + (n > 0 ? (uint64_t)n : 0);
	if (*used <= cap)
		return 0;
	return cd_err_set(err, -CD_E_LIMIT,
	                  "image: unpacks to more than %llu bytes (the cap: %llu times the %llu "
	                  "bytes read, at most %llu; CORDON_IMAGE_MAX_RATIO, "
	                  "CORDON_IMAGE_MAX_BYTES)",
	                  (unsigned long long)cap, (unsigned long long)b->ratio_max,
	                  (unsigned long long)b->read, (unsigned long long)b->bytes_max);
}

/* The rest of the entry's data read and counted, never written. */
static int drain(struct archive *a, const struct cd_image_budget *b, uint64_t *used, uint64_t base,
                 const char *name, struct cd_err *err)
{
	const void *p;
	size_t len;
	la_int64_t off;
	int r;

	while ((r = p_archive_read_data_block(a, &p, &len, &off)) == ARCHIVE_OK)
		if (budget_check(a, b, used, base, err) < 0)
			return err ? err->code : -CD_E_LIMIT;
	if (r != ARCHIVE_EOF)
		return cd_err_set(err, -CD_E_PARSE, "entry '%.200s': %s", name,
		                  p_archive_error_string(a) ? p_archive_error_string(a) : "?");
	return budget_check(a, b, used, base, err);
}

/* A regular entry's content into fd, at the offsets libarchive gives:
 * a sparse entry's holes stay holes, and the file gets the entry's size
 * even when it is all hole. */
static int copy_data(struct archive *a, struct archive_entry *e, int fd, const char *name,
                     struct cd_image_stats *st, const struct cd_image_budget *b, uint64_t *used,
                     uint64_t base, struct cd_err *err)
{
	const char *p;
	size_t len, done;
	la_int64_t off, end = 0, size = p_archive_entry_size(e);
	ssize_t w;
	int r;

	while ((r = p_archive_read_data_block(a, (const void **)&p, &len, &off)) == ARCHIVE_OK) {
		if (budget_check(a, b, used, base, err) < 0)
			return err ? err->code : -CD_E_LIMIT;
		if (off < 0 || len > (size_t)(INT64_MAX - off))
			return cd_err_set(err, -CD_E_PARSE, "entry '%.200s': a block at %lld", name,
			                  (long long)off);
		if (st)
			st->bytes += len;
		for (done = 0; done < len; done += (size_t)w) {
			w = pwrite(fd, p + done, len - done, (off_t)(off + (la_int64_t)done));
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0)
				return cd_err_sys(err, -errno, "entry '%.200s'", name);
		}
		if (off + (la_int64_t)len > end)
			end = off + (la_int64_t)len;
	}
	if (r != ARCHIVE_EOF)
		return cd_err_set(err, -CD_E_PARSE, "entry '%.200s': %s", name,
		                  p_archive_error_string(a) ? p_archive_error_string(a) : "?");
	if (size > end)
		end = size;
	if (ftruncate(fd, (off_t)end) < 0)
		return cd_err_sys(err, -errno, "entry '%.200s'", name);
	return 0;
}

/* ---- a tarball's small files ---- */

struct small_file {
	struct small_file *next;
	char *name;
	char *buf;
	size_t len;
};

struct cd_image_small {
	struct small_file *head;
	size_t total;
};

void cd_image_small_free(struct cd_image_small *s)
{
	struct small_file *f, *n;

	if (!s)
		return;
	for (f = s->head; f; f = n) {
		n = f->next;
		free(f->name);
		free(f->buf);
		free(f);
	}
	free(s);
}

static int small_add(struct cd_image_small *s, struct archive *a, const char *name, size_t len,
                     struct cd_err *err)
{
	struct small_file *f = calloc(1, sizeof *f);
	la_ssize_t n;

	if (!f || !(f->name = strdup(name)) || !(f->buf = malloc(len + 1))) {
		if (f)
			free(f->name);
		free(f);
		return cd_err_set(err, -ENOMEM, "out of memory");
	}
	f->next = s->head;
	s->head = f; /* the first found is the newest: a later entry wins */
	while (f->len < len && (n = p_archive_read_data(a, f->buf + f->len, len - f->len)) > 0)
		f->len += (size_t)n;
	f->buf[f->len] = '\0';
	s->total += len;
	return 0;
}

int cd_image_small_read(int fd, const struct cd_image_budget *b, struct cd_image_small **ret,
                        struct cd_err *err)
{
	uint64_t used = 0;
	struct cd_image_small *s = calloc(1, sizeof *s);
	struct src *src = malloc(sizeof *src);
	struct archive *a = NULL;
	struct archive_entry *e;
	char name[CD_IMAGE_NAME_MAX];
	int r = -ENOMEM;

	if (!s || !src || !(a = arc_open(src, fd, 0, err))) {
		if (!s || !src)
			cd_err_set(err, -ENOMEM, "out of memory");
		r = err ? err->code : -EIO;
		goto out;
	}
	while ((r = arc_next(a, &e, "image archive", err)) == 1) {
		int64_t sz = p_archive_entry_size(e);

		if ((r = budget_check(a, b, &used, 0, err)) < 0)
			break;
		if (p_archive_entry_filetype(e) != AE_IFREG || p_archive_entry_hardlink(e) ||
		    sz < 0 || sz > (int64_t)CD_IMAGE_JSON_MAX ||
		    s->total + (size_t)sz > CD_IMAGE_SMALL_TOTAL ||
		    cd_image_name_norm(p_archive_entry_pathname(e) ? p_archive_entry_pathname(e)
		                                                   : "/",
		                       name, sizeof name, NULL) < 0) {
			/* Compressed: skipping decompresses, so count it as it
			 * goes; plain, libarchive seeks past it. */
			if (p_archive_filter_count(a) > 1 &&
			    (r = drain(a, b, &used, 0, "image archive", err)) < 0)
				break;
			continue;
		}
		if ((r = small_add(s, a, name, (size_t)sz, err)) < 0)
			break;
	}
	p_archive_read_free(a);
out:
	free(src);
	if (r < 0) {
		cd_image_small_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

int cd_image_small_get(void *ctx, const char *name, size_t cap, char **ret_buf, size_t *ret_len,
                       struct cd_err *err)
{
	struct cd_image_small *s = ctx;
	struct small_file *f;

	for (f = s->head; f; f = f->next) {
		if (strcmp(f->name, name) != 0)
			continue;
		if (f->len > cap)
			return cd_err_set(err, -CD_E_LIMIT, "'%s': larger than %zu bytes", name,
			                  cap);
		if (!(*ret_buf = malloc(f->len + 1)))
			return cd_err_set(err, -ENOMEM, "out of memory");
		memcpy(*ret_buf, f->buf, f->len + 1);
		*ret_len = f->len;
		return 0;
	}
	return -ENOENT;
}

/* ---- entries written below a root ---- */

/* What a pass is writing with: its stats (NULL when staging), the
 * budget, the count it adds to and the count of the passes before. */
struct pass_ctx {
	struct cd_image_stats *st;
	struct cd_image_budget *b;
	uint64_t *used;
	uint64_t base;
};

static int make_file(struct archive *a, struct archive_entry *e, int pfd, const char *leaf,
                     const char *name, unsigned mode, const struct pass_ctx *c, struct cd_err *err)
{
	int fd, r;

	if (cd_image_remove(pfd, leaf) < 0)
		return cd_err_sys(err, -errno, "entry '%.200s'", name);
	fd = openat(pfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return cd_err_sys(err, -errno, "entry '%.200s'", name);
	r = copy_data(a, e, fd, name, c->st, c->b, c->used, c->base, err);
	if (r == 0 && fchmod(fd, mode & 0777) < 0)
		r = cd_err_sys(err, -errno, "entry '%.200s'", name);
	close(fd);
	return r;
}

static int make_dir(int pfd, const char *leaf, const char *name, unsigned mode, struct cd_err *err)
{
	struct stat sb;

	if (fstatat(pfd, leaf, &sb, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(sb.st_mode) &&
	    cd_image_remove(pfd, leaf) < 0)
		return cd_err_sys(err, -errno, "entry '%.200s'", name);
	if (mkdirat(pfd, leaf, 0700) < 0 && errno != EEXIST)
		return cd_err_sys(err, -errno, "entry '%.200s'", name);
	/* Sticky kept (a /tmp), setgid dropped; the owner (the caller) keeps
	 * rwx so later layers can write, the tree being bound read-only. */
	if (fchmodat(pfd, leaf, (mode & 01777) | 0700, 0) < 0)
		return cd_err_sys(err, -errno, "entry '%.200s'", name);
	return 0;
}

static int make_hardlink(int root, int pfd, const char *leaf, const char *name, const char *to,
                         struct cd_err *err)
{
	char hn[CD_IMAGE_NAME_MAX];
	const char *hleaf;
	struct stat sb;
	int hfd, r;

	if ((r = cd_image_name_norm(to, hn, sizeof hn, err)) < 0)
		return cd_err_prefix(err, "entry '%.200s': a hard link to what is outside: ", name);
	if (!hn[0])
		return cd_err_set(err, -CD_E_DENIED, "entry '%.200s': a hard link to the top",
		                  name);
	if ((r = cd_image_parent(root, hn, NULL, &hfd, &hleaf, err)) < 0)
		return cd_err_prefix(err, "entry '%.200s': a hard link: ", name);
	if (fstatat(hfd, hleaf, &sb, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(sb.st_mode)) {
		close(hfd);
		return cd_err_set(err, -CD_E_DENIED,
		                  "entry '%.200s': a hard link to '%.200s', not "
		                  "a file of the image",
		                  name, hn);
	}
	if (S_ISLNK(sb.st_mode)) {
		/* A copy of a link: its target is read from its new place. */
		char t[CD_IMAGE_NAME_MAX];
		ssize_t tn = readlinkat(hfd, hleaf, t, sizeof t - 1);

		if (tn >= 0)
			t[tn] = '\0';
		if (tn < 0 || !cd_image_link_inside(name, t)) {
			close(hfd);
			return cd_err_set(err, -CD_E_DENIED,
			                  "entry '%.200s': a hard link to link '%.200s', whose "
			                  "target climbs out of the image from here",
			                  name, hn);
		}
	}
	r = 0;
	if (cd_image_remove(pfd, leaf) < 0 || linkat(hfd, hleaf, pfd, leaf, 0) < 0)
		r = cd_err_sys(err, -errno, "entry '%.200s'", name);
	close(hfd);
	return r;
}

static void count_xattrs(struct archive_entry *e, struct cd_image_stats *st)
{
	const char *xn;
	const void *xv;
	size_t xl;
	int any = 0, cap = 0;

	p_archive_entry_xattr_reset(e);
	while (p_archive_entry_xattr_next(e, &xn, &xv, &xl) == ARCHIVE_OK) {
		any = 1;
		if (xn && !strcmp(xn, "security.capability"))
			cap = 1;
	}
	st->xattrs += (uint64_t)any;
	st->caps += (uint64_t)cap;
}

/* One entry of a layer (or, with st NULL, of a tarball being staged). */
static int apply_entry(struct archive *a, struct archive_entry *e, int root, const char *name,
                       const struct pass_ctx *c, struct cd_err *err)
{
	struct cd_image_stats *st = c->st;
	uint64_t made = 0;
	unsigned type = p_archive_entry_filetype(e), mode = p_archive_entry_mode(e) & 07777;
	const char *hard = p_archive_entry_hardlink(e), *leaf, *target;
	int pfd, r;

	if (!st && (hard || (type != AE_IFREG && type != AE_IFDIR)))
		return cd_err_set(err, -CD_E_DENIED,
		                  "image archive: '%.200s' is a link or a "
		                  "device: cordon takes archives of files and directories",
		                  name);
	if (!hard && (type == AE_IFCHR || type == AE_IFBLK))
		return cd_err_set(err, -CD_E_DENIED,
		                  "entry '%.200s': a device node (the sandbox "
		                  "has cordon's own /dev)",
		                  name);
	if (!hard && (type == AE_IFIFO || type == AE_IFSOCK)) {
		st->skipped++;
		return 0;
	}
	if (!hard && type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
		return cd_err_set(err, -CD_E_DENIED, "entry '%.200s': of unknown type %o", name,
		                  type);
	if (st) {
		st->setid += (mode & 06000) != 0;
		count_xattrs(e, st);
	}
	r = cd_image_parent(root, name, &made, &pfd, &leaf, err);
	c->b->entries += made + 1;
	if (st)
		st->entries += made + 1;
	if (r < 0)
		return r;
	if (c->b->entries > c->b->entries_max) {
		close(pfd);
		return cd_err_set(err, -CD_E_LIMIT,
		                  "image: more than %llu entries, directories made for a deep "
		                  "path included (the cap: CORDON_IMAGE_MAX_ENTRIES)",
		                  (unsigned long long)c->b->entries_max);
	}
	if (hard) {
		r = make_hardlink(root, pfd, leaf, name, hard, err);
	} else if (type == AE_IFDIR) {
		r = make_dir(pfd, leaf, name, mode, err);
	} else if (type == AE_IFREG) {
		r = make_file(a, e, pfd, leaf, name, mode, c, err);
	} else {
		target = p_archive_entry_symlink(e);
		if (!target || !cd_image_link_inside(name, target))
			r = cd_err_set(err, -CD_E_DENIED,
			               "entry '%.200s': a link to '%.200s' climbs "
			               "out of the image",
			               name, target ? target : "");
		else if (cd_image_remove(pfd, leaf) < 0 || symlinkat(target, pfd, leaf) < 0)
			r = cd_err_sys(err, -errno, "entry '%.200s'", name);
	}
	close(pfd);
	return r;
}

/* A whiteout (pass one of a layer): what it names in the layers below
 * is removed.  1 when `name` was one. */
static int whiteout(int root, const char *name, struct cd_image_stats *st, struct cd_err *err)
{
	const char *slash = strrchr(name, '/'), *leaf = slash ? slash + 1 : name;
	int pfd, r;

	if (strncmp(leaf, ".wh.", 4) != 0)
		return 0;
	if (strcmp(leaf, ".wh..wh..opq") != 0 &&
	    (!leaf[4] || !strcmp(leaf + 4, ".") || !strcmp(leaf + 4, "..")))
		return cd_err_set(err, -CD_E_DENIED, "entry '%.200s': a whiteout of nothing", name);
	r = cd_image_parent(root, name, NULL, &pfd, &leaf, err);
	if (r == -ENOENT)
		return 1; /* nothing below to remove */
	if (r < 0)
		return r;
	st->whiteouts++;
	if (!strcmp(leaf, ".wh..wh..opq"))
		r = cd_image_empty_dir(pfd, ".");
	else
		r = cd_image_remove(pfd, leaf + 4);
	close(pfd);
	if (r < 0)
		return cd_err_sys(err, r, "whiteout '%.200s'", name);
	return 1;
}

/* One pass over a stream: pass 0 stages (st NULL), 1 applies whiteouts,
 * 2 the other entries.  Every entry's data is read (and counted) even
 * when nothing is written, so no skip decompresses uncounted. */
static int pass(int fd, const char *digest, int root, int which, struct cd_image_stats *st,
                struct cd_image_budget *b, struct cd_err *err)
{
	struct src *s = malloc(sizeof *s);
	char name[CD_IMAGE_NAME_MAX];
	struct archive *a = NULL;
	struct archive_entry *e;
	const char *what = digest ? digest : "image archive";
	struct pass_ctx c = { st, b, &b->used[which], b->used[which] };
	int r = 0;

	if (!s) {
		r = cd_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (!(a = arc_open(s, fd, digest != NULL, err))) {
		struct cd_err e2 = { 0, "" };

		r = err ? err->code : -EIO;
		/* Not even a stream: when its bytes are not the digest's, say that. */
		if (digest && r != -CD_E_KERNEL && digest_check(s, digest, &e2) == -CD_E_CORRUPT) {
			r = e2.code;
			if (err)
				*err = e2;
		}
		goto out;
	}
	while ((r = arc_next(a, &e, what, err)) == 1) {
		const char *p = p_archive_entry_pathname(e), *slash;

		if ((r = cd_image_name_norm(p ? p : "/", name, sizeof name, err)) < 0)
			break;
		slash = strrchr(name, '/');
		if (!name[0])
			r = 0; /* the top itself ("./") */
		else if (which == 1)
			r = whiteout(root, name, st, err);
		else if (which == 0 || strncmp(slash ? slash + 1 : name, ".wh.", 4) != 0)
			r = apply_entry(a, e, root, name, &c, err);
		if (r >= 0)
			r = drain(a, b, c.used, c.base, name, err);
		if (r < 0)
			break;
	}
	if (r == 0) {
		r = arc_close(a, s, digest, err);
	} else if (digest) {
		/* A damaged stream: when its bytes are not the digest's, say that. */
		struct cd_err e2 = { 0, "" };

		if (arc_close(a, s, digest, &e2) == -CD_E_CORRUPT && err)
			*err = e2;
		r = e2.code == -CD_E_CORRUPT ? e2.code : r;
	} else {
		p_archive_read_free(a);
	}
out:
	free(s);
	return r;
}

/* A stream to read: a regular file (never a FIFO that would block), its
 * size added to the bytes read. */
static int stream_size(int fd, struct cd_image_budget *b, const char *what, struct cd_err *err)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0)
		return cd_err_sys(err, -errno, "%s", what);
	if (!S_ISREG(sb.st_mode))
		return cd_err_set(err, -CD_E_PARSE, "%s: not a regular file", what);
	b->read += (uint64_t)sb.st_size;
	return 0;
}

int cd_image_stage(int fd, int dst, struct cd_image_budget *b, struct cd_err *err)
{
	int r = stream_size(fd, b, "image archive", err);

	return r < 0 ? r : pass(fd, NULL, dst, 0, NULL, b, err);
}

int cd_image_layer_apply(int fd, const char *digest, int root, struct cd_image_stats *st,
                         struct cd_image_budget *b, struct cd_err *err)
{
	int r = stream_size(fd, b, digest, err);

	if (r == 0)
		r = pass(fd, digest, root, 1, st, b, err);
	return r < 0 ? r : pass(fd, digest, root, 2, st, b, err);
}
