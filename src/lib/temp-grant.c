/* temp-grant.c — break-glass and delegated grants in the state database
 * (temp-grant.h).  The table is created by state.c's migrations.
 *
 * Trust boundary: rows may have been edited by hand.  A row is used only
 * through cd_policy_add_temp, which checks it as strictly as a written
 * grant; a NULL or malformed column makes the row unusable (skipped, a
 * deny), never a wider grant. */
#include "temp-grant.h"

#include "store-sqlite.h"

#include <errno.h>
#include <string.h>

const char *cd_temp_kind_name(enum cd_temp_kind k)
{
	switch (k) {
	case CD_TEMP_BREAK_GLASS:
		return "break-glass";
	case CD_TEMP_DELEGATED:
		return "delegated";
	}
	return "?";
}

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

int cd_temp_add(struct cd_state *s, struct cd_temp_grant *g, struct cd_err *err)
{
	static const char sql[] =
	        "INSERT INTO temp_grants (id, kind, agent, task, tool, parent, grant_json, ticket,"
	        " by_whom, policy_sha256, created, expires) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)";
	sqlite3_stmt *st = NULL;
	int rc;

	if (!g->agent || !g->tool || !g->grant_json || !g->by ||
	    (g->kind != CD_TEMP_BREAK_GLASS && g->kind != CD_TEMP_DELEGATED))
		return cd_err_set(err, -EINVAL, "temporary grant: missing fields");
	if (!g->id[0])
		cd_state_random_id(g->kind == CD_TEMP_BREAK_GLASS ? "bg-" : "dg-", g->id,
		                   sizeof g->id);
	if (sqlite3_prepare_v2(cd_sqlite_db_(cd_state_store(s)), sql, -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(cd_sqlite_of(cd_state_store(s)), err, "add grant");
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
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return cd_sqlite_err(cd_sqlite_of(cd_state_store(s)), err, "add grant");
	return 0;
}

#define COLUMNS                                                                                    \
	"id, kind, agent, task, tool, parent, grant_json, ticket, by_whom, policy_sha256, "        \
	"created, expires, ended, ended_at, ended_by, uses, last_used"

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
	if (!g->agent || !g->tool || !g->grant_json || !g->by)
		return -EINVAL;
	if (g->kind == CD_TEMP_DELEGATED && !g->parent)
		return -EINVAL;
	return 0;
}

/* Run a SELECT of COLUMNS, calling fn for each readable row. */
static int each_row(struct cd_state *s, sqlite3_stmt *st, cd_temp_fn fn, void *ctx,
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
		return cd_sqlite_err(cd_sqlite_of(cd_state_store(s)), err, "read grants");
	return stop;
}

int cd_temp_list(struct cd_state *s, int all, int64_t now, cd_temp_fn fn, void *ctx,
                 struct cd_err *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if (sqlite3_prepare_v2(cd_sqlite_db_(cd_state_store(s)),
	                       all ? "SELECT " COLUMNS " FROM temp_grants ORDER BY created, id"
	                           : "SELECT " COLUMNS " FROM temp_grants WHERE ended IS NULL"
	                             " AND expires > ? ORDER BY created, id",
	                       -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(cd_sqlite_of(cd_state_store(s)), err, "read grants");
	if (!all)
		sqlite3_bind_int64(st, 1, now);
	r = each_row(s, st, fn, ctx, err);
	sqlite3_finalize(st);
	return r;
}

static int set_ended(struct cd_state *s, const char *id, const char *how, const char *by,
                     int64_t now, struct cd_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(cd_sqlite_db_(cd_state_store(s)),
	                       "UPDATE temp_grants SET ended = ?, ended_at = ?, ended_by = ?"
	                       " WHERE id = ? AND ended IS NULL",
	                       -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(cd_sqlite_of(cd_state_store(s)), err, "end grant");
	sqlite3_bind_text(st, 1, how, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, now);
	cd_sqlite_bind_opt(st, 3, by);
	sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return cd_sqlite_err(cd_sqlite_of(cd_state_store(s)), err, "end grant");
	return sqlite3_changes(cd_sqlite_db_(cd_state_store(s))) == 1 ? 0 : -ENOENT;
}

int cd_temp_end(struct cd_state *s, const char *id, const char *how, const char *by, int64_t now,
                cd_temp_fn fn, void *ctx, struct cd_err *err)
{
	sqlite3_stmt *st = NULL;
	int r, found = 0;
	struct cd_temp_grant g;

	if (!id || !how)
		return cd_err_set(err, -EINVAL, "no grant id");
	if ((r = cd_state_begin(s, err)) < 0)
		return r;
	if (sqlite3_prepare_v2(cd_sqlite_db_(cd_state_store(s)),
	                       "SELECT " COLUMNS " FROM temp_grants WHERE id = ? AND ended IS NULL",
	                       -1, &st, NULL) != SQLITE_OK) {
		r = cd_sqlite_err(cd_sqlite_of(cd_state_store(s)), err, "end grant");
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
	return cd_state_commit(s, err);
fail:
	sqlite3_finalize(st);
	cd_state_rollback(s);
	return r;
}

struct sweep_ctx {
	cd_temp_fn fn;
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

int cd_temp_sweep(struct cd_state *s, int64_t now, cd_temp_fn fn, void *ctx, size_t *ret_n,
                  struct cd_err *err)
{
	struct sweep_ctx c = { fn, ctx };

	return cd_sqlite_sweep(cd_sqlite_of(cd_state_store(s)),
	                       "SELECT " COLUMNS " FROM temp_grants WHERE ended IS NULL"
	                       " AND expires <= ?1 ORDER BY expires, id",
	                       "UPDATE temp_grants SET ended = 'expired', ended_at = expires,"
	                       " ended_by = 'cordon' WHERE ended IS NULL AND expires <= ?1",
	                       now, sweep_row, &c, ret_n, "sweep grants", err);
}

int cd_temp_used(struct cd_state *s, const char *id, int64_t now, struct cd_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(cd_sqlite_db_(cd_state_store(s)),
	                       "UPDATE temp_grants SET uses = uses + 1, last_used = ? WHERE id = ?",
	                       -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(cd_sqlite_of(cd_state_store(s)), err, "count use");
	sqlite3_bind_int64(st, 1, now);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return cd_sqlite_err(cd_sqlite_of(cd_state_store(s)), err, "count use");
	return 0;
}

/* Whether grant `id` is in force at `now` (not ended, not expired), and
 * with `count` its use counted in the same statement (no window between
 * the check and the count). */
static int in_force(struct cd_state *s, const char *id, int64_t now, int count, struct cd_err *err)
{
	static const char *const sql[] = {
		"SELECT 1 FROM temp_grants WHERE id = ?2 AND ended IS NULL AND expires > ?1",
		"UPDATE temp_grants SET uses = uses + 1, last_used = ?1"
		" WHERE id = ?2 AND ended IS NULL AND expires > ?1",
	};
	sqlite3_stmt *st = NULL;
	int rc, found;

	if (sqlite3_prepare_v2(cd_sqlite_db_(cd_state_store(s)), sql[count ? 1 : 0], -1, &st,
	                       NULL) != SQLITE_OK)
		return cd_sqlite_err(cd_sqlite_of(cd_state_store(s)), err, "check temporary grant");
	sqlite3_bind_int64(st, 1, now);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return cd_sqlite_err(cd_sqlite_of(cd_state_store(s)), err, "check temporary grant");
	found = count ? sqlite3_changes(cd_sqlite_db_(cd_state_store(s))) == 1 : rc == SQLITE_ROW;
	if (!found)
		return cd_err_set(err, -CD_E_DENIED,
		                  "temporary grant '%s' was revoked or has ended", id);
	return 0;
}

int cd_temp_use_active(struct cd_state *s, const char *id, int64_t now, struct cd_err *err)
{
	return in_force(s, id, now, 1, err);
}

int cd_temp_in_force(struct cd_state *s, const char *id, int64_t now, struct cd_err *err)
{
	return in_force(s, id, now, 0, err);
}

struct apply_ctx {
	struct cd_policy *p;
	cd_temp_warn_fn warn;
	void *ctx;
	size_t n, seen;
};

static int apply_one(const struct cd_temp_grant *g, void *ctx)
{
	struct apply_ctx *a = ctx;
	struct cd_err e = { 0 };

	if (++a->seen > CD_TEMP_MAX_ACTIVE) {
		if (a->warn)
			a->warn(g->id,
			        "more active temporary grants than cordon takes into account",
			        a->ctx);
		return 1;
	}
	if (cd_policy_add_temp(a->p, g->kind, g->id, g->parent, g->grant_json, g->created, &e) <
	    0) {
		if (a->warn)
			a->warn(g->id, e.msg, a->ctx);
		return 0;
	}
	a->n++;
	return 0;
}

int cd_temp_apply(struct cd_state *s, struct cd_policy *p, int64_t now, cd_temp_warn_fn warn,
                  void *ctx, size_t *ret_n, struct cd_err *err)
{
	struct apply_ctx a = { p, warn, ctx, 0, 0 };
	int r = cd_temp_list(s, 0, now, apply_one, &a, err);

	if (ret_n)
		*ret_n = a.n;
	return r < 0 ? r : 0;
}
