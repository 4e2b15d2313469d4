/* quotas.c — see quotas.h.
 *
 * Why the sandbox's user namespace.  Since Linux 4.9 (inotify, namespaces)
 * and 5.14 (the rlimits below), the kernel counts these objects in ucounts:
 * one counter per (user namespace, uid), and a creation is charged to the
 * creator's counter in its own namespace and in every ancestor, each
 * checked against that namespace's maximum.  The sandbox's namespace starts
 * with no maximum of its own, so a sandbox could take all of the invoking
 * user's share on the host (128 inotify instances by default: host root's,
 * when cordon runs as root).  Writing the sandbox's own maxima caps the run
 * at its share and leaves the rest to the host user.  The files under
 * /proc/sys/user/ are those of the writer's user namespace, writable with
 * CAP_SYS_RESOURCE in it, which the sandbox's init has until it drops its
 * capabilities; the command can read them, never raise them.
 *
 * The rlimits that are ucounts (MSGQUEUE, SIGPENDING, MEMLOCK) are checked
 * against the current process's limit for the sandbox's own count, so
 * lowering them in the child (rlimits.c) caps the run the same way. */
#include "quotas.h"

#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The maxima written to /proc/sys/user/: a field of the limits, or a fixed
 * value where the object has no business in a sandbox.  The cgroup
 * namespace the sandbox's init makes for itself exists before these are
 * written. */
enum { Q_INOTIFY_INSTANCES, Q_INOTIFY_WATCHES, Q_ZERO };
static const struct {
	const char *file;
	int what;
} sysctls[] = {
	{ "max_inotify_instances", Q_INOTIFY_INSTANCES },
	{ "max_inotify_watches", Q_INOTIFY_WATCHES },
	{ "max_fanotify_groups", Q_ZERO },
	{ "max_fanotify_marks", Q_ZERO },
	{ "max_user_namespaces", Q_ZERO },
	{ "max_mnt_namespaces", Q_ZERO },
	{ "max_pid_namespaces", Q_ZERO },
	{ "max_net_namespaces", Q_ZERO },
	{ "max_ipc_namespaces", Q_ZERO },
	{ "max_uts_namespaces", Q_ZERO },
	{ "max_cgroup_namespaces", Q_ZERO },
	{ "max_time_namespaces", Q_ZERO },
};

/* Refused without a memory cgroup: each can hold memory that no rlimit of
 * a process counts (memfd and System V segments outlive their mappings,
 * messages and semaphore sets are kernel memory).  So is mmap of shared
 * anonymous memory (MAP_SHARED or MAP_SHARED_VALIDATE with MAP_ANONYMOUS):
 * RLIMIT_DATA does not count it (an outside review held 2.4 GB so at
 * --memory 64M). */
static const int nocg_nrs[] = {
	__NR_memfd_create, __NR_memfd_secret, __NR_shmget, __NR_msgget, __NR_semget,
};

int cd_quotas_open(void)
{
	int fd = open("/proc/sys/user", O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

/* Decimal of v into buf (at least 21 bytes) without stdio. */
static size_t u64_dec(uint64_t v, char *buf)
{
	char tmp[21];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\n';
	return n + 1;
}

int cd_quotas_apply(int dirfd, const struct cd_limits *lim)
{
	size_t i;

	if (dirfd < 0 || !lim)
		return -EINVAL;
	for (i = 0; i < CD_ARRAY_SIZE(sysctls); i++) {
		uint64_t v = 0;
		char buf[24];
		size_t len;
		ssize_t w;
		int fd;

		if (sysctls[i].what == Q_INOTIFY_INSTANCES)
			v = lim->inotify_instances;
		else if (sysctls[i].what == Q_INOTIFY_WATCHES)
			v = lim->inotify_watches;
		if (sysctls[i].what != Q_ZERO && v == 0)
			continue; /* no quota asked: the host user's own bounds the run */
		if (v > INT32_MAX)
			v = INT32_MAX;
		fd = openat(dirfd, sysctls[i].file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0) {
			if (errno == ENOENT)
				continue; /* this kernel has no such object */
			return -errno;
		}
		len = u64_dec(v, buf);
		w = write(fd, buf, len);
		if (w < 0 || (size_t)w != len) {
			int e = w < 0 ? errno : EIO;
			close(fd);
			return -e;
		}
		close(fd);
	}
	return 0;
}

int cd_quotas_nocg_prog(const struct cd_seccomp_prog *main, struct cd_seccomp_prog *ret)
{
	enum { N = CD_ARRAY_SIZE(nocg_nrs), PRE = N + 8, DENY = N + 7 };
	struct cd_seccomp_prog p;
	struct sock_filter *f;
	uint32_t deny;
	size_t i;

	if (!main || !main->filter || main->len == 0)
		return -EINVAL;
	if ((size_t)main->len + PRE > BPF_MAXINSNS)
		return -E2BIG;
	f = calloc((size_t)main->len + PRE, sizeof *f);
	if (!f)
		return -ENOMEM;
	deny = main->notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ERRNO | EPERM;
	/* Another arch, or an x32 number (bit 30 set, so never equal to a
	 * native one), goes straight to the main program. */
	f[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	                                    offsetof(struct seccomp_data, arch));
	f[1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0,
	                                    PRE - 2);
	f[2] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	                                    offsetof(struct seccomp_data, nr));
	for (i = 0; i < N; i++)
		f[3 + i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		                                        (uint32_t)nocg_nrs[i],
		                                        (uint8_t)(DENY - (3 + i) - 1), 0);
	/* mmap: the low 32 bits of its flags (the kernel's int) with both
	 * MAP_SHARED (bit 0, also in MAP_SHARED_VALIDATE) and MAP_ANONYMOUS. */
	f[3 + N] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 0,
	                                        PRE - (3 + N) - 1);
	f[4 + N] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	                                        offsetof(struct seccomp_data, args[3]));
	f[5 + N] =
	        (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, MAP_SHARED | MAP_ANONYMOUS);
	f[6 + N] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
	                                        MAP_SHARED | MAP_ANONYMOUS, 0, 1);
	f[DENY] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, deny);
	/* The main program's jumps are relative: it runs unchanged after us. */
	memcpy(f + PRE, main->filter, main->len * sizeof *f);
	memset(&p, 0, sizeof p);
	memcpy(p.eperm, main->eperm, sizeof p.eperm);
	for (i = 0; i < N; i++)
		p.eperm[nocg_nrs[i] / 64] |= 1ULL << (nocg_nrs[i] % 64);
	p.eperm[__NR_mmap / 64] |= 1ULL << (__NR_mmap % 64);
	p.filter = f;
	p.len = (unsigned short)(main->len + PRE);
	p.notify = main->notify;
	*ret = p;
	return 0;
}

const struct cd_seccomp_prog *cd_quotas_prog(const struct cd_plan *p, int cgroup_enforces_memory)
{
	if (p->limits.memory && !cgroup_enforces_memory && p->seccomp_nocg.len > 0)
		return &p->seccomp_nocg;
	return &p->seccomp;
}

const char *cd_quotas_memory_cap(const char *mech)
{
	if (mech && strncmp(mech, "cgroup", 6) == 0)
		return "enforced";
	if (mech && strcmp(mech, "rlimit") == 0)
		return "approximate";
	return "none";
}

int cd_quotas_json(const struct cd_limits *lim, json_t *obj)
{
	static const struct {
		const char *key;
		size_t off;
	} f[] = {
		{ "inotify_instances", offsetof(struct cd_limits, inotify_instances) },
		{ "inotify_watches", offsetof(struct cd_limits, inotify_watches) },
		{ "msgqueue", offsetof(struct cd_limits, msgqueue) },
		{ "sigpending", offsetof(struct cd_limits, sigpending) },
		{ "memlock", offsetof(struct cd_limits, memlock) },
	};
	size_t i;

	for (i = 0; i < CD_ARRAY_SIZE(f); i++) {
		uint64_t v;

		memcpy(&v, (const char *)lim + f[i].off, sizeof v);
		if (json_object_set_new(obj, f[i].key, json_integer((json_int_t)v)) < 0)
			return -ENOMEM;
	}
	/* Nested namespaces and fanotify: refused by seccomp, and none left
	 * in the sandbox's user namespace. */
	if (json_object_set_new(obj, "namespaces", json_integer(0)) < 0 ||
	    json_object_set_new(obj, "fanotify_groups", json_integer(0)) < 0)
		return -ENOMEM;
	return 0;
}
