/* tree-scan.c — one walk over the host trees a plan binds (plan-int.h).
 *
 * Three things hide in a bound tree that a bind alone does not handle:
 * host Unix sockets (connect() works through a read-only bind and no
 * Landlock right covers it, THREATS row 11), credential files (a project
 * or a home-like directory holding .netrc, cloud and registry tokens,
 * private keys), and, in a writable tree, files the host runs on its own
 * later (git config and hooks of any repository at any depth, .envrc,
 * editor tasks, MCP client configs).  One walk finds all three: sockets
 * and credentials are covered with /dev/null, the others are kept
 * read-only (a mount point also cannot be renamed or removed).
 *
 * The walk fails closed: an entry it cannot reach (past CD_SOCKET_SCAN_MAX
 * entries, deeper than SCAN_MAX_DEPTH, a path longer than PATH_MAX)
 * refuses the run instead of running half-protected.  What appears on
 * the host after the walk is not covered; in a workspace-write tree the
 * front end walks again after the run (cd_plan_planted) and reports any
 * new git control path or host-run file.
 */
#include "plan-int.h"

#include "bounds.h"
#include "path.h"
#include "profile.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SCAN_MAX_DEPTH    64
#define MODULES_MAX_DEPTH 16
#define KEY_SNIFF_BYTES   (1024 * 1024) /* a larger .pem is covered unread */
#define STAMP_MAX         100000        /* directories remembered for the check after the run */
#define STAMP_GUARD_NS    1000000000LL  /* changed within 1 s before the walk: read again */
#define DENTS_BYTES       32768         /* one getdents64 read */

#define WHY_SOCKET     "host socket"
#define WHY_CREDENTIAL "credential file"
#define WHY_HOST_RUN   "runs on the host: read-only"
#define WHY_GIT        "git control path: read-only"
#define WHY_SETUID     "setuid or setgid file: read-only"
#define WHY_CRED_LINK  "credential file (a symlink with a credential's name points to it)"
#define WHY_RO_LINK    "another name of a file in a read-only tree: read-only"
#define WHY_BECAME_GIT "became a git directory: git run in it or below reads its config"
#define WHY_BAD_HEAD   "its HEAD no longer parses: git skips it and uses a git directory above"
#define WHY_UNREADABLE "unreadable directory: contents not checked"

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

struct ino {
	dev_t dev;
	ino_t ino;
};

struct inoset {
	struct ino *v;
	size_t n, cap;
	int sorted;
};

struct cred_pat {
	const char *full, *base; /* the pattern; the name it ends in */
	size_t blen;
	int suffix; /* "*.EXT": base is ".EXT" */
};

struct walk {
	struct cd_plan *p;
	const struct cd_plan_opts *o;
	struct cd_err *err;
	size_t seen;
	const char *src, *dest; /* the bind being walked (host, inside) */
	size_t srclen;          /* 0 when src is "/" */
	int sockets;            /* cover host sockets */
	int creds;              /* cover credential files */
	int protect;            /* keep host-run paths read-only (a writable tree) */
	int writable;           /* the sandbox can write the tree (also --scratch DIR) */
	int suid_matters;       /* its filesystem honours setuid on the host (not nosuid) */
	int list_only;          /* cd_plan_planted: list, mount nothing */
	size_t first;           /* the plan's first user mount */
	int stamp;              /* remember each directory's ctime (plan->dirs) */
	size_t tree;            /* ... as part of plan->trees[tree] */
	struct cred_pat cred[32];
	size_t ncred;
	/* Hard links, across every bound tree (a name in one tree reads and
	 * writes the same bytes as a name in another): */
	struct inoset credlinks; /* covered credentials with other names */
	struct inoset shared; /* files with other names in the writable trees */
	struct inoset ro;     /* ... of which one name lies in a read-only tree */
	int want_shared;      /* a read-only tree is walked too: collect `shared` */
	int link_pass;        /* walking again for those other names only */
	char ***list;  /* host-run paths found (relative to src), or NULL */
	size_t *nlist;
	char path[CD_PATH_MAX];
	char *dents[SCAN_MAX_DEPTH + 2]; /* getdents64 buffers, one per depth, made on use */
};

/* Remember REL (relative to the tree; "" is the tree itself) with why,
 * as "SRC/REL\0WHY" (WHY empty for an ordinary new path). */
static int list_add_why(struct walk *w, const char *rel, const char *why)
{
	size_t sl, rl, wl;
	char **v, *s;
	int root = !strcmp(w->src, "/");

	if (!w->list)
		return 0;
	if (*w->nlist >= CD_PLAN_MAX_MOUNTS * 4)
		return 0; /* enough to warn about; the mounts are what protects */
	sl = strlen(w->src);
	rl = strlen(rel);
	wl = why ? strlen(why) : 0;
	v = realloc(*w->list, (*w->nlist + 1) * sizeof *v);
	if (!v)
		return cd_err_set(w->err, -ENOMEM, "out of memory");
	*w->list = v;
	if (!(s = malloc(sl + 1 + rl + wl + 2)))
		return cd_err_set(w->err, -ENOMEM, "out of memory");
	memcpy(s, w->src, sl);
	if (rl && !root)
		s[sl++] = '/';
	memcpy(s + sl, rel, rl + 1);
	memcpy(s + sl + rl + 1, why ? why : "", wl + 1);
	v[(*w->nlist)++] = s;
	return 0;
}

static int list_add(struct walk *w, const char *host)
{
	return list_add_why(w, host[w->srclen] ? host + w->srclen + 1 : "", NULL);
}

static int has_dest(const struct cd_plan *p, const char *dest, enum cd_mount_kind kind)
{
	size_t i;

	for (i = 0; i < p->nmounts; i++) {
		if (p->mounts[i].kind == kind && strcmp(p->mounts[i].dest, dest) == 0)
			return 1;
	}
	return 0;
}

/* Mount over the host path `host` (below w->src) at its place inside. */
static int cover(struct walk *w, const char *host, enum cd_mount_kind kind, unsigned flags,
                 const char *why)
{
	char dest[CD_PATH_MAX];
	int n;

	if (w->list_only)
		return 0;
	n = snprintf(dest, sizeof dest, "%s%s", strcmp(w->dest, "/") ? w->dest : "",
	             host + w->srclen);
	if (n < 0 || (size_t)n >= sizeof dest)
		return cd_err_set(
		        w->err, -ENAMETOOLONG,
		        "'%.64s...' is longer than PATH_MAX inside the sandbox: it cannot "
		        "be covered, so the run is refused",
		        host);
	if ((kind != CD_MNT_MASK || w->link_pass) && has_dest(w->p, dest, kind))
		return 0;
	return cd_plan_mount_add(w->p, kind, flags, kind == CD_MNT_BIND ? host : NULL, dest, why,
	                         w->err);
}

static int suffix_is(const char *path, size_t len, const char *tail)
{
	size_t tl = strlen(tail);

	return len > tl && path[len - tl - 1] == '/' && memcmp(path + len - tl, tail, tl) == 0;
}

/* A .pem holds a private key when it says so (certificates stay
 * readable); one larger than KEY_SNIFF_BYTES, or unreadable to us, is
 * covered unread. */
static int pem_is_private(int dfd, const char *name, int follow)
{
	char *buf;
	ssize_t n = 0;
	size_t got = 0;
	int fd, hit = 1;
	struct stat st;

	fd = openat(dfd, name,
	            O_RDONLY | (follow ? 0 : O_NOFOLLOW) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= KEY_SNIFF_BYTES &&
	    (buf = malloc(KEY_SNIFF_BYTES))) {
		while (got < KEY_SNIFF_BYTES &&
		       (n = read(fd, buf + got, KEY_SNIFF_BYTES - got)) > 0)
			got += (size_t)n;
		hit = n < 0 || memmem(buf, got, "PRIVATE KEY-----", 16) != NULL;
		free(buf);
	}
	close(fd);
	return hit;
}

/* Anything in a .ssh directory but public keys, known hosts, the list of
 * authorized keys and the client's config (not secrets; the config is
 * read-only in a read-only tree and pinned nowhere else): private keys
 * under any name.  And anything below a .aws directory. */
static int in_ssh_dir(const char *path, size_t len, const char *name, size_t nl)
{
	static const char *const open_names[] = { "known_hosts", "known_hosts.old",
		                                  "authorized_keys", "config", NULL };
	size_t i;

	/* Anything below a .aws directory: credentials, config and the
	 * SSO and CLI token caches (.aws/sso/cache/, .aws/cli/cache/). */
	if (len > nl && memmem(path, len - nl, "/.aws/", 6))
		return 1;
	if (len < nl + 6 || memcmp(path + len - nl - 6, "/.ssh/", 6) != 0)
		return 0;
	if (nl > 4 && !memcmp(name + nl - 4, ".pub", 4))
		return 0;
	for (i = 0; open_names[i]; i++) {
		if (!strcmp(name, open_names[i]))
			return 0;
	}
	return 1;
}

/* cd_credential_files, split once per walk so that an entry costs a few
 * integer compares: the name a pattern ends in (its last component, or
 * the extension of "*.EXT"), its length, and the pattern. */
static void creds_init(struct walk *w)
{
	size_t i;

	for (i = 0; i < CD_ARRAY_SIZE(w->cred) && cd_credential_files[i]; i++) {
		const char *c = cd_credential_files[i], *slash = strrchr(c, '/');

		w->cred[i].full = c;
		w->cred[i].suffix = c[0] == '*';
		w->cred[i].base = w->cred[i].suffix ? c + 1 : slash ? slash + 1 : c;
		w->cred[i].blen = strlen(w->cred[i].base);
		w->ncred = i + 1;
	}
}

/* `name` (w->path, length len) names a credential file.  For a symlink
 * (link), a .pem is judged by what it points to. */
static int is_credential(struct walk *w, int dfd, const char *name, size_t nl, size_t len,
                         int link)
{
	const char *rel = w->path + w->srclen + 1;
	size_t i;

	for (i = 0; i < w->ncred; i++) {
		const struct cred_pat *c = &w->cred[i];

		if (c->suffix) {
			if (nl > c->blen && !memcmp(name + nl - c->blen, c->base, c->blen))
				return 1;
		} else if (nl == c->blen && name[0] == c->base[0] && !memcmp(name, c->base, nl) &&
		           (c->base == c->full || suffix_is(w->path, len, c->full))) {
			return 1;
		}
	}
	if (in_ssh_dir(w->path, len, name, nl))
		return 1;
	if (nl > 4 && !memcmp(name + nl - 4, ".pem", 4) && pem_is_private(dfd, name, link))
		return 1;
	for (i = 0; i < w->o->ncover_files; i++) {
		const char *g = w->o->cover_files[i];
		if (fnmatch(g, strchr(g, '/') ? rel : name, FNM_PATHNAME) == 0)
			return 1;
	}
	return 0;
}

static int is_host_run(const char *name)
{
	size_t i;

	if (name[0] != '.')
		return 0;
	for (i = 0; cd_host_run_names[i]; i++) {
		if (!strcmp(name, cd_host_run_names[i]))
			return 1;
	}
	return 0;
}

static int refuse_symlink(struct walk *w, const char *host)
{
	if (w->list_only)
		return list_add(w, host);
	return cd_err_set(w->err, -CD_E_USAGE,
	                  "'%s' is a symlink; a writable tree cannot keep it read-only (the host "
	                  "would run what it points to), so the run is refused",
	                  host);
}

static int protect_gitdir(struct walk *w, const char *gd, unsigned depth);

/* A git directory, wherever it is and whatever its name (a repository's
 * .git, a submodule's, a worktree's, a bare repository, a tree made into
 * one): git's own rule, a HEAD and either an objects directory (a symlink
 * to one counts) or a commondir file naming where the objects are.  Wider
 * than git's (which also wants refs and a HEAD that parses): what it
 * wrongly takes for one is only kept read-only or reported. */
static int is_gitdir(const char *dir)
{
	char c[CD_PATH_MAX];
	struct stat st;
	int n = snprintf(c, sizeof c, "%s/HEAD", dir);

	if (n < 0 || (size_t)n + sizeof "/commondir" > sizeof c || lstat(c, &st) < 0 ||
	    S_ISDIR(st.st_mode))
		return 0;
	/* objects: a directory, or a symlink even while it dangles (a later
	 * run may create its target: counted now, erring toward a pin). */
	memcpy(c + n - 4, "objects", 8);
	if (lstat(c, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)))
		return 1;
	memcpy(c + n - 4, "commondir", 10);
	return lstat(c, &st) == 0;
}

/* Does the HEAD of git directory `dir` still parse the way git wants
 * ("ref: refs/...", a symlink into refs/, or an object id)?  If not git
 * skips the directory and takes the one above it, which the run may
 * have made.  1 yes, 0 no (or gone). */
static int head_parses(const char *dir)
{
	char c[CD_PATH_MAX], buf[256];
	ssize_t n;
	size_t i;
	int fd;

	if (snprintf(c, sizeof c, "%s/HEAD", dir) >= (int)sizeof c)
		return 0;
	if ((n = readlink(c, buf, sizeof buf - 1)) > 0)
		return (size_t)n > 5 && !memcmp(buf, "refs/", 5);
	fd = open(c, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (!strncmp(buf, "ref: refs/", 10))
		return 1;
	for (i = 0; buf[i] && strchr("0123456789abcdef", buf[i]); i++)
		;
	return !buf[i] && (i == 40 || i == 64);
}

/* gd/modules holds the git directories of submodules, at paths that may
 * have several components: each directory with a HEAD is one. */
static int protect_modules(struct walk *w, const char *dir, unsigned depth)
{
	char sub[CD_PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *d;
	int r = 0, n;

	if (depth > MODULES_MAX_DEPTH)
		return cd_err_set(w->err, -CD_E_LIMIT,
		                  "'%s': submodules nested deeper than %d levels; refused", dir,
		                  MODULES_MAX_DEPTH);
	if ((r = cover(w, dir, CD_MNT_BIND, CD_MNT_RW, NULL)) < 0)
		return r;
	if (!(d = opendir(dir)))
		return 0;
	while (r == 0 && (e = readdir(d))) {
		int is_gd;

		if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, "..")))
			continue;
		n = snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
		if (n < 0 || (size_t)n + sizeof "/HEAD" > sizeof sub) {
			r = cd_err_set(w->err, -ENAMETOOLONG, "'%.64s...': path too long", dir);
			break;
		}
		memcpy(sub + n, "/HEAD", sizeof "/HEAD");
		is_gd = lstat(sub, &st) == 0;
		sub[n] = '\0';
		if (lstat(sub, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode))
			r = refuse_symlink(w, sub); /* git would follow it */
		else if (S_ISDIR(st.st_mode))
			r = is_gd ? protect_gitdir(w, sub, depth + 1)
			          : protect_modules(w, sub, depth + 1);
	}
	closedir(d);
	return r;
}

/* gd/name, when it exists: read-only (a symlink is refused). */
static int pin_control(struct walk *w, const char *gd, const char *name)
{
	char c[CD_PATH_MAX];
	struct stat st;
	int n = snprintf(c, sizeof c, "%s/%s", gd, name);

	if (n < 0 || (size_t)n >= sizeof c)
		return cd_err_set(w->err, -ENAMETOOLONG, "'%.64s...': path too long", gd);
	if (lstat(c, &st) < 0)
		return 0;
	if (S_ISLNK(st.st_mode))
		return refuse_symlink(w, c);
	if (list_add(w, c) < 0)
		return -ENOMEM;
	return cover(w, c, CD_MNT_REMOUNT_RO, 0, WHY_GIT);
}

/* A git directory (a repository's .git, a submodule's or worktree's):
 * itself a mount point (no rename-and-replace), its control paths
 * read-only (commondir among them; objects/info/alternates too: other
 * object stores git would read), its submodules' directories the same.
 * HEAD stays writable (switching branches writes it); the check after
 * the run reports one that no longer parses. */
static int protect_gitdir(struct walk *w, const char *gd, unsigned depth)
{
	char c[CD_PATH_MAX];
	struct stat st;
	size_t i;
	int r, n;

	if ((r = cover(w, gd, CD_MNT_BIND, CD_MNT_RW, NULL)) < 0)
		return r;
	for (i = 0; cd_git_control_names[i]; i++) {
		if ((r = pin_control(w, gd, cd_git_control_names[i])) < 0)
			return r;
	}
	if ((r = pin_control(w, gd, "objects/info/alternates")) < 0)
		return r;
	n = snprintf(c, sizeof c, "%s/modules", gd);
	if (n > 0 && (size_t)n < sizeof c && lstat(c, &st) == 0 && S_ISDIR(st.st_mode))
		return protect_modules(w, c, depth);
	return 0;
}

/* A .git file ("gitdir: PATH", linked worktrees and submodules): itself
 * read-only so it cannot be pointed elsewhere, and the git directory it
 * names protected when it lies in a tree the sandbox can write. */
static int protect_gitfile(struct walk *w, int dfd, const char *name)
{
	char buf[CD_PATH_MAX], target[CD_PATH_MAX], canon[CD_PATH_MAX];
	const char *dir_end = strrchr(w->path, '/');
	ssize_t n;
	size_t i;
	int fd, r;

	if (w->list_only)
		return 0;
	if ((r = cover(w, w->path, CD_MNT_REMOUNT_RO, 0, WHY_GIT)) < 0)
		return r;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 8 || memcmp(buf, "gitdir: ", 8) != 0)
		return 0; /* git ignores it */
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (buf[8] == '/')
		r = snprintf(target, sizeof target, "%s", buf + 8);
	else
		r = snprintf(target, sizeof target, "%.*s/%s", (int)(dir_end - w->path), w->path,
		             buf + 8);
	if (r < 0 || (size_t)r >= sizeof target ||
	    cd_path_canonical(target, canon, sizeof canon) < 0)
		return 0; /* git finds nothing there either */
	for (i = 0; i < w->p->nmounts; i++) {
		const struct cd_mount *m = &w->p->mounts[i];
		struct walk sub;

		if (m->kind != CD_MNT_BIND || !(m->flags & CD_MNT_RW) || !m->src ||
		    (m->flags & CD_MNT_DEV) || i < w->first || m->why ||
		    (w->p->scratch_host && !strcmp(m->src, w->p->scratch_host)) ||
		    !cd_path_is_under(canon, m->src))
			continue;
		sub = *w;
		sub.src = m->src;
		sub.dest = m->dest;
		sub.srclen = strcmp(m->src, "/") ? strlen(m->src) : 0;
		sub.list = NULL;
		return protect_gitdir(&sub, canon, 0);
	}
	return 0;
}

static int ino_cmp(const void *a, const void *b)
{
	const struct ino *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int inoset_add(struct walk *w, struct inoset *s, dev_t dev, ino_t ino)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct ino *v;

		if (cap > CD_SOCKET_SCAN_MAX * 2 || !(v = realloc(s->v, cap * sizeof *v)))
			return cd_err_set(w->err, -ENOMEM, "out of memory");
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n].dev = dev;
	s->v[s->n++].ino = ino;
	s->sorted = 0;
	return 0;
}

static int inoset_has(struct inoset *s, dev_t dev, ino_t ino)
{
	struct ino key = { dev, ino };

	if (!s->n)
		return 0;
	if (!s->sorted) {
		qsort(s->v, s->n, sizeof *s->v, ino_cmp);
		s->sorted = 1;
	}
	return bsearch(&key, s->v, s->n, sizeof *s->v, ino_cmp) != NULL;
}

/* A covered credential with other names: remember it, so that a second
 * walk of every bound tree covers those too (a hard link reads the same
 * bytes). */
static int note_links(struct walk *w, int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_nlink < 2)
		return 0;
	return inoset_add(w, &w->credlinks, st.st_dev, st.st_ino);
}

/* The second walk: a regular file that is another name of a covered
 * credential is covered; in a writable tree, one that is another name of
 * a file of a read-only tree is kept read-only. */
static int link_visit(struct walk *w, int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_nlink < 2)
		return 0;
	if (inoset_has(&w->credlinks, st.st_dev, st.st_ino))
		return cover(w, w->path, CD_MNT_MASK, CD_MNT_OPTIONAL, WHY_CREDENTIAL);
	if (w->writable && inoset_has(&w->ro, st.st_dev, st.st_ino))
		return cover(w, w->path, CD_MNT_REMOUNT_RO, 0, WHY_RO_LINK);
	return 0;
}

/* In a read-only tree, while writable trees hold files with other names:
 * is this one of them? */
static int note_ro_link(struct walk *w, int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_nlink < 2 || !inoset_has(&w->shared, st.st_dev, st.st_ino))
		return 0;
	return inoset_add(w, &w->ro, st.st_dev, st.st_ino);
}

static int walk_dir(struct walk *w, int dfd, size_t len, unsigned depth);
static int unopenable(struct walk *w, int dfd, const char *name, int e);

/* Where a host path lies inside the sandbox: under the bound tree with
 * the longest source holding it.  0, or -1 when no tree holds it. */
static int inside_path(const struct walk *w, const char *host, char *out, size_t outlen)
{
	const struct cd_mount *best = NULL;
	size_t i, bl = 0, sl;
	int n;

	for (i = w->first; i < w->p->nmounts; i++) {
		const struct cd_mount *m = &w->p->mounts[i];

		if ((m->kind != CD_MNT_BIND && m->kind != CD_MNT_OVERLAY) || !m->src || m->why ||
		    (m->flags & CD_MNT_DEV) || !cd_path_is_under(host, m->src))
			continue;
		if (!best || strlen(m->src) > bl) {
			best = m;
			bl = strlen(m->src);
		}
	}
	if (!best)
		return -1;
	sl = strcmp(best->src, "/") ? bl : 0;
	n = snprintf(out, outlen, "%s%s", strcmp(best->dest, "/") || !host[sl] ? best->dest : "",
	             host + sl);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

/* A symlink with a credential's name (.netrc -> notes/token, .aws ->
 * ../cloud): the host's tools read what it points to, so that is the
 * credential.  The host resolves it once, here; when the target lies in
 * a bound tree it is covered there (a directory named .ssh or .aws whole,
 * the file a pattern names below a .docker, .kube or .config link).  A
 * target outside every bound tree is not there to read inside (the
 * sandbox sees no host path but the bound trees and the system
 * directories), and one that does not resolve holds nothing yet. */
static int credential_link(struct walk *w, int dfd, const char *name, size_t nl, size_t len)
{
	char canon[CD_PATH_MAX], inside[CD_PATH_MAX], sub[CD_PATH_MAX];
	const char *rest = NULL;
	struct stat st;
	size_t i;
	int whole = !strcmp(name, ".ssh") || !strcmp(name, ".aws");

	for (i = 0; !whole && !rest && i < w->ncred; i++) {
		const char *c = w->cred[i].full;

		if (!strncmp(c, name, nl) && c[nl] == '/')
			rest = c + nl; /* "/config.json" */
	}
	if (!whole && !rest && !is_credential(w, dfd, name, nl, len, 1))
		return 0;
	if (cd_path_canonical(w->path, canon, sizeof canon) < 0 || stat(canon, &st) < 0)
		return 0; /* dangling: nothing to read */
	if (S_ISDIR(st.st_mode) != (whole || rest != NULL))
		return 0; /* .netrc -> a directory, .ssh -> a file: nothing a tool reads */
	if (rest) {
		if (snprintf(sub, sizeof sub, "%s%s", canon, rest) >= (int)sizeof sub ||
		    lstat(sub, &st) < 0 || !S_ISREG(st.st_mode))
			return 0;
		memcpy(canon, sub, strlen(sub) + 1);
	}
	if (inside_path(w, canon, inside, sizeof inside) < 0 || has_dest(w->p, inside, CD_MNT_MASK))
		return 0;
	return cd_plan_mount_add(w->p, CD_MNT_MASK, CD_MNT_OPTIONAL, NULL, inside, WHY_CRED_LINK,
	                         w->err);
}

/* The one metadata read the walk makes per regular file, and only in a
 * writable tree whose filesystem honours setuid, or when a read-only
 * tree is bound too: statx asking for the mode and link count alone (no
 * attribute the filesystem would have to compute or fetch from a
 * server).  1 when it is set-id; a file with other names is remembered
 * (w->shared).  A file that vanished is not there to rewrite; any other
 * failure counts as set-id (kept read-only, never missed). */
static int is_setid(struct walk *w, int dfd, const char *name)
{
	struct statx sx;

	if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
	          STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_INO, &sx) < 0)
		return w->suid_matters && errno != ENOENT;
	if ((sx.stx_mask & (STATX_MODE | STATX_NLINK | STATX_INO)) !=
	    (STATX_MODE | STATX_NLINK | STATX_INO))
		return w->suid_matters;
	if (w->want_shared && S_ISREG(sx.stx_mode) && sx.stx_nlink > 1 &&
	    inoset_add(w, &w->shared, makedev(sx.stx_dev_major, sx.stx_dev_minor), sx.stx_ino) < 0)
		return -ENOMEM;
	return S_ISREG(sx.stx_mode) && (sx.stx_mode & (S_ISUID | S_ISGID)) && w->suid_matters;
}

static int visit(struct walk *w, int dfd, const char *name, unsigned char type, size_t len,
                 unsigned depth)
{
	size_t nl = strlen(name);
	struct stat st;
	int r = 0, fd;

	if (len + 1 + nl + 1 >= sizeof w->path)
		return cd_err_set(
		        w->err, -ENAMETOOLONG,
		        "a path under '%s' is longer than PATH_MAX: cordon cannot check it "
		        "for host sockets, git control files and credentials, so the run "
		        "is refused",
		        w->src);
	w->path[len] = '/';
	memcpy(w->path + len + 1, name, nl + 1);
	if (type == DT_UNKNOWN) {
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			goto out;
		type = S_ISDIR(st.st_mode)    ? DT_DIR
		       : S_ISSOCK(st.st_mode) ? DT_SOCK
		       : S_ISLNK(st.st_mode)  ? DT_LNK
		       : S_ISREG(st.st_mode)  ? DT_REG
		                              : DT_UNKNOWN;
	}
	if (w->link_pass) {
		if (type == DT_REG)
			r = link_visit(w, dfd, name);
		if (r == 0 && type == DT_DIR)
			goto descend;
		goto out;
	}
	if (type == DT_SOCK && w->sockets) {
		r = cover(w, w->path, CD_MNT_MASK, CD_MNT_OPTIONAL, WHY_SOCKET);
	} else if (type == DT_LNK && w->creds && !w->list_only) {
		r = credential_link(w, dfd, name, nl, len + 1 + nl);
	} else if (type == DT_REG && w->creds &&
	           is_credential(w, dfd, name, nl, len + 1 + nl, 0)) {
		r = cover(w, w->path, CD_MNT_MASK, CD_MNT_OPTIONAL, WHY_CREDENTIAL);
		if (r == 0)
			r = note_links(w, dfd, name);
	}
	/* A setuid or setgid file already in a writable tree keeps its bits
	 * when its content is rewritten through a shared mapping (the kernel
	 * clears them on write(2), not on page faults), and the seccomp mode
	 * filter never sees that: such a file is kept read-only. */
	if (r == 0 && w->writable && (w->suid_matters || w->want_shared) && !w->list_only &&
	    type == DT_REG && (r = is_setid(w, dfd, name)) > 0)
		r = cover(w, w->path, CD_MNT_REMOUNT_RO, 0, WHY_SETUID);
	else if (r == 0 && !w->writable && w->shared.n && !w->list_only && type == DT_REG)
		r = note_ro_link(w, dfd, name);
	/* A git directory not named .git (a bare repository, one a .git
	 * file names): found by its HEAD, protected the same way. */
	if (r == 0 && w->protect && (type == DT_REG || type == DT_LNK) && !strcmp(name, "HEAD") &&
	    !suffix_is(w->path, len, ".git")) {
		char dir[CD_PATH_MAX];

		memcpy(dir, w->path, len);
		dir[len] = '\0';
		if (is_gitdir(dir)) {
			/* after the run, a directory that was not one before */
			r = list_add_why(w, dir[w->srclen] ? dir + w->srclen + 1 : "",
			                 WHY_BECAME_GIT);
			if (r == 0)
				r = protect_gitdir(w, dir, 0);
		}
	}
	if (r == 0 && w->protect && is_host_run(name)) {
		if ((r = list_add(w, w->path)) < 0)
			goto out;
		if (type == DT_LNK)
			r = refuse_symlink(w, w->path);
		else if (!strcmp(name, ".git") && type == DT_DIR)
			r = protect_gitdir(w, w->path, 0);
		else if (!strcmp(name, ".git") && type == DT_REG)
			r = protect_gitfile(w, dfd, name);
		else if (!w->list_only)
			r = cover(w, w->path, CD_MNT_REMOUNT_RO, 0, WHY_HOST_RUN);
		if (r == 0 && w->list_only && !strcmp(name, ".git"))
			goto out; /* listing: the control paths are listed already */
	}
descend:
	if (r == 0 && type == DT_DIR) {
		if (depth + 1 > SCAN_MAX_DEPTH) {
			r = cd_err_set(
			        w->err, -CD_E_LIMIT,
			        "'%.200s' is nested deeper than %d directories: cordon cannot "
			        "check it for host sockets, git control files and "
			        "credentials, so the run is refused",
			        w->path, SCAN_MAX_DEPTH);
			goto out;
		}
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			r = walk_dir(w, fd, len + 1 + nl, depth + 1);
		else if (errno != ENOENT)
			r = unopenable(w, dfd, name, errno);
	}
out:
	w->path[len] = '\0';
	return r;
}

/* w->path (entry `name` of dfd), a directory, cannot be opened (err).
 * After the run: reported, never skipped.  Before it, in a tree the
 * sandbox can write, one the caller owns is refused: the sandbox could
 * chmod it and reach what the walk never saw (a credential, a git
 * config).  Elsewhere (a read-only tree, or another user's directory) the
 * sandbox cannot make it readable either: skipped, as long as it cannot
 * be searched (names inside would be reachable). */
static int unopenable(struct walk *w, int dfd, const char *name, int e)
{
	struct stat st;

	if (w->list_only)
		return list_add_why(w, w->path + w->srclen + 1, WHY_UNREADABLE);
	if (w->writable && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_uid == geteuid())
		return cd_err_set(w->err, -CD_E_USAGE,
		                  "cannot read '%s' (%s) to check it for host sockets, git "
		                  "control files and credentials, and the sandbox could make it "
		                  "readable: run 'chmod u+rx' on it or run elsewhere; refused",
		                  w->path, strerror(e));
	if (!(e == EACCES && faccessat(dfd, name, X_OK, AT_EACCESS) < 0))
		/* unlistable but searchable: names inside are reachable */
		return cd_err_sys(w->err, -e,
		                  "cannot check '%s' for host sockets, git control files and "
		                  "credentials, so the run is refused",
		                  w->path);
	return 0;
}

static int64_t ctime_ns(const struct stat *st)
{
	return (int64_t)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
}

/* workspace-write: each directory of the tree and its ctime, so that
 * cd_plan_planted reads only the ones whose entries changed (a new entry,
 * a rename or a removal sets the directory's ctime, which no one without
 * CAP_SYS_TIME can set back). */
static int stamp(struct walk *w, int dfd)
{
	struct cd_plan *p = w->p;
	struct cd_dir_stamp *v;
	struct stat st;
	const char *rel = w->path[w->srclen] ? w->path + w->srclen + 1 : "";

	if (!p->trees[w->tree].complete)
		return 0;
	if (p->ndirs >= STAMP_MAX || fstat(dfd, &st) < 0) {
		p->trees[w->tree].complete = 0; /* the check walks the whole tree instead */
		return 0;
	}
	if (p->ndirs % 256 == 0) {
		v = realloc(p->dirs, (p->ndirs + 256) * sizeof *v);
		if (!v)
			return cd_err_set(w->err, -ENOMEM, "out of memory");
		p->dirs = v;
	}
	if (!(p->dirs[p->ndirs].rel = strdup(rel)))
		return cd_err_set(w->err, -ENOMEM, "out of memory");
	p->dirs[p->ndirs].gitdir = 0;
	p->dirs[p->ndirs].tree = w->tree;
	p->dirs[p->ndirs++].ctime_ns = ctime_ns(&st);
	return 0;
}

/* The entries of dfd, read straight with getdents64 into this depth's
 * buffer (no DIR stream: no allocation and no fcntl calls per directory),
 * each handed to visit(). */
static int walk_dir(struct walk *w, int dfd, size_t len, unsigned depth)
{
	size_t idx = w->p->ndirs;
	char **buf = &w->dents[depth < SCAN_MAX_DEPTH + 1 ? depth : SCAN_MAX_DEPTH + 1];
	int r = 0, head = 0;
	long n;

	if (w->stamp && (r = stamp(w, dfd)) < 0)
		goto out;
	if (!*buf && !(*buf = malloc(DENTS_BYTES))) {
		r = cd_err_set(w->err, -ENOMEM, "out of memory");
		goto out;
	}
	while (r == 0 && (n = syscall(SYS_getdents64, dfd, *buf, DENTS_BYTES)) != 0) {
		long off = 0;

		if (n < 0) {
			r = cd_err_sys(w->err, -errno,
			               "cannot read '%s' to check it for host sockets, git control "
			               "files and credentials; refused",
			               w->path);
			break;
		}
		while (r == 0 && off < n) {
			const struct linux_dirent64 *e = (const void *)(*buf + off);

			off += e->d_reclen;
			if (e->d_name[0] == '.' &&
			    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
				continue;
			if (++w->seen > CD_SOCKET_SCAN_MAX) {
				r = cd_err_set(w->err, -CD_E_LIMIT,
				               "cannot check '%s' for host sockets, git control files "
				               "and credentials: more than %d entries; run from a "
				               "smaller directory",
				               w->src, CD_SOCKET_SCAN_MAX);
				break;
			}
			head |= e->d_name[0] == 'H' && !strcmp(e->d_name, "HEAD");
			r = visit(w, dfd, e->d_name, e->d_type, len, depth);
		}
	}
	/* a git directory now: after the run its HEAD must still parse */
	if (r == 0 && head && w->stamp && w->p->trees[w->tree].complete && idx < w->p->ndirs &&
	    is_gitdir(w->path))
		w->p->dirs[idx].gitdir = 1;
out:
	close(dfd);
	return r;
}

/* A file bound by itself (--ro FILE, --rw FILE): the same name and
 * content checks as one met in a tree. */
static int bound_file(struct walk *w, const char *src, const char *dest)
{
	const char *slash = strrchr(src, '/');
	size_t len = strlen(src);
	char dir[CD_PATH_MAX];
	struct stat st;
	int dfd, hit;

	if (!w->creds || !slash || len >= sizeof w->path || lstat(src, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return 0;
	memcpy(dir, src, (size_t)(slash - src));
	dir[slash > src ? slash - src : 1] = '\0';
	if (slash == src)
		dir[0] = '/';
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return cd_err_sys(w->err, -errno, "cannot check '%s' for credentials; refused",
		                  src);
	memcpy(w->path, src, len + 1);
	w->src = src;
	w->srclen = (size_t)(slash - src); /* names relative to its directory */
	hit = is_credential(w, dfd, slash + 1, strlen(slash + 1), len, 0);
	close(dfd);
	if (!hit || has_dest(w->p, dest, CD_MNT_MASK))
		return 0;
	return cd_plan_mount_add(w->p, CD_MNT_MASK, CD_MNT_OPTIONAL, NULL, dest, WHY_CREDENTIAL,
	                         w->err);
}

static int walk_tree(struct walk *w, const char *src, const char *dest)
{
	size_t len = strlen(src);
	int fd;

	if (len >= sizeof w->path)
		return cd_err_set(w->err, -ENAMETOOLONG, "'%.64s...': path too long", src);
	fd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM) && (w->list_only || w->writable))
		return w->list_only ? list_add_why(w, "", WHY_UNREADABLE)
		                    : cd_err_sys(w->err, -errno,
		                                 "cannot read '%s' to check it for host sockets, "
		                                 "git control files and credentials; refused",
		                                 src);
	if (fd < 0 && errno == ENOTDIR)
		return bound_file(w, src, dest);
	if (fd < 0)
		return 0; /* gone: the child checks */
	memcpy(w->path, src, len + 1);
	w->src = src;
	w->dest = dest;
	w->srclen = strcmp(src, "/") ? len : 0;
	return walk_dir(w, fd, w->srclen, 0);
}

static void walk_free(struct walk *w)
{
	size_t i;

	for (i = 0; i < CD_ARRAY_SIZE(w->dents); i++)
		free(w->dents[i]);
	free(w);
}

/* Does the host honour setuid and setgid bits anywhere in the tree at
 * `src`?  Not when its filesystem is mounted nosuid and no other mount
 * lies below it; any doubt says yes (the walk then checks each file). */
static int suid_honoured(const char *src)
{
	size_t sl = strcmp(src, "/") ? strlen(src) : 0;
	struct statvfs sf;
	char line[2 * CD_PATH_MAX], mp[CD_PATH_MAX];
	FILE *f;
	int hit = 0;

	if (statvfs(src, &sf) < 0 || !(sf.f_flag & ST_NOSUID))
		return 1;
	if (!(f = fopen("/proc/self/mountinfo", "re")))
		return 1;
	while (!hit && fgets(line, sizeof line, f)) {
		const char *c = line;
		size_t k = 0;
		int field;

		if (!strchr(line, '\n')) {
			hit = 1; /* a line too long to read: doubt */
			break;
		}
		/* the fifth field is the mount point, octal escapes for blanks */
		for (field = 0; field < 4 && (c = strchr(c, ' ')); field++)
			c++;
		if (!c) {
			hit = 1;
			break;
		}
		while (*c && *c != ' ' && k + 1 < sizeof mp) {
			if (c[0] == '\\' && c[1] >= '0' && c[1] <= '3' && c[2] && c[3]) {
				mp[k++] = (char)((c[1] - '0') * 64 + (c[2] - '0') * 8 + (c[3] - '0'));
				c += 4;
			} else {
				mp[k++] = *c++;
			}
		}
		mp[k] = '\0';
		hit = k > sl && mp[sl] == '/' && !memcmp(mp, src, sl);
	}
	fclose(f);
	return hit;
}

static int stamp_cmp(const void *a, const void *b)
{
	const struct cd_dir_stamp *x = a, *y = b;

	if (x->tree != y->tree)
		return x->tree < y->tree ? -1 : 1;
	return strcmp(x->rel, y->rel);
}

/* A writable tree whose directories the walk stamps: plan->trees[w->tree]. */
static int stamped_tree(struct walk *w, const char *root)
{
	struct cd_plan *p = w->p;
	struct cd_stamped_tree *v;
	struct timespec now;

	if (!(v = realloc(p->trees, (p->ntrees + 1) * sizeof *v)))
		return cd_err_set(w->err, -ENOMEM, "out of memory");
	p->trees = v;
	if (!(v[p->ntrees].root = strdup(root)))
		return cd_err_set(w->err, -ENOMEM, "out of memory");
	v[p->ntrees].complete = 1;
	w->tree = p->ntrees++;
	if (w->tree == 0) {
		/* the first tree's start: a later tree is measured against it
		 * too, which can only read more directories again */
		clock_gettime(CLOCK_REALTIME, &now);
		p->scan_ns = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
	}
	return 0;
}

/* Is mount i a host tree the walk reads?  *scratch: the --scratch DIR. */
static int walked(const struct cd_plan *p, size_t i, size_t first, int *scratch)
{
	const struct cd_mount *m = &p->mounts[i];

	*scratch = p->scratch_host && m->kind == CD_MNT_BIND && m->src &&
	           !strcmp(m->src, p->scratch_host) && i < first;
	return !((i < first && !*scratch) || (m->kind != CD_MNT_BIND && m->kind != CD_MNT_OVERLAY) ||
	         (m->flags & CD_MNT_DEV) || m->why);
}

static int tree_writable(const struct cd_mount *m)
{
	return m->kind == CD_MNT_BIND && (m->flags & CD_MNT_RW);
}

/* Walk mount m (pass 0: find and cover; 1: the other names only). */
static int walk_mount(struct walk *w, const struct cd_mount *m, int scratch, int pass)
{
	struct cd_plan *p = w->p;
	int r;

	/* workspace-write's tree and --rw binds: the host runs what is
	 * written there later; the scratch is the sandbox's own. */
	w->writable = tree_writable(m);
	w->suid_matters = w->writable && !pass && suid_honoured(m->src);
	w->protect = w->writable && !scratch && !pass;
	w->link_pass = pass;
	w->list = NULL;
	w->nlist = NULL;
	w->seen = 0;
	w->stamp = w->protect;
	if (w->stamp) {
		w->list = &p->host_run;
		w->nlist = &p->nhost_run;
		if ((r = stamped_tree(w, m->src)) < 0)
			return r;
	}
	r = walk_tree(w, m->src, m->dest);
	if (w->stamp && p->ndirs)
		qsort(p->dirs, p->ndirs, sizeof *p->dirs, stamp_cmp);
	return r;
}

int cd_plan_scan_trees(struct cd_plan *p, size_t first, const struct cd_plan_opts *o,
                       struct cd_err *err)
{
	size_t i, n = p->nmounts;
	struct walk *w = calloc(1, sizeof *w);
	int r = 0, scratch, round, nw = 0, nro = 0;

	if (!w)
		return cd_err_set(err, -ENOMEM, "out of memory");
	w->p = p;
	w->o = o;
	w->err = err;
	w->sockets = !o->skip_socket_scan;
	w->creds = 1;
	creds_init(w);
	w->first = first;
	for (i = 0; i < n; i++) {
		if (walked(p, i, first, &scratch))
			*(tree_writable(&p->mounts[i]) ? &nw : &nro) += 1;
	}
	/* Writable trees first, so that a read-only one can be checked for
	 * other names of their files (a hard link across the trees would
	 * make the read-only name writable). */
	w->want_shared = nw && nro;
	for (round = 0; round < 2 && r == 0; round++) {
		for (i = 0; i < n && r == 0; i++) {
			if (walked(p, i, first, &scratch) &&
			    tree_writable(&p->mounts[i]) == (round == 0))
				r = walk_mount(w, &p->mounts[i], scratch, 0);
		}
	}
	/* The other names of covered credentials, in any tree, and those
	 * of read-only files in the writable trees: one more walk. */
	for (i = 0; i < n && r == 0 && (w->credlinks.n || w->ro.n); i++) {
		if (walked(p, i, first, &scratch))
			r = walk_mount(w, &p->mounts[i], scratch, 1);
	}
	free(w->credlinks.v);
	free(w->shared.v);
	free(w->ro.v);
	walk_free(w);
	return r;
}

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

	return bsearch(&key, p->dirs, p->ndirs, sizeof *p->dirs, stamp_cmp) != NULL;
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
	int gd = is_gitdir(w->path), r = 0, fd;
	struct dirent *e;
	DIR *d = opendir(w->path);

	if (!d)
		return errno == ENOENT || errno == ENOTDIR
		               ? 0 /* gone: its parent changed too */
		               : list_add_why(w, ds->rel, WHY_UNREADABLE);
	if (gd && !ds->gitdir)
		r = list_add_why(w, ds->rel, WHY_BECAME_GIT);
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
		if (is_host_run(e->d_name) || (gd && name_in(e->d_name, cd_git_control_names)))
			r = list_add(w, w->path);
		/* a new .git is reported whole, its insides need no look */
		if (r == 0 && strcmp(e->d_name, ".git") != 0 &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode) && !known_dir(p, w->tree, w->path + w->srclen + 1)) {
			fd = openat(dirfd(d), e->d_name,
			            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				r = walk_dir(w, fd, len + 1 + nl, 1);
			else if (errno != ENOENT)
				r = list_add_why(w, w->path + w->srclen + 1, WHY_UNREADABLE);
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
		return errno == ENOENT ? 0 /* the tree is gone: nothing of it to run */
		                       : list_add_why(w, "", WHY_UNREADABLE);
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
		if (ds->gitdir && !head_parses(w->path) &&
		    (r = list_add_why(w, ds->rel, WHY_BAD_HEAD)) < 0)
			break;
		if (ctime_ns(&st) == ds->ctime_ns && ds->ctime_ns < p->scan_ns - STAMP_GUARD_NS)
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
		r = p->trees[t].complete ? changed_dirs(w) : walk_tree(w, root, root);
	}
	walk_free(w);
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
