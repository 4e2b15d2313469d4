/* store-sqlite-grants.c — temporary grants in the SQLite state database
 * (store.h, table temp_grants; temp-grant.h says what they are).
 *
 * Trust boundary: rows may have been edited by hand.  A NULL or malformed
 * column makes the row unusable (skipped, a deny), never a wider grant;
 * temp-grant.c still checks each row as strictly as a written grant. */
#include "store-sqlite.h"

#include <errno.h>
#include <string.h>

static int kind_parse(const char *s, enum cd_temp_kind *ret)
{
	if (s && strcmp(s, "break-glass") == 0)
		*ret = CD_TEMP_BREAK_GLASS;
	else if (s && strcmp(s, "delegated") == 0)
		*ret = CD_TEMP_DELEGATED;
	else
		return -EINVAL;
	return 0;
}

int cd_sqlite_grant_add(struct cd_store *store, const struct cd_temp_grant *g, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	static const char sql[] =
	        "INSERT INTO temp_grants (id, kind, agent, task, tool, parent, grant_json, ticket,"
	        " by_whom, policy_sha256, created, expires, signature)"
	        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)";
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "add grant");
	sqlite3_bind_text(st, 1, g->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, cd_temp_kind_name(g->kind), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, g->agent, -1, SQLITE_STATIC);
	cd_sqlite_bind_opt(st, 4, g->task);
	sqlite3_bind_text(st, 5, g->tool, -1, SQLITE_STATIC);
	cd_sqlite_bind_opt(st, 6, g->parent);
	sqlite3_bind_text(st, 7, g->grant_json, -1, SQLITE_STATIC);
	cd_sqlite_bind_opt(st, 8, g->ticket);
	sqlite3_bind_text(st, 9, g->by, -1, SQLITE_STATIC);
	cd_sqlite_bind_opt(st, 10, g->policy_sha256);
	sqlite3_bind_int64(st, 11, g->created);
	sqlite3_bind_int64(st, 12, g->expires);
	cd_sqlite_bind_opt(st, 13, g->signature);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return cd_sqlite_err(s, err, "add grant");
	return 0;
}

#define COLUMNS                                                                                    \
	"id, kind, agent, task, tool, parent, grant_json, ticket, by_whom, policy_sha256, "        \
	"created, expires, ended, ended_at, ended_by, uses, last_used, signature"

/* One row into g; -EINVAL for a row that cannot be a grant. */
static int row_read(sqlite3_stmt *st, struct cd_temp_grant *g)
{
	const char *id = cd_sqlite_col(st, 0);

	memset(g, 0, sizeof *g);
	if (!id || strlen(id) >= sizeof g->id || kind_parse(cd_sqlite_col(st, 1), &g->kind) < 0)
		return -EINVAL;
	memcpy(g->id, id, strlen(id) + 1);
	g->agent = cd_sqlite_col(st, 2);
	g->task = cd_sqlite_col(st, 3);
	g->tool = cd_sqlite_col(st, 4);
	g->parent = cd_sqlite_col(st, 5);
	g->grant_json = cd_sqlite_col(st, 6);
	g->ticket = cd_sqlite_col(st, 7);
	g->by = cd_sqlite_col(st, 8);
	g->policy_sha256 = cd_sqlite_col(st, 9);
	g->created = sqlite3_column_int64(st, 10);
	g->expires = sqlite3_column_int64(st, 11);
	g->ended = cd_sqlite_col(st, 12);
	g->ended_at = sqlite3_column_int64(st, 13);
	g->ended_by = cd_sqlite_col(st, 14);
	g->uses = sqlite3_column_int64(st, 15);
	g->last_used = sqlite3_column_int64(st, 16);
	g->signature = cd_sqlite_col(st, 17);
	if (!g->agent || !g->tool || !g->grant_json || !g->by)
		return -EINVAL;
	if (g->kind == CD_TEMP_DELEGATED && !g->parent)
		return -EINVAL;
	return 0;
}

/* Run a SELECT of COLUMNS, calling fn for each readable row. */
static int each_row(struct cd_sqlite *s, sqlite3_stmt *st, cd_store_grant_fn fn, void *ctx,
                    struct cd_err *err)
{
	struct cd_temp_grant g;
	int rc, stop = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (row_read(st, &g) < 0)
			continue;
		if ((stop = fn(&g, ctx)) != 0)
			break;
	}
	if (!stop && rc != SQLITE_DONE)
		return cd_sqlite_err(s, err, "read grants");
	return stop;
}

int cd_sqlite_grant_list(struct cd_store *store, int all, int64_t now, cd_store_grant_fn fn,
                         void *ctx, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	int r;

	if (sqlite3_prepare_v2(s->db,
	                       all ? "SELECT " COLUMNS " FROM temp_grants ORDER BY created, id"
	                           : "SELECT " COLUMNS " FROM temp_grants WHERE ended IS NULL"
	                             " AND expires > ? ORDER BY created, id",
	                       -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "read grants");
	if (!all)
		sqlite3_bind_int64(st, 1, now);
	r = each_row(s, st, fn, ctx, err);
	sqlite3_finalize(st);
	return r;
}

static int set_ended(struct cd_sqlite *s, const char *id, const char *how, const char *by,
                     int64_t now, struct cd_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(s->db,
	                       "UPDATE temp_grants SET ended = ?, ended_at = ?, ended_by = ?"
	                       " WHERE id = ? AND ended IS NULL",
	                       -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "end grant");
	sqlite3_bind_text(st, 1, how, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, now);
	cd_sqlite_bind_opt(st, 3, by);
	sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return cd_sqlite_err(s, err, "end grant");
	return sqlite3_changes(s->db) == 1 ? 0 : -ENOENT;
}

int cd_sqlite_grant_end(struct cd_store *store, const char *id, const char *how, const char *by,
                        int64_t now, cd_store_grant_fn fn, void *ctx, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	int r, found = 0;
	struct cd_temp_grant g;

	if ((r = cd_sqlite_begin(store, err)) < 0)
		return r;
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT " COLUMNS " FROM temp_grants WHERE id = ? AND ended IS NULL",
	                       -1, &st, NULL) != SQLITE_OK) {
		r = cd_sqlite_err(s, err, "end grant");
		goto fail;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && row_read(st, &g) == 0) {
		found = 1;
		/* The caller logs the end inside our transaction: a grant is
		 * never ended without its record. */
		if (fn && (r = fn(&g, ctx)) != 0) {
			r = r < 0 ? r : -EIO;
			goto fail;
		}
	}
	sqlite3_finalize(st);
	st = NULL;
	if (!found) {
		r = cd_err_set(err, -ENOENT, "no active temporary grant '%s'", id);
		goto fail;
	}
	if ((r = set_ended(s, id, how, by, now, err)) < 0)
		goto fail;
	return cd_sqlite_commit(store, err);
fail:
	sqlite3_finalize(st);
	cd_sqlite_rollback(store);
	return r;
}

struct sweep_ctx {
	cd_store_grant_fn fn;
	void *ctx;
};

static int sweep_row(sqlite3_stmt *st, void *ctx)
{
	struct sweep_ctx *c = ctx;
	struct cd_temp_grant g;
	int r;

	if (row_read(st, &g) < 0 || !c->fn)
		return 0;
	r = c->fn(&g, c->ctx);
	return r == 0 ? 0 : r < 0 ? r : -EIO;
}

int cd_sqlite_grant_sweep(struct cd_store *store, int64_t now, cd_store_grant_fn fn, void *ctx,
                          size_t *ret_n, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	struct sweep_ctx c = { fn, ctx };

	return cd_sqlite_sweep(s,
	                       "SELECT " COLUMNS " FROM temp_grants WHERE ended IS NULL"
	                       " AND expires <= ?1 ORDER BY expires, id",
	                       "UPDATE temp_grants SET ended = 'expired', ended_at = expires,"
	                       " ended_by = 'cordon' WHERE ended IS NULL AND expires <= ?1",
	                       now, sweep_row, &c, ret_n, "sweep grants", err);
}

int cd_sqlite_grant_used(struct cd_store *store, const char *id, int64_t now, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(s->db,
	                       "UPDATE temp_grants SET uses = uses + 1, last_used = ? WHERE id = ?",
	                       -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "count use");
	sqlite3_bind_int64(st, 1, now);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return cd_sqlite_err(s, err, "count use");
	return 0;
}

/* Whether grant `id` is in force at `now` (not ended, not expired), and
 * with `count` its use counted in the same statement (no window between
 * the check and the count). */
int cd_sqlite_grant_use(struct cd_store *store, const char *id, int64_t now, int count,
                        struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	static const char *const sql[] = {
		"SELECT 1 FROM temp_grants WHERE id = ?2 AND ended IS NULL AND expires > ?1",
		"UPDATE temp_grants SET uses = uses + 1, last_used = ?1"
		" WHERE id = ?2 AND ended IS NULL AND expires > ?1",
	};
	sqlite3_stmt *st = NULL;
	int rc, found;

	if (sqlite3_prepare_v2(s->db, sql[count ? 1 : 0], -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "check temporary grant");
	sqlite3_bind_int64(st, 1, now);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return cd_sqlite_err(s, err, "check temporary grant");
	found = count ? sqlite3_changes(s->db) == 1 : rc == SQLITE_ROW;
	if (!found)
		return cd_err_set(err, -CD_E_DENIED,
		                  "temporary grant '%s' was revoked or has ended", id);
	return 0;
}
