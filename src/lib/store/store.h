/* store.h — the one interface to cordon's databases: the state database
 * (temporary grants, the approval queue, MCP tool pins, proposals) and the
 * audit log live behind a struct of operations, the way crun's libcrun and
 * curl's vtls put their backends behind one.  SQLite is the first backend
 * (store-sqlite-*.c); a second one (PostgreSQL) implements the same table.
 *
 * The operations are the domain's, not SQL's: "end this grant, logging the
 * end in the same transaction", "consume this approval if it still checks",
 * "wait for another process's change".  Every operation that reads then
 * writes is atomic in the backend (SQLite: BEGIN IMMEDIATE; PostgreSQL:
 * a transaction with SELECT ... FOR UPDATE on state rows, an advisory
 * lock on the audit chain), and a callback the caller
 * passes runs inside it, so a change is never stored without its audit
 * record.  No SQL text and no call into SQLite appear outside the backend
 * files (scripts/lint.sh checks).
 *
 * Trust boundary: the stores belong to the operator but may have been
 * edited or damaged; a backend decodes every row defensively (a row that
 * cannot be what it claims is skipped or refused, never widened), binds
 * every value as a parameter, and fails closed with a one-line reason in
 * err.  Rows handed to callbacks borrow the backend's memory: valid during
 * the callback only.
 *
 * The rows (struct cd_approval, ...) are the store's own (store-rows.h):
 * a backend includes no header of the modules above it. */
#ifndef CD_STORE_H
#define CD_STORE_H

#include "util/err.h"
#include "store-rows.h"

#include <stddef.h>
#include <stdint.h>

/* A connection to a backend: the first member of every backend's own
 * struct.  Closed with ops->close. */
struct cd_store {
	const struct cd_store_ops *ops;
};

/* A row callback: 0 goes on, non-zero stops (and is returned by the
 * operation, which then changes nothing when it was inside a
 * transaction). */
typedef int (*cd_store_pin_sign_fn)(const char *sha256, char *sig, size_t n, void *ctx);
typedef int (*cd_store_grant_fn)(const struct cd_temp_grant *g, void *ctx);
typedef int (*cd_store_approval_fn)(const struct cd_approval *a, void *ctx);
typedef int (*cd_store_pin_fn)(const struct cd_mcp_pin_row *row, void *ctx);
typedef int (*cd_store_entry_fn)(const struct cd_audit_entry *e, void *ctx);
typedef int (*cd_store_token_fn)(const struct cd_agent_token *t, void *ctx);

/* A writer's view of the end of the audit chain. */
struct cd_store_audit_head {
	uint64_t seq;           /* last seq stored (0: none) */
	uint64_t next;          /* the next record's seq: never one used before */
	unsigned char hash[32]; /* its chain hash, or the genesis hash */
};

/* A change of an approval request's status, applied by approval_move. */
struct cd_store_approval_move {
	const char *id;
	const char *from, *to; /* status before and after */
	int64_t now;           /* decided_at, or used_at when to is "used" */
	const char *by, *comment;
	/* A decision's signature (NULL or "": none).  Read after check returns,
	 * so check may write it (it signs the row it was shown). */
	const char *signature;
	/* Called with the row, inside the transaction, before the change:
	 * non-zero refuses it (returned; nothing changes). */
	cd_store_approval_fn check;
	void *ctx;
};

/* The operations.  A connection opened for the state database (state.c)
 * fills the state group, one opened for the audit log (audit-store.c) the
 * audit group, both close and wait_change; a backend that keeps both in one
 * database may fill every one in one table.  test-store.c checks that the
 * SQLite backend leaves no hole. */
struct cd_store_ops {
	const char *name; /* "sqlite" */
	void (*close)(struct cd_store *st);

	/* ---- the state database --------------------------------------- */

	/* A transaction around several operations (a request and its audit
	 * record): begin waits for other writers up to the backend's busy
	 * timeout; commit rolls back when it fails. */
	int (*begin)(struct cd_store *st, struct cd_err *err);
	int (*commit)(struct cd_store *st, struct cd_err *err);
	void (*rollback)(struct cd_store *st);
	/* Wait up to timeout_ms for another connection to commit a change:
	 * 1 when one did (or may have), 0 on timeout.  SQLite polls its data
	 * version; PostgreSQL would LISTEN. */
	int (*wait_change)(struct cd_store *st, unsigned timeout_ms);

	/* Temporary grants (temp-grant.h).  grant_add stores g as given (its
	 * id set); grant_list calls fn for every row in creation order, or
	 * only the active ones (not ended, expires > now) unless `all`.
	 * grant_end: in one transaction, the active row `id` to fn, then
	 * ended = how (-ENOENT: none).  grant_sweep: in one transaction, every
	 * active row past its time to fn, then all of them ended 'expired';
	 * *ret_n counts them.  grant_use: whether `id` is in force at now,
	 * and with `count` its use counted in the same statement (-CD_E_DENIED
	 * when not); grant_used counts a use unconditionally. */
	int (*grant_add)(struct cd_store *st, const struct cd_temp_grant *g, struct cd_err *err);
	int (*grant_list)(struct cd_store *st, int all, int64_t now, cd_store_grant_fn fn,
	                  void *ctx, struct cd_err *err);
	int (*grant_end)(struct cd_store *st, const char *id, const char *how, const char *by,
	                 int64_t now, cd_store_grant_fn fn, void *ctx, struct cd_err *err);
	int (*grant_sweep)(struct cd_store *st, int64_t now, cd_store_grant_fn fn, void *ctx,
	                   size_t *ret_n, struct cd_err *err);
	int (*grant_use)(struct cd_store *st, const char *id, int64_t now, int count,
	                 struct cd_err *err);
	int (*grant_used)(struct cd_store *st, const char *id, int64_t now, struct cd_err *err);

	/* The approval queue (approval.h).  approval_add stores a pending
	 * request as given (id and hash set by the caller); approval_get
	 * calls fn once with row `id` (-ENOENT: none); approval_list calls fn
	 * for the rows with `status` (NULL: any) created at or after `since`,
	 * in creation order.  approval_move is the atomic decision and the
	 * atomic single use: in one transaction it reads the row, lets
	 * m->check refuse, and moves it from m->from to m->to (the update
	 * names the status read, so two movers cannot both win).
	 * approval_expire: in one transaction, each pending or approved row
	 * past its deadline to fn, then all of them 'expired'.
	 * approval_sample: in one transaction, up to n approved or used rows
	 * decided at or after `since`, never sampled, chosen at random, marked
	 * sampled by `by` and handed to fn. */
	int (*approval_add)(struct cd_store *st, const struct cd_approval *a, struct cd_err *err);
	int (*approval_get)(struct cd_store *st, const char *id, cd_store_approval_fn fn, void *ctx,
	                    struct cd_err *err);
	int (*approval_list)(struct cd_store *st, const char *status, int64_t since,
	                     cd_store_approval_fn fn, void *ctx, struct cd_err *err);
	int (*approval_move)(struct cd_store *st, const struct cd_store_approval_move *m,
	                     struct cd_err *err);
	int (*approval_expire)(struct cd_store *st, int64_t now, cd_store_approval_fn fn, void *ctx,
	                       size_t *ret_n, struct cd_err *err);
	int (*approval_sample)(struct cd_store *st, size_t n, int64_t since, const char *by,
	                       int64_t now, cd_store_approval_fn fn, void *ctx, size_t *ret_n,
	                       struct cd_err *err);

	/* Tool pins of MCP servers (mcp-pins.h).  pin_see, in one
	 * transaction: records definition `sha256` of (server, tool) as
	 * pending unless known (*ret_new = 1 then), and says whether it is the
	 * approved one, whether another definition of the tool was ever
	 * approved (asked only when it is not), and how many other servers
	 * pin the tool's name.  pin_list: rows of `server` and `tool` (NULL:
	 * any) by server, tool, first_seen; fn's negative return stops.
	 * pin_approve, in one transaction: the pending definition `sha256`
	 * (NULL: the newest pending one) becomes the approved one, the one
	 * approved before 'superseded'; -ENOENT when nothing is pending.  sign
	 * (may be NULL) is called with the definition chosen, inside the
	 * transaction, and what it writes is kept as the row's signature. */
	int (*pin_see)(struct cd_store *st, const char *server, const char *tool,
	               const char *sha256, const char *definition, int64_t now, int *ret_approved,
	               int *ret_other_approved, int *ret_new, int *ret_shadowed,
	               struct cd_err *err);
	int (*pin_list)(struct cd_store *st, const char *server, const char *tool,
	                cd_store_pin_fn fn, void *ctx, struct cd_err *err);
	int (*pin_approve)(struct cd_store *st, const char *server, const char *tool,
	                   const char *sha256, const char *by, int64_t now,
	                   cd_store_pin_sign_fn sign, void *sctx, char ret_sha256[65],
	                   struct cd_err *err);

	/* Proposals (proposal.h).  proposal_save stores a proposal and its
	 * files in one transaction; proposal_load reads one (files and diffs
	 * included, the flag as stored, in any order; -ENOENT: none) into a
	 * new struct freed with cd_proposal_free (proposal-store.c checks the
	 * paths, flags and sorts); proposal_list reads every
	 * proposal, newest first, without files (nfiles counted), freed with
	 * cd_proposal_list_free; proposal_finish records the end (status,
	 * who, when, branch, commit, the new MAC) of a pending or partial proposal and
	 * marks its applied files, in one transaction (-EALREADY otherwise).
	 * A damaged row refuses the whole proposal. */
	int (*proposal_save)(struct cd_store *st, const struct cd_proposal *p, struct cd_err *err);
	int (*proposal_load)(struct cd_store *st, const char *id, struct cd_proposal **ret,
	                     struct cd_err *err);
	int (*proposal_list)(struct cd_store *st, struct cd_proposal **ret, size_t *ret_n,
	                     struct cd_err *err);
	int (*proposal_finish)(struct cd_store *st, const struct cd_proposal *p, const char *status,
	                       const char *by, int64_t now, struct cd_err *err);

	/* The console's one-time login links (cordon serve).
	 * console_login_add stores the SHA-256 (hex) of a link's secret with
	 * the person it logs in and its expiry; console_login_take, in one
	 * transaction, reads the row of `hash` not expired at now (the person
	 * into ret_person, len bytes with the NUL) and deletes it and every
	 * expired row: -ENOENT when there was none (used, expired, never
	 * made).  mac: the console's MAC over the row (console.c), kept and
	 * given back ("" when the row has none) with the row's expiry. */
	int (*console_login_add)(struct cd_store *st, const char *hash, const char *person,
	                         const char *mac, int64_t now, int64_t expires, struct cd_err *err);
	int (*console_login_take)(struct cd_store *st, const char *hash, int64_t now,
	                          char *ret_person, size_t len, char *ret_mac, size_t maclen,
	                          int64_t *ret_expires, struct cd_err *err);
	/* The console's sessions, so that they outlive a restart.
	 * console_session_add stores the SHA-256 (hex) of a session cookie's
	 * secret with its person, its expiry and mac (the console's MAC over
	 * the row, hex); console_session_get reads the row of `hash` not
	 * expired at now (person into ret_person, len bytes with the NUL; mac
	 * into ret_mac, mlen bytes; expiry): -ENOENT when there is none;
	 * console_session_end deletes the row of `hash` (NULL: none) and every
	 * row expired at now. */
	int (*console_session_add)(struct cd_store *st, const char *hash, const char *person,
	                           const char *mac, int64_t now, int64_t expires,
	                           struct cd_err *err);
	int (*console_session_get)(struct cd_store *st, const char *hash, int64_t now,
	                           char *ret_person, size_t len, char *ret_mac, size_t mlen,
	                           int64_t *ret_expires, struct cd_err *err);
	int (*console_session_end)(struct cd_store *st, const char *hash, int64_t now,
	                           struct cd_err *err);

	/* Agent tokens of the MCP HTTP front (cordon mcp token).
	 * agent_token_add stores t (id and hash set by the caller);
	 * agent_token_find calls fn once with the row of `hash` that is in
	 * force at now (not revoked, not expired): -ENOENT when there is none;
	 * agent_token_list calls fn for every row in creation order;
	 * agent_token_revoke marks row `id` revoked at now (-ENOENT: no such
	 * token in force). */
	int (*agent_token_add)(struct cd_store *st, const struct cd_agent_token *t,
	                       struct cd_err *err);
	int (*agent_token_find)(struct cd_store *st, const char *hash, int64_t now,
	                        cd_store_token_fn fn, void *ctx, struct cd_err *err);
	int (*agent_token_list)(struct cd_store *st, cd_store_token_fn fn, void *ctx,
	                        struct cd_err *err);
	int (*agent_token_revoke)(struct cd_store *st, const char *id, int64_t now,
	                          struct cd_err *err);

	/* ---- the audit log (audit.h) ---------------------------------- */

	/* The log's id (CD_AUDIT_LOG_ID_LEN hex digits), made when the log
	 * was created. */
	const char *(*audit_log_id)(struct cd_store *st);
	/* An append is one transaction: audit_begin takes the write lock
	 * (waiting while other writers commit, failing on one stuck holder;
	 * `lazy`: the commit need not be durable yet), audit_head reads the
	 * chain's end under it, audit_insert stores records whose seq, prev
	 * and hash the caller computed from the head, audit_commit makes them
	 * durable (rolled back when it fails), audit_rollback drops them. */
	int (*audit_begin)(struct cd_store *st, int lazy, struct cd_err *err);
	int (*audit_head)(struct cd_store *st, const unsigned char genesis[32],
	                  struct cd_store_audit_head *ret, struct cd_err *err);
	int (*audit_insert)(struct cd_store *st, const struct cd_audit_entry *e,
	                    struct cd_err *err);
	/* n records in one statement, each as audit_insert stores it (a
	 * shipped batch: one round trip); NULL: audit_insert them one by one. */
	int (*audit_insert_many)(struct cd_store *st, const struct cd_audit_entry *e, size_t n,
	                         struct cd_err *err);
	int (*audit_commit)(struct cd_store *st, struct cd_err *err);
	void (*audit_rollback)(struct cd_store *st);
	/* The log's small key-value table (checkpoint bookkeeping): get is 0,
	 * -ENOENT, -CD_E_CORRUPT (too long for out) or -EIO; set fails with
	 * "WHAT: reason" in err. */
	int (*audit_meta_get)(struct cd_store *st, const char *key, char *out, size_t outlen);
	int (*audit_meta_set)(struct cd_store *st, const char *key, const char *value,
	                      const char *what, struct cd_err *err);
	/* Reading: the highest seq stored; the records matching a filter in
	 * seq order (fn's non-zero return stops and is returned). */
	int (*audit_size)(struct cd_store *st, uint64_t *ret, struct cd_err *err);
	int (*audit_query)(struct cd_store *st, const struct cd_audit_filter *f,
	                   cd_store_entry_fn fn, void *ctx, struct cd_err *err);
	/* Verifying, inside audit_read_begin/_end (one snapshot): every row
	 * in seq order whatever its seq; whether another row than not_seq
	 * names `h` as its predecessor; the largest seq ever assigned (0:
	 * unknown); the hash stored at seq (1 found, 0 not). */
	int (*audit_read_begin)(struct cd_store *st, struct cd_err *err);
	void (*audit_read_end)(struct cd_store *st);
	int (*audit_scan)(struct cd_store *st, cd_store_entry_fn fn, void *ctx, struct cd_err *err);
	int (*audit_follows)(struct cd_store *st, const unsigned char h[32], uint64_t not_seq);
	int64_t (*audit_seq_used)(struct cd_store *st);
	int (*audit_hash_at)(struct cd_store *st, uint64_t seq, unsigned char ret[32]);
	/* Durability: make lazy commits durable; prepare the journal so that
	 * durable commits are cheap (may do nothing). */
	int (*audit_sync)(struct cd_store *st, struct cd_err *err);
	int (*audit_presize)(struct cd_store *st, struct cd_err *err);
	/* The indexes a reader's filtered pages need (agent, run_id, kind,
	 * decision, each ordered as audit_query orders), made when absent:
	 * then a page of `last` matches before a cursor reads about a page
	 * of rows.  The console asks for them; the log's writers do not. */
	int (*audit_index)(struct cd_store *st, struct cd_err *err);
	/* Chains: a backend that keeps one hash chain per writer (PostgreSQL:
	 * one per host name) lists their names (inside audit_read_begin) and
	 * audit_chain scopes audit_scan, follows, seq_used and hash_at to one
	 * of them.  NULL in a backend with one chain (SQLite). */
	int (*audit_chains)(struct cd_store *st, int (*fn)(const char *host, void *ctx), void *ctx,
	                    struct cd_err *err);
	int (*audit_chain)(struct cd_store *st, const char *host);
	/* Every chain's last seq (a follower starts after them); NULL in a
	 * backend with one chain. */
	int (*audit_heads)(struct cd_store *st,
	                   int (*fn)(const char *host, uint64_t seq, void *ctx), void *ctx,
	                   struct cd_err *err);
};

/* Is `path` a store URI ("postgresql://..." or "postgres://...") rather
 * than a file? */
int cd_store_is_uri(const char *path);

/* A store URI as messages show it: without the user's password (the
 * user stays) and without any parameter when one is a password.
 * malloc'd, or NULL. */
char *cd_store_uri_shown(const char *uri);

/* What a sandbox must not reach of a store URI's connection, each as a
 * path whose directory the caller hides: every socket directory (the
 * URI's hosts as libpq parses them, percent-encoded, in the host part or
 * host=, comma lists; libpq's default when none), passfile=, sslkey=,
 * sslcert=.  What the environment adds (PGHOST, PGPASSFILE, the files
 * under HOME) is the caller's.  Loads libpq.  0, or negative: the URI
 * does not parse (fail closed). */
int cd_store_uri_secrets(const char *uri, int (*fn)(const char *path, void *ctx), void *ctx,
                         struct cd_err *err);

/* Open the state database or the audit log at `path`: an SQLite file, or
 * a PostgreSQL URI (store-pg-*.c; libpq loaded on first use).  `host` is
 * the audit writer's chain (the records' host field; PostgreSQL keeps one
 * chain per host).  Fails closed with a one-line reason: a store that
 * cannot be reached is an error, never an empty log. */
int cd_store_state_open(const char *path, struct cd_store **ret, struct cd_err *err);
int cd_store_audit_open(const char *path, int read_only, const char *host, unsigned busy_ms,
                        struct cd_store **ret, struct cd_err *err);

#endif
