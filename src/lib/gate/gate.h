/* gate.h — the only place that says yes (DESIGN.md).
 *
 * For one tool call the gate decides against the grant matrix (when a
 * policy is loaded), records the decision, and makes the intent durable in
 * the audit log before the front end may run anything; after the run it
 * records the result.  No log, no run: every function here fails closed —
 * a negative return means the caller must not run (or must report the run
 * as unrecorded).
 *
 * Trust: the request comes from the front end (operator options and the
 * agent's argv); argv is stored as data, never interpreted.  Secrets never
 * reach the gate: they live only in the plan's environment.
 */
#ifndef CD_GATE_H
#define CD_GATE_H

#include "audit/audit.h"
#include "util/err.h"
#include "sandbox/plan.h"
#include "policy/policy.h"
#include "sandbox/sandbox.h"
#include "store/state.h"

#include <jansson.h>
#include <stdint.h>

struct cd_gate {
	struct cd_audit *audit;         /* required: no log, no run */
	const struct cd_policy *policy; /* NULL: no grant matrix (operator's own run) */
	const char *policy_path;        /* for records */
	int64_t now;                    /* seconds since the epoch, for expiry */
	/* The state database, when the policy holds temporary grants from it
	 * (cd_temp_apply): each use of one is counted there. */
	struct cd_state *state;
	/* The deployment's masker, required when the policy masks anything
	 * (cd_policy_masks): records of calls whose grants mask are minimized
	 * with it (logmask.h).  NULL there: those records withhold the
	 * arguments instead.  Borrowed. */
	struct cd_masker *masker;
};

/* One command run, as the front end saw it. */
struct cd_run_request {
	const char *run_id;
	const char *agent, *task, *tool; /* agent/task may be NULL without a policy */
	char *const *argv;
	const char *cwd;         /* host working directory (canonical) */
	const char *approval_id; /* the approval the run goes ahead on, or NULL */
	/* The decision the run goes ahead on, set by the front end after
	 * cd_gate_decide_run: its mask rules minimize the result record. */
	const struct cd_decision *decision;
};

/* The mask rules for the records of a call: those of the grants behind
 * an allow or a needs-approval; for a deny (no grant behind it) the
 * strictest of every grant in the policy, since the arguments of a
 * refused call may hold what any grant would mask.  All none without a
 * policy. */
void cd_gate_log_rules(const struct cd_gate *g, const struct cd_decision *d,
                       struct cd_mask_rules *ret);

/* Minimize `rec` and `details` under the rules for `d` (logmask.h) and
 * dump the details into *ret_details (the caller frees it and decrefs
 * *ret_keep after the append).  0 or -ENOMEM / -EIO. */
int cd_gate_minimize(const struct cd_gate *g, const struct cd_decision *d, struct cd_record *rec,
                     json_t *details, char **ret_details, json_t **ret_keep, struct cd_err *err);

/* Decide a command run: action `execute` on `tool` with the argv as its
 * scope.  Without a policy the run is the operator's and is allowed (the
 * decision record says so).  A deny or needs-approval is recorded at once;
 * an allow is recorded by cd_gate_run_intent, with the intent, in one
 * durable transaction.  Returns 0 with *ret filled (ret->verdict says allow/deny/
 * needs-approval), or a negative error (nothing may run). */
int cd_gate_decide_run(const struct cd_gate *g, const struct cd_run_request *rq,
                       struct cd_decision *ret, struct cd_err *err);

/* Make the intent durable: the "decision" record of `d` (when not NULL)
 * and a "run.intent" record holding who, what (argv as given, its SHA-256,
 * the code an interpreter will run), where and under which plan, in one
 * transaction.  Must succeed before the sandbox starts. */
int cd_gate_run_intent(const struct cd_gate *g, const struct cd_run_request *rq,
                       const struct cd_plan *plan, const struct cd_decision *d, struct cd_err *err);

/* Record the result ("run.result"): exit status, reason, duration, the
 * hashes of stdin/stdout/stderr, denied syscalls, limits, walls; `extra`
 * (may be NULL) is merged into the details. */
int cd_gate_run_result(const struct cd_gate *g, const struct cd_run_request *rq,
                       const struct cd_plan *plan, const struct cd_result *res, json_t *extra,
                       struct cd_err *err);

/* Record a policy load ("policy.load"): the path, and on success its
 * SHA-256 and counts (decision "allow"), on failure the loader's message
 * (decision "deny": nothing is decided with it).  `lazy`: committed now,
 * durable with the next durable record (the run's intent follows at once).
 * `run_id` may be NULL. */
int cd_gate_policy_load(struct cd_audit *audit, const char *run_id, const char *path,
                        const struct cd_policy *p, const char *error, int lazy, struct cd_err *err);

/* SHA-256 (hex) of the code an interpreter in argv will run: the -c/-e
 * string, or the script file (resolved against cwd, at most 16 MiB).
 * 0 and *ret filled, or -ENOENT when argv names no code. */
int cd_gate_code_sha256(char *const *argv, const char *cwd, char ret[65]);

#endif
