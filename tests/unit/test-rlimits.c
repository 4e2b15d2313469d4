/* test-rlimits.c — the rlimit floor, applied in forked children: values as
 * getrlimit reports them, then each limit hit for real (a 2 GiB allocation,
 * a file past RLIMIT_FSIZE, a CPU spin, a fork loop as nobody). */
#include "../tap.h"

#include "sandbox/rlimits.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define MIB (1024ULL * 1024ULL)

static const struct cd_limits lim = {
	.memory = 256 * MIB,
	.pids = 16,
	.cpu_ms = 1200,
	.nofile = 64,
	.fsize = 1 * MIB,
};

static char tmpdir[64];

/* Run fn in a child after applying `l`; return its wait status, or -1. */
static int in_child(int (*fn)(void), const struct cd_limits *l, int mem_cg, int pids_cg)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (cd_rlimits_apply(l, mem_cg, pids_cg) < 0)
			_exit(99);
		_exit(fn());
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return st;
}

static int exited(int st, int code)
{
	return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == code;
}

static int check_values(void)
{
	static const struct {
		int res;
		uint64_t want;
	} t[] = {
		{ RLIMIT_CORE, 0 },   { RLIMIT_NOFILE, 64 },      { RLIMIT_FSIZE, 1 * MIB },
		{ RLIMIT_CPU, 2 },    { RLIMIT_DATA, 256 * MIB }, { RLIMIT_NPROC, 16 },
		{ RLIMIT_RTPRIO, 0 },
	};
	struct rlimit r;

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (getrlimit(t[i].res, &r) < 0 || r.rlim_cur != t[i].want)
			return 10 + (int)i;
	if (getrlimit(RLIMIT_CPU, &r) < 0 || r.rlim_max != 3)
		return 30;
	if (getrlimit(RLIMIT_AS, &r) < 0 || r.rlim_cur != cd_rlimits_as_for(256 * MIB))
		return 31;
	return 0;
}

static int check_floor_skipped(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_DATA, &r) < 0 || r.rlim_cur != RLIM_INFINITY)
		return 1;
	if (getrlimit(RLIMIT_AS, &r) < 0 || r.rlim_cur != RLIM_INFINITY)
		return 2;
	if (getrlimit(RLIMIT_CORE, &r) < 0 || r.rlim_cur != 0)
		return 3;
	return 0;
}

__attribute__((unused)) static int alloc_2g(void)
{
	size_t n = 2048 * MIB;
	volatile char *p = malloc(n); /* volatile: the allocation must not be elided */

	if (!p)
		return 0; /* refused by the floor */
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
	free((void *)p);
	return 1;
}

__attribute__((unused)) static int alloc_64m(void)
{
	size_t n = 64 * MIB;
	volatile char *p = malloc(n);

	if (!p)
		return 1;
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
	free((void *)p);
	return 0;
}

static int write_past(int ignore_sigxfsz)
{
	char path[128], buf[64 * 1024];
	int fd, rc = 1;

	if (ignore_sigxfsz)
		signal(SIGXFSZ, SIG_IGN);
	if (snprintf(path, sizeof path, "%s/big-%d", tmpdir, (int)getpid()) >= (int)sizeof path)
		return 2;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 3;
	memset(buf, 'x', sizeof buf);
	for (int i = 0; i < 64; i++) { /* 4 MiB, four times the cap */
		if (write(fd, buf, sizeof buf) < 0) {
			rc = errno == EFBIG ? 0 : 4;
			break;
		}
	}
	close(fd);
	unlink(path);
	return rc;
}

static int write_past_sig(void)
{
	return write_past(0);
}

static int write_past_ign(void)
{
	return write_past(1);
}

static int spin(void)
{
	volatile unsigned long x = 0;
	for (;;)
		x++;
	return 0;
}

static int fork_loop(void)
{
	pid_t kids[64];
	int n = 0, rc = 1; /* 1: 64 forks went through a cap of 16 */

	if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
		return 2;
	if (cd_rlimits_apply(&lim, 0, 0) < 0)
		return 3;
	for (int i = 0; i < 64; i++) {
		pid_t p = fork();
		if (p < 0) {
			rc = errno == EAGAIN && n < 16 ? 0 : 4;
			break;
		}
		if (p == 0) {
			pause();
			_exit(0);
		}
		kids[n++] = p;
	}
	for (int i = 0; i < n; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	return rc;
}

static int noop(void)
{
	return 0;
}

int main(void)
{
	struct cd_limits none = { 0 };
	int st;

	tap_start(60);
	if (snprintf(tmpdir, sizeof tmpdir, "/tmp/cordon-rl.XXXXXX") >= (int)sizeof tmpdir ||
	    !mkdtemp(tmpdir))
		return ok(0, "mkdtemp"), tap_done();

	is_int(cd_rlimits_apply(NULL, 0, 0), -EINVAL, "NULL limits are refused");
	is_int(cd_rlimits_as_for(UINT64_MAX / 2 + 1), RLIM64_INFINITY, "the AS value saturates");
	ok(exited(in_child(noop, &none, 0, 0), 0), "all-zero limits apply (core 0 only)");

	st = in_child(check_values, &lim, 0, 0);
	ok(exited(st, 0), "getrlimit shows core 0, nofile, fsize, cpu, data, as, nproc");
	if (!exited(st, 0))
		diag("check_values exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	ok(exited(in_child(check_floor_skipped, &lim, 1, 1), 0),
	   "with a cgroup enforcing memory, no AS/DATA floor (and still core 0)");

#ifdef __SANITIZE_ADDRESS__
	/* ASan maps terabytes of shadow and aborts when an allocation fails:
	 * an address-space cap cannot be exercised under it. */
	for (int i = 0; i < 3; i++)
		tap_skip("built with ASan: RLIMIT_AS/DATA cannot be exercised");
#else
	ok(exited(in_child(alloc_64m, &none, 0, 0), 0), "control: 64 MiB allocates without limits");
	ok(exited(in_child(alloc_64m, &lim, 0, 0), 0), "64 MiB allocates under a 256M floor");
	ok(exited(in_child(alloc_2g, &lim, 0, 0), 0),
	   "a 2 GiB malloc+memset fails under the 256M floor");
#endif

	st = in_child(write_past_sig, &lim, 0, 0);
	ok(st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ,
	   "writing past RLIMIT_FSIZE raises SIGXFSZ");
	ok(exited(in_child(write_past_ign, &lim, 0, 0), 0),
	   "with SIGXFSZ ignored, the write fails with EFBIG");
	ok(exited(in_child(write_past_ign, &none, 0, 0), 1), "control: no cap, no EFBIG");

	st = in_child(spin, &lim, 0, 0);
	ok(st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU,
	   "a CPU spin is stopped by SIGXCPU at RLIMIT_CPU");

	if (geteuid() == 0) {
		/* Root is exempt from RLIMIT_NPROC: run the loop as nobody. */
		st = in_child(fork_loop, &none, 0, 0);
		ok(exited(st, 0),
		   "as nobody, a fork loop stops at the RLIMIT_NPROC floor (EAGAIN)");
		if (!exited(st, 0))
			diag("fork_loop exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	} else {
		tap_skip("not root: cannot become nobody to test RLIMIT_NPROC");
	}
	rmdir(tmpdir);
	return tap_done();
}
