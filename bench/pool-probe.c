/* pool-probe.c — a crude prototype of issue 21's pool of pre-spawned,
 * one-use sandboxes, with the kernel mechanisms alone (no cordon), to
 * measure what a pooled run's hand-off costs beside bwrap:
 *
 *   pool-probe serve SOCK LOG   a service: keeps ONE sandbox built ahead
 *       (user + mount + pid + net + ipc + uts namespaces, a tmpfs root with
 *       the system dirs bound read-only, /dev binds, /proc, a scratch
 *       tmpfs, the cwd bound read-only, pivot_root done; its pid 1 blocked
 *       on a socket); per client: reads argv and the client's stdio
 *       (SCM_RIGHTS), makes an "intent" durable (write + fdatasync of LOG),
 *       hands argv and stdio to the sandbox's pid 1, which spawns the
 *       command and reports its status; the service makes the "result"
 *       durable, answers the client, reaps the sandbox and builds the
 *       next one (after the answer: off the caller's path);
 *   pool-probe run SOCK CMD ARG...   the client: connect, send argv and
 *       fds 0-2, wait for the status, exit with it.
 *
 *   cc -O2 -o pool-probe bench/pool-probe.c
 *
 * No seccomp, Landlock, cgroup, plan or SQLite: the figure bounds the
 * hand-off (client exec, two round trips, two fdatasyncs, the command's
 * spawn in a built sandbox), nothing more.  Benchmarks only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *const sysdirs[] = { "usr", "etc", "opt", "var" };
static const char *const links[][2] = {
	{ "bin", "usr/bin" }, { "sbin", "usr/sbin" }, { "lib", "usr/lib" }, { "lib64", "usr/lib64" }
};
static const char *const devs[] = { "null", "zero", "full", "random", "urandom", "tty" };
static char root[64], cwd[4096];

static void die(const char *what)
{
	fprintf(stderr, "pool-probe: %s: %s\n", what, strerror(errno));
	_exit(111);
}

static void put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		die(path);
	close(fd);
}

static void own_userns(void)
{
	char m[64];
	unsigned u = (unsigned)geteuid(), g = (unsigned)getegid();

	if (unshare(CLONE_NEWUSER) < 0)
		die("unshare user");
	put("/proc/self/setgroups", "deny");
	snprintf(m, sizeof m, "0 %u 1\n", u);
	put("/proc/self/uid_map", m);
	snprintf(m, sizeof m, "0 %u 1\n", g);
	put("/proc/self/gid_map", m);
}

static void bind_ro(const char *src, const char *dst)
{
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
		die(dst);
	if (mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID, NULL) < 0)
		die(dst);
}

static void build_root(void)
{
	char d[256], s[256];
	size_t i;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("private");
	if (mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755") < 0)
		die("root tmpfs");
	for (i = 0; i < sizeof sysdirs / sizeof sysdirs[0]; i++) {
		snprintf(d, sizeof d, "%s/%s", root, sysdirs[i]);
		snprintf(s, sizeof s, "/%s", sysdirs[i]);
		if (mkdir(d, 0755) < 0)
			die(d);
		bind_ro(s, d);
	}
	for (i = 0; i < sizeof links / sizeof links[0]; i++) {
		snprintf(d, sizeof d, "%s/%s", root, links[i][0]);
		if (symlink(links[i][1], d) < 0)
			die(d);
	}
	snprintf(d, sizeof d, "%s/dev", root);
	if (mkdir(d, 0755) < 0 || mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755") < 0)
		die(d);
	for (i = 0; i < sizeof devs / sizeof devs[0]; i++) {
		int fd;
		snprintf(d, sizeof d, "%s/dev/%s", root, devs[i]);
		snprintf(s, sizeof s, "/dev/%s", devs[i]);
		if ((fd = open(d, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) < 0)
			die(d);
		close(fd);
		if (mount(s, d, NULL, MS_BIND, NULL) < 0)
			die(d);
	}
	snprintf(d, sizeof d, "%s/proc", root);
	if (mkdir(d, 0555) < 0 ||
	    mount("proc", d, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		die(d);
	snprintf(d, sizeof d, "%s/tmp", root);
	if (mkdir(d, 01777) < 0 || mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, "size=64m") < 0)
		die(d);
	snprintf(d, sizeof d, "%s/work", root);
	if (mkdir(d, 0755) < 0)
		die(d);
	bind_ro(cwd, d);
	if (mount(NULL, root, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) <
	    0)
		die("root ro");
	if (chdir(root) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/work") < 0)
		die("pivot_root");
}

/* A message: a buffer and up to 4 fds. */
static ssize_t recv_fds(int s, char *buf, size_t len, int *fds, int nfd)
{
	char c[CMSG_SPACE(4 * sizeof(int))];
	struct iovec io = { buf, len };
	struct msghdr m = {
		.msg_iov = &io, .msg_iovlen = 1, .msg_control = c, .msg_controllen = sizeof c
	};
	struct cmsghdr *h;
	ssize_t n = recvmsg(s, &m, MSG_CMSG_CLOEXEC);

	if (n <= 0)
		return -1;
	h = CMSG_FIRSTHDR(&m);
	if (!h || h->cmsg_type != SCM_RIGHTS || h->cmsg_len != CMSG_LEN((size_t)nfd * sizeof(int)))
		return -1;
	memcpy(fds, CMSG_DATA(h), (size_t)nfd * sizeof(int));
	return n;
}

static int send_fds(int s, const char *buf, size_t len, const int *fds, int nfd)
{
	char c[CMSG_SPACE(4 * sizeof(int))];
	struct iovec io = { (void *)buf, len };
	struct msghdr m = { .msg_iov = &io,
		            .msg_iovlen = 1,
		            .msg_control = c,
		            .msg_controllen = CMSG_SPACE((size_t)nfd * sizeof(int)) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);

	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN((size_t)nfd * sizeof(int));
	memcpy(CMSG_DATA(h), fds, (size_t)nfd * sizeof(int));
	return sendmsg(s, &m, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

/* The sandbox's pid 1: wait for argv and stdio, spawn, report. */
static void pid1(int sp)
{
	static char buf[65536];
	char *argv[256];
	int fds[3], st, i, n = 0;
	ssize_t len = recv_fds(sp, buf, sizeof buf - 1, fds, 3);
	pid_t p;

	if (len < 0)
		_exit(1);
	buf[len] = 0;
	for (char *q = buf; q < buf + len && n < 255; q += strlen(q) + 1)
		argv[n++] = q;
	argv[n] = NULL;
	p = vfork();
	if (p == 0) {
		for (i = 0; i < 3; i++)
			dup2(fds[i], i);
		execve(argv[0], argv, environ);
		_exit(127);
	}
	for (i = 0; i < 3; i++)
		close(fds[i]);
	if (p < 0 || waitpid(p, &st, 0) < 0)
		st = 1 << 8;
	if (write(sp, &st, sizeof st) != sizeof st)
		_exit(1);
	_exit(0);
}

/* Build one sandbox; returns its outer pid, *sp the service's end. */
static pid_t spawn_sandbox(int *sp)
{
	int s[2];
	pid_t p;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, s) < 0)
		die("socketpair");
	p = fork();
	if (p == 0) {
		pid_t q;
		close(s[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		own_userns();
		if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
		            CLONE_NEWUTS) < 0)
			die("unshare");
		q = fork();
		if (q == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			build_root();
			pid1(s[1]);
		}
		_exit(q > 0 && waitpid(q, NULL, 0) == q ? 0 : 1);
	}
	close(s[1]);
	*sp = s[0];
	return p;
}

static void serve(const char *sock, const char *logpath)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), sp;
	int log = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	pid_t sb;

	if (l < 0 || log < 0 || !getcwd(cwd, sizeof cwd))
		die("setup");
	signal(SIGCHLD, SIG_DFL);
	snprintf(root, sizeof root, "/tmp/pool-probe.%d", (int)getpid());
	if (mkdir(root, 0755) < 0)
		die(root);
	snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
	unlink(sock);
	if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 8) < 0)
		die("listen");
	chmod(sock, 0777);
	sb = spawn_sandbox(&sp);
	for (;;) {
		static char buf[65536];
		int c = accept4(l, NULL, NULL, SOCK_CLOEXEC), fds[3], st = 1 << 8, i;
		ssize_t n;
		if (c < 0)
			continue;
		n = recv_fds(c, buf, sizeof buf, fds, 3);
		if (n > 0) {
			/* the intent, durable before the command starts */
			if (write(log, "intent\n", 7) != 7 || fdatasync(log) < 0)
				die("intent");
			if (send_fds(sp, buf, (size_t)n, fds, 3) < 0 ||
			    read(sp, &st, sizeof st) != sizeof st)
				st = 1 << 8;
			for (i = 0; i < 3; i++)
				close(fds[i]);
			if (write(log, "result\n", 7) != 7 || fdatasync(log) < 0)
				die("result");
		}
		if (write(c, &st, sizeof st) != sizeof st) {
		}
		close(c);
		close(sp);
		waitpid(sb, NULL, 0);
		sb = spawn_sandbox(&sp); /* the next one, off the caller's path */
	}
}

static int run(const char *sock, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	static char buf[65536];
	size_t len = 0;
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), st, fds[3] = { 0, 1, 2 };

	for (; *argv; argv++) {
		size_t k = strlen(*argv) + 1;
		if (len + k > sizeof buf)
			return 2;
		memcpy(buf + len, *argv, k);
		len += k;
	}
	snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) < 0 ||
	    send_fds(s, buf, len, fds, 3) < 0 || read(s, &st, sizeof st) != sizeof st)
		return 125;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "serve") == 0)
		serve(argv[2], argv[3]);
	if (argc >= 4 && strcmp(argv[1], "run") == 0)
		return run(argv[2], argv + 3);
	fprintf(stderr, "usage: pool-probe serve SOCK LOG | pool-probe run SOCK CMD ARG...\n");
	return 2;
}
