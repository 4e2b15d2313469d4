/* rlimits.h — the per-process resource limits of the sandbox child.
 *
 * Trust boundary: runs in the sandbox child between clone and execve, with
 * the values of the trusted plan.  Raw system calls only (prlimit64), no
 * allocation; async-signal-safe.  Limits are only ever lowered: a value
 * above the inherited hard limit is cut to it (raising needs
 * CAP_SYS_RESOURCE in the initial user namespace, which the child lacks).
 *
 * What it sets (soft = hard unless said otherwise):
 *   RLIMIT_CORE   0 (no core files: they would leak memory contents)
 *   RLIMIT_NOFILE lim->nofile, when non-zero
 *   RLIMIT_FSIZE  lim->fsize, when non-zero (SIGXFSZ/EFBIG past it)
 *   RLIMIT_CPU    ceil(lim->cpu_ms / 1000) s soft (SIGXCPU), +1 s hard
 *                 (SIGKILL); per process, not per tree
 *   RLIMIT_RTPRIO 0 (no real-time scheduling to starve the host)
 *   RLIMIT_DATA   lim->memory, RLIMIT_AS 2 * memory + 1 GiB — only when
 *                 no cgroup enforces memory (the floor; see rlimits.c)
 *   RLIMIT_NPROC  lim->pids — only when no cgroup enforces pids
 *   RLIMIT_MSGQUEUE, RLIMIT_SIGPENDING, RLIMIT_MEMLOCK  lim->msgqueue,
 *                 sigpending, memlock, when non-zero: counted per user
 *                 in ucounts, so these cap the run's share of the host
 *                 user's (quotas.h) */
#ifndef CD_RLIMITS_H
#define CD_RLIMITS_H

#include "util/limits.h"

#include <sys/resource.h>

/* Child-only.  Returns 0 or the -errno of the first limit that could not
 * be set; the caller aborts the run (fail closed). */
int cd_rlimits_apply(const struct cd_limits *lim, int cgroup_enforces_memory,
                     int cgroup_enforces_pids);

/* The RLIMIT_AS value used as the memory floor for `memory` bytes
 * (saturating), so callers and tests can state what was applied. */
uint64_t cd_rlimits_as_for(uint64_t memory);

#endif
