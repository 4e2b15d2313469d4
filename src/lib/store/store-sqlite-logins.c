/* store-sqlite-logins.c — the console's one-time login links in the SQLite
 * state database (store.h, table console_logins): only the SHA-256 of a
 * link's secret is stored, with the person it logs in and its expiry.
 *
 * Trust boundary: as store.h.  A row is taken (deleted) in the same
 * transaction that reads it, so a link logs in once however many requests
 * race for it. */
#include "store-sqlite.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int cd_sqlite_console_login_add(struct cd_store *store, const char *hash, const char *person,
                                const char *mac, int64_t now, int64_t expires, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(s->db,
	                       "INSERT INTO console_logins (hash, person, created, expires, mac)"
	                       " VALUES (?,?,?,?,?)",
	                       -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "store login link");
	sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, person, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, now);
	sqlite3_bind_int64(st, 4, expires);
	cd_sqlite_bind_opt(st, 5, mac);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return cd_sqlite_err(s, err, "store login link");
	return 0;
}

/* Run one statement with ?1 = text a and ?2 = now. */
static int run(struct cd_sqlite *s, const char *sql, const char *a, int64_t now)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, now);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int cd_sqlite_console_login_take(struct cd_store *store, const char *hash, int64_t now,
                                 char *ret_person, size_t len, char *ret_mac, size_t maclen,
                                 int64_t *ret_expires, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	const char *person;
	int r, rc, found = 0;

	if ((r = cd_sqlite_begin(store, err)) < 0)
		return r;
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT person, coalesce(mac, ''), expires FROM console_logins"
	                       " WHERE hash = ? AND expires > ?",
	                       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, now);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && (person = cd_sqlite_col(st, 0)) && *person &&
	    strlen(person) < len) {
		memcpy(ret_person, person, strlen(person) + 1);
		snprintf(ret_mac, maclen, "%s", cd_sqlite_col(st, 1) ? cd_sqlite_col(st, 1) : "");
		*ret_expires = sqlite3_column_int64(st, 2);
		found = 1;
	} else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		goto fail;
	}
	sqlite3_finalize(st);
	st = NULL;
	/* The link goes whether it was good or not, and every expired one
	 * with it. */
	if (run(s, "DELETE FROM console_logins WHERE hash = ?1 OR expires <= ?2", hash, now) < 0)
		goto fail;
	if ((r = cd_sqlite_commit(store, err)) < 0)
		return r;
	return found ? 0 : cd_err_set(err, -ENOENT, "no such login link, used or expired");
fail:
	r = cd_sqlite_err(s, err, "take login link");
	sqlite3_finalize(st);
	cd_sqlite_rollback(store);
	return r;
}

/* ---- sessions ------------------------------------------------------ */

int cd_sqlite_console_session_add(struct cd_store *store, const char *hash, const char *person,
                                  const char *mac, int64_t now, int64_t expires, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(s->db,
	                       "INSERT INTO console_sessions (hash, person, mac, created, expires)"
	                       " VALUES (?,?,?,?,?)",
	                       -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "store session");
	sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, person, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, mac, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, now);
	sqlite3_bind_int64(st, 5, expires);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return cd_sqlite_err(s, err, "store session");
	return 0;
}

int cd_sqlite_console_session_get(struct cd_store *store, const char *hash, int64_t now,
                                  char *ret_person, size_t len, char *ret_mac, size_t mlen,
                                  int64_t *ret_expires, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	const char *person, *mac;
	int rc, found = 0;

	if (sqlite3_prepare_v2(s->db,
	                       "SELECT person, mac, expires FROM console_sessions"
	                       " WHERE hash = ? AND expires > ?",
	                       -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "read session");
	sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, now);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && (person = cd_sqlite_col(st, 0)) && *person &&
	    strlen(person) < len && (mac = cd_sqlite_col(st, 1)) && strlen(mac) < mlen) {
		memcpy(ret_person, person, strlen(person) + 1);
		memcpy(ret_mac, mac, strlen(mac) + 1);
		*ret_expires = sqlite3_column_int64(st, 2);
		found = 1;
	} else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		sqlite3_finalize(st);
		return cd_sqlite_err(s, err, "read session");
	}
	sqlite3_finalize(st);
	return found ? 0 : cd_err_set(err, -ENOENT, "no such session, ended or expired");
}

int cd_sqlite_console_session_end(struct cd_store *store, const char *hash, int64_t now,
                                  struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);

	if (run(s, "DELETE FROM console_sessions WHERE hash = ?1 OR expires <= ?2",
	        hash ? hash : "", now) < 0)
		return cd_sqlite_err(s, err, "end session");
	return 0;
}
