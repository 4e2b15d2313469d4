/* oci-plan.c — a checked config.json as the sandbox plan's options (see
 * oci-spec.h): the image's root, the process, the binds and tmpfs
 * directories, the limits.  cordon's walls are the plan's own and cannot
 * be named here; the spec only narrows the limits.
 */
#include "oci-spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t narrower(uint64_t cordon, uint64_t spec)
{
	if (!spec)
		return cordon;
	return (!cordon || spec < cordon) ? spec : cordon;
}

int cd_oci_plan_opts(const struct cd_oci_spec *s, struct cd_plan_opts *po, struct cd_limits *lim,
                     struct cd_plan_bind **binds, const char ***tmpfs, struct cd_err *err)
{
	size_t i, nb = 0, nt = 0;

	*binds = calloc(s->nmounts + 1, sizeof **binds);
	*tmpfs = calloc(s->nmounts + 1, sizeof **tmpfs);
	if (!*binds || !*tmpfs)
		return cd_err_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < s->nmounts; i++) {
		const struct cd_oci_mount *m = &s->mounts[i];

		if (m->use == CD_OCI_MNT_BIND) {
			(*binds)[nb].src = m->src;
			(*binds)[nb].dest = m->dest;
			(*binds)[nb++].rw = m->rw;
		} else if (m->use == CD_OCI_MNT_TMPFS) {
			(*tmpfs)[nt++] = m->dest;
		}
	}
	po->rootfs = s->root;
	po->inside_cwd = s->cwd;
	po->argv = s->args;
	po->env = s->env;
	po->nenv = s->nenv;
	po->hostname = s->hostname;
	po->binds = *binds;
	po->nbinds = nb;
	/* The spec's binds are host paths the pod's author named, not the
	 * operator's own trees: never idmapped to the caller (root), so the
	 * container reaches them only as its own unprivileged host id. */
	po->binds_plain = 1;
	/* A pod's network namespace (given by path) is CNI's, with a route
	 * out: UDP there would leave the host, and Landlock confines TCP
	 * only.  No IP sockets at all, as in cordon's empty one. */
	po->no_inet = s->ns_path[CD_OCI_NS_NET] != NULL;
	po->seccomp_profile = s->seccomp;
	po->tmpfs_dirs = *tmpfs;
	po->ntmpfs = nt;
	/* A container is a service: no wall clock, no output cap.  Memory
	 * and processes: the spec's when it is narrower than cordon's. */
	cd_limits_default(lim);
	lim->timeout_ms = 0;
	lim->output_limit = 0;
	lim->memory = s->memory ? s->memory : lim->memory;
	lim->pids = s->pids ? s->pids : lim->pids;
	lim->cpu_quota_pct = s->cpu_pct;
	lim->nofile = narrower(lim->nofile, s->nofile);
	po->limits = lim;
	return 0;
}
