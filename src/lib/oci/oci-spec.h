/* oci-spec.h — an OCI runtime bundle's config.json, read strictly and
 * checked against what cordon allows (the OCI runtime, issue 20).
 *
 * Trust: config.json comes from the container manager (containerd, from
 * an image and a pod spec anyone who may schedule a pod writes): it is
 * untrusted input.  A field of the wrong type, a value out of range or a
 * request cordon does not grant (capabilities beyond containerd's default
 * set, the host's namespaces, a pid, user or mount namespace joined by
 * path, a missing namespace, devices beyond
 * the default ones) refuses the container with a one-line
 * reason.  Nothing the spec says widens cordon's walls: the capabilities
 * it asks for are dropped, its seccomp profile is a second filter under
 * cordon's (the stricter of the two applies), AppArmor and SELinux
 * labels are not applied (cordon's own allowlist and Landlock are), its
 * masked and read-only paths add to cordon's, never replace them.
 */
#ifndef CD_OCI_SPEC_H
#define CD_OCI_SPEC_H

#include "util/err.h"
#include "util/limits.h"
#include "sandbox/plan.h"

#include <stddef.h>
#include <stdint.h>

#define CD_OCI_MAX_MOUNTS 64
#define CD_OCI_MAX_ARGS   4096 /* entries of process.args and process.env each */

/* The namespaces a container may join by path (a Kubernetes pod's: its
 * sandbox container's network, IPC and UTS namespaces). */
enum cd_oci_ns { CD_OCI_NS_NET, CD_OCI_NS_IPC, CD_OCI_NS_UTS, CD_OCI_NS_N };

enum cd_oci_mount_use {
	CD_OCI_MNT_CORDON, /* /proc, /dev, /sys and the like: cordon builds its own */
	CD_OCI_MNT_BIND,   /* a host path bound */
	CD_OCI_MNT_TMPFS,  /* a fresh tmpfs */
};

struct cd_oci_mount {
	enum cd_oci_mount_use use;
	char *dest; /* absolute, normalized */
	char *src;  /* BIND: absolute host path (relative ones against the bundle) */
	int rw;     /* BIND: writable (no "ro" option) */
};

struct cd_oci_spec {
	char *root;  /* absolute host path of root.path */
	int root_rw; /* root.readonly false (cordon keeps it read-only anyway) */
	char **args; /* NULL-terminated, at least one entry */
	char **env;  /* NULL-terminated NAME=VALUE */
	size_t nenv;
	char *cwd; /* absolute */
	uint32_t uid, gid;
	int terminal;    /* process.terminal: a pty given to the manager (--console-socket) */
	uint64_t nofile; /* RLIMIT_NOFILE hard, 0 when not given */
	struct cd_oci_mount mounts[CD_OCI_MAX_MOUNTS];
	size_t nmounts;
	char *hostname;     /* NULL when not given */
	char *cgroups_path; /* NULL when not given */
	char *cgroup_at;    /* cgroupfs-style cgroupsPath, checked and absolute: where the
			     * container's cgroup is made; NULL: below cordon's own */
	uint64_t memory;    /* linux.resources.memory.limit, 0 when not given */
	uint64_t pids;      /* linux.resources.pids.limit, 0 when not given */
	uint64_t cpu_pct;   /* cpu quota / period in percent of one CPU, 0 when not given */
	char *agent, *policy, *task, *tool; /* annotations cordon.* (NULL when absent) */
	char *annotations;                  /* the annotations object as JSON text ("{}") */
	unsigned ncaps_dropped;             /* capabilities asked for and dropped */
	/* linux.namespaces[].path of network, ipc and uts (NULL: a new one).
	 * Not the host's (refused here); what the path names is checked when
	 * it is opened (cmd-oci-ns.c).  pid, user, mount, cgroup and time by
	 * path are refused. */
	char *ns_path[CD_OCI_NS_N];
	/* linux.seccomp, NULL when absent: stacked on cordon's filter, so it
	 * only narrows (a listener is refused). */
	struct cd_seccomp_profile *seccomp;
};

/* Parse and check config.json (`len` bytes) of the bundle at `bundle`
 * (absolute).  0 and *ret filled (free with cd_oci_spec_free), or
 * -CD_E_PARSE (malformed), -CD_E_DENIED (a request cordon refuses),
 * -ENOMEM, with err->msg saying which field and why. */
int cd_oci_spec_parse(const char *text, size_t len, const char *bundle, struct cd_oci_spec *ret,
                      struct cd_err *err);

void cd_oci_spec_free(struct cd_oci_spec *s);

struct stat;
/* Whether the namespace whose file is `ns` (stat of a /proc/PID/ns/KIND
 * or a bind-mounted copy; KIND as /proc names it: net, ipc, uts, pid,
 * mnt, user, cgroup, time) is the host's: the initial one of that kind
 * (the kernel's fixed inode numbers, pid 1's, kthreadd's) or the
 * caller's own.  1 the host's, 0 not, -ENOENT when the host's cannot be
 * read (neither pid 1's nor kthreadd's): the caller refuses then. */
int cd_oci_ns_is_host(const struct stat *ns, const char *kind);

/* The plan's options from a parsed spec: rootfs, argv, env, cwd,
 * hostname, binds and tmpfs directories (vectors allocated into *binds
 * and *tmpfs, freed by the caller with free()), limits from cordon's
 * defaults narrowed by the spec's resources; a container has no wall
 * clock and no output cap unless the operator sets them.  Fields of `po`
 * the spec has nothing to say about are left as they were. */
int cd_oci_plan_opts(const struct cd_oci_spec *s, struct cd_plan_opts *po, struct cd_limits *lim,
                     struct cd_plan_bind **binds, const char ***tmpfs, struct cd_err *err);

#endif
