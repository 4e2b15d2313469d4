/* tree-targets.c — what a protected host-run file names, which the host
 * runs through it: a .yarnrc.yml's yarnPath (yarn 1's .yarnrc
 * yarn-path), and the modules a site directory's *.pth imports at every
 * start of the interpreter (setuptools' distutils-precedence.pth imports
 * _distutils_hack, an editable install's .pth its finder) or the
 * directories it puts on sys.path.  The file itself is read-only
 * (tree-scan.c); read here, before the run only. */
#include "tree-scan-int.h"

#include "envrc.h"
#include "gitcfg.h"
#include "profile.h"
#include "util/bounds.h"
#include "util/path.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TARGETS_READ_MAX (64 * 1024) /* of a .yarnrc.yml or a .pth: the rest not read */
#define MODULE_NAME_MAX  255

/* The value of `key` on one line of a yarn config (line ends at end):
 * "yarnPath: V" (.yarnrc.yml) or "yarn-path V" (yarn 1's .yarnrc), V
 * bare or quoted.  Its length, 0 if the line sets something else. */
static size_t yarn_value(const char *line, const char *end, const char *key, const char **ret)
{
	size_t kl = strlen(key);
	const char *v = line, *e;

	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	if ((size_t)(end - v) <= kl || memcmp(v, key, kl) != 0)
		return 0;
	for (v += kl; v < end && (*v == ' ' || *v == '\t' || *v == ':'); v++)
		;
	if (v < end && (*v == '"' || *v == '\'')) {
		e = memchr(v + 1, *v, (size_t)(end - v - 1));
		v++;
	} else {
		for (e = v; e < end && *e != '#' && *e != '\r'; e++)
			;
		while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
	}
	if (!e || e <= v)
		return 0;
	*ret = v;
	return (size_t)(e - v);
}

/* The yarnPath of a yarn config (buf, n bytes; key its name there), in
 * the directory w->path (len bytes): listed, not covered (it may lie
 * where the walk has not been, or not exist yet), so the check after the
 * run reports it rewritten, replaced or made. */
static int yarn_targets(struct walk *w, const char *buf, size_t n, const char *key, size_t len)
{
	char host[CD_PATH_MAX];
	const char *line, *end, *v;
	size_t vl;
	int r = 0, k;

	for (line = buf; r == 0 && line < buf + n; line = end + 1) {
		if (!(end = memchr(line, '\n', (size_t)(buf + n - line))))
			end = buf + n;
		if (!(vl = yarn_value(line, end, key, &v)) || memchr(v, '\0', vl))
			continue;
		while (vl > 2 && v[0] == '.' && v[1] == '/') /* ./bin/yarn.js: as shown */
			v += 2, vl -= 2;
		k = v[0] == '/' ? snprintf(host, sizeof host, "%.*s", (int)vl, v)
		                : snprintf(host, sizeof host, "%.*s/%.*s", (int)len, w->path,
		                           (int)vl, v);
		if (k > 0 && (size_t)k < sizeof host && (size_t)k > w->srclen &&
		    cd_path_is_under(host, w->src) && strcmp(host, w->src) != 0)
			r = cd_tree_list_add(w, host);
	}
	return r;
}

/* A module the .pth imports, m (ml bytes), looked for in its directory
 * dfd (w->path, len bytes) as a package M/ and as M.py: one there is
 * kept read-only (a symlink, which the walk refuses as a host-run name,
 * is only listed), one not there listed, so one made is reported. */
static int pth_module(struct walk *w, int dfd, const char *m, size_t ml, size_t len)
{
	static const char *const forms[] = { "", ".py" };
	char host[CD_PATH_MAX];
	struct stat st;
	size_t i;
	int k, r = 0;

	for (i = 0; i < CD_ARRAY_SIZE(forms) && r == 0; i++) {
		k = snprintf(host, sizeof host, "%.*s/%.*s%s", (int)len, w->path, (int)ml, m,
		             forms[i]);
		if (k < 0 || (size_t)k >= sizeof host)
			return cd_err_set(w->err, -ENAMETOOLONG,
			                  "'%.64s...' is longer than PATH_MAX: it cannot be kept "
			                  "read-only, so the run is refused",
			                  w->path);
		if ((r = cd_tree_list_add(w, host)) < 0)
			return r;
		if (fstatat(dfd, host + len + 1, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
			r = cd_tree_cover(w, host, CD_MNT_REMOUNT_RO, 0, WHY_HOST_RUN);
	}
	return r;
}

static int ident_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || (unsigned char)c >= 0x80;
}

/* Does the word w start at p (a whole word, in line..end)? */
static int word_at(const char *line, const char *p, const char *end, const char *word)
{
	size_t wl = strlen(word);

	return (p == line || !ident_char(p[-1])) && (size_t)(end - p) > wl &&
	       !memcmp(p, word, wl) && !ident_char(p[wl]);
}

/* A directory line of a .pth (line..end; relative to its site directory
 * w->path, len bytes): Python puts it on sys.path, and a sitecustomize or
 * usercustomize found there (an editable install's src/, when the site
 * directory has none) runs at every start.  Each form of them there,
 * when the directory lies in the tree: listed, so the check after the
 * run reports one made or rewritten (the directory is the project's). */
static int pth_dir(struct walk *w, const char *line, const char *end, size_t len)
{
	static const char *const names[] = { "sitecustomize", "usercustomize" };
	static const char *const forms[] = { ".py", ".pyc", "" };
	char dir[CD_PATH_MAX], canon[CD_PATH_MAX], host[CD_PATH_MAX];
	size_t i, j;
	int k, r = 0;

	while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (end == line || line[0] == '#' || memchr(line, '\0', (size_t)(end - line)))
		return 0;
	k = line[0] == '/' ? snprintf(dir, sizeof dir, "%.*s", (int)(end - line), line)
	                   : snprintf(dir, sizeof dir, "%.*s/%.*s", (int)len, w->path,
	                              (int)(end - line), line);
	if (k < 0 || (size_t)k >= sizeof dir)
		return 0; /* Python cannot use it either */
	if (cd_path_canonical(dir, canon, sizeof canon) == 0)
		memcpy(dir, canon, strlen(canon) + 1);
	if (!cd_path_is_under(dir, w->src) || strlen(dir) <= w->srclen)
		return 0;
	for (i = 0; i < CD_ARRAY_SIZE(names) && r == 0; i++) {
		for (j = 0; j < CD_ARRAY_SIZE(forms) && r == 0; j++) {
			k = snprintf(host, sizeof host, "%s/%s%s", dir, names[i], forms[j]);
			if (k > 0 && (size_t)k < sizeof host)
				r = cd_tree_list_add(w, host);
		}
	}
	return r;
}

/* The lines of a .pth (buf, n bytes): a directory for sys.path, or, when
 * it starts with "import " or "import\t", code Python runs: each module
 * named after import or from, or in __import__('M'), by its top-level
 * name. */
static int pth_imports(struct walk *w, int dfd, const char *buf, size_t n, size_t len)
{
	const char *line, *end, *p, *m;
	int r = 0;

	for (line = buf; r == 0 && line < buf + n; line = end + 1) {
		if (!(end = memchr(line, '\n', (size_t)(buf + n - line))))
			end = buf + n;
		if (end - line < 7 || memcmp(line, "import", 6) != 0 ||
		    (line[6] != ' ' && line[6] != '\t')) {
			r = pth_dir(w, line, end, len);
			continue;
		}
		for (p = line; r == 0 && p < end; p++) {
			if (word_at(line, p, end, "import") || word_at(line, p, end, "from"))
				m = p + (*p == 'i' ? 6 : 4);
			else if (word_at(line, p, end, "__import__"))
				m = p + 10;
			else
				continue;
			while (m < end && *m && strchr(" \t(\"'", *m))
				m++;
			for (p = m; p < end && ident_char(*p); p++)
				;
			if (p > m && p - m <= MODULE_NAME_MAX)
				r = pth_module(w, dfd, m, (size_t)(p - m), len);
			p--;
		}
	}
	return r;
}

/* named_path's flags */
#define NAMED_DIR_OK 1 /* a directory may be read-only whole */

static int named_path(struct walk *w, const char *path, int flags);

/* A directory the host searches by name (dir, normalized): read-only
 * whole (a symlink on the way in the tree refuses the run), and as the
 * filesystem resolves it
 * (a symlinked entry, a dangling one: where a directory made later
 * lands) read-only too. */
static int named_dir_resolved(struct walk *w, const char *dir)
{
	char real[CD_PATH_MAX];
	int r = named_path(w, dir, NAMED_DIR_OK);

	if (r == 0 && cd_path_resolve_links(dir, real, sizeof real) == 0 && strcmp(real, dir))
		r = named_path(w, real, NAMED_DIR_OK);
	return r;
}

/* A directory a ".." of a named path is taken from (cd_path_dotdot_dirs),
 * in this tree below its top, as written or where it really is (a
 * symlink outside the tree into it): the host takes the ".." from
 * wherever it leads when it runs, so a sandbox that replaced it with a
 * symlink (x/../hooks with x -> sub/deep: sub/hooks, the agent's) would
 * choose what the host runs, whatever the final path's read-only cover.
 * So it is held, with every directory above it in the tree (CD_MNT_HOLD:
 * a mount point cannot be renamed, removed or replaced; its entries stay
 * writable).  One that is not a directory now (missing, a file, a
 * symlink: made or re-pointed by the sandbox, it would lead anywhere)
 * refuses the run, saying why.  After the run it is listed. */
static int way_dir(struct walk *w, const char *dir)
{
	char real[CD_PATH_MAX];
	const char *in = NULL;
	struct stat st;
	int r;

	if (strlen(dir) > w->srclen && cd_path_is_under(dir, w->src))
		in = dir;
	else if (cd_path_canonical(dir, real, sizeof real) == 0 && strlen(real) > w->srclen &&
	         cd_path_is_under(real, w->src))
		in = real;
	if (!in)
		return 0;
	if (w->list_only)
		return cd_tree_list_add(w, in);
	if (lstat(in, &st) < 0 || !S_ISDIR(st.st_mode))
		return cd_err_set(
		        w->err, -CD_E_USAGE,
		        "'%s' is followed by '..' in a path a git config, hook, .envrc or "
		        "the caller's PATH names, and is no directory (missing, a file or "
		        "a symlink): the host would take '..' from wherever the sandbox "
		        "makes it lead, so the run is refused",
		        in);
	if ((r = cd_tree_hold_dirs(w, in)) < 0)
		return r;
	return cd_tree_cover(w, in, CD_MNT_HOLD, 0, NULL);
}

static int way_found(void *arg, const char *dir)
{
	return way_dir(arg, dir);
}

int cd_tree_dotdot_ways(struct walk *w, const char *path)
{
	return cd_path_dotdot_dirs(path, way_found, w);
}

static int envrc_named(void *arg, const char *path, enum cd_envrc_named kind)
{
	if (kind == CD_ENVRC_WAY)
		return way_dir(arg, path);
	return kind == CD_ENVRC_DIR ? named_dir_resolved(arg, path) : named_path(arg, path, 0);
}

/* An .envrc (buf, n bytes, in w->path, len bytes): what it runs or puts
 * on PATH (envrc.h), each directory read-only whole. */
static int envrc_targets(struct walk *w, const char *buf, size_t n, size_t len)
{
	char dir[CD_PATH_MAX];
	int r;

	if (len >= sizeof dir)
		return 0;
	memcpy(dir, w->path, len);
	dir[len] = '\0';
	r = cd_envrc_named_paths(buf, n, len ? dir : "/", envrc_named, w);
	return r == -ENOMEM ? cd_err_set(w->err, r, "out of memory") : r;
}

/* `name` of dfd (w->path, its directory len bytes), a host-run file the
 * walk keeps read-only before the run: what it names, listed or kept
 * read-only too. */
int cd_tree_run_targets(struct walk *w, int dfd, const char *name, size_t len)
{
	const char *key = !strcmp(name, ".yarnrc.yml") ? "yarnPath"
	                  : !strcmp(name, ".yarnrc")   ? "yarn-path"
	                                               : NULL;
	size_t nl = strlen(name), got = 0;
	ssize_t k = 1;
	char *buf;
	int fd, r;

	int envrc = !strcmp(name, ".envrc");

	if (w->list_only || !w->list ||
	    (!key && !envrc && (nl <= 4 || strcmp(name + nl - 4, ".pth"))))
		return 0;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* yarn and python cannot read it either */
	if (!(buf = malloc(TARGETS_READ_MAX))) {
		close(fd);
		return cd_err_set(w->err, -ENOMEM, "out of memory");
	}
	while (got < TARGETS_READ_MAX && (k = read(fd, buf + got, TARGETS_READ_MAX - got)) > 0)
		got += (size_t)k;
	close(fd);
	r = key     ? yarn_targets(w, buf, got, key, len)
	    : envrc ? envrc_targets(w, buf, got, len)
	            : pth_imports(w, dfd, buf, got, len);
	free(buf);
	return r;
}

struct on_way {
	struct walk *w;
	const char *path;
	int r;
};

/* A symlink the host follows on the way to a named path (on_way.path),
 * in this tree: the sandbox could point it elsewhere (a hooksPath
 * outside the tree, $H/hooks -> $W/current/hooks: only the final target
 * would be read-only, and `current` re-pointed to a directory of the
 * agent's), so it is refused, as one on the lexical path is; listed
 * after the run. */
static void link_on_way(void *arg, const char *link)
{
	struct on_way *c = arg;
	struct walk *w = c->w;

	if (c->r || strlen(link) <= w->srclen || !cd_path_is_under(link, w->src))
		return;
	c->r = w->list_only ? cd_tree_list_add(w, link)
	                    : cd_err_set(w->err, -CD_E_USAGE,
	                                 "'%s' is a symlink on the way to '%s', which a git "
	                                 "config, hook, .envrc or the caller's PATH names: a "
	                                 "writable tree cannot keep it read-only (the host "
	                                 "would run what it points to), so the run is refused",
	                                 link, c->path);
}

/* A path a protected file names (a git directory's config or hooks:
 * gitcfg.h; what an .envrc runs or puts on PATH: envrc.h; a caller's
 * PATH directory), in this tree: listed (so one made or replaced is
 * reported after the run), and read-only when it is a file, or a
 * directory flags say may be read-only whole (NAMED_DIR_OK:
 * core.hooksPath, a PATH directory; without it a command word "./"
 * names no script).  A symlink on the way, below the tree's top, is
 * refused as a host-run name's is (the sandbox could point it
 * elsewhere; link_on_way); after the run it is listed. */
static int named_path(struct walk *w, const char *path, int flags)
{
	int dir_ok = flags & NAMED_DIR_OK;
	char pre[CD_PATH_MAX];
	size_t i, pl = strlen(path);
	struct on_way way = { w, path, 0 };
	struct stat st;
	int link;

	/* a hooks directory that holds the whole tree (a run in .githooks
	 * or below it): no read-only cover can keep the tree's own top */
	if (dir_ok && !w->list_only && cd_path_is_under(w->src, path))
		return cd_err_set(w->err, -CD_E_USAGE,
		                  "'%s' is a directory git configuration names (a core.hooksPath, "
		                  "a command's search path), which the host's git runs from: it "
		                  "cannot be a writable tree; refused",
		                  w->src);
	(void)cd_path_resolve_links_each(path, pre, sizeof pre, link_on_way, &way);
	if (way.r)
		return way.r;
	if (pl <= w->srclen || pl >= sizeof pre || !cd_path_is_under(path, w->src))
		return 0; /* not in this tree */
	memcpy(pre, path, pl + 1);
	for (i = w->srclen + 1; i <= pl; i++) {
		if (i < pl && pre[i] != '/')
			continue;
		pre[i] = '\0';
		if (lstat(pre, &st) < 0)
			break; /* nothing there yet: listed only */
		link = S_ISLNK(st.st_mode);
		if (link && w->list_only)
			return cd_tree_list_add(w, pre);
		pre[i] = path[i];
		if (link)
			return cd_err_set(
			        w->err, -CD_E_USAGE,
			        "'%.*s' is a symlink on the way to '%s', which a git config, "
			        "hook or .envrc names: a writable tree cannot keep it read-only "
			        "(the host would run what it points to), so the run is refused",
			        (int)i, path, path);
	}
	if (i > pl && lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && !dir_ok)
		return 0; /* "./" in a command: no script */
	if (cd_tree_list_add(w, path) < 0)
		return -ENOMEM;
	if (i <= pl || lstat(path, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
		return 0;
	return cd_tree_cover(w, path, CD_MNT_REMOUNT_RO, 0, WHY_GIT_NAMED);
}

static int git_named(void *arg, const char *path, enum cd_git_named kind)
{
	if (kind == CD_GIT_NAMED_WAY)
		return way_dir(arg, path);
	return named_path(arg, path, kind == CD_GIT_NAMED_DIR);
}

/* The git directory gd (protected; top: its working tree's, NULL: as
 * gitcfg.h says): what its config and hooks name in this tree. */
int cd_tree_git_targets(struct walk *w, const char *gd, const char *top)
{
	const struct cd_git_env env = {
		.home = w->o->caller_home,
		.xdg_config_home = w->o->caller_xdg_config_home,
		.global = w->o->caller_git_config_global,
		.system = w->o->caller_git_config_system,
		.template_dir = w->o->caller_git_template_dir,
	};
	int r = cd_git_named_paths(gd, top, &env, git_named, w);
	const char *who = gd ? gd : "the caller's git configuration";

	if (r == -EFBIG)
		return cd_err_set(
		        w->err, r,
		        "%s: a file of its git configuration is larger than 1 MiB or changed "
		        "while read",
		        who);
	if (r == -E2BIG)
		return cd_err_set(w->err, r,
		                  "%s: its git configuration includes more than 256 files", who);
	return r == -ENOMEM ? cd_err_set(w->err, r, "out of memory") : r;
}

#define GIT_ABOVE_MAX 8 /* repositories around a tree looked at */

/* A tree inside git directory gd, at or below one of its control paths
 * (--rw REPO/.git/hooks, a run in .git/info): the cover that keeps them
 * read-only would be the tree's own top, so the run is refused. */
static int inside_control(struct walk *w, const char *gd)
{
	size_t gl = strlen(gd), i, cl;
	const char *rest;

	if (!cd_path_is_under(w->src, gd) || strlen(w->src) <= gl)
		return 0;
	rest = w->src + gl + 1;
	cl = strcspn(rest, "/");
	for (i = 0; cd_git_control_names[i]; i++) {
		if (strlen(cd_git_control_names[i]) == cl &&
		    !memcmp(rest, cd_git_control_names[i], cl))
			break;
	}
	if (!cd_git_control_names[i] && strncmp(rest, "objects/info", 12) != 0)
		return 0;
	return cd_err_set(w->err, -CD_E_USAGE,
	                  "'%s' is inside git directory '%s' (its config, hooks or "
	                  "other control files, which the host's git reads and runs): "
	                  "it cannot be a writable tree; refused",
	                  w->src, gd);
}

/* The repository this tree lies in, its .git above the tree's top (a run
 * started below a repository's top, or in a directory of a linked
 * worktree): the .git is out of the sandbox's reach, but what its config
 * and hooks name in this tree (core.hooksPath = sub/hooks, a
 * core.fsmonitor script) is run by the host's next git all the same. */
int cd_tree_git_above(struct walk *w)
{
	char at[CD_PATH_MAX], up[CD_PATH_MAX], gd[CD_PATH_MAX], top[CD_PATH_MAX];
	const char *from = w->src;
	unsigned n;
	int r = 0;

	/* the nearest, and those around it (git run at their tops) */
	for (n = 0; r == 0 && n < GIT_ABOVE_MAX; n++) {
		const char *slash = strrchr(from, '/');

		if (!slash || !strcmp(from, "/"))
			return n ? 0 : cd_tree_git_targets(w, NULL, NULL); /* the root */
		snprintf(up, sizeof up, "%.*s", slash == from ? 1 : (int)(slash - from), from);
		if (!cd_git_discover(up, gd, top))
			/* in no repository: what the caller's and the system's
			 * git configuration name all the same (a tree that is
			 * ~/hooks, a dotfiles tree holding the global file) */
			return n ? 0 : cd_tree_git_targets(w, NULL, NULL);
		if ((r = inside_control(w, gd)) < 0)
			return r;
		r = cd_tree_git_targets(w, gd, top);
		memcpy(at, top, strlen(top) + 1);
		from = at;
	}
	return r;
}

#define PINNED_DIR_MAX 1000 /* entries of a pinned directory looked at, in all */
/* Levels read: the directory and its subdirectories (a template's
 * hooks/, husky's .husky/_/), no deeper: a pinned file with other names
 * costs one more walk of the writable trees, and a virtualenv in a
 * read-only .direnv holds thousands of files uv hard-links from its
 * cache. */
#define PINNED_DIR_DEPTH 2

/* The files of directory fd (closed here), depth levels below a pinned
 * one, and of its subdirectories: each with other names noted; *seen
 * counts the entries read. */
static int pinned_dir(struct walk *w, int fd, unsigned depth, size_t *seen)
{
	struct dirent *e;
	struct stat st;
	int r = 0, sub;
	DIR *d = fdopendir(fd);

	if (!d) {
		close(fd);
		return 0;
	}
	while (r == 0 && (*seen)++ < PINNED_DIR_MAX && (e = readdir(d))) {
		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(st.st_mode) && st.st_nlink >= 2)
			r = cd_tree_inoset_add(w, &w->ro, st.st_dev, st.st_ino, st.st_nlink);
		else if (S_ISDIR(st.st_mode) && depth < PINNED_DIR_DEPTH &&
		         (sub = openat(dirfd(d), e->d_name,
		                       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
			r = pinned_dir(w, sub, depth + 1, seen);
	}
	closedir(d);
	return r;
}

/* A file kept read-only because the host runs it (a hook, a script git's
 * config names), or each file of such a directory and of its
 * subdirectories (init.templateDir's hooks/), a bounded number: one with
 * other names is kept read-only under them too (ln tools/pre-commit
 * .git/hooks/: the cover is on the path, and tools/pre-commit would
 * rewrite the hook). */
int cd_tree_note_pinned(struct walk *w, const char *path)
{
	struct stat st;
	size_t seen = 0;
	int fd;

	if (lstat(path, &st) < 0)
		return 0;
	if (S_ISREG(st.st_mode))
		return st.st_nlink < 2
		               ? 0
		               : cd_tree_inoset_add(w, &w->ro, st.st_dev, st.st_ino, st.st_nlink);
	if (!S_ISDIR(st.st_mode) ||
	    (fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;
	return pinned_dir(w, fd, 1, &seen);
}

#define STATE_FILES_MAX 256 /* files of a rebase's state directory listed */

/* A rebase's state directory: itself and each file in it listed, so one
 * made, or a todo rewritten in place (its directory unchanged), is
 * reported after the run. */
int cd_tree_list_state(struct walk *w, const char *dir)
{
	char f[CD_PATH_MAX];
	struct dirent *e;
	size_t seen = 0;
	DIR *d;
	int r = cd_tree_list_add(w, dir);

	if (r < 0 || w->list_only || !(d = opendir(dir)))
		return r;
	while (r == 0 && seen < STATE_FILES_MAX && (e = readdir(d))) {
		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		seen++;
		if (snprintf(f, sizeof f, "%s/%s", dir, e->d_name) < (int)sizeof f)
			r = cd_tree_list_add(w, f);
	}
	closedir(d);
	return r;
}

/* One PATH directory: a tree inside it (or inside where it resolves) is
 * refused, else named_dir_resolved. */
static int path_dir(struct walk *w, const char *dir)
{
	char real[CD_PATH_MAX];

	if (cd_path_is_under(w->src, dir) ||
	    (cd_path_resolve_links(dir, real, sizeof real) == 0 && cd_path_is_under(w->src, real)))
		return cd_err_set(
		        w->err, -CD_E_USAGE,
		        "'%s' is in the caller's PATH ('%s'): what is written there runs on "
		        "the host by name, so it cannot be a writable tree; refused",
		        w->src, dir);
	return named_dir_resolved(w, dir);
}

/* The caller's PATH directories in this tree (direnv's `PATH_add bin`,
 * `layout node`'s node_modules/.bin): the host's shell and git run what
 * is there by name (a planted bin/git on the next `git status`), so each
 * is read-only whole, and one not there yet is listed; a tree inside one
 * is refused.  "~/x" is the caller's.  A relative entry (".",
 * "./node_modules/.bin", an empty one) is searched from wherever the
 * shell is, so it names that path below every directory of the tree,
 * made now or later (packages/app/node_modules/.bin in a monorepo): no
 * cover or list holds them all, so a writable tree is refused while PATH
 * has one (docs/threats.md, H1). */
int cd_tree_path_dirs(struct walk *w)
{
	char norm[CD_PATH_MAX], raw[CD_PATH_MAX];
	const char *p = w->o->caller_path;
	int r = 0;

	while (r == 0 && p) {
		size_t n = strcspn(p, ":");

		if (!n || (n == 1 && p[0] == '.') || (n == 2 && !memcmp(p, "./", 2)))
			return cd_err_set(w->err, -CD_E_USAGE,
			                  "the caller's PATH holds '%.*s' (the current directory): "
			                  "what is written in the writable tree '%s' would run on "
			                  "the host by name; take it out of PATH; refused",
			                  (int)n, p, w->src);
		if (cd_path_search_relative(p, n))
			return cd_err_set(
			        w->err, -CD_E_USAGE,
			        "the caller's PATH holds the relative entry '%.*s', which "
			        "the shell searches from whatever directory it is in: what "
			        "is written below any directory of the writable tree '%s' "
			        "would run on the host by name; put an absolute path in "
			        "PATH instead; refused",
			        (int)(n > 200 ? 200 : n), p, w->src);
		if (cd_path_search_entry(p, n, w->src, w->o->caller_home, norm, sizeof norm) == 0)
			r = path_dir(w, norm);
		/* the shell takes ".." on disk: from the entry as written */
		if (r == 0 &&
		    cd_path_search_join(p, n, w->src, w->o->caller_home, raw, sizeof raw) == 0)
			r = cd_path_dotdot_dirs(raw, way_found, w);
		p = p[n] == ':' ? p + n + 1 : NULL;
	}
	return r;
}

/* Does `name` of dfd (one of cd_config_run_names) hold a key that makes
 * editors run code (cd_config_runs_code)?  One too large to read whole,
 * or unreadable midway, is taken as holding one. */
int cd_tree_content_runs(int dfd, const char *name)
{
	size_t got = 0;
	ssize_t k = 1;
	char *buf;
	int fd, hit;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* the editor's tools cannot read it either */
	if (!(buf = malloc(TARGETS_READ_MAX))) {
		close(fd);
		return 1; /* erring toward read-only */
	}
	while (got < TARGETS_READ_MAX && (k = read(fd, buf + got, TARGETS_READ_MAX - got)) > 0)
		got += (size_t)k;
	close(fd);
	hit = k < 0 || got == TARGETS_READ_MAX || cd_config_runs_code(buf, got);
	free(buf);
	return hit;
}
