/* landlock.h — Landlock, the sandbox's second filesystem and network wall.
 *
 * Trust boundary: the rules are built by the supervisor (trusted) from the
 * plan; cd_landlock_apply() runs in the sandbox child between clone and
 * execve, after pivot_root and no_new_privs and before seccomp.  It makes
 * raw system calls only (no malloc, no stdio) and is async-signal-safe.
 *
 * What each ABI adds, and what this module does with it:
 *   ABI 1  filesystem: execute, read/write file, read dir, remove dir/file,
 *          make char/dir/reg/sock/fifo/block/sym — all handled
 *   ABI 2  fs REFER (link/rename across directories) — handled
 *   ABI 3  fs TRUNCATE (truncate, O_TRUNC) — handled
 *   ABI 4  net BIND_TCP, CONNECT_TCP — handled: connect denied except
 *          spec->connect_port, bind denied when spec->deny_bind
 *   ABI 5  fs IOCTL_DEV (ioctl on device files opened after restriction) —
 *          handled; granted only by cd_landlock_fs_dev()
 *   ABI 6  scopes: abstract unix sockets, signals — spec->scope
 *   ABI 7  audit logging flags for restrict_self — spec->log_new_exec
 * Every filesystem right the ABI knows is handled, so whatever a rule does
 * not grant is denied.  UDP, raw sockets and named unix sockets are not
 * Landlock's to deny at these ABIs: the empty network namespace and the
 * mount plan are the walls there. */
#ifndef CD_LANDLOCK_H
#define CD_LANDLOCK_H

#include <stddef.h>
#include <stdint.h>

/* The rights, defined here because Debian 12's <linux/landlock.h> stops at
 * ABI 2.  Values are the kernel's uapi. */
#define CD_LL_FS_EXECUTE     (1ULL << 0)
#define CD_LL_FS_WRITE_FILE  (1ULL << 1)
#define CD_LL_FS_READ_FILE   (1ULL << 2)
#define CD_LL_FS_READ_DIR    (1ULL << 3)
#define CD_LL_FS_REMOVE_DIR  (1ULL << 4)
#define CD_LL_FS_REMOVE_FILE (1ULL << 5)
#define CD_LL_FS_MAKE_CHAR   (1ULL << 6)
#define CD_LL_FS_MAKE_DIR    (1ULL << 7)
#define CD_LL_FS_MAKE_REG    (1ULL << 8)
#define CD_LL_FS_MAKE_SOCK   (1ULL << 9)
#define CD_LL_FS_MAKE_FIFO   (1ULL << 10)
#define CD_LL_FS_MAKE_BLOCK  (1ULL << 11)
#define CD_LL_FS_MAKE_SYM    (1ULL << 12)
#define CD_LL_FS_REFER       (1ULL << 13) /* ABI 2 */
#define CD_LL_FS_TRUNCATE    (1ULL << 14) /* ABI 3 */
#define CD_LL_FS_IOCTL_DEV   (1ULL << 15) /* ABI 5 */

#define CD_LL_NET_BIND_TCP    (1ULL << 0) /* ABI 4 */
#define CD_LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */

#define CD_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define CD_LL_SCOPE_SIGNAL               (1ULL << 1) /* ABI 6 */

/* The rights that may be granted on a non-directory. */
#define CD_LL_FS_FILE_RIGHTS                                                                       \
	(CD_LL_FS_EXECUTE | CD_LL_FS_WRITE_FILE | CD_LL_FS_READ_FILE | CD_LL_FS_TRUNCATE |         \
	 CD_LL_FS_IOCTL_DEV)

/* The highest ABI this module knows; a newer kernel is used at this ABI. */
#define CD_LANDLOCK_ABI_MAX 7

/* cd_landlock_path.flags */
#define CD_LANDLOCK_OPTIONAL 1u /* skip the rule when the path does not exist */

struct cd_landlock_path {
	const char *path; /* as seen inside the sandbox; caller-owned */
	uint64_t access;  /* CD_LL_FS_* rights granted beneath it */
	unsigned flags;   /* CD_LANDLOCK_* */
};

struct cd_landlock_spec {
	const struct cd_landlock_path *paths;
	size_t npaths;
	int connect_port; /* 0: every TCP connect denied; else only to this port */
	int deny_bind;    /* TCP bind denied (to every port) */
	uint64_t scope;   /* CD_LL_SCOPE_*; needs ABI >= 6 */
	int log_new_exec; /* ABI >= 7: denials after execve reach the kernel audit log */
};

/* The kernel's Landlock ABI version, 0 when Landlock is unavailable
 * (not built, disabled at boot, or blocked by seccomp). */
int cd_landlock_abi(void);

/* Masks right for `abi` (0 when abi < 1):
 *   read:  execute, read file, read dir
 *   write: read plus write file, remove dir/file, make dir/reg/sock/fifo/sym,
 *          refer (2), truncate (3) — never make char/block, never ioctl_dev
 *   dev:   read file, write file, truncate (3: "> /dev/null" opens with
 *          O_TRUNC), ioctl_dev (5): for /dev/null, /dev/zero, /dev/urandom...
 *   all:   every filesystem right the ABI knows (what a ruleset handles) */
uint64_t cd_landlock_fs_read(int abi);
uint64_t cd_landlock_fs_write(int abi);
uint64_t cd_landlock_fs_dev(int abi);
uint64_t cd_landlock_fs_all(int abi);
/* CD_LL_SCOPE_* bits the ABI knows (0 below ABI 6). */
uint64_t cd_landlock_scope_all(int abi);

/* Child-only.  Creates a ruleset handling every filesystem right of `abi`
 * (and TCP connect, plus bind when deny_bind, at ABI >= 4; the scopes of
 * spec->scope), opens each path O_PATH|O_CLOEXEC (rights on a non-directory
 * are cut to CD_LL_FS_FILE_RIGHTS), adds the rules and calls
 * landlock_restrict_self.  The caller must have set no_new_privs (or hold
 * CAP_SYS_ADMIN).  Async-signal-safe; every fd it opens is closed again.
 * Returns 0, or -errno: -EOPNOTSUPP when abi < 1 or the spec asks for
 * something the ABI cannot enforce (a port rule below ABI 4, a scope below
 * ABI 6), -ENOENT for a missing path without CD_LANDLOCK_OPTIONAL.  On any
 * failure nothing was restricted, and the caller must abort the run. */
int cd_landlock_apply(const struct cd_landlock_spec *s, int abi);

#endif
