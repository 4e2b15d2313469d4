/* store-sqlite.h — shared by the SQLite backend's files only (not a public
 * API): the connection, its error helper and the operations each file
 * implements for the ops table in store-sqlite-state.c.
 *
 * Trust boundary: as store.h.  Values are always bound as parameters; the
 * connection refuses triggers, views and schema writes of its own. */
#ifndef CD_STORE_SQLITE_H
#define CD_STORE_SQLITE_H

#include "store.h"

#include <sqlite3.h>

/* A connection to one SQLite file. */
struct cd_sqlite {
	struct cd_store base; /* first: a struct cd_store * is one of these */
	sqlite3 *db;
	char *path;
};

static inline struct cd_sqlite *cd_sqlite_of(struct cd_store *st)
{
	return (struct cd_sqlite *)st;
}

/* Open the state database at `path` (store-sqlite-state.c): directories
 * 0700, the file 0600, WAL, the schema brought up to date in one
 * transaction; a newer schema is refused. */
int cd_sqlite_state_open(const char *path, struct cd_store **ret, struct cd_err *err);

/* Set err from the connection's last error: "state database 'P': WHAT:
 * msg"; returns -EIO. */
int cd_sqlite_err(struct cd_sqlite *s, struct cd_err *err, const char *what);

/* Put db in WAL mode (it stays so in the file): 1 when it is, 0 when
 * not.  A lock another connection holds for a moment (one closing runs
 * its checkpoint under an exclusive lock) is waited out for up to
 * busy_ms: the journal-mode change does not always wait in SQLite's busy
 * handler itself. */
int cd_sqlite_wal(sqlite3 *db, unsigned busy_ms);

/* In one transaction: run `select` (?1 bound to now) and call each(row,
 * ctx) for every row — a non-zero return rolls everything back and is
 * returned — then, when there was a row, run `update` (?1 = now).  For the
 * sweeps that end what is past its time and log each end.  *ret_n (may be
 * NULL) counts the rows. */
int cd_sqlite_sweep(struct cd_sqlite *s, const char *select, const char *update, int64_t now,
                    int (*each)(sqlite3_stmt *row, void *ctx), void *ctx, size_t *ret_n,
                    const char *what, struct cd_err *err);

int cd_sqlite_begin(struct cd_store *st, struct cd_err *err);
int cd_sqlite_commit(struct cd_store *st, struct cd_err *err);
void cd_sqlite_rollback(struct cd_store *st);

/* Bind s, or NULL when s is NULL. */
static inline void cd_sqlite_bind_opt(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* Column i as text (NULL for SQL NULL). */
static inline const char *cd_sqlite_col(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/* Open the audit log at `path` (store-sqlite-audit.c): created 0600 with
 * its schema and a new log id unless read_only; busy_ms is how long a
 * writer waits for a stuck lock holder. */
int cd_sqlite_audit_open(const char *path, int read_only, unsigned busy_ms, struct cd_store **ret,
                         struct cd_err *err);

/* Temporary grants (store-sqlite-grants.c). */
int cd_sqlite_grant_add(struct cd_store *st, const struct cd_temp_grant *g, struct cd_err *err);
int cd_sqlite_grant_list(struct cd_store *st, int all, int64_t now, cd_store_grant_fn fn, void *ctx,
                         struct cd_err *err);
int cd_sqlite_grant_end(struct cd_store *st, const char *id, const char *how, const char *by,
                        int64_t now, cd_store_grant_fn fn, void *ctx, struct cd_err *err);
int cd_sqlite_grant_sweep(struct cd_store *st, int64_t now, cd_store_grant_fn fn, void *ctx,
                          size_t *ret_n, struct cd_err *err);
int cd_sqlite_grant_use(struct cd_store *st, const char *id, int64_t now, int count,
                        struct cd_err *err);
int cd_sqlite_grant_used(struct cd_store *st, const char *id, int64_t now, struct cd_err *err);

/* The approval queue (store-sqlite-approvals.c). */
int cd_sqlite_approval_add(struct cd_store *st, const struct cd_approval *a, struct cd_err *err);
int cd_sqlite_approval_get(struct cd_store *st, const char *id, cd_store_approval_fn fn, void *ctx,
                           struct cd_err *err);
int cd_sqlite_approval_list(struct cd_store *st, const char *status, int64_t since,
                            cd_store_approval_fn fn, void *ctx, struct cd_err *err);
int cd_sqlite_approval_move(struct cd_store *st, const struct cd_store_approval_move *m,
                            struct cd_err *err);
int cd_sqlite_approval_expire(struct cd_store *st, int64_t now, cd_store_approval_fn fn, void *ctx,
                              size_t *ret_n, struct cd_err *err);
int cd_sqlite_approval_sample(struct cd_store *st, size_t n, int64_t since, const char *by,
                              int64_t now, cd_store_approval_fn fn, void *ctx, size_t *ret_n,
                              struct cd_err *err);

/* Tool pins (store-sqlite-pins.c). */
int cd_sqlite_pin_see(struct cd_store *st, const char *server, const char *tool, const char *sha256,
                      const char *definition, int64_t now, int *ret_approved,
                      int *ret_other_approved, int *ret_new, int *ret_shadowed, struct cd_err *err);
int cd_sqlite_pin_list(struct cd_store *st, const char *server, const char *tool,
                       cd_store_pin_fn fn, void *ctx, struct cd_err *err);
int cd_sqlite_pin_approve(struct cd_store *st, const char *server, const char *tool,
                          const char *sha256, const char *by, int64_t now,
                          cd_store_pin_sign_fn sign, void *sctx, char ret_sha256[65],
                          struct cd_err *err);

/* Proposals (store-sqlite-proposals.c). */
int cd_sqlite_proposal_save(struct cd_store *st, const struct cd_proposal *p, struct cd_err *err);
int cd_sqlite_proposal_load(struct cd_store *st, const char *id, struct cd_proposal **ret,
                            struct cd_err *err);
int cd_sqlite_proposal_list(struct cd_store *st, struct cd_proposal **ret, size_t *ret_n,
                            struct cd_err *err);
int cd_sqlite_proposal_finish(struct cd_store *st, const struct cd_proposal *p, const char *status,
                              const char *by, int64_t now, struct cd_err *err);

/* The console's login links (store-sqlite-logins.c). */
int cd_sqlite_console_login_add(struct cd_store *st, const char *hash, const char *person,
                                const char *mac, int64_t now, int64_t expires, struct cd_err *err);
int cd_sqlite_console_login_take(struct cd_store *st, const char *hash, int64_t now,
                                 char *ret_person, size_t len, char *ret_mac, size_t maclen,
                                 int64_t *ret_expires, struct cd_err *err);
int cd_sqlite_console_session_add(struct cd_store *st, const char *hash, const char *person,
                                  const char *mac, int64_t now, int64_t expires,
                                  struct cd_err *err);
int cd_sqlite_console_session_get(struct cd_store *st, const char *hash, int64_t now,
                                  char *ret_person, size_t len, char *ret_mac, size_t mlen,
                                  int64_t *ret_expires, struct cd_err *err);
int cd_sqlite_console_session_end(struct cd_store *st, const char *hash, int64_t now,
                                  struct cd_err *err);

/* Agent tokens (store-sqlite-tokens.c). */
int cd_sqlite_agent_token_add(struct cd_store *st, const struct cd_agent_token *t,
                              struct cd_err *err);
int cd_sqlite_agent_token_find(struct cd_store *st, const char *hash, int64_t now,
                               cd_store_token_fn fn, void *ctx, struct cd_err *err);
int cd_sqlite_agent_token_list(struct cd_store *st, cd_store_token_fn fn, void *ctx,
                               struct cd_err *err);
int cd_sqlite_agent_token_revoke(struct cd_store *st, const char *id, int64_t now,
                                 struct cd_err *err);

#endif
