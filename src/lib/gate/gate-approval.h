/* gate-approval.h — the gate's approval step (DESIGN.md: decision ->
 * approval if required -> intent).  A decision that needs approval is held
 * here: an approver rule of the policy decides at once, a person through
 * the queue in the state database (approval.h), or on the operator's
 * terminal.  Every step is an audit record: approval.request,
 * approval.approved / approval.denied / approval.expired, approval.used.
 *
 * An approval never widens anything: the profile and every other setting
 * come from the decision, the request binds the call's SHA-256, and the
 * approval is consumed once, by this process, after re-checking that hash.
 */
#ifndef CD_GATE_APPROVAL_H
#define CD_GATE_APPROVAL_H

#include "approval.h"
#include "gate.h"

/* How to wait for a person. */
struct cd_approval_wait {
	struct cd_state *state; /* required */
	int64_t timeout_s;      /* the request's deadline is now + this */
	const char *requester;  /* JSON describing the requesting process, or NULL */
	/* Called once the request is queued (e.g. to say how to approve it). */
	void (*queued)(const struct cd_approval *a, void *ctx);
	/* When set: ask on the operator's terminal.  Return 1 approve, 0
	 * deny, -1 no answer (keep waiting on the queue); write the approver's
	 * name into by. */
	int (*prompt)(const struct cd_approval *a, void *ctx, char *by, size_t bylen);
	void *ctx;
	unsigned poll_ms; /* 0: 200 */
};

/* The canonical JSON of a command run for an approval: argv, cwd and the
 * profile, sorted keys, no spaces.  malloc'd, or NULL. */
char *cd_gate_run_args_json(const struct cd_run_request *rq, const char *profile);

/* Hold a needs-approval decision until it is approved (dec becomes an
 * allow, its reason names the approver and the approval id, which is also
 * written to approval_id), denied or past its deadline (dec stays a deny
 * with the reason).  Returns 0 either way; a negative code when the
 * approval could not be handled (nothing may run). */
int cd_gate_await_approval(const struct cd_gate *g, const struct cd_run_request *rq,
                           const char *cwd, struct cd_decision *dec,
                           const struct cd_approval_wait *w, char approval_id[CD_APPROVAL_ID_MAX],
                           struct cd_err *err);

/* One approval record ("approval.request", "approval.approved" ...) about
 * a, by `by` (may be NULL) with a one-line reason. */
/* What the audit log may show of a request's arguments (struct
 * cd_approval.log_args): NULL when the rules for `dec` mask nothing (the
 * arguments are shown as given), else a new JSON string the caller frees.
 * *ret_err < 0 when masking failed: the request must then be refused. */
char *cd_gate_approval_log_args(const struct cd_gate *g, const struct cd_decision *dec,
                                const char *tool, const char *action, const char *args_json,
                                int *ret_err);

int cd_gate_approval_record(struct cd_audit *audit, const char *kind, const struct cd_approval *a,
                            const char *by, const char *reason, struct cd_err *err);

/* A person's decision on request `id`: approve (1) or deny (0) by `by`
 * with an optional comment.  Inside the transaction that changes the
 * request it is refused when the request is for an approver rule, or when
 * the policy (policy_path, else the one that made the request) does not
 * accept `by` as an approver of the requesting agent (self-approval, an
 * agent, someone not in approvers.people); then the audit record.  0;
 * -CD_E_DENIED with the refusal (also in refusal, refusal_len > 0),
 * -ENOENT no such request, -ESTALE not pending or past its deadline,
 * another negative code when the stores failed. */
int cd_gate_approval_decide(struct cd_audit *audit, struct cd_state *s, const char *id, int approve,
                            const char *by, const char *comment, const char *policy_path,
                            int64_t now, char *refusal, size_t refusal_len, struct cd_err *err);

struct cd_approver_key;
/* The same, signing the decision with key (approval-sign.h; NULL:
 * unsigned).  Refused besides when the waiting run would refuse the
 * answer: the policy pins a key for `by` and key is not it (nor a console
 * key of the policy), or the store is shared and the decision unsigned. */
int cd_gate_approval_decide_signed(struct cd_audit *audit, struct cd_state *s, const char *id,
                                   int approve, const char *by, const char *comment,
                                   const char *policy_path, const struct cd_approver_key *key,
                                   int64_t now, char *refusal, size_t refusal_len,
                                   struct cd_err *err);

/* Is the state database shared by other hosts (not a local SQLite file)? */
int cd_gate_store_shared(struct cd_state *s);

/* May the waiting process take the answer in row a (approved), read from
 * state s, for a call of `agent` under policy p?  The person it names must
 * approve under p, and the signature hold (cd_approval_verify).  1, or 0
 * with why (also an approval.refused record). */
int cd_gate_approval_answer_ok(struct cd_audit *audit, const struct cd_policy *p,
                               struct cd_state *s, const struct cd_approval *a, const char *agent,
                               char *why, size_t wn);

/* Expire the requests past their deadline, each with its record. */
int cd_gate_approvals_expire(struct cd_audit *audit, struct cd_state *s, int64_t now,
                             struct cd_err *err);

#endif
