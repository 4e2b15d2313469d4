/* store-sqlite-approvals.c — the approval queue in the SQLite state
 * database (store.h, table approvals; approval.h says what it is).
 *
 * Trust boundary: rows may have been edited by hand; a row that cannot be
 * a request (no id, a hash that is not 64 characters, a required column
 * NULL) is skipped, never approved, and approval.c checks the hash of
 * every row it uses against the row's own parts. */
#include "store-sqlite.h"

#include <errno.h>
#include <string.h>

#define COLUMNS                                                                                    \
	"id, status, agent, task, tool, action, args_json, args_sha256, grant_ids, approval, "     \
	"profile, policy, policy_sha256, requester, run_id, created, deadline, decided_at, "       \
	"decided_by, comment, used_at, sampled_at, sampled_by, log_args, signature"

int cd_sqlite_approval_add(struct cd_store *store, const struct cd_approval *a, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	static const char sql[] =
	        "INSERT INTO approvals (id, status, agent, task, tool, action, args_json,"
	        " args_sha256, grant_ids, approval, profile, policy, policy_sha256, requester,"
	        " run_id, created, deadline, log_args)"
	        " VALUES (?,'pending',?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "queue approval request");
	sqlite3_bind_text(st, 1, a->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, a->agent, -1, SQLITE_STATIC);
	cd_sqlite_bind_opt(st, 3, a->task);
	sqlite3_bind_text(st, 4, a->tool, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, a->action, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, a->args_json, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, a->args_sha256, -1, SQLITE_STATIC);
	cd_sqlite_bind_opt(st, 8, a->grant_ids);
	sqlite3_bind_text(st, 9, a->approval, -1, SQLITE_STATIC);
	cd_sqlite_bind_opt(st, 10, a->profile);
	cd_sqlite_bind_opt(st, 11, a->policy);
	cd_sqlite_bind_opt(st, 12, a->policy_sha256);
	cd_sqlite_bind_opt(st, 13, a->requester);
	cd_sqlite_bind_opt(st, 14, a->run_id);
	sqlite3_bind_int64(st, 15, a->created);
	sqlite3_bind_int64(st, 16, a->deadline);
	cd_sqlite_bind_opt(st, 17, a->log_args);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return cd_sqlite_err(s, err, "queue approval request");
	return 0;
}

/* One row into a; -EINVAL for a row that cannot be a request. */
static int row_read(sqlite3_stmt *st, struct cd_approval *a)
{
	const char *id = cd_sqlite_col(st, 0), *sha = cd_sqlite_col(st, 7);

	memset(a, 0, sizeof *a);
	if (!id || strlen(id) >= sizeof a->id || !sha || strlen(sha) != 64)
		return -EINVAL;
	memcpy(a->id, id, strlen(id) + 1);
	memcpy(a->args_sha256, sha, 65);
	a->status = cd_sqlite_col(st, 1);
	a->agent = cd_sqlite_col(st, 2);
	a->task = cd_sqlite_col(st, 3);
	a->tool = cd_sqlite_col(st, 4);
	a->action = cd_sqlite_col(st, 5);
	a->args_json = cd_sqlite_col(st, 6);
	a->grant_ids = cd_sqlite_col(st, 8);
	a->approval = cd_sqlite_col(st, 9);
	a->profile = cd_sqlite_col(st, 10);
	a->policy = cd_sqlite_col(st, 11);
	a->policy_sha256 = cd_sqlite_col(st, 12);
	a->requester = cd_sqlite_col(st, 13);
	a->run_id = cd_sqlite_col(st, 14);
	a->created = sqlite3_column_int64(st, 15);
	a->deadline = sqlite3_column_int64(st, 16);
	a->decided_at = sqlite3_column_int64(st, 17);
	a->decided_by = cd_sqlite_col(st, 18);
	a->comment = cd_sqlite_col(st, 19);
	a->used_at = sqlite3_column_int64(st, 20);
	a->sampled_at = sqlite3_column_int64(st, 21);
	a->sampled_by = cd_sqlite_col(st, 22);
	a->log_args = cd_sqlite_col(st, 23);
	a->signature = cd_sqlite_col(st, 24);
	if (!a->status || !a->agent || !a->tool || !a->action || !a->args_json || !a->approval)
		return -EINVAL;
	return 0;
}

static int each_row(struct cd_sqlite *s, sqlite3_stmt *st, cd_store_approval_fn fn, void *ctx,
                    struct cd_err *err)
{
	struct cd_approval a;
	int rc, stop = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (row_read(st, &a) < 0)
			continue;
		if ((stop = fn(&a, ctx)) != 0)
			return stop;
	}
	if (rc != SQLITE_DONE)
		return cd_sqlite_err(s, err, "read approvals");
	return 0;
}

int cd_sqlite_approval_get(struct cd_store *store, const char *id, cd_store_approval_fn fn,
                           void *ctx, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	struct cd_approval a;
	int rc, r;

	if (sqlite3_prepare_v2(s->db, "SELECT " COLUMNS " FROM approvals WHERE id = ?", -1, &st,
	                       NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "read approval");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && row_read(st, &a) == 0)
		r = fn(&a, ctx);
	else if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		r = cd_err_set(err, -ENOENT, "no approval request '%s'", id);
	else
		r = cd_sqlite_err(s, err, "read approval");
	sqlite3_finalize(st);
	return r;
}

int cd_sqlite_approval_list(struct cd_store *store, const char *status, int64_t since,
                            cd_store_approval_fn fn, void *ctx, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	int r;

	if (sqlite3_prepare_v2(s->db,
	                       "SELECT " COLUMNS " FROM approvals WHERE (?1 IS NULL OR status = ?1)"
	                       " AND created >= ?2 ORDER BY created, id",
	                       -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "read approvals");
	cd_sqlite_bind_opt(st, 1, status);
	sqlite3_bind_int64(st, 2, since);
	r = each_row(s, st, fn, ctx, err);
	sqlite3_finalize(st);
	return r;
}

/* Read the row, let the caller check it, change its status: one
 * transaction, and the update names the status it read. */
int cd_sqlite_approval_move(struct cd_store *store, const struct cd_store_approval_move *c,
                            struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	struct cd_approval a;
	int r, rc;

	if ((r = cd_sqlite_begin(store, err)) < 0)
		return r;
	if (sqlite3_prepare_v2(s->db, "SELECT " COLUMNS " FROM approvals WHERE id = ?", -1, &st,
	                       NULL) != SQLITE_OK) {
		r = cd_sqlite_err(s, err, "read approval");
		goto fail;
	}
	sqlite3_bind_text(st, 1, c->id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW || row_read(st, &a) < 0) {
		r = rc == SQLITE_ROW || rc == SQLITE_DONE
		            ? cd_err_set(err, -ENOENT, "no approval request '%s'", c->id)
		            : cd_sqlite_err(s, err, "read approval");
		goto fail;
	}
	if (c->check && (r = c->check(&a, c->ctx)) != 0) {
		r = r < 0 ? r : -EPERM;
		goto fail;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(
	            s->db,
	            !strcmp(c->to, "used")
	                    ? "UPDATE approvals SET status = ?1, used_at = ?2 WHERE id = ?5"
	                      " AND status = ?6"
	                    : "UPDATE approvals SET status = ?1, decided_at = ?2,"
	                      " decided_by = ?3, comment = ?4, signature = ?7"
	                      " WHERE id = ?5 AND status = ?6",
	            -1, &st, NULL) != SQLITE_OK) {
		r = cd_sqlite_err(s, err, "update approval");
		goto fail;
	}
	sqlite3_bind_text(st, 1, c->to, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, c->now);
	cd_sqlite_bind_opt(st, 3, c->by);
	cd_sqlite_bind_opt(st, 4, c->comment);
	sqlite3_bind_text(st, 5, c->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, c->from, -1, SQLITE_STATIC);
	if (strcmp(c->to, "used") != 0)
		cd_sqlite_bind_opt(st, 7, c->signature && *c->signature ? c->signature : NULL);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE || sqlite3_changes(s->db) != 1) {
		r = cd_sqlite_err(s, err, "update approval");
		goto fail;
	}
	return cd_sqlite_commit(store, err);
fail:
	sqlite3_finalize(st);
	cd_sqlite_rollback(store);
	return r;
}

struct expire_ctx {
	cd_store_approval_fn fn;
	void *ctx;
};

static int expire_row(sqlite3_stmt *st, void *ctx)
{
	struct expire_ctx *c = ctx;
	struct cd_approval a;
	int r;

	if (row_read(st, &a) < 0 || !c->fn)
		return 0;
	r = c->fn(&a, c->ctx);
	return r == 0 ? 0 : r < 0 ? r : -EIO;
}

int cd_sqlite_approval_expire(struct cd_store *store, int64_t now, cd_store_approval_fn fn,
                              void *ctx, size_t *ret_n, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	struct expire_ctx c = { fn, ctx };

	return cd_sqlite_sweep(s,
	                       "SELECT " COLUMNS " FROM approvals WHERE status IN ('pending',"
	                       " 'approved') AND deadline <= ?1 ORDER BY deadline, id",
	                       "UPDATE approvals SET status = 'expired', decided_at ="
	                       " COALESCE(decided_at, deadline), decided_by = COALESCE("
	                       "decided_by, 'timeout') WHERE status IN ('pending', 'approved')"
	                       " AND deadline <= ?1",
	                       now, expire_row, &c, ret_n, "expire approvals", err);
}

int cd_sqlite_approval_sample(struct cd_store *store, size_t n, int64_t since, const char *by,
                              int64_t now, cd_store_approval_fn fn, void *ctx, size_t *ret_n,
                              struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL, *up = NULL;
	size_t got = 0;
	int r, rc;

	if (ret_n)
		*ret_n = 0;
	if ((r = cd_sqlite_begin(store, err)) < 0)
		return r;
	/* SQLite's random() is a PRNG seeded from the OS on first use: good
	 * enough to keep an approver from predicting the sample. */
	if (sqlite3_prepare_v2(
	            s->db,
	            "SELECT " COLUMNS " FROM approvals WHERE status IN ('approved',"
	            " 'used') AND sampled_at IS NULL AND decided_at >= ? ORDER BY random()"
	            " LIMIT ?",
	            -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db,
	                       "UPDATE approvals SET sampled_at = ?, sampled_by = ? WHERE id = ?",
	                       -1, &up, NULL) != SQLITE_OK) {
		r = cd_sqlite_err(s, err, "sample approvals");
		goto fail;
	}
	sqlite3_bind_int64(st, 1, since);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)n);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cd_approval a;
		if (row_read(st, &a) < 0)
			continue;
		sqlite3_reset(up);
		sqlite3_bind_int64(up, 1, now);
		sqlite3_bind_text(up, 2, by, -1, SQLITE_STATIC);
		sqlite3_bind_text(up, 3, a.id, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(up) != SQLITE_DONE) {
			r = cd_sqlite_err(s, err, "sample approvals");
			goto fail;
		}
		a.sampled_at = now;
		a.sampled_by = by;
		if (fn && (r = fn(&a, ctx)) != 0) {
			r = r < 0 ? r : -EIO;
			goto fail;
		}
		got++;
	}
	if (rc != SQLITE_DONE) {
		r = cd_sqlite_err(s, err, "sample approvals");
		goto fail;
	}
	sqlite3_finalize(st);
	sqlite3_finalize(up);
	if ((r = cd_sqlite_commit(store, err)) < 0)
		return r;
	if (ret_n)
		*ret_n = got;
	return 0;
fail:
	sqlite3_finalize(st);
	sqlite3_finalize(up);
	cd_sqlite_rollback(store);
	return r;
}
