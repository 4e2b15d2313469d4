/* gate-decide.c — a person's decision on a held call (gate-approval.h),
 * one function for every front end (`cordon approvals approve|deny`, the
 * console of `cordon serve`): who may decide is checked inside the
 * transaction that changes the request, and the decision is never stored
 * without its audit record. */
#include "gate-approval.h"

#include "approval-sign.h"
#include "policy/policy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct decide_ctx {
	struct cd_audit *audit;
	const char *by, *why, *policy_opt;
	int approve, shared;
	int64_t now;
	const struct cd_approver_key *key;
	char sig[CD_APPROVAL_SIG_MAX];
	char *refusal;
	size_t refusal_len;
	struct cd_err *err;
};

/* Sign the decision with d->key when the waiting run will take that key
 * for d->by (approval-sign.h): 1, or 0 with why when the run would refuse
 * it anyway (a pinned key not used, another key, unsigned through a
 * shared store). */
static int sign(struct decide_ctx *d, const struct cd_policy *p, const struct cd_approval *a,
                char *why, size_t wn)
{
	unsigned char pinned[32], mine[32], ck[32];
	int has = cd_policy_approver_key(p, d->by, pinned);
	size_t i;

	d->sig[0] = '\0';
	if (!d->key) {
		if (has)
			snprintf(
			        why, wn,
			        "the policy pins a key for '%s': sign with it (--key FILE, made by "
			        "'cordon approvals keygen')",
			        d->by);
		else if (d->shared)
			snprintf(why, wn,
			         "decisions through a shared store must be signed, and the policy "
			         "pins no key for '%s' (approvers.keys)",
			         d->by);
		return has || d->shared ? 0 : 1;
	}
	cd_approver_key_pk(d->key, mine);
	if (!(has && !memcmp(pinned, mine, 32))) {
		for (i = 0; cd_policy_console_key(p, i, ck) && memcmp(ck, mine, 32); i++)
			;
		if (!cd_policy_console_key(p, i, ck)) {
			snprintf(why, wn, "the key given is not the one the policy pins for '%s'",
			         d->by);
			return 0;
		}
	}
	if (cd_approval_sign(d->key, a, d->approve, d->by, d->now, d->sig) < 0) {
		snprintf(why, wn, "cannot sign the decision");
		return 0;
	}
	return 1;
}

/* Inside the transaction: is this person allowed to decide this request?
 * Then the signature and the record. */
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
	ok = cd_policy_approver_person(p, d->by, a->agent, why, sizeof why) &&
	     sign(d, p, a, why, sizeof why);
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
	return cd_gate_approval_decide_signed(audit, s, id, approve, by, comment, policy_path, NULL,
	                                      now, refusal, refusal_len, err);
}

int cd_gate_approval_decide_signed(struct cd_audit *audit, struct cd_state *s, const char *id,
                                   int approve, const char *by, const char *comment,
                                   const char *policy_path, const struct cd_approver_key *key,
                                   int64_t now, char *refusal, size_t refusal_len,
                                   struct cd_err *err)
{
	struct decide_ctx d;
	int r;

	memset(&d, 0, sizeof d);
	d.key = key;
	d.now = now;
	d.shared = cd_gate_store_shared(s);
	d.audit = audit;
	d.by = by;
	d.why = comment;
	d.policy_opt = policy_path;
	d.approve = approve;
	d.refusal = refusal;
	d.refusal_len = refusal_len;
	d.err = err;
	refusal[0] = '\0';
	r = cd_approval_decide(s, id, approve, by, comment, d.sig, now, check_and_record, &d, err);
	if (refusal[0])
		return cd_err_set(err, -CD_E_DENIED, "%s", refusal);
	return r;
}
