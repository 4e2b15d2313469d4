/* oci-hostns.c — is a namespace the host's?  (See oci-spec.h.)
 *
 * A container must never join the host's network, IPC or UTS namespace
 * (or any other by path).  "The host's" is the initial namespace of that
 * kind.  Three views of it, any one enough to refuse:
 *  - the kernel's fixed inode numbers for the initial namespaces
 *    (0xEFFFFFF8-0xEFFFFFFF: mnt, net, time, cgroup, pid, user, uts, ipc;
 *    dynamically numbered namespaces start at 0xF0000000, so no other
 *    namespace can have one), on the nsfs device;
 *  - /proc/1/ns/KIND, pid 1's (EACCES on some machines, even as root);
 *  - /proc/2/ns/KIND when pid 2 is kthreadd (a kernel thread, parent 0):
 *    kernel threads live in the initial namespaces, and /proc/2 is
 *    kthreadd only when the caller sees the host's pid namespace.
 * The caller's own namespace is refused too (the caller is the runtime,
 * in the host's namespaces under containerd).  When neither pid 1's nor
 * kthreadd's can be read, the host's namespaces cannot be told apart
 * from a pod's: that fails closed.
 */
#include "oci-spec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PF_KTHREAD_FLAG 0x00200000UL

static const struct {
	const char *name;
	unsigned long ino;
} init_ino[] = {
	{ "ipc", 0xEFFFFFFFUL }, { "uts", 0xEFFFFFFEUL },    { "user", 0xEFFFFFFDUL },
	{ "pid", 0xEFFFFFFCUL }, { "cgroup", 0xEFFFFFFBUL }, { "time", 0xEFFFFFFAUL },
	{ "net", 0xEFFFFFF9UL }, { "mnt", 0xEFFFFFF8UL },
};

/* Pid 2 is kthreadd: parent 0 and PF_KTHREAD in /proc/2/stat. */
static int pid2_is_kthread(void)
{
	char buf[1024], *p;
	unsigned long flags = 0;
	ssize_t n;
	int fd = open("/proc/2/stat", O_RDONLY | O_CLOEXEC), field;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || strncmp(p, ") S 0 ", 6) != 0)
		return 0;
	/* fields: 3 state, 4 ppid, ..., 9 flags */
	for (field = 3, p += 2; *p && field < 9; p++) {
		if (*p == ' ')
			field++;
	}
	flags = strtoul(p, NULL, 10);
	return (flags & PF_KTHREAD_FLAG) != 0;
}

static int same(const struct stat *ns, const char *path, int *seen)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return 0;
	if (seen)
		(*seen)++;
	return st.st_dev == ns->st_dev && st.st_ino == ns->st_ino;
}

int cd_oci_ns_is_host(const struct stat *ns, const char *kind)
{
	char path[64];
	struct stat own;
	size_t i;
	int seen = 0, own_ok;

	snprintf(path, sizeof path, "/proc/self/ns/%s", kind);
	own_ok = stat(path, &own) == 0;
	if (own_ok && own.st_dev == ns->st_dev && own.st_ino == ns->st_ino)
		return 1;
	/* The fixed numbers hold on the nsfs device (the caller's own
	 * namespace file is on it). */
	for (i = 0; own_ok && i < sizeof init_ino / sizeof init_ino[0]; i++) {
		if (strcmp(kind, init_ino[i].name) == 0 && ns->st_dev == own.st_dev &&
		    (unsigned long)ns->st_ino == init_ino[i].ino)
			return 1;
	}
	snprintf(path, sizeof path, "/proc/1/ns/%s", kind);
	if (same(ns, path, &seen))
		return 1;
	snprintf(path, sizeof path, "/proc/2/ns/%s", kind);
	if (pid2_is_kthread() && same(ns, path, &seen))
		return 1;
	return seen ? 0 : -ENOENT;
}
