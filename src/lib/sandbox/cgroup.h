/* cgroup.h — the per-run control group: memory, pids and CPU caps over the
 * whole process tree, its kill switch and its accounting.
 *
 * Trust boundary: supervisor side only (outside every namespace; may
 * allocate).  The cgroup files it reads are written by the kernel; the pids
 * it reads from cgroup.procs are only ever signalled, never trusted for
 * anything else.  Nothing here is called in the sandbox child.
 *
 * Mechanisms, picked by cd_cgroup_create() in this order:
 *   cgroup2  the unified hierarchy, when our own cgroup already delegates
 *            every needed controller (its cgroup.subtree_control lists
 *            memory/pids) and is writable: <own>/cordon/<run_id>
 *   cgroup1  the v1 memory, pids and freezer (the kill switch)
 *            hierarchies where writable (root), and cpu + cpuacct when a
 *            CPU quota is asked: /sys/fs/cgroup/<ctrl><own>/cordon/<run_id>
 *   rlimit   neither writable (rootless): cd_rlimits_apply() in the child
 *            is the floor.  Creation succeeds; the struct says so.
 * Where a hierarchy is writable but setting a limit fails, creation fails:
 * nothing falls back silently to a weaker wall. */
#ifndef CD_CGROUP_H
#define CD_CGROUP_H

#include "util/err.h"
#include "util/limits.h"

#include <stdint.h>
#include <sys/types.h>

struct cd_cgroup; /* one per run */

/* Run ids name a directory: 1..64 of [A-Za-z0-9._-], not "." or "..". */
#define CD_CGROUP_ID_MAX 64

/* Empty cordon/<id> directories older than this are left over by a crashed
 * cordon and removed by the next cd_cgroup_create(). */
#define CD_CGROUP_STALE_S 60

/* Supervisor, before the child is placed.  Picks the mechanism, makes the
 * run's directories, writes the limits, and removes stale empty run
 * directories beside them.  On success *ret is the caller's, freed with
 * cd_cgroup_destroy(); with no writable hierarchy it is still returned,
 * with every mechanism "rlimit" and cd_cgroup_note() saying why.
 * Errors: -EINVAL bad id or limits, -EEXIST the run's directory exists,
 * -errno from a limit write (with `err` naming the file). */
int cd_cgroup_create(const char *run_id, const struct cd_limits *lim, struct cd_cgroup **ret,
                     struct cd_err *err);

/* Supervisor: move `pid` (the child, stopped on the sync pipe before it
 * execs or unshares its cgroup namespace) into every hierarchy of the run.
 * A no-op returning 0 for the "rlimit" mechanism.  -errno on failure: the
 * caller must kill the child and abort (fail closed). */
/* The same, with the run's cgroup at `at` (an absolute path below each
 * v1 hierarchy's root, without "." or ".." components, e.g. the OCI
 * spec's cgroupsPath) instead of below the caller's own: its parents are
 * made when missing and kept, `at` itself must be new (-EEXIST: cordon
 * writes its limits only into a cgroup it made) and is removed by
 * cd_cgroup_destroy.  cgroup2 (when delegated to the caller) keeps its
 * place below the caller's own.  NULL: cd_cgroup_create. */
int cd_cgroup_create_at(const char *run_id, const struct cd_limits *lim, const char *at,
                        struct cd_cgroup **ret, struct cd_err *err);

int cd_cgroup_attach(struct cd_cgroup *cg, pid_t pid, struct cd_err *err);

/* Kill every process in the run's cgroup: cgroup.kill on v2; on v1 freeze
 * (when the freezer is there), SIGKILL each pid of cgroup.procs, thaw,
 * until it is empty.  Returns the number of processes signalled (v1) or 0,
 * -EAGAIN when it did not empty in time, -errno on error.  0 for "rlimit"
 * (the pid namespace's init is the caller's kill switch then). */
int cd_cgroup_kill(struct cd_cgroup *cg);

/* Measured over the whole tree.  `measured` tells which fields mean
 * something (CD_CGSTAT_* bits); on "rlimit" it is 0. */
#define CD_CGSTAT_MEMORY (1u << 0) /* peak_memory, oom_kills, memory_max_hits */
#define CD_CGSTAT_PIDS   (1u << 1) /* pids_max_hits */
#define CD_CGSTAT_CPU    (1u << 2) /* cpu_usage_ns (v1: with a CPU quota only) */
#define CD_CGSTAT_QUOTA  (1u << 3) /* cpu_throttled */

struct cd_cgroup_stats {
	uint64_t peak_memory;     /* bytes (v1 max_usage_in_bytes includes page cache) */
	uint64_t oom_kills;       /* processes killed by the OOM killer in the cgroup */
	uint64_t memory_max_hits; /* v1 memory.failcnt, v2 memory.events max */
	uint64_t pids_max_hits;   /* forks refused at pids.max (pids.events max) */
	uint64_t cpu_usage_ns;    /* CPU time of the whole tree */
	uint64_t cpu_throttled;   /* periods throttled by the CPU quota */
	unsigned measured;        /* CD_CGSTAT_* */
};

/* Supervisor, after the run (before destroy).  Fields the mechanism does
 * not have stay 0 and their bit stays clear.  -errno when a file that
 * should be there cannot be read. */
int cd_cgroup_collect(struct cd_cgroup *cg, struct cd_cgroup_stats *ret);

/* Kill what is left, rmdir the run's directories (retrying for up to about
 * a second while the kernel empties them) and free.  NULL-safe.  The shared
 * cordon/ parent stays. */
void cd_cgroup_destroy(struct cd_cgroup *cg);

/* Which mechanism enforces `limit` ("memory", "pids", "cpu" — the total
 * cpu_ms, "cpu_quota"): "cgroup2", "cgroup1", "rlimit", or "none" when the
 * limit is 0 (uncapped) or nothing can enforce it (cpu_quota without a
 * cgroup).  "cpu" is always "rlimit": RLIMIT_CPU per process is what the
 * kernel enforces; cpu_usage_ns gives the tree's total for the supervisor
 * to compare.  NULL cg means rlimit.  Never NULL. */
const char *cd_cgroup_mechanism(const struct cd_cgroup *cg, const char *limit);

/* 1 when a cgroup (not an rlimit) enforces `limit`: the arguments for
 * cd_rlimits_apply(). */
int cd_cgroup_enforces(const struct cd_cgroup *cg, const char *limit);

/* Why the mechanisms are what they are ("cgroup1: memory,pids,cpu" or
 * "rlimit: /sys/fs/cgroup/memory not writable: Permission denied"), for
 * the result and the audit record.  Never NULL. */
const char *cd_cgroup_note(const struct cd_cgroup *cg);

/* The limit reason of a finished run, from its stats and the wait status
 * of the command: "memory" when the OOM killer killed something in the
 * tree, "pids" when a fork was refused at pids.max — in both cases only if
 * the command did not exit 0 — else NULL (the supervisor decides between
 * exited, signaled, timeout, output-limit).  On the rlimit path a memory
 * or pids hit is an ENOMEM/EAGAIN inside the program and cannot be told
 * from any other failure: NULL. */
const char *cd_cgroup_reason(const struct cd_cgroup_stats *st, int wstatus);

#endif
