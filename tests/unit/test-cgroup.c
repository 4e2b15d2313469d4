/* test-cgroup.c — the per-run cgroup: as root, a memory hog is OOM-killed
 * at the cap and the reason says "memory", a fork loop stops at pids.max
 * and the stats say so, kill empties the tree, a CPU spin is throttled,
 * destroy leaves nothing behind and stale leftovers are cleaned; as nobody
 * the fallback is "rlimit" and says so. */
#include "../tap.h"

#include "sandbox/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#define MIB (1024ULL * 1024ULL)

/* A child that waits for the go byte (after attach), then runs fn. */
struct kid {
	pid_t pid;
	int go;
};

static int kid_start(struct kid *k, int (*fn)(void))
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	k->pid = fork();
	if (k->pid < 0)
		return -1;
	if (k->pid == 0) {
		char c;
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(98);
		_exit(fn());
	}
	close(p[0]);
	k->go = p[1];
	return 0;
}

static int kid_finish(struct kid *k)
{
	int st = -1;

	if (write(k->go, "g", 1) != 1)
		kill(k->pid, SIGKILL);
	close(k->go);
	if (waitpid(k->pid, &st, 0) < 0)
		return -1;
	return st;
}

/* The path of `pid` in hierarchy `ctrl`, from /proc/<pid>/cgroup. */
static int cgroup_of(pid_t pid, const char *ctrl, char *buf, size_t size)
{
	char p[64], data[4096], *line;
	FILE *f;
	size_t cl = strlen(ctrl);

	if (snprintf(p, sizeof p, "/proc/%d/cgroup", (int)pid) >= (int)sizeof p)
		return -1;
	if (!(f = fopen(p, "re")))
		return -1;
	while ((line = fgets(data, sizeof data, f))) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2 && (size_t)(c2 - c1 - 1) == cl && memcmp(c1 + 1, ctrl, cl) == 0) {
			line = c2 + 1;
			line[strcspn(line, "\n")] = '\0';
			fclose(f);
			return snprintf(buf, size, "/sys/fs/cgroup/%s%s", ctrl, line) < (int)size
			               ? 0
			               : -1;
		}
	}
	fclose(f);
	return -1;
}

static int hog(void)
{
	size_t n = 256 * MIB;
	/* volatile: otherwise the compiler may elide the whole allocation */
	volatile char *p = malloc(n);

	if (!p)
		return 2;
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
	free((void *)p);
	return 0; /* survived: the cap did not hold */
}

static int fork_loop(void)
{
	int n = 0;

	for (int i = 0; i < 100; i++) {
		pid_t p = fork();
		if (p < 0)
			return errno == EAGAIN ? 100 + n : 3;
		if (p == 0) {
			pause();
			_exit(0);
		}
		n++;
	}
	return 4; /* 100 forks went through */
}

static int spin(void)
{
	struct timespec t0, t;
	volatile unsigned long x = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 600);
	return 0;
}

static void test_args(void)
{
	struct cd_limits l = { .memory = 64 * MIB };
	struct cd_cgroup *cg = NULL;
	struct cd_err err = { 0 };
	struct cd_cgroup_stats st = { .measured = CD_CGSTAT_MEMORY | CD_CGSTAT_PIDS };

	is_int(cd_cgroup_create("../x", &l, &cg, &err), -EINVAL, "a run id with '/' is refused");
	is_int(cd_cgroup_create("..", &l, &cg, &err), -EINVAL, "'..' is refused");
	is_int(cd_cgroup_create("", &l, &cg, &err), -EINVAL, "an empty id is refused");
	ok(cg == NULL, "nothing returned on failure");
	is_str(cd_cgroup_mechanism(NULL, "memory"), "rlimit", "no cgroup: memory by rlimit");
	is_str(cd_cgroup_mechanism(NULL, "bogus"), "none", "unknown limit: none");
	cd_cgroup_destroy(NULL);
	st.oom_kills = 1;
	is_str(cd_cgroup_reason(&st, 9), "memory", "oom kill + SIGKILL: reason memory");
	ok(cd_cgroup_reason(&st, 0) == NULL, "oom kill but exit 0: no limit reason");
	st.oom_kills = 0;
	st.pids_max_hits = 3;
	is_str(cd_cgroup_reason(&st, 1 << 8), "pids", "pids.max hit + exit 1: reason pids");
	st.measured = 0;
	ok(cd_cgroup_reason(&st, 9) == NULL, "nothing measured: no limit reason");
}

static void test_memory(void)
{
	struct cd_limits l = { .memory = 64 * MIB, .pids = 16, .cpu_ms = 5000 };
	struct cd_cgroup *cg = NULL;
	struct cd_cgroup_stats st;
	struct cd_err err = { 0 };
	char id[64], path[512] = "";
	struct kid k;
	int w;

	if (snprintf(id, sizeof id, "t-mem-%d", (int)getpid()) >= (int)sizeof id)
		return;
	if (!ok(cd_cgroup_create(id, &l, &cg, &err) == 0, "create a run cgroup (64M, 16 pids)")) {
		diag("%s", err.msg);
		return;
	}
	diag("mechanism: %s", cd_cgroup_note(cg));
	ok(strncmp(cd_cgroup_mechanism(cg, "memory"), "cgroup", 6) == 0,
	   "as root, memory is enforced by a cgroup (%s)", cd_cgroup_mechanism(cg, "memory"));
	ok(cd_cgroup_enforces(cg, "memory") && cd_cgroup_enforces(cg, "pids"),
	   "enforces memory and pids");
	is_str(cd_cgroup_mechanism(cg, "cpu"), "rlimit", "total cpu time is RLIMIT_CPU's");
	is_str(cd_cgroup_mechanism(cg, "cpu_quota"), "none", "no quota asked: none");

	if (kid_start(&k, hog) < 0)
		return (void)ok(0, "fork");
	ok(cd_cgroup_attach(cg, k.pid, &err) == 0, "attach the child before it runs");
	ok(cgroup_of(k.pid, "memory", path, sizeof path) == 0 && strstr(path, id) != NULL,
	   "the child is in the run's memory cgroup");
	w = kid_finish(&k);
	ok(w >= 0 && WIFSIGNALED(w) && WTERMSIG(w) == SIGKILL,
	   "touching 256M under a 64M cap: killed by SIGKILL");
	if (w >= 0 && WIFEXITED(w))
		diag("hog exited %d", WEXITSTATUS(w));
	ok(cd_cgroup_collect(cg, &st) == 0, "collect");
	ok(st.oom_kills > 0, "stats: oom_kills %llu > 0", (unsigned long long)st.oom_kills);
	ok(st.peak_memory > 32 * MIB && st.peak_memory <= 64 * MIB + MIB,
	   "stats: peak memory %llu within the cap", (unsigned long long)st.peak_memory);
	is_str(cd_cgroup_reason(&st, w), "memory", "reason: memory");
	cd_cgroup_destroy(cg);
	ok(path[0] && access(path, F_OK) < 0 && errno == ENOENT,
	   "destroy leaves no directory behind");
}

static void test_pids(void)
{
	struct cd_limits l = { .memory = 256 * MIB, .pids = 16 };
	struct cd_cgroup *cg = NULL;
	struct cd_cgroup_stats st;
	struct cd_err err = { 0 };
	char id[64], path[512] = "";
	struct kid k;
	int w, n;

	if (snprintf(id, sizeof id, "t-pids-%d", (int)getpid()) >= (int)sizeof id)
		return;
	if (!ok(cd_cgroup_create(id, &l, &cg, &err) == 0, "create a run cgroup (16 pids)")) {
		diag("%s", err.msg);
		return;
	}
	if (kid_start(&k, fork_loop) < 0)
		return (void)ok(0, "fork");
	ok(cd_cgroup_attach(cg, k.pid, &err) == 0, "attach the fork loop");
	cgroup_of(k.pid, "pids", path, sizeof path);
	w = kid_finish(&k);
	ok(w >= 0 && WIFEXITED(w) && WEXITSTATUS(w) >= 100 && WEXITSTATUS(w) < 116,
	   "a fork loop gets EAGAIN before 16 processes (%d forks)",
	   w >= 0 && WIFEXITED(w) ? WEXITSTATUS(w) - 100 : -1);
	ok(cd_cgroup_collect(cg, &st) == 0, "collect");
	ok(st.pids_max_hits > 0, "stats: pids.max hit %llu times",
	   (unsigned long long)st.pids_max_hits);
	is_str(cd_cgroup_reason(&st, w), "pids", "reason: pids");
	ok(!cd_cgroup_reason(&st, 0), "a clean exit has no limit reason");
	n = cd_cgroup_kill(cg);
	ok(n >= 10, "kill took the orphaned children (%d)", n);
	cd_cgroup_destroy(cg);
	ok(path[0] && access(path, F_OK) < 0 && errno == ENOENT,
	   "destroy leaves no directory behind");
}

static void test_cpu_quota(void)
{
	struct cd_limits l = { .cpu_quota_pct = 20 };
	struct cd_cgroup *cg = NULL;
	struct cd_cgroup_stats st;
	struct cd_err err = { 0 };
	char id[64];
	struct kid k;

	if (snprintf(id, sizeof id, "t-cpu-%d", (int)getpid()) >= (int)sizeof id)
		return;
	if (!ok(cd_cgroup_create(id, &l, &cg, &err) == 0, "create a run cgroup (20%% cpu)"))
		return diag("%s", err.msg);
	if (strcmp(cd_cgroup_mechanism(cg, "cpu_quota"), "none") == 0) {
		tap_skip("no cgroup cpu controller");
		cd_cgroup_destroy(cg);
		return;
	}
	if (kid_start(&k, spin) < 0)
		return (void)ok(0, "fork");
	ok(cd_cgroup_attach(cg, k.pid, &err) == 0, "attach a CPU spinner");
	kid_finish(&k);
	ok(cd_cgroup_collect(cg, &st) == 0, "collect");
	ok((st.measured & CD_CGSTAT_QUOTA) && st.cpu_throttled > 0,
	   "the spinner was throttled (%llu periods)", (unsigned long long)st.cpu_throttled);
	ok((st.measured & CD_CGSTAT_CPU) && st.cpu_usage_ns > 0 &&
	           st.cpu_usage_ns < 400ULL * 1000 * 1000,
	   "cpu usage %llu ns, well under the 600 ms wall", (unsigned long long)st.cpu_usage_ns);
	cd_cgroup_destroy(cg);
}

static void test_stale(void)
{
	struct cd_limits l = { .pids = 16 };
	struct cd_cgroup *cg = NULL;
	struct cd_err err = { 0 };
	char own[512], stale[640], id[64];
	struct timespec old[2];

	if (cgroup_of(getpid(), "pids", own, sizeof own) < 0 ||
	    snprintf(stale, sizeof stale, "%s%scordon/stale-%d", own,
	             own[strlen(own) - 1] == '/' ? "" : "/", (int)getpid()) >= (int)sizeof stale ||
	    snprintf(id, sizeof id, "t-stale-%d", (int)getpid()) >= (int)sizeof id)
		return (void)ok(0, "paths");
	/* A crashed cordon's leftover: empty, two minutes old. */
	ok(mkdir(stale, 0755) == 0 || errno == EEXIST, "plant a stale run dir");
	clock_gettime(CLOCK_REALTIME, &old[0]);
	old[0].tv_sec -= 120;
	old[1] = old[0];
	if (utimensat(AT_FDCWD, stale, old, 0) < 0) {
		tap_skip("cannot age a cgroup directory");
		rmdir(stale);
		return;
	}
	ok(cd_cgroup_create(id, &l, &cg, &err) == 0, "create next to it");
	ok(access(stale, F_OK) < 0, "the stale empty dir was removed");
	cd_cgroup_destroy(cg);
	rmdir(stale);
}

static int rootless_child(void)
{
	struct cd_limits l = { .memory = 64 * MIB, .pids = 16 };
	struct cd_cgroup *cg = NULL;
	struct cd_err err = { 0 };
	int rc = 0;

	if (cd_cgroup_create("t-rootless", &l, &cg, &err) < 0)
		return 10;
	if (strcmp(cd_cgroup_mechanism(cg, "memory"), "rlimit") != 0)
		rc = 11;
	else if (strcmp(cd_cgroup_mechanism(cg, "pids"), "rlimit") != 0)
		rc = 12;
	else if (cd_cgroup_enforces(cg, "memory") || cd_cgroup_enforces(cg, "pids"))
		rc = 13;
	else if (strncmp(cd_cgroup_note(cg), "rlimit", 6) != 0)
		rc = 14;
	else if (cd_cgroup_attach(cg, getpid(), &err) != 0)
		rc = 15;
	printf("# rootless note: %s\n", cd_cgroup_note(cg));
	fflush(stdout);
	cd_cgroup_destroy(cg);
	return rc;
}

static void test_rootless(void)
{
	int st;
	pid_t pid;

	if (geteuid() != 0) {
		is_int(rootless_child(), 0, "as non-root, create falls back to rlimit and says so");
		return;
	}
	pid = fork();
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(9);
		_exit(rootless_child());
	}
	st = -1;
	waitpid(pid, &st, 0);
	ok(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "as nobody, create falls back to rlimit and says so (exit %d)",
	   st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int main(void)
{
	struct cd_limits l = { .memory = 64 * MIB };
	struct cd_cgroup *cg = NULL;
	int have;

	tap_start(60);
	test_args();
	have = geteuid() == 0 && cd_cgroup_create("t-probe", &l, &cg, NULL) == 0 &&
	       cd_cgroup_enforces(cg, "memory");
	cd_cgroup_destroy(cg);
	if (have) {
		test_memory();
		test_pids();
		test_cpu_quota();
		test_stale();
	} else {
		tap_skip(geteuid() ? "not root: no writable cgroup hierarchy"
		                   : "no writable memory cgroup on this host");
	}
	test_rootless();
	return tap_done();
}
