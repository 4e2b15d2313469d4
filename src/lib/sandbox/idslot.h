/* idslot.h — one host id per concurrent root run.
 *
 * A root caller's sandbox runs as an id of root's range (idmap.h).  Were
 * it one id for every run, concurrent root runs would share that id's
 * per-user kernel budgets (inotify instances, RLIMIT_NPROC's count,
 * message queue bytes: the kernel charges each to the user namespace's
 * owner as well) and could starve one another.  So each run takes a slot
 * i of the range, uid + i and gid + i, for its whole life: an flock on
 * the lock file named after the uid in a root-only directory
 * (CD_IDSLOT_DIR).  The kernel drops the lock when the last descriptor
 * of it closes, so a run that ends, crashes or is killed with SIGKILL
 * frees its slot, and nothing is ever left to clean up.
 *
 * The lowest free slot is taken: sequential runs reuse uid + 0.  With
 * every slot of the window held the run is refused.  Probing costs one
 * open, fstat and flock per held slot (about 30 us each on a loaded
 * host), so the range is capped at CD_IDMAP_SLOTS_MAX.
 *
 * A lock in /run is seen only by the runs that see that /run: root runs
 * in containers that share the host's user namespace but not its /run
 * (each its own mount namespace) would take the same id and share its
 * per-user kernel budgets, as one id for all runs would.  So a slot
 * whose lock is taken is also checked against the kernel, which counts
 * each user's processes over the whole user namespace, whatever the
 * mount or pid namespace: a keeper process becomes the id with
 * RLIMIT_NPROC 2 and forks once, which the kernel refuses (EAGAIN) while
 * any other process of that id exists (a run elsewhere, its sandbox, or
 * one left over from a killed run that is still dying).  Then the slot
 * counts as held and the next is tried.  Zombies of the id that this pid
 * namespace shows are allowed for (a killed run's keeper and sandbox init,
 * kept for ever by a pid 1 that does not reap): counted first, the check
 * run with that many more allowed, and the same zombies found again after
 * it, so that none was reaped while the kernel counted.  A zombie in
 * another pid namespace is not seen and keeps its id's slot held until it
 * is reaped.  The keeper lives as long as anything of the run may run
 * as the id (a second keeper of the id sees it): until the slot is
 * released, or cd_idslot_end_keeper once the sandbox has ended; it dies
 * with cordon (parent-death signal, and EOF on its pipe).  Two keepers
 * of one id checking at once both see each other and both move on: never
 * a shared id.  The keeper's answer can be read later
 * (cd_idslot_take_async, cd_idslot_confirm), so the check runs while
 * the caller prepares the run; nothing may run as the id before it.
 *
 * Trust boundary: the supervisor (host root) opens the directory one
 * component at a time without following symlinks; it must be its own
 * (or root's), the last component with no access for anyone else, so no
 * other user can take, free or fake a slot.
 */
#ifndef CD_IDSLOT_H
#define CD_IDSLOT_H

#include "util/err.h"
#include "idmap.h"

#include <stdint.h>
#include <sys/types.h>

/* Where root's runs keep their slot locks (created 0700 as needed). */
#define CD_IDSLOT_DIR "/run/cordon/ids"

struct cd_idslot {
	int fd;         /* the locked file; -1 when none is held */
	int keeper_fd;  /* root: the keeper's pipe (close to end it), else -1 */
	pid_t keeper;   /* root: the keeper process, else 0 */
	int keeper_rep; /* root, cd_idslot_take_async: the keeper's answer, unread; else -1 */
	uint32_t index; /* the slot: uid = range.uid + index */
	uid_t uid;
	gid_t gid;
};

/* Take the lowest free slot of `range` among [first, first + count)
 * (count 0: to the end of the range), locking its file in `dir`, an
 * absolute path (CD_IDSLOT_DIR but in tests).  Missing directories of
 * `dir` are made 0700.  Every existing directory on the way must be a
 * directory, not a symlink, owned by root or the caller and writable by
 * no one else unless sticky; `dir` itself the caller's and closed to
 * group and others; a lock file the caller's regular file.
 * Returns 0 and fills *ret (ret->fd the caller's, see _release);
 * -EBUSY when every slot of the window is held; -EINVAL for a window
 * outside the range; -EPERM for an unsafe directory or file; -errno
 * otherwise.  The message says which. */
int cd_idslot_take(const char *dir, const struct cd_idmap_range *range, uint32_t first,
                   uint32_t count, struct cd_idslot *ret, struct cd_err *err);

/* cd_idslot_take without waiting for the keeper's answer (root), so the
 * caller can prepare the run meanwhile; the slot is not checked until
 * cd_idslot_confirm says so, which must come before anything runs as
 * its id. */
int cd_idslot_take_async(const char *dir, const struct cd_idmap_range *range, uint32_t first,
                         uint32_t count, struct cd_idslot *ret, struct cd_err *err);

/* Wait for the keeper of a slot taken with cd_idslot_take_async (the same
 * dir, range and window): 0 when the slot is confirmed as taken; 1 when
 * that id was in use beyond this /run and another slot was taken (and
 * checked) in its place (*s changed: the caller redoes what used the
 * ids); -errno as cd_idslot_take (the slot is then released).  0 at once
 * for a slot already checked. */
int cd_idslot_confirm(const char *dir, const struct cd_idmap_range *range, uint32_t first,
                      uint32_t count, struct cd_idslot *s, struct cd_err *err);

/* Let the keeper end now (its exit overlaps what the caller still does);
 * the slot's lock stays held until cd_idslot_release, which reaps it.
 * For when nothing of the run is left that runs as its id. */
void cd_idslot_end_keeper(struct cd_idslot *s);

/* Free the slot (close its lock, end and reap its keeper); accepts a
 * slot never taken (fd -1). */
void cd_idslot_release(struct cd_idslot *s);

/* Parse a test window "COUNT" or "FIRST:COUNT" (decimal, COUNT >= 1):
 * 0, or -EINVAL when malformed.  A window only ever narrows the range
 * (cd_idslot_take refuses one that does not fit). */
int cd_idslot_parse_window(const char *s, uint32_t *ret_first, uint32_t *ret_count);

#endif
