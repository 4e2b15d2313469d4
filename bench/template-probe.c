/* template-probe.c — what a pre-built sandbox template would save (issue
 * 21), measured with the kernel mechanisms alone, not cordon: in turns,
 *
 *   cold:      fork; unshare user+mount+pid+net+ipc+uts, maps, the whole
 *              read-only root (system dirs bound and made read-only, /dev
 *              of device binds, /proc, a scratch tmpfs, the cwd),
 *              pivot_root, exec /bin/true (cordon's cold shape, fewer
 *              mounts);
 *   template:  a process made once that holds a user namespace (maps
 *              written) and a mount namespace with that root assembled;
 *              per run the caller writes one byte to it, it forks, the
 *              child unshares a mount (a copy of the tree) and a pid
 *              namespace, mounts /proc, the scratch and the cwd,
 *              pivot_root, then unshares a NEW user namespace nested in
 *              the template's and net, ipc and uts namespaces, exec
 *              /bin/true; the template reaps it and answers one byte (two
 *              hand-offs, as a service would make);
 *   bwrap:     bench/startup.sh's bubblewrap line.
 *
 *   cc -O2 -o template-probe bench/template-probe.c
 *   ./template-probe ROUNDS          (as root, or as any user)
 *
 * Prints min, median, p90 in ms and the medians' ratio to bwrap's.  No
 * seccomp, Landlock, cgroup or log in either sandbox: the figures bound
 * what the namespace and mount work costs, nothing more.  Benchmarks
 * only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *const sysdirs[] = { "usr", "etc", "opt", "var" };
static const char *const links[][2] = {
	{ "bin", "usr/bin" }, { "sbin", "usr/sbin" }, { "lib", "usr/lib" }, { "lib64", "usr/lib64" }
};
static const char *const devs[] = { "null", "zero", "full", "random", "urandom", "tty" };
static char root[64], cwd[4096];
static int nested; /* a template's run: its own user namespace last */

static void die(const char *what)
{
	fprintf(stderr, "template-probe: %s: %s\n", what, strerror(errno));
	_exit(111);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		die(path);
	close(fd);
}

/* A new user namespace (uid 0 inside = our uid outside) of the caller. */
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

/* The shared, read-only part: system dirs, links, /dev. */
static void build_base(void)
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
	if (mkdir(d, 0555) < 0)
		die(d);
	snprintf(d, sizeof d, "%s/tmp", root);
	if (mkdir(d, 01777) < 0)
		die(d);
	snprintf(d, sizeof d, "%s/work", root);
	if (mkdir(d, 0755) < 0)
		die(d);
	if (mount(NULL, root, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
		die("root ro");
}

/* The per-run part, as pid 1 of a new pid namespace: /proc, scratch,
 * the cwd, pivot_root, exec. */
static void finish_and_exec(void)
{
	char d[256];
	char *argv[] = { "/bin/true", NULL };

	snprintf(d, sizeof d, "%s/proc", root);
	if (mount("proc", d, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		die("proc");
	snprintf(d, sizeof d, "%s/tmp", root);
	if (mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, "size=64m") < 0)
		die("scratch");
	snprintf(d, sizeof d, "%s/work", root);
	bind_ro(cwd, d);
	if (chdir(root) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/work") < 0)
		die("pivot_root");
	if (nested) {
		/* uid 0 of the template's namespace: a nested one, the run's,
		 * which owns its net, ipc and uts namespaces (not the mounts) */
		own_userns();
		if (unshare(CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) < 0)
			die("unshare net");
	}
	execve(argv[0], argv, environ);
	die("exec");
}

/* New pid namespace: fork to be its pid 1; wait and pass the status on. */
static void pid1_then_exec(void)
{
	pid_t p = fork();
	int st;

	if (p < 0)
		die("fork");
	if (p == 0)
		finish_and_exec();
	if (waitpid(p, &st, 0) < 0)
		die("wait");
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

static double run_cold(void)
{
	double t0 = now_ms();
	pid_t p = fork();
	int st;

	if (p == 0) {
		own_userns();
		if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
		            CLONE_NEWUTS) < 0)
			die("unshare");
		build_base();
		pid1_then_exec();
	}
	if (p < 0 || waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return now_ms() - t0;
}

static int to_tpl[2], from_tpl[2];

/* The template: made once; per byte read, one run. */
static void template_main(void)
{
	char b;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	close(to_tpl[1]);
	close(from_tpl[0]);
	own_userns();
	if (unshare(CLONE_NEWNS) < 0)
		die("unshare ns");
	build_base();
	while (read(to_tpl[0], &b, 1) == 1) {
		pid_t p = fork();
		int st;
		if (p == 0) {
			/* A copy of the tree and a pid namespace, both of the
			 * template's user namespace (a mount namespace made in a
			 * nested one would lock the copied mounts: the host's root
			 * could not be detached after pivot_root); the run's own
			 * user namespace, nested, comes after pivot_root. */
			if (unshare(CLONE_NEWNS | CLONE_NEWPID) < 0)
				die("unshare nested");
			nested = 1;
			pid1_then_exec();
		}
		b = p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1;
		if (write(from_tpl[1], &b, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

static double run_template(void)
{
	double t0 = now_ms();
	char b = 0;

	if (write(to_tpl[1], &b, 1) != 1 || read(from_tpl[0], &b, 1) != 1 || b)
		return -1;
	return now_ms() - t0;
}

static double run_bwrap(void)
{
	char *argv[] = { "bwrap",
		         "--unshare-all",
		         "--die-with-parent",
		         "--new-session",
		         "--ro-bind",
		         "/",
		         "/",
		         "--proc",
		         "/proc",
		         "--dev",
		         "/dev",
		         "/bin/true",
		         NULL };
	double t0 = now_ms();
	pid_t p;
	int st;

	if (posix_spawnp(&p, "bwrap", NULL, NULL, argv, environ) != 0 || waitpid(p, &st, 0) < 0 ||
	    !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return now_ms() - t0;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double show(const char *name, double *v, int n, double base)
{
	double med;

	qsort(v, (size_t)n, sizeof *v, by_value);
	med = v[n / 2];
	printf("%-9s min %7.2f  median %7.2f  p90 %7.2f ms", name, v[0], med, v[n * 9 / 10]);
	if (base > 0)
		printf("  %.2fx bwrap", med / base);
	printf("\n");
	return med;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 50, i, k;
	double *v[3];
	double (*fn[3])(void) = { run_bwrap, run_cold, run_template };
	pid_t tpl;

	if (rounds < 1 || !getcwd(cwd, sizeof cwd))
		return 2;
	snprintf(root, sizeof root, "/tmp/template-probe.%d", (int)getpid());
	if (mkdir(root, 0755) < 0 || pipe(to_tpl) < 0 || pipe(from_tpl) < 0)
		die("setup");
	for (k = 0; k < 3; k++)
		if (!(v[k] = calloc((size_t)rounds, sizeof(double))))
			return 2;
	tpl = fork();
	if (tpl == 0)
		template_main();
	for (i = -3; i < rounds; i++) /* three turns of warm-up */
		for (k = 0; k < 3; k++) {
			int j = (i + k + 3) % 3; /* the order rotated each round */
			double t = fn[j]();
			if (t < 0) {
				fprintf(stderr, "template-probe: a run failed (%d)\n", j);
				return 1;
			}
			if (i >= 0)
				v[j][i] = t;
		}
	k = (int)show("bwrap", v[0], rounds, 0);
	show("cold", v[1], rounds, v[0][rounds / 2]);
	show("template", v[2], rounds, v[0][rounds / 2]);
	close(to_tpl[1]);
	waitpid(tpl, NULL, 0);
	rmdir(root);
	return 0;
}
