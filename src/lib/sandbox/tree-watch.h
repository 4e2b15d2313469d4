/* tree-watch.h — which directories of the bound trees changed since an
 * earlier walk, from a watcher that holds inotify watches on them, so
 * that the walk (tree-cache.c) and the child's check after its mounts
 * (sandbox-verify.c) look at those alone instead of one statx each of
 * thousands of directories.
 *
 * The watcher (tree-watchd.c) runs in the user's service (`cordon
 * service`, a thread of its own, its own socket next to the audit one:
 * the same 0700 directory, masked in every sandbox, peers of another uid
 * closed unheard).  A directory's entries change only through calls
 * that report to its inotify watch (create, link, unlink, rename, and
 * the directory's own attributes); the watcher numbers each reading of
 * its queue (a generation), and answers "the directories with an event
 * since generation G" only for a tree it has watched whole since before
 * G.  Anything else — no service, another instance, a queue overflow, a
 * tree not (yet) watched whole, too many changes, a malformed answer —
 * is FULL: the caller checks every directory, as without a watcher.  So
 * the watcher can make a check cheaper, never weaker.
 *
 * Wire (one socket, native byte order: both ends are this binary on this
 * host): a request `struct cd_watch_req` then `pathlen` bytes of path (ASK)
 * or `ntrees` uint32 tree ids (SINCE); the answer `struct cd_watch_rep`
 * then `ndirty` `struct cd_watch_id`, sorted by (dev, ino), distinct.
 *   ASK:   watch the tree at path (its top must be dev/ino), and tell what
 *          changed since (instance, since); answers the tree's id.  A
 *          walk in another mount namespace than the watcher's does not
 *          use the answer (the same path may show other directories).
 *   SINCE: what changed since (instance, since) in the trees named.
 *   FILE:  the request carries a scan cache file's descriptor
 *          (SCM_RIGHTS); a LIST answer carries a sealed memfd holding
 *          that file checked (tree-cache-held.c), FULL none.  The check
 *          is made once per version of the file, in the service, not in
 *          each run that reads it.
 * Every answer first reads the whole inotify queue: an event of a call
 * that returned before the request was sent is counted.
 *
 * Files' own state (attrs): a chmod, or a capability set, moves no
 * directory's ctime, and inotify reports it to the parent's watch only
 * through the name it was made by (not another hard link, not a handle).
 * A watcher running as root also holds a fanotify mark on the whole
 * filesystem of each tree it watches (FAN_ATTRIB, every inode of it),
 * and looks at each file an event names: one that is now set-id or
 * carries file capabilities stops every tree on that filesystem from
 * vouching for its files' state before the next generation.  A list
 * says `attrs` when each tree it names had its mark before it was
 * watched whole and vouches so since `since`: then no regular file in
 * them became set-id or capable since `since`, and a root caller's
 * writable tree (whose set-id files the walk keeps read-only) can be
 * replayed from its records too. */
#ifndef CD_TREE_WATCH_H
#define CD_TREE_WATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CD_WATCH_MAGIC     0x32574443u /* "CDW2" */
#define CD_WATCH_DIRTY_MAX 4096        /* more changed directories: FULL */
#define CD_WATCH_TREES_MAX 64
#define CD_WATCH_SOCK_NAME "watch.sock"

enum { CD_WATCH_ASK = 1, CD_WATCH_SINCE = 2, CD_WATCH_FILE = 3 };
enum { CD_WATCH_LIST = 0, CD_WATCH_FULL = 1 };

struct cd_watch_req {
	uint32_t magic, op;
	uint64_t instance, since; /* as an earlier answer gave them; 0: none */
	uint64_t dev, ino;        /* ASK: the tree's top */
	uint32_t ntrees, pathlen;
};

struct cd_watch_rep {
	uint32_t magic, status;
	uint64_t instance, gen; /* the generation of this answer */
	uint32_t tree, ndirty;  /* ASK: the tree's id (0: not watched) */
	uint64_t mntns;         /* the watcher's mount namespace (its inode) */
	uint32_t attrs, pad;    /* LIST: files' own state vouched for too (above) */
};

struct cd_watch_id {
	uint64_t dev, ino;
};

/* The client side (the walk): a connection to the watcher's socket,
 * its peer checked to be our uid, reads and writes timed out after
 * 2 s; -1 when there is none (no service: every check is FULL). */
int cd_watch_connect(const char *sock);

/* ASK for the tree at path (top dev/ino).  0 and *rep (its ids in
 * *ids, malloc'd, the caller's) when the watcher answered, else -1.  A
 * FULL answer still carries the instance and generation to keep. */
int cd_watch_ask(int fd, const char *path, uint64_t dev, uint64_t ino, uint64_t instance,
                 uint64_t since, struct cd_watch_rep *rep, struct cd_watch_id **ids);

/* SINCE, for the child after its mounts: system calls only, no malloc.
 * The changed directories into ids (cap of them); returns their number,
 * or -1 for FULL (any failure included). */
long cd_watch_since(int fd, uint64_t instance, uint64_t since, const uint32_t *trees,
                    uint32_t ntrees, struct cd_watch_id *ids, size_t cap);

/* FILE: the service's checked copy of the scan cache file open at
 * filefd: a sealed memfd (its size in *size), or -1 (the caller reads
 * and checks the file itself); -2 when the connection is of no further
 * use (no answer: a service of an older cordon drops it). */
int cd_watch_cache_file(int fd, int filefd, size_t *size);

/* The descriptor passing both ends of FILE share: n bytes at p sent
 * with `pass` attached (-1: none), 0 or -1; n bytes received into p
 * (MSG_WAITALL) with the descriptors that came: the one in *got (else -1)
 * when exactly one came alone, every other closed and *bad set (also for
 * a cut-short control part); recvmsg's count. */
int cd_watch_send_fd(int sock, const void *p, size_t n, int pass);
ssize_t cd_watch_recv_fd(int sock, void *p, size_t n, int *got, int *bad);

/* Is (dev, ino) one of ids (sorted)? */
int cd_watch_has(const struct cd_watch_id *ids, size_t n, uint64_t dev, uint64_t ino);

/* The watcher (tree-watchd.c): listen on dir/CD_WATCH_SOCK_NAME and
 * serve until the process exits.  *active is set to the time (CLOCK_
 * MONOTONIC seconds) of the last request, for the service's idle exit.
 * Returns only on a setup failure (-errno). */
int cd_watchd_serve(const char *dir, volatile uint64_t *active);

#endif
