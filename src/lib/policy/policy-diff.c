/* policy-diff.c — the new access a policy change adds (policy-diff.h).
 *
 * Trust boundary: both policies were loaded and validated by
 * policy-load.c; their strings may still hold bytes that are unsafe on a
 * terminal, so every detail is escaped before it leaves.  Every proof of
 * coverage is one-sided: "not proven" is reported as new access.
 *
 * A grant's requests are a product of independent dimensions (agent, task,
 * tool, action, and one set per scope matcher), so one grant's requests are
 * a subset of another's exactly when each dimension is; the per-dimension
 * checks below are sound, and incomplete only where policy-diff.h says. */
#include "policy-diff.h"

#include "util/bounds.h"
#include "util/buf.h"
#include "util/clock-time.h"
#include "match-host.h"
#include "policy-int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* snprintf that may cut a long detail short; an error leaves "". */
static void say(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *out, size_t n, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(out, n, fmt, ap);
	va_end(ap);
	if (w < 0 && n)
		out[0] = '\0';
}

/* ---- coverage proofs ---- */

/* 1 when the segment pattern o covers the segment pattern i: o's '*'
 * absorbs any run of i's tokens, o's '?' one literal or '?', a literal only
 * the same literal.  Segments are at most CD_POLICY_MAX_SCALAR bytes. */
static int seg_covers(const char *o, size_t on, const char *i, size_t in)
{
	unsigned char rows[2][CD_POLICY_MAX_SCALAR + 1];
	unsigned char *prev = rows[0], *cur = rows[1], *t;
	size_t x, y;

	if (on > CD_POLICY_MAX_SCALAR || in > CD_POLICY_MAX_SCALAR)
		return 0;
	memset(prev, 0, in + 1);
	prev[0] = 1;
	for (x = 0; x < on; x++) {
		cur[0] = o[x] == '*' && prev[0];
		for (y = 1; y <= in; y++) {
			if (o[x] == '*')
				cur[y] = prev[y] || cur[y - 1];
			else if (o[x] == '?')
				cur[y] = i[y - 1] != '*' && prev[y - 1];
			else
				cur[y] = i[y - 1] == o[x] && prev[y - 1];
		}
		t = prev;
		prev = cur;
		cur = t;
	}
	return prev[in];
}

/* Step to the next segment of a glob ("/" has none). */
static int next_seg(const char **pp, const char **ret, size_t *ret_len)
{
	const char *p = *pp;

	if (*p == '/')
		p++;
	if (*p == '\0')
		return 0;
	*ret = p;
	while (*p && *p != '/')
		p++;
	*ret_len = (size_t)(p - *ret);
	*pp = p;
	return 1;
}

static int is_dstar(const char *s, size_t n)
{
	return n == 2 && s[0] == '*' && s[1] == '*';
}

static size_t count_segs(const char *g)
{
	const char *s;
	size_t n = 0, len;

	while (next_seg(&g, &s, &len))
		n++;
	return n;
}

int cd_glob_covers(const char *outer, const char *inner)
{
	/* Segments are at least one byte and globs at most
	 * CD_POLICY_MAX_SCALAR, so a row fits on the stack. */
	unsigned char rows[2][CD_POLICY_MAX_SCALAR / 2 + 2];
	unsigned char *prev = rows[0], *cur = rows[1], *t;
	const char *op, *oseg, *ip, *iseg;
	size_t olen, ilen, ni, y;

	if (!outer || !inner || outer[0] != '/' || inner[0] != '/')
		return 0;
	if (strcmp(outer, inner) == 0)
		return 1;
	ni = count_segs(inner);
	if (ni > CD_POLICY_MAX_SCALAR / 2)
		return 0;
	memset(prev, 0, ni + 1);
	prev[0] = 1;
	op = outer;
	while (next_seg(&op, &oseg, &olen)) {
		int star = is_dstar(oseg, olen);
		cur[0] = star && prev[0];
		ip = inner;
		for (y = 1; y <= ni; y++) {
			if (!next_seg(&ip, &iseg, &ilen))
				return 0;
			if (star)
				cur[y] = prev[y] || cur[y - 1];
			else
				cur[y] = prev[y - 1] && !is_dstar(iseg, ilen) &&
				         seg_covers(oseg, olen, iseg, ilen);
		}
		t = prev;
		prev = cur;
		cur = t;
	}
	return prev[ni];
}

int cd_host_covers(const char *outer, const char *inner)
{
	char o[CD_HOST_MAX], in[CD_HOST_MAX];
	size_t il, ol;

	if (!outer || !inner)
		return 0;
	/* Compared in their ASCII forms: a U-label pattern is its A-label. */
	if (cd_host_pattern_normalize(outer, o, sizeof o) >= 0 &&
	    cd_host_pattern_normalize(inner, in, sizeof in) >= 0) {
		outer = o;
		inner = in;
	}
	if (strcmp(outer, inner) == 0)
		return 1;
	if (strncmp(inner, "*.", 2) != 0)
		return cd_host_match(outer, inner);
	/* "*.X" is covered by "*.D" when X is D or ends with ".D". */
	if (strncmp(outer, "*.", 2) != 0)
		return 0;
	il = strlen(inner + 2);
	ol = strlen(outer + 2);
	return il > ol + 1 && inner[2 + il - ol - 1] == '.' &&
	       strcmp(inner + 2 + il - ol, outer + 2) == 0;
}

static int value_covered(const struct cd_arg_rule *o, const char *v)
{
	return cd_arg_rule_match(o, v);
}

int cd_arg_rule_covers(const struct cd_arg_rule *outer, const struct cd_arg_rule *inner)
{
	size_t i;

	if (!outer || !inner || inner->nvalues == 0)
		return 0;
	if (inner->op == CD_ARG_PREFIX)
		return outer->op == CD_ARG_PREFIX &&
		       strncmp(inner->values[0], outer->values[0], strlen(outer->values[0])) == 0;
	for (i = 0; i < inner->nvalues; i++)
		if (!value_covered(outer, inner->values[i]))
			return 0;
	return 1;
}

/* ---- the report ---- */

struct dctx {
	const struct cd_policy *oldp, *newp;
	cd_diff_fn fn;
	void *ctx;
	size_t widen, narrow;
};

/* Where the gaps of one comparison go: counted, and reported when d is
 * not NULL. */
struct sink {
	struct dctx *d;
	int widens;
	const char *kind, *id;
	const char *suffix; /* appended to every detail, or "" */
	size_t n;
	int inner_new; /* the inner rule is the one from the new file */
};

static void report(struct dctx *d, int widens, const char *kind, const char *id, const char *change,
                   const char *detail)
{
	struct cd_buf b;
	struct cd_diff_item it = { widens, kind, id, change, "" };

	if (widens)
		d->widen++;
	else
		d->narrow++;
	if (!d->fn)
		return;
	cd_buf_init(&b, 8192);
	if (cd_buf_escape(&b, detail, strlen(detail)) == 0 && b.data)
		it.detail = b.data;
	d->fn(&it, d->ctx);
	cd_buf_release(&b);
}

static void gap(struct sink *s, const char *change, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void gap(struct sink *s, const char *change, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int w;

	s->n++;
	if (!s->d)
		return;
	va_start(ap, fmt);
	w = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (w < 0)
		line[0] = '\0';
	if (s->suffix[0] && strlen(line) + strlen(s->suffix) < sizeof line)
		memcpy(line + strlen(line), s->suffix, strlen(s->suffix) + 1);
	report(s->d, s->widens, s->kind, s->id, change, line);
}

/* A short comma-separated list for a detail, cut with "..." when long. */
struct lst {
	char s[1024];
	size_t len, n;
};

static void lst_add(struct lst *l, const char *v)
{
	size_t vl = strlen(v), room = sizeof l->s - l->len;

	if (l->n++ && room > 2) {
		memcpy(l->s + l->len, ", ", 2);
		l->len += 2;
		room -= 2;
	}
	if (vl + 4 > room) {
		if (room >= 4 && (l->len < 3 || strcmp(l->s + l->len - 3, "...") != 0)) {
			memcpy(l->s + l->len, "...", 3);
			l->len += 3;
		}
		l->s[l->len] = '\0';
		return;
	}
	memcpy(l->s + l->len, v, vl);
	l->len += vl;
	l->s[l->len] = '\0';
}

static void fmt_time(int64_t t, char *out, size_t n)
{
	if (t == CD_TIME_NEVER || cd_time_format(t, out, n) < 0)
		say(out, n, "%s", t == CD_TIME_NEVER ? "never" : "?");
}

static void fmt_actions(unsigned mask, struct lst *l)
{
	unsigned a;

	for (a = 0; a < CD_ACTION_COUNT; a++)
		if (mask & (1u << a))
			lst_add(l, cd_action_name((enum cd_action)a));
}

static void fmt_arg(const struct cd_arg_rule *a, char *out, size_t n)
{
	struct lst l = { .len = 0, .n = 0 };
	size_t i;

	l.s[0] = '\0';
	for (i = 0; i < a->nvalues; i++)
		lst_add(&l, a->values[i]);
	say(out, n, "%s %s [%s]", a->name,
	    a->op == CD_ARG_EQ       ? "eq"
	    : a->op == CD_ARG_PREFIX ? "prefix"
	                             : "enum",
	    l.s);
}

/* ---- one dimension: is inner's set inside outer's? ---- */

static int any_covers(int (*covers)(const char *, const char *), const char *const *outer,
                      size_t no, const char *v)
{
	size_t i;

	for (i = 0; i < no; i++)
		if (covers(outer[i], v))
			return 1;
	return 0;
}

static int str_eq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

/* The items of inner not covered by any item of outer, into l. */
static size_t list_gap(int (*covers)(const char *, const char *), const char *const *outer,
                       size_t no, const char *const *inner, size_t ni, struct lst *l)
{
	size_t i, n = 0;

	for (i = 0; i < ni; i++)
		if (!any_covers(covers, outer, no, inner[i])) {
			lst_add(l, inner[i]);
			n++;
		}
	return n;
}

static int port_covered(const struct cd_rule *o, const struct cd_port_range *r)
{
	unsigned cur = r->lo;
	size_t i;
	int moved = 1;

	while (moved) {
		moved = 0;
		for (i = 0; i < o->nports; i++) {
			if (o->ports[i].lo <= cur && cur <= o->ports[i].hi) {
				if (o->ports[i].hi >= r->hi)
					return 1;
				cur = (unsigned)o->ports[i].hi + 1;
				moved = 1;
			}
		}
	}
	return 0;
}

static size_t ports_gap(const struct cd_rule *o, const struct cd_rule *in, struct lst *l)
{
	char buf[16];
	size_t i, n = 0;

	for (i = 0; i < in->nports; i++) {
		if (port_covered(o, &in->ports[i]))
			continue;
		if (in->ports[i].lo == in->ports[i].hi)
			say(buf, sizeof buf, "%u", in->ports[i].lo);
		else
			say(buf, sizeof buf, "%u-%u", in->ports[i].lo, in->ports[i].hi);
		lst_add(l, buf);
		n++;
	}
	return n;
}

/* 1 when outer's argv prefix is a prefix of inner's. */
static int argv_covered(const struct cd_rule *o, const struct cd_rule *in)
{
	size_t i;

	if (o->nargv > in->nargv)
		return 0;
	for (i = 0; i < o->nargv; i++)
		if (strcmp(o->argv[i], in->argv[i]) != 0)
			return 0;
	return 1;
}

static void argv_str(const struct cd_rule *r, struct lst *l)
{
	size_t i;

	for (i = 0; i < r->nargv; i++)
		lst_add(l, r->argv[i]);
	/* Tokens read better space-separated; lst_add wrote ", " between. */
	l->len = 0;
	for (i = 0; l->s[i]; i++) {
		if (l->s[i] == ',' && l->s[i + 1] == ' ')
			continue;
		l->s[l->len++] = l->s[i];
	}
	l->s[l->len] = '\0';
}

static const struct cd_arg_rule *find_arg(const struct cd_rule *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nargs; i++)
		if (strcmp(r->args[i].name, name) == 0)
			return &r->args[i];
	return NULL;
}

/* Whether a dimension's lists must be compared item by item; reports the
 * gap when inner lacks a matcher outer has.  For a grant an absent matcher
 * admits only requests without that attribute (so an outer without one
 * covers none of inner's items); for a forbid rule it is no condition. */
static int presence(struct sink *s, int forbid, size_t on, size_t in, const char *change,
                    const char *noun)
{
	if (on && !in) {
		gap(s, change, forbid ? "any %s" : "requests naming no %s", noun);
		return 0;
	}
	if (!on && forbid)
		return 0;
	return in > 0;
}

static void lst_clear(struct lst *l)
{
	l->len = l->n = 0;
	l->s[0] = '\0';
}

/* The scope matchers, outer covering inner. */
static void scope_gap(struct sink *s, const struct cd_rule *o, const struct cd_rule *in, int forbid)
{
	struct lst l;
	char buf[512];
	size_t i;

	lst_clear(&l);
	if (presence(s, forbid, o->npaths, in->npaths, "paths", "path") &&
	    list_gap(cd_glob_covers, o->paths, o->npaths, in->paths, in->npaths, &l))
		gap(s, "paths", "%s", l.s);
	lst_clear(&l);
	if (presence(s, forbid, o->nhosts, in->nhosts, "hosts", "host") &&
	    list_gap(cd_host_covers, o->hosts, o->nhosts, in->hosts, in->nhosts, &l))
		gap(s, "hosts", "%s", l.s);
	lst_clear(&l);
	if (presence(s, forbid, o->nports, in->nports, "ports", "port") && ports_gap(o, in, &l))
		gap(s, "ports", "%s", l.s);
	lst_clear(&l);
	if (presence(s, forbid, o->nargv, in->nargv, "argv", "argv") &&
	    (!o->nargv || !argv_covered(o, in))) {
		argv_str(in, &l);
		gap(s, "argv", "%s", l.s);
	}
	/* Arguments: both kinds of rule constrain only the arguments they
	 * name, so inner must constrain each of them at least as tightly. */
	for (i = 0; i < o->nargs; i++) {
		const struct cd_arg_rule *ia = find_arg(in, o->args[i].name);
		if (!ia) {
			gap(s, "args", "any value of argument '%s'", o->args[i].name);
		} else if (!cd_arg_rule_covers(&o->args[i], ia)) {
			fmt_arg(ia, buf, sizeof buf);
			gap(s, "args", "%s", buf);
		}
	}
	lst_clear(&l);
	if (presence(s, forbid, o->nfields, in->nfields, "fields", "field") &&
	    list_gap(str_eq, o->fields, o->nfields, in->fields, in->nfields, &l))
		gap(s, "fields", "%s", l.s);
}

static const struct cd_profile *find_profile(const struct cd_policy *p, const char *name)
{
	size_t i;

	for (i = 0; name && i < p->nprofiles; i++)
		if (strcmp(p->profiles[i].name, name) == 0)
			return &p->profiles[i];
	return NULL;
}

static int settings_equal(const struct cd_profile *a, const struct cd_profile *b)
{
	size_t i, j, k;

	if (!a || !b || a->nsettings != b->nsettings)
		return 0;
	for (i = 0; i < a->nsettings; i++) {
		const struct cd_profile_setting *x = &a->settings[i], *y = NULL;
		for (j = 0; j < b->nsettings && !y; j++)
			if (strcmp(b->settings[j].key, x->key) == 0)
				y = &b->settings[j];
		if (!y || y->nvalues != x->nvalues)
			return 0;
		for (k = 0; k < x->nvalues; k++)
			if (strcmp(x->values[k], y->values[k]) != 0)
				return 0;
	}
	return 1;
}

/* none < policy:NAME < human, in how much an approval holds back. */
static int approval_rank(const char *a)
{
	if (!a || strcmp(a, "none") == 0)
		return 0;
	if (strcmp(a, "human") == 0)
		return 2;
	return 1;
}

/* Every way the grant `in` (of policy pi) reaches beyond the grant `o` (of
 * policy po); no gap means every request `in` allows, `o` allows too, under
 * an approval at least as strict and in the same sandbox. */
static size_t grant_gap(struct sink *s, const struct cd_rule *o, const struct cd_policy *po,
                        const struct cd_rule *in, const struct cd_policy *pi)
{
	struct lst l = { .len = 0, .n = 0 };
	char ti[32], to[32], pin[160], pout[160];
	unsigned extra;
	/* Details say "NEW (was OLD)" whichever side is inner. */
#define NOW(x, y) (s->inner_new ? (x) : (y))
	l.s[0] = '\0';
	/* A replaced agent, tool, task or profile is reported once, as the
	 * widening it is; the narrowing side would repeat it. */
	int repl = s->widens;

	if (repl && strcmp(o->agent, in->agent) != 0)
		gap(s, "agent", "'%s' (was '%s')", NOW(in->agent, o->agent),
		    NOW(o->agent, in->agent));
	if (repl && strcmp(o->tool, in->tool) != 0)
		gap(s, "tool", "'%s' (was '%s')", NOW(in->tool, o->tool), NOW(o->tool, in->tool));
	if (o->task && (!in->task || (repl && strcmp(o->task, in->task) != 0))) {
		say(pin, sizeof pin, in->task ? "'%s'" : "any task%s", in->task ? in->task : "");
		say(pout, sizeof pout, "'%s'", o->task);
		gap(s, "task", "%s (was %s)", NOW(pin, pout), NOW(pout, pin));
	}
	extra = in->actions & ~o->actions;
	if (extra) {
		fmt_actions(extra, &l);
		gap(s, "actions", "%s", l.s);
	}
	scope_gap(s, o, in, 0);
	if (in->expires > o->expires) {
		fmt_time(in->expires, ti, sizeof ti);
		fmt_time(o->expires, to, sizeof to);
		gap(s, "expires", "%s (was %s)", NOW(ti, to), NOW(to, ti));
	}
	if (approval_rank(in->approval) < approval_rank(o->approval) ||
	    (approval_rank(in->approval) == 1 && approval_rank(o->approval) == 1 &&
	     strcmp(in->approval, o->approval) != 0)) {
		const char *ai = in->approval ? in->approval : "none";
		const char *ao = o->approval ? o->approval : "none";
		gap(s, "approval", "%s (was %s)", NOW(ai, ao), NOW(ao, ai));
	}
	/* No profile is cordon's default sandbox, the strictest; any other
	 * change of sandbox is not proven narrower. */
	if (in->profile) {
		say(pin, sizeof pin, "'%s'", in->profile);
		say(pout, sizeof pout, o->profile ? "'%s'" : "the default sandbox%s",
		    o->profile ? o->profile : "");
		if (!o->profile || (repl && strcmp(in->profile, o->profile) != 0))
			gap(s, "profile", "%s (was %s)", NOW(pin, pout), NOW(pout, pin));
		else if (!strcmp(in->profile, o->profile) &&
		         !settings_equal(find_profile(pi, in->profile),
		                         find_profile(po, o->profile)))
			gap(s, "profile", "'%s' has other settings", in->profile);
	}
#undef NOW
	return s->n;
}

/* Every way the forbid rule `in` blocks requests that `o` does not. */
static size_t forbid_gap(struct sink *s, const struct cd_rule *o, const struct cd_rule *in)
{
	struct lst l = { .len = 0, .n = 0 };
	unsigned extra;

	l.s[0] = '\0';
	if (strcmp(o->agent, "*") && strcmp(o->agent, in->agent))
		gap(s, "agent", "'%s'", in->agent);
	if (strcmp(o->tool, "*") && strcmp(o->tool, in->tool))
		gap(s, "tool", "'%s'", in->tool);
	if (o->task && (!in->task || strcmp(o->task, in->task)))
		gap(s, "task", "%s%s%s", in->task ? "'" : "", in->task ? in->task : "any task",
		    in->task ? "'" : "");
	extra = in->actions & ~o->actions;
	if (extra) {
		fmt_actions(extra, &l);
		gap(s, "actions", "%s", l.s);
	}
	scope_gap(s, o, in, 1);
	return s->n;
}

/* ---- walking the two files ---- */

/* An old grant that covers `g` entirely, other than `skip`; NULL if none. */
static const struct cd_rule *covering_grant(const struct dctx *d, const struct cd_rule *g,
                                            const struct cd_rule *skip)
{
	size_t i;

	for (i = 0; i < d->oldp->ngrants; i++) {
		const struct cd_rule *h = &d->oldp->rules[i];
		struct sink q = { NULL, 1, "grant", g->id, "", 0, 1 };
		if (h == skip || strcmp(h->agent, g->agent) || strcmp(h->tool, g->tool))
			continue;
		if (grant_gap(&q, h, d->oldp, g, d->newp) == 0)
			return h;
	}
	return NULL;
}

static void describe_grant(const struct cd_rule *g, char *out, size_t n)
{
	struct lst l = { .len = 0, .n = 0 };
	char t[32];

	l.s[0] = '\0';
	fmt_actions(g->actions, &l);
	fmt_time(g->expires, t, sizeof t);
	say(out, n, "agent %s%s%s, tool %s, actions %s, approval %s, expires %s", g->agent,
	    g->task ? " task " : "", g->task ? g->task : "", g->tool, l.s,
	    g->approval ? g->approval : "none", t);
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Grants that match together must name one profile, else the request is
 * denied; removing such a grant, or changing its profile, may lift that
 * denial for requests both grants matched. */
static void conflict_lift(struct dctx *d, const struct cd_rule *h, const char *newprof, int gone)
{
	size_t i;
	char line[512];

	for (i = 0; i < d->oldp->ngrants; i++) {
		const struct cd_rule *h2 = &d->oldp->rules[i], *n2;
		if (h2 == h || strcmp(h2->agent, h->agent) || strcmp(h2->tool, h->tool) ||
		    !(h2->actions & h->actions) || same_str(h2->profile, h->profile))
			continue;
		n2 = cd_policy_rule(d->newp, h2->id);
		if (!n2 || n2->forbid)
			continue;
		if (!gone && !same_str(n2->profile, newprof))
			continue;
		say(line, sizeof line,
		    "requests matching both '%s' and '%s' were denied for naming two "
		    "profiles; they may now be allowed",
		    h->id, h2->id);
		report(d, 1, "grant", h->id, "profile-conflict", line);
	}
}

static void diff_grant(struct dctx *d, const struct cd_rule *h, const struct cd_rule *g)
{
	struct sink wq = { NULL, 1, "grant", g->id, "", 0, 1 };
	struct sink w = { d, 1, "grant", g->id, "", 0, 1 };
	struct sink nw = { d, 0, "grant", g->id, "", 0, 0 };
	const struct cd_rule *cov;
	char line[1024];

	if (!h) {
		cov = covering_grant(d, g, NULL);
		if (cov) {
			say(line, sizeof line, "covered by old grant '%s'", cov->id);
			report(d, 0, "grant", g->id, "covered", line);
		} else {
			describe_grant(g, line, sizeof line);
			report(d, 1, "grant", g->id, "added", line);
		}
		return;
	}
	if (grant_gap(&wq, h, d->oldp, g, d->newp) > 0) {
		cov = covering_grant(d, g, h);
		if (cov) {
			say(line, sizeof line, "widened, but covered by old grant '%s'", cov->id);
			report(d, 0, "grant", g->id, "covered", line);
		} else {
			grant_gap(&w, h, d->oldp, g, d->newp);
		}
	}
	grant_gap(&nw, g, d->newp, h, d->oldp);
	if (!same_str(h->profile, g->profile))
		conflict_lift(d, h, g->profile, 0);
}

static void diff_forbid(struct dctx *d, const struct cd_rule *h, const struct cd_rule *g)
{
	struct sink w = { d, 1, "forbid", h->id, " (no longer forbidden)", 0, 0 };
	struct sink nw = { d, 0, "forbid", h->id, " (now forbidden)", 0, 1 };

	forbid_gap(&w, g, h);
	forbid_gap(&nw, h, g);
}

static void diff_rule(struct dctx *d, const struct cd_rule *h, const struct cd_rule *g)
{
	char line[1024];

	if (h && g && h->forbid == g->forbid) {
		if (g->forbid)
			diff_forbid(d, h, g);
		else
			diff_grant(d, h, g);
		return;
	}
	if (h) { /* removed, or turned into the other kind of rule */
		if (h->forbid) {
			report(d, 1, "forbid", h->id, "removed",
			       "its requests are no longer forbidden");
		} else {
			describe_grant(h, line, sizeof line);
			report(d, 0, "grant", h->id, "removed", line);
			conflict_lift(d, h, NULL, 1);
		}
	}
	if (g) {
		if (g->forbid)
			report(d, 0, "forbid", g->id, "added", g->reason ? g->reason : "");
		else
			diff_grant(d, NULL, g);
	}
}

static const char *op_class(const struct cd_named *t, const char *op, unsigned *ret)
{
	size_t i;

	for (i = 0; i < t->nops; i++)
		if (strcmp(t->op_names[i], op) == 0) {
			*ret = t->op_actions[i];
			return t->op_names[i];
		}
	return NULL;
}

static const char *arg_kind(const struct cd_named *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->nargkinds; i++)
		if (strcmp(t->arg_names[i], name) == 0)
			return t->arg_kinds[i];
	return NULL;
}

/* The inventory says which action class an operation is and which
 * arguments carry scoped values: a change there changes what grants
 * reach. */
static void diff_tool(struct dctx *d, const struct cd_named *o, const struct cd_named *t)
{
	char line[1024];
	unsigned ca, cb;
	const char *k;
	size_t i;

	if (!t) {
		if (o)
			report(d, 0, "tool", o->id, "removed", "no grant can name it");
		return;
	}
	if (!o) {
		report(d, 0, "tool", t->id, "added", "its grants are listed as added");
		return;
	}
	if (!same_str(o->kind, t->kind)) {
		say(line, sizeof line, "'%s' instead of '%s'", t->kind ? t->kind : "-",
		    o->kind ? o->kind : "-");
		report(d, 1, "tool", t->id, "kind", line);
	}
	/* Another remote server, or another credential sent to it, widens. */
	if (!same_str(o->url, t->url) || !same_str(o->secret, t->secret)) {
		say(line, sizeof line, "url '%s' secret '%s' (was '%s' '%s')",
		    t->url ? t->url : "-", t->secret ? t->secret : "-", o->url ? o->url : "-",
		    o->secret ? o->secret : "-");
		report(d, 1, "tool", t->id, "url", line);
	}
	/* One instance for all of an agent's sessions: they see each other's
	 * state in the server, a widening; the other way narrows. */
	if (o->shared != t->shared)
		report(d, t->shared, "tool", t->id, "shared",
		       t->shared ? "one instance for all of an agent's sessions"
		                 : "one instance per session");
	for (i = 0; i < t->nops; i++) {
		if (!op_class(o, t->op_names[i], &ca)) {
			say(line, sizeof line, "'%s' (%s) added", t->op_names[i],
			    cd_action_name((enum cd_action)t->op_actions[i]));
			report(d, 1, "tool", t->id, "operations", line);
		} else if (ca != t->op_actions[i]) {
			say(line, sizeof line, "'%s' is %s (was %s)", t->op_names[i],
			    cd_action_name((enum cd_action)t->op_actions[i]),
			    cd_action_name((enum cd_action)ca));
			report(d, 1, "tool", t->id, "operations", line);
		}
	}
	for (i = 0; i < o->nops; i++)
		if (!op_class(t, o->op_names[i], &cb)) {
			say(line, sizeof line, "'%s' removed", o->op_names[i]);
			report(d, 0, "tool", t->id, "operations", line);
		}
	for (i = 0; i < o->nargkinds; i++) {
		k = arg_kind(t, o->arg_names[i]);
		if (!k || strcmp(k, o->arg_kinds[i]) != 0) {
			say(line, sizeof line,
			    "'%s' %s%s (was %s): its values may escape the scope", o->arg_names[i],
			    k ? "is " : "no longer declared", k ? k : "", o->arg_kinds[i]);
			report(d, 1, "tool", t->id, "arguments", line);
		}
	}
	for (i = 0; i < t->nargkinds; i++)
		if (!arg_kind(o, t->arg_names[i])) {
			say(line, sizeof line, "'%s' (%s) now declared", t->arg_names[i],
			    t->arg_kinds[i]);
			report(d, 0, "tool", t->id, "arguments", line);
		}
}

static const struct cd_approver_pk *find_pk(const struct cd_approver_pk *v, size_t n,
                                            const struct cd_approver_pk *k)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (k->person ? v[i].person && !strcmp(v[i].person, k->person)
		              : !memcmp(v[i].pk, k->pk, 32))
			return &v[i];
	return NULL;
}

/* Who may approve, and with which key: a person added to approvers.people,
 * a key added, changed or removed (without one, a local store takes a
 * decision unsigned) and a console key added all widen. */
static void diff_approvers(struct dctx *d)
{
	const struct cd_policy *o = d->oldp, *t = d->newp;
	const struct cd_approver_pk *k;
	char line[256];
	size_t i, j;

	for (i = 0; i < t->npeople; i++) {
		for (j = 0; j < o->npeople && strcmp(o->people[j], t->people[i]); j++)
			;
		if (o->npeople && j == o->npeople)
			report(d, 1, "approver", t->people[i], "added", "may approve held calls");
	}
	if (!o->npeople && t->npeople)
		report(d, 0, "approvers", "people", "listed", "only the people listed approve");
	for (i = 0; i < t->nakeys; i++) {
		k = find_pk(o->akeys, o->nakeys, &t->akeys[i]);
		if (k && !memcmp(k->pk, t->akeys[i].pk, 32))
			continue;
		say(line, sizeof line, "%s %s", k ? "now" : "added", t->akeys[i].text);
		report(d, 1, "approver", t->akeys[i].person, "key", line);
	}
	for (i = 0; i < o->nakeys; i++)
		if (!find_pk(t->akeys, t->nakeys, &o->akeys[i]))
			report(d, 1, "approver", o->akeys[i].person, "key",
			       "removed: decisions in this name are no longer checked against a "
			       "key");
	for (i = 0; i < t->nconsoles; i++)
		if (!find_pk(o->consoles, o->nconsoles, &t->consoles[i]))
			report(d, 1, "approvers", "consoles", "added",
			       t->consoles[i].text); /* signs for any approver */
}

int cd_policy_diff(const struct cd_policy *old_p, const struct cd_policy *new_p, cd_diff_fn fn,
                   void *ctx, size_t *ret_widen, size_t *ret_narrow)
{
	struct dctx d = { old_p, new_p, fn, ctx, 0, 0 };
	size_t i = 0, j = 0, no, nn;

	if (!old_p || !new_p)
		return -EINVAL;
	while (i < old_p->ntools || j < new_p->ntools) {
		const struct cd_named *o = i < old_p->ntools ? &old_p->tools[i] : NULL;
		const struct cd_named *t = j < new_p->ntools ? &new_p->tools[j] : NULL;
		int c = !o ? 1 : !t ? -1 : strcmp(o->id, t->id);
		diff_tool(&d, c <= 0 ? o : NULL, c >= 0 ? t : NULL);
		i += c <= 0;
		j += c >= 0;
	}
	no = old_p->ngrants + old_p->nforbids;
	nn = new_p->ngrants + new_p->nforbids;
	for (i = 0, j = 0; i < no || j < nn;) {
		const struct cd_rule *h = i < no ? old_p->by_id[i] : NULL;
		const struct cd_rule *g = j < nn ? new_p->by_id[j] : NULL;
		int c = !h ? 1 : !g ? -1 : strcmp(h->id, g->id);
		diff_rule(&d, c <= 0 ? h : NULL, c >= 0 ? g : NULL);
		i += c <= 0;
		j += c >= 0;
	}
	diff_approvers(&d);
	if (ret_widen)
		*ret_widen = d.widen;
	if (ret_narrow)
		*ret_narrow = d.narrow;
	return 0;
}

int cd_rule_scope_covers(const struct cd_rule *o, const struct cd_rule *in)
{
	struct sink s = { .d = NULL, .suffix = "" };

	scope_gap(&s, o, in, 0);
	return s.n == 0;
}
