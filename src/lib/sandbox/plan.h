/* plan.h — a profile resolved into what one sandbox run will do.
 *
 * The plan is built and checked in the supervisor (where allocation and
 * errors are fine) and then handed, read-only, to the sandbox child, which
 * may only make system calls.  So every path, string and number the child
 * needs is in here, precomputed: canonical host sources, normalized
 * destinations in mount order, the exact envp, the PATH search list.
 *
 * Trust: the plan's inputs come from the operator (options, profile); the
 * child treats host paths as hostile at the time it mounts them (they may
 * have been swapped for symlinks since the plan was built) and re-checks.
 */
#ifndef CD_PLAN_H
#define CD_PLAN_H

#include "util/err.h"
#include "landlock.h"
#include "util/limits.h"
#include "seccomp.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum cd_mount_kind {
	CD_MNT_BIND,       /* bind a host file or directory (src) at dest */
	CD_MNT_TMPFS,      /* a fresh tmpfs of `size` bytes at dest */
	CD_MNT_PROC,       /* a new procfs for the sandbox's pid namespace */
	CD_MNT_SYMLINK,    /* a symlink at dest pointing to src */
	CD_MNT_FILE,       /* a generated file at dest holding content */
	CD_MNT_DIR,        /* an empty directory at dest */
	CD_MNT_MASK,       /* hide dest: /dev/null over a file, empty ro tmpfs over a dir */
	CD_MNT_REMOUNT_RO, /* make the existing mount at dest read-only */
	CD_MNT_DEVPTS,     /* a new devpts instance of the sandbox's own at dest */
	CD_MNT_OVERLAY,    /* overlayfs at dest: src the read-only lower layer;
			    * upper and work on a fresh tmpfs of `size` bytes and
			    * `inodes` inodes (proposal mode) */
	CD_MNT_HOLD,       /* a directory above a covered credential: what the
			    * sandbox shows at dest (covers included) cloned over
			    * itself after every other mount, so it cannot be
			    * renamed or removed (EBUSY); pinned like a cover */
};

/* Mount flags. */
#define CD_MNT_RW       0x01u /* writable (binds and tmpfs); read-only otherwise */
#define CD_MNT_OPTIONAL 0x02u /* skip silently when the source is missing */
#define CD_MNT_EXEC     0x04u /* tmpfs: allow exec (scratch: compile and run) */
#define CD_MNT_DEV      0x08u /* bind of a device node: keep it usable */
/* Root caller: a bind never idmapped (idmap.h); host owners stay, access
 * is the sandbox's own host id's. */
#define CD_MNT_PLAIN 0x10u
/* MASK, REMOUNT_RO planned by the tree walk: the path must still name the
 * file the walk judged (pin_dev, pin_ino) when the child mounts it, else
 * the run is refused (a concurrent rename moved it). */
#define CD_MNT_PINNED 0x20u
/* BIND, OVERLAY whose source the tree walk read: the mount is made from
 * the descriptor the walk opened and judged (src_fd: a root caller's
 * supervisor clones it, idmap.h), or, where the path must be opened again
 * (the rootless child: a mount of another namespace cannot be cloned), it
 * must be that directory or file (src_dev, src_ino; a file also its
 * src_ctime_ns), else the run is refused (exchanged with another by a
 * concurrent rename, or rewritten: its covers and read-only paths, or
 * its judgement as a credential, were made for the one the walk read). */
#define CD_MNT_SRC_PINNED 0x40u

struct cd_mount {
	enum cd_mount_kind kind;
	unsigned flags;
	char *src;     /* BIND: canonical host path; SYMLINK: target; NULL otherwise */
	char *dest;    /* normalized absolute path inside the sandbox */
	char *content; /* FILE: the bytes */
	size_t content_len;
	uint64_t size;   /* TMPFS, OVERLAY (its layer): bytes */
	uint64_t inodes; /* OVERLAY: inodes of its layer */
	unsigned mode;   /* TMPFS/DIR/FILE: permission bits */
	const char *why; /* static: why a host path is covered or kept read-only
			  * (recorded as covered_paths), or NULL */
	dev_t pin_dev;   /* CD_MNT_PINNED: the file the walk judged */
	ino_t pin_ino;
	dev_t src_dev; /* CD_MNT_SRC_PINNED: the source the walk read */
	ino_t src_ino;
	int64_t src_ctime_ns; /* its ctime when the walk opened it */
	int src_fd; /* ... opened there by the walk (O_PATH), or -1; the plan's to close */
};

/* Which walls the plan asks for; the result reports which were up. */
#define CD_WALL_USERNS   0x001u
#define CD_WALL_MOUNTNS  0x002u
#define CD_WALL_PIDNS    0x004u
#define CD_WALL_NETNS    0x008u
#define CD_WALL_IPCNS    0x010u
#define CD_WALL_UTSNS    0x020u
#define CD_WALL_CGROUPNS 0x040u
#define CD_WALL_NNP      0x080u /* no_new_privs */
#define CD_WALL_CAPS     0x100u /* every capability set empty */
#define CD_WALL_SECCOMP  0x200u
#define CD_WALL_LANDLOCK 0x400u

struct cd_plan {
	/* The command. */
	char **argv; /* NULL-terminated */
	size_t argc;
	char **envp; /* NULL-terminated NAME=VALUE; secret entries flagged below */
	size_t envc;
	unsigned char *env_secret; /* envc flags: 1 when envp[i] carries a secret */
	char **path_dirs;          /* PATH search list inside the sandbox, NULL-terminated */
	char *cwd;                 /* working directory inside */

	/* The filesystem, in the order the child builds it. */
	struct cd_mount *mounts;
	size_t nmounts;

	/* Identity inside and outside. */
	uid_t uid, gid;           /* inside: unprivileged, never 0 */
	uid_t host_uid, host_gid; /* mapped from: the invoking user, or for root
				   * the run's own id of root's range (idslot.h) */
	long id_slot;             /* with idmap: that id's slot in root's range */
	int idmap;                /* root caller: the caller's trees are bound
				   * through idmapped mounts (idmap.h) */
	char *hostname;
	char *rootfs; /* an image's root (canonical host path), or NULL */
	char *image;  /* cordon run --image: "FORMAT DIGEST CACHE FILE" (the record's), or
	               * NULL; in rootfs's allocation */

	struct cd_limits limits;
	unsigned walls; /* CD_WALL_* requested */

	/* Second walls, prepared here so the child only makes system calls. */
	int landlock_abi; /* 0: Landlock not used (only with allow_degraded) */
	struct cd_landlock_path *ll_paths;
	size_t nll;
	struct cd_landlock_spec landlock;
	struct cd_seccomp_prog seccomp; /* len 0: not used (only with allow_degraded) */
	int allow_degraded;             /* the operator accepted running without a missing wall */
	int no_inet;                    /* cd_plan_opts.no_inet */
	/* The container's own seccomp profile, stacked after cordon's filter
	 * (len 0: none); rules skipped for naming calls unknown here. */
	struct cd_seccomp_prog seccomp_spec;
	unsigned seccomp_spec_skipped;
	unsigned proxy_port; /* egress: the proxy listens on 127.0.0.1:proxy_port inside;
			      * Landlock lets TCP connect to it alone; 0: no egress */
	char *scratch_host;  /* --scratch DIR (canonical) or NULL for tmpfs */
	char *profile;       /* name, for the result */
	int tty;             /* the command's stdio is a fresh pty of the sandbox's own devpts
		  * (cordon shell); the controller goes to the supervisor */
	/* seccomp, also refusing memfds and System V IPC: for a memory limit
	 * that no cgroup enforces (quotas.h) */
	struct cd_seccomp_prog seccomp_nocg;
	/* The trees the sandbox can write and the host runs files from later
	 * (workspace-write's working tree, --rw directories): the git control
	 * paths and host-run files found in them before the run, as absolute
	 * host paths (cd_plan_planted reports the ones that appear).  Each
	 * string is "PATH\0REASON" (REASON empty for an ordinary new path). */
	char **host_run;
	size_t nhost_run;
	struct cd_file_id *host_run_id; /* what each of them was (host_run[i]) */
	/* ... and every directory of them with its ctime then (in the walk's
	 * order; looked up by tree and path), so the check after the run reads only the directories
	 * that changed (a tree not `complete` is walked whole instead).  The
	 * other walked trees (read-only binds) are stamped too, not
	 * `planted`: the child checks every stamped tree after its mounts
	 * (sandbox-verify.c). */
	struct cd_stamped_tree *trees;
	size_t ntrees;
	size_t nplanted; /* of them `planted` (checked after the run) */
	struct cd_dir_stamp *dirs;
	struct cd_name_chunk *dir_names; /* where their rel strings live (one malloc per 64 KiB) */
	size_t ndirs, dirs_cap;
	/* ... and blocks of them not made yet: a subtree the scan cache
	 * replayed whole, with no change the watcher saw (tree-cache.c), is
	 * stamped by its records in the cache file the plan keeps mapped.
	 * Made into `dirs` (cd_plan_stamps_whole: no malloc, the room is
	 * kept) only when a check must look at a directory the watcher did
	 * not vouch for; a run in a tree nothing changed in makes none. */
	struct cd_stamp_run *runs;
	size_t nruns, runs_cap, nrun_dirs; /* nrun_dirs: room kept in dirs */
	struct cd_stamp_held *held;
	size_t nheld, held_cap;
	int64_t scan_ns; /* CLOCK_REALTIME when the walk began */
	/* The tree watcher (tree-watch.h), when it answered (watch_instance
	 * not 0; else watch_fd means nothing): a connection to it, closed
	 * by cd_plan_free, its instance, and the oldest generation it
	 * answered this walk with — the child asks it which stamped
	 * directories changed since (sandbox-verify.c). */
	int watch_fd;
	uint64_t watch_instance, watch_since;
};

struct cd_stamped_tree {
	char *root;        /* host path, canonical */
	int complete;      /* every directory of it is in cd_plan.dirs */
	int planted;       /* a writable tree: checked after the run; else stamped
		       * only for the child's check that nothing moved into it
		       * between the walk and the mounts */
	size_t mount;      /* its bind in cd_plan.mounts */
	int fd;            /* its top as the walk opened it (O_PATH, -1 if none): the
		       * check after the run reads the directory the sandbox
		       * had, wherever it is now, not whatever has its path */
	uint32_t watch_id; /* the tree watcher's id for it (tree-watch.h), 0: none */
};

struct cd_name_chunk;

/* Records lo..hi (the walk's post-order: a subtree) of held[held]. */
struct cd_stamp_run {
	size_t tree;
	uint32_t held, lo, hi;
};

/* A scan cache file the plan keeps mapped for its stamp runs. */
struct cd_stamp_held {
	unsigned char *map;
	size_t maplen;
	uint32_t *at;               /* record k's offset in map */
	int at_owned;               /* ... malloc'd (else in the map: the service's copy) */
	const unsigned char *index; /* the file's (dev, ino) order of its records */
	uint32_t nrec;
	char *names; /* room for the runs' paths when made whole (mmap) */
	size_t names_cap, names_used;
};
void cd_name_chunks_free(struct cd_name_chunk *c);

struct cd_dir_stamp {
	char *rel;        /* relative to its tree's root; "" for the root */
	size_t tree;      /* index in cd_plan.trees */
	int64_t ctime_ns; /* its ctime when the walk read it */
	int gitdir;       /* a git directory then (its HEAD must still parse after) */
	dev_t dev;        /* the directory itself: one renamed away and replaced */
	ino_t ino;        /* by another at the same path is read whole */
};

/* A file as lstat saw it: the same path after the run may name another
 * file (the directory above renamed and rebuilt), or the same inode may
 * have been rewritten through another name (its ctime moves; a
 * directory's ctime moves with every entry, so only its inode counts). */
struct cd_file_id {
	dev_t dev;
	ino_t ino;
	int64_t ctime_ns;
	int dir;
	int known; /* lstat succeeded */
};

/* What the caller (the CLI, later the gate) asks for.  Everything is
 * optional; the defaults are the strict profile of SPEC.md. */
struct cd_plan_bind {
	const char *src;  /* host path, as given */
	const char *dest; /* NULL: same as src */
	int rw;
};

struct cd_plan_opts {
	char *const *argv;    /* required, argv[0] non-empty */
	const char *host_cwd; /* directory exposed read-only and used as cwd; required */
	const struct cd_plan_bind *binds;
	size_t nbinds;
	char *const *env; /* NAME=VALUE entries, already resolved */
	size_t nenv;
	char *const *secrets; /* NAME=VALUE entries, never logged */
	size_t nsecrets;
	const char *lang;               /* LANG to pass; NULL: C.UTF-8 */
	const char *term;               /* TERM to pass; NULL: none */
	const char *lc_all;             /* LC_ALL to pass; NULL: none */
	const char *scratch_host;       /* --scratch DIR */
	const struct cd_limits *limits; /* NULL: defaults */
	uid_t host_uid, host_gid;       /* the caller's, or root's slot (idslot.h) */
	long id_slot;                   /* with idmap: the slot's index */
	int idmap;                      /* the caller is root: see cd_plan.idmap */
	int binds_plain;                /* with idmap: the binds are not idmapped
					 * (CD_MNT_PLAIN: the OCI runtime's spec
					 * binds, host paths the caller did not name) */
	const char *profile;
	int allow_degraded;   /* run without walls the kernel lacks (recorded) */
	int skip_socket_scan; /* do not cover host Unix sockets in bound dirs (git
			       * control paths and credentials are covered anyway) */
	int egress;           /* reach the network through cordon's proxy only */
	int no_inet;          /* AF_INET and AF_INET6 sockets refused (seccomp): the
			       * network namespace is one cordon did not make (a
			       * pod's), where UDP would leave the host; not with egress */
	/* A container's own seccomp profile (the OCI spec's): a second filter
	 * stacked on cordon's, so it only narrows.  NULL: none. */
	const struct cd_seccomp_profile *seccomp_profile;
	int tty;          /* cordon shell: a pty of its own devpts as stdio */
	int cwd_writable; /* workspace-write: the cwd is writable, except
			     * cd_protected_workspace_paths, kept read-only */
	/* cordon's own files (audit log, state database, keys): never
	 * visible inside.  Their directory is masked where a read-only bind
	 * would show it; a writable bind over it (which could swap the
	 * directory under cordon) refuses the run. */
	const char *const *private_paths;
	size_t nprivate;
	/* Proposal mode: the cwd is an overlay with the real tree as the
	 * read-only lower layer; its upper and work directories live on a
	 * tmpfs made inside the sandbox (limits->propose_size and
	 * propose_inodes), handed to the caller after the run
	 * (cd_sandbox_io.on_layer); writes never reach the real tree. */
	int overlay;
	/* Refused unless allow_home: a working directory or bind that is or
	 * contains a login account's home, root's or caller_home ($HOME). */
	int allow_home;
	const char *caller_home;
	/* The caller's $XDG_CONFIG_HOME, $GIT_CONFIG_GLOBAL and
	 * $GIT_CONFIG_SYSTEM (NULL: unset): git configuration the host's
	 * git reads besides the repository's (gitcfg.h), whose named paths
	 * a writable tree keeps read-only. */
	const char *caller_xdg_config_home, *caller_git_config_global, *caller_git_config_system;
	const char *caller_git_template_dir; /* $GIT_TEMPLATE_DIR */
	/* The caller's $PATH: its directories inside a writable tree are
	 * kept read-only (the host runs what is there by name). */
	const char *caller_path;
	/* Globs of further credential files to cover in every bound tree
	 * (the profile's cover_files): without '/' matched against the file
	 * name at any depth, with '/' against the path below the bind. */
	const char *const *cover_files;
	size_t ncover_files;
	/* An image's root (the OCI runtime's bundle, cordon run --rootfs):
	 * its top-level entries are bound read-only in place of the host's
	 * system directories and cordon's /etc, with cordon's /proc, /dev and
	 * /tmp.  With inside_cwd (the OCI runtime) host_cwd is unused and
	 * nothing of the host is bound unless `binds` says so; without it the
	 * host working directory is bound on top as in any run.  Binds may
	 * then go under /etc (the image's). */
	const char *rootfs;
	const char *inside_cwd; /* with rootfs: the working directory inside, or NULL */
	/* With rootfs unpacked from an image (cordon run --image): "FORMAT
	 * sha256:HEX CACHE FILE", CACHE being "unpacked" (by this run) or
	 * "cached"; recorded in the intent and the plan's description. */
	const char *image;
	const char *hostname; /* NULL: "cordon" */
	/* Fresh writable tmpfs directories (noexec, the scratch size each)
	 * at these absolute paths, e.g. an image's /run. */
	const char *const *tmpfs_dirs;
	size_t ntmpfs;
	/* A directory of the caller's own (made 0700 if missing) where the
	 * walk of the bound trees keeps what it found in each directory
	 * between runs (tree-cache.c); never used when it lies in a bound
	 * tree.  NULL: every tree is read whole each run. */
	const char *scan_cache;
	/* The tree watcher's socket (tree-watch.h), or NULL: each directory
	 * is looked at by the walk and again by the child after its mounts. */
	const char *watch_sock;
};

/* Fill `lim` with the strict profile's defaults. */
void cd_limits_default(struct cd_limits *lim);

/* Build and check a plan.  On success *ret owns everything and must be
 * freed with cd_plan_free().  Errors: -CD_E_USAGE for bad options (with a
 * message naming the option), -errno for host paths that cannot be
 * resolved, -CD_E_LIMIT past the caps in bounds.h. */
int cd_plan_build(const struct cd_plan_opts *o, struct cd_plan **ret, struct cd_err *err);

/* After a run: the git control paths and host-run files (profile.h) now
 * in a writable tree (workspace-write's working tree, --rw directories)
 * that were not there before, or that are another file than before (by
 * device and inode; a file by its ctime too), in *ret (ret_n entries;
 * free each and the vector): relative to the working directory for its
 * tree ("." for the tree itself), absolute host paths for the others.
 * Each string is followed by a second one after its NUL: why, empty for a
 * new path (else: replaced or rewritten, a directory that became a git
 * directory, a git directory whose HEAD no longer parses, one that cannot
 * be read, one that was not checked).
 * Returns 0 when every writable tree was checked whole, 1 when the check
 * is incomplete (err says why; *ret still holds everything found, which
 * includes the directories left unchecked), -ENOMEM with nothing. */
int cd_plan_planted(const struct cd_plan *p, char ***ret, size_t *ret_n, struct cd_err *err);

/* Free a plan, wiping secret environment entries.  NULL-safe. */
void cd_plan_free(struct cd_plan *p);

struct stat;

/* Is st (a source opened again at m->src, without following symlinks)
 * the one the walk read there (CD_MNT_SRC_PINNED): the same device and
 * inode, and for a file, judged by its content, the same ctime too?  1
 * also when m is not pinned.  System calls only: the child calls it. */
int cd_mount_source_is(const struct cd_mount *m, const struct stat *st);

/* Describe the plan as JSON text (for --dry-run); secrets appear as names
 * only.  Returns a malloc'd string or NULL on ENOMEM. */
char *cd_plan_describe(const struct cd_plan *p);

/* The image a plan's root came from (cordon run --image), for the run's
 * records: {format, digest, cache, file, rootfs}, or JSON null.  New reference. */
struct json_t;
struct json_t *cd_plan_image_json(const struct cd_plan *p);

#endif
