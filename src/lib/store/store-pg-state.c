/* store-pg-state.c — the state tables in PostgreSQL (store.h): temporary
 * grants, the approval queue and MCP tool pins, shared by every host
 * that names the same store.
 *
 * Concurrency: an operation that reads then writes runs in one
 * transaction and locks the rows it read (SELECT ... FOR UPDATE; state
 * writers hold UPDATE rights on these tables, unlike on the audit log),
 * and every update names the state it read, so two hosts racing for one
 * single-use approval cannot both win: the loser waits for the winner's
 * commit, then reads 'used' and is refused.
 *
 * Trust boundary: as the SQLite files (store-sqlite-grants.c, -approvals.c,
 * -pins.c): a damaged row is skipped, never widened. */
#include "store-pg.h"

#include <errno.h>
#include <string.h>

static int fail_code(struct cd_err *err)
{
	return err && err->code ? err->code : -EIO;
}

/* ---- temporary grants ------------------------------------------- */

#define GRANT_COLUMNS                                                                              \
	"id, kind, agent, task, tool, parent, grant_json, ticket, by_whom, policy_sha256, "        \
	"created, expires, ended, ended_at, ended_by, uses, last_used, signature"

int cd_pg_grant_add(struct cd_store *st, const struct cd_temp_grant *g, struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };

	cd_pg_p_str(&p, g->id);
	cd_pg_p_str(&p, cd_temp_kind_name(g->kind));
	cd_pg_p_str(&p, g->agent);
	cd_pg_p_str(&p, g->task);
	cd_pg_p_str(&p, g->tool);
	cd_pg_p_str(&p, g->parent);
	cd_pg_p_str(&p, g->grant_json);
	cd_pg_p_str(&p, g->ticket);
	cd_pg_p_str(&p, g->by);
	cd_pg_p_str(&p, g->policy_sha256);
	cd_pg_p_int(&p, g->created);
	cd_pg_p_int(&p, g->expires);
	cd_pg_p_str(&p, g->signature);
	if (cd_pg_cmd(cd_pg_of(st),
	              "INSERT INTO temp_grants (id, kind, agent, task, tool, parent, grant_json,"
	              " ticket, by_whom, policy_sha256, created, expires, signature)"
	              " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13)",
	              &p, "add grant", err) < 0)
		return fail_code(err);
	return 0;
}

static int grant_read(const PGresult *res, int i, struct cd_temp_grant *g)
{
	const char *id = cd_pg_col(res, i, 0), *kind = cd_pg_col(res, i, 1);

	memset(g, 0, sizeof *g);
	if (!id || strlen(id) >= sizeof g->id || !kind)
		return -EINVAL;
	if (strcmp(kind, "break-glass") == 0)
		g->kind = CD_TEMP_BREAK_GLASS;
	else if (strcmp(kind, "delegated") == 0)
		g->kind = CD_TEMP_DELEGATED;
	else
		return -EINVAL;
	memcpy(g->id, id, strlen(id) + 1);
	g->agent = cd_pg_col(res, i, 2);
	g->task = cd_pg_col(res, i, 3);
	g->tool = cd_pg_col(res, i, 4);
	g->parent = cd_pg_col(res, i, 5);
	g->grant_json = cd_pg_col(res, i, 6);
	g->ticket = cd_pg_col(res, i, 7);
	g->by = cd_pg_col(res, i, 8);
	g->policy_sha256 = cd_pg_col(res, i, 9);
	g->created = cd_pg_int(res, i, 10);
	g->expires = cd_pg_int(res, i, 11);
	g->ended = cd_pg_col(res, i, 12);
	g->ended_at = cd_pg_int(res, i, 13);
	g->ended_by = cd_pg_col(res, i, 14);
	g->uses = cd_pg_int(res, i, 15);
	g->last_used = cd_pg_int(res, i, 16);
	g->signature = cd_pg_col(res, i, 17);
	if (!g->agent || !g->tool || !g->grant_json || !g->by)
		return -EINVAL;
	if (g->kind == CD_TEMP_DELEGATED && !g->parent)
		return -EINVAL;
	return 0;
}

/* fn for each readable row of res (then freed); fn's non-zero return
 * stops and is returned (made negative when `neg`). */
static int grant_rows(PGresult *res, cd_store_grant_fn fn, void *ctx, int neg, size_t *ret_n)
{
	struct cd_temp_grant g;
	int i, r = 0;
	size_t n = 0;

	for (i = 0; r == 0 && i < cd_pq.ntuples(res); i++) {
		if (grant_read(res, i, &g) < 0)
			continue;
		n++;
		if (fn)
			r = fn(&g, ctx);
	}
	cd_pq.clear(res);
	if (ret_n)
		*ret_n = n;
	return r > 0 && neg ? -EIO : r;
}

int cd_pg_grant_list(struct cd_store *st, int all, int64_t now, cd_store_grant_fn fn, void *ctx,
                     struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };
	PGresult *res;

	cd_pg_p_int(&p, now);
	res = cd_pg_query(cd_pg_of(st),
	                  all ? "SELECT " GRANT_COLUMNS " FROM temp_grants WHERE $1::bigint IS NOT"
	                        " NULL ORDER BY created, id"
	                      : "SELECT " GRANT_COLUMNS " FROM temp_grants WHERE ended IS NULL"
	                        " AND expires > $1 ORDER BY created, id",
	                  &p, "read grants", err);
	if (!res)
		return fail_code(err);
	return grant_rows(res, fn, ctx, 0, NULL);
}

int cd_pg_grant_end(struct cd_store *st, const char *id, const char *how, const char *by,
                    int64_t now, cd_store_grant_fn fn, void *ctx, struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };
	PGresult *res;
	size_t n = 0;
	int r;

	if ((r = cd_pg_begin(st, err)) < 0)
		return r;
	cd_pg_p_str(&p, id);
	res = cd_pg_query(pg,
	                  "SELECT " GRANT_COLUMNS
	                  " FROM temp_grants WHERE id = $1 AND ended IS NULL"
	                  " FOR UPDATE",
	                  &p, "end grant", err);
	if (!res) {
		r = fail_code(err);
		goto fail;
	}
	/* The caller logs the end inside our transaction. */
	if ((r = grant_rows(res, fn, ctx, 1, &n)) != 0)
		goto fail;
	if (n == 0) {
		r = cd_err_set(err, -ENOENT, "no active temporary grant '%s'", id);
		goto fail;
	}
	p.n = 0;
	cd_pg_p_str(&p, how);
	cd_pg_p_int(&p, now);
	cd_pg_p_str(&p, by);
	cd_pg_p_str(&p, id);
	if (cd_pg_cmd(pg,
	              "UPDATE temp_grants SET ended = $1, ended_at = $2, ended_by = $3"
	              " WHERE id = $4 AND ended IS NULL",
	              &p, "end grant", err) != 1) {
		r = err && err->code ? err->code : -ENOENT;
		goto fail;
	}
	return cd_pg_commit(st, err);
fail:
	cd_pg_rollback(st);
	return r;
}

/* In one transaction: rows of `select` ($1 = now) to each, then
 * `update` ($1 = now) when there was one. */
static int sweep(struct cd_pg *pg, const char *select, const char *update, int64_t now,
                 int (*rows)(PGresult *res, void *fn, void *ctx, size_t *ret_n), void *fn,
                 void *ctx, size_t *ret_n, const char *what, struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };
	PGresult *res;
	size_t n = 0;
	int r;

	if (ret_n)
		*ret_n = 0;
	if ((r = cd_pg_begin(&pg->base, err)) < 0)
		return r;
	cd_pg_p_int(&p, now);
	if (!(res = cd_pg_query(pg, select, &p, what, err))) {
		r = fail_code(err);
		goto fail;
	}
	if ((r = rows(res, fn, ctx, &n)) != 0)
		goto fail;
	if (n && cd_pg_cmd(pg, update, &p, what, err) < 0) {
		r = fail_code(err);
		goto fail;
	}
	if ((r = cd_pg_commit(&pg->base, err)) < 0)
		return r;
	if (ret_n)
		*ret_n = n;
	return 0;
fail:
	cd_pg_rollback(&pg->base);
	return r;
}

static int grant_sweep_rows(PGresult *res, void *fn, void *ctx, size_t *ret_n)
{
	return grant_rows(res, (cd_store_grant_fn)fn, ctx, 1, ret_n);
}

int cd_pg_grant_sweep(struct cd_store *st, int64_t now, cd_store_grant_fn fn, void *ctx,
                      size_t *ret_n, struct cd_err *err)
{
	return sweep(cd_pg_of(st),
	             "SELECT " GRANT_COLUMNS " FROM temp_grants WHERE ended IS NULL"
	             " AND expires <= $1 ORDER BY expires, id FOR UPDATE",
	             "UPDATE temp_grants SET ended = 'expired', ended_at = expires,"
	             " ended_by = 'cordon' WHERE ended IS NULL AND expires <= $1",
	             now, grant_sweep_rows, (void *)fn, ctx, ret_n, "sweep grants", err);
}

int cd_pg_grant_used(struct cd_store *st, const char *id, int64_t now, struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };

	cd_pg_p_int(&p, now);
	cd_pg_p_str(&p, id);
	if (cd_pg_cmd(cd_pg_of(st),
	              "UPDATE temp_grants SET uses = uses + 1, last_used = $1"
	              " WHERE id = $2",
	              &p, "count use", err) < 0)
		return fail_code(err);
	return 0;
}

/* In force at now, and with `count` counted in the same statement: a
 * grant revoked on another host stops here at its next use. */
int cd_pg_grant_use(struct cd_store *st, const char *id, int64_t now, int count, struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };
	int64_t n;

	cd_pg_p_int(&p, now);
	cd_pg_p_str(&p, id);
	n = cd_pg_cmd(cd_pg_of(st),
	              count ? "UPDATE temp_grants SET uses = uses + 1, last_used = $1"
	                      " WHERE id = $2 AND ended IS NULL AND expires > $1"
	                    : "SELECT 1 FROM temp_grants WHERE id = $2 AND ended IS NULL"
	                      " AND expires > $1",
	              &p, "check temporary grant", err);
	if (n < 0)
		return fail_code(err);
	if (n != 1)
		return cd_err_set(err, -CD_E_DENIED,
		                  "temporary grant '%s' was revoked or has ended", id);
	return 0;
}

/* ---- the approval queue ----------------------------------------- */

#define APPROVAL_COLUMNS                                                                           \
	"id, status, agent, task, tool, action, args_json, args_sha256, grant_ids, approval, "     \
	"profile, policy, policy_sha256, requester, run_id, created, deadline, decided_at, "       \
	"decided_by, comment, used_at, sampled_at, sampled_by, log_args, signature"

int cd_pg_approval_add(struct cd_store *st, const struct cd_approval *a, struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };

	cd_pg_p_str(&p, a->id);
	cd_pg_p_str(&p, a->agent);
	cd_pg_p_str(&p, a->task);
	cd_pg_p_str(&p, a->tool);
	cd_pg_p_str(&p, a->action);
	cd_pg_p_str(&p, a->args_json);
	cd_pg_p_str(&p, a->args_sha256);
	cd_pg_p_str(&p, a->grant_ids);
	cd_pg_p_str(&p, a->approval);
	cd_pg_p_str(&p, a->profile);
	cd_pg_p_str(&p, a->policy);
	cd_pg_p_str(&p, a->policy_sha256);
	cd_pg_p_str(&p, a->requester);
	cd_pg_p_str(&p, a->run_id);
	cd_pg_p_int(&p, a->created);
	cd_pg_p_int(&p, a->deadline);
	cd_pg_p_str(&p, a->log_args);
	if (cd_pg_cmd(
	            cd_pg_of(st),
	            "INSERT INTO approvals (id, status, agent, task, tool, action, args_json,"
	            " args_sha256, grant_ids, approval, profile, policy, policy_sha256, requester,"
	            " run_id, created, deadline, log_args) VALUES ($1,'pending',$2,$3,$4,$5,$6,"
	            "$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17)",
	            &p, "queue approval request", err) < 0)
		return fail_code(err);
	return 0;
}

static int approval_read(const PGresult *res, int i, struct cd_approval *a)
{
	const char *id = cd_pg_col(res, i, 0), *sha = cd_pg_col(res, i, 7);

	memset(a, 0, sizeof *a);
	if (!id || strlen(id) >= sizeof a->id || !sha || strlen(sha) != 64)
		return -EINVAL;
	memcpy(a->id, id, strlen(id) + 1);
	memcpy(a->args_sha256, sha, 65);
	a->status = cd_pg_col(res, i, 1);
	a->agent = cd_pg_col(res, i, 2);
	a->task = cd_pg_col(res, i, 3);
	a->tool = cd_pg_col(res, i, 4);
	a->action = cd_pg_col(res, i, 5);
	a->args_json = cd_pg_col(res, i, 6);
	a->grant_ids = cd_pg_col(res, i, 8);
	a->approval = cd_pg_col(res, i, 9);
	a->profile = cd_pg_col(res, i, 10);
	a->policy = cd_pg_col(res, i, 11);
	a->policy_sha256 = cd_pg_col(res, i, 12);
	a->requester = cd_pg_col(res, i, 13);
	a->run_id = cd_pg_col(res, i, 14);
	a->created = cd_pg_int(res, i, 15);
	a->deadline = cd_pg_int(res, i, 16);
	a->decided_at = cd_pg_int(res, i, 17);
	a->decided_by = cd_pg_col(res, i, 18);
	a->comment = cd_pg_col(res, i, 19);
	a->used_at = cd_pg_int(res, i, 20);
	a->sampled_at = cd_pg_int(res, i, 21);
	a->sampled_by = cd_pg_col(res, i, 22);
	a->log_args = cd_pg_col(res, i, 23);
	a->signature = cd_pg_col(res, i, 24);
	if (!a->status || !a->agent || !a->tool || !a->action || !a->args_json || !a->approval)
		return -EINVAL;
	return 0;
}

static int approval_rows(PGresult *res, cd_store_approval_fn fn, void *ctx, int neg, size_t *ret_n)
{
	struct cd_approval a;
	int i, r = 0;
	size_t n = 0;

	for (i = 0; r == 0 && i < cd_pq.ntuples(res); i++) {
		if (approval_read(res, i, &a) < 0)
			continue;
		n++;
		if (fn)
			r = fn(&a, ctx);
	}
	cd_pq.clear(res);
	if (ret_n)
		*ret_n = n;
	return r > 0 && neg ? -EIO : r;
}

int cd_pg_approval_get(struct cd_store *st, const char *id, cd_store_approval_fn fn, void *ctx,
                       struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };
	PGresult *res;
	size_t n = 0;
	int r;

	cd_pg_p_str(&p, id);
	res = cd_pg_query(cd_pg_of(st), "SELECT " APPROVAL_COLUMNS " FROM approvals WHERE id = $1",
	                  &p, "read approval", err);
	if (!res)
		return fail_code(err);
	r = approval_rows(res, fn, ctx, 0, &n);
	if (r == 0 && n == 0)
		r = cd_err_set(err, -ENOENT, "no approval request '%s'", id);
	return r;
}

int cd_pg_approval_list(struct cd_store *st, const char *status, int64_t since,
                        cd_store_approval_fn fn, void *ctx, struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };
	PGresult *res;

	cd_pg_p_str(&p, status);
	cd_pg_p_int(&p, since);
	res = cd_pg_query(cd_pg_of(st),
	                  "SELECT " APPROVAL_COLUMNS " FROM approvals WHERE ($1::text IS NULL OR"
	                  " status = $1) AND created >= $2 ORDER BY created, id",
	                  &p, "read approvals", err);
	if (!res)
		return fail_code(err);
	return approval_rows(res, fn, ctx, 0, NULL);
}

struct move_ctx {
	const struct cd_store_approval_move *m;
};

static int move_check(const struct cd_approval *a, void *ctx)
{
	const struct cd_store_approval_move *m = ((struct move_ctx *)ctx)->m;
	int r;

	if (!m->check)
		return 0;
	r = m->check(a, m->ctx);
	return r == 0 ? 0 : r < 0 ? r : -EPERM;
}

/* Read and lock the row, let the caller check it, move it: one
 * transaction; the update names the status read. */
int cd_pg_approval_move(struct cd_store *st, const struct cd_store_approval_move *m,
                        struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };
	struct move_ctx c = { m };
	PGresult *res;
	size_t n = 0;
	int r;

	if ((r = cd_pg_begin(st, err)) < 0)
		return r;
	cd_pg_p_str(&p, m->id);
	res = cd_pg_query(pg, "SELECT " APPROVAL_COLUMNS " FROM approvals WHERE id = $1 FOR UPDATE",
	                  &p, "read approval", err);
	if (!res) {
		r = fail_code(err);
		goto fail;
	}
	if ((r = approval_rows(res, move_check, &c, 0, &n)) != 0)
		goto fail;
	if (n == 0) {
		r = cd_err_set(err, -ENOENT, "no approval request '%s'", m->id);
		goto fail;
	}
	p.n = 0;
	cd_pg_p_str(&p, m->to);
	cd_pg_p_int(&p, m->now);
	cd_pg_p_str(&p, m->id);
	cd_pg_p_str(&p, m->from);
	if (strcmp(m->to, "used") != 0) {
		cd_pg_p_str(&p, m->by);
		cd_pg_p_str(&p, m->comment);
		cd_pg_p_str(&p, m->signature && *m->signature ? m->signature : NULL);
	}
	if (cd_pg_cmd(pg,
	              !strcmp(m->to, "used")
	                      ? "UPDATE approvals SET status = $1, used_at = $2 WHERE id = $3"
	                        " AND status = $4"
	                      : "UPDATE approvals SET status = $1, decided_at = $2,"
	                        " decided_by = $5, comment = $6, signature = $7"
	                        " WHERE id = $3 AND status = $4",
	              &p, "update approval", err) != 1) {
		r = err && err->code
		            ? err->code
		            : cd_err_set(err, -EIO, "approval '%s' changed meanwhile", m->id);
		goto fail;
	}
	return cd_pg_commit(st, err);
fail:
	cd_pg_rollback(st);
	return r;
}

static int approval_sweep_rows(PGresult *res, void *fn, void *ctx, size_t *ret_n)
{
	return approval_rows(res, (cd_store_approval_fn)fn, ctx, 1, ret_n);
}

int cd_pg_approval_expire(struct cd_store *st, int64_t now, cd_store_approval_fn fn, void *ctx,
                          size_t *ret_n, struct cd_err *err)
{
	return sweep(cd_pg_of(st),
	             "SELECT " APPROVAL_COLUMNS " FROM approvals WHERE status IN ('pending',"
	             " 'approved') AND deadline <= $1 ORDER BY deadline, id FOR UPDATE",
	             "UPDATE approvals SET status = 'expired', decided_at ="
	             " COALESCE(decided_at, deadline), decided_by = COALESCE(decided_by,"
	             " 'timeout') WHERE status IN ('pending', 'approved') AND deadline <= $1",
	             now, approval_sweep_rows, (void *)fn, ctx, ret_n, "expire approvals", err);
}

struct sample_ctx {
	struct cd_pg *pg;
	const char *by;
	int64_t now;
	cd_store_approval_fn fn;
	void *ctx;
	struct cd_err *err;
};

static int sample_one(const struct cd_approval *a, void *ctx)
{
	struct sample_ctx *c = ctx;
	struct cd_pg_params p = { .n = 0 };
	struct cd_approval b = *a;

	cd_pg_p_int(&p, c->now);
	cd_pg_p_str(&p, c->by);
	cd_pg_p_str(&p, a->id);
	if (cd_pg_cmd(c->pg, "UPDATE approvals SET sampled_at = $1, sampled_by = $2 WHERE id = $3",
	              &p, "sample approvals", c->err) < 0)
		return fail_code(c->err);
	b.sampled_at = c->now;
	b.sampled_by = c->by;
	return c->fn ? c->fn(&b, c->ctx) : 0;
}

int cd_pg_approval_sample(struct cd_store *st, size_t n, int64_t since, const char *by, int64_t now,
                          cd_store_approval_fn fn, void *ctx, size_t *ret_n, struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct sample_ctx c = { pg, by, now, fn, ctx, err };
	struct cd_pg_params p = { .n = 0 };
	PGresult *res;
	size_t got = 0;
	int r;

	if (ret_n)
		*ret_n = 0;
	if ((r = cd_pg_begin(st, err)) < 0)
		return r;
	cd_pg_p_int(&p, since);
	cd_pg_p_int(&p, (int64_t)n);
	/* The server's random() is seeded per session from a strong source. */
	res = cd_pg_query(pg,
	                  "SELECT " APPROVAL_COLUMNS " FROM approvals WHERE status IN ('approved',"
	                  " 'used') AND sampled_at IS NULL AND decided_at >= $1 ORDER BY random()"
	                  " LIMIT $2 FOR UPDATE",
	                  &p, "sample approvals", err);
	if (!res) {
		r = fail_code(err);
		goto fail;
	}
	if ((r = approval_rows(res, sample_one, &c, 1, &got)) != 0)
		goto fail;
	if ((r = cd_pg_commit(st, err)) < 0)
		return r;
	if (ret_n)
		*ret_n = got;
	return 0;
fail:
	cd_pg_rollback(st);
	return r;
}

/* ---- MCP tool pins ---------------------------------------------- */

int cd_pg_pin_see(struct cd_store *st, const char *server, const char *tool, const char *sha256,
                  const char *definition, int64_t now, int *ret_approved, int *ret_other_approved,
                  int *ret_new, int *ret_shadowed, struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };
	PGresult *res;
	const char *state;
	int r, inserted;

	if ((r = cd_pg_begin(st, err)) < 0)
		return r;
	cd_pg_p_str(&p, server);
	cd_pg_p_str(&p, tool);
	cd_pg_p_str(&p, sha256);
	cd_pg_p_str(&p, definition);
	cd_pg_p_int(&p, now);
	/* New only if this insert made the row (xmax 0: no conflict took
	 * the update path); two sightings within one second are not both
	 * new. */
	res = cd_pg_query(
	        pg,
	        "INSERT INTO mcp_pins(server, tool, sha256, definition, state, first_seen,"
	        " last_seen) VALUES ($1, $2, $3, $4, 'pending', $5, $5)"
	        " ON CONFLICT (server, tool, sha256) DO UPDATE SET last_seen = "
	        "EXCLUDED.last_seen RETURNING (xmax = 0)",
	        &p, "mcp pins: record", err);
	if (!res)
		goto fail;
	inserted = cd_pq.ntuples(res) == 1 && strcmp(cd_pq.getvalue(res, 0, 0), "t") == 0;
	cd_pq.clear(res);
	p.v[3] = p.v[4]; /* now */
	p.n = 4;
	res = cd_pg_query(pg,
	                  "SELECT state, first_seen = $4,"
	                  " (SELECT count(*) FROM mcp_pins o WHERE o.server = $1 AND o.tool = $2"
	                  "  AND o.state IN ('approved', 'superseded')),"
	                  " (SELECT count(DISTINCT server) FROM mcp_pins o WHERE o.tool = $2"
	                  "  AND o.server <> $1)"
	                  " FROM mcp_pins WHERE server = $1 AND tool = $2 AND sha256 = $3",
	                  &p, "mcp pins: read", err);
	if (!res)
		goto fail;
	if (cd_pq.ntuples(res) != 1 || !(state = cd_pg_col(res, 0, 0))) {
		cd_pq.clear(res);
		r = cd_err_set(err, -EIO, "mcp pins: the pin just recorded is not there");
		goto fail_r;
	}
	*ret_approved = strcmp(state, "approved") == 0;
	*ret_new = inserted;
	*ret_other_approved = !*ret_approved && cd_pg_int(res, 0, 2) > 0;
	*ret_shadowed = (int)cd_pg_int(res, 0, 3);
	cd_pq.clear(res);
	return cd_pg_commit(st, err);
fail:
	r = fail_code(err);
fail_r:
	cd_pg_rollback(st);
	return r;
}

int cd_pg_pin_list(struct cd_store *st, const char *server, const char *tool, cd_store_pin_fn fn,
                   void *ctx, struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };
	struct cd_mcp_pin_row row;
	PGresult *res;
	int i, r = 0;

	cd_pg_p_str(&p, server);
	cd_pg_p_str(&p, tool);
	res = cd_pg_query(
	        cd_pg_of(st),
	        "SELECT server, tool, sha256, definition, state, approved_by, first_seen,"
	        " last_seen, coalesce(approved_at, 0), signature FROM mcp_pins WHERE ($1::text IS"
	        " NULL OR server = $1) AND ($2::text IS NULL OR tool = $2)"
	        " ORDER BY server, tool, first_seen, sha256",
	        &p, "mcp pins: list", err);
	if (!res)
		return fail_code(err);
	for (i = 0; r >= 0 && i < cd_pq.ntuples(res); i++) {
		row.server = cd_pg_col(res, i, 0);
		row.tool = cd_pg_col(res, i, 1);
		row.sha256 = cd_pg_col(res, i, 2);
		row.definition = cd_pg_col(res, i, 3);
		row.state = cd_pg_col(res, i, 4);
		row.approved_by = cd_pg_col(res, i, 5);
		row.first_seen = cd_pg_int(res, i, 6);
		row.last_seen = cd_pg_int(res, i, 7);
		row.approved_at = cd_pg_int(res, i, 8);
		row.signature = cd_pg_col(res, i, 9);
		if (!row.server || !row.tool || !row.sha256 || !row.definition || !row.state)
			continue;
		r = fn(&row, ctx);
	}
	cd_pq.clear(res);
	return r < 0 ? r : 0;
}

int cd_pg_pin_approve(struct cd_store *st, const char *server, const char *tool, const char *sha256,
                      const char *by, int64_t now, cd_store_pin_sign_fn sign, void *sctx,
                      char ret_sha256[65], struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };
	PGresult *res;
	const char *h;
	char sha[65], sig[128];
	int r;

	if ((r = cd_pg_begin(st, err)) < 0)
		return r;
	cd_pg_p_str(&p, server);
	cd_pg_p_str(&p, tool);
	cd_pg_p_str(&p, sha256);
	res = cd_pg_query(pg,
	                  "SELECT sha256 FROM mcp_pins WHERE server = $1 AND tool = $2 AND"
	                  " state = 'pending' AND ($3::text IS NULL OR sha256 = $3)"
	                  " ORDER BY last_seen DESC, first_seen DESC LIMIT 1 FOR UPDATE",
	                  &p, "mcp pins: approve", err);
	if (!res)
		goto fail;
	if (cd_pq.ntuples(res) != 1 || !(h = cd_pg_col(res, 0, 0)) || strlen(h) != 64) {
		cd_pq.clear(res);
		r = cd_err_set(err, -ENOENT, "no pending definition of tool '%s' of server '%s'%s",
		               tool, server, sha256 ? " with that sha256" : "");
		goto fail_r;
	}
	memcpy(sha, h, 65);
	cd_pq.clear(res);
	if (sign && sign(sha, sig, sizeof sig, sctx) < 0) {
		r = cd_err_set(err, -EIO, "cannot sign the approval");
		goto fail_r;
	}
	p.n = 2;
	if (cd_pg_cmd(pg,
	              "UPDATE mcp_pins SET state = 'superseded' WHERE server = $1 AND tool = $2"
	              " AND state = 'approved'",
	              &p, "mcp pins: supersede", err) < 0)
		goto fail;
	cd_pg_p_str(&p, sha);
	cd_pg_p_int(&p, now);
	cd_pg_p_str(&p, by);
	cd_pg_p_str(&p, sign ? sig : NULL);
	if (cd_pg_cmd(pg,
	              "UPDATE mcp_pins SET state = 'approved', approved_at = $4, approved_by = $5,"
	              " signature = $6 WHERE server = $1 AND tool = $2 AND sha256 = $3",
	              &p, "mcp pins: approve", err) < 0)
		goto fail;
	if ((r = cd_pg_commit(st, err)) < 0)
		return r;
	memcpy(ret_sha256, sha, 65);
	return 0;
fail:
	r = fail_code(err);
fail_r:
	cd_pg_rollback(st);
	return r;
}
