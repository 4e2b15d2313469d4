/* state.h — cordon's state database: the things that change (break-glass
 * and delegated grants, pending approvals, tool pins, proposals), kept
 * apart from the append-only audit log (DESIGN.md).  One database shared by
 * every cordon process of the operator; it lives under the operator's
 * state directory, which no sandbox can see (plan.c refuses to bind it).
 *
 * This module opens it through the store interface (store.h) and owns the
 * handle; the modules that own a table (temp-grant.c, approval.c,
 * mcp-pins.c, proposal-store.c) call the store's operations through
 * cd_state_store.  Every function fails closed with a one-line reason in
 * err. */
#ifndef CD_STATE_H
#define CD_STATE_H

#include "util/err.h"
#include "store.h"

#include <stddef.h>
#include <stdint.h>

struct cd_state;

/* Open (creating directories 0700 and the file 0600, the schema of every
 * table) the database at `path`: an SQLite file, or a PostgreSQL URI
 * ("postgresql://...", shared by many hosts; store-pg-*.c).  A database written by a
 * newer cordon (higher schema version) is refused.  Free with
 * cd_state_close. */
int cd_state_open(const char *path, struct cd_state **ret, struct cd_err *err);
void cd_state_close(struct cd_state *s);

/* The store behind it.  Never NULL for an open state. */
struct cd_store *cd_state_store(struct cd_state *s);

/* Is this store the caller's own: a local SQLite file (not on NFS or
 * SMB) owned by the effective uid and writable by nobody else, in a
 * directory owned by the caller or root that others cannot write (unless
 * sticky)?  Decided once, when opened.  1: own (rows it holds were written
 * by the caller's cordon, unsigned ones count); 0: shared, like a
 * PostgreSQL store (only signed rows count), the reason in why. */
int cd_state_own(struct cd_state *s, char *why, size_t wn);

/* Transactions around several operations: begin waits for other writers
 * up to the store's busy timeout.  0 or -EIO with the reason. */
int cd_state_begin(struct cd_state *s, struct cd_err *err);
int cd_state_commit(struct cd_state *s, struct cd_err *err);
void cd_state_rollback(struct cd_state *s);

/* Wait up to timeout_ms for another process to change the database: 1
 * when one did (or may have), 0 on timeout. */
int cd_state_wait(struct cd_state *s, unsigned timeout_ms);

/* A new id: PREFIX and 16 random lower-case hex digits ("bg-1f0c..."). */
void cd_state_random_id(const char *prefix, char *out, size_t outlen);

#endif
