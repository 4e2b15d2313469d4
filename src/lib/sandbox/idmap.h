/* idmap.h — the host identity of a root caller's sandbox.
 *
 * A rootless caller's sandbox runs as the caller (uid 1000 inside maps to
 * the caller's uid).  A root caller's must not run as host root: it would
 * read root-only files (/proc/slabinfo, 0400 root), spend root's per-user
 * kernel quotas (inotify instances, RLIMIT_NPROC, message queues, user
 * namespaces) and leave root-owned files.  So for euid 0 the sandbox runs
 * as an unprivileged host id of its own, taken for the run from root's
 * subordinate range (cd_idmap_root_range; idslot.h: concurrent root runs
 * never share an id, nor the per-user quotas the kernel keeps for it),
 * its user namespace is owned by that id (so the per-user counts the
 * kernel charges to a namespace's owner are that id's, not root's), and
 * the caller's own trees (working directory, --ro, --rw, --scratch DIR,
 * caches, the proposal's lower layer) are bound through idmapped mounts
 * that show on-disk uid/gid 0 as the sandbox's id: files stay readable
 * and writable as in a rootless run, and files created through --rw land
 * owned by root on disk, whichever id the run had.  System binds (/usr,
 * /etc entries) stay plain: root-owned files look like nobody's inside,
 * as in a rootless run.  So do binds marked CD_MNT_PLAIN (the OCI
 * runtime's spec binds: host paths a pod's author named, not the
 * caller's own trees): opened by the supervisor, bound without idmap,
 * writable when asked, so the sandbox writes only where its own host id
 * may.
 *
 * Trust boundary: runs in the supervisor (host root), before clone; the
 * host paths of the plan are opened without following symlinks, as the
 * child does for a rootless caller.
 */
#ifndef CD_IDMAP_H
#define CD_IDMAP_H

#include "util/err.h"
#include "plan.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The first host uid and gid of root's sandboxes when /etc/subuid
 * (/etc/subgid) gives root no subordinate range: in systemd's unused
 * range 1879048192-2147352575 (docs/UIDS-GIDS.md: no account, no
 * DynamicUser=, no nspawn container and no foreign-image id is allocated
 * there), above shadow's default subordinate ranges (SUB_UID_MAX
 * 600100000), below 2^31 (no signed-int trouble), far from nobody
 * (65534), which daemons and rootless tests share.  The default range is
 * this id and the CD_IDMAP_SLOTS_MAX - 1 after it. */
#define CD_IDMAP_DEFAULT_ID 2000000000u

/* At most this many ids of root's range are used, one per concurrent
 * root run: more concurrent root runs are refused (idslot.h). */
#define CD_IDMAP_SLOTS_MAX 1024u

/* Find `name`'s (or the numeric `id`'s) first usable subordinate range in
 * subuid/subgid text ("NAME:START:COUNT" lines) and write its START and
 * COUNT.  Ranges starting at 0, at 65534 (nobody) or at (uid_t)-1, empty
 * or overflowing ones are skipped.  Returns 0, or -ENOENT when none. */
int cd_idmap_parse_subid(const char *text, size_t len, const char *name, unsigned long id,
                         uint32_t *ret_start, uint32_t *ret_count);

/* The host ids root's sandboxes take, one per run: uid + i and gid + i
 * for 0 <= i < count. */
struct cd_idmap_range {
	uint32_t uid, gid, count;
};

/* root's range: the first root range of /etc/subuid and of /etc/subgid
 * (each file on its own: a missing or unreadable one, or one without a
 * root range, gives CD_IDMAP_DEFAULT_ID and CD_IDMAP_SLOTS_MAX ids), count
 * the smaller of the two counts, at most CD_IDMAP_SLOTS_MAX, and a range
 * across 65534 (nobody) cut below it.  With neither file:
 * 2000000000-2000001023.  Never fails. */
void cd_idmap_root_range(struct cd_idmap_range *ret);
/* The same from other files (tests). */
void cd_idmap_root_range_from(const char *subuid, const char *subgid, struct cd_idmap_range *ret);

/* Is this mount one of the caller's trees (bound through an idmapped mount
 * for a root caller): a bind that is neither a system entry (optional) nor
 * a device node, or the proposal overlay's lower layer.  A CD_MNT_PLAIN bind
 * is one too (the supervisor opens it) but is never idmapped. */
int cd_idmap_is_caller_tree(const struct cd_mount *m);

/* Supervisor, plan->idmap: open every caller tree of the plan as a
 * detached mount showing on-disk uid/gid 0 as plan->host_uid/host_gid,
 * with the mount flags the child would set (read-only unless writable,
 * nosuid, nodev).  fds[i] receives the tree of mount i, -1 for the other
 * mounts; the caller closes them.  A read-only tree on a filesystem that
 * cannot be idmapped falls back to a plain bind (counted in *ret_plain:
 * files not readable by "other" are unreadable inside); a writable one
 * refuses the run.  On error every fd is closed and -1. */
int cd_idmap_open_trees(const struct cd_plan *p, int *fds, size_t nfds, unsigned *ret_idmapped,
                        unsigned *ret_plain, struct cd_err *err);

/* The supervisor's credentials while it clones a root caller's sandbox:
 * effective uid/gid plan->host_uid/gid (the run's own, idslot.h) and no
 * supplementary groups, so the sandbox's user namespace is owned by that
 * id and its first process holds none of root's groups.  Changed for the calling thread only (raw system
 * calls); cd_idmap_creds_leave() restores them, and the dumpable flag the
 * kernel clears on the way.  Allocation happens in _enter. */
struct cd_idmap_creds {
	gid_t *groups;
	int ngroups;
	int dumpable;
	int active;
};
int cd_idmap_creds_enter(const struct cd_plan *p, struct cd_idmap_creds *c);
/* Must succeed: a supervisor left without root's ids cannot go on, so a
 * failure here returns -errno and the caller aborts the run. */
int cd_idmap_creds_leave(struct cd_idmap_creds *c);

#endif
