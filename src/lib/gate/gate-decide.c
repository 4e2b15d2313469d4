/* gate-decide.c — a person's decision on a held call (gate-approval.h),
 * one function for every front end (`cordon approvals approve|deny`, the
 * console of `cordon serve`): who may decide is checked inside the
 * transaction that changes the request, and the decision is never stored
 * without its audit record. */
#include "gate-approval.h"

#include "policy/policy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct decide_ctx {
	struct cd_audit *audit;
	const char *by, *why, *policy_opt;
	int approve;
	char *refusal;
	size_t refusal_len;
	struct cd_err *err;
};

/* Inside the transaction: is this person allowed to decide this request?
 * Then the record. */
static int check_and_record(const struct cd_approval *a, void *ctx)
{
	struct decide_ctx *d = ctx;
	const char *path = d->policy_opt ? d->policy_opt : a->policy;
	struct cd_policy *p = NULL;
	struct cd_err perr = { 0, "" };
	char why[256];
	int ok;

	if (strncmp(a->approval, "policy:", 7) == 0) {
		snprintf(d->refusal, d->refusal_len,
		         "request %s is for approver rule '%s', not a person", a->id,
		         a->approval + 7);
		return 1;
	}
	if (!path) {
		snprintf(d->refusal, d->refusal_len,
		         "request %s names no policy to check the approver against (give --policy)",
		         a->id);
		return 1;
	}
	if (cd_policy_load_file(path, &p, &perr) < 0) {
		snprintf(d->refusal, d->refusal_len, "cannot check the approver: policy: %s",
		         perr.msg);
		return 1;
	}
	ok = cd_policy_approver_person(p, d->by, a->agent, why, sizeof why);
	cd_policy_free(p);
	if (!ok) {
		snprintf(d->refusal, d->refusal_len, "%s", why);
		return 1;
	}
	return cd_gate_approval_record(
	               d->audit, d->approve ? "approval.approved" : "approval.denied", a, d->by,
	               d->why       ? d->why
	               : d->approve ? "approved"
	                            : "denied",
	               d->err) < 0
	               ? -EIO
	               : 0;
}

int cd_gate_approval_decide(struct cd_audit *audit, struct cd_state *s, const char *id, int approve,
                            const char *by, const char *comment, const char *policy_path,
                            int64_t now, char *refusal, size_t refusal_len, struct cd_err *err)
{
	struct decide_ctx d;
	int r;

	memset(&d, 0, sizeof d);
	d.audit = audit;
	d.by = by;
	d.why = comment;
	d.policy_opt = policy_path;
	d.approve = approve;
	d.refusal = refusal;
	d.refusal_len = refusal_len;
	d.err = err;
	refusal[0] = '\0';
	r = cd_approval_decide(s, id, approve, by, comment, now, check_and_record, &d, err);
	if (refusal[0])
		return cd_err_set(err, -CD_E_DENIED, "%s", refusal);
	return r;
}
