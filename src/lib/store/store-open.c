/* store-open.c — which backend a path names (store.h): a PostgreSQL URI
 * opens the PostgreSQL backend (store-pg-*.c), anything else is an SQLite
 * file.  No SQL here. */
#include "store.h"

#include "store-pg.h"
#include "store-sqlite.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cd_store_is_uri(const char *path)
{
	return path &&
	       (strncmp(path, "postgresql://", 13) == 0 || strncmp(path, "postgres://", 11) == 0);
}

/* "scheme://" then what follows a user's "user:password@"; no
 * parameters at all when one of them is a password. */
char *cd_store_uri_shown(const char *uri)
{
	const char *s = strstr(uri, "://"), *at = s ? strchr(s + 3, '@') : NULL;
	char *w, *q;

	if (!s || !at || (strchr(uri, '?') && at > strchr(uri, '?'))) {
		w = strdup(uri);
	} else {
		w = malloc((size_t)(s - uri) + 3 + strlen(at + 1) + 1);
		if (w) {
			memcpy(w, uri, (size_t)(s - uri) + 3);
			memcpy(w + (s - uri) + 3, at + 1, strlen(at + 1) + 1);
		}
	}
	if (w && strstr(w, "password=") && (q = strchr(w, '?')) != NULL)
		*q = '\0';
	return w;
}

int cd_store_state_open(const char *path, struct cd_store **ret, struct cd_err *err)
{
	struct cd_pg *pg;
	int r;

	if (!cd_store_is_uri(path))
		return cd_sqlite_state_open(path, ret, err);
	if ((r = cd_pg_open(path, &pg, err)) < 0)
		return r;
	*ret = &pg->base;
	return 0;
}

int cd_store_audit_open(const char *path, int read_only, const char *host, unsigned busy_ms,
                        struct cd_store **ret, struct cd_err *err)
{
	struct cd_pg *pg;
	int r;

	if (!cd_store_is_uri(path))
		return cd_sqlite_audit_open(path, read_only, busy_ms, ret, err);
	if (!host || !*host || strlen(host) >= sizeof pg->host)
		return cd_err_set(err, -EINVAL, "audit log: no host name to name its chain");
	if ((r = cd_pg_open(path, &pg, err)) < 0)
		return r;
	memcpy(pg->host, host, strlen(host) + 1);
	memcpy(pg->chain, host, strlen(host) + 1);
	pg->read_only = read_only;
	pg->busy_ms = busy_ms;
	if ((r = cd_pg_audit_init(pg, err)) < 0) {
		cd_pg_close(&pg->base);
		return r;
	}
	*ret = &pg->base;
	return 0;
}
