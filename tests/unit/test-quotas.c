/* test-quotas — the per-run kernel object quotas and the program for runs
 * without a memory cgroup (quotas.h).  The quotas are written in a fresh
 * user namespace of a forked child and checked by taking inotify
 * instances; the no-cgroup program is installed in forked children and
 * checked call by call against the plain one (the control). */
#include "../tap.h"

#include "util/bounds.h"
#include "sandbox/plan.h"
#include "sandbox/quotas.h"
#include "sandbox/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <sched.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Exit status of `fn` run in a forked child. */
static int in_child(int (*fn)(const void *), const void *arg)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn(arg));
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* In a new user namespace: write the quotas, then count inotify instances
 * until refused.  Exit: the count (or 200 + errno of a setup step). */
static int inotify_count(const void *arg)
{
	const struct cd_limits *lim = arg;
	int fd, r, n = 0;

	if (unshare(CLONE_NEWUSER) < 0)
		return 200;
	if ((fd = cd_quotas_open()) < 0)
		return 201;
	if ((r = cd_quotas_apply(fd, lim)) < 0)
		return 202;
	close(fd);
	while (n < 150 && inotify_init1(IN_CLOEXEC) >= 0)
		n++;
	return errno == EMFILE ? n : 203;
}

/* unshare(CLONE_NEWUTS) after the quotas: 0 when refused with ENOSPC. */
static int nested_ns(const void *arg)
{
	const struct cd_limits *lim = arg;
	int fd;

	if (unshare(CLONE_NEWUSER) < 0 || (fd = cd_quotas_open()) < 0 ||
	    cd_quotas_apply(fd, lim) < 0)
		return 2;
	return unshare(CLONE_NEWUTS) < 0 && errno == ENOSPC ? 0 : 1;
}

/* Install the program, then try the calls: a bit per call refused with
 * EPERM (memfd_create 1, shmget 2, msgget 4, semget 8, shared anonymous
 * mmap 16), 32 when a private mmap failed, 64 when getpid failed, 128 when
 * the install did. */
static int calls(const void *arg)
{
	const struct cd_seccomp_prog *p = arg;
	int fd, id, bits = 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || cd_seccomp_install(p, NULL) < 0)
		return 128;
	fd = memfd_create("t", MFD_CLOEXEC);
	bits |= fd < 0 && errno == EPERM ? 1 : 0;
	id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	bits |= id < 0 && errno == EPERM ? 2 : 0;
	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);
	bits |= syscall(SYS_msgget, IPC_PRIVATE, 0600) < 0 && errno == EPERM ? 4 : 0;
	bits |= syscall(SYS_semget, IPC_PRIVATE, 1, 0600) < 0 && errno == EPERM ? 8 : 0;
	/* shared anonymous memory (16), in both spellings of "shared"; a
	 * private mapping must stay allowed (32 when refused) */
	bits |= mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0) ==
	                                MAP_FAILED &&
	                        errno == EPERM &&
	                        syscall(SYS_mmap, 0, 4096, PROT_READ,
	                                0xffffffff00000000ULL | MAP_SHARED_VALIDATE | MAP_ANONYMOUS,
	                                -1, 0) == -1 &&
	                        errno == EPERM
	                ? 16
	                : 0;
	bits |= mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
	                        MAP_FAILED
	                ? 32
	                : 0;
	bits |= syscall(SYS_getpid) < 0 ? 64 : 0;
	return bits;
}

static void test_json(void)
{
	struct cd_limits lim;
	json_t *o = json_object();

	cd_limits_default(&lim);
	ok(o && cd_quotas_json(&lim, o) == 0, "quotas as JSON");
	is_int((int)json_integer_value(json_object_get(o, "inotify_instances")),
	       CD_DEFAULT_INOTIFY_INSTANCES, "JSON: inotify_instances");
	is_int((int)json_integer_value(json_object_get(o, "msgqueue")), CD_DEFAULT_MSGQUEUE,
	       "JSON: msgqueue");
	ok(json_is_integer(json_object_get(o, "namespaces")) &&
	           json_integer_value(json_object_get(o, "namespaces")) == 0,
	   "JSON: no nested namespaces");
	json_decref(o);
	is_str(cd_quotas_memory_cap("cgroup1"), "enforced", "memory_cap: cgroup1 enforces");
	is_str(cd_quotas_memory_cap("cgroup2"), "enforced", "memory_cap: cgroup2 enforces");
	is_str(cd_quotas_memory_cap("rlimit"), "approximate", "memory_cap: rlimit is approximate");
	is_str(cd_quotas_memory_cap("none"), "none", "memory_cap: none");
	is_str(cd_quotas_memory_cap(NULL), "none", "memory_cap: NULL is none");
}

static void test_progs(void)
{
	struct cd_seccomp_opts so = { .allow_net_inet = 1, .notify = 0 };
	struct cd_seccomp_prog main_p, nocg;
	struct cd_plan plan;
	struct cd_err err = { 0, "" };

	memset(&main_p, 0, sizeof main_p);
	memset(&nocg, 0, sizeof nocg);
	if (cd_seccomp_build(&so, &main_p, &err) < 0) {
		diag("%s", err.msg);
		tap_skip("seccomp unavailable");
		return;
	}
	is_int(cd_quotas_nocg_prog(&main_p, &nocg), 0, "the no-cgroup program builds");
	is_int(nocg.len, main_p.len + 13, "it is the main program with a 13-instruction prefix");
	is_int(in_child(calls, &main_p), 0,
	       "control: the main program allows memfd_create, shmget, msgget, semget");
	is_int(in_child(calls, &nocg), 31,
	       "the no-cgroup program refuses all four and shared anonymous mmap with EPERM "
	       "(junk in the flags' upper half too); private mmap and getpid still work");
	is_int(cd_seccomp_reply_errno(&nocg, AUDIT_ARCH_X86_64, SYS_memfd_create), EPERM,
	       "the listener answers memfd_create with EPERM");
	is_int(cd_seccomp_reply_errno(&main_p, AUDIT_ARCH_X86_64, SYS_memfd_create), ENOSYS,
	       "control: the main program's table does not list it");

	memset(&plan, 0, sizeof plan);
	plan.seccomp = main_p;
	plan.seccomp_nocg = nocg;
	plan.limits.memory = 64 * CD_MIB;
	ok(cd_quotas_prog(&plan, 0) == &plan.seccomp_nocg,
	   "no memory cgroup: the no-cgroup program");
	ok(cd_quotas_prog(&plan, 1) == &plan.seccomp, "a memory cgroup: the main program");
	plan.limits.memory = 0;
	ok(cd_quotas_prog(&plan, 0) == &plan.seccomp, "no memory limit: the main program");
	is_int(cd_quotas_nocg_prog(NULL, &nocg), -EINVAL, "no main program: EINVAL");
	cd_seccomp_prog_release(&main_p);
	cd_seccomp_prog_release(&plan.seccomp_nocg);
}

int main(void)
{
	struct cd_limits lim, none;

	cd_limits_default(&lim);
	memset(&none, 0, sizeof none);
	is_int(in_child(inotify_count, &lim), CD_DEFAULT_INOTIFY_INSTANCES,
	       "a fresh user namespace with the quotas: 16 inotify instances, then EMFILE");
	lim.inotify_instances = 3;
	is_int(in_child(inotify_count, &lim), 3, "a quota of 3: 3 instances");
	ok(in_child(inotify_count, &none) > 16,
	   "control: with no quota the namespace gets more than 16");
	is_int(in_child(nested_ns, &lim), 0,
	       "after the quotas a nested namespace fails with ENOSPC");
	is_int(cd_quotas_apply(-1, &lim), -EINVAL, "a bad dirfd is refused");
	test_json();
	test_progs();
	return tap_done();
}
