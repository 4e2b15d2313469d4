/* store-pg.h — shared by the PostgreSQL backend's files only (not a public
 * API): libpq's entry points (loaded on first use, never linked: see
 * util/dl.h), the connection, the query helpers and the operations each
 * file implements for the ops table in store-pg-state.c.
 *
 * One connection serves the state database and the audit log alike (one
 * ops table fills both groups); the same URI may be given for both.
 *
 * Trust boundary: as store.h.  Every value is a bound parameter (text
 * format); every row is decoded defensively.  The server is the
 * operator's, but a row may have been changed by hand: the audit chain's
 * hashes are recomputed from the columns by verify. */
#ifndef CD_STORE_PG_H
#define CD_STORE_PG_H

#include "store.h"

#include <libpq-fe.h>

/* libpq, filled by cd_pg_load. */
struct cd_pq {
	__typeof__(PQconnectdb) *connectdb;
	__typeof__(PQstatus) *status;
	__typeof__(PQerrorMessage) *errorMessage;
	__typeof__(PQfinish) *finish;
	__typeof__(PQexec) *exec;
	__typeof__(PQexecParams) *execParams;
	__typeof__(PQresultStatus) *resultStatus;
	__typeof__(PQresultErrorField) *resultErrorField;
	__typeof__(PQclear) *clear;
	__typeof__(PQntuples) *ntuples;
	__typeof__(PQgetvalue) *getvalue;
	__typeof__(PQgetisnull) *getisnull;
	__typeof__(PQgetlength) *getlength;
	__typeof__(PQcmdTuples) *cmdTuples;
	__typeof__(PQsocket) *socket;
	__typeof__(PQconsumeInput) *consumeInput;
	__typeof__(PQnotifies) *notifies;
	__typeof__(PQbackendPID) *backendPID;
	__typeof__(PQfreemem) *freemem;
	__typeof__(PQtransactionStatus) *transactionStatus;
	__typeof__(PQsetNoticeProcessor) *setNoticeProcessor;
	__typeof__(PQconninfoParse) *conninfoParse;
	__typeof__(PQconninfoFree) *conninfoFree;
};
extern struct cd_pq cd_pq;

#define CD_PG_MAX_PARAMS 32

/* A connection (state, audit, or both). */
struct cd_pg {
	struct cd_store base; /* first: a struct cd_store * is one of these */
	PGconn *conn;
	char *where;     /* the URI without any password, for messages */
	char host[256];  /* this writer's chain (the record's host field) */
	char chain[256]; /* the chain the verify ops read */
	char log_id[CD_AUDIT_LOG_ID_LEN + 1];
	int read_only;
	int lazy;         /* the open audit transaction commits asynchronously */
	unsigned busy_ms; /* how long a writer waits for its chain's lock */
};

static inline struct cd_pg *cd_pg_of(struct cd_store *st)
{
	return (struct cd_pg *)st;
}

/* Bound parameters, in text format: add them in order ($1, $2, ...). */
struct cd_pg_params {
	const char *v[CD_PG_MAX_PARAMS];
	char num[CD_PG_MAX_PARAMS][24];
	int n;
};
void cd_pg_p_str(struct cd_pg_params *p, const char *s); /* NULL: SQL NULL */
void cd_pg_p_int(struct cd_pg_params *p, int64_t v);

/* Run sql with p (may be NULL).  cd_pg_query returns the result (tuples
 * or command) or NULL with err set ("state store 'URI': WHAT: message");
 * free with cd_pq.clear.  cd_pg_cmd returns the rows changed, or < 0. */
PGresult *cd_pg_query(struct cd_pg *pg, const char *sql, const struct cd_pg_params *p,
                      const char *what, struct cd_err *err);
int64_t cd_pg_cmd(struct cd_pg *pg, const char *sql, const struct cd_pg_params *p, const char *what,
                  struct cd_err *err);
/* Column c of row r, or NULL for SQL NULL; as an integer (0 for NULL). */
const char *cd_pg_col(const PGresult *res, int r, int c);
int64_t cd_pg_int(const PGresult *res, int r, int c);

/* Open (load libpq, connect, migrate, LISTEN) the store at `uri`. */
int cd_pg_open(const char *uri, struct cd_pg **ret, struct cd_err *err);
int cd_pg_begin(struct cd_store *st, struct cd_err *err);
int cd_pg_commit(struct cd_store *st, struct cd_err *err);
void cd_pg_rollback(struct cd_store *st);
int cd_pg_wait_change(struct cd_store *st, unsigned timeout_ms);
void cd_pg_close(struct cd_store *st);

/* Set err from the connection's last error; returns -EIO. */
int cd_pg_err(struct cd_pg *pg, struct cd_err *err, const char *what, const char *msg);

/* The audit log (store-pg-audit.c): the log id, the ops. */
int cd_pg_audit_init(struct cd_pg *pg, struct cd_err *err);
extern const struct cd_store_ops cd_pg_ops;

/* Temporary grants (store-pg-grants.c). */
int cd_pg_grant_add(struct cd_store *st, const struct cd_temp_grant *g, struct cd_err *err);
int cd_pg_grant_list(struct cd_store *st, int all, int64_t now, cd_store_grant_fn fn, void *ctx,
                     struct cd_err *err);
int cd_pg_grant_end(struct cd_store *st, const char *id, const char *how, const char *by,
                    int64_t now, cd_store_grant_fn fn, void *ctx, struct cd_err *err);
int cd_pg_grant_sweep(struct cd_store *st, int64_t now, cd_store_grant_fn fn, void *ctx,
                      size_t *ret_n, struct cd_err *err);
int cd_pg_grant_use(struct cd_store *st, const char *id, int64_t now, int count,
                    struct cd_err *err);
int cd_pg_grant_used(struct cd_store *st, const char *id, int64_t now, struct cd_err *err);

/* The approval queue (store-pg-approvals.c). */
int cd_pg_approval_add(struct cd_store *st, const struct cd_approval *a, struct cd_err *err);
int cd_pg_approval_get(struct cd_store *st, const char *id, cd_store_approval_fn fn, void *ctx,
                       struct cd_err *err);
int cd_pg_approval_list(struct cd_store *st, const char *status, int64_t since,
                        cd_store_approval_fn fn, void *ctx, struct cd_err *err);
int cd_pg_approval_move(struct cd_store *st, const struct cd_store_approval_move *m,
                        struct cd_err *err);
int cd_pg_approval_expire(struct cd_store *st, int64_t now, cd_store_approval_fn fn, void *ctx,
                          size_t *ret_n, struct cd_err *err);
int cd_pg_approval_sample(struct cd_store *st, size_t n, int64_t since, const char *by, int64_t now,
                          cd_store_approval_fn fn, void *ctx, size_t *ret_n, struct cd_err *err);

/* Tool pins (store-pg-pins.c). */
int cd_pg_pin_see(struct cd_store *st, const char *server, const char *tool, const char *sha256,
                  const char *definition, int64_t now, int *ret_approved, int *ret_other_approved,
                  int *ret_new, int *ret_shadowed, struct cd_err *err);
int cd_pg_pin_list(struct cd_store *st, const char *server, const char *tool, cd_store_pin_fn fn,
                   void *ctx, struct cd_err *err);
int cd_pg_pin_approve(struct cd_store *st, const char *server, const char *tool, const char *sha256,
                      const char *by, int64_t now, cd_store_pin_sign_fn sign, void *sctx,
                      char ret_sha256[65], struct cd_err *err);

/* Proposals' metadata (store-pg-proposals.c). */
int cd_pg_proposal_save(struct cd_store *st, const struct cd_proposal *p, struct cd_err *err);
int cd_pg_proposal_load(struct cd_store *st, const char *id, struct cd_proposal **ret,
                        struct cd_err *err);
int cd_pg_proposal_list(struct cd_store *st, struct cd_proposal **ret, size_t *ret_n,
                        struct cd_err *err);
int cd_pg_proposal_finish(struct cd_store *st, const struct cd_proposal *p, const char *status,
                          const char *by, int64_t now, struct cd_err *err);

/* The console's login links (store-pg-logins.c). */
int cd_pg_console_login_add(struct cd_store *st, const char *hash, const char *person,
                            const char *mac, int64_t now, int64_t expires, struct cd_err *err);
int cd_pg_console_login_take(struct cd_store *st, const char *hash, int64_t now, char *ret_person,
                             size_t len, char *ret_mac, size_t maclen, int64_t *ret_expires,
                             struct cd_err *err);
int cd_pg_console_session_add(struct cd_store *st, const char *hash, const char *person,
                              const char *mac, int64_t now, int64_t expires, struct cd_err *err);
int cd_pg_console_session_get(struct cd_store *st, const char *hash, int64_t now, char *ret_person,
                              size_t len, char *ret_mac, size_t mlen, int64_t *ret_expires,
                              struct cd_err *err);
int cd_pg_console_session_end(struct cd_store *st, const char *hash, int64_t now,
                              struct cd_err *err);

/* Agent tokens (store-pg-tokens.c). */
int cd_pg_agent_token_add(struct cd_store *st, const struct cd_agent_token *t, struct cd_err *err);
int cd_pg_agent_token_find(struct cd_store *st, const char *hash, int64_t now, cd_store_token_fn fn,
                           void *ctx, struct cd_err *err);
int cd_pg_agent_token_list(struct cd_store *st, cd_store_token_fn fn, void *ctx,
                           struct cd_err *err);
int cd_pg_agent_token_revoke(struct cd_store *st, const char *id, int64_t now, struct cd_err *err);

#endif
