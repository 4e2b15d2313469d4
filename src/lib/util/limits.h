/* limits.h — the resource caps of one run, as the plan carries them.
 *
 * The values are decided by the profile and the options; the modules that
 * enforce them (cgroup.c for memory/pids/cpu, rlimits in the child, the
 * supervisor for timeout and output) read this struct.  0 means "no cap"
 * only where a field says so. */
#ifndef CD_LIMITS_H
#define CD_LIMITS_H

#include <stdint.h>

struct cd_limits {
	uint64_t memory;        /* bytes of memory (cgroup; RLIMIT_AS/DATA floor); 0 = none */
	uint64_t pids;          /* processes and threads (cgroup; RLIMIT_NPROC floor); 0 = none */
	uint64_t cpu_ms;        /* CPU time; 0 = none beyond the timeout */
	uint64_t timeout_ms;    /* wall clock for the whole tree */
	uint64_t output_limit;  /* bytes per stream (stdout, stderr) */
	uint64_t scratch_size;  /* bytes of the scratch tmpfs */
	uint64_t nofile;        /* RLIMIT_NOFILE; 0 = keep the inherited value */
	uint64_t fsize;         /* RLIMIT_FSIZE, bytes; 0 = keep the inherited value */
	uint64_t cpu_quota_pct; /* CPU bandwidth in percent of one CPU (cgroup cpu
	                         * quota: 150 = 1.5 CPUs); 0 = none */

	/* --propose: the overlay's layer, a tmpfs inside the sandbox. */
	uint64_t propose_size;   /* bytes */
	uint64_t propose_inodes; /* inodes */

	/* Kernel objects the kernel counts per user, not per namespace: the
	 * run's share of the host user's (quotas.h).  0 = no quota of its own. */
	uint64_t inotify_instances; /* max_inotify_instances of the sandbox's user namespace */
	uint64_t inotify_watches;   /* max_inotify_watches */
	uint64_t msgqueue;          /* RLIMIT_MSGQUEUE: bytes of POSIX message queues */
	uint64_t sigpending;        /* RLIMIT_SIGPENDING: queued signals */
	uint64_t memlock;           /* RLIMIT_MEMLOCK: bytes of locked memory */
};

#endif
