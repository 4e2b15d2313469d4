/* sandbox-child.c — the sandbox child: from clone to execve.
 *
 * This code runs in the freshly cloned child, inside the new namespaces,
 * and later as the sandbox's init (pid 1).  Between clone and exec it makes
 * system calls only: no malloc, no stdio, no locks — everything it needs is
 * in the plan and the context the supervisor prepared.  A failure is
 * reported as one fixed-size record on the report socket, then the child
 * exits; the supervisor turns the record into a message.
 *
 * Order (STYLE.md): identity maps, private mounts, open every source,
 * build the new root, pivot, close fds, drop capabilities, no_new_privs,
 * (Landlock, seccomp last), then fork the command under init.
 *
 * The mounts and the new root are built in sandbox-mount.c, where host
 * paths are treated as hostile.
 */
#include "sandbox-int.h"

#include "util/bounds.h"
#include "landlock.h"
#include "quotas.h"
#include "rlimits.h"
#include "seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/securebits.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Exit codes of the child when it cannot report (the supervisor maps
 * these, but the record is what carries the reason). */
#define CHILD_EXIT_SETUP 125

const struct cd_child_ctx *cd_child_g_ctx;
static volatile pid_t g_cmd_pid;
static int g_report_fd = -1;
static int g_listener_fd = -1;
static int g_sync_fd = -1;
static int g_lifeline_fd = -1;          /* pidfd of the supervisor (see hold_lifeline) */
int cd_child_g_pty_follower = -1;       /* plan->tty: the session pty's follower side */
static int g_stdio[3] = { -1, -1, -1 }; /* the command's stdio, lifted above 15 */

static size_t copy_str(char *dst, size_t cap, size_t at, const char *src)
{
	while (src && *src && at + 1 < cap)
		dst[at++] = *src++;
	dst[at] = '\0';
	return at;
}

static void report(uint32_t type, int err, int status, uint32_t walls, const char *what,
                   const char *subject)
{
	struct cd_report r;
	size_t n;
	ssize_t w;

	memset(&r, 0, sizeof r);
	r.type = type;
	r.err = err;
	r.status = status;
	r.walls = walls;
	n = copy_str(r.what, sizeof r.what, 0, what);
	if (subject) {
		n = copy_str(r.what, sizeof r.what, n, " '");
		n = copy_str(r.what, sizeof r.what, n, subject);
		copy_str(r.what, sizeof r.what, n, "'");
	}
	do {
		w = send(g_report_fd, &r, sizeof r, MSG_NOSIGNAL);
	} while (w < 0 && errno == EINTR);
}

__attribute__((noreturn)) void cd_child_fail(const char *what, const char *subject, int err)
{
	report(CD_REPORT_SETUP_FAIL, err, 0, 0, what, subject);
	_exit(CHILD_EXIT_SETUP);
}

int cd_child_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how;

	memset(&how, 0, sizeof how);
	how.flags = flags;
	how.resolve = resolve;
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

static int write_file(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	size_t len = strlen(data);

	if (fd < 0)
		return -errno;
	n = write(fd, data, len);
	if (n < 0 || (size_t)n != len) {
		int e = n < 0 ? errno : EIO;
		close(fd);
		return -e;
	}
	close(fd);
	return 0;
}

static void set_identity(void)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	int r;

	/* A root caller's child was cloned with the dedicated id as its
	 * effective id (idmap.h), which left it non-dumpable: its /proc/self
	 * files would be root's and closed to it.  Init turns it off again. */
	if (p->idmap && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		cd_child_fail("make the child dumpable to write its id maps", NULL, errno);
	if ((r = write_file("/proc/self/setgroups", "deny")) < 0)
		cd_child_fail("write /proc/self/setgroups", NULL, -r);
	if ((r = write_file("/proc/self/uid_map", cd_child_g_ctx->uid_map)) < 0)
		cd_child_fail("write /proc/self/uid_map", NULL, -r);
	if ((r = write_file("/proc/self/gid_map", cd_child_g_ctx->gid_map)) < 0)
		cd_child_fail("write /proc/self/gid_map", NULL, -r);
	/* Its real and saved ids were still root's: RLIMIT_NPROC and the
	 * other per-user counts follow the real id. */
	if (p->idmap && (syscall(SYS_setresgid, p->gid, p->gid, p->gid) < 0 ||
	                 syscall(SYS_setresuid, p->uid, p->uid, p->uid) < 0))
		cd_child_fail("take the sandbox's ids", NULL, errno);
}

static void loopback_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		cd_child_fail("open a socket to bring up lo", NULL, errno);
	memset(&ifr, 0, sizeof ifr);
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		cd_child_fail("read flags of lo", NULL, errno);
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		cd_child_fail("bring up lo", NULL, errno);
	close(s);
}

/* Parse one decimal field of /proc/self/stat (1-based, counted after the
 * comm field, which may hold spaces).  0 on failure. */
static unsigned long stat_field(const char *buf, size_t len, unsigned field)
{
	size_t i = len, f = 2;
	unsigned long v = 0;

	while (i > 0 && buf[i - 1] != ')')
		i--;
	if (i == 0)
		return 0;
	for (; i < len && f < field; i++) {
		if (buf[i] == ' ')
			f++;
	}
	for (; i < len && buf[i] >= '0' && buf[i] <= '9'; i++)
		v = v * 10 + (unsigned long)(buf[i] - '0');
	return v;
}

/* Init is a copy of cordon: its command line (cordon's options, host
 * paths) would be readable in /proc/1/cmdline, which needs no ptrace
 * access.  Blank it; the sandbox learns nothing of the host from it. */
static void blank_cmdline(void)
{
	char buf[1024];
	unsigned long start, end;
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	start = stat_field(buf, (size_t)n, 48); /* arg_start */
	end = stat_field(buf, (size_t)n, 49);   /* arg_end */
	if (start && end > start && end - start < (1UL << 24))
		memset((void *)start, 0, end - start);
}

/* Egress: the proxy's listening socket lives in the sandbox's network
 * namespace (loopback only) but is served by the supervisor outside, so
 * the sandbox can reach exactly this port and nothing else. */
static void proxy_listener(void)
{
	struct sockaddr_in sin;
	int s, r, one = 1;

	if (!cd_child_g_ctx->plan->proxy_port)
		return;
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		cd_child_fail("create the egress proxy socket", NULL, errno);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)cd_child_g_ctx->plan->proxy_port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(s, (struct sockaddr *)&sin, sizeof sin) < 0 || listen(s, 64) < 0)
		cd_child_fail("listen for the egress proxy on 127.0.0.1", NULL, errno);
	r = cd_fd_send(cd_child_g_ctx->proxy_fd, s);
	close(s);
	if (r < 0)
		cd_child_fail("hand the egress proxy socket to the supervisor", NULL, -r);
}

static void drop_privileges(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	unsigned long cap;

	/* Lock root semantics away for good, then empty the bounding and
	 * ambient sets, then every other set.  Nothing can come back: no_new_privs
	 * (set next) blocks setuid and file capabilities at exec. */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
	                                     SECBIT_NO_SETUID_FIXUP_LOCKED |
	                                     SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
	                                     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
		cd_child_fail("set securebits", NULL, errno);
	for (cap = 0; cap < 64; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break;
			cd_child_fail("drop capability bounding set", NULL, errno);
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		cd_child_fail("clear ambient capabilities", NULL, errno);
	memset(data, 0, sizeof data);
	if (syscall(SYS_capset, &hdr, data) < 0)
		cd_child_fail("clear capabilities", NULL, errno);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		cd_child_fail("set no_new_privs", NULL, errno);
}

/* Keep fds 0-2 (the command's pipes), the report socket (moved to 3), the
 * listener socket (moved to 4), the sync pipe (5) and the lifeline (6);
 * close everything else the build left open. */
static void close_fds(void)
{
	int i;

	/* Out of the way of 0-4 first, so no dup2 below clobbers them. */
	if ((g_report_fd = fcntl(g_report_fd, F_DUPFD_CLOEXEC, 16)) < 0 ||
	    (g_listener_fd = fcntl(g_listener_fd, F_DUPFD_CLOEXEC, 16)) < 0 ||
	    (g_sync_fd = fcntl(g_sync_fd, F_DUPFD_CLOEXEC, 16)) < 0 ||
	    (g_lifeline_fd = fcntl(g_lifeline_fd, F_DUPFD_CLOEXEC, 16)) < 0 ||
	    (cd_child_g_pty_follower >= 0 &&
	     (cd_child_g_pty_follower = fcntl(cd_child_g_pty_follower, F_DUPFD_CLOEXEC, 16)) < 0))
		_exit(CHILD_EXIT_SETUP);

	/* A direct stream may already be one of 0-2 (cordon run's own stdin
	 * or stdout, handed over): each is lifted out of the way first, so no
	 * dup2 below clobbers another, and dup2 always makes a fresh fd 0-2
	 * without close-on-exec. */
	for (i = 0; i < 3; i++)
		if (cd_child_g_pty_follower < 0 &&
		    (g_stdio[i] = fcntl(cd_child_g_ctx->stdio[i], F_DUPFD_CLOEXEC, 16)) < 0)
			cd_child_fail("set up stdio", NULL, errno);
	for (i = 0; i < 3; i++) {
		if (dup2(cd_child_g_pty_follower >= 0 ? cd_child_g_pty_follower : g_stdio[i], i) <
		    0)
			cd_child_fail("set up stdio", NULL, errno);
	}
	if (g_report_fd != 3) {
		if (dup3(g_report_fd, 3, O_CLOEXEC) < 0)
			cd_child_fail("move the report socket", NULL, errno);
		g_report_fd = 3;
	}
	if (dup3(g_listener_fd, 4, O_CLOEXEC) < 0)
		cd_child_fail("move the listener socket", NULL, errno);
	g_listener_fd = 4;
	if (dup3(g_sync_fd, 5, O_CLOEXEC) < 0)
		cd_child_fail("move the sync pipe", NULL, errno);
	g_sync_fd = 5;
	if (dup3(g_lifeline_fd, 6, O_CLOEXEC) < 0)
		cd_child_fail("move the lifeline", NULL, errno);
	g_lifeline_fd = 6;
	if (syscall(SYS_close_range, 7, ~0U, 0) < 0)
		cd_child_fail("close inherited fds", NULL, errno);
}

static void reset_signals(void)
{
	struct sigaction sa;
	sigset_t none;
	int sig;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < _NSIG; sig++) {
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &sa, NULL); /* fails harmlessly for glibc's reserved ones */
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static size_t path_join(char *out, size_t cap, const char *dir, const char *file)
{
	size_t n = copy_str(out, cap, 0, dir);
	n = copy_str(out, cap, n, "/");
	return copy_str(out, cap, n, file);
}

__attribute__((noreturn)) static void exec_command(void)
{
	const struct cd_plan *p = cd_child_g_ctx->plan;
	const char *arg0 = p->argv[0];
	char path[CD_PATH_MAX];
	int saw_eacces = 0, e = ENOENT;
	size_t i;

	if (setsid() < 0 && errno != EPERM)
		_exit(CHILD_EXIT_SETUP);
	/* cordon shell: the session pty becomes the command's controlling
	 * terminal (the only one it ever has: the host's is never here). */
	if ((p->tty || cd_child_g_ctx->ctty) && ioctl(0, TIOCSCTTY, 0) < 0) {
		report(CD_REPORT_EXEC_FAIL, errno, 0, 0,
		       "make the session pty the controlling terminal", NULL);
		_exit(CHILD_EXIT_SETUP);
	}
	reset_signals();
	if (strchr(arg0, '/')) {
		execve(arg0, p->argv, p->envp);
		e = errno;
	} else {
		for (i = 0; p->path_dirs[i]; i++) {
			if (path_join(path, sizeof path, p->path_dirs[i], arg0) + 1 >= sizeof path)
				continue;
			execve(path, p->argv, p->envp);
			if (errno == EACCES)
				saw_eacces = 1;
			else if (errno != ENOENT && errno != ENOTDIR) {
				e = errno;
				break;
			}
		}
		if (e == ENOENT && saw_eacces)
			e = EACCES;
	}
	report(CD_REPORT_EXEC_FAIL, e, 0, 0, "execute", arg0);
	_exit(e == ENOENT ? 127 : 126);
}

/* The command's stack until its execve (see run_init). */
static char cmd_stack[64 * 1024] __attribute__((aligned(16)));

static int spawn_command(void *unused)
{
	(void)unused;
	exec_command();
}

static void forward_signal(int sig)
{
	if (g_cmd_pid > 0)
		kill(g_cmd_pid, sig);
}

/* pid 1: fork the command, reap everything, report the command's status,
 * exit.  When init exits the kernel kills whatever is left in the pid
 * namespace, so nothing outlives the command. */
__attribute__((noreturn)) static void run_init(uint32_t walls)
{
	static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	struct sigaction sa;
	int status = 0;
	size_t i;
	pid_t pid;

	/* The sandbox is built while the supervisor makes the intent durable;
	 * the command starts only on its second "go" (EOF: it could not). */
	{
		char go;
		ssize_t n;

		do {
			n = read(g_sync_fd, &go, 1);
		} while (n < 0 && errno == EINTR);
		if (n != 1 || go != CD_SYNC_RUN)
			cd_child_fail("wait for the run to be recorded", NULL,
			              n < 0 ? errno : EPIPE);
		close(g_sync_fd);
	}
	/* vfork semantics: the command borrows init's memory until its execve
	 * (init waits meanwhile), so init's pages are neither copied into it
	 * nor made copy-on-write for the rest of the run.  Until then it makes
	 * system calls only and writes nothing of init's but its own stack;
	 * its signal handlers are its own copy (no CLONE_SIGHAND). */
	pid = clone(spawn_command, cmd_stack + sizeof cmd_stack, CLONE_VM | CLONE_VFORK | SIGCHLD,
	            NULL);
	if (pid < 0)
		cd_child_fail("fork the command", NULL, errno);
	g_cmd_pid = pid;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = forward_signal;
	sa.sa_flags = SA_RESTART;
	for (i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
		sigaction(forwarded[i], &sa, NULL);
	{
		/* The supervisor blocks these for its signalfd; init must see them. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
	}
	/* The command's stdio belong to the command alone: init keeps no
	 * pipe end open, so EOF reaches the supervisor when the command's
	 * tree closes them. */
	for (i = 0; i < 3; i++)
		close((int)i);
	report(CD_REPORT_STARTED, 0, 0, walls, "", NULL);
	for (;;) {
		int st;
		pid_t w = wait4(-1, &st, 0, NULL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: nothing left */
		}
		if (w == pid) {
			status = st;
			break;
		}
	}
	report(CD_REPORT_STATUS, 0, status, 0, "", NULL);
	_exit(0);
}

/* The supervisor's death must end the sandbox at every moment of its
 * life.  The parent-death signal (SIGKILL: init dies, and the kernel kills
 * the rest of its pid namespace) is armed first; a supervisor that died
 * before it took effect (between the clone and here, when the signal never
 * comes) is seen dead on its pidfd, however many processes still hold its
 * descriptors.  The kernel clears the parent-death signal when the
 * effective or filesystem uid or gid changes: call this again after any
 * such change.  (The supervisor is single-threaded: the signal follows the
 * thread that cloned us.) */
static void hold_lifeline(int lifeline_fd)
{
	struct pollfd pfd;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(CHILD_EXIT_SETUP);
	pfd.fd = lifeline_fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) != 0)
		_exit(CHILD_EXIT_SETUP); /* dead, or we cannot tell: stop */
}

/* The fds the child keeps from the moment it starts: the ones the
 * supervisor prepared for it in the context, and nothing else.  A new fd
 * handed to the child is added here (and to struct cd_child_ctx). */
static size_t child_keep(const struct cd_child_ctx *ctx, int *keep, size_t cap)
{
	const int fds[] = {
		ctx->report_fd, ctx->sync_fd,  ctx->lifeline_fd, ctx->stdio[0],
		ctx->stdio[1],  ctx->stdio[2], ctx->proxy_fd,    ctx->listener_fd,
		ctx->pty_fd,    ctx->layer_fd, ctx->watch_fd,
	};
	size_t i, n = 0;

	for (i = 0; i < sizeof fds / sizeof fds[0] && n < cap; i++) {
		if (fds[i] >= 0)
			keep[n++] = fds[i];
	}
	/* The caller's trees, idmapped by the supervisor (idmap.h): mounted
	 * by cd_child_build_root(), each closed there once attached. */
	for (i = 0; ctx->plan->idmap && i < ctx->plan->nmounts && i < CD_PLAN_MAX_MOUNTS && n < cap;
	     i++) {
		if (ctx->tree_fd[i] >= 0)
			keep[n++] = ctx->tree_fd[i];
	}
	return n;
}

/* Close every fd but those in keep[] (n of them, any order, duplicates
 * allowed).  Returns 0 or -errno. */
static int close_all_but(int *keep, size_t n)
{
	unsigned int lo = 0;
	size_t i, j;

	for (i = 1; i < n; i++) {
		for (j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	}
	for (i = 0; i < n; i++) {
		unsigned int k = (unsigned int)keep[i];

		if (k < lo)
			continue; /* a duplicate */
		if (k > lo && syscall(SYS_close_range, lo, k - 1, 0) < 0)
			return -errno;
		lo = k + 1;
	}
	return syscall(SYS_close_range, lo, ~0U, 0) < 0 ? -errno : 0;
}

void cd_child_main(const struct cd_child_ctx *ctx)
{
	/* Static: the child has its own copy of memory (no CLONE_VM), and
	 * 4 KiB of tree fds is more than its stack should carry. */
	static int keep[16 + CD_PLAN_MAX_MOUNTS];
	size_t nkeep;
	uint32_t walls;
	ssize_t n;
	char go;
	int r, quota_fd;

	/* Before anything else: die with the supervisor, then drop every fd
	 * inherited from it but our own.  clone does not exec, so
	 * close-on-exec protects nothing here: without this the child would
	 * hold cordon's audit and state databases (and their WAL and SHM),
	 * the other end of each of its pipes and the caller's terminal. */
	hold_lifeline(ctx->lifeline_fd);
	cd_child_g_ctx = ctx;
	g_report_fd = ctx->report_fd;
	g_listener_fd = ctx->listener_fd;
	g_lifeline_fd = ctx->lifeline_fd;
	nkeep = child_keep(ctx, keep, sizeof keep / sizeof keep[0]);
	if ((r = close_all_but(keep, nkeep)) < 0)
		cd_child_fail("close the fds inherited from cordon", NULL, -r);
	if (setsid() < 0)
		cd_child_fail("setsid", NULL, errno);
	set_identity();
	/* /proc/sys/user of our user namespace, opened while the host's
	 * /proc is here; written once our cgroup namespace exists. */
	if ((quota_fd = cd_quotas_open()) < 0)
		cd_child_fail("open /proc/sys/user", NULL, -quota_fd);
	/* The filesystem, hostname and network are built while the supervisor
	 * makes the run's cgroup and moves us in: nothing here runs code of
	 * the command's, and nothing the command can reach starts before we
	 * are placed. */
	g_sync_fd = ctx->sync_fd;
	cd_child_build_root();
	if (chdir(ctx->plan->cwd) < 0)
		cd_child_fail("enter the working directory", ctx->plan->cwd, errno);
	/* Namespaces the caller made or joined (the OCI runtime) are set up
	 * already, and are not ours to change. */
	if (!(ctx->inherit_ns & CLONE_NEWUTS) &&
	    sethostname(ctx->plan->hostname, strlen(ctx->plan->hostname)) < 0)
		cd_child_fail("set the hostname", NULL, errno);
	if (!(ctx->inherit_ns & CLONE_NEWNET))
		loopback_up();
	proxy_listener();
	close(ctx->proxy_fd);
	cd_child_make_pty();
	/* Wait until the supervisor has placed us (cgroups); EOF means it
	 * could not, and nothing starts. */
	do {
		n = read(g_sync_fd, &go, 1);
	} while (n < 0 && errno == EINTR);
	if (n != 1 || (go & ~(CD_SYNC_CG_MEMORY | CD_SYNC_CG_PIDS)) != CD_SYNC_PLACED)
		_exit(CHILD_EXIT_SETUP);
	/* Now inside the run's cgroup: make it the root of our cgroup view. */
	if (unshare(CLONE_NEWCGROUP) < 0)
		cd_child_fail("create the cgroup namespace", NULL, errno);
	if ((r = cd_quotas_apply(quota_fd, &ctx->plan->limits)) < 0)
		cd_child_fail("set the kernel object quotas in /proc/sys/user", NULL, -r);
	close(quota_fd);
	close_fds();
	if ((r = cd_rlimits_apply(&ctx->plan->limits, (go & CD_SYNC_CG_MEMORY) != 0,
	                          (go & CD_SYNC_CG_PIDS) != 0)) < 0)
		cd_child_fail("set resource limits", NULL, -r);
	drop_privileges();
	walls = ctx->plan->walls &
	        (CD_WALL_USERNS | CD_WALL_MOUNTNS | CD_WALL_PIDNS | CD_WALL_NETNS | CD_WALL_IPCNS |
	         CD_WALL_UTSNS | CD_WALL_CGROUPNS | CD_WALL_NNP | CD_WALL_CAPS);
	if (ctx->plan->landlock_abi > 0) {
		if ((r = cd_landlock_apply(&ctx->plan->landlock, ctx->plan->landlock_abi)) < 0)
			cd_child_fail("apply Landlock rules", NULL, -r);
		walls |= CD_WALL_LANDLOCK;
	}
	/* Past the last change of credentials: arm the lifeline again, in
	 * case one cleared it, and let go of the supervisor's pidfd. */
	hold_lifeline(g_lifeline_fd);
	close(g_lifeline_fd);
	/* Init holds nothing the command may not have: non-dumpable, so
	 * /proc/1/mem and /proc/1/exe are closed to it (THREATS row 2). */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		cd_child_fail("make init non-dumpable", NULL, errno);
	/* seccomp last: the listener goes to the supervisor and is closed here
	 * before the command exists. */
	if (ctx->plan->seccomp.len > 0) {
		const struct cd_seccomp_prog *prog =
		        cd_quotas_prog(ctx->plan, (go & CD_SYNC_CG_MEMORY) != 0);
		int listener = -1;

		if ((r = cd_seccomp_install(prog, &listener)) < 0)
			cd_child_fail("install the seccomp filter", NULL, -r);
		if (listener >= 0) {
			r = cd_fd_send(g_listener_fd, listener);
			close(listener);
			if (r < 0)
				cd_child_fail("hand the seccomp listener to the supervisor", NULL,
				              -r);
		}
		walls |= CD_WALL_SECCOMP;
	}
	/* The container's own profile on top: the stricter action of the
	 * two filters applies to each call. */
	if (ctx->plan->seccomp_spec.len > 0 &&
	    (r = cd_seccomp_install(&ctx->plan->seccomp_spec, NULL)) < 0)
		cd_child_fail("install the container's seccomp profile", NULL, -r);
	close(g_listener_fd);
	blank_cmdline();
	run_init(walls);
}
