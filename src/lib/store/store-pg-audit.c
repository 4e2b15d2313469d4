/* store-pg-audit.c — the audit log's PostgreSQL backend (store.h), and
 * the backend's ops table.
 *
 * One hash chain per writer, named by its host name (the record's host
 * column): seq counts within a chain, UNIQUE (host, seq) holds, and a
 * writer serialises with the other writers of its chain by an advisory
 * lock on the chain's name inside its transaction (no SELECT ... FOR
 * UPDATE, which would need UPDATE rights).  Hosts append in parallel.
 * Records are stored in readable columns (text, hashes as hex), so that
 * an operator can query them with SQL and verify recomputes every hash
 * from what is stored.  A durable append commits with synchronous_commit
 * on: the commit returns once the server has flushed it.
 *
 * A writer role may only insert, and only into its own chain (row-level
 * security WITH CHECK against audit_writers, store-pg-conn.c); the
 * database owner can change anything, and verify then names the chain
 * that no longer checks.
 *
 * Trust boundary: as store.h; a row that cannot be a record reads as one
 * whose hash does not match. */
#include "store-pg.h"

#include "util/buf.h"
#include "util/num.h"
#include "util/util.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define COLUMNS                                                                                    \
	"seq, time_ns, exit_code, duration_ms, host, kind, run_id, agent, task, tool, action, "    \
	"target, decision, grant_ids, reason, argv_sha256, code_sha256, stdin_sha256, "            \
	"stdout_sha256, stderr_sha256, details, prev_hash, hash"

int cd_pg_audit_init(struct cd_pg *pg, struct cd_err *err)
{
	PGresult *res =
	        cd_pg_query(pg, "SELECT value FROM audit_meta WHERE host = '' AND key = 'log_id'",
	                    NULL, "read the log id", err);
	unsigned char raw[CD_AUDIT_LOG_ID_LEN / 2];
	const char *v;
	int r = 0;

	if (!res)
		return err && err->code ? err->code : -EIO;
	v = cd_pq.ntuples(res) == 1 ? cd_pg_col(res, 0, 0) : NULL;
	if (!v || strlen(v) != CD_AUDIT_LOG_ID_LEN ||
	    cd_unhex(v, CD_AUDIT_LOG_ID_LEN, raw, sizeof raw) < 0)
		r = cd_err_set(err, -CD_E_CORRUPT, "audit log '%s': no valid log id", pg->where);
	else
		memcpy(pg->log_id, v, CD_AUDIT_LOG_ID_LEN + 1);
	cd_pq.clear(res);
	return r;
}

static const char *audit_log_id(struct cd_store *st)
{
	return cd_pg_of(st)->log_id;
}

static int audit_begin(struct cd_store *st, int lazy, struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };
	char sql[128];
	int r;

	if (pg->read_only)
		return cd_err_set(err, -EROFS, "audit log '%s' is open read-only", pg->where);
	if ((r = cd_pg_begin(st, err)) < 0)
		return r;
	pg->lazy = lazy;
	snprintf(sql, sizeof sql, "SET LOCAL lock_timeout = %u", pg->busy_ms);
	/* A durable append waits for the server's flush whatever the
	 * server's or the role's default says. */
	if (cd_pg_cmd(pg,
	              lazy ? "SET LOCAL synchronous_commit = off"
	                   : "SET LOCAL synchronous_commit = on",
	              NULL, "begin", err) < 0 ||
	    cd_pg_cmd(pg, sql, NULL, "begin", err) < 0)
		goto fail;
	cd_pg_p_str(&p, pg->host);
	if (cd_pg_cmd(pg,
	              "SELECT pg_advisory_xact_lock(hashtextextended('cordon.audit/' || $1, 0))",
	              &p, "cannot lock the chain for writing", err) < 0)
		goto fail;
	return 0;
fail:
	cd_pg_rollback(st);
	return err && err->code ? err->code : -EIO;
}

static int audit_head(struct cd_store *st, const unsigned char genesis[32],
                      struct cd_store_audit_head *h, struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };
	PGresult *res;
	const char *hash;
	int r = 0;

	cd_pg_p_str(&p, pg->host);
	res = cd_pg_query(pg,
	                  "SELECT seq, hash FROM audit_records WHERE host = $1"
	                  " ORDER BY seq DESC LIMIT 1",
	                  &p, "cannot read the head", err);
	if (!res)
		return err && err->code ? err->code : -EIO;
	if (cd_pq.ntuples(res) == 0) {
		h->seq = 0;
		memcpy(h->hash, genesis, CD_AUDIT_HASH_LEN);
	} else {
		hash = cd_pg_col(res, 0, 1);
		h->seq = (uint64_t)cd_pg_int(res, 0, 0);
		if (!hash || strlen(hash) != 64 || h->seq == 0 ||
		    cd_unhex(hash, 64, h->hash, CD_AUDIT_HASH_LEN) < 0)
			r = cd_err_set(err, -CD_E_CORRUPT,
			               "audit log '%s': the last record of chain '%s' is malformed "
			               "(run 'cordon log verify')",
			               pg->where, pg->host);
	}
	cd_pq.clear(res);
	h->next = h->seq + 1;
	return r;
}

static int audit_insert(struct cd_store *st, const struct cd_audit_entry *e, struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };
	const struct cd_audit_str *host = &e->str[CD_AF_HOST];
	char *s[CD_AF_NSTR] = { 0 };
	char prev[65], hash[65];
	int i, r = 0;

	if (!host->p || host->len != strlen(pg->host) || memcmp(host->p, pg->host, host->len))
		return cd_err_set(err, -EINVAL, "audit log '%s': a record of another chain",
		                  pg->where);
	cd_pg_p_int(&p, (int64_t)e->seq);
	cd_pg_p_int(&p, e->time_ns);
	if (e->has_exit)
		cd_pg_p_int(&p, e->exit_code);
	else
		cd_pg_p_str(&p, NULL);
	if (e->has_duration)
		cd_pg_p_int(&p, (int64_t)e->duration_ms);
	else
		cd_pg_p_str(&p, NULL);
	for (i = 0; r == 0 && i < CD_AF_NSTR; i++) {
		if (e->str[i].p && memchr(e->str[i].p, '\0', e->str[i].len))
			r = cd_err_set(err, -EINVAL, "audit log: a NUL byte cannot be stored");
		else if (e->str[i].p && !(s[i] = strndup(e->str[i].p, e->str[i].len)))
			r = cd_err_set(err, -ENOMEM, "out of memory");
		cd_pg_p_str(&p, s[i]);
	}
	cd_hex(e->prev, CD_AUDIT_HASH_LEN, prev);
	cd_hex(e->hash, CD_AUDIT_HASH_LEN, hash);
	cd_pg_p_str(&p, prev);
	cd_pg_p_str(&p, hash);
	if (r == 0 && cd_pg_cmd(pg,
	                        "INSERT INTO audit_records(" COLUMNS ") VALUES ($1, $2, $3, $4,"
	                        " $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,"
	                        " $18, $19, $20, $21, $22, $23)",
	                        &p, "cannot append", err) < 0)
		r = err && err->code ? err->code : -EIO;
	for (i = 0; i < CD_AF_NSTR; i++)
		free(s[i]);
	return r;
}

/* The text columns in CD_AF_* order (as COLUMNS lists them). */
static const char *const text_cols[CD_AF_NSTR] = {
	"host",        "kind",         "run_id",        "agent",         "task",    "tool",
	"action",      "target",       "decision",      "grant_ids",     "reason",  "argv_sha256",
	"code_sha256", "stdin_sha256", "stdout_sha256", "stderr_sha256", "details",
};

/* One row as a JSON object whose members are the columns (NULL: absent
 * from the record).  -EINVAL: a field that is not UTF-8 (a text column
 * cannot hold it either). */
static int row_json(const struct cd_audit_entry *e, json_t *row)
{
	char hex[65];
	int i, r = 0;

	r |= json_object_set_new(row, "seq", json_integer((json_int_t)e->seq));
	r |= json_object_set_new(row, "time_ns", json_integer((json_int_t)e->time_ns));
	r |= json_object_set_new(row, "exit_code",
	                         e->has_exit ? json_integer((json_int_t)e->exit_code)
	                                     : json_null());
	r |= json_object_set_new(row, "duration_ms",
	                         e->has_duration ? json_integer((json_int_t)e->duration_ms)
	                                         : json_null());
	for (i = 0; r == 0 && i < CD_AF_NSTR; i++) {
		json_t *v;
		if (!e->str[i].p)
			continue;
		if (memchr(e->str[i].p, '\0', e->str[i].len) ||
		    !(v = json_stringn(e->str[i].p, e->str[i].len)))
			return -EINVAL;
		r |= json_object_set_new(row, text_cols[i], v);
	}
	cd_hex(e->prev, CD_AUDIT_HASH_LEN, hex);
	r |= json_object_set_new(row, "prev_hash", json_string(hex));
	cd_hex(e->hash, CD_AUDIT_HASH_LEN, hex);
	r |= json_object_set_new(row, "hash", json_string(hex));
	return r ? -ENOMEM : 0;
}

static int audit_insert_many(struct cd_store *st, const struct cd_audit_entry *e, size_t n,
                             struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };
	json_t *rows = json_array();
	const struct cd_audit_str *host;
	char *txt = NULL;
	size_t i;
	int r = rows ? 0 : -ENOMEM;

	for (i = 0; r == 0 && i < n; i++) {
		json_t *row = json_object();
		host = &e[i].str[CD_AF_HOST];
		if (!host->p || host->len != strlen(pg->host) ||
		    memcmp(host->p, pg->host, host->len))
			r = -ESRCH;
		else if (!row || json_array_append_new(rows, row) < 0)
			r = -ENOMEM;
		else
			r = row_json(&e[i], row);
	}
	if (r == 0 && !(txt = json_dumps(rows, JSON_COMPACT)))
		r = -ENOMEM;
	json_decref(rows);
	if (r == -ESRCH)
		return cd_err_set(err, -EINVAL, "audit log '%s': a record of another chain",
		                  pg->where);
	if (r == -EINVAL)
		return cd_err_set(err, -EINVAL,
		                  "audit log '%s': seq %llu: a field that is not UTF-8 cannot be "
		                  "stored",
		                  pg->where, (unsigned long long)e[i - 1].seq);
	if (r < 0)
		return cd_err_set(err, r, "out of memory");
	cd_pg_p_str(&p, txt);
	if (cd_pg_cmd(pg,
	              "INSERT INTO audit_records(" COLUMNS ") SELECT " COLUMNS
	              " FROM json_populate_recordset(NULL::audit_records, $1::json)",
	              &p, "cannot append", err) < 0)
		r = err && err->code ? err->code : -EIO;
	free(txt);
	return r;
}

static int audit_commit(struct cd_store *st, struct cd_err *err)
{
	return cd_pg_commit(st, err);
}

static void audit_rollback(struct cd_store *st)
{
	cd_pg_rollback(st);
}

/* log_id is the log's; every other key is its chain's (cp_size, cp_time,
 * cp_line of the host's own checkpoints; chain_log_id of a chain shipped
 * from a local log): the writer's, or while verifying the chain being
 * read (audit_chain). */
static const char *meta_host(struct cd_pg *pg, const char *key)
{
	if (strcmp(key, "log_id") == 0)
		return "";
	return pg->chain[0] ? pg->chain : pg->host;
}

static int audit_meta_get(struct cd_store *st, const char *key, char *out, size_t outlen)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };
	PGresult *res;
	const char *v;
	int r = -ENOENT;

	cd_pg_p_str(&p, meta_host(pg, key));
	cd_pg_p_str(&p, key);
	res = cd_pg_query(pg, "SELECT value FROM audit_meta WHERE host = $1 AND key = $2", &p,
	                  "meta", NULL);
	if (!res)
		return -EIO;
	if (cd_pq.ntuples(res) == 1 && (v = cd_pg_col(res, 0, 0)) != NULL) {
		if (strlen(v) < outlen) {
			memcpy(out, v, strlen(v) + 1);
			r = 0;
		} else {
			r = -CD_E_CORRUPT;
		}
	}
	cd_pq.clear(res);
	return r;
}

static int audit_meta_set(struct cd_store *st, const char *key, const char *value, const char *what,
                          struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };

	cd_pg_p_str(&p, meta_host(pg, key));
	cd_pg_p_str(&p, key);
	cd_pg_p_str(&p, value);
	if (cd_pg_cmd(pg,
	              "INSERT INTO audit_meta VALUES ($1, $2, $3) ON CONFLICT (host, key)"
	              " DO UPDATE SET value = EXCLUDED.value",
	              &p, what, err) < 0)
		return err && err->code ? err->code : -EIO;
	return 0;
}

/* ---- reading ------------------------------------------------------ */

/* Row r of res (selected with COLUMNS) into e: views into res.  A hash
 * column that is not 64 hex digits reads as hashes_ok = 0. */
static void row_read(const PGresult *res, int r, struct cd_audit_entry *e)
{
	const char *v;
	int i;

	memset(e, 0, sizeof *e);
	e->seq = (uint64_t)cd_pg_int(res, r, 0);
	e->time_ns = cd_pg_int(res, r, 1);
	if (cd_pg_col(res, r, 2)) {
		e->has_exit = 1;
		e->exit_code = cd_pg_int(res, r, 2);
	}
	if (cd_pg_col(res, r, 3)) {
		e->has_duration = 1;
		e->duration_ms = (uint64_t)cd_pg_int(res, r, 3);
	}
	for (i = 0; i < CD_AF_NSTR; i++) {
		e->str[i].p = cd_pg_col(res, r, 4 + i);
		e->str[i].len = e->str[i].p ? (size_t)cd_pq.getlength(res, r, 4 + i) : 0;
	}
	e->hashes_ok = 1;
	v = cd_pg_col(res, r, 4 + CD_AF_NSTR);
	if (!v || strlen(v) != 64 || cd_unhex(v, 64, e->prev, CD_AUDIT_HASH_LEN) < 0)
		e->hashes_ok = 0;
	v = cd_pg_col(res, r, 5 + CD_AF_NSTR);
	if (!v || strlen(v) != 64 || cd_unhex(v, 64, e->hash, CD_AUDIT_HASH_LEN) < 0)
		e->hashes_ok = 0;
}

static int each_row(PGresult *res, cd_store_entry_fn fn, void *ctx)
{
	struct cd_audit_entry e;
	int i, n = cd_pq.ntuples(res), r = 0;

	for (i = 0; r == 0 && i < n; i++) {
		row_read(res, i, &e);
		r = fn(&e, ctx);
	}
	cd_pq.clear(res);
	return r;
}

static int audit_size(struct cd_store *st, uint64_t *ret, struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };
	PGresult *res;

	cd_pg_p_str(&p, pg->host);
	res = cd_pg_query(pg, "SELECT coalesce(max(seq), 0) FROM audit_records WHERE host = $1", &p,
	                  "cannot read", err);
	if (!res)
		return err && err->code ? err->code : -EIO;
	*ret = (uint64_t)cd_pg_int(res, 0, 0);
	cd_pq.clear(res);
	return 0;
}

/* Every chain's records, in time order (a host's own in seq order). */
static int audit_query(struct cd_store *st, const struct cd_audit_filter *f, cd_store_entry_fn fn,
                       void *ctx, struct cd_err *err)
{
	static const struct {
		const char *col;
		size_t off;
	} eq[] = {
		{ "agent", offsetof(struct cd_audit_filter, agent) },
		{ "task", offsetof(struct cd_audit_filter, task) },
		{ "tool", offsetof(struct cd_audit_filter, tool) },
		{ "kind", offsetof(struct cd_audit_filter, kind) },
		{ "decision", offsetof(struct cd_audit_filter, decision) },
		{ "run_id", offsetof(struct cd_audit_filter, run_id) },
	};
	static const struct cd_audit_filter none;
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };
	struct cd_buf sql;
	PGresult *res;
	size_t i;
	int r;

	if (!f)
		f = &none;
	cd_buf_init(&sql, 4096);
	if (f->after_chains) {
		/* A follower's cursor: seq counts within a chain. */
		cd_pg_p_str(&p, f->after_chains);
		r = cd_buf_puts(&sql, "SELECT " COLUMNS " FROM audit_records WHERE seq >"
		                      " coalesce(($1::jsonb ->> host)::bigint, 0)");
	} else {
		cd_pg_p_int(&p, (int64_t)(f->after_seq > INT64_MAX ? INT64_MAX : f->after_seq));
		r = cd_buf_puts(&sql, "SELECT " COLUMNS " FROM audit_records WHERE seq > $1");
	}
	for (i = 0; r == 0 && i < CD_ARRAY_SIZE(eq); i++) {
		const char *v = *(const char *const *)((const char *)f + eq[i].off);
		if (v) {
			cd_pg_p_str(&p, v);
			r = cd_buf_printf(&sql, " AND %s = $%d", eq[i].col, p.n);
		}
	}
	if (r == 0 && f->before_seq && f->before_host) {
		/* A row comparison: the range of the (time_ns, host, seq) indexes. */
		cd_pg_p_int(&p, f->before_time_ns);
		cd_pg_p_str(&p, f->before_host);
		cd_pg_p_int(&p, (int64_t)(f->before_seq > INT64_MAX ? INT64_MAX : f->before_seq));
		r = cd_buf_printf(&sql, " AND (time_ns, host, seq) < ($%d, $%d, $%d)", p.n - 2,
		                  p.n - 1, p.n);
	} else if (r == 0 && f->before_seq) {
		cd_pg_p_int(&p, (int64_t)(f->before_seq > INT64_MAX ? INT64_MAX : f->before_seq));
		r = cd_buf_printf(&sql, " AND seq < $%d", p.n);
	}
	if (r == 0 && f->since_ns) {
		cd_pg_p_int(&p, f->since_ns);
		r = cd_buf_printf(&sql, " AND time_ns >= $%d", p.n);
	}
	if (r == 0 && f->until_ns) {
		cd_pg_p_int(&p, f->until_ns);
		r = cd_buf_printf(&sql, " AND time_ns <= $%d", p.n);
	}
	if (r == 0 && f->last) {
		cd_pg_p_int(&p, (int64_t)(f->last > INT64_MAX ? INT64_MAX : f->last));
		r = cd_buf_printf(&sql, " ORDER BY time_ns DESC, host DESC, seq DESC LIMIT $%d",
		                  p.n);
	}
	if (r == 0 && f->last) {
		struct cd_buf outer;
		cd_buf_init(&outer, 8192);
		r = cd_buf_printf(&outer, "SELECT * FROM (%s) q ORDER BY time_ns, host, seq",
		                  sql.data);
		cd_buf_release(&sql);
		sql = outer;
	} else if (r == 0) {
		r = cd_buf_puts(&sql, " ORDER BY time_ns, host, seq");
	}
	if (r < 0) {
		cd_buf_release(&sql);
		return cd_err_set(err, r, "query too long");
	}
	res = cd_pg_query(pg, sql.data, &p, "cannot read", err);
	cd_buf_release(&sql);
	if (!res)
		return err && err->code ? err->code : -EIO;
	return each_row(res, fn, ctx);
}

/* ---- verifying: one chain at a time, in one snapshot ------------- */

static int audit_read_begin(struct cd_store *st, struct cd_err *err)
{
	int64_t r = cd_pg_cmd(cd_pg_of(st), "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", NULL,
	                      "begin", err);
	return r < 0 ? (int)r : 0;
}

static void audit_read_end(struct cd_store *st)
{
	/* The writer's own meta rows again (meta_host). */
	cd_pg_of(st)->chain[0] = '\0';
	cd_pg_rollback(st);
}

static int audit_chains(struct cd_store *st, int (*fn)(const char *host, void *ctx), void *ctx,
                        struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	PGresult *res = cd_pg_query(pg, "SELECT DISTINCT host FROM audit_records ORDER BY host",
	                            NULL, "cannot read the chains", err);
	int i, r = 0;

	if (!res)
		return err && err->code ? err->code : -EIO;
	for (i = 0; r == 0 && i < cd_pq.ntuples(res); i++)
		r = fn(cd_pq.getvalue(res, i, 0), ctx);
	cd_pq.clear(res);
	return r;
}

static int audit_heads(struct cd_store *st, int (*fn)(const char *host, uint64_t seq, void *ctx),
                       void *ctx, struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	PGresult *res = cd_pg_query(pg, "SELECT host, max(seq) FROM audit_records GROUP BY host",
	                            NULL, "cannot read the chains", err);
	int i, r = 0;

	if (!res)
		return err && err->code ? err->code : -EIO;
	for (i = 0; r == 0 && i < cd_pq.ntuples(res); i++)
		r = fn(cd_pq.getvalue(res, i, 0), (uint64_t)cd_pg_int(res, i, 1), ctx);
	cd_pq.clear(res);
	return r;
}

static int audit_chain(struct cd_store *st, const char *host)
{
	struct cd_pg *pg = cd_pg_of(st);

	if (strlen(host) >= sizeof pg->chain)
		return -ENAMETOOLONG;
	memcpy(pg->chain, host, strlen(host) + 1);
	return 0;
}

static int audit_scan(struct cd_store *st, cd_store_entry_fn fn, void *ctx, struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };
	PGresult *res;

	cd_pg_p_str(&p, pg->chain);
	res = cd_pg_query(pg, "SELECT " COLUMNS " FROM audit_records WHERE host = $1 ORDER BY seq",
	                  &p, "cannot read", err);
	if (!res)
		return err && err->code ? err->code : -EIO;
	return each_row(res, fn, ctx);
}

static int audit_follows(struct cd_store *st, const unsigned char h[32], uint64_t not_seq)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };
	char hex[65];
	PGresult *res;
	int found;

	cd_hex(h, CD_AUDIT_HASH_LEN, hex);
	cd_pg_p_str(&p, pg->chain);
	cd_pg_p_str(&p, hex);
	cd_pg_p_int(&p, (int64_t)not_seq);
	res = cd_pg_query(pg,
	                  "SELECT 1 FROM audit_records WHERE host = $1 AND prev_hash = $2"
	                  " AND seq <> $3 LIMIT 1",
	                  &p, "read", NULL);
	if (!res)
		return 0;
	found = cd_pq.ntuples(res) > 0;
	cd_pq.clear(res);
	return found;
}

/* Unknown: a chain keeps no counter a writer could only increase
 * without UPDATE rights; a cut tail shows against signed checkpoints. */
static int64_t audit_seq_used(struct cd_store *st)
{
	(void)st;
	return 0;
}

static int audit_hash_at(struct cd_store *st, uint64_t seq, unsigned char out[32])
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params p = { .n = 0 };
	PGresult *res;
	const char *v;
	int found = 0;

	cd_pg_p_str(&p, pg->chain);
	cd_pg_p_int(&p, (int64_t)seq);
	res = cd_pg_query(pg, "SELECT hash FROM audit_records WHERE host = $1 AND seq = $2", &p,
	                  "read", NULL);
	if (!res)
		return 0;
	if (cd_pq.ntuples(res) == 1 && (v = cd_pg_col(res, 0, 0)) && strlen(v) == 64 &&
	    cd_unhex(v, 64, out, CD_AUDIT_HASH_LEN) == 0)
		found = 1;
	cd_pq.clear(res);
	return found;
}

/* Lazy commits become durable with the next commit the server flushes:
 * a transaction that takes an id commits synchronously. */
static int audit_sync(struct cd_store *st, struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);

	if (cd_pg_begin(st, err) < 0 ||
	    cd_pg_cmd(pg, "SELECT txid_current()", NULL, "sync", err) < 0) {
		cd_pg_rollback(st);
		return err && err->code ? err->code : -EIO;
	}
	return cd_pg_commit(st, err);
}

static int audit_presize(struct cd_store *st, struct cd_err *err)
{
	(void)st;
	(void)err;
	return 0; /* the server's WAL is its own */
}

/* Ordered as audit_query orders (time, then host and seq): the filtered
 * pages, and the unfiltered one deep in the log (audit_records_page: a
 * keyset cursor walks it from any record; audit_records_time alone
 * left PostgreSQL skipping every newer record).  Needs the table's
 * owner: a role that may only write gets an error, and the pages stay
 * right, only slower. */
static int audit_index(struct cd_store *st, struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);

	if (cd_pg_cmd(pg,
	              "CREATE INDEX IF NOT EXISTS audit_records_page"
	              " ON audit_records(time_ns, host, seq);"
	              "CREATE INDEX IF NOT EXISTS audit_records_agent"
	              " ON audit_records(agent, time_ns, host, seq);"
	              "CREATE INDEX IF NOT EXISTS audit_records_run"
	              " ON audit_records(run_id, time_ns, host, seq);"
	              "CREATE INDEX IF NOT EXISTS audit_records_kind"
	              " ON audit_records(kind, time_ns, host, seq);"
	              "CREATE INDEX IF NOT EXISTS audit_records_decision"
	              " ON audit_records(decision, time_ns, host, seq);",
	              NULL, "make the audit log's indexes (connect once as its owner)", err) < 0)
		return err && err->code ? err->code : -EIO;
	return 0;
}

const struct cd_store_ops cd_pg_ops = {
	.name = "postgresql",
	.close = cd_pg_close,
	.begin = cd_pg_begin,
	.commit = cd_pg_commit,
	.rollback = cd_pg_rollback,
	.wait_change = cd_pg_wait_change,
	.grant_add = cd_pg_grant_add,
	.grant_list = cd_pg_grant_list,
	.grant_end = cd_pg_grant_end,
	.grant_sweep = cd_pg_grant_sweep,
	.grant_use = cd_pg_grant_use,
	.grant_used = cd_pg_grant_used,
	.approval_add = cd_pg_approval_add,
	.approval_get = cd_pg_approval_get,
	.approval_list = cd_pg_approval_list,
	.approval_move = cd_pg_approval_move,
	.approval_expire = cd_pg_approval_expire,
	.approval_sample = cd_pg_approval_sample,
	.pin_see = cd_pg_pin_see,
	.pin_list = cd_pg_pin_list,
	.pin_approve = cd_pg_pin_approve,
	.proposal_save = cd_pg_proposal_save,
	.proposal_load = cd_pg_proposal_load,
	.proposal_list = cd_pg_proposal_list,
	.proposal_finish = cd_pg_proposal_finish,
	.console_login_add = cd_pg_console_login_add,
	.console_login_take = cd_pg_console_login_take,
	.console_session_add = cd_pg_console_session_add,
	.console_session_get = cd_pg_console_session_get,
	.console_session_end = cd_pg_console_session_end,
	.agent_token_add = cd_pg_agent_token_add,
	.agent_token_find = cd_pg_agent_token_find,
	.agent_token_list = cd_pg_agent_token_list,
	.agent_token_revoke = cd_pg_agent_token_revoke,
	.audit_log_id = audit_log_id,
	.audit_begin = audit_begin,
	.audit_head = audit_head,
	.audit_insert = audit_insert,
	.audit_insert_many = audit_insert_many,
	.audit_commit = audit_commit,
	.audit_rollback = audit_rollback,
	.audit_meta_get = audit_meta_get,
	.audit_meta_set = audit_meta_set,
	.audit_size = audit_size,
	.audit_query = audit_query,
	.audit_read_begin = audit_read_begin,
	.audit_read_end = audit_read_end,
	.audit_scan = audit_scan,
	.audit_follows = audit_follows,
	.audit_seq_used = audit_seq_used,
	.audit_hash_at = audit_hash_at,
	.audit_sync = audit_sync,
	.audit_presize = audit_presize,
	.audit_index = audit_index,
	.audit_chains = audit_chains,
	.audit_chain = audit_chain,
	.audit_heads = audit_heads,
};
