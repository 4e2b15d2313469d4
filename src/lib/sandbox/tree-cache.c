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
 * With the watcher's list, a run costs the records, not a lookup each:
 * the file keeps the records in the walk's post-order, so a directory's
 * subtree is the run of records ending at its own, and its plain
 * subdirectories' records are found by position (named as the items
 * say).  A subtree recorded whole (a unit: no other kind of directory
 * among its items, each plain subdirectory a unit too; checked when the
 * file is read) in which the watcher lists no directory is replayed from
 * its records alone: each one's stamp, count and visits, no path
 * looked up, no statx.  What the walk writes while it reproduces the
 * file record for record is not copied (cd_cache_emit): a file that
 * still holds is not written again.
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
 * ignored whole: the tree is walked as without it (the format, the
 * checks and the lookups: tree-cache-file.c).
 */
#include "tree-cache-int.h"

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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define EXT4_MAGIC  0xEF53
#define XFS_MAGIC   0x58465342
#define BTRFS_MAGIC 0x9123683E
#define TMPFS_MAGIC 0x01021994

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
	c->key = cd_cache_key(o);
	clock_gettime(CLOCK_REALTIME, &now);
	c->start_ns = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
	*ret = c;
	return 0;
}

void cd_tree_cache_begin(struct walk *w, const char *src)
{
	struct cd_scan_cache *c = w->cache;
	uint64_t h;
	size_t i;

	if (!c)
		return;
	for (h = 0xcbf29ce484222325ULL, i = 0; i <= strlen(src); i++)
		h = (h ^ (unsigned char)src[i]) * 0x100000001b3ULL; /* FNV-1a: the file's name */
	snprintf(c->fname, sizeof c->fname, "%c-%016llx", w->suid_matters ? 's' : 't',
	         (unsigned long long)h);
	c->suid = w->suid_matters;
	c->src = src;
	c->active = 1;
	/* the service's checked copy of the file, on the connection the
	 * watcher's question (cd_tree_cache_watch) will use */
	if (w->watch_fd == -2 && w->o->watch_sock && w->stamp && !w->list_only && !w->link_pass &&
	    (w->watch_fd = cd_watch_connect(w->o->watch_sock)) < 0)
		w->watch_fd = -1;
	c->run_names = NULL;
	if (cd_cache_load(c, w->watch_fd) == -2) {
		close(w->watch_fd); /* cd_tree_cache_watch connects again */
		w->watch_fd = -2;
	}
	if (c->nold && w->stamp)
		cd_tree_stamp_room(w, c->nold + 16); /* else the stamps grow as they come */
	c->rootfd = c->nold ? open(src, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	c->root_checked = 0;
	c->hint = -1;
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
		cd_cache_write(c);
	if (c->rootfd >= 0)
		close(c->rootfd);
	c->rootfd = -1;
	if (c->run_names) {
		/* stamp runs name its records: the plan keeps the file read
		 * (its slot was made with the first run: cannot fail here) */
		struct cd_stamp_held *h = &w->p->held[w->p->nheld++];

		h->map = c->old;
		h->maplen = c->oldmap;
		h->at = c->at;
		h->at_owned = !c->at_held;
		h->index = c->index;
		h->nrec = (uint32_t)c->nold;
		h->names = c->run_names;
		h->names_cap = c->oldlen;
		h->names_used = 0;
		c->old = NULL;
		c->oldmap = 0;
		c->at = NULL;
		c->run_names = NULL;
	}
	cd_cache_unload_buf(c->old, c->oldmap);
	c->oldmap = 0;
	if (!c->at_held)
		free(c->at);
	c->at_held = 0;
	free(c->out.v);
	free(c->outat);
	free(c->kids);
	free(c->w_dirty);
	free(c->dirty_recs);
	free(c->by_rel);
	c->old = NULL;
	c->at = NULL;
	c->index = NULL;
	memset(&c->out, 0, sizeof c->out);
	c->outat = c->kids = c->dirty_recs = c->by_rel = NULL;
	c->w_dirty = NULL;
	c->nout = c->outcap = c->nkids = c->ndirty_recs = c->w_ndirty = c->rel_cap = 0;
	c->dirty_mapped = c->same = 0;
	c->hint = -1;
	c->w_list = c->w_attrs = c->suid = 0;
	c->f_instance = c->f_gen = c->n_instance = c->n_gen = 0;
	c->n_tree = 0;
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

/* A record's header: dev, ino, ctime, nentries, nitems, rel_len, items_len, nsub, flags. */
static void rec_header(unsigned char *h, uint64_t dev, uint64_t ino, int64_t ctime,
                       const uint32_t v[6])
{
	memcpy(h, &dev, 8);
	memcpy(h + 8, &ino, 8);
	memcpy(h + 16, &ctime, 8);
	memcpy(h + 24, v, 6 * sizeof *v);
}

/* The directory at depth (b) is done: its record goes out after those of
 * everything below it, a unit when its items allow it and each plain
 * subdirectory's record went out as one.  r: the record read (k: the
 * file's record k replayed, else k < 0).  1: the file's own record for
 * the directory read, 0: not, -1: out of memory. */
static int close_rec(struct cd_scan_cache *c, unsigned depth, const struct build *b,
                     const struct rec *r, int64_t k)
{
	unsigned char h[REC_HDR];
	uint32_t v[6];
	int e;

	v[0] = r->nentries;
	v[1] = r->nitems;
	v[2] = r->rel_len;
	v[3] = r->items_len;
	v[4] = (uint32_t)(c->nout - b->first + 1);
	v[5] = b->unit_ok && b->nunit == b->nplain ? REC_UNIT : 0;
	if (k >= 0) {
		e = cd_cache_emit_old(c, (uint32_t)k, r, v[4], v[5]);
	} else {
		rec_header(h, r->dev, r->ino, r->ctime, v);
		e = cd_cache_emit(c, h, r->rel, r->rel_len, r->items, r->items_len);
	}
	if (e < 0) {
		c->failed = 1;
		return -1;
	}
	if (v[5] && depth > 0)
		c->b[depth - 1].nunit++;
	return e;
}

static void build_open(struct cd_scan_cache *c, struct build *b)
{
	b->first = c->nout;
	b->nplain = b->nunit = 0;
	b->unit_ok = 1;
}

static int replay(struct walk *w, uint32_t k, size_t plen, unsigned depth, int unit);
static int unit_whole(struct walk *w, uint32_t k, const struct rec *top, unsigned depth);

/* The subdirectory `name` of the directory being replayed (w->path,
 * plen bytes, at depth; fd: its descriptor, or -1), from record k. */
static int replay_kid(struct walk *w, int fd, uint32_t k, const char *name, size_t nl, size_t plen,
                      unsigned depth, int unit)
{
	int rv;

	if (plen + 1 + nl + 1 >= sizeof w->path || depth + 1 > SCAN_MAX_DEPTH)
		return cd_tree_enter(w, fd, name, plen, depth); /* refused there */
	w->path[plen] = '/';
	memcpy(w->path + plen + 1, name, nl + 1);
	rv = replay(w, k, plen + 1 + nl, depth + 1, unit);
	w->path[plen] = '\0';
	return rv == 1 ? cd_tree_enter(w, fd, name, plen, depth) : rv;
}

/* The records of record k's subdirectories, pushed on c->kids last
 * first (each subtree ends where the one before it ends); how many: all
 * of them or none. */
static size_t push_kids(struct cd_scan_cache *c, uint32_t k, const struct rec *r)
{
	int64_t j = (int64_t)k - 1, lo = (int64_t)k + 1 - r->nsub;
	size_t n = 0;
	struct rec s;

	if (!c->kids && !(c->kids = malloc(c->nold * sizeof *c->kids)))
		return 0;
	while (j >= lo) {
		if (c->nkids >= c->nold) { /* cannot be, the load's checks say: none */
			c->nkids -= n;
			return 0;
		}
		c->kids[c->nkids++] = (uint32_t)j;
		cd_cache_rec(c, (uint32_t)j, &s);
		j -= s.nsub;
		n++;
	}
	return n;
}

/* The directory at w->path (plen bytes, at depth) as record k says: the
 * entries that need it visited again are visited, its subdirectories
 * walked.  With the watcher's list, a subdirectory's record is the next
 * subtree in the file when it is named so (records follow the items'
 * order), and a subtree the watcher lists no change in whose top is a
 * unit (unit: k lies in one) is replayed from its records alone: it
 * costs its records, not a lookup and a check each.  1 when it must be
 * read instead (nothing done yet). */
static int replay(struct walk *w, uint32_t k, size_t plen, unsigned depth, int unit)
{
	struct cd_scan_cache *c = w->cache;
	struct build *b = depth < CD_ARRAY_SIZE(c->b) ? &c->b[depth] : NULL;
	size_t idx = w->p->ndirs, base = c->nkids, nk = 0, next = 0;
	const unsigned char *p;
	struct stat st;
	struct rec r, s;
	uint32_t i;
	int fd = -1, head = 0, need = 0, rv = 0;

	if (!b)
		return 1;
	cd_cache_rec(c, k, &r);
	if (depth > 0 && c->w_list &&
	    (unit || ((r.flags & REC_UNIT) && !cd_cache_dirty_in(c, k + 1 - r.nsub, k))) &&
	    (rv = unit_whole(w, k, &r, depth)) != 1)
		return rv;
	if (unit && !r.nitems) {
		/* a unit's leaf (most of them): nothing to visit, nothing below */
		if ((w->stamp && (rv = cd_tree_stamp_id(w, r.dev, r.ino, r.ctime)) < 0) ||
		    (rv = cd_tree_count(w, r.nentries)) < 0)
			return rv;
		build_open(c, b);
		if (close_rec(c, depth, b, &r, k) == 0)
			c->nused++;
		return 0;
	}
	for (i = 0, p = r.items; i < r.nitems && !need; i++) {
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
		if (fstat(fd, &st) < 0 || st.st_dev != r.dev || st.st_ino != r.ino ||
		    cd_tree_ctime_ns(&st) != r.ctime) {
			close(fd);
			return 1;
		}
	}
	if (w->stamp && (rv = cd_tree_stamp_id(w, r.dev, r.ino, r.ctime)) < 0)
		goto out;
	if ((rv = cd_tree_count(w, r.nentries)) < 0)
		goto out;
	build_open(c, b);
	unit = unit ||
	       (c->w_list && (r.flags & REC_UNIT) && !cd_cache_dirty_in(c, k + 1 - r.nsub, k));
	if (c->w_list && r.nsub > 1)
		nk = push_kids(c, k, &r);
	for (i = 0, p = r.items; i < r.nitems && rv == 0; i++) {
		const char *name = (const char *)p + 2;
		size_t nl = strlen(name);
		int64_t kid = -1;

		head |= name[0] == 'H' && !strcmp(name, "HEAD");
		if (unit && p[1] && b->nplain < nk) {
			/* a unit's subtrees are its plain items (checked on load) */
			rv = replay_kid(w, fd, c->kids[base + nk - 1 - b->nplain], name, nl, plen,
			                depth, 1);
			goto next;
		}
		if (!unit && next < nk) {
			cd_cache_rec(c, c->kids[base + nk - 1 - next], &s);
			if (cd_cache_child_named(&r, &s, name, nl))
				kid = c->kids[base + nk - 1 - next++];
		}
		if (p[1] && kid >= 0 && !cd_watch_has(c->w_dirty, c->w_ndirty, s.dev, s.ino)) {
			rv = replay_kid(w, fd, (uint32_t)kid, name, nl, plen, depth, 0);
		} else {
			c->hint = kid; /* cd_tree_cache_dir's lookup, if the walk gets there */
			rv = p[1] ? cd_tree_enter(w, fd, name, plen, depth)
			          : cd_tree_visit(w, fd, name, p[0], plen, depth);
			c->hint = -1;
		}
	next:
		b->nplain += p[1];
		if (!p[1] && (p[0] == DT_DIR || p[0] == DT_UNKNOWN))
			b->unit_ok = 0;
		w->path[plen] = '\0';
		p += 2 + nl + 1;
	}
	c->nkids = base;
	if (rv == 0 && head)
		cd_tree_mark_gitdir(w, idx);
	if (rv == 0 && close_rec(c, depth, b, &r, k) == 0)
		c->nused++;
out:
	if (fd >= 0)
		close(fd);
	return rv;
}

/* Stamp records lo..hi (a subtree the watcher saw no change in) as a
 * run of the plan's (plan.h): the file read is kept for them.  0, or 1
 * when the plan cannot keep it (stamped one by one instead). */
static int stamp_run(struct walk *w, uint32_t lo, uint32_t hi)
{
	struct cd_scan_cache *c = w->cache;
	struct cd_plan *p = w->p;
	struct cd_stamp_run *last = p->nruns ? &p->runs[p->nruns - 1] : NULL;
	size_t n = (size_t)hi - lo + 1;

	if (!p->trees[w->tree].complete)
		return 0; /* stamped no more: as cd_tree_stamp_id */
	if (p->ndirs + p->nrun_dirs + n > STAMP_MAX) {
		p->trees[w->tree].complete = 0; /* the check walks the whole tree instead */
		return 0;
	}
	if (!c->run_names) {
		/* this tree's first run: the plan's slot for the file, and room
		 * for the paths of its records (fewer bytes than the file) */
		if (p->nheld == p->held_cap) {
			size_t cap = p->held_cap ? 2 * p->held_cap : 4;
			struct cd_stamp_held *v = realloc(p->held, cap * sizeof *v);

			if (!v)
				return 1;
			p->held = v;
			p->held_cap = cap;
		}
		c->run_names = mmap(NULL, c->oldlen, PROT_READ | PROT_WRITE,
		                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (c->run_names == MAP_FAILED) {
			c->run_names = NULL;
			return 1;
		}
	}
	if (cd_tree_stamp_room(w, n) < 0)
		return 1;
	if (last && last->tree == w->tree && last->held == p->nheld && last->hi + 1 == lo) {
		last->hi = hi; /* siblings' subtrees follow each other */
	} else {
		if (p->nruns == p->runs_cap) {
			size_t cap = p->runs_cap ? 2 * p->runs_cap : 64;
			struct cd_stamp_run *v = realloc(p->runs, cap * sizeof *v);

			if (!v)
				return 1;
			p->runs = v;
			p->runs_cap = cap;
		}
		p->runs[p->nruns++] = (struct cd_stamp_run){ w->tree, (uint32_t)p->nheld, lo, hi };
	}
	p->nrun_dirs += n;
	return 0;
}

/* A subtree the watcher saw no change in, recorded whole (records
 * k+1-nsub..k, the directory at w->path at depth being k), replayed as a
 * block: its entries counted, its records kept as the file has them,
 * its directories stamped as a run.  1 when an entry in it needs a visit
 * (a name the walk acts on: the records are replayed one by one). */
static int unit_whole(struct walk *w, uint32_t k, const struct rec *top, unsigned depth)
{
	struct cd_scan_cache *c = w->cache;
	uint32_t lo = k + 1 - top->nsub, j, i;
	size_t entries = 0;
	struct rec r;
	int rv;

	for (j = lo; j <= k; j++) {
		const unsigned char *p;

		cd_cache_rec(c, j, &r);
		for (i = 0, p = r.items; i < r.nitems; i++) {
			if (!p[1])
				return 1;
			p += 2 + strlen((const char *)p + 2) + 1;
		}
		if (w->srclen + 1 + r.rel_len + 1 >= sizeof w->path)
			return 1; /* refused where the walk gets there */
		entries += r.nentries;
	}
	if (w->stamp && stamp_run(w, lo, k) == 1)
		return 1;
	if ((rv = cd_tree_count(w, entries)) < 0)
		return rv;
	if (c->same && c->nout == lo) {
		c->nout = (size_t)k + 1; /* the file's own records again */
	} else {
		for (j = lo; j <= k && !c->failed; j++) {
			cd_cache_rec(c, j, &r);
			if (cd_cache_emit_old(c, j, &r, r.nsub, r.flags) < 0)
				c->failed = 1;
		}
	}
	c->nused += top->nsub;
	if (depth > 0)
		c->b[depth - 1].nunit++;
	return 0;
}

/* The descriptor the replays look paths up from was opened before the
 * walk pinned the tree's top (tree-root.c): the same directory still?
 * Else (a directory above exchanged in between) nothing is replayed:
 * the walk reads the tree, and the file is written anew.  Checked on the
 * first lookup, the top's, which comes after the pin. */
static int root_moved(struct walk *w, struct cd_scan_cache *c)
{
	const struct cd_mount *m = &w->p->mounts[w->mount];
	struct stat st;

	c->root_checked = 1;
	if (c->rootfd < 0 || ((m->flags & CD_MNT_SRC_PINNED) && fstat(c->rootfd, &st) == 0 &&
	                      st.st_dev == m->src_dev && st.st_ino == m->src_ino))
		return 0;
	close(c->rootfd);
	c->rootfd = -1;
	c->nold = 0;
	return 1;
}

/* 1, *k and *r: the file's record of the directory at rel (the hint a
 * replay left, when it is that one's; else by path). */
static int lookup(struct cd_scan_cache *c, const char *rel, uint32_t *k, struct rec *r)
{
	int64_t h = c->hint;

	c->hint = -1;
	if (h >= 0) {
		cd_cache_rec(c, (uint32_t)h, r);
		if (r->rel_len == strlen(rel) && !memcmp(r->rel, rel, r->rel_len)) {
			*k = (uint32_t)h;
			return 1;
		}
	}
	if (!cd_cache_by_rel(c, rel, k))
		return 0;
	cd_cache_rec(c, *k, r);
	return 1;
}

/* Walk the directory `name` of dfd (w->path, plen bytes; dfd < 0: by
 * w->path) at `depth` from its record, when it has one and it still
 * holds.  1: no record (read it), else the walk's result. */
int cd_tree_cache_dir(struct walk *w, int dfd, const char *name, size_t plen, unsigned depth)
{
	struct cd_scan_cache *c = w->cache;
	const char *rel = rel_of(w);
	struct statx sx;
	struct rec r;
	uint64_t dev;
	uint32_t k;
	int64_t ct;
	int at = dfd, flags = AT_SYMLINK_NOFOLLOW;

	if (!c || !c->active || !c->nold || (c->suid && !(c->w_list && c->w_attrs)))
		return 1;
	if (!c->root_checked && root_moved(w, c))
		return 1;
	/* no event on it (nor on a directory above, or its path would have
	 * led the walk elsewhere) since its record was checked: as it was */
	if (c->w_list && *rel && lookup(c, rel, &k, &r) &&
	    !cd_watch_has(c->w_dirty, c->w_ndirty, r.dev, r.ino))
		return replay(w, k, plen, depth, 0);
	if (c->suid && *rel)
		return 1; /* a chmod moves no directory's ctime */
	/* by its path below the tree's top (the top itself: the descriptor
	 * opened at the start): fewer components to look up */
	if (dfd < 0 && c->rootfd >= 0) {
		at = c->rootfd;
		name = rel;
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
	if (ct > c->start_ns - STAMP_GUARD_NS || !cd_cache_find(c, dev, sx.stx_ino, &k))
		return 1;
	cd_cache_rec(c, k, &r);
	if (r.ctime != ct || r.rel_len != strlen(rel) || memcmp(r.rel, rel, r.rel_len) ||
	    !trusted(c, dev, w->path))
		return 1;
	/* a root caller's writable top: its files' state vouched for by the
	 * watcher (w_attrs), its entries by the ctime, and no event on it */
	if (c->suid && cd_watch_has(c->w_dirty, c->w_ndirty, dev, sx.stx_ino))
		return 1;
	return replay(w, k, plen, depth, 0);
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
	build_open(c, b);
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
	b->nplain += (uint32_t)plain;
	if (!plain && (type == DT_DIR || type == DT_UNKNOWN))
		b->unit_ok = 0; /* its visit may walk it: not replayed by position */
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
	struct rec r = { 0 };
	struct build *b;

	if (!c || !c->active || depth >= CD_ARRAY_SIZE(c->b) || !c->b[depth].keep || !ok)
		return;
	b = &c->b[depth];
	r.dev = b->dev;
	r.ino = b->ino;
	r.ctime = b->ctime;
	r.nentries = b->nentries;
	r.nitems = b->nitems;
	r.rel_len = (uint32_t)strlen(rel);
	r.items_len = (uint32_t)b->len;
	r.rel = (const unsigned char *)rel;
	r.items = b->v;
	/* read again but as the file has it (a directory listed for an
	 * event that changed nothing): no reason to write the file again */
	switch (close_rec(c, depth, b, &r, -1)) {
	case 1:
		c->nused++;
		break;
	case 0:
		c->nnew++;
		break;
	}
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
