/* store-pg-tokens.c — agent tokens of the MCP HTTP front in PostgreSQL
 * (store.h, migration 4 of store-pg-conn.c): only the SHA-256 of a token
 * is stored, with its agent, its policy, its expiry and whether it was
 * revoked.
 *
 * Trust boundary: as store.h.  A row without an agent is never handed
 * out: a damaged row authenticates no one. */
#include "store-pg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cd_pg_agent_token_add(struct cd_store *st, const struct cd_agent_token *t, struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };

	cd_pg_p_str(&p, t->id);
	cd_pg_p_str(&p, t->hash);
	cd_pg_p_str(&p, t->agent);
	cd_pg_p_str(&p, t->policy);
	cd_pg_p_int(&p, t->created);
	cd_pg_p_int(&p, t->expires);
	if (cd_pg_cmd(cd_pg_of(st),
	              "INSERT INTO agent_tokens (id, hash, agent, policy, created, expires)"
	              " VALUES ($1, $2, $3, $4, $5, $6)",
	              &p, "store agent token", err) != 1)
		return err && err->code ? err->code : -EIO;
	return 0;
}

static int64_t num(const PGresult *res, int r, int c)
{
	const char *v = cd_pg_col(res, r, c);
	return v ? strtoll(v, NULL, 10) : 0;
}

/* Hand each row of res to fn: 0 or fn's non-zero return; *ret_n counts. */
static int rows(PGresult *res, cd_store_token_fn fn, void *ctx, int *ret_n)
{
	int i, r = 0;

	*ret_n = 0;
	for (i = 0; i < cd_pq.ntuples(res) && !r; i++) {
		struct cd_agent_token t = {
			.id = cd_pg_col(res, i, 0),
			.hash = cd_pg_col(res, i, 1),
			.agent = cd_pg_col(res, i, 2),
			.policy = cd_pg_col(res, i, 3),
			.created = num(res, i, 4),
			.expires = num(res, i, 5),
			.revoked = num(res, i, 6),
		};
		if (!t.id || !t.hash || !t.agent || !*t.agent)
			continue;
		++*ret_n;
		r = fn(&t, ctx);
	}
	cd_pq.clear(res);
	return r;
}

#define COLS "SELECT id, hash, agent, policy, created, expires, revoked FROM agent_tokens"

int cd_pg_agent_token_find(struct cd_store *st, const char *hash, int64_t now, cd_store_token_fn fn,
                           void *ctx, struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };
	PGresult *res;
	int r, n;

	cd_pg_p_str(&p, hash);
	cd_pg_p_int(&p, now);
	res = cd_pg_query(cd_pg_of(st),
	                  COLS " WHERE hash = $1 AND revoked = 0 AND (expires = 0 OR expires > $2)",
	                  &p, "find agent token", err);
	if (!res)
		return err && err->code ? err->code : -EIO;
	if ((r = rows(res, fn, ctx, &n)) != 0)
		return r;
	return n ? 0 : cd_err_set(err, -ENOENT, "no such token in force");
}

int cd_pg_agent_token_list(struct cd_store *st, cd_store_token_fn fn, void *ctx, struct cd_err *err)
{
	PGresult *res =
	        cd_pg_query(cd_pg_of(st), COLS " ORDER BY seq", NULL, "list agent tokens", err);
	int n;

	if (!res)
		return err && err->code ? err->code : -EIO;
	return rows(res, fn, ctx, &n);
}

int cd_pg_agent_token_revoke(struct cd_store *st, const char *id, int64_t now, struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };
	int64_t n;

	cd_pg_p_int(&p, now > 0 ? now : 1);
	cd_pg_p_str(&p, id);
	n = cd_pg_cmd(cd_pg_of(st),
	              "UPDATE agent_tokens SET revoked = $1 WHERE id = $2 AND revoked = 0", &p,
	              "revoke agent token", err);
	if (n < 0)
		return err && err->code ? err->code : -EIO;
	return n == 1 ? 0 : cd_err_set(err, -ENOENT, "no token '%s' in force", id);
}
