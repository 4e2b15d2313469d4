/* policy-test.c — `cordon policy test`: the inline examples, then for every
 * grant a witness request it allows and the requests just beside it, each
 * of which the whole matrix must deny: every other action class, a sibling
 * and a parent path, '..', case and look-alike spellings, a host one label
 * off, another port, another argv token, another argument value or field,
 * another agent or task, and the second the grant expires.
 *
 * Trust boundary: works on a policy that loaded (so already checked); the
 * generated requests go through the same cd_policy_decide_ex() as any
 * other. */
#include "policy-int.h"

#include "util/bounds.h"
#include "match-host.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>

struct tctx {
	const struct cd_policy *p;
	cd_policy_test_fn fn;
	void *ctx;
	size_t failed;
};

static void report(struct tctx *t, int pass, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void report(struct tctx *t, int pass, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (w < 0)
		line[0] = '\0';
	if (!pass)
		t->failed++;
	t->fn(pass, line, t->ctx);
}

static void ids_join(const struct cd_decision *d, char *out, size_t n)
{
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < d->nids && o < n; i++) {
		int w = snprintf(out + o, n - o, "%s%s", i ? "," : "", d->ids[i]);
		if (w < 0)
			break;
		o += (size_t)w;
	}
}

/* One generated case: this grant must not permit it.  When other grants
 * permit it (overlapping grants are normal: a read grant over a tree and a
 * write grant on a branch of it) the case passes with a note naming them;
 * when this grant is among those that permit it, its scope leaks. */
static int must_deny(struct tctx *t, const struct cd_rule *g, const char *what,
                     const struct cd_request *q)
{
	struct cd_decision d;
	char desc[512], ids[256];
	size_t i;
	int leak = 0;

	memset(&d, 0, sizeof d);
	if (cd_policy_decide_ex(t->p, q, 1, NULL, NULL, &d) < 0)
		return -ENOMEM;
	if (d.verdict == CD_VERDICT_DENY) {
		report(t, 1, "grant %s: %s is denied", g->id, what);
		return 0;
	}
	for (i = 0; i < d.nids; i++)
		if (!strcmp(d.ids[i], g->id))
			leak = 1;
	if (d.nids_total > d.nids)
		leak = 1; /* cannot tell: count it as a leak */
	cd_request_describe(q, desc, sizeof desc);
	ids_join(&d, ids, sizeof ids);
	if (!leak) {
		report(t, 1, "grant %s: %s is not granted by it (%s by other grants: %s)", g->id,
		       what, cd_verdict_name(d.verdict), ids);
		return 0;
	}
	report(t, 0, "grant %s: %s must be denied but is %s, leaking via %s: %s", g->id, what,
	       cd_verdict_name(d.verdict), ids, desc);
	return 0;
}

/* The working state of one grant's cases. */
struct wit {
	struct cd_request q;
	char path[CD_PATH_MAX];
	const char *paths[1];
	char host[CD_HOST_MAX + 16];
	struct cd_req_arg args[64];
	char argbuf[64][256];
	const char *fields[1];
	char field[256];
	size_t lit; /* length of the glob's literal prefix in path */
};

static int concretize_glob(const char *glob, char *out, size_t n, size_t *ret_lit)
{
	size_t o = 0;
	const char *s = glob;
	int literal = 1;

	*ret_lit = 0;
	if (!strcmp(glob, "/")) {
		if (n < 2)
			return -1;
		memcpy(out, "/", 2);
		return 0;
	}
	while (*s) {
		const char *seg = ++s;
		size_t len;
		while (*s && *s != '/')
			s++;
		len = (size_t)(s - seg);
		if (o + len + 3 >= n)
			return -1;
		out[o++] = '/';
		if (memchr(seg, '*', len) || memchr(seg, '?', len)) {
			size_t k;
			literal = 0;
			if (len == 2 && seg[0] == '*' && seg[1] == '*') {
				out[o++] = 'x';
				continue;
			}
			for (k = 0; k < len; k++)
				out[o++] = (seg[k] == '*' || seg[k] == '?') ? 'x' : seg[k];
		} else {
			memcpy(out + o, seg, len);
			o += len;
			if (literal)
				*ret_lit = o;
		}
	}
	out[o] = '\0';
	return 0;
}

static int build_witness(const struct cd_rule *g, struct wit *w)
{
	size_t i;
	int wr;

	memset(w, 0, sizeof *w);
	cd_request_init(&w->q);
	w->q.agent = g->agent;
	w->q.task = g->task;
	w->q.tool = g->tool;
	w->q.action = (enum cd_action)__builtin_ctz(g->actions);
	w->q.now = g->expires == CD_TIME_NEVER ? 0 : g->expires - 1;
	if (g->npaths) {
		if (concretize_glob(g->paths[0], w->path, sizeof w->path, &w->lit) < 0)
			return -1;
		w->paths[0] = w->path;
		w->q.paths = w->paths;
		w->q.npaths = 1;
	}
	if (g->nhosts) {
		wr = snprintf(w->host, sizeof w->host, "%s%s", g->hosts[0][0] == '*' ? "a" : "",
		              g->hosts[0][0] == '*' ? g->hosts[0] + 1 : g->hosts[0]);
		if (wr < 0 || (size_t)wr >= sizeof w->host)
			return -1;
		w->q.host = w->host;
	}
	if (g->nports)
		w->q.port = g->ports[0].lo;
	if (g->nargv) {
		w->q.argv = g->argv;
		w->q.argc = g->nargv;
	}
	if (g->nargs > CD_ARRAY_SIZE(w->args))
		return -1;
	for (i = 0; i < g->nargs; i++) {
		const struct cd_arg_rule *a = &g->args[i];
		wr = snprintf(w->argbuf[i], sizeof w->argbuf[i], "%s%s", a->values[0],
		              a->op == CD_ARG_PREFIX ? "x" : "");
		if (wr < 0 || (size_t)wr >= sizeof w->argbuf[i])
			return -1;
		w->args[i].name = a->name;
		w->args[i].value = w->argbuf[i];
	}
	w->q.args = w->args;
	w->q.nargs = g->nargs;
	if (g->nfields) {
		w->fields[0] = g->fields[0];
		w->q.fields = w->fields;
		w->q.nfields = 1;
	}
	return 0;
}

static int path_cases(struct tctx *t, const struct cd_rule *g, const struct wit *w)
{
	/* Look-alikes: Cyrillic letters that render as Latin ones. */
	static const struct {
		char latin;
		const char *cyr;
	} look[] = { { 'a', "\xd0\xb0" }, { 'e', "\xd0\xb5" }, { 'o', "\xd0\xbe" },
		     { 'p', "\xd1\x80" }, { 'c', "\xd1\x81" }, { 'x', "\xd1\x85" } };
	char path[CD_PATH_MAX + 64];
	const char *one[1] = { path };
	struct cd_request q = w->q;
	size_t lit = w->lit, i, k;
	int r, wr;
	const char *slash;

	q.paths = one;
	if (lit <= 1)
		return 0; /* a glob with no literal directory has no outside */
	/* Sibling: the literal prefix with one more byte. */
	wr = snprintf(path, sizeof path, "%.*sx%s", (int)lit, w->path, w->path + lit);
	if (wr > 0 && (size_t)wr < sizeof path && (r = must_deny(t, g, "a sibling path", &q)) < 0)
		return r;
	/* Parent: the directory above the literal prefix. */
	for (slash = w->path + lit - 1; slash > w->path && *slash != '/'; slash--)
		;
	wr = snprintf(path, sizeof path, "%.*s", slash == w->path ? 1 : (int)(slash - w->path),
	              w->path);
	if (wr > 0 && (size_t)wr < sizeof path && (r = must_deny(t, g, "the parent path", &q)) < 0)
		return r;
	/* '..' out of the scope and into a sibling. */
	wr = snprintf(path, sizeof path, "%.*s/../%.*sx%s", (int)lit, w->path,
	              (int)(w->path + lit - slash - 1), slash + 1, w->path + lit);
	if (wr > 0 && (size_t)wr < sizeof path &&
	    (r = must_deny(t, g, "a '..' path into a sibling", &q)) < 0)
		return r;
	/* '..' above the root. */
	wr = snprintf(path, sizeof path, "%s", w->path);
	for (k = 0; k <= 64 && wr > 0 && (size_t)wr + 3 < sizeof path; k++)
		wr += snprintf(path + wr, sizeof path - (size_t)wr, "/..");
	if ((r = must_deny(t, g, "a '..' path above '/'", &q)) < 0)
		return r;
	/* Case: the literal prefix upper-cased. */
	wr = snprintf(path, sizeof path, "%s", w->path);
	for (i = 0, k = 0; i < lit && wr > 0; i++) {
		if (path[i] >= 'a' && path[i] <= 'z') {
			path[i] = (char)(path[i] - 'a' + 'A');
			k++;
		}
	}
	if (k && (r = must_deny(t, g, "an upper-case path", &q)) < 0)
		return r;
	/* Look-alike: one letter of the literal prefix swapped for Cyrillic. */
	for (i = lit; i-- > 1;) {
		for (k = 0; k < CD_ARRAY_SIZE(look); k++) {
			if (w->path[i] != look[k].latin)
				continue;
			wr = snprintf(path, sizeof path, "%.*s%s%s", (int)i, w->path, look[k].cyr,
			              w->path + i + 1);
			if (wr > 0 && (size_t)wr < sizeof path)
				return must_deny(t, g, "a look-alike (Cyrillic) path", &q);
		}
	}
	return 0;
}

static int host_cases(struct tctx *t, const struct cd_rule *g, const struct wit *w)
{
	const char *pat = g->hosts[0];
	char host[CD_HOST_MAX + 32];
	struct cd_request q = w->q;
	const char *dot;
	int r, wr;

	q.host = host;
	if (pat[0] == '[')
		return 0;
	if (pat[0] == '*') {
		const char *base = pat + 2;
		wr = snprintf(host, sizeof host, "%s", base);
		if (wr > 0 && (r = must_deny(t, g, "the wildcard's own base host", &q)) < 0)
			return r;
		wr = snprintf(host, sizeof host, "evil%s", base);
		if (wr > 0 && (r = must_deny(t, g, "a host sharing the suffix bytes", &q)) < 0)
			return r;
		wr = snprintf(host, sizeof host, "a.%s.evil.test", base);
		if (wr > 0 && (r = must_deny(t, g, "the host under another domain", &q)) < 0)
			return r;
		return 0;
	}
	wr = snprintf(host, sizeof host, "x%s", pat);
	if (wr > 0 && (size_t)wr < sizeof host &&
	    (r = must_deny(t, g, "a host one label off", &q)) < 0)
		return r;
	wr = snprintf(host, sizeof host, "evil.%s", pat);
	if (wr > 0 && (size_t)wr < sizeof host && (r = must_deny(t, g, "a sub-host", &q)) < 0)
		return r;
	dot = strchr(pat, '.');
	if (dot && strchr(dot + 1, '.')) {
		wr = snprintf(host, sizeof host, "%s", dot + 1);
		if (wr > 0 && (r = must_deny(t, g, "the parent domain", &q)) < 0)
			return r;
	}
	return 0;
}

static int other_port(const struct cd_rule *g, long *ret)
{
	long cand[2] = { (long)g->ports[0].lo - 1, (long)g->ports[0].hi + 1 };
	size_t i;

	for (i = 0; i < 2; i++) {
		if (cand[i] >= 1 && cand[i] <= 65535 &&
		    !cd_port_match(g->ports, g->nports, cand[i])) {
			*ret = cand[i];
			return 0;
		}
	}
	return -1;
}

static int scope_cases(struct tctx *t, const struct cd_rule *g, struct wit *w)
{
	struct cd_request q;
	char tok[512], what[128];
	const char *argv2[CD_POLICY_MAX_LIST + 1];
	size_t i;
	long port;
	int r, wr;

	if (g->npaths && (r = path_cases(t, g, w)) < 0)
		return r;
	if (g->nhosts && (r = host_cases(t, g, w)) < 0)
		return r;
	if (g->nports && other_port(g, &port) == 0) {
		q = w->q;
		q.port = port;
		if ((r = must_deny(t, g, "another port", &q)) < 0)
			return r;
	}
	if (g->nargv && g->nargv <= CD_POLICY_MAX_LIST) {
		q = w->q;
		memcpy(argv2, g->argv, g->nargv * sizeof *argv2);
		wr = snprintf(tok, sizeof tok, "%sx", g->argv[g->nargv - 1]);
		if (wr > 0 && (size_t)wr < sizeof tok) {
			argv2[g->nargv - 1] = tok;
			q.argv = argv2;
			if ((r = must_deny(t, g, "argv with the last token extended", &q)) < 0)
				return r;
		}
		if (g->nargv >= 2) {
			q.argv = g->argv;
			q.argc = g->nargv - 1;
			if ((r = must_deny(t, g, "argv with the last token missing", &q)) < 0)
				return r;
		}
	}
	for (i = 0; i < g->nargs; i++) {
		struct cd_req_arg saved = w->args[i];
		const struct cd_arg_rule *a = &g->args[i];
		size_t len = strlen(a->values[0]);
		if (a->op == CD_ARG_PREFIX)
			wr = snprintf(tok, sizeof tok, "%.*s", (int)(len ? len - 1 : 0),
			              a->values[0]);
		else
			wr = snprintf(tok, sizeof tok, "%sx", a->values[0]);
		if (wr < 0 || (size_t)wr >= sizeof tok)
			continue;
		w->args[i].value = tok;
		wr = snprintf(what, sizeof what, "another value of argument '%s'", a->name);
		r = must_deny(t, g, wr > 0 ? what : "another argument value", &w->q);
		w->args[i] = saved;
		if (r < 0)
			return r;
	}
	if (g->nfields) {
		wr = snprintf(w->field, sizeof w->field, "%sx", g->fields[0]);
		if (wr > 0 && (size_t)wr < sizeof w->field) {
			const char *one[1] = { w->field };
			q = w->q;
			q.fields = one;
			if ((r = must_deny(t, g, "another field", &q)) < 0)
				return r;
		}
	}
	return 0;
}

static int grant_cases(struct tctx *t, const struct cd_rule *g)
{
	struct wit w;
	struct cd_request q;
	struct cd_decision d;
	char what[160], agent[160];
	unsigned a;
	size_t i;
	int r, wr;

	if (build_witness(g, &w) < 0) {
		report(t, 1, "grant %s # SKIP no witness request could be built", g->id);
		return 0;
	}
	memset(&d, 0, sizeof d);
	if (cd_policy_decide_ex(t->p, &w.q, 1, NULL, NULL, &d) < 0)
		return -ENOMEM;
	if (d.verdict == CD_VERDICT_DENY) {
		report(t, 1, "grant %s # SKIP its witness request is denied (%s)", g->id, d.reason);
		return 0;
	}
	report(t, 1, "grant %s: its witness request is %s", g->id, cd_verdict_name(d.verdict));
	for (a = 0; a < CD_ACTION_COUNT; a++) {
		if (g->actions & (1u << a))
			continue;
		q = w.q;
		q.action = (enum cd_action)a;
		wr = snprintf(what, sizeof what, "action '%s'", cd_action_name((enum cd_action)a));
		if ((r = must_deny(t, g, wr > 0 ? what : "another action", &q)) < 0)
			return r;
	}
	if ((r = scope_cases(t, g, &w)) < 0)
		return r;
	/* Other agents: every declared one, and one nobody declared. */
	for (i = 0; i <= t->p->nagents; i++) {
		q = w.q;
		if (i < t->p->nagents) {
			if (!strcmp(t->p->agents[i].id, g->agent))
				continue;
			q.agent = t->p->agents[i].id;
		} else {
			wr = snprintf(agent, sizeof agent, "%s-other", g->agent);
			if (wr < 0 || (size_t)wr >= sizeof agent)
				continue;
			q.agent = agent;
		}
		wr = snprintf(what, sizeof what, "agent '%s'", q.agent);
		if ((r = must_deny(t, g, wr > 0 ? what : "another agent", &q)) < 0)
			return r;
	}
	if (g->task) {
		q = w.q;
		q.task = NULL;
		if ((r = must_deny(t, g, "the call without its task", &q)) < 0)
			return r;
		wr = snprintf(agent, sizeof agent, "%s-other", g->task);
		if (wr > 0 && (size_t)wr < sizeof agent) {
			q.task = agent;
			if ((r = must_deny(t, g, "another task", &q)) < 0)
				return r;
		}
	}
	if (g->expires != CD_TIME_NEVER) {
		q = w.q;
		q.now = g->expires;
		if ((r = must_deny(t, g, "the second it expires", &q)) < 0)
			return r;
		q.now = g->expires + 1;
		if ((r = must_deny(t, g, "one second after expiry", &q)) < 0)
			return r;
	}
	return 0;
}

int cd_policy_test(const struct cd_policy *p, cd_policy_test_fn fn, void *ctx, size_t *ret_failed)
{
	struct tctx t = { .p = p, .fn = fn, .ctx = ctx };
	size_t i;
	int r;

	if (!p || !fn)
		return -EINVAL;
	for (i = 0; i < p->nexamples; i++) {
		const struct cd_example *ex = &p->examples[i];
		struct cd_decision d;
		char desc[512];
		int pass;

		memset(&d, 0, sizeof d);
		if (cd_policy_decide_ex(p, &ex->req, ex->has_at, NULL, NULL, &d) < 0)
			return -ENOMEM;
		pass = ex->expect_allow ? d.verdict != CD_VERDICT_DENY
		                        : d.verdict == CD_VERDICT_DENY;
		cd_request_describe(&ex->req, desc, sizeof desc);
		report(&t, pass, "example at line %u%s%s: %s is %s (%s)", ex->mark.line,
		       ex->of ? " of grant " : "", ex->of ? ex->of->id : "", desc,
		       cd_verdict_name(d.verdict), d.reason);
	}
	for (i = 0; i < p->ngrants + p->nforbids; i++) {
		const struct cd_rule *g = p->by_id[i];
		if (g->forbid)
			continue;
		if ((r = grant_cases(&t, g)) < 0)
			return r;
	}
	if (ret_failed)
		*ret_failed = t.failed;
	return 0;
}
