/* cmd-oci-check.c — what `create` checks before any supervisor exists,
 * and the audit record of a container refused there (see cmd-oci.h).
 *
 * root.path: containerd puts the image's root at BUNDLE/rootfs (a mount
 * it makes there for this container); CRI-O and podman name an overlay
 * mount of their image store, STORE/overlay/LAYER/merged.  The image's
 * root is bound through an idmapped mount (its root-owned files read as
 * the container's own), so a root.path naming a host tree (/, /etc) or
 * another container's files (its rootfs, runc's state, the snapshotter's
 * layers of every image, all below the stores) would show the container
 * what is not its own.  The root must therefore resolve (symlinks
 * followed) to one of:
 *  - BUNDLE/rootfs;
 *  - a mount root (statx STATX_ATTR_MOUNT_ROOT) strictly below the bundle;
 *  - a mount root of the form STORE/overlay/LAYER/merged, STORE one of
 *    the CRI-O/podman stores below;
 *  - a directory strictly below one the operator names in
 *    CORDON_OCI_ROOTS (colon-separated; unset, none).
 * The resolved path is the one used from then on.
 */
#include "cli.h"
#include "cmd-oci.h"

#include "cli-audit.h"
#include "gate/gate.h"
#include "sandbox/sandbox.h"
#include "util/path.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define OCI_OVERLAY_STORES "/run/containers/storage:/var/lib/containers/storage"

/* `path` (canonical) strictly below `dir`, which is resolved first into
 * `d` (PATH_MAX). */
static int below_in(const char *path, const char *dir, char *d)
{
	return realpath(dir, d) && strcmp(d, "/") != 0 && strcmp(path, d) != 0 &&
	       cd_path_is_under(path, d);
}

static int below(const char *path, const char *dir)
{
	char d[PATH_MAX];

	return below_in(path, dir, d);
}

/* `path` (canonical, so no symlink in it) is the root of a mount; a
 * kernel that does not say is taken as "no". */
static int mount_root(const char *path)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx) < 0)
		return 0;
	return (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	       (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/* `path` is STORE/overlay/LAYER/merged for a directory of `stores`
 * (colon-separated), LAYER one name. */
static int overlay_merged(const char *path, const char *stores)
{
	char list[1024], d[PATH_MAX], *save = NULL, *s;
	const char *rel, *slash;

	snprintf(list, sizeof list, "%s", stores);
	for (s = strtok_r(list, ":", &save); s; s = strtok_r(NULL, ":", &save)) {
		if (!below_in(path, s, d))
			continue;
		rel = path + strlen(d) + 1;
		if (strncmp(rel, "overlay/", 8) != 0)
			continue;
		rel += 8;
		slash = strchr(rel, '/');
		if (slash && slash != rel && strcmp(slash, "/merged") == 0)
			return 1;
	}
	return 0;
}

/* `path` is strictly below a directory CORDON_OCI_ROOTS names. */
static int named_root(const char *path, const char *roots)
{
	char list[4096], *save = NULL, *d;

	snprintf(list, sizeof list, "%s", roots);
	for (d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (d[0] == '/' && below(path, d))
			return 1;
	}
	return 0;
}

static int root_allowed(const char *canon, const char *bundle, const char *roots,
                        struct cd_err *err, const char *given)
{
	char rootfs[PATH_MAX], b[PATH_MAX];

	if (realpath(bundle, b) &&
	    snprintf(rootfs, sizeof rootfs, "%s/rootfs", b) < (int)sizeof rootfs &&
	    strcmp(canon, rootfs) == 0)
		return 0;
	if (below(canon, bundle)) {
		if (mount_root(canon))
			return 0;
		if (!named_root(canon, roots))
			return cd_err_set(err, -CD_E_DENIED,
			                  "root.path %s (%s) is in the bundle but is neither "
			                  "BUNDLE/rootfs nor a mount made there for the container: "
			                  "cordon refuses it as a container's root",
			                  given, canon);
		return 0;
	}
	if ((overlay_merged(canon, OCI_OVERLAY_STORES) && mount_root(canon)) ||
	    named_root(canon, roots))
		return 0;
	return cd_err_set(err, -CD_E_DENIED,
	                  "root.path %s (%s) is outside the bundle, no CRI-O/podman overlay mount "
	                  "(STORE/overlay/LAYER/merged) and below no image store CORDON_OCI_ROOTS "
	                  "names (%s): cordon refuses a host tree or another container's files as "
	                  "a container's root",
	                  given, canon, *roots ? roots : "unset");
}

int oci_check_root(struct cd_oci_spec *spec, const char *bundle, struct cd_err *err)
{
	const char *roots = getenv("CORDON_OCI_ROOTS");
	char canon[PATH_MAX], *dup;
	struct stat st;

	if (!realpath(spec->root, canon) || stat(canon, &st) < 0)
		return cd_err_set(err, -CD_E_DENIED, "root.path %s: %s", spec->root,
		                  cd_strerror(-errno));
	if (!S_ISDIR(st.st_mode))
		return cd_err_set(err, -CD_E_DENIED, "root.path %s is not a directory", spec->root);
	if (root_allowed(canon, bundle, roots ? roots : "", err, spec->root) < 0)
		return -CD_E_DENIED;
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
