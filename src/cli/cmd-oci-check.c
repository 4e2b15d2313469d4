/* cmd-oci-check.c — what `create` checks before any supervisor exists,
 * and the audit record of a container refused there (see cmd-oci.h).
 *
 * root.path: containerd puts the image's root at BUNDLE/rootfs; CRI-O
 * and podman name a directory of their image store outside the bundle.
 * The image's root is bound through an idmapped mount (its root-owned
 * files read as the container's own), so a root.path naming a host tree
 * (/, /etc, /root) would show the container every root-owned secret in
 * it.  The root must therefore resolve (symlinks followed) to a directory
 * strictly below the bundle, or below one of the image stores the
 * operator names in CORDON_OCI_ROOTS (colon-separated; default the
 * containerd, CRI-O and podman stores below).  The resolved path is the
 * one used from then on.
 */
#include "cli.h"
#include "cmd-oci.h"

#include "cli-audit.h"
#include "gate/gate.h"
#include "sandbox/sandbox.h"
#include "util/path.h"
#include "util/util.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define OCI_ROOTS_DEFAULT                                                                          \
	"/run/containerd:/var/lib/containerd:/run/containers/storage:/var/lib/containers/storage"

/* `path` (canonical) strictly below `dir`, which is resolved first. */
static int below(const char *path, const char *dir)
{
	char d[PATH_MAX];

	return realpath(dir, d) && strcmp(d, "/") != 0 && strcmp(path, d) != 0 &&
	       cd_path_is_under(path, d);
}

int oci_check_root(struct cd_oci_spec *spec, const char *bundle, struct cd_err *err)
{
	const char *roots = getenv("CORDON_OCI_ROOTS");
	char canon[PATH_MAX], list[4096], *save = NULL, *d, *dup;
	struct stat st;

	if (!realpath(spec->root, canon) || stat(canon, &st) < 0)
		return cd_err_set(err, -CD_E_DENIED, "root.path %s: %s", spec->root,
		                  cd_strerror(-errno));
	if (!S_ISDIR(st.st_mode))
		return cd_err_set(err, -CD_E_DENIED, "root.path %s is not a directory", spec->root);
	if (!roots || !*roots)
		roots = OCI_ROOTS_DEFAULT;
	if (!below(canon, bundle)) {
		snprintf(list, sizeof list, "%s", roots);
		for (d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			if (d[0] == '/' && below(canon, d))
				break;
		}
		if (!d)
			return cd_err_set(
			        err, -CD_E_DENIED,
			        "root.path %s (%s) is outside the bundle and the image "
			        "stores cordon-oci takes roots from (CORDON_OCI_ROOTS: %s): "
			        "cordon refuses a host tree as a container's root",
			        spec->root, canon, roots);
	}
	dup = strdup(canon);
	if (!dup)
		return cd_err_set(err, -ENOMEM, "out of memory");
	free(spec->root);
	spec->root = dup;
	return 0;
}

int oci_check_cgroup(const struct cd_oci_spec *spec, struct cd_err *err)
{
	static const char *const hier[] = { "memory", "pids", "cpu", "cpuacct", "freezer" };
	char path[PATH_MAX];
	struct stat st;
	size_t i;

	for (i = 0; spec->cgroup_at && i < sizeof hier / sizeof hier[0]; i++) {
		if (snprintf(path, sizeof path, "/sys/fs/cgroup/%s%s", hier[i], spec->cgroup_at) <
		            (int)sizeof path &&
		    lstat(path, &st) == 0)
			return cd_err_set(err, -CD_E_DENIED,
			                  "linux.cgroupsPath %s exists already in the %s hierarchy "
			                  "(another's cgroup): cordon places a container only in a "
			                  "cgroup it makes",
			                  spec->cgroup_at, hier[i]);
	}
	return 0;
}

void oci_record_denial(const struct oci_ctr *c, struct cd_audit *open, const char *at,
                       const char *action, json_t *args, const char *reason)
{
	struct cd_err err = { 0, "" };
	struct cd_audit *audit = open;
	struct cd_record rec;
	char run_id[CD_RUN_ID_LEN + 1], *details;
	json_t *d;

	oci_env_defaults();
	if (cd_run_id_new(run_id) < 0 || (!audit && cli_audit_open(NULL, &audit) < 0))
		return; /* cli_audit_open said why; the refusal stands */
	d = json_pack("{s:{s:s,s:s?,s:s,s:O?}}", "oci", "id", c->id, "bundle", c->bundle,
	              "refused_at", at, "args", args);
	details = d ? json_dumps(d, JSON_COMPACT) : NULL;
	json_decref(d);
	memset(&rec, 0, sizeof rec);
	rec.kind = "decision";
	rec.run_id = run_id;
	rec.tool = "container";
	rec.action = action;
	rec.target = c->bundle ? c->bundle : c->id;
	rec.decision = "deny";
	rec.reason = reason;
	rec.details_json = details;
	if (cd_audit_append(audit, &rec, NULL, &err) < 0)
		oci_errorf("audit log: %s", err.msg);
	free(details);
	if (audit != open)
		cd_audit_close(audit);
}

void oci_record_refusal(const struct oci_ctr *c, struct cd_audit *open, const char *reason)
{
	oci_record_denial(c, open, "create", "execute", NULL, reason);
}
