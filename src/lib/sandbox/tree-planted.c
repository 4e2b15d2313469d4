/* tree-planted.c — after the run: the git control paths and files the
 * host runs on its own that appeared in a writable tree (the working tree
 * of workspace-write, --rw directories), found by re-reading only the
 * directories whose ctime moved since the walk stamped them; and the
 * check of the plan against the kernel's mount limit. */
#include "tree-scan-int.h"
#include "tree-watch.h"

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

static int order_cmp(const void *a, const void *b, void *dirs)
{
	const struct cd_dir_stamp *d = dirs;

	return cd_tree_stamp_cmp(&d[*(const size_t *)a], &d[*(const size_t *)b]);
}

/* Was rel the same directory (st) when the walk stamped it?  Another
 * directory now at a stamped path (the one there renamed away, or two
 * exchanged) is new to the check: read whole.  The stamps stay in the
 * walk's order; their (tree, path) order is made on the first lookup
 * (most checks make none: no directory they read has a subdirectory),
 * and without memory for it every subdirectory is new. */
static int known_dir(struct walk *w, size_t tree, const char *rel, const struct stat *st)
{
	const struct cd_plan *p = w->p;
	struct cd_dir_stamp key = { (char *)rel, tree, 0, 0, 0, 0 };
	size_t lo = 0, hi = p->ndirs, i;

	if (!w->stamp_order) {
		if (!(w->stamp_order = malloc((p->ndirs + 1) * sizeof *w->stamp_order)))
			return 0;
		for (i = 0; i < p->ndirs; i++)
			w->stamp_order[i] = i;
		qsort_r(w->stamp_order, p->ndirs, sizeof *w->stamp_order, order_cmp, p->dirs);
	}
	while (lo < hi) {
		const struct cd_dir_stamp *ds = &p->dirs[w->stamp_order[lo + (hi - lo) / 2]];
		int c = cd_tree_stamp_cmp(&key, ds);

		if (c == 0)
			return ds->dev == st->st_dev && ds->ino == st->st_ino;
		if (c < 0)
			hi = lo + (hi - lo) / 2;
		else
			lo = lo + (hi - lo) / 2 + 1;
	}
	return 0;
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

/* Is canon (a host path) inside a tree the check reads: one of
 * plan->trees, or before they are all known (the walk before the run), a
 * writable tree the walk reads or will read? */
static int checked(const struct walk *w, const char *canon)
{
	const struct cd_plan *p = w->p;
	size_t i;

	for (i = 0; i < p->ntrees; i++) {
		if (p->trees[i].planted && cd_path_is_under(canon, p->trees[i].root))
			return 1;
	}
	for (i = w->first; !w->list_only && i < p->nmounts; i++) {
		const struct cd_mount *m = &p->mounts[i];

		if (m->kind == CD_MNT_BIND && (m->flags & CD_MNT_RW) && m->src && !m->why &&
		    !(m->flags & CD_MNT_DEV) &&
		    !(p->scratch_host && !strcmp(m->src, p->scratch_host)) &&
		    cd_path_is_under(canon, m->src))
			return 1;
	}
	return 0;
}

/* Does relative link target t, read as written, climb above the top of
 * the tree that holds the link (w->path)?  node_modules/.bin's links
 * ("../pkg/bin/x") do not, and cost no lookup.  A component on the way
 * that is itself a link out is reported on its own. */
static int climbs_out(const struct walk *w, const char *t)
{
	long depth = -1; /* the link's directory, below the top */
	const char *c;

	for (c = w->path + w->srclen; *c; c++)
		depth += *c == '/';
	for (c = t; *c;) {
		size_t cl = strcspn(c, "/");

		if (cl == 2 && c[0] == '.' && c[1] == '.') {
			if (--depth < 0)
				return 1;
		} else if (cl && !(cl == 1 && c[0] == '.')) {
			depth++;
		}
		c += cl + (c[cl] == '/');
	}
	return 0;
}

/* Symlink `name` of dfd (at w->path, in a writable tree): does the host,
 * following it, reach a directory the check does not read?  The check
 * never follows a symlink, so a repository or an .envrc behind one (made
 * in the --scratch DIR, which is the sandbox's own and not checked: a
 * clone cached there has .git directories by the hundred) would go
 * unreported, though the host's git or direnv follows the link.  Reported
 * rather than the scratch checked: what is planted through a link is the
 * link, and only it puts the scratch in the host's way.  A link to a
 * directory outside the checked trees, or one that resolves to nothing
 * (what the host finds there later is anyone's), is reported; a link that
 * stays in its tree as written costs no lookup, and one to a file is no
 * more than a file the sandbox could write itself, unless the file is in
 * the scratch. */
int cd_tree_link_leaves(struct walk *w, int dfd, const char *name)
{
	char target[CD_PATH_MAX], canon[CD_PATH_MAX];
	ssize_t n = readlinkat(dfd, name, target, sizeof target - 1);
	struct stat st;

	if (n <= 0 || (size_t)n >= sizeof target - 1)
		return n != 0; /* unreadable or too long: report */
	target[n] = '\0';
	if (target[0] != '/' && !climbs_out(w, target))
		return 0;
	if (!realpath(w->path, canon))
		return 1; /* dangling, or a loop */
	if (stat(canon, &st) < 0)
		return 1;
	if (S_ISDIR(st.st_mode))
		return !checked(w, canon);
	/* A file in the --scratch DIR: the next run may make it a directory
	 * (a repository) behind the link, which by then is no longer new (an
	 * attacker's review planted an fsmonitor in two runs that way). */
	return w->p->scratch_host && cd_path_is_under(canon, w->p->scratch_host);
}

/* A directory whose entries changed during the run: its new host-run
 * names and git control paths are candidates, its new subdirectories are
 * walked whole; one that became a git directory is reported itself. */
static int reread(struct walk *w, size_t len, const struct cd_dir_stamp *ds)
{
	int gd = cd_tree_is_gitdir(w->path), oi = cd_tree_objects_info(w->path, len), r = 0, fd;
	int folded;
	struct fold fold;
	struct dirent *e;
	DIR *d = opendir(w->path);

	if (!d)
		return errno == ENOENT || errno == ENOTDIR
		               ? 0 /* gone: its parent changed too */
		               : cd_tree_incomplete(w, ds->rel, WHY_UNREADABLE);
	if (gd && !ds->gitdir)
		r = cd_tree_list_add_why(w, ds->rel, WHY_BECAME_GIT);
	folded = cd_tree_fold_probe(dirfd(d), 0, &fold);
	while (r == 0 && (e = readdir(d))) {
		const char *name =
		        folded ? cd_tree_fold_name(&fold, e->d_ino, e->d_name) : e->d_name;
		size_t nl = strlen(e->d_name);
		struct stat st;

		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if (len + 1 + nl + 1 >= sizeof w->path) {
			r = cd_tree_incomplete(w, ds->rel, WHY_TOO_LONG);
			continue;
		}
		w->path[len] = '/';
		memcpy(w->path + len + 1, e->d_name, nl + 1);
		if (cd_tree_is_host_run(name) ||
		    cd_tree_host_run_path(w->path, len + 1 + nl, name) ||
		    cd_tree_python_run(dirfd(d), w->path, len + 1 + nl, name) ||
		    (gd && name_in(name, cd_git_control_names)) ||
		    (oi && !strcmp(name, "alternates")))
			r = cd_tree_list_add(w, w->path);
		else if ((e->d_type == DT_LNK ||
		          (e->d_type == DT_UNKNOWN &&
		           fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		           S_ISLNK(st.st_mode))) &&
		         cd_tree_link_leaves(w, dirfd(d), e->d_name))
			r = cd_tree_list_add_why(w, w->path + w->srclen + 1, WHY_LINK_OUT);
		/* a new .git is reported whole, its insides need no look */
		if (r == 0 && strcmp(name, ".git") != 0 &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode) && !known_dir(w, w->tree, w->path + w->srclen + 1, &st)) {
			fd = openat(dirfd(d), e->d_name,
			            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				r = cd_tree_walk_dir(w, fd, len + 1 + nl, 1);
			else if (errno != ENOENT)
				r = cd_tree_unopenable(w, dirfd(d), e->d_name, errno);
		}
		w->path[len] = '\0';
	}
	closedir(d);
	return r;
}

/* The plan's stamp runs made into stamps (appended: the room was kept,
 * so no stamp moves), the lookup order made again on the next lookup. */
static int runs_whole(struct walk *w)
{
	if (cd_plan_stamps_whole(w->p) < 0)
		return cd_err_set(w->err, -ENOMEM,
		                  "the directories the walk stamped cannot be checked");
	free(w->stamp_order);
	w->stamp_order = NULL;
	return 0;
}

/* Does the watcher list one of tree t's stamps (its top included)? */
static int listed_stamp(const struct cd_plan *p, size_t t, const struct cd_watch_id *dirty,
                        size_t n)
{
	size_t i;

	for (i = 0; i < p->ndirs; i++) {
		if (p->dirs[i].tree == t && cd_watch_has(dirty, n, p->dirs[i].dev, p->dirs[i].ino))
			return 1;
	}
	return 0;
}

/* Only the directories whose ctime moved since the walk (or that changed
 * just before it, within the timestamps' granularity) are read; every git
 * directory's HEAD is read too (a write in place moves no directory's
 * ctime). */
static int changed_dirs(struct walk *w, const char *base, int treefd,
                        const struct cd_watch_id *dirty, long ndirty)
{
	const struct cd_plan *p = w->p;
	const char *root = w->src;
	size_t i;
	int r = 0, top = treefd >= 0 ? openat(treefd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC)
	                             : open(root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (top < 0)
		return errno == ENOENT || errno == ENOTDIR
		               ? 0 /* gone, or a file bound by itself: no tree to check */
		               : cd_tree_incomplete(w, "", WHY_UNREADABLE);
	/* the stamp runs (plan.h) when the watcher cannot say, or lists one
	 * of them or of this tree's other stamps (a reread looks up the
	 * stamps of its subdirectories) */
	if (p->nruns &&
	    (ndirty < 0 || listed_stamp(p, w->tree, dirty, (size_t)ndirty) ||
	     cd_plan_stamps_hit(p, dirty, (size_t)ndirty)) &&
	    (r = runs_whole(w)) < 0) {
		close(top);
		return r;
	}
	for (i = 0; i < p->ndirs && r == 0; i++) {
		const struct cd_dir_stamp *ds = &p->dirs[i];
		struct stat st;
		int n;

		if (ds->tree != w->tree)
			continue;
		/* no event on it since the walk's answer (tree-watch.h): as the
		 * walk stamped it (a git directory's HEAD is read all the same) */
		if (ndirty >= 0 && ds->rel[0] && !ds->gitdir &&
		    !cd_watch_has(dirty, (size_t)ndirty, ds->dev, ds->ino))
			continue;
		/* relative to the tree's top: no lookup of its own path each time */
		n = fstatat(top, ds->rel, &st, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH);
		if (n < 0 && errno == EACCES) {
			/* a directory above made unsearchable (chmod 644) */
			r = cd_tree_incomplete(w, ds->rel, WHY_UNREADABLE);
			continue;
		}
		if (n < 0 || !S_ISDIR(st.st_mode))
			continue; /* gone or replaced: its parent changed */
		if (st.st_dev != ds->dev || st.st_ino != ds->ino) {
			/* Another directory at this path: the nearest one above
			 * that is still the same changed (an entry of it was
			 * renamed or replaced), and its reread walks this whole.
			 * The top itself replaced (on the host): walk it all. */
			if (ds->rel[0])
				continue;
			r = cd_tree_walk_tree(w, root, root);
			break;
		}
		n = snprintf(w->path, sizeof w->path, "%s%s%s", w->srclen ? base : "",
		             ds->rel[0] || !w->srclen ? "/" : "", ds->rel);
		if (n < 0 || (size_t)n >= sizeof w->path) {
			r = cd_tree_incomplete(w, ds->rel, WHY_TOO_LONG);
			continue;
		}
		if (ds->gitdir && !cd_tree_head_parses(w->path) &&
		    (r = cd_tree_list_add_why(w, ds->rel, WHY_BAD_HEAD)) < 0)
			break;
		if (cd_tree_ctime_ns(&st) == ds->ctime_ns &&
		    ds->ctime_ns < p->scan_ns - STAMP_GUARD_NS)
			continue;
		/* ... and before any reread (a top changed within the guard) */
		if (p->nruns && (r = runs_whole(w)) < 0)
			break;
		r = reread(w, (size_t)n, ds);
	}
	close(top);
	return r;
}

/* The directories of tree t with an event since the walk's answer, from
 * the watcher's connection the plan kept (tree-watch.h): their number,
 * or -1 when it cannot say (every stamped directory is looked at). */
static long watched_dirty(const struct cd_plan *p, size_t t, struct cd_watch_id *ids)
{
	uint32_t id = p->trees[t].watch_id;

	if (!ids || !p->watch_instance || !id)
		return -1;
	return cd_watch_since(p->watch_fd, p->watch_instance, p->watch_since, &id, 1, ids,
	                      CD_WATCH_DIRTY_MAX);
}

/* "ABS\0WHY" (taken; NULL-safe) as the record shows it: relative to the
 * working directory when below it ("." for itself). */
static char *shown(const struct cd_plan *p, char *abs)
{
	size_t cl, al, wl;
	const char *rel;
	char *s;

	if (!abs || !cd_path_is_under(abs, p->cwd))
		return abs;
	cl = strlen(p->cwd);
	al = strlen(abs);
	wl = strlen(abs + al + 1);
	rel = al == cl ? "." : abs + cl + (strcmp(p->cwd, "/") != 0);
	if (!(s = malloc(strlen(rel) + wl + 2))) {
		free(abs);
		return NULL;
	}
	memcpy(s, rel, strlen(rel) + 1);
	memcpy(s + strlen(rel) + 1, abs + al + 1, wl + 1);
	free(abs);
	return s;
}

/* Which pre-run entry is path ("ABS\0WHY"), or -1. */
static long pre_index(const struct cd_plan *p, const char *path)
{
	size_t i;

	for (i = 0; i < p->nhost_run; i++) {
		if (!strcmp(p->host_run[i], path))
			return (long)i;
	}
	return -1;
}

/* Does a directory above path (which the walk met with no symlink in it)
 * now go through a symlink?  The host would follow it elsewhere, even
 * where it dangles now (its target can appear later). */
static int through_link(const char *path)
{
	char buf[CD_PATH_MAX];
	size_t n = strlen(path), i;
	struct stat st;

	if (n >= sizeof buf)
		return 0;
	memcpy(buf, path, n + 1);
	for (i = 1; i < n; i++) {
		if (buf[i] != '/')
			continue;
		buf[i] = '\0';
		if (lstat(buf, &st) < 0)
			return 0; /* gone */
		if (S_ISLNK(st.st_mode))
			return 1;
		buf[i] = '/';
	}
	return 0;
}

/* How the file at path differs from what the walk saw there (NULL: the
 * same, or gone now). */
static const char *how_changed(const struct cd_file_id *was, const char *path)
{
	struct stat st;

	if (through_link(path))
		return WHY_VIA_LINK;
	if (lstat(path, &st) < 0)
		return NULL;
	/* a directory made where a file or symlink was removed can get
	 * its inode back (sbin -> scripts replaced by a directory sbin) */
	if (!was->known || st.st_dev != was->dev || st.st_ino != was->ino ||
	    was->dir != S_ISDIR(st.st_mode))
		return WHY_REPLACED;
	if (!S_ISDIR(st.st_mode) && cd_tree_ctime_ns(&st) != was->ctime_ns)
		return WHY_REWRITTEN;
	return NULL;
}

/* "ABS\0WHY" in a new allocation. */
static char *entry(const char *abs, const char *why)
{
	size_t al = strlen(abs), wl = strlen(why);
	char *s = malloc(al + wl + 2);

	if (s) {
		memcpy(s, abs, al + 1);
		memcpy(s + al + 1, why, wl + 1);
	}
	return s;
}

/* Append s (taken) unless its path is there already (found twice: the
 * first why stays). */
static int push(char ***out, size_t *nout, char *s)
{
	char **v;
	size_t i;

	for (i = 0; s && i < *nout; i++) {
		if (!strcmp((*out)[i], s)) {
			free(s);
			return 0;
		}
	}
	if (!s || !(v = realloc(*out, (*nout + 1) * sizeof *v))) {
		free(s);
		return -ENOMEM;
	}
	*out = v;
	v[(*nout)++] = s;
	return 0;
}

/* What to report of now[] (taken, set NULL), as the record shows it: a
 * path found that was not there before; one that was, if another file
 * has it now or the file was rewritten; what could not be checked.  Then
 * each path from before the run that the walk did not meet again (its
 * directory unchanged) but whose file changed all the same. */
static int judge(const struct cd_plan *p, char **now, size_t nnow, char ***ret, size_t *ret_n)
{
	char **out = NULL, *s;
	unsigned char *met = calloc(p->nhost_run + 1, 1);
	size_t nout = 0, i;
	int r = met ? 0 : -ENOMEM;

	for (i = 0; r == 0 && i < nnow; i++) {
		const char *why, *how;
		long j;

		why = now[i] + strlen(now[i]) + 1;
		j = pre_index(p, now[i]);
		if (j >= 0)
			met[j] = 1;
		/* a HEAD, or a directory that could not be checked: each time */
		if (j >= 0 && strcmp(why, WHY_BAD_HEAD) && strcmp(why, WHY_UNREADABLE) &&
		    strcmp(why, WHY_TOO_DEEP) && strcmp(why, WHY_TOO_LONG)) {
			if ((how = how_changed(&p->host_run_id[j], now[i])))
				r = push(&out, &nout, shown(p, entry(now[i], how)));
			continue;
		}
		s = now[i];
		now[i] = NULL;
		r = push(&out, &nout, shown(p, s));
	}
	for (i = 0; r == 0 && i < p->nhost_run; i++) {
		const char *how;

		if (met[i] || pre_index(p, p->host_run[i]) != (long)i ||
		    !(how = how_changed(&p->host_run_id[i], p->host_run[i])))
			continue;
		r = push(&out, &nout, shown(p, entry(p->host_run[i], how)));
	}
	free(met);
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

/* A tree the walk did not stamp whole: read all of it, from its fd. */
static int walk_whole(struct walk *w, const char *base, int treefd)
{
	int fd = openat(treefd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return cd_tree_incomplete(w, "", WHY_UNREADABLE);
	memcpy(w->path, base, strlen(base) + 1);
	return cd_tree_walk_dir(w, fd, w->srclen, 0);
}

/* The tree's path no longer names the directory the sandbox had (renamed
 * or exchanged during the run): said, and the check reads the directory
 * itself all the same. */
static int top_moved(struct walk *w, int treefd)
{
	struct stat was, now;

	if (fstat(treefd, &was) < 0)
		return cd_tree_incomplete(w, "", WHY_UNREADABLE);
	if (lstat(w->src, &now) == 0 && now.st_dev == was.st_dev && now.st_ino == was.st_ino)
		return 0;
	return cd_tree_list_add_why(w, "", WHY_TOP_MOVED);
}

int cd_plan_planted(const struct cd_plan *p, char ***ret, size_t *ret_n, struct cd_err *err)
{
	struct cd_plan_opts o;
	struct walk *w;
	char **now = NULL, why[sizeof w->incomplete];
	size_t nnow = 0, i, t;
	struct cd_watch_id *dirty;
	long nd;
	int r = 0;

	memset(&o, 0, sizeof o);
	if (!(w = calloc(1, sizeof *w)))
		return cd_err_set(err, -ENOMEM, "out of memory");
	dirty = p->watch_instance ? malloc(CD_WATCH_DIRTY_MAX * sizeof *dirty) : NULL;
	w->p = (struct cd_plan *)p;
	w->o = &o;
	w->err = err;
	w->protect = 1;
	w->list_only = 1;
	w->list = &now;
	w->nlist = &nnow;
	/* Every tree the sandbox could write, the working tree and --rw ones.
	 * A tree whose check fails keeps what it found, and the failure is
	 * told: nothing found is ever dropped for it. */
	for (t = 0; t < p->ntrees; t++) {
		const char *root = p->trees[t].root;
		char base[32];
		int fd = p->trees[t].fd;

		if (!p->trees[t].planted)
			continue;
		w->src = w->dest = root;
		w->tree = t;
		nd = watched_dirty(p, t, dirty);
		/* Read through the directory the walk opened (its fd, by
		 * /proc/self/fd/N, so the lookups by path below it resolve
		 * in it too): the one the sandbox wrote, wherever a rename
		 * put it.  Found entries are named by the tree's path. */
		if (fd >= 0 &&
		    snprintf(base, sizeof base, "/proc/self/fd/%d", fd) < (int)sizeof base &&
		    (r = top_moved(w, fd)) == 0) {
			w->srclen = strlen(base);
			r = p->trees[t].complete ? changed_dirs(w, base, fd, dirty, nd)
			                         : walk_whole(w, base, fd);
		} else if (r == 0) {
			w->srclen = strcmp(root, "/") ? strlen(root) : 0;
			r = p->trees[t].complete ? changed_dirs(w, root, -1, dirty, nd)
			                         : cd_tree_walk_tree(w, root, root);
		}
		if (r < 0 && !w->incomplete[0])
			snprintf(w->incomplete, sizeof w->incomplete, "%.*s",
			         (int)sizeof w->incomplete - 1, err ? err->msg : "failed");
	}
	memcpy(why, w->incomplete, sizeof why);
	free(dirty);
	free(w->stamp_order);
	cd_tree_walk_free(w);
	r = judge(p, now, nnow, ret, ret_n);
	for (i = 0; i < nnow; i++)
		free(now[i]);
	free(now);
	if (r < 0)
		return cd_err_set(err, r, "out of memory");
	if (why[0])
		return cd_err_set(err, 1, "%s", why);
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

/* The stamps' names, packed in 64 KiB chunks: a walk stamps thousands,
 * and one malloc and free each cost more than the rest of a replayed
 * directory's stamp. */
struct cd_name_chunk {
	struct cd_name_chunk *next;
	size_t used;
	char v[65536 - 2 * sizeof(size_t)];
};

static char *name_dup(struct cd_name_chunk **head, const char *s)
{
	size_t n = strlen(s) + 1;
	struct cd_name_chunk *c = *head;

	if (n > sizeof c->v)
		return NULL; /* longer than any path */
	if (!c || sizeof c->v - c->used < n) {
		if (!(c = malloc(sizeof *c)))
			return NULL;
		c->next = *head;
		c->used = 0;
		*head = c;
	}
	memcpy(c->v + c->used, s, n);
	c->used += n;
	return c->v + c->used - n;
}

void cd_name_chunks_free(struct cd_name_chunk *c)
{
	while (c) {
		struct cd_name_chunk *next = c->next;

		free(c);
		c = next;
	}
}

/* Room for n more stamps: one allocation for a tree the scan cache
 * knows the size of, else twice as many each time it is full. */
int cd_tree_stamp_room(struct walk *w, size_t n)
{
	struct cd_plan *p = w->p;
	struct cd_dir_stamp *v;

	/* the stamp runs' room is kept: they are made into dirs in place */
	if (p->dirs_cap - p->ndirs - p->nrun_dirs >= n)
		return 0;
	if (n > STAMP_MAX)
		n = STAMP_MAX;
	if (!(v = realloc(p->dirs, (p->ndirs + p->nrun_dirs + n) * sizeof *v)))
		return -ENOMEM;
	p->dirs = v;
	p->dirs_cap = p->ndirs + p->nrun_dirs + n;
	return 0;
}

/* One more directory stamped (plan->dirs), w->path, as the walk read it
 * or the cache replayed it (tree-cache.c). */
int cd_tree_stamp_id(struct walk *w, dev_t dev, ino_t ino, int64_t ctime_ns)
{
	struct cd_plan *p = w->p;
	const char *rel = w->path[w->srclen] ? w->path + w->srclen + 1 : "";

	if (!p->trees[w->tree].complete)
		return 0;
	if (p->ndirs + p->nrun_dirs >= STAMP_MAX) {
		p->trees[w->tree].complete = 0; /* the check walks the whole tree instead */
		return 0;
	}
	if (p->ndirs + p->nrun_dirs == p->dirs_cap &&
	    cd_tree_stamp_room(w, p->ndirs ? p->ndirs : 256) < 0)
		return cd_err_set(w->err, -ENOMEM, "out of memory");
	if (!(p->dirs[p->ndirs].rel = name_dup(&p->dir_names, rel)))
		return cd_err_set(w->err, -ENOMEM, "out of memory");
	p->dirs[p->ndirs].gitdir = 0;
	p->dirs[p->ndirs].dev = dev;
	p->dirs[p->ndirs].ino = ino;
	p->dirs[p->ndirs].tree = w->tree;
	p->dirs[p->ndirs++].ctime_ns = ctime_ns;
	return 0;
}

/* The directory stamped at idx (w->path) has a HEAD: if it is a git
 * directory now, its HEAD must still parse after the run. */
void cd_tree_mark_gitdir(struct walk *w, size_t idx)
{
	if (w->protect && w->stamp && w->p->trees[w->tree].complete && idx < w->p->ndirs &&
	    cd_tree_is_gitdir(w->path))
		w->p->dirs[idx].gitdir = 1;
}

int cd_tree_stamp_cmp(const void *a, const void *b)
{
	const struct cd_dir_stamp *x = a, *y = b;

	if (x->tree != y->tree)
		return x->tree < y->tree ? -1 : 1;
	return strcmp(x->rel, y->rel);
}
