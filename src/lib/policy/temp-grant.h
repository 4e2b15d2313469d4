/* temp-grant.h — break-glass and delegated grants: temporary grants kept in
 * the state database (state.h) and added, for the decisions of one process,
 * to the policy loaded from the file (cd_policy_add_temp in policy.h).
 *
 * A row holds the grant as the policy loader reads it (a JSON mapping with
 * the keys of a grant), so the same strict code checks a temporary grant
 * as a written one, at creation and again at every use against the policy
 * in force then.  A row is active until it expires or is revoked; ending
 * is recorded in the row (who, when, why) and never deletes it. */
#ifndef CD_TEMP_GRANT_H
#define CD_TEMP_GRANT_H

#include "audit/audit.h"
#include "util/err.h"
#include "policy.h"
#include "row-sign.h"
#include "store/state.h"
#include "store/store-rows.h"

#include <stdint.h>

/* struct cd_temp_grant, one row, and cd_temp_kind_name: store-rows.h. */

/* Active temporary grants a process takes into account, at most. */
#define CD_TEMP_MAX_ACTIVE 1000

/* Store a new grant; g->id is written (a fresh random id).  0 or -errno. */
int cd_temp_add(struct cd_state *s, struct cd_temp_grant *g, struct cd_err *err);

typedef int (*cd_temp_fn)(const struct cd_temp_grant *g, void *ctx);

/* Rows in creation order: the active ones (not ended, expires > now), or
 * every row when `all`.  Stops when fn returns non-zero (returned). */
int cd_temp_list(struct cd_state *s, int all, int64_t now, cd_temp_fn fn, void *ctx,
                 struct cd_err *err);

/* End an active grant: how = "revoked" (by a person) or "expired".  *ret
 * (may be NULL) gets a copy of the row's id, kind, agent, tool and ticket
 * through fn before the change.  -ENOENT when no active grant has that id. */
int cd_temp_end(struct cd_state *s, const char *id, const char *how, const char *by, int64_t now,
                cd_temp_fn fn, void *ctx, struct cd_err *err);

/* Mark every active grant whose time is up as expired, calling fn for each
 * (to log it) inside the same transaction.  *ret_n (may be NULL) counts. */
int cd_temp_sweep(struct cd_state *s, int64_t now, cd_temp_fn fn, void *ctx, size_t *ret_n,
                  struct cd_err *err);

/* Count one use of the grant at `now`. */
int cd_temp_used(struct cd_state *s, const char *id, int64_t now, struct cd_err *err);
/* Count one use at `now` of a grant still in force: not revoked or ended,
 * not past its expiry.  -CD_E_DENIED (nothing counted) when it is not:
 * a front end that loaded it earlier must not use it any more. */
int cd_temp_use_active(struct cd_state *s, const char *id, int64_t now, struct cd_err *err);
/* 0 when the grant is still in force at `now` (nothing counted),
 * -CD_E_DENIED when not, or an error. */
int cd_temp_in_force(struct cd_state *s, const char *id, int64_t now, struct cd_err *err);

/* The digest a grant's signature covers: every column that says what it
 * grants, to whom, by whom and for how long (id, kind, agent, task, tool,
 * parent, grant_json, ticket, by, policy_sha256, created, expires). */
void cd_temp_digest(const struct cd_temp_grant *g, unsigned char m[CD_ROW_DIGEST_LEN]);

/* 1 when s is a store other hosts write (PostgreSQL), 0 for SQLite. */
int cd_temp_shared(struct cd_state *s);

/* Add the active grants to `p` for decisions at `now`.  A grant whose
 * signature the policy does not take (row-sign.h: unsigned through a
 * shared store, unsigned for a person with a pinned key, signed by another
 * key) is left out and reported through warn like any other.  A grant the policy
 * in force no longer accepts (an agent or tool removed, a scope it refuses)
 * is left out — a deny — and reported through warn (may be NULL) with the
 * loader's reason.  *ret_n (may be NULL) counts those added. */
typedef void (*cd_temp_warn_fn)(const char *id, const char *msg, void *ctx);
int cd_temp_apply(struct cd_state *s, struct cd_policy *p, int64_t now, cd_temp_warn_fn warn,
                  void *ctx, size_t *ret_n, struct cd_err *err);

/* ---- making one (temp-grant-make.c) ---- */

#define CD_TEMP_MAX_SCOPE 64

/* What a person asks for, as `cordon grant break-glass` and `cordon
 * delegate` take it.  scope items are "path=GLOB", "host=H", "port=N|N-M",
 * "argv=TOKENS", "field=NAME", "arg:NAME=V", "arg:NAME^=PREFIX"; mask
 * "TYPE[=ACTION],..."; fields "PATH,...". */
struct cd_temp_req {
	enum cd_temp_kind kind;
	const char *agent; /* break-glass: the agent; delegated: the parent */
	const char *to;    /* delegated: the sub-agent PARENT/NAME */
	const char *task, *tool, *actions, *ticket, *by, *approval, *reason;
	const char *mask, *fields;
	int require_task;
	const char *const *scope;
	size_t nscope;
	int64_t ttl_s;
	/* Signs the row for q->by (row-sign.h); NULL: unsigned, which only a
	 * local SQLite store honours, and only for a person without a pinned
	 * key. */
	cd_row_sign_fn sign;
	void *sign_ctx;
};

/* The request's shape (scope keys, approval): 0 or -EINVAL with why. */
int cd_temp_req_check(const struct cd_temp_req *q, struct cd_err *err);

/* "30m", "4h" into seconds: 0 or -EINVAL with why. */
int cd_temp_parse_ttl(const char *s, int64_t *ret, struct cd_err *err);

/* Make the grant q asks for at `now`, as the CLI does: a break-glass grant
 * needs a ticket, lives at most the policy's max_ttl and is checked by the
 * loader against p (when not NULL); a delegation needs p and is checked by
 * cd_policy_delegation_check (p should carry the active temporary grants,
 * cd_temp_apply).  The row and its record ("grant.break-glass",
 * "grant.delegated", naming q->by) in one step.  *g gets the row (its
 * strings point into q; grant_json NULL).  -EINVAL: the request is
 * malformed; -CD_E_DENIED: refused (over the cap, not covered); else could
 * not proceed. */
int cd_temp_make(struct cd_state *s, struct cd_audit *audit, struct cd_policy *p,
                 const struct cd_temp_req *q, int64_t now, struct cd_temp_grant *g,
                 struct cd_err *err);

/* ---- their audit records (temp-grant-log.c) ---- */

/* Append a record of kind ("grant.break-glass", "grant.revoked" ...) for
 * g: the grant as stored, who acted (by, may be NULL) and why. */
int cd_temp_record(struct cd_audit *audit, const char *kind, const struct cd_temp_grant *g,
                   const char *by, const char *reason, struct cd_err *err);

/* Revoke an active grant as `by`, recording "grant.revoked" in the same
 * step; fn (may be NULL) sees the row after its record.  -ENOENT when no
 * active grant has that id. */
int cd_temp_revoke(struct cd_state *s, struct cd_audit *audit, const char *id, const char *by,
                   const char *reason, int64_t now, cd_temp_fn fn, void *ctx, struct cd_err *err);

/* cd_temp_sweep with a "grant.expired" record for each grant it ends. */
int cd_temp_sweep_logged(struct cd_state *s, struct cd_audit *audit, int64_t now, size_t *ret_n,
                         struct cd_err *err);

#endif
