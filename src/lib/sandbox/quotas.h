/* quotas.h — the sandbox's share of kernel objects the kernel limits per
 * user or per host rather than per namespace, and what replaces the memory
 * cgroup when none is writable.
 *
 * Trust boundary: cd_quotas_open() and cd_quotas_apply() run in the
 * sandbox child between clone and execve (raw system calls, no allocation,
 * async-signal-safe), with the values of the trusted plan.  The rest runs
 * in the supervisor.
 *
 * The audited list (object | scope in the kernel | what bounds a run):
 *   inotify instances   per user, ucounts (charged to every ancestor user
 *                       namespace) | max_inotify_instances of the
 *                       sandbox's user namespace = limits.inotify_instances
 *   inotify watches     likewise | max_inotify_watches = inotify_watches
 *   fanotify groups,    likewise | seccomp refuses fanotify_init/mark;
 *   marks               max_fanotify_groups/marks = 0
 *   namespaces (user,   likewise | seccomp refuses the clone/unshare
 *   mnt, pid, net, ipc, flags and setns; the sandbox's max_*_namespaces
 *   uts, cgroup, time)  = 0 once its own cgroup namespace exists
 *   POSIX mqueues       bytes per user, ucounts | RLIMIT_MSGQUEUE
 *                       = limits.msgqueue (queue count: per ipc namespace)
 *   pending signals     per user, ucounts | RLIMIT_SIGPENDING
 *   locked shm memory   per user, ucounts | RLIMIT_MEMLOCK
 *   AIO contexts        host-wide (fs.aio-max-nr) | seccomp (io_setup)
 *   io_uring            host-wide accounting | seccomp (ENOSYS)
 *   keys and keyrings   per host user (kernel.keys.*) | seccomp
 *   System V shm, msg,  per ipc namespace (the sandbox has its own) |
 *   sem                 memory: the cgroup, or refused without one (below)
 *   memfds, shared      memory only | the cgroup, or refused without one
 *   anonymous mmap      (mmap with MAP_SHARED|MAP_ANONYMOUS)
 *   tmpfs (scratch,     memory only | sized, never above limits.memory
 *   /dev/shm, layer)
 *   processes           per user | pids cgroup, else RLIMIT_NPROC
 *   epoll watches,      per host user (user_struct), no namespace limit |
 *   pipe buffers        bounded only through nofile x pids (not a quota)
 */
#ifndef CD_QUOTAS_H
#define CD_QUOTAS_H

#include "util/limits.h"
#include "plan.h"
#include "seccomp.h"

#include <jansson.h>

/* Child, while it still sees the host's /proc (after its identity maps are
 * written, before the new root): an O_PATH descriptor of /proc/sys/user,
 * whose files are those of the caller's user namespace.  Returns the fd
 * (O_CLOEXEC; the caller closes it) or -errno. */
int cd_quotas_open(void);

/* Child, after its own cgroup namespace is made and before capabilities
 * are dropped (writing needs CAP_SYS_RESOURCE in the sandbox's user
 * namespace): write the quotas through `dirfd`.  A file this kernel does
 * not have is skipped (it has no such object to limit).  Returns 0 or the
 * -errno of the first write that failed; the caller aborts the run. */
int cd_quotas_apply(int dirfd, const struct cd_limits *lim);

/* Supervisor: `main` with a prefix that refuses what holds memory outside
 * the rlimits — memfd_create, memfd_secret, shmget, msgget, semget — with
 * `main`'s own refusal (counted through the listener, EPERM).  For runs
 * whose memory limit no cgroup enforces.  *ret is released with
 * cd_seccomp_prog_release().  -ENOMEM, -E2BIG past BPF_MAXINSNS. */
int cd_quotas_nocg_prog(const struct cd_seccomp_prog *main, struct cd_seccomp_prog *ret);

/* The program to install (child) and answer for (supervisor): the plan's
 * no-cgroup variant when the plan caps memory and no cgroup enforces it. */
const struct cd_seccomp_prog *cd_quotas_prog(const struct cd_plan *p, int cgroup_enforces_memory);

/* How firm the memory limit enforced by `mech` (cd_cgroup_mechanism) is:
 * "enforced" by a cgroup over the whole tree, "approximate" with the
 * rlimit floor (per process; memfds and System V IPC refused, tmpfs sized
 * within the limit; pipes, sockets and page cache uncounted), else "none".
 * Never NULL. */
const char *cd_quotas_memory_cap(const char *mech);

/* Add the kernel-object quotas of `lim` to the JSON object `obj` (the
 * limits of a plan or a record).  -ENOMEM on failure. */
int cd_quotas_json(const struct cd_limits *lim, json_t *obj);

#endif
