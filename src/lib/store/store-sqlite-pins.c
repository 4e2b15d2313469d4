/* store-sqlite-pins.c — pinned tool definitions of MCP servers in the
 * SQLite state database (store.h, table mcp_pins; mcp-pins.h says what a
 * pin is).
 *
 * Trust boundary: tool names and definitions come from servers (hostile):
 * always bound as parameters, never interpolated; a damaged row is never
 * listed as valid. */
#include "store-sqlite.h"

#include <errno.h>
#include <string.h>

static int fail(struct cd_sqlite *s, sqlite3_stmt *st, struct cd_err *err, const char *what)
{
	int r = cd_sqlite_err(s, err, what);
	sqlite3_finalize(st);
	return r;
}

static int prepare(struct cd_sqlite *s, const char *sql, sqlite3_stmt **st, struct cd_err *err)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
		return fail(s, NULL, err, "mcp pins");
	return 0;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

int cd_sqlite_pin_see(struct cd_store *store, const char *server, const char *tool,
                      const char *sha256, const char *definition, int64_t now, int *ret_approved,
                      int *ret_other_approved, int *ret_new, int *ret_shadowed, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	int r, approved, approved_other = 0, inserted;
	const unsigned char *state = NULL;

	if ((r = cd_sqlite_begin(store, err)) < 0)
		return r;
	/* New only if this insert made the row: two sightings within one
	 * second (the inventory, then a session) are not both new. */
	if ((r = prepare(s,
	                 "INSERT INTO mcp_pins(server,tool,sha256,definition,state,first_seen,"
	                 "last_seen) VALUES(?,?,?,?,'pending',?,?) ON CONFLICT(server,tool,sha256)"
	                 " DO NOTHING",
	                 &st, err)) < 0)
		goto rollback;
	bind_text(st, 1, server);
	bind_text(st, 2, tool);
	bind_text(st, 3, sha256);
	bind_text(st, 4, definition);
	sqlite3_bind_int64(st, 5, now);
	sqlite3_bind_int64(st, 6, now);
	if (sqlite3_step(st) != SQLITE_DONE) {
		r = fail(s, st, err, "mcp pins: record");
		goto rollback;
	}
	sqlite3_finalize(st);
	inserted = sqlite3_changes(s->db) > 0;
	if (!inserted) {
		if ((r = prepare(s,
		                 "UPDATE mcp_pins SET last_seen=? WHERE server=? AND tool=? AND "
		                 "sha256=?",
		                 &st, err)) < 0)
			goto rollback;
		sqlite3_bind_int64(st, 1, now);
		bind_text(st, 2, server);
		bind_text(st, 3, tool);
		bind_text(st, 4, sha256);
		if (sqlite3_step(st) != SQLITE_DONE) {
			r = fail(s, st, err, "mcp pins: record");
			goto rollback;
		}
		sqlite3_finalize(st);
	}
	if ((r = prepare(s, "SELECT state FROM mcp_pins WHERE server=? AND tool=? AND sha256=?",
	                 &st, err)) < 0)
		goto rollback;
	bind_text(st, 1, server);
	bind_text(st, 2, tool);
	bind_text(st, 3, sha256);
	if (sqlite3_step(st) != SQLITE_ROW) {
		r = fail(s, st, err, "mcp pins: read");
		goto rollback;
	}
	state = sqlite3_column_text(st, 0);
	approved = state && !strcmp((const char *)state, "approved");
	sqlite3_finalize(st);
	if (!approved) {
		if ((r = prepare(s,
		                 "SELECT count(*) FROM mcp_pins WHERE server=? AND tool=? AND "
		                 "state IN ('approved','superseded')",
		                 &st, err)) < 0)
			goto rollback;
		bind_text(st, 1, server);
		bind_text(st, 2, tool);
		if (sqlite3_step(st) == SQLITE_ROW)
			approved_other = sqlite3_column_int(st, 0) > 0;
		sqlite3_finalize(st);
	}
	if ((r = prepare(s,
	                 "SELECT count(DISTINCT server) FROM mcp_pins WHERE tool=? AND server<>?",
	                 &st, err)) < 0)
		goto rollback;
	bind_text(st, 1, tool);
	bind_text(st, 2, server);
	*ret_shadowed = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	*ret_approved = approved;
	*ret_other_approved = approved_other;
	*ret_new = inserted;
	return cd_sqlite_commit(store, err);
rollback:
	cd_sqlite_rollback(store);
	return r;
}

int cd_sqlite_pin_list(struct cd_store *store, const char *server, const char *tool,
                       cd_store_pin_fn fn, void *ctx, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = prepare(s,
	                 "SELECT server,tool,sha256,definition,state,approved_by,first_seen,"
	                 "last_seen,coalesce(approved_at,0),signature FROM mcp_pins WHERE (?1 IS "
	                 "NULL OR "
	                 "server=?1) AND (?2 IS NULL OR tool=?2) ORDER BY server,tool,first_seen,"
	                 "sha256",
	                 &st, err)) < 0)
		return r;
	bind_text(st, 1, server);
	bind_text(st, 2, tool);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cd_mcp_pin_row row;

		row.server = (const char *)sqlite3_column_text(st, 0);
		row.tool = (const char *)sqlite3_column_text(st, 1);
		row.sha256 = (const char *)sqlite3_column_text(st, 2);
		row.definition = (const char *)sqlite3_column_text(st, 3);
		row.state = (const char *)sqlite3_column_text(st, 4);
		row.approved_by = (const char *)sqlite3_column_text(st, 5);
		row.first_seen = sqlite3_column_int64(st, 6);
		row.last_seen = sqlite3_column_int64(st, 7);
		row.approved_at = sqlite3_column_int64(st, 8);
		row.signature = (const char *)sqlite3_column_text(st, 9);
		if (!row.server || !row.tool || !row.sha256 || !row.definition || !row.state)
			continue; /* a damaged row is never shown as valid */
		if ((r = fn(&row, ctx)) < 0) {
			sqlite3_finalize(st);
			return r;
		}
	}
	if (rc != SQLITE_DONE)
		return fail(s, st, err, "mcp pins: list");
	sqlite3_finalize(st);
	return 0;
}

int cd_sqlite_pin_approve(struct cd_store *store, const char *server, const char *tool,
                          const char *sha256, const char *by, int64_t now,
                          cd_store_pin_sign_fn sign, void *sctx, char ret_sha256[65],
                          struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	const unsigned char *h;
	char sha[65], sig[128];
	int r;

	if ((r = cd_sqlite_begin(store, err)) < 0)
		return r;
	if ((r = prepare(s,
	                 "SELECT sha256 FROM mcp_pins WHERE server=? AND tool=? AND state='pending'"
	                 " AND (?3 IS NULL OR sha256=?3) ORDER BY last_seen DESC, first_seen DESC "
	                 "LIMIT 1",
	                 &st, err)) < 0)
		goto rollback;
	bind_text(st, 1, server);
	bind_text(st, 2, tool);
	bind_text(st, 3, sha256);
	if (sqlite3_step(st) != SQLITE_ROW || !(h = sqlite3_column_text(st, 0)) ||
	    strlen((const char *)h) != 64) {
		sqlite3_finalize(st);
		r = cd_err_set(err, -ENOENT, "no pending definition of tool '%s' of server '%s'%s",
		               tool, server, sha256 ? " with that sha256" : "");
		goto rollback;
	}
	memcpy(sha, h, 65);
	sqlite3_finalize(st);
	if (sign && sign(sha, sig, sizeof sig, sctx) < 0) {
		r = cd_err_set(err, -EIO, "cannot sign the approval");
		goto rollback;
	}
	if ((r = prepare(s,
	                 "UPDATE mcp_pins SET state='superseded' WHERE server=? AND tool=? AND "
	                 "state='approved'",
	                 &st, err)) < 0)
		goto rollback;
	bind_text(st, 1, server);
	bind_text(st, 2, tool);
	if (sqlite3_step(st) != SQLITE_DONE) {
		r = fail(s, st, err, "mcp pins: supersede");
		goto rollback;
	}
	sqlite3_finalize(st);
	if ((r = prepare(s,
	                 "UPDATE mcp_pins SET state='approved', approved_at=?1, approved_by=?2, "
	                 "signature=?6 WHERE server=?3 AND tool=?4 AND sha256=?5",
	                 &st, err)) < 0)
		goto rollback;
	sqlite3_bind_int64(st, 1, now);
	bind_text(st, 2, by);
	bind_text(st, 3, server);
	bind_text(st, 4, tool);
	bind_text(st, 5, sha);
	bind_text(st, 6, sign ? sig : NULL);
	if (sqlite3_step(st) != SQLITE_DONE) {
		r = fail(s, st, err, "mcp pins: approve");
		goto rollback;
	}
	sqlite3_finalize(st);
	if ((r = cd_sqlite_commit(store, err)) < 0)
		return r;
	memcpy(ret_sha256, sha, 65);
	return 0;
rollback:
	cd_sqlite_rollback(store);
	return r;
}
