/* policy-load-temp.c — temporary grants (break-glass, delegated) added to
 * a loaded policy, and the lookups over its rules they use.
 *
 * Trust boundary: a temporary grant's YAML comes from the state database or
 * an operator; it is checked like a policy file's grant and may not widen
 * the grant it inherits from. */
#include "policy-load-int.h"

#include "util/util.h"

#include <sodium.h>

/* ---- temporary grants ---- */

int64_t cd_policy_break_glass_max_ttl(const struct cd_policy *p)
{
	return p ? p->break_glass_max_ttl : CD_BREAK_GLASS_DEFAULT_TTL;
}

const struct cd_rule *cd_policy_rule(const struct cd_policy *p, const char *id)
{
	size_t lo = 0, hi = p->ngrants + p->nforbids, i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(p->by_id[mid]->id, id);
		if (c == 0)
			return p->by_id[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = 0; i < p->ntemps; i++)
		if (strcmp(p->temps[i]->id, id) == 0)
			return p->temps[i];
	return NULL;
}

enum cd_temp_kind cd_policy_temp_kind(const struct cd_policy *p, const char *id)
{
	const struct cd_rule *g = p && id ? cd_policy_rule(p, id) : NULL;
	return g ? g->temp : 0;
}

int64_t cd_policy_temp_expires(const struct cd_policy *p, const char *id)
{
	const struct cd_rule *g = p && id ? cd_policy_rule(p, id) : NULL;
	return g && g->temp ? g->expires : 0;
}

int cd_policy_parse_temp(struct cd_policy *p, enum cd_temp_kind kind, const char *id,
                         const char *parent, const char *grant_json, struct cd_rule **ret,
                         struct cd_err *err)
{
	char name[128];
	struct cd_ynode *root;
	struct cd_rule *g;
	struct lctx c;
	int r;

	if (!p || !id || !grant_json ||
	    (kind != CD_TEMP_BREAK_GLASS && kind != CD_TEMP_DELEGATED) ||
	    (kind == CD_TEMP_DELEGATED && (!parent || !*parent)))
		return cd_err_set(err, -EINVAL, "temporary grant: bad arguments");
	snprintf(name, sizeof name, "%s grant '%.64s'",
	         kind == CD_TEMP_BREAK_GLASS ? "break-glass" : "delegated", id);
	c.p = p;
	c.name = name;
	c.err = err;
	c.examples_cap = 0;
	c.temp = kind;
	c.temp_parent = kind == CD_TEMP_DELEGATED ? parent : NULL;
	if (strlen(grant_json) > CD_POLICY_MAX_SCALAR * 16)
		return cd_err_set(err, -CD_E_LIMIT, "%s: too large", name);
	if ((r = cd_yaml_parse(&p->arena, name, grant_json, strlen(grant_json), &root, err)) < 0)
		return r;
	g = cd_arena_alloc(&p->arena, sizeof *g);
	if (!g)
		return cd_pl_oom(&c);
	memset(g, 0, sizeof *g);
	if ((r = cd_pl_load_rule(&c, root, p->tools_node, 0, g)) < 0)
		return r;
	if (strcmp(g->id, id) != 0)
		return cd_pl_lfail(&c, root, NULL, "id '%s' is not '%s'", g->id, id);
	if (cd_policy_rule(p, id))
		return cd_pl_lfail(&c, root, NULL, "id '%s' is already taken", id);
	g->temp = kind;
	g->parent = c.temp_parent ? cd_arena_strndup(&p->arena, parent, strlen(parent)) : NULL;
	if (c.temp_parent && !g->parent)
		return cd_pl_oom(&c);
	*ret = g;
	return 0;
}

/* A break-glass grant widens what an agent may touch, never how much of
 * the data it sees (an incident ticket is no data-protection review): it
 * carries the data minimization of every grant the file gives the same
 * agent on the same tool, whatever their scope, task, approval or expiry.
 * A type any of them masks is masked (the strictest action wins), a task
 * is required when any of them requires one, and a field none of them
 * keeps is cut (when each of them scopes fields, their lists together
 * become a second list the result must pass).  The policy in force
 * decides this at every use, as for the rest of the grant. */
static int break_glass_inherit(struct cd_policy *p, struct cd_rule *g)
{
	const struct cd_rule *const *v;
	size_t n = cd_policy_grants_of(p, g->agent, g->tool, &v), i, nf = 0, k = 0;
	int scoped = n > 0, same_profile = n > 0;

	/* The sandbox too: when every such grant names one profile, the
	 * break-glass grant runs under it (else it keeps its own, and a
	 * request matched with a grant of another profile is denied). */
	for (i = 0; i < n; i++)
		if (!v[0]->profile || !v[i]->profile || strcmp(v[i]->profile, v[0]->profile) != 0)
			same_profile = 0;
	if (!g->profile && same_profile)
		g->profile = v[0]->profile;
	for (i = 0; i < n; i++) {
		cd_mask_rules_merge(&g->mask, &v[i]->mask);
		if (v[i]->require_task && !g->task)
			g->require_task = 1;
		if (!v[i]->nkeep_fields)
			scoped = 0;
		else if (nf > SIZE_MAX / sizeof *g->inherited_fields - v[i]->nkeep_fields)
			return -ENOMEM;
		nf += v[i]->nkeep_fields;
	}
	if (!scoped)
		return 0;
	g->inherited_fields = cd_arena_alloc(&p->arena, nf * sizeof *g->inherited_fields);
	if (!g->inherited_fields)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		memcpy(g->inherited_fields + k, v[i]->keep_fields,
		       v[i]->nkeep_fields * sizeof *g->inherited_fields);
		k += v[i]->nkeep_fields;
	}
	g->ninherited_fields = nf;
	return 0;
}

int cd_policy_temp_drop(struct cd_policy *p, const char *id)
{
	size_t i;

	for (i = 0; p && i < p->ntemps; i++) {
		if (strcmp(p->temps[i]->id, id) != 0)
			continue;
		/* The order of the temporary grants carries no meaning (each
		 * decision sorts its ids); the rule stays in the arena. */
		p->temps[i] = p->temps[--p->ntemps];
		cd_policy_mask_union_update(p);
		return 0;
	}
	return -ENOENT;
}

int cd_policy_add_temp(struct cd_policy *p, enum cd_temp_kind kind, const char *id,
                       const char *parent, const char *grant_json, int64_t created,
                       struct cd_err *err)
{
	struct cd_rule *g;
	int r;

	if ((r = cd_policy_parse_temp(p, kind, id, parent, grant_json, &g, err)) < 0)
		return r;
	/* The policy in force caps a break-glass grant, whatever it was
	 * created with. */
	if (kind == CD_TEMP_BREAK_GLASS && created <= INT64_MAX - p->break_glass_max_ttl &&
	    g->expires > created + p->break_glass_max_ttl)
		g->expires = created + p->break_glass_max_ttl;
	if (kind == CD_TEMP_BREAK_GLASS && break_glass_inherit(p, g) < 0)
		return cd_err_set(err, -ENOMEM, "out of memory");
	if (p->ntemps == p->temps_cap) {
		size_t cap = p->temps_cap ? 2 * p->temps_cap : 8;
		const struct cd_rule **v = realloc(p->temps, cap * sizeof *v);
		if (!v)
			return cd_err_set(err, -ENOMEM, "out of memory");
		p->temps = v;
		p->temps_cap = cap;
	}
	p->temps[p->ntemps++] = g;
	cd_mask_rules_merge(&p->mask_union, &g->mask);
	return 0;
}
