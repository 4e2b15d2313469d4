/* store-sqlite-tokens.c — agent tokens of the MCP HTTP front in the SQLite
 * state database (store.h, table agent_tokens): only the SHA-256 of a
 * token is stored, with its agent, its policy, its expiry and whether it
 * was revoked.
 *
 * Trust boundary: as store.h.  A row without an agent is never handed
 * out: a damaged row authenticates no one. */
#include "store-sqlite.h"

#include <errno.h>
#include <string.h>

int cd_sqlite_agent_token_add(struct cd_store *store, const struct cd_agent_token *t,
                              struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(
	            s->db,
	            "INSERT INTO agent_tokens (id, hash, agent, policy, created, expires)"
	            " VALUES (?,?,?,?,?,?)",
	            -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "store agent token");
	sqlite3_bind_text(st, 1, t->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, t->hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, t->agent, -1, SQLITE_STATIC);
	if (t->policy)
		sqlite3_bind_text(st, 4, t->policy, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 4);
	sqlite3_bind_int64(st, 5, t->created);
	sqlite3_bind_int64(st, 6, t->expires);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return cd_sqlite_err(s, err, "store agent token");
	return 0;
}

/* Hand each row of st to fn: 0 at the end, fn's non-zero return, or -EIO. */
static int rows(struct cd_sqlite *s, sqlite3_stmt *st, cd_store_token_fn fn, void *ctx, int *ret_n,
                struct cd_err *err)
{
	int rc, r;

	*ret_n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cd_agent_token t = {
			.id = cd_sqlite_col(st, 0),
			.hash = cd_sqlite_col(st, 1),
			.agent = cd_sqlite_col(st, 2),
			.policy = cd_sqlite_col(st, 3),
			.created = sqlite3_column_int64(st, 4),
			.expires = sqlite3_column_int64(st, 5),
			.revoked = sqlite3_column_int64(st, 6),
		};
		if (!t.id || !t.hash || !t.agent || !*t.agent)
			continue;
		++*ret_n;
		if ((r = fn(&t, ctx)) != 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : cd_sqlite_err(s, err, "read agent tokens");
}

#define COLS "SELECT id, hash, agent, policy, created, expires, revoked FROM agent_tokens"

int cd_sqlite_agent_token_find(struct cd_store *store, const char *hash, int64_t now,
                               cd_store_token_fn fn, void *ctx, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	int r, n;

	if (sqlite3_prepare_v2(
	            s->db, COLS " WHERE hash = ? AND revoked = 0 AND (expires = 0 OR expires > ?)",
	            -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "find agent token");
	sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, now);
	r = rows(s, st, fn, ctx, &n, err);
	sqlite3_finalize(st);
	if (r)
		return r;
	return n ? 0 : cd_err_set(err, -ENOENT, "no such token in force");
}

int cd_sqlite_agent_token_list(struct cd_store *store, cd_store_token_fn fn, void *ctx,
                               struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	int r, n;

	if (sqlite3_prepare_v2(s->db, COLS " ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "list agent tokens");
	r = rows(s, st, fn, ctx, &n, err);
	sqlite3_finalize(st);
	return r;
}

int cd_sqlite_agent_token_revoke(struct cd_store *store, const char *id, int64_t now,
                                 struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(s->db,
	                       "UPDATE agent_tokens SET revoked = ? WHERE id = ? AND revoked = 0",
	                       -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "revoke agent token");
	sqlite3_bind_int64(st, 1, now > 0 ? now : 1);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return cd_sqlite_err(s, err, "revoke agent token");
	return sqlite3_changes(s->db) == 1 ? 0
	                                   : cd_err_set(err, -ENOENT, "no token '%s' in force", id);
}
