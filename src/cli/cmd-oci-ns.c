/* cmd-oci-ns.c — the container's network, IPC and UTS namespaces, made
 * or joined by the supervisor itself (see cmd-oci.h).
 *
 * Why the supervisor: containerd's CRI plugin names a pod's namespaces
 * by the sandbox ("pause") container's pid, /proc/PID/ns/{net,ipc,uts},
 * and that pid is the one in --pid-file: cordon's supervisor.  So, when
 * cordon-oci runs as root (as under containerd), the supervisor enters
 * the container's namespaces before `create` returns: it joins the ones
 * the spec gives by path (a pod's), makes the others (owned by the
 * host's user namespace, so the container, in a user namespace of its
 * own, holds no capability over them: it cannot reconfigure its network
 * or hostname), brings a new network namespace's loopback up and sets a
 * new UTS namespace's hostname.  The sandbox is then cloned into them
 * (cd_sandbox_io.inherit_ns), and another container's spec naming
 * /proc/SUPERVISOR/ns/... joins this container's.
 *
 * Trust: the paths come from config.json.  Each is opened without
 * blocking (O_PATH first), must be a namespace file (nsfs) of the type
 * named, and must not be the host's (cd_oci_ns_is_host: the initial
 * namespace, seen through the kernel's fixed numbers, pid 1 or kthreadd,
 * or the supervisor's own before it moved); the open fd is what is
 * joined, so a path that changes
 * later changes nothing.  A rootless cordon-oci cannot join namespaces
 * the host's user namespace owns (setns needs CAP_SYS_ADMIN there): it
 * refuses namespaces by path and keeps the sandbox's own, as before.
 */
#include "cli.h"
#include "cmd-oci.h"

#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

static const struct {
	const char *type, *proc;
	int flag;
} ns_kind[CD_OCI_NS_N] = {
	[CD_OCI_NS_NET] = { "network", "net", CLONE_NEWNET },
	[CD_OCI_NS_IPC] = { "ipc", "ipc", CLONE_NEWIPC },
	[CD_OCI_NS_UTS] = { "uts", "uts", CLONE_NEWUTS },
};

/* Open the namespace file at `path` for setns, checked.  The fd, or -1
 * with err saying why. */
static int open_ns(size_t k, const char *path, struct cd_err *err)
{
	char via[64];
	struct statfs sf;
	struct stat st;
	int pfd, fd = -1, host = -1;

	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0) {
		cd_err_set(err, -CD_E_DENIED, "linux.namespaces %s: cannot open %s: %s",
		           ns_kind[k].type, path, cd_strerror(-errno));
		return -1;
	}
	if (fstatfs(pfd, &sf) < 0 || sf.f_type != NSFS_MAGIC) {
		cd_err_set(err, -CD_E_DENIED, "linux.namespaces %s: %s is not a namespace",
		           ns_kind[k].type, path);
		close(pfd);
		return -1;
	}
	snprintf(via, sizeof via, "/proc/self/fd/%d", pfd);
	fd = open(via, O_RDONLY | O_CLOEXEC);
	close(pfd);
	if (fd < 0 || ioctl(fd, NS_GET_NSTYPE) != ns_kind[k].flag) {
		cd_err_set(err, -CD_E_DENIED, "linux.namespaces %s: %s is not a %s namespace",
		           ns_kind[k].type, path, ns_kind[k].type);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fstat(fd, &st) < 0 || (host = cd_oci_ns_is_host(&st, ns_kind[k].proc)) != 0) {
		cd_err_set(err, -CD_E_DENIED,
		           host > 0 ? "cordon refuses host namespaces: linux.namespaces %s joins "
		                      "the host's (%s)"
		                    : "linux.namespaces %s joins %s: the host's namespaces cannot "
		                      "be read here (neither pid 1's nor kthreadd's): refused",
		           ns_kind[k].type, path);
		close(fd);
		return -1;
	}
	return fd;
}

static int loopback_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof ifr);
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		r = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (r == 0 && ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		r = -errno;
	close(s);
	return r;
}

int oci_ns_enter(const struct cd_oci_spec *spec, unsigned *inherit, struct cd_err *err)
{
	int fd[CD_OCI_NS_N] = { -1, -1, -1 }, fresh = 0, rc = -1, r;
	const char *host = spec->hostname && *spec->hostname ? spec->hostname : "cordon";
	size_t k;

	*inherit = 0;
	if (geteuid() != 0) {
		for (k = 0; k < CD_OCI_NS_N; k++) {
			if (spec->ns_path[k]) {
				cd_err_set(err, -CD_E_DENIED,
				           "linux.namespaces %s joins %s: joining a pod's "
				           "namespaces needs cordon-oci to run as root (as under "
				           "containerd)",
				           ns_kind[k].type, spec->ns_path[k]);
				return -1;
			}
		}
		return 0; /* the sandbox makes its own, in its user namespace */
	}
	for (k = 0; k < CD_OCI_NS_N; k++) {
		if (!spec->ns_path[k])
			fresh |= ns_kind[k].flag;
		else if ((fd[k] = open_ns(k, spec->ns_path[k], err)) < 0)
			goto out;
	}
	if (fresh && unshare(fresh) < 0) {
		cd_err_set(err, -CD_E_DENIED, "cannot make the container's namespaces: %s",
		           cd_strerror(-errno));
		goto out;
	}
	for (k = 0; k < CD_OCI_NS_N; k++) {
		if (fd[k] >= 0 && setns(fd[k], ns_kind[k].flag) < 0) {
			cd_err_set(err, -CD_E_DENIED, "linux.namespaces %s: cannot join %s: %s",
			           ns_kind[k].type, spec->ns_path[k], cd_strerror(-errno));
			goto out;
		}
	}
	if ((fresh & CLONE_NEWUTS) && sethostname(host, strlen(host)) < 0) {
		cd_err_set(err, -CD_E_DENIED, "cannot set the container's hostname: %s",
		           cd_strerror(-errno));
		goto out;
	}
	if ((fresh & CLONE_NEWNET) && (r = loopback_up()) < 0) {
		cd_err_set(err, -CD_E_DENIED, "cannot bring up the container's loopback: %s",
		           cd_strerror(r));
		goto out;
	}
	*inherit = CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
	rc = 0;
out:
	for (k = 0; k < CD_OCI_NS_N; k++) {
		if (fd[k] >= 0)
			close(fd[k]);
	}
	return rc;
}
