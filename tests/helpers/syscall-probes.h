/* syscall-probes.h — one probe per syscall the seccomp wall allows or
 * refuses, shared by tests/helpers/try-syscall.c (run inside the sandbox) and
 * tests/unit/test-seccomp.c (run under the bare filter).
 *
 * Each probe calls its syscall with arguments that make it fail harmlessly
 * when it does reach the kernel, even as root: a bad fd, a NULL pointer,
 * invalid flags or magic (reboot gets no magic, acct a bad pointer, mount a
 * NULL target, clone/unshare an invalid flag combination ...).  The kernel's
 * error is then rarely the errno the filter refuses with, so "filtered" and
 * "allowed but failed" can be told apart; where the kernel checks a
 * capability first (pivot_root, init_module ... without privilege) both give
 * EPERM, and only a comparison with an unfiltered run or cordon's count of
 * refusals decides.  Standalone: libc and kernel headers only, so the helper
 * can be linked statically. */
#ifndef CD_SYSCALL_PROBES_H
#define CD_SYSCALL_PROBES_H

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

enum probe_kind {
	PROBE_ALLOW,  /* must reach the kernel */
	PROBE_DENY,   /* refused with deny_errno and counted */
	PROBE_SILENT, /* refused with deny_errno, not counted (clone3) */
	PROBE_INET,   /* allowed only with allow_net_inet, else like DENY */
	PROBE_ABI,    /* another ABI: counted EPERM with a listener, else SIGSYS */
};

struct probe {
	const char *name;
	long (*fn)(void);
	enum probe_kind kind;
	int deny_errno; /* what a refusal returns */
	uint32_t arch;  /* seccomp_data.arch and .nr of the call, for counts */
	int nr;
};

/* -errno on failure, the result otherwise. */
#define PR(expr)                                                                                   \
	({                                                                                         \
		long r_ = (long)(expr);                                                            \
		r_ < 0 ? -(long)errno : r_;                                                        \
	})

static long pr_close(long r)
{
	if (r >= 0)
		close((int)r);
	return r < 0 ? r : 0;
}

/* A raw clone with the stack shared like fork; a child that somehow got
 * created leaves at once. */
static long pr_clone(unsigned long flags)
{
	long r = PR(syscall(SYS_clone, flags, NULL, NULL, NULL, 0));
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, __WALL);
	return r;
}

static long p_getpid(void)
{
	return PR(syscall(SYS_getpid));
}
static long p_openat(void)
{
	return pr_close(PR(openat(AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC)));
}
static long p_socket_unix(void)
{
	return pr_close(PR(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)));
}
static long p_socketpair_unix(void)
{
	int sv[2];
	long r = PR(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	if (r == 0) {
		close(sv[0]);
		close(sv[1]);
	}
	return r;
}
/* socketpair is for AF_UNIX; any other family reaches that family's code
 * (EOPNOTSUPP for AF_INET when it gets there). */
static long p_socketpair_inet(void)
{
	int sv[2];
	long r = PR(socketpair(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	if (r == 0) {
		close(sv[0]);
		close(sv[1]);
	}
	return r;
}
static long p_fork(void)
{
	long r = PR(fork());
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	return r > 0 ? 0 : r;
}
static void *thread_fn(void *arg)
{
	return arg;
}
static long p_thread(void)
{
	pthread_t t;
	int r = pthread_create(&t, NULL, thread_fn, NULL);
	if (r != 0)
		return -r;
	pthread_join(t, NULL);
	return 0;
}
static long p_unshare_files(void)
{
	return PR(unshare(CLONE_FILES));
}
static long p_tcgets(void)
{
	struct termios t;
	return PR(ioctl(0, TCGETS, &t));
}
static long p_personality_query(void)
{
	return PR(syscall(SYS_personality, 0xffffffffUL));
}
static long p_memfd(void)
{
	return pr_close(PR(syscall(SYS_memfd_create, "probe", MFD_CLOEXEC)));
}
static long p_statx(void)
{
	struct statx st;
	return PR(syscall(SYS_statx, AT_FDCWD, "/", 0, STATX_BASIC_STATS, &st));
}
static long p_close_range(void)
{
	return PR(syscall(SYS_close_range, ~0U - 1, ~0U, 0));
}

static long p_socket_inet(void)
{
	return pr_close(PR(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)));
}
static long p_socket_inet6(void)
{
	return pr_close(PR(socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0)));
}

static long p_ptrace(void)
{
	return PR(syscall(SYS_ptrace, 7 /* PTRACE_CONT */, 0, 0, 0)); /* pid 0: ESRCH */
}
static long p_process_vm_readv(void)
{
	return PR(syscall(SYS_process_vm_readv, getpid(), NULL, 0, NULL, 0, 1)); /* flags: EINVAL */
}
static long p_process_vm_writev(void)
{
	return PR(syscall(SYS_process_vm_writev, getpid(), NULL, 0, NULL, 0, 1));
}
static long p_keyctl(void)
{
	return PR(syscall(SYS_keyctl, 0x7fff, 0, 0, 0, 0)); /* EOPNOTSUPP */
}
static long p_add_key(void)
{
	return PR(syscall(SYS_add_key, NULL, NULL, NULL, 0, 0)); /* EFAULT */
}
static long p_request_key(void)
{
	return PR(syscall(SYS_request_key, NULL, NULL, NULL, 0));
}
static long p_bpf(void)
{
	return PR(syscall(SYS_bpf, 0x7fff, NULL, 0)); /* EINVAL */
}
static long p_perf_event_open(void)
{
	return PR(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0)); /* EFAULT */
}
static long p_userfaultfd(void)
{
	return pr_close(PR(syscall(SYS_userfaultfd, UFFD_USER_MODE_ONLY | 2))); /* EINVAL */
}
static long p_mount(void)
{
	return PR(syscall(SYS_mount, NULL, NULL, NULL, 0, NULL)); /* NULL target: EFAULT */
}
static long p_umount2(void)
{
	return PR(syscall(SYS_umount2, NULL, 0x80000000)); /* EINVAL */
}
static long p_pivot_root(void)
{
	return PR(syscall(SYS_pivot_root, NULL, NULL));
}
static long p_chroot(void)
{
	return PR(syscall(SYS_chroot, NULL)); /* EFAULT */
}
static long p_setns(void)
{
	return PR(syscall(SYS_setns, -1, 0)); /* EBADF */
}
static long p_fsopen(void)
{
	return pr_close(PR(syscall(SYS_fsopen, NULL, 0)));
}
static long p_open_tree(void)
{
	return pr_close(PR(syscall(SYS_open_tree, -1, NULL, 0x80000000U))); /* EINVAL */
}
static long p_name_to_handle_at(void)
{
	return PR(syscall(SYS_name_to_handle_at, -1, NULL, NULL, NULL, 0x80000000U));
}
/* unshare/clone with a namespace flag plus something that makes the kernel
 * refuse the whole call with EINVAL: nothing is ever created. */
static long p_unshare_user(void)
{
	return PR(syscall(SYS_unshare, CLONE_NEWUSER | 0x80000000UL /* CLONE_IO */));
}
static long p_unshare_mount(void)
{
	return PR(syscall(SYS_unshare, CLONE_NEWNS | 0x80000000UL));
}
static long p_unshare_net(void)
{
	return PR(syscall(SYS_unshare, CLONE_NEWNET | 0x80000000UL));
}
static long p_unshare_pid(void)
{
	return PR(syscall(SYS_unshare, CLONE_NEWPID | 0x80000000UL));
}
static long p_unshare_ipc(void)
{
	return PR(syscall(SYS_unshare, CLONE_NEWIPC | 0x80000000UL));
}
static long p_unshare_uts(void)
{
	return PR(syscall(SYS_unshare, CLONE_NEWUTS | 0x80000000UL));
}
static long p_unshare_cgroup(void)
{
	return PR(syscall(SYS_unshare, CLONE_NEWCGROUP | 0x80000000UL));
}
static long p_unshare_time(void)
{
	return PR(syscall(SYS_unshare, CLONE_NEWTIME | 0x80000000UL));
}
static long p_clone_newuser(void)
{
	return pr_clone(CLONE_NEWUSER | CLONE_FS | SIGCHLD); /* EINVAL */
}
static long p_clone_newns(void)
{
	return pr_clone(CLONE_NEWNS | CLONE_FS | SIGCHLD);
}
static long p_clone_newpid(void)
{
	return pr_clone(CLONE_NEWPID | CLONE_THREAD | SIGCHLD);
}
static long p_clone3(void)
{
	return PR(syscall(SYS_clone3, NULL, 0)); /* size 0: EINVAL */
}
static long p_io_uring_setup(void)
{
	return pr_close(PR(syscall(SYS_io_uring_setup, 1, NULL))); /* EFAULT */
}
static long p_io_uring_enter(void)
{
	return PR(syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0)); /* EBADF */
}
static long p_io_uring_register(void)
{
	return PR(syscall(SYS_io_uring_register, -1, 0, NULL, 0));
}
static long p_landlock(void)
{
	return PR(syscall(SYS_landlock_create_ruleset, NULL, 0, 0x80000000U));
}
/* Never inject: a NULL character pointer gives EFAULT past every other
 * check, and fd 0 is not a tty in the tests (ENOTTY). */
static long p_tiocsti(void)
{
	return PR(syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI, NULL));
}
static long p_tiocsti_high(void)
{
	return PR(syscall(SYS_ioctl, 0, 0xdeadbeef00000000UL | TIOCSTI, NULL));
}
static long p_tioclinux(void)
{
	return PR(syscall(SYS_ioctl, 0, (unsigned long)TIOCLINUX, NULL));
}
static long p_tioclinux_high(void)
{
	return PR(syscall(SYS_ioctl, 0, 0x100000000UL | TIOCLINUX, NULL));
}
/* An invalid type flag fails in the socket core before the family is
 * looked at: EINVAL, no capability check. */
static long p_socket_netlink(void)
{
	return pr_close(PR(syscall(SYS_socket, AF_NETLINK, SOCK_RAW | 0x40000000, 0)));
}
static long p_socket_packet(void)
{
	return pr_close(PR(syscall(SYS_socket, AF_PACKET, SOCK_RAW | 0x40000000, 0)));
}
static long p_socket_netlink_high(void)
{
	/* AF_NETLINK in the low half, junk above: still refused. */
	return pr_close(
	        PR(syscall(SYS_socket, 0x100000000UL | AF_NETLINK, SOCK_RAW | 0x40000000, 0)));
}
static long p_init_module(void)
{
	return PR(syscall(SYS_init_module, NULL, 0, NULL)); /* ENOEXEC, or EPERM unprivileged */
}
static long p_finit_module(void)
{
	return PR(syscall(SYS_finit_module, -1, NULL, 0));
}
static long p_delete_module(void)
{
	return PR(syscall(SYS_delete_module, NULL, 0));
}
static long p_kexec_load(void)
{
	return PR(syscall(SYS_kexec_load, 0, 0, NULL, 0xdead0000UL)); /* bad flags */
}
static long p_reboot(void)
{
	return PR(syscall(SYS_reboot, 0, 0, 0, NULL)); /* no magic: EINVAL */
}
static long p_swapon(void)
{
	return PR(syscall(SYS_swapon, NULL, 0x80000000)); /* bad flags: EINVAL */
}
static long p_swapoff(void)
{
	return PR(syscall(SYS_swapoff, NULL));
}
static long p_acct(void)
{
	return PR(syscall(SYS_acct, (char *)1)); /* never NULL: that would stop accounting */
}
static long p_settimeofday(void)
{
	struct {
		long sec, usec;
	} tv = { 0, -1 }; /* EINVAL before the permission check */
	return PR(syscall(SYS_settimeofday, &tv, NULL));
}
static long p_clock_settime(void)
{
	return PR(syscall(SYS_clock_settime, CLOCK_REALTIME, NULL)); /* EFAULT */
}
static long p_adjtimex(void)
{
	return PR(syscall(SYS_adjtimex, NULL));
}
static long p_personality(void)
{
	/* READ_IMPLIES_EXEC: if it gets through, put the old value back. */
	long r = PR(syscall(SYS_personality, 0x0400000UL));
	if (r >= 0)
		syscall(SYS_personality, (unsigned long)r);
	return r;
}
static long p_personality_norand(void)
{
	/* ADDR_NO_RANDOMIZE: turns ASLR off for the next exec. */
	long r = PR(syscall(SYS_personality, 0x0040000UL));
	if (r >= 0)
		syscall(SYS_personality, (unsigned long)r);
	return r;
}
static long p_iopl(void)
{
	return PR(syscall(SYS_iopl, 4)); /* EINVAL */
}
static long p_modify_ldt(void)
{
	return PR(syscall(SYS_modify_ldt, 99, NULL, 0)); /* ENOSYS from the kernel */
}
static long p_kcmp(void)
{
	return PR(syscall(SYS_kcmp, getpid(), getpid(), 99, 0, 0)); /* EINVAL */
}
static long p_pidfd_getfd(void)
{
	return PR(syscall(SYS_pidfd_getfd, -1, 0, 0)); /* EBADF */
}
static long p_x32(void)
{
	return PR(syscall(0x40000000L | SYS_getpid)); /* ENOSYS without x32 */
}
/* i386 getpid (20) through int 0x80 from this 64-bit process. */
static long p_i386(void)
{
	long r = 20;
	/* The kernel zeroes r8-r11 on an int 0x80 entry from 64-bit code. */
	__asm__ volatile("int $0x80" : "+a"(r) : : "r8", "r9", "r10", "r11", "memory");
	return r;
}
/* i386 socketcall(SYS_SOCKET, NULL): the multiplexer THREATS row 5 names. */
static long p_i386_socketcall(void)
{
	long r = 102;
	__asm__ volatile("int $0x80"
	                 : "+a"(r)
	                 : "b"(1L), "c"(0L)
	                 : "r8", "r9", "r10", "r11", "memory");
	return r;
}

/* Modes carrying S_ISUID or S_ISGID (issue 16): on a path under a
 * directory that does not exist (ENOENT) or a bad fd (EBADF), so nothing is
 * created or changed even when the call reaches the kernel.  The *-plain
 * probes are the same calls without the bits: allowed. */
#define PR_NOPATH "/nonexistent-cordon-probe/f"
#define PR_HIGH   0xdeadbeef00000000UL /* junk in the upper half of a mode */
static long p_chmod_setuid(void)
{
	return PR(syscall(SYS_chmod, PR_NOPATH, 04755UL));
}
static long p_chmod_setgid_high(void)
{
	return PR(syscall(SYS_chmod, PR_NOPATH, PR_HIGH | 02755UL));
}
static long p_chmod_plain_high(void)
{
	return PR(syscall(SYS_chmod, PR_NOPATH, PR_HIGH | 01755UL));
}
static long p_fchmod_setuid(void)
{
	return PR(syscall(SYS_fchmod, -1, 06755UL));
}
static long p_fchmodat_setgid(void)
{
	return PR(syscall(SYS_fchmodat, AT_FDCWD, PR_NOPATH, 02755UL));
}
static long p_fchmodat_plain(void)
{
	return PR(syscall(SYS_fchmodat, AT_FDCWD, PR_NOPATH, 0755UL));
}
static long p_fchmodat2_setuid(void)
{
	return PR(syscall(452 /* fchmodat2 */, AT_FDCWD, PR_NOPATH, 04755UL, 0));
}
static long p_open_creat_setuid(void)
{
	return pr_close(PR(syscall(SYS_open, PR_NOPATH, O_CREAT | O_WRONLY | O_CLOEXEC, 04755UL)));
}
static long p_openat_creat_setgid_high(void)
{
	return pr_close(PR(syscall(SYS_openat, AT_FDCWD, PR_NOPATH, O_CREAT | O_WRONLY | O_CLOEXEC,
	                           PR_HIGH | 02755UL)));
}
static long p_openat_creat_plain(void)
{
	return pr_close(PR(
	        syscall(SYS_openat, AT_FDCWD, PR_NOPATH, O_CREAT | O_WRONLY | O_CLOEXEC, 0755UL)));
}
static long p_openat_tmpfile_setuid(void)
{
	return pr_close(PR(syscall(SYS_openat, AT_FDCWD, "/nonexistent-cordon-probe",
	                           O_TMPFILE | O_WRONLY | O_CLOEXEC, 04755UL)));
}
/* Without O_CREAT or O_TMPFILE the kernel ignores the mode: allowed. */
static long p_openat_nocreat_setuid(void)
{
	return pr_close(
	        PR(syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC, 04755UL)));
}
static long p_creat_setuid(void)
{
	return pr_close(PR(syscall(SYS_creat, PR_NOPATH, 04755UL)));
}
static long p_mknod_setuid(void)
{
	return PR(syscall(SYS_mknod, PR_NOPATH, (unsigned long)(S_IFREG | 04755), 0UL));
}
static long p_mknodat_setgid(void)
{
	return PR(syscall(SYS_mknodat, AT_FDCWD, PR_NOPATH, (unsigned long)(S_IFIFO | 02644), 0UL));
}
static long p_mknodat_fifo(void)
{
	return PR(syscall(SYS_mknodat, AT_FDCWD, PR_NOPATH, (unsigned long)(S_IFIFO | 0644), 0UL));
}
/* mkdir keeps only the permission and sticky bits: not filtered. */
static long p_mkdir_setid(void)
{
	return PR(syscall(SYS_mkdir, PR_NOPATH, 06755UL));
}
static long p_openat2(void)
{
	return pr_close(
	        PR(syscall(437 /* openat2 */, AT_FDCWD, "/", NULL, 0UL))); /* size 0: EINVAL */
}
static long p_io_setup(void)
{
	return PR(syscall(SYS_io_setup, 0U, NULL)); /* NULL context: EFAULT */
}

#define A64 AUDIT_ARCH_X86_64
static const struct probe probes[] = {
	{ "getpid", p_getpid, PROBE_ALLOW, 0, A64, SYS_getpid },
	{ "openat", p_openat, PROBE_ALLOW, 0, A64, SYS_openat },
	{ "socket-unix", p_socket_unix, PROBE_ALLOW, 0, A64, SYS_socket },
	{ "socketpair-unix", p_socketpair_unix, PROBE_ALLOW, 0, A64, SYS_socketpair },
	{ "fork", p_fork, PROBE_ALLOW, 0, A64, SYS_clone },
	{ "thread", p_thread, PROBE_ALLOW, 0, A64, SYS_clone },
	{ "unshare-files", p_unshare_files, PROBE_ALLOW, 0, A64, SYS_unshare },
	{ "tcgets", p_tcgets, PROBE_ALLOW, 0, A64, SYS_ioctl },
	{ "personality-query", p_personality_query, PROBE_ALLOW, 0, A64, SYS_personality },
	{ "memfd_create", p_memfd, PROBE_ALLOW, 0, A64, SYS_memfd_create },
	{ "statx", p_statx, PROBE_ALLOW, 0, A64, SYS_statx },
	{ "close_range", p_close_range, PROBE_ALLOW, 0, A64, SYS_close_range },
	{ "socket-inet", p_socket_inet, PROBE_INET, EPERM, A64, SYS_socket },
	{ "socket-inet6", p_socket_inet6, PROBE_INET, EPERM, A64, SYS_socket },
	{ "ptrace", p_ptrace, PROBE_DENY, EPERM, A64, SYS_ptrace },
	{ "process_vm_readv", p_process_vm_readv, PROBE_DENY, EPERM, A64, SYS_process_vm_readv },
	{ "process_vm_writev", p_process_vm_writev, PROBE_DENY, EPERM, A64, SYS_process_vm_writev },
	{ "keyctl", p_keyctl, PROBE_DENY, EPERM, A64, SYS_keyctl },
	{ "add_key", p_add_key, PROBE_DENY, EPERM, A64, SYS_add_key },
	{ "request_key", p_request_key, PROBE_DENY, EPERM, A64, SYS_request_key },
	{ "bpf", p_bpf, PROBE_DENY, EPERM, A64, SYS_bpf },
	{ "perf_event_open", p_perf_event_open, PROBE_DENY, EPERM, A64, SYS_perf_event_open },
	{ "userfaultfd", p_userfaultfd, PROBE_DENY, EPERM, A64, SYS_userfaultfd },
	{ "mount", p_mount, PROBE_DENY, EPERM, A64, SYS_mount },
	{ "umount2", p_umount2, PROBE_DENY, EPERM, A64, SYS_umount2 },
	{ "pivot_root", p_pivot_root, PROBE_DENY, EPERM, A64, SYS_pivot_root },
	{ "chroot", p_chroot, PROBE_DENY, EPERM, A64, SYS_chroot },
	{ "setns", p_setns, PROBE_DENY, EPERM, A64, SYS_setns },
	{ "fsopen", p_fsopen, PROBE_DENY, EPERM, A64, SYS_fsopen },
	{ "open_tree", p_open_tree, PROBE_DENY, EPERM, A64, SYS_open_tree },
	{ "name_to_handle_at", p_name_to_handle_at, PROBE_DENY, EPERM, A64, SYS_name_to_handle_at },
	{ "unshare-user", p_unshare_user, PROBE_DENY, EPERM, A64, SYS_unshare },
	{ "unshare-mount", p_unshare_mount, PROBE_DENY, EPERM, A64, SYS_unshare },
	{ "unshare-net", p_unshare_net, PROBE_DENY, EPERM, A64, SYS_unshare },
	{ "unshare-pid", p_unshare_pid, PROBE_DENY, EPERM, A64, SYS_unshare },
	{ "unshare-ipc", p_unshare_ipc, PROBE_DENY, EPERM, A64, SYS_unshare },
	{ "unshare-uts", p_unshare_uts, PROBE_DENY, EPERM, A64, SYS_unshare },
	{ "unshare-cgroup", p_unshare_cgroup, PROBE_DENY, EPERM, A64, SYS_unshare },
	{ "unshare-time", p_unshare_time, PROBE_DENY, EPERM, A64, SYS_unshare },
	{ "clone-newuser", p_clone_newuser, PROBE_DENY, EPERM, A64, SYS_clone },
	{ "clone-newns", p_clone_newns, PROBE_DENY, EPERM, A64, SYS_clone },
	{ "clone-newpid", p_clone_newpid, PROBE_DENY, EPERM, A64, SYS_clone },
	{ "clone3", p_clone3, PROBE_SILENT, ENOSYS, A64, SYS_clone3 },
	{ "io_uring_setup", p_io_uring_setup, PROBE_DENY, ENOSYS, A64, SYS_io_uring_setup },
	{ "io_uring_enter", p_io_uring_enter, PROBE_DENY, ENOSYS, A64, SYS_io_uring_enter },
	{ "io_uring_register", p_io_uring_register, PROBE_DENY, ENOSYS, A64,
	  SYS_io_uring_register },
	{ "landlock_create_ruleset", p_landlock, PROBE_DENY, ENOSYS, A64,
	  SYS_landlock_create_ruleset },
	{ "tiocsti", p_tiocsti, PROBE_DENY, EPERM, A64, SYS_ioctl },
	{ "tiocsti-high", p_tiocsti_high, PROBE_DENY, EPERM, A64, SYS_ioctl },
	{ "tioclinux", p_tioclinux, PROBE_DENY, EPERM, A64, SYS_ioctl },
	{ "tioclinux-high", p_tioclinux_high, PROBE_DENY, EPERM, A64, SYS_ioctl },
	{ "socket-netlink", p_socket_netlink, PROBE_DENY, EPERM, A64, SYS_socket },
	{ "socketpair-inet", p_socketpair_inet, PROBE_DENY, EPERM, A64, SYS_socketpair },
	{ "socket-packet", p_socket_packet, PROBE_DENY, EPERM, A64, SYS_socket },
	{ "socket-netlink-high", p_socket_netlink_high, PROBE_DENY, EPERM, A64, SYS_socket },
	{ "init_module", p_init_module, PROBE_DENY, EPERM, A64, SYS_init_module },
	{ "finit_module", p_finit_module, PROBE_DENY, EPERM, A64, SYS_finit_module },
	{ "delete_module", p_delete_module, PROBE_DENY, EPERM, A64, SYS_delete_module },
	{ "kexec_load", p_kexec_load, PROBE_DENY, EPERM, A64, SYS_kexec_load },
	{ "reboot", p_reboot, PROBE_DENY, EPERM, A64, SYS_reboot },
	{ "swapon", p_swapon, PROBE_DENY, EPERM, A64, SYS_swapon },
	{ "swapoff", p_swapoff, PROBE_DENY, EPERM, A64, SYS_swapoff },
	{ "acct", p_acct, PROBE_DENY, EPERM, A64, SYS_acct },
	{ "settimeofday", p_settimeofday, PROBE_DENY, EPERM, A64, SYS_settimeofday },
	{ "clock_settime", p_clock_settime, PROBE_DENY, EPERM, A64, SYS_clock_settime },
	{ "adjtimex", p_adjtimex, PROBE_DENY, EPERM, A64, SYS_adjtimex },
	{ "personality", p_personality, PROBE_DENY, EPERM, A64, SYS_personality },
	{ "personality-norand", p_personality_norand, PROBE_DENY, EPERM, A64, SYS_personality },
	{ "iopl", p_iopl, PROBE_DENY, EPERM, A64, SYS_iopl },
	{ "modify_ldt", p_modify_ldt, PROBE_DENY, EPERM, A64, SYS_modify_ldt },
	{ "kcmp", p_kcmp, PROBE_DENY, EPERM, A64, SYS_kcmp },
	{ "pidfd_getfd", p_pidfd_getfd, PROBE_DENY, EPERM, A64, SYS_pidfd_getfd },
	{ "chmod-setuid", p_chmod_setuid, PROBE_DENY, EPERM, A64, SYS_chmod },
	{ "chmod-setgid-high", p_chmod_setgid_high, PROBE_DENY, EPERM, A64, SYS_chmod },
	{ "chmod-plain-high", p_chmod_plain_high, PROBE_ALLOW, 0, A64, SYS_chmod },
	{ "fchmod-setuid", p_fchmod_setuid, PROBE_DENY, EPERM, A64, SYS_fchmod },
	{ "fchmodat-setgid", p_fchmodat_setgid, PROBE_DENY, EPERM, A64, SYS_fchmodat },
	{ "fchmodat-plain", p_fchmodat_plain, PROBE_ALLOW, 0, A64, SYS_fchmodat },
	{ "fchmodat2-setuid", p_fchmodat2_setuid, PROBE_DENY, EPERM, A64, 452 },
	{ "open-creat-setuid", p_open_creat_setuid, PROBE_DENY, EPERM, A64, SYS_open },
	{ "openat-creat-setgid-high", p_openat_creat_setgid_high, PROBE_DENY, EPERM, A64,
	  SYS_openat },
	{ "openat-creat-plain", p_openat_creat_plain, PROBE_ALLOW, 0, A64, SYS_openat },
	{ "openat-tmpfile-setuid", p_openat_tmpfile_setuid, PROBE_DENY, EPERM, A64, SYS_openat },
	{ "openat-nocreat-setuid", p_openat_nocreat_setuid, PROBE_ALLOW, 0, A64, SYS_openat },
	{ "creat-setuid", p_creat_setuid, PROBE_DENY, EPERM, A64, SYS_creat },
	{ "mknod-setuid", p_mknod_setuid, PROBE_DENY, EPERM, A64, SYS_mknod },
	{ "mknodat-setgid", p_mknodat_setgid, PROBE_DENY, EPERM, A64, SYS_mknodat },
	{ "mknodat-fifo", p_mknodat_fifo, PROBE_ALLOW, 0, A64, SYS_mknodat },
	{ "mkdir-setid", p_mkdir_setid, PROBE_ALLOW, 0, A64, SYS_mkdir },
	{ "openat2", p_openat2, PROBE_DENY, ENOSYS, A64, 437 },
	{ "io_setup", p_io_setup, PROBE_DENY, ENOSYS, A64, SYS_io_setup },
	{ "x32", p_x32, PROBE_ABI, EPERM, A64, 0x40000000 | SYS_getpid },
	{ "i386", p_i386, PROBE_ABI, EPERM, AUDIT_ARCH_I386, 20 },
	{ "i386-socketcall", p_i386_socketcall, PROBE_ABI, EPERM, AUDIT_ARCH_I386, 102 },
};
#undef A64

#define PROBES_N (sizeof probes / sizeof probes[0])

static inline const struct probe *probe_find(const char *name)
{
	size_t i;
	for (i = 0; i < PROBES_N; i++) {
		const char *a = probes[i].name, *b = name;
		while (*a && *a == *b) {
			a++;
			b++;
		}
		if (*a == *b)
			return &probes[i];
	}
	return NULL;
}

#endif
