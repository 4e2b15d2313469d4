/* plan-int.h — what plan.c shares with the tree scan (tree-scan.c) and
 * the home check (homes.c); not for other modules. */
#ifndef CD_PLAN_INT_H
#define CD_PLAN_INT_H

#include "plan.h"

/* Append a mount (strings copied); `why` is a static reason recorded for
 * covered and protected paths, or NULL.  -CD_E_LIMIT past the plan cap. */
int cd_plan_mount_add(struct cd_plan *p, enum cd_mount_kind kind, unsigned flags, const char *src,
                      const char *dest, const char *why, struct cd_err *err);

/* One walk over every host tree the plan binds from mount `first` on,
 * plus the --scratch directory: covers host Unix sockets (unless
 * o->skip_socket_scan) and credential files with /dev/null, and in
 * writable trees (workspace-write, --rw) keeps every git control path and
 * other file the host runs on its own read-only, at any depth.  Fails
 * closed: a tree it cannot walk completely (too many entries, too deep,
 * a path longer than PATH_MAX) refuses the run. */
int cd_plan_scan_trees(struct cd_plan *p, size_t first, const struct cd_plan_opts *o,
                       struct cd_err *err);

/* Refuse a plan that needs more mounts than the kernel allows in one
 * mount namespace (/proc/sys/fs/mount-max, counting the mounts the new
 * namespace copies from ours). */
int cd_plan_check_mount_max(const struct cd_plan *p, struct cd_err *err);

/* -CD_E_USAGE when `path` (canonical) is, or contains, the home directory
 * of a login account (uid >= UID_MIN of /etc/login.defs), of root, or
 * `caller_home`; `what` names the option in the message. */
int cd_home_check(const char *path, const char *what, const char *caller_home, struct cd_err *err);

/* An image's root (cd_plan_opts.rootfs): its top-level entries bound
 * read-only, symlinks recreated; proc, dev, sys and tmp left to cordon. */
int cd_plan_add_rootfs(struct cd_plan *p, const char *rootfs, const char *image,
                       struct cd_err *err);

/* o->tmpfs_dirs as writable noexec tmpfs mounts of the scratch size;
 * refused over '/', /proc or /dev or where a mount from `first` on is. */
int cd_plan_add_tmpfs(struct cd_plan *p, const struct cd_plan_opts *o, size_t first,
                      struct cd_err *err);

#endif
