/* policy-review.c — re-certification of the grants of a policy
 * (policy-review.h): dates from the policy, uses from the audit log.
 *
 * Trust boundary: the log's records are cordon's own, but their text
 * fields are compared byte for byte as (pointer, length) views and never
 * trusted to be NUL-terminated; a grant_ids list is split on ',' only. */
#include "policy-review.h"

#include "policy-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cd_review_flag_name(unsigned flag)
{
	switch (flag) {
	case CD_REVIEW_PAST_REVIEW:
		return "past-review";
	case CD_REVIEW_EXPIRED:
		return "expired";
	case CD_REVIEW_EXPIRING:
		return "expiring";
	case CD_REVIEW_NEVER_USED:
		return "never-used";
	case CD_REVIEW_UNUSED:
		return "unused";
	}
	return "?";
}

struct usage {
	const struct cd_policy *p;
	struct cd_review_item *items; /* one per grant, sorted by id */
	size_t n;
	int64_t at;
};

static int view_eq(const struct cd_audit_str *v, const char *s)
{
	size_t n = strlen(s);
	return v->p && v->len == n && memcmp(v->p, s, n) == 0;
}

/* The item of the grant named by (s, n), or NULL. */
static struct cd_review_item *find_item(struct usage *u, const char *s, size_t n)
{
	size_t lo = 0, hi = u->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *id = u->items[mid].id;
		size_t il = strlen(id);
		int c = memcmp(id, s, il < n ? il : n);
		if (c == 0)
			c = il < n ? -1 : il > n ? 1 : 0;
		if (c == 0)
			return &u->items[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int on_decision(const struct cd_audit_entry *e, void *ctx)
{
	struct usage *u = ctx;
	const struct cd_audit_str *ids = &e->str[CD_AF_GRANT_IDS];
	const struct cd_audit_str *dec = &e->str[CD_AF_DECISION];
	int64_t t = e->time_ns / 1000000000;
	size_t i = 0, start;

	if (!(view_eq(dec, "allow") || view_eq(dec, "needs-approval")) || !ids->p)
		return 0;
	if (t > u->at)
		return 0;
	while (i <= ids->len) {
		struct cd_review_item *it;
		start = i;
		while (i < ids->len && ids->p[i] != ',')
			i++;
		it = find_item(u, ids->p + start, i - start);
		/* Only a use by the grant's own agent and tool counts. */
		if (it && view_eq(&e->str[CD_AF_AGENT], it->agent) &&
		    view_eq(&e->str[CD_AF_TOOL], it->tool)) {
			it->uses++;
			if (t > it->last_used)
				it->last_used = t;
		}
		i++;
	}
	return 0;
}

static int cmp_item(const void *a, const void *b)
{
	return strcmp(((const struct cd_review_item *)a)->id,
	              ((const struct cd_review_item *)b)->id);
}

int cd_policy_review(const struct cd_policy *p, const struct cd_review_opts *o, cd_review_fn fn,
                     void *ctx, size_t *ret_attention, struct cd_err *err)
{
	struct usage u = { p, NULL, 0, 0 };
	struct cd_audit_filter f;
	size_t i, attention = 0;
	int r;

	if (!p || !o)
		return cd_err_set(err, -EINVAL, "no policy to review");
	u.at = o->at;
	if (p->ngrants) {
		u.items = calloc(p->ngrants, sizeof *u.items);
		if (!u.items)
			return cd_err_set(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < p->ngrants; i++) {
		const struct cd_rule *g = &p->rules[i];
		u.items[i].id = g->id;
		u.items[i].agent = g->agent;
		u.items[i].tool = g->tool;
		u.items[i].owner = g->owner;
		u.items[i].review_by = g->review_by;
		u.items[i].expires = g->expires;
	}
	u.n = p->ngrants;
	if (u.n)
		qsort(u.items, u.n, sizeof *u.items, cmp_item);
	if (o->log) {
		memset(&f, 0, sizeof f);
		f.kind = "decision";
		r = cd_audit_query(o->log, &f, on_decision, &u, err);
		if (r < 0) {
			free(u.items);
			return r;
		}
	}
	for (i = 0; i < u.n; i++) {
		struct cd_review_item *it = &u.items[i];
		if (it->review_by <= o->at)
			it->flags |= CD_REVIEW_PAST_REVIEW;
		if (it->expires <= o->at)
			it->flags |= CD_REVIEW_EXPIRED;
		else if (o->soon > 0 && it->expires - o->at <= o->soon)
			it->flags |= CD_REVIEW_EXPIRING;
		if (o->log && it->uses == 0)
			it->flags |= CD_REVIEW_NEVER_USED;
		else if (o->log && o->unused > 0 && o->at - it->last_used > o->unused)
			it->flags |= CD_REVIEW_UNUSED;
		if (it->flags)
			attention++;
		if (fn)
			fn(it, ctx);
	}
	free(u.items);
	if (ret_attention)
		*ret_attention = attention;
	return 0;
}

/* Whether the profile NAME binds anything writable from the host. */
static int profile_writes(const struct cd_policy *p, const char *name)
{
	const struct cd_profile_setting *set;
	size_t n, i;

	if (cd_policy_profile(p, name, &set, &n) < 0)
		return 1; /* unknown: the loader refuses it; no second guess here */
	for (i = 0; i < n; i++) {
		if (!strcmp(set[i].key, "rw") && set[i].nvalues > 0)
			return 1;
		if (!strcmp(set[i].key, "workspace") && set[i].nvalues == 1 &&
		    !strcmp(set[i].values[0], "write"))
			return 1;
	}
	return 0;
}

size_t cd_policy_warnings(const struct cd_policy *p, int64_t at, cd_policy_warn_fn fn, void *ctx)
{
	const unsigned writes =
	        (1u << CD_ACTION_DELETE) | (1u << CD_ACTION_CREATE) | (1u << CD_ACTION_UPDATE);
	size_t i, n = 0, expired = 0;
	char msg[512];
	int w;

	if (!p || !fn)
		return 0;
	for (i = 0; i < p->ngrants; i++) {
		const struct cd_rule *g = &p->rules[i];
		if (g->expires != CD_TIME_NEVER && g->expires <= at)
			expired++;
	}
	if (p->ngrants > 0 && expired == p->ngrants) {
		w = snprintf(msg, sizeof msg,
		             "every grant has expired: this policy allows nothing (see expires)");
		if (w > 0)
			fn(p->rules[0].mark.line, p->rules[0].mark.col, msg, ctx), n++;
	}
	for (i = 0; i < p->ngrants; i++) {
		const struct cd_rule *g = &p->rules[i];
		if (g->expires != CD_TIME_NEVER && g->expires <= at) {
			w = snprintf(msg, sizeof msg,
			             "grant '%s' has expired: it never applies (expires is past)",
			             g->id);
			if (w > 0 && (size_t)w < sizeof msg)
				fn(g->expires_mark.line, g->expires_mark.col, msg, ctx), n++;
		}
		if ((g->actions & writes) && g->profile && !profile_writes(p, g->profile)) {
			w = snprintf(msg, sizeof msg,
			             "grant '%s' allows %s but its profile '%s' has no writable "
			             "path (no rw, no workspace: write): the command can change "
			             "nothing",
			             g->id,
			             (g->actions & (1u << CD_ACTION_DELETE)) ? "delete" : "writes",
			             g->profile);
			if (w > 0 && (size_t)w < sizeof msg)
				fn(g->mark.line, g->mark.col, msg, ctx), n++;
		}
	}
	return n;
}
