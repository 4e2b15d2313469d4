/* policy-decide.c — the decision: one request against the grant matrix.
 *
 * Trust boundary: the request is hostile.  Paths are canonicalized and
 * hosts normalized once, up front; a request that cannot be (a ".." above
 * "/", an odd host) is a deny.  Rules are found through an index on
 * (agent, tool), so the cost of a decision depends on the grants of that
 * pair, not on the size of the matrix.  Forbid rules are consulted first
 * and always; the outcome never depends on the order of the file. */
#include "policy-decide-int.h"

#include "util/bounds.h"
#include "util/buf.h"
#include "util/clock-time.h"
#include "match-host.h"
#include "util/num.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const action_names[CD_ACTION_COUNT] = {
	"read", "create", "update", "delete", "execute", "network",
};

const char *cd_action_name(enum cd_action a)
{
	if ((unsigned)a >= CD_ACTION_COUNT)
		return "?";
	return action_names[a];
}

int cd_action_parse(const char *s, enum cd_action *ret)
{
	unsigned i;

	if (!s)
		return -EINVAL;
	for (i = 0; i < CD_ACTION_COUNT; i++) {
		if (strcmp(s, action_names[i]) == 0) {
			*ret = (enum cd_action)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *cd_verdict_name(enum cd_verdict v)
{
	switch (v) {
	case CD_VERDICT_ALLOW:
		return "allow";
	case CD_VERDICT_NEEDS_APPROVAL:
		return "needs-approval";
	case CD_VERDICT_DENY:
		break;
	}
	return "deny";
}

void cd_request_init(struct cd_request *req)
{
	memset(req, 0, sizeof *req);
	req->port = -1;
}

int cd_policy_parse_time(const char *s, size_t len, int64_t *ret)
{
	int64_t ns;

	if (!ret || cd_time_parse(s, len, &ns) < 0)
		return -EINVAL;
	*ret = ns / 1000000000;
	return 0;
}

/* ---- one rule against one request ---- */

/* The request with its attributes in canonical form. */
struct creq {
	const struct cd_request *r;
	char **paths;
	char host[CD_HOST_MAX];
	int has_host;
	int check_expiry;
};

static void whyf(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void whyf(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (!why || n == 0)
		return;
	va_start(ap, fmt);
	w = vsnprintf(why, n, fmt, ap);
	va_end(ap);
	if (w < 0)
		why[0] = '\0';
}

static void expired_why(int64_t expires, int64_t now, char *why, size_t n)
{
	char e[32], t[32];

	cd_time_format(expires, e, sizeof e);
	cd_time_format(now, t, sizeof t);
	whyf(why, n, "expired (expires %s, now %s)", e, t);
}

static int any_glob(const struct cd_rule *g, const char *path)
{
	size_t i;
	for (i = 0; i < g->npaths; i++)
		if (cd_glob_match(g->paths[i], path))
			return 1;
	return 0;
}

static int any_host(const struct cd_rule *g, const char *host)
{
	size_t i;
	for (i = 0; i < g->nhosts; i++)
		if (cd_host_match(g->hosts[i], host))
			return 1;
	return 0;
}

static int in_list(const char *const *v, size_t n, const char *s)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

/* A grant's scope holds when every matcher it has is satisfied and every
 * attribute the request carries is covered by one of them. */
static int grant_scope(const struct cd_rule *g, const struct creq *q, char *why, size_t wn)
{
	const struct cd_request *r = q->r;
	size_t i, j;

	if (g->npaths && r->npaths == 0)
		return whyf(why, wn, "the request names no path"), 0;
	if (!g->npaths && r->npaths)
		return whyf(why, wn, "the grant has no path scope"), 0;
	for (i = 0; i < r->npaths; i++)
		if (!any_glob(g, q->paths[i]))
			return whyf(why, wn, "path '%s' is outside the grant's paths", q->paths[i]),
			       0;
	if (g->nhosts && !q->has_host)
		return whyf(why, wn, "the request names no host"), 0;
	if (!g->nhosts && q->has_host)
		return whyf(why, wn, "the grant has no host scope"), 0;
	if (q->has_host && !any_host(g, q->host))
		return whyf(why, wn, "host '%s' is outside the grant's hosts", q->host), 0;
	if (g->nports && r->port < 0)
		return whyf(why, wn, "the request names no port"), 0;
	if (!g->nports && r->port >= 0)
		return whyf(why, wn, "the grant has no port scope"), 0;
	if (r->port >= 0 && !cd_port_match(g->ports, g->nports, r->port))
		return whyf(why, wn, "port %ld is outside the grant's ports", r->port), 0;
	if (g->nargv && r->argc == 0)
		return whyf(why, wn, "the request has no argv"), 0;
	if (!g->nargv && r->argc)
		return whyf(why, wn, "the grant has no argv scope"), 0;
	if (r->argc && !cd_argv_prefix_match(g->argv, g->nargv, r->argv, r->argc))
		return whyf(why, wn, "argv does not start with the grant's %zu token(s)", g->nargv),
		       0;
	for (i = 0; i < g->nargs; i++) {
		int seen = 0;
		for (j = 0; j < r->nargs; j++) {
			if (strcmp(r->args[j].name, g->args[i].name) != 0)
				continue;
			seen = 1;
			if (!cd_arg_rule_match(&g->args[i], r->args[j].value))
				return whyf(why, wn, "argument '%s' does not satisfy the grant",
				            g->args[i].name),
				       0;
		}
		if (!seen)
			return whyf(why, wn, "the request has no argument '%s'", g->args[i].name),
			       0;
	}
	if (g->nfields && r->nfields == 0)
		return whyf(why, wn, "the request names no fields"), 0;
	if (!g->nfields && r->nfields)
		return whyf(why, wn, "the grant has no field scope"), 0;
	for (i = 0; i < r->nfields; i++)
		if (!in_list(g->fields, g->nfields, r->fields[i]))
			return whyf(why, wn, "field '%s' is outside the grant's fields",
			            r->fields[i]),
			       0;
	return 1;
}

/* A forbid rule's scope hits when each matcher it has is hit by some value
 * of the request: one forbidden path among many is enough. */
static int forbid_scope(const struct cd_rule *f, const struct creq *q, char *why, size_t wn)
{
	const struct cd_request *r = q->r;
	size_t i, j;
	int hit;

	if (f->npaths) {
		for (i = 0, hit = 0; i < r->npaths && !hit; i++)
			hit = any_glob(f, q->paths[i]);
		if (!hit)
			return whyf(why, wn, "no path of the request is in its paths"), 0;
	}
	if (f->nhosts && !(q->has_host && any_host(f, q->host)))
		return whyf(why, wn, "the host is not in its hosts"), 0;
	if (f->nports && !(r->port >= 0 && cd_port_match(f->ports, f->nports, r->port)))
		return whyf(why, wn, "the port is not in its ports"), 0;
	if (f->nargv && !cd_argv_prefix_match(f->argv, f->nargv, r->argv, r->argc))
		return whyf(why, wn, "argv does not start with its tokens"), 0;
	for (i = 0; i < f->nargs; i++) {
		for (j = 0, hit = 0; j < r->nargs && !hit; j++)
			hit = !strcmp(r->args[j].name, f->args[i].name) &&
			      cd_arg_rule_match(&f->args[i], r->args[j].value);
		if (!hit)
			return whyf(why, wn, "argument '%s' is not hit", f->args[i].name), 0;
	}
	if (f->nfields) {
		for (i = 0, hit = 0; i < r->nfields && !hit; i++)
			hit = in_list(f->fields, f->nfields, r->fields[i]);
		if (!hit)
			return whyf(why, wn, "no field of the request is in its fields"), 0;
	}
	return 1;
}

/* A rule's agent admits the request's: the same id, "*" in a forbid rule,
 * or — for a forbid rule — any sub-agent "AGENT/..." of it. */
static int agent_admits(const struct cd_rule *g, const char *agent)
{
	size_t n;

	if (strcmp(g->agent, agent) == 0)
		return 1;
	if (!g->forbid)
		return 0;
	if (strcmp(g->agent, "*") == 0)
		return 1;
	n = strlen(g->agent);
	return strncmp(g->agent, agent, n) == 0 && agent[n] == '/';
}

static int rule_match(const struct cd_rule *g, const struct creq *q, char *why, size_t wn)
{
	const struct cd_request *r = q->r;

	if (!agent_admits(g, r->agent))
		return whyf(why, wn, "for agent '%s'", g->agent), 0;
	if (strcmp(g->tool, "*") && strcmp(g->tool, r->tool))
		return whyf(why, wn, "for tool '%s'", g->tool), 0;
	if (g->task && (!r->task || strcmp(g->task, r->task)))
		return whyf(why, wn, "for task '%s'", g->task), 0;
	if (!(g->actions & (1u << r->action)))
		return whyf(why, wn, "action '%s' is not in its actions",
		            cd_action_name(r->action)),
		       0;
	if (!g->forbid && q->check_expiry && r->now >= g->expires)
		return expired_why(g->expires, r->now, why, wn), 0;
	if (g->forbid ? !forbid_scope(g, q, why, wn) : !grant_scope(g, q, why, wn))
		return 0;
	/* Last, so that this reason means everything else matched. */
	if (g->require_task && (!r->task || !*r->task))
		return whyf(why, wn, "requires a task (ticket id) on every call"), 0;
	whyf(why, wn, "matches");
	return 1;
}

/* ---- the decision ---- */

static void deny(struct cd_decision *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void deny(struct cd_decision *d, const char *fmt, ...)
{
	va_list ap;
	int w;

	d->verdict = CD_VERDICT_DENY;
	va_start(ap, fmt);
	w = vsnprintf(d->reason, sizeof d->reason, fmt, ap);
	va_end(ap);
	if (w < 0)
		d->reason[0] = '\0';
}

static void add_id(struct cd_decision *d, const char *id)
{
	if (d->nids < CD_DECISION_MAX_IDS)
		d->ids[d->nids++] = id;
	d->nids_total++;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Validate and canonicalize the request; 0, or a deny written to d. */
static int prepare(const struct cd_request *r, struct creq *q, char *buf, struct cd_decision *d)
{
	size_t i, off = 0;

	if (!r->agent || !r->tool || !r->agent[0] || !r->tool[0])
		return deny(d, "the request names no agent or tool"), -1;
	if ((unsigned)r->action >= CD_ACTION_COUNT)
		return deny(d, "unknown action class"), -1;
	if (r->npaths > CD_REQ_MAX_PATHS || r->argc > CD_REQ_MAX_ARGV ||
	    r->nargs > CD_REQ_MAX_ARGS || r->nfields > CD_REQ_MAX_ARGS)
		return deny(d, "the request has too many attributes"), -1;
	if ((r->npaths && !r->paths) || (r->argc && !r->argv) || (r->nargs && !r->args) ||
	    (r->nfields && !r->fields))
		return deny(d, "the request is malformed"), -1;
	for (i = 0; i < r->argc; i++)
		if (!r->argv[i])
			return deny(d, "the request's argv is malformed"), -1;
	for (i = 0; i < r->nargs; i++)
		if (!r->args[i].name || !r->args[i].value)
			return deny(d, "the request's arguments are malformed"), -1;
	for (i = 0; i < r->nfields; i++)
		if (!r->fields[i])
			return deny(d, "the request's fields are malformed"), -1;
	if (r->port < -1 || r->port > 65535)
		return deny(d, "port out of range"), -1;
	for (i = 0; i < r->npaths; i++) {
		size_t len;
		int n;
		if (!r->paths[i])
			return deny(d, "the request's paths are malformed"), -1;
		len = strnlen(r->paths[i], CD_PATH_MAX);
		n = cd_path_canon(r->paths[i], len, buf + off, CD_PATH_MAX);
		if (len >= CD_PATH_MAX || n < 0)
			return deny(d, "path is %s",
			            n == -EPERM ? "escaping '/' with '..'"
			                        : "not an absolute path that can be canonicalized"),
			       -1;
		q->paths[i] = buf + off;
		off += (size_t)n + 1;
	}
	if (r->host) {
		if (cd_host_normalize(r->host, strnlen(r->host, CD_HOST_MAX), q->host,
		                      sizeof q->host) < 0)
			return deny(d, "host is not a valid host name"), -1;
		q->has_host = 1;
	}
	return 0;
}

/* One fields: list more that a result must satisfy (each list admits a
 * field or it is cut); the same list is counted once.  More lists than
 * slots set minimize_overflow: the front end withholds the result. */
static void add_field_list(struct cd_decision *d, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < d->nfield_lists; i++)
		if (d->field_lists[i] == list && d->field_counts[i] == n)
			return;
	if (d->nfield_lists == CD_DECISION_MAX_FIELD_LISTS) {
		d->minimize_overflow = 1;
		return;
	}
	d->field_lists[d->nfield_lists] = list;
	d->field_counts[d->nfield_lists++] = n;
}

/* Everything src's data minimization requires, added to d's: masks merge
 * (the stricter action per type) and field lists add up (a field must
 * pass every one). */
static void add_temp_id(struct cd_decision *d, const char *id)
{
	size_t i;

	for (i = 0; i < d->ntemp_ids; i++)
		if (!strcmp(d->temp_ids[i], id))
			return;
	if (d->ntemp_ids < CD_DECISION_MAX_TEMP_IDS)
		d->temp_ids[d->ntemp_ids++] = id;
	else
		d->temp_overflow = 1;
}

/* What a decision inherits from the grants behind it: their data
 * minimization and the temporary grants it rests on. */
static void merge_minimize(struct cd_decision *d, const struct cd_decision *src)
{
	size_t i;

	for (i = 0; i < src->ntemp_ids; i++)
		add_temp_id(d, src->temp_ids[i]);
	if (src->temp_overflow)
		d->temp_overflow = 1;
	cd_mask_rules_merge(&d->mask, &src->mask);
	for (i = 0; i < src->nfield_lists; i++)
		add_field_list(d, src->field_lists[i], src->field_counts[i]);
	if (src->minimize_overflow)
		d->minimize_overflow = 1;
}

/* The data minimization of the deciding grants: all of them apply, with
 * what a break-glass grant inherits from the agent's written grants. */
static void pick_minimize(const struct cd_rule *const *m, size_t n, struct cd_decision *d)
{
	size_t i;

	for (i = 0; i < n; i++) {
		cd_mask_rules_merge(&d->mask, &m[i]->mask);
		if (m[i]->nkeep_fields)
			add_field_list(d, (const char *const *)m[i]->keep_fields,
			               m[i]->nkeep_fields);
		if (m[i]->ninherited_fields)
			add_field_list(d, (const char *const *)m[i]->inherited_fields,
			               m[i]->ninherited_fields);
	}
}

/* Grants with the same verdict must agree on a profile. */
static int pick_profile(const struct cd_rule *const *m, size_t n, const char **ret)
{
	size_t i;
	const char *prof = NULL;
	int first = 1;

	for (i = 0; i < n; i++) {
		if (first) {
			prof = m[i]->profile;
			first = 0;
		} else if ((prof == NULL) != (m[i]->profile == NULL) ||
		           (prof && strcmp(prof, m[i]->profile) != 0)) {
			return -1;
		}
	}
	*ret = prof;
	return 0;
}

/* Forbid rules on the agents a sub-agent "A/b/c" descends from ("A/b",
 * "A"), for its tool and for "*". */
static int ancestor_forbids(const struct cd_policy *p, const char *agent, const char *const *tools,
                            const struct creq *q, struct cd_decision *d)
{
	CD_AUTOFREE char *anc = strdup(agent);
	char *slash;
	size_t t, k;

	if (!anc)
		return -ENOMEM;
	while ((slash = strrchr(anc, '/'))) {
		*slash = '\0';
		for (t = 0; t < 2; t++) {
			const struct cd_bucket *b = cd_pd_ix_find(&p->forbids_ix, anc, tools[t]);
			for (k = 0; b && k < b->n; k++)
				if (rule_match(b->rules[k], q, NULL, 0))
					add_id(d, b->rules[k]->id);
		}
	}
	return 0;
}

static void explain_bucket(const struct cd_policy *p, const struct creq *q, cd_explain_fn fn,
                           void *ctx)
{
	char why[256];
	size_t i;

	/* Every rule of the policy, in id order, so the output is stable;
	 * then the temporary grants in the order they were added. */
	for (i = 0; i < p->ngrants + p->nforbids + p->ntemps; i++) {
		const struct cd_rule *g = i < p->ngrants + p->nforbids
		                                  ? p->by_id[i]
		                                  : p->temps[i - p->ngrants - p->nforbids];
		struct cd_explain_step st = { .id = g->id, .forbid = g->forbid, .why = why };
		why[0] = '\0';
		st.matched = rule_match(g, q, why, sizeof why);
		fn(&st, ctx);
	}
}

static int decide_depth(const struct cd_policy *p, const struct cd_request *r, int check_expiry,
                        cd_explain_fn fn, void *ctx, struct cd_decision *d, unsigned depth);

/* A delegated grant that matched takes part only as far as its parent
 * still holds the same request: 1 when the parent's verdict is not a deny,
 * with the parent's whole decision in *pd — its approval, and the data
 * minimization its grants impose, which the child's decision must carry
 * too (a child never sees more of a result than its parent would) — else
 * 0 with the parent's reason in why. */
static int parent_holds(const struct cd_policy *p, const struct cd_rule *g,
                        const struct cd_request *r, int check_expiry, unsigned depth,
                        struct cd_decision *pd, char *why, size_t wn)
{
	struct cd_request pr = *r;

	memset(pd, 0, sizeof *pd);
	pd->verdict = CD_VERDICT_DENY;
	if (depth >= CD_DELEGATION_MAX_DEPTH)
		return whyf(why, wn, "delegation chain too deep"), 0;
	pr.agent = g->parent;
	if (decide_depth(p, &pr, check_expiry, NULL, NULL, pd, depth + 1) < 0 ||
	    pd->verdict == CD_VERDICT_DENY)
		return whyf(why, wn, "delegating agent '%s' does not hold it: %s", g->parent,
		            pd->reason),
		       0;
	return 1;
}

int cd_rule_scope_admits(const struct cd_rule *g, const struct cd_request *r, char *why, size_t wn)
{
	CD_AUTOFREE char *buf = NULL;
	CD_AUTOFREE char **paths = NULL;
	struct cd_decision d;
	struct creq q;

	memset(&d, 0, sizeof d);
	memset(&q, 0, sizeof q);
	q.r = r;
	if (r->npaths) {
		size_t sz;
		if (r->npaths > CD_REQ_MAX_PATHS || cd_size_mul(r->npaths, CD_PATH_MAX, &sz) < 0 ||
		    !(buf = malloc(sz)) || !(paths = calloc(r->npaths, sizeof *paths)))
			return whyf(why, wn, "too many paths"), 0;
		q.paths = paths;
	}
	if (prepare(r, &q, buf, &d) < 0)
		return whyf(why, wn, "%s", d.reason), 0;
	return grant_scope(g, &q, why, wn);
}

int cd_policy_decide_ex(const struct cd_policy *p, const struct cd_request *r, int check_expiry,
                        cd_explain_fn fn, void *ctx, struct cd_decision *d)
{
	return decide_depth(p, r, check_expiry, fn, ctx, d, 0);
}

/* Forbid rules: (agent|an agent it descends from|*) x (tool|*).  1 when
 * one matches (d is its deny), 0 when none does, -ENOMEM. */
static int check_forbids(const struct cd_policy *p, const struct cd_request *r,
                         const struct creq *q, struct cd_decision *d)
{
	static const char *const star = "*";
	const char *agents[2], *tools[2];
	const struct cd_bucket *b;
	size_t a, t, k;
	int r_;

	agents[0] = r->agent;
	agents[1] = star;
	tools[0] = r->tool;
	tools[1] = star;
	for (a = 0; a < 2; a++) {
		for (t = 0; t < 2; t++) {
			b = cd_pd_ix_find(&p->forbids_ix, agents[a], tools[t]);
			for (k = 0; b && k < b->n; k++)
				if (rule_match(b->rules[k], q, NULL, 0))
					add_id(d, b->rules[k]->id);
		}
	}
	if (strchr(r->agent, '/') && (r_ = ancestor_forbids(p, r->agent, tools, q, d)) < 0)
		return deny(d, "out of memory"), r_;
	if (d->nids_total) {
		qsort(d->ids, d->nids, sizeof *d->ids, cmp_str);
		d->forbidden = 1;
		deny(d, "forbidden by '%s'", d->ids[0]);
		return 1;
	}
	return 0;
}

/* The verdict from the grants that matched: allowed by those that need no
 * approval, else needing the strictest approval of the others, else denied
 * with the most telling reason.  inh: what delegating parents impose, for
 * an allow [0] and for a needs-approval [1]. */
static void conclude(struct cd_decision *d, const struct cd_request *r, const struct cd_rule **none,
                     size_t nnone, const struct cd_rule **appr, size_t nappr, const char *approval,
                     const char *untasked, const char *pwhy, const struct cd_decision inh[2])
{
	if (nnone) {
		if (pick_profile(none, nnone, &d->profile) < 0) {
			d->profile = NULL;
			deny(d, "matching grants name different profiles");
		} else {
			d->verdict = CD_VERDICT_ALLOW;
			whyf(d->reason, sizeof d->reason, "allowed by '%s'", none[0]->id);
			pick_minimize(none, nnone, d);
			merge_minimize(d, &inh[0]);
		}
	} else if (nappr) {
		if (pick_profile(appr, nappr, &d->profile) < 0) {
			d->profile = NULL;
			deny(d, "matching grants name different profiles");
		} else {
			d->verdict = CD_VERDICT_NEEDS_APPROVAL;
			d->approval = approval;
			pick_minimize(appr, nappr, d);
			merge_minimize(d, &inh[1]);
			whyf(d->reason, sizeof d->reason, "'%s' requires approval (%s)",
			     appr[0]->id, approval);
		}
	} else if (untasked) {
		deny(d, "grant '%s' requires a task (ticket id) and the call has none", untasked);
	} else if (pwhy[0]) {
		deny(d, "%s", pwhy);
	} else {
		deny(d, "no grant for agent '%s', tool '%s', action '%s'", r->agent, r->tool,
		     cd_action_name(r->action));
	}
}

static int decide_depth(const struct cd_policy *p, const struct cd_request *r, int check_expiry,
                        cd_explain_fn fn, void *ctx, struct cd_decision *d, unsigned depth)
{
	char pwhy[sizeof d->reason] = "";
	const struct cd_rule **none = NULL, **appr = NULL, *const * rules;
	CD_AUTOFREE const struct cd_rule **cand = NULL;
	size_t nnone = 0, nappr = 0, nb, i, k;
	const char *approval = NULL, *untasked = NULL;
	/* What the parents of the delegated grants that took part impose,
	 * for an allow [0] and for a needs-approval [1]. */
	struct cd_decision inh[2], pd;
	CD_AUTOFREE char *buf = NULL;
	CD_AUTOFREE char **paths = NULL;
	struct creq q;
	const struct cd_bucket *b;
	int r_;

	memset(q.host, 0, 1);
	q.r = r;
	q.has_host = 0;
	q.check_expiry = check_expiry;
	q.paths = NULL;
	if (r->npaths && r->npaths <= CD_REQ_MAX_PATHS) {
		size_t sz;
		if (cd_size_mul(r->npaths, CD_PATH_MAX, &sz) < 0)
			return deny(d, "out of memory"), -ENOMEM;
		buf = malloc(sz);
		paths = calloc(r->npaths, sizeof *paths);
		if (!buf || !paths)
			return deny(d, "out of memory"), -ENOMEM;
		q.paths = paths;
	}
	if (prepare(r, &q, buf, d) < 0)
		return 0;
	if (fn)
		explain_bucket(p, &q, fn, ctx);
	memset(inh, 0, sizeof inh);

	if ((r_ = check_forbids(p, r, &q, d)) != 0)
		return r_ < 0 ? r_ : 0;

	b = cd_pd_ix_find(&p->grants_ix, r->agent, r->tool);
	nb = b ? b->n : 0;
	rules = b ? b->rules : NULL;
	if (b && b->n >= PATH_INDEX_MIN) {
		/* A large bucket: only the grants whose paths can hold the
		 * request's are looked at (same result, sub-linear). */
		cand = malloc((b->npkeys + b->nnopath + 1) * sizeof *cand);
		if (!cand)
			return deny(d, "out of memory"), -ENOMEM;
		nb = cd_pd_path_candidates(b, r->npaths ? q.paths[0] : NULL, cand);
		rules = cand;
	}
	if (nb + p->ntemps) {
		none = calloc(nb + p->ntemps, sizeof *none);
		appr = calloc(nb + p->ntemps, sizeof *appr);
		if (!none || !appr) {
			free(none);
			free(appr);
			return deny(d, "out of memory"), -ENOMEM;
		}
	}
	/* The bucket's grants (sorted by id), then the temporary grants for
	 * this agent and tool. */
	for (k = 0; k < nb + p->ntemps; k++) {
		const struct cd_rule *g = k < nb ? rules[k] : p->temps[k - nb];
		const char *need = g->approval, *pa = NULL;
		int held = 0;
		if (k >= nb && (strcmp(g->agent, r->agent) || strcmp(g->tool, r->tool)))
			continue;
		if (g->require_task && !(r->task && *r->task)) {
			char why[128];
			if (!rule_match(g, &q, why, sizeof why) && !untasked &&
			    !strncmp(why, "requires a task", 15))
				untasked = g->id;
			continue;
		}
		if (!rule_match(g, &q, NULL, 0))
			continue;
		if (g->temp == CD_TEMP_DELEGATED) {
			if (!parent_holds(p, g, r, check_expiry, depth, &pd, pwhy, sizeof pwhy))
				continue;
			held = 1;
			if (pd.verdict == CD_VERDICT_NEEDS_APPROVAL)
				pa = pd.approval;
			if (pa && (!need || !strcmp(pa, "human")))
				need = pa;
		}
		add_id(d, g->id);
		if (g->temp)
			add_temp_id(&inh[need ? 1 : 0], g->id);
		if (held)
			merge_minimize(&inh[need ? 1 : 0], &pd);
		if (need) {
			appr[nappr++] = g;
			/* "human" is the strictest approver. */
			if (!approval || !strcmp(need, "human"))
				approval = need;
		} else {
			none[nnone++] = g;
		}
	}
	if (d->nids > 1)
		qsort(d->ids, d->nids, sizeof *d->ids, cmp_str);
	r_ = 0;
	conclude(d, r, none, nnone, appr, nappr, approval, untasked, pwhy, inh);
	free(none);
	free(appr);
	for (i = 0; i < sizeof d->reason && d->reason[i]; i++)
		if ((unsigned char)d->reason[i] < 0x20 || d->reason[i] == 0x7f)
			d->reason[i] = '?';
	return r_;
}

void cd_policy_mask_union_update(struct cd_policy *p)
{
	size_t i;

	memset(&p->mask_union, 0, sizeof p->mask_union);
	for (i = 0; i < p->ngrants; i++)
		cd_mask_rules_merge(&p->mask_union, &p->rules[i].mask);
	for (i = 0; i < p->ntemps; i++)
		cd_mask_rules_merge(&p->mask_union, &p->temps[i]->mask);
}

int cd_policy_masks(const struct cd_policy *p)
{
	return p && cd_mask_rules_active(&p->mask_union);
}

void cd_policy_mask_union(const struct cd_policy *p, struct cd_mask_rules *ret)
{
	if (p)
		*ret = p->mask_union;
	else
		memset(ret, 0, sizeof *ret);
}

static void decision_init(struct cd_decision *d)
{
	memset(d, 0, sizeof *d);
	d->verdict = CD_VERDICT_DENY;
}

int cd_policy_decide(const struct cd_policy *p, const struct cd_request *req,
                     struct cd_decision *ret, struct cd_err *err)
{
	return cd_policy_explain(p, req, NULL, NULL, ret, err);
}

int cd_policy_explain(const struct cd_policy *p, const struct cd_request *req, cd_explain_fn fn,
                      void *ctx, struct cd_decision *ret, struct cd_err *err)
{
	int r;

	if (!ret)
		return cd_err_set(err, -EINVAL, "no decision to write");
	decision_init(ret);
	if (!p || !req) {
		deny(ret, "no policy or no request");
		return cd_err_set(err, -EINVAL, "no policy or no request");
	}
	r = cd_policy_decide_ex(p, req, 1, fn, ctx, ret);
	if (r < 0) {
		ret->verdict = CD_VERDICT_DENY;
		return cd_err_set(err, r, "decision failed: %s", cd_strerror(r));
	}
	/* Paranoia: a deny never carries a profile or an approval. */
	if (ret->verdict == CD_VERDICT_DENY) {
		ret->profile = NULL;
		ret->approval = NULL;
	}
	return 0;
}

/* ---- describing requests, checking examples ---- */

void cd_request_describe(const struct cd_request *r, char *out, size_t outlen)
{
	struct cd_buf b;
	size_t i;

	cd_buf_init(&b, outlen > 1 ? outlen - 1 : 1);
	(void)cd_buf_printf(&b, "agent=%s", r->agent ? r->agent : "?");
	if (r->task)
		(void)cd_buf_printf(&b, " task=%s", r->task);
	(void)cd_buf_printf(&b, " tool=%s action=%s", r->tool ? r->tool : "?",
	                    cd_action_name(r->action));
	for (i = 0; i < r->npaths && r->paths; i++) {
		(void)cd_buf_puts(&b, " path=");
		(void)cd_buf_escape(&b, r->paths[i], strlen(r->paths[i]));
	}
	if (r->host) {
		(void)cd_buf_puts(&b, " host=");
		(void)cd_buf_escape(&b, r->host, strlen(r->host));
	}
	if (r->port >= 0)
		(void)cd_buf_printf(&b, " port=%ld", r->port);
	if (r->argc) {
		(void)cd_buf_puts(&b, " argv=[");
		for (i = 0; i < r->argc; i++) {
			if (i)
				(void)cd_buf_putc(&b, ' ');
			(void)cd_buf_escape(&b, r->argv[i], strlen(r->argv[i]));
		}
		(void)cd_buf_putc(&b, ']');
	}
	for (i = 0; i < r->nargs; i++) {
		(void)cd_buf_printf(&b, " arg:");
		(void)cd_buf_escape(&b, r->args[i].name, strlen(r->args[i].name));
		(void)cd_buf_putc(&b, '=');
		(void)cd_buf_escape(&b, r->args[i].value, strlen(r->args[i].value));
	}
	for (i = 0; i < r->nfields; i++) {
		(void)cd_buf_puts(&b, " field=");
		(void)cd_buf_escape(&b, r->fields[i], strlen(r->fields[i]));
	}
	if (outlen) {
		size_t n = b.data ? b.len : 0;
		if (n >= outlen)
			n = outlen - 1;
		if (n)
			memcpy(out, b.data, n);
		out[n] = '\0';
	}
	cd_buf_release(&b);
}

static int has_id(const struct cd_decision *d, const char *id)
{
	size_t i;
	for (i = 0; i < d->nids; i++)
		if (strcmp(d->ids[i], id) == 0)
			return 1;
	return 0;
}

int cd_policy_check_examples(const struct cd_policy *p, const char *name, struct cd_err *err)
{
	size_t i;

	for (i = 0; i < p->nexamples; i++) {
		const struct cd_example *ex = &p->examples[i];
		struct cd_decision d;
		char desc[256];
		int ok;

		decision_init(&d);
		if (cd_policy_decide_ex(p, &ex->req, ex->has_at, NULL, NULL, &d) < 0)
			return cd_err_set(err, -ENOMEM, "%s: out of memory", name);
		if (ex->expect_allow)
			ok = d.verdict != CD_VERDICT_DENY && (!ex->of || has_id(&d, ex->of->id));
		else
			ok = d.verdict == CD_VERDICT_DENY;
		if (ok)
			continue;
		cd_request_describe(&ex->req, desc, sizeof desc);
		return cd_err_set(err, -CD_E_PARSE,
		                  "%s:%u:%u: example expects %s but the policy says %s: %s (%s)",
		                  name, ex->mark.line, ex->mark.col,
		                  ex->expect_allow ? "allow" : "deny", cd_verdict_name(d.verdict),
		                  d.reason, desc);
	}
	return 0;
}
