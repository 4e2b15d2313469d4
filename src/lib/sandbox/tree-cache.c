/* tree-cache.c — what the walk of a bound tree (tree-scan.c) found in
 * each directory, kept between runs, so that a directory whose entries
 * cannot have changed is not read again.
 *
 * A directory's entries change only with its ctime: creating, removing,
 * renaming or linking an entry sets the ctime of the directory holding
 * it to the current time, which no one without CAP_SYS_TIME can set back
 * (utimensat sets atime and mtime only).  So a directory whose (device,
 * inode, ctime in ns) are those of a record, reached by the same path
 * below the same tree, holds the entries the record lists, and the walk
 * spends one statx on it instead of open, two getdents64 and close.
 *
 * What a record keeps: the plain subdirectories (walked again, each
 * checked by its own record) and every entry whose check depends on more
 * than its name and type (visited again each run, with the directory's
 * descriptor): sockets, symlinks (where they lead), files named as
 * credentials, host-run files or git's (HEAD, alternates), files read
 * for their content (.pem and the other key_suffixes, .json, .yarnrc.yml), the profile's
 * cover_files, and entries of unknown type.  An ordinary regular file is
 * left out: nothing about it but its name counts, and its name lives in
 * the directory.  The checks that read a file's own inode state (link
 * counts, set-id bits, file capabilities: a chmod or a new hard link
 * elsewhere moves the file's ctime, not its directory's) cannot trust a
 * ctime: writable and read-only trees bound together are walked whole.
 * A root caller's writable tree (whose set-id and capable files the walk
 * keeps read-only) has records of its own (a file named "s-", its
 * set-id and capable files kept as entries to visit again), used only
 * when the tree watcher vouches for files' own state too (tree-watch.h,
 * `attrs`): each directory it does not list is replayed, every other
 * one read whole, the ctime never trusted alone.
 *
 * Racy ctimes: the kernel stamps ctimes from a coarse clock, so two
 * changes within one tick share a ctime.  A directory is recorded only
 * when its ctime lies more than STAMP_GUARD_NS before the walk began:
 * any later change gets a later ctime.  Only filesystems whose ctime is
 * kept by the local kernel are trusted (ext4, xfs, btrfs, tmpfs): not
 * overlays, FUSE or network filesystems.  A mount on a directory below
 * the tree shows another device and inode at that path: not the record's.
 *
 * The files live in the caller's state directory ("scan/", mode 0700,
 * hidden from every sandbox with the rest of it; never used when it lies
 * in a bound tree), one per tree, written whole to a temporary name and
 * renamed.  One that is not the caller's own 0600 regular file, or whose
 * header, key (these tables, the profile's cover_files, the caller's
 * ids, this boot) or checksum does not match, or that does not parse, is
 * ignored whole: the tree is walked as without it.
 */
#include "tree-scan-int.h"
#include "tree-watch.h"

#include "util/bounds.h"
#include "util/path.h"
#include "profile.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* Bump when what makes an entry worth keeping changes (cd_tree_cache_item). */
#define CACHE_VERSION  "cordon scan cache 9" /* 9: a directory it cannot search is refused */
#define CACHE_MAGIC    "CDSCAN02"
#define CACHE_MAX_FILE (64u << 20) /* larger: not read */
#define CACHE_FS_MAX   16
#define REC_HDR        40 /* dev, ino, ctime, nentries, nitems, rel_len, items_len */
#define FILE_HDR       56 /* magic, key, nrec, srclen, bodylen, sum, watcher instance, gen */

#define EXT4_MAGIC  0xEF53
#define XFS_MAGIC   0x58465342
#define BTRFS_MAGIC 0x9123683E
#define TMPFS_MAGIC 0x01021994

struct rec {
	uint64_t dev, ino;
	int64_t ctime;
	uint32_t nentries, nitems, rel_len, items_len;
	const unsigned char *rel, *items;
	size_t size; /* the whole record, padded */
};

struct build {
	unsigned char *v; /* the items read so far */
	size_t len, cap;
	uint32_t nitems, nentries;
	uint64_t dev, ino;
	int64_t ctime;
	int keep; /* recordable (trusted filesystem, ctime old enough) */
};

struct buf {
	unsigned char *v;
	size_t len, cap;
};

struct key {
	uint64_t dev, ino;
	size_t off; /* the record's offset in its buffer */
};

struct cd_scan_cache {
	int dirfd;
	uint64_t key;
	int64_t start_ns; /* CLOCK_REALTIME when this scan began */
	/* the tree being walked */
	int active;
	int failed; /* out of memory while recording: no file this time */
	int rootfd; /* the tree's top (O_PATH): lookups relative to it, or -1 */
	char fname[40];
	const char *src;
	unsigned char *old; /* the file read, or NULL */
	size_t oldlen;
	struct key *off;  /* its records, sorted by (dev, ino) */
	struct rec *recs; /* ... each parsed: recs[i] is off[i]'s */
	size_t nold, nused, nnew;
	struct buf out; /* the records of this walk */
	struct build b[SCAN_MAX_DEPTH + 2];
	struct {
		uint64_t dev;
		int trusted;
	} fs[CACHE_FS_MAX];
	size_t nfs;
	/* The tree watcher (tree-watch.h): the answer the file's records
	 * were checked after (f_), this walk's answer (n_), and when it
	 * listed the directories changed since the file's: those (sorted),
	 * and the file's records by path, for the others. */
	uint64_t f_instance, f_gen, n_instance, n_gen;
	uint32_t n_tree;
	int w_list;
	int w_attrs; /* ... and vouched for files' own state */
	int suid;    /* this tree's set-id files matter: records only by the watcher */
	struct cd_watch_id *w_dirty;
	size_t w_ndirty;
	uint32_t *by_rel; /* open addressing: index + 1 into off[] */
	size_t rel_cap;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The file's checksum, and the hash of a record's path: eight bytes a
 * step (a body is padded to 8; a path's last bytes one by one). */
static uint64_t body_sum(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL, v;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&v, p + i, 8);
		h = (h ^ v) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	h = fnv(h, p + i, n - i);
	/* every input bit into the low bits the path table uses */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	return fnv(h, s, strlen(s) + 1);
}

static uint64_t fnv_table(uint64_t h, const char *const *t)
{
	for (; *t; t++)
		h = fnv_str(h, *t);
	return fnv(h, "", 1);
}

/* What a record's meaning depends on besides the directory: the names
 * the walk knows, the profile's globs, whose view of the tree it was
 * (ids and groups decide what can be read), and this boot (device
 * numbers of tmpfs and of hot-plugged disks are handed out again). */
static uint64_t cache_key(const struct cd_plan_opts *o)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	gid_t groups[256];
	char boot[64] = "";
	uid_t u = geteuid();
	gid_t g = getegid();
	ssize_t n;
	size_t i;
	int fd, ng;

	h = fnv_str(h, CACHE_VERSION);
	h = fnv_table(h, cd_host_run_names);
	h = fnv_table(h, cd_host_run_paths);
	h = fnv_table(h, cd_host_reported_names);
	h = fnv_table(h, cd_config_run_names);
	h = fnv_table(h, cd_git_control_names);
	h = fnv_table(h, cd_credential_files);
	h = fnv_table(h, cd_credential_dirs);
	for (i = 0; i < o->ncover_files; i++)
		h = fnv_str(h, o->cover_files[i]);
	h = fnv(h, &u, sizeof u);
	h = fnv(h, &g, sizeof g);
	ng = getgroups((int)CD_ARRAY_SIZE(groups), groups);
	h = fnv(h, &ng, sizeof ng);
	if (ng > 0)
		h = fnv(h, groups, (size_t)ng * sizeof *groups);
	if ((fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, boot, sizeof boot - 1);
		boot[n > 0 ? n : 0] = '\0';
		close(fd);
	}
	return fnv_str(h, boot);
}

int cd_tree_cache_new(const struct cd_plan_opts *o, struct cd_scan_cache **ret)
{
	struct cd_scan_cache *c;
	struct timespec now;
	struct stat st;
	int fd;

	*ret = NULL;
	if (!o->scan_cache || o->scan_cache[0] != '/')
		return 0;
	if (mkdir(o->scan_cache, 0700) < 0 && errno != EEXIST)
		return 0;
	fd = open(o->scan_cache, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* the caller's own, and no one else's to write */
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return 0;
	}
	if (!(c = calloc(1, sizeof *c))) {
		close(fd);
		return -ENOMEM;
	}
	c->dirfd = fd;
	c->rootfd = -1;
	c->key = cache_key(o);
	clock_gettime(CLOCK_REALTIME, &now);
	c->start_ns = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
	*ret = c;
	return 0;
}

static void get_u32(const unsigned char *p, uint32_t *v)
{
	memcpy(v, p, sizeof *v);
}

static void get_u64(const unsigned char *p, uint64_t *v)
{
	memcpy(v, p, sizeof *v);
}

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* The record at `at` of a buffer of len bytes, checked whole: 0, or -1
 * when it runs past the end or its items do not parse. */
static int rec_parse(const unsigned char *v, size_t len, size_t at, struct rec *r)
{
	const unsigned char *p = v + at, *e;
	uint32_t i;

	if (len - at < REC_HDR)
		return -1;
	get_u64(p, &r->dev);
	get_u64(p + 8, &r->ino);
	memcpy(&r->ctime, p + 16, sizeof r->ctime);
	get_u32(p + 24, &r->nentries);
	get_u32(p + 28, &r->nitems);
	get_u32(p + 32, &r->rel_len);
	get_u32(p + 36, &r->items_len);
	if ((uint64_t)r->rel_len + r->items_len > len - at - REC_HDR)
		return -1;
	r->size = pad8(REC_HDR + (size_t)r->rel_len + r->items_len);
	if (r->size > len - at || r->nitems > r->nentries)
		return -1;
	r->rel = p + REC_HDR;
	r->items = r->rel + r->rel_len;
	if (memchr(r->rel, '\0', r->rel_len))
		return -1;
	/* items: type, plain, a name of 1..255 bytes without '/', NUL */
	p = r->items;
	e = p + r->items_len;
	for (i = 0; i < r->nitems; i++) {
		const unsigned char *z;

		if (e - p < 4 || p[1] > 1 || !(z = memchr(p + 2, '\0', (size_t)(e - p - 2))) ||
		    z == p + 2 || z - (p + 2) > 255 || memchr(p + 2, '/', (size_t)(z - p - 2)) ||
		    (p[2] == '.' && (z == p + 3 || (p[3] == '.' && z == p + 4))) ||
		    (p[1] && p[0] != DT_DIR))
			return -1;
		p = z + 1;
	}
	return p == e ? 0 : -1;
}

static int rec_cmp_key(const struct rec *a, const struct rec *b)
{
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

/* Read and check the file for c->src: all of it, or nothing. */
static void cache_load(struct cd_scan_cache *c)
{
	unsigned char *v = NULL;
	uint64_t key, bodylen, sum;
	uint32_t nrec, srclen;
	size_t got = 0, at, i, hdr;
	struct rec prev = { 0 }, r;
	struct stat st;
	ssize_t n = 0;
	int fd;

	fd = openat(c->dirfd, c->fname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) || st.st_size < FILE_HDR || (uint64_t)st.st_size > CACHE_MAX_FILE ||
	    !(v = malloc((size_t)st.st_size)))
		goto bad;
	while (got < (size_t)st.st_size && (n = read(fd, v + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	if (n < 0 || got != (size_t)st.st_size || memcmp(v, CACHE_MAGIC, 8))
		goto bad;
	get_u64(v + 8, &key);
	get_u32(v + 16, &nrec);
	get_u32(v + 20, &srclen);
	get_u64(v + 24, &bodylen);
	get_u64(v + 32, &sum);
	get_u64(v + 40, &c->f_instance);
	get_u64(v + 48, &c->f_gen);
	hdr = pad8(FILE_HDR + (size_t)srclen);
	if (key != c->key || srclen != strlen(c->src) || hdr > got || bodylen != got - hdr ||
	    memcmp(v + FILE_HDR, c->src, srclen) || body_sum(v + hdr, (size_t)bodylen) != sum ||
	    nrec > bodylen / REC_HDR || !(c->off = malloc((nrec + 1) * sizeof *c->off)) ||
	    !(c->recs = malloc((nrec + 1) * sizeof *c->recs)))
		goto bad;
	for (i = 0, at = hdr; i < nrec; i++, at += r.size) {
		if (rec_parse(v, got, at, &r) < 0 || (i && rec_cmp_key(&prev, &r) >= 0))
			goto bad;
		c->off[i].dev = r.dev;
		c->off[i].ino = r.ino;
		c->off[i].off = at;
		c->recs[i] = r;
		prev = r;
	}
	if (at != got)
		goto bad;
	close(fd);
	c->old = v;
	c->oldlen = got;
	c->nold = nrec;
	return;
bad:
	free(c->off);
	free(c->recs);
	c->off = NULL;
	c->recs = NULL;
	free(v);
	close(fd);
	c->f_instance = c->f_gen = 0;
}

void cd_tree_cache_begin(struct walk *w, const char *src)
{
	struct cd_scan_cache *c = w->cache;
	uint64_t h = fnv_str(0xcbf29ce484222325ULL, src);

	if (!c)
		return;
	snprintf(c->fname, sizeof c->fname, "%c-%016llx", w->suid_matters ? 's' : 't',
	         (unsigned long long)h);
	c->suid = w->suid_matters;
	c->src = src;
	c->active = 1;
	cache_load(c);
	c->rootfd = c->nold ? open(src, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
}

static int buf_add(struct buf *b, const void *p, size_t n)
{
	if (!n)
		return 0;
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap * 2 : 65536;
		unsigned char *v;

		while (cap - b->len < n)
			cap *= 2;
		if (!(v = realloc(b->v, cap)))
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	memcpy(b->v + b->len, p, n);
	b->len += n;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The records of this walk, sorted, to a temporary name renamed over
 * the tree's file (no fsync: a torn file fails its checksum). */
static void cache_write(struct cd_scan_cache *c)
{
	unsigned char hdr[FILE_HDR];
	struct buf f = { 0 };
	struct key *off;
	size_t n = 0, at, i, k;
	char tmp[64];
	uint64_t u;
	uint32_t v;
	struct rec r;
	int fd, ok;

	if (!(off = malloc((c->out.len / REC_HDR + 1) * sizeof *off)))
		return;
	for (at = 0; at < c->out.len && rec_parse(c->out.v, c->out.len, at, &r) == 0;
	     at += r.size, n++) {
		off[n].dev = r.dev;
		off[n].ino = r.ino;
		off[n].off = at;
	}
	qsort(off, n, sizeof *off, key_cmp);
	memset(hdr, 0, sizeof hdr);
	ok = buf_add(&f, hdr, sizeof hdr) == 0 && buf_add(&f, c->src, strlen(c->src)) == 0 &&
	     buf_add(&f, "\0\0\0\0\0\0\0", pad8(f.len) - f.len) == 0;
	for (i = 0, k = 0; ok && i < n; i++) {
		if (i && key_cmp(&off[i - 1], &off[i]) == 0)
			continue; /* one directory at two paths: one of them */
		rec_parse(c->out.v, c->out.len, off[i].off, &r);
		ok = buf_add(&f, c->out.v + off[i].off, r.size) == 0;
		k++;
	}
	free(off);
	if (!ok || k > UINT32_MAX) {
		free(f.v);
		return;
	}
	memcpy(f.v, CACHE_MAGIC, 8);
	memcpy(f.v + 8, &c->key, 8);
	v = (uint32_t)k;
	memcpy(f.v + 16, &v, 4);
	v = (uint32_t)strlen(c->src);
	memcpy(f.v + 20, &v, 4);
	memcpy(f.v + 40, &c->n_instance, 8);
	memcpy(f.v + 48, &c->n_gen, 8);
	at = pad8(FILE_HDR + strlen(c->src));
	u = f.len - at;
	memcpy(f.v + 24, &u, 8);
	u = body_sum(f.v + at, f.len - at);
	memcpy(f.v + 32, &u, 8);
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", c->fname, (long)getpid());
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		ok = cd_write_all(fd, f.v, f.len) == 0;
		ok = close(fd) == 0 && ok;
		if (!ok || renameat(c->dirfd, tmp, c->dirfd, c->fname) < 0)
			unlinkat(c->dirfd, tmp, 0);
	}
	free(f.v);
}

void cd_tree_cache_end(struct walk *w, int ok)
{
	struct cd_scan_cache *c = w->cache;
	size_t i;

	if (!c || !c->active)
		return;
	/* written again when a record changed, or when the watcher watches
	 * the tree whole but could not answer for the file's generation */
	if (ok && !c->failed &&
	    (c->nnew || c->nused != c->nold ||
	     (c->n_tree && (c->n_instance != c->f_instance || c->n_gen != c->f_gen) &&
	      (!c->w_list || (c->suid && !c->w_attrs) || c->w_ndirty > 64))))
		cache_write(c);
	if (c->rootfd >= 0)
		close(c->rootfd);
	c->rootfd = -1;
	free(c->old);
	free(c->off);
	free(c->recs);
	c->recs = NULL;
	free(c->out.v);
	free(c->w_dirty);
	free(c->by_rel);
	c->w_dirty = NULL;
	c->by_rel = NULL;
	c->w_ndirty = c->rel_cap = 0;
	c->w_list = c->w_attrs = c->suid = 0;
	c->f_instance = c->f_gen = c->n_instance = c->n_gen = 0;
	c->n_tree = 0;
	c->old = NULL;
	c->off = NULL;
	memset(&c->out, 0, sizeof c->out);
	c->nold = c->nused = c->nnew = c->oldlen = 0;
	c->failed = 0;
	for (i = 0; i < CD_ARRAY_SIZE(c->b); i++)
		c->b[i].len = c->b[i].nitems = c->b[i].nentries = 0;
	c->active = 0;
}

void cd_tree_cache_free(struct cd_scan_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < CD_ARRAY_SIZE(c->b); i++)
		free(c->b[i].v);
	close(c->dirfd);
	free(c);
}

/* Is dev a filesystem whose ctimes the local kernel keeps?  `path` is on it. */
static int trusted(struct cd_scan_cache *c, uint64_t dev, const char *path)
{
	struct statfs sf;
	size_t i;
	int t;

	for (i = 0; i < c->nfs; i++) {
		if (c->fs[i].dev == dev)
			return c->fs[i].trusted;
	}
	if (statfs(path, &sf) < 0)
		return 0;
	t = sf.f_type == EXT4_MAGIC || sf.f_type == XFS_MAGIC || sf.f_type == BTRFS_MAGIC ||
	    sf.f_type == TMPFS_MAGIC;
	if (c->nfs < CACHE_FS_MAX) {
		c->fs[c->nfs].dev = dev;
		c->fs[c->nfs++].trusted = t;
	}
	return t;
}

static const char *rel_of(const struct walk *w)
{
	return w->path[w->srclen] ? w->path + w->srclen + 1 : "";
}

/* 1 and *ret when the directory (dev, ino, ctime) at w->path has a record. */
static int find(struct cd_scan_cache *c, const struct walk *w, uint64_t dev, uint64_t ino,
                int64_t ctime, struct rec *ret)
{
	struct key k = { dev, ino, 0 };
	const struct key *hit = bsearch(&k, c->off, c->nold, sizeof *c->off, key_cmp);
	const char *rel = rel_of(w);

	if (!hit)
		return 0;
	*ret = c->recs[hit - c->off]; /* checked whole on load */
	return ret->ctime == ctime && ret->rel_len == strlen(rel) &&
	       !memcmp(ret->rel, rel, ret->rel_len);
}

/* The file's records by path, made on first use. */
static int rel_index(struct cd_scan_cache *c)
{
	size_t cap = 16, i;
	const struct rec *r;

	while (cap < c->nold * 2)
		cap *= 2;
	if (!(c->by_rel = calloc(cap, sizeof *c->by_rel)))
		return -1;
	c->rel_cap = cap;
	for (i = 0; i < c->nold; i++) {
		size_t h;

		r = &c->recs[i];
		h = (size_t)body_sum(r->rel, r->rel_len) & (cap - 1);
		while (c->by_rel[h])
			h = (h + 1) & (cap - 1);
		c->by_rel[h] = (uint32_t)(i + 1);
	}
	return 0;
}

/* 1 and *ret: the file's record of the directory at `rel`. */
static int by_rel(struct cd_scan_cache *c, const char *rel, struct rec *ret)
{
	size_t rl = strlen(rel), h;

	if (!c->by_rel && (c->nold >= UINT32_MAX || rel_index(c) < 0)) {
		c->w_list = 0; /* each directory by its statx, as without a watcher */
		return 0;
	}
	h = (size_t)body_sum((const unsigned char *)rel, rl) & (c->rel_cap - 1);
	for (; c->by_rel[h]; h = (h + 1) & (c->rel_cap - 1)) {
		const struct rec *r = &c->recs[c->by_rel[h] - 1];

		if (r->rel_len == rl && !memcmp(r->rel, rel, rl)) {
			*ret = *r;
			return 1;
		}
	}
	return 0;
}

/* tree-scan-int.h */
void cd_tree_cache_watch(struct walk *w, const char *src, const struct stat *st)
{
	struct cd_scan_cache *c = w->cache && w->cache->active ? w->cache : NULL;
	struct cd_plan *p = w->p;
	struct cd_watch_id *ids = NULL;
	struct cd_watch_rep rep;

	if (!w->o->watch_sock || w->watch_fd == -1 || w->tree >= p->ntrees || !w->stamp ||
	    w->list_only || w->link_pass || !S_ISDIR(st->st_mode))
		return;
	if (w->watch_fd == -2 && (w->watch_fd = cd_watch_connect(w->o->watch_sock)) < 0)
		return;
	if (cd_watch_ask(w->watch_fd, src, (uint64_t)st->st_dev, (uint64_t)st->st_ino,
	                 c && c->nold ? c->f_instance : 0, c && c->nold ? c->f_gen : 0, &rep,
	                 &ids) < 0 ||
	    (p->watch_instance && rep.instance != p->watch_instance)) {
		/* no watcher for this walk: the child checks every directory */
		free(ids);
		close(w->watch_fd);
		w->watch_fd = -1;
		p->watch_instance = 0;
		return;
	}
	p->watch_instance = rep.instance;
	/* a mount below the top shows another directory than the watched
	 * one at its path: that tree is checked directory by directory */
	if (rep.tree && !cd_tree_mounts_below(src)) {
		p->trees[w->tree].watch_id = rep.tree;
		if (!p->watch_since || rep.gen < p->watch_since)
			p->watch_since = rep.gen;
	}
	if (c && p->trees[w->tree].watch_id) {
		/* the records are stamped with the answer only when it vouches
		 * for the tree (not with a mount below it: W3) */
		c->n_instance = rep.instance;
		c->n_gen = rep.gen;
		c->n_tree = p->trees[w->tree].watch_id;
		if (rep.status == CD_WATCH_LIST && c->n_tree) {
			c->w_list = 1;
			c->w_attrs = rep.attrs == 1;
			c->w_dirty = ids;
			c->w_ndirty = rep.ndirty;
			ids = NULL;
		}
	}
	free(ids);
}

void cd_tree_cache_watch_end(struct walk *w, int r)
{
	struct cd_plan *p = w->p;

	if (r == 0 && p->watch_instance && w->watch_fd >= 0) {
		p->watch_fd = w->watch_fd;
		return;
	}
	if (w->watch_fd >= 0)
		close(w->watch_fd);
	p->watch_instance = 0; /* the plan's watch_fd means nothing */
}

/* The directory at w->path (plen bytes), as its record says, the
 * entries that need it visited again; 1 when it must be read instead. */
static int replay(struct walk *w, const struct rec *r, size_t plen, unsigned depth)
{
	struct cd_scan_cache *c = w->cache;
	const unsigned char *p = r->items;
	size_t idx = w->p->ndirs;
	struct stat st;
	uint32_t i;
	int fd = -1, head = 0, need = 0, rv = 0;

	for (i = 0; i < r->nitems && !need; i++) {
		need = !p[1];
		p += 2 + strlen((const char *)p + 2) + 1;
	}
	if (need) {
		/* the descriptor the visits need: the same directory still */
		fd = c->rootfd >= 0 && *rel_of(w)
		             ? openat(c->rootfd, rel_of(w),
		                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
		             : open(w->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return 1;
		if (fstat(fd, &st) < 0 || st.st_dev != r->dev || st.st_ino != r->ino ||
		    cd_tree_ctime_ns(&st) != r->ctime) {
			close(fd);
			return 1;
		}
	}
	if (w->stamp && (rv = cd_tree_stamp_id(w, r->dev, r->ino, r->ctime)) < 0)
		goto out;
	if ((rv = cd_tree_count(w, r->nentries)) < 0)
		goto out;
	if ((rv = buf_add(&c->out, r->rel - REC_HDR, r->size)) < 0) {
		rv = cd_err_set(w->err, -ENOMEM, "out of memory");
		goto out;
	}
	c->nused++;
	for (i = 0, p = r->items; i < r->nitems && rv == 0; i++) {
		const char *name = (const char *)p + 2;

		head |= !strcmp(name, "HEAD");
		if (p[1])
			rv = cd_tree_enter(w, fd, name, plen, depth);
		else
			rv = cd_tree_visit(w, fd, name, p[0], plen, depth);
		w->path[plen] = '\0';
		p += 2 + strlen(name) + 1;
	}
	if (rv == 0 && head)
		cd_tree_mark_gitdir(w, idx);
out:
	if (fd >= 0)
		close(fd);
	return rv;
}

/* Walk the directory `name` of dfd (w->path, plen bytes; dfd < 0: by
 * w->path) at `depth` from its record, when it has one and it still
 * holds.  1: no record (read it), else the walk's result. */
int cd_tree_cache_dir(struct walk *w, int dfd, const char *name, size_t plen, unsigned depth)
{
	struct cd_scan_cache *c = w->cache;
	struct statx sx;
	struct rec r;
	uint64_t dev;
	int64_t ct;
	int at = dfd, flags = AT_SYMLINK_NOFOLLOW;

	if (!c || !c->active || !c->nold || (c->suid && !(c->w_list && c->w_attrs)))
		return 1;
	/* no event on it (nor on a directory above, or its path would have
	 * led the walk elsewhere) since its record was checked: as it was */
	if (c->w_list && *rel_of(w) && by_rel(c, rel_of(w), &r) &&
	    !cd_watch_has(c->w_dirty, c->w_ndirty, r.dev, r.ino))
		return replay(w, &r, plen, depth);
	if (c->suid)
		return 1; /* a chmod moves no directory's ctime */
	/* by its path below the tree's top (the top itself: the descriptor
	 * opened at the start): fewer components to look up */
	if (dfd < 0 && c->rootfd >= 0) {
		at = c->rootfd;
		name = rel_of(w);
		flags |= *name ? 0 : AT_EMPTY_PATH;
	} else if (dfd < 0) {
		at = AT_FDCWD;
		name = w->path;
	}
	if (statx(at, name, flags, STATX_TYPE | STATX_INO | STATX_CTIME, &sx) < 0 ||
	    (sx.stx_mask & (STATX_TYPE | STATX_INO | STATX_CTIME)) !=
	            (STATX_TYPE | STATX_INO | STATX_CTIME) ||
	    !S_ISDIR(sx.stx_mode))
		return 1;
	dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	ct = (int64_t)sx.stx_ctime.tv_sec * 1000000000LL + sx.stx_ctime.tv_nsec;
	if (ct > c->start_ns - STAMP_GUARD_NS || !find(c, w, dev, sx.stx_ino, ct, &r) ||
	    !trusted(c, dev, w->path))
		return 1;
	return replay(w, &r, plen, depth);
}

/* Is the record rec (size bytes, as the walk made it) in the file read? */
static int same_as_old(const struct cd_scan_cache *c, const unsigned char *rec, size_t size)
{
	struct key k = { 0, 0, 0 };
	const struct key *hit;
	const struct rec *r;

	if (!c->nold)
		return 0;
	memcpy(&k.dev, rec, 8);
	memcpy(&k.ino, rec + 8, 8);
	hit = bsearch(&k, c->off, c->nold, sizeof *c->off, key_cmp);
	if (!hit)
		return 0;
	r = &c->recs[hit - c->off];
	return r->size == size && !memcmp(r->rel - REC_HDR, rec, size);
}

/* Reading the directory w->path at depth (st: its fstat, taken before
 * the first getdents64): start its record. */
void cd_tree_cache_read_begin(struct walk *w, unsigned depth, const struct stat *st)
{
	struct cd_scan_cache *c = w->cache;
	struct build *b;

	if (!c || !c->active || depth >= CD_ARRAY_SIZE(c->b))
		return;
	b = &c->b[depth];
	b->len = 0;
	b->nitems = b->nentries = 0;
	b->dev = st->st_dev;
	b->ino = st->st_ino;
	b->ctime = cd_tree_ctime_ns(st);
	b->keep = b->ctime <= c->start_ns - STAMP_GUARD_NS && trusted(c, st->st_dev, w->path);
}

/* An entry of the directory being read at depth (w->path is the entry,
 * dir_len the directory's length), after its visit: kept when its check
 * needs more than its name and type (a set-id or capable file where
 * that matters), or it is a plain directory to walk. */
int cd_tree_cache_item(struct walk *w, unsigned depth, const char *name, unsigned char type,
                       size_t dir_len)
{
	struct cd_scan_cache *c = w->cache;
	size_t nl = strlen(name);
	unsigned char hdr[2];
	struct build *b;
	int plain;

	if (!c || !c->active || depth >= CD_ARRAY_SIZE(c->b) || !c->b[depth].keep)
		return 0;
	b = &c->b[depth];
	b->nentries++;
	if (dir_len + 1 + nl + 1 >= sizeof w->path) {
		b->keep = 0; /* refused or listed by the walk anyway */
		return 0;
	}
	w->path[dir_len] = '/';
	memcpy(w->path + dir_len + 1, name, nl + 1);
	plain = (type == DT_REG || type == DT_DIR) && !cd_tree_is_host_run(name) &&
	        !cd_tree_is_reported(name) && !cd_config_run_name(name) &&
	        !cd_tree_host_run_base(name) && !cd_tree_python_name(name) &&
	        strcmp(name, "HEAD") && strcmp(name, "alternates") &&
	        (type == DT_DIR || !cd_tree_cred_maybe(w, name, nl, dir_len + 1 + nl));
	w->path[dir_len] = '\0';
	if (plain && type == DT_REG && !(c->suid && w->setid_hit))
		return 0; /* nothing about it but its name counts */
	plain = plain && type == DT_DIR;
	hdr[0] = type;
	hdr[1] = (unsigned char)plain;
	if (b->cap - b->len < nl + 3) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		unsigned char *v;

		while (cap - b->len < nl + 3)
			cap *= 2;
		if (!(v = realloc(b->v, cap))) {
			b->keep = 0;
			return 0;
		}
		b->v = v;
		b->cap = cap;
	}
	memcpy(b->v + b->len, hdr, 2);
	memcpy(b->v + b->len + 2, name, nl + 1);
	b->len += nl + 3;
	b->nitems++;
	return 0;
}

/* The directory at depth read whole (ok) or not: its record kept. */
void cd_tree_cache_read_end(struct walk *w, unsigned depth, int ok)
{
	struct cd_scan_cache *c = w->cache;
	const char *rel = rel_of(w);
	unsigned char h[REC_HDR];
	uint32_t v[4];
	struct build *b;
	size_t rl = strlen(rel), size;

	if (!c || !c->active || depth >= CD_ARRAY_SIZE(c->b) || !c->b[depth].keep || !ok)
		return;
	b = &c->b[depth];
	size = pad8(REC_HDR + rl + b->len);
	memcpy(h, &b->dev, 8);
	memcpy(h + 8, &b->ino, 8);
	memcpy(h + 16, &b->ctime, 8);
	v[0] = b->nentries;
	v[1] = b->nitems;
	v[2] = (uint32_t)rl;
	v[3] = (uint32_t)b->len;
	memcpy(h + 24, v, sizeof v);
	if (buf_add(&c->out, h, sizeof h) < 0 || buf_add(&c->out, rel, rl) < 0 ||
	    buf_add(&c->out, b->v, b->len) < 0 ||
	    buf_add(&c->out, "\0\0\0\0\0\0\0", size - REC_HDR - rl - b->len) < 0) {
		c->failed = 1;
		return;
	}
	/* read again but as the file has it (the top of a root caller's
	 * writable tree, read each run; a directory listed for an event
	 * that changed nothing): no reason to write the file again */
	if (same_as_old(c, c->out.v + c->out.len - size, size))
		c->nused++;
	else
		c->nnew++;
}

/* Does the scan cache's directory lie in a tree the sandbox sees?  Then
 * it is not used (the plan also hides the state directory, or refuses a
 * writable bind of it). */
int cd_tree_cache_in_tree(const struct cd_plan *p, size_t first, const struct cd_plan_opts *o)
{
	char dir[CD_PATH_MAX], canon[CD_PATH_MAX];
	const char *slash = strrchr(o->scan_cache, '/');
	size_t i, dl = slash ? (size_t)(slash - o->scan_cache) : 0, cl;

	/* its parent (it may not exist yet), canonical, and its name */
	if (!slash || dl >= sizeof dir)
		return 1;
	memcpy(dir, o->scan_cache, dl);
	dir[dl] = '\0';
	if (cd_path_canonical(dl ? dir : "/", canon, sizeof canon) < 0 ||
	    (cl = strlen(canon)) + strlen(slash) >= sizeof canon)
		return 1;
	memcpy(canon + (cl == 1 ? 0 : cl), slash, strlen(slash) + 1);
	for (i = 0; i < p->nmounts; i++) {
		const struct cd_mount *m = &p->mounts[i];

		if (((m->kind == CD_MNT_BIND || m->kind == CD_MNT_OVERLAY) && i >= first) ||
		    (p->scratch_host && m->src && !strcmp(m->src, p->scratch_host))) {
			if (m->src && cd_path_is_under(canon, m->src))
				return 1;
		}
	}
	return 0;
}
