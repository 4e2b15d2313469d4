/* policy-load-rules.c — the grants and forbid rules of a policy being
 * loaded (policy-load.c): scope (paths, hosts, ports, argv, arguments),
 * actions, approvers, masking and minimizing, sub-agents.
 *
 * Trust boundary: the same as policy-load.c's: every reference resolves,
 * every id is unique, every host and glob is in its one canonical spelling,
 * or nothing is loaded. */
#include "policy-load-int.h"

#include "match-host.h"
#include "util/num.h"
#include "util/util.h"

#include <sodium.h>

/* ---- scope ---- */

static int host_hint(const char *h, char *hint, size_t n)
{
	char norm[CD_HOST_MAX];
	const char *base = h;
	size_t i;
	int w;

	for (i = 0; h[i]; i++) {
		if ((unsigned char)h[i] >= 0x80) {
			w = snprintf(hint, n,
			             "a Unicode name must be IDNA2008 U-labels in lower case and "
			             "NFC, or their xn-- A-labels");
			return w < 0 ? -1 : 0;
		}
	}
	if (h[0] == '*' && h[1] == '.')
		base = h + 2;
	if (strchr(base, '*')) {
		w = snprintf(hint, n, "only a leading '*.' is a wildcard");
		return w < 0 ? -1 : 0;
	}
	if (base != h && (base[0] == '[' || strspn(base, "0123456789.") == strlen(base))) {
		w = snprintf(hint, n, "a wildcard covers names, not addresses");
		return w < 0 ? -1 : 0;
	}
	if (base != h && !strchr(base, '.')) {
		w = snprintf(hint, n, "a wildcard needs a name of two labels or more, e.g. '*.%s'",
		             "example.com");
		return w < 0 ? -1 : 0;
	}
	if (cd_host_normalize(base, strlen(base), norm, sizeof norm) >= 0) {
		w = snprintf(hint, n, "write '%s%s'", base == h ? "" : "*.", norm);
		return w < 0 ? -1 : 0;
	}
	w = snprintf(hint, n, "lower case, no trailing dot, IDNA A-labels");
	return w < 0 ? -1 : 0;
}

static int load_args(struct lctx *c, struct cd_rule *g, const struct cd_ynode *map)
{
	static const struct keyspec spec[] = { { "eq", 0 }, { "prefix", 0 }, { "enum", 0 }, { 0 } };
	const struct cd_ynode *k, *op;
	size_t i = 0;
	int r = cd_pl_expect(c, map, CD_Y_MAP, "scope.args");

	if (r < 0)
		return r;
	if (map->n == 0)
		return cd_pl_lfail(c, map, NULL, "scope.args is empty");
	g->args = cd_arena_alloc(&c->p->arena, (map->n / 2) * sizeof *g->args);
	if (!g->args)
		return cd_pl_oom(c);
	for (k = map->child; k; k = k->next->next, i++) {
		struct cd_arg_rule *a = &g->args[i];
		const char *name;
		if ((r = cd_pl_get_id(c, k, "argument name", &name)) < 0)
			return r;
		a->name = (char *)name;
		if ((r = cd_pl_expect(c, k->next, CD_Y_MAP, "an argument constraint")) < 0 ||
		    (r = cd_pl_check_keys(c, k->next, spec, "an argument constraint")) < 0)
			return r;
		if (k->next->n != 2)
			return cd_pl_lfail(c, k->next, "eq: V, prefix: V or enum: [V, ...]",
			                   "argument '%s' needs exactly one of eq, prefix, enum",
			                   name);
		op = k->next->child;
		if (!strcmp(op->s, "enum")) {
			const char **vals;
			a->op = CD_ARG_ENUM;
			if ((r = cd_pl_get_str_list(c, op->next, "enum", &vals, &a->nvalues)) < 0)
				return r;
			a->values = (char **)vals;
		} else {
			a->op = strcmp(op->s, "eq") ? CD_ARG_PREFIX : CD_ARG_EQ;
			if ((r = cd_pl_expect(c, op->next, CD_Y_SCALAR, op->s)) < 0)
				return r;
			if (a->op == CD_ARG_PREFIX && op->next->len == 0)
				return cd_pl_lfail(c, op->next,
				                   "drop the constraint or name a prefix",
				                   "an empty prefix matches everything");
			a->values = cd_arena_alloc(&c->p->arena, sizeof *a->values);
			if (!a->values)
				return cd_pl_oom(c);
			a->values[0] = (char *)op->next->s;
			a->nvalues = 1;
		}
	}
	g->nargs = i;
	return 0;
}

static int load_scope(struct lctx *c, struct cd_rule *g, const struct cd_ynode *scope)
{
	static const struct keyspec spec[] = { { "paths", 0 }, { "hosts", 0 }, { "ports", 0 },
		                               { "argv", 0 },  { "args", 0 },  { "fields", 0 },
		                               { NULL, 0 } };
	const struct cd_ynode *v, *it;
	const char *why;
	char hint[200];
	size_t i;
	int r = cd_pl_expect(c, scope, CD_Y_MAP, "scope");

	if (r < 0)
		return r;
	if (scope->n == 0)
		return cd_pl_lfail(c, scope, "name paths, hosts, ports, argv, args or fields",
		                   "empty scope");
	if ((r = cd_pl_check_keys(c, scope, spec, "scope")) < 0)
		return r;
	g->has_scope = 1;
	if ((v = cd_pl_map_get(scope, "paths"))) {
		if ((r = cd_pl_get_str_list(c, v, "scope.paths", &g->paths, &g->npaths)) < 0)
			return r;
		for (it = v->child, i = 0; it; it = it->next, i++) {
			why = "invalid";
			if (cd_glob_valid(it->s, &why) < 0)
				return cd_pl_lfail(c, it, why, "bad path glob '%s'", it->s);
		}
	}
	if ((v = cd_pl_map_get(scope, "hosts"))) {
		if ((r = cd_pl_get_str_list(c, v, "scope.hosts", &g->hosts, &g->nhosts)) < 0)
			return r;
		for (it = v->child; it; it = it->next) {
			r = cd_host_pattern_valid(it->s);
			if (r == -CD_E_DENIED)
				return cd_pl_lfail(
				        c, it, "name a registrable domain, e.g. '*.example.co.uk'",
				        "wildcard '%s' covers a public suffix", it->s);
			if (r < 0) {
				if (host_hint(it->s, hint, sizeof hint) < 0)
					hint[0] = '\0';
				return cd_pl_lfail(c, it, hint[0] ? hint : NULL,
				                   "host '%s' is not normalized", it->s);
			}
		}
	}
	if ((v = cd_pl_map_get(scope, "ports"))) {
		if ((r = cd_pl_expect(c, v, CD_Y_SEQ, "scope.ports")) < 0)
			return r;
		if (v->n == 0 || v->n > CD_POLICY_MAX_LIST)
			return cd_pl_lfail(c, v, NULL, "scope.ports must list 1 to %d ports",
			                   CD_POLICY_MAX_LIST);
		g->ports = cd_arena_alloc(&c->p->arena, v->n * sizeof *g->ports);
		if (!g->ports)
			return cd_pl_oom(c);
		for (it = v->child, i = 0; it; it = it->next, i++) {
			if (it->type != CD_Y_SCALAR || !it->plain ||
			    cd_port_range_parse(it->s, it->len, &g->ports[i]) < 0)
				return cd_pl_lfail(
				        c, it, "a port 1..65535 or a range like 8000-8080",
				        "bad port '%s'", it->type == CD_Y_SCALAR ? it->s : "");
		}
		g->nports = i;
	}
	if ((v = cd_pl_map_get(scope, "argv"))) {
		if ((r = cd_pl_get_str_list(c, v, "scope.argv", &g->argv, &g->nargv)) < 0)
			return r;
	}
	if ((v = cd_pl_map_get(scope, "args")) && (r = load_args(c, g, v)) < 0)
		return r;
	if ((v = cd_pl_map_get(scope, "fields"))) {
		if ((r = cd_pl_get_str_list(c, v, "scope.fields", &g->fields, &g->nfields)) < 0)
			return r;
	}
	return 0;
}

/* ---- grants and forbid rules ---- */

static int load_actions(struct lctx *c, const struct cd_ynode *v, unsigned *ret)
{
	const struct cd_ynode *it;
	enum cd_action a;
	unsigned mask = 0;
	int r = cd_pl_expect(c, v, CD_Y_SEQ, "actions");

	if (r < 0)
		return r;
	if (v->n == 0)
		return cd_pl_lfail(c, v, "read, create, update, delete, execute, network",
		                   "actions is an empty list");
	for (it = v->child; it; it = it->next) {
		if (it->type != CD_Y_SCALAR || cd_action_parse(it->s, &a) < 0)
			return cd_pl_lfail(
			        c, it, "read, create, update, delete, execute or network",
			        "unknown action class '%s'", it->type == CD_Y_SCALAR ? it->s : "");
		if (mask & (1u << a))
			return cd_pl_lfail(c, it, NULL, "action '%s' listed twice", it->s);
		mask |= 1u << a;
	}
	*ret = mask;
	return 0;
}

static int ref_check(struct lctx *c, const struct cd_ynode *n, const char *what,
                     const struct cd_named *v, size_t nv, const char *id)
{
	if (cd_pl_find_named(v, nv, id))
		return 0;
	return cd_pl_lfail(c, n, NULL, "unknown %s '%s' (declare it under %ss)", what, id, what);
}

/* A plain decimal number ("100", "12.50"): what `below` compares. */
static int decimal_ok(const char *s)
{
	size_t i = 0, digits = 0;

	while (s[i] >= '0' && s[i] <= '9')
		i++, digits++;
	if (!digits || digits > 18)
		return 0;
	if (s[i] == '.') {
		size_t f = ++i;
		while (s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == f || i - f > 9)
			return 0;
	}
	return s[i] == '\0';
}

int cd_decimal_valid(const char *s)
{
	return decimal_ok(s);
}

static int get_count(struct lctx *c, const struct cd_ynode *n, const char *what, long *ret)
{
	uint64_t v;

	if (n->type != CD_Y_SCALAR || !n->plain || cd_parse_u64(n->s, n->len, 1000000, &v) < 0)
		return cd_pl_lfail(c, n, "a whole number from 0 to 1000000", "bad %s", what);
	*ret = (long)v;
	return 0;
}

static const struct cd_approver_rule *find_arule(const struct cd_policy *p, const char *id)
{
	size_t i;

	for (i = 0; i < p->narules; i++)
		if (!strcmp(p->arules[i].id, id))
			return &p->arules[i];
	return NULL;
}

/* approvers.keys: {PERSON: "ed25519:BASE64"}; approvers.consoles:
 * ["ed25519:BASE64"].  A person with a key must be a listed approver (when
 * people lists anyone) and never an agent. */
static int load_approver_keys(struct lctx *c, const struct cd_ynode *m)
{
	struct cd_policy *p = c->p;
	const struct cd_ynode *v, *k;
	size_t i;
	int r;

	if ((v = cd_pl_map_get(m, "keys"))) {
		if ((r = cd_pl_expect(c, v, CD_Y_MAP, "approvers.keys")) < 0)
			return r;
		if (!(p->akeys = cd_arena_alloc(&p->arena, (v->n + 1) * sizeof *p->akeys)))
			return cd_pl_oom(c);
		for (k = v->child; k && k->next; k = k->next->next) {
			struct cd_approver_pk *a = &p->akeys[p->nakeys];
			if ((r = cd_pl_get_id(c, k, "approver", &a->person)) < 0 ||
			    (r = cd_pl_get_str(c, k->next, "approvers.keys", &a->text)) < 0)
				return r;
			if (cd_policy_parse_pubkey(a->text, a->pk) < 0)
				return cd_pl_lfail(c, k->next, "cordon approvals keygen prints one",
				                   "approver '%s': not an Ed25519 public key "
				                   "(want ed25519:BASE64)",
				                   a->person);
			if (cd_pl_find_named(p->agents, p->nagents, a->person))
				return cd_pl_lfail(c, k, "agents never approve",
				                   "approver '%s' is an agent of the policy",
				                   a->person);
			for (i = 0; i < p->npeople && strcmp(p->people[i], a->person); i++)
				;
			if (p->npeople && i == p->npeople)
				return cd_pl_lfail(c, k, "list them under approvers.people",
				                   "'%s' has a key but is not an approver",
				                   a->person);
			for (i = 0; i < p->nakeys; i++)
				if (!strcmp(p->akeys[i].person, a->person))
					return cd_pl_lfail(c, k, NULL, "approver '%s' has two keys",
					                   a->person);
			p->nakeys++;
		}
	}
	if (!(v = cd_pl_map_get(m, "consoles")))
		return 0;
	if ((r = cd_pl_expect(c, v, CD_Y_SEQ, "approvers.consoles")) < 0)
		return r;
	if (!(p->consoles = cd_arena_alloc(&p->arena, (v->n + 1) * sizeof *p->consoles)))
		return cd_pl_oom(c);
	for (k = v->child; k; k = k->next) {
		struct cd_approver_pk *a = &p->consoles[p->nconsoles];
		if ((r = cd_pl_get_str(c, k, "approvers.consoles", &a->text)) < 0)
			return r;
		if (cd_policy_parse_pubkey(a->text, a->pk) < 0)
			return cd_pl_lfail(c, k, "cordon serve --sign-key prints one",
			                   "not an Ed25519 public key (want ed25519:BASE64)");
		p->nconsoles++;
	}
	return 0;
}

/* approvers: {people: [ID...], keys: {ID: KEY}, consoles: [KEY], rules:
 * [{id, description?, scope?, operands?, max_paths?, below?}]}. */
int cd_pl_load_approvers(struct lctx *c, const struct cd_ynode *m)
{
	static const struct keyspec spec[] = {
		{ "people", 0 }, { "keys", 0 }, { "consoles", 0 }, { "rules", 0 }, { NULL, 0 }
	};
	static const struct keyspec rspec[] = { { "id", 1 },        { "description", 0 },
		                                { "scope", 0 },     { "operands", 0 },
		                                { "max_paths", 0 }, { "below", 0 },
		                                { NULL, 0 } };
	static const struct keyspec ospec[] = { { "paths", 1 }, { "max", 0 }, { NULL, 0 } };
	struct cd_policy *p = c->p;
	const struct cd_ynode *v, *it, *k;
	size_t i, j;
	int r;

	if ((r = cd_pl_expect(c, m, CD_Y_MAP, "approvers")) < 0 ||
	    (r = cd_pl_check_keys(c, m, spec, "approvers")) < 0)
		return r;
	if ((v = cd_pl_map_get(m, "people"))) {
		if ((r = cd_pl_get_str_list(c, v, "approvers.people", &p->people, &p->npeople)) < 0)
			return r;
		for (it = v->child; it; it = it->next) {
			const char *id;
			if ((r = cd_pl_get_id(c, it, "approver", &id)) < 0)
				return r;
			if (cd_pl_find_named(p->agents, p->nagents, id))
				return cd_pl_lfail(c, it, "agents never approve",
				                   "approver '%s' is an agent of the policy", id);
		}
	}
	if ((r = load_approver_keys(c, m)) < 0)
		return r;
	if (!(v = cd_pl_map_get(m, "rules")))
		return 0;
	if ((r = cd_pl_expect(c, v, CD_Y_SEQ, "approvers.rules")) < 0)
		return r;
	p->arules = cd_arena_alloc(&p->arena, (v->n + 1) * sizeof *p->arules);
	if (!p->arules)
		return cd_pl_oom(c);
	for (it = v->child, i = 0; it; it = it->next, i++) {
		struct cd_approver_rule *a = &p->arules[i];
		const struct cd_ynode *o;
		memset(a, 0, sizeof *a);
		a->max_operands = a->max_paths = -1;
		a->mark = it->mark;
		if ((r = cd_pl_expect(c, it, CD_Y_MAP, "an approver rule")) < 0 ||
		    (r = cd_pl_check_keys(c, it, rspec, "an approver rule")) < 0 ||
		    (r = cd_pl_get_id(c, cd_pl_map_get(it, "id"), "id", &a->id)) < 0)
			return r;
		for (j = 0; j < i; j++)
			if (!strcmp(p->arules[j].id, a->id))
				return cd_pl_lfail(c, cd_pl_map_get(it, "id"), NULL,
				                   "duplicate approver rule '%s'", a->id);
		if ((o = cd_pl_map_get(it, "scope")) && (r = load_scope(c, &a->scope, o)) < 0)
			return r;
		if ((o = cd_pl_map_get(it, "operands"))) {
			const struct cd_ynode *w;
			if ((r = cd_pl_expect(c, o, CD_Y_MAP, "operands")) < 0 ||
			    (r = cd_pl_check_keys(c, o, ospec, "operands")) < 0 ||
			    (r = cd_pl_get_str_list(c, cd_pl_map_get(o, "paths"), "operands.paths",
			                            &a->operand_globs, &a->noperand_globs)) < 0)
				return r;
			for (w = cd_pl_map_get(o, "paths")->child; w; w = w->next) {
				const char *why = "invalid";
				if (cd_glob_valid(w->s, &why) < 0)
					return cd_pl_lfail(c, w, why, "bad path glob '%s'", w->s);
			}
			if ((w = cd_pl_map_get(o, "max")) &&
			    (r = get_count(c, w, "operands.max", &a->max_operands)) < 0)
				return r;
		}
		if ((o = cd_pl_map_get(it, "max_paths")) &&
		    (r = get_count(c, o, "max_paths", &a->max_paths)) < 0)
			return r;
		if ((o = cd_pl_map_get(it, "below"))) {
			if ((r = cd_pl_expect(c, o, CD_Y_MAP, "below")) < 0)
				return r;
			if (o->n == 0)
				return cd_pl_lfail(c, o, NULL, "below is empty");
			a->below_names = cd_arena_alloc(&p->arena, o->n / 2 * sizeof(char *));
			a->below_values = cd_arena_alloc(&p->arena, o->n / 2 * sizeof(char *));
			if (!a->below_names || !a->below_values)
				return cd_pl_oom(c);
			for (k = o->child; k; k = k->next->next, a->nbelow++) {
				if ((r = cd_pl_get_id(c, k, "argument name",
				                      &a->below_names[a->nbelow])) < 0)
					return r;
				if (k->next->type != CD_Y_SCALAR || !decimal_ok(k->next->s))
					return cd_pl_lfail(c, k->next,
					                   "a decimal number such as 100 or 99.50",
					                   "bad limit for '%s'", k->s);
				a->below_values[a->nbelow] = k->next->s;
			}
		}
		if (!a->scope.has_scope && !a->noperand_globs && a->max_paths < 0 && !a->nbelow)
			return cd_pl_lfail(c, it, "give it a scope, operands, max_paths or below",
			                   "approver rule '%s' approves everything", a->id);
	}
	p->narules = i;
	return 0;
}

/* A delegated grant's agent: "PARENT/NAME", NAME one id segment, and not
 * an agent of the file (delegation creates sub-agents, it does not add to a
 * declared agent's grants). */
static int subagent_check(struct lctx *c, const struct cd_ynode *n, const char *agent)
{
	size_t pl = strlen(c->temp_parent), depth = 0;
	const char *s;

	if (strncmp(agent, c->temp_parent, pl) != 0 || agent[pl] != '/' || !agent[pl + 1] ||
	    strchr(agent + pl + 1, '/'))
		return cd_pl_lfail(c, n, "name it PARENT/NAME",
		                   "agent '%s' is not a sub-agent of '%s'", agent, c->temp_parent);
	if (cd_pl_find_named(c->p->agents, c->p->nagents, agent))
		return cd_pl_lfail(c, n, "delegate to a new sub-agent name",
		                   "agent '%s' is declared in the policy", agent);
	for (s = agent; (s = strchr(s, '/')); s++)
		depth++;
	if (depth > CD_DELEGATION_MAX_DEPTH)
		return cd_pl_lfail(c, n, NULL, "agent '%s' is more than %d delegations deep", agent,
		                   CD_DELEGATION_MAX_DEPTH);
	return 0;
}

/* mask: [TYPE, ...] (each redacted) or {TYPE: ACTION, ...}. */
static int load_mask(struct lctx *c, const struct cd_ynode *v, struct cd_mask_rules *ret)
{
	static const char types_hint[] = "email, phone, card, iban, ssn, ipv4, ipv6 or secret";
	const struct cd_ynode *it;
	enum cd_scan_type t;
	enum cd_mask_action a;

	if (v->type != CD_Y_SEQ && v->type != CD_Y_MAP)
		return cd_pl_lfail(
		        c, v, "mask: [email, card] or mask: {email: pseudonymize}",
		        "mask must be a list of data types or a mapping of type to action");
	if (v->n == 0)
		return cd_pl_lfail(c, v, "drop mask: or name a data type", "mask is empty");
	for (it = v->child; it; it = v->type == CD_Y_MAP ? it->next->next : it->next) {
		if (it->type != CD_Y_SCALAR || cd_scan_type_parse(it->s, &t) < 0)
			return cd_pl_lfail(c, it, types_hint, "unknown data type '%s' in mask",
			                   it->type == CD_Y_SCALAR ? it->s : "");
		a = CD_MASK_REDACT;
		if (v->type == CD_Y_MAP) {
			const struct cd_ynode *av = it->next;
			if (av->type != CD_Y_SCALAR || cd_mask_action_parse(av->s, &a) < 0 ||
			    a == CD_MASK_NONE)
				return cd_pl_lfail(c, av, "redact, pseudonymize or drop",
				                   "unknown mask action '%s' for '%s'",
				                   av->type == CD_Y_SCALAR ? av->s : "", it->s);
		}
		if (ret->action[t] != CD_MASK_NONE)
			return cd_pl_lfail(c, it, NULL, "data type '%s' is named twice in mask",
			                   it->s);
		ret->action[t] = (unsigned char)a;
	}
	return 0;
}

/* A field path: dot-separated names, none empty. */
static int field_path_valid(const char *s)
{
	size_t i, seg = 0;

	for (i = 0; s[i]; i++) {
		if (s[i] == '.') {
			if (!seg)
				return 0;
			seg = 0;
		} else if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			return 0;
		} else {
			seg++;
		}
	}
	return seg > 0;
}

/* mask:, fields: and require_task: of a grant. */
static int load_minimize(struct lctx *c, const struct cd_ynode *m, struct cd_rule *g)
{
	const struct cd_ynode *v, *it;
	int r;

	if ((v = cd_pl_map_get(m, "mask")) && (r = load_mask(c, v, &g->mask)) < 0)
		return r;
	if ((v = cd_pl_map_get(m, "fields"))) {
		if ((r = cd_pl_get_str_list(c, v, "fields", &g->keep_fields, &g->nkeep_fields)) < 0)
			return r;
		for (it = v->child; it; it = it->next)
			if (!field_path_valid(it->s))
				return cd_pl_lfail(c, it, "dotted names like customer.email",
				                   "bad field path '%s'", it->s);
	}
	if ((v = cd_pl_map_get(m, "require_task"))) {
		if (v->type != CD_Y_SCALAR || !v->plain ||
		    (strcmp(v->s, "true") && strcmp(v->s, "false")))
			return cd_pl_lfail(c, v, "true or false", "require_task must be a boolean");
		g->require_task = !strcmp(v->s, "true");
		if (g->require_task && g->task)
			return cd_pl_lfail(c, v, "drop one of them",
			                   "grant '%s' names a task; require_task adds nothing",
			                   g->id);
	}
	return 0;
}

/* approval: none, human or policy:NAME (a rule under approvers.rules). */
static int load_approval(struct lctx *c, const struct cd_ynode *v, struct cd_rule *g)
{
	const char *a;
	int r;

	if ((r = cd_pl_get_str(c, v, "approval", &a)) < 0)
		return r;
	if (!strcmp(a, "human"))
		g->approval = a;
	else if (!strncmp(a, "policy:", 7) && a[7] && find_arule(c->p, a + 7))
		g->approval = a;
	else if (!strncmp(a, "policy:", 7) && a[7])
		return cd_pl_lfail(c, v, "declare it under approvers.rules",
		                   "unknown approver rule '%s'", a + 7);
	else if (strcmp(a, "none"))
		return cd_pl_lfail(c, v, "none, human or policy:NAME", "unknown approval '%s'", a);
	return 0;
}

int cd_pl_load_rule(struct lctx *c, const struct cd_ynode *m, const struct cd_ynode *tools,
                    int forbid, struct cd_rule *g)
{
	static const struct keyspec gspec[] = {
		{ "id", 1 },        { "agent", 1 },
		{ "task", 0 },      { "tool", 1 },
		{ "actions", 1 },   { "scope", 0 },
		{ "profile", 0 },   { "approval", 0 },
		{ "owner", 1 },     { "justification", 1 },
		{ "review_by", 1 }, { "expires", 1 },
		{ "examples", 0 },  { "mask", 0 },
		{ "fields", 0 },    { "require_task", 0 },
		{ NULL, 0 },
	};
	static const struct keyspec fspec[] = {
		{ "id", 1 },    { "agent", 0 },  { "task", 0 },  { "tool", 0 }, { "actions", 0 },
		{ "scope", 0 }, { "reason", 1 }, { "owner", 0 }, { NULL, 0 },
	};
	const char *what = forbid ? "a forbid rule" : "a grant";
	const struct cd_ynode *v;
	const struct cd_named *tool = NULL;
	int r;

	if ((r = cd_pl_expect(c, m, CD_Y_MAP, what)) < 0 ||
	    (r = cd_pl_check_keys(c, m, forbid ? fspec : gspec, what)) < 0)
		return r;
	g->forbid = forbid;
	g->mark = m->mark;
	g->review_by = g->expires = CD_TIME_NEVER;
	g->actions = (1u << CD_ACTION_COUNT) - 1;
	g->agent = g->tool = "*";
	if ((r = cd_pl_get_id(c, cd_pl_map_get(m, "id"), "id", &g->id)) < 0)
		return r;
	if (c->temp && (v = cd_pl_map_get(m, "examples")))
		return cd_pl_lfail(c, v, NULL, "a temporary grant has no examples");
	if ((v = cd_pl_map_get(m, "agent"))) {
		if (forbid && v->type == CD_Y_SCALAR && !strcmp(v->s, "*"))
			g->agent = "*";
		else if ((r = cd_pl_get_id(c, v, "agent", &g->agent)) < 0)
			return r;
		else if (c->temp == CD_TEMP_DELEGATED)
			r = subagent_check(c, v, g->agent);
		else
			r = ref_check(c, v, "agent", c->p->agents, c->p->nagents, g->agent);
		if (r < 0)
			return r;
	}
	if ((v = cd_pl_map_get(m, "task"))) {
		if ((r = cd_pl_get_id(c, v, "task", &g->task)) < 0 ||
		    (r = ref_check(c, v, "task", c->p->tasks, c->p->ntasks, g->task)) < 0)
			return r;
	}
	if ((v = cd_pl_map_get(m, "tool"))) {
		if (forbid && v->type == CD_Y_SCALAR && !strcmp(v->s, "*"))
			g->tool = "*";
		else if ((r = cd_pl_get_id(c, v, "tool", &g->tool)) < 0 ||
		         (r = ref_check(c, v, "tool", c->p->tools, c->p->ntools, g->tool)) < 0)
			return r;
		tool = cd_pl_find_named(c->p->tools, c->p->ntools, g->tool);
	}
	if ((v = cd_pl_map_get(m, "actions")) && (r = load_actions(c, v, &g->actions)) < 0)
		return r;
	if ((v = cd_pl_map_get(m, "scope")) && (r = load_scope(c, g, v)) < 0)
		return r;
	if ((v = cd_pl_map_get(m, "owner")) && (r = cd_pl_get_str(c, v, "owner", &g->owner)) < 0)
		return r;
	if (forbid)
		return cd_pl_get_str(c, cd_pl_map_get(m, "reason"), "reason", &g->reason);

	if ((r = cd_pl_get_str(c, cd_pl_map_get(m, "justification"), "justification",
	                       &g->justification)) < 0 ||
	    (r = cd_pl_get_time(c, cd_pl_map_get(m, "review_by"), "review_by", &g->review_by)) <
	            0 ||
	    (r = cd_pl_get_time(c, cd_pl_map_get(m, "expires"), "expires", &g->expires)) < 0)
		return r;
	g->expires_mark = cd_pl_map_get(m, "expires")->mark;
	if ((v = cd_pl_map_get(m, "profile"))) {
		if ((r = cd_pl_get_id(c, v, "profile", &g->profile)) < 0)
			return r;
		if (!cd_pl_find_profile(c->p, g->profile))
			return cd_pl_lfail(c, v, NULL,
			                   "unknown profile '%s' (declare it under profiles)",
			                   g->profile);
	}
	if ((v = cd_pl_map_get(m, "approval")) && (r = load_approval(c, v, g)) < 0)
		return r;
	if ((r = load_minimize(c, m, g)) < 0)
		return r;
	if ((g->actions & (1u << CD_ACTION_DELETE)) && !g->approval)
		return cd_pl_lfail(c, cd_pl_map_get(m, "actions"), "set approval: human",
		                   "grant '%s' allows delete without approval", g->id);
	/* A grant covers the scoped attributes its tool carries, or it would
	 * grant all of them. */
	if (tool && tool->kind && !strcmp(tool->kind, "command") && !g->nargv)
		return cd_pl_lfail(c, m, "add scope.argv, e.g. argv: [git, status]",
		                   "grant '%s' on command tool '%s' has no argv scope", g->id,
		                   g->tool);
	/* A grant with argv on an MCP server's tool is its launch grant
	 * (`cordon mcp` starts the server as a decided run): calls never carry
	 * argv, so it covers no call and needs no path or host scope. */
	if (tool && tool->kind && !strcmp(tool->kind, "mcp") && g->nargv)
		return 0;
	if (tool && cd_pl_tool_has_arg_kind(tools, g->tool, "path") && !g->npaths)
		return cd_pl_lfail(c, m, "add scope.paths",
		                   "grant '%s' on tool '%s' has no path scope", g->id, g->tool);
	if (tool && cd_pl_tool_has_arg_kind(tools, g->tool, "host") && !g->nhosts)
		return cd_pl_lfail(c, m, "add scope.hosts",
		                   "grant '%s' on tool '%s' has no host scope", g->id, g->tool);
	if (!g->has_scope && tool && tool->kind && strcmp(tool->kind, "command") == 0)
		return cd_pl_lfail(c, m, "add a scope", "grant '%s' has no scope", g->id);
	return 0;
}

static int cmp_rule_id(const void *a, const void *b)
{
	const struct cd_rule *x = *(const struct cd_rule *const *)a;
	const struct cd_rule *y = *(const struct cd_rule *const *)b;
	return strcmp(x->id, y->id);
}

int cd_pl_load_rules(struct lctx *c, const struct cd_ynode *grants, const struct cd_ynode *forbid,
                     const struct cd_ynode *tools)
{
	struct cd_policy *p = c->p;
	const struct cd_ynode *it;
	size_t ng = grants ? grants->n : 0, nf = forbid ? forbid->n : 0, i = 0;
	int r;

	if (grants && (r = cd_pl_expect(c, grants, CD_Y_SEQ, "grants")) < 0)
		return r;
	if (forbid && (r = cd_pl_expect(c, forbid, CD_Y_SEQ, "forbid")) < 0)
		return r;
	if (ng + nf > CD_POLICY_MAX_GRANTS)
		return cd_err_set(c->err, -CD_E_LIMIT, "%s: more than %d grants and forbid rules",
		                  c->name, CD_POLICY_MAX_GRANTS);
	p->rules = cd_arena_alloc(&p->arena, (ng + nf + 1) * sizeof *p->rules);
	p->by_id = cd_arena_alloc(&p->arena, (ng + nf + 1) * sizeof *p->by_id);
	if (!p->rules || !p->by_id)
		return cd_pl_oom(c);
	for (it = grants ? grants->child : NULL; it; it = it->next, i++)
		if ((r = cd_pl_load_rule(c, it, tools, 0, &p->rules[i])) < 0)
			return r;
	p->ngrants = i;
	for (it = forbid ? forbid->child : NULL; it; it = it->next, i++)
		if ((r = cd_pl_load_rule(c, it, tools, 1, &p->rules[i])) < 0)
			return r;
	p->nforbids = i - p->ngrants;
	for (i = 0; i < ng + nf; i++)
		p->by_id[i] = &p->rules[i];
	qsort(p->by_id, ng + nf, sizeof *p->by_id, cmp_rule_id);
	for (i = 1; i < ng + nf; i++) {
		if (strcmp(p->by_id[i - 1]->id, p->by_id[i]->id) == 0) {
			const struct cd_rule *a = p->by_id[i - 1], *b = p->by_id[i];
			const struct cd_rule *later = b->mark.line > a->mark.line ? b : a;
			const struct cd_rule *first = later == b ? a : b;
			struct cd_ynode fake = { .mark = later->mark };
			return cd_pl_lfail(c, &fake, NULL,
			                   "duplicate rule id '%s' (first at line %u)", later->id,
			                   first->mark.line);
		}
	}
	/* Examples after every rule exists. */
	i = 0;
	for (it = grants ? grants->child : NULL; it; it = it->next, i++) {
		const struct cd_ynode *ex = cd_pl_map_get(it, "examples");
		if (ex && (r = cd_pl_load_examples(c, ex, &p->rules[i])) < 0)
			return r;
	}
	return 0;
}
