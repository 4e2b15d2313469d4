/* tree-cache-int.h — the scan cache's state, shared by the walk's side
 * (tree-cache.c), the file's (tree-cache-file.c, which owns the
 * format) and the service's checked copies (tree-cache-held.c).  Not
 * for use outside those. */
#ifndef CORDON_TREE_CACHE_INT_H
#define CORDON_TREE_CACHE_INT_H

#include "tree-scan-int.h"
#include "tree-watch.h"

#include <stdint.h>

#define CACHE_FS_MAX   16
#define CACHE_MAX_FILE (64u << 20) /* larger: not read */
#define REC_HDR        48 /* dev, ino, ctime, nentries, nitems, rel_len, items_len, nsub, flags */

/* A record: one directory as the walk read it.  The file keeps them in
 * the walk's post-order (each directory after everything below it), so
 * the records of a directory's subtree are the nsub ones ending at its
 * own.  REC_UNIT: the subtree is recorded whole (each plain
 * subdirectory has its record, in the order of the items, and is a unit
 * too; no other item is a directory), so a subtree the watcher lists no
 * change in is replayed from the records alone (tree-cache.c). */
#define REC_UNIT 1u

struct rec {
	uint64_t dev, ino;
	int64_t ctime;
	uint32_t nentries, nitems, rel_len, items_len, nsub, flags;
	const unsigned char *rel, *items;
	size_t size; /* the whole record, padded */
};

/* The record of the directory being read or replayed at one depth. */
struct build {
	unsigned char *v; /* the items read so far */
	size_t len, cap;
	uint32_t nitems, nentries;
	uint64_t dev, ino;
	int64_t ctime;
	int keep;        /* recordable (trusted filesystem, ctime old enough) */
	size_t first;    /* records written before it: the subtree is what follows */
	uint32_t nplain; /* plain subdirectories among its items */
	uint32_t nunit;  /* ... the records of those that are units */
	int unit_ok;     /* no item is another kind of directory */
};

struct buf {
	unsigned char *v;
	size_t len, cap;
};

struct cd_scan_cache {
	int dirfd;
	uint64_t key;
	int64_t start_ns; /* CLOCK_REALTIME when this scan began */
	/* the tree being walked */
	int active;
	int failed;       /* out of memory while recording: no file this time */
	int rootfd;       /* the tree's top (O_PATH): lookups relative to it, or -1 */
	int root_checked; /* ... found to be the top the walk pinned (root_moved) */
	char fname[40];
	const char *src;
	unsigned char *old;         /* the file read, or NULL */
	size_t oldlen, oldmap;      /* its length; its buffer's (mmap) */
	uint32_t *at;               /* record k's offset in old */
	int at_held;                /* ... in the service's copy (not malloc'd) */
	char *run_names;            /* stamp runs of this tree use the file read: the
	                             * plan keeps it (cd_tree_cache_end), and this
	                             * room for their paths (mmap, oldlen bytes) */
	const unsigned char *index; /* old's (dev, ino, k), sorted */
	size_t nold, nused, nnew;
	struct buf out;  /* the records of this walk, in post-order */
	uint32_t *outat; /* ... each one's offset in out */
	size_t nout, outcap;
	int same;       /* ... so far the file's own first nout: not copied */
	int64_t hint;   /* the record a replay found for the directory entered next */
	uint32_t *kids; /* a unit's subdirectories' records (a stack) */
	size_t nkids;
	struct build b[SCAN_MAX_DEPTH + 2];
	struct {
		uint64_t dev;
		int trusted;
	} fs[CACHE_FS_MAX];
	size_t nfs;
	/* The tree watcher (tree-watch.h): the answer the file's records
	 * were checked after (f_), this walk's answer (n_), and when it
	 * listed the directories changed since the file's: those (sorted),
	 * their records (sorted, made on first use), and the file's records
	 * by path, for the others. */
	uint64_t f_instance, f_gen, n_instance, n_gen;
	uint32_t n_tree;
	int w_list;
	int w_attrs; /* ... and vouched for files' own state */
	int suid;    /* this tree's set-id files matter: records only by the watcher */
	struct cd_watch_id *w_dirty;
	size_t w_ndirty;
	uint32_t *dirty_recs;
	size_t ndirty_recs;
	int dirty_mapped; /* dirty_recs made (else: every range is dirty) */
	uint32_t *by_rel; /* open addressing: k + 1 */
	size_t rel_cap;
};

/* tree-cache-file.c */
uint64_t cd_cache_key(const struct cd_plan_opts *o);
uint64_t cd_cache_hash(const void *p, size_t n);
/* The checks of a file's bytes alone (not whose walk it is for): its
 * records' offsets into at (room for len / 52 + 1); their number, or -1. */
long cd_cache_check(const unsigned char *v, size_t len, uint32_t *at);
/* Read and check the file for c->src (watch_fd: the service's
 * connection for its checked copy, or -1); -2 when that connection is
 * of no further use, else 0. */
int cd_cache_load(struct cd_scan_cache *c, int watch_fd);
void cd_cache_unload_buf(unsigned char *v, size_t len);
void cd_cache_write(struct cd_scan_cache *c);
/* Record k of the file read (checked whole when it was loaded). */
void cd_cache_rec(const struct cd_scan_cache *c, uint32_t k, struct rec *r);
/* Is child's path parent's and then `name`? */
int cd_cache_child_named(const struct rec *parent, const struct rec *child, const char *name,
                         size_t nl);
/* 1 and *k: the record of the directory (dev, ino). */
int cd_cache_find(const struct cd_scan_cache *c, uint64_t dev, uint64_t ino, uint32_t *k);
/* 1 and *k: the record of the directory at rel (relative to the top). */
int cd_cache_by_rel(struct cd_scan_cache *c, const char *rel, uint32_t *k);
/* Does the watcher list a change in records first..last? */
int cd_cache_dirty_in(struct cd_scan_cache *c, uint32_t first, uint32_t last);
/* Add one record to out (post-order), made from its parts (1: it is the
 * file's own record for that directory, byte for byte, else 0), or
 * record k of the file read with the subtree's size and flags of this
 * walk (0); -ENOMEM. */
int cd_cache_emit(struct cd_scan_cache *c, const unsigned char *hdr, const void *rel, size_t rl,
                  const void *items, size_t il);
int cd_cache_emit_old(struct cd_scan_cache *c, uint32_t k, const struct rec *r, uint32_t nsub,
                      uint32_t flags);

/* tree-cache-held.c: a file checked once, held by the service.  A held
 * copy's layout (v, size as mapped): 1 and the file's length,
 * its number of records and where their offsets begin; 0 if malformed. */
int cd_cache_held_layout(const unsigned char *v, size_t size, size_t *len, uint32_t *nrec,
                         size_t *at_off);

#endif
