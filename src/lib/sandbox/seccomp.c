/* seccomp.c — build the seccomp allowlist with libseccomp, export it to BPF,
 * install it in the child.  See seccomp.h; the listener side (fd passing,
 * notifications, counts) is in seccomp-notify.c.
 *
 * Trust boundary: the filter is the wall between the sandboxed program and
 * the kernel's syscall surface.  Everything not listed below is refused.
 *
 * The tables were sized by running sh/bash, coreutils, python3, node, perl,
 * gcc (cc1, as, collect2, ld), make and git under `strace -f -c` and under
 * this filter in notify mode (tests/unit/test-seccomp-compat.c asserts that
 * they run with no refusal at all). */
#include "seccomp.h"

#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h> /* libseccomp's: cordon's own is "sandbox/seccomp.h" */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Any of these in clone/unshare flags makes a namespace: refused (nested
 * user namespaces re-open the kernel's attack surface, THREATS row 8).
 * CLONE_NEWTIME shares bits with clone's exit signal (CSIGNAL), but a signal
 * number >= 128 is invalid anyway, so refusing it costs nothing. */
#define NS_FLAGS                                                                                   \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | \
	 CLONE_NEWCGROUP | CLONE_NEWTIME)

/* A syscall by name, with its x86_64 number for names libseccomp 2.5.4 does
 * not know yet (kernels 6.8 and later); -1 when libseccomp must know it. */
struct sc {
	const char *name;
	int nr;
};

/* Allowed unconditionally.  Grouped by purpose; the comment names who needs
 * the less obvious ones. */
static const struct sc allow_tab[] = {
	/* files and descriptors */
	{ "read", -1 },
	{ "write", -1 },
	{ "close", -1 },
	{ "close_range", -1 }, /* glibc closefrom, python subprocess */
	{ "lseek", -1 },
	{ "pread64", -1 },
	{ "pwrite64", -1 },
	{ "readv", -1 },
	{ "writev", -1 },
	{ "preadv", -1 },
	{ "pwritev", -1 },
	{ "preadv2", -1 },
	{ "pwritev2", -1 },
	{ "dup", -1 },
	{ "dup2", -1 },
	{ "dup3", -1 },
	{ "pipe", -1 },
	{ "pipe2", -1 },
	{ "fcntl", -1 },
	{ "flock", -1 },
	{ "fsync", -1 },
	{ "fdatasync", -1 },
	{ "sync", -1 },
	{ "syncfs", -1 },
	{ "sync_file_range", -1 },
	{ "truncate", -1 },
	{ "ftruncate", -1 },
	{ "fallocate", -1 },
	{ "fadvise64", -1 },
	{ "readahead", -1 },
	{ "sendfile", -1 },
	{ "copy_file_range", -1 }, /* coreutils cp, python shutil */
	{ "splice", -1 },
	{ "tee", -1 },
	{ "vmsplice", -1 },
	{ "memfd_create", -1 },
	{ "memfd_secret", -1 },
	/* metadata and directories */
	{ "stat", -1 },
	{ "fstat", -1 },
	{ "lstat", -1 },
	{ "newfstatat", -1 },
	{ "statx", -1 }, /* coreutils ls/cp/stat */
	{ "statfs", -1 },
	{ "fstatfs", -1 },
	{ "access", -1 },
	{ "faccessat", -1 },
	{ "faccessat2", -1 }, /* glibc 2.33+ faccessat with flags */
	{ "getdents", -1 },
	{ "getdents64", -1 },
	{ "getcwd", -1 },
	{ "chdir", -1 },
	{ "fchdir", -1 },
	{ "rename", -1 },
	{ "renameat", -1 },
	{ "renameat2", -1 },
	{ "mkdir", -1 },
	{ "mkdirat", -1 }, /* no S_ISUID/S_ISGID from the mode: see mode_tab */
	{ "rmdir", -1 },
	{ "link", -1 },
	{ "linkat", -1 },
	{ "unlink", -1 },
	{ "unlinkat", -1 },
	{ "symlink", -1 },
	{ "symlinkat", -1 },
	{ "readlink", -1 },
	{ "readlinkat", -1 },
	{ "chown", -1 },
	{ "fchown", -1 },
	{ "lchown", -1 },
	{ "fchownat", -1 },
	{ "umask", -1 },
	{ "utime", -1 },
	{ "utimes", -1 },
	{ "futimesat", -1 },
	{ "utimensat", -1 },
	{ "setxattr", -1 },
	{ "lsetxattr", -1 },
	{ "fsetxattr", -1 },
	{ "getxattr", -1 },
	{ "lgetxattr", -1 },
	{ "fgetxattr", -1 },
	{ "listxattr", -1 },
	{ "llistxattr", -1 },
	{ "flistxattr", -1 },
	{ "removexattr", -1 },
	{ "lremovexattr", -1 },
	{ "fremovexattr", -1 }, /* cp -a, tar, git on some filesystems */
	{ "setxattrat", 463 },
	{ "getxattrat", 464 },
	{ "listxattrat", 465 },
	{ "removexattrat", 466 },
	{ "file_getattr", 468 },
	{ "file_setattr", 469 },
	{ "inotify_init", -1 },
	{ "inotify_init1", -1 },
	{ "inotify_add_watch", -1 },
	{ "inotify_rm_watch", -1 }, /* node fs.watch, tail -f */
	{ "cachestat", 451 },
	/* memory */
	{ "brk", -1 },
	{ "mmap", -1 },
	{ "munmap", -1 },
	{ "mprotect", -1 },
	{ "mremap", -1 },
	{ "msync", -1 },
	{ "mincore", -1 },
	{ "madvise", -1 },
	{ "mlock", -1 },
	{ "mlock2", -1 },
	{ "munlock", -1 },
	{ "mlockall", -1 },
	{ "munlockall", -1 }, /* bounded by RLIMIT_MEMLOCK */
	{ "remap_file_pages", -1 },
	{ "pkey_mprotect", -1 },
	{ "pkey_alloc", -1 },
	{ "pkey_free", -1 },
	{ "mbind", -1 },
	{ "set_mempolicy", -1 },
	{ "get_mempolicy", -1 }, /* node/V8, numactl-aware libraries */
	{ "set_mempolicy_home_node", -1 },
	{ "membarrier", -1 },        /* V8, .NET, liburcu */
	{ "map_shadow_stack", 453 }, /* CET shadow stacks */
	{ "mseal", 462 },            /* glibc 2.41+ */
	/* processes and threads (clone/unshare are conditional, below) */
	{ "fork", -1 },
	{ "vfork", -1 }, /* posix_spawn, bash */
	{ "execve", -1 },
	{ "execveat", -1 },
	{ "exit", -1 },
	{ "exit_group", -1 },
	{ "wait4", -1 },
	{ "waitid", -1 },
	{ "kill", -1 },
	{ "tkill", -1 },
	{ "tgkill", -1 },
	{ "getpid", -1 },
	{ "getppid", -1 },
	{ "gettid", -1 },
	{ "getpgid", -1 },
	{ "setpgid", -1 },
	{ "getpgrp", -1 },
	{ "getsid", -1 },
	{ "setsid", -1 },
	{ "set_tid_address", -1 },
	{ "set_robust_list", -1 },
	{ "get_robust_list", -1 },
	{ "rseq", -1 }, /* glibc 2.35+ registers it for every thread */
	{ "futex", -1 },
	{ "futex_waitv", -1 },
	{ "futex_wake", 454 },
	{ "futex_wait", 455 },
	{ "futex_requeue", 456 },
	{ "pidfd_open", -1 },
	{ "pidfd_send_signal", -1 }, /* python 3.9+ subprocess, systemd tools */
	{ "arch_prctl", -1 },
	{ "prctl", -1 },
	{ "capget", -1 },
	{ "capset", -1 },     /* only lowers: the sandbox holds no capabilities */
	{ "seccomp", -1 },    /* stacking filters only narrows; a second listener gets EBUSY */
	{ "uretprobe", 335 }, /* the kernel's own uprobe trampoline */
	{ "restart_syscall", -1 },
	/* credentials: inside the user namespace, nothing to gain */
	{ "getuid", -1 },
	{ "geteuid", -1 },
	{ "getgid", -1 },
	{ "getegid", -1 },
	{ "getresuid", -1 },
	{ "getresgid", -1 },
	{ "getgroups", -1 },
	{ "setuid", -1 },
	{ "setgid", -1 },
	{ "setreuid", -1 },
	{ "setregid", -1 },
	{ "setresuid", -1 },
	{ "setresgid", -1 },
	{ "setfsuid", -1 },
	{ "setfsgid", -1 },
	{ "setgroups", -1 },
	/* signals */
	{ "rt_sigaction", -1 },
	{ "rt_sigprocmask", -1 },
	{ "rt_sigreturn", -1 },
	{ "rt_sigpending", -1 },
	{ "rt_sigtimedwait", -1 },
	{ "rt_sigqueueinfo", -1 },
	{ "rt_tgsigqueueinfo", -1 },
	{ "rt_sigsuspend", -1 },
	{ "sigaltstack", -1 },
	{ "pause", -1 },
	{ "signalfd", -1 },
	{ "signalfd4", -1 },
	/* time (reading and sleeping; setting the clocks is refused) */
	{ "time", -1 },
	{ "gettimeofday", -1 },
	{ "clock_gettime", -1 },
	{ "clock_getres", -1 },
	{ "clock_nanosleep", -1 },
	{ "nanosleep", -1 },
	{ "alarm", -1 },
	{ "getitimer", -1 },
	{ "setitimer", -1 },
	{ "timer_create", -1 },
	{ "timer_settime", -1 },
	{ "timer_gettime", -1 },
	{ "timer_getoverrun", -1 },
	{ "timer_delete", -1 },
	{ "timerfd_create", -1 },
	{ "timerfd_settime", -1 },
	{ "timerfd_gettime", -1 },
	{ "times", -1 },
	/* waiting for events */
	{ "poll", -1 },
	{ "ppoll", -1 },
	{ "select", -1 },
	{ "pselect6", -1 },
	{ "epoll_create", -1 },
	{ "epoll_create1", -1 },
	{ "epoll_ctl", -1 },
	{ "epoll_wait", -1 },
	{ "epoll_pwait", -1 },
	{ "epoll_pwait2", -1 },
	{ "eventfd", -1 },
	{ "eventfd2", -1 },
	/* legacy AIO without io_setup (ENOSYS, below): no context can be made,
	 * so these only ever answer EINVAL; io_uring is refused */
	{ "io_destroy", -1 },
	{ "io_getevents", -1 },
	{ "io_pgetevents", -1 },
	{ "io_submit", -1 },
	{ "io_cancel", -1 },
	/* sockets (socket/socketpair are conditional on the family, below) */
	{ "connect", -1 },
	{ "accept", -1 },
	{ "accept4", -1 },
	{ "bind", -1 },
	{ "listen", -1 },
	{ "shutdown", -1 },
	{ "sendto", -1 },
	{ "recvfrom", -1 },
	{ "sendmsg", -1 },
	{ "recvmsg", -1 },
	{ "sendmmsg", -1 },
	{ "recvmmsg", -1 },
	{ "getsockname", -1 },
	{ "getpeername", -1 },
	{ "setsockopt", -1 },
	{ "getsockopt", -1 },
	/* System V and POSIX IPC: the sandbox has its own IPC namespace */
	{ "shmget", -1 },
	{ "shmat", -1 },
	{ "shmctl", -1 },
	{ "shmdt", -1 },
	{ "semget", -1 },
	{ "semop", -1 },
	{ "semtimedop", -1 },
	{ "semctl", -1 },
	{ "msgget", -1 },
	{ "msgsnd", -1 },
	{ "msgrcv", -1 },
	{ "msgctl", -1 },
	{ "mq_open", -1 },
	{ "mq_unlink", -1 },
	{ "mq_timedsend", -1 },
	{ "mq_timedreceive", -1 },
	{ "mq_notify", -1 },
	{ "mq_getsetattr", -1 },
	/* scheduling and resources of the sandbox's own processes */
	{ "sched_yield", -1 },
	{ "sched_setparam", -1 },
	{ "sched_getparam", -1 },
	{ "sched_setscheduler", -1 },
	{ "sched_getscheduler", -1 },
	{ "sched_get_priority_max", -1 },
	{ "sched_get_priority_min", -1 },
	{ "sched_rr_get_interval", -1 },
	{ "sched_setaffinity", -1 },
	{ "sched_getaffinity", -1 }, /* nproc, make -j, python os.cpu_count */
	{ "sched_setattr", -1 },
	{ "sched_getattr", -1 },
	{ "getpriority", -1 },
	{ "setpriority", -1 },
	{ "ioprio_get", -1 },
	{ "ioprio_set", -1 },
	{ "getrlimit", -1 },
	{ "setrlimit", -1 },
	{ "prlimit64", -1 },
	{ "getrusage", -1 },
	{ "getcpu", -1 },
	/* system information */
	{ "uname", -1 },
	{ "sysinfo", -1 },
	{ "getrandom", -1 },
};

/* Allowed only for some arguments (rules in add_conditional; the calls
 * that take a file mode are in mode_tab); every other use is refused with
 * EPERM. */
static const struct sc cond_tab[] = {
	{ "clone", -1 },      { "unshare", -1 }, { "socket", -1 },
	{ "socketpair", -1 }, { "ioctl", -1 },   { "personality", -1 },
};

/* --- File modes (issue 16, finding 1) ------------------------------------
 * No file the sandbox creates or changes may carry S_ISUID or S_ISGID: when
 * the caller is root it may land owned by a privileged host uid, and even a
 * file owned by the caller is a setuid program for whoever runs it next.
 * Each call below that takes a mode is allowed only when the mode's
 * S_ISUID|S_ISGID bits are clear, or, for open/openat, when the flags create
 * nothing (the kernel ignores the mode without O_CREAT or O_TMPFILE).  Any
 * other use is refused with EPERM and counted.  The mask has no bit above
 * 32, so only the low half of the argument is compared, as the kernel reads
 * it (umode_t): junk in the upper half neither refuses nor dodges.
 *
 * Not filtered: mkdir/mkdirat (the kernel keeps only the permission and
 * sticky bits of their mode, so a directory gets S_ISGID only by inheriting
 * it from its parent), S_ISVTX (harmless on files).  chmod g+s of a
 * directory is refused too: the filter cannot see the file type.  openat2
 * reads its mode from memory the filter cannot see: ENOSYS (enosys_tab),
 * and libc falls back to openat.  Writing to or truncating an existing
 * setuid file clears the bits (the sandbox has no CAP_FSETID), and file
 * capabilities (security.capability) need CAP_SETFCAP, which it lacks. */
#define SETID_BITS   ((uint64_t)(S_ISUID | S_ISGID))
#define K_O_TMPFILE  020000000 /* the kernel's __O_TMPFILE, without O_DIRECTORY */
#define CREATE_FLAGS ((uint64_t)(O_CREAT | K_O_TMPFILE))

struct mode_sc {
	struct sc sc;
	unsigned mode_arg; /* index of the mode argument */
	int flags_arg;     /* index of the open flags, -1: the call always applies the mode */
};

static const struct mode_sc mode_tab[] = {
	{ { "chmod", -1 }, 1, -1 },      /* path, mode */
	{ { "fchmod", -1 }, 1, -1 },     /* fd, mode */
	{ { "fchmodat", -1 }, 2, -1 },   /* dirfd, path, mode */
	{ { "fchmodat2", 452 }, 2, -1 }, /* dirfd, path, mode, flags: glibc 2.39+ lchmod */
	{ { "creat", -1 }, 1, -1 },      /* path, mode */
	{ { "open", -1 }, 2, 1 },        /* path, flags, mode */
	{ { "openat", -1 }, 3, 2 },      /* dirfd, path, flags, mode */
	{ { "mknod", -1 }, 1, -1 },      /* path, mode, dev */
	{ { "mknodat", -1 }, 2, -1 }, /* dirfd, path, mode, dev: mkfifo; devices need CAP_MKNOD */
};

/* Refused and counted with ENOSYS: io_uring would run file and socket
 * operations behind the filter's back (THREATS row 6); programs treat ENOSYS
 * as "not on this kernel" and fall back.  Landlock: nesting rulesets is
 * harmless but nothing here needs it, so its surface stays closed, with the
 * errno that makes landlock-aware programs continue without it.  openat2:
 * its mode and flags are in memory (see mode_tab); glibc and systemd fall
 * back to openat.  io_setup: AIO contexts count against fs.aio-max-nr,
 * one limit for the whole host (issue 16, finding 4); libaio users fall back
 * to synchronous I/O. */
static const struct sc enosys_tab[] = {
	{ "io_uring_setup", -1 },    { "io_uring_enter", -1 },
	{ "io_uring_register", -1 }, { "landlock_create_ruleset", -1 },
	{ "landlock_add_rule", -1 }, { "landlock_restrict_self", -1 },
	{ "openat2", -1 },           { "io_setup", -1 },
};

/* Refused with EPERM.  Not needed for the default action (everything
 * unlisted is refused), but named so that the reply errno is right, so that
 * a test can check no name is in two tables, and as the documented deny
 * list.  Each one: an exploit primitive, a way around the other walls, or
 * host-wide state. */
static const struct sc eperm_tab[] = {
	/* other processes' memory and state (THREATS row 7) */
	{ "ptrace", -1 },
	{ "process_vm_readv", -1 },
	{ "process_vm_writev", -1 },
	{ "kcmp", -1 },
	{ "pidfd_getfd", -1 },
	{ "process_madvise", -1 },
	{ "process_mrelease", -1 },
	{ "migrate_pages", -1 },
	{ "move_pages", -1 },
	/* kernel attack surface (row 9) */
	{ "keyctl", -1 },
	{ "add_key", -1 },
	{ "request_key", -1 },
	{ "bpf", -1 },
	{ "perf_event_open", -1 },
	{ "userfaultfd", -1 },
	{ "fanotify_init", -1 },
	{ "fanotify_mark", -1 },
	{ "lookup_dcookie", -1 },
	{ "modify_ldt", -1 },
	{ "iopl", -1 },
	{ "ioperm", -1 },
	{ "set_thread_area", -1 },
	{ "get_thread_area", -1 },
	{ "uselib", -1 },
	{ "_sysctl", -1 },
	{ "syslog", -1 },
	{ "vhangup", -1 },
	{ "lsm_get_self_attr", 459 },
	{ "lsm_set_self_attr", 460 },
	{ "lsm_list_modules", 461 },
	/* namespaces, mounts, the root (row 8) */
	{ "setns", -1 },
	{ "mount", -1 },
	{ "umount2", -1 },
	{ "pivot_root", -1 },
	{ "chroot", -1 },
	{ "fsopen", -1 },
	{ "fsconfig", -1 },
	{ "fsmount", -1 },
	{ "fspick", -1 },
	{ "move_mount", -1 },
	{ "open_tree", -1 },
	{ "mount_setattr", -1 },
	{ "open_tree_attr", 467 },
	{ "statmount", 457 },
	{ "listmount", 458 },
	{ "name_to_handle_at", -1 },
	{ "open_by_handle_at", -1 }, /* "shocker" */
	/* host-wide state */
	{ "init_module", -1 },
	{ "finit_module", -1 },
	{ "delete_module", -1 },
	{ "create_module", -1 },
	{ "query_module", -1 },
	{ "get_kernel_syms", -1 },
	{ "kexec_load", -1 },
	{ "kexec_file_load", -1 },
	{ "reboot", -1 },
	{ "swapon", -1 },
	{ "swapoff", -1 },
	{ "acct", -1 },
	{ "quotactl", -1 },
	{ "quotactl_fd", -1 },
	{ "nfsservctl", -1 },
	{ "settimeofday", -1 },
	{ "clock_settime", -1 },
	{ "clock_adjtime", -1 },
	{ "adjtimex", -1 },
	{ "sethostname", -1 },
	{ "setdomainname", -1 },
	{ "ustat", -1 },
	{ "sysfs", -1 },
	/* never implemented on x86_64 */
	{ "getpmsg", -1 },
	{ "putpmsg", -1 },
	{ "afs_syscall", -1 },
	{ "tuxcall", -1 },
	{ "security", -1 },
	{ "vserver", -1 },
	{ "epoll_ctl_old", -1 },
	{ "epoll_wait_old", -1 },
};

/* clone3 passes its flags in memory, where the filter cannot look: ENOSYS
 * straight from the filter so glibc falls back to clone(2), whose flags it
 * can check.  glibc tries it on every thread and posix_spawn, so it is not a
 * denial worth counting. */
static const struct sc silent_tab[] = {
	{ "clone3", -1 },
};

/* ioctl requests refused, compared on the low 32 bits only (the kernel
 * truncates the request to unsigned int, CVE-2019-10063). */
static const uint32_t bad_ioctls[] = { TIOCSTI, TIOCLINUX };

/* personality() values that change nothing that matters: PER_LINUX,
 * PER_LINUX32 (uname reports i686), UNAME26, both, and the query. */
static const uint32_t ok_personas[] = { 0x0, 0x8, 0x20000, 0x20008, 0xffffffff };

static int resolve(const struct sc *s)
{
	int nr = seccomp_syscall_resolve_name(s->name);

	if (nr == __NR_SCMP_ERROR)
		nr = s->nr;
	return nr;
}

static void eperm_set(struct cd_seccomp_prog *p, int nr)
{
	if (nr >= 0 && nr < CD_SECCOMP_NR_MAX)
		p->eperm[nr / 64] |= 1ULL << (nr % 64);
}

int cd_seccomp_policy_of(const char *name)
{
	static const struct {
		const struct sc *tab;
		size_t n;
		int class;
	} tabs[] = {
		{ allow_tab, CD_ARRAY_SIZE(allow_tab), CD_SC_ALLOW },
		{ cond_tab, CD_ARRAY_SIZE(cond_tab), CD_SC_COND },
		{ eperm_tab, CD_ARRAY_SIZE(eperm_tab), CD_SC_EPERM },
		{ enosys_tab, CD_ARRAY_SIZE(enosys_tab), CD_SC_ENOSYS },
		{ silent_tab, CD_ARRAY_SIZE(silent_tab), CD_SC_SILENT },
	};
	size_t t, i;

	for (t = 0; t < CD_ARRAY_SIZE(tabs); t++)
		for (i = 0; i < tabs[t].n; i++)
			if (strcmp(tabs[t].tab[i].name, name) == 0)
				return tabs[t].class;
	for (i = 0; i < CD_ARRAY_SIZE(mode_tab); i++)
		if (strcmp(mode_tab[i].sc.name, name) == 0)
			return CD_SC_COND;
	return CD_SC_UNKNOWN;
}

static int add_tab(scmp_filter_ctx ctx, const struct sc *tab, size_t n, uint32_t act,
                   struct cd_err *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int nr = resolve(&tab[i]);
		int r;

		if (nr < 0)
			return cd_err_set(err, -CD_E_KERNEL, "seccomp: unknown syscall '%s'",
			                  tab[i].name);
		r = seccomp_rule_add(ctx, act, nr, 0);
		if (r < 0)
			return cd_err_sys(err, r, "seccomp: rule for '%s'", tab[i].name);
	}
	return 0;
}

/* Allow ioctl for every request whose low 32 bits are not in bad_ioctls.
 * libseccomp cannot mix an unconditional allow with conditional denials of
 * the same syscall (the unconditional rule wins), and has no "masked not
 * equal", so the complement is spelled as masked-equal cubes: walk the bits
 * of the request from the top and, wherever no refused value continues a
 * prefix, allow the whole subtree under it.  That is 31 + (highest bit in
 * which the refused values differ) rules; libseccomp shares the high-word
 * test, about 70 BPF instructions. */
static int allow_except(scmp_filter_ctx ctx, int nr, unsigned arg, uint32_t mask, uint32_t val,
                        int bit, const uint32_t *set, size_t n)
{
	uint32_t s0[CD_ARRAY_SIZE(bad_ioctls)] = { 0 }, s1[CD_ARRAY_SIZE(bad_ioctls)] = { 0 };
	size_t i, n0 = 0, n1 = 0;
	int r;

	if (n == 0) {
		struct scmp_arg_cmp c = SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, mask, val);
		return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, 1, &c);
	}
	if (bit < 0)
		return 0; /* exactly a refused value */
	if (n > CD_ARRAY_SIZE(s0))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (set[i] >> bit & 1)
			s1[n1++] = set[i];
		else
			s0[n0++] = set[i];
	}
	mask |= 1U << bit;
	r = allow_except(ctx, nr, arg, mask, val, bit - 1, s0, n0);
	if (r < 0)
		return r;
	return allow_except(ctx, nr, arg, mask, val | 1U << bit, bit - 1, s1, n1);
}

/* One rule: allow `nr` when the low 32 bits of `arg` equal `v` (the kernel
 * reads int arguments as 32 bits, whatever the upper half holds). */
static int allow_eq32(scmp_filter_ctx ctx, int nr, unsigned arg, uint32_t v)
{
	struct scmp_arg_cmp c = SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, 0xffffffffULL, v);
	return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, 1, &c);
}

/* The rules of mode_tab: allow when the mode carries neither S_ISUID nor
 * S_ISGID; for open/openat, also when the flags create nothing. */
static int add_mode_rules(scmp_filter_ctx ctx, struct cd_err *err)
{
	size_t i;

	for (i = 0; i < CD_ARRAY_SIZE(mode_tab); i++) {
		const struct mode_sc *m = &mode_tab[i];
		struct scmp_arg_cmp c = SCMP_CMP(m->mode_arg, SCMP_CMP_MASKED_EQ, SETID_BITS, 0);
		int nr = resolve(&m->sc), r;

		if (nr < 0)
			return cd_err_set(err, -CD_E_KERNEL, "seccomp: unknown syscall '%s'",
			                  m->sc.name);
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, 1, &c);
		if (r >= 0 && m->flags_arg >= 0) {
			c = (struct scmp_arg_cmp)SCMP_CMP((unsigned)m->flags_arg,
			                                  SCMP_CMP_MASKED_EQ, CREATE_FLAGS, 0);
			r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, 1, &c);
		}
		if (r < 0)
			return cd_err_sys(err, r, "seccomp: mode rule for '%s'", m->sc.name);
	}
	return 0;
}

static int add_conditional(scmp_filter_ctx ctx, const struct cd_seccomp_opts *o, struct cd_err *err)
{
	struct scmp_arg_cmp no_ns = SCMP_A0(SCMP_CMP_MASKED_EQ, (uint64_t)NS_FLAGS, 0);
	size_t i;
	int r;

	/* clone and unshare without any namespace flag.  Plain
	 * unshare(CLONE_FILES|CLONE_FS|CLONE_SYSVSEM) only detaches state the
	 * process shares with itself, so it stays allowed. */
	r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1, &no_ns);
	if (r < 0)
		return cd_err_sys(err, r, "seccomp: clone rule");
	r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(unshare), 1, &no_ns);
	if (r < 0)
		return cd_err_sys(err, r, "seccomp: unshare rule");

	/* socket families: AF_UNIX always (the netns and Landlock keep it
	 * local), AF_INET/AF_INET6 only for the egress proxy.  AF_NETLINK,
	 * AF_PACKET, AF_VSOCK, AF_ALG ... reach kernel code nobody here needs. */
	r = allow_eq32(ctx, SCMP_SYS(socket), 0, AF_UNIX);
	if (r >= 0)
		r = allow_eq32(ctx, SCMP_SYS(socketpair), 0, AF_UNIX);
	if (r >= 0 && o->allow_net_inet)
		r = allow_eq32(ctx, SCMP_SYS(socket), 0, AF_INET);
	if (r >= 0 && o->allow_net_inet)
		r = allow_eq32(ctx, SCMP_SYS(socket), 0, AF_INET6);
	if (r < 0)
		return cd_err_sys(err, r, "seccomp: socket rule");

	r = allow_except(ctx, SCMP_SYS(ioctl), 1, 0, 0, 31, bad_ioctls, CD_ARRAY_SIZE(bad_ioctls));
	if (r < 0)
		return cd_err_sys(err, r, "seccomp: ioctl rules");

	for (i = 0; i < CD_ARRAY_SIZE(ok_personas); i++) {
		r = allow_eq32(ctx, SCMP_SYS(personality), 0, ok_personas[i]);
		if (r < 0)
			return cd_err_sys(err, r, "seccomp: personality rule");
	}
	return add_mode_rules(ctx, err);
}

/* Write the filter to a memfd and read it back. */
int cd_seccomp_export(void *ctx, struct cd_seccomp_prog *p, struct cd_err *err)
{
	CD_AUTOCLOSE int fd = memfd_create("cordon-seccomp", MFD_CLOEXEC);
	struct stat st;
	size_t size, done = 0;
	char *buf;
	int r;

	if (fd < 0)
		return cd_err_sys(err, -errno, "seccomp: memfd_create");
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return cd_err_sys(err, r, "seccomp: export");
	if (fstat(fd, &st) < 0)
		return cd_err_sys(err, -errno, "seccomp: fstat");
	size = (size_t)st.st_size;
	if (size == 0 || size % sizeof(struct sock_filter) != 0 ||
	    size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return cd_err_set(err, -CD_E_LIMIT, "seccomp: exported filter of %zu bytes", size);
	buf = malloc(size);
	if (!buf)
		return cd_err_set(err, -ENOMEM, "seccomp: out of memory");
	while (done < size) {
		ssize_t n = pread(fd, buf + done, size - done, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			free(buf);
			return cd_err_sys(err, r, "seccomp: read back");
		}
		done += (size_t)n;
	}
	p->filter = (struct sock_filter *)buf;
	p->len = (unsigned short)(size / sizeof(struct sock_filter));
	return 0;
}

static int set_reply_table(struct cd_seccomp_prog *p, struct cd_err *err)
{
	size_t i;

	for (i = 0; i < CD_ARRAY_SIZE(eperm_tab); i++) {
		int nr = resolve(&eperm_tab[i]);
		/* Old syscalls libseccomp has dropped fall back to ENOSYS. */
		eperm_set(p, nr);
	}
	for (i = 0; i < CD_ARRAY_SIZE(cond_tab); i++) {
		int nr = resolve(&cond_tab[i]);
		if (nr < 0)
			return cd_err_set(err, -CD_E_KERNEL, "seccomp: unknown syscall '%s'",
			                  cond_tab[i].name);
		eperm_set(p, nr);
	}
	for (i = 0; i < CD_ARRAY_SIZE(mode_tab); i++)
		eperm_set(p, resolve(&mode_tab[i].sc));
	return 0;
}

static int check_notify_support(struct cd_err *err)
{
	struct seccomp_notif_sizes sz;

	/* API level 5: the kernel and libseccomp both know user notification. */
	if (seccomp_api_get() < 5)
		return cd_err_set(
		        err, -CD_E_KERNEL,
		        "seccomp user notification unavailable (needs Linux 5.0 or later)");
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		return cd_err_sys(err, -errno, "seccomp: SECCOMP_GET_NOTIF_SIZES");
	/* The handler's buffers have the sizes of this header's structs. */
	if (sz.seccomp_notif != sizeof(struct seccomp_notif) ||
	    sz.seccomp_notif_resp != sizeof(struct seccomp_notif_resp))
		return cd_err_set(err, -CD_E_KERNEL,
		                  "seccomp: kernel notification sizes %u/%u differ from %zu/%zu",
		                  sz.seccomp_notif, sz.seccomp_notif_resp,
		                  sizeof(struct seccomp_notif), sizeof(struct seccomp_notif_resp));
	return 0;
}

/* The build-time program, when it is linked in and made for these options. */
static int from_prebuilt(const struct cd_seccomp_opts *o, struct cd_seccomp_prog *ret,
                         struct cd_err *err)
{
	const struct cd_seccomp_prebuilt *pb = &cd_seccomp_prebuilt;
	struct cd_seccomp_prog p;
	int r;

	if (!pb || pb->len == 0 || pb->notify != !!o->notify ||
	    pb->allow_net_inet != !!o->allow_net_inet)
		return -ENOENT;
	if (o->notify && (r = check_notify_support(err)) < 0)
		return r;
	memset(&p, 0, sizeof p);
	p.filter = malloc(pb->len * sizeof *p.filter);
	if (!p.filter)
		return cd_err_set(err, -ENOMEM, "seccomp: out of memory");
	memcpy(p.filter, pb->filter, pb->len * sizeof *p.filter);
	p.len = pb->len;
	p.notify = pb->notify;
	memcpy(p.eperm, pb->eperm, sizeof p.eperm);
	*ret = p;
	return 0;
}

int cd_seccomp_build(const struct cd_seccomp_opts *o, struct cd_seccomp_prog *ret,
                     struct cd_err *err)
{
	struct cd_seccomp_prog p;
	scmp_filter_ctx ctx;
	uint32_t deny, badarch, nosys;
	int r;

	if (!o || !ret)
		return cd_err_set(err, -EINVAL, "seccomp: no options");
	r = from_prebuilt(o, ret, err);
	if (r != -ENOENT)
		return r;
	if (seccomp_arch_native() != SCMP_ARCH_X86_64)
		return cd_err_set(err, -CD_E_KERNEL, "seccomp: only x86_64 is supported");
	memset(&p, 0, sizeof p);
	p.notify = !!o->notify;
	if (p.notify) {
		r = check_notify_support(err);
		if (r < 0)
			return r;
	}

	/* Refused calls go to the listener, or fail with EPERM without one.
	 * Another ABI goes to the listener too (counted, EPERM); without one
	 * it kills the process, because a silent EPERM would hide an escape
	 * attempt and no honest program here makes i386 or x32 calls. */
	deny = p.notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EPERM);
	badarch = p.notify ? SCMP_ACT_NOTIFY : SCMP_ACT_KILL_PROCESS;
	nosys = SCMP_ACT_ERRNO(ENOSYS);

	ctx = seccomp_init(deny);
	if (!ctx)
		return cd_err_set(err, -ENOMEM, "seccomp: init failed");
	/* Only the native arch is added (libseccomp's default); x32 numbers
	 * on x86_64 take the bad-arch action too. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, badarch);
	if (r < 0) {
		cd_err_sys(err, r, "seccomp: bad-arch action");
		goto out;
	}
	/* A binary tree over the syscall numbers: ~9 comparisons, not ~300. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (r < 0) {
		cd_err_sys(err, r, "seccomp: optimize attribute");
		goto out;
	}
	r = add_tab(ctx, allow_tab, CD_ARRAY_SIZE(allow_tab), SCMP_ACT_ALLOW, err);
	if (r >= 0)
		r = add_tab(ctx, silent_tab, CD_ARRAY_SIZE(silent_tab), nosys, err);
	/* With a listener the handler answers ENOSYS (and counts); without
	 * one the filter does. */
	if (r >= 0 && !p.notify)
		r = add_tab(ctx, enosys_tab, CD_ARRAY_SIZE(enosys_tab), nosys, err);
	if (r >= 0)
		r = add_conditional(ctx, o, err);
	if (r >= 0)
		r = set_reply_table(&p, err);
	if (r >= 0)
		r = cd_seccomp_export(ctx, &p, err);
	if (r >= 0)
		*ret = p;
out:
	seccomp_release(ctx);
	return r;
}

void cd_seccomp_prog_release(struct cd_seccomp_prog *p)
{
	if (!p)
		return;
	free(p->filter);
	p->filter = NULL;
	p->len = 0;
}

int cd_seccomp_install(const struct cd_seccomp_prog *p, int *ret_listener)
{
	struct sock_fprog fp;
	unsigned long flags = 0;
	long r;

	if (!p || !p->filter || p->len == 0 || (p->notify && !ret_listener))
		return -EINVAL;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return -EPERM;
	fp.len = p->len;
	fp.filter = p->filter;
	if (p->notify)
		/* WAIT_KILLABLE_RECV: once cordon has read a notification, only
		 * a fatal signal interrupts the call, so a signal cannot make the
		 * same call be counted twice. */
		flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fp);
	if (r < 0 && errno == EINVAL && p->notify) {
		flags &= ~SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV; /* before Linux 5.19 */
		r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fp);
	}
	if (r < 0)
		return -errno;
	if (p->notify)
		*ret_listener = (int)r;
	return 0;
}
