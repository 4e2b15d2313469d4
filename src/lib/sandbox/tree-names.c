/* tree-names.c — the names the walk of the bound trees (tree-scan.c)
 * and the check after the run (tree-planted.c) know: files the host runs
 * on its own, by name at any depth or by a path's tail; a git
 * directory's objects/info; and the same names in a casefolded directory,
 * where the kernel, not strcmp, says which entry a name is. */
#include "tree-scan-int.h"

#include "util/bounds.h"
#include "profile.h"
#include "util/util.h"

#include <fcntl.h>
#include <stdio.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

int cd_tree_is_host_run(const char *name)
{
	size_t i;

	/* the first letters of cd_host_run_names: most names cost one compare */
	if (name[0] != '.' && name[0] != 'a' && name[0] != 'b' && name[0] != 'e' &&
	    name[0] != 'g' && name[0] != 'l' && name[0] != 'm' && name[0] != 'p' && name[0] != 'r')
		return 0;
	for (i = 0; cd_host_run_names[i]; i++) {
		if (!strcmp(name, cd_host_run_names[i]))
			return 1;
	}
	return 0;
}

static void fold_add(int dfd, struct fold *f, const char *name)
{
	struct stat st;

	if (f->n < FOLD_MAX && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		f->ino[f->n] = st.st_ino;
		f->name[f->n++] = name;
	}
}

/* Names the walk and the check after the run compare (the last component
 * of each path pattern, and the directories those pass through). */
static const char *const fold_extra[] = {
	"HEAD",  "objects",   "alternates", ".env",         ".ssh",    ".docker", ".kube",
	".aws",  ".azure",    ".config",    "gcloud",       "gh",      "git",     ".cargo",
	".venv", "bin",       ".mise",      "gradle",       "wrapper", ".hg",     ".gem",
	".m2",   ".composer", ".pulumi",    ".terraform.d", ".yarn",   NULL,
};

/* Can this kernel have a casefolded directory at all?  Only with
 * CONFIG_UNICODE, which ext4, f2fs and tmpfs announce as a "casefold"
 * feature; bcachefs's own; without a sysfs to ask, assume it can.  Asked
 * once: then most walks spend no ioctl a directory (this host: none). */
static int casefold_possible(void)
{
	static int possible = -1; /* a race only writes the same answer twice */

	if (possible < 0)
		possible = access("/sys/fs/ext4/features/casefold", F_OK) == 0 ||
		           access("/sys/fs/f2fs/features/casefold", F_OK) == 0 ||
		           access("/sys/fs/tmpfs/features/casefold", F_OK) == 0 ||
		           access("/sys/fs/bcachefs", F_OK) == 0 ||
		           access("/sys/fs/ext4/features", F_OK) != 0;
	return possible;
}

/* Is dfd a casefolded directory (or force)?  Then *ret (unless NULL)
 * holds the inodes of the names the walk knows, as the kernel finds them
 * there.  1 if so, 0 if not. */
int cd_tree_fold_probe(int dfd, int force, struct fold *ret)
{
	const char *const *const tables[] = { cd_host_run_names,   cd_git_control_names,
		                              cd_credential_files, cd_host_run_paths,
		                              fold_extra,          cd_host_reported_names };
	unsigned flags = 0;
	size_t t, i;

	if (!force && (!casefold_possible() || ioctl(dfd, FS_IOC_GETFLAGS, &flags) < 0 ||
	               !(flags & FS_CASEFOLD_FL)))
		return 0;
	if (!ret)
		return 1;
	ret->n = 0;
	for (t = 0; t < CD_ARRAY_SIZE(tables); t++) {
		for (i = 0; tables[t][i]; i++) {
			const char *slash = strrchr(tables[t][i], '/');

			if (tables[t][i][0] != '*')
				fold_add(dfd, ret, slash ? slash + 1 : tables[t][i]);
		}
	}
	return 1;
}

/* The known name an entry (ino, name) of a casefolded directory is,
 * or name itself. */
const char *cd_tree_fold_name(const struct fold *f, ino_t ino, const char *name)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		if (f->ino[i] == ino)
			return f->name[i];
	}
	return name;
}

/* Is name the last component of one of cd_host_run_paths? */
int cd_tree_host_run_base(const char *name)
{
	size_t i;

	for (i = 0; cd_host_run_paths[i]; i++) {
		if (!strcmp(name, strrchr(cd_host_run_paths[i], '/') + 1))
			return 1;
	}
	return 0;
}

/* Is path (len bytes, ending in name) one of cd_host_run_paths? */
int cd_tree_host_run_path(const char *path, size_t len, const char *name)
{
	size_t i;

	if (name[0] != 'a' && name[0] != 'c' && name[0] != 'g' && name[0] != 'h' &&
	    name[0] != 'm' && name[0] != 'p' && name[0] != 'r' && name[0] != 's' && name[0] != 'A')
		return 0;
	for (i = 0; cd_host_run_paths[i]; i++) {
		const char *base = strrchr(cd_host_run_paths[i], '/') + 1;

		if (!strcmp(name, base) && cd_tree_suffix_is(path, len, cd_host_run_paths[i]))
			return 1;
	}
	return 0;
}

/* Is path (len bytes, writable) the objects/info directory of a git
 * directory?  A new alternates file there makes the host's git read
 * another object store: the walk pins one that exists, the check after
 * the run reports a new one. */
int cd_tree_objects_info(char *path, size_t len)
{
	size_t tl = sizeof "/objects/info" - 1;
	int gd;

	if (len <= tl || memcmp(path + len - tl, "/objects/info", tl) != 0)
		return 0;
	path[len - tl] = '\0';
	gd = cd_tree_is_gitdir(path);
	path[len - tl] = '/';
	return gd;
}

/* The last component of path (len bytes): its start, *ret_len its length. */
static const char *last_comp(const char *path, size_t len, size_t *ret_len)
{
	size_t i = len;

	while (i > 0 && path[i - 1] != '/')
		i--;
	*ret_len = len - i;
	return path + i;
}

static int comp_is(const char *c, size_t cl, const char *s)
{
	return cl == strlen(s) && memcmp(c, s, cl) == 0;
}

/* Is path (len bytes) a Python site directory, lib/python3.X/site-packages
 * (lib64/, pypy3.X/, Debian's dist-packages too)? */
static int site_dir(const char *path, size_t len)
{
	size_t cl;
	const char *c = last_comp(path, len, &cl);

	if (!comp_is(c, cl, "site-packages") && !comp_is(c, cl, "dist-packages"))
		return 0;
	if ((len = (size_t)(c - path)) < 2)
		return 0;
	c = last_comp(path, len - 1, &cl);
	if (!(cl > 6 && !memcmp(c, "python", 6)) && !(cl > 4 && !memcmp(c, "pypy", 4)))
		return 0;
	if ((len = (size_t)(c - path)) < 2)
		return 0;
	c = last_comp(path, len - 1, &cl);
	return comp_is(c, cl, "lib") || comp_is(c, cl, "lib64");
}

/* sitecustomize or usercustomize as the import system finds a module:
 * NAME.py, NAME.pyc, a package NAME/, an extension NAME.*.so. */
static int customize_name(const char *name)
{
	return (!strncmp(name, "sitecustomize", 13) && (!name[13] || name[13] == '.')) ||
	       (!strncmp(name, "usercustomize", 13) && (!name[13] || name[13] == '.'));
}

int cd_tree_python_name(const char *name)
{
	size_t nl = strlen(name);

	return !strcmp(name, "bin") || (nl > 4 && !strcmp(name + nl - 4, ".pth")) ||
	       customize_name(name) || !strcmp(name, "__pycache__");
}

/* Does a Python interpreter on the host run the entry `name` of the
 * directory dfd (path, len bytes, ends in "/name") at its start, before
 * any script: a *.pth file of a site directory (its import lines run even
 * under -I, which editors use to ask a virtualenv's python about itself;
 * the modules they import: tree-targets.c), sitecustomize and
 * usercustomize there, and its __pycache__ (the compiled form of those,
 * which the import system takes when its header matches the source's
 * size and time); or the bin directory of a virtualenv (a directory with
 * a pyvenv.cfg, whatever its name), which `activate` puts first on PATH? */
int cd_tree_python_run(int dfd, const char *path, size_t len, const char *name)
{
	size_t nl = strlen(name), dl = len - nl - 1;
	char cfg[CD_PATH_MAX];
	struct stat st;
	int n;

	if (len <= nl)
		return 0;
	if (!strcmp(name, "bin")) {
		if (dfd >= 0)
			return fstatat(dfd, "pyvenv.cfg", &st, AT_SYMLINK_NOFOLLOW) == 0;
		n = snprintf(cfg, sizeof cfg, "%.*s/pyvenv.cfg", (int)dl, path);
		return n < 0 || (size_t)n >= sizeof cfg || lstat(cfg, &st) == 0;
	}
	if ((nl > 4 && !strcmp(name + nl - 4, ".pth")) || customize_name(name) ||
	    !strcmp(name, "__pycache__"))
		return site_dir(path, dl);
	return 0;
}

/* Is name one of cd_host_reported_names? */
int cd_tree_is_reported(const char *name)
{
	size_t i;

	if (name[0] != '.' || name[1] != 'p')
		return 0;
	for (i = 0; cd_host_reported_names[i]; i++) {
		if (!strcmp(name, cd_host_reported_names[i]))
			return 1;
	}
	return 0;
}
