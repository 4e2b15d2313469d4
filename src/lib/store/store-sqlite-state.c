/* store-sqlite-state.c — the SQLite backend of the state database
 * (store.h): opening, the schema, transactions, waiting for a change, and
 * the ops table.  The schema of every table lives here, in one numbered
 * list of migrations, so that one file says what the state database
 * holds; the operations on each table are in store-sqlite-<table>.c.
 *
 * Trust boundary: as store.h. */
#include "store-sqlite.h"

#include "util/fs.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#define BUSY_MS 10000

/* Migration N brings the schema from version N-1 to N.  Append only. */
static const char *const migrations[] = {
	/* 1: break-glass and delegated grants (temp-grant.c). */
	"CREATE TABLE temp_grants ("
	" id TEXT PRIMARY KEY,"
	" kind TEXT NOT NULL,"
	" agent TEXT NOT NULL, task TEXT, tool TEXT NOT NULL, parent TEXT,"
	" grant_json TEXT NOT NULL,"
	" ticket TEXT, by_whom TEXT NOT NULL, policy_sha256 TEXT,"
	" created INTEGER NOT NULL, expires INTEGER NOT NULL,"
	" ended TEXT, ended_at INTEGER, ended_by TEXT,"
	" uses INTEGER NOT NULL DEFAULT 0, last_used INTEGER);"
	"CREATE INDEX temp_grants_active ON temp_grants(ended, expires);",
	/* 2: pinned tool definitions of MCP servers (mcp-pins.c): one row per
	 * definition seen; state 'approved', 'pending' or 'superseded'. */
	"CREATE TABLE mcp_pins ("
	" server TEXT NOT NULL, tool TEXT NOT NULL, sha256 TEXT NOT NULL,"
	" definition TEXT NOT NULL, state TEXT NOT NULL,"
	" first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,"
	" approved_at INTEGER, approved_by TEXT,"
	" PRIMARY KEY (server, tool, sha256));",
	/* 3: the approval queue (approval.c). */
	"CREATE TABLE approvals ("
	" id TEXT PRIMARY KEY,"
	" status TEXT NOT NULL,"
	" agent TEXT NOT NULL, task TEXT, tool TEXT NOT NULL, action TEXT NOT NULL,"
	" args_json TEXT NOT NULL, args_sha256 TEXT NOT NULL,"
	" grant_ids TEXT, approval TEXT NOT NULL, profile TEXT,"
	" policy TEXT, policy_sha256 TEXT, requester TEXT, run_id TEXT,"
	" created INTEGER NOT NULL, deadline INTEGER NOT NULL,"
	" decided_at INTEGER, decided_by TEXT, comment TEXT, used_at INTEGER,"
	" sampled_at INTEGER, sampled_by TEXT);"
	"CREATE INDEX approvals_status ON approvals(status, created);",
	/* 4: proposals (proposal-store.c): a run's file changes, one row per
	 * file; the new content stays in the run's upper layer. */
	"CREATE TABLE proposals ("
	" id TEXT PRIMARY KEY, run_id TEXT NOT NULL, agent TEXT, task TEXT,"
	" tree TEXT NOT NULL, upper TEXT NOT NULL, created INTEGER NOT NULL,"
	" status TEXT NOT NULL, decided_at INTEGER, decided_by TEXT,"
	" branch TEXT, commit_id TEXT);"
	"CREATE TABLE proposal_files ("
	" proposal TEXT NOT NULL, path BLOB NOT NULL, op TEXT NOT NULL,"
	" base_sha256 TEXT NOT NULL, new_sha256 TEXT NOT NULL,"
	" base_mode INTEGER NOT NULL, new_mode INTEGER NOT NULL,"
	" flagged INTEGER NOT NULL, note TEXT, diff BLOB,"
	" applied INTEGER NOT NULL DEFAULT 0,"
	" PRIMARY KEY (proposal, path));",
	/* 5: what the audit log may show of a request's arguments when its
	 * grants mask data (logmask.h): the masked arguments and their
	 * commitments, made once at request time; NULL: shown as given. */
	"ALTER TABLE approvals ADD COLUMN log_args TEXT;",
	/* 6: a proposal's layer (proposal-store.c): its caps, what the run
	 * left in it, whether it was full (1 bytes, 2 inodes); the new
	 * content is copied into a store (the column upper names it). */
	"ALTER TABLE proposals ADD COLUMN layer_size INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE proposals ADD COLUMN layer_inodes INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE proposals ADD COLUMN layer_used INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE proposals ADD COLUMN layer_used_inodes INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE proposals ADD COLUMN layer_full INTEGER NOT NULL DEFAULT 0;",
	/* 7: one-time login links of the console (cordon serve): the SHA-256
	 * of the link's secret, never the secret. */
	"CREATE TABLE console_logins ("
	" hash TEXT PRIMARY KEY, person TEXT NOT NULL,"
	" created INTEGER NOT NULL, expires INTEGER NOT NULL);",
	/* 8: agent tokens of the MCP HTTP front (cordon mcp token): the
	 * SHA-256 of each token, never the token. */
	"CREATE TABLE agent_tokens ("
	" id TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, agent TEXT NOT NULL,"
	" policy TEXT, created INTEGER NOT NULL, expires INTEGER NOT NULL,"
	" revoked INTEGER NOT NULL DEFAULT 0);",
	/* 9: an approver's signature over a decision (approval-sign.h):
	 * the waiting run checks it against the policy's key. */
	"ALTER TABLE approvals ADD COLUMN signature TEXT;",
	/* 10: the console's sessions (cordon serve): the SHA-256 of each
	 * cookie's secret, never the secret, and the console's MAC over the
	 * row, so a row copied under another hash is refused. */
	"CREATE TABLE console_sessions ("
	" hash TEXT PRIMARY KEY, person TEXT NOT NULL, mac TEXT NOT NULL,"
	" created INTEGER NOT NULL, expires INTEGER NOT NULL);",
	/* 11: what binds the other shared rows to who made them: an
	 * approver's signature over a temporary grant and over a tool
	 * definition's approval (row-sign.h), the console's MAC over a login
	 * link, the proposing host's MAC over a proposal's tree and layer. */
	"ALTER TABLE temp_grants ADD COLUMN signature TEXT;"
	"ALTER TABLE mcp_pins ADD COLUMN signature TEXT;"
	"ALTER TABLE console_logins ADD COLUMN mac TEXT;"
	"ALTER TABLE proposals ADD COLUMN mac TEXT;",
};

#define SCHEMA_VERSION ((int)(sizeof migrations / sizeof migrations[0]))

int cd_sqlite_err(struct cd_sqlite *s, struct cd_err *err, const char *what)
{
	return cd_err_set(err, -EIO, "state database '%s': %s: %s", s->path, what,
	                  s->db ? sqlite3_errmsg(s->db) : "not open");
}

static int exec(struct cd_sqlite *s, const char *sql, struct cd_err *err)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, sql[0] == 'C' ? "schema" : sql);
	return 0;
}

int cd_sqlite_begin(struct cd_store *st, struct cd_err *err)
{
	return exec(cd_sqlite_of(st), "BEGIN IMMEDIATE", err);
}

int cd_sqlite_commit(struct cd_store *st, struct cd_err *err)
{
	int r = exec(cd_sqlite_of(st), "COMMIT", err);
	if (r < 0)
		cd_sqlite_rollback(st);
	return r;
}

void cd_sqlite_rollback(struct cd_store *st)
{
	struct cd_sqlite *s = cd_sqlite_of(st);

	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

int cd_sqlite_sweep(struct cd_sqlite *s, const char *select, const char *update, int64_t now,
                    int (*each)(sqlite3_stmt *row, void *ctx), void *ctx, size_t *ret_n,
                    const char *what, struct cd_err *err)
{
	sqlite3_stmt *st = NULL;
	size_t n = 0;
	int r, rc;

	if (ret_n)
		*ret_n = 0;
	if ((r = cd_sqlite_begin(&s->base, err)) < 0)
		return r;
	if (sqlite3_prepare_v2(s->db, select, -1, &st, NULL) != SQLITE_OK) {
		r = cd_sqlite_err(s, err, what);
		goto fail;
	}
	sqlite3_bind_int64(st, 1, now);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if ((r = each(st, ctx)) != 0)
			goto fail;
		n++;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE) {
		r = cd_sqlite_err(s, err, what);
		goto fail;
	}
	if (n) {
		if (sqlite3_prepare_v2(s->db, update, -1, &st, NULL) != SQLITE_OK) {
			r = cd_sqlite_err(s, err, what);
			goto fail;
		}
		sqlite3_bind_int64(st, 1, now);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		st = NULL;
		if (rc != SQLITE_DONE) {
			r = cd_sqlite_err(s, err, what);
			goto fail;
		}
	}
	if ((r = cd_sqlite_commit(&s->base, err)) < 0)
		return r;
	if (ret_n)
		*ret_n = n;
	return 0;
fail:
	sqlite3_finalize(st);
	cd_sqlite_rollback(&s->base);
	return r;
}

static int user_version(struct cd_sqlite *s, int *ret, struct cd_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "schema version");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*ret = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return cd_sqlite_err(s, err, "schema version");
	return 0;
}

/* Bring the schema up to date in one transaction, so that a crash or a
 * second process migrating at the same time leaves it whole. */
static int migrate(struct cd_sqlite *s, struct cd_err *err)
{
	char sql[64];
	int v = 0, r, i;

	/* Every front end opens the database; only a migration needs the
	 * write lock (checked again under it). */
	if (user_version(s, &v, err) == 0 && v == SCHEMA_VERSION)
		return 0;
	if ((r = cd_sqlite_begin(&s->base, err)) < 0)
		return r;
	if ((r = user_version(s, &v, err)) < 0)
		goto fail;
	if (v > SCHEMA_VERSION) {
		r = cd_err_set(err, -CD_E_CORRUPT,
		               "state database '%s' has schema %d; this cordon knows %d (upgrade "
		               "cordon)",
		               s->path, v, SCHEMA_VERSION);
		goto fail;
	}
	if (v < 0) {
		r = cd_err_set(err, -CD_E_CORRUPT, "state database '%s': bad schema version %d",
		               s->path, v);
		goto fail;
	}
	for (i = v; i < SCHEMA_VERSION; i++)
		if ((r = exec(s, migrations[i], err)) < 0)
			goto fail;
	if (v != SCHEMA_VERSION) {
		snprintf(sql, sizeof sql, "PRAGMA user_version=%d", SCHEMA_VERSION);
		if ((r = exec(s, sql, err)) < 0)
			goto fail;
	}
	return cd_sqlite_commit(&s->base, err);
fail:
	cd_sqlite_rollback(&s->base);
	return r;
}

static void sqlite_close(struct cd_store *st)
{
	struct cd_sqlite *s = cd_sqlite_of(st);

	if (!s)
		return;
	sqlite3_close_v2(s->db);
	free(s->path);
	free(s);
}

/* How many commits other connections have made: PRAGMA data_version
 * changes with each; -1 when it cannot be read. */
static int64_t data_version(struct cd_sqlite *s)
{
	sqlite3_stmt *st = NULL;
	int64_t v = -1;

	if (sqlite3_prepare_v2(s->db, "PRAGMA data_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* SQLite has no notification between processes: look at the data version
 * every WAIT_SLICE_MS.  A version that cannot be read counts as a change
 * (the caller reads again and sees the error). */
#define WAIT_SLICE_MS 50

static int sqlite_wait_change(struct cd_store *st, unsigned timeout_ms)
{
	struct cd_sqlite *s = cd_sqlite_of(st);
	int64_t seen = data_version(s), v;
	unsigned slept = 0, k;

	if (seen < 0)
		return 1;
	while (slept < timeout_ms) {
		k = timeout_ms - slept < WAIT_SLICE_MS ? timeout_ms - slept : WAIT_SLICE_MS;
		sleep_ms(k);
		slept += k;
		v = data_version(s);
		if (v != seen)
			return 1;
	}
	return 0;
}

static const struct cd_store_ops sqlite_state_ops = {
	.name = "sqlite",
	.close = sqlite_close,
	.begin = cd_sqlite_begin,
	.commit = cd_sqlite_commit,
	.rollback = cd_sqlite_rollback,
	.wait_change = sqlite_wait_change,
	.grant_add = cd_sqlite_grant_add,
	.grant_list = cd_sqlite_grant_list,
	.grant_end = cd_sqlite_grant_end,
	.grant_sweep = cd_sqlite_grant_sweep,
	.grant_use = cd_sqlite_grant_use,
	.grant_used = cd_sqlite_grant_used,
	.approval_add = cd_sqlite_approval_add,
	.approval_get = cd_sqlite_approval_get,
	.approval_list = cd_sqlite_approval_list,
	.approval_move = cd_sqlite_approval_move,
	.approval_expire = cd_sqlite_approval_expire,
	.approval_sample = cd_sqlite_approval_sample,
	.pin_see = cd_sqlite_pin_see,
	.pin_list = cd_sqlite_pin_list,
	.pin_approve = cd_sqlite_pin_approve,
	.proposal_save = cd_sqlite_proposal_save,
	.proposal_load = cd_sqlite_proposal_load,
	.proposal_list = cd_sqlite_proposal_list,
	.proposal_finish = cd_sqlite_proposal_finish,
	.console_login_add = cd_sqlite_console_login_add,
	.console_login_take = cd_sqlite_console_login_take,
	.console_session_add = cd_sqlite_console_session_add,
	.console_session_get = cd_sqlite_console_session_get,
	.console_session_end = cd_sqlite_console_session_end,
	.agent_token_add = cd_sqlite_agent_token_add,
	.agent_token_find = cd_sqlite_agent_token_find,
	.agent_token_list = cd_sqlite_agent_token_list,
	.agent_token_revoke = cd_sqlite_agent_token_revoke,
};

/* store-sqlite.h */
int cd_sqlite_wal(sqlite3 *db, unsigned busy_ms)
{
	unsigned waited = 0;

	for (;;) {
		sqlite3_stmt *st = NULL;
		int rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &st, NULL), ok = 0;

		if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			const unsigned char *m = sqlite3_column_text(st, 0);

			ok = m && strcmp((const char *)m, "wal") == 0;
		}
		sqlite3_finalize(st);
		if (ok)
			return 1;
		if (((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) ||
		    waited >= busy_ms)
			return 0;
		usleep(5000);
		waited += 5;
	}
}

int cd_sqlite_state_open(const char *path, struct cd_store **ret, struct cd_err *err)
{
	struct cd_sqlite *s;
	int r;

	if (!path || !*path)
		return cd_err_set(err, -EINVAL, "no state database path");
	if (sodium_init() < 0)
		return cd_err_set(err, -EIO, "libsodium failed to start");
	s = calloc(1, sizeof *s);
	if (!s || !(s->path = strdup(path))) {
		free(s);
		return cd_err_set(err, -ENOMEM, "state database: out of memory");
	}
	s->base.ops = &sqlite_state_ops;
	/* The file and the -wal/-shm files SQLite derives from it are 0600. */
	if ((r = cd_mkdir_parents(path, err)) < 0 ||
	    (r = cd_create_private(path, "state database", err)) < 0)
		goto fail;
	if (sqlite3_open_v2(path, &s->db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE,
	                    NULL) != SQLITE_OK) {
		r = s->db ? cd_sqlite_err(s, err, "cannot open")
		          : cd_err_set(err, -ENOMEM, "state database: out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, BUSY_MS);
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
	if (!cd_sqlite_wal(s->db, BUSY_MS)) {
		r = cd_sqlite_err(s, err, "cannot switch to WAL mode");
		goto fail;
	}
	if ((r = exec(s, "PRAGMA synchronous=FULL", err)) < 0 || (r = migrate(s, err)) < 0)
		goto fail;
	*ret = &s->base;
	return 0;
fail:
	sqlite_close(&s->base);
	return r;
}
