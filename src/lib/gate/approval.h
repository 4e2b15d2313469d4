/* approval.h — the approval queue: calls whose grant says `approval:` wait
 * here for a person (or an approver rule of the policy) in cordon's state
 * database, shared by every cordon process of the operator.
 *
 * A request holds what the call will do as canonical JSON and the SHA-256
 * of (tool, action, that JSON).  An approval is bound to that hash: it is
 * used at most once (approved -> used, in one transaction that also checks
 * the hash and the deadline), it expires with the request's deadline, and
 * it carries nothing that could change the sandbox (the profile is fixed
 * by the decision that made the request and stored with it).
 *
 * Trust boundary: the database belongs to the operator and is never
 * visible inside a sandbox; rows are still read defensively (a malformed
 * row is skipped, never approved), and the requesting process re-checks the
 * hash of its own call against the row before running anything. */
#ifndef CD_APPROVAL_H
#define CD_APPROVAL_H

#include "util/err.h"
#include "store/state.h"
#include "store/store-rows.h"

#include <stddef.h>
#include <stdint.h>

/* struct cd_approval, one request: store-rows.h. */

/* SHA-256 (hex) over tool NUL action NUL args_json. */
void cd_approval_hash(const char *tool, const char *action, const char *args_json, char out[65]);

/* Queue a pending request; a->id is written.  a->args_sha256 is computed
 * here from a->tool, a->action and a->args_json. */
int cd_approval_request(struct cd_state *s, struct cd_approval *a, struct cd_err *err);

typedef int (*cd_approval_fn)(const struct cd_approval *a, void *ctx);

/* One request by id (fn called once), or -ENOENT. */
int cd_approval_get(struct cd_state *s, const char *id, cd_approval_fn fn, void *ctx,
                    struct cd_err *err);

/* Requests in creation order: with that status, or all when status is
 * NULL; created at or after `since` (0: any). */
int cd_approval_list(struct cd_state *s, const char *status, int64_t since, cd_approval_fn fn,
                     void *ctx, struct cd_err *err);

/* Decide a pending request whose deadline has not passed: approve (1) or
 * deny (0), by `by` with an optional comment.  fn (may be NULL) is called
 * with the row inside the transaction, before the change, and may refuse
 * it by returning non-zero (returned, nothing changed): the caller checks
 * the approver there and writes the audit record, so a decision is never
 * stored without its record.  signature (NULL: unsigned) is stored with
 * the decision; it is read after fn returns, so fn may write it into the
 * caller's buffer (approval-sign.h signs the row fn is shown).  -ENOENT:
 * no such request; -ESTALE: not pending any more or past its deadline. */
int cd_approval_decide(struct cd_state *s, const char *id, int approve, const char *by,
                       const char *comment, const char *signature, int64_t now, cd_approval_fn fn,
                       void *ctx, struct cd_err *err);

/* Use an approval: approved, before its deadline, and its stored hash
 * equal to `args_sha256` and to the hash of its stored tool, action and
 * arguments -> used.  fn as for cd_approval_decide.  -EPERM with the reason
 * otherwise.  Called by the requesting process only. */
int cd_approval_consume(struct cd_state *s, const char *id, const char *args_sha256, int64_t now,
                        cd_approval_fn fn, void *ctx, struct cd_err *err);

/* Withdraw a request whose call was cancelled (its client gave it up, or
 * its session's token was revoked): pending, or approved and not used,
 * before its deadline -> withdrawn, never approvable or usable again; by
 * and why are stored as decided_by and comment.  fn as for
 * cd_approval_decide.  -ESTALE: not pending or approved any more. */
int cd_approval_withdraw(struct cd_state *s, const char *id, const char *by, const char *why,
                         int64_t now, cd_approval_fn fn, void *ctx, struct cd_err *err);

/* Mark pending requests past their deadline (and approvals never used
 * before it) expired, calling fn for each inside the transaction. */
int cd_approval_expire(struct cd_state *s, int64_t now, cd_approval_fn fn, void *ctx, size_t *ret_n,
                       struct cd_err *err);

/* Pick up to n approved (or used) requests decided at or after `since`
 * and not sampled before, at random; mark them sampled by `by` and call fn
 * for each inside the transaction.  *ret_n counts them. */
int cd_approval_sample(struct cd_state *s, size_t n, int64_t since, const char *by, int64_t now,
                       cd_approval_fn fn, void *ctx, size_t *ret_n, struct cd_err *err);

#endif
