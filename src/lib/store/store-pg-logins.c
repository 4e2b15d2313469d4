/* store-pg-logins.c — the console's one-time login links in PostgreSQL
 * (store.h, migration 3 of store-pg-conn.c): only the SHA-256 of a link's
 * secret is stored, with the person it logs in and its expiry.
 *
 * Trust boundary: as store.h.  A link is taken by one DELETE ... RETURNING:
 * of any number of requests racing for it, on any host, exactly one gets
 * the row, so a link logs in once. */
#include "store-pg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cd_pg_console_login_add(struct cd_store *st, const char *hash, const char *person,
                            const char *mac, int64_t now, int64_t expires, struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };

	cd_pg_p_str(&p, hash);
	cd_pg_p_str(&p, person);
	cd_pg_p_int(&p, now);
	cd_pg_p_int(&p, expires);
	cd_pg_p_str(&p, mac);
	if (cd_pg_cmd(cd_pg_of(st),
	              "INSERT INTO console_logins (hash, person, created, expires, mac)"
	              " VALUES ($1, $2, $3, $4, $5)",
	              &p, "store login link", err) != 1)
		return err && err->code ? err->code : -EIO;
	return 0;
}

int cd_pg_console_login_take(struct cd_store *st, const char *hash, int64_t now, char *ret_person,
                             size_t len, char *ret_mac, size_t maclen, int64_t *ret_expires,
                             struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };
	const char *person;
	PGresult *res;
	int found = 0;

	cd_pg_p_str(&p, hash);
	cd_pg_p_int(&p, now);
	/* The link goes whether it is good or not; an expired one logs no one
	 * in. */
	res = cd_pg_query(
	        pg,
	        "DELETE FROM console_logins WHERE hash = $1 RETURNING person, expires > $2,"
	        " coalesce(mac, ''), expires",
	        &p, "take login link", err);
	if (!res)
		return err && err->code ? err->code : -EIO;
	if (cd_pq.ntuples(res) == 1 && (person = cd_pg_col(res, 0, 0)) && *person &&
	    strlen(person) < len &&
	    !strcmp(cd_pg_col(res, 0, 1) ? cd_pg_col(res, 0, 1) : "", "t")) {
		memcpy(ret_person, person, strlen(person) + 1);
		snprintf(ret_mac, maclen, "%s", cd_pg_col(res, 0, 2) ? cd_pg_col(res, 0, 2) : "");
		*ret_expires = cd_pg_int(res, 0, 3);
		found = 1;
	}
	cd_pq.clear(res);
	/* Expired links go with it; a failure here costs nothing but space. */
	p.n = 0;
	cd_pg_p_int(&p, now);
	cd_pg_cmd(pg, "DELETE FROM console_logins WHERE expires <= $1", &p, "sweep login links",
	          NULL);
	return found ? 0 : cd_err_set(err, -ENOENT, "no such login link, used or expired");
}

/* ---- sessions (migration 6) ----------------------------------------- */

int cd_pg_console_session_add(struct cd_store *st, const char *hash, const char *person,
                              const char *mac, int64_t now, int64_t expires, struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };

	cd_pg_p_str(&p, hash);
	cd_pg_p_str(&p, person);
	cd_pg_p_str(&p, mac);
	cd_pg_p_int(&p, now);
	cd_pg_p_int(&p, expires);
	if (cd_pg_cmd(cd_pg_of(st),
	              "INSERT INTO console_sessions (hash, person, mac, created, expires)"
	              " VALUES ($1, $2, $3, $4, $5)",
	              &p, "store session", err) != 1)
		return err && err->code ? err->code : -EIO;
	return 0;
}

int cd_pg_console_session_get(struct cd_store *st, const char *hash, int64_t now, char *ret_person,
                              size_t len, char *ret_mac, size_t mlen, int64_t *ret_expires,
                              struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };
	const char *person, *mac, *exp;
	PGresult *res;
	int found = 0;

	cd_pg_p_str(&p, hash);
	cd_pg_p_int(&p, now);
	res = cd_pg_query(cd_pg_of(st),
	                  "SELECT person, mac, expires FROM console_sessions"
	                  " WHERE hash = $1 AND expires > $2",
	                  &p, "read session", err);
	if (!res)
		return err && err->code ? err->code : -EIO;
	if (cd_pq.ntuples(res) == 1 && (person = cd_pg_col(res, 0, 0)) && *person &&
	    strlen(person) < len && (mac = cd_pg_col(res, 0, 1)) && strlen(mac) < mlen &&
	    (exp = cd_pg_col(res, 0, 2))) {
		memcpy(ret_person, person, strlen(person) + 1);
		memcpy(ret_mac, mac, strlen(mac) + 1);
		*ret_expires = strtoll(exp, NULL, 10);
		found = 1;
	}
	cd_pq.clear(res);
	return found ? 0 : cd_err_set(err, -ENOENT, "no such session, ended or expired");
}

int cd_pg_console_session_end(struct cd_store *st, const char *hash, int64_t now,
                              struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };

	cd_pg_p_str(&p, hash ? hash : "");
	cd_pg_p_int(&p, now);
	if (cd_pg_cmd(cd_pg_of(st), "DELETE FROM console_sessions WHERE hash = $1 OR expires <= $2",
	              &p, "end session", err) < 0)
		return err && err->code ? err->code : -EIO;
	return 0;
}
