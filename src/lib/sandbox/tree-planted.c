/* tree-planted.c — after the run: the git control paths and files the
 * host runs on its own that appeared in a writable tree (the working tree
 * of workspace-write, --rw directories), found by re-reading only the
 * directories whose ctime moved since the walk stamped them; and the
 * check of the plan against the kernel's mount limit. */
#include "tree-scan-int.h"

#include "util/bounds.h"
#include "util/path.h"
#include "profile.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int in_list(char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strcmp(v[i], s))
			return 1;
	}
	return 0;
}

static int known_dir(const struct cd_plan *p, size_t tree, const char *rel)
{
	struct cd_dir_stamp key = { (char *)rel, tree, 0, 0 };

	return bsearch(&key, p->dirs, p->ndirs, sizeof *p->dirs, cd_tree_stamp_cmp) != NULL;
}

static int name_in(const char *name, const char *const *names)
{
	size_t i;

	for (i = 0; names[i]; i++) {
		if (!strcmp(name, names[i]))
			return 1;
	}
	return 0;
}

/* A directory whose entries changed during the run: its new host-run
 * names and git control paths are candidates, its new subdirectories are
 * walked whole; one that became a git directory is reported itself. */
static int reread(struct walk *w, size_t len, const struct cd_dir_stamp *ds)
{
	const struct cd_plan *p = w->p;
	int gd = cd_tree_is_gitdir(w->path), r = 0, fd;
	struct dirent *e;
	DIR *d = opendir(w->path);

	if (!d)
		return errno == ENOENT || errno == ENOTDIR
		               ? 0 /* gone: its parent changed too */
		               : cd_tree_list_add_why(w, ds->rel, WHY_UNREADABLE);
	if (gd && !ds->gitdir)
		r = cd_tree_list_add_why(w, ds->rel, WHY_BECAME_GIT);
	while (r == 0 && (e = readdir(d))) {
		size_t nl = strlen(e->d_name);
		struct stat st;

		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if (len + 1 + nl + 1 >= sizeof w->path)
			continue; /* the walk refused such trees before the run */
		w->path[len] = '/';
		memcpy(w->path + len + 1, e->d_name, nl + 1);
		if (cd_tree_is_host_run(e->d_name) ||
		    (gd && name_in(e->d_name, cd_git_control_names)))
			r = cd_tree_list_add(w, w->path);
		/* a new .git is reported whole, its insides need no look */
		if (r == 0 && strcmp(e->d_name, ".git") != 0 &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode) && !known_dir(p, w->tree, w->path + w->srclen + 1)) {
			fd = openat(dirfd(d), e->d_name,
			            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				r = cd_tree_walk_dir(w, fd, len + 1 + nl, 1);
			else if (errno != ENOENT)
				r = cd_tree_list_add_why(w, w->path + w->srclen + 1,
				                         WHY_UNREADABLE);
		}
		w->path[len] = '\0';
	}
	closedir(d);
	return r;
}

/* Only the directories whose ctime moved since the walk (or that changed
 * just before it, within the timestamps' granularity) are read; every git
 * directory's HEAD is read too (a write in place moves no directory's
 * ctime). */
static int changed_dirs(struct walk *w)
{
	const struct cd_plan *p = w->p;
	const char *root = w->src;
	size_t i;
	int r = 0, top = open(root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (top < 0)
		return errno == ENOENT || errno == ENOTDIR
		               ? 0 /* gone, or a file bound by itself: no tree to check */
		               : cd_tree_list_add_why(w, "", WHY_UNREADABLE);
	for (i = 0; i < p->ndirs && r == 0; i++) {
		const struct cd_dir_stamp *ds = &p->dirs[i];
		struct stat st;
		int n;

		if (ds->tree != w->tree)
			continue;
		/* relative to the tree's top: no lookup of its own path each time */
		if (fstatat(top, ds->rel, &st, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue; /* gone or replaced: its parent changed */
		n = snprintf(w->path, sizeof w->path, "%s%s%s", w->srclen ? root : "",
		             ds->rel[0] || !w->srclen ? "/" : "", ds->rel);
		if (n < 0 || (size_t)n >= sizeof w->path)
			continue;
		if (ds->gitdir && !cd_tree_head_parses(w->path) &&
		    (r = cd_tree_list_add_why(w, ds->rel, WHY_BAD_HEAD)) < 0)
			break;
		if (cd_tree_ctime_ns(&st) == ds->ctime_ns &&
		    ds->ctime_ns < p->scan_ns - STAMP_GUARD_NS)
			continue;
		r = reread(w, (size_t)n, ds);
	}
	close(top);
	return r;
}

/* "ABS\0WHY" as the record shows it: relative to the working directory
 * when below it ("." for itself). */
static char *shown(const struct cd_plan *p, char *abs)
{
	size_t cl = strlen(p->cwd), al = strlen(abs), wl = strlen(abs + al + 1);
	const char *rel;
	char *s;

	if (!cd_path_is_under(abs, p->cwd))
		return abs;
	rel = al == cl ? "." : abs + cl + (strcmp(p->cwd, "/") != 0);
	if (!(s = malloc(strlen(rel) + wl + 2)))
		return NULL;
	memcpy(s, rel, strlen(rel) + 1);
	memcpy(s + strlen(rel) + 1, abs + al + 1, wl + 1);
	free(abs);
	return s;
}

int cd_plan_planted(const struct cd_plan *p, char ***ret, size_t *ret_n, struct cd_err *err)
{
	struct cd_plan_opts o;
	struct walk *w;
	char **now = NULL, **out = NULL;
	size_t nnow = 0, nout = 0, i, t;
	int r = 0;

	memset(&o, 0, sizeof o);
	if (!(w = calloc(1, sizeof *w)))
		return cd_err_set(err, -ENOMEM, "out of memory");
	w->p = (struct cd_plan *)p;
	w->o = &o;
	w->err = err;
	w->protect = 1;
	w->list_only = 1;
	w->list = &now;
	w->nlist = &nnow;
	/* every tree the sandbox could write, the working tree and --rw ones */
	for (t = 0; r >= 0 && t < p->ntrees; t++) {
		const char *root = p->trees[t].root;

		w->src = w->dest = root;
		w->srclen = strcmp(root, "/") ? strlen(root) : 0;
		w->tree = t;
		r = p->trees[t].complete ? changed_dirs(w) : cd_tree_walk_tree(w, root, root);
	}
	cd_tree_walk_free(w);
	for (i = 0; r >= 0 && i < nnow; i++) {
		char **v;

		const char *why = now[i] + strlen(now[i]) + 1;

		/* known before; a HEAD or a directory's mode is checked each time */
		if (strcmp(why, WHY_BAD_HEAD) && strcmp(why, WHY_UNREADABLE) &&
		    in_list(p->host_run, p->nhost_run, now[i]))
			continue;
		if (!(v = realloc(out, (nout + 1) * sizeof *v)) || !(v[nout] = shown(p, now[i]))) {
			if (v)
				out = v;
			r = cd_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		out = v;
		nout++;
		now[i] = NULL;
	}
	for (i = 0; i < nnow; i++)
		free(now[i]);
	free(now);
	if (r < 0) {
		for (i = 0; i < nout; i++)
			free(out[i]);
		free(out);
		return r;
	}
	*ret = out;
	*ret_n = nout;
	return 0;
}

static long read_long(const char *path, long dflt)
{
	char buf[32];
	ssize_t n;
	long v = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), i;

	if (fd < 0)
		return dflt;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return dflt;
	for (i = 0; i < n && buf[i] >= '0' && buf[i] <= '9' && v < 1000000000L; i++)
		v = v * 10 + (buf[i] - '0');
	return i ? v : dflt;
}

/* Mounts of our namespace, which the sandbox's new one copies. */
static long count_mounts(void)
{
	char buf[16384];
	ssize_t n;
	long lines = 0;
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		ssize_t i;
		for (i = 0; i < n; i++)
			lines += buf[i] == '\n';
	}
	close(fd);
	return n < 0 ? -1 : lines;
}

int cd_plan_check_mount_max(const struct cd_plan *p, struct cd_err *err)
{
	long max = read_long("/proc/sys/fs/mount-max", 100000), have = count_mounts();
	/* Each plan entry is at most one mount, a bind or recursive
	 * read-only clone may bring submounts along: count two. */
	long need = (long)p->nmounts * 2;

	if (have < 0)
		return cd_err_sys(err, -errno, "cannot count the mounts of this namespace");
	if (have + need > max)
		return cd_err_set(err, -CD_E_LIMIT,
		                  "the sandbox needs about %ld mounts (%zu in its plan, %ld copied "
		                  "from this namespace), more than the kernel allows in one mount "
		                  "namespace (/proc/sys/fs/mount-max = %ld): refused rather than "
		                  "run half-protected",
		                  have + need, p->nmounts, have, max);
	return 0;
}
