/* tree-creds.c — what the tree walk (tree-scan.c) asks of each file
 * about credentials and privileges: is it a credential by its name (the
 * list of profile.h, anything in .ssh but public files, anything below
 * .aws, a .pem holding a private key, the profile's cover_files), where a
 * credential-named symlink's target lies, which files have other names
 * across the bound trees (hard links), and which are setuid or setgid
 * in a writable tree. */
#include "tree-scan-int.h"

#include "util/bounds.h"
#include "util/path.h"
#include "profile.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fnmatch.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

int cd_tree_suffix_is(const char *path, size_t len, const char *tail)
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
void cd_tree_creds_init(struct walk *w)
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
int cd_tree_is_credential(struct walk *w, int dfd, const char *name, size_t nl, size_t len,
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
		           (c->base == c->full || cd_tree_suffix_is(w->path, len, c->full))) {
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
int cd_tree_note_links(struct walk *w, int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_nlink < 2)
		return 0;
	return inoset_add(w, &w->credlinks, st.st_dev, st.st_ino);
}

/* The second walk: a regular file that is another name of a covered
 * credential is covered; in a writable tree, one that is another name of
 * a file of a read-only tree is kept read-only. */
int cd_tree_link_visit(struct walk *w, int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_nlink < 2)
		return 0;
	if (inoset_has(&w->credlinks, st.st_dev, st.st_ino))
		return cd_tree_cover(w, w->path, CD_MNT_MASK, CD_MNT_OPTIONAL, WHY_CREDENTIAL);
	if (w->writable && inoset_has(&w->ro, st.st_dev, st.st_ino))
		return cd_tree_cover(w, w->path, CD_MNT_REMOUNT_RO, 0, WHY_RO_LINK);
	return 0;
}

/* In a read-only tree, while writable trees hold files with other names:
 * is this one of them? */
int cd_tree_note_ro_link(struct walk *w, int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_nlink < 2 || !inoset_has(&w->shared, st.st_dev, st.st_ino))
		return 0;
	return inoset_add(w, &w->ro, st.st_dev, st.st_ino);
}

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
int cd_tree_credential_link(struct walk *w, int dfd, const char *name, size_t nl, size_t len)
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
	if (!whole && !rest && !cd_tree_is_credential(w, dfd, name, nl, len, 1))
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
	if (inside_path(w, canon, inside, sizeof inside) < 0 ||
	    cd_tree_has_dest(w->p, inside, CD_MNT_MASK))
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
int cd_tree_is_setid(struct walk *w, int dfd, const char *name)
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

/* Does the host honour setuid and setgid bits anywhere in the tree at
 * `src`?  Not when its filesystem is mounted nosuid and no other mount
 * lies below it; any doubt says yes (the walk then checks each file). */
int cd_tree_suid_honoured(const char *src)
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
				mp[k++] =
				        (char)((c[1] - '0') * 64 + (c[2] - '0') * 8 + (c[3] - '0'));
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
