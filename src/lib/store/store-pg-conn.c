/* store-pg-conn.c — the PostgreSQL backend's connection (store-pg.h):
 * libpq loaded on first use, connecting by URI, the numbered migrations
 * of every table (state and audit alike, one list), transactions, and
 * waiting for another host's change with LISTEN/NOTIFY.
 *
 * Trust boundary: as store.h.  The URI may hold a password: it is never
 * printed (messages name the URI without it). */
#include "store-pg.h"

#include "util/dl.h"
#include "util/util.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct cd_pq cd_pq;

#define SYM(f, name)                                                                               \
	{                                                                                          \
		name, (void **)&cd_pq.f                                                            \
	}
static const struct cd_dl_sym syms[] = {
	SYM(connectdb, "PQconnectdb"),
	SYM(status, "PQstatus"),
	SYM(errorMessage, "PQerrorMessage"),
	SYM(finish, "PQfinish"),
	SYM(exec, "PQexec"),
	SYM(execParams, "PQexecParams"),
	SYM(resultStatus, "PQresultStatus"),
	SYM(resultErrorField, "PQresultErrorField"),
	SYM(clear, "PQclear"),
	SYM(ntuples, "PQntuples"),
	SYM(getvalue, "PQgetvalue"),
	SYM(getisnull, "PQgetisnull"),
	SYM(getlength, "PQgetlength"),
	SYM(cmdTuples, "PQcmdTuples"),
	SYM(socket, "PQsocket"),
	SYM(consumeInput, "PQconsumeInput"),
	SYM(notifies, "PQnotifies"),
	SYM(backendPID, "PQbackendPID"),
	SYM(freemem, "PQfreemem"),
	SYM(transactionStatus, "PQtransactionStatus"),
	SYM(setNoticeProcessor, "PQsetNoticeProcessor"),
	SYM(conninfoParse, "PQconninfoParse"),
	SYM(conninfoFree, "PQconninfoFree"),
};

/* Migration N brings the schema from version N-1 to N.  Append only.
 * Every change a writer makes notifies the listeners (cordon_change):
 * a waiting process learns of an approval at once. */
static const char *const migrations[] = {
	/* 1: the state tables (as store-sqlite-state.c's migrations 1-6), the
	 * audit log (one chain per host: UNIQUE (host, seq); hashes as hex),
	 * the writers' map (role -> the one chain it may append to), row-level
	 * security, and the change notifications. */
	"CREATE TABLE temp_grants ("
	" id text PRIMARY KEY, kind text NOT NULL,"
	" agent text NOT NULL, task text, tool text NOT NULL, parent text,"
	" grant_json text NOT NULL, ticket text, by_whom text NOT NULL, policy_sha256 text,"
	" created bigint NOT NULL, expires bigint NOT NULL,"
	" ended text, ended_at bigint, ended_by text,"
	" uses bigint NOT NULL DEFAULT 0, last_used bigint);"
	"CREATE INDEX temp_grants_active ON temp_grants(ended, expires);"
	"CREATE TABLE mcp_pins ("
	" server text NOT NULL, tool text NOT NULL, sha256 text NOT NULL,"
	" definition text NOT NULL, state text NOT NULL,"
	" first_seen bigint NOT NULL, last_seen bigint NOT NULL,"
	" approved_at bigint, approved_by text, PRIMARY KEY (server, tool, sha256));"
	"CREATE TABLE approvals ("
	" id text PRIMARY KEY, status text NOT NULL,"
	" agent text NOT NULL, task text, tool text NOT NULL, action text NOT NULL,"
	" args_json text NOT NULL, args_sha256 text NOT NULL,"
	" grant_ids text, approval text NOT NULL, profile text,"
	" policy text, policy_sha256 text, requester text, run_id text,"
	" created bigint NOT NULL, deadline bigint NOT NULL,"
	" decided_at bigint, decided_by text, comment text, used_at bigint,"
	" sampled_at bigint, sampled_by text, log_args text);"
	"CREATE INDEX approvals_status ON approvals(status, created);"
	"CREATE TABLE audit_meta (host text NOT NULL, key text NOT NULL, value text NOT NULL,"
	" PRIMARY KEY (host, key));"
	"INSERT INTO audit_meta VALUES ('', 'log_id', replace(gen_random_uuid()::text, '-', ''));"
	"CREATE TABLE audit_records ("
	" host text NOT NULL, seq bigint NOT NULL CHECK (seq > 0),"
	" time_ns bigint NOT NULL, exit_code bigint, duration_ms bigint,"
	" kind text NOT NULL, run_id text, agent text, task text, tool text,"
	" action text, target text, decision text, grant_ids text, reason text,"
	" argv_sha256 text, code_sha256 text, stdin_sha256 text, stdout_sha256 text,"
	" stderr_sha256 text, details text, prev_hash text NOT NULL, hash text NOT NULL,"
	" written_by name NOT NULL DEFAULT current_user,"
	" UNIQUE (host, seq));"
	"CREATE INDEX audit_records_time ON audit_records(time_ns);"
	"CREATE TABLE audit_writers (role name PRIMARY KEY, host text NOT NULL);"
	"ALTER TABLE audit_records ENABLE ROW LEVEL SECURITY;"
	"CREATE POLICY audit_read ON audit_records FOR SELECT USING (true);"
	"CREATE POLICY audit_append ON audit_records FOR INSERT WITH CHECK (EXISTS ("
	" SELECT 1 FROM audit_writers w WHERE w.role = current_user"
	" AND w.host = audit_records.host));"
	"ALTER TABLE audit_meta ENABLE ROW LEVEL SECURITY;"
	"CREATE POLICY meta_read ON audit_meta FOR SELECT USING (true);"
	"CREATE POLICY meta_write ON audit_meta FOR ALL USING (EXISTS ("
	" SELECT 1 FROM audit_writers w WHERE w.role = current_user AND w.host = audit_meta.host))"
	" WITH CHECK (EXISTS (SELECT 1 FROM audit_writers w WHERE w.role = current_user"
	" AND w.host = audit_meta.host));"
	"CREATE FUNCTION cordon_notify() RETURNS trigger LANGUAGE plpgsql AS $$"
	" BEGIN PERFORM pg_notify('cordon_change', TG_TABLE_NAME); RETURN NULL; END $$;"
	"CREATE TRIGGER temp_grants_notify AFTER INSERT OR UPDATE ON temp_grants"
	" FOR EACH STATEMENT EXECUTE FUNCTION cordon_notify();"
	"CREATE TRIGGER approvals_notify AFTER INSERT OR UPDATE ON approvals"
	" FOR EACH STATEMENT EXECUTE FUNCTION cordon_notify();"
	"CREATE TRIGGER mcp_pins_notify AFTER INSERT OR UPDATE ON mcp_pins"
	" FOR EACH STATEMENT EXECUTE FUNCTION cordon_notify();"
	"CREATE TRIGGER audit_records_notify AFTER INSERT ON audit_records"
	" FOR EACH STATEMENT EXECUTE FUNCTION cordon_notify();",
	/* 2: proposals' metadata (store-pg-proposals.c); the content stays on
	 * the disk of the host that ran.  seq orders proposals made in the
	 * same second. */
	"CREATE TABLE proposals ("
	" id text PRIMARY KEY, run_id text NOT NULL, agent text, task text,"
	" tree text NOT NULL, upper text NOT NULL, created bigint NOT NULL,"
	" status text NOT NULL, decided_at bigint, decided_by text,"
	" branch text, commit_id text,"
	" layer_size bigint NOT NULL DEFAULT 0, layer_inodes bigint NOT NULL DEFAULT 0,"
	" layer_used bigint NOT NULL DEFAULT 0, layer_used_inodes bigint NOT NULL DEFAULT 0,"
	" layer_full int NOT NULL DEFAULT 0, seq bigserial);"
	"CREATE TABLE proposal_files ("
	" proposal text NOT NULL, path bytea NOT NULL, op text NOT NULL,"
	" base_sha256 text NOT NULL, new_sha256 text NOT NULL,"
	" base_mode int NOT NULL, new_mode int NOT NULL,"
	" flagged int NOT NULL, note text, diff bytea,"
	" applied int NOT NULL DEFAULT 0, PRIMARY KEY (proposal, path));",
	/* 3: the console's one-time login links (store-pg-logins.c): the
	 * SHA-256 of each secret, never the secret. */
	"CREATE TABLE console_logins ("
	" hash text PRIMARY KEY, person text NOT NULL,"
	" created bigint NOT NULL, expires bigint NOT NULL);",
	/* 4: agent tokens of the MCP HTTP front (store-pg-tokens.c): the
	 * SHA-256 of each token, never the token. */
	"CREATE TABLE agent_tokens ("
	" id text PRIMARY KEY, hash text NOT NULL UNIQUE, agent text NOT NULL,"
	" policy text, created bigint NOT NULL, expires bigint NOT NULL,"
	" revoked bigint NOT NULL DEFAULT 0, seq bigserial);",
	/* 5: an approver's signature over a decision (approval-sign.h): the
	 * waiting run checks it against its own policy's key, so a writer of
	 * this table cannot answer in an approver's name. */
	"ALTER TABLE approvals ADD COLUMN signature text;",
	/* 6: the console's sessions (store-pg-logins.c): the SHA-256 of each
	 * cookie's secret, never the secret, and the console's MAC over the
	 * row. */
	"CREATE TABLE console_sessions ("
	" hash text PRIMARY KEY, person text NOT NULL, mac text NOT NULL,"
	" created bigint NOT NULL, expires bigint NOT NULL);",
	/* 7: what binds the other shared rows to who made them (as SQLite's
	 * migration 11): signatures over temporary grants and tool-definition
	 * approvals, the console's MAC over a login link, the proposing
	 * host's MAC over a proposal's tree and layer. */
	"ALTER TABLE temp_grants ADD COLUMN signature text;"
	"ALTER TABLE mcp_pins ADD COLUMN signature text;"
	"ALTER TABLE console_logins ADD COLUMN mac text;"
	"ALTER TABLE proposals ADD COLUMN mac text;",
	/* 8: what a signature cannot cover, the database holds: a grant's end
	 * is written by whoever revokes it, after the signature, so a writer
	 * role could clear it (session 9's second review, B1) and a
	 * superseded approval could be set approved again (B6).  Writers have
	 * no DELETE on either table, so a row, once ended or superseded,
	 * stays so; a grant's use count only grows. */
	"CREATE FUNCTION cordon_grant_guard() RETURNS trigger LANGUAGE plpgsql AS $g$"
	" BEGIN"
	"  IF OLD.ended IS NOT NULL THEN"
	"   RAISE EXCEPTION 'temporary grant % has ended: it stays ended', OLD.id;"
	"  END IF;"
	"  IF NEW.uses < OLD.uses THEN"
	"   RAISE EXCEPTION 'temporary grant %: its use count only grows', OLD.id;"
	"  END IF;"
	"  RETURN NEW;"
	" END $g$;"
	"CREATE TRIGGER cordon_grant_guard BEFORE UPDATE ON temp_grants"
	" FOR EACH ROW EXECUTE FUNCTION cordon_grant_guard();"
	"CREATE FUNCTION cordon_pin_guard() RETURNS trigger LANGUAGE plpgsql AS $p$"
	" BEGIN"
	"  IF OLD.state = 'superseded' AND NEW.state <> 'superseded' THEN"
	"   RAISE EXCEPTION 'tool pin %/%: % may not become %', OLD.server, OLD.tool,"
	"    OLD.state, NEW.state;"
	"  END IF;"
	"  RETURN NEW;"
	" END $p$;"
	"CREATE TRIGGER cordon_pin_guard BEFORE UPDATE ON mcp_pins"
	" FOR EACH ROW EXECUTE FUNCTION cordon_pin_guard();",
};

#define SCHEMA_VERSION ((int)(sizeof migrations / sizeof migrations[0]))

void cd_pg_p_str(struct cd_pg_params *p, const char *s)
{
	if (p->n < CD_PG_MAX_PARAMS)
		p->v[p->n++] = s;
}

void cd_pg_p_int(struct cd_pg_params *p, int64_t v)
{
	if (p->n < CD_PG_MAX_PARAMS) {
		snprintf(p->num[p->n], sizeof p->num[p->n], "%lld", (long long)v);
		p->v[p->n] = p->num[p->n];
		p->n++;
	}
}

/* The first line of a libpq message, without its newline. */
static void first_line(const char *msg, char *out, size_t outlen)
{
	size_t n = 0;

	while (msg && msg[n] && msg[n] != '\n' && n + 1 < outlen) {
		out[n] = msg[n];
		n++;
	}
	out[n] = '\0';
}

int cd_pg_err(struct cd_pg *pg, struct cd_err *err, const char *what, const char *msg)
{
	char line[200];

	first_line(msg        ? msg
	           : pg->conn ? cd_pq.errorMessage(pg->conn)
	                      : "not connected",
	           line, sizeof line);
	return cd_err_set(err, -EIO, "store '%s': %s: %s", pg->where, what, line);
}

PGresult *cd_pg_query(struct cd_pg *pg, const char *sql, const struct cd_pg_params *p,
                      const char *what, struct cd_err *err)
{
	PGresult *res;
	ExecStatusType s;

	if (p && p->n >= CD_PG_MAX_PARAMS) {
		cd_err_set(err, -E2BIG, "store: too many parameters");
		return NULL;
	}
	/* Without parameters: the simple protocol, which takes the several
	 * statements of a migration; every value goes in as a parameter. */
	res = p ? cd_pq.execParams(pg->conn, sql, p->n, NULL, p->v, NULL, NULL, 0)
	        : cd_pq.exec(pg->conn, sql);
	s = res ? cd_pq.resultStatus(res) : PGRES_FATAL_ERROR;
	if (s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK)
		return res;
	cd_pg_err(pg, err, what, res ? cd_pq.resultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL);
	cd_pq.clear(res);
	return NULL;
}

int64_t cd_pg_cmd(struct cd_pg *pg, const char *sql, const struct cd_pg_params *p, const char *what,
                  struct cd_err *err)
{
	PGresult *res = cd_pg_query(pg, sql, p, what, err);
	int64_t n;

	if (!res)
		return err && err->code ? err->code : -EIO;
	n = strtoll(cd_pq.cmdTuples(res), NULL, 10);
	cd_pq.clear(res);
	return n;
}

const char *cd_pg_col(const PGresult *res, int r, int c)
{
	return cd_pq.getisnull(res, r, c) ? NULL : cd_pq.getvalue(res, r, c);
}

int64_t cd_pg_int(const PGresult *res, int r, int c)
{
	const char *v = cd_pg_col(res, r, c);
	return v ? strtoll(v, NULL, 10) : 0;
}

int cd_pg_begin(struct cd_store *st, struct cd_err *err)
{
	int64_t r = cd_pg_cmd(cd_pg_of(st), "BEGIN", NULL, "begin", err);
	return r < 0 ? (int)r : 0;
}

int cd_pg_commit(struct cd_store *st, struct cd_err *err)
{
	int64_t r = cd_pg_cmd(cd_pg_of(st), "COMMIT", NULL, "commit", err);

	if (r < 0) {
		cd_pg_rollback(st);
		return (int)r;
	}
	return 0;
}

void cd_pg_rollback(struct cd_store *st)
{
	struct cd_pg *pg = cd_pg_of(st);

	if (pg->conn && cd_pq.transactionStatus(pg->conn) != PQTRANS_IDLE)
		cd_pg_cmd(pg, "ROLLBACK", NULL, "rollback", NULL);
}

/* Drain the notifications received so far: 1 when one came from another
 * connection (our own changes notify us too), -1 when the connection is
 * lost. */
static int drain(struct cd_pg *pg)
{
	PGnotify *n;
	int other = 0, me = cd_pq.backendPID(pg->conn);

	if (cd_pq.socket(pg->conn) < 0 || !cd_pq.consumeInput(pg->conn))
		return -1;
	while ((n = cd_pq.notifies(pg->conn)) != NULL) {
		if (n->be_pid != me)
			other = 1;
		cd_pq.freemem(n);
	}
	return other;
}

/* Like the SQLite backend's data version: what was committed before the
 * call is not a change; a notification from another connection within
 * timeout_ms is. */
int cd_pg_wait_change(struct cd_store *st, unsigned timeout_ms)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct timespec t0, t;
	int r;

	if (drain(pg) < 0)
		return 1; /* connection lost: "may have" changed */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = { cd_pq.socket(pg->conn), POLLIN, 0 };
		int64_t spent;

		clock_gettime(CLOCK_MONOTONIC, &t);
		spent = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (spent >= (int64_t)timeout_ms)
			return 0;
		if (poll(&pfd, 1, (int)((int64_t)timeout_ms - spent)) < 0)
			return 1;
		if ((r = drain(pg)) != 0)
			return 1;
	}
}

/* Bring the schema up to date in one transaction under an advisory lock
 * (two first opens at once do not both create it).  A role that may only
 * write finds it current and runs no DDL; a schema newer than this cordon
 * is refused. */
static int migrate(struct cd_pg *pg, struct cd_err *err)
{
	PGresult *res;
	int v = 0, i, r;
	struct cd_pg_params p = { .n = 0 };

	/* Every open but the first: one query finds it current. */
	res = cd_pg_query(pg,
	                  "SELECT CASE WHEN to_regclass('cordon_schema') IS NULL THEN 0"
	                  " ELSE (SELECT max(version) FROM cordon_schema) END",
	                  NULL, "schema", NULL);
	if (res && cd_pg_int(res, 0, 0) == SCHEMA_VERSION) {
		cd_pq.clear(res);
		return 0;
	}
	cd_pq.clear(res);
	if ((r = cd_pg_begin(&pg->base, err)) < 0)
		return r;
	/* The lock first, then the look in a statement of its own: a
	 * statement's snapshot is taken when it starts, so one that waited
	 * for the lock would not see the schema the holder just created. */
	if (cd_pg_cmd(pg, "SELECT pg_advisory_xact_lock(hashtext('cordon.schema'))", NULL, "schema",
	              err) < 0)
		goto fail;
	res = cd_pg_query(pg, "SELECT to_regclass('cordon_schema') IS NOT NULL", NULL, "schema",
	                  err);
	if (!res)
		goto fail;
	i = !strcmp(cd_pq.getvalue(res, 0, 0), "t");
	cd_pq.clear(res);
	if (!i && cd_pg_cmd(pg, "CREATE TABLE cordon_schema (version int NOT NULL)", NULL,
	                    "create the schema (connect once as its owner)", err) < 0)
		goto fail;
	res = cd_pg_query(pg, "SELECT max(version) FROM cordon_schema", NULL, "schema", err);
	if (!res)
		goto fail;
	v = (int)cd_pg_int(res, 0, 0);
	cd_pq.clear(res);
	if (v > SCHEMA_VERSION) {
		cd_pg_rollback(&pg->base);
		return cd_err_set(err, -CD_E_CORRUPT,
		                  "store '%s': schema version %d is newer than this cordon's (%d)",
		                  pg->where, v, SCHEMA_VERSION);
	}
	for (i = v; i < SCHEMA_VERSION; i++)
		if (cd_pg_cmd(pg, migrations[i], NULL,
		              "migrate the schema (connect once as its owner)", err) < 0)
			goto fail;
	if (v < SCHEMA_VERSION) {
		cd_pg_p_int(&p, SCHEMA_VERSION);
		if (cd_pg_cmd(pg, "INSERT INTO cordon_schema VALUES ($1)", &p, "schema", err) < 0)
			goto fail;
	}
	return cd_pg_commit(&pg->base, err);
fail:
	cd_pg_rollback(&pg->base);
	return err && err->code ? err->code : -EIO;
}

static void quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

void cd_pg_close(struct cd_store *st)
{
	struct cd_pg *pg = cd_pg_of(st);

	if (!pg)
		return;
	if (pg->conn)
		cd_pq.finish(pg->conn);
	free(pg->where);
	free(pg);
}

/* A socket directory of a host list ("/a,db.example,/b"): each as a file
 * in it. */
static int host_sockets(const char *hosts, int (*fn)(const char *, void *), void *ctx, int *any)
{
	char path[4096];
	size_t n;
	int r;

	for (; hosts && *hosts; hosts += n + (hosts[n] == ',')) {
		n = strcspn(hosts, ",");
		if (hosts[0] != '/')
			continue;
		*any = 1;
		if (snprintf(path, sizeof path, "%.*s/.s.PGSQL", (int)n, hosts) >= (int)sizeof path)
			return -ENAMETOOLONG;
		if ((r = fn(path, ctx)) < 0)
			return r;
	}
	return 0;
}

int cd_store_uri_secrets(const char *uri, int (*fn)(const char *path, void *ctx), void *ctx,
                         struct cd_err *err)
{
	PQconninfoOption *o, *i;
	char *msg = NULL;
	int r = 0, any = 0;

	if ((r = cd_dl_load("libpq.so.5", "libpq5", syms, CD_ARRAY_SIZE(syms), err)) < 0)
		return r;
	/* libpq's own parser: percent-encoding, a socket path as the URI's
	 * host, host lists, every keyword, exactly as the connection reads
	 * them. */
	if (!(o = cd_pq.conninfoParse(uri, &msg))) {
		r = cd_err_set(err, -EINVAL, "store URI: %s", msg ? msg : "cannot be parsed");
		if (msg)
			cd_pq.freemem(msg);
		return r;
	}
	for (i = o; r >= 0 && i->keyword; i++) {
		if (!i->val || !*i->val)
			continue;
		if (!strcmp(i->keyword, "host"))
			r = host_sockets(i->val, fn, ctx, &any);
		else if (!strcmp(i->keyword, "passfile") || !strcmp(i->keyword, "sslkey") ||
		         !strcmp(i->keyword, "sslcert"))
			r = fn(i->val, ctx);
	}
	cd_pq.conninfoFree(o);
	/* No socket named: libpq's default directory. */
	if (r >= 0 && !any)
		r = fn("/run/postgresql/.s.PGSQL", ctx);
	return r < 0 ? cd_err_set(err, r, "store URI: a secret's path is too long") : 0;
}

int cd_pg_open(const char *uri, struct cd_pg **ret, struct cd_err *err)
{
	struct cd_pg *pg;
	int r;

	if ((r = cd_dl_load("libpq.so.5", "libpq5", syms, CD_ARRAY_SIZE(syms), err)) < 0)
		return r;
	pg = calloc(1, sizeof *pg);
	if (!pg || !(pg->where = cd_store_uri_shown(uri))) {
		free(pg);
		return cd_err_set(err, -ENOMEM, "store: out of memory");
	}
	pg->base.ops = &cd_pg_ops;
	pg->conn = cd_pq.connectdb(uri);
	if (!pg->conn || cd_pq.status(pg->conn) != CONNECTION_OK) {
		r = cd_pg_err(pg, err, "cannot connect", NULL);
		goto fail;
	}
	cd_pq.setNoticeProcessor(pg->conn, quiet, NULL);
	if ((r = migrate(pg, err)) < 0)
		goto fail;
	if (cd_pg_cmd(pg, "LISTEN cordon_change", NULL, "listen", err) < 0) {
		r = err && err->code ? err->code : -EIO;
		goto fail;
	}
	*ret = pg;
	return 0;
fail:
	cd_pg_close(&pg->base);
	return r;
}
