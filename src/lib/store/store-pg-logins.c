/* store-pg-logins.c — the console's one-time login links in PostgreSQL
 * (store.h, migration 3 of store-pg-conn.c): only the SHA-256 of a link's
 * secret is stored, with the person it logs in and its expiry.
 *
 * Trust boundary: as store.h.  A link is taken by one DELETE ... RETURNING:
 * of any number of requests racing for it, on any host, exactly one gets
 * the row, so a link logs in once. */
#include "store-pg.h"

#include <errno.h>
#include <string.h>

int cd_pg_console_login_add(struct cd_store *st, const char *hash, const char *person, int64_t now,
                            int64_t expires, struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };

	cd_pg_p_str(&p, hash);
	cd_pg_p_str(&p, person);
	cd_pg_p_int(&p, now);
	cd_pg_p_int(&p, expires);
	if (cd_pg_cmd(cd_pg_of(st),
	              "INSERT INTO console_logins (hash, person, created, expires)"
	              " VALUES ($1, $2, $3, $4)",
	              &p, "store login link", err) != 1)
		return err && err->code ? err->code : -EIO;
	return 0;
}

int cd_pg_console_login_take(struct cd_store *st, const char *hash, int64_t now, char *ret_person,
                             size_t len, struct cd_err *err)
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
	        pg, "DELETE FROM console_logins WHERE hash = $1 RETURNING person, expires > $2", &p,
	        "take login link", err);
	if (!res)
		return err && err->code ? err->code : -EIO;
	if (cd_pq.ntuples(res) == 1 && (person = cd_pg_col(res, 0, 0)) && *person &&
	    strlen(person) < len &&
	    !strcmp(cd_pg_col(res, 0, 1) ? cd_pg_col(res, 0, 1) : "", "t")) {
		memcpy(ret_person, person, strlen(person) + 1);
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
