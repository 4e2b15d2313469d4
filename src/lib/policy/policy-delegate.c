/* policy-delegate.c — may a parent agent hand a grant down to a sub-agent?
 * (cd_policy_delegation_check in policy.h).
 *
 * Trust boundary: the grant comes from the operator's command line and is
 * checked by the same loader as a written grant.  Coverage is proven one
 * action class at a time by one grant the parent holds, with the
 * symbolic proofs of policy-diff.c; anything not proven is refused.  The
 * decision engine asks the parent again at every use (policy-decide.c),
 * so this check is the early, explained refusal, not the only one. */
#include "policy-int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int approval_rank(const char *a)
{
	if (!a)
		return 0;
	return strcmp(a, "human") == 0 ? 2 : 1;
}

/* Does g (a rule the parent holds) cover action `act` of child? 1, or 0
 * with the first reason it does not in why. */
static int covers(const struct cd_rule *g, const struct cd_rule *child, const char *parent,
                  enum cd_action act, int64_t now, int64_t expires, char *why, size_t wn)
{
	if (g->forbid || strcmp(g->agent, parent) != 0 || strcmp(g->tool, child->tool) != 0)
		return 0;
	if (g->task && (!child->task || strcmp(g->task, child->task) != 0))
		return snprintf(why, wn, "grant '%s' is for task '%s' only", g->id, g->task), 0;
	if (!(g->actions & (1u << act)))
		return 0;
	if (now >= g->expires)
		return snprintf(why, wn, "grant '%s' has expired", g->id), 0;
	if (g->expires < expires)
		return snprintf(why, wn,
		                "grant '%s' ends before the delegation would (shorten --ttl)",
		                g->id),
		       0;
	if (!cd_rule_scope_covers(g, child))
		return snprintf(why, wn, "grant '%s' does not cover the whole scope", g->id), 0;
	return 1;
}

int cd_policy_delegation_check(struct cd_policy *p, const char *parent, const char *id,
                               const char *grant_json, int64_t now, int64_t expires,
                               const char **ret_approval, const char **ret_profile,
                               struct cd_err *err)
{
	struct cd_rule *child;
	const char *approval = NULL, *profile = NULL;
	int have_profile = 0;
	char why[256];
	unsigned a;
	size_t i, nfile;
	int r;

	if ((r = cd_policy_parse_temp(p, CD_TEMP_DELEGATED, id, parent, grant_json, &child, err)) <
	    0)
		return r;
	if (expires <= now)
		return cd_err_set(err, -CD_E_DENIED, "the delegation would already have ended");
	nfile = p->ngrants + p->nforbids;
	for (a = 0; a < CD_ACTION_COUNT; a++) {
		const struct cd_rule *best = NULL;
		if (!(child->actions & (1u << a)))
			continue;
		why[0] = '\0';
		/* The least strict covering grant, as a decision would pick. */
		for (i = 0; i < nfile + p->ntemps; i++) {
			const struct cd_rule *g = i < nfile ? p->by_id[i] : p->temps[i - nfile];
			if (!covers(g, child, parent, (enum cd_action)a, now, expires, why,
			            sizeof why))
				continue;
			if (!best || approval_rank(g->approval) < approval_rank(best->approval))
				best = g;
		}
		if (!best)
			return cd_err_set(
			        err, -CD_E_DENIED,
			        "'%s' holds no grant on tool '%s' covering action '%s' over "
			        "that scope%s%s: a parent cannot hand down what it was "
			        "never granted",
			        parent, child->tool, cd_action_name((enum cd_action)a),
			        why[0] ? "; " : "", why);
		if (approval_rank(best->approval) > approval_rank(approval))
			approval = best->approval;
		if (have_profile && (!profile != !best->profile ||
		                     (profile && strcmp(profile, best->profile) != 0)))
			return cd_err_set(err, -CD_E_DENIED,
			                  "the grants of '%s' covering these actions run under "
			                  "different profiles: delegate them separately",
			                  parent);
		profile = best->profile;
		have_profile = 1;
	}
	*ret_approval = approval;
	*ret_profile = profile;
	return 0;
}
