/* state.h — cordon's state database: the things that change (break-glass
 * and delegated grants, pending approvals, tool pins), kept apart from the
 * append-only audit log (DESIGN.md).  One SQLite file shared by every
 * cordon process of the operator; it lives under the operator's state
 * directory, which no sandbox can see (plan.c refuses to bind it).
 *
 * Trust boundary: the file belongs to the operator, but may have been
 * edited by hand or damaged: rows are read defensively by the modules that
 * own them, values are always bound as parameters, and the connection
 * refuses triggers, views and schema writes of its own.  Every function
 * fails closed with a one-line reason in err. */
#ifndef CD_STATE_H
#define CD_STATE_H

#include "err.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct cd_state;

/* Open (creating directories 0700 and the file 0600, WAL mode, the schema
 * of every table) the database at `path`.  A database written by a newer
 * cordon (higher schema version) is refused.  Free with cd_state_close. */
int cd_state_open(const char *path, struct cd_state **ret, struct cd_err *err);
void cd_state_close(struct cd_state *s);

/* The path it was opened with. */
const char *cd_state_path(const struct cd_state *s);

/* The connection, for the modules that own a table (temp-grant.c,
 * approval.c, mcp pins).  Never NULL for an open state. */
sqlite3 *cd_state_db(struct cd_state *s);

/* Transactions: BEGIN IMMEDIATE (waits for other writers up to the busy
 * timeout), COMMIT, ROLLBACK.  0 or -EIO with the reason. */
int cd_state_begin(struct cd_state *s, struct cd_err *err);
int cd_state_commit(struct cd_state *s, struct cd_err *err);
void cd_state_rollback(struct cd_state *s);

/* In one transaction: run `select` (?1 bound to now) and call each(row,
 * ctx) for every row — a non-zero return rolls everything back and is
 * returned — then, when there was a row, run `update` (?1 = now).  For the
 * sweeps that end what is past its time and log each end (temp-grant.c,
 * approval.c).  *ret_n (may be NULL) counts the rows. */
int cd_state_sweep(struct cd_state *s, const char *select, const char *update, int64_t now,
                   int (*each)(sqlite3_stmt *row, void *ctx), void *ctx, size_t *ret_n,
                   const char *what, struct cd_err *err);

/* Bind s, or NULL when s is NULL (statements of the modules that own a
 * table). */
static inline void cd_state_bind_opt(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* Column i as text (NULL for SQL NULL). */
static inline const char *cd_state_col(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/* Set err from the connection's last error: "state database: WHAT: msg". */
int cd_state_err(struct cd_state *s, struct cd_err *err, const char *what);

/* A new id: PREFIX and 16 random lower-case hex digits ("bg-1f0c..."). */
void cd_state_random_id(const char *prefix, char *out, size_t outlen);

#endif
