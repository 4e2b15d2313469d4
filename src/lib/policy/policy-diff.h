/* policy-diff.h — what a policy change adds: `cordon policy diff OLD NEW`,
 * the review gate for a change to the grant matrix.
 *
 * Trust boundary: both policies were loaded strictly (policy.h).  The
 * comparison is conservative: a new matcher counts as new access unless it
 * is proven covered by an old one (a glob by one old glob, symbolically; a
 * host by one old host or "*." pattern; a port range by the union of the old
 * ranges; an argv prefix by a shorter old prefix; an argument constraint by
 * the old constraint on that argument).  Coverage by a union of several old
 * globs or hosts is not attempted, so it may report access that the old
 * file did give in another way: a false alarm, never a missed widening.
 * Nothing here prints. */
#ifndef CD_POLICY_DIFF_H
#define CD_POLICY_DIFF_H

#include "util/match.h"
#include "policy.h"

#include <stddef.h>

/* One difference.  Every string is valid during the callback only. */
struct cd_diff_item {
	int widens;         /* 1: new access; 0: access removed, or a note */
	const char *kind;   /* "grant", "forbid" or "tool" */
	const char *id;     /* the rule or tool id */
	const char *change; /* "added", "removed", "covered", "agent", "task",
	                     * "tool", "actions", "paths", "hosts", "ports",
	                     * "argv", "args", "fields", "expires", "approval",
	                     * "profile", "profile-conflict", "kind",
	                     * "operations", "arguments" */
	const char *detail; /* one line, escaped for a terminal */
};
typedef void (*cd_diff_fn)(const struct cd_diff_item *item, void *ctx);

/* Compare two policies.  fn is called once per difference: tools first,
 * then rules, by id.  For a grant in both files every dimension in which
 * the new grant reaches beyond the old one is a widening, every dimension
 * in which the old one reached beyond the new one a narrowing; a changed or
 * added grant that one old grant already covers entirely is a note
 * ("covered"), not a widening.  A forbid rule removed or narrowed widens.
 * *ret_widen and *ret_narrow (either may be NULL) count the items.  0, or
 * -EINVAL for a NULL policy. */
int cd_policy_diff(const struct cd_policy *old_p, const struct cd_policy *new_p, cd_diff_fn fn,
                   void *ctx, size_t *ret_widen, size_t *ret_narrow);

/* The coverage proofs, exposed for tests.  Each returns 1 when every value
 * `inner` matches is proven to be matched by `outer`, else 0 ("not
 * proven"): for two valid path globs, two valid host patterns, two argument
 * constraints. */
int cd_glob_covers(const char *outer, const char *inner);
int cd_host_covers(const char *outer, const char *inner);
int cd_arg_rule_covers(const struct cd_arg_rule *outer, const struct cd_arg_rule *inner);

#endif
