/* plan-rootfs.c — an image's root as the sandbox's filesystem (see
 * cd_plan_opts.rootfs): the OCI runtime's bundle root, later `cordon run
 * --rootfs`.
 *
 * The sandbox's root stays cordon's own small tmpfs; each top-level entry
 * of the image is bound read-only onto it (a symlink recreated as the same
 * symlink), so cordon's /proc, /dev and /tmp and every mount point live on
 * that tmpfs and nothing is ever created in the image.  The child opens
 * every source without following symlinks (an entry swapped for one since
 * refuses the run), and every bind is nosuid and nodev.
 */
#include "plan-int.h"

#include "util/bounds.h"
#include "util/path.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Top-level names cordon builds itself. */
static int reserved(const char *name)
{
	static const char *const names[] = { ".", "..", "proc", "dev", "sys", "tmp" };
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (strcmp(name, names[i]) == 0)
			return 1;
	}
	return 0;
}

static int add_entry(struct cd_plan *p, const char *root, const char *name, struct cd_err *err)
{
	char src[CD_PATH_MAX], dest[CD_PATH_MAX], target[CD_PATH_MAX];
	struct stat st;
	ssize_t n;

	if (snprintf(src, sizeof src, "%s/%s", root, name) >= (int)sizeof src ||
	    snprintf(dest, sizeof dest, "/%s", name) >= (int)sizeof dest)
		return cd_err_set(err, -ENAMETOOLONG, "root '%s': a name too long", root);
	if (lstat(src, &st) < 0)
		return cd_err_sys(err, -errno, "root '%s': entry '%s'", root, name);
	if (S_ISLNK(st.st_mode)) {
		n = readlink(src, target, sizeof target - 1);
		if (n < 0)
			return cd_err_sys(err, -errno, "root '%s': link '%s'", root, name);
		target[n] = '\0';
		return cd_plan_mount_add(p, CD_MNT_SYMLINK, 0, target, dest, NULL, err);
	}
	/* Device nodes, fifos and sockets at the top of an image have no use
	 * and are left out. */
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return 0;
	return cd_plan_mount_add(p, CD_MNT_BIND, 0, src, dest, NULL, err);
}

int cd_plan_add_rootfs(struct cd_plan *p, const char *rootfs, const char *image, struct cd_err *err)
{
	char root[CD_PATH_MAX];
	struct dirent **names = NULL;
	struct stat st;
	int n, i, r = 0;

	r = cd_path_canonical(rootfs, root, sizeof root);
	if (r < 0)
		return cd_err_sys(err, r, "root '%s'", rootfs);
	if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode))
		return cd_err_set(err, -CD_E_USAGE, "root '%s' is not a directory", rootfs);
	if (strcmp(root, "/") == 0)
		return cd_err_set(err, -CD_E_USAGE,
		                  "root '%s' is the host's own root: give an image's root", rootfs);
	/* The image's description (cordon run --image) shares rootfs's block:
	 * cd_plan_free frees rootfs alone. */
	p->rootfs = malloc(strlen(root) + 1 + (image ? strlen(image) + 1 : 0));
	if (!p->rootfs)
		return cd_err_set(err, -ENOMEM, "out of memory");
	memcpy(p->rootfs, root, strlen(root) + 1);
	if (image)
		p->image = memcpy(p->rootfs + strlen(root) + 1, image, strlen(image) + 1);
	n = scandir(root, &names, NULL, alphasort);
	if (n < 0)
		return cd_err_sys(err, -errno, "root '%s'", root);
	for (i = 0; i < n; i++) {
		if (r == 0 && !reserved(names[i]->d_name))
			r = add_entry(p, root, names[i]->d_name, err);
		free(names[i]);
	}
	free(names);
	return r;
}

int cd_plan_add_tmpfs(struct cd_plan *p, const struct cd_plan_opts *o, size_t first,
                      struct cd_err *err)
{
	char dest[CD_PATH_MAX];
	size_t i, j;
	int r;

	for (i = 0; i < o->ntmpfs; i++) {
		if (cd_path_normalize(o->tmpfs_dirs[i], dest, sizeof dest) < 0 ||
		    strcmp(dest, "/") == 0 || cd_path_is_under(dest, "/proc") ||
		    cd_path_is_under(dest, "/dev"))
			return cd_err_set(err, -CD_E_USAGE,
			                  "tmpfs at '%s': an absolute path, not '/', /proc or /dev",
			                  o->tmpfs_dirs[i]);
		for (j = first; j < p->nmounts; j++) {
			if (strcmp(p->mounts[j].dest, dest) == 0)
				return cd_err_set(err, -CD_E_USAGE, "two mounts at '%s'", dest);
		}
		r = cd_plan_mount_add(p, CD_MNT_TMPFS, CD_MNT_RW, NULL, dest, NULL, err);
		if (r < 0)
			return r;
		p->mounts[p->nmounts - 1].size = p->limits.scratch_size;
		p->mounts[p->nmounts - 1].mode = 0755;
	}
	return 0;
}
