/* tree-scan-int.h — what the tree walk's files share: tree-scan.c (the
 * walk and what it covers), tree-creds.c (credential files, hard links
 * across trees, set-id files), tree-planted.c (the check after the run),
 * tree-names.c (the names they know, casefolded directories),
 * tree-targets.c (what a host-run file names).  Not for other modules. */
#ifndef CD_TREE_SCAN_INT_H
#define CD_TREE_SCAN_INT_H

#include "util/bounds.h"
#include "plan-int.h"

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define SCAN_MAX_DEPTH  64
#define KEY_SNIFF_BYTES (1024 * 1024) /* a larger .pem is covered unread */
/* Directories remembered for the child's check after the mounts and the
 * check after the run: more than a walk can meet (its entries over every
 * tree, CD_SOCKET_SCAN_MAX, plus each tree's top), so that no tree the
 * walk accepts goes unchecked for being large. */
#define STAMP_MAX      (CD_SOCKET_SCAN_MAX + CD_PLAN_MAX_MOUNTS + 1)
#define STAMP_GUARD_NS 1000000000LL /* changed within 1 s before the walk: read again */
#define CRED_DIR_MAX   10000        /* entries of a linked credential directory */
#define CRED_NAMES_MAX 4096         /* names of credentials with other names, remembered */

/* The walk retries (cd_plan_build) on -EAGAIN with this; %s the tree. */
#define CD_TREE_TOP_MOVED                                                                          \
	"'%s' was renamed, or an entry at its top made or removed, while cordon checked "          \
	"it (a concurrent rename?): its covers may not fit what is mounted; refused"
#define WHY_SOCKET     "host socket"
#define WHY_CREDENTIAL "credential file"
#define WHY_HOST_RUN   "runs on the host: read-only"
#define WHY_GIT        "git control path: read-only"
#define WHY_GIT_NAMED  "named by a git config or hook: read-only"
#define WHY_SETUID     "setuid or setgid file: read-only"
#define WHY_FCAPS      "file with capabilities: read-only"
#define WHY_CRED_LINK  "credential file (a symlink with a credential's name points to it)"
#define WHY_RO_LINK    "another name of a file in a read-only tree: read-only"
#define WHY_BECAME_GIT "became a git directory: git run in it or below reads its config"
#define WHY_BAD_HEAD   "its HEAD no longer parses: git skips it and uses a git directory above"
#define WHY_UNREADABLE "unreadable directory: contents not checked"
#define WHY_REPLACED   "another file than before the run now has this path (replaced or renamed in)"
#define WHY_VIA_LINK   "a directory above it is now a symlink: the host follows it elsewhere"
#define WHY_REWRITTEN  "rewritten during the run (through another name)"
#define WHY_LINK_OUT   "a symlink to a directory the check does not read: the host follows it"
#define WHY_TOO_DEEP   "nested too deep to check: contents not checked"
#define WHY_TOP_MOVED                                                                              \
	"the tree was renamed or exchanged during the run: the paths reported name where it was"
#define WHY_TOO_LONG "holds a path longer than PATH_MAX: contents not checked"

struct ino {
	dev_t dev;
	ino_t ino;
	nlink_t nlink; /* credlinks: the names it has ... */
	size_t found;  /* ... and how many of them the walks met */
};

struct inoset {
	struct ino *v;
	size_t n, cap;
	int sorted;
};

struct cd_scan_cache;

struct cred_pat {
	const char *full, *base; /* the pattern; the name it ends in */
	size_t blen;
	int suffix; /* "*.EXT": base is ".EXT"; 2: "*WORD*", base is "WORD*" */
};

struct walk {
	struct cd_plan *p;
	const struct cd_plan_opts *o;
	struct cd_err *err;
	size_t seen;
	const char *src, *dest; /* the bind being walked (host, inside) */
	size_t srclen;          /* 0 when src is "/" */
	int sockets;            /* cover host sockets */
	int creds;              /* cover credential files */
	int protect;            /* keep host-run paths read-only (a writable tree) */
	int writable;           /* the sandbox can write the tree (also --scratch DIR) */
	int suid_matters;       /* root caller, and the host honours setuid there (not nosuid) */
	int setid_hit;          /* the entry just visited is set-id or capable (kept read-only) */
	size_t *stamp_order;    /* cd_plan_planted: plan->dirs' indexes in (tree, path) order */
	int list_only;          /* cd_plan_planted: list, mount nothing */
	size_t first;           /* the plan's first user mount */
	size_t mount;           /* the mount being walked (plan->mounts[mount]) */
	int stamp;              /* remember each directory's ctime (plan->dirs) */
	size_t tree;            /* ... as part of plan->trees[tree] */
	struct cred_pat cred[64];
	size_t ncred;
	/* Hard links, across every bound tree (a name in one tree reads and
	 * writes the same bytes as a name in another): */
	struct inoset credlinks;          /* covered credentials with other names */
	struct inoset shared;             /* files with other names in the writable trees */
	struct inoset ro;                 /* ... of which one name lies in a read-only tree */
	int want_shared;                  /* a read-only tree is walked too: collect `shared` */
	int link_pass;                    /* walking again for those other names only */
	struct cd_scan_cache *cache;      /* the tree being walked uses it: or NULL */
	struct cd_scan_cache *scan_cache; /* what earlier walks found (tree-cache.c) */
	int watch_fd; /* the tree watcher (tree-watch.h): -1 none, -2 not tried */
	char **names; /* the credlinks names met: "DEV:INO:PATH", each once */
	size_t nnames;
	size_t cred_seen; /* entries read in linked credential directories */
	char ***list;     /* host-run paths found (relative to src), or NULL */
	size_t *nlist;
	char incomplete[256]; /* list_only: why the check missed something ("" if not) */
	char path[CD_PATH_MAX];
	char *dents[SCAN_MAX_DEPTH + 2]; /* getdents64 buffers, one per depth, made on use */
};

/* A directory with the casefold attribute (ext4, f2fs, tmpfs with
 * chattr +F) looks names up ignoring case, with Unicode folding: there
 * `.GIT/Config` is the host git's `.git/config`, and `.vſcode` (a long s)
 * its editor's `.vscode`.  Names are compared with strcmp, so in such a
 * directory each name the walk knows is looked up by the kernel once,
 * and an entry with the same inode is taken under the known name. */
#define FOLD_MAX 192
struct fold {
	size_t n;
	ino_t ino[FOLD_MAX];
	const char *name[FOLD_MAX];
};

/* tree-names.c */
int cd_tree_fold_probe(int dfd, int force, struct fold *ret);
const char *cd_tree_fold_name(const struct fold *f, ino_t ino, const char *name);
int cd_tree_is_host_run(const char *name);
int cd_tree_is_reported(const char *name);
int cd_tree_host_run_path(const char *path, size_t len, const char *name);
int cd_tree_host_run_base(const char *name);
int cd_tree_python_name(const char *name);
int cd_tree_python_run(int dfd, const char *path, size_t len, const char *name);

/* tree-targets.c */
int cd_tree_run_targets(struct walk *w, int dfd, const char *name, size_t len);
int cd_tree_objects_info(char *path, size_t len);
int cd_tree_git_targets(struct walk *w, const char *gd, const char *top);
int cd_tree_git_above(struct walk *w);
int cd_tree_path_dirs(struct walk *w);
/* Each directory a ".." of path (absolute, as written) is taken from,
 * in this tree: held, or the run refused (tree-targets.c, way_dir). */
int cd_tree_dotdot_ways(struct walk *w, const char *path);
int cd_tree_list_state(struct walk *w, const char *dir);
int cd_tree_content_runs(int dfd, const char *name);

/* tree-scan.c */
int cd_tree_list_add_why(struct walk *w, const char *rel, const char *why);
int cd_tree_list_add(struct walk *w, const char *host);
int cd_tree_incomplete(struct walk *w, const char *rel, const char *why);
int cd_tree_has_dest(const struct cd_plan *p, const char *dest, enum cd_mount_kind kind);
int cd_tree_cover(struct walk *w, const char *host, enum cd_mount_kind kind, unsigned flags,
                  const char *why);
int cd_tree_pin(struct walk *w, const char *host);
int cd_tree_is_gitdir(const char *dir);
int cd_tree_head_parses(const char *dir);
int64_t cd_tree_ctime_ns(const struct stat *st);
void cd_tree_file_id(const struct stat *st, struct cd_file_id *ret);
int cd_tree_walk_dir(struct walk *w, int dfd, size_t len, unsigned depth);
int cd_tree_enter(struct walk *w, int dfd, const char *name, size_t len, unsigned depth);
int cd_tree_visit(struct walk *w, int dfd, const char *name, unsigned char type, size_t len,
                  unsigned depth);
int cd_tree_stamp_id(struct walk *w, dev_t dev, ino_t ino, int64_t ctime_ns);
int cd_tree_stamp_room(struct walk *w, size_t n);
int cd_tree_count(struct walk *w, size_t n);
void cd_tree_mark_gitdir(struct walk *w, size_t idx);
int cd_tree_unopenable(struct walk *w, int dfd, const char *name, int e);
int cd_tree_walk_tree(struct walk *w, const char *src, const char *dest);
void cd_tree_walk_free(struct walk *w);
int cd_tree_stamp_cmp(const void *a, const void *b);

/* tree-cache.c */
/* Ask the tree watcher about the stamped tree at src (its top pinned as
 * st) before it is walked: its id and generation for the child, and for
 * the cache which directories changed since the cache's file. */
void cd_tree_cache_watch(struct walk *w, const char *src, const struct stat *st);
/* The walk's end (r its result): the watcher's connection goes to the
 * plan for the child when it answered, else it is closed. */
void cd_tree_cache_watch_end(struct walk *w, int r);
int cd_tree_cache_new(const struct cd_plan_opts *o, struct cd_scan_cache **ret);
void cd_tree_cache_free(struct cd_scan_cache *c);
int cd_tree_cache_in_tree(const struct cd_plan *p, size_t first, const struct cd_plan_opts *o);
void cd_tree_cache_begin(struct walk *w, const char *src);
void cd_tree_cache_end(struct walk *w, int ok);
int cd_tree_cache_dir(struct walk *w, int dfd, const char *name, size_t plen, unsigned depth);
void cd_tree_cache_read_begin(struct walk *w, unsigned depth, const struct stat *st);
int cd_tree_cache_item(struct walk *w, unsigned depth, const char *name, unsigned char type,
                       size_t dir_len);
void cd_tree_cache_read_end(struct walk *w, unsigned depth, int ok);

/* Is one of ids (the watcher's list) a directory of a stamp run? */
struct cd_watch_id;
int cd_plan_stamps_hit(const struct cd_plan *p, const struct cd_watch_id *ids, size_t n);
/* Make the plan's stamp runs (plan.h) into stamps, appended to dirs in
 * the room kept for them (no malloc: the child calls it too); the
 * stamps are then in no order.  0, or -1 if the room was not there. */
int cd_plan_stamps_whole(struct cd_plan *p);

/* tree-root.c */
int cd_tree_source_open(struct walk *w, const char *src, struct stat *ret_st);
int cd_tree_root_opened(struct walk *w, int fd, const char *src);
int cd_tree_root_unchanged(struct walk *w, int keep, const char *src);
int cd_tree_planned_fit(struct walk *w, int fd);
int cd_tree_mask_file(struct walk *w, const struct stat *st, const char *dest);
int cd_tree_walk_file(struct walk *w, int fd, const struct stat *st, const char *src,
                      const char *dest);
int cd_tree_pin_source(struct walk *w, struct cd_mount *m, const char *host);
int cd_tree_pin_planned(struct walk *w, const char *dest, const char *host);
int cd_tree_hold_dirs(struct walk *w, const char *host);
int cd_tree_hold_in(struct walk *w, size_t i, const char *host);
/* 0: the walk can search dfd (w->path), 1: skip it, < 0: refused. */
int cd_tree_searchable(struct walk *w, int dfd);
int cd_tree_shadowed(const struct cd_plan *p, size_t first, size_t i, const char *dest);

/* tree-planted.c */
int cd_tree_link_leaves(struct walk *w, int dfd, const char *name);

/* tree-creds.c */
int cd_tree_suffix_is(const char *path, size_t len, const char *tail);
void cd_tree_creds_init(struct walk *w);
int cd_tree_is_credential(struct walk *w, int dfd, const char *name, size_t nl, size_t len,
                          int link);
int cd_tree_file_is_credential(struct walk *w, int fd, const struct stat *st, const char *name,
                               size_t nl, size_t len);
int cd_tree_cred_maybe(struct walk *w, const char *name, size_t nl, size_t len);
/* Could the sandbox chmod the entry of status st, unreadable to us (the
 * caller's own, in a writable tree or the proposal overlay)? */
int cd_tree_chmodable(const struct walk *w, const struct stat *st);
int cd_tree_note_links(struct walk *w, int dfd, const char *name);
int cd_tree_note_cred(struct walk *w, const struct stat *st);
int cd_tree_cred_bound_file(struct walk *w, const struct stat *st, const char *src,
                            const char *dest);
int cd_tree_links_missing(const struct walk *w, dev_t dev);
void cd_tree_creds_free(struct walk *w);
int cd_tree_cover_views(struct walk *w, const char *host, const char *why);
int cd_tree_link_visit(struct walk *w, int dfd, const char *name);
int cd_tree_note_ro_link(struct walk *w, int dfd, const char *name);
int cd_tree_note_pinned(struct walk *w, const char *path);
int cd_tree_inoset_add(struct walk *w, struct inoset *s, dev_t dev, ino_t ino, nlink_t nlink);
int cd_tree_credential_link(struct walk *w, int dfd, const char *name, size_t nl, size_t len);
/* 1: set-id, 2: carries file capabilities (root callers only), 0: neither. */
int cd_tree_is_setid(struct walk *w, int dfd, const char *name);
int cd_tree_suid_honoured(const char *src);
int cd_tree_mounts_below(const char *src);

#endif
