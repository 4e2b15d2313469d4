/* tree-creds.c — what the tree walk (tree-scan.c) asks of each file
 * about credentials and privileges: is it a credential by its name (the
 * list of profile.h, anything below .ssh but public files, anything below
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
#include <strings.h>
#include <dirent.h>
#include <fnmatch.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

int cd_tree_suffix_is(const char *path, size_t len, const char *tail)
{
	size_t tl = strlen(tail);

	return len > tl && path[len - tl - 1] == '/' && memcmp(path + len - tl, tail, tl) == 0;
}

/* A .pem holds a private key when it says so (certificates stay
 * readable): a PEM or OpenSSH "PRIVATE KEY-----" block, or an armored
 * PGP "PRIVATE KEY BLOCK-----"; one larger than KEY_SNIFF_BYTES, or unreadable to us (fd
 * -1: the open failed), is covered unread. */
static int pem_is_private(int fd)
{
	char *buf;
	ssize_t n = 0;
	size_t got = 0;
	int hit = 1;
	struct stat st;

	if (fd < 0)
		return 1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= KEY_SNIFF_BYTES &&
	    (buf = malloc(KEY_SNIFF_BYTES))) {
		while (got < KEY_SNIFF_BYTES &&
		       (n = pread(fd, buf + got, KEY_SNIFF_BYTES - got, (off_t)got)) > 0)
			got += (size_t)n;
		hit = n < 0 || memmem(buf, got, "PRIVATE KEY-----", 16) != NULL ||
		      memmem(buf, got, "PRIVATE KEY BLOCK-----", 22) != NULL;
		explicit_bzero(buf, got);
		free(buf);
	}
	return hit;
}

/* The content of the file open at fd when it is a regular file of at
 * most max bytes (malloc'd, *ret_len bytes), else NULL: *ret_big says it
 * was larger (head: its first max bytes are read all the same).
 * Unreadable to us (fd -1: a rootless caller's sandbox cannot read it
 * either) or not a regular file: NULL. */
static char *sniff_head(int fd, size_t max, int head, size_t *ret_len, int *ret_big)
{
	char *buf = NULL;
	ssize_t n = 0;
	size_t got = 0;
	struct stat st;

	*ret_big = 0;
	*ret_len = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		*ret_big = (uint64_t)st.st_size > max;
		if ((head || !*ret_big) && (buf = malloc(max + 1))) {
			while (got < max && (n = pread(fd, buf + got, max - got, (off_t)got)) > 0)
				got += (size_t)n;
			if (n < 0) {
				free(buf);
				buf = NULL;
			}
		}
	}
	*ret_len = got;
	return buf;
}

static char *sniff(int fd, size_t max, size_t *ret_len, int *ret_big)
{
	return sniff_head(fd, max, 0, ret_len, ret_big);
}

/* Does buf hold "key" with a non-empty string value ("key": "v...")? */
static int json_secret(const char *buf, size_t n, const char *key)
{
	size_t kl = strlen(key);
	const char *p = buf, *end = buf + n;

	while ((p = memmem(p, (size_t)(end - p), key, kl))) {
		for (p += kl; p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'); p++)
			;
		if (p >= end || *p != ':')
			continue;
		for (p++; p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'); p++)
			;
		if (end - p >= 2 && p[0] == '"' && p[1] != '"')
			return 1;
	}
	return 0;
}

#define JSON_HEAD (1024 * 1024) /* a service account key is ~2.3 KB */

/* A .json holding a Google credential: a service account key or a user's
 * application default credentials (the kind and its secret both named),
 * read whole up to JSON_HEAD (a key padded, pretty-printed or annotated
 * past 16 KiB included), or holding any "refresh_token" or
 * "client_secret" with a value; one larger when its first JSON_HEAD
 * bytes name any of these at all (err toward covering; a
 * package-lock.json names none). */
static int json_is_cred(int fd)
{
	size_t got;
	int big, hit;
	char *buf = sniff_head(fd, JSON_HEAD, 1, &got, &big);

	if (!buf)
		return 0;
	if (!big)
		hit = (memmem(buf, got, "\"service_account\"", 17) &&
		       memmem(buf, got, "\"private_key\"", 13)) ||
		      (memmem(buf, got, "\"authorized_user\"", 17) &&
		       memmem(buf, got, "\"refresh_token\"", 15)) ||
		      json_secret(buf, got, "\"refresh_token\"") ||
		      json_secret(buf, got, "\"client_secret\"");
	else
		hit = memmem(buf, got, "\"service_account\"", 17) ||
		      memmem(buf, got, "\"private_key\"", 13) ||
		      memmem(buf, got, "\"authorized_user\"", 17) ||
		      memmem(buf, got, "\"refresh_token\"", 15) ||
		      memmem(buf, got, "\"client_secret\"", 15);
	explicit_bzero(buf, got);
	free(buf);
	return hit;
}

/* The names whose content may be a private key (read as a .pem is): a
 * PEM file under its usual extensions (a certificate and its key kept in
 * one .crt), and PGP's armored export (.asc: a public key stays
 * readable).  Any other file is not read: the walk reads no ordinary
 * file, and the scan cache keeps no record of one. */
static const char *const key_suffixes[] = { ".pem", ".crt", ".cer", ".asc", NULL };

/* Does name (nl bytes) end in tail, in any case (a.PEM, b.Keystore)? */
static int ends_ci(const char *name, size_t nl, const char *tail, size_t tl)
{
	return nl > tl && !strncasecmp(name + nl - tl, tail, tl);
}

/* Does name end in one of tails (NULL-ended), in any case? */
static int ends_ci_any(const char *name, size_t nl, const char *const *tails)
{
	size_t i;

	for (i = 0; tails[i]; i++) {
		if (ends_ci(name, nl, tails[i], strlen(tails[i])))
			return 1;
	}
	return 0;
}

static int key_suffix(const char *name, size_t nl)
{
	return ends_ci_any(name, nl, key_suffixes);
}

/* Does name (nl bytes) hold word (wl bytes) anywhere, in any case? */
static int contains_ci(const char *name, size_t nl, const char *word, size_t wl)
{
	size_t i;

	for (i = 0; i + wl <= nl; i++) {
		if (!strncasecmp(name + i, word, wl))
			return 1;
	}
	return 0;
}

/* Does name (nl bytes) hold word (wl bytes), in any case?  Source code
 * and docs about the word (kubeconfig.go, kubeconfig_test.py,
 * kubeconfig.md) are not the credential it names. */
static int holds_ci(const char *name, size_t nl, const char *word, size_t wl)
{
	static const char *const code[] = { ".go",   ".py",  ".rs",  ".js",   ".ts",  ".java",
		                            ".rb",   ".c",   ".h",   ".md",   ".rst", ".sh",
		                            ".bash", ".zsh", ".ps1", ".fish", NULL };

	return !ends_ci_any(name, nl, code) && contains_ci(name, nl, word, wl);
}

static int json_name(const char *name, size_t nl)
{
	return ends_ci(name, nl, ".json", 5);
}

/* In node_modules a .json is read only when its name says it may hold a
 * secret (token.json, credentials.json, *-key.json): a large
 * node_modules holds thousands of other .json files (package.json,
 * tsconfig.json, locale data, test fixtures), and the walk reads every
 * judged file at every run. */
static const char *const nm_json_words[] = { "token", "cred", "secret", "auth", "key", NULL };

static int nm_json_judged(const char *name, size_t nl)
{
	size_t k;

	for (k = 0; nm_json_words[k]; k++) {
		if (contains_ci(name, nl, nm_json_words[k], strlen(nm_json_words[k])))
			return 1;
	}
	return 0;
}

/* Is `name` (w->path, len bytes) judged by its content: 1 a .pem (or
 * another of key_suffixes), 2 a .json (in node_modules only one whose
 * name names a secret: nm_json_judged), 3 a .yarnrc.yml; else 0. */
static int content_kind(const struct walk *w, const char *name, size_t nl, size_t len)
{
	if (key_suffix(name, nl))
		return 1;
	if (json_name(name, nl))
		return !memmem(w->path, len, "/node_modules/", 14) || nm_json_judged(name, nl) ? 2
		                                                                               : 0;
	return nl == 11 && !memcmp(name, ".yarnrc.yml", 11) ? 3 : 0;
}

/* Credentials known by their content where the name says nothing, read
 * from fd (-1: unreadable to us).  A .pem holding a private key.  A
 * .json (in node_modules, one named as a secret) that is a service account key ("type":
 * "service_account" with its "private_key"; saved as
 * PROJECT-1a2b3c4d5e6f.json) or a user's application default
 * credentials copied out of .config/gcloud ("authorized_user" with its
 * "refresh_token"); any other holding a "refresh_token" or a
 * "client_secret" with a value (google-auth's token.json, an OAuth
 * client's credentials.json); one past JSON_HEAD when its head names any
 * of these (json_is_cred).  A
 * .yarnrc.yml holding a registry token (npmAuthToken, npmAuthIdent):
 * covered whole, as .npmrc is, rather than kept read-only for being a
 * file the host runs (yarn in the sandbox then runs without the
 * project's yarn settings: the price of not handing it the token); one
 * without a token stays readable and read-only, one too large to read is
 * covered unread.  A .json or .yarnrc.yml we cannot read but the sandbox
 * could make readable (fd CHMODABLE) is covered unread. */
#define CHMODABLE (-2) /* for fd: unreadable to us, readable to the sandbox (cd_tree_chmodable) */

static int cred_by_content(int kind, int fd)
{
	size_t got;
	int big, hit = 0;
	char *buf;

	if (kind == 1)
		return pem_is_private(fd);
	if (fd == CHMODABLE)
		return kind == 2 || kind == 3;
	if (kind == 2)
		return json_is_cred(fd);
	if (kind == 3) {
		if (!(buf = sniff(fd, KEY_SNIFF_BYTES, &got, &big)))
			return big;
		hit = memmem(buf, got, "npmAuthToken", 12) || memmem(buf, got, "npmAuthIdent", 12);
	} else {
		return 0;
	}
	explicit_bzero(buf, got);
	free(buf);
	return hit;
}

/* A file unreadable to us that the sandbox could make readable: the
 * caller's own, in a tree the sandbox writes (workspace-write, --rw) or
 * in the proposal overlay (a chmod there copies the file up, and
 * overlayfs reads the lower file with the mounter's credentials).  Its
 * content cannot be judged, so a file judged by its content is covered
 * unread (fail closed), as an unreadable .pem always is.  Elsewhere the
 * sandbox cannot read it either: one judged by content is left as it is. */
int cd_tree_chmodable(const struct walk *w, const struct stat *st)
{
	int overlay = w->mount < w->p->nmounts && w->p->mounts[w->mount].kind == CD_MNT_OVERLAY;

	return (w->writable || overlay) && st->st_uid == geteuid();
}

/* Does `path` (plen bytes, ending in a '/') pass through the directory
 * `dir` ("A" or "A/B", matched as whole components)? */
static int below_dir(const char *path, size_t plen, const char *dir)
{
	size_t dl = strlen(dir);
	const char *p = path, *end = path + plen;

	while ((p = memmem(p, (size_t)(end - p), dir, dl))) {
		if (p > path && p[-1] == '/' && p + dl < end && p[dl] == '/')
			return 1;
		p++;
	}
	return 0;
}

/* Anything at any depth below a .ssh directory (.ssh/id_x, and
 * .ssh/keys/work: a common IdentityFile layout) but public keys, known
 * hosts, the list of authorized keys and the client's config (not
 * secrets; the config is read-only in a read-only tree and pinned nowhere
 * else): private keys under any name.  And anything below a directory of
 * cd_credential_dirs (.aws, .azure, .config/gcloud). */
static int in_ssh_dir(const char *path, size_t len, const char *name, size_t nl)
{
	static const char *const open_names[] = { "known_hosts", "known_hosts.old",
		                                  "authorized_keys", "config", NULL };
	size_t i;

	/* Anything below a .aws directory: credentials, config and the
	 * SSO and CLI token caches (.aws/sso/cache/, .aws/cli/cache/); the
	 * same for azure's and gcloud's token caches. */
	for (i = 0; len > nl && cd_credential_dirs[i]; i++) {
		if (below_dir(path, len - nl, cd_credential_dirs[i]))
			return 1;
	}
	if (len <= nl || !below_dir(path, len - nl, ".ssh"))
		return 0;
	if (nl > 4 && !memcmp(name + nl - 4, ".pub", 4))
		return 0;
	for (i = 0; open_names[i]; i++) {
		if (!strcmp(name, open_names[i]))
			return 0;
	}
	return 1;
}

/* .env and .env.NAME (.env.local, .env.production): dotenv files hold
 * the project's keys.  The templates committed beside them for others to
 * copy (.env.example, .env.sample, .env.template) hold names, not
 * values, and stay readable. */
static int env_file(const char *name, size_t nl)
{
	static const char *const templates[] = { "example", "sample", "template", NULL };
	size_t i;

	if (nl < 4 || memcmp(name, ".env", 4) != 0)
		return 0;
	if (nl == 4)
		return 1;
	if (name[4] != '.' || nl == 5)
		return 0; /* .envrc, .environment: not dotenv files */
	for (i = 0; templates[i]; i++) {
		if (!strcmp(name + 5, templates[i]))
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
		w->cred[i].suffix = c[0] != '*' ? 0 : c[strlen(c) - 1] == '*' ? 2 : 1;
		w->cred[i].base = w->cred[i].suffix ? c + 1 : slash ? slash + 1 : c;
		w->cred[i].blen = strlen(w->cred[i].base) - (w->cred[i].suffix == 2);
		w->ncred = i + 1;
	}
}

/* The component-aligned tail of the host path `path` (len bytes, NUL
 * at len) holding as many '/' as the glob g: what a cover_files glob
 * with a '/' is matched against (with FNM_PATHNAME no '*', '?' or
 * bracket matches a '/', so no other tail could match).  So the glob
 * names the file however it is bound: through the working directory, a
 * bind of a directory below (`--ro proj/conf:/c`), the file bound by
 * itself.  Copied into buf (CD_PATH_MAX bytes); NULL when the path has
 * fewer components. */
static const char *glob_tail(const char *path, size_t len, const char *g, char *buf)
{
	size_t want = 1, seen = 0, end = len;

	for (; *g; g++)
		want += *g == '/';
	while (len-- > 0) {
		if (path[len] == '/' && ++seen == want) {
			memcpy(buf, path + len + 1, end - len - 1);
			buf[end - len - 1] = '\0';
			return buf;
		}
	}
	return NULL;
}

/* By its name and path alone: the patterns, .ssh and the credential
 * directories, .env files, the profile's cover_files. */
static int cred_by_name(struct walk *w, const char *name, size_t nl, size_t len)
{
	size_t i;

	for (i = 0; i < w->ncred; i++) {
		const struct cred_pat *c = &w->cred[i];

		if (c->suffix == 2) {
			if (holds_ci(name, nl, c->base, c->blen))
				return 1;
		} else if (c->suffix) {
			if (ends_ci(name, nl, c->base, c->blen))
				return 1;
		} else if (nl == c->blen && name[0] == c->base[0] && !memcmp(name, c->base, nl) &&
		           (c->base == c->full || cd_tree_suffix_is(w->path, len, c->full))) {
			return 1;
		}
	}
	if (in_ssh_dir(w->path, len, name, nl) || env_file(name, nl))
		return 1;
	for (i = 0; i < w->o->ncover_files; i++) {
		const char *g = w->o->cover_files[i];
		char buf[CD_PATH_MAX];
		const char *subject = strchr(g, '/') ? glob_tail(w->path, len, g, buf) : name;

		if (subject && fnmatch(g, subject, FNM_PATHNAME) == 0)
			return 1;
	}
	return 0;
}

/* `name` (w->path, length len) names a credential file.  For a symlink
 * (link), a .pem is judged by what it points to. */
int cd_tree_is_credential(struct walk *w, int dfd, const char *name, size_t nl, size_t len,
                          int link)
{
	struct stat st;
	int kind, fd, hit;

	if (cred_by_name(w, name, nl, len))
		return 1;
	if (!(kind = content_kind(w, name, nl, len)))
		return 0;
	fd = openat(dfd, name,
	            O_RDONLY | (link ? 0 : O_NOFOLLOW) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM) &&
	    fstatat(dfd, name, &st, link ? 0 : AT_SYMLINK_NOFOLLOW) == 0 &&
	    cd_tree_chmodable(w, &st))
		fd = CHMODABLE;
	hit = cred_by_content(kind, fd);
	if (fd >= 0)
		close(fd);
	return hit;
}

/* The same for a file bound by itself, its content read from fd (its own
 * inode, opened by the walk: tree-root.c), or -1 when unreadable to us
 * (st its status). */
int cd_tree_file_is_credential(struct walk *w, int fd, const struct stat *st, const char *name,
                               size_t nl, size_t len)
{
	if (fd < 0 && cd_tree_chmodable(w, st))
		fd = CHMODABLE;
	return cred_by_name(w, name, nl, len) ||
	       cred_by_content(content_kind(w, name, nl, len), fd);
}

/* Could the regular file `name` (w->path, len bytes) be a credential,
 * by its name now or by what it may hold later (the files whose content
 * cd_tree_is_credential reads: key_suffixes, .json, .yarnrc.yml)? */
int cd_tree_cred_maybe(struct walk *w, const char *name, size_t nl, size_t len)
{
	return cred_by_name(w, name, nl, len) || key_suffix(name, nl) || json_name(name, nl) ||
	       (nl == 11 && !memcmp(name, ".yarnrc.yml", 11));
}

static int ino_cmp(const void *a, const void *b)
{
	const struct ino *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

int cd_tree_inoset_add(struct walk *w, struct inoset *s, dev_t dev, ino_t ino, nlink_t nlink)
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
	s->v[s->n].ino = ino;
	s->v[s->n].nlink = nlink;
	s->v[s->n++].found = 0;
	s->sorted = 0;
	return 0;
}

static struct ino *inoset_find(struct inoset *s, dev_t dev, ino_t ino)
{
	struct ino key = { dev, ino, 0, 0 };

	if (!s->n)
		return NULL;
	if (!s->sorted) {
		qsort(s->v, s->n, sizeof *s->v, ino_cmp);
		s->sorted = 1;
	}
	return bsearch(&key, s->v, s->n, sizeof *s->v, ino_cmp);
}

static int inoset_has(struct inoset *s, dev_t dev, ino_t ino)
{
	return inoset_find(s, dev, ino) != NULL;
}

/* A credential (a covered file, the target of a credential-named link, a
 * file of a linked credential directory) with other names: remember it,
 * so that a second walk of every bound tree covers those too (a hard
 * link reads the same bytes), and counts them. */
int cd_tree_note_cred(struct walk *w, const struct stat *st)
{
	if (!S_ISREG(st->st_mode) || st->st_nlink < 2 ||
	    inoset_has(&w->credlinks, st->st_dev, st->st_ino))
		return 0;
	return cd_tree_inoset_add(w, &w->credlinks, st->st_dev, st->st_ino, st->st_nlink);
}

int cd_tree_note_links(struct walk *w, int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	return cd_tree_note_cred(w, &st);
}

/* A name of credential `e` met at host path `host`: counted once, however
 * many bound trees show it (trees overlap: the working directory and a
 * --rw bind of one of its directories). */
static int count_name(struct walk *w, struct ino *e, const char *host)
{
	char key[CD_PATH_MAX + 48], **v;
	size_t i;
	int n = snprintf(key, sizeof key, "%llx:%llx:%s", (unsigned long long)e->dev,
	                 (unsigned long long)e->ino, host);

	if (n < 0 || (size_t)n >= sizeof key || w->nnames >= CRED_NAMES_MAX)
		return 0; /* not counted: the names are then looked for further */
	for (i = 0; i < w->nnames; i++) {
		if (!strcmp(w->names[i], key))
			return 0;
	}
	if (!(v = realloc(w->names, (w->nnames + 1) * sizeof *v)) ||
	    !(v[w->nnames] = strdup(key))) {
		if (v)
			w->names = v;
		return cd_err_set(w->err, -ENOMEM, "out of memory");
	}
	w->names = v;
	w->nnames++;
	e->found++;
	return 0;
}

/* Does a credential on device `dev` have names the walks have not met? */
int cd_tree_links_missing(const struct walk *w, dev_t dev)
{
	size_t i;

	for (i = 0; i < w->credlinks.n; i++) {
		if (w->credlinks.v[i].dev == dev &&
		    w->credlinks.v[i].found < w->credlinks.v[i].nlink)
			return 1;
	}
	return 0;
}

void cd_tree_creds_free(struct walk *w)
{
	size_t i;

	for (i = 0; i < w->nnames; i++)
		free(w->names[i]);
	free(w->names);
	free(w->credlinks.v);
	free(w->shared.v);
	free(w->ro.v);
}

/* The second walk: a regular file that is another name of a covered
 * credential is covered; in a writable tree, one that is another name of
 * a file of a read-only tree is kept read-only. */
int cd_tree_link_visit(struct walk *w, int dfd, const char *name)
{
	struct stat st;
	struct ino *e;
	int r;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_nlink < 2)
		return 0;
	if ((e = inoset_find(&w->credlinks, st.st_dev, st.st_ino))) {
		if ((r = count_name(w, e, w->path)) < 0)
			return r;
		return cd_tree_cover(w, w->path, CD_MNT_MASK, CD_MNT_OPTIONAL, WHY_CREDENTIAL);
	}
	if (w->writable && inoset_has(&w->ro, st.st_dev, st.st_ino))
		return cd_tree_cover(w, w->path, CD_MNT_REMOUNT_RO, 0, WHY_RO_LINK);
	/* one a writable tree pins and another of its names (cd_tree_note_pinned) */
	return 0;
}

/* The second walk meets a file bound by itself (--ro FILE, or a file of
 * the system's such as /etc/gitconfig; st: the inode opened at src,
 * tree-root.c): covered when it is another name of a credential. */
int cd_tree_cred_bound_file(struct walk *w, const struct stat *st, const char *src,
                            const char *dest)
{
	struct ino *e;
	int r;

	if (!S_ISREG(st->st_mode) || !(e = inoset_find(&w->credlinks, st->st_dev, st->st_ino)))
		return 0;
	if ((r = count_name(w, e, src)) < 0)
		return r;
	if (cd_tree_shadowed(w->p, w->first, w->mount, dest))
		return 0;
	return cd_tree_mask_file(w, st, dest);
}

/* In a read-only tree, while writable trees hold files with other names:
 * is this one of them? */
int cd_tree_note_ro_link(struct walk *w, int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_nlink < 2 || !inoset_has(&w->shared, st.st_dev, st.st_ino))
		return 0;
	return cd_tree_inoset_add(w, &w->ro, st.st_dev, st.st_ino, st.st_nlink);
}

/* Is the file at host path `host` a credential by its own name or
 * content (.env -> .env.local, id_work -> .ssh/id_ed25519)?  The walk of
 * a tree holding it then covers it whether or not the link is there.
 * Judged as the walk judges it, with w->path lent for the while. */
static int self_covered(struct walk *w, const char *host)
{
	char saved[CD_PATH_MAX];
	const char *base = strrchr(host, '/');
	size_t len = strlen(host);
	struct stat st;
	int dfd, hit;

	if (!base || len >= sizeof saved || lstat(host, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	memcpy(saved, w->path, sizeof saved);
	memcpy(w->path, host, len + 1);
	w->path[base - host] = '\0';
	dfd = open(base == host ? "/" : w->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	w->path[base - host] = '/';
	hit = dfd >= 0 && cd_tree_is_credential(w, dfd, base + 1, strlen(base + 1), len, 0);
	if (dfd >= 0)
		close(dfd);
	memcpy(w->path, saved, sizeof saved);
	return hit;
}

/* Cover the host file or directory `host` (canonical) wherever the
 * sandbox sees it: under every bind whose source holds it (the working
 * directory and a --rw bind of one of its directories both show a file
 * of that directory), and in the system directories.  A credential
 * covered only because a link (w->path) with a credential's name points
 * to it is uncovered once the link is gone: where the sandbox can write
 * the link (a writable tree), it could remove it, and the next run
 * would show the target under its plain name; so a target the sandbox
 * sees is refused there (docs/threats.md), unless it is a credential by
 * itself in a tree the walk reads.  A link it cannot remove: the
 * target's directories are held in the writable trees. */
int cd_tree_cover_views(struct walk *w, const char *host, const char *why)
{
	char inside[CD_PATH_MAX];
	size_t i, sl;
	int n, r, self = -1;

	for (i = 0; i < w->p->nmounts; i++) {
		const struct cd_mount *m = &w->p->mounts[i];

		if ((m->kind != CD_MNT_BIND && m->kind != CD_MNT_OVERLAY) || !m->src ||
		    (m->flags & CD_MNT_DEV) || !cd_path_is_under(host, m->src))
			continue;
		sl = strcmp(m->src, "/") ? strlen(m->src) : 0;
		n = snprintf(inside, sizeof inside, "%s%s",
		             strcmp(m->dest, "/") || !host[sl] ? m->dest : "", host + sl);
		if (n < 0 || (size_t)n >= sizeof inside)
			return cd_err_set(
			        w->err, -ENAMETOOLONG,
			        "'%.64s...' is longer than PATH_MAX inside the sandbox: it "
			        "cannot be covered, so the run is refused",
			        host);
		if (cd_tree_shadowed(w->p, w->first, i, inside))
			continue;
		if (w->writable && !w->list_only && self < 0)
			self = self_covered(w, host);
		if (w->writable && !w->list_only && !(self && i >= w->first && !m->why))
			return cd_err_set(
			        w->err, -CD_E_USAGE,
			        "'%s' is a symlink with a credential's name in a tree the "
			        "sandbox can write, and the sandbox sees its target '%s': "
			        "it could remove the link, and the next run would show "
			        "the target uncovered; move the credential out of the "
			        "bound trees or run elsewhere; refused",
			        w->path, host);
		if ((r = cd_plan_mount_add(w->p, CD_MNT_MASK, CD_MNT_OPTIONAL, NULL, inside, why,
		                           w->err)) < 0 ||
		    (r = cd_tree_pin(w, host)) < 0 || (r = cd_tree_hold_in(w, i, host)) < 0)
			return r;
	}
	return 0;
}

static int cred_dir(struct walk *w, const char *dir, const char *root, unsigned depth);

/* A credential at host path `target` (canonical): a file is covered
 * wherever it is seen and its other names looked for; a directory the
 * same, and what is in it (cred_dir).  `root`: the credential directory
 * being read, whose own insides need no second look. */
static int cover_target(struct walk *w, const char *target, const char *root, unsigned depth)
{
	struct stat st;
	int r;

	if (root && cd_path_is_under(target, root))
		return 0;
	if (!root)
		w->cred_seen = 0; /* the cap is per linked directory */
	if (stat(target, &st) < 0 || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)))
		return 0; /* dangling: nothing to read */
	if ((r = cd_tree_cover_views(w, target, WHY_CRED_LINK)) < 0)
		return r;
	if (S_ISREG(st.st_mode))
		return cd_tree_note_cred(w, &st);
	return cred_dir(w, target, root ? root : target, depth + 1);
}

/* What a credential directory reached through a link holds (.aws ->
 * cloud/, or one outside every bound tree): its files' other names and
 * where its symlinks lead are credentials too.  Fails closed past
 * CRED_DIR_MAX entries or SCAN_MAX_DEPTH levels. */
static int cred_dir(struct walk *w, const char *dir, const char *root, unsigned depth)
{
	char sub[CD_PATH_MAX], canon[CD_PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *d;
	int r = 0, n;

	if (depth > SCAN_MAX_DEPTH)
		return cd_err_set(w->err, -CD_E_LIMIT,
		                  "'%.200s' (a credential directory) is nested deeper than %d "
		                  "levels or links into itself; refused",
		                  dir, SCAN_MAX_DEPTH);
	if (!(d = opendir(dir)))
		return 0; /* unreadable to us: its names are not reachable through it either */
	while (r == 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, "..")))
			continue;
		if (++w->cred_seen > CRED_DIR_MAX) {
			r = cd_err_set(w->err, -CD_E_LIMIT,
			               "'%.200s': a credential directory reached through a link "
			               "holds more than %d entries; refused",
			               root, CRED_DIR_MAX);
			break;
		}
		n = snprintf(sub, sizeof sub, "%s/%s", strcmp(dir, "/") ? dir : "", e->d_name);
		if (n < 0 || (size_t)n >= sizeof sub) {
			r = cd_err_set(w->err, -ENAMETOOLONG, "'%.64s...': path too long", dir);
			break;
		}
		if (lstat(sub, &st) < 0)
			continue;
		if (S_ISREG(st.st_mode))
			r = cd_tree_note_cred(w, &st);
		else if (S_ISDIR(st.st_mode))
			r = cred_dir(w, sub, root, depth + 1);
		else if (S_ISLNK(st.st_mode) && cd_path_canonical(sub, canon, sizeof canon) == 0)
			r = cover_target(w, canon, root, depth);
	}
	closedir(d);
	return r;
}

/* The link at w->path (name, nl; path length len) is the directory part
 * of a credential "DIR/NAME" (.docker of .docker/config.json, .config of
 * .config/gh/hosts.yml or .config/gcloud): cover what the target holds at
 * each such NAME. */
static int link_rests(struct walk *w, const char *canon, size_t len, int *hit)
{
	const char *const *lists[] = { cd_credential_files, cd_credential_dirs };
	char sub[CD_PATH_MAX], real[CD_PATH_MAX], pre[CD_PATH_MAX];
	size_t l, i, k;
	int r;

	for (l = 0; l < CD_ARRAY_SIZE(lists); l++) {
		for (i = 0; lists[l][i]; i++) {
			const char *c = lists[l][i];

			for (k = 1; c[k]; k++) {
				if (c[k] != '/' || k >= sizeof pre)
					continue;
				memcpy(pre, c, k);
				pre[k] = '\0';
				if (!cd_tree_suffix_is(w->path, len, pre))
					continue;
				*hit = 1;
				if (snprintf(sub, sizeof sub, "%s%s", canon, c + k) >=
				            (int)sizeof sub ||
				    cd_path_canonical(sub, real, sizeof real) < 0)
					continue; /* nothing there */
				if ((r = cover_target(w, real, NULL, 0)) < 0)
					return r;
			}
		}
	}
	return 0;
}

/* A symlink with a credential's name (.netrc -> notes/token, .aws ->
 * ../cloud), or in a credential directory (.aws/sso -> elsewhere): the
 * host's tools read what it points to, so that is the credential.  The
 * host resolves it once, here, and it is covered wherever the sandbox
 * sees it (cover_target): a directory named .ssh, .aws, .azure or
 * .config/gcloud whole, with what it holds; the file a pattern names
 * below a .docker, .kube, .cargo or .config link.  A target outside
 * every bound tree is not there to read inside, though its other names
 * may be; one that does not resolve holds nothing yet. */
int cd_tree_credential_link(struct walk *w, int dfd, const char *name, size_t nl, size_t len)
{
	char canon[CD_PATH_MAX];
	struct stat st;
	size_t i;
	int whole = !strcmp(name, ".ssh"), hit = 0, r;

	for (i = 0; !whole && cd_credential_dirs[i]; i++)
		whole = cd_tree_suffix_is(w->path, len, cd_credential_dirs[i]);
	if (cd_path_canonical(w->path, canon, sizeof canon) < 0 || stat(canon, &st) < 0)
		return 0; /* dangling: nothing to read */
	if (whole)
		return S_ISDIR(st.st_mode) ? cover_target(w, canon, NULL, 0) : 0;
	if ((r = link_rests(w, canon, len, &hit)) < 0 || hit)
		return r;
	if (in_ssh_dir(w->path, len, name, nl))
		return cover_target(w, canon, NULL, 0); /* .aws/sso -> a directory too */
	if (!S_ISREG(st.st_mode) || !cd_tree_is_credential(w, dfd, name, nl, len, 1))
		return 0; /* .netrc -> a directory: nothing a tool reads */
	return cover_target(w, canon, NULL, 0);
}

#ifndef SYS_getxattrat
#define SYS_getxattrat 464 /* Linux 6.13, one number on every architecture */
#endif

struct cd_xattr_args {
	uint64_t value;
	uint32_t size;
	uint32_t flags;
};

/* The size of `name`'s security.capability (dfd's entry), or -1 and
 * errno: getxattrat(2) from the directory at hand (Linux 6.13), not a
 * lookup of the whole path again per file; lgetxattr of `path` before. */
static ssize_t caps_xattr(int dfd, const char *name, const char *path)
{
	static int no_at;
	struct cd_xattr_args a = { 0, 0, 0 };
	long r;

	if (!no_at) {
		r = syscall(SYS_getxattrat, dfd, name, AT_SYMLINK_NOFOLLOW, "security.capability",
		            &a, sizeof a);
		if (r >= 0 || errno != ENOSYS)
			return r;
		no_at = 1;
	}
	return lgetxattr(path, "security.capability", NULL, 0);
}

/* The metadata reads the walk makes per regular file, and only in a
 * writable tree whose filesystem honours setuid, or when a read-only
 * tree is bound too: statx asking for the mode and link count alone (no
 * attribute the filesystem would have to compute or fetch from a
 * server), and for root callers its security.capability.  1 when it is
 * set-id, 2 when it carries file capabilities; a file with other names is remembered
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
	    cd_tree_inoset_add(w, &w->shared, makedev(sx.stx_dev_major, sx.stx_dev_minor),
	                       sx.stx_ino, sx.stx_nlink) < 0)
		return -ENOMEM;
	if (!S_ISREG(sx.stx_mode) || !w->suid_matters)
		return 0;
	if (sx.stx_mode & (S_ISUID | S_ISGID))
		return 1;
	/* File capabilities survive a rewrite through a shared mapping as the
	 * set-id bits do (the kernel drops them on write(2) and chown, not on
	 * page faults or chmod), and a root caller's sandbox may chmod any of
	 * root's files in the tree: any regular file carrying them is kept
	 * read-only too.  One more call per file, for root callers only. */
	if (caps_xattr(dfd, name, w->path) >= 0)
		return 2;
	return errno == ENODATA || errno == ENOTSUP || errno == ENOENT ? 0 : 1;
}

/* Does the host honour setuid and setgid bits anywhere in the tree at
 * `src`?  Not when its filesystem is mounted nosuid and no other mount
 * lies below it; any doubt says yes (the walk then checks each file). */
int cd_tree_suid_honoured(const char *src)
{
	struct statvfs sf;

	if (statvfs(src, &sf) < 0 || !(sf.f_flag & ST_NOSUID))
		return 1;
	return cd_tree_mounts_below(src);
}

/* Is anything mounted strictly below `src` in our mount namespace?  Any
 * doubt (mountinfo unreadable, a line too long) says yes. */
int cd_tree_mounts_below(const char *src)
{
	size_t sl = strcmp(src, "/") ? strlen(src) : 0;
	char line[2 * CD_PATH_MAX], mp[CD_PATH_MAX];
	FILE *f;
	int hit = 0;

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
