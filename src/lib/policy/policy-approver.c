/* policy-approver.c — who may approve, and approver rules (policy.h).
 *
 * Trust boundary: the request comes from the agent's call; every value is
 * canonicalized or parsed strictly before a rule looks at it, and anything
 * unclear (a path that will not canonicalize, a number with a sign or an
 * exponent) does not approve. */
#include "policy-int.h"

#include "util/bounds.h"
#include "util/buf.h"

#include <errno.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int is_agent(const struct cd_policy *p, const char *id)
{
	size_t i;

	for (i = 0; i < p->nagents; i++)
		if (!strcmp(p->agents[i].id, id))
			return 1;
	return 0;
}

int cd_policy_approver_person(const struct cd_policy *p, const char *person, const char *agent,
                              char *why, size_t wn)
{
	size_t i, n;

	if (!p || !person || !*person || !agent)
		return cd_msg(why, wn, "no approver named");
	n = strlen(person);
	if (!strcmp(person, agent) || (!strncmp(agent, person, n) && agent[n] == '/'))
		return cd_msg(why, wn,
		              "'%s' is the requesting agent: an agent never approves its own "
		              "request",
		              person);
	if (is_agent(p, person))
		return cd_msg(why, wn, "'%s' is an agent of the policy: agents never approve",
		              person);
	if (!p->npeople)
		return 1;
	for (i = 0; i < p->npeople; i++)
		if (!strcmp(p->people[i], person))
			return 1;
	return cd_msg(why, wn, "'%s' is not among the policy's approvers.people", person);
}

int cd_policy_is_agent(const struct cd_policy *p, const char *name)
{
	return p && name && is_agent(p, name);
}

int cd_policy_parse_pubkey(const char *s, unsigned char pk[32])
{
	size_t n = 0;
	const char *end = NULL;

	if (!s || strncmp(s, "ed25519:", 8) != 0 ||
	    sodium_base642bin(pk, 32, s + 8, strlen(s + 8), NULL, &n, &end,
	                      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    n != 32 || !end || *end)
		return -EINVAL;
	return 0;
}

int cd_policy_approver_key(const struct cd_policy *p, const char *person, unsigned char pk[32])
{
	size_t i;

	for (i = 0; p && person && i < p->nakeys; i++)
		if (!strcmp(p->akeys[i].person, person)) {
			memcpy(pk, p->akeys[i].pk, 32);
			return 1;
		}
	return 0;
}

int cd_policy_console_key(const struct cd_policy *p, size_t i, unsigned char pk[32])
{
	if (!p || i >= p->nconsoles)
		return 0;
	memcpy(pk, p->consoles[i].pk, 32);
	return 1;
}

const char *cd_policy_approver_listed(const struct cd_policy *p, size_t i)
{
	return p && i < p->npeople ? p->people[i] : NULL;
}

/* a < b for two plain decimal numbers (cd_decimal_valid). */
static int decimal_below(const char *a, const char *b)
{
	const char *da = strchr(a, '.'), *db = strchr(b, '.');
	size_t ia = da ? (size_t)(da - a) : strlen(a), ib = db ? (size_t)(db - b) : strlen(b);
	const char *fa = da ? da + 1 : "", *fb = db ? db + 1 : "";
	size_t i;

	/* Compare integer parts without leading zeros, then fractions digit by
	 * digit (a missing digit is 0): exact, no floating point. */
	while (ia > 1 && *a == '0')
		a++, ia--;
	while (ib > 1 && *b == '0')
		b++, ib--;
	if (ia != ib)
		return ia < ib;
	for (i = 0; i < ia; i++)
		if (a[i] != b[i])
			return a[i] < b[i];
	for (i = 0; fa[i] || fb[i]; i++) {
		char ca = fa[i] ? fa[i] : '0', cb = fb[i] ? fb[i] : '0';
		if (ca != cb)
			return ca < cb;
		if (!fa[i])
			fa = "";
		if (!fb[i])
			fb = "";
		if (!*fa && !*fb)
			break;
	}
	return 0;
}

static int operands_ok(const struct cd_approver_rule *a, const struct cd_request *r,
                       const char *cwd, char *why, size_t wn)
{
	char joined[CD_PATH_MAX], canon[CD_PATH_MAX];
	size_t i, k, count = 0;

	if (!cwd || cwd[0] != '/')
		return cd_msg(why, wn, "no working directory to resolve operands against");
	for (i = a->scope.nargv ? a->scope.nargv : 1; i < r->argc; i++) {
		const char *t = r->argv[i];
		int n, hit = 0;
		if (t[0] == '-')
			continue;
		n = t[0] == '/' ? snprintf(joined, sizeof joined, "%s", t)
		                : snprintf(joined, sizeof joined, "%s/%s", cwd, t);
		if (n < 0 || (size_t)n >= sizeof joined ||
		    cd_path_canon(joined, (size_t)n, canon, sizeof canon) < 0)
			return cd_msg(why, wn, "operand '%.200s' does not resolve", t);
		for (k = 0; k < a->noperand_globs && !hit; k++)
			hit = cd_glob_match(a->operand_globs[k], canon) == 1;
		if (!hit)
			return cd_msg(why, wn, "operand '%.200s' is outside the rule's paths",
			              canon);
		count++;
	}
	if (a->max_operands >= 0 && count > (size_t)a->max_operands)
		return cd_msg(why, wn, "%zu operands, more than the rule's %ld", count,
		              a->max_operands);
	return 1;
}

int cd_policy_approver_check(const struct cd_policy *p, const char *rule,
                             const struct cd_request *r, const char *cwd, char *why, size_t wn)
{
	const struct cd_approver_rule *a = NULL;
	size_t i, j;

	for (i = 0; p && rule && i < p->narules && !a; i++)
		if (!strcmp(p->arules[i].id, rule))
			a = &p->arules[i];
	if (!a || !r)
		return cd_msg(why, wn, "no approver rule '%s'", rule ? rule : "");
	if (a->scope.has_scope && !cd_rule_scope_admits(&a->scope, r, why, wn))
		return 0;
	if (a->noperand_globs && !operands_ok(a, r, cwd, why, wn))
		return 0;
	if (a->max_paths >= 0 && r->npaths > (size_t)a->max_paths)
		return cd_msg(why, wn, "%zu paths, more than the rule's %ld", r->npaths,
		              a->max_paths);
	for (j = 0; j < a->nbelow; j++) {
		const char *v = NULL;
		for (i = 0; i < r->nargs; i++)
			if (r->args[i].name && !strcmp(r->args[i].name, a->below_names[j]))
				v = r->args[i].value;
		if (!v || !cd_decimal_valid(v))
			return cd_msg(why, wn, "argument '%s' is not a plain number",
			              a->below_names[j]);
		if (!decimal_below(v, a->below_values[j]))
			return cd_msg(why, wn, "argument '%s' is %.64s, not below %s",
			              a->below_names[j], v, a->below_values[j]);
	}
	return cd_msg(why, wn, "approved by rule '%s'", a->id) + 1;
}

/* ---- describing a rule (for people) ---------------------------------- */

static int put(struct cd_buf *b, int *first, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static int put(struct cd_buf *b, int *first, const char *fmt, ...)
{
	va_list ap;
	char tmp[1024];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if (!*first && cd_buf_puts(b, "; ") < 0)
		return -CD_E_LIMIT;
	*first = 0;
	return cd_buf_puts(b, tmp);
}

/* "a, b, c" of up to max items (then "..."). */
static void join(char *out, size_t n, const char *const *v, size_t nv, const char *quote)
{
	size_t i, k = 0;

	out[0] = '\0';
	for (i = 0; i < nv && k < n; i++) {
		int w = snprintf(out + k, n - k, "%s%s%s%s", i ? " " : "", quote, v[i], quote);
		if (w < 0 || (size_t)w >= n - k) {
			snprintf(out + (n > 4 ? n - 4 : 0), n > 4 ? 4 : n, "...");
			return;
		}
		k += (size_t)w;
	}
}

static int scope_describe(struct cd_buf *b, const struct cd_rule *s, int *first)
{
	static const char *const ops[] = { "=", "starts with", "one of" };
	char list[512];
	size_t i;
	int r = 0;

	if (!s->has_scope)
		return 0;
	if (s->nargv) {
		join(list, sizeof list, s->argv, s->nargv, "");
		r = r ?: put(b, first, "the command starts with '%s'", list);
	}
	if (s->npaths) {
		join(list, sizeof list, s->paths, s->npaths, "");
		r = r ?: put(b, first, "paths within %s", list);
	}
	if (s->nhosts) {
		join(list, sizeof list, s->hosts, s->nhosts, "");
		r = r ?: put(b, first, "hosts %s", list);
	}
	for (i = 0; i < s->nargs && !r; i++) {
		const struct cd_arg_rule *a = &s->args[i];
		join(list, sizeof list, (const char *const *)a->values, a->nvalues, "'");
		r = put(b, first, "argument %s %s %s", a->name,
		        (unsigned)a->op < sizeof ops / sizeof ops[0] ? ops[a->op] : "?", list);
	}
	return r;
}

int cd_policy_approver_describe(const struct cd_policy *p, const char *rule, struct cd_buf *b)
{
	const struct cd_approver_rule *a = NULL;
	char list[512];
	size_t i;
	int r, first = 1;

	for (i = 0; p && rule && i < p->narules && !a; i++)
		if (!strcmp(p->arules[i].id, rule))
			a = &p->arules[i];
	if (!a)
		return -ENOENT;
	r = scope_describe(b, &a->scope, &first);
	if (a->noperand_globs) {
		join(list, sizeof list, a->operand_globs, a->noperand_globs, "");
		r = r ?: put(b, &first, "every operand within %s", list);
	}
	if (a->max_operands >= 0)
		r = r ?: put(b, &first, "at most %ld operands", a->max_operands);
	if (a->max_paths >= 0)
		r = r ?: put(b, &first, "at most %ld paths", a->max_paths);
	for (i = 0; i < a->nbelow && !r; i++)
		r = put(b, &first, "%s below %s", a->below_names[i], a->below_values[i]);
	return r;
}
