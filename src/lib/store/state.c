/* state.c — see state.h.  The handle over the store's connection; what
 * the database holds is the backend's (store-sqlite-state.c). */
#include "state.h"

#include "util/err.h"

#include <errno.h>
#include <linux/magic.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef CIFS_SUPER_MAGIC
#define CIFS_SUPER_MAGIC 0xFF534D42
#endif
#ifndef SMB2_SUPER_MAGIC
#define SMB2_SUPER_MAGIC 0xFE534D42
#endif

struct cd_state {
	struct cd_store *store;
	int own;
	char own_why[200];
};

/* What cd_state_own says of the SQLite file at path. */
static int judge_own(struct cd_state *s, const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	struct stat st, ds;
	struct statfs fs;
	uid_t me = geteuid();
	size_t n;

	if (strcmp(s->store->ops->name, "sqlite") != 0)
		return cd_msg(s->own_why, sizeof s->own_why, "a %s store is shared",
		              s->store->ops->name);
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return cd_msg(s->own_why, sizeof s->own_why, "'%s' is not a regular file", path);
	if (st.st_uid != me || (st.st_mode & 022))
		return cd_msg(s->own_why, sizeof s->own_why,
		              "'%s' is owned by uid %u (mode %04o), not uid %u's alone", path,
		              (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)me);
	n = slash ? (size_t)(slash - path) : 0;
	if (n >= sizeof dir)
		return cd_msg(s->own_why, sizeof s->own_why, "'%s': path too long", path);
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (!n)
		snprintf(dir, sizeof dir, "/");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)n, path);
	if (stat(dir, &ds) < 0 || (ds.st_uid != me && ds.st_uid != 0) ||
	    ((ds.st_mode & 022) && !(ds.st_mode & S_ISVTX)))
		return cd_msg(s->own_why, sizeof s->own_why,
		              "its directory '%s' may be changed by another user", dir);
	if (statfs(path, &fs) == 0 && ((unsigned long)fs.f_type == NFS_SUPER_MAGIC ||
	                               (unsigned long)fs.f_type == CIFS_SUPER_MAGIC ||
	                               (unsigned long)fs.f_type == SMB2_SUPER_MAGIC))
		return cd_msg(s->own_why, sizeof s->own_why, "'%s' is on a network file system",
		              path);
	return 1;
}

int cd_state_open(const char *path, struct cd_state **ret, struct cd_err *err)
{
	struct cd_state *s;
	int r;

	if (!path || !*path)
		return cd_err_set(err, -EINVAL, "no state database path");
	s = calloc(1, sizeof *s);
	if (!s)
		return cd_err_set(err, -ENOMEM, "state database: out of memory");
	if ((r = cd_store_state_open(path, &s->store, err)) < 0) {
		free(s);
		return r;
	}
	s->own = judge_own(s, path) == 1;
	*ret = s;
	return 0;
}

int cd_state_own(struct cd_state *s, char *why, size_t wn)
{
	if (why && wn)
		snprintf(why, wn, "%s", s->own ? "" : s->own_why);
	return s->own;
}

void cd_state_close(struct cd_state *s)
{
	if (!s)
		return;
	s->store->ops->close(s->store);
	free(s);
}

struct cd_store *cd_state_store(struct cd_state *s)
{
	return s->store;
}

int cd_state_begin(struct cd_state *s, struct cd_err *err)
{
	return s->store->ops->begin(s->store, err);
}

int cd_state_commit(struct cd_state *s, struct cd_err *err)
{
	return s->store->ops->commit(s->store, err);
}

void cd_state_rollback(struct cd_state *s)
{
	s->store->ops->rollback(s->store);
}

int cd_state_wait(struct cd_state *s, unsigned timeout_ms)
{
	return s->store->ops->wait_change(s->store, timeout_ms);
}

void cd_state_random_id(const char *prefix, char *out, size_t outlen)
{
	unsigned char b[8];
	char hex[2 * sizeof b + 1];

	randombytes_buf(b, sizeof b);
	sodium_bin2hex(hex, sizeof hex, b, sizeof b);
	snprintf(out, outlen, "%s%s", prefix, hex);
}
