/* tree-watchd-int.h — the tree watcher's state (tree-watchd.c), shared
 * with its part that watches files' own state (tree-watch-attrs.c). */
#ifndef CD_TREE_WATCHD_INT_H
#define CD_TREE_WATCHD_INT_H

#include "tree-watch.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/inotify.h>
#include <time.h>

#define LOG_SIZE  65536u  /* events remembered: an older `since` is FULL */
#define DIRS_MAX  100000u /* watched directories, over all trees */
#define TREES_MAX CD_WATCH_TREES_MAX
#define DEPTH_MAX 64
#define RETRY_S   60
#define DIR_MASK                                                                                   \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF |        \
	 IN_MOVE_SELF | IN_ONLYDIR)

struct wdir {
	int wd; /* 0: a free slot */
	uint32_t tree;
	uint64_t dev, ino;
	char *rel; /* below its tree's top; "" for the top */
};

struct wtree {
	char *path; /* NULL: a free slot */
	uint64_t dev, ino;
	int complete;
	int attrs;             /* its filesystem was marked before its pass */
	uint64_t fsid;         /* that filesystem's (statfs f_fsid, as fanotify names it) */
	uint64_t complete_gen; /* watched whole since this generation */
	uint64_t attrs_gen;    /* ... its files' own state since this one */
	time_t failed_at;      /* a pass failed then: not before RETRY_S */
};

struct logent {
	uint64_t gen, dev, ino;
};

struct wstate {
	int in, lfd, ep, mi;
	int fan;                      /* the fanotify group (root only), or -1 */
	uint64_t instance, cur, lost; /* lost: the highest generation overwritten in the log */
	uint64_t mntns;               /* our mount namespace's inode, for the clients */
	struct wdir *dirs;            /* open addressing by wd */
	size_t cap, ndirs;
	struct wtree trees[TREES_MAX + 1]; /* ids are 1.. */
	struct logent *log;
	size_t logn; /* entries ever logged */
	char dents[32768];
};

/* Tree t's top, opened by its path (O_PATH), if it is still the
 * directory first asked about; -1 if not (tree-watchd.c). */
int cd_watchd_top_open(const struct wtree *t);

/* tree-cache-held.c: FILE (tree-watch.h).  A sealed memfd of the scan
 * cache file open at fd, checked once per version; -1 if none. */
int cd_cache_held_fd(int fd);

/* tree-watch-attrs.c: files' own state (tree-watch.h, `attrs`). */

/* A new fanotify group for s (root only; the old one and its marks let
 * go), its events tagged `tag` in s->ep; s->fan is -1 without one. */
void cd_watchd_attrs_open(struct wstate *s, uint32_t tag);

/* Mark the filesystem of tree t (its top at topfd) before its pass:
 * 1 when marked (the tree may then vouch for its files' state). */
int cd_watchd_attrs_mark(struct wstate *s, struct wtree *t, int topfd);

/* Read the whole fanotify queue: each file an event names looked at. */
void cd_watchd_attrs_drain(struct wstate *s);

#endif
