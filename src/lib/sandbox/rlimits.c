/* rlimits.c — see rlimits.h.  Child side: prlimit64 only.
 *
 * RLIMIT_NPROC and user namespaces.  The kernel counts RLIMIT_NPROC per
 * user, and since Linux 5.14 per (user namespace, uid) through ucounts:
 * fork checks the count of the caller's uid in its own user namespace
 * against the caller's RLIMIT_NPROC, and each ancestor namespace's count of
 * the namespace creator's uid against the creator's limit recorded when the
 * namespace was made.  In the sandbox (a fresh user namespace, uid 1000
 * inside mapped to the invoking user outside) the count is therefore the
 * sandbox's own tasks (threads included), not the host user's other
 * processes, and the value we set bounds the sandbox alone.  It can never
 * make the host fail: a lowered RLIMIT_NPROC is checked only for forks by
 * tasks that carry it, and the host-side count of the invoking uid is still
 * bounded by that user's own limit.  On kernels before 5.14 the count was
 * of every process of the host uid, so a user with many processes could
 * see the sandbox's first fork fail with EAGAIN — a failure of the run,
 * never of the host.  The limit is not enforced at all for tasks whose
 * user is the host's root (INIT_USER) or that hold CAP_SYS_RESOURCE or
 * CAP_SYS_ADMIN in the initial namespace; as root cordon uses the pids
 * cgroup instead, which is why the floor is only applied when no cgroup
 * enforces pids.
 *
 * The memory floor.  RLIMIT_DATA (private writable mappings, brk, since
 * 4.7) is set to the memory cap: it is what an allocation counts against.
 * RLIMIT_AS also counts PROT_NONE reservations, which runtimes make
 * generously (glibc arenas reserve 64 MiB per thread, JITs and Go reserve
 * address space), so it gets room: 2 * memory + 1 GiB.  Neither counts
 * page-cache or kernel memory, and a failed allocation is an ENOMEM inside
 * the program, not a kill: the supervisor cannot tell "memory" from any
 * other failure on this path. */
#include "rlimits.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#define GIB (1024ULL * 1024ULL * 1024ULL)

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_add_overflow(a, b, &r) ? RLIM64_INFINITY : r;
}

uint64_t cd_rlimits_as_for(uint64_t memory)
{
	uint64_t twice;

	if (__builtin_mul_overflow(memory, 2, &twice))
		return RLIM64_INFINITY;
	return sat_add(twice, GIB);
}

/* Lower resource `res` to soft/hard, never above the inherited hard limit. */
static int lower(int res, uint64_t soft, uint64_t hard)
{
	struct rlimit64 cur, nl;

	if (syscall(SYS_prlimit64, 0, res, NULL, &cur) < 0)
		return -errno;
	if (hard > cur.rlim_max)
		hard = cur.rlim_max;
	if (soft > hard)
		soft = hard;
	nl.rlim_cur = soft;
	nl.rlim_max = hard;
	if (syscall(SYS_prlimit64, 0, res, &nl, NULL) < 0)
		return -errno;
	return 0;
}

int cd_rlimits_apply(const struct cd_limits *lim, int cgroup_enforces_memory,
                     int cgroup_enforces_pids)
{
	int rc;

	if (!lim)
		return -EINVAL;
	if ((rc = lower(RLIMIT_CORE, 0, 0)) < 0 || (rc = lower(RLIMIT_RTPRIO, 0, 0)) < 0)
		return rc;
	if (lim->nofile && (rc = lower(RLIMIT_NOFILE, lim->nofile, lim->nofile)) < 0)
		return rc;
	if (lim->fsize && (rc = lower(RLIMIT_FSIZE, lim->fsize, lim->fsize)) < 0)
		return rc;
	if (lim->cpu_ms) {
		uint64_t s = lim->cpu_ms / 1000 + (lim->cpu_ms % 1000 != 0);
		if ((rc = lower(RLIMIT_CPU, s, sat_add(s, 1))) < 0)
			return rc;
	}
	if (lim->memory && !cgroup_enforces_memory) {
		if ((rc = lower(RLIMIT_DATA, lim->memory, lim->memory)) < 0)
			return rc;
		uint64_t as = cd_rlimits_as_for(lim->memory);
		if ((rc = lower(RLIMIT_AS, as, as)) < 0)
			return rc;
	}
	if ((lim->msgqueue && (rc = lower(RLIMIT_MSGQUEUE, lim->msgqueue, lim->msgqueue)) < 0) ||
	    (lim->sigpending &&
	     (rc = lower(RLIMIT_SIGPENDING, lim->sigpending, lim->sigpending)) < 0) ||
	    (lim->memlock && (rc = lower(RLIMIT_MEMLOCK, lim->memlock, lim->memlock)) < 0))
		return rc;
	if (lim->pids && !cgroup_enforces_pids &&
	    (rc = lower(RLIMIT_NPROC, lim->pids, lim->pids)) < 0)
		return rc;
	return 0;
}
