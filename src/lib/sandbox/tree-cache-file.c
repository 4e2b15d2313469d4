/* tree-cache-file.c — the scan cache's file (tree-cache.c says what it
 * is for): its format, how it is read and checked, how it is written,
 * and the lookups into the file read.
 *
 *   header   magic "CDSCAN03", key, nrec, srclen, bodylen, checksum,
 *            the watcher's instance and generation it was checked after
 *   src      the tree's path, padded to 8
 *   records  nrec, in the walk's post-order: dev, ino, ctime, nentries,
 *            nitems, rel_len, items_len, nsub, flags, then the path
 *            relative to the top (no NUL) and the items (type, plain,
 *            name, NUL each), padded to 8
 *   index    nrec record numbers, in the (dev, ino) order of their records
 *
 * The checksum covers records and index.  A file is used whole or not
 * at all: every record must parse, every subtree (the nsub records
 * ending at a record) must nest in its parent's, a unit's subdirectories
 * must be its plain items in order, named as its path says, and the
 * index must name the records in strict (dev, ino) order.  One directory
 * reached at two paths (a bind mount below the tree) makes the walk's
 * records unwritable: no file for that tree.
 */
#include "tree-cache-int.h"

#include "profile.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bump when what makes an entry worth keeping changes (cd_tree_cache_item). */
#define CACHE_VERSION "cordon scan cache 10" /* 10: post-order, units, an index */
#define CACHE_MAGIC   "CDSCAN03"
#define IDX_SIZE      4  /* k */
#define FILE_HDR      56 /* magic, key, nrec, srclen, bodylen, sum, watcher instance, gen */

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

/* The file's checksum, and the hash of a record's path: four lanes of
 * eight bytes a step (no lane waits on another's multiply), the last
 * bytes one by one, every input bit mixed into the low bits the path
 * table uses. */
uint64_t cd_cache_hash(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t h[4] = { 0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL, 0x9ce484222325cbf2ULL,
		          0x2325cbf29ce48422ULL };
	uint64_t v, r;
	size_t i, l;

	for (i = 0; i + 32 <= n; i += 32) {
		for (l = 0; l < 4; l++) {
			memcpy(&v, p + i + 8 * l, 8);
			h[l] = (h[l] ^ v) * 0x100000001b3ULL;
			h[l] ^= h[l] >> 29;
		}
	}
	for (; i + 8 <= n; i += 8) {
		memcpy(&v, p + i, 8);
		h[0] = (h[0] ^ v) * 0x100000001b3ULL;
		h[0] ^= h[0] >> 29;
	}
	r = fnv(h[0] ^ (h[1] * 3) ^ (h[2] * 5) ^ (h[3] * 7) ^ n, p + i, n - i);
	r ^= r >> 33;
	r *= 0xff51afd7ed558ccdULL;
	r ^= r >> 33;
	r *= 0xc4ceb9fe1a85ec53ULL;
	return r ^ (r >> 33);
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
uint64_t cd_cache_key(const struct cd_plan_opts *o)
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

static uint32_t u32_at(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof v);
	return v;
}

static uint64_t u64_at(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof v);
	return v;
}

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* The record's fields at p (a record checked, or being checked). */
static void rec_fields(const unsigned char *p, struct rec *r)
{
	r->dev = u64_at(p);
	r->ino = u64_at(p + 8);
	memcpy(&r->ctime, p + 16, sizeof r->ctime);
	r->nentries = u32_at(p + 24);
	r->nitems = u32_at(p + 28);
	r->rel_len = u32_at(p + 32);
	r->items_len = u32_at(p + 36);
	r->nsub = u32_at(p + 40);
	r->flags = u32_at(p + 44);
	r->rel = p + REC_HDR;
	r->items = r->rel + r->rel_len;
	r->size = pad8(REC_HDR + (size_t)r->rel_len + r->items_len);
}

void cd_cache_rec(const struct cd_scan_cache *c, uint32_t k, struct rec *r)
{
	rec_fields(c->old + c->at[k], r);
}

/* The record at `at` of len bytes, checked whole: 0, or -1 when it runs
 * past the end or its items do not parse. */
static int rec_parse(const unsigned char *v, size_t len, size_t at, struct rec *r)
{
	const unsigned char *p, *e;
	uint32_t i;

	if (len - at < REC_HDR)
		return -1;
	rec_fields(v + at, r);
	if ((uint64_t)r->rel_len + r->items_len > len - at - REC_HDR || r->size > len - at ||
	    r->nitems > r->nentries || r->nsub == 0 || (r->flags & ~REC_UNIT))
		return -1;
	if (r->rel_len && (r->rel[0] == '/' || r->rel[r->rel_len - 1] == '/'))
		return -1; /* (a NUL in it only makes it match no path) */
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

int cd_cache_child_named(const struct rec *parent, const struct rec *child, const char *name,
                         size_t nl)
{
	size_t pl = parent->rel_len;

	if (!pl)
		return child->rel_len == nl && !memcmp(child->rel, name, nl);
	return child->rel_len == pl + 1 + nl && !memcmp(child->rel, parent->rel, pl) &&
	       child->rel[pl] == '/' && !memcmp(child->rel + pl + 1, name, nl);
}

/* Record k (r) closes the subtrees on top of the stack (their roots in
 * stack, where each begins in starts) that lie in its own: they must
 * tile it exactly; a unit's must be its plain items, in order, units
 * too.  *top is the stack's height. */
static int rec_nests(const struct cd_scan_cache *c, uint32_t *stack, uint32_t *starts, size_t *top,
                     uint32_t k, const struct rec *r)
{
	uint32_t start, j;
	size_t m = *top, below;
	const unsigned char *p = r->items;
	struct rec ch;

	if (r->nsub > k + 1)
		return -1;
	start = k + 1 - r->nsub;
	while (m > 0 && starts[m - 1] >= start)
		m--;
	/* what is left below ends right before this subtree begins (the
	 * stack's subtrees tile the records before k, so those taken off
	 * then tile the rest of this one) */
	if (m > 0 ? stack[m - 1] + 1 != start : start != 0)
		return -1;
	if (r->flags & REC_UNIT) {
		below = m;
		for (j = 0; j < r->nitems; j++) {
			const char *name = (const char *)p + 2;
			size_t nl = strlen(name);

			if (p[1]) {
				if (below >= *top)
					return -1;
				cd_cache_rec(c, stack[below], &ch);
				if (!(ch.flags & REC_UNIT) ||
				    !cd_cache_child_named(r, &ch, name, nl))
					return -1;
				below++;
			} else if (p[0] == DT_DIR || p[0] == DT_UNKNOWN) {
				return -1;
			}
			p += 2 + nl + 1;
		}
		if (below != *top)
			return -1;
	}
	*top = m;
	starts[*top] = start;
	stack[(*top)++] = k;
	return 0;
}

/* Record k's (dev, ino): its first 16 bytes. */
static void rec_key(const struct cd_scan_cache *c, uint32_t k, uint64_t *dev, uint64_t *ino)
{
	*dev = u64_at(c->old + c->at[k]);
	*ino = u64_at(c->old + c->at[k] + 8);
}

/* The index: record numbers in strict (dev, ino) order (so each once). */
static int index_ok(const struct cd_scan_cache *c, size_t nrec)
{
	uint64_t pd = 0, pi = 0, d, i;
	size_t n;

	for (n = 0; n < nrec; n++) {
		uint32_t k = u32_at(c->index + n * IDX_SIZE);

		if (k >= nrec)
			return 0;
		rec_key(c, k, &d, &i);
		if (n && (pd > d || (pd == d && pi >= i)))
			return 0;
		pd = d;
		pi = i;
	}
	return 1;
}

/* The checks of a file's bytes (v, len) that need nothing but them: the
 * header's sizes, the checksum, every record, the subtrees' nesting, the
 * index.  Each record's offset into at (room for len / (REC_HDR +
 * IDX_SIZE) + 1 of them); the number of records, or -1.  The service
 * runs them once for a file it holds checked (tree-cache-held.c). */
long cd_cache_check(const unsigned char *v, size_t len, uint32_t *at)
{
	struct cd_scan_cache chk = { .old = (unsigned char *)(uintptr_t)v, .at = at };
	uint32_t nrec, srclen, *stack = NULL, *starts = NULL, k;
	size_t at_, hdr, recs_end, top = 0;
	uint64_t bodylen;
	struct rec r;
	long ret = -1;

	if (len < FILE_HDR || memcmp(v, CACHE_MAGIC, 8))
		return -1;
	nrec = u32_at(v + 16);
	srclen = u32_at(v + 20);
	bodylen = u64_at(v + 24);
	hdr = pad8(FILE_HDR + (size_t)srclen);
	if (hdr > len || bodylen != len - hdr || nrec > bodylen / (REC_HDR + IDX_SIZE) ||
	    cd_cache_hash(v + hdr, (size_t)bodylen) != u64_at(v + 32) ||
	    !(stack = malloc((nrec + 1) * sizeof *stack)) ||
	    !(starts = malloc((nrec + 1) * sizeof *starts)))
		goto out;
	recs_end = len - (size_t)nrec * IDX_SIZE;
	for (k = 0, at_ = hdr; k < nrec; k++, at_ += r.size) {
		if (at_ > recs_end || rec_parse(v, recs_end, at_, &r) < 0)
			goto out;
		at[k] = (uint32_t)at_;
		if (rec_nests(&chk, stack, starts, &top, k, &r) < 0)
			goto out;
	}
	chk.index = v + recs_end;
	if (at_ == recs_end && index_ok(&chk, nrec))
		ret = nrec;
out:
	free(stack);
	free(starts);
	return ret;
}

/* The header's fields that tie the file to this walk: the key and the
 * tree's path. */
static int file_ours(const struct cd_scan_cache *c, const unsigned char *v, size_t len)
{
	size_t srclen = strlen(c->src);

	return len >= FILE_HDR && !memcmp(v, CACHE_MAGIC, 8) && u64_at(v + 8) == c->key &&
	       u32_at(v + 20) == srclen && FILE_HDR + srclen <= len &&
	       !memcmp(v + FILE_HDR, c->src, srclen);
}

/* The file checked by the service (tree-cache-held.c): its pages are
 * the service's, shared and sealed, the records' offsets after them; no
 * copy, no check here but that it is this walk's file. */
static int load_held(struct cd_scan_cache *c, int watch_fd, int fd)
{
	unsigned char *v;
	size_t size, len, at_off;
	uint32_t nrec;
	int mfd = cd_watch_cache_file(watch_fd, fd, &size);

	if (mfd < 0)
		return mfd;
	v = mmap(NULL, size, PROT_READ, MAP_SHARED | MAP_POPULATE, mfd, 0);
	close(mfd);
	if (v == MAP_FAILED)
		return -1;
	if (!cd_cache_held_layout(v, size, &len, &nrec, &at_off) || !file_ours(c, v, len)) {
		munmap(v, size);
		return -1;
	}
	c->old = v;
	c->oldmap = size;
	c->oldlen = len;
	c->at = (uint32_t *)(void *)(v + at_off);
	c->at_held = 1;
	c->nold = nrec;
	c->index = v + len - (size_t)nrec * IDX_SIZE;
	return 0;
}

/* Read and check the file for c->src: all of it, or nothing.  The
 * service's checked copy when it has or makes one (watch_fd: its
 * connection, or -1), else read and checked here.  -2 when the
 * connection is of no further use, else 0. */
int cd_cache_load(struct cd_scan_cache *c, int watch_fd)
{
	unsigned char *v = NULL;
	size_t got = 0;
	struct stat st;
	ssize_t n = 0;
	long nrec;
	int fd, held = -1;

	fd = openat(c->dirfd, c->fname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) || st.st_size < FILE_HDR || (uint64_t)st.st_size > CACHE_MAX_FILE)
		goto bad;
	if (watch_fd >= 0 && (held = load_held(c, watch_fd, fd)) == 0)
		goto done;
	/* its pages made in one call, not a fault each (a copy, not the
	 * file mapped: a file cut short under a mapping would be SIGBUS) */
	v = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (v == MAP_FAILED) {
		v = NULL;
		goto bad;
	}
	c->oldmap = (size_t)st.st_size;
	while (got < (size_t)st.st_size && (n = read(fd, v + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	if (n < 0 || got != (size_t)st.st_size || !file_ours(c, v, got) ||
	    !(c->at = malloc((got / (REC_HDR + IDX_SIZE) + 1) * sizeof *c->at)) ||
	    (nrec = cd_cache_check(v, got, c->at)) < 0)
		goto bad;
	c->old = v;
	c->oldlen = got;
	c->nold = (size_t)nrec;
	c->index = v + got - (size_t)nrec * IDX_SIZE;
done:
	close(fd);
	c->f_instance = u64_at(c->old + 40);
	c->f_gen = u64_at(c->old + 48);
	c->same = c->nold > 0;
	return held == -2 ? -2 : 0;
bad:
	free(c->at);
	c->at = NULL;
	c->old = NULL;
	c->index = NULL;
	cd_cache_unload_buf(v, c->oldmap);
	c->oldmap = 0;
	close(fd);
	c->f_instance = c->f_gen = 0;
	return held == -2 ? -2 : 0;
}

void cd_cache_unload_buf(unsigned char *v, size_t len)
{
	if (v)
		munmap(v, len);
}

int cd_cache_find(const struct cd_scan_cache *c, uint64_t dev, uint64_t ino, uint32_t *k)
{
	size_t lo = 0, hi = c->nold;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t m = u32_at(c->index + mid * IDX_SIZE);
		uint64_t d, i;

		rec_key(c, m, &d, &i);
		if (d == dev && i == ino) {
			*k = m;
			return 1;
		}
		if (d < dev || (d == dev && i < ino))
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* The file's records by path, made on first use. */
static int rel_index(struct cd_scan_cache *c)
{
	size_t cap = 16, k;
	struct rec r;

	while (cap < c->nold * 2)
		cap *= 2;
	if (!(c->by_rel = calloc(cap, sizeof *c->by_rel)))
		return -1;
	c->rel_cap = cap;
	for (k = 0; k < c->nold; k++) {
		size_t h;

		cd_cache_rec(c, (uint32_t)k, &r);
		h = (size_t)cd_cache_hash(r.rel, r.rel_len) & (cap - 1);
		while (c->by_rel[h])
			h = (h + 1) & (cap - 1);
		c->by_rel[h] = (uint32_t)(k + 1);
	}
	return 0;
}

int cd_cache_by_rel(struct cd_scan_cache *c, const char *rel, uint32_t *k)
{
	size_t rl = strlen(rel), h;
	struct rec r;

	if (!c->by_rel && (c->nold >= UINT32_MAX || rel_index(c) < 0)) {
		c->w_list = 0; /* each directory by its statx, as without a watcher */
		return 0;
	}
	h = (size_t)cd_cache_hash(rel, rl) & (c->rel_cap - 1);
	for (; c->by_rel[h]; h = (h + 1) & (c->rel_cap - 1)) {
		cd_cache_rec(c, c->by_rel[h] - 1, &r);
		if (r.rel_len == rl && !memcmp(r.rel, rel, rl)) {
			*k = c->by_rel[h] - 1;
			return 1;
		}
	}
	return 0;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The records of the directories the watcher listed, sorted.  One it
 * lists that has no record is not in any subtree recorded whole: made
 * since (its parent changed, and is listed), or not recorded. */
static int map_dirty(struct cd_scan_cache *c)
{
	size_t i;
	uint32_t k;

	c->dirty_mapped = 1;
	if (!c->w_ndirty)
		return 0;
	if (!(c->dirty_recs = malloc(c->w_ndirty * sizeof *c->dirty_recs))) {
		c->dirty_mapped = 0;
		return -1;
	}
	for (i = 0; i < c->w_ndirty; i++) {
		if (cd_cache_find(c, c->w_dirty[i].dev, c->w_dirty[i].ino, &k))
			c->dirty_recs[c->ndirty_recs++] = k;
	}
	qsort(c->dirty_recs, c->ndirty_recs, sizeof *c->dirty_recs, u32_cmp);
	return 0;
}

int cd_cache_dirty_in(struct cd_scan_cache *c, uint32_t first, uint32_t last)
{
	size_t lo = 0, hi;

	if (!c->dirty_mapped && map_dirty(c) < 0)
		return 1;
	hi = c->ndirty_recs;
	while (lo < hi) { /* the first listed record at or after first */
		size_t mid = lo + (hi - lo) / 2;

		if (c->dirty_recs[mid] < first)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->ndirty_recs && c->dirty_recs[lo] <= last;
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

/* out, made from the file read: its first nout records were written
 * as the file has them, and not copied (c->same) until now. */
static int out_materialize(struct cd_scan_cache *c)
{
	size_t i, cap = c->nout > 256 ? c->nout + 64 : 256, len;

	if (!c->same)
		return 0;
	c->same = 0;
	len = c->nout ? (c->nout < c->nold ? c->at[c->nout] : c->oldlen - c->nold * IDX_SIZE) -
	                        c->at[0]
	              : 0;
	if (!(c->outat = malloc(cap * sizeof *c->outat)) ||
	    !(c->out.v = malloc(c->oldlen > len ? c->oldlen : len + 1)))
		return -ENOMEM;
	c->outcap = cap;
	c->out.cap = c->oldlen > len ? c->oldlen : len + 1;
	for (i = 0; i < c->nout; i++)
		c->outat[i] = c->at[i] - c->at[0];
	if (len)
		memcpy(c->out.v, c->old + c->at[0], len);
	c->out.len = len;
	return 0;
}

/* Room for one more record of size bytes in out; -ENOMEM. */
static int out_room(struct cd_scan_cache *c, size_t size)
{
	if (out_materialize(c) < 0 || c->nout >= UINT32_MAX || c->out.len + size > CACHE_MAX_FILE)
		return -ENOMEM;
	if (c->nout == c->outcap) {
		size_t cap = c->outcap ? 2 * c->outcap : 256;
		uint32_t *v = realloc(c->outat, cap * sizeof *v);

		if (!v)
			return -ENOMEM;
		c->outat = v;
		c->outcap = cap;
	}
	c->outat[c->nout] = (uint32_t)c->out.len;
	return 0;
}

/* Is the record at p (size bytes) the file's own for its directory? */
static int same_as_old(const struct cd_scan_cache *c, const unsigned char *p, size_t size)
{
	uint32_t k;
	struct rec r;

	if (!c->nold || !cd_cache_find(c, u64_at(p), u64_at(p + 8), &k))
		return 0;
	cd_cache_rec(c, k, &r);
	return r.size == size && !memcmp(c->old + c->at[k], p, size);
}

int cd_cache_emit(struct cd_scan_cache *c, const unsigned char *hdr, const void *rel, size_t rl,
                  const void *items, size_t il)
{
	size_t size = pad8(REC_HDR + rl + il);
	struct rec r;

	if (c->same && c->nout < c->nold) {
		cd_cache_rec(c, (uint32_t)c->nout, &r);
		if (r.size == size && !memcmp(c->old + c->at[c->nout], hdr, REC_HDR) &&
		    !memcmp(r.rel, rel, rl) && !memcmp(r.items, items, il)) {
			c->nout++; /* the file's next record again */
			return 1;
		}
	}
	if (out_room(c, size) < 0 || buf_add(&c->out, hdr, REC_HDR) < 0 ||
	    buf_add(&c->out, rel, rl) < 0 || buf_add(&c->out, items, il) < 0 ||
	    buf_add(&c->out, "\0\0\0\0\0\0\0", size - REC_HDR - rl - il) < 0)
		return -ENOMEM;
	return same_as_old(c, c->out.v + c->outat[c->nout++], size);
}

int cd_cache_emit_old(struct cd_scan_cache *c, uint32_t k, const struct rec *r, uint32_t nsub,
                      uint32_t flags)
{
	unsigned char *p;

	if (c->same && k == c->nout && r->nsub == nsub && r->flags == flags) {
		c->nout++;
		return 0;
	}
	if (out_room(c, r->size) < 0 || buf_add(&c->out, c->old + c->at[k], r->size) < 0)
		return -ENOMEM;
	p = c->out.v + c->outat[c->nout++];
	memcpy(p + 40, &nsub, 4);
	memcpy(p + 44, &flags, 4);
	return 0;
}

static int idx_cmp(const void *a, const void *b)
{
	uint64_t x = u64_at(a), y = u64_at(b);

	if (x != y)
		return x < y ? -1 : 1;
	x = u64_at((const unsigned char *)a + 8);
	y = u64_at((const unsigned char *)b + 8);
	return x < y ? -1 : x > y;
}

/* The records of this walk and their index, to a temporary name renamed
 * over the tree's file (no fsync: a torn file fails its checksum). */
void cd_cache_write(struct cd_scan_cache *c)
{
	unsigned char hdr[FILE_HDR], *idx = NULL, *ks = NULL;
	struct buf f = { 0 };
	size_t i, at;
	char tmp[64];
	uint64_t u;
	uint32_t v;
	int fd, ok;

	if (out_materialize(c) < 0 || !(idx = malloc((c->nout + 1) * 24)) ||
	    !(ks = malloc((c->nout + 1) * IDX_SIZE)))
		goto out;
	for (i = 0; i < c->nout; i++) { /* dev, ino, k: sorted, then the k's */
		memcpy(idx + i * 24, c->out.v + c->outat[i], 16);
		v = (uint32_t)i;
		memcpy(idx + i * 24 + 16, &v, 4);
		memset(idx + i * 24 + 20, 0, 4);
	}
	qsort(idx, c->nout, 24, idx_cmp);
	for (i = 0; i < c->nout; i++) {
		if (i && !idx_cmp(idx + (i - 1) * 24, idx + i * 24))
			goto out; /* one directory at two paths */
		memcpy(ks + i * IDX_SIZE, idx + i * 24 + 16, IDX_SIZE);
	}
	memset(hdr, 0, sizeof hdr);
	ok = buf_add(&f, hdr, sizeof hdr) == 0 && buf_add(&f, c->src, strlen(c->src)) == 0 &&
	     buf_add(&f, "\0\0\0\0\0\0\0", pad8(f.len) - f.len) == 0 &&
	     buf_add(&f, c->out.v, c->out.len) == 0 && buf_add(&f, ks, c->nout * IDX_SIZE) == 0;
	if (!ok)
		goto out;
	memcpy(f.v, CACHE_MAGIC, 8);
	memcpy(f.v + 8, &c->key, 8);
	v = (uint32_t)c->nout;
	memcpy(f.v + 16, &v, 4);
	v = (uint32_t)strlen(c->src);
	memcpy(f.v + 20, &v, 4);
	memcpy(f.v + 40, &c->n_instance, 8);
	memcpy(f.v + 48, &c->n_gen, 8);
	at = pad8(FILE_HDR + strlen(c->src));
	u = f.len - at;
	memcpy(f.v + 24, &u, 8);
	u = cd_cache_hash(f.v + at, f.len - at);
	memcpy(f.v + 32, &u, 8);
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", c->fname, (long)getpid());
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		ok = cd_write_all(fd, f.v, f.len) == 0;
		ok = close(fd) == 0 && ok;
		if (!ok || renameat(c->dirfd, tmp, c->dirfd, c->fname) < 0)
			unlinkat(c->dirfd, tmp, 0);
	}
out:
	free(idx);
	free(ks);
	free(f.v);
}

/* tree-scan-int.h */
int cd_plan_stamps_hit(const struct cd_plan *p, const struct cd_watch_id *ids, size_t n)
{
	size_t h, i, u;

	for (h = 0; h < p->nheld; h++) {
		const struct cd_stamp_held *s = &p->held[h];

		for (i = 0; i < n; i++) {
			size_t lo = 0, hi = s->nrec;
			uint32_t k = UINT32_MAX;

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				uint32_t m = u32_at(s->index + mid * IDX_SIZE);
				uint64_t d = u64_at(s->map + s->at[m]),
				         in = u64_at(s->map + s->at[m] + 8);

				if (d == ids[i].dev && in == ids[i].ino) {
					k = m;
					break;
				}
				if (d < ids[i].dev || (d == ids[i].dev && in < ids[i].ino))
					lo = mid + 1;
				else
					hi = mid;
			}
			for (u = 0; k != UINT32_MAX && u < p->nruns; u++) {
				if (p->runs[u].held == h && p->runs[u].lo <= k &&
				    k <= p->runs[u].hi)
					return 1;
			}
		}
	}
	return 0;
}

int cd_plan_stamps_whole(struct cd_plan *p)
{
	size_t i;
	uint32_t k;
	struct rec r;

	for (i = 0; i < p->nruns; i++) {
		const struct cd_stamp_run *u = &p->runs[i];
		struct cd_stamp_held *h = &p->held[u->held];

		for (k = u->lo; k <= u->hi; k++) {
			struct cd_dir_stamp *s = &p->dirs[p->ndirs];

			rec_fields(h->map + h->at[k], &r);
			/* the room was kept when the run was (tree-cache.c) */
			if (u->held >= p->nheld || p->ndirs >= p->dirs_cap ||
			    h->names_cap - h->names_used < (size_t)r.rel_len + 1)
				return -1;
			s->rel = h->names + h->names_used;
			memcpy(s->rel, r.rel, r.rel_len);
			s->rel[r.rel_len] = '\0';
			h->names_used += (size_t)r.rel_len + 1;
			s->tree = u->tree;
			s->ctime_ns = r.ctime;
			s->gitdir = 0; /* a HEAD is an entry to visit: never in a run */
			s->dev = (dev_t)r.dev;
			s->ino = (ino_t)r.ino;
			p->ndirs++;
		}
	}
	p->nruns = 0;
	p->nrun_dirs = 0;
	return 0;
}
